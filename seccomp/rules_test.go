package seccomp

import (
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
)

// decide is the reference meaning of a rule set: the errnos of the rules
// that deny a call (any of them may win), none if it is allowed.
func decide(rules []Rule, syscall string, args [6]uint64) []Errno {
	var errnos []Errno
	for _, r := range rules {
		if r.Syscall == syscall && r.Matches(args) {
			errnos = append(errnos, r.Errno)
		}
	}
	return errnos
}

func TestRulesWellFormed(t *testing.T) {
	name := regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	for _, o := range []Options{{}, {RestrictNetwork: true}} {
		for i, r := range Rules(o) {
			if !name.MatchString(r.Syscall) || r.Label == "" || r.Why == "" || r.Errno == 0 {
				t.Errorf("Rules(%+v)[%d] = %+v: want a syscall name, label, reason and errno", o, i, r)
			}
			var args [6]bool
			for _, c := range r.Conds {
				switch {
				case c.Arg > 5:
					t.Errorf("Rules(%+v)[%d] (%s): argument %d does not exist", o, i, r.Label, c.Arg)
				case args[c.Arg]:
					t.Errorf("Rules(%+v)[%d] (%s): two conditions on argument %d, which libseccomp refuses", o, i, r.Label, c.Arg)
				case c.Op != MaskedEqual && c.Op != GreaterEqual:
					t.Errorf("Rules(%+v)[%d] (%s): unknown op %d", o, i, r.Label, c.Op)
				case c.Op == MaskedEqual && c.Value&^c.Mask != 0:
					t.Errorf("Rules(%+v)[%d] (%s): value %#x has bits outside mask %#x and never matches", o, i, r.Label, c.Value, c.Mask)
				default:
					args[c.Arg] = true
				}
			}
		}
	}
}

// The syscalls the issue requires refused outright.
var mustDeny = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
	"unshare", "setns",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"syslog", "acct", "swapon", "swapoff", "reboot",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "open_by_handle_at",
}

func TestRulesDenyMandatory(t *testing.T) {
	var garbage [6]uint64
	for i := range garbage {
		garbage[i] = 0xdeadbeef_00000000 | uint64(i)
	}
	for _, o := range []Options{{}, {RestrictNetwork: true}} {
		rules := Rules(o)
		for _, name := range mustDeny {
			for _, args := range [][6]uint64{{}, garbage} {
				if got := decide(rules, name, args); !slices.Equal(got, []Errno{EPERM}) {
					t.Errorf("Rules(%+v): %s%v = %v, want [EPERM]", o, name, args, got)
				}
			}
		}
		if got := decide(rules, "clone3", garbage); !slices.Equal(got, []Errno{ENOSYS}) {
			t.Errorf("Rules(%+v): clone3 = %v, want [ENOSYS]", o, got)
		}
	}
}

func labels(rs []Rule) map[string]bool {
	m := map[string]bool{}
	for _, r := range rs {
		m[r.Label] = true
	}
	return m
}

