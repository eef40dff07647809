/* Tracked counters: the track-sc*, sc-inc-gpc* and sc-set-gpt* actions,
 * the hooks that count connections, requests, errors, failures and bytes on the
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

void stk_http_fail(struct stream *s)
{
	stk_count(s, STK_DT_HTTP_FAIL_CNT, STK_DT_HTTP_FAIL_RATE, 1);
}

void stk_http_status(struct stream *s, int status)
{
	if (status >= 400 && status < 500)
		stk_http_err(s);
	else if (status >= 500 && status != 501 && status != 505)
		stk_http_fail(s);
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

struct stk_gp_row;

struct stk_act {
	int              slot;
	unsigned         idx;      /* sc-inc-gpc, sc-set-gpt: the element */
	const struct stk_gp_row *row;   /* sc-inc-gpc*, sc-set-gpt*: what they change */
	struct stktable *t;
	struct smp_expr  expr;     /* track-sc key, sc-set-gpt value (when not <val>) */
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

/* ---- general purpose counters and tags ---- */

/* Adds one to counter <cnt> and rate <rate> (-1: none) at element <idx>
 * of entry <ts> of <t>, the legacy types (gpc0, gpc1 and their rates)
 * being found where they live (stk_dt_locate()). Returns 1 and the new
 * count in *<v> (0 when only the rate is stored), or 0 when <t> stores
 * neither. */
static int stk_gpc_inc(struct stktable *t, struct stksess *ts, int cnt, int rate, unsigned idx,
                       int64_t *v)
{
	unsigned ci, ri = 0;
	int c = stk_dt_locate(t, cnt, &ci), r = rate >= 0 ? stk_dt_locate(t, rate, &ri) : -1;
	int has_c = stk_dt_stored(t, c, ci + idx), has_r = r >= 0 && stk_dt_stored(t, r, ri + idx);

	*v = 0;
	if (!has_c && !has_r)
		return 0;
	if (!ts)
		return 1;
	if (has_c) {
		stk_data_add_at(t, ts, c, -1, ci + idx, 1);
		stk_data_get_at(t, ts, c, ci + idx, v);
	}
	if (has_r)
		stk_data_add_at(t, ts, -1, r, ri + idx, 1);
	return 1;
}

/* Sets tag or counter <dt> (legacy types located) at element <idx> to
 * <v>. Returns 1, or 0 when not stored. */
static int stk_gp_set(struct stktable *t, struct stksess *ts, int dt, unsigned idx, int64_t v)
{
	unsigned i;

	dt = stk_dt_locate(t, dt, &i);
	return stk_data_set_at(t, ts, dt, i + idx, v);
}

/* ---- actions: sc-inc-gpc0(<sc>), sc-inc-gpc(<idx>,<sc>), sc-set-gpt... ---- */

/* A row of the sc-inc-gpc and sc-set-gpt families: the action, and what it
 * works on (registered with act_register_ext()). */
struct stk_gp_row {
	struct act_kw kw;
	int           cnt, rate;   /* the counter and its rate (-1: none) */
	int           has_idx;     /* "(<idx>,<sc>)" rather than "(<sc>)" */
};

/* The "(<sc>)" or "(<idx>,<sc>)" after the action's name (row <g>) into
 * <a>. Returns 0, or -1 after cfg_alert(). */
