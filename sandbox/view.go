package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
)

// layout is the run's filesystem intent, with canonical absolute paths.
type layout struct {
	Profile   Profile
	Network   Network
	Workspace string
	Writable  []string   // writable roots: the workspace (unless read-only) and --rw paths
	ReadOnly  []string   // --ro paths
	Hide      []hostPath // --hide paths that exist
	// Undo is the run's undo record (Dir/upper, Dir/work): the workspace
	// is an overlay on the host's. UndoRw are the --rw paths kept in the
	// record too, each with its part (upper/, work/ as in Undo).
	Undo   string
	UndoRw map[string]string
	// State is forgebox's state directory, hidden from every run
	// (stateHidden), with undo or not.
	State string
	// UndoRequired: a kernel that refuses the overlay fails the run
	// (Spec.RequireUndo).
	UndoRequired bool
}

// underUndo reports whether p lies in a root written through undo's
// overlay: the workspace, or a --rw path kept by undo.
func (l layout) underUndo(p string) bool {
	if l.Undo != "" && pathtree.Within(p, l.Workspace) {
		return true
	}
	for root := range l.UndoRw {
		if pathtree.Within(p, root) {
			return true
		}
	}
	return false
}

// hostFacts is what the parent learned about the host for one run.
type hostFacts struct {
	Dirs      map[string]bool // system paths that exist as real directories
	Root      []hostPath      // entries of / (for the strict profile)
	Grants    map[string]bool // grant path -> is a directory
	Secrets   []hostPath      // secret locations that exist
	Sockets   []string        // host Unix sockets bound at launch
	Protected []protectedPath
	// Copies are protected files the command gets a private copy of.
	Copies []privateCopy
	// ResolvConf is the file under /run that /etc/resolv.conf leads to.
	ResolvConf string
	// Caches are the run's private caches (planCaches).
	Caches []cachePlan
}

// cachePlan is one private cache, as planned before the view.
type cachePlan struct {
	Name string
	// Path is where the command finds it: the host's cache directory, or
	// where the host has none, a directory of the run that Env names.
	Path string
	// Entry is the private cache on the host: Entry/upper and Entry/work.
	Entry string
	// Overlay: the host has a directory at Path that can be the lower
	// layer; Work is the overlay's work directory in Entry.
	Overlay bool
	Work    string
	// Env is the NAME=VALUE that points the tool at Path.
	Env string
}

type hostPath struct {
	Path string
	Dir  bool
}

// protectedPath is a path inside a writable root that stays read-only (or,
// for a pin, stays where it is).
type protectedPath struct {
	Path     string
	Dir      bool
	Pin      bool // bind a .git directory onto itself so it cannot be renamed away
	Dev, Ino uint64
}

// privateCopy is a protected file the command sees as a private copy of
// its own: a symlink of the run's, bound over the file, leads into a
// directory of the run's outside the writable roots, writable. The copy is
// vetted and carried back after the run (gitconfig_copy_linux.go). A
// symlink and not the copy itself, because Git replaces a config by
// renaming a lock file over it, which a file mounted there refuses (EBUSY);
// Git follows the link and renames next to the copy.
type privateCopy struct {
	Path             string // the protected file
	Dev, Ino         uint64 // its inode at launch
	Link             string // the symlink to bind over it
	LinkDev, LinkIno uint64
	Dir              string // the directory Link leads into
}

// strictVisible are the top-level directories the strict profile keeps.
var strictVisible = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/gnu"}

// managed are top-level paths the view always replaces.
var managed = []string{"/proc", "/dev", "/tmp", "/run"}

// buildView lists what the command's filesystem view places where, and
// adds what it enforces to base (newEnforced). The
// order does not matter: planMounts sorts parents before children. The order
// of the steps does: a later step replaces an earlier one's item at the
// same path only where it says so.
func buildView(l layout, f hostFacts, base Enforced) ([]viewItem, Enforced, error) {
	v := viewBuilder{items: map[string]viewItem{}, facts: f, enf: base}
	v.base()
	if l.Profile == ProfileStrict {
		v.strict()
	}
	v.secrets() // before the grants, which replace them
	if err := v.grants(l); err != nil {
		return nil, v.enf, err
	}
	if err := v.hides(l.Hide); err != nil {
		return nil, v.enf, err
	}
	v.sockets()
	v.copies()
	v.protected(l)
	v.caches()
	return v.finish(l)
}

