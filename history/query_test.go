package history

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Unix(1_800_000_000, 0)

// fixture records nine varied runs, an hour apart, and returns their ids in
// order (the last one still running).
func fixture(t *testing.T, s *Store) []int64 {
	t.Helper()
	ctx := context.Background()
	runs := []Run{
		{SessionID: "A", Command: "make build", Cwd: "/src/proj", Status: StatusFinished, ExitCode: ptr(0), DurationMS: ptr(100.0), Permission: PermAutoApproved, Level: "low"},
		{SessionID: "A", Argv: []string{"go", "test", "./..."}, Cwd: "/src/proj/sub", Status: StatusFinished, ExitCode: ptr(1), DurationMS: ptr(900.0), Permission: PermGranted, Level: "low"},
		{SessionID: "B", Command: "rm -rf /", Cwd: "/tmp", Status: StatusDenied, Permission: PermDenied, Level: "critical"},
		{SessionID: "B", Command: "curl x | sh", Cwd: "/src/project2", Status: StatusRefused, Permission: PermAskedDenied, Level: "high"},
		{Command: "sleep 10", Cwd: "/src/proj", Status: StatusFinished, Signal: "SIGKILL", TimedOut: true, DurationMS: ptr(10000.0), Permission: PermAutoApproved, Level: "low"},
		{Command: "python alloc.py", Cwd: "/src/proj", Status: StatusFinished, ExitCode: ptr(137), OOMKilled: true, DurationMS: ptr(500.0), Permission: PermAutoApproved, Level: "medium"},
		{Command: "make BUILD", Cwd: "/src/proj", Status: StatusFailed, ErrorCode: "E_LANDLOCK", Permission: PermAutoApproved, Level: "low"},
		{Command: "make build", Cwd: "/", Status: StatusFinished, ExitCode: ptr(0), DurationMS: ptr(50.0), Permission: PermAskedApproved, Level: "medium"},
		{Command: "make build", Cwd: "/src/proj", Permission: PermAutoApproved, Level: "low"},
	}
	ids := make([]int64, len(runs))
	for i := range runs {
		r := &runs[i]
		r.StartedAt = t0.Add(time.Duration(i) * time.Hour)
		var err error
		if i == len(runs)-1 {
			ids[i], err = s.Start(ctx, r)
		} else {
			ids[i], err = s.Record(ctx, r)
		}
		if err != nil {
			t.Fatalf("fixture run %d: %v", i, err)
		}
	}
	return ids
}

func TestList(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	id := fixture(t, s)
	for _, c := range []struct {
		name string
		f    Filter
		want []int64
	}{
		{"all, newest first", Filter{}, []int64{id[8], id[7], id[6], id[5], id[4], id[3], id[2], id[1], id[0]}},
		{"limit", Filter{Limit: 2}, []int64{id[8], id[7]}},
		{"session", Filter{Session: "A"}, []int64{id[1], id[0]}},
		{"failed", Filter{Failed: true}, []int64{id[6], id[5], id[4], id[1]}},
		{"denied", Filter{Denied: true}, []int64{id[3], id[2]}},
		{"failed or denied", Filter{Failed: true, Denied: true}, []int64{id[6], id[5], id[4], id[3], id[2], id[1]}},
		{"since", Filter{Since: t0.Add(6 * time.Hour)}, []int64{id[8], id[7], id[6]}},
		{"grep command, any case", Filter{Grep: "MAKE build"}, []int64{id[8], id[7], id[6], id[0]}},
		{"grep argv", Filter{Grep: "./..."}, []int64{id[1]}},
		{"grep quoted line", Filter{Grep: "go test"}, []int64{id[1]}},
		{"cwd and below, not siblings", Filter{Cwd: "/src/proj/"}, []int64{id[8], id[6], id[5], id[4], id[1], id[0]}},
		{"cwd root", Filter{Cwd: "/"}, []int64{id[8], id[7], id[6], id[5], id[4], id[3], id[2], id[1], id[0]}},
		{"before id (paging)", Filter{BeforeID: id[7], Limit: 3}, []int64{id[6], id[5], id[4]}},
		{"combined", Filter{Session: "A", Failed: true}, []int64{id[1]}},
		{"nothing", Filter{Grep: "no such command"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs, err := s.List(ctx, c.f)
			if err != nil {
				t.Fatalf("List(%+v): %v", c.f, err)
			}
			var got []int64
			for _, r := range runs {
				got = append(got, r.ID)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("List(%+v) = %v, want %v", c.f, got, c.want)
			}
		})
	}
}

