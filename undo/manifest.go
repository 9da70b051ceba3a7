package undo

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"
)

// Kinds of record.
const (
	KindRun  = "run"  // a sandboxed run's changes
	KindUndo = "undo" // what an undo changed (undoing it redoes the run)
)

// Ops of an entry.
const (
	OpCreated  = "created"
	OpModified = "modified" // replaced: Before is kept in the record
	OpDeleted  = "deleted"
	OpMode     = "mode" // a directory that stayed, with another mode
)

// Node is what a path was or became.
type Node struct {
	Type   string `json:"type"` // file, dir, symlink, other
	Mode   uint32 `json:"mode"` // permission bits (and setuid, setgid, sticky)
	Size   int64  `json:"size"`
	Mtime  int64  `json:"mtime_ns"`
	Ctime  int64  `json:"ctime_ns,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
	Target string `json:"target,omitempty"` // a symlink's
	// Files is, for a directory kept in a record, how many files (all
	// but directories) it holds.
	Files int `json:"files,omitempty"`
}

// Entry is one path the run changed.
type Entry struct {
	Path string `json:"path"` // relative to its root, slash-separated
	// Root is the root the path lies in: 0 the workspace, i the --rw
	// path Manifest.Roots[i-1].
	Root int    `json:"root,omitempty"`
	Op   string `json:"op"`
	// Sub: the path lies inside a directory the run created or replaced
	// (the entry that moved it). It is checked before an undo and moves
	// with that directory.
	Sub    bool  `json:"sub,omitempty"`
	Before *Node `json:"before,omitempty"`
	After  *Node `json:"after,omitempty"`
	// HostChanged: the workspace's entry changed while the run went on
	// (the person, or another run, wrote it): that version is the one in
	// the record.
	HostChanged bool `json:"host_changed,omitempty"`
}

// Summary counts what a record changed. Files are everything but
// directories; a deleted or replaced directory counts the files it held.
type Summary struct {
	Created  int   `json:"created"`
	Modified int   `json:"modified"`
	Deleted  int   `json:"deleted"`
	Bytes    int64 `json:"bytes"` // written: the size of the files created or modified
}

// Changed reports whether anything changed.
func (s Summary) Changed() bool { return s.Created+s.Modified+s.Deleted > 0 }

func (s Summary) String() string {
	return fmt.Sprintf("%d created, %d modified, %d deleted, %s written", s.Created, s.Modified, s.Deleted, Bytes(s.Bytes))
}

// Bytes renders a size for people.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Manifest is a record: one run's (or one undo's) changes to a workspace.
type Manifest struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Workspace string `json:"workspace"`
	// Roots are the run's --rw paths whose changes the record keeps too
	// (Entry.Root), each with its part of the record in rw/<i>/.
	Roots   []string  `json:"roots,omitempty"`
	Command string    `json:"command,omitempty"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Entries []Entry   `json:"entries"`
	Summary Summary   `json:"summary"`
	// Kept is the size of what the record keeps (before/).
	Kept int64 `json:"kept_bytes"`
	// HistoryKey names the run in forgebox's history, when recorded.
	HistoryKey string `json:"history_key,omitempty"`
	// UndoOf is the record an undo took back; UndoneBy the undo that took
	// this one back.
	UndoOf   string   `json:"undo_of,omitempty"`
	UndoneBy string   `json:"undone_by,omitempty"`
	Warnings []string `json:"warnings,omitempty"`

	dir string
}

// Dir is the record's directory.
func (m *Manifest) Dir() string { return m.dir }

// RootPath is the directory of root i (Entry.Root): the workspace, or a
// --rw path.
func (m *Manifest) RootPath(i int) string {
	if i <= 0 || i > len(m.Roots) {
		return m.Workspace
	}
	return m.Roots[i-1]
}

// Shown is an entry's path as people read it: relative to the workspace
// for the workspace's, absolute for a --rw path's.
func (m *Manifest) Shown(e Entry) string {
	if e.Root == 0 {
		return e.Path
	}
	return filepath.Join(m.RootPath(e.Root), filepath.FromSlash(e.Path))
}

// partDir is the part of record directory dir that holds root i: upper/,
// work/ while the run goes on, before/ after. The workspace's is dir
// itself.
func partDir(dir string, i int) string {
	if i == 0 {
		return dir
	}
	return filepath.Join(dir, "rw", strconv.Itoa(i))
}

const manifestName = "manifest.json"

func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("read undo record %s: %w", dir, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("undo record %s is damaged: %w", dir, err)
	}
	m.dir = dir
	return &m, nil
}

// check refuses a manifest forgebox would not have written (a crash, a
// disk error: a command cannot reach the store): every path it names must
// lie in its root, and every entry must hold what its undo reads. Commit,
// Plan and Undo trust what it lets through.
func (m *Manifest) check() error {
	if !filepath.IsAbs(m.Workspace) || filepath.Clean(m.Workspace) != m.Workspace {
		return fmt.Errorf("workspace %q is not a clean absolute path", m.Workspace)
	}
	for i, r := range m.Roots {
		if r != "" && (!filepath.IsAbs(r) || filepath.Clean(r) != r) {
			return fmt.Errorf("root %d %q is not a clean absolute path", i+1, r)
		}
	}
	for i, e := range m.Entries {
		if e.Root < 0 || e.Root > len(m.Roots) || e.Root > 0 && m.Roots[e.Root-1] == "" {
			return fmt.Errorf("entry %d: no root %d", i, e.Root)
		}
		// "" is the root itself, whose mode alone a run changes.
		if !(e.Path == "" && e.Op == OpMode) && (path.Clean(e.Path) != e.Path || !filepath.IsLocal(e.Path) || e.Path == ".") {
			return fmt.Errorf("entry %d: path %q does not lie inside its root", i, e.Path)
		}
		var ok bool
		switch e.Op {
		case OpCreated:
			ok = e.After != nil
		case OpDeleted:
			ok = e.Before != nil
		case OpModified, OpMode:
			ok = e.Before != nil && e.After != nil
		}
		if !ok {
			return fmt.Errorf("entry %d (%s): op %q without what it was or became", i, e.Path, e.Op)
		}
	}
	return nil
}

// write replaces the manifest through a temporary file: a record is
// either the old or the new one, never half of either.
func (m *Manifest) write() error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(m.dir, manifestName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write undo record: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(m.dir, manifestName)); err != nil {
		return fmt.Errorf("write undo record: %w", err)
	}
	return nil
}

// summarize counts the entries.
func (m *Manifest) summarize() {
	var s Summary
	for _, e := range m.Entries {
		if e.Op == OpMode {
			continue
		}
		switch {
		case e.Before == nil:
		case e.Before.Type == "dir":
			s.Deleted += e.Before.Files
		case e.After != nil && e.After.Type != "dir":
			s.Modified++
		default:
			s.Deleted++
		}
		if e.After != nil && e.After.Type != "dir" {
			if e.Before == nil || e.Before.Type == "dir" {
				s.Created++
			}
			s.Bytes += e.After.Size
		}
	}
	m.Summary = s
}
