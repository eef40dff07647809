/* TCP rules (tcp_rules.h): the tcp-request connection|session|content and
 * tcp-response content keywords, their inspect-delay, the actions only they
 * offer (rows of the one registry, action.h), rules inherited from named
 * defaults sections, and the engine the stream calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/acl.h>
#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/log.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/tcp_rules.h>
#include <sluice/units.h>

struct tcp_rule;

/* An action only tcp rules offer: its row of the registry (ACT_L_OWN), then
 * what the engine needs. */
struct tcp_act_kw {
	struct act_kw    kw;      /* first */
	enum tcp_verdict verdict; /* what it decides (TCP_V_ACCEPT for the others: go on) */
	int              stop;    /* it ends the rule set with <verdict> */
	int            (*parse)(struct act_parse *p, struct tcp_rule *r);  /* NULL: no argument */
	void           (*exec)(const struct tcp_rule *r, struct stream *s); /* NULL: nothing */
	unsigned         arg;     /* the row's own value for <exec> */
};

struct tcp_rule {
	const struct act_kw     *kw;      /* its row of the registry */
	const struct tcp_act_kw *act;     /* NULL: a stream-only action */
	void                    *gpriv;   /* a stream-only action's arguments */
	unsigned                 where;   /* the ACT_W_* bit of its set */
	struct acl_cond         *cond;
	struct smp_expr         *expr;    /* capture */
	struct act_loc           loc;     /* where it was written */
	const struct stream_service *svc; /* use-service */
	int                      cap;     /* capture: its slot; switch-mode: STRM_F_* */
};

/* Capture slots of a frontend (tcp-request content capture ... len N), mode
 * tcp: their values live in one pooled block per stream (s->tcp_cap): a
 * bitmask of the slots set, then each slot's NUL-terminated text at its
 * offset. */
#define TCP_CAP_MAX   32
#define TCP_CAP_SIZE  1024
#define TCP_CAP_HDR   sizeof(uint32_t)

/* What proxy->tcp_rules points to. */
struct tcp_px {
	struct tcp_rule   **rules[TCP_RS_COUNT];
	int                 n[TCP_RS_COUNT];
	uint32_t            delay[2];      /* inspect-delay, request and response, ms */
	int                 ncap;          /* capture slots */
	uint16_t            cap_len[TCP_CAP_MAX], cap_off[TCP_CAP_MAX];
	int                 switches;      /* has a switch-mode rule */
	const struct proxy *def;           /* defaults section whose rules run first */
};

static const char *const set_kw[TCP_RS_COUNT] = {
	"tcp-request connection", "tcp-request session", "tcp-request content",
	"tcp-response content",
};

static const unsigned set_w[TCP_RS_COUNT] = {
	ACT_W_TCP_CONN, ACT_W_TCP_SESS, ACT_W_TCP_REQ, ACT_W_TCP_RES,
};

static struct tcp_px *tcp_px_make(struct proxy *px)
{
	if (!px->tcp_rules)
		px->tcp_rules = xcalloc(1, sizeof(struct tcp_px));
	return px->tcp_rules;
}

/* ---- actions ---- */

/* use-service <name>: a service answers the stream (mode tcp) */
static int parse_use_service(struct act_parse *p, struct tcp_rule *r)
{
	if (p->idx >= p->argc) {
		cfg_alert(p->ctx, "action 'use-service' expects a service name");
		return -1;
	}
	r->svc = stream_service_find(p->argv[p->idx]);
	if (!r->svc) {
		cfg_alert(p->ctx, "action 'use-service': unknown TCP service '%s' (a Lua service "
			  "registered with mode 'tcp' is expected)", p->argv[p->idx]);
		return -1;
	}
	p->idx++;
	return 0;
}

static void exec_use_service(const struct tcp_rule *r, struct stream *s)
{
	s->svc = r->svc;
}