static int stk_parse_gp_args(struct act_parse *p, const struct stk_gp_row *g, struct stk_act *a)
{
	const char *w = p->argv[0] + strlen(p->kw->name);
	const char *want = g->has_idx ? "(<idx>,<0-2>)" : "(<0-2>)";
	long idx = 0;
	char *end;

	if (*w != '(')
		goto bad;
	w++;
	if (g->has_idx) {
		idx = strtol(w, &end, 10);
		if (end == w || *end != ',' || idx < 0 || idx >= STK_DT_NB_MAX) {
			cfg_alert(p->ctx, "'%s': invalid or missing index (expects '%s%s' with "
				  "<idx> from 0 to %d)", p->argv[0], p->kw->name, want,
				  STK_DT_NB_MAX - 1);
			return -1;
		}
		w = end + 1;
	}
	if (w[0] < '0' || w[0] > '2' || w[1] != ')' || w[2])
		goto bad;
	a->slot = w[0] - '0';
	a->idx = (unsigned)idx;
	return 0;
bad:
	cfg_alert(p->ctx, "'%s' expects a tracked counter slot: '%s%s'", p->argv[0], p->kw->name,
		  want);
	return -1;
}

static int stk_parse_inc_gpc(struct act_parse *p)
{
	struct stk_act *a = xcalloc(1, sizeof(*a));

	p->priv = a;
	a->row = container_of(p->kw, const struct stk_gp_row, kw);
	return stk_parse_gp_args(p, a->row, a);
}

static void stk_exec_inc_gpc(void *priv, struct stream *s, unsigned where)
{
	struct stk_act *a = priv;
	struct stk_ctr *c = &s->stkctr[a->slot];
	int64_t v;

	(void)where;
	if (c->ts)
		stk_gpc_inc(c->t, c->ts, a->row->cnt, a->row->rate, a->idx, &v);
}

/* sc-set-gpt0(<sc>) <int>|<expr>, sc-set-gpt(<idx>,<sc>) <int>|<expr> */
static int stk_parse_set_gpt(struct act_parse *p)
{
	struct stk_act *a = xcalloc(1, sizeof(*a));
	const char *err;
	char *serr = NULL;
	long v;

	p->priv = a;
	a->row = container_of(p->kw, const struct stk_gp_row, kw);
	if (stk_parse_gp_args(p, a->row, a) == -1)
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

static void stk_exec_set_gpt(void *priv, struct stream *s, unsigned where)
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
	stk_gp_set(c->t, c->ts, a->row->cnt, a->idx, v);
}

#define STK_W_ALL (ACT_W_TCP_ALL | ACT_W_HTTP_REQ | ACT_W_HTTP_RES)
#define STK_GP_ACT(name, parse, exec, usage, cnt, rate, has_idx) \
	{ { name, 0, STK_W_ALL | ACT_W_HTTP_AFTER, parse, exec, stk_act_free, usage, NULL }, \
	  cnt, rate, has_idx }

static const struct act_kw stk_acts[] = {
	{ "track-sc", 1, ACT_W_TCP_CONN | ACT_W_TCP_SESS | ACT_W_TCP_REQ | ACT_W_HTTP_REQ |
	  ACT_W_HTTP_RES, stk_parse_track, stk_exec_track, stk_act_free,
	  "<key> [table <table>]", NULL },
};

static const struct stk_gp_row stk_gp_acts[] = {
	STK_GP_ACT("sc-inc-gpc0", stk_parse_inc_gpc, stk_exec_inc_gpc, "(<0-2>)",
		   STK_DT_GPC0, STK_DT_GPC0_RATE, 0),
	STK_GP_ACT("sc-inc-gpc1", stk_parse_inc_gpc, stk_exec_inc_gpc, "(<0-2>)",
		   STK_DT_GPC1, STK_DT_GPC1_RATE, 0),
	STK_GP_ACT("sc-inc-gpc", stk_parse_inc_gpc, stk_exec_inc_gpc, "(<idx>,<0-2>)",
		   STK_DT_GPC, STK_DT_GPC_RATE, 1),
	STK_GP_ACT("sc-set-gpt0", stk_parse_set_gpt, stk_exec_set_gpt, "(<0-2>) <int>|<expr>",
		   STK_DT_GPT0, -1, 0),
	STK_GP_ACT("sc-set-gpt", stk_parse_set_gpt, stk_exec_set_gpt,
		   "(<idx>,<0-2>) <int>|<expr>", STK_DT_GPT, -1, 1),
};

