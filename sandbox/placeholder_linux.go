package sandbox

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// placeholderXattr marks what forgebox made to hold a missing name, so that
// a later run may remove one a killed run left behind.
const placeholderXattr = "user.forgebox.placeholder"

// commondirPlaceholder is what a placeholder commondir holds: "." points Git
// at its own directory, as if there were no commondir (an empty file makes
// git fail).
const commondirPlaceholder = ".\n"

// placeholder holds a missing name inside a Git directory for a run: an
// empty hooks directory, or a commondir that points nowhere else. A shared
// lock says it is in use; release removes it only when no other run holds
// it, so concurrent runs in one repository keep their protection.
type placeholder struct {
	path     string
	dir      bool
	f        *os.File
	dev, ino uint64
}

func holdPlaceholder(path string, dir bool) (*placeholder, error) {
	for attempt := 0; attempt < 5; attempt++ {
		created, err := makePlaceholder(path, dir)
		if err != nil {
			return nil, err
		}
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if dir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := unix.Open(path, flags, 0)
		if err != nil {
			return nil, err
		}
		f := os.NewFile(uintptr(fd), path)
		if !created && !isPlaceholder(fd, dir) {
			f.Close() // someone else's file appeared meanwhile: not ours to hold
			return nil, unix.EEXIST
		}
		if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
			f.Close()
			return nil, err
		}
		var a, b unix.Stat_t
		if unix.Fstat(fd, &a) != nil || unix.Lstat(path, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino || a.Nlink == 0 {
			f.Close() // removed by a run that finished meanwhile: start over
			continue
		}
		return &placeholder{path: path, dir: dir, f: f, dev: uint64(a.Dev), ino: a.Ino}, nil
	}
	return nil, errors.New("it keeps changing")
}

// makePlaceholder creates the placeholder, or reports that something is
// already there.
func makePlaceholder(path string, dir bool) (created bool, err error) {
	if dir {
		err = unix.Mkdir(path, 0o755)
	} else {
		var fd int
		fd, err = unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err == nil {
			_, err = unix.Write(fd, []byte(commondirPlaceholder))
			unix.Close(fd)
			if err != nil {
				unix.Unlink(path)
				return false, err
			}
		}
	}
	if err == unix.EEXIST {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Best effort: without user xattrs the content still identifies a
	// placeholder commondir; an empty hooks directory left by a killed run
	// is harmless.
	_ = unix.Lsetxattr(path, placeholderXattr, []byte("1"), 0)
	return true, nil
}

// isPlaceholder reports whether the open file is a placeholder of ours:
// marked, or (without xattrs) a commondir holding exactly ".".
func isPlaceholder(fd int, dir bool) bool {
	buf := make([]byte, 8)
	if n, err := unix.Fgetxattr(fd, placeholderXattr, buf); err == nil && n > 0 {
		return true
	}
	if dir {
		return false
	}
	n, err := unix.Pread(fd, buf, 0)
	return err == nil && string(buf[:n]) == commondirPlaceholder
}

func (h *placeholder) release() {
	fd := int(h.f.Fd())
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
		var st unix.Stat_t
		if unix.Lstat(h.path, &st) == nil && uint64(st.Dev) == h.dev && st.Ino == h.ino {
			if h.dir {
				_ = unix.Rmdir(h.path) // fails, harmlessly, if something was put in it
			} else if isPlaceholder(fd, false) {
				_ = unix.Unlink(h.path)
			}
		}
	}
	h.f.Close()
}
