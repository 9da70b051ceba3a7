package integration

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// edit_file, through forgebox serve, changes only what write_file may: an
// edit through a link to the host, of a git hook or git's config, or
// through a parent directory renamed to a link (once, and swapped back and
// forth while edits run) is refused, and the host's files keep their
// content and mode, hashed before and after. An edit of a hard link to a
// host file replaces the link, not the host file.
func TestServeEditAttacks(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		victim := filepath.Join(e.outside, "victim.txt")
		e.write(victim, "VICTIM\n")
		e.write(filepath.Join(e.ws, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n")
		e.write(filepath.Join(e.ws, ".git", "config"), "[core]\n")
		e.write(filepath.Join(e.ws, "sub", "victim.txt"), "inside\n")
		e.write(filepath.Join(e.ws, "ok.sh"), "#!/bin/sh\necho one\n")
		os.Chmod(filepath.Join(e.ws, "ok.sh"), 0o750)
		for _, l := range [][2]string{{victim, "link.txt"}, {e.outside, "out"}, {"../outside/victim.txt", "rel.txt"}} {
			if err := os.Symlink(l[0], filepath.Join(e.ws, l[1])); err != nil {
				t.Fatal(err)
			}
			e.chown(filepath.Join(e.ws, l[1]))
		}
		if err := os.Link(victim, filepath.Join(e.ws, "hard.txt")); err != nil {
			t.Fatal(err)
		}
		hook, config := filepath.Join(e.ws, ".git", "hooks", "pre-commit"), filepath.Join(e.ws, ".git", "config")
		guarded := []string{victim, hook, config}
		before := hashFiles(t, guarded)

		c := e.serveMCP(nil)
		edit := func(path, old string) (bool, string) {
			res, text := c.call("edit_file", map[string]any{"path": path, "old_string": old, "new_string": "pwned"}, nil)
			return res.IsError, text
		}
		for _, a := range []struct{ path, old, want string }{
			{"link.txt", "VICTIM", "symbolic link"},
			{"rel.txt", "VICTIM", "symbolic link"},
			{"out/victim.txt", "VICTIM", "outside"},
			{"../outside/victim.txt", "VICTIM", "outside"},
			{victim, "VICTIM", "outside"},
			{".git/hooks/pre-commit", "exit 0", "protected"},
			{".git/config", "[core]", "protected"},
			{".git//hooks/../hooks/pre-commit", "exit 0", "protected"},
		} {
			if refused, text := edit(a.path, a.old); !refused || !strings.Contains(text, a.want) {
				t.Errorf("edit_file %s: refused %v, %q; want refused (%s)", a.path, refused, text, a.want)
			}
		}
		checkHashes(t, guarded, before)

		// A hard link is replaced, not written through.
		if refused, text := edit("hard.txt", "VICTIM"); refused {
			t.Errorf("edit_file hard.txt: %s", text)
		}
		checkHashes(t, guarded, before)

		// The parent renamed to a link to the host.
		sub := filepath.Join(e.ws, "sub")
		if err := os.Rename(sub, sub+".real"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(e.outside, sub); err != nil {
			t.Fatal(err)
		}
		if refused, text := edit("sub/victim.txt", "VICTIM"); !refused || !strings.Contains(text, "outside") {
			t.Errorf("edit_file through a parent renamed to a link: refused %v, %q", refused, text)
		}
		checkHashes(t, guarded, before)

		// The parent swapped with the link, without pause, while edits run.
		var swaps atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, sub+".real", unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("exchange: %v", err)
					return
				}
				swaps.Add(1)
			}
		}()
		edits := 0
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); edits++ {
			// The workspace's own file does not hold the old text: any
			// edit that succeeds went to the host.
			if refused, text := edit("sub/victim.txt", "VICTIM"); !refused {
				t.Errorf("edit_file during the swaps succeeded: %s", text)
				break
			}
		}
		close(stop)
		wg.Wait()
		checkHashes(t, guarded, before)
		t.Logf("%d swaps during %d edits", swaps.Load(), edits)

		// An ordinary edit works, and keeps the mode.
		if refused, text := c.call("edit_file", map[string]any{"path": "ok.sh", "old_string": "one", "new_string": "two"}, nil); refused.IsError {
			t.Fatalf("edit_file ok.sh: %s", text)
		}
		fi, err := os.Stat(filepath.Join(e.ws, "ok.sh"))
		if b, _ := os.ReadFile(filepath.Join(e.ws, "ok.sh")); err != nil || string(b) != "#!/bin/sh\necho two\n" || fi.Mode().Perm() != 0o750 {
			t.Errorf("ok.sh after edit_file: %q, %v", b, fi.Mode())
		}
	})
}

// hashFiles is each file's content and mode, hashed.
func hashFiles(t *testing.T, paths []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		m[p] = fmt.Sprintf("%x %v", sha256.Sum256(b), fi.Mode())
	}
	return m
}

func checkHashes(t *testing.T, paths []string, before map[string]string) {
	t.Helper()
	for p, h := range hashFiles(t, paths) {
		if h != before[p] {
			t.Fatalf("%s changed: %s, was %s", p, h, before[p])
		}
	}
}
