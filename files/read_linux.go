package files

import (
	"errors"

	"golang.org/x/sys/unix"
)

func (f *FS) read(p string, offset, limit int64) (ReadResult, error) {
	const op = "read"
	if offset < 0 || limit < 0 {
		return ReadResult{}, refusal(op, p, KindInvalid, "offset and limit must not be negative")
	}
	if limit == 0 || limit > f.maxRead {
		limit = f.maxRead
	}
	l, err := f.existing(op, p, true)
	if err != nil {
		return ReadResult{}, err
	}
	defer l.close(&f.h)
	path := l.path()
	g := f.guards(true)
	switch {
	case isDir(&l.st):
		return ReadResult{}, refusal(op, p, KindIsDir, "%s is a directory; list it instead", join(path))
	case hidden(g, path):
		return ReadResult{}, hiddenError(op, p, path)
	case !isRegular(&l.st):
		return ReadResult{}, refusal(op, p, KindSpecial, "%s is a %s; only regular files can be read", join(path), kindName(&l.st))
	}
	fd, st, err := openRegular(l.parent, l.name, &l.st)
	if err != nil {
		return ReadResult{}, osError(op, p, err)
	}
	defer unix.Close(fd)
	if g.hiddenFile(idOf(&st)) {
		return ReadResult{}, refusal(op, p, KindHidden, "%s is a hard link to a file that holds secrets", join(path))
	}
	buf := make([]byte, max(0, min(limit, st.Size-offset)))
	n, err := preadFull(fd, buf, offset)
	if err != nil {
		return ReadResult{}, osError(op, p, err)
	}
	c := decode(buf[:n], offset, offset+int64(n) >= st.Size)
	return ReadResult{
		Path:    join(path),
		Content: c.content,
		Offset:  offset + int64(c.skip),
		Length:  int64(c.used - c.skip),
		Size:    st.Size,
		EOF:     offset+int64(c.used) >= st.Size,
		Binary:  c.binary,
	}, nil
}

func hidden(g *guards, path []string) bool {
	_, ok := g.hides(path, false)
	return ok
}

// errChanged: the name no longer holds the file the walk found.
var errChanged = errors.New("the file changed during the operation; try again")

// openRegular opens name in dir for reading, and only if it is still the
// regular file want describes: O_NONBLOCK keeps a fifo swapped in from
// blocking the open, and the identity check refuses whatever was swapped.
func openRegular(dir int, name string, want *unix.Stat_t) (int, unix.Stat_t, error) {
	fd, err := ignoringEINTR(func() (int, error) {
		return unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, unix.Stat_t{}, err
	}
	st, err := fstatFd(fd)
	if err == nil && (!isRegular(&st) || idOf(&st) != idOf(want)) {
		err = errChanged
	}
	if err != nil {
		unix.Close(fd)
		return -1, unix.Stat_t{}, err
	}
	return fd, st, nil
}

// preadFull reads into buf from offset until buf is full or the file ends.
func preadFull(fd int, buf []byte, offset int64) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := unix.Pread(fd, buf[n:], offset+int64(n))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// kindName names a special file for messages.
func kindName(st *unix.Stat_t) string {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	case unix.S_IFLNK:
		return "symbolic link"
	case unix.S_IFDIR:
		return "directory"
	}
	return "file"
}
