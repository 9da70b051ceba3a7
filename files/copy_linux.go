package files

import (
	"errors"
	"io"
	"slices"

	"golang.org/x/sys/unix"
)

func (f *FS) copy(from, to string) error {
	const op = "copy"
	src, err := f.existing(op, from, false)
	if err != nil {
		return err
	}
	defer src.close(&f.h)
	dst, err := f.fresh(op, to)
	if err != nil {
		return err
	}
	defer dst.close(&f.h)
	sp, dp := src.path(), dst.path()
	g := f.guards(true)
	if _, ok := g.hides(sp, true); ok {
		return hiddenError(op, from, sp)
	}
	if err := f.mayChange(op, to, g, dp); err != nil {
		return err
	}
	if within(dp, sp) {
		return refusal(op, to, KindInvalid, "a directory cannot be copied into itself")
	}
	// The copy is built under a temporary name and renamed into place
	// whole, so that a refusal halfway leaves nothing behind.
	tmp := tempName()
	c := &copier{f: f, g: g, op: op, from: from, srcRoot: sp, dstRoot: dp}
	err = c.entry(src.parent, src.name, sp, dst.parent, tmp, child(dst.dir, tmp), 0)
	if err == nil {
		err = renameNoReplace(dst.parent, tmp, dst.parent, dst.name)
		if err != nil {
			err = osError(op, to, err)
		}
	}
	if err == nil {
		err = c.linksStay(dp, len(dst.dir))
		tmp = dst.name // on failure, remove the copy where it now is
	}
	if err != nil {
		_ = removeTree(dst.parent, tmp, 0)
		return err
	}
	return nil
}

// copier copies one tree and keeps count of what it made.
type copier struct {
	f *FS
	g *guards
	// srcRoot and dstRoot are the copy's source and final destination:
	// every path the copy makes is checked against the protected-path
	// rule where it will end up (a repository's hooks copied elsewhere are
	// hooks planted there).
	srcRoot, dstRoot []string
	op, from         string
	entries          int
	bytes            int64
	links            []copiedLink
}

// copiedLink is a link the copy made, checked again once the copy has its
// final name: a link may lead out only through another link of the same
// copy.
type copiedLink struct {
	path   []string // in the copy as built
	target string
}

// entry copies sname in sdir (at spath) to dname in ddir (at dpath).
func (c *copier) entry(sdir int, sname string, spath []string, ddir int, dname string, dpath []string, depth int) error {
	st, err := lstatAt(sdir, sname)
	if err != nil {
		return osError(c.op, c.from, err)
	}
	if c.entries++; c.entries > copyMaxEntries {
		return refusal(c.op, c.from, KindTooLarge, "the tree holds more than %d entries", copyMaxEntries)
	}
	if hidden(c.g, spath) {
		return hiddenError(c.op, c.from, spath)
	}
	if len(spath) > len(c.srcRoot) {
		final := append(slices.Clone(c.dstRoot), spath[len(c.srcRoot):]...)
		if name, ok := c.g.byRule(final); ok {
			return protectedError(c.op, c.from, final, name)
		}
	}
	switch {
	case isDir(&st):
		if depth >= maxDepth {
			return refusal(c.op, c.from, KindTooLarge, "the tree is more than %d directories deep", maxDepth)
		}
		return c.dir(sdir, sname, spath, &st, ddir, dname, dpath, depth)
	case isRegular(&st):
		return c.file(sdir, sname, spath, &st, ddir, dname)
	case isSymlink(&st):
		return c.link(sdir, sname, spath, ddir, dname, dpath)
	}
	return refusal(c.op, c.from, KindSpecial, "%s is a %s; only files, directories and symbolic links are copied", join(spath), kindName(&st))
}

// copyPerm is a source's permission bits without set-id bits or write
// access for group and others: a copy is never more open than 0755.
func copyPerm(st *unix.Stat_t) uint32 { return st.Mode & 0o755 }

