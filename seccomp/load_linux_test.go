//go:build linux && cgo

package seccomp

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Loading a filter cannot be undone, so it happens in a child: the test
// binary run again with childEnv set, which TestMain hands to runChild.
const childEnv = "FORGEBOX_SECCOMP_TEST_CHILD"

// childSkip is the exit code of a child whose kernel cannot load filters.
const childSkip = 3

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(childEnv); ok {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// startChild runs the test binary as a child in mode and returns its
// combined output and exit state.
func startChild(t *testing.T, mode string) (string, *os.ProcessState) {
	t.Helper()
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); errors.Is(err, unix.EINVAL) {
		t.Skipf("kernel built without CONFIG_SECCOMP: prctl(PR_GET_SECCOMP): %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), self, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("run child %q: %v", mode, err)
	}
	if cmd.ProcessState.ExitCode() == childSkip {
		t.Skipf("child %q: %s", mode, strings.TrimSpace(out.String()))
	}
	return out.String(), cmd.ProcessState
}

func TestLoad(t *testing.T) {
	for _, mode := range []string{"checks", "checks-restricted", "checks-unix-sockets"} {
		t.Run(mode, func(t *testing.T) {
			out, st := startChild(t, mode)
			t.Logf("child as uid %d:\n%s", os.Getuid(), out)
			if !st.Success() {
				t.Errorf("child %q: %v, want every check passed", mode, st)
			}
		})
	}
}

func runChild(mode string) int {
	if exe, ok := strings.CutPrefix(mode, "exec:"); ok {
		if code := loadFilter(Options{}); code != 0 {
			return code
		}
		err := syscall.Exec(exe, []string{exe}, nil)
		fmt.Printf("exec %s: %v\n", exe, err)
		return 1
	}
	o := Options{RestrictNetwork: mode == "checks-restricted", AllowUnixSockets: mode == "checks-unix-sockets"}
	if code := loadFilter(o); code != 0 {
		return code
	}
	if failed := childChecks(o); failed > 0 {
		fmt.Printf("%d checks failed\n", failed)
		return 1
	}
	return 0
}

// loadFilter does what the sandbox child does before execve: no_new_privs,
// then seccomp(SECCOMP_SET_MODE_FILTER). TSYNC puts every thread of this Go
// process under the filter, so the runtime's own syscalls meet it too.
func loadFilter(o Options) int {
	p, err := Compile(o)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println("prctl(PR_SET_NO_NEW_PRIVS):", err)
		return 1
	}
	prog := unix.SockFprog{
		Len:    uint16(p.Len()),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&p.BPF[0])),
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(p)
	switch errno {
	case 0:
		return 0
	case unix.EINVAL, unix.ENOSYS:
		fmt.Println("kernel cannot load seccomp filters: seccomp(SECCOMP_SET_MODE_FILTER):", errno)
		return childSkip
	}
	fmt.Println("seccomp(SECCOMP_SET_MODE_FILTER):", errno)
	return 1
}

