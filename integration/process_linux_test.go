package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapees starts sleeps that try to outlive the command in every usual
// way: in the background, double-forked, in a new session, under nohup.
// It returns the command line and the markers to look for on the host.
func escapees() (string, []string) {
	m := []string{marker(), marker(), marker(), marker(), marker()}
	line := fmt.Sprintf(`sleep %s &
(sleep %s &) &
setsid sleep %s &
nohup sleep %s >/dev/null 2>&1 &
setsid sh -c 'sleep %s & exit' &`, m[0], m[1], m[2], m[3], m[4])
	return line, m
}

// --timeout kills the whole tree, however its processes tried to escape,
// and exits 124.
func TestTimeoutKillsTheTree(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, d := range []string{"1s", "1"} {
			line, markers := escapees()
			begin := time.Now()
			r := e.run([]string{"run", "--timeout", d, "-c", line + "\nsleep " + marker()})
			took := time.Since(begin)
			if r.code != 124 {
				t.Errorf("--timeout %s: exit %d; want 124\nstderr: %s", d, r.code, r.stderr)
			}
			if took < time.Second || took > 10*time.Second {
				t.Errorf("--timeout %s: the run took %v", d, took)
			}
			if !strings.Contains(r.stderr, "forgebox: ") || !strings.Contains(r.stderr, "timed out") {
				t.Errorf("--timeout %s: stderr %q; want a forgebox: message saying it timed out", d, r.stderr)
			}
			for _, m := range markers {
				noProcesses(t, m)
			}
		}
	})
}

