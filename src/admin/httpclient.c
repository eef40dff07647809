/* "httpclient <method> <URI>" (expert mode): sends one HTTP/1.1 request to
 * an http:// URI from the runtime API and prints the response as it comes,
 * without blocking the loop (the CLI connection waits: cli_ctx.waiting). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ev.h>
#include <sluice/addr.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/str.h>
#include <sluice/ticks.h>

#define HC_TIMEOUT_MS 10000      /* for the whole exchange */
#define HC_MAX_RESPONSE (1 << 20) /* what is printed of a response */

struct hc {
	struct cli_ctx *ctx;
	int             fd;
	ev_io           io;
	ev_timer        timer;
	struct dstr     req;         /* what is still to send */
	size_t          got;         /* response bytes printed */
	int             connected;
	int             head_only;   /* HEAD: the response has no body */
	/* the response's framing, known once its head is complete */
	struct dstr     head;        /* the head so far (until complete) */
	int             framed;      /* 0: head incomplete, 1: length, 2: chunked, 3: close */
	uint64_t        left;        /* framed 1: body bytes still due */
	char            tail[5];     /* framed 2: the last bytes, for the last chunk */
};

static void hc_free(struct hc *h)
{
	ev_io_stop(global.loop, &h->io);
	ev_timer_stop(global.loop, &h->timer);
	if (h->fd >= 0)
		close(h->fd);
	dstr_free(&h->req);
	dstr_free(&h->head);
	free(h);
}

/* The exchange is over: <why> (NULL: the response ended) is said, the
 * command ends. */
static void hc_finish(struct hc *h, const char *why)
{
	struct cli_ctx *ctx = h->ctx;

	if (why)
		dstr_printf(&ctx->out, "%sHTTP client: %s.\n", h->got ? "\n" : "", why);
	else if (h->got && ctx->out.len && ctx->out.p[ctx->out.len - 1] != '\n')
		dstr_add(&ctx->out, "\n", 1);
	hc_free(h);
	cli_ctx_done(ctx);
}

/* The CLI connection went away first. */
static void hc_abort(struct cli_ctx *ctx)
{
	hc_free(ctx->wait_data);
}

/* Value of header <name> (lower case) in head <p>, <len> bytes, or NULL. */
static const char *hc_hdr(const char *p, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (const char *l = memchr(p, '\n', len); l && l + 1 < p + len;
	     l = memchr(l + 1, '\n', (size_t)(p + len - l - 1))) {
		const char *f = l + 1;

		if ((size_t)(p + len - f) > nl && strncasecmp(f, name, nl) == 0 && f[nl] == ':') {
			f += nl + 1;
			while (*f == ' ' || *f == '\t')
				f++;
			return f;
		}
	}
	return NULL;
}

/* Reads the framing of the complete head <p> (<len> bytes, up to its empty
 * line): sets h->framed and h->left. */
static void hc_framing(struct hc *h, const char *p, size_t len)
{
	int status = len > 12 ? atoi(p + 9) : 0;
	const char *v;

	if (h->head_only || (status >= 100 && status < 200) || status == 204 || status == 304) {
		h->framed = 1;
		h->left = 0;
	} else if ((v = hc_hdr(p, len, "transfer-encoding")) && strncasecmp(v, "chunked", 7) == 0) {
		h->framed = 2;
	} else if ((v = hc_hdr(p, len, "content-length"))) {
		h->framed = 1;
		h->left = strtoull(v, NULL, 10);
	} else {
		h->framed = 3;
	}
}

/* Takes <n> response bytes: printed; returns 1 once the response is
 * complete (its framing says so), else 0. */
static int hc_take(struct hc *h, const char *buf, size_t n)
{
	dstr_add(&h->ctx->out, buf, n);
	h->got += n;
	if (!h->framed) {
		const char *eoh;

		dstr_add(&h->head, buf, n);
		eoh = memmem(h->head.p, h->head.len, "\r\n\r\n", 4);
		if (!eoh)
			return 0;
		hc_framing(h, h->head.p, (size_t)(eoh - h->head.p) + 4);
		buf = eoh + 4;
		n = h->head.len - (size_t)(eoh + 4 - h->head.p);
	}
	if (h->framed == 1) {
		h->left -= n < h->left ? n : h->left;
		return !h->left;
	}
	if (h->framed == 2) {
		/* the last chunk ("0" and the empty line after it) ends it */
		for (size_t i = 0; i < n; i++) {
			memmove(h->tail, h->tail + 1, sizeof(h->tail) - 1);
			h->tail[sizeof(h->tail) - 1] = buf[i];
		}
		return memcmp(h->tail, "0\r\n\r\n", 5) == 0;
	}
	return 0;
}

