package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Protected paths on Windows. What exists at the start is made read-only
// to the run by ACEs that name its SID (conpty.Plan.Protect): a protected
// path, and each directory between it and its root, cannot be written,
// deleted or renamed away. What is missing at the workspace root is
// watched: whatever the run created there is moved aside once the tree is
// dead, as on Linux.
//
// What is protected in and from a Git directory is the rule of every OS
// (walkGitDir: hooks, config, commondir, core.hooksPath, linked worktrees'
// and submodules' Git files; submodules .gitmodules lists), and a
// repository made during the run has its config vetted by the same
// allowlist (configTextRisk). Narrower than on Linux: a missing
// .git/hooks or .git/commondir is not held by a placeholder while the run
// goes on (a git outside the sandbox could act on what the command plants
// there before it is moved aside).

// protectedRel is a protected path below a writable root.
type protectedRel struct {
	rel []string
	dir bool
}

// winWatch is a protected name missing at the start.
type winWatch struct {
	path   string
	newGit bool // a .git: a repository made during the run
}

// winGuard holds the protected paths of a run's writable roots.
type winGuard struct {
	roots     []string
	byRoot    map[string][]protectedRel
	protected []string
	watched   []winWatch
	budget    int
}

// Nested repositories are looked for near the top, as on Linux.
const (
	winScanMaxDepth = 2
	winScanMaxDirs  = 200
)

// winScanSkip are directories the nested-repository scan does not enter
// (the list of protect_linux.go).
var winScanSkip = []string{"node_modules", ".cache", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
	".pytest_cache", ".gradle", ".npm", ".cargo", ".rustup", "target", ".terraform"}

// protectWindows finds the protected paths of the writable roots; names
// missing at the workspace root are watched.
func protectWindows(workspace string, roots []string) (*winGuard, error) {
	g := &winGuard{roots: roots, byRoot: map[string][]protectedRel{}, budget: winScanMaxDirs}
	for _, r := range roots {
		at := strings.EqualFold(r, workspace)
		if err := g.gitEntry(r, nil, at); err != nil {
			return nil, err
		}
		for _, sub := range submodulePaths(r) {
			if rel, ok := relBelow(r, sub); ok {
				if err := g.gitEntry(r, rel, false); err != nil {
					return nil, err
				}
			}
		}
		for _, name := range append(slices.Clone(protectedFiles), protectedDirs...) {
			p := filepath.Join(r, name)
			st, err := os.Lstat(p)
			switch {
			case err == nil:
				g.add(r, []string{name}, st.IsDir() || st.Mode()&fs.ModeIrregular != 0)
			case os.IsNotExist(err) && at:
				g.watched = append(g.watched, winWatch{path: p})
			case !os.IsNotExist(err):
				return nil, fmt.Errorf("inspect %s: %w", p, err)
			}
		}
		if err := g.scan(r, nil); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// gitEntry protects the .git of the repository at rel under root.
func (g *winGuard) gitEntry(root string, rel []string, atWorkspace bool) error {
	gitRel := append(slices.Clone(rel), ".git")
	dotgit := filepath.Join(root, filepath.Join(gitRel...))
	st, err := os.Lstat(dotgit)
	switch {
	case os.IsNotExist(err):
		if atWorkspace {
			g.watched = append(g.watched, winWatch{path: dotgit, newGit: true})
		}
		return nil
	case err != nil:
		return fmt.Errorf("inspect %s: %w", dotgit, err)
	case !st.Mode().IsDir():
		// A .git file (worktree, submodule) or link: read-only, so that it
		// cannot be pointed at a directory the command controls.
		g.add(root, gitRel, st.Mode()&fs.ModeIrregular != 0)
		return nil
	}
	worktree := filepath.Join(root, filepath.Join(rel...))
	return walkGitDir(dotgit, worktree, func(_ string, _ int, paths []gitProtected) error {
		for _, p := range paths {
			r, prel, ok := g.rootOf(p.Path)
			if !ok {
				continue // outside the writable roots the run cannot write it anyway
			}
			st, err := os.Lstat(p.Path)
			switch {
			case err == nil:
				g.add(r, prel, st.IsDir() || st.Mode()&fs.ModeIrregular != 0)
			case os.IsNotExist(err) && p.File != nil && p.File.Hold:
				g.watched = append(g.watched, winWatch{path: p.Path})
			case !os.IsNotExist(err):
				return fmt.Errorf("inspect %s: %w", p.Path, err)
			}
		}
		return nil
	})
}

// rootOf finds the writable root p lies beneath, and p's components
// below it.
func (g *winGuard) rootOf(p string) (string, []string, bool) {
	for _, r := range g.roots {
		if rel, ok := relBelow(r, p); ok {
			return r, rel, true
		}
	}
	return "", nil, false
}

// relBelow is p's components below root, when p lies strictly beneath it
// (compared as Windows does, ignoring case).
func relBelow(root, p string) ([]string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, false
	}
	return strings.Split(rel, string(filepath.Separator)), true
}

// scan looks for nested repositories below rel, within the budget.
func (g *winGuard) scan(root string, rel []string) error {
	if len(rel) >= winScanMaxDepth {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.Join(rel...)))
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !e.IsDir() || e.Type()&(fs.ModeSymlink|fs.ModeIrregular) != 0 || e.Name() == ".git" || slices.Contains(winScanSkip, e.Name()) {
			continue
		}
		if g.budget--; g.budget < 0 {
			return nil
		}
		sub := append(slices.Clone(rel), e.Name())
		if err := g.gitEntry(root, sub, false); err != nil {
			return err
		}
		if err := g.scan(root, sub); err != nil {
			return err
		}
	}
	return nil
}

