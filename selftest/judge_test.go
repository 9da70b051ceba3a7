package selftest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgebox/forgebox/cgroup"
	"github.com/forgebox/forgebox/probe"
	"github.com/forgebox/forgebox/sandbox"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fakeTarget is bait as a test imagines it.
var fakeTarget = target{root: "/home/u/.cache/forgebox-selftest-1", ws: "/home/u/.cache/forgebox-selftest-1/ws",
	token: "forgebox-selftest-secret-0123", tcp: "127.0.0.1:40000", abstract: "forgebox-selftest-abcd",
	hostPID: 4242, setuid: "/usr/bin/mount", setuidArgs: []string{"--version"}}

// fullyEnforced is what a run on a capable host enforces.
var fullyEnforced = sandbox.Enforced{Sandbox: true, Namespaces: []string{"user", "pid", "mount", "ipc", "uts", "net"},
	Network: sandbox.NetNone, Profile: sandbox.ProfileWorkspace, ReadOnlyRoot: true, LandlockABI: 7, LandlockRules: 30,
	LandlockTCP: true, LandlockScoped: true, Seccomp: true, NoNewPrivs: true, Capabilities: "none"}

// unisolated is what --best-effort keeps without namespaces.
var unisolated = sandbox.Enforced{Namespaces: []string{}, LandlockABI: 7, LandlockTCP: true, LandlockScoped: true,
	Seccomp: true, NoNewPrivs: true, Capabilities: "none",
	Missing: []string{"namespaces (unshare: no space left on device)", "read-only host filesystem", "hidden secrets and sockets"}}

// refusals are the errnos a sandbox answers with, where not EPERM.
var refusals = map[string]string{"write": "EROFS", "append": "EROFS", "unlink": "EROFS", "symlink": "EROFS",
	"chmod": "EROFS", "utime": "EROFS", "setxattr": "EROFS", "rename": "EBUSY", "readdir": "ENOENT",
	"connect-unix": "EACCES", "connect-abstract": "ECONNREFUSED", "connect-tcp": "EACCES", "kill": "ESRCH", "stat": "ENOENT"}

// refusedVerdict is how a sandbox answers an attempt: an errno, or for a
// read of a hidden file, an empty success.
func refusedVerdict(a attempt) *probe.Verdict {
	v := probe.Verdict{Op: a.op[0], Args: a.op[1:], Errno: cmp.Or(refusals[a.op[0]], "EPERM"), Err: "refused"}
	switch a.op[0] {
	case "read":
		v = probe.Verdict{Op: a.op[0], Args: a.op[1:], OK: true}
	case "exec-creds":
		v = probe.Verdict{Op: a.op[0], Args: a.op[1:], OK: true,
			Out: "caller=1000 uid=1000,1000,1000,1000 gid=1000,1000,1000,1000 cap_prm=0000000000000000 cap_eff=0000000000000000"}
	}
	return &v
}

// succeededVerdict is how an attempt looks when it got through.
func succeededVerdict(a attempt) *probe.Verdict {
	v := probe.Verdict{Op: a.op[0], Args: a.op[1:], OK: true}
	switch a.op[0] {
	case "read", "readdir":
		v.Out = fakeTarget.token
	case "exec-creds":
		v.Out = "caller=1000 uid=1000,0,0,0 gid=1000,1000,1000,1000 cap_prm=000001ffffffffff cap_eff=000001ffffffffff"
	}
	return &v
}

func verdictsFor(atts []attempt, each func(attempt) *probe.Verdict) []*probe.Verdict {
	var vs []*probe.Verdict
	for _, a := range atts {
		vs = append(vs, each(a))
	}
	return vs
}

var noFindings = findings{changed: map[string][]string{}, notes: map[string][]string{}}

