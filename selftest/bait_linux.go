package selftest

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/forgebox/forgebox/caches"
	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/probe"
	"github.com/forgebox/forgebox/sandbox"
	"golang.org/x/sys/unix"
)

// bait is what selftest plants on the host for the probe to attack, and
// how the host looked before; remove takes it all away again.
type bait struct {
	target
	listeners map[string]net.Listener // by class
	host      *exec.Cmd               // the process to see and signal
	hostIn    io.WriteCloser          // its stdin: it exits when this closes
	hostDone  chan struct{}
	before    map[string]fileState // by path relative to root
	noSetuid  string               // why the setuid class cannot be tested
}

// privateDirs are private to every sandbox: bait there would be invisible
// to the probe, and prove nothing.
var privateDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run"}

// setuidCandidates are setuid-root programs most Linux hosts have, which
// print their version (and block there, on a full pipe) without doing
// anything else.
var setuidCandidates = []string{"/usr/bin/mount", "/bin/mount", "/usr/bin/su", "/bin/su", "/usr/bin/passwd"}

// plantBait makes a fresh bait directory where the sandbox of spec shows
// the host read-only, fills it, binds its sockets and starts the host
// process. On error nothing of it is left.
func plantBait(exe string, spec sandbox.Spec) (*bait, error) {
	dir, err := baitDir(spec, privateDirs)
	if err != nil {
		return nil, err
	}
	return plantBaitIn(dir, exe)
}

// plantBaitIn plants the bait in a new directory in dir; exe runs the
// host process.
func plantBaitIn(dir, exe string) (*bait, error) {
	root, err := os.MkdirTemp(dir, "forgebox-selftest-")
	if err != nil {
		return nil, fmt.Errorf("create the bait directory: %w", err)
	}
	b := &bait{target: target{root: root, ws: filepath.Join(root, baitWorkspace)}, listeners: map[string]net.Listener{}}
	if err := b.plant(exe); err != nil {
		b.remove()
		return nil, err
	}
	return b, nil
}

func (b *bait) plant(exe string) (err error) {
	b.token = "forgebox-selftest-secret-" + randomHex()
	b.abstract = "forgebox-selftest-" + randomHex()
	if err := b.writeFiles(); err != nil {
		return fmt.Errorf("write the bait files: %w", err)
	}
	if err := b.listen(); err != nil {
		return fmt.Errorf("bind the bait sockets: %w", err)
	}
	if err := b.startHost(exe); err != nil {
		return fmt.Errorf("start the bait process: %w", err)
	}
	b.setuid, b.setuidArgs, b.noSetuid = findSetuid()
	if b.before, err = b.snapshot(); err != nil {
		return fmt.Errorf("record the bait: %w", err)
	}
	return nil
}

// baitDir picks where the bait goes: the user's cache directory, else the
// home directory; never a place the sandbox makes writable (--rw) or
// private (/tmp), where the attacks on the host would prove nothing.
func baitDir(spec sandbox.Spec, private []string) (string, error) {
	var candidates []string
	if d, err := os.UserCacheDir(); err == nil && os.MkdirAll(d, 0o700) == nil {
		candidates = append(candidates, d)
	}
	if d, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, d)
	}
	var avoid []string
	if !spec.NoCache {
		// Writes there land in the run's private cache, not on the
		// host: bait in a package cache would look written.
		home, _ := os.UserHomeDir()
		for _, c := range caches.Locate(os.Getenv, home) {
			private = append(slices.Clone(private), c.Path)
		}
	}
	for _, p := range slices.Concat(spec.ReadWrite, spec.Hide, private) {
		avoid = append(avoid, p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			avoid = append(avoid, r)
		}
	}
	for _, c := range candidates {
		real, err := filepath.EvalSymlinks(c)
		if err != nil || unix.Access(real, unix.W_OK|unix.X_OK) != nil {
			continue
		}
		if !slices.ContainsFunc(avoid, func(a string) bool { return pathtree.Within(real, a) || pathtree.Within(c, a) }) {
			return real, nil
		}
	}
	return "", sandbox.Invalidf("selftest finds no place for its bait: the cache directory (%s) or the home directory must exist, be writable, and be neither granted with --rw nor hidden nor below %s",
		"$XDG_CACHE_HOME or ~/.cache", strings.Join(private, ", "))
}