func (c *copier) dir(sdir int, sname string, spath []string, st *unix.Stat_t, ddir int, dname string, dpath []string, depth int) error {
	sfd, err := ignoringEINTR(func() (int, error) {
		return unix.Openat(sdir, sname, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return osError(c.op, c.from, err)
	}
	source := fileFromFd(sfd, sname)
	defer source.Close()
	// Owner access until the directory is filled; the kernel applies the
	// umask to the rest.
	perm := copyPerm(st)
	if err := retryEINTR(func() error { return unix.Mkdirat(ddir, dname, perm|0o700) }); err != nil {
		return osError(c.op, c.from, err)
	}
	dfd, err := ignoringEINTR(func() (int, error) {
		return unix.Openat(ddir, dname, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return osError(c.op, c.from, err)
	}
	defer unix.Close(dfd)
	for {
		names, err := source.Readdirnames(1024)
		for _, n := range names {
			if err := c.entry(sfd, n, child(spath, n), dfd, n, child(dpath, n), depth+1); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || err == nil && len(names) == 0 {
			break
		}
		if err != nil {
			return osError(c.op, c.from, err)
		}
	}
	made, err := fstatFd(dfd)
	if err != nil {
		return osError(c.op, c.from, err)
	}
	if err := unix.Fchmod(dfd, made.Mode&0o777&^(0o700&^perm)); err != nil {
		return osError(c.op, c.from, err)
	}
	return nil
}

func (c *copier) file(sdir int, sname string, spath []string, st *unix.Stat_t, ddir int, dname string) error {
	in, ist, err := openRegular(sdir, sname, st)
	if err != nil {
		return osError(c.op, c.from, err)
	}
	source := fileFromFd(in, sname)
	defer source.Close()
	if c.g.hiddenFile(idOf(&ist)) {
		return refusal(c.op, c.from, KindHidden, "%s is a hard link to a file that holds secrets", join(spath))
	}
	out, err := ignoringEINTR(func() (int, error) {
		return unix.Openat(ddir, dname, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, copyPerm(&ist))
	})
	if err != nil {
		return osError(c.op, c.from, err)
	}
	target := fileFromFd(out, dname)
	defer target.Close()
	left := copyMaxBytes - c.bytes
	n, err := io.Copy(target, io.LimitReader(source, left+1))
	c.bytes += n
	if err != nil {
		return osError(c.op, c.from, err)
	}
	if n > left {
		return refusal(c.op, c.from, KindTooLarge, "the copy would be more than %d bytes", int64(copyMaxBytes))
	}
	return nil
}

func (c *copier) link(sdir int, sname string, spath []string, ddir int, dname string, dpath []string) error {
	target, err := readlinkAt(sdir, sname)
	if err != nil {
		return osError(c.op, c.from, err)
	}
	if err := c.f.linkStays(dpath[:len(dpath)-1], target); err != nil {
		return c.linkError(spath, err)
	}
	if err := unix.Symlinkat(target, ddir, dname); err != nil {
		return osError(c.op, c.from, err)
	}
	c.links = append(c.links, copiedLink{path: dpath, target: target})
	return nil
}

// linksStay checks the copy's links again at its final place, dest; the
// first depth components of their paths are the directory holding it.
func (c *copier) linksStay(dest []string, depth int) error {
	for _, l := range c.links {
		path := append(dest[:len(dest):len(dest)], l.path[depth+1:]...)
		if err := c.f.linkStays(path[:len(path)-1], l.target); err != nil {
			return c.linkError(path, err)
		}
	}
	return nil
}

func (c *copier) linkError(path []string, err error) error {
	var esc *escapeError
	if errors.As(err, &esc) {
		e := refusal(c.op, c.from, KindOutside, "the symbolic link %s would lead out of the workspace %s (%s); it is not copied", join(path), c.f.root, esc)
		e.Err = err
		return e
	}
	return c.f.walkError(c.op, c.from, err)
}
