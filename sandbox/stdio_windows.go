package sandbox

import (
	"errors"
	"io"
	"os"
	"time"

	conpty "github.com/forgebox/forgebox/conpty_windows"
	"golang.org/x/sys/windows"
	"golang.org/x/term"
)

// winPlumbing connects the command's standard streams to the caller's on
// Windows. Files and pipes are handed over as they are; a console is never
// handed over (the command would share the caller's console, its input
// buffer included, and could leave keystrokes in it for the caller's shell:
// the TIOCSTI of Windows): its bytes are relayed through pipes, and the
// command gets a console of its own, hidden, or the pseudo console.
type winPlumbing struct {
	outputs
	pty *conpty.PTY

	child [3]windows.Handle // the command's standard handles (no PTY)
	ours  []*os.File        // our copies of the command's ends, closed once it runs

	restore []func()
	stop    chan struct{}
	closed  bool
}

func newWinPlumbing(s Streams, watch bool) (*winPlumbing, error) {
	if err := checkWinStreams(s); err != nil {
		return nil, err
	}
	p := &winPlumbing{stop: make(chan struct{})}
	p.start(s, watch)
	if s.PTY {
		cols, rows := p.winsize()
		pty, err := conpty.NewPTY(cols, rows)
		if err != nil {
			return nil, &UnavailableError{Layer: "pty", Reason: err.Error(), Err: err}
		}
		p.pty = pty
		p.oneStream()
		return p, nil
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	p.ours = append(p.ours, null)
	if err := p.input(null); err != nil {
		p.close()
		return nil, err
	}
	if err := p.output(1, s.Stdout, &p.out, null); err != nil {
		p.close()
		return nil, err
	}
	if err := p.output(2, s.Stderr, &p.errs, null); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// input gives the command its stdin: NUL, the caller's file, or for a
// console a pipe fed from it.
func (p *winPlumbing) input(null *os.File) error {
	switch in := p.s.Stdin; {
	case p.s.NoStdin || in == nil:
		p.child[0] = windows.Handle(null.Fd())
	case isTerminal(in):
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		p.child[0] = windows.Handle(r.Fd())
		p.ours = append(p.ours, r)
		// Not waited for: it may block reading the console until the next
		// keystroke after the run (see Streams.Stdin).
		go func() {
			io.Copy(w, in)
			w.Close()
		}()
	default:
		p.child[0] = windows.Handle(in.Fd())
	}
	return nil
}

// output gives the command stream fd: the caller's file itself when
// nothing needs to see the bytes, else a pipe drained into the capture,
// the limited stream or the caller's console.
func (p *winPlumbing) output(fd int, dst *os.File, capture **headTail, null *os.File) error {
	s := p.s
	if dst == nil && !s.Capture {
		p.child[fd] = windows.Handle(null.Fd())
		return nil
	}
	if p.handsOver(!isTerminal(dst)) {
		p.child[fd] = windows.Handle(dst.Fd())
		return nil
	}
	w, err := p.pipe(dst, capture)
	if err != nil {
		return err
	}
	p.child[fd] = windows.Handle(w.Fd())
	p.ours = append(p.ours, w)
	return nil
}

// started runs once the command is running: our copies of its ends go;
// with a PTY the relays start.
func (p *winPlumbing) started() {
	for _, f := range p.ours {
		f.Close()
	}
	p.ours = nil
	if p.pty == nil {
		return
	}
	p.copyOut(p.s.Stdout, &p.out, p.pty.Output())
	if in := p.s.Stdin; in != nil && !p.s.NoStdin {
		if isTerminal(in) {
			if st, err := term.MakeRaw(int(in.Fd())); err == nil {
				p.restore = append(p.restore, func() { term.Restore(int(in.Fd()), st) })
			}
		}
		w := p.pty.Input()
		go func() {
			io.Copy(w, in)
			if !isTerminal(in) {
				w.Write([]byte{0x1a, '\r'}) // end of input, as a console spells it: Ctrl+Z, Enter
			}
		}()
	}
	if out := p.s.Stdout; out != nil && isTerminal(out) {
		// The pseudo console speaks VT sequences: let the caller's console
		// render them.
		h := windows.Handle(out.Fd())
		var mode uint32
		if windows.GetConsoleMode(h, &mode) == nil &&
			windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING|windows.DISABLE_NEWLINE_AUTO_RETURN) == nil {
			p.restore = append(p.restore, func() { windows.SetConsoleMode(h, mode) })
		}
		go p.followSize(h)
	}
}

// followSize resizes the pseudo console with the caller's console: Windows
// has no SIGWINCH, so it looks a few times a second.
func (p *winPlumbing) followSize(h windows.Handle) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	last := [2]int16{}
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		var info windows.ConsoleScreenBufferInfo
		if windows.GetConsoleScreenBufferInfo(h, &info) != nil {
			continue
		}
		size := [2]int16{info.Window.Right - info.Window.Left + 1, info.Window.Bottom - info.Window.Top + 1}
		if size != last {
			last = size
			p.pty.Resize(size[0], size[1])
		}
	}
}

