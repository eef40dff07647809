/* mode http analysers (http_ana.h): one exchange at a time with keep-alive
 * and server connection reuse; the heads are parsed in place and their
 * rules run on an editable view (ana_req.c, ana_res.c), written out once
 * (or left untouched when nothing changed), bodies granted to the channels
 * by their framing so that they stream through (spliced when allowed).
 * Here: the transaction's life, local answers and services, the steps of
 * the exchange and the HTTP/1 stream protocol. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/backend.h>
#include <sluice/buf.h>
#include <sluice/cache.h>
#include <sluice/cfg.h>
#include <sluice/comp.h>
#include <sluice/fcgi_app.h>
#include <sluice/h1_trace.h>
#include <sluice/h2.h>
#include <sluice/http_retry.h>
#include <sluice/ticks.h>
#include <sluice/vars.h>
#include <sluice/http_reply.h>
#include <sluice/http_service.h>
#include <sluice/listener.h>
#include <sluice/logformat.h>
#include <sluice/stktable.h>
#include <sluice/pipe.h>
#include <sluice/pool.h>
#include <sluice/ssl.h>

#include "ana_int.h"

static int http_process(struct stream *s);
static int http_fail(struct stream *s, enum strm_err t0, enum strm_fin t1);

struct http_scratch http_ha;

/* Post-parse: the scratch space sized by the configuration (tune.bufsize,
 * tune.http.maxhdr), made again when a new configuration changed them. */
static int http_scratch_init(void)
{
	if (!http_ha.txn_pool)
		http_ha.txn_pool = pool_create("http_txn", sizeof(struct http_txn));
	if (http_ha.hdrs && http_ha.maxf == global.maxhdr + HTTP_EXTRA_FIELDS && http_ha.size == global.bufsize)
		return 0;
	free(http_ha.hdrs);
	free(http_ha.fields);
	free(http_ha.arena);
	free(http_ha.out);
	free(http_ha.rfields);
	free(http_ha.rarena);
	http_ha.hdrs = xcalloc((size_t)global.maxhdr, sizeof(*http_ha.hdrs));
	http_ha.maxf = global.maxhdr + HTTP_EXTRA_FIELDS;
	http_ha.fields = xcalloc((size_t)http_ha.maxf, sizeof(*http_ha.fields));
	http_ha.size = global.bufsize;
	http_ha.arena = xcalloc(1, http_ha.size);
	http_ha.out = xcalloc(1, http_ha.size);
	http_ha.rfields = xcalloc((size_t)http_ha.maxf, sizeof(*http_ha.rfields));
	http_ha.rarena = xcalloc(1, http_ha.size);
	return 0;
}

/* ---- rules that wait ---- */

int http_yield_save(struct stream *s, enum http_yld_phase phase, const struct http_head *h,
                           int hlen, const struct http_rules_pos *pos, const struct h1_msg *m)
{
	struct http_txn *txn = s->txn;
	size_t nf = (size_t)h->nf * sizeof(*h->f), nh = (size_t)m->nhdrs * sizeof(*m->hdrs);
	size_t need = nf + nh + h->arena_used;
	struct http_yield *y = txn->yld;

	if (!y || y->size < need) {
		free(y);
		txn->yld = y = malloc(sizeof(*y) + need);
		if (!y)
			return -1;
		y->size = need;
	}
	y->phase = phase;
	y->pos = *pos;
	y->hlen = hlen;
	y->h = *h;
	y->nhdrs = m->nhdrs;
	memcpy(y->data, h->f, nf);
	memcpy(y->data + nf, m->hdrs, nh);
	memcpy(y->data + nf + nh, h->arena, h->arena_used);
	return 0;
}

void http_yield_restore(const struct http_yield *y, struct http_head *h)
{
	size_t nf = (size_t)y->h.nf * sizeof(*y->h.f), nh = (size_t)y->nhdrs * sizeof(*http_ha.hdrs);

	*h = y->h;
	BUG_ON(h->f != http_ha.fields || h->arena != http_ha.arena, "a head set aside outside the areas");
	memcpy(http_ha.fields, y->data, nf);
	memcpy(http_ha.hdrs, y->data + nf, nh);
	memcpy(http_ha.arena, y->data + nf + nh, y->h.arena_used);
}

void http_yield_drop(struct http_txn *txn)
{
	free(txn->yld);
	txn->yld = NULL;
}

enum http_conn_mode http_mode(const struct stream *s)
{
	enum http_conn_mode f = http_px_of(s->fe)->conn_mode, b = http_px_of(s->be)->conn_mode;

	return f > b ? f : b;   /* the most closing of both wins */
}

/* ---- transaction life ---- */

static void http_txn_clear(struct stream *s, struct http_txn *txn)
{
	http_line_free(txn->reqline);
	http_line_free(txn->uniq_id);
	http_captures_free(s, txn);
	comp_txn_end(s);
	if (txn->svc_out) {
		dstr_free(txn->svc_out);
		free(txn->svc_out);
		txn->svc_out = NULL;
	}
	txn->reqline = txn->uniq_id = NULL;
	if (unlikely(txn->cache))
		cache_txn_free(s);
	if (unlikely(txn->fcgi)) {
		fcgi_txn_free(txn->fcgi);
		txn->fcgi = NULL;
	}
	var_store_free(&txn->vars);
	stk_txn_end(s);
	http_retry_drop(s);
	if (unlikely(txn->yld))
		http_yield_drop(txn);
	/* what a module kept for this request (Lua) ends with it */
	stream_ext_release(s);
	if (unlikely(s->prof.calls))
		memset(&s->prof, 0, sizeof(s->prof));   /* cpu_* and lat_ns_* count per request */
}

/* Starts waiting for the next request of <s>, with no transaction: an idle
 * client connection holds neither a buffer nor a transaction. */
