package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPythonREPL(t *testing.T) {
	needProgram(t, "python3")
	s := startBash(t)
	if err := s.Send("python3 -q{Enter}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readUntil(t, s, "the python prompt", func(out string, r ReadResult) bool {
		return strings.Contains(r.Screen.Text, ">>>")
	})
	if _, err := s.Exec(context.Background(), "true", time.Second); !errors.Is(err, ErrNotAtPrompt) {
		t.Errorf("Exec while python runs: err = %v, want ErrNotAtPrompt", err)
	}
	if err := s.Send("6*7{Enter}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readUntil(t, s, "42", func(out string, r ReadResult) bool {
		return strings.Contains(out, "\n42\n") && strings.Contains(r.Screen.Text, "\n42\n>>>")
	})
	if err := s.Send("{Ctrl-D}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readUntil(t, s, "the shell's prompt", func(out string, r ReadResult) bool { return r.AtPrompt })
	if got := mustExec(t, s, "echo back").Output; got != "back\n" {
		t.Errorf("Exec after python = %q", got)
	}
}

func TestLess(t *testing.T) {
	needProgram(t, "less")
	s := startBash(t)
	file := filepath.Join(t.TempDir(), "lines.txt")
	var text strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&text, "line number %d\n", i)
	}
	if err := os.WriteFile(file, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Send("less " + file + "{Enter}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := readUntil(t, s, "less showing the file", func(out string, r ReadResult) bool {
		return strings.HasPrefix(r.Screen.Text, "line number 1\nline number 2\n") && strings.Contains(r.Screen.Text, "line number 23")
	})
	if strings.Contains(r.Screen.Text, "line number 24\n") {
		t.Errorf("less screen shows more than a page:\n%s", r.Screen.Text)
	}
	if err := s.Send("{PageDown}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readUntil(t, s, "the next page", func(out string, r ReadResult) bool {
		return strings.Contains(r.Screen.Text, "line number 30")
	})
	if err := s.Send("q"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readUntil(t, s, "the shell's prompt", func(out string, r ReadResult) bool { return r.AtPrompt })
	mustExec(t, s, "true")
}

func TestVim(t *testing.T) {
	needProgram(t, "vim")
	s := startBash(t)
	file := filepath.Join(t.TempDir(), "note.txt")
	if err := s.Send("vim -u NONE -N " + file + "{Enter}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readUntil(t, s, "vim's empty buffer", func(out string, r ReadResult) bool {
		return r.Screen.AltScreen && strings.Contains(r.Screen.Text, "\n~")
	})
	_, err := s.Exec(context.Background(), "true", time.Second)
	if !errors.Is(err, ErrNotAtPrompt) {
		t.Errorf("Exec while vim runs: err = %v, want ErrNotAtPrompt", err)
	}
	if err := s.Send("itext here{Esc}:wq{Enter}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	readUntil(t, s, "the shell's prompt", func(out string, r ReadResult) bool { return r.AtPrompt })
	got, err := os.ReadFile(file)
	if err != nil || string(got) != "text here\n" {
		t.Errorf("file written by vim = %q, %v; want %q", got, err, "text here\n")
	}
}

func TestCtrlCStopsSentCommand(t *testing.T) {
	s := startBash(t)
	if err := s.Send("sleep 100{Enter}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if r := s.Read(200 * time.Millisecond); r.AtPrompt {
		t.Fatalf("Read after starting sleep: AtPrompt = true")
	}
	if err := s.Send("{Ctrl-C}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := mustExec(t, s, "echo back").Output; got != "back\n" {
		t.Errorf("Exec after Ctrl-C = %q", got)
	}
}

func TestScreenCursor(t *testing.T) {
	s := startBash(t)
	mustExec(t, s, `printf '\033[H\033[2J\033[5;10HX'`)
	r := s.Read(0)
	lines := strings.Split(r.Screen.Text, "\n")
	if len(lines) != 5 || lines[4] != "         X" {
		t.Fatalf("screen = %q, want X at row 4, column 9", r.Screen.Text)
	}
	if r.Screen.CursorRow != 4 || r.Screen.CursorCol != 10 {
		t.Errorf("cursor at %d,%d, want 4,10", r.Screen.CursorRow, r.Screen.CursorCol)
	}
	if r.Screen.Rows != 24 || r.Screen.Cols != 80 || r.Screen.AltScreen {
		t.Errorf("screen %dx%d alt=%v, want 24x80 main screen", r.Screen.Rows, r.Screen.Cols, r.Screen.AltScreen)
	}
}

