package sandbox

import (
	"fmt"
	"slices"

	"github.com/forgebox/forgebox/landlock"
	"github.com/forgebox/forgebox/seccomp"
	"golang.org/x/sys/unix"
)

// landlockPolicy is the file policy of the view, for Landlock: the host
// tree readable, the writable roots writable, and no rule at all for what
// the view hides or replaces with its own mounts. Read-only grants are
// read roots of their own, since they may lie beneath a covered path.
//
// Two kinds of hidden path are not carved out of the read rules, since
// carving costs a rule per sibling: sockets (Landlock before ABI 9 does not
// govern connecting to them; the mount view does) and paths the caller
// could not read anyway (file permissions already refuse them, as the
// command runs with the caller's ids and no capabilities).
//
// dirCover and fileCover are covers the child grants reading, so hidden
// paths show up empty: one of each is enough, since every cover is a clone
// of the same two stand-ins.
func landlockPolicy(l layout, items []viewItem, sockets []string) (p landlock.Policy, private []string, dirCover, fileCover string) {
	// With NetNone TCP stays allowed: the namespace's loopback is the
	// only interface, so a bind or connect reaches no one outside. With
	// NetAllow the proxy owns a port on that loopback, and TCP elsewhere
	// would sidestep it.
	p = landlock.Policy{ReadRoots: []string{"/"}, DenyTCP: l.Network == NetAllow}
	if l.Network == NetAllow {
		p.ConnectPorts = []uint16{ProxyPort}
	}
	for _, it := range items {
		switch {
		case it.Kind == kindCover:
			if slices.Contains(sockets, it.Path) {
				continue
			}
			if it.Dir && dirCover == "" {
				dirCover = it.Path
			} else if !it.Dir && fileCover == "" {
				fileCover = it.Path
			}
			if reachable(it.Path, it.Dir) {
				p.Exclude = append(p.Exclude, it.Path)
			}
		case it.Kind == kindBase:
			p.Exclude = append(p.Exclude, it.Path)
			if it.Path != "/proc" && it.Path != "/dev" && it.Path != "/dev/pts" {
				private = append(private, it.Path)
			}
		case it.Kind == kindGrant && it.Set&attrRdonly == 0:
			p.WriteRoots = append(p.WriteRoots, it.Path)
		case it.Kind == kindGrant:
			p.ReadRoots = append(p.ReadRoots, it.Path)
		}
	}
	slices.Sort(private)
	return p, private, dirCover, fileCover
}

// reachable reports whether the caller's ids let it read the path, or for
// a directory read or search it.
func reachable(path string, dir bool) bool {
	if unix.Faccessat(unix.AT_FDCWD, path, unix.R_OK, unix.AT_EACCESS) == nil {
		return true
	}
	return dir && unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS) == nil
}

// landlockNeeds are the Landlock features a run needs, with the ABI that
// brought each.
func landlockNeeds(net Network) []landlockFeature {
	f := []landlockFeature{{"landlock filesystem rules", 1}}
	if net == NetAllow {
		f = append(f, landlockFeature{"landlock TCP bind denial and connect to the proxy's port only", 4})
	}
	return append(f, landlockFeature{"landlock scoping of abstract Unix sockets and signals", 6})
}

type landlockFeature struct {
	name string
	abi  int
}

