package undo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A damaged manifest (a crash, a disk error: a command cannot reach the
// store) is refused with an error that names the record: no panic, and
// nothing changes in the workspace, its parent or a --rw root.
func TestUndoDamagedManifest(t *testing.T) {
	cases := []struct {
		name   string
		damage func(m *Manifest)
	}{
		{"mode without before", func(m *Manifest) { m.Entries[0] = Entry{Path: "a.txt", Op: OpMode} }},
		{"the workspace's parent", func(m *Manifest) {
			m.Entries[0] = Entry{Path: "..", Op: OpMode, Before: &Node{Type: "dir", Mode: 0o700}, After: &Node{Type: "dir", Mode: 0o755}}
		}},
		{"dot-dot inside", func(m *Manifest) { m.Entries[0].Path = "sub/../../x" }},
		{"the workspace itself", func(m *Manifest) { m.Entries[0] = Entry{Path: "", Op: OpCreated, After: &Node{Type: "dir"}} }},
		{"dot", func(m *Manifest) { m.Entries[0].Path = "." }},
		{"absolute", func(m *Manifest) { m.Entries[0].Path = "/etc/passwd" }},
		{"root out of range", func(m *Manifest) { m.Entries[0].Root = 7 }},
		{"negative root", func(m *Manifest) { m.Entries[0].Root = -1 }},
		{"dropped root", func(m *Manifest) { m.Roots = []string{""}; m.Entries[0].Root = 1 }},
		{"relative root", func(m *Manifest) { m.Roots = []string{"rel"}; m.Entries[0].Root = 1 }},
		{"unknown op", func(m *Manifest) { m.Entries[0].Op = "frobbed" }},
		{"modified without before", func(m *Manifest) { m.Entries[0].Before = nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			ws := filepath.Join(root, "ws")
			store := StoreFor(filepath.Join(root, "state"))
			write(t, filepath.Join(ws, "a.txt"), "a\n")
			write(t, filepath.Join(ws, "sub/b"), "b\n")
			write(t, filepath.Join(root, "x"), "outside\n")
			p, err := store.Begin(ws, nil, "test", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(p.Upper(), "a.txt"), "A\n")
			m, err := p.Commit(time.Now())
			if err != nil {
				t.Fatal(err)
			}
			tc.damage(m)
			b, _ := json.Marshal(m)
			if err := os.WriteFile(filepath.Join(m.Dir(), manifestName), b, 0o600); err != nil {
				t.Fatal(err)
			}
			parent, _ := os.Stat(root)
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic on a damaged manifest: %v", r)
				}
			}()
			// Read as forgebox undo does: through the store.
			got, err := store.Find(ws, m.ID)
			if err == nil {
				if _, _, err = store.Plan(got); err == nil {
					_, err = store.Undo(got, true, time.Now())
				}
			}
			if err == nil {
				t.Error("undo of a damaged record: no error")
			}
			if now, _ := os.Stat(root); now.Mode() != parent.Mode() {
				t.Errorf("the workspace's parent changed mode: %v, was %v", now.Mode(), parent.Mode())
			}
			if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "A\n" {
				t.Errorf("a.txt after a refused undo: %q (%v), want the run's A", b, err)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "x")); string(b) != "outside\n" {
				t.Errorf("the file beside the workspace: %q", b)
			}
		})
	}
}

// A root whose parent became a symbolic link between the run and the undo
// (a later run with a --rw path above it, the person) is refused, forced
// or not: the undo would otherwise move files between the record and the
// directory the link points to, outside the roots the run had.
func TestUndoRefusesARootBehindASymlink(t *testing.T) {
	root := t.TempDir()
	ws, rw := filepath.Join(root, "p", "ws"), filepath.Join(root, "p", "rw")
	store := StoreFor(filepath.Join(root, "state"))
	write(t, filepath.Join(ws, "f.txt"), "ws\n")
	write(t, filepath.Join(rw, "f.txt"), "rw\n")
	p, err := store.Begin(ws, []string{rw}, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.Upper(), "f.txt"), "WS\n")
	write(t, filepath.Join(p.RootDir(0), "upper", "f.txt"), "RW\n")
	m, err := p.Commit(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// p moves away; a link named p points at another directory holding
	// the same names.
	other := filepath.Join(root, "other")
	write(t, filepath.Join(other, "ws", "f.txt"), "other ws\n")
	write(t, filepath.Join(other, "rw", "f.txt"), "other rw\n")
	if err := os.Rename(filepath.Join(root, "p"), filepath.Join(root, "p.moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(root, "p")); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, other)
	if _, err := store.Undo(m, true, time.Now()); err == nil {
		t.Error("undo through a symlinked parent: no error")
	}
	if hashTree(t, other) != before {
		t.Errorf("the undo changed %s, which the link pointed to", other)
	}
}