func TestResize(t *testing.T) {
	s := startBash(t)
	if err := s.Resize(30, 100); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	if got := mustExec(t, s, "stty size").Output; got != "30 100\n" {
		t.Errorf("stty size after Resize(30, 100) = %q", got)
	}
	if sc := s.Screen(); sc.Rows != 30 || sc.Cols != 100 {
		t.Errorf("Screen() size = %dx%d, want 30x100", sc.Rows, sc.Cols)
	}
	if err := s.Resize(0, 100); err == nil {
		t.Errorf("Resize(0, 100) succeeded")
	}
}

func TestSendUnknownKeySendsNothing(t *testing.T) {
	s := startBash(t)
	err := s.Send("echo typed{Nope}")
	var uk *UnknownKeyError
	if !errors.As(err, &uk) || uk.Name != "Nope" || !strings.Contains(err.Error(), "{Ctrl-C}") {
		t.Fatalf("Send(unknown key) = %v, want an UnknownKeyError listing the keys", err)
	}
	if got := mustExec(t, s, "echo clean").Output; got != "clean\n" {
		t.Errorf("Exec after a refused Send = %q: something was typed", got)
	}
}

func TestReadReturnsWhenQuiet(t *testing.T) {
	s := startBash(t)
	if err := s.Send("echo one; sleep 0.3; echo two{Enter}"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	start := time.Now()
	// The typed line is echoed too: wait for "two" on a line of its own.
	r := readUntil(t, s, "two", func(out string, r ReadResult) bool { return strings.Contains(out, "\ntwo\n") })
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("Read waited %v for quiet output", waited)
	}
	if !strings.Contains(r.Output, "\none\n") {
		t.Errorf("Read output = %q, want both lines", r.Output)
	}
	// Nothing new: Read waits the full time and returns nothing.
	if r := s.Read(150 * time.Millisecond); r.Output != "" || !r.AtPrompt || !r.Alive {
		t.Errorf("idle Read = %+v, want no output at the prompt", r)
	}
}

func TestTerminalAnswersCursorQuery(t *testing.T) {
	s := startBash(t)
	// A program asking where the cursor is (ESC [ 6n) gets an answer instead
	// of waiting forever.
	res := mustExec(t, s, `printf 'ab\033[6n'; IFS= read -rs -d R -t 2 pos; echo; echo "at ${pos#*[}"`)
	// The reply may be echoed (^[[1;3R) when it arrives before read turns
	// the echo off: what matters is that read got it.
	if !strings.HasPrefix(res.Output, "ab") || !strings.HasSuffix(res.Output, "\nat 1;3\n") {
		t.Errorf("cursor report = %q, want row 1, column 3", res.Output)
	}
}

// ProgramInForeground and AtPrompt tell a program's input from a command
// line, and input a program left unread never runs as a command.
func TestForegroundAndTypeAhead(t *testing.T) {
	s := startBash(t)
	if !waitTrue(func() bool { return s.AtPrompt() }) || s.ProgramInForeground() {
		t.Fatalf("a fresh shell: at prompt %v, program %v", s.AtPrompt(), s.ProgramInForeground())
	}
	marker := filepath.Join(t.TempDir(), "typed-ahead")
	if err := s.Send("sleep 1{Enter}"); err != nil {
		t.Fatal(err)
	}
	if !waitTrue(s.ProgramInForeground) {
		t.Fatal("sleep never held the terminal")
	}
	if s.AtPrompt() {
		t.Error("at the prompt while sleep runs")
	}
	s.Send("touch " + marker + "{Enter}") // sleep never reads it
	if !waitTrue(func() bool { return s.AtPrompt() && !s.ProgramInForeground() }) {
		t.Fatal("the shell never came back")
	}
	mustExec(t, s, "true")
	if _, err := os.Stat(marker); err == nil {
		t.Error("input typed ahead of the prompt ran as a command")
	}
}

func waitTrue(cond func() bool) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
