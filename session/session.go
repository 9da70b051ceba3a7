package session

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hinshun/vt10x"
)

const (
	defaultRows, defaultCols = 24, 80
	// setupTimeout bounds how long a new shell may take to run the setup
	// line when the caller's context has no deadline.
	setupTimeout = 10 * time.Second
	// hangupGrace is how long processes get between SIGHUP and SIGKILL.
	hangupGrace = 200 * time.Millisecond
	// recentNonces is how many past Exec nonces stay recognised, so markers
	// of a command that outlived its Exec are still stripped.
	recentNonces = 16
)

// Session is one interactive shell on a PTY. Its methods are safe for
// concurrent use; Exec runs one command line at a time.
type Session struct {
	ID      string
	Created time.Time

	argv  []string
	limit int
	token string // the marker id of command lines not typed by Exec
	proc  *ptyProcess
	term  vt10x.Terminal

	execMu sync.Mutex // held for the whole of an Exec
	inExec atomic.Int32
	// writeMu serialises writes: the master's write deadline is per file.
	writeMu sync.Mutex

	mu         sync.Mutex
	utf8Carry  []byte
	lastUsed   time.Time
	scanner    markerScanner
	out        *textSink // output no Exec claimed, for Read
	unread     bool      // something arrived since the last Read
	lastOutput time.Time
	changed    chan struct{} // closed and replaced whenever output arrives
	atPrompt   bool
	exec       *execState // the running Exec, if any
	nonces     []string
	closing    bool
	exited     bool
	exitCode   int

	readerDone chan struct{}
	ended      chan struct{} // shell reaped, leftovers killed, reader done
	closeOnce  sync.Once
}

// Start runs o.Argv on a new PTY and prepares the shell for Exec. The program
// must end up in bash (4 or later), which Exec drives through PROMPT_COMMAND,
// eval and printf. ctx bounds the start only (10 s when it has no deadline);
// the session lives until Close or until its shell exits.
func Start(ctx context.Context, o Options) (*Session, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := newSession(o)
	if err != nil {
		return nil, err
	}
	proc, err := startPTY(o)
	if err != nil {
		return nil, err
	}
	s.proc = proc
	s.term = vt10x.New(vt10x.WithSize(o.Cols, o.Rows), vt10x.WithWriter(replyWriter{proc}))
	go s.readLoop()
	go s.waitLoop()
	if err := s.setup(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("start session %q: %w", o.Argv[0], err)
	}
	return s, nil
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Argv) == 0 {
		o.Argv = []string{"bash", "--noprofile", "--norc", "-i"}
	}
	if o.Rows == 0 && o.Cols == 0 {
		o.Rows, o.Cols = defaultRows, defaultCols
	}
	if err := checkSize(o.Rows, o.Cols); err != nil {
		return o, err
	}
	if o.OutputLimit <= 0 {
		o.OutputLimit = DefaultOutputLimit
	}
	if o.Env == nil {
		o.Env = minimalEnv()
	}
	if !slices.ContainsFunc(o.Env, func(kv string) bool { return strings.HasPrefix(kv, "TERM=") }) {
		o.Env = append(slices.Clip(o.Env), "TERM=xterm-256color")
	}
	return o, nil
}

func checkSize(rows, cols int) error {
	if rows < 2 || rows > 1000 || cols < 10 || cols > 1000 {
		return fmt.Errorf("terminal size %dx%d: rows must be 2..1000 and columns 10..1000", rows, cols)
	}
	return nil
}

func minimalEnv() []string {
	env := []string{"PAGER=cat", "GIT_PAGER=cat", "INPUTRC=/dev/null"}
	// The configuration and state directories, so that a forgebox run as
	// the program finds the configuration and history its caller uses.
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "FORGEBOX_HISTORY_DB"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	return append(env, "LANG="+lang)
}

func newSession(o Options) (*Session, error) {
	id, err := randomHex(6)
	if err != nil {
		return nil, err
	}
	token, err := newNonce()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	s := &Session{
		ID: id, Created: now, lastUsed: now,
		argv: slices.Clone(o.Argv), limit: o.OutputLimit, token: token,
		out:        newTextSink(o.OutputLimit),
		changed:    make(chan struct{}),
		readerDone: make(chan struct{}),
		ended:      make(chan struct{}),
	}
	s.scanner.known = s.knownID
	return s, nil
}

