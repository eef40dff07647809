/* mode http, the transaction's record: captured request line and headers,
 * the log-format context and the per-request log line, status counters
 * (http_ana.h, ana_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/buf.h>
#include <sluice/cache.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/px_log.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/srv_pp.h>
#include <sluice/ssl_cfg.h>
#include <sluice/stktable.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

#include "ana_int.h"

static struct pool *line_pool;   /* HTTP_LINE_MAX strings */

static ev_tstamp now(void)
{
	return tick_ev_now();
}

void http_line_free(char *p)
{
	if (p)
		pool_free(line_pool, p);
}

static size_t line_size;   /* of the blocks of line_pool */

char *http_line_dup(const char *p, size_t len, size_t max)
{
	char *d;

	if (!line_pool) {
		/* tune.http.logurilen may ask for longer request lines */
		line_size = MAX((size_t)HTTP_LINE_MAX, (size_t)global.logurilen + 1);
		line_pool = pool_create("http_line", line_size);
	}
	d = pool_alloc(line_pool);

	if (!d)
		return NULL;
	len = MIN(len, MIN(max, line_size - 1));
	memcpy(d, p, len);
	d[len] = 0;
	return d;
}

/* A table of <n> NULL string pointers, from the line pool when it fits
 * (no malloc per request in the usual case); http_line_table_free(). */
static char **http_line_table(int n)
{
	size_t sz = (size_t)n * sizeof(char *);
	char **tab = sz <= HTTP_LINE_MAX ? (char **)(void *)http_line_dup("", 0, 0) : malloc(sz);

	if (tab)
		memset(tab, 0, sz);
	return tab;
}

static void http_line_table_free(char **tab, int n)
{
	if (!tab)
		return;
	for (int i = 0; i < n; i++)
		http_line_free(tab[i]);
	if ((size_t)n * sizeof(char *) <= HTTP_LINE_MAX)
		http_line_free((char *)tab);
	else
		free(tab);
}

static char *snap_dup(const char *p, size_t len)
{
	return http_line_dup(p, len, HTTP_LINE_MAX - 1);
}

void http_log_snapshot(struct stream *s, int res)
{
	const struct lf_expr *lf = s->fe->logformat;
	struct http_txn *txn = s->txn;

	if (!lf || !lf->nslots || (!s->fe->loggers.head && !s->fe->loggers.use_global))
		return;
	if (!txn->lf_snap && !(txn->lf_snap = http_line_table(lf->nslots)))
		return;
	lf_snapshot(lf, s, res, txn->lf_snap, snap_dup, http_line_free);
}

void http_capture_set(struct stream *s, int res, int idx, const char *v, size_t len)
{
	const struct http_px *h = http_px_of(s->fe);
	char ***tab = res ? &s->txn->res_cap : &s->txn->req_cap;
	int n = res ? h->n_res_cap : h->n_req_cap;

	if (idx >= n || n <= 0)
		return;
	if (!*tab && !(*tab = http_line_table(n)))
		return;
	if (idx < 0)
		return;   /* only the table was wanted */
	if ((*tab)[idx]) {
		/* the last value wins, as in HAProxy */
		http_line_free((*tab)[idx]);
	}
	(*tab)[idx] = http_line_dup(v, len, (size_t)(res ? h->res_cap : h->req_cap)[idx].len);
}

