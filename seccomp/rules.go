package seccomp

import "strconv"

// Options are what the filter depends on. The zero value is the filter for a
// sandbox that keeps the host's network and may not create Unix sockets.
type Options struct {
	// RestrictNetwork is set whenever the sandbox's network is restricted
	// (--net none, loopback or allow): sockets whose traffic Landlock's TCP
	// rules cannot see are refused too.
	RestrictNetwork bool
	// AllowUnixSockets lets socket(AF_UNIX) and datagram socketpairs
	// through. Without it the sandbox can reach no pathname Unix socket,
	// whenever the host bound it; with it, a host socket bound after the
	// start is in reach.
	AllowUnixSockets bool
	// Attribute also builds Program.Notify, the variant that reports
	// refusals to a supervisor through seccomp user notification (see
	// the package documentation).
	Attribute bool
	// ObserveNetwork adds the Watches on connections to Program.Notify;
	// it needs Attribute.
	ObserveNetwork bool
}

// A Rule makes the filter answer Errno when Syscall is called and every
// condition in Conds holds. Several rules for one syscall are alternatives:
// any one that matches denies the call. Everything no rule matches is allowed.
type Rule struct {
	// Syscall is the kernel's name for the call ("umount2", "clone3").
	Syscall string
	// Conds must all hold; at most one per argument, a limit of libseccomp.
	Conds []Cond
	Errno Errno
	// Label is this rule's entry in Program.Denied; rules that together
	// express one policy share it.
	Label string
	// Why is the rationale, one line.
	Why string
	// Fallback marks an errno that libc or the runtime expects and answers
	// by trying another way (clone3, openat2, MPTCP sockets): not a
	// refusal of what the command meant to do. Program.Notify leaves these
	// to the kernel; they are neither reported nor worth a round trip.
	Fallback bool
}

// A Cond tests one syscall argument.
type Cond struct {
	Arg   uint // 0 to 5
	Op    Op
	Mask  uint64 // MaskedEqual only
	Value uint64
}

// Op is how a Cond compares its argument.
type Op uint8

const (
	// MaskedEqual holds when args[Arg] & Mask == Value. A Mask of 0xffffffff
	// compares the low 32 bits alone, which is all the kernel reads of an int
	// argument: garbage in the upper half cannot slip past.
	MaskedEqual Op = iota + 1
	// GreaterEqual holds when args[Arg] >= Value as an unsigned 64-bit
	// number. Garbage in the upper half makes it hold: it fails closed.
	GreaterEqual
)

// Holds reports whether c holds for the arguments of a call.
func (c Cond) Holds(args [6]uint64) bool {
	if c.Arg >= uint(len(args)) {
		return false
	}
	switch a := args[c.Arg]; c.Op {
	case MaskedEqual:
		return a&c.Mask == c.Value
	case GreaterEqual:
		return a >= c.Value
	}
	return false
}

// Matches reports whether r denies a call of r.Syscall with these arguments.
// It is the meaning the compiled program must have, stated in Go.
func (r Rule) Matches(args [6]uint64) bool {
	for _, c := range r.Conds {
		if !c.Holds(args) {
			return false
		}
	}
	return true
}

// Errno is a Linux errno value as numbered on amd64 and arm64 (asm-generic).
// syscall.Errno would carry another system's numbers where this package is
// built for another OS.
type Errno uint16

const (
	EPERM           Errno = 1
	ENOSYS          Errno = 38
	EPROTONOSUPPORT Errno = 93
)

func (e Errno) String() string {
	switch e {
	case EPERM:
		return "EPERM"
	case ENOSYS:
		return "ENOSYS"
	case EPROTONOSUPPORT:
		return "EPROTONOSUPPORT"
	}
	return "errno " + strconv.Itoa(int(e))
}

