/* HTTP/2 health checks ("check-proto h2", check_h2.h): the HTTP check's
 * request goes out as HTTP/2 frames (libnghttp2 client session, prior
 * knowledge), and the answer, once its stream ended, is laid out in the
 * check's buffer as an HTTP/1.1 response with its Content-Length, so that
 * the http-check expect rules read it as they read any other. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <nghttp2/nghttp2.h>

#include <sluice/addr.h>
#include <sluice/check.h>
#include <sluice/check_h2.h>
#include <sluice/common.h>
#include <sluice/httpchk.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/tcpcheck.h>

struct chk_h2 {
	nghttp2_session *ng;
	int32_t          id;        /* the request's stream, 0: none yet */
	int              status;
	int              ended;     /* the answer is complete */
	int              failed;    /* reset, or too large */
	struct dstr      hdrs;      /* "name: value\r\n" lines */
	struct dstr      body;
	const char      *req_body;  /* the request body left to send */
	size_t           req_left;
};

static int ch2_on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                         size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	struct chk_h2 *h = ud;

	if (f->hd.stream_id != h->id || h->hdrs.len + nl + vl > TCPCHK_RBUF_MAX)
		return 0;
	if (nl == 7 && memcmp(name, ":status", 7) == 0) {
		h->status = 0;
		for (size_t i = 0; i < vl && i < 3; i++)
			h->status = h->status * 10 + (value[i] - '0');
		return 0;
	}
	if (nl && name[0] == ':')
		return 0;
	if (dstr_add(&h->hdrs, (const char *)name, nl) || dstr_add(&h->hdrs, ": ", 2) ||
	    dstr_add(&h->hdrs, (const char *)value, vl) || dstr_add(&h->hdrs, "\r\n", 2))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int ch2_on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct chk_h2 *h = ud;

	if (f->hd.stream_id != h->id)
		return 0;
	/* an interim answer (1xx) is not the one the rules read */
	if (f->hd.type == NGHTTP2_HEADERS && h->status >= 100 && h->status < 200 &&
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		dstr_free(&h->hdrs);
		h->status = 0;
	}
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		h->ended = 1;
	return 0;
}

static int ch2_on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
                       size_t len, void *ud)
{
	struct chk_h2 *h = ud;

	if (id != h->id)
		return 0;
	if (h->body.len + len > TCPCHK_RBUF_MAX) {
		h->failed = 1;   /* larger than a check reads: what came is judged */
		h->ended = 1;
		return 0;
	}
	return dstr_add(&h->body, (const char *)data, len) ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int ch2_on_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct chk_h2 *h = ud;

	if (id == h->id && !h->ended) {
		h->failed = 1;
		h->ended = 1;
	}
	return 0;
}

static ssize_t ch2_body_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                             uint32_t *data_flags, nghttp2_data_source *src, void *ud)
{
	struct chk_h2 *h = ud;
	size_t n = MIN(length, h->req_left);

	memcpy(buf, h->req_body, n);
	h->req_body += n;
	h->req_left -= n;
	if (!h->req_left)
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

void chk_h2_free(struct check *c)
{
	struct chk_h2 *h = c->h2;

	if (!h)
		return;
	nghttp2_session_del(h->ng);
	dstr_free(&h->hdrs);
	dstr_free(&h->body);
	free(h);
	c->h2 = NULL;
}

/* Sends what nghttp2 has for the server. Returns 0 or -1. */
static int ch2_flush(struct check *c)
{
	struct chk_h2 *h = c->h2;

	for (;;) {
		const uint8_t *p;
		ssize_t n = nghttp2_session_mem_send(h->ng, &p);

		if (n < 0)
			return -1;
		if (!n)
			return 0;
		/* a check sends a few hundred bytes at once on a fresh socket */
		if (tcpchk_io_send(c, (const char *)p, (size_t)n) != n)
			return -1;
	}
}

int chk_h2_send(struct check *c, const struct httpchk_req *q)
{
	struct chk_h2 *h;
	nghttp2_session_callbacks *cb;
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_ENABLE_PUSH, 0 } };
	nghttp2_nv nv[64];
	nghttp2_data_provider prd = { .read_callback = ch2_body_read };
	const char *auth = NULL;
	char authbuf[64];
	int k = 0, rv;

	chk_h2_free(c);
	h = calloc(1, sizeof(*h));
	if (!h || nghttp2_session_callbacks_new(&cb) != 0) {
		free(h);
		return -1;
	}
	nghttp2_session_callbacks_set_on_header_callback(cb, ch2_on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, ch2_on_frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, ch2_on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, ch2_on_close);
	rv = nghttp2_session_client_new(&h->ng, cb, h);
	nghttp2_session_callbacks_del(cb);
	if (rv != 0) {
		free(h);
		return -1;
	}
	c->h2 = h;
	for (int i = 0; i < q->nhdrs; i++)
		if (strcasecmp(q->hdrs[i].name, "host") == 0)
			auth = q->hdrs[i].value;
	/* HTTP/2 servers want an authority (RFC 9113 8.3.1): the address
	 * checked stands for it when the request names no host */
	if (!auth)
		auth = addr_to_str(&c->addr, authbuf, sizeof(authbuf));
