package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotFound says no run has the id asked for.
var ErrNotFound = errors.New("no such run")

// Filter selects runs. Its conditions combine with AND, except Failed and
// Denied, which combine with each other by OR (a run is never both, so
// asking for both means either).
type Filter struct {
	Limit   int    // newest Limit runs; 0: no bound
	Session string // session_id
	// Failed: exit code not 0, a signal, a timeout, an OOM kill, or
	// status failed or abandoned.
	Failed bool
	Denied bool      // status denied or refused
	Since  time.Time // started at or after; zero: no bound
	// Grep: ASCII-case-insensitive substring of the command line or argv.
	Grep string
	Cwd  string // run in this directory or below it
	// BeforeID pages: the runs List shows after run BeforeID (which must
	// exist: ErrNotFound otherwise). 0: from the newest.
	BeforeID int64
}

// newestFirst is the order of List: by start time, ties by id. The indexes
// on started_at (each ends with the rowid) serve it without a sort, also
// within a session.
const newestFirst = `started_at DESC, id DESC`

// where returns f's conditions (without Limit) as SQL and arguments,
// BeforeID resolved to its run's place in newestFirst order.
func (s *Store) where(ctx context.Context, f Filter) (string, []any, error) {
	w, args := f.conds()
	if f.BeforeID <= 0 {
		return w, args, nil
	}
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT started_at FROM history WHERE id = ?`, f.BeforeID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, fmt.Errorf("runs before run %d: %w", f.BeforeID, ErrNotFound)
	}
	if err != nil {
		return "", nil, fmt.Errorf("runs before run %d: %w", f.BeforeID, err)
	}
	return w + ` AND (started_at, id) < (?, ?)`, append(args, at, f.BeforeID), nil
}

// conds returns f's conditions but BeforeID and Limit.
func (f Filter) conds() (string, []any) {
	var conds []string
	var args []any
	if f.Session != "" {
		conds = append(conds, `session_id = ?`)
		args = append(args, f.Session)
	}
	var either []string
	if f.Failed {
		either = append(either, `(status IN ('failed', 'abandoned') OR coalesce(exit_code, 0) <> 0
			OR signal IS NOT NULL OR timed_out <> 0 OR oom_killed <> 0)`)
	}
	if f.Denied {
		either = append(either, `status IN ('denied', 'refused')`)
	}
	if len(either) > 0 {
		conds = append(conds, "("+strings.Join(either, " OR ")+")")
	}
	if !f.Since.IsZero() {
		conds = append(conds, `started_at >= ?`)
		args = append(args, f.Since.UnixNano())
	}
	if f.Grep != "" {
		// instr over lower(): no LIKE wildcards to escape in what users type.
		// SQLite's lower() folds ASCII only, hence asciiLower here.
		conds = append(conds, `(instr(lower(command_line), ?) > 0 OR instr(lower(coalesce(argv, '')), ?) > 0)`)
		g := asciiLower(f.Grep)
		args = append(args, g, g)
	}
	if f.Cwd != "" {
		// The directory itself or below it, by either separator (Windows
		// paths may carry both); substr rather than LIKE, whose wildcards
		// would need escaping in paths.
		dir := strings.TrimRight(f.Cwd, `/\`)
		if dir == "" { // the root itself
			dir = f.Cwd[:1]
			conds = append(conds, `substr(cwd, 1, 1) = ?`)
			args = append(args, dir)
		} else {
			conds = append(conds, `(cwd = ? OR substr(cwd, 1, ?) IN (?, ?))`)
			args = append(args, dir, len(dir)+1, dir+"/", dir+`\`)
		}
	}
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

// scope is where plus Limit, for queries that do not themselves list
// newest first (Stats, Export): the same rows List would return.
func (s *Store) scope(ctx context.Context, f Filter) (string, []any, error) {
	w, args, err := s.where(ctx, f)
	if err != nil || f.Limit <= 0 {
		return w, args, err
	}
	return `id IN (SELECT id FROM history WHERE ` + w + ` ORDER BY ` + newestFirst + ` LIMIT ?)`, append(args, f.Limit), nil
}

// List returns the runs f selects, newest first, without Stdout and Stderr
// (Get has them).
func (s *Store) List(ctx context.Context, f Filter) ([]Run, error) {
	w, args, err := s.where(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	q := `SELECT ` + runColumns + ` FROM history WHERE ` + w + ` ORDER BY ` + newestFirst
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows, false)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Get returns everything about run id, output included, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx,
		`SELECT `+runColumns+`, stdout, stderr, network FROM history WHERE id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get run %d: %w", id, err)
	}
	return r, nil
}

