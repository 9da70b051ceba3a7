package undo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

func sameFS(a, b string) (bool, error) {
	var sa, sb unix.Stat_t
	if err := unix.Stat(a, &sa); err != nil {
		return false, fmt.Errorf("stat %s: %w", a, err)
	}
	if err := unix.Stat(b, &sb); err != nil {
		return false, fmt.Errorf("stat %s: %w", b, err)
	}
	return sa.Dev == sb.Dev, nil
}

// wsLock serializes commits and undos of one workspace's records.
type wsLock struct{ f *os.File }

func lockWorkspace(dir string) (*wsLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("undo store: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("undo store: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock undo store: %w", err)
	}
	return &wsLock{f}, nil
}

func (l *wsLock) unlock() { l.f.Close() }

// lockRoots takes the locks of the records of every root a record
// touches (its workspace's and its --rw paths'), in one order for every
// caller, so that two workspaces sharing a --rw path never commit or undo
// there at once, and never wait for each other in a circle.
func (s Store) lockRoots(ws string, roots []string) (*rootLocks, error) {
	dirs := []string{s.dirOf(ws)}
	for _, r := range roots {
		if r != "" {
			dirs = append(dirs, s.dirOf(r))
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	ls := &rootLocks{}
	for _, d := range dirs {
		l, err := lockWorkspace(d)
		if err != nil {
			ls.unlock()
			return nil, err
		}
		ls.held = append(ls.held, l)
	}
	return ls, nil
}

type rootLocks struct{ held []*wsLock }

func (ls *rootLocks) unlock() {
	for _, l := range ls.held {
		l.unlock()
	}
}

// nodeOf describes the entry at p, without following a symlink.
func nodeOf(p string) (*Node, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	n := &Node{Mode: st.Mode & 0o7777, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		n.Type = "file"
	case unix.S_IFDIR:
		n.Type, n.Size, n.Mtime, n.Ctime, n.Ino = "dir", 0, 0, 0, 0
	case unix.S_IFLNK:
		n.Type = "symlink"
		t, err := os.Readlink(p)
		if err != nil {
			return nil, err
		}
		n.Target = t
	default:
		n.Type = "other"
	}
	return n, nil
}

// same reports whether the entry is still what was recorded. A directory
// is compared by type and mode: what it holds is listed on its own.
func same(a, b *Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Type == "dir" || b.Type == "dir" {
		return a.Type == b.Type && a.Mode == b.Mode
	}
	// Not ctime: every rename sets it (an undo's own, a hard link's
	// partner renamed after it), so it would see changes where none are.
	// The inode, size and mtime (in ns) catch a replaced or rewritten
	// file, the mode a chmod.
	return a.Type == b.Type && a.Mode == b.Mode && a.Size == b.Size && a.Mtime == b.Mtime && a.Ino == b.Ino && a.Target == b.Target
}

// isWhiteout: overlay marks a deleted name with a character device 0/0.
func isWhiteout(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0
}

const overlayXattr = "user.overlay."

// isOpaque: overlay marks a directory that hides the lower one's entries
// (removed and made again) with user.overlay.opaque (userxattr mounts).
func isOpaque(p string) bool {
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(p, overlayXattr+"opaque", buf)
	return err == nil && n > 0 && buf[0] == 'y'
}

// stripOverlay removes overlay's own attributes (origin, impure, opaque
// ...) from an entry of the upper layer before it joins the workspace:
// left there, a later overlay would read them on its lower layer.
func stripOverlay(p string) error {
	size, err := unix.Llistxattr(p, nil)
	if err != nil || size == 0 {
		return nil // symlinks and file systems without xattrs have none
	}
	buf := make([]byte, size)
	size, err = unix.Llistxattr(p, buf)
	if err != nil {
		return nil
	}
	for _, name := range strings.Split(string(buf[:size]), "\x00") {
		if strings.HasPrefix(name, overlayXattr) {
			if err := unix.Lremovexattr(p, name); err != nil && !errors.Is(err, unix.ENODATA) {
				return fmt.Errorf("remove %s from %s: %w", name, p, err)
			}
		}
	}
	return nil
}

// move renames from to to, making to's parent directories first.
func move(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	return os.Rename(from, to)
}
