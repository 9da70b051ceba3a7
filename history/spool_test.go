package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
	t.Cleanup(sp.Close)
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

// journals lists the spool's journal and segments (set-aside ones too).
func journals(t *testing.T, sp *Spool) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(sp.Dir(), journalName+"*"))
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
			if !tt.alive {
				sp.Close() // what the process's death does
			}
			s, _ := openAt(t, path, o)
			got, err := s.GetByKey(context.Background(), r.Key)
			if err != nil {
				t.Fatalf("GetByKey(%q): %v", r.Key, err)
			}
			if got.Status != tt.wantStatus || got.Key != r.Key || got.Cwd != "/w" || got.Stdout != "out" {
				t.Errorf("ingested run = status %q key %q cwd %q stdout %q; want %q %q /w out", got.Status, got.Key, got.Cwd, got.Stdout, tt.wantStatus, r.Key)
			}
			if strings.Contains(got.Command, "ghp_a") {
				t.Errorf("command %q was not redacted", got.Command)
			}
			if tt.wantStatus == StatusAbandoned && got.EndedAt == nil {
				t.Error("abandoned run has no ended_at")
			}
			if n := len(journals(t, sp)); n != tt.wantFiles {
				t.Errorf("spool holds %q, want %d file(s)", journals(t, sp), tt.wantFiles)
			}
		})
	}
}

// A running row ingested while its process lives is completed by a later
// ingest of its completion, appended to the segment the ingester took:
// one row, finished, and the segment removed.
func TestSpoolCompletionAfterIngest(t *testing.T) {
	alive := true
	sp, path, o := spoolPair(t, func() bool { return alive })
	r := &Run{Argv: []string{"sleep", "1"}, Cwd: "/w", Status: StatusRunning}
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	s, _ := openAt(t, path, o)
	if got, err := s.GetByKey(context.Background(), r.Key); err != nil || got.Status != StatusRunning {
		t.Fatalf("after the first ingest: %+v, %v; want the row running", got, err)
	}
	// A run started after the ingest goes to a new journal.
	other := &Run{Argv: []string{"true"}, Cwd: "/w", Status: StatusFinished}
	if err := sp.Write(other); err != nil {
		t.Fatal(err)
	}
	code := 0
	r.Status, r.ExitCode = StatusFinished, &code
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	alive = false
	if n, _, err := s.Ingest(context.Background()); err != nil || n != 2 {
		t.Fatalf("Ingest = %d, %v; want 2, nil", n, err)
	}
	runs, err := s.List(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].Status != StatusFinished || runs[1].ExitCode == nil || *runs[1].ExitCode != 0 {
		t.Fatalf("runs = %+v; want the first run finished with exit 0", runs)
	}
	if n := len(journals(t, sp)); n != 0 {
		t.Errorf("spool holds %q, want nothing", journals(t, sp))
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

// Writers that start and complete runs while ingesters take the journal
// from under them lose nothing: every run ends as one finished row, and
// no segment is left behind.
func TestSpoolWritersRaceIngesters(t *testing.T) {
	_, path, o := spoolPair(t, func() bool { return true })
	openAt(t, path, o)
	const writers, perWriter = 4, 60
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, writers+2)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp, err := OpenSpool(path, o)
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < perWriter; i++ {
				r := &Run{Argv: []string{"echo", fmt.Sprint(i)}, Cwd: "/w", Status: StatusRunning}
				if err := sp.Write(r); err != nil {
					errs <- err
					return
				}
				code := i % 3
				r.Status, r.ExitCode = StatusFinished, &code
				if err := sp.Write(r); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var ingesters sync.WaitGroup
	for i := 0; i < 2; i++ {
		ingesters.Add(1)
		go func() {
			defer ingesters.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, _, err := Open(context.Background(), path, o)
				if err != nil {
					errs <- err
					return
				}
				s.Close()
			}
		}()
	}
	wg.Wait()
	close(stop)
	ingesters.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, _ := openAt(t, path, o)
	var rows, keys, finished int
	if err := s.db.QueryRow(`SELECT count(*), count(DISTINCT spool_key), count(*) FILTER (WHERE status = 'finished') FROM history`).Scan(&rows, &keys, &finished); err != nil {
		t.Fatal(err)
	}
	if want := writers * perWriter; rows != want || keys != want || finished != want {
		t.Errorf("%d rows, %d keys, %d finished; want %d of each", rows, keys, finished, want)
	}
	if left, _ := filepath.Glob(filepath.Join(spoolDir(path), journalName+"*")); len(left) != 0 {
		t.Errorf("spool holds %q after the last ingest, want nothing", left)
	}
}

// A line that does not decode costs only itself: the other runs of its
// segment are ingested, and the segment is kept aside with a warning. A
// final line without its newline, in a segment no writer holds, is torn.
func TestSpoolBadLines(t *testing.T) {
	for _, tt := range []struct{ name, garbage string }{
		{"not json", "\n{not json\n"},
		{"NUL bytes of a power cut", "\n\x00\x00\x00\x00\n"},
		{"torn last line", `{"key":"1-2-3","status":"fini`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp, path, o := spoolPair(t, func() bool { return false })
			if err := sp.Write(&Run{Command: "first", Cwd: "/w", Status: StatusFinished}); err != nil {
				t.Fatal(err)
			}
			appendJournal(t, sp, tt.garbage)
			if !strings.HasPrefix(tt.garbage, `{"key"`) {
				if err := sp.Write(&Run{Command: "second", Cwd: "/w", Status: StatusFinished}); err != nil {
					t.Fatal(err)
				}
			}
			s, warnings := openAt(t, path, o)
			if len(warnings) != 1 || !strings.Contains(warnings[0], "1 unreadable line") || !strings.Contains(warnings[0], badSuffix) {
				t.Errorf("Open warnings = %q; want one about 1 unreadable line, set aside", warnings)
			}
			bad, _ := filepath.Glob(filepath.Join(sp.Dir(), "*"+badSuffix))
			if len(bad) != 1 {
				t.Errorf("spool holds %q; want one set-aside segment", journals(t, sp))
			}
			want := 2
			if strings.HasPrefix(tt.garbage, `{"key"`) {
				want = 1
			}
			if runs, err := s.List(context.Background(), Filter{}); err != nil || len(runs) != want {
				t.Errorf("List = %d runs, %v; want %d", len(runs), err, want)
			}
		})
	}
}

