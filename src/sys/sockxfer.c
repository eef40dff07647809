/* Hand-over of listening sockets at reload (sockxfer.h): the old process
 * answers "_getsocks" on a stats socket declared with "expose-fd listeners"
 * by passing its frontends' listening sockets (SCM_RIGHTS); the new one,
 * started with -x, fetches them before binding, so that the connections
 * waiting in their queues are served by it instead of being reset.
 *
 * The answer, on the stream of the CLI connection (doc/management.md):
 *   "sluice-sockets 1 <total>\n"               one plain message
 *   "batch <n>\n" then <n> lines "<key>\n"     one message per batch of
 *                                              1..SOCKXFER_BATCH sockets,
 *                                              carrying their descriptors in
 *                                              the order of the keys
 *   "end\n"                                    then the CLI's empty line.
 * A refusal is an ordinary CLI answer (one line, then the empty line). */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/fdpass.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/sockxfer.h>
#include <sluice/str.h>

#define XFER_MAGIC    "sluice-sockets 1 "
#define XFER_KEY_MAX  300            /* "unix@" + a sun_path, with room */
#define XFER_LINE_MAX 512
#define XFER_SCM_MAX  253            /* SCM_MAX_FD: most fds one message carries */

static uint64_t xfer_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits until <fd> is ready for <ev> (POLLIN/POLLOUT) or <deadline> (ms of
 * xfer_now()) passes. Returns 0, or -1 with errno (ETIMEDOUT). */
static int xfer_wait(int fd, short ev, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = ev };
		uint64_t now = xfer_now();
		int r;

		if (now >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&p, 1, (int)(deadline - now));
		if (r > 0)
			return 0;
		if (r == -1 && errno != EINTR)
			return -1;
	}
}

/* ---- the old process: "_getsocks" ---- */

/* Sends <len> bytes of <data> on <fd>, the <nfds> descriptors of <fds> with
 * the first of them, before <deadline>. Returns 0, or -1 with errno. */
static int xfer_send(int fd, const char *data, size_t len, const int *fds, int nfds,
                     uint64_t deadline)
{
	size_t off = 0;

	while (off < len) {
		/* the descriptors go with the first byte */
		ssize_t n = fdpass_sendmsg(fd, data + off, len - off, off ? NULL : fds,
					   off ? 0 : nfds, MSG_DONTWAIT);

		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno != EAGAIN || xfer_wait(fd, POLLOUT, deadline) == -1)
			return -1;
	}
	return 0;
}

/* Whether <li> is a listening socket of a frontend that can be handed over. */
static int xfer_eligible(const struct listener *li, char *key, size_t size)
{
	return (li->flags & LI_F_BOUND) && li->fd >= 0 && !(li->flags & LI_F_CLI) &&
	       *listener_key(li, key, size);
}

/* Sends one batch: its line, then the keys in <keys>, with <n> descriptors. */
static int xfer_send_batch(int fd, struct dstr *keys, const int *fds, int n, uint64_t deadline)
{
	struct dstr msg = { 0 };
	int ret;

	dstr_printf(&msg, "batch %d\n", n);
	dstr_add(&msg, keys->p, keys->len);
	ret = msg.p ? xfer_send(fd, msg.p, msg.len, fds, n, deadline) : -1;
	dstr_free(&msg);
	dstr_consume(keys, keys->len);
	return ret;
}

/* Sends every eligible listener, in batches. Returns the number sent, or -1
 * with errno. */
static int xfer_send_all(struct cli_ctx *ctx, uint64_t deadline)
{
	char key[XFER_KEY_MAX];
	struct dstr keys = { 0 };
	int fds[SOCKXFER_BATCH], n = 0, total = 0, ret = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		if (px->cap & PR_CAP_FE)
			for (struct listener *li = px->listeners; li; li = li->next)
				total += xfer_eligible(li, key, sizeof(key));
	/* What earlier commands of the line wrote goes first, in order. */
	dstr_printf(&ctx->out, XFER_MAGIC "%d\n", total);
	if (xfer_send(ctx->fd, ctx->out.p, ctx->out.len, NULL, 0, deadline) == -1)
		return -1;
	dstr_consume(&ctx->out, ctx->out.len);

	for (struct proxy *px = global.proxies; px && ret == 0; px = px->next) {
		if (!(px->cap & PR_CAP_FE))
			continue;
		for (struct listener *li = px->listeners; li && ret == 0; li = li->next) {
			if (!xfer_eligible(li, key, sizeof(key)))
				continue;
			dstr_printf(&keys, "%s\n", key);
			fds[n++] = li->fd;
			if (n == SOCKXFER_BATCH) {
				ret = xfer_send_batch(ctx->fd, &keys, fds, n, deadline);
				n = 0;
			}
		}
	}
	if (ret == 0 && n)
		ret = xfer_send_batch(ctx->fd, &keys, fds, n, deadline);
	dstr_free(&keys);
	if (ret == 0)
		ret = xfer_send(ctx->fd, "end\n", 4, NULL, 0, deadline);
	return ret == 0 ? total : -1;
}

