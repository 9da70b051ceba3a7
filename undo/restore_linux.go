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
	subs := map[string]*Node{}
	for _, e := range m.Entries {
		if e.Sub {
			subs[e.Path] = e.After
		}
	}
	var ch []Change
	var cf []Conflict
	for i := len(m.Entries) - 1; i >= 0; i-- {
		e := m.Entries[i]
		if e.Sub {
			continue
		}
		h := filepath.Join(m.Workspace, filepath.FromSlash(e.Path))
		cur, err := nodeOf(h)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if e.Before != nil && e.Op != OpMode {
			if _, err := os.Lstat(filepath.Join(m.dir, "before", filepath.FromSlash(e.Path))); err != nil {
				return nil, nil, fmt.Errorf("record %s no longer holds %s: %w", m.ID, e.Path, err)
			}
		}
		switch {
		case e.After == nil && cur != nil:
			cf = append(cf, conflict(e.Path, "the run deleted it; it exists again"))
		case e.After != nil && cur == nil:
			cf = append(cf, conflict(e.Path, "the run left it; it is gone"))
		case e.After != nil && !same(cur, e.After):
			cf = append(cf, conflict(e.Path, "changed since the run"))
		case e.After != nil && e.After.Type == "dir" && e.Op != OpMode:
			cf = append(cf, treeConflicts(h, e.Path, subs)...)
		}
		switch {
		case e.Op == OpMode:
			ch = append(ch, Change{e.Path, "mode"})
		case e.Before == nil:
			ch = append(ch, Change{e.Path, "remove"})
		default:
			ch = append(ch, Change{e.Path, "restore"})
		}
	}
	return ch, cf, nil
}

// treeConflicts compares a directory the run created with what it left.
func treeConflicts(h, rel string, subs map[string]*Node) []Conflict {
	var cf []Conflict
	seen := map[string]bool{}
	filepath.WalkDir(h, func(q string, d fs.DirEntry, err error) error {
		if err != nil || q == h {
			return nil
		}
		r, _ := filepath.Rel(h, q)
		p := path.Join(rel, filepath.ToSlash(r))
		seen[p] = true
		want, ok := subs[p]
		if !ok {
			cf = append(cf, conflict(p, "created since the run"))
			return nil
		}
		if cur, err := nodeOf(q); err != nil || !same(cur, want) {
			cf = append(cf, conflict(p, "changed since the run"))
		}
		return nil
	})
	for p := range subs {
		if strings.HasPrefix(p, rel+"/") && !seen[p] {
			cf = append(cf, conflict(p, "the run left it; it is gone"))
		}
	}
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
	l, err := lockWorkspace(filepath.Dir(m.dir))
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
	u := &Manifest{ID: newID(now), Kind: kind, Workspace: m.Workspace, Command: "forgebox undo " + m.ID, Start: now, UndoOf: m.ID}
	u.dir = filepath.Join(filepath.Dir(m.dir), u.ID)
	if err := os.Mkdir(u.dir, 0o700); err != nil {
		return nil, err
	}
	c := committer{ws: m.Workspace, before: filepath.Join(u.dir, "before"), start: now.UnixNano(), m: u}
	host, uerr := openHostDirs(m.Workspace)
	if uerr == nil {
		c.host = host
		defer host.close()
	}
	for i := len(m.Entries) - 1; i >= 0 && uerr == nil; i-- {
		if e := m.Entries[i]; !e.Sub {
			uerr = c.restore(e, filepath.Join(m.dir, "before"))
		}
	}
	u.End = time.Now()
	u.Kept = c.kept
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
		filepath.WalkDir(h, func(q string, d fs.DirEntry, err error) error {
			if err != nil || q == h {
				return nil
			}
			r, _ := filepath.Rel(h, q)
			if n, err := nodeOf(q); err == nil {
				c.m.Entries = append(c.m.Entries, Entry{Path: path.Join(e.Path, filepath.ToSlash(r)), Op: OpCreated, Sub: true, After: n})
			}
			return nil
		})
	}
	return nil
}
