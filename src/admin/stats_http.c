/* The HTTP stats page: the "stats ..." keywords of proxy sections and the
 * "stats" service answering "<stats uri>" (HTML), ";csv", ";json", with
 * HTTP Basic authentication, scopes and refresh. Rows come from stats.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <sluice/acl.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/counters.h>
#include <sluice/hist.h>
#include <sluice/global.h>
#include <sluice/http_head.h>
#include <sluice/http_service.h>
#include <sluice/pipe.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stats.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/units.h>
#include <sluice/ticks.h>

#define STATS_DEFAULT_URI   "/haproxy?stats"
#define STATS_DEFAULT_REALM "HAProxy Statistics"

struct stats_auth {
	char *user;
	char *pass;
};

/* Per-proxy settings of the stats page. */
struct stats_px {
	int                enabled;
	char              *uri;          /* NULL: STATS_DEFAULT_URI */
	char              *realm;        /* NULL: STATS_DEFAULT_REALM */
	struct stats_auth *auth;
	int                n_auth;
	uint32_t           refresh;      /* seconds, 0: none */
	int                hide_version;
	int                show_legends;
	int                show_node;
	char              *node;         /* show-node name, NULL: global node */
	int                show_desc;
	char              *desc;         /* show-desc text, NULL: global/proxy desc */
	char             **scope;
	int                n_scope;
	struct acl_cond  **admin;        /* "stats admin" conditions: admin when one holds */
	int                n_admin;
	struct stats_rule *rules;        /* "stats http-request", in order */
	int                n_rules;
};

/* A "stats http-request" rule. */
enum { SR_ALLOW, SR_DENY, SR_AUTH };
struct stats_rule {
	int              act;           /* SR_* */
	char            *realm;         /* auth: NULL for the page's realm */
	struct acl_cond *cond;          /* NULL: always */
};

/* Appends NUL-terminated <s>. */
static void put(struct dstr *out, const char *s)
{
	dstr_add(out, s, strlen(s));
}

/* ---- helpers shared with the exporter and the unit tests ---- */

int stats_b64_decode(const char *in, size_t len, char *out, size_t outsz)
{
	uint32_t acc = 0;
	int bits = 0, pad = 0;
	size_t o = 0;

	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)in[i], v;

		if (c == '=') {
			/* padding only at the end, at most two */
			if (i < len - 2 || ++pad > 2)
				return -1;
			continue;
		}
		if (pad)
			return -1;
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 >= outsz)
				return -1;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (!outsz)
		return -1;
	out[o] = 0;
	return (int)o;
}

void stats_html_escape(struct dstr *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':  put(out, "&lt;"); break;
		case '>':  put(out, "&gt;"); break;
		case '&':  put(out, "&amp;"); break;
		case '"':  put(out, "&quot;"); break;
		case '\'': put(out, "&#39;"); break;
		default:   dstr_add(out, s, 1);
		}
	}
}

void stats_json_escape(struct dstr *out, const char *s)
{
	put(out, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			put(out, "\\");
			dstr_add(out, s, 1);
		} else if (c < 0x20 || c == 0x7f) {
			dstr_printf(out, "\\u%04x", c);
		} else {
			dstr_add(out, s, 1);
		}
	}
	put(out, "\"");
}

/* ---- settings ---- */

static struct stats_px *stats_px_w(struct proxy *px)
{
	if (!px->stats)
		px->stats = xcalloc(1, sizeof(*px->stats));
	return px->stats;
}

