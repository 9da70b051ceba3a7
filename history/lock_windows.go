package history

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// errLocked: another open file holds a lock that conflicts.
var errLocked = errors.New("locked by another process")

// lockFile takes a LockFileEx lock on f, exclusive or shared, waiting for
// it or not. It locks one byte far past any data: a Windows lock forbids
// others' writes to the range it covers, and journal lines must still go
// in. The lock goes with the handle's close, or with the process.
func lockFile(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	ol := &windows.Overlapped{Offset: 0xFFFFFFFE, OffsetHigh: 0x7FFFFFFF}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return errLocked
	}
	return &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
}

// syncDir does nothing: Windows has no way to sync a directory, and NTFS
// journals its names.
func syncDir(string) error { return nil }