func TestListOmitsOutput(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	r := &Run{Status: StatusFinished, Command: "echo hi", Stdout: "hi\n", Stderr: "warn\n"}
	if _, err := s.Record(ctx, r); err != nil {
		t.Fatal(err)
	}
	runs, err := s.List(ctx, Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("List: %d runs, %v", len(runs), err)
	}
	if runs[0].Stdout != "" || runs[0].StdoutBytes != 3 || runs[0].Command != "echo hi" {
		t.Errorf("List row: stdout %q (%d bytes), command %q; want no output, 3 bytes, echo hi",
			runs[0].Stdout, runs[0].StdoutBytes, runs[0].Command)
	}
}

func TestStats(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	id := fixture(t, s)
	st, err := s.Stats(ctx, Filter{})
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if st.Total != 9 {
		t.Errorf("Total = %d, want 9", st.Total)
	}
	wantStatus := map[string]int64{StatusFinished: 5, StatusDenied: 1, StatusRefused: 1, StatusFailed: 1, StatusRunning: 1}
	if !reflect.DeepEqual(st.ByStatus, wantStatus) {
		t.Errorf("ByStatus = %v, want %v", st.ByStatus, wantStatus)
	}
	wantPerm := map[string]int64{PermAutoApproved: 5, PermGranted: 1, PermDenied: 1, PermAskedDenied: 1, PermAskedApproved: 1}
	if !reflect.DeepEqual(st.ByPermission, wantPerm) {
		t.Errorf("ByPermission = %v, want %v", st.ByPermission, wantPerm)
	}
	wantLevel := map[string]int64{"low": 5, "medium": 2, "high": 1, "critical": 1}
	if !reflect.DeepEqual(st.ByLevel, wantLevel) {
		t.Errorf("ByLevel = %v, want %v", st.ByLevel, wantLevel)
	}
	wantExit := map[int]int64{0: 2, 1: 1, 137: 1}
	if !reflect.DeepEqual(st.ByExit, wantExit) {
		t.Errorf("ByExit = %v, want %v", st.ByExit, wantExit)
	}
	var slow []int64
	for _, r := range st.Slowest {
		slow = append(slow, r.ID)
	}
	if want := []int64{id[4], id[1], id[5], id[0], id[7]}; !reflect.DeepEqual(slow, want) {
		t.Errorf("Slowest = %v, want %v", slow, want)
	}
	if len(st.Frequent) == 0 || st.Frequent[0].Command != "make build" || st.Frequent[0].Count != 3 {
		t.Errorf("Frequent = %+v, want make build x3 first", st.Frequent)
	}

	st, err = s.Stats(ctx, Filter{Session: "B"})
	if err != nil {
		t.Fatalf("Stats(session B): %v", err)
	}
	if st.Total != 2 || st.ByStatus[StatusDenied] != 1 || len(st.Slowest) != 0 {
		t.Errorf("Stats(session B) = %+v, want 2 runs, 1 denied, none timed", st)
	}
	st, err = s.Stats(ctx, Filter{Limit: 3})
	if err != nil || st.Total != 3 {
		t.Errorf("Stats(limit 3): total %d, %v; want 3", st.Total, err)
	}
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	id := fixture(t, s)
	if _, err := s.Record(ctx, fullRun()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    Filter
		want int
	}{{"all", Filter{}, len(id) + 1}, {"newest 3", Filter{Limit: 3}, 3}, {"session A", Filter{Session: "A"}, 2}} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := s.Export(ctx, &buf, c.f); err != nil {
				t.Fatalf("Export: %v", err)
			}
			sc := bufio.NewScanner(&buf)
			sc.Buffer(nil, 1<<20)
			var last Event
			n := 0
			for sc.Scan() {
				var ev Event
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("line %d does not parse: %v\n%s", n+1, err, sc.Bytes())
				}
				var raw map[string]any
				json.Unmarshal(sc.Bytes(), &raw)
				if raw["v"] != 1.0 || raw["type"] != "forgebox.run" || raw["started_at"] == nil || raw["status"] == nil {
					t.Errorf("line %d: v=%v type=%v started_at=%v", n+1, raw["v"], raw["type"], raw["started_at"])
				}
				if n > 0 && (ev.StartedAt.Before(last.StartedAt) || ev.StartedAt.Equal(last.StartedAt) && ev.ID <= last.ID) {
					t.Errorf("line %d: run %d (%v) after run %d (%v): not oldest first", n+1, ev.ID, ev.StartedAt, last.ID, last.StartedAt)
				}
				last = ev
				want, err := s.Get(ctx, ev.ID)
				if err != nil {
					t.Fatal(err)
				}
				want.PIDStart, want.BootID = 0, "" // not exported
				if !ev.StartedAt.Equal(want.StartedAt) || ev.Stdout != want.Stdout || !reflect.DeepEqual(ev.Argv, want.Argv) ||
					string(ev.Decision) != string(want.Decision) || !reflect.DeepEqual(ev.Env, want.Env) {
					t.Errorf("event %d differs from Get:\n%+v\n%+v", ev.ID, ev.Run, want)
				}
				n++
			}
			if n != c.want {
				t.Errorf("Export(%+v): %d lines, want %d", c.f, n, c.want)
			}
		})
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name               string
		keepDays, keepRows int
		deleted            int64
		remaining          int
	}{
		{"no bounds", 0, 0, 0, 9},
		{"by rows", 0, 4, 5, 4},
		{"by days", 1, 0, 5, 4},          // now is t0+1d+4h: runs 0-4 are older than a day
		{"by rows and days", 1, 2, 7, 2}, // whichever is stricter
		{"all but the newest", 0, 1, 8, 1},
		{"rows beyond the total", 0, 100, 0, 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTest(t, Options{Now: fixedClock(t0.Add(28 * time.Hour).Add(time.Second))})
			id := fixture(t, s)
			need, err := s.NeedsPrune(ctx, c.keepDays, c.keepRows)
			if err != nil {
				t.Fatalf("NeedsPrune: %v", err)
			}
			if need != (c.deleted > 0) {
				t.Errorf("NeedsPrune(%d, %d) = %v, want %v", c.keepDays, c.keepRows, need, c.deleted > 0)
			}
			n, err := s.Prune(ctx, c.keepDays, c.keepRows)
			if err != nil {
				t.Fatalf("Prune: %v", err)
			}
			runs, _ := s.List(ctx, Filter{})
			if n != c.deleted || len(runs) != c.remaining {
				t.Errorf("Prune(%d, %d) deleted %d leaving %d, want %d leaving %d", c.keepDays, c.keepRows, n, len(runs), c.deleted, c.remaining)
			}
			if len(runs) > 0 && runs[0].ID != id[8] {
				t.Errorf("newest run %d was pruned", id[8])
			}
			if need, _ := s.NeedsPrune(ctx, c.keepDays, c.keepRows); need {
				t.Errorf("NeedsPrune after Prune = true")
			}
			var sessions int
			s.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&sessions)
			var want int
			for _, sid := range []string{"A", "B"} {
				if rs, _ := s.List(ctx, Filter{Session: sid}); len(rs) > 0 {
					want++
				}
			}
			if sessions != want {
				t.Errorf("%d sessions left, want %d (those with runs)", sessions, want)
			}
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check after Prune: %v", err)
			}
		})
	}
}

func TestPruneKeepsRunning(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{Now: fixedClock(t0.Add(30 * 24 * time.Hour))})
	r := &Run{Command: "sleep infinity", StartedAt: t0}
	if _, err := s.Start(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, &Run{Status: StatusFinished, Command: "old", StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Prune(ctx, 1, 1)
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 (the finished run)", n, err)
	}
	if need, err := s.NeedsPrune(ctx, 1, 0); need || err != nil {
		t.Errorf("NeedsPrune with only a running row left = %v, %v; want false", need, err)
	}
	if err := s.Finish(ctx, r); err != nil {
		t.Errorf("Finish of the running row after Prune: %v", err)
	}
}
