/* mode http analysers (http_ana.h): request and response heads parsed in
 * place, rules applied to an editable view, the head written out once (or
 * left untouched when nothing changed), bodies granted to the channels by
 * their framing so that they stream through (spliced when allowed), one
 * exchange at a time with keep-alive and server connection reuse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <sluice/acl_px.h>
#include <sluice/addr.h>
#include <sluice/backend.h>
#include <sluice/buf.h>
#include <sluice/cache.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/comp.h>
#include <sluice/errors.h>
#include <sluice/fcgi_app.h>
#include <sluice/global.h>
#include <sluice/h1_trace.h>
#include <sluice/h2.h>
#include <sluice/hdr_case.h>
#include <sluice/http_ana.h>
#include <sluice/http_retry.h>
#include <sluice/ticks.h>
#include <sluice/vars.h>
#include <sluice/http_reply.h>
#include <sluice/http_service.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/persist.h>
#include <sluice/stktable.h>
#include <sluice/pipe.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/srv_observe.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/tcp_rules.h>

#include "ana_int.h"

static int http_process(struct stream *s);
static int http_fail(struct stream *s, enum strm_err t0, enum strm_fin t1);

#define HTTP_EXTRA_FIELDS 32      /* room for fields added by rules */
/* tune.http.maxhdr counts the start line too, as in HAProxy */
#define HTTP_MAXFIELDS    (global.maxhdr > 1 ? global.maxhdr - 1 : 1)

/* Scratch space for the head being analysed. The loop is single-threaded
 * and a head is parsed, rewritten and written out in one call, so one set
 * serves every stream. */
static struct {
	struct pool       *txn_pool;
	struct h1_hdr     *hdrs;
	struct http_field *fields;
	int                maxf;
	char              *arena;
	char              *out;
	uint32_t           size;
	/* the head of an answer made by sluice (http-request return, error
	 * pages): apart from the request head's, which its formats read */
	struct http_field *rfields;
	char              *rarena;
} ha;

/* Post-parse: the scratch space sized by the configuration (tune.bufsize,
 * tune.http.maxhdr), made again when a new configuration changed them. */
static int http_scratch_init(void)
{
	if (!ha.txn_pool)
		ha.txn_pool = pool_create("http_txn", sizeof(struct http_txn));
	if (ha.hdrs && ha.maxf == global.maxhdr + HTTP_EXTRA_FIELDS && ha.size == global.bufsize)
		return 0;
	free(ha.hdrs);
	free(ha.fields);
	free(ha.arena);
	free(ha.out);
	free(ha.rfields);
	free(ha.rarena);
	ha.hdrs = xcalloc((size_t)global.maxhdr, sizeof(*ha.hdrs));
	ha.maxf = global.maxhdr + HTTP_EXTRA_FIELDS;
	ha.fields = xcalloc((size_t)ha.maxf, sizeof(*ha.fields));
	ha.size = global.bufsize;
	ha.arena = xcalloc(1, ha.size);
	ha.out = xcalloc(1, ha.size);
	ha.rfields = xcalloc((size_t)ha.maxf, sizeof(*ha.rfields));
	ha.rarena = xcalloc(1, ha.size);
	return 0;
}

/* ---- rules that wait ---- */

/* Where the rules of a transaction stopped when an action waited (Lua):
 * which rule set, the rule, and the head they run on. The head view
 * points into the shared analysis areas (ha.fields, ha.arena) and its
 * message's buffer, which is left alone meanwhile: what the areas held
 * (the view's fields, the parser's, the arena) is set aside here and put
 * back, at the same addresses, when the rules go on. Made only when an
 * action waits. */
enum http_yld_phase { HTTP_Y_REQ_FE, HTTP_Y_REQ_BE, HTTP_Y_RES_BE, HTTP_Y_RES_FE };

struct http_yield {
	enum http_yld_phase   phase;
	struct http_rules_pos pos;
	int                   hlen;      /* the head's length in its buffer */
	struct http_head      h;
	int                   nhdrs;     /* fields of the parser (ha.hdrs) */
	size_t                size;      /* bytes of data[] */
	char                  data[];    /* h.nf fields, nhdrs h1_hdr, the arena */
};

/* Sets aside head <h> (<hlen> bytes, parsed into <m>) of stream <s>'s
 * transaction, whose rules stopped at <pos> of <phase>. Returns 0, or -1
 * when memory is exhausted. */
