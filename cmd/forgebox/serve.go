package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgebox/forgebox/agent"
	"github.com/forgebox/forgebox/files"
	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/session"
	"github.com/forgebox/forgebox/undo"
)

const serveUsage = `Usage:
  forgebox serve [flags]

Serves forgebox to an agent as an MCP server on stdin and stdout. Every
command a tool runs goes through forgebox run's run path, with the settings
given here: the same judge, sandbox and history as on the command line. The model can
choose a command, its directory inside the workspace and a timeout up to
--timeout; it cannot widen the workspace, the network, the limits or the
policy. A command that needs approval is put to the person through the
client when it can ask (MCP elicitation), else returned as
approval_required.

A message over %d MiB, or a line that is not one JSON-RPC message, is
answered with a JSON-RPC error and changes nothing; the server reads on.
On SIGTERM, SIGINT or SIGHUP, or when its input ends, serve stops the
commands running (their whole process trees), answers each call in
flight with an error saying it was stopped, closes the shell sessions,
and exits within %v (at once on a second signal).

Flags (the sandbox's are forgebox run's):
`

// serveFlags are forgebox serve's own flags; the run flags it takes are
// forwarded to each forgebox run.
type serveFlags struct {
	timeout, defaultTimeout, idleTimeout durationFlag
	maxSessions, outputBudget            int
	sessionIdle                          durationFlag
	forward                              []string // run flags, as given
}

// forwardedRunFlags are the flags of forgebox run that serve takes and
// passes on: what the sandbox is, what judges, where history goes.
var forwardedRunFlags = []string{
	"workspace", "rw", "ro", "hide", "profile", "net", "env", "memory", "pids", "cpus", "grace",
	"best-effort", "max-output", "policy", "history-db", "no-history", "allow-unix-sockets", "no-cache", "no-undo",
}

// unforwardedRunFlags are the flags of forgebox run that serve does not
// take: the command and its terminal are the tool call's, the timeouts
// serve's own flags, and what would skip the judge is not the server's to
// give.
var unforwardedRunFlags = []string{
	"c", "shell", "timeout", "idle-timeout", "pty", "no-pty", "no-stdin", "json", "trace",
	"yes", "no-policy", "session", "keep-output",
}

// forwarding records each use of a flag as it is parsed, to pass it on.
type forwarding struct {
	flag.Value
	name string
	into *[]string
}

// String is also called on a zero forwarding, by the flag package's usage
// text (to tell a default from a zero value).
func (f forwarding) String() string {
	if f.Value == nil {
		return ""
	}
	return f.Value.String()
}

func (f forwarding) Set(v string) error {
	if err := f.Value.Set(v); err != nil {
		return err
	}
	*f.into = append(*f.into, "--"+f.name+"="+v)
	return nil
}

