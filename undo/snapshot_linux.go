package undo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgebox/forgebox/rmtree"
	"golang.org/x/sys/unix"
)

// Snapshot is the record of a change forgebox makes to workspace files
// itself, outside any sandbox (the MCP file tools): the files are kept
// before the change, by a hard link to the inode the change replaces (or a
// copy where the kernel refuses the link), and the record is written once
// the change is made. The change must replace files whole (a new inode
// renamed over the old one, as files.Write does): one that wrote the old
// inode in place would change the kept copy too.
type Snapshot struct {
	store   Store
	ws      string
	dir     string
	command string
	start   time.Time
	lock    *wsLock
	host    *hostDirs
	rels    []string
	before  map[string]*Node
}

// Snapshot keeps the files at rels (slash-separated, relative to the
// workspace ws, no symbolic link on the way) before a change. Until Done
// or Discard it holds the workspace's lock: runs' commits and undos wait.
func (s Store) Snapshot(ws, command string, rels []string, now time.Time) (*Snapshot, error) {
	if err := s.Check(ws); err != nil {
		return nil, err
	}
	d := s.dirOf(ws)
	l, err := lockWorkspace(d)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	sn := &Snapshot{store: s, ws: ws, command: command, start: now, lock: l, before: map[string]*Node{}}
	fail := func(err error) (*Snapshot, error) {
		sn.Discard()
		return nil, unavailable("keep the files before the change: %v", err)
	}
	if sn.dir, err = os.MkdirTemp(d, tmpPrefix); err != nil {
		return fail(err)
	}
	if sn.host, err = openHostDirs(ws); err != nil {
		return fail(err)
	}
	for _, rel := range rels {
		rel = path.Clean(rel)
		if rel == "." || !filepath.IsLocal(rel) {
			return fail(fmt.Errorf("%q is not a path inside the workspace", rel))
		}
		// A directory on the way that is missing will be made by the
		// change: the undo removes the topmost one, with what it holds.
		if top, err := sn.missingTop(rel); err != nil {
			return fail(err)
		} else if top != "" {
			sn.rels = append(sn.rels, top)
			continue
		}
		h, err := sn.host.path(rel)
		if err != nil {
			return fail(err)
		}
		sn.rels = append(sn.rels, rel)
		n, err := nodeOf(h)
		if errors.Is(err, fs.ErrNotExist) {
			continue // created by the change: the undo removes it
		}
		if err != nil {
			return fail(err)
		}
		if n.Type != "file" {
			continue // the change refuses anything but a regular file
		}
		dst := filepath.Join(sn.dir, "before", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return fail(err)
		}
		if err := keepFile(h, dst); err != nil {
			return fail(err)
		}
		sn.before[rel] = n
	}
	return sn, nil
}

// missingTop is the topmost directory on the way to rel that does not
// exist, or "".
func (sn *Snapshot) missingTop(rel string) (string, error) {
	dir := path.Dir(rel)
	if dir == "." {
		return "", nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		h, err := sn.host.path(p)
		if err != nil {
			return "", err
		}
		if _, err := nodeOf(h); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", nil
}

// maxCopy bounds the copy keepFile makes where it cannot link: a larger
// file goes without undo rather than filling the store past its bound in
// one write.
const maxCopy = 64 << 20

// keepFile links the file at h to dst, or copies it (content and mode;
// the owner becomes the caller) where a hard link is refused (another
// owner's file under fs.protected_hardlinks), up to maxCopy.
func keepFile(h, dst string) error {
	lerr := unix.Linkat(unix.AT_FDCWD, h, unix.AT_FDCWD, dst, 0)
	if lerr == nil {
		return nil
	}
	in, err := os.OpenFile(h, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file", h)
	}
	if st.Size() > maxCopy {
		return fmt.Errorf("the file cannot be hard-linked into the record (%v), and at %s it is over the %s undo copies", lerr, Bytes(st.Size()), Bytes(maxCopy))
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Done writes the record of the change made since Snapshot: each path
// that differs now. A change that altered nothing leaves no record (the
// manifest returned has no ID).
func (sn *Snapshot) Done(end time.Time) (*Manifest, error) {
	defer sn.Discard()
	m := &Manifest{Kind: KindRun, Workspace: sn.ws, Command: sn.command, Start: sn.start, End: end}
	for _, rel := range sn.rels {
		h, err := sn.host.path(rel)
		if err != nil {
			return nil, err
		}
		after, err := nodeOf(h)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		before := sn.before[rel]
		if before == nil && after == nil || before != nil && after != nil && same(before, after) {
			continue
		}
		e := Entry{Path: rel, Op: OpModified, Before: before, After: after}
		switch {
		case before == nil:
			e.Op = OpCreated
		case after == nil:
			e.Op = OpDeleted
		}
		if before != nil {
			m.Kept += before.Size
		}
		m.Entries = append(m.Entries, e)
		if before == nil && after != nil && after.Type == "dir" {
			// A directory the change made: what it holds is listed, as a
			// run's new directory is (Entry.Sub).
			m.Entries = append(m.Entries, held(h, rel)...)
		}
	}
	m.summarize()
	if len(m.Entries) == 0 {
		return &Manifest{Workspace: sn.ws, Start: sn.start, End: end}, nil
	}
	for i := 0; ; i++ {
		m.ID = newID(end.Add(time.Duration(i) * time.Microsecond))
		m.dir = filepath.Join(filepath.Dir(sn.dir), m.ID)
		err := unix.Renameat2(unix.AT_FDCWD, sn.dir, unix.AT_FDCWD, m.dir, unix.RENAME_NOREPLACE)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return nil, fmt.Errorf("write undo record: %w", err)
		}
	}
	sn.dir = ""
	if err := m.write(); err != nil {
		return m, err
	}
	return m, nil
}

// Discard drops the snapshot (the change failed) and releases the lock.
func (sn *Snapshot) Discard() {
	if sn.dir != "" {
		rmtree.All(sn.dir)
		sn.dir = ""
	}
	if sn.host != nil {
		sn.host.close()
		sn.host = nil
	}
	if sn.lock != nil {
		sn.lock.unlock()
		sn.lock = nil
	}
}
