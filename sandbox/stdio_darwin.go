package sandbox

import (
	"io"
	"os"
	"time"

	"github.com/creack/pty"
)

// darwinStreams connects the command's standard streams to the caller's on
// macOS. Pipes and sockets are handed over as they are. Everything with a
// path (terminals, regular files, devices) is relayed through a pipe: a
// terminal so that the command cannot push input into it (TIOCSTI) or keep
// it, a file because Seatbelt may check reads and writes on descriptors
// against the profile, which does not list the caller's files.
type darwinStreams struct {
	outputs
	child [3]*os.File // the command's 0, 1 and 2
	ours  []*os.File  // our copies of the child's ends, closed once it runs
	null  *os.File

	master, slave *os.File // with a pseudo-terminal

	ttyRelay
}

func newDarwinStreams(s Streams, watch bool) (*darwinStreams, error) {
	for _, f := range []struct {
		name string
		file *os.File
	}{{"stdin", s.Stdin}, {"stdout", s.Stdout}, {"stderr", s.Stderr}} {
		if f.file == nil || (f.name == "stdin" && s.NoStdin) {
			continue
		}
		if st, err := f.file.Stat(); err == nil && st.IsDir() {
			return nil, invalidf("%s is a directory; give the command a file, a pipe or a terminal", f.name)
		}
	}
	d := &darwinStreams{}
	d.start(s, watch)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	d.null = null
	d.ours = append(d.ours, null)
	if s.PTY {
		if err := d.openPTY(); err != nil {
			d.close()
			return nil, err
		}
		return d, nil
	}
	if err := d.input(); err != nil {
		d.close()
		return nil, err
	}
	for _, o := range []struct {
		fd      int
		dst     *os.File
		capture **headTail
	}{{1, s.Stdout, &d.out}, {2, s.Stderr, &d.errs}} {
		if err := d.output(o.fd, o.dst, o.capture); err != nil {
			d.close()
			return nil, err
		}
	}
	return d, nil
}

// openPTY gives the command a new pseudo-terminal sized like the caller's.
func (d *darwinStreams) openPTY() error {
	master, slave, err := pty.Open()
	if err != nil {
		return &UnavailableError{Layer: "pseudo-terminal", Reason: err.Error(), Err: err}
	}
	d.master, d.slave = master, slave
	d.ours = append(d.ours, slave)
	if tty := d.callerTerminal(); tty != nil {
		pty.InheritSize(tty, master)
	} else {
		pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80})
	}
	d.child = [3]*os.File{slave, slave, slave}
	d.oneStream()
	return nil
}

// handOver reports whether f can be given to the command as it is: a pipe
// or a socket, which carry no path for the profile to match.
func handOver(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

func (d *darwinStreams) input() error {
	in := d.s.Stdin
	switch {
	case d.s.NoStdin || in == nil:
		d.child[0] = d.null
	case handOver(in):
		d.child[0] = in
	default:
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		d.child[0] = r
		d.ours = append(d.ours, r)
		// Not waited for: reading a terminal may block until the next
		// keystroke after the run (see Streams.Stdin).
		go func() {
			io.Copy(w, in)
			w.Close()
		}()
	}
	return nil
}

func (d *darwinStreams) output(fd int, dst *os.File, capture **headTail) error {
	s := d.s
	if dst == nil && !s.Capture {
		d.child[fd] = d.null
		return nil
	}
	if d.handsOver(handOver(dst)) {
		d.child[fd] = dst
		return nil
	}
	w, err := d.pipe(dst, capture)
	if err != nil {
		return err
	}
	d.child[fd] = w
	d.ours = append(d.ours, w)
	return nil
}

// started runs once the command runs: our copies of its ends go, and with
// a pseudo-terminal the relays start.
func (d *darwinStreams) started() {
	for _, f := range d.ours {
		f.Close()
	}
	d.ours = nil
	if d.master != nil {
		d.relay(&d.outputs, d.master)
	}
}

// drain waits for the output to end, at most limit once the command's
// process group is gone: a process that left the group may hold the
// stream open, and is not waited for. It reports whether that happened.
func (d *darwinStreams) drain(limit time.Duration) (cut bool, err error) {
	done := make(chan struct{})
	go func() {
		d.copiers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
		cut = true
		for _, r := range d.readers {
			r.Close()
		}
		<-done
	}
	return cut, d.flush()
}

// close restores the caller's terminal and frees what is left. Safe to
// call more than once.
func (d *darwinStreams) close() {
	d.ttyRelay.close()
	for _, f := range d.ours {
		f.Close()
	}
	d.ours = nil
	for _, r := range d.readers {
		r.Close()
	}
}
