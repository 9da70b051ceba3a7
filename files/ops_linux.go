package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"

	"golang.org/x/sys/unix"
)

// target parses p and walks it for op; the caller closes the lookup.
func (f *FS) target(op, p string, follow bool) (*lookup, error) {
	r, err := f.parse(op, p)
	if err != nil {
		return nil, err
	}
	l, err := f.resolve(r.comps, follow)
	if err != nil {
		return nil, f.walkError(op, p, err)
	}
	if r.dirOnly && l.exists && !isDir(&l.st) {
		l.close(&f.h)
		return nil, refusal(op, p, KindNotDir, "the path ends in a slash but %s is a %s, not a directory", join(l.path()), entryType(&l.st))
	}
	return l, nil
}

// existing is target for an operation on something that must exist.
func (f *FS) existing(op, p string, follow bool) (*lookup, error) {
	l, err := f.target(op, p, follow)
	if err != nil {
		return nil, err
	}
	if !l.exists {
		err := f.notFound(op, p, l)
		l.close(&f.h)
		return nil, err
	}
	return l, nil
}

// fresh is target for a name an operation is about to create: it must
// not exist, and its directory must.
func (f *FS) fresh(op, p string) (*lookup, error) {
	l, err := f.target(op, p, false)
	if err != nil {
		return nil, err
	}
	switch {
	case l.exists:
		err = refusal(op, p, KindExists, "%s already exists; delete it first or choose another name", join(l.path()))
	case len(l.missing) > 0:
		err = f.notFound(op, p, l)
	}
	if err != nil {
		l.close(&f.h)
		return nil, err
	}
	return l, nil
}

func (f *FS) notFound(op, p string, l *lookup) error {
	if len(l.missing) > 0 {
		dir := join(slices.Concat(l.dir, l.missing[:1]))
		return refusal(op, p, KindNotFound, "the directory %s does not exist", dir)
	}
	return refusal(op, p, KindNotFound, "%s does not exist; list %s to see what does", join(l.path()), join(l.dir))
}

// walkError turns what a walk reports into an Error.
func (f *FS) walkError(op, p string, err error) error {
	var esc *escapeError
	if errors.As(err, &esc) {
		e := refusal(op, p, KindOutside, "paths must stay inside the workspace %s: %s", f.root, esc.Error())
		e.Err = err
		return e
	}
	return osError(op, p, err)
}

// guards resolves the protected and hidden paths as they stand now: a link
// made since the last operation counts. withIDs also identifies the hidden
// files, for operations that read content.
func (f *FS) guards(withIDs bool) *guards {
	g := &guards{protected: f.throughLinks(f.protected), hidden: f.throughLinks(f.hidden), rule: f.rule}
	if withIDs {
		for _, p := range f.hiddenAbs {
			var st unix.Stat_t
			if unix.Stat(p, &st) == nil && isRegular(&st) {
				g.hiddenIDs = append(g.hiddenIDs, idOf(&st))
			}
		}
	}
	return g
}

// throughLinks adds to each guard the path its forms resolve to. A form
// that does not resolve (a link out of the workspace, a loop) keeps only
// its literal form: nothing can be reached through it either.
func (f *FS) throughLinks(gs []guard) []guard {
	out := make([]guard, 0, len(gs))
	for _, g := range gs {
		forms := slices.Clone(g.forms)
		for _, form := range g.forms {
			l, err := f.resolve(form, true)
			if err != nil {
				continue
			}
			if p := l.path(); !slices.ContainsFunc(forms, func(x []string) bool { return slices.Equal(x, p) }) {
				forms = append(forms, p)
			}
			l.close(&f.h)
		}
		out = append(out, guard{name: g.name, forms: forms})
	}
	return out
}

// mayChange refuses a change at path (the target's canonical path) that
// would touch a protected or hidden path.
func (f *FS) mayChange(op, p string, g *guards, path []string) error {
	if err := f.ownChange(op, p, path, true); err != nil {
		return err
	}
	if name, ok := g.changes(path); ok {
		return protectedError(op, p, path, name)
	}
	if _, ok := g.hides(path, true); ok {
		return hiddenError(op, p, path)
	}
	return nil
}

func protectedError(op, p string, path []string, name string) error {
	if within(path, split(name)) {
		return refusal(op, p, KindProtected, "%s is protected: the agent may not change %s", join(path), name)
	}
	return refusal(op, p, KindProtected, "%s holds the protected path %s, which the agent may not change", join(path), name)
}

func hiddenError(op, p string, path []string) error {
	return refusal(op, p, KindHidden, "%s holds secrets: these tools may not read, copy, move, change or delete it", join(path))
}

// linkStays checks that a link with target, placed in directory dir (a
// canonical path), resolves inside the workspace; a target that does not
// exist yet is fine.
func (f *FS) linkStays(dir []string, target string) error {
	if target == "" {
		return unix.ENOENT
	}
	var comps []string
	if target[0] == '/' {
		var ok bool
		if comps, ok = f.strip(target); !ok {
			return &escapeError{target: target}
		}
	} else {
		comps = slices.Concat(dir, split(target))
	}
	l, err := f.resolve(comps, true)
	if err != nil {
		return err
	}
	l.close(&f.h)
	return nil
}

// renameNoReplace renames without ever replacing what is at the new name.
// File systems without RENAME_NOREPLACE get a check before a plain rename:
// a racing creator could then be replaced, but both names are still in the
// directories the walk opened.
func renameNoReplace(olddir int, oldname string, newdir int, newname string) error {
	err := retryEINTR(func() error { return unix.Renameat2(olddir, oldname, newdir, newname, unix.RENAME_NOREPLACE) })
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	if _, err := lstatAt(newdir, newname); err == nil {
		return unix.EEXIST
	} else if !errors.Is(err, unix.ENOENT) {
		return err
	}
	return retryEINTR(func() error { return unix.Renameat(olddir, oldname, newdir, newname) })
}

// tempName is a name for a file or tree being made, unlikely to collide
// and of fixed length, so that it fits wherever the final name does.
func tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return ".fbtmp-" + hex.EncodeToString(b[:])
}

// child is path/name in a new slice.
func child(path []string, name string) []string {
	return append(slices.Clip(path), name)
}