// A line still being written when an ingester reads the journal (no
// newline yet, its writer holding the journal) is neither an error nor
// lost: a later ingest takes it whole.
func TestSpoolLineInProgress(t *testing.T) {
	alive := true
	sp, path, o := spoolPair(t, func() bool { return alive })
	r := &Run{Command: "sleep 1", Cwd: "/w", Status: StatusRunning}
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	done := &Run{Key: "9-9-9", Command: "true", Cwd: "/w", Status: StatusFinished, StartedAt: sp.now(), PID: 1}
	line, err := marshalJSON(spoolRecord{Run: done})
	if err != nil {
		t.Fatal(err)
	}
	half := len(line) / 2
	appendJournal(t, sp, "\n"+string(line[:half]))
	s, warnings := openAt(t, path, o)
	if len(warnings) != 0 {
		t.Errorf("Open warnings = %q; want none for a line in progress", warnings)
	}
	if _, err := s.GetByKey(context.Background(), done.Key); err == nil {
		t.Error("a half-written line was ingested")
	}
	seg := journals(t, sp)
	if len(seg) != 1 {
		t.Fatalf("spool holds %q; want the segment its writer still holds", seg)
	}
	f, err := os.OpenFile(seg[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(string(line[half:]) + "\n")
	f.Close()
	code := 0
	r.Status, r.ExitCode = StatusFinished, &code
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	alive = false
	if _, warnings, err := s.Ingest(context.Background()); err != nil || len(warnings) != 0 {
		t.Fatalf("Ingest: %q, %v", warnings, err)
	}
	for _, key := range []string{r.Key, done.Key} {
		if got, err := s.GetByKey(context.Background(), key); err != nil || got.Status != StatusFinished {
			t.Errorf("run %s: %+v, %v; want finished", key, got, err)
		}
	}
}

func appendJournal(t *testing.T, sp *Spool, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(sp.Dir(), journalName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
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
	}{{sp.Dir(), 0o700}, {filepath.Join(sp.Dir(), journalName), 0o600}} {
		info, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != c.want {
			t.Errorf("mode of %s = %o, want %o", c.path, got, c.want)
		}
	}
}

// Sync and Pending: a running row can be synced (and one no longer held
// needs nothing); Pending counts the journal until an ingest takes it.
func TestSpoolSyncAndPending(t *testing.T) {
	sp, path, o := spoolPair(t, func() bool { return false })
	if n, err := sp.Pending(); err != nil || n != 0 {
		t.Fatalf("Pending of an empty spool = %d, %v", n, err)
	}
	r := &Run{Command: "true", Cwd: "/w", Status: StatusRunning}
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := sp.Sync(r.Key); err != nil {
		t.Errorf("Sync: %v", err)
	}
	if err := sp.Sync("no-such-key"); err != nil {
		t.Errorf("Sync of a key not held: %v", err)
	}
	r.Status = StatusFinished
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	if n, err := sp.Pending(); err != nil || n == 0 {
		t.Errorf("Pending after two lines = %d, %v; want > 0", n, err)
	}
	openAt(t, path, o)
	if n, err := sp.Pending(); err != nil || n != 0 {
		t.Errorf("Pending after an ingest = %d, %v; want 0", n, err)
	}
}

// A writer that completes its run and exits between an ingester's read of
// the segment and its check of the writer's process leaves a finished
// row, not an abandoned one.
func TestSpoolCompletionJustBeforeExit(t *testing.T) {
	var sp *Spool
	var r *Run
	completed := false
	alive := func() bool {
		if !completed {
			completed = true
			code := 0
			r.Status, r.ExitCode = StatusFinished, &code
			if err := sp.Write(r); err != nil {
				t.Errorf("complete: %v", err)
			}
		}
		return false // and then it exited
	}
	sp, path, o := spoolPair(t, alive)
	r = &Run{Command: "true", Cwd: "/w", Status: StatusRunning}
	if err := sp.Write(r); err != nil {
		t.Fatal(err)
	}
	s, warnings := openAt(t, path, o)
	got, err := s.GetByKey(context.Background(), r.Key)
	if err != nil || got.Status != StatusFinished || len(warnings) != 0 {
		t.Errorf("run = %+v, %v, warnings %q; want finished, no warning", got, err, warnings)
	}
}

// An Open with IngestIfIdle gives up at once, with ErrIngestBusy and the
// spool untouched, while another process ingests; once the lock is free
// it ingests like any Open, and a later Ingest on its Store takes the
// lock again (a held lock would make it wait forever).
func TestOpenIngestIfIdle(t *testing.T) {
	sp, path, o := spoolPair(t, func() bool { return false })
	r := &Run{Argv: []string{"true"}, Cwd: "/w", Status: StatusFinished}
	if err := sp.Write(r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	other, err := os.OpenFile(filepath.Join(sp.Dir(), ingestLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockFile(other, true, false); err != nil {
		t.Fatalf("lock: %v", err)
	}
	idle := o
	idle.IngestIfIdle = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a wait would fail on ctx, not with ErrIngestBusy
	if s, _, err := Open(ctx, path, idle); !errors.Is(err, ErrIngestBusy) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open(IngestIfIdle) while another ingests = %v, want ErrIngestBusy", err)
	}
	if n := len(journals(t, sp)); n != 1 {
		t.Errorf("spool holds %q after a busy Open, want the journal untouched", journals(t, sp))
	}
	other.Close()
	s, _ := openAt(t, path, idle)
	if got, err := s.GetByKey(context.Background(), r.Key); err != nil || got.Status != StatusFinished {
		t.Errorf("GetByKey(%q) after Open(IngestIfIdle) = %+v, %v; want the finished run", r.Key, got, err)
	}
	if err := sp.Write(&Run{Argv: []string{"true"}, Cwd: "/w", Status: StatusFinished}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := s.Ingest(context.Background())
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Ingest after Open(IngestIfIdle): %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ingest after Open(IngestIfIdle) waits for a lock Open still holds")
	}
}
