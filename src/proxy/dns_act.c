/* The do-resolve action (http-request, tcp-request content): resolves a
 * sample through a resolvers section (net/dns.c) while the rule set waits
 * (ACT_RET_YIELD, woken by the answer), and stores the address found in a
 * variable; answers are shared and kept `hold valid` by the resolution. */
#include <stdlib.h>
#include <string.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/dns.h>
#include <sluice/log.h>
#include <sluice/resolvers.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/vars.h>

/* A do-resolve rule. */
struct dns_act {
	struct dns_act       *next;      /* all rules, for the post-parse */
	struct var_ref        var;
	char                 *rs_name;
	struct dns_resolvers *rs;        /* found at post-parse */
	int                   family;    /* AF_INET, AF_INET6, or AF_UNSPEC (IPv6 first) */
	struct smp_expr       expr;
	char                 *file;
	int                   line;
};

/* A stream waiting for an answer (its slot of s->ext[]). */
struct dns_wait {
	struct dns_req        req;
	struct stream        *s;
	const struct dns_act *act;       /* the rule that waits */
	int                   done;      /* the resolution ended */
};

static struct dns_act *dns_acts;
static int dns_ext_slot;

/* do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr> */
static int dns_act_parse(struct act_parse *p)
{
	const char *w = p->argv[0], *open = strchr(w, '('), *close = strrchr(w, ')');
	char args[512], *save = NULL, *v, *r, *f, *err = NULL;
	struct dns_act *a = xcalloc(1, sizeof(*a));

	p->priv = a;
	a->file = xstrdup(p->ctx->file);
	a->line = p->ctx->line;
	a->next = dns_acts;
	dns_acts = a;
	if (!open || !close || close < open || close[1] ||
	    (size_t)(close - open - 1) >= sizeof(args)) {
		act_alert(p, "expects do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>");
		return -1;
	}
	snprintf(args, sizeof(args), "%.*s", (int)(close - open - 1), open + 1);
	v = strtok_r(args, ",", &save);
	r = strtok_r(NULL, ",", &save);
	f = strtok_r(NULL, ",", &save);
	if (!v || !r || strtok_r(NULL, ",", &save)) {
		act_alert(p, "expects do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>");
		return -1;
	}
	if (var_ref_parse(v, strlen(v), &a->var, &err) == -1) {
		act_alert(p, "%s", err);
		free(err);
		return -1;
	}
	a->rs_name = xstrdup(r);
	a->family = !f ? AF_UNSPEC : strcmp(f, "ipv4") == 0 ? AF_INET :
		    strcmp(f, "ipv6") == 0 ? AF_INET6 : -1;
	if (a->family == -1) {
		act_alert(p, "'%s': expects 'ipv4' or 'ipv6' as the third argument", f);
		return -1;
	}
	if (p->idx >= p->argc) {
		act_alert(p, "expects a sample expression (the name to resolve)");
		return -1;
	}
	if (smp_expr_parse(p->argv[p->idx], &a->expr, NULL, &err) == -1) {
		act_alert(p, "%s", err);
		free(err);
		return -1;
	}
	p->idx++;
	return 0;
}

