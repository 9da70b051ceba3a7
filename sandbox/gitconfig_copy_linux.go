package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/forgebox/forgebox/gitkeys"
	"github.com/forgebox/forgebox/pathtree"
	"golang.org/x/sys/unix"
)

// The workspace repository's .git/config is not bound read-only: the
// command gets a private copy of it (view.go, privateCopy), and after the
// run the changes it made to ordinary keys (gitConfigKey) are carried into
// the real file, key by key, and the others refused. The real file never
// holds a key the run set while the run goes on: a shell prompt or an
// editor runs git in the workspace all the time, and would run a
// core.fsmonitor the moment it appeared.

// configCopiesDir is where, in the state directory, each run's copies are
// made; a copy holding a refused key is kept there for inspection.
const configCopiesDir = "gitconfig"

// configCopy is the run's private copy of one Git config.
type configCopy struct {
	real     string // the config in the workspace
	dev, ino uint64 // its inode at launch
	before   string // its text at launch
	dir      string // the run's directory: dir/link -> dir/copy/config
	fact     privateCopy
	done     bool
}

func (c *configCopy) copyPath() string { return filepath.Join(c.fact.Dir, "config") }

// copyConfig gives the command a private copy of the workspace
// repository's config instead of a read-only file. Where it cannot (no
// state directory, one inside a writable root, a config forgebox cannot
// read key by key, a symlink) the config stays read-only, as every other
// repository's does (nested ones, submodules', linked worktrees'
// config.worktree), and a warning may say why.
func (g *guard) copyConfig(stateDir string) {
	if stateDir == "" || !filepath.IsAbs(stateDir) {
		return
	}
	gitdir := filepath.Join(g.workspace, ".git")
	real := filepath.Join(gitdir, "config")
	var pinned, file *protectedPath
	for i := range g.paths {
		switch p := &g.paths[i]; {
		case p.Path == gitdir && p.Pin:
			pinned = p
		case p.Path == real && !p.Dir:
			file = p
		}
	}
	if pinned == nil || file == nil {
		return // no repository, a .git file or symlink, or a symlinked config
	}
	c, err := newConfigCopy(stateDir, real, file.Dev, file.Ino, g.roots)
	if err != nil {
		g.warnings = append(g.warnings, fmt.Sprintf("%s stays read-only for this run: %v", real, err))
		return
	}
	if c != nil {
		g.copies = append(g.copies, c)
	}
}

func newConfigCopy(stateDir, real string, dev, ino uint64, roots []string) (*configCopy, error) {
	before, err := readConfigFile(unix.AT_FDCWD, real, dev, ino)
	if err != nil {
		return nil, err
	}
	if odd := parseConfig(before).odd; odd != "" {
		return nil, fmt.Errorf("it %s", odd)
	}
	// Checked before anything is made there, and again once the path is
	// resolved.
	base := filepath.Join(stateDir, configCopiesDir)
	if err := outsideRoots(base, roots); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("make its private copy: %w", err)
	}
	h, err := realPath(base)
	if err != nil {
		return nil, fmt.Errorf("make its private copy: %w", err)
	}
	if base = h.Path; outsideRoots(base, roots) != nil {
		return nil, outsideRoots(base, roots)
	}
	dir, err := os.MkdirTemp(base, "run-")
	if err != nil {
		return nil, fmt.Errorf("make its private copy: %w", err)
	}
	c := &configCopy{real: real, dev: dev, ino: ino, before: before, dir: dir,
		fact: privateCopy{Path: real, Dev: dev, Ino: ino, Link: filepath.Join(dir, "link"), Dir: filepath.Join(dir, "copy")}}
	var st unix.Stat_t
	err = os.Mkdir(c.fact.Dir, 0o700)
	if err == nil {
		err = os.WriteFile(c.copyPath(), []byte(before), 0o600)
	}
	if err == nil {
		err = os.Symlink(c.copyPath(), c.fact.Link)
	}
	if err == nil {
		err = unix.Lstat(c.fact.Link, &st)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("make its private copy: %w", err)
	}
	c.fact.LinkDev, c.fact.LinkIno = uint64(st.Dev), st.Ino
	return c, nil
}

// outsideRoots refuses a directory for private copies that lies in a
// writable root or holds one: the command could write there outside its
// copy.
func outsideRoots(dir string, roots []string) error {
	for _, r := range roots {
		if pathtree.Within(dir, r) || pathtree.Within(r, dir) {
			return fmt.Errorf("the state directory %s is inside or holds the writable root %s", dir, r)
		}
	}
	return nil
}

