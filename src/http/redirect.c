/* HTTP redirects: the "redirect" keyword (its rules run after the
 * http-request ones) and the redirect action of http-request/http-response
 * rules, which share one parser and one Location builder. */
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_head.h>
#include <sluice/http_rules.h>
#include <sluice/proxy.h>
#include <sluice/str.h>
#include <sluice/units.h>

#include "rules_int.h"

enum redir_type { REDIR_LOCATION, REDIR_PREFIX, REDIR_SCHEME };

#define REDIR_F_DROP_QUERY   0x01  /* drop-query */
#define REDIR_F_APPEND_SLASH 0x02  /* append-slash */

struct http_redir {
	enum redir_type type;
	int             code;         /* 301, 302, 303, 307 or 308 */
	unsigned        flags;        /* REDIR_F_* */
	struct http_fmt target;       /* location, prefix or scheme */
	char           *cookie;       /* Set-Cookie value, NULL: none */
	uint32_t        cookie_len;
};

void http_redirect_free(struct http_redir *rd)
{
	http_fmt_free(&rd->target);
	free(rd->cookie);
	free(rd);
}

/* "code <code>" */
static int redir_parse_code(struct http_rule_parse *p, struct http_redir *rd, const char *v)
{
	const char *err;
	long c;

	if (parse_int(v, 301, 308, &c, &err) == -1 || (c > 303 && c < 307)) {
		http_rule_alert(p, "unsupported redirect code '%s' (301, 302, 303, 307 or 308)", v);
		return -1;
	}
	rd->code = (int)c;
	return 0;
}

static void redir_unknown_option(struct http_rule_parse *p, const char *o)
{
	static const char *const opts[] = {
		"code", "drop-query", "append-slash", "set-cookie", "clear-cookie",
	};
	struct cfg_suggest sg;
	const char *s;

	cfg_suggest_init(&sg, o);
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		cfg_suggest_add(&sg, opts[i]);
	s = cfg_suggest_pick(&sg);
	if (s)
		http_rule_alert(p, "unknown redirect option '%s'; did you mean '%s'?", o, s);
	else
		http_rule_alert(p, "unknown redirect option '%s' (expects code, drop-query, "
				"append-slash, set-cookie or clear-cookie)", o);
}

/* The target after type <t> at p->argv[p->idx]. Returns 0 or -1 (reported). */
static int redir_parse_target(struct http_rule_parse *p, struct http_redir *rd, int t)
{
	static const char *const types[] = { "location", "prefix", "scheme" };

	rd->type = (enum redir_type)t;
	if (p->idx + 1 >= p->argc) {
		http_rule_alert(p, "'%s' expects a target", types[t]);
		return -1;
	}
	if (p->set == HTTP_RS_RES && rd->type != REDIR_LOCATION) {
		http_rule_alert(p, "only 'location' redirects are possible in http-response rules");
		return -1;
	}
	/* A log-format in rules; the "redirect" keyword takes it literally. */
	return http_fmt_parse(p, &rd->target, p->argv[p->idx + 1], p->set >= 0);
}

int http_redirect_parse(struct http_rule_parse *p)
{
	static const char *const types[] = { "location", "prefix", "scheme" };
	struct http_redir *rd = xcalloc(1, sizeof(*rd));
	int t;

	p->r->redir = rd;
	rd->code = 302;
	if (http_rule_need(p, 1) == -1)
		return -1;
	/* As HAProxy reads it: the type and its target, and the options, in
	 * any order ("redirect code 301 location /" is valid). */
	for (t = -1; p->idx < p->argc && !http_is_cond_word(p->argv[p->idx]); p->idx++) {
		const char *o = p->argv[p->idx], *v;
		int k;

		for (k = 0; k < (int)ARRAY_SIZE(types) && strcmp(types[k], o); k++)
			;
		if (k < (int)ARRAY_SIZE(types) && t < 0) {
			t = k;
			if (redir_parse_target(p, rd, t) == -1)
				return -1;
			p->idx++;
			continue;
		}
		if (t < 0 && strcmp(o, "code") && strcmp(o, "drop-query") &&
		    strcmp(o, "append-slash") && strcmp(o, "set-cookie") && strcmp(o, "clear-cookie")) {
			http_rule_alert(p, "unknown redirect type '%s' (expects location, prefix or "
					"scheme)", o);
			return -1;
		}
		if (strcmp(o, "drop-query") == 0) {
			rd->flags |= REDIR_F_DROP_QUERY;
			continue;
		}
		if (strcmp(o, "append-slash") == 0) {
			rd->flags |= REDIR_F_APPEND_SLASH;
			continue;
		}
		if (strcmp(o, "code") && strcmp(o, "set-cookie") && strcmp(o, "clear-cookie")) {
			redir_unknown_option(p, o);
			return -1;
		}
		if (p->idx + 1 >= p->argc) {
			http_rule_alert(p, "'%s' expects %s", o, strcmp(o, "code") == 0 ?
					"a code (301, 302, 303, 307 or 308)" : "a cookie name");
			return -1;
		}
		v = p->argv[++p->idx];
		if (strcmp(o, "code") == 0) {
			if (redir_parse_code(p, rd, v) == -1)
				return -1;
			continue;
		}
		/* A session cookie for the whole site, or one expiring at once. */
		free(rd->cookie);
		rd->cookie = str_fmt(o[0] == 's' ? "%s; path=/;" : "%s; path=/; Max-Age=0;", v);
		BUG_ON(!rd->cookie, "out of memory");
		rd->cookie_len = (uint32_t)strlen(rd->cookie);
	}
	if (t < 0) {
		http_rule_alert(p, "expects a redirect type (location, prefix or scheme) and its "
				"target");
		return -1;
	}
	return 0;
}

