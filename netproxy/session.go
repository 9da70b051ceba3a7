package netproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// session is one client connection, from accept to close, with the
// upstream connections it opens. Everything it opens is closed by abort,
// which Close, the idle watchdog and the session's own end call.
type session struct {
	p    *Proxy
	conn net.Conn // the client, unwrapped so tunnels can splice
	in   *limitReader
	br   *bufio.Reader // the client's bytes until a tunnel takes over
	bw   *bufio.Writer
	ctx  context.Context
	stop context.CancelFunc

	last atomic.Int64 // time of the last byte moved, UnixNano

	up     *httpUpstream // kept-alive connection for forwarded requests
	linger bool          // a refusal was sent: let it reach the client before closing

	mu      sync.Mutex
	conns   []net.Conn
	aborted Code
	idle    *time.Timer
}

func newSession(p *Proxy, c net.Conn) *session {
	boundClientSendQueue(c)
	s := &session{p: p, conn: c}
	s.ctx, s.stop = context.WithCancel(p.ctx)
	s.in = &limitReader{r: activityReader{s: s, r: c}, n: -1}
	s.br = bufio.NewReader(s.in)
	s.bw = bufio.NewWriter(activityWriter{s: s, w: c})
	s.conns = []net.Conn{c}
	s.touch()
	s.mu.Lock()
	s.idle = time.AfterFunc(p.opts.IdleTimeout, s.checkIdle)
	s.mu.Unlock()
	return s
}

func (s *session) serve() {
	defer func() {
		if s.linger {
			s.lingerClose()
		}
		s.abort("")
	}()
	start := time.Now()
	s.conn.SetDeadline(start.Add(s.p.opts.HandshakeTimeout))
	b, err := s.br.Peek(1)
	if err != nil {
		ev := Event{Time: start}
		if !errors.Is(err, io.EOF) || s.abortCode() != "" {
			ev.finish(s.handshakeErr(err, "waiting for a request"), start)
			s.p.log(ev)
		}
		return
	}
	if b[0] == socksVersion {
		s.serveSOCKS(start)
		return
	}
	s.serveHTTP(start)
}

// handshakeErr classifies an error met while reading a request.
func (s *session) handshakeErr(err error, doing string) error {
	if c := s.abortCode(); c != "" {
		return &failure{code: c, err: errors.New(string(c))}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &Denial{Code: CodeHandshakeTimeout, Detail: "no complete request within " + s.p.opts.HandshakeTimeout.String()}
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &Denial{Code: CodeBadRequest, Detail: doing + ": " + err.Error()}
}

func (s *session) touch() { s.last.Store(time.Now().UnixNano()) }

func (s *session) checkIdle() {
	idle := s.p.opts.IdleTimeout
	quiet := time.Since(time.Unix(0, s.last.Load()))
	if quiet >= idle {
		s.abort(CodeIdleTimeout)
		return
	}
	s.mu.Lock()
	if s.aborted == "" {
		s.idle.Reset(idle - quiet)
	}
	s.mu.Unlock()
}

// track registers an upstream connection so that abort closes it; it
// reports false (and closes c) if the session is already over.
func (s *session) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted != "" {
		c.Close()
		return false
	}
	s.conns = append(s.conns, c)
	return true
}

// untrack forgets an upstream connection the session closes itself.
func (s *session) untrack(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.conns {
		if x == c {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			return
		}
	}
}

// sessionDone marks a session that ended normally rather than being cut
// short.
const sessionDone Code = "done"

// abort closes every connection of the session; code says why (the first
// reason wins; "" is the session's normal end).
func (s *session) abort(code Code) {
	s.mu.Lock()
	if s.aborted != "" {
		s.mu.Unlock()
		return
	}
	if code == "" {
		code = sessionDone
	}
	s.aborted = code
	conns := s.conns
	s.conns = nil
	s.idle.Stop()
	s.mu.Unlock()
	s.stop()
	for _, c := range conns {
		c.Close()
	}
}

// abortCode is why the session was cut short, or "".
func (s *session) abortCode() Code {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted == sessionDone {
		return ""
	}
	return s.aborted
}

// lingerClose lets a refusal reach a client that is still sending (a
// request body, say): closing with unread input would reset the connection
// and lose the response.
func (s *session) lingerClose() {
	if cw, ok := s.conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	s.conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	io.CopyN(io.Discard, s.br, 256<<10)
}

type activityReader struct {
	s *session
	r io.Reader
}

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.touch()
	}
	return n, err
}

type activityWriter struct {
	s *session
	w io.Writer
}

func (a activityWriter) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	if n > 0 {
		a.s.touch()
	}
	return n, err
}

// limitReader bounds how much a header may take and can record what it
// reads (to see the Host header net/http drops).
type limitReader struct {
	r      io.Reader
	n      int64 // bytes left; -1: no limit
	hit    bool
	record bool
	rec    []byte
}

var errTooLarge = errors.New("header too large")

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n == 0 {
		l.hit = true
		return 0, errTooLarge
	}
	if l.n > 0 && int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	if l.n > 0 {
		l.n -= int64(n)
	}
	if l.record {
		l.rec = append(l.rec, p[:n]...)
	}
	return n, err
}

// limit starts a bounded read of n bytes; unlimit ends it.
func (l *limitReader) limit(n int64, record bool) {
	l.n, l.hit, l.record, l.rec = n, false, record, l.rec[:0]
}

func (l *limitReader) unlimit() { l.n, l.record = -1, false }