/* "_getsocks": passes every frontend listening socket to the client (the
 * process replacing us, started with -x). Only on a unix stats socket
 * declared with "expose-fd listeners", at any level as in HAProxy: the
 * option is the operator's consent to hand the sockets over. */
static int cli_getsocks(struct cli_ctx *ctx, int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int n;

	if (!ctx->expose_fd) {
		dstr_printf(&ctx->out, "Permission denied: this stats socket does not have "
			    "'expose-fd listeners'.\n");
		return -1;
	}
	if (argc > 1) {
		dstr_printf(&ctx->out, "'_getsocks' takes no argument.\n");
		return -1;
	}
	if (getsockname(ctx->fd, (struct sockaddr *)&ss, &sl) == -1 || ss.ss_family != AF_UNIX) {
		dstr_printf(&ctx->out, "Listening sockets can only be handed over on a unix "
			    "stats socket.\n");
		return -1;
	}
	n = xfer_send_all(ctx, xfer_now() + SOCKXFER_TIMEOUT);
	if (n < 0) {
		log_warning("handing the listening sockets over on the stats socket failed: %s",
			    strerror(errno));
		ctx->quit = 1;   /* the answer is cut: the connection ends here */
		return -1;
	}
	/* A unix socket handed over keeps its path in the new process: ours is
	 * no longer ours alone to remove when we stop. */
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct listener *li = px->listeners; li; li = li->next)
			if ((li->flags & (LI_F_UNIX | LI_F_BOUND)) == (LI_F_UNIX | LI_F_BOUND))
				li->ux_ino = 0;
	log_notice("%d listening socket(s) handed over on the stats socket (expose-fd listeners)",
		   n);
	return 0;
}

static struct cli_kw sockxfer_cli_kws[] = {
	/* internal, between two sluice processes: not listed by "help" */
	{ { "_getsocks", NULL }, NULL, NULL, CLI_LVL_USER, cli_getsocks },
};

SLUICE_INIT(sockxfer_register)
{
	cli_register(sockxfer_cli_kws, ARRAY_SIZE(sockxfer_cli_kws));
}

/* ---- the new process: -x ---- */

struct xfer_rx {
	const char *path;
	int        *fds;        /* received, in order */
	int         nfds, cap;
	char      **keys;       /* keys[i] goes with fds[i] */
	int         nkeys;
	int         total;      /* announced, -1 before the first line */
	int         assigned;   /* descriptors claimed by "batch" lines */
	int         batch_left; /* keys still expected in the current batch */
	int         ended;      /* "end" seen */
	char        err[256];
};

