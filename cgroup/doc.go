// Package cgroup limits the memory, tasks and CPU of one sandboxed run,
// measures what the run used, and removes what it created afterwards. It
// uses cgroup v1 (one hierarchy per controller, as on hybrid hosts) and
// cgroup v2, through github.com/containerd/cgroups/v3 on the static
// hierarchy (never systemd or D-Bus). Where the caller cannot create
// cgroups it says why, and plans the one stand-in that is honest.
//
// A run uses it like this:
//
//	h := cgroup.Probe()             // once per process; doctor shows it
//	cgroup.CleanStale(ctx, h)       // groups of forgebox processes that died
//	d := cgroup.Plan(limits, h)     // limits: cgroup.DefaultLimits(h.MemoryBytes, h.CPUs)
//	if d.UsesCgroup() {
//		g, err := cgroup.Create(h, runID, d.Cgroup())
//		// v2: f, _ := g.Dir(); the child's PID 1 clones the command with
//		//     clone3(CLONE_INTO_CGROUP, f), so it starts inside the group;
//		// v1 (Dir fails with ErrCgroupV1), or when clone3 is refused:
//		//     the command writes "0" to each of g.JoinFiles() before
//		//     exec (or the parent calls g.Add(pid) for a process it knows).
//		s, _ := g.Stats()         // after the command exits
//		g.Destroy(ctx)            // always, with a context of its own
//	}
//	// The child sets d.Rlimits after entering its user namespace, before exec.
//
// Where groups go. A group is named forgebox-PID-START-PIDNS-ID after the
// forgebox process that made it (pid, start time, pid namespace), so that
// CleanStale can tell the groups of dead processes from those of live ones,
// and a reused pid from its first owner. On cgroup v1 groups sit at the top
// of the memory, pids and cpuacct hierarchies (the cpu hierarchy too for a
// CPU limit): only root can create them there, and v1 has no delegation
// the kernel documents as safe. On cgroup v2 root puts them at the top of
// the hierarchy, enabling the controllers in its subtree_control (the root
// group is exempt from the no-internal-processes rule). Another user gets
// groups only where the kernel will let it move a command out of its own
// cgroup: that needs write access to cgroup.procs of the common ancestor,
// the parent of the caller's cgroup, so groups go there, as its siblings.
// Under systemd that holds inside user@UID.service (for example from
// systemd-run --user --scope -p Delegate=yes), not in a login session's
// session-N.scope, whose parent belongs to root; Probe's Why says so.
//
// What it guarantees, for the limits Plan gives to a cgroup, once the
// command runs inside the group:
//   - memory: the tree's memory, swap included, stays under MemoryBytes; at
//     the limit the kernel reclaims and then OOM-kills inside the group only
//     (v1 memory.limit_in_bytes and memory.memsw.limit_in_bytes; v2
//     memory.max with memory.swap.max 0, since v2 has no combined knob);
//   - pids: at most Pids tasks (threads count) at once; forks past it fail
//     with EAGAIN (pids.max);
//   - cpus: at most CPUs cores of CPU time per 100 ms period (cfs quota,
//     cpu.max);
//   - Destroy leaves no process of the group and no directory behind, for a
//     group killed mid-run too; on v1 it SIGKILLs each process through a
//     pidfd after checking it is still in the group, so a reused pid is
//     never signalled; on v2 it writes cgroup.kill (Linux 5.14+).
//
// What it does not guarantee: that the command cannot change its own
// limits. The group's files belong to the caller, and the sandboxed
// command runs as the same user (for a delegated user) or as a uid 0 that
// may map to root: the sandbox must keep /sys/fs/cgroup read-only or out of
// sight, and deny mounting a new cgroup filesystem. Nor does it cover a
// process the caller moves out of the group, memory the kernel does not
// charge to a cgroup, or swap on v1 hosts booted without swap accounting
// (Probe's Why says so). Under systemd, a slice's subtree_control is
// systemd's to rewrite; a Delegate=yes scope keeps the controllers on.
//
// Without a usable cgroup (cgroup v1 as an ordinary user, v2 without
// delegation, no cgroup filesystem), Plan falls back where a resource limit
// is an honest equivalent, and only there (measured on Linux 6.18):
//
//   - pids: RLIMIT_NPROC, set by the child inside the sandbox's own user
//     namespace. Since Linux 5.14 the kernel counts it per user namespace
//     (ucounts): a fork is checked against the count of tasks of the
//     sandbox's namespace, and against the caller's own limit one level up,
//     so the limit holds for every descendant and the caller's other
//     processes do not use it up. Measured with a limit of 40 and 25 other
//     tasks of the same user outside: in a new user namespace the bomb got
//     36 forks + 4 threads = 40 tasks and then EAGAIN, while the user could
//     still start processes outside; without a user namespace it got 6 + 4,
//     the other 30 going to the user's other processes. Not for root: the
//     kernel never applies RLIMIT_NPROC to uid 0 (nor before 5.14, when it
//     counted every process of the user).
//   - memory: none. RLIMIT_AS caps virtual address space per process, not
//     the tree's memory: this Go test binary reserves 1.2 GiB of address
//     space for 6 MiB resident, a JVM 9 GiB for 88 MiB and fails to start
//     under a 1 GiB cap, and node reserves 10.7 GiB the moment it creates a
//     64 KiB WebAssembly memory, so it dies under an 8 GiB cap; and N
//     processes get N times the cap.
//   - cpus: none. RLIMIT_CPU caps the CPU seconds of each process, not a
//     share of the CPUs.
//
// Cost, measured here (cgroup v1, 2 loaded CPUs; median of Create + Add +
// Stats + Destroy once the command has exited): 0.75-0.85 ms with the
// default limits (memory, pids, cpuacct), within a few percent of the same
// system calls made by hand; 0.27-0.35 ms for a pids-only group. The
// memory controller is most of it, cpuacct (CPU time) about 0.1 ms. The
// benchmark in bench_linux_test.go prints both.
//
// containerd/cgroups does the hierarchy work: the host's mode, creating
// groups and writing limits (cgroup1.New, cgroup2 ToggleControllers and
// Update), moving processes (AddProc). Plain files do what it lacks or does
// too slowly for a cost every run pays: exclusive mkdir (its New adopts an
// existing group), memory.swap.max only where it exists, the clone3
// directory descriptor, cgroup.kill (its Kill falls back to reaping the
// caller's children, stealing the sandbox child's exit status), reading
// Stats (four files instead of every file of every controller) and removal
// (one rmdir per directory instead of a walk with an lstat per file).
package cgroup