func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeFiles lays out the bait: a workspace with a Git repository and
// protected names, files outside it, and a secret file and directory.
func (b *bait) writeFiles() error {
	files := []struct {
		rel, content string
		mode         fs.FileMode
	}{
		{"ws/.git/HEAD", "ref: refs/heads/main\n", 0o644},
		{"ws/.git/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n", 0o644},
		{"ws/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755},
		{"ws/.bashrc", "# forgebox selftest bait\n", 0o644},
		{"ws/.vscode/settings.json", "{}\n", 0o644},
		{"ws/notes.txt", "the probe's workspace\n", 0o644},
		{"ws/lib/inner/.git/HEAD", "ref: refs/heads/main\n", 0o644},
		{"ws/lib/inner/.git/config", "[core]\n\trepositoryformatversion = 0\n", 0o644},
		{"ws/lib/inner/.git/hooks/pre-commit.sample", "#!/bin/sh\nexit 0\n", 0o755},
		{"outside/file.txt", "forgebox selftest bait: must stay as it is\n", 0o644},
		{"outside/mode.txt", "forgebox selftest bait: mode and times must stay\n", 0o644},
		{baitSecretFile, b.token + "\n", 0o600},
		// Credential files of the table (sandbox/secrets.go) in a home of
		// the bait's: the probe runs with HOME there.
		{baitHome + "/.pgpass", "localhost:5432:*:me:" + b.token + "\n", 0o600},
		{baitHome + "/.config/rclone/rclone.conf", "[s3]\nsecret_access_key = " + b.token + "\n", 0o600},
		{baitHome + "/.claude/.credentials.json", `{"token":"` + b.token + `"}` + "\n", 0o600},
		{baitSecretDir + "/id_selftest", b.token + "\n", 0o600},
	}
	for _, f := range files {
		p := b.path(f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.content), f.mode); err != nil {
			return err
		}
		if err := os.Chmod(p, f.mode); err != nil { // past the umask
			return err
		}
	}
	return nil
}

// listen binds the sockets the probe will try: a pathname and an abstract
// Unix socket, and TCP on the host's loopback. Nobody accepts: a
// connection that got through waits in the backlog, where pending counts
// it.
func (b *bait) listen() error {
	sock := b.path(baitSocket)
	if max := len(unix.RawSockaddrUnix{}.Path) - 1; len(sock) > max {
		return sandbox.Invalidf("the bait socket %s is %d bytes long, over the %d of a Unix socket address: set XDG_CACHE_HOME to a shorter directory", sock, len(sock), max)
	}
	for _, l := range []struct{ class, network, addr string }{
		{classUnixSocket, "unix", sock},
		{classAbstractSocket, "unix", "@" + b.abstract},
		{classNetwork, "tcp4", "127.0.0.1:0"},
	} {
		ln, err := net.Listen(l.network, l.addr)
		if err != nil {
			return err
		}
		b.listeners[l.class] = ln
	}
	b.tcp = b.listeners[classNetwork].Addr().String()
	return nil
}

// pending accepts, without waiting, the connections that reached l.
func pending(l net.Listener) (int, error) {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("no descriptor for %s", l.Addr())
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	n := 0
	cerr := rc.Control(func(fd uintptr) { // the descriptor is non-blocking
		for {
			nfd, _, aerr := unix.Accept4(int(fd), unix.SOCK_CLOEXEC)
			if aerr == unix.EINTR || aerr == unix.ECONNABORTED {
				continue
			}
			if aerr != nil {
				if aerr != unix.EAGAIN {
					err = aerr
				}
				return
			}
			unix.Close(nfd)
			n++
		}
	})
	return n, cmp.Or(cerr, err)
}

// startHost starts the process the probe must neither see nor signal: the
// probe's own pause, which ends when selftest does (its stdin closes).
func (b *bait) startHost(exe string) error {
	cmd := exec.Command(exe, ProbeVerb, "pause 120")
	cmd.Env = []string{}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	b.host, b.hostIn, b.hostDone, b.hostPID = cmd, in, make(chan struct{}), cmd.Process.Pid
	go func() {
		cmd.Wait()
		close(b.hostDone)
	}()
	return nil
}

