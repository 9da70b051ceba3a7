/*
 * The sandbox child.
 *
 * forgebox re-executes its own binary with the hidden verb FB_VERB. This
 * constructor runs before the Go runtime and, when it sees the verb, never
 * returns: the child stays a small single-threaded C program. That matters
 * twice. A second Go runtime start costs about a millisecond, most of
 * forgebox's launch overhead over bubblewrap; and a single-threaded process
 * can unshare a user namespace and have every restriction apply to all of
 * itself, with none of Go's per-thread pitfalls.
 *
 * Everything is decided by the parent (the Go side of package sandbox): the child reads the
 * spec from FB_SYNC_FD and carries it out. Three processes take part:
 *
 *   stage 0   the re-executed binary, in the host PID namespace. Leaves the
 *             caller's session, unshares the namespaces, writes its ID maps,
 *             forks PID 1 and waits for it. Its parent-death signal ties it
 *             to forgebox; PID 1's ties PID 1 to it.
 *   PID 1     builds the filesystem view, brings up loopback, sets the
 *             hostname, opens the pseudo-terminal, starts the command, then
 *             sheds its capabilities and supervises: it reaps, forwards
 *             signals and reports how the command ended. When it exits the
 *             kernel kills everything left in the PID namespace.
 *   command   enters its own session, drops every privilege and executes
 *             the program.
 *
 * Any failure goes back to the parent as {step, errno, message}.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>

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

#define FB_OPEN_TREE_CLONE 1
#define FB_AT_RECURSIVE 0x8000
#define FB_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define FB_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define FB_FSOPEN_CLOEXEC 1
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

struct fb_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct fb_open_how {
	uint64_t flags, mode, resolve;
};

struct fb_mount {
	uint8_t op;
	uint32_t flags, mode, slot;
	uint64_t set, clr, dev, ino;
	const char *a, *b;
};

struct fb_spec {
	uint32_t flags, uid_out, gid_out, uid_in, gid_in, slots;
	char **argv, **envp;
	size_t argc, envc, nmounts;
	const char *cwd, *path, *hostname, *alt_arg0;
	struct fb_mount *mounts;
	uint16_t rows, cols;
};

struct fb_err {
	const char *step;
	int err;
	char msg[512];
};

/* Timeline of the setup, for forgebox run --trace. The child is single
 * threaded and short-lived; one fixed table is enough. */
struct fb_mark {
	const char *step;
	uint64_t ns;
};
static struct fb_mark fb_marks[24];
static int fb_nmarks;

