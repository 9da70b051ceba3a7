package files

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// handle holds the workspace open for the FS's life: every walk starts at
// this descriptor, never at the root's name, so renaming the workspace or
// replacing a directory above it with a link moves nothing.
type handle struct {
	fd int // O_PATH descriptor of the root
	// openat2: the kernel has openat2(2) (Linux 5.6) and no seccomp
	// filter refuses it.
	openat2 bool
}

func openRoot(dir string) (handle, error) {
	fd, err := ignoringEINTR(func() (int, error) {
		return unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return handle{fd: -1}, fmt.Errorf("open workspace %q: %w", dir, err)
	}
	return handle{fd: fd, openat2: probeOpenat2(fd)}, nil
}

// probeOpenat2 tells whether openat2 works here. ENOSYS (before Linux 5.6)
// and the EPERM of a seccomp filter that predates it both mean no; the
// walk then steps with openat(O_NOFOLLOW), which confines it as well.
func probeOpenat2(root int) bool {
	fd, err := unix.Openat2(root, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

func (h *handle) close() error {
	if h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	return err
}

// step opens one name in dir without following it: a symbolic link comes
// back as the link itself (for readlinkat), never as its target. name is
// a single component, never "." or "..". Where openat2 exists the kernel
// also enforces that: RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS refuse any
// step out of dir or through a link, should a bug here ever hand it a
// path, and RESOLVE_NO_MAGICLINKS refuses /proc's magic links outright.
func (h *handle) step(dir int, name string) (int, error) {
	if h.openat2 {
		how := &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		}
		fd, err := ignoringEINTR(func() (int, error) { return unix.Openat2(dir, name, how) })
		if errors.Is(err, unix.EXDEV) {
			// RESOLVE_BENEATH's answer to a step out of dir.
			return -1, errOutside
		}
		return fd, err
	}
	return ignoringEINTR(func() (int, error) {
		return unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
}

// errOutside is a walk's report of a step out of the workspace; the
// operation turns it into a KindOutside Error.
var errOutside = errors.New("outside the workspace")

// ignoringEINTR retries a call interrupted by a signal, which network
// and FUSE file systems let through.
func ignoringEINTR(call func() (int, error)) (int, error) {
	for {
		fd, err := call()
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// retryEINTR is ignoringEINTR for calls that return only an error.
func retryEINTR(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// fstatFd describes an open descriptor (O_PATH ones included).
func fstatFd(fd int) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := retryEINTR(func() error { return unix.Fstat(fd, &st) })
	return st, err
}

// lstatAt describes name in dir without following it.
func lstatAt(dir int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := retryEINTR(func() error { return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	return st, err
}

// readlinkAt reads a link's target; name "" reads the link an O_PATH
// descriptor fd refers to.
func readlinkAt(fd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > unix.PathMax*2 {
			return "", unix.ENAMETOOLONG
		}
	}
}

func idOf(st *unix.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} }

func isDir(st *unix.Stat_t) bool     { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isRegular(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }
func isSymlink(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFLNK }

// entryType names a file type for Entry and for messages.
func entryType(st *unix.Stat_t) EntryType {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return TypeFile
	case unix.S_IFDIR:
		return TypeDir
	case unix.S_IFLNK:
		return TypeSymlink
	}
	return TypeOther
}

// fileFromFd wraps a descriptor for the os package's directory reading and
// copying; the file owns fd from then on.
func fileFromFd(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }
