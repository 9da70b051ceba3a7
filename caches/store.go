package caches

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgebox/forgebox/rmtree"
)

// Root is where the private caches live, given forgebox's state directory.
func Root(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, "caches")
}

// Key names a workspace's caches: a hash of its resolved path, so that
// the same project finds its caches again and no path needs escaping.
func Key(workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return hex.EncodeToString(sum[:8])
}

// Layout of one workspace's caches: <root>/<key>/workspace holds its path
// (for people and for cache clear --workspace), <root>/<key>/used is
// touched by every run (least recently used goes first), and each entry
// has <name>/upper (what runs wrote) and <name>/work (overlay's scratch).
const (
	workspaceFile = "workspace"
	usedFile      = "used"
	lockFile      = "lock"
	bootFile      = "boot"
	upperDir      = "upper"
	workDir       = "work"
)

// Workspace is one workspace's private caches.
type Workspace struct {
	Root, Key string
}

// For returns the caches of workspace under root.
func For(root, workspace string) Workspace { return Workspace{Root: root, Key: Key(workspace)} }

// Dir is the workspace's directory.
func (w Workspace) Dir() string { return filepath.Join(w.Root, w.Key) }

// Entry is the directory of one table entry: Upper and Work beneath it.
func (w Workspace) Entry(name string) string { return filepath.Join(w.Root, w.Key, name) }

// Upper is where a run's writes to the entry land.
func (w Workspace) Upper(name string) string { return filepath.Join(w.Entry(name), upperDir) }

// Prepare makes the directories of the named entries (0700; what exists
// is left as it is) and marks the workspace used now. It refuses a
// directory on the way that is a symlink: the child would refuse it later
// anyway, and a clear error is better.
func (w Workspace) Prepare(workspace string, names []string, now time.Time) error {
	for _, d := range []string{w.Root, w.Dir()} {
		if err := mkdirPrivate(d); err != nil {
			return err
		}
	}
	wf := filepath.Join(w.Dir(), workspaceFile)
	if b, err := os.ReadFile(wf); err != nil || string(b) != workspace+"\n" {
		if err := os.WriteFile(wf, []byte(workspace+"\n"), 0o600); err != nil {
			return fmt.Errorf("private cache: %w", err)
		}
	}
	crashed := w.sinceBoot()
	for _, n := range names {
		if crashed {
			w.discardVolatile(n)
		}
		for _, d := range []string{w.Entry(n), w.Upper(n), filepath.Join(w.Entry(n), workDir)} {
			if err := mkdirPrivate(d); err != nil {
				return err
			}
		}
		if st, err := os.Lstat(filepath.Join(w.Entry(n), workDir, "work")); err == nil && st.Mode().Perm() != 0o700 {
			// Left by a run whose forgebox did not get to Release.
			w.unmarkVolatile(n)
		}
	}
	// Once a minute is precise enough for least recently used, and spares
	// the launch a metadata write (which waits for the journal when the
	// disk is busy).
	if st, err := os.Stat(filepath.Join(w.Dir(), usedFile)); err == nil && now.Sub(st.ModTime()) < time.Minute && !now.Before(st.ModTime()) {
		return nil
	}
	return touch(filepath.Join(w.Dir(), usedFile), now)
}

// WorkDir is the overlay work directory (beneath the entry) of a run:
// "work", or for a run that shares the caches with another (Hold) one of
// its own, made here. Two overlays must not share a work directory: each
// mount cleans it, and a volatile one leaves a mark that refuses the next
// mount while it is there.
func (w Workspace) WorkDir(name string, shared bool, run int) (string, error) {
	if !shared {
		return workDir, nil
	}
	d := fmt.Sprintf("%s-%d", workDir, run)
	return d, mkdirPrivate(filepath.Join(w.Entry(name), d))
}

// Release is called once the run's mounts are gone: it removes the marks
// overlay left in the work directories of the named entries (or a run's
// own work directories), off the launch path of the next run.
func (w Workspace) Release(names []string, work string) {
	for _, n := range names {
		if work != "" && work != workDir && !strings.ContainsAny(work, "/.") {
			removeTree(filepath.Join(w.Entry(n), work))
			continue
		}
		w.unmarkVolatile(n)
	}
}

// The sandbox mounts the overlays "volatile": at unmount, overlay does not
// sync the whole upper file system (most of the cost a run's caches added).
// After a crash an upper layer may then lack what its run wrote; overlay
// leaves work/work/incompat/volatile in a volatile mount's work directory
// and refuses the next mount while it is there
// (Documentation/filesystems/overlayfs.rst, "Volatile mount"). Within one
// boot the mark means nothing (whatever the run wrote is in the page
// cache): it is removed. After a reboot, which a crash implies, a cache
// that was mounted volatile is discarded: a damaged cache entry could
// break a build.

