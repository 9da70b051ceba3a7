package history

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order; migration i brings the database to
// PRAGMA user_version i+1. Never edit one that has shipped: append.
var migrations = []string{
	// 1: sessions, history, indexes.
	`CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	first_seen INTEGER NOT NULL, -- Unix nanoseconds
	last_seen  INTEGER NOT NULL
) WITHOUT ROWID; -- one b-tree, not table + key index: one page less per run
-- AUTOINCREMENT: an id names one run forever (history show ID, rerun ID),
-- even after pruning removed the newest rows.
CREATE TABLE history (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id       TEXT REFERENCES sessions(id),
	pty_session_id   TEXT,
	command          TEXT,
	argv             TEXT,             -- JSON array
	command_line     TEXT NOT NULL,    -- command, or argv shell-quoted: what people search and count
	cwd              TEXT NOT NULL,
	workspace        TEXT,
	args             TEXT,             -- JSON array
	status           TEXT NOT NULL,
	started_at       INTEGER NOT NULL, -- Unix nanoseconds
	ended_at         INTEGER,
	duration_ms      REAL,
	exit_code        INTEGER,
	signal           TEXT,
	timed_out        INTEGER NOT NULL DEFAULT 0,
	oom_killed       INTEGER NOT NULL DEFAULT 0,
	error_code       TEXT,
	stdout           TEXT,
	stderr           TEXT,
	stdout_bytes     INTEGER NOT NULL DEFAULT 0,
	stderr_bytes     INTEGER NOT NULL DEFAULT 0,
	output_truncated INTEGER NOT NULL DEFAULT 0,
	output_kept      INTEGER NOT NULL DEFAULT 0,
	permission_status TEXT,
	permission_scope TEXT,
	risk_score       INTEGER NOT NULL DEFAULT 0,
	level            TEXT,
	category         TEXT,
	matched_rule     TEXT,
	decision         TEXT,             -- JSON
	enforced         TEXT,             -- JSON
	env              TEXT,             -- JSON array of {name, value, secret}
	forgebox_version TEXT,
	host             TEXT,
	user             TEXT,
	pid              INTEGER,
	pid_start        INTEGER,
	boot_id          TEXT
);
CREATE INDEX history_session ON history(session_id, started_at);
CREATE INDEX history_started ON history(started_at);
CREATE INDEX history_command ON history(command_line);
-- Open scans the running rows on every start: keep that scan tiny.
CREATE INDEX history_running ON history(status) WHERE status = 'running';
-- The session row is upserted by the same statement that inserts the run,
-- so no writer can forget it and the foreign key always holds.
CREATE TRIGGER history_session_upsert BEFORE INSERT ON history
WHEN NEW.session_id IS NOT NULL
BEGIN
	INSERT INTO sessions(id, first_seen, last_seen)
	VALUES (NEW.session_id, NEW.started_at, NEW.started_at)
	ON CONFLICT(id) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen);
END;`,
	// 2: the key of a run that came through the spool. Unique, so that an
	// ingest is an upsert: two processes ingesting the same file, or a
	// running row ingested before its completion, leave one row.
	`ALTER TABLE history ADD COLUMN spool_key TEXT;
CREATE UNIQUE INDEX history_spool_key ON history(spool_key);`,
	// 3: what a run with a network allowlist connected to.
	`ALTER TABLE history ADD COLUMN network TEXT; -- JSON array of connections`,
}

// schemaVersion is the user_version this code writes and understands.
func schemaVersion() int { return len(migrations) }

// migrate brings the database to schemaVersion. The common case, an
// up-to-date database, costs one read; otherwise the check is repeated under
// BEGIN IMMEDIATE so that many processes creating the same fresh file agree
// on who applies each migration.
func migrate(ctx context.Context, db *sql.DB) error {
	v, err := userVersion(ctx, db)
	if err != nil {
		return err
	}
	if v == schemaVersion() {
		return nil
	}
	if v > schemaVersion() {
		return fmt.Errorf("migrate history schema: version %d is newer than this forgebox knows (%d)", v, schemaVersion())
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see dsn)
	if err != nil {
		return fmt.Errorf("migrate history schema: begin: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("migrate history schema: read version: %w", err)
	}
	if v > schemaVersion() {
		return fmt.Errorf("migrate history schema: version %d is newer than this forgebox knows (%d)", v, schemaVersion())
	}
	for ; v < schemaVersion(); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate history schema to version %d: %w", v+1, err)
		}
	}
	// PRAGMA takes no bound parameters; v is an int we own.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v)); err != nil {
		return fmt.Errorf("migrate history schema: set version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate history schema: commit: %w", err)
	}
	return nil
}

func userVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read history schema version: %w", err)
	}
	return v, nil
}