/* expect-proxy layer4, expect-netscaler-cip layer4 */
static int parse_expect_proxy(struct act_parse *p, struct tcp_rule *r)
{
	if (p->idx >= p->argc || strcmp(p->argv[p->idx], "layer4") != 0) {
		cfg_alert(p->ctx, "action '%s' expects 'layer4'", p->argv[0]);
		return -1;
	}
	p->idx++;
	return 0;
}

/* The header the row names (its arg: a STRM_F_EXPECT_* flag) is read
 * before anything else (stream.c, ST_PROXY). */
static void exec_expect_proxy(const struct tcp_rule *r, struct stream *s)
{
	s->tcp_flags |= r->act->arg;
}

/* capture <sample> len <length> */
static int parse_capture(struct act_parse *p, struct tcp_rule *r)
{
	struct tcp_px *tp = tcp_px_make(p->px);
	char *err = NULL, *end;
	long len;
	int off;

	if (p->argc - p->idx < 3 || strcmp(p->argv[p->idx + 1], "len") != 0) {
		cfg_alert(p->ctx, "action 'capture' expects <sample> len <length>");
		return -1;
	}
	if (!(p->px->cap & PR_CAP_FE) || (p->px->cap & PR_CAP_DEF)) {
		cfg_alert(p->ctx, "action 'capture' is only possible in a frontend or listen "
			  "section (it adds a capture slot to it)");
		return -1;
	}
	len = strtol(p->argv[p->idx + 2], &end, 10);
	off = tp->ncap ? tp->cap_off[tp->ncap - 1] + tp->cap_len[tp->ncap - 1] + 1 :
	      (int)TCP_CAP_HDR;
	if (*end || end == p->argv[p->idx + 2] || len < 1 || off + len + 1 > TCP_CAP_SIZE ||
	    tp->ncap == TCP_CAP_MAX) {
		cfg_alert(p->ctx, "action 'capture': '%s' is not a valid length (1 to what is left "
			  "of %d bytes for all captures, %d slots at most)", p->argv[p->idx + 2],
			  TCP_CAP_SIZE - (int)TCP_CAP_HDR, TCP_CAP_MAX);
		return -1;
	}
	r->expr = xcalloc(1, sizeof(*r->expr));
	if (smp_expr_parse(p->argv[p->idx], r->expr, NULL, &err) == -1) {
		cfg_alert(p->ctx, "action 'capture': %s", err);
		free(err);
		return -1;
	}
	r->cap = tp->ncap++;
	tp->cap_off[r->cap] = (uint16_t)off;
	tp->cap_len[r->cap] = (uint16_t)len;
	p->idx += 3;
	return 0;
}

static struct pool *cap_pool;

static void exec_capture(const struct tcp_rule *r, struct stream *s)
{
	const struct tcp_px *tp = s->fe->tcp_rules;
	struct sample smp = { 0 };
	char *v;

	if (s->fe->mode == PR_MODE_HTTP || !smp_expr_eval(r->expr, s, &smp))
		return;
	if (!s->tcp_cap) {
		if (!cap_pool)
			cap_pool = pool_create("tcp_capture", TCP_CAP_SIZE);
		s->tcp_cap = pool_alloc(cap_pool);
		if (!s->tcp_cap)
			return;
		memset(s->tcp_cap, 0, TCP_CAP_HDR);
	}
	v = s->tcp_cap + tp->cap_off[r->cap];
	(void)smp_to_text(&smp, v, (size_t)tp->cap_len[r->cap] + 1);
	*(uint32_t *)(void *)s->tcp_cap |= 1u << r->cap;
}

void tcp_rules_stream_release(struct stream *s)
{
	if (s->tcp_cap) {
		pool_free(cap_pool, s->tcp_cap);
		s->tcp_cap = NULL;
	}
}

/* capture.req.hdr(<slot>): a request capture: in mode http the slots of
 * "capture request header" and http-request capture, in mode tcp those of
 * tcp-request content capture. */
