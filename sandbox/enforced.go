package sandbox

import (
	"slices"

	"github.com/forgebox/forgebox/cgroup"
)

// Values of Enforced.UnixSockets.
const (
	UnixSocketsRefused = "refused"
	UnixSocketsAllowed = "allowed"
)

// Enforced says what isolation was really applied to a run.
type Enforced struct {
	// Sandbox is false when --best-effort let the run go on without its
	// sandbox proper (namespaces, sandbox-exec, a restricted token); what
	// it kept is said below (withoutSandbox).
	Sandbox    bool     `json:"sandbox"`
	Namespaces []string `json:"namespaces"`
	Network    Network  `json:"network"`
	// Proxy is the allowlist proxy's address inside the sandbox (NetAllow).
	Proxy string `json:"proxy,omitempty"`
	// Profile is the run's; without the sandbox proper only Landlock, on
	// Linux, still enforces part of it (Missing says what is lost).
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
	// PrivateCopies lists protected files the command saw as a copy of
	// its own: the workspace repository's .git/config, whose ordinary
	// key changes are carried back after the run and the others refused
	// (Result.Quarantined).
	PrivateCopies []string `json:"private_copies,omitempty"`
	// PrivateDirs are the tmpfs mounts private to the run.
	PrivateDirs []string `json:"private_dirs"`
	// Caches are the package caches the command may write, each into a
	// cache private to forgebox and the workspace (package caches): an
	// overlay on the host's directory, or a plain private directory when
	// the host has none or overlay is refused. Empty with Spec.NoCache
	// (--no-cache, or a judged line of readers on the workspace:
	// runner.Caches), without a sandbox, and on macOS and Windows, which have no mount
	// namespace to build them in: there the caches stay as the profile
	// leaves them.
	Caches []CacheMount `json:"caches"`
	// Undo: the command wrote an overlay of the workspace, carried in
	// after the run with what it replaced kept (Spec.Undo, package undo).
	Undo bool `json:"undo"`
	// UndoRw are the --rw paths written through an overlay alike, their
	// changes in the same undo record.
	UndoRw []string `json:"undo_rw,omitempty"`
	PTY    bool     `json:"pty"`
	// LandlockABI is the Landlock ABI the ruleset was built for, 0 when
	// Landlock was not applied; LandlockRules counts its path rules.
	// LandlockTCP: TCP bind and connect are denied (ABI 4+; only with
	// NetAllow, since NetNone's loopback is the run's own);
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

// newEnforced is the one place an Enforced is made, on every OS: a
// sandboxed run of profile and network whose layers are still to be
// applied. Each backend then fills in what its layers really did; every
// field is named here, so that one added to Enforced is decided for every
// OS at once (TestNewEnforcedSetsEveryField fails otherwise) and no backend
// reports it by omission. Lists are empty, never nil, so that JSON shows []
// for "none" — but SeccompDenied, null while no filter is loaded.
func newEnforced(profile Profile, network Network, pty bool) Enforced {
	return Enforced{
		Sandbox:              true,
		Namespaces:           []string{},
		Network:              network,
		Proxy:                "",
		Profile:              profile,
		ReadOnlyRoot:         false,
		Writable:             []string{},
		Hidden:               []string{},
		Sockets:              []string{},
		Protected:            []string{},
		Watched:              []string{},
		PrivateDirs:          []string{},
		PrivateCopies:        nil, // Linux only: the others keep every Git config read-only
		Caches:               []CacheMount{},
		Undo:                 false, // set by the Linux view when the workspace gets its overlay
		UndoRw:               nil,   // the Linux view's too, for each --rw directory kept
		PTY:                  pty,
		LandlockABI:          0,
		LandlockRules:        0,
		LandlockTCP:          false,
		LandlockConnectPorts: nil,
		LandlockScoped:       false,
		Seccomp:              false,
		SeccompDenied:        nil,
		UnixSockets:          "",
		NoNewPrivs:           false,
		Capabilities:         "",
		Limits:               nil,
		Cgroup:               "",
		Missing:              nil,
	}
}

// withoutSandbox is e for a run that --best-effort let go on without its
// sandbox proper (namespaces, sandbox-exec, a restricted token), missing
// saying why. What the sandbox gave goes: its view (read-only root,
// writable roots, hidden and protected paths, private directories) and its
// network, the host's from now on. What is applied to the process itself
// stays: the profile and the kernel layers that enforce it where there
// are any (Landlock, seccomp, no_new_privs, capabilities), the limits, the
// terminal and the watched names, checked after the run all the same.
func (e Enforced) withoutSandbox(missing ...string) Enforced {
	e.Sandbox, e.Missing = false, slices.Concat(missing, e.Missing)
	e.Namespaces, e.Network, e.Proxy = []string{}, NetHost, ""
	e.ReadOnlyRoot, e.Writable, e.Hidden, e.Sockets, e.Protected, e.PrivateDirs = false, []string{}, []string{}, []string{}, []string{}, []string{}
	e.PrivateCopies = nil
	e.Caches = []CacheMount{}
	e.Undo, e.UndoRw = false, nil
	return e
}