// readConfigFile reads a config file, no symlink on the way, as a regular
// file of at most gitConfigMax bytes; with dev or ino set, it must be that
// inode.
func readConfigFile(dirfd int, name string, dev, ino uint64) (string, error) {
	fd, err := openNoFollow(dirfd, name, unix.O_RDONLY)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", fmt.Errorf("inspect %s: %w", name, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "", fmt.Errorf("%s is not a regular file", name)
	case (dev != 0 || ino != 0) && (uint64(st.Dev) != dev || st.Ino != ino):
		return "", fmt.Errorf("%s changed since it was inspected", name)
	case st.Size > gitConfigMax:
		return "", fmt.Errorf("%s is larger than 1 MiB", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, gitConfigMax+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return string(b), nil
}

// carryConfig runs once the run's tree is dead: for each private copy, the
// changes to ordinary keys go into the real config and the others are
// reported, with the copy kept for inspection. It reads what the command
// wrote without following symlinks.
func (g *guard) carryConfig() ([]Quarantined, []string) {
	var moved []Quarantined
	var warnings []string
	for _, c := range g.copies {
		q, w := c.carry()
		moved, warnings = append(moved, q...), append(warnings, w...)
		c.done = true
	}
	// Said on stderr too, as what afterRun moves aside is.
	for _, q := range moved {
		what := q.Path + ": " + q.Why
		if q.Key != "" {
			what = fmt.Sprintf("the command set %s = %q in %s, which was NOT carried over: it can make Git run a program, send data elsewhere or read another file, or forgebox does not know the key", q.Key, q.Value, q.Path)
		}
		warnings = append(warnings, fmt.Sprintf("%s (the run's copy is kept in %s)", what, q.MovedTo))
	}
	return moved, warnings
}

func (c *configCopy) carry() (moved []Quarantined, warnings []string) {
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(c.dir)
		}
	}()
	after, err := c.readCopy()
	if err != nil {
		keep = true
		return nil, []string{fmt.Sprintf("the run's changes to %s were NOT carried over: %v (its copy is in %s)", c.real, err, c.fact.Dir)}
	}
	changes, odd := diffConfig(c.before, after)
	if odd != "" {
		keep = true
		return []Quarantined{{Path: c.real, MovedTo: c.copyPath(),
			Why: odd + ", which forgebox does not vet: none of the run's changes to it was carried over"}}, nil
	}
	var ordinary []configChange
	for _, ch := range changes {
		switch ch.Class() {
		case gitkeys.Ordinary:
			ordinary = append(ordinary, ch)
		default:
			keep = true
			moved = append(moved, refusedKey(c, ch))
		}
	}
	if len(ordinary) == 0 {
		return moved, nil
	}
	kept, err := c.apply(ordinary)
	if err != nil {
		keep = true
		var keys []string
		for _, ch := range ordinary {
			keys = append(keys, ch.Key())
		}
		warnings = append(warnings, fmt.Sprintf("the run's changes to %s (%s) were NOT carried over: %v; they are in %s", c.real, strings.Join(keys, ", "), err, c.copyPath()))
	}
	for _, k := range kept {
		keep = true
		warnings = append(warnings, fmt.Sprintf("%s was changed outside the run while it went on: your value of %s was kept over the run's (in %s)", c.real, k, c.copyPath()))
	}
	return moved, warnings
}

// refusedKey reports a change the one rule refuses.
func refusedKey(c *configCopy, ch configChange) Quarantined {
	why := "the run set the Git config key " + ch.Key()
	if len(ch.Values) == 0 {
		why = "the run unset the Git config key " + ch.Key()
	}
	if gitkeys.Classify(ch.Entry.Section, ch.Entry.Sub, ch.Entry.Key, "") == gitkeys.NewRepo || ch.Class() == gitkeys.NewRepo {
		why += ", which decides where the repository's data goes or comes from, or its layout"
	} else {
		why += ", which can make Git run a program, send data elsewhere or read another file, or which forgebox does not know"
	}
	return Quarantined{Path: c.real, MovedTo: c.copyPath(), Why: why + "; it was not carried over",
		Key: ch.Key(), Value: strings.Join(ch.Values, "\n")}
}

// readCopy reads the command's copy: a regular file in the run's
// directory, reached without following symlinks.
func (c *configCopy) readCopy() (string, error) {
	dirfd, err := openDir(unix.AT_FDCWD, c.fact.Dir)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", c.fact.Dir, err)
	}
	defer unix.Close(dirfd)
	return readConfigFile(dirfd, "config", 0, 0)
}

// apply carries ordinary changes into the real config, onto its current
// text (the user may have edited it meanwhile), and replaces it as Git
// does: through config.lock, created exclusively, renamed over it. It
// returns the keys whose new value the user's own edit outranked.
func (c *configCopy) apply(changes []configChange) ([]string, error) {
	gitdir := filepath.Dir(c.real)
	gitfd, err := openDir(unix.AT_FDCWD, gitdir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", gitdir, err)
	}
	defer unix.Close(gitfd)
	current, err := readConfigFile(gitfd, "config", 0, 0)
	if err != nil {
		return nil, err
	}
	merged, kept, odd := mergeConfig(current, c.before, changes)
	if odd != "" {
		return nil, fmt.Errorf("%s", odd)
	}
	if merged == current {
		return kept, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(gitfd, "config", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", c.real, err)
	}
	fd, err := unix.Openat(gitfd, "config.lock", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, st.Mode&0o666)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", c.real, err)
	}
	f := os.NewFile(uintptr(fd), "config.lock")
	_, err = f.WriteString(merged)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(gitfd, "config.lock", gitfd, "config")
	}
	if err != nil {
		unix.Unlinkat(gitfd, "config.lock", 0)
		return nil, fmt.Errorf("replace %s: %w", c.real, err)
	}
	return kept, nil
}

// copyFacts are the private copies for the view.
func (g *guard) copyFacts() []privateCopy {
	var out []privateCopy
	for _, c := range g.copies {
		out = append(out, c.fact)
	}
	return out
}

// dropCopies removes the copies of a run that never got to carry them.
func (g *guard) dropCopies() {
	for _, c := range g.copies {
		if !c.done {
			os.RemoveAll(c.dir)
		}
	}
	g.copies = nil
}
