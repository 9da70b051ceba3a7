package probe

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelOp attempts what the kernel layers (seccomp, capabilities,
// no_new_privs) must refuse. ok is false for an unknown op.
func kernelOp(op string, a []string) (out string, err error, ok bool) {
	ok = true
	switch op {
	case "ptrace-parent": // attach to PID 1 of the sandbox (or any process given)
		pid := os.Getppid()
		if p := arg(a, 0); p != "" {
			fmt.Sscan(p, &pid)
		}
		err = errnoErr(unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_ATTACH, uintptr(pid), 0, 0, 0, 0))
		if err == nil {
			unix.PtraceDetach(pid)
		}
	case "process-vm-readv":
		var b [8]byte
		local := unix.Iovec{Base: &b[0], Len: 8}
		remote := unix.RemoteIovec{Base: uintptr(unsafe.Pointer(&b[0])), Len: 8}
		_, err = unix.ProcessVMReadv(os.Getppid(), []unix.Iovec{local}, []unix.RemoteIovec{remote}, 0)
	case "unshare-user":
		err = unix.Unshare(unix.CLONE_NEWUSER)
	case "unshare-mount":
		err = unix.Unshare(unix.CLONE_NEWNS)
	case "clone-newuser": // the raw clone syscall, as libc's fallback from clone3 would issue it
		r, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.CLONE_NEWUSER|unix.SIGCHLD), 0, 0, 0, 0, 0)
		if e == 0 && r == 0 {
			unix.RawSyscall(unix.SYS_EXIT, 0, 0, 0)
		}
		if e == 0 {
			var ws unix.WaitStatus
			unix.Wait4(int(r), &ws, 0, nil)
		} else {
			err = e
		}
	case "clone3":
		err = errnoErr(unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0))
	case "setns":
		fd, e := unix.Open("/proc/self/ns/net", unix.O_RDONLY, 0)
		if e != nil {
			return "", e, true
		}
		err = unix.Setns(fd, 0)
		unix.Close(fd)
	case "io-uring-setup":
		var params [120]byte
		err = errnoErr(unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0))
	case "bpf":
		var attr [128]byte
		err = errnoErr(unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&attr[0])), uintptr(len(attr))))
	case "perf-event-open":
		var attr unix.PerfEventAttr
		attr.Type, attr.Size, attr.Config = unix.PERF_TYPE_SOFTWARE, uint32(unsafe.Sizeof(attr)), unix.PERF_COUNT_SW_CPU_CLOCK
		fd, e := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
		if e == nil {
			unix.Close(fd)
		}
		err = e
	case "keyctl":
		_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0)
	case "add-key":
		_, err = unix.AddKey("user", "forgebox-probe", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
	case "init-module":
		err = errnoErr(unix.Syscall(unix.SYS_INIT_MODULE, 0, 0, 0))
	case "finit-module":
		err = unix.FinitModule(0, "", 0)
	case "kexec-load":
		err = errnoErr(unix.Syscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0))
	case "userfaultfd":
		err = errnoErr(unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0))
	case "socket": // socket FAMILY [PROTO]
		fam := map[string]int{"packet": unix.AF_PACKET, "vsock": unix.AF_VSOCK, "inet": unix.AF_INET, "unix": unix.AF_UNIX}[arg(a, 0)]
		typ, proto := unix.SOCK_STREAM, 0
		switch arg(a, 1) {
		case "mptcp":
			proto = unix.IPPROTO_MPTCP
		case "raw":
			typ = unix.SOCK_RAW
		}
		if fam == unix.AF_PACKET {
			typ = unix.SOCK_RAW
		}
		fd, e := unix.Socket(fam, typ, proto)
		if e == nil {
			unix.Close(fd)
		}
		err = e
	case "personality": // change to an execution domain: READ_IMPLIES_EXEC
		err = errnoErr(unix.Syscall(unix.SYS_PERSONALITY, 0x0400000, 0, 0))
	case "tiocsti-high": // TIOCSTI with garbage in the upper 32 bits of the request
		c := byte('x')
		err = errnoErr(unix.Syscall(unix.SYS_IOCTL, 0, uintptr(0xdeadbeef00000000|unix.TIOCSTI), uintptr(unsafe.Pointer(&c))))
	case "caps": // the capability sets and no_new_privs, from /proc/self/status
		b, e := os.ReadFile("/proc/self/status")
		if e != nil {
			return "", e, true
		}
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp:"} {
				if strings.HasPrefix(l, k) {
					keep = append(keep, strings.Join(strings.Fields(l), " "))
				}
			}
		}
		out = strings.Join(keep, ";")
	case "setuid-root":
		err = unix.Setuid(0)
	case "exec": // exec a program and report what it printed (a setuid binary, say)
		out, err = runProgram(a)
	default:
		ok = false
	}
	return out, err, ok
}

func errnoErr(_, _ uintptr, e syscall.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

func runProgram(a []string) (string, error) {
	if len(a) == 0 {
		return "", fmt.Errorf("exec: no program")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	p, err := os.StartProcess(a[0], a, &os.ProcAttr{Files: []*os.File{nil, w, w}})
	w.Close()
	if err != nil {
		r.Close()
		return "", err
	}
	b := make([]byte, 4096)
	n, _ := r.Read(b)
	r.Close()
	p.Wait()
	return strings.TrimSpace(string(b[:n])), nil
}
