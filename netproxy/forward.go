package netproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// httpUpstream is a connection to an origin server that the next request of
// the same client to the same host and port reuses.
type httpUpstream struct {
	key  string
	addr netip.Addr
	m    *meter
	in   *limitReader
	br   *bufio.Reader
	bw   *bufio.Writer
}

// meter counts an upstream connection's bytes and keeps the session's idle
// watchdog informed.
type meter struct {
	net.Conn
	s        *session
	up, down atomic.Int64
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.Conn.Read(p)
	if n > 0 {
		m.down.Add(int64(n))
		m.s.touch()
	}
	return n, err
}

func (m *meter) Write(p []byte) (int, error) {
	n, err := m.Conn.Write(p)
	if n > 0 {
		m.up.Add(int64(n))
		m.s.touch()
	}
	return n, err
}

// maxResponseHeader bounds what a server may send as a response header.
const maxResponseHeader = 1 << 20

// forward relays one absolute-form request (GET http://host/path) and
// reports whether the client connection may carry another.
func (s *session) forward(req *http.Request, hostHeader string, start time.Time) bool {
	ev := Event{Time: start, Protocol: ProtoHTTP}
	keep, err := s.exchange(req, hostHeader, &ev)
	ev.finish(err, start)
	s.p.log(ev)
	return keep && err == nil
}

func (s *session) exchange(req *http.Request, hostHeader string, ev *Event) (bool, error) {
	if req.URL.Scheme == "" || req.URL.Host == "" {
		d := &Denial{Code: CodeBadRequest, Host: req.RequestURI, Detail: "this is a proxy: send the absolute URL (GET http://host/path) or CONNECT host:port"}
		s.refuseHTTP(d)
		return false, d
	}
	if !strings.EqualFold(req.URL.Scheme, "http") {
		d := &Denial{Code: CodeUnsupported, Host: req.URL.Host, Detail: req.URL.Scheme + ":// requests are not forwarded: use CONNECT"}
		s.refuseHTTP(d)
		return false, d
	}
	h, port, err := parseTarget(req.URL.Host, 80)
	if err != nil {
		s.refuseHTTP(err)
		return false, err
	}
	ev.Host, ev.Port = h.String(), port
	if hostHeader != "" {
		hh, hp, err := parseTarget(hostHeader, 80)
		if err != nil || hh != h || hp != port {
			d := &Denial{Code: CodeBadRequest, Host: h.String(), Port: port, Detail: fmt.Sprintf("the Host header %q does not match the URL's host %q", hostHeader, req.URL.Host)}
			s.refuseHTTP(d)
			return false, d
		}
	}
	if d := s.p.rules.check(h, port); d != nil {
		s.refuseHTTP(d)
		return false, d
	}
	for attempt := 0; ; attempt++ {
		up, reused, err := s.upstreamFor(h, port)
		if err != nil {
			s.refuseHTTP(err)
			return false, err
		}
		ev.Addr = up.addr
		up0, down0 := up.m.up.Load(), up.m.down.Load()
		keep, answered, err := s.roundTrip(req, up, h, port)
		ev.BytesUp += up.m.up.Load() - up0
		ev.BytesDown += up.m.down.Load() - down0
		if err != nil && reused && !answered && attempt == 0 && ev.BytesDown == 0 && req.Body == http.NoBody {
			continue // the server had closed the kept-alive connection
		}
		if err != nil && !answered {
			s.refuseHTTP(err)
		}
		return keep, err
	}
}

// upstreamFor returns the kept-alive connection to h:port or a new one.
func (s *session) upstreamFor(h host, port uint16) (up *httpUpstream, reused bool, err error) {
	key := joinHostPort(h.String(), port)
	if s.up != nil && s.up.key == key {
		return s.up, true, nil
	}
	s.dropUpstream()
	c, addr, err := s.dialUpstream(h, port)
	if err != nil {
		return nil, false, err
	}
	m := &meter{Conn: c, s: s}
	in := &limitReader{r: m, n: -1}
	s.up = &httpUpstream{key: key, addr: addr, m: m, in: in, br: bufio.NewReader(in), bw: bufio.NewWriter(m)}
	return s.up, false, nil
}

