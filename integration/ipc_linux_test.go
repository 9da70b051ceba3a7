package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// unixSockets lets the probe create Unix sockets: by default the seccomp
// filter refuses socket(AF_UNIX) (TestLateHostSocketUnreachable), and these
// tests are about the covers, the only defence left with the opt-in.
var unixSockets = []string{"--allow-unix-sockets"}

// Every pathname socket bound on the host when forgebox starts is covered,
// wherever it is: in the home directory, elsewhere outside, even inside the
// workspace. The listener must accept nothing from inside.
//
// The socket tests run their modes one after the other: a socket that
// vanishes while another sandbox starts can break that start (see
// TestHostSocketChurn).
func TestHostSocketsAreCovered(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		deep := filepath.Join(e.ws, "d")
		e.mkdir(deep)
		paths := []string{
			filepath.Join(e.home, "agent.sock"),
			filepath.Join(e.outside, "s.sock"),
			filepath.Join(e.ws, "s.sock"),
			filepath.Join(deep, "s.sock"),
		}
		var ls []*listener
		var ops []string
		for _, p := range paths {
			ls = append(ls, e.listenUnix(p))
			ops = append(ops, "connect-unix "+p)
		}
		allowed(t, e.probeHost(ops...)) // the control: one connection each
		blocked(t, e.probe(unixSockets, ops...), "ECONNREFUSED", "ENOENT", "EACCES")
		// Sharing the host's network does not make its sockets reachable.
		blocked(t, e.probe(append(unixSockets, "--net", "host"), ops...), "ECONNREFUSED", "ENOENT", "EACCES")
		for i, l := range ls {
			l.wantAccepted(t, paths[i], 1)
		}
		_, res := e.runJSON([]string{"--", "true"})
		for _, p := range paths {
			if res.Enforced == nil || !slices.Contains(res.Enforced.Sockets, p) {
				t.Errorf("enforced.sockets_hidden does not list %s", p)
			}
		}
	})
}

// A socket bound by a relative name (a daemon that chdir'ed into its
// runtime directory first) is listed in /proc/net/unix without its
// directory. It is a host socket all the same: forgebox finds it through
// the working directory of the process holding it (here the user's own
// daemon).
func TestRelativelyBoundSocketIsCovered(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		l := e.listenUnixRelative(e.outside, "rel.sock", true)
		op := "connect-unix " + l.path
		allowed(t, e.probeHost(op))
		blocked(t, e.probe(unixSockets, op), "ECONNREFUSED", "ENOENT", "EACCES")
		l.wantAccepted(t, 1)
	})
}

// A relatively bound socket held by another user's process cannot be
// located by an unprivileged caller (its /proc entries are not readable):
// forgebox says so instead of staying silent.
func TestUnlocatableSocketIsReported(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs two users: run the tests as root to have the listener belong to another user than forgebox")
	}
	for _, m := range modes(t) {
		if m.root() {
			continue
		}
		e := newEnv(t, m)
		e.listenUnixRelative(e.outside, "theirs.sock", false)
		r := e.run([]string{"run", "--", "true"})
		if r.code != 0 || !strings.Contains(r.stderr, "forgebox: warning:") || !strings.Contains(r.stderr, "theirs.sock") {
			t.Errorf("exit %d, stderr %q; want a warning naming the socket it could not cover", r.code, r.stderr)
		}
	}
}

// Sockets under the host's /run and /tmp are not even visible: those
// directories are private.
func TestRunAndTmpSocketsInvisible(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		name := "fbt-" + strings.ReplaceAll(marker(), ".", "") + ".sock"
		var ls []*listener
		var paths, ops []string
		for _, d := range []string{"/tmp", "/run"} {
			p := filepath.Join(d, name)
			if _, err := os.Stat(d); err != nil {
				continue
			}
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Logf("cannot bind in the host's %s: %v", d, err)
				continue
			}
			l.Close() // reopened by listenUnix, which also chowns it
			os.Remove(p)
			ls = append(ls, e.listenUnix(p))
			paths = append(paths, p)
			ops = append(ops, "connect-unix "+p, "stat "+p)
		}
		if len(ops) == 0 {
			t.Skip("cannot bind sockets in /tmp or /run")
		}
		allowed(t, e.probeHost(ops...))
		blocked(t, e.probe(unixSockets, ops...), "ENOENT")
		for i, l := range ls {
			l.wantAccepted(t, paths[i], 1)
		}
	})
}

