package history

import (
	"context"
	"fmt"
	"io"
)

// ExportVersion is the "v" of every exported event. It changes only when a
// field changes meaning or disappears; new fields do not change it.
const ExportVersion = 1

// ExportType is the "type" of every exported event.
const ExportType = "forgebox.run"

// Event is one line of Export: a JSON object, UTF-8, newline-terminated.
// Field names are stable; absent optional fields are omitted.
//
//	v                 1 (ExportVersion)
//	type              "forgebox.run"
//	id                run id, unique in this database, never reused
//	session_id        agent or user session, if any
//	pty_session_id    interactive session, if any
//	command           the shell command line (sh -c), if the run had one
//	argv              program and arguments, if it ran without a shell
//	cwd, workspace    where it ran; the workspace it was confined to
//	args              the forgebox run arguments that made it (for rerun)
//	status            running, finished, denied, refused, failed, abandoned
//	started_at        RFC 3339, UTC, nanoseconds
//	ended_at          RFC 3339, UTC; absent while running
//	duration_ms       float milliseconds
//	exit_code         absent if it never exited (denied, killed by a signal)
//	signal            signal name that ended it, if any
//	timed_out, oom_killed  booleans
//	error_code        forgebox's error code when it could not run
//	stdout, stderr    redacted output, bounded (head and tail kept)
//	stdout_bytes, stderr_bytes  bytes the command wrote
//	output_truncated  true when output was cut to its head and tail
//	output_kept       false when forgebox passed output through unseen
//	permission_status auto_approved, granted, denied, asked_approved,
//	                  asked_denied, not_judged
//	permission_scope  once, session, permanent
//	risk_score, level, category, matched_rule  the judge's verdict
//	decision          the judge's full decision (JSON object)
//	enforced          what the sandbox enforced (JSON object)
//	network           with --net allow: {connections: [{host, port, decision,
//	                  code, reason, bytes_up, bytes_down, ...}], omitted: N}
//	env               [{name, value, secret}]: no value for secret names
//	forgebox_version, host, user, pid  who ran it
//
// Secrets were redacted when the row was stored: see Redactor.
type Event struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	*Run
}

// Export writes the runs f selects (Limit: the newest Limit) as JSON Lines,
// one Event per run, oldest first (by start time, ties by id), for audit
// pipelines.
func (s *Store) Export(ctx context.Context, w io.Writer, f Filter) error {
	where, args, err := s.scope(ctx, f)
	if err != nil {
		return fmt.Errorf("export history: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+`, stdout, stderr, network FROM history WHERE `+where+
		` ORDER BY started_at, id`, args...)
	if err != nil {
		return fmt.Errorf("export history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRun(rows, true)
		if err != nil {
			return fmt.Errorf("export history: %w", err)
		}
		r.StartedAt = r.StartedAt.UTC()
		if r.EndedAt != nil {
			t := r.EndedAt.UTC()
			r.EndedAt = &t
		}
		b, err := marshalJSON(Event{V: ExportVersion, Type: ExportType, Run: r})
		if err != nil {
			return fmt.Errorf("export run %d: %w", r.ID, err)
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("export history: write: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export history: %w", err)
	}
	return nil
}
