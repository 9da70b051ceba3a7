package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/forgebox/forgebox/landlock"
)

// The parent and the child (init_linux.c) talk over one inherited stream
// socket in frames: a little-endian u32 length of what follows, a type byte,
// and the payload. Every constant here has a twin in init_linux.c; the test
// TestWireConstantsMatchC keeps them equal.

const (
	initVerb = ChildVerb
	syncFD   = 3 // the child's end of the socket

	maxFrame = 16 << 20
)

// Frame types.
const (
	msgSpec  = 1 // parent -> child: what stage 0 needs to enter the namespaces
	msgReady = 2 // child -> parent: the command was executed; fds attached
	msgError = 3 // child -> parent: a setup step failed
	msgExit  = 4 // child -> parent: the command ended
	msgView  = 5 // parent -> child: the command and its filesystem view
)

// Spec fields: u16 tag, u32 length, value. Strings carry a trailing NUL.
const (
	tagFlags    = 1  // u32, flag* bits
	tagUIDOut   = 2  // u32 caller's uid on the host
	tagGIDOut   = 3  // u32
	tagUIDIn    = 4  // u32 uid the command sees
	tagGIDIn    = 5  // u32
	tagArg      = 6  // string, repeated: argv
	tagEnv      = 7  // string, repeated: envp
	tagCwd      = 8  // string
	tagPath     = 9  // string: PATH for the program lookup
	tagMount    = 11 // mount op record, repeated, in order
	tagWinsize  = 12 // u16 rows, u16 cols
	tagAltArg0  = 13 // string: program to try when argv[0] is not found
	tagSlots    = 14 // u32: clone slots the plan uses
	tagRunFlags = 15 // u32, runFlag* bits
	tagFDs      = 16 // u32, fd* bits and the join count: the descriptors after stdio, in order
	tagRule     = 17 // u64 Landlock access, string path: a rule for the child's own mounts
	tagSeccomp  = 18 // the seccomp filter: struct sock_filter[], native endian
	tagRlimit   = 19 // u32 resource, u32 0, u64 soft, u64 hard
	tagProxy    = 20 // u32 port: listen on 127.0.0.1:port inside for the network proxy
	// tagSeccompNotify is the filter's notifying twin (seccomp.Program.Notify),
	// loaded instead of tagSeccomp where the kernel makes a listener; never
	// sent without tagSeccomp.
	tagSeccompNotify = 21
)

// Steps the child names in its error frame that the parent branches on.
// Every step name is stable (agents get it as the JSON "step" field);
// TestWireNamesMatchC checks these and the full list against the C side.
const (
	stepExec       = "exec"       // the command itself could not be executed
	stepNamespaces = "namespaces" // the kernel refused the namespaces
	stepMounts     = "mounts"     // building the filesystem view
)

// Flags of the first frame: how stage 0 starts. A preforked child assumes
// flagIsolate|flagNewNet. Without flagIsolate there is no PID namespace,
// and PID 1 is always a child subreaper: it kills the orphans it adopts.
const (
	flagNewNet  = 1 << 0 // create a network namespace (loopback only)
	flagIsolate = 1 << 2 // create namespaces and build the view
)

// Flags of the view frame: how the command runs.
const runFlagPTY = 1 << 0 // allocate a pseudo-terminal inside

// Descriptors that may follow the three standard streams with the view, in
// this order.
const (
	fdLandlock = 1 << 0 // a Landlock ruleset to complete and enforce
	fdCgroup   = 1 << 1 // a cgroup v2 directory to clone the command into
	// The number of join files the command writes before exec (tasks on
	// v1, one per hierarchy; cgroup.procs on v2) is in the bits from
	// fdJoinShift up, at most maxJoin.
	fdJoinShift = 8
	maxJoin     = 8
)

// What the ready message carries, in this order.
const (
	readyPidfd  = 1 << 0 // a pidfd of PID 1
	readyMaster = 1 << 1 // the terminal's master side
	readyProxy  = 1 << 2 // the proxy's listening socket, in the sandbox's network namespace
	readyNotify = 1 << 3 // the seccomp notification listener of the command's filter
)

// Mount operations, executed in order by the child on top of its base view
// (the host tree read-only, fresh /proc, minimal /dev, private /tmp,
// /var/tmp and /run: build_base_view in view_linux.c).
const (
	opClone   = 1  // clone the host tree at A into Slot (flagRecursive)
	opAttach  = 2  // set attributes on Slot's tree and move it onto A
	opSetattr = 3  // set attributes on the mount at A (flagRecursive)
	opTmpfs   = 4  // new tmpfs on A with Mode and attributes
	opMkdir   = 7  // mkdir A with Mode (inside a tmpfs of ours)
	opMkfile  = 8  // create empty file A with Mode (inside a tmpfs of ours)
	opSymlink = 9  // symlink A -> B
	opHide    = 10 // cover A with a read-only empty dir (flagDir) or file
	// opOverlay mounts an overlay on A: the lower layer is what A shows
	// when the op runs (the host's cache directory), the upper and work
	// directories are upper/ and B (one component; "work" when empty) of
	// Slot's tree (a private cache entry, cloned from the host), made
	// writable. Mount attributes Set.
	// If the kernel refuses the overlay, upper/ alone is bound on A and
	// the op is reported in the ready message (cache fallbacks).
	opOverlay = 11
)