static int xfer_fail(struct xfer_rx *rx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int xfer_fail(struct xfer_rx *rx, const char *fmt, ...)
{
	va_list ap;

	if (!rx->err[0]) {
		va_start(ap, fmt);
		vsnprintf(rx->err, sizeof(rx->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Copies <len> bytes of <s> to <out> for a message: printable, cut short. */
static const char *xfer_quote(const char *s, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 4 < size; i++)
		out[o++] = (unsigned char)s[i] >= 0x20 && s[i] != 0x7f ? s[i] : '?';
	if (i < len && o + 4 <= size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

static int xfer_key_valid(const char *k, size_t len)
{
	if (len >= XFER_KEY_MAX || !((len > 4 && strncmp(k, "tcp@", 4) == 0) ||
				     (len > 5 && strncmp(k, "unix@", 5) == 0)))
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)k[i] < 0x20 || k[i] == 0x7f)
			return 0;
	return 1;
}

/* Takes the descriptors of one received message. Returns 0 or -1 (they
 * are then kept in rx->fds all the same, to be closed with the rest). */
static int xfer_take_fds(struct xfer_rx *rx, const int *fds, int n)
{
	int limit = rx->total >= 0 ? rx->total : XFER_SCM_MAX;

	if (rx->nfds + n > rx->cap) {
		int cap = MAX(rx->cap * 2, rx->nfds + n);
		int *p = realloc(rx->fds, (size_t)cap * sizeof(int));

		if (!p) {
			for (int i = 0; i < n; i++)
				close(fds[i]);
			return xfer_fail(rx, "out of memory");
		}
		rx->fds = p;
		rx->cap = cap;
	}
	memcpy(rx->fds + rx->nfds, fds, (size_t)n * sizeof(int));
	rx->nfds += n;
	if (rx->ended || rx->nfds > limit)
		return xfer_fail(rx, "it sent more descriptors than the %d it announced",
				 rx->total >= 0 ? rx->total : 0);
	return 0;
}

/* One line of the answer (without its '\n'). Returns 0 or -1. */
static int xfer_line(struct xfer_rx *rx, const char *l, size_t len)
{
	char q[96];

	if (rx->total < 0) {
		char *end;
		long v;

		if (len <= strlen(XFER_MAGIC) || strncmp(l, XFER_MAGIC, strlen(XFER_MAGIC)) != 0)
			return xfer_fail(rx, "unexpected answer '%s' (is the socket declared with "
					 "'expose-fd listeners'?)",
					 xfer_quote(l, len, q, sizeof(q)));
		errno = 0;
		v = strtol(l + strlen(XFER_MAGIC), &end, 10);
		if (errno || end != l + len || v < 0 || v > SOCKXFER_MAX_TOTAL)
			return xfer_fail(rx, "invalid socket count in '%s'",
					 xfer_quote(l, len, q, sizeof(q)));
		rx->total = (int)v;
		if (rx->nfds > rx->total)
			return xfer_fail(rx, "it sent more descriptors than the %d it announced",
					 rx->total);
		rx->keys = calloc((size_t)rx->total + 1, sizeof(*rx->keys));
		if (!rx->keys)
			return xfer_fail(rx, "out of memory");
		return 0;
	}
	if (rx->ended) {
		if (len)   /* only the CLI's closing empty line may follow */
			return xfer_fail(rx, "unexpected line '%s' after the end",
					 xfer_quote(l, len, q, sizeof(q)));
		return 0;
	}
	if (rx->batch_left) {
		if (!xfer_key_valid(l, len))
			return xfer_fail(rx, "invalid socket key '%s'", xfer_quote(l, len, q, sizeof(q)));
		rx->keys[rx->nkeys] = strndup(l, len);
		if (!rx->keys[rx->nkeys])
			return xfer_fail(rx, "out of memory");
		rx->nkeys++;
		rx->batch_left--;
		return 0;
	}
	if (len > 6 && strncmp(l, "batch ", 6) == 0) {
		char *end;
		long n;

		errno = 0;
		n = strtol(l + 6, &end, 10);
		if (errno || end != l + len || n < 1 || n > SOCKXFER_BATCH)
			return xfer_fail(rx, "invalid batch line '%s'", xfer_quote(l, len, q, sizeof(q)));
		if (rx->assigned + n > rx->total)
			return xfer_fail(rx, "it sent more sockets than the %d it announced", rx->total);
		/* The descriptors come with the first bytes of their batch. */
		if (rx->nfds - rx->assigned < n)
			return xfer_fail(rx, "a batch of %ld sockets came with %d descriptor(s)",
					 n, rx->nfds - rx->assigned);
		rx->assigned += (int)n;
		rx->batch_left = (int)n;
		return 0;
	}
	if (len == 3 && memcmp(l, "end", 3) == 0) {
		if (rx->nkeys != rx->total)
			return xfer_fail(rx, "it ended after %d of the %d sockets it announced",
					 rx->nkeys, rx->total);
		if (rx->nfds != rx->total)
			return xfer_fail(rx, "it sent more descriptors than the %d it announced",
					 rx->total);
		rx->ended = 1;
		return 0;
	}
	return xfer_fail(rx, "unexpected line '%s'", xfer_quote(l, len, q, sizeof(q)));
}

/* Reads the whole answer on <fd> into <rx>. Returns 0 or -1. */
static int xfer_receive(struct xfer_rx *rx, int fd, uint64_t deadline)
{
	char buf[16384];
	size_t blen = 0;

	for (;;) {
		union {
			char            b[CMSG_SPACE(XFER_SCM_MAX * sizeof(int))];
			struct cmsghdr  align;
		} cm;
		struct iovec iov = { .iov_base = buf + blen, .iov_len = sizeof(buf) - blen };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				     .msg_controllen = sizeof(cm.b) };
		size_t start = 0;
		ssize_t n;
		int r = 0;

		if (xfer_wait(fd, POLLIN, deadline) == -1)
			return xfer_fail(rx, "%s", errno == ETIMEDOUT ? "no complete answer in time" :
					 strerror(errno));
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return xfer_fail(rx, "receiving: %s", strerror(errno));
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
			    c->cmsg_len < CMSG_LEN(0))
				continue;
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			int fds[XFER_SCM_MAX];

			memcpy(fds, CMSG_DATA(c), (size_t)MIN(k, XFER_SCM_MAX) * sizeof(int));
			if (xfer_take_fds(rx, fds, MIN(k, XFER_SCM_MAX)) == -1)
				r = -1;
		}
		if (mh.msg_flags & MSG_CTRUNC)
			return xfer_fail(rx, "it sent more descriptors in one message than allowed");
		if (r == -1)
			return -1;
		if (n == 0)
			break;
		blen += (size_t)n;
		for (char *nl; (nl = memchr(buf + start, '\n', blen - start)); start = (size_t)(nl - buf) + 1)
			if (xfer_line(rx, buf + start, (size_t)(nl - buf) - start) == -1)
				return -1;
		memmove(buf, buf + start, blen - start);
		blen -= start;
		if (blen >= XFER_LINE_MAX)
			return xfer_fail(rx, "a line longer than %d bytes", XFER_LINE_MAX);
	}
	if (rx->total < 0)
		return xfer_fail(rx, "the connection closed without an answer");
	if (!rx->ended)
		return xfer_fail(rx, "the connection closed after %d of the %d sockets announced",
				 rx->nkeys, rx->total);
	if (blen)
		return xfer_fail(rx, "unexpected data after the end");
	return 0;
}

/* Whether <fd> is what <key> says: a listening stream socket of its family
 * (and for TCP, bound to its address). Returns 0 or -1. */
static int xfer_check(struct xfer_rx *rx, int fd, const char *key)
{
	int type = 0, acc = 0, dom = -1, tcp = strncmp(key, "tcp@", 4) == 0;
	socklen_t ol = sizeof(int);
	struct stat st;

	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
		return xfer_fail(rx, "the descriptor sent for '%s' is not a socket", key);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &ol) == -1 || type != SOCK_STREAM ||
	    (ol = sizeof(int), getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &ol)) == -1 || !acc)
		return xfer_fail(rx, "the socket sent for '%s' is not a listening stream socket", key);
	ol = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &ol) == -1 ||
	    (tcp ? dom != AF_INET && dom != AF_INET6 : dom != AF_UNIX))
		return xfer_fail(rx, "the socket sent for '%s' is of another family", key);
	if (tcp) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char a[128];
		size_t kl = strcspn(key + 4, "/");   /* the address, less "/v6only" */

		/* a configured port 0 was given a port by the kernel */
		if (kl > 2 && strncmp(key + 4 + kl - 2, ":0", 2) == 0)
			return 0;
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1 ||
		    strlen(addr_to_str(&ss, a, sizeof(a))) != kl || strncmp(a, key + 4, kl) != 0)
			return xfer_fail(rx, "the socket sent for '%s' is bound elsewhere", key);
	}
	return 0;
}