// viewBuilder collects the view's items, one per path, and what they
// enforce.
type viewBuilder struct {
	items map[string]viewItem
	facts hostFacts
	enf   Enforced
}

func (v *viewBuilder) put(it viewItem) { v.items[it.Path] = it }

func (v *viewBuilder) has(path string) bool {
	_, ok := v.items[path]
	return ok
}

// base is what the child's base view places (build_base_view in
// view_linux.c).
func (v *viewBuilder) base() {
	for _, d := range []string{"/proc", "/dev", "/dev/pts", "/dev/shm", "/tmp"} {
		v.put(viewItem{Kind: kindBase, Path: d, Dir: true})
	}
	v.enf.PrivateDirs = append(v.enf.PrivateDirs, "/tmp", "/dev/shm")
	for _, d := range []string{"/var/tmp", "/run", "/var/run"} {
		if v.facts.Dirs[d] {
			v.put(viewItem{Kind: kindBase, Path: d, Dir: true})
			v.enf.PrivateDirs = append(v.enf.PrivateDirs, d)
		}
	}
}

// strict covers every top-level entry but the system directories.
func (v *viewBuilder) strict() {
	for _, e := range v.facts.Root {
		if slices.Contains(strictVisible, e.Path) || slices.Contains(managed, e.Path) || v.has(e.Path) {
			continue
		}
		v.put(viewItem{Kind: kindCover, Path: e.Path, Dir: e.Dir})
	}
}

func (v *viewBuilder) secrets() {
	for _, s := range v.facts.Secrets {
		v.put(viewItem{Kind: kindCover, Path: s.Path, Dir: s.Dir})
		v.enf.Hidden = append(v.enf.Hidden, s.Path)
	}
}

// grants makes the writable roots writable and the read-only grants
// visible, and under --net host the host's resolver configuration.
func (v *viewBuilder) grants(l layout) error {
	for _, p := range l.Writable {
		if err := v.grant(p, attrNosuid|attrNodev, attrRdonly); err != nil {
			return err
		}
	}
	v.enf.Writable = append(v.enf.Writable, l.Writable...)
	for _, p := range l.Writable {
		if dir := l.UndoRw[p]; dir != "" && p != l.Workspace {
			it := v.items[p]
			it.Undo = dir
			v.put(it)
			v.enf.UndoRw = append(v.enf.UndoRw, p)
		}
	}
	if l.Undo != "" {
		it := v.items[l.Workspace]
		it.Undo, it.UndoRequired = l.Undo, l.UndoRequired
		v.put(it)
		v.enf.Undo = true
	}
	// forgebox's state is hidden whether this run has undo or not
	// (stateHidden).
	if l.State != "" && !v.has(l.State) {
		v.put(viewItem{Kind: kindCover, Path: l.State, Dir: true})
		v.enf.Hidden = append(v.enf.Hidden, l.State)
	}
	for _, p := range l.ReadOnly {
		if slices.Contains(l.Writable, p) {
			return invalidf("%s is granted both read-only and read-write", p)
		}
		if err := v.grant(p, attrRdonly|attrNosuid|attrNodev, 0); err != nil {
			return err
		}
	}
	if l.Profile == ProfileStrict && !slices.Contains(l.Writable, l.Workspace) && !slices.Contains(l.ReadOnly, l.Workspace) {
		if err := v.grant(l.Workspace, attrRdonly|attrNosuid|attrNodev, 0); err != nil {
			return err
		}
	}
	if l.Network == NetHost && v.facts.ResolvConf != "" && !v.has(v.facts.ResolvConf) {
		v.put(viewItem{Kind: kindGrant, Path: v.facts.ResolvConf, Set: attrRdonly | attrNosuid | attrNodev})
	}
	return nil
}

func (v *viewBuilder) grant(p string, set, clr uint64) error {
	if slices.Contains([]string{"/proc", "/dev", "/sys"}, p) || pathtree.Within(p, "/proc") || pathtree.Within(p, "/dev") || pathtree.Within(p, "/sys") {
		return invalidf("cannot grant %s: /proc, /dev and /sys are managed by the sandbox", p)
	}
	dir, ok := v.facts.Grants[p]
	if !ok {
		return fmt.Errorf("plan: no facts for grant %s", p)
	}
	v.put(viewItem{Kind: kindGrant, Path: p, Dir: dir, Set: set, Clr: clr})
	return nil
}

