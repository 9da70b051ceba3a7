package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// probeHost runs the probe on the host, outside any sandbox, as the mode's
// user: the control that proves an attack would work without forgebox.
// Only for operations that change nothing worth keeping (connect, kill 0,
// read).
func (e *env) probeHost(ops ...string) []verdict {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := e.command(ctx, probe, ops...).Output()
	if err != nil {
		e.t.Fatalf("probe on the host: %v", err)
	}
	vs := decodeVerdicts(e.t, string(out))
	if len(vs) != len(ops) {
		e.t.Fatalf("host probe gave %d verdicts for %d ops: %s", len(vs), len(ops), out)
	}
	return vs
}

func decodeVerdicts(t *testing.T, s string) []verdict {
	t.Helper()
	var out []verdict
	dec := json.NewDecoder(strings.NewReader(s))
	for dec.More() {
		var v verdict
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("probe output %q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

// probeOut runs one probe op in the sandbox, requires it to succeed and
// returns its output.
func (e *env) probeOut(flags []string, op string) string {
	e.t.Helper()
	v := e.probe(flags, op)[0]
	if !v.OK {
		e.t.Fatalf("%s = %s; want ok", v.call(), v.outcome())
	}
	return v.Out
}

// outcomeIs asserts one verdict: "ok", or one of the errnos.
func outcomeIs(t *testing.T, v verdict, want ...string) {
	t.Helper()
	if len(want) == 1 && want[0] == "ok" {
		allowed(t, []verdict{v})
		return
	}
	blocked(t, []verdict{v}, want...)
}

// forgeboxOnly asserts that every line forgebox printed on stderr speaks in
// its own voice, and that there is at least one.
func forgeboxOnly(t *testing.T, stderr string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if strings.TrimSpace(stderr) == "" {
		t.Errorf("stderr is empty; want a forgebox: message")
		return
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "forgebox: ") {
			t.Errorf("stderr line %q does not start with \"forgebox: \"", l)
		}
	}
}

// runResult is the JSON object forgebox run --json prints.
type runResult struct {
	Argv            []string     `json:"argv"`
	Command         string       `json:"command"`
	Cwd             string       `json:"cwd"`
	Workspace       string       `json:"workspace"`
	ExitCode        int          `json:"exit_code"`
	Signal          *string      `json:"signal"`
	TimedOut        bool         `json:"timed_out"`
	OOMKilled       bool         `json:"oom_killed"`
	DurationMS      float64      `json:"duration_ms"`
	Stdout          string       `json:"stdout"`
	Stderr          string       `json:"stderr"`
	StdoutBytes     int64        `json:"stdout_bytes"`
	StderrBytes     int64        `json:"stderr_bytes"`
	StdoutTruncated bool         `json:"stdout_truncated"`
	StderrTruncated bool         `json:"stderr_truncated"`
	StdoutBase64    *string      `json:"stdout_base64"`
	StderrBase64    *string      `json:"stderr_base64"`
	Quarantined     []quarantine `json:"quarantined"`
	Usage           *usage       `json:"usage"`
	Enforced        *enforced    `json:"enforced"`
	Warnings        []string     `json:"warnings"`
	Error           *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// raw is the object as generic JSON, to check which keys are present.
	raw map[string]any
}

type quarantine struct {
	Path    string `json:"path"`
	MovedTo string `json:"moved_to"`
	Why     string `json:"why"`
	Key     string `json:"key"`
	Value   string `json:"value"`
}

type enforced struct {
	Sandbox      bool     `json:"sandbox"`
	Namespaces   []string `json:"namespaces"`
	Network      string   `json:"network"`
	Profile      string   `json:"profile"`
	ReadOnlyRoot bool     `json:"read_only_root"`
	Writable     []string `json:"writable"`
	Hidden       []string `json:"hidden"`
	Sockets      []string `json:"sockets_hidden"`
	Protected    []string `json:"protected"`
	Watched      []string `json:"watched"`
	// PrivateCopies is omitted when empty.
	PrivateCopies []string `json:"private_copies"`
	PrivateDirs   []string `json:"private_dirs"`
	Caches        []struct {
		Name string `json:"name"`
		Path string `json:"path"`
		Mode string `json:"mode"`
		Env  string `json:"env"`
	} `json:"caches"`
	PTY     bool     `json:"pty"`
	Missing []string `json:"missing"`

	LandlockABI    int      `json:"landlock_abi"`
	LandlockTCP    bool     `json:"landlock_tcp_denied"`
	LandlockScoped bool     `json:"landlock_scoped"`
	Seccomp        bool     `json:"seccomp"`
	SeccompDenied  []string `json:"seccomp_denied"`
	UnixSockets    string   `json:"unix_sockets"`
	NoNewPrivs     bool     `json:"no_new_privs"`
	Capabilities   string   `json:"capabilities"`

	Limits *struct {
		Memory limit `json:"memory"`
		Pids   limit `json:"pids"`
		CPUs   limit `json:"cpus"`
	} `json:"limits"`
	Cgroup string `json:"cgroup"`
}

type limit struct {
	Value     float64 `json:"value"`
	Mechanism string  `json:"mechanism"`
	Reason    string  `json:"reason"`
}

type usage struct {
	UserMS          float64  `json:"user_ms"`
	SystemMS        float64  `json:"system_ms"`
	MaxRSSBytes     int64    `json:"max_rss_bytes"`
	PeakMemoryBytes *int64   `json:"peak_memory_bytes"`
	CPUMS           *float64 `json:"cpu_ms"`
	ForksRefused    *int64   `json:"forks_refused"`
}

// runJSON runs forgebox run --json ARGS and decodes the one JSON object it
// must print on stdout.
func (e *env) runJSON(args []string, opts ...runOpt) (result, runResult) {
	e.t.Helper()
	r := e.run(append([]string{"run", "--json"}, args...), opts...)
	return r, decodeResult(e.t, r.stdout)
}

// decodeResult decodes exactly one JSON object, and nothing else.
func decodeResult(t *testing.T, stdout string) runResult {
	t.Helper()
	var out runResult
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&out.raw); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%.2000s", err, stdout)
	}
	var rest json.RawMessage
	if err := dec.Decode(&rest); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON value (next: %.200s, %v)", rest, err)
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("JSON result does not match the schema: %v\n%.2000s", err, stdout)
	}
	return out
}

