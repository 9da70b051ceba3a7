package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Spool is a directory of runs waiting to enter the database, one JSON file
// per run. forgebox run writes there instead of opening SQLite: a file
// write costs microseconds, opening the database and inserting a row
// milliseconds of CPU beside the sandbox launch. Open ingests the spool
// before anyone reads the history, so a reader never misses a run. A Spool
// is safe for concurrent use.
type Spool struct {
	dir    string
	now    func() time.Time
	redact *Redactor
	// Identity of this process, recorded in the running rows it writes.
	pid      int
	pidStart int64
	bootID   string
	seq      atomic.Uint64 // makes keys unique within this process

	mu sync.Mutex
	// started holds the redacted running rows this Spool wrote, by key:
	// completing one redacts only what is new (the output), as Finish
	// did, not the whole row again on the path to forgebox's exit.
	started map[string]*Run
}

// Spool file names: a running row and a complete one live under different
// names, so that the completion never renames over an existing file. On
// ext4 a rename that replaces a file forces the new file's blocks to be
// allocated at once (auto_da_alloc), 0.1-0.2 ms here, on the exit path.
// Ingest takes KEY.json over KEY.run.json.
const (
	runningSuffix  = ".run.json"
	completeSuffix = ".json"
)

// spoolKey is the key a spool file name holds, and whether it is a
// running row's.
func spoolKey(name string) (key string, running bool) {
	if k, ok := strings.CutSuffix(name, runningSuffix); ok {
		return k, true
	}
	return strings.TrimSuffix(name, completeSuffix), false
}

// spoolDir is where the runs bound for the database at path wait.
func spoolDir(path string) string { return path + ".spool" }

// staleTemp is how old a temporary spool file must be before Ingest
// takes it for the leftover of a writer that died.
const staleTemp = time.Minute

// OpenSpool opens the spool of the database at dbPath, creating its
// directory (mode 0700) if needed. Of o it uses Now, Redact and BootID.
func OpenSpool(dbPath string, o Options) (*Spool, error) {
	if dbPath == "" {
		return nil, errors.New("open history spool: empty path")
	}
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return nil, fmt.Errorf("open history spool for %q: %w", dbPath, err)
	}
	sp := &Spool{dir: spoolDir(abs), now: o.Now, redact: o.Redact, bootID: o.BootID, started: map[string]*Run{}}
	if sp.now == nil {
		sp.now = time.Now
	}
	if sp.redact == nil {
		sp.redact = NewRedactor(nil)
	}
	if err := os.MkdirAll(sp.dir, 0o700); err != nil {
		return nil, fmt.Errorf("create history spool: %w", err)
	}
	sp.pid, sp.pidStart = os.Getpid(), selfStart()
	if sp.bootID == "" {
		sp.bootID = systemBootID()
	}
	return sp, nil
}

// Dir returns the spool's directory.
func (sp *Spool) Dir() string { return sp.dir }

// spoolRecord is a Run as a spool file holds it: with the process
// identity that the Run's JSON leaves out, so that Ingest can tell a
// running row's process vanished.
type spoolRecord struct {
	*Run
	PIDStart int64  `json:"pid_start,omitempty"`
	BootID   string `json:"boot_id,omitempty"`
}

// Write spools r, bounded and redacted as the Store would store it. It
// gives r a Key when it has none (writing the same Run again supersedes
// its file: the complete row after the running one); of r it writes only
// Key. A running row is written once; its completion may change only what
// Finish changed (status, end, exit, output, enforced).
// A running row is synced to disk before it becomes visible: it must
// survive a power cut during a long run. A complete row is not: like a
// commit under synchronous=NORMAL, a crash of forgebox cannot lose it, a
// power cut may.
func (sp *Spool) Write(r *Run) error {
	if r.Status == "" {
		return errors.New("spool run: empty status")
	}
	if r.Key == "" {
		r.Key = fmt.Sprintf("%d-%d-%d", sp.now().UnixNano(), sp.pid, sp.seq.Add(1))
	}
	c := *r
	sp.mu.Lock()
	prev := sp.started[c.Key]
	sp.mu.Unlock()
	if prev != nil {
		c.Command, c.Argv, c.Args, c.Env, c.Decision = prev.Command, prev.Argv, prev.Args, prev.Env, prev.Decision
		c.StartedAt, c.PID, c.PIDStart, c.BootID = prev.StartedAt, prev.PID, prev.PIDStart, prev.BootID
		bound(&c)
		sp.redact.output(&c)
	} else {
		bound(&c)
		sp.redact.Run(&c)
	}
	if c.StartedAt.IsZero() {
		c.StartedAt = sp.now()
	}
	if c.PID == 0 {
		c.PID, c.PIDStart = sp.pid, sp.pidStart
	}
	if c.BootID == "" {
		c.BootID = sp.bootID
	}
	b, err := marshalJSON(spoolRecord{Run: &c, PIDStart: c.PIDStart, BootID: c.BootID})
	if err != nil {
		return fmt.Errorf("spool run %s: %w", c.Key, err)
	}
	running := c.Status == StatusRunning
	name := c.Key + completeSuffix
	if running {
		name = c.Key + runningSuffix
	}
	if err := writeAtomic(filepath.Join(sp.dir, name), b, running); err != nil {
		return fmt.Errorf("spool run %s: %w", c.Key, err)
	}
	sp.mu.Lock()
	if running {
		sp.started[c.Key] = &c
	} else {
		delete(sp.started, c.Key)
	}
	sp.mu.Unlock()
	return nil
}

