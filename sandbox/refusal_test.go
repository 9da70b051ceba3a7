package sandbox

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// sockaddrIn lays out a struct sockaddr_in or sockaddr_in6 as the kernel
// reads it from the caller's memory.
func sockaddrIn(ap netip.AddrPort) []byte {
	if ap.Addr().Is4() {
		b := make([]byte, 16)
		binary.NativeEndian.PutUint16(b, linuxAFInet)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		a := ap.Addr().As4()
		copy(b[4:], a[:])
		return b
	}
	b := make([]byte, 28)
	binary.NativeEndian.PutUint16(b, linuxAFInet6)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	a := ap.Addr().As16()
	copy(b[8:], a[:])
	return b
}

func TestDecodeSockaddr(t *testing.T) {
	unix := make([]byte, 110)
	binary.NativeEndian.PutUint16(unix, 1) // AF_UNIX
	copy(unix[2:], "/run/docker.sock")
	tests := []struct {
		name string
		b    []byte
		want string // "" when not decoded
	}{
		{"ipv4", sockaddrIn(netip.MustParseAddrPort("192.0.2.1:443")), "192.0.2.1:443"},
		{"ipv6", sockaddrIn(netip.MustParseAddrPort("[2001:db8::1]:53")), "[2001:db8::1]:53"},
		{"ipv4-mapped", sockaddrIn(netip.MustParseAddrPort("[::ffff:93.184.216.34]:80")), "[::ffff:93.184.216.34]:80"},
		{"ipv4 short", sockaddrIn(netip.MustParseAddrPort("192.0.2.1:443"))[:7], ""},
		{"ipv6 short", sockaddrIn(netip.MustParseAddrPort("[2001:db8::1]:53"))[:23], ""},
		{"ipv6 without scope id", sockaddrIn(netip.MustParseAddrPort("[2001:db8::1]:53"))[:24], "[2001:db8::1]:53"},
		{"unix", unix, ""},
		{"unspec", make([]byte, 16), ""},
		{"one byte", []byte{2}, ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		ap, ok := decodeSockaddr(tt.b)
		got := ""
		if ok {
			got = ap.String()
		}
		if got != tt.want {
			t.Errorf("decodeSockaddr(%s) = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

func TestUnreachable(t *testing.T) {
	tests := []struct {
		net  Network
		dst  string
		want bool
	}{
		{NetNone, "192.0.2.1:443", true},
		{NetNone, "10.255.255.53:53", true},
		{NetNone, "127.0.0.1:8080", false},
		{NetNone, "[::1]:80", false},
		{NetNone, "[::ffff:127.0.0.1]:80", false},
		{NetNone, "0.0.0.0:80", false},
		{NetNone, "[::ffff:192.0.2.1]:443", true},
		{NetLoopback, "127.0.0.1:8080", false},
		{NetLoopback, "[2001:db8::1]:443", true},
		{NetAllow, fmt.Sprintf("127.0.0.1:%d", ProxyPort), false},
		{NetAllow, "127.0.0.1:8080", true},
		{NetAllow, "192.0.2.1:443", true},
		{NetHost, "192.0.2.1:443", false},
	}
	for _, tt := range tests {
		if got := unreachable(tt.net, netip.MustParseAddrPort(tt.dst)); got != tt.want {
			t.Errorf("unreachable(%s, %s) = %v, want %v", tt.net, tt.dst, got, tt.want)
		}
	}
}

// The record stays small whatever the command does: repeats are counted,
// distinct refusals past MaxRefusals only counted, targets cut short.
func TestRefusalLogBounded(t *testing.T) {
	var l refusalLog
	for i := 0; i < 3; i++ {
		l.add(Refusal{Layer: LayerSeccomp, Op: "mount", Rule: "mount", Errno: "EPERM"})
	}
	for i := 0; i < 1000; i++ {
		l.add(Refusal{Layer: LayerNetwork, Op: "connect", Target: fmt.Sprintf("192.0.2.%d:443", i%250)})
	}
	l.add(Refusal{Layer: LayerNetwork, Op: "sendto", Target: strings.Repeat("x", 10000)})
	got, omitted := l.result()
	if len(got) != MaxRefusals {
		t.Fatalf("%d refusals kept, want %d", len(got), MaxRefusals)
	}
	if got[0] != (Refusal{Layer: LayerSeccomp, Op: "mount", Rule: "mount", Errno: "EPERM", Count: 3}) {
		t.Errorf("first refusal = %+v, want mount counted 3 times", got[0])
	}
	if got[1].Target != "192.0.2.0:443" || got[1].Count != 4 {
		t.Errorf("second refusal = %+v, want 192.0.2.0:443 counted 4 times", got[1])
	}
	// 31 connect targets fit, each seen 4 times (1000 = 4*250); the other
	// 219 targets' 876 connects and the sendto are omitted.
	if want := 1000 - 31*4 + 1; omitted != want {
		t.Errorf("omitted = %d, want %d", omitted, want)
	}
	var short refusalLog
	short.add(Refusal{Layer: LayerNetwork, Op: "sendto", Target: strings.Repeat("x", 10000)})
	if r, _ := short.result(); len(r[0].Target) != maxRefusalTarget {
		t.Errorf("target of %d bytes kept, want %d", len(r[0].Target), maxRefusalTarget)
	}
}
