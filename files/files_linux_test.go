package files

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// newWorkspace is an empty workspace with the usual protections.
func newWorkspace(t *testing.T, o Options) (*FS, string) {
	t.Helper()
	ws := t.TempDir()
	if o.Root == "" {
		o.Root = ws
	}
	if o.Protected == nil {
		o.Protected = protectedForTest
	}
	f, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	t.Cleanup(func() { f.Close() })
	return f, ws
}

func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		name string
		o    Options
		want Kind
	}{
		{"relative root", Options{Root: "ws"}, KindInvalid},
		{"missing root", Options{Root: filepath.Join(dir, "missing")}, KindNotFound},
		{"root is a file", Options{Root: file}, KindNotDir},
		{"protected with dotdot", Options{Root: dir, Protected: []string{"a/../../b"}}, KindInvalid},
		{"protected outside", Options{Root: dir, Protected: []string{"/etc"}}, KindOutside},
		{"relative hidden", Options{Root: dir, Hidden: []string{".env"}}, KindInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := New(tc.o)
			if err == nil {
				f.Close()
			}
			wantKind(t, "New", err, tc.want)
		})
	}
}

// The root may be given through a symbolic link; absolute paths and hidden
// paths through either name work.
func TestRootThroughLink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o755)
	os.WriteFile(filepath.Join(real, ".env"), []byte("S"), 0o600)
	os.WriteFile(filepath.Join(real, "a.txt"), []byte("A"), 0o644)
	link := filepath.Join(base, "link")
	os.Symlink(real, link)
	f, _ := newWorkspace(t, Options{Root: link, Hidden: []string{filepath.Join(link, ".env")}})
	if f.Root() != real {
		t.Fatalf("Root() = %q, want %q", f.Root(), real)
	}
	for _, p := range []string{filepath.Join(link, "a.txt"), filepath.Join(real, "a.txt"), "a.txt"} {
		r, err := f.Read(p, 0, 0)
		if err != nil || r.Content != "A" {
			t.Fatalf("Read(%q) = %+v, %v", p, r, err)
		}
	}
	_, err := f.Read(filepath.Join(real, ".env"), 0, 0)
	wantKind(t, "Read(.env)", err, KindHidden)
}

func TestList(t *testing.T) {
	f, ws := newWorkspace(t, Options{Hidden: nil})
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("bbb"), 0o640)
	os.Chmod(filepath.Join(ws, "b.txt"), 0o640)
	os.Mkdir(filepath.Join(ws, "a"), 0o755)
	os.Symlink("b.txt", filepath.Join(ws, "c"))
	syscall.Mkfifo(filepath.Join(ws, "d"), 0o644)
	os.WriteFile(filepath.Join(ws, ".env"), []byte("S"), 0o600)
	f2, err := New(Options{Root: ws, Hidden: []string{filepath.Join(ws, ".env")}})
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	l, err := f2.List(".")
	if err != nil {
		t.Fatalf("List(.) = %v", err)
	}
	var got []string
	for _, e := range l.Entries {
		got = append(got, e.Name+":"+string(e.Type))
	}
	want := []string{".env:file", "a:dir", "b.txt:file", "c:symlink", "d:other"}
	if !slices.Equal(got, want) || l.Path != "." || l.Truncated {
		t.Fatalf("List(.) = %v (path %q, truncated %v), want %v", got, l.Path, l.Truncated, want)
	}
	env, b, c := l.Entries[0], l.Entries[2], l.Entries[3]
	if !env.Hidden || env.Size != 0 || !env.ModTime.IsZero() {
		t.Errorf("hidden entry = %+v, want only name and type", env)
	}
	if b.Size != 3 || b.Mode != "0640" || b.ModTime.IsZero() {
		t.Errorf("b.txt = %+v", b)
	}
	if c.Link != "b.txt" {
		t.Errorf("c.Link = %q, want b.txt", c.Link)
	}
	if _, err := f.List("b.txt"); KindOf(err) != KindNotDir {
		t.Errorf("List(b.txt) = %v, want not-a-directory", err)
	}
	if _, err := f.List("nope"); KindOf(err) != KindNotFound {
		t.Errorf("List(nope) = %v, want not-found", err)
	}
	// Through a link inside the workspace, and by absolute path.
	os.WriteFile(filepath.Join(ws, "a", "x"), nil, 0o644)
	os.Symlink("a", filepath.Join(ws, "alink"))
	for _, p := range []string{"alink", "alink/", filepath.Join(ws, "a")} {
		l, err := f.List(p)
		if err != nil || l.Path != "a" || len(l.Entries) != 1 {
			t.Fatalf("List(%q) = %+v, %v", p, l, err)
		}
	}
}