static void mark(const char *step)
{
	struct timespec ts;
	if (fb_nmarks < (int)(sizeof fb_marks / sizeof fb_marks[0]) && clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		fb_marks[fb_nmarks++] = (struct fb_mark){step, ts.tv_sec * 1000000000ULL + ts.tv_nsec};
}

/* How the command ended, as wait4 saw it. */
struct fb_end {
	int status;
	struct rusage ru;
};

/* ---- errors and messages -------------------------------------------- */

static int fb_fail(struct fb_err *e, const char *step, int err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	e->step = step;
	e->err = err;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	if (err != 0 && n < sizeof e->msg - 3) {
		/* "what: cause", with the cause in lower case as Go prints it */
		snprintf(e->msg + n, sizeof e->msg - n, ": %s", strerror(err));
		if (e->msg[n + 2] >= 'A' && e->msg[n + 2] <= 'Z' && e->msg[n + 3] >= 'a')
			e->msg[n + 2] += 'a' - 'A';
	}
	return -1;
}

static void put_le16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put_le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = v >> (8 * i); }
static void put_le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = v >> (8 * i); }
static uint16_t le16(const uint8_t *p) { return p[0] | (uint16_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

/* send_frame writes one frame, with fds attached to its first byte. */
static int send_frame(uint8_t type, const uint8_t *payload, size_t n, const int *fds, int nfds)
{
	uint8_t hdr[5];
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)payload, n}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
	size_t total = sizeof hdr + n, sent = 0;

	put_le32(hdr, n + 1);
	hdr[4] = type;
	if (nfds > 0) {
		struct cmsghdr *c;
		memset(cbuf, 0, sizeof cbuf);
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	while (sent < total) {
		ssize_t w = sendmsg(FB_SYNC_FD, &m, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		sent += w;
		m.msg_control = NULL;
		m.msg_controllen = 0;
		/* advance the iovecs past what was sent */
		while (w > 0 && m.msg_iovlen > 0) {
			if ((size_t)w >= m.msg_iov->iov_len) {
				w -= m.msg_iov->iov_len;
				m.msg_iov++;
				m.msg_iovlen--;
			} else {
				m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + w;
				m.msg_iov->iov_len -= w;
				w = 0;
			}
		}
	}
	return 0;
}

static void report_error(const struct fb_err *e)
{
	uint8_t buf[4 + 2 + 64 + 2 + sizeof e->msg];
	size_t sl = strnlen(e->step ? e->step : "", 64), ml = strnlen(e->msg, sizeof e->msg), n = 0;

	put_le32(buf, e->err);
	n += 4;
	put_le16(buf + n, sl);
	n += 2;
	memcpy(buf + n, e->step ? e->step : "", sl);
	n += sl;
	put_le16(buf + n, ml);
	n += 2;
	memcpy(buf + n, e->msg, ml);
	n += ml;
	if (send_frame(FB_MSG_ERROR, buf, n, NULL, 0) < 0) {
		/* No parent to tell (run by hand, or the parent is gone). */
		dprintf(2, "forgebox: sandbox setup failed at %s: %s\n", e->step ? e->step : "?", e->msg);
	}
}

static __attribute__((noreturn)) void die(const struct fb_err *e)
{
	report_error(e);
	_exit(125);
}

/* ---- reading the spec ------------------------------------------------- */

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (uint8_t *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? (errno = EPIPE, -1) : -1;
		got += r;
	}
	return 0;
}

static int take_string(const uint8_t *p, uint32_t len, const char **out)
{
	if (len == 0 || p[len - 1] != 0 || memchr(p, 0, len - 1) != NULL)
		return -1;
	*out = (const char *)p;
	return 0;
}

static int parse_mount(const uint8_t *p, uint32_t len, struct fb_mount *m)
{
	uint32_t off = FB_MOUNT_FIXED;
	const char **dst[2] = {&m->a, &m->b};

	if (len < FB_MOUNT_FIXED)
		return -1;
	m->op = p[0];
	m->flags = le32(p + 4);
	m->mode = le32(p + 8);
	m->slot = le32(p + 12);
	m->set = le64(p + 16);
	m->clr = le64(p + 24);
	m->dev = le64(p + 32);
	m->ino = le64(p + 40);
	for (int i = 0; i < 2; i++) {
		uint16_t sl;
		if (len - off < 2)
			return -1;
		sl = le16(p + off);
		off += 2;
		if (sl > len - off || take_string(p + off, sl, dst[i]) < 0)
			return -1;
		off += sl;
	}
	return off == len ? 0 : -1;
}

/* parse_spec adds one frame's fields to s. The repeated fields (argv,
 * envp, mounts) must all arrive in one frame. */
static int parse_spec(uint8_t *p, size_t n, struct fb_spec *s, struct fb_err *e)
{
	size_t off, ai = 0, ei = 0, mi = 0;

	s->argc = s->envc = s->nmounts = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (off = 0; off < n;) {
			uint16_t tag;
			uint32_t len;
			const uint8_t *v;
			int bad = 0;

			if (n - off < 6)
				return fb_fail(e, "spec", EPROTO, "truncated field at byte %zu", off);
			tag = le16(p + off);
			len = le32(p + off + 2);
			off += 6;
			if (len > n - off)
				return fb_fail(e, "spec", EPROTO, "field %u overruns the spec", tag);
			v = p + off;
			off += len;
			if (pass == 0) {
				s->argc += tag == FB_TAG_ARG;
				s->envc += tag == FB_TAG_ENV;
				s->nmounts += tag == FB_TAG_MOUNT;
				continue;
			}
			switch (tag) {
			case FB_TAG_FLAGS: bad = len != 4; if (!bad) s->flags = le32(v); break;
			case FB_TAG_UID_OUT: bad = len != 4; if (!bad) s->uid_out = le32(v); break;
			case FB_TAG_GID_OUT: bad = len != 4; if (!bad) s->gid_out = le32(v); break;
			case FB_TAG_UID_IN: bad = len != 4; if (!bad) s->uid_in = le32(v); break;
			case FB_TAG_GID_IN: bad = len != 4; if (!bad) s->gid_in = le32(v); break;
			case FB_TAG_SLOTS: bad = len != 4; if (!bad) s->slots = le32(v); break;
			case FB_TAG_ARG: bad = take_string(v, len, (const char **)&s->argv[ai++]); break;
			case FB_TAG_ENV: bad = take_string(v, len, (const char **)&s->envp[ei++]); break;
			case FB_TAG_CWD: bad = take_string(v, len, &s->cwd); break;
			case FB_TAG_PATH: bad = take_string(v, len, &s->path); break;
			case FB_TAG_HOSTNAME: bad = take_string(v, len, &s->hostname); break;
			case FB_TAG_ALT_ARG0: bad = take_string(v, len, &s->alt_arg0); break;
			case FB_TAG_WINSIZE: bad = len != 4; if (!bad) { s->rows = le16(v); s->cols = le16(v + 2); } break;
			case FB_TAG_MOUNT: bad = parse_mount(v, len, &s->mounts[mi++]); break;
			default: return fb_fail(e, "spec", EPROTO, "unknown field %u", tag);
			}
			if (bad)
				return fb_fail(e, "spec", EPROTO, "malformed field %u", tag);
		}
		if (pass == 0 && (s->argc || s->envc || s->nmounts)) {
			s->argv = calloc(s->argc + 1, sizeof *s->argv);
			s->envp = calloc(s->envc + 1, sizeof *s->envp);
			s->mounts = calloc(s->nmounts + 1, sizeof *s->mounts);
			if (!s->argv || !s->envp || !s->mounts)
				return fb_fail(e, "spec", ENOMEM, "allocate spec");
		}
	}
	return 0;
}

