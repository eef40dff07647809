/* Runtime API of the stick tables: "show table", "clear table" and
 * "set table" with HAProxy 2.6's output and filters. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/str.h>
#include <sluice/units.h>

#include "stk_int.h"

#define STK_MAX_FILTERS 4

enum stk_cmp { CMP_EQ, CMP_NE, CMP_LE, CMP_GE, CMP_LT, CMP_GT };
static const char *const stk_cmp_names[] = { "eq", "ne", "le", "ge", "lt", "gt" };

/* What a show/clear command selects: a key, or data filters, or all. */
struct stk_sel {
	struct stktable *t;
	int              has_key;
	unsigned char    key[STK_KEY_MAX];
	uint32_t         klen;
	int              nf;
	struct { int dt; unsigned idx; enum stk_cmp op; int64_t v; } f[STK_MAX_FILTERS];
};

/* "<type>" or, for an array, "<type>(<idx>)" (element 0 without it, as
 * HAProxy's "data.gpc"), after "data.": sets *<dt> and *<idx>. Returns 0, or
 * -1 when unknown (no such type, an index on a type that is no array, or
 * one out of 0-99). */
static int stk_cli_dt(const char *w, int *dt, unsigned *idx)
{
	size_t n = strcspn(w, "(");
	const char *err;
	long v = 0;

	*dt = stk_dt_find(w, n);
	if (*dt < 0)
		return -1;
	if (w[n]) {
		char num[8];
		size_t l = strlen(w + n + 1);

		if (!stk_dt_is_array(*dt) || l < 2 || l - 1 >= sizeof(num) || w[n + l] != ')')
			return -1;
		memcpy(num, w + n + 1, l - 1);
		num[l - 1] = '\0';
		if (parse_int(num, 0, STK_DT_NB_MAX - 1, &v, &err) == -1)
			return -1;
	}
	*idx = (unsigned)v;
	return 0;
}

static const char stk_clear_usage[] =
	"Required arguments: <table> \"data.<store_data_type>\" <operator> <value> or "
	"<table> key <key>\n";

/* Parses "<table> [data.<type> <op> <v>]... [key <k>]" from argv[2]. Returns
 * 0, or -1 after writing the error. */
static int stk_sel_parse(struct cli_ctx *ctx, int argc, char **argv, struct stk_sel *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->t = stk_table_find(argv[2]);
	if (!sel->t) {
		dstr_printf(&ctx->out, "No such table\n");
		return -1;
	}
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "key") == 0) {
			if (i + 1 >= argc) {
				dstr_printf(&ctx->out, "Key value expected\n");
				return -1;
			}
			if (stk_key_parse(sel->t, argv[i + 1], sel->key, &sel->klen) == -1) {
				dstr_printf(&ctx->out, "Invalid key '%s' for a table of type %s\n",
					    argv[i + 1], stk_key_type_name(sel->t->type));
				return -1;
			}
			sel->has_key = 1;
			i++;
		} else if (strncmp(argv[i], "data.", 5) == 0) {
			int n = sel->nf + 1, dt = -1;
			const char *err;
			unsigned idx = 0;
			long v;
			int op;

			if (sel->nf == STK_MAX_FILTERS) {
				dstr_printf(&ctx->out, "Too many filters (at most %d)\n",
					    STK_MAX_FILTERS);
				return -1;
			}
			if (stk_cli_dt(argv[i] + 5, &dt, &idx) == -1) {
				dstr_printf(&ctx->out, "Filter entry #%d: Unknown data type\n", n);
				return -1;
			}
			if (!stk_dt_stored(sel->t, dt, idx)) {
				dstr_printf(&ctx->out, "Filter entry #%d: Data type not stored in "
					    "this table\n", n);
				return -1;
			}
			for (op = 0; op < (int)ARRAY_SIZE(stk_cmp_names); op++)
				if (i + 1 < argc && strcmp(argv[i + 1], stk_cmp_names[op]) == 0)
					break;
			if (op == (int)ARRAY_SIZE(stk_cmp_names)) {
				dstr_printf(&ctx->out, "Filter entry #%d: Require and operator among "
					    "\"eq\", \"ne\", \"le\", \"ge\", \"lt\", \"gt\"\n", n);
				return -1;
			}
			if (i + 2 >= argc || parse_int(argv[i + 2], INT64_MIN / 2, INT64_MAX / 2, &v,
						       &err) == -1) {
				dstr_printf(&ctx->out, "Filter entry #%d: Require a valid integer "
					    "value to compare against\n", n);
				return -1;
			}
			sel->f[sel->nf].dt = dt;
			sel->f[sel->nf].idx = idx;
			sel->f[sel->nf].op = (enum stk_cmp)op;
			sel->f[sel->nf].v = v;
			sel->nf++;
			i += 2;
		} else {
			dstr_printf(&ctx->out, "Optional argument only supports "
				    "\"data.<store_data_type>\" <operator> <value> and key <key>\n");
			return -1;
		}
	}
	return 0;
}

