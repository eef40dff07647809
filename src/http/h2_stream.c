/* The streams of the HTTP/2 mux (h2_int.h), both ways. On a client's
 * connection (front) each HTTP/2 stream becomes one sluice stream of mode
 * http whose client side is a CO_F_MUX endpoint (conn.h); on a server's
 * connection (back) a sluice stream's server side is the endpoint of one
 * HTTP/2 stream. Either way the sluice stream reads what the peer sends as
 * HTTP/1.1 bytes made here from HEADERS, DATA and trailers (front: the
 * request, back: the response), and writes HTTP/1.1 bytes that are parsed
 * here back into frames (front: the response, back: the request). Every
 * rule, fetch, log line, server choice and retry of the HTTP/1 analysers
 * thus works per HTTP/2 stream unchanged.
 *
 * nghttp2 validates what the peer sends (RFC 9113 section 8: pseudo-
 * headers, field names and values, connection-specific fields, TE,
 * content-length against DATA); what reaches the translation is a valid
 * message, so no CR, LF or NUL can be smuggled into the HTTP/1 form. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/http_reply.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stream.h>

#include "h2_int.h"

/* ---- byte queues ---- */

int h2_bytes_add(struct h2_bytes *b, const char *s, size_t n, size_t max)
{
	if (!n)
		return 0;
	if ((size_t)b->len + n > max)
		return -1;
	if (b->off && b->off + b->len + n > b->cap) {
		memmove(b->p, b->p + b->off, b->len);
		b->off = 0;
	}
	if (b->off + b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		if (cap > max)
			cap = max;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = (uint32_t)cap;
	}
	memcpy(b->p + b->off + b->len, s, n);
	b->len += (uint32_t)n;
	return 0;
}

size_t h2_bytes_take(struct h2_bytes *b, char *dst, size_t n)
{
	if (n > b->len)
		n = b->len;
	if (!n)
		return 0;
	if (dst)
		memcpy(dst, b->p + b->off, n);
	b->off += (uint32_t)n;
	b->len -= (uint32_t)n;
	if (!b->len)
		b->off = 0;
	return n;
}

void h2_bytes_free(struct h2_bytes *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void h2_hd_reset(struct h2_hd *hd)
{
	hd->method.len = hd->path.len = hd->authority.len = hd->hdrs.len = hd->cookie.len = 0;
}

void h2_hd_free(struct h2_hd *hd)
{
	dstr_free(&hd->method);
	dstr_free(&hd->path);
	dstr_free(&hd->authority);
	dstr_free(&hd->hdrs);
	dstr_free(&hd->cookie);
}

/* ---- stream life ---- */

static struct h2s *h2s_of(nghttp2_session *ng, int32_t id)
{
	return nghttp2_session_get_stream_user_data(ng, id);
}

/* A new h2s of <h2c>, linked; NULL when out of memory. */
static struct pool *h2s_pool;

static struct h2s *h2s_new(struct h2c *h2c)
{
	struct h2s *h;

	if (!h2s_pool)
		h2s_pool = pool_create("h2s", sizeof(struct h2s));
	h = pool_alloc(h2s_pool);
	if (!h)
		return NULL;
	memset(h, 0, sizeof(*h));
	h->h2c = h2c;
	h->back = h2c->back;
	h->rs = H2S_RS_HEAD;
	h->next = h2c->streams;
	if (h2c->streams)
		h2c->streams->prev = h;
	h2c->streams = h;
	h2c->nstreams++;
	return h;
}

/* Takes <h> out of its connection's list. */
static void h2s_unlink(struct h2s *h)
{
	struct h2c *h2c = h->h2c;

	if (h->prev)
		h->prev->next = h->next;
	else
		h2c->streams = h->next;
	if (h->next)
		h->next->prev = h->prev;
	h->prev = h->next = NULL;
}

static void h2s_free(struct h2s *h)
{
	struct h2c *h2c = h->h2c;

	if (h2c)
		h2s_unlink(h);

	dstr_free(&h->trl);
	h2_bytes_free(&h->rq);
	h2_bytes_free(&h->data);
	h2_bytes_free(&h->fr);
	h2_bytes_free(&h->head);
	h2_bytes_free(&h->body);
	if (h2c && h->id && !(h->flags & H2S_F_NG_CLOSED))
		nghttp2_session_set_stream_user_data(h2c->ng, h->id, NULL);
	pool_free(h2s_pool, h);
	if (h2c)
		h2c_stream_gone(h2c);
}

/* The sluice stream's side that is this HTTP/2 stream. */
static struct conn *h2s_ep(const struct h2s *h)
{
	return h->back ? &h->s->srv : &h->s->cli;
}

/* Wakes the attached stream for what it watches among <ev>. */
static void h2s_wake(struct h2s *h, int ev)
{
	struct conn *c;

	if (!h->s)
		return;
	c = h2s_ep(h);
	if (c->events & ev)
		ev_feed_event(global.loop, &c->io, c->events & ev);
}

/* The largest response payload held for DATA frames: one buffer. */
static size_t h2s_body_max(void)
{
	return global.bufsize;
}

/* ---- the request: HEADERS and DATA to HTTP/1.1 ---- */

int h2s_on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct h2c *h2c = ud;
	struct h2s *h;

	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	h2_hd_reset(&h2c->hd);   /* a new block: what the last one left goes */
	if (f->headers.cat != NGHTTP2_HCAT_REQUEST || h2c->back)
		return 0;
	/* Streams reset by the client leave their sluice streams behind for
	 * a moment (they close at their next pass): those count too, so that
	 * opening and resetting in a loop cannot pile work up. */
	if (h2c->nstreams >= 2 * h2_tune.max_concurrent_streams) {
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, f->hd.stream_id,
					  NGHTTP2_REFUSED_STREAM);
		return 0;
	}
	h = h2s_new(h2c);
	if (!h) {
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, f->hd.stream_id,
					  NGHTTP2_INTERNAL_ERROR);
		return 0;
	}
	h->id = f->hd.stream_id;
	nghttp2_session_set_stream_user_data(ng, h->id, h);
	return 0;
}

