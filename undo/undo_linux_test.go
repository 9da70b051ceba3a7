package undo

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hashTree is every entry's path, type, mode, content and link target.
func hashTree(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		info, _ := d.Info()
		fmt.Fprintf(h, "%s %v", rel, info.Mode())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			fmt.Fprintf(h, " -> %s", l)
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, " %x", sha256.Sum256(b))
		}
		h.Write([]byte{'\n'})
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An upper layer as overlay leaves it (a new file, a rewritten one, a
// whiteout, an opaque directory, a new directory, a mode change) is
// committed and undone byte-exactly; the undo of the undo redoes it.
func TestCommitAndUndo(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("whiteouts (character devices 0/0) need CAP_MKNOD: run as root")
	}
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	store := StoreFor(filepath.Join(root, "state"))
	write(t, filepath.Join(ws, "a.txt"), "a\n")
	write(t, filepath.Join(ws, "gone.txt"), "gone\n")
	write(t, filepath.Join(ws, "dir/x"), "x\n")
	write(t, filepath.Join(ws, "dir/y"), "y\n")
	write(t, filepath.Join(ws, "keep/k"), "k\n")
	os.Symlink("a.txt", filepath.Join(ws, "link"))
	before := hashTree(t, ws)

	p, err := store.Begin(ws, nil, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	up := p.Upper()
	write(t, filepath.Join(up, "a.txt"), "A\n")
	write(t, filepath.Join(up, "new/deep/n"), "n\n")
	if err := unix.Mknod(filepath.Join(up, "gone.txt"), unix.S_IFCHR, 0); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(up, "dir/z"), "z\n")
	if err := unix.Setxattr(filepath.Join(up, "dir"), "user.overlay.opaque", []byte("y"), 0); err != nil {
		t.Skipf("user xattrs: %v", err)
	}
	os.Mkdir(filepath.Join(up, "keep"), 0o700)
	m, err := p.Commit(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Summary, (Summary{Created: 2, Modified: 1, Deleted: 3, Bytes: 6}); got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "A\n" {
		t.Fatalf("a.txt after commit: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "dir/x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the opaque dir kept the workspace's dir/x: %v", err)
	}
	if n, _ := unix.Lgetxattr(filepath.Join(ws, "dir"), "user.overlay.opaque", make([]byte, 4)); n > 0 {
		t.Error("overlay's xattr reached the workspace")
	}
	after := hashTree(t, ws)

	// A later change is refused, then forced.
	write(t, filepath.Join(ws, "new/deep/n"), "later\n")
	if _, err := store.Undo(m, false, time.Now()); !errors.As(err, new(*ConflictError)) {
		t.Fatalf("undo over a later change: %v, want a ConflictError", err)
	}
	write(t, filepath.Join(ws, "new/deep/n"), "n\n") // a new inode: still a conflict
	u, err := store.Undo(m, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := hashTree(t, ws); got != before {
		t.Fatal("the workspace after undo differs from before the run")
	}
	if _, err := store.Undo(u, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := hashTree(t, ws); got != after {
		t.Fatal("undoing the undo did not redo the run")
	}
}

// Check refuses a store inside the workspace and changes nothing.
func TestCheckStoreInsideWorkspace(t *testing.T) {
	ws := t.TempDir()
	s := StoreFor(filepath.Join(ws, "state", "forgebox"))
	if err := s.Check(ws); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Check = %v, want ErrUnavailable", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "state")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Check made the store's directories: %v", err)
	}
}

// A directory of the workspace that is a symlink when the commit gets to
// it is replaced, never followed: nothing moves outside the workspace. And
// the directories a commit renames in are opened without following a
// symlink (what closes the race between its lstat and its rename).
func TestCommitNeverFollowsSymlinks(t *testing.T) {
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	store := StoreFor(filepath.Join(root, "state"))
	write(t, filepath.Join(ws, "sub/f"), "old\n")
	write(t, filepath.Join(outside, "f"), "outside\n")
	p, err := store.Begin(ws, nil, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.Upper(), "sub/f"), "new\n")
	write(t, filepath.Join(p.Upper(), "sub/g"), "new\n")
	if err := os.RemoveAll(filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(time.Now()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "outside\n" {
		t.Errorf("outside/f = %q: the commit wrote outside the workspace", b)
	}
	if _, err := os.Lstat(filepath.Join(outside, "g")); err == nil {
		t.Error("the commit created outside/g")
	}
	if st, err := os.Lstat(filepath.Join(ws, "sub")); err != nil || !st.IsDir() {
		t.Errorf("ws/sub after the commit: %v %v; want the run's directory", st, err)
	}
	os.RemoveAll(filepath.Join(ws, "sub"))
	os.Symlink(outside, filepath.Join(ws, "sub"))
	d, err := openHostDirs(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if p, err := d.path("sub/f"); err == nil {
		t.Errorf("path(sub/f) through a symlink = %s; want an error", p)
	}
}

// A repository's .git/index that changed after the run (any git status
// rewrites it) does not stop the undo: it is overwritten, and the version
// it replaces is kept in the undo's record.
func TestUndoOverwritesGitIndex(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	store := StoreFor(filepath.Join(root, "state"))
	write(t, filepath.Join(ws, ".git/index"), "before\n")
	write(t, filepath.Join(ws, "a"), "a\n")
	p, err := store.Begin(ws, nil, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.Upper(), ".git/index"), "run\n")
	write(t, filepath.Join(p.Upper(), "a"), "A\n")
	m, err := p.Commit(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, ".git/index"), "refreshed\n")
	_, cf, err := store.Plan(m)
	if err != nil || len(cf) != 1 || !cf[0].Kept || len(Blocking(cf)) != 0 {
		t.Fatalf("Plan: %+v %v; want one kept conflict on .git/index", cf, err)
	}
	u, err := store.Undo(m, false, time.Now())
	if err != nil {
		t.Fatalf("undo over a refreshed .git/index: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git/index")); string(b) != "before\n" {
		t.Fatalf(".git/index after undo = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(u.Dir(), "before", ".git/index")); string(b) != "refreshed\n" {
		t.Fatalf("the undo's record holds .git/index %q; want the refreshed one", b)
	}
	// Another path changed since still refuses.
	if _, err := store.Undo(u, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "a"), "person\n")
	last, _ := store.Last(ws)
	if last == nil {
		t.Fatal("no record left to undo")
	}
	if _, err := store.Undo(last, false, time.Now()); !errors.As(err, new(*ConflictError)) {
		t.Fatalf("undo over the person's a: %v, want a ConflictError", err)
	}
}

// A record keeps --rw roots beside the workspace: each root's upper layer
// is carried into that root, the conflicts name the root's absolute
// paths, and an undo restores every root byte-exactly (its own undo
// redoes them). A root dropped (its overlay refused) keeps its index and
// nothing of it is touched.
func TestCommitAndUndoRwRoots(t *testing.T) {
	root := t.TempDir()
	ws, rw, dropped := filepath.Join(root, "ws"), filepath.Join(root, "srv"), filepath.Join(root, "other")
	store := StoreFor(filepath.Join(root, "state"))
	write(t, filepath.Join(ws, "a.txt"), "a\n")
	write(t, filepath.Join(rw, "data/db"), "db\n")
	write(t, filepath.Join(rw, "keep"), "keep\n")
	write(t, filepath.Join(dropped, "o"), "o\n")
	hashes := func() [3]string { return [3]string{hashTree(t, ws), hashTree(t, rw), hashTree(t, dropped)} }
	before := hashes()

	p, err := store.Begin(ws, []string{dropped, rw}, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Roots()) != 2 || p.RootDir(1) != filepath.Join(p.Dir(), "rw", "2") {
		t.Fatalf("roots %q, part of %s: %s", p.Roots(), rw, p.RootDir(1))
	}
	if !p.Drop(dropped) {
		t.Fatal("Drop of one --rw root left nothing to keep")
	}
	write(t, filepath.Join(p.Upper(), "a.txt"), "A\n")
	write(t, filepath.Join(p.RootDir(1), "upper", "data/db"), "DB\n")
	write(t, filepath.Join(p.RootDir(1), "upper", "new/n"), "n\n")
	// What lies in a dropped root's upper layer is not carried.
	write(t, filepath.Join(p.RootDir(0), "upper", "stray"), "x\n")
	m, err := p.Commit(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(m.Roots) != fmt.Sprint([]string{"", rw}) {
		t.Errorf("manifest roots %q", m.Roots)
	}
	if got, want := m.Summary, (Summary{Created: 1, Modified: 2, Bytes: 7}); got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "data/db")); string(b) != "DB\n" {
		t.Fatalf("--rw root after commit: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dropped, "stray")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a dropped root's upper layer was carried in")
	}
	after := hashes()

	ch, _, err := store.Plan(m)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range ch {
		found = found || c.Path == filepath.Join(rw, "new") && c.Action == "remove"
	}
	if !found {
		t.Errorf("plan %+v does not name %s by its absolute path", ch, filepath.Join(rw, "new"))
	}
	// A later change in the --rw root is refused, named absolutely.
	write(t, filepath.Join(rw, "new/n"), "later\n")
	var ce *ConflictError
	if _, err := store.Undo(m, false, time.Now()); !errors.As(err, &ce) || ce.Conflicts[0].Path != filepath.Join(rw, "new/n") {
		t.Fatalf("undo over a later change in --rw: %v", err)
	}
	if hashes() == before {
		t.Fatal("a refused undo changed something")
	}
	write(t, filepath.Join(rw, "new/n"), "n\n")
	u, err := store.Undo(m, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := hashes(); got != before {
		t.Fatalf("after undo: %v, want %v", got, before)
	}
	if _, err := store.Undo(u, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := hashes(); got[0] != after[0] || got[2] != after[2] {
		t.Fatal("undoing the undo did not redo the run")
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "new/n")); string(b) != "n\n" {
		t.Fatalf("redo of --rw: %q", b)
	}
}

// A run whose forgebox died before its commit is carried in by the next
// run in the workspace, its --rw roots included (read from the record).
func TestRecoverKeepsRwRoots(t *testing.T) {
	root := t.TempDir()
	ws, rw := filepath.Join(root, "ws"), filepath.Join(root, "s rv\nx")
	store := StoreFor(filepath.Join(root, "state"))
	write(t, filepath.Join(ws, "a"), "a\n")
	write(t, filepath.Join(rw, "b"), "b\n")
	p, err := store.Begin(ws, []string{rw}, "died", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.RootDir(0), "upper", "b"), "B\n")
	p.held.Close() // forgebox dies: its lock goes, nothing is committed
	next, err := store.Begin(ws, nil, "next", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer next.Discard()
	if len(next.Recovered) != 1 {
		t.Fatalf("recovered %q, want the dead run's record", next.Recovered)
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "b")); string(b) != "B\n" {
		t.Fatalf("the dead run's change to --rw: %q", b)
	}
	m, err := store.Find(ws, next.Recovered[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Undo(m, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "b")); string(b) != "b\n" {
		t.Fatalf("--rw after undo of the recovered run: %q", b)
	}
}

// Where the kernel refuses the hard link (here: another file system),
// keepFile copies the file, up to maxCopy; a larger one is refused with a
// reason, and nothing is left at the destination.
func TestKeepFileCopiesUpToTheCap(t *testing.T) {
	src, err := os.MkdirTemp("/dev/shm", "fbkeep-")
	if err != nil {
		t.Skipf("no tmpfs at /dev/shm: %v", err)
	}
	defer os.RemoveAll(src)
	dst := t.TempDir()
	if same, _ := sameFS(src, dst); same {
		t.Skip("/dev/shm and the test's temporary directory are one file system")
	}
	small, big := filepath.Join(src, "small"), filepath.Join(src, "big")
	write(t, small, "small\n")
	os.Chmod(small, 0o640)
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxCopy+1); err != nil {
		t.Fatal(err)
	}
	if err := keepFile(small, filepath.Join(dst, "small")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "small")); string(b) != "small\n" {
		t.Fatalf("copy: %q", b)
	}
	if st, _ := os.Stat(filepath.Join(dst, "small")); st.Mode().Perm() != 0o640 {
		t.Errorf("copy mode %v, want 0640", st.Mode().Perm())
	}
	err = keepFile(big, filepath.Join(dst, "big"))
	if err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("a file over maxCopy: %v, want a refusal", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "big")); err == nil {
		t.Error("a refused copy left a file behind")
	}
}

