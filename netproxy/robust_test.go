package netproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMalformedInput: garbage, oversized and truncated input gets a clean
// refusal (or a close) and an event, within the handshake timeout.
func TestMalformedInput(t *testing.T) {
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{HandshakeTimeout: 500 * time.Millisecond, MaxHeaderBytes: 4096})
	tests := []struct {
		name   string
		input  string
		eof    bool // the client closes its side after the input
		status int  // 0: no HTTP answer expected
		code   Code // in the event
	}{
		{"binary garbage", "\x00\x01\x02\xff garbage\r\n\r\n", false, 400, CodeBadRequest},
		{"no request line", "\r\n\r\n", false, 400, CodeBadRequest},
		{"bad version", "GET http://allowed.test/ HTTP/9\r\n\r\n", false, 400, CodeBadRequest},
		{"huge header", "GET http://allowed.test/ HTTP/1.1\r\nX-Big: " + strings.Repeat("a", 100_000) + "\r\n\r\n", false, 431, CodeHeaderTooLarge},
		{"endless header", "GET http://allowed.test/ HTTP/1.1\r\nX-Big: " + strings.Repeat("a", 1<<20), false, 431, CodeHeaderTooLarge},
		{"header cut short", "GET http://allowed.test/ HTTP/1.1\r\nHost: allo", true, 400, CodeBadRequest},
		{"header stalls", "GET http://allowed.test/ HTTP/1.1\r\n", false, 408, CodeHandshakeTimeout},
		{"nothing sent", "", false, 0, CodeHandshakeTimeout},
		{"SOCKS greeting cut short", "\x05\x02\x00", true, 0, CodeBadRequest},
		{"SOCKS greeting stalls", "\x05", false, 0, CodeHandshakeTimeout},
		{"SOCKS request cut short", "\x05\x01\x00\x05\x01\x00\x03\x0callowed", true, 0, CodeBadRequest},
		{"SOCKS bad request version", "\x05\x01\x00\x04\x01\x00\x01\x7f\x00\x00\x01\x00\x50", false, 0, CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(pt.events.all())
			c := dialProxy(t, pt.addr)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, tt.input)
			if tt.eof {
				c.(*net.TCPConn).CloseWrite()
			}
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatalf("the proxy did not close the connection: %v", err)
			}
			if tt.status != 0 {
				resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(got))), nil)
				if err != nil || resp.StatusCode != tt.status || resp.Header.Get("X-Forgebox-Reason") == "" {
					t.Errorf("answer %q, %v; want %d with a reason", got, err, tt.status)
				}
			} else if strings.HasPrefix(string(got), "HTTP/") {
				t.Errorf("answer %q, want none", got)
			}
			pt.events.find(t, "after the input", func(Event) bool { return len(pt.events.all()) > before })
			time.Sleep(20 * time.Millisecond)
			if evs := pt.events.all()[before:]; len(evs) != 1 || evs[0].Code != tt.code || evs[0].Decision != Denied {
				t.Errorf("events %+v, want one, denied %s", evs, tt.code)
			}
		})
	}
}

