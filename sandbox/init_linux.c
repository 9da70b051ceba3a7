/*
 * The sandbox child.
 *
 * An ELF constructor runs before the Go runtime. It starts the child in one
 * of two ways, and either way the child never runs Go: it stays a small
 * single-threaded C program, so it can unshare a user namespace and every
 * restriction applies to all of it, and it costs no second Go runtime start
 * (about a millisecond here; most of a Go launcher's overhead).
 *
 *   prefork   `forgebox run`: the constructor forks stage 0 at once, and the
 *             child enters its namespaces and builds the base view while
 *             the parent's Go runtime starts.
 *   re-exec   anything else that launches (doctor, --net host, the
 *             --best-effort fallback, library use): the parent executes its
 *             own binary with the hidden verb FB_VERB and sends stage 0 a
 *             first frame with the namespaces to enter.
 *
 * Everything else is decided by the parent (the Go side of package sandbox)
 * and arrives in the view frame. Three processes take part:
 *
 *   stage 0   in the host PID namespace: leaves the caller's session,
 *             unshares the namespaces, writes its ID maps, forks PID 1 and
 *             waits for it. Its parent-death signal ties it to forgebox;
 *             PID 1's ties PID 1 to it.
 *   PID 1     builds the filesystem view, opens the pseudo-terminal,
 *             starts the command, sheds its privileges and supervises: it
 *             reaps, forwards signals and reports how the command ended.
 *             When it exits the kernel kills all that is left in the PID
 *             namespace.
 *   command   command_linux.c: its own session, no privileges, exec.
 *
 * Any failure goes back to the parent as {step, errno, message}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_linux.h"

/* ---- stage 0 ---------------------------------------------------------- */

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
	if (write_proc_file("/proc/self/gid_map", map, e) < 0)
		return -1;
	if ((s->flags & FB_FLAG_NEWNET) && bring_up_loopback(e) < 0)
		return -1;
	if (sethostname(FB_HOSTNAME, strlen(FB_HOSTNAME)) < 0)
		return fb_fail(e, "hostname", errno, "set hostname %s", FB_HOSTNAME);
	return 0;
}

static __attribute__((noreturn)) void pid1_main(struct fb_spec *s);

/* stage0 is where both ways of starting meet. */
static __attribute__((noreturn)) void stage0(struct fb_spec *s)
{
	struct fb_err e = {0};
	pid_t parent = getppid(), pid1;
	int status;

	/* Leave forgebox's session: nothing inside may have the caller's
	 * terminal as its controlling terminal. */
	if (setsid() < 0)
		fb_fail(&e, "start", errno, "setsid"), die(&e);
	if ((s->flags & FB_FLAG_ISOLATE) && enter_namespaces(s, &e) < 0)
		die(&e);
	/* Entering a user namespace changes credentials, which clears the
	 * parent-death signal (commit_creds): arm it again, and go at once if
	 * forgebox died meanwhile. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(125);
	mark("namespaces");
	pid1 = fork();
	if (pid1 < 0)
		fb_fail(&e, "start", errno, "fork PID 1"), die(&e);
	if (pid1 == 0)
		pid1_main(s);
	close(FB_SYNC_FD);
	/* PID 1 becomes a zombie only after every process of its namespace is
	 * gone, so when this wait returns the tree is dead. */
	while (waitpid(pid1, &status, 0) < 0)
		if (errno != EINTR)
			_exit(125);
	_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
}

/* stage0_exec: re-executed with FB_VERB, the first frame says how to start. */
static __attribute__((noreturn)) void stage0_exec(void)
{
	static struct fb_spec s;
	struct fb_err e = {0};

	mark("child started");
	s.stdio[0] = s.stdio[1] = s.stdio[2] = -1;
	if (read_spec(FB_MSG_SPEC, &s, &e) < 0)
		die(&e);
	stage0(&s);
}

/* ---- prefork ---------------------------------------------------------- */

/* The preforked child, for the parent's Go side to claim. */
static int prefork_sock = -1, prefork_pidfd = -1;
static pid_t prefork_pid = -1;

