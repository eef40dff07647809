/* Tracked counters: the track-sc*, sc-inc-gpc0 and sc-set-gpt0 actions,
 * the hooks that count connections, requests, errors and bytes on the
 * entries a stream tracks, the sc_*, src_*, table_* fetches and the
 * table_* converters. */
#include <stdlib.h>
#include <string.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/units.h>

#include "stk_int.h"

/* ---- slots ---- */

static void stk_ctr_release(struct stk_ctr *c)
{
	int64_t *cur = stk_data(c->t, c->ts, STK_DT_CONN_CUR);

	if (cur && *cur > 0) {
		(*cur)--;
		stk_changed(c->t, c->ts);
	}
	stk_release(c->t, c->ts);
	c->t = NULL;
	c->ts = NULL;
	c->flags = 0;
}

/* Adds <n> to counter <cnt> and rate <rate> of every slot of <s>. */
static void stk_count(struct stream *s, int cnt, int rate, uint64_t n)
{
	for (int i = 0; i < STK_CTR_SLOTS; i++)
		if (s->stkctr[i].ts)
			stk_data_add(s->stkctr[i].t, s->stkctr[i].ts, cnt, rate, n);
}

void stk_stream_end(struct stream *s)
{
	for (int i = 0; i < STK_CTR_SLOTS; i++)
		if (s->stkctr[i].ts)
			stk_ctr_release(&s->stkctr[i]);
}

void stk_txn_end(struct stream *s)
{
	/* HTTP bytes are counted per transaction, as the log line's */
	if (s->txn) {
		stk_count(s, STK_DT_BYTES_IN_CNT, STK_DT_BYTES_IN_RATE, s->txn->req_bytes);
		stk_count(s, STK_DT_BYTES_OUT_CNT, STK_DT_BYTES_OUT_RATE, s->txn->res_bytes);
	}
	for (int i = 0; i < STK_CTR_SLOTS; i++)
		if (s->stkctr[i].ts && (s->stkctr[i].flags & STK_CTR_F_CONTENT))
			stk_ctr_release(&s->stkctr[i]);
}

void stk_http_req(struct stream *s)
{
	stk_count(s, STK_DT_HTTP_REQ_CNT, STK_DT_HTTP_REQ_RATE, 1);
}

void stk_http_err(struct stream *s)
{
	stk_count(s, STK_DT_HTTP_ERR_CNT, STK_DT_HTTP_ERR_RATE, 1);
}

void stk_http_status(struct stream *s, int status)
{
	if (status >= 400 && status < 500)
		stk_http_err(s);
}

void stk_count_bytes(struct stream *s, int is_req, uint64_t n)
{
	if (s->fe->mode == PR_MODE_HTTP)
		return;   /* counted when the transaction ends */
	if (is_req)
		stk_count(s, STK_DT_BYTES_IN_CNT, STK_DT_BYTES_IN_RATE, n);
	else
		stk_count(s, STK_DT_BYTES_OUT_CNT, STK_DT_BYTES_OUT_RATE, n);
}

int stk_key_from_src(const struct stktable *t, const struct stream *s, unsigned char *key,
                     uint32_t *klen)
{
	struct sample smp = { 0 };

	if (s->cli_addr.ss_family == AF_INET) {
		smp.type = SMP_T_IPV4;
		smp.u.ipv4 = ((const struct sockaddr_in *)&s->cli_addr)->sin_addr;
	} else if (s->cli_addr.ss_family == AF_INET6) {
		smp.type = SMP_T_IPV6;
		smp.u.ipv6 = ((const struct sockaddr_in6 *)&s->cli_addr)->sin6_addr;
	} else {
		return -1;
	}
	return stk_key_from_smp(t, &smp, key, klen);
}

/* ---- actions ---- */

struct stk_act {
	int              slot;
	struct stktable *t;
	struct smp_expr  expr;     /* track-sc key, sc-set-gpt0 value (when not <val>) */
	int              has_expr;
	int64_t          val;
};

static void stk_act_free(void *priv)
{
	struct stk_act *a = priv;

	if (!a)
		return;
	if (a->has_expr)
		smp_expr_free(&a->expr);
	free(a);
}