void http_capture_head(struct stream *s, const struct http_head *h, int res)
{
	const struct http_px *hp = http_px_of(s->fe);
	const struct http_capture *cap = res ? hp->res_cap : hp->req_cap;
	int n = res ? hp->n_res_cap : hp->n_req_cap;

	/* A parsed request shows its capture slots in the log even when
	 * empty ("{}"); a bad request shows none, as in HAProxy. */
	if (n > 0)
		http_capture_set(s, res, -1, NULL, 0);
	for (int i = 0; i < n; i++) {
		size_t nl = strlen(cap[i].name);
		int last = -1;

		if (!nl)
			continue;   /* a "declare capture" slot: filled by rules */

		/* the last occurrence of the field is kept */
		for (int f = http_head_find(h, cap[i].name, nl, 0); f >= 0;
		     f = http_head_find(h, cap[i].name, nl, f + 1))
			last = f;
		if (last >= 0)
			http_capture_set(s, res, i, h->f[last].v.p, h->f[last].v.len);
	}
	if (unlikely(hp->ck_cap_name))
		http_capture_cookie(s, h, res);
}

/* ---- log ---- */

static struct timespec ts_at(const struct stream *s, ev_tstamp t)
{
	struct timespec ts = s->accept_date;
	double d = t - s->t_accept;
	long long ns;

	if (d < 0)
		d = 0;
	ns = (long long)ts.tv_nsec + (long long)(d * 1e9);
	ts.tv_sec += (time_t)(ns / 1000000000LL);
	ts.tv_nsec = (long)(ns % 1000000000LL);
	return ts;
}

static long ms_between(ev_tstamp a, ev_tstamp b)
{
	return (a && b && b >= a) ? tick_ev_to_ms(b - a) : (a && b ? 0 : -1);
}

void http_fill_lf_ctx(struct stream *s, struct lf_ctx *c, unsigned needs)
{
	struct http_txn *txn = s->txn;
	ev_tstamp t = now(), t_req = txn->t_req ? txn->t_req : t;
	const struct http_px *h = http_px_of(s->fe);

	memset(c, 0, sizeof(*c));
	c->cli = &s->cli_addr;
	c->fe_addr = (needs & LF_N_FEADDR) || s->dst ? stream_dst(s) : NULL;
	c->srv_addr = s->ss.target ? &s->ss.target->addr : NULL;
	c->accept_date = ts_at(s, s->t_idle);
	c->req_date = ts_at(s, t_req);
	c->fe_name = c->fe_name_transport = s->fe->name;
#ifdef USE_OPENSSL
	if (s->cli.ssl) {
		c->fe_name_transport = ssl_bind_ft(s->li->bc);
		c->ssl_ciphers = ssl_sock_cipher(&s->cli);
		c->ssl_version = ssl_sock_version(&s->cli);
	}
#endif
	/* answered by the frontend's own rules: no backend yet */
	c->be_name = (txn->flags & TX_F_BE_SET) ? s->be->name : s->fe->name;
	c->srv_name = s->ss.target ? s->ss.target->name :
		      unlikely(txn->cache) && cache_txn_hit(s) ? "<CACHE>" : "<NOSRV>";
	c->Ti = ms_between(s->t_idle, t_req);
	c->Th = 0;
	c->TR = txn->t_head ? ms_between(t_req, txn->t_head) : -1;
	c->Tq = txn->t_head ? ms_between(s->t_idle, txn->t_head) : -1;
	c->Tw = s->t_queue || s->t_conn ? s->tw : -1;
	c->Tc = s->t_est ? ms_between(s->t_conn, s->t_est) : -1;
	c->Tr = txn->t_res && s->t_est ? ms_between(MAX(s->t_est, txn->t_head), txn->t_res) : -1;
	c->Td = txn->t_res ? ms_between(txn->t_res, t) : -1;
	c->Ta = ms_between(t_req, t);
	c->Tt = ms_between(s->t_idle, t);
	c->status = txn->status;
	c->bytes_out = txn->res_bytes;
	c->bytes_in = txn->req_bytes;
	c->term[0] = strm_err_char(s->term_err);
	c->term[1] = strm_fin_char(s->term_fin);
	c->term[2] = txn && txn->ck_req ? txn->ck_req : '-';   /* persistence cookie */
	c->term[3] = txn && txn->ck_res ? txn->ck_res : '-';
	c->actconn = global.curconn;
	c->feconn = s->fe->feconn;
	c->beconn = s->be->beconn;
	c->srvconn = s->ss.target ? (int)s->ss.target->counters.cur_sess : 0;
	c->retries = s->ss.retries;
	c->redispatched = s->ss.redispatched;
	c->srv_queue = s->srv_qpos;
	c->be_queue = s->be_qpos;
	c->req_cookie = txn->ck_cap[0] ? txn->ck_cap[0] : "-";
	c->res_cookie = txn->ck_cap[1] ? txn->ck_cap[1] : "-";
	c->asap = !!(s->fe->options & PR_O_LOGASAP);
	c->reqline = txn->reqline;
	c->reqline_len = txn->reqline_len;
	c->req_cap = (const char **)txn->req_cap;
	c->n_req_cap = h->n_req_cap;
	c->res_cap = (const char **)txn->res_cap;
	c->n_res_cap = h->n_res_cap;
	c->unique_id = txn->uniq_id;
	c->uniq_num = s->uniq_id;
	c->hostname = global.node;
	c->pid = (int)global.pid;
	c->strm = s;
}