// Mount op flags.
const (
	opFlagRecursive = 1 << 0
	opFlagDir       = 1 << 1
	opFlagLink      = 1 << 2 // clone: a symlink at A is cloned itself; attach: if the link cannot be mounted, bind A read-only
	opFlagKeep      = 1 << 3 // overlay: if the kernel refuses it, leave A as it is (the workspace's undo overlay)
	opFlagRequired  = 1 << 4 // overlay: if the kernel refuses it, the run fails (the verdict counted on undo)
)

// Mount attributes, as MOUNT_ATTR_* in <linux/mount.h>.
const (
	attrRdonly = 0x00000001
	attrNosuid = 0x00000002
	attrNodev  = 0x00000004
	attrNoexec = 0x00000008
)

// mountOp is one step of the filesystem view.
type mountOp struct {
	Op       uint8
	Flags    uint32
	Mode     uint32
	Slot     uint32
	Set, Clr uint64
	Dev, Ino uint64 // when non-zero, the source (clone) or target (attach) must be this inode
	A, B     string
}

func (o mountOp) String() string {
	name := map[uint8]string{opClone: "clone", opAttach: "attach", opSetattr: "setattr", opTmpfs: "tmpfs",
		opMkdir: "mkdir", opMkfile: "mkfile", opSymlink: "symlink", opHide: "hide", opOverlay: "overlay"}[o.Op]
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %s", name, o.A)
	if o.B != "" {
		fmt.Fprintf(&b, " -> %s", o.B)
	}
	switch o.Op {
	case opClone, opAttach, opOverlay:
		fmt.Fprintf(&b, " slot=%d", o.Slot)
	case opTmpfs, opMkdir, opMkfile:
		fmt.Fprintf(&b, " mode=%04o", o.Mode)
	}
	if o.Flags&opFlagRecursive != 0 {
		b.WriteString(" recursive")
	}
	if o.Flags&opFlagLink != 0 {
		b.WriteString(" link")
	}
	if o.Op == opHide {
		if o.Flags&opFlagDir != 0 {
			b.WriteString(" dir")
		} else {
			b.WriteString(" file")
		}
	}
	if o.Set != 0 {
		b.WriteString(" +" + attrString(o.Set))
	}
	if o.Clr != 0 {
		b.WriteString(" -" + attrString(o.Clr))
	}
	if o.Dev != 0 || o.Ino != 0 {
		b.WriteString(" pinned")
	}
	return b.String()
}

func attrString(a uint64) string {
	var s []string
	for _, f := range []struct {
		bit  uint64
		name string
	}{{attrRdonly, "ro"}, {attrNosuid, "nosuid"}, {attrNodev, "nodev"}, {attrNoexec, "noexec"}} {
		if a&f.bit != 0 {
			s = append(s, f.name)
		}
	}
	return strings.Join(s, ",")
}

// childSpec is everything the child needs, already decided by the parent.
type childSpec struct {
	Flags          uint32
	UIDOut, GIDOut uint32
	UIDIn, GIDIn   uint32
	RunFlags       uint32
	Slots          uint32
	Argv, Env      []string
	AltArg0        string
	Cwd, Path      string
	Mounts         []mountOp
	Rows, Cols     uint16
	// Landlock is the ruleset to enforce, completed with Rules for the
	// child's own mounts; nil runs without Landlock.
	Landlock *os.File
	Rules    []landlock.ChildRule
	// Seccomp is the filter loaded last before exec; empty loads none.
	// SeccompNotify is its notifying twin, loaded instead where the kernel
	// makes a listener; the listener comes back with the ready message.
	Seccomp, SeccompNotify []byte
	// CgroupDir is a cgroup v2 directory the command is cloned into;
	// CgroupJoin are the files it joins through otherwise (v1, or a kernel
	// without CLONE_INTO_CGROUP): Group.JoinFiles, opened by the parent.
	CgroupDir  *os.File
	CgroupJoin []*os.File
	Rlimits    []rlimit
	// ProxyPort, when not 0, has the child listen on 127.0.0.1:ProxyPort
	// in its network namespace and hand the socket over with the ready
	// message.
	ProxyPort uint16
}

// rlimit is a resource limit the command starts with.
type rlimit struct {
	Resource   uint32
	Soft, Hard uint64
}

// extraFDs lists the descriptors that follow stdio, and their fd* bits.
func (s *childSpec) extraFDs() (bits uint32, fds []*os.File) {
	if s.Landlock != nil {
		bits |= fdLandlock
		fds = append(fds, s.Landlock)
	}
	if s.CgroupDir != nil {
		bits |= fdCgroup
		fds = append(fds, s.CgroupDir)
	}
	bits |= uint32(len(s.CgroupJoin)) << fdJoinShift
	return bits, append(fds, s.CgroupJoin...)
}