// Abstract sockets live in the network namespace: with the default
// --net none the host's are out of reach.
func TestAbstractSocketsIsolatedWithoutNetwork(t *testing.T) {
	abstractSocketRefused(t, nil, "ECONNREFUSED")
}

// With --net host the host's abstract sockets share the namespace, and
// Landlock's scoping (ABI 6+) is what still refuses connecting to them.
func TestAbstractSocketsScopedWithHostNetwork(t *testing.T) {
	abstractSocketRefused(t, []string{"--net", "host"}, "EPERM")
}

// abstractSocketRefused listens on a host abstract socket, checks the host
// reaches it, and that the command run with flags is refused with errno
// and never connected.
func abstractSocketRefused(t *testing.T, flags []string, errno string) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		name := "forgebox-test-" + marker()
		ln, err := net.Listen("unix", "@"+name)
		if err != nil {
			t.Fatal(err)
		}
		l := serve(t, ln)
		op := "connect-abstract " + name
		allowed(t, e.probeHost(op))
		blocked(t, e.probe(append(flags, unixSockets...), op), errno)
		l.wantAccepted(t, "@"+name, 1)
	})
}

// The view hides the host's sockets even from a command that knows where
// they are and tries the path through a symlink it made itself.
func TestSocketThroughSymlinkIsCovered(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		p := filepath.Join(e.outside, "d.sock")
		l := e.listenUnix(p)
		link := filepath.Join(e.ws, "sock-link")
		vs := e.probe(unixSockets, "symlink "+p+" "+link, "connect-unix "+link)
		outcomeIs(t, vs[0], "ok")
		outcomeIs(t, vs[1], "ECONNREFUSED", "ENOENT", "EACCES")
		l.wantAccepted(t, p, 0)
	})
}

// A host socket the caller cannot reach at all (in another user's private
// directory) needs no cover: the command could not connect to it either.
// Its presence must not stop forgebox from running.
func TestUnreachableSocket(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	ms := modes(t)
	forEachModeSerial(t, func(t *testing.T, e *env) {
		other := ms[0]
		if e.m.root() {
			other = ms[len(ms)-1]
		}
		private := filepath.Join(e.dir, "p")
		if err := os.Mkdir(private, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(private, other.uid, other.gid); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(private, "s")
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		l := serve(t, ln)
		if !e.m.root() {
			blocked(t, e.probeHost("connect-unix "+p), "EACCES") // out of the user's reach anyway
		}
		r := e.run([]string{"run", "--allow-unix-sockets", "--", probe, "connect-unix " + p})
		if r.code != 0 {
			t.Fatalf("forgebox run with a socket %s on the host (its directory owned by uid %d, mode 700): exit %d; want 0\nstderr: %s", p, other.uid, r.code, r.stderr)
		}
		blocked(t, decodeVerdicts(t, r.stdout), "EACCES", "ECONNREFUSED", "ENOENT")
		l.wantAccepted(t, p, 0)
	})
}

// Host sockets come and go all the time. One that disappears between
// forgebox listing it and covering it must not make the run fail.
func TestHostSocketChurn(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				l, err := net.Listen("unix", filepath.Join(e.outside, "c"+strconv.Itoa(i%8)))
				if err != nil {
					continue
				}
				time.Sleep(time.Duration(i%3) * time.Millisecond)
				l.Close()
			}
		}()
		var failures []string
		const runs = 40
		for range runs {
			r := e.run([]string{"run", "--", "true"})
			if r.code != 0 {
				failures = append(failures, fmt.Sprintf("exit %d: %s", r.code, strings.TrimSpace(r.stderr)))
			}
		}
		close(stop)
		<-done
		if len(failures) > 0 {
			t.Errorf("%d of %d runs of forgebox run -- true failed while host sockets came and went; first: %s", len(failures), runs, failures[0])
		}
	})
}