// Rules returns the filter as data: every denied syscall and conditional
// rule, with its errno, in a fixed order. doc.go explains the choices.
func Rules(o Options) []Rule {
	var rs []Rule
	add := func(why string, names ...string) {
		for _, n := range names {
			rs = append(rs, Rule{Syscall: n, Errno: EPERM, Label: n, Why: why})
		}
	}

	add("acts on another process's memory or descriptors",
		"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd")
	add("loads or replaces kernel code",
		"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module")
	add("kernel attack surface with a record of privilege escalations; no ordinary program needs it",
		"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register")
	add("kernel keyrings are not namespaced",
		"keyctl", "add_key", "request_key")
	add("changes the mount tree that is the sandbox's view of the file system",
		"mount", "umount2", "pivot_root", "move_mount", "open_tree", "open_tree_attr",
		"fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr")
	add("new namespaces hand back capabilities and widen the kernel's attack surface",
		"unshare", "setns")
	add("administers the host; needs capabilities the sandbox must never hold",
		"syslog", "acct", "swapon", "swapoff", "reboot", "sethostname", "setdomainname",
		"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
		"quotactl", "quotactl_fd", "vhangup", "iopl", "ioperm")
	add("opens files by handle, around the paths Landlock and the mount namespace confine",
		"open_by_handle_at")
	add("obsolete interface with a history of bugs",
		"uselib", "lookup_dcookie")

	rs = append(rs, cloneRules()...)
	rs = append(rs, personalityRules()...)
	rs = append(rs, ioctlRules()...)
	rs = append(rs, socketRules(o)...)
	rs = append(rs, setidRules()...)
	return rs
}

func cloneRules() []Rule {
	// All in the low 32 bits of clone's first argument. CLONE_NEWTIME is
	// absent: clone(2) reads that bit as part of the exit signal; only clone3
	// and unshare take it, and both are refused.
	namespaceFlags := []struct {
		name string
		flag uint64
	}{
		{"CLONE_NEWNS", 0x00020000},
		{"CLONE_NEWCGROUP", 0x02000000},
		{"CLONE_NEWUTS", 0x04000000},
		{"CLONE_NEWIPC", 0x08000000},
		{"CLONE_NEWUSER", 0x10000000},
		{"CLONE_NEWPID", 0x20000000},
		{"CLONE_NEWNET", 0x40000000},
	}
	rs := []Rule{{
		Syscall: "clone3",
		Errno:   ENOSYS,
		Label:   "clone3",
		// glibc 2.34 and later try clone3 for every fork and thread.
		Fallback: true,
		Why:      "its flags sit in memory the filter cannot read; ENOSYS makes libc fall back to clone",
	}}
	// The flags are clone's first argument on every architecture Compile
	// accepts (s390x would put them second).
	for _, f := range namespaceFlags {
		rs = append(rs, Rule{
			Syscall: "clone",
			Conds:   []Cond{{Arg: 0, Op: MaskedEqual, Mask: f.flag, Value: f.flag}},
			Errno:   EPERM,
			Label:   "clone(namespace flags)",
			Why:     f.name + ": new namespaces hand back capabilities and widen the kernel's attack surface",
		})
	}
	return rs
}

func ioctlRules() []Rule {
	requests := []struct {
		name, why string
		nr        uint64
	}{
		{"TIOCSTI", "pushes input into a terminal the user is typing into", 0x5412},
		{"TIOCLINUX", "pastes the console selection into a virtual terminal's input", 0x541c},
		{"TIOCSETD", "changes a terminal's line discipline: kernel attack surface, and it wrecks the user's terminal", 0x5423},
	}
	var rs []Rule
	for _, r := range requests {
		rs = append(rs, Rule{
			Syscall: "ioctl",
			// The kernel reads the request as an unsigned int.
			Conds: []Cond{{Arg: 1, Op: MaskedEqual, Mask: 0xffffffff, Value: r.nr}},
			Errno: EPERM,
			Label: "ioctl(" + r.name + ")",
			Why:   r.name + " " + r.why,
		})
	}
	return rs
}