/* read_spec reads one frame of the given type into s. */
static int read_spec(uint8_t type, struct fb_spec *s, struct fb_err *e)
{
	uint8_t hdr[5];
	uint32_t n;
	uint8_t *buf;

	if (read_full(FB_SYNC_FD, hdr, sizeof hdr) < 0)
		return fb_fail(e, "spec", errno, "read spec");
	n = le32(hdr);
	if (hdr[4] != type || n < 1 || n > FB_MAX_FRAME)
		return fb_fail(e, "spec", EPROTO, "bad spec frame (type %u, %u bytes)", hdr[4], n);
	buf = malloc(n);
	if (buf == NULL)
		return fb_fail(e, "spec", ENOMEM, "allocate %u bytes", n);
	if (read_full(FB_SYNC_FD, buf, n - 1) < 0)
		return fb_fail(e, "spec", errno, "read spec");
	return parse_spec(buf, n - 1, s, e);
}

/* read_view reads the command and the mount plan, which the parent sends
 * once stage 0 is on its way. */
static int read_view(struct fb_spec *s, struct fb_err *e)
{
	if (read_spec(FB_MSG_VIEW, s, e) < 0)
		return -1;
	if (s->argc == 0 || s->cwd == NULL || s->path == NULL)
		return fb_fail(e, "spec", EPROTO, "spec lacks argv, cwd or PATH");
	for (size_t i = 0; i < s->nmounts; i++)
		if ((s->mounts[i].op == FB_OP_CLONE || s->mounts[i].op == FB_OP_ATTACH) && s->mounts[i].slot >= s->slots)
			return fb_fail(e, "spec", EPROTO, "mount op %zu uses slot %u of %u", i, s->mounts[i].slot, s->slots);
	return 0;
}

/* ---- stage 0: namespaces --------------------------------------------- */

static int write_proc_file(const char *file, const char *text, struct fb_err *e)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return fb_fail(e, "namespaces", errno, "open %s", file);
	n = write(fd, text, strlen(text));
	if (n < 0) {
		int err = errno;
		close(fd);
		return fb_fail(e, "namespaces", err, "write %s", file);
	}
	close(fd);
	return 0;
}

/* enter_namespaces unshares everything at once, so that the other
 * namespaces belong to the new user namespace, then maps the caller's own
 * uid and gid. The process keeps its full capability set in the new user
 * namespace until it executes something. */
static int enter_namespaces(const struct fb_spec *s, struct fb_err *e)
{
	int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
	char map[64];

	if (s->flags & FB_FLAG_NEWNET)
		flags |= CLONE_NEWNET;
	if (unshare(flags) < 0)
		return fb_fail(e, "namespaces", errno, "unshare user, mount, pid, ipc, uts%s namespaces",
			       (s->flags & FB_FLAG_NEWNET) ? ", net" : "");
	snprintf(map, sizeof map, "%u %u 1\n", s->uid_in, s->uid_out);
	if (write_proc_file("/proc/self/uid_map", map, e) < 0)
		return -1;
	/* Unprivileged gid maps need setgroups denied; it also keeps the
	 * supplementary groups from being dropped to bypass group-denied files. */
	if (write_proc_file("/proc/self/setgroups", "deny", e) < 0)
		return -1;
	snprintf(map, sizeof map, "%u %u 1\n", s->gid_in, s->gid_out);
	return write_proc_file("/proc/self/gid_map", map, e);
}

/* ---- PID 1: the filesystem view -------------------------------------- */

/* open_path opens a mount source or target without following symlinks in
 * any component: a path the plan names must be exactly that path. With a
 * pinned inode, the path must still be the inode the parent saw. */
static int open_path(const char *path, uint64_t dev, uint64_t ino, const char *what, struct fb_err *e)
{
	struct fb_open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				  .resolve = FB_RESOLVE_NO_SYMLINKS | FB_RESOLVE_NO_MAGICLINKS};
	struct stat st;
	int fd = syscall(FB_SYS_OPENAT2, AT_FDCWD, path, &how, sizeof how);

	if (fd < 0)
		return fb_fail(e, "mounts", errno, "%s \"%s\"", what, path);
	if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
		int err = S_ISLNK(st.st_mode) ? ELOOP : errno;
		close(fd);
		return fb_fail(e, "mounts", err, "%s \"%s\"", what, path);
	}
	if ((dev || ino) && (st.st_dev != dev || st.st_ino != ino)) {
		close(fd);
		return fb_fail(e, "mounts", ESTALE, "%s \"%s\" (it changed since the launch)", what, path);
	}
	return fd;
}

/* open_parent opens the directory holding path and points *name at the
 * last component. */
static int open_parent(const char *path, char *buf, size_t size, const char **name, const char *what, struct fb_err *e)
{
	char *slash;

	if (strlen(path) >= size)
		return fb_fail(e, "mounts", ENAMETOOLONG, "%s \"%s\"", what, path);
	strcpy(buf, path);
	slash = strrchr(buf, '/');
	if (slash == NULL || slash[1] == 0)
		return fb_fail(e, "mounts", EINVAL, "%s \"%s\"", what, path);
	*name = path + (slash - buf) + 1;
	if (slash == buf)
		slash[1] = 0;
	else
		*slash = 0;
	return open_path(buf, 0, 0, what, e);
}