static int fetch_capture_req(const struct smp_arg *a, struct sample *smp, struct stream *s,
			     const void *priv)
{
	const char *v = NULL;
	int64_t i = a[0].sint;

	if (s->txn) {
		if (i >= 0 && i < http_px_of(s->fe)->n_req_cap && s->txn->req_cap)
			v = s->txn->req_cap[i];
	} else if (s->tcp_cap && s->fe->tcp_rules && i >= 0 && i < s->fe->tcp_rules->ncap &&
		   (*(const uint32_t *)(const void *)s->tcp_cap & (1u << i))) {
		v = s->tcp_cap + s->fe->tcp_rules->cap_off[i];
	}
	if (!v)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = v;
	smp->u.str.len = strlen(v);
	return 1;
}

static const struct smp_fetch_kw tcp_fetches[] = {
	{ "capture.req.hdr", fetch_capture_req, { ARGT_SINT, ARGT_STOP }, 1, SMP_T_STR,
	  SMP_USE_L4, NULL, NULL },
};

/* switch-mode http [proto h1|h2]: the rule's row value is its stream
 * flags, kept in r->cap (the rules are run by a frontend). */
static int parse_switch_mode(struct act_parse *p, struct tcp_rule *r)
{
	if (p->idx >= p->argc || strcmp(p->argv[p->idx], "http") != 0) {
		cfg_alert(p->ctx, "action 'switch-mode' expects 'http' (the only mode a connection "
			  "may switch to)");
		return -1;
	}
	p->idx++;
	if (!(p->px->cap & PR_CAP_FE)) {
		cfg_alert(p->ctx, "action 'switch-mode' is only possible in a proxy that may be a "
			  "frontend");
		return -1;
	}
	r->cap = STRM_F_HTTP_SWITCH;
	if (p->idx < p->argc && strcmp(p->argv[p->idx], "proto") == 0) {
		const char *n = p->idx + 1 < p->argc ? p->argv[p->idx + 1] : "";

		if (strcmp(n, "h1") != 0 && strcmp(n, "h2") != 0) {
			cfg_alert(p->ctx, "action 'switch-mode': unknown protocol '%s' (expects h1 or "
				  "h2)", n);
			return -1;
		}
		r->cap |= strcmp(n, "h1") == 0 ? STRM_F_PROTO_H1 : STRM_F_PROTO_H2;
		p->idx += 2;
	}
	tcp_px_make(p->px)->switches = 1;
	return 0;
}

/* The stream goes on in mode http (stream_tcp.c) once the rules stop. */
static void exec_switch_mode(const struct tcp_rule *r, struct stream *s)
{
	s->tcp_flags |= (unsigned)r->cap;
}

int tcp_rules_switch_http(const struct proxy *px)
{
	const struct tcp_px *tp = px->tcp_rules;

	return tp && (tp->switches || (tp->def && tcp_rules_switch_http(tp->def)));
}

static void exec_drop(const struct tcp_rule *r, struct stream *s)
{
	s->tcp_flags |= STRM_F_DROP;
}

#define W_REQ_ALL (ACT_W_TCP_CONN | ACT_W_TCP_SESS | ACT_W_TCP_REQ)
#define TA(name, where, usage) \
	.kw = { name, 0, (where), NULL, NULL, NULL, usage, NULL }

/* set-var and unset-var are stream-only rows of the registry (vars.c) */
static const struct tcp_act_kw tcp_acts[] = {
	{ TA("accept", ACT_W_TCP_ALL, "nothing"), TCP_V_ACCEPT, 1, NULL, NULL, 0 },
	{ TA("capture", ACT_W_TCP_REQ, "<sample> len <length>"), TCP_V_ACCEPT, 0, parse_capture,
	  exec_capture, 0 },
	{ TA("close", ACT_W_TCP_RES, "nothing"), TCP_V_CLOSE, 1, NULL, NULL, 0 },
	{ TA("expect-netscaler-cip", ACT_W_TCP_CONN, "layer4"), TCP_V_ACCEPT, 0,
	  parse_expect_proxy, exec_expect_proxy, STRM_F_EXPECT_CIP },
	{ TA("expect-proxy", ACT_W_TCP_CONN, "layer4"), TCP_V_ACCEPT, 0, parse_expect_proxy,
	  exec_expect_proxy, STRM_F_EXPECT_PROXY },
	{ TA("reject", ACT_W_TCP_ALL, "nothing"), TCP_V_REJECT, 1, NULL, NULL, 0 },
	{ TA("silent-drop", ACT_W_TCP_ALL, "nothing"), TCP_V_DROP, 1, NULL, exec_drop, 0 },
	{ TA("switch-mode", ACT_W_TCP_REQ, "http [proto h1|h2]"), TCP_V_ACCEPT, 1,
	  parse_switch_mode, exec_switch_mode, 0 },
	{ TA("use-service", ACT_W_TCP_REQ, "<service name>"), TCP_V_ACCEPT, 1, parse_use_service,
	  exec_use_service, 0 },
};

