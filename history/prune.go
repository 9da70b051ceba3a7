package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// pruneBatch bounds each DELETE: another forgebox waiting to record a run
// waits for one batch, not for the whole prune.
const pruneBatch = 1000

// Prune deletes runs that started more than keepDays ago and runs beyond
// the newest keepRows in List order (0: no bound of that kind), then
// sessions left without runs. Running rows are kept: their process may
// still finish them. Each DELETE takes at most pruneBatch rows found
// through an index, so the write lock is held for milliseconds however much
// there is to delete. It returns how many runs it deleted.
func (s *Store) Prune(ctx context.Context, keepDays, keepRows int) (int64, error) {
	var total int64
	if keepDays > 0 {
		n, err := s.pruneBatches(ctx, `started_at < ?`, `started_at`, s.cutoff(keepDays))
		total += n
		if err != nil {
			return total, err
		}
	}
	if keepRows > 0 {
		at, id, err := s.rowCutoff(ctx, keepRows)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return total, err
		}
		if err == nil {
			n, err := s.pruneBatches(ctx, `(started_at, id) <= (?, ?)`, `started_at`, at, id)
			total += n
			if err != nil {
				return total, err
			}
		}
	}
	if total == 0 {
		return 0, nil
	}
	// A session's upsert and its run's insert are one statement, so a
	// session with no runs here has none being added either.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions
		WHERE NOT EXISTS (SELECT 1 FROM history WHERE history.session_id = sessions.id)`); err != nil {
		return total, fmt.Errorf("prune history sessions: %w", err)
	}
	return total, nil
}

const idRangeSQL = `SELECT (SELECT min(id) FROM history), (SELECT max(id) FROM history)`

const oldestSQL = `SELECT started_at FROM history WHERE status <> 'running' ORDER BY started_at LIMIT 1`

func pruneSQL(cond, order string) string {
	return `DELETE FROM history WHERE id IN (
		SELECT id FROM history WHERE ` + cond + ` AND status <> 'running' ORDER BY ` + order + ` LIMIT ?)`
}

// pruneBatches deletes the non-running rows matching cond, in batches taken
// in the order of the index on order.
func (s *Store) pruneBatches(ctx context.Context, cond, order string, args ...any) (int64, error) {
	var total int64
	for {
		res, err := s.db.ExecContext(ctx, pruneSQL(cond, order), append(args, pruneBatch)...)
		if err != nil {
			return total, fmt.Errorf("prune history: %w", err)
		}
		n := affected(res)
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// NeedsPrune reports whether Prune would delete anything, with index
// lookups only (plus, past the row bound, one walk of keepRows ids), so
// that a caller can decide cheaply whether to prune in the background.
func (s *Store) NeedsPrune(ctx context.Context, keepDays, keepRows int) (bool, error) {
	if keepDays > 0 {
		// Walks the started_at index from the oldest and stops at the first
		// row that is not running.
		var oldest int64
		err := s.db.QueryRowContext(ctx, oldestSQL).Scan(&oldest)
		switch {
		case err == nil && oldest < s.cutoff(keepDays):
			return true, nil
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return false, fmt.Errorf("check history retention: %w", err)
		}
	}
	if keepRows > 0 {
		var lo, hi sql.NullInt64
		// Two subqueries: SQLite answers a lone min() or max() from the
		// b-tree's edge, but scans the table for both in one SELECT.
		if err := s.db.QueryRowContext(ctx, idRangeSQL).Scan(&lo, &hi); err != nil {
			return false, fmt.Errorf("check history retention: %w", err)
		}
		// ids only grow, so max-min+1 bounds the count from above.
		if !lo.Valid || hi.Int64-lo.Int64+1 <= int64(keepRows) {
			return false, nil
		}
		_, _, err := s.rowCutoff(ctx, keepRows)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// rowCutoff returns the place, in List order, of the newest run beyond the
// newest keepRows (sql.ErrNoRows when there are no more than keepRows). It
// walks keepRows entries of the started_at index, which are a few dozen
// bytes each, not the table's rows with their output.
func (s *Store) rowCutoff(ctx context.Context, keepRows int) (at, id int64, err error) {
	err = s.db.QueryRowContext(ctx, rowCutoffSQL, keepRows).Scan(&at, &id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("check history retention: %w", err)
	}
	return at, id, err
}

const rowCutoffSQL = `SELECT started_at, id FROM history ORDER BY ` + newestFirst + ` LIMIT 1 OFFSET ?`

func (s *Store) cutoff(keepDays int) int64 {
	return s.now().Add(-time.Duration(keepDays) * 24 * time.Hour).UnixNano()
}

// Check runs PRAGMA integrity_check, a full read of the database, and
// PRAGMA foreign_key_check (for forgebox doctor; Open does not pay for
// them).
func (s *Store) Check(ctx context.Context) error {
	var problems []string
	for _, pragma := range []string{`PRAGMA integrity_check`, `PRAGMA foreign_key_check`} {
		rows, err := s.db.QueryContext(ctx, pragma)
		if err != nil {
			return fmt.Errorf("check history database %q: %w", s.path, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return fmt.Errorf("check history database %q: %w", s.path, err)
			}
			// integrity_check says "ok" when all is well; foreign_key_check
			// returns nothing.
			if line := fmt.Sprint(vals...); line != "ok" {
				problems = append(problems, line)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("check history database %q: %w", s.path, err)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("check history database %q: %s", s.path, firstLines(problems, 5))
	}
	return nil
}
