package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// The shell reports to us with OSC escape sequences, which terminals that do
// not know their number ignore, so they never show on the screen:
//
//	ESC ] 6973 ; S ; <nonce> BEL          the command of one Exec starts
//	ESC ] 6973 ; P ; <id> ; <status> BEL  the shell is about to read a line
//
// The P marker comes from PROMPT_COMMAND, so it follows every command line,
// also those typed with Send and those cut short by Ctrl-C. <id> is the nonce
// of the Exec that typed the line, or the session's token for anything else.
// The typed line contains the nonce but not the marker: the ESC, the BEL and
// the "6973;S;" are produced by printf from escapes at run time, so the echo
// of the line can never be taken for a marker, and a command cannot print a
// marker by accident because it does not know the nonce.
const (
	oscIntro = "\x1b]6973;"
	// markerMaxLen is longer than any marker we emit: ESC ] 6973;P; + 32 hex
	// + ; + a status of at most 3 digits + BEL.
	markerMaxLen = 64
)

type markerKind byte

const (
	markStart  markerKind = 'S'
	markPrompt markerKind = 'P'
)

type marker struct {
	kind   markerKind
	id     string
	status int
}

// markerHandler receives a terminal stream split into text and markers, in order.
type markerHandler interface {
	text(p []byte)
	marker(m marker)
}

// markerScanner finds markers in a stream that arrives in arbitrary pieces.
// Markers whose id is not known pass on as text (the sanitizer later drops
// them as ordinary OSC sequences), so a program printing a look-alike does
// not move the session's state.
type markerScanner struct {
	known func(id string) bool
	held  []byte
}

func (sc *markerScanner) scan(p []byte, h markerHandler) {
	buf := p
	if len(sc.held) > 0 {
		buf = append(sc.held, p...)
		sc.held = nil
	}
	for len(buf) > 0 {
		i := bytes.Index(buf, []byte(oscIntro))
		if i < 0 {
			keep := partialPrefixLen(buf, oscIntro)
			emitText(h, buf[:len(buf)-keep])
			sc.hold(buf[len(buf)-keep:])
			return
		}
		emitText(h, buf[:i])
		buf = buf[i:]
		end := bytes.IndexByte(buf[:min(len(buf), markerMaxLen)], '\a')
		if end < 0 {
			if len(buf) < markerMaxLen {
				sc.hold(buf)
				return
			}
			h.text(buf[:len(oscIntro)])
			buf = buf[len(oscIntro):]
			continue
		}
		if m, ok := parseMarker(buf[len(oscIntro):end]); ok && sc.known(m.id) {
			h.marker(m)
		} else {
			h.text(buf[:end+1])
		}
		buf = buf[end+1:]
	}
}

func (sc *markerScanner) hold(p []byte) {
	if len(p) > 0 {
		sc.held = append([]byte(nil), p...)
	}
}

func emitText(h markerHandler, p []byte) {
	if len(p) > 0 {
		h.text(p)
	}
}

// partialPrefixLen is the length of the longest proper prefix of prefix that
// p ends with: bytes that may become a marker once the next read arrives.
func partialPrefixLen(p []byte, prefix string) int {
	for k := min(len(prefix)-1, len(p)); k > 0; k-- {
		if bytes.HasSuffix(p, []byte(prefix[:k])) {
			return k
		}
	}
	return 0
}

func parseMarker(body []byte) (marker, bool) {
	fields := strings.Split(string(body), ";")
	switch {
	case len(fields) == 2 && fields[0] == string(markStart) && isNonce(fields[1]):
		return marker{kind: markStart, id: fields[1]}, true
	case len(fields) == 3 && fields[0] == string(markPrompt) && isNonce(fields[1]):
		status, err := strconv.Atoi(fields[2])
		if err != nil {
			return marker{}, false
		}
		return marker{kind: markPrompt, id: fields[1], status: status}, true
	}
	return marker{}, false
}

const nonceLen = 32

func isNonce(s string) bool {
	if len(s) != nonceLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return false
		}
	}
	return true
}

// newNonce returns 128 random bits in hex: never guessed, never repeated.
func newNonce() (string, error) {
	return randomHex(nonceLen / 2)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// setupLine is typed once into a fresh bash. It installs the marker functions
// and empties the prompts: the P marker tells us where a prompt would be, and
// prompt text would only clutter output and screen. Both functions hand the
// previous exit status on, so `echo $?` in an Exec still sees the status of
// the command before. History is off: Exec lines are bookkeeping, and
// history expansion of `!` surprises agents; HISTFILE is unset because $HOME
// may not be writable.
func setupLine(token, nonce string) string {
	return strings.Join([]string{
		"__fb_tok=" + token,
		"__fb_nonce=" + nonce,
		// Input typed ahead while a program ran and left unread is dropped
		// before the prompt: it was meant for that program, and must not
		// run as a command nobody judged.
		`__fb_prompt() { local s=$? __fb_junk; while builtin read -r -t 0; do builtin read -r -s -N 4096 -t 0.01 __fb_junk || break; done; builtin printf '\033]6973;P;%s;%d\007' "$__fb_nonce" "$s"; __fb_nonce=$__fb_tok; return $s; }`,
		`__fb_begin() { local s=$?; __fb_nonce=$1; builtin printf '\033]6973;S;%s\007' "$1"; return $s; }`,
		"PROMPT_COMMAND=__fb_prompt",
		"PS1=", "PS2=", "PS0=",
		"unset HISTFILE",
		"set +H +o history",
		"export VIRTUAL_ENV_DISABLE_PROMPT=1",
	}, "; ")
}

// execLine is the line Exec types. The command travels as one ANSI-C quoted
// word, so a multi-line command or a heredoc is still a single line for
// readline (no PS2 continuation prompts, nothing a syntax error could leave
// half-read), and eval runs it in the shell itself: cd, exports, functions
// and a sourced virtualenv persist, and `declare` stays global.
func execLine(nonce, command string) string {
	return "__fb_begin " + nonce + "; eval " + ansiCQuote(command)
}

// ansiCQuote renders s as $'...' using only printable ASCII, so readline
// treats every byte of the line as self-insert: no tab completion, no meta
// keys, no history expansion of '!'.
func ansiCQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 3)
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '!' || c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
