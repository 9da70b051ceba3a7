//go:build linux && cgo

package seccomp

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func vmOf(t *testing.T, prog []byte) *filterVM {
	t.Helper()
	ins := instructions(t, &Program{BPF: prog})
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("bpf.NewVM: %v", err)
	}
	return &filterVM{vm: vm, ins: ins}
}

// TestNotifyAgreesWithPlain compiles with attribution and compares three
// programs call by call: BPF must answer exactly as the filter without
// attribution does; Notify must send to the supervisor every call that
// BPF refuses with a non-fallback errno and every watched call, and
// nothing else; and Decide must give back BPF's errno for the refusals
// and let the watched calls continue.
func TestNotifyAgreesWithPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	arch := nativeArch(t)
	for _, base := range []Options{{RestrictNetwork: true}, {AllowUnixSockets: true}} {
		o := base
		o.Attribute, o.ObserveNetwork = true, true
		p, err := Compile(o)
		if err != nil {
			t.Fatalf("Compile(%+v): %v", o, err)
		}
		if p.Notify == nil {
			t.Fatalf("Compile(%+v).Notify is nil", o)
		}
		_, want := compileVM(t, base)
		plain, notify := vmOf(t, p.BPF), vmOf(t, p.Notify)
		connect, sendto := sysnr(t, "connect"), sysnr(t, "sendto")
		checked, notified := 0, 0
		for nr := uint32(0); nr < 1024; nr++ {
			var argSets [][6]uint64
			for _, r := range Rules(base) {
				if n, ok, _ := syscallNumber(r.Syscall); ok && uint32(n) == nr {
					for _, c := range r.Conds {
						for _, v := range []uint64{c.Value, c.Value - 1, c.Value + 1, c.Value | ^c.Mask, 0} {
							var args [6]uint64
							args[c.Arg] = v
							argSets = append(argSets, args)
						}
					}
				}
			}
			for range 12 {
				var args [6]uint64
				for i := range args {
					args[i] = rng.Uint64() >> (rng.IntN(4) * 16)
				}
				argSets = append(argSets, args, [6]uint64{args[0], args[1], args[2], args[3], 0, args[5]})
			}
			for _, args := range argSets {
				c := call{arch: arch, nr: nr, args: args}
				w, got, n := want.run(t, c), plain.run(t, c), notify.run(t, c)
				checked++
				if got != w {
					t.Fatalf("%+v: BPF with attribution = %s, without = %s", c, retString(got), retString(w))
				}
				watched := nr == connect || (nr == sendto && args[4] != 0)
				refused := w&0xffff0000 == retErrno && !fallbackErrno(base, nr, args)
				if !watched && !refused {
					if n != w {
						t.Fatalf("%+v: Notify = %s, want %s like BPF", c, retString(n), retString(w))
					}
					continue
				}
				notified++
				if n != unix.SECCOMP_RET_USER_NOTIF {
					t.Fatalf("%+v: Notify = %s, want USER_NOTIF", c, retString(n))
				}
				v := p.Decide(arch, nr, args)
				switch {
				case watched && v.Refused:
					t.Fatalf("Decide(%+v) = %+v, want it to continue", c, v)
				case refused && (!v.Refused || retOf(v.Errno) != w):
					t.Fatalf("Decide(%+v) = %+v, want %s", c, v, retString(w))
				}
			}
		}
		t.Logf("%+v: %d calls, %d notified", o, checked, notified)
	}
}

// fallbackErrno reports whether the errno BPF answers for this call comes
// from a Fallback rule.
func fallbackErrno(o Options, nr uint32, args [6]uint64) bool {
	for _, r := range Rules(o) {
		if n, ok, _ := syscallNumber(r.Syscall); ok && uint32(n) == nr && r.Matches(args) && !r.Fallback {
			return false
		}
	}
	return true
}

func TestDecideFailsClosed(t *testing.T) {
	p, err := Compile(Options{RestrictNetwork: true, Attribute: true, ObserveNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	arch := nativeArch(t)
	for _, c := range []struct {
		name     string
		arch, nr uint32
	}{
		{"another architecture", unix.AUDIT_ARCH_I386, sysnr(t, "connect")},
		{"a number Notify never sends", arch, sysnr(t, "getpid")},
	} {
		if v := p.Decide(c.arch, c.nr, [6]uint64{}); !v.Refused || v.Errno != EPERM {
			t.Errorf("Decide(%s) = %+v, want refused with EPERM", c.name, v)
		}
	}
	if v := p.Decide(arch, sysnr(t, "mount"), [6]uint64{}); !v.Refused || v.Errno != EPERM || v.Syscall != "mount" {
		t.Errorf("Decide(mount) = %+v, want mount refused with EPERM", v)
	}
}

func TestNotifyOnlyWithAttribute(t *testing.T) {
	p, err := Compile(Options{RestrictNetwork: true, ObserveNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Notify != nil {
		t.Errorf("Compile without Attribute built a Notify program")
	}
}
