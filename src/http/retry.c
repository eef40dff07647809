/* "retry-on" and L7 retries (http_retry.h): the keyword, the copy of a
 * small request kept until its response head arrives, and the retry
 * itself; "http-request disable-l7-retry". */
#include <string.h>

#include <sluice/action.h>
#include <sluice/backend.h>
#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/http_retry.h>
#include <sluice/pipe.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/srv_observe.h>
#include <sluice/stream.h>

#include "ana_int.h"

static const struct {
	const char *word;
	unsigned    bits;
} retry_words[] = {
	{ "none", 0 },
	{ "conn-failure", PR_RE_CONN_FAILED },
	{ "empty-response", PR_RE_EMPTY },
	{ "junk-response", PR_RE_JUNK },
	{ "response-timeout", PR_RE_TIMEOUT },
	{ "0rtt-rejected", PR_RE_0RTT },
	{ "401", PR_RE_401 }, { "403", PR_RE_403 }, { "404", PR_RE_404 },
	{ "408", PR_RE_408 }, { "425", PR_RE_425 }, { "500", PR_RE_500 },
	{ "501", PR_RE_501 }, { "502", PR_RE_502 }, { "503", PR_RE_503 },
	{ "504", PR_RE_504 },
	{ "all-retryable-errors", PR_RE_CONN_FAILED | PR_RE_EMPTY | PR_RE_JUNK | PR_RE_TIMEOUT |
				  PR_RE_0RTT | PR_RE_500 | PR_RE_502 | PR_RE_503 | PR_RE_504 },
};

unsigned http_retry_status_bit(int status)
{
	char w[8];

	if (status < 400 || status > 599)
		return 0;
	snprintf(w, sizeof(w), "%d", status);
	for (size_t i = 0; i < ARRAY_SIZE(retry_words); i++)
		if (strcmp(retry_words[i].word, w) == 0)
			return retry_words[i].bits;
	return 0;
}

/* retry-on <condition>...: replaces the previous list; "none" only alone. */
static int kw_retry_on(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	unsigned bits = 0;

	if (argc < 1) {
		cfg_alert(ctx, "expects a list of conditions (conn-failure, empty-response, "
			  "junk-response, response-timeout, 0rtt-rejected, 401, 403, 404, 408, 425, "
			  "500, 501, 502, 503, 504, all-retryable-errors) or 'none'");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		size_t k;

		for (k = 0; k < ARRAY_SIZE(retry_words); k++)
			if (strcmp(retry_words[k].word, argv[i]) == 0)
				break;
		if (k == ARRAY_SIZE(retry_words)) {
			cfg_alert(ctx, "unknown condition '%s' (expects conn-failure, empty-response, "
				  "junk-response, response-timeout, 0rtt-rejected, 401, 403, 404, 408, "
				  "425, 500, 501, 502, 503, 504, all-retryable-errors or none)", argv[i]);
			return -1;
		}
		if (!retry_words[k].bits && argc > 1) {
			cfg_alert(ctx, "'none' may only be used alone");
			return -1;
		}
		bits |= retry_words[k].bits;
	}
	ctx->px->retry_on = bits;
	return 0;
}

/* Whether a request of method <m> may be sent twice: the idempotent
 * methods of RFC 9110 section 9.2.2. */
static int http_meth_idempotent(enum h1_meth m)
{
	return m == H1_M_GET || m == H1_M_HEAD || m == H1_M_PUT || m == H1_M_DELETE ||
	       m == H1_M_OPTIONS || m == H1_M_TRACE;
}

void http_retry_save(struct stream *s)
{
	struct http_txn *txn = s->txn;
	const struct buf *b = s->req.buf;
	uint64_t len = s->req.to_forward;

	if (!b || !http_meth_idempotent(txn->meth) ||
	    txn->req_st != HTTP_MSG_DONE || txn->req_chunked || len > b->data ||
	    (s->req.pipe && s->req.pipe->data) || (txn->flags & (TX_F_NO_L7_RETRY | TX_F_CONNECT)))
		return;
	if (!txn->retry_buf && !(txn->retry_buf = buf_get()))
		return;   /* no memory: this request is not retried */
	memcpy(txn->retry_buf->area, b->area + b->head, (size_t)len);
	txn->retry_buf->head = 0;
	txn->retry_buf->data = (uint32_t)len;
}

void http_retry_drop(struct stream *s)
{
	if (s->txn && s->txn->retry_buf) {
		buf_put(s->txn->retry_buf);
		s->txn->retry_buf = NULL;
	}
}

/* Puts the kept request back at the start of the request buffer, in place
 * of what was left of it to send; a pipelined request after it stays.
 * Returns 0, or -1 when it does not fit (or no buffer). */
