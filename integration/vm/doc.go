// Package vm runs forgebox's checks on other kernels than the host's: it
// boots Debian's 6.1 kernel (Landlock ABI 2), the 6.12 kernel from
// bookworm-backports (Landlock ABI 6), both with cgroup v2 alone or with
// v1 controllers, and Debian 11's 5.10 LTS kernel (no Landlock, no
// mount_setattr, RLIMIT_NPROC not counted per user namespace) with cgroup
// v2, under QEMU with software emulation, from an initramfs holding
// busybox, a static forgebox and the guest checks (./guest). Each check
// becomes a subtest of TestVM.
//
// What it shows: that on each kernel forgebox enforces what the kernel has,
// and fails closed (or, with --best-effort, reports) what it lacks: a
// plain run refused (exit 125, the missing layer named, with a hint) with
// nothing of its command done and nothing left on the guest; a
// --best-effort run that claims no more than it enforces, its namespaces,
// read-only view, seccomp (ptrace, a user namespace, keyrings, io_uring
// refused though the guest allows them), capabilities and Landlock held
// against what the command sees, and everything else listed missing and
// warned about; the workspace repository's Git config given as a private
// copy through a symlink mounted over it (open_tree of a link, move_mount
// onto a file), ordinary keys carried back and core.fsmonitor refused; on 5.10, where --best-effort runs without any sandbox,
// the layers that need no namespaces still hold (seccomp, cgroup limits,
// the whole tree killed at the end and on timeout); the Landlock ABI it
// applies and the features it lists missing, attacked through TCP on the
// sandbox's loopback and the guest's abstract sockets;
// memory and task limits through cgroup v1 or v2 (a hog OOM-killed, a fork
// loop refused), or through RLIMIT_NPROC for a user without a cgroup, the
// command inside the reported group, and no group or process left after a
// run, after a forgebox killed with SIGKILL, or after twenty runs under a
// subreaper that never reaps. The kernel's facts (Landlock ABI, cgroup
// layout) stand beside what forgebox doctor says of them, and the host
// test holds its own account of what each boot must report
// (expectations). What it does not: anything about hardware, KVM, or
// kernels configured unlike Debian's. A check that fails because of a
// known forgebox bug is listed in knownBugs and reported as a skip naming
// the bug.
//
// The tests skip unless FORGEBOX_VM=1; with it, a missing QEMU or kernel
// fails them. `make vmtest` (run by .ci/run after make test) runs ./setup
// (QEMU, the kernels and busybox, cached in .cache; it fails when the
// Debian mirror cannot be reached) and then the tests. Other
// variables: FORGEBOX_BIN (the forgebox to test instead of building one),
// FORGEBOX_VM_EXTRA (more static programs for the VM's /bin, separated by
// spaces), FORGEBOX_VM_RUN (a regexp: only the guest checks it matches),
// FORGEBOX_VM_KEEP (a directory that receives the initramfs and each
// boot's console log).
package vm