// The file tools' snapshot while a directory on the way is swapped, over
// and over, with a symlink to a directory outside the workspace
// (RENAME_EXCHANGE, as a sandboxed command can): a snapshot either fails
// or keeps the workspace's file, never the outside one, so that no undo
// can bring a hard link to an outside file into the workspace; and the
// outside file is unchanged.
func TestSnapshotUnderParentSwap(t *testing.T) {
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	store := StoreFor(filepath.Join(root, "state"))
	write(t, filepath.Join(ws, "d/f"), "inside\n")
	write(t, filepath.Join(outside, "f"), "outside\n")
	if err := os.Symlink(outside, filepath.Join(ws, "swap")); err != nil {
		t.Fatal(err)
	}
	var out unix.Stat_t
	if err := unix.Stat(filepath.Join(outside, "f"), &out); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				swapped <- n
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, filepath.Join(ws, "d"), unix.AT_FDCWD, filepath.Join(ws, "swap"), unix.RENAME_EXCHANGE) == nil {
				n++
			}
		}
	}()
	kept, failed := 0, 0
	for i := 0; i < 2000; i++ {
		sn, err := store.Snapshot(ws, "write_file d/f", []string{"d/f"}, time.Now())
		if err != nil {
			failed++
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(sn.dir, "before", "d", "f"), &st); err == nil {
			kept++
			if st.Ino == out.Ino && st.Dev == out.Dev {
				close(stop)
				<-swapped
				t.Fatalf("snapshot %d kept the file outside the workspace", i)
			}
		}
		sn.Discard()
	}
	close(stop)
	n := <-swapped
	if n < 100 {
		t.Fatalf("only %d swaps happened: the race was not run", n)
	}
	var after unix.Stat_t
	unix.Stat(filepath.Join(outside, "f"), &after)
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "outside\n" || after.Nlink != 1 {
		t.Fatalf("the outside file changed: %q, %d links", b, after.Nlink)
	}
	t.Logf("%d swaps; %d snapshots kept the workspace's file, %d failed", n, kept, failed)
}
