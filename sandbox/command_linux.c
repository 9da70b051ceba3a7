/*
 * The command's process, from fork to exec: its own session and terminal,
 * its working directory, no privileges, only fds 0-2, and the program
 * looked up in the sandbox's PATH. A failure before exec reaches PID 1 over
 * a close-on-exec pipe.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>

#include "child_linux.h"

/* open_terminal allocates the command's pseudo-terminal from the sandbox's
 * own devpts, so the slave has a name inside (/dev/pts/0) and the command
 * never holds a descriptor of a host terminal. */
int open_terminal(const struct fb_spec *s, struct fb_term *t, struct fb_err *e)
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

void forwarded_signals(sigset_t *set)
{
	static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, FB_SIG_KILL_TREE};
	sigemptyset(set);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(set, sigs[i]);
}

/* reset_signals gives the command default signal handling: PID 1 blocked
 * the forwarded signals, and forgebox may have been started with some
 * ignored (a background job of a non-interactive shell ignores SIGINT),
 * which execve would pass on and make forwarding useless. */
static int reset_signals(struct fb_err *e)
{
	sigset_t none;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
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
int drop_capabilities(int isolated, struct fb_err *e)
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

/* join_cgroup moves the command into the run's cgroup, unless it was
 * cloned there, by writing "0" (this process) to each join file the parent
 * opened (tasks on v1, cgroup.procs on v2). The kernel checks the opener's credentials, so the write
 * needs no privilege here. Before anything else: whatever the command
 * does, it does inside the limits. */
static int join_cgroup(struct fb_spec *s, struct fb_err *e)
{
	for (size_t i = 0; i < s->njoin; i++) {
		if (!s->in_cgroup && write(s->join_fds[i], "0", 1) != 1)
			return fb_fail(e, "cgroup", errno, "join the run's cgroup");
		close(s->join_fds[i]);
	}
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	return 0;
}

/* set_rlimits applies the limits that stand in for a cgroup the caller
 * cannot create. */
static int set_rlimits(const struct fb_spec *s, struct fb_err *e)
{
	for (size_t i = 0; i < s->nrlimits; i++) {
		struct rlimit rl = {.rlim_cur = s->rlimits[i].soft, .rlim_max = s->rlimits[i].hard};
		if (setrlimit(s->rlimits[i].resource, &rl) < 0)
			return fb_fail(e, "rlimits", errno, "setrlimit(%u)", s->rlimits[i].resource);
	}
	return 0;
}

struct fb_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* restrict_files completes the parent's Landlock ruleset with the rules
 * for the mounts this sandbox made itself (the parent could not open them)
 * and enforces it. It needs no_new_privs first: landlock_restrict_self
 * refuses an unprivileged caller without it (Documentation/userspace-api/
 * landlock.rst). */
static int restrict_files(const struct fb_spec *s, struct fb_err *e)
{
	if (s->landlock_fd < 0)
		return 0;
	for (size_t i = 0; i < s->nrules; i++) {
		struct fb_path_beneath pb = {.allowed_access = s->rules[i].access};
		int err, fd = open(s->rules[i].path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ENOENT)
			continue; /* nothing there to grant */
		if (fd < 0)
			return fb_fail(e, "landlock", errno, "open %s for a rule", s->rules[i].path);
		pb.parent_fd = fd;
		err = syscall(FB_SYS_LANDLOCK_ADD_RULE, s->landlock_fd, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &pb, 0) < 0 ? errno : 0;
		close(fd);
		if (err)
			return fb_fail(e, "landlock", err, "add the rule for %s", s->rules[i].path);
	}
	if (syscall(FB_SYS_LANDLOCK_RESTRICT_SELF, s->landlock_fd, 0) < 0)
		return fb_fail(e, "landlock", errno, "landlock_restrict_self");
	close(s->landlock_fd);
	return 0;
}

/* send_listener hands the filter's notification listener to PID 1, which
 * passes it on to forgebox with the ready message. */
static int send_listener(int report, int fd)
{
	char tag = 'L';
	struct iovec iov = {.iov_base = &tag, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(&u, 0, sizeof u);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	while (sendmsg(report, &m, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* load_seccomp loads the filter the parent compiled. It comes last, so the
 * filter need not allow anything setup does; only execve follows.
 *
 * With a notifying twin (seccomp/doc.go, "Attribution"), that one is
 * loaded with a listener for forgebox to observe what the sandbox refuses.
 * Where the kernel makes no listener (before 5.0: EINVAL; a listener
 * already in the stack, from whoever started forgebox: EBUSY), the plain
 * filter is loaded as before and the run goes unobserved: attribution is
 * a report, not a protection. The twin notifies nothing this function
 * still does (sendmsg without an address, execve). Once the twin is
 * loaded, the listener must reach forgebox: without a reader every
 * refused or watched call would wait for ever, so failing to hand it over
 * fails the start. */
static int load_seccomp(const struct fb_spec *s, int report, struct fb_err *e)
{
	struct sock_fprog prog = {.len = s->bpf_len / sizeof(struct sock_filter), .filter = (struct sock_filter *)s->bpf};
	struct sock_fprog twin = {.len = s->notify_len / sizeof(struct sock_filter), .filter = (struct sock_filter *)s->notify_bpf};

	if (s->bpf_len == 0 && s->notify_len == 0)
		return 0;
	/* The twin never stands alone: if it could not be loaded, nothing would. */
	if (s->bpf_len == 0)
		return fb_fail(e, "seccomp", EINVAL, "a notifying filter came without the plain one");
	if (s->notify_len) {
		int fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &twin);
		if (fd >= 0) {
			int err = send_listener(report, fd) < 0 ? errno : 0;
			close(fd);
			if (err)
				return fb_fail(e, "seccomp", err, "hand the seccomp listener to PID 1");
			return 0;
		}
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return fb_fail(e, "seccomp", errno, "load the seccomp filter");
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

/* The command reports to PID 1 over a close-on-exec seqpacket socket: one
 * message of a single byte carrying the seccomp listener, if it made one,
 * then a failure before exec, or EOF: the program is running. */
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

	/* no_new_privs before Landlock, which requires it; capabilities
	 * after, while dropping them may still need CAP_SETPCAP; seccomp
	 * last, so that its filter need not allow any step of the setup. */
	if (join_cgroup(s, &e) < 0 ||
	    reset_signals(&e) < 0 ||
	    enter_session(t, &e) < 0 ||
	    enter_workdir(s, &e) < 0 ||
	    set_rlimits(s, &e) < 0 ||
	    set_no_new_privs(&e) < 0 ||
	    restrict_files(s, &e) < 0 ||
	    drop_capabilities(isolated, &e) < 0 ||
	    mark_fds_cloexec(&e) < 0 ||
	    load_seccomp(s, pipe_w, &e) < 0)
		report_to_pid1(pipe_w, &e);
	exec_program(s, &e);
	report_to_pid1(pipe_w, &e);
}

/* ---- PID 1: start, report, supervise --------------------------------- */

/* struct clone_args of linux/sched.h, up to the cgroup field (Linux 5.7). */
struct fb_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
		cgroup;
};
#define FB_CLONE_INTO_CGROUP 0x200000000ULL

/* fork_command forks the command's process. With a cgroup v2 directory it
 * is cloned straight into the group (CLONE_INTO_CGROUP); a kernel without
 * that (before 5.7) gets a plain fork, and the child joins through
 * its join file instead. */
static pid_t fork_command(struct fb_spec *s)
{
	if (s->cgroup_fd >= 0) {
		struct fb_clone_args a = {.flags = FB_CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)s->cgroup_fd};
		pid_t pid = syscall(FB_SYS_CLONE3, &a, sizeof a);
		if (pid == 0)
			s->in_cgroup = 1;
		if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL))
			return pid;
	}
	return fork();
}

/* release_command_fds closes what only the command needed: PID 1 must not
 * keep a way into the cgroup or the ruleset for the rest of the run. */
static void release_command_fds(struct fb_spec *s)
{
	for (size_t i = 0; i < s->njoin; i++)
		close(s->join_fds[i]);
	s->njoin = 0;
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	if (s->landlock_fd >= 0)
		close(s->landlock_fd);
	s->cgroup_fd = s->landlock_fd = -1;
}

/* read_report takes the command's next message, and the listener if one
 * comes with it. */
static ssize_t read_report(int fd, struct fb_exec_report *r, int *listener)
{
	struct iovec iov = {.iov_base = r, .iov_len = sizeof *r};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	ssize_t n;

	while ((n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
		int got;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&got, CMSG_DATA(c), sizeof got);
		if (*listener >= 0)
			close(got);
		else
			*listener = got;
	}
	return n;
}

int start_command(struct fb_spec *s, struct fb_term *t, pid_t *cmd, int *listener, struct fb_err *e)
{
	int p[2];
	struct fb_exec_report r;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0)
		return fb_fail(e, "start", errno, "socketpair");
	*cmd = fork_command(s);
	if (*cmd < 0)
		return fb_fail(e, s->cgroup_fd >= 0 ? "cgroup" : "start", errno, "start the command%s",
			       s->cgroup_fd >= 0 ? " in the run's cgroup" : "");
	if (*cmd == 0) {
		close(p[0]);
		command_main(s, t, p[1]);
	}
	close(p[1]);
	release_command_fds(s);
	if (t->slave >= 0) {
		close(t->slave);
		t->slave = -1;
	}
	/* The listener comes first, then the failure or the end. */
	while ((n = read_report(p[0], &r, listener)) == 1)
		;
	close(p[0]);
	if (n == (ssize_t)sizeof r) {
		r.step[sizeof r.step - 1] = 0;
		r.msg[sizeof r.msg - 1] = 0;
		static char step[sizeof r.step]; /* outlives this frame; PID 1 dies with it */
		memcpy(step, r.step, sizeof step);
		e->err = r.err;
		e->step = step;
		snprintf(e->msg, sizeof e->msg, "%s", r.msg);
		return -1;
	}
	return 0;
}