// helperMain runs when the test binary is started as a helper process
// (FORGEBOX_TEST_HELPER names the role).
func helperMain(role string) int {
	switch role {
	case "subreaper":
		return subreaperHelper()
	case "listener-above":
		return listenerAboveHelper()
	case "listen-relative":
		// Bind a socket by a relative name, as daemons that chdir into
		// their runtime directory do: /proc/net/unix then shows the
		// relative name only.
		if err := os.Chdir(os.Getenv("FORGEBOX_HELPER_DIR")); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		l, err := net.Listen("unix", os.Getenv("FORGEBOX_HELPER_NAME"))
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("ready")
		for {
			c, err := l.Accept()
			if err != nil {
				return 0
			}
			fmt.Println("accepted")
			c.Close()
		}
	}
	fmt.Fprintln(os.Stderr, "unknown helper", role)
	return 2
}

// relativeListener is a helper process listening on a socket it bound by a
// relative name.
type relativeListener struct {
	out  *syncBuffer
	path string
}

// listenUnixRelative binds dir/name by its relative name from a helper
// process: the mode's user when asUser, else the test's own (root).
func (e *env) listenUnixRelative(dir, name string, asUser bool) *relativeListener {
	e.t.Helper()
	self, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	if asUser {
		self = e.helperCopy(self)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "FORGEBOX_TEST_HELPER=listen-relative", "FORGEBOX_HELPER_DIR="+dir, "FORGEBOX_HELPER_NAME="+name)
	l := &relativeListener{out: &syncBuffer{}, path: filepath.Join(dir, name)}
	cmd.Stdout, cmd.Stderr = l.out, l.out
	if asUser {
		cmd.SysProcAttr = e.sysProcAttr()
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if !waitFor(10*time.Second, func() bool { return strings.Contains(l.out.String(), "ready") }) {
		e.t.Fatalf("relative socket helper: %s", l.out)
	}
	e.chown(l.path)
	return l
}

func (l *relativeListener) wantAccepted(t *testing.T, want int) {
	t.Helper()
	waitFor(300*time.Millisecond, func() bool { return strings.Count(l.out.String(), "accepted") >= want })
	time.Sleep(50 * time.Millisecond)
	if got := strings.Count(l.out.String(), "accepted"); got != want {
		t.Errorf("host listener on %s (bound by a relative name) accepted %d connections; want %d", l.path, got, want)
	}
}

var helperOnce sync.Once

// helperCopy puts a copy of the test binary where the unprivileged user can
// execute it (the build cache is root's own).
func (e *env) helperCopy(self string) string {
	e.t.Helper()
	dst := filepath.Join(binDir, "helper.test")
	helperOnce.Do(func() {
		if out, err := exec.Command("cp", self, dst).CombinedOutput(); err != nil {
			e.t.Fatalf("copy the test binary: %v\n%s", err, out)
		}
		os.Chmod(dst, 0o755)
	})
	return dst
}

// A socket reachable under a second path through a bind mount of its
// directory is covered under both (root only: it needs a mount on the host).
func TestSocketThroughBindMountIsCovered(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to bind-mount on the host")
	}
	e := newEnv(t, mode{name: "root"})
	real, alias := filepath.Join(e.outside, "real"), filepath.Join(e.outside, "alias")
	e.mkdir(real)
	e.mkdir(alias)
	l := e.listenUnix(filepath.Join(real, "s.sock"))
	if out, err := exec.Command("mount", "--bind", real, alias).CombinedOutput(); err != nil {
		t.Skipf("bind mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", alias).Run() })
	op := "connect-unix " + filepath.Join(alias, "s.sock")
	allowed(t, e.probeHost(op))
	blocked(t, e.probe(unixSockets, op, "connect-unix "+filepath.Join(real, "s.sock")), "ECONNREFUSED", "ENOENT", "EACCES")
	l.wantAccepted(t, "the socket", 1)
}
