/* Wire constants shared by init_linux.c and the Go parent (wire.go).
 * TestWireConstantsMatchC checks that both sides agree. */
#ifndef FORGEBOX_INIT_LINUX_H
#define FORGEBOX_INIT_LINUX_H

#define FB_VERB "__forgebox-init"
#define FB_SYNC_FD 3
#define FB_MAX_FRAME (16 << 20)

enum fb_msg { FB_MSG_SPEC = 1, FB_MSG_READY = 2, FB_MSG_ERROR = 3, FB_MSG_EXIT = 4, FB_MSG_VIEW = 5 };

enum fb_tag {
	FB_TAG_FLAGS = 1,
	FB_TAG_UID_OUT = 2,
	FB_TAG_GID_OUT = 3,
	FB_TAG_UID_IN = 4,
	FB_TAG_GID_IN = 5,
	FB_TAG_ARG = 6,
	FB_TAG_ENV = 7,
	FB_TAG_CWD = 8,
	FB_TAG_PATH = 9,
	FB_TAG_MOUNT = 11,
	FB_TAG_WINSIZE = 12,
	FB_TAG_ALT_ARG0 = 13,
	FB_TAG_SLOTS = 14,
	FB_TAG_RUN_FLAGS = 15,
	FB_TAG_FDS = 16,
	FB_TAG_RULE = 17,
	FB_TAG_SECCOMP = 18,
	FB_TAG_RLIMIT = 19,
	FB_TAG_PROXY_PORT = 20,
	FB_TAG_SECCOMP_NOTIFY = 21,
};

/* Flags of the first frame: how stage 0 starts. Without FB_FLAG_ISOLATE
 * there is no PID namespace, and PID 1 always becomes a child subreaper
 * (kill_leftovers needs the orphans). */
enum fb_flag {
	FB_FLAG_NEWNET = 1 << 0,
	FB_FLAG_ISOLATE = 1 << 2,
};

/* Flags of the view frame: how the command runs. */
enum fb_run_flag { FB_RUN_PTY = 1 << 0 };

/* Descriptors that may follow the standard streams with the view, in this
 * order: a Landlock ruleset, a cgroup v2 directory to clone the command
 * into, then (their number in the bits from FB_FD_JOIN_SHIFT up) the
 * cgroup.procs files the command joins before exec. */
enum fb_fd { FB_FD_LANDLOCK = 1 << 0, FB_FD_CGROUP = 1 << 1, FB_FD_JOIN_SHIFT = 8, FB_MAX_JOIN = 8 };

/* What the ready message carries, in this order: a pidfd of PID 1, the
 * terminal's master side, the listening socket of the network proxy, the
 * seccomp notification listener of the command's filter. */
enum fb_ready { FB_READY_PIDFD = 1 << 0, FB_READY_MASTER = 1 << 1, FB_READY_PROXY = 1 << 2, FB_READY_NOTIFY = 1 << 3 };

enum fb_op {
	FB_OP_CLONE = 1,
	FB_OP_ATTACH = 2,
	FB_OP_SETATTR = 3,
	FB_OP_TMPFS = 4,
	FB_OP_MKDIR = 7,
	FB_OP_MKFILE = 8,
	FB_OP_SYMLINK = 9,
	FB_OP_HIDE = 10,
	FB_OP_OVERLAY = 11,
};

/* FB_OPF_REQUIRED: with FB_OPF_KEEP, an overlay the kernel refuses fails
 * the run instead (the judge let the command through on undo's account).
 * FB_OPF_KEEP: an overlay the kernel refuses leaves its target as it is
 * (the workspace's undo overlay: the run then writes the workspace itself,
 * and the parent, told by the fallback bit, reports it).
 * FB_OPF_LINK: a clone whose path names a symlink clones the link itself
 * (a run's private Git config is reached through one); an attach of such a
 * clone that fails binds its target read-only instead. */
enum fb_op_flag { FB_OPF_RECURSIVE = 1 << 0, FB_OPF_DIR = 1 << 1, FB_OPF_LINK = 1 << 2, FB_OPF_KEEP = 1 << 3, FB_OPF_REQUIRED = 1 << 4 };

/* Size of a mount op record before its two strings: op, 3 bytes of
 * padding, flags, mode, slot, set, clr, dev, ino. */
#define FB_MOUNT_FIXED 48

/* The verb of `forgebox run`: the constructor starts the child for it before
 * the Go runtime, unless FB_NO_PREFORK_ENV is set. */
#define FB_RUN_VERB "run"
#define FB_NO_PREFORK_ENV "FORGEBOX_NO_PREFORK"

/* Empty entries that covers are cloned from, on a small tmpfs the base view
 * mounts here and detaches once the view is complete. */
#define FB_STAGE "/dev/.forgebox-stage"
#define FB_STAGE_DIR FB_STAGE "/d"
#define FB_STAGE_FILE FB_STAGE "/f"
/* Where the n-th private cache is attached (FB_STAGE_CACHE "n") while its
 * overlay is made: overlay takes its upper and work directories by path,
 * from a mount of this namespace. */
#define FB_STAGE_CACHE FB_STAGE "/c"

/* Without a PID namespace (--best-effort), the signal that tells PID 1 to
 * kill the command's tree and exit: its parent-death signal, and what the
 * parent sends instead of SIGKILL. */
#define FB_SIG_KILL_TREE 40

#endif
