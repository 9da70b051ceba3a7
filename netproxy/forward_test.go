package netproxy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestForwardGetAndPost(t *testing.T) {
	e := newTestEnv(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback})
	// Credentials for the proxy must not travel on to the server.
	proxyURL := pt.url()
	proxyURL.User = url.UserPassword("agent", "s3cret")
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 20 * time.Second}
	base := fmt.Sprintf("http://allowed.test:%d", e.httpPort)

	var reused []bool
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest("GET", base+"/get?q=1", nil)
		req.Header.Set("Connection", "X-Secret")
		req.Header.Set("X-Secret", "hop-by-hop")
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET through the proxy: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf(`method=GET host=allowed.test:%d uri=/get?q=1 sni= len=0`, e.httpPort)
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET = %d %q, want 200 and %q", resp.StatusCode, body, want)
		}
		if !strings.Contains(string(body), `proxy-authorization="" x-secret=""`) {
			t.Errorf("the server saw proxy credentials or a hop-by-hop header: %q", body)
		}
	}
	if len(reused) != 3 || reused[0] || !reused[1] || !reused[2] {
		t.Errorf("client connection reuse = %v, want [false true true] (keep-alive)", reused)
	}
	if n := e.httpConns.Load(); n != 1 {
		t.Errorf("the server saw %d connections for 3 requests, want 1 (upstream keep-alive)", n)
	}

	// POST, with a length and chunked (unknown length), a few MB each.
	payload := bytes.Repeat([]byte("forgebox "), 300_000)
	sum := sha256.Sum256(payload)
	for _, chunked := range []bool{false, true} {
		var body io.Reader = bytes.NewReader(payload)
		if chunked {
			body = io.MultiReader(body) // hides the length
		}
		resp, err := c.Post(base+"/post", "application/octet-stream", body)
		if err != nil {
			t.Fatalf("POST (chunked %v): %v", chunked, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf("method=POST host=allowed.test:%d uri=/post sni= len=%d sum=%x", e.httpPort, len(payload), sum[:8])
		if !strings.Contains(string(got), want) {
			t.Errorf("POST (chunked %v) = %q, want %q", chunked, got, want)
		}
	}

	// A large download of unknown length reaches the client whole.
	resp, err := c.Get(base + "/download?n=5000000&chunked=1")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != 5_000_000 {
		t.Errorf("chunked download = %d bytes, %v; want 5000000", n, err)
	}
	c.CloseIdleConnections()

	evs := pt.events.waitN(t, 6)
	for _, ev := range evs[:6] {
		if ev.Protocol != ProtoHTTP || ev.Host != "allowed.test" || ev.Port != e.httpPort || ev.Decision != Allowed || ev.Code != "" || !ev.Addr.IsLoopback() {
			t.Errorf("event = %+v, want an allowed http request to allowed.test", ev)
		}
	}
	if post := evs[3]; post.BytesUp < int64(len(payload)) || post.BytesDown == 0 {
		t.Errorf("POST event counts %d bytes up, %d down; want the body up and the answer down", post.BytesUp, post.BytesDown)
	}
}

// TestForwardLengthBody: a body framed by Content-Length, which the proxy
// splices rather than copies, arrives whole, in order and counted, and leaves
// the upstream connection ready for the next request; one that trickles
// outlives the idle timeout, one that stalls is ended by it, and one the
// server cuts short does not reach the client as complete.
func TestForwardLengthBody(t *testing.T) {
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(i % 251)
	}
	stop := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			w.Write(big)
		case "/trickle", "/stall":
			w.Header().Set("Content-Length", "10")
			for i := 0; i < 10; i++ {
				if i == 5 && r.URL.Path == "/stall" {
					<-stop
					return
				}
				w.Write([]byte{'x'})
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
		case "/short":
			c, _, _ := w.(http.Hijacker).Hijack()
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345")
			c.Close()
		}
	}))
	var conns atomic.Int32
	srv.Config.ConnState = countNew(&conns)
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // before srv.Close, which waits for handlers
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{
		Hosts:        map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowPrivate: loopback, IdleTimeout: 300 * time.Millisecond})
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pt.url())}, Timeout: 20 * time.Second}
	base := fmt.Sprintf("http://allowed.test:%d", portOf(t, srv.Listener.Addr()))
	get := func(path string) ([]byte, error) {
		resp, err := c.Get(base + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}

	for i := 0; i < 2; i++ {
		got, err := get("/big")
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("GET /big #%d = %d bytes, %v; want the %d bytes sent", i, len(got), err, len(big))
		}
	}
	if got, err := get("/trickle"); err != nil || string(got) != "xxxxxxxxxx" {
		t.Errorf("GET /trickle (1s, idle timeout 300ms) = %q, %v; want 10 bytes", got, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the server saw %d connections for 3 requests, want 1 (upstream keep-alive)", n)
	}
	evs := pt.events.waitN(t, 3)
	for _, ev := range evs[:2] {
		if ev.BytesDown < int64(len(big)) {
			t.Errorf("event for /big counts %d bytes down, want at least %d", ev.BytesDown, len(big))
		}
	}

	start := time.Now()
	if got, err := get("/stall"); err == nil {
		t.Errorf("GET /stall = %q, nil error; want the connection cut", got)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stalled body cut after %v, want about 300ms", d)
	}
	pt.events.find(t, "idle-timeout", func(e Event) bool { return e.Code == CodeIdleTimeout })

	if got, err := get("/short"); err == nil {
		t.Errorf("GET /short = %q, nil error; want an unexpected EOF", got)
	}
	pt.events.find(t, "relay failure", func(e Event) bool {
		return e.Code == CodeRelay && strings.Contains(e.Reason, "unexpected EOF")
	})
}

