package probe

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The bounds of the operations that take resources. Where no limit stops
// them (a probe run on the host, or in a sandbox whose limit the host
// cannot enforce) they must not hurt the host: a few hundred idle
// processes, some memory for a moment, a wait.
const (
	MaxForkbomb = 1024
	MaxHog      = 1 << 30
	MaxPause    = 5 * time.Minute
)

// resourceOp attempts what the resource limits must stop, and runs the
// bait the host side of a check needs. ok is false for an unknown op.
func resourceOp(op string, a []string) (out string, err error, ok bool) {
	switch op {
	case "forkbomb":
		out, err = forkbomb(arg(a, 0))
	case "hog":
		out, err = hog(arg(a, 0))
	case "pause":
		err = pause(arg(a, 0))
	case "exec-creds":
		out, err = execCreds(a)
	default:
		return "", nil, false
	}
	return out, err, true
}

// forkbomb starts up to n processes that only wait, all alive at once, and
// reports how many it reached ("57 of 256"); the error is what refused the
// next fork. It kills and reaps every one before it returns, and each dies
// with the forking thread should the probe be killed first.
func forkbomb(s string) (string, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxForkbomb {
		return "", fmt.Errorf("forkbomb %q: want a count from 1 to %d: %w", s, MaxForkbomb, syscall.EINVAL)
	}
	// The children's parent-death signal is tied to this thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Allocated up front: once the limit is full, the runtime could not
	// start a thread (for the garbage collector, say) and would abort.
	pids := make([]int, 0, n)
	parent := os.Getpid()
	var refused error
	for len(pids) < n {
		pid, errno := forkWaiter(parent)
		if errno != 0 {
			refused = errno
			break
		}
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGKILL)
	}
	for _, pid := range pids {
		for {
			if _, err := unix.Wait4(pid, nil, 0, nil); err != unix.EINTR {
				break
			}
		}
	}
	return fmt.Sprintf("%d of %d", len(pids), n), refused
}

// forkWaiter forks a process that waits until it is killed. The child is a
// copy of a multi-threaded Go program left with one thread: it must run
// nothing but raw system calls, so this function may not grow its stack.
//
//go:nosplit
//go:norace
func forkWaiter(parent int) (int, syscall.Errno) {
	pid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 || pid != 0 {
		return int(pid), errno
	}
	syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0, 0)
	if ppid, _, _ := syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0); int(ppid) != parent {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0) // the probe died before the signal was armed
	}
	for {
		syscall.RawSyscall6(syscall.SYS_PPOLL, 0, 0, 0, 0, 0, 0) // no descriptors, no timeout: until a signal
	}
}

// hog maps BYTES of anonymous memory and writes to every page, so that each
// is really allocated (and charged to the memory limit), then frees it.
// Stopped by a limit, the probe is killed before it can report.
func hog(s string) (string, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > MaxHog {
		return "", fmt.Errorf("hog %q: want a byte count from 1 to %d: %w", s, MaxHog, syscall.EINVAL)
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return "", fmt.Errorf("map %d bytes: %w", n, err)
	}
	defer unix.Munmap(b)
	page := os.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = 1
	}
	return fmt.Sprintf("%d bytes touched", n), nil
}

// pause waits until standard input ends or SECONDS pass: a bait process on
// the host, which must not outlive the one that started it (give it a pipe
// as stdin and keep the other end).
func pause(s string) error {
	secs, err := strconv.Atoi(s)
	if err != nil || secs < 0 || time.Duration(secs)*time.Second > MaxPause {
		return fmt.Errorf("pause %q: want seconds from 0 to %v: %w", s, MaxPause, syscall.EINVAL)
	}
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-time.After(time.Duration(secs) * time.Second):
	}
	return nil
}