func (v *viewBuilder) hides(hide []hostPath) error {
	for _, h := range hide {
		if it, ok := v.items[h.Path]; ok && it.Kind == kindGrant {
			return invalidf("%s is both granted and hidden", h.Path)
		}
		v.put(viewItem{Kind: kindCover, Path: h.Path, Dir: h.Dir})
		v.enf.Hidden = append(v.enf.Hidden, h.Path)
	}
	return nil
}

func (v *viewBuilder) sockets() {
	for _, s := range v.facts.Sockets {
		if !v.has(s) {
			v.put(viewItem{Kind: kindCover, Path: s})
			v.enf.Sockets = append(v.enf.Sockets, s)
		}
	}
}

// copies binds each private copy's link over its file and makes the
// copy's directory writable; the file is then left out of protected.
func (v *viewBuilder) copies() {
	for _, c := range v.facts.Copies {
		v.put(viewItem{Kind: kindRedirect, Path: c.Path, Set: attrRdonly | attrNosuid | attrNodev, Dev: c.Dev, Ino: c.Ino,
			From: c.Link, FromDev: c.LinkDev, FromIno: c.LinkIno})
		v.put(viewItem{Kind: kindGrant, Path: c.Dir, Dir: true, Set: attrNosuid | attrNodev | attrNoexec, Clr: attrRdonly})
		v.enf.PrivateCopies = append(v.enf.PrivateCopies, c.Path)
	}
}

// protected makes the guard's paths read-only, and pins the ones that must
// stay in place but writable (.git itself).
func (v *viewBuilder) protected(l layout) {
	for _, p := range v.facts.Protected {
		if v.has(p.Path) {
			continue
		}
		// In the workspace's overlay a directory of the host cannot be
		// renamed (EXDEV: overlay without redirect_dir), and a pin would
		// bind the host's .git writable over the overlay, past undo.
		if p.Pin && l.underUndo(p.Path) {
			continue
		}
		kind, set, clr := kindProtect, uint64(attrRdonly|attrNosuid|attrNodev), uint64(0)
		if p.Pin {
			kind, set, clr = kindPin, attrNosuid|attrNodev, attrRdonly
		} else {
			v.enf.Protected = append(v.enf.Protected, p.Path)
		}
		v.put(viewItem{Kind: kind, Path: p.Path, Dir: p.Dir, Set: set, Clr: clr, Dev: p.Dev, Ino: p.Ino})
	}
}

// caches places the private caches last: an explicit grant, hide or
// protection at the same path wins. Where the host's directory is not
// visible in the view (the strict profile covers the home) there is no
// lower layer to show: the private cache alone is bound there.
func (v *viewBuilder) caches() {
	for _, c := range v.facts.Caches {
		if v.has(c.Path) {
			continue
		}
		it := viewItem{Kind: kindCacheBind, Path: c.Path, Dir: true, Source: c.Entry + "/upper", Set: attrNosuid | attrNodev}
		if p, ok := v.enclosingItem(c.Path); c.Overlay && (!ok || hostContent(p.Kind)) {
			it.Kind, it.Source, it.Target = kindCache, c.Entry, c.Work
		}
		v.put(it)
		mode := CachePrivate
		if it.Kind == kindCache {
			mode = CacheOverlay
		}
		name, _, _ := strings.Cut(c.Env, "=")
		v.enf.Caches = append(v.enf.Caches, CacheMount{Name: c.Name, Path: c.Path, Mode: mode, Env: name})
	}
}

// enclosingItem is the deepest item strictly above path.
func (v *viewBuilder) enclosingItem(path string) (viewItem, bool) {
	var best viewItem
	found := false
	for _, it := range v.items {
		if pathtree.Beneath(path, it.Path) && (!found || depth(it.Path) > depth(best.Path)) {
			best, found = it, true
		}
	}
	return best, found
}

// finish returns the items parents first, and the enforcement report with
// sorted lists.
func (v *viewBuilder) finish(l layout) ([]viewItem, Enforced, error) {
	out := make([]viewItem, 0, len(v.items))
	for _, it := range v.items {
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b viewItem) int {
		if d := depth(a.Path) - depth(b.Path); d != 0 {
			return d
		}
		return strings.Compare(a.Path, b.Path)
	})
	enf := v.enf
	slices.SortFunc(enf.Caches, func(a, b CacheMount) int { return strings.Compare(a.Path, b.Path) })
	for _, s := range []*[]string{&enf.Hidden, &enf.Sockets, &enf.Protected, &enf.PrivateDirs, &enf.PrivateCopies} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	enf.ReadOnlyRoot = true
	return out, enf, nil
}