static int h2_name_is(const uint8_t *n, size_t len, const char *what)
{
	return len == strlen(what) && memcmp(n, what, len) == 0;
}

/* Whether HEADERS frame <f> carries a message head (else: trailers). */
static int h2s_head_cat(const struct h2s *h, const nghttp2_frame *f)
{
	if (!h->h2c->back)
		return f->headers.cat == NGHTTP2_HCAT_REQUEST;
	return !(h->flags & H2S_F_IN_FINAL);
}

int h2s_on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                  size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                  void *ud)
{
	struct h2s *h = h2s_of(ng, f->hd.stream_id);
	const char *n = (const char *)name, *v = (const char *)value;
	struct h2_hd *hd;
	int r = 0;

	if (!h || f->hd.type != NGHTTP2_HEADERS || (h->flags & H2S_F_HDR_ERR))
		return 0;
	hd = &h->h2c->hd;
	/* RFC 9113 6.5.2's size of a field; the whole list is held to what an
	 * HTTP/1 head may take, and to tune.http.maxhdr fields. */
	h->hdr_bytes += (uint32_t)(namelen + valuelen + 32);
	if (h->hdr_bytes > global.bufsize - global.maxrewrite ||
	    ++h->nhdrs > (uint32_t)global.maxhdr) {
		h->flags |= H2S_F_HDR_ERR;
		h2_hd_reset(&h->h2c->hd);
		return 0;
	}
	if (namelen && n[0] == ':') {
		if (h2_name_is(name, namelen, ":status")) {
			h->status = 0;
			for (size_t i = 0; i < valuelen && i < 3; i++)
				h->status = h->status * 10 + (v[i] - '0');
		} else if (h2_name_is(name, namelen, ":method"))
			r = dstr_add(&hd->method, v, valuelen);
		else if (h2_name_is(name, namelen, ":path"))
			r = dstr_add(&hd->path, v, valuelen);
		else if (h2_name_is(name, namelen, ":authority"))
			r = dstr_add(&hd->authority, v, valuelen);
		/* :scheme: the HTTP/1 form has none (origin-form) */
	} else if (h2s_head_cat(h, f) && !h->h2c->back && h2_name_is(name, namelen, "cookie")) {
		/* RFC 9113 8.2.3: crumbs are joined back into one field */
		if (hd->cookie.len)
			r = dstr_add(&hd->cookie, "; ", 2);
		if (!r)
			r = dstr_add(&hd->cookie, v, valuelen);
	} else if (h2s_head_cat(h, f) && h2_name_is(name, namelen, "host") && hd->authority.len) {
		/* :authority wins over Host (RFC 9113 8.3.1) */
	} else {
		if (h2s_head_cat(h, f) && h2_name_is(name, namelen, "content-length"))
			h->flags |= H2S_F_HAS_CLEN;
		r = dstr_add(&hd->hdrs, n, namelen);
		r = r ? r : dstr_add(&hd->hdrs, ": ", 2);
		r = r ? r : dstr_add(&hd->hdrs, v, valuelen);
		r = r ? r : dstr_add(&hd->hdrs, "\r\n", 2);
	}
	return r ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE : 0;
}

