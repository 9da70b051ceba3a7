package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/forgebox/forgebox/sandbox"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/session"
)

// Shell sessions: a sandboxed bash on a pseudo-terminal that lives between
// calls. Each session is one forgebox run of bash with the server's
// settings; what shell_exec runs in it is judged first, like any command,
// and recorded in the history with the session's id.

type ShellStartInput struct {
	Cwd  string `json:"cwd,omitempty" jsonschema:"the directory the shell starts in, inside the workspace (default: the workspace)"`
	Rows int    `json:"rows,omitempty" jsonschema:"terminal rows (default 24)"`
	Cols int    `json:"cols,omitempty" jsonschema:"terminal columns (default 80)"`
}

type ShellStarted struct {
	Session string `json:"session" jsonschema:"the session's id, for the other shell_ tools"`
	Cwd     string `json:"cwd" jsonschema:"the directory the shell started in"`
}

type ShellExecInput struct {
	Session   string `json:"session" jsonschema:"the session id shell_start returned"`
	Command   string `json:"command" jsonschema:"the command line to run in the session's shell; cd and exports persist"`
	TimeoutMS int64  `json:"timeout_ms,omitempty" jsonschema:"interrupt it (Ctrl-C) after this many milliseconds (default 120000; capped by the server)"`
}

type ShellExecOutput struct {
	Ran      bool `json:"ran" jsonschema:"the command ran; false when the policy stopped it or it awaits an approval"`
	ExitCode int  `json:"exit_code" jsonschema:"the command's exit status: 130 after an interrupt, -1 when unknown because it is still running"`
	// The output (stdout and stderr interleaved as on a terminal, without
	// escape sequences) is in the result's text, once.
	TimedOut     bool            `json:"timed_out" jsonschema:"the timeout passed and Ctrl-C was sent"`
	StillRunning bool            `json:"still_running,omitempty" jsonschema:"the command did not stop after Ctrl-C: its further output goes to shell_read"`
	Truncated    bool            `json:"truncated" jsonschema:"the output was longer than forgebox keeps: its middle was dropped"`
	DurationMS   float64         `json:"duration_ms" jsonschema:"how long the command ran, in milliseconds"`
	Cwd          string          `json:"cwd,omitempty" jsonschema:"the shell's directory after the command"`
	Blocked      *Blocked        `json:"blocked,omitempty" jsonschema:"what stopped the command, and how to proceed"`
	Approval     *ApprovalNeeded `json:"approval_required,omitempty" jsonschema:"set when the command needs a person's approval that could not be asked for here"`
	Decision     *Verdict        `json:"decision,omitempty" jsonschema:"the policy's decision on the command"`
	HistoryKey   string          `json:"history_key,omitempty" jsonschema:"the run's key in forgebox's history"`
	// Quarantined lists protected paths the session's commands created,
	// moved aside.
	Quarantined []sandbox.Quarantined `json:"quarantined,omitempty" jsonschema:"protected paths the session's commands created, moved aside"`
	OutputID    string                `json:"output_id,omitempty" jsonschema:"the id read_output takes, when the text shows only the head and tail of the output"`
}

type ShellSendInput struct {
	Session string `json:"session" jsonschema:"the session id"`
	Input   string `json:"input" jsonschema:"text and keys to type"`
}

type ShellReadInput struct {
	Session string `json:"session" jsonschema:"the session id"`
	WaitMS  int64  `json:"wait_ms,omitempty" jsonschema:"wait up to this many milliseconds for output to settle (default 500)"`
}

type ShellReadOutput struct {
	Output    string         `json:"output" jsonschema:"the text printed since the last read, without escape sequences"`
	Truncated bool           `json:"truncated" jsonschema:"the output was longer than forgebox keeps: its middle was dropped"`
	Screen    session.Screen `json:"screen" jsonschema:"what the terminal shows now"`
	AtPrompt  bool           `json:"at_prompt" jsonschema:"the shell waits for a command line: shell_exec will run"`
	Alive     bool           `json:"alive" jsonschema:"the session is open and its shell running"`
	// Quarantined lists protected paths the session's commands created,
	// moved aside.
	Quarantined []sandbox.Quarantined `json:"quarantined,omitempty" jsonschema:"protected paths the session's commands created, moved aside"`
	OutputID    string                `json:"output_id,omitempty" jsonschema:"the id read_output takes, when the text shows only the head and tail of the output"`
}

type SessionInput struct {
	Session string `json:"session" jsonschema:"the session id"`
}

type ShellList struct {
	Sessions []session.Info `json:"sessions" jsonschema:"the open sessions"`
}

