package sandbox

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
	"golang.org/x/sys/unix"
)

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	dev         string // major:minor
	root, point string // the mount's root within its filesystem, and where it is mounted
}

// readMountinfo reads this process's mount table; nil when it cannot be
// read (then no other names are found, and the caller's own paths are
// still covered).
func readMountinfo() []mountEntry {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseMountinfo(f)
}

func parseMountinfo(r io.Reader) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		out = append(out, mountEntry{dev: f[2], root: unescapeMount(f[3]), point: unescapeMount(f[4])})
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sameFileElsewhere returns the other paths that reach the files and
// directories at these paths: through a bind mount of a directory holding
// one (or of the file itself), a second mount of the same filesystem, or a
// bind mount of a directory inside one (whose mount point then shows part
// of it). A cover on one path covers nothing at another, so every path
// forgebox hides or covers, secrets and host sockets alike, goes through
// here. Each candidate is checked by device and inode: the mount table
// only says where to look.
func sameFileElsewhere(paths []hostPath, mounts []mountEntry) []hostPath {
	var out []hostPath
	seen := map[string]bool{}
	for _, p := range paths {
		seen[p.Path] = true
	}
	add := func(h hostPath) {
		if !seen[h.Path] {
			seen[h.Path] = true
			out = append(out, h)
		}
	}
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Lstat(p.Path, &st) != nil {
			continue
		}
		m := -1 // the mount p is on: the deepest mount point above it, the last of equals
		for i, e := range mounts {
			if pathtree.Within(p.Path, e.point) && (m < 0 || len(e.point) >= len(mounts[m].point)) {
				m = i
			}
		}
		if m < 0 {
			continue
		}
		rel := filepath.Join(mounts[m].root, strings.TrimPrefix(p.Path, mounts[m].point))
		for i, e := range mounts {
			if i == m || e.dev != mounts[m].dev {
				continue
			}
			switch {
			case pathtree.Within(rel, e.root):
				// The mount shows p (or a directory holding it).
				alias := filepath.Join(e.point, strings.TrimPrefix(rel, e.root))
				var at unix.Stat_t
				if alias != p.Path && unix.Lstat(alias, &at) == nil && at.Dev == st.Dev && at.Ino == st.Ino {
					add(hostPath{Path: alias, Dir: p.Dir})
				}
			case p.Dir && pathtree.Beneath(e.root, rel):
				// The mount shows a directory inside p: hide all of it.
				inside := filepath.Join(p.Path, strings.TrimPrefix(e.root, rel))
				var in, at unix.Stat_t
				if unix.Lstat(inside, &in) == nil && unix.Lstat(e.point, &at) == nil && at.Dev == in.Dev && at.Ino == in.Ino {
					add(hostPath{Path: e.point, Dir: at.Mode&unix.S_IFMT == unix.S_IFDIR})
				}
			}
		}
	}
	return out
}
