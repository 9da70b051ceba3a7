/*
 * The filesystem view, built in PID 1's mount namespace. The base view is the
 * same for every run and is built before the parent says what to run; the
 * parent's plan (plan.go) then places the workspace, grants, covers and
 * protected paths. Every path is opened without following symlinks, and
 * nothing made here propagates back to the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child_linux.h"

struct fb_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct fb_open_how {
	uint64_t flags, mode, resolve;
};

/* open_at opens path relative to dirfd without following symlinks in any
 * component: a path the plan names must be exactly that path. With a pinned
 * inode, the path must still be the inode the parent saw. A symlink as the
 * last component is refused, unless link is set: then the descriptor is the
 * link itself. */
static int open_link_at(int dirfd, const char *path, const char *shown, uint64_t dev, uint64_t ino, int link,
			const char *what, struct fb_err *e)
{
	struct fb_open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				  .resolve = FB_RESOLVE_NO_SYMLINKS | FB_RESOLVE_NO_MAGICLINKS};
	struct stat st;
	int fd = syscall(FB_SYS_OPENAT2, dirfd, path, &how, sizeof how);

	if (fd < 0)
		return fb_fail(e, "mounts", errno, "%s \"%s\"", what, shown);
	if (fstat(fd, &st) < 0 || (S_ISLNK(st.st_mode) && !link)) {
		int err = S_ISLNK(st.st_mode) ? ELOOP : errno;
		close(fd);
		return fb_fail(e, "mounts", err, "%s \"%s\"", what, shown);
	}
	if ((dev || ino) && (st.st_dev != dev || st.st_ino != ino)) {
		close(fd);
		return fb_fail(e, "mounts", ESTALE, "%s \"%s\" (it changed since the launch)", what, shown);
	}
	return fd;
}

static int open_at(int dirfd, const char *path, const char *shown, uint64_t dev, uint64_t ino, const char *what,
		   struct fb_err *e)
{
	return open_link_at(dirfd, path, shown, dev, ino, 0, what, e);
}

int open_path(const char *path, uint64_t dev, uint64_t ino, const char *what, struct fb_err *e)
{
	return open_at(AT_FDCWD, path, path, dev, ino, what, e);
}

/* The host directories the base view covers with private tmpfs mounts,
 * opened before they were covered. A lookup that starts at one of these
 * descriptors stays on the host's mount: what the plan clones from beneath
 * them (a workspace in /tmp) is reached that way. */
static struct {
	const char *path;
	int fd;
} privates[] = {{"/tmp", -1}, {"/var/tmp", -1}, {"/run", -1}, {"/var/run", -1}};

#define NPRIVATE ((int)(sizeof privates / sizeof privates[0]))

/* open_source opens a host path to clone, through the covered directory
 * when it lies beneath one. */