/* Appends the request's path to buf[*n] as prefix and scheme redirects
 * want it: "/" for none or "*", a '/' added by append-slash at the end of
 * the path, then the query unless drop-query. Returns 0 or -1 (full). */
static int redir_put_path(const struct http_redir *rd, const struct http_head *h, char *buf,
                          size_t size, size_t *n)
{
	const struct http_str u = h->sl[HTTP_SL_URI];
	struct http_uri_parts up;
	const char *path;
	size_t plen;

	http_uri_split(&u, &up);
	path = u.p + up.path;
	plen = up.qmark - up.path;
	if (!plen || (plen == 1 && *path == '*')) {
		path = "/";
		plen = 1;
	}
	if (http_buf_put(buf, size, n, path, plen) == -1)
		return -1;
	if ((rd->flags & REDIR_F_APPEND_SLASH) && path[plen - 1] != '/' &&
	    http_buf_put(buf, size, n, "/", 1) == -1)
		return -1;
	if (!(rd->flags & REDIR_F_DROP_QUERY) &&
	    http_buf_put(buf, size, n, u.p + up.qmark, up.len - up.qmark) == -1)
		return -1;
	return 0;
}

enum http_act_ret http_redirect_run(const struct http_rule *r, struct http_rule_exec *x)
{
	const struct http_redir *rd = r->redir;
	struct http_head *h = x->h;
	char buf[RULES_TMP];
	const char *t, *loc;
	size_t tlen, n = 0;

	/* The target goes first: a log-format is rendered right in <buf>. */
	if (http_fmt_render(x, &rd->target, buf, sizeof(buf), &t, &tlen) == -1 ||
	    (t != buf && http_buf_put(buf, sizeof(buf), &n, t, tlen) == -1))
		return HTTP_ACT_ERR;
	n = tlen;
	if (rd->type == REDIR_PREFIX) {
		/* A prefix of exactly "/" inserts nothing: the same URL. */
		if (n == 1 && buf[0] == '/')
			n = 0;
		if (redir_put_path(rd, h, buf, sizeof(buf), &n) == -1)
			return HTTP_ACT_ERR;
	} else if (rd->type == REDIR_SCHEME) {
		/* The first Host field; none gives an empty authority. */
		int i = http_head_find(h, "host", 4, 0);

		if (http_buf_put(buf, sizeof(buf), &n, "://", 3) == -1 ||
		    (i >= 0 &&
		     http_buf_put(buf, sizeof(buf), &n, h->f[i].v.p, h->f[i].v.len) == -1) ||
		    redir_put_path(rd, h, buf, sizeof(buf), &n) == -1)
			return HTTP_ACT_ERR;
	}
	/* Made safe here rather than when the reply is written, so that a
	 * Location that does not fit once encoded gives a 500, not a reply
	 * without it. */
	loc = http_head_dup_safe(h, buf, &n, HTTP_SAFE_VALUE);
	if (!loc)
		return HTTP_ACT_ERR;
	x->out->status = rd->code;
	x->out->reply = NULL;
	x->out->location = (struct http_str){ loc, (uint32_t)n };
	if (rd->cookie)
		x->out->cookie = (struct http_str){ rd->cookie, rd->cookie_len };
	return HTTP_ACT_REPLY;
}

enum http_act_ret http_redirect_exec(struct proxy *px, struct stream *s, struct http_head *h,
                                     struct http_act_out *out)
{
	const struct http_rules *rs = http_redirects_of(px, 0);
	struct http_rule_exec x = { .s = s, .h = h, .out = out };

	http_act_out_reset(out);
	return rs && rs->head ? http_rules_run(rs, &x, 0) : HTTP_ACT_CONT;
}

/* redirect location|prefix|scheme <target> [options] [if|unless <cond>] */
static int kw_redirect(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const struct http_act_kw *kw = http_act_find("redirect");
	struct http_rule_parse p = { ctx, ctx->px, http_rule_new(ctx, kw), kw, -1, argc, argv, 0 };

	if (http_rule_parse_args(&p) == -1)
		return -1;
	http_rules_append(http_redirects_of(ctx->px, 1), p.r);
	return 0;
}

static struct cfg_kw redirect_kws[] = {
	{ "redirect", CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_redirect,
	  .usage = "location|prefix|scheme <target> [code <code>] [drop-query] [append-slash] "
	           "[set-cookie <name>[=<value>]] [clear-cookie <name>[=]]" },
};

SLUICE_INIT(redirect_register)
{
	cfg_register(redirect_kws, ARRAY_SIZE(redirect_kws));
}
