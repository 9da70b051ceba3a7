package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Spool is the journal of runs waiting to enter the database: forgebox
// run appends a line there instead of opening SQLite, whose open and insert
// cost milliseconds of CPU beside the sandbox launch. Open ingests the
// spool before anyone reads the history, so a reader never misses a run.
// A Spool is safe for concurrent use.
//
// Layout, in PATH.spool (0700): "journal" takes the lines; each line is a
// run as JSON, written with a newline before and after it, so that a line
// torn by a power cut never swallows the next one. A run's running row and its
// completion are two lines of the same journal: its writer opens the
// journal when the run starts, keeps it open under a shared lock, and
// appends the completion to it. An ingester renames the journal to
// "journal.NANOS-PID" (new runs start a new one), ingests every such
// segment and removes one only when it can lock it exclusively, that is,
// when no writer can append to it any more. Appending to an open file
// costs microseconds; creating a file per run cost 0.3-0.45 ms of kernel
// CPU on this machine's ext4, beside the command.
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
	// started holds the running rows this Spool wrote, by key: completing
	// one redacts only what is new (the output), as Finish did, not the
	// whole row again on the path to forgebox's exit, and appends to the
	// journal it keeps open.
	started map[string]*startedRun
}

// startedRun is a running row this Spool wrote.
type startedRun struct {
	row *Run // as written: bounded and redacted
	// enforced is the Enforced the caller gave, before redaction: a
	// completion with the same bytes reuses row.Enforced.
	enforced json.RawMessage

	mu   sync.Mutex // guards file against Sync while the completion closes it
	file *os.File   // the journal the row went to, open and share-locked
}

const (
	journalName   = "journal"
	segmentPrefix = "journal."
	// badSuffix marks a segment with lines that did not decode, set aside.
	badSuffix = ".bad"
	// ingestLock serializes ingesters.
	ingestLock = "ingest.lock"
)

// spoolDir is where the runs bound for the database at path wait.
func spoolDir(path string) string { return path + ".spool" }

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
	sp := &Spool{dir: spoolDir(abs), now: o.Now, redact: o.Redact, bootID: o.BootID, started: map[string]*startedRun{}}
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

// spoolRecord is a Run as a journal line holds it: with the process
// identity that the Run's JSON leaves out, so that Ingest can tell a
// running row's process vanished.
type spoolRecord struct {
	*Run
	PIDStart int64  `json:"pid_start,omitempty"`
	BootID   string `json:"boot_id,omitempty"`
}

// Write spools r, bounded and redacted as the Store would store it. It
// gives r a Key when it has none (writing the same Run again supersedes
// its row: the complete row after the running one); of r it writes only
// Key. A running row is written once; its completion may change only what
// Finish changed (status, end, exit, output, enforced).
// Write does not sync: like a commit under synchronous=NORMAL, a crash of
// forgebox cannot lose the row, a power cut may. A running row that must
// survive a power cut during a long run is synced with Sync.
func (sp *Spool) Write(r *Run) error {
	if r.Status == "" {
		return errors.New("spool run: empty status")
	}
	if r.Key == "" {
		r.Key = fmt.Sprintf("%d-%d-%d", sp.now().UnixNano(), sp.pid, sp.seq.Add(1))
	}
	c := *r
	running := c.Status == StatusRunning
	sp.mu.Lock()
	prev := sp.started[c.Key]
	if prev != nil && !running {
		// Only one completion takes the open journal.
		delete(sp.started, c.Key)
	}
	sp.mu.Unlock()
	if prev != nil && running {
		return fmt.Errorf("spool run %s: already spooled as running", c.Key)
	}
	if prev != nil {
		p := prev.row
		c.Command, c.Argv, c.Args, c.Env, c.Decision = p.Command, p.Argv, p.Args, p.Env, p.Decision
		c.StartedAt, c.PID, c.PIDStart, c.BootID = p.StartedAt, p.PID, p.PIDStart, p.BootID
		enforced := c.Enforced
		bound(&c)
		if bytes.Equal(enforced, prev.enforced) {
			c.Enforced = nil
			sp.redact.output(&c)
			c.Enforced = p.Enforced
		} else {
			sp.redact.output(&c)
		}
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
	if err == nil {
		b = append(append([]byte{'\n'}, b...), '\n')
		switch {
		case prev != nil:
			err = prev.complete(b)
		case running:
			var f *os.File
			if f, err = sp.append(b, true); err == nil {
				sp.mu.Lock()
				sp.started[c.Key] = &startedRun{row: &c, enforced: r.Enforced, file: f}
				sp.mu.Unlock()
			}
		default:
			_, err = sp.append(b, false)
		}
	} else if prev != nil {
		prev.close()
	}
	if err != nil {
		return fmt.Errorf("spool run %s: %w", c.Key, err)
	}
	return nil
}

// append writes line to the journal; keep returns the journal open and
// share-locked, for the run's completion.
func (sp *Spool) append(line []byte, keep bool) (*os.File, error) {
	f, err := sp.openJournal()
	if err != nil {
		return nil, err
	}
	// One write to a file opened O_APPEND: the kernel keeps it whole
	// against other writers.
	if _, err := f.Write(line); err != nil {
		f.Close()
		return nil, err
	}
	if keep {
		return f, nil
	}
	return nil, f.Close()
}

// openJournal opens the journal for appending, under a shared lock that
// tells ingesters a writer may still append to it.
func (sp *Spool) openJournal() (*os.File, error) {
	path := filepath.Join(sp.dir, journalName)
	for range 16 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f, false, true); err != nil {
			f.Close()
			return nil, err
		}
		// An ingester may have taken the journal between the open and
		// the lock: then the name holds a new journal, or none yet.
		fi, ferr := f.Stat()
		pi, perr := os.Stat(path)
		if ferr == nil && perr == nil && os.SameFile(fi, pi) {
			return f, nil
		}
		f.Close()
	}
	return nil, errors.New("the spool journal kept being taken by ingesters")
}