func (f forwarding) IsBoolFlag() bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (e env) serve(args []string) int {
	var (
		sf serveFlags
		rf runFlags
	)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	runFS := rf.flagSet()
	rf.judgeFlags(runFS)
	rf.historyFlags(runFS)
	runFS.VisitAll(func(fl *flag.Flag) {
		if slices.Contains(forwardedRunFlags, fl.Name) {
			fs.Var(forwarding{Value: fl.Value, name: fl.Name, into: &sf.forward}, fl.Name, fl.Usage)
		}
	})
	sf.timeout.d, sf.defaultTimeout.d, sf.idleTimeout.d = agent.DefaultMaxTimeout, agent.DefaultTimeout, agent.DefaultIdleTimeout
	sf.sessionIdle.d = 30 * time.Minute
	fs.Var(&sf.timeout, "timeout", "the longest `DURATION` a tool may give a command (default 10m)")
	fs.Var(&sf.defaultTimeout, "default-timeout", "a command's timeout when the model gives none (`DURATION`, default 2m)")
	fs.Var(&sf.idleTimeout, "idle-timeout", "kill a command that printed nothing for `DURATION` (default 1m; 0: never)")
	fs.IntVar(&sf.maxSessions, "max-sessions", 8, "at most `N` shell sessions at once")
	fs.IntVar(&sf.outputBudget, "output-budget", agent.DefaultOutputBudget, "show the model at most `BYTES` of a command's output, head and tail (the rest: read_output)")
	fs.Var(&sf.sessionIdle, "session-idle", "close a shell session unused for `DURATION` (default 30m)")
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, serveUsage, agent.DefaultMaxMessage>>20, serveGrace)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitForgebox
	}
	if sf.outputBudget < 1024 {
		e.errorf("serve: --output-budget %d is too small: give at least 1024 bytes", sf.outputBudget)
		return exitForgebox
	}
	if fs.NArg() > 0 {
		e.errorf("serve: unexpected argument %q; see forgebox serve --help", fs.Arg(0))
		return exitForgebox
	}
	// Refuse what forgebox run refuses before speaking MCP at all: the
	// file tools act outside the sandbox, so a server on "/" or a home
	// directory would write there with the user's rights, and the client
	// must see a failed start, not a healthy server.
	spec, err := rf.spec([]string{"true"})
	if err == nil {
		err = sandbox.CheckRoots(spec)
	}
	if err != nil {
		e.errorf("serve: %v", err)
		return exitForgebox
	}
	b, cfg, err := newServeBackend(rf, sf)
	if err != nil {
		e.errorf("serve: %v", err)
		return exitForgebox
	}
	defer b.close()
	srv, err := agent.NewServer(cfg)
	if err != nil {
		e.errorf("serve: %v", err)
		return exitForgebox
	}
	return e.serveUntilStopped(srv)
}

// serveGrace bounds how long forgebox serve takes to stop once told to:
// long enough for a killed run to be reaped and its answer written, short
// enough for a client or service manager that waits on it.
const serveGrace = 5 * time.Second

// serveUntilStopped serves until a signal, the end of the input, or a
// broken connection. Told to stop, it stops the commands running (a
// run's cancellation kills its process tree), answers each call in flight
// with a result saying so, and returns, after which the shell sessions
// close; it exits within serveGrace whatever hangs.
func (e env) serveUntilStopped(srv *mcp.Server) int {
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigc)
	// Each call stopped gets its answer within serveGrace-2s: what is
	// left closes the sessions and writes the answers.
	sd := agent.NewShutdown(serveGrace - 2*time.Second)
	srv.AddReceivingMiddleware(sd.Middleware)
	tr := agent.NewTransport(e.stdin, e.stdout, e.stderr)
	ss, err := srv.Connect(context.Background(), tr, nil)
	if err != nil {
		e.errorf("serve: %v", err)
		return exitForgebox
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	var why string
	select {
	case sig := <-sigc:
		why = "it received " + signalName(sig)
	case <-tr.InputClosed():
		why = "its client closed its input"
	case err := <-ended:
		sd.Begin("its connection to the client broke")
		if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, io.EOF) {
			e.errorf("serve: %v", err)
			return exitForgebox
		}
		return 0
	}
	// Past the grace period, or at a second signal, exit as is: the
	// runs' sandboxes and the sessions die with this process.
	go func() {
		select {
		case <-time.After(serveGrace):
			e.errorf("serve: still stopping %v after %s: exiting now", serveGrace, why)
		case sig := <-sigc:
			e.errorf("serve: %s while stopping: exiting now", signalName(sig))
		}
		os.Exit(exitForgebox)
	}()
	sd.Begin(why)
	ctx, cancel := context.WithTimeout(context.Background(), serveGrace)
	defer cancel()
	if err := tr.WaitAnswered(ctx); err != nil {
		e.errorf("serve: stopping: %v", err)
	}
	ss.Close()
	return 0
}

