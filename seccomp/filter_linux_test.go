//go:build linux && cgo

package seccomp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Return values of a seccomp filter (include/uapi/linux/seccomp.h).
const (
	retKillProcess = 0x80000000
)

func retOf(e Errno) uint32 { return retErrno | uint32(e) }

func retString(r uint32) string {
	switch {
	case r == retAllow:
		return "ALLOW"
	case r == retKillProcess:
		return "KILL_PROCESS"
	case r&0xffff0000 == retErrno:
		return "ERRNO(" + Errno(r&0xffff).String() + ")"
	}
	return fmt.Sprintf("%#x", r)
}

// call is what the kernel hands a filter: struct seccomp_data.
type call struct {
	arch uint32
	nr   uint32 // the kernel's int nr, as the filter loads it
	args [6]uint64
}

// vmInput lays out struct seccomp_data { int nr; __u32 arch;
// __u64 instruction_pointer; __u64 args[6]; } as the kernel holds it on this
// machine, then stores each 32-bit word big-endian: the kernel's BPF loads
// words in native order, x/net/bpf's VM loads them big-endian, so the VM sees
// the values the kernel's filter would see. A 64-bit argument is two such
// words; on a little-endian machine its low half comes first, at 16+8*i.
func vmInput(c call) []byte {
	b := make([]byte, 64)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], c.nr)
	ne.PutUint32(b[4:], c.arch)
	ne.PutUint64(b[8:], 0x00007fff_12345678) // instruction_pointer
	for i, a := range c.args {
		ne.PutUint64(b[16+8*i:], a)
	}
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], ne.Uint32(b[i:]))
	}
	return b
}

func TestVMInputLayout(t *testing.T) {
	in := vmInput(call{nr: 1, arch: 2, args: [6]uint64{0x33333333_44444444}})
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("layout checked for little-endian amd64 and arm64, not %s", runtime.GOARCH)
	}
	want := []byte{0, 0, 0, 1, 0, 0, 0, 2}
	want = append(want, 0x12, 0x34, 0x56, 0x78, 0, 0, 0x7f, 0xff)
	want = append(want, 0x44, 0x44, 0x44, 0x44, 0x33, 0x33, 0x33, 0x33) // args[0]: low word, then high
	if !bytes.Equal(in[:24], want) {
		t.Errorf("vmInput()[:24] = % x, want % x", in[:24], want)
	}
}

func instructions(t testing.TB, p *Program) []bpf.Instruction {
	t.Helper()
	raw := make([]bpf.RawInstruction, p.Len())
	for i := range raw {
		b := p.BPF[8*i:]
		raw[i] = bpf.RawInstruction{
			Op: binary.NativeEndian.Uint16(b[0:]),
			Jt: b[2],
			Jf: b[3],
			K:  binary.NativeEndian.Uint32(b[4:]),
		}
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("bpf.Disassemble: some of the %d instructions did not decode", len(raw))
	}
	return ins
}

type filterVM struct {
	vm  *bpf.VM
	ins []bpf.Instruction
}

func compileVM(t testing.TB, o Options) (*Program, *filterVM) {
	t.Helper()
	p, err := Compile(o)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", o, err)
	}
	ins := instructions(t, p)
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("bpf.NewVM: %v", err)
	}
	return p, &filterVM{vm: vm, ins: ins}
}

func (f *filterVM) run(t testing.TB, c call) uint32 {
	t.Helper()
	ret, err := f.vm.Run(vmInput(c))
	if err != nil {
		t.Fatalf("VM run on %+v: %v", c, err)
	}
	return uint32(ret)
}

func nativeArch(t testing.TB) uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	t.Skipf("no audit arch known for %s", runtime.GOARCH)
	return 0
}

func sysnr(t testing.TB, name string) uint32 {
	t.Helper()
	nr, ok, err := syscallNumber(name)
	if err != nil || !ok {
		t.Fatalf("syscallNumber(%q) = %d, %v, %v", name, nr, ok, err)
	}
	return uint32(nr)
}