static enum h1_meth h2_meth_id(const struct dstr *m)
{
	static const struct { const char *n; enum h1_meth id; } t[] = {
		{ "GET", H1_M_GET }, { "HEAD", H1_M_HEAD }, { "POST", H1_M_POST },
		{ "PUT", H1_M_PUT }, { "DELETE", H1_M_DELETE }, { "CONNECT", H1_M_CONNECT },
		{ "OPTIONS", H1_M_OPTIONS }, { "TRACE", H1_M_TRACE }, { "PATCH", H1_M_PATCH },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (m->len == strlen(t[i].n) && memcmp(m->p, t[i].n, m->len) == 0)
			return t[i].id;
	return H1_M_OTHER;
}

static const struct conn_mux_ops h2s_ops;

/* A response made here, for a request that never becomes a stream. */
static void h2s_answer(struct h2s *h, const char *status)
{
	nghttp2_nv nv[] = {
		{ (uint8_t *)":status", (uint8_t *)status, 7, strlen(status), NGHTTP2_NV_FLAG_NONE },
		{ (uint8_t *)"content-length", (uint8_t *)"0", 14, 1, NGHTTP2_NV_FLAG_NONE },
	};

	h->rs = H2S_RS_DONE;
	nghttp2_submit_response(h->h2c->ng, h->id, nv, ARRAY_SIZE(nv), NULL);
}

/* The request head is complete: its HTTP/1.1 form goes to a new stream. */
static int h2s_start(struct h2s *h, int end_stream)
{
	struct h2c *h2c = h->h2c;
	struct h2_hd *hd = &h2c->hd;
	int r;

	if (h->flags & H2S_F_HDR_ERR) {
		/* too large for an HTTP/1 head: refused as HTTP/1 would be */
		h2c->fe->fe_counters.failed_req++;
		log_event_px(&h2c->fe->loggers, LOG_L_WARNING,
			     "%s: HTTP/2 stream %d: header list too large (%u bytes, %u fields), "
			     "answered 431", h2c->fe->name, (int)h->id, h->hdr_bytes, h->nhdrs);
		h2s_answer(h, "431");
		return 0;
	}
	h->meth = h2_meth_id(&hd->method);
	if (end_stream)
		h->flags |= H2S_F_IN_END;
	else if (!(h->flags & H2S_F_HAS_CLEN) && h->meth != H1_M_CONNECT)
		h->flags |= H2S_F_CHUNKED;
	/* the HTTP/1.1 head, written once into the stream's input */
	{
		const struct dstr *target = h->meth == H1_M_CONNECT ? &hd->authority : &hd->path;
		size_t max = hd->method.len + target->len + hd->authority.len + hd->hdrs.len +
			     hd->cookie.len + 96;
		struct h2_bytes *q = &h->rq;

		r = h2_bytes_add(q, hd->method.p, hd->method.len, max);
		r = r ? r : h2_bytes_add(q, " ", 1, max);
		r = r ? r : h2_bytes_add(q, target->p, target->len, max);
		r = r ? r : h2_bytes_add(q, " HTTP/1.1\r\n", 11, max);
		if (hd->authority.len) {
			r = r ? r : h2_bytes_add(q, "host: ", 6, max);
			r = r ? r : h2_bytes_add(q, hd->authority.p, hd->authority.len, max);
			r = r ? r : h2_bytes_add(q, "\r\n", 2, max);
		}
		r = r ? r : h2_bytes_add(q, hd->hdrs.p, hd->hdrs.len, max);
		if (hd->cookie.len) {
			r = r ? r : h2_bytes_add(q, "cookie: ", 8, max);
			r = r ? r : h2_bytes_add(q, hd->cookie.p, hd->cookie.len, max);
			r = r ? r : h2_bytes_add(q, "\r\n", 2, max);
		}
		if (h->flags & H2S_F_CHUNKED)
			r = r ? r : h2_bytes_add(q, "transfer-encoding: chunked\r\n", 28, max);
		r = r ? r : h2_bytes_add(q, "\r\n", 2, max);
	}
	h2_hd_reset(hd);
	if (!r)
		h->s = stream_new_mux(h2c->li, &h2c->c, &h2c->src, h2c->has_dst ? &h2c->dst : NULL,
				      &h2s_ops, h);
	if (r || !h->s) {
		nghttp2_submit_rst_stream(h2c->ng, NGHTTP2_FLAG_NONE, h->id, NGHTTP2_INTERNAL_ERROR);
		return 0;
	}
	/* http-reuse safe lets the requests after a connection's first one
	 * take idle server connections: so are its later streams */
	if (h2c->nreq)
		h->s->tcp_flags |= STRM_F_MUX_LATER;
	h->flags |= H2S_F_STARTED;
	h2c->nattached++;
	h2c->nreq++;
	return 0;
}

/* Back: a response head came (a 1xx one, or the final one); its HTTP/1.1
 * form goes to the stream. */
static int h2s_res_head(struct h2s *h, int end_stream)
{
	struct dstr d = { 0 };
	int r, interim = h->status >= 100 && h->status < 200;

	if (h->flags & H2S_F_HDR_ERR) {
		nghttp2_submit_rst_stream(h->h2c->ng, NGHTTP2_FLAG_NONE, h->id, NGHTTP2_CANCEL);
		h->flags |= H2S_F_RESET;
		h2s_wake(h, EV_READ | EV_WRITE);
		return 0;
	}
	if (!interim) {
		h->flags |= H2S_F_IN_FINAL;
		if (h->meth == H1_M_HEAD || h->status == 204 || h->status == 304)
			h->flags |= H2S_F_IN_NOBODY;
		else if (!(h->flags & H2S_F_HAS_CLEN) && !end_stream)
			h->flags |= H2S_F_CHUNKED;
	}
	r = dstr_printf(&d, "HTTP/1.1 %03d %s\r\n", h->status, http_reason(h->status));
	r = r ? r : dstr_add(&d, h->h2c->hd.hdrs.p, h->h2c->hd.hdrs.len);
	if (!interim && (h->flags & H2S_F_CHUNKED))
		r = r ? r : dstr_add(&d, "transfer-encoding: chunked\r\n", 28);
	else if (!interim && end_stream && !(h->flags & (H2S_F_HAS_CLEN | H2S_F_IN_NOBODY)))
		r = r ? r : dstr_add(&d, "content-length: 0\r\n", 19);
	r = r ? r : dstr_add(&d, "\r\n", 2);
	/* 1xx heads the stream has not read yet are held to one buffer: HEADERS
	 * are not flow-controlled, a server sending 1xx after 1xx would grow
	 * this queue without end while the client does not read */
	r = r ? r : h2_bytes_add(&h->rq, d.p, d.len, global.bufsize);
	dstr_free(&d);
	h2_hd_reset(&h->h2c->hd);
	h->hdr_bytes = h->nhdrs = 0;
	h->flags &= ~H2S_F_HAS_CLEN;
	if (r) {
		nghttp2_submit_rst_stream(h->h2c->ng, NGHTTP2_FLAG_NONE, h->id,
					  NGHTTP2_INTERNAL_ERROR);
		h->flags |= H2S_F_RESET;
	}
	if (end_stream)
		h->flags |= H2S_F_IN_END;
	h2s_wake(h, EV_READ);
	return 0;
}

int h2s_on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct h2s *h;
	int end = !!(f->hd.flags & NGHTTP2_FLAG_END_STREAM);

	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	h = h2s_of(ng, f->hd.stream_id);
	if (!h)
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS && h2s_head_cat(h, f))
		return h->h2c->back ? h2s_res_head(h, end) : h2s_start(h, end);
	if (f->hd.type == NGHTTP2_HEADERS) {
		/* trailers: kept for a chunked HTTP/1 form, else dropped */
		if ((h->flags & H2S_F_CHUNKED) && !(h->flags & H2S_F_HDR_ERR)) {
			h->trl.len = 0;
			if (dstr_add(&h->trl, h->h2c->hd.hdrs.p, h->h2c->hd.hdrs.len) < 0)
				h->trl.len = 0;
		}
		h2_hd_reset(&h->h2c->hd);
	}
	if (end)
		h->flags |= H2S_F_IN_END;
	h2s_wake(h, EV_READ);
	return 0;
}

