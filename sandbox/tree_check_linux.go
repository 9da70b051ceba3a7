package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// treeCheck is one post-run check of a root.
type treeCheck struct {
	ix     *treeIndex
	rootfd int
	since  int64
	q      *quarantine
	judged map[string]bool
	buf    []byte
	bound  map[string]bool // read-only for the runs checked: unchanged
	// only, when not nil, are the files the runs checked wrote in the
	// directories that changed (rootWatch.committed): the others there
	// were not theirs, and their set-ID bits are not looked at. shortcut
	// gives it when first needed: finding that no other run overlaps
	// reads every root's markers, which a run that changed nothing
	// should not pay for.
	only     map[string]bool
	shortcut func() map[string]bool
}

// onlyFiles is only, from shortcut on first use.
func (c *treeCheck) onlyFiles() map[string]bool {
	if c.shortcut != nil {
		c.only, c.shortcut = c.shortcut(), nil
	}
	return c.only
}

func (c *treeCheck) abs(rel string) string { return filepath.Join(c.ix.root, rel) }

func (c *treeCheck) run() (err error) {
	stats := c.ix.statAll(c.rootfd)
	var gone, changed []string
	inRun := map[string]bool{}
	for rel, rec := range c.ix.dirs {
		st := stats[rel]
		if st == nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Ino != rec.ino {
			gone = append(gone, rel)
			continue
		}
		if t := ctimeOf(st); t != rec.ctime || t >= c.since {
			changed = append(changed, rel)
			inRun[rel] = t >= c.since
			c.ix.dirs[rel] = dirRec{ino: rec.ino, ctime: t}
			c.ix.dirty = true
		}
	}
	c.dropAll(gone)
	slices.SortFunc(changed, func(a, b string) int { return relDepth(a) - relDepth(b) })
	for _, rel := range changed {
		if _, ok := c.ix.dirs[rel]; !ok {
			continue // below a directory found replaced on the way
		}
		fd, oerr := openBeneath(c.rootfd, rel)
		if oerr != nil {
			c.dropAll([]string{rel})
			if (oerr == unix.EACCES || oerr == unix.EPERM) && inRun[rel] && rel != "" {
				c.unreadable(rel)
			}
			continue
		}
		// An error in one directory does not end the check of the rest.
		if derr := c.changedDir(fd, rel, inRun[rel]); derr != nil && err == nil {
			err = derr
		}
		unix.Close(fd)
	}
	defer func() {
		if err == nil && c.ix.overflow {
			err = fmt.Errorf("%s holds more than %d directories: everything was checked, but the index cannot hold them all, and the next run reads them again", c.ix.root, treeMaxDirs)
		}
	}()
	// Protected entries in directories that did not change: modified in
	// place, if at all.
	for rel := range c.ix.marks {
		if c.judged[rel] {
			continue
		}
		dir, name := filepath.Split(rel)
		dir = strings.TrimSuffix(dir, "/")
		fd, err := openBeneath(c.rootfd, dir)
		if err != nil {
			delete(c.ix.marks, rel)
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			delete(c.ix.marks, rel)
		} else {
			c.existing(fd, dir, dirent{name: name, ino: st.Ino, typ: dtOf(st.Mode)})
		}
		unix.Close(fd)
	}
	return nil
}

// setid removes the setuid and setgid bits from a file the run made or
// changed. The seccomp filter refuses every call that sets them; this is
// the second line, for what changed in the directories the check reads.
// The file is reached through an O_PATH descriptor, so that the chmod acts
// on the file inspected even if a live session swaps the name.
func (c *treeCheck) setid(dirfd int, dirRel string, e dirent) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG ||
		st.Mode&(unix.S_ISUID|unix.S_ISGID) == 0 || ctimeOf(&st) < c.since {
		return
	}
	p := filepath.Join(c.abs(dirRel), e.name)
	fd, err := unix.Openat(dirfd, e.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		var fst unix.Stat_t
		if err = unix.Fstat(fd, &fst); err == nil && (fst.Ino != st.Ino || fst.Mode&unix.S_IFMT != unix.S_IFREG) {
			err = unix.ESTALE
		}
		if err == nil {
			err = unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), fst.Mode&0o7777&^(unix.S_ISUID|unix.S_ISGID))
		}
		unix.Close(fd)
	}
	if err != nil {
		c.q.warnings = append(c.q.warnings, fmt.Sprintf("%s carries a setuid or setgid bit the run set, and it could NOT be removed: %v; delete the file", p, err))
		return
	}
	c.q.moved = append(c.q.moved, Quarantined{Path: p, MovedTo: p, Why: "the run set its setuid or setgid bit, which was removed"})
}