static void http_wait_next(struct stream *s)
{
	if (s->txn) {
		http_txn_clear(s, s->txn);
		pool_free(http_ha.txn_pool, s->txn);
		s->txn = NULL;
	}
	stream_end_backend(s);
	s->t_idle = tick_ev_now();
	/* bytes of the next request (pipelined) are its server's, the rest
	 * were charged, or had no server */
	s->srv_bin_mark = s->req.total - (s->req.buf ? s->req.buf->data : 0);
	s->req.to_forward = 0;
	s->res.to_forward = 0;
	s->req.reserve = global.maxrewrite;
	s->res.reserve = global.maxrewrite;
	s->term_err = SE_NONE;
	s->term_fin = SF_NONE;
	s->ss.retries = 0;
	s->ss.redispatched = 0;
	s->ss.lb_hashed = 0;
	s->ss.persist = NULL;
	s->srv_qpos = s->be_qpos = 0;
	s->log_level = 0;
	s->prio_class = s->prio_offset = 0;
	s->tw = 0;
	s->t_queue = s->t_conn = s->t_est = 0;
	s->state = ST_HTTP;
}

void http_msg_init(struct stream *s, struct h1_msg *m, int res, enum h1_meth meth)
{
	h1_msg_init(m, http_ha.hdrs, HTTP_MAXFIELDS, res, meth);
	if (http_px_of(res ? s->be : s->fe)->options & (res ? HTTP_O_ACC_INV_RES : HTTP_O_ACC_INV_REQ))
		m->flags |= H1_F_RELAX;
}

struct http_txn *http_txn_new(struct stream *s)
{
	struct http_txn *txn = pool_alloc(http_ha.txn_pool);

	if (!txn)
		return NULL;
	memset(txn, 0, sizeof(*txn));
	txn->status = -1;
	s->tcp_flags &= ~STRM_F_WOKEN;   /* (a wake-up of the previous exchange) */
	http_msg_init(s, &txn->req, 0, H1_M_OTHER);
	s->txn = txn;
	return txn;
}

static int http_stream_init(struct stream *s)
{
	BUG_ON(!http_ha.hdrs, "HTTP stream before the configuration's post-parse");
	http_wait_next(s);
	s->t_idle = s->t_accept;
	if (!(s->tcp_flags & STRM_F_MUX) && !s->fe->logformat &&
	    (s->fe->loggers.head || s->fe->loggers.use_global)) {
		/* No per-request format: HAProxy logs the connection. */
		char line[512], src[64], dst[64];
		int n = snprintf(line, sizeof(line), "Connect from %s to %s (%s/%s)",
				 addr_to_str(&s->cli_addr, src, sizeof(src)),
				 addr_to_str(stream_dst(s), dst, sizeof(dst)), s->fe->name, "HTTP");

		if (n > 0)
			log_send(&s->fe->loggers, LOG_L_INFO, line, MIN((size_t)n, sizeof(line) - 1));
	}
	return 0;
}

/* ---- writing heads ---- */

long http_head_replace(struct channel *ch, const struct http_head *h, uint32_t old_len)
{
	struct buf *b = ch->buf;
	size_t nl = http_head_len(h), rest = b->data - old_len;

	if (nl + rest > buf_size() || nl > http_ha.size)
		return -1;
	/* Write into scratch first: the view points into the buffer. */
	http_head_write(h, http_ha.out);
	memmove(b->area + nl, b->area + b->head + old_len, rest);
	memcpy(b->area, http_ha.out, nl);
	b->head = 0;
	b->data = (uint32_t)(nl + rest);
	return (long)nl;
}

/* Writes head <h> and <blen> body bytes as the whole content of <ch>. */
static int http_put_msg(struct channel *ch, const struct http_head *h, const char *body,
                        size_t blen)
{
	size_t nl = http_head_len(h), keep = (size_t)http_chan_clear(ch);
	char *p;

	if (nl + blen > buf_size() - keep || (!ch->buf && !(ch->buf = buf_get())))
		return -1;
	p = ch->buf->area + ch->buf->head + keep;
	http_head_write(h, p);
	memcpy(p + nl, body, blen);
	ch->buf->data = (uint32_t)(keep + nl + blen);
	ch->to_forward = keep + nl + blen;
	return 0;
}

/* ---- local replies ---- */

void http_answer_head(struct http_head *h)
{
	memset(h, 0, sizeof(*h));
	h->f = http_ha.rfields;
	h->maxf = http_ha.maxf;
	h->arena = http_ha.rarena;
	h->arena_size = http_ha.size;
}

/* Runs the http-after-response rules (backend, then frontend) on a
 * response head. <h> is the response under analysis meanwhile, so that the
 * res.* fetches of their conditions and formats, and Lua's txn.http, read
 * it: a local reply or a service's head is not the server's. */
enum http_act_ret http_after_rules(struct stream *s, struct http_head *h)
{
	struct http_head *prev = s->txn->res_head;
	struct http_act_out out;
	enum http_act_ret r = HTTP_ACT_CONT;

	s->txn->res_head = h;
	if (s->be != s->fe && s->be->http_rules)
		r = http_rules_exec(&s->be->http_rules[HTTP_RS_AFTER], s, h, &out);
	if ((r == HTTP_ACT_CONT || r == HTTP_ACT_ALLOW) && s->fe->http_rules)
		r = http_rules_exec(&s->fe->http_rules[HTTP_RS_AFTER], s, h, &out);
	s->txn->res_head = prev;
	return r;
}

/* Sets the Connection field a response to the client needs. A soft stop
 * that began after the request was read still closes after this response:
 * the client learns it from the response and takes its next request
 * elsewhere, rather than finding the connection gone under it. */
int http_res_conn_hdr(struct stream *s, struct http_head *h)
{
	struct http_txn *txn = s->txn;
	int close;

	if (global.flags & GLB_F_STOPPING)
		txn->flags |= TX_F_CLI_CLOSE;
	close = !!(txn->flags & TX_F_CLI_CLOSE);

	if (close && !http_head_has_token(h, "connection", "close"))
		return http_head_set(h, "connection", 10, "close", 5);
	if (!close && txn->req_ver11 && http_head_has_token(h, "connection", "close"))
		http_head_del(h, "connection", 10);
	if (!close && !txn->req_ver11 && !http_head_has_token(h, "connection", "keep-alive"))
		return http_head_set(h, "connection", 10, "keep-alive", 10);
	return 0;
}