static void dns_act_free(void *priv)
{
	struct dns_act *a = priv, **pp;

	if (!a)
		return;
	for (pp = &dns_acts; *pp && *pp != a; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = a->next;
	var_ref_release(&a->var);
	smp_expr_free(&a->expr);
	free(a->rs_name);
	free(a->file);
	free(a);
}

/* The resolution of a waiting stream ended: it goes on from its rule. */
static void dns_wait_done(struct dns_req *rq)
{
	struct dns_wait *w = container_of(rq, struct dns_wait, req);

	w->done = 1;
	stream_wake(w->s);
}

static void dns_wait_free(struct stream *s)
{
	struct dns_wait *w = s->ext[dns_ext_slot];

	s->ext[dns_ext_slot] = NULL;
	dns_req_detach(&w->req);
	free(w);
}

/* Stores in <a>'s variable the address of <res> (the family asked for
 * first), if it has one. */
static void dns_act_store(const struct dns_act *a, struct stream *s, const struct dns_res *res)
{
	const struct dns_item *pick = NULL;
	struct sample smp = { 0 };
	int want = a->family == AF_INET ? AF_INET : AF_INET6;

	if (res->status != DNS_ST_VALID)
		return;   /* as HAProxy: the variable is left unset */
	for (int i = 0; i < res->nitems; i++) {
		const struct dns_item *it = &res->items[i];

		if (it->family != AF_INET && it->family != AF_INET6)
			continue;
		if (!pick || (it->family == want && pick->family != want))
			pick = it;
	}
	if (!pick)
		return;
	if (pick->family == AF_INET) {
		smp.type = SMP_T_IPV4;
		smp.u.ipv4 = pick->ip.v4;
	} else {
		smp.type = SMP_T_IPV6;
		smp.u.ipv6 = pick->ip.v6;
	}
	var_set(&a->var, s, &smp);
}

static enum act_ret dns_act_run(void *priv, struct stream *s, unsigned where,
                                struct act_res *res)
{
	const struct dns_act *a = priv;
	struct dns_wait *w = s->ext[dns_ext_slot];
	struct sample smp = { 0 };
	char name[DNS_NAME_MAX + 1];
	int r;

	if (w && w->act == a) {
		if (!w->done)
			return ACT_RET_YIELD;   /* woken by something else */
		dns_act_store(a, s, w->req.res);
		dns_wait_free(s);
		return ACT_RET_CONT;
	}
	if (w)
		dns_wait_free(s);   /* what another rule left */
	if (!a->rs || !smp_expr_eval(&a->expr, s, &smp) || !smp_cast(&smp, SMP_T_STR) ||
	    !smp.u.str.len || smp.u.str.len > DNS_NAME_MAX)
		return ACT_RET_CONT;
	memcpy(name, smp.u.str.p, smp.u.str.len);
	name[smp.u.str.len] = 0;
	if (smp_parse_ip(name, smp.u.str.len, &smp)) {
		var_set(&a->var, s, &smp);   /* an address already: no question to ask */
		return ACT_RET_CONT;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return ACT_RET_CONT;
	w->s = s;
	w->act = a;
	w->req.done = dns_wait_done;
	r = dns_req_attach(&w->req, a->rs, name, a->family == AF_INET ? DNS_T_A : DNS_T_AAAA);
	if (r == 1)
		dns_act_store(a, s, w->req.res);   /* known and fresh: no wait */
	if (r != 0 || !res->can_yield) {
		/* a rule set that cannot wait goes on without the answer (it
		 * will be known to the next stream asking) */
		dns_req_detach(&w->req);
		free(w);
		return ACT_RET_CONT;
	}
	s->ext[dns_ext_slot] = w;
	return ACT_RET_YIELD;
}

/* The resolvers sections named by the rules. */
static int dns_act_postparse(void)
{
	int errors = 0;

	for (struct dns_act *a = dns_acts; a; a = a->next) {
		char *err = NULL;

		a->rs = resolvers_ref(a->rs_name, &err);
		if (!a->rs) {
			log_alert("%s:%d: do-resolve: '%s': %s", a->file, a->line, a->rs_name, err);
			free(err);
			errors++;
		}
	}
	return errors;
}

static const struct act_kw dns_act_kws[] = {
	{ "do-resolve", 0, ACT_W_HTTP_REQ | ACT_W_TCP_REQ, dns_act_parse, NULL, dns_act_free,
	  "(<var>,<resolvers>[,ipv4|ipv6]) <expr>", dns_act_run },
};

SLUICE_INIT(dns_act_register)
{
	act_register(dns_act_kws, ARRAY_SIZE(dns_act_kws));
	cfg_register_postparse(dns_act_postparse, 31);
	dns_ext_slot = stream_ext_register(dns_wait_free);
}
