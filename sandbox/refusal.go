package sandbox

import (
	"encoding/binary"
	"net/netip"
	"sync"

	"github.com/forgebox/forgebox/seccomp"
)

// Refusal is one kind of thing the sandbox refused the command, as the
// sandbox observed it while the command ran: never guessed from the
// command's output. Result.Refusals holds them, and `forgebox run --json`
// prints them as "refusals", each an object of these fields:
//
//	{"layer": "network", "op": "connect", "target": "192.0.2.1:443", "count": 1}
//	{"layer": "seccomp", "op": "mount", "rule": "mount", "errno": "EPERM", "count": 2}
//
// Layer is LayerNetwork or LayerSeccomp (LayerFilesystem is reserved for
// writes the read-only view refuses, not observed yet). Op is the
// syscall's kernel name. For the network, Target is the destination
// ("93.184.216.34:443", "[2001:db8::1]:53") that the run's network mode
// (Enforced.Network) cannot reach; the call itself went ahead, and the
// kernel failed it as it would have without the observer. For seccomp,
// Rule is the filter's label for the refusal (as in
// Enforced.SeccompDenied) and Errno what the command got. Count is how
// many times the same refusal happened.
type Refusal struct {
	Layer  string `json:"layer"`
	Op     string `json:"op"`
	Target string `json:"target,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Errno  string `json:"errno,omitempty"`
	Count  int    `json:"count"`
}

// Layers of a Refusal.
const (
	LayerNetwork    = "network"
	LayerSeccomp    = "seccomp"
	LayerFilesystem = "filesystem"
)

// Routine reports whether the refusal happens in ordinary runs that do
// not fail for it, so that it explains no failure by itself: glibc's NSS
// asks systemd's user database over a Unix socket whenever a program
// looks up a user, and takes the refusal as "no such service".
func (r Refusal) Routine() bool {
	return r.Layer == LayerSeccomp && r.Rule == seccomp.UnixSocketLabel
}

// MaxRefusals bounds Result.Refusals: distinct refusals past it are
// counted in Result.RefusalsOmitted. maxRefusalTarget bounds a Target.
const (
	MaxRefusals      = 32
	maxRefusalTarget = 256
)

// refusalLog collects a run's refusals, deduplicated and bounded. The
// observer adds to it from its own goroutine.
type refusalLog struct {
	mu      sync.Mutex
	list    []Refusal
	index   map[Refusal]int // by the refusal with Count 0
	omitted int
}

func (l *refusalLog) add(r Refusal) {
	if len(r.Target) > maxRefusalTarget {
		r.Target = r.Target[:maxRefusalTarget]
	}
	r.Count = 0
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.index[r]; ok {
		l.list[i].Count++
		return
	}
	if len(l.list) >= MaxRefusals {
		l.omitted++
		return
	}
	if l.index == nil {
		l.index = map[Refusal]int{}
	}
	l.index[r] = len(l.list)
	r.Count = 1
	l.list = append(l.list, r)
}

// result returns the refusals in the order they first happened and how
// many did not fit.
func (l *refusalLog) result() ([]Refusal, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Refusal(nil), l.list...), l.omitted
}

// Address families as Linux numbers them in a struct sockaddr.
const (
	linuxAFInet  = 2
	linuxAFInet6 = 10
)

// decodeSockaddr reads the destination of an IPv4 or IPv6 struct sockaddr
// as the kernel lays it out (family in native byte order, port and address
// in network order). ok is false for other families (AF_UNIX, AF_UNSPEC)
// and for a buffer too short for its family.
func decodeSockaddr(b []byte) (ap netip.AddrPort, ok bool) {
	if len(b) < 2 {
		return ap, false
	}
	switch binary.NativeEndian.Uint16(b) {
	case linuxAFInet:
		if len(b) < 8 {
			return ap, false
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])), true
	case linuxAFInet6:
		if len(b) < 24 {
			return ap, false
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:])), true
	}
	return ap, false
}

// unreachable reports whether the run's network mode keeps the command from
// reaching dst. Loopback (and the unspecified address, which the kernel
// takes for it) is the sandbox's own under none and loopback; under allow
// only the proxy's address is a way out, and a direct connection anywhere
// else is reported (Landlock refuses TCP to other ports; nothing else
// listens there). The host's network reaches everything.
func unreachable(n Network, dst netip.AddrPort) bool {
	ip := dst.Addr().Unmap()
	local := ip.IsLoopback() || ip.IsUnspecified()
	switch n {
	case NetHost:
		return false
	case NetAllow:
		return !(local && dst.Port() == ProxyPort)
	}
	return !local
}
