package integration

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
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
// nothing else: it may serve and connect there (a test suite's local
// server), even on a port a host listener holds, while the host's
// listeners, on its loopback or elsewhere, stay out of reach.
func TestNoNetwork(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ls, ops := hostListeners(t)
		allowed(t, e.probeHost(ops...)) // the control: one connection each
		wantOwnLoopback(t, e, nil, ls, ops)
	})
}

// --net loopback is the older name of --net none, kept so that scripts
// passing it still run: the same namespace, reported as none.
func TestLoopbackNetwork(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ls, ops := hostListeners(t)
		allowed(t, e.probeHost(ops...))
		wantOwnLoopback(t, e, []string{"--net", "loopback"}, ls, ops)
	})
}

// wantOwnLoopback probes the network of a run with flags: only lo, TCP
// served and reached on it (on an ephemeral port and on the port of the
// host's loopback listener, which is then the sandbox's own), none of the
// host's listeners reached, and Enforced saying none without TCP rules.
func wantOwnLoopback(t *testing.T, e *env, flags []string, ls []*listener, ops []string) {
	t.Helper()
	hostLo := ls[0].l.Addr().String() // hostAddrs puts 127.0.0.1 first
	vs := e.probe(flags, append([]string{"interfaces", "serve-loopback", "serve-loopback " + hostLo}, ops...)...)
	if vs[0].Out != "lo" {
		t.Errorf("probe interfaces = %q; want lo only", vs[0].Out)
	}
	for _, v := range vs[1:3] {
		if !v.OK || v.Out != "pong" {
			t.Errorf("%s = %s %q; want a server on the sandbox's loopback to work", v.call(), v.outcome(), v.Out)
		}
	}
	blocked(t, vs[3:], "ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "ETIMEDOUT")
	for _, l := range ls {
		l.wantAccepted(t, l.l.Addr().String(), 1) // the control's only
	}
	_, res := e.runJSON(append(slices.Clone(flags), "--", "true"))
	if en := res.Enforced; en == nil || en.Network != "none" || en.LandlockTCP || !slices.Contains(en.Namespaces, "net") {
		t.Errorf("enforced = %+v; want network none, a net namespace, no Landlock TCP rules", en)
	}
}

// A server the command starts on its loopback is not reachable from the
// host's loopback, on the same port, while it runs.
func TestNoNetworkServerUnreachable(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		free := listenTCP(t, "127.0.0.1:0")
		addr := free.l.Addr().String()
		free.l.Close() // a port nothing on the host listens on
		ready := filepath.Join(e.ws, "ready")
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pw.Close()
		r := e.start([]string{"run", "--no-undo", "--ro", binDir, "--", probe, "listen-tcp " + addr + " " + ready + " 60"},
			func(c *exec.Cmd) { c.Stdin = pr })
		pr.Close()
		waitFile(t, r, ready, 20*time.Second)
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.Close()
			t.Errorf("the host connected to %s, where only the sandbox listens", addr)
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("connect to %s from the host: %v; want ECONNREFUSED", addr, err)
		}
		pw.Close()
		res := r.wait(t, 30*time.Second)
		vs := decodeVerdicts(t, res.stdout)
		if len(vs) != 1 || !vs[0].OK || vs[0].Out != "accepted 0" {
			t.Errorf("probe listen-tcp = %+v (exit %d, stderr %s); want ok, accepted 0", vs, res.code, res.stderr)
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
