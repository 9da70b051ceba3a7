// Package sandbox starts one command in an isolated child and returns its
// result.
//
// On Linux an ELF constructor (init_linux.c) runs before the Go runtime
// starts. For forgebox run it forks the child at once (the prefork); other
// callers re-execute the binary with a hidden verb and the constructor takes
// over there. The child enters new user, PID, mount, IPC, UTS and (unless the
// network is shared) network namespaces, builds the base view, receives the
// rest of the run (a mount plan computed here in Go, argv, environment, stdio)
// over an inherited socket, applies it, and execs the command on its own
// session. The child never starts a Go runtime: that keeps
// a launch below bubblewrap's cost and keeps the child single-threaded, so
// every kernel restriction applies to the whole process.
//
// The Linux protocol (sync_linux.go, wire.go, init_linux.c). One stream
// socketpair; the child's end is fd 3 (syncFD), and nothing else above
// stdio is inherited. Its stdio (forgebox's when preforked, /dev/null when
// re-executed) is replaced by the streams the view carries. Frames are
// {u32 len, u8 type, payload}; descriptors ride as SCM_RIGHTS on a frame's
// first bytes.
//
//	forgebox (Go)                  stage 0 (host PID ns)     PID 1                    command
//	prefork: the constructor of
//	 `forgebox run` forks ───────> flags ISOLATE|NEWNET
//	or re-exec: ForkExec
//	 /proc/self/exe FB_VERB ─────> reads the first frame:
//	 msgSpec {flags, ids} ───────>
//	                               setsid; unshare user, mnt,
//	                               pid, ipc, uts[, net]; ID
//	                               maps; lo up; hostname;
//	                               fork ──────────────────> base view (ro host,
//	                               waitpid(PID 1)           /proc, /dev, /tmp)
//	 msgView {argv, env, cwd,
//	  mounts, rules, seccomp
//	  [+ its notifying twin],
//	  rlimits, ...} + fds: stdio,
//	  [ruleset] [cgroup dir]
//	  [join files] ───────────────────────────────────────> mounts (clone,
//	                                                        attach, tmpfs,
//	                                                        hide, overlay of
//	                                                        each private
//	                                                        cache ...); [proxy
//	                                                        listener]; [pty];
//	                                                        fork ──────────────> cgroup, session, cwd,
//	                                                        CLOEXEC seqpacket:   rlimits, no_new_privs,
//	                                                        [listener] <──────── Landlock, caps, seccomp
//	                                                        EOF = exec'd <────── (the twin with a
//	                                                                             listener, or the plain
//	                                                                             filter), exec
//	 <─────────────────────────────────────── msgReady {pid, marks, cache
//	                                          fallbacks} + [pidfd of PID 1]
//	                                          [pty master] [proxy listener]
//	                                          [seccomp listener]; PID 1 drops
//	                                          its caps and closes its copy of
//	                                          the listener
//	 seccomp listener: RECV ──────────────────────────────────────────────────> (notified calls wait)
//	  <───── refusals (errno), watched connect/sendto (CONTINUE) ─────────────>
//	 signals: pidfd_send_signal ──────────────────────────> kill(-command, sig)
//	 <─────────────────────────────────────── msgExit {status, rusage}, once
//	                                          the rest of the tree is killed
//	                               exits with <──────────── and reaped; exit
//	                               PID 1's status
//	 reaps stage 0 (its pidfd)
//
// Attribution (observe_linux.go, seccomp/doc.go): the command loads the
// filter's notifying twin with SECCOMP_FILTER_FLAG_NEW_LISTENER and hands
// the listener to PID 1 on its report socket before exec; PID 1 passes it
// on with msgReady (readyNotify) and keeps no copy. From then on forgebox
// answers every notification: a refused syscall with the filter's own
// errno, a watched connect or sendto with CONTINUE, after reading its
// destination from the caller's memory (process_vm_readv, then
// SECCOMP_IOCTL_NOTIF_ID_VALID). What it saw is Result.Refusals; it never
// parses output. Where the kernel makes no listener the command loads the
// plain filter and the run goes unobserved (Result.Attribution false). If
// forgebox dies, the kernel answers the notified calls ENOSYS, and the
// tree dies with forgebox anyway.
//
// A preforked child whose guess was wrong (the host network, no
// namespaces) is discarded: the parent closes its socket and re-execs.
//
// Errors: a failing step in stage 0 or PID 1, or in the command before
// exec (sent to PID 1 on its report socket), ends in one msgError {errno, step,
// message} and exit 125. The parent turns it into a SetupError (an
// ExecError for step "exec", an UnavailableError for "namespaces"); EOF
// without a message is a child that "ended without reporting". Stage 0
// dies with forgebox (parent-death SIGKILL) and PID 1 with stage 0; in
// supervision PID 1 also exits, taking the tree, on EOF of fd 3. Closing
// the socket before the view is how the parent aborts a child cleanly.
// Without a PID namespace (--best-effort) PID 1 is a subreaper and kills
// the tree itself, on sigKillTree (FB_SIG_KILL_TREE) instead of SIGKILL.
//
// What it guarantees, when Run returns without error and Enforced.Sandbox is
// true:
//   - the host filesystem is read-only to the command, recursively (writes,
//     chmod, chown, utime and xattr changes fail with EROFS), except the
//     writable roots (the workspace and --rw paths);
//   - the package caches (package caches: ~/.cache, Go's module cache,
//     ~/.npm, ...) are writable, but what the command writes there lands
//     in a cache private to forgebox and the workspace (an overlay whose
//     upper layer the command cannot reach by any other path, or where
//     overlay is refused a private directory alone): the host's cache
//     directories never change (Enforced.Caches, Spec.NoCache);
//   - protected paths inside writable roots (.git/hooks, .git/config, shell rc
//     files, editor and agent configuration) are read-only when they exist at
//     the start; a missing .git/hooks or .git/commondir is held by a
//     placeholder; anything created at another missing protected name is
//     moved aside (quarantined) once the tree is dead;
//   - the workspace repository's .git/config is the exception: the command
//     gets a private copy (a symlink to it mounted over the file, so that
//     git's lock-and-rename works), and once the tree is dead the changes
//     to ordinary keys (gitConfigKey) are carried into the real file and
//     the others quarantined; the real file never holds a key the run set
//     while the run goes on;
//   - credential locations under the caller's home, /etc secrets and --hide
//     paths show up empty; /run, /tmp, /var/tmp and /dev/shm are private;
//     every pathname Unix socket bound on the host at launch is covered;
//   - the command sees only its own processes, has no capabilities, cannot
//     gain privileges through setuid binaries, and has no controlling
//     terminal outside its own pseudo-terminal;
//   - the whole process tree dies when the command exits, on timeout, and
//     when forgebox itself dies;
//   - with NetNone (and NetLoopback, its older name) the command has only
//     its own loopback: it may bind and connect there (a test suite's local
//     server), but no host address, the host's loopback included, is
//     reachable from inside, and nothing outside reaches a server inside;
//     with NetAllow its only way out is the allowlist proxy (package
//     netproxy), which listens on that loopback in a socket PID 1 opened and
//     forgebox serves from outside, and Landlock (ABI 4+) refuses every TCP
//     bind and every TCP connect to another port. A NetNone run that
//     --best-effort lets go on without namespaces would share the host's
//     loopback: Landlock (ABI 4+) then refuses TCP bind and connect.
//
// What it does not guarantee: protection against kernel bugs; confidentiality
// of files readable through the read-only host view other than the hidden
// locations; protection of Git repositories created during the run; sockets
// bound on the host after the launch; abstract Unix sockets when the network
// is shared (those need Landlock scoping). Writes through file descriptors the
// caller hands over as stdin, stdout or stderr go where the caller pointed
// them.
//
// On macOS (seatbelt_darwin.go) the command runs under sandbox-exec with a
// profile generated from the spec (sbpl.go); on Windows (sandbox_windows.go)
// under a restricted token at Low integrity, in a job object, on a ConPTY.
// Neither has namespaces: what each enforces is narrower, and every layer
// it cannot apply is refused or, with BestEffort, listed in
// Enforced.Missing. The table in docs/platforms.md is the account of what each
// platform enforces. The platform-neutral parts (the profile generator,
// Windows path containment, the job limits) are in unsuffixed files, so
// Linux CI tests them.
package sandbox
