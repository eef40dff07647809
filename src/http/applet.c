/* Services that answer over time (Lua's AppletHTTP): the request body read
 * out of the request buffer (de-chunked), the response written into the
 * response buffer as the client takes it, framed by its content-length,
 * chunked, or until the close, with the http-after-response rules run on
 * its head. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/buf.h>
#include <sluice/channel.h>
#include <sluice/common.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/http_reply.h>
#include <sluice/http_service.h>
#include <sluice/proxy.h>
#include <sluice/stream.h>

#include "ana_int.h"

int http_applet_begin(struct stream *s, const struct http_service *svc, struct proxy *px,
                      const struct http_head *h)
{
	struct http_txn *txn = s->txn;
	const struct h1_msg *m = &txn->req;

	http_log_snapshot(s, 0);
	http_srv_abort(s);
	s->fe->fe_counters.intercepted++;
	s->term_err = SE_LOCAL;
	s->term_fin = SF_REQ;
	txn->flags |= TX_F_LOCAL;
	txn->applet = svc;
	memset(&txn->app, 0, sizeof(txn->app));
	if (m->flags & H1_F_CLEN)
		txn->app.req_left = m->clen;
	chan_release(&s->res);
	s->res.to_forward = 0;
	s->res.reserve = 0;
	if (svc->start(s, px, h) == 0)
		return 0;
	txn->applet = NULL;
	s->fe->fe_counters.internal_errors++;
	return http_reply_error(s, 500, SE_INTERNAL, SF_REQ);
}

long long http_applet_body_len(const struct stream *s)
{
	const struct h1_msg *m = &s->txn->req;

	if (m->flags & H1_F_NO_BODY)
		return 0;
	if (m->flags & H1_F_CLEN)
		return (long long)m->clen;
	return s->txn->req_chunked || (m->flags & H1_F_CHUNKED) ? -1 : 0;
}

/* Takes <n> bytes off the front of the request buffer. */
static void applet_consume(struct stream *s, size_t n)
{
	struct buf *b = s->req.buf;

	b->head += (uint32_t)n;
	b->data -= (uint32_t)n;
	if (!b->data) {
		buf_put(b);
		s->req.buf = NULL;
	}
}

size_t http_applet_recv(struct stream *s, char *dst, size_t max, int *end)
{
	struct http_txn *txn = s->txn;
	const struct h1_msg *m = &txn->req;
	size_t n = 0;

	*end = 0;
	while (txn->req_st == HTTP_MSG_BODY && n < max && s->req.buf && s->req.buf->data) {
		struct buf *b = s->req.buf;
		const char *p = b->area + b->head;
		size_t k;

		if (m->flags & H1_F_CLEN) {
			k = (size_t)MIN((uint64_t)MIN(b->data, max - n), txn->app.req_left);
			memcpy(dst + n, p, k);
			n += k;
			txn->app.req_left -= k;
			applet_consume(s, k);
			if (!txn->app.req_left)
				txn->req_st = HTTP_MSG_DONE;
			continue;
		}
		/* chunked: the data bytes are copied, the framing is followed
		 * (the scanner sees every byte) */
		if (txn->req_ck.state == H1_CK_DATA && txn->req_ck.left) {
			size_t used;
			const char *err;

			k = (size_t)MIN((uint64_t)MIN(b->data, max - n), txn->req_ck.left);
			memcpy(dst + n, p, k);
			n += k;
			h1_chunk_scan(&txn->req_ck, p, k, &used, &err);
			applet_consume(s, k);
			continue;
		} else {
			size_t used = 0;
			const char *err;
			int r = h1_chunk_scan(&txn->req_ck, p, 1, &used, &err);

			if (r == -1) {
				/* bad framing: what came is all there will be */
				txn->flags |= TX_F_CLI_CLOSE;
				txn->req_st = HTTP_MSG_DONE;
				chan_release(&s->req);
				break;
			}
			applet_consume(s, used ? used : 1);
			if (r == 1)
				txn->req_st = HTTP_MSG_DONE;
		}
	}
	if (txn->req_st != HTTP_MSG_BODY ||
	    ((s->req.flags & CH_F_SHUTR) && !(s->req.buf && s->req.buf->data)))
		*end = 1;
	return n;
}

int http_applet_started(const struct stream *s)
{
	return s->txn->app.started;
}

/* Room left at the end of the response buffer (taken, and made contiguous,
 * when needed). */
static size_t applet_room(struct stream *s)
{
	struct buf *b = s->res.buf;

	if (!b && !(b = s->res.buf = buf_get()))
		return 0;
	if (!b->data)
		b->head = 0;
	else if (b->head && buf_size() - (b->head + b->data) < buf_size() / 2) {
		memmove(b->area, b->area + b->head, b->data);
		b->head = 0;
	}
	return buf_size() - (b->head + b->data);
}

/* Appends <n> bytes to the response and lets them leave. */
static void applet_put(struct stream *s, const char *p, size_t n)
{
	struct buf *b = s->res.buf;

	memcpy(b->area + b->head + b->data, p, n);
	b->data += (uint32_t)n;
	http_grant(&s->res, n);
}

