package undo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/rmtree"
	"golang.org/x/sys/unix"
)

// Pending is a run's record while the run goes on: Upper and Work are the
// overlay's layers, on the workspace's file system.
type Pending struct {
	store     Store
	ws        string
	roots     []string // the --rw paths kept too (Manifest.Roots)
	wsDropped bool     // the workspace's overlay was refused (Drop)
	dir       string
	id        string
	command   string
	start     time.Time
	held      *os.File // the pending mark, locked while the run lives
	empty     bool     // committed with nothing to keep: Release removes it
	Recovered []string // records committed for runs whose forgebox died
}

// Upper is the workspace overlay's upper directory; Dir holds it and the
// work directory ("work").
func (p *Pending) Upper() string { return filepath.Join(p.dir, "upper") }

// Dir is the record's directory: the sandbox clones it and mounts the
// workspace's overlay from Dir/upper and Dir/work.
func (p *Pending) Dir() string { return p.dir }

// Roots are the --rw paths the record keeps, as Begin took them.
func (p *Pending) Roots() []string { return p.roots }

// RootDir is the part of the record for --rw path Roots()[i] (its
// overlay's upper/ and work/), as Dir is for the workspace.
func (p *Pending) RootDir(i int) string { return partDir(p.dir, i+1) }

// Drop gives up the record's part for root (the workspace or one of
// Roots), whose overlay the kernel refused: the command wrote it itself.
// It reports whether the record keeps anything still; if not, the caller
// discards it.
func (p *Pending) Drop(root string) bool {
	if root == p.ws {
		p.wsDropped = true
	} else if i := slices.Index(p.roots, root); i >= 0 {
		// The part keeps its index (and its empty directory): Commit
		// skips a root that is "".
		p.roots[i] = ""
	}
	if !p.wsDropped {
		return true
	}
	return slices.ContainsFunc(p.roots, func(r string) bool { return r != "" })
}

// Kept are the roots whose changes the record holds: the workspace and
// the --rw paths, less those dropped. Only through these did the command
// write them.
func (p *Pending) Kept() []string {
	var out []string
	if !p.wsDropped {
		out = append(out, p.ws)
	}
	for _, r := range p.roots {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

const rootsName = "roots" // the record's --rw paths, NUL-separated, while it is pending

// ID is the record's id.
func (p *Pending) ID() string { return p.id }

const pendingName = "pending"

// AwaitsCommit reports whether the record at dir (Pending.Dir) holds a
// run's changes not yet carried into its roots: its run is going on, or
// its forgebox died and no run of its workspace has carried it in yet.
func AwaitsCommit(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, pendingName))
	return err == nil
}

// Begin makes the record of a run in workspace ws (canonical), keeping the
// --rw paths roots too (canonical directories that passed CheckRoot).
// Each upper directory gets its root's mode and owner: the overlay's root
// shows the upper directory's. Records of runs whose forgebox died mid-run
// are committed first (their changes are only in their upper layers).
func (s Store) Begin(ws string, roots []string, command string, now time.Time) (*Pending, error) {
	if err := s.Check(ws); err != nil {
		return nil, err
	}
	all := append([]string{ws}, roots...)
	stats := make([]unix.Stat_t, len(all))
	for i, r := range all {
		if err := unix.Stat(r, &stats[i]); err != nil {
			return nil, unavailable("stat %s: %v", r, err)
		}
	}
	d := s.dirOf(ws)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, unavailable("%v", err)
	}
	p := &Pending{store: s, ws: ws, roots: slices.Clone(roots), command: command, start: now}
	p.Recovered = s.recover(ws)
	// Made under a temporary name and renamed once its pending mark is
	// locked: another run's recover never sees it unlocked.
	tmp, err := os.MkdirTemp(d, tmpPrefix)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	p.dir = tmp
	fail := func(err error) (*Pending, error) {
		p.Discard()
		return nil, unavailable("prepare the run's undo record: %v", err)
	}
	f, err := os.OpenFile(filepath.Join(tmp, pendingName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fail(err)
	}
	p.held = f
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	fmt.Fprintf(f, "%s\n%s\n", ws, command)
	if len(roots) > 0 {
		// Read by recover: which root each part belongs to.
		if err := os.WriteFile(filepath.Join(tmp, rootsName), []byte(strings.Join(roots, "\x00")), 0o600); err != nil {
			return fail(err)
		}
	}
	for i := range all {
		for _, sub := range []string{"upper", "work"} {
			if err := os.MkdirAll(filepath.Join(partDir(tmp, i), sub), 0o700); err != nil {
				return fail(err)
			}
		}
	}
	for i := 0; ; i++ {
		p.id = newID(now.Add(time.Duration(i) * time.Microsecond))
		p.dir = filepath.Join(d, p.id)
		err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, p.dir, unix.RENAME_NOREPLACE)
		if err == nil {
			break
		}
		p.dir = tmp
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return fail(err)
		}
	}
	for i := range all {
		up, st := filepath.Join(partDir(p.dir, i), "upper"), &stats[i]
		if err := os.Chmod(up, os.FileMode(st.Mode&0o777)|modeBits(st.Mode)); err != nil {
			return fail(err)
		}
		if os.Getuid() == 0 && (st.Uid != 0 || st.Gid != 0) {
			if err := os.Lchown(up, int(st.Uid), int(st.Gid)); err != nil {
				return fail(err)
			}
		}
	}
	return p, nil
}