func TestFilter(t *testing.T) {
	const (
		sigchld     = 17
		cloneThread = 0x3d0f00 // CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
		cloneVfork  = 0x4100   // CLONE_VM|CLONE_VFORK
		garbage     = 0xdeadbeef_00000000
		sockStream  = 1
		sockRaw     = 3
		mptcp       = 262
		afPacket    = 17
		afVsock     = 40
	)
	eperm, enosys, eproto := retOf(EPERM), retOf(ENOSYS), retOf(EPROTONOSUPPORT)
	type tc struct {
		name    string
		syscall string
		args    [6]uint64
		want    uint32 // without and with RestrictNetwork
		wantNet uint32
	}
	same := func(name, syscall string, want uint32, args ...uint64) tc {
		c := tc{name: name, syscall: syscall, want: want, wantNet: want}
		copy(c.args[:], args)
		return c
	}
	var tcs []tc
	for _, s := range mustDeny {
		tcs = append(tcs, same(s, s, eperm), same(s+" with garbage", s, eperm, garbage|1, garbage|2, 3, 4, 5, 6))
	}
	tcs = append(tcs,
		same("clone3", "clone3", enosys),
		same("clone3 with a size", "clone3", enosys, 0x7fff0000, 88),
		same("clone fork", "clone", retAllow, sigchld),
		same("clone thread", "clone", retAllow, cloneThread),
		same("clone vfork", "clone", retAllow, cloneVfork|sigchld),
		same("clone thread with garbage above", "clone", retAllow, garbage|cloneThread),
		same("ioctl TIOCSTI", "ioctl", eperm, 0, 0x5412),
		same("ioctl TIOCSTI with garbage above", "ioctl", eperm, 0, 0xdeadbeef_00005412),
		same("ioctl TIOCLINUX", "ioctl", eperm, 0, 0x541c),
		same("ioctl TIOCSETD", "ioctl", eperm, 0, 0x5423),
		same("ioctl TIOCGWINSZ", "ioctl", retAllow, 1, 0x5413),
		same("ioctl TCGETS", "ioctl", retAllow, 0, 0x5401),
		same("ioctl FIONREAD", "ioctl", retAllow, 3, 0x541b),
		same("socket AF_PACKET", "socket", eperm, afPacket, sockRaw),
		same("socket AF_VSOCK", "socket", eperm, afVsock, sockStream),
		same("socket AF_PACKET with garbage above", "socket", eperm, garbage|afPacket, sockRaw),
		same("socket AF_ALG", "socket", eperm, 38, 5),
		same("socket AF_KEY", "socket", eperm, 15, sockRaw),
		same("socket AF_APPLETALK", "socket", eperm, 5, 2),
		same("socket negative family", "socket", eperm, 0xffffffff_ffffffff, sockStream),
		same("socket AF_UNIX", "socket", eperm, afUnix, sockStream),
		same("socketpair AF_UNIX stream", "socketpair", retAllow, afUnix, sockStream|0x80000),
		same("socketpair AF_UNIX dgram", "socketpair", eperm, afUnix, 2|0x80000),
		same("chmod 04755", "chmod", eperm, 0, 0o4755),
		same("chmod 02755 with garbage above", "chmod", eperm, 0, garbage|0o2755),
		same("chmod 0755", "chmod", retAllow, 0, 0o755),
		same("fchmodat2 04755", "fchmodat2", eperm, 3, 0, 0o4755),
		same("openat O_CREAT 04755", "openat", eperm, 3, 0, 0o101, 0o4755),
		same("openat O_RDONLY 04755 (no mode read)", "openat", retAllow, 3, 0, 0, 0o4755),
		same("openat2", "openat2", enosys, 3, 0, 0, 24),
		same("socket AF_INET", "socket", retAllow, afInet, sockStream),
		same("socket AF_INET6", "socket", retAllow, afInet6, 2),
		same("socket AF_NETLINK", "socket", retAllow, afNetlink, sockRaw),
		same("socket AF_INET with garbage above fails closed", "socket", eperm, garbage|afInet, sockStream),
		tc{name: "socket AF_INET MPTCP", syscall: "socket", args: [6]uint64{afInet, sockStream, mptcp}, want: retAllow, wantNet: eproto},
		tc{name: "socket AF_INET6 MPTCP", syscall: "socket", args: [6]uint64{afInet6, sockStream, mptcp}, want: retAllow, wantNet: eproto},
		tc{name: "socket MPTCP with garbage above", syscall: "socket", args: [6]uint64{afInet, sockStream, garbage | mptcp}, want: retAllow, wantNet: eproto},
		same("socket AF_INET TCP", "socket", retAllow, afInet, sockStream, 6),
		same("personality query", "personality", retAllow, 0xffffffff),
		same("personality query as long -1", "personality", retAllow, 0xffffffff_ffffffff),
		same("personality PER_LINUX", "personality", retAllow, 0),
		same("personality PER_LINUX32", "personality", retAllow, 8),
		same("personality UNAME26", "personality", retAllow, 0x20000),
		same("personality ADDR_NO_RANDOMIZE", "personality", eperm, 0x40000),
		same("personality READ_IMPLIES_EXEC", "personality", eperm, 0x400000),
		same("personality all but one bit", "personality", eperm, 0xfffffffe),
	)
	for _, s := range []string{"read", "write", "openat", "close", "execve", "getpid", "mmap", "futex",
		"exit_group", "wait4", "pidfd_open", "seccomp", "prctl", "landlock_create_ruleset",
		"name_to_handle_at", "kcmp", "chroot", "mknodat", "memfd_create"} {
		tcs = append(tcs, same(s, s, retAllow, 1, 2, 3))
	}

	for _, o := range []Options{{}, {RestrictNetwork: true}} {
		_, f := compileVM(t, o)
		arch := nativeArch(t)
		for _, c := range tcs {
			t.Run(fmt.Sprintf("%s/net=%v", c.name, o.RestrictNetwork), func(t *testing.T) {
				want := c.want
				if o.RestrictNetwork {
					want = c.wantNet
				}
				got := f.run(t, call{arch: arch, nr: sysnr(t, c.syscall), args: c.args})
				if got != want {
					t.Errorf("%s%#x = %s, want %s", c.syscall, c.args, retString(got), retString(want))
				}
			})
		}
	}
}

