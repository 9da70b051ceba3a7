package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attack is one attempt to get out of the workspace, into a secret or at a
// protected path.
type attack struct {
	name string
	do   func(fx *fixture) error
	want Kind
}

// etcProbe is a name under /etc that an escaping write would create.
const etcProbe = "forgebox-files-test-must-not-exist"

func attacks() []attack {
	read := func(p string) func(*fixture) error {
		return func(fx *fixture) error { _, err := fx.fs.Read(p, 0, 0); return err }
	}
	abs := func(fn func(string) func(*fixture) error, rel string) func(*fixture) error {
		return func(fx *fixture) error { return fn(filepath.Join(fx.base, rel))(fx) }
	}
	list := func(p string) func(*fixture) error {
		return func(fx *fixture) error { _, err := fx.fs.List(p); return err }
	}
	write := func(p string, parents bool) func(*fixture) error {
		return func(fx *fixture) error { return fx.fs.Write(p, "pwned", parents) }
	}
	writeTo := func(p string) func(*fixture) error { return write(p, false) }
	mkdir := func(p string) func(*fixture) error {
		return func(fx *fixture) error { return fx.fs.Mkdir(p) }
	}
	del := func(p string, recursive bool) func(*fixture) error {
		return func(fx *fixture) error { return fx.fs.Delete(p, recursive) }
	}
	move := func(from, to string) func(*fixture) error {
		return func(fx *fixture) error { return fx.fs.Move(from, to) }
	}
	cp := func(from, to string) func(*fixture) error {
		return func(fx *fixture) error { return fx.fs.Copy(from, to) }
	}
	edit := func(p, old string) func(*fixture) error {
		return func(fx *fixture) error { _, err := fx.fs.Edit(p, []Edit{{Old: old, New: "pwned"}}); return err }
	}
	long := strings.Repeat("a/", 5000)
	return []attack{
		// Reading out of the workspace.
		{"read absolute outside", abs(func(p string) func(*fixture) error { return read(p) }, "outside/secret.txt"), KindOutside},
		{"read dotdot", read("../outside/secret.txt"), KindOutside},
		{"read dotdot from a subdirectory", read("dir/../../outside/victim.txt"), KindOutside},
		{"read absolute via root dotdot", abs(func(p string) func(*fixture) error { return read(p) }, "ws/../outside/victim.txt"), KindOutside},
		{"read /etc/passwd", read("/etc/passwd"), KindOutside},
		{"read through link to outside dir", read("out/victim.txt"), KindOutside},
		{"read through relative link to outside dir", read("outrel/victim.txt"), KindOutside},
		{"read link to outside file", read("outfile"), KindOutside},
		{"read through link chain", read("chain1/victim.txt"), KindOutside},
		{"read through link to /etc", read("etc/hostname"), KindOutside},
		{"read link loop", read("loop1"), KindInvalid},
		{"list outside dir link", list("out"), KindOutside},
		{"list parent", list(".."), KindOutside},
		{"list /", list("/"), KindOutside},
		// Secrets inside the workspace.
		{"read hidden file", read(".env"), KindHidden},
		{"read hidden file via odd path", read("./dir/..//.env"), KindHidden},
		{"read hidden dir content", read("secrets/key"), KindHidden},
		{"read through link to hidden", read("envlink"), KindHidden},
		{"read hard link to hidden file", read("hardsecret"), KindHidden},
		{"list hidden dir", list("secrets"), KindHidden},
		{"copy hidden file", cp(".env", "env.txt"), KindHidden},
		{"copy hard link to hidden file", cp("hardsecret", "s.txt"), KindHidden},
		{"copy tree holding hidden", cp(".", "all"), KindHidden},
		{"copy hidden dir", cp("secrets", "s2"), KindHidden},
		{"move hidden file out", move(".env", "env.txt"), KindHidden},
		{"move hidden dir", move("secrets", "s2"), KindHidden},
		{"move into hidden dir", move("file.txt", "secrets/file.txt"), KindHidden},
		{"write hidden file", writeTo(".env"), KindHidden},
		{"delete hidden file", del(".env", false), KindHidden},
		{"delete hidden dir", del("secrets", true), KindHidden},
		// Writing out of the workspace.
		{"write absolute outside", abs(func(p string) func(*fixture) error { return writeTo(p) }, "outside/new.txt"), KindOutside},
		{"write dotdot", writeTo("../outside/new.txt"), KindOutside},
		{"write dotdot over victim", writeTo("../outside/victim.txt"), KindOutside},
		{"write through link to outside dir", writeTo("out/victim.txt"), KindOutside},
		{"write new file through link to outside dir", writeTo("out/new.txt"), KindOutside},
		{"write through relative link", writeTo("outrel/victim.txt"), KindOutside},
		{"write final link to outside file", writeTo("outfile"), KindSymlink},
		{"write through link chain", write("chain1/new.txt", true), KindOutside},
		{"write parents through link", write("out/newdir/new.txt", true), KindOutside},
		{"write into link to /etc", writeTo("etc/" + etcProbe), KindOutside},
		{"mkdir through link", mkdir("out/newdir"), KindOutside},
		{"mkdir under /etc link", mkdir("etc/" + etcProbe), KindOutside},
		{"delete through link", del("out/victim.txt", false), KindOutside},
		{"delete through /etc link", del("etc/"+etcProbe, false), KindOutside},
		{"delete dotdot", del("../outside", true), KindOutside},
		{"move out", move("file.txt", "../outside/file.txt"), KindOutside},
		{"move through link", move("file.txt", "out/file.txt"), KindOutside},
		{"move outside file in", move("out/victim.txt", "victim.txt"), KindOutside},
		{"move link so it escapes", move("tree/escape", "escape"), KindOutside},
		{"copy tree with escaping link", cp("tree", "tree2"), KindOutside},
		{"copy link to outside dir", cp("out", "out2"), KindOutside},
		{"copy link chain out", cp("chain1", "c"), KindOutside},
		{"copy outside file in", cp("out/victim.txt", "v.txt"), KindOutside},
		{"copy out", cp("file.txt", "out/file.txt"), KindOutside},
		// Protected paths.
		{"write existing hook", writeTo(".git/hooks/pre-commit"), KindProtected},
		{"write new hook", writeTo(".git/hooks/post-checkout"), KindProtected},
		{"write hook via odd path", writeTo("./.git//hooks/../hooks/pre-commit"), KindProtected},
		{"write hook through link", writeTo("hooklink/pre-push"), KindProtected},
		{"write git config", writeTo(".git/config"), KindProtected},
		{"write missing .envrc", writeTo(".envrc"), KindProtected},
		{"write missing .vscode file", write(".vscode/settings.json", true), KindProtected},
		{"write a file named .git", writeTo(".git"), KindProtected},
		{"mkdir protected", mkdir(".vscode"), KindProtected},
		{"mkdir in hooks", mkdir(".git/hooks/x"), KindProtected},
		{"delete hook", del(".git/hooks/pre-commit", false), KindProtected},
		{"delete hooks", del(".git/hooks", true), KindProtected},
		{"delete .git", del(".git", true), KindProtected},
		{"delete hook through link", del("hooklink/pre-commit", false), KindProtected},
		{"move onto hook", move("file.txt", ".git/hooks/pre-push"), KindProtected},
		{"move hook out", move(".git/hooks/pre-commit", "stolen"), KindProtected},
		{"move .git away", move(".git", "git2"), KindProtected},
		{"move dir to .vscode", move("dir", ".vscode"), KindProtected},
		{"copy onto hook", cp("file.txt", ".git/hooks/pre-push"), KindProtected},
		{"copy dir to .claude", cp("dir", ".claude"), KindProtected},
		// Editing: the same confinement as writing, and reading's secrecy.
		{"edit through link to outside dir", edit("out/victim.txt", "VICTIM"), KindOutside},
		{"edit through relative link", edit("outrel/victim.txt", "VICTIM"), KindOutside},
		{"edit dotdot", edit("../outside/victim.txt", "VICTIM"), KindOutside},
		{"edit absolute outside", abs(func(p string) func(*fixture) error { return edit(p, "VICTIM") }, "outside/victim.txt"), KindOutside},
		{"edit final link to outside file", edit("outfile", "VICTIM"), KindSymlink},
		{"edit escaping link in tree", edit("tree/escape", "VICTIM"), KindSymlink},
		{"edit through link chain", edit("chain1/victim.txt", "VICTIM"), KindOutside},
		{"edit hook", edit(".git/hooks/pre-commit", "exit 0"), KindProtected},
		{"edit hook through link", edit("hooklink/pre-commit", "exit 0"), KindProtected},
		{"edit git config", edit(".git/config", "[core]"), KindProtected},
		{"edit hidden file", edit(".env", "TOKEN"), KindHidden},
		{"edit through link to hidden", edit("envlink", "TOKEN"), KindSymlink},
		{"edit hidden dir content", edit("secrets/key", "KEY"), KindHidden},
		{"edit hard link to hidden file", edit("hardsecret", "SECRET"), KindHidden},
		{"edit link loop", edit("loop1", "x"), KindSymlink},
		// The root itself.
		{"delete root", del(".", true), KindInvalid},
		{"delete root via dotdot", del("dir/..", true), KindInvalid},
		{"move root", move(".", "x"), KindInvalid},
		{"copy dir into itself", cp("dir", "dir/sub"), KindInvalid},
		// Bad input.
		{"empty path", read(""), KindInvalid},
		{"NUL byte", read("file.txt\x00/etc/passwd"), KindInvalid},
		{"invalid UTF-8", writeTo("bad\xff.txt"), KindInvalid},
		{"10k path", writeTo(long + "x"), KindInvalid},
		{"10k path mkdir", mkdir(long), KindInvalid},
		{"overlong name", writeTo(strings.Repeat("n", 300)), KindInvalid},
		{"negative offset", func(fx *fixture) error { _, err := fx.fs.Read("file.txt", -1, 0); return err }, KindInvalid},
	}
}