// writeAtomic writes path through path.tmp, so that a reader sees the
// whole file or none.
func writeAtomic(path string, b []byte, durable bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Len returns how many spool files wait (a run that is running, or was
// completed since the last ingest, may count twice): one directory read.
func (sp *Spool) Len() (int, error) {
	ents, err := os.ReadDir(sp.dir)
	if err != nil {
		return 0, fmt.Errorf("read history spool: %w", err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n, nil
}

// ingestBatch is how many spooled runs one transaction takes: one commit
// (and its WAL sync) per run would cost more than the inserts.
const ingestBatch = 256

// upsertSQL inserts a spooled run, or updates the row an earlier ingest
// made of it. A row still running takes anything; a complete row takes only
// another complete one, so that a stale copy of the running file, read by a
// racing ingester, never undoes a completion; an abandoned row takes the
// completion its process wrote before an Open marked it.
var upsertSQL = func() string {
	cols := strings.Fields(strings.ReplaceAll(insertColumns, ",", " "))
	set := make([]string, len(cols))
	for i, c := range cols {
		set[i] = c + " = excluded." + c
	}
	return `INSERT INTO history (` + insertColumns + `, spool_key) VALUES (` +
		strings.Repeat("?,", len(cols)) + `?)
	ON CONFLICT(spool_key) DO UPDATE SET ` + strings.Join(set, ", ") + `
	WHERE history.status = 'running' OR excluded.status NOT IN ('running', 'abandoned')`
}()

// spooled is one run read by Ingest.
type spooled struct {
	key string
	run *Run
	// files are what to remove once the run is committed, the running
	// file first (see readSpooled); none when its process still runs (the
	// running file stays for its completion).
	files []string
}

// Ingest moves the spooled runs into the database: a complete run, or a
// running one whose process is gone (marked abandoned), is upserted and
// its files removed; a running one whose process lives is upserted and
// its file kept, for its completion. A file that does not decode is
// renamed KEY.bad, with a warning. It returns how many runs it upserted.
// Open calls it; several processes may ingest the same spool at once.
func (s *Store) Ingest(ctx context.Context) (int, []string, error) {
	dir := spoolDir(s.path)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read history spool: %w", err)
	}
	// What each key has: a running file, a complete one, or both.
	type files struct{ running, complete bool }
	byKey := map[string]*files{}
	var keys []string
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasSuffix(n, completeSuffix):
			k, running := spoolKey(n)
			f := byKey[k]
			if f == nil {
				f = &files{}
				byKey[k] = f
				keys = append(keys, k)
			}
			if running {
				f.running = true
			} else {
				f.complete = true
			}
		case strings.HasSuffix(n, ".tmp"):
			// A writer renames its file within microseconds; one left
			// for a minute belongs to a writer that died.
			if info, err := e.Info(); err == nil && s.now().Sub(info.ModTime()) > staleTemp {
				os.Remove(filepath.Join(dir, n))
			}
		}
	}
	sort.Strings(keys) // keys start with the time: ids follow start order
	var warnings []string
	total, abandoned := 0, 0
	// done adds the count of abandoned runs to the warnings, as Open's
	// own check would say it.
	done := func() []string {
		if abandoned > 0 {
			return append(warnings, fmt.Sprintf("marked %d run(s) abandoned: the forgebox process that ran them is gone", abandoned))
		}
		return warnings
	}
	for len(keys) > 0 {
		batch := keys[:min(ingestBatch, len(keys))]
		keys = keys[len(batch):]
		var runs []spooled
		for _, k := range batch {
			f := byKey[k]
			sr, ok, ws := s.readSpooled(dir, k, f.running, f.complete)
			warnings = append(warnings, ws...)
			if ok {
				runs = append(runs, sr)
			}
		}
		if err := s.upsert(ctx, runs); err != nil {
			return total, done(), err
		}
		total += len(runs)
		// Only after the commit: a run is in the database or in the spool.
		for _, sr := range runs {
			if sr.run.Status == StatusAbandoned {
				abandoned++
			}
			for _, f := range sr.files {
				if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
					warnings = append(warnings, fmt.Sprintf("remove ingested spool file: %v", err))
				}
			}
		}
	}
	return total, done(), nil
}