/* ---- fetches ---- */

enum stk_op {
	OP_DT,          /* read data type <dt> (legacy gpc0/gpc1/gpt0 located) */
	OP_KBYTES_IN, OP_KBYTES_OUT,
	OP_INC,         /* add one to counter <dt> and rate <rate>, return the count */
	OP_CLR,         /* return counter <dt>, then set it to 0 */
	OP_UPDT_CONN_CNT,
	OP_TRACKERS,
	OP_IN_TABLE,    /* converter in_table: whether the key has an entry */
};

/* Where a row of the sc_*, src_* and table_* families finds its entry. */
#define STK_SLOT_ARG  -1   /* sc_*: the slot is an argument */
#define STK_SLOT_SRC  -2   /* src_*: the client's address in the table */
#define STK_SLOT_CONV -3   /* table_*: the input sample in the table argument */

/* What a row of the sc_*, src_* and table_* families reads: its .priv, so
 * that one function serves the family. Arguments come in this order: the
 * element (<has_idx>), the slot (STK_SLOT_ARG), the table. */
struct stk_sel {
	enum stk_op op;
	int         dt;       /* STK_DT_* for OP_DT, OP_INC, OP_CLR */
	int         rate;     /* OP_INC: the rate counted with <dt>, -1 */
	int         slot;     /* 0-2 (sc<n>_*) or STK_SLOT_* */
	int         has_idx;  /* the first argument is an array's element (sc_get_gpc) */
};

#define STK_SEL(op, dt, rate, slot, has_idx) (&(const struct stk_sel){ op, dt, rate, slot, has_idx })

/* Runs <op> on element <idx> of entry <ts> of <t> (NULL: no entry, the value
 * is 0) into <smp>. Returns 1, or 0 when the table does not store what is
 * asked. */
static int stk_op_run(const struct stk_sel *sel, unsigned idx, struct stktable *t,
                      struct stksess *ts, struct sample *smp)
{
	int64_t v = 0;
	unsigned i;
	int dt;

