package integration

import (
	"net"
	"slices"
	"strings"
	"testing"
)

// hostAddrs are the addresses to put host listeners on: loopback, and a
// non-loopback address of this machine when there is one.
func hostAddrs(t *testing.T) []string {
	t.Helper()
	addrs := []string{"127.0.0.1"}
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ifs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
			addrs = append(addrs, ip.IP.String())
			break
		}
	}
	if len(addrs) == 1 {
		t.Logf("no non-loopback IPv4 address on this host: testing loopback only")
	}
	return addrs
}

// hostListeners listens on every host address and returns the probe
// operations that connect to each.
func hostListeners(t *testing.T) (ls []*listener, ops []string) {
	t.Helper()
	for _, a := range hostAddrs(t) {
		l := listenTCP(t, net.JoinHostPort(a, "0"))
		ls = append(ls, l)
		ops = append(ops, "connect-tcp "+l.l.Addr().String())
	}
	return ls, ops
}

// With the default --net none the command has a loopback of its own and
// nothing else: the host's listeners are out of reach, and Landlock refuses
// TCP even on that loopback.
func TestNoNetwork(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ls, ops := hostListeners(t)
		allowed(t, e.probeHost(ops...)) // the control: one connection each
		vs := e.probe(nil, append([]string{"interfaces", "serve-loopback"}, ops...)...)
		if vs[0].Out != "lo" {
			t.Errorf("probe interfaces = %q; want lo only", vs[0].Out)
		}
		blocked(t, vs[1:], "EACCES")
		for _, l := range ls {
			l.wantAccepted(t, l.l.Addr().String(), 1)
		}
	})
}

// --net loopback is the same empty network namespace, with TCP allowed on
// its own loopback: a test suite can run its local server.
func TestLoopbackNetwork(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ls, ops := hostListeners(t)
		vs := e.probe([]string{"--net", "loopback"}, append([]string{"interfaces", "serve-loopback"}, ops...)...)
		if vs[0].Out != "lo" {
			t.Errorf("probe interfaces = %q; want lo only", vs[0].Out)
		}
		if !vs[1].OK || vs[1].Out != "pong" {
			t.Errorf("%s = %s %q; want a server on 127.0.0.1 inside to work", vs[1].call(), vs[1].outcome(), vs[1].Out)
		}
		blocked(t, vs[2:], "ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "ETIMEDOUT")
		for _, l := range ls {
			l.wantAccepted(t, l.l.Addr().String(), 0)
		}
	})
}

// --net host shares the host's network: the same listeners answer.
func TestHostNetwork(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ls, ops := hostListeners(t)
		vs := e.probe([]string{"--net", "host"}, append([]string{"interfaces"}, ops...)...)
		if names := strings.Split(vs[0].Out, ","); len(names) < 2 {
			t.Errorf("with --net host, probe interfaces = %q; want the host's", vs[0].Out)
		}
		allowed(t, vs[1:])
		for _, l := range ls {
			l.wantAccepted(t, l.l.Addr().String(), 1)
		}
		_, res := e.runJSON([]string{"--net", "host", "--", "true"})
		if res.Enforced == nil || res.Enforced.Network != "host" || slices.Contains(res.Enforced.Namespaces, "net") {
			t.Errorf("--net host: enforced = %+v; want network host and no net namespace", res.Enforced)
		}
	})
}
