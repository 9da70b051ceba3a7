//go:build cgo

package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSyscallNumbersAMD64 checks libseccomp's name table (and the fallback
// for names it lacks) against x/sys/unix, which comes from the kernel's.
func TestSyscallNumbersAMD64(t *testing.T) {
	want := map[string]int{
		"ptrace": unix.SYS_PTRACE, "process_vm_readv": unix.SYS_PROCESS_VM_READV,
		"process_vm_writev": unix.SYS_PROCESS_VM_WRITEV, "pidfd_getfd": unix.SYS_PIDFD_GETFD,
		"kexec_load": unix.SYS_KEXEC_LOAD, "kexec_file_load": unix.SYS_KEXEC_FILE_LOAD,
		"init_module": unix.SYS_INIT_MODULE, "finit_module": unix.SYS_FINIT_MODULE,
		"delete_module": unix.SYS_DELETE_MODULE, "bpf": unix.SYS_BPF,
		"perf_event_open": unix.SYS_PERF_EVENT_OPEN, "userfaultfd": unix.SYS_USERFAULTFD,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER, "keyctl": unix.SYS_KEYCTL,
		"add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY,
		"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT,
		"move_mount": unix.SYS_MOVE_MOUNT, "open_tree": unix.SYS_OPEN_TREE,
		"open_tree_attr": unix.SYS_OPEN_TREE_ATTR, "fsopen": unix.SYS_FSOPEN,
		"fsmount": unix.SYS_FSMOUNT, "fsconfig": unix.SYS_FSCONFIG, "fspick": unix.SYS_FSPICK,
		"mount_setattr": unix.SYS_MOUNT_SETATTR, "unshare": unix.SYS_UNSHARE, "setns": unix.SYS_SETNS,
		"syslog": unix.SYS_SYSLOG, "acct": unix.SYS_ACCT, "swapon": unix.SYS_SWAPON,
		"swapoff": unix.SYS_SWAPOFF, "reboot": unix.SYS_REBOOT, "sethostname": unix.SYS_SETHOSTNAME,
		"setdomainname": unix.SYS_SETDOMAINNAME, "settimeofday": unix.SYS_SETTIMEOFDAY,
		"clock_settime": unix.SYS_CLOCK_SETTIME, "clock_adjtime": unix.SYS_CLOCK_ADJTIME,
		"adjtimex": unix.SYS_ADJTIMEX, "quotactl": unix.SYS_QUOTACTL, "quotactl_fd": unix.SYS_QUOTACTL_FD,
		"vhangup": unix.SYS_VHANGUP, "iopl": unix.SYS_IOPL, "ioperm": unix.SYS_IOPERM,
		"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT, "uselib": unix.SYS_USELIB,
		"lookup_dcookie": unix.SYS_LOOKUP_DCOOKIE, "clone3": unix.SYS_CLONE3, "clone": unix.SYS_CLONE,
		"personality": unix.SYS_PERSONALITY, "ioctl": unix.SYS_IOCTL, "socket": unix.SYS_SOCKET,
		"socketpair": unix.SYS_SOCKETPAIR, "chmod": unix.SYS_CHMOD, "fchmod": unix.SYS_FCHMOD,
		"fchmodat": unix.SYS_FCHMODAT, "fchmodat2": unix.SYS_FCHMODAT2, "mknod": unix.SYS_MKNOD,
		"mknodat": unix.SYS_MKNODAT, "creat": unix.SYS_CREAT, "open": unix.SYS_OPEN,
		"openat": unix.SYS_OPENAT, "openat2": unix.SYS_OPENAT2,
	}
	for _, r := range Rules(Options{RestrictNetwork: true}) {
		w, ok := want[r.Syscall]
		if !ok {
			t.Errorf("%s: add its x/sys/unix number to this test", r.Syscall)
			continue
		}
		if got, ok, err := syscallNumber(r.Syscall); err != nil || !ok || int(got) != w {
			t.Errorf("syscallNumber(%q) = %d, %v, %v; want %d", r.Syscall, got, ok, err, w)
		}
	}
}
