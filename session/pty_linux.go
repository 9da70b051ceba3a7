package session

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptyProcess is the program running on the slave side of a PTY, seen from
// the master side.
type ptyProcess struct {
	cmd *exec.Cmd
	// master is non-blocking and registered with the runtime poller, so
	// Close interrupts a pending Read and writes can have deadlines.
	master *os.File
	pid    int
}

func startPTY(o Options) (*ptyProcess, error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open pty: %w", err)
	}
	defer tty.Close()
	pollable, err := pollableCopy(master)
	master.Close()
	if err != nil {
		return nil, err
	}
	if err := pty.Setsize(tty, &pty.Winsize{Rows: uint16(o.Rows), Cols: uint16(o.Cols)}); err != nil {
		pollable.Close()
		return nil, fmt.Errorf("set pty size: %w", err)
	}
	cmd := exec.Command(o.Argv[0], o.Argv[1:]...)
	cmd.Env, cmd.Dir = o.Env, o.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// A session of its own with the PTY as controlling terminal: job control
	// works, Ctrl-C reaches the foreground job, and every process started
	// in it carries the shell's session id, which is how Close finds them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		pollable.Close()
		return nil, fmt.Errorf("start %q: %w", o.Argv[0], err)
	}
	return &ptyProcess{cmd: cmd, master: pollable, pid: cmd.Process.Pid}, nil
}

// pollableCopy exists because creack/pty reads the PTY number through
// f.Fd(), which puts the file in blocking mode for good: a Read would then
// sit in the kernel where Close cannot end it, leaking the reader goroutine
// whenever a process that escaped Close still holds the slave open. A
// non-blocking duplicate is registered with the poller by os.NewFile.
func pollableCopy(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicate pty master: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("make pty master non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

func (p *ptyProcess) read(b []byte) (int, error) { return p.master.Read(b) }

// write gives up after timeout: a program that stops reading its terminal
// must not hang Send or Exec.
func (p *ptyProcess) write(b []byte, timeout time.Duration) error {
	if err := p.master.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return fmt.Errorf("set pty write deadline: %w", err)
	}
	if _, err := p.master.Write(b); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("write to terminal: the program has not read its input for %v", timeout)
		}
		return fmt.Errorf("write to terminal: %w", err)
	}
	return nil
}

// tryWrite makes one non-blocking attempt. The emulator answers terminal
// queries (cursor position) from the reader goroutine, which must never
// block on a full input queue.
func (p *ptyProcess) tryWrite(b []byte) {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Write(func(fd uintptr) bool {
		_, _ = unix.Write(int(fd), b)
		return true
	})
}

func (p *ptyProcess) setSize(rows, cols int) error {
	return p.control(func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	})
}

// canonical reports whether the terminal is in line mode. On Linux the
// master reports the slave's termios.
func (p *ptyProcess) canonical() bool {
	var lflag uint32
	err := p.control(func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err == nil {
			lflag = t.Lflag
		}
		return err
	})
	return err == nil && lflag&unix.ICANON != 0
}

func (p *ptyProcess) control(f func(fd int) error) error {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return fmt.Errorf("pty master: %w", err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return fmt.Errorf("pty master: %w", err)
	}
	return ferr
}

// wait reaps the program and returns its exit status, -1 for a signal.
func (p *ptyProcess) wait() int {
	_ = p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

// terminate ends the program and everything it started: see killSession.
func (p *ptyProcess) terminate(grace time.Duration) {
	killSession(p.pid, grace)
}

func (p *ptyProcess) closeMaster() error { return p.master.Close() }

func (p *ptyProcess) programInForeground() bool { return programInForeground(p.pid) }