// SessionCommand is a command shell_exec ran, for the history.
type SessionCommand struct {
	PTYSession string
	Command    string
	Cwd        string
	Decision   *policy.Decision
	Approved   bool // a person approved it here
	Started    time.Time
	// How it went: the policy denied it, or it was typed with shell_send
	// at the prompt (its end and status are not known), or Result says.
	Denied, Sent bool
	Result       session.ExecResult
}

func (s *server) addSessionTools(srv *mcp.Server) {
	if s.c.Sessions == nil || s.c.SessionArgv == nil {
		return
	}
	addTool(srv, &mcp.Tool{Name: "shell_start", Title: "Start a shell session", Annotations: changes(false, false),
		Description: `Start a sandboxed bash on a terminal that persists between calls (cd, exported variables, a virtualenv carry over) and can run interactive programs. Returns the session id. Sessions close after a while unused; at most a few are open at once.`},
		s.shellStart)
	addTool(srv, &mcp.Tool{Name: "shell_exec", Title: "Run a command in a shell session", Annotations: changes(true, false), Meta: resultSchemaMeta[ShellExecOutput]("shell_exec"),
		Description: `Run a command line in a session's shell and wait for it: its output and exit status. It is judged by the policy first, like run_shell_command. Refused while an interactive program holds the terminal (use shell_send and shell_read for that).`},
		s.shellExec)
	addTool(srv, &mcp.Tool{Name: "shell_send", Title: "Type into a shell session", Annotations: changes(true, false),
		Description: "Type into a session's terminal, for interactive programs (a REPL, vim, less, top, git rebase -i). " + session.KeySyntax + " What you type is not judged by the policy: the session's sandbox still applies."},
		s.shellSend)
	addTool(srv, &mcp.Tool{Name: "shell_read", Title: "Read a shell session's output and screen", Annotations: readOnly(),
		Description: "Read a session: the output since the last read, and the screen as a terminal shows it (rows of text, cursor position), to see what vim or top displays."},
		s.shellRead)
	addTool(srv, &mcp.Tool{Name: "shell_list", Title: "List shell sessions", Annotations: readOnly(),
		Description: "List the open shell sessions."}, s.shellList)
	addTool(srv, &mcp.Tool{Name: "shell_close", Title: "Close a shell session", Annotations: changes(true, true),
		Description: "Close a shell session: every process it started dies."}, s.shellClose)
}

func (s *server) shellStart(ctx context.Context, _ *mcp.CallToolRequest, in ShellStartInput) (*mcp.CallToolResult, ShellStarted, error) {
	dir, err := s.directory(in.Cwd)
	if err != nil {
		return textResult(err.Error(), true), ShellStarted{}, nil
	}
	sess, err := s.c.Sessions.Start(ctx, session.Options{Argv: s.c.SessionArgv(dir), Dir: dir, Rows: in.Rows, Cols: in.Cols})
	if err != nil {
		return textResult("could not start a shell session: "+err.Error(), true), ShellStarted{}, nil
	}
	s.setCwd(sess.ID, dir)
	out := ShellStarted{Session: sess.ID, Cwd: dir}
	return textResult(fmt.Sprintf("session %s started in %s", sess.ID, dir), false), out, nil
}

