package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The post-run check, without a sandbox: the "run" is what the test does
// between watchRoot and check. Each case lists what must be moved aside.
func TestTreeCheck(t *testing.T) {
	sh := func(t *testing.T, dir, line string) {
		t.Helper()
		cmd := exec.Command("sh", "-ec", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	for _, tc := range []struct {
		name, before, run string
		moved             []string
		between           string // the person\'s, after a first run indexed "before"
	}{
		{"nothing planted", "mkdir -p a/b && git init -q r", "echo x > a/b/f && mkdir c && rm -r a", nil, ""},
		{"nested .envrc", "mkdir -p a/b", "echo x > a/b/.envrc", []string{"a/b/.envrc"}, ""},
		{"new repository's hook", "", "git init -q n && echo x > n/.git/hooks/pre-commit",
			[]string{"n/.git/hooks/pre-commit"}, ""},
		{"existing repository's hook", "git init -q r", "echo x > r/.git/hooks/pre-commit",
			[]string{"r/.git/hooks/pre-commit"}, ""},
		{"existing .envrc changed in place", "mkdir a && echo ok > a/.envrc", "echo evil >> a/.envrc", []string{"a/.envrc"}, ""},
		{"renamed parent, repository copied", "mkdir -p p && git init -q p/r",
			"mv p q && mkdir -p p && cp -a q/r p/r && git --git-dir=p/r/.git config core.fsmonitor x",
			[]string{"p/r/.git/config"}, ""},
		{"staged Git directory renamed into place", "git init -q s && mv s/.git staged && rm -r s && echo x > staged/hooks/pre-commit && rm staged/HEAD",
			"mkdir t && mv staged t/.git && echo 'ref: refs/heads/main' > t/.git/HEAD", []string{"t/.git/hooks/pre-commit"}, ""},
		{"bare repository", "mkdir docs", "git init -q --bare docs && echo x > docs/hooks/pre-commit", []string{"docs/hooks/pre-commit"}, ""},
		{"whole tree removed", "mkdir -p nm/a/b/c nm/d/e && git init -q nm/d/e/r", "rm -rf nm && mkdir nm", nil, ""},
		{"unreadable directory", "", "mkdir -p h/r && chmod 000 h", []string{"h"}, ""},
		{"staged Git directory renamed into a tree the person made between runs",
			"git init -q s && mv s/.git staged && rm -r s && echo x > staged/hooks/pre-commit && rm staged/HEAD",
			"mkdir u/deep/r && mv staged u/deep/r/.git && echo 'ref: refs/heads/main' > u/deep/r/.git/HEAD",
			[]string{"u/deep/r/.git/hooks/pre-commit"}, "mkdir -p u/deep"},
		{"the person's own repository and .envrc made between runs stay", "", "echo x > u/other",
			nil, "mkdir -p u && git init -q u/r && echo x > u/r/.git/hooks/pre-commit && echo ok > u/.envrc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			store := treeStore{dir: t.TempDir()}
			if tc.before != "" {
				sh(t, ws, tc.before)
			}
			if tc.between != "" {
				w, err := watchRoot(store, ws, time.Now(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.check(&quarantine{}); err != nil {
					t.Fatal(err)
				}
				sh(t, ws, tc.between)
			}
			time.Sleep(60 * time.Millisecond) // a tick of the coarse clock
			w, err := watchRoot(store, ws, time.Now(), nil)
			if err != nil {
				t.Fatal(err)
			}
			sh(t, ws, tc.run)
			var q quarantine
			if err := w.check(&q); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range q.moved {
				rel, _ := filepath.Rel(ws, m.Path)
				got = append(got, rel)
			}
			slices.Sort(got)
			if os.Getuid() == 0 && tc.name == "unreadable directory" {
				// Root reads it anyway: nothing there to move.
				got, tc.moved = nil, nil
			}
			if !slices.Equal(got, tc.moved) {
				t.Errorf("moved %q, want %q (warnings %q)", got, tc.moved, q.warnings)
			}
			for _, m := range q.moved {
				os.Chmod(m.MovedTo, 0o755) // for the cleanup
			}
			// The next check starts from what this one saw.
			time.Sleep(60 * time.Millisecond)
			w, err = watchRoot(store, ws, time.Now(), nil)
			if err != nil {
				t.Fatal(err)
			}
			q = quarantine{}
			if err := w.check(&q); err != nil || len(q.moved) != 0 {
				t.Errorf("a run that did nothing: moved %v, err %v", q.moved, err)
			}
			if entries, _ := os.ReadDir(filepath.Join(store.dir)); !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasSuffix(e.Name(), ".idx") }) {
				t.Errorf("no index kept in %s", store.dir)
			}
		})
	}
}

// A setuid file the run left (the seccomp filter refuses making one; this
// is the check behind it) loses the bit; the user's own keeps it.
func TestTreeCheckSetid(t *testing.T) {
	ws := t.TempDir()
	own := filepath.Join(ws, "own")
	os.WriteFile(own, []byte("x"), 0o755)
	unix.Chmod(own, 0o4755)
	time.Sleep(60 * time.Millisecond)
	w, err := watchRoot(treeStore{dir: t.TempDir()}, ws, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(ws, "sub", "made")
	os.MkdirAll(filepath.Dir(made), 0o755)
	os.WriteFile(made, []byte("x"), 0o755)
	unix.Chmod(made, 0o6755)
	var q quarantine
	if err := w.check(&q); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{made: 0o755, own: 0o755 | os.ModeSetuid} {
		if st, err := os.Stat(p); err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", p, st.Mode(), want, q.warnings)
		}
	}
}

// With undo, the commit's list is all the run wrote: the check strips the
// set-ID bits of the files it names and reads no other file's mode in the
// directories that changed; with another run of the root not yet checked
// (its marker), it looks at every file again.
func TestTreeCheckSetidCommitted(t *testing.T) {
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("other-run-%v", other), func(t *testing.T) {
			ws, store := t.TempDir(), treeStore{dir: t.TempDir()}
			os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
			time.Sleep(60 * time.Millisecond)
			w, err := watchRoot(store, ws, time.Now(), nil)
			if err != nil {
				t.Fatal(err)
			}
			w.keep(nil)
			if other {
				// A live run of the same root, registered before this one.
				o, err := watchRoot(store, ws, time.Now().Add(-time.Second), nil)
				if err != nil {
					t.Fatal(err)
				}
				o.keep(nil)
				defer o.unregister()
			}
			committed, beside := filepath.Join(ws, "sub", "committed"), filepath.Join(ws, "sub", "beside")
			for _, p := range []string{committed, beside} {
				os.WriteFile(p, []byte("x"), 0o755)
				unix.Chmod(p, 0o4755)
			}
			w.committed = map[string]bool{"sub/committed": true}
			var q quarantine
			if err := w.check(&q); err != nil {
				t.Fatal(err)
			}
			besideWant := os.FileMode(0o755 | os.ModeSetuid)
			if other {
				besideWant = 0o755
			}
			for p, want := range map[string]os.FileMode{committed: 0o755, beside: besideWant} {
				if st, err := os.Stat(p); err != nil || st.Mode() != want {
					t.Errorf("%s: mode %v, want %v (%v)", p, st.Mode(), want, q.warnings)
				}
			}
		})
	}
}