func modeBits(m uint32) os.FileMode {
	var f os.FileMode
	if m&unix.S_ISUID != 0 {
		f |= os.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		f |= os.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		f |= os.ModeSticky
	}
	return f
}

// Release removes the record of a run that changed nothing, once
// committed; it does nothing otherwise.
func (p *Pending) Release() {
	if p.empty {
		rmtree.All(p.dir)
		p.empty = false
	}
}

// Discard drops the record unused (the overlay was not mounted).
func (p *Pending) Discard() {
	rmtree.All(p.dir)
	if p.held != nil {
		p.held.Close()
		p.held = nil
	}
}

// recover commits the records whose forgebox died before committing them:
// a pending mark nobody holds locked.
func (s Store) recover(ws string) []string {
	d := s.dirOf(ws)
	names, _ := readNames(d)
	var out []string
	for _, n := range names {
		dir := filepath.Join(d, n)
		if n == lockName || strings.HasPrefix(n, tmpPrefix) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, manifestName)); err == nil {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, pendingName), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			f.Close() // a run going on
			continue
		}
		st, _ := f.Stat()
		p := &Pending{store: s, ws: ws, dir: dir, id: n, start: st.ModTime(), held: f, command: "(a run whose forgebox ended before it finished)"}
		if b, err := os.ReadFile(filepath.Join(dir, rootsName)); err == nil {
			p.roots = strings.Split(string(b), "\x00")
		}
		if m, err := p.Commit(time.Now()); err == nil && m.ID != "" {
			out = append(out, m.ID)
		} else {
			p.Release()
			f.Close()
		}
	}
	return out
}

// Commit carries the run's upper layer into the workspace, keeping what it
// replaces, and writes the record. Called once the command's tree is dead
// (nothing holds the overlay any more). A run that changed nothing leaves
// no record: the manifest returned then has no ID.
func (p *Pending) Commit(end time.Time) (*Manifest, error) {
	defer func() {
		if p.held != nil {
			p.held.Close()
			p.held = nil
		}
	}()
	l, err := p.store.lockRoots(p.ws, p.roots)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	m := &Manifest{ID: p.id, Kind: KindRun, Workspace: p.ws, Command: p.command, Start: p.start, End: end, dir: p.dir}
	// Each root is carried in on its own: an error in one leaves that
	// root's changes in its upper layer (which the record keeps) and the
	// others go on. A dropped root stays in Roots as "", so that every
	// part keeps its index.
	m.Roots = slices.Clone(p.roots)
	var errs []error
	carried := make([]bool, len(p.roots)+1)
	for i, root := range append([]string{p.ws}, p.roots...) {
		if root == "" || i == 0 && p.wsDropped {
			continue
		}
		first := len(m.Entries)
		c := committer{ws: root, upper: filepath.Join(partDir(p.dir, i), "upper"), start: p.start.UnixNano(), m: m}
		host, err := openHostDirs(root)
		if err == nil {
			c.host = host
			err = c.root()
			host.close()
		}
		for k := first; k < len(m.Entries); k++ {
			m.Entries[k].Root = i
		}
		m.Kept += c.kept
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w; what was not carried in is in %s", root, err, c.upper))
			continue
		}
		carried[i] = true
	}
	cerr := errors.Join(errs...)
	m.summarize()
	if len(m.Entries) == 0 && cerr == nil {
		// Removed by Release, which the caller may run beside its other
		// work (a few unlinks cost ~2 ms here). Left behind, the next
		// run's recover finds it empty and removes it.
		p.empty = true
		return &Manifest{Workspace: p.ws, Start: p.start, End: end}, nil
	}
	if cerr != nil {
		m.Warnings = append(m.Warnings, fmt.Sprintf("the commit stopped: %v", cerr))
	}
	for i, ok := range carried {
		if !ok {
			continue
		}
		// What the upper layer holds now is what the run replaced, at
		// the same paths: the part's before/.
		part := partDir(p.dir, i)
		if err := os.Rename(filepath.Join(part, "upper"), filepath.Join(part, "before")); err != nil {
			cerr = errors.Join(cerr, err)
		}
		rmtree.All(filepath.Join(part, "work"))
	}
	if err := m.write(); err != nil {
		return m, err
	}
	os.Remove(filepath.Join(p.dir, pendingName))
	os.Remove(filepath.Join(p.dir, rootsName))
	return m, cerr
}

// committer walks one upper layer.
type committer struct {
	ws, upper, before string
	host              *hostDirs
	start             int64
	m                 *Manifest
	kept              int64
}

func (c *committer) root() error {
	// The workspace's own mode, if the run changed it.
	h, err := c.host.path("")
	if err != nil {
		return err
	}
	if err := c.mode("", h, c.upper); err != nil {
		return err
	}
	return c.dir("")
}