int h2s_on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
                      size_t len, void *ud)
{
	struct h2s *h = h2s_of(ng, id);

	/* no stream takes it: its window comes back at once */
	if (!h || !h->s || h2_bytes_add(&h->data, (const char *)data, len,
					 (size_t)h2_tune.initial_window_size + global.bufsize) < 0) {
		nghttp2_session_consume(ng, id, len);
		return 0;
	}
	h2s_wake(h, EV_READ);
	return 0;
}

int h2s_on_stream_close(nghttp2_session *ng, int32_t id, uint32_t error_code, void *ud)
{
	struct h2c *h2c = ud;
	struct h2s *h = h2s_of(ng, id);

	if (!h)
		return 0;
	h->flags |= H2S_F_NG_CLOSED;
	/* complete: front, the whole response left; back, the whole response
	 * came (the stream may still be reading it) */
	if (error_code != NGHTTP2_NO_ERROR ||
	    (h2c->back ? !(h->flags & H2S_F_IN_END) : h->rs != H2S_RS_DONE || h->body.len)) {
		h->flags |= H2S_F_RESET;
		if ((h->flags & H2S_F_STARTED) && !h2c->back)
			h2c->resets++;
	}
	if (!h->s || (h->flags & H2S_F_RESET) || !h2c->back) {
		/* bytes nobody will read: their window comes back */
		if (h->data.len)
			nghttp2_session_consume_connection(ng, h->data.len);
		h2_bytes_free(&h->data);
	}
	if (!h->s) {
		h2s_free(h);
		return 0;
	}
	h2s_wake(h, EV_READ | EV_WRITE);
	return 0;
}

void h2s_abort_all(struct h2c *h2c)
{
	struct h2s *h, *next;

	/* nghttp2_session_del() calls no callback: every stream is told here */
	for (h = h2c->streams; h; h = next) {
		next = h->next;
		if (h->id && !(h->flags & H2S_F_NG_CLOSED))
			nghttp2_session_set_stream_user_data(h2c->ng, h->id, NULL);
		h->flags |= H2S_F_NG_CLOSED;
		if (!(h2c->back && (h->flags & H2S_F_IN_END)))
			h->flags |= H2S_F_RESET;
		if (h->s) {
			/* the stream lets go later: it holds the h2s alone */
			h2s_unlink(h);
			h->h2c = NULL;
			h->flags |= H2S_F_ORPHAN;
			/* the TLS session goes with the connection: the
			 * stream's fetches must not read it any more */
			h2s_ep(h)->ssl = NULL;
			h2c->nstreams--;
			h2c->nattached--;
			h2s_wake(h, EV_READ | EV_WRITE);
		} else {
			h2s_free(h);
		}
	}
}

int h2s_attach_back(struct h2c *h2c, struct stream *s)
{
	struct h2s *h = h2s_new(h2c);

	if (!h)
		return -1;
	h->s = s;
	h->flags |= H2S_F_STARTED;
	h2c->nattached++;
	h2c->nreq++;
	stream_attach_srv_mux(s, &h2c->c, &h2s_ops, h);
	return 0;
}

/* ---- the mux endpoint: what the stream reads ---- */

