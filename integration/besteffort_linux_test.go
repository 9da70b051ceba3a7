package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withoutUserNamespaces runs args inside a user namespace of its own in
// which user.max_user_namespaces is 0 (the sysctl is per user namespace),
// so that creating another one fails as it does in a locked-down container,
// without touching the machine's setting.
func (e *env) withoutUserNamespaces(args ...string) result {
	e.t.Helper()
	script := `echo 0 > /proc/sys/user/max_user_namespaces || exit 99; exec "$@"`
	return e.runProgram("unshare", append([]string{"-Ur", "sh", "-c", script, "sh"}, args...)...)
}

// When user namespaces are refused, forgebox fails closed: exit 125, a
// message naming namespaces and pointing to forgebox doctor, and the
// command does not run.
func TestFailsClosedWithoutNamespaces(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		// The control: in this setting a user namespace really is refused.
		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
		}
		ran := filepath.Join(e.ws, "ran")
		r := e.withoutUserNamespaces(forgebox, "run", "--", "touch", ran)
		if r.code != 125 {
			t.Errorf("forgebox run without user namespaces: exit %d; want 125\nstderr: %s", r.code, r.stderr)
		}
		forgeboxOnly(t, r.stderr)
		if !strings.Contains(r.stderr, "namespace") || !strings.Contains(r.stderr, "forgebox doctor") {
			t.Errorf("stderr %q; want it to name namespaces and point to forgebox doctor", r.stderr)
		}
		if s := snap(t, ran); s.exists {
			t.Errorf("the command ran without a sandbox")
		}

		r = e.withoutUserNamespaces(forgebox, "run", "--json", "--", "touch", ran)
		res := decodeResult(t, r.stdout)
		if r.code != 125 || res.Error == nil || res.Error.Code != "unavailable" {
			t.Errorf("--json without user namespaces: exit %d, error %+v; want 125 and code unavailable", r.code, res.Error)
		}
	})
}

// --best-effort runs anyway, and says loudly what is missing.
func TestBestEffortRunsUnsandboxed(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
		}
		ran := filepath.Join(e.ws, "ran")
		r := e.withoutUserNamespaces(forgebox, "run", "--best-effort", "--", "touch", ran)
		if r.code != 0 {
			t.Errorf("--best-effort: exit %d; want 0\nstderr: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "forgebox: warning: running WITHOUT a sandbox") {
			t.Errorf("--best-effort: stderr %q; want a warning that it runs WITHOUT a sandbox", r.stderr)
		}
		if s := snap(t, ran); !s.exists {
			t.Errorf("--best-effort: the command did not run")
		}

		r = e.withoutUserNamespaces(forgebox, "run", "--best-effort", "--json", "--", "true")
		res := decodeResult(t, r.stdout)
		if r.code != 0 || res.Enforced == nil || res.Enforced.Sandbox || len(res.Enforced.Missing) == 0 {
			t.Errorf("--best-effort --json: exit %d, enforced %+v; want sandbox false and what is missing", r.code, res.Enforced)
		}
		if !strings.Contains(strings.Join(res.Warnings, "\n"), "WITHOUT a sandbox") {
			t.Errorf("--best-effort --json: warnings %q; want the WITHOUT a sandbox warning", res.Warnings)
		}
	})
}

// Without namespaces, --best-effort loses the mount view but not the kernel
// layers: Landlock still refuses a write outside the workspace (the host
// file is unchanged) and seccomp still refuses ptrace and new namespaces.
func TestBestEffortKeepsKernelLayers(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
		}
		target := filepath.Join(e.outside, "kept")
		e.write(target, "before")
		before := snap(t, target)
		secret := filepath.Join(e.outside, "secret")
		e.write(secret, "s3cret")
		run := filepath.Join("/run", "forgebox-test-"+marker())
		defer os.Remove(run)
		r := e.withoutUserNamespaces(forgebox, "run", "--best-effort", "--hide", secret, "--", probe,
			"write "+target+" after", "read "+secret, "write "+run+" x",
			"ptrace-parent", "unshare-mount",
			"write /dev/null x", "write /tmp/"+marker()+" x")
		vs := decodeVerdicts(t, r.stdout)
		if r.code != 0 || len(vs) != 7 {
			t.Fatalf("--best-effort probe: exit %d, %d verdicts\nstderr: %s", r.code, len(vs), r.stderr)
		}
		// Without a mount namespace the host's own /run, /dev and the
		// hidden file itself stand where the sandbox's covers would be:
		// Landlock alone keeps them.
		blocked(t, vs[:3], "EACCES")
		blocked(t, vs[3:5], "EPERM")
		allowed(t, vs[5:])
		unchanged(t, target, before)
		if _, err := os.Stat(run); err == nil {
			t.Errorf("%s was created on the host", run)
		}
		// What the JSON claims is what the command got: the profile
		// Landlock enforces and the Unix-socket refusal of the filter,
		// which need no namespaces, are still there and said so.
		r = e.withoutUserNamespaces(forgebox, "run", "--best-effort", "--json", "--", probe, "socket unix")
		res := decodeResult(t, r.stdout)
		if res.Enforced == nil || res.Enforced.Profile != "workspace" || res.Enforced.UnixSockets != "refused" || res.Enforced.Sandbox {
			t.Errorf("--best-effort enforced = %+v; want profile workspace, unix_sockets refused, sandbox false", res.Enforced)
		}
		if vs := decodeVerdicts(t, res.Stdout); len(vs) != 1 || vs[0].OK || vs[0].Errno != "EPERM" {
			t.Errorf("socket(AF_UNIX) under --best-effort: %+v; want EPERM, as enforced says", vs)
		}
	})
}

