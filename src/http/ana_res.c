/* mode http: the response head (ana_int.h): waited for, parsed in place,
 * the response rules of the backend and the frontend run on an editable
 * view, stored answers (the cache) sent, the head written out once. */

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sluice/buf.h>
#include <sluice/cache.h>
#include <sluice/comp.h>
#include <sluice/errors.h>
#include <sluice/h1_trace.h>
#include <sluice/http_retry.h>
#include <sluice/ticks.h>
#include <sluice/persist.h>
#include <sluice/stktable.h>
#include <sluice/srv_observe.h>
#include <sluice/str.h>

#include "ana_int.h"

void http_res_failed(struct stream *s, enum strm_err t0, int fail)
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
 * http_ha.out) and body <body> (<blen> bytes, in the cache's store) in one
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
	if (nl + blen <= HTTP_STORED_COPY_MAX && nl + blen <= http_ha.size) {
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
		txn->res.hdrs = http_ha.hdrs;
		txn->res.maxhdr = HTTP_MAXFIELDS;
		memcpy(http_ha.hdrs, parsed->hdrs, (size_t)parsed->nhdrs * sizeof(*parsed->hdrs));
	} else {
		h1_msg_init(&txn->res, http_ha.hdrs, HTTP_MAXFIELDS, 1, txn->meth);
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
	http_head_init(&h, head, &txn->res, http_ha.fields, http_ha.maxf, http_ha.arena, http_ha.size);
	txn->res_head = &h;
	/* (no action waits here: the head lives in the cache's store) */
	if (http_res_rules(s, &h, (int)hlen, NULL, 0)) {
		txn->res_head = NULL;
		return 1;   /* a rule replaced it */
	}
	http_log_snapshot(s, 1);
	txn->res_head = NULL;
	if (http_res_conn_hdr(s, &h) == -1 || (nl = http_head_len(&h)) > http_ha.size) {
		http_reply(s, 500, NULL, NULL, SE_RESOURCE, SF_HDRS);
		return 1;
	}
	chan_release(&s->res);
	s->res.reserve = 0;
	http_head_write(&h, http_ha.out);
	http_case_adjust(s->fe, HTTP_O_CASE_CLI, http_ha.out, nl);
	/* at once from the store; what the socket did not take is copied */
	sent = http_send_stored(s, http_ha.out, nl, body, blen);
	rest = nl + blen - sent;
	if (rest <= buf_size() && (!rest || (s->res.buf = buf_get()))) {
		/* the rest fits one buffer (or nothing is left) */
		struct buf *b = s->res.buf;

		if (b) {
			size_t hrest = sent < nl ? nl - sent : 0;

			b->head = 0;
			memcpy(b->area, http_ha.out + nl - hrest, hrest);
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
	if ((sent < nl && dstr_add(d, http_ha.out + sent, nl - sent) == -1) ||
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
	http_head_init(&h, b->area + b->head, m, http_ha.fields, http_ha.maxf, http_ha.arena, http_ha.size);
	http_capture_head(s, &h, 1);
	txn->res_head = &h;
	stk_stick_store(s, 1);
	comp_res_head(s, &h);
	return http_res_decide(s, &h, hlen, NULL);
}

/* The response rules of <s> waited (an action, Lua) and the stream was
 * woken: they go on from where they stopped, on the head set aside.
 * Returns 0. */
int http_res_resume(struct stream *s)
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

int http_wait_res(struct stream *s)
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
		txn->res.hdrs = http_ha.hdrs;
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
