package sandbox

import (
	"io"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// plumbing connects the command's standard streams to the caller's. Files
// that are not terminals are handed over as they are (no copy, full pipe
// speed); a terminal is never handed over, so the command cannot push input
// into it with TIOCSTI or read it after forgebox exits.
type plumbing struct {
	outputs
	pty bool

	child [3]*os.File // the command's 0, 1 and 2
	null  *os.File    // /dev/null, for the child's own 0, 1 and 2
	ours  []*os.File  // our copies of the child's ends, closed once it runs

	ttyRelay
}

func newPlumbing(s Streams, watch bool) (*plumbing, error) {
	if err := checkStreams(s); err != nil {
		return nil, err
	}
	p := &plumbing{pty: s.PTY}
	p.start(s, watch)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	p.ours = append(p.ours, null)
	p.null = null
	if p.pty {
		// The command gets the pseudo-terminal; stage 0 and PID 1 get
		// nothing of the caller's.
		p.child = [3]*os.File{null, null, null}
		p.oneStream()
		return p, nil
	}
	if err := p.input(); err != nil {
		p.close()
		return nil, err
	}
	if err := p.output(1, s.Stdout, &p.out); err != nil {
		p.close()
		return nil, err
	}
	if err := p.output(2, s.Stderr, &p.errs); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// input gives the command its stdin: /dev/null, the caller's file, or for
// a terminal a pipe fed from it (a terminal is never handed over: the
// command could push input into it with TIOCSTI).
func (p *plumbing) input() error {
	switch {
	case p.s.NoStdin || p.s.Stdin == nil:
		p.child[0] = p.null
	case isTerminal(p.s.Stdin):
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		p.child[0] = r
		p.ours = append(p.ours, r)
		// Not waited for: it may block reading the terminal until the
		// next keystroke after the run (see Streams.Stdin).
		go func() {
			io.Copy(w, p.s.Stdin)
			w.Close()
		}()
	default:
		p.child[0] = p.s.Stdin
	}
	return nil
}

// output gives the command stream fd: the caller's file itself when
// nothing needs to see the bytes, else a pipe drained into the capture,
// the limited stream or the caller's terminal (keeping a copy with Keep).
func (p *plumbing) output(fd int, dst *os.File, capture **headTail) error {
	s := p.s
	if dst == nil && !s.Capture {
		p.child[fd] = p.null
		return nil
	}
	if p.handsOver(!isTerminal(dst)) {
		p.child[fd] = dst
		return nil
	}
	w, err := p.pipe(dst, capture)
	if err != nil {
		return err
	}
	p.child[fd] = w
	p.ours = append(p.ours, w)
	return nil
}

// winsize is the size of the caller's terminal, for the command's.
func (p *plumbing) winsize() (rows, cols uint16) {
	for _, f := range []*os.File{p.s.Stdin, p.s.Stdout} {
		if f != nil && isTerminal(f) {
			if ws, err := pty.GetsizeFull(f); err == nil {
				return ws.Rows, ws.Cols
			}
		}
	}
	return 24, 80
}

// started runs once the command executes: our copies of its ends go, and
// with a terminal the relays start.
func (p *plumbing) started(master *os.File) {
	for _, f := range p.ours {
		f.Close()
	}
	p.ours = nil
	if master != nil {
		p.relay(&p.outputs, master)
	}
}

// wait waits for the output to drain and flushes kept tails.
func (p *plumbing) wait() error {
	p.copiers.Wait()
	return p.flush()
}

// close restores the caller's terminal and frees what is left. Safe to
// call more than once.
func (p *plumbing) close() {
	p.ttyRelay.close()
	for _, f := range p.ours {
		f.Close()
	}
	p.ours = nil
}

// checkStreams refuses standard streams that would reach around the view:
// a directory handed over as stdin or stdout is a handle on a host
// directory (/proc/self/fd/0/x writes into it), and an O_PATH descriptor is
// no stream at all.
func checkStreams(s Streams) error {
	for _, f := range []struct {
		name string
		file *os.File
	}{{"stdin", s.Stdin}, {"stdout", s.Stdout}, {"stderr", s.Stderr}} {
		if f.file == nil || (f.name == "stdin" && s.NoStdin) {
			continue
		}
		fd := int(f.file.Fd())
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return invalidf("%s is a directory; give the command a file, a pipe or a terminal", f.name)
		}
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_PATH != 0 {
			return invalidf("%s is an O_PATH descriptor, not a stream", f.name)
		}
	}
	return nil
}