// childChecks makes real calls under the filter. Where the filter allows a
// call by mistake the arguments make the kernel fail it with another errno,
// so a broken filter changes nothing outside this process.
func childChecks(o Options) (failed int) {
	expect := func(what string, want, got error) {
		if errors.Is(got, want) || (want == nil && got == nil) {
			fmt.Printf("ok   %s: %v\n", what, got)
			return
		}
		fmt.Printf("FAIL %s: %v, want %v\n", what, got, want)
		failed++
	}
	call := func(nr uintptr, args ...uintptr) error {
		var a [6]uintptr
		copy(a[:], args)
		_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if e != 0 {
			return e
		}
		return nil
	}

	expect("getpid", nil, func() error {
		if pid, _, _ := unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0); int(pid) != os.Getpid() {
			return fmt.Errorf("getpid = %d, want %d", pid, os.Getpid())
		}
		return nil
	}())
	expect("unshare(CLONE_NEWUSER)", unix.EPERM, unix.Unshare(unix.CLONE_NEWUSER))
	// The kernel itself refuses these flag pairs with EINVAL.
	expect("clone(CLONE_NEWUSER|CLONE_FS)", unix.EPERM, call(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_FS))
	expect("clone(CLONE_NEWNS|CLONE_FS)", unix.EPERM, call(unix.SYS_CLONE, unix.CLONE_NEWNS|unix.CLONE_FS))
	expect("setns(-1, 0)", unix.EPERM, call(unix.SYS_SETNS, ^uintptr(0), 0))
	expect("clone3(NULL, 0)", unix.ENOSYS, call(unix.SYS_CLONE3, 0, 0))
	// The parent is not our tracee: the kernel says ESRCH.
	expect("ptrace(PTRACE_PEEKDATA, parent)", unix.EPERM, call(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, uintptr(os.Getppid()), 0, 0))
	expect("process_vm_readv(0, ...)", unix.EPERM, call(unix.SYS_PROCESS_VM_READV, 0, 0, 0, 0, 0, 0))
	expect("bpf(-1, NULL, 0)", unix.EPERM, call(unix.SYS_BPF, ^uintptr(0), 0, 0))
	expect("io_uring_setup(0, NULL)", unix.EPERM, call(unix.SYS_IO_URING_SETUP, 0, 0))
	expect("keyctl(KEYCTL_GET_KEYRING_ID)", unix.EPERM, call(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, ^uintptr(0) /* thread keyring */, 0))
	none, _ := unix.BytePtrFromString("/nonexistent/forgebox-seccomp-test")
	expect("mount(..., /nonexistent)", unix.EPERM, call(unix.SYS_MOUNT, uintptr(unsafe.Pointer(none)), uintptr(unsafe.Pointer(none)), uintptr(unsafe.Pointer(none)), 0, 0))
	runtime.KeepAlive(none)

	// A pipe is not a terminal: the kernel says ENOTTY, so a broken filter
	// injects nothing anywhere.
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		expect("pipe2", nil, err)
		return failed
	}
	c := byte('x')
	expect("ioctl(pipe, TIOCSTI)", unix.EPERM, call(unix.SYS_IOCTL, uintptr(fds[0]), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))))
	expect("ioctl(pipe, 0xdeadbeef00005412)", unix.EPERM, call(unix.SYS_IOCTL, uintptr(fds[0]), 0xdeadbeef_00005412, uintptr(unsafe.Pointer(&c))))
	expect("ioctl(pipe, TIOCLINUX)", unix.EPERM, call(unix.SYS_IOCTL, uintptr(fds[0]), unix.TIOCLINUX, uintptr(unsafe.Pointer(&c))))
	expect("ioctl(pipe, TIOCGWINSZ) reaches the kernel", unix.ENOTTY, func() error { _, err := unix.IoctlGetWinsize(fds[0], unix.TIOCGWINSZ); return err }())

	expect("socket(AF_VSOCK)", unix.EPERM, sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0))
	expect("socket(AF_PACKET)", unix.EPERM, sock(unix.AF_PACKET, unix.SOCK_RAW, 0))
	expect("socket(AF_ALG)", unix.EPERM, sock(unix.AF_ALG, unix.SOCK_SEQPACKET, 0))
	var unixErr error = unix.EPERM
	if o.AllowUnixSockets {
		unixErr = nil
	}
	expect("socket(AF_UNIX)", unixErr, sock(unix.AF_UNIX, unix.SOCK_STREAM, 0))
	expect("socketpair(AF_UNIX, SOCK_DGRAM)", unixErr, pair(unix.SOCK_DGRAM))
	expect("socketpair(AF_UNIX, SOCK_RAW)", unixErr, pair(unix.SOCK_RAW))
	expect("socketpair(AF_UNIX, SOCK_STREAM)", nil, pair(unix.SOCK_STREAM))
	expect("socketpair(AF_UNIX, SOCK_SEQPACKET)", nil, pair(unix.SOCK_SEQPACKET))
	expect("socket(AF_INET)", nil, sock(unix.AF_INET, unix.SOCK_DGRAM, 0))
	expect("socket(AF_NETLINK)", nil, sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE))
	if o.RestrictNetwork {
		expect("socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)", unix.EPROTONOSUPPORT, sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP))
		expect("net.Listen(tcp) falls back from MPTCP", nil, func() error {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err == nil {
				l.Close()
			}
			return err
		}())
	}

	failed += setidChecks(expect, call)

	expect("personality(0xffffffff)", nil, call(unix.SYS_PERSONALITY, 0xffffffff))
	expect("personality(ADDR_NO_RANDOMIZE)", unix.EPERM, call(unix.SYS_PERSONALITY, 0x0040000 /* ADDR_NO_RANDOMIZE */))

	// Ordinary programs still run: fork, exec, pipes, and glibc threads,
	// which try clone3 first and fall back to clone on ENOSYS (GNU sort
	// starts a thread for inputs of this size).
	expect("sh -c 'echo ok | cat'", nil, run("ok\n", "", "/bin/sh", "-c", "echo ok | cat"))
	var nums strings.Builder
	for i := 300000; i > 0; i-- {
		nums.WriteString(strconv.Itoa(i) + "\n")
	}
	expect("sort --parallel=2 (threads)", nil, run("1\n", nums.String(), "/bin/sh", "-c", "sort --parallel=2 -n | head -n 1"))
	return failed
}