// add protects the entry at rel (its components, as listed) under root.
func (g *winGuard) add(root string, rel []string, dir bool) {
	for _, x := range g.byRoot[root] {
		if slices.Equal(x.rel, rel) {
			return
		}
	}
	g.byRoot[root] = append(g.byRoot[root], protectedRel{rel: slices.Clone(rel), dir: dir})
	g.protected = append(g.protected, filepath.Join(root, filepath.Join(rel...)))
}

// afterRun moves aside what the run planted at watched names. It runs once
// the tree is dead.
func (g *winGuard) afterRun(now time.Time) ([]Quarantined, []string) {
	q := winQuarantine{stamp: now.Unix()}
	for _, w := range g.watched {
		st, err := os.Lstat(w.path)
		if err != nil {
			continue // still missing
		}
		if !w.newGit || !st.IsDir() {
			q.move(w.path, "it was missing when the run started")
			continue
		}
		q.newRepository(w.path)
	}
	for _, m := range q.moved {
		q.warnings = append(q.warnings, fmt.Sprintf("the command created the protected path %s (%s); it was moved to %s", m.Path, m.Why, m.MovedTo))
	}
	return q.moved, q.warnings
}

type winQuarantine struct {
	stamp    int64
	moved    []Quarantined
	warnings []string
}

// newRepository keeps a repository made during the run but nothing Git
// would execute or follow from it.
func (q *winQuarantine) newRepository(gitdir string) {
	hooks := filepath.Join(gitdir, "hooks")
	if st, err := os.Lstat(hooks); err == nil {
		if !st.IsDir() || st.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
			q.move(hooks, "a link, or not a directory")
		} else if entries, err := os.ReadDir(hooks); err == nil {
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".sample") {
					q.move(filepath.Join(hooks, e.Name()), "a hook of a repository made during the run")
				}
			}
		}
	}
	for _, f := range []string{"commondir", "config.worktree"} {
		if _, err := os.Lstat(filepath.Join(gitdir, f)); err == nil {
			q.move(filepath.Join(gitdir, f), "a new repository may not redirect Git")
		}
	}
	config := filepath.Join(gitdir, "config")
	if st, err := os.Lstat(config); err == nil {
		why := "its config is a link or not a file"
		if st.Mode().IsRegular() {
			why = winConfigRisk(config)
		}
		if why != "" {
			q.move(config, why)
		}
	}
}

// move renames path aside in its own directory, under a name the command
// could not have guessed. A link is renamed itself, never followed.
func (q *winQuarantine) move(path, why string) {
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		var r [6]byte
		rand.Read(r[:])
		to := fmt.Sprintf("%s.quarantined-by-forgebox-%d-%s", path, q.stamp, hex.EncodeToString(r[:]))
		if _, serr := os.Lstat(to); serr == nil {
			continue
		}
		if err = os.Rename(path, to); err == nil {
			q.moved = append(q.moved, Quarantined{Path: path, MovedTo: to, Why: why})
			return
		}
	}
	q.warnings = append(q.warnings, fmt.Sprintf("the command created the protected path %s (%s) and it could NOT be moved aside: %v; remove it before using tools in this directory", path, why, err))
}

// winConfigRisk says why a new repository's config must go, or "".
func winConfigRisk(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "its config is unreadable"
	}
	defer f.Close()
	return configTextRisk(f)
}
