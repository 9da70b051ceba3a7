package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forgebox/forgebox/cgroup"
	"github.com/forgebox/forgebox/landlock"
	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/seccomp"
	"github.com/forgebox/forgebox/undo"
	"golang.org/x/sys/unix"
)

// prepared is one run, decided and ready to launch.
type prepared struct {
	argv      []string
	workspace string
	child     childSpec
	enforced  Enforced
	warnings  []string
	withheld  []string
	guard     *guard
	limits    limitPlan
	// The Landlock facts unisolated needs to redo the child's rules and,
	// for NetNone, the ruleset.
	landlockPrivate []string
	landlockFS      landlock.Rights
	landlockPolicy  landlock.Policy
	// proxy is the allowlist proxy of a NetAllow run.
	proxy *runProxy
	// filter answers the notifications of the command's filter, when the
	// child has its notifying twin (Spec.SeccompNotify).
	filter *seccomp.Program
	// caches are the run's private caches; nil without.
	caches *runCaches
	// undo is the run's undo record while it goes on; nil without.
	undo      *undo.Pending
	undoStore undo.Store
}

// release undoes what planning did on the host: the placeholders.
func (p *prepared) release() {
	if p.guard != nil {
		p.guard.release()
	}
	if p.child.Landlock != nil {
		p.child.Landlock.Close()
	}
	if p.proxy != nil {
		p.proxy.close()
	}
	p.caches.release()
	p.limits.close()
	if p.undo != nil {
		// Never committed (the run did not start): nothing to carry.
		p.undo.Discard()
	}
}