static int set_attr(int fd, uint64_t set, uint64_t clr, int recursive)
{
	struct fb_mount_attr a = {.attr_set = set, .attr_clr = clr};
	unsigned flags = AT_EMPTY_PATH | (recursive ? FB_AT_RECURSIVE : 0);

	if (set == 0 && clr == 0)
		return 0;
	return syscall(FB_SYS_MOUNT_SETATTR, fd, "", flags, &a, sizeof a);
}

static int move_onto(int tree, const char *target, uint64_t dev, uint64_t ino, const char *what, struct fb_err *e)
{
	int t = open_path(target, dev, ino, what, e);
	int r;

	if (t < 0)
		return -1;
	r = syscall(FB_SYS_MOVE_MOUNT, tree, "", t, "", FB_MOVE_MOUNT_F_EMPTY_PATH | FB_MOVE_MOUNT_T_EMPTY_PATH);
	if (r < 0)
		fb_fail(e, "mounts", errno, "%s \"%s\"", what, target);
	close(t);
	return r;
}

/* new_fs creates a detached mount of a fresh filesystem. */
static int new_fs(const char *type, const char *const *opts, uint64_t attrs, const char *target, struct fb_err *e)
{
	int fs = syscall(FB_SYS_FSOPEN, type, FB_FSOPEN_CLOEXEC), m;

	if (fs < 0)
		return fb_fail(e, "mounts", errno, "%s on \"%s\"", type, target);
	for (; opts && opts[0]; opts += 2) {
		if (syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_SET_STRING, opts[0], opts[1], 0) < 0) {
			int err = errno;
			close(fs);
			return fb_fail(e, "mounts", err, "%s on \"%s\": option %s=%s", type, target, opts[0], opts[1]);
		}
	}
	if (syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int err = errno;
		close(fs);
		return fb_fail(e, "mounts", err, "%s on \"%s\"", type, target);
	}
	m = syscall(FB_SYS_FSMOUNT, fs, FB_FSMOUNT_CLOEXEC, (unsigned)attrs);
	close(fs);
	if (m < 0)
		return fb_fail(e, "mounts", errno, "%s on \"%s\"", type, target);
	return m;
}

static int mount_new_fs(const char *type, const char *const *opts, uint64_t attrs, const char *target, struct fb_err *e)
{
	char what[64];
	int m = new_fs(type, opts, attrs, target, e), r;

	if (m < 0)
		return -1;
	snprintf(what, sizeof what, "%s on", type);
	r = move_onto(m, target, 0, 0, what, e);
	close(m);
	return r;
}

static int clone_tree(const struct fb_mount *m, const char *what, struct fb_err *e)
{
	int src = open_path(m->a, m->dev, m->ino, what, e), t;
	unsigned flags = AT_EMPTY_PATH | FB_OPEN_TREE_CLONE | O_CLOEXEC;

	if (src < 0)
		return -1;
	if (m->flags & FB_OPF_RECURSIVE)
		flags |= FB_AT_RECURSIVE;
	t = syscall(FB_SYS_OPEN_TREE, src, "", flags);
	if (t < 0)
		fb_fail(e, "mounts", errno, "%s \"%s\"", what, m->a);
	close(src);
	return t;
}

