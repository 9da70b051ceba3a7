package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) > 1 {
		if helper, ok := helpers[os.Args[1]]; ok {
			os.Exit(helper(os.Args[2:]))
		}
	}
	forgebox := flag.String("forgebox", "/bin/forgebox", "the forgebox binary under test")
	only := flag.String("run", "", "run only the checks whose name matches this regexp")
	flag.Parse()
	g := &guest{out: os.Stdout, forgeboxBin: *forgebox, who: "user"}
	if os.Getuid() == 0 {
		g.who = "root"
	}
	filter, err := regexp.Compile(*only)
	if err == nil {
		err = g.prepare()
	}
	if err != nil {
		g.result("setup", "fail", err.Error())
		g.printf("FBVM-END %s\n", g.who)
		os.Exit(1)
	}
	g.facts()
	for _, c := range checks {
		if filter.MatchString(c.name) {
			g.run(c)
		}
	}
	g.printf("FBVM-END %s\n", g.who)
}

// guest is one pass of the checks, as one user.
type guest struct {
	out         io.Writer
	forgeboxBin string
	who         string // root or user
	home        string
	dir         string // scratch space of this pass, outside the workspace
	ws          string // the workspace of every run
	// bestEffort says why the current check's runs needed --best-effort.
	bestEffort    string
	refusalLogged bool
	// refusal is why forgebox refuses a plain run here ("" if it does
	// not), once launchFlags has asked.
	refusal *string
}

// check is one scenario. It returns a one-line detail on success, an error
// on failure, or a skipError when the kernel cannot run it.
type check struct {
	name string
	run  func(ctx context.Context, g *guest) (string, error)
}

type skipError struct{ reason string }

func (e skipError) Error() string { return e.reason }

func (g *guest) prepare() error {
	g.home = os.Getenv("HOME")
	if g.home == "" || g.home == "/" {
		return errors.New("HOME is not set to a home directory")
	}
	g.dir = filepath.Join(g.home, "fbvm")
	g.ws = filepath.Join(g.dir, "ws")
	if err := os.MkdirAll(g.ws, 0o755); err != nil {
		return err
	}
	return os.Chdir(g.ws)
}

func (g *guest) printf(format string, args ...any) {
	fmt.Fprintf(g.out, format, args...)
}

func (g *guest) fact(key, value string) {
	g.printf("FBVM-FACT %s %s %s\n", g.who, key, oneLine(value))
}

func (g *guest) result(name, status, detail string) {
	g.printf("FBVM-RESULT %s/%s %s %s\n", g.who, name, status, oneLine(detail))
}

// logf records evidence for the check named name, one line per line.
func (g *guest) logf(name, format string, args ...any) {
	for _, line := range strings.Split(strings.TrimRight(fmt.Sprintf(format, args...), "\n"), "\n") {
		g.printf("FBVM-LOG %s/%s %s\n", g.who, name, line)
	}
}

func (g *guest) run(c check) {
	g.printf("FBVM-START %s/%s\n", g.who, c.name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g.bestEffort = ""
	detail, err := c.run(ctx, g)
	if g.bestEffort != "" {
		detail, err = "with "+g.bestEffort+": "+detail, wrapIf(err, "with "+g.bestEffort)
	}
	var skip skipError
	switch {
	case errors.As(err, &skip):
		g.result(c.name, "skip", skip.reason)
	case err != nil:
		g.result(c.name, "fail", err.Error())
	default:
		g.result(c.name, "pass", detail)
	}
}

// facts prints what the kernel offers, measured without forgebox, so that
// the host can compare it with what forgebox reports.
func (g *guest) facts() {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		g.fact("kernel", unix.ByteSliceToString(u.Release[:]))
	}
	g.fact("landlock_abi", landlockABI())
	g.fact("cgroup", cgroupLayout())
	var nproc unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &nproc) == nil {
		g.fact("rlimit_nproc", fmt.Sprintf("%d/%d", nproc.Cur, nproc.Max))
	}
	for _, s := range []string{"kernel/unprivileged_userns_clone", "user/max_user_namespaces"} {
		if b, err := os.ReadFile("/proc/sys/" + s); err == nil {
			g.fact(strings.ReplaceAll(s, "/", "."), strings.TrimSpace(string(b)))
		}
	}
}

// landlockABI is what landlock_create_ruleset(NULL, 0,
// LANDLOCK_CREATE_RULESET_VERSION) returns: the ABI version, or 0 and why.
func landlockABI() string {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return "0 (" + unix.ErrnoName(errno) + ")"
	}
	return strconv.Itoa(int(abi))
}

// kernelLandlockABI is landlockABI as a number: 0 without Landlock.
func kernelLandlockABI() int {
	n, _ := strconv.Atoi(strings.Fields(landlockABI())[0])
	return n
}

// kernelAtLeast reports whether the running kernel is Linux major.minor or
// later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var ma, mi int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi)
	return ma > major || ma == major && mi >= minor
}