// unixSocketRules keep the sandbox from connecting or sending to any pathname
// Unix socket. The mount namespace covers the host sockets bound when the run
// starts, but a socket bound later (an ssh-agent, docker or tmux started in
// the hours an MCP shell session lives; issue 16, class 6) appears in a
// directory the sandbox sees, Landlock (ABI 7 and earlier) does not
// restrict connect() to it, and the filter cannot read the address a call
// names. So the sandbox gets no Unix socket that can name one: socket(AF_UNIX)
// fails, and of socketpair only the stream and seqpacket kinds remain, which
// are born connected and refuse another peer (EISCONN; the address of a
// sendmsg is refused or ignored). A datagram socketpair would take any
// address in sendto() and connect(), and AF_UNIX makes SOCK_RAW a datagram
// socket. Pipes between processes, libuv's and
// Python's child IPC use stream socketpairs.
// UnixSocketLabel labels the refusal of socket(AF_UNIX).
const UnixSocketLabel = "socket(AF_UNIX)"

func unixSocketRules() []Rule {
	const why = "a Unix socket can connect or send to a host socket bound after the start, which no mount covers"
	return []Rule{{
		Syscall: "socket",
		// The kernel reads the family as an int.
		Conds: []Cond{{Arg: 0, Op: MaskedEqual, Mask: 0xffffffff, Value: afUnix}},
		Errno: EPERM,
		Label: UnixSocketLabel,
		Why:   why,
	}, {
		Syscall: "socketpair",
		// SOCK_DGRAM (2) and SOCK_RAW (3) in the type's low four bits,
		// SOCK_TYPE_MASK; SOCK_NONBLOCK and SOCK_CLOEXEC sit above them.
		// Only AF_UNIX has datagram socketpairs that name addresses, so
		// the family needs no comparison.
		Conds: []Cond{{Arg: 1, Op: MaskedEqual, Mask: 0xe, Value: sockDgram}},
		Errno: EPERM,
		Label: "socketpair(SOCK_DGRAM or SOCK_RAW)",
		Why:   "a datagram socketpair can send to any address: " + why,
	}}
}

const sockDgram = 2 // SOCK_DGRAM

// Address families ordinary programs use; every other family is refused.
const (
	afUnix    = 1
	afInet    = 2
	afInet6   = 10
	afNetlink = 16 // getaddrinfo(AI_ADDRCONFIG), getifaddrs, ip(8)
)

func socketRules(o Options) []Rule {
	const (
		label = "socket(domain other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)"
		why   = "rarely used protocol families are kernel attack surface; AF_VSOCK reaches the hypervisor past any network namespace, AF_PACKET sees raw frames"
	)
	var rs []Rule
	deny := func(c Cond) {
		rs = append(rs, Rule{Syscall: "socket", Conds: []Cond{c}, Errno: EPERM, Label: label, Why: why})
	}
	// AF_UNSPEC (0) is left to the kernel, which refuses it. Families 3 to 9
	// and 11 to 15 as aligned blocks, compared on the low 32 bits, which is
	// all the kernel reads.
	for _, block := range []struct{ first, n uint64 }{{3, 1}, {4, 4}, {8, 2}, {11, 1}, {12, 4}} {
		deny(Cond{Arg: 0, Op: MaskedEqual, Mask: 0xffffffff &^ (block.n - 1), Value: block.first})
	}
	// One comparison covers AF_PACKET (17), AF_VSOCK (40) and families the
	// kernel has yet to add.
	deny(Cond{Arg: 0, Op: GreaterEqual, Value: afNetlink + 1})
	if !o.AllowUnixSockets {
		rs = append(rs, unixSocketRules()...)
	}
	if o.RestrictNetwork {
		rs = append(rs, Rule{
			Syscall: "socket",
			Conds:   []Cond{{Arg: 2, Op: MaskedEqual, Mask: 0xffffffff, Value: 262}},
			// The kernel's own answer when MPTCP is missing: Go, curl and
			// others fall back to plain TCP, which Landlock does see.
			Errno: EPROTONOSUPPORT,
			Label: "socket(IPPROTO_MPTCP)",
			// Go's net.Listen asks for MPTCP first, every time.
			Fallback: true,
			Why:      "Landlock's TCP rules do not see MPTCP sockets",
		})
	}
	return rs
}
