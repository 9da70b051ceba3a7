package sandbox

import (
	"cmp"
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	conpty "github.com/forgebox/forgebox/conpty_windows"
	"golang.org/x/sys/windows"
)

// execError is the error of a program that could not be executed, or nil
// when process creation failed for another reason (the token, the job).
func execError(program string, err error) error {
	var se *conpty.StartError
	var errno syscall.Errno
	if !errors.As(err, &se) || !errors.As(se.Err, &errno) {
		return nil
	}
	switch errno {
	case windows.ERROR_FILE_NOT_FOUND, windows.ERROR_PATH_NOT_FOUND:
		return &ExecError{Program: program, Errno: syscall.ENOENT}
	case windows.ERROR_ACCESS_DENIED, windows.ERROR_BAD_EXE_FORMAT, windows.ERROR_EXE_MACHINE_TYPE_MISMATCH,
		windows.ERROR_EXE_MARKED_INVALID, windows.ERROR_INVALID_EXE_SIGNATURE:
		return &ExecError{Program: program, Errno: errno}
	}
	return nil
}

// winEnding is how a run ended.
type winEnding struct {
	code           uint32
	timedOut, idle bool
	killed         bool
}

// supervise waits for the command's exit and enforces the timeouts, the
// signals and the context. Windows has no SIGTERM for a process in another
// console: a timeout kills the tree at once (TerminateJobObject); a
// forwarded signal reaches a command on a pseudo console as Ctrl+C, and
// kills the tree after the grace period, or at once without a PTY.
func (w *winLaunch) supervise(ctx context.Context, proc *conpty.Process) winEnding {
	var e winEnding
	exited := make(chan uint32, 1)
	go func() {
		code, err := proc.Wait()
		if err != nil {
			code = exitKilled
		}
		exited <- code
	}()
	var timeout, quiet, grace <-chan time.Time
	if d := w.spec.Timeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	idle := w.spec.IdleTimeout
	if idle > 0 {
		t := time.NewTicker(max(idle/4, time.Millisecond))
		defer t.Stop()
		quiet = t.C
	}
	kill := func() {
		if !e.killed && !e.timedOut {
			e.killed = true
		}
		w.job.Terminate(exitKilled)
	}
	var last os.Signal
	done := ctx.Done()
	for {
		select {
		case code := <-exited:
			e.code = code
			return e
		case <-timeout:
			e.timedOut, timeout, quiet = true, nil, nil
			w.job.Terminate(exitTimeout)
		case <-quiet:
			if time.Since(time.Unix(0, w.pl.lastOutput.Load())) >= idle {
				e.timedOut, e.idle, timeout, quiet = true, true, nil, nil
				w.job.Terminate(exitTimeout)
			}
		case sig := <-w.st.Signals:
			if sig == last {
				kill() // the user insists
				continue
			}
			last = sig
			if !w.pl.interrupt() {
				kill()
				continue
			}
			if grace == nil {
				grace = time.After(cmp.Or(w.spec.Grace, DefaultGrace))
			}
		case <-grace:
			grace = nil
			kill()
		case <-done:
			done = nil
			kill()
		}
	}
}
