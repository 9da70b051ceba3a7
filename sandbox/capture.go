package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// headTail keeps the first and last bytes written to it, within a fixed
// budget, so a command printing gigabytes costs forgebox no more memory than
// the budget. It is not safe for concurrent use.
type headTail struct {
	head  []byte
	tail  []byte // ring of cap tailCap, allocated on first use
	cap   int    // tail capacity
	next  int    // ring write position
	full  bool   // the ring has wrapped: it holds exactly cap bytes
	total int64
}

// newHeadTail keeps half of limit from the start and half from the end.
func newHeadTail(limit int64) *headTail {
	if limit < 2 {
		limit = 2
	}
	h := int(limit / 2)
	return newHeadTailSplit(h, int(limit)-h)
}

func newHeadTailSplit(head, tail int) *headTail {
	return &headTail{head: make([]byte, 0, head), cap: max(tail, 1)}
}

func (b *headTail) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	if room := cap(b.head) - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if b.tail == nil {
		b.tail = make([]byte, b.cap)
	}
	if len(p) > b.cap {
		p = p[len(p)-b.cap:] // only the last cap bytes can survive
	}
	for len(p) > 0 {
		k := copy(b.tail[b.next:], p)
		p = p[k:]
		b.next += k
		if b.next == b.cap {
			b.next, b.full = 0, true
		}
	}
	return n, nil
}

// result returns the kept bytes. The cut points are moved to UTF-8
// character boundaries so that text stays valid on both sides of the gap.
func (b *headTail) result() Captured {
	var tail []byte
	if b.full {
		tail = append(append(tail, b.tail[b.next:]...), b.tail[:b.next]...)
	} else {
		tail = append(tail, b.tail[:b.next]...)
	}
	c := Captured{Head: b.head, Tail: tail, Total: b.total}
	c.Omitted = b.total - int64(len(c.Head)) - int64(len(c.Tail))
	if c.Omitted == 0 {
		c.Head, c.Tail = append(c.Head, c.Tail...), nil
		return c
	}
	if cut := runeStartBefore(c.Head, len(c.Head)); cut < len(c.Head) && len(c.Head)-cut < 4 {
		c.Omitted += int64(len(c.Head) - cut)
		c.Head = c.Head[:cut]
	}
	skip := 0
	for skip < len(c.Tail) && skip < 3 && c.Tail[skip]&0xC0 == 0x80 {
		skip++
	}
	c.Omitted += int64(skip)
	c.Tail = c.Tail[skip:]
	return c
}

// runeStartBefore returns the index where an incomplete UTF-8 sequence at
// the end of p begins, or len(p) when p ends on a character boundary.
func runeStartBefore(p []byte, end int) int {
	for i := end - 1; i >= 0 && i >= end-4; i-- {
		c := p[i]
		if c&0xC0 == 0x80 {
			continue
		}
		if c < 0x80 {
			return end
		}
		need := 2
		switch {
		case c >= 0xF0:
			need = 4
		case c >= 0xE0:
			need = 3
		}
		if end-i < need {
			return i
		}
		return end
	}
	return end
}

// OmissionMarker is what stands between the head and the tail of an
// output stream that was cut.
func OmissionMarker(omitted int64) string {
	return fmt.Sprintf("\n[forgebox: %d bytes omitted]\n", omitted)
}

// limitedStream passes the first bytes of a stream through at once and
// keeps only the last ones, printed with an omission marker at the end.
type limitedStream struct {
	w        io.Writer
	headLeft int64
	tail     *headTail
	err      error
}

func newLimitedStream(w io.Writer, limit int64) *limitedStream {
	h := max(limit/2, 1)
	return &limitedStream{w: w, headLeft: h, tail: newHeadTailSplit(0, int(max(limit-h, 1)))}
}

func (l *limitedStream) Write(p []byte) (int, error) {
	n := len(p)
	if l.headLeft > 0 {
		k := min(int64(len(p)), l.headLeft)
		if l.err == nil {
			_, l.err = l.w.Write(p[:k])
		}
		l.headLeft -= k
		p = p[k:]
	}
	if len(p) > 0 {
		l.tail.Write(p)
	}
	return n, nil
}

// finish writes the kept tail, after a marker when bytes were dropped.
func (l *limitedStream) finish() error {
	c := l.tail.result()
	if l.err != nil {
		return l.err
	}
	if c.Omitted > 0 {
		if _, err := io.WriteString(l.w, OmissionMarker(c.Omitted)); err != nil {
			return err
		}
	}
	_, err := l.w.Write(append(c.Head, c.Tail...))
	return err
}

// keeping passes every byte on to w and keeps a bounded copy in keep. An
// error of w does not stop the keeping: the stream is drained either way.
type keeping struct {
	w    io.Writer
	keep *headTail
}

func (k keeping) Write(p []byte) (int, error) {
	k.keep.Write(p)
	return k.w.Write(p)
}

