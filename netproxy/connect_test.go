package netproxy

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestConnectTLS(t *testing.T) {
	e := newTestEnv(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test", "*.allowed.test"}, nil),
		Options{Hosts: e.hosts, AllowPrivate: loopback})
	c := pt.client(e)
	for _, name := range []string{"allowed.test", "sub.allowed.test"} {
		u := fmt.Sprintf("https://%s:%d/hello", name, e.httpsPort)
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s through the proxy: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "sni=" + name; resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d %q, want 200 and %q", u, resp.StatusCode, body, want)
		}
	}
	c.CloseIdleConnections()
	ev := pt.events.forHost(t, "allowed.test")
	if ev.Protocol != ProtoConnect || ev.Port != e.httpsPort || ev.Decision != Allowed || ev.Code != "" ||
		ev.Addr != netip.MustParseAddr("127.0.0.1") || ev.BytesUp < 100 || ev.BytesDown < 100 || ev.Duration <= 0 {
		t.Errorf("event = %+v, want an allowed CONNECT to 127.0.0.1:%d with bytes both ways", ev, e.httpsPort)
	}
}

// TestConnectRefusals checks each refusal's answer and that nothing was
// resolved or dialed for it, and that the target saw no connection.
func TestConnectRefusals(t *testing.T) {
	e := newTestEnv(t)
	target := newTCPTarget(t)
	tests := []struct {
		name    string
		allow   []string
		deny    []string
		private bool
		target  string
		status  int
		code    Code
		reason  string
	}{
		{name: "not listed", allow: []string{"allowed.test"}, target: "other.test:%d", status: 403, code: CodeNotAllowed,
			reason: "forgebox: other.test is not in the network allowlist; add other.test to the network allowlist"},
		{name: "not a subdomain", allow: []string{"*.allowed.test"}, target: "evilallowed.test:%d", status: 403, code: CodeNotAllowed},
		{name: "wildcard excludes the apex", allow: []string{"*.allowed.test"}, target: "allowed.test:%d", status: 403, code: CodeNotAllowed},
		{name: "exact excludes subdomains", allow: []string{"allowed.test"}, target: "sub.allowed.test:%d", status: 403, code: CodeNotAllowed},
		{name: "other port", allow: []string{"allowed.test:1"}, target: "allowed.test:%d", status: 403, code: CodeNotAllowed,
			reason: "is allowed on port 1 only"},
		{name: "deny wins", allow: []string{"*.allowed.test"}, deny: []string{"sub.allowed.test"}, target: "sub.allowed.test:%d", status: 403,
			code: CodeDenyRule, reason: "denied by the network rule deny=sub.allowed.test"},
		{name: "empty allowlist", target: "allowed.test:%d", status: 403, code: CodeNotAllowed, reason: "the allowlist is empty"},
		{name: "IP literal", allow: []string{"allowed.test"}, private: true, target: "127.0.0.1:%d", status: 403, code: CodeIPLiteral},
		{name: "numeric name", allow: []string{"allowed.test"}, target: "2130706433:%d", status: 400, code: CodeInvalidHost},
		{name: "no port", allow: []string{"allowed.test"}, target: "allowed.test", status: 400, code: CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			opts := Options{Resolver: rec, Dial: rec.Dial, Hosts: e.hosts}
			if tt.private {
				opts.AllowPrivate = loopback
			}
			pt := startProxy(t, mustParse(t, tt.allow, tt.deny), opts)
			dest := tt.target
			if strings.Contains(dest, "%d") {
				dest = fmt.Sprintf(dest, target.port)
			}
			resp, _, _ := rawConnect(t, pt.addr, dest)
			body, _ := io.ReadAll(resp.Body)
			reason := resp.Header.Get("X-Forgebox-Reason")
			if resp.StatusCode != tt.status || resp.Header.Get("X-Forgebox-Code") != string(tt.code) {
				t.Errorf("CONNECT %s = %d (%s), want %d (%s)", dest, resp.StatusCode, resp.Header.Get("X-Forgebox-Code"), tt.status, tt.code)
			}
			if !strings.Contains(reason, tt.reason) || !strings.HasPrefix(reason, "forgebox: ") || strings.TrimSpace(string(body)) != reason {
				t.Errorf("CONNECT %s: reason %q, body %q; want the reason (containing %q) in both", dest, reason, body, tt.reason)
			}
			ev := pt.events.find(t, "for the refusal", func(Event) bool { return true })
			if ev.Decision != Denied || ev.Code != tt.code || ev.Protocol != ProtoConnect {
				t.Errorf("event = %+v, want denied %s", ev, tt.code)
			}
			if l, d := rec.counts(); l != 0 || d != 0 {
				t.Errorf("a refused CONNECT caused %d lookups and %d dials, want none", l, d)
			}
		})
	}
	if n := target.accepts.Load(); n != 0 {
		t.Errorf("the target saw %d connections, want none", n)
	}
}

