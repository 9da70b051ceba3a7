package session

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultOutputLimit bounds the text one Exec or Read returns. A quarter of
// the limit goes to the head of the output and the rest to its tail: a
// compiler's first error and a test run's summary both survive.
const DefaultOutputLimit = 64 << 10

// maxStringSequence ends an OSC/DCS sequence that never terminates, so one
// stray ESC ] cannot swallow everything a program prints afterwards.
const maxStringSequence = 4096

type cleanState int

const (
	cleanText      cleanState = iota
	cleanEsc                  // after ESC
	cleanEscInter             // ESC followed by intermediate bytes, waiting for the final byte
	cleanCSI                  // inside ESC [ ... final
	cleanString               // inside OSC, DCS, APC, PM or SOS
	cleanStringEsc            // ESC inside a string sequence: maybe ST (ESC \)
)

// sanitizer turns terminal output into plain text an agent can read: escape
// sequences (colours, cursor motion, mode switches) and control bytes other
// than tab, newline and carriage return are dropped, and CR LF (which the
// terminal's ONLCR produces for every newline) becomes LF. A CR within a
// line, as a progress bar prints it, is kept. State carries across calls because sequences
// are split across reads.
type sanitizer struct {
	state     cleanState
	strLen    int
	pendingCR bool
	midLine   bool
}

func (c *sanitizer) clean(dst, p []byte) []byte {
	for _, b := range p {
		dst = c.step(dst, b)
	}
	return dst
}

func (c *sanitizer) step(dst []byte, b byte) []byte {
	switch c.state {
	case cleanEsc:
		return c.afterEsc(dst, b)
	case cleanEscInter:
		switch {
		case b < 0x20:
			c.state = cleanText
			return c.text(dst, b)
		case b > 0x2f:
			c.state = cleanText
		}
		return dst
	case cleanCSI:
		switch {
		case b >= 0x40 && b <= 0x7e:
			c.state = cleanText
		case b < 0x20:
			// A control byte inside a CSI aborts it, as in a real terminal.
			c.state = cleanText
			return c.text(dst, b)
		}
		return dst
	case cleanString:
		c.strLen++
		switch {
		case b == 0x07:
			c.state = cleanText
		case b == 0x1b:
			c.state = cleanStringEsc
		case b == '\n':
			// Real sequences hold no newline; binary output that happened
			// to contain ESC ] must not swallow the lines after it.
			c.state = cleanText
			return c.text(dst, b)
		case c.strLen > maxStringSequence:
			c.state = cleanText
		}
		return dst
	case cleanStringEsc:
		if b == '\\' {
			c.state = cleanText
			return dst
		}
		return c.afterEsc(dst, b)
	}
	return c.text(dst, b)
}

func (c *sanitizer) afterEsc(dst []byte, b byte) []byte {
	switch {
	case b < 0x20 && b != 0x1b:
		// A control byte interrupts the sequence and still acts.
		c.state = cleanText
		return c.text(dst, b)
	case b == '[':
		c.state = cleanCSI
	case b == ']' || b == 'P' || b == '_' || b == '^' || b == 'X':
		c.state, c.strLen = cleanString, 0
	case b == 0x1b:
		c.state = cleanEsc
	case b >= 0x20 && b <= 0x2f:
		c.state = cleanEscInter
	default:
		c.state = cleanText
	}
	return dst
}

func (c *sanitizer) text(dst []byte, b byte) []byte {
	switch {
	case b == '\r':
		// At the start of a line a CR moves nothing; readline sends one
		// after every line it reads.
		c.pendingCR = c.midLine
		return dst
	case b == '\n':
		c.pendingCR, c.midLine = false, false
		return append(dst, '\n')
	case b == 0x1b:
		c.state = cleanEsc
		return dst
	case (b < 0x20 && b != '\t') || b == 0x7f:
		return dst
	}
	if c.pendingCR {
		c.pendingCR = false
		dst = append(dst, '\r')
	}
	c.midLine = true
	return append(dst, b)
}

// boundedBuffer keeps the first head bytes and the last tail bytes written
// and counts the rest, so a command printing gigabytes costs constant memory.
type boundedBuffer struct {
	headMax, tailMax int
	head, tail       []byte
	total            int64
}

func newBoundedBuffer(limit int) boundedBuffer {
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	head := limit / 4
	return boundedBuffer{headMax: head, tailMax: limit - head}
}

func (b *boundedBuffer) write(p []byte) {
	b.total += int64(len(p))
	if room := b.headMax - len(b.head); room > 0 {
		n := min(room, len(p))
		b.head = append(b.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	b.tail = append(b.tail, p...)
	// Slide only when twice over the limit: amortised O(1) per byte.
	if len(b.tail) > 2*b.tailMax {
		n := copy(b.tail, b.tail[len(b.tail)-b.tailMax:])
		b.tail = b.tail[:n]
	}
}

func (b *boundedBuffer) empty() bool { return b.total == 0 }

// take returns what was kept as valid UTF-8 (invalid bytes become U+FFFD),
// with an explicit note where bytes were left out, and empties the buffer.
func (b *boundedBuffer) take() (text string, truncated bool) {
	defer b.reset()
	kept := int64(len(b.head) + len(b.tail))
	if kept == b.total && len(b.tail) <= b.tailMax {
		return strings.ToValidUTF8(string(b.head)+string(b.tail), "\uFFFD"), false
	}
	head := b.head[:runeStartBefore(b.head, len(b.head))]
	tail := b.tail[len(b.tail)-min(len(b.tail), b.tailMax):]
	tail = tail[leadingContinuation(tail):]
	omitted := b.total - int64(len(head)+len(tail))
	return strings.ToValidUTF8(string(head), "\uFFFD") +
		fmt.Sprintf("\n[... %d bytes omitted ...]\n", omitted) +
		strings.ToValidUTF8(string(tail), "\uFFFD"), true
}

func (b *boundedBuffer) reset() {
	b.head, b.tail, b.total = b.head[:0], b.tail[:0], 0
}

// runeStartBefore returns n, or less if p[:n] ends inside a UTF-8 sequence,
// so a cut never turns a valid character into U+FFFD.
func runeStartBefore(p []byte, n int) int {
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:n]) {
				return i
			}
			return n
		}
	}
	return n
}

func leadingContinuation(p []byte) int {
	i := 0
	for i < len(p) && i < utf8.UTFMax && !utf8.RuneStart(p[i]) {
		i++
	}
	return i
}

// incompleteRuneSuffix is how many bytes at the end of p start a UTF-8
// sequence that the next read will complete.
func incompleteRuneSuffix(p []byte) int {
	return len(p) - runeStartBefore(p, len(p))
}

// textSink is one destination of terminal output: cleaned, then bounded.
type textSink struct {
	clean   sanitizer
	buf     boundedBuffer
	scratch []byte
}

func newTextSink(limit int) *textSink {
	return &textSink{buf: newBoundedBuffer(limit)}
}

func (t *textSink) write(p []byte) {
	t.scratch = t.clean.clean(t.scratch[:0], p)
	t.buf.write(t.scratch)
}

func (t *textSink) take() (string, bool) { return t.buf.take() }