const char *http_unique_id(struct stream *s)
{
	struct http_txn *txn = s->txn;
	const struct http_px *fh = http_px_of(s->fe);
	struct lf_ctx c;
	char id[HTTP_LINE_MAX];
	size_t l;

	if (!txn || txn->uniq_id || !fh->uniqid_fmt)
		return txn ? txn->uniq_id : NULL;
	http_fill_lf_ctx(s, &c, fh->uniqid_fmt->needs);
	l = lf_render(fh->uniqid_fmt, &c, id, sizeof(id));
	txn->uniq_id = http_line_dup(id, l, HTTP_LINE_MAX - 1);
	return txn->uniq_id;
}

/* The unique ID a PROXY v2 header carries (proxy-v2-options unique-id): the
 * request's in mode http; in mode tcp, the frontend's unique-id-format
 * rendered for the connection into <buf>. NULL without a format. */
static const char *http_pp_unique_id(struct stream *s, char *buf, size_t sz)
{
	const struct lf_expr *fmt = http_px_of(s->fe)->uniqid_fmt;
	struct lf_ctx c;

	if (s->txn)
		return http_unique_id(s);
	if (!fmt)
		return NULL;
	stream_fill_lf_ctx(s, &c, fmt->needs);
	lf_render(fmt, &c, buf, sz);
	return buf;
}

SLUICE_INIT(http_txn_log_register)
{
	srv_pp_register_unique_id(http_pp_unique_id);
}

/* The transaction's log line, with <more_out> bytes added to %B (those of
 * the response already on their way to the client, under logasap). */
static void http_log_line(struct stream *s, uint64_t more_out)
{
	struct http_txn *txn = s->txn;
	const struct proxy *fe = s->fe;
	struct lf_ctx c;
	char line[2048];
	size_t n;
	int err, level;

	if (txn->flags & TX_F_LOGGED)
		return;
	txn->flags |= TX_F_LOGGED;
	if (!fe->logformat || (!fe->loggers.head && !fe->loggers.use_global))
		return;
	err = s->term_err != SE_NONE || txn->status >= 500 || txn->status < 0 || s->ss.retries ||
	      s->ss.redispatched;
	if (!err && (http_px_of(fe)->options & HTTP_O_DONTLOG_NORMAL))
		return;
	http_fill_lf_ctx(s, &c, fe->logformat->needs | px_log_needs(fe));
	c.bytes_out += more_out;
	c.log = 1;
	c.use_snap = 1;
	c.snap = txn->lf_snap;
	level = stream_log_level(s, err && (http_px_of(fe)->options & HTTP_O_LOG_SEP_ERR) ?
				    LOG_L_ERR : LOG_L_INFO);
	if (level < 0)
		return;   /* set-log-level silent */
	n = lf_render(px_log_format(fe, err), &c, line, sizeof(line));
	px_log_send(fe, &c, level, line, n);
}