// TestCloseEndsTunnels: Close with tunnels open ends them, returns promptly,
// and leaves no goroutine behind.
func TestCloseEndsTunnels(t *testing.T) {
	target := newTCPTarget(t)
	before := runtime.NumGoroutine()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	p := New(mustParse(t, []string{"allowed.test"}, nil), Options{
		Hosts:        map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowPrivate: loopback, Log: log.add})
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	var clients []net.Conn
	for i := 0; i < 5; i++ {
		resp, c, br := rawConnect(t, l.Addr().String(), fmt.Sprintf("allowed.test:%d", target.port))
		if resp.StatusCode != 200 {
			t.Fatalf("CONNECT = %d", resp.StatusCode)
		}
		io.WriteString(c, "ping")
		if _, err := io.ReadFull(br, make([]byte, 4)); err != nil {
			t.Fatalf("echo through tunnel %d: %v", i, err)
		}
		clients = append(clients, c)
	}
	// One more client that has not finished its request.
	idle := dialProxy(t, l.Addr().String())
	io.WriteString(idle, "CONNECT allowed.test:1 HTTP/1.1\r\n")

	start := time.Now()
	p.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := <-served; !errors.Is(err, ErrClosed) {
		t.Errorf("Serve = %v, want ErrClosed", err)
	}
	for i, c := range append(clients, idle) {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.ReadAll(c); isTimeout(err) { // EOF, or a reset if unread input was dropped
			t.Errorf("client %d still open after Close: %v", i, err)
		}
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Errorf("the listener still accepts after Close")
	}
	n := 0
	for _, ev := range log.all() {
		if ev.Code == CodeProxyClosed && ev.Protocol == ProtoConnect {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d tunnel events say proxy-closed, want 5: %+v", n, log.all())
	}
	logged := len(log.all())
	time.Sleep(50 * time.Millisecond)
	if len(log.all()) != logged {
		t.Errorf("Log was called after Close returned")
	}
	waitGoroutines(t, before)
	if err := p.Serve(l); !errors.Is(err, ErrClosed) {
		t.Errorf("Serve after Close = %v, want ErrClosed", err)
	}
}

// waitGoroutines fails if the goroutine count does not come back to n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestIdleTimeout(t *testing.T) {
	target := newTCPTarget(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{
		Hosts:        map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowPrivate: loopback, IdleTimeout: 300 * time.Millisecond})
	dest := fmt.Sprintf("allowed.test:%d", target.port)

	// A busy tunnel outlives the idle timeout several times over.
	_, busy, busyR := rawConnect(t, pt.addr, dest)
	for i := 0; i < 10; i++ {
		io.WriteString(busy, "ping")
		if _, err := io.ReadFull(busyR, make([]byte, 4)); err != nil {
			t.Fatalf("busy tunnel closed after %d round trips: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A quiet one is closed.
	start := time.Now()
	busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(busyR); err != nil {
		t.Fatalf("quiet tunnel not closed: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("quiet tunnel closed after %v, want about 300ms", d)
	}
	pt.events.find(t, "idle-timeout", func(e Event) bool { return e.Code == CodeIdleTimeout && e.Decision == Allowed })

	// A kept-alive HTTP client connection too.
	c := dialProxy(t, pt.addr)
	start = time.Now()
	if _, err := io.ReadAll(c); err != nil || time.Since(start) > 2*time.Second {
		t.Errorf("silent client connection: %v after %v, want closed after about 300ms", err, time.Since(start))
	}
}

func TestMaxConns(t *testing.T) {
	target := newTCPTarget(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{
		Hosts:        map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowPrivate: loopback, MaxConns: 2})
	dest := fmt.Sprintf("allowed.test:%d", target.port)
	rawConnect(t, pt.addr, dest)
	rawConnect(t, pt.addr, dest)
	c := dialProxy(t, pt.addr)
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("third connection over MaxConns=2 not closed: %v", err)
	}
	ev := pt.events.find(t, "too-many-connections", func(e Event) bool { return e.Code == CodeTooManyConns })
	if ev.Decision != Denied || !strings.Contains(ev.Reason, "limit 2") {
		t.Errorf("event = %+v", ev)
	}
}

// TestNoGoroutineLeakPerConnection runs many short exchanges of every kind
// and checks the goroutine count comes back.
func TestNoGoroutineLeakPerConnection(t *testing.T) {
	e := newTestEnv(t)
	target := newTCPTarget(t)
	pt := startProxy(t, mustParse(t, []string{"allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback})
	c := pt.client(e)
	c.Get(fmt.Sprintf("http://allowed.test:%d/warm", e.httpPort))
	c.CloseIdleConnections()
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		if resp, err := c.Get(fmt.Sprintf("http://allowed.test:%d/x", e.httpPort)); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		resp, conn, _ := rawConnect(t, pt.addr, fmt.Sprintf("allowed.test:%d", target.port))
		if resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
		conn.Close()
		rawConnect(t, pt.addr, "other.test:1")
		c.CloseIdleConnections()
	}
	waitGoroutines(t, before)
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%d events\n", len(pt.events.all()))
	}
}