static ssize_t h2s_recv(void *ctx, char *p, size_t n)
{
	struct h2s *h = ctx;
	struct h2c *h2c = h->h2c;
	size_t got = 0, payload = 0;

	if (h->flags & H2S_F_RESET)
		return -ECONNRESET;
	got = h2_bytes_take(&h->rq, p, n);
	if (h->rq.len)
		return (ssize_t)got;
	if (!(h->flags & H2S_F_CHUNKED)) {
		payload = h2_bytes_take(&h->data, p + got, n - got);
		got += payload;
	} else {
		/* The chunk framing is made as the stream reads, one piece at a
		 * time (size line, payload, CRLF, last chunk with the trailers),
		 * so that any room takes something: a read that returned
		 * nothing while bytes wait would never be retried (the stream
		 * keeps watching EV_READ, no event comes). */
		while (got < n) {
			if (h->fr.len) {
				got += h2_bytes_take(&h->fr, p + got, n - got);
			} else if (h->ck_left && h->data.len) {
				size_t take = h2_bytes_take(&h->data, p + got,
							    MIN(h->ck_left, (uint64_t)(n - got)));

				got += take;
				payload += take;
				h->ck_left -= take;
				if (!h->ck_left && h2_bytes_add(&h->fr, "\r\n", 2, SIZE_MAX) < 0)
					return -ENOMEM;
			} else if (!h->ck_left && h->data.len) {
				char line[24];
				int hl = snprintf(line, sizeof(line), "%x\r\n", (unsigned)h->data.len);

				if (h2_bytes_add(&h->fr, line, (size_t)hl, SIZE_MAX) < 0)
					return -ENOMEM;
				h->ck_left = h->data.len;
			} else if (!h->ck_left && (h->flags & H2S_F_IN_END) && !h->req_last) {
				if (h2_bytes_add(&h->fr, "0\r\n", 3, SIZE_MAX) < 0 ||
				    h2_bytes_add(&h->fr, h->trl.p, h->trl.len, SIZE_MAX) < 0 ||
				    h2_bytes_add(&h->fr, "\r\n", 2, SIZE_MAX) < 0)
					return -ENOMEM;
				h->req_last = 1;
			} else {
				break;
			}
		}
	}
	if (payload && h2c) {
		if (h->flags & H2S_F_NG_CLOSED)
			nghttp2_session_consume_connection(h2c->ng, payload);
		else
			nghttp2_session_consume(h2c->ng, h->id, payload);
		h2c_want_flush(h2c);
	}
	if (got)
		return (ssize_t)got;
	/* a tunnel (CONNECT) ends with the client's END_STREAM */
	if (h->meth == H1_M_CONNECT && (h->flags & H2S_F_IN_END) && !h->back)
		return 0;
	return -EAGAIN;
}

/* ---- the mux endpoint: the response the stream writes ---- */

/* Fields of an HTTP/1 message that mean nothing in HTTP/2 (RFC 9113 8.2.2). */
static int h2_conn_specific(const char *n, size_t len)
{
	static const char *const names[] = {
		"connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (len == strlen(names[i]) && strncasecmp(n, names[i], len) == 0)
			return 1;
	return 0;
}

static struct {
	struct h1_hdr *hdrs;
	int            max;
	nghttp2_nv    *nv;
	char          *lower;     /* lower-cased names */
	size_t         lower_cap;
} h2x;

/* Room for a head of <nf> fields and <bytes> of names. */
static int h2x_reserve(int nf, size_t bytes)
{
	if (nf + 1 > h2x.max) {
		int max = nf + 64;

		free(h2x.hdrs);
		free(h2x.nv);
		h2x.hdrs = calloc((size_t)max, sizeof(*h2x.hdrs));
		h2x.nv = calloc((size_t)max + 1, sizeof(*h2x.nv));
		h2x.max = (h2x.hdrs && h2x.nv) ? max : 0;
		if (!h2x.max)
			return -1;
	}
	if (bytes > h2x.lower_cap) {
		char *p = realloc(h2x.lower, bytes);

		if (!p)
			return -1;
		h2x.lower = p;
		h2x.lower_cap = bytes;
	}
	return 0;
}

/* Adds field <n>: <v> to h2x.nv[<*k>] with its name lower-cased at
 * h2x.lower + <*lo>; connection-specific fields are left out. */
static void h2x_add(int *k, size_t *lo, const char *n, size_t nl, const char *v, size_t vl)
{
	if (h2_conn_specific(n, nl))
		return;
	for (size_t i = 0; i < nl; i++)
		h2x.lower[*lo + i] = (char)((n[i] >= 'A' && n[i] <= 'Z') ? n[i] + 32 : n[i]);
	h2x.nv[*k] = (nghttp2_nv){ (uint8_t *)h2x.lower + *lo, (uint8_t *)v, nl, vl,
				   NGHTTP2_NV_FLAG_NONE };
	*lo += nl;
	(*k)++;
}

static ssize_t h2s_data_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                             uint32_t *data_flags, nghttp2_data_source *src, void *ud);

/* A complete response head <hlen> bytes long at h->head: submitted as
 * HEADERS (a 1xx one, or the final one, with or without a body). Returns
 * 0, or -1 when it cannot be sent over HTTP/2. */
static int h2s_submit_head(struct h2s *h, char *p, size_t hlen, struct h1_msg *m)
{
	struct h2c *h2c = h->h2c;
	char status[4];
	size_t lo = 0;
	int k = 0, rv;
	nghttp2_data_provider prd = { .source.ptr = h, .read_callback = h2s_data_read };

	if (m->status < 100 || m->status > 999 || m->status == 101)
		return -1;   /* no protocol switch over HTTP/2 */
	snprintf(status, sizeof(status), "%03d", m->status);
	h2x.nv[k++] = (nghttp2_nv){ (uint8_t *)":status", (uint8_t *)status, 7, 3,
				    NGHTTP2_NV_FLAG_NONE };
	for (int i = 0; i < m->nhdrs; i++) {
		const struct h1_hdr *f = &m->hdrs[i];

		/* a response's TE means nothing; a length on a response that has
		 * no content (RFC 9110 8.6) makes HTTP/2 clients reset it */
		if (h1_hdr_is(p, f, "te") ||
		    ((m->status < 200 || m->status == 204) && h1_hdr_is(p, f, "content-length")))
			continue;
		h2x_add(&k, &lo, p + f->name.off, f->name.len, p + f->value.off, f->value.len);
	}
	if (m->status < 200) {
		rv = nghttp2_submit_headers(h2c->ng, NGHTTP2_FLAG_NONE, h->id, NULL, h2x.nv,
					    (size_t)k, NULL);
		return rv < 0 ? -1 : 0;
	}
	h->flags |= H2S_F_OUT_HEAD;
	if ((m->flags & H1_F_NO_BODY) || ((m->flags & H1_F_CLEN) && !m->clen)) {
		h->rs = H2S_RS_DONE;
		rv = nghttp2_submit_response(h2c->ng, h->id, h2x.nv, (size_t)k, NULL);
	} else {
		if (m->flags & H1_F_CHUNKED) {
			h->rs = H2S_RS_CK_SIZE;
		} else if (m->flags & H1_F_CLEN) {
			h->rs = H2S_RS_CLEN;
			h->left = m->clen;
		} else {
			h->rs = H2S_RS_CLOSE;
		}
		h->flags |= H2S_F_DATA_PRD;
		rv = nghttp2_submit_response(h2c->ng, h->id, h2x.nv, (size_t)k, &prd);
	}
	return rv < 0 ? -1 : 0;
}

