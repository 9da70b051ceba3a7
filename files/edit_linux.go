package files

import (
	"golang.org/x/sys/unix"
)

func (f *FS) edit(p string, edits []Edit) (EditResult, error) {
	const op = "edit"
	r, err := f.parse(op, p)
	if err != nil {
		return EditResult{}, err
	}
	if r.dirOnly {
		return EditResult{}, refusal(op, p, KindIsDir, "the path ends in a slash; name a file")
	}
	// As for write, the final name is not followed: a link there is
	// refused, never edited through.
	l, err := f.resolve(r.comps, false)
	if err != nil {
		return EditResult{}, f.walkError(op, p, err)
	}
	defer l.close(&f.h)
	path := l.path()
	if l.isRoot() {
		return EditResult{}, refusal(op, p, KindIsDir, "the workspace root is a directory; name a file in it")
	}
	g := f.guards(true)
	if err := f.mayChange(op, p, g, path); err != nil {
		return EditResult{}, err
	}
	if !l.exists {
		return EditResult{}, f.notFound(op, p, l)
	}
	if err := replaceable(op, p, path, &l.st); err != nil {
		return EditResult{}, err
	}
	old, st, err := f.readWhole(op, p, l, g)
	if err != nil {
		return EditResult{}, err
	}
	text, res, err := applyEdits(op, p, old, edits)
	if err != nil {
		return EditResult{}, err
	}
	if res.Size > f.maxWrite {
		return EditResult{}, refusal(op, p, KindTooLarge, "the edited file would be %d bytes; the limit is %d", res.Size, f.maxWrite)
	}
	res.Path = join(path)
	// The file read must still be the file replaced: an edit made from
	// stale content would silently undo whatever changed it meanwhile.
	var now unix.Stat_t
	if err := retryEINTR(func() error { return unix.Fstatat(l.parent, l.name, &now, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return EditResult{}, osError(op, p, err)
	}
	if idOf(&now) != idOf(&st) || now.Size != st.Size || now.Mtim != st.Mtim || !isRegular(&now) {
		return EditResult{}, osError(op, p, errChanged)
	}
	if err := replaceFile(l.parent, l.name, text, &st); err != nil {
		return EditResult{}, osError(op, p, err)
	}
	return res, nil
}

// readWhole reads the regular file l found, as text, within the size
// limit of a write: what is edited must be writable whole afterwards.
func (f *FS) readWhole(op, p string, l *lookup, g *guards) (string, unix.Stat_t, error) {
	path := l.path()
	fd, st, err := openRegular(l.parent, l.name, &l.st)
	if err != nil {
		return "", st, osError(op, p, err)
	}
	defer unix.Close(fd)
	if g.hiddenFile(idOf(&st)) {
		return "", st, refusal(op, p, KindHidden, "%s is a hard link to a file that holds secrets", join(path))
	}
	if st.Size > f.maxWrite {
		return "", st, refusal(op, p, KindTooLarge, "%s is %d bytes; files over %d bytes are not edited", join(path), st.Size, f.maxWrite)
	}
	buf := make([]byte, st.Size)
	n, err := preadFull(fd, buf, 0)
	if err != nil {
		return "", st, osError(op, p, err)
	}
	if int64(n) != st.Size {
		return "", st, osError(op, p, errChanged)
	}
	if !isText(buf) {
		return "", st, refusal(op, p, KindBinary, "%s is not text (it holds a NUL byte or invalid UTF-8); only text files are edited", join(path))
	}
	return string(buf), st, nil
}
