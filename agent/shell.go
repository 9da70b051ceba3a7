package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

// RunShellInput is run_shell_command's arguments.
type RunShellInput struct {
	Command     string `json:"command" jsonschema:"the command line, run by bash in the sandbox (pipes, &&, redirections, quoting as in bash)"`
	Description string `json:"description,omitempty" jsonschema:"what the command is for, in a few words (shown to the person approving it)"`
	Directory   string `json:"directory,omitempty" jsonschema:"where to run it: a directory inside the workspace, relative to the workspace or absolute (default: the workspace)"`
	TimeoutMS   int64  `json:"timeout_ms,omitempty" jsonschema:"kill the command after this many milliseconds (default 120000; capped by the server)"`
	// IdleTimeoutMS: a long silent step (a build, a download) needs more
	// than the server's default.
	IdleTimeoutMS int64 `json:"idle_timeout_ms,omitempty" jsonschema:"kill the command after this many milliseconds without output (default: the server's, usually 60000; at most the timeout)"`
}

// CommandOutput is the structured result of a command: run_shell_command's
// and git's.
type CommandOutput struct {
	// Ran: the command started; false when the policy stopped it or it
	// awaits an approval.
	Ran          bool    `json:"ran" jsonschema:"the command started; false when the policy stopped it or it awaits an approval"`
	ExitCode     int     `json:"exit_code" jsonschema:"the command's exit status; for a command that did not run, forgebox run's: 125 (bad input, forgebox failed) or 126 (refused by the policy or the person)"`
	Signal       string  `json:"signal,omitempty" jsonschema:"the signal that killed the command, if one did"`
	TimedOut     bool    `json:"timed_out" jsonschema:"the command was killed at its timeout"`
	IdleTimedOut bool    `json:"idle_timed_out,omitempty" jsonschema:"the command was killed after printing nothing for too long"`
	DurationMS   float64 `json:"duration_ms" jsonschema:"how long the command ran, in milliseconds"`
	// Stdout and Stderr are shown in the result's text, once, never in
	// its data: agent clients show the model one or the other.
	Stdout      string `json:"-"`
	Stderr      string `json:"-"`
	StdoutBytes int64  `json:"stdout_bytes" jsonschema:"the bytes the command printed on its standard output, all of them"`
	StderrBytes int64  `json:"stderr_bytes" jsonschema:"the bytes the command printed on its standard error, all of them"`
	// Truncated: a stream was longer than forgebox keeps (--max-output);
	// its middle was dropped, and the text says how many bytes where.
	Truncated bool `json:"truncated" jsonschema:"an output was longer than forgebox keeps (--max-output): its middle was dropped, and the text says how many bytes where"`
	// OutputID names the output for read_output when the result shows
	// only its head and tail.
	OutputID string `json:"output_id,omitempty" jsonschema:"the id read_output takes, when the text shows only the head and tail of the output"`
	// Blocked names the layer that stopped the command or made it fail,
	// and how to proceed.
	Blocked *Blocked `json:"blocked,omitempty" jsonschema:"the layer that stopped the command or made it fail, and how to proceed"`
	// Approval is set when the command needs a person's approval that
	// could not be asked for here.
	Approval *ApprovalNeeded `json:"approval_required,omitempty" jsonschema:"set when the command needs a person's approval that could not be asked for here"`
	Decision *Verdict        `json:"decision,omitempty" jsonschema:"the policy's decision on the command"`
	// ApprovedBy says who approved the command for this call, when it
	// ran on a person's approval.
	ApprovedBy string `json:"approved_by,omitempty" jsonschema:"who approved the command for this call, when it ran on a person's approval"`
	// Quarantined lists what the command planted in the workspace that
	// forgebox moved aside after it (a Git hook, an .envrc...).
	Quarantined []sandbox.Quarantined `json:"quarantined,omitempty" jsonschema:"what the command planted in the workspace that forgebox moved aside after it"`
	// Warnings are forgebox's own, as forgebox run --json gives them.
	Warnings []string `json:"warnings,omitempty" jsonschema:"forgebox's own warnings about the run"`
	// Changes is what the command changed in the workspace, undoable,
	// when it ran with undo.
	Changes *sandbox.Changes `json:"changes,omitempty" jsonschema:"what the command changed in the workspace (files created, modified, deleted, bytes written) and the undo record that takes it back, when it ran with undo"`
	// HistoryKey names the run in forgebox's history.
	HistoryKey string   `json:"history_key,omitempty" jsonschema:"the run's key in forgebox's history (forgebox history show KEY)"`
	Notes      []string `json:"notes,omitempty" jsonschema:"remarks on how the command was run (a timeout capped, ...)"`
}