/* Rule sets whose trackers end with the transaction. */
#define STK_W_CONTENT (ACT_W_TCP_REQ | ACT_W_TCP_RES | ACT_W_HTTP_ALL)

/* track-sc<n> <key> [table <t>] */
static int stk_parse_track(struct act_parse *p)
{
	struct stk_act *a = xcalloc(1, sizeof(*a));
	const char *tname = p->px->name;
	char *err = NULL;

	p->priv = a;
	a->slot = p->digit;   /* "track-sc<n>": act_find() matched a digit 0..2 */
	BUG_ON(a->slot < 0, "track-sc row matched without its digit");
	if (p->idx >= p->argc) {
		cfg_alert(p->ctx, "'%s' expects <key> [table <table>]", p->argv[0]);
		return -1;
	}
	if (smp_expr_parse(p->argv[p->idx], &a->expr, NULL, &err) == -1) {
		cfg_alert(p->ctx, "'%s': %s", p->argv[0], err);
		free(err);
		return -1;
	}
	a->has_expr = 1;
	p->idx++;
	if (p->idx < p->argc && strcmp(p->argv[p->idx], "table") == 0) {
		if (p->idx + 1 >= p->argc) {
			cfg_alert(p->ctx, "'%s': 'table' expects a table name", p->argv[0]);
			return -1;
		}
		tname = p->argv[p->idx + 1];
		p->idx += 2;
	} else if (!tname) {
		cfg_alert(p->ctx, "'%s' expects 'table <table>' in a defaults section", p->argv[0]);
		return -1;
	}
	a->t = stk_table_ref(tname, p->ctx->file, p->ctx->line);
	return 0;
}

static void stk_exec_track(void *priv, struct stream *s, unsigned where)
{
	struct stk_act *a = priv;
	struct stk_ctr *c = &s->stkctr[a->slot];
	unsigned char key[STK_KEY_MAX];
	struct sample smp = { 0 };
	struct stksess *ts;
	uint32_t klen;
	int64_t *cur;

	if (c->ts || !a->t->buckets)
		return;   /* the first tracker of a slot wins */
	if (!smp_expr_eval(&a->expr, s, &smp) || stk_key_from_smp(a->t, &smp, key, &klen) == -1)
		return;
	ts = stk_get(a->t, key, klen);
	if (!ts)
		return;
	ts->ref++;
	c->t = a->t;
	c->ts = ts;
	c->flags = (where & STK_W_CONTENT) ? STK_CTR_F_CONTENT : 0;
	stk_data_add(c->t, ts, STK_DT_CONN_CNT, STK_DT_CONN_RATE, 1);
	cur = stk_data(c->t, ts, STK_DT_CONN_CUR);
	if (cur) {
		(*cur)++;
		stk_changed(c->t, ts);
	}
	if (where & (ACT_W_TCP_CONN | ACT_W_TCP_SESS))
		stk_data_add(c->t, ts, STK_DT_SESS_CNT, STK_DT_SESS_RATE, 1);
	if ((where & ACT_W_HTTP_REQ) && s->txn)   /* the request being analysed */
		stk_data_add(c->t, ts, STK_DT_HTTP_REQ_CNT, STK_DT_HTTP_REQ_RATE, 1);
}

/* The slot of "sc-inc-gpc0(<n>)". Returns it, or -1 after cfg_alert(). */
static int stk_parse_slot(struct act_parse *p, const char *name)
{
	const char *w = p->argv[0] + strlen(name);

	if (w[0] != '(' || w[1] < '0' || w[1] > '2' || w[2] != ')' || w[3]) {
		cfg_alert(p->ctx, "'%s' expects a tracked counter slot: '%s(<0-2>)'", p->argv[0],
			  name);
		return -1;
	}
	return w[1] - '0';
}

static int stk_parse_inc_gpc0(struct act_parse *p)
{
	struct stk_act *a = xcalloc(1, sizeof(*a));

	p->priv = a;
	a->slot = stk_parse_slot(p, "sc-inc-gpc0");
	return a->slot < 0 ? -1 : 0;
}