static int apply_op(const struct fb_mount *m, int *slot, struct fb_err *e)
{
	char buf[PATH_MAX], mode[16];
	const char *name;
	int fd, r = 0;

	switch (m->op) {
	case FB_OP_CLONE:
		slot[m->slot] = clone_tree(m, "clone", e);
		return slot[m->slot] < 0 ? -1 : 0;
	case FB_OP_ATTACH:
		if (slot[m->slot] < 0)
			return fb_fail(e, "mounts", EBADF, "attach \"%s\": slot %u is empty", m->a, m->slot);
		if (set_attr(slot[m->slot], m->set, m->clr, m->flags & FB_OPF_RECURSIVE) < 0)
			return fb_fail(e, "mounts", errno, "set attributes for \"%s\"", m->a);
		r = move_onto(slot[m->slot], m->a, m->dev, m->ino, "attach", e);
		close(slot[m->slot]);
		slot[m->slot] = -1;
		return r;
	case FB_OP_SETATTR:
		if ((fd = open_path(m->a, 0, 0, "set attributes on", e)) < 0)
			return -1;
		if (set_attr(fd, m->set, m->clr, m->flags & FB_OPF_RECURSIVE) < 0)
			r = fb_fail(e, "mounts", errno, "set attributes on \"%s\"", m->a);
		close(fd);
		return r;
	case FB_OP_TMPFS: {
		const char *opts[] = {"mode", mode, NULL};
		snprintf(mode, sizeof mode, "%o", m->mode);
		return mount_new_fs("tmpfs", opts, m->set, m->a, e);
	}
	case FB_OP_PROC:
		/* A fresh proc shows only this PID namespace. */
		return mount_new_fs("proc", NULL, FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV | FB_MOUNT_ATTR_NOEXEC, m->a, e);
	case FB_OP_DEVPTS: {
		/* A new devpts instance (every devpts mount is one since Linux
		 * 4.7): the command cannot see or open the
		 * host's terminals, so it cannot inject input into them. */
		const char *opts[] = {"ptmxmode", "0666", "mode", "0620", NULL};
		return mount_new_fs("devpts", opts, FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NOEXEC, m->a, e);
	}
	case FB_OP_MKDIR:
		if ((fd = open_parent(m->a, buf, sizeof buf, &name, "mkdir", e)) < 0)
			return -1;
		if (mkdirat(fd, name, m->mode) < 0 && errno != EEXIST)
			r = fb_fail(e, "mounts", errno, "mkdir \"%s\"", m->a);
		close(fd);
		return r;
	case FB_OP_MKFILE: {
		int f;
		if ((fd = open_parent(m->a, buf, sizeof buf, &name, "create", e)) < 0)
			return -1;
		f = openat(fd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, m->mode);
		if (f < 0)
			r = fb_fail(e, "mounts", errno, "create \"%s\"", m->a);
		else
			close(f);
		close(fd);
		return r;
	}
	case FB_OP_SYMLINK:
		if ((fd = open_parent(m->a, buf, sizeof buf, &name, "symlink", e)) < 0)
			return -1;
		if (symlinkat(m->b, fd, name) < 0)
			r = fb_fail(e, "mounts", errno, "symlink \"%s\"", m->a);
		close(fd);
		return r;
	case FB_OP_HIDE: {
		struct fb_mount src = {.a = m->b, .flags = 0};
		int t = clone_tree(&src, "clone empty entry", e);
		if (t < 0)
			return -1;
		if (set_attr(t, FB_MOUNT_ATTR_RDONLY | FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV | FB_MOUNT_ATTR_NOEXEC, 0, 0) < 0)
			r = fb_fail(e, "mounts", errno, "hide \"%s\"", m->a);
		else
			r = move_onto(t, m->a, 0, 0, "hide", e);
		close(t);
		return r;
	}
	case FB_OP_REMOVE:
		if ((fd = open_parent(m->a, buf, sizeof buf, &name, "remove", e)) < 0)
			return -1;
		if (unlinkat(fd, name, (m->flags & FB_OPF_DIR) ? AT_REMOVEDIR : 0) < 0)
			r = fb_fail(e, "mounts", errno, "remove \"%s\"", m->a);
		close(fd);
		return r;
	}
	return fb_fail(e, "mounts", EPROTO, "unknown mount op %u", m->op);
}

/* build_view carries out the mount plan. Mounts made here stay private to
 * the namespace: nothing propagates back to the host. */
static int build_view(const struct fb_spec *s, struct fb_err *e)
{
	int *slot = calloc(s->slots + 1, sizeof *slot);
	mode_t old = umask(0); /* the plan states every mode exactly */
	int r = 0;

	if (slot == NULL)
		return fb_fail(e, "mounts", ENOMEM, "allocate slots");
	for (uint32_t i = 0; i < s->slots; i++)
		slot[i] = -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		r = fb_fail(e, "mounts", errno, "make / private");
	for (size_t i = 0; r == 0 && i < s->nmounts; i++)
		r = apply_op(&s->mounts[i], slot, e);
	for (uint32_t i = 0; i < s->slots; i++)
		if (slot[i] >= 0)
			close(slot[i]);
	free(slot);
	umask(old);
	return r;
}

/* ---- PID 1: network, name, terminal ----------------------------------- */

static int bring_up_loopback(struct fb_err *e)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (s < 0)
		return fb_fail(e, "loopback", errno, "socket");
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		r = fb_fail(e, "loopback", errno, "get flags of lo");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (r == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		r = fb_fail(e, "loopback", errno, "bring up lo");
	close(s);
	return r;
}

static int set_hostname(const struct fb_spec *s, struct fb_err *e)
{
	if (s->hostname && sethostname(s->hostname, strlen(s->hostname)) < 0)
		return fb_fail(e, "hostname", errno, "set hostname %s", s->hostname);
	return 0;
}

struct fb_term {
	int master, slave;
};

/* open_terminal allocates the command's pseudo-terminal from the sandbox's
 * own devpts, so the slave has a name inside (/dev/pts/0) and the command
 * never holds a descriptor of a host terminal. */
static int open_terminal(const struct fb_spec *s, struct fb_term *t, struct fb_err *e)
{
	int unlock = 0;
	struct winsize ws = {.ws_row = s->rows, .ws_col = s->cols};

	t->master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0)
		return fb_fail(e, "terminal", errno, "open /dev/ptmx");
	if (ioctl(t->master, TIOCSPTLCK, &unlock) < 0)
		return fb_fail(e, "terminal", errno, "unlock pseudo-terminal");
	t->slave = ioctl(t->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0)
		return fb_fail(e, "terminal", errno, "open pseudo-terminal peer");
	if ((ws.ws_row || ws.ws_col) && ioctl(t->master, TIOCSWINSZ, &ws) < 0)
		return fb_fail(e, "terminal", errno, "set window size");
	return 0;
}

/* ---- the command ------------------------------------------------------- */