static void stats_px_release(struct proxy *px)
{
	struct stats_px *st = px->stats;

	if (!st)
		return;
	free(st->uri);
	free(st->realm);
	for (int i = 0; i < st->n_auth; i++) {
		free(st->auth[i].user);
		free(st->auth[i].pass);
	}
	free(st->auth);
	free(st->node);
	free(st->desc);
	for (int i = 0; i < st->n_scope; i++)
		free(st->scope[i]);
	free(st->scope);
	for (int i = 0; i < st->n_admin; i++)
		acl_cond_free(st->admin[i]);
	free(st->admin);
	for (int i = 0; i < st->n_rules; i++) {
		free(st->rules[i].realm);
		acl_cond_free(st->rules[i].cond);
	}
	free(st->rules);
	free(st);
	px->stats = NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void stats_px_inherit(struct proxy *px, const struct proxy *def)
{
	const struct stats_px *d = def->stats;
	struct stats_px *st;

	if (!d)
		return;
	st = stats_px_w(px);
	*st = *d;
	st->uri = dup_or_null(d->uri);
	st->realm = dup_or_null(d->realm);
	st->node = dup_or_null(d->node);
	st->desc = dup_or_null(d->desc);
	st->admin = NULL;  /* not allowed in defaults */
	st->n_admin = 0;
	st->rules = NULL;
	st->n_rules = 0;
	st->auth = d->n_auth ? xcalloc((size_t)d->n_auth, sizeof(*st->auth)) : NULL;
	for (int i = 0; i < d->n_auth; i++) {
		st->auth[i].user = xstrdup(d->auth[i].user);
		st->auth[i].pass = xstrdup(d->auth[i].pass);
	}
	st->scope = d->n_scope ? xcalloc((size_t)d->n_scope, sizeof(*st->scope)) : NULL;
	for (int i = 0; i < d->n_scope; i++)
		st->scope[i] = xstrdup(d->scope[i]);
}

static struct proxy_ext stats_px_ext = {
	.inherit = stats_px_inherit,
	.release = stats_px_release,
};

/* ---- keywords ---- */

static int want_args(struct cfg_ctx *ctx, int argc, int min, int max, const char *usage)
{
	if (argc < min || argc > max) {
		cfg_alert(ctx, "expects %s", usage);
		return -1;
	}
	return 0;
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? xstrdup(v) : NULL;
}

/* The "stats" keywords kw_stats() handles: a row's value. */
enum stats_kw { STATS_KW_ENABLE, STATS_KW_HIDE_VERSION, STATS_KW_SHOW_LEGENDS, STATS_KW_URI,
                STATS_KW_REALM, STATS_KW_AUTH, STATS_KW_REFRESH, STATS_KW_SHOW_NODE,
                STATS_KW_SHOW_DESC, STATS_KW_SCOPE };

/* Every "stats" keyword but the flags below enables the page, as in
 * HAProxy. */
static int kw_stats(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct stats_px *st = stats_px_w(ctx->px);
	enum stats_kw k = (enum stats_kw)ctx->kw_row->arg;

	if (k == STATS_KW_ENABLE || k == STATS_KW_HIDE_VERSION || k == STATS_KW_SHOW_LEGENDS) {
		if (want_args(ctx, argc, 0, 0, "no argument") == -1)
			return -1;
		if (k == STATS_KW_HIDE_VERSION)
			st->hide_version = 1;
		else if (k == STATS_KW_SHOW_LEGENDS)
			st->show_legends = 1;
	} else if (k == STATS_KW_URI) {
		if (want_args(ctx, argc, 1, 1, "a URI prefix") == -1)
			return -1;
		if (!argv[0][0]) {
			cfg_alert(ctx, "expects a non-empty URI prefix");
			return -1;
		}
		set_str(&st->uri, argv[0]);
	} else if (k == STATS_KW_REALM) {
		if (want_args(ctx, argc, 1, 1, "a realm (quote it if it has spaces)") == -1)
			return -1;
		set_str(&st->realm, argv[0]);
	} else if (k == STATS_KW_AUTH) {
		const char *colon;

		if (want_args(ctx, argc, 1, 1, "<user>:<password>") == -1)
			return -1;
		colon = strchr(argv[0], ':');
		if (!colon || colon == argv[0]) {
			cfg_alert(ctx, "expects <user>:<password>, got '%s'", argv[0]);
			return -1;
		}
		st->auth = xrealloc(st->auth, (size_t)(st->n_auth + 1) * sizeof(*st->auth));
		st->auth[st->n_auth].user = xcalloc(1, (size_t)(colon - argv[0]) + 1);
		memcpy(st->auth[st->n_auth].user, argv[0], (size_t)(colon - argv[0]));
		st->auth[st->n_auth].pass = xstrdup(colon + 1);
		st->n_auth++;
	} else if (k == STATS_KW_REFRESH) {
		const char *err;
		uint32_t ms;

		if (want_args(ctx, argc, 1, 1, "a delay (e.g. 10s)") == -1)
			return -1;
		if (parse_time_ms(argv[0], 1000, &ms, &err) == -1) {
			cfg_alert(ctx, "invalid delay '%s': %s", argv[0], err);
			return -1;
		}
		st->refresh = (ms + 999) / 1000;
	} else if (k == STATS_KW_SHOW_NODE) {
		if (want_args(ctx, argc, 0, 1, "an optional node name") == -1)
			return -1;
		st->show_node = 1;
		set_str(&st->node, argc ? argv[0] : NULL);
	} else if (k == STATS_KW_SHOW_DESC) {
		if (want_args(ctx, argc, 0, 1, "an optional description (quoted)") == -1)
			return -1;
		st->show_desc = 1;
		set_str(&st->desc, argc ? argv[0] : NULL);
	} else if (k == STATS_KW_SCOPE) {
		if (want_args(ctx, argc, 1, 1, "a proxy name or '.'") == -1)
			return -1;
		st->scope = xrealloc(st->scope, (size_t)(st->n_scope + 1) * sizeof(*st->scope));
		st->scope[st->n_scope++] = xstrdup(argv[0]);
	}
	if ((k == STATS_KW_AUTH || k == STATS_KW_REALM) && st->n_rules) {
		cfg_alert(ctx, "'stats auth'/'stats realm' and 'stats http-request' can't be used "
			  "in the same proxy (use 'stats http-request auth [realm <realm>]')");
		return -1;
	}
	st->enabled = 1;
	return 0;
}

static int kw_stats_admin(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct stats_px *st;
	struct acl_cond *c;

	if (argc < 1 || (strcmp(argv[0], "if") != 0 && strcmp(argv[0], "unless") != 0)) {
		cfg_alert(ctx, "expects 'if' or 'unless' followed by a condition");
		return -1;
	}
	c = acl_cond_parse(ctx, argc, argv);
	if (!c)
		return -1;
	st = stats_px_w(ctx->px);
	st->admin = xrealloc(st->admin, (size_t)(st->n_admin + 1) * sizeof(*st->admin));
	st->admin[st->n_admin++] = c;
	st->enabled = 1;
	return 0;
}

/* stats http-request { allow | deny | auth [realm <realm>] } [{ if | unless } <cond>] */
static int kw_stats_http_request(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct stats_px *st;
	struct stats_rule r = { 0 };
	int i = 1;

	if (argc < 1) {
		cfg_alert(ctx, "expects 'allow', 'deny' or 'auth [realm <realm>]'");
		return -1;
	}
	if (strcmp(argv[0], "allow") == 0) {
		r.act = SR_ALLOW;
	} else if (strcmp(argv[0], "deny") == 0) {
		r.act = SR_DENY;
	} else if (strcmp(argv[0], "auth") == 0) {
		r.act = SR_AUTH;
		if (argc > 1 && strcmp(argv[1], "realm") == 0) {
			if (argc < 3) {
				cfg_alert(ctx, "'auth realm' expects a realm");
				return -1;
			}
			r.realm = xstrdup(argv[2]);
			i = 3;
		}
	} else {
		cfg_alert(ctx, "expects 'allow', 'deny' or 'auth [realm <realm>]', got '%s'", argv[0]);
		return -1;
	}
	if (i < argc) {
		if (strcmp(argv[i], "if") != 0 && strcmp(argv[i], "unless") != 0) {
			cfg_alert(ctx, "expects 'if' or 'unless' after '%s', got '%s'", argv[i - 1],
				  argv[i]);
			free(r.realm);
			return -1;
		}
		r.cond = acl_cond_parse(ctx, argc - i, argv + i);
		if (!r.cond) {
			free(r.realm);
			return -1;
		}
	}
	st = stats_px_w(ctx->px);
	if (st->n_auth || st->realm) {
		cfg_alert(ctx, "'stats auth'/'stats realm' and 'stats http-request' can't be used "
			  "in the same proxy (use 'stats http-request auth [realm <realm>]')");
		free(r.realm);
		acl_cond_free(r.cond);
		return -1;
	}
	st->rules = xrealloc(st->rules, (size_t)(st->n_rules + 1) * sizeof(*st->rules));
	st->rules[st->n_rules++] = r;
	st->enabled = 1;
	return 0;
}

static struct cfg_kw stats_kws[] = {
	{ "stats enable", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_ENABLE, .usage = "" },
	{ "stats uri", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_URI, .usage = "<prefix>" },
	{ "stats realm", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_REALM, .usage = "<realm>" },
	{ "stats auth", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_AUTH, .usage = "<user>:<passwd>" },
	{ "stats refresh", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_REFRESH, .usage = "<delay>" },
	{ "stats hide-version", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_HIDE_VERSION, .usage = "" },
	{ "stats show-legends", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_SHOW_LEGENDS, .usage = "" },
	{ "stats show-node", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_SHOW_NODE, .usage = "[<name>]" },
	{ "stats show-desc", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_SHOW_DESC, .usage = "[<desc>]" },
	{ "stats scope", CFG_SEC_PROXIES, CFG_T_FUNC, .parse = kw_stats,
	  .arg = STATS_KW_SCOPE, .usage = "<proxy> | ." },
	{ "stats admin", CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC,
	  .parse = kw_stats_admin, .usage = "{ if | unless } <condition>" },
	{ "stats http-request", CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC,
	  .parse = kw_stats_http_request, .usage = "<action> [{ if | unless } <condition>]" },
};

/* ---- the service ---- */

/* Request options after the stats URI (";csv", ";up"...). */
#define SQ_CSV       0x01
#define SQ_JSON      0x02
#define SQ_UP        0x04
#define SQ_NOREFRESH 0x08
#define SQ_NOMAINT   0x10
#define SQ_SCHEMA    0x20

/* The path part of request URI <u> (skips an absolute form's scheme and
 * authority). */
static struct http_str uri_path(struct http_str u)
{
	const char *p = u.p, *e = u.p + u.len;

	if (u.len > 7 && (strncasecmp(p, "http://", 7) == 0 || strncasecmp(p, "https://", 8) == 0)) {
		p = memchr(p, ':', (size_t)(e - p)) + 3;
		while (p < e && *p != '/')
			p++;
	}
	return (struct http_str){ p, (uint32_t)(e - p) };
}

static const char *stats_uri(const struct stats_px *st)
{
	return st->uri ? st->uri : STATS_DEFAULT_URI;
}

static int stats_match(const struct proxy *px, const struct http_head *h)
{
	const struct stats_px *st = px->stats;
	struct http_str p;
	size_t l;

	if (!st || !st->enabled || px->mode != PR_MODE_HTTP)
		return 0;
	p = uri_path(h->sl[HTTP_SL_URI]);
	l = strlen(stats_uri(st));
	return p.len >= l && memcmp(p.p, stats_uri(st), l) == 0;
}

static unsigned parse_opts(const struct stats_px *st, const struct http_head *h, char *code,
                           size_t codesz)
{
	struct http_str p = uri_path(h->sl[HTTP_SL_URI]);
	const char *s = p.p + strlen(stats_uri(st)), *e = p.p + p.len;
	unsigned o = 0;

	while ((s = memchr(s, ';', (size_t)(e - s)))) {
		const char *w = ++s;
		size_t l;

		while (s < e && *s != ';' && *s != '&' && *s != '?' && *s != '/')
			s++;
		l = (size_t)(s - w);
		if (l == 3 && memcmp(w, "csv", 3) == 0)
			o |= SQ_CSV;
		else if (l == 4 && memcmp(w, "json", 4) == 0)
			o |= SQ_JSON;
		else if (l == 11 && memcmp(w, "json-schema", 11) == 0)
			o |= SQ_SCHEMA;
		else if (l == 2 && memcmp(w, "up", 2) == 0)
			o |= SQ_UP;
		else if (l == 9 && memcmp(w, "norefresh", 9) == 0)
			o |= SQ_NOREFRESH;
		else if (l == 8 && memcmp(w, "no-maint", 8) == 0)
			o |= SQ_NOMAINT;
		else if (code && l > 3 && memcmp(w, "st=", 3) == 0)
			snprintf(code, codesz, "%.*s", (int)(l - 3), w + 3);
	}
	return o;
}

/* Whether request <h> carries one of the credentials of <st>. */
static int auth_ok(const struct stats_px *st, const struct http_head *h)
{
	int i = http_head_find(h, "authorization", 13, 0);
	const char *v, *e;
	char buf[512];
	int n;

	if (i < 0)
		return 0;
	v = h->f[i].v.p;
	e = v + h->f[i].v.len;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	if (e - v < 6 || strncasecmp(v, "basic ", 6) != 0)
		return 0;
	v += 6;
	while (v < e && *v == ' ')
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = stats_b64_decode(v, (size_t)(e - v), buf, sizeof(buf));
	if (n < 0)
		return 0;
	for (int a = 0; a < st->n_auth; a++) {
		size_t ul = strlen(st->auth[a].user);

		if ((size_t)n > ul && memcmp(buf, st->auth[a].user, ul) == 0 && buf[ul] == ':' &&
		    strcmp(buf + ul + 1, st->auth[a].pass) == 0)
			return 1;
	}
	return 0;
}

struct page_ctx {
	const struct proxy    *px;       /* the proxy serving the page */
	const struct stats_px *st;
	unsigned               opts;
	struct dstr           *out;
	const struct proxy    *cur;      /* HTML: the proxy of the open table */
	int                    nrows;
	int                    admin;    /* HTML: the admin form is shown */
	int                    form;     /* HTML: the open table is in a form */
	char                   st_code[8]; /* ";st=<code>": result of an admin action */
};

static int scope_ok(const struct proxy *p, void *arg)
{
	const struct page_ctx *pc = arg;

	if (!pc->st->n_scope)
		return 1;
	for (int i = 0; i < pc->st->n_scope; i++) {
		const char *n = pc->st->scope[i];

		if (strcmp(n, ".") == 0 ? p == pc->px : strcmp(n, p->name) == 0)
			return 1;
	}
	return 0;
}

static int walk_flags(unsigned opts)
{
	return (opts & SQ_UP ? STATS_F_UP : 0) | (opts & SQ_NOMAINT ? STATS_F_NO_MAINT : 0);
}

static int csv_row(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct page_ctx *pc = arg;

	for (int f = 0; f < ST_F_NB; f++)
		dstr_printf(pc->out, "%s,", r->v[f]);
	put(pc->out, "\n");
	return 0;
}

/* A row in HAProxy's JSON form, as "show stat json" prints it. */
static int json_row(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct page_ctx *pc = arg;

	stats_json_row(pc->out, pc->nrows++, r, o);
	return 0;
}

/* ---- HTML ---- */

static const char page_css[] =
	"body{font-family:Arial,Helvetica,sans-serif;font-size:12px;margin:8px;color:#222}\n"
	"h1{font-size:18px;margin:0 0 4px 0;color:#fff;background:#20407a;padding:6px}\n"
	"h2{font-size:14px;margin:14px 0 2px 0;color:#20407a}\n"
	"table{border-collapse:collapse;margin-bottom:6px}\n"
	"td,th{border:1px solid #999;padding:1px 4px;text-align:right;white-space:nowrap}\n"
	"th{background:#20407a;color:#fff;font-weight:normal}\n"
	"td.n{text-align:left;font-weight:bold}\n"
	"tr.fe td{background:#eef}\n"
	"tr.be td{background:#ccd;font-weight:bold}\n"
	"tr.up td,tr.open td{background:#c0ffc0}\n"
	"tr.nocheck td{background:#e0ffe0}\n"
	"tr.down td,tr.stop td{background:#ff9090}\n"
	"tr.maint td{background:#c0c0ff}\n"
	"tr.drain td{background:#ffa64d}\n"
	"tr.nolb td{background:#ffff80}\n"
	"tr.going td{background:#ffd020}\n"
	"table.info td{border:none;text-align:left;padding:0 8px 0 0}\n"
	"div.links a{margin-right:12px}\n"
	"p.desc{font-style:italic}\n"
	"div.st{padding:4px;margin:6px 0;border:1px solid #999}\n"
	"div.st_up{background:#c0ffc0}\n"
	"div.st_going{background:#ffd020}\n"
	"div.st_down{background:#ff9090}\n";

/* CSS class of a row from its status column. */
static const char *status_class(const struct stats_obj *o, const char *status)
{
	if (o->type == STATS_T_FE || o->type == STATS_T_LI)
		return strncmp(status, "OPEN", 4) == 0 ? "fe" : "stop";
	if (o->type == STATS_T_BE)
		return strcmp(status, "UP") == 0 ? "be" : "down";
	if (strncmp(status, "MAINT", 5) == 0)
		return "maint";
	if (strncmp(status, "DRAIN", 5) == 0)
		return "drain";
	if (strncmp(status, "NOLB", 4) == 0)
		return "nolb";
	if (strncmp(status, "no check", 8) == 0)
		return "nocheck";
	if (strncmp(status, "UP ", 3) == 0 || strncmp(status, "DOWN ", 5) == 0)
		return "going";
	if (strncmp(status, "UP", 2) == 0)
		return "up";
	return "down";
}

/* A duration in seconds as "1d2h", "3h4m", "5m6s" or "7s". */
static void fmt_dur(char *b, size_t sz, const char *secs)
{
	long long s;

	if (!secs[0] || secs[0] == '-') {
		snprintf(b, sz, "%s", secs[0] == '-' ? "never" : "");
		return;
	}
	s = atoll(secs);
	if (s >= 86400)
		snprintf(b, sz, "%lldd%lldh", s / 86400, (s % 86400) / 3600);
	else if (s >= 3600)
		snprintf(b, sz, "%lldh%lldm", s / 3600, (s % 3600) / 60);
	else if (s >= 60)
		snprintf(b, sz, "%lldm%llds", s / 60, s % 60);
	else
		snprintf(b, sz, "%llds", s);
}

static void td(struct dstr *out, const char *v)
{
	put(out, "<td>");
	stats_html_escape(out, v);
	put(out, "</td>");
}

static const char table_head[] =
	"<th rowspan=2>Name</th><th colspan=3>Queue</th>"
	"<th colspan=3>Session rate</th><th colspan=6>Sessions</th><th colspan=2>Bytes</th>"
	"<th colspan=2>Denied</th><th colspan=3>Errors</th><th colspan=2>Warnings</th>"
	"<th colspan=9>Server</th><th colspan=4>Latency p50 / p90 / p99 (ms)</th></tr>\n"
	"<tr><th>Cur</th><th>Max</th><th>Limit</th><th>Cur</th><th>Max</th><th>Limit</th>"
	"<th>Cur</th><th>Max</th><th>Limit</th><th>Total</th><th>LbTot</th><th>Last</th>"
	"<th>In</th><th>Out</th><th>Req</th><th>Resp</th><th>Req</th><th>Conn</th><th>Resp</th>"
	"<th>Retr</th><th>Redis</th><th>Status</th><th>LastChk</th><th>Wght</th><th>Act</th>"
	"<th>Bck</th><th>Chk</th><th>Dwn</th><th>Dwntme</th><th>Mode</th>"
	"<th>Queue</th><th>Connect</th><th>Response</th><th>Total</th></tr>\n";

/* The actions of the admin form: value, label. */
static const char *const admin_actions[][2] = {
	{ "ready",    "Set state to READY" },
	{ "drain",    "Set state to DRAIN" },
	{ "maint",    "Set state to MAINT" },
	{ "shutdown", "Kill Sessions" },
};

static void html_close_table(struct page_ctx *pc)
{
	if (pc->cur)
		put(pc->out, "</table>\n");
	if (pc->cur && pc->form) {
		put(pc->out, "<p class=admin>Choose the action to perform on the checked servers: "
			     "<select name=action><option value=\"\"></option>");
		for (size_t i = 0; i < ARRAY_SIZE(admin_actions); i++)
			dstr_printf(pc->out, "<option value=\"%s\">%s</option>", admin_actions[i][0],
				    admin_actions[i][1]);
		dstr_printf(pc->out, "</select><input type=\"hidden\" name=\"b\" value=\"#%d\">"
			    "<input type=\"submit\" value=\"Apply\"></p>\n</form>\n", pc->cur->id);
	}
	pc->cur = NULL;
	pc->form = 0;
}

static int html_row(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct page_ctx *pc = arg;
	struct dstr *out = pc->out;
	const char (*v)[80] = r->v;
	char b[128], b2[64];

	if (pc->cur != o->px) {
		html_close_table(pc);
		pc->cur = o->px;
		put(out, "<h2 id=\"");
		stats_html_escape(out, o->px->name);
		put(out, "\">");
		stats_html_escape(out, o->px->name);
		put(out, "</h2>\n");
		if (o->px->desc) {
			put(out, "<p class=desc>");
			stats_html_escape(out, o->px->desc);
			put(out, "</p>\n");
		}
		pc->form = pc->admin && (o->px->cap & PR_CAP_BE) && o->px->servers;
		if (pc->form)
			put(out, "<form method=\"post\">\n");
		put(out, "<table>\n<tr>");
		if (pc->form)
			put(out, "<th rowspan=2><input type=\"checkbox\" title=\"all servers\" "
				 "onclick=\"for(const c of this.form.querySelectorAll("
				 "'input[name=s]'))c.checked=this.checked\"></th>");
		dstr_add(out, table_head, sizeof(table_head) - 1);
	}
	pc->nrows++;
	dstr_printf(out, "<tr class=%s>", status_class(o, v[ST_F_STATUS]));
	if (pc->form) {
		if (o->type == STATS_T_SRV) {
			put(out, "<td><input type=\"checkbox\" name=\"s\" value=\"");
			stats_html_escape(out, o->srv->name);
			put(out, "\"></td>");
		} else {
			put(out, "<td></td>");
		}
	}
	put(out, "<td class=n>");
	stats_html_escape(out, o->type == STATS_T_FE ? "Frontend" :
			  o->type == STATS_T_BE ? "Backend" : v[ST_F_SVNAME]);
	put(out, "</td>");
	td(out, v[ST_F_QCUR]);
	td(out, v[ST_F_QMAX]);
	td(out, v[ST_F_QLIMIT]);
	td(out, v[ST_F_RATE]);
	td(out, v[ST_F_RATE_MAX]);
	td(out, v[ST_F_RATE_LIM]);
	td(out, v[ST_F_SCUR]);
	td(out, v[ST_F_SMAX]);
	td(out, v[ST_F_SLIM]);
	td(out, v[ST_F_STOT]);
	td(out, v[ST_F_LBTOT]);
	fmt_dur(b, sizeof(b), v[ST_F_LASTSESS]);
	td(out, b);
	td(out, v[ST_F_BIN]);
	td(out, v[ST_F_BOUT]);
	td(out, v[ST_F_DREQ]);
	td(out, v[ST_F_DRESP]);
	td(out, v[ST_F_EREQ]);
	td(out, v[ST_F_ECON]);
	td(out, v[ST_F_ERESP]);
	td(out, v[ST_F_WRETR]);
	td(out, v[ST_F_WREDIS]);
	fmt_dur(b2, sizeof(b2), v[ST_F_LASTCHG]);
	snprintf(b, sizeof(b), "%s%s%s", b2, b2[0] ? " " : "", v[ST_F_STATUS]);
	td(out, b);
	if (v[ST_F_CHECK_STATUS][0])
		snprintf(b, sizeof(b), "%s%s%s in %sms", v[ST_F_CHECK_STATUS],
			 v[ST_F_CHECK_CODE][0] ? "/" : "", v[ST_F_CHECK_CODE],
			 v[ST_F_CHECK_DURATION]);
	else
		b[0] = 0;
	td(out, b);
	td(out, v[ST_F_WEIGHT]);
	if (o->type == STATS_T_SRV) {
		td(out, strcmp(v[ST_F_ACT], "1") == 0 ? "Y" : "-");
		td(out, strcmp(v[ST_F_BCK], "1") == 0 ? "Y" : "-");
	} else {
		td(out, v[ST_F_ACT]);
		td(out, v[ST_F_BCK]);
	}
	td(out, v[ST_F_CHKFAIL]);
	td(out, v[ST_F_CHKDOWN]);
	fmt_dur(b, sizeof(b), v[ST_F_DOWNTIME]);
	td(out, b);
	td(out, v[ST_F_MODE]);
	/* sluice's latency histograms, estimated percentiles (hist.h) */
	for (int k = 0; k < HIST_KINDS; k++) {
		const struct counters *c = stats_obj_counters(o);
		const struct hist *h = c ? &c->lat[k] : NULL;

		if (h && h->count)
			snprintf(b, sizeof(b), "%.1f / %.1f / %.1f",
				 (double)hist_quantile_us(h, 0.50) / 1000.0,
				 (double)hist_quantile_us(h, 0.90) / 1000.0,
				 (double)hist_quantile_us(h, 0.99) / 1000.0);
		else
			b[0] = 0;
		td(out, b);
	}
	put(out, "</tr>\n");
	return 0;
}

static void html_link(struct dstr *out, const char *uri, const char *opt, const char *text)
{
	put(out, "<a href=\"");
	stats_html_escape(out, uri);
	stats_html_escape(out, opt);
	put(out, "\">");
	stats_html_escape(out, text);
	put(out, "</a>");
}

static void html_page(struct page_ctx *pc)
{
	struct dstr *out = pc->out;
	const struct stats_px *st = pc->st;
	const char *node = st->node ? st->node : global.node ? global.node : "";
	const char *desc = st->desc ? st->desc : global.desc ? global.desc : pc->px->desc;
	const char *uri = stats_uri(st);
	long up = (long)(tick_wall() - global.start_time);
	char ups[64];

	snprintf(ups, sizeof(ups), "%ldd %ldh%02ldm%02lds", up / 86400, (up % 86400) / 3600,
		 (up % 3600) / 60, up % 60);
	put(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n");
	if (st->refresh && !(pc->opts & SQ_NOREFRESH))
		dstr_printf(out, "<meta http-equiv=\"refresh\" content=\"%u\">\n", st->refresh);
	put(out, "<title>Statistics Report for sluice");
	if (st->show_node && *node) {
		put(out, " on ");
		stats_html_escape(out, node);
	}
	dstr_printf(out, "</title>\n<style>\n%s</style></head>\n<body>\n", page_css);
	put(out, "<h1>sluice");
	if (!st->hide_version) {
		put(out, " version ");
		stats_html_escape(out, SLUICE_VERSION);
	}
	dstr_printf(out, " &mdash; Statistics Report for pid %d", (int)global.pid);
	if (st->show_node && *node) {
		put(out, " on ");
		stats_html_escape(out, node);
	}
	put(out, "</h1>\n");
	if (st->show_desc && desc) {
		put(out, "<p class=desc>");
		stats_html_escape(out, desc);
		put(out, "</p>\n");
	}
	dstr_printf(out, "<table class=info>\n"
		    "<tr><td><b>pid = </b>%d (process #1, nbproc = 1, nbthread = 1)</td></tr>\n"
		    "<tr><td><b>uptime = </b>%s</td></tr>\n"
		    "<tr><td><b>maxconn = </b>%d; <b>current conns = </b>%d; "
		    "<b>conn rate = </b>%u/sec</td></tr>\n"
		    "<tr><td><b>maxpipes = </b>%d; <b>current pipes = </b>%d/%d</td></tr>\n"
		    "<tr><td><b>running streams = </b>%d</td></tr>\n",
		    (int)global.pid, ups, global.maxconn, global.curconn,
		    freq_rate(&global.conn_rate, tick_now_ms()), pipe_max(), pipe_nb_used(),
		    pipe_nb_used() + pipe_nb_free(), stream_count());
	if (st->show_legends)
		put(out, "<tr><td><b>Legend:</b> <span style=\"background:#c0ffc0\">active UP"
			 "</span> <span style=\"background:#ffd020\">going up / going down</span> "
			 "<span style=\"background:#ff9090\">DOWN</span> <span style=\"background:"
			 "#c0c0ff\">MAINT</span> <span style=\"background:#ffa64d\">DRAIN</span> "
			 "<span style=\"background:#ffff80\">NOLB</span> <span style=\"background:"
			 "#e0ffe0\">not checked</span></td></tr>\n");
	put(out, "</table>\n<div class=links>");
	html_link(out, uri, "", "Refresh now");
	put(out, " ");
	if (pc->opts & SQ_UP)
		html_link(out, uri, "", "Show all servers");
	else
		html_link(out, uri, ";up", "Hide DOWN servers");
	put(out, " ");
	if (st->refresh)
		html_link(out, uri, ";norefresh", "Disable refresh");
	put(out, " ");
	html_link(out, uri, ";csv", "CSV export");
	put(out, " ");
	html_link(out, uri, ";json", "JSON export");
	put(out, "</div>\n");
	if (pc->st_code[0]) {
		static const char *const msgs[][3] = {
			{ "DONE", "up", "Action processed successfully." },
			{ "PART", "going", "Action partially processed." },
			{ "NONE", "going", "Nothing has changed." },
			{ "ERRP", "down", "Action not processed because of invalid parameters." },
			{ "EXCD", "down", "Action not processed: the request body was not received "
			  "with the request (too large)." },
			{ "DENY", "down", "Action denied." },
		};
		const char *cls = "going", *msg = "Unexpected result.";

		for (size_t i = 0; i < ARRAY_SIZE(msgs); i++)
			if (strcmp(pc->st_code, msgs[i][0]) == 0) {
				cls = msgs[i][1];
				msg = msgs[i][2];
			}
		dstr_printf(out, "<div class=\"st st_%s\" id=status>", cls);
		html_link(out, uri, "", "[X]");
		dstr_printf(out, " %s</div>\n", msg);
	}
	stats_walk(-1, STATS_T_ALL, -1, walk_flags(pc->opts), scope_ok, html_row, pc);
	html_close_table(pc);
	put(out, "</body></html>\n");
}

static void add_head(struct dstr *out, int status, const char *reason, const char *ctype,
                     size_t clen, const char *extra)
{
	dstr_printf(out, "HTTP/1.1 %d %s\r\ncontent-type: %s\r\ncache-control: no-cache\r\n"
		    "content-length: %zu\r\n%s\r\n", status, reason, ctype, clen, extra);
}

/* Decodes application/x-www-form-urlencoded <in> of <len> bytes into <out>
 * (NUL-terminated, at most <outsz> bytes). Returns -1 when it does not
 * fit or has a NUL. */
static int form_decode(const char *in, size_t len, char *out, size_t outsz)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)in[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%' && i + 2 < len + 0 && isxdigit((unsigned char)in[i + 1]) &&
			   isxdigit((unsigned char)in[i + 2])) {
			char hex[3] = { in[i + 1], in[i + 2], 0 };

			c = (int)strtol(hex, NULL, 16);
			i += 2;
		}
		if (!c || o + 1 >= outsz)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = 0;
	return 0;
}