// Blocked says which layer stopped a command: "policy rule", "filesystem"
// (the read-only view), "seccomp", "network", "limit" or "timeout".
type Blocked struct {
	Layer   string `json:"layer" jsonschema:"what stopped the command or made it fail: 'policy rule', 'filesystem', 'seccomp', 'network', 'limit', 'timeout', 'sandbox', 'command' or 'forgebox'"`
	Message string `json:"message" jsonschema:"what happened"`
	Hint    string `json:"hint" jsonschema:"what to do next"`
}

// ApprovalNeeded is what a command that needs approval offers.
type ApprovalNeeded struct {
	Message string   `json:"message" jsonschema:"why the command needs a person's approval"`
	Scopes  []string `json:"scopes" jsonschema:"the approvals a person may give: once, session, always"`
	// How tells the model how the person can approve it outside the
	// client.
	How string `json:"how" jsonschema:"how the person can approve it outside the client"`
	// Request is the code the person answers with forgebox approve CODE.
	Request string `json:"request,omitempty" jsonschema:"the code the person answers in a terminal with forgebox approve CODE"`
}

// Verdict is the judge's decision, in short.
type Verdict struct {
	Action   string   `json:"action" jsonschema:"allow, ask (a person must approve) or deny"`
	Risk     int      `json:"risk" jsonschema:"the risk score, 0 (none) to 100"`
	Level    string   `json:"level" jsonschema:"the risk level in words"`
	Category string   `json:"category" jsonschema:"what kind of command the policy took it for"`
	Rule     string   `json:"rule,omitempty" jsonschema:"the policy rule that decided, when one did"`
	Reasons  []string `json:"reasons" jsonschema:"why the policy decided so"`
}

func verdict(d *policy.Decision) *Verdict {
	if d == nil {
		return nil
	}
	v := &Verdict{Action: d.Action.String(), Risk: d.Risk, Level: d.Level.String(), Category: d.Category.String(), Reasons: d.Reasons}
	if d.Rule != nil {
		v.Rule = d.Rule.String()
	}
	if v.Reasons == nil {
		v.Reasons = []string{}
	}
	return v
}

const runShellDescription = `Run a shell command line (bash) in forgebox's sandbox and return its exit code and output.
The workspace is writable; the rest of the system is read-only, secrets and host sockets are hidden, and the network is as the server was configured (usually off).
A policy judges the command first: it may be denied (the result names the rule and a hint) or need a person's approval (you get approval_required; do not retry a variant to get around it).
stdin is closed: interactive programs get EOF (use shell_start and shell_send for those). A long output shows its head and tail; the line between them names the omitted bytes and the read_output call that reads them.
The command is killed at its timeout (timeout_ms), or when it prints nothing for a while (idle_timeout_ms: raise it for long silent steps such as builds). State (cd, variables) does not persist between calls: use shell_exec for that.`

func (s *server) addShellTools(srv *mcp.Server) {
	addTool(srv, &mcp.Tool{Name: "run_shell_command", Title: "Run a shell command in the sandbox", Description: runShellDescription,
		Annotations: changes(true, false), Meta: resultSchemaMeta[CommandOutput]("run_shell_command")}, s.runShell)
	addTool(srv, &mcp.Tool{Name: "check_command", Description: `Ask forgebox's policy what it would decide about a command line, without running it: allow, ask (a person must approve) or deny, with the risk level, category, the rule that decided, and the reasons.`,
		Title: "Check a command against the policy", Annotations: readOnly()}, s.checkCommand)
	addTool(srv, &mcp.Tool{Name: "git", Title: "Run git in the sandbox", Description: gitDescription,
		Annotations: changes(true, false), Meta: resultSchemaMeta[CommandOutput]("git")}, s.git)
}

func ptr[T any](v T) *T { return &v }

