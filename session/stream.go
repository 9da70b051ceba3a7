package session

import (
	"slices"
	"time"
)

// readLoop copies everything the terminal prints into the emulator and the
// output buffers, so nothing is lost between calls.
func (s *Session) readLoop() {
	defer close(s.readerDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.proc.read(buf)
		if n > 0 {
			s.consume(buf[:n])
		}
		if err != nil {
			return // EIO once no process holds the slave; ErrClosed after closeMaster
		}
	}
}

func (s *Session) consume(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scanner.scan(p, (*router)(s))
	s.unread = true
	s.lastOutput = time.Now()
	close(s.changed)
	s.changed = make(chan struct{})
}

// feedTerminal holds back a UTF-8 sequence split across reads: vt10x drops
// the bytes of an incomplete character instead of waiting for the rest.
// Called with s.mu held, in stream order.
func (s *Session) feedTerminal(p []byte) {
	data := p
	if len(s.utf8Carry) > 0 {
		data = append(s.utf8Carry, p...)
	}
	cut := len(data) - incompleteRuneSuffix(data)
	s.term.Write(data[:cut])
	s.utf8Carry = append(s.utf8Carry[:0:0], data[cut:]...)
}

// router receives the marker scanner's events with s.mu held.
type router Session

func (r *router) text(p []byte) {
	s := (*Session)(r)
	e := s.exec
	if e != nil && e.phase == awaitingStart {
		// The echo of the line Exec typed: bookkeeping, kept off the
		// screen and out of the output.
		if e.keepPreamble {
			e.output.write(p)
		}
		return
	}
	s.feedTerminal(p)
	if e != nil {
		e.output.write(p)
		return
	}
	s.out.write(p)
}

func (r *router) marker(m marker) {
	s := (*Session)(r)
	e := s.exec
	if e == nil {
		if m.kind == markPrompt {
			s.atPrompt = true
		}
		return
	}
	switch {
	case m.kind == markStart && m.id == e.nonce:
		e.phase = capturing
	case m.kind == markPrompt && (m.id == e.nonce || e.interrupted):
		// After Ctrl-C any prompt will do: the interrupt may have hit
		// readline before it ran our line, and then the id is the token.
		e.finish(m.status)
		s.exec = nil
		s.atPrompt = true
	}
}

func (s *Session) knownID(id string) bool {
	return id == s.token || slices.Contains(s.nonces, id)
}
