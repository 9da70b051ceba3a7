package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/hinshun/vt10x"
)

const (
	// quietPeriod is how long output must pause before Read returns early:
	// long enough for a program to finish redrawing, short enough to feel
	// immediate.
	quietPeriod = 100 * time.Millisecond
	sendTimeout = 5 * time.Second
)

// Send types input into the terminal, for interactive programs (a REPL,
// vim, less, a password-less prompt) and for keys such as Ctrl-C. The input
// is parsed completely before anything is sent; an unknown key name returns
// an *UnknownKeyError and sends nothing. Syntax (KeySyntax):
//
// Text is typed as is; a newline is sent as Enter. Named keys go in braces:
// {Enter} {Tab} {BackTab} {Esc} {Space} {Backspace} {Delete} {Insert} {Up}
// {Down} {Left} {Right} {Home} {End} {PageUp} {PageDown} {F1}..{F12},
// {Ctrl-A}..{Ctrl-Z} (e.g. {Ctrl-C} interrupts, {Ctrl-D} ends input,
// {Ctrl-Z} suspends; also {Ctrl-@} {Ctrl-[} {Ctrl-\} {Ctrl-]} {Ctrl-^}
// {Ctrl-_} {Ctrl-Space}) and {Alt-x} for any single character x. Names are
// case-insensitive. Write {{ for a literal {.
//
// Example: "python3 -q{Enter}", then "1+1{Enter}", then "{Ctrl-D}".
func (s *Session) Send(input string) error {
	k, err := parseKeys(input)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if err := s.usableLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	s.lastUsed = time.Now()
	if s.exec == nil {
		// Typing at the prompt starts a line or a program; the shell is back
		// when its next prompt marker arrives.
		s.atPrompt = false
	}
	s.mu.Unlock()
	b := k.encode(s.appCursorMode())
	if len(b) == 0 {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.proc.write(b, sendTimeout); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

func (s *Session) appCursorMode() bool {
	s.term.Lock()
	defer s.term.Unlock()
	return s.term.Mode()&vt10x.ModeAppCursor != 0
}

// Read returns the output that arrived since the previous Read and no Exec
// claimed, and the screen as it is now. It waits up to wait for output to
// settle: it returns once output has paused for about 100 ms after something
// arrived, or when wait has passed (at once for wait <= 0).
func (s *Session) Read(wait time.Duration) ReadResult {
	deadline := time.Now().Add(wait)
	s.mu.Lock()
	s.lastUsed = time.Now()
	for {
		next, settled := s.settledLocked(deadline)
		if settled {
			break
		}
		changed := s.changed
		s.mu.Unlock()
		timer := time.NewTimer(next)
		select {
		case <-changed:
		case <-timer.C:
		case <-s.ended:
		}
		timer.Stop()
		s.mu.Lock()
	}
	out, truncated := s.out.take()
	s.unread = false
	res := ReadResult{Output: out, Truncated: truncated, AtPrompt: s.atPrompt && s.exec == nil}
	res.Alive = s.usableLocked() == nil
	s.mu.Unlock()
	res.Screen = renderScreen(s.term)
	return res
}

// settledLocked says whether Read may return, and if not, how long to wait
// before looking again.
func (s *Session) settledLocked(deadline time.Time) (time.Duration, bool) {
	now := time.Now()
	select {
	case <-s.ended:
		return 0, true
	default:
	}
	if !now.Before(deadline) {
		return 0, true
	}
	if !s.unread {
		return deadline.Sub(now), false
	}
	quietAt := s.lastOutput.Add(quietPeriod)
	if !now.Before(quietAt) {
		return 0, true
	}
	return min(quietAt.Sub(now), deadline.Sub(now)), false
}

// Resize changes the terminal size; the program gets SIGWINCH.
func (s *Session) Resize(rows, cols int) error {
	if err := checkSize(rows, cols); err != nil {
		return err
	}
	if err := s.usable(); err != nil {
		return err
	}
	s.touch()
	if err := s.proc.setSize(rows, cols); err != nil {
		return fmt.Errorf("resize terminal: %w", err)
	}
	s.term.Resize(cols, rows)
	return nil
}

// Screen returns what the terminal shows now.
func (s *Session) Screen() Screen {
	return renderScreen(s.term)
}

func renderScreen(term vt10x.Terminal) Screen {
	term.Lock()
	defer term.Unlock()
	cols, rows := term.Size()
	cur := term.Cursor()
	lines := make([]string, rows)
	row := make([]rune, cols)
	for y := range rows {
		for x := range cols {
			c := term.Cell(x, y).Char
			if c == 0 {
				c = ' '
			}
			row[x] = c
		}
		lines[y] = strings.TrimRight(string(row), " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return Screen{
		Text: strings.Join(lines, "\n"),
		Rows: rows, Cols: cols,
		CursorRow: cur.Y, CursorCol: cur.X,
		CursorVisible: term.CursorVisible(),
		AltScreen:     term.Mode()&vt10x.ModeAltScreen != 0,
	}
}