static void stk_exec_inc_gpc0(void *priv, struct stream *s, unsigned where)
{
	struct stk_ctr *c = &s->stkctr[((struct stk_act *)priv)->slot];

	(void)where;
	if (c->ts)
		stk_data_add(c->t, c->ts, STK_DT_GPC0, STK_DT_GPC0_RATE, 1);
}

/* sc-set-gpt0(<n>) <int>|<expr> */
static int stk_parse_set_gpt0(struct act_parse *p)
{
	struct stk_act *a = xcalloc(1, sizeof(*a));
	const char *err;
	char *serr = NULL;
	long v;

	p->priv = a;
	a->slot = stk_parse_slot(p, "sc-set-gpt0");
	if (a->slot < 0)
		return -1;
	if (p->idx >= p->argc) {
		cfg_alert(p->ctx, "'%s' expects an integer or an expression", p->argv[0]);
		return -1;
	}
	if (parse_int(p->argv[p->idx], 0, UINT32_MAX, &v, &err) == 0) {
		a->val = v;
	} else if (smp_expr_parse(p->argv[p->idx], &a->expr, NULL, &serr) == 0) {
		a->has_expr = 1;
	} else {
		cfg_alert(p->ctx, "'%s' expects an integer or an expression: %s", p->argv[0], serr);
		free(serr);
		return -1;
	}
	p->idx++;
	return 0;
}

static void stk_exec_set_gpt0(void *priv, struct stream *s, unsigned where)
{
	struct stk_act *a = priv;
	struct stk_ctr *c = &s->stkctr[a->slot];
	struct sample smp = { 0 };
	int64_t v = a->val;

	(void)where;
	if (!c->ts)
		return;
	if (a->has_expr) {
		if (!smp_expr_eval(&a->expr, s, &smp) || !smp_cast(&smp, SMP_T_SINT))
			return;
		v = smp.u.sint;
	}
	stk_data_set(c->t, c->ts, STK_DT_GPT0, v);
}

#define STK_W_ALL (ACT_W_TCP_ALL | ACT_W_HTTP_REQ | ACT_W_HTTP_RES)

static const struct act_kw stk_acts[] = {
	{ "track-sc", 1, ACT_W_TCP_CONN | ACT_W_TCP_SESS | ACT_W_TCP_REQ | ACT_W_HTTP_REQ |
	  ACT_W_HTTP_RES, stk_parse_track, stk_exec_track, stk_act_free,
	  "<key> [table <table>]", NULL },
	{ "sc-inc-gpc0", 0, STK_W_ALL | ACT_W_HTTP_AFTER, stk_parse_inc_gpc0, stk_exec_inc_gpc0,
	  stk_act_free, "(<0-2>)", NULL },
	{ "sc-set-gpt0", 0, STK_W_ALL | ACT_W_HTTP_AFTER, stk_parse_set_gpt0, stk_exec_set_gpt0,
	  stk_act_free, "(<0-2>) <int>|<expr>", NULL },
};

/* ---- fetches ---- */

enum stk_op {
	OP_DT,          /* read data type <dt> */
	OP_KBYTES_IN, OP_KBYTES_OUT,
	OP_INC_GPC0, OP_CLR_GPC0, OP_UPDT_CONN_CNT,
	OP_TRACKERS,
	OP_IN_TABLE,    /* converter in_table: whether the key has an entry */
};

/* What a row of the sc_*, src_* and table_* families reads: its .priv, so
 * that one function serves the family. */
struct stk_sel {
	enum stk_op op;
	int         dt;     /* STK_DT_* for OP_DT */
	int         slot;   /* fetches: 0-2 (sc<n>_*), -1 the first argument (sc_*),
	                       -2 the client's address (src_*) */
};

#define STK_SEL(op, dt, slot) (&(const struct stk_sel){ op, dt, slot })

/* Runs <op> on entry <ts> of <t> (NULL: no entry, the value is 0) into
 * <smp>. Returns 1, or 0 when the table does not store what is asked. */
static int stk_op_run(enum stk_op op, int dt, struct stktable *t, struct stksess *ts,
                      struct sample *smp)
{
	int64_t v = 0;