/* (contract in ana_int.h) */
int http_reply(struct stream *s, int status, const struct http_reply *r,
               const struct http_act_out *out, enum strm_err t0, enum strm_fin t1)
{
	struct http_txn *txn = s->txn;
	struct http_head h;
	struct lf_ctx lc;
	const char *body = "";
	size_t blen = 0;
	/* error pages: the backend's once it is chosen, else the frontend's */
	const struct proxy *epx = (txn->flags & TX_F_BE_SET) ? s->be : s->fe;

	/* the log line shows the heads as they were, before this answer
	 * reuses the analysis areas */
	if (txn->req_head)
		http_log_snapshot(s, 0);
	if (txn->res_head)
		http_log_snapshot(s, 1);
	http_srv_abort(s);
	s->term_err = t0;
	s->term_fin = t1;
	txn->status = status;
	txn->flags |= TX_F_LOCAL;
	txn->flags &= ~TX_F_TARPIT;
	/* A request fully received but not (all) sent is dropped; one not
	 * fully received cannot be told from a next request: close. */
	if (txn->req_st == HTTP_MSG_DONE && s->req.to_forward && s->req.buf &&
	    !(s->req.pipe && s->req.pipe->data) && s->req.to_forward <= s->req.buf->data) {
		s->req.buf->head += (uint32_t)s->req.to_forward;
		s->req.buf->data -= (uint32_t)s->req.to_forward;
		s->req.to_forward = 0;
		if (!s->req.buf->data) {
			buf_put(s->req.buf);
			s->req.buf = NULL;
		}
	}
	if (txn->req_st != HTTP_MSG_DONE || s->req.to_forward)
		txn->flags |= TX_F_CLI_CLOSE;
	/* As HAProxy: a bad or late request closes; 5xx pages keep the
	 * connection when the request was read to its end. */
	if (status == 400 || status == 408)
		txn->flags |= TX_F_CLI_CLOSE;

	/* its own fields and arena: the formats of its fields and body
	 * (%[req.hdr(...)]) still read the request head */
	http_answer_head(&h);
	if (out && out->location.p) {
		/* The location and cookie live in the request head's arena;
		 * they are set aside first (a copy bounded by one buffer). */
		struct http_str loc = out->location, ck = out->cookie;
		const char *reason = status == 301 ? "Moved Permanently" : status == 302 ? "Found" :
				     status == 303 ? "See Other" : status == 307 ? "Temporary Redirect" :
				     status == 308 ? "Permanent Redirect" : http_reason(status);
		char code[8];

		if ((size_t)loc.len + ck.len <= http_ha.size) {
			memcpy(http_ha.out, loc.p, loc.len);
			loc.p = http_ha.out;
			if (ck.p) {
				memcpy(http_ha.out + loc.len, ck.p, ck.len);
				ck.p = http_ha.out + loc.len;
			}
		} else {
			loc.len = ck.len = 0;
			ck.p = NULL;
		}
		snprintf(code, sizeof(code), "%d", status);
		h.flags = HTTP_HEAD_F_RESP;
		http_head_set_sl(&h, HTTP_SL_RSVER, "HTTP/1.1", 8);
		http_head_set_sl(&h, HTTP_SL_STATUS, code, strlen(code));
		http_head_set_sl(&h, HTTP_SL_REASON, reason, strlen(reason));
		http_head_add(&h, "content-length", 14, "0", 1);
		http_head_add(&h, "location", 8, loc.p, loc.len);
		if (ck.p)
			http_head_add(&h, "set-cookie", 10, ck.p, ck.len);
		http_head_add(&h, "cache-control", 13, "no-cache", 8);
	} else {
		if (!r && !(r = http_error_find(epx, status)) &&
		    !(epx != s->fe && (r = http_error_find(s->fe, status))))
			r = http_error_reply(NULL, status);
		r = http_reply_resolve(r, epx);
		txn->status = r->status;
		if (r->flags & (HTTP_REPLY_F_SILENT | HTTP_REPLY_F_CLOSE))
			txn->flags |= TX_F_CLI_CLOSE;
		if (r->flags & HTTP_REPLY_F_SILENT) {
			/* an empty errorfile: the client is closed without a word */
			chan_release(&s->res);
			s->res.to_forward = 0;
			txn->res_st = HTTP_MSG_DONE;
			return 0;
		}
		http_fill_lf_ctx(s, &lc, http_reply_lf_needs(r));
		/* "http-request auth": its challenge follows the error page's fields. */
		if (http_reply_to_head(r, &lc, &h, &body, &blen) == -1 ||
		    (out && out->www_auth.p && http_head_add(&h, out->proxy_auth ? "proxy-authenticate" :
							      "www-authenticate", out->proxy_auth ? 18 : 16,
							      out->www_auth.p, out->www_auth.len) == -1)) {
			r = http_error_reply(epx, 500);
			h.nf = 0;
			h.arena_used = 0;
			http_reply_to_head(r, NULL, &h, &body, &blen);
		}
		txn->status = r->status;
	}
	http_after_rules(s, &h);
	http_res_conn_hdr(s, &h);
	if (http_put_msg(&s->res, &h, body, blen) == -1) {
		/* No buffer or a reply larger than one: give up on the client. */
		txn->flags |= TX_F_CLI_CLOSE;
		s->res.to_forward = 0;
	} else {
		http_case_adjust(s->fe, HTTP_O_CASE_CLI, s->res.buf->area, s->res.buf->data - blen);
	}
	txn->res_st = HTTP_MSG_DONE;
	s->res.reserve = 0;
	http_count_status(s, txn->status, 0);
	return 0;
}

int http_reply_error(struct stream *s, int status, enum strm_err t0, enum strm_fin t1)
{
	return http_reply(s, status, NULL, NULL, t0, t1);
}

/* ---- services ---- */

/* Moves what a service's response has left into the response buffer.
 * Returns the bytes moved (0: no buffer now, or no room). */
