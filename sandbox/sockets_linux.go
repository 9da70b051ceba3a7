package sandbox

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// hostSockets lists the pathname Unix sockets bound in the caller's network
// namespace, as /proc/net/unix reports them, that exist at those paths now.
// Landlock (up to ABI 7) cannot stop connect() to such a socket and a
// read-only mount does not either, so the view covers each one. Abstract
// sockets are left to the network namespace.
func hostSockets(r io.Reader) []string {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		if first { // header
			first = false
			continue
		}
		p := socketPath(sc.Text())
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		// The bind path may run through symlinks (/var/run/docker.sock);
		// the view needs the real one.
		dir, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			continue
		}
		p = filepath.Join(dir, filepath.Base(p))
		var st unix.Stat_t
		if seen[p] || unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// socketPath returns the path field of a /proc/net/unix line: whatever
// follows the seven fixed fields.
func socketPath(line string) string {
	rest := line
	for i := 0; i < 7; i++ {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			return ""
		}
		rest = rest[j:]
	}
	return strings.TrimPrefix(rest, " ")
}

func readHostSockets() []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	return hostSockets(f)
}
