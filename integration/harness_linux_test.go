package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	forgebox string // the binary under test
	probe    string // integration/probe, static
	binDir   string
	baseDir  string // scratch space visible inside the sandbox (not under /tmp)
)

func TestMain(m *testing.M) {
	if h := os.Getenv("FORGEBOX_TEST_HELPER"); h != "" {
		os.Exit(helperMain(h))
	}
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		os.Exit(1)
	}
	if code == 0 {
		code = m.Run()
	}
	os.RemoveAll(baseDir)
	os.Exit(code)
}

func setup() (int, error) {
	if runtime.GOOS != "linux" {
		fmt.Println("integration tests need Linux")
		return 0, nil
	}
	root := os.Getenv("FORGEBOX_TEST_DIR")
	if root == "" {
		// /tmp, /var/tmp and /dev/shm are private inside the sandbox, so
		// the scratch space must live elsewhere, and the unprivileged test
		// user must be able to reach it.
		if os.Getuid() == 0 {
			root = "/var/lib/forgebox-test"
		} else if c, err := os.UserCacheDir(); err == nil {
			root = filepath.Join(c, "forgebox-test")
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return 1, err
	}
	os.Chmod(root, 0o755)
	var err error
	if baseDir, err = os.MkdirTemp(root, "run-"); err != nil {
		return 1, err
	}
	os.Chmod(baseDir, 0o755)
	// Programs started with the test's own environment (the reaping
	// helper) must not read or write the user's forgebox configuration
	// or approvals either; scenarios set their own.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(baseDir, "config"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(baseDir, "state"))
	binDir = filepath.Join(baseDir, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		return 1, err
	}
	forgebox = filepath.Join(binDir, "forgebox")
	probe = filepath.Join(binDir, "probe")
	if bin := os.Getenv("FORGEBOX_BIN"); bin != "" {
		forgebox = bin
	} else if out, err := goBuild(forgebox, "../cmd/forgebox", "1", "-tags", "netgo,osusergo", "-ldflags", "-extldflags -static"); err != nil {
		return 1, fmt.Errorf("build forgebox: %v\n%s", err, out)
	}
	if bin := os.Getenv("FORGEBOX_PROBE"); bin != "" {
		// The probe must be visible inside the sandbox: bring it here.
		if out, err := exec.Command("cp", bin, probe).CombinedOutput(); err != nil {
			return 1, fmt.Errorf("copy probe: %v\n%s", err, out)
		}
	} else if out, err := goBuild(probe, "./probe", "0"); err != nil {
		return 1, fmt.Errorf("build probe: %v\n%s", err, out)
	}
	return 0, nil
}

func goBuild(out, pkg, cgo string, flags ...string) ([]byte, error) {
	args := append([]string{"build", "-o", out}, flags...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	return cmd.CombinedOutput()
}

// mode is who runs forgebox.
type mode struct {
	name     string
	uid, gid int
}

func (m mode) root() bool { return m.uid == 0 }

// modes are root and the test user when running as root, else the caller.
func modes(t *testing.T) []mode {
	t.Helper()
	if os.Getuid() != 0 {
		return []mode{{name: "user", uid: os.Getuid(), gid: os.Getgid()}}
	}
	name := os.Getenv("FORGEBOX_TEST_USER")
	if name == "" {
		name = "fbtest"
		if _, err := user.Lookup(name); err != nil {
			name = "nobody"
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("test user %s: %v (create it, or set FORGEBOX_TEST_USER)", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return []mode{{name: "root", uid: 0, gid: 0}, {name: "user", uid: uid, gid: gid}}
}

// forEachMode runs f once per mode, in parallel subtests.
func forEachMode(t *testing.T, f func(t *testing.T, e *env)) {
	t.Helper()
	for _, m := range modes(t) {
		m := m
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			f(t, newEnv(t, m))
		})
	}
}

// forEachModeSerial runs f once per mode, one after the other: for
// scenarios that bind host sockets, which every sandbox started meanwhile
// would see come and go.
func forEachModeSerial(t *testing.T, f func(t *testing.T, e *env)) {
	t.Helper()
	for _, m := range modes(t) {
		m := m
		t.Run(m.name, func(t *testing.T) {
			f(t, newEnv(t, m))
		})
	}
}

// env is one scenario's scratch space: a workspace and a fake home, owned
// by the mode's user, plus "outside", a directory of theirs outside the
// workspace that the sandbox must not change.
type env struct {
	t       *testing.T
	m       mode
	dir     string
	ws      string
	home    string
	outside string
	extra   []string // more environment for forgebox
	// judged lets forgebox run judge the commands; without it the
	// harness passes --no-policy (see skipJudge).
	judged bool
}

func newEnv(t *testing.T, m mode) *env {
	t.Helper()
	// Short names: Unix socket paths must fit in 108 bytes.
	name := strings.NewReplacer("/", "-", " ", "_", "Test", "").Replace(t.Name())
	if len(name) > 16 {
		name = name[:16]
	}
	dir, err := os.MkdirTemp(baseDir, name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Searchable by all: the scenarios of both modes run at once, and
	// each sandbox covers the other's sockets, so it must reach them.
	os.Chmod(dir, 0o755)
	e := &env{t: t, m: m, dir: dir, ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home"), outside: filepath.Join(dir, "outside")}
	// The XDG directories exist before any run, so that the first one
	// (which writes the history there) does not change e.dir itself.
	for _, d := range []string{e.ws, e.home, e.outside, e.configHome(), e.stateHome()} {
		e.mkdir(d)
	}
	e.chown(dir)
	return e
}

func (e *env) mkdir(p string) {
	e.t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.chown(p)
}

// write creates a file owned by the mode's user, with its parents.
func (e *env) write(p, content string) {
	e.t.Helper()
	e.mkdir(filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.chown(p)
}

func (e *env) chown(p string) {
	e.t.Helper()
	if os.Getuid() != 0 {
		return
	}
	if err := os.Lchown(p, e.m.uid, e.m.gid); err != nil {
		e.t.Fatal(err)
	}
}

// result is one forgebox invocation.
type result struct {
	code           int
	stdout, stderr string
}

type runOpt func(*exec.Cmd)

func withStdin(s string) runOpt { return func(c *exec.Cmd) { c.Stdin = strings.NewReader(s) } }

func inDir(d string) runOpt { return func(c *exec.Cmd) { c.Dir = d } }

// run runs forgebox as the mode's user in the workspace.
func (e *env) run(args []string, opts ...runOpt) result {
	e.t.Helper()
	return e.runWith(forgebox, args, opts...)
}

// runProgram runs any program as the mode's user in the workspace.
func (e *env) runProgram(name string, args ...string) result {
	e.t.Helper()
	return e.runWith(name, args)
}

// runWith runs a program to its end, killing it if it hangs, and fails the
// test if it could not start.
func (e *env) runWith(name string, args []string, opts ...runOpt) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := e.command(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	for _, o := range opts {
		o(cmd)
	}
	e.skipJudge(cmd)
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		e.t.Fatalf("%s %q hung: killed after 90s\nstderr: %s", name, args, r.stderr)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		e.t.Fatalf("%s %q: %v", name, args, err)
	}
	return r
}

// command prepares a program to run as the mode's user in the workspace,
// with the harness's environment.
func (e *env) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = e.ws
	// The XDG directories are the scenario's, so that neither the user's
	// configuration nor their session approvals are read or written.
	cmd.Env = append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + e.home, "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + e.configHome(), "XDG_STATE_HOME=" + e.stateHome(),
	}, e.extra...)
	// Processes that escaped forgebox may hold its output open: do not
	// wait for them once forgebox itself is gone.
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = e.sysProcAttr()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd
}

// configHome and stateHome are the scenario's XDG directories, outside
// the workspace; forgebox creates them as the mode's user.
func (e *env) configHome() string { return filepath.Join(e.dir, "config") }
func (e *env) stateHome() string  { return filepath.Join(e.dir, "state") }

// skipJudge adds --no-policy to forgebox run wherever forgebox appears in
// the command (directly, or behind unshare or sh -c), unless the scenario
// is about the judge. The sandbox scenarios run probes and attacks the
// sandbox itself must stop; the judge would refuse or ask about most of
// them before the sandbox is ever tested.
func (e *env) skipJudge(cmd *exec.Cmd) {
	if e.judged {
		return
	}
	for i := 0; i+1 < len(cmd.Args); i++ {
		if cmd.Args[i] == forgebox && cmd.Args[i+1] == "run" {
			cmd.Args = append(cmd.Args[:i+2], append([]string{"--no-policy"}, cmd.Args[i+2:]...)...)
			return
		}
	}
}

func (e *env) sysProcAttr() *syscall.SysProcAttr {
	if os.Getuid() != 0 || e.m.root() {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(e.m.uid), Gid: uint32(e.m.gid), Groups: []uint32{}}}
}

// sh runs a command line in the sandbox with the probe visible.
func (e *env) sh(line string, flags ...string) result {
	e.t.Helper()
	return e.run(append(append([]string{"run", "--ro", binDir}, flags...), "-c", line))
}

// verdict is one line of the probe's output.
type verdict struct {
	Op    string   `json:"op"`
	Args  []string `json:"args"`
	OK    bool     `json:"ok"`
	Errno string   `json:"errno"`
	Err   string   `json:"err"`
	Out   string   `json:"out"`
}

// probe runs the probe in the sandbox and returns one verdict per op.
func (e *env) probe(flags []string, ops ...string) []verdict {
	e.t.Helper()
	args := append(append([]string{"run", "--ro", binDir}, flags...), append([]string{"--", probe}, ops...)...)
	r := e.run(args)
	if r.code != 0 {
		e.t.Fatalf("probe run exited %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var out []verdict
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var v verdict
		if err := dec.Decode(&v); err != nil {
			e.t.Fatalf("probe output %q: %v", r.stdout, err)
		}
		out = append(out, v)
	}
	if len(out) != len(ops) {
		e.t.Fatalf("probe gave %d verdicts for %d ops: %s", len(out), len(ops), r.stdout)
	}
	return out
}

// blocked asserts that each verdict failed, with one of the errnos given.
func blocked(t *testing.T, vs []verdict, errnos ...string) {
	t.Helper()
	want := "an error"
	if len(errnos) > 0 {
		want = strings.Join(errnos, " or ")
	}
	for _, v := range vs {
		if v.OK || (len(errnos) > 0 && !contains(errnos, v.Errno)) {
			t.Errorf("%s = %s; want %s", v.call(), v.outcome(), want)
		}
	}
}

// allowed asserts that each verdict succeeded.
func allowed(t *testing.T, vs []verdict) {
	t.Helper()
	for _, v := range vs {
		if !v.OK {
			t.Errorf("%s = %s; want ok", v.call(), v.outcome())
		}
	}
}

// call is the operation as the probe was asked: "probe write /etc/x pwned".
func (v verdict) call() string {
	return strings.TrimSpace("probe " + v.Op + " " + strings.Join(v.Args, " "))
}

// outcome is "ok" or the errno, with the error text when it says more.
func (v verdict) outcome() string {
	switch {
	case v.OK:
		return "ok"
	case v.Errno != "":
		return v.Errno + " (" + v.Err + ")"
	}
	return "error (" + v.Err + ")"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// snapshot records what a host path looks like, to prove it unchanged.
type snapshot struct {
	exists  bool
	mode    os.FileMode
	uid     uint32
	mtime   time.Time
	content string
	xattrs  string
	entries string
}

func snap(t *testing.T, p string) snapshot {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		return snapshot{}
	}
	s := snapshot{exists: true, mode: st.Mode(), uid: st.Sys().(*syscall.Stat_t).Uid, mtime: st.ModTime()}
	if st.Mode().IsRegular() {
		b, _ := os.ReadFile(p)
		s.content = string(b)
	}
	if st.IsDir() {
		es, _ := os.ReadDir(p)
		for _, e := range es {
			s.entries += e.Name() + ","
		}
	}
	buf := make([]byte, 4096)
	if n, err := syscall.Listxattr(p, buf); err == nil {
		s.xattrs = string(buf[:n])
	}
	return s
}

func unchanged(t *testing.T, p string, before snapshot) {
	t.Helper()
	if after := snap(t, p); after != before {
		t.Errorf("host path %s changed:\n before %+v\n after  %+v", p, before, after)
	}
}

// noProcesses waits for every process whose command line contains marker
// to be gone, and fails if any survives.
func noProcesses(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := processesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes survived: %v (marker %q)", left, marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processesWith(marker string) []int {
	var out []int
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}
