//go:build unix

package history

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errLocked: another open file holds a lock that conflicts.
var errLocked = errors.New("locked by another process")

// lockFile takes a flock(2) lock on f, exclusive or shared, waiting for
// it or not. The lock belongs to this open file and goes with its close,
// or with the process.
func lockFile(f *os.File, exclusive, wait bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errLocked
		}
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}

// syncDir syncs a directory, so that the names in it survive a power cut.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