func (s *session) dropUpstream() {
	if s.up != nil {
		s.untrack(s.up.m.Conn)
		s.up.m.Close()
		s.up = nil
	}
}

// roundTrip sends req and relays the response. The request is written by a
// second goroutine, so that a server may answer (100 Continue, or an early
// error) before it has read the body. answered says whether the client has
// a final response header; after that an error can only close the
// connection.
func (s *session) roundTrip(req *http.Request, up *httpUpstream, h host, port uint16) (keep, answered bool, err error) {
	sent := make(chan error, 1)
	go func() { sent <- writeRequest(up.bw, req, h, port) }()
	resp, err := s.readResponse(up, req)
	if err != nil {
		s.dropUpstream()
		s.interruptBody(sent)
		return false, false, &failure{code: s.abortCodeOr(CodeRelay), err: fmt.Errorf("response from %s: %w", joinHostPort(h.String(), port), err)}
	}
	keep, err = s.writeResponse(req, resp, up, !req.Close)
	if err != nil {
		s.dropUpstream()
		s.interruptBody(sent)
		return false, true, &failure{code: s.abortCodeOr(CodeRelay), err: fmt.Errorf("relay response from %s: %w", joinHostPort(h.String(), port), err)}
	}
	// Neither connection can carry another exchange until the request has
	// gone out whole; a server that answered without reading it all gets a
	// moment, then both connections are closed.
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	select {
	case werr := <-sent:
		if werr != nil {
			s.dropUpstream()
			return false, true, nil
		}
	case <-timer.C:
		s.dropUpstream()
		s.interruptBody(sent)
		return false, true, nil
	}
	if resp.Close {
		s.dropUpstream()
	}
	return keep, true, nil
}

// interruptBody stops a request writer that may be blocked reading the
// client's body, and waits for it.
func (s *session) interruptBody(sent <-chan error) {
	s.conn.SetReadDeadline(time.Now())
	<-sent
}

func (s *session) readResponse(up *httpUpstream, req *http.Request) (*http.Response, error) {
	for informational := 0; ; informational++ {
		up.in.limit(maxResponseHeader, false)
		resp, err := http.ReadResponse(up.br, req)
		hit := up.in.hit
		up.in.unlimit()
		if err != nil {
			if hit {
				return nil, errors.New("response header over 1 MiB")
			}
			return nil, err
		}
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols:
			return nil, errors.New("unexpected 101 Switching Protocols (upgrades are not forwarded)")
		case resp.StatusCode >= 200:
			return resp, nil
		case informational == 10:
			return nil, errors.New("more than 10 informational (1xx) responses")
		case req.ProtoAtLeast(1, 1):
			// 100 Continue and the like reach the client as they come.
			s.writeHead(resp, "")
			if err := s.bw.Flush(); err != nil {
				return nil, err
			}
		}
	}
}

// writeResponse relays resp to the client, framing the body anew (the
// client and server may speak different HTTP versions); it reports whether
// the client connection can carry another request.
func (s *session) writeResponse(req *http.Request, resp *http.Response, up *httpUpstream, keep bool) (bool, error) {
	noBody := req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	var framing string
	chunked := false
	switch {
	case noBody:
		if req.Method == http.MethodHead && resp.ContentLength >= 0 {
			framing = "Content-Length: " + strconv.FormatInt(resp.ContentLength, 10) + "\r\n"
		}
	case resp.ContentLength >= 0:
		framing = "Content-Length: " + strconv.FormatInt(resp.ContentLength, 10) + "\r\n"
	case req.ProtoAtLeast(1, 1):
		framing, chunked = "Transfer-Encoding: chunked\r\n", true
	default:
		keep = false // the body ends when the connection does
	}
	switch {
	case !keep:
		framing += "Connection: close\r\n"
	case !req.ProtoAtLeast(1, 1):
		framing += "Connection: keep-alive\r\n"
	}
	s.writeHead(resp, framing)
	if err := s.bw.Flush(); err != nil {
		return false, err
	}
	if noBody {
		return keep, nil
	}
	if resp.ContentLength >= 0 {
		// resp.Body is bypassed and must not be closed: its Close would
		// read the body again, from the upstream's next bytes.
		if err := s.spliceBody(up, resp.ContentLength); err != nil {
			return false, err
		}
		return keep, nil
	}
	if err := copyBody(s.bw, resp.Body, chunked); err != nil {
		return false, err
	}
	resp.Body.Close()
	return keep, nil
}

