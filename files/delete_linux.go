package files

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxDepth bounds the directory trees Delete and Copy descend: each level
// holds descriptors open.
const maxDepth = 256

var errTooDeep = errors.New("the directory tree is deeper than 256 levels")

func (f *FS) mayRemove(p string) error {
	const op = "delete"
	l, err := f.existing(op, p, false)
	if err != nil {
		return err
	}
	defer l.close(&f.h)
	if l.isRoot() {
		return refusal(op, p, KindInvalid, "the workspace root itself cannot be deleted; delete what is in it")
	}
	return f.mayChange(op, p, f.guards(false), l.path())
}

func (f *FS) remove(p string, recursive bool) error {
	const op = "delete"
	l, err := f.existing(op, p, false)
	if err != nil {
		return err
	}
	defer l.close(&f.h)
	path := l.path()
	if l.isRoot() {
		return refusal(op, p, KindInvalid, "the workspace root itself cannot be deleted; delete what is in it")
	}
	if err := f.mayChange(op, p, f.guards(false), path); err != nil {
		return err
	}
	if isDir(&l.st) {
		if !recursive {
			return refusal(op, p, KindIsDir, "%s is a directory: pass recursive to delete it and everything in it", join(path))
		}
		err = removeTree(l.parent, l.name, 0)
	} else {
		// A file with other hard links loses only this name: their
		// content is untouched.
		err = retryEINTR(func() error { return unix.Unlinkat(l.parent, l.name, 0) })
	}
	if errors.Is(err, errTooDeep) {
		return refusal(op, p, KindTooLarge, "%s is more than %d directories deep", join(path), maxDepth)
	}
	if err != nil {
		return osError(op, p, err)
	}
	return nil
}

// removeTree removes name in dir and, if it is a directory, everything in
// it, through descriptors opened with O_NOFOLLOW: a link in the tree is
// removed, never followed, and a directory swapped for a link during the
// walk fails the open instead of leading elsewhere.
func removeTree(dir int, name string, depth int) error {
	err := retryEINTR(func() error { return unix.Unlinkat(dir, name, 0) })
	if !errors.Is(err, unix.EISDIR) {
		return err
	}
	if depth >= maxDepth {
		return errTooDeep
	}
	fd, err := ignoringEINTR(func() (int, error) {
		return unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return err
	}
	d := fileFromFd(fd, name)
	err = emptyDir(d, fd, depth)
	d.Close()
	if err != nil {
		return err
	}
	return retryEINTR(func() error { return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR) })
}

// emptyDir removes the entries of d, reading it again from the start
// after each batch: removing while reading may skip entries.
func emptyDir(d *os.File, fd int, depth int) error {
	for {
		names, err := d.Readdirnames(1024)
		if len(names) == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		for _, n := range names {
			if err := removeTree(fd, n, depth+1); err != nil && !errors.Is(err, unix.ENOENT) {
				return err
			}
		}
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
}