static int open_source(const char *path, uint64_t dev, uint64_t ino, int link, struct fb_err *e)
{
	for (int i = 0; i < NPRIVATE; i++) {
		size_t n = strlen(privates[i].path);
		if (privates[i].fd < 0 || strncmp(path, privates[i].path, n) != 0 || (path[n] != '/' && path[n] != 0))
			continue;
		if (path[n] == 0)
			return open_at(privates[i].fd, "", path, dev, ino, "clone", e) < 0 ? -1 : dup(privates[i].fd);
		return open_link_at(privates[i].fd, path + n + 1, path, dev, ino, link, "clone", e);
	}
	return open_link_at(AT_FDCWD, path, path, dev, ino, link, "clone", e);
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
	if (syscall(FB_SYS_MOUNT_SETATTR, fd, "", flags, &a, sizeof a) == 0)
		return 0;
	/* A mount the host has read-only is locked read-only in our
	 * namespace: a writable grant cannot make it writable, and should
	 * not. Make the rest of the tree writable. */
	if (recursive && errno == EPERM && (clr & FB_MOUNT_ATTR_RDONLY))
		return syscall(FB_SYS_MOUNT_SETATTR, fd, "", AT_EMPTY_PATH, &a, sizeof a);
	return -1;
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

/* mount_fs mounts a fresh filesystem of the given type on target. */
static int mount_fs(const char *type, const char *const *opts, uint64_t attrs, const char *target, struct fb_err *e)
{
	int fs = syscall(FB_SYS_FSOPEN, type, FB_FSOPEN_CLOEXEC), m, r;

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
	r = move_onto(m, target, 0, 0, type, e);
	close(m);
	return r;
}

static int mount_tmpfs(const char *target, mode_t mode, uint64_t attrs, struct fb_err *e)
{
	char m[16];
	const char *opts[] = {"mode", m, NULL};
	snprintf(m, sizeof m, "%o", (unsigned)mode);
	return mount_fs("tmpfs", opts, attrs, target, e);
}

static int clone_tree(const char *path, uint64_t dev, uint64_t ino, int recursive, int link, struct fb_err *e)
{
	int src = open_source(path, dev, ino, link, e), t;
	unsigned flags = AT_EMPTY_PATH | FB_OPEN_TREE_CLONE | O_CLOEXEC | (recursive ? FB_AT_RECURSIVE : 0);

	if (src < 0)
		return -1;
	t = syscall(FB_SYS_OPEN_TREE, src, "", flags);
	if (t < 0)
		fb_fail(e, "mounts", errno, "clone \"%s\"", path);
	close(src);
	return t;
}

/* attach sets attributes on a cloned tree and moves it onto target. */
static int attach(int tree, const char *target, uint64_t set, uint64_t clr, int recursive, uint64_t dev, uint64_t ino,
		  struct fb_err *e)
{
	if (set_attr(tree, set, clr, recursive) < 0)
		return fb_fail(e, "mounts", errno, "set attributes for \"%s\"", target);
	return move_onto(tree, target, dev, ino, "attach", e);
}

static int make_entry(const char *path, mode_t mode, int dir, const char *link, struct fb_err *e)
{
	char buf[PATH_MAX];
	const char *name;
	int fd = open_parent(path, buf, sizeof buf, &name, "create", e), r = 0;

	if (fd < 0)
		return -1;
	if (link) {
		if (symlinkat(link, fd, name) < 0)
			r = fb_fail(e, "mounts", errno, "symlink \"%s\"", path);
	} else if (dir) {
		if (mkdirat(fd, name, mode) < 0 && errno != EEXIST)
			r = fb_fail(e, "mounts", errno, "mkdir \"%s\"", path);
	} else {
		int f = openat(fd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
		if (f < 0)
			r = fb_fail(e, "mounts", errno, "create \"%s\"", path);
		else
			close(f);
	}
	close(fd);
	return r;
}

static int remove_entry(const char *path, int dir, struct fb_err *e)
{
	char buf[PATH_MAX];
	const char *name;
	int fd = open_parent(path, buf, sizeof buf, &name, "remove", e), r = 0;

	if (fd < 0)
		return -1;
	if (unlinkat(fd, name, dir ? AT_REMOVEDIR : 0) < 0)
		r = fb_fail(e, "mounts", errno, "remove \"%s\"", path);
	close(fd);
	return r;
}

static int set_attr_at(const char *path, uint64_t set, uint64_t clr, int recursive, struct fb_err *e)
{
	int fd = open_path(path, 0, 0, "set attributes on", e), r = 0;

	if (fd < 0)
		return -1;
	if (set_attr(fd, set, clr, recursive) < 0)
		r = fb_fail(e, "mounts", errno, "set attributes on \"%s\"", path);
	close(fd);
	return r;
}

static int is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* What the base view made, for finish_view. */
static int base_run, base_var_run;

/* mount_private gives the run its own /tmp, /var/tmp and /run, keeping a
 * way to the host's. /run holds the host's IPC endpoints: D-Bus, docker,
 * containerd, systemd, the user runtime directories; /tmp the X11, tmux and
 * ssh-agent sockets. */
static int mount_private(struct fb_err *e)
{
	static const mode_t modes[] = {01777, 01777, 0755, 0755};
	uint64_t attrs = FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV;

	for (int i = 0; i < NPRIVATE; i++) {
		if (!is_dir(privates[i].path))
			continue;
		privates[i].fd = open(privates[i].path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (privates[i].fd < 0)
			return fb_fail(e, "mounts", errno, "open \"%s\"", privates[i].path);
		if (mount_tmpfs(privates[i].path, modes[i], attrs | (i >= 2 ? FB_MOUNT_ATTR_NOEXEC : 0), e) < 0)
			return -1;
	}
	base_run = privates[2].fd >= 0;
	base_var_run = privates[3].fd >= 0;
	return 0;
}

/* hide covers a path with a read-only clone of an empty directory or file.
 * A path that is gone, or that even this process cannot reach (another
 * user's private directory, for a root caller), needs no cover: the
 * command could not reach it either. */
static int hide(const char *target, int dir, struct fb_err *e)
{
	int t = open_path(target, 0, 0, "hide", e), tree, r;

	if (t < 0)
		return (e->err == ENOENT || e->err == EACCES) ? 0 : -1;
	close(t);
	if ((tree = clone_tree(dir ? FB_STAGE_DIR : FB_STAGE_FILE, 0, 0, 0, 0, e)) < 0)
		return -1;
	r = attach(tree, target, FB_MOUNT_ATTR_RDONLY | FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV | FB_MOUNT_ATTR_NOEXEC, 0,
		   0, 0, 0, e);
	close(tree);
	if (r < 0 && (e->err == ENOENT || e->err == EACCES))
		return 0;
	return r;
}

/* protect_proc makes read-only, or hides, the parts of the fresh /proc that
 * act on the whole machine rather than on the PID namespace. For a root
 * caller the command is host uid 0, and these files check the uid, not
 * capabilities: /proc/sys/kernel/core_pattern written from inside would run
 * a program of the command's choosing as host root. */
static int protect_proc(struct fb_err *e)
{
	static const char *const readonly[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
					       "/proc/asound"};
	static const char *const masked[] = {"/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list",
					     "/proc/sched_debug", "/proc/latency_stats", "/proc/timer_stats", "/proc/acpi",
					     "/proc/scsi"};
	for (size_t i = 0; i < sizeof readonly / sizeof readonly[0]; i++) {
		struct stat st;
		int t, r;
		if (lstat(readonly[i], &st) < 0)
			continue; /* not in this kernel */
		if ((t = clone_tree(readonly[i], 0, 0, 1, 0, e)) < 0)
			return -1;
		r = attach(t, readonly[i], FB_MOUNT_ATTR_RDONLY | FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV | FB_MOUNT_ATTR_NOEXEC,
			   0, 1, 0, 0, e);
		close(t);
		if (r < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++) {
		struct stat st;
		if (lstat(masked[i], &st) == 0 && hide(masked[i], S_ISDIR(st.st_mode), e) < 0)
			return -1;
	}
	return 0;
}

/* build_base_view makes the part of the view every run has, before the
 * parent says what to run: the host tree read-only, a fresh /proc, a minimal
 * /dev with its own devpts and /dev/shm, private /tmp, /var/tmp and /run,
 * and the empty entries covers are cloned from. plan.go knows these as
 * "base" items. */
int build_base_view(struct fb_err *e)
{
	static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"};
	static const char *const links[][2] = {{"/dev/ptmx", "pts/ptmx"}, {"/dev/fd", "/proc/self/fd"},
		{"/dev/stdin", "/proc/self/fd/0"}, {"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"}};
	const char *devpts_opts[] = {"ptmxmode", "0666", "mode", "0620", NULL};
	int dev[6];
	mode_t old = umask(0); /* every mode below is meant exactly */
	int r = -1;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fb_fail(e, "mounts", errno, "make / private");
		goto out;
	}
	/* The devices are cloned before the tree turns nodev. */
	for (int i = 0; i < 6; i++) {
		struct stat st;
		dev[i] = -1;
		if (stat(devices[i], &st) == 0 && S_ISCHR(st.st_mode) && (dev[i] = clone_tree(devices[i], 0, 0, 0, 0, e)) < 0)
			goto out;
	}
	/* One recursive step makes every host mount read-only, nosuid and
	 * nodev: chmod, chown, utime and xattr changes fail too, not only
	 * writes. */
	if (set_attr_at("/", FB_MOUNT_ATTR_RDONLY | FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV, 0, 1, e) < 0)
		goto out;
	/* A fresh proc shows only this PID namespace. */
	if (mount_fs("proc", NULL, FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV | FB_MOUNT_ATTR_NOEXEC, "/proc", e) < 0 ||
	    mount_tmpfs("/dev", 0755, FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NOEXEC, e) < 0)
		goto out;
	for (int i = 0; i < 6; i++) {
		if (dev[i] < 0)
			continue;
		if (make_entry(devices[i], 0644, 0, NULL, e) < 0 ||
		    attach(dev[i], devices[i], FB_MOUNT_ATTR_RDONLY | FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NOEXEC, 0, 0, 0, 0, e) < 0)
			goto out;
	}
	/* A new devpts instance (every devpts mount is one since Linux 4.7):
	 * the command cannot see or open the host's terminals, so it cannot
	 * inject input into them. */
	if (make_entry("/dev/pts", 0755, 1, NULL, e) < 0 ||
	    mount_fs("devpts", devpts_opts, FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NOEXEC, "/dev/pts", e) < 0)
		goto out;
	for (int i = 0; i < 5; i++)
		if (make_entry(links[i][0], 0, 0, links[i][1], e) < 0)
			goto out;
	/* The empty entries covers are cloned from live on a tmpfs of their
	 * own, detached at the end: the covers keep it alive, and it is never
	 * deleted (getdents on a deleted directory fails with ENOENT). */
	if (make_entry("/dev/shm", 0755, 1, NULL, e) < 0 ||
	    mount_tmpfs("/dev/shm", 01777, FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV, e) < 0 ||
	    make_entry(FB_STAGE, 0755, 1, NULL, e) < 0 ||
	    mount_tmpfs(FB_STAGE, 0755, FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV | FB_MOUNT_ATTR_NOEXEC, e) < 0 ||
	    make_entry(FB_STAGE_DIR, 0555, 1, NULL, e) < 0 ||
	    make_entry(FB_STAGE_FILE, 0444, 0, NULL, e) < 0 || protect_proc(e) < 0 || mount_private(e) < 0)
		goto out;
	r = 0;
out:
	for (int i = 0; i < 6; i++)
		if (dev[i] >= 0)
			close(dev[i]);
	umask(old);
	return r;
}

/* attach_readonly binds a file read-only onto itself: what a private copy's
 * file gets where the kernel refuses to mount the symlink leading to the
 * copy. The command then cannot change it, as before private copies. */
static int attach_readonly(const char *path, uint64_t dev, uint64_t ino, struct fb_err *e)
{
	int t = clone_tree(path, dev, ino, 0, 0, e), r;

	if (t < 0)
		return -1;
	r = attach(t, path, FB_MOUNT_ATTR_RDONLY | FB_MOUNT_ATTR_NOSUID | FB_MOUNT_ATTR_NODEV, 0, 0, dev, ino, e);
	close(t);
	return r;
}

/* The overlays that fell back to a plain bind, for the ready message. */
static uint32_t fallback_mask, fallback_errno;
static int noverlays;

void cache_fallbacks(uint32_t *mask, uint32_t *err)
{
	*mask = fallback_mask;
	*err = fallback_errno;
}

/* make_overlay builds the overlay of a private cache staged at stage: the
 * lower layer is what target shows now (the host's cache directory), upper
 * and work are in the staged private cache. "userxattr" is what overlay
 * needs in a user namespace (Linux 5.11: Documentation/filesystems/
 * overlayfs.rst, "User xattr"); "volatile" (5.10) is its "Volatile mount".
 * Returns the detached mount, or -1 with errno set. */
static int make_overlay(const char *target, const char *stage, const char *workdir, uint64_t attrs)
{
	char upper[96], work[160];
	int fs, m = -1, err;

	if (strchr(workdir, '/') || strlen(workdir) > 64 || strcmp(workdir, "..") == 0 || strcmp(workdir, ".") == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((fs = syscall(FB_SYS_FSOPEN, "overlay", FB_FSOPEN_CLOEXEC)) < 0)
		return -1;
	snprintf(upper, sizeof upper, "%s/upper", stage);
	snprintf(work, sizeof work, "%s/%s", stage, workdir[0] ? workdir : "work");
	if (syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_SET_STRING, "lowerdir", target, 0) == 0 &&
	    syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_SET_STRING, "upperdir", upper, 0) == 0 &&
	    syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_SET_STRING, "workdir", work, 0) == 0 &&
	    syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_SET_FLAG, "userxattr", NULL, 0) == 0 &&
	    /* No syncfs of the whole upper file system at each unmount (it
	     * was most of a run's added cost); the parent discards a cache a
	     * crash may have damaged (caches.Workspace.Prepare). */
	    syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_SET_FLAG, "volatile", NULL, 0) == 0 &&
	    syscall(FB_SYS_FSCONFIG, fs, FB_FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		m = syscall(FB_SYS_FSMOUNT, fs, FB_FSMOUNT_CLOEXEC, (unsigned)attrs);
	err = errno;
	close(fs);
	errno = err;
	return m;
}

/* overlay_cache mounts a private cache (priv, a clone of its directory on
 * the host) on target. If the kernel refuses the overlay (before 5.11, or
 * a lower file system overlay does not take), the cache's upper directory
 * alone is bound there: the command starts with an empty cache, and the
 * host's is never written either way. The staged private cache stays in
 * the staging tmpfs, which finish_view detaches with everything in it
 * before the command starts: one unmount for all (each costs an RCU grace
 * period). */
static int overlay_cache(int priv, const char *target, const char *workdir, uint64_t attrs, uint32_t keep, struct fb_err *e)
{
	char stage[64], upper[96];
	int ord = noverlays++, m, r, err;

	snprintf(stage, sizeof stage, "%s%d", FB_STAGE_CACHE, ord);
	/* Writable: overlay refuses an upper layer on a read-only mount. */
	if (set_attr(priv, 0, FB_MOUNT_ATTR_RDONLY, 0) < 0)
		return fb_fail(e, "mounts", errno, "make the private cache for \"%s\" writable", target);
	if (make_entry(stage, 0700, 1, NULL, e) < 0 || move_onto(priv, stage, 0, 0, "stage the private cache", e) < 0)
		return -1;
	m = make_overlay(target, stage, workdir, attrs);
	if (m < 0) {
		err = errno;
		if (ord < 32)
			fallback_mask |= 1u << ord;
		if (fallback_errno == 0)
			fallback_errno = err;
		if (keep & FB_OPF_REQUIRED)
			return fb_fail(e, "undo", err, "the kernel refused the overlay of \"%s\" that undo needs, and the command was allowed only because forgebox undo could take it back: run it with --no-undo to be asked about it instead", target);
		if (keep)
			return 0;
		snprintf(upper, sizeof upper, "%s/upper", stage);
		if ((m = clone_tree(upper, 0, 0, 0, 0, e)) < 0)
			return -1;
		if (set_attr(m, attrs, 0, 0) < 0) {
			err = errno;
			close(m);
			return fb_fail(e, "mounts", err, "set attributes for \"%s\"", target);
		}
	}
	r = move_onto(m, target, 0, 0, "cache", e);
	close(m);
	return r;
}

static int apply_op(const struct fb_mount *m, int *slot, struct fb_err *e)
{
	int recursive = (m->flags & FB_OPF_RECURSIVE) != 0, dir = (m->flags & FB_OPF_DIR) != 0, r;

	switch (m->op) {
	case FB_OP_CLONE:
		/* Host paths are cloned before anything of the plan covers them. */
		slot[m->slot] = clone_tree(m->a, m->dev, m->ino, recursive, (m->flags & FB_OPF_LINK) != 0, e);
		/* A link the kernel cannot clone: its attach falls back. */
		return slot[m->slot] < 0 && !((m->flags & FB_OPF_LINK) && e->err != ESTALE) ? -1 : 0;
	case FB_OP_ATTACH:
		if (slot[m->slot] < 0 && (m->flags & FB_OPF_LINK))
			return attach_readonly(m->a, m->dev, m->ino, e);
		if (slot[m->slot] < 0)
			return fb_fail(e, "mounts", EBADF, "attach \"%s\": slot %u is empty", m->a, m->slot);
		r = attach(slot[m->slot], m->a, m->set, m->clr, recursive, m->dev, m->ino, e);
		close(slot[m->slot]);
		slot[m->slot] = -1;
		if (r < 0 && (m->flags & FB_OPF_LINK) && e->err != ESTALE)
			return attach_readonly(m->a, m->dev, m->ino, e);
		return r;
	case FB_OP_SETATTR:
		return set_attr_at(m->a, m->set, m->clr, recursive, e);
	case FB_OP_TMPFS:
		return mount_tmpfs(m->a, m->mode, m->set, e);
	case FB_OP_MKDIR:
		return make_entry(m->a, m->mode, 1, NULL, e);
	case FB_OP_MKFILE:
		return make_entry(m->a, m->mode, 0, NULL, e);
	case FB_OP_SYMLINK:
		return make_entry(m->a, 0, 0, m->b, e);
	case FB_OP_HIDE:
		return hide(m->a, dir, e);
	case FB_OP_OVERLAY:
		if (slot[m->slot] < 0)
			return fb_fail(e, "mounts", EBADF, "overlay \"%s\": slot %u is empty", m->a, m->slot);
		r = overlay_cache(slot[m->slot], m->a, m->b, m->set, m->flags & (FB_OPF_KEEP | FB_OPF_REQUIRED), e);
		close(slot[m->slot]);
		slot[m->slot] = -1;
		return r;
	}
	return fb_fail(e, "mounts", EPROTO, "unknown mount op %u", m->op);
}

/* apply_view carries out the parent's plan on top of the base view. */
int apply_view(const struct fb_spec *s, struct fb_err *e)
{
	int *slot = calloc(s->slots + 1, sizeof *slot);
	mode_t old = umask(0);
	int r = 0;

	if (slot == NULL)
		return fb_fail(e, "mounts", ENOMEM, "allocate slots");
	for (uint32_t i = 0; i < s->slots; i++)
		slot[i] = -1;
	for (size_t i = 0; r == 0 && i < s->nmounts; i++)
		r = apply_op(&s->mounts[i], slot, e);
	for (uint32_t i = 0; i < s->slots; i++)
		if (slot[i] >= 0)
			close(slot[i]);
	free(slot);
	umask(old);
	return r;
}

/* finish_view detaches the staging tmpfs (the covers keep what they need
 * of it) and makes the base's own tmpfs mounts read-only. */
int finish_view(struct fb_err *e)
{
	for (int i = 0; i < NPRIVATE; i++)
		if (privates[i].fd >= 0)
			close(privates[i].fd);
	if (umount2(FB_STAGE, MNT_DETACH) < 0)
		return fb_fail(e, "mounts", errno, "detach \"%s\"", FB_STAGE);
	if (remove_entry(FB_STAGE, 1, e) < 0 || set_attr_at("/dev", FB_MOUNT_ATTR_RDONLY, 0, 0, e) < 0 ||
	    (base_run && set_attr_at("/run", FB_MOUNT_ATTR_RDONLY, 0, 0, e) < 0) ||
	    (base_var_run && set_attr_at("/var/run", FB_MOUNT_ATTR_RDONLY, 0, 0, e) < 0))
		return -1;
	return 0;
}