static size_t http_svc_refill(struct stream *s)
{
	struct dstr *d = s->txn->svc_out;
	struct buf *b;
	size_t n;

	if (!s->res.buf && !(s->res.buf = buf_get()))
		return 0;
	b = s->res.buf;
	if (!b->data)
		b->head = 0;
	n = MIN(d->len, (size_t)buf_room(b, buf_size()));
	memcpy(b->area + b->head + b->data, d->p, n);
	b->data += (uint32_t)n;
	dstr_consume(d, n);
	if (!d->len) {
		dstr_free(d);
		free(d);
		s->txn->svc_out = NULL;
	}
	return n;
}

/* Local answer <d> (owned from now on: a service's, a cache hit's) is the
 * response, txn->status set: it leaves from txn->svc_out as the client
 * takes it. */
void http_svc_start(struct stream *s, struct dstr *d)
{
	s->res.reserve = 0;
	s->res.to_forward = http_chan_clear(&s->res) + d->len;
	s->txn->svc_out = d;
	s->txn->res_st = HTTP_MSG_DONE;
	http_count_status(s, s->txn->status, 0);
	http_svc_refill(s);
}

/* Answers the request in <h> with service <svc> (selected by <px>'s
 * settings or a use-service rule). Returns 0. */
int http_serve(struct stream *s, const struct http_service *svc, struct proxy *px,
                      const struct http_head *h)
{
	struct http_txn *txn = s->txn;
	const struct h1_msg *m = &txn->req;
	const struct buf *b = s->req.buf;
	const char *body = "";
	size_t blen = 0;
	struct dstr *d;
	int status;

	if (svc->start)
		return http_applet_begin(s, svc, px, h);
	http_log_snapshot(s, 0);
	/* The request body, when the whole of it already follows the head in
	 * the request buffer (the head is not consumed yet: it starts at
	 * b->head and is m->head_len long). A body still on its way, or a
	 * chunked one, is not waited for: the service gets NULL. */
	if (!(m->flags & H1_F_NO_BODY) && !((m->flags & H1_F_CLEN) && !m->clen)) {
		body = NULL;
		if ((m->flags & H1_F_CLEN) && b && b->data >= m->head_len &&
		    b->data - m->head_len >= m->clen) {
			body = b->area + b->head + m->head_len;
			blen = (size_t)m->clen;
		}
	}
	d = calloc(1, sizeof(*d));
	status = d ? svc->answer(s, px, h, body, blen, d) : -1;

	if (status < 0 || !d->len) {
		if (d) {
			dstr_free(d);
			free(d);
		}
		return http_reply(s, 500, NULL, NULL, SE_PROXY, SF_REQ);
	}
	http_srv_abort(s);
	s->fe->fe_counters.intercepted++;
	s->term_err = SE_LOCAL;
	s->term_fin = SF_REQ;
	txn->status = status;
	txn->flags |= TX_F_LOCAL;
	txn->svc_log = svc->log_name;
	if (unlikely(http_px_of(s->fe)->options & HTTP_O_CASE_CLI)) {
		const char *eoh = memmem(d->p, d->len, "\r\n\r\n", 4);

		if (eoh)
			hdr_case_adjust(d->p, (size_t)(eoh - d->p) + 4);
	}
	http_svc_start(s, d);
	return 0;
}

/* ---- the exchange ---- */

/* A message of <ch> in state <st> that its source will never complete: the
 * source closed, nothing is left to leave, and a body is still due (a
 * chunked body not at its end, or part of a Content-Length one). A
 * <close_delim> body ends with the close instead. */
static int http_msg_truncated(const struct channel *ch, enum http_msg_state st, int close_delim)
{
	if (!(ch->flags & CH_F_SHUTR) || chan_pending(ch))
		return 0;
	if (st == HTTP_MSG_BODY)
		return !close_delim;
	return st == HTTP_MSG_DONE && ch->to_forward && ch->to_forward != CHN_INFINITE;
}

static int http_msg_sent(const struct channel *ch)
{
	return ch->to_forward == 0 && !(ch->pipe && ch->pipe->data);
}

/* The exchange is over: log it, then either close or wait for the next
 * request. Returns 0, or -1 when the stream was closed. */
static int http_end_txn(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct server *freed;
	long tr = txn->t_res && s->t_est ? tick_ev_to_ms(txn->t_res - MAX(s->t_est, txn->t_head)) : -1;

	if (unlikely(txn->cache))
		cache_txn_end(s);

	if (tr >= 0 && s->ss.target) {
		struct counters *c = &s->ss.target->counters;

		c->rtime_avg = counters_avg(c->rtime_avg, (uint32_t)tr, c->avg_n ? c->avg_n : 1);
		if ((uint32_t)tr > c->rtime_max)
			c->rtime_max = (uint32_t)tr;
	}
	http_count_lat(s);
	http_log(s);
	s->tcp_flags = (s->tcp_flags & ~STRM_F_AUTH_LAST) |
		       (txn->status == 401 || txn->status == 407 ? STRM_F_AUTH_LAST : 0);
	/* A server connection that can carry another request is kept (and
	 * offered to other streams while this client is idle); the slot is
	 * freed either way. */
	if (s->ss.st == SS_EST && !(txn->flags & TX_F_SRV_CLOSE) &&
	    !(s->res.flags & CH_F_SHUTR) && !(s->req.flags & CH_F_SHUTW) &&
	    !s->res.buf && !s->res.pipe && !(s->srv.flags & CO_F_MUX) &&
	    http_srv_reusable(s->ss.target, s->ss.reused + 1))
		freed = ss_keep(s, http_px_of(s->be)->reuse != HTTP_REUSE_NEVER);
	else
		freed = ss_release(s);
	/* a stream of an HTTP/2 connection carries one exchange; its mux
	 * learns that the response ended here: a body delimited by the
	 * server's close has no other end (END_STREAM rather than a reset) */
	if ((s->tcp_flags & STRM_F_MUX) && !(s->res.flags & CH_F_SHUTW))
		chan_shutw(&s->res, &s->cli);
	if ((txn->flags & TX_F_CLI_CLOSE) || (s->req.flags & CH_F_SHUTR) ||
	    (s->tcp_flags & STRM_F_MUX)) {
		stream_close(s, s->term_err, s->term_fin);
		backend_srv_freed(freed);
		return -1;
	}
	chan_release(&s->res);
	s->res.flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
	http_wait_next(s);
	backend_srv_freed(freed);
	return 0;
}

