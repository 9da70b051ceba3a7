package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/forgebox/forgebox/agent"
	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/shellquote"
)

// forgebox hook claude answers Claude Code's PreToolUse hook for its Bash
// tool. The formats are those of https://code.claude.com/docs/en/hooks
// (PreToolUse input, PreToolUse decision control); the deprecated top-level
// "decision": "approve"|"block" form is not written.

const hookUsage = `Usage:
  forgebox hook claude [--wrap] [--policy FILE] [--workspace DIR] [--session ID] [-- RUN FLAGS...]

A Claude Code PreToolUse hook for its Bash tool. It reads the hook's JSON on
stdin, judges tool_input.command as forgebox check would, and prints the
answer: allow, deny (the reasons go to Claude) or ask (Claude Code asks you).
Other tools get no answer, and Claude Code decides as it would without it.

With --wrap, an allowed or asked command is rewritten to run inside
forgebox's sandbox: forgebox run --session SESSION --workspace DIR -c
'COMMAND'; a denied one stays denied, and nothing that cannot be wrapped runs.
RUN FLAGS after "--" (--net host, --memory 4G, --profile strict, ...) are
handed to that forgebox run. An asked command carries --yes when Claude
Code's permission mode shows you the prompt (default, acceptEdits, plan,
auto): your approval there is the approval forgebox run needs, once.

The workspace is --workspace, else $CLAUDE_PROJECT_DIR when the hook's cwd
lies in it, else the hook's cwd; the session is --session, else Claude
Code's session_id, else $FORGEBOX_SESSION. Input forgebox cannot read
(malformed JSON, invalid UTF-8, over 1 MiB, no command) or cannot judge (a
broken configuration) is asked about, and denied with --wrap.

Exit status: 0 with the answer as JSON on stdout (or nothing, for another
tool); 1 when called for an event other than PreToolUse (Claude Code shows
the error and goes on); 2 when misused (an unknown agent, bad flags, stdin a
terminal): Claude Code blocks the command and shows Claude why. Flags:
`

// Exit statuses of forgebox hook claude, as Claude Code reads them. Every
// answer, an ask about unreadable input too, goes out with 0: older
// versions of Claude Code read the JSON only on exit 0, and take any other
// status but 2 for a non-blocking error that lets the command run.
const (
	exitHookOtherEvent = 1 // non-blocking: shown to the person, the tool runs as it would
	exitHookBlock      = 2 // blocking: the tool call is refused, stderr goes to Claude
)

// hookOpts are the flags of forgebox hook claude.
type hookOpts struct {
	pol  policyOpts
	wrap bool
	run  []string // flags for the wrapped forgebox run
	rf   runFlags // run, parsed
}

func (e env) hook(args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(e.stdout, hookUsage)
		return 0
	}
	if len(args) == 0 || args[0] != "claude" {
		what := "no agent"
		if len(args) > 0 {
			what = fmt.Sprintf("unknown agent %q", truncate(args[0], 40))
		}
		e.errorf("hook: %s: forgebox hook claude is the hook there is; see forgebox hook --help", what)
		return exitHookBlock
	}
	o, help, err := parseHookFlags(args[1:], e.stdout)
	if help {
		return 0
	}
	if err != nil {
		e.errorf("hook claude: %v; see forgebox hook --help", err)
		return exitHookBlock
	}
	if term.IsTerminal(int(e.stdin.Fd())) {
		e.errorf("hook claude: reads the JSON Claude Code sends a PreToolUse hook on stdin; register it in .claude/settings.json (see forgebox hook --help)")
		return exitHookBlock
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, agent.MaxClaudeInput+1))
	if err != nil {
		return e.hookCannot(o, fmt.Errorf("read the hook input: %w", err))
	}
	in, err := agent.ParseClaudeInput(data)
	var other *agent.OtherEventError
	switch {
	case errors.As(err, &other):
		e.errorf("hook claude: %v", err)
		return exitHookOtherEvent
	case err != nil:
		return e.hookCannot(o, err)
	case in.Tool != "Bash":
		return 0
	}
	return e.hookBash(o, in)
}

// hookBash judges a Bash command and prints the answer.
func (e env) hookBash(o hookOpts, in agent.ClaudeInput) int {
	js, err := loadHookJudge(o, in)
	if err != nil {
		info, _ := explain(&runner.PolicyError{Err: err})
		msg := info.Message
		if info.Hint != "" {
			msg += "; " + info.Hint
		}
		return e.hookCannot(o, errors.New(msg))
	}
	for _, w := range js.Warnings {
		e.errorf("warning: %s", w)
	}
	d := js.Engine.DecideLine(js.Ctx, in.Command)
	exe, exeErr := os.Executable()
	if exeErr == nil {
		exe, exeErr = filepath.Abs(exe)
	}
	return e.hookAnswer(claudeAnswer(o, in, js, d, exe, exeErr))
}