// sinceBoot reports whether the workspace's caches were last prepared
// before the current boot, and records the current one.
func (w Workspace) sinceBoot() bool {
	cur, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return false // not Linux: no overlays either
	}
	p := filepath.Join(w.Dir(), bootFile)
	last, err := os.ReadFile(p)
	if err == nil && string(last) == string(cur) {
		return false
	}
	os.WriteFile(p, cur, 0o600)
	return err == nil
}

func (w Workspace) volatileMark(name string) string {
	return filepath.Join(w.Entry(name), workDir, "work", "incompat", "volatile")
}

func (w Workspace) discardVolatile(name string) {
	if _, err := os.Lstat(filepath.Join(w.Entry(name), workDir, "work")); err == nil {
		removeTree(w.Entry(name))
	}
}

func (w Workspace) unmarkVolatile(name string) {
	work := filepath.Join(w.Entry(name), workDir, "work")
	if os.Chmod(work, 0o700) != nil {
		return // never mounted
	}
	// overlay makes its directories there mode 0, and the mark is not
	// empty.
	incompat := filepath.Dir(w.volatileMark(name))
	if os.Chmod(incompat, 0o700) == nil {
		os.Chmod(w.volatileMark(name), 0o700)
		os.RemoveAll(incompat)
	}
}

func mkdirPrivate(d string) error {
	err := os.Mkdir(d, 0o700)
	if errors.Is(err, fs.ErrNotExist) {
		err = os.MkdirAll(d, 0o700)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("private cache: %w", err)
	}
	st, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("private cache: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("private cache: %s is not a directory", d)
	}
	return nil
}

func touch(p string, now time.Time) error {
	if err := os.Chtimes(p, now, now); err == nil {
		return nil
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("private cache: %w", err)
	}
	f.Close()
	return os.Chtimes(p, now, now)
}

// Info describes one workspace's caches.
type Info struct {
	Key       string    `json:"key"`
	Workspace string    `json:"workspace"`
	Bytes     int64     `json:"bytes"`
	LastUsed  time.Time `json:"last_used"`
	// Entries are the entries the workspace has, with their sizes.
	Entries map[string]int64 `json:"entries,omitempty"`
}

// List measures every workspace's caches under root (a walk of each).
func List(root string) ([]Info, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return []Info{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Info{}
	for _, e := range ents {
		if !e.IsDir() || !isKey(e.Name()) {
			continue
		}
		out = append(out, describe(Workspace{Root: root, Key: e.Name()}))
	}
	return out, nil
}

func isKey(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func describe(w Workspace) Info {
	in := Info{Key: w.Key, Entries: map[string]int64{}}
	if b, err := os.ReadFile(filepath.Join(w.Dir(), workspaceFile)); err == nil {
		in.Workspace = strings.TrimSuffix(string(b), "\n")
	}
	if st, err := os.Stat(filepath.Join(w.Dir(), usedFile)); err == nil {
		in.LastUsed = st.ModTime()
	}
	ents, _ := os.ReadDir(w.Dir())
	for _, e := range ents {
		if e.IsDir() {
			n := diskUsage(w.Entry(e.Name()))
			in.Entries[e.Name()] = n
			in.Bytes += n
		}
	}
	return in
}

// Clear removes one workspace's caches. It refuses while a run holds them.
func (w Workspace) Clear() error {
	l, err := lockExclusive(w)
	if err != nil {
		return err
	}
	defer l.Close()
	return removeTree(w.Dir())
}

// ClearAll removes the caches of every workspace no run holds; busy lists
// the workspaces left in place.
func ClearAll(root string) (busy []string, err error) {
	list, err := List(root)
	if err != nil {
		return nil, err
	}
	for _, in := range list {
		if err := (Workspace{Root: root, Key: in.Key}).Clear(); errors.Is(err, ErrBusy) {
			busy = append(busy, cmpOr(in.Workspace, in.Key))
		} else if err != nil {
			return busy, err
		}
	}
	os.Remove(filepath.Join(root, usageFile))
	return busy, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ErrBusy is returned when a run is using the caches to be removed.
var ErrBusy = errors.New("a run is using these caches")

// removeTree removes a workspace's private cache (rmtree: Go's module
// cache is read-only by design, and overlay's work directory is mode 0).
func removeTree(dir string) error {
	if err := rmtree.All(dir); err != nil {
		return fmt.Errorf("remove private cache: %w", err)
	}
	return nil
}
