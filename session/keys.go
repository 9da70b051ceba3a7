package session

import (
	"fmt"
	"strings"
)

// KeySyntax describes what Send accepts; an MCP tool description can quote it.
const KeySyntax = `Text is typed as is; a newline is sent as Enter. Named keys go in braces: ` +
	`{Enter} {Tab} {BackTab} {Esc} {Space} {Backspace} {Delete} {Insert} ` +
	`{Up} {Down} {Left} {Right} {Home} {End} {PageUp} {PageDown} {F1}..{F12}, ` +
	`{Ctrl-A}..{Ctrl-Z} (e.g. {Ctrl-C} interrupts, {Ctrl-D} ends input, {Ctrl-Z} suspends; ` +
	`also {Ctrl-@} {Ctrl-[} {Ctrl-\} {Ctrl-]} {Ctrl-^} {Ctrl-_} {Ctrl-Space}) and {Alt-x} for ` +
	`any single character x. Names are case-insensitive. Write {{ for a literal {.`

// keyCode is what a key sends: normal, and in the terminal's application
// cursor mode (DECCKM), which full-screen programs such as vim and less turn
// on and which changes what the arrows, Home and End send.
type keyCode struct{ normal, app string }

var namedKeys = map[string]keyCode{
	"enter":     {normal: "\r"},
	"tab":       {normal: "\t"},
	"backtab":   {normal: "\x1b[Z"},
	"esc":       {normal: "\x1b"},
	"escape":    {normal: "\x1b"},
	"space":     {normal: " "},
	"backspace": {normal: "\x7f"},
	"delete":    {normal: "\x1b[3~"},
	"insert":    {normal: "\x1b[2~"},
	"up":        {normal: "\x1b[A", app: "\x1bOA"},
	"down":      {normal: "\x1b[B", app: "\x1bOB"},
	"right":     {normal: "\x1b[C", app: "\x1bOC"},
	"left":      {normal: "\x1b[D", app: "\x1bOD"},
	"home":      {normal: "\x1b[H", app: "\x1bOH"},
	"end":       {normal: "\x1b[F", app: "\x1bOF"},
	"pageup":    {normal: "\x1b[5~"},
	"pagedown":  {normal: "\x1b[6~"},
	"f1":        {normal: "\x1bOP"},
	"f2":        {normal: "\x1bOQ"},
	"f3":        {normal: "\x1bOR"},
	"f4":        {normal: "\x1bOS"},
	"f5":        {normal: "\x1b[15~"},
	"f6":        {normal: "\x1b[17~"},
	"f7":        {normal: "\x1b[18~"},
	"f8":        {normal: "\x1b[19~"},
	"f9":        {normal: "\x1b[20~"},
	"f10":       {normal: "\x1b[21~"},
	"f11":       {normal: "\x1b[23~"},
	"f12":       {normal: "\x1b[24~"},
}

// keys is parsed Send input, ready to be encoded for the terminal's mode.
type keys []keyCode

// UnknownKeyError reports a name in braces that Send does not know. Nothing
// of the input was sent.
type UnknownKeyError struct {
	Name string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("unknown key {%s}: nothing was sent. %s", e.Name, KeySyntax)
}

// parseKeys reads Send's syntax completely before anything is sent, so a
// typo never leaves half an input in a program.
func parseKeys(input string) (keys, error) {
	var out keys
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, keyCode{normal: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(input); {
		switch c := input[i]; {
		case strings.HasPrefix(input[i:], "{{"):
			text.WriteByte('{')
			i += 2
		case c == '{':
			end := strings.IndexByte(input[i+1:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unterminated { at byte %d: nothing was sent (write {{ for a literal {)", i)
			}
			name := input[i+1 : i+1+end]
			code, err := lookupKey(name)
			if err != nil {
				return nil, err
			}
			flush()
			out = append(out, code)
			i += end + 2
		case strings.HasPrefix(input[i:], "\r\n"):
			text.WriteByte('\r')
			i += 2
		case c == '\n':
			// A pasting terminal sends Enter (CR) for a newline, too.
			text.WriteByte('\r')
			i++
		default:
			text.WriteByte(c)
			i++
		}
	}
	flush()
	return out, nil
}

func lookupKey(name string) (keyCode, error) {
	lower := strings.ToLower(name)
	if code, ok := namedKeys[lower]; ok {
		return code, nil
	}
	if rest, ok := strings.CutPrefix(lower, "ctrl-"); ok {
		if b, ok := controlByte(rest); ok {
			return keyCode{normal: string([]byte{b})}, nil
		}
	}
	// Alt keeps the character's case: Alt-x and Alt-X differ.
	if len(name) > 4 && strings.EqualFold(name[:4], "alt-") && len([]rune(name[4:])) == 1 {
		return keyCode{normal: "\x1b" + name[4:]}, nil
	}
	return keyCode{}, &UnknownKeyError{Name: name}
}

// controlByte maps the character after Ctrl- to the C0 byte a terminal sends.
func controlByte(s string) (byte, bool) {
	if s == "space" {
		return 0, true
	}
	if len(s) != 1 {
		return 0, false
	}
	switch c := s[0]; {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 1, true
	case strings.IndexByte("@[\\]^_", c) >= 0:
		return c & 0x1f, true
	}
	return 0, false
}

func (k keys) encode(appCursor bool) []byte {
	var b []byte
	for _, code := range k {
		if appCursor && code.app != "" {
			b = append(b, code.app...)
		} else {
			b = append(b, code.normal...)
		}
	}
	return b
}