func (s *server) runShell(ctx context.Context, req *mcp.CallToolRequest, in RunShellInput) (*mcp.CallToolResult, any, error) {
	switch {
	case strings.TrimSpace(in.Command) == "":
		return s.refuseInput(in.Command, "command is empty: give the command line to run")
	case strings.IndexByte(in.Command, 0) >= 0:
		return s.refuseInput(in.Command, "command contains a NUL byte, which no shell can run")
	case len(in.Command) > sandbox.MaxArgLen:
		return s.refuseInput(in.Command, fmt.Sprintf("the command line is %d bytes, over the limit of %d bytes (the kernel's limit on one argument, the same for forgebox run -c): write the script to a file in the workspace (write_file) and run that file", len(in.Command), sandbox.MaxArgLen))
	}
	r, notes, err := s.request(Target{Line: in.Command}, in.Directory, in.TimeoutMS, in.IdleTimeoutMS)
	if err != nil {
		return s.refuseInput(in.Command, err.Error())
	}
	out, asking := s.runJudged(ctx, req, r, in.Description)
	if asking != nil {
		return asking, nil, nil
	}
	out.Notes = append(out.Notes, notes...)
	return s.commandResult(in.Command, &out), nil, nil
}

// request builds a run request from a tool's directory and timeouts, and
// notes what the server changed of them.
func (s *server) request(t Target, directory string, timeoutMS, idleMS int64) (RunRequest, []string, error) {
	dir, err := s.directory(directory)
	if err != nil {
		return RunRequest{}, nil, err
	}
	timeout, capped, err := s.timeout(timeoutMS)
	if err != nil {
		return RunRequest{}, nil, err
	}
	idle, err := s.idleTimeout(idleMS, timeout)
	if err != nil {
		return RunRequest{}, nil, err
	}
	var notes []string
	if capped {
		notes = append(notes, fmt.Sprintf("timeout capped at the server's limit of %v", timeout))
	}
	t.Dir = dir
	return RunRequest{Target: t, Timeout: timeout, IdleTimeout: idle}, notes, nil
}

// refuseInput is the result of a call whose arguments cannot be run: it
// did not run, with forgebox's exit code for refused input.
func (s *server) refuseInput(what, msg string) (*mcp.CallToolResult, any, error) {
	out := CommandOutput{ExitCode: sandbox.ExitForgebox, Blocked: &Blocked{Layer: "input", Message: msg, Hint: "fix the arguments and call again"}}
	return s.commandResult(what, &out), nil, nil
}

// runJudged runs a command through the backend once the gate let it
// through, and explains what stopped it. When the client can ask its
// user, asking is a result that asks the client for the person's answer
// (MCP elicitation, as a multi-round-trip input request); the client calls
// again with the answer.
func (s *server) runJudged(ctx context.Context, req *mcp.CallToolRequest, r RunRequest, why string) (out CommandOutput, asking *mcp.CallToolResult) {
	g, err := s.gate(ctx, req, r.Target, why)
	switch {
	case err != nil:
		return forgeboxFailed(fmt.Errorf("judge the command: %w", err)), nil
	case g.asking != nil:
		return CommandOutput{}, g.asking
	case g.stop != nil:
		logTo(ctx, req, "warning", "%s: %s", summary(r.display(), *g.stop), g.stop.Blocked.Message)
		return *g.stop, nil
	}
	r.Yes = g.approved != ""
	what := oneLine(r.display(), 120)
	logTo(ctx, req, "info", "running %s in %s", what, r.Dir)
	stop := reportProgress(ctx, req, &r)
	res, err := s.c.Backend.Run(ctx, r)
	stop()
	if err != nil {
		logTo(ctx, req, "error", "forgebox failed to run %s: %v", what, err)
		return forgeboxFailed(err), nil
	}
	out = s.commandOutput(res, r.IdleTimeout)
	out.ApprovedBy = g.approved
	if out.Changes != nil {
		s.ownRecord(out.Changes.UndoID)
	}
	logTo(ctx, req, "info", "%s", summary(r.display(), out))
	for _, q := range out.Quarantined {
		logTo(ctx, req, "warning", "%s planted %s; forgebox moved it to %s (%s)", what, q.Path, q.MovedTo, q.Why)
	}
	return out, nil
}

// gated is what the gate made of a command: it runs (stop and asking
// nil), or stop says why it does not, or asking asks the person.
type gated struct {
	decision *policy.Decision
	// approved says who approved it for this call, when a person did.
	approved string
	// denied: the decision refuses it (it is recorded as such).
	denied bool
	stop   *CommandOutput
	asking *mcp.CallToolResult
}

