package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// selftestReport is the part of forgebox selftest --json the tests read.
type selftestReport struct {
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exit_code"`
	Classes  []struct {
		Class    string   `json:"class"`
		Verdict  string   `json:"verdict"`
		Reason   string   `json:"reason"`
		Evidence []string `json:"evidence"`
		Fails    bool     `json:"fails"`
	} `json:"classes"`
	Limits *struct {
		Memory struct{ Mechanism string } `json:"memory"`
		Pids   struct{ Mechanism string } `json:"pids"`
	} `json:"limits"`
	Bait  string `json:"bait"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// selftester runs forgebox selftest as a mode's user, with its bait in a
// cache directory of the scenario's: the fake home's is too deep for the
// bait's Unix socket. The cache directory takes the bait only with
// --no-cache (else the run's private cache would stand over it), which
// run adds.
type selftester struct {
	e     *env
	cache string
}

func newSelftester(e *env) *selftester {
	e.t.Helper()
	cache, err := os.MkdirTemp(baseDir, "c")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { os.RemoveAll(cache) })
	e.chown(cache)
	e.extra = append(e.extra, "XDG_CACHE_HOME="+cache)
	return &selftester{e: e, cache: cache}
}

// run runs forgebox selftest --json ARGS and decodes its report; the exit
// status must be the report's, and nothing may be left behind.
func (s *selftester) run(args ...string) (result, selftestReport) {
	s.e.t.Helper()
	r := s.e.run(append([]string{"selftest", "--json", "--no-cache"}, args...))
	rep := s.decode(r, args)
	if rep.ExitCode != r.code {
		s.e.t.Errorf("selftest %q exited %d; its report says %d", args, r.code, rep.ExitCode)
	}
	return r, rep
}

func (s *selftester) decode(r result, args []string) selftestReport {
	s.e.t.Helper()
	var rep selftestReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		s.e.t.Fatalf("forgebox selftest --json %q: exit %d, not a JSON report: %v\nstdout: %s\nstderr: %s", args, r.code, err, r.stdout, r.stderr)
	}
	s.noLeftovers()
	return rep
}

// noLeftovers: the bait is gone from the host, and so is the bait process.
func (s *selftester) noLeftovers() {
	s.e.t.Helper()
	left, _ := filepath.Glob(filepath.Join(s.cache, "forgebox-selftest-*"))
	more, _ := filepath.Glob(filepath.Join(s.e.home, "forgebox-selftest-*"))
	if left = append(left, more...); len(left) > 0 {
		s.e.t.Errorf("selftest left its bait behind: %q", left)
	}
	if !waitFor(3*time.Second, func() bool { return len(processesWith("__forgebox-probe")) == 0 }) {
		s.e.t.Errorf("selftest left probe processes behind: %v", processesWith("__forgebox-probe"))
	}
}

// verdicts maps each class to its verdict.
func (rep selftestReport) verdicts() map[string]string {
	m := map[string]string{}
	for _, c := range rep.Classes {
		m[c.Class] = c.Verdict
	}
	return m
}

func (rep selftestReport) evidence(class string) string {
	for _, c := range rep.Classes {
		if c.Class == class {
			return strings.Join(c.Evidence, "; ")
		}
	}
	return ""
}

// selftestClasses are the classes of the main run: all blocked here (the
// setuid class may have nothing to attack on a host without a setuid-root
// program).
var selftestClasses = []string{"secret-read", "host-write", "host-chmod", "protected-write", "host-unix-socket",
	"abstract-socket", "host-network", "see-host-processes", "signal-host-processes", "ptrace", "mount",
	"kernel-module", "io-uring", "tiocsti", "setuid", "nested-userns"}

// On this machine forgebox blocks every attack of selftest, as root and as
// an ordinary user, and selftest proves it on the host: the bait is
// unchanged, the sockets saw no connection, the process still runs. The
// limits are blocked where the caller can create cgroups; elsewhere the
// memory limit is "not enforced", which fails selftest unless
// --best-effort.
func TestSelftest(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		st := newSelftester(e)
		r, rep := st.run()
		v := rep.verdicts()
		for _, c := range selftestClasses {
			want := "blocked"
			if c == "setuid" && v[c] == "not_tested" {
				t.Logf("setuid: not tested here: %s", rep.evidence(c))
				continue
			}
			if v[c] != want {
				t.Errorf("selftest %s = %s (%s); want %s", c, v[c], rep.evidence(c), want)
			}
		}
		for class, want := range map[string]string{"host-chmod": "host: bait unchanged", "host-unix-socket": "host: no connection arrived",
			"host-network": "host: no connection arrived", "signal-host-processes": "host: the process still runs",
			"protected-write": "moved aside after the run"} {
			if !strings.Contains(rep.evidence(class), want) {
				t.Errorf("selftest %s evidence %q; want it to say %q", class, rep.evidence(class), want)
			}
		}
		if rep.Limits == nil {
			t.Fatalf("selftest reports no limits: %s", r.stdout)
		}
		if v["pids-limit"] != "blocked" {
			t.Errorf("selftest pids-limit = %s (%s); want blocked (by %s)", v["pids-limit"], rep.evidence("pids-limit"), rep.Limits.Pids.Mechanism)
		}
		if rep.Limits.Memory.Mechanism != "none" {
			if v["memory-limit"] != "blocked" || r.code != 0 || rep.Verdict != "pass" {
				t.Errorf("selftest with a memory cgroup: memory-limit %s (%s), exit %d, verdict %s; want blocked, 0, pass",
					v["memory-limit"], rep.evidence("memory-limit"), r.code, rep.Verdict)
			}
			return
		}
		if e.m.root() {
			t.Errorf("root cannot limit memory here; want a cgroup")
		}
		if v["memory-limit"] != "not_enforced" || r.code != 1 || rep.Verdict != "fail" {
			t.Errorf("selftest without a memory cgroup: memory-limit %s, exit %d, verdict %s; want not_enforced, 1, fail", v["memory-limit"], r.code, rep.Verdict)
		}
		// --best-effort accepts what this host cannot enforce, and still
		// says so.
		r, rep = st.run("--best-effort")
		if v := rep.verdicts(); v["memory-limit"] != "not_enforced" || r.code != 0 || rep.Verdict != "pass" {
			t.Errorf("selftest --best-effort without a memory cgroup: memory-limit %s, exit %d, verdict %s; want not_enforced, 0, pass", v["memory-limit"], r.code, rep.Verdict)
		}
	})
}

// What the user's own flags allow is reported as such, and does not fail:
// the host network with --net host (abstract sockets stay scoped by
// Landlock), no limits with --memory none --pids none.
func TestSelftestFlags(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		st := newSelftester(e)
		r, rep := st.run("--net", "host", "--memory", "none", "--pids", "none", "--profile", "strict")
		v := rep.verdicts()
		for class, want := range map[string]string{"host-network": "allowed_by_flags", "memory-limit": "allowed_by_flags",
			"pids-limit": "allowed_by_flags", "abstract-socket": "blocked", "host-unix-socket": "blocked", "secret-read": "blocked"} {
			if v[class] != want {
				t.Errorf("selftest --net host --memory none --pids none: %s = %s (%s); want %s", class, v[class], rep.evidence(class), want)
			}
		}
		// The connection is seen where it arrived: on the host.
		if ev := rep.evidence("host-network"); !strings.Contains(ev, ": ok") || !strings.Contains(ev, "accepted 1 connection") {
			t.Errorf("host-network evidence %q; want the connection that --net host allowed, seen by the host listener", ev)
		}
		if r.code != 0 || rep.Verdict != "pass" {
			t.Errorf("selftest with permissive flags: exit %d, verdict %s; want 0, pass\n%s", r.code, rep.Verdict, r.stdout)
		}
		// With --net allow the probe also asks the proxy for the host's
		// listener, which no allowlist here names: refused, and the
		// listener sees nothing.
		r, rep = st.run("--net", "allow=example.com", "--memory", "none", "--pids", "none")
		if ev := rep.evidence("host-network"); rep.verdicts()["host-network"] != "blocked" ||
			!strings.Contains(ev, "ask the proxy for 127.0.0.1:") || !strings.Contains(ev, "ip-literal") || !strings.Contains(ev, "no connection arrived") {
			t.Errorf("selftest --net allow: host-network %s, evidence %q; want blocked by the proxy, no connection", rep.verdicts()["host-network"], ev)
		}
		if r.code != 0 {
			t.Errorf("selftest --net allow: exit %d\n%s", r.code, r.stdout)
		}
		// A command is not selftest's to run.
		if r := e.run([]string{"selftest", "--", "true"}); r.code != 125 {
			t.Errorf("selftest -- true: exit %d; want 125", r.code)
		}
	})
}

// Where a layer is missing, the attacks really get through, and selftest
// sees it on the host: without namespaces (--best-effort's fallback) the
// probe's chmod of the bait outside the workspace changes it, and it sees
// the host's processes; selftest reports those
// classes "not enforced", with what the host saw as evidence. Without
// --best-effort, selftest fails like forgebox run.
func TestSelftestSeesWhatGetsThrough(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		st := newSelftester(e)
		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
		}
		r := e.withoutUserNamespaces(forgebox, "selftest", "--json", "--no-cache", "--best-effort")
		rep := st.decode(r, []string{"--best-effort", "(without namespaces)"})
		v := rep.verdicts()
		for _, class := range []string{"host-chmod", "see-host-processes"} {
			if v[class] != "not_enforced" {
				t.Errorf("without namespaces: %s = %s (%s); want not_enforced", class, v[class], rep.evidence(class))
			}
		}
		if ev := rep.evidence("host-chmod"); !strings.Contains(ev, "host: outside/mode.txt: mode changed") {
			t.Errorf("without namespaces: host-chmod evidence %q; want the change the probe made on the host", ev)
		}
		// Landlock and seccomp remain: these stay blocked (the host's Unix
		// socket too: the filter refuses socket(AF_UNIX)).
		for _, class := range []string{"host-write", "host-unix-socket", "ptrace", "mount", "nested-userns"} {
			if v[class] != "blocked" {
				t.Errorf("without namespaces: %s = %s (%s); want blocked", class, v[class], rep.evidence(class))
			}
		}
		if r.code != 0 || rep.Verdict != "pass" {
			t.Errorf("selftest --best-effort without namespaces: exit %d, verdict %s; want 0, pass (it is what --best-effort accepts)", r.code, rep.Verdict)
		}

		r = e.withoutUserNamespaces(forgebox, "selftest", "--json", "--no-cache")
		if rep = st.decode(r, []string{"(without namespaces)"}); r.code != 125 || rep.Error == nil || rep.Error.Code != "unavailable" {
			t.Errorf("selftest without namespaces: exit %d, %+v; want 125 and the error unavailable", r.code, rep.Error)
		}
	})
}

// Interrupted, selftest kills its sandbox and removes its bait.
func TestSelftestInterrupted(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		st := newSelftester(e)
		for _, delay := range []time.Duration{20 * time.Millisecond, 60 * time.Millisecond} {
			s := e.start([]string{"selftest", "--no-cache"})
			time.Sleep(delay)
			// A selftest can finish within the delay (20 ms as an ordinary
			// user on a quiet host): then there is nothing to interrupt,
			// and it must have ended with its report's status.
			finished := s.cmd.Process.Signal(syscall.SIGINT) != nil
			r := s.wait(t, 10*time.Second)
			if !finished && r.code != 130 && r.code != 0 && r.code != 1 || finished && r.code != 0 && r.code != 1 {
				t.Errorf("selftest interrupted after %v: exit %d; want 130 (or 0/1 if it had finished)\nstderr: %s", delay, r.code, r.stderr)
			}
			st.noLeftovers()
		}
		if _, err := os.Stat(e.ws); err != nil {
			t.Errorf("the caller's directory: %v", err)
		}
	})
}
