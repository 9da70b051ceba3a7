package history

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// busyTimeout is how long a statement waits for another process's write
// before failing: generous, because every write is one short statement and
// a failure would lose a row.
const busyTimeout = 10 * time.Second

// Options tune Open. The zero value is usable.
type Options struct {
	// Alive reports whether the process that wrote a running row still
	// exists: pid, its start time (clock ticks since boot, /proc/PID/stat
	// field 22) and the boot ID it ran under. nil: every row is assumed
	// alive (a row from another boot is abandoned all the same).
	// ProcessAlive suits Linux.
	Alive func(pid int, start int64, bootID string) bool
	Now   func() time.Time // nil: time.Now
	// Redact is applied by Start, Finish and Record to what they store, so
	// that no caller can forget it. nil: the built-in secret shapes only
	// (NewRedactor(nil)).
	Redact *Redactor
	// BootID is the current boot ID. "": the kernel's (Linux), none elsewhere.
	BootID string
	// IngestIfIdle makes Open return ErrIngestBusy at once, without opening
	// the database, when another process is ingesting the spool: that
	// process moves every spooled run, or leaves them for the next open.
	// forgebox run's background ingest sets it, so that no run waits for
	// another (under load, waiting ran into the deadline).
	IngestIfIdle bool
}

// ErrIngestBusy: another process is ingesting the spool (Options.IngestIfIdle).
var ErrIngestBusy = errors.New("another process is ingesting the history spool")

// Store is an open history database. It is safe for concurrent use.
type Store struct {
	db     *sql.DB
	path   string
	now    func() time.Time
	alive  func(pid int, start int64, bootID string) bool
	redact *Redactor
	// Identity of this process, recorded in the rows it starts.
	pid      int
	pidStart int64
	bootID   string
	// live holds the keys of the runs the last Ingest left running in the
	// spool: their processes may still complete them there.
	live map[string]bool
	// ingestHeld: Open holds the ingesters' lock (Options.IngestIfIdle).
	ingestHeld bool
}

// DefaultPath returns $FORGEBOX_HISTORY_DB, else
// $XDG_STATE_HOME/forgebox/history.db, else
// ~/.local/state/forgebox/history.db (%LocalAppData%\forgebox\history.db
// on Windows).
func DefaultPath() (string, error) {
	if p := os.Getenv("FORGEBOX_HISTORY_DB"); p != "" {
		return p, nil
	}
	// The XDG spec says to ignore a relative XDG_STATE_HOME.
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "forgebox", "history.db"), nil
	}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "forgebox", "history.db"), nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find history database: %w", err)
	}
	return filepath.Join(home, ".local", "state", "forgebox", "history.db"), nil
}