/* A kept server connection between requests: anything from it (a close,
 * or bytes nobody asked for) ends it. */
static void http_check_kept(struct stream *s)
{
	if ((s->res.buf && s->res.buf->data) || (s->res.flags & CH_F_SHUTR)) {
		ss_release(s);   /* no slot is held while kept */
		chan_release(&s->res);
		s->res.flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
	}
}

/* The client speaks HTTP/2: the HTTP/2 mux takes its connection over and
 * <s> is gone. Returns -1 (<s> is freed either way). */
static int http_to_h2(struct stream *s)
{
	if (h2c_take_over(s) < 0)
		stream_close(s, SE_RESOURCE, SF_REQ);
	return -1;
}

/* No request in progress: a transaction starts with the first byte of the
 * next one. Returns 1 when one started, 0 to keep waiting, -1 when the
 * stream was closed. */
static int http_process_idle(struct stream *s)
{
	struct http_txn *txn;

	if (unlikely(!s->nreq) && s->req.buf && s->req.buf->data && !s->cli.ssl &&
	    !(s->tcp_flags & STRM_F_MUX) &&
	    !(http_px_of(s->fe)->options & HTTP_O_NO_H2_UPG) && !(s->tcp_flags & STRM_F_PROTO_H1)) {
		/* a clear-text connection may start with the HTTP/2 preface */
		int m = h2_preface_match(s->req.buf->area + s->req.buf->head, s->req.buf->data);

		if (m < 0 && !(s->req.flags & CH_F_SHUTR))
			return 0;
		if (m > 0)
			return http_to_h2(s);
	}
	if ((s->req.buf && s->req.buf->data) || ((s->req.flags & CH_F_SHUTR) && !s->nreq)) {
		txn = http_txn_new(s);
		if (!txn) {
			stream_close(s, SE_RESOURCE, SF_REQ);
			return -1;
		}
		txn->req_bytes = s->req.buf ? s->req.buf->data : 0;
		return 1;
	}
	if (s->req.flags & CH_F_SHUTR) {
		/* the client left between requests: a normal end */
		stream_close(s, SE_CLI_ABORT, SF_REQ);
		return -1;
	}
	if (s->ss.st == SS_KEPT) {
		/* only the kept server connection may have news */
		if (stream_forward(s, &s->res, &s->srv, &s->cli, 0) != CHN_OK)
			ss_release(s);
		http_check_kept(s);
	}
	return 0;
}

/* What a step of the exchange did (http_process() walks them in order). */
enum http_step {
	HTTP_STEP_DONE,     /* went as far as it could: the next step runs */
	HTTP_STEP_WAIT,     /* nothing more until an event on a side */
	HTTP_STEP_AGAIN,    /* start over: a reused connection can take the
	                       request now, or a pipelined request is waiting */
	HTTP_STEP_CLOSED,   /* the stream was closed (freed) */
};

/* The request side: reads from the client, starts a transaction with the
 * first byte of a request, analyses its head, follows a chunked body. */
static enum http_step http_step_request(struct stream *s)
{
	struct http_txn *txn;
	enum chan_res r;

	r = stream_forward(s, &s->req, &s->cli, s->ss.st == SS_EST ? &s->srv : NULL, 1);
	txn = s->txn;
	if (r == CHN_SRC_ERR) {
		stream_close(s, SE_CLI_ABORT, !txn || txn->req_st == HTTP_MSG_IDLE ? SF_REQ : SF_DATA);
		return HTTP_STEP_CLOSED;
	}
	if (!txn) {
		int ret = http_process_idle(s);

		if (ret <= 0)
			return ret < 0 ? HTTP_STEP_CLOSED : HTTP_STEP_WAIT;
		txn = s->txn;
	}
	if (r == CHN_DST_ERR) {
		if (http_fail(s, SE_SRV_ABORT, SF_DATA) == -1) {
			stream_close(s, SE_SRV_ABORT, SF_DATA);
			return HTTP_STEP_CLOSED;
		}
	}
	if (unlikely(txn->yld) && txn->yld->phase <= HTTP_Y_REQ_BE && !(txn->flags & TX_F_LOCAL) &&
	    (s->tcp_flags & STRM_F_WOKEN)) {
		/* the request rules waited for this wake-up */
		s->tcp_flags &= ~STRM_F_WOKEN;
		if (http_req_resume(s) == -1)
			return HTTP_STEP_CLOSED;
		if (s->ss.st == SS_EST)
			return HTTP_STEP_AGAIN;   /* reused connection: send the request now */
	}
	if ((http_px_of(s->be)->options & HTTP_O_ABRT_CLOSE) && (s->req.flags & CH_F_SHUTR) &&
	    txn->req_st == HTTP_MSG_DONE && txn->res_st == HTTP_MSG_IDLE &&
	    !(txn->flags & TX_F_LOCAL) && (s->ss.st != SS_EST || !chan_pending(&s->req))) {
		/* option abortonclose: nobody waits for the answer any more */
		stream_close(s, SE_CLI_ABORT, s->ss.st == SS_QUEUED ? SF_QUEUE :
			     s->ss.st == SS_EST ? SF_HDRS : SF_CONN);
		return HTTP_STEP_CLOSED;
	}
	if (http_msg_truncated(&s->req, txn->req_st, 0) && txn->res_st != HTTP_MSG_DONE &&
	    !(txn->flags & TX_F_LOCAL)) {
		/* the client left before the end of its Content-Length body */
		stream_close(s, SE_CLI_ABORT, s->ss.st == SS_EST ? SF_DATA :
			     s->ss.st == SS_QUEUED ? SF_QUEUE : SF_CONN);
		return HTTP_STEP_CLOSED;
	}
	if (http_srv_idle(s) && txn->req_st == HTTP_MSG_IDLE && !(txn->flags & (TX_F_LOCAL | TX_F_TARPIT))) {
		if (http_wait_req(s) == -1)
			return HTTP_STEP_CLOSED;
		if (s->ss.st == SS_EST)
			return HTTP_STEP_AGAIN;   /* reused connection: send the request now */
	}
	if (txn->req_st == HTTP_MSG_BODY && txn->req_chunked && !(txn->flags & TX_F_LOCAL)) {
		/* (the body of a request answered here is not read further) */
		int c = http_chunked_step(&s->req, &txn->req_ck);

		if (c == 1) {
			txn->req_st = HTTP_MSG_DONE;
		} else if (c == -1 && (txn->res_st != HTTP_MSG_IDLE || txn->res_bytes)) {
			/* bad framing once the response began: no 400 can
			 * be sent any more, and nothing more is forwarded */
			s->fe->fe_counters.failed_req++;
			s->li->counters.failed_req++;
			stream_close(s, SE_PROXY, SF_DATA);
			return HTTP_STEP_CLOSED;
		} else if (c == -1) {
			http_req_error(s, 400, SE_PROXY);
		}
	}
	return HTTP_STEP_DONE;
}