// Every class the main run attacks: refused everywhere, it is blocked;
// with any one attempt through, it is an escape that fails selftest; with
// every layer that must stop it missing, it is "not enforced", which only
// --best-effort accepts.
func TestJudgeEveryClass(t *testing.T) {
	p := plan(fakeTarget)
	for id, atts := range p {
		c := findClass(id)
		t.Run(id, func(t *testing.T) {
			r := judge(c, atts, verdictsFor(atts, refusedVerdict), noFindings, fullyEnforced, choices{})
			if r.Verdict != VerdictBlocked || r.Fails {
				t.Errorf("judge(refused) = %s (fails %v), want blocked\n%q", r.Verdict, r.Fails, r.Evidence)
			}
			for i, a := range atts {
				if eff, _ := a.expect(*succeededVerdict(a)); eff != gotThrough {
					continue // a setup step: the host check judges
				}
				vs := verdictsFor(atts, refusedVerdict)
				vs[i] = succeededVerdict(a)
				if r := judge(c, atts, vs, noFindings, fullyEnforced, choices{bestEffort: true}); r.Verdict != VerdictEscaped || !r.Fails {
					t.Errorf("judge(%s got through) = %s (fails %v), want escaped", a.show, r.Verdict, r.Fails)
				}
				var none sandbox.Enforced
				r := judge(c, atts, vs, noFindings, none, choices{})
				if r.Verdict != VerdictNotEnforced || !r.Fails || !strings.HasPrefix(r.Reason, "the run had no ") {
					t.Errorf("judge(%s through, no layers) = %s %q (fails %v), want not_enforced", a.show, r.Verdict, r.Reason, r.Fails)
				}
				if r := judge(c, atts, vs, noFindings, none, choices{bestEffort: true}); r.Verdict != VerdictNotEnforced || r.Fails {
					t.Errorf("judge(%s through, no layers, --best-effort) = %s (fails %v), want not_enforced, passing", a.show, r.Verdict, r.Fails)
				}
			}
		})
	}
}

// A change on the host is an escape even when every call seemed refused:
// a call can fail after doing its damage.
func TestJudgeHostChange(t *testing.T) {
	atts := plan(fakeTarget)[classHostChmod]
	host := findings{changed: map[string][]string{classHostChmod: {"outside/mode.txt: mode changed (-rw-r--r-- -> -rwxrwxrwx)"}}}
	r := judge(findClass(classHostChmod), atts, verdictsFor(atts, refusedVerdict), host, fullyEnforced, choices{})
	if r.Verdict != VerdictEscaped || !r.Fails || !strings.Contains(strings.Join(r.Evidence, "\n"), "host: outside/mode.txt: mode changed") {
		t.Errorf("judge(host changed) = %s, evidence %q; want escaped, naming the change", r.Verdict, r.Evidence)
	}
	// Without the mount view (the --best-effort fallback), chmod on the
	// host is not enforced, as the run itself reports.
	if r := judge(findClass(classHostChmod), atts, verdictsFor(atts, refusedVerdict), host, unisolated, choices{bestEffort: true}); r.Verdict != VerdictNotEnforced || r.Fails {
		t.Errorf("judge(host changed, unisolated, --best-effort) = %s (fails %v); want not_enforced, passing", r.Verdict, r.Fails)
	}
	// Landlock still stands between the command and writes outside: an
	// escape there is one.
	atts = plan(fakeTarget)[classHostWrite]
	vs := verdictsFor(atts, refusedVerdict)
	vs[0] = succeededVerdict(atts[0])
	if r := judge(findClass(classHostWrite), atts, vs, noFindings, unisolated, choices{bestEffort: true}); r.Verdict != VerdictEscaped {
		t.Errorf("judge(write outside got through, Landlock applied) = %s; want escaped", r.Verdict)
	}
}