/* The backend named by the form's "b" field: "#<id>" or a name. */
static struct proxy *form_backend(const char *b)
{
	if (b[0] == '#') {
		char *end;
		long id = strtol(b + 1, &end, 10);

		if (end == b + 1 || *end)
			return NULL;
		for (struct proxy *p = global.proxies; p; p = p->next)
			if ((p->cap & PR_CAP_BE) && p->id == id)
				return p;
		return NULL;
	}
	return proxy_find(b, PR_CAP_BE);
}

/* Applies the admin form in <body> (<blen> bytes): "s" (server names,
 * repeated), "action" and "b" (backend). Returns the result code of the
 * ";st=" redirection. */
static const char *admin_post(struct page_ctx *pc, const char *body, size_t blen)
{
	char action[32] = "", b[256] = "";
	const char *p = body, *e = body + blen;
	struct proxy *be;
	int nsrv = 0, ok = 0, bad = 0, act = -1;

	/* first pass: action and backend */
	while (p < e) {
		const char *amp = memchr(p, '&', (size_t)(e - p)), *f = amp ? amp : e;
		const char *eq = memchr(p, '=', (size_t)(f - p));

		if (eq && eq - p == 6 && memcmp(p, "action", 6) == 0) {
			if (form_decode(eq + 1, (size_t)(f - eq - 1), action, sizeof(action)))
				return "ERRP";
		} else if (eq && eq - p == 1 && *p == 'b') {
			if (form_decode(eq + 1, (size_t)(f - eq - 1), b, sizeof(b)))
				return "ERRP";
		}
		p = f + 1;
	}
	be = b[0] ? form_backend(b) : NULL;
	if (!be)
		return "ERRP";
	if (!scope_ok(be, pc))
		return "DENY";
	for (size_t i = 0; i < ARRAY_SIZE(admin_actions); i++)
		if (strcmp(action, admin_actions[i][0]) == 0)
			act = (int)i;
	/* second pass: the servers */
	for (p = body; p < e;) {
		const char *amp = memchr(p, '&', (size_t)(e - p)), *f = amp ? amp : e;
		const char *eq = memchr(p, '=', (size_t)(f - p));
		char name[256];
		struct server *srv = NULL;

		if (eq && eq - p == 1 && *p == 's') {
			nsrv++;
			if (act >= 0 && !form_decode(eq + 1, (size_t)(f - eq - 1), name, sizeof(name)))
				for (srv = be->servers; srv && strcmp(srv->name, name) != 0; srv = srv->next)
					;
			if (!srv)
				bad++;
			else if (strcmp(action, "shutdown") == 0)
				ok += stream_kill_server(srv) >= 0;
			else
				ok += server_set_state(srv, action) == 0;
		}
		p = f + 1;
	}
	if (!nsrv)
		return "NONE";
	if (act < 0)
		return "ERRP";
	return !ok ? "ERRP" : bad ? "PART" : "DONE";
}

