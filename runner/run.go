package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/shellquote"
	"github.com/forgebox/forgebox/undo"
)

// Request is one command to judge, ask about, run and record.
type Request struct {
	// Spec is the sandbox and the command (Spec.Command, else Spec.Argv).
	Spec    sandbox.Spec
	Streams sandbox.Streams
	// Host is the process's surroundings the judge reads.
	Host Host
	// Policy chooses the configuration and the session; NoPolicy runs the
	// command unjudged (the sandbox still applies).
	Policy   PolicyOptions
	NoPolicy bool
	// NetAllow are the hosts --net allow=... named, beside the
	// configuration's network.allow.
	NetAllow []string
	// Yes: a person approved this command, once, before it was judged
	// (--yes, an answer given through an MCP client). It never approves
	// a denial.
	Yes bool
	// Asker puts a decision that asks to a person; nil: nobody can be
	// asked here, and the command needs an approval given elsewhere.
	Asker Asker
	// Warn receives the judge's warnings before the command starts.
	Warn func(string)
	// Judged, when set, is called once the command may run, before the
	// launch (the command line starts forwarding signals then).
	Judged  func()
	History HistoryOptions
}

// HistoryOptions say how the run is recorded.
type HistoryOptions struct {
	Off bool
	// DB is the database (--history-db); "" is the default.
	DB string
	// Args are the arguments the record shows.
	Args []string
	// KeepOutput keeps the head and tail of output handed to the
	// command's streams as they are (it costs throughput).
	KeepOutput bool
	Version    string
}

// Asker puts a decision that asks to a person.
type Asker interface {
	// Ask returns the scope the person approved (recorded with
	// Judge.Approve when wider than once), or false when they did not.
	Ask(ctx context.Context, q Question) (policy.Scope, bool)
}

// Question is what an Asker puts to the person.
type Question struct {
	// What is the command as the person would type it.
	What     string
	Decision *policy.Decision
	Judge    *Judge
}

// Stopped says why the judge kept a command from starting.
type Stopped string

const (
	// StopDenied: the decision is a denial; nothing approves it.
	StopDenied Stopped = "denied"
	// StopNotApproved: the person was asked and said no.
	StopNotApproved Stopped = "not_approved"
	// StopApprovalRequired: nobody could be asked here.
	StopApprovalRequired Stopped = "approval_required"
)

// Outcome is what became of a Request: exactly one of Stopped (the judge
// stopped it), Err (it could not start: the configuration, the sandbox)
// and Result (it ran) is set.
type Outcome struct {
	// Decision is the judge's; nil when nothing judged the command.
	Decision *policy.Decision
	Grant    Grant
	// Where is the workspace and directory the judge saw; nil unjudged.
	Where *policy.Context
	// Judge is what judged it; nil unjudged or when it could not load.
	Judge *Judge
	// Warnings are the judge's (said through Request.Warn as well).
	Warnings []string

	Stopped Stopped
	// Err is why the command could not start: a *PolicyError, a
	// sandbox error (*sandbox.UnavailableError, *sandbox.SetupError,
	// *sandbox.ExecError, sandbox.ErrInvalid).
	Err    error
	Result *sandbox.Result
	// Kept: Result holds the output the history keeps (Streams.Keep).
	Kept bool

	// HistoryKey names the run's record; nil when it is not recorded.
	HistoryKey      *string
	HistoryWarnings []string
}

// PolicyError is a failure to load what judging needs: a configuration,
// the session's approvals, the workspace.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// keptOutput is what the history keeps of each output stream, its first
// and last halves.
const keptOutput = 32 << 10

