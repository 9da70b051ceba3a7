package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

const (
	// DefaultTimeout applies when Exec is given none.
	DefaultTimeout = 2 * time.Minute
	// interruptGrace is how long a command gets to stop after Ctrl-C before
	// Exec gives up waiting and reports it as still running.
	interruptGrace = 500 * time.Millisecond
	// promptWait is how long Exec waits for the shell to come back to its
	// prompt, e.g. right after a Send of {Ctrl-C}, before refusing.
	promptWait = 300 * time.Millisecond
	// typeTimeout bounds typing a command line into a shell that stopped
	// reading.
	typeTimeout = 10 * time.Second
	// canonicalLineMax is the kernel's line buffer in canonical mode: longer
	// lines are cut, so long commands wait for readline's raw mode.
	canonicalLineMax = 4095
)

type execPhase int

const (
	awaitingStart execPhase = iota // typed; what arrives is the echo
	capturing                      // the start marker came: this is output
)

// execState follows one command line through the output stream. Guarded by
// the session's mu; done is closed by finish.
type execState struct {
	nonce        string
	phase        execPhase
	keepPreamble bool // setup keeps the echo, to explain a failure
	interrupted  bool
	finished     bool
	exitCode     int
	output       *textSink
	done         chan struct{}
}

func (e *execState) finish(code int) {
	e.finished, e.exitCode = true, code
	close(e.done)
}

// Exec runs one command line in the shell and waits for it to finish. The
// command may span lines, hold heredocs, define functions, cd, export or
// source: it runs in the shell itself, not in a subshell. After timeout (or
// when ctx ends) Exec sends Ctrl-C; if the shell is not back within a short
// grace, the result says StillRunning. Exec refuses with ErrNotAtPrompt when
// the terminal belongs to an interactive program started with Send, and
// with ErrBusy while another Exec runs.
func (s *Session) Exec(ctx context.Context, command string, timeout time.Duration) (ExecResult, error) {
	if strings.IndexByte(command, 0) >= 0 {
		return ExecResult{}, errors.New("exec: command contains a NUL byte")
	}
	if !s.execMu.TryLock() {
		return ExecResult{}, ErrBusy
	}
	defer s.execMu.Unlock()
	s.inExec.Add(1)
	defer s.inExec.Add(-1)
	s.touch()
	defer s.touch()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if err := s.awaitPrompt(ctx, promptWait); err != nil {
		return ExecResult{}, err
	}
	e, err := s.beginExec(false)
	if err != nil {
		return ExecResult{}, err
	}
	started := time.Now()
	if err := s.typeLine(execLine(e.nonce, command)); err != nil {
		s.abandon(e)
		return ExecResult{}, err
	}
	res, err := s.awaitExec(ctx, e, timeout)
	res.Duration = time.Since(started)
	return res, err
}

// awaitPrompt waits up to patience for the shell's prompt marker.
func (s *Session) awaitPrompt(ctx context.Context, patience time.Duration) error {
	timer := time.NewTimer(patience)
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if err := s.usableLocked(); err != nil {
			return err
		}
		if s.atPrompt {
			return nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-s.ended:
		case <-ctx.Done():
			s.mu.Lock()
			return ctx.Err()
		case <-timer.C:
			s.mu.Lock()
			return fmt.Errorf("%w: a program started with Send holds the terminal, or a partly typed line is pending; "+
				"use Read to see the screen and Send to finish (e.g. the program's quit command, or {Ctrl-C})", ErrNotAtPrompt)
		}
		s.mu.Lock()
	}
}

// beginExec registers a new nonce and makes the session route output to it.
// keepPreamble keeps what arrives before the start marker (setup only).
func (s *Session) beginExec(keepPreamble bool) (*execState, error) {
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	e := &execState{nonce: nonce, keepPreamble: keepPreamble, output: newTextSink(s.limit), done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return nil, err
	}
	s.nonces = append(s.nonces, nonce)
	if len(s.nonces) > recentNonces {
		s.nonces = s.nonces[1:]
	}
	s.exec = e
	s.atPrompt = false
	return e, nil
}

// abandon stops routing output to e and returns what it collected; later
// output goes to Read.
func (s *Session) abandon(e *execState) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exec == e {
		s.exec = nil
	}
	out, _ := e.output.take()
	return out
}

// typeLine writes the line and Enter. Right after a prompt marker readline
// may not have switched the terminal to raw mode yet; a line longer than the
// canonical buffer typed then would be cut, so such lines wait a moment.
func (s *Session) typeLine(line string) error {
	if len(line) >= canonicalLineMax/4 {
		for deadline := time.Now().Add(200 * time.Millisecond); s.proc.canonical() && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.proc.write([]byte(line+"\r"), typeTimeout); err != nil {
		return fmt.Errorf("type command: %w", err)
	}
	return nil
}

func (s *Session) awaitExec(ctx context.Context, e *execState, timeout time.Duration) (ExecResult, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var cause error
	select {
	case <-e.done:
		return s.result(e), nil
	case <-s.ended:
		return s.endedResult(e)
	case <-timer.C:
	case <-ctx.Done():
		cause = fmt.Errorf("exec interrupted: %w", ctx.Err())
	}
	if err := s.interrupt(e); err != nil {
		res, _ := s.detach(e)
		return res, errors.Join(cause, err)
	}
	grace := time.NewTimer(interruptGrace)
	defer grace.Stop()
	var res ExecResult
	select {
	case <-e.done:
		res = s.result(e)
	case <-s.ended:
		res, err := s.endedResult(e)
		res.TimedOut = cause == nil
		return res, err
	case <-grace.C:
		res, _ = s.detach(e)
	}
	res.TimedOut = cause == nil
	return res, cause
}

// interrupt sends Ctrl-C, which the terminal turns into SIGINT for the
// foreground job; interactive bash then abandons the rest of the line.
func (s *Session) interrupt(e *execState) error {
	s.mu.Lock()
	e.interrupted = true
	s.mu.Unlock()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.proc.write([]byte{0x03}, time.Second)
}

func (s *Session) result(e *execState) ExecResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, truncated := e.output.take()
	return ExecResult{Output: out, Truncated: truncated, ExitCode: e.exitCode}
}

// detach gives up on e unless it finished meanwhile.
func (s *Session) detach(e *execState) (ExecResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, truncated := e.output.take()
	if e.finished {
		return ExecResult{Output: out, Truncated: truncated, ExitCode: e.exitCode}, true
	}
	if s.exec == e {
		s.exec = nil
	}
	return ExecResult{Output: out, Truncated: truncated, ExitCode: -1, StillRunning: true}, false
}

// endedResult reports a command during which the shell went away, by
// `exit`, by a crash, or by Close.
func (s *Session) endedResult(e *execState) (ExecResult, error) {
	res, finished := s.detach(e)
	if finished {
		return res, nil
	}
	res.StillRunning = false
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return res, ErrClosed
	}
	res.ExitCode = s.exitCode
	return res, fmt.Errorf("%w with status %d", ErrExited, s.exitCode)
}
