package netproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

func TestSOCKS5(t *testing.T) {
	e := newTestEnv(t)
	pt := startProxy(t, mustParse(t, []string{"*.allowed.test", "allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback})
	d, err := proxy.SOCKS5("tcp", pt.addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{
		Transport: &http.Transport{
			DialContext:     d.(proxy.ContextDialer).DialContext,
			TLSClientConfig: &tls.Config{RootCAs: e.pki.pool},
		},
		Timeout: 20 * time.Second,
	}
	for _, name := range []string{"allowed.test", "x.y.allowed.test"} {
		u := fmt.Sprintf("https://%s:%d/socks", name, e.httpsPort)
		if name == "x.y.allowed.test" {
			// The certificate's *.allowed.test does not cover two labels:
			// go plain HTTP to show the wildcard's depth.
			u = fmt.Sprintf("http://%s:%d/socks", name, e.httpPort)
		}
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s over SOCKS5: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), "uri=/socks") {
			t.Errorf("GET %s over SOCKS5 = %q", u, body)
		}
	}
	c.CloseIdleConnections()
	ev := pt.events.forHost(t, "allowed.test")
	if ev.Protocol != ProtoSOCKS5 || ev.Port != e.httpsPort || ev.Decision != Allowed || ev.BytesUp == 0 || ev.BytesDown == 0 || !ev.Addr.IsLoopback() {
		t.Errorf("event = %+v, want an allowed SOCKS5 tunnel with bytes", ev)
	}

	// Refused: by name, and an IP literal.
	for _, dest := range []string{fmt.Sprintf("other.test:%d", e.httpsPort), fmt.Sprintf("127.0.0.1:%d", e.httpsPort)} {
		_, err := d.(proxy.ContextDialer).DialContext(context.Background(), "tcp", dest)
		if err == nil || !strings.Contains(err.Error(), "connection not allowed by ruleset") {
			t.Errorf("SOCKS5 dial %s = %v, want \"connection not allowed by ruleset\"", dest, err)
		}
	}
	pt.events.find(t, "ip-literal", func(e Event) bool { return e.Code == CodeIPLiteral && e.Protocol == ProtoSOCKS5 })
	if n := e.httpsConns.Load(); n != 1 {
		t.Errorf("the HTTPS server saw %d connections, want 1 (the allowed one)", n)
	}
}

// TestSOCKS5Replies speaks the protocol by hand for the codes no client
// library exposes.
func TestSOCKS5Replies(t *testing.T) {
	target := newTCPTarget(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{
		Hosts: map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}}, AllowPrivate: loopback, HandshakeTimeout: 2 * time.Second})
	port := []byte{byte(target.port >> 8), byte(target.port)}
	domain := func(name string) []byte { return append([]byte{socksAtypDomain, byte(len(name))}, name...) }
	tests := []struct {
		name     string
		greeting []byte
		request  []byte
		method   byte // the method the proxy picks
		reply    byte // 0xff: no reply expected
	}{
		{"connect allowed", []byte{5, 1, 0}, cat([]byte{5, 1, 0}, domain("allowed.test"), port), 0, socksSucceeded},
		{"connect IPv4 literal", []byte{5, 1, 0}, cat([]byte{5, 1, 0, socksAtypIPv4, 127, 0, 0, 1}, port), 0, socksNotAllowed},
		{"connect IPv6 literal", []byte{5, 1, 0}, cat([]byte{5, 1, 0, socksAtypIPv6}, net.IPv6loopback, port), 0, socksNotAllowed},
		{"not allowed", []byte{5, 1, 0}, cat([]byte{5, 1, 0}, domain("other.test"), port), 0, socksNotAllowed},
		{"invalid name", []byte{5, 1, 0}, cat([]byte{5, 1, 0}, domain("a b"), port), 0, socksNotAllowed},
		{"BIND", []byte{5, 1, 0}, cat([]byte{5, 2, 0}, domain("allowed.test"), port), 0, socksCmdUnsupp},
		{"UDP ASSOCIATE", []byte{5, 1, 0}, cat([]byte{5, 3, 0}, domain("allowed.test"), port), 0, socksCmdUnsupp},
		{"bad address type", []byte{5, 1, 0}, []byte{5, 1, 0, 9, 0, 0}, 0, socksAtypUnsupp},
		{"password only", []byte{5, 1, 2}, nil, socksNoMethod, 0xff},
		{"several methods", []byte{5, 3, 2, 1, 0}, cat([]byte{5, 1, 0}, domain("allowed.test"), port), 0, socksSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialProxy(t, pt.addr)
			c.Write(tt.greeting)
			var m [2]byte
			if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, tt.method} {
				t.Fatalf("method selection = %v, %v; want [5 %d]", m, err, tt.method)
			}
			if tt.reply == 0xff {
				if _, err := c.Read(m[:]); err != io.EOF {
					t.Errorf("after refusing the methods the proxy did not close: %v", err)
				}
				return
			}
			c.Write(tt.request)
			var r [10]byte
			if _, err := io.ReadFull(c, r[:]); err != nil {
				t.Fatalf("reading the reply: %v", err)
			}
			if want := [10]byte{5, tt.reply, 0, 1}; r != want {
				t.Errorf("reply = %v, want %v", r, want)
			}
		})
	}
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

func dialProxy(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}
