package netproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// serveHTTP reads requests until the client closes, a CONNECT turns the
// connection into a tunnel, or an exchange cannot be followed by another.
func (s *session) serveHTTP(start time.Time) {
	for {
		req, hostHeader, err := s.readRequest()
		if err != nil {
			ev := Event{Time: start, Protocol: ProtoHTTP}
			ev.finish(err, start)
			if ev.Code.refusal() {
				s.refuseHTTP(err)
			}
			s.p.log(ev)
			return
		}
		if req.Method == http.MethodConnect {
			ev := Event{Time: start, Protocol: ProtoConnect}
			err := s.connect(req, &ev)
			ev.finish(err, start)
			s.p.log(ev)
			return
		}
		if !s.forward(req, hostHeader, start) {
			return
		}
		// Keep-alive: the idle watchdog bounds the wait for the next
		// request, the handshake timeout its header.
		s.conn.SetDeadline(time.Time{})
		if _, err := s.br.Peek(1); err != nil {
			return
		}
		start = time.Now()
		s.conn.SetDeadline(start.Add(s.p.opts.HandshakeTimeout))
	}
}

// readRequest reads one request header, bounded by MaxHeaderBytes, and
// returns the Host header too, which http.ReadRequest drops.
func (s *session) readRequest() (*http.Request, string, error) {
	pre, _ := s.br.Peek(s.br.Buffered())
	pre = append([]byte(nil), pre...)
	// Like net/http, allow a bufio buffer's worth of read-ahead.
	s.in.limit(int64(s.p.opts.MaxHeaderBytes)+4096, true)
	req, err := http.ReadRequest(s.br)
	hit, rec := s.in.hit, s.in.rec
	s.in.unlimit()
	if err != nil {
		if hit {
			return nil, "", &Denial{Code: CodeHeaderTooLarge, Detail: fmt.Sprintf("the request header is over %d bytes", s.p.opts.MaxHeaderBytes)}
		}
		return nil, "", s.handshakeErr(err, "HTTP request")
	}
	s.conn.SetDeadline(time.Time{})
	if req.Method == http.MethodConnect {
		return req, "", nil
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(pre, rec...))))
	if _, err := tp.ReadLine(); err != nil {
		return nil, "", &Denial{Code: CodeBadRequest, Detail: "HTTP request: " + err.Error()}
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, "", &Denial{Code: CodeBadRequest, Detail: "HTTP request: " + err.Error()}
	}
	return req, hdr.Get("Host"), nil
}

// parseTarget reads an authority from a request; def is the port when none
// is written (0: required).
func parseTarget(s string, def uint16) (host, uint16, error) {
	hs, ps, err := splitAuthority(s)
	if err != nil {
		return host{}, 0, &Denial{Code: CodeBadRequest, Host: s, Detail: err.Error()}
	}
	port := def
	if ps != "" {
		if port, err = parsePort(ps); err != nil {
			return host{}, 0, &Denial{Code: CodeBadRequest, Host: s, Detail: err.Error()}
		}
	} else if def == 0 {
		return host{}, 0, &Denial{Code: CodeBadRequest, Host: s, Detail: "missing port"}
	}
	h, err := parseHost(hs)
	if err != nil {
		return host{}, 0, &Denial{Code: CodeInvalidHost, Host: hs, Port: port, Detail: err.Error()}
	}
	return h, port, nil
}

// connect serves a CONNECT request: check, resolve, connect, 200, tunnel.
func (s *session) connect(req *http.Request, ev *Event) error {
	if strings.HasPrefix(req.RequestURI, "/") {
		err := &Denial{Code: CodeBadRequest, Host: req.RequestURI, Detail: "CONNECT needs host:port"}
		s.refuseHTTP(err)
		return err
	}
	h, port, err := parseTarget(req.RequestURI, 0)
	if err != nil {
		s.refuseHTTP(err)
		return err
	}
	ev.Host, ev.Port = h.String(), port
	if d := s.p.rules.check(h, port); d != nil {
		s.refuseHTTP(d)
		return d
	}
	up, addr, err := s.dialUpstream(h, port)
	if err != nil {
		s.refuseHTTP(err)
		return err
	}
	ev.Addr = addr
	s.bw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
	if err := s.bw.Flush(); err != nil {
		return &failure{code: CodeRelay, err: fmt.Errorf("CONNECT reply: %w", err)}
	}
	s.conn.SetDeadline(time.Time{})
	return s.tunnel(up, h, ev)
}

// refuseHTTP answers err with a status, X-Forgebox-Reason (what was
// refused and how to allow it) and X-Forgebox-Code (stable, for programs),
// then closes the connection.
func (s *session) refuseHTTP(err error) {
	if s.abortCode() != "" {
		return
	}
	status := httpStatus(err)
	reason := headerSafe(s.p.reason(err))
	// The handshake deadline may have passed: that is what is refused.
	s.conn.SetWriteDeadline(time.Now().Add(s.p.opts.HandshakeTimeout))
	fmt.Fprintf(s.bw, "HTTP/1.1 %d %s\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n"+
		"X-Forgebox-Reason: %s\r\n"+
		"X-Forgebox-Code: %s\r\n"+
		"Content-Length: %d\r\n"+
		"Connection: close\r\n\r\n%s\n",
		status, http.StatusText(status), reason, codeOf(err), len(reason)+1, reason)
	s.bw.Flush()
	s.linger = true
}

func httpStatus(err error) int {
	switch codeOf(err) {
	case CodeBadRequest, CodeInvalidHost:
		return http.StatusBadRequest
	case CodeHandshakeTimeout:
		return http.StatusRequestTimeout
	case CodeHeaderTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case CodeUnsupported:
		return http.StatusNotImplemented
	case CodeTooManyConns:
		return http.StatusServiceUnavailable
	case CodeResolveFailed, CodeConnectFailed, CodeRelay:
		if isTimeout(err) {
			return http.StatusGatewayTimeout
		}
		return http.StatusBadGateway
	}
	return http.StatusForbidden
}
