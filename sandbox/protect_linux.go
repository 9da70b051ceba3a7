package sandbox

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgebox/forgebox/pathtree"
	"golang.org/x/sys/unix"
)

// nestedBinds bounds the nested protected entries (from the tree index)
// that get a read-only mount for the run. Mounts cost launch time; what is
// not mounted is still checked after the run (tree_check_linux.go).
const nestedBinds = 128

// guard finds the protected paths of the writable roots, holds the
// placeholders it makes, and checks the watched names after the run.
type guard struct {
	workspace string
	roots     []string
	budget    int
	paths     []protectedPath
	trees     []*rootWatch // the post-run check of every writable root
	watched   []watch
	held      []*placeholder
	copies    []*configCopy // private copies of configs (gitconfig_copy_linux.go)
	warnings  []string
}

// watch is a protected name checked after the run: missing at launch
// (nothing may appear there), or a symlink (it may not be replaced).
type watch struct {
	path   string
	link   string // the symlink's target; "" when the name was missing
	newGit bool   // a .git missing at launch: a repository made during the run
}

// protect discovers what must stay read-only inside the writable roots and
// makes the placeholders that hold missing Git names. Everything it makes
// on the host is undone by release.
//
// skip are host directories (with their inodes) the post-run check does
// not walk: private caches mounted over them, which the run cannot change.
func protect(workspace string, roots []string, store treeStore, start time.Time, skip map[string]uint64) (*guard, error) {
	return protectRun(workspace, roots, store, start, skip, "")
}

// protectRun is protect for a run whose changes wait in the undo record
// pending (undo.Pending.Dir) until its commit: its markers name the
// record, so that if forgebox dies, a later check of a root does not
// forget the run before the record is carried in (rootWatch.check).
func protectRun(workspace string, roots []string, store treeStore, start time.Time, skip map[string]uint64, pending string) (*guard, error) {
	g := &guard{workspace: workspace, roots: roots, budget: nestedBinds}
	for _, r := range roots {
		w, err := watchRoot(store, r, start, skip)
		if err != nil {
			g.release()
			return nil, err
		}
		w.pending = pending
		g.trees = append(g.trees, w)
		if err := g.root(r, r == workspace, w.ix); err != nil {
			g.release()
			return nil, err
		}
	}
	bound := make([]string, 0, len(g.paths))
	for _, p := range g.paths {
		bound = append(bound, p.Path)
	}
	own := map[string]bool{}
	for _, w := range g.trees {
		w.keep(bound)
		if w.warning != "" {
			g.warnings = append(g.warnings, w.warning)
		}
		if w.marker != "" {
			own[w.marker] = true
		}
	}
	for _, w := range g.trees {
		w.own = own
	}
	return g, nil
}

func (g *guard) root(r string, atWorkspace bool, ix *treeIndex) error {
	names := listDir(r) // one listing instead of a lookup per name
	if err := g.gitEntry(filepath.Join(r, ".git"), r, atWorkspace); err != nil {
		return err
	}
	for _, name := range append(slices.Clone(protectedFiles), protectedDirs...) {
		p := filepath.Join(r, name)
		if _, ok := names[name]; names != nil && !ok {
			if atWorkspace {
				g.watched = append(g.watched, watch{path: p})
			}
			continue
		}
		if err := g.add(p, atWorkspace); err != nil {
			return err
		}
	}
	for _, sub := range submodulePaths(r) {
		if err := g.gitEntry(filepath.Join(sub, ".git"), sub, false); err != nil {
			return err
		}
	}
	return g.nested(r, ix)
}