/* "a, b, c": the actions of set <set>. */
static void act_list(enum tcp_rule_set set, char *buf, size_t size)
{
	struct act_names l = { buf, size, 0 };

	act_names_of(&l, set_w[set]);
}

static void rule_free(struct tcp_rule *r)
{
	if (!r)
		return;
	if (!r->act && r->kw->free)
		r->kw->free(r->gpriv);
	acl_cond_free(r->cond);
	free(r->loc.file);
	if (r->expr) {
		smp_expr_free(r->expr);
		free(r->expr);
	}
	free(r);
}

/* ---- keywords ---- */

/* <set> <action> [args] [if|unless <cond>] */
static int rules_kw(struct cfg_ctx *ctx, enum tcp_rule_set set, int argc, char **argv)
{
	struct proxy *px = ctx->px;
	const struct act_kw *kw;
	struct tcp_rule *r;
	struct tcp_px *tp;
	struct act_parse ap;
	char list[1024];
	int ret;

	act_list(set, list, sizeof(list));
	if (act_rule_check(ctx, argc, list) == -1)
		return -1;
	kw = act_find(argv[0], ACT_W_TCP_ALL);
	if (!kw)
		return act_alert_unknown(ctx, argv[0], list);
	if (!(kw->where & set_w[set])) {
		cfg_alert(ctx, "action '%s' is not possible in %s rules (expects %s)", argv[0],
			  set_kw[set], list);
		return -1;
	}
	r = xcalloc(1, sizeof(*r));
	r->kw = kw;
	r->act = act_is_own(kw) ? container_of(kw, struct tcp_act_kw, kw) : NULL;
	r->where = set_w[set];
	r->loc.file = xstrdup(ctx->file);
	r->loc.line = ctx->line;
	ap = (struct act_parse){ ctx, px, set_w[set], argc, argv, 1, NULL,
				 act_digit(kw, argv[0]), kw };
	if (!r->act) {
		ret = kw->parse(&ap);
		r->gpriv = ap.priv;   /* freed with the rule even on error */
	} else {
		ret = r->act->parse ? r->act->parse(&ap, r) : 0;
	}
	if (ret == -1)
		goto fail;
	if (ap.idx < argc) {
		if (strcmp(argv[ap.idx], "if") != 0 && strcmp(argv[ap.idx], "unless") != 0) {
			cfg_alert(ctx, "action '%s': unexpected argument '%s' (expects 'if', 'unless' "
				  "or the end of the line)", argv[0], argv[ap.idx]);
			goto fail;
		}
		r->cond = acl_cond_parse(ctx, argc - ap.idx, argv + ap.idx);
		if (!r->cond)
			goto fail;
	}
	tp = tcp_px_make(px);
	tp->rules[set] = xrealloc(tp->rules[set], sizeof(*tp->rules[set]) * (size_t)(tp->n[set] + 1));
	tp->rules[set][tp->n[set]++] = r;
	return 0;
fail:
	rule_free(r);
	return -1;
}

