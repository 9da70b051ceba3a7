//go:build linux && agents

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// approveCode is the request code forgebox gives a command that waits for
// a person, in the advice it gives the model.
var approveCode = regexp.MustCompile(`forgebox approve ([A-Z0-9]{4}-[A-Z0-9]{4})`)

// answerAtTerminal plays the person: forgebox approve CODE on a
// pseudo-terminal, as the mode's user and with the environment the client
// and so its forgebox serve run with (the same HOME and XDG_STATE_HOME,
// where the request waits), typing answer at the "Run it?" prompt. It
// returns what the terminal showed. It runs on the stand-in's goroutine,
// so it returns an error rather than failing the test.
func (s *scratch) answerAtTerminal(code, answer string) (string, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return "", fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	defer master.Close()
	var out lockedBuffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, master)
		close(copied)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, forgebox, "approve", code)
	cmd.Dir = s.ws
	cmd.Env = s.env()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if s.m.uid != os.Getuid() {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.m.uid), Gid: uint32(s.m.gid), Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		slave.Close()
		return "", fmt.Errorf("start forgebox approve %s: %w", code, err)
	}
	slave.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	text := func() string { return strings.ReplaceAll(out.String(), "\r", "") }
	prompted := false
	for !prompted {
		select {
		case err := <-exited:
			return text(), fmt.Errorf("forgebox approve %s ended (%v) before it asked; the terminal shows %q", code, err, text())
		case <-time.After(20 * time.Millisecond):
			prompted = strings.Contains(text(), "Run it?")
		}
	}
	if _, err := master.Write([]byte(answer + "\n")); err != nil {
		return text(), fmt.Errorf("type %q at forgebox approve: %w", answer, err)
	}
	err = <-exited
	// The terminal's last output is read before its master closes.
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return text(), fmt.Errorf("forgebox approve %s hung: killed after 30 s; the terminal shows %q", code, text())
	case errors.As(err, &ee):
		return text(), fmt.Errorf("forgebox approve %s: exit %d; the terminal shows %q", code, ee.ExitCode(), text())
	case err != nil:
		return text(), fmt.Errorf("forgebox approve %s: %w", code, err)
	}
	return text(), nil
}

// lockedBuffer is a bytes.Buffer one goroutine writes while another reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// readme returns the workspace's README, or the error reading it.
func (s *scratch) readme() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.ws, "README"))
	return string(b), err
}

// person returns what the person does when the model's last tool result
// asks for their approval: check that the command it waits on has not
// run (the workspace's uncommitted change is there), then answer the
// code in that result at a terminal.
func (s *scratch) person(answer string) func(results []json.RawMessage) error {
	return func(results []json.RawMessage) error {
		if len(results) == 0 {
			return errors.New("the model has seen no tool result to take a code from")
		}
		last := string(results[len(results)-1])
		m := approveCode.FindStringSubmatch(last)
		if m == nil {
			return fmt.Errorf("the model's last tool result names no code for forgebox approve: %.600s", last)
		}
		// The client's forgebox serve keeps the request in its state
		// directory: $XDG_STATE_HOME/forgebox, or $HOME/.local/state/forgebox
		// when the client passes its MCP servers no XDG_STATE_HOME (Codex
		// passes a few variables only). The scratch environment has
		// XDG_STATE_HOME at that same place, so forgebox approve, run with
		// it, finds the request either way.
		request := filepath.Join(s.home, ".local", "state", "forgebox", "requests", strings.ReplaceAll(m[1], "-", "")+".json")
		if _, err := os.Stat(request); err != nil {
			return fmt.Errorf("the request %s is not in the scratch home's state directory: %w", m[1], err)
		}
		if got, err := s.readme(); err != nil || got != changedReadme {
			return fmt.Errorf("before the person's answer, README is %q (%v); want the uncommitted change %q still there", got, err, changedReadme)
		}
		start := time.Now()
		shown, err := s.answerAtTerminal(m[1], answer)
		s.t.Logf("forgebox approve %s, answered %q: %v", m[1], answer, time.Since(start).Round(time.Millisecond))
		if err != nil {
			return err
		}
		want := "forgebox: approved"
		if answer == "n" {
			want = "forgebox: refused"
		}
		if !strings.Contains(shown, "git reset --hard") || !strings.Contains(shown, want) {
			return fmt.Errorf("forgebox approve %s answered %q: the terminal shows %q; want the command and %q", m[1], answer, shown, want)
		}
		return nil
	}
}

// resetByPerson checks the workspace after shellScript: the denied line
// did not run, and git reset --hard ran once the person approved it (the
// uncommitted change is gone).
func (s *scratch) resetByPerson() {
	s.t.Helper()
	if _, err := os.Stat(filepath.Join(s.ws, "M")); err == nil {
		s.t.Error("the denied line ran: its marker M is in the workspace")
	}
	if got, err := s.readme(); err != nil || got != committedReadme {
		s.t.Errorf("README after the session: %q, %v; want %q (git reset --hard ran on the person's approval)", got, err, committedReadme)
	}
}