// newRun makes the decisions that need no filesystem: the command, its
// environment and the namespaces to enter. They are enough to start the
// child, which enters its namespaces while planView does the rest.
func newRun(s Spec, pty bool, rows, cols uint16) (*prepared, error) {
	argv, alt, err := commandArgv(s)
	if err != nil {
		return nil, err
	}
	env, withheld, err := commandEnv(s)
	if err != nil {
		return nil, err
	}
	if _, err := ParseProfile(string(s.profile())); err != nil {
		return nil, err
	}
	if _, err := ParseNetwork(string(s.network())); err != nil {
		return nil, err
	}
	if s.Timeout < 0 || s.Grace < 0 {
		return nil, invalidf("timeouts must not be negative")
	}
	if err := s.Limits.check(); err != nil {
		return nil, err
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	p := &prepared{argv: argv, withheld: withheld}
	p.child = childSpec{
		Flags:  flagIsolate,
		UIDOut: uid, GIDOut: gid, UIDIn: uid, GIDIn: gid,
		Argv: argv, Env: env, AltArg0: alt, Path: lookupEnv(env, "PATH"),
		Rows: rows, Cols: cols,
	}
	p.enforced = newEnforced(s.profile(), s.network(), pty)
	p.enforced.Namespaces = append(p.enforced.Namespaces, "user", "pid", "mount", "ipc", "uts")
	p.enforced.NoNewPrivs, p.enforced.Capabilities = true, "none"
	if s.network() != NetHost {
		p.child.Flags |= flagNewNet
		p.enforced.Namespaces = append(p.enforced.Namespaces, "net")
	}
	if s.network() == NetAllow {
		p.child.ProxyPort = ProxyPort
		p.proxy = newRunProxy(s.Allowlist)
		p.enforced.Proxy = ProxyAddr
	}
	if pty {
		p.child.RunFlags |= runFlagPTY
	}
	return p, nil
}

func (s Spec) profile() Profile {
	if s.Profile == "" {
		return ProfileWorkspace
	}
	return s.Profile
}

// network is the run's network mode; NetLoopback, NetNone's older name,
// is NetNone here, so that Enforced reports what the run got.
func (s Spec) network() Network {
	if s.Network == "" || s.Network == NetLoopback {
		return NetNone
	}
	return s.Network
}

// planView checks the paths of the spec against the host and computes the
// filesystem view. On the host it changes only what the guard needs: the
// Git placeholders, released with the run.
func (p *prepared) planView(s Spec, tl *timeline) error {
	dir, l, grants, homes, bases, err := checkedLayout(s)
	if err != nil {
		return err
	}
	tl.mark("paths checked")
	if err := p.planUndo(s, &l, grants); err != nil {
		return err
	}
	tl.mark("undo record")
	cachePlans := p.planCaches(s, l, homes)
	tl.mark("caches planned")
	facts, err := p.gatherFacts(l, bases, s.treeStore(), s.StateDir)
	if err != nil {
		return err
	}
	facts.Grants, facts.Caches = grants, cachePlans
	var secretPaths []string
	for _, h := range facts.Secrets {
		secretPaths = append(secretPaths, h.Path)
	}
	if err := checkWritableRoots(l, homes, secretPaths); err != nil {
		return err
	}
	// Only now, with the roots accepted: it may make forgebox's own
	// directories in them.
	own, err := ownProtected(l.Writable, s.Own)
	if err != nil {
		return err
	}
	facts.Protected = append(facts.Protected, own...)
	tl.mark("protected paths")

	items, enf, err := buildView(l, facts, p.enforced)
	if err != nil {
		return err
	}
	mounts, slots, err := planMounts(items)
	if err != nil {
		return err
	}
	if p.guard != nil {
		for _, w := range p.guard.watched {
			enf.Watched = append(enf.Watched, w.path)
		}
	}
	p.enforced = enf
	p.child.Cwd, p.child.Mounts, p.child.Slots = startDir(dir, l.Workspace), mounts, slots
	p.workspace = l.Workspace
	tl.mark("view planned")
	if err := p.planLandlock(s, l, items); err != nil {
		return err
	}
	tl.mark("landlock ruleset")
	return nil
}

// checkedLayout resolves the directories and grants of a run and refuses a
// bad workspace or --rw path before anything touches them (the guard makes
// placeholders in their repositories). Secret locations reached through
// symlinks are only known once the host's secrets are read: the caller
// checks again with those (CheckRoots, planView).
func checkedLayout(s Spec) (dir string, l layout, grants map[string]bool, homes []string, bases secretBases, err error) {
	dir, ws, err := runDirs(s)
	if err != nil {
		return "", l, nil, nil, bases, err
	}
	l, grants, err = runLayout(s, ws)
	if err != nil {
		return "", l, nil, nil, bases, err
	}
	homes = homeDirs(s)
	bases = basesFor(s, homes)
	if err := checkWritableRoots(l, homes, secretCandidates(bases)); err != nil {
		return "", l, nil, nil, bases, err
	}
	if err := checkOwn(append([]string{l.Workspace}, l.Writable...), s.Own); err != nil {
		return "", l, nil, nil, bases, err
	}
	return dir, l, grants, homes, bases, nil
}

// CheckRoots refuses the workspace and --rw paths of s exactly as Run
// would, without running anything: forgebox serve calls it before it
// starts, so that its file tools never act on a workspace run refuses.
func CheckRoots(s Spec) error {
	_, l, _, homes, bases, err := checkedLayout(s)
	if err != nil {
		return err
	}
	var secrets []string
	for _, h := range existingSecrets(bases) {
		secrets = append(secrets, h.Path)
	}
	return checkWritableRoots(l, homes, secrets)
}

// runDirs resolves the directory the run was asked from and the workspace,
// which must be an existing, readable directory.
func runDirs(s Spec) (dir, ws string, err error) {
	dir = s.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return "", "", invalidf("cannot tell the current directory: %v", err)
		}
	}
	if dir, err = existingPath(dir, "current directory"); err != nil {
		return "", "", err
	}
	ws = s.Workspace
	if ws == "" {
		ws = dir
	} else if !filepath.IsAbs(ws) {
		ws = filepath.Join(dir, ws)
	}
	if ws, err = existingPath(ws, "workspace"); err != nil {
		return "", "", err
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return "", "", invalidf("workspace %s is not a directory", ws)
	}
	if err := unix.Access(ws, unix.R_OK|unix.X_OK); err != nil {
		return "", "", invalidf("workspace %s is not readable: %v", ws, err)
	}
	return dir, ws, nil
}

