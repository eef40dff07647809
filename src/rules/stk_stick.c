/* Stick persistence: "stick on|match|store-request|store-response" rules
 * of a backend. Before load balancing, the match rules look the request's
 * key up and send it to the stored server when usable; once a server is
 * chosen (or its response head arrives), the store rules record it. */
#include <stdlib.h>
#include <string.h>

#include <sluice/acl.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/persist.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>

#include "stk_int.h"

/* The key of rule <r> for <s> into <key>. Returns 0, or -1 when the rule
 * does not apply (condition false, no sample, not a key of its table). */
static int stk_rule_key(const struct stk_rule *r, struct stream *s, unsigned char *key,
                        uint32_t *klen)
{
	struct sample smp = { 0 };

	if (!r->t->buckets || (r->cond && !acl_cond_exec(r->cond, s)))
		return -1;
	if (!smp_expr_eval(&r->expr, s, &smp))
		return -1;
	return stk_key_from_smp(r->t, &smp, key, klen);
}

struct server *stk_stick_match(struct stream *s)
{
	unsigned char key[STK_KEY_MAX];
	uint32_t klen;

	if (!s->be->stk)
		return NULL;
	for (const struct stk_rule *r = s->be->stk->rules; r; r = r->next) {
		struct stksess *ts;
		int64_t id;

		if (r->kind != STK_R_ON && r->kind != STK_R_MATCH)
			continue;
		if (stk_rule_key(r, s, key, &klen) == -1)
			continue;
		ts = stk_lookup(r->t, key, klen);
		if (!ts || !stk_data_get(r->t, ts, STK_DT_SERVER_ID, &id))
			continue;
		for (struct server *srv = s->be->servers; srv; srv = srv->next)
			if (srv->id == id) {
				/* a draining server keeps its stuck clients; a
				 * full one too: the caller queues on it */
				if (!(srv->flags & (SRV_F_ANY_MAINT | SRV_F_DOWN)))
					return srv;
				break;
			}
	}
	return NULL;
}

void stk_stick_store(struct stream *s, int res)
{
	unsigned char key[STK_KEY_MAX];
	uint32_t klen;

	/* "non-stick": a server that must not attract later connections */
	if (!s->ss.target || !s->be->stk || (s->ss.target->flags & SRV_F_NON_STICK))
		return;
	for (const struct stk_rule *r = s->be->stk->rules; r; r = r->next) {
		struct stksess *ts;

		if (res ? r->kind != STK_R_STORE_RES
			: r->kind != STK_R_ON && r->kind != STK_R_STORE_REQ)
			continue;
		if (stk_rule_key(r, s, key, &klen) == -1)
			continue;
		ts = stk_get(r->t, key, klen);
		if (ts)
			stk_data_set(r->t, ts, STK_DT_SERVER_ID, s->ss.target->id);
	}
}

/* stick on|match|store-request|store-response <pattern> [table <t>] [cond] */
static int stk_kw_stick(struct cfg_ctx *ctx, enum stk_rule_kind kind, int argc, char **argv)
{
	struct proxy *px = ctx->px;
	struct stk_rule *r;
	const char *tname = px->name;
	char *err = NULL;
	int i = 1;

	if (argc < 1) {
		cfg_alert(ctx, "expects <pattern> [table <table>] [{if | unless} <condition>]");
		return -1;
	}
	r = xcalloc(1, sizeof(*r));
	r->kind = kind;
	if (smp_expr_parse(argv[0], &r->expr, NULL, &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		free(r);
		return -1;
	}
	if (i < argc && strcmp(argv[i], "table") == 0) {
		if (i + 1 >= argc) {
			cfg_alert(ctx, "'table' expects a table name");
			goto fail;
		}
		tname = argv[i + 1];
		i += 2;
	}
	if (i < argc) {
		if (strcmp(argv[i], "if") && strcmp(argv[i], "unless")) {
			cfg_alert(ctx, "unexpected argument '%s' (expects 'table', 'if', 'unless' "
				  "or the end of the line)", argv[i]);
			goto fail;
		}
		r->cond = acl_cond_parse(ctx, argc - i, argv + i);
		if (!r->cond)
			goto fail;
	}
	r->t = stk_table_ref(tname, ctx->file, ctx->line);
	r->t->need_server_id = 1;
	*stk_px_get(px)->tail = r;
	px->stk->tail = &r->next;
	return 0;
fail:
	smp_expr_free(&r->expr);
	free(r);
	return -1;
}

/* The four "stick" keywords: the row's value is the rule kind. */
static int kw_stick(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	(void)target;
	return stk_kw_stick(ctx, (enum stk_rule_kind)ctx->kw_row->arg, argc, argv);
}

#define STK_STICK_USAGE "<pattern> [table <table>] [{if | unless} <condition>]"

static struct cfg_kw stk_stick_kws[] = {
	{ "stick on", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0, .parse = kw_stick,
	  .usage = STK_STICK_USAGE, .arg = STK_R_ON },
	{ "stick match", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0, .parse = kw_stick,
	  .usage = STK_STICK_USAGE, .arg = STK_R_MATCH },
	{ "stick store-request", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_stick, .usage = STK_STICK_USAGE, .arg = STK_R_STORE_REQ },
	{ "stick store-response", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_stick, .usage = STK_STICK_USAGE, .arg = STK_R_STORE_RES },
};

SLUICE_INIT(stk_stick_register)
{
	cfg_register(stk_stick_kws, ARRAY_SIZE(stk_stick_kws));
}
