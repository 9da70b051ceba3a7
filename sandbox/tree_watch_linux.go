package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/undo"
	"golang.org/x/sys/unix"
)

// rootWatch is one writable root under the run's watch: its index, as
// loaded before the run, and the run's registration in the store.
type rootWatch struct {
	root string
	ix   *treeIndex
	// loaded is closed once ix.dirs is parsed: that happens while the
	// command runs, the check needs it only after.
	loaded chan struct{}
	bad    bool // the directories part of the file is damaged
	// warning says what the run lacks when the store cannot be used.
	warning string
	// bound are the paths this run keeps read-only (bind mounts): the run
	// cannot have changed them. Other live runs' come from their markers.
	bound  []string
	id     fileStamp // the index file as loaded
	store  treeStore
	marker string // this run's marker; "" without a store
	start  int64  // the run's start, in ns since the epoch
	// skip are directories below the root that are not walked, by
	// relative path, with their inode (treeIndex.skip).
	skip map[string]uint64
	// committed, when not nil, are the only entries the run wrote below
	// the root (relative paths): the command wrote the root through undo's
	// overlay, and the commit put exactly these in place (committedOnly).
	committed map[string]bool
	// own are the markers of this run, one per root it watches: not
	// another run for alone.
	own map[string]bool
	// pending is the run's undo record while it awaits its commit
	// (protectRun), named in the marker after pendingTag.
	pending string
}

// Tags start the entries of a marker that are not paths kept read-only
// (those are absolute): pendingTag names the run's undo record, rootTag
// the root the marker is of (its key does not say).
const (
	pendingTag = "undo-record:"
	rootTag    = "root:"
)

// overlaps reports whether the run of marker may have written below
// root: its root lies inside root or holds it, or the marker does not say.
func overlaps(marker, root string) bool {
	b, err := os.ReadFile(marker)
	if err != nil {
		return !os.IsNotExist(err) // gone: checked since
	}
	for _, e := range strings.Split(string(b), "\x00") {
		if r, ok := strings.CutPrefix(e, rootTag); ok {
			return pathtree.Within(r, root) || pathtree.Within(root, r)
		}
	}
	return true
}

// released reports whether a dead run's marker may go once its root is
// checked: a run whose changes still wait in its undo record has not
// reached the root yet, and the run that carries them in starts after
// they land (Begin commits before the guard is made).
func released(marker string) bool {
	b, err := os.ReadFile(marker)
	if err != nil {
		return true
	}
	for _, e := range strings.Split(string(b), "\x00") {
		if dir, ok := strings.CutPrefix(e, pendingTag); ok && undo.AwaitsCommit(dir) {
			return false
		}
	}
	return true
}

// watchRoot loads the index of root (building it when there is none) and
// registers the run, so that a later run checks what this one did even if
// forgebox is killed before its own check.
func watchRoot(store treeStore, root string, start time.Time, skip map[string]uint64) (*rootWatch, error) {
	w := &rootWatch{root: root, store: store, start: min(start.UnixNano(), coarseNow()), loaded: make(chan struct{})}
	for p, ino := range skip {
		if pathtree.Beneath(p, root) {
			if w.skip == nil {
				w.skip = map[string]uint64{}
			}
			rel, _ := filepath.Rel(root, p)
			w.skip[rel] = ino
		}
	}
	if store.dir != "" {
		key := store.key(root)
		w.marker = filepath.Join(key+".runs", fmt.Sprintf("%d-%d-%s", w.start, os.Getpid(), procStart(os.Getpid())))
		// The marker itself is written once, by keep, before the command
		// starts: a file creation costs a few tenths of a millisecond here.
		if err := os.MkdirAll(key+".runs", 0o700); err != nil {
			// Still checked after the run, against an index made now;
			// only a run whose forgebox is killed goes unchecked.
			w.warning = fmt.Sprintf("cannot keep the index of %s in %s (%v): this run indexes it from scratch, and if forgebox is killed before the run ends, what it planted there is not checked; set XDG_STATE_HOME to a writable directory", root, store.dir, err)
			w.store, w.marker = treeStore{}, ""
		}
		if f := readIndexFile(key+".idx", root); w.store.dir != "" && f != nil {
			w.ix, w.id = f.ix, f.id
			go func() {
				w.bad = !f.dirs()
				close(w.loaded)
			}()
		}
	}
	if w.ix == nil {
		close(w.loaded)
		w.ix = newTreeIndex(root)
		w.ix.setSkip(w.skip)
		if err := w.ix.build(); err != nil {
			w.unregister()
			return nil, fmt.Errorf("index %s: %w", root, err)
		}
		if w.store.dir != "" {
			if err := w.ix.save(w.store.key(root) + ".idx"); err != nil {
				w.unregister()
				w.warning = fmt.Sprintf("cannot keep the index of %s (%v): the next run indexes it from scratch, and if forgebox is killed before the run ends, what it planted there is not checked", root, err)
				w.store = treeStore{}
			}
		}
	}
	return w, nil
}

