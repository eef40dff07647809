/* HTTP rules (http_rules.h): the http-request, http-response and
 * http-after-response keywords, the actions only they offer (rows of the one
 * registry, action.h, each with a parser and an executor), rules inherited
 * from named defaults sections, and the post-parse checks. Redirects are in
 * redirect.c. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef USE_PCRE2
#include <pcre2.h>
#endif

#include <sluice/acl.h>
#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/http_reply.h>
#include <sluice/h1.h>
#include <sluice/http_rules.h>
#include <sluice/http_service.h>
#include <sluice/lexer.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/tcp_rules.h>
#include <sluice/units.h>

#include "rules_int.h"

/* Rule sets an action is valid in (act_kw.where). */
#define W_REQ   ACT_W_HTTP_REQ
#define W_RES   ACT_W_HTTP_RES
#define W_AFTER ACT_W_HTTP_AFTER
#define W_ALL   ACT_W_HTTP_ALL

/* The ACT_W_* bit of each rule set. */
static const unsigned set_act_w[HTTP_RS_COUNT] = {
	[HTTP_RS_REQ] = ACT_W_HTTP_REQ, [HTTP_RS_RES] = ACT_W_HTTP_RES,
	[HTTP_RS_AFTER] = ACT_W_HTTP_AFTER,
};

static const char *const set_kw[HTTP_RS_COUNT] = {
	"http-request", "http-response", "http-after-response",
};

enum hdr_match { HM_STR, HM_BEG, HM_END, HM_SUB, HM_REG };  /* del-header -m */
enum cap_fetch { CAP_HDR, CAP_FHDR, CAP_EXPR };                     /* capture <sample> */

/* What proxy->http_rules points into (at sets[0]). */
struct px_rules {
	struct http_rules   sets[HTTP_RS_COUNT];
	struct http_rules   redirects;  /* "redirect" keyword */
	const struct proxy *def;        /* defaults section whose rules run first */
};

/* ---- per-proxy storage ---- */

static struct px_rules *px_rules_of(const struct proxy *px)
{
	return px->http_rules ? container_of(px->http_rules, struct px_rules, sets[0]) : NULL;
}

static struct px_rules *px_rules_make(struct proxy *px)
{
	if (!px->http_rules) {
		struct px_rules *pr = xcalloc(1, sizeof(*pr));

		px->http_rules = pr->sets;
	}
	return px_rules_of(px);
}

struct http_rules *http_redirects_of(struct proxy *px, int make)
{
	struct px_rules *pr = make ? px_rules_make(px) : px_rules_of(px);

	return pr ? &pr->redirects : NULL;
}

struct http_rules *http_rules_of(struct proxy *px, enum http_rule_set set)
{
	static struct http_rules none;
	struct px_rules *pr = px_rules_of(px);

	BUG_ON(set >= HTTP_RS_COUNT, "bad rule set");
	return pr ? &pr->sets[set] : &none;
}

void http_rules_append(struct http_rules *rs, struct http_rule *r)
{
	if (rs->tail)
		rs->tail->next = r;
	else
		rs->head = r;
	rs->tail = r;
}

void http_fmt_free(struct http_fmt *f)
{
	if (f->lf) {
		lf_free(f->lf);
		free(f->lf);
	}
	free(f->str);
	memset(f, 0, sizeof(*f));
}

static void rule_free(struct http_rule *r)
{
	if (r->cond)
		acl_cond_free(r->cond);
	free(r->name);
	http_fmt_free(&r->fmt);
	if (r->expr) {
		smp_expr_free(r->expr);
		free(r->expr);
	}
#ifdef USE_PCRE2
	if (r->md)
		pcre2_match_data_free(r->md);
	if (r->re)
		pcre2_code_free(r->re);
#endif
	free(r->reason);
	if (r->reply) {
		http_reply_release(r->reply);
		free(r->reply);
	}
	if (r->redir)
		http_redirect_free(r->redir);
	if (r->gact && r->gact->free)
		r->gact->free(r->gpriv);
	free(r->loc.file);
	free(r);
}

static void rules_free(struct http_rules *rs)
{
	while (rs->head) {
		struct http_rule *r = rs->head;

		rs->head = r->next;
		rule_free(r);
	}
	rs->tail = NULL;
}

static int px_has_rules(const struct px_rules *pr)
{
	for (int i = 0; pr && i < HTTP_RS_COUNT; i++)
		if (pr->sets[i].head)
			return 1;
	return 0;
}

/* A proxy created after a defaults section holding rules runs them first:
 * each of its sets starts with a node pointing at the defaults' set, which
 * outlives it (proxy_free_all() frees defaults last). */
static void rules_inherit(struct proxy *px, const struct proxy *def)
{
	const struct px_rules *d = px_rules_of(def);
	struct px_rules *pr;

	if (!px_has_rules(d))
		return;
	pr = px_rules_make(px);
	pr->def = def;
	for (int i = 0; i < HTTP_RS_COUNT; i++) {
		struct http_rule *r;

		if (!d->sets[i].head)
			continue;
		r = xcalloc(1, sizeof(*r));
		r->inc = &d->sets[i];
		r->cap_id = -1;
		http_rules_append(&pr->sets[i], r);
	}
}

static void rules_release(struct proxy *px)
{
	struct px_rules *pr = px_rules_of(px);

	if (!pr)
		return;
	for (int i = 0; i < HTTP_RS_COUNT; i++)
		rules_free(&pr->sets[i]);
	rules_free(&pr->redirects);
	free(pr);
	px->http_rules = NULL;
}

/* ---- helpers shared by parsers ---- */

/* cfg_alert() naming the action (the "redirect" keyword is named already). */
void http_rule_alert(struct http_rule_parse *p, const char *fmt, ...)
{
	const struct act_kw *kw = p->r && p->r->gact ? p->r->gact : &p->kw->kw;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->set < 0)
		cfg_alert(p->ctx, "%s", msg);
	else
		cfg_alert(p->ctx, "'%s': %s", kw->name, msg);
}

/* Are <n> more words there? Else says what the action expects. */
int http_rule_need(struct http_rule_parse *p, int n)
{
	if (p->argc - p->idx >= n)
		return 0;
	http_rule_alert(p, "expects %s", p->kw->kw.usage);
	return -1;
}

static int hdr_name_ok(const char *s)
{
	return h1_is_token(s, strlen(s));
}

static int p_hdr_name(struct http_rule_parse *p, const char *name)
{
	if (!hdr_name_ok(name)) {
		http_rule_alert(p, "invalid header name '%s'", name);
		return -1;
	}
	p->r->name = xstrdup(name);
	p->r->nlen = (uint32_t)strlen(name);
	return 0;
}