// parseHookFlags reads the flags after "claude"; help is true when --help
// was answered.
func parseHookFlags(args []string, stdout io.Writer) (o hookOpts, help bool, err error) {
	fs := flag.NewFlagSet("hook claude", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.pol.register(fs, true)
	fs.BoolVar(&o.wrap, "wrap", false, "rewrite allowed and asked commands to run inside forgebox run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, hookUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return o, true, nil
		}
		return o, false, err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		if o.wrap {
			o.rf, err = parseRunFlags(nil)
		}
		return o, false, err
	}
	if len(args) == len(rest) || args[len(args)-len(rest)-1] != "--" {
		return o, false, fmt.Errorf("unexpected argument %q: the command comes from Claude Code on stdin", truncate(rest[0], 40))
	}
	if !o.wrap {
		return o, false, errors.New(`flags for forgebox run after "--" need --wrap`)
	}
	if o.rf, err = parseRunFlags(rest); err != nil {
		return o, false, err
	}
	o.run = rest
	return o, false, nil
}

// parseRunFlags reads the flags for the wrapped forgebox run, and refuses,
// when the hook is set up rather than at each command, flags forgebox run
// would refuse and flags that are the hook's.
func parseRunFlags(args []string) (runFlags, error) {
	var f runFlags
	fs := f.flagSet()
	f.judgeFlags(fs)
	f.historyFlags(fs)
	if err := fs.Parse(args); err != nil {
		return f, fmt.Errorf("the flags for forgebox run: %v", err)
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("the flags for forgebox run: unexpected argument %q: the command is Claude's", truncate(fs.Arg(0), 40))
	}
	if _, err := f.spec(nil); err != nil {
		return f, fmt.Errorf("the flags for forgebox run: %v", err)
	}
	var bad error
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "c":
			bad = errors.New("the flags for forgebox run: -c is the command Claude runs")
		case "policy", "session", "workspace":
			bad = fmt.Errorf("the flags for forgebox run: give --%s to forgebox hook claude, which judges with it and hands it on", fl.Name)
		case "yes", "no-policy":
			bad = fmt.Errorf("the flags for forgebox run: --%s is not for the hook to give: it decides what needs an approval", fl.Name)
		}
	})
	return f, bad
}

// checkWrapRoots refuses what the wrapped forgebox run would refuse to
// start in: a workspace of "/" or a home directory (where Claude Code
// started), a --rw path over secrets. It is forgebox run's own check
// (sandbox.CheckRoots), run on the same flags and workspace, so that
// Claude is told at once and why, instead of an "allow" whose every
// command then fails with 125.
func checkWrapRoots(rf runFlags, workspace string) error {
	rf.workspace = workspace
	spec, err := rf.spec([]string{"true"})
	if err != nil {
		return err
	}
	spec.Dir = workspace
	return sandbox.CheckRoots(spec)
}

// loadHookJudge loads the policy as forgebox check would, from where
// Claude Code runs the command: the hook's cwd, in the project's
// workspace, with the Claude Code session's approvals.
func loadHookJudge(o hookOpts, in agent.ClaudeInput) (*runner.Judge, error) {
	h, err := runner.CurrentHost()
	if err != nil {
		return nil, err
	}
	if filepath.IsAbs(in.Cwd) {
		h.Cwd = in.Cwd
	}
	p := o.pol
	if p.Workspace == "" {
		// The Bash tool's cwd moves with cd; the project does not.
		if dir := h.Getenv("CLAUDE_PROJECT_DIR"); filepath.IsAbs(dir) && pathtree.Within(runner.ResolvePath(h.Cwd), runner.ResolvePath(dir)) {
			p.Workspace = dir
		}
	}
	if p.Session == "" && in.SessionID != "" && runner.ValidSessionID(in.SessionID) == nil {
		p.Session = in.SessionID
	}
	// Without --wrap Claude Code runs the command itself: nothing
	// contains it. With --wrap it runs in forgebox run with these flags.
	p.Sandbox = runner.Unsandboxed
	if o.wrap {
		rf, err := parseRunFlags(o.run)
		if err != nil {
			return nil, err
		}
		spec, err := rf.spec(nil)
		if err != nil {
			return nil, err
		}
		spec.Workspace = p.Workspace
		p.Sandbox = runner.Containment(spec)
	}
	return runner.LoadJudge(h, p.PolicyOptions)
}

