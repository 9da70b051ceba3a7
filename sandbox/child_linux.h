/* Internal declarations of the sandbox child (init_linux.c and friends).
 * Not shared with Go: the wire constants are in init_linux.h. */
#ifndef FORGEBOX_CHILD_LINUX_H
#define FORGEBOX_CHILD_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "init_linux.h"

/* Kernel interfaces newer than some C libraries. The syscall numbers from
 * 424 on are the same on every architecture. */
#define FB_SYS_OPEN_TREE 428
#define FB_SYS_MOVE_MOUNT 429
#define FB_SYS_FSOPEN 430
#define FB_SYS_FSCONFIG 431
#define FB_SYS_FSMOUNT 432
#define FB_SYS_PIDFD_OPEN 434
#define FB_SYS_CLOSE_RANGE 436
#define FB_SYS_OPENAT2 437
#define FB_SYS_MOUNT_SETATTR 442
#define FB_SYS_LANDLOCK_ADD_RULE 445
#define FB_SYS_LANDLOCK_RESTRICT_SELF 446
#define FB_SYS_CLONE3 435

#define FB_OPEN_TREE_CLONE 1
#define FB_AT_RECURSIVE 0x8000
#define FB_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define FB_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define FB_FSOPEN_CLOEXEC 1
#define FB_FSCONFIG_SET_FLAG 0
#define FB_FSCONFIG_SET_STRING 1
#define FB_FSCONFIG_CMD_CREATE 6
#define FB_FSMOUNT_CLOEXEC 1
#define FB_RESOLVE_NO_MAGICLINKS 0x02
#define FB_RESOLVE_NO_SYMLINKS 0x04
#define FB_CLOSE_RANGE_CLOEXEC (1U << 2)
#define FB_MOUNT_ATTR_RDONLY 0x1
#define FB_MOUNT_ATTR_NOSUID 0x2
#define FB_MOUNT_ATTR_NODEV 0x4
#define FB_MOUNT_ATTR_NOEXEC 0x8

#define FB_HOSTNAME "forgebox"

struct fb_mount {
	uint8_t op;
	uint32_t flags, mode, slot;
	uint64_t set, clr, dev, ino;
	const char *a, *b;
};

/* A Landlock rule for one of the child's own mounts. */
struct fb_rule {
	uint64_t access;
	const char *path;
};

struct fb_rlimit {
	uint32_t resource;
	uint64_t soft, hard;
};

struct fb_spec {
	/* first frame (or defaults, when preforked) */
	uint32_t flags, uid_out, gid_out, uid_in, gid_in;
	/* view frame */
	uint32_t run_flags, slots;
	char **argv, **envp;
	size_t argc, envc, nmounts;
	const char *cwd, *path, *alt_arg0;
	struct fb_mount *mounts;
	uint16_t rows, cols;
	int stdio[3]; /* received with the view; -1 until then */
	/* enforcement, from the view frame */
	uint32_t fd_bits;
	int landlock_fd, cgroup_fd; /* -1 when absent */
	int join_fds[FB_MAX_JOIN];  /* cgroup.procs files to join */
	size_t njoin;
	int in_cgroup; /* the command was cloned into cgroup_fd */
	struct fb_rule *rules;
	size_t nrules;
	uint8_t *bpf; /* struct sock_filter[], copied aligned */
	size_t bpf_len;
	uint8_t *notify_bpf; /* the same filter reporting to a listener; NULL: none */
	size_t notify_len;
	struct fb_rlimit *rlimits;
	size_t nrlimits;
	uint16_t proxy_port; /* listen on 127.0.0.1:proxy_port for the parent's proxy; 0: none */
};

/* A failed step: {step, errno, message}, sent to the parent. */
struct fb_err {
	const char *step;
	int err;
	char msg[512];
};

struct fb_term {
	int master, slave;
};

/* wire_linux.c */
int fb_fail(struct fb_err *e, const char *step, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void put_le32(uint8_t *p, uint32_t v);
void put_le64(uint8_t *p, uint64_t v);
int send_frame(uint8_t type, const uint8_t *payload, size_t n, const int *fds, int nfds);
void report_error(const struct fb_err *e);
__attribute__((noreturn)) void die(const struct fb_err *e);
int read_spec(uint8_t type, struct fb_spec *s, struct fb_err *e);
int read_view(struct fb_spec *s, struct fb_err *e);
void mark(const char *step);
size_t encode_marks(uint8_t *p, size_t room);

/* view_linux.c */
int open_path(const char *path, uint64_t dev, uint64_t ino, const char *what, struct fb_err *e);
int build_base_view(struct fb_err *e);
int apply_view(const struct fb_spec *s, struct fb_err *e);
int finish_view(struct fb_err *e);
/* The overlays apply_view could not mount (bit i: the i-th FB_OP_OVERLAY),
 * and the first errno, for the ready message. */
void cache_fallbacks(uint32_t *mask, uint32_t *err);

/* command_linux.c */
int open_terminal(const struct fb_spec *s, struct fb_term *t, struct fb_err *e);
int start_command(struct fb_spec *s, struct fb_term *t, pid_t *cmd, int *listener, struct fb_err *e);
int drop_capabilities(int isolated, struct fb_err *e);
void forwarded_signals(sigset_t *set);

#endif
