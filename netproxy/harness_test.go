package netproxy

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// testPKI is a throwaway CA and one server certificate for the test names.
type testPKI struct {
	pool   *x509.CertPool
	caFile string // PEM, for curl
	leaf   tls.Certificate
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "forgebox netproxy test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "allowed.test"},
		DNSNames:     []string{"allowed.test", "*.allowed.test", "other.test", "evilallowed.test"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{pool: pool, caFile: caFile, leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}
}

// echoHandler reports what the server saw; /download?n=N sends N bytes.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/download" {
		n, _ := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		}
		io.CopyN(w, zeroReader{}, n)
		return
	}
	h := sha256.New()
	n, _ := io.Copy(h, r.Body)
	sni := ""
	if r.TLS != nil {
		sni = r.TLS.ServerName
	}
	fmt.Fprintf(w, "method=%s host=%s uri=%s sni=%s len=%d sum=%x proxy-authorization=%q x-secret=%q",
		r.Method, r.Host, r.RequestURI, sni, n, h.Sum(nil)[:8], r.Header.Get("Proxy-Authorization"), r.Header.Get("X-Secret"))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// testEnv is an HTTPS and an HTTP server on loopback, and Hosts entries that
// send the test names to them.
type testEnv struct {
	pki        *testPKI
	https      *httptest.Server
	http       *httptest.Server
	httpsPort  uint16
	httpPort   uint16
	hosts      map[string][]netip.Addr
	httpsConns atomic.Int32 // TCP connections the servers accepted
	httpConns  atomic.Int32
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	e := &testEnv{pki: newTestPKI(t)}
	quiet := log.New(io.Discard, "", 0)
	e.https = httptest.NewUnstartedServer(http.HandlerFunc(echoHandler))
	e.https.TLS = &tls.Config{Certificates: []tls.Certificate{e.pki.leaf}}
	e.https.Config.ErrorLog = quiet
	e.https.Config.ConnState = countNew(&e.httpsConns)
	e.https.StartTLS()
	t.Cleanup(e.https.Close)
	e.http = httptest.NewUnstartedServer(http.HandlerFunc(echoHandler))
	e.http.Config.ErrorLog = quiet
	e.http.Config.ConnState = countNew(&e.httpConns)
	e.http.Start()
	t.Cleanup(e.http.Close)
	e.httpsPort = portOf(t, e.https.Listener.Addr())
	e.httpPort = portOf(t, e.http.Listener.Addr())
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	e.hosts = map[string][]netip.Addr{
		"allowed.test": lo, "sub.allowed.test": lo, "x.y.allowed.test": lo, "other.test": lo, "evilallowed.test": lo,
	}
	return e
}

func countNew(n *atomic.Int32) func(net.Conn, http.ConnState) {
	return func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
}

func portOf(t testing.TB, a net.Addr) uint16 {
	t.Helper()
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		t.Fatal(err)
	}
	return ap.Port()
}

// proxyUnderTest is a running Proxy on a loopback listener.
type proxyUnderTest struct {
	*Proxy
	addr   string
	events *eventLog
	served chan error
}

func startProxy(t testing.TB, rules *Rules, opts Options) *proxyUnderTest {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pt := &proxyUnderTest{addr: l.Addr().String(), events: &eventLog{}, served: make(chan error, 1)}
	opts.Log = pt.events.add
	pt.Proxy = New(rules, opts)
	go func() { pt.served <- pt.Serve(l) }()
	t.Cleanup(func() {
		pt.Close()
		if err := <-pt.served; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve = %v, want ErrClosed", err)
		}
	})
	return pt
}

func (pt *proxyUnderTest) url() *url.URL { return &url.URL{Scheme: "http", Host: pt.addr} }

// client is an http.Client that goes through the proxy and trusts the test CA.
func (pt *proxyUnderTest) client(e *testEnv) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:             http.ProxyURL(pt.url()),
			TLSClientConfig:   &tls.Config{RootCAs: e.pki.pool},
			ForceAttemptHTTP2: false,
		},
		Timeout: 20 * time.Second,
	}
}

type eventLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, e)
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.evs...)
}

// find waits for an event that matches: events are reported when a
// connection ends, which may be after the client has its answer.
func (l *eventLog) find(t testing.TB, what string, match func(Event) bool) Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, e := range l.all() {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event %s among %+v", what, l.all())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitN waits for at least n events and returns them.
func (l *eventLog) waitN(t testing.TB, n int) []Event {
	t.Helper()
	l.find(t, fmt.Sprintf("number %d", n), func(Event) bool { return len(l.all()) >= n })
	return l.all()
}

func (l *eventLog) forHost(t testing.TB, host string) Event {
	t.Helper()
	return l.find(t, "for "+host, func(e Event) bool { return e.Host == host })
}

// recorder stands in for DNS and the network: it records every lookup and
// dial, so a test can check that a denied request caused none.
type recorder struct {
	mu      sync.Mutex
	lookups []string
	dials   []string
}

func (r *recorder) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.lookups = append(r.lookups, host)
	r.mu.Unlock()
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *recorder) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	r.dials = append(r.dials, addr)
	r.mu.Unlock()
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

func (r *recorder) counts() (lookups, dials int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lookups), len(r.dials)
}

// rawConnect sends a CONNECT for target and reads the answer.
func rawConnect(t testing.TB, proxyAddr, target string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return resp, c, br
}

// tcpTarget is a plain TCP server that counts what reaches it and echoes.
type tcpTarget struct {
	l       net.Listener
	port    uint16
	accepts atomic.Int32
	bytes   atomic.Int64
}

func newTCPTarget(t testing.TB) *tcpTarget {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tt := &tcpTarget{l: l, port: portOf(t, l.Addr())}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tt.accepts.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := c.Read(buf)
					tt.bytes.Add(int64(n))
					if n > 0 {
						c.Write(buf[:n])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return tt
}
