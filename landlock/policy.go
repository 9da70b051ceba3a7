package landlock

import (
	"fmt"
	"path"
	"slices"

	"github.com/forgebox/forgebox/pathtree"
	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// KnownABI is the newest Landlock ABI go-landlock knows; newer kernels
// are used at this level.
const KnownABI = 11

// configs are go-landlock's descriptions of each ABI, oldest first.
var configs = [...]golandlock.Config{golandlock.V1, golandlock.V2, golandlock.V3, golandlock.V4,
	golandlock.V5, golandlock.V6, golandlock.V7, golandlock.V8, golandlock.V9, golandlock.V10, golandlock.V11}

// Rights are Landlock access rights, as the kernel numbers them.
type Rights uint64

// fileRights are the rights that apply to a file rather than a directory:
// a rule on a file may carry only these.
const fileRights Rights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSTruncate | ll.AccessFSIoctlDev

// Read is reading files and directories and executing programs.
const Read Rights = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir

// Handled is what a ruleset at one ABI restricts.
type Handled struct {
	FS     Rights
	Net    uint64
	Scoped uint64
}

// HandledAt returns everything an ABI can restrict, as go-landlock describes
// it, except the network: Net holds TCP bind and connect when denyTCP is set
// and the ABI has them (4+), else nothing. An abi below 1 handles nothing.
func HandledAt(abi int, denyTCP bool) Handled {
	if abi < 1 {
		return Handled{}
	}
	c := configs[min(abi, KnownABI)-1]
	h := Handled{FS: Rights(c.HandledAccessFS), Scoped: uint64(c.Scoped)}
	if denyTCP {
		h.Net = uint64(c.HandledAccessNet) & (ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	}
	return h
}

// Policy is the file and network policy of one run.
type Policy struct {
	// ReadRoots are readable (and executable) beneath, except for Exclude.
	ReadRoots []string
	// WriteRoots get every right beneath.
	WriteRoots []string
	// Exclude are paths beneath the read roots that get no rule at all:
	// hidden secrets and sockets, and what the sandbox replaces with its
	// own mounts (their rules are Extra).
	Exclude []string
	// DenyTCP refuses binding and connecting TCP sockets, except
	// connecting to ConnectPorts (on any address: Landlock rules name
	// ports only).
	DenyTCP      bool
	ConnectPorts []uint16
}

// Entry is one name in a directory listing.
type Entry struct {
	Name string
	Type EntryType
}

// EntryType tells what a directory entry is.
type EntryType int

const (
	TypeOther EntryType = iota
	TypeDir
	TypeSymlink
)

// Lister lists a directory; the Linux one reads the host.
type Lister func(dir string) ([]Entry, error)

// Rule grants Access beneath Path; Dir tells whether Path is a directory.
type Rule struct {
	Path   string
	Access Rights
	Dir    bool
}

// Rules lists the path rules of p for a ruleset that handles fs. A read
// root with an excluded path beneath it is replaced by rules for its other
// entries, recursively; symbolic links need no rule (Landlock checks the
// file they lead to). Paths must be absolute and clean.
func (p Policy) Rules(fs Rights, list Lister) ([]Rule, error) {
	var out []Rule
	read := Read & fs
	for _, root := range p.ReadRoots {
		if err := p.readRules(root, true, read, list, &out); err != nil {
			return nil, err
		}
	}
	for _, w := range p.WriteRoots {
		out = append(out, Rule{Path: w, Access: fs, Dir: true})
	}
	return out, nil
}

func (p Policy) readRules(dir string, isDir bool, read Rights, list Lister, out *[]Rule) error {
	if slices.Contains(p.Exclude, dir) {
		return nil
	}
	if !isDir || !slices.ContainsFunc(p.Exclude, func(x string) bool { return pathtree.Beneath(x, dir) }) {
		acc := read
		if !isDir {
			acc &= fileRights
		}
		*out = append(*out, Rule{Path: dir, Access: acc, Dir: isDir})
		return nil
	}
	entries, err := list(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Type == TypeSymlink {
			continue
		}
		if err := p.readRules(path.Join(dir, e.Name), e.Type == TypeDir, read, list, out); err != nil {
			return err
		}
	}
	return nil
}

// ChildRule is a rule for a mount the sandbox makes itself (a private
// /tmp, its /dev and /proc): the child adds it, since the parent cannot open
// what does not exist yet.
type ChildRule struct {
	Path   string
	Access Rights
}

// ChildRules are the rights on the sandbox's own mounts, masked to fs:
// its /dev and /proc, its private directories (all rights), and the empty
// stand-ins that cover hidden paths (read, so they show up empty rather than
// unreadable).
// An empty stand-in path is left out.
func ChildRules(private []string, dirStandIn, fileStandIn string, fs Rights) []ChildRule {
	dev := Read | ll.AccessFSWriteFile | ll.AccessFSIoctlDev
	out := []ChildRule{
		{"/dev", dev & fs},
		{"/proc", (Read | ll.AccessFSWriteFile) & fs},
	}
	for _, d := range private {
		out = append(out, ChildRule{d, fs})
	}
	if dirStandIn != "" {
		out = append(out, ChildRule{dirStandIn, Read & fs})
	}
	if fileStandIn != "" {
		out = append(out, ChildRule{fileStandIn, Read & fileRights & fs})
	}
	return out
}

// HostRules replace ChildRules when the child runs without a mount
// namespace (--best-effort on a host that refuses namespaces): the host's
// own /dev, /proc and temporary directories are where the sandbox's would
// be. /dev and /proc are only readable, writable are the harmless devices
// a program opens by name and the temporary directories among private but
// /run (host daemons' sockets and state); the covers get no rule, since
// their paths are the hidden files themselves there.
func HostRules(private []string, fs Rights) []ChildRule {
	dev := (Read | ll.AccessFSWriteFile | ll.AccessFSIoctlDev) & fileRights & fs
	out := []ChildRule{{"/dev", Read & fs}, {"/proc", Read & fs}}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"} {
		out = append(out, ChildRule{d, dev})
	}
	for _, d := range HostWritable(private) {
		out = append(out, ChildRule{d, fs})
	}
	return out
}

// HostWritable lists the directories HostRules makes writable.
func HostWritable(private []string) []string {
	var out []string
	for _, d := range private {
		if d != "/run" && d != "/var/run" {
			out = append(out, d)
		}
	}
	return out
}