/* Whether <h>'s method is <m>. */
static int meth_is(const struct http_head *h, const char *m)
{
	size_t l = strlen(m);

	return h->sl[HTTP_SL_METH].len == l && memcmp(h->sl[HTTP_SL_METH].p, m, l) == 0;
}

static void add_401(struct dstr *out, const char *realm, int head_only)
{
	static const char msg[] = "<html><body><h1>401 Unauthorized</h1>\nYou need a valid "
		"user and password to access this content.\n</body></html>\n";

	dstr_printf(out, "HTTP/1.1 401 Unauthorized\r\ncontent-type: text/html\r\n"
		    "cache-control: no-cache\r\ncontent-length: %zu\r\n"
		    "www-authenticate: Basic realm=\"", sizeof(msg) - 1);
	for (const char *r = realm; *r; r++)
		if (*r != '"' && *r != '\\' && (unsigned char)*r >= 0x20)
			dstr_add(out, r, 1);
	put(out, "\"\r\n\r\n");
	if (!head_only)
		dstr_add(out, msg, sizeof(msg) - 1);
}

static int stats_answer(struct stream *s, struct proxy *px, const struct http_head *h,
                        const char *req_body, size_t req_blen, struct dstr *out)
{
	const struct stats_px *st = px->stats;
	struct dstr body = { 0 };
	struct page_ctx pc = { .px = px, .st = st, .out = &body };
	int head_only = h->sl[HTTP_SL_METH].len == 4 && memcmp(h->sl[HTTP_SL_METH].p, "HEAD", 4) == 0;
	const char *ctype;
	char extra[64] = "";

	const char *realm;
	int allowed = 0;

	if (!st)
		return -1;
	realm = st->realm ? st->realm : STATS_DEFAULT_REALM;
	/* "stats http-request" rules, the first matching one decides; then
	 * "stats auth" unless a rule allowed the request */
	for (int i = 0; i < st->n_rules; i++) {
		const struct stats_rule *r = &st->rules[i];

		if (!acl_cond_exec(r->cond, s))
			continue;
		if (r->act == SR_ALLOW) {
			allowed = 1;
			break;
		}
		if (r->act == SR_AUTH) {
			add_401(out, r->realm ? r->realm : realm, head_only);
			return 401;
		}
		{
			static const char msg[] = "<html><body><h1>403 Forbidden</h1>\n"
				"Request forbidden by administrative rules.\n</body></html>\n";

			add_head(out, 403, "Forbidden", "text/html", sizeof(msg) - 1, "");
			if (!head_only)
				dstr_add(out, msg, sizeof(msg) - 1);
			return 403;
		}
	}
	if (!allowed && st->n_auth && !auth_ok(st, h)) {
		add_401(out, realm, head_only);
		return 401;
	}
	pc.opts = parse_opts(st, h, pc.st_code, sizeof(pc.st_code));
	for (int i = 0; i < st->n_admin && !pc.admin; i++)
		pc.admin = acl_cond_exec(st->admin[i], s);
	if (meth_is(h, "POST")) {
		/* the admin form: act, then send the browser back to the page */
		const char *code = !pc.admin ? "DENY" : !req_body ? "EXCD" :
				   admin_post(&pc, req_body, req_blen);

		put(&body, "location: ");
		put(&body, stats_uri(st));
		if (pc.opts & SQ_UP)
			put(&body, ";up");
		if (pc.opts & SQ_NOREFRESH)
			put(&body, ";norefresh");
		if (pc.opts & SQ_NOMAINT)
			put(&body, ";no-maint");
		dstr_printf(&body, ";st=%s\r\n", code);
		if (!body.p)
			goto fail;
		add_head(out, 303, "See Other", "text/plain", 0, body.p);
		dstr_free(&body);
		return 303;
	}
	if (pc.opts & SQ_CSV) {
		ctype = "text/plain";
		put(&body, "# ");
		for (int f = 0; f < ST_F_NB; f++)
			dstr_printf(&body, "%s,", stats_field_name(f));
		put(&body, "\n");
		if (stats_walk(-1, STATS_T_ALL, -1, walk_flags(pc.opts), scope_ok, csv_row, &pc))
			goto fail;
	} else if (pc.opts & SQ_JSON) {
		ctype = "application/json";
		put(&body, "[");
		if (stats_walk(-1, STATS_T_ALL, -1, walk_flags(pc.opts), scope_ok, json_row, &pc))
			goto fail;
		put(&body, "]\n");
	} else if (pc.opts & SQ_SCHEMA) {
		ctype = "application/json";
		put(&body, stats_schema_json);
	} else {
		ctype = "text/html; charset=utf-8";
		if (st->refresh && !(pc.opts & SQ_NOREFRESH))
			snprintf(extra, sizeof(extra), "refresh: %u\r\n", st->refresh);
		html_page(&pc);
	}
	if (!body.p)
		goto fail;
	add_head(out, 200, "OK", ctype, body.len, extra);
	if (!head_only)
		dstr_add(out, body.p, body.len);
	dstr_free(&body);
	return 200;
fail:
	dstr_free(&body);
	return -1;
}

static struct http_service stats_service = {
	.name = "stats",
	.log_name = "<STATS>",
	.answer = stats_answer,
	.match = stats_match,
};

SLUICE_INIT(stats_http_register)
{
	cfg_register(stats_kws, ARRAY_SIZE(stats_kws));
	proxy_register_ext(&stats_px_ext);
	http_service_register(&stats_service);
}
