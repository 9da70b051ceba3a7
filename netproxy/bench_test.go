package netproxy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

// blastServer answers each connection's 8-byte big-endian count with that
// many bytes, then closes; a count of 0 is a one-byte echo (for latency).
func blastServer(b *testing.B) uint16 {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	buf := make([]byte, 256<<10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var hdr [8]byte
				if _, err := io.ReadFull(c, hdr[:]); err != nil {
					return
				}
				n := int64(binary.BigEndian.Uint64(hdr[:]))
				if n == 0 {
					c.Write([]byte{1})
					return
				}
				for n > 0 {
					k, err := c.Write(buf[:min(n, int64(len(buf)))])
					if err != nil {
						return
					}
					n -= int64(k)
				}
			}()
		}
	}()
	return portOf(b, l.Addr())
}

// fetch asks c for n bytes (0: one echo byte) and reads them all into buf.
func fetch(b *testing.B, c net.Conn, r io.Reader, n int64, buf []byte) {
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(n))
	if _, err := c.Write(hdr[:]); err != nil {
		b.Fatal(err)
	}
	var got int64
	for {
		k, err := r.Read(buf)
		got += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if want := max(n, 1); got != want {
		b.Fatalf("got %d bytes, want %d", got, want)
	}
}

// dialThrough opens a CONNECT tunnel to allowed.test:port; the reader
// returns the tunnel's bytes (the response header is read byte by byte, so
// nothing is left in a buffer).
func dialThrough(b *testing.B, proxyAddr string, port uint16) (net.Conn, io.Reader) {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\n\r\n", port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("CONNECT: %v %v", resp, err)
	}
	if br.Buffered() > 0 {
		return c, io.MultiReader(io.LimitReader(br, int64(br.Buffered())), c)
	}
	return c, c
}

func benchProxy(b *testing.B) *proxyUnderTest {
	b.Helper()
	return startProxy(b, mustParse(b, []string{"allowed.test"}, nil), Options{
		Hosts:        map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowPrivate: loopback,
	})
}

// BenchmarkConnectLatency measures, in the same iterations, a new
// connection plus a one-byte round trip directly and through a CONNECT
// tunnel; added-µs is the proxy's cost per connection.
func BenchmarkConnectLatency(b *testing.B) {
	port := blastServer(b)
	pt := benchProxy(b)
	direct := fmt.Sprintf("127.0.0.1:%d", port)
	var dDirect, dProxy time.Duration
	buf := make([]byte, 64)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c, err := net.Dial("tcp", direct)
		if err != nil {
			b.Fatal(err)
		}
		fetch(b, c, c, 0, buf)
		c.Close()
		t1 := time.Now()
		c, r := dialThrough(b, pt.addr, port)
		fetch(b, c, r, 0, buf)
		c.Close()
		dDirect += t1.Sub(t0)
		dProxy += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(dDirect.Microseconds())/n, "direct-µs/op")
	b.ReportMetric(float64(dProxy.Microseconds())/n, "proxy-µs/op")
	b.ReportMetric(float64((dProxy-dDirect).Microseconds())/n, "added-µs/op")
}

// BenchmarkDownload fetches 100 MB in each iteration directly, through a
// CONNECT tunnel, through a SOCKS5 tunnel and through a bare relay (two
// io.Copy calls, no policy), in an order that rotates so that none is always
// first. It reports each path's median rate and the medians of the
// per-iteration ratios: to direct for CONNECT (ratio) and SOCKS5
// (socks-ratio), whose target is at least 0.8, and of the bare relay to
// CONNECT (vs-bare: what the proxy's own work costs). Medians, because on a
// shared machine a neighbor can slow a few iterations several-fold.
func BenchmarkDownload(b *testing.B) {
	const size = 100 << 20
	port := blastServer(b)
	pt := benchProxy(b)
	direct := fmt.Sprintf("127.0.0.1:%d", port)
	bare := bareRelay(b, direct)
	socks, err := proxy.SOCKS5("tcp", pt.addr, nil, proxy.Direct)
	if err != nil {
		b.Fatal(err)
	}
	dial := func(d proxy.Dialer, addr string) func() (net.Conn, io.Reader) {
		return func() (net.Conn, io.Reader) {
			c, err := d.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			return c, c
		}
	}
	paths := []struct {
		name string
		dial func() (net.Conn, io.Reader)
	}{
		{"direct", dial(proxy.Direct, direct)},
		{"proxy", func() (net.Conn, io.Reader) { return dialThrough(b, pt.addr, port) }},
		{"socks", dial(socks, fmt.Sprintf("allowed.test:%d", port))},
		{"bare", dial(proxy.Direct, bare)},
	}
	secs := make([][]float64, len(paths))
	buf := make([]byte, 256<<10)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range paths {
			j := (i + k) % len(paths)
			t0 := time.Now()
			c, r := paths[j].dial()
			fetch(b, c, r, size, buf)
			c.Close()
			secs[j] = append(secs[j], time.Since(t0).Seconds())
		}
	}
	for j, p := range paths {
		b.ReportMetric(size/1e6/median(secs[j]), p.name+"-MB/s")
	}
	b.ReportMetric(medianRatio(secs[0], secs[1]), "ratio")
	b.ReportMetric(medianRatio(secs[0], secs[2]), "socks-ratio")
	b.ReportMetric(medianRatio(secs[3], secs[1]), "vs-bare")
}

func median(x []float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	return x[len(x)/2]
}

// medianRatio is the median over iterations of a[i]/b[i].
func medianRatio(a, b []float64) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	return median(r)
}

// bareRelay is the least a TCP relay can do: accept, bound the client's
// send queue as the proxy does, dial, io.Copy both ways.
func bareRelay(b *testing.B, target string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				boundClientSendQueue(c)
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go func() {
					io.Copy(u, c)
					u.(*net.TCPConn).CloseWrite()
				}()
				io.Copy(c, u)
			}()
		}
	}()
	return l.Addr().String()
}

// BenchmarkDownloadHTTP is the same for plain HTTP forwarding, which parses
// and re-frames the response and so copies through user space: direct and
// through the proxy, alternating which goes first.
func BenchmarkDownloadHTTP(b *testing.B) {
	const size = 100 << 20
	e := newTestEnv(b)
	pt := startProxy(b, mustParse(b, []string{"allowed.test"}, nil), Options{Hosts: e.hosts, AllowPrivate: loopback})
	directClient := &http.Client{Transport: &http.Transport{}}
	proxyClient := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pt.url())}}
	get := func(c *http.Client, u string) {
		resp, err := c.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, resp.Body, make([]byte, 256<<10))
		resp.Body.Close()
		if err != nil || n != size {
			b.Fatalf("GET %s: %d bytes, %v", u, n, err)
		}
	}
	urls := []struct {
		c *http.Client
		u string
	}{
		{directClient, fmt.Sprintf("http://127.0.0.1:%d/download?n=%d", e.httpPort, size)},
		{proxyClient, fmt.Sprintf("http://allowed.test:%d/download?n=%d", e.httpPort, size)},
	}
	secs := make([][]float64, len(urls))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range urls {
			j := (i + k) % len(urls)
			t0 := time.Now()
			get(urls[j].c, urls[j].u)
			secs[j] = append(secs[j], time.Since(t0).Seconds())
		}
	}
	b.ReportMetric(size/1e6/median(secs[0]), "direct-MB/s")
	b.ReportMetric(size/1e6/median(secs[1]), "proxy-MB/s")
	b.ReportMetric(medianRatio(secs[0], secs[1]), "ratio")
}