static void hc_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct hc *h = w->data;
	char buf[16384];

	if (!h->connected && (revents & EV_WRITE)) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1 || err) {
			hc_finish(h, strerror(err ? err : errno));
			return;
		}
		h->connected = 1;
	}
	if ((revents & EV_WRITE) && h->req.len) {
		ssize_t n = send(h->fd, h->req.p, h->req.len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n == -1 && errno != EAGAIN && errno != EINTR) {
			hc_finish(h, strerror(errno));
			return;
		}
		if (n > 0)
			dstr_consume(&h->req, (size_t)n);
		if (!h->req.len) {
			ev_io_stop(loop, &h->io);
			ev_io_set(&h->io, h->fd, EV_READ);
			ev_io_start(loop, &h->io);
		}
		return;
	}
	if (revents & EV_READ) {
		ssize_t n = recv(h->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			hc_finish(h, n == 0 ? NULL : strerror(errno));
			return;
		}
		if (h->got + (size_t)n > HC_MAX_RESPONSE) {
			hc_finish(h, "response cut at 1 MB");
			return;
		}
		if (hc_take(h, buf, (size_t)n)) {
			hc_finish(h, NULL);
			return;
		}
		if (h->head.len > 65536) {
			hc_finish(h, "response head larger than 64 kB");
			return;
		}
		ev_timer_again(loop, &h->timer);
		cli_ctx_wake(h->ctx);
	}
}

static void hc_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	hc_finish(w->data, "timeout");
}

/* Splits "http://<host>[:<port>][/<path>]": the address in <as> (an IP
 * literal: no lookup at run time), the authority and the path. Returns 0,
 * or -1 with the reason in <why>. */
static int hc_parse_uri(const char *uri, struct addr_spec *as, char *auth, size_t asz,
                        const char **path, const char **why)
{
	const char *h, *e;
	char hostport[300], *err = NULL;
	size_t hl;

	if (strncasecmp(uri, "https://", 8) == 0) {
		*why = "https URIs are not supported by sluice's httpclient (http:// only)";
		return -1;
	}
	if (strncasecmp(uri, "http://", 7) != 0) {
		*why = "expects an absolute http:// URI";
		return -1;
	}
	h = uri + 7;
	e = h + strcspn(h, "/?#");
	hl = (size_t)(e - h);
	if (!hl || hl >= asz || hl >= sizeof(hostport)) {
		*why = "no host in the URI";
		return -1;
	}
	memcpy(auth, h, hl);
	auth[hl] = '\0';
	/* the default port when none is given */
	if (auth[hl - 1] == ']' || !strchr(strchr(auth, ']') ? strchr(auth, ']') : auth, ':'))
		snprintf(hostport, sizeof(hostport), "%s:80", auth);
	else
		snprintf(hostport, sizeof(hostport), "%s", auth);
	if (addr_parse(hostport, as, 0, &err) == -1 ||
	    (as->ss.ss_family != AF_INET && as->ss.ss_family != AF_INET6)) {
		free(err);
		*why = "the host must be an IP address (names are not resolved at run time)";
		return -1;
	}
	*path = *e == '/' || *e == '?' ? e : "/";
	return 0;
}

/* httpclient <method> <URI> */
static int cli_httpclient(struct cli_ctx *ctx, int argc, char **argv)
{
	static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "DELETE",
					       "OPTIONS", "TRACE", "CONNECT", "PATCH" };
	struct addr_spec as;
	const char *path = "/", *why = NULL;
	char auth[256];
	struct hc *h;
	size_t m;

	if (!ctx->expert) {
		dstr_printf(&ctx->out, "This command is restricted to expert mode only.\n");
		return -1;
	}
	if (argc != 3) {
		dstr_printf(&ctx->out, "Can't start the HTTP client: not enough parameters.\n");
		return -1;
	}
	if (!ctx->wake) {
		dstr_printf(&ctx->out, "Can't start the HTTP client: it answers on a runtime API "
			    "connection only.\n");
		return -1;
	}
	for (m = 0; m < ARRAY_SIZE(methods) && strcmp(argv[1], methods[m]) != 0; m++)
		;
	if (m == ARRAY_SIZE(methods)) {
		dstr_printf(&ctx->out, "Can't start the HTTP client: unknown method '%s'.\n",
			    argv[1]);
		return -1;
	}
	if (hc_parse_uri(argv[2], &as, auth, sizeof(auth), &path, &why) == -1) {
		dstr_printf(&ctx->out, "Can't start the HTTP client: %s.\n", why);
		return -1;
	}
	h = xcalloc(1, sizeof(*h));
	h->ctx = ctx;
	h->head_only = m == 1;
	h->fd = socket(as.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->fd == -1 || (connect(h->fd, (struct sockaddr *)&as.ss, as.len) == -1 &&
			    errno != EINPROGRESS)) {
		dstr_printf(&ctx->out, "Can't start the HTTP client: %s.\n", strerror(errno));
		hc_free(h);
		return -1;
	}
	dstr_printf(&h->req, "%s %s HTTP/1.1\r\nhost: %s\r\nuser-agent: sluice\r\n"
		    "connection: close\r\n\r\n", methods[m], path, auth);
	ev_io_init(&h->io, hc_io_cb, h->fd, EV_WRITE);
	h->io.data = h;
	ev_io_start(global.loop, &h->io);
	ev_init(&h->timer, hc_timer_cb);
	h->timer.repeat = tick_to_ev(HC_TIMEOUT_MS);
	h->timer.data = h;
	ev_timer_again(global.loop, &h->timer);
	ctx->waiting = 1;
	ctx->abort = hc_abort;
	ctx->wait_data = h;
	return 0;
}

static struct cli_kw hc_cli_kws[] = {
	{ { "httpclient", NULL }, "httpclient <method> <URI>", "send an HTTP request to an "
	  "http:// URI and print the response (expert mode)", CLI_LVL_ADMIN, cli_httpclient },
};

SLUICE_INIT(hc_register)
{
	cli_register(hc_cli_kws, ARRAY_SIZE(hc_cli_kws));
}
