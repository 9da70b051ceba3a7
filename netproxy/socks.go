package netproxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"syscall"
	"time"
)

// SOCKS5 (RFC 1928) constants.
const (
	socksVersion     = 5
	socksNoAuth      = 0
	socksNoMethod    = 0xff
	socksCmdConnect  = 1
	socksAtypIPv4    = 1
	socksAtypDomain  = 3
	socksAtypIPv6    = 4
	socksSucceeded   = 0
	socksFailure     = 1 // general SOCKS server failure
	socksNotAllowed  = 2 // connection not allowed by ruleset
	socksNetUnreach  = 3
	socksHostUnreach = 4
	socksRefused     = 5
	socksCmdUnsupp   = 7
	socksAtypUnsupp  = 8
)

// serveSOCKS negotiates "no authentication", reads one CONNECT request and
// tunnels it. Replies carry the bound address 0.0.0.0:0: the client has no
// use for the proxy's outside address, and it would tell the sandbox about
// the host's network.
func (s *session) serveSOCKS(start time.Time) {
	ev := Event{Time: start, Protocol: ProtoSOCKS5}
	err := s.socks(&ev)
	ev.finish(err, start)
	s.p.log(ev)
}

func (s *session) socks(ev *Event) error {
	if err := s.socksMethod(); err != nil {
		return err
	}
	cmd, hostname, port, err := s.socksRequest()
	if err != nil {
		return err
	}
	ev.Host, ev.Port = hostname, port
	// The request is in; dialing has its own timeout and the idle
	// watchdog covers the rest.
	s.conn.SetDeadline(time.Time{})
	if cmd != socksCmdConnect {
		s.socksReply(socksCmdUnsupp)
		return &Denial{Code: CodeUnsupported, Host: hostname, Port: port, Detail: fmt.Sprintf("SOCKS5 command %d (only CONNECT is supported)", cmd)}
	}
	h, err := parseHost(hostname)
	if err != nil {
		s.socksReply(socksNotAllowed)
		return &Denial{Code: CodeInvalidHost, Host: hostname, Port: port, Detail: err.Error()}
	}
	ev.Host = h.String()
	if port == 0 {
		s.socksReply(socksNotAllowed)
		return &Denial{Code: CodeBadRequest, Host: h.String(), Detail: "port 0"}
	}
	if d := s.p.rules.check(h, port); d != nil {
		s.socksReply(socksNotAllowed)
		return d
	}
	up, addr, err := s.dialUpstream(h, port)
	if err != nil {
		s.socksReply(socksReplyFor(err))
		return err
	}
	ev.Addr = addr
	if err := s.socksReply(socksSucceeded); err != nil {
		return &failure{code: CodeRelay, err: fmt.Errorf("SOCKS5 reply: %w", err)}
	}
	return s.tunnel(up, h, ev)
}

// socksMethod reads the client's greeting and picks "no authentication",
// the only method offered.
func (s *session) socksMethod() error {
	var hdr [2]byte // VER NMETHODS
	if _, err := io.ReadFull(s.br, hdr[:]); err != nil {
		return s.handshakeErr(err, "SOCKS5 greeting")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(s.br, methods); err != nil {
		return s.handshakeErr(err, "SOCKS5 greeting")
	}
	for _, m := range methods {
		if m == socksNoAuth {
			if _, err := s.conn.Write([]byte{socksVersion, socksNoAuth}); err != nil {
				return s.handshakeErr(err, "SOCKS5 greeting")
			}
			return nil
		}
	}
	s.conn.Write([]byte{socksVersion, socksNoMethod})
	return &Denial{Code: CodeUnsupported, Detail: "the SOCKS5 client offers no method forgebox accepts (only no authentication)"}
}

// socksRequest reads VER CMD RSV ATYP DST.ADDR DST.PORT; an IP address
// comes back in its text form.
func (s *session) socksRequest() (cmd byte, hostname string, port uint16, err error) {
	var req [4]byte
	if _, err := io.ReadFull(s.br, req[:]); err != nil {
		return 0, "", 0, s.handshakeErr(err, "SOCKS5 request")
	}
	if req[0] != socksVersion {
		s.socksReply(socksFailure)
		return 0, "", 0, &Denial{Code: CodeBadRequest, Detail: fmt.Sprintf("SOCKS5 request with version %d", req[0])}
	}
	var addr []byte
	switch req[3] {
	case socksAtypIPv4:
		addr = make([]byte, 4)
	case socksAtypIPv6:
		addr = make([]byte, 16)
	case socksAtypDomain:
		var n [1]byte
		if _, err := io.ReadFull(s.br, n[:]); err != nil {
			return 0, "", 0, s.handshakeErr(err, "SOCKS5 request")
		}
		addr = make([]byte, n[0])
	default:
		s.socksReply(socksAtypUnsupp)
		return 0, "", 0, &Denial{Code: CodeUnsupported, Detail: fmt.Sprintf("SOCKS5 address type %d", req[3])}
	}
	var pb [2]byte
	if _, err := io.ReadFull(s.br, addr); err != nil {
		return 0, "", 0, s.handshakeErr(err, "SOCKS5 request")
	}
	if _, err := io.ReadFull(s.br, pb[:]); err != nil {
		return 0, "", 0, s.handshakeErr(err, "SOCKS5 request")
	}
	hostname = string(addr)
	if req[3] != socksAtypDomain {
		a, _ := netip.AddrFromSlice(addr)
		hostname = a.Unmap().String()
	}
	return req[1], hostname, binary.BigEndian.Uint16(pb[:]), nil
}

func (s *session) socksReply(code byte) error {
	_, err := s.conn.Write([]byte{socksVersion, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

// socksReplyFor maps a dialUpstream error to a SOCKS5 reply code.
func socksReplyFor(err error) byte {
	switch codeOf(err) {
	case CodeRefusedAddress:
		return socksNotAllowed
	case CodeResolveFailed:
		return socksHostUnreach
	case CodeConnectFailed:
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return socksRefused
		case errors.Is(err, syscall.ENETUNREACH):
			return socksNetUnreach
		case errors.Is(err, syscall.EHOSTUNREACH):
			return socksHostUnreach
		case isTimeout(err):
			return socksHostUnreach
		}
	}
	return socksFailure
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