// --idle-timeout kills a command that went quiet, whether its output is
// captured (--json) or handed to a file, and spares one that keeps
// printing for longer than the idle period in all.
func TestIdleTimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		m := marker()
		quiet := "echo a; sleep 0.3; echo b; sleep " + m
		begin := time.Now()
		r := e.run([]string{"run", "--json", "--idle-timeout", "1s", "-c", quiet})
		took := time.Since(begin)
		var res struct {
			ExitCode     int    `json:"exit_code"`
			TimedOut     bool   `json:"timed_out"`
			IdleTimedOut bool   `json:"idle_timed_out"`
			Stdout       string `json:"stdout"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("--json: %v\nstdout: %s", err, r.stdout)
		}
		if res.ExitCode != 124 || !res.TimedOut || !res.IdleTimedOut || res.Stdout != "a\nb\n" {
			t.Errorf("quiet command: %+v; want exit 124, timed out for idleness, output a b", res)
		}
		if took < 1300*time.Millisecond || took > 8*time.Second {
			t.Errorf("quiet command: the run took %v; want about 1.3 s", took)
		}
		noProcesses(t, m)

		// Handed over: stdout is a file, which forgebox then copies.
		out := filepath.Join(t.TempDir(), "out")
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		r = e.run([]string{"run", "--idle-timeout", "1s", "-c", quiet}, func(c *exec.Cmd) { c.Stdout = f })
		f.Close()
		if got, _ := os.ReadFile(out); r.code != 124 || string(got) != "a\nb\n" || !strings.Contains(r.stderr, "--idle-timeout") {
			t.Errorf("handed-over stdout: exit %d, file %q, stderr %q; want 124, a b, a message naming --idle-timeout", r.code, got, r.stderr)
		}

		busy := "for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.2; done"
		if r := e.run([]string{"run", "--idle-timeout", "1s", "-c", busy}); r.code != 0 || !strings.HasSuffix(r.stdout, "8\n") {
			t.Errorf("busy command: exit %d, stdout %q; want 0 and all 8 lines", r.code, r.stdout)
		}
	})
}

// A command that ignores SIGTERM is still killed at the timeout, after the
// grace period.
func TestTimeoutKillsCommandIgnoringSignals(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		m := marker()
		begin := time.Now()
		r := e.run([]string{"run", "--timeout", "500ms", "--grace", "500ms", "-c", "trap '' TERM INT HUP; sleep " + m + "; sleep " + m})
		if r.code != 124 {
			t.Errorf("exit %d; want 124\nstderr: %s", r.code, r.stderr)
		}
		if took := time.Since(begin); took > 8*time.Second {
			t.Errorf("the run took %v; want about 1s (timeout + grace)", took)
		}
		noProcesses(t, m)
	})
}

// When the command exits, what it left running in the background goes
// with it.
func TestLeftoversKilledWhenCommandExits(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		line, markers := escapees()
		begin := time.Now()
		r := e.run([]string{"run", "-c", line + "\necho done"})
		if r.code != 0 || r.stdout != "done\n" {
			t.Errorf("exit %d, stdout %q; want 0 and done", r.code, r.stdout)
		}
		if took := time.Since(begin); took > 10*time.Second {
			t.Errorf("forgebox waited %v for the leftovers", took)
		}
		for _, m := range markers {
			noProcesses(t, m)
		}
	})
}

// SIGINT and SIGTERM sent to forgebox reach the command, which may handle
// them and exit on its own terms.
func TestSignalsAreForwarded(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			name := strings.TrimPrefix(sigName(sig), "SIG")
			got, ready := filepath.Join(e.ws, "got-"+name), filepath.Join(e.ws, "ready-"+name)
			m := marker()
			line := fmt.Sprintf(`trap 'echo %s > %s; exit 3' %s
sleep %s &
echo > %s
wait`, name, got, name, m, ready)
			r := e.start([]string{"run", "--no-undo", "-c", line})
			waitFile(t, r, ready, 10*time.Second)
			settle()
			r.signal(t, sig)
			res := r.wait(t, 10*time.Second)
			if res.code != 3 {
				t.Errorf("%s to forgebox: exit %d; want 3 (the trap's)\nstderr: %s", name, res.code, res.stderr)
			}
			if s := snap(t, got); s.content != name+"\n" {
				t.Errorf("%s to forgebox: the command's trap did not run (%s: %+v)", name, got, s)
			}
			noProcesses(t, m)
		}
	})
}

// A command that ignores SIGTERM is killed after the grace period; a
// second SIGTERM or SIGINT kills it at once.
func TestIgnoredSignalThenKill(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, c := range []struct {
			name   string
			grace  string
			second bool
			within time.Duration
		}{
			{"grace", "500ms", false, 6 * time.Second},
			{"second signal", "60s", true, 6 * time.Second},
		} {
			ready := filepath.Join(e.ws, "ready-"+strings.ReplaceAll(c.name, " ", "-"))
			m := marker()
			r := e.start([]string{"run", "--no-undo", "--grace", c.grace, "-c", "trap '' TERM INT; echo > " + ready + "; sleep " + m + "; sleep " + m})
			waitFile(t, r, ready, 10*time.Second)
			settle()
			begin := time.Now()
			r.signal(t, syscall.SIGTERM)
			if c.second {
				time.Sleep(300 * time.Millisecond)
				if r.exited() {
					t.Fatalf("%s: forgebox exited on the first SIGTERM although the command ignores it and the grace is %s", c.name, c.grace)
				}
				r.signal(t, syscall.SIGTERM)
			}
			res := r.wait(t, 30*time.Second)
			if took := time.Since(begin); took > c.within {
				t.Errorf("%s: forgebox took %v to end the command; want under %v", c.name, took, c.within)
			}
			if res.code != 137 {
				t.Errorf("%s: exit %d; want 137 (SIGKILL)\nstderr: %s", c.name, res.code, res.stderr)
			}
			noProcesses(t, m)
		}
	})
}

// If forgebox itself is killed, nothing it started survives.
func TestForgeboxKilledTakesTheTree(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		line, markers := escapees()
		ready := filepath.Join(e.ws, "ready")
		r := e.start([]string{"run", "--no-undo", "-c", line + "\necho > " + ready + "\nsleep " + markers[0]})
		waitFile(t, r, ready, 10*time.Second)
		for _, m := range markers {
			if !waitFor(5*time.Second, func() bool { return len(processesWith("sleep\x00"+m)) > 0 }) {
				t.Fatalf("sleep %s is not running: the test would prove nothing", m)
			}
		}
		r.signal(t, syscall.SIGKILL)
		r.wait(t, 10*time.Second)
		for _, m := range markers {
			noProcesses(t, m)
		}
	})
}

// The command runs as the caller, in its own UTS namespace, with no
// capabilities and no way to gain privileges.
func TestIdentityAndPrivileges(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		mnt := filepath.Join(e.ws, "mnt")
		e.mkdir(mnt)
		vs := e.probe(nil, "hostname", "id", "read /proc/self/status", "mknod "+filepath.Join(e.ws, "dev"), "mount-tmpfs "+mnt)
		if vs[4].OK {
			// Had the sandbox failed, the mount would be the host's.
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
		if vs[0].Out != "forgebox" {
			t.Errorf("probe hostname = %q; want forgebox", vs[0].Out)
		}
		if want := fmt.Sprintf("%d,%d,%d", e.m.uid, e.m.gid, e.m.uid); vs[1].Out != want {
			t.Errorf("probe id = %q; want %s (the caller's own ids)", vs[1].Out, want)
		}
		status := map[string]string{}
		for _, l := range strings.Split(vs[2].Out, "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				status[k] = strings.TrimSpace(v)
			}
		}
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			if status[k] != "0000000000000000" {
				t.Errorf("/proc/self/status %s = %q; want no capabilities", k, status[k])
			}
		}
		if status["NoNewPrivs"] != "1" {
			t.Errorf("/proc/self/status NoNewPrivs = %q; want 1", status["NoNewPrivs"])
		}
		blocked(t, vs[3:], "EPERM")
		if host, _ := os.Hostname(); host == "forgebox" {
			t.Errorf("the host's hostname became forgebox")
		}
	})
}

// The exit status says how the command ended.
func TestExitCodes(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		notExec := filepath.Join(e.ws, "script.sh")
		e.write(notExec, "#!/bin/sh\necho ran\n")
		cases := []struct {
			name string
			args []string
			code int
		}{
			{"success", []string{"--", "true"}, 0},
			{"status", []string{"-c", "exit 42"}, 42},
			{"SIGTERM", []string{"-c", "kill -TERM $$"}, 128 + 15},
			{"SIGSEGV", []string{"-c", "kill -SEGV $$"}, 128 + 11},
			{"SIGKILL", []string{"-c", "kill -KILL $$"}, 128 + 9},
			{"not executable", []string{"--", notExec}, 126},
			{"directory", []string{"--", e.ws}, 126},
			{"not found", []string{"--", "forgebox-no-such-program"}, 127},
			{"not found by path", []string{"--", filepath.Join(e.ws, "missing")}, 127},
			{"not found in the shell", []string{"-c", "forgebox-no-such-program"}, 127},
		}
		for _, c := range cases {
			r := e.run(append([]string{"run"}, c.args...))
			if r.code != c.code {
				t.Errorf("%s: forgebox run %q: exit %d; want %d\nstderr: %s", c.name, c.args, r.code, c.code, r.stderr)
			}
			if strings.Contains(r.stdout, "ran") {
				t.Errorf("%s: the file ran", c.name)
			}
			if c.code == 126 || (c.code == 127 && c.args[0] == "--") {
				forgeboxOnly(t, r.stderr) // the command never ran: only forgebox speaks
			}
		}
	})
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return "SIG" + strconv.Itoa(int(s))
}

// A signal that arrives as soon as the command has started (it already
// ran code: it wrote a file) is forwarded too, not turned into a kill.
func TestEarlySignalIsForwarded(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		const tries = 50
		killed := 0
		for i := range tries {
			got, ready := filepath.Join(e.ws, fmt.Sprintf("got-%d", i)), filepath.Join(e.ws, fmt.Sprintf("ready-%d", i))
			r := e.start([]string{"run", "--no-undo", "-c", fmt.Sprintf("trap 'echo TERM > %s; exit 3' TERM; echo > %s; while :; do sleep 0.01; done", got, ready)})
			// Poll tightly: the point is to signal soon after the start.
			deadline := time.Now().Add(10 * time.Second)
			for _, err := os.Stat(ready); err != nil && time.Now().Before(deadline) && !r.exited(); _, err = os.Stat(ready) {
				time.Sleep(100 * time.Microsecond)
			}
			r.signal(t, syscall.SIGTERM)
			res := r.wait(t, 10*time.Second)
			if res.code != 3 {
				killed++
				t.Logf("try %d: exit %d (%s); the trap ran: %v", i, res.code, strings.TrimSpace(res.stderr), snap(t, got).exists)
			}
		}
		if killed > 0 {
			t.Errorf("%d of %d SIGTERMs sent to forgebox right after the command started (its trap set, a file written) did not reach the command's trap; want every one forwarded", killed, tries)
		}
	})
}

// settle lets forgebox learn that the command started before a test
// signals it: a signal in the first moments after the start is
// TestEarlySignalIsForwarded's subject, not the other tests'.
func settle() { time.Sleep(200 * time.Millisecond) }

// The command inherits its three standard streams and no other descriptor
// of forgebox's (a leaked directory descriptor would lead around the view).
func TestOnlyStdioInherited(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, flags := range [][]string{nil, {"--json"}, {"--pty"}} {
			r := e.run(append(append([]string{"run"}, flags...), "-c", "ls /proc/$$/fd; true"))
			out := r.stdout
			if len(flags) > 0 && flags[0] == "--json" {
				out = decodeResult(t, r.stdout).Stdout
			}
			fds := strings.Fields(out)
			if r.code != 0 || !slices.Equal(fds, []string{"0", "1", "2"}) {
				t.Errorf("forgebox run %v: the shell's descriptors are %q (exit %d); want only 0 1 2", flags, fds, r.code)
			}
		}
	})
}

// Started with SIGINT ignored (as a background job of a script is),
// forgebox still forwards SIGINT: the command gets default dispositions,
// so its trap can catch it.
func TestIgnoredSignalsAreReset(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		got := filepath.Join(e.ws, "got")
		r := e.start([]string{"run", "--no-undo", "-c", "trap 'echo int > got; exit 0' INT; echo ready > ready; sleep 10 & wait"},
			func(c *exec.Cmd) {
				c.Path, c.Args = "/bin/sh", []string{"sh", "-c", `trap "" INT; exec "$0" "$@"`, forgebox, "run", "--no-undo", "-c",
					"trap 'echo int > got; exit 0' INT; echo ready > ready; sleep 10 & wait"}
			})
		waitFile(t, r, filepath.Join(e.ws, "ready"), 10*time.Second)
		r.signal(t, syscall.SIGINT)
		res := r.wait(t, 10*time.Second)
		if s := snap(t, got); !s.exists {
			t.Errorf("the command's SIGINT trap did not run (exit %d, stderr %q)", res.code, res.stderr)
		}
	})
}