// listener is a host socket that counts the connections it accepted.
type listener struct {
	l        net.Listener
	accepted atomic.Int32
}

// listenUnix binds a pathname socket at p, owned by the mode's user so that
// the user could connect to it without the sandbox.
func (e *env) listenUnix(p string) *listener {
	e.t.Helper()
	l, err := net.Listen("unix", p)
	if err != nil {
		e.t.Fatal(err)
	}
	e.chown(p)
	return serve(e.t, l)
}

func listenTCP(t *testing.T, addr string) *listener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, l)
}

func serve(t *testing.T, l net.Listener) *listener {
	s := &listener{l: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			c.Close()
		}
	}()
	return s
}

// wantAccepted waits a moment for connections in flight, then checks the
// count.
func (s *listener) wantAccepted(t *testing.T, what string, want int) {
	t.Helper()
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) && int(s.accepted.Load()) < want {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if got := int(s.accepted.Load()); got != want {
		t.Errorf("host listener %s accepted %d connections; want %d", what, got, want)
	}
}

// marker is a unique argument for sleep, to find the processes of one test
// on the host: "sleep 987.0001123456" sleeps long enough and names itself.
var markers atomic.Int64

func marker() string {
	return fmt.Sprintf("987.%04d%06d", markers.Add(1)%10000, os.Getpid()%1000000)
}

// running is a forgebox started in the background.
type running struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	cancel         context.CancelFunc
	err            error
}

// start starts forgebox ARGS as the mode's user without waiting for it.
func (e *env) start(args []string, opts ...runOpt) *running {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	r := &running{cmd: e.command(ctx, forgebox, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{}), cancel: cancel}
	r.cmd.Stdout, r.cmd.Stderr = r.stdout, r.stderr
	for _, o := range opts {
		o(r.cmd)
	}
	e.skipJudge(r.cmd)
	if err := r.cmd.Start(); err != nil {
		cancel()
		e.t.Fatalf("start forgebox %q: %v", args, err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	e.t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
		cancel()
	})
	return r
}

// wait waits at most d for forgebox to exit and returns how it ended.
func (r *running) wait(t *testing.T, d time.Duration) result {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(d):
		r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("forgebox did not exit within %v; killed it\nstdout: %s\nstderr: %s", d, r.stdout, r.stderr)
	}
	res := result{stdout: r.stdout.String(), stderr: r.stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(r.err, &ee):
		res.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.code = 128 + int(ws.Signal())
		}
	case r.err != nil:
		t.Fatalf("forgebox: %v", r.err)
	}
	return res
}

func (r *running) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal forgebox: %v", err)
	}
}

func (r *running) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds or d passes, and reports whether it held.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFile waits until the command wrote path (its way of saying it is
// ready), and fails the test if it does not within d.
func waitFile(t *testing.T, r *running, path string, d time.Duration) {
	t.Helper()
	ok := waitFor(d, func() bool {
		_, err := os.Stat(path)
		return err == nil || r.exited()
	})
	if _, err := os.Stat(path); !ok || err != nil {
		t.Fatalf("the command never wrote %s\nstdout: %s\nstderr: %s", path, r.stdout, r.stderr)
	}
}

// hostProcess is a process started on the host, outside the sandbox.
type hostProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// hostSleep starts a long sleep on the host as the mode's user.
func (e *env) hostSleep() *hostProcess {
	e.t.Helper()
	cmd := e.command(context.Background(), "sleep", marker())
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	h := &hostProcess{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(h.done)
	}()
	e.t.Cleanup(func() {
		cmd.Process.Kill()
		<-h.done
	})
	return h
}

func (h *hostProcess) pid() int { return h.cmd.Process.Pid }

func (h *hostProcess) alive() bool {
	select {
	case <-h.done:
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}

// git runs git on the host as the mode's user, in dir.
func (e *env) git(dir string, args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := e.command(ctx, "git", append([]string{"-c", "user.name=host", "-c", "user.email=host@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %q in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// tree lists every path below dir with its type, size and mode: a cheap
// proof that a run changed nothing there.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p, err)
			return nil
		}
		// The scenario's XDG state directory holds forgebox's own record
		// (the history), which every run writes by design.
		if fi.IsDir() && p == filepath.Join(dir, "state") {
			return filepath.SkipDir
		}
		fmt.Fprintf(&b, "%s %v %d %v\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return b.String()
}
