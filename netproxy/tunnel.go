package netproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// tunnel relays between the client and up until both directions have ended
// (each end's EOF is passed on as a half-close), either fails, or the
// session is aborted. For a tunnel to a name it first checks the server
// name of a TLS ClientHello; it returns that Denial, or nil.
func (s *session) tunnel(up net.Conn, h host, ev *Event) error {
	var upN, downN atomic.Int64
	down := make(chan error, 1)
	// Server-first protocols (SMTP, SSH banners) must not wait for the
	// client's first bytes, which the SNI check holds back.
	go func() {
		err := s.relay(s.conn, up, &downN)
		if err == nil {
			closeWrite(s.conn)
		} else {
			s.abort(s.abortCodeOr(CodeRelay))
		}
		down <- err
	}()
	err := s.clientToServer(up, h, &upN)
	// A client that closes with bytes unread (a TLS 1.3 client leaves the
	// server's session tickets unread) resets its end: that ends the
	// tunnel as a close does, it does not break the exchange.
	clientReset := errors.Is(err, syscall.ECONNRESET)
	if clientReset {
		err = nil
	}
	if err == nil {
		closeWrite(up)
	} else {
		s.abort(s.abortCodeOr(CodeRelay))
	}
	derr := <-down
	if clientReset && (errors.Is(derr, syscall.ECONNRESET) || errors.Is(derr, syscall.EPIPE)) {
		derr = nil // the server's last bytes had nowhere to go
	}
	ev.BytesUp, ev.BytesDown = upN.Load(), downN.Load()
	var d *Denial
	switch {
	case errors.As(err, &d):
		return d
	case s.abortCode() != "" && s.abortCode() != CodeRelay:
		return &failure{code: s.abortCode(), err: errors.New("tunnel ended: " + string(s.abortCode()))}
	case err != nil:
		return &failure{code: CodeRelay, err: fmt.Errorf("tunnel, client to server: %w", err)}
	case derr != nil:
		return &failure{code: CodeRelay, err: fmt.Errorf("tunnel, server to client: %w", derr)}
	}
	return nil
}

func (s *session) abortCodeOr(c Code) Code {
	if a := s.abortCode(); a != "" {
		return a
	}
	return c
}

// clientToServer forwards what the client sends, after the SNI check.
func (s *session) clientToServer(up net.Conn, h host, n *atomic.Int64) error {
	if h.name != "" {
		b, err := s.br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if b[0] == recordTypeHandshake {
			raw, hello, err := readClientHello(s.br)
			if err != nil {
				return &Denial{Code: CodeBadRequest, Host: h.name, Detail: "the tunnel starts like TLS but: " + err.Error()}
			}
			if hello.ech {
				return &Denial{Code: CodeEncryptedHello, Host: h.name}
			}
			if hello.serverName != "" {
				sni, err := parseHost(hello.serverName)
				if err != nil || sni.name != h.name {
					return &Denial{Code: CodeSNIMismatch, Host: h.name, Detail: fmt.Sprintf("the client asked the server for %q", hello.serverName)}
				}
			}
			if _, err := up.Write(raw); err != nil {
				return err
			}
			n.Add(int64(len(raw)))
		}
	}
	// Then what the header reader holds, then splice from the socket.
	if k := s.br.Buffered(); k > 0 {
		b, _ := s.br.Peek(k)
		if _, err := up.Write(b); err != nil {
			return err
		}
		s.br.Discard(k)
		n.Add(int64(k))
	}
	return s.relay(up, s.conn, n)
}

// relay copies src to dst until EOF (nil) or an error. io.Copy between two
// *net.TCPConn splices on Linux, and reports progress only when it
// returns: a read deadline a quarter of the idle timeout away makes it
// return that often, so the watchdog hears of a busy tunnel. A read timeout
// loses nothing: splice moves data to dst before it waits for more.
func (s *session) relay(dst, src net.Conn, n *atomic.Int64) error {
	return s.relayFrom(dst, src, src, n)
}

// relayFrom is relay reading r, which is src or an *io.LimitedReader of
// it (io.Copy splices both).
func (s *session) relayFrom(dst, src net.Conn, r io.Reader, n *atomic.Int64) error {
	period := s.p.opts.IdleTimeout / 4
	for {
		src.SetReadDeadline(time.Now().Add(period))
		k, err := io.Copy(dst, r)
		if k > 0 {
			n.Add(k)
			s.touch()
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded) && s.abortCode() == "":
			continue
		}
		return err
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}