func TestRulesOptions(t *testing.T) {
	base := labels(Rules(Options{}))
	for _, c := range []struct {
		o           Options
		add, remove []string
	}{
		{Options{RestrictNetwork: true}, []string{"socket(IPPROTO_MPTCP)"}, nil},
		{Options{AllowUnixSockets: true}, nil, []string{"socket(AF_UNIX)", "socketpair(SOCK_DGRAM or SOCK_RAW)"}},
	} {
		got := labels(Rules(c.o))
		want := maps.Clone(base)
		for _, l := range c.add {
			want[l] = true
		}
		for _, l := range c.remove {
			delete(want, l)
		}
		if !maps.Equal(got, want) {
			t.Errorf("labels of Rules(%+v) = %v, want %v", c.o, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
	mptcp := [6]uint64{afInet, 1 /* SOCK_STREAM */, 262}
	if got := decide(Rules(Options{}), "socket", mptcp); got != nil {
		t.Errorf("Rules({}): socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP) = %v, want allowed", got)
	}
	if got := decide(Rules(Options{RestrictNetwork: true}), "socket", mptcp); !slices.Equal(got, []Errno{EPROTONOSUPPORT}) {
		t.Errorf("Rules(restricted): socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP) = %v, want [EPROTONOSUPPORT]", got)
	}
}

func TestUnixSockets(t *testing.T) {
	const (
		stream, dgram, raw, seqpacket = 1, 2, 3, 5
		flags                         = 0x80800 // SOCK_CLOEXEC|SOCK_NONBLOCK
	)
	for _, c := range []struct {
		syscall string
		args    [6]uint64
		denied  bool // without AllowUnixSockets; with it, all are allowed
	}{
		{"socket", [6]uint64{afUnix, stream}, true},
		{"socket", [6]uint64{afUnix, dgram | flags}, true},
		{"socket", [6]uint64{0xffffffff_00000000 | afUnix, stream}, true},
		{"socket", [6]uint64{afInet, stream}, false},
		{"socketpair", [6]uint64{afUnix, stream}, false},
		{"socketpair", [6]uint64{afUnix, stream | flags}, false},
		{"socketpair", [6]uint64{afUnix, seqpacket | flags}, false},
		{"socketpair", [6]uint64{afUnix, dgram}, true},
		{"socketpair", [6]uint64{afUnix, dgram | flags}, true},
		{"socketpair", [6]uint64{afUnix, raw}, true}, // AF_UNIX makes SOCK_RAW a datagram socket
	} {
		if got := decide(Rules(Options{}), c.syscall, c.args) != nil; got != c.denied {
			t.Errorf("Rules({}): %s%#x denied = %v, want %v", c.syscall, c.args[:2], got, c.denied)
		}
		if got := decide(Rules(Options{AllowUnixSockets: true}), c.syscall, c.args); got != nil && c.args[0] == afUnix {
			t.Errorf("Rules(AllowUnixSockets): %s%#x = %v, want allowed", c.syscall, c.args[:2], got)
		}
	}
}

func TestSetidModes(t *testing.T) {
	const (
		setuid, setgid, sticky = 0o4000, 0o2000, 0o1000
		oRDWR, oTrunc          = 0o2, 0o1000
		oTmpfileAMD64          = 0o20200000 // __O_TMPFILE|O_DIRECTORY
		high                   = 0xdeadbeef_00000000
	)
	rules := Rules(Options{})
	for _, c := range []struct {
		syscall string
		args    [6]uint64
		denied  bool
	}{
		{"chmod", [6]uint64{0, 0o4755}, true},
		{"chmod", [6]uint64{0, 0o2755}, true},
		{"chmod", [6]uint64{0, high | 0o6755}, true},
		{"chmod", [6]uint64{0, 0o755}, false},
		{"chmod", [6]uint64{0, sticky | 0o777}, false},
		{"chmod", [6]uint64{0, high | 0o755}, false},
		{"fchmod", [6]uint64{3, setuid}, true},
		{"fchmod", [6]uint64{3, 0o644}, false},
		{"fchmodat", [6]uint64{3, 0, setgid | 0o750}, true},
		{"fchmodat", [6]uint64{3, 0, 0o750, setuid}, false}, // the flags are not the mode
		{"fchmodat2", [6]uint64{3, 0, setuid | 0o755, 0x1000}, true},
		{"fchmodat2", [6]uint64{3, 0, 0o755, 0x1000}, false},
		{"mknod", [6]uint64{0, 0o100000 | setuid | 0o755}, true},
		{"mknod", [6]uint64{0, 0o10000 | 0o644}, false}, // mkfifo
		{"mknodat", [6]uint64{3, 0, 0o100000 | setgid | 0o755}, true},
		{"mknodat", [6]uint64{3, 0, 0o10000 | 0o644}, false},
		{"creat", [6]uint64{0, setuid | 0o755}, true},
		{"creat", [6]uint64{0, 0o644}, false},
		{"open", [6]uint64{0, oCreatRW(), setuid | 0o755}, true},
		{"open", [6]uint64{0, oCreatRW(), 0o644}, false},
		{"open", [6]uint64{0, oRDWR | oTrunc, setuid | 0o755}, false}, // no O_CREAT: the kernel ignores the mode
		{"openat", [6]uint64{3, 0, oCreatRW(), setgid | 0o755}, true},
		{"openat", [6]uint64{3, 0, oTmpfileAMD64 | oRDWR, setuid | 0o700}, true},
		{"openat", [6]uint64{3, 0, oTmpfileAMD64 | oRDWR, 0o600}, false},
		{"openat", [6]uint64{3, 0, oCreatRW(), high | 0o644}, false},
		{"openat", [6]uint64{3, 0, oRDWR, setuid}, false},
		{"mkdir", [6]uint64{0, setgid | 0o755}, false},      // the kernel drops the bits
		{"mkdirat", [6]uint64{3, 0, setuid | 0o755}, false}, // the kernel drops the bits
	} {
		if got := decide(rules, c.syscall, c.args) != nil; got != c.denied {
			t.Errorf("Rules({}): %s%#o denied = %v, want %v", c.syscall, c.args[:4], got, c.denied)
		}
	}
	if got := decide(rules, "openat2", [6]uint64{3, 0, 0, 24}); !slices.Equal(got, []Errno{ENOSYS}) {
		t.Errorf("Rules({}): openat2 = %v, want [ENOSYS]", got)
	}
}

func oCreatRW() uint64 { return openCreat | 0o2 }

func TestSocketFamilies(t *testing.T) {
	rules := Rules(Options{AllowUnixSockets: true})
	for f := uint64(0); f < 300; f++ {
		for _, garbage := range []uint64{0, 0xdeadbeef_00000000} {
			allowed := garbage == 0 && (f == 0 || f == afUnix || f == afInet || f == afInet6 || f == afNetlink)
			if denied := decide(rules, "socket", [6]uint64{garbage | f, 1}) != nil; denied == allowed {
				t.Errorf("socket(%#x, SOCK_STREAM) denied = %v, want %v", garbage|f, denied, !allowed)
			}
		}
	}
}

func TestPersonality(t *testing.T) {
	if rotl := personalityKeep<<1 | personalityKeep>>31; personalityKeep&rotl&0xffffffff != 0 {
		t.Fatalf("personalityKeep %#x has neighbouring bits; personalityRules needs them apart", personalityKeep)
	}
	rules := personalityRules()
	allowed := func(v uint64) bool {
		lo := uint32(v)
		return lo == personalityQuery || lo&^personalityKeep == 0
	}
	check := func(v uint64) {
		t.Helper()
		denied := decide(rules, "personality", [6]uint64{v}) != nil
		if denied == allowed(v) {
			t.Errorf("personality(%#x) denied = %v, want %v", v, denied, !allowed(v))
		}
	}
	for _, v := range []uint64{
		personalityQuery, 0, 0x0008, 0x0020000, 0x0020008, // allowed
		0xffffffff_ffffffff, 0xdeadbeef_00000008, // allowed: the kernel reads only the low half
		0x0040000, 0x0400000, 0x0100000, 0x0200000, 0x0800000, 0x8000000, // ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...
		0x0040008, 0xfffffffe, 0x7fffffff, 0x1, 0x4, 0x0f, 0x10, 0xdeadbeef_00040000,
	} {
		check(v)
	}
	for b := range 32 {
		check(1 << b)
		check(0xffffffff &^ (1 << b))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		check(rng.Uint64())
		check(rng.Uint64() & 0x0020008)
	}
}
