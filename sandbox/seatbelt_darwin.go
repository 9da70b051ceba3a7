package sandbox

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// darwinRun is one macOS run, decided: what sandbox-exec gets and what the
// result reports. Deciding writes nothing; the private temporary directory
// is made by Run.
type darwinRun struct {
	argv, env       []string
	alt             string // the program to try when argv[0] is not found (sh for bash)
	withheld        []string
	cwd, workspace  string
	plan            seatbeltPlan
	enforced        Enforced
	warnings        []string
	explicitTempDir bool // --env TMPDIR=... was given
}

// prepareDarwin makes every decision of a run that needs no temporary
// directory and no terminal: the command, its environment, the limits, the
// network, and the profile's paths.
func prepareDarwin(s Spec) (*darwinRun, error) {
	argv, alt, err := commandArgv(s)
	if err != nil {
		return nil, err
	}
	env, withheld, err := commandEnv(s)
	if err != nil {
		return nil, err
	}
	prof, err := ParseProfile(string(cmp.Or(s.Profile, ProfileWorkspace)))
	if err != nil {
		return nil, err
	}
	network, err := ParseNetwork(string(cmp.Or(s.Network, NetNone)))
	if err != nil {
		return nil, err
	}
	if s.Timeout < 0 || s.Grace < 0 || s.IdleTimeout < 0 {
		return nil, invalidf("timeouts must not be negative")
	}
	ram, _ := unix.SysctlUint64("hw.memsize")
	limits, missing, err := seatbeltLimits(s.Limits, int64(ram), runtime.NumCPU(), s.BestEffort)
	if err != nil {
		return nil, err
	}
	netMissing, err := seatbeltNetwork(network, s.BestEffort)
	if err != nil {
		return nil, err
	}
	r := &darwinRun{argv: argv, alt: alt, env: env, withheld: withheld}
	r.explicitTempDir = slices.ContainsFunc(s.SetEnv, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	if err := r.paths(s, prof, network); err != nil {
		return nil, err
	}
	r.enforced.Limits = &limits
	r.enforced.Missing = append(missing, netMissing...)
	if network == NetLoopback {
		r.warnings = append(r.warnings, "--net loopback on macOS is the host's loopback: the command can reach the services listening on it")
	}
	return r, nil
}

// paths resolves the workspace, the grants and the hidden paths, refuses
// what forgebox refuses, and fills the plan and Enforced.
func (r *darwinRun) paths(s Spec, prof Profile, network Network) error {
	dir := s.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return invalidf("cannot tell the current directory: %v", err)
		}
		dir = wd
	}
	dir, err := canonical(dir, "current directory")
	if err != nil {
		return err
	}
	ws := s.Workspace
	if ws == "" {
		ws = dir
	} else if !filepath.IsAbs(ws) {
		ws = filepath.Join(dir, ws)
	}
	if ws, err = canonical(ws, "workspace"); err != nil {
		return err
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return invalidf("workspace %s is not a directory", ws)
	}
	if err := unix.Access(ws, unix.R_OK|unix.X_OK); err != nil {
		return invalidf("workspace %s is not readable: %v", ws, err)
	}
	var writable, readOnly []string
	if prof != ProfileReadOnly {
		writable = append(writable, ws)
	}
	for _, g := range []struct {
		flag  string
		paths []string
		dst   *[]string
	}{{"--rw", s.ReadWrite, &writable}, {"--ro", s.ReadOnly, &readOnly}} {
		for _, p := range g.paths {
			if !filepath.IsAbs(p) {
				return invalidf("%s %s: the path must be absolute", g.flag, p)
			}
			c, err := canonical(p, g.flag)
			if err != nil {
				return err
			}
			if c == "/" {
				return invalidf("cannot grant /: grant the directories the command needs")
			}
			if !slices.Contains(*g.dst, c) {
				*g.dst = append(*g.dst, c)
			}
		}
	}
	var hide []sbplPath
	var hidden []string
	for _, p := range s.Hide {
		if !filepath.IsAbs(p) {
			return invalidf("--hide %s: the path must be absolute", p)
		}
		// The path as given and what it leads to: a rule holds for a
		// path that does not exist yet, and Seatbelt sees the target.
		hide = append(hide, sbplPath{filepath.Clean(p), sbplTree})
		if real, err := filepath.EvalSymlinks(p); err == nil {
			hide = append(hide, sbplPath{real, sbplTree})
			hidden = append(hidden, real)
		}
	}
	homes := homeDirs(s)
	secrets, existing := hostSecrets(homes)
	var secretPaths, hidePaths []string
	for _, x := range secrets {
		secretPaths = append(secretPaths, x.Path)
	}
	for _, x := range hide {
		hidePaths = append(hidePaths, x.Path)
	}
	if err := checkSeatbeltRoots(ws, writable, readOnly, hidePaths, homes, secretPaths); err != nil {
		return err
	}
	var protected []sbplPath
	if len(writable) > 0 {
		protected, r.warnings = seatbeltProtected(writable)
	}
	r.cwd, r.workspace = startDir(dir, ws), ws
	r.plan = seatbeltPlan{Profile: prof, Network: network, Writable: writable, ReadOnly: readOnly,
		Secrets: secrets, Hide: hide, Protected: protected}
	if dev := developerDir(); dev != "" {
		r.plan.SystemReadable = append(r.plan.SystemReadable, dev)
	}
	var prot []string
	for _, p := range protected {
		if p.Kind != sbplGitNested {
			prot = append(prot, p.Path)
		}
	}
	e := newEnforced(prof, network, false)
	e.ReadOnlyRoot = true
	e.Writable = append(e.Writable, sortedUnique(writable)...)
	e.Hidden = append(e.Hidden, sortedUnique(slices.Concat(existing, hidden))...)
	e.Protected = append(e.Protected, sortedUnique(prot)...)
	r.enforced = e
	return nil
}