// gate is the one way every tool decides whether a command runs: the
// person's answer, if this call carries one (elicitation) or they gave
// one in a terminal (forgebox approve), is carried out; then the judge's
// decision goes through policy.Decision.Next, the gate the command line
// and the hook use too.
func (s *server) gate(ctx context.Context, req *mcp.CallToolRequest, t Target, why string) (gated, error) {
	var g gated
	if a, ok := s.answered(req, t); ok {
		if !a.yes {
			g.stop = s.refusedByPerson(ctx, t, why, a.declined)
			return g, nil
		}
		g.approved = "the person, in the client (" + s.grant(ctx, t, a.answer).String() + ")"
	}
	d, err := s.c.Backend.Check(ctx, t)
	if err != nil {
		return g, err
	}
	g.decision = d
	if d.Next(g.approved != "") == policy.AskPerson {
		answer, ok, err := s.c.Backend.TakeAnswer(ctx, t)
		switch {
		case err != nil:
			// Fail closed: no answer is read, the person is asked again.
		case ok && answer == "no":
			msg := "the person refused this command (forgebox approve)"
			hint := "do not run it or a variant of it; ask the person what to do instead"
			g.stop = &CommandOutput{Decision: verdict(d), Approval: &ApprovalNeeded{Message: msg, Scopes: []string{}, How: hint},
				Blocked: &Blocked{Layer: "policy rule", Message: msg, Hint: hint}}
			return g, nil
		case ok:
			g.approved = "the person, with forgebox approve (" + answer + ")"
		}
	}
	switch d.Next(g.approved != "") {
	case policy.Proceed:
		return g, nil
	case policy.Refuse:
		g.denied = true
		g.stop = &CommandOutput{Decision: verdict(d), Blocked: &Blocked{Layer: "policy rule",
			Message: "denied by forgebox's policy: " + reasonsOf(d), Hint: "do not retry this command or a variant of it; do the task another way, or ask the person"}}
		return g, nil
	}
	if canElicit(req) && ctx.Value(couldNotAsk{}) == nil {
		g.asking = s.askPerson(t, d, why)
		return g, nil
	}
	need := s.approvalNeeded(ctx, t, d, why)
	if failed, ok := ctx.Value(couldNotAsk{}).(string); ok {
		need.Message += fmt.Sprintf(" (the client could not ask the person: %s)", failed)
	}
	g.stop = &CommandOutput{Approval: need, Decision: verdict(d), Blocked: &Blocked{Layer: "policy rule", Message: need.Message, Hint: need.How}}
	return g, nil
}

func forgeboxFailed(err error) CommandOutput {
	return CommandOutput{Blocked: &Blocked{Layer: "forgebox", Message: err.Error(), Hint: "this is forgebox failing, not your command; report it to the person"}}
}

// commandOutput shapes forgebox run's result for a model.
func (s *server) commandOutput(res RunResult, idle time.Duration) CommandOutput {
	out := CommandOutput{
		ExitCode: res.ExitCode, TimedOut: res.TimedOut, IdleTimedOut: res.IdleTimedOut, DurationMS: res.DurationMS,
		Stdout: res.Stdout, Stderr: res.Stderr, StdoutBytes: res.StdoutBytes, StderrBytes: res.StderrBytes,
		Truncated: res.StdoutTruncated || res.StderrTruncated, Decision: verdict(res.Decision),
		Quarantined: res.Quarantined, Warnings: res.Warnings, Changes: res.Changes,
	}
	if res.Signal != nil {
		out.Signal = *res.Signal
	}
	if res.HistoryKey != nil {
		out.HistoryKey = *res.HistoryKey
	}
	if res.Error != nil {
		out.Blocked = s.refusal(res)
		return out
	}
	out.Ran = true
	out.Blocked = s.diagnose(res, idle)
	return out
}

// refusal explains a command that did not run.
func (s *server) refusal(res RunResult) *Blocked {
	e := res.Error
	b := &Blocked{Layer: "forgebox", Message: e.Message, Hint: e.Hint}
	switch e.Code {
	case "denied":
		b.Layer = "policy rule"
		if res.Decision != nil && len(res.Decision.Reasons) > 0 {
			b.Message = "denied by forgebox's policy: " + strings.Join(res.Decision.Reasons, "; ")
		}
		if b.Hint == "" {
			b.Hint = "do not retry this command or a variant of it; do the task another way, or ask the person"
		}
	case "approval_required":
		b.Layer = "policy rule"
	case "unavailable":
		b.Layer = "sandbox"
	case "not_found", "not_executable":
		b.Layer = "command"
	}
	if b.Hint == "" {
		b.Hint = "the command did not run; see the message"
	}
	return b
}

