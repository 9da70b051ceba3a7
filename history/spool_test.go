package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// spoolPair opens a spool and a store on the same fresh path; alive
// decides whether the spooled runs' process lives.
func spoolPair(t *testing.T, alive func() bool) (*Spool, string, Options) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "history.db")
	o := Options{Alive: func(int, int64, string) bool { return alive() }, BootID: "boot"}
	sp, err := OpenSpool(path, o)
	if err != nil {
		t.Fatalf("OpenSpool: %v", err)
	}
	return sp, path, o
}

func openAt(t *testing.T, path string, o Options) (*Store, []string) {
	t.Helper()
	s, w, err := Open(context.Background(), path, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, w
}

func spoolFiles(t *testing.T, sp *Spool, suffix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(sp.Dir(), "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSpoolRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name       string
		status     string
		alive      bool
		wantStatus string
		wantFiles  int
	}{
		{"complete", StatusFinished, false, StatusFinished, 0},
		{"denied", StatusDenied, true, StatusDenied, 0},
		{"running, process alive", StatusRunning, true, StatusRunning, 1},
		{"running, process gone", StatusRunning, false, StatusAbandoned, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp, path, o := spoolPair(t, func() bool { return tt.alive })
			code := 3
			r := &Run{Command: "echo token=ghp_" + strings.Repeat("a", 36), Cwd: "/w", Status: tt.status, ExitCode: &code, Stdout: "out"}
			if err := sp.Write(r); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if r.Key == "" {
				t.Fatal("Write left Key empty")
			}
			s, _ := openAt(t, path, o)
			got, err := s.GetByKey(context.Background(), r.Key)
			if err != nil {
				t.Fatalf("GetByKey(%q): %v", r.Key, err)
			}
			if got.Status != tt.wantStatus || got.Key != r.Key || got.Cwd != "/w" || got.Stdout != "out" {
				t.Errorf("ingested run = status %q key %q cwd %q stdout %q; want %q %q /w out", got.Status, got.Key, got.Cwd, got.Stdout, tt.wantStatus, r.Key)
			}
			if strings.Contains(got.Command, "ghp_") {
				t.Errorf("command %q was not redacted", got.Command)
			}
			if tt.wantStatus == StatusAbandoned && got.EndedAt == nil {
				t.Error("abandoned run has no ended_at")
			}
			if n := len(spoolFiles(t, sp, ".json")); n != tt.wantFiles {
				t.Errorf("%d spool files left, want %d", n, tt.wantFiles)
			}
		})
	}
}

// A running row ingested while its process lives is completed by a later
// ingest of the completed file: one row, finished.
func TestSpoolCompletionAfterIngest(t *testing.T) {
	alive := true
	sp, path, o := spoolPair(t, func() bool { return alive })
	r := &Run{Argv: []string{"sleep", "1"}, Cwd: "/w", Status: StatusRunning}
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	s, _ := openAt(t, path, o)
	code := 0
	r.Status, r.ExitCode = StatusFinished, &code
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	alive = false
	if n, _, err := s.Ingest(context.Background()); err != nil || n != 1 {
		t.Fatalf("Ingest = %d, %v; want 1, nil", n, err)
	}
	runs, err := s.List(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != StatusFinished || runs[0].ExitCode == nil || *runs[0].ExitCode != 0 {
		t.Fatalf("runs = %+v; want one finished run with exit 0", runs)
	}
	if n := len(spoolFiles(t, sp, ".json")); n != 0 {
		t.Errorf("%d spool files left, want 0", n)
	}
}

// Stores racing over the same spool leave one row per run.
func TestSpoolConcurrentIngest(t *testing.T) {
	sp, path, o := spoolPair(t, func() bool { return false })
	const runs = 300
	for i := 0; i < runs; i++ {
		if err := sp.Write(&Run{Command: "true", Cwd: "/w", Status: StatusFinished}); err != nil {
			t.Fatal(err)
		}
	}
	openAt(t, path, o) // create the database first: the race is over the spool
	for i := 0; i < runs; i++ {
		if err := sp.Write(&Run{Command: "true", Cwd: "/w", Status: StatusFinished}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _, err := Open(context.Background(), path, o)
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Open: %v", err)
	}
	s, _ := openAt(t, path, o)
	var rows, keys int
	if err := s.db.QueryRow(`SELECT count(*), count(DISTINCT spool_key) FROM history`).Scan(&rows, &keys); err != nil {
		t.Fatal(err)
	}
	if rows != 2*runs || keys != 2*runs {
		t.Errorf("%d rows, %d keys; want %d of each", rows, keys, 2*runs)
	}
}

func TestSpoolBadFile(t *testing.T) {
	sp, path, o := spoolPair(t, func() bool { return false })
	if err := os.WriteFile(filepath.Join(sp.Dir(), "1-2-3.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sp.Write(&Run{Command: "true", Cwd: "/w", Status: StatusFinished}); err != nil {
		t.Fatal(err)
	}
	s, warnings := openAt(t, path, o)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "1-2-3.bad") {
		t.Errorf("Open warnings = %q; want one about 1-2-3.bad", warnings)
	}
	if len(spoolFiles(t, sp, ".bad")) != 1 || len(spoolFiles(t, sp, ".json")) != 0 {
		t.Errorf("spool holds %q; want only 1-2-3.bad", spoolFiles(t, sp, ""))
	}
	if runs, err := s.List(context.Background(), Filter{}); err != nil || len(runs) != 1 {
		t.Errorf("List = %d runs, %v; want the good one", len(runs), err)
	}
}

func TestSpoolModes(t *testing.T) {
	sp, _, _ := spoolPair(t, func() bool { return true })
	r := &Run{Command: "true", Cwd: "/w", Status: StatusRunning}
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{sp.Dir(), 0o700}, {filepath.Join(sp.Dir(), r.Key+runningSuffix), 0o600}} {
		info, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != c.want {
			t.Errorf("mode of %s = %o, want %o", c.path, got, c.want)
		}
	}
}
