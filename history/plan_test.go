package history

import (
	"context"
	"strings"
	"testing"
)

// TestQueryPlans guards the queries that must stay cheap on a large
// history: each must use its index, never scan the table or sort it.
func TestQueryPlans(t *testing.T) {
	s := openTest(t, Options{})
	if _, err := s.Record(context.Background(), &Run{Status: StatusDenied}); err != nil {
		t.Fatal(err)
	}
	listSQL := func(f Filter) (string, []any) {
		w, args, err := s.where(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		return `SELECT ` + runColumns + ` FROM history WHERE ` + w + ` ORDER BY ` + newestFirst + ` LIMIT 50`, args
	}
	session, sessionArgs := listSQL(Filter{Session: "x"})
	newest, _ := listSQL(Filter{})
	page, pageArgs := listSQL(Filter{BeforeID: 1})
	since, sinceArgs := listSQL(Filter{Since: t0})
	for _, c := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"running rows at Open", runningSQL, nil, "history_running"},
		{"NeedsPrune by days", oldestSQL, nil, "history_started"},
		{"NeedsPrune by rows", idRangeSQL, nil, "SEARCH history"},
		{"Prune by days", pruneSQL(`started_at < ?`, `started_at`), []any{1, 1}, "history_started"},
		{"Prune by rows", pruneSQL(`(started_at, id) <= (?, ?)`, `started_at`), []any{1, 1, 1}, "history_started"},
		{"Prune row cutoff", rowCutoffSQL, []any{10}, "COVERING INDEX history_started"},
		{"List by session", session, sessionArgs, "history_session"},
		{"List newest", newest, nil, "history_started"},
		{"List page", page, pageArgs, "history_started"},
		{"List since", since, sinceArgs, "history_started"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := s.db.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+c.query, c.args...)
			if err != nil {
				t.Fatalf("EXPLAIN: %v", err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			p := strings.Join(plan, "; ")
			if !strings.Contains(p, c.want) || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("plan %q: want %q and no temporary sort", p, c.want)
			}
			for _, step := range plan {
				if step == "SCAN history" {
					t.Errorf("plan %q scans the table", p)
				}
			}
		})
	}
}