// claudeAnswer turns the judge's decision into the hook's answer; with
// --wrap, the command is rewritten to run inside forgebox.
func claudeAnswer(o hookOpts, in agent.ClaudeInput, js *runner.Judge, d *policy.Decision, exe string, exeErr error) agent.ClaudeOutput {
	next := d.Next(false)
	if next == policy.Refuse {
		return agent.ClaudeSays("deny", fmt.Sprintf("forgebox denies this command: %s; rule: %s; %s",
			flat(strings.Join(d.Reasons, "; ")), d.Rule, denyHint(d)))
	}
	var reason string
	if next == policy.Proceed {
		reason = fmt.Sprintf("forgebox allows it: risk %d of 10, %s, %s", d.Risk, d.Level, d.Category)
		if d.Rule != nil {
			reason += "; rule: " + d.Rule.String()
		}
	} else {
		reason = fmt.Sprintf("forgebox asks: %s (risk %d of 10, %s: %s, %s)", flat(askReasons(d)), d.Risk, d.Level, levelMeaning(d.Level), d.Category)
	}
	if !o.wrap {
		return agent.ClaudeSays(d.Action.String(), reason)
	}
	// Nothing runs outside forgebox with --wrap: what cannot be wrapped is
	// denied.
	switch {
	case strings.IndexByte(in.Command, 0) >= 0:
		return agent.ClaudeSays("deny", "forgebox cannot run this command in its sandbox: it holds a NUL byte, which no shell argument can carry")
	case exeErr != nil:
		return agent.ClaudeSays("deny", fmt.Sprintf("forgebox cannot run this command in its sandbox: find the forgebox binary: %v", exeErr))
	}
	if err := checkWrapRoots(o.rf, js.Ctx.Workspace); err != nil {
		return agent.ClaudeSays("deny", fmt.Sprintf("forgebox cannot run this command in its sandbox: %v. "+
			"Start Claude Code in a project directory, or give the hook one: forgebox hook claude --wrap --workspace DIR "+
			"(with --wrap, nothing runs outside forgebox)", err))
	}
	args := []string{}
	if js.SessionID != "" {
		args = append(args, "--session", js.SessionID)
	}
	args = append(args, "--workspace", js.Ctx.Workspace)
	if o.pol.File != "" {
		args = append(args, "--policy", js.UserConfig)
	}
	if next == policy.AskPerson {
		if agent.ClaudePrompts(in.PermissionMode) {
			args = append(args, "--yes")
			reason += "; if you approve it, it runs once inside forgebox's sandbox"
		} else {
			session := js.SessionID
			if session == "" {
				session = "ID"
			}
			reason += fmt.Sprintf("; Claude Code's permission mode %q may not show you this prompt, so the command goes to forgebox run without an approval, "+
				"and forgebox run refuses it unless you approve it there (forgebox policy approve --session %s -c 'COMMAND')", in.PermissionMode, session)
		}
	} else if d.NeedsUndo {
		reason += "; it runs inside forgebox's sandbox, and forgebox undo can put back what it changes in the workspace"
	} else {
		reason += "; it runs inside forgebox's sandbox"
	}
	args = append(args, o.run...)
	updated := make(map[string]any, len(in.ToolInput))
	for k, v := range in.ToolInput {
		updated[k] = v
	}
	updated["command"] = wrapCommand(exe, args, in.Command)
	out := agent.ClaudeSays(d.Action.String(), reason)
	out.Specific.UpdatedInput = updated
	return out
}

// flat keeps a reason on one line.
func flat(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

// wrapCommand is the shell command line that runs line with forgebox run
// exe and args: each word single-quoted where it needs to be, so that any
// line without a NUL byte reaches forgebox run -c as it was.
func wrapCommand(exe string, args []string, line string) string {
	return shellquote.Join(append([]string{exe, "run"}, args...)) + " -c " + shellquote.Quote(line)
}

// hookCannot answers a command forgebox could not read or judge: it asks
// the person, or with --wrap denies it, and says why.
func (e env) hookCannot(o hookOpts, err error) int {
	e.errorf("hook claude: %v", err)
	out := agent.ClaudeSays("ask", "forgebox cannot judge this command: "+err.Error())
	if o.wrap {
		out = agent.ClaudeSays("deny", "forgebox cannot run this command in its sandbox: "+err.Error()+" (with --wrap, nothing runs outside forgebox)")
	}
	out.SystemMessage = truncate("forgebox hook: "+err.Error(), agent.MaxClaudeReason)
	return e.hookAnswer(out)
}

// hookAnswer prints the answer as one line of JSON.
func (e env) hookAnswer(out agent.ClaudeOutput) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		e.errorf("hook claude: write the answer: %v", err)
		return exitHookBlock
	}
	return 0
}