// readSpooled reads the files of one key and decides what becomes of the
// run. ok is false when there is nothing to upsert: the files vanished
// (another ingester took them) or were bad (the warnings say so).
func (s *Store) readSpooled(dir, key string, running, complete bool) (sr spooled, ok bool, warnings []string) {
	runPath := filepath.Join(dir, key+runningSuffix)
	donePath := filepath.Join(dir, key+completeSuffix)
	sr.key = key
	if complete {
		r, err := s.decodeOrSetAside(donePath, key, &warnings)
		if r != nil {
			sr.run, sr.files = r, []string{runPath, donePath}
			return sr, true, warnings
		}
		if !running || err == nil {
			return sr, false, warnings
		}
	}
	r, _ := s.decodeOrSetAside(runPath, key, &warnings)
	if r == nil {
		return sr, false, warnings
	}
	sr.run = r
	if r.Status != StatusRunning {
		sr.files = []string{runPath}
		return sr, true, warnings
	}
	if !s.gone(r.PID, r.PIDStart, r.BootID) {
		return sr, true, warnings
	}
	// Its process may have completed the run just before it exited.
	if done, err := decodeSpooled(donePath, key); err == nil {
		sr.run, sr.files = done, []string{runPath, donePath}
		return sr, true, warnings
	}
	// No completion; but if the running file went too, another ingester
	// took the run (it removes the running file first, so a running file
	// still there means the completion was never written).
	if _, err := os.Lstat(runPath); errors.Is(err, fs.ErrNotExist) {
		return sr, false, warnings
	}
	end := s.now()
	sr.run.Status, sr.run.EndedAt = StatusAbandoned, &end
	sr.files = []string{runPath}
	return sr, true, warnings
}

// decodeOrSetAside reads a spool file; one that does not decode is renamed
// with the suffix .bad, and a warning. A missing file is nil, no warning.
func (s *Store) decodeOrSetAside(path, key string, warnings *[]string) (*Run, error) {
	r, err := decodeSpooled(path, key)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	bad := strings.TrimSuffix(path, completeSuffix) + ".bad"
	if rerr := os.Rename(path, bad); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		*warnings = append(*warnings, fmt.Sprintf("spooled run %q is unreadable (%v) and could not be moved aside: %v", path, err, rerr))
	} else {
		*warnings = append(*warnings, fmt.Sprintf("spooled run %q is unreadable (%v): moved it to %q", path, err, bad))
	}
	return nil, err
}

// decodeSpooled reads a spool file. A file that is not a run of this key
// with a status is an error, like one that is not JSON.
func decodeSpooled(path, key string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	sr := spoolRecord{Run: &r}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&sr); err != nil {
		return nil, err
	}
	if r.Key != key || r.Status == "" {
		return nil, errors.New("not a spooled run: key or status missing or wrong")
	}
	r.PIDStart, r.BootID = sr.PIDStart, sr.BootID
	return &r, nil
}

// upsert writes runs in one transaction.
func (s *Store) upsert(ctx context.Context, runs []spooled) error {
	if len(runs) == 0 {
		return nil
	}
	return retryBusy(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see dsn)
		if err != nil {
			return fmt.Errorf("ingest spooled runs: %w", err)
		}
		defer tx.Rollback()
		stmt, err := tx.PrepareContext(ctx, upsertSQL)
		if err != nil {
			return fmt.Errorf("ingest spooled runs: %w", err)
		}
		defer stmt.Close()
		for _, sr := range runs {
			args, err := rowArgs(sr.run)
			if err != nil {
				return fmt.Errorf("ingest spooled run %s: %w", sr.run.Key, err)
			}
			if _, err := stmt.ExecContext(ctx, append(args, sr.run.Key)...); err != nil {
				return fmt.Errorf("ingest spooled run %s: %w", sr.run.Key, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("ingest spooled runs: %w", err)
		}
		return nil
	})
}