func (w *rootWatch) unregister() {
	if w.marker != "" {
		os.Remove(w.marker)
		w.marker = ""
	}
}

// procStart is a process's start time in clock ticks since boot, which
// tells a live process from a later one that reused its PID.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "0"
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 19 {
			return f[19]
		}
	}
	return "0"
}

// since is the earliest start among the runs of this root not yet
// checked: this one, concurrent ones, and runs whose forgebox died before
// checking. Markers of dead runs are returned to be removed once checked.
func (w *rootWatch) since(fine bool) (int64, []string, map[string]bool) {
	since, dead, bound := w.earliestStart()
	if !fine {
		since -= since%2e9 + 2e9
	}
	return since, dead, bound
}

// alone reports whether this run is the only one not yet checked: no other
// live run's marker and no dead one's, of this root or one that overlaps
// it. A root's markers lie under its own key, which does not say where it
// lies (the marker does, rootTag): a run of a root nested in this one, or
// holding it, wrote here directly too.
func (w *rootWatch) alone() bool {
	earliest, dead, _ := w.earliestStart()
	if len(dead) > 0 || earliest < w.start {
		return false
	}
	if w.store.dir == "" {
		return true
	}
	keys, err := os.ReadDir(w.store.dir)
	if err != nil {
		return false
	}
	for _, k := range keys {
		if !k.IsDir() || !strings.HasSuffix(k.Name(), ".runs") {
			continue
		}
		dir := filepath.Join(w.store.dir, k.Name())
		names, err := os.ReadDir(dir)
		if err != nil {
			return false
		}
		for _, n := range names {
			if p := filepath.Join(dir, n.Name()); p != w.marker && !w.own[p] && overlaps(p, w.root) {
				return false
			}
		}
	}
	return true
}

// earliestStart reads the markers of the runs not yet checked: the
// earliest start, the markers of dead runs, and the paths the live runs
// keep read-only.
func (w *rootWatch) earliestStart() (int64, []string, map[string]bool) {
	since := w.start
	bound := map[string]bool{}
	for _, p := range w.bound {
		bound[p] = true
	}
	if w.store.dir == "" {
		return since, nil, bound
	}
	dir := w.store.key(w.root) + ".runs"
	names, _ := os.ReadDir(dir)
	var dead []string
	for _, n := range names {
		f := strings.SplitN(n.Name(), "-", 3)
		if len(f) != 3 {
			continue
		}
		start, err1 := strconv.ParseInt(f[0], 10, 64)
		pid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		since = min(since, start)
		if pid != os.Getpid() && procStart(pid) != f[2] {
			dead = append(dead, filepath.Join(dir, n.Name()))
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, n.Name())); err == nil {
			for _, p := range strings.Split(string(b), "\x00") {
				if filepath.IsAbs(p) {
					bound[p] = true
				}
			}
		}
	}
	return since, dead, bound
}

