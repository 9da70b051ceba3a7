package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The seccomp filter refuses what could reach past the sandbox: debugging
// other processes, new namespaces, kernel modules and io_uring, BPF,
// keyrings, packet sockets, MPTCP (which Landlock's TCP rules miss) and
// terminal injection, each with EPERM. clone3 answers ENOSYS so that libc
// falls back to clone, whose flags the filter can see.
func TestSeccompRefusesEscapes(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ops := []string{
			"ptrace-parent", "process-vm-readv", "unshare-user", "unshare-mount", "clone-newuser", "setns",
			"io-uring-setup", "bpf", "perf-event-open", "keyctl", "add-key", "init-module", "finit-module",
			"kexec-load", "userfaultfd", "socket packet", "socket vsock", "personality",
			"tiocsti-high", "mount-tmpfs /tmp",
		}
		vs := e.probe([]string{"--pty"}, ops...)
		blocked(t, vs, "EPERM")
		blocked(t, e.probe(nil, "clone3"), "ENOSYS")
		// MPTCP gets the answer of a kernel without it, so programs fall
		// back to plain TCP, which Landlock sees.
		blocked(t, e.probe(nil, "socket inet mptcp"), "EPROTONOSUPPORT")
		// Unix sockets only with the opt-in (TestLateHostSocketUnreachable).
		blocked(t, e.probe(nil, "socket unix"), "EPERM")
		// The control: what the filter must leave alone.
		allowed(t, e.probe([]string{"--net", "host"}, "socket inet"))
		allowed(t, e.probe([]string{"--allow-unix-sockets"}, "socket unix"))
	})
}

// The command starts with every capability set empty and no_new_privs, as
// root too, and under the filter.
func TestNoCapabilities(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		out := e.probeOut(nil, "caps")
		for _, want := range []string{"CapInh: 0000000000000000", "CapPrm: 0000000000000000", "CapEff: 0000000000000000",
			"CapBnd: 0000000000000000", "CapAmb: 0000000000000000", "NoNewPrivs: 1", "Seccomp: 2"} {
			if !strings.Contains(out, want) {
				t.Errorf("probe caps = %q; want %q", out, want)
			}
		}
		if !e.m.root() {
			// uid 0 is not even mapped in the caller's namespace
			blocked(t, e.probe(nil, "setuid-root"), "EPERM", "EINVAL")
		}
	})
}

// A setuid-root program run inside gains nothing: no_new_privs and the user
// namespace keep the caller's ids.
func TestSetuidBinaryGainsNothing(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a setuid-root binary needs root")
	}
	dir, err := os.MkdirTemp("", "forgebox-setuid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	id := filepath.Join(dir, "id")
	b, err := os.ReadFile("/usr/bin/id")
	if err != nil {
		t.Skipf("no /usr/bin/id to copy: %v", err)
	}
	if err := os.WriteFile(id, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(id, 0o4755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(id, "-u").Output(); err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("the control: %s -u = %q, %v", id, out, err)
	}
	for _, m := range modes(t) {
		if m.root() {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, m)
			out := e.probeOut([]string{"--ro", dir}, "exec "+id+" -u")
			if out != strconv.Itoa(m.uid) {
				t.Errorf("setuid-root id -u inside = %q; want the caller's uid %d", out, m.uid)
			}
		})
	}
}

// The JSON names the kernel layers really applied: Landlock at the
// kernel's ABI (without TCP rules, which only --net allow has), the
// seccomp filter, no_new_privs and no capabilities.
func TestKernelLayersReported(t *testing.T) {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1)
	if errno != 0 {
		t.Skipf("no Landlock on this kernel: %v", syscall.Errno(errno))
	}
	forEachMode(t, func(t *testing.T, e *env) {
		_, res := e.runJSON([]string{"--", "true"})
		en := res.Enforced
		if en == nil {
			t.Fatal("no enforced object")
		}
		if en.LandlockABI != min(int(abi), 11) || en.LandlockTCP || (abi >= 6) != en.LandlockScoped {
			t.Errorf("enforced landlock = abi %d tcp %v scoped %v; kernel ABI %d", en.LandlockABI, en.LandlockTCP, en.LandlockScoped, abi)
		}
		if !en.Seccomp || len(en.SeccompDenied) < 30 || !en.NoNewPrivs || en.Capabilities != "none" {
			t.Errorf("enforced = seccomp %v (%d denied), no_new_privs %v, capabilities %q", en.Seccomp, len(en.SeccompDenied), en.NoNewPrivs, en.Capabilities)
		}
	})
}