// diagnose names the sandbox layer behind a failure from what the run
// reported as data: a timeout, an OOM kill, a connection the allowlist
// refused, what the sandbox observed itself refusing (a connection the
// network mode cannot reach, a system call), the limit on processes, a
// write the command line names to a path the sandbox keeps read-only. It
// never reads the command's output: a program may print anything.
func (s *server) diagnose(res RunResult, idle time.Duration) *Blocked {
	refused := refusedConnection(res)
	observed := firstRefusal(res)
	readOnly := readOnlyWrite(res)
	switch {
	case res.IdleTimedOut:
		return &Blocked{Layer: "timeout", Message: fmt.Sprintf("the command printed nothing for %v and was killed (idle timeout)", idle),
			Hint: "a long silent step (a build, a download, a test suite) needs a larger idle_timeout_ms; a command waiting for input (stdin is closed) never gets it: run it non-interactively, or use shell_start and shell_send for interactive programs"}
	case res.TimedOut:
		return &Blocked{Layer: "timeout", Message: "the command was killed at its timeout",
			Hint: "give a larger timeout_ms (the server caps it), or run it in the background in a shell session"}
	case res.OOMKilled:
		return &Blocked{Layer: "limit", Message: "the command ran out of memory: the kernel killed it at forgebox's memory limit",
			Hint: "use less memory (smaller inputs, fewer parallel jobs); the limit is set when the server starts"}
	case res.ExitCode == 0:
		return nil
	case refused != nil:
		return &Blocked{Layer: "network", Message: "forgebox's network allowlist refused a connection: " + refused.Reason, Hint: networkHint(refused)}
	case observed != nil && observed.Layer == sandbox.LayerNetwork:
		return &Blocked{Layer: "network", Message: fmt.Sprintf("the command tried to reach %s (%s), which the sandbox's network (%s) does not reach", observed.Target, observed.Op, network(res)),
			Hint: networkOffHint(res)}
	case readOnly != "":
		return &Blocked{Layer: "filesystem", Message: fmt.Sprintf("the command writes %s, which the sandbox keeps read-only", readOnly),
			Hint: fmt.Sprintf("only the workspace %s (but for its protected files: .git/hooks, .git/config, .envrc, editor and agent settings), the server's --rw paths and the private /tmp are writable; write inside the workspace", s.c.Workspace)}
	case observed != nil:
		return &Blocked{Layer: "seccomp", Message: fmt.Sprintf("forgebox refused the system call %s (%s)", observed.Op, observed.Errno),
			Hint: "forgebox refuses system calls that could escape the sandbox (mount, ptrace, unshare, namespaces, kernel keyrings, io_uring...); do the task without them"}
	case res.Usage != nil && res.Usage.ForksRefused != nil && *res.Usage.ForksRefused > 0:
		return &Blocked{Layer: "limit", Message: "the command hit forgebox's limit on processes",
			Hint: "start fewer processes or threads at once"}
	}
	return nil
}

// firstRefusal is the first refusal the sandbox observed that can
// explain a failure (not a routine one), preferring the network's, or nil.
func firstRefusal(res RunResult) *sandbox.Refusal {
	var first *sandbox.Refusal
	for i, r := range res.Refusals {
		switch {
		case r.Layer == sandbox.LayerNetwork:
			return &res.Refusals[i]
		case first == nil && !r.Routine():
			first = &res.Refusals[i]
		}
	}
	return first
}

// network names the run's network mode.
func network(res RunResult) string {
	if res.Enforced == nil {
		return "unknown"
	}
	return "--net " + string(res.Enforced.Network)
}

// networkOffHint says what the model can do without the network.
func networkOffHint(res RunResult) string {
	if res.Enforced != nil && res.Enforced.Network == sandbox.NetAllow {
		return "only the hosts this server allows are reachable, and only through its proxy (HTTPS_PROXY, HTTP_PROXY and ALL_PROXY are set): a program that resolves names or connects by itself reaches nothing; use one that honours the proxy variables"
	}
	return "the network is off for commands in this server (the sandbox's own loopback works); work offline (vendored or cached dependencies), or ask the person"
}

// readOnlyWrite is the first path the command line writes, as the judge
// read it, that the sandbox kept read-only: outside the writable roots and
// private directories, or protected inside them. Writes computed at run
// time are not known: then it is "".
func readOnlyWrite(res RunResult) string {
	if res.Decision == nil || res.Enforced == nil {
		return ""
	}
	e := res.Enforced
	within := func(p string, roots []string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return pathtree.Within(p, r) })
	}
	for _, j := range res.Decision.Commands {
		for _, w := range j.Writes {
			if !within(w.Path, e.Writable) && !within(w.Path, e.PrivateDirs) || within(w.Path, e.Protected) {
				return w.Path
			}
		}
	}
	return ""
}