func TestListTruncated(t *testing.T) {
	f, ws := newWorkspace(t, Options{MaxList: 5})
	for i := range 12 {
		os.WriteFile(filepath.Join(ws, string(rune('a'+i))), nil, 0o644)
	}
	l, err := f.List(".")
	if err != nil || !l.Truncated || len(l.Entries) != 5 {
		t.Fatalf("List = %d entries, truncated %v, %v; want 5, true", len(l.Entries), l.Truncated, err)
	}
	if !slices.IsSortedFunc(l.Entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("entries not sorted: %v", l.Entries)
	}
}

func TestRead(t *testing.T) {
	f, ws := newWorkspace(t, Options{MaxRead: 16})
	text := "héllo wörld, ünïcode ✓ text\n" // multi-byte characters across the 16-byte bound
	os.WriteFile(filepath.Join(ws, "t.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(ws, "bin"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o644)
	os.WriteFile(filepath.Join(ws, "empty"), nil, 0o644)
	os.Mkdir(filepath.Join(ws, "d"), 0o755)
	os.Symlink("t.txt", filepath.Join(ws, "link"))
	syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644)

	// Consecutive reads join into the file, each valid UTF-8.
	var joined strings.Builder
	for off := int64(0); ; {
		r, err := f.Read("t.txt", off, 0)
		if err != nil || r.Binary || r.Offset != off {
			t.Fatalf("Read(t.txt, %d) = %+v, %v", off, r, err)
		}
		if r.Length > 16 || r.Size != int64(len(text)) || r.Path != "t.txt" {
			t.Fatalf("Read(t.txt, %d) = %+v", off, r)
		}
		joined.WriteString(r.Content)
		off += r.Length
		if r.EOF {
			break
		}
	}
	if joined.String() != text {
		t.Fatalf("reads joined = %q, want %q", joined.String(), text)
	}
	// An offset inside a character moves past it.
	if r, err := f.Read("t.txt", 2, 4); err != nil || r.Offset != 3 || r.Length != 3 || r.Content != "llo" {
		t.Errorf("Read(t.txt, 2, 4) = %+v, %v; want offset 3, %q", r, err, "llo")
	}
	r, err := f.Read("bin", 0, 0)
	if raw, _ := base64.StdEncoding.DecodeString(r.Content); err != nil || !r.Binary || string(raw) != "\x7fELF\x00\x01\x02" || !r.EOF {
		t.Errorf("Read(bin) = %+v, %v", r, err)
	}
	if r, err := f.Read("empty", 0, 0); err != nil || r.Content != "" || !r.EOF {
		t.Errorf("Read(empty) = %+v, %v", r, err)
	}
	if r, err := f.Read("t.txt", 1000, 0); err != nil || r.Content != "" || !r.EOF {
		t.Errorf("Read past the end = %+v, %v", r, err)
	}
	if r, err := f.Read("link", 0, 5); err != nil || r.Content != "héll" || r.Path != "t.txt" {
		t.Errorf("Read(link) = %+v, %v", r, err)
	}
	if r, err := f.Read("d/../t.txt", 0, 1); err != nil || r.Content != "h" {
		t.Errorf("Read(d/../t.txt) = %+v, %v", r, err)
	}
	for p, want := range map[string]Kind{"d": KindIsDir, "fifo": KindSpecial, "missing": KindNotFound, "t.txt/x": KindNotDir, "t.txt/": KindNotDir} {
		_, err := f.Read(p, 0, 0)
		wantKind(t, "Read("+p+")", err, want)
	}
}

func TestWrite(t *testing.T) {
	f, ws := newWorkspace(t, Options{MaxWrite: 100})
	if err := f.Write("new.txt", "one", false); err != nil {
		t.Fatalf("Write(new.txt) = %v", err)
	}
	if got := mode(t, filepath.Join(ws, "new.txt")); got != 0o644&^umask() {
		t.Errorf("new file mode = %v, want %v", got, 0o644&^umask())
	}
	// Overwriting keeps the mode, set-id bits aside.
	for _, m := range []os.FileMode{0o600, 0o755, 0o640} {
		p := filepath.Join(ws, "keep")
		os.WriteFile(p, []byte("old"), 0o600)
		os.Chmod(p, m|os.ModeSetuid)
		if err := f.Write("keep", "new", false); err != nil {
			t.Fatalf("Write(keep) = %v", err)
		}
		info, _ := os.Stat(p)
		if info.Mode() != m || readFile(t, p) != "new" {
			t.Errorf("after Write over %v: mode %v, content %q", m, info.Mode(), readFile(t, p))
		}
	}
	if err := f.Write("a/b/c.txt", "deep", true); err != nil {
		t.Fatalf("Write(a/b/c.txt, parents) = %v", err)
	}
	if got := mode(t, filepath.Join(ws, "a", "b")); got != 0o755&^umask() {
		t.Errorf("made directory mode = %v", got)
	}
	if readFile(t, filepath.Join(ws, "a/b/c.txt")) != "deep" {
		t.Errorf("a/b/c.txt not written")
	}
	wantKind(t, "Write(x/y, no parents)", f.Write("x/y", "", false), KindNotFound)
	wantKind(t, "Write(too large)", f.Write("big", strings.Repeat("x", 101), false), KindTooLarge)
	wantKind(t, "Write(a)", f.Write("a", "", false), KindIsDir)
	wantKind(t, "Write(.)", f.Write(".", "", false), KindIsDir)
	wantKind(t, "Write(dir/)", f.Write("newdir/", "", false), KindIsDir)
	wantKind(t, "Write(new.txt/x)", f.Write("new.txt/x", "", true), KindNotDir)
	os.Symlink("new.txt", filepath.Join(ws, "link"))
	wantKind(t, "Write(link)", f.Write("link", "x", false), KindSymlink)
	syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644)
	wantKind(t, "Write(fifo)", f.Write("fifo", "x", false), KindSpecial)
	// Through a link to a directory inside the workspace.
	os.Symlink("a/b", filepath.Join(ws, "blink"))
	if err := f.Write("blink/d.txt", "via", false); err != nil || readFile(t, filepath.Join(ws, "a/b/d.txt")) != "via" {
		t.Fatalf("Write(blink/d.txt) = %v", err)
	}
	if err := f.Write(filepath.Join(ws, "abs.txt"), "abs", false); err != nil {
		t.Fatalf("Write(absolute inside) = %v", err)
	}
	for _, d := range []string{ws, filepath.Join(ws, "a", "b")} {
		noTemps(t, d)
	}
}

