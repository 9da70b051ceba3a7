package history

import (
	"encoding/json"
	"time"

	"github.com/forgebox/forgebox/shellquote"
)

// Status says where a run is in its life.
const (
	StatusRunning   = "running"   // started, not yet finished
	StatusFinished  = "finished"  // the command ran and ended (any exit code)
	StatusDenied    = "denied"    // the judge denied it: nothing started
	StatusRefused   = "refused"   // it needed an approval it did not get: nothing started
	StatusFailed    = "failed"    // forgebox could not start it (bad flags, a missing layer)
	StatusAbandoned = "abandoned" // its forgebox process vanished while it ran
)

// Permission statuses: how the judge's decision was reached.
const (
	PermAutoApproved  = "auto_approved"  // allowed by the thresholds
	PermGranted       = "granted"        // allowed by a rule or a standing approval
	PermDenied        = "denied"         // denied by a rule, a built-in or the thresholds
	PermAskedApproved = "asked_approved" // asked, and approved (at the prompt or with --yes)
	PermAskedDenied   = "asked_denied"   // asked, and not approved
	PermNotJudged     = "not_judged"     // --no-policy
)

// EnvVar is one variable of the command's environment. Value is empty for
// a secret one (Secret true): only its name is kept.
type EnvVar struct {
	Name   string `json:"name"`
	Value  string `json:"value,omitempty"`
	Secret bool   `json:"secret,omitempty"`
}

// Run is one row of the history.
type Run struct {
	ID int64 `json:"id"`
	// Key names the run before it reaches the database (see Spool), and
	// after: forgebox run --json reports it as history_key.
	Key          string   `json:"key,omitempty"`
	SessionID    string   `json:"session_id,omitempty"`
	PTYSessionID string   `json:"pty_session_id,omitempty"`
	Command      string   `json:"command,omitempty"` // a -c line
	Argv         []string `json:"argv,omitempty"`    // or a program and its arguments
	Cwd          string   `json:"cwd"`
	Workspace    string   `json:"workspace,omitempty"`
	// Args are the arguments of forgebox run that made the run, for rerun.
	Args []string `json:"args,omitempty"`

	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	EndedAt    *time.Time `json:"ended_at,omitempty"`
	DurationMS *float64   `json:"duration_ms,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Signal     string     `json:"signal,omitempty"`
	TimedOut   bool       `json:"timed_out"`
	OOMKilled  bool       `json:"oom_killed"`
	ErrorCode  string     `json:"error_code,omitempty"` // forgebox's error code when it did not run

	Stdout          string `json:"stdout,omitempty"`
	Stderr          string `json:"stderr,omitempty"`
	StdoutBytes     int64  `json:"stdout_bytes"`
	StderrBytes     int64  `json:"stderr_bytes"`
	OutputTruncated bool   `json:"output_truncated"`
	// OutputKept is false when forgebox handed the output over without
	// seeing it (then Stdout and Stderr are empty and the counts zero).
	OutputKept bool `json:"output_kept"`

	Permission string `json:"permission_status"`
	Scope      string `json:"permission_scope,omitempty"` // once, session, permanent
	Risk       int    `json:"risk_score"`
	Level      string `json:"level,omitempty"`
	Category   string `json:"category,omitempty"`
	Rule       string `json:"matched_rule,omitempty"`
	// Decision is the judge's full decision as JSON.
	Decision json.RawMessage `json:"decision,omitempty"`
	// Enforced is what the sandbox enforced, as JSON.
	Enforced json.RawMessage `json:"enforced,omitempty"`
	// Network is what the command asked the allowlist proxy for, as a JSON
	// object: {"connections": [{host, port, decision, bytes, ...}],
	// "omitted": N}; empty without --net allow.
	Network json.RawMessage `json:"network,omitempty"`
	Env     []EnvVar        `json:"env,omitempty"`

	Version string `json:"forgebox_version"`
	Host    string `json:"host,omitempty"`
	User    string `json:"user,omitempty"`
	// PID, PIDStart and BootID identify the forgebox process that wrote a
	// running row, so that a later Open can tell it vanished.
	PID      int    `json:"pid,omitempty"`
	PIDStart int64  `json:"-"`
	BootID   string `json:"-"`
}

// Line is the command as one line: Command, or Argv quoted for a POSIX
// shell. It is what the history shows, searches and counts.
func (r *Run) Line() string {
	if r.Command != "" || len(r.Argv) == 0 {
		return r.Command
	}
	return shellquote.Join(r.Argv)
}
