package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
	"golang.org/x/sys/unix"
)

// The caller's own configuration and state (Spec.Own: forgebox's config
// directory, its state directory with the approvals and the history) may
// lie in a writable root: XDG_CONFIG_HOME inside the project, a --rw that
// holds ~/.local/state. A command that wrote there would steer every later
// run, in every workspace (an allow rule for "git push *" in config.json).
// They are kept read-only like the protected names, by host path: each is
// a read-only bind mount, and every directory between its writable root
// and it is pinned (bound onto itself), so that no rename of a parent can
// carry the mount away and put a planted directory at its name.

// ownPlace is one of Spec.Own as the host has it.
type ownPlace struct {
	given  string // as given, cleaned
	real   string // its existing part with the links resolved, the rest appended
	exists bool
	dir    bool  // given with a trailing slash: a directory, made when missing
	err    error // it could not be inspected (real is then given)
}

func ownPlaces(own []string) ([]ownPlace, error) {
	var out []ownPlace
	for _, o := range own {
		if !filepath.IsAbs(o) {
			return nil, invalidf("forgebox's own location %s is not an absolute path", o)
		}
		p := ownPlace{given: filepath.Clean(o), dir: strings.HasSuffix(o, "/")}
		// Resolve the longest existing prefix: the rest does not exist,
		// so it holds no links.
		rest := ""
		for at := p.given; ; at = filepath.Dir(at) {
			h, err := realPath(at)
			if err == nil {
				p.real, p.exists = filepath.Join(h.Path, rest), rest == ""
				break
			}
			if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) || at == "/" {
				// Out of the caller's reach (a directory it may not
				// search), so out of the command's too, unless it lies
				// in a writable root: checkOwn refuses that.
				p.real, p.err = p.given, err
				break
			}
			rest = filepath.Join(filepath.Base(at), rest)
		}
		out = append(out, p)
	}
	return out, nil
}

// checkOwn refuses writable roots that forgebox's own configuration or
// state would be exposed by: a root inside one of them, or one of them
// reached through a symbolic link inside a root (the command could replace
// the link, and the next forgebox would read what it points to then).
func checkOwn(roots, own []string) error {
	places, err := ownPlaces(own)
	if err != nil {
		return err
	}
	for _, p := range places {
		for _, r := range roots {
			if p.err != nil && pathtree.Within(p.given, r) {
				return fmt.Errorf("inspect forgebox's own configuration or state %s, inside the writable root %s: %w", p.given, r, p.err)
			}
			if pathtree.Within(r, p.real) || pathtree.Within(r, p.given) {
				return invalidf("refusing writable root %s: it is inside forgebox's own configuration or state %s; "+
					"choose a project directory with --workspace, and grant with --rw only what the command must write", r, p.given)
			}
			if pathtree.Within(p.given, r) && p.real != p.given {
				return invalidf("forgebox's own configuration or state %s is reached through a symbolic link inside the writable root %s, "+
					"which the command could replace; point XDG_CONFIG_HOME, XDG_STATE_HOME or the path given at the real directory %s", p.given, r, p.real)
			}
		}
	}
	return nil
}

// ownProtected returns the read-only mounts and pins that hold forgebox's
// own places lying in the writable roots, making a missing directory
// (0700, as forgebox makes its own) so that it can be held. A missing
// file (a history's -wal before the database is first written) is not
// held: see docs/security-model.md. checkOwn has passed.
func ownProtected(roots, own []string) ([]protectedPath, error) {
	places, err := ownPlaces(own)
	if err != nil {
		return nil, err
	}
	var out []protectedPath
	add := func(p protectedPath) {
		if i := slices.IndexFunc(out, func(o protectedPath) bool { return o.Path == p.Path }); i >= 0 {
			// A read-only mount holds its place as a pin does.
			out[i].Pin = out[i].Pin && p.Pin
			return
		}
		out = append(out, p)
	}
	for _, p := range places {
		root := ""
		for _, r := range roots {
			if pathtree.Beneath(p.real, r) && len(r) > len(root) {
				root = r
			}
		}
		if root == "" || p.err != nil {
			continue // the host is read-only there anyway
		}
		if !p.exists {
			if !p.dir {
				continue
			}
			if err := os.MkdirAll(p.real, 0o700); err != nil {
				return nil, fmt.Errorf("make forgebox's own directory %s, to hold it read-only: %w", p.real, err)
			}
		}
		var st unix.Stat_t
		if err := unix.Lstat(p.real, &st); err != nil {
			return nil, fmt.Errorf("inspect %s: %w", p.real, err)
		}
		var pins []protectedPath
		for d := filepath.Dir(p.real); pathtree.Beneath(d, root); d = filepath.Dir(d) {
			var dst unix.Stat_t
			if err := unix.Lstat(d, &dst); err != nil || dst.Mode&unix.S_IFMT != unix.S_IFDIR {
				return nil, fmt.Errorf("pin %s, which holds forgebox's own %s: it is no longer a directory", d, p.real)
			}
			pins = append(pins, protectedPath{Path: d, Dir: true, Pin: true, Dev: uint64(dst.Dev), Ino: dst.Ino})
		}
		slices.Reverse(pins)
		for _, pin := range pins {
			add(pin)
		}
		add(protectedPath{Path: p.real, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, Dev: uint64(st.Dev), Ino: st.Ino})
	}
	return out, nil
}