int forgebox_claim_prefork(int *sock, int *pid, int *pidfd)
{
	if (prefork_sock < 0)
		return 0;
	*sock = prefork_sock;
	*pid = prefork_pid;
	*pidfd = prefork_pidfd;
	prefork_sock = -1;
	return 1;
}

/* std_fds_open makes sure 0, 1 and 2 exist before any descriptor is
 * created, so that the socket cannot take their place. */
static void std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDWR) != fd)
			_exit(125);
}

/* prefork starts stage 0 from the pristine process, before the Go runtime:
 * the child enters its namespaces and builds the base view while the
 * parent's runtime starts. It guesses the common case, a network namespace
 * of its own; a run that wants the host network discards it and re-execs. */
static void prefork(int argc, char **argv)
{
	static struct fb_spec s;
	pid_t parent = getpid(), pid;
	int sp[2];

	std_fds_open();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return;
	s.stdio[0] = s.stdio[1] = s.stdio[2] = -1;
	s.flags = FB_FLAG_ISOLATE | FB_FLAG_NEWNET;
	s.uid_out = s.uid_in = getuid();
	s.gid_out = s.gid_in = getgid();
	switch (pid = fork()) {
	case -1:
		close(sp[0]);
		close(sp[1]);
		return;
	case 0:
		mark("child started");
		/* Die with forgebox; if it already died, go now. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(125);
		if (dup2(sp[1], FB_SYNC_FD) < 0)
			_exit(125);
		/* Keep nothing the caller handed forgebox but 0, 1 and 2 (which
		 * the view replaces) and the socket. */
		if (syscall(FB_SYS_CLOSE_RANGE, FB_SYNC_FD + 1, ~0U, 0) < 0)
			for (int fd = FB_SYNC_FD + 1; fd < 1024; fd++)
				close(fd);
		/* /proc/PID/cmdline is readable inside: show the verb, not the
		 * caller's arguments. */
		for (int i = 1; i < argc; i++)
			memset(argv[i], 0, strlen(argv[i]));
		stage0(&s);
	}
	close(sp[1]);
	prefork_sock = sp[0];
	prefork_pid = pid;
	/* Not reaped yet, so the pid is this child's. */
	prefork_pidfd = syscall(FB_SYS_PIDFD_OPEN, pid, 0);
}

__attribute__((constructor)) static void forgebox_init(int argc, char **argv, char **envp)
{
	if (argc >= 2 && strcmp(argv[1], FB_VERB) == 0)
		stage0_exec();
	if (argc >= 2 && strcmp(argv[1], FB_RUN_VERB) == 0) {
		for (char **v = envp; v && *v; v++)
			if (strncmp(*v, FB_NO_PREFORK_ENV "=", sizeof FB_NO_PREFORK_ENV) == 0 && (*v)[sizeof FB_NO_PREFORK_ENV])
				return;
		prefork(argc, argv);
	}
}

/* ---- PID 1 -------------------------------------------------------------- */

/* open_proxy_listener listens on 127.0.0.1:port of the sandbox's network
 * namespace. The socket belongs to this namespace for good; the parent,
 * outside it, accepts on it and connects out for the command, which has
 * no other way out of its loopback. It is made before the command starts,
 * so the command's first connection waits in the backlog rather than
 * being refused. */
static int open_proxy_listener(const struct fb_spec *spec, int *fd, struct fb_err *e)
{
	uint16_t port = spec->proxy_port;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int s;

	/* On the host's loopback the listener would serve every local
	 * process, and the command would reach whatever holds the port. */
	if (!(spec->flags & FB_FLAG_NEWNET))
		return fb_fail(e, "network proxy", EINVAL, "a proxy needs the sandbox's own network namespace");
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return fb_fail(e, "network proxy", errno, "socket");
	if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 512) < 0) {
		int err = errno;
		close(s);
		return fb_fail(e, "network proxy", err, "listen on 127.0.0.1:%u inside the sandbox", port);
	}
	*fd = s;
	return 0;
}

/* report_ready hands the parent a pidfd of this process, to signal it
 * without racing against pid reuse, the terminal's master side and the
 * proxy's listening socket. */
