/* Health checks of FastCGI servers (check.h, struct chk_xport): with
 * "option httpchk", the check's HTTP request goes to a "proto fcgi" server
 * (or one with "check-proto fcgi") as FastCGI records built from the
 * backend's fcgi-app, as HAProxy does; the application's answer, once its
 * request ended, is laid out in the check's buffer as an HTTP/1.1 response
 * with its Content-Length, for the http-check expect rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/fcgi_app.h>
#include <sluice/fcgi_rec.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_reply.h>
#include <sluice/httpchk.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/tcpcheck.h>

struct chk_fcgi {
	struct fcgi_rd rd;
	struct dstr    out;       /* STDOUT */
	int            ended;     /* END_REQUEST came, or the server closed */
};

#define FCHK_ID 1

static void fchk_free(struct check *c)
{
	struct chk_fcgi *f = c->xp;

	if (!f)
		return;
	dstr_free(&f->out);
	free(f);
	c->xp = NULL;
}

static int fchk_send(struct check *c, const struct httpchk_req *q)
{
	const struct fcgi_app *app = c->srv->px->fcgi_app;
	struct fcgi_req_src src = { .dst = &c->addr, .https = c->ssl != NULL };
	struct dstr params = { 0 }, out = { 0 };
	struct h1_hdr hdrs[64];
	struct h1_msg m;
	const char begin[8] = { 0, FCGI_RESPONDER, 0 };   /* no FCGI_KEEP_CONN */
	size_t len;
	char *req;
	int r = -1;

	fchk_free(c);
	if (!app || !(c->xp = calloc(1, sizeof(struct chk_fcgi))))
		return -1;
	req = httpchk_req_build(q, &len);
	if (!req)
		return -1;
	/* the request as HTTP/1 bytes, read back as the mux reads a stream's */
	h1_msg_init(&m, hdrs, ARRAY_SIZE(hdrs), 0, H1_M_OTHER);
	if (h1_parse(req, len, len, &m) > 0 &&
	    fcgi_params_build(&params, app, &src, req, &m, len - m.head_len) == 0 &&
	    fcgi_rec_add(&out, FCGI_BEGIN_REQUEST, FCHK_ID, begin, sizeof(begin)) == 0 &&
	    fcgi_rec_add(&out, FCGI_PARAMS, FCHK_ID, params.p, params.len) == 0 &&
	    fcgi_rec_add(&out, FCGI_PARAMS, FCHK_ID, NULL, 0) == 0 &&
	    (len == m.head_len || fcgi_rec_add(&out, FCGI_STDIN, FCHK_ID, req + m.head_len, len - m.head_len) == 0) &&
	    fcgi_rec_add(&out, FCGI_STDIN, FCHK_ID, NULL, 0) == 0 &&
	    /* a check sends a few hundred bytes at once on a fresh socket */
	    tcpchk_io_send(c, out.p, out.len) == (ssize_t)out.len)
		r = 0;
	free(req);
	dstr_free(&params);
	dstr_free(&out);
	return r;
}

/* The CGI answer in f->out as an HTTP/1.1 response in c->rbuf. */
static void fchk_layout(struct check *c, struct chk_fcgi *f)
{
	const char *p = f->out.p, *end = p + f->out.len, *body = NULL, *reason = NULL;
	struct dstr d = { 0 };
	int status = 0, loc = 0;
	size_t rlen = 0;

	c->rlen = 0;
	for (const char *l = p; l && l < end; ) {
		const char *eol = memchr(l, '\n', (size_t)(end - l)), *le, *v;

		if (!eol)
			break;
		le = eol > l && eol[-1] == '\r' ? eol - 1 : eol;
		if (le == l) {
			body = eol + 1;
			break;
		}
		v = memchr(l, ':', (size_t)(le - l));
		if (!v)
			break;
		for (v++; v < le && (*v == ' ' || *v == '\t'); v++)
			;
		if (le - l > 6 && !strncasecmp(l, "status:", 7)) {
			if (le - v >= 3 && v[0] >= '1' && v[0] <= '5')
				status = (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
			reason = le - v > 4 ? v + 4 : NULL;
			rlen = reason ? (size_t)(le - reason) : 0;
		} else {
			loc |= le - l > 8 && !strncasecmp(l, "location:", 9);
			dstr_add(&d, l, (size_t)(le - l));
			dstr_add(&d, "\r\n", 2);
		}
		l = eol + 1;
	}
	if (!body || (!c->rbuf && !(c->rbuf = malloc(TCPCHK_RBUF_MAX)))) {
		dstr_free(&d);
		return;   /* no answer: nothing to read, the rules fail */
	}
	if (!status)
		status = loc ? 302 : 200;
	if (!reason) {
		reason = http_reason(status);
		rlen = strlen(reason);
	}
	{
		size_t blen = (size_t)(end - body);
		int n = snprintf(c->rbuf, TCPCHK_RBUF_MAX, "HTTP/1.1 %03d %.*s\r\n%.*scontent-length: "
				 "%zu\r\n\r\n", status, (int)rlen, reason, (int)d.len,
				 d.p ? d.p : "", blen);

		c->rlen = n < 0 ? 0 : MIN((size_t)n, (size_t)TCPCHK_RBUF_MAX);
		if (c->rlen + blen <= TCPCHK_RBUF_MAX) {
			memcpy(c->rbuf + c->rlen, body, blen);
			c->rlen += blen;
		}
	}
	dstr_free(&d);
}

static int fchk_read(struct check *c)
{
	struct chk_fcgi *f = c->xp;
	char tmp[4096];

	if (!f || c->rclosed)
		return 0;
	while (!f->ended) {
		ssize_t n = tcpchk_io_recv(c, tmp, sizeof(tmp));
		size_t off = 0;

		if (n == 0) {
			f->ended = 1;   /* closed: what came is judged */
			break;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		while (off < (size_t)n && !f->ended) {
			struct fcgi_piece pc;
			size_t used;
			int r = fcgi_rd_next(&f->rd, tmp + off, (size_t)n - off, &used, &pc);

			off += used;
			if (r < 0) {
				errno = EPROTO;
				return -1;
			}
			if (r == 0)
				break;
			if (pc.id != FCHK_ID)
				continue;
			if (pc.type == FCGI_STDOUT && f->out.len + pc.len <= 2 * TCPCHK_RBUF_MAX)
				dstr_add(&f->out, pc.data, pc.len);
			else if (pc.type == FCGI_END_REQUEST && pc.last)
				f->ended = 1;
		}
	}
	fchk_layout(c, f);
	c->rclosed = 1;
	return 0;
}

static const struct chk_xport fchk_xport = {
	.send = fchk_send,
	.read = fchk_read,
	.free = fchk_free,
};

/* check-proto fcgi needs the backend's application, as proto fcgi does. */
static int fchk_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			if ((srv->flags & SRV_F_CHECK_FCGI) && !px->fcgi_app) {
				log_alert("%s:%d: backend '%s': server '%s': 'check-proto fcgi' needs "
					  "an fcgi-app (use-fcgi-app)", srv->conf_file, srv->conf_line,
					  px->name, srv->name);
				errors++;
			}
	return errors;
}

SLUICE_INIT(fcgi_check_register)
{
	chk_xport_register(&fchk_xport);
	cfg_register_postparse(fchk_postparse, 41);
}
