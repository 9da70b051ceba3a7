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
	for _, w := range g.trees {
		if err := w.check(&q); err != nil {
			q.warnings = append(q.warnings, fmt.Sprintf("could NOT check %s for planted repositories and configuration: %v; do not run git or open an editor there before checking it", w.root, err))
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
	q.newRepo(gitfd, filepath.Join(dir, name))
}

// newRepo strips a Git directory made during the run (a .git, or a bare
// repository) of what Git would execute or follow.
func (q *quarantine) newRepo(gitfd int, gitdir string) {
	q.newRepoAt(gitfd, gitdir, 0)
}

// gitNestMax bounds how deep submodules' Git directories are followed.
const gitNestMax = 4

func (q *quarantine) newRepoAt(gitfd int, gitdir string, level int) {
	var st unix.Stat_t
	// Submodules' Git directories (git submodule update would check them
	// out, running their hooks) and linked worktrees' configuration.
	if level < gitNestMax {
		eachSubdir(gitfd, "modules", func(fd int, name string) {
			q.newRepoAt(fd, filepath.Join(gitdir, "modules", name), level+1)
		})
	}
	eachSubdir(gitfd, "worktrees", func(fd int, name string) {
		if why := configRiskNamed(fd, "config.worktree"); why != "" {
			q.move(fd, filepath.Join(gitdir, "worktrees", name), "config.worktree", why)
		}
	})
	q.hooks(gitfd, gitdir)
	for _, f := range []string{"commondir", "config.worktree"} {
		if f == "commondir" && harmlessCommondir(gitfd) {
			continue
		}
		if unix.Fstatat(gitfd, f, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			q.move(gitfd, gitdir, f, "a new repository may not redirect Git")
		}
	}
	if why := configRiskNamed(gitfd, "config"); why != "" {
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
		if !strings.HasSuffix(n, ".sample") && !quarantinedName(n) {
			q.move(hooksfd, filepath.Join(gitdir, "hooks"), n, "a hook of a repository made during the run")
		}
	}
}

// eachSubdir calls fn with each directory in dirfd's subdirectory sub,
// opened without following symlinks.
func eachSubdir(dirfd int, sub string, fn func(fd int, name string)) {
	sfd, err := openDir(dirfd, sub)
	if err != nil {
		return
	}
	defer unix.Close(sfd)
	for name, mode := range listDirFD(sfd) {
		if !mode.IsDir() {
			continue
		}
		if fd, err := openDir(sfd, name); err == nil {
			fn(fd, name)
			unix.Close(fd)
		}
	}
}

// harmlessCommondir reports whether the Git directory's commondir points
// Git at that directory itself, as forgebox's placeholder does (a
// concurrent run's, or one moved along with its repository).
func harmlessCommondir(gitfd int) bool {
	fd, err := openNoFollow(gitfd, "commondir", unix.O_RDONLY)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	// The content, not the placeholder's mark: the command can set an
	// extended attribute on a file of its own.
	buf := make([]byte, 8)
	n, err := unix.Pread(fd, buf, 0)
	return err == nil && (string(buf[:n]) == commondirPlaceholder || string(buf[:n]) == ".")
}

// quarantinedName reports whether name is one quarantine gave: Git runs
// hooks by their exact names only.
func quarantinedName(name string) bool { return strings.Contains(name, quarantineInfix) }

const quarantineInfix = ".quarantined-by-forgebox-"

// move renames name aside in its own directory, under a name the command
// could not have guessed and taken first.
func (q *quarantine) move(dirfd int, dir, name, why string) {
	from := filepath.Join(dir, name)
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		var r [6]byte
		rand.Read(r[:])
		to := fmt.Sprintf("%s%s%d-%s", name, quarantineInfix, q.stamp, hex.EncodeToString(r[:]))
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

// configRiskNamed reads a repository's config file name and says why it
// must go, or returns "" when every key in it is safe.
func configRiskNamed(gitfd int, name string) string {
	fd, err := openNoFollow(gitfd, name, unix.O_RDONLY)
	if err == unix.ENOENT {
		return ""
	}
	if err != nil {
		return "its config is a symlink or unreadable"
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return configTextRisk(f)
}
