package files

import (
	"os"
	"path/filepath"
	"testing"
)

// The caller's own places (Options.Own) are refused to every change, as
// given, through a link in the workspace, and when one holds the whole
// workspace; the rest of the workspace stays the agent's.
func TestOwnPathsAreNeverChanged(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	cfg := filepath.Join(ws, ".cfg", "forgebox", "config.json")
	for _, d := range []string{filepath.Dir(cfg), filepath.Join(ws, "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{cfg, filepath.Join(ws, "h.db"), filepath.Join(ws, "dir", "x")} {
		if err := os.WriteFile(f, []byte("keep\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".cfg", filepath.Join(ws, "lnk")); err != nil {
		t.Fatal(err)
	}
	f, err := New(Options{Root: ws, Own: []string{filepath.Dir(cfg) + "/", filepath.Join(ws, "h.db"), filepath.Join(ws, "h.db-wal")}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"write", func() error { return f.Write(".cfg/forgebox/config.json", "x", false) }},
		{"write absolute", func() error { return f.Write(cfg, "x", false) }},
		{"write through a link", func() error { return f.Write("lnk/forgebox/config.json", "x", false) }},
		{"create", func() error { return f.Write(".cfg/forgebox/new.json", "x", true) }},
		{"create missing file", func() error { return f.Write("h.db-wal", "x", false) }},
		{"mkdir existing", func() error { return f.Mkdir(".cfg/forgebox") }},
		{"mkdir below", func() error { return f.Mkdir("lnk/forgebox/sub") }},
		{"move onto", func() error { return f.Move("dir/x", ".cfg/forgebox/x") }},
		{"move away", func() error { return f.Move("h.db", "h2.db") }},
		{"move holder", func() error { return f.Move(".cfg", "cfg2") }},
		{"copy onto", func() error { return f.Copy("dir", ".cfg/forgebox/dir") }},
		{"delete", func() error { return f.Delete("lnk/forgebox/config.json", false) }},
		{"delete holder", func() error { return f.Delete(".cfg", true) }},
	} {
		if err := tc.op(); KindOf(err) != KindProtected {
			t.Errorf("%s = %v; want a %s refusal", tc.name, err, KindProtected)
		}
	}
	if b, _ := os.ReadFile(cfg); string(b) != "keep\n" {
		t.Errorf("config.json = %q after the refusals", b)
	}
	if err := f.Write(".cfg/other.json", "{}", false); err != nil {
		t.Errorf("write .cfg/other.json = %v; want it written", err)
	}

	// A workspace inside an own directory is all of it.
	inner, err := New(Options{Root: filepath.Join(ws, ".cfg", "forgebox"), Own: []string{filepath.Join(ws, ".cfg", "forgebox")}})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	if err := inner.Write("new.json", "x", false); KindOf(err) != KindProtected {
		t.Errorf("write in a workspace inside an own directory = %v; want a %s refusal", err, KindProtected)
	}
}