// interrupt passes Ctrl+C to the command through its pseudo console, which
// turns it into CTRL_C_EVENT. Without a PTY the command's console is not
// forgebox's to signal: it reports false.
func (p *winPlumbing) interrupt() bool {
	if p.pty == nil {
		return false
	}
	_, err := p.pty.Input().Write([]byte{0x03})
	return err == nil
}

// winsize is the size of the caller's console, for the pseudo console.
func (p *winPlumbing) winsize() (cols, rows int16) {
	for _, f := range []*os.File{p.s.Stdout, p.s.Stdin, p.s.Stderr} {
		if f == nil || !isTerminal(f) {
			continue
		}
		var info windows.ConsoleScreenBufferInfo
		if windows.GetConsoleScreenBufferInfo(windows.Handle(f.Fd()), &info) == nil {
			return info.Window.Right - info.Window.Left + 1, info.Window.Bottom - info.Window.Top + 1
		}
	}
	return 80, 24
}

// wait waits for the output to drain, at most for limit, and flushes kept
// tails. With a PTY it closes the pseudo console first: its output ends
// only then (ClosePseudoConsole may itself wait for the output to be read,
// which the copier does meanwhile).
func (p *winPlumbing) wait(limit time.Duration) error {
	if p.pty != nil {
		go p.pty.CloseConsole()
	}
	done := make(chan struct{})
	go func() {
		p.copiers.Wait()
		close(done)
	}()
	var errs []error
	select {
	case <-done:
	case <-time.After(limit):
		errs = append(errs, errors.New("the output did not end: a process outside the job holds it open"))
	}
	errs = append(errs, p.flush())
	return errors.Join(errs...)
}

// close restores the caller's console and frees what is left. Safe to call
// more than once.
func (p *winPlumbing) close() {
	if p.closed {
		return
	}
	p.closed = true
	for i := len(p.restore) - 1; i >= 0; i-- {
		p.restore[i]()
	}
	close(p.stop)
	for _, f := range p.ours {
		f.Close()
	}
	p.ours = nil
	if p.pty != nil {
		p.pty.Close()
	}
}

// checkWinStreams refuses a directory handed over as a stream: a handle on
// a directory lets the command open files relative to it, around the
// sandbox.
func checkWinStreams(s Streams) error {
	for _, f := range []struct {
		name string
		file *os.File
	}{{"stdin", s.Stdin}, {"stdout", s.Stdout}, {"stderr", s.Stderr}} {
		if f.file == nil || (f.name == "stdin" && s.NoStdin) {
			continue
		}
		var info windows.ByHandleFileInformation
		if windows.GetFileInformationByHandle(windows.Handle(f.file.Fd()), &info) == nil &&
			info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
			return invalidf("%s is a directory; give the command a file, a pipe or a console", f.name)
		}
	}
	return nil
}