// unreadable moves aside a directory the run made unreadable, from its
// parent.
func (c *treeCheck) unreadable(rel string) {
	dir, name := filepath.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	fd, err := openBeneath(c.rootfd, dir)
	if err != nil {
		return // its parent is unreadable too: moved aside from there
	}
	defer unix.Close(fd)
	c.q.move(fd, c.abs(dir), name, "the run made it unreadable: forgebox cannot check what it holds")
}

// dropAll forgets directories that are gone or were replaced, and all
// below them, in one pass (a removed node_modules is thousands).
func (c *treeCheck) dropAll(gone []string) {
	if len(gone) == 0 {
		return
	}
	set := make(map[string]bool, len(gone))
	for _, g := range gone {
		set[g] = true
	}
	below := func(rel string) bool {
		for {
			if set[rel] {
				return true
			}
			i := strings.LastIndexByte(rel, '/')
			if i < 0 {
				return rel != "" && set[""]
			}
			rel = rel[:i]
		}
	}
	for r := range c.ix.dirs {
		if below(r) {
			delete(c.ix.dirs, r)
		}
	}
	for r := range c.ix.marks {
		if d, _ := filepath.Split(r); below(strings.TrimSuffix(d, "/")) {
			delete(c.ix.marks, r)
		}
	}
	c.ix.dirty = true
}

// changedDir reads a directory whose entries changed since it was indexed
// (during the run when inRun): protected entries that appeared then are
// moved aside, new directories are indexed and everything in them judged.
func (c *treeCheck) changedDir(fd int, rel string, inRun bool) error {
	entries, err := readEntries(fd, c.buf)
	if err != nil {
		return fmt.Errorf("list %s: %w", c.abs(rel), err)
	}
	depth := relDepth(rel)
	present := map[string]bool{}
	insideProtected := rel != "" && isProtectedRel(rel)
	for _, e := range entries {
		child := relJoin(rel, e.name)
		present[e.name] = true
		if quarantinedName(e.name) {
			continue // what a check moved aside, as it left it
		}
		switch {
		case protectedEntry(e.name, depth):
			c.judge(fd, rel, child, e, inRun)
		case e.typ == unix.DT_REG && inRun:
			if only := c.onlyFiles(); only == nil || only[child] {
				c.setid(fd, rel, e)
			}
			if insideProtected {
				c.existing(fd, rel, e)
			}
		case insideProtected && inRun:
			if _, isDir := c.ix.dirs[child]; !isDir || e.typ != unix.DT_DIR {
				c.existing(fd, rel, e)
			}
		}
		if e.typ != unix.DT_DIR || e.name == ".git" || c.ix.skipped(child, e.ino) {
			continue
		}
		if rec, ok := c.ix.dirs[child]; ok {
			if rec.ino == e.ino {
				continue
			}
			c.dropAll([]string{child})
		}
		if err := c.newDir(fd, rel, e, inRun); err != nil {
			return err
		}
	}
	if looksBare(entries) {
		c.judge(fd, rel, relJoin(rel, "HEAD"), dirent{name: "HEAD", ino: c.ix.dirs[rel].ino}, inRun)
	}
	for r := range c.ix.marks {
		if d, name := filepath.Split(r); strings.TrimSuffix(d, "/") == rel && !present[name] {
			delete(c.ix.marks, r)
		}
	}
	return nil
}

// judge looks at a protected entry (at mark) of a directory that changed:
// one that was not there before appeared in the run (when the directory
// changed during it); one that was, the run may have changed.
func (c *treeCheck) judge(dirfd int, dirRel, mark string, e dirent, inRun bool) {
	known, ok := c.ix.marks[mark]
	c.judged[mark] = true
	c.ix.marks[mark] = e.ino
	if (!ok || known != e.ino) && inRun && c.madeInRun(dirfd, e) {
		c.appeared(dirfd, dirRel, e)
	} else {
		c.existing(dirfd, dirRel, e)
	}
}