// setup types the setup line and waits for its prompt marker. Whatever the
// shell printed until then (banner, echo, warnings) is kept off the screen
// and out of Read, unless setup fails: then it explains why.
func (s *Session) setup(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, setupTimeout)
		defer cancel()
	}
	e, err := s.beginExec(true)
	if err != nil {
		return err
	}
	line := setupLine(s.token, e.nonce)
	if err := s.proc.write([]byte(line+"\r"), setupTimeout); err != nil {
		return err
	}
	select {
	case <-e.done:
		return nil
	case <-s.ended:
		return fmt.Errorf("shell exited during setup (status %d); it printed: %q", s.exitStatus(), s.preamble(e, line))
	case <-ctx.Done():
		return fmt.Errorf("no answer to the setup line (is the program bash?): %w; it printed: %q", ctx.Err(), s.preamble(e, line))
	}
}

// preamble is the end of what a failed setup printed, with the echo of the
// setup line shortened: the program's own complaint is what explains.
func (s *Session) preamble(e *execState, line string) string {
	out := strings.ReplaceAll(s.abandon(e), line, "<setup line>")
	if len(out) > 500 {
		out = "..." + out[len(out)-500:]
	}
	return out
}

// waitLoop reaps the shell. When it ends, so does the session: leftover
// background jobs are killed, the last output is drained, the master closed.
func (s *Session) waitLoop() {
	defer close(s.ended)
	code := s.proc.wait()
	s.mu.Lock()
	s.exited, s.exitCode = true, code
	s.mu.Unlock()
	s.proc.terminate(hangupGrace)
	select {
	case <-s.readerDone:
	case <-time.After(500 * time.Millisecond):
		// Something outside our reach still holds the slave open.
	}
	s.proc.closeMaster()
	<-s.readerDone
}

// Close ends the session: SIGHUP to the shell and every process of its
// session, SIGKILL to what is left after a short grace. It waits until they
// are gone and is safe to call more than once.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.proc.terminate(hangupGrace)
		select {
		case <-s.ended:
		case <-time.After(5 * time.Second):
			// The shell cannot even be killed (stuck in the kernel): at
			// least stop reading.
			s.proc.closeMaster()
		}
	})
	return nil
}

// Alive says the session can still run commands.
func (s *Session) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing && !s.exited
}

// AtPrompt reports whether the shell waits for a command line with nothing
// typed yet: what is typed now is a command for the shell, not input for a
// program.
func (s *Session) AtPrompt() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.atPrompt && s.exec == nil && !s.closing && !s.exited
}

// ProgramInForeground reports whether a program other than the shell holds
// the terminal (vim, a REPL, a running command), from the process tree:
// what is typed then is that program's input.
func (s *Session) ProgramInForeground() bool {
	return s.proc.programInForeground()
}

// LastUsed is when a method last acted on the session.
func (s *Session) LastUsed() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsed
}

// Info describes the session.
func (s *Session) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Info{
		ID: s.ID, Argv: slices.Clone(s.argv), Created: s.Created, LastUsed: s.lastUsed,
		Exited: s.exited, ExitCode: s.exitCode,
	}
}

func (s *Session) touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

func (s *Session) exitStatus() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

// usableLocked returns why the session cannot take input, if it cannot.
// Callers hold s.mu.
func (s *Session) usableLocked() error {
	switch {
	case s.closing:
		return ErrClosed
	case s.exited:
		return fmt.Errorf("%w with status %d", ErrExited, s.exitCode)
	}
	return nil
}

func (s *Session) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usableLocked()
}

// replyWriter carries the emulator's answers to terminal queries back to
// the program, so programs that ask where the cursor is do not stall.
type replyWriter struct{ proc *ptyProcess }

func (w replyWriter) Write(p []byte) (int, error) {
	w.proc.tryWrite(p)
	return len(p), nil
}
