package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/forgebox/forgebox/agent"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/sandbox"
	"golang.org/x/term"
)

const runUsage = `Usage:
  forgebox run [flags] -- PROGRAM [ARGS...]
  forgebox run [flags] -c 'COMMAND LINE'

The command is judged first (see forgebox check): a denied one exits 126 and
never starts; one that needs approval is put to you at a terminal, and
without one exits 126 with error code approval_required. Then it runs where
it sees the host read-only, the workspace writable, no secrets, no host
sockets and (by default) no network. Flags:
`

type runFlags struct {
	command, shell, workspace, profile       string
	network                                  netFlag
	rw, ro, hide, env                        listFlag
	timeout, idleTimeout, grace              durationFlag
	maxOutput                                sizeFlag
	memory, pids                             limitFlag
	cpus                                     cpuFlag
	pty, noPTY, noStdin, jsonOut, bestEffort bool
	trace, unixSockets, noCache, noUndo      bool
	pol                                      policyOpts
	yes, noPolicy                            bool
	// The history: --no-history, --history-db, --keep-output.
	noHistory, keepOutput bool
	historyDB             string
}

func (e env) run(args []string) int {
	var f runFlags
	fs := f.flagSet()
	f.judgeFlags(fs)
	f.historyFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, runUsage)
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return 0
		}
		// --json may come before or after the bad flag; an agent asked
		// for one JSON object either way.
		f.jsonOut = f.jsonOut || wantsJSON(args)
		return e.fail(f, sandbox.Invalidf("run: %v; see forgebox run --help", err))
	}
	argv := fs.Args()
	if f.command != "" && len(argv) > 0 {
		return e.fail(f, sandbox.Invalidf("give either -c 'LINE' or -- PROGRAM ARGS, not both"))
	}
	if f.pty && f.noPTY {
		return e.fail(f, sandbox.Invalidf("--pty and --no-pty contradict each other"))
	}
	// Without the judge a configuration file still holds the network
	// allowlist: --policy is taken for that, and refused where nothing of
	// it applies.
	if f.noPolicy && (f.yes || (f.pol.File != "" && f.network.mode != "allow")) {
		return e.fail(f, sandbox.Invalidf("--no-policy skips the judge: --yes has nothing to apply to, nor has --policy unless --net allow reads its network section"))
	}
	spec, err := f.spec(argv)
	if err != nil {
		return e.fail(f, err)
	}
	h, err := runner.CurrentHost()
	if err != nil {
		return e.fail(f, &runner.PolicyError{Err: err})
	}
	pty := f.pty || (!f.noPTY && !f.jsonOut && term.IsTerminal(int(e.stdin.Fd())))
	if pty {
		spec = runner.OnTerminal(spec) // before the judge sees it: no undo
	}
	req := f.request(spec, h)
	req.History.Args = recordedArgs(fs, args, spec.Dir)
	req.Warn = func(w string) { e.errorf("warning: %s", w) }
	if !f.jsonOut && term.IsTerminal(int(e.stdin.Fd())) && term.IsTerminal(int(e.stderr.Fd())) {
		req.Asker = terminal{e}
	}
	req.Streams = sandbox.Streams{
		Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr,
		NoStdin:   f.noStdin,
		Capture:   f.jsonOut,
		MaxOutput: f.maxOutput.n,
		PTY:       pty,
	}
	if f.jsonOut && !f.maxOutput.set {
		req.Streams.MaxOutput = sandbox.DefaultMaxOutput
	}
	// Forward signals to the command, once it is judged (a signal at the
	// approval prompt ends forgebox). The first Notify starts a locked OS
	// thread (0.4 ms here): it runs beside the launch rather than before
	// it; a signal in the meantime ends forgebox, and the sandbox with it.
	// The command starts only once Launched returned, and Launched waits
	// for Notify: a signal sent once the command runs always reaches it.
	// There is no Stop: it would wait for the signal thread to go idle, and
	// the process ends after the run.
	sigs := make(chan os.Signal, 4)
	notified := make(chan struct{})
	req.Streams.Signals = sigs
	req.Judged = func() {
		go func() {
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
			close(notified)
		}()
	}
	req.Streams.Launched = func(sandbox.Enforced) { <-notified }

	o := runner.Run(context.Background(), req)
	switch {
	case o.Err != nil:
		info, code := explain(o.Err)
		return e.failed(f, info, code, o)
	case o.Stopped == runner.StopNotApproved:
		e.errorf("not approved: %s did not run", truncate(runner.Display(f.command, argv), 200))
		e.historyWarnings(o.HistoryWarnings)
		return exitNotExecutable
	case o.Stopped != "":
		return e.refuse(f, argv, o)
	}
	e.report(f, argv, spec, o)
	return o.Result.ExitCode
}

