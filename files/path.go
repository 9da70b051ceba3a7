package files

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of a path, from Linux: longer input is a mistake or an attack, and
// the kernel would refuse it later anyway.
const (
	maxPathBytes = 4096 // PATH_MAX
	maxNameBytes = 255  // NAME_MAX
)

// request is a path as an operation received it, checked and split.
type request struct {
	comps []string // components below the root; may hold ".." (resolved by the walk, never lexically)
	// dirOnly: the path ended in "/", "/." or "/..", so it names a
	// directory.
	dirOnly bool
}

// parse checks p and splits it into components below the root. A relative
// path is taken from the root; an absolute one must begin with the root (as
// given or with its symbolic links resolved). ".." is kept for the walk,
// which resolves it after the symbolic links before it, as the kernel
// would: "link/.." is the parent of the link's target, not the root.
func (f *FS) parse(op, p string) (request, error) {
	if err := checkInput(op, p); err != nil {
		return request{}, err
	}
	r := request{dirOnly: endsInDir(p)}
	if !strings.HasPrefix(p, "/") {
		r.comps = split(p)
		return r, nil
	}
	comps, ok := f.strip(p)
	if !ok {
		return request{}, refusal(op, p, KindOutside, "paths must be inside the workspace %s; give them relative to it", f.root)
	}
	r.comps = comps
	return r, nil
}

// checkInput refuses what no path of the workspace can be.
func checkInput(op, p string) error {
	switch {
	case p == "":
		return refusal(op, p, KindInvalid, `the path is empty; use "." for the workspace itself`)
	case strings.IndexByte(p, 0) >= 0:
		return refusal(op, p, KindInvalid, "the path holds a NUL byte")
	case !utf8.ValidString(p):
		return refusal(op, p, KindInvalid, "the path is not valid UTF-8")
	case len(p) > maxPathBytes:
		return refusal(op, shorten(p), KindInvalid, "the path is %d bytes; the limit is %d", len(p), maxPathBytes)
	}
	for _, name := range strings.Split(p, "/") {
		if len(name) > maxNameBytes {
			return refusal(op, shorten(p), KindInvalid, "a name in the path is %d bytes; the limit is %d", len(name), maxNameBytes)
		}
	}
	return nil
}

// shorten keeps an error about an oversized path readable.
func shorten(p string) string {
	const keep = 64
	if len(p) <= keep {
		return p
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "..."
}

func endsInDir(p string) bool {
	last := p[strings.LastIndexByte(p, '/')+1:]
	return strings.Contains(p, "/") && (last == "" || last == "." || last == "..")
}

// split turns a slash-separated path into its components, dropping empty
// ones and ".": both name the directory they are in.
func split(p string) []string {
	var comps []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			comps = append(comps, c)
		}
	}
	return comps
}

// strip returns the components of absolute path p below the root, and false
// when p does not begin with the root. A ".." among the root's own
// components never matches, so "/ws/../ws/x" is refused rather than
// cleaned.
func (f *FS) strip(p string) ([]string, bool) {
	comps := split(p)
	for _, root := range f.roots {
		if len(comps) >= len(root) && slices.Equal(comps[:len(root)], root) {
			return comps[len(root):], true
		}
	}
	return nil, false
}

// within reports whether p is base or lies beneath it.
func within(p, base []string) bool {
	return len(p) >= len(base) && slices.Equal(p[:len(base)], base)
}

// join renders components relative to the root for messages and results.
func join(comps []string) string {
	if len(comps) == 0 {
		return "."
	}
	return strings.Join(comps, "/")
}
