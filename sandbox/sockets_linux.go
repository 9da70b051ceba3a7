package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hostSockets lists the pathname Unix sockets bound in the caller's network
// namespace, as /proc/net/unix reports them, that exist at those paths now.
// Landlock (up to ABI 7) cannot stop connect() to such a socket and a
// read-only mount does not either, so the view covers each one. Abstract
// sockets are left to the network namespace.
//
// A socket bound with a relative path is listed without its directory: it
// is looked for in the working directory of the processes holding it. What
// cannot be located comes back in lost, to be reported.
func hostSockets(r io.Reader, procRoot string) (found, lost []string) {
	seen := map[string]bool{}
	relative := map[string]string{} // socket inode -> relative path
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		if first { // header
			first = false
			continue
		}
		inode, p := socketEntry(sc.Text())
		switch {
		case p == "" || p[0] == '@':
			continue
		case !filepath.IsAbs(p):
			relative[inode] = p
			continue
		}
		if p, ok := socketAt(p); ok && !seen[p] {
			seen[p] = true
			found = append(found, p)
		}
	}
	for inode, rel := range relative {
		located := false
		for _, dir := range holderDirs(procRoot, inode) {
			if p, ok := socketAt(filepath.Join(dir, rel)); ok {
				located = true
				if !seen[p] {
					seen[p] = true
					found = append(found, p)
				}
			}
		}
		if !located {
			lost = append(lost, rel)
		}
	}
	return found, lost
}

// socketAt returns the real path of the socket at p, if there is one. The
// bind path may run through symlinks (/var/run/docker.sock); the view needs
// the real one.
func socketAt(p string) (string, bool) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", false
	}
	p = filepath.Join(dir, filepath.Base(p))
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return "", false
	}
	return p, true
}

// socketEntry returns the inode and path fields of a /proc/net/unix line:
// the seventh field, and whatever follows it.
func socketEntry(line string) (inode, path string) {
	rest := line
	for i := 0; i < 7; i++ {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			if i == 6 {
				return rest, ""
			}
			return "", ""
		}
		if i == 6 {
			inode = rest[:j]
		}
		rest = rest[j:]
	}
	return inode, strings.TrimPrefix(rest, " ")
}

// holderDirs returns the working directories of the processes that hold the
// socket with this inode, among those whose descriptors this user may read.
func holderDirs(procRoot, inode string) []string {
	want := "socket:[" + inode + "]"
	procs, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fdDir := filepath.Join(procRoot, p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // another user's process
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && l == want {
				if cwd, err := os.Readlink(filepath.Join(procRoot, p.Name(), "cwd")); err == nil {
					dirs = append(dirs, cwd)
				}
				break
			}
		}
	}
	return dirs
}

// readHostSockets reads this namespace's socket table, adds the other
// names bind mounts give the sockets, and turns lost sockets into warnings.
func readHostSockets() (found []string, warnings []string) {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil, []string{fmt.Sprintf("cannot list the host's Unix sockets (%v): sockets outside /run and /tmp are not covered", err)}
	}
	defer f.Close()
	found, lost := hostSockets(f, "/proc")
	for _, l := range lost {
		warnings = append(warnings, fmt.Sprintf("a host Unix socket bound as %q (a relative path) could not be located, so it is not covered", l))
	}
	if len(found) > 0 {
		if mi, err := os.Open("/proc/self/mountinfo"); err == nil {
			found = append(found, socketAliases(found, parseMountinfo(mi))...)
			mi.Close()
		}
	}
	return found, warnings
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	dev         string // major:minor
	root, point string // the mount's root within its filesystem, and where it is mounted
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

// socketAliases returns the other paths of the sockets: the same file seen
// through a bind mount of a directory that holds it. A cover on one path
// does not cover another.
func socketAliases(socks []string, mounts []mountEntry) []string {
	var out []string
	for _, s := range socks {
		var st unix.Stat_t
		if unix.Lstat(s, &st) != nil {
			continue
		}
		m := -1 // the mount s is on: the deepest mount point above it, the last of equals
		for i, e := range mounts {
			if within(s, e.point) && (m < 0 || len(e.point) >= len(mounts[m].point)) {
				m = i
			}
		}
		if m < 0 {
			continue
		}
		rel := filepath.Join(mounts[m].root, strings.TrimPrefix(s, mounts[m].point))
		for i, e := range mounts {
			if i == m || e.dev != mounts[m].dev || !within(rel, e.root) {
				continue
			}
			alias := filepath.Join(e.point, strings.TrimPrefix(rel, e.root))
			var at unix.Stat_t
			if alias != s && unix.Lstat(alias, &at) == nil && at.Dev == st.Dev && at.Ino == st.Ino {
				out = append(out, alias)
			}
		}
	}
	return out
}