// request is the run the flags ask for.
func (f *runFlags) request(spec sandbox.Spec, h runner.Host) runner.Request {
	return runner.Request{
		Spec: spec, Host: h,
		Policy:   runner.PolicyOptions{File: f.pol.File, Workspace: f.workspace, Session: f.pol.Session},
		NoPolicy: f.noPolicy, NetAllow: f.network.allow, Yes: f.yes,
		History: runner.HistoryOptions{Off: f.noHistory, DB: f.historyDB, KeepOutput: f.keepOutput, Version: version},
	}
}

// historyFlags declares the flags of forgebox run that concern the history.
func (f *runFlags) historyFlags(fs *flag.FlagSet) {
	fs.BoolVar(&f.noHistory, "no-history", false, "do not record this run in the history")
	fs.StringVar(&f.historyDB, "history-db", "", "record the run in the history database `PATH` (default: $FORGEBOX_HISTORY_DB, else $XDG_STATE_HOME/forgebox/history.db)")
	fs.BoolVar(&f.keepOutput, "keep-output", false, "keep the head and tail of the output in the history also when it is handed to the command's stdout and stderr as they are (copying it costs throughput)")
}

// flagSet declares the flags of forgebox run into f.
func (f *runFlags) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.memory.size = true // a size with units (2G), the tasks a count
	fs.StringVar(&f.command, "c", "", "run `LINE` with bash (or sh where bash is absent)")
	fs.StringVar(&f.shell, "shell", "", "run -c with this `SHELL` instead of bash")
	fs.StringVar(&f.workspace, "workspace", "", "the writable project `DIR` (default: the current directory)")
	fs.Var(&f.rw, "rw", "also make `PATH` writable (absolute; repeatable)")
	fs.Var(&f.ro, "ro", "also make `PATH` visible read-only (absolute; repeatable)")
	fs.Var(&f.hide, "hide", "hide `PATH` as well (absolute; repeatable)")
	fs.StringVar(&f.profile, "profile", "workspace", "`PROFILE`: workspace, strict (system directories and the workspace only) or readonly")
	fs.Var(&f.network, "net", "`MODE`: none (the default: only the sandbox's own loopback, where local servers work; on macOS no loopback), loopback (the same as none on Linux), host, "+
		"or allow=HOST[,HOST...] (repeatable): only those hosts, through forgebox's proxy (HOST: example.com, *.example.com, example.com:443; plus the configuration's network.allow)")
	fs.Var(&f.env, "env", "pass host variable `NAME`, or set NAME=VALUE (repeatable)")
	fs.Var(&f.timeout, "timeout", "kill the whole process tree after `DURATION` and exit 124")
	fs.Var(&f.idleTimeout, "idle-timeout", "kill the whole process tree once the command printed nothing for `DURATION`, and exit 124")
	fs.Var(&f.grace, "grace", "after SIGINT/SIGTERM or a timeout, wait `DURATION` before killing (default 2s)")
	fs.Var(&f.maxOutput, "max-output", "keep at most `SIZE` of each output stream, head and tail (default 1MiB with --json)")
	fs.Var(&f.memory, "memory", "cap the memory of the command's tree, swap included, at `SIZE` (e.g. 2G), or none (default: half the RAM, at most 8GiB)")
	fs.Var(&f.pids, "pids", "cap the tasks (processes and threads) of the tree at `N`, or none (default: 4096, or 128 per CPU)")
	fs.Var(&f.cpus, "cpus", "cap the tree's CPU use at `F` cores, e.g. 1.5 (default: no cap)")
	fs.BoolVar(&f.pty, "pty", false, "run on a new pseudo-terminal even when stdin is not a terminal")
	fs.BoolVar(&f.noPTY, "no-pty", false, "never use a pseudo-terminal")
	fs.BoolVar(&f.noStdin, "no-stdin", false, "connect stdin to /dev/null")
	fs.BoolVar(&f.jsonOut, "json", false, "capture the output and print one JSON result on stdout")
	fs.BoolVar(&f.bestEffort, "best-effort", false, "run with whatever isolation this host supports, and report what was missing")
	fs.BoolVar(&f.trace, "trace", false, "print when each step of the launch ended (the cost breakdown) on stderr")
	fs.BoolVar(&f.unixSockets, "allow-unix-sockets", false, "let the command create Unix sockets (tmux, a database on a socket); "+
		"then a host socket created after the start, in a directory the command sees, is reachable (default: refused, connected socketpairs only)")
	fs.BoolVar(&f.noCache, "no-cache", false, "no private package caches: ~/.cache, Go's, npm's, Cargo's ... caches stay read-only "+
		"(default: the command writes them into caches private to forgebox and this workspace; see forgebox cache)")
	fs.BoolVar(&f.noUndo, "no-undo", false, "write the workspace directly, without keeping the run undoable (default: undo on unless FORGEBOX_UNDO=off; "+
		"interactive runs on a terminal have none; see forgebox undo)")
	return fs
}