// networkHint says what the model can do about a refused connection, by
// the proxy's code: only a person can widen the allowlist, and only a host
// that is not allowed yet is worth asking for.
func networkHint(c *sandbox.Connection) string {
	switch c.Code {
	case "not-allowed", "ip-literal":
		return fmt.Sprintf("only the hosts this server allows are reachable; do without %s, or ask the person to allow it (%s)", c.Host, c.Advice)
	case "deny-rule":
		return fmt.Sprintf("%s is denied by the person's configuration; do without it", c.Host)
	case "refused-address":
		return fmt.Sprintf("%s resolves to a loopback, private or link-local address, which forgebox refuses (DNS rebinding defense); do without it, or ask the person", c.Host)
	case "sni-mismatch", "encrypted-client-hello":
		return fmt.Sprintf("the TLS connection to %s named another server, or hid its name; connect to the host you asked the proxy for, without ECH", c.Host)
	}
	return "the proxy refused the request: " + c.Reason
}

// refusedConnection is the first connection the allowlist refused, or nil.
func refusedConnection(res RunResult) *sandbox.Connection {
	for i, c := range res.Connections {
		if c.Decision == "denied" && c.Host != "" {
			return &res.Connections[i]
		}
	}
	return nil
}

// ResultSchemaMeta is the key, in a command tool's _meta, of the schema
// of the data its results carry in their _meta (ResultMeta).
const ResultSchemaMeta = "forgebox/result_schema"

func resultSchemaMeta[T any](tool string) mcp.Meta {
	s, _ := schemaFor[T](tool, "output")
	return mcp.Meta{ResultSchemaMeta: s}
}

// ResultMeta is the key of a command result's data in the result's
// _meta: what forgebox run --json says, but for the output, which is in
// the text. Models see the text; programs read the data.
const ResultMeta = "forgebox/result"

// commandResult renders a command's outcome for the model: a line for
// people, what stopped it or what forgebox did, then the output, head and
// tail within the server's budget; the data (CommandOutput) goes in
// _meta. It gives a command that did not run the exit code forgebox run
// gives it (125: forgebox refused its input or failed; 126: the policy or
// the person refused it).
func (s *server) commandResult(what string, out *CommandOutput) *mcp.CallToolResult {
	if !out.Ran && out.ExitCode == 0 {
		out.ExitCode = notRunExit(out)
	}
	var b strings.Builder
	b.WriteString(summary(what, *out))
	if out.Blocked != nil {
		fmt.Fprintf(&b, "\n[%s] %s\nhint: %s", out.Blocked.Layer, out.Blocked.Message, out.Blocked.Hint)
	}
	for _, q := range out.Quarantined {
		fmt.Fprintf(&b, "\nforgebox moved aside %s (to %s): %s", q.Path, q.MovedTo, q.Why)
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(&b, "\nforgebox warning: %s", w)
	}
	if c := out.Changes; c != nil && c.UndoID != "" {
		fmt.Fprintf(&b, "\nchanged the workspace: %s (undoable: the undo tool, or forgebox undo %s)", c.Summary, c.UndoID)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(&b, "\nnote: %s", n)
	}
	if out.Ran {
		id := out.HistoryKey
		nOut, nErr := shares(len(out.Stdout), len(out.Stderr), s.budget())
		stdout, cutOut := clip(out.Stdout, nOut, "stdout", id)
		stderr, cutErr := clip(out.Stderr, nErr, "stderr", id)
		if cutOut || cutErr {
			out.OutputID = s.outputs.keep(id, out.Stdout, out.Stderr)
			if out.OutputID != id {
				stdout, _ = clip(out.Stdout, nOut, "stdout", out.OutputID)
				stderr, _ = clip(out.Stderr, nErr, "stderr", out.OutputID)
			}
		}
		stream(&b, "stdout", out.StdoutBytes, stdout)
		stream(&b, "stderr", out.StderrBytes, stderr)
	}
	res := textResult(b.String(), !out.Ran)
	res.Meta = mcp.Meta{ResultMeta: out}
	return res
}

// stream writes one stream's section: its size as the command wrote it,
// then what is shown of it.
func stream(b *strings.Builder, name string, total int64, shown string) {
	fmt.Fprintf(b, "\n--- %s (%d bytes) ---\n%s", name, total, shown)
}