static int stk_sel_match(const struct stk_sel *sel, struct stksess *ts)
{
	if (sel->has_key && (ts->klen != sel->klen || memcmp(ts->key, sel->key, sel->klen)))
		return 0;
	for (int i = 0; i < sel->nf; i++) {
		int64_t v = 0, w = sel->f[i].v;
		int ok = 0;

		stk_data_get_at(sel->t, ts, sel->f[i].dt, sel->f[i].idx, &v);
		switch (sel->f[i].op) {
		case CMP_EQ: ok = v == w; break;
		case CMP_NE: ok = v != w; break;
		case CMP_LE: ok = v <= w; break;
		case CMP_GE: ok = v >= w; break;
		case CMP_LT: ok = v < w; break;
		case CMP_GT: ok = v > w; break;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

static void stk_print_head(struct cli_ctx *ctx, const struct stktable *t)
{
	dstr_printf(&ctx->out, "# table: %s, type: %s, size:%u, used:%u\n", t->name,
		    stk_key_type_name(t->type), t->size, t->used);
}

static void stk_print_entry(struct cli_ctx *ctx, const struct stktable *t, struct stksess *ts)
{
	uint64_t now = stk_ms();
	char key[2 * STK_KEY_MAX + 1];

	stk_key_print(t, ts, key, sizeof(key));
	dstr_printf(&ctx->out, "%p: key=%s use=%u exp=%u", (void *)ts, key, ts->ref,
		    ts->exp > now ? (unsigned)(ts->exp - now) : 0);
	for (int dt = 0; dt < STK_DT_COUNT; dt++) {
		int64_t v;
		char name[32];

		/* an array's elements one by one: gpc0=.. gpc1=.. */
		for (unsigned i = 0; stk_data_get_at(t, ts, dt, i, &v); i++) {
			stk_dt_elem_name(dt, i, name, sizeof(name));
			if (stk_dt_is_rate(dt))
				dstr_printf(&ctx->out, " %s(%u)=%" PRId64, name, t->period[dt], v);
			else
				dstr_printf(&ctx->out, " %s=%" PRId64, name, v);
		}
	}
	dstr_printf(&ctx->out, "\n");
}

/* Key order, as HAProxy's trees list them. */
static int stk_cmp_entries(const void *a, const void *b)
{
	const struct stksess *x = *(struct stksess *const *)a, *y = *(struct stksess *const *)b;
	int c = memcmp(x->key, y->key, MIN(x->klen, y->klen));

	return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

/* Integer keys in numeric order. */
static int stk_cmp_int(const void *a, const void *b)
{
	const struct stksess *x = *(struct stksess *const *)a, *y = *(struct stksess *const *)b;
	uint32_t u, w;

	memcpy(&u, x->key, 4);
	memcpy(&w, y->key, 4);
	return (u > w) - (u < w);
}

static int cli_show_table(struct cli_ctx *ctx, int argc, char **argv)
{
	struct stk_sel sel;
	struct stksess **v, *ts;
	size_t n = 0;

	if (argc < 3) {
		for (struct stktable *t = stk_tables(); t; t = t->next)
			if (t->declared)
				stk_print_head(ctx, t);
		return 0;
	}
	if (stk_sel_parse(ctx, argc, argv, &sel) == -1)
		return -1;
	stk_expire(sel.t);
	stk_print_head(ctx, sel.t);
	if (!sel.t->used)
		return 0;
	v = xcalloc(sel.t->used, sizeof(*v));
	for (ts = sel.t->lru_head; ts; ts = ts->next)
		if (stk_sel_match(&sel, ts))
			v[n++] = ts;
	qsort(v, n, sizeof(*v), sel.t->type == STK_K_INT ? stk_cmp_int : stk_cmp_entries);
	for (size_t i = 0; i < n; i++)
		stk_print_entry(ctx, sel.t, v[i]);
	free(v);
	return 0;
}

static int cli_clear_table(struct cli_ctx *ctx, int argc, char **argv)
{
	struct stk_sel sel;
	struct stksess *ts, *next;

	if (argc < 3) {
		dstr_printf(&ctx->out, "%s", stk_clear_usage);
		return -1;
	}
	if (stk_sel_parse(ctx, argc, argv, &sel) == -1)
		return -1;
	for (ts = sel.t->lru_head; ts; ts = next) {
		next = ts->next;
		if (!ts->ref && stk_sel_match(&sel, ts))
			stk_remove(sel.t, ts);
	}
	return 0;
}

static int cli_set_table(struct cli_ctx *ctx, int argc, char **argv)
{
	unsigned char key[STK_KEY_MAX];
	struct stktable *t;
	struct stksess *ts;
	uint32_t klen;
	struct { int dt; unsigned idx; int64_t v; } *vals;
	int n = 0, ret = -1;
	long exp = -1;

	if (argc < 5 || strcmp(argv[3], "key") != 0) {
		dstr_printf(&ctx->out, "Required arguments: <table> key <key> [expire <ms>] "
			    "[data.<store_data_type> <value>]*\n");
		return -1;
	}
	t = stk_table_find(argv[2]);
	if (!t) {
		dstr_printf(&ctx->out, "No such table\n");
		return -1;
	}
	if (stk_key_parse(t, argv[4], key, &klen) == -1) {
		dstr_printf(&ctx->out, "Invalid key '%s' for a table of type %s\n", argv[4],
			    stk_key_type_name(t->type));
		return -1;
	}
	/* everything is checked before anything changes */
	vals = xcalloc((size_t)argc, sizeof(*vals));
	for (int i = 5; i < argc; i += 2) {
		const char *err;
		unsigned idx;
		long v;
		int dt;

		if (strcmp(argv[i], "expire") == 0 && i + 1 < argc) {
			if (parse_int(argv[i + 1], 0, INT32_MAX, &exp, &err) == -1) {
				dstr_printf(&ctx->out, "Require a valid expiry delay in milliseconds\n");
				goto out;
			}
			continue;
		}
		if (strncmp(argv[i], "data.", 5) != 0 || i + 1 >= argc) {
			dstr_printf(&ctx->out, "\"data.<type>\" followed by a value expected\n");
			goto out;
		}
		if (stk_cli_dt(argv[i] + 5, &dt, &idx) == -1) {
			dstr_printf(&ctx->out, "Unknown data type\n");
			goto out;
		}
		if (!stk_dt_stored(t, dt, idx)) {
			dstr_printf(&ctx->out, "Data type not stored in this table\n");
			goto out;
		}
		if (parse_int(argv[i + 1], dt == STK_DT_SERVER_ID ? INT32_MIN : 0,
			      stk_dt_max(dt), &v, &err) == -1) {
			dstr_printf(&ctx->out, "Require a valid integer value to store\n");
			goto out;
		}
		vals[n].dt = dt;
		vals[n].idx = idx;
		vals[n++].v = v;
	}
	ts = stk_get(t, key, klen);
	if (!ts) {
		dstr_printf(&ctx->out, "Unable to allocate a new entry\n");
		goto out;
	}
	for (int i = 0; i < n; i++)
		stk_data_set_at(t, ts, vals[i].dt, vals[i].idx, vals[i].v);
	if (exp >= 0)
		stk_set_exp(t, ts, (uint32_t)exp);
	ret = 0;
out:
	free(vals);
	return ret;
}

/* ---- state carried across reloads (the "tables" reload-state row) ---- */

/* One "set table" line per live entry of every declared table, oldest
 * first so that the new worker's LRU (expiry) order is the same: its key,
 * remaining expiry and every stored data (an array's elements each as
 * "data.<type>(<idx>)") but conn_cur (the connections it
 * counts stay with the old worker). A rate is carried as its value now,
 * which the new worker holds as the count of its current period. Entries
 * whose key no command line can carry (empty, or a string key holding NUL,
 * CR or LF) are left out. */
static void stk_reload_dump(struct dstr *out)
{
	uint64_t now = stk_ms();

	for (struct stktable *t = stk_tables(); t; t = t->next) {
		/* a table a local peer replicates goes through it (peers.c) */
		if (!t->declared || t->sync_local)
			continue;
		stk_expire(t);
		for (struct stksess *ts = t->lru_head; ts; ts = ts->next) {
			char key[2 * STK_KEY_MAX + 1];
			size_t start = out->len;
			int ok;

			stk_key_print(t, ts, key, sizeof(key));
			ok = dstr_printf(out, "set table ") == 0 &&
			     str_cli_quote(out, t->name, strlen(t->name)) == 0 &&
			     dstr_printf(out, " key ") == 0 &&
			     (t->type == STK_K_STR ? str_cli_quote(out, (const char *)ts->key, ts->klen) :
			      str_cli_quote(out, key, strlen(key))) == 0;
			if (!ok) {
				out->len = start;
				if (out->p)
					out->p[start] = '\0';
				continue;
			}
			if (t->expire && ts->exp)
				dstr_printf(out, " expire %u",
					    ts->exp > now ? (unsigned)(ts->exp - now) : 0);
			for (int dt = 0; dt < STK_DT_COUNT; dt++) {
				int64_t v;

				if (dt == STK_DT_CONN_CUR)
					continue;
				for (unsigned i = 0; stk_data_get_at(t, ts, dt, i, &v); i++) {
					dstr_printf(out, " data.%s", stk_dt_name(dt));
					if (stk_dt_is_array(dt))
						dstr_printf(out, "(%u)", i);
					dstr_printf(out, " %" PRId64, MIN(v, stk_dt_max(dt)));
				}
			}
			dstr_printf(out, "\n");
		}
	}
}

static struct cli_state_kw stk_reload_kws[] = {
	{ "tables", stk_reload_dump },
};

static struct cli_kw stk_cli_kws[] = {
	{ { "show", "table", NULL }, "show table [<table> [data.<type> <op> <v>]* [key <k>]]",
	  "report table usage stats or dump this table's contents", CLI_LVL_OPERATOR,
	  cli_show_table },
	{ { "clear", "table", NULL }, "clear table <table> [data.<type> <op> <v>]* [key <k>]",
	  "remove an entry from a table", CLI_LVL_ADMIN, cli_clear_table },
	{ { "set", "table", NULL }, "set table <table> key <k> [expire <ms>] [data.<type> <v>]*",
	  "update or create a table entry's data", CLI_LVL_ADMIN, cli_set_table },
};

SLUICE_INIT(stk_cli_register)
{
	cli_register(stk_cli_kws, ARRAY_SIZE(stk_cli_kws));
	cli_state_register(stk_reload_kws, ARRAY_SIZE(stk_reload_kws));
}
