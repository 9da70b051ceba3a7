package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// copiedWorkspace makes a workspace with a repository and the guard of a
// run over it, with its config's private copy in a state directory.
func copiedWorkspace(t *testing.T, config string) (ws, state string, g *guard) {
	t.Helper()
	ws, state = t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(ws, ".git/config"), config)
	g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.release)
	g.copyConfig(state)
	if len(g.copies) != 1 {
		t.Fatalf("copyConfig made %d copies (warnings %q); want 1", len(g.copies), g.warnings)
	}
	return ws, state, g
}

func TestCarryConfig(t *testing.T) {
	const before = "[core]\n\tbare = false\n"
	ws, _, g := copiedWorkspace(t, before)
	c := g.copies[0]
	if got, err := os.Readlink(c.fact.Link); err != nil || got != c.copyPath() {
		t.Fatalf("link = %q, %v; want %q", got, err, c.copyPath())
	}
	// What the command writes, through the link; and what the owner
	// writes on the host meanwhile.
	writeFile(t, c.copyPath(), before+"[user]\n\temail = agent@example.com\n[core]\n\tfsmonitor = ./x\n")
	real := filepath.Join(ws, ".git/config")
	writeFile(t, real, before+"[pull]\n\trebase = true\n")
	moved, warnings := g.carryConfig()
	got, _ := os.ReadFile(real)
	if want := before + "[pull]\n\trebase = true\n[user]\n\temail = agent@example.com\n"; string(got) != want {
		t.Errorf("real config = %q; want %q", got, want)
	}
	if len(moved) != 1 || moved[0].Key != "core.fsmonitor" || moved[0].Value != "./x" || moved[0].Path != real {
		t.Fatalf("quarantined = %+v; want core.fsmonitor", moved)
	}
	if kept, err := os.ReadFile(moved[0].MovedTo); err != nil || !strings.Contains(string(kept), "fsmonitor") {
		t.Errorf("the copy holding the refused key was not kept at %s: %v", moved[0].MovedTo, err)
	}
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "core.fsmonitor") }) {
		t.Errorf("warnings %q do not name core.fsmonitor", warnings)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git/config.lock")); err == nil {
		t.Error("config.lock was left behind")
	}
}

func TestCarryConfigNothingChanged(t *testing.T) {
	_, _, g := copiedWorkspace(t, "[core]\n\tbare = false\n")
	dir := g.copies[0].dir
	if moved, warnings := g.carryConfig(); len(moved) != 0 || len(warnings) != 0 {
		t.Errorf("carryConfig = %+v, %q; want nothing", moved, warnings)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the run's directory %s is left behind", dir)
	}
}

// A config.lock that is there already (a git on the host, or left by the
// command) is not overwritten nor followed: the changes wait in the copy.
func TestCarryConfigLocked(t *testing.T) {
	const before = "[core]\n\tbare = false\n"
	ws, _, g := copiedWorkspace(t, before)
	c := g.copies[0]
	writeFile(t, c.copyPath(), before+"[user]\n\tname = a\n")
	os.Symlink("/etc/passwd", filepath.Join(ws, ".git/config.lock"))
	moved, warnings := g.carryConfig()
	if got, _ := os.ReadFile(filepath.Join(ws, ".git/config")); string(got) != before || len(moved) != 0 {
		t.Errorf("real config = %q, quarantined %+v; want it unchanged", got, moved)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "NOT carried over") {
		t.Errorf("warnings = %q; want one saying the change was not carried over", warnings)
	}
	if _, err := os.Stat(c.copyPath()); err != nil {
		t.Errorf("the copy was not kept: %v", err)
	}
}

// The copy must not live where the command could write outside it.
func TestCopyConfigRefusesStateInsideRoot(t *testing.T) {
	ws := t.TempDir()
	mkfile(t, filepath.Join(ws, ".git/config"), "[core]\n\tbare = false\n")
	g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	g.copyConfig(filepath.Join(ws, "state"))
	if len(g.copies) != 0 || len(g.warnings) == 0 {
		t.Errorf("copies %d, warnings %q; want none and a warning", len(g.copies), g.warnings)
	}
	if _, err := os.Stat(filepath.Join(ws, "state")); err == nil {
		t.Errorf("copyConfig made the state directory inside the workspace")
	}
}

// A config forgebox cannot read key by key stays read-only.
func TestCopyConfigRefusesOddConfig(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(ws, ".git/config"), "[core]\n\tbare = \\\nfalse\n")
	g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	g.copyConfig(state)
	if len(g.copies) != 0 {
		t.Errorf("a config with continued lines got a private copy")
	}
}