/* Stores <text> in <f>: as a literal when it holds no '%' (the fast path:
 * no log-format machinery at run time), else compiled as a log-format. */
int http_fmt_parse(struct http_rule_parse *p, struct http_fmt *f, const char *text, int use_lf)
{
	char *err = NULL;

	f->str = xstrdup(text);
	f->len = (uint32_t)strlen(text);
	if (!use_lf || !strchr(text, '%'))
		return 0;
	f->lf = xcalloc(1, sizeof(*f->lf));
	if (lf_compile(text, f->lf, &err) == -1) {
		http_rule_alert(p, "invalid log-format string '%s': %s", text,
				err ? err : "syntax error");
		free(err);
		free(f->lf);
		f->lf = NULL;
		return -1;
	}
	return 0;
}

int http_rule_regex(struct http_rule_parse *p, const char *pattern)
{
#ifdef USE_PCRE2
	struct http_rule *r = p->r;
	PCRE2_SIZE erroff;
	int errc;

	r->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &errc, &erroff, NULL);
	if (!r->re) {
		PCRE2_UCHAR why[120];

		pcre2_get_error_message(errc, why, sizeof(why));
		http_rule_alert(p, "invalid regex '%s' at offset %zu: %s", pattern,
				(size_t)erroff, why);
		return -1;
	}
	pcre2_jit_compile(r->re, PCRE2_JIT_COMPLETE);   /* best effort: interpreted otherwise */
	r->md = pcre2_match_data_create_from_pattern(r->re, NULL);
	BUG_ON(!r->md, "out of memory for regex match data");
	return 0;
#else
	http_rule_alert(p, "regular expressions need PCRE2, and this sluice was built without it");
	return -1;
#endif
}

/* ---- helpers shared by executors ---- */

/* Renders <f>: a literal is returned as it is, a log-format is rendered
 * into <buf>. Returns 0, or -1 when the result may not have fit. */
int http_fmt_render(struct http_rule_exec *x, const struct http_fmt *f, char *buf, size_t size,
                    const char **v, size_t *vlen)
{
	if (!f->lf) {
		*v = f->str;
		*vlen = f->len;
		return 0;
	}
	/* filled once per rule set, again only for a format needing more */
	if (!x->lf_ready || (f->lf->needs & ~x->lf_needs)) {
		x->lf_needs |= f->lf->needs;
		http_fill_lf_ctx(x->s, &x->lf, x->lf_needs);
		x->lf_ready = 1;
	}
	*vlen = lf_render(f->lf, &x->lf, buf, size);
	*v = buf;
	return *vlen + 1 >= size ? -1 : 0;   /* lf_render truncates silently */
}

/* Appends <len> bytes to buf[*n] (<size> bytes). Returns 0 or -1 (full). */
int http_buf_put(char *buf, size_t size, size_t *n, const char *s, size_t len)
{
	if (len > size - *n)
		return -1;
	memcpy(buf + *n, s, len);
	*n += len;
	return 0;
}

/* End of the comma-separated element starting at v[pos]: the offset of
 * the comma ending it (outside double quotes), or <len>. */
static uint32_t elem_end(const char *v, uint32_t len, uint32_t pos)
{
	int q = 0;

	for (; pos < len; pos++) {
		if (q && v[pos] == '\\' && pos + 1 < len)
			pos++;
		else if (v[pos] == '"')
			q = !q;
		else if (!q && v[pos] == ',')
			break;
	}
	return pos;
}

static int is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* Case-insensitive search of <n> in <h>. */
static int mem_has_ci(const char *h, size_t hl, const char *n, size_t nl)
{
	for (size_t i = 0; i + nl <= hl; i++)
		if (strncasecmp(h + i, n, nl) == 0)
			return 1;
	return 0;
}

int http_re_exec(void *re, void *md, const char *s, size_t len)
{
#ifdef USE_PCRE2
	int rc = pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, md, NULL);

	return rc > 0 ? rc : 0;
#else
	return 0;
#endif
}

int http_re_expand(void *md, int rc, const char *subj, const char *repl, size_t rlen, char *buf,
                   size_t size, size_t *n)
{
#ifdef USE_PCRE2
	const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);

	for (size_t i = 0; i < rlen; i++) {
		const char *src = repl + i;
		size_t len = 1;

		if (repl[i] == '\\' && i + 1 < rlen && isdigit((unsigned char)repl[i + 1])) {
			int g = repl[++i] - '0';

			len = 0;
			if (g < rc && ov[2 * g] != PCRE2_UNSET) {
				src = subj + ov[2 * g];
				len = ov[2 * g + 1] - ov[2 * g];
			}
		} else if (repl[i] == '\\' && i + 1 < rlen && repl[i + 1] == '\\') {
			i++;
		}
		if (http_buf_put(buf, size, n, src, len) == -1)
			return -1;
	}
	return 0;
#else
	return -1;
#endif
}