func (s *server) shellExec(ctx context.Context, req *mcp.CallToolRequest, in ShellExecInput) (*mcp.CallToolResult, any, error) {
	failed := func(msg string) (*mcp.CallToolResult, any, error) {
		return execResult(msg, true, ShellExecOutput{ExitCode: sandbox.ExitForgebox, Blocked: &Blocked{Layer: "input", Message: msg, Hint: "fix the arguments and call again"}}), nil, nil
	}
	sess, err := s.c.Sessions.Get(in.Session)
	if err != nil {
		return failed(err.Error())
	}
	if strings.TrimSpace(in.Command) == "" || strings.IndexByte(in.Command, 0) >= 0 {
		return failed("command is empty or holds a NUL byte")
	}
	t := Target{Line: in.Command, Dir: s.cwd(sess.ID), Session: true}
	g, err := s.gate(ctx, req, t, "")
	switch {
	case err != nil:
		return failed("forgebox could not judge the command: " + err.Error())
	case g.asking != nil:
		return g.asking, nil, nil
	case g.stop != nil:
		if g.denied {
			s.record(SessionCommand{PTYSession: sess.ID, Command: t.Line, Cwd: t.Dir, Decision: g.decision, Started: time.Now(), Denied: true})
		}
		out := ShellExecOutput{ExitCode: notRunExit(g.stop), Approval: g.stop.Approval, Decision: g.stop.Decision, Blocked: g.stop.Blocked}
		return execResult(stoppedText(in.Command, *g.stop), true, out), nil, nil
	}
	d, approved := g.decision, g.approved
	timeout, _, err := s.timeout(in.TimeoutMS)
	if err != nil {
		return failed(err.Error())
	}
	start := time.Now()
	res, err := sess.Exec(ctx, in.Command, timeout)
	if err != nil {
		return failed(err.Error())
	}
	if dir, err := sess.Exec(ctx, "pwd", 5*time.Second); err == nil && dir.ExitCode == 0 {
		s.setCwd(sess.ID, strings.TrimSpace(dir.Output))
	}
	out := ShellExecOutput{Ran: true, ExitCode: res.ExitCode, TimedOut: res.TimedOut, StillRunning: res.StillRunning,
		Truncated: res.Truncated, DurationMS: float64(res.Duration.Microseconds()) / 1000, Cwd: s.cwd(sess.ID), Decision: verdict(d)}
	out.HistoryKey = s.record(SessionCommand{PTYSession: sess.ID, Command: t.Line, Cwd: t.Dir, Decision: d, Approved: approved != "", Started: start, Result: res})
	shown, cut := clip(res.Output, s.budget(), "stdout", out.HistoryKey)
	if cut {
		out.OutputID = s.outputs.keep(out.HistoryKey, res.Output, "")
		shown, _ = clip(res.Output, s.budget(), "stdout", out.OutputID)
	}
	text := fmt.Sprintf("exit %d in %.0f ms: %s\n%s", res.ExitCode, out.DurationMS, oneLine(in.Command, 80), shown)
	if res.TimedOut {
		text = fmt.Sprintf("TIMED OUT (interrupted) after %.0f ms: %s\n%s", out.DurationMS, oneLine(in.Command, 80), shown)
	}
	var warnings []string
	out.Quarantined, warnings = s.checkWorkspace()
	for _, q := range out.Quarantined {
		text += fmt.Sprintf("\nforgebox moved aside %s (to %s): %s", q.Path, q.MovedTo, q.Why)
	}
	for _, w := range warnings {
		text += "\nforgebox: " + w
	}
	return execResult(text, false, out), nil, nil
}

// execResult is shell_exec's result: the text, with the output once, for
// the model, and the data in _meta, as for run_shell_command.
func execResult(text string, isError bool, out ShellExecOutput) *mcp.CallToolResult {
	res := textResult(text, isError)
	res.Meta = mcp.Meta{ResultMeta: out}
	return res
}

// record writes a session command to the history, if the server records.
func (s *server) record(c SessionCommand) string {
	if s.c.Record == nil {
		return ""
	}
	return s.c.Record(c)
}

// shellSend types into a session. At the shell's prompt what is typed is a
// command, and it is judged like shell_exec: then the input must be one
// line ending in {Enter}, typed onto an empty line. Once a program holds
// the terminal, what is typed is that program's input (vim's keys, a
// REPL's expressions) and is not judged; the sandbox still applies.
func (s *server) shellSend(ctx context.Context, req *mcp.CallToolRequest, in ShellSendInput) (*mcp.CallToolResult, Done, error) {
	sess, err := s.c.Sessions.Get(in.Session)
	if err != nil {
		return textResult(err.Error(), true), Done{}, nil
	}
	input := in.Input
	atPrompt, program := settle(sess)
	if !atPrompt && !program {
		return textResult("the shell is neither at its prompt nor running a program (a command is ending, or output is still coming): call shell_read, then send again", true), Done{}, nil
	}
	if atPrompt {
		line, ok := promptLine(in.Input)
		if !ok {
			return textResult("the shell is at its prompt: shell_send takes one command line ending in {Enter} there (no other keys), judged like shell_exec; "+
				"or use shell_exec. Keys and partial input are for a program that holds the terminal.", true), Done{}, nil
		}
		t := Target{Line: line, Dir: s.cwd(sess.ID), Session: true}
		g, err := s.gate(ctx, req, t, "")
		switch {
		case err != nil:
			return textResult("forgebox could not judge the command: "+err.Error(), true), Done{}, nil
		case g.asking != nil:
			return g.asking, Done{}, nil
		case g.stop != nil:
			if g.denied {
				s.record(SessionCommand{PTYSession: sess.ID, Command: line, Cwd: t.Dir, Decision: g.decision, Started: time.Now(), Denied: true})
			}
			return textResult(stoppedText(line, *g.stop), true), Done{}, nil
		}
		d, approved := g.decision, g.approved
		// Onto an empty line: Ctrl-E then Ctrl-U clear whatever readline
		// holds, so the line that runs is the line judged.
		input = "{Ctrl-E}{Ctrl-U}" + in.Input
		s.record(SessionCommand{PTYSession: sess.ID, Command: line, Cwd: t.Dir, Decision: d, Approved: approved != "", Started: time.Now(), Sent: true})
	}
	if err := sess.Send(input); err != nil {
		return textResult(err.Error(), true), Done{}, nil
	}
	return textResult("sent; call shell_read to see the result", false), Done{Done: true}, nil
}

