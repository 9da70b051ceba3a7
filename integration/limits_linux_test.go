package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cgroupMechanism is how this mode's runs get their memory limit here:
// "cgroup-v1" or "cgroup-v2" where the caller can create cgroups, "none"
// elsewhere (an unprivileged user on cgroup v1).
func (e *env) cgroupMechanism() string {
	e.t.Helper()
	r, res := e.runJSON([]string{"--", "true"})
	if r.code != 0 || res.Enforced == nil || res.Enforced.Limits == nil {
		e.t.Fatalf("plain run: exit %d, no limits in %s", r.code, r.stdout)
	}
	return res.Enforced.Limits.Memory.Mechanism
}

// Every run gets the default limits, and says what enforces each: a
// cgroup where the caller can create one; otherwise the task limit falls
// back to RLIMIT_NPROC in the sandbox's own user namespace (an honest
// stand-in on Linux 5.14+, for a non-root caller), and the memory limit is
// reported unenforced with the reason.
func TestDefaultLimitsReported(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		_, res := e.runJSON([]string{"--", "true"})
		l := res.Enforced.Limits
		if l.Memory.Value < 1<<30 || l.Pids.Value < 4096 || l.CPUs.Value != 0 || l.CPUs.Mechanism != "none" {
			t.Errorf("default limits = memory %v, pids %v, cpus %v (%s)", l.Memory.Value, l.Pids.Value, l.CPUs.Value, l.CPUs.Mechanism)
		}
		switch m := l.Memory.Mechanism; {
		case strings.HasPrefix(m, "cgroup-"):
			if l.Pids.Mechanism != m || res.Enforced.Cgroup == "" || res.Usage.CPUMS == nil {
				t.Errorf("memory by %s but pids by %s, cgroup %q, cpu_ms %v", m, l.Pids.Mechanism, res.Enforced.Cgroup, res.Usage.CPUMS)
			}
		case m == "none":
			if l.Memory.Reason == "" || res.Enforced.Cgroup != "" || res.Usage.CPUMS != nil || res.Usage.PeakMemoryBytes != nil {
				t.Errorf("memory unenforced without a reason, or cgroup figures without a cgroup: %+v, usage %+v", l.Memory, res.Usage)
			}
			if want := map[bool]string{true: "none", false: "rlimit"}[e.m.root()]; l.Pids.Mechanism != want {
				t.Errorf("pids mechanism without a cgroup = %q (%s); want %q", l.Pids.Mechanism, l.Pids.Reason, want)
			}
		default:
			t.Errorf("memory mechanism %q", m)
		}
		if res.ExitCode != 0 || len(res.Warnings) != 0 {
			t.Errorf("default limits changed the run: exit %d, warnings %q", res.ExitCode, res.Warnings)
		}
	})
}

// A memory hog is OOM-killed at --memory inside its own group, and the run
// says so: oom_killed, exit 137 and a message naming --memory. The host
// and forgebox's own reporting survive. Where no cgroup can be made, the
// explicit limit refuses the run instead of running it unlimited.
func TestMemoryHogIsStopped(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		// dd holds its whole 256 MiB block in memory.
		hog := []string{"--memory", "64M", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"}
		mech := e.cgroupMechanism()
		r, res := e.runJSON(hog)
		if mech == "none" {
			if r.code != 125 || res.Error == nil || res.Error.Code != "unavailable" || !strings.Contains(res.Error.Message, "--memory") {
				t.Fatalf("an explicit --memory without a cgroup: exit %d, %s; want a refusal naming --memory", r.code, r.stdout)
			}
			r, res = e.runJSON(append([]string{"--best-effort"}, hog...))
			if r.code != 0 || !anyContains(res.Enforced.Missing, "memory limit") {
				t.Errorf("--best-effort without a cgroup: exit %d, missing %q", r.code, res.Enforced.Missing)
			}
			return
		}
		if r.code != 137 || !res.OOMKilled || res.ExitCode != 137 {
			t.Fatalf("hog: exit %d, oom_killed %v; want 137, true\n%s", r.code, res.OOMKilled, r.stdout)
		}
		if !strings.Contains(r.stderr, "out of memory") || !strings.Contains(r.stderr, "--memory") || !strings.Contains(r.stderr, "64MiB") {
			t.Errorf("stderr = %q; want the OOM named, with the limit and the flag", r.stderr)
		}
		if p := res.Usage.PeakMemoryBytes; p != nil && (*p > 64<<20 || *p < 32<<20) {
			t.Errorf("peak memory %d; want up to the 64 MiB limit", *p)
		}
		// The same without the JSON: the exit code and the message.
		plain := e.run(append([]string{"run"}, hog...))
		if plain.code != 137 || !strings.Contains(plain.stderr, "--memory") {
			t.Errorf("plain hog: exit %d, stderr %q", plain.code, plain.stderr)
		}
		// A command that survives the kill of one of its processes keeps
		// its own exit status, and the kill is still reported.
		r, res = e.runJSON([]string{"--memory", "64M", "-c", "dd if=/dev/zero of=/dev/null bs=256M count=1 2>/dev/null; exit 0"})
		if r.code != 0 || !res.OOMKilled || !strings.Contains(r.stderr, "--memory") {
			t.Errorf("a shell surviving its hog's OOM kill: exit %d, oom_killed %v, stderr %q; want 0, true and the message", r.code, res.OOMKilled, r.stderr)
		}
		// The control: the same command fits in a larger limit.
		if r, res := e.runJSON([]string{"--memory", "1G", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"}); r.code != 0 || res.OOMKilled {
			t.Errorf("256 MiB under a 1 GiB limit: exit %d, oom_killed %v, stderr %q", r.code, res.OOMKilled, res.Stderr)
		}
	})
}