func TestForwardRefusals(t *testing.T) {
	e := newTestEnv(t)
	rec := &recorder{}
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback, Resolver: rec, Dial: rec.Dial})
	tests := []struct {
		name    string
		request string
		status  int
		code    Code
		reason  string
	}{
		{"not allowed", "GET http://other.test:PORT/ HTTP/1.1\r\nHost: other.test:PORT\r\n\r\n", 403, CodeNotAllowed,
			"forgebox: other.test is not in the network allowlist"},
		{"not allowed, with a body", "POST http://other.test:PORT/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 403, CodeNotAllowed, "other.test"},
		{"origin form", "GET / HTTP/1.1\r\nHost: allowed.test:PORT\r\n\r\n", 400, CodeBadRequest, "this is a proxy"},
		{"Host disagrees", "GET http://allowed.test:PORT/ HTTP/1.1\r\nHost: other.test\r\n\r\n", 400, CodeBadRequest,
			`the Host header "other.test" does not match`},
		{"Host on another port", "GET http://allowed.test:PORT/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, CodeBadRequest, "does not match"},
		{"https forwarding", "GET https://allowed.test:PORT/ HTTP/1.1\r\n\r\n", 501, CodeUnsupported, "use CONNECT"},
		{"IP literal", "GET http://127.0.0.1:PORT/ HTTP/1.1\r\n\r\n", 403, CodeIPLiteral, "127.0.0.1 is an IP address"},
		{"bad port", "GET http://allowed.test:99999/ HTTP/1.1\r\n\r\n", 400, CodeBadRequest, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := rawHTTP(t, pt.addr, strings.ReplaceAll(tt.request, "PORT", fmt.Sprint(e.httpPort)))
			body, _ := io.ReadAll(resp.Body)
			reason := resp.Header.Get("X-Forgebox-Reason")
			if resp.StatusCode != tt.status || resp.Header.Get("X-Forgebox-Code") != string(tt.code) || !strings.Contains(reason, tt.reason) {
				t.Errorf("%d %s (%s) %q, want %d (%s) with %q", resp.StatusCode, resp.Status, resp.Header.Get("X-Forgebox-Code"), reason, tt.status, tt.code, tt.reason)
			}
			if !strings.Contains(string(body), reason) {
				t.Errorf("body %q does not carry the reason", body)
			}
		})
	}
	if l, d := rec.counts(); l != 0 || d != 0 {
		t.Errorf("refused requests caused %d lookups and %d dials, want none", l, d)
	}
	if n := e.httpConns.Load(); n != 0 {
		t.Errorf("the server saw %d connections, want none", n)
	}
}

// TestForwardExpectContinue: the proxy relays 100 Continue, so a client that
// waits for it sends its body at once rather than after a timeout.
func TestForwardExpectContinue(t *testing.T) {
	e := newTestEnv(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback})
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pt.url()), ExpectContinueTimeout: 5 * time.Second}}
	req, _ := http.NewRequest("PUT", fmt.Sprintf("http://allowed.test:%d/put", e.httpPort), strings.NewReader("body"))
	req.Header.Set("Expect", "100-continue")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(got), "method=PUT") || !strings.Contains(string(got), "len=4") {
		t.Errorf("PUT with Expect: 100-continue = %q", got)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("PUT took %v: the client waited out its 100-continue timeout", d)
	}
}

// rawHTTP sends one raw request to the proxy and reads the response.
func rawHTTP(t *testing.T, proxyAddr, request string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, request)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("response to %q: %v", request, err)
	}
	return resp
}

// TestAdvice: the caller words the advice (cmd/forgebox knows its flags).
func TestAdvice(t *testing.T) {
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{
		Advice: func(d *Denial) string { return "allow it with --net allow=" + d.Host },
	})
	resp := rawHTTP(t, pt.addr, "GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\n\r\n")
	want := "forgebox: example.org is not in the network allowlist; allow it with --net allow=example.org"
	if got := resp.Header.Get("X-Forgebox-Reason"); got != want {
		t.Errorf("X-Forgebox-Reason = %q, want %q", got, want)
	}
}
