package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// helperEnv selects a helper role when the test binary is re-executed.
const helperEnv = "FORGEBOX_CGROUP_TEST_HELPER"

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	os.Exit(m.Run())
}

// runHelper plays a role in a child process. Every role first waits for a
// line on stdin, so that the test can move it into a group before it acts.
func runHelper(role string) int {
	name, arg, _ := strings.Cut(role, ":")
	if name != "nproc" { // nproc must not start threads once the bomb is full
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	switch name {
	case "hog":
		return hog()
	case "spin":
		d, _ := time.ParseDuration(arg)
		return spin(d)
	case "burn":
		d, _ := time.ParseDuration(arg)
		return burn(d)
	case "nproc":
		n, _ := strconv.ParseUint(arg, 10, 64)
		return nprocBomb(n)
	case "cloneinto":
		return cloneInto()
	}
	fmt.Fprintf(os.Stderr, "unknown helper role %q\n", role)
	return 2
}

// hog touches memory a MiB at a time until the OOM killer stops it.
func hog() int {
	var keep [][]byte
	for i := 0; i < 4096; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		keep = append(keep, b)
	}
	fmt.Println("hog: 4 GiB allocated without being stopped")
	return 1
}

// spin burns CPU for wall-clock time d.
func spin(d time.Duration) int {
	end := time.Now().Add(d)
	x := 0
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			x += i
		}
	}
	return x & 0
}

// burn spins until it has used CPU time d.
func burn(d time.Duration) int {
	var ts unix.Timespec
	x := 0
	for {
		unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
		if time.Duration(ts.Nano()) >= d {
			return x & 0
		}
		for i := 0; i < 1000; i++ {
			x += i
		}
	}
}

// cloneInto starts a process inside the cgroup whose directory it holds
// on fd 3, with clone3(CLONE_INTO_CGROUP), the way the sandbox's PID 1
// starts the command; it says "started" or why not, and waits for stdin
// to close.
func cloneInto() int {
	cmd := exec.Command("/bin/sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: 3}
	if err := cmd.Start(); err != nil {
		fmt.Printf("error: %v\n", err)
		return 1
	}
	fmt.Printf("started\n")
	io.Copy(io.Discard, os.Stdin)
	cmd.Process.Kill()
	cmd.Wait()
	return 0
}

// nprocBomb sets RLIMIT_NPROC to n and forks children that block until the
// limit refuses a fork. It reports "forks threads errno" on stdout, waits
// for stdin to close, then kills its children. After the first fork it
// makes only raw system calls: the Go runtime cannot start a thread once
// the limit is reached, and the children are copies without a runtime.
func nprocBomb(n uint64) int {
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
		fmt.Printf("setrlimit: %v\n", err)
		return 1
	}
	threads := countThreads()
	pids := make([]int, 0, n+1)
	var errno syscall.Errno
	for uint64(len(pids)) <= n {
		pid, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			errno = e
			break
		}
		if pid == 0 {
			blockForever()
		}
		pids = append(pids, int(pid))
	}
	msg := []byte(fmt.Sprintf("%d %d %d\n", len(pids), threads, int(errno)))
	syscall.RawSyscall(syscall.SYS_WRITE, 1, uintptr(unsafePointer(msg)), uintptr(len(msg)))
	var buf [1]byte
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, 0, uintptr(unsafePointer(buf[:])), 1)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 || r == 0 {
			break
		}
	}
	for _, p := range pids {
		syscall.RawSyscall(syscall.SYS_KILL, uintptr(p), uintptr(syscall.SIGKILL), 0)
	}
	return 0
}

// blockForever runs in a forked copy of the helper: no runtime, one thread.
//
//go:nosplit
//go:norace
func blockForever() {
	for {
		syscall.RawSyscall6(syscall.SYS_PPOLL, 0, 0, 0, 0, 0, 0)
	}
}

func countThreads() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// helper is a started helper process, waiting for its go-ahead.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startHelper starts the test binary in role with attr, waiting on stdin;
// extra become its fds 3 and up.
func startHelper(t *testing.T, role string, attr *syscall.SysProcAttr, extra ...*os.File) *helper {
	t.Helper()
	cmd := exec.Command("/proc/self/exe")
	cmd.ExtraFiles = extra
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GOMAXPROCS=1", "GOGC=off")
	cmd.SysProcAttr = attr
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper %s: %v", role, err)
	}
	h := &helper{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		h.cmd.Wait()
	})
	return h
}

// goAhead lets the helper act.
func (h *helper) goAhead(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(h.stdin, "go\n"); err != nil {
		t.Fatalf("tell helper to go: %v", err)
	}
}

func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