/* A compressed body: what arrived is compressed and leaves, in turns
 * until nothing moves (a turn's send may read more from the server).
 * Returns 0, or -1 when the stream was closed (a zlib error or bad
 * chunks: the client never gets the last chunk). */
static int http_comp_body(struct stream *s)
{
	for (int turn = 0; turn < 64; turn++) {
		int r = comp_res_step(s);

		if (r == -1) {
			http_count_resp_failed(s, 0);
			stream_close(s, SE_PROXY, SF_DATA);
			return -1;
		}
		if (r == 0 || !chan_pending(&s->res))
			return 0;
		if (stream_forward(s, &s->res, &s->srv, &s->cli, 0) == CHN_DST_ERR) {
			stream_close(s, SE_CLI_ABORT, SF_DATA);
			return -1;
		}
	}
	/* still moving: come back in this loop iteration */
	ev_feed_event(global.loop, &s->cli.io, EV_READ);
	return 0;
}

/* The response side: what the server (or a reply made here) sends reaches
 * the client; interim and final heads are analysed, a body followed to its
 * end. */
static enum http_step http_step_response(struct stream *s)
{
	struct http_txn *txn = s->txn;
	enum chan_res r;

	if (txn->svc_out && (!s->res.buf || !s->res.buf->data))
		http_svc_refill(s);
	r = stream_forward(s, &s->res, &s->srv, &s->cli, 0);
	if (r == CHN_DST_ERR) {
		stream_close(s, SE_CLI_ABORT, SF_DATA);
		return HTTP_STEP_CLOSED;
	}
	if (r == CHN_SRC_ERR) {
		if (s->ss.st == SS_KEPT) {
			ss_release(s);
		} else if (http_fail(s, SE_SRV_ABORT, txn->res_st == HTTP_MSG_IDLE ? SF_HDRS : SF_DATA) == -1) {
			stream_close(s, SE_SRV_ABORT, SF_DATA);
			return HTTP_STEP_CLOSED;
		}
	}
	/* A service's long response: refill as long as the client takes it;
	 * a buffer left with data makes stream_update() wait for EV_WRITE. */
	while (txn->svc_out && r == CHN_OK && !(s->res.buf && s->res.buf->data)) {
		if (!http_svc_refill(s))
			break;
		r = stream_forward(s, &s->res, &s->srv, &s->cli, 0);
		if (r == CHN_DST_ERR) {
			stream_close(s, SE_CLI_ABORT, SF_DATA);
			return HTTP_STEP_CLOSED;
		}
	}
	/* a service answering over time: what the client took made room, what
	 * it sent is there to read; while the client takes all it writes, it
	 * goes on (no event would come back for a buffer that emptied) */
	for (int turn = 0; unlikely(txn->applet); turn++) {
		uint64_t granted = s->res.to_forward;

		if (turn == 16) {
			stream_wake(s);   /* more in this loop pass, after the others */
			break;
		}
		if (http_applet_step(s) == -1)
			return HTTP_STEP_CLOSED;
		granted = s->res.to_forward - granted;
		if (chan_pending(&s->res) &&
		    stream_forward(s, &s->res, &s->srv, &s->cli, 0) == CHN_DST_ERR) {
			stream_close(s, SE_CLI_ABORT, SF_DATA);
			return HTTP_STEP_CLOSED;
		}
		if (!granted || (s->res.buf && s->res.buf->data))
			break;   /* nothing new, or the client is full: its events say */
	}
	if (s->ss.st == SS_KEPT)
		http_check_kept(s);
	/* Interim responses may precede the final one in the same read: each
	 * leaves before the next head is looked at, until a head lacks bytes
	 * (the server's next read wakes us), the client stops taking them
	 * (its EV_WRITE does), or the final head was taken. No turn cap: every
	 * turn consumes a head, and a transaction takes at most
	 * HTTP_MAX_INTERIM interim ones. */
	if (unlikely(txn->yld) && txn->yld->phase >= HTTP_Y_RES_BE && !(txn->flags & TX_F_LOCAL) &&
	    (s->tcp_flags & STRM_F_WOKEN)) {
		/* the response rules waited for this wake-up */
		s->tcp_flags &= ~STRM_F_WOKEN;
		http_res_resume(s);
		if (chan_pending(&s->res) &&
		    stream_forward(s, &s->res, &s->srv, &s->cli, 0) == CHN_DST_ERR) {
			stream_close(s, SE_CLI_ABORT, SF_DATA);
			return HTTP_STEP_CLOSED;
		}
	}
	while (s->ss.st == SS_EST && txn->res_st == HTTP_MSG_IDLE && !(txn->flags & TX_F_LOCAL) &&
	       !txn->yld) {
		http_wait_res(s);
		if (!s->res.to_forward)
			break;   /* no head was granted: waiting for bytes */
		/* The head just granted leaves now, with what follows of the
		 * body, rather than after another trip through epoll. */
		if (chan_pending(&s->res) &&
		    stream_forward(s, &s->res, &s->srv, &s->cli, 0) == CHN_DST_ERR) {
			stream_close(s, SE_CLI_ABORT, SF_DATA);
			return HTTP_STEP_CLOSED;
		}
		if (s->res.to_forward || !s->res.buf || !s->res.buf->data)
			break;
	}
	if (unlikely(txn->comp) && txn->res_st == HTTP_MSG_BODY && !(txn->flags & TX_F_LOCAL)) {
		if (http_comp_body(s) == -1)
			return HTTP_STEP_CLOSED;
	} else if (txn->res_st == HTTP_MSG_BODY && !(txn->flags & TX_F_LOCAL)) {
		if (txn->flags & TX_F_RES_CLOSE_DELIM) {
			if ((s->res.flags & CH_F_SHUTR) && !chan_pending(&s->res)) {
				txn->res_st = HTTP_MSG_DONE;
				s->res.to_forward = 0;
			}
		} else if (txn->res_chunked) {
			int c = http_chunked_step(&s->res, &txn->res_ck);

			if (c == 1) {
				txn->res_st = HTTP_MSG_DONE;
			} else if (c == -1 && txn->res_bytes == 0) {
				http_res_failed(s, SE_PROXY, 1);
			} else if (c == -1) {
				/* the response began: cut it (PD, as HAProxy
				 * names bad chunks after the head), the framing
				 * that follows is never forwarded */
				http_count_resp_failed(s, 0);
				stream_close(s, SE_PROXY, SF_DATA);
				return HTTP_STEP_CLOSED;
			}
		}
	}
	if (http_msg_truncated(&s->res, txn->res_st, txn->flags & TX_F_RES_CLOSE_DELIM) &&
	    !(txn->flags & TX_F_LOCAL)) {
		/* the server left in the middle of the body */
		stream_close(s, SE_SRV_ABORT, SF_DATA);
		return HTTP_STEP_CLOSED;
	}
	return HTTP_STEP_DONE;
}