static int forwarded_signals(sigset_t *set)
{
	static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
	sigemptyset(set);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(set, sigs[i]);
	return 0;
}

static int reset_signals(struct fb_err *e)
{
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		return fb_fail(e, "session", errno, "unblock signals");
	return 0;
}

/* enter_session makes the command a session leader. Without a terminal it
 * has no controlling terminal at all, so /dev/tty cannot reach the
 * caller's; with one, the sandbox's pseudo-terminal becomes it. */
static int enter_session(const struct fb_term *t, struct fb_err *e)
{
	if (setsid() < 0)
		return fb_fail(e, "session", errno, "setsid");
	if (t->slave < 0)
		return 0;
	if (ioctl(t->slave, TIOCSCTTY, 0) < 0)
		return fb_fail(e, "session", errno, "make the pseudo-terminal controlling");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(t->slave, fd) < 0)
			return fb_fail(e, "session", errno, "connect the pseudo-terminal");
	return 0;
}

static int enter_workdir(const struct fb_spec *s, struct fb_err *e)
{
	if (chdir(s->cwd) < 0)
		return fb_fail(e, "cwd", errno, "chdir \"%s\"", s->cwd);
	return 0;
}

static int set_no_new_privs(struct fb_err *e)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fb_fail(e, "no-new-privs", errno, "prctl(PR_SET_NO_NEW_PRIVS)");
	return 0;
}

/* drop_capabilities empties every capability set and locks the securebits
 * so that executing a program as uid 0 cannot bring them back. Outside a
 * user namespace an unprivileged caller has nothing to drop and may not
 * change the bounding set; that is not an error there. */
static int drop_capabilities(int isolated, struct fb_err *e)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0 && (isolated || errno != EPERM))
		return fb_fail(e, "capabilities", errno, "lock securebits");
	for (int cap = 0;; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL)
			break;
		if (isolated || errno != EPERM)
			return fb_fail(e, "capabilities", errno, "drop capability %d from the bounding set", cap);
		break;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return fb_fail(e, "capabilities", errno, "clear ambient capabilities");
	memset(d, 0, sizeof d);
	if (syscall(SYS_capset, &h, d) < 0)
		return fb_fail(e, "capabilities", errno, "clear capabilities");
	return 0;
}

