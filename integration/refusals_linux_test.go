package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// refusal is one entry of the result's "refusals".
type refusal struct {
	Layer  string `json:"layer"`
	Op     string `json:"op"`
	Target string `json:"target"`
	Rule   string `json:"rule"`
	Errno  string `json:"errno"`
	Count  int    `json:"count"`
}

type refusalsResult struct {
	Refusals        []refusal `json:"refusals"`
	RefusalsOmitted int       `json:"refusals_omitted"`
	Attribution     bool      `json:"attribution"`
	Stdout          string    `json:"stdout"`
}

// refusalOps are attempts each layer refuses, and the refusal the sandbox
// must observe for each (nil: none). Every errno is what the command got
// before attribution existed.
var refusalOps = []struct {
	op    string
	errno []string // the verdict's errno; empty: any failure
	want  *refusal
}{
	{"connect-tcp 192.0.2.1:443", []string{"EACCES", "ENETUNREACH"}, &refusal{Layer: "network", Op: "connect", Target: "192.0.2.1:443"}},
	{"resolve forgebox.example 192.0.2.53:53", nil, &refusal{Layer: "network", Op: "connect", Target: "192.0.2.53:53"}},
	{"unshare-user", []string{"EPERM"}, &refusal{Layer: "seccomp", Op: "unshare", Rule: "unshare", Errno: "EPERM"}},
	{"mount-tmpfs /mnt", []string{"EPERM"}, &refusal{Layer: "seccomp", Op: "mount", Rule: "mount", Errno: "EPERM"}},
	// Fallbacks stay the kernel's answer, unreported.
	{"clone3", []string{"ENOSYS"}, nil},
	{"socket inet mptcp", []string{"EPROTONOSUPPORT"}, nil},
}

func (e *env) refusalsRun(args ...string) (result, refusalsResult, []verdict) {
	e.t.Helper()
	r := e.run(args)
	var out refusalsResult
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("forgebox %q: %v\nstdout: %s\nstderr: %s", args, err, r.stdout, r.stderr)
	}
	return r, out, decodeVerdicts(e.t, out.Stdout)
}

func probeArgs(ops ...string) []string {
	return append([]string{"run", "--json", "--ro", binDir, "--", probe}, ops...)
}

func (res refusalsResult) has(want refusal) bool {
	return slices.ContainsFunc(res.Refusals, func(r refusal) bool {
		r.Count = 0
		return r == want
	})
}

// Under the default --net none the sandbox observes what it refuses and
// says so as data: the destination a connection or a DNS query could not
// reach, the syscall its filter refused. The attempts fail exactly as they
// did before.
func TestRefusalsObserved(t *testing.T) {
	var ops []string
	for _, o := range refusalOps {
		ops = append(ops, o.op)
	}
	forEachMode(t, func(t *testing.T, e *env) {
		_, res, vs := e.refusalsRun(probeArgs(ops...)...)
		if len(vs) != len(ops) {
			t.Fatalf("probe gave %d verdicts for %d ops", len(vs), len(ops))
		}
		if !res.Attribution {
			t.Fatalf("attribution is off on a kernel that supports it (refusals %+v)", res.Refusals)
		}
		for i, o := range refusalOps {
			blocked(t, vs[i:i+1], o.errno...)
			if o.want != nil && !res.has(*o.want) {
				t.Errorf("%s: refusals %+v lack %+v", o.op, res.Refusals, *o.want)
			}
		}
		for _, r := range res.Refusals {
			if r.Count < 1 || (r.Layer == "seccomp" && (r.Op == "clone3" || r.Op == "socket" && r.Rule == "socket(IPPROTO_MPTCP)")) {
				t.Errorf("refusal %+v: want a count, and no fallback reported", r)
			}
		}
	})
}

// A DNS lookup through the host's resolver configuration is reported with
// the nameserver it could not reach.
func TestRefusalsDNS(t *testing.T) {
	ns := nameservers(t)
	if len(ns) == 0 {
		t.Skip("no non-loopback nameserver in /etc/resolv.conf: a lookup would stay on the sandbox's loopback")
	}
	forEachMode(t, func(t *testing.T, e *env) {
		_, res, vs := e.refusalsRun(probeArgs("resolve forgebox.example")...)
		blocked(t, vs)
		want := refusal{Layer: "network", Op: "connect", Target: netip.AddrPortFrom(ns[0], 53).String()}
		if !res.has(want) {
			t.Errorf("refusals %+v lack %+v", res.Refusals, want)
		}
	})
}

func nameservers(t *testing.T) []netip.Addr {
	t.Helper()
	f, err := os.Open("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []netip.Addr
	for s := bufio.NewScanner(f); s.Scan(); {
		w := strings.Fields(s.Text())
		if len(w) == 2 && w[0] == "nameserver" {
			if a, err := netip.ParseAddr(w[1]); err == nil && !a.IsLoopback() {
				out = append(out, a)
			}
		}
	}
	return out
}

// --net host reaches everything: no connection is reported, while the
// filter's refusals still are.
func TestRefusalsHostNetwork(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		_, res, _ := e.refusalsRun(append([]string{"run", "--json", "--net", "host", "--ro", binDir, "--", probe},
			"connect-tcp 192.0.2.1:9", "unshare-user")...)
		for _, r := range res.Refusals {
			if r.Layer == "network" {
				t.Errorf("--net host reported %+v", r)
			}
		}
		if !res.has(refusal{Layer: "seccomp", Op: "unshare", Rule: "unshare", Errno: "EPERM"}) {
			t.Errorf("refusals %+v lack unshare", res.Refusals)
		}
	})
}

