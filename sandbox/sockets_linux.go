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

// readHostSockets reads this namespace's socket table and turns lost
// sockets into warnings. The other names bind mounts give the sockets are
// added by the caller (sameFileElsewhere), which reads the mount table once
// for the sockets and the secrets.
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
	return found, warnings
}
