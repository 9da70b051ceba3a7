package undo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Conflict is a path the record's run changed that changed again since:
// an undo would overwrite it.
type Conflict struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	// Kept: a cache git rewrites by itself (a repository's .git/index,
	// which any git status refreshes): the undo overwrites it without
	// --force, and what stands there is kept in the undo's record.
	Kept bool `json:"kept,omitempty"`
}

func conflict(p, why string) Conflict {
	return Conflict{Path: p, Why: why, Kept: p == ".git/index" || strings.HasSuffix(p, "/.git/index")}
}

// Blocking are the conflicts an undo refuses without --force.
func Blocking(cf []Conflict) []Conflict {
	var out []Conflict
	for _, c := range cf {
		if !c.Kept {
			out = append(out, c)
		}
	}
	return out
}

// Change is what an undo does to one path.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // "remove", "restore", "mode"
}

// Plan is what undoing a record would do, and what it would overwrite.
func (s Store) Plan(m *Manifest) ([]Change, []Conflict, error) {
	if m.UndoneBy != "" {
		return nil, nil, fmt.Errorf("record %s is already undone (by %s)", m.ID, m.UndoneBy)
	}
	type rootPath struct {
		root int
		path string
	}
	subs := map[rootPath]*Node{}
	for _, e := range m.Entries {
		if e.Sub {
			subs[rootPath{e.Root, e.Path}] = e.After
		}
	}
	var ch []Change
	var cf []Conflict
	for i := len(m.Entries) - 1; i >= 0; i-- {
		e := m.Entries[i]
		if e.Sub {
			continue
		}
		shown := m.Shown(e)
		h := filepath.Join(m.RootPath(e.Root), filepath.FromSlash(e.Path))
		cur, err := nodeOf(h)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if e.Before != nil && e.Op != OpMode {
			if _, err := os.Lstat(filepath.Join(partDir(m.dir, e.Root), "before", filepath.FromSlash(e.Path))); err != nil {
				return nil, nil, fmt.Errorf("record %s no longer holds %s: %w", m.ID, shown, err)
			}
		}
		switch {
		case e.After == nil && cur != nil:
			cf = append(cf, conflict(shown, "the run deleted it; it exists again"))
		case e.After != nil && cur == nil:
			cf = append(cf, conflict(shown, "the run left it; it is gone"))
		case e.After != nil && !same(cur, e.After):
			cf = append(cf, conflict(shown, "changed since the run"))
		case e.After != nil && e.After.Type == "dir" && e.Op != OpMode:
			cf = append(cf, treeConflicts(h, e.Path, func(p string) (*Node, bool) {
				n, ok := subs[rootPath{e.Root, p}]
				return n, ok
			}, func(p string) string { return m.Shown(Entry{Root: e.Root, Path: p}) })...)
			for k := range subs {
				if k.root == e.Root && strings.HasPrefix(k.path, e.Path+"/") {
					if _, err := os.Lstat(filepath.Join(m.RootPath(e.Root), filepath.FromSlash(k.path))); err != nil {
						cf = append(cf, conflict(m.Shown(Entry{Root: e.Root, Path: k.path}), "the run left it; it is gone"))
					}
				}
			}
		}
		switch {
		case e.Op == OpMode:
			ch = append(ch, Change{shown, "mode"})
		case e.Before == nil:
			ch = append(ch, Change{shown, "remove"})
		default:
			ch = append(ch, Change{shown, "restore"})
		}
	}
	return ch, cf, nil
}

// treeConflicts compares a directory the run created, h (rel in its
// root), with what it left there (sub): what is there that the run did
// not leave, or changed.
func treeConflicts(h, rel string, sub func(string) (*Node, bool), shown func(string) string) []Conflict {
	var cf []Conflict
	filepath.WalkDir(h, func(q string, d fs.DirEntry, err error) error {
		if err != nil || q == h {
			return nil
		}
		r, _ := filepath.Rel(h, q)
		p := path.Join(rel, filepath.ToSlash(r))
		want, ok := sub(p)
		if !ok {
			cf = append(cf, conflict(shown(p), "created since the run"))
			return nil
		}
		if cur, err := nodeOf(q); err != nil || !same(cur, want) {
			cf = append(cf, conflict(shown(p), "changed since the run"))
		}
		return nil
	})
	return cf
}

// ConflictError is an undo refused because paths changed since the run.
type ConflictError struct {
	ID        string
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "undo %s would overwrite %d path(s) changed after that run:", e.ID, len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Conflicts)-20)
			break
		}
		fmt.Fprintf(&b, "\n  %s (%s)", c.Path, c.Why)
	}
	return b.String()
}