// The commit-list shortcut also gives way to a run of another root that
// overlaps this one (a shell session whose workspace or --rw path lies
// inside it, a run whose forgebox died there): that run wrote the root's
// directories directly, and its marker lies under its own root's key.
func TestTreeCheckSetidCommittedNestedRun(t *testing.T) {
	ws, store := t.TempDir(), treeStore{dir: t.TempDir()}
	sub := filepath.Join(ws, "sub")
	os.MkdirAll(sub, 0o755)
	time.Sleep(60 * time.Millisecond)
	w, err := watchRoot(store, ws, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.keep(nil)
	// A live run of ws/sub, registered before this one.
	o, err := watchRoot(store, sub, time.Now().Add(-time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	o.keep(nil)
	defer o.unregister()
	planted := filepath.Join(sub, "planted")
	os.WriteFile(planted, []byte("x"), 0o755)
	unix.Chmod(planted, 0o4755)
	w.committed = map[string]bool{}
	var q quarantine
	if err := w.check(&q); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(planted); err != nil || st.Mode() != 0o755 {
		t.Errorf("%s: mode %v, want 0755: the set-ID bit a run of %s set stayed (%v)", planted, st.Mode(), sub, q.warnings)
	}
}

// The run's own markers of its other roots (the workspace and a --rw path
// are watched together) are not another run: the shortcut still applies.
func TestTreeCheckSetidCommittedOwnRoots(t *testing.T) {
	base, store := t.TempDir(), treeStore{dir: t.TempDir()}
	ws, rw := filepath.Join(base, "ws"), filepath.Join(base, "rw")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.MkdirAll(rw, 0o755)
	time.Sleep(60 * time.Millisecond)
	g, err := protect(ws, []string{ws, rw}, store, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	beside := filepath.Join(ws, "sub", "beside")
	os.WriteFile(beside, []byte("x"), 0o755)
	unix.Chmod(beside, 0o4755)
	g.committed(ws, map[string]bool{})
	var q quarantine
	if err := g.trees[0].check(&q); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(beside); err != nil || st.Mode() != 0o755|os.ModeSetuid {
		t.Errorf("%s: mode %v: the check looked past the commit's list, taking the run's own marker of %s for another run", beside, st.Mode(), rw)
	}
}

// A live run of a root that does not overlap this one (another project)
// leaves the shortcut on.
func TestTreeCheckSetidCommittedUnrelatedRun(t *testing.T) {
	base, store := t.TempDir(), treeStore{dir: t.TempDir()}
	ws, elsewhere := filepath.Join(base, "ws"), filepath.Join(base, "ws2")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.MkdirAll(elsewhere, 0o755)
	time.Sleep(60 * time.Millisecond)
	w, err := watchRoot(store, ws, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.keep(nil)
	o, err := watchRoot(store, elsewhere, time.Now().Add(-time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	o.keep(nil)
	defer o.unregister()
	beside := filepath.Join(ws, "sub", "beside")
	os.WriteFile(beside, []byte("x"), 0o755)
	unix.Chmod(beside, 0o4755)
	w.committed = map[string]bool{}
	var q quarantine
	if err := w.check(&q); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(beside); err != nil || st.Mode() != 0o755|os.ModeSetuid {
		t.Errorf("%s: mode %v: a run of %s turned the shortcut off", beside, st.Mode(), elsewhere)
	}
}

// alone reads every root's markers: its cost with 200 roots indexed, none
// of them live.
func BenchmarkAlone200Roots(b *testing.B) {
	store := treeStore{dir: b.TempDir()}
	base := b.TempDir()
	for i := range 200 {
		os.MkdirAll(store.key(filepath.Join(base, fmt.Sprint(i)))+".runs", 0o700)
	}
	ws := filepath.Join(base, "ws")
	os.MkdirAll(ws, 0o755)
	w, err := watchRoot(store, ws, time.Now(), nil)
	if err != nil {
		b.Fatal(err)
	}
	w.keep(nil)
	defer w.unregister()
	for b.Loop() {
		if !w.alone() {
			b.Fatal("not alone")
		}
	}
}
