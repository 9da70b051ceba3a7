package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestEdit(t *testing.T) {
	f, ws := newWorkspace(t, Options{MaxWrite: 100})
	p := filepath.Join(ws, "main.go")
	put := func(content string, m os.FileMode) {
		t.Helper()
		os.Remove(p)
		if err := os.WriteFile(p, []byte(content), m); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, m)
	}
	// The mode is kept, set-id bits aside, and the content changes.
	for _, m := range []os.FileMode{0o600, 0o755, 0o640} {
		put("package main\nfunc main() {}\n", m|os.ModeSetgid)
		res, err := f.Edit("main.go", []Edit{{Old: "func main() {}", New: "func main() { println() }"}})
		if err != nil {
			t.Fatalf("Edit(main.go) = %v", err)
		}
		info, _ := os.Stat(p)
		if got := readFile(t, p); got != "package main\nfunc main() { println() }\n" || info.Mode() != m {
			t.Errorf("after Edit over %v: mode %v, content %q", m, info.Mode(), got)
		}
		if res.Path != "main.go" || res.Replacements != 1 || res.Lines[0] != 2 || res.Size != int64(len(readFile(t, p))) {
			t.Errorf("Edit = %+v", res)
		}
	}
	// Refusals change nothing.
	put("x x\n", 0o644)
	for _, c := range []struct {
		name  string
		path  string
		edits []Edit
		want  Kind
	}{
		{"ambiguous", "main.go", []Edit{{Old: "x", New: "y"}}, KindAmbiguous},
		{"no match", "main.go", []Edit{{Old: "z", New: "y"}}, KindNoMatch},
		{"all or nothing", "main.go", []Edit{{Old: "x x", New: "y"}, {Old: "x", New: "z"}}, KindNoMatch},
		{"grows past the limit", "main.go", []Edit{{Old: "x x", New: strings.Repeat("y", 101)}}, KindTooLarge},
		{"missing", "nothing.go", []Edit{{Old: "x", New: "y"}}, KindNotFound},
		{"directory", ".", []Edit{{Old: "x", New: "y"}}, KindIsDir},
		{"trailing slash", "main.go/", []Edit{{Old: "x", New: "y"}}, KindIsDir},
	} {
		wsBefore := takeSnapshot(t, ws, "")
		_, err := f.Edit(c.path, c.edits)
		wantKind(t, "Edit("+c.name+")", err, c.want)
		if diff := wsBefore.diff(takeSnapshot(t, ws, "")); diff != "" {
			t.Errorf("a refused Edit (%s) changed the workspace:\n%s", c.name, diff)
		}
	}
	if res, err := f.Edit("main.go", []Edit{{Old: "x", New: "y", All: true}}); err != nil || res.Replacements != 2 || readFile(t, p) != "y y\n" {
		t.Errorf("Edit(all) = %+v, %v; content %q", res, err, readFile(t, p))
	}
	// Binary and oversized files are not edited.
	put("a\x00b", 0o644)
	_, err := f.Edit("main.go", []Edit{{Old: "a", New: "c"}})
	wantKind(t, "Edit(binary)", err, KindBinary)
	put("a\xffb", 0o644)
	_, err = f.Edit("main.go", []Edit{{Old: "a", New: "c"}})
	wantKind(t, "Edit(invalid UTF-8)", err, KindBinary)
	put(strings.Repeat("a", 101), 0o644)
	_, err = f.Edit("main.go", []Edit{{Old: "a", New: "c", All: true}})
	wantKind(t, "Edit(too large)", err, KindTooLarge)
	// Special files and links are never edited through.
	syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644)
	_, err = f.Edit("fifo", []Edit{{Old: "a", New: "c"}})
	wantKind(t, "Edit(fifo)", err, KindSpecial)
	os.Symlink("main.go", filepath.Join(ws, "link"))
	_, err = f.Edit("link", []Edit{{Old: "a", New: "c"}})
	wantKind(t, "Edit(link)", err, KindSymlink)
	// A protected path that does not exist is refused as protected, not
	// as missing: the refusal does not depend on what exists.
	_, err = f.Edit(".envrc", []Edit{{Old: "a", New: "c"}})
	wantKind(t, "Edit(.envrc)", err, KindProtected)
}

// Editing a hard link to a host file replaces the link: the host file
// keeps its content and mode.
func TestEditHardLinkLeavesOtherNames(t *testing.T) {
	walkModes(t, func(t *testing.T, openat2 bool) {
		fx := newFixture(t, openat2)
		if _, err := fx.fs.Edit("hard", []Edit{{Old: "VICTIM", New: "pwned"}}); err != nil {
			t.Fatalf("Edit(hard) = %v", err)
		}
		fx.checkHost(t)
		if got := readFile(t, filepath.Join(fx.ws, "hard")); got != "pwned" {
			t.Fatalf("hard = %q, want pwned", got)
		}
	})
}

// BenchmarkEdit is one edit of a 100 KiB source file: walk, read, replace,
// fsync, rename.
func BenchmarkEdit(b *testing.B) {
	ws := b.TempDir()
	f, err := New(Options{Root: ws, Protected: protectedForTest})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := "\tx := compute(a, b, c) // a line of code\n"
	os.WriteFile(filepath.Join(ws, "big.go"), []byte(strings.Repeat(line, 100<<10/len(line))+"MARK0\n"), 0o644)
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.Edit("big.go", []Edit{{Old: fmt.Sprintf("MARK%d", i), New: fmt.Sprintf("MARK%d", i+1)}}); err != nil {
			b.Fatal(err)
		}
	}
}