func TestAttacks(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		for _, a := range attacks() {
			t.Run(a.name, func(t *testing.T) {
				fx := newFixture(t, openat2)
				wsBefore := takeSnapshot(t, fx.ws, "")
				wantKind(t, a.name, a.do(fx), a.want)
				fx.checkHost(t)
				if diff := wsBefore.diff(takeSnapshot(t, fx.ws, "")); diff != "" {
					t.Fatalf("a refused operation changed the workspace:\n%s", diff)
				}
				if _, err := os.Lstat("/etc/" + etcProbe); err == nil {
					t.Fatalf("/etc/%s exists", etcProbe)
				}
			})
		}
	})
}

// A hard link to a host file may be written: the link is replaced, and the
// host file keeps its content and mode.
func TestWriteHardLinkLeavesOtherNames(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		if err := fx.fs.Write("hard", "pwned", false); err != nil {
			t.Fatalf("Write(hard) = %v", err)
		}
		fx.checkHost(t)
		if got := readFile(t, filepath.Join(fx.ws, "hard")); got != "pwned" {
			t.Fatalf("hard = %q, want pwned", got)
		}
		if err := fx.fs.Delete("hard", false); err != nil {
			t.Fatalf("Delete(hard) = %v", err)
		}
		fx.checkHost(t)
	})
}