// runLayout resolves the --rw, --ro and --hide paths into the layout, and
// returns the granted paths (true for directories).
func runLayout(s Spec, ws string) (layout, map[string]bool, error) {
	l := layout{Profile: s.profile(), Network: s.network(), Workspace: ws}
	grants := map[string]bool{}
	if l.Profile != ProfileReadOnly {
		l.Writable = append(l.Writable, ws)
	}
	for _, list := range []struct {
		flag  string
		paths []string
		dst   *[]string
	}{{"--rw", s.ReadWrite, &l.Writable}, {"--ro", s.ReadOnly, &l.ReadOnly}} {
		for _, path := range list.paths {
			if !filepath.IsAbs(path) {
				return l, nil, invalidf("%s %s: the path must be absolute", list.flag, path)
			}
			h, err := realPath(path)
			if err != nil {
				return l, nil, invalidf("%s %s: %v", list.flag, path, err)
			}
			if h.Path == "/" {
				return l, nil, invalidf("cannot grant /: grant the directories the command needs")
			}
			if !slices.Contains(*list.dst, h.Path) {
				*list.dst = append(*list.dst, h.Path)
			}
			grants[h.Path] = h.Dir
		}
	}
	grants[ws] = true
	for _, path := range s.Hide {
		if !filepath.IsAbs(path) {
			return l, nil, invalidf("--hide %s: the path must be absolute", path)
		}
		if h, ok := resolveExisting(path); ok {
			l.Hide = append(l.Hide, h)
		}
	}
	return l, grants, nil
}

// checkWritableRoots refuses a workspace or --rw path that is a system
// directory, contains a home or lies inside a secret location.
func checkWritableRoots(l layout, homes, secrets []string) error {
	if err := checkWorkspace(l.Workspace, homes, secrets); err != nil {
		return err
	}
	for _, w := range l.Writable {
		if w != l.Workspace {
			if err := checkWritable(w, homes, secrets); err != nil {
				return err
			}
		}
	}
	return nil
}