// notRunExit is the exit code of a command that did not run: 126 when
// the policy or a person stopped it, 125 for the rest (bad input, forgebox
// failing), as forgebox run exits.
func notRunExit(out *CommandOutput) int {
	if out.Blocked != nil && out.Blocked.Layer == "policy rule" {
		return sandbox.ExitNotExecutable
	}
	return sandbox.ExitForgebox
}

// summary is the one-line account of a command.
func summary(what string, out CommandOutput) string {
	what = oneLine(what, 80)
	if out.Ran && out.ApprovedBy != "" {
		what += " (approved by " + out.ApprovedBy + ")"
	}
	switch {
	case out.Approval != nil && len(out.Approval.Scopes) == 0:
		return fmt.Sprintf("NOT APPROVED: %s", what)
	case out.Approval != nil:
		return fmt.Sprintf("NEEDS APPROVAL: %s", what)
	case !out.Ran && out.Blocked != nil && out.Blocked.Layer == "policy rule":
		return fmt.Sprintf("DENIED: %s", what)
	case !out.Ran:
		return fmt.Sprintf("NOT RUN: %s", what)
	case out.TimedOut:
		return fmt.Sprintf("TIMED OUT after %.0f ms: %s", out.DurationMS, what)
	case out.Signal != "":
		return fmt.Sprintf("killed by %s after %.0f ms: %s", out.Signal, out.DurationMS, what)
	}
	return fmt.Sprintf("exit %d in %.0f ms: %s", out.ExitCode, out.DurationMS, what)
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "..."
	}
	return s
}

// CheckInput is check_command's arguments.
type CheckInput struct {
	Command   string `json:"command" jsonschema:"the command line to judge"`
	Directory string `json:"directory,omitempty" jsonschema:"where it would run (default: the workspace)"`
}

func (s *server) checkCommand(ctx context.Context, _ *mcp.CallToolRequest, in CheckInput) (*mcp.CallToolResult, Verdict, error) {
	if strings.TrimSpace(in.Command) == "" || strings.IndexByte(in.Command, 0) >= 0 {
		return textResult("command is empty or holds a NUL byte", true), Verdict{}, nil
	}
	dir, err := s.directory(in.Directory)
	if err != nil {
		return textResult(err.Error(), true), Verdict{}, nil
	}
	d, err := s.c.Backend.Check(ctx, Target{Line: in.Command, Dir: dir})
	if err != nil {
		return textResult("forgebox could not judge the command: "+err.Error(), true), Verdict{}, nil
	}
	v := verdict(d)
	text := fmt.Sprintf("%s (risk %d, %s, %s)", strings.ToUpper(v.Action), v.Risk, v.Level, v.Category)
	if v.Rule != "" {
		text += "; rule: " + v.Rule
	}
	if len(v.Reasons) > 0 {
		text += "\nreasons: " + strings.Join(v.Reasons, "; ")
	}
	return textResult(text, false), *v, nil
}

// approvalNeeded is what the model is told about a command that needs a
// person's approval nobody could give here: the code the person answers
// in a terminal (forgebox approve CODE).
func (s *server) approvalNeeded(ctx context.Context, t Target, d *policy.Decision, why string) *ApprovalNeeded {
	need := &ApprovalNeeded{Message: "forgebox's policy wants a person to approve this command: " + reasonsOf(d), Scopes: scopesOf(d)}
	need.Request, need.How = s.requestCode(ctx, t, why)
	return need
}

// requestCode files the command for forgebox approve and says what the
// model should tell the person.
func (s *server) requestCode(ctx context.Context, t Target, why string) (code, how string) {
	code, err := s.c.Backend.FileRequest(ctx, t, why)
	if err != nil {
		return "", "forgebox cannot take an approval for it here (" + err.Error() + "); ask the person to run it themselves"
	}
	return code, fmt.Sprintf("ask the person to approve it in a terminal with: forgebox approve %s (it shows them the command and asks them); then call again with exactly the same arguments. Do not run a variant of it meanwhile", code)
}

// refusedByPerson is the result of a question the client answered no:
// the person declined, or the client cannot ask and declines everything
// (codex exec does); then a person may still approve it in a terminal.
func (s *server) refusedByPerson(ctx context.Context, t Target, why string, declined string) *CommandOutput {
	code, how := s.requestCode(ctx, t, why)
	msg := "the person did not approve this command"
	if declined != "" {
		msg = fmt.Sprintf("the client answered %q to the approval question: the person said no, or the client declines every question", declined)
	}
	need := &ApprovalNeeded{Message: msg, Scopes: []string{}, Request: code,
		How: "do not run it or a variant of it; if the person wants it to run, " + how}
	return &CommandOutput{Approval: need, Blocked: &Blocked{Layer: "policy rule", Message: msg, Hint: need.How}}
}