// Open opens the history database at path, creating it (mode 0600, parent
// directories 0700) and bringing its schema up to date. The warnings say
// what Open repaired: a corrupt database moved aside, runs marked
// abandoned. An error means no history for this run; the caller should
// warn and carry on.
func Open(ctx context.Context, path string, o Options) (*Store, []string, error) {
	if path == "" {
		return nil, nil, errors.New("open history database: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open history database %q: %w", path, err)
	}
	s := &Store{path: abs, now: o.Now, alive: o.Alive, redact: o.Redact, bootID: o.BootID}
	if o.IngestIfIdle {
		f, err := tryLockIngest(filepath.Join(spoolDir(abs), ingestLock))
		if err != nil {
			return nil, nil, err
		}
		if f != nil {
			// Held through the abandoned-row check, which writes too; a
			// later Ingest on this Store takes it again.
			s.ingestHeld = true
			defer func() { s.ingestHeld = false; f.Close() }()
		}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.redact == nil {
		s.redact = NewRedactor(nil)
	}
	// This process's identity comes from /proc: read it while SQLite opens.
	type identity struct {
		start int64
		boot  string
	}
	idc := make(chan identity, 1)
	go func() { idc <- identity{selfStart(), systemBootID()} }()
	defer func() {
		if idc != nil {
			<-idc
		}
	}()

	var warnings []string
	// A second attempt follows a move aside; a third, a race with another
	// process that moved it first.
	for attempt := 0; ; attempt++ {
		db, err := openDB(ctx, abs)
		if err == nil {
			s.db = db
			break
		}
		var c *corruptError
		if attempt >= 2 || !errors.As(err, &c) {
			return nil, warnings, err
		}
		moved, err := moveAside(abs, c.file, s.now())
		if err != nil {
			return nil, warnings, err
		}
		if moved != "" {
			warnings = append(warnings, fmt.Sprintf("history database %q was corrupt (%v): moved it to %q and started a new one", abs, c.cause, moved))
		}
	}
	id := <-idc
	idc = nil
	s.pid, s.pidStart = os.Getpid(), id.start
	if s.bootID == "" {
		s.bootID = id.boot
	}
	// The spool first: its running rows join the abandoned-row check, and
	// what a reader is about to ask for is in the database. A failure is a
	// warning: the files stay for the next Open.
	if _, ws, err := s.Ingest(ctx); err != nil {
		warnings = append(warnings, ws...)
		warnings = append(warnings, fmt.Sprintf("%v; the spooled runs wait for the next open", err))
	} else {
		warnings = append(warnings, ws...)
	}
	w, err := s.markAbandoned(ctx)
	if err != nil {
		s.db.Close()
		return nil, warnings, err
	}
	if w != "" {
		warnings = append(warnings, w)
	}
	return s, warnings, nil
}

// openDB creates the file if needed, opens it and migrates it. A database
// SQLite cannot read comes back as a *corruptError.
func openDB(ctx context.Context, path string) (*sql.DB, error) {
	h, err := prepareFile(path)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector{dsn: dsn(path)})
	// One connection: SQLite serialises writers anyway, and a single
	// connection keeps per-process cost to one open and one set of pragmas.
	db.SetMaxOpenConns(1)
	err = retryBusy(ctx, func() error { return migrate(ctx, db) })
	if err == nil {
		return db, nil
	}
	db.Close()
	if isCorrupt(err) || !h.ok {
		if cause := quickCheck(ctx, path); cause != nil {
			return nil, &corruptError{file: h.file, cause: cause}
		}
	}
	return nil, fmt.Errorf("open history database %q: %w", path, err)
}

// retryBusy retries f while it fails with SQLITE_BUSY, for up to
// busyTimeout. The busy timeout covers statements on an open connection,
// but not a connection's first read while another process's last
// connection checkpoints under an exclusive lock on close, or runs
// recovery: SQLite documents those as returning SQLITE_BUSY at once
// (https://www.sqlite.org/wal.html#sometimes_queries_return_sqlite_busy_in_wal_mode),
// and with a forgebox process per command they happen.
func retryBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(busyTimeout)
	wait := time.Millisecond
	for {
		err := f()
		if err == nil || !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// dsn is a file: URI, so that a path holding '?' or '#' stays a path, with
// the pragmas every pooled connection needs. _txlock=immediate makes every
// write transaction take the write lock up front: a deferred transaction
// that upgrades to a writer under WAL fails with SQLITE_BUSY at once, busy
// timeout or not.
func dsn(path string) string {
	q := url.Values{}
	q.Set("_txlock", "immediate")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)") // persistent; a read once set

	// NORMAL under WAL: a commit survives a crash of forgebox; a power loss
	// may lose the last commits but never corrupts the file.
	q.Add("_pragma", "synchronous(NORMAL)")
	// With the persistent WAL (see connector), the last connection to close
	// truncates the WAL to 0 bytes after its checkpoint instead of deleting
	// it; during use, a reset WAL is cut back to 4 MiB.
	q.Add("_pragma", "journal_size_limit(4194304)")
	return fileURI(path) + "?" + q.Encode()
}

// fileURI turns an absolute path into a file: URI, escaping what SQLite
// would otherwise read as query or fragment.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x -> /C:/x, as SQLite expects on Windows
	}
	u := url.URL{Scheme: "file", Path: p}
	return u.String()
}

// connector opens connections with a persistent WAL: the -wal and -shm
// files outlive each forgebox process instead of being created and deleted
// by every one (which costs ~1 ms here: file creation, then a fresh
// shared-memory index, per process).
type connector struct{ dsn string }

func (c connector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.Driver().Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if fc, ok := conn.(sqlite.FileControl); ok {
		if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
			conn.Close()
			return nil, fmt.Errorf("keep history WAL: %w", err)
		}
	}
	return conn, nil
}

func (connector) Driver() driver.Driver { return &sqlite.Driver{} }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close history database %q: %w", s.path, err)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }
