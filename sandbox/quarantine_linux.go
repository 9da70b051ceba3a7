package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// afterRun moves aside what the run planted at watched names. It runs once
// the run's process tree is dead, with the caller's full rights, on paths a
// command controlled (this run's, or a concurrent one's): so it never
// follows a symlink. Each step opens a directory relative to the last
// without following symlinks, and only renames entries inside directories
// opened that way.
func (g *guard) afterRun(now time.Time) ([]Quarantined, []string) {
	q := quarantine{stamp: now.Unix()}
	parents := map[string]int{}
	for _, w := range g.watched {
		dir := filepath.Dir(w.path)
		fd, ok := parents[dir]
		if !ok {
			// The workspace cannot have been replaced: it is a mount
			// point inside.
			fd, _ = openDir(unix.AT_FDCWD, dir)
			parents[dir] = fd
		}
		if fd >= 0 {
			q.check(fd, dir, w)
		}
	}
	for _, fd := range parents {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	for _, m := range q.moved {
		q.warnings = append(q.warnings, fmt.Sprintf("the command created the protected path %s (%s); it was moved to %s", m.Path, m.Why, m.MovedTo))
	}
	return q.moved, q.warnings
}

type quarantine struct {
	stamp    int64
	moved    []Quarantined
	warnings []string
}

// check looks at one watched name in the directory dirfd (named dir).
func (q *quarantine) check(dirfd int, dir string, w watch) {
	name := filepath.Base(w.path)
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return // still missing (or removed): nothing was planted
	}
	if w.link != "" {
		// Inode numbers are reused at once: compare what the link is.
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil || string(buf[:n]) != w.link {
			q.move(dirfd, dir, name, "it replaced a protected symlink")
		}
		return
	}
	if !w.newGit || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		q.move(dirfd, dir, name, "it was missing when the run started")
		return
	}
	// A repository made during the run keeps its objects and history, but
	// not what Git would execute or follow.
	gitfd, err := openDir(dirfd, name)
	if err != nil {
		q.move(dirfd, dir, name, "not a plain directory")
		return
	}
	defer unix.Close(gitfd)
	gitdir := filepath.Join(dir, name)
	q.hooks(gitfd, gitdir)
	for _, f := range []string{"commondir", "config.worktree"} {
		if unix.Fstatat(gitfd, f, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			q.move(gitfd, gitdir, f, "a new repository may not redirect Git")
		}
	}
	if why := configRisk(gitfd); why != "" {
		q.move(gitfd, gitdir, "config", why)
	}
}

// hooks moves aside every hook of a new repository but git's samples.
func (q *quarantine) hooks(gitfd int, gitdir string) {
	var st unix.Stat_t
	if unix.Fstatat(gitfd, "hooks", &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	hooksfd, err := openDir(gitfd, "hooks")
	if err != nil {
		q.move(gitfd, gitdir, "hooks", "a symlink, or not a directory")
		return
	}
	defer unix.Close(hooksfd)
	for n := range listDirFD(hooksfd) {
		if !strings.HasSuffix(n, ".sample") {
			q.move(hooksfd, filepath.Join(gitdir, "hooks"), n, "a hook of a repository made during the run")
		}
	}
}

// move renames name aside in its own directory, under a name the command
// could not have guessed and taken first.
func (q *quarantine) move(dirfd int, dir, name, why string) {
	from := filepath.Join(dir, name)
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		var r [6]byte
		rand.Read(r[:])
		to := fmt.Sprintf("%s.quarantined-by-forgebox-%d-%s", name, q.stamp, hex.EncodeToString(r[:]))
		if err = unix.Renameat2(dirfd, name, dirfd, to, unix.RENAME_NOREPLACE); err == nil {
			q.moved = append(q.moved, Quarantined{Path: from, MovedTo: filepath.Join(dir, to), Why: why})
			return
		}
		if err != unix.EEXIST {
			break
		}
	}
	q.warnings = append(q.warnings, fmt.Sprintf("the command created the protected path %s (%s) and it could NOT be moved aside: %v; remove it before using tools in this directory", from, why, err))
}

// configRisk reads a new repository's config and says why it must go, or
// returns "" when every key in it is safe.
func configRisk(gitfd int) string {
	fd, err := openNoFollow(gitfd, "config", unix.O_RDONLY)
	if err == unix.ENOENT {
		return ""
	}
	if err != nil {
		return "its config is a symlink or unreadable"
	}
	f := os.NewFile(uintptr(fd), "config")
	defer f.Close()
	return configTextRisk(f)
}