/* Upgraded or CONNECT: raw bytes both ways, ending as a TCP stream does. */
static enum http_step http_step_tunnel(struct stream *s)
{
	if (s->txn->req_st != HTTP_MSG_TUNNEL)
		return HTTP_STEP_DONE;
	if (((s->req.flags & CH_F_SHUTW) || chan_shutw_due(&s->req)) &&
	    ((s->res.flags & CH_F_SHUTW) || chan_shutw_due(&s->res))) {
		http_log(s);
		stream_close(s, SE_NONE, SF_NONE);
		return HTTP_STEP_CLOSED;
	}
	if (chan_shutw_due(&s->req) && s->srv.fd >= 0)
		chan_shutw(&s->req, &s->srv);
	if (chan_shutw_due(&s->res))
		chan_shutw(&s->res, &s->cli);
	return HTTP_STEP_WAIT;
}

/* The response has left: the exchange ends, and a pipelined request that
 * is waiting starts over. */
static enum http_step http_step_end(struct stream *s)
{
	struct http_txn *txn = s->txn;

	if (txn->res_st != HTTP_MSG_DONE || !http_msg_sent(&s->res))
		return HTTP_STEP_WAIT;
	if (txn->req_st != HTTP_MSG_DONE || !http_msg_sent(&s->req)) {
		/* Answered before the whole request arrived: what is left of
		 * it cannot be told from a next request. */
		txn->flags |= TX_F_CLI_CLOSE | TX_F_SRV_CLOSE;
	}
	if (http_end_txn(s) == -1)
		return HTTP_STEP_CLOSED;
	return s->req.buf && s->req.buf->data ? HTTP_STEP_AGAIN : HTTP_STEP_WAIT;
}

/* Runs the exchange: the steps in order until one waits, closes or starts
 * over, then updates what the sides are watched for. */
static int http_process(struct stream *s)
{
	static enum http_step (*const steps[])(struct stream *) = {
		http_step_request, http_step_response, http_step_tunnel, http_step_end,
	};

	for (int round = 0; round < 64; round++) {
		enum http_step r = HTTP_STEP_DONE;

		for (size_t i = 0; r == HTTP_STEP_DONE && i < ARRAY_SIZE(steps); i++)
			r = steps[i](s);
		if (r == HTTP_STEP_CLOSED)
			return -1;
		if (r != HTTP_STEP_AGAIN) {
			stream_update(s);
			return 0;
		}
	}
	/* Many pipelined requests: let the others run too, and come back in
	 * this loop iteration (no socket event would). */
	stream_update(s);
	ev_feed_event(global.loop, &s->cli.io, EV_READ);
	return 0;
}

static int http_fail(struct stream *s, enum strm_err t0, enum strm_fin t1)
{
	struct http_txn *txn = s->txn;

	if (!txn || txn->res_st != HTTP_MSG_IDLE || (txn->flags & TX_F_LOCAL) || txn->res_bytes)
		return -1;
	txn->flags |= TX_F_BE_SET;
	if (t0 == SE_CLI_ABORT || t0 == SE_CLI_TO) {
		if (txn->req_st == HTTP_MSG_IDLE || txn->req_st == HTTP_MSG_BODY) {
			http_reply(s, 408, NULL, NULL, t0, txn->req_st == HTTP_MSG_IDLE ? SF_REQ : SF_DATA);
			return 0;
		}
		return -1;
	}
	if (t1 == SF_DATA && s->ss.st == SS_EST)
		t1 = SF_HDRS;   /* no response yet: waiting for its head */
	/* retry-on: a timeout, or a server that failed before answering */
	if (t1 == SF_HDRS && s->ss.st == SS_EST &&
	    http_srv_failed(s, t0 == SE_SRV_TO ? PR_RE_TIMEOUT :
			    s->res.buf && s->res.buf->data ? PR_RE_JUNK : PR_RE_EMPTY))
		return 0;
	chan_release(&s->res);
	s->res.flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
	if (t0 == SE_SRV_TO && t1 == SF_HDRS)
		http_count_resp_failed(s, 1);
	else if (t0 == SE_SRV_ABORT && t1 == SF_HDRS)
		stk_http_fail(s);   /* the server left before the head */
	http_reply(s, t1 == SF_CONN || t1 == SF_QUEUE ? 503 : t0 == SE_SRV_TO ? 504 : 502, NULL, NULL,
		   t0, t1);
	stream_update(s);
	return 0;
}