// Whoever started forgebox may already hold a seccomp listener on it (a
// container runtime, a supervisor): the kernel then refuses the sandbox a
// listener of its own (EBUSY). The run goes ahead unobserved, with
// attribution off, and every attempt fails with the same errno as when
// observed.
func TestRefusalsWithoutListener(t *testing.T) {
	var ops []string
	for _, o := range refusalOps {
		ops = append(ops, o.op)
	}
	e := newEnv(t, mode{name: "self", uid: os.Getuid(), gid: os.Getgid()})
	_, observed, want := e.refusalsRun(probeArgs(ops...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := e.command(ctx, os.Args[0], append([]string{forgebox}, probeArgs(ops...)...)...)
	cmd.Env = append(cmd.Env, "FORGEBOX_TEST_HELPER=listener-above")
	e.skipJudge(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("forgebox under a seccomp listener: %v\n%s", err, out)
	}
	var res refusalsResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := decodeVerdicts(t, res.Stdout)
	if res.Attribution || len(res.Refusals) != 0 {
		t.Errorf("under a listener: attribution %v, refusals %+v; want off and none", res.Attribution, res.Refusals)
	}
	if !observed.Attribution {
		t.Errorf("without a listener above, attribution is off")
	}
	if len(got) != len(want) {
		t.Fatalf("%d verdicts, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].OK != want[i].OK || got[i].Errno != want[i].Errno {
			t.Errorf("%s: unobserved %s, observed %s; want the same", want[i].call(), got[i].outcome(), want[i].outcome())
		}
	}
}

// listenerAboveHelper loads a seccomp filter with a listener, keeps the
// listener open across exec, and executes argv[1:]: forgebox then runs
// under a listener it does not own. The filter notifies only uselib, which
// nothing calls.
func listenerAboveHelper() int {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		println("no_new_privs:", err.Error())
		return 1
	}
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_USELIB},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		println("seccomp:", errno.Error())
		return 1
	}
	// Kept open (no close-on-exec): a closed listener no longer counts.
	if _, err := unix.FcntlInt(fd, unix.F_SETFD, 0); err != nil {
		println("fcntl:", err.Error())
		return 1
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	println("exec:", err.Error())
	return 1
}

// Every way of starting the child loads the same filter: re-executed
// rather than preforked, and with --best-effort where namespaces are
// refused (the command then has the host's network, so no connection is
// unreachable, but the filter's refusals are still observed).
func TestRefusalsEveryStart(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		t.Run("no prefork", func(t *testing.T) {
			e.t = t
			e.extra = append(e.extra, "FORGEBOX_NO_PREFORK=1")
			_, res, _ := e.refusalsRun(probeArgs("connect-tcp 192.0.2.1:443", "unshare-user")...)
			e.extra = nil
			for _, want := range []refusal{{Layer: "network", Op: "connect", Target: "192.0.2.1:443"},
				{Layer: "seccomp", Op: "unshare", Rule: "unshare", Errno: "EPERM"}} {
				if !res.has(want) {
					t.Errorf("refusals %+v lack %+v", res.Refusals, want)
				}
			}
		})
		t.Run("best effort without namespaces", func(t *testing.T) {
			e.t = t
			if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
				t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
			}
			r := e.withoutUserNamespaces(forgebox, "run", "--best-effort", "--json", "--", probe, "unshare-user", "connect-tcp 192.0.2.1:9")
			var res refusalsResult
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("%v\nstdout: %s\nstderr: %s", err, r.stdout, r.stderr)
			}
			if !res.has(refusal{Layer: "seccomp", Op: "unshare", Rule: "unshare", Errno: "EPERM"}) {
				t.Errorf("refusals %+v lack unshare", res.Refusals)
			}
			for _, r := range res.Refusals {
				if r.Layer == "network" {
					t.Errorf("the host's network reported %+v", r)
				}
			}
		})
	})
}

// Under --net allow the proxy is the way out: a connection to it is not a
// refusal, a direct one anywhere else is.
func TestRefusalsNetAllow(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		_, res, vs := e.refusalsRun("run", "--json", "--net", "allow=forgebox.invalid", "--ro", binDir, "--", probe,
			"connect-tcp 192.0.2.1:443", "connect-tcp 127.0.0.1:3128")
		if len(vs) != 2 {
			t.Fatalf("%d verdicts, want 2", len(vs))
		}
		blocked(t, vs[:1])
		allowed(t, vs[1:])
		if !res.has(refusal{Layer: "network", Op: "connect", Target: "192.0.2.1:443"}) {
			t.Errorf("refusals %+v lack the direct connection", res.Refusals)
		}
		for _, r := range res.Refusals {
			if r.Target == "127.0.0.1:3128" {
				t.Errorf("the proxy's address reported as refused: %+v", r)
			}
		}
	})
}