// Run takes one command from request to outcome: it judges it, asks when
// the decision says so, launches it in the sandbox and records it. It is
// the one run path of the command line, the MCP server and history rerun.
func Run(ctx context.Context, req Request) *Outcome {
	spec := req.Spec
	out := &Outcome{}
	// The history is opened and written beside the judge and the launch.
	rec := startRecorder(&req, spec)
	if !req.NoPolicy {
		j, ok := decide(ctx, &req, &spec, rec, out)
		if !ok {
			return out
		}
		spec.NoCache = !Caches(spec, req.Streams, j.decision)
		rec.judged(j)
	} else {
		if spec.Network == sandbox.NetAllow {
			// No judge, but the allowlist is in the configuration too.
			var warnings []string
			if spec.Allowlist, warnings, out.Err = ConfiguredAllowlist(req.Host, req.Policy, req.NetAllow, spec.ReadWrite); out.Err != nil {
				rec.skip()
				return out
			}
			out.Warnings = warnings
			req.warn(warnings)
		}
		rec.judged(nil)
	}
	st := req.Streams
	// The history keeps the output where forgebox sees it anyway; output
	// handed over to the command is copied only with KeepOutput.
	out.Kept = rec != nil && (st.Capture || req.History.KeepOutput || !st.HandsOver())
	if out.Kept && !st.Capture {
		st.Keep = keptOutput
	}
	launched := st.Launched
	st.Launched = func(e sandbox.Enforced) {
		if launched != nil {
			launched(e)
		}
		rec.launch(e)
	}
	if req.Judged != nil {
		req.Judged()
	}
	res, err := sandbox.Run(ctx, spec, st)
	if err != nil {
		out.Err = err
		code, exit := Classify(err)
		out.HistoryKey, out.HistoryWarnings = rec.failed(code, exit)
		return out
	}
	out.Result = res
	out.HistoryKey, out.HistoryWarnings = rec.finish(res, out.Kept)
	if c := res.Changes; c != nil && c.UndoID != "" && out.HistoryKey != nil {
		// The record names its run, for forgebox undo KEY and history show.
		if err := undo.StoreFor(spec.StateDir).SetHistory(res.Workspace, c.UndoID, *out.HistoryKey); err != nil {
			out.HistoryWarnings = append(out.HistoryWarnings, fmt.Sprintf("undo: name the record %s after its run: %v", c.UndoID, err))
		}
	}
	return out
}

// judged is the judge's part of a run.
type judged struct {
	decision *policy.Decision
	// Grant is how an ask was approved; history the configuration's
	// history settings; where the workspace and the command's directory.
	Grant   Grant
	history policy.History
	where   *policy.Context
}

// decide judges the command before anything starts, and asks for an
// approval when the decision says so. It reports false, with out saying
// why, when the command must not run.
func decide(ctx context.Context, req *Request, spec *sandbox.Spec, rec *recorder, out *Outcome) (*judged, bool) {
	js, err := LoadJudge(req.Host, req.Policy)
	if err != nil {
		// Whether the configuration turns the history off is unknown.
		rec.skip()
		out.Err = &PolicyError{err}
		return nil, false
	}
	out.Judge, out.Where, out.Warnings = js, js.Ctx, js.Warnings
	if spec.Network == sandbox.NetAllow {
		if spec.Allowlist, err = Allowlist(req.NetAllow, js.Engine.Policy().Network, append([]string{js.Ctx.Workspace}, spec.ReadWrite...)); err != nil {
			rec.skip()
			out.Err = err
			return nil, false
		}
	}
	req.warn(js.Warnings)
	// The sandbox resolves the workspace again; handing it the judge's
	// makes both speak of the same directory.
	spec.Workspace = js.Ctx.Workspace
	js.Ctx.Sandbox = Containment(*spec)
	d := js.Decide(spec.Command, spec.Argv)
	// What the judge let through only because undo can take it back
	// must not run without undo.
	spec.RequireUndo = d.NeedsUndo
	if d.Empty() {
		// A line of blanks or comments is a caller's mistake, not a
		// question for a person.
		rec.skip()
		out.Err = &PolicyError{errors.New("there is no command: the line is empty, or only blanks and comments")}
		return nil, false
	}
	out.Decision = d
	j := &judged{decision: d, history: js.Engine.Policy().History, where: js.Ctx}
	stop := func(status string, why Stopped) (*judged, bool) {
		out.Stopped, out.Grant = why, j.Grant
		out.HistoryKey, out.HistoryWarnings = rec.stopped(verdict{status: status, j: j, settings: &j.history, where: js.Ctx, errCode: string(why)})
		return nil, false
	}
	switch d.Next(req.Yes) {
	case policy.Proceed:
		if d.Action == policy.Ask {
			j.Grant = Grant{Asked: true, Approved: true, Scope: policy.Once}
		}
		out.Grant = j.Grant
		return j, true
	case policy.Refuse:
		return stop(history.StatusDenied, StopDenied)
	}
	j.Grant = Grant{Asked: true}
	if req.Asker == nil {
		return stop(history.StatusRefused, StopApprovalRequired)
	}
	scope, ok := req.Asker.Ask(ctx, Question{What: Display(spec.Command, argvOrNil(*spec)), Decision: d, Judge: js})
	j.Grant = Grant{Asked: true, Approved: ok, Scope: scope}
	if !ok {
		return stop(history.StatusRefused, StopNotApproved)
	}
	out.Grant = j.Grant
	return j, true
}