void http_uri_split(const struct http_str *u, struct http_uri_parts *up)
{
	uint32_t i = 0, path = u->len;

	if (u->len && (u->p[0] == '/' || u->p[0] == '*')) {
		path = 0;
	} else if (u->len && isalpha((unsigned char)u->p[0])) {
		/* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
		while (i < u->len && (isalnum((unsigned char)u->p[i]) || u->p[i] == '+' ||
				      u->p[i] == '-' || u->p[i] == '.'))
			i++;
		if (u->len - i >= 3 && memcmp(u->p + i, "://", 3) == 0) {
			for (i += 3; i < u->len && u->p[i] != '/' && u->p[i] != '?'; i++)
				;
			path = i;
		}
	}
	up->path = path;
	for (up->qmark = path; up->qmark < u->len && u->p[up->qmark] != '?'; up->qmark++)
		;
	up->len = u->len;
}

/* ---- actions ---- */

static int parse_none(struct http_rule_parse *p)
{
	return 0;
}

static enum http_act_ret exec_allow(const struct http_rule *r, struct http_rule_exec *x)
{
	return HTTP_ACT_ALLOW;
}

int http_parse_hdr_fmt(struct http_rule_parse *p)
{
	if (http_rule_need(p, 2) == -1 || p_hdr_name(p, p->argv[p->idx]) == -1 ||
	    http_fmt_parse(p, &p->r->fmt, p->argv[p->idx + 1], 1) == -1)
		return -1;
	p->idx += 2;
	return 0;
}

/* set-header (act->arg 1) and add-header (0): the value is rendered before
 * set-header removes the old fields, so that it may quote them. */
static enum http_act_ret exec_put_header(const struct http_rule *r, struct http_rule_exec *x)
{
	char buf[RULES_TMP];
	const char *v;
	size_t vlen;

	if (http_fmt_render(x, &r->fmt, buf, sizeof(buf), &v, &vlen) == -1 ||
	    (r->act->arg ? http_head_set : http_head_add)(x->h, r->name, r->nlen, v, vlen) == -1)
		return HTTP_ACT_ERR;
	return HTTP_ACT_CONT;
}

/* del-header <name> [-m str|beg|end|sub|reg] */
static int parse_del_header(struct http_rule_parse *p)
{
	static const char *const meths[] = { "str", "beg", "end", "sub", "reg" };
	const char *name;

	if (http_rule_need(p, 1) == -1)
		return -1;
	name = p->argv[p->idx++];
	p->r->how = HM_STR;
	if (p->idx < p->argc && strcmp(p->argv[p->idx], "-m") == 0) {
		int i;

		if (++p->idx >= p->argc) {
			http_rule_alert(p, "'-m' expects a matching method (str, beg, end, sub or reg)");
			return -1;
		}
		for (i = 0; i < (int)ARRAY_SIZE(meths) && strcmp(meths[i], p->argv[p->idx]); i++)
			;
		if (i == (int)ARRAY_SIZE(meths)) {
			http_rule_alert(p, "unknown matching method '%s' (expects str, beg, end, "
					"sub or reg)", p->argv[p->idx]);
			return -1;
		}
		p->r->how = i;
		p->idx++;
	}
	if (p->r->how == HM_REG) {
		p->r->name = xstrdup(name);
		return http_rule_regex(p, name);
	}
	return p_hdr_name(p, name);
}

static int hdr_name_matches(const struct http_rule *r, const struct http_str *n)
{
	switch (r->how) {
	case HM_BEG:
		return n->len >= r->nlen && strncasecmp(n->p, r->name, r->nlen) == 0;
	case HM_END:
		return n->len >= r->nlen &&
		       strncasecmp(n->p + n->len - r->nlen, r->name, r->nlen) == 0;
	case HM_SUB:
		return mem_has_ci(n->p, n->len, r->name, r->nlen);
	case HM_REG:
		return http_re_exec(r->re, r->md, n->p, n->len) > 0;
	default:
		return n->len == r->nlen && strncasecmp(n->p, r->name, r->nlen) == 0;
	}
}

static enum http_act_ret exec_del_header(const struct http_rule *r, struct http_rule_exec *x)
{
	struct http_head *h = x->h;

	if (r->how == HM_STR) {
		http_head_del(h, r->name, r->nlen);
		return HTTP_ACT_CONT;
	}
	for (int i = 0; i < h->nf;) {
		if (hdr_name_matches(r, &h->f[i].n))
			http_head_del_at(h, i);
		else
			i++;
	}
	return HTTP_ACT_CONT;
}

/* replace-header / replace-value <name> <regex> <fmt> */
static int parse_replace(struct http_rule_parse *p)
{
	if (http_rule_need(p, 3) == -1 || p_hdr_name(p, p->argv[p->idx]) == -1 ||
	    http_rule_regex(p, p->argv[p->idx + 1]) == -1 ||
	    http_fmt_parse(p, &p->r->fmt, p->argv[p->idx + 2], 1) == -1)
		return -1;
	p->idx += 3;
	return 0;
}

int http_head_replace_re(struct http_head *h, const char *name, size_t nlen, void *re, void *md,
                         int per_value, int (*repl)(void *arg, const char **v, size_t *len),
                         void *arg)
{
	char out[RULES_TMP];
	const char *rv = NULL;
	size_t rlen = 0;

	for (int i = http_head_find(h, name, nlen, 0); i >= 0; i = http_head_find(h, name, nlen, i + 1)) {
		const struct http_str v = h->f[i].v;
		uint32_t pos = 0;
		size_t n = 0;
		int changed = 0;

		for (;;) {
			/* the whole value, or each comma-separated one without
			 * the spaces around it, the separators kept */
			uint32_t e = per_value ? elem_end(v.p, v.len, pos) : v.len, a = pos, b = e;
			int rc = 0;

			while (per_value && a < b && is_ows(v.p[a]))
				a++;
			while (per_value && b > a && is_ows(v.p[b - 1]))
				b--;
			if (http_buf_put(out, sizeof(out), &n, v.p + pos, a - pos) == -1)
				return -1;
			if (b > a || !per_value)
				rc = http_re_exec(re, md, v.p + a, b - a);
			if (rc) {
				/* the replacement, made on the first match only */
				if ((!rv && repl(arg, &rv, &rlen) == -1) ||
				    http_re_expand(md, rc, v.p + a, rv, rlen, out, sizeof(out), &n) == -1)
					return -1;
				changed = 1;
			} else if (http_buf_put(out, sizeof(out), &n, v.p + a, b - a) == -1) {
				return -1;
			}
			if (http_buf_put(out, sizeof(out), &n, v.p + b, e - b + (e < v.len)) == -1)
				return -1;
			if (e >= v.len)
				break;
			pos = e + 1;
		}
		if (changed && http_head_set_value(h, i, out, n) == -1)
			return -1;
	}
	return 0;
}

/* The replacement of a replace-header/replace-value rule, rendered from its
 * format. */
struct repl_arg {
	const struct http_rule *r;
	struct http_rule_exec  *x;
	char                    buf[RULES_TMP];
};

static int repl_render(void *arg, const char **v, size_t *len)
{
	struct repl_arg *ra = arg;

	return http_fmt_render(ra->x, &ra->r->fmt, ra->buf, sizeof(ra->buf), v, len);
}

/* replace-header replaces each whole field value the regex matches (the
 * text around the match is not kept, as in HAProxy); replace-value each
 * comma-separated value. */
static enum http_act_ret exec_replace(const struct http_rule *r, struct http_rule_exec *x)
{
	struct repl_arg ra = { r, x, { 0 } };

	return http_head_replace_re(x->h, r->name, r->nlen, r->re, r->md, r->act->arg, repl_render,
				    &ra) == -1 ? HTTP_ACT_ERR : HTTP_ACT_CONT;
}

/* set-path / set-pathq / set-query / set-uri / set-method <fmt> */
static int parse_fmt(struct http_rule_parse *p)
{
	if (http_rule_need(p, 1) == -1 || http_fmt_parse(p, &p->r->fmt, p->argv[p->idx], 1) == -1)
		return -1;
	p->idx++;
	return 0;
}

int http_head_set_target(struct http_head *h, enum http_target_part part, const char *v,
                         size_t vlen)
{
	const struct http_str u = h->sl[HTTP_SL_URI];
	char buf[RULES_TMP];
	struct http_uri_parts up;
	size_t n = 0;
	int ret = 0;

	http_uri_split(&u, &up);
	switch (part) {
	case HTTP_TP_PATH:
	case HTTP_TP_PATHQ:
		/* Scheme and authority stay; an origin-form path cannot be empty. */
		if (!vlen && !up.path) {
			v = "/";
			vlen = 1;
		}
		ret |= http_buf_put(buf, sizeof(buf), &n, u.p, up.path);
		ret |= http_buf_put(buf, sizeof(buf), &n, v, vlen);
		if (part == HTTP_TP_PATH)
			ret |= http_buf_put(buf, sizeof(buf), &n, u.p + up.qmark, up.len - up.qmark);
		break;
	case HTTP_TP_QUERY:
		/* An existing '?' stays even when the query becomes empty; none
		 * is added for an empty one. */
		ret |= http_buf_put(buf, sizeof(buf), &n, u.p, up.qmark);
		if (up.qmark < up.len || vlen) {
			ret |= http_buf_put(buf, sizeof(buf), &n, "?", 1);
			ret |= http_buf_put(buf, sizeof(buf), &n, v, vlen);
		}
		break;
	default:
		ret |= http_buf_put(buf, sizeof(buf), &n, v, vlen);
		break;
	}
	return ret || http_head_set_sl(h, HTTP_SL_URI, buf, n) == -1 ? -1 : 0;
}

static enum http_act_ret exec_set_uri(const struct http_rule *r, struct http_rule_exec *x)
{
	char vbuf[RULES_TMP];
	const char *v;
	size_t vlen;

	if (http_fmt_render(x, &r->fmt, vbuf, sizeof(vbuf), &v, &vlen) == -1 ||
	    http_head_set_target(x->h, (enum http_target_part)r->act->arg, v, vlen) == -1)
		return HTTP_ACT_ERR;
	return HTTP_ACT_CONT;
}

static enum http_act_ret exec_set_method(const struct http_rule *r, struct http_rule_exec *x)
{
	char buf[RULES_TMP];
	const char *v;
	size_t vlen;

	if (http_fmt_render(x, &r->fmt, buf, sizeof(buf), &v, &vlen) == -1 ||
	    http_head_set_sl(x->h, HTTP_SL_METH, v, vlen) == -1)
		return HTTP_ACT_ERR;
	return HTTP_ACT_CONT;
}

/* set-status <status> [reason <str>] */
static int parse_set_status(struct http_rule_parse *p)
{
	const char *err;
	long v;

	if (http_rule_need(p, 1) == -1)
		return -1;
	if (parse_int(p->argv[p->idx], 100, 999, &v, &err) == -1) {
		http_rule_alert(p, "expects a status code between 100 and 999, got '%s'",
				p->argv[p->idx]);
		return -1;
	}
	p->r->status = (int)v;
	p->idx++;
	if (p->idx < p->argc && strcmp(p->argv[p->idx], "reason") == 0) {
		if (++p->idx >= p->argc) {
			http_rule_alert(p, "'reason' expects a text");
			return -1;
		}
		p->r->reason = xstrdup(p->argv[p->idx++]);
	}
	return 0;
}

static enum http_act_ret exec_set_status(const struct http_rule *r, struct http_rule_exec *x)
{
	const char *reason = r->reason ? r->reason : http_reason(r->status);
	char code[4];

	snprintf(code, sizeof(code), "%03d", r->status);
	if (http_head_set_sl(x->h, HTTP_SL_STATUS, code, 3) == -1 ||
	    http_head_set_sl(x->h, HTTP_SL_REASON, reason, strlen(reason)) == -1)
		return HTTP_ACT_ERR;
	return HTTP_ACT_CONT;
}

/* deny|tarpit [deny_status <status>] [reply arguments]: with no reply
 * argument, the proxy's error page for the status answers. */
static int parse_deny(struct http_rule_parse *p)
{
	static char status_word[] = "status";
	char *av[CFG_MAX_WORDS + 1];
	int status, reply_args = 0, i;

	if (p->kw->arg == HTTP_ACT_TARPIT)
		status = 500;
	else
		status = p->set == HTTP_RS_RES ? 502 : 403;
	if (p->argc > CFG_MAX_WORDS) {
		http_rule_alert(p, "too many arguments");
		return -1;
	}
	/* "deny_status N" is the older spelling of the reply's "status N". */
	for (i = 0; i < p->argc; i++)
		av[i] = strcmp(p->argv[i], "deny_status") == 0 ? status_word : p->argv[i];
	for (i = p->idx; i < p->argc && !http_is_cond_word(p->argv[i]); i++) {
		const char *err;
		long v;

		if (strcmp(p->argv[i], "deny_status") != 0) {
			reply_args = 1;
			continue;
		}
		if (i + 1 >= p->argc || parse_int(p->argv[i + 1], 200, 599, &v, &err) == -1) {
			http_rule_alert(p, "'deny_status' expects a status code between 200 and 599, "
					"got '%s'", i + 1 < p->argc ? p->argv[i + 1] : "");
			return -1;
		}
		status = (int)v;
		i++;
	}
	p->r->status = status;
	if (!reply_args) {
		p->idx = i;
		return 0;
	}
	p->r->reply = xcalloc(1, sizeof(*p->r->reply));
	if (http_reply_parse(p->ctx, p->argc, av, &p->idx, p->r->reply, status) == -1)
		return -1;
	p->r->status = p->r->reply->status;
	return 0;
}

static enum http_act_ret exec_deny(const struct http_rule *r, struct http_rule_exec *x)
{
	x->out->status = r->status;
	x->out->reply = r->reply;
	return (enum http_act_ret)r->act->arg;
}

/* auth [realm <realm>]: 401 with the proxy's error page for it and
 * "WWW-Authenticate: Basic realm=..."; the realm defaults to the name of
 * the proxy holding the rule, as in HAProxy. The header value is built
 * once here and kept in r->name. */
static int parse_auth(struct http_rule_parse *p)
{
	const char *realm = p->px && p->px->name ? p->px->name : "";

	if (p->idx < p->argc && strcmp(p->argv[p->idx], "realm") == 0) {
		if (p->idx + 1 >= p->argc || http_is_cond_word(p->argv[p->idx + 1])) {
			http_rule_alert(p, "'realm' expects a value");
			return -1;
		}
		realm = p->argv[p->idx + 1];
		p->idx += 2;
	}
	if (strchr(realm, '"') || strpbrk(realm, "\r\n")) {
		http_rule_alert(p, "the realm cannot hold '\"', CR or LF ('%s')", realm);
		return -1;
	}
	p->r->name = str_fmt("Basic realm=\"%s\"", realm);
	p->r->nlen = (uint32_t)strlen(p->r->name);
	p->r->status = 401;
	return 0;
}

static enum http_act_ret exec_auth(const struct http_rule *r, struct http_rule_exec *x)
{
	x->out->status = r->status;
	x->out->reply = NULL;
	x->out->www_auth = (struct http_str){ r->name, r->nlen };
	/* option http-use-proxy-header: a proxied request is asked for proxy
	 * credentials (userlist.c reads Proxy-Authorization then) */
	if (unlikely(x->s->txn->flags & TX_F_PX_AUTH)) {
		x->out->status = 407;
		x->out->proxy_auth = 1;
	}
	return HTTP_ACT_REPLY;
}

/* use-service <name>: a service of sluice answers the request */
static int parse_use_service(struct http_rule_parse *p)
{
	if (http_rule_need(p, 1) == -1)
		return -1;
	p->r->svc = http_service_find(p->argv[p->idx]);
	if (!p->r->svc) {
		cfg_alert(p->ctx, "use-service: unknown service '%s'", p->argv[p->idx]);
		return -1;
	}
	p->idx++;
	return 0;
}

static enum http_act_ret exec_use_service(const struct http_rule *r, struct http_rule_exec *x)
{
	x->out->service = r->svc;
	return HTTP_ACT_REPLY;
}

/* return [status <code>] [content-type <type>] [body] [hdr <name> <fmt>]* */
static int parse_return(struct http_rule_parse *p)
{
	p->r->reply = xcalloc(1, sizeof(*p->r->reply));
	if (http_reply_parse(p->ctx, p->argc, p->argv, &p->idx, p->r->reply, 200) == -1)
		return -1;
	p->r->status = p->r->reply->status;
	return 0;
}

static enum http_act_ret exec_return(const struct http_rule *r, struct http_rule_exec *x)
{
	x->out->status = r->status;
	x->out->reply = r->reply;
	return HTTP_ACT_REPLY;
}

/* capture <sample> len <length> | id <id>: a plain header fetch is read
 * straight from the head (its last value); any other sample expression is
 * evaluated and stored as text. */
static int parse_capture(struct http_rule_parse *p)
{
	static const struct {
		const char *name;
		int         fetch;
		unsigned    where;
	} fetches[] = {
		{ "req.hdr", CAP_HDR, W_REQ }, { "req.fhdr", CAP_FHDR, W_REQ },
		{ "res.hdr", CAP_HDR, W_RES | W_AFTER }, { "res.fhdr", CAP_FHDR, W_RES | W_AFTER },
		{ "hdr", CAP_HDR, W_ALL }, { "fhdr", CAP_FHDR, W_ALL },
	};
	const char *smp, *open, *how, *err;
	char name[256], *perr = NULL;
	size_t i, flen, nlen;
	long v;

	if (http_rule_need(p, 3) == -1)
		return -1;
	smp = p->argv[p->idx];
	open = strchr(smp, '(');
	flen = open ? (size_t)(open - smp) : 0;
	nlen = open ? strlen(open + 1) : 0;
	for (i = 0; i < ARRAY_SIZE(fetches); i++)
		if (flen == strlen(fetches[i].name) && strncmp(smp, fetches[i].name, flen) == 0)
			break;
	/* an occurrence ("hdr(x,2)"), a converter ("hdr(x),lower") or any
	 * other fetch goes through the sample engine */
	if (i == ARRAY_SIZE(fetches) || nlen < 2 || open[nlen] != ')' || nlen - 1 >= sizeof(name) ||
	    memchr(open + 1, ',', nlen - 1)) {
		p->r->expr = xcalloc(1, sizeof(*p->r->expr));
		if (smp_expr_parse(smp, p->r->expr, NULL, &perr) == -1) {
			http_rule_alert(p, "%s", perr);
			free(perr);
			return -1;
		}
		p->r->how = CAP_EXPR;
	} else if (!(fetches[i].where & set_act_w[p->set])) {
		http_rule_alert(p, "'%s' cannot be used in %s rules", fetches[i].name, set_kw[p->set]);
		return -1;
	} else {
		memcpy(name, open + 1, nlen - 1);
		name[nlen - 1] = '\0';
		if (p_hdr_name(p, name) == -1)
			return -1;
		p->r->how = fetches[i].fetch;
	}
	how = p->argv[p->idx + 1];
	if (strcmp(how, "len") == 0) {
		if (p->set != HTTP_RS_REQ) {
			http_rule_alert(p, "'len' is only possible in http-request rules (use 'id <id>')");
			return -1;
		}
		if (!(p->px->cap & PR_CAP_FE)) {
			http_rule_alert(p, "'len' creates a capture slot, which needs a frontend "
					"(use 'id <id>')");
			return -1;
		}
		if (parse_int(p->argv[p->idx + 2], 1, 65535, &v, &err) == -1) {
			http_rule_alert(p, "'len' expects a length between 1 and 65535, got '%s'",
					p->argv[p->idx + 2]);
			return -1;
		}
		p->r->cap_len = (int)v;
	} else if (strcmp(how, "id") == 0) {
		if (parse_int(p->argv[p->idx + 2], 0, 1000000, &v, &err) == -1) {
			http_rule_alert(p, "'id' expects a capture slot number, got '%s'",
					p->argv[p->idx + 2]);
			return -1;
		}
		p->r->cap_id = (int)v;
	} else {
		http_rule_alert(p, "expects 'len <length>' or 'id <id>' after the sample, got '%s'",
				how);
		return -1;
	}
	p->idx += 3;
	return 0;
}

static enum http_act_ret exec_capture(const struct http_rule *r, struct http_rule_exec *x)
{
	const struct http_head *h = x->h;
	int last = -1;
	uint32_t a = 0, b;
	struct http_str v;

	if (r->cap_id < 0)
		return HTTP_ACT_CONT;   /* its slot was never made (no post-parse) */
	if (r->how == CAP_EXPR) {
		struct sample smp = { 0 };
		char buf[RULES_TMP];
		size_t n;

		if (!smp_expr_eval(r->expr, x->s, &smp))
			return HTTP_ACT_CONT;   /* no sample, nothing captured */
		n = smp_to_text(&smp, buf, sizeof(buf));
		if (r->cap_len && n > (size_t)r->cap_len)
			n = (size_t)r->cap_len;
		http_capture_set(x->s, !!(h->flags & HTTP_HEAD_F_RESP), r->cap_id, buf, n);
		return HTTP_ACT_CONT;
	}
	for (int i = http_head_find(h, r->name, r->nlen, 0); i >= 0;
	     i = http_head_find(h, r->name, r->nlen, i + 1))
		last = i;
	if (last < 0)
		return HTTP_ACT_CONT;   /* no sample, nothing captured */
	v = h->f[last].v;
	b = v.len;
	if (r->how == CAP_HDR) {
		/* the last comma-separated value of the last field */
		for (uint32_t e = elem_end(v.p, v.len, 0); e < v.len; e = elem_end(v.p, v.len, a))
			a = e + 1;
		while (a < b && is_ows(v.p[a]))
			a++;
		while (b > a && is_ows(v.p[b - 1]))
			b--;
	}
	if (r->cap_len && b - a > (uint32_t)r->cap_len)
		b = a + (uint32_t)r->cap_len;
	http_capture_set(x->s, !!(h->flags & HTTP_HEAD_F_RESP), r->cap_id, v.p + a, b - a);
	return HTTP_ACT_CONT;
}

static int is_capture(const struct http_rule *r)
{
	return r->act && r->act->exec == exec_capture;
}

/* A stream-only action of the registry (action.h): its own parser and
 * executor, run through this engine's row <http_act_shared>. */
static int parse_shared(struct http_rule_parse *p)
{
	struct act_parse ap = { p->ctx, p->px, set_act_w[p->set], p->argc, p->argv, 1, NULL,
				act_digit(p->r->gact, p->argv[0]), p->r->gact };
	int ret = p->r->gact->parse(&ap);

	p->r->gpriv = ap.priv;   /* freed with the rule even on error */
	p->r->how = (int)ap.where;
	p->idx = ap.idx;
	return ret;
}

/* What a row's run() decided, in this engine's terms. */
static enum http_act_ret shared_verdict(enum act_ret ar, const struct act_res *res,
                                        struct http_act_out *out)
{
	switch (ar) {
	case ACT_RET_CONT:
		return HTTP_ACT_CONT;
	case ACT_RET_STOP:
		return HTTP_ACT_ALLOW;
	case ACT_RET_YIELD:
		return HTTP_ACT_YIELD;
	case ACT_RET_DONE:
		if (!res->reply)
			return HTTP_ACT_ABORT;
		out->reply = res->reply;
		out->status = res->reply->status;
		return HTTP_ACT_REPLY;
	case ACT_RET_DENY:
		return HTTP_ACT_DENY;
	case ACT_RET_ABORT:
		return HTTP_ACT_ABORT;
	case ACT_RET_INVALID:
		return HTTP_ACT_INVALID;
	case ACT_RET_ERR:
	default:
		return HTTP_ACT_INTERNAL;
	}
}

static enum http_act_ret exec_shared(const struct http_rule *r, struct http_rule_exec *x)
{
	struct act_res res = { NULL, x->pos != NULL };
	enum act_ret ar;

	if (!r->gact->run) {
		r->gact->exec(r->gpriv, x->s, (unsigned)r->how);
		return HTTP_ACT_CONT;
	}
	ar = r->gact->run(r->gpriv, x->s, (unsigned)r->how, &res);
	BUG_ON(ar == ACT_RET_YIELD && !x->pos, "an action waited where it cannot");
	return shared_verdict(ar, &res, x->out);
}

/* Not registered: the engine's row for every stream-only action. */
static const struct http_act_kw http_act_shared = {
	{ "shared", 0, W_ALL, NULL, NULL, NULL, "", NULL }, 0, parse_shared, exec_shared
};

#define HA(name, where, usage) \
	.kw = { name, 0, (where), NULL, NULL, NULL, usage, NULL }

/* set-var and unset-var are stream-only rows of the registry (vars.c) */
static const struct http_act_kw http_acts[] = {
	{ HA("add-header", W_ALL, "<name> <format>"), 0, http_parse_hdr_fmt, exec_put_header },
	{ HA("allow", W_ALL, "nothing"), 0, parse_none, exec_allow },
	{ HA("auth", W_REQ, "[realm <realm>]"), 0, parse_auth, exec_auth },
	{ HA("capture", W_ALL, "<sample> len <length> | id <id>"), 0, parse_capture,
	  exec_capture },
	{ HA("del-header", W_ALL, "<name> [-m str|beg|end|sub|reg]"), 0, parse_del_header,
	  exec_del_header },
	{ HA("deny", W_REQ | W_RES, "[deny_status <status>] [reply arguments]"), HTTP_ACT_DENY,
	  parse_deny, exec_deny },
	{ HA("redirect", W_REQ | W_RES, "location|prefix|scheme <target> [code <code>] [options]"),
	  0, http_redirect_parse, http_redirect_run },
	{ HA("replace-header", W_ALL, "<name> <regex> <format>"), 0, parse_replace, exec_replace },
	{ HA("replace-value", W_ALL, "<name> <regex> <format>"), 1, parse_replace, exec_replace },
	{ HA("return", W_REQ | W_RES, "[reply arguments]"), 0, parse_return, exec_return },
	{ HA("set-header", W_ALL, "<name> <format>"), 1, http_parse_hdr_fmt, exec_put_header },
	{ HA("set-method", W_REQ, "<format>"), 0, parse_fmt, exec_set_method },
	{ HA("set-path", W_REQ, "<format>"), HTTP_TP_PATH, parse_fmt, exec_set_uri },
	{ HA("set-pathq", W_REQ, "<format>"), HTTP_TP_PATHQ, parse_fmt, exec_set_uri },
	{ HA("set-query", W_REQ, "<format>"), HTTP_TP_QUERY, parse_fmt, exec_set_uri },
	{ HA("set-status", W_RES | W_AFTER, "<status> [reason <text>]"), 0, parse_set_status,
	  exec_set_status },
	{ HA("set-uri", W_REQ, "<format>"), HTTP_TP_URI, parse_fmt, exec_set_uri },
	{ HA("tarpit", W_REQ, "[deny_status <status>] [reply arguments]"), HTTP_ACT_TARPIT,
	  parse_deny, exec_deny },
	{ HA("use-service", W_REQ, "<service name>"), 0, parse_use_service, exec_use_service },
};

const struct http_act_kw *http_act_find(const char *name)
{
	const struct act_kw *kw = act_find(name, ACT_W_HTTP_ALL);

	return kw && act_is_own(kw) ? container_of(kw, struct http_act_kw, kw) : NULL;
}

/* "a, b, c": the actions of the set <set>. */
static void act_list(enum http_rule_set set, char *buf, size_t size)
{
	struct act_names l = { buf, size, 0 };

	act_names_of(&l, set_act_w[set]);
}

/* ---- keywords ---- */

struct http_rule *http_rule_new(struct cfg_ctx *ctx, const struct http_act_kw *kw)
{
	struct http_rule *r = xcalloc(1, sizeof(*r));

	r->act = kw;
	r->cap_id = -1;
	r->loc.file = xstrdup(ctx->file);
	r->loc.line = ctx->line;
	return r;
}

/* Runs the action's parser, then takes the condition. Frees <p->r> on
 * error. Returns 0 or -1. */
int http_rule_parse_args(struct http_rule_parse *p)
{
	if (p->kw->parse(p) == -1)
		goto fail;
	if (p->idx < p->argc) {
		if (!http_is_cond_word(p->argv[p->idx])) {
			http_rule_alert(p, "unexpected argument '%s' (expects 'if', 'unless' or "
					"the end of the line)", p->argv[p->idx]);
			goto fail;
		}
		p->r->cond = acl_cond_parse(p->ctx, p->argc - p->idx, p->argv + p->idx);
		if (!p->r->cond)
			goto fail;
		if (p->set == HTTP_RS_REQ)
			acl_cond_check_request(p->ctx, p->r->cond);
	}
	return 0;
fail:
	rule_free(p->r);
	p->r = NULL;
	return -1;
}

/* http-request|http-response|http-after-response <action> [args] [cond] */
static int rules_kw(struct cfg_ctx *ctx, enum http_rule_set set, int argc, char **argv)
{
	struct proxy *px = ctx->px;
	const struct http_act_kw *kw;
	const struct act_kw *gact;
	struct http_rule_parse p;
	char list[1024];

	act_list(set, list, sizeof(list));
	if (act_rule_check(ctx, argc, list) == -1)
		return -1;
	gact = act_find(argv[0], ACT_W_HTTP_ALL);
	if (!gact)
		return act_alert_unknown(ctx, argv[0], list);
	if (!(gact->where & set_act_w[set])) {
		/* the word as written for a stream-only action, the name for ours */
		cfg_alert(ctx, "action '%s' is not possible in %s rules (expects %s)",
			  act_is_own(gact) ? gact->name : argv[0], set_kw[set], list);
		return -1;
	}
	if (act_is_own(gact)) {
		kw = container_of(gact, struct http_act_kw, kw);
		gact = NULL;
	} else {
		kw = &http_act_shared;
	}
	p = (struct http_rule_parse){ ctx, px, http_rule_new(ctx, kw), kw, (int)set, argc, argv, 1 };
	p.r->gact = gact;
	if (http_rule_parse_args(&p) == -1)
		return -1;
	http_rules_append(&px_rules_make(px)->sets[set], p.r);
	return 0;
}

void http_rules_prepend_action(struct cfg_ctx *ctx, struct proxy *px, enum http_rule_set set,
                                const struct act_kw *gact, void *priv)
{
	struct http_rules *rs = &px_rules_make(px)->sets[set];
	struct http_rule *r = http_rule_new(ctx, &http_act_shared);

	r->gact = gact;
	r->gpriv = priv;
	r->how = (int)set_act_w[set];
	r->next = rs->head;
	rs->head = r;
	if (!rs->tail)
		rs->tail = r;
}

static int kw_http_request(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return rules_kw(ctx, HTTP_RS_REQ, argc, argv);
}

static int kw_http_response(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return rules_kw(ctx, HTTP_RS_RES, argc, argv);
}

static int kw_http_after_response(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return rules_kw(ctx, HTTP_RS_AFTER, argc, argv);
}

/* ---- run time ---- */

enum http_act_ret http_rules_run(const struct http_rules *rs, struct http_rule_exec *x, int depth)
{
	struct http_rules_pos *pos = x->pos;
	const struct http_rule *r = pos && pos->n > depth ? pos->at[depth] : rs->head;

	for (; r; r = r->next) {
		enum http_act_ret ret;
		/* the rule whose action waited: its action goes on, its
		 * condition held when it started */
		int resumed = pos && pos->n == depth + 1 && r->act;

		if (resumed)
			pos->n = 0;
		if (!r->act) {
			ret = http_rules_run(r->inc, x, depth + 1);
		} else if (!resumed && r->cond && !acl_cond_exec(r->cond, x->s)) {
			continue;
		} else {
			if (unlikely(x->group) && r->act != x->group)
				http_rules_group_end(x);
			ret = r->act->exec(r, x);
			if (ret == HTTP_ACT_ERR && x->soft) {
				/* strict-mode off: a failed rewrite is counted, then ignored */
				if (x->s)
					x->s->fe->fe_counters.failed_rewrites++;
				ret = HTTP_ACT_CONT;
			}
		}
		if (ret == HTTP_ACT_YIELD) {
			pos->at[depth] = r;
			pos->soft = x->soft;
			if (r->act)
				pos->n = depth + 1;
			return ret;
		}
		if (ret != HTTP_ACT_CONT) {
			if (r->act && x->s)
				x->s->last_rule = &r->loc;   /* last_rule_file/line */
			return ret;
		}
	}
	return HTTP_ACT_CONT;
}

void http_act_out_reset(struct http_act_out *out)
{
	out->status = 0;
	out->reply = NULL;
	out->location = (struct http_str){ NULL, 0 };
	out->cookie = (struct http_str){ NULL, 0 };
	out->service = NULL;
	out->www_auth = (struct http_str){ NULL, 0 };
}

enum http_act_ret http_rules_exec(const struct http_rules *rules, struct stream *s,
                                  struct http_head *h, struct http_act_out *out)
{
	return http_rules_exec_at(rules, s, h, out, NULL);
}

enum http_act_ret http_rules_exec_at(const struct http_rules *rules, struct stream *s,
                                     struct http_head *h, struct http_act_out *out,
                                     struct http_rules_pos *pos)
{
	struct http_rule_exec x = { .s = s, .h = h, .out = out, .pos = pos };
	enum http_act_ret ret;

	http_act_out_reset(out);
	if (!rules->head)
		return HTTP_ACT_CONT;
	if (pos && pos->n)
		x.soft = pos->soft;   /* strict-mode as it was when the run waited */
	ret = http_rules_run(rules, &x, 0);
	if (unlikely(x.group))
		http_rules_group_end(&x);
	return ret;
}

void http_rules_group_end(struct http_rule_exec *x)
{
	void (*end)(struct http_rule_exec *x) = x->group_end;

	x->group = NULL;
	x->group_end = NULL;
	end(x);
}

/* ---- post-parse checks ---- */

/* The defaults section whose rules <px> runs first, or NULL. */
static const struct proxy *rules_def_of(const struct proxy *px)
{
	const struct px_rules *pr = px_rules_of(px);

	return pr ? pr->def : NULL;
}

/* As in HAProxy, rules of a defaults section are shared by reference, so
 * it may serve frontends or backends, not both, no listen and no other
 * defaults section. Returns the number of errors. */
static int rules_check_inherit(void)
{
	int errors = 0;

	for (struct proxy *px = global.defaults; px; px = px->next) {
		const struct px_rules *pr = px_rules_of(px);

		if (!pr || !pr->def)
			continue;
		log_alert("%s:%d: a defaults section cannot inherit from a defaults section "
			  "defining HTTP rules ('%s' at %s:%d)", px->conf_file, px->conf_line,
			  pr->def->name, pr->def->conf_file, pr->def->conf_line);
		errors++;
	}
	return errors + proxy_check_rules_def("HTTP", rules_def_of);
}

/* "capture ... len N" adds a request capture slot to its frontend, after
 * those declared so far; "id N" must name one. Returns the errors. */
static int rules_check_captures(struct proxy *px)
{
	struct px_rules *pr = px_rules_of(px);
	const struct http_px *hp;
	int errors = 0;

	if (!pr || !(px->cap & PR_CAP_FE))
		return 0;   /* a backend's frontends are only known at run time */
	for (struct http_rule *r = pr->sets[HTTP_RS_REQ].head; r; r = r->next) {
		struct http_px *w = px->http;
		struct http_capture *c;

		if (!is_capture(r) || !r->cap_len || r->cap_id >= 0)
			continue;   /* not a new slot, or made by an earlier post-parse */
		if (!w) {
			log_alert("%s:%d: 'http-request capture ... len' in '%s': the proxy has "
				  "no HTTP settings to hold the capture slot", r->loc.file,
				  r->loc.line, px->name);
			errors++;
			continue;
		}
		c = realloc(w->req_cap, sizeof(*c) * (size_t)(w->n_req_cap + 1));
		BUG_ON(!c, "out of memory adding a capture slot");
		w->req_cap = c;
		c[w->n_req_cap].name = xstrdup(r->name);
		c[w->n_req_cap].len = r->cap_len;
		r->cap_id = w->n_req_cap++;
	}
	hp = http_px_of(px);
	for (int set = 0; set < HTTP_RS_COUNT; set++) {
		int n = set == HTTP_RS_REQ ? hp->n_req_cap : hp->n_res_cap;

		for (struct http_rule *r = pr->sets[set].head; r; r = r->next) {
			if (!is_capture(r) || r->cap_len || r->cap_id < n)
				continue;
			log_alert("%s:%d: '%s capture': no %s capture slot %d in '%s' (it has %d)",
				  r->loc.file, r->loc.line, set_kw[set],
				  set == HTTP_RS_REQ ? "request" : "response", r->cap_id, px->name, n);
			errors++;
		}
	}
	return errors;
}

/* Whether <a> and <b> do the same thing: deny or tarpit with the same
 * status and the default page, or allow (the actions rule merging takes). */
static int rules_same_plain_action(const void *pa, const void *pb)
{
	const struct http_rule *a = pa, *b = pb;

	if (!a->act || a->act != b->act)
		return 0;
	if (a->act->exec == exec_allow)
		return 1;
	return a->act->exec == exec_deny && a->status == b->status && !a->reply && !b->reply;
}

static void rules_drop(void *r)
{
	rule_free(r);
}

/* Merges each run of rules of <rs> that do the same plain action under
 * conditions acl_cond_merge() can join (acl.h): one rule with the joined
 * condition stands for the run (same result, one lookup). */
static int rules_merge(struct http_rules *rs)
{
	void *last, *failed;
	char *err = NULL;

	if (acl_merge_rules(rs->head, offsetof(struct http_rule, next),
			    offsetof(struct http_rule, cond), rules_same_plain_action, rules_drop,
			    &last, &failed, &err) == -1) {
		const struct http_rule *r = failed;

		log_alert("%s:%d: merging rules: %s", r->loc.file, r->loc.line, err);
		free(err);
		return -1;
	}
	rs->tail = last;
	return 0;
}

static int rules_postparse(void)
{
	int errors = rules_check_inherit();

	for (struct proxy *px = global.proxies; px; px = px->next) {
		struct px_rules *pr = px_rules_of(px);

		if (!pr)
			continue;
		errors += rules_check_captures(px);
		for (int set = 0; set < HTTP_RS_COUNT; set++)
			errors += -rules_merge(&pr->sets[set]);
		if (px->mode == PR_MODE_HTTP || tcp_rules_switch_http(px))
			continue;   /* (switch-mode http: for the connections that switch) */
		for (int set = 0; set < HTTP_RS_COUNT; set++)
			if (pr->sets[set].head)
				log_warning("%s:%d: '%s' rules ignored for proxy '%s' as they require "
					    "'mode http'", px->conf_file, px->conf_line, set_kw[set],
					    px->name);
		if (pr->redirects.head)
			log_warning("%s:%d: 'redirect' rules ignored for proxy '%s' as they require "
				    "'mode http'", px->conf_file, px->conf_line, px->name);
	}
	return errors;
}

static struct cfg_kw rules_kws[] = {
	{ "http-request", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_http_request,
	  .usage = "<action> [arguments] [if|unless <condition>]" },
	{ "http-response", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_http_response,
	  .usage = "<action> [arguments] [if|unless <condition>]" },
	{ "http-after-response", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_http_after_response,
	  .usage = "<action> [arguments] [if|unless <condition>]" },
};

static struct proxy_ext rules_ext = { rules_inherit, rules_release, NULL };

SLUICE_INIT(rules_register)
{
	cfg_register(rules_kws, ARRAY_SIZE(rules_kws));
	act_register_ext(&http_acts[0].kw, ARRAY_SIZE(http_acts), sizeof(http_acts[0]), ACT_L_OWN);
	cfg_register_postparse(rules_postparse, 30);
	proxy_register_ext(&rules_ext);
}