// madeInRun reports whether the entry was made, renamed or linked into
// place since the run started: each of these sets the entry's own ctime
// (a tree renamed into place gets a new ctime at its top; what was made
// inside it earlier, in a run, was checked then). The pseudo-entry HEAD
// stands for the bare repository that dirfd is.
func (c *treeCheck) madeInRun(dirfd int, e dirent) bool {
	var st unix.Stat_t
	var err error
	if e.name == "HEAD" && e.typ != dtUnreadable {
		err = unix.Fstat(dirfd, &st)
	} else {
		err = unix.Fstatat(dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	return err != nil || ctimeOf(&st) >= c.since
}

// newDir indexes a directory that was not in the index and judges what
// it holds: a protected entry appeared in the run when its own ctime says
// so (madeInRun); setuid bits the run set are removed.
func (c *treeCheck) newDir(parent int, parentRel string, e dirent, inRun bool) error {
	fd, err := unix.Openat(parent, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if (err == unix.EACCES || err == unix.EPERM) && inRun {
		c.q.move(parent, c.abs(parentRel), e.name, "the run made it unreadable: forgebox cannot check what it holds")
		return nil
	}
	if err != nil {
		return nil // moved aside above
	}
	defer unix.Close(fd)
	// What is protected in a new tree appeared in the run when it was
	// made, renamed or linked into place since the run started, even in a
	// tree made before (between runs).
	err = c.ix.walk(fd, relJoin(parentRel, e.name), c.buf, func(dirfd int, dirRel string, pe dirent) {
		c.judged[relJoin(dirRel, pe.name)] = true
		if c.madeInRun(dirfd, pe) {
			c.appeared(dirfd, dirRel, pe)
		} else {
			c.existing(dirfd, dirRel, pe)
		}
	}, c.setid)
	return err
}

// looksBare reports whether a directory holds what makes Git take it for
// a bare repository when a command runs in it (HEAD, objects/, refs/):
// Git would then read its config and run its hooks.
func looksBare(entries []dirent) bool {
	n := 0
	for _, e := range entries {
		switch {
		case e.name == "HEAD" && e.typ != unix.DT_DIR:
			n++
		case (e.name == "objects" || e.name == "refs") && e.typ == unix.DT_DIR:
			n++
		}
	}
	return n == 3
}

func isProtectedRel(rel string) bool {
	_, ok := Protected(strings.Split(rel, "/"))
	return ok
}

// appeared handles a protected entry made (or renamed into place) during a
// run: a repository keeps its objects and history but not what Git would
// run or follow; anything else is moved aside.
func (c *treeCheck) appeared(dirfd int, dirRel string, e dirent) {
	dir := c.abs(dirRel)
	switch {
	case e.typ == dtUnreadable:
		c.q.move(dirfd, dir, e.name, "the run made it unreadable: forgebox cannot check what it holds")
		return
	case e.name == "HEAD": // dirfd is a bare repository
		c.q.newRepo(dirfd, dir)
		return
	case e.name == ".git" && e.typ == unix.DT_DIR:
		c.q.check(dirfd, dir, watch{path: filepath.Join(dir, e.name), newGit: true})
		return
	}
	c.q.move(dirfd, dir, e.name, "it was made during the run")
}

// existing handles a protected entry that was there before the run: what
// the run changed in it (a change time not older than the run) is moved
// aside. Renaming or linking a file sets its change time, so an old file
// brought into place counts as changed.
func (c *treeCheck) existing(dirfd int, dirRel string, e dirent) {
	dir := c.abs(dirRel)
	if c.bound[filepath.Join(dir, e.name)] && e.name != ".git" {
		return // a read-only mount for the run
	}
	if e.name == "HEAD" && e.typ != dtUnreadable {
		c.changedGitDir(dirfd, dir)
		return
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	if e.typ == dtUnreadable {
		if ctimeOf(&st) >= c.since {
			c.q.move(dirfd, dir, e.name, "the run made it unreadable: forgebox cannot check what it holds")
		}
		return
	}
	switch {
	case e.name == ".git" && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		c.changedRepo(dirfd, dir)
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		c.changedInside(dirfd, dir, e.name, 0)
	case ctimeOf(&st) >= c.since:
		c.q.move(dirfd, dir, e.name, "the run changed it")
	}
}

// changedInside moves aside what the run changed inside a protected
// directory.
func (c *treeCheck) changedInside(parent int, parentDir, name string, depth int) {
	fd, err := openDir(parent, name)
	if err != nil || depth > 8 {
		if err == nil {
			unix.Close(fd)
		}
		return
	}
	defer unix.Close(fd)
	dir := filepath.Join(parentDir, name)
	entries, _ := readEntries(fd, make([]byte, 8<<10))
	for _, e := range entries {
		if quarantinedName(e.name) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		switch {
		case ctimeOf(&st) >= c.since:
			c.q.move(fd, dir, e.name, "the run changed it inside a protected directory")
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			c.changedInside(fd, dir, e.name, depth+1)
		}
	}
}

// changedRepo moves aside what the run changed among what Git executes or
// follows in an existing repository.
func (c *treeCheck) changedRepo(dirfd int, dir string) {
	gitfd, err := openDir(dirfd, ".git")
	if err != nil {
		return
	}
	defer unix.Close(gitfd)
	c.changedGitDir(gitfd, filepath.Join(dir, ".git"))
}

// changedGitDir is changedRepo for the Git directory open at gitfd.
func (c *treeCheck) changedGitDir(gitfd int, gitdir string) {
	c.changedGitDirAt(gitfd, gitdir, 0)
}

func (c *treeCheck) changedGitDirAt(gitfd int, gitdir string, level int) {
	var st unix.Stat_t
	// A submodule's Git directory that appeared (or was renamed into
	// place: that sets its ctime) is a repository made during the run.
	if level < gitNestMax {
		eachSubdir(gitfd, "modules", func(fd int, name string) {
			var ms unix.Stat_t
			if unix.Fstat(fd, &ms) == nil && ctimeOf(&ms) >= c.since {
				c.q.newRepo(fd, filepath.Join(gitdir, "modules", name))
			} else {
				c.changedGitDirAt(fd, filepath.Join(gitdir, "modules", name), level+1)
			}
		})
	}
	eachSubdir(gitfd, "worktrees", func(fd int, name string) {
		var ws unix.Stat_t
		if unix.Fstatat(fd, "config.worktree", &ws, unix.AT_SYMLINK_NOFOLLOW) == nil && ctimeOf(&ws) >= c.since {
			if why := configRiskNamed(fd, "config.worktree"); why != "" {
				c.q.move(fd, filepath.Join(gitdir, "worktrees", name), "config.worktree", why)
			}
		}
	})
	if unix.Fstatat(gitfd, "hooks", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		switch {
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			if ctimeOf(&st) >= c.since {
				c.q.move(gitfd, gitdir, "hooks", "the run replaced the hooks directory")
			}
		case ctimeOf(&st) >= c.since:
			// The set of hooks changed, or the directory was put in
			// place: no hook in it can be trusted.
			c.q.hooks(gitfd, gitdir)
		default:
			if hfd, err := openDir(gitfd, "hooks"); err == nil {
				for _, h := range mustEntries(hfd) {
					var hs unix.Stat_t
					if !strings.HasSuffix(h.name, ".sample") && !quarantinedName(h.name) && unix.Fstatat(hfd, h.name, &hs, unix.AT_SYMLINK_NOFOLLOW) == nil && ctimeOf(&hs) >= c.since {
						c.q.move(hfd, filepath.Join(gitdir, "hooks"), h.name, "the run changed a hook")
					}
				}
				unix.Close(hfd)
			}
		}
	}
	for _, f := range []string{"config", "config.worktree", "commondir"} {
		if c.bound[filepath.Join(gitdir, f)] || unix.Fstatat(gitfd, f, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || ctimeOf(&st) < c.since {
			continue
		}
		if f == "commondir" {
			if !harmlessCommondir(gitfd) {
				c.q.move(gitfd, gitdir, f, "the run redirected Git to another directory")
			}
		} else if why := configRiskNamed(gitfd, f); why != "" {
			c.q.move(gitfd, gitdir, f, why)
		}
	}
}

func mustEntries(fd int) []dirent {
	es, _ := readEntries(fd, make([]byte, 8<<10))
	return es
}