/* Connects to <path> before <deadline>. Returns the socket or -1. */
static int xfer_connect(struct xfer_rx *rx, const char *path, uint64_t deadline)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return xfer_fail(rx, "the path is too long for a unix socket");
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return xfer_fail(rx, "socket: %s", strerror(errno));
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		/* EAGAIN: its queue is full; try again until the deadline */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || xfer_now() >= deadline) {
			xfer_fail(rx, "cannot connect: %s", errno == EAGAIN ? "no room in its queue" :
				  strerror(errno));
			close(fd);
			return -1;
		}
		poll(NULL, 0, 10);
	}
	return fd;
}

int sockxfer_fetch(const char *path)
{
	struct xfer_rx rx = { .path = path, .total = -1 };
	uint64_t deadline = xfer_now() + SOCKXFER_TIMEOUT;
	static const char cmd[] = "_getsocks\n";
	int fd, ret = -1, done = 0;   /* rx.fds[0..done-1]: owned by the pool or closed */

	fd = xfer_connect(&rx, path, deadline);
	if (fd == -1)
		goto out;
	if (xfer_send(fd, cmd, sizeof(cmd) - 1, NULL, 0, deadline) == -1) {
		xfer_fail(&rx, "sending the request: %s", strerror(errno));
		goto out;
	}
	shutdown(fd, SHUT_WR);   /* one command: the old process closes after it */
	if (xfer_receive(&rx, fd, deadline) == -1)
		goto out;
	for (int i = 0; i < rx.nkeys; i++)
		if (xfer_check(&rx, rx.fds[i], rx.keys[i]) == -1)
			goto out;
	/* Every check passed: the pool owns the descriptors from here on. */
	for (; done < rx.nkeys; done++)
		if (listener_pool_add(rx.fds[done], rx.keys[done]) == -1) {
			/* that one is closed: nothing received is kept */
			listener_pool_close();
			done++;
			xfer_fail(&rx, "out of memory");
			goto out;
		}
	log_notice("-x %s: %d listening socket(s) received from the old process", path, rx.nkeys);
	ret = 0;
out:
	/* What the pool did not take is closed; on success, that is nothing. */
	for (int k = done; k < rx.nfds; k++)
		close(rx.fds[k]);
	if (ret == -1)
		log_alert("-x %s: cannot get the listening sockets of the old process: %s", path,
			  rx.err[0] ? rx.err : "unknown error");
	if (fd >= 0)
		close(fd);
	for (int k = 0; k < rx.nkeys; k++)
		free(rx.keys[k]);
	free(rx.keys);
	free(rx.fds);
	return ret;
}