/* Back: a complete request head at <p> is submitted as HEADERS (its body,
 * if any, through a data provider). Returns 0, or -1 when it cannot go
 * over HTTP/2 (CONNECT, no room for a new stream). */
static int h2s_submit_req(struct h2s *h, char *p, struct h1_msg *m)
{
	struct h2c *h2c = h->h2c;
	size_t lo = 0;
	int k = 0, rv;
	const char *path = p + m->uri.off, *auth = NULL;
	size_t plen = m->uri.len, alen = 0;
	nghttp2_data_provider prd = { .source.ptr = h, .read_callback = h2s_data_read };

	h->meth = m->meth_id;
	if (m->meth_id == H1_M_CONNECT || m->target == H1_T_AUTHORITY)
		return -1;
	if (m->flags & H1_F_HOST) {
		auth = p + m->host.off;
		alen = m->host.len;
	} else if (m->target == H1_T_ABSOLUTE) {
		auth = p + m->authority.off;
		alen = m->authority.len;
	}
	if (m->target == H1_T_ABSOLUTE) {
		/* the path part after scheme://authority */
		const char *a = memmem(path, plen, "://", 3);
		const char *q = a ? memchr(a + 3, '/', plen - (size_t)(a + 3 - path)) : NULL;

		plen = q ? plen - (size_t)(q - path) : 1;
		path = q ? q : "/";
	}
	h2x.nv[k++] = (nghttp2_nv){ (uint8_t *)":method", (uint8_t *)p + m->meth.off, 7,
				    m->meth.len, NGHTTP2_NV_FLAG_NONE };
	h2x.nv[k++] = (nghttp2_nv){ (uint8_t *)":scheme", (uint8_t *)(h2c->c.ssl ? "https" : "http"),
				    7, h2c->c.ssl ? 5 : 4, NGHTTP2_NV_FLAG_NONE };
	if (!auth) {
		/* HTTP/1.0 without Host: HTTP/2 servers want an authority
		 * (RFC 9113 8.3.1), the server's address stands for it */
		static char sa[64];

		auth = addr_to_str(&h2c->srv->addr, sa, sizeof(sa));
		alen = strlen(sa);
	}
	h2x.nv[k++] = (nghttp2_nv){ (uint8_t *)":authority", (uint8_t *)auth, 10, alen,
				    NGHTTP2_NV_FLAG_NONE };
	h2x.nv[k++] = (nghttp2_nv){ (uint8_t *)":path", (uint8_t *)path, 5, plen,
				    NGHTTP2_NV_FLAG_NONE };
	for (int i = 0; i < m->nhdrs; i++) {
		const struct h1_hdr *f = &m->hdrs[i];
		const char *fn = p + f->name.off, *fv = p + f->value.off;

		if (h1_hdr_is(p, f, "host") ||
		    (h1_hdr_is(p, f, "te") && !(f->value.len == 8 && !strncasecmp(fv, "trailers", 8))))
			continue;
		h2x_add(&k, &lo, fn, f->name.len, fv, f->value.len);
	}
	if (m->flags & H1_F_CHUNKED) {
		h->rs = H2S_RS_CK_SIZE;
	} else if ((m->flags & H1_F_CLEN) && m->clen) {
		h->rs = H2S_RS_CLEN;
		h->left = m->clen;
	} else {
		h->rs = H2S_RS_DONE;
	}
	h->flags |= H2S_F_OUT_HEAD;
	if (h->rs != H2S_RS_DONE)
		h->flags |= H2S_F_DATA_PRD;
	rv = nghttp2_submit_request(h2c->ng, NULL, h2x.nv, (size_t)k,
				    h->rs != H2S_RS_DONE ? &prd : NULL, h);
	if (rv < 0)
		return -1;
	h->id = rv;
	return 0;
}

/* Takes head bytes from <p> (<n>): returns how many belong to the head
 * (all when it is not complete yet), or -1 on an error. */