func TestMkdir(t *testing.T) {
	f, ws := newWorkspace(t, Options{})
	if err := f.Mkdir("x/y/z"); err != nil {
		t.Fatalf("Mkdir(x/y/z) = %v", err)
	}
	if got := mode(t, filepath.Join(ws, "x/y/z")); got != 0o755&^umask() {
		t.Errorf("mode = %v", got)
	}
	if err := f.Mkdir("x/y"); err != nil {
		t.Errorf("Mkdir(existing) = %v", err)
	}
	os.Symlink("x", filepath.Join(ws, "xl"))
	if err := f.Mkdir("xl"); err != nil {
		t.Errorf("Mkdir(link to dir) = %v", err)
	}
	if err := f.Mkdir("xl/w"); err != nil {
		t.Errorf("Mkdir(xl/w) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "x/w")); err != nil {
		t.Errorf("x/w: %v", err)
	}
	os.WriteFile(filepath.Join(ws, "f"), nil, 0o644)
	wantKind(t, "Mkdir(f)", f.Mkdir("f"), KindExists)
	wantKind(t, "Mkdir(f/g)", f.Mkdir("f/g"), KindNotDir)
	os.Symlink("nowhere", filepath.Join(ws, "dangling"))
	wantKind(t, "Mkdir(dangling)", f.Mkdir("dangling"), KindExists)
	// A directory that holds a protected path may be made.
	if err := f.Mkdir(".git/objects"); err != nil {
		t.Errorf("Mkdir(.git/objects) = %v", err)
	}
}

func TestMove(t *testing.T) {
	f, ws := newWorkspace(t, Options{})
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("A"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("B"), 0o644)
	os.MkdirAll(filepath.Join(ws, "d/e"), 0o755)
	if err := f.Move("a.txt", "d/e/a.txt"); err != nil {
		t.Fatalf("Move(a.txt) = %v", err)
	}
	if readFile(t, filepath.Join(ws, "d/e/a.txt")) != "A" {
		t.Fatal("a.txt not moved")
	}
	wantKind(t, "Move(onto existing)", f.Move("b.txt", "d/e/a.txt"), KindExists)
	if readFile(t, filepath.Join(ws, "d/e/a.txt")) != "A" {
		t.Fatal("Move replaced an existing file")
	}
	wantKind(t, "Move(missing)", f.Move("nope", "x"), KindNotFound)
	wantKind(t, "Move(into missing dir)", f.Move("b.txt", "no/b.txt"), KindNotFound)
	wantKind(t, "Move(into itself)", f.Move("d", "d/e/d"), KindInvalid)
	if err := f.Move("d", "d2"); err != nil {
		t.Fatalf("Move(d) = %v", err)
	}
	// A link moves as a link, when it still points inside from its new place.
	os.Symlink("../b.txt", filepath.Join(ws, "d2/l"))
	if err := f.Move("d2/l", "d2/e/l2"); KindOf(err) != "" {
		// ../b.txt from d2/e is d2/b.txt: missing, but inside.
		t.Fatalf("Move(link) = %v", err)
	}
	if got, _ := os.Readlink(filepath.Join(ws, "d2/e/l2")); got != "../b.txt" {
		t.Fatalf("moved link = %q", got)
	}
}

func TestCopy(t *testing.T) {
	f, ws := newWorkspace(t, Options{})
	os.MkdirAll(filepath.Join(ws, "src/sub"), 0o750)
	os.WriteFile(filepath.Join(ws, "src/a.txt"), []byte("A"), 0o600)
	os.WriteFile(filepath.Join(ws, "src/sub/run.sh"), []byte("#!/bin/sh\n"), 0o777)
	os.Chmod(filepath.Join(ws, "src/sub/run.sh"), 0o777)
	os.Symlink("../a.txt", filepath.Join(ws, "src/sub/l"))
	os.Symlink(ws+"/src/a.txt", filepath.Join(ws, "src/abs"))
	if err := f.Copy("src", "dst"); err != nil {
		t.Fatalf("Copy(src, dst) = %v", err)
	}
	for p, want := range map[string]string{"dst/a.txt": "A", "dst/sub/run.sh": "#!/bin/sh\n", "dst/sub/l": "A", "dst/abs": "A"} {
		if got := readFile(t, filepath.Join(ws, p)); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	for p, want := range map[string]os.FileMode{"dst/a.txt": 0o600, "dst/sub/run.sh": 0o755 &^ umask(), "dst/sub": 0o750 &^ umask()} {
		if got := mode(t, filepath.Join(ws, p)); got != want {
			t.Errorf("mode of %s = %v, want %v", p, got, want)
		}
	}
	if got, _ := os.Readlink(filepath.Join(ws, "dst/sub/l")); got != "../a.txt" {
		t.Errorf("copied link = %q", got)
	}
	if err := f.Copy("src/a.txt", "b.txt"); err != nil || readFile(t, filepath.Join(ws, "b.txt")) != "A" {
		t.Fatalf("Copy(file) = %v", err)
	}
	wantKind(t, "Copy(onto existing)", f.Copy("src/a.txt", "b.txt"), KindExists)
	wantKind(t, "Copy(missing)", f.Copy("nope", "x"), KindNotFound)
	wantKind(t, "Copy(into itself)", f.Copy("src", "src/sub/again"), KindInvalid)
	syscall.Mkfifo(filepath.Join(ws, "src/fifo"), 0o644)
	wantKind(t, "Copy(tree with fifo)", f.Copy("src", "dst2"), KindSpecial)
	if _, err := os.Lstat(filepath.Join(ws, "dst2")); !os.IsNotExist(err) {
		t.Errorf("a refused copy left dst2: %v", err)
	}
	noTemps(t, ws)
}

// A link whose target lies in the same copy, and leads out only once the
// copy has its final name, is caught after the rename and the copy undone.
func TestCopyLinkThroughCopiedLink(t *testing.T) {
	f, ws := newWorkspace(t, Options{})
	os.Mkdir(filepath.Join(ws, "a"), 0o755)
	os.Symlink(ws, filepath.Join(ws, "a/root"))           // to the root, absolute: inside
	os.Symlink("../b/root/..", filepath.Join(ws, "a/up")) // at b/up: b/root/.. is the root's parent
	wantKind(t, "Copy(a, b)", f.Copy("a", "b"), KindOutside)
	if _, err := os.Lstat(filepath.Join(ws, "b")); !os.IsNotExist(err) {
		t.Errorf("the refused copy is still there: %v", err)
	}
	noTemps(t, ws)
}

func TestDelete(t *testing.T) {
	f, ws := newWorkspace(t, Options{})
	os.MkdirAll(filepath.Join(ws, "d/e/f"), 0o755)
	os.WriteFile(filepath.Join(ws, "d/e/f/x"), nil, 0o644)
	os.WriteFile(filepath.Join(ws, "d/y"), nil, 0o444)
	os.Symlink("d", filepath.Join(ws, "dl"))
	os.WriteFile(filepath.Join(ws, "g"), nil, 0o644)
	wantKind(t, "Delete(d)", f.Delete("d", false), KindIsDir)
	if err := f.Delete("dl", false); err != nil {
		t.Fatalf("Delete(dl) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "d/y")); err != nil {
		t.Fatalf("Delete of a link removed its target: %v", err)
	}
	if err := f.Delete("d", true); err != nil {
		t.Fatalf("Delete(d, recursive) = %v", err)
	}
	if err := f.Delete("g", false); err != nil {
		t.Fatalf("Delete(g) = %v", err)
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != 0 {
		t.Fatalf("workspace not empty: %v", entries)
	}
	wantKind(t, "Delete(missing)", f.Delete("missing", true), KindNotFound)
}

func TestClosed(t *testing.T) {
	f, _ := newWorkspace(t, Options{})
	f.Close()
	_, err := f.Read("x", 0, 0)
	if err == nil {
		t.Fatal("Read after Close succeeded")
	}
}