// An attempt the probe never reported on (it died) leaves the class
// undecided, and selftest failing; --net host allows the network.
func TestJudgeSilenceAndFlags(t *testing.T) {
	atts := plan(fakeTarget)[classPtrace]
	vs := verdictsFor(atts, refusedVerdict)
	vs[2] = nil
	if r := judge(findClass(classPtrace), atts, vs, noFindings, fullyEnforced, choices{}); r.Verdict != VerdictInconclusive || !r.Fails {
		t.Errorf("judge(no verdict) = %s (fails %v); want inconclusive, failing", r.Verdict, r.Fails)
	}
	atts = plan(fakeTarget)[classNetwork]
	host := findings{changed: map[string][]string{classNetwork: {"the listener on 127.0.0.1:40000 accepted 1 connection(s)"}}}
	r := judge(findClass(classNetwork), atts, verdictsFor(atts, succeededVerdict), host, fullyEnforced, choices{hostNetwork: true})
	if r.Verdict != VerdictAllowed || r.Fails || r.Reason != "--net host" {
		t.Errorf("judge(network with --net host) = %s %q (fails %v); want allowed by --net host", r.Verdict, r.Reason, r.Fails)
	}
}

// With --net allow the network class also asks the proxy for the host's
// listener; a proxy that connects is an escape.
func TestJudgeProxy(t *testing.T) {
	withProxy := fakeTarget
	withProxy.proxy = true
	atts := plan(withProxy)[classNetwork]
	if len(atts) != len(plan(fakeTarget)[classNetwork])+1 || atts[len(atts)-1].op[0] != "proxy-connect" {
		t.Fatalf("network attempts with a proxy: %+v", atts)
	}
	vs := verdictsFor(atts, refusedVerdict)
	vs[len(vs)-1] = &probe.Verdict{Op: "proxy-connect", OK: true, Out: "200 Connection established"}
	host := findings{changed: map[string][]string{classNetwork: {"the listener on 127.0.0.1:40000 accepted 1 connection(s)"}}}
	if r := judge(findClass(classNetwork), atts, vs, host, fullyEnforced, choices{}); r.Verdict != VerdictEscaped || !r.Fails {
		t.Errorf("judge(proxy connected) = %s (fails %v); want escaped", r.Verdict, r.Fails)
	}
}

func TestCredsGained(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want bool
	}{
		{"caller=1000 uid=1000,1000,1000,1000 cap_prm=0000000000000000 cap_eff=0000000000000000", false},
		{"caller=0 uid=0,0,0,0 cap_prm=0000000000000000 cap_eff=0000000000000000", false},
		{"caller=1000 uid=1000,0,0,0 cap_prm=0000000000000000 cap_eff=0000000000000000", true},
		{"caller=0 uid=0,0,0,0 cap_prm=000001ffffffffff cap_eff=000001ffffffffff", true},
		{"caller=1000 uid=1000,1000,1000,1000 cap_prm=0000000000000400 cap_eff=0000000000000000", true},
	} {
		if got, _, ok := credsGained(tc.out); got != tc.want || !ok {
			t.Errorf("credsGained(%q) = %v, %v; want %v, true", tc.out, got, ok, tc.want)
		}
	}
	for _, out := range []string{"garbage", "caller=1 uid=1,1 cap_prm=0 cap_eff=0", "caller=1 uid=1,1,1,1 cap_prm=x cap_eff=0"} {
		if _, _, ok := credsGained(out); ok {
			t.Errorf("credsGained(%q) ok; want a refusal", out)
		}
	}
	// What the probe could not observe is no verdict either way.
	v := probe.Verdict{Op: "exec-creds", Errno: "ETIMEDOUT"}
	atts := []attempt{{op: []string{"exec-creds", "/usr/bin/mount"}, show: "exec mount", expect: noGain}}
	if r := judge(findClass(classSetuid), atts, []*probe.Verdict{&v}, noFindings, fullyEnforced, choices{}); r.Verdict != VerdictInconclusive || !r.Fails {
		t.Errorf("judge(exec-creds timed out) = %s (fails %v); want inconclusive", r.Verdict, r.Fails)
	}
}