// doctorReport is the part of forgebox doctor --json the tests read.
type doctorReport struct {
	Checks []struct {
		Name     string `json:"name"`
		OK       bool   `json:"ok"`
		Detail   string `json:"detail"`
		Required bool   `json:"required"`
	} `json:"checks"`
	Fixes map[string]string `json:"fixes"`
}

func (d doctorReport) check(name string) (ok, found bool, detail string) {
	for _, c := range d.Checks {
		if c.Name == name {
			return c.OK, true, c.Detail
		}
	}
	return false, false, ""
}

// forgebox doctor --json is valid JSON and finds this host able to run
// sandboxes; where namespaces are refused it says so and how to fix it.
func TestDoctor(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.run([]string{"doctor", "--json"})
		var d doctorReport
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("forgebox doctor --json: %v\n%s", err, r.stdout)
		}
		if r.code != 0 {
			t.Errorf("forgebox doctor --json: exit %d; want 0", r.code)
		}
		for _, name := range []string{"user_namespaces", "sandbox_launch", "landlock", "seccomp"} {
			if ok, found, detail := d.check(name); !ok {
				t.Errorf("doctor check %s: ok %v, found %v (%s); want ok on this machine", name, ok, found, detail)
			}
		}
		// Cgroups are reported, not required: limits fall back to rlimits
		// or are reported as not enforced.
		for _, c := range d.Checks {
			want := c.Name != "cgroups"
			if c.Required != want {
				t.Errorf("doctor check %s: required %v; want %v", c.Name, c.Required, want)
			}
		}
		if r := e.run([]string{"doctor"}); r.code != 0 || !strings.Contains(r.stdout, "sandbox_launch") {
			t.Errorf("forgebox doctor: exit %d, stdout %q", r.code, r.stdout)
		}

		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Logf("cannot refuse user namespaces here (exit %d): doctor's diagnosis of that is not tested", r.code)
			return
		}
		r = e.withoutUserNamespaces(forgebox, "doctor", "--json")
		d = doctorReport{}
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("forgebox doctor --json without namespaces: %v\n%s", err, r.stdout)
		}
		if ok, _, _ := d.check("sandbox_launch"); ok || r.code == 0 {
			t.Errorf("doctor without user namespaces: exit %d, sandbox_launch ok %v; want a failure", r.code, ok)
		}
		if d.Fixes["user_namespaces"] == "" && d.Fixes["sandbox_launch"] == "" {
			t.Errorf("doctor without user namespaces: fixes %v; want advice", d.Fixes)
		}
	})
}

// Without a PID namespace the tree is still killed: on timeout, and when
// forgebox itself is killed. PID 1 is asked to kill the tree it adopted,
// setsid'd and double-forked children included.
func TestBestEffortStillKillsTheTree(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
		}
		m := marker()
		r := e.withoutUserNamespaces(forgebox, "run", "--best-effort", "--timeout", "1", "--grace", "200ms", "-c",
			"(setsid sleep "+m+" &); sleep "+m+" & sleep "+m)
		if r.code != 124 {
			t.Errorf("exit %d; want 124\nstderr: %s", r.code, r.stderr)
		}
		noProcesses(t, m)

		// forgebox itself killed: PID 1 gets a parent-death signal and
		// kills the tree, including the part that left the session.
		m = marker()
		fb := forgebox + " run --best-effort -c '(setsid sleep " + m + " &); sleep " + m + " & sleep " + m + "'"
		r = e.withoutUserNamespaces("sh", "-c", fb+" & sleep 1; kill -9 $!; wait; echo killed")
		if !strings.Contains(r.stdout, "killed") {
			t.Errorf("the kill did not happen: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		noProcesses(t, m)
	})
}

// --net none without a network namespace of its own (--best-effort, user
// namespaces refused) would use the host's loopback, with the host's
// services on it: Landlock denies TCP bind and connect then, as it says.
func TestBestEffortNetNoneDeniesHostTCP(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		if r := e.withoutUserNamespaces("unshare", "-U", "true"); r.code == 0 || r.code == 99 {
			t.Skipf("cannot refuse user namespaces this way here (exit %d: %s)", r.code, r.stderr)
		}
		l := listenTCP(t, "127.0.0.1:0")
		addr := l.l.Addr().String()
		r := e.withoutUserNamespaces(forgebox, "run", "--best-effort", "--json", "--", probe, "connect-tcp "+addr, "serve-loopback")
		res := decodeResult(t, r.stdout)
		if en := res.Enforced; en == nil || en.Sandbox || !en.LandlockTCP {
			t.Fatalf("--best-effort without namespaces: enforced sandbox %v, landlock_tcp_denied %v; want sandbox false, landlock_tcp_denied true\nstderr: %s", en != nil && en.Sandbox, en != nil && en.LandlockTCP, r.stderr)
		}
		vs := decodeVerdicts(t, res.Stdout)
		if len(vs) != 2 {
			t.Fatalf("probe gave %d verdicts: %s", len(vs), res.Stdout)
		}
		blocked(t, vs, "EACCES")
		l.wantAccepted(t, addr, 0)
	})
}