static int report_ready(pid_t cmd, struct fb_term *t, int *proxy, int *listener, struct fb_err *e)
{
	uint8_t payload[12 + 24 * (1 + 32 + 8) + 8];
	uint32_t fell, fell_errno;
	size_t n;
	int fds[4], nfds = 0, have = 0;
	int pidfd = syscall(FB_SYS_PIDFD_OPEN, getpid(), 0);

	if (pidfd >= 0) {
		fds[nfds++] = pidfd;
		have |= FB_READY_PIDFD;
	}
	if (t->master >= 0) {
		fds[nfds++] = t->master;
		have |= FB_READY_MASTER;
	}
	if (*proxy >= 0) {
		fds[nfds++] = *proxy;
		have |= FB_READY_PROXY;
	}
	if (*listener >= 0) {
		fds[nfds++] = *listener;
		have |= FB_READY_NOTIFY;
	}
	put_le32(payload, cmd);
	put_le32(payload + 4, have);
	n = 8 + encode_marks(payload + 8, sizeof payload - 8 - 8);
	/* After the marks: the private caches that are not overlays. */
	cache_fallbacks(&fell, &fell_errno);
	put_le32(payload + n, fell);
	put_le32(payload + n + 4, fell_errno);
	n += 8;
	if (send_frame(FB_MSG_READY, payload, n, fds, nfds) < 0)
		return fb_fail(e, "start", errno, "report to forgebox");
	if (pidfd >= 0)
		close(pidfd);
	if (t->master >= 0) {
		close(t->master);
		t->master = -1;
	}
	if (*proxy >= 0) {
		close(*proxy);
		*proxy = -1;
	}
	/* PID 1 must not keep it: it is forgebox's alone to answer. */
	if (*listener >= 0) {
		close(*listener);
		*listener = -1;
	}
	return 0;
}

/* install_stdio puts the streams the parent chose on 0, 1 and 2. */
static int install_stdio(struct fb_spec *s, struct fb_err *e)
{
	for (int fd = 0; fd < 3; fd++) {
		if (s->stdio[fd] != fd && dup2(s->stdio[fd], fd) < 0)
			return fb_fail(e, "start", errno, "install standard stream %d", fd);
		if (s->stdio[fd] > 2)
			close(s->stdio[fd]);
	}
	return 0;
}

