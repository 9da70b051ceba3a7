//go:build unix

package caches

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Hold takes a shared lock on the workspace's caches for the length of a
// run: Clear and eviction leave them alone until it is closed. The file
// is opened close-on-exec, so the command never holds it. shared is true
// when another run holds them too: then the run needs work directories
// of its own (WorkDir).
func (w Workspace) Hold() (l io.Closer, shared bool, err error) {
	if l, err := lock(w, unix.LOCK_EX|unix.LOCK_NB); err == nil {
		f := l.(*os.File)
		// Alone: keep it, shared, so that the next run knows of this one.
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("lock private cache: %w", err)
		}
		return f, false, nil
	} else if !errors.Is(err, ErrBusy) {
		return nil, false, err
	}
	l, err = lock(w, unix.LOCK_SH)
	return l, true, err
}

func lockExclusive(w Workspace) (io.Closer, error) {
	return lock(w, unix.LOCK_EX|unix.LOCK_NB)
}

func lock(w Workspace, how int) (io.Closer, error) {
	f, err := os.OpenFile(filepath.Join(w.Dir(), lockFile), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrNotExist) && how == unix.LOCK_EX|unix.LOCK_NB {
		if _, serr := os.Stat(w.Dir()); errors.Is(serr, fs.ErrNotExist) {
			return io.NopCloser(nil), nil // nothing to remove, nothing to lock
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lock private cache: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("lock private cache: %w", err)
	}
	return f, nil
}

// diskUsage is the space the files beneath dir take, in bytes.
func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d == nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
