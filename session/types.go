package session

import (
	"errors"
	"time"
)

// Options says what to run on the terminal.
type Options struct {
	// Argv is the program started on the PTY: bash, or a command that ends
	// in an interactive bash, such as
	// {"forgebox", "run", "--pty", ..., "--", "bash", "--noprofile", "--norc", "-i"}.
	// Empty means {"bash", "--noprofile", "--norc", "-i"}. Argv[0] is looked
	// up in this process's PATH.
	Argv []string
	// Env is the program's environment. Nil means a minimal one: PATH, HOME,
	// USER, LOGNAME, LANG, XDG_CONFIG_HOME, XDG_STATE_HOME and
	// FORGEBOX_HISTORY_DB from this process, PAGER=cat and GIT_PAGER=cat
	// (a pager would turn every `git log` into a timeout) and
	// INPUTRC=/dev/null (a user's key bindings must not reinterpret the
	// lines Exec types). TERM=xterm-256color is added when Env lacks TERM:
	// that is what the emulator understands.
	Env []string
	// Dir is the working directory; empty means this process's.
	Dir string
	// Rows and Cols are the terminal size, 24x80 when zero.
	Rows, Cols int
	// OutputLimit bounds the text of one Exec or Read, DefaultOutputLimit
	// when zero.
	OutputLimit int
}

// ExecResult is the outcome of one command line.
type ExecResult struct {
	// Output is what the command printed (stdout and stderr interleaved, as
	// on a terminal) as text: escape sequences dropped, CR LF turned into LF,
	// invalid UTF-8 replaced. It never contains the typed command line, the
	// completion markers or a prompt.
	Output string
	// ExitCode is the command's exit status, 130 after an interrupt, and -1
	// when it is unknown because the command was still running.
	ExitCode int
	// TimedOut says the timeout passed and Ctrl-C was sent.
	TimedOut bool
	// StillRunning says the command did not stop within a short grace after
	// Ctrl-C. Its further output goes to Read, and Exec refuses to run until
	// the shell is back at its prompt.
	StillRunning bool
	// Truncated says Output lost its middle to the output limit.
	Truncated bool
	Duration  time.Duration
}

// ReadResult is what an interactive program did since the last look.
type ReadResult struct {
	// Output is the text printed since the previous Read (or what an Exec
	// did not claim), cleaned and bounded like ExecResult.Output.
	Output    string
	Truncated bool
	// Screen is what a terminal would show now.
	Screen Screen
	// AtPrompt says the shell is waiting for a command line: Exec will run.
	AtPrompt bool
	// Alive is false once the session was closed or its shell exited.
	Alive bool
}

// Screen is the terminal's display as text.
type Screen struct {
	// Text holds the rows from the top, joined by "\n", each without
	// trailing spaces; empty rows at the bottom are left out.
	Text string `json:"text" jsonschema:"the rows from the top, one per line, without trailing spaces; empty rows at the bottom left out"`
	// Rows and Cols are the terminal size; CursorRow and CursorCol are
	// 0-based.
	Rows          int  `json:"rows" jsonschema:"the terminal's rows"`
	Cols          int  `json:"cols" jsonschema:"the terminal's columns"`
	CursorRow     int  `json:"cursor_row" jsonschema:"the cursor's row, from 0"`
	CursorCol     int  `json:"cursor_col" jsonschema:"the cursor's column, from 0"`
	CursorVisible bool `json:"cursor_visible" jsonschema:"the cursor is shown"`
	// AltScreen says a full-screen program (vim, less, top) has switched to
	// the alternate screen.
	AltScreen bool `json:"alt_screen" jsonschema:"a full-screen program (vim, less, top) has switched to the alternate screen"`
}

// Info describes a session for listings.
type Info struct {
	ID       string    `json:"id" jsonschema:"the session's id"`
	Argv     []string  `json:"argv" jsonschema:"the program the session runs"`
	Created  time.Time `json:"created" jsonschema:"when the session started, RFC 3339"`
	LastUsed time.Time `json:"last_used" jsonschema:"when the session was last used, RFC 3339"`
	// Exited says the shell ended on its own; ExitCode is its status (-1
	// when a signal killed it).
	Exited   bool `json:"exited" jsonschema:"the shell ended on its own"`
	ExitCode int  `json:"exit_code" jsonschema:"the shell's exit status once it exited (-1 when a signal killed it)"`
}

var (
	// ErrClosed is returned by operations on a session after Close.
	ErrClosed = errors.New("session closed")
	// ErrExited is returned by operations on a session whose shell ended.
	ErrExited = errors.New("shell exited")
	// ErrBusy is returned by an Exec while another Exec runs in the session.
	ErrBusy = errors.New("another command is running in this session")
	// ErrNotAtPrompt is returned by Exec when an interactive program holds
	// the terminal or a partly typed line is pending.
	ErrNotAtPrompt = errors.New("shell is not at its prompt")
	// ErrNoSuchSession is returned by the Manager for an unknown id.
	ErrNoSuchSession = errors.New("no such session")
	// ErrTooManySessions is returned by Manager.Start at its limit.
	ErrTooManySessions = errors.New("too many sessions")
	// ErrManagerClosed is returned by Manager.Start after CloseAll.
	ErrManagerClosed = errors.New("session manager closed")
)