static __attribute__((noreturn)) void report_exit(int status, const struct rusage *ru)
{
	uint8_t p[32];

	put_le32(p, WIFSIGNALED(status) ? 1 : 0);
	put_le32(p + 4, WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	put_le64(p + 8, ru->ru_utime.tv_sec * 1000000ULL + ru->ru_utime.tv_usec);
	put_le64(p + 16, ru->ru_stime.tv_sec * 1000000ULL + ru->ru_stime.tv_usec);
	put_le64(p + 24, ru->ru_maxrss);
	send_frame(FB_MSG_EXIT, p, sizeof p, NULL, 0);
	_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
}

/* kill_leftovers: without a PID namespace (--best-effort fallback) the tree
 * is killed by process group and through the orphans this subreaper
 * adopted. */
static void kill_leftovers(pid_t cmd)
{
	char path[64], buf[4096];

	kill(-cmd, SIGKILL);
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", getpid(), getpid());
	for (int round = 0; round < 8; round++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n;
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

/* end_tree: the command has exited. Everything it left behind is killed and
 * reaped, and the standard streams closed, before the exit is reported: the
 * parent may return as soon as it has the report and the output's end,
 * without waiting for the namespaces to be torn down. */
static __attribute__((noreturn)) void end_tree(pid_t cmd, int isolated, int status, const struct rusage *ru)
{
	if (isolated)
		kill(-1, SIGKILL); /* every process of this PID namespace but PID 1 */
	else
		kill_leftovers(cmd);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	for (int fd = 0; fd < 3; fd++)
		close(fd);
	report_exit(status, ru);
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
		if (!(pf[0].revents & POLLIN) || read(sfd, &si, sizeof si) != sizeof si)
			continue;
		if (si.ssi_signo == FB_SIG_KILL_TREE && !isolated) {
			kill_leftovers(cmd);
			_exit(137);
		}
		if (si.ssi_signo != SIGCHLD) {
			if (kill(-cmd, si.ssi_signo) < 0)
				kill(cmd, si.ssi_signo);
			continue;
		}
		for (;;) {
			struct rusage ru;
			int status;
			pid_t w = wait4(-1, &status, WNOHANG, &ru);
			if (w <= 0)
				break;
			if (w == cmd)
				end_tree(cmd, isolated, status, &ru);
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
	int sfd, proxy = -1, listener = -1;

	mark("pid 1 started");
	/* Die with stage 0 (and so with forgebox). With a PID namespace,
	 * SIGKILL takes the whole tree; without one (--best-effort) PID 1
	 * takes FB_SIG_KILL_TREE instead, to kill the tree itself first.
	 * Non-dumpable before the command exists: it must never read this
	 * process's memory, environ or descriptors through /proc. */
	if (prctl(PR_SET_PDEATHSIG, isolated ? SIGKILL : FB_SIG_KILL_TREE, 0, 0, 0) < 0 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		fb_fail(&e, "start", errno, "set parent-death signal and make PID 1 non-dumpable"), die(&e);
	if (!isolated && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		fb_fail(&e, "start", errno, "become a subreaper"), die(&e);
	/* Signals are taken through a signalfd; blocked before the fork so
	 * none is lost, unblocked again in the command. */
	forwarded_signals(&sigs);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0)
		fb_fail(&e, "start", errno, "signalfd"), die(&e);

	if (isolated && build_base_view(&e) < 0)
		die(&e);
	mark("base view");
	if (read_view(s, &e) < 0 || install_stdio(s, &e) < 0)
		die(&e);
	mark("view read");
	if (isolated && (apply_view(s, &e) < 0 || finish_view(&e) < 0))
		die(&e);
	mark("view");
	if ((s->proxy_port && open_proxy_listener(s, &proxy, &e) < 0) ||
	    ((s->run_flags & FB_RUN_PTY) && open_terminal(s, &t, &e) < 0) ||
	    start_command(s, &t, &cmd, &listener, &e) < 0 ||
	    (mark("command executed"), report_ready(cmd, &t, &proxy, &listener, &e)) < 0 ||
	    (isolated && drop_capabilities(1, &e) < 0))
		die(&e);
	supervise(cmd, sfd, isolated);
}

/* Exported for the wire test. */
int forgebox_wire_constant(int which)
{
	static const int v[] = {FB_MSG_SPEC, FB_MSG_READY, FB_MSG_ERROR, FB_MSG_EXIT, FB_MSG_VIEW, FB_TAG_FLAGS,
				FB_TAG_UID_OUT, FB_TAG_GID_OUT, FB_TAG_UID_IN, FB_TAG_GID_IN, FB_TAG_ARG, FB_TAG_ENV,
				FB_TAG_CWD, FB_TAG_PATH, FB_TAG_MOUNT, FB_TAG_WINSIZE, FB_TAG_ALT_ARG0, FB_TAG_SLOTS,
				FB_TAG_RUN_FLAGS, FB_FLAG_NEWNET, FB_FLAG_ISOLATE, FB_RUN_PTY,
				FB_OP_CLONE, FB_OP_ATTACH, FB_OP_SETATTR, FB_OP_TMPFS, FB_OP_MKDIR, FB_OP_MKFILE,
				FB_OP_SYMLINK, FB_OP_HIDE, FB_OPF_RECURSIVE, FB_OPF_DIR, FB_SYNC_FD,
				FB_MAX_FRAME, FB_MOUNT_FIXED, FB_TAG_FDS, FB_TAG_RULE, FB_TAG_SECCOMP,
				FB_TAG_RLIMIT, FB_FD_LANDLOCK, FB_FD_CGROUP, FB_FD_JOIN_SHIFT, FB_MAX_JOIN,
				FB_TAG_PROXY_PORT, FB_READY_PIDFD, FB_READY_MASTER, FB_READY_PROXY,
				FB_TAG_SECCOMP_NOTIFY, FB_READY_NOTIFY, FB_OPF_LINK, FB_OP_OVERLAY};
	return which >= 0 && which < (int)(sizeof v / sizeof v[0]) ? v[which] : -1;
}
