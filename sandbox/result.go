package sandbox

import (
	"time"

	"github.com/forgebox/forgebox/cgroup"
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

// Quarantined is a protected path the run created, moved aside after it.
type Quarantined struct {
	Path    string `json:"path"`
	MovedTo string `json:"moved_to"`
	Why     string `json:"why"`
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

// Values of Enforced.UnixSockets.
const (
	UnixSocketsRefused = "refused"
	UnixSocketsAllowed = "allowed"
)

// Enforced says what isolation was really applied to a run.
type Enforced struct {
	// Sandbox is false when --best-effort fell back to running without
	// namespaces; everything below is then empty.
	Sandbox    bool     `json:"sandbox"`
	Namespaces []string `json:"namespaces"`
	Network    Network  `json:"network"`
	// Proxy is the allowlist proxy's address inside the sandbox (NetAllow).
	Proxy   string  `json:"proxy,omitempty"`
	Profile Profile `json:"profile"`
	// ReadOnlyRoot: the host tree is mounted read-only, recursively.
	ReadOnlyRoot bool `json:"read_only_root"`
	// Writable lists the writable roots.
	Writable []string `json:"writable"`
	// Hidden lists the secret locations covered with empty read-only
	// entries; Sockets the host Unix sockets covered the same way.
	Hidden  []string `json:"hidden"`
	Sockets []string `json:"sockets_hidden"`
	// Protected lists read-only paths inside writable roots. Watched lists
	// protected names missing when the run started: what the run creates
	// there is moved aside afterwards (Result.Quarantined).
	Protected []string `json:"protected"`
	Watched   []string `json:"watched"`
	// PrivateDirs are the tmpfs mounts private to the run.
	PrivateDirs []string `json:"private_dirs"`
	PTY         bool     `json:"pty"`
	// LandlockABI is the Landlock ABI the ruleset was built for, 0 when
	// Landlock was not applied; LandlockRules counts its path rules.
	// LandlockTCP: TCP bind and connect are denied (ABI 4+);
	// LandlockScoped: abstract Unix sockets and signals are scoped to the
	// sandbox (ABI 6+).
	// LandlockConnectPorts are the ports TCP connect is allowed to
	// nonetheless (the proxy's, with NetAllow).
	LandlockABI          int      `json:"landlock_abi"`
	LandlockRules        int      `json:"landlock_rules"`
	LandlockTCP          bool     `json:"landlock_tcp_denied"`
	LandlockConnectPorts []uint16 `json:"landlock_tcp_connect_ports,omitempty"`
	LandlockScoped       bool     `json:"landlock_scoped"`
	// Seccomp: the filter was loaded right before exec; SeccompDenied
	// names what it refuses.
	Seccomp       bool     `json:"seccomp"`
	SeccompDenied []string `json:"seccomp_denied"`
	// UnixSockets is UnixSocketsRefused when the filter refuses
	// socket(AF_UNIX), so no pathname Unix socket is reachable, and
	// UnixSocketsAllowed when the command may create them
	// (Spec.AllowUnixSockets, or no filter); empty where no sandbox applies.
	UnixSockets string `json:"unix_sockets,omitempty"`
	// NoNewPrivs and Capabilities: the command cannot gain privileges
	// (setuid bits, file capabilities) and starts with every capability
	// set empty ("none").
	NoNewPrivs   bool   `json:"no_new_privs"`
	Capabilities string `json:"capabilities"`
	// Limits says, for each resource limit, what enforced it (a cgroup
	// v1 or v2, an rlimit, or nothing) and why not a cgroup; Cgroup is
	// the run's group, when it had one.
	Limits *cgroup.Decision `json:"limits"`
	Cgroup string           `json:"cgroup,omitempty"`
	// Missing lists what --best-effort could not enforce.
	Missing []string `json:"missing,omitempty"`
}
