package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// maxText bounds every stored stream and command line. The caller bounds
// output already; this cap stops a buggy caller from bloating the database.
const maxText = 256 << 10

// insertColumns are written by Start and Record, in the order of rowArgs.
const insertColumns = `session_id, pty_session_id, command, argv, command_line, cwd, workspace, args,
	status, started_at, ended_at, duration_ms, exit_code, signal, timed_out, oom_killed, error_code,
	stdout, stderr, stdout_bytes, stderr_bytes, output_truncated, output_kept,
	permission_status, permission_scope, risk_score, level, category, matched_rule, decision, enforced, env,
	forgebox_version, host, user, pid, pid_start, boot_id, network`

const insertSQL = `INSERT INTO history (` + insertColumns + `) VALUES (` +
	`?,?,?,?,?,?,?,?, ?,?,?,?,?,?,?,?,?, ?,?,?,?,?,?, ?,?,?,?,?,?,?,?,?, ?,?,?,?,?,?, ?)`

// Start records a run that is about to start, with status running
// (r.Status is ignored), and sets r.ID. It records this process's PID,
// start time and boot ID unless r names them, so that a later Open can tell
// the run was abandoned. Of r it writes only r.ID: r may be read elsewhere
// meanwhile (by the sandbox launch). One INSERT (a trigger upserts the
// session row in the same statement), committed with synchronous=FULL: the
// row must survive a power cut during a long run, which NORMAL promises
// only once a checkpoint has synced the WAL. Start runs while the sandbox
// launches, so its fsync is off the command's critical path.
func (s *Store) Start(ctx context.Context, r *Run) (int64, error) {
	c := *r
	c.Status = StatusRunning
	id, err := s.insert(ctx, &c, true)
	if err != nil {
		return 0, fmt.Errorf("record run start: %w", err)
	}
	r.ID = id
	return id, nil
}

// Record stores a complete run in one statement: a run that never started
// (denied, refused, failed) or one recorded after the fact. It sets r.ID.
func (s *Store) Record(ctx context.Context, r *Run) (int64, error) {
	if r.Status == "" {
		return 0, errors.New("record run: empty status")
	}
	c := *r
	id, err := s.insert(ctx, &c, false)
	if err != nil {
		return 0, fmt.Errorf("record run: %w", err)
	}
	r.ID = id
	return id, nil
}

// Finish completes the row r.ID: status (finished when r.Status is empty
// or running), ended_at (now when r.EndedAt is nil), duration_ms (computed
// from the stored start when r.DurationMS is nil), exit code, signal,
// timeout, OOM, error code, output, what was enforced (kept as started
// when r.Enforced is empty) and the network connections. It is one UPDATE: it sits on the path between
// the command's end and forgebox's exit.
func (s *Store) Finish(ctx context.Context, r *Run) error {
	if r.ID <= 0 {
		return fmt.Errorf("finish run %d: %w", r.ID, ErrNotFound)
	}
	c := *r
	bound(&c)
	s.redact.output(&c)
	status := c.Status
	if status == "" || status == StatusRunning {
		status = StatusFinished
	}
	ended := s.now()
	if c.EndedAt != nil {
		ended = *c.EndedAt
	}
	res, err := s.db.ExecContext(ctx, `UPDATE history SET
		status = ?, ended_at = ?, duration_ms = coalesce(?, (? - started_at) / 1e6),
		exit_code = ?, signal = ?, timed_out = ?, oom_killed = ?, error_code = ?,
		stdout = ?, stderr = ?, stdout_bytes = ?, stderr_bytes = ?, output_truncated = ?, output_kept = ?,
		enforced = coalesce(?, enforced), network = coalesce(?, network)
		WHERE id = ?`,
		status, ended.UnixNano(), c.DurationMS, ended.UnixNano(),
		c.ExitCode, nullString(c.Signal), c.TimedOut, c.OOMKilled, nullString(c.ErrorCode),
		nullString(c.Stdout), nullString(c.Stderr), c.StdoutBytes, c.StderrBytes, c.OutputTruncated, c.OutputKept,
		jsonText(c.Enforced), jsonText(c.Network), c.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", c.ID, err)
	}
	if affected(res) == 0 {
		return fmt.Errorf("finish run %d: %w", c.ID, ErrNotFound)
	}
	return nil
}