// gatherFacts reads what the view depends on from the host: secrets,
// sockets, protected paths (the guard) and a few directories. The facts are
// independent of each other, so they are gathered at once.
func (p *prepared) gatherFacts(l layout, bases secretBases, trees treeStore, stateDir string) (hostFacts, error) {
	var facts hostFacts
	var wg sync.WaitGroup
	var guardErr error
	var socketWarnings []string
	wg.Go(func() { facts.Secrets = existingSecrets(bases) })
	wg.Go(func() { facts.Sockets, socketWarnings = readHostSockets() })
	var mounts []mountEntry
	wg.Go(func() { mounts = readMountinfo() })
	if len(l.Writable) > 0 {
		var skip map[string]uint64
		if p.caches != nil {
			skip = p.caches.skip
		}
		var pending string
		if p.undo != nil {
			pending = p.undo.Dir()
		}
		wg.Go(func() {
			if p.guard, guardErr = protectRun(l.Workspace, l.Writable, trees, time.Now(), skip, pending); guardErr == nil {
				p.guard.copyConfig(stateDir)
			}
		})
	}
	facts.Dirs = map[string]bool{}
	for _, d := range []string{"/var/tmp", "/run", "/var/run"} {
		var st unix.Stat_t
		facts.Dirs[d] = unix.Lstat(d, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	if l.Profile == ProfileStrict {
		facts.Root = rootEntries()
	}
	if l.Network == NetHost {
		if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && (pathtree.Beneath(r, "/run") || pathtree.Beneath(r, "/var/run")) {
			facts.ResolvConf = r
		}
	}
	wg.Wait()
	if guardErr != nil {
		return facts, guardErr
	}
	facts.Secrets, facts.Sockets = otherNames(facts.Secrets, l.Hide, facts.Sockets, mounts)
	p.warnings = append(p.warnings, socketWarnings...)
	if p.guard != nil {
		facts.Protected, facts.Copies = p.guard.paths, p.guard.copyFacts()
		p.warnings = append(p.warnings, p.guard.warnings...)
	}
	return facts, nil
}

// unisolated turns a prepared run into one without namespaces, for
// --best-effort on a host that refuses them. Only the process-tree
// handling, the environment, the terminal and the privilege drop remain.
func (p *prepared) unisolated(why string) {
	p.child.Flags &^= flagIsolate | flagNewNet
	p.child.Mounts, p.child.Slots = nil, 0
	if p.caches != nil {
		// No mount namespace, no caches: the tools find the home's,
		// which Landlock keeps read-only.
		p.child.Env = p.caches.envBefore
	}
	if p.undo != nil {
		// No mount namespace, no overlay: the command writes the
		// workspace itself.
		p.undo.Discard()
		p.undo = nil
		p.warnings = append(p.warnings, "this run has no undo: it runs without namespaces, so the command writes the workspace directly")
	}
	old := p.enforced
	old.Undo = false
	// What the run still has is what it had, less what needs the
	// namespaces: the kernel layers (Landlock, seccomp and what it
	// refuses, no_new_privs, capabilities, limits), the profile Landlock
	// enforces, the watched names.
	p.enforced = old.withoutSandbox("namespaces ("+why+")", "read-only host filesystem", "hidden secrets and sockets",
		"protected paths", "private /tmp and /dev", "network isolation")
	if old.Network == NetNone && old.LandlockABI >= 4 {
		p.denyHostTCP(old.LandlockABI)
	}
	if old.LandlockABI > 0 {
		// The host's own /dev, /proc and temporary directories stand
		// where the sandbox's would have been: HostRules keeps them
		// read-only but for the temporary directories, which are
		// writable and said so.
		p.child.Rules = landlock.HostRules(p.landlockPrivate, p.landlockFS)
		p.enforced.Writable = append(slices.Clone(old.Writable), landlock.HostWritable(p.landlockPrivate)...)
	}
	// RLIMIT_NPROC outside a user namespace of the run's own counts every
	// process of the caller's user: no stand-in for a task limit.
	if d := old.Limits; d != nil && len(d.Rlimits) > 0 {
		c := *d
		c.Rlimits = nil
		c.Pids.Mechanism = cgroup.MechanismNone
		c.Pids.Reason = "without a user namespace of its own, RLIMIT_NPROC would count all of the caller's processes"
		p.enforced.Limits = &c
		p.child.Rlimits = nil
		p.enforced.Missing = append(p.enforced.Missing, "the task limit ("+c.Pids.Reason+")")
	}
}

// denyHostTCP rebuilds the Landlock ruleset of a NetNone run that lost its
// network namespace with TCP bind and connect denied: the loopback it
// would use now is the host's, with the host's services on it (as on
// macOS). If the rebuild fails, the run keeps the ruleset it had and says
// TCP is not denied.
func (p *prepared) denyHostTCP(abi int) {
	pol := p.landlockPolicy
	pol.DenyTCP, pol.ConnectPorts = true, nil
	rs, _, err := landlock.Build(pol, abi)
	if err != nil {
		p.warnings = append(p.warnings, "the host's loopback stays reachable: "+err.Error())
		return
	}
	if p.child.Landlock != nil {
		p.child.Landlock.Close()
	}
	p.child.Landlock = rs
	p.enforced.LandlockTCP, p.enforced.LandlockConnectPorts = true, nil
}

// existingPath returns the absolute path with every symlink resolved.
func existingPath(p, what string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", invalidf("%s %s: %v", what, p, err)
	}
	h, err := realPath(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", invalidf("%s %s does not exist", what, p)
		}
		return "", invalidf("%s %s: %v", what, p, err)
	}
	return h.Path, nil
}

// resolveExisting resolves p if it exists, symlinks included.
func resolveExisting(p string) (hostPath, bool) {
	h, err := realPath(p)
	return h, err == nil
}

