// Package seccomp builds the seccomp filter the sandbox child loads last,
// right before execve.
//
// The filter is data first: Rules lists every denied syscall and argument
// condition with its errno and reason, in portable code that tests run
// anywhere. Compile turns the rules into a classic BPF program with
// libseccomp (Linux, cgo; elsewhere it fails with errors.ErrUnsupported).
// This package does not load the program: the child calls
// prctl(PR_SET_NO_NEW_PRIVS, 1) and seccomp(SECCOMP_SET_MODE_FILTER) itself.
//
// # What the filter guarantees
//
// Once loaded, the filter binds the process and everything it starts; it
// cannot be removed, and filters added later can only refuse more. The
// default is to allow. Denied calls fail with an ordinary errno, not a
// signal, so programs report and carry on:
//
//   - EPERM for ptrace and the calls that reach into other processes
//     (process_vm_readv/writev, pidfd_getfd); kernel code loading (kexec,
//     modules); bpf, perf_event_open, userfaultfd and io_uring, large kernel
//     attack surface that ordinary programs do not use; the keyrings, which
//     are not namespaced; the whole mount API, old and new, including
//     open_tree_attr and quotactl; host administration (syslog, acct, swap,
//     reboot, host and domain name, setting the clocks, vhangup, iopl,
//     ioperm); open_by_handle_at, which opens files around every path-based
//     rule; uselib and lookup_dcookie, obsolete and bug-prone.
//   - No new namespaces: unshare, setns, and clone with any CLONE_NEW* flag
//     fail with EPERM, so the sandbox cannot make a user namespace to regain
//     capabilities. clone3 fails with ENOSYS because its flags are in memory
//     the filter cannot read; libc then falls back to clone, whose flags it
//     can. Threads and fork-style clones are allowed.
//   - ioctl TIOCSTI and TIOCLINUX (typing into the user's terminal) and
//     TIOCSETD (line disciplines) fail with EPERM. The request is compared
//     on its low 32 bits, which is all the kernel reads, so garbage in the
//     upper half cannot slip past.
//   - No setuid or setgid bit on anything the sandbox creates or changes: a
//     file left in a writable root outlives the run, and a setuid shell
//     made by a command running as root makes any host user root. chmod,
//     fchmod, fchmodat, fchmodat2, mknod, mknodat and creat fail with EPERM
//     when their mode has S_ISUID or S_ISGID, and open and openat when they
//     create (O_CREAT, O_TMPFILE) with such a mode. openat2 fails with
//     ENOSYS: its mode sits in a struct the filter cannot read, and its
//     callers (systemd, runc; not glibc 2.36's open, Go's os package, nor
//     Python) fall back to openat. mkdir needs no rule: the kernel keeps
//     only a directory's permission and sticky bits, and setgid comes only
//     from a setgid parent the host made. Capabilities are all dropped, so
//     security.capability xattrs cannot be written either.
//   - Unless Options.AllowUnixSockets, socket(AF_UNIX) fails with EPERM, and
//     so do datagram socketpairs (SOCK_DGRAM, and SOCK_RAW, which AF_UNIX
//     turns into datagram): the sandbox holds no Unix socket that can
//     connect or send to a pathname socket, so a host socket bound after
//     the start, which no mount covers and Landlock does not stop, stays
//     out of reach. Stream and seqpacket socketpairs, born connected, stay
//     allowed for IPC between the sandbox's own processes. With
//     AllowUnixSockets, a host socket bound after the start in a directory
//     the sandbox sees is reachable.
//   - socket() works for AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK only.
//     Every other family fails with EPERM: AF_VSOCK reaches the hypervisor
//     past any network namespace, AF_PACKET sees raw frames, and the rarely
//     used families are where unprivileged kernel exploits keep turning up.
//     With Options.RestrictNetwork, IPPROTO_MPTCP sockets fail with
//     EPROTONOSUPPORT, the kernel's own answer when MPTCP is missing, so Go
//     and others fall back to plain TCP, which Landlock's rules do see.
//   - personality() may only query (0xffffffff) or set PER_LINUX,
//     PER_LINUX32 and UNAME26; turning off ASLR (ADDR_NO_RANDOMIZE), making
//     data executable (READ_IMPLIES_EXEC) and the other flags fail with
//     EPERM.
//   - Syscalls through another ABI kill the process with SIGSYS
//     (SECCOMP_RET_KILL_PROCESS): on amd64 the i386 entry points (int 0x80,
//     sysenter) and x32 numbers (nr | 0x40000000), on arm64 the 32-bit ARM
//     ABI. A denylist written for one syscall table says nothing about
//     another, no ordinary 64-bit program switches ABI, and SIGSYS in the
//     run's result names the cause where an errno would surface as some odd
//     failure later. 32-bit programs therefore cannot run in the sandbox.
//     A syscall number of -1, which tracers use to skip a call, reaches the
//     kernel and gets ENOSYS.
//
// # Attribution: the supervisor's copy
//
// With Options.Attribute, Compile also builds Program.Notify, the same
// filter with two differences, for a supervisor that reports what the
// sandbox refused (seccomp_unotify(2), Linux 5.5 for CONTINUE):
//
//   - Every refusal except the Fallback ones returns
//     SECCOMP_RET_USER_NOTIF instead of its errno. The supervisor answers
//     with exactly the errno BPF returns (Program.Decide evaluates the same
//     Rules) and records the syscall's name. It never answers CONTINUE to a
//     refused call, and Decide fails closed (EPERM) on anything it cannot
//     place. If the supervisor is gone (forgebox killed, its listener
//     closed), the kernel answers these calls ENOSYS: still a refusal, with
//     another errno, and only while the sandbox dies with forgebox.
//     Fallbacks (clone3, openat2, MPTCP sockets) stay plain errnos:
//     glibc's fork and Go's net.Listen hit them on every call, and they are
//     answers callers expect, not refusals.
//   - With Options.ObserveNetwork, connect and sendto with a destination
//     address (Watches) go to the supervisor too, which reads the address
//     from the caller's memory, records it when the run's network cannot
//     reach it, and answers CONTINUE: the kernel then does what it would
//     have done without the filter. This is observation, never a security
//     decision (the address may change between the read and the kernel's;
//     seccomp_unotify(2) says as much). sendmsg and sendmmsg are not
//     watched: their addresses sit in a msghdr the filter cannot test, and
//     watching every one would cost a round trip per message.
//
// Writes the read-only view refuses (EROFS) are not watched. Sending every
// write-intent open, mkdir, unlink, rename and the like to the supervisor
// cost +64% to +77% on a loop creating and writing 10,000 files (a round
// trip is tens of microseconds), far from free, and an open watched for
// O_CREAT overlaps the setid rules on open and openat, which libseccomp
// refuses in one program (EEXIST).
//
// A watch on a syscall that rules also refuse is refused at compile time:
// which of two overlapping libseccomp rules wins is libseccomp's choice,
// and the plain program must not depend on it.
//
// Both programs come out of one libseccomp compilation: refusals are
// compiled as SECCOMP_RET_TRACE|errno and watches as SECCOMP_RET_LOG,
// markers that the two loaded programs rewrite (to the errno and to allow
// in BPF, to SECCOMP_RET_USER_NOTIF in Notify). Neither marker is ever
// loaded.
//
// What attribution changes for programs in the sandbox: a process whose
// filter stack has a listener cannot load another filter with
// SECCOMP_FILTER_FLAG_NEW_LISTENER (EBUSY), so container runtimes and
// supervisors that need user notification themselves (crun, LXC, some
// sandboxes of their own) fail inside forgebox's sandbox. Filters without
// a listener load as before. A refused or watched call now waits for a
// round trip to the supervisor: about 40 microseconds on a loaded 2-core
// VM, so 1,000 loopback connects went from 35-37 ms to 71-82 ms; more
// when the CPUs are contended, since forgebox must be scheduled to answer
// (a median of 3.4x at a load average of 12 on 2 cores). Every
// other call never leaves the kernel, and with the host's network nothing
// is watched.
//
// # What it does not
//
// The filter is a denylist over a default of allow. It does not confine
// files, network or resources: Landlock, the namespaces and cgroups do.
// It cannot read memory, so it sees no paths, socket addresses or structs
// (hence clone3's ENOSYS). Kernel bugs in allowed syscalls stay reachable;
// the filter removes attack surface, it does not remove bugs. It covers
// only what runs after it is loaded, and only if the child sets
// no_new_privs before loading it (without it the kernel refuses the load
// unless the child holds CAP_SYS_ADMIN). A program can tell it is
// filtered.
//
// # Deliberate choices
//
// Refused whole although part of them is harmless: adjtimex and
// clock_adjtime (a read-only call with modes 0, as ntp_gettime makes, also
// gets EPERM: the modes sit in memory) and unshare (also for CLONE_FILES or
// CLONE_FS, which need no privilege and which ordinary programs rarely use).
// socket() compares the family on all 64 bits, so a family with garbage
// in the upper half fails closed with EPERM even when its low half is
// AF_INET; libc and Go sign-extend, so real programs never do this.
//
// Allowed on purpose: name_to_handle_at (a handle is useless without
// open_by_handle_at), kcmp (compares, and needs ptrace read access),
// chroot (needs CAP_SYS_CHROOT and cannot leave the mount namespace),
// mknod without setuid or setgid (mkfifo), seccomp, landlock_* and prctl (they only add
// restrictions), pidfd_open and pidfd_send_signal (Go and Python use them),
// fanotify (the unprivileged mode is like inotify), listmount and statmount
// (read-only, like /proc/self/mountinfo), pkey_*, memfd_*, process_madvise,
// and modify_ldt (Wine). Left to the kernel's ENOSYS: syscalls Linux has
// removed (nfsservctl, create_module, _sysctl) and those that exist only
// for 32-bit ABIs (stime, vm86), whose callers the architecture check
// already kills.
//
// Compile supports amd64 and arm64, where clone's flags are its first
// argument and errno values follow asm-generic; elsewhere it fails with
// errors.ErrUnsupported rather than guess. Syscalls newer than the
// libseccomp it is built with (open_tree_attr; fchmodat2 where it is
// unknown, though Debian 12's 2.5.4 resolves it to 452) take their numbers
// from golang.org/x/sys/unix.
package seccomp
