package pathtree

import (
	"path/filepath"
	"strings"
)

const sep = string(filepath.Separator)

// Within reports whether p is dir or lies beneath it, judged on the cleaned
// names alone (see the package documentation: symbolic links are the
// caller's to resolve first).
func Within(p, dir string) bool {
	if p == "" || dir == "" {
		return false
	}
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || beneath(p, dir)
}

// Beneath reports whether p lies strictly beneath dir: within it and not dir
// itself.
func Beneath(p, dir string) bool {
	if p == "" || dir == "" {
		return false
	}
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p != dir && beneath(p, dir)
}

// beneath judges clean, distinct names.
func beneath(p, dir string) bool {
	var rest string
	switch {
	case dir == ".":
		if rooted(p) {
			return false
		}
		rest = p
	case strings.HasSuffix(dir, sep):
		// Only a root ("/", `C:\`, `\\host\share\`) keeps its separator
		// after cleaning; everything rooted there lies beneath it.
		if !strings.HasPrefix(p, dir) {
			return false
		}
		rest = p[len(dir):]
	case strings.HasPrefix(p, dir+sep):
		rest = p[len(dir)+1:]
	default:
		return false
	}
	// A clean name keeps its ".." components at the front, so "../.." starts
	// with "../" yet lies above "..", not beneath it.
	return rest != ".." && !strings.HasPrefix(rest, ".."+sep)
}

// rooted reports whether a clean name is absolute or tied to a volume, so
// that it cannot be beneath a relative directory.
func rooted(p string) bool {
	return filepath.IsAbs(p) || strings.HasPrefix(p, sep) || filepath.VolumeName(p) != ""
}