// realPath resolves every symlink in p in three system calls, where
// filepath.EvalSymlinks makes one per component: the kernel names the file
// an O_PATH descriptor refers to.
func realPath(p string) (hostPath, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return hostPath{}, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return hostPath{}, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	if err != nil || n == 0 || buf[0] != '/' || n == len(buf) {
		// No /proc, or a path the kernel cannot name: do it the slow way.
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return hostPath{}, err
		}
		return hostPath{Path: real, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
	}
	return hostPath{Path: string(buf[:n]), Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}

// existingSecrets finds the secret locations that exist. Most do not: a
// listing of each directory on the way rules them out without a system
// call per candidate, and only symlinks need resolving. System files the
// caller cannot read need no cover.
func existingSecrets(bases secretBases) []hostPath {
	var out []hostPath
	add := func(h hostPath) {
		if !slices.ContainsFunc(out, func(o hostPath) bool { return o.Path == h.Path }) {
			out = append(out, h)
		}
	}
	lists := map[string]map[string]fs.FileMode{}
	list := func(dir string) map[string]fs.FileMode {
		if m, ok := lists[dir]; ok {
			return m
		}
		m := listDir(dir)
		lists[dir] = m
		return m
	}
	var system []string
	for _, s := range secretTable {
		if !s.homeSecret() {
			system = append(system, s.Path)
			continue
		}
		bases.each(s.Path, func(base, rel string) {
			if h, ok := findUnder(base, rel, list); ok {
				add(h)
			}
		})
	}
	if keys, err := filepath.Glob(sshHostKeyPattern); err == nil {
		system = append(system, keys...)
	}
	real := map[string]bool{} // directories known to be no symlinks
	for _, c := range system {
		if unix.Access(c, unix.R_OK) != nil {
			continue
		}
		if h, ok := realPathLstat(c, real); ok {
			add(h)
		} else if h, ok := resolveExisting(c); ok {
			add(h)
		}
	}
	return out
}

// realPathLstat returns p when neither it nor a parent is a symlink, by
// lstat alone (parents cached in real); ok is false when a symlink is on
// the way and the kernel must resolve it.
func realPathLstat(p string, real map[string]bool) (hostPath, bool) {
	for dir := filepath.Dir(p); dir != "/" && !real[dir]; dir = filepath.Dir(dir) {
		var st unix.Stat_t
		if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return hostPath{}, false
		}
		real[dir] = true
	}
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return hostPath{}, false
	}
	return hostPath{Path: p, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, true
}

// findUnder looks for dir/rel, a real directory, one component at a time
// through cached listings; a symlink on the way is resolved by the kernel.
func findUnder(dir, rel string, list func(string) map[string]fs.FileMode) (hostPath, bool) {
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		mode, ok := list(dir)[part]
		switch {
		case !ok:
			return hostPath{}, false
		case mode&fs.ModeSymlink != 0:
			return resolveExisting(filepath.Join(dir, filepath.Join(parts[i:]...)))
		case i == len(parts)-1:
			return hostPath{Path: filepath.Join(dir, part), Dir: mode.IsDir()}, true
		case !mode.IsDir():
			return hostPath{}, false
		}
		dir = filepath.Join(dir, part)
	}
	return hostPath{}, false
}

// otherNames adds to the secrets and sockets the other paths that reach
// them through the mount table (sameFileElsewhere): a bind mount of the
// home, of /home or of a directory holding a socket shows the same files
// at a second path, which must be covered too. The other names of --hide
// paths join the secrets.
func otherNames(secrets, hide []hostPath, sockets []string, mounts []mountEntry) ([]hostPath, []string) {
	if len(mounts) < 2 {
		return secrets, sockets
	}
	secrets = append(secrets, sameFileElsewhere(slices.Concat(secrets, hide), mounts)...)
	socks := make([]hostPath, len(sockets))
	for i, s := range sockets {
		socks[i] = hostPath{Path: s}
	}
	for _, a := range sameFileElsewhere(socks, mounts) {
		sockets = append(sockets, a.Path)
	}
	return secrets, sockets
}

func rootEntries() []hostPath {
	entries, err := os.ReadDir("/")
	if err != nil {
		return nil
	}
	var out []hostPath
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		out = append(out, hostPath{Path: "/" + e.Name(), Dir: e.IsDir()})
	}
	return out
}
