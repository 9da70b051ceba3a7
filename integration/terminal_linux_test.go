package integration

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// terminal is a pseudo-terminal standing in for the user's: forgebox gets
// the slave, the test plays the user on the master.
type terminal struct {
	master, slave *os.File
	out           *syncBuffer // everything forgebox wrote to the terminal
}

func openTerminal(t *testing.T, rows, cols uint16) *terminal {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal for the test: %v", err)
	}
	tm := &terminal{master: master, slave: slave, out: &syncBuffer{}}
	if err := pty.Setsize(master, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(tm.out, master)
		close(done)
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
		<-done
	})
	return tm
}

func (tm *terminal) termios(t *testing.T) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tm.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return *tio
}

// text is what forgebox printed, without carriage returns.
func (tm *terminal) text() string { return strings.ReplaceAll(tm.out.String(), "\r", "") }

// verdicts are the probe's lines among what the terminal shows (which also
// echoes input).
func (tm *terminal) verdicts(t *testing.T) []verdict {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(tm.text(), "\n") {
		if strings.HasPrefix(l, "{") {
			lines = append(lines, l)
		}
	}
	return decodeVerdicts(t, strings.Join(lines, "\n"))
}

// waitText waits for s to appear on the terminal.
func (tm *terminal) waitText(t *testing.T, r *running, s string) {
	t.Helper()
	if !waitFor(10*time.Second, func() bool { return strings.Contains(tm.text(), s) || r.exited() }) || !strings.Contains(tm.text(), s) {
		t.Fatalf("the terminal never showed %q; it shows %q\nstderr: %s", s, tm.text(), r.stderr)
	}
}

// pendingInput returns what is waiting to be read on the terminal, the way
// the user's shell would read it after forgebox exits.
func (tm *terminal) pendingInput(t *testing.T) string {
	t.Helper()
	fd := int(tm.slave.Fd())
	tio := tm.termios(t)
	tio.Lflag &^= unix.ICANON | unix.ECHO
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 0, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &tio); err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 256)
	for {
		n, err := syscall.Read(fd, buf)
		if n <= 0 || err != nil {
			return string(got)
		}
		got = append(got, buf[:n]...)
	}
}

// noInjectedInput asserts that nothing waits in the terminal's input, and
// proves the check can see input by typing some on the master.
func (tm *terminal) noInjectedInput(t *testing.T) {
	t.Helper()
	if in := tm.pendingInput(t); in != "" {
		t.Errorf("the caller's terminal received input %q from the command", in)
	}
	tm.master.Write([]byte("typed"))
	if !waitFor(2*time.Second, func() bool { return strings.Contains(tm.pendingInput(t), "typed") }) {
		t.Errorf("control: input typed on the terminal is not seen by the check")
	}
}

// onTerminal gives forgebox the terminal as stdout and stderr, and as
// stdin unless stdin is false (then stdin is /dev/null). forgebox runs in
// a session of its own, as under a terminal emulator.
func onTerminal(tm *terminal, stdin bool) runOpt {
	return func(c *exec.Cmd) {
		c.Stdin = nil
		if stdin {
			c.Stdin = tm.slave
		}
		c.Stdout, c.Stderr = tm.slave, tm.slave
		c.SysProcAttr.Setsid = true
	}
}

