package sandbox

import (
	"errors"
	"path/filepath"

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
//
// It runs with the caller's full rights in directories a sandboxed command
// (of a concurrent run) can change: everything happens relative to the Git
// directory's descriptor, opened without following symlinks, and that
// directory must be the one the planner inspected.
type placeholder struct {
	path     string
	name     string
	dir      bool
	gitdir   int // the Git directory, held open for release
	fd       int // the placeholder, holding the shared lock
	dev, ino uint64
}

// holdPlaceholder holds name inside the Git directory at gitdir. It
// returns unix.EEXIST when something that is not a placeholder is there.
func holdPlaceholder(gitdir string, dev, ino uint64, name string, dir bool) (*placeholder, error) {
	gfd, err := openDir(unix.AT_FDCWD, gitdir)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(gfd, &st); err != nil || (dev != 0 && (uint64(st.Dev) != dev || st.Ino != ino)) {
		unix.Close(gfd)
		return nil, unix.ESTALE // replaced since it was inspected
	}
	for attempt := 0; attempt < 5; attempt++ {
		created, err := makePlaceholder(gfd, name, dir)
		if err != nil {
			unix.Close(gfd)
			return nil, err
		}
		flags := unix.O_RDONLY
		if dir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := openNoFollow(gfd, name, flags)
		if err != nil {
			unix.Close(gfd)
			return nil, err
		}
		if !created && !isPlaceholder(fd, dir) {
			unix.Close(fd) // the real thing, or someone else's file
			unix.Close(gfd)
			return nil, unix.EEXIST
		}
		if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
			unix.Close(fd)
			unix.Close(gfd)
			return nil, err
		}
		var a, b unix.Stat_t
		if unix.Fstat(fd, &a) != nil || unix.Fstatat(gfd, name, &b, unix.AT_SYMLINK_NOFOLLOW) != nil ||
			a.Dev != b.Dev || a.Ino != b.Ino || a.Nlink == 0 {
			unix.Close(fd) // removed by a run that finished meanwhile: start over
			continue
		}
		return &placeholder{path: filepath.Join(gitdir, name), name: name, dir: dir, gitdir: gfd, fd: fd,
			dev: uint64(a.Dev), ino: a.Ino}, nil
	}
	unix.Close(gfd)
	return nil, errors.New("it keeps changing")
}

// makePlaceholder creates the placeholder, or reports that something is
// already there.
func makePlaceholder(gfd int, name string, dir bool) (created bool, err error) {
	if dir {
		err = unix.Mkdirat(gfd, name, 0o755)
	} else {
		var fd int
		fd, err = unix.Openat(gfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err == nil {
			_, err = unix.Write(fd, []byte(commondirPlaceholder))
			if err == nil {
				// Best effort: without user xattrs the content still
				// identifies a placeholder commondir.
				_ = unix.Fsetxattr(fd, placeholderXattr, []byte("1"), 0)
			}
			unix.Close(fd)
			if err != nil {
				unix.Unlinkat(gfd, name, 0)
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
	if dir {
		if fd, err := openNoFollow(gfd, name, unix.O_RDONLY|unix.O_DIRECTORY); err == nil {
			_ = unix.Fsetxattr(fd, placeholderXattr, []byte("1"), 0) // an empty hooks directory left behind is harmless
			unix.Close(fd)
		}
	}
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

// release removes the placeholder when no other run holds it and it is
// still the very entry this run made.
func (h *placeholder) release() {
	if unix.Flock(h.fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
		var st unix.Stat_t
		if unix.Fstatat(h.gitdir, h.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && uint64(st.Dev) == h.dev && st.Ino == h.ino {
			if h.dir {
				_ = unix.Unlinkat(h.gitdir, h.name, unix.AT_REMOVEDIR) // fails, harmlessly, if something was put in it
			} else if isPlaceholder(h.fd, false) {
				_ = unix.Unlinkat(h.gitdir, h.name, 0)
			}
		}
	}
	unix.Close(h.fd)
	unix.Close(h.gitdir)
}
