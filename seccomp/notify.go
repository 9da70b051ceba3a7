package seccomp

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// A Watch sends a syscall to the supervisor, which only looks: it lets the
// call continue, and the kernel decides as it would without the filter.
type Watch struct {
	Syscall string
	// Conds must all hold for the call to be sent; at most one per argument.
	Conds []Cond
	// Why is the rationale, one line.
	Why string
}

// Watches returns the calls Program.Notify sends to the supervisor to be
// observed, not refused.
func Watches(o Options) []Watch {
	if !o.Attribute || !o.ObserveNetwork {
		return nil
	}
	return []Watch{{
		Syscall: "connect",
		Why:     "names the destination of every connection, so that one the network mode cannot reach can be reported",
	}, {
		Syscall: "sendto",
		// dest_addr, the fifth argument, is not NULL. sendto on a
		// connected socket (NULL) went through connect already.
		Conds: []Cond{{Arg: 4, Op: GreaterEqual, Value: 1}},
		Why:   "a datagram sent to an address without connect (DNS resolvers do both)",
	}}
}

// A Verdict is the supervisor's answer to one notification of Notify.
type Verdict struct {
	// Syscall is the kernel's name of the call.
	Syscall string
	// Refused: the supervisor must fail the call with Errno, exactly what
	// Program.BPF answers. Otherwise the call was only watched and
	// continues.
	Refused bool
	Errno   Errno
	// Label is the refusing rule's, as in Program.Denied.
	Label string
}

// notified is what Decide knows of one notified syscall number.
type notified struct {
	name     string
	refusals []Rule
	watched  bool
}

// Decide answers a notification of Notify for syscall nr of architecture
// arch (AUDIT_ARCH_*) with these arguments. It fails closed: a call it
// cannot place (another architecture, an unknown number, a refused
// syscall that no rule matches) is refused with EPERM, never let through.
func (p *Program) Decide(arch, nr uint32, args [6]uint64) Verdict {
	c, ok := p.calls[nr]
	if arch != p.arch || !ok {
		return Verdict{Syscall: "syscall " + strconv.FormatUint(uint64(nr), 10), Refused: true, Errno: EPERM, Label: "unknown"}
	}
	for _, r := range c.refusals {
		if r.Matches(args) {
			return Verdict{Syscall: c.name, Refused: true, Errno: r.Errno, Label: r.Label}
		}
	}
	if c.watched {
		return Verdict{Syscall: c.name}
	}
	return Verdict{Syscall: c.name, Refused: true, Errno: EPERM, Label: c.name}
}

// Return values of seccomp filters (linux/seccomp.h). A program compiled
// for attribution marks refusals with retTrace|errno and watches with
// retLog; variants turns the marks into the two programs that are loaded.
// Neither mark survives into a loaded program.
const (
	retActionFull = 0xffff0000
	retData       = 0x0000ffff
	retAllow      = 0x7fff0000
	retErrno      = 0x00050000
	retTrace      = 0x7ff00000
	retLog        = 0x7ffc0000
	retUserNotif  = 0x7fc00000

	bpfRetK = 0x06 // BPF_RET | BPF_K
)

// variants rewrites the returns of a marked program: plain is the filter
// as it is without attribution (refusals return their errno, watches
// allow), notify sends both to the supervisor. Every other return (allow,
// the fallback errnos, kill on another ABI) is the same in both.
func variants(marked []byte) (plain, notify []byte, err error) {
	if len(marked)%8 != 0 {
		return nil, nil, fmt.Errorf("program of %d bytes is not whole instructions", len(marked))
	}
	plain, notify = make([]byte, len(marked)), make([]byte, len(marked))
	copy(plain, marked)
	copy(notify, marked)
	ne := binary.NativeEndian
	for i := 0; i < len(marked); i += 8 {
		if ne.Uint16(marked[i:]) != bpfRetK {
			continue
		}
		k := ne.Uint32(marked[i+4:])
		switch k & retActionFull {
		case retTrace:
			ne.PutUint32(plain[i+4:], retErrno|k&retData)
			ne.PutUint32(notify[i+4:], retUserNotif)
		case retLog:
			ne.PutUint32(plain[i+4:], retAllow)
			ne.PutUint32(notify[i+4:], retUserNotif)
		case retUserNotif:
			return nil, nil, fmt.Errorf("instruction %d already returns SECCOMP_RET_USER_NOTIF", i/8)
		}
	}
	return plain, notify, nil
}