// signalName is a stopping signal's name, as a person sends it.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// serveBackend is agent.Backend over forgebox's own run path (package
// runner), in this process: every run is judged, sandboxed and recorded
// exactly as on the command line, and the command runs in the sandbox's
// own processes, so its crash, hang or kill never takes the server down.
// A shell session is a forgebox run --pty of this binary, with the
// server's flags.
type serveBackend struct {
	exe       string
	forward   []string
	workspace string
	session   string
	pol       runner.PolicyOptions
	// onTerminal is what a shell session's commands run in: the server's
	// sandbox on a terminal (runner.OnTerminal).
	onTerminal policy.Containment
	// rf are the server's run flags: every command's sandbox.
	rf runFlags

	files    *files.FS
	sessions *session.Manager

	// The history of shell sessions' commands.
	recording bool
	historyDB string
	mu        sync.Mutex
	spool     *history.Spool
}

func newServeBackend(rf runFlags, sf serveFlags) (*serveBackend, agent.Config, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, agent.Config{}, fmt.Errorf("find the forgebox binary: %w", err)
	}
	h, err := runner.CurrentHost()
	if err != nil {
		return nil, agent.Config{}, err
	}
	ctx, err := runner.JudgeContext(h, rf.workspace)
	if err != nil {
		return nil, agent.Config{}, err
	}
	sid := os.Getenv("FORGEBOX_SESSION")
	if runner.ValidSessionID(sid) != nil {
		sid = "mcp-" + nonce(6)
	}
	spec, err := rf.spec(nil)
	if err != nil {
		return nil, agent.Config{}, err
	}
	spec.Workspace = ctx.Workspace
	b := &serveBackend{exe: exe, forward: sf.forward, rf: rf, workspace: ctx.Workspace, session: sid,
		pol:        runner.PolicyOptions{File: rf.pol.File, Workspace: ctx.Workspace, Session: sid, Sandbox: runner.Containment(spec)},
		onTerminal: runner.Containment(runner.OnTerminal(spec))}
	if !slices.ContainsFunc(b.forward, func(a string) bool { return strings.HasPrefix(a, "--workspace=") }) {
		b.forward = append(b.forward, "--workspace="+ctx.Workspace)
	}
	cfg := agent.Config{
		Workspace: ctx.Workspace, Version: version, SessionID: sid, Backend: b,
		DefaultTimeout: sf.defaultTimeout.d, MaxTimeout: sf.timeout.d, IdleTimeout: sf.idleTimeout.d, OutputBudget: sf.outputBudget,
		SessionArgv: b.sessionArgv, Record: b.record, CheckWorkspace: checkWorkspace(rf, ctx.Workspace),
	}
	if spec.Undo {
		cfg.Undo = undo.StoreFor(spec.StateDir)
	}
	// The file tools keep the sandbox's rules: the workspace only, its
	// protected names and forgebox's own configuration and state
	// read-only, the secrets a run hides, forgebox's state and --hide paths
	// unread (a hard link to one in the workspace included).
	home, _ := os.UserHomeDir()
	hidden := slices.Concat(rf.hide, sandbox.HiddenSecrets(sandbox.Spec{Environ: os.Environ(), Home: home}))
	// forgebox's state is hidden as in a run (with undo or not): the undo
	// records hold what was deleted in every workspace, the history every
	// run's output.
	if st := sandbox.HiddenState(spec); st != "" {
		hidden = append(hidden, st)
	}
	fs, err := files.New(files.Options{Root: ctx.Workspace, Protected: sandbox.ProtectedNames(), IsProtected: sandbox.Protected,
		Hidden: hidden, Own: rf.ownPaths()})
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return nil, agent.Config{}, fmt.Errorf("the file tools: %w", err)
	}
	if err == nil {
		cfg.Files, b.files = fs, fs
	}
	if sf.maxSessions > 0 {
		b.sessions = session.NewManager(sf.maxSessions, sf.sessionIdle.d)
		cfg.Sessions = b.sessions
	}
	if !rf.noHistory {
		b.historyDB = rf.historyDB
	}
	b.recording = !rf.noHistory
	return b, cfg, nil
}

// close ends the sessions (their sandboxes die with them) and releases the
// workspace.
func (b *serveBackend) close() {
	if b.sessions != nil {
		b.sessions.CloseAll()
	}
	if b.files != nil {
		b.files.Close()
	}
}