func TestFilterForeignABI(t *testing.T) {
	_, f := compileVM(t, Options{})
	native := nativeArch(t)
	type abiCase struct {
		name string
		c    call
		want uint32
	}
	cases := []abiCase{
		{"i386 getpid", call{arch: unix.AUDIT_ARCH_I386, nr: 20}, retKillProcess},
		{"i386 ptrace", call{arch: unix.AUDIT_ARCH_I386, nr: 26}, retKillProcess},
		{"arm getpid", call{arch: unix.AUDIT_ARCH_ARM, nr: 20}, retKillProcess},
		{"nr -1 (a tracer skipping the call)", call{arch: native, nr: 0xffffffff}, retAllow},
	}
	if runtime.GOARCH == "amd64" {
		const x32 = 0x40000000 // __X32_SYSCALL_BIT
		cases = append(cases,
			abiCase{"x32 getpid", call{arch: native, nr: x32 | 39}, retKillProcess},
			abiCase{"x32 ptrace", call{arch: native, nr: x32 | 521}, retKillProcess},
			abiCase{"x32 highest", call{arch: native, nr: 0x7fffffff}, retKillProcess},
		)
	}
	for _, c := range cases {
		if got := f.run(t, c.c); got != c.want {
			t.Errorf("%s: filter(%+v) = %s, want %s", c.name, c.c, retString(got), retString(c.want))
		}
	}
}

// TestFilterMatchesRules runs the program over every syscall number up to
// 1023 with arguments built from the rules' own comparisons and random ones,
// and compares each answer with the rules' Go meaning (decide).
func TestFilterMatchesRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	arch := nativeArch(t)
	for _, o := range []Options{{}, {RestrictNetwork: true}, {AllowUnixSockets: true}} {
		rules := Rules(o)
		_, f := compileVM(t, o)
		names := map[uint32]string{}
		interesting := map[string][][6]uint64{}
		for _, r := range rules {
			nr, ok, err := syscallNumber(r.Syscall)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			names[uint32(nr)] = r.Syscall
			for _, c := range r.Conds {
				for _, v := range []uint64{c.Value, c.Value - 1, c.Value + 1, c.Value | ^c.Mask, c.Value | 0xffffffff_00000000, 0} {
					var args [6]uint64
					args[c.Arg] = v
					interesting[r.Syscall] = append(interesting[r.Syscall], args)
				}
			}
		}
		checked := 0
		for nr := uint32(0); nr < 1024; nr++ {
			name, listed := names[nr]
			argSets := slices.Clone(interesting[name])
			for range 20 {
				var args [6]uint64
				for i := range args {
					args[i] = rng.Uint64() >> (rng.IntN(4) * 16) // small numbers too
				}
				argSets = append(argSets, args)
			}
			for _, args := range argSets {
				got := f.run(t, call{arch: arch, nr: nr, args: args})
				var errnos []Errno
				if listed {
					errnos = decide(rules, name, args)
				}
				checked++
				switch {
				case errnos == nil && got != retAllow:
					t.Errorf("net=%v: syscall %d (%s)%#x = %s, want ALLOW", o.RestrictNetwork, nr, name, args, retString(got))
				case errnos != nil && !slices.ContainsFunc(errnos, func(e Errno) bool { return retOf(e) == got }):
					t.Errorf("net=%v: syscall %d (%s)%#x = %s, want ERRNO of %v", o.RestrictNetwork, nr, name, args, retString(got), errnos)
				}
			}
		}
		t.Logf("net=%v: %d calls agree with the rules", o.RestrictNetwork, checked)
	}
}

func TestCompileDenied(t *testing.T) {
	for _, o := range []Options{{}, {RestrictNetwork: true}, {AllowUnixSockets: true}} {
		p, err := Compile(o)
		if err != nil {
			t.Fatalf("Compile(%+v): %v", o, err)
		}
		var want []string
		for _, r := range Rules(o) {
			if _, ok, _ := syscallNumber(r.Syscall); ok {
				want = append(want, r.Label)
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(p.Denied, want) {
			t.Errorf("Compile(%+v).Denied = %q, want %q", o, p.Denied, want)
		}
		again, err := Compile(o)
		if err != nil || !bytes.Equal(again.BPF, p.BPF) {
			t.Errorf("Compile(%+v) twice: programs differ (err %v)", o, err)
		}
		t.Logf("Compile(%+v): %d instructions, %d denied entries", o, p.Len(), len(p.Denied))
	}
}

func BenchmarkCompile(b *testing.B) {
	for _, o := range []Options{{}, {RestrictNetwork: true}} {
		b.Run(fmt.Sprintf("net=%v", o.RestrictNetwork), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile(o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