func decision(pids, memory cgroup.Mechanism) *cgroup.Decision {
	d := &cgroup.Decision{}
	d.Pids = cgroup.Enforcement[int64]{Value: limitPids, Mechanism: pids}
	d.Memory = cgroup.Enforcement[int64]{Value: limitMemory, Mechanism: memory}
	d.CPUs = cgroup.Enforcement[float64]{Mechanism: cgroup.MechanismNone, Reason: "no limit requested"}
	if pids == cgroup.MechanismNone {
		d.Pids.Reason = "RLIMIT_NPROC does not bind root"
	}
	if memory == cgroup.MechanismNone {
		d.Memory.Reason = "no cgroup: only root can create cgroups here"
	}
	return d
}

// limitCase is a limit run and the verdict it must get.
type limitCase struct {
	name  string
	lr    limitRun
	ch    choices
	want  string
	fails bool
}

func TestJudgeLimits(t *testing.T) {
	bomb := func(ok bool, out, errno string) *probe.Verdict {
		return &probe.Verdict{Op: "forkbomb", Args: []string{"256"}, OK: ok, Out: out, Errno: errno}
	}
	for _, tc := range []limitCase{
		{"stopped", limitRun{ran: true, limits: decision(cgroup.MechanismCgroupV1, cgroup.MechanismCgroupV1), verdict: bomb(false, "57 of 256", "EAGAIN")}, choices{}, VerdictBlocked, false},
		{"by rlimit", limitRun{ran: true, limits: decision(cgroup.MechanismRlimit, cgroup.MechanismNone), verdict: bomb(false, "57 of 256", "EAGAIN")}, choices{}, VerdictBlocked, false},
		{"all forks", limitRun{ran: true, limits: decision(cgroup.MechanismCgroupV2, cgroup.MechanismCgroupV2), verdict: bomb(true, "256 of 256", "")}, choices{}, VerdictEscaped, true},
		{"past the limit", limitRun{ran: true, limits: decision(cgroup.MechanismCgroupV2, cgroup.MechanismCgroupV2), verdict: bomb(false, "100 of 256", "EAGAIN")}, choices{}, VerdictEscaped, true},
		{"unenforced", limitRun{ran: true, limits: decision(cgroup.MechanismNone, cgroup.MechanismNone), verdict: bomb(true, "256 of 256", "")}, choices{}, VerdictNotEnforced, true},
		{"unenforced, best effort", limitRun{ran: true, limits: decision(cgroup.MechanismNone, cgroup.MechanismNone)}, choices{bestEffort: true}, VerdictNotEnforced, false},
		{"probe died", limitRun{ran: true, limits: decision(cgroup.MechanismCgroupV1, cgroup.MechanismCgroupV1), exit: "exit 2"}, choices{}, VerdictInconclusive, true},
		{"--pids none", limitRun{}, choices{noPids: true}, VerdictAllowed, false},
	} {
		if r := judgePids(tc.lr, tc.ch); r.Verdict != tc.want || r.Fails != tc.fails {
			t.Errorf("judgePids(%s) = %s (fails %v) %q; want %s (fails %v)", tc.name, r.Verdict, r.Fails, r.Evidence, tc.want, tc.fails)
		}
	}
	cg := decision(cgroup.MechanismCgroupV1, cgroup.MechanismCgroupV1)
	hog := func(ok bool, errno string) *probe.Verdict {
		return &probe.Verdict{Op: "hog", OK: ok, Errno: errno}
	}
	for _, tc := range []limitCase{
		{"oom killed", limitRun{ran: true, limits: cg, oomKilled: true, exit: "SIGKILL"}, choices{}, VerdictBlocked, false},
		{"refused", limitRun{ran: true, limits: cg, verdict: hog(false, "ENOMEM")}, choices{}, VerdictBlocked, false},
		{"touched it all", limitRun{ran: true, limits: cg, verdict: hog(true, "")}, choices{}, VerdictEscaped, true},
		{"no cgroup", limitRun{limits: decision(cgroup.MechanismRlimit, cgroup.MechanismNone)}, choices{}, VerdictNotEnforced, true},
		{"no cgroup, best effort", limitRun{limits: decision(cgroup.MechanismRlimit, cgroup.MechanismNone)}, choices{bestEffort: true}, VerdictNotEnforced, false},
		{"no verdict", limitRun{ran: true, limits: cg, exit: "exit 2"}, choices{}, VerdictInconclusive, true},
		{"--memory none", limitRun{}, choices{noMemoryLimit: true}, VerdictAllowed, false},
	} {
		if r := judgeMemory(tc.lr, hogBytes, tc.ch, Options{}.bytes); r.Verdict != tc.want || r.Fails != tc.fails {
			t.Errorf("judgeMemory(%s) = %s (fails %v) %q; want %s (fails %v)", tc.name, r.Verdict, r.Fails, r.Evidence, tc.want, tc.fails)
		}
	}
}