static void http_stream_release(struct stream *s)
{
	struct http_txn *txn = s->txn;

	if (txn)
		http_count_lat(s);
	if (txn && !(txn->flags & TX_F_LOGGED))
		http_log(s);
	if (s->ss.st == SS_KEPT)
		http_pool_kept(s);
	if (txn) {
		http_txn_clear(s, txn);
		pool_free(http_ha.txn_pool, txn);
		s->txn = NULL;
	}
}

/* The HTTP/1 protocol's own timers (stream_proto.deadline's kind). */
enum http_timer {
	HTTP_T_REQUEST,     /* timeout http-request: the request head */
	HTTP_T_KEEPALIVE,   /* timeout http-keep-alive: idle between requests */
	HTTP_T_TARPIT,      /* the end of a tarpit */
};

/* Deadline of the HTTP-specific waits (http-request, http-keep-alive,
 * tarpit), 0 if none applies; <which> is set to an enum http_timer. */
static ev_tstamp http_deadline(const struct stream *s, int *which)
{
	const struct http_txn *txn = s->txn;
	uint32_t t;
	ev_tstamp base;

	if (txn && (txn->flags & TX_F_TARPIT)) {
		*which = HTTP_T_TARPIT;
		return txn->t_tarpit;
	}
	if (!http_srv_idle(s) || (txn && (txn->req_st != HTTP_MSG_IDLE || (txn->flags & TX_F_LOCAL))))
		return 0;
	if (s->nreq && !txn) {
		/* idle between requests */
		t = s->fe->timeout.http_keep_alive ? s->fe->timeout.http_keep_alive :
		    s->fe->timeout.http_request ? s->fe->timeout.http_request : s->fe->timeout.client;
		*which = HTTP_T_KEEPALIVE;
		base = s->t_idle;
	} else {
		t = s->fe->timeout.http_request ? s->fe->timeout.http_request : s->fe->timeout.client;
		*which = HTTP_T_REQUEST;
		base = s->nreq && txn ? txn->t_req : s->t_accept;
	}
	return t ? base + tick_to_ev(t) : 0;
}

/* One of those deadlines expired. */
static void http_timeout(struct stream *s, int which)
{
	struct http_txn *txn = s->txn;

	if (which == HTTP_T_KEEPALIVE || (!txn && (http_px_of(s->fe)->options & HTTP_O_IGNORE_PROBES))) {
		/* idle too long between requests, or a probe: no word, no log */
		stream_close(s, SE_CLI_TO, SF_REQ);
		return;
	}
	if (!txn && !(txn = http_txn_new(s))) {
		stream_close(s, SE_RESOURCE, SF_REQ);
		return;
	}
	switch (which) {
	case HTTP_T_TARPIT:
		txn->flags &= ~TX_F_TARPIT;
		http_reply(s, txn->tarpit_status, txn->tarpit_reply, NULL, SE_PROXY, SF_TARPIT);
		break;
	default:
		if (!(txn->flags & TX_F_REQ_SEEN) && (http_px_of(s->fe)->options & HTTP_O_IGNORE_PROBES)) {
			txn->flags |= TX_F_LOGGED;
			stream_close(s, SE_CLI_TO, SF_REQ);
			return;
		}
		s->fe->fe_counters.failed_req++;
		http_reply(s, 408, NULL, NULL, SE_CLI_TO, SF_REQ);
		break;
	}
	http_process(s);
}

/* Idle between two requests: one was served and nothing of the next one
 * came yet. A connection that never sent its first request is not idle: its
 * request is surely on its way (http-request timeout). */
static int http_txn_idle(const struct stream *s)
{
	return s->nreq && !s->txn && http_srv_idle(s) && !(s->req.buf && s->req.buf->data);
}

/* Whether the client is waited for (its inactivity timeout runs). */
static int http_cli_waiting(const struct stream *s, int cev)
{
	const struct http_txn *txn = s->txn;

	/* (CO_F_SSL_EARLY: the end of its TLS handshake is awaited, as by
	 * wait-for-handshake) */
	return (cev & EV_WRITE) || (txn && (txn->req_st == HTTP_MSG_BODY ||
					     txn->req_st == HTTP_MSG_TUNNEL)) ||
	       unlikely(s->cli.flags & CO_F_SSL_EARLY);
}

static int http_srv_waiting(const struct stream *s)
{
	return s->txn && s->txn->res_st != HTTP_MSG_DONE && !(s->txn->flags & TX_F_LOCAL);
}

/* ---- the HTTP/1 stream protocol ---- */

/* The client is known: a request comes first, the server is chosen for it. */
static int http_stream_start(struct stream *s)
{
	s->state = ST_HTTP;
	if (unlikely((s->li->bc->flags & LI_F_PROTO_H2) || (s->tcp_flags & STRM_F_PROTO_H2))
#ifdef USE_OPENSSL
	    || unlikely(s->cli.ssl && ssl_sock_alpn_is(&s->cli, "h2"))
#endif
	   ) {
		if (!(s->tcp_flags & STRM_F_MUX))
			return http_to_h2(s);
	}
	return http_process(s);
}

static int http_tunnel(const struct stream *s)
{
	return s->txn && s->txn->req_st == HTTP_MSG_TUNNEL;
}

static void http_stream_count_bytes(struct stream *s, int is_req, uint64_t in, uint64_t out)
{
	if (s->txn)
		http_count_bytes(s, is_req, in, out);
}

static const struct stream_proto h1_proto = {
	.name        = "http/1",
	.init        = http_stream_init,
	.start       = http_stream_start,
	.process     = http_process,
	.deadline    = http_deadline,
	.timeout     = http_timeout,
	.fail        = http_fail,
	.srv_ready   = http_srv_ready,
	.redirect    = http_srv_redirect,
	.release     = http_stream_release,
	.idle        = http_txn_idle,
	.cli_waiting = http_cli_waiting,
	.srv_waiting = http_srv_waiting,
	.tunnel      = http_tunnel,
	.count_bytes = http_stream_count_bytes,
};

SLUICE_INIT(http_stream_proto_register)
{
	stream_proto_register(PR_MODE_HTTP, &h1_proto);
	cfg_register_postparse(http_scratch_init, 5);
}