/* mark_fds_cloexec makes sure the command inherits only 0, 1 and 2. */
static int mark_fds_cloexec(struct fb_err *e)
{
	DIR *d;
	struct dirent *de;

	if (syscall(FB_SYS_CLOSE_RANGE, 3, ~0U, FB_CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	d = opendir("/proc/self/fd");
	if (d == NULL)
		return fb_fail(e, "fds", errno, "list open descriptors");
	while ((de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);
		if (fd > 2 && fd != dirfd(d))
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	closedir(d);
	return 0;
}

/* exec_search runs prog, looking it up in the sandbox's PATH the way a
 * shell does, and returns why it could not. */
static int exec_search(const char *prog, const struct fb_spec *s)
{
	char buf[PATH_MAX];
	const char *p = s->path;
	int saw_eacces = 0;

	if (strchr(prog, '/')) {
		execve(prog, s->argv, s->envp);
		return errno;
	}
	if (*prog == 0)
		return ENOENT;
	for (;;) {
		const char *end = strchrnul(p, ':');
		size_t dl = end - p;
		if (dl + 1 + strlen(prog) + 1 <= sizeof buf) {
			memcpy(buf, dl ? p : ".", dl ? dl : 1);
			dl = dl ? dl : 1;
			buf[dl] = '/';
			strcpy(buf + dl + 1, prog);
			execve(buf, s->argv, s->envp);
			switch (errno) {
			case EACCES:
				saw_eacces = 1;
				/* fallthrough */
			case ENOENT:
			case ENOTDIR:
			case ELOOP:
			case ENAMETOOLONG:
				break;
			default:
				return errno;
			}
		}
		if (*end == 0)
			break;
		p = end + 1;
	}
	return saw_eacces ? EACCES : ENOENT;
}

static int exec_program(struct fb_spec *s, struct fb_err *e)
{
	const char *prog = s->argv[0];
	int err = exec_search(prog, s);

	if (err == ENOENT && s->alt_arg0) {
		prog = s->alt_arg0;
		s->argv[0] = (char *)s->alt_arg0;
		err = exec_search(prog, s);
	}
	return fb_fail(e, "exec", err, "%s", prog);
}

/* The command reports a failure before exec over a close-on-exec pipe:
 * EOF there means the program is running. */
struct fb_exec_report {
	int err;
	char step[32];
	char msg[512];
};

static __attribute__((noreturn)) void report_to_pid1(int pipe_w, const struct fb_err *e)
{
	struct fb_exec_report r;
	memset(&r, 0, sizeof r);
	r.err = e->err;
	snprintf(r.step, sizeof r.step, "%s", e->step);
	snprintf(r.msg, sizeof r.msg, "%s", e->msg);
	while (write(pipe_w, &r, sizeof r) < 0 && errno == EINTR)
		;
	_exit(127);
}

static __attribute__((noreturn)) void command_main(struct fb_spec *s, const struct fb_term *t, int pipe_w)
{
	struct fb_err e = {0};
	int isolated = (s->flags & FB_FLAG_ISOLATE) != 0;

	if (reset_signals(&e) < 0 ||
	    enter_session(t, &e) < 0 ||
	    enter_workdir(s, &e) < 0 ||
	    set_no_new_privs(&e) < 0 ||
	    drop_capabilities(isolated, &e) < 0 ||
	    mark_fds_cloexec(&e) < 0)
		report_to_pid1(pipe_w, &e);
	exec_program(s, &e);
	report_to_pid1(pipe_w, &e);
}

/* ---- PID 1: start, report, supervise --------------------------------- */

static int start_command(struct fb_spec *s, struct fb_term *t, pid_t *cmd, struct fb_err *e)
{
	int p[2];
	struct fb_exec_report r;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return fb_fail(e, "start", errno, "pipe");
	*cmd = fork();
	if (*cmd < 0)
		return fb_fail(e, "start", errno, "fork");
	if (*cmd == 0) {
		close(p[0]);
		command_main(s, t, p[1]);
	}
	close(p[1]);
	if (t->slave >= 0) {
		close(t->slave);
		t->slave = -1;
	}
	while ((n = read(p[0], &r, sizeof r)) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n == (ssize_t)sizeof r) {
		r.step[sizeof r.step - 1] = 0;
		r.msg[sizeof r.msg - 1] = 0;
		e->err = r.err;
		e->step = strcmp(r.step, "exec") == 0 ? "exec" : strdup(r.step);
		snprintf(e->msg, sizeof e->msg, "%s", r.msg);
		return -1;
	}
	return 0;
}

/* report_ready hands the parent a pidfd of this process, to signal it
 * without racing against pid reuse, and the terminal's master side. */
static int report_ready(pid_t cmd, struct fb_term *t, struct fb_err *e)
{
	uint8_t payload[12 + sizeof fb_marks / sizeof fb_marks[0] * (1 + 32 + 8)];
	size_t n = 12;
	int fds[2], nfds = 0, have = 0;
	int pidfd = syscall(FB_SYS_PIDFD_OPEN, getpid(), 0);

	for (int i = 0; i < fb_nmarks; i++) {
		size_t sl = strnlen(fb_marks[i].step, 32);
		payload[n++] = sl;
		memcpy(payload + n, fb_marks[i].step, sl);
		n += sl;
		put_le64(payload + n, fb_marks[i].ns);
		n += 8;
	}
	put_le32(payload + 8, fb_nmarks);

	if (pidfd >= 0) {
		fds[nfds++] = pidfd;
		have |= 1;
	}
	if (t->master >= 0) {
		fds[nfds++] = t->master;
		have |= 2;
	}
	put_le32(payload, cmd);
	put_le32(payload + 4, have);
	if (send_frame(FB_MSG_READY, payload, n, fds, nfds) < 0)
		return fb_fail(e, "start", errno, "report to forgebox");
	if (pidfd >= 0)
		close(pidfd);
	if (t->master >= 0) {
		close(t->master);
		t->master = -1;
	}
	return 0;
}

/* shed_privileges: PID 1 has nothing left to do that needs privilege, and
 * the command must not be able to inspect or trace it. */
static int shed_privileges(int isolated, struct fb_err *e)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return fb_fail(e, "supervise", errno, "make PID 1 non-dumpable");
	if (isolated)
		return drop_capabilities(1, e);
	return 0;
}

static __attribute__((noreturn)) void report_exit(const struct fb_end *end)
{
	uint8_t p[32];
	int st = end->status;
	uint64_t ut = end->ru.ru_utime.tv_sec * 1000000ULL + end->ru.ru_utime.tv_usec;
	uint64_t stt = end->ru.ru_stime.tv_sec * 1000000ULL + end->ru.ru_stime.tv_usec;

	put_le32(p, WIFSIGNALED(st) ? 1 : 0);
	put_le32(p + 4, WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	put_le64(p + 8, ut);
	put_le64(p + 16, stt);
	put_le64(p + 24, end->ru.ru_maxrss);
	send_frame(FB_MSG_EXIT, p, sizeof p, NULL, 0);
	_exit(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
}

/* kill_leftovers: without a PID namespace, the tree is killed by process
 * group and by adopting orphans as a subreaper. */
static void kill_leftovers(pid_t cmd)
{
	char path[64], buf[4096];
	int fd;
	ssize_t n;

	kill(-cmd, SIGKILL);
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", getpid(), getpid());
	for (int round = 0; round < 8; round++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			return;
		buf[n] = 0;
		for (char *p = buf; *p;) {
			long pid = strtol(p, &p, 10);
			if (pid > 0) {
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
			}
			while (*p == ' ' || *p == '\n')
				p++;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep(1000);
	}
}

static __attribute__((noreturn)) void supervise(pid_t cmd, int sfd, int isolated)
{
	for (;;) {
		struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = FB_SYNC_FD, .events = POLLIN}};
		struct signalfd_siginfo si;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(125);
		}
		if (pf[1].revents) {
			char c;
			ssize_t r = recv(FB_SYNC_FD, &c, 1, MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				/* forgebox is gone: take the tree with us */
				if (!isolated)
					kill_leftovers(cmd);
				_exit(137);
			}
		}
		if (!(pf[0].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof si) != sizeof si)
			continue;
		if (si.ssi_signo != SIGCHLD) {
			if (kill(-cmd, si.ssi_signo) < 0)
				kill(cmd, si.ssi_signo);
			continue;
		}
		for (;;) {
			struct fb_end end;
			pid_t w = wait4(-1, &end.status, WNOHANG, &end.ru);
			if (w <= 0)
				break;
			if (w == cmd) {
				if (!isolated)
					kill_leftovers(cmd);
				report_exit(&end);
			}
		}
	}
}

static __attribute__((noreturn)) void pid1_main(struct fb_spec *s)
{
	struct fb_err e = {0};
	struct fb_term t = {.master = -1, .slave = -1};
	int isolated = (s->flags & FB_FLAG_ISOLATE) != 0;
	sigset_t sigs;
	pid_t cmd = -1;
	int sfd;

	/* Die with stage 0 (and so with forgebox). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fb_fail(&e, "start", errno, "set parent-death signal"), die(&e);
	if (!isolated && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		fb_fail(&e, "start", errno, "become a subreaper"), die(&e);
	/* Signals are taken through a signalfd; blocked before the fork so
	 * none is lost, unblocked again in the command. */
	forwarded_signals(&sigs);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0)
		fb_fail(&e, "start", errno, "signalfd"), die(&e);

	mark("pid 1 started");
	if (read_view(s, &e) < 0)
		die(&e);
	mark("view read");
	if (isolated && (build_view(s, &e) < 0 || (mark("mounts"), 0) ||
			 ((s->flags & FB_FLAG_NEWNET) && bring_up_loopback(&e) < 0) ||
			 set_hostname(s, &e) < 0))
		die(&e);
	mark("network and hostname");
	if (((s->flags & FB_FLAG_PTY) && open_terminal(s, &t, &e) < 0) ||
	    (mark("terminal"), 0) ||
	    start_command(s, &t, &cmd, &e) < 0 ||
	    (mark("command executed"), 0) ||
	    report_ready(cmd, &t, &e) < 0 ||
	    shed_privileges(isolated, &e) < 0)
		die(&e);
	supervise(cmd, sfd, isolated);
}

static __attribute__((noreturn)) void stage0(void)
{
	struct fb_spec s;
	struct fb_err e = {0};
	pid_t pid1;
	int status;

	mark("child started");
	memset(&s, 0, sizeof s);
	if (read_spec(FB_MSG_SPEC, &s, &e) < 0)
		die(&e);
	mark("spec read");
	/* Leave forgebox's session: nothing inside may have the caller's
	 * terminal as its controlling terminal. */
	if (setsid() < 0)
		fb_fail(&e, "start", errno, "setsid"), die(&e);
	if ((s.flags & FB_FLAG_ISOLATE) && enter_namespaces(&s, &e) < 0)
		die(&e);
	mark("namespaces");
	pid1 = fork();
	if (pid1 < 0)
		fb_fail(&e, "start", errno, "fork PID 1"), die(&e);
	if (pid1 == 0)
		pid1_main(&s);
	close(FB_SYNC_FD);
	/* PID 1 becomes a zombie only after every process of its namespace is
	 * gone, so when this wait returns the tree is dead. */
	while (waitpid(pid1, &status, 0) < 0)
		if (errno != EINTR)
			_exit(125);
	_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
}

__attribute__((constructor)) static void forgebox_init(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc >= 2 && strcmp(argv[1], FB_VERB) == 0)
		stage0();
}

