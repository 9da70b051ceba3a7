package sandbox

import (
	"time"

	"github.com/forgebox/forgebox/undo"
)

// Result is how a run ended.
type Result struct {
	// Cwd is where the command started; Workspace the resolved workspace.
	Cwd, Workspace string
	// ExitCode is the command's status, 128+N when signal N killed it, 124
	// on timeout.
	ExitCode int
	// Signal names the signal that killed the command ("SIGKILL"), if any.
	Signal   string
	TimedOut bool
	// IdleTimedOut: the timeout was Spec.IdleTimeout (TimedOut is set too).
	IdleTimedOut bool
	// OOMKilled: the kernel's OOM killer killed a process of the tree at
	// the memory limit (Enforced.Limits.Memory).
	OOMKilled bool
	Duration  time.Duration
	// Stdout and Stderr hold the captured output when Streams.Capture was
	// set (with a PTY, all output is on Stdout).
	Stdout, Stderr Captured
	Enforced       Enforced
	// Usage is the command's resource use, as the kernel accounted it.
	Usage Usage
	// Timeline is when each step of the launch ended, from the start of
	// Run: the cost breakdown behind --trace.
	Timeline []Phase
	// Quarantined lists protected paths the run created, moved aside.
	Quarantined []Quarantined
	// Withheld are the values of host variables that were not passed
	// because they look secret: whatever records the run must redact them.
	// Never printed.
	Withheld []string `json:"-"`
	// Connections are what the command asked the allowlist proxy for
	// (NetAllow), in the order they ended, at most MaxConnections of them;
	// ConnectionsOmitted counts the rest. Refusals take at most half the
	// places, so that a flood of them cannot hide the connections that
	// went through.
	Connections        []Connection
	ConnectionsOmitted int
	// Refusals are what the sandbox observed itself refusing the command
	// (a connection its network cannot make, a syscall its seccomp filter
	// refuses), deduplicated with a count each, in the order they first
	// happened, at most MaxRefusals of them; RefusalsOmitted counts the
	// occurrences of the rest. The Refusal type documents the JSON.
	// Attribution says whether anything was watching: false (an older
	// kernel, or a seccomp listener already above forgebox, or no filter)
	// means Refusals is empty for want of an observer, not for want of
	// refusals. It reports; it protects nothing.
	Refusals        []Refusal
	RefusalsOmitted int
	Attribution     bool
	// Warnings are things the user should know that did not stop the run.
	Warnings []string
	// Changes is what the run changed in the workspace, when it ran with
	// undo (Enforced.Undo): nil otherwise.
	Changes *Changes
}

// Changes is a run's effect on its workspace, kept undoable.
type Changes struct {
	undo.Summary
	// UndoID names the record that undoes the run (forgebox undo ID);
	// empty when the run changed nothing.
	UndoID string `json:"undo_id,omitempty"`
}

// MaxConnections bounds Result.Connections.
const MaxConnections = 1000

// Connection is one tunnel (HTTP CONNECT or SOCKS5) or forwarded HTTP
// request through the allowlist proxy, or a client connection it refused
// before it named a host (Host empty).
type Connection struct {
	Time     time.Time `json:"time"`
	Protocol string    `json:"protocol,omitempty"`
	Host     string    `json:"host"`
	Port     uint16    `json:"port"`
	// Addr is the address the proxy connected to.
	Addr     string `json:"addr,omitempty"`
	Decision string `json:"decision"` // allowed or denied
	// Code is the proxy's stable code for a refusal or failure
	// (not-allowed, refused-address, sni-mismatch, connect-failed, ...).
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Advice is how to allow a refused connection, as the client was told.
	Advice     string  `json:"advice,omitempty"`
	BytesUp    int64   `json:"bytes_up"`
	BytesDown  int64   `json:"bytes_down"`
	DurationMS float64 `json:"duration_ms"`
}

// Quarantined is a protected path the run created, moved aside after it,
// or a Git config key the run set and forgebox refused: then Path is the
// config, Key and Value what was refused, and MovedTo the run's copy of
// the config, kept for inspection.
type Quarantined struct {
	Path    string `json:"path"`
	MovedTo string `json:"moved_to"`
	Why     string `json:"why"`
	Key     string `json:"key,omitempty"`
	Value   string `json:"value,omitempty"`
}

// Phase is one step of a run and when it ended, relative to the start.
type Phase struct {
	Step string        `json:"step"`
	At   time.Duration `json:"at_ns"`
}

// Usage is the CPU time and peak memory of the command and the children it
// waited for.
type Usage struct {
	UserTime, SystemTime time.Duration
	MaxRSSBytes          int64
	// From the run's cgroup, when it had one: the tree's peak memory (0
	// when the kernel does not report it), the CPU time of every process
	// of the tree, and the forks the task limit refused.
	PeakMemoryBytes int64
	TreeCPUTime     time.Duration
	ForksRefused    int64
}

// Captured is one output stream, bounded: the first and last bytes are kept
// and Omitted says how many were dropped between them.
type Captured struct {
	Head, Tail []byte
	Total      int64
	Omitted    int64
}

// Truncated reports whether bytes were dropped.
func (c Captured) Truncated() bool { return c.Omitted > 0 }