void tcp_rules_prepend_action(struct proxy *px, enum tcp_rule_set set, const struct act_kw *kw,
                              void *priv)
{
	struct tcp_px *tp = tcp_px_make(px);
	struct tcp_rule *r = xcalloc(1, sizeof(*r));

	r->kw = kw;
	r->gpriv = priv;
	r->where = set_w[set];
	tp->rules[set] = xrealloc(tp->rules[set], sizeof(*tp->rules[set]) * (size_t)(tp->n[set] + 1));
	memmove(tp->rules[set] + 1, tp->rules[set], sizeof(*tp->rules[set]) * (size_t)tp->n[set]);
	tp->rules[set][0] = r;
	tp->n[set]++;
}

static int kw_req_connection(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return rules_kw(ctx, TCP_RS_CONN, argc, argv);
}

static int kw_req_session(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return rules_kw(ctx, TCP_RS_SESS, argc, argv);
}

static int kw_req_content(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return rules_kw(ctx, TCP_RS_REQ, argc, argv);
}

static int kw_res_content(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return rules_kw(ctx, TCP_RS_RES, argc, argv);
}

/* tcp-request|tcp-response inspect-delay <time> */
static int kw_inspect_delay(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *err = NULL;
	uint32_t ms;

	if (argc != 1) {
		cfg_alert(ctx, "expects a time (e.g. '5s')");
		return -1;
	}
	if (parse_time_ms(argv[0], 1, &ms, &err) == -1) {
		cfg_alert(ctx, "'%s': %s (expects a time, e.g. '5s')", argv[0],
			  err ? err : "invalid time");
		return -1;
	}
	tcp_px_make(ctx->px)->delay[ctx->kw_row->arg] = ms;   /* row value: 0 request, 1 response */
	return 0;
}

/* ---- engine ---- */

int tcp_rules_has(const struct proxy *px, enum tcp_rule_set set)
{
	const struct tcp_px *tp = px->tcp_rules;

	return tp && (tp->n[set] || (tp->def && tcp_rules_has(tp->def, set)));
}

uint32_t tcp_inspect_delay(const struct proxy *px, enum tcp_rule_set set)
{
	const struct tcp_px *tp = px->tcp_rules;

	return tp ? tp->delay[set == TCP_RS_RES] : 0;
}

/* Rule number <i> of the combined list (defaults first), NULL past the end. */
static const struct tcp_rule *rule_at(const struct tcp_px *tp, enum tcp_rule_set set, int i)
{
	const struct tcp_px *dp = tp->def ? tp->def->tcp_rules : NULL;
	int nd = dp ? dp->n[set] : 0;

	if (i < nd)
		return dp->rules[set][i];
	i -= nd;
	return i < tp->n[set] ? tp->rules[set][i] : NULL;
}

/* What a row's run() decided, in this engine's terms; TCP_V_ACCEPT with
 * <*stop> 0 to go on with the next rule. */
static enum tcp_verdict shared_verdict(enum act_ret ar, int *stop)
{
	*stop = 1;
	switch (ar) {
	case ACT_RET_CONT:
		*stop = 0;
		return TCP_V_ACCEPT;
	case ACT_RET_STOP:
		return TCP_V_ACCEPT;
	case ACT_RET_YIELD:
		return TCP_V_WAIT;
	case ACT_RET_DONE:
	case ACT_RET_ABORT:
		return TCP_V_CLOSE;
	default:
		return TCP_V_REJECT;
	}
}

/* Rule <r> of <set> ended its set: recorded for last_rule_file/line, for
 * the content sets only, as in HAProxy (a connection or session rule
 * runs before there is a stream to HAProxy). */
static void tcp_last_rule(struct stream *s, enum tcp_rule_set set, const struct tcp_rule *r)
{
	if (set == TCP_RS_REQ || set == TCP_RS_RES)
		s->last_rule = &r->loc;
}

enum tcp_verdict tcp_rules_exec(const struct proxy *px, enum tcp_rule_set set,
                                struct stream *s, int *pos, int flags)
{
	const struct tcp_px *tp = px->tcp_rules;
	enum tcp_verdict v = TCP_V_ACCEPT;
	const struct tcp_rule *r;
	int partial = flags & TCP_X_PARTIAL;