// GetByKey returns everything about the run with this spool key (see
// Spool), or ErrNotFound.
func (s *Store) GetByKey(ctx context.Context, key string) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx,
		`SELECT `+runColumns+`, stdout, stderr, network FROM history WHERE spool_key = ?`, key), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get run %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get run %s: %w", key, err)
	}
	return r, nil
}

// runColumns are read by scanRun, output and network aside: a listing
// need not read them.
const runColumns = `id, session_id, pty_session_id, command, argv, cwd, workspace, args,
	status, started_at, ended_at, duration_ms, exit_code, signal, timed_out, oom_killed, error_code,
	stdout_bytes, stderr_bytes, output_truncated, output_kept,
	permission_status, permission_scope, risk_score, level, category, matched_rule, decision, enforced, env,
	forgebox_version, host, user, pid, pid_start, boot_id, spool_key`

type rowScanner interface{ Scan(dest ...any) error }

// scanRun reads runColumns, then stdout, stderr and network when output is
// true.
func scanRun(sc rowScanner, output bool) (*Run, error) {
	var (
		r                                                  Run
		session, pty, command, argv, workspace, args       sql.NullString
		signal, errorCode, perm, scope, level, category    sql.NullString
		rule, decision, enforced, env, version, host, user sql.NullString
		bootID, key, stdout, stderr, network               sql.NullString
		started                                            int64
		ended, exit, pid, pidStart                         sql.NullInt64
		duration                                           sql.NullFloat64
	)
	dest := []any{&r.ID, &session, &pty, &command, &argv, &r.Cwd, &workspace, &args,
		&r.Status, &started, &ended, &duration, &exit, &signal, &r.TimedOut, &r.OOMKilled, &errorCode,
		&r.StdoutBytes, &r.StderrBytes, &r.OutputTruncated, &r.OutputKept,
		&perm, &scope, &r.Risk, &level, &category, &rule, &decision, &enforced, &env,
		&version, &host, &user, &pid, &pidStart, &bootID, &key}
	if output {
		dest = append(dest, &stdout, &stderr, &network)
	}
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	r.SessionID, r.PTYSessionID, r.Command = session.String, pty.String, command.String
	r.Workspace, r.Signal, r.ErrorCode = workspace.String, signal.String, errorCode.String
	r.Permission, r.Scope, r.Level, r.Category, r.Rule = perm.String, scope.String, level.String, category.String, rule.String
	r.Version, r.Host, r.User, r.BootID, r.Key = version.String, host.String, user.String, bootID.String, key.String
	r.Stdout, r.Stderr = stdout.String, stderr.String
	r.StartedAt = nanos(started)
	if ended.Valid {
		t := nanos(ended.Int64)
		r.EndedAt = &t
	}
	if duration.Valid {
		d := duration.Float64
		r.DurationMS = &d
	}
	if exit.Valid {
		e := int(exit.Int64)
		r.ExitCode = &e
	}
	r.PID, r.PIDStart = int(pid.Int64), pidStart.Int64
	if decision.Valid {
		r.Decision = json.RawMessage(decision.String)
	}
	if enforced.Valid {
		r.Enforced = json.RawMessage(enforced.String)
	}
	if network.Valid {
		r.Network = json.RawMessage(network.String)
	}
	for _, j := range []struct {
		col string
		src sql.NullString
		dst any
	}{{"argv", argv, &r.Argv}, {"args", args, &r.Args}, {"env", env, &r.Env}} {
		if j.src.Valid {
			if err := json.Unmarshal([]byte(j.src.String), j.dst); err != nil {
				return nil, fmt.Errorf("decode %s of run %d: %w", j.col, r.ID, err)
			}
		}
	}
	return &r, nil
}
