package sandbox

import (
	"fmt"
	"os"
	"time"

	"github.com/forgebox/forgebox/netproxy"
	"golang.org/x/term"
)

// Profile selects how much of the host the command sees.
type Profile string

const (
	// ProfileWorkspace shows the host read-only and the workspace writable.
	ProfileWorkspace Profile = "workspace"
	// ProfileStrict shows only system directories and the workspace.
	ProfileStrict Profile = "strict"
	// ProfileReadOnly is ProfileWorkspace with the workspace read-only too.
	ProfileReadOnly Profile = "readonly"
)

// ParseProfile accepts the names used on the command line.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileWorkspace, ProfileStrict, ProfileReadOnly:
		return p, nil
	}
	return "", fmt.Errorf("%w: unknown profile %q (want workspace, strict or readonly)", ErrInvalid, s)
}

// Network selects the command's network.
type Network string

const (
	// NetNone gives the command a new network namespace with only its
	// own loopback, on which it may bind and connect (a test suite's
	// local server): nothing outside the namespace is reachable through
	// it, and nothing outside reaches in. On macOS, which has no network
	// namespaces, NetNone has no loopback at all, since it would be the
	// host's.
	NetNone Network = "none"
	// NetLoopback is an older name: on Linux it is NetNone (kept so that
	// scripts passing --net loopback still run); on macOS it asks for
	// the host's loopback, a missing layer refused unless BestEffort.
	NetLoopback Network = "loopback"
	// NetHost shares the host's network.
	NetHost Network = "host"
	// NetAllow is NetNone with one way out: forgebox's proxy, listening
	// on the sandbox's loopback at ProxyAddr, which connects only where
	// Spec.Allowlist allows. Landlock (ABI 4+) refuses every TCP bind, and
	// every connect to another port.
	NetAllow Network = "allow"
)

// ParseNetwork accepts the names used on the command line.
func ParseNetwork(s string) (Network, error) {
	switch n := Network(s); n {
	case NetNone, NetLoopback, NetHost, NetAllow:
		return n, nil
	}
	return "", fmt.Errorf("%w: unknown network mode %q (want none, loopback, host or allow)", ErrInvalid, s)
}

// Spec describes one run. Paths may be relative to Dir; Prepare makes them
// absolute and canonical.
type Spec struct {
	// Argv is the program and its arguments for the exec form. Exactly one
	// of Argv and Command is set.
	Argv []string
	// Command is a command line for the -c form, run by Shell.
	Command string
	// Shell runs Command; empty means bash, or sh where bash is absent.
	Shell string

	// Workspace is the writable project directory; empty means Dir.
	Workspace string
	// Dir is the caller's working directory. The command starts there when
	// it lies inside the workspace, else in the workspace.
	Dir string
	// ReadWrite and ReadOnly are extra grants; Hide adds hidden paths.
	ReadWrite, ReadOnly, Hide []string
	Profile                   Profile
	Network                   Network
	// Own are the caller's own configuration and state (absolute paths;
	// a directory ends in a slash): what a command writing them could use
	// to steer later runs. Where they lie in a writable root they stay
	// read-only (a missing directory is made first, 0700), and a writable
	// root inside one is refused. See own_linux.go.
	Own []string
	// Allowlist is the network of NetAllow; nil allows nothing.
	Allowlist *Allowlist

	// Environ is the caller's environment, the source for inheritance.
	Environ []string
	// PassEnv names host variables to pass even when they look secret;
	// SetEnv holds NAME=VALUE assignments.
	PassEnv, SetEnv []string
	// Home is the caller's home directory as the account database has it;
	// HOME from Environ is honoured too.
	Home string

	// Timeout kills the whole tree after this long; zero means none.
	Timeout time.Duration
	// IdleTimeout kills the whole tree once the command has printed
	// nothing for this long (a prompt waiting for input that will never
	// come, a hung download); zero means none. Its output then passes
	// through forgebox even where it would be handed over.
	IdleTimeout time.Duration
	// Grace is how long a command may take to exit after a forwarded
	// SIGINT or SIGTERM (or a timeout) before the tree is killed.
	Grace time.Duration
	// Limits caps the memory, tasks and CPU of the command's tree.
	Limits Limits
	// BestEffort runs with what the host supports instead of refusing.
	BestEffort bool
	// StateDir is where forgebox keeps what outlives a run (the index of
	// each writable root that the post-run check compares with); empty
	// keeps nothing, and each run then indexes its roots from scratch.
	StateDir string
	// AllowUnixSockets lets the command create Unix sockets
	// (socket(AF_UNIX), datagram socketpairs), for servers such as tmux or
	// a test database on a socket. Without it no pathname Unix socket is
	// reachable; with it, only those bound on the host when the run
	// starts are covered, and one bound later is reachable (Linux).
	AllowUnixSockets bool
	// NoCache turns the private caches off (Linux): the host's package
	// caches are then read-only to the command, as the rest of the home.
	// By default the command writes ~/.cache, Go's module cache, ~/.npm
	// and the others of caches.Table into caches private to forgebox and
	// the workspace, kept beneath StateDir; without a StateDir there are
	// none. A judged line that only reads the workspace runs without them
	// too (runner.Caches).
	NoCache bool
	// Undo keeps the run's changes to the workspace undoable (Linux): the
	// command writes an overlay of the workspace, and once its tree is
	// dead forgebox carries the changes in, keeping what they replace in
	// an undo record beneath StateDir (package undo). The workspace shows
	// the changes only when the run ends. Where undo cannot be set up (no
	// StateDir, the store on another file system, the kernel refuses the
	// overlay) the run goes on without it and says why (Enforced.Undo
	// false, a warning). The --rw directories are kept alike where the
	// store can hold them (Enforced.UndoRw); the others are named in a
	// warning.
	Undo bool
	// RequireUndo: the judge let the command run only because undo can
	// put back what it destroys (policy.Decision.NeedsUndo). Then a run
	// whose undo cannot be set up refuses to start (a SetupError) rather
	// than going on without it.
	RequireUndo bool
}