	if (!tp)
		return TCP_V_ACCEPT;
	s->smp_partial = partial ? (set == TCP_RS_RES ? STRM_PARTIAL_RES : STRM_PARTIAL_REQ) : 0;
	for (; (r = rule_at(tp, set, *pos)); (*pos)++) {
		/* an action that waited goes on: its condition held already */
		enum acl_test t = (s->tcp_flags & STRM_F_ACT_WAIT) ? ACL_TEST_PASS :
				  acl_cond_test(r->cond, s);

		s->tcp_flags &= ~STRM_F_ACT_WAIT;
		if (t == ACL_TEST_MISS) {
			if (partial) {
				v = TCP_V_WAIT;
				break;
			}
			t = ACL_TEST_FAIL;
		}
		if (t == ACL_TEST_FAIL)
			continue;
		if (!r->act && r->kw->run) {
			struct act_res res = { NULL, !!(flags & TCP_X_YIELD) };
			int stop;

			v = shared_verdict(r->kw->run(r->gpriv, s, r->where, &res), &stop);
			BUG_ON(v == TCP_V_WAIT && !(flags & TCP_X_YIELD), "an action waited where it cannot");
			if (v == TCP_V_WAIT)
				s->tcp_flags |= STRM_F_ACT_WAIT;
			if (stop) {
				if (v != TCP_V_WAIT)
					tcp_last_rule(s, set, r);
				break;
			}
			continue;
		}
		if (!r->act) {
			r->kw->exec(r->gpriv, s, r->where);
			continue;
		}
		if (r->act->exec)
			r->act->exec(r, s);
		if (r->act->stop) {
			v = r->act->verdict;
			tcp_last_rule(s, set, r);
			break;
		}
	}
	s->smp_partial = 0;
	return v;
}

/* ---- defaults, checks, release ---- */

/* As in HAProxy, a named defaults section's rules run before the proxy's
 * own; the section outlives the proxies using it. Its inspect-delays are
 * copied. */
static void tcp_inherit(struct proxy *px, const struct proxy *def)
{
	const struct tcp_px *d = def->tcp_rules;
	struct tcp_px *tp;

	if (!d)
		return;
	tp = tcp_px_make(px);
	tp->delay[0] = d->delay[0];
	tp->delay[1] = d->delay[1];
	for (int i = 0; i < TCP_RS_COUNT; i++)
		if (d->n[i])
			tp->def = def;
}

static void tcp_release(struct proxy *px)
{
	struct tcp_px *tp = px->tcp_rules;

	if (!tp)
		return;
	for (int i = 0; i < TCP_RS_COUNT; i++) {
		for (int j = 0; j < tp->n[i]; j++)
			rule_free(tp->rules[i][j]);
		free(tp->rules[i]);
	}
	free(tp);
	px->tcp_rules = NULL;
}

static const struct proxy *tcp_def_of(const struct proxy *px)
{
	const struct tcp_px *tp = px->tcp_rules;

	return tp ? tp->def : NULL;
}

/* A defaults section's rules serve either frontends or backends, as in
 * HAProxy. Warns about backend content rules without a delay. Returns the
 * number of errors. */