// report prints what the run left to say: the trace, the warnings, the
// JSON result and why the command ended, if it did not exit by itself.
func (e env) report(f runFlags, argv []string, spec sandbox.Spec, o *runner.Outcome) {
	res := o.Result
	if f.trace {
		var prev time.Duration
		for _, ph := range res.Timeline {
			e.errorf("trace: %8.3f ms  +%7.3f ms  %s", ms(ph.At), ms(ph.At-prev), ph.Step)
			prev = ph.At
		}
	}
	for _, w := range res.Warnings {
		e.errorf("warning: %s", w)
	}
	hint := unixSocketAdvice(res)
	if hint != "" && !f.jsonOut {
		e.errorf("%s", hint)
	}
	if !f.jsonOut {
		for _, line := range refusedConnections(res.Connections, 5) {
			e.errorf("%s", line)
		}
	}
	e.historyWarnings(o.HistoryWarnings)
	if f.jsonOut {
		out, _ := outcomeJSON(o, f.command, argv)
		if f.trace {
			out.Timeline = res.Timeline
		}
		if hint != "" {
			out.Warnings = append(out.Warnings, hint)
		}
		e.printJSON(out)
	}
	if res.OOMKilled && res.Enforced.Limits != nil {
		e.errorf("the command ran out of memory: the kernel's OOM killer killed a process of its tree at the memory limit of %s; give it more with --memory SIZE",
			humanBytes(res.Enforced.Limits.Memory.Value))
	}
	switch {
	case res.IdleTimedOut:
		e.errorf("the command printed nothing for %v (--idle-timeout); its process tree was killed", spec.IdleTimeout)
	case res.TimedOut:
		e.errorf("the command timed out after %v; its process tree was killed", spec.Timeout)
	case res.Signal != "" && !f.jsonOut && !res.OOMKilled:
		e.errorf("the command was killed by %s", res.Signal)
	}
}

// outcomeJSON is the JSON result of a run, as forgebox run --json prints
// it and the MCP server reads it, and the exit code: what ran, or why it
// did not.
func outcomeJSON(o *runner.Outcome, line string, argv []string) (agent.RunResult, int) {
	if line != "" {
		argv = nil
	}
	var out agent.RunResult
	code := exitNotExecutable
	switch {
	case o.Result != nil:
		out = agent.FromResult(o.Result)
		out.Cwd, out.Workspace = o.Result.Cwd, o.Result.Workspace
		code = o.Result.ExitCode
	case o.Stopped != "":
		info, ap := refusal(o, line, argv)
		out = agent.Failed(info, code)
		out.Approval = ap
	default:
		var info agent.Error
		info, code = explain(o.Err)
		out = agent.Failed(info, code)
	}
	if o.Result != nil || o.Stopped != "" {
		out.Argv, out.Command = argv, line
		out.Decision = o.Decision
		out.Warnings = append(out.Warnings, o.Warnings...)
	}
	if o.Result == nil && o.Where != nil && o.Stopped != "" {
		out.Cwd, out.Workspace = o.Where.Cwd, o.Where.Workspace
	}
	out.HistoryKey = o.HistoryKey
	out.Warnings = append(out.Warnings, o.HistoryWarnings...)
	return out, code
}

