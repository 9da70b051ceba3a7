package history

import (
	"context"
	"database/sql"
	"fmt"
)

// markAbandoned finds running rows whose forgebox process is gone (another
// boot, or Alive says so) and marks them abandoned with ended_at = now: a
// run that was SIGKILLed or lost to a power cut stays on record, and says
// it never finished. The scan reads the partial index on running rows
// only, so it stays cheap however large the history grows.
const runningSQL = `SELECT id, coalesce(pid, 0), coalesce(pid_start, 0), coalesce(boot_id, ''), coalesce(spool_key, '')
	FROM history WHERE status = 'running'`

func (s *Store) markAbandoned(ctx context.Context) (string, error) {
	rows, err := s.db.QueryContext(ctx, runningSQL)
	if err != nil {
		return "", fmt.Errorf("find running history rows: %w", err)
	}
	var dead []int64
	for rows.Next() {
		var (
			id, start int64
			pid       int
			boot, key string
		)
		if err := rows.Scan(&id, &pid, &start, &boot, &key); err != nil {
			rows.Close()
			return "", fmt.Errorf("find running history rows: %w", err)
		}
		// A row the spool still holds running is the spool's to settle:
		// its process may have completed it there since Ingest read it.
		if key != "" && s.spooled(key) {
			continue
		}
		if s.gone(pid, start, boot) {
			dead = append(dead, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("find running history rows: %w", err)
	}
	if len(dead) == 0 {
		return "", nil
	}
	n, err := s.abandon(ctx, dead)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", nil // their own processes, or another Open, finished them first
	}
	return fmt.Sprintf("marked %d run(s) abandoned: the forgebox process that ran them is gone", n), nil
}

// spooled reports whether the spool still holds the run with this key
// running: its process may complete it there since Ingest read it.
func (s *Store) spooled(key string) bool { return s.live[key] }

// gone reports whether the process that wrote a running row no longer runs.
func (s *Store) gone(pid int, start int64, boot string) bool {
	if boot != "" && s.bootID != "" && boot != s.bootID {
		return true
	}
	return s.alive != nil && !s.alive(pid, start, boot)
}

// abandon marks the rows in one short transaction. The status guard keeps a
// row its process finished meanwhile.
func (s *Store) abandon(ctx context.Context, ids []int64) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("mark runs abandoned: %w", err)
	}
	defer tx.Rollback()
	now := s.now().UnixNano()
	var n int64
	for _, id := range ids {
		res, err := tx.ExecContext(ctx,
			`UPDATE history SET status = 'abandoned', ended_at = ? WHERE id = ? AND status = 'running'`, now, id)
		if err != nil {
			return 0, fmt.Errorf("mark run %d abandoned: %w", id, err)
		}
		n += affected(res)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("mark runs abandoned: %w", err)
	}
	return n, nil
}

func affected(res sql.Result) int64 {
	n, err := res.RowsAffected()
	if err != nil {
		return 0
	}
	return n
}