// keep records the paths the run keeps read-only, in its marker for the
// checks of concurrent ones (a shell session's, while it lives).
func (w *rootWatch) keep(paths []string) {
	w.bound = paths
	if w.marker == "" {
		return
	}
	entries := append(slices.Clip(paths), rootTag+w.root)
	if w.pending != "" {
		entries = append(entries, pendingTag+w.pending)
	}
	if err := os.WriteFile(w.marker, []byte(strings.Join(entries, "\x00")), 0o600); err != nil {
		w.warning = fmt.Sprintf("cannot register the run in %s (%v): if forgebox is killed before the run ends, what it planted in %s is not checked", w.store.dir, err, w.root)
		os.Remove(w.marker)
		w.marker = ""
	}
}

// check finds what the run (or a run not yet checked) planted below the
// root and moves it aside; it updates the index and unregisters the run.
func (w *rootWatch) check(q *quarantine) error {
	defer w.unregister()
	<-w.loaded
	ix := w.ix
	if w.bad {
		ix = newTreeIndex(w.root)
		ix.setSkip(w.skip)
		if err := ix.build(); err != nil {
			return fmt.Errorf("index %s: %w", w.root, err)
		}
	}
	if w.store.dir != "" {
		key := w.store.key(w.root)
		lock, err := os.OpenFile(key+".lock", os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("lock the tree index of %s: %w", w.root, err)
		}
		defer lock.Close()
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
			return fmt.Errorf("lock the tree index of %s: %w", w.root, err)
		}
		// A concurrent run may have checked, and indexed, since.
		if stampOf(key+".idx") != w.id {
			if fresh := loadTreeIndex(key+".idx", w.root); fresh != nil {
				ix = fresh
			}
		}
	}
	if w.skip != nil {
		ix.setSkip(w.skip)
	}
	since, dead, bound := w.since(ix.fine)
	rootfd, err := unix.Open(w.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", w.root, err)
	}
	defer unix.Close(rootfd)
	c := treeCheck{ix: ix, rootfd: rootfd, since: since, q: q, judged: map[string]bool{}, buf: make([]byte, 32<<10), bound: bound}
	// The files a commit renamed in are the run's only writes; but a run
	// not yet checked (one live beside this, or one whose forgebox died)
	// may have written anything since its own start.
	if w.committed != nil && len(dead) == 0 {
		c.shortcut = func() map[string]bool {
			if w.alone() {
				return w.committed
			}
			return nil
		}
	}
	if err := c.run(); err != nil {
		return err
	}
	if w.store.dir != "" && ix.dirty {
		if err := ix.save(w.store.key(w.root) + ".idx"); err != nil {
			return err
		}
	}
	for _, m := range dead {
		if released(m) {
			os.Remove(m)
		}
	}
	return nil
}

// CheckNow runs the post-run check of the spec's writable roots while a
// run is still going: a shell session lives for hours, and what it planted
// must not wait for its end to be moved aside. since is when the earliest
// run to check started (the runs registered in the state directory count
// too).
func CheckNow(spec Spec, since time.Time) ([]Quarantined, []string, error) {
	_, ws, err := runDirs(spec)
	if err != nil {
		return nil, nil, err
	}
	l, _, err := runLayout(spec, ws)
	if err != nil {
		return nil, nil, err
	}
	q := quarantine{stamp: time.Now().Unix()}
	store := spec.treeStore()
	for _, r := range l.Writable {
		w := &rootWatch{root: r, store: store, start: since.UnixNano(), loaded: make(chan struct{})}
		close(w.loaded)
		if store.dir != "" {
			w.ix = loadTreeIndex(store.key(r)+".idx", r)
		}
		if w.ix == nil {
			// Nothing to compare with: whatever is there now is the
			// starting point of the next check.
			w.ix = newTreeIndex(r)
			w.bad = true
		}
		if err := w.check(&q); err != nil {
			q.warnings = append(q.warnings, fmt.Sprintf("could NOT check %s for planted repositories and configuration: %v", r, err))
		}
	}
	for _, m := range q.moved {
		q.warnings = append(q.warnings, fmt.Sprintf("the command created the protected path %s (%s); it was moved to %s", m.Path, m.Why, m.MovedTo))
	}
	return q.moved, q.warnings, nil
}