// With a terminal, the command runs on a pseudo-terminal of the sandbox's
// own, as the controlling terminal of a new session, with the caller's
// window size.
func TestCommandGetsItsOwnTerminal(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		tm := openTerminal(t, 40, 100)
		r := e.start([]string{"run", "-c", "tty; stty size; echo end"}, onTerminal(tm, true))
		res := r.wait(t, 20*time.Second)
		out := tm.text()
		if res.code != 0 || !strings.Contains(out, "end") {
			t.Fatalf("exit %d; terminal shows %q", res.code, out)
		}
		if !strings.Contains(out, "/dev/pts/0\n") {
			t.Errorf("tty printed %q; want /dev/pts/0 (the sandbox's own devpts)", out)
		}
		if !strings.Contains(out, "40 100\n") {
			t.Errorf("stty size printed %q; want 40 100", out)
		}

		tm = openTerminal(t, 40, 100)
		r = e.start([]string{"run", "--", probe, "session", "fds"}, onTerminal(tm, true))
		r.wait(t, 20*time.Second)
		vs := tm.verdicts(t)
		if len(vs) != 2 {
			t.Fatalf("probe output on the terminal: %q", tm.text())
		}
		f := map[string]int{}
		for _, kv := range strings.Fields(vs[0].Out) {
			k, v, _ := strings.Cut(kv, "=")
			f[k], _ = strconv.Atoi(v)
		}
		if f["sid"] != f["pid"] || f["tcsid"] != f["sid"] || f["tcpgrp"] != f["pgid"] {
			t.Errorf("probe session = %q; want the command to lead a new session whose controlling terminal is fd 0", vs[0].Out)
		}
		for _, fd := range []string{"0=/dev/pts/0", "1=/dev/pts/0", "2=/dev/pts/0"} {
			if !strings.Contains(","+vs[1].Out+",", ","+fd+",") {
				t.Errorf("probe fds = %q; want %s", vs[1].Out, fd)
			}
		}
		if n := strings.Count(vs[1].Out, "pts"); n != 3 {
			t.Errorf("probe fds = %q: %d descriptors on terminals; want only 0, 1 and 2", vs[1].Out, n)
		}
	})
}

// --pty gives a pseudo-terminal even when stdin is not one.
func TestPTYFlag(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		r := e.run([]string{"run", "--pty", "--", "tty"})
		if r.code != 0 || strings.TrimSpace(r.stdout) != "/dev/pts/0" {
			t.Errorf("forgebox run --pty -- tty: exit %d, stdout %q; want /dev/pts/0", r.code, r.stdout)
		}
		r = e.run([]string{"run", "--", "tty"})
		if strings.Contains(r.stdout, "/dev/pts") {
			t.Errorf("forgebox run -- tty without a terminal: stdout %q; want not a tty", r.stdout)
		}
	})
}

// The caller's terminal is raw while the command runs and restored
// afterwards, however the run ends.
func TestTerminalRestored(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, c := range []struct {
			name   string
			args   []string
			signal syscall.Signal
			code   int
		}{
			{"exit", []string{"-c", "echo ready; sleep 0.3; exit 3"}, 0, 3},
			{"timeout", []string{"--timeout", "1s", "--grace", "200ms", "-c", "echo ready; sleep 100"}, 0, 124},
			{"crash", []string{"-c", "echo ready; sleep 0.3; kill -SEGV $$"}, 0, 139},
			{"SIGTERM to forgebox", []string{"--grace", "200ms", "-c", "echo ready; sleep 100"}, syscall.SIGTERM, 143},
		} {
			t.Run(c.name, func(t *testing.T) {
				tm := openTerminal(t, 24, 80)
				before := tm.termios(t)
				r := e.start(append([]string{"run"}, c.args...), onTerminal(tm, true))
				tm.waitText(t, r, "ready")
				raw := func() bool { return tm.termios(t).Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) == 0 }
				if !waitFor(2*time.Second, raw) {
					t.Errorf("during the run lflag = %#o; want raw mode (no ICANON, ECHO, ISIG)", tm.termios(t).Lflag)
				}
				if c.signal != 0 {
					settle()
					r.signal(t, c.signal)
				}
				res := r.wait(t, 20*time.Second)
				if res.code != c.code {
					t.Errorf("exit %d; want %d\nterminal: %q", res.code, c.code, tm.text())
				}
				if after := tm.termios(t); after != before {
					t.Errorf("terminal not restored after %s:\n before %+v\n after  %+v", c.name, before, after)
				}
			})
		}
	})
}

// A resize of the caller's terminal reaches the command.
func TestWindowResize(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		tm := openTerminal(t, 40, 100)
		line := `echo ready
for i in $(seq 200); do
  s=$(stty size)
  if [ "$s" = "50 120" ]; then echo resized; exit 0; fi
  sleep 0.05
done
echo "still $s"; exit 1`
		r := e.start([]string{"run", "-c", line}, onTerminal(tm, true))
		tm.waitText(t, r, "ready")
		settle()
		if err := pty.Setsize(tm.master, &pty.Winsize{Rows: 50, Cols: 120}); err != nil {
			t.Fatal(err)
		}
		r.signal(t, syscall.SIGWINCH)
		res := r.wait(t, 20*time.Second)
		if res.code != 0 || !strings.Contains(tm.text(), "resized") {
			t.Errorf("exit %d, terminal %q; want the command to see 50 120", res.code, tm.text())
		}
	})
}

