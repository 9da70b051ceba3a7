//go:build linux || darwin

package sandbox

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// ttyRelay is what a pseudo-terminal run does with the caller's side once
// the command runs, on Linux and macOS alike: the terminal's output
// drained, the caller's stdin typed in, the caller's terminal raw, and its
// size followed.
type ttyRelay struct {
	restore func()         // the caller's terminal back from raw mode
	winch   chan os.Signal // SIGWINCH, while the size is followed
	stop    chan struct{}
}

// relay starts the relays on master, the pseudo-terminal's master side.
// A stdin that is not a terminal ends with the terminal's EOF character.
func (t *ttyRelay) relay(o *outputs, master *os.File) {
	o.copyOut(o.s.Stdout, &o.out, master)
	if in := o.s.Stdin; in != nil && !o.s.NoStdin {
		if isTerminal(in) {
			if st, err := term.MakeRaw(int(in.Fd())); err == nil {
				t.restore = func() { term.Restore(int(in.Fd()), st) }
			}
		}
		if dup, err := dupFile(master); err == nil {
			go func() {
				io.Copy(dup, in)
				if !isTerminal(in) {
					dup.Write([]byte{4}) // end of input: the terminal's EOF character
				}
				dup.Close()
			}()
		}
	}
	if tty := o.callerTerminal(); tty != nil {
		t.winch, t.stop = make(chan os.Signal, 1), make(chan struct{})
		signal.Notify(t.winch, syscall.SIGWINCH)
		go func() {
			for {
				select {
				case <-t.winch:
					pty.InheritSize(tty, master)
				case <-t.stop:
					return
				}
			}
		}()
	}
}

// close restores the caller's terminal and stops following its size. Safe
// to call more than once.
func (t *ttyRelay) close() {
	if t.restore != nil {
		t.restore()
		t.restore = nil
	}
	if t.winch != nil {
		signal.Stop(t.winch)
		close(t.stop)
		t.winch = nil
	}
}

func dupFile(f *os.File) (*os.File, error) {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name()), nil
}