// cgroupLayout is v2 (cgroup2 at /sys/fs/cgroup), hybrid (v1 controllers
// and cgroup2 at /sys/fs/cgroup/unified), v1 or none.
func cgroupLayout() string {
	var fs unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup", &fs) != nil {
		return "none"
	}
	if fs.Type == unix.CGROUP2_SUPER_MAGIC {
		return "v2"
	}
	if unix.Statfs("/sys/fs/cgroup/unified", &fs) == nil && fs.Type == unix.CGROUP2_SUPER_MAGIC {
		return "hybrid"
	}
	return "v1"
}

// runResult is the part of forgebox's JSON result the checks read.
type runResult struct {
	ExitCode  int    `json:"exit_code"`
	TimedOut  bool   `json:"timed_out"`
	OOMKilled bool   `json:"oom_killed"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Usage     *struct {
		// From the run's cgroup; null without one.
		PeakMemoryBytes *int64 `json:"peak_memory_bytes"`
		ForksRefused    *int64 `json:"forks_refused"`
	} `json:"usage"`
	Enforced *struct {
		Sandbox        bool     `json:"sandbox"`
		Namespaces     []string `json:"namespaces"`
		Network        string   `json:"network"`
		LandlockABI    int      `json:"landlock_abi"`
		LandlockTCP    bool     `json:"landlock_tcp_denied"`
		LandlockScoped bool     `json:"landlock_scoped"`
		Limits         *struct {
			Memory limitDecision `json:"memory"`
			Pids   limitDecision `json:"pids"`
		} `json:"limits"`
		Cgroup       string   `json:"cgroup"`
		Missing      []string `json:"missing"`
		ReadOnlyRoot bool     `json:"read_only_root"`
		Seccomp      bool     `json:"seccomp"`
		NoNewPrivs   bool     `json:"no_new_privs"`
		Capabilities string   `json:"capabilities"`
		Caches       []struct {
			Name string `json:"name"`
			Path string `json:"path"`
			Mode string `json:"mode"`
		} `json:"caches"`
	} `json:"enforced"`
	Quarantined []struct {
		Key string `json:"key"`
	} `json:"quarantined"`
	Warnings []string  `json:"warnings"`
	Error    *runError `json:"error"`
}

// runError is why forgebox did not run the command.
type runError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Layer   string `json:"layer"`
	Step    string `json:"step"`
	Errno   string `json:"errno"`
	Hint    string `json:"hint"`
}

// limitDecision is how forgebox enforced one resource limit.
type limitDecision struct {
	Value     float64 `json:"value"`
	Mechanism string  `json:"mechanism"`
	Reason    string  `json:"reason"`
}

// outcome is one forgebox invocation.
type outcome struct {
	exit    int
	stdout  []byte
	stderr  []byte
	elapsed time.Duration
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d after %v\nstdout: %s\nstderr: %s", o.exit, o.elapsed.Round(time.Millisecond), o.stdout, o.stderr)
}

// forgebox runs the binary under test in the workspace, with stdin from
// /dev/null. An error means it could not be started or did not end.
func (g *guest) forgebox(ctx context.Context, args ...string) (outcome, error) {
	return g.execute(ctx, append([]string{g.forgeboxBin}, args...), nil)
}

// execute runs argv in the workspace, as forgebox does; setup, if not nil,
// changes the command before it starts.
func (g *guest) execute(ctx context.Context, argv []string, setup func(*exec.Cmd)) (outcome, error) {
	args := argv[1:]
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Dir = g.ws
	if setup != nil {
		setup(cmd)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	o := outcome{exit: cmd.ProcessState.ExitCode(), stdout: stdout.Bytes(), stderr: stderr.Bytes(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		return o, fmt.Errorf("%s %s did not end within a minute:\n%v", filepath.Base(argv[0]), strings.Join(args, " "), o)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return o, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return o, nil
}

// sandboxed runs `forgebox run --json --workspace WS ARGS...` and parses the
// result. Where the kernel lacks a layer, forgebox must refuse the run (exit
// 125 naming the layer): then the run is repeated with --best-effort, so that
// the check tests what the kernel does have, and the check's detail says so.
// A best-effort run without any sandbox is a skipError.
func (g *guest) sandboxed(ctx context.Context, name string, args ...string) (runResult, outcome, error) {
	return g.bestEffortRun(ctx, name, true, args...)
}

// unisolatedOK is sandboxed for the checks of layers that need no
// namespaces (the cgroup limits, the end of the process tree): where
// --best-effort can only run the command without a sandbox, as on a kernel
// without the mount API, the check runs it so, and its detail says so.
func (g *guest) unisolatedOK(ctx context.Context, name string, args ...string) (runResult, outcome, error) {
	return g.bestEffortRun(ctx, name, false, args...)
}

func (g *guest) bestEffortRun(ctx context.Context, name string, needSandbox bool, args ...string) (runResult, outcome, error) {
	r, o, err := g.runJSON(ctx, name, args...)
	if err != nil || o.exit != 125 || r.Error == nil || r.Error.Code != "unavailable" || r.Error.Layer == "" {
		return r, o, err
	}
	layer, refused := r.Error.Layer, r.Error.Message
	r, o, err = g.runJSON(ctx, name, append([]string{"--best-effort"}, args...)...)
	if err != nil {
		return r, o, fmt.Errorf("refused (%s), and with --best-effort: %w", refused, err)
	}
	if r.Enforced == nil {
		g.logf(name, "%v", o)
		return r, o, fmt.Errorf("refused (%s), and the --best-effort result has no enforced section", refused)
	}
	if needSandbox && !r.Enforced.Sandbox {
		return r, o, skipError{fmt.Sprintf("refused (%s); --best-effort runs without a sandbox", refused)}
	}
	if !g.refusalLogged {
		g.logf(name, "refused: %s; --best-effort misses %q", refused, r.Enforced.Missing)
		g.refusalLogged = true
	}
	g.bestEffort = fmt.Sprintf("--best-effort (%s refused)", layer)
	if !r.Enforced.Sandbox {
		g.bestEffort = fmt.Sprintf("--best-effort without a sandbox (%s refused)", layer)
	}
	return r, o, nil
}

// launchFlags are the flags a sandboxed run needs on this kernel: none, or
// --best-effort where forgebox refuses a plain run for a layer the kernel
// lacks (the landlock check tests that refusal). For checks that start
// forgebox themselves rather than through sandboxed; it notes the
// best-effort in the check's detail.
func (g *guest) launchFlags(ctx context.Context, name string) ([]string, error) {
	if g.refusal == nil {
		r, o, err := g.runJSON(ctx, name, "--", "/bin/true")
		if err != nil {
			return nil, err
		}
		why := ""
		if o.exit == 125 && r.Error != nil {
			why = r.Error.Layer
		} else if o.exit != 0 {
			g.logf(name, "%v", o)
			return nil, fmt.Errorf("forgebox run -- /bin/true: exit %d", o.exit)
		}
		g.refusal = &why
	}
	if *g.refusal == "" {
		return nil, nil
	}
	g.bestEffort = fmt.Sprintf("--best-effort (%s refused)", *g.refusal)
	return []string{"--best-effort"}, nil
}

// runJSON runs `forgebox run --json --workspace WS ARGS...`: an error means
// the JSON does not parse or the command did not run.
func (g *guest) runJSON(ctx context.Context, name string, args ...string) (runResult, outcome, error) {
	return g.runJSONVia(ctx, name, nil, args...)
}

// runJSONVia is runJSON with forgebox started by the wrapper command wrap
// (whose arguments end with forgebox's own), or directly when wrap is nil.
func (g *guest) runJSONVia(ctx context.Context, name string, wrap []string, args ...string) (runResult, outcome, error) {
	argv := append(append(slices.Clone(wrap), g.forgeboxBin, "run", "--no-policy", "--json", "--workspace", g.ws), args...)
	o, err := g.execute(ctx, argv, nil)
	if err != nil {
		return runResult{}, o, err
	}
	r, err := g.parseRun(name, o)
	return r, o, err
}

// parseRun reads the JSON result of a `forgebox run --json`: an error
// means it does not parse, or the command did not run for another reason
// than a missing layer.
func (g *guest) parseRun(name string, o outcome) (runResult, error) {
	var r runResult
	if err := json.Unmarshal(o.stdout, &r); err != nil {
		g.logf(name, "%v", o)
		return r, fmt.Errorf("the JSON result does not parse: %v", err)
	}
	if r.Error != nil && !(o.exit == 125 && r.Error.Code == "unavailable") {
		g.logf(name, "%v", o)
		return r, fmt.Errorf("forgebox did not run the command: exit %d, %s (layer %q, step %q, errno %s): %s",
			o.exit, r.Error.Code, r.Error.Layer, r.Error.Step, r.Error.Errno, r.Error.Message)
	}
	return r, nil
}

// process is one entry of the guest's /proc.
type process struct {
	pid, ppid   int
	comm, state string // state: R, S, D, Z, ...
	cmdline     string
}

func (p process) String() string {
	return fmt.Sprintf("pid %d (%s, state %s, parent %d) %q", p.pid, p.comm, p.state, p.ppid, p.cmdline)
}

// processes lists the guest's processes.
func processes() ([]process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var ps []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || closing < open {
			continue
		}
		p := process{pid: pid, comm: string(stat[open+1 : closing])}
		if f := strings.Fields(string(stat[closing+1:])); len(f) > 1 {
			p.state = f[0]
			p.ppid, _ = strconv.Atoi(f[1])
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		p.cmdline = strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
		ps = append(ps, p)
	}
	return ps, nil
}

func wrapIf(err error, prefix string) error {
	var skip skipError
	if err == nil || errors.As(err, &skip) {
		return err
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}