// gitEntry protects a repository's .git: a directory is pinned (bound onto
// itself, so it cannot be renamed away and replaced) and what Git executes
// from it made read-only; a .git file (worktree, submodule) is made
// read-only so that it cannot be pointed at a directory the command
// controls.
func (g *guard) gitEntry(dotgit, worktree string, atWorkspace bool) error {
	if slices.ContainsFunc(g.paths, func(p protectedPath) bool { return p.Path == dotgit }) {
		return nil
	}
	var st unix.Stat_t
	switch err := unix.Lstat(dotgit, &st); {
	case err == unix.ENOENT:
		if atWorkspace {
			g.watched = append(g.watched, watch{path: dotgit, newGit: true})
		}
		return nil
	case err != nil:
		return fmt.Errorf("inspect %s: %w", dotgit, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return g.symlink(dotgit, func(target string) error { return g.gitEntry(target, worktree, false) })
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return g.add(dotgit, false)
	}
	g.paths = append(g.paths, protectedPath{Path: dotgit, Dir: true, Pin: true, Dev: uint64(st.Dev), Ino: st.Ino})
	return g.gitDir(dotgit, uint64(st.Dev), st.Ino, worktree)
}

// gitDir protects what Git executes or follows from a Git directory and
// its submodules' (walkGitDir, the rule of every OS). A missing hooks
// directory or commondir is held by a placeholder, because a background
// git (an editor's `git status`) may act on them while the run is still
// going. dev and ino, when set, are the directory's identity as inspected.
func (g *guard) gitDir(dir string, dev, ino uint64, worktree string) error {
	return walkGitDir(dir, worktree, func(d string, level int, paths []gitProtected) error {
		if level > 0 {
			dev, ino = 0, 0
		}
		for _, p := range paths {
			switch {
			case p.File != nil && p.File.Hold:
				h, err := holdPlaceholder(d, dev, ino, p.File.Name, p.File.Dir)
				switch {
				case err == nil:
					g.held = append(g.held, h)
					g.paths = append(g.paths, protectedPath{Path: p.Path, Dir: p.File.Dir, Dev: h.dev, Ino: h.ino})
				case err == unix.EEXIST: // the real thing
					if err := g.add(p.Path, false); err != nil {
						return err
					}
				}
				// Otherwise forgebox may not create it, and neither may
				// the command: it runs with the same rights.
			case p.HooksPath && !g.inRoots(p.Path):
			default:
				if err := g.add(p.Path, false); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// add protects path when it exists. A missing path is watched when watch is
// set: what the run creates there is quarantined.
func (g *guard) add(path string, watched bool) error {
	if slices.ContainsFunc(g.paths, func(p protectedPath) bool { return p.Path == path }) {
		return nil
	}
	var st unix.Stat_t
	switch err := unix.Lstat(path, &st); {
	case err == unix.ENOENT:
		if watched {
			g.watched = append(g.watched, watch{path: path})
		}
		return nil
	case err != nil:
		return fmt.Errorf("inspect %s: %w", path, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return g.symlink(path, func(target string) error { return g.add(target, false) })
	}
	g.paths = append(g.paths, protectedPath{Path: path, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, Dev: uint64(st.Dev), Ino: st.Ino})
	return nil
}

// symlink handles a protected name that is a symlink. No mount can be put
// on a symlink, so the link itself is watched (replacing it is quarantined
// after the run), and its target is protected when it lies in a writable
// root (elsewhere it is read-only anyway).
func (g *guard) symlink(path string, protectTarget func(string) error) error {
	link, err := os.Readlink(path)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", path, err)
	}
	g.watched = append(g.watched, watch{path: path, link: link})
	target, err := filepath.EvalSymlinks(path)
	if err != nil || !g.inRoots(target) || slices.ContainsFunc(g.paths, func(p protectedPath) bool { return p.Path == target }) {
		return nil
	}
	return protectTarget(target)
}

// nested protects the protected entries below the root that the tree
// index knows of, nearest first, within a budget of mounts.
func (g *guard) nested(r string, ix *treeIndex) error {
	rels := make([]string, 0, len(ix.marks))
	for rel := range ix.marks {
		if strings.Contains(rel, "/") {
			rels = append(rels, rel)
		}
	}
	slices.SortFunc(rels, func(a, b string) int {
		return cmp.Or(relDepth(a)-relDepth(b), strings.Compare(a, b))
	})
	for _, rel := range rels {
		if g.budget == 0 {
			return nil
		}
		g.budget--
		p := filepath.Join(r, rel)
		var err error
		switch filepath.Base(rel) {
		case ".git":
			err = g.gitEntry(p, filepath.Dir(p), false)
		case "HEAD": // a bare repository
			err = g.gitDir(filepath.Dir(p), 0, 0, "")
		default:
			err = g.add(p, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (g *guard) inRoots(path string) bool {
	for _, r := range g.roots {
		if pathtree.Within(path, r) {
			return true
		}
	}
	return false
}

// release removes the placeholders no other run still holds.
// committed tells the post-run check of root which files the run wrote
// there (rootWatch.committed).
func (g *guard) committed(root string, files map[string]bool) {
	for _, w := range g.trees {
		if w.root == root {
			w.committed = files
		}
	}
}

func (g *guard) release() {
	for _, w := range g.trees {
		w.unregister()
	}
	for _, h := range g.held {
		h.release()
	}
	g.held = nil
	g.dropCopies()
}