#define NV(n, v) (nghttp2_nv){ (uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), \
			       NGHTTP2_NV_FLAG_NONE }
	nv[k++] = NV(":method", q->meth ? q->meth : "OPTIONS");
	nv[k++] = NV(":scheme", c->ssl ? "https" : "http");
	nv[k++] = NV(":path", q->uri ? q->uri : "/");
	nv[k++] = NV(":authority", auth);
	for (int i = 0; i < q->nhdrs && k < (int)ARRAY_SIZE(nv); i++) {
		const char *n = q->hdrs[i].name;

		/* names are lower case already (http-check send); the framing
		 * and the connection are HTTP/2's */
		if (!strcasecmp(n, "host") || !strcasecmp(n, "connection") ||
		    !strcasecmp(n, "content-length") || !strcasecmp(n, "transfer-encoding") ||
		    !strcasecmp(n, "keep-alive") || !strcasecmp(n, "upgrade"))
			continue;
		nv[k++] = NV(n, q->hdrs[i].value);
	}
#undef NV
	h->req_body = q->body;
	h->req_left = q->body ? strlen(q->body) : 0;
	nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, iv, ARRAY_SIZE(iv));
	rv = nghttp2_submit_request(h->ng, NULL, nv, (size_t)k, h->req_left ? &prd : NULL, NULL);
	if (rv < 0)
		return -1;
	h->id = rv;
	return ch2_flush(c);
}

int chk_h2_read(struct check *c)
{
	struct chk_h2 *h = c->h2;
	char tmp[4096];

	if (!h || c->rclosed)
		return 0;
	while (!h->ended) {
		ssize_t n = tcpchk_io_recv(c, tmp, sizeof(tmp));

		if (n == 0) {
			h->failed = h->ended = 1;   /* closed before the end of the answer */
			break;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (nghttp2_session_mem_recv(h->ng, (const uint8_t *)tmp, (size_t)n) < 0)
			return -1;
		if (ch2_flush(c) < 0)
			return -1;
	}
	/* the answer, as the HTTP/1.1 response the expect rules read */
	if (!c->rbuf && !(c->rbuf = malloc(TCPCHK_RBUF_MAX)))
		return -1;
	if (h->status) {
		int n = snprintf(c->rbuf, TCPCHK_RBUF_MAX, "HTTP/1.1 %03d h2\r\n%.*scontent-length: %zu\r\n\r\n",
				 h->status, (int)h->hdrs.len, h->hdrs.p ? h->hdrs.p : "", h->body.len);

		c->rlen = n < 0 ? 0 : MIN((size_t)n, (size_t)TCPCHK_RBUF_MAX);
		if (h->body.len && c->rlen + h->body.len <= TCPCHK_RBUF_MAX) {
			memcpy(c->rbuf + c->rlen, h->body.p, h->body.len);
			c->rlen += h->body.len;
		}
	} else {
		c->rlen = 0;   /* no answer at all: nothing to read, the rules fail */
	}
	c->rclosed = 1;
	return 0;
}

/* server "check-proto h1|h2|fcgi": the protocol of HTTP health checks,
 * whatever the server's "proto" says. */
static const struct srv_kw_choice chk_protos[] = {
	{ "h1", 0 }, { "h2", SRV_F_CHECK_H2 }, { "fcgi", SRV_F_CHECK_FCGI }, { NULL, 0 },
};

static const struct chk_xport *chk_xport;

void chk_xport_register(const struct chk_xport *x)
{
	chk_xport = x;
}

int chk_srv_speaks_fcgi(const struct server *srv)
{
	return (srv->flags & SRV_F_CHECK_FCGI) ||
	       (srv->flags & (SRV_F_PROTO_FCGI | SRV_F_CHECK_PSET)) == SRV_F_PROTO_FCGI;
}

const struct chk_xport *chk_xport_of(const struct check *c)
{
	return (c->conn_opts & TCPCHK_CO_FCGI) ? chk_xport : NULL;
}

void chk_xport_free(struct check *c)
{
	if (c->xp && chk_xport)
		chk_xport->free(c);
}

static struct srv_kw chk_h2_srv_kws[] = {
	{ "check-proto", .parse = srv_kw_choose, .clr = SRV_F_CHECK_H2 | SRV_F_CHECK_FCGI,
	  .set = SRV_F_CHECK_PSET, .arg = (uintptr_t)chk_protos },
};

SLUICE_INIT(chk_h2_register)
{
	srv_register_keywords(chk_h2_srv_kws, ARRAY_SIZE(chk_h2_srv_kws));
}