// complete appends the completion line to the run's journal and releases
// it.
func (st *startedRun) complete(line []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.file == nil {
		return errors.New("the running row's journal is closed")
	}
	_, err := st.file.Write(line)
	if cerr := st.file.Close(); err == nil {
		err = cerr
	}
	st.file = nil
	return err
}

func (st *startedRun) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.file != nil {
		st.file.Close()
		st.file = nil
	}
}

// Sync makes the running row with this key durable: the journal that
// holds it, and the directory entry that names the journal, are synced to
// disk. A row this Spool no longer holds running needs nothing.
func (sp *Spool) Sync(key string) error {
	sp.mu.Lock()
	st := sp.started[key]
	sp.mu.Unlock()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	var err error
	if st.file != nil {
		err = st.file.Sync()
	}
	st.mu.Unlock()
	if err == nil {
		err = syncDir(sp.dir)
	}
	if err != nil {
		return fmt.Errorf("sync spooled run %s: %w", key, err)
	}
	return nil
}

// Close releases the journals of the runs this Spool holds running,
// without completing them, as the process's exit would: their rows read as
// abandoned once the process is gone.
func (sp *Spool) Close() {
	sp.mu.Lock()
	started := sp.started
	sp.started = map[string]*startedRun{}
	sp.mu.Unlock()
	for _, st := range started {
		st.close()
	}
}

// Pending returns the size of the journal in bytes: how much waits for an
// ingest, besides segments an ingester left for runs still going.
func (sp *Spool) Pending() (int64, error) {
	fi, err := os.Stat(filepath.Join(sp.dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read history spool: %w", err)
	}
	return fi.Size(), nil
}

// ingestBatch is how many spooled runs one transaction takes: one commit
// (and its WAL sync) per run would cost more than the inserts.
const ingestBatch = 256

// upsertSQL inserts a spooled run, or updates the row an earlier ingest
// made of it. A row still running takes anything; a complete row takes only
// another complete one, so that a stale running line, read by a
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
}

