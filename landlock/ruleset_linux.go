package landlock

import (
	"errors"
	"fmt"
	"os"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABI returns the Landlock ABI the kernel offers, capped at KnownABI, or 0
// with the reason when Landlock is unavailable.
func ABI() (int, error) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS):
		return 0, errors.New("this kernel has no Landlock (CONFIG_SECURITY_LANDLOCK)")
	case errors.Is(err, unix.EOPNOTSUPP):
		return 0, errors.New("Landlock is built in but not enabled at boot (lsm=)")
	case err != nil:
		return 0, fmt.Errorf("query the Landlock ABI: %w", err)
	}
	return min(v, KnownABI), nil
}

// Build creates the ruleset of p at the given ABI, adds its path rules,
// and returns its descriptor and the number of rules. Nothing is enforced:
// the sandbox child adds its own mounts' rules and restricts itself.
func Build(p Policy, abi int) (*os.File, int, error) {
	h := HandledAt(abi, p.DenyTCP)
	if h.FS == 0 {
		return nil, 0, fmt.Errorf("landlock ABI %d handles nothing", abi)
	}
	rules, err := p.Rules(h.FS, listDir)
	if err != nil {
		return nil, 0, err
	}
	attr := ll.RulesetAttr{HandledAccessFS: uint64(h.FS), HandledAccessNet: h.Net, Scoped: h.Scoped}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("create landlock ruleset: %w", err)
	}
	rs := os.NewFile(uintptr(fd), "landlock-ruleset")
	n := 0
	for _, r := range rules {
		added, err := addRule(fd, r)
		if err != nil {
			rs.Close()
			return nil, 0, err
		}
		if added {
			n++
		}
	}
	if h.Net&ll.AccessNetConnectTCP != 0 {
		for _, port := range p.ConnectPorts {
			attr := ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(port)}
			if err := ll.LandlockAddNetPortRule(fd, &attr, 0); err != nil {
				rs.Close()
				return nil, 0, fmt.Errorf("landlock rule for TCP port %d: %w", port, err)
			}
			n++
		}
	}
	return rs, n, nil
}

// addRule adds one path rule. A read rule whose path vanished since it was
// listed is dropped: it would have granted something that is gone. The
// kernel refuses directory rights on a file (EINVAL); only then is the type
// looked up, which keeps the common case at three system calls.
func addRule(ruleset int, r Rule) (bool, error) {
	if r.Access == 0 {
		return false, nil
	}
	fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) && r.Access&^Read == 0 {
			return false, nil
		}
		return false, fmt.Errorf("open %s for a landlock rule: %w", r.Path, err)
	}
	defer unix.Close(fd)
	acc := r.Access
	if !r.Dir {
		acc &= fileRights
	}
	attr := ll.PathBeneathAttr{AllowedAccess: uint64(acc), ParentFd: fd}
	err = ll.LandlockAddPathBeneathRule(ruleset, &attr, 0)
	if errors.Is(err, unix.EINVAL) && acc&^fileRights != 0 {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return false, fmt.Errorf("stat %s: %w", r.Path, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
		case unix.S_IFLNK:
			return false, nil // replaced by a link since it was listed: no grant
		default:
			attr.AllowedAccess &= uint64(fileRights)
			err = ll.LandlockAddPathBeneathRule(ruleset, &attr, 0)
		}
	}
	if err != nil {
		return false, fmt.Errorf("landlock rule for %s: %w", r.Path, err)
	}
	return true, nil
}

func listDir(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(des))
	for _, d := range des {
		e := Entry{Name: d.Name()}
		switch t := d.Type(); {
		case t.IsDir():
			e.Type = TypeDir
		case t&os.ModeSymlink != 0:
			e.Type = TypeSymlink
		}
		out = append(out, e)
	}
	return out, nil
}