// setidChecks tries to give a file of its own the setuid and setgid bits,
// in a directory it makes and removes.
func setidChecks(expect func(string, error, error), call func(uintptr, ...uintptr) error) (failed int) {
	dir, err := os.MkdirTemp("", "forgebox-seccomp-setid-")
	if err != nil {
		expect("mkdir temp", nil, err)
		return 1
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("#!/bin/sh\n"), 0o755); err != nil {
		expect("create file", nil, err)
		return 1
	}
	before := failed
	mode := func(path string) error {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			return err
		}
		if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
			return fmt.Errorf("%s has mode %#o", path, st.Mode&0o7777)
		}
		return nil
	}
	p, _ := unix.BytePtrFromString(file)
	expect("chmod(f, 04755)", unix.EPERM, unix.Chmod(file, 0o4755))
	expect("chmod(f, 02755)", unix.EPERM, unix.Chmod(file, 0o2755))
	expect("chmod(f, 0xdeadbeef00004755)", unix.EPERM, call(unix.SYS_CHMOD, uintptr(unsafe.Pointer(p)), 0xdeadbeef_00004755))
	expect("fchmodat(f, 06755)", unix.EPERM, unix.Fchmodat(unix.AT_FDCWD, file, 0o6755, 0))
	expect("fchmodat2(f, 04755)", unix.EPERM, call(unix.SYS_FCHMODAT2, ^uintptr(99) /* AT_FDCWD */, uintptr(unsafe.Pointer(p)), 0o4755, 0))
	runtime.KeepAlive(p)
	expect("chmod(f, 0700) is allowed", nil, unix.Chmod(file, 0o700))
	expect("mode of f", nil, mode(file))
	expect("open(g, O_CREAT, 04755)", unix.EPERM, func() error {
		fd, err := unix.Open(filepath.Join(dir, "g"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	expect("open(dir, O_TMPFILE, 02700)", unix.EPERM, func() error {
		fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o2700)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	expect("mknod(h, S_IFREG|04755)", unix.EPERM, unix.Mknod(filepath.Join(dir, "h"), unix.S_IFREG|0o4755, 0))
	expect("openat2 answers ENOSYS", unix.ENOSYS, func() error {
		fd, err := unix.Openat2(unix.AT_FDCWD, file, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC})
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	sub := filepath.Join(dir, "sub")
	expect("mkdir(sub, 06755) is allowed", nil, unix.Mkdir(sub, 0o6755))
	expect("the kernel drops mkdir's setuid and setgid bits", nil, mode(sub))
	return failed - before
}

func pair(typ int) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	return err
}

func sock(domain, typ, proto int) error {
	fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func run(want, stdin string, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	if string(out) != want {
		return fmt.Errorf("output %q, want %q", out, want)
	}
	return nil
}
