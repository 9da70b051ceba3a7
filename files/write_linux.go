package files

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func (f *FS) write(p, content string, mkdirParents bool) error {
	const op = "write"
	if int64(len(content)) > f.maxWrite {
		return refusal(op, p, KindTooLarge, "the content is %d bytes; the limit is %d per write: write it in parts to separate files, then join them with a command (cat part1 part2 > file)", len(content), f.maxWrite)
	}
	r, err := f.parse(op, p)
	if err != nil {
		return err
	}
	if r.dirOnly {
		return refusal(op, p, KindIsDir, "the path ends in a slash; name a file")
	}
	// The final name is not followed: a link there is refused below,
	// never written through.
	l, err := f.resolve(r.comps, false)
	if err != nil {
		return f.walkError(op, p, err)
	}
	defer l.close(&f.h)
	path := l.path()
	if l.isRoot() {
		return refusal(op, p, KindIsDir, "the workspace root is a directory; name a file in it")
	}
	if err := f.mayChange(op, p, f.guards(false), path); err != nil {
		return err
	}
	var old *unix.Stat_t
	if l.exists {
		if err := replaceable(op, p, path, &l.st); err != nil {
			return err
		}
		old = &l.st
	}
	if len(l.missing) > 0 {
		if !mkdirParents {
			return refusal(op, p, KindNotFound, "the directory %s does not exist; pass mkdirParents or make it first", join(child(l.dir, l.missing[0])))
		}
		if err := f.makeMissing(l); err != nil {
			return osError(op, p, err)
		}
	}
	if err := replaceFile(l.parent, l.name, content, old); err != nil {
		return osError(op, p, err)
	}
	return nil
}

func (f *FS) targetPath(p string) (string, error) {
	const op = "write"
	r, err := f.parse(op, p)
	if err != nil {
		return "", err
	}
	l, err := f.resolve(r.comps, false)
	if err != nil {
		return "", f.walkError(op, p, err)
	}
	defer l.close(&f.h)
	if l.isRoot() {
		return "", refusal(op, p, KindIsDir, "the workspace root is a directory; name a file in it")
	}
	return join(l.path()), nil
}

// replaceable refuses to replace anything but a regular file.
func replaceable(op, p string, path []string, st *unix.Stat_t) error {
	switch {
	case isSymlink(st):
		return refusal(op, p, KindSymlink, "%s is a symbolic link, which is never written through; write to the path it points to", join(path))
	case isDir(st):
		return refusal(op, p, KindIsDir, "%s is a directory", join(path))
	case !isRegular(st):
		return refusal(op, p, KindSpecial, "%s is a %s; only regular files are written", join(path), kindName(st))
	}
	return nil
}

// replaceFile puts content at name in dir through a temporary file renamed
// over it: readers see the old or the new content, never a mix, and a file
// with other hard links (one outside the workspace, say) is replaced here
// while the other names keep the old content. old, when set, is the file
// replaced, whose owner and permission bits the new one takes.
func replaceFile(dir int, name, content string, old *unix.Stat_t) error {
	perm := uint32(0o644) // less the umask, by the kernel
	if old != nil {
		perm = 0o600 // until the old file's bits are copied
	}
	tmp, fd, err := createTemp(dir, perm)
	if err != nil {
		return err
	}
	file := fileFromFd(fd, tmp)
	err = fill(file, content, old)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = retryEINTR(func() error { return unix.Renameat(dir, tmp, dir, name) })
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
	}
	return err
}

// createTemp makes a new file with a fresh name in dir; O_EXCL and
// O_NOFOLLOW make sure it is new, whatever appears meanwhile.
func createTemp(dir int, perm uint32) (string, int, error) {
	for range 10 {
		name := tempName()
		fd, err := ignoringEINTR(func() (int, error) {
			return unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		})
		if !errors.Is(err, unix.EEXIST) {
			return name, fd, err
		}
	}
	return "", -1, unix.EEXIST
}

func fill(file *os.File, content string, old *unix.Stat_t) error {
	if _, err := file.WriteString(content); err != nil {
		return err
	}
	if old != nil {
		if err := keepOwnerAndMode(int(file.Fd()), old); err != nil {
			return err
		}
	}
	// Renaming before the data is on disk can leave an empty file after
	// a crash on some file systems (ext4 without auto_da_alloc, xfs).
	return file.Sync()
}

// keepOwnerAndMode gives the new file the replaced one's owner (root can;
// others keep their own) and permission bits. Set-id bits are dropped:
// content written by an agent must not run with someone else's rights.
func keepOwnerAndMode(fd int, old *unix.Stat_t) error {
	if os.Geteuid() == 0 {
		_ = unix.Fchown(fd, int(old.Uid), int(old.Gid)) // best effort: a file system may refuse owners
	}
	return unix.Fchmod(fd, old.Mode&0o777)
}

// makeMissing makes the directories l.missing and moves l.parent down
// into the last of them.
func (f *FS) makeMissing(l *lookup) error {
	for len(l.missing) > 0 {
		name := l.missing[0]
		fd, err := f.mkdirStep(l.parent, name)
		if err != nil {
			return err
		}
		if l.parent != f.h.fd {
			unix.Close(l.parent)
		}
		l.parent = fd
		l.dir = child(l.dir, name)
		l.missing = l.missing[1:]
	}
	return nil
}

// mkdirStep makes name in dir (0755 less the umask) and opens it. A
// directory someone else made meanwhile will do; anything else there (a
// link planted between the two calls) is refused, not followed.
func (f *FS) mkdirStep(dir int, name string) (int, error) {
	err := retryEINTR(func() error { return unix.Mkdirat(dir, name, 0o755) })
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	fd, err := f.h.step(dir, name)
	if err != nil {
		return -1, err
	}
	st, err := fstatFd(fd)
	if err == nil && !isDir(&st) {
		err = unix.ENOTDIR
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func (f *FS) mkdir(p string) error {
	const op = "mkdir"
	l, err := f.target(op, p, false)
	if err != nil {
		return err
	}
	defer l.close(&f.h)
	path := l.path()
	if err := f.ownChange(op, p, path, false); err != nil {
		return err
	}
	g := f.guards(false)
	if name, ok := g.creates(path); ok {
		return protectedError(op, p, path, name)
	}
	if hidden(g, path) {
		return hiddenError(op, p, path)
	}
	if l.exists {
		return f.alreadyDir(op, p, l)
	}
	l.missing = append(l.missing, l.name)
	l.name = ""
	if err := f.makeMissing(l); err != nil {
		return osError(op, p, err)
	}
	return nil
}

// alreadyDir accepts an existing directory, or a link to one, for Mkdir.
func (f *FS) alreadyDir(op, p string, l *lookup) error {
	path := l.path()
	switch {
	case isDir(&l.st):
		return nil
	case isSymlink(&l.st):
		to, err := f.resolve(path, true)
		if err != nil {
			return f.walkError(op, p, err)
		}
		defer to.close(&f.h)
		if to.exists && isDir(&to.st) {
			return nil
		}
		return refusal(op, p, KindExists, "%s is a symbolic link to something other than a directory", join(path))
	}
	return refusal(op, p, KindExists, "%s already exists and is a %s", join(path), kindName(&l.st))
}