// insert bounds, redacts and writes c, which the caller owns; durable
// commits it with synchronous=FULL.
func (s *Store) insert(ctx context.Context, c *Run, durable bool) (int64, error) {
	bound(c)
	s.redact.Run(c)
	if c.StartedAt.IsZero() {
		c.StartedAt = s.now()
	}
	if c.PID == 0 {
		c.PID, c.PIDStart = s.pid, s.pidStart
	}
	if c.BootID == "" {
		c.BootID = s.bootID
	}
	args, err := rowArgs(c)
	if err != nil {
		return 0, err
	}
	if !durable {
		res, err := s.db.ExecContext(ctx, insertSQL, args...)
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
	// The pool's only connection, held for the three statements so that
	// no other statement of this Store runs under FULL meanwhile.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = FULL`); err != nil {
		return 0, err
	}
	// Back to NORMAL even if ctx is done: a failure leaves the connection
	// slower, never less safe.
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = NORMAL`)
	res, err := conn.ExecContext(ctx, insertSQL, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// rowArgs returns c's values in insertColumns order.
func rowArgs(c *Run) ([]any, error) {
	argv, err := jsonList(c.Argv)
	if err != nil {
		return nil, fmt.Errorf("encode argv: %w", err)
	}
	args, err := jsonList(c.Args)
	if err != nil {
		return nil, fmt.Errorf("encode args: %w", err)
	}
	env, err := jsonList(c.Env)
	if err != nil {
		return nil, fmt.Errorf("encode env: %w", err)
	}
	line, _ := capText(c.Line())
	var ended any
	if c.EndedAt != nil {
		ended = c.EndedAt.UnixNano()
	}
	return []any{
		nullString(c.SessionID), nullString(c.PTYSessionID), nullString(c.Command), argv, line, c.Cwd,
		nullString(c.Workspace), args,
		c.Status, c.StartedAt.UnixNano(), ended, c.DurationMS, c.ExitCode, nullString(c.Signal),
		c.TimedOut, c.OOMKilled, nullString(c.ErrorCode),
		nullString(c.Stdout), nullString(c.Stderr), c.StdoutBytes, c.StderrBytes, c.OutputTruncated, c.OutputKept,
		nullString(c.Permission), nullString(c.Scope), c.Risk, nullString(c.Level), nullString(c.Category),
		nullString(c.Rule), jsonText(c.Decision), jsonText(c.Enforced), env,
		nullString(c.Version), nullString(c.Host), nullString(c.User), c.PID, c.PIDStart, nullString(c.BootID),
		jsonText(c.Network),
	}, nil
}

// bound caps c's command and output streams, keeping head and tail, before
// redaction so that redacting costs at most maxText per field. Byte counts
// become at least the length passed.
func bound(c *Run) {
	var cut [3]bool
	c.Command, cut[0] = capText(c.Command)
	if n := int64(len(c.Stdout)); n > c.StdoutBytes {
		c.StdoutBytes = n
	}
	if n := int64(len(c.Stderr)); n > c.StderrBytes {
		c.StderrBytes = n
	}
	c.Stdout, cut[1] = capText(c.Stdout)
	c.Stderr, cut[2] = capText(c.Stderr)
	c.OutputTruncated = c.OutputTruncated || cut[1] || cut[2]
	// Arguments and the environment are bounded too: a 1 MiB argument
	// (which the kernel accepts) must not become megabytes per row.
	c.Argv = capList(c.Argv)
	c.Args = capList(c.Args)
	for i := range c.Env {
		c.Env[i].Value, _ = capText(c.Env[i].Value)
	}
	if len(c.Env) > maxEnv {
		c.Env = c.Env[:maxEnv]
	}
}

// maxEnv bounds the variables of an environment snapshot.
const maxEnv = 512

// capList bounds a list of arguments to maxText bytes in all: each long
// one is cut like a stream, and those past the budget are dropped behind
// a marker.
func capList(args []string) []string {
	total := 0
	for _, a := range args {
		total += len(a)
	}
	if total <= maxText {
		return args
	}
	out := make([]string, 0, len(args))
	budget := maxText
	for i, a := range args {
		if budget <= 0 {
			out = append(out, fmt.Sprintf("[... %d more arguments omitted by forgebox history ...]", len(args)-i))
			break
		}
		if len(a) > budget {
			a, _ = capText(a)
		}
		out = append(out, a)
		budget -= len(a)
	}
	return out
}

// capText keeps the first and last maxText/2 bytes of s (on rune
// boundaries) around a marker saying how much was dropped.
func capText(s string) (string, bool) {
	if len(s) <= maxText {
		return s, false
	}
	head, tail := maxText/2, len(s)-maxText/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n[... %d bytes omitted by forgebox history ...]\n%s", s[:head], tail-head, s[tail:]), true
}

// nullString stores "" as NULL: absent, and smaller.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonList encodes a non-empty slice as JSON text; empty is NULL.
func jsonList[T any](v []T) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	b, err := marshalJSON(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// jsonText stores a JSON document as text; a document that is not valid
// JSON is kept as a JSON string, so that every stored document parses.
func jsonText(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return string(raw)
	}
	b, _ := marshalJSON(string(raw))
	return string(b)
}

// marshalJSON is json.Marshal without HTML escaping: stored and exported
// text stays greppable ("a<b" rather than "a\u003cb").
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// nanos converts stored Unix nanoseconds back to a time.
func nanos(n int64) time.Time { return time.Unix(0, n) }