static int http_retry_restore(struct stream *s)
{
	struct buf *copy = s->txn->retry_buf, *b = s->req.buf;
	uint32_t skip;

	if (!b && !(b = s->req.buf = buf_get()))
		return -1;
	skip = s->req.to_forward < b->data ? (uint32_t)s->req.to_forward : b->data;
	if ((uint64_t)copy->data + b->data - skip > buf_size())
		return -1;
	b->head += skip;
	b->data -= skip;
	memmove(b->area + copy->data, b->area + b->head, b->data);
	memcpy(b->area, copy->area, copy->data);
	b->head = 0;
	b->data += copy->data;
	s->req.to_forward = copy->data;
	s->req.flags &= ~(CH_F_SHUTW);
	return 0;
}

/* Whether condition <cond> on <s>'s exchange may be retried: as "retry-on"
 * says within "retries", or, whatever they say, once when a reused server
 * connection failed before answering: the server may have closed it while
 * idle, so the request never reached it. */
static int http_retry_allowed(const struct stream *s, unsigned cond, int *reuse_retry)
{
	const struct http_txn *txn = s->txn;

	*reuse_retry = (txn->flags & TX_F_REUSED) && !(txn->flags & TX_F_REUSE_RETRIED) &&
		       (cond & (PR_RE_EMPTY | PR_RE_CONN_FAILED));
	if (*reuse_retry)
		return 1;
	return (s->be->retry_on & cond) && s->ss.retries < s->be->retries;
}

int http_retry_try(struct stream *s, unsigned cond)
{
	struct http_txn *txn = s->txn;
	struct proxy *be = s->be;
	struct server *srv = s->ss.target;
	struct ssl_st *ssl = NULL;
	int fd, reuse_retry, reused = 0;

	if (!txn || !txn->retry_buf || txn->res_bytes || !srv ||
	    (txn->flags & (TX_F_LOCAL | TX_F_NO_L7_RETRY)) ||
	    !http_retry_allowed(s, cond, &reuse_retry) ||
	    (s->res.pipe && s->res.pipe->data) || (s->req.pipe && s->req.pipe->data))
		return 0;
	if (http_retry_restore(s) == -1)
		return 0;
	ss_conn_lost(s);
	chan_release(&s->res);
	s->res.flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
	s->res.to_forward = 0;
	memset(&txn->res, 0, sizeof(txn->res));   /* http_wait_res() starts it over */
	memset(&txn->res_ck, 0, sizeof(txn->res_ck));
	txn->res_chunked = 0;
	txn->res_st = HTTP_MSG_IDLE;
	txn->status = -1;
	txn->t_res = 0;
	txn->flags &= ~(TX_F_RES_CLOSE_DELIM | TX_F_REUSED);
	if (reuse_retry) {
		/* on a new connection: another idle one may be as stale */
		txn->flags |= TX_F_REUSE_RETRIED;
		if (!server_usable(srv))
			backend_retry_redispatch(s, 1);
		stream_connect(s);
		return 1;
	}
	s->ss.retries++;
	be->be_counters.retries++;
	srv->counters.retries++;
	backend_retry_redispatch(s, 0);
	/* (the server's name in http-send-name-header, on a redispatch) */
	if (unlikely(s->tcp_flags & STRM_F_TARGET_HOOK) && http_srv_redirect(s))
		return 1;
	/* an idle connection to the server chosen goes first, as a request
	 * after the first one of a client would take it (http-reuse) */
	if (s->ss.target && http_px_of(be)->reuse != HTTP_REUSE_NEVER &&
	    (fd = srv_idle_get(s->ss.target, 0, &ssl, &reused)) >= 0) {
		http_reuse_conn(s, fd, ssl, reused);
		stream_update(s);
		return 1;
	}
	stream_connect(s);
	return 1;
}

int http_srv_failed(struct stream *s, unsigned cond)
{
	srv_observe(s->ss.target, cond == PR_RE_TIMEOUT ? SRV_OBS_HTTP_TIMEOUT :
			       cond == PR_RE_EMPTY ? SRV_OBS_HTTP_CLOSED : SRV_OBS_HTTP_RSP);
	return http_retry_try(s, cond);
}

int http_retry_head(struct stream *s, int status)
{
	if (http_retry_try(s, http_retry_status_bit(status)))
		return 1;
	http_retry_drop(s);
	return 0;
}

/* http-request disable-l7-retry: this request is never sent twice. */
static int act_no_retry_parse(struct act_parse *p)
{
	return 0;
}

static void act_no_retry_exec(void *priv, struct stream *s, unsigned where)
{
	if (s->txn)
		s->txn->flags |= TX_F_NO_L7_RETRY;
}

static const struct act_kw retry_acts[] = {
	{ "disable-l7-retry", 0, ACT_W_HTTP_REQ, act_no_retry_parse, act_no_retry_exec, NULL, "", NULL },
};

static struct cfg_kw retry_kws[] = {
	{ "retry-on", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_retry_on,
	  .usage = "<condition> [<condition>...] | none" },
};

SLUICE_INIT(http_retry_register)
{
	cfg_register(retry_kws, ARRAY_SIZE(retry_kws));
	act_register(retry_acts, ARRAY_SIZE(retry_acts));
}