func (c *committer) dir(rel string) error {
	names, err := readNames(filepath.Join(c.upper, rel))
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := c.entry(path.Join(rel, n)); err != nil {
			return err
		}
	}
	return nil
}

func (c *committer) mode(rel, h, u string) error {
	hn, err := nodeOf(h)
	if err != nil {
		return err
	}
	un, err := nodeOf(u)
	if err != nil {
		return err
	}
	if hn.Mode == un.Mode {
		return nil
	}
	if err := os.Chmod(h, os.FileMode(un.Mode&0o777)|modeBits(un.Mode)); err != nil {
		return err
	}
	c.m.Entries = append(c.m.Entries, Entry{Path: rel, Op: OpMode, Before: hn, After: un})
	return nil
}

func (c *committer) entry(rel string) error {
	u := filepath.Join(c.upper, rel)
	h, err := c.host.path(rel)
	if err != nil {
		return err
	}
	var ust unix.Stat_t
	if err := unix.Lstat(u, &ust); err != nil {
		return err
	}
	hn, herr := nodeOf(h)
	if herr != nil && !errors.Is(herr, fs.ErrNotExist) {
		return herr
	}
	if isWhiteout(&ust) {
		// The workspace's entry takes the whiteout's place in the upper
		// layer, which becomes the record's before/.
		if err := os.Remove(u); err != nil || hn == nil {
			return err
		}
		e := Entry{Path: rel, Op: OpDeleted}
		if err := os.Rename(h, u); err != nil {
			return err
		}
		c.kept1(&e, hn, u)
		c.m.Entries = append(c.m.Entries, e)
		return nil
	}
	isDir := ust.Mode&unix.S_IFMT == unix.S_IFDIR
	if isDir && hn != nil && hn.Type == "dir" && !isOpaque(u) {
		// A directory the workspace has: only what changed in it moves.
		if err := c.mode(rel, h, u); err != nil {
			return err
		}
		return c.dir(rel)
	}
	e := Entry{Path: rel, Op: OpCreated}
	var subs []Entry
	if isDir {
		var err error
		if subs, err = c.prepareTree(rel, u); err != nil {
			return err
		}
	} else if err := stripOverlay(u); err != nil {
		return err
	}
	if hn == nil {
		if err := os.Rename(u, h); err != nil {
			return err
		}
	} else {
		// One atomic swap: the new entry in the workspace, the one it
		// replaces in the upper layer (the record's before/). The
		// workspace never lacks the path.
		if err := unix.Renameat2(unix.AT_FDCWD, u, unix.AT_FDCWD, h, unix.RENAME_EXCHANGE); err != nil {
			return &os.LinkError{Op: "exchange", Old: u, New: h, Err: err}
		}
		e.Op = OpModified
		c.kept1(&e, hn, u)
	}
	after, err := nodeOf(h)
	if err != nil {
		return err
	}
	e.After = after
	c.m.Entries = append(c.m.Entries, e)
	c.m.Entries = append(c.m.Entries, subs...)
	return nil
}

// kept1 notes what the record keeps of an entry, now at kept.
func (c *committer) kept1(e *Entry, hn *Node, kept string) {
	e.Before = hn
	e.HostChanged = hn.Ctime > c.start
	if hn.Type != "dir" {
		c.kept += hn.Size
		return
	}
	files, size := count(kept)
	hn.Files, c.kept = files, c.kept+size
}

// displace moves the workspace's entry into the record.
func (c *committer) displace(e *Entry, h string, hn *Node) error {
	e.Before = hn
	e.HostChanged = hn.Ctime > c.start
	dst := filepath.Join(c.before, e.Path)
	if err := move(h, dst); err != nil {
		return err
	}
	if hn.Type != "dir" {
		c.kept += hn.Size
		return nil
	}
	files, size := count(dst)
	hn.Files, c.kept = files, c.kept+size
	return nil
}

// prepareTree readies a directory the run created (or made anew) to move
// into the workspace whole: overlay's attributes go, stray whiteouts go,
// and what it holds is listed.
func (c *committer) prepareTree(rel, u string) ([]Entry, error) {
	var subs []Entry
	err := filepath.WalkDir(u, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(q, &st); err != nil {
			return err
		}
		if isWhiteout(&st) {
			return os.Remove(q)
		}
		if err := stripOverlay(q); err != nil {
			return err
		}
		if q == u {
			return nil
		}
		r, _ := filepath.Rel(c.upper, q)
		n, err := nodeOf(q)
		if err != nil {
			return err
		}
		subs = append(subs, Entry{Path: filepath.ToSlash(r), Op: OpCreated, Sub: true, After: n})
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Renamed into the workspace, the entries keep their inodes and
	// times: only ctime moves, for the directory itself.
	return subs, nil
}

// count is the files a kept directory holds and their size.
func count(dir string) (files int, size int64) {
	filepath.WalkDir(dir, func(q string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
			if i, err := d.Info(); err == nil {
				size += i.Size()
			}
		}
		return nil
	})
	return files, size
}