// hostAlive reports whether the host process still runs, and if not how it
// ended.
func (b *bait) hostAlive() (bool, string) {
	select {
	case <-b.hostDone:
		return false, b.host.ProcessState.String()
	default:
		return true, ""
	}
}

// findSetuid picks a setuid-root program and checks, on the host, that
// running it raises the caller's credentials: the control that proves the
// check inside the sandbox can see a gain.
func findSetuid() (prog string, args []string, why string) {
	for _, p := range setuidCandidates {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&unix.S_ISUID == 0 || st.Uid != 0 {
			continue
		}
		args = []string{"--version"}
		v := probe.Do("exec-creds", append([]string{p}, args...))
		if gained, _, _ := credsGained(v.Out); !v.OK || !gained {
			why = fmt.Sprintf("%s gains nothing even outside the sandbox (%s)", p, outcome(v, v.Out))
			continue
		}
		return p, args, ""
	}
	if why == "" {
		why = "no setuid-root program here among those selftest tries (" + strings.Join(setuidCandidates, ", ") + ")"
	}
	return "", nil, why
}

// fileState is what a bait path looked like: enough to prove it unchanged.
type fileState struct {
	exists             bool
	mode               fs.FileMode
	uid, gid           uint32
	size, mtime, ctime int64
	content, link      string
	entries, xattrs    string
}

// watchedPaths are the bait paths checked after the run, relative to root,
// by the class an unexpected change there proves.
func (b *bait) watchedPaths() map[string]string {
	w := map[string]string{
		baitSecretFile: classSecret, baitSecretDir: classSecret, baitSecretDir + "/id_selftest": classSecret,
		baitHome + "/.pgpass": classSecret, baitHome + "/.config/rclone/rclone.conf": classSecret,
		baitHome + "/.claude/.credentials.json": classSecret,
		"ws/.git/HEAD":                          classProtected, "ws/.git/config": classProtected, "ws/.git/hooks": classProtected,
		"ws/.git/hooks/pre-commit": classProtected, "ws/.bashrc": classProtected,
		"ws/.vscode": classProtected, "ws/.vscode/settings.json": classProtected,
	}
	filepath.WalkDir(b.path(baitOutside), func(p string, _ fs.DirEntry, err error) error {
		if rel, rerr := filepath.Rel(b.root, p); err == nil && rerr == nil {
			w[rel] = classHostWrite
		}
		return nil
	})
	return w
}

func (b *bait) snapshot() (map[string]fileState, error) {
	s := map[string]fileState{}
	for rel := range b.watchedPaths() {
		st, err := stateOf(b.path(rel))
		if err != nil {
			return nil, err
		}
		s[rel] = st
	}
	return s, nil
}

func stateOf(p string) (fileState, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); errors.Is(err, unix.ENOENT) {
		return fileState{}, nil
	} else if err != nil {
		return fileState{}, err
	}
	s := fileState{exists: true, mode: fs.FileMode(st.Mode), uid: st.Uid, gid: st.Gid, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	// What cannot be read (a mode the probe changed) differs from what
	// could be read before.
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		c, err := os.ReadFile(p)
		s.content = string(c)
		if err != nil {
			s.content = "unreadable: " + err.Error()
		}
	case unix.S_IFDIR:
		es, err := os.ReadDir(p)
		for _, e := range es {
			s.entries += e.Name() + ","
		}
		if err != nil {
			s.entries = "unreadable: " + err.Error()
		}
	case unix.S_IFLNK:
		s.link, _ = os.Readlink(p)
	}
	buf := make([]byte, 4096)
	if n, err := unix.Llistxattr(p, buf); err == nil {
		s.xattrs = string(buf[:n])
	}
	return s, nil
}

// changes describes how a path changed, and whether only its metadata did.
func changes(before, after fileState) (what string, metadataOnly bool) {
	switch {
	case before == after:
		return "", false
	case !after.exists:
		return "removed", false
	case !before.exists:
		return "created", false
	case before.mode != after.mode: // first: a mode can make the content unreadable
		return fmt.Sprintf("mode changed (%v -> %v)", before.mode, after.mode), true
	case before.content != after.content || before.size != after.size:
		return "content changed", false
	case before.entries != after.entries:
		return fmt.Sprintf("entries changed (%s -> %s)", strings.TrimSuffix(before.entries, ","), strings.TrimSuffix(after.entries, ",")), false
	case before.link != after.link:
		return "symlink replaced", false
	case before.xattrs != after.xattrs:
		return "extended attributes changed", true
	case before.uid != after.uid || before.gid != after.gid:
		return "owner changed", true
	case before.mtime != after.mtime:
		return "modification time changed", true
	}
	return "status changed (ctime)", true
}

