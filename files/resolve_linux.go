package files

import (
	"errors"
	"slices"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symbolic links one walk follows, as the kernel's
// MAXSYMLINKS does (ELOOP beyond).
const maxLinks = 40

// lookup is where a walk ended: the directory holding the target, open,
// and the target's canonical path below the root. Every operation acts on
// parent with name (renameat, unlinkat, openat with O_NOFOLLOW...), never
// on a path string, so nothing swapped in after the walk can redirect it.
type lookup struct {
	parent int // O_PATH descriptor of the directory holding name; -1 for the root
	self   int // O_PATH descriptor of the target when it is a directory, else -1
	// dir is parent's path below the root: no links, no "..".
	dir []string
	// missing are the directories between parent and name that do not
	// exist (Mkdir and Write with parents make them).
	missing []string
	name    string // "" for the root
	exists  bool
	st      unix.Stat_t // the target, not followed; valid when exists
}

// path is the target's canonical path below the root.
func (l *lookup) path() []string {
	p := slices.Concat(l.dir, l.missing)
	if l.name != "" {
		p = append(p, l.name)
	}
	return p
}

func (l *lookup) isRoot() bool { return l.parent < 0 }

func (l *lookup) close(h *handle) {
	for _, fd := range []int{l.parent, l.self} {
		if fd >= 0 && fd != h.fd {
			unix.Close(fd)
		}
	}
	l.parent, l.self = -1, -1
}

// escapeError is a walk's report of a way out of the workspace.
type escapeError struct {
	link   string // the link that pointed out, relative to the root
	target string // "" when ".." climbed out
}

func (e *escapeError) Error() string {
	switch {
	case e.target == "":
		return `".." leads out of the workspace`
	case e.link == "":
		return "the target " + e.target + " is outside the workspace"
	}
	return "symbolic link " + e.link + " points out of the workspace, to " + e.target
}

var errClosed = errors.New("the workspace was closed")

// frame is a directory the walk is in, held open.
type frame struct {
	fd   int // O_PATH; the root's belongs to the handle
	name string
	st   unix.Stat_t
}

// walker resolves a path one component at a time, each step an open of a
// single name relative to the directory descriptor before it. Links are
// read (never followed by the kernel) and their targets walked the same
// way, so a link can only lead to where a path typed by hand could; ".."
// returns to the directory the walk came from, and out of the root it is
// refused.
type walker struct {
	f     *FS
	stack []frame
	links int
}

func (w *walker) top() int { return w.stack[len(w.stack)-1].fd }

func (w *walker) names() []string {
	names := make([]string, 0, len(w.stack)-1)
	for _, fr := range w.stack[1:] {
		names = append(names, fr.name)
	}
	return names
}

func (w *walker) pop() {
	if fr := w.stack[len(w.stack)-1]; fr.fd >= 0 {
		unix.Close(fr.fd)
	}
	w.stack = w.stack[:len(w.stack)-1]
}

func (w *walker) toRoot() {
	for len(w.stack) > 1 {
		w.pop()
	}
}

// take hands frame i's descriptor over to the caller.
func (w *walker) take(i int) int {
	fd := w.stack[i].fd
	if i > 0 {
		w.stack[i].fd = -1
	}
	return fd
}

func (w *walker) close() {
	for len(w.stack) > 1 {
		w.pop()
	}
}

// resolve walks comps from the root. follow decides whether a final link
// is walked through or is itself the target. Components that do not exist
// are kept as missing (".." after one undoes it, as it would once the
// directory existed); the walk fails on a step out of the root, a link
// pointing out of it, a component that is not a directory, or too many
// links.
func (f *FS) resolve(comps []string, follow bool) (*lookup, error) {
	h := &f.h
	if h.fd < 0 {
		return nil, errClosed
	}
	w := &walker{f: f, stack: []frame{{fd: h.fd}}}
	defer w.close()
	queue := comps
	var missing []string
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch {
		case c == ".." && len(missing) > 0:
			missing = missing[:len(missing)-1]
			continue
		case c == "..":
			if len(w.stack) == 1 {
				return nil, &escapeError{}
			}
			w.pop()
			continue
		case len(missing) > 0:
			missing = append(missing, c)
			continue
		}
		fd, err := h.step(w.top(), c)
		if errors.Is(err, unix.ENOENT) {
			missing = append(missing, c)
			continue
		}
		if err != nil {
			return nil, err
		}
		st, err := fstatFd(fd)
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
		last := len(queue) == 0
		switch {
		case isDir(&st):
			w.stack = append(w.stack, frame{fd: fd, name: c, st: st})
		case isSymlink(&st) && (follow || !last):
			target, err := readlinkAt(fd, "")
			unix.Close(fd)
			if err != nil {
				return nil, err
			}
			next, err := w.through(c, target)
			if err != nil {
				return nil, err
			}
			queue = append(next, queue...)
		default:
			unix.Close(fd)
			if !last {
				return nil, unix.ENOTDIR
			}
			return &lookup{parent: w.take(len(w.stack) - 1), self: -1, dir: w.names(), name: c, exists: true, st: st}, nil
		}
	}
	if len(missing) > 0 {
		n := len(missing)
		return &lookup{parent: w.take(len(w.stack) - 1), self: -1, dir: w.names(), missing: missing[:n-1], name: missing[n-1]}, nil
	}
	return w.atTop()
}

// through returns the components to walk instead of link c in the current
// directory: its target, from the root when absolute.
func (w *walker) through(c, target string) ([]string, error) {
	w.links++
	if w.links > maxLinks {
		return nil, unix.ELOOP
	}
	if target == "" {
		return nil, unix.ENOENT
	}
	if target[0] != '/' {
		return split(target), nil
	}
	comps, ok := w.f.strip(target)
	if !ok {
		return nil, &escapeError{link: join(append(w.names(), c)), target: target}
	}
	w.toRoot()
	return comps, nil
}

// atTop makes the directory the walk ended in the target.
func (w *walker) atTop() (*lookup, error) {
	n := len(w.stack)
	if n == 1 {
		st, err := fstatFd(w.f.h.fd)
		if err != nil {
			return nil, err
		}
		return &lookup{parent: -1, self: w.f.h.fd, exists: true, st: st}, nil
	}
	top := w.stack[n-1]
	self := w.take(n - 1)
	parent := w.take(n - 2)
	names := w.names()
	return &lookup{parent: parent, self: self, dir: names[:len(names)-1], name: top.name, exists: true, st: top.st}, nil
}