static int http_yield_save(struct stream *s, enum http_yld_phase phase, const struct http_head *h,
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

/* Puts the head set aside back into the analysis areas: <h> is the view
 * again, with what the parser found. */
static void http_yield_restore(const struct http_yield *y, struct http_head *h)
{
	size_t nf = (size_t)y->h.nf * sizeof(*y->h.f), nh = (size_t)y->nhdrs * sizeof(*ha.hdrs);

	*h = y->h;
	BUG_ON(h->f != ha.fields || h->arena != ha.arena, "a head set aside outside the areas");
	memcpy(ha.fields, y->data, nf);
	memcpy(ha.hdrs, y->data + nf, nh);
	memcpy(ha.arena, y->data + nf + nh, y->h.arena_used);
}

static void http_yield_drop(struct http_txn *txn)
{
	free(txn->yld);
	txn->yld = NULL;
}

static enum http_conn_mode http_mode(const struct stream *s)
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
		pool_free(ha.txn_pool, s->txn);
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

/* Prepares the request (<res> 0) or response parser <m> of <s>, relaxed by
 * option accept-invalid-http-request (frontend) or -response (backend). */
static void http_msg_init(struct stream *s, struct h1_msg *m, int res, enum h1_meth meth)
{
	h1_msg_init(m, ha.hdrs, HTTP_MAXFIELDS, res, meth);
	if (http_px_of(res ? s->be : s->fe)->options & (res ? HTTP_O_ACC_INV_RES : HTTP_O_ACC_INV_REQ))
		m->flags |= H1_F_RELAX;
}

struct http_txn *http_txn_new(struct stream *s)
{
	struct http_txn *txn = pool_alloc(ha.txn_pool);

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
	BUG_ON(!ha.hdrs, "HTTP stream before the configuration's post-parse");
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

/* option h1-case-adjust-bogus-client (<opt> HTTP_O_CASE_CLI, of the
 * frontend) or -server (HTTP_O_CASE_SRV, of the backend) of <px>: the head
 * of <len> bytes at <p>, as it leaves, gets the configured spellings of
 * its field names. One flag test per message when unused. */
static inline void http_case_adjust(const struct proxy *px, uint64_t opt, char *p, size_t len)
{
	if (unlikely(http_px_of(px)->options & opt))
		hdr_case_adjust(p, len);
}

/* Replaces the <old_len> head bytes at the start of <ch>'s buffer by the
 * wire form of <h>. Returns the new head length, or -1 when it does not fit
 * (tune.maxrewrite exceeded). */
static long http_head_replace(struct channel *ch, const struct http_head *h, uint32_t old_len)
{
	struct buf *b = ch->buf;
	size_t nl = http_head_len(h), rest = b->data - old_len;

	if (nl + rest > buf_size() || nl > ha.size)
		return -1;
	/* Write into scratch first: the view points into the buffer. */
	http_head_write(h, ha.out);
	memmove(b->area + nl, b->area + b->head + old_len, rest);
	memcpy(b->area, ha.out, nl);
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
	h->f = ha.rfields;
	h->maxf = ha.maxf;
	h->arena = ha.rarena;
	h->arena_size = ha.size;
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

		if ((size_t)loc.len + ck.len <= ha.size) {
			memcpy(ha.out, loc.p, loc.len);
			loc.p = ha.out;
			if (ck.p) {
				memcpy(ha.out + loc.len, ck.p, ck.len);
				ck.p = ha.out + loc.len;
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
static void http_svc_start(struct stream *s, struct dstr *d)
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
static int http_serve(struct stream *s, const struct http_service *svc, struct proxy *px,
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

/* ---- requests ---- */

/* Makes <be> (NULL: the frontend's default backend) the backend of the
 * current request, moving the session counts. */
static int http_conn_close_wanted(unsigned flags)
{
	return (flags & H1_F_CONN_CLOSE) || (!(flags & H1_F_VER_11) && !(flags & H1_F_CONN_KA));
}

static void http_req_error(struct stream *s, int status, enum strm_err t0);

/* Applies a rule set's verdict. Returns 1 when it produced a reply (or a
 * tarpit, or ended the exchange), 0 to go on. */
static int http_req_verdict(struct stream *s, enum http_act_ret r, const struct http_act_out *o,
                            struct proxy *px)
{
	struct http_txn *txn = s->txn;

	switch (r) {
	case HTTP_ACT_DENY:
		s->fe->fe_counters.denied_req++;
		if (px != s->fe)
			px->be_counters.denied_req++;
		s->li->counters.denied_req++;
		txn->flags |= TX_F_DENIED;
		stk_http_err(s);
		http_reply(s, o->status ? o->status : 403, o->reply, NULL, SE_PROXY, SF_REQ);
		return 1;
	case HTTP_ACT_TARPIT:
		http_log_snapshot(s, 0);
		s->fe->fe_counters.denied_req++;
		txn->flags |= TX_F_TARPIT | TX_F_DENIED;
		stk_http_err(s);
		txn->tarpit_status = o->status ? o->status : 500;
		txn->tarpit_reply = o->reply;
		txn->t_tarpit = tick_ev_in(s->fe->timeout.tarpit ? s->fe->timeout.tarpit
							   : s->be->timeout.connect);
		return 1;
	case HTTP_ACT_REPLY:
		if (o->service) {
			http_serve(s, o->service, px, s->txn->req_head);
			return 1;
		}
		s->fe->fe_counters.intercepted++;
		http_reply(s, o->status ? o->status : 200, o->reply,
			   o->location.p || o->www_auth.p ? o : NULL, SE_LOCAL, SF_REQ);
		return 1;
	case HTTP_ACT_ERR:
		s->fe->fe_counters.failed_rewrites++;
		http_reply(s, 500, NULL, NULL, SE_PROXY, SF_REQ);
		return 1;
	case HTTP_ACT_INTERNAL:
		s->fe->fe_counters.internal_errors++;
		if (px != s->fe)
			px->be_counters.internal_errors++;
		http_reply(s, 500, NULL, NULL, SE_INTERNAL, SF_REQ);
		return 1;
	case HTTP_ACT_INVALID:
		http_req_error(s, 400, SE_PROXY);
		return 1;
	case HTTP_ACT_TIMEOUT:
		s->fe->fe_counters.failed_req++;
		http_reply(s, 408, NULL, NULL, SE_CLI_TO, SF_DATA);
		return 1;
	case HTTP_ACT_ABORT:
		/* ended by an action without a reply: the client is closed */
		http_log_snapshot(s, 0);
		http_srv_abort(s);
		s->term_err = s->term_err ? s->term_err : SE_LOCAL;   /* reject: PR */
		s->term_fin = s->term_fin ? s->term_fin : SF_REQ;
		txn->flags |= TX_F_LOCAL | TX_F_CLI_CLOSE;
		txn->res_st = HTTP_MSG_DONE;
		return 1;
	default:
		return 0;
	}
}

/* Runs the request rules of <px>: http-request, then redirect, then the
 * services its settings select (stats uri...); the http-request rules from
 * where <pos> says a suspended run stopped. Returns 1 when the request
 * was answered here, 2 when an action waits (<pos> records it), else 0. */
static int http_req_rules(struct stream *s, struct proxy *px, struct http_head *h,
                          struct http_rules_pos *pos)
{
	struct http_act_out out;
	enum http_act_ret r;
	const struct http_service *svc;

	if (px->http_rules) {
		memset(&out, 0, sizeof(out));
		r = http_rules_exec_at(&px->http_rules[HTTP_RS_REQ], s, h, &out, pos);
		if (r == HTTP_ACT_YIELD)
			return 2;
		if (http_req_verdict(s, r, &out, px))
			return 1;
		memset(&out, 0, sizeof(out));
		r = http_redirect_exec(px, s, h, &out);
		if (http_req_verdict(s, r, &out, px))
			return 1;
	}
	if (unlikely(http_px_of(px)->hdr_names) && http_hdr_names_apply(s, px, h))
		return 1;   /* option http-restrict-req-hdr-names reject */
	svc = http_service_match(px, h);
	return svc ? (http_serve(s, svc, px, h), 1) : 0;
}

static void http_req_error(struct stream *s, int status, enum strm_err t0)
{
	/* 414 and 431 have no page of their own in HAProxy: a too large
	 * request gets its 400 */
	if (!http_error_known(status))
		status = 400;
	s->fe->fe_counters.failed_req++;
	s->li->counters.failed_req++;
	stk_http_err(s);
	if (t0 == SE_PROXY)
		errors_capture(s, 1);   /* "show errors" */
	http_reply(s, status, NULL, NULL, t0, SF_REQ);
}

/* A complete request head of <hlen> bytes is at the start of the request
 * buffer: rules, rewrite, framing, server. Returns 0 or -1 (closed). */
static int http_process_req_rules(struct stream *s, struct http_head *hp, int hlen);

static int http_process_req_head(struct stream *s, int hlen)
{
	struct http_txn *txn = s->txn;
	struct buf *b = s->req.buf;
	char *base = b->area + b->head;
	const struct h1_msg *m = &txn->req;
	const unsigned mf = m->flags;
	struct http_head h;
	uint32_t sec = tick_sec();
	uint32_t rate;
	int ret;

	txn->t_head = tick_ev_now();
	if (s->nreq++)
		s->uniq_id = stream_next_id();
	stk_http_req(s);
	txn->meth = m->meth_id;
	txn->req_ver11 = !!(mf & H1_F_VER_11);
	s->fe->fe_counters.http_req++;
	rate = freq_add(&s->fe->fe_counters.req_rate, sec);
	if (rate > s->fe->fe_counters.max_req_rate)
		s->fe->fe_counters.max_req_rate = rate;
	if (s->fe->logformat) {
		/* the request line, for %r */
		uint32_t l = m->ver.off + m->ver.len - m->skip;

		txn->reqline = http_line_dup(base + m->skip, l, global.logurilen ?
					     (size_t)global.logurilen : HTTP_LINE_MAX - 1);
		txn->reqline_len = txn->reqline ? (uint32_t)strlen(txn->reqline) : 0;
		/* an HTTP/2 stream logs the version its client spoke */
		if ((s->tcp_flags & STRM_F_MUX) && txn->reqline_len == l && l > 8)
			memcpy(txn->reqline + l - 8, "HTTP/2.0", 8);
	}
	http_head_init(&h, base, m, ha.fields, ha.maxf, ha.arena, ha.size);
	/* An HTTP/1.0 absolute-form request without Host: the target's
	 * authority becomes its Host (RFC 9112 3.2.2), so that rules reading
	 * Host and the server reading the target see the same host (h1.c
	 * refuses a Host that differs from it). */
	if (m->target == H1_T_ABSOLUTE && !(mf & H1_F_HOST) &&
	    http_head_add(&h, "host", 4, base + m->authority.off, m->authority.len) == -1) {
		s->fe->fe_counters.failed_rewrites++;
		b->head += (uint32_t)hlen;
		b->data -= (uint32_t)hlen;
		return http_reply(s, 500, NULL, NULL, SE_PROXY, SF_REQ);
	}
	txn->req_head = &h;
	http_capture_head(s, &h, 0);
	if (tcp_rules_has(s->fe, TCP_RS_REQ)) {
		/* tcp-request content rules: once per request, on its whole head */
		int pos = 0;

		if (tcp_rules_exec(s->fe, TCP_RS_REQ, s, &pos, 0) != TCP_V_ACCEPT) {
			txn->req_head = NULL;
			s->fe->fe_counters.denied_req++;
			s->li->counters.denied_req++;
			stream_close(s, SE_PROXY, SF_REQ);
			return -1;
		}
	}
	ret = http_process_req_rules(s, &h, hlen);
	if (ret == 0)
		txn->req_head = NULL;   /* (-1: the transaction is gone with the stream) */
	return ret;
}

/* The rest of http_process_req_head(), with the head view <h> published
 * for sample fetches. */
static int http_req_decide(struct stream *s, struct http_head *h, int hlen,
                           const struct http_yield *y);

static int http_process_req_rules(struct stream *s, struct http_head *h, int hlen)
{
	struct http_txn *txn = s->txn;
	struct buf *b = s->req.buf;
	const struct h1_msg *m = &txn->req;
	const struct http_px *fh = http_px_of(s->fe);
	const unsigned mf = unlikely(fh->options & HTTP_O_USE_PXHDR) ? http_pxconn_flags(s, m, h) : m->flags;
	enum http_conn_mode mode = http_mode(s);

	if (http_px_of(s->fe)->conn_mode == HTTP_CLO || http_conn_close_wanted(mf) ||
	    (mf & H1_F_CLEN_DROPPED) ||
	    (global.flags & GLB_F_STOPPING))
		txn->flags |= TX_F_CLI_CLOSE;
	if (mode != HTTP_KAL || (mf & H1_F_CLEN_DROPPED))
		txn->flags |= TX_F_SRV_CLOSE;
	if (txn->meth == H1_M_CONNECT)
		txn->flags |= TX_F_CONNECT;

	/* the request is consumed from the buffer when answered here */
	txn->req_st = HTTP_MSG_DONE;
	if (fh->monitor_uri && h->sl[HTTP_SL_URI].len == strlen(fh->monitor_uri) &&
	    memcmp(h->sl[HTTP_SL_URI].p, fh->monitor_uri, h->sl[HTTP_SL_URI].len) == 0) {
		s->fe->fe_counters.intercepted++;
		b->head += (uint32_t)hlen;
		b->data -= (uint32_t)hlen;
		txn->req_st = (mf & H1_F_NO_BODY) || ((mf & H1_F_CLEN) && !m->clen) ?
			      HTTP_MSG_DONE : HTTP_MSG_BODY;
		txn->flags |= TX_F_LOGGED;   /* monitor requests are not logged */
		return http_reply(s, unlikely(fh->n_monitor_fail) ? http_monitor_status(s, fh) : 200,
				  NULL, NULL, SE_LOCAL, SF_REQ);
	}
	return http_req_decide(s, h, hlen, NULL);
}

/* Sets the request rules of <s> aside while an action waits (Lua); they go
 * on from http_req_resume(). Returns 0, or -1 when the stream was closed
 * (no memory to set them aside). */
static int http_req_wait(struct stream *s, enum http_yld_phase phase, struct http_head *h,
                         int hlen, const struct http_rules_pos *pos)
{
	if (http_yield_save(s, phase, h, hlen, pos, &s->txn->req) == -1) {
		stream_close(s, SE_RESOURCE, SF_REQ);
		return -1;
	}
	return 0;
}

/* From the frontend's request rules (or from where a suspended run of them
 * or of the backend's stopped, <y>) to the request leaving for a server:
 * the rest of http_process_req_rules(). Returns 0 or -1 (closed). */
static int http_req_decide(struct stream *s, struct http_head *h, int hlen,
                           const struct http_yield *y)
{
	struct http_txn *txn = s->txn;
	struct buf *b = s->req.buf;
	const struct h1_msg *m = &txn->req;
	const unsigned mf = m->flags;
	const struct http_px *fh = http_px_of(s->fe);
	struct http_rules_pos pos = { { NULL, NULL }, 0, 0 };
	enum http_yld_phase phase = y ? y->phase : HTTP_Y_REQ_FE;
	long nl = hlen;
	int answered = 0;

	if (y)
		pos = y->pos;
	if (phase == HTTP_Y_REQ_FE) {
		answered = http_req_rules(s, s->fe, h, &pos);
		if (answered == 2)
			return http_req_wait(s, HTTP_Y_REQ_FE, h, hlen, &pos);
		if (!answered) {
			/* the frontend let it through: its backend's rules come next */
			stream_set_backend(s, use_backend_select(s->fe, s));
			txn->flags |= TX_F_BE_SET;
			/* switch-mode http: no mode tcp server takes it (HAProxy neither) */
			if (unlikely(s->tcp_flags & STRM_F_HTTP_SWITCH) && s->be->mode != PR_MODE_HTTP) {
				http_reply(s, 503, NULL, NULL, SE_PROXY, SF_REQ);
				answered = 1;
			}
		}
		pos.n = 0;
	}
	if (!answered && s->be != s->fe) {
		answered = http_req_rules(s, s->be, h, &pos);
		if (answered == 2)
			return http_req_wait(s, HTTP_Y_REQ_BE, h, hlen, &pos);
	}
	if (unlikely(y))
		http_yield_drop(txn);   /* (<y> is not read any more) */
	if (!answered)
		answered = cache_req_answer(s);
	if (!answered)
		http_log_snapshot(s, 0);   /* an answer made here took it already */
	if (answered) {
		/* answered here (or tarpitted): the head is consumed, and a
		 * Content-Length body already received with it too, so that the
		 * connection can carry the next request */
		size_t body;

		b->head += (uint32_t)hlen;
		b->data -= (uint32_t)hlen;
		if (txn->applet) {
			/* a service answering over time reads the body itself */
			if (!(mf & H1_F_NO_BODY) && !((mf & H1_F_CLEN) && !m->clen))
				txn->req_st = HTTP_MSG_BODY;
		} else if (http_req_body_buffered(s, &body)) {
			b->head += (uint32_t)body;
			b->data -= (uint32_t)body;
		} else if (!(mf & H1_F_NO_BODY) && !((mf & H1_F_CLEN) && !m->clen)) {
			txn->req_st = HTTP_MSG_BODY;
		}
		if (!b->data) {
			buf_put(b);
			s->req.buf = NULL;
		}
		return 0;
	}
	if (unlikely(s->be->fcgi_app) && fcgi_req_prepare(s, h) == -1) {
		/* a path the FastCGI application's path-info cannot take */
		b->head += (uint32_t)hlen;
		b->data -= (uint32_t)hlen;
		s->fe->fe_counters.failed_req++;
		s->li->counters.failed_req++;
		return http_reply(s, 400, NULL, NULL, SE_PROXY, SF_REQ);
	}
	if (http_unique_id(s) && fh->uniqid_hdr) {
		if (http_head_add(h, fh->uniqid_hdr, strlen(fh->uniqid_hdr), txn->uniq_id,
				  strlen(txn->uniq_id)))
			goto rewrite_failed;
	}
	comp_req_head(s, h);
	if (http_add_fwd_headers(s, h) == -1 || http_req_server_prep(s, h) == -1 ||
	    http_req_conn_hdr(s, h, mf) == -1)
		goto rewrite_failed;
	if (txn->flags & TX_F_SENT_100)
		http_head_del(h, "expect", 6);   /* answered already, the body is here */
	if (mf & H1_F_CLEN_DROPPED)
		http_head_del(h, "content-length", 14);
	else if (http_head_normalize(h, m, (uint32_t)hlen) == -1)
		goto rewrite_failed;
	if (h->flags & HTTP_HEAD_F_CHANGED) {
		nl = http_head_replace(&s->req, h, (uint32_t)hlen);
		if (nl < 0)
			goto rewrite_failed;
	}
	http_case_adjust(s->be, HTTP_O_CASE_SRV, b->area + b->head, (size_t)nl);
	if (http_grant_body(&s->req, m, nl, &txn->req_st, &txn->req_ck, &txn->req_chunked) == -1) {
		/* chunks that came with the head are malformed: refused
		 * before any byte of the request leaves */
		http_req_error(s, 400, SE_PROXY);
		return 0;
	}
	if (mf & H1_F_EXPECT_100) {
		if (!(txn->flags & TX_F_SENT_100))
			txn->flags |= TX_F_WAIT_100;
		return http_connect(s);
	}
	if (s->be->retry_on & PR_RE_L7)
		http_retry_save(s);
	if (http_connect(s) == -1)
		return -1;
	/* The server may have closed a reused connection while it was idle:
	 * the request is kept to be sent again on a new one. */
	if ((txn->flags & TX_F_REUSED) && !txn->retry_buf)
		http_retry_save(s);
	return 0;

rewrite_failed:
	s->fe->fe_counters.failed_rewrites++;
	b->head += (uint32_t)hlen;
	b->data -= (uint32_t)hlen;
	return http_reply(s, 500, NULL, NULL, SE_PROXY, SF_REQ);
}

/* The request rules of <s> waited (an action, Lua) and the stream was
 * woken: they go on from where they stopped, on the head set aside.
 * Returns 0 or -1 (closed). */
static int http_req_resume(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct http_yield *y = txn->yld;
	struct http_head h;
	int ret;

	http_yield_restore(y, &h);
	txn->req_head = &h;
	ret = http_req_decide(s, &h, y->hlen, y);
	/* the stream may be gone; when it waits again, its set-aside head was
	 * replaced in place */
	if (ret == 0)
		txn->req_head = NULL;
	return ret;
}

/* Waits for a complete request head. Returns 0 or -1 (closed). */
static int http_wait_req(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct buf *b = s->req.buf;
	int n;

	if (!b || !b->data) {
		if (!(s->req.flags & CH_F_SHUTR))
			return 0;
		/* The client left between requests: a normal end. One that
		 * never sent anything is logged as a bad request (HAProxy). */
		if (s->nreq || (http_px_of(s->fe)->options & HTTP_O_IGNORE_PROBES) ||
		    (s->fe->options & PR_O_DONTLOGNULL))
			txn->flags |= TX_F_LOGGED;
		txn->status = 400;
		stream_close(s, SE_CLI_ABORT, SF_REQ);
		return -1;
	}
	if (!(txn->flags & TX_F_REQ_SEEN)) {
		txn->flags |= TX_F_REQ_SEEN;
		txn->t_req = tick_ev_now();
	}
	if (b->head) {
		/* A pipelined request starts mid-buffer: align it so that the
		 * whole head can be received. */
		memmove(b->area, b->area + b->head, b->data);
		b->head = 0;
	}
	txn->req.hdrs = ha.hdrs;
	/* a head already parsed (waiting for its body) is not parsed again */
	n = txn->req.head_len ? (int)txn->req.head_len :
	    h1_parse(b->area, b->data, buf_size() - global.maxrewrite, &txn->req);
	if (n > 0 && (http_px_of(s->fe)->options & HTTP_O_BUFREQ) && !http_req_body_waited(s, n)) {
		if ((txn->req.flags & (H1_F_EXPECT_100 | H1_F_VER_11)) ==
		    (H1_F_EXPECT_100 | H1_F_VER_11) && !(txn->flags & TX_F_SENT_100))
			http_send_100(s);
		return 0;   /* timeout http-request runs meanwhile */
	}
	H1_TRACE_RX(s, b->area, &txn->req, n, 1);
	if (n > 0) {
		if (unlikely(txn->req.flags & H1_F_RELAXED))
			errors_capture(s, 1);   /* let through by accept-invalid-http-request */
		return http_process_req_head(s, n);
	}
	if (n < 0) {
		http_req_error(s, txn->req.err_status, SE_PROXY);
		return 0;
	}
	if (s->req.flags & CH_F_SHUTR) {
		/* Gone in the middle of a request head. */
		http_req_error(s, 400, SE_CLI_ABORT);
		return 0;
	}
	return 0;
}

/* ---- responses ---- */

/* A response that cannot be passed on: 502. <fail>: the server's fault, an
 * HTTP failure for the tracked entries (not a failed rewrite). */
static void http_res_failed(struct stream *s, enum strm_err t0, int fail)
{
	comp_txn_end(s);
	http_count_resp_failed(s, fail);
	if (t0 == SE_PROXY)
		errors_capture(s, 0);   /* "show errors" */
	http_reply(s, 502, NULL, NULL, t0, SF_HDRS);
}

/* Sets the response rules of <s> aside while an action waits (Lua): they go
 * on from http_res_resume(). Returns 2, or 1 when they could not be set
 * aside (a 500 replaced the response). */
static int http_res_wait(struct stream *s, enum http_yld_phase phase, struct http_head *h,
                         int hlen, const struct http_rules_pos *pos)
{
	if (http_yield_save(s, phase, h, hlen, pos, &s->txn->res) == 0)
		return 2;
	s->txn->flags |= TX_F_CLI_CLOSE;
	http_reply(s, 500, NULL, NULL, SE_RESOURCE, SF_HDRS);
	return 1;
}

/* Runs the response rules: backend's http-response, then frontend's (from
 * where a suspended run of them stopped, <y>), then http-after-response.
 * With <can_wait>, an action may wait: the head of <hlen> bytes and the
 * rules are set aside. Returns 1 when a reply replaced the response, 2
 * when an action waits, else 0. */
static int http_res_rules(struct stream *s, struct http_head *h, int hlen,
                          const struct http_yield *y, int can_wait)
{
	struct http_act_out out;
	enum http_act_ret r = HTTP_ACT_CONT;
	struct http_rules_pos pos = { { NULL, NULL }, 0, 0 }, *pp = can_wait ? &pos : NULL;
	enum http_yld_phase phase = y ? y->phase : HTTP_Y_RES_BE;

	memset(&out, 0, sizeof(out));
	if (y)
		pos = y->pos;
	if (phase == HTTP_Y_RES_BE && s->be->http_rules) {
		r = http_rules_exec_at(&s->be->http_rules[HTTP_RS_RES], s, h, &out, pp);
		if (r == HTTP_ACT_YIELD)
			return http_res_wait(s, HTTP_Y_RES_BE, h, hlen, &pos);
		pos.n = 0;
	}
	if ((r == HTTP_ACT_CONT || r == HTTP_ACT_ALLOW) && s->be != s->fe && s->fe->http_rules) {
		r = http_rules_exec_at(&s->fe->http_rules[HTTP_RS_RES], s, h, &out, pp);
		if (r == HTTP_ACT_YIELD)
			return http_res_wait(s, HTTP_Y_RES_FE, h, hlen, &pos);
	}
	if (unlikely(y))
		http_yield_drop(s->txn);
	switch (r) {
	case HTTP_ACT_DENY:
	case HTTP_ACT_TARPIT:
		s->fe->fe_counters.denied_resp++;
		s->be->be_counters.denied_resp++;
		if (s->ss.target)
			s->ss.target->counters.denied_resp++;
		s->txn->flags |= TX_F_CLI_CLOSE;
		http_reply(s, 502, out.reply, NULL, SE_PROXY, SF_HDRS);
		return 1;
	case HTTP_ACT_REPLY:
		s->txn->flags |= TX_F_CLI_CLOSE;
		http_reply(s, out.status, out.reply, out.location.p ? &out : NULL, SE_LOCAL, SF_HDRS);
		return 1;
	case HTTP_ACT_ERR:
		s->fe->fe_counters.failed_rewrites++;
		s->txn->flags |= TX_F_CLI_CLOSE;
		http_reply(s, 502, NULL, NULL, SE_PROXY, SF_HDRS);
		return 1;
	case HTTP_ACT_INTERNAL:
		s->fe->fe_counters.internal_errors++;
		s->be->be_counters.internal_errors++;
		s->txn->flags |= TX_F_CLI_CLOSE;
		http_reply(s, 500, NULL, NULL, SE_INTERNAL, SF_HDRS);
		return 1;
	case HTTP_ACT_INVALID:
	case HTTP_ACT_TIMEOUT:
		http_count_resp_failed(s, 0);
		s->txn->flags |= TX_F_CLI_CLOSE;
		if (r == HTTP_ACT_TIMEOUT)
			http_reply(s, 504, NULL, NULL, SE_SRV_TO, SF_DATA);
		else
			http_reply(s, 502, NULL, NULL, SE_PROXY, SF_HDRS);
		return 1;
	case HTTP_ACT_ABORT:
		/* ended by an action without a reply: the client is closed */
		http_log_snapshot(s, 1);
		http_srv_abort(s);
		chan_release(&s->res);
		s->res.to_forward = 0;
		s->term_err = s->term_err ? s->term_err : SE_LOCAL;   /* silent-drop: PH */
		s->term_fin = s->term_fin ? s->term_fin : SF_HDRS;
		s->txn->flags |= TX_F_LOCAL | TX_F_CLI_CLOSE;
		s->txn->res_st = HTTP_MSG_DONE;
		return 1;
	default:
		break;
	}
	if (unlikely(http_px_of(s->be)->options & HTTP_O_CHECKCACHE) && http_checkcache_block(s, h))
		return 1;
	if (http_after_rules(s, h) != HTTP_ACT_ERR)
		return 0;
	s->fe->fe_counters.failed_rewrites++;   /* strict-mode: the response becomes a 500 */
	s->txn->flags |= TX_F_CLI_CLOSE;
	http_reply(s, 500, NULL, NULL, SE_PROXY, SF_HDRS);
	return 1;
}

/* A stored answer up to this size is copied after its head and sent with
 * send(): cheaper than sendmsg()'s two iovecs for small objects (the
 * kernel's msghdr and iovec handling costs more than the copy). */
#define HTTP_STORED_COPY_MAX 2048

/* Sends a stored answer straight to the client: head <hd> (<nl> bytes, in
 * ha.out) and body <body> (<blen> bytes, in the cache's store) in one
 * system call, the body not copied into a buffer (but for a small one,
 * appended to the head), when the client is a plain socket and nothing
 * else is on its way to it. Returns the bytes sent (0: none, or not
 * possible here; an error is met again, and handled, by the buffered
 * path). The bytes are counted as chan_forward() counts them. */
static size_t http_send_stored(struct stream *s, char *hd, size_t nl, const char *body,
                               size_t blen)
{
	ssize_t n;

	/* (an HTTP/2 stream's fd is its connection's: never written here) */
	if (s->cli.fd < 0 || s->cli.ssl || (s->cli.flags & CO_F_MUX) || s->res.tap ||
	    s->res.buf || s->res.pipe || (s->res.flags & CH_F_SHUTW))
		return 0;
	if (nl + blen <= HTTP_STORED_COPY_MAX && nl + blen <= ha.size) {
		memcpy(hd + nl, body, blen);
		n = send(s->cli.fd, hd, nl + blen, MSG_NOSIGNAL | MSG_DONTWAIT);
	} else {
		struct iovec iov[2] = { { hd, nl }, { (void *)body, blen } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = blen ? 2 : 1 };

		n = sendmsg(s->cli.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	if (n <= 0)
		return 0;
	global.copied_bytes += (uint64_t)n;
	s->cli.last_act = tick_ev_now();
	http_count_bytes(s, 0, 0, (uint64_t)n);
	return (size_t)n;
}

int http_answer_stored(struct stream *s, char *head, size_t hlen, const char *body, size_t blen,
                       const struct h1_msg *parsed)
{
	struct http_txn *txn = s->txn;
	struct http_head h;
	struct dstr *d;
	size_t nl, sent, rest;

	if (parsed) {
		/* the store kept the head's parse: no second pass over it */
		if (parsed->nhdrs > HTTP_MAXFIELDS)
			return 0;
		txn->res = *parsed;
		txn->res.hdrs = ha.hdrs;
		txn->res.maxhdr = HTTP_MAXFIELDS;
		memcpy(ha.hdrs, parsed->hdrs, (size_t)parsed->nhdrs * sizeof(*parsed->hdrs));
	} else {
		h1_msg_init(&txn->res, ha.hdrs, HTTP_MAXFIELDS, 1, txn->meth);
		if (h1_parse(head, hlen, hlen, &txn->res) != (int)hlen)
			return 0;   /* not a head this parser takes: the server answers */
	}
	http_log_snapshot(s, 0);
	http_srv_abort(s);
	s->term_err = SE_NONE;
	s->term_fin = SF_NONE;
	txn->flags |= TX_F_LOCAL;
	txn->t_res = tick_ev_now();
	txn->status = txn->res.status;
	http_head_init(&h, head, &txn->res, ha.fields, ha.maxf, ha.arena, ha.size);
	txn->res_head = &h;
	/* (no action waits here: the head lives in the cache's store) */
	if (http_res_rules(s, &h, (int)hlen, NULL, 0)) {
		txn->res_head = NULL;
		return 1;   /* a rule replaced it */
	}
	http_log_snapshot(s, 1);
	txn->res_head = NULL;
	if (http_res_conn_hdr(s, &h) == -1 || (nl = http_head_len(&h)) > ha.size) {
		http_reply(s, 500, NULL, NULL, SE_RESOURCE, SF_HDRS);
		return 1;
	}
	chan_release(&s->res);
	s->res.reserve = 0;
	http_head_write(&h, ha.out);
	http_case_adjust(s->fe, HTTP_O_CASE_CLI, ha.out, nl);
	/* at once from the store; what the socket did not take is copied */
	sent = http_send_stored(s, ha.out, nl, body, blen);
	rest = nl + blen - sent;
	if (rest <= buf_size() && (!rest || (s->res.buf = buf_get()))) {
		/* the rest fits one buffer (or nothing is left) */
		struct buf *b = s->res.buf;

		if (b) {
			size_t hrest = sent < nl ? nl - sent : 0;

			b->head = 0;
			memcpy(b->area, ha.out + nl - hrest, hrest);
			memcpy(b->area + hrest, body + blen - (rest - hrest), rest - hrest);
			b->data = (uint32_t)rest;
		}
		s->res.to_forward = rest;
		txn->res_st = HTTP_MSG_DONE;
		http_count_status(s, txn->status, 0);
		return 1;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		http_reply(s, 500, NULL, NULL, SE_RESOURCE, SF_HDRS);
		return 1;
	}
	if ((sent < nl && dstr_add(d, ha.out + sent, nl - sent) == -1) ||
	    dstr_add(d, body + blen - MIN(blen, rest), MIN(blen, rest)) == -1) {
		dstr_free(d);
		free(d);
		http_reply(s, 500, NULL, NULL, SE_RESOURCE, SF_HDRS);
		return 1;
	}
	http_svc_start(s, d);
	return 1;
}

static int http_res_decide(struct stream *s, struct http_head *hp, int hlen,
                           const struct http_yield *y);

/* A complete response head of <hlen> bytes is at the start of the response
 * buffer. Returns 0. */
static int http_process_res_head(struct stream *s, int hlen)
{
	struct http_txn *txn = s->txn;
	struct buf *b = s->res.buf;
	const struct h1_msg *m = &txn->res;
	struct http_head h;
	int status = m->status;

	if (!txn->t_res)
		txn->t_res = tick_ev_now();
	if (status < 200) {
		if (status == 101 && (txn->req.flags & H1_F_UPGRADE)) {
			http_case_adjust(s->fe, HTTP_O_CASE_CLI, b->area + b->head, (size_t)hlen);
			txn->req_st = txn->res_st = HTTP_MSG_TUNNEL;
			txn->status = status;
			http_count_status(s, status, 1);
			s->res.to_forward = s->req.to_forward = CHN_INFINITE;
			s->res.reserve = s->req.reserve = 0;
			return 0;
		}
		if (status == 101 || ++txn->n_interim > HTTP_MAX_INTERIM) {
			/* A 101 the request did not ask for would switch a
			 * connection the client still reads as HTTP (HAProxy:
			 * 502); endless interim responses would hold the
			 * stream: both are refused. */
			http_res_failed(s, SE_PROXY, 1);
			return 0;
		}
		/* An interim response (100, 103): passed on as it is, then the
		 * final one is awaited. */
		http_case_adjust(s->fe, HTTP_O_CASE_CLI, b->area + b->head, (size_t)hlen);
		if (http_grant(&s->res, (uint64_t)hlen) == -1) {
			http_res_failed(s, SE_PROXY, 1);
			return 0;
		}
		http_msg_init(s, &txn->res, 1, txn->meth);
		txn->flags &= ~TX_F_WAIT_100;
		return 0;
	}
	srv_observe(s->ss.target, srv_obs_status(status));
	if (txn->retry_buf && http_retry_head(s, status))
		return 0;   /* retry-on <status>: sent again */
	txn->status = status;
	http_head_init(&h, b->area + b->head, m, ha.fields, ha.maxf, ha.arena, ha.size);
	http_capture_head(s, &h, 1);
	txn->res_head = &h;
	stk_stick_store(s, 1);
	comp_res_head(s, &h);
	return http_res_decide(s, &h, hlen, NULL);
}

/* The response rules of <s> waited (an action, Lua) and the stream was
 * woken: they go on from where they stopped, on the head set aside.
 * Returns 0. */
static int http_res_resume(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct http_head h;

	http_yield_restore(txn->yld, &h);
	txn->res_head = &h;
	return http_res_decide(s, &h, txn->yld->hlen, txn->yld);
}

/* From the response rules (or from where a suspended run of them stopped,
 * <y>) to the response leaving for the client: the rest of
 * http_process_res_head(). Returns 0. */
static int http_res_decide(struct stream *s, struct http_head *hp, int hlen,
                           const struct http_yield *y)
{
	struct http_txn *txn = s->txn;
	const struct h1_msg *m = &txn->res;
	const unsigned mf = m->flags;
	struct http_head h = *hp;
	long nl = hlen;
	int status = txn->status, r;

	txn->res_head = &h;
	r = http_res_rules(s, &h, hlen, y, 1);   /* (<y> is not read after) */
	if (r) {
		if (r == 1)
			comp_txn_end(s);
		txn->res_head = NULL;
		return 0;
	}
	http_log_snapshot(s, 1);
	txn->res_head = NULL;
	if ((txn->flags & TX_F_CONNECT) && status >= 200 && status < 300) {
		http_count_status(s, status, 1);
		txn->req_st = txn->res_st = HTTP_MSG_TUNNEL;
		if (h.flags & HTTP_HEAD_F_CHANGED && (nl = http_head_replace(&s->res, &h, (uint32_t)hlen)) < 0)
			nl = hlen;
		http_case_adjust(s->fe, HTTP_O_CASE_CLI, s->res.buf->area + s->res.buf->head,
				 (size_t)nl);
		s->res.to_forward = s->req.to_forward = CHN_INFINITE;
		s->res.reserve = s->req.reserve = 0;
		return 0;
	}
	if (http_conn_close_wanted(mf) || (mf & (H1_F_BODY_CLOSE | H1_F_CLEN_DROPPED)))
		txn->flags |= TX_F_SRV_CLOSE;
	if (mf & (H1_F_BODY_CLOSE | H1_F_CLEN_DROPPED))
		txn->flags |= TX_F_CLI_CLOSE;
	if (mf & H1_F_BODY_CLOSE)
		txn->flags |= TX_F_RES_CLOSE_DELIM;
	if (mf & H1_F_CLEN_DROPPED)
		http_head_del(&h, "content-length", 14);
	if (persist_res(s, &h) == -1) {
		s->fe->fe_counters.failed_rewrites++;
		http_res_failed(s, SE_PROXY, 0);
		return 0;
	}
	if (http_res_conn_hdr(s, &h) == -1 ||
	    (!(mf & H1_F_CLEN_DROPPED) && http_head_normalize(&h, m, (uint32_t)hlen) == -1)) {
		http_res_failed(s, SE_PROXY, 1);
		return 0;
	}
	if (h.flags & HTTP_HEAD_F_CHANGED) {
		nl = http_head_replace(&s->res, &h, (uint32_t)hlen);
		if (nl < 0) {
			s->fe->fe_counters.failed_rewrites++;
			http_res_failed(s, SE_PROXY, 0);
			return 0;
		}
	}
	http_case_adjust(s->fe, HTTP_O_CASE_CLI, s->res.buf->area + s->res.buf->head, (size_t)nl);
	if (txn->comp ? comp_res_start(s, nl) == -1 :
	    http_grant_body(&s->res, m, nl, &txn->res_st, &txn->res_ck, &txn->res_chunked) == -1) {
		/* chunks that came with the head are malformed: nothing of
		 * the response left yet, the client gets a 502 (PH) */
		http_res_failed(s, SE_PROXY, 1);
		return 0;
	}
	if (unlikely(txn->cache))
		cache_res_begin(s, nl);
	http_count_status(s, status, 1);
	return 0;
}

static int http_wait_res(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct buf *b;
	int n;

	for (;;) {
		b = s->res.buf;
		if (!b || !b->data) {
			if (s->res.flags & CH_F_SHUTR) {
				if (http_srv_failed(s, PR_RE_EMPTY))
					return 0;
				s->be->be_counters.srv_aborts++;
				http_res_failed(s, SE_SRV_ABORT, 1);
			}
			return 0;
		}
		if (b->head && s->res.to_forward == 0) {
			memmove(b->area, b->area + b->head, b->data);
			b->head = 0;
		}
		if (s->res.to_forward)
			return 0;   /* an interim response is still leaving */
		if (!txn->res.hdrs)
			http_msg_init(s, &txn->res, 1, txn->meth);
		txn->res.hdrs = ha.hdrs;
		n = h1_parse(b->area, b->data, buf_size() - global.maxrewrite, &txn->res);
		if (n)
			H1_TRACE_RX(s, b->area, &txn->res, n, 0);
		if (n < 0 || (n == 0 && (s->res.flags & CH_F_SHUTR))) {
			if (!http_srv_failed(s, PR_RE_JUNK))
				http_res_failed(s, n < 0 ? SE_PROXY : SE_SRV_ABORT, 1);
			return 0;
		}
		if (n == 0)
			return 0;
		if (unlikely(txn->res.flags & H1_F_RELAXED))
			errors_capture(s, 0);   /* let through by accept-invalid-http-response */
		http_process_res_head(s, n);
		if (txn->res_st != HTTP_MSG_IDLE || (txn->flags & TX_F_LOCAL) || txn->yld)
			return 0;
	}
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
		pool_free(ha.txn_pool, txn);
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