	smp->type = SMP_T_SINT;
	smp->flags = 0;
	smp->u.sint = 0;
	switch (op) {
	case OP_DT:
		if (t->off[dt] < 0)
			return 0;
		if (ts)
			stk_data_get(t, ts, dt, &v);
		break;
	case OP_KBYTES_IN:
	case OP_KBYTES_OUT:
		dt = op == OP_KBYTES_IN ? STK_DT_BYTES_IN_CNT : STK_DT_BYTES_OUT_CNT;
		if (t->off[dt] < 0)
			return 0;
		if (ts)
			stk_data_get(t, ts, dt, &v);
		v >>= 10;
		break;
	case OP_INC_GPC0:
		if (t->off[STK_DT_GPC0] < 0 && t->off[STK_DT_GPC0_RATE] < 0)
			return 0;
		if (ts) {
			stk_data_add(t, ts, STK_DT_GPC0, STK_DT_GPC0_RATE, 1);
			stk_data_get(t, ts, STK_DT_GPC0, &v);
		}
		break;
	case OP_CLR_GPC0:
		if (t->off[STK_DT_GPC0] < 0)
			return 0;
		if (ts) {
			stk_data_get(t, ts, STK_DT_GPC0, &v);
			stk_data_set(t, ts, STK_DT_GPC0, 0);
		}
		break;
	case OP_UPDT_CONN_CNT:
		if (t->off[STK_DT_CONN_CNT] < 0)
			return 0;
		if (ts) {
			stk_data_add(t, ts, STK_DT_CONN_CNT, STK_DT_CONN_RATE, 1);
			stk_data_get(t, ts, STK_DT_CONN_CNT, &v);
		}
		break;
	case OP_TRACKERS:
		v = ts ? ts->ref : 0;
		break;
	case OP_IN_TABLE:   /* answered by stk_conv() */
		break;
	}
	smp->u.sint = v;
	return 1;
}

static int stk_op_creates(enum stk_op op)
{
	return op == OP_INC_GPC0 || op == OP_CLR_GPC0 || op == OP_UPDT_CONN_CNT;
}

/* The table of <s>'s current proxy: the frontend's while its rules run,
 * then the backend's (the frontend's when the backend has none). */
static struct stktable *stk_cur_table(struct stream *s)
{
	struct proxy *px = s->be;
	struct stktable *t;

	if (!px || (s->txn && !(s->txn->flags & TX_F_BE_SET)))
		px = s->fe;
	t = stk_table_of(px);
	return t ? t : stk_table_of(s->fe);
}

/* The argument table (a stub until declared: ptr set by stk_check_tbl()). */
static struct stktable *stk_arg_table(const struct smp_arg *a)
{
	return a->type == ARGT_STR && a->ptr ? a->ptr : NULL;
}

/* sc_*, sc<n>_* and src_*: the operation, data type and slot come from
 * the row (struct stk_sel). */
static int stk_fetch(const struct smp_arg *args, struct sample *smp, struct stream *s,
                     const void *priv)
{
	const struct stk_sel *sel = priv;
	const struct smp_arg *ta = args;
	enum stk_op op = sel->op;
	int dt = sel->dt, slot = sel->slot;
	unsigned char key[STK_KEY_MAX];
	struct stktable *t;
	struct stksess *ts;
	uint32_t klen;

	if (!s)
		return 0;
	if (slot == -1) {
		slot = (int)args[0].sint;
		ta = &args[1];
	}
	t = stk_arg_table(ta);
	if (slot >= 0) {
		const struct stk_ctr *c = &s->stkctr[slot];

		if (!c->ts)
			return 0;
		if (!t || t == c->t)
			return stk_op_run(op, dt, c->t, c->ts, smp);
		/* the same key in another table */
		if (!t->buckets || t->type != c->t->type || t->key_size != c->t->key_size)
			return 0;
		ts = stk_op_creates(op) ? stk_get(t, c->ts->key, c->ts->klen)
					: stk_lookup(t, c->ts->key, c->ts->klen);
		return stk_op_run(op, dt, t, ts, smp);
	}
	if (!t)
		t = stk_cur_table(s);
	if (!t || !t->buckets || stk_key_from_src(t, s, key, &klen) == -1)
		return 0;
	ts = stk_op_creates(op) ? stk_get(t, key, klen) : stk_lookup(t, key, klen);
	return stk_op_run(op, dt, t, ts, smp);
}

