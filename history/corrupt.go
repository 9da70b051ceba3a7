package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteMagic opens every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// corruptError says the file at a path is not a usable database.
type corruptError struct {
	file  os.FileInfo // what was judged corrupt, to move aside only that
	cause error
}

func (e *corruptError) Error() string { return "history database is corrupt: " + e.cause.Error() }
func (e *corruptError) Unwrap() error { return e.cause }

// header is what prepareFile learnt from the first bytes of the file.
type header struct {
	file os.FileInfo // what was examined, to move aside only that
	ok   bool        // empty (a new database) or starts like one
}

// prepareFile creates the database file with mode 0600 before SQLite sees
// it (SQLite would create it with 0644 less the umask, and its -wal and
// -shm files copy the main file's mode) and reads its header.
func prepareFile(path string) (header, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return header{}, fmt.Errorf("create history directory %q: %w", filepath.Dir(path), pathCause(err))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return header{}, fmt.Errorf("create history database %q: %w", path, pathCause(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return header{}, fmt.Errorf("stat history database %q: %w", path, pathCause(err))
	}
	if info.Size() == 0 {
		return header{file: info, ok: true}, nil
	}
	b := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, b); err != nil {
		return header{file: info}, nil
	}
	return header{file: info, ok: string(b) == sqliteMagic}, nil
}

// pathCause drops the *fs.PathError wrapper, whose path the caller's
// message already names.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isCorrupt reports whether SQLite said the file is damaged or is not a
// database: the only errors that justify moving a user's file aside. Busy,
// permission and I/O errors never do.
func isCorrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// isBusy reports whether SQLite said another connection holds a lock.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// quickCheck runs PRAGMA quick_check on a read-only connection without the
// usual pragmas (setting WAL is itself a write a damaged file may refuse).
// It returns why the database is corrupt, or nil when it is not, or when
// the check could not run for another reason (busy, permissions): then the
// file is left where it is.
func quickCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", fileURI(path)+"?mode=ro&_pragma=busy_timeout%28"+fmt.Sprint(busyTimeout.Milliseconds())+"%29")
	if err != nil {
		return nil
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		if isCorrupt(err) {
			return err
		}
		return nil
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		if isCorrupt(err) {
			return err
		}
		return nil
	}
	if len(problems) > 0 {
		return errors.New(firstLines(problems, 3))
	}
	return nil
}

// moveAside renames the corrupt file, and its -wal and -shm, to
// PATH.corrupt-YYYYMMDDTHHMMSS (UTC), so that nothing is deleted and a new
// database can start. If another process already replaced the file, it
// leaves the new one alone and returns "".
func moveAside(path string, judged os.FileInfo, now time.Time) (string, error) {
	cur, err := os.Stat(path)
	if err != nil || !os.SameFile(cur, judged) {
		return "", nil
	}
	base := path + ".corrupt-" + now.UTC().Format("20060102T150405")
	dst := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = fmt.Sprintf("%s.%d", base, i)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("move corrupt history database %q aside: %w", path, pathCause(err))
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+suffix, dst+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return dst, fmt.Errorf("move corrupt history database %q aside: %w", path+suffix, pathCause(err))
		}
	}
	return dst, nil
}

func firstLines(lines []string, n int) string {
	if len(lines) <= n {
		return strings.Join(lines, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(lines[:n], "; "), len(lines)-n)
}
