package seccomp

import (
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

func TestRulesOptionsOnlyAddMPTCP(t *testing.T) {
	open, restricted := Rules(Options{}), Rules(Options{RestrictNetwork: true})
	if len(restricted) != len(open)+1 {
		t.Fatalf("len(Rules(restricted)) = %d, want %d", len(restricted), len(open)+1)
	}
	extra := restricted[len(restricted)-1]
	if extra.Syscall != "socket" || extra.Label != "socket(IPPROTO_MPTCP)" || extra.Errno != EPROTONOSUPPORT {
		t.Errorf("extra rule with RestrictNetwork = %+v, want socket(IPPROTO_MPTCP) -> EPROTONOSUPPORT", extra)
	}
	mptcp := [6]uint64{afInet, 1 /* SOCK_STREAM */, 262}
	if got := decide(open, "socket", mptcp); got != nil {
		t.Errorf("Rules({}): socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP) = %v, want allowed", got)
	}
}

func TestSocketFamilies(t *testing.T) {
	rules := Rules(Options{})
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
