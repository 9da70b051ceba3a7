package history

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// typicalRun is the size of an ordinary agent command's row.
func typicalRun() *Run {
	return &Run{
		SessionID: "bench-session", Command: "go test ./policy/... -run TestDecide -count=1", Cwd: "/home/u/proj",
		Workspace: "/home/u/proj", Args: []string{"run", "--", "go", "test", "./policy/..."},
		Permission: PermAutoApproved, Risk: 12, Level: "low", Category: "build",
		Decision: json.RawMessage(`{"decision":"allow","risk":12,"level":"low","reasons":["read-only build tool"]}`),
		Env:      []EnvVar{{Name: "HOME", Value: "/home/u"}, {Name: "PATH", Value: "/usr/local/go/bin:/usr/bin:/bin"}, {Name: "GITHUB_TOKEN", Secret: true}},
		Version:  "0.1.0", Host: "box", User: "u",
	}
}

func finishRun(r *Run) {
	r.ExitCode = ptr(0)
	r.Stdout = strings.Repeat("ok  \tgithub.com/forgebox/forgebox/policy\t0.012s\n", 4)
	r.Stderr = ""
	r.OutputKept = true
	r.Enforced = json.RawMessage(`{"namespaces":["user","pid","mount","net"],"landlock_abi":7,"seccomp":true,"cgroup":"v1"}`)
}

func perSecond(b *testing.B, start time.Time, unit string) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), unit)
}

// BenchmarkStartFinish: the two writes of one run, on an open WAL database.
func BenchmarkStartFinish(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, Options{})
	start := time.Now()
	for b.Loop() {
		r := typicalRun()
		if _, err := s.Start(ctx, r); err != nil {
			b.Fatal(err)
		}
		finishRun(r)
		if err := s.Finish(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	perSecond(b, start, "runs/s")
}

// BenchmarkOpen: what each forgebox process pays to open an existing
// database (first connection, pragmas, schema check, running-row scan).
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "history.db")
	s, _, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	for b.Loop() {
		s, _, err := Open(ctx, path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkOpenStartFinish: everything one forgebox process does for
// history, on an existing database: NewRedactor, Open, Start, Finish, Close,
// each phase reported in µs (mean). Start pays the fsyncs of the process's
// first WAL write and Close those of its checkpoint.
func BenchmarkOpenStartFinish(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "history.db")
	var phase [4]time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, _, err := Open(ctx, path, Options{Redact: NewRedactor([]string{"a-secret-value"})})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		r := typicalRun()
		if _, err := s.Start(ctx, r); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		finishRun(r)
		if err := s.Finish(ctx, r); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		s.Close()
		t4 := time.Now()
		for i, d := range []time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3)} {
			phase[i] += d
		}
	}
	for i, name := range []string{"open-µs", "start-µs", "finish-µs", "close-µs"} {
		b.ReportMetric(float64(phase[i].Microseconds())/float64(b.N), name)
	}
}

func BenchmarkFinish(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, Options{})
	r := typicalRun()
	if _, err := s.Start(ctx, r); err != nil {
		b.Fatal(err)
	}
	finishRun(r)
	for b.Loop() {
		if err := s.Finish(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewRedactor(b *testing.B) {
	for b.Loop() {
		NewRedactor([]string{"a-secret-value"})
	}
}

// BenchmarkFirstRedaction: a process's first String call, which builds the
// trigger scanner.
func BenchmarkFirstRedaction(b *testing.B) {
	for b.Loop() {
		NewRedactor([]string{"a-secret-value"}).String("go test ./...")
	}
}

// BenchmarkRedact64KiB: redacting a large ordinary output (a few secrets).
func BenchmarkRedact64KiB(b *testing.B) {
	r := NewRedactor([]string{"a-secret-value"})
	line := "2026-11-22T10:00:00Z INFO request GET /api/v1/items?page=2 status=200 duration=12ms user=bob\n"
	text := strings.Repeat(line, 64<<10/len(line)) + "token=abc123def456\n"
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.String(text)
	}
}

const benchRows = 1_000_000

// BenchmarkListLimit50 builds a 1,000,000-row database once (one
// transaction of batched inserts), then measures `forgebox history
// --limit 50` and a few filtered variants on it.
func BenchmarkListLimit50(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "history.db")
	s, _, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	built := time.Now()
	if err := fillRows(ctx, s, benchRows); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d rows in %v", benchRows, time.Since(built).Round(time.Millisecond))
	for _, c := range []struct {
		name string
		f    Filter
	}{
		{"newest", Filter{Limit: 50}},
		{"page", Filter{Limit: 50, BeforeID: benchRows / 2}},
		{"session", Filter{Limit: 50, Session: "session-17"}},
		{"failed", Filter{Limit: 50, Failed: true}},
		{"denied", Filter{Limit: 50, Denied: true}},
		{"since", Filter{Limit: 50, Since: time.Unix(1_800_000_000, 0).Add(benchRows / 2 * time.Second)}},
		{"grep", Filter{Limit: 50, Grep: "cargo build"}},
		{"cwd", Filter{Limit: 50, Cwd: "/home/u/proj-3"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				runs, err := s.List(ctx, c.f)
				if err != nil || len(runs) == 0 {
					b.Fatalf("List: %d runs, %v", len(runs), err)
				}
			}
		})
	}
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			s, _, err := Open(ctx, path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("start-finish", func(b *testing.B) {
		for b.Loop() {
			r := typicalRun()
			if _, err := s.Start(ctx, r); err != nil {
				b.Fatal(err)
			}
			finishRun(r)
			if err := s.Finish(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("needs-prune", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.NeedsPrune(ctx, 90, 2*benchRows); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// fillRows inserts n varied, realistic rows in one transaction, 50 rows a
// statement.
func fillRows(ctx context.Context, s *Store, n int) error {
	const batch = 50
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	q := `INSERT INTO history (` + insertColumns + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat("("+strings.TrimSuffix(strings.Repeat("?,", 38), ",")+"),", batch), ",")
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer stmt.Close()
	commands := []string{"go test ./...", "make build", "cargo build --release", "npm test", "git status", "ls -la", "rm -rf build", "curl https://example.com | sh"}
	t := time.Unix(1_800_000_000, 0)
	args := make([]any, 0, 38*batch)
	for i := 0; i < n; i++ {
		r := typicalRun()
		finishRun(r)
		r.SessionID = fmt.Sprintf("session-%d", i/1000)
		r.Command = fmt.Sprintf("%s # %d", commands[i%len(commands)], i%997)
		r.Cwd = fmt.Sprintf("/home/u/proj-%d", i%10)
		r.StartedAt = t.Add(time.Duration(i) * time.Second)
		end := r.StartedAt.Add(time.Duration(i%5000) * time.Millisecond)
		r.EndedAt, r.DurationMS = &end, ptr(float64(i%5000))
		r.Status = StatusFinished
		switch {
		case i%97 == 0:
			r.Status, r.ExitCode, r.Permission, r.Stdout = StatusDenied, nil, PermDenied, ""
		case i%13 == 0:
			r.ExitCode = ptr(1)
		}
		r.StdoutBytes = int64(len(r.Stdout))
		r.PID, r.BootID = 1000+i%30000, "boot"
		row, err := rowArgs(r)
		if err != nil {
			return err
		}
		args = append(args, row...)
		if len(args) == cap(args) {
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
			args = args[:0]
		}
	}
	if len(args) > 0 {
		return fmt.Errorf("fillRows: n must be a multiple of %d", batch)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}
