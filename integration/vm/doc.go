// Package vm runs forgebox's checks on other kernels than the host's: it
// boots Debian's 6.1 kernel (Landlock ABI 2) and the 6.12 kernel from
// bookworm-backports (Landlock ABI 6) under QEMU with software emulation,
// with cgroup v2 alone or with v1 controllers, from an initramfs holding
// busybox, a static forgebox and the guest checks (./guest). Each check
// becomes a subtest of TestVM.
//
// What it shows: that on each kernel forgebox enforces what the kernel has,
// and fails closed (or, with --best-effort, reports) what it lacks; and the
// kernel's facts (Landlock ABI, cgroup layout) beside what forgebox doctor
// says of them. What it does not: anything about hardware, KVM, or kernels
// configured unlike Debian's.
//
// The tests skip unless FORGEBOX_VM=1. `make vmtest` runs ./setup (QEMU,
// the kernels and busybox, cached in .cache) and then the tests. Other
// variables: FORGEBOX_BIN (the forgebox to test instead of building one),
// FORGEBOX_VM_EXTRA (more static programs for the VM's /bin, separated by
// spaces), FORGEBOX_VM_RUN (a regexp: only the guest checks it matches),
// FORGEBOX_VM_KEEP (a directory that receives the initramfs and each
// boot's console log).
package vm