/* Argument checkers: a table name becomes a reference to the table. */
static int stk_check_tbl(struct smp_arg *a, char **err, const void *priv)
{
	(void)err;
	if (a->type == ARGT_STR && a->str && a->len)
		a->ptr = stk_table_ref(a->str, NULL, 0);
	return 0;
}

static int stk_check_sc(struct smp_arg *a, char **err, const void *priv)
{
	if (a[0].sint < 0 || a[0].sint >= STK_CTR_SLOTS) {
		*err = str_fmt("invalid tracked counter slot %lld (expects 0 to %d)",
			       (long long)a[0].sint, STK_CTR_SLOTS - 1);
		return -1;
	}
	return stk_check_tbl(&a[1], err, priv);
}

static int stk_check_tbl_req(struct smp_arg *a, char **err, const void *priv)
{
	if (!a->str || !a->len) {
		*err = str_fmt("missing table name");
		return -1;
	}
	return stk_check_tbl(a, err, priv);
}

/* Data read the same way by the fetches (sc_<name>, src_<name>) and the
 * converters (table_<name>): name, operation, data type. */
#define STK_COMMON_OPS(X) \
	X(conn_cnt,       OP_DT, STK_DT_CONN_CNT) \
	X(conn_cur,       OP_DT, STK_DT_CONN_CUR) \
	X(conn_rate,      OP_DT, STK_DT_CONN_RATE) \
	X(sess_cnt,       OP_DT, STK_DT_SESS_CNT) \
	X(sess_rate,      OP_DT, STK_DT_SESS_RATE) \
	X(http_req_cnt,   OP_DT, STK_DT_HTTP_REQ_CNT) \
	X(http_req_rate,  OP_DT, STK_DT_HTTP_REQ_RATE) \
	X(http_err_cnt,   OP_DT, STK_DT_HTTP_ERR_CNT) \
	X(http_err_rate,  OP_DT, STK_DT_HTTP_ERR_RATE) \
	X(bytes_in_rate,  OP_DT, STK_DT_BYTES_IN_RATE) \
	X(bytes_out_rate, OP_DT, STK_DT_BYTES_OUT_RATE) \
	X(kbytes_in,      OP_KBYTES_IN, 0) \
	X(kbytes_out,     OP_KBYTES_OUT, 0) \
	X(gpc0_rate,      OP_DT, STK_DT_GPC0_RATE)

/* The fetches' own: sc_get_gpc0, src_inc_gpc0... */
#define STK_FETCH_OPS(X) \
	STK_COMMON_OPS(X) \
	X(get_gpc0,       OP_DT, STK_DT_GPC0) \
	X(get_gpt0,       OP_DT, STK_DT_GPT0) \
	X(inc_gpc0,       OP_INC_GPC0, 0) \
	X(clr_gpc0,       OP_CLR_GPC0, 0)

/* sc_tracked(<n>), sc<n>_tracked: whether the slot tracks an entry. */
static int stk_fetch_tracked(const struct smp_arg *args, struct sample *smp, struct stream *s,
                             const void *priv)
{
	int slot = ((const struct stk_sel *)priv)->slot;

	if (!s)
		return 0;
	if (slot == -1)
		slot = (int)args[0].sint;
	smp->type = SMP_T_BOOL;
	smp->u.sint = s->stkctr[slot].ts != NULL;
	return 1;
}

/* table_cnt(<t>) and table_avl(<t>) */
static int f_table_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	struct stktable *t = a[0].ptr;

	(void)s;
	smp->type = SMP_T_SINT;
	smp->u.sint = t->used;
	return 1;
}

static int f_table_avl(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	struct stktable *t = a[0].ptr;

	(void)s;
	smp->type = SMP_T_SINT;
	smp->u.sint = (int64_t)t->size - t->used;
	return 1;
}