	smp->type = SMP_T_SINT;
	smp->flags = 0;
	smp->u.sint = 0;
	switch (sel->op) {
	case OP_DT:
		dt = stk_dt_locate(t, sel->dt, &i);
		if (!stk_dt_stored(t, dt, i + idx))
			return 0;
		if (ts)
			stk_data_get_at(t, ts, dt, i + idx, &v);
		break;
	case OP_KBYTES_IN:
	case OP_KBYTES_OUT:
		dt = sel->op == OP_KBYTES_IN ? STK_DT_BYTES_IN_CNT : STK_DT_BYTES_OUT_CNT;
		if (t->off[dt] < 0)
			return 0;
		if (ts)
			stk_data_get(t, ts, dt, &v);
		v >>= 10;
		break;
	case OP_INC:
		if (!stk_gpc_inc(t, ts, sel->dt, sel->rate, idx, &v))
			return 0;
		break;
	case OP_CLR:
		dt = stk_dt_locate(t, sel->dt, &i);
		if (!stk_dt_stored(t, dt, i + idx))
			return 0;
		if (ts) {
			stk_data_get_at(t, ts, dt, i + idx, &v);
			stk_data_set_at(t, ts, dt, i + idx, 0);
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
	return op == OP_INC || op == OP_CLR || op == OP_UPDT_CONN_CNT;
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

/* The argument table (a stub until declared: ptr set by stk_check()). */
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
	int slot = sel->slot;
	unsigned char key[STK_KEY_MAX];
	struct stktable *t;
	struct stksess *ts;
	unsigned idx = 0;
	uint32_t klen;

	if (!s)
		return 0;
	if (sel->has_idx)
		idx = (unsigned)(ta++)->sint;
	if (slot == STK_SLOT_ARG)
		slot = (int)(ta++)->sint;
	t = stk_arg_table(ta);
	if (slot >= 0) {
		const struct stk_ctr *c = &s->stkctr[slot];

		if (!c->ts)
			return 0;
		if (!t || t == c->t)
			return stk_op_run(sel, idx, c->t, c->ts, smp);
		/* the same key in another table */
		if (!t->buckets || t->type != c->t->type || t->key_size != c->t->key_size)
			return 0;
		ts = stk_op_creates(sel->op) ? stk_get(t, c->ts->key, c->ts->klen)
					     : stk_lookup(t, c->ts->key, c->ts->klen);
		return stk_op_run(sel, idx, t, ts, smp);
	}
	if (!t)
		t = stk_cur_table(s);
	if (!t || !t->buckets || stk_key_from_src(t, s, key, &klen) == -1)
		return 0;
	ts = stk_op_creates(sel->op) ? stk_get(t, key, klen) : stk_lookup(t, key, klen);
	return stk_op_run(sel, idx, t, ts, smp);
}

/* Argument checker of the whole family, walking the arguments as the row
 * says (struct stk_sel): an element from 0 to 99, a slot from 0 to 2, a
 * table name (required by the converters) made a reference to the table. */
static int stk_check(struct smp_arg *a, char **err, const void *priv)
{
	const struct stk_sel *sel = priv;

	if (sel->has_idx) {
		if (a->sint < 0 || a->sint >= STK_DT_NB_MAX) {
			*err = str_fmt("invalid element index %lld (expects 0 to %d)",
				       (long long)a->sint, STK_DT_NB_MAX - 1);
			return -1;
		}
		a++;
	}
	if (sel->slot == STK_SLOT_ARG) {
		if (a->sint < 0 || a->sint >= STK_CTR_SLOTS) {
			*err = str_fmt("invalid tracked counter slot %lld (expects 0 to %d)",
				       (long long)a->sint, STK_CTR_SLOTS - 1);
			return -1;
		}
		a++;
	}
	if (a->type == ARGT_STR && a->str && a->len)
		a->ptr = stk_table_ref(a->str, NULL, 0);
	else if (sel->slot == STK_SLOT_CONV) {
		*err = str_fmt("missing table name");
		return -1;
	}
	return 0;
}

/* table_cnt(<table>), table_avl(<table>): the table is required. */
static int stk_check_tbl_req(struct smp_arg *a, char **err, const void *priv)
{
	(void)priv;
	return stk_check(a, err, STK_SEL(OP_DT, 0, -1, STK_SLOT_CONV, 0));
}

/* Data read the same way by the fetches (sc_<name>, src_<name>) and the
 * converters (table_<name>): name, operation, data type. */
#define STK_COMMON_OPS(X) \
	X(conn_cnt,       OP_DT, STK_DT_CONN_CNT, -1) \
	X(conn_cur,       OP_DT, STK_DT_CONN_CUR, -1) \
	X(conn_rate,      OP_DT, STK_DT_CONN_RATE, -1) \
	X(sess_cnt,       OP_DT, STK_DT_SESS_CNT, -1) \
	X(sess_rate,      OP_DT, STK_DT_SESS_RATE, -1) \
	X(http_req_cnt,   OP_DT, STK_DT_HTTP_REQ_CNT, -1) \
	X(http_req_rate,  OP_DT, STK_DT_HTTP_REQ_RATE, -1) \
	X(http_err_cnt,   OP_DT, STK_DT_HTTP_ERR_CNT, -1) \
	X(http_err_rate,  OP_DT, STK_DT_HTTP_ERR_RATE, -1) \
	X(http_fail_cnt,  OP_DT, STK_DT_HTTP_FAIL_CNT, -1) \
	X(http_fail_rate, OP_DT, STK_DT_HTTP_FAIL_RATE, -1) \
	X(bytes_in_rate,  OP_DT, STK_DT_BYTES_IN_RATE, -1) \
	X(bytes_out_rate, OP_DT, STK_DT_BYTES_OUT_RATE, -1) \
	X(kbytes_in,      OP_KBYTES_IN, 0, -1) \
	X(kbytes_out,     OP_KBYTES_OUT, 0, -1) \
	X(gpc0_rate,      OP_DT, STK_DT_GPC0_RATE, -1) \
	X(gpc1_rate,      OP_DT, STK_DT_GPC1_RATE, -1)

/* The fetches' own: sc_get_gpc0, src_inc_gpc1... */
#define STK_FETCH_OPS(X) \
	STK_COMMON_OPS(X) \
	X(get_gpc0,       OP_DT, STK_DT_GPC0, -1) \
	X(get_gpc1,       OP_DT, STK_DT_GPC1, -1) \
	X(get_gpt0,       OP_DT, STK_DT_GPT0, -1) \
	X(inc_gpc0,       OP_INC, STK_DT_GPC0, STK_DT_GPC0_RATE) \
	X(inc_gpc1,       OP_INC, STK_DT_GPC1, STK_DT_GPC1_RATE) \
	X(clr_gpc0,       OP_CLR, STK_DT_GPC0, -1) \
	X(clr_gpc1,       OP_CLR, STK_DT_GPC1, -1)

/* The arrays' elements: sc_get_gpc(<idx>,<ctr>[,<table>]),
 * src_get_gpc(<idx>[,<table>]); only sc_* and src_* (no sc<n>_*). */
#define STK_ARRAY_FETCH_OPS(X) \
	X(get_gpc,  OP_DT, STK_DT_GPC, -1) \
	X(gpc_rate, OP_DT, STK_DT_GPC_RATE, -1) \
	X(get_gpt,  OP_DT, STK_DT_GPT, -1) \
	X(inc_gpc,  OP_INC, STK_DT_GPC, STK_DT_GPC_RATE) \
	X(clr_gpc,  OP_CLR, STK_DT_GPC, -1)

/* sc_tracked(<n>), sc<n>_tracked: whether the slot tracks an entry. */
static int stk_fetch_tracked(const struct smp_arg *args, struct sample *smp, struct stream *s,
                             const void *priv)
{
	int slot = ((const struct stk_sel *)priv)->slot;

	if (!s)
		return 0;
	if (slot == STK_SLOT_ARG)
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
#define STK_ROW(name, fn, a0, nmin, out, op, dt, rate, slot, idx) \
	{ name, fn, A a0, nmin, out, STK_USE, stk_check, STK_SEL(op, dt, rate, slot, idx) },
#define STK_ROWS_SC(name, fn, out, op, dt, rate) \
	STK_ROW("sc_" name, fn, (ARGT_SINT, ARGT_STR), 1, out, op, dt, rate, STK_SLOT_ARG, 0) \
	STK_ROW("sc0_" name, fn, (ARGT_STR), 0, out, op, dt, rate, 0, 0) \
	STK_ROW("sc1_" name, fn, (ARGT_STR), 0, out, op, dt, rate, 1, 0) \
	STK_ROW("sc2_" name, fn, (ARGT_STR), 0, out, op, dt, rate, 2, 0)
#define STK_ROWS(name, op, dt, rate) \
	STK_ROWS_SC(#name, stk_fetch, SMP_T_SINT, op, dt, rate) \
	STK_ROW("src_" #name, stk_fetch, (ARGT_STR), 0, SMP_T_SINT, op, dt, rate, STK_SLOT_SRC, 0)
#define STK_ARRAY_ROWS(name, op, dt, rate) \
	STK_ROW("sc_" #name, stk_fetch, (ARGT_SINT, ARGT_SINT, ARGT_STR), 2, SMP_T_SINT, op, dt, \
		rate, STK_SLOT_ARG, 1) \
	STK_ROW("src_" #name, stk_fetch, (ARGT_SINT, ARGT_STR), 1, SMP_T_SINT, op, dt, rate, \
		STK_SLOT_SRC, 1)

static const struct smp_fetch_kw stk_fetches[] = {
	STK_FETCH_OPS(STK_ROWS)
	STK_ARRAY_FETCH_OPS(STK_ARRAY_ROWS)
	STK_ROWS_SC("trackers", stk_fetch, SMP_T_SINT, OP_TRACKERS, 0, -1)
	STK_ROW("src_updt_conn_cnt", stk_fetch, (ARGT_STR), 0, SMP_T_SINT, OP_UPDT_CONN_CNT, 0, -1,
		STK_SLOT_SRC, 0)
	STK_ROWS_SC("tracked", stk_fetch_tracked, SMP_T_BOOL, OP_DT, 0, -1)
	{ "table_cnt", f_table_cnt, { ARGT_STR }, 1, SMP_T_SINT, SMP_USE_CONST | STK_USE,
	  stk_check_tbl_req, NULL },
	{ "table_avl", f_table_avl, { ARGT_STR }, 1, SMP_T_SINT, SMP_USE_CONST | STK_USE,
	  stk_check_tbl_req, NULL },
};

/* ---- converters: table_<data>(<table>) on the key in the sample ---- */

/* table_<data>([<idx>,]<table>) and in_table(<table>): the operation and
 * data type come from the row (struct stk_sel). */
static int stk_conv(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const struct stk_sel *sel = priv;
	unsigned idx = sel->has_idx ? (unsigned)a[0].sint : 0;
	struct stktable *t = a[sel->has_idx].ptr;
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
	return stk_op_run(sel, idx, t, ts, smp);
}

/* The converters' own: table_gpc0, table_server_id... */
#define STK_CONV_OPS(X) \
	STK_COMMON_OPS(X) \
	X(gpc0,      OP_DT, STK_DT_GPC0, -1) \
	X(gpc1,      OP_DT, STK_DT_GPC1, -1) \
	X(gpt0,      OP_DT, STK_DT_GPT0, -1) \
	X(server_id, OP_DT, STK_DT_SERVER_ID, -1) \
	X(trackers,  OP_TRACKERS, 0, -1)

#define STK_CONV_ROW(name, op, dt, rate) \
	{ "table_" #name, stk_conv, { ARGT_STR }, 1, SMP_T_ANY, SMP_T_SINT, \
	  stk_check, STK_SEL(op, dt, rate, STK_SLOT_CONV, 0) },
#define STK_ARRAY_CONV_ROW(name, op, dt, rate) \
	{ "table_" #name, stk_conv, { ARGT_SINT, ARGT_STR }, 2, SMP_T_ANY, SMP_T_SINT, \
	  stk_check, STK_SEL(op, dt, rate, STK_SLOT_CONV, 1) },

static const struct smp_conv_kw stk_convs[] = {
	STK_CONV_OPS(STK_CONV_ROW)
	STK_ARRAY_CONV_ROW(gpc, OP_DT, STK_DT_GPC, -1)
	STK_ARRAY_CONV_ROW(gpc_rate, OP_DT, STK_DT_GPC_RATE, -1)
	STK_ARRAY_CONV_ROW(gpt, OP_DT, STK_DT_GPT, -1)
	{ "in_table", stk_conv, { ARGT_STR }, 1, SMP_T_ANY, SMP_T_BOOL, stk_check,
	  STK_SEL(OP_IN_TABLE, 0, -1, STK_SLOT_CONV, 0) },
};

SLUICE_INIT(stk_fetch_register)
{
	act_register(stk_acts, ARRAY_SIZE(stk_acts));
	act_register_ext(&stk_gp_acts[0].kw, ARRAY_SIZE(stk_gp_acts), sizeof(stk_gp_acts[0]), 0);
	smp_register_fetches(stk_fetches, ARRAY_SIZE(stk_fetches));
	smp_register_convs(stk_convs, ARRAY_SIZE(stk_convs));
}