// planLandlock builds the run's Landlock ruleset. A feature the kernel
// lacks refuses the run, or with --best-effort is reported missing.
func (p *prepared) planLandlock(s Spec, l layout, items []viewItem) error {
	abi, why := landlock.ABI()
	for _, f := range landlockNeeds(l.Network) {
		if abi >= f.abi {
			continue
		}
		reason := fmt.Sprintf("the kernel offers Landlock ABI %d, %s needs ABI %d", abi, f.name, f.abi)
		if why != nil {
			reason = why.Error()
		}
		if !s.BestEffort {
			return &UnavailableError{Layer: f.name, Reason: reason, Err: why}
		}
		p.enforced.Missing = append(p.enforced.Missing, f.name+" ("+reason+")")
	}
	if abi < 1 {
		return nil
	}
	pol, private, dirCover, fileCover := landlockPolicy(l, items, p.enforced.Sockets)
	rs, n, err := landlock.Build(pol, abi)
	if err != nil {
		return &UnavailableError{Layer: "landlock", Reason: err.Error(), Err: err}
	}
	h := landlock.HandledAt(abi, pol.DenyTCP)
	p.child.Landlock = rs
	p.child.Rules = landlock.ChildRules(private, dirCover, fileCover, h.FS)
	// The private caches are mounts of the child's: their inodes are not
	// the host's, which the ruleset's rules are bound to.
	for _, c := range p.enforced.Caches {
		p.child.Rules = append(p.child.Rules, landlock.ChildRule{Path: c.Path, Access: h.FS})
	}
	// So are undo's overlays: the workspace's and the --rw paths'.
	if p.enforced.Undo {
		p.child.Rules = append(p.child.Rules, landlock.ChildRule{Path: l.Workspace, Access: h.FS})
	}
	for _, root := range p.enforced.UndoRw {
		p.child.Rules = append(p.child.Rules, landlock.ChildRule{Path: root, Access: h.FS})
	}
	p.landlockPrivate, p.landlockFS, p.landlockPolicy = private, h.FS, pol
	p.enforced.LandlockABI = abi
	p.enforced.LandlockRules = n + len(p.child.Rules)
	p.enforced.LandlockTCP = h.Net != 0
	if h.Net != 0 {
		p.enforced.LandlockConnectPorts = pol.ConnectPorts
	}
	p.enforced.LandlockScoped = h.Scoped != 0
	return nil
}

// compiled is a seccomp filter compiled for the run, or why not.
type compiled struct {
	prog *seccomp.Program
	err  error
}

// compileSeccomp compiles the run's filter while the rest is planned: it
// depends only on the network mode and on whether Unix sockets are allowed.
//
// It asks for the notifying twin too (attribution: seccomp/doc.go), with
// connections watched unless the run has the host's network, which reaches
// everything. Attribution is a report, not a protection: if the twin
// cannot be built, the run goes on with the plain filter alone.
func compileSeccomp(s Spec) <-chan compiled {
	attribute := attributionKernel()
	o := seccomp.Options{RestrictNetwork: s.network() != NetHost, AllowUnixSockets: s.AllowUnixSockets,
		Attribute: attribute, ObserveNetwork: attribute && s.network() != NetHost}
	ch := make(chan compiled, 1)
	go func() {
		prog, err := seccomp.Compile(o)
		if err != nil {
			o.Attribute, o.ObserveNetwork = false, false
			prog, err = seccomp.Compile(o)
		}
		ch <- compiled{prog, err}
	}()
	return ch
}

// attributionKernel reports whether the kernel lets a listener answer
// CONTINUE (SECCOMP_USER_NOTIF_FLAG_CONTINUE, Linux 5.5). Between 5.0 and
// 5.4 a listener can be made but a watched call could only be refused, so
// the run goes unobserved there.
func attributionKernel() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 5 || (major == 5 && minor >= 5)
}

// useSeccomp hands the filter to the child, which loads it last before
// exec. Without one the run is refused, or with --best-effort reported.
func (p *prepared) useSeccomp(s Spec, c compiled) error {
	if c.err != nil {
		if !s.BestEffort {
			return &UnavailableError{Layer: "seccomp", Reason: c.err.Error(), Err: c.err}
		}
		p.enforced.Missing = append(p.enforced.Missing, "seccomp filter ("+c.err.Error()+")")
		p.enforced.UnixSockets = UnixSocketsAllowed
		return nil
	}
	p.child.Seccomp = c.prog.BPF
	if c.prog.Notify != nil {
		p.child.SeccompNotify = c.prog.Notify
		p.filter = c.prog
	}
	p.enforced.Seccomp = true
	p.enforced.SeccompDenied = c.prog.Denied
	p.enforced.UnixSockets = UnixSocketsRefused
	if s.AllowUnixSockets {
		p.enforced.UnixSockets = UnixSocketsAllowed
	}
	return nil
}