// Allowlist is what NetAllow lets the command reach.
type Allowlist struct {
	// Rules are the hosts and ports; nil allows nothing.
	Rules *netproxy.Rules
	// Options tune the proxy (hosts file, private ranges, advice in
	// refusals). Its Log is called too, besides the run's own record
	// (Result.Connections).
	Options netproxy.Options
}

// ProxyPort is where the proxy listens on the sandbox's loopback. The
// network namespace is the run's own, so the port is always free.
const ProxyPort = 3128

// ProxyAddr is the proxy's address inside the sandbox.
const ProxyAddr = "127.0.0.1:3128"

// DefaultGrace is the time between the polite signal and SIGKILL.
const DefaultGrace = 2 * time.Second

// Streams connects the command to the caller.
type Streams struct {
	// Stdin, Stdout and Stderr are the caller's streams. A nil Stdin (or
	// NoStdin) gives the command /dev/null. Streams that are not terminals
	// are handed to the command as they are; terminals are never handed
	// over, their bytes are relayed. The goroutine relaying a terminal
	// (or, with PTY, any) Stdin is not waited for: it ends at the first
	// read after the run, so a library caller that keeps using Stdin
	// loses one read's bytes to it.
	Stdin, Stdout, Stderr *os.File
	NoStdin               bool
	// PTY runs the command on a new pseudo-terminal as its controlling
	// terminal. When Stdin is a terminal it is put in raw mode for the run.
	PTY bool
	// Capture collects stdout and stderr into Result instead of streaming
	// them, keeping MaxOutput bytes of each (head and tail).
	Capture bool
	// MaxOutput bounds each captured stream; when streaming, a non-zero
	// value prints the head live and the tail at the end.
	MaxOutput int64
	// Keep, when the output is streamed rather than captured, also keeps
	// up to Keep bytes of each stream (the first and last halves) in
	// Result.Stdout and Result.Stderr, for a record of the run. A stream
	// that would be handed over as it is (a file or pipe, no MaxOutput)
	// is then copied through forgebox instead, which costs throughput.
	Keep int64
	// Signals, when set, are forwarded to the command (SIGINT, SIGTERM,
	// SIGHUP, SIGQUIT); if it has not exited after Spec.Grace the tree is
	// killed. A second SIGINT or SIGTERM kills it at once.
	Signals <-chan os.Signal
	// Observe, when set, sees the output as it arrives, each chunk of
	// stdout and stderr, when forgebox sees the bytes (Capture, MaxOutput,
	// Keep or PTY): a progress report, not a record. It is called from the
	// copying goroutines, concurrently for the two streams; it must
	// return quickly and not keep p.
	Observe func(p []byte)
	// Launched, when set, is called once forgebox's own share of the
	// launch is done, just before the sandbox is told to start the
	// command, with what the sandbox enforces: from then on forgebox
	// mostly waits, so work that must not slow the launch can begin, and
	// the command does not start before Launched returns. It is not
	// called when the launch failed before that point. It must return
	// quickly.
	Launched func(Enforced)
}

// HandsOver reports whether an output stream would reach the command as
// the caller's own file, without forgebox seeing its bytes: then only Keep
// makes them visible, at the cost of a copy.
func (s Streams) HandsOver() bool {
	if s.PTY || s.Capture || s.MaxOutput > 0 {
		return false
	}
	for _, f := range []*os.File{s.Stdout, s.Stderr} {
		if f != nil && !term.IsTerminal(int(f.Fd())) {
			return true
		}
	}
	return false
}

// DefaultMaxOutput is the per-stream capture bound.
const DefaultMaxOutput = 1 << 20
