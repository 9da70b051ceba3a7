package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// afterRun moves aside what the run planted at watched names. It runs when
// every process of the sandbox is dead, with the caller's full rights, on
// paths the command controlled: so it never follows a symlink. Each step
// opens a directory relative to the last with RESOLVE_NO_SYMLINKS, and only
// renames entries inside directories opened that way.
func (g *guard) afterRun(now time.Time) ([]Quarantined, []string) {
	q := quarantine{suffix: fmt.Sprintf(".quarantined-by-forgebox-%d", now.Unix())}
	parents := map[string]int{}
	names := map[string]map[string]bool{}
	for _, w := range g.watched {
		dir := filepath.Dir(w.path)
		fd, ok := parents[dir]
		if !ok {
			// The workspace cannot have been replaced: it is a mount
			// point inside. One listing rules out the names still missing.
			fd, _ = openDir(unix.AT_FDCWD, dir)
			parents[dir], names[dir] = fd, listFD(fd)
		}
		if fd >= 0 && (names[dir] == nil || names[dir][filepath.Base(w.path)]) {
			q.check(fd, dir, w)
		}
	}
	for _, fd := range parents {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	for _, m := range q.moved {
		q.warnings = append(q.warnings, fmt.Sprintf("the command created the protected path %s; it was moved to %s", m.Path, m.MovedTo))
	}
	return q.moved, q.warnings
}

type quarantine struct {
	suffix   string
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
			q.move(dirfd, dir, name) // the symlink was replaced
		}
		return
	}
	if !w.newGit || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		q.move(dirfd, dir, name)
		return
	}
	// A repository made during the run keeps its objects and history, but
	// not what Git would execute or follow.
	gitfd, err := openDir(dirfd, name)
	if err != nil {
		q.move(dirfd, dir, name)
		return
	}
	defer unix.Close(gitfd)
	gitdir := filepath.Join(dir, name)
	q.hooks(gitfd, gitdir)
	if unix.Fstatat(gitfd, "commondir", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		q.move(gitfd, gitdir, "commondir")
	}
	if executingConfig(gitfd) {
		q.move(gitfd, gitdir, "config")
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
		q.move(gitfd, gitdir, "hooks") // a symlink, or not a directory
		return
	}
	defer unix.Close(hooksfd)
	for n := range listFD(hooksfd) {
		if !strings.HasSuffix(n, ".sample") {
			q.move(hooksfd, filepath.Join(gitdir, "hooks"), n)
		}
	}
}

func (q *quarantine) move(dirfd int, dir, name string) {
	to := name + q.suffix
	from := filepath.Join(dir, name)
	if err := unix.Renameat2(dirfd, name, dirfd, to, unix.RENAME_NOREPLACE); err != nil {
		q.warnings = append(q.warnings, fmt.Sprintf("the command created the protected path %s and it could not be moved aside: %v", from, err))
		return
	}
	q.moved = append(q.moved, Quarantined{Path: from, MovedTo: filepath.Join(dir, to)})
}

// openDir opens name relative to dirfd as a directory, refusing symlinks
// anywhere on the way.
func openDir(dirfd int, name string) (int, error) {
	return unix.Openat2(dirfd, name, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// executingKeys are Git config keys (or key parts) that name a command Git
// runs, or another config file it reads.
var executingKeys = []string{"fsmonitor", "hookspath", "sshcommand", "pager", "editor", "askpass", "helper",
	"external", "textconv", "clean", "smudge", "process", "program", "packobjectshook", "include", "command"}

// executingConfig reports whether a new repository's config would make Git
// run a command of the config's choosing.
func executingConfig(gitfd int) bool {
	fd, err := unix.Openat2(gitfd, "config", &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return err != unix.ENOENT // a symlink or something odd: move it
	}
	f := os.NewFile(uintptr(fd), "config")
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	b = bytes.ToLower(b)
	for _, k := range executingKeys {
		if bytes.Contains(b, []byte(k)) {
			return true
		}
	}
	return bytes.Contains(b, []byte("= !")) || bytes.Contains(b, []byte("=!"))
}

// listFD lists the directory open at fd (without consuming fd), or returns
// nil.
func listFD(fd int) map[string]bool {
	if fd < 0 {
		return nil
	}
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(d), ".")
	defer f.Close()
	list, err := f.Readdirnames(-1)
	if err != nil {
		return nil
	}
	m := make(map[string]bool, len(list))
	for _, n := range list {
		m[n] = true
	}
	return m
}