// settle waits, briefly, until the session's shell is at its prompt or a
// program holds its terminal: typed input is a command in the first case,
// the program's input in the second. A program is told from the process
// tree, not from the prompt marker: input typed before a marker arrives is
// never taken for a program's.
func settle(sess *session.Session) (atPrompt, program bool) {
	for end := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if program = sess.ProgramInForeground(); program {
			return false, true
		}
		if atPrompt = sess.AtPrompt(); atPrompt || time.Now().After(end) {
			return atPrompt, false
		}
	}
}

// promptLine returns the command line of an input typed at the prompt:
// text with no keys but a final {Enter} ({{ is a literal brace).
func promptLine(input string) (string, bool) {
	body, ok := strings.CutSuffix(input, "{Enter}")
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '{' && strings.HasPrefix(body[i:], "{{"):
			b.WriteByte('{')
			i++
		case c == '{' || c < 0x20 || c == 0x7f:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	line := b.String()
	return line, strings.TrimSpace(line) != ""
}

func (s *server) shellRead(_ context.Context, _ *mcp.CallToolRequest, in ShellReadInput) (*mcp.CallToolResult, ShellReadOutput, error) {
	sess, err := s.c.Sessions.Get(in.Session)
	if err != nil {
		return textResult(err.Error(), true), ShellReadOutput{}, nil
	}
	wait := 500 * time.Millisecond
	if in.WaitMS > 0 {
		wait = min(time.Duration(in.WaitMS), maxWaitMS) * time.Millisecond
	}
	r := sess.Read(wait)
	out := ShellReadOutput{Output: r.Output, Truncated: r.Truncated, Screen: r.Screen, AtPrompt: r.AtPrompt, Alive: r.Alive}
	text := fmt.Sprintf("--- new output ---\n%s\n--- screen (%dx%d, cursor row %d col %d) ---\n%s", r.Output, r.Screen.Rows, r.Screen.Cols, r.Screen.CursorRow, r.Screen.CursorCol, r.Screen.Text)
	var warnings []string
	out.Quarantined, warnings = s.checkWorkspace()
	for _, w := range warnings {
		text += "\nforgebox: " + w
	}
	return textResult(text, false), out, nil
}

func (s *server) shellList(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, ShellList, error) {
	l := s.c.Sessions.List()
	if l == nil {
		l = []session.Info{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d session(s)", len(l))
	for _, i := range l {
		fmt.Fprintf(&b, "\n%s started %s, last used %s, exited %v", i.ID, i.Created.Format(time.TimeOnly), i.LastUsed.Format(time.TimeOnly), i.Exited)
	}
	return textResult(b.String(), false), ShellList{Sessions: l}, nil
}

func (s *server) shellClose(_ context.Context, _ *mcp.CallToolRequest, in SessionInput) (*mcp.CallToolResult, Done, error) {
	if err := s.c.Sessions.Close(in.Session); err != nil {
		return textResult(err.Error(), true), Done{}, nil
	}
	s.setCwd(in.Session, "")
	return textResult("closed "+in.Session, false), Done{Done: true}, nil
}

// cwd is a session's directory as last seen, for judging its commands.
func (s *server) cwd(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.cwds[id]; d != "" {
		return d
	}
	return s.c.Workspace
}

func (s *server) setCwd(id, dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cwds == nil {
		s.cwds = map[string]string{}
	}
	if dir == "" {
		delete(s.cwds, id)
		return
	}
	s.cwds[id] = dir
}

// checkWorkspace runs the sandbox's check of the writable roots, when the
// server has one.
func (s *server) checkWorkspace() ([]sandbox.Quarantined, []string) {
	if s.c.CheckWorkspace == nil {
		return nil, nil
	}
	return s.c.CheckWorkspace()
}

// stoppedText tells the model why a command typed into a session did not
// run.
func stoppedText(line string, out CommandOutput) string {
	text := summary(line, out) + "\n" + out.Blocked.Message
	if out.Approval != nil {
		text += "\nhint: " + out.Blocked.Hint
	}
	return text
}
