package agent

import (
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/sandbox"
)

// RunResult is the JSON object `forgebox run --json` prints.
type RunResult struct {
	Argv      []string `json:"argv,omitempty"`
	Command   string   `json:"command,omitempty"`
	Cwd       string   `json:"cwd"`
	Workspace string   `json:"workspace,omitempty"`
	ExitCode  int      `json:"exit_code"`
	Signal    *string  `json:"signal"`
	TimedOut  bool     `json:"timed_out"`
	// IdleTimedOut: the timeout was --idle-timeout (timed_out is true too).
	IdleTimedOut bool `json:"idle_timed_out,omitempty"`
	// OOMKilled: the kernel's OOM killer stopped the command (or a process
	// of its tree) at the memory limit; the exit code is then 137.
	OOMKilled  bool    `json:"oom_killed"`
	DurationMS float64 `json:"duration_ms"`

	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutBytes     int64  `json:"stdout_bytes"`
	StderrBytes     int64  `json:"stderr_bytes"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	// StdoutBase64 and StderrBase64 appear only when the kept bytes are
	// not valid UTF-8; they hold those bytes exactly (head then tail).
	StdoutBase64 string `json:"stdout_base64,omitempty"`
	StderrBase64 string `json:"stderr_base64,omitempty"`

	// Quarantined lists protected paths the command created, moved aside
	// after the run.
	Quarantined []sandbox.Quarantined `json:"quarantined"`
	// Connections are what the command asked forgebox's proxy for, with
	// --net allow: each host, port, decision and byte counts, the first
	// sandbox.MaxConnections; ConnectionsOmitted counts the rest.
	Connections        []sandbox.Connection `json:"connections,omitempty"`
	ConnectionsOmitted int                  `json:"connections_omitted,omitempty"`
	// Refusals are what the sandbox observed itself refusing the command,
	// as data, never parsed from output: one object per distinct refusal,
	// {"layer": "network"|"seccomp", "op": syscall, "target": destination
	// (network), "rule": filter label and "errno" (seccomp), "count": n}
	// (sandbox.Refusal). Always an array on a run that ran, [] when nothing
	// was refused; RefusalsOmitted counts refusals past
	// sandbox.MaxRefusals. Attribution is false when nothing could watch
	// (an older kernel, a seccomp listener above forgebox): then [] means
	// unknown, not none.
	Refusals        []sandbox.Refusal `json:"refusals"`
	RefusalsOmitted int               `json:"refusals_omitted,omitempty"`
	Attribution     bool              `json:"attribution"`

	// Changes is what the run changed in the workspace and the undo
	// record that takes it back (forgebox undo ID), when the run had undo
	// (enforced.undo); null without.
	Changes  *sandbox.Changes  `json:"changes"`
	Usage    *Usage            `json:"usage,omitempty"`
	Enforced *sandbox.Enforced `json:"enforced,omitempty"`
	Warnings []string          `json:"warnings"`
	Error    *Error            `json:"error,omitempty"`
	// Decision is the judge's verdict on the command, on every judged run
	// (not with --no-policy).
	Decision *policy.Decision `json:"decision,omitempty"`
	// Approval says how to approve a command that needs it, with the
	// error approval_required.
	Approval *Approval `json:"approval,omitempty"`
	// Timeline is the launch's cost breakdown, with --trace.
	Timeline []sandbox.Phase `json:"timeline,omitempty"`
	// HistoryKey names the run in the history (forgebox history show
	// KEY), null when it was not recorded. A key, not the row's id: the
	// run reaches the database through the spool, after forgebox exits.
	HistoryKey *string `json:"history_key"`
}

// Usage is the command's resource use. The first three are the kernel's
// account of the command and the children it waited for; the rest are the
// whole tree's, measured by the run's cgroup, and null without one (peak
// memory also on kernels that do not report it: cgroup v2 before 5.19).
type Usage struct {
	UserMS          float64  `json:"user_ms"`
	SystemMS        float64  `json:"system_ms"`
	MaxRSSBytes     int64    `json:"max_rss_bytes"`
	PeakMemoryBytes *int64   `json:"peak_memory_bytes"`
	CPUMS           *float64 `json:"cpu_ms"`
	ForksRefused    *int64   `json:"forks_refused"`
}

// Approval is what an approval of a command would grant: the scopes the
// decision offers (once, session, always) and the allow rules a session or
// standing approval records.
type Approval struct {
	Scopes []policy.Scope `json:"scopes"`
	Rules  []policy.Rule  `json:"rules"`
}

// Error explains why a command did not run. Code is one of: invalid,
// unavailable, setup_failed, not_found, not_executable, internal, denied
// (the judge refused the command: decision says why) and approval_required
// (the command needs an approval no one could give: approval and hint say
// how to give it).
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Layer   string `json:"layer,omitempty"`
	Step    string `json:"step,omitempty"`
	Errno   string `json:"errno,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// Failed renders a run that did not happen.
func Failed(e Error, exitCode int) RunResult {
	return RunResult{ExitCode: exitCode, Warnings: []string{}, Quarantined: []sandbox.Quarantined{}, Error: &e}
}

// FromResult renders a finished run.
func FromResult(r *sandbox.Result) RunResult {
	out := RunResult{
		ExitCode:     r.ExitCode,
		TimedOut:     r.TimedOut,
		IdleTimedOut: r.IdleTimedOut,
		DurationMS:   float64(r.Duration.Microseconds()) / 1000,
		OOMKilled:    r.OOMKilled,
		Usage: &Usage{
			UserMS:      float64(r.Usage.UserTime.Microseconds()) / 1000,
			SystemMS:    float64(r.Usage.SystemTime.Microseconds()) / 1000,
			MaxRSSBytes: r.Usage.MaxRSSBytes,
		},
		Warnings:    nonNil(r.Warnings),
		Quarantined: r.Quarantined,
		Connections: r.Connections, ConnectionsOmitted: r.ConnectionsOmitted,
		Refusals: r.Refusals, RefusalsOmitted: r.RefusalsOmitted, Attribution: r.Attribution,
		Changes: r.Changes,
	}
	if out.Refusals == nil {
		out.Refusals = []sandbox.Refusal{}
	}
	if out.Quarantined == nil {
		out.Quarantined = []sandbox.Quarantined{}
	}
	if r.Signal != "" {
		s := r.Signal
		out.Signal = &s
	}
	enf := r.Enforced
	out.Enforced = &enf
	if enf.Cgroup != "" {
		cpu := float64(r.Usage.TreeCPUTime.Microseconds()) / 1000
		forks := r.Usage.ForksRefused
		out.Usage.CPUMS, out.Usage.ForksRefused = &cpu, &forks
		if peak := r.Usage.PeakMemoryBytes; peak > 0 {
			out.Usage.PeakMemoryBytes = &peak
		}
	}
	out.Stdout, out.StdoutBase64 = r.Stdout.Text()
	out.Stderr, out.StderrBase64 = r.Stderr.Text()
	out.StdoutBytes, out.StdoutTruncated = r.Stdout.Total, r.Stdout.Truncated()
	out.StderrBytes, out.StderrTruncated = r.Stderr.Total, r.Stderr.Truncated()
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