// sessionArgv is the program of a shell session: bash, in a forgebox run
// with the server's settings and a terminal. The shell itself is not
// judged; each command shell_exec types is, by the server.
func (b *serveBackend) sessionArgv(dir string) []string {
	args := []string{b.exe, "run", "--pty", "--no-policy", "--session=" + b.session}
	args = append(args, sessionFlags(b.forward)...)
	return append(args, "--", "bash", "--noprofile", "--norc", "-i")
}

// sessionFlags are the server's run flags for a session's forgebox run.
// --policy goes only with --net allow, where it holds the allowlist:
// without the judge forgebox run has no other use for it, and refuses it.
func sessionFlags(flags []string) []string {
	allow := slices.ContainsFunc(flags, func(f string) bool {
		return f == "--net=allow" || strings.HasPrefix(f, "--net=allow=")
	})
	var out []string
	for _, f := range flags {
		if allow || !strings.HasPrefix(f, "--policy=") {
			out = append(out, f)
		}
	}
	return out
}

// record writes a command shell_exec ran to the history's spool, as one
// complete row with its session's id.
func (b *serveBackend) record(c agent.SessionCommand) string {
	if !b.recording {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spool == nil {
		path, err := runner.HistoryPath(b.historyDB)
		if err == nil {
			b.spool, err = history.OpenSpool(path, runner.StoreOptions(history.NewRedactor(nil)))
		}
		if err != nil {
			return ""
		}
	}
	end := c.Started.Add(c.Result.Duration)
	dur := ms(c.Result.Duration)
	code := c.Result.ExitCode
	row := &history.Run{
		SessionID: b.session, PTYSessionID: c.PTYSession, Command: c.Command, Cwd: c.Cwd, Workspace: b.workspace,
		Status: history.StatusFinished, StartedAt: c.Started, EndedAt: &end, DurationMS: &dur, ExitCode: &code,
		TimedOut: c.Result.TimedOut, Stdout: c.Result.Output, StdoutBytes: int64(len(c.Result.Output)),
		OutputTruncated: c.Result.Truncated, OutputKept: true, Version: version,
	}
	switch {
	case c.Denied:
		row.Status, row.ExitCode, row.DurationMS, row.EndedAt = history.StatusDenied, nil, nil, nil
	case c.Sent:
		// Typed at the prompt: it runs on, its status unknown to forgebox.
		row.ExitCode, row.DurationMS, row.EndedAt, row.OutputKept = nil, nil, nil, false
	}
	runner.FillRow(row, row.Status, c.Decision, runner.Grant{Asked: c.Approved, Approved: c.Approved})
	row.Status = cmp.Or(row.Status, history.StatusFinished)
	if err := b.spool.Write(row); err != nil {
		return ""
	}
	return row.Key
}

// nonce is n random bytes in hex.
func nonce(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Run runs one command on forgebox's run path, in this process: judged,
// sandboxed and recorded as forgebox run --json would, with the server's
// settings. The command itself runs in the sandbox's own processes, which
// die with the server.
func (b *serveBackend) Run(ctx context.Context, r agent.RunRequest) (agent.RunResult, error) {
	f := b.rf
	f.workspace, f.command = b.workspace, r.Line
	f.timeout.d, f.idleTimeout.d = r.Timeout, r.IdleTimeout
	f.yes = r.Yes
	f.env = slices.Concat(f.env, r.Env)
	argv := r.Argv
	if r.Line != "" {
		argv = nil
	}
	spec, err := f.spec(argv)
	if err != nil {
		res, _ := outcomeJSON(&runner.Outcome{Err: err}, r.Line, argv)
		return res, nil
	}
	spec.Dir = r.Dir
	home, _ := os.UserHomeDir()
	req := f.request(spec, runner.Host{Getenv: os.Getenv, Cwd: r.Dir, Home: home})
	req.Policy = b.pol
	req.History.Args = b.recordedArgs(r)
	req.Streams = sandbox.Streams{NoStdin: true, Capture: true, MaxOutput: f.maxOutput.n, Observe: r.Output}
	if !f.maxOutput.set {
		req.Streams.MaxOutput = sandbox.DefaultMaxOutput
	}
	res, _ := outcomeJSON(runner.Run(ctx, req), r.Line, argv)
	return res, nil
}

// recordedArgs are the arguments of forgebox run that repeat a command
// the server ran, for the history (history rerun runs them again).
func (b *serveBackend) recordedArgs(r agent.RunRequest) []string {
	args := []string{"--json", "--no-stdin", "--session=" + b.session}
	args = append(args, b.forward...)
	if r.Timeout > 0 {
		args = append(args, "--timeout="+r.Timeout.String())
	}
	if r.IdleTimeout > 0 {
		args = append(args, "--idle-timeout="+r.IdleTimeout.String())
	}
	for _, kv := range r.Env {
		args = append(args, "--env="+kv)
	}
	if r.Line != "" {
		return append(args, "-c", r.Line)
	}
	return append(append(args, "--"), r.Argv...)
}

// judge loads the judge as forgebox run would in dir.
func (b *serveBackend) judge(t agent.Target) (*runner.Judge, error) {
	h, err := runner.CurrentHost()
	if err != nil {
		return nil, err
	}
	h.Cwd = t.Dir
	return runner.LoadJudge(h, b.policyFor(t))
}

// policyFor is the judge's options for a command: a shell session's runs
// on a terminal (runner.OnTerminal).
func (b *serveBackend) policyFor(t agent.Target) runner.PolicyOptions {
	pol := b.pol
	if t.Session {
		pol.Sandbox = b.onTerminal
	}
	return pol
}

func (b *serveBackend) decide(t agent.Target) (*runner.Judge, *policy.Decision, error) {
	js, err := b.judge(t)
	if err != nil {
		return nil, nil, err
	}
	return js, js.Decide(t.Line, t.Argv), nil
}

// Check judges a command as forgebox check does.
func (b *serveBackend) Check(_ context.Context, t agent.Target) (*policy.Decision, error) {
	_, d, err := b.decide(t)
	return d, err
}

// Approve records an approval as forgebox policy approve does.
func (b *serveBackend) Approve(_ context.Context, t agent.Target, scope policy.Scope) error {
	js, d, err := b.decide(t)
	if err != nil {
		return err
	}
	_, err = js.Approve(d, scope, time.Now())
	return err
}

// FileRequest files a command for forgebox approve CODE.
func (b *serveBackend) FileRequest(_ context.Context, t agent.Target, why string) (string, error) {
	h, err := runner.CurrentHost()
	if err != nil {
		return "", err
	}
	r, err := runner.FileRequest(h, b.policyFor(t), t.Dir, t.Line, t.Argv, why)
	if err != nil {
		return "", err
	}
	return runner.ShowCode(r.Code), nil
}

// TakeAnswer takes the person's answer to a command's request.
func (b *serveBackend) TakeAnswer(_ context.Context, t agent.Target) (string, bool, error) {
	h, err := runner.CurrentHost()
	if err != nil {
		return "", false, err
	}
	return runner.TakeAnswer(h, b.workspace, b.session, t.Dir, t.Line, t.Argv)
}

// checkWorkspace is the sessions' check of the server's writable roots:
// the sandbox's own post-run check, run while a session lives. It looks at
// what changed since the earliest run still going (or never checked)
// started: the sessions' runs registered that in the state directory.
func checkWorkspace(rf runFlags, workspace string) func() ([]sandbox.Quarantined, []string) {
	return func() ([]sandbox.Quarantined, []string) {
		spec, err := rf.spec(nil)
		if err != nil {
			return nil, []string{"could NOT check the workspace for planted repositories and configuration: " + err.Error()}
		}
		spec.Workspace, spec.Dir = workspace, workspace
		moved, warnings, err := sandbox.CheckNow(spec, time.Now())
		if err != nil {
			warnings = append(warnings, "could NOT check the workspace for planted repositories and configuration: "+err.Error())
		}
		return moved, warnings
	}
}