/* Exported for the wire test. */
int forgebox_wire_constant(int which)
{
	static const int v[] = {FB_MSG_SPEC, FB_MSG_READY, FB_MSG_ERROR, FB_MSG_EXIT, FB_MSG_VIEW, FB_TAG_FLAGS, FB_TAG_UID_OUT,
				FB_TAG_GID_OUT, FB_TAG_UID_IN, FB_TAG_GID_IN, FB_TAG_ARG, FB_TAG_ENV, FB_TAG_CWD,
				FB_TAG_PATH, FB_TAG_HOSTNAME, FB_TAG_MOUNT, FB_TAG_WINSIZE, FB_TAG_ALT_ARG0,
				FB_TAG_SLOTS, FB_FLAG_NEWNET, FB_FLAG_PTY, FB_FLAG_ISOLATE, FB_FLAG_SUBREAPER,
				FB_OP_CLONE, FB_OP_ATTACH, FB_OP_SETATTR, FB_OP_TMPFS, FB_OP_PROC, FB_OP_DEVPTS,
				FB_OP_MKDIR, FB_OP_MKFILE, FB_OP_SYMLINK, FB_OP_HIDE, FB_OP_REMOVE, FB_OPF_RECURSIVE,
				FB_OPF_DIR, FB_SYNC_FD, FB_MAX_FRAME, FB_MOUNT_FIXED};
	return which >= 0 && which < (int)(sizeof v / sizeof v[0]) ? v[which] : -1;
}