// goldenReport is a report as a user with no cgroups, --net host and one
// escape would see it: every kind of verdict once.
func goldenReport() *Report {
	p := plan(fakeTarget)
	host := findings{changed: map[string][]string{classHostChmod: {"outside/mode.txt: mode changed (-rw-r--r-- -> -rwxrwxrwx)"}},
		notes: map[string][]string{classSecret: {"host: bait unchanged"}}}
	en := fullyEnforced
	en.Network, en.Namespaces = sandbox.NetHost, []string{"user", "pid", "mount", "ipc", "uts"}
	en.Limits = decision(cgroup.MechanismRlimit, cgroup.MechanismNone)
	r := &Report{Bait: fakeTarget.root, Enforced: &en, Limits: en.Limits, Ignored: []string{"--workspace"}, Warnings: []string{}}
	for _, c := range classes {
		switch c.id {
		case classPids:
			r.Classes = append(r.Classes, judgePids(limitRun{ran: true, limits: en.Limits,
				verdict: &probe.Verdict{Op: "forkbomb", Out: "57 of 256", Errno: "EAGAIN"}}, choices{}))
		case classMemory:
			r.Classes = append(r.Classes, judgeMemory(limitRun{limits: en.Limits}, hogBytes, choices{}, Options{}.bytes))
		case classSetuid:
			r.Classes = append(r.Classes, notTested(c, "this host has none of the setuid-root programs selftest tries"))
		default:
			vs := verdictsFor(p[c.id], refusedVerdict)
			if c.id == classNetwork {
				vs = verdictsFor(p[c.id], succeededVerdict)
			}
			r.Classes = append(r.Classes, judge(c, p[c.id], vs, host, en, choices{hostNetwork: true}))
		}
	}
	r.conclude()
	return r
}

// The report is golden: agents read its JSON, and forgebox selftest
// renders it (cmd/forgebox's golden test reads this file as its input).
func TestReportGolden(t *testing.T) {
	r := goldenReport()
	if r.ExitCode != 1 || r.Verdict != "fail" {
		t.Errorf("golden report concludes %s, exit %d; want fail, exit 1", r.Verdict, r.ExitCode)
	}
	var got bytes.Buffer
	enc := json.NewEncoder(&got)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "report.json.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got.Bytes())
	}
}

// Once the main run is over, its verdicts are matched to the attempts in
// order; a verdict out of place matches nothing.
func TestMatchVerdicts(t *testing.T) {
	p := plan(fakeTarget)
	var vs []probe.Verdict
	for _, a := range probeArgs(p) {
		w := probe.Split(a)
		vs = append(vs, probe.Verdict{Op: w[0], Args: w[1:]})
	}
	m := matchVerdicts(p, vs[:len(vs)-1])
	for _, c := range classes {
		for i := range p[c.id] {
			last := c.id == classUserNS && i == len(p[c.id])-1
			if got := m[c.id][i] == nil; got != last {
				t.Errorf("matchVerdicts: %s attempt %d has no verdict: %v, want %v", c.id, i, got, last)
			}
		}
	}
}