void http_log(struct stream *s)
{
	http_log_line(s, 0);
}

/* option logasap: the server's response head is through the response
 * rules and leaves now: the line is made, its %B counting the head (and
 * what of the body came with it), %Ta/%Tt/%Tu stopping here. */
static void http_log_asap(struct stream *s)
{
	http_log_line(s, s->res.buf ? s->res.buf->data : 0);
}

/* ---- counters ---- */

/* Microseconds from <a> to <b>, -1 when either is unset. */
static int64_t us_between(ev_tstamp a, ev_tstamp b)
{
	return (a && b) ? (b >= a ? (int64_t)((b - a) * 1e6) : 0) : -1;
}

void http_count_lat(struct stream *s)
{
	struct http_txn *txn = s->txn;
	int64_t tw, tc, tr, ta;

	if (!txn || (txn->flags & TX_F_TIMED) || !txn->t_head)
		return;
	txn->flags |= TX_F_TIMED;
	/* the same phases as the log line's Tw, Tc, Tr and Ta */
	tw = s->t_queue || s->t_conn ? (int64_t)s->tw * 1000 : -1;
	tc = s->t_est ? us_between(s->t_conn, s->t_est) : -1;
	tr = txn->t_res && s->t_est ? us_between(MAX(s->t_est, txn->t_head), txn->t_res) : -1;
	ta = us_between(txn->t_req ? txn->t_req : txn->t_head, now());
	counters_lat(&s->fe->fe_counters, tw, tc, tr, ta);
	if ((txn->flags & TX_F_BE_SET) && (s->be->cap & PR_CAP_BE))
		counters_lat(&s->be->be_counters, tw, tc, tr, ta);
	if (s->ss.target)
		counters_lat(&s->ss.target->counters, tw, tc, tr, ta);
}

void http_count_status(struct stream *s, int status, int to_server)
{
	int k = status >= 100 && status < 600 ? status / 100 - 1 : 5;

	if (to_server)
		stk_http_status(s, status);

	s->fe->fe_counters.http_rsp[k]++;
	if (to_server && unlikely(s->fe->options & PR_O_LOGASAP))
		http_log_asap(s);
	if (to_server) {
		s->be->be_counters.http_rsp[k]++;
		if (s->ss.target)
			s->ss.target->counters.http_rsp[k]++;
	}
}

void http_count_resp_failed(struct stream *s, int fail)
{
	s->be->be_counters.failed_resp++;
	if (s->ss.target)
		s->ss.target->counters.failed_resp++;
	if (fail)
		stk_http_fail(s);
}

void http_count_bytes(struct stream *s, int is_req, uint64_t in, uint64_t out)
{
	if (!s->txn)
		return;   /* the first bytes of a request: counted when it starts */
	if (is_req) {
		s->txn->req_bytes += in;
	} else {
		s->txn->res_bytes += out;
		if (s->txn->flags & TX_F_LOCAL) {
			/* made here: no server bytes were counted for it */
			s->fe->fe_counters.bytes_out += out;
			s->li->counters.bytes_out += out;
		}
	}
}


/* Frees capture table <tab> of <n> slots (NULL accepted) and its values. */
void http_captures_free(struct stream *s, struct http_txn *txn)
{
	const struct http_px *h = http_px_of(s->fe);

	http_line_table_free(txn->req_cap, h->n_req_cap);
	http_line_table_free(txn->res_cap, h->n_res_cap);
	http_line_table_free(txn->lf_snap, s->fe->logformat ? s->fe->logformat->nslots : 0);
	txn->req_cap = txn->res_cap = txn->lf_snap = NULL;
	http_line_free(txn->ck_cap[0]);
	http_line_free(txn->ck_cap[1]);
	txn->ck_cap[0] = txn->ck_cap[1] = NULL;
}

