package sandbox

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Paths that let a command plant something the user's own tools run later.
// When they exist they are mounted read-only. When they are missing at the
// workspace root, the run may not keep them: they are checked once the
// process tree is dead, and whatever the run created there is moved aside
// (quarantined) and reported.
var (
	protectedFiles = []string{".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".envrc", ".mcp.json"}
	protectedDirs  = []string{".vscode", ".idea", ".claude", ".forgebox", ".devcontainer", ".cursor", ".gemini"}
)

// scanSkip are directories the nested-repository scan does not enter: they
// are large and never hold repositories a user works in.
var scanSkip = []string{"node_modules", ".cache", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
	".pytest_cache", ".gradle", ".npm", ".cargo", ".rustup", "target", ".terraform"}

// The nested-repository scan runs before every command, so it is bounded.
const (
	scanMaxDepth = 3
	scanMaxDirs  = 500
)

// guard finds the protected paths of the writable roots.
type guard struct {
	workspace string
	roots     []string
	budget    int
	paths     []protectedPath
	// watched are protected names missing at the workspace root when the
	// run started.
	watched  []string
	warnings []string
}

// protect discovers what must stay read-only inside the writable roots. It
// changes nothing on the host.
func protect(workspace string, roots []string) (*guard, error) {
	g := &guard{workspace: workspace, roots: roots, budget: scanMaxDirs}
	for _, r := range roots {
		if err := g.root(r, r == workspace); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func (g *guard) root(r string, watch bool) error {
	names := listNames(r) // one listing instead of a lstat per name
	if err := g.gitEntry(filepath.Join(r, ".git"), r, watch); err != nil {
		return err
	}
	for _, name := range append(slices.Clone(protectedFiles), protectedDirs...) {
		if names != nil && !names[name] {
			if watch {
				g.watched = append(g.watched, filepath.Join(r, name))
			}
			continue
		}
		if err := g.add(filepath.Join(r, name), watch); err != nil {
			return err
		}
	}
	for _, sub := range submodulePaths(r) {
		if err := g.gitEntry(filepath.Join(sub, ".git"), sub, false); err != nil {
			return err
		}
	}
	return g.scan(r)
}

// gitEntry protects a repository's .git: a directory is pinned (bound onto
// itself, so it cannot be renamed away and replaced) and its hooks and
// config made read-only; a .git file (worktree, submodule) is made
// read-only so that it cannot be pointed at a directory the command
// controls.
func (g *guard) gitEntry(dotgit, worktree string, watch bool) error {
	if slices.ContainsFunc(g.paths, func(p protectedPath) bool { return p.Path == dotgit }) {
		return nil
	}
	var st unix.Stat_t
	err := unix.Lstat(dotgit, &st)
	switch {
	case err == unix.ENOENT:
		if watch {
			g.watched = append(g.watched, dotgit)
		}
		return nil
	case err != nil:
		return fmt.Errorf("inspect %s: %w", dotgit, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		g.warnings = append(g.warnings, fmt.Sprintf("%s is a symlink and cannot be protected", dotgit))
		return nil
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return g.add(dotgit, false)
	}
	g.paths = append(g.paths, protectedPath{Path: dotgit, Dir: true, Pin: true, Dev: uint64(st.Dev), Ino: st.Ino})
	return g.gitDir(dotgit, worktree, watch, 0)
}

func (g *guard) gitDir(dir, worktree string, watch bool, level int) error {
	for _, name := range []string{"hooks", "config", "config.worktree"} {
		if err := g.add(filepath.Join(dir, name), watch && name == "hooks"); err != nil {
			return err
		}
	}
	if hp := hooksPath(filepath.Join(dir, "config"), worktree); hp != "" && g.inRoots(hp) {
		if err := g.add(hp, false); err != nil {
			return err
		}
	}
	if level >= 3 {
		return nil
	}
	mods, _ := os.ReadDir(filepath.Join(dir, "modules"))
	for _, m := range mods {
		if m.IsDir() {
			if err := g.gitDir(filepath.Join(dir, "modules", m.Name()), "", false, level+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// add protects path when it exists, and watches it when it does not and
// watch is set.
func (g *guard) add(path string, watch bool) error {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	switch {
	case err == unix.ENOENT:
		if watch {
			g.watched = append(g.watched, path)
		}
		return nil
	case err != nil:
		return fmt.Errorf("inspect %s: %w", path, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		g.warnings = append(g.warnings, fmt.Sprintf("%s is a symlink and cannot be protected", path))
		return nil
	}
	g.paths = append(g.paths, protectedPath{Path: path, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, Dev: uint64(st.Dev), Ino: st.Ino})
	return nil
}

// scan looks for nested repositories below r, breadth first, within a
// budget of directories.
func (g *guard) scan(r string) error {
	type dir struct {
		path  string
		depth int
	}
	queue := []dir{{r, 0}}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if g.budget == 0 {
			g.warnings = append(g.warnings, fmt.Sprintf("stopped looking for nested Git repositories after %d directories; repositories below %s are not protected", scanMaxDirs, d.path))
			return nil
		}
		g.budget--
		entries, err := os.ReadDir(d.path)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			full := filepath.Join(d.path, name)
			if name == ".git" {
				if d.depth > 0 {
					if err := g.gitEntry(full, d.path, false); err != nil {
						return err
					}
				}
				continue
			}
			if e.Type()&fs.ModeDir != 0 && d.depth < scanMaxDepth && !slices.Contains(scanSkip, name) && !slices.Contains(g.roots, full) {
				queue = append(queue, dir{full, d.depth + 1})
			}
		}
	}
	return nil
}

func (g *guard) inRoots(path string) bool {
	for _, r := range g.roots {
		if within(path, r) {
			return true
		}
	}
	return false
}

// afterRun moves aside what the run created at watched paths. It runs when
// every process of the sandbox is dead. A new .git keeps its objects and
// config: only hooks other than git's *.sample files are moved, and a .git
// file (a pointer to another git directory) is moved whole.
func (g *guard) afterRun(now time.Time) ([]Quarantined, []string) {
	var moved []Quarantined
	var warnings []string
	suffix := fmt.Sprintf(".quarantined-by-forgebox-%d", now.Unix())
	move := func(p string) {
		to := p + suffix
		if err := unix.Renameat2(unix.AT_FDCWD, p, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE); err != nil {
			warnings = append(warnings, fmt.Sprintf("the command created the protected path %s and it could not be moved aside: %v", p, err))
			return
		}
		moved = append(moved, Quarantined{Path: p, MovedTo: to})
	}
	listed := map[string]map[string]bool{}
	for _, p := range g.watched {
		dir := filepath.Dir(p)
		if _, ok := listed[dir]; !ok {
			listed[dir] = listNames(dir)
		}
		if names := listed[dir]; names != nil && !names[filepath.Base(p)] {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		switch filepath.Base(p) {
		case ".git":
			if !isDir {
				move(p)
				continue
			}
			p = filepath.Join(p, "hooks")
			fallthrough
		case "hooks":
			if filepath.Base(filepath.Dir(p)) != ".git" {
				move(p)
				continue
			}
			entries, _ := os.ReadDir(p)
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".sample") {
					move(filepath.Join(p, e.Name()))
				}
			}
		default:
			move(p)
		}
	}
	for _, q := range moved {
		warnings = append(warnings, fmt.Sprintf("the command created the protected path %s; it was moved to %s", q.Path, q.MovedTo))
	}
	return moved, warnings
}

// submodulePaths lists the submodule directories .gitmodules declares.
func submodulePaths(root string) []string {
	f, err := os.Open(filepath.Join(root, ".gitmodules"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "path") {
			continue
		}
		p := filepath.Join(root, strings.Trim(strings.TrimSpace(v), `"`))
		if within(p, root) && p != root {
			out = append(out, p)
		}
	}
	return out
}

// hooksPath reads core.hooksPath from a Git config file and resolves it
// against the worktree; "" when unset.
func hooksPath(config, worktree string) string {
	f, err := os.Open(config)
	if err != nil {
		return ""
	}
	defer f.Close()
	section := ""
	var value string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Fields(strings.Trim(line, "[]") + " ")[0])
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && section == "core" && strings.EqualFold(strings.TrimSpace(k), "hookspath") {
			value = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	switch {
	case value == "":
		return ""
	case filepath.IsAbs(value):
		return filepath.Clean(value)
	case worktree == "":
		return ""
	}
	return filepath.Join(worktree, value)
}

// listNames returns the names in dir, or nil when it cannot be listed.
func listNames(dir string) map[string]bool {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
