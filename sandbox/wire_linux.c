/*
 * The child's side of the wire: errors, the setup timeline, frames, and
 * parsing the spec. Layouts are described in wire.go.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "child_linux.h"

int fb_fail(struct fb_err *e, const char *step, int err, const char *fmt, ...)
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
void put_le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = v >> (8 * i); }
void put_le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = v >> (8 * i); }
static uint16_t le16(const uint8_t *p) { return p[0] | (uint16_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

/* The setup timeline, for forgebox run --trace. The child is single
 * threaded and short-lived; one fixed table is enough. */
static struct {
	const char *step;
	uint64_t ns;
} marks[24];
static int nmarks;

void mark(const char *step)
{
	struct timespec ts;
	if (nmarks < (int)(sizeof marks / sizeof marks[0]) && clock_gettime(CLOCK_MONOTONIC, &ts) == 0) {
		marks[nmarks].step = step;
		marks[nmarks].ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		nmarks++;
	}
}

/* encode_marks writes u32 count, then per mark u8 length, name, u64 ns. */
size_t encode_marks(uint8_t *p, size_t room)
{
	size_t n = 4;
	int count = 0;

	for (int i = 0; i < nmarks; i++) {
		size_t sl = strnlen(marks[i].step, 32);
		if (n + 1 + sl + 8 > room)
			break;
		p[n++] = sl;
		memcpy(p + n, marks[i].step, sl);
		n += sl;
		put_le64(p + n, marks[i].ns);
		n += 8;
		count++;
	}
	put_le32(p, count);
	return n;
}

/* send_frame writes one frame, with fds attached to its first byte. */
int send_frame(uint8_t type, const uint8_t *payload, size_t n, const int *fds, int nfds)
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

void report_error(const struct fb_err *e)
{
	uint8_t buf[4 + 2 + 64 + 2 + sizeof e->msg];
	const char *step = e->step ? e->step : "";
	size_t sl = strnlen(step, 64), ml = strnlen(e->msg, sizeof e->msg), n = 0;

	put_le32(buf, e->err);
	n += 4;
	put_le16(buf + n, sl);
	n += 2;
	memcpy(buf + n, step, sl);
	n += sl;
	put_le16(buf + n, ml);
	n += 2;
	memcpy(buf + n, e->msg, ml);
	n += ml;
	if (send_frame(FB_MSG_ERROR, buf, n, NULL, 0) < 0 && errno != EPIPE && errno != ECONNRESET) {
		/* No parent to tell: run by hand. A parent that went away (it
		 * refused its flags before sending the view, or was killed)
		 * has nothing to hear, and its stderr is not ours to write. */
		dprintf(2, "forgebox: sandbox setup failed at %s: %s\n", step, e->msg);
	}
}

void die(const struct fb_err *e)
{
	report_error(e);
	_exit(125);
}

/* read_full reads exactly n bytes, collecting descriptors passed along. */
static int read_full(void *buf, size_t n, int *fds, int *nfds, int maxfds)
{
	size_t got = 0;

	while (got < n) {
		char cbuf[CMSG_SPACE(16 * sizeof(int))];
		struct iovec iov = {(uint8_t *)buf + got, n - got};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
		ssize_t r = recvmsg(FB_SYNC_FD, &m, MSG_CMSG_CLOEXEC);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? (errno = EPIPE, -1) : -1;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int *in = (int *)CMSG_DATA(c);
			for (int i = 0; i < k; i++) {
				if (fds && *nfds < maxfds)
					fds[(*nfds)++] = in[i];
				else
					close(in[i]);
			}
		}
		if (m.msg_flags & MSG_CTRUNC)
			return errno = EPROTO, -1;
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
	size_t off, ai = 0, ei = 0, mi = 0, ri = 0, li = 0;

	s->argc = s->envc = s->nmounts = s->nrules = s->nrlimits = 0;
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
				s->nrules += tag == FB_TAG_RULE;
				s->nrlimits += tag == FB_TAG_RLIMIT;
				continue;
			}
			switch (tag) {
			case FB_TAG_FLAGS: bad = len != 4; if (!bad) s->flags = le32(v); break;
			case FB_TAG_UID_OUT: bad = len != 4; if (!bad) s->uid_out = le32(v); break;
			case FB_TAG_GID_OUT: bad = len != 4; if (!bad) s->gid_out = le32(v); break;
			case FB_TAG_UID_IN: bad = len != 4; if (!bad) s->uid_in = le32(v); break;
			case FB_TAG_GID_IN: bad = len != 4; if (!bad) s->gid_in = le32(v); break;
			case FB_TAG_RUN_FLAGS: bad = len != 4; if (!bad) s->run_flags = le32(v); break;
			case FB_TAG_SLOTS: bad = len != 4; if (!bad) s->slots = le32(v); break;
			case FB_TAG_ARG: bad = take_string(v, len, (const char **)&s->argv[ai++]); break;
			case FB_TAG_ENV: bad = take_string(v, len, (const char **)&s->envp[ei++]); break;
			case FB_TAG_CWD: bad = take_string(v, len, &s->cwd); break;
			case FB_TAG_PATH: bad = take_string(v, len, &s->path); break;
			case FB_TAG_ALT_ARG0: bad = take_string(v, len, &s->alt_arg0); break;
			case FB_TAG_WINSIZE: bad = len != 4; if (!bad) { s->rows = le16(v); s->cols = le16(v + 2); } break;
			case FB_TAG_MOUNT: bad = parse_mount(v, len, &s->mounts[mi++]); break;
			case FB_TAG_FDS: bad = len != 4; if (!bad) s->fd_bits = le32(v); break;
			case FB_TAG_RULE:
				bad = len < 9 || take_string(v + 8, len - 8, &s->rules[ri].path);
				s->rules[ri++].access = len < 8 ? 0 : le64(v);
				break;
			case FB_TAG_SECCOMP:
				bad = len == 0 || len % 8 != 0 || len / 8 > 0xFFFF || s->bpf != NULL;
				if (!bad && (s->bpf = malloc(len)) == NULL)
					return fb_fail(e, "spec", ENOMEM, "allocate the seccomp filter");
				if (!bad) {
					memcpy(s->bpf, v, len);
					s->bpf_len = len;
				}
				break;
			case FB_TAG_SECCOMP_NOTIFY:
				bad = len == 0 || len % 8 != 0 || len / 8 > 0xFFFF || s->notify_bpf != NULL;
				if (!bad && (s->notify_bpf = malloc(len)) == NULL)
					return fb_fail(e, "spec", ENOMEM, "allocate the seccomp filter");
				if (!bad) {
					memcpy(s->notify_bpf, v, len);
					s->notify_len = len;
				}
				break;
			case FB_TAG_RLIMIT:
				bad = len != 24;
				if (!bad) {
					s->rlimits[li].resource = le32(v);
					s->rlimits[li].soft = le64(v + 8);
					s->rlimits[li++].hard = le64(v + 16);
				}
				break;
			case FB_TAG_PROXY_PORT:
				bad = len != 4 || le32(v) == 0 || le32(v) > 0xFFFF;
				if (!bad)
					s->proxy_port = (uint16_t)le32(v);
				break;
			default: return fb_fail(e, "spec", EPROTO, "unknown field %u", tag);
			}
			if (bad)
				return fb_fail(e, "spec", EPROTO, "malformed field %u", tag);
		}
		if (pass == 0 && (s->argc || s->envc || s->nmounts || s->nrules || s->nrlimits)) {
			s->argv = calloc(s->argc + 1, sizeof *s->argv);
			s->envp = calloc(s->envc + 1, sizeof *s->envp);
			s->mounts = calloc(s->nmounts + 1, sizeof *s->mounts);
			s->rules = calloc(s->nrules + 1, sizeof *s->rules);
			s->rlimits = calloc(s->nrlimits + 1, sizeof *s->rlimits);
			if (!s->argv || !s->envp || !s->mounts || !s->rules || !s->rlimits)
				return fb_fail(e, "spec", ENOMEM, "allocate spec");
		}
	}
	return 0;
}