func reasonsOf(d *policy.Decision) string {
	if d == nil || len(d.Reasons) == 0 {
		return "it needs a person's approval"
	}
	return strings.Join(d.Reasons, "; ")
}

// scopesOf lists the approvals the decision offers.
func scopesOf(d *policy.Decision) []string {
	scopes := []string{}
	if d != nil {
		for _, sc := range d.Scopes {
			scopes = append(scopes, sc.String())
		}
	}
	if len(scopes) == 0 {
		scopes = []string{policy.Once.String()}
	}
	return scopes
}

// display is the command as a person would type it.
func (t Target) display() string {
	if t.Line != "" {
		return t.Line
	}
	return strings.Join(t.Argv, " ")
}

// key identifies a command in a directory, to match an answer to its
// question.
func (t Target) key() string {
	return t.Dir + "\x00" + t.Line + "\x00" + strings.Join(t.Argv, "\x00")
}

// approvalInput names the input request that asks for an approval.
const approvalInput = "approval"

// askPerson returns the result that asks the client to put the command to
// its user. The request's state is a nonce the server remembers with the
// command, so that only an answer to this very question, given once,
// approves it: a call that arrives with an answer the server never asked
// for (a forged or replayed one) approves nothing.
func (s *server) askPerson(t Target, d *policy.Decision, why string) *mcp.CallToolResult {
	msg := fmt.Sprintf("The agent wants to run:\n\n  %s\n\nin %s.\nforgebox: %s.", oneLine(t.display(), 400), t.Dir, reasonsOf(d))
	if why != "" {
		msg += "\nThe agent says it is for: " + oneLine(why, 200)
	}
	answers := append(scopesOf(d), "no")
	state := s.pending.add(t.key(), answers)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: &mcp.ElicitParams{
			Message: msg,
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"answer": map[string]any{"type": "string", "enum": answers, "title": "Allow this command?",
						"description": answersMeaning(answers)},
				},
				"required": []string{"answer"},
			},
		}},
		RequestState: state,
	}
}

// answersMeaning explains the answers offered, and only those: a command
// asked about every time (R3) offers once and no.
func answersMeaning(answers []string) string {
	meaning := map[string]string{
		policy.Once.String():    "once: this time only",
		policy.Session.String(): "session: this command for the rest of this session",
		policy.Always.String():  "always: add a rule to your forgebox configuration",
		"no":                    "no: refuse",
	}
	var parts []string
	for _, a := range answers {
		parts = append(parts, meaning[a])
	}
	return strings.Join(parts, "; ")
}

// answer is the person's answer to a question, as the client returned it.
type answer struct {
	yes    bool
	answer string
	// declined is the client's action when it did not accept.
	declined string
}

// answered returns the person's answer to the question asked about t, if
// this call carries one. Anything but an accepted, offered answer is no.
func (s *server) answered(req *mcp.CallToolRequest, t Target) (answer, bool) {
	if req == nil || req.Params == nil || req.Params.RequestState == "" {
		return answer{}, false
	}
	answers, ok := s.pending.take(req.Params.RequestState, t.key())
	if !ok {
		return answer{}, false
	}
	res, _ := req.Params.InputResponses[approvalInput].(*mcp.ElicitResult)
	switch {
	case res == nil:
		return answer{declined: "nothing"}, true
	case res.Action != "accept":
		return answer{declined: res.Action}, true
	}
	a, _ := res.Content["answer"].(string)
	if a == "no" || !slices.Contains(answers, a) {
		return answer{}, true
	}
	return answer{yes: true, answer: a}, true
}

// grant records the person's answer: the scope approved (once, when
// recording a wider one failed: the person said yes all the same).
func (s *server) grant(ctx context.Context, t Target, answer string) policy.Scope {
	scope, err := policy.ParseScope(answer)
	if err != nil {
		return policy.Once
	}
	if scope != policy.Once {
		if err := s.c.Backend.Approve(ctx, t, scope); err != nil {
			return policy.Once
		}
	}
	return scope
}

// canElicit reports whether the client said it can ask its user.
func canElicit(req *mcp.CallToolRequest) bool {
	if req == nil || req.Session == nil {
		return false
	}
	p := req.Session.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}