// Decide judges a command line, or a program and its arguments when line
// is empty.
func (j *Judge) Decide(line string, argv []string) *policy.Decision {
	if line != "" {
		return j.Engine.DecideLine(j.Ctx, line)
	}
	return j.Engine.DecideArgv(j.Ctx, argv)
}

func (r *Request) warn(ws []string) {
	if r.Warn == nil {
		return
	}
	for _, w := range ws {
		r.Warn(w)
	}
}

// ConfiguredAllowlist is the allowlist of a run without a judge
// (--no-policy): the configuration is read for its network section alone.
// Its warnings (a workspace configuration's allow ignored) are returned,
// to be said as a judged run says them.
func ConfiguredAllowlist(h Host, o PolicyOptions, netAllow, readWrite []string) (*sandbox.Allowlist, []string, error) {
	js, err := LoadJudge(h, o)
	if err != nil {
		return nil, nil, &PolicyError{err}
	}
	al, err := Allowlist(netAllow, js.Engine.Policy().Network, append([]string{js.Ctx.Workspace}, readWrite...))
	return al, js.Warnings, err
}

// argvOrNil is the command's argv, nil when it is a line.
func argvOrNil(spec sandbox.Spec) []string {
	if spec.Command != "" {
		return nil
	}
	return spec.Argv
}

// Classify gives a failure to start its stable error code and forgebox's
// exit code: the codes agents branch on. The advice that goes with them is
// the command line's to give.
func Classify(err error) (code string, exit int) {
	var (
		un    *sandbox.UnavailableError
		setup *sandbox.SetupError
		ex    *sandbox.ExecError
		pe    *PolicyError
		cfg   *policy.ConfigError
	)
	switch {
	case errors.As(err, &cfg), errors.As(err, &pe):
		return "invalid", ExitForgebox
	case errors.As(err, &ex) && ex.NotFound():
		return "not_found", ExitNotFound
	case errors.As(err, &ex):
		return "not_executable", ExitNotExecutable
	case errors.As(err, &un):
		return "unavailable", ExitForgebox
	case errors.As(err, &setup):
		return "setup_failed", ExitForgebox
	case errors.Is(err, sandbox.ErrInvalid):
		return "invalid", ExitForgebox
	}
	return "internal", ExitForgebox
}

// The exit codes of a command that did not run (sandbox.ExitForgebox).
const (
	ExitForgebox      = sandbox.ExitForgebox
	ExitNotExecutable = sandbox.ExitNotExecutable
	ExitNotFound      = sandbox.ExitNotFound
)

// ms is a duration in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Display is the command as the person would type it.
func Display(line string, argv []string) string {
	if argv == nil || line != "" {
		return line
	}
	return shellquote.Join(argv)
}
