package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAbandoned(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		name     string
		rowBoot  string
		alive    func(int, int64, string) bool
		want     string
		warnings int
	}{
		{"process gone", "boot-a", func(int, int64, string) bool { return false }, StatusAbandoned, 1},
		{"process alive", "boot-a", func(int, int64, string) bool { return true }, StatusRunning, 0},
		{"nil Alive assumes alive", "boot-a", nil, StatusRunning, 0},
		{"another boot", "boot-old", nil, StatusAbandoned, 1},
		{"another boot, Alive says alive", "boot-old", func(int, int64, string) bool { return true }, StatusAbandoned, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			s, _, err := Open(ctx, path, Options{BootID: "boot-a"})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			r := &Run{Command: "sleep 100", Cwd: "/", PID: 4242, PIDStart: 77, BootID: c.rowBoot}
			if _, err := s.Start(ctx, r); err != nil {
				t.Fatalf("Start: %v", err)
			}
			s.Close() // the forgebox that ran it "dies" here

			var asked []any
			alive := c.alive
			if alive != nil {
				alive = func(pid int, start int64, boot string) bool {
					asked = append(asked, pid, start, boot)
					return c.alive(pid, start, boot)
				}
			}
			s, warnings, err := Open(ctx, path, Options{BootID: "boot-a", Alive: alive, Now: fixedClock(now)})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer s.Close()
			if len(warnings) != c.warnings || c.warnings > 0 && !strings.Contains(warnings[0], "marked 1 run(s) abandoned") {
				t.Errorf("warnings = %q, want %d about 1 abandoned run", warnings, c.warnings)
			}
			got, err := s.Get(ctx, r.ID)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if got.Status != c.want {
				t.Errorf("status = %q, want %q", got.Status, c.want)
			}
			if c.want == StatusAbandoned && (got.EndedAt == nil || !got.EndedAt.Equal(now)) {
				t.Errorf("ended_at = %v, want %v", got.EndedAt, now)
			}
			if c.rowBoot == "boot-a" && c.alive != nil && (len(asked) != 3 || asked[0] != 4242 || asked[1] != int64(77)) {
				t.Errorf("Alive called with %v, want [4242 77 boot-a]", asked)
			}
		})
	}
}

func TestCorruptMovedAside(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 13, 14, 15, 0, time.UTC)
	for _, c := range []struct {
		name    string
		content []byte
	}{
		{"garbage", []byte(strings.Repeat("this is not a database\n", 300))},
		{"zeros", make([]byte, 8192)},
		{"short", []byte("SQLite")},
		{"header then garbage", append([]byte(sqliteMagic), []byte(strings.Repeat("\xff\x01garbage", 1000))...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			if err := os.WriteFile(path, c.content, 0o600); err != nil {
				t.Fatal(err)
			}
			s, warnings, err := Open(ctx, path, Options{Now: fixedClock(now)})
			if err != nil {
				t.Fatalf("Open over a corrupt file: %v", err)
			}
			defer s.Close()
			moved := path + ".corrupt-20261122T131415"
			if len(warnings) != 1 || !strings.Contains(warnings[0], moved) {
				t.Fatalf("warnings = %q, want one naming %s", warnings, moved)
			}
			if b, err := os.ReadFile(moved); err != nil || string(b) != string(c.content) {
				t.Errorf("moved file: %v (content kept: %v)", err, string(b) == string(c.content))
			}
			if _, err := s.Start(ctx, &Run{Command: "true"}); err != nil {
				t.Errorf("Start on the new database: %v", err)
			}
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check on the new database: %v", err)
			}
		})
	}
}

func TestReopenKeepsRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	for i := range 3 {
		s, warnings, err := Open(ctx, path, Options{})
		if err != nil || len(warnings) > 0 {
			t.Fatalf("Open #%d: %v %q", i, err, warnings)
		}
		if _, err := s.Record(ctx, &Run{Status: StatusDenied, Command: "rm -rf /"}); err != nil {
			t.Fatalf("Record: %v", err)
		}
		runs, err := s.List(ctx, Filter{})
		if err != nil || len(runs) != i+1 {
			t.Fatalf("List after open #%d: %d runs, %v", i, len(runs), err)
		}
		s.Close()
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, _, err := Open(ctx, s.Path(), Options{})
	if err == nil || !strings.Contains(err.Error(), "version 99 is newer") {
		t.Errorf("Open of a newer schema: %v, want a version error", err)
	}
	if _, err := os.Stat(s.Path()); err != nil {
		t.Errorf("a newer database must stay in place: %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		name, db, xdg, want string
	}{
		{"explicit", "/x/h.db", "/state", "/x/h.db"},
		{"xdg", "", "/state", "/state/forgebox/history.db"},
		{"relative xdg ignored", "", "rel", filepath.Join(home, ".local/state/forgebox/history.db")},
		{"home", "", "", filepath.Join(home, ".local/state/forgebox/history.db")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("FORGEBOX_HISTORY_DB", c.db)
			t.Setenv("XDG_STATE_HOME", c.xdg)
			got, err := DefaultPath()
			if err != nil || got != c.want {
				t.Errorf("DefaultPath() = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestProcessAlive(t *testing.T) {
	self := selfStart()
	if self == 0 {
		t.Skip("no /proc/self/stat on this system")
	}
	boot := systemBootID()
	for _, c := range []struct {
		name  string
		pid   int
		start int64
		boot  string
		want  bool
	}{
		{"this process", os.Getpid(), self, boot, true},
		{"reused pid", os.Getpid(), self + 1, boot, false},
		{"another boot", os.Getpid(), self, "not-" + boot, false},
		{"no such pid", 1 << 30, 1, boot, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ProcessAlive(c.pid, c.start, c.boot); got != c.want {
				t.Errorf("ProcessAlive(%d, %d, %q) = %v, want %v", c.pid, c.start, c.boot, got, c.want)
			}
		})
	}
}

func TestCheckFindsProblems(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check on a sound database: %v", err)
	}
	// A history row naming a session that does not exist, written with
	// foreign keys (and the trigger) out of the way.
	for _, q := range []string{`PRAGMA foreign_keys = 0`, `DROP TRIGGER history_session_upsert`,
		`INSERT INTO history (command_line, cwd, status, started_at, session_id) VALUES ('x', '/', 'denied', 0, 'ghost')`} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), "sessions") {
		t.Errorf("Check with a dangling session = %v, want a foreign key problem", err)
	}
}