// outputs is the output side the three backends share: the copiers that
// carry the command's output into its sinks (streamSink), the limited
// streams' tails flushed after the run, the captured streams, and the idle
// clock. A backend embeds it, starts it with start, and decides itself
// what the command's end of each stream is.
type outputs struct {
	s Streams
	// watch makes all output pass through forgebox, which notes when it
	// last saw some (lastOutput, Unix nanoseconds): for Spec.IdleTimeout.
	watch      bool
	lastOutput atomic.Int64
	copiers    sync.WaitGroup
	finish     []func() error // limited streams flush their tails

	// readers are what the copiers read; each copier closes its own when
	// done, and macOS closes them early rather than wait forever.
	readers   []*os.File
	out, errs *headTail // captured or kept output
}

func (o *outputs) start(s Streams, watch bool) {
	if s.MaxOutput <= 0 && s.Capture {
		s.MaxOutput = DefaultMaxOutput
	}
	o.s, o.watch = s, watch
	o.lastOutput.Store(time.Now().UnixNano())
}

// oneStream prepares the capture of a pseudo-terminal's output, which
// all arrives on one stream, Stdout's.
func (o *outputs) oneStream() {
	switch {
	case o.s.Capture:
		o.out, o.errs = newHeadTail(o.s.MaxOutput), newHeadTail(o.s.MaxOutput)
	case o.s.Keep > 0:
		o.out = newHeadTail(o.s.Keep)
	}
}

// handsOver reports whether an output stream the backend could give the
// command as it is (handable) may be: when nothing needs to see its bytes.
func (o *outputs) handsOver(handable bool) bool {
	return handable && !o.s.Capture && o.s.MaxOutput <= 0 && o.s.Keep <= 0 && !o.watch
}

// pipe returns the write end of a new pipe drained into dst's sink.
func (o *outputs) pipe(dst *os.File, capture **headTail) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	o.copyOut(dst, capture, r)
	return w, nil
}

// copyOut copies r into dst's sink until reading r fails, then closes r.
func (o *outputs) copyOut(dst *os.File, capture **headTail, r *os.File) {
	w, finish := streamSink(o.s, dst, capture)
	if finish != nil {
		o.finish = append(o.finish, finish)
	}
	var last *atomic.Int64
	if o.watch {
		last = &o.lastOutput
	}
	o.readers = append(o.readers, r)
	o.copiers.Add(1)
	go func() {
		defer o.copiers.Done()
		relay(w, r, last)
		r.Close()
	}()
}

// flush writes the limited streams' tails, once the copiers are done.
func (o *outputs) flush() error {
	var errs []error
	for _, f := range o.finish {
		errs = append(errs, f())
	}
	o.finish = nil
	return errors.Join(errs...)
}

func (o *outputs) captured() (out, errs Captured) {
	if o.out != nil {
		out = o.out.result()
	}
	if o.errs != nil {
		errs = o.errs.result()
	}
	return out, errs
}

// observing shows what it writes to an observer (Streams.Observe).
type observing struct {
	w   io.Writer
	see func([]byte)
}

func (o observing) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	o.see(p[:n])
	return n, err
}

// callerTerminal is the caller's terminal, if stdin or stdout is one.
func (o *outputs) callerTerminal() *os.File {
	for _, f := range []*os.File{o.s.Stdin, o.s.Stdout} {
		if isTerminal(f) {
			return f
		}
	}
	return nil
}

func isTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// streamSink is where one output stream goes once forgebox sees its bytes:
// the capture (Streams.Capture), a head-limited dst (MaxOutput), or dst
// itself (discarded when nil), plus a kept head and tail (Keep). It makes
// *capture when it needs one and finds none; finish, when not nil, writes
// the limited stream's tail after the run.
func streamSink(s Streams, dst *os.File, capture **headTail) (w io.Writer, finish func() error) {
	defer func() {
		if s.Observe != nil {
			w = observing{w: w, see: s.Observe}
		}
	}()
	if s.Capture {
		if *capture == nil {
			*capture = newHeadTail(s.MaxOutput)
		}
		return *capture, nil
	}
	switch {
	case dst == nil:
		w = io.Discard
	case s.MaxOutput > 0:
		l := newLimitedStream(dst, s.MaxOutput)
		w, finish = l, l.finish
	default:
		w = dst
	}
	if s.Keep > 0 {
		if *capture == nil {
			*capture = newHeadTail(s.Keep)
		}
		w = keeping{w: w, keep: *capture}
	}
	return w, finish
}

// relay copies r into w until reading fails, and keeps draining when w
// fails (the caller's side broke; the command must not block). last, when
// not nil, gets the time output last went by (Spec.IdleTimeout).
func relay(w io.Writer, r io.Reader, last *atomic.Int64) {
	buf := make([]byte, 256<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if last != nil {
				last.Store(time.Now().UnixNano())
			}
			w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}