func TestConnectIPLiteralAllowedExactly(t *testing.T) {
	target := newTCPTarget(t)
	// No AllowPrivate: an address the user wrote is not a DNS answer.
	pt := startProxy(t, mustParse(t, []string{"127.0.0.1"}, nil), Options{})
	resp, c, br := rawConnect(t, pt.addr, fmt.Sprintf("127.0.0.1:%d", target.port))
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT to an allowed IP literal = %d %s", resp.StatusCode, resp.Header.Get("X-Forgebox-Reason"))
	}
	// A ClientHello with any name passes: the permission is for the address.
	hello := helloRecords([][]byte{sniExt("anything.test")}, 1<<14)
	c.Write(hello)
	got := make([]byte, len(hello))
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatalf("echo through an IP-literal tunnel: %v", err)
	}
}

// TestRebinding: an allowed name that resolves to loopback is refused unless
// AllowPrivate covers it, and the loopback server sees nothing.
func TestRebinding(t *testing.T) {
	target := newTCPTarget(t)
	for _, tt := range []struct {
		name  string
		addrs []string
	}{
		{"loopback", []string{"127.0.0.1"}},
		{"v4-mapped loopback", []string{"::ffff:127.0.0.1"}},
		{"private and link-local", []string{"10.0.0.1", "169.254.169.254", "fd00::1"}},
		{"unspecified", []string{"0.0.0.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var addrs []netip.Addr
			for _, a := range tt.addrs {
				addrs = append(addrs, netip.MustParseAddr(a))
			}
			rec := &recorder{}
			pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil),
				Options{Hosts: map[string][]netip.Addr{"allowed.test": addrs}, Dial: rec.Dial})
			resp, _, _ := rawConnect(t, pt.addr, fmt.Sprintf("allowed.test:%d", target.port))
			reason := resp.Header.Get("X-Forgebox-Reason")
			if resp.StatusCode != 403 || resp.Header.Get("X-Forgebox-Code") != string(CodeRefusedAddress) ||
				!strings.Contains(reason, "allowed.test resolves only to addresses forgebox refuses") {
				t.Errorf("CONNECT to a name resolving to %v = %d %q, want 403 refused-address", tt.addrs, resp.StatusCode, reason)
			}
			if _, d := rec.counts(); d != 0 {
				t.Errorf("%d dials, want none", d)
			}
		})
	}
	if n := target.accepts.Load(); n != 0 {
		t.Errorf("the loopback target saw %d connections, want none", n)
	}
	// With a public and a private answer, only the public one is tried.
	rec := &recorder{}
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{
		Hosts:          map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.0.2.1")}},
		Dial:           rec.Dial,
		ConnectTimeout: 200 * time.Millisecond,
	})
	resp, _, _ := rawConnect(t, pt.addr, fmt.Sprintf("allowed.test:%d", target.port))
	rec.mu.Lock()
	dials := rec.dials
	rec.mu.Unlock()
	if resp.StatusCode == 200 || len(dials) != 1 || !strings.HasPrefix(dials[0], "192.0.2.1:") {
		t.Errorf("mixed answer: CONNECT = %d, dials %q; want only 192.0.2.1 tried (and failing)", resp.StatusCode, dials)
	}
}