int http_applet_start_response(struct stream *s, int status, const char *reason, int n,
                               const char *const *names, const size_t *nlens,
                               const char *const *vals, const size_t *vlens)
{
	struct http_txn *txn = s->txn;
	struct http_head h;
	char code[8];
	size_t nl;
	int clen = 0;

	if (txn->app.started || status < 100 || status > 999)
		return -1;
	http_answer_head(&h);
	h.flags = HTTP_HEAD_F_RESP | HTTP_HEAD_F_CHANGED;
	snprintf(code, sizeof(code), "%03d", status);
	if (!reason)
		reason = http_reason(status);
	if (http_head_set_sl(&h, HTTP_SL_RSVER, "HTTP/1.1", 8) == -1 ||
	    http_head_set_sl(&h, HTTP_SL_STATUS, code, 3) == -1 ||
	    http_head_set_sl(&h, HTTP_SL_REASON, reason, strlen(reason)) == -1)
		return -1;
	txn->app.framing = HTTP_AF_CLOSE;
	for (int i = 0; i < n; i++) {
		if (nlens[i] == 17 && strncasecmp(names[i], "transfer-encoding", 17) == 0)
			continue;   /* the framing is sluice's */
		if (nlens[i] == 14 && strncasecmp(names[i], "content-length", 14) == 0) {
			char num[24];
			char *e;

			if (clen || vlens[i] == 0 || vlens[i] >= sizeof(num))
				return -1;
			memcpy(num, vals[i], vlens[i]);
			num[vlens[i]] = 0;
			txn->app.left = strtoull(num, &e, 10);
			if (*e || num[0] < '0' || num[0] > '9')
				return -1;
			clen = 1;
			txn->app.framing = HTTP_AF_CLEN;
		}
		if (http_head_add(&h, names[i], nlens[i], vals[i], vlens[i]) == -1)
			return -1;
	}
	if (txn->meth == H1_M_HEAD || status == 204 || status == 304 || status < 200) {
		txn->app.framing = HTTP_AF_NONE;
	} else if (!clen) {
		if (txn->req_ver11) {
			txn->app.framing = HTTP_AF_CHUNKED;
			if (http_head_add(&h, "transfer-encoding", 17, "chunked", 7) == -1)
				return -1;
		} else {
			txn->flags |= TX_F_CLI_CLOSE;
		}
	}
	txn->status = status;
	http_after_rules(s, &h);
	if (http_res_conn_hdr(s, &h) == -1)
		return -1;
	nl = http_head_len(&h);
	if (applet_room(s) < nl)
		return -1;
	http_head_write(&h, s->res.buf->area + s->res.buf->head + s->res.buf->data);
	s->res.buf->data += (uint32_t)nl;
	http_grant(&s->res, nl);
	txn->app.started = 1;
	http_count_status(s, txn->status, 0);
	return 0;
}

long http_applet_send(struct stream *s, const char *p, size_t len)
{
	struct http_txn *txn = s->txn;
	size_t room, k;
	char hd[24];
	int hl;

	if (!txn->app.started)
		return 0;
	switch (txn->app.framing) {
	case HTTP_AF_NONE:
		return -1;
	case HTTP_AF_CLEN:
		if (!txn->app.left)
			return -1;
		len = (size_t)MIN((uint64_t)len, txn->app.left);
		break;
	default:
		break;
	}
	room = applet_room(s);
	if (txn->app.framing == HTTP_AF_CHUNKED) {
		/* "<hex>\r\n" data "\r\n" */
		if (room <= 16 || !len)
			return 0;
		k = MIN(len, room - 16);
		hl = snprintf(hd, sizeof(hd), "%zx\r\n", k);
		applet_put(s, hd, (size_t)hl);
		applet_put(s, p, k);
		applet_put(s, "\r\n", 2);
		return (long)k;
	}
	k = MIN(len, room);
	applet_put(s, p, k);
	if (txn->app.framing == HTTP_AF_CLEN)
		txn->app.left -= k;
	return (long)k;
}

int http_applet_end(struct stream *s)
{
	struct http_txn *txn = s->txn;

	if (txn->app.framing == HTTP_AF_CHUNKED) {
		if (applet_room(s) < 5)
			return 0;
		applet_put(s, "0\r\n\r\n", 5);
	} else if (txn->app.framing == HTTP_AF_CLEN && txn->app.left) {
		/* shorter than its content-length: the client learns it from
		 * the close */
		txn->flags |= TX_F_CLI_CLOSE;
	}
	if (txn->app.framing == HTTP_AF_CLOSE)
		txn->flags |= TX_F_CLI_CLOSE;   /* the response ends with the close */
	txn->res_st = HTTP_MSG_DONE;
	return 1;
}

int http_applet_step(struct stream *s)
{
	struct http_txn *txn = s->txn;
	int r = txn->applet->run(s);

	if (r == 0)
		return 0;
	txn->applet = NULL;   /* done: it is not run again */
	if (r == 1 && txn->app.started)
		return 0;
	s->fe->fe_counters.internal_errors++;
	if (!txn->app.started)
		return http_reply_error(s, 500, SE_INTERNAL, SF_REQ);
	/* a response begun cannot become an error page: it is cut */
	stream_close(s, SE_INTERNAL, SF_DATA);
	return -1;
}
