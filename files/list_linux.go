package files

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func (f *FS) list(p string) (Listing, error) {
	const op = "list"
	l, err := f.existing(op, p, true)
	if err != nil {
		return Listing{}, err
	}
	defer l.close(&f.h)
	path := l.path()
	if !isDir(&l.st) {
		return Listing{}, refusal(op, p, KindNotDir, "%s is a %s, not a directory; read it instead", join(path), entryType(&l.st))
	}
	g := f.guards(false)
	if _, ok := g.hides(path, false); ok {
		return Listing{}, hiddenError(op, p, path)
	}
	// l.self is O_PATH, which cannot be read: reopen the same directory.
	fd, err := ignoringEINTR(func() (int, error) {
		return unix.Openat(l.self, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return Listing{}, osError(op, p, err)
	}
	dir := fileFromFd(fd, join(path))
	defer dir.Close()
	names, truncated, err := readNames(dir, f.maxList)
	if err != nil {
		return Listing{}, osError(op, p, err)
	}
	entries := make([]Entry, 0, len(names))
	for _, name := range names {
		e, err := describe(fd, name, g.hidesName(path, name))
		if errors.Is(err, unix.ENOENT) {
			continue // removed since the directory was read
		}
		if err != nil {
			return Listing{}, osError(op, p, err)
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return Listing{Path: join(path), Entries: entries, Truncated: truncated}, nil
}

// readNames reads up to max names of an open directory, and whether there
// were more.
func readNames(dir *os.File, max int) ([]string, bool, error) {
	var names []string
	for len(names) <= max {
		batch, err := dir.Readdirnames(1024)
		names = append(names, batch...)
		if errors.Is(err, io.EOF) || err == nil && len(batch) == 0 {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	if len(names) > max {
		return names[:max], true, nil
	}
	return names, false, nil
}

// describe makes the Entry of name in directory dir, without following it.
// A hidden name shows only its name and type.
func describe(dir int, name string, hidden bool) (Entry, error) {
	st, err := lstatAt(dir, name)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Name: name, Type: entryType(&st)}
	if hidden {
		e.Hidden = true
		return e, nil
	}
	e.Size = st.Size
	e.Mode = fmt.Sprintf("%04o", st.Mode&0o7777)
	e.ModTime = time.Unix(st.Mtim.Unix())
	if e.Type == TypeSymlink {
		if e.Link, err = readlinkAt(dir, name); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}