type encoder struct{ b []byte }

func (e *encoder) field(tag uint16, v []byte) {
	e.b = binary.LittleEndian.AppendUint16(e.b, tag)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(v)))
	e.b = append(e.b, v...)
}

func (e *encoder) u32(tag uint16, v uint32) { e.field(tag, binary.LittleEndian.AppendUint32(nil, v)) }

func (e *encoder) str(tag uint16, s string) { e.field(tag, append([]byte(s), 0)) }

// encode renders the spec as two frames. The first lets stage 0 enter its
// namespaces; the parent sends it at once and computes the filesystem view
// meanwhile. The second carries the command and the view. Strings must not
// contain NUL bytes; validation rejects those long before this point.
func (s *childSpec) encodeNamespaces() []byte {
	e := newEncoder()
	e.u32(tagFlags, s.Flags)
	e.u32(tagUIDOut, s.UIDOut)
	e.u32(tagGIDOut, s.GIDOut)
	e.u32(tagUIDIn, s.UIDIn)
	e.u32(tagGIDIn, s.GIDIn)
	b, _ := e.frame(msgSpec)
	return b
}

func (s *childSpec) encodeView() ([]byte, error) {
	e := newEncoder()
	e.u32(tagRunFlags, s.RunFlags)
	e.u32(tagSlots, s.Slots)
	for _, a := range s.Argv {
		e.str(tagArg, a)
	}
	for _, kv := range s.Env {
		e.str(tagEnv, kv)
	}
	if s.AltArg0 != "" {
		e.str(tagAltArg0, s.AltArg0)
	}
	e.str(tagCwd, s.Cwd)
	e.str(tagPath, s.Path)
	if s.Rows != 0 || s.Cols != 0 {
		v := binary.LittleEndian.AppendUint16(nil, s.Rows)
		e.field(tagWinsize, binary.LittleEndian.AppendUint16(v, s.Cols))
	}
	for _, m := range s.Mounts {
		var v []byte
		v = append(v, m.Op, 0, 0, 0)
		v = binary.LittleEndian.AppendUint32(v, m.Flags)
		v = binary.LittleEndian.AppendUint32(v, m.Mode)
		v = binary.LittleEndian.AppendUint32(v, m.Slot)
		v = binary.LittleEndian.AppendUint64(v, m.Set)
		v = binary.LittleEndian.AppendUint64(v, m.Clr)
		v = binary.LittleEndian.AppendUint64(v, m.Dev)
		v = binary.LittleEndian.AppendUint64(v, m.Ino)
		for _, p := range []string{m.A, m.B} {
			if len(p)+1 > 0xFFFF {
				return nil, invalidf("path too long: %.60q...", p)
			}
			v = binary.LittleEndian.AppendUint16(v, uint16(len(p)+1))
			v = append(append(v, p...), 0)
		}
		e.field(tagMount, v)
	}
	if len(s.CgroupJoin) > maxJoin {
		return nil, fmt.Errorf("%d cgroup hierarchies to join, over the limit of %d", len(s.CgroupJoin), maxJoin)
	}
	if bits, _ := s.extraFDs(); bits != 0 {
		e.u32(tagFDs, bits)
	}
	for _, r := range s.Rules {
		e.field(tagRule, append(binary.LittleEndian.AppendUint64(nil, uint64(r.Access)), append([]byte(r.Path), 0)...))
	}
	if len(s.Seccomp) > 0 {
		e.field(tagSeccomp, s.Seccomp)
		if len(s.SeccompNotify) > 0 {
			e.field(tagSeccompNotify, s.SeccompNotify)
		}
	}
	for _, r := range s.Rlimits {
		v := binary.LittleEndian.AppendUint32(nil, r.Resource)
		v = binary.LittleEndian.AppendUint32(v, 0)
		v = binary.LittleEndian.AppendUint64(v, r.Soft)
		e.field(tagRlimit, binary.LittleEndian.AppendUint64(v, r.Hard))
	}
	if s.ProxyPort != 0 {
		e.u32(tagProxy, uint32(s.ProxyPort))
	}
	return e.frame(msgView)
}

func newEncoder() *encoder { return &encoder{b: make([]byte, 5, 4096)} }

// frame fills in the header.
func (e *encoder) frame(typ byte) ([]byte, error) {
	if len(e.b)-4 > maxFrame {
		return nil, invalidf("run spec is %d bytes, over the %d byte limit", len(e.b), maxFrame)
	}
	binary.LittleEndian.PutUint32(e.b, uint32(len(e.b)-4))
	e.b[4] = typ
	return e.b, nil
}

// ChildVerb is argv[1] of the re-executed child. The C constructor takes
// the process over when it sees it; a Go main that sees it anyway is running
// in a binary built without the child and must refuse.
const ChildVerb = "__forgebox-init"