// A fork bomb runs into --pids: forks fail inside, the tree stays under
// the limit, the host keeps its pid space, and the tree is gone after the
// timeout. This holds with a cgroup and with the RLIMIT_NPROC stand-in.
func TestForkBombContained(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		mark := marker()
		// Every sleeper carries the marker, so a survivor would be found;
		// "; :" keeps sh from replacing itself with sleep. The bomb is a
		// dash loop, which stops at its first refused fork (bash would
		// retry for 15 s), and the count uses bash builtins only.
		line := "sh -c 'i=0; while [ $i -lt 60 ]; do sh -c \"sleep 30; :\" " + mark + " & i=$((i+1)); done' 2>/dev/null; " +
			"n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo $n"
		r, res := e.runJSON([]string{"--pids", "32", "--timeout", "30s", "-c", line})
		if e.m.root() && res.Enforced.Limits.Pids.Mechanism == "none" {
			// root without cgroups: RLIMIT_NPROC does not bind uid 0
			if r.code != 125 || res.Error == nil || !strings.Contains(res.Error.Message, "--pids") {
				t.Fatalf("root without a cgroup, explicit --pids: exit %d, %s; want a refusal", r.code, r.stdout)
			}
			return
		}
		if res.Error != nil {
			t.Fatalf("fork bomb run failed: %s", r.stdout)
		}
		// PID 1 is in the namespace but outside the group.
		n, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
		if err != nil || n > 33 || n < 8 {
			t.Errorf("processes inside = %q; want 8..33 under --pids 32\nstderr: %.500s\n%s", res.Stdout, res.Stderr, r.stdout)
		}
		if strings.HasPrefix(res.Enforced.Limits.Pids.Mechanism, "cgroup-") {
			if res.Usage.ForksRefused == nil || *res.Usage.ForksRefused == 0 || !anyContains(res.Warnings, "--pids 32") {
				t.Errorf("forks_refused %v, warnings %q; want refused forks reported", res.Usage.ForksRefused, res.Warnings)
			}
		}
		noProcesses(t, mark)
		// The host can still start processes as this user.
		if host := e.runProgram("true"); host.code != 0 {
			t.Errorf("the host cannot start a process after the bomb: %+v", host)
		}
	})
}

// --cpus caps the tree's CPU time per period: a busy loop for a second
// gets about a fifth of a core with --cpus 0.2.
func TestCPULimit(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		args := []string{"--cpus", "0.2", "--", "timeout", "1", "sh", "-c", "while :; do :; done"}
		if e.cgroupMechanism() == "none" {
			r, res := e.runJSON(args)
			if r.code != 125 || res.Error == nil || !strings.Contains(res.Error.Message, "--cpus") {
				t.Errorf("--cpus without a cgroup: exit %d, %s; want a refusal", r.code, r.stdout)
			}
			return
		}
		_, res := e.runJSON(args)
		if res.Enforced.Limits.CPUs.Value != 0.2 || res.Usage.CPUMS == nil {
			t.Fatalf("cpus limit %+v, cpu_ms %v", res.Enforced.Limits.CPUs, res.Usage.CPUMS)
		}
		// 200 ms of each second, plus a period of slack.
		if cpu := *res.Usage.CPUMS; cpu > 400 || cpu < 50 {
			t.Errorf("a busy second under --cpus 0.2 used %.0f ms of CPU; want about 200", cpu)
		}
	})
}