// Ctrl-C typed on the caller's terminal interrupts the command.
func TestCtrlCInterrupts(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		tm := openTerminal(t, 24, 80)
		m := marker()
		r := e.start([]string{"run", "-c", "echo ready; sleep " + m}, onTerminal(tm, true))
		tm.waitText(t, r, "ready")
		begin := time.Now()
		if _, err := tm.master.Write([]byte{3}); err != nil {
			t.Fatal(err)
		}
		res := r.wait(t, 10*time.Second)
		if res.code != 130 {
			t.Errorf("after Ctrl-C: exit %d; want 130 (SIGINT)\nterminal: %q", res.code, tm.text())
		}
		if took := time.Since(begin); took > 5*time.Second {
			t.Errorf("Ctrl-C took %v to end the command", took)
		}
		noProcesses(t, m)
	})
}

// With the caller's terminal as stdout only (pipe mode), the command never
// holds a descriptor of it: TIOCSTI has nothing to push into and /dev/tty
// leads nowhere. Nothing lands in the terminal's input.
func TestNoTerminalInjectionInPipeMode(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		tm := openTerminal(t, 24, 80)
		r := e.start([]string{"run", "--", probe,
			`tiocsti 0 id\n`, `tiocsti 1 id\n`, `tiocsti 2 id\n`, "open-tty", `tiocsti tty id\n`, "fds"}, onTerminal(tm, false))
		res := r.wait(t, 20*time.Second)
		vs := tm.verdicts(t)
		if res.code != 0 || len(vs) != 6 {
			t.Fatalf("exit %d, terminal %q", res.code, tm.text())
		}
		blocked(t, vs[:3], "ENOTTY", "EPERM", "EIO")
		blocked(t, vs[3:5], "ENXIO")
		if strings.Contains(vs[5].Out, "pts") || strings.Contains(vs[5].Out, "tty") {
			t.Errorf("probe fds = %q; want no terminal among the command's descriptors", vs[5].Out)
		}
		tm.noInjectedInput(t)
	})
}

// In PTY mode, TIOCSTI reaches only the sandbox's own terminal: the
// caller's terminal receives nothing.
func TestNoTerminalInjectionInPTYMode(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		tm := openTerminal(t, 24, 80)
		// --no-stdin: forgebox does not read the caller's terminal, so
		// anything injected there would wait in its input queue.
		r := e.start([]string{"run", "--no-stdin", "--", probe, `tiocsti 0 id\n`, `tiocsti tty id\n`, "fds"}, onTerminal(tm, true))
		res := r.wait(t, 20*time.Second)
		// The terminal's reader may still be copying what forgebox wrote.
		waitFor(5*time.Second, func() bool { return strings.Count(tm.text(), `{"op"`) >= 3 })
		vs := tm.verdicts(t)
		if res.code != 0 || len(vs) != 3 {
			t.Fatalf("exit %d, terminal %q", res.code, tm.text())
		}
		if !strings.HasPrefix(vs[2].Out, "0=/dev/pts/0,1=/dev/pts/0,2=/dev/pts/0") {
			t.Errorf("probe fds = %q; want 0-2 on the sandbox's /dev/pts/0", vs[2].Out)
		}
		tm.noInjectedInput(t)
	})
}

// forgebox shell is an interactive shell in the sandbox on the person's
// terminal: what they type runs there, a write outside the workspace
// fails, and the shell's exit status is forgebox's.
func TestShellOnTerminal(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		tm := openTerminal(t, 30, 100)
		victim := "/usr/forgebox-shell-" + marker()
		r := e.start([]string{"shell"}, onTerminal(tm, true))
		tm.master.Write([]byte("echo answer=$((6*7)); touch " + victim + "; echo wrote=$?\n"))
		tm.waitText(t, r, "wrote=")
		tm.master.Write([]byte("exit 3\n"))
		res := r.wait(t, 20*time.Second)
		out := tm.text()
		if res.code != 3 || !strings.Contains(out, "answer=42") || !strings.Contains(out, "wrote=1") {
			t.Errorf("exit %d; terminal shows %q; want exit 3, answer=42 and a failed write", res.code, out)
		}
		if _, err := os.Stat(victim); err == nil {
			os.Remove(victim)
			t.Errorf("the shell wrote %s on the host", victim)
		}
	})
}
