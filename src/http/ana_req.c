/* mode http: the request head (ana_int.h): waited for, parsed in place,
 * checked, the request rules of the frontend and the backend run on an
 * editable view, the server chosen, the head written out once. */

#include <string.h>

#include <sluice/acl_px.h>
#include <sluice/buf.h>
#include <sluice/cache.h>
#include <sluice/comp.h>
#include <sluice/errors.h>
#include <sluice/fcgi_app.h>
#include <sluice/h1_trace.h>
#include <sluice/http_retry.h>
#include <sluice/ticks.h>
#include <sluice/http_reply.h>
#include <sluice/http_service.h>
#include <sluice/listener.h>
#include <sluice/stktable.h>
#include <sluice/tcp_rules.h>

#include "ana_int.h"

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

void http_req_error(struct stream *s, int status, enum strm_err t0)
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
	http_head_init(&h, base, m, http_ha.fields, http_ha.maxf, http_ha.arena, http_ha.size);
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
int http_req_resume(struct stream *s)
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
int http_wait_req(struct stream *s)
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
	txn->req.hdrs = http_ha.hdrs;
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