// baitPlanted are the paths the probe plants that must be gone (moved
// aside) after the run: a protected name made at the root and below, and
// the hook and fsmonitor config of a repository put together where a
// nested one was.
var baitPlanted = []string{"ws/.envrc", "ws/lib/inner/.git/hooks/pre-commit", "ws/lib/inner/.git/config",
	"ws/lib-moved/sub/.envrc", "ws/lib-moved/.vscode/tasks.json"}

// check looks at the host after the main run: the bait files, the
// sockets' backlogs, the protected name the probe created, what the run
// moved aside, and whether the secret got out by any way at all.
func (b *bait) check(res *sandbox.Result) findings {
	f := findings{changed: map[string][]string{}, notes: map[string][]string{}, unclear: map[string][]string{}}
	for _, c := range []sandbox.Captured{res.Stdout, res.Stderr} {
		if bytes.Contains(slices.Concat(c.Head, c.Tail), []byte(b.token)) {
			f.changed[classSecret] = append(f.changed[classSecret], "the secret is in the probe's output")
		}
	}
	for rel, class := range b.watchedPaths() {
		after, err := stateOf(b.path(rel))
		if err != nil {
			f.unclear[class] = append(f.unclear[class], rel+": unreadable: "+err.Error())
			continue
		}
		what, meta := changes(b.before[rel], after)
		if what == "" {
			continue
		}
		if class == classHostWrite && meta {
			class = classHostChmod
		}
		f.changed[class] = append(f.changed[class], rel+": "+what)
	}
	for _, rel := range baitPlanted {
		if st, _ := stateOf(b.path(rel)); st.exists && strings.Contains(st.content, "pwned") {
			f.changed[classProtected] = append(f.changed[classProtected], rel+": what the probe planted is still there")
		}
	}
	for _, q := range res.Quarantined {
		rel, err := filepath.Rel(b.root, q.Path)
		switch {
		case err != nil || !pathtree.Within(q.Path, b.root):
		case q.Key != "":
			f.notes[classProtected] = append(f.notes[classProtected], "host: "+q.Key+", set by the probe in "+rel+", was not carried over")
		default:
			f.notes[classProtected] = append(f.notes[classProtected], "host: "+rel+" created by the probe was moved aside after the run")
		}
	}
	for class, l := range b.listeners {
		switch n, err := pending(l); {
		case err != nil:
			f.unclear[class] = append(f.unclear[class], fmt.Sprintf("cannot tell whether a connection arrived: %v", err))
		case n > 0:
			f.changed[class] = append(f.changed[class], fmt.Sprintf("the listener on %s accepted %d connection(s)", l.Addr(), n))
		default:
			f.notes[class] = append(f.notes[class], "host: no connection arrived")
		}
	}
	b.setidHostCheck(f)
	for _, class := range []string{classSecret, classHostWrite, classHostChmod, classProtected} {
		if len(f.changed[class]) == 0 {
			f.notes[class] = append(f.notes[class], "host: bait unchanged")
		}
	}
	for _, m := range []map[string][]string{f.changed, f.notes, f.unclear} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	return f
}

// remove takes the bait away: sockets, host process, files. What the
// probe may have done to the files (a directory made unwritable) does not
// stop it.
func (b *bait) remove() error {
	for _, l := range b.listeners {
		l.Close()
	}
	if b.host != nil {
		b.hostIn.Close()
		b.host.Process.Kill()
		select {
		case <-b.hostDone:
		case <-time.After(5 * time.Second):
		}
	}
	if os.RemoveAll(b.root) == nil {
		return nil
	}
	filepath.WalkDir(b.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(b.root); err != nil {
		return fmt.Errorf("remove the bait %s: %w", b.root, err)
	}
	return nil
}
