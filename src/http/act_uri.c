/* HTTP rule actions rewriting the request target by rule: replace-path,
 * replace-pathq and replace-uri (a regex and a replacement format), and
 * normalize-uri (the normalisers of uri_norm.h). Rows of the one action
 * registry (action.h), run by the HTTP rules engine (rules.c). */
#include <string.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_head.h>
#include <sluice/uri_norm.h>
#include <sluice/http_rules.h>

#include "rules_int.h"

/* replace-path|replace-pathq|replace-uri <regex> <fmt> */
static int uri_parse_replace(struct http_rule_parse *p)
{
	if (http_rule_need(p, 2) == -1 || http_rule_regex(p, p->argv[p->idx]) == -1 ||
	    http_fmt_parse(p, &p->r->fmt, p->argv[p->idx + 1], 1) == -1)
		return -1;
	p->idx += 2;
	return 0;
}

/* When the regex matches the part of the target the row names (its arg:
 * the path up to the '?', path and query, or the whole target), that
 * part becomes the replacement, in which \0 to \9 are the groups; the
 * text around the match is not kept, as with replace-header. */
static enum http_act_ret uri_exec_replace(const struct http_rule *r, struct http_rule_exec *x)
{
	const struct http_str u = x->h->sl[HTTP_SL_URI];
	char vbuf[RULES_TMP], out[RULES_TMP];
	struct http_uri_parts up;
	const char *subj = u.p, *v;
	size_t slen = u.len, vlen, n = 0;
	int rc;

	if (r->act->arg != HTTP_TP_URI) {
		http_uri_split(&u, &up);
		subj = u.p + up.path;
		slen = (r->act->arg == HTTP_TP_PATH ? up.qmark : up.len) - up.path;
	}
	rc = http_re_exec(r->re, r->md, subj, slen);
	if (!rc)
		return HTTP_ACT_CONT;
	if (http_fmt_render(x, &r->fmt, vbuf, sizeof(vbuf), &v, &vlen) == -1 ||
	    http_re_expand(r->md, rc, subj, v, vlen, out, sizeof(out), &n) == -1 ||
	    http_head_set_target(x->h, (enum http_target_part)r->act->arg, out, n) == -1)
		return HTTP_ACT_ERR;
	return HTTP_ACT_CONT;
}

/* normalize-uri <normaliser> [full|strict]: r->how holds the normaliser,
 * and its URI_NF_* flags shifted by 8. */
static int uri_parse_normalize(struct http_rule_parse *p)
{
	const char *w = p->idx < p->argc ? p->argv[p->idx] : "";
	const char *opt = NULL;
	int n;

	for (n = 0; n < URI_N_COUNT && strcmp(w, uri_norm_name(n)); n++)
		;
	if (n == URI_N_COUNT) {
		http_rule_alert(p, "%s%s%s normalizer (expects fragment-encode, fragment-strip, "
				"path-merge-slashes, path-strip-dot, path-strip-dotdot [full], "
				"percent-decode-unreserved [strict], percent-to-uppercase [strict] or "
				"query-sort-by-name)", *w ? "unknown '" : "expects a", w, *w ? "'" : "");
		return -1;
	}
	p->idx++;
	p->r->how = n;
	if (n == URI_N_PATH_STRIP_DOTDOT)
		opt = "full";
	else if (n == URI_N_PERCENT_DECODE_UNRESERVED || n == URI_N_PERCENT_TO_UPPERCASE)
		opt = "strict";
	if (opt && p->idx < p->argc && strcmp(p->argv[p->idx], opt) == 0) {
		p->r->how |= (URI_NF_FULL | URI_NF_STRICT) << 8;
		p->idx++;
	}
	return 0;
}

/* An invalid %-sequence under "strict" is a bad request (400); a result
 * that does not fit is a failed rewrite. */
static enum http_act_ret uri_exec_normalize(const struct http_rule *r, struct http_rule_exec *x)
{
	const struct http_str u = x->h->sl[HTTP_SL_URI];
	char out[RULES_TMP];
	long n = uri_normalize((enum uri_norm)(r->how & 0xff), (unsigned)r->how >> 8, u.p, u.len,
			       out, sizeof(out));

	if (n == URI_NORM_INVALID)
		return HTTP_ACT_INVALID;
	if (n < 0)
		return HTTP_ACT_ERR;
	if ((size_t)n == u.len && memcmp(out, u.p, u.len) == 0)
		return HTTP_ACT_CONT;
	return http_head_set_sl(x->h, HTTP_SL_URI, out, (size_t)n) == -1 ? HTTP_ACT_ERR :
	       HTTP_ACT_CONT;
}

#define HA(name, usage) \
	.kw = { name, 0, ACT_W_HTTP_REQ, NULL, NULL, NULL, usage, NULL }

static const struct http_act_kw uri_acts[] = {
	{ HA("normalize-uri", "<normalizer> [full|strict]"), 0, uri_parse_normalize,
	  uri_exec_normalize },
	{ HA("replace-path", "<regex> <format>"), HTTP_TP_PATH, uri_parse_replace,
	  uri_exec_replace },
	{ HA("replace-pathq", "<regex> <format>"), HTTP_TP_PATHQ, uri_parse_replace,
	  uri_exec_replace },
	{ HA("replace-uri", "<regex> <format>"), HTTP_TP_URI, uri_parse_replace,
	  uri_exec_replace },
};

SLUICE_INIT(http_act_uri_register)
{
	act_register_ext(&uri_acts[0].kw, ARRAY_SIZE(uri_acts), sizeof(uri_acts[0]), ACT_L_OWN);
}