// Undo takes record m back: the kept entries return to the workspace, and
// what stands in their place is moved into a new record, which Undo
// returns (undoing it redoes m). With conflicts it refuses
// (*ConflictError) unless force; forced, what it overwrites is in the new
// record too.
func (s Store) Undo(m *Manifest, force bool, now time.Time) (*Manifest, error) {
	l, err := s.lockRoots(m.Workspace, m.Roots)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	// Read again under the lock: another undo may have taken it back.
	if m, err = readManifest(m.dir); err != nil {
		return nil, err
	}
	_, cf, err := s.Plan(m)
	if err != nil {
		return nil, err
	}
	if b := Blocking(cf); len(b) > 0 && !force {
		return nil, &ConflictError{ID: m.ID, Conflicts: b}
	}
	kind := KindUndo
	if m.Kind == KindUndo {
		kind = KindRun // undoing an undo redoes the run
	}
	u := &Manifest{ID: newID(now), Kind: kind, Workspace: m.Workspace, Roots: m.Roots, Command: "forgebox undo " + m.ID, Start: now, UndoOf: m.ID}
	u.dir = filepath.Join(filepath.Dir(m.dir), u.ID)
	if err := os.Mkdir(u.dir, 0o700); err != nil {
		return nil, err
	}
	// One committer per root, made as its first entry comes: what stands
	// at a path goes to that root's part of the new record.
	roots := map[int]*committer{}
	defer func() {
		for _, c := range roots {
			if c.host != nil {
				c.host.close()
			}
		}
	}()
	var uerr error
	for i := len(m.Entries) - 1; i >= 0 && uerr == nil; i-- {
		e := m.Entries[i]
		if e.Sub {
			continue
		}
		c := roots[e.Root]
		if c == nil {
			c = &committer{ws: m.RootPath(e.Root), before: filepath.Join(partDir(u.dir, e.Root), "before"), start: now.UnixNano(), m: u}
			roots[e.Root] = c
			if c.host, uerr = openHostDirs(c.ws); uerr != nil {
				break
			}
		}
		first := len(u.Entries)
		uerr = c.restore(e, filepath.Join(partDir(m.dir, e.Root), "before"))
		for k := first; k < len(u.Entries); k++ {
			u.Entries[k].Root = e.Root
		}
	}
	for _, c := range roots {
		u.Kept += c.kept
	}
	u.End = time.Now()
	u.summarize()
	if uerr != nil {
		u.Warnings = append(u.Warnings, fmt.Sprintf("the undo stopped: %v", uerr))
	}
	if err := u.write(); err != nil {
		return u, err
	}
	m.UndoneBy = u.ID
	if err := m.write(); err != nil {
		return u, err
	}
	return u, uerr
}

// restore takes one entry back, keeping what stands there in the new
// record.
func (c *committer) restore(e Entry, kept string) error {
	h, err := c.host.path(e.Path)
	if err != nil {
		return err
	}
	cur, err := nodeOf(h)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if e.Op == OpMode {
		if cur == nil {
			return nil
		}
		if err := os.Chmod(h, os.FileMode(e.Before.Mode&0o777)|modeBits(e.Before.Mode)); err != nil {
			return err
		}
		after, err := nodeOf(h)
		if err != nil {
			return err
		}
		c.m.Entries = append(c.m.Entries, Entry{Path: e.Path, Op: OpMode, Before: cur, After: after})
		return nil
	}
	ne := Entry{Path: e.Path, Op: OpDeleted}
	if cur != nil {
		if err := c.displace(&ne, h, cur); err != nil {
			return err
		}
	}
	if e.Before == nil {
		if cur != nil {
			c.m.Entries = append(c.m.Entries, ne)
		}
		return nil
	}
	if err := move(filepath.Join(kept, filepath.FromSlash(e.Path)), h); err != nil {
		return err
	}
	after, err := nodeOf(h)
	if err != nil {
		return err
	}
	ne.After, ne.Op = after, OpModified
	if cur == nil {
		ne.Op = OpCreated
	}
	c.m.Entries = append(c.m.Entries, ne)
	if after.Type == "dir" {
		c.m.Entries = append(c.m.Entries, held(h, e.Path)...)
	}
	return nil
}

// held lists what a directory put in place at h (rel in its root) holds,
// as entries that move with it (Entry.Sub).
func held(h, rel string) []Entry {
	var out []Entry
	filepath.WalkDir(h, func(q string, d fs.DirEntry, err error) error {
		if err != nil || q == h {
			return nil
		}
		r, _ := filepath.Rel(h, q)
		if n, err := nodeOf(q); err == nil {
			out = append(out, Entry{Path: path.Join(rel, filepath.ToSlash(r)), Op: OpCreated, Sub: true, After: n})
		}
		return nil
	})
	return out
}