// canonical is p made absolute with every symlink resolved; it must exist.
func canonical(p, what string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", invalidf("%s %s: %v", what, p, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", invalidf("%s %s does not exist", what, p)
	case err != nil:
		return "", invalidf("%s %s: %v", what, p, err)
	}
	return real, nil
}

// hostSecrets are the secret locations to deny (seatbeltSecrets, the host
// SSH keys, and where the existing ones that are symlinks lead), and the
// existing ones, for Enforced.Hidden.
func hostSecrets(homes []string) (deny []sbplPath, existing []string) {
	deny = seatbeltSecrets(homes)
	if keys, err := filepath.Glob("/private/etc/ssh/ssh_host_*_key"); err == nil {
		for _, k := range keys {
			deny = append(deny, sbplPath{k, sbplTree})
		}
	}
	for _, s := range slices.Clone(deny) {
		if _, err := os.Lstat(s.Path); err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(s.Path)
		if err != nil {
			continue
		}
		if real != s.Path {
			deny = append(deny, sbplPath{real, sbplTree})
		}
		// Reported like Linux: what the caller could read without us.
		if unix.Access(real, unix.R_OK) == nil {
			existing = append(existing, real)
		}
	}
	return sortedPaths(deny), existing
}

// developerDir is what the selected developer tools (xcode-select) need
// to be readable under --profile strict: the Xcode bundle, or the
// CommandLineTools directory; "" when none is selected.
func developerDir() string {
	dev, err := filepath.EvalSymlinks("/private/var/db/xcode_select_link")
	if err != nil || !filepath.IsAbs(dev) {
		return ""
	}
	if i := strings.Index(dev, ".app/"); i >= 0 {
		dev = dev[:i+len(".app")]
	}
	if depth(dev) < 2 {
		return ""
	}
	return dev
}

// CheckRoots refuses the workspace and --rw paths of s exactly as Run
// would, without running anything: forgebox serve calls it before it
// starts, so that its file tools never act on a workspace run refuses.
func CheckRoots(s Spec) error {
	prof, network := s.Profile, s.Network
	if prof == "" {
		prof = ProfileWorkspace
	}
	if network == "" {
		network = NetNone
	}
	return (&darwinRun{}).paths(s, prof, network)
}