func (f *runFlags) spec(argv []string) (sandbox.Spec, error) {
	profile, err := sandbox.ParseProfile(f.profile)
	if err != nil {
		return sandbox.Spec{}, err
	}
	network, err := sandbox.ParseNetwork(cmp.Or(f.network.mode, "none"))
	if err != nil {
		return sandbox.Spec{}, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return sandbox.Spec{}, sandbox.Invalidf("cannot tell the current directory: %v", err)
	}
	ws := f.workspace
	if ws == "" {
		ws = dir
	}
	home, _ := os.UserHomeDir()
	s := sandbox.Spec{
		Argv: argv, Command: f.command, Shell: f.shell,
		Workspace: ws, Dir: dir,
		ReadWrite: f.rw, ReadOnly: f.ro, Hide: f.hide,
		Profile: profile, Network: network,
		Environ: os.Environ(), Home: home,
		Timeout: f.timeout.d, IdleTimeout: f.idleTimeout.d, Grace: f.grace.d,
		Limits:           sandbox.Limits{MemoryBytes: f.memory.n, Pids: f.pids.n, CPUs: f.cpus.f},
		BestEffort:       f.bestEffort,
		AllowUnixSockets: f.unixSockets,
		NoCache:          f.noCache,
		Undo:             !f.noUndo && undoConfigured(),
		StateDir:         stateDir(home),
		Own:              f.ownPaths(),
	}
	for _, v := range f.env {
		if strings.Contains(v, "=") {
			s.SetEnv = append(s.SetEnv, v)
		} else {
			s.PassEnv = append(s.PassEnv, v)
		}
	}
	return s, nil
}

// wantsJSON reports whether --json appears among the flags (before "--").
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

func (f *runFlags) argvOrNil(argv []string) []string {
	if f.command != "" {
		return nil
	}
	return argv
}

// fail reports why the command did not run and returns the exit code.
func (e env) fail(f runFlags, err error) int {
	info, code := explain(err)
	return e.failed(f, info, code, &runner.Outcome{Err: err})
}

// failed reports a run that did not happen, with its history record.
func (e env) failed(f runFlags, info agent.Error, code int, o *runner.Outcome) int {
	msg := info.Message
	if info.Hint != "" {
		msg += "; " + info.Hint
	}
	e.errorf("%s", msg)
	e.historyWarnings(o.HistoryWarnings)
	if f.jsonOut {
		out, _ := outcomeJSON(o, "", nil)
		e.printJSON(out)
	}
	return code
}

// explain turns a cause into the message, the stable error code and the
// advice the user needs; forgebox's other packages only report causes.
func explain(err error) (agent.Error, int) {
	var (
		un    *sandbox.UnavailableError
		setup *sandbox.SetupError
		ex    *sandbox.ExecError
		cfg   *policy.ConfigError
	)
	code, exit := runner.Classify(err)
	info := agent.Error{Code: code, Message: err.Error()}
	switch {
	case errors.As(err, &cfg):
		info.Message = "invalid configuration: " + cfg.Error()
		info.Hint = "forgebox never ignores a broken configuration: fix the file, or pass --policy FILE to judge with another"
	case errors.As(err, &ex):
		info.Errno = errnoName(ex.Errno)
	case errors.As(err, &un):
		info.Layer, info.Hint = un.Layer, adviceFor(un)
	case errors.As(err, &setup):
		info.Step, info.Errno = setup.Step, errnoName(setup.Errno)
		info.Message = fmt.Sprintf("sandbox setup failed at %s: %s", setup.Step, setup.Message)
		info.Hint = "run forgebox doctor to see what this host supports"
	}
	return info, exit
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func errnoName(e syscall.Errno) string {
	if e == 0 {
		return ""
	}
	return e.Error()
}

func (e env) printJSON(v any) {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		e.errorf("write JSON result: %v", err)
	}
}