// Ingest moves the spooled runs into the database. It takes the journal
// (renames it into a segment) and reads every segment: a complete run is
// upserted, a running one whose process is gone is upserted abandoned, a
// running one whose process lives is upserted running, to be completed by
// a later ingest. A segment no writer holds any more is then removed, or,
// if lines of it did not decode, renamed with the suffix .bad, with a
// warning. It returns how many runs it upserted. Open calls it; ingesters
// take turns under a lock, and an upsert on the run's key keeps one row
// per run.
func (s *Store) Ingest(ctx context.Context) (int, []string, error) {
	dir := spoolDir(s.path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	}
	if !s.ingestHeld {
		unlock, err := lockIngest(ctx, filepath.Join(dir, ingestLock))
		if err != nil {
			return 0, nil, err
		}
		defer unlock()
	}
	journal := filepath.Join(dir, journalName)
	if fi, err := os.Stat(journal); err == nil && fi.Size() > 0 {
		seg := filepath.Join(dir, fmt.Sprintf("%s%020d-%d", segmentPrefix, s.now().UnixNano(), os.Getpid()))
		if err := os.Rename(journal, seg); err != nil {
			return 0, nil, fmt.Errorf("take the history spool's journal: %w", err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil, fmt.Errorf("read history spool: %w", err)
	}
	var warnings []string
	total, abandoned := 0, 0
	live := map[string]bool{}
	for _, e := range ents { // sorted by name: segments in the order taken
		n := e.Name()
		if !strings.HasPrefix(n, segmentPrefix) || strings.HasSuffix(n, badSuffix) {
			continue
		}
		runs, held, bad, err := s.readSegment(filepath.Join(dir, n))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return total, warnings, err
		}
		for len(runs) > 0 {
			batch := runs[:min(ingestBatch, len(runs))]
			runs = runs[len(batch):]
			if err := s.upsert(ctx, batch); err != nil {
				held.release()
				return total, warnings, err
			}
			total += len(batch)
			for _, sr := range batch {
				switch sr.run.Status {
				case StatusAbandoned:
					abandoned++
				case StatusRunning:
					live[sr.key] = true
				}
			}
		}
		// Only after the commit: a run is in the database or in the spool.
		if w := held.settle(bad); w != "" {
			warnings = append(warnings, w)
		}
	}
	s.live = live
	if abandoned > 0 {
		warnings = append(warnings, fmt.Sprintf("marked %d run(s) abandoned: the forgebox process that ran them is gone", abandoned))
	}
	return total, warnings, nil
}

// segment is a journal an ingester took, locked exclusively when no
// writer holds it any more (done).
type segment struct {
	path string
	f    *os.File
	done bool // no writer can append: remove it once ingested
}

// readSegment reads the runs of a segment, the last line of each key
// winning, a completion over its running row. bad counts lines that did
// not decode. A final line without its newline is one being written when
// a writer holds the segment, and torn (bad) when none does.
func (s *Store) readSegment(path string) (runs []spooled, seg *segment, bad int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	seg = &segment{path: path, f: f}
	seg.done = lockFile(f, true, false) == nil
	runs, bad, err = seg.read()
	if err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	gone := map[string]bool{}
	for _, sr := range runs {
		if r := sr.run; r.Status == StatusRunning && s.gone(r.PID, r.PIDStart, r.BootID) {
			gone[sr.key] = true
		}
	}
	if len(gone) > 0 {
		// A process found gone may have appended its completion after
		// the read and before it exited: read again, after its death.
		if runs, bad, err = seg.read(); err != nil {
			f.Close()
			return nil, nil, 0, err
		}
	}
	for i := range runs {
		r := runs[i].run
		switch {
		case r.Status != StatusRunning:
		case gone[runs[i].key]:
			end := s.now()
			r.Status, r.EndedAt = StatusAbandoned, &end
		default:
			// Running, its process alive: the segment stays for the
			// completion, whatever the lock said.
			seg.done = false
		}
	}
	return runs, seg, bad, nil
}

// read reads the segment from its start.
func (seg *segment) read() (runs []spooled, bad int, err error) {
	if _, err := seg.f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("read history spool: %w", err)
	}
	b, err := io.ReadAll(seg.f)
	if err != nil {
		return nil, 0, fmt.Errorf("read history spool: %w", err)
	}
	byKey := map[string]int{}
	for len(b) > 0 {
		line, rest, whole := bytes.Cut(b, []byte("\n"))
		b = rest
		if !whole && !seg.done {
			break
		}
		if len(line) == 0 {
			continue
		}
		r, err := decodeLine(line)
		if err != nil || !whole {
			bad++
			continue
		}
		i, seen := byKey[r.Key]
		switch {
		case !seen:
			byKey[r.Key] = len(runs)
			runs = append(runs, spooled{key: r.Key, run: r})
		case r.Status != StatusRunning || runs[i].run.Status == StatusRunning:
			runs[i].run = r
		}
	}
	return runs, bad, nil
}

// settle removes a segment that is done, or sets it aside when bad lines
// were skipped, and releases it; it returns a warning, if any.
func (seg *segment) settle(bad int) string {
	defer seg.release()
	if !seg.done {
		return ""
	}
	if bad > 0 {
		to := seg.path + badSuffix
		if err := os.Rename(seg.path, to); err != nil {
			return fmt.Sprintf("history spool %q has %d unreadable line(s) and could not be moved aside: %v", seg.path, bad, err)
		}
		return fmt.Sprintf("history spool %q had %d unreadable line(s), skipped: moved it to %q", seg.path, bad, to)
	}
	if err := os.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("remove ingested history spool: %v", err)
	}
	return ""
}

func (seg *segment) release() { seg.f.Close() }

// lockIngest takes the ingesters' lock, waiting for it as long as ctx
// allows.
func lockIngest(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the history spool: %w", err)
	}
	for {
		err := lockFile(f, true, false)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, fmt.Errorf("lock the history spool: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock the history spool: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// tryLockIngest takes the ingesters' lock if no one holds it, returning
// the open file that holds it (closing it unlocks), and returns
// ErrIngestBusy if someone does. Without a spool there is nothing to
// lock: no file and no error.
func tryLockIngest(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock the history spool: %w", err)
	}
	if err := lockFile(f, true, false); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, ErrIngestBusy
		}
		return nil, fmt.Errorf("lock the history spool: %w", err)
	}
	return f, nil
}

// decodeLine decodes one journal line. A line that is not a run with a
// key and a status is an error, like one that is not JSON.
func decodeLine(b []byte) (*Run, error) {
	var r Run
	sr := spoolRecord{Run: &r}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&sr); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("not a spooled run: more than one value on a line")
	}
	if r.Key == "" || r.Status == "" {
		return nil, errors.New("not a spooled run: key or status missing")
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