#define A(...) { __VA_ARGS__ }
#define STK_USE (SMP_USE_L4 | SMP_USE_L7REQ | SMP_USE_L7RES)
#define STK_ROW(name, fn, a0, nmin, out, check, op, dt, slot) \
	{ name, fn, A a0, nmin, out, STK_USE, check, STK_SEL(op, dt, slot) },
#define STK_ROWS_SC(name, fn, out, op, dt) \
	STK_ROW("sc_" name, fn, (ARGT_SINT, ARGT_STR), 1, out, stk_check_sc, op, dt, -1) \
	STK_ROW("sc0_" name, fn, (ARGT_STR), 0, out, stk_check_tbl, op, dt, 0) \
	STK_ROW("sc1_" name, fn, (ARGT_STR), 0, out, stk_check_tbl, op, dt, 1) \
	STK_ROW("sc2_" name, fn, (ARGT_STR), 0, out, stk_check_tbl, op, dt, 2)
#define STK_ROWS(name, op, dt) \
	STK_ROWS_SC(#name, stk_fetch, SMP_T_SINT, op, dt) \
	STK_ROW("src_" #name, stk_fetch, (ARGT_STR), 0, SMP_T_SINT, stk_check_tbl, op, dt, -2)

static const struct smp_fetch_kw stk_fetches[] = {
	STK_FETCH_OPS(STK_ROWS)
	STK_ROWS_SC("trackers", stk_fetch, SMP_T_SINT, OP_TRACKERS, 0)
	STK_ROW("src_updt_conn_cnt", stk_fetch, (ARGT_STR), 0, SMP_T_SINT, stk_check_tbl,
		OP_UPDT_CONN_CNT, 0, -2)
	STK_ROWS_SC("tracked", stk_fetch_tracked, SMP_T_BOOL, OP_DT, 0)
	{ "table_cnt", f_table_cnt, { ARGT_STR }, 1, SMP_T_SINT, SMP_USE_CONST | STK_USE,
	  stk_check_tbl_req, NULL },
	{ "table_avl", f_table_avl, { ARGT_STR }, 1, SMP_T_SINT, SMP_USE_CONST | STK_USE,
	  stk_check_tbl_req, NULL },
};

/* ---- converters: table_<data>(<table>) on the key in the sample ---- */

/* table_<data>(<table>) and in_table(<table>): the operation and data type
 * come from the row (struct stk_sel). */
static int stk_conv(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const struct stk_sel *sel = priv;
	struct stktable *t = a[0].ptr;
	unsigned char key[STK_KEY_MAX];
	struct stksess *ts;
	uint32_t klen;

	if (!t->buckets || stk_key_from_smp(t, smp, key, &klen) == -1)
		return 0;
	ts = stk_lookup(t, key, klen);
	if (sel->op == OP_IN_TABLE) {
		smp->type = SMP_T_BOOL;
		smp->u.sint = ts != NULL;
		return 1;
	}
	return stk_op_run(sel->op, sel->dt, t, ts, smp);
}

/* The converters' own: table_gpc0, table_server_id... */
#define STK_CONV_OPS(X) \
	STK_COMMON_OPS(X) \
	X(gpc0,      OP_DT, STK_DT_GPC0) \
	X(gpt0,      OP_DT, STK_DT_GPT0) \
	X(server_id, OP_DT, STK_DT_SERVER_ID) \
	X(trackers,  OP_TRACKERS, 0)

#define STK_CONV_ROW(name, op, dt) \
	{ "table_" #name, stk_conv, { ARGT_STR }, 1, SMP_T_ANY, SMP_T_SINT, \
	  stk_check_tbl_req, STK_SEL(op, dt, 0) },

static const struct smp_conv_kw stk_convs[] = {
	STK_CONV_OPS(STK_CONV_ROW)
	{ "in_table", stk_conv, { ARGT_STR }, 1, SMP_T_ANY, SMP_T_BOOL, stk_check_tbl_req,
	  STK_SEL(OP_IN_TABLE, 0, 0) },
};

SLUICE_INIT(stk_fetch_register)
{
	act_register(stk_acts, ARRAY_SIZE(stk_acts));
	smp_register_fetches(stk_fetches, ARRAY_SIZE(stk_fetches));
	smp_register_convs(stk_convs, ARRAY_SIZE(stk_convs));
}