func TestConnectSNI(t *testing.T) {
	target := newTCPTarget(t)
	hosts := map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}}
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{Hosts: hosts, AllowPrivate: loopback})
	dest := fmt.Sprintf("allowed.test:%d", target.port)
	tests := []struct {
		name  string
		hello []byte
		code  Code // "" = forwarded
	}{
		{"same name, other case", helloRecords([][]byte{sniExt("ALLOWED.test.")}, 1<<14), ""},
		{"no SNI", helloRecords([][]byte{ext(23, nil)}, 1<<14), ""},
		{"other name", helloRecords([][]byte{sniExt("other.test")}, 1<<14), CodeSNIMismatch},
		{"name split over records", helloRecords([][]byte{sniExt("evil.test")}, 3), CodeSNIMismatch},
		{"suffix trick", helloRecords([][]byte{sniExt("allowed.test.evil.test")}, 1<<14), CodeSNIMismatch},
		{"ECH", helloRecords([][]byte{sniExt("allowed.test"), ext(extEncryptedClientHello, []byte{0})}, 1<<14), CodeEncryptedHello},
		{"malformed", append([]byte{22, 3, 1, 0, 5, 1, 0, 0, 1}, 0), CodeBadRequest},
		{"not TLS", []byte("SSH-2.0-OpenSSH_9.2\r\n"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := target.bytes.Load()
			resp, c, br := rawConnect(t, pt.addr, dest)
			if resp.StatusCode != 200 {
				t.Fatalf("CONNECT %s = %d", dest, resp.StatusCode)
			}
			c.Write(tt.hello)
			got := make([]byte, len(tt.hello))
			_, err := io.ReadFull(br, got)
			if tt.code == "" {
				if err != nil || string(got) != string(tt.hello) {
					t.Errorf("echo = %q, %v; want the bytes back", got, err)
				}
				return
			}
			if err == nil {
				t.Errorf("the tunnel carried a ClientHello it should have refused (%s)", tt.code)
			}
			ev := pt.events.find(t, string(tt.code), func(e Event) bool { return e.Code == tt.code })
			if ev.Decision != Denied || ev.Host != "allowed.test" {
				t.Errorf("event = %+v, want denied allowed.test", ev)
			}
			if n := target.bytes.Load() - before; n != 0 {
				t.Errorf("the server received %d bytes of a refused ClientHello, want none", n)
			}
		})
	}
}

// TestConnectSNIRealTLS: a real TLS client asking for another name than the
// tunnel's fails, and the server never sees its handshake.
func TestConnectSNIRealTLS(t *testing.T) {
	e := newTestEnv(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback})
	_, c, _ := rawConnect(t, pt.addr, fmt.Sprintf("allowed.test:%d", e.httpsPort))
	tc := tls.Client(c, &tls.Config{ServerName: "other.test", RootCAs: e.pki.pool})
	if err := tc.Handshake(); err == nil {
		t.Fatalf("TLS handshake for other.test through a tunnel to allowed.test succeeded")
	}
	ev := pt.events.find(t, "sni-mismatch", func(e Event) bool { return e.Code == CodeSNIMismatch })
	if !strings.Contains(ev.Reason, `"other.test"`) {
		t.Errorf("event reason %q does not name the SNI", ev.Reason)
	}
}

// TestUpstreamFailures: an allowed destination that cannot be reached gets
// a 502 or a SOCKS5 reply naming the failure, and an allowed event.
func TestUpstreamFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := portOf(t, l.Addr())
	l.Close()
	rec := &recorder{}
	pt := startProxy(t, mustParse(t, []string{"allowed.test", "unknown.test"}, nil), Options{
		Hosts:        map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}},
		Resolver:     rec,
		AllowPrivate: loopback,
	})
	for _, tt := range []struct {
		target string
		code   Code
		socks  byte
	}{
		{fmt.Sprintf("allowed.test:%d", closed), CodeConnectFailed, socksRefused},
		{"unknown.test:443", CodeResolveFailed, socksHostUnreach},
	} {
		resp, _, _ := rawConnect(t, pt.addr, tt.target)
		if resp.StatusCode != 502 || resp.Header.Get("X-Forgebox-Code") != string(tt.code) {
			t.Errorf("CONNECT %s = %d %s, want 502 %s", tt.target, resp.StatusCode, resp.Header.Get("X-Forgebox-Reason"), tt.code)
		}
		ev := pt.events.find(t, string(tt.code), func(e Event) bool { return e.Code == tt.code })
		if ev.Decision != Allowed {
			t.Errorf("event %+v, want allowed (the rules allowed it; the network failed)", ev)
		}
		host, port, _ := net.SplitHostPort(tt.target)
		p, _ := strconv.Atoi(port)
		c := dialProxy(t, pt.addr)
		c.Write(cat([]byte{5, 1, 0, 5, 1, 0, socksAtypDomain, byte(len(host))}, []byte(host), []byte{byte(p >> 8), byte(p)}))
		var r [12]byte
		if _, err := io.ReadFull(c, r[:]); err != nil || r[3] != tt.socks {
			t.Errorf("SOCKS5 CONNECT %s: reply %v, %v; want code %d", tt.target, r[2:], err, tt.socks)
		}
	}
}