// Limits that cannot mean anything are refused before anything runs.
func TestBadLimits(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, bad := range [][]string{
			{"--memory", "0"}, {"--memory", "100"}, {"--memory", "lots"}, {"--memory", "-1G"}, {"--memory", "1e99G"},
			{"--pids", "0"}, {"--pids", "-5"}, {"--pids", "1.5"}, {"--pids", "99999999999999999999"},
			{"--cpus", "0"}, {"--cpus", "NaN"}, {"--cpus", "-1"}, {"--cpus", "1e9"}, {"--cpus", "0.001"},
		} {
			flag := filepath.Join(e.ws, "ran")
			r := e.run(append(append([]string{"run"}, bad...), "--", "touch", flag))
			if r.code != 125 || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%q: exit %d, stderr %q; want 125 and one line of error", bad, r.code, r.stderr)
			}
			forgeboxOnly(t, r.stderr)
			if _, err := os.Stat(flag); err == nil {
				t.Errorf("%q: the command ran", bad)
				os.Remove(flag)
			}
		}
		// "none" turns a limit off, and is said so.
		_, res := e.runJSON([]string{"--memory", "none", "--pids", "none", "--", "true"})
		if l := res.Enforced.Limits; l == nil || l.Memory.Value != 0 || l.Pids.Value != 0 || l.Memory.Mechanism != "none" {
			t.Errorf("--memory none --pids none: limits %+v", l)
		}
	})
}

// The run's group is gone afterwards: after a normal exit, after a timeout
// and, once the next run has cleaned up, after forgebox was killed.
func TestCgroupRemoved(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if !strings.HasPrefix(e.cgroupMechanism(), "cgroup-") {
			t.Skip("this caller cannot create cgroups here")
		}
		_, res := e.runJSON([]string{"--", "true"})
		groupGone(t, res.Enforced.Cgroup)
		_, res = e.runJSON([]string{"--timeout", "300ms", "--", "sh", "-c", "sleep 30 & sleep 30"})
		if !res.TimedOut {
			t.Fatalf("no timeout: %+v", res)
		}
		groupGone(t, res.Enforced.Cgroup)

		mark := marker()
		run := e.start([]string{"run", "--", "sh", "-c", "sleep 30 " + mark + "; true"})
		var groups []string
		if !waitFor(10*time.Second, func() bool {
			groups = groupsOf(run.cmd.Process.Pid)
			return len(groups) > 0 && len(processesWith(mark)) > 0
		}) {
			t.Fatalf("no group for forgebox %d", run.cmd.Process.Pid)
		}
		run.signal(t, syscall.SIGKILL)
		run.wait(t, 10*time.Second)
		noProcesses(t, mark)
		if r := e.run([]string{"run", "--", "true"}); r.code != 0 {
			t.Fatalf("the next run: %+v", r)
		}
		for _, g := range groups {
			if _, err := os.Stat(g); err == nil {
				t.Errorf("%s survived the next run", g)
			}
		}
	})
}

// groupsOf lists the cgroup directories of forgebox process pid.
func groupsOf(pid int) []string {
	var out []string
	for _, pattern := range []string{"/sys/fs/cgroup/*/forgebox-%d-*", "/sys/fs/cgroup/forgebox-%d-*", "/sys/fs/cgroup/*/*/forgebox-%d-*"} {
		m, _ := filepath.Glob(strings.ReplaceAll(pattern, "%d", strconv.Itoa(pid)))
		out = append(out, m...)
	}
	return out
}

// groupGone fails if a cgroup directory named name exists.
func groupGone(t *testing.T, name string) {
	t.Helper()
	if name == "" {
		t.Fatal("the run reported no cgroup")
	}
	for _, pattern := range []string{"/sys/fs/cgroup/*/" + name, "/sys/fs/cgroup/" + name, "/sys/fs/cgroup/*/*/" + name} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			t.Errorf("cgroup left behind: %q", m)
		}
	}
}

func anyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// A caller whose own hard RLIMIT_NPROC is below the default task limit (a
// small machine: 1707 with 512 MiB of RAM) still runs: the stand-in
// rlimit is lowered to the hard limit, which the sandbox could not raise.
func TestTaskLimitBelowDefault(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.runProgram("bash", "-c", `ulimit -u 1000 && exec "$0" run --no-policy --json -- bash -c 'ulimit -u'`, forgebox)
		res := decodeResult(t, r.stdout)
		if r.code != 0 || res.Error != nil {
			t.Fatalf("with ulimit -u 1000: exit %d, %s", r.code, r.stdout)
		}
		if l := res.Enforced.Limits.Pids; l.Mechanism == "rlimit" && (l.Value != 1000 || strings.TrimSpace(res.Stdout) != "1000") {
			t.Errorf("task limit %+v, ulimit -u inside %q; want 1000", l, res.Stdout)
		}
	})
}