static ssize_t h2s_take_head(struct h2s *h, const char *p, size_t n)
{
	struct h1_msg m;
	size_t had = h->head.len, take = MIN(n, (size_t)global.bufsize - had);
	int r;

	if (h2x_reserve(global.maxhdr + 64, global.bufsize) < 0)
		return -1;
	if (!had) {
		/* the usual case, a whole head in one write: read where it is.
		 * (h1_parse() may only rewrite obs-folds in place, which the
		 * analysers never write; the bytes are taken either way.) */
		h1_msg_init(&m, h2x.hdrs, h2x.max - 1, !h->h2c->back, h->meth);
		r = h1_parse((char *)p, MIN(n, (size_t)global.bufsize), global.bufsize, &m);
		if (r < 0)
			return -1;
		if (r > 0)
			return (h->h2c->back ? h2s_submit_req(h, (char *)p, &m)
					     : h2s_submit_head(h, (char *)p, (size_t)r, &m)) < 0 ? -1 : r;
	}
	if (!take || h2_bytes_add(&h->head, p, take, global.bufsize) < 0)
		return -1;
	h1_msg_init(&m, h2x.hdrs, h2x.max - 1, !h->h2c->back, h->meth);
	r = h1_parse(h->head.p + h->head.off, h->head.len, global.bufsize, &m);
	if (r < 0)
		return -1;
	if (r == 0)
		return h->head.len >= global.bufsize ? -1 : (ssize_t)take;
	if ((h->h2c->back ? h2s_submit_req(h, h->head.p + h->head.off, &m)
			  : h2s_submit_head(h, h->head.p + h->head.off, (size_t)r, &m)) < 0)
		return -1;
	h->head.off = h->head.len = 0;
	return (ssize_t)r - (ssize_t)had;
}

/* The trailer lines gathered in h->head (ending with the empty line) are
 * submitted. Returns 0 or -1. */
static int h2s_submit_trailers(struct h2s *h)
{
	char *p = h->head.p + h->head.off, *end = p + h->head.len;
	size_t lo = 0;
	int k = 0, nf = 0;

	for (char *q = p; q < end; q++)
		nf += *q == '\n';
	if (h2x_reserve(nf + 1, h->head.len) < 0)
		return -1;
	while (p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p)), *colon, *v, *ve;

		if (!eol)
			break;
		ve = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
		colon = memchr(p, ':', (size_t)(ve - p));
		if (colon && colon > p) {
			v = colon + 1;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			h2x_add(&k, &lo, p, (size_t)(colon - p), v, (size_t)(ve - v));
		}
		p = eol + 1;
	}
	if (k && nghttp2_submit_trailer(h->h2c->ng, h->id, h2x.nv, (size_t)k) < 0)
		return -1;
	return 0;
}

/* Follows the chunked framing of a response body at <p> (<n> bytes):
 * payload goes to h->body. Returns the bytes taken (maybe 0: no room), or
 * -1 on a framing error. */
static ssize_t h2s_take_chunked(struct h2s *h, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && h->rs != H2S_RS_DONE) {
		char c = p[i];

		switch (h->rs) {
		case H2S_RS_CK_SIZE: {
			int d = str_hex_digit(c);

			if (d >= 0) {
				if (++h->ck_digits > H1_CHUNK_DIGITS_MAX)
					return -1;
				h->left = h->left * 16 + (uint64_t)d;
				i++;
				break;
			}
			if (!h->ck_digits)
				return -1;
			h->rs = H2S_RS_CK_EXT;
			break;
		}
		case H2S_RS_CK_EXT:
			i++;
			if (c != '\n')
				break;
			h->ck_digits = 0;
			h->rs = h->left ? H2S_RS_CK_DATA : H2S_RS_CK_TRL;
			break;
		case H2S_RS_CK_DATA: {
			size_t room = h2s_body_max() - h->body.len;
			size_t take = MIN(MIN((uint64_t)(n - i), h->left), room);

			if (!take)
				return (ssize_t)i;
			if (h2_bytes_add(&h->body, p + i, take, h2s_body_max()) < 0)
				return -1;
			i += take;
			h->left -= take;
			if (!h->left)
				h->rs = H2S_RS_CK_CRLF;
			break;
		}
		case H2S_RS_CK_CRLF:
			i++;
			if (c == '\n')
				h->rs = H2S_RS_CK_SIZE;
			else if (c != '\r')
				return -1;
			break;
		case H2S_RS_CK_TRL: {
			/* trailer lines up to the empty one, held in h->head;
			 * ck_digits counts the bytes of the current line */
			const char *eol = memchr(p + i, '\n', n - i);
			size_t take = eol ? (size_t)(eol - (p + i)) + 1 : n - i;

			if (h2_bytes_add(&h->head, p + i, take, H1_CHUNK_LINE_MAX * 4) < 0)
				return -1;
			i += take;
			h->ck_digits += (uint32_t)take;
			if (!eol)
				break;
			if (h->ck_digits <= 2) {   /* CRLF (or LF) alone: the end */
				if (h->head.len > h->ck_digits)
					h->flags |= H2S_F_TRAILERS;
				h->rs = H2S_RS_DONE;
			}
			h->ck_digits = 0;
			break;
		}
		default:
			return -1;
		}
	}
	return (ssize_t)i;
}

