package files

import (
	"errors"

	"golang.org/x/sys/unix"
)

func (f *FS) move(from, to string) error {
	const op = "move"
	src, err := f.existing(op, from, false)
	if err != nil {
		return err
	}
	defer src.close(&f.h)
	if src.isRoot() {
		return refusal(op, from, KindInvalid, "the workspace root cannot be moved")
	}
	dst, err := f.fresh(op, to)
	if err != nil {
		return err
	}
	defer dst.close(&f.h)
	sp, dp := src.path(), dst.path()
	g := f.guards(false)
	if err := f.mayChange(op, from, g, sp); err != nil {
		return err
	}
	if err := f.mayChange(op, to, g, dp); err != nil {
		return err
	}
	if within(dp, sp) {
		return refusal(op, to, KindInvalid, "a directory cannot be moved into itself")
	}
	if isSymlink(&src.st) {
		if err := f.linkMoves(op, from, src, dst.dir); err != nil {
			return err
		}
	}
	err = renameNoReplace(src.parent, src.name, dst.parent, dst.name)
	if errors.Is(err, unix.EXDEV) {
		return refusal(op, to, KindIO, "%s and %s are on different file systems: copy, then delete the original", join(sp), join(dp))
	}
	if err != nil {
		return osError(op, to, err)
	}
	return nil
}

// linkMoves refuses to move a relative link where it would point out of
// the workspace. Links inside a moved directory are not checked: none of
// this package's operations follows a link out, wherever it is.
func (f *FS) linkMoves(op, p string, src *lookup, dir []string) error {
	target, err := readlinkAt(src.parent, src.name)
	if err != nil {
		return osError(op, p, err)
	}
	if err := f.linkStays(dir, target); err != nil {
		return f.walkError(op, p, err)
	}
	return nil
}