static int tcp_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		const struct tcp_px *tp = px->tcp_rules;

		for (int i = 0; tp && px->mode == PR_MODE_HTTP && i < tp->n[TCP_RS_REQ]; i++) {
			if (!tp->rules[TCP_RS_REQ][i]->svc)
				continue;
			log_alert("%s:%d: proxy '%s': 'tcp-request content use-service' needs mode tcp "
				  "(in mode http, use 'http-request use-service')", px->conf_file,
				  px->conf_line, px->name);
			errors++;
			break;
		}
		if (tp && tp->switches && px->mode == PR_MODE_HTTP)
			log_warning("%s:%d: proxy '%s': 'tcp-request content switch-mode http' does "
				    "nothing in mode http (the connection is HTTP already)",
				    px->conf_file, px->conf_line, px->name);
		else if (tp && tp->switches && (px->cap & PR_CAP_BE) && !px->defbe_name)
			log_warning("%s:%d: proxy '%s': 'switch-mode http' in a mode tcp proxy that is "
				    "its own backend: the connections upgraded to HTTP get a 503 unless "
				    "'use_backend' sends them to a backend in mode http (as in HAProxy, "
				    "they cannot go to its TCP servers)", px->conf_file, px->conf_line,
				    px->name);
		if (tp && tp->ncap && px->mode == PR_MODE_HTTP) {
			log_alert("%s:%d: proxy '%s': 'tcp-request content capture' is not supported "
				  "in mode http yet (use 'http-request capture')", px->conf_file,
				  px->conf_line, px->name);
			errors++;
		}

		/* HAProxy 2.6: a frontend never runs a defaults section's
		 * tcp-response rules, nor a backend its connection/session
		 * rules; inheriting them is an error */
		if (tp && tp->def && (px->cap & PR_CAP_FE) && !(px->cap & PR_CAP_BE) &&
		    tcp_rules_has(tp->def, TCP_RS_RES)) {
			log_alert("%s:%d: a frontend cannot inherit from a defaults section defining "
				  "'tcp-response content' rules ('%s' at %s:%d)", px->conf_file,
				  px->conf_line, tp->def->name, tp->def->conf_file, tp->def->conf_line);
			errors++;
		}
		if (tp && tp->def && (px->cap & PR_CAP_BE) && !(px->cap & PR_CAP_FE) &&
		    (tcp_rules_has(tp->def, TCP_RS_CONN) || tcp_rules_has(tp->def, TCP_RS_SESS))) {
			log_alert("%s:%d: a backend cannot inherit from a defaults section defining "
				  "'tcp-request connection' or 'tcp-request session' rules ('%s' at "
				  "%s:%d)", px->conf_file, px->conf_line, tp->def->name,
				  tp->def->conf_file, tp->def->conf_line);
			errors++;
		}
		if (tp && !(px->cap & PR_CAP_FE) && tp->n[TCP_RS_REQ] && !tp->delay[0] &&
		    px->mode == PR_MODE_TCP)
			log_warning("%s:%d: backend '%s': tcp-request content rules without "
				    "'tcp-request inspect-delay' only see what arrived with the "
				    "first packet", px->conf_file, px->conf_line, px->name);
	}
	return errors + proxy_check_rules_def("TCP", tcp_def_of);
}

#define RULE_USAGE "<action> [arguments] [if|unless <condition>]"

static struct cfg_kw tcp_cfg_kws[] = {
	{ "tcp-request connection", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_req_connection,
	  .usage = RULE_USAGE },
	{ "tcp-request session", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_req_session,
	  .usage = RULE_USAGE },
	{ "tcp-request content", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_req_content,
	  .usage = RULE_USAGE },
	{ "tcp-request inspect-delay", CFG_SEC_PROXIES, CFG_T_FUNC, 0,
	  .parse = kw_inspect_delay, .usage = "<time>", .arg = 0 },
	{ "tcp-response content", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_res_content,
	  .usage = RULE_USAGE },
	{ "tcp-response inspect-delay", CFG_SEC_BE, CFG_T_FUNC, 0,
	  .parse = kw_inspect_delay, .usage = "<time>", .arg = 1 },
};

static struct proxy_ext tcp_ext = { tcp_inherit, tcp_release, NULL };

SLUICE_INIT(tcp_rules_register)
{
	cfg_register(tcp_cfg_kws, ARRAY_SIZE(tcp_cfg_kws));
	act_register_ext(&tcp_acts[0].kw, ARRAY_SIZE(tcp_acts), sizeof(tcp_acts[0]), ACT_L_OWN);
	cfg_register_postparse(tcp_postparse, 30);
	proxy_register_ext(&tcp_ext);
	smp_register_fetches(tcp_fetches, ARRAY_SIZE(tcp_fetches));
}
