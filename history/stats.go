package history

import (
	"context"
	"database/sql"
	"fmt"
)

// Stats summarises the runs a Filter selects.
type Stats struct {
	Total        int64            `json:"total"`
	ByStatus     map[string]int64 `json:"by_status"`
	ByPermission map[string]int64 `json:"by_permission"` // "" counts runs with none recorded
	ByLevel      map[string]int64 `json:"by_level"`      // "" counts runs with none recorded
	ByExit       map[int]int64    `json:"by_exit"`       // runs with an exit code only
	Slowest      []Run            `json:"slowest"`       // top 10 by duration, without output
	Frequent     []Frequent       `json:"frequent"`      // top 10 command lines
}

// Frequent is a command line and how often it ran.
type Frequent struct {
	Command string `json:"command"`
	Count   int64  `json:"count"`
}

// Stats counts the runs f selects (Limit: the newest Limit) by status,
// permission, level and exit code, and finds the slowest and most frequent
// commands. It reads in one transaction, so the figures agree.
func (s *Store) Stats(ctx context.Context, f Filter) (*Stats, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // BEGIN (deferred): a reader
	if err != nil {
		return nil, fmt.Errorf("history stats: %w", err)
	}
	defer tx.Rollback()
	w, args, err := s.scope(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("history stats: %w", err)
	}
	st := &Stats{ByStatus: map[string]int64{}, ByPermission: map[string]int64{}, ByLevel: map[string]int64{}, ByExit: map[int]int64{}}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM history WHERE `+w, args...).Scan(&st.Total); err != nil {
		return nil, fmt.Errorf("history stats: count: %w", err)
	}
	for _, g := range []struct {
		col string
		m   map[string]int64
	}{{"status", st.ByStatus}, {"coalesce(permission_status, '')", st.ByPermission}, {"coalesce(level, '')", st.ByLevel}} {
		if err := groupCount(ctx, tx, g.col, w, args, func(k string, n int64) { g.m[k] = n }); err != nil {
			return nil, err
		}
	}
	if err := groupCount(ctx, tx, "exit_code", w+" AND exit_code IS NOT NULL", args, func(k int, n int64) { st.ByExit[k] = n }); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+runColumns+` FROM history WHERE `+w+
		` AND duration_ms IS NOT NULL ORDER BY duration_ms DESC, id DESC LIMIT 10`, args...)
	if err != nil {
		return nil, fmt.Errorf("history stats: slowest: %w", err)
	}
	for rows.Next() {
		r, err := scanRun(rows, false)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("history stats: slowest: %w", err)
		}
		st.Slowest = append(st.Slowest, *r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history stats: slowest: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `SELECT command_line, count(*) AS n FROM history WHERE `+w+
		` GROUP BY command_line ORDER BY n DESC, command_line LIMIT 10`, args...)
	if err != nil {
		return nil, fmt.Errorf("history stats: frequent: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Frequent
		if err := rows.Scan(&c.Command, &c.Count); err != nil {
			return nil, fmt.Errorf("history stats: frequent: %w", err)
		}
		st.Frequent = append(st.Frequent, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history stats: frequent: %w", err)
	}
	return st, nil
}

// groupCount runs SELECT col, count(*) ... GROUP BY col and hands each pair
// to add.
func groupCount[K any](ctx context.Context, tx *sql.Tx, col, where string, args []any, add func(K, int64)) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+col+`, count(*) FROM history WHERE `+where+` GROUP BY 1`, args...)
	if err != nil {
		return fmt.Errorf("history stats: by %s: %w", col, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k K
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return fmt.Errorf("history stats: by %s: %w", col, err)
		}
		add(k, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("history stats: by %s: %w", col, err)
	}
	return nil
}