/* read_frame reads one frame of the given type into s, and up to maxfds
 * descriptors sent with it. */
static int read_frame(uint8_t type, struct fb_spec *s, int *fds, int *nfds, int maxfds, struct fb_err *e)
{
	uint8_t hdr[5];
	uint32_t n;
	uint8_t *buf;

	if (read_full(hdr, sizeof hdr, fds, nfds, maxfds) < 0)
		return fb_fail(e, "spec", errno, "read spec");
	n = le32(hdr);
	if (hdr[4] != type || n < 1 || n > FB_MAX_FRAME)
		return fb_fail(e, "spec", EPROTO, "bad spec frame (type %u, %u bytes)", hdr[4], n);
	buf = malloc(n);
	if (buf == NULL)
		return fb_fail(e, "spec", ENOMEM, "allocate %u bytes", n);
	if (read_full(buf, n - 1, fds, nfds, maxfds) < 0)
		return fb_fail(e, "spec", errno, "read spec");
	return parse_spec(buf, n - 1, s, e);
}

int read_spec(uint8_t type, struct fb_spec *s, struct fb_err *e)
{
	return read_frame(type, s, NULL, NULL, 0, e);
}

/* read_view reads the command, its standard streams and the rest of the
 * mount plan, which the parent sends once it has planned them. */
int read_view(struct fb_spec *s, struct fb_err *e)
{
	int fds[3 + 2 + FB_MAX_JOIN], nfds = 0, want = 3, i = 3;
	uint32_t known = FB_FD_LANDLOCK | FB_FD_CGROUP | (0xffu << FB_FD_JOIN_SHIFT);

	if (read_frame(FB_MSG_VIEW, s, fds, &nfds, sizeof fds / sizeof fds[0], e) < 0)
		return -1;
	s->njoin = (s->fd_bits >> FB_FD_JOIN_SHIFT) & 0xff;
	want += !!(s->fd_bits & FB_FD_LANDLOCK) + !!(s->fd_bits & FB_FD_CGROUP) + (int)s->njoin;
	if (nfds != want || (s->fd_bits & ~known) || s->njoin > FB_MAX_JOIN)
		return fb_fail(e, "spec", EPROTO, "the view came with %d descriptors, not %d", nfds, want);
	memcpy(s->stdio, fds, sizeof s->stdio);
	s->landlock_fd = (s->fd_bits & FB_FD_LANDLOCK) ? fds[i++] : -1;
	s->cgroup_fd = (s->fd_bits & FB_FD_CGROUP) ? fds[i++] : -1;
	for (size_t j = 0; j < s->njoin; j++)
		s->join_fds[j] = fds[i++];
	if (s->argc == 0 || s->cwd == NULL || s->path == NULL)
		return fb_fail(e, "spec", EPROTO, "spec lacks argv, cwd or PATH");
	if (s->slots > s->nmounts)
		return fb_fail(e, "spec", EPROTO, "%u slots for %zu mount ops", s->slots, s->nmounts);
	for (size_t i = 0; i < s->nmounts; i++)
		if ((s->mounts[i].op == FB_OP_CLONE || s->mounts[i].op == FB_OP_ATTACH) && s->mounts[i].slot >= s->slots)
			return fb_fail(e, "spec", EPROTO, "mount op %zu uses slot %u of %u", i, s->mounts[i].slot, s->slots);
	return 0;
}