static ssize_t h2s_send(void *ctx, const char *p, size_t n)
{
	struct h2s *h = ctx;
	struct h2c *h2c = h->h2c;
	size_t used = 0, body_before = h->body.len;

	if (h->flags & (H2S_F_RESET | H2S_F_NG_CLOSED))
		return -ECONNRESET;
	while (used < n && h->rs != H2S_RS_DONE) {
		ssize_t k;

		if (h->rs == H2S_RS_HEAD) {
			k = h2s_take_head(h, p + used, n - used);
		} else if (h->rs == H2S_RS_CLEN || h->rs == H2S_RS_CLOSE) {
			size_t room = h2s_body_max() - h->body.len;

			k = (ssize_t)MIN(n - used, room);
			if (h->rs == H2S_RS_CLEN && (uint64_t)k > h->left)
				k = (ssize_t)h->left;
			if (k && h2_bytes_add(&h->body, p + used, (size_t)k, h2s_body_max()) < 0)
				k = -1;
			if (k > 0 && h->rs == H2S_RS_CLEN && !(h->left -= (uint64_t)k))
				h->rs = H2S_RS_DONE;
		} else {
			k = h2s_take_chunked(h, p + used, n - used);
		}
		if (k < 0) {
			log_event_px(&h2c->fe->loggers, LOG_L_WARNING,
				     "%s: HTTP/2 stream %d: response not translatable to HTTP/2, "
				     "stream reset", h2c->fe->name, (int)h->id);
			nghttp2_submit_rst_stream(h2c->ng, NGHTTP2_FLAG_NONE, h->id,
						  NGHTTP2_INTERNAL_ERROR);
			h->flags |= H2S_F_RESET;
			h2c_want_flush(h2c);
			return -EPROTO;
		}
		if (!k)
			break;   /* no room for more payload */
		used += (size_t)k;
	}
	if (used < n && h->rs == H2S_RS_DONE && !used)
		return -EPROTO;   /* bytes after the end of the response */
	if ((h->body.len != body_before || h->rs == H2S_RS_DONE) && (h->flags & H2S_F_DEFERRED)) {
		h->flags &= ~H2S_F_DEFERRED;
		nghttp2_session_resume_data(h2c->ng, h->id);
	}
	h2c_want_flush(h2c);
	/* not all taken: the stream waits for EV_WRITE, which only the data
	 * source taking body bytes gives (a partial write blocks as much as
	 * a refused one) */
	if (used < n && h->rs != H2S_RS_DONE)
		h->flags |= H2S_F_BLOCKED;
	if (!used)
		return -EAGAIN;
	return (ssize_t)used;
}

static ssize_t h2s_data_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                             uint32_t *data_flags, nghttp2_data_source *src, void *ud)
{
	struct h2s *h = src->ptr;
	size_t n = h2_bytes_take(&h->body, (char *)buf, length);

	if (!h->body.len && h->rs == H2S_RS_DONE) {
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
		if (h->flags & H2S_F_TRAILERS) {
			*data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			if (h2s_submit_trailers(h) < 0)
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		}
	} else if (!n) {
		h->flags |= H2S_F_DEFERRED;
		return NGHTTP2_ERR_DEFERRED;
	}
	if (n && (h->flags & H2S_F_BLOCKED)) {
		h->flags &= ~H2S_F_BLOCKED;
		h2s_wake(h, EV_WRITE);
	}
	return (ssize_t)n;
}

static void h2s_shutw(void *ctx)
{
	struct h2s *h = ctx;

	h->flags |= H2S_F_SHUTW;
	if (!h->h2c || (h->flags & H2S_F_NG_CLOSED))
		return;   /* no session to tell */
	if (h->rs == H2S_RS_CLOSE) {
		h->rs = H2S_RS_DONE;
		if (h->flags & H2S_F_DEFERRED) {
			h->flags &= ~H2S_F_DEFERRED;
			nghttp2_session_resume_data(h->h2c->ng, h->id);
		}
		h2c_want_flush(h->h2c);
	}
}

static void h2s_want(void *ctx, int events)
{
	struct h2s *h = ctx;

	if ((events & EV_READ) &&
	    (h->rq.len || h->data.len || h->fr.len || (h->flags & H2S_F_RESET) ||
	     ((h->flags & H2S_F_IN_END) && (h->flags & H2S_F_CHUNKED) && !h->req_last) ||
	     (h->meth == H1_M_CONNECT && (h->flags & H2S_F_IN_END))))
		ev_feed_event(global.loop, &h2s_ep(h)->io, EV_READ);
	if ((events & EV_WRITE) && ((h->flags & H2S_F_RESET) || h->body.len < h2s_body_max()))
		ev_feed_event(global.loop, &h2s_ep(h)->io, EV_WRITE);
}

static void h2s_close(void *ctx)
{
	struct h2s *h = ctx;
	struct h2c *h2c = h->h2c;

	h->s = NULL;
	if (!h2c) {   /* orphaned: its connection is gone */
		h2s_free(h);
		return;
	}
	h2c->nattached--;
	/* bytes nobody will read (a response fully received but not all read,
	 * back): their window comes back to the connection, whose window the
	 * closed stream no longer has */
	if (h->data.len && (h->flags & H2S_F_NG_CLOSED)) {
		nghttp2_session_consume_connection(h2c->ng, h->data.len);
		h2_bytes_free(&h->data);
	}
	if ((h->flags & H2S_F_NG_CLOSED) || !h->id) {
		h2s_free(h);
		return;
	}
	if (h2c->back ? h->rs != H2S_RS_DONE || !(h->flags & H2S_F_IN_END) : h->rs != H2S_RS_DONE) {
		/* the stream ended before its exchange did */
		nghttp2_submit_rst_stream(h2c->ng, NGHTTP2_FLAG_NONE, h->id,
					  h2c->back ? NGHTTP2_CANCEL :
					  (h->flags & H2S_F_OUT_HEAD) ? NGHTTP2_INTERNAL_ERROR
								      : NGHTTP2_REFUSED_STREAM);
		h->flags |= H2S_F_RESET;
	}
	/* request bytes nobody will read: their window comes back */
	if (h->data.len) {
		nghttp2_session_consume(h2c->ng, h->id, h->data.len);
		h2_bytes_free(&h->data);
	}
	h2c_want_flush(h2c);
}

static const struct conn_mux_ops h2s_ops = {
	.recv  = h2s_recv,
	.send  = h2s_send,
	.shutw = h2s_shutw,
	.want  = h2s_want,
	.close = h2s_close,
};