// Deleting a link to the host removes the link only.
func TestDeleteLinksOnly(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		for _, p := range []string{"out", "outfile", "etc", "chain1"} {
			if err := fx.fs.Delete(p, true); err != nil {
				t.Fatalf("Delete(%q) = %v", p, err)
			}
			if _, err := os.Lstat(filepath.Join(fx.ws, p)); !os.IsNotExist(err) {
				t.Fatalf("%s still exists after Delete: %v", p, err)
			}
		}
		// A directory holding links to the host: the links go, not their targets.
		fx.mkdir("ws/links")
		fx.link(fx.outside, "ws/links/o")
		fx.link(filepath.Join(fx.outside, "victim.txt"), "ws/links/v")
		fx.before = takeSnapshot(t, fx.base, fx.ws)
		if err := fx.fs.Delete("links", true); err != nil {
			t.Fatalf("Delete(links) = %v", err)
		}
		fx.checkHost(t)
	})
}

// A symbolic link to a protected directory does not make its content
// writable, nor does a protected path that is itself a link.
func TestProtectedThroughLinks(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		fx.mkdir("ws/cfg/vscode")
		fx.link("cfg/vscode", "ws/.vscode")
		fx.link("cfg", "ws/cfglink")
		for _, p := range []string{"cfg/vscode/settings.json", "cfglink/vscode/tasks.json", ".vscode/x.json"} {
			wantKind(t, "Write("+p+")", fx.fs.Write(p, "{}", false), KindProtected)
		}
		wantKind(t, "Delete(cfg)", fx.fs.Delete("cfg", true), KindProtected)
		wantKind(t, "Move(cfg)", fx.fs.Move("cfg", "cfg2"), KindProtected)
		if err := fx.fs.Write("cfg/other.txt", "fine", false); err != nil {
			t.Fatalf("Write(cfg/other.txt) = %v", err)
		}
	})
}

// Every path through the code, refusals included, closes what it opened.
func TestNoDescriptorLeak(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		before := openFds(t)
		for range 3 {
			for _, a := range attacks() {
				a.do(fx)
			}
			fx.fs.List(".")
			fx.fs.Read("file.txt", 0, 0)
			fx.fs.Write("dir/w.txt", "w", false)
			fx.fs.Edit("dir/w.txt", []Edit{{Old: "w", New: "v"}})
			fx.fs.Edit("dir/w.txt", []Edit{{Old: "absent", New: "v"}})
			fx.fs.Write("new/deep/w.txt", "w", true)
			fx.fs.Mkdir("m/n")
			fx.fs.Copy("dir", "dir2")
			fx.fs.Move("dir2", "dir3")
			fx.fs.Delete("dir3", true)
			fx.fs.Delete("new", true)
			fx.fs.Delete("m", true)
		}
		if after := openFds(t); after != before {
			t.Fatalf("%d descriptors open before, %d after", before, after)
		}
	})
}

func openFds(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// A hidden directory that holds the whole workspace hides all of it.
func TestHiddenHoldsRoot(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "a"), []byte("A"), 0o644)
	f, err := New(Options{Root: ws, Hidden: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Read("a", 0, 0)
	wantKind(t, "Read(a)", err, KindHidden)
	_, err = f.List(".")
	wantKind(t, "List(.)", err, KindHidden)
	wantKind(t, "Write(b)", f.Write("b", "", false), KindHidden)
}