// spliceBody relays a body of n bytes, framed by Content-Length on both
// sides, from up to the client unchanged: first what up's header reader
// holds, then the rest as a tunnel does, by splice(2) on Linux, which moves
// it without copying it through the proxy.
func (s *session) spliceBody(up *httpUpstream, n int64) error {
	if k := min(int64(up.br.Buffered()), n); k > 0 {
		b, _ := up.br.Peek(int(k))
		if _, err := s.conn.Write(b); err != nil {
			return err
		}
		up.br.Discard(int(k))
		n -= k
	}
	rest := &io.LimitedReader{R: up.m.Conn, N: n}
	err := s.relayFrom(s.conn, up.m.Conn, rest, &up.m.down)
	up.m.Conn.SetReadDeadline(time.Time{})
	if err == nil && rest.N > 0 {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (s *session) writeHead(resp *http.Response, framing string) {
	status := resp.Status
	if status == "" {
		status = strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	s.bw.WriteString("HTTP/1.1 " + headerSafe(status) + "\r\n")
	cleanHeader(resp.Header).Write(s.bw)
	s.bw.WriteString(framing + "\r\n")
}

// writeRequest sends req in origin form with a Host header naming what the
// rules checked, then its body, framed anew.
func writeRequest(w *bufio.Writer, req *http.Request, h host, port uint16) error {
	hostValue := h.String()
	if h.ip.Is6() {
		hostValue = "[" + hostValue + "]"
	}
	if port != 80 {
		hostValue += ":" + strconv.Itoa(int(port))
	}
	w.WriteString(req.Method + " " + req.URL.RequestURI() + " HTTP/1.1\r\nHost: " + hostValue + "\r\n")
	hadLength := len(req.Header["Content-Length"]) > 0
	cleanHeader(req.Header).Write(w)
	chunked := false
	switch {
	case req.ContentLength > 0:
		w.WriteString("Content-Length: " + strconv.FormatInt(req.ContentLength, 10) + "\r\n")
	case req.ContentLength < 0:
		w.WriteString("Transfer-Encoding: chunked\r\n")
		chunked = true
	case hadLength:
		w.WriteString("Content-Length: 0\r\n")
	}
	w.WriteString("\r\n")
	if err := w.Flush(); err != nil {
		return err
	}
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	return copyBody(w, req.Body, chunked)
}

// copyBody streams body to w, flushing after every read so that nothing
// waits in a buffer (server-sent events, slow uploads).
func copyBody(w *bufio.Writer, body io.Reader, chunked bool) error {
	var dst io.Writer = w
	var cw io.WriteCloser
	if chunked {
		cw = httputil.NewChunkedWriter(w)
		dst = cw
	}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if chunked {
		cw.Close() // the last chunk; trailers are not forwarded
		w.WriteString("\r\n")
	}
	return w.Flush()
}

// cleanHeader drops hop-by-hop fields (RFC 9110 section 7.6.1), those the
// Connection field names, proxy credentials, and the framing fields the
// proxy writes itself.
func cleanHeader(in http.Header) http.Header {
	out := in.Clone()
	for _, v := range in["Connection"] {
		for _, f := range strings.Split(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				out.Del(f)
			}
		}
	}
	for _, f := range []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length", "Host"} {
		out.Del(f)
	}
	return out
}