// judgeFlags declares the flags of forgebox run that concern the judge.
func (f *runFlags) judgeFlags(fs *flag.FlagSet) {
	f.pol.register(fs, false)
	fs.BoolVar(&f.yes, "yes", false, "approve a command that asks, once (never a denied one)")
	fs.BoolVar(&f.noPolicy, "no-policy", false, "do not judge the command (for harnesses that judge it themselves); the sandbox still applies")
}

// refuse reports a command the judge stopped, with --json as a result
// carrying the decision.
func (e env) refuse(f runFlags, argv []string, o *runner.Outcome) int {
	info, _ := refusal(o, f.command, f.argvOrNil(argv))
	msg := info.Message
	if info.Hint != "" {
		msg += "; " + info.Hint
	}
	e.errorf("%s", msg)
	e.historyWarnings(o.HistoryWarnings)
	if f.jsonOut {
		out, _ := outcomeJSON(o, f.command, argv)
		e.printJSON(out)
	}
	return exitNotExecutable
}

// refusal is what forgebox says about a command the judge stopped, and
// the approvals an asking one offers.
func refusal(o *runner.Outcome, line string, argv []string) (agent.Error, *agent.Approval) {
	d := o.Decision
	what := truncate(runner.Display(line, argv), 200)
	if o.Stopped == runner.StopDenied {
		return agent.Error{Code: "denied",
			Message: fmt.Sprintf("denied: %s: %s; rule: %s", what, strings.Join(d.Reasons, "; "), d.Rule),
			Hint:    denyHint(d) + "; forgebox policy explain " + commandArgs(line, argv) + " says why"}, nil
	}
	rules := d.ApprovalRules("")
	if rules == nil {
		rules = []policy.Rule{}
	}
	session := ""
	if o.Judge != nil {
		session = o.Judge.SessionID
	}
	return agent.Error{Code: string(o.Stopped),
		Message: fmt.Sprintf("approval required to run %s: %s (risk %d, %s: %s)", what, askReasons(d), d.Risk, d.Level, levelMeaning(d.Level)),
		Hint:    approvalHint(d, line, argv, session)}, &agent.Approval{Scopes: d.Scopes, Rules: rules}
}

// denyHint says what can be done about a denial.
func denyHint(d *policy.Decision) string {
	switch r := d.Rule; {
	case r != nil && r.Kind == "mode":
		return "the configuration is in allowlist mode: allow the program there, and run it as -- PROGRAM ARGS"
	case r != nil && r.Kind == "deny" && r.Source != "":
		return "the deny rule is in " + r.Source + " (forgebox policy list shows the rules)"
	}
	return "forgebox refuses it whatever the rules and approvals say"
}

// askReasons are the reasons of the sub-commands that ask.
func askReasons(d *policy.Decision) string {
	var out []string
	for _, j := range askingCommands(d) {
		for _, r := range j.Reasons {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	if len(out) == 0 {
		out = d.Reasons
	}
	return strings.Join(out, "; ")
}

// stateDir is forgebox's state directory ($XDG_STATE_HOME/forgebox, else
// ~/.local/state/forgebox), where the sandbox keeps the indexes its
// post-run check compares with; "" when neither can be told.
// undoConfigured: FORGEBOX_UNDO=off (or 0, false, no) turns undo off for
// every run that does not ask otherwise.
func undoConfigured() bool {
	switch strings.ToLower(os.Getenv("FORGEBOX_UNDO")) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

func stateDir(home string) string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "forgebox")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "forgebox")
}

// historyWarnings prints the history's warnings, each once.
func (e env) historyWarnings(ws []string) {
	seen := map[string]bool{}
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			e.errorf("warning: %s", w)
		}
	}
}
