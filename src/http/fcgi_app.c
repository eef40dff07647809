/* FastCGI applications (fcgi_app.h): the "fcgi-app" section and its
 * keywords, "use-fcgi-app", "filter fcgi-app", the checks after parsing,
 * what the request analysis evaluates for a backend's application, and the
 * CGI/1.1 parameters of a request. */
#include <string.h>
#include <strings.h>

#include <sluice/acl.h>
#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/fcgi_app.h>
#include <sluice/fcgi_rec.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_filter.h>
#include <sluice/http_head.h>
#include <sluice/logformat.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/stream.h>
#include <sluice/tcpcheck.h>

#ifdef USE_PCRE2
#include <pcre2.h>
#endif

/* A backend's use-fcgi-app or filter fcgi-app line, resolved after parsing. */
struct fcgi_use {
	struct fcgi_use *next;
	struct proxy    *px;
	char            *name;
	char            *file;
	int              line;
};

static struct {
	struct fcgi_app *apps;
	struct fcgi_app *cur;        /* the section being parsed */
	struct fcgi_use *uses;
	struct pool     *txn_pool;
	struct smp_expr  auth_type, auth_user;   /* AUTH_TYPE, REMOTE_USER */
	int              auth_ready;
	struct dstr      scratch;    /* a parameter's name or joined value */
	struct dstr      dec;        /* a request's path, URL-decoded */
} fa;

static struct fcgi_app *fcgi_app_find(const char *name)
{
	for (struct fcgi_app *a = fa.apps; a; a = a->next)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

/* ---- the section ---- */

static int sec_fcgi_app(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct fcgi_app *a, **tail = &fa.apps;

	fa.cur = NULL;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	if ((a = fcgi_app_find(argv[0]))) {
		cfg_alert(ctx, "fcgi-app section '%s' has the same name as another one declared "
			  "at %s:%d", argv[0], a->conf_file, a->conf_line);
		return -1;
	}
	if (argc > 1) {
		cfg_alert(ctx, "unexpected argument '%s' after the name", argv[1]);
		return -1;
	}
	a = xcalloc(1, sizeof(*a));
	a->name = xstrdup(argv[0]);
	a->conf_file = xstrdup(ctx->file);
	a->conf_line = ctx->line;
	a->options = FCGI_O_KEEP_CONN;
	a->max_reqs = 1;
	a->sp_tail = &a->set_params;
	a->ph_tail = &a->pass_hdrs;
	/* the section's ACLs are its own: they live in a proxy of their own,
	 * which no list holds (ctx->px is what "acl" lines and conditions read) */
	a->acl_px = xcalloc(1, sizeof(*a->acl_px));
	a->acl_px->name = xstrdup(argv[0]);
	a->acl_px->conf_file = xstrdup(ctx->file);
	a->acl_px->conf_line = ctx->line;
	a->acl_px->mode = PR_MODE_HTTP;
	while (*tail)
		tail = &(*tail)->next;
	*tail = a;
	fa.cur = a;
	ctx->px = a->acl_px;
	return 0;
}

static int sec_fcgi_app_end(struct cfg_ctx *ctx)
{
	fa.cur = NULL;
	return 0;
}

/* The rows of the section target the application being parsed. */
static void *fcgi_app_base(struct cfg_ctx *ctx)
{
	static struct fcgi_app none;   /* a section whose header failed */

	return fa.cur ? fa.cur : &none;
}

/* Parses an optional "if|unless <condition>" at argv[0..argc). Returns 0
 * with *<cond> (NULL when there is none), or -1 after cfg_alert(). */
static int fcgi_cond_parse(struct cfg_ctx *ctx, int argc, char **argv, struct acl_cond **cond)
{
	*cond = NULL;
	if (!argc)
		return 0;
	*cond = acl_cond_parse(ctx, argc, argv);
	if (!*cond)
		return -1;
	acl_cond_check_request(ctx, *cond);
	return 0;
}

static void fcgi_rule_free(struct fcgi_rule *r)
{
	if (r->fmt) {
		lf_free(r->fmt);
		free(r->fmt);
	}
	acl_cond_free(r->cond);
	free(r->name);
	free(r);
}

/* A set-param or pass-header line of the application being parsed: a name
 * (a token) and <nargs> - 1 more words, then an optional condition. The
 * rule is appended to the list at *<tail>. Returns it, or NULL after
 * cfg_alert(). */
static struct fcgi_rule *fcgi_rule_add(struct cfg_ctx *ctx, int argc, char **argv, int nargs,
                                       struct fcgi_rule ***tail)
{
	struct fcgi_rule *r;

	if (argc < nargs || !*argv[0]) {
		cfg_alert(ctx, "expects %s as argument%s", nargs > 1 ? "<name> and <value>" : "<name>",
			  nargs > 1 ? "s" : "");
		return NULL;
	}
	if (!h1_is_token(argv[0], strlen(argv[0]))) {
		cfg_alert(ctx, "invalid name '%s'", argv[0]);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->name = xstrdup(argv[0]);
	r->nlen = strlen(argv[0]);
	if (fcgi_cond_parse(ctx, argc - nargs, argv + nargs, &r->cond) == -1) {
		fcgi_rule_free(r);
		return NULL;
	}
	**tail = r;
	*tail = &r->next;
	return r;
}

/* set-param <name> <fmt> [if|unless <cond>] */
static int kw_set_param(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct fcgi_rule *r = fa.cur ? fcgi_rule_add(ctx, argc, argv, 2, &fa.cur->sp_tail) : NULL;
	char *err = NULL;

	if (!r)
		return -1;
	r->fmt = xcalloc(1, sizeof(*r->fmt));
	if (lf_compile(argv[1], r->fmt, &err) == -1) {
		cfg_alert(ctx, "invalid value '%s': %s", argv[1], err);
		free(err);
		return -1;   /* (the rule stays, freed with its application) */
	}
	return 0;
}

/* pass-header <name> [if|unless <cond>]: names compared in lower case */
static int kw_pass_header(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct fcgi_rule *r = fa.cur ? fcgi_rule_add(ctx, argc, argv, 1, &fa.cur->ph_tail) : NULL;

	if (!r)
		return -1;
	for (char *p = r->name; *p; p++)
		*p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
	return 0;
}

/* path-info <regex>: two captures, the script name and the path info. */
static int kw_path_info(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct fcgi_app *a = fa.cur;

	if (!a)
		return -1;
	if (argc != 1) {
		cfg_alert(ctx, "expects one regular expression");
		return -1;
	}
#ifdef USE_PCRE2
	PCRE2_SIZE erroff;
	int errc;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)argv[0], PCRE2_ZERO_TERMINATED, 0, &errc,
				       &erroff, NULL);

	if (!re) {
		PCRE2_UCHAR why[120];

		pcre2_get_error_message(errc, why, sizeof(why));
		cfg_alert(ctx, "invalid regex '%s' at offset %zu: %s", argv[0], (size_t)erroff, why);
		return -1;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);   /* best effort */
	if (a->pi_re) {
		pcre2_match_data_free(a->pi_md);
		pcre2_code_free(a->pi_re);
	}
	free(a->path_info);
	a->path_info = xstrdup(argv[0]);
	a->pi_re = re;
	a->pi_md = pcre2_match_data_create_from_pattern(re, NULL);
	BUG_ON(!a->pi_md, "out of memory for regex match data");
	return 0;
#else
	cfg_alert(ctx, "regular expressions need PCRE2, and this sluice was built without it");
	return -1;
#endif
}

/* log-stderr global | <target> ... : the "log" line's syntax. */
static int kw_log_stderr(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct fcgi_app *a = fa.cur;

	if (!a || log_cfg_parse(ctx, &a->stderr_log, argc, argv) == -1)
		return -1;
	a->log_stderr = 1;
	return 0;
}

#define FCGI_OPT(kw, flag) \
	{ kw, CFG_SEC_FCGI_APP, CFG_T_FLAG, offsetof(struct fcgi_app, options), .mask = flag, \
	  .base = fcgi_app_base }

static struct cfg_kw fcgi_app_kws[] = {
	{ "docroot", CFG_SEC_FCGI_APP, CFG_T_STR, offsetof(struct fcgi_app, docroot),
	  .usage = "<path>", .base = fcgi_app_base },
	{ "index", CFG_SEC_FCGI_APP, CFG_T_STR, offsetof(struct fcgi_app, index),
	  .usage = "<script-name>", .base = fcgi_app_base },
	{ "path-info", CFG_SEC_FCGI_APP, CFG_T_FUNC, 0, .parse = kw_path_info,
	  .usage = "<regex>" },
	{ "set-param", CFG_SEC_FCGI_APP, CFG_T_FUNC, 0, .parse = kw_set_param,
	  .usage = "<name> <fmt> [if|unless <condition>]" },
	{ "pass-header", CFG_SEC_FCGI_APP, CFG_T_FUNC, 0, .parse = kw_pass_header,
	  .usage = "<name> [if|unless <condition>]" },
	{ "log-stderr", CFG_SEC_FCGI_APP, CFG_T_FUNC, 0, .parse = kw_log_stderr,
	  .usage = "global | <target> [len <n>] [format <fmt>] <facility> [<max> [<min>]]" },
	FCGI_OPT("option get-values", FCGI_O_GET_VALUES),
	FCGI_OPT("option keep-conn", FCGI_O_KEEP_CONN),
	FCGI_OPT("option mpxs-conns", FCGI_O_MPXS_CONNS),
	{ "option max-reqs", CFG_SEC_FCGI_APP, CFG_T_INT, offsetof(struct fcgi_app, max_reqs),
	  .min = 1, .max = 0x7fffffff, .usage = "a strictly positive integer",
	  .base = fcgi_app_base },
};

/* ---- the proxies' side ---- */

/* Notes that proxy <px> uses application <name> (resolved after parsing). */
static int fcgi_use_add(struct cfg_ctx *ctx, const char *name)
{
	struct fcgi_use *u, **tail = &fa.uses;

	if (!(ctx->px->cap & PR_CAP_BE)) {
		cfg_alert(ctx, "only available in backend or listen section");
		return -1;
	}
	u = xcalloc(1, sizeof(*u));
	u->px = ctx->px;
	u->name = xstrdup(name);
	u->file = xstrdup(ctx->file);
	u->line = ctx->line;
	while (*tail)
		tail = &(*tail)->next;
	*tail = u;
	return 0;
}

/* use-fcgi-app <name> */
static int kw_use_fcgi_app(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects <name> as argument");
		return -1;
	}
	return fcgi_use_add(ctx, argv[0]);
}

/* filter fcgi-app <name>: the same as use-fcgi-app (the application's
 * processing is the filter, with no other filter to order it against) */
static int fcgi_filter_parse(struct cfg_ctx *ctx, int argc, char **argv)
{
	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects the name of an fcgi-app section");
		return -1;
	}
	if (!(ctx->px->cap & PR_CAP_BE)) {
		/* HAProxy then finds no FastCGI server in the frontend */
		cfg_alert(ctx, "an FCGI application is used by backends only (proxy '%s' has "
			  "no backend capability)", ctx->px->name);
		return -1;
	}
	return fcgi_use_add(ctx, argv[0]);
}

static struct cfg_kw fcgi_px_kws[] = {
	{ "use-fcgi-app", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_use_fcgi_app, .usage = "<name>" },
};

static struct http_filter_kw fcgi_filters[] = {
	{ "fcgi-app", fcgi_filter_parse, NULL },
};

/* Health checks that would speak FastCGI in backend <px>, which has no
 * application (check-proto fcgi, http-check connect proto fcgi): one alert
 * each. Returns their number. */
static int fcgi_app_check_orphans(const struct proxy *px)
{
	int errors = 0;

	for (struct server *srv = px->servers; srv; srv = srv->next)
		if ((srv->flags & SRV_F_CHECK_FCGI) && (srv->flags & SRV_F_CHECKED)) {
			log_alert("%s:%d: proxy '%s': server '%s': 'check-proto fcgi' needs an FCGI "
				  "app (use-fcgi-app)", srv->conf_file, srv->conf_line, px->name,
				  srv->name);
			errors++;
		}
	if (!(chk_px_of(px)->options & CHK_O_HTTPCHK) || !px->servers)
		return errors;
	for (const struct tcpchk_rule *r = tcpchk_rules(px); r; r = r->next)
		if (r->type == TCPCHK_CONNECT && (r->conn_opts & TCPCHK_CO_FCGI)) {
			log_alert("%s:%d: proxy '%s': 'http-check connect proto fcgi' needs an FCGI "
				  "app (use-fcgi-app)", px->conf_file, px->conf_line, px->name);
			errors++;
			break;
		}
	return errors;
}

/* After parsing: every application has a document root; every backend's
 * reference names one, only one, in mode http with a FastCGI server; every
 * FastCGI server's backend has one. */
static int fcgi_app_postparse(void)
{
	int errors = 0;

	for (struct fcgi_app *a = fa.apps; a; a = a->next)
		if (!a->docroot || !*a->docroot) {
			log_alert("%s:%d: fcgi-app '%s': no docroot configured", a->conf_file,
				  a->conf_line, a->name);
			errors++;
		}
	for (struct fcgi_use *u = fa.uses; u; u = u->next) {
		struct fcgi_app *a = fcgi_app_find(u->name);

		if (!a) {
			log_alert("%s:%d: proxy '%s': fcgi-app '%s' not found", u->file, u->line,
				  u->px->name, u->name);
			errors++;
		} else if (u->px->fcgi_app && u->px->fcgi_app != a) {
			log_alert("%s:%d: proxy '%s': only one fcgi-app supported per backend "
				  "('%s' and '%s')", u->file, u->line, u->px->name,
				  u->px->fcgi_app->name, a->name);
			errors++;
		} else {
			u->px->fcgi_app = a;
			a->used = 1;
		}
	}
	for (struct proxy *px = global.proxies; px; px = px->next) {
		int nfcgi = 0;

		for (struct server *srv = px->servers; srv; srv = srv->next) {
			if (!(srv->flags & SRV_F_PROTO_FCGI))
				continue;
			nfcgi++;
			if (px->mode != PR_MODE_HTTP) {
				log_alert("%s:%d: backend '%s': server '%s': 'proto fcgi' needs mode http",
					  srv->conf_file, srv->conf_line, px->name, srv->name);
				errors++;
			} else if (!px->fcgi_app) {
				log_alert("%s:%d: proxy '%s': FCGI server '%s' has no FCGI app configured "
					  "(use-fcgi-app)", srv->conf_file, srv->conf_line, px->name,
					  srv->name);
				errors++;
			}
		}
		if (!px->fcgi_app) {
			errors += fcgi_app_check_orphans(px);
			continue;
		}
		if (px->mode != PR_MODE_HTTP) {
			log_alert("%s:%d: proxy '%s': FCGI application cannot be used in non-HTTP mode",
				  px->conf_file, px->conf_line, px->name);
			errors++;
		} else if (!nfcgi) {
			log_alert("%s:%d: proxy '%s': FCGI app configured but no FCGI server found "
				  "(servers need 'proto fcgi')", px->conf_file, px->conf_line, px->name);
			errors++;
		}
	}
	if (!fa.auth_ready) {
		const char *end;
		char *err = NULL;

		if (smp_expr_parse("http_auth_type", &fa.auth_type, &end, &err) == -1 ||
		    smp_expr_parse("http_auth_user", &fa.auth_user, &end, &err) == -1)
			BUG_ON(1, "the http_auth fetches are missing");
		fa.auth_ready = 1;
	}
	return errors;
}

void fcgi_app_free_all(void)
{
	while (fa.apps) {
		struct fcgi_app *a = fa.apps;
		struct fcgi_rule *r;

		fa.apps = a->next;
		while ((r = a->set_params)) {
			a->set_params = r->next;
			fcgi_rule_free(r);
		}
		while ((r = a->pass_hdrs)) {
			a->pass_hdrs = r->next;
			fcgi_rule_free(r);
		}
#ifdef USE_PCRE2
		if (a->pi_re) {
			pcre2_match_data_free(a->pi_md);
			pcre2_code_free(a->pi_re);
		}
#endif
		log_list_free(&a->stderr_log);
		proxy_free_detached(a->acl_px);
		free(a->path_info);
		free(a->docroot);
		free(a->index);
		free(a->name);
		free(a->conf_file);
		free(a);
	}
	while (fa.uses) {
		struct fcgi_use *u = fa.uses;

		fa.uses = u->next;
		free(u->name);
		free(u->file);
		free(u);
	}
	fa.cur = NULL;
}

int fcgi_app_open_logs(void)
{
	int ret = 0;

	for (struct fcgi_app *a = fa.apps; a; a = a->next)
		if (a->log_stderr && log_open(&a->stderr_log) == -1)
			ret = -1;
	return ret;
}

void fcgi_app_log_stderr(const struct fcgi_app *app, const char *msg, size_t len)
{
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
		len--;
	if (!app->log_stderr || !len)
		return;
	log_send(&app->stderr_log, LOG_L_ERR, msg, len);
}

/* ---- the request analysis ---- */

/* Decodes %XX sequences of <p> (<len> bytes) into <out> (as large); a
 * '%' not followed by two hex digits stays. Returns the decoded length. */
static size_t fcgi_url_decode(const char *p, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (p[i] == '%' && i + 2 < len && (hi = str_hex_digit(p[i + 1])) >= 0 &&
		    (lo = str_hex_digit(p[i + 2])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[o++] = p[i];
		}
	}
	return o;
}

/* The path part of request target <u> (<ul> bytes): what follows
 * scheme://authority of an absolute form, up to '?'. */
static void fcgi_uri_path(const char *u, size_t ul, const char **path, size_t *plen)
{
	const char *q, *a = ul && u[0] != '/' ? memmem(u, ul, "://", 3) : NULL;

	if (a) {
		const char *s = memchr(a + 3, '/', ul - (size_t)(a + 3 - u));

		if (!s) {
			*path = "/";
			*plen = 1;
			return;
		}
		ul -= (size_t)(s - u);
		u = s;
	}
	q = memchr(u, '?', ul);
	*path = u;
	*plen = q ? (size_t)(q - u) : ul;
}

/* The path of request target <u> (<ul> bytes), URL-decoded into fa.dec
 * (kept from request to request). Returns its length, or -1 (no memory). */
static long fcgi_path_decoded(const char *u, size_t ul)
{
	const char *path;
	size_t pl;

	fcgi_uri_path(u, ul, &path, &pl);
	fa.dec.len = 0;
	if (dstr_reserve(&fa.dec, pl) < 0)
		return -1;
	return (long)fcgi_url_decode(path, pl, fa.dec.p);
}

static struct fcgi_txn *fcgi_txn_get(struct stream *s)
{
	struct fcgi_txn *ft = s->txn->fcgi;

	if (ft)
		return ft;
	if (!fa.txn_pool)
		fa.txn_pool = pool_create("fcgi_txn", sizeof(*ft));
	ft = pool_alloc(fa.txn_pool);
	if (ft)
		memset(ft, 0, sizeof(*ft));
	s->txn->fcgi = ft;
	return ft;
}

void fcgi_txn_free(struct fcgi_txn *ft)
{
	if (!ft)
		return;
	dstr_free(&ft->set);
	dstr_free(&ft->dflt);
	dstr_free(&ft->pass);
	pool_free(fa.txn_pool, ft);
}

/* A sample expression's value as text for parameter <name>, into <d>. */
static int fcgi_smp_param(struct dstr *d, const char *name, const struct smp_expr *e,
                          struct stream *s)
{
	struct sample smp = { 0 };

	if (!smp_expr_eval(e, s, &smp) || !smp_cast(&smp, SMP_T_STR) || !smp.u.str.len)
		return 0;
	return fcgi_nv_add(d, name, strlen(name), smp.u.str.p, smp.u.str.len);
}

int fcgi_req_prepare(struct stream *s, struct http_head *h)
{
	const struct fcgi_app *app = s->be->fcgi_app;
	struct fcgi_txn *ft = NULL;
	struct lf_ctx lc;
	unsigned lc_needs = 0;
	int lc_ready = 0;
	char val[4096];

	if (app->pi_re) {
		/* the decoded path may not hold NUL nor LF: the regex would not
		 * see past them (HAProxy refuses them too) */
		long dl = fcgi_path_decoded(h->sl[HTTP_SL_URI].p, h->sl[HTTP_SL_URI].len);

		if (dl < 0 || memchr(fa.dec.p, 0, (size_t)dl) || memchr(fa.dec.p, '\n', (size_t)dl))
			return -1;
	}
	for (const struct fcgi_rule *r = app->set_params; r; r = r->next) {
		size_t vl;

		if (r->cond && !acl_cond_exec(r->cond, s))
			continue;
		/* filled once, again only for a format needing more */
		if (!lc_ready || (r->fmt->needs & ~lc_needs)) {
			lc_needs |= r->fmt->needs;
			http_fill_lf_ctx(s, &lc, lc_needs);
			lc_ready = 1;
		}
		vl = lf_render(r->fmt, &lc, val, sizeof(val));
		if (!vl)
			continue;   /* an empty value: the rule is ignored */
		if (!(ft = fcgi_txn_get(s)) || fcgi_nv_add(&ft->set, r->name, r->nlen, val, vl) < 0)
			return 0;   /* no memory: the parameter is not set */
	}
	for (const struct fcgi_rule *r = app->pass_hdrs; r; r = r->next) {
		if (r->cond && !acl_cond_exec(r->cond, s))
			continue;
		if (!(ft = fcgi_txn_get(s)) || dstr_add(&ft->pass, r->name, r->nlen + 1) < 0)
			return 0;
	}
	if (http_head_find(h, "authorization", 13, 0) >= 0 && (ft = fcgi_txn_get(s)) &&
	    fcgi_smp_param(&ft->dflt, "AUTH_TYPE", &fa.auth_type, s) == 0)
		fcgi_smp_param(&ft->dflt, "REMOTE_USER", &fa.auth_user, s);
	return 0;
}

/* ---- the parameters ---- */

/* Whether pairs <d> hold a parameter named <n>. */
static int fcgi_nv_has(const struct dstr *d, const char *n, size_t nl)
{
	size_t off = 0, kl, vl;
	const char *k, *v;

	while (d && d->len && fcgi_nv_next(d->p, d->len, &off, &k, &kl, &v, &vl) == 1)
		if (kl == nl && memcmp(k, n, nl) == 0)
			return 1;
	return 0;
}

/* Adds default parameter <n> unless a set-param replaces it. */
static int fcgi_param(struct dstr *out, const struct fcgi_req_src *src, const char *n,
                      const char *v, size_t vl)
{
	size_t nl = strlen(n);

	if (src->ft && fcgi_nv_has(&src->ft->set, n, nl))
		return 0;
	return fcgi_nv_add(out, n, nl, v, vl);
}

static int fcgi_param_s(struct dstr *out, const struct fcgi_req_src *src, const char *n,
                        const char *v)
{
	return fcgi_param(out, src, n, v, strlen(v));
}

/* Request fields never passed as HTTP_*: the body's (they are
 * CONTENT_TYPE and CONTENT_LENGTH), and those HAProxy omits unless
 * pass-header names them: the credentials, hop-by-hop fields. */
static int fcgi_hdr_omitted(const char *n, size_t nl, int *never)
{
	static const char *const body[] = { "content-type", "content-length" };
	static const char *const hidden[] = {
		"authorization", "proxy-authorization", "connection", "keep-alive",
		"proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
	};

	*never = 0;
	for (size_t i = 0; i < ARRAY_SIZE(body); i++)
		if (nl == strlen(body[i]) && !strncasecmp(n, body[i], nl))
			return *never = 1;
	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++)
		if (nl == strlen(hidden[i]) && !strncasecmp(n, hidden[i], nl))
			return 1;
	return 0;
}

/* Whether pass-header let field <n> through. */
static int fcgi_hdr_passed(const struct fcgi_req_src *src, const char *n, size_t nl)
{
	const struct dstr *d = src->ft ? &src->ft->pass : NULL;

	for (size_t off = 0; d && off < d->len; off += strlen(d->p + off) + 1)
		if (strlen(d->p + off) == nl && !strncasecmp(d->p + off, n, nl))
			return 1;
	return 0;
}

/* The request's fields as HTTP_<NAME>: upper case, '-' as '_'; fields of
 * the same name joined with ", " ("; " for cookies) into one parameter, as
 * RFC 3875 4.1.18 asks. A name holding a character other than a letter, a
 * digit or '-' is left out: once '_' stands for '-' two fields could pass
 * for one (HAProxy's http-restrict-req-hdr-names delete, its default for
 * FastCGI backends). */
static int fcgi_params_hdrs(struct dstr *out, const struct fcgi_req_src *src, const char *b,
                            const struct h1_msg *m)
{
	for (int i = 0; i < m->nhdrs; i++) {
		const struct h1_hdr *f = &m->hdrs[i];
		const char *n = b + f->name.off;
		size_t nl = f->name.len;
		int never, dup = 0, cookie;

		for (size_t k = 0; k < nl; k++)
			if (!((n[k] >= 'a' && n[k] <= 'z') || (n[k] >= 'A' && n[k] <= 'Z') ||
			      (n[k] >= '0' && n[k] <= '9') || n[k] == '-'))
				dup = 1;
		for (int j = 0; j < i && !dup; j++)
			dup = m->hdrs[j].name.len == nl &&
			      !strncasecmp(b + m->hdrs[j].name.off, n, nl);
		if (dup)
			continue;   /* a bad name, or joined with the first of its name */
		if (fcgi_hdr_omitted(n, nl, &never) && (never || !fcgi_hdr_passed(src, n, nl)))
			continue;
		cookie = nl == 6 && !strncasecmp(n, "cookie", 6);
		fa.scratch.len = 0;
		if (dstr_add(&fa.scratch, "HTTP_", 5) < 0)
			return -1;
		for (size_t k = 0; k < nl; k++) {
			char c = n[k] == '-' ? '_' : (n[k] >= 'a' && n[k] <= 'z') ? n[k] - 32 : n[k];

			if (dstr_add(&fa.scratch, &c, 1) < 0)
				return -1;
		}
		nl = fa.scratch.len;
		if (dstr_add(&fa.scratch, b + f->value.off, f->value.len) < 0)
			return -1;
		for (int j = i + 1; j < m->nhdrs; j++)
			if (m->hdrs[j].name.len == f->name.len &&
			    !strncasecmp(b + m->hdrs[j].name.off, n, f->name.len) &&
			    (dstr_add(&fa.scratch, cookie ? "; " : ", ", 2) < 0 ||
			     dstr_add(&fa.scratch, b + m->hdrs[j].value.off, m->hdrs[j].value.len) < 0))
				return -1;
		if (src->ft && fcgi_nv_has(&src->ft->set, fa.scratch.p, nl))
			continue;
		if (fcgi_nv_add(out, fa.scratch.p, nl, fa.scratch.p + nl, fa.scratch.len - nl) < 0)
			return -1;
	}
	return 0;
}

/* SCRIPT_NAME and PATH_INFO from the decoded path <p> (<pl> bytes): the
 * path-info regex's captures, else the whole path; the index appended to a
 * script name ending with '/'. Then SCRIPT_FILENAME and PATH_TRANSLATED
 * under the document root. */
static int fcgi_params_script(struct dstr *out, const struct fcgi_app *app,
                              const struct fcgi_req_src *src, const char *p, size_t pl)
{
	const char *sn = p, *pi = NULL;
	size_t snl = pl, pil = 0, dl = strlen(app->docroot);
	int r;

#ifdef USE_PCRE2
	if (app->pi_re && pcre2_match(app->pi_re, (PCRE2_SPTR)p, pl, 0, 0, app->pi_md, NULL) > 1) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(app->pi_md);
		uint32_t n = pcre2_get_ovector_count(app->pi_md);

		if (ov[0] != PCRE2_UNSET && ov[2] != PCRE2_UNSET) {
			sn = p + ov[2];
			snl = ov[3] - ov[2];
			if (n > 2 && ov[4] != PCRE2_UNSET && ov[5] > ov[4]) {
				pi = p + ov[4];
				pil = ov[5] - ov[4];
			}
		}
	}
#endif
	/* "<root><script>": SCRIPT_FILENAME, and SCRIPT_NAME after the root */
	fa.scratch.len = 0;
	r = dstr_add(&fa.scratch, app->docroot, dl);
	r = r ? r : dstr_add(&fa.scratch, sn, snl);
	if (!r && app->index && snl && sn[snl - 1] == '/')
		r = dstr_add(&fa.scratch, app->index, strlen(app->index));
	r = r ? r : fcgi_param(out, src, "SCRIPT_NAME", fa.scratch.p + dl, fa.scratch.len - dl);
	if (!r && pi)
		r = fcgi_param(out, src, "PATH_INFO", pi, pil);
	r = r ? r : fcgi_param(out, src, "SCRIPT_FILENAME", fa.scratch.p, fa.scratch.len);
	if (!r && pi) {
		fa.scratch.len = 0;
		r = dstr_add(&fa.scratch, app->docroot, dl);
		r = r ? r : dstr_add(&fa.scratch, pi, pil);
		r = r ? r : fcgi_param(out, src, "PATH_TRANSLATED", fa.scratch.p, fa.scratch.len);
	}
	return r;
}

int fcgi_params_build(struct dstr *out, const struct fcgi_app *app,
                      const struct fcgi_req_src *src, const char *b,
                      const struct h1_msg *m, uint64_t clen)
{
	const char *uri = b + m->uri.off, *q, *ver;
	size_t ul = m->uri.len;
	char num[32], addr[64];
	long dl;
	int r;

	r = fcgi_params_hdrs(out, src, b, m);
	for (int i = 0; i < m->nhdrs && !r; i++)
		if (h1_hdr_is(b, &m->hdrs[i], "content-type"))
			r = fcgi_param(out, src, "CONTENT_TYPE", b + m->hdrs[i].value.off,
				       m->hdrs[i].value.len);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)clen);
	r = r ? r : fcgi_param_s(out, src, "CONTENT_LENGTH", num);
	/* AUTH_TYPE, REMOTE_USER */
	if (src->ft && src->ft->dflt.len) {
		const char *k, *v;
		size_t off = 0, kl, vl;

		while (!r && fcgi_nv_next(src->ft->dflt.p, src->ft->dflt.len, &off, &k, &kl, &v,
					  &vl) == 1)
			if (!fcgi_nv_has(&src->ft->set, k, kl))
				r = fcgi_nv_add(out, k, kl, v, vl);
	}
	r = r ? r : fcgi_param_s(out, src, "GATEWAY_INTERFACE", "CGI/1.1");
	r = r ? r : fcgi_param_s(out, src, "DOCUMENT_ROOT", app->docroot);
	dl = fcgi_path_decoded(uri, ul);
	if (dl < 0)
		return -1;
	r = r ? r : fcgi_params_script(out, app, src, fa.dec.p, (size_t)dl);
	r = r ? r : fcgi_param(out, src, "REQUEST_URI", uri, ul);
	r = r ? r : fcgi_param(out, src, "REQUEST_METHOD", b + m->meth.off, m->meth.len);
	q = memchr(uri, '?', ul);
	r = r ? r : fcgi_param(out, src, "QUERY_STRING", q ? q + 1 : "",
			       q ? ul - (size_t)(q + 1 - uri) : 0);
	if (m->flags & H1_F_HOST)
		r = r ? r : fcgi_param(out, src, "SERVER_NAME", b + m->host.off, m->host.len);
	else if (src->dst && src->dst->ss_family != AF_UNIX)
		r = r ? r : fcgi_param_s(out, src, "SERVER_NAME",
					 addr_ip_str(src->dst, addr, sizeof(addr)));
	if (src->dst && src->dst->ss_family != AF_UNIX) {
		r = r ? r : fcgi_param_s(out, src, "SERVER_ADDR",
					 addr_ip_str(src->dst, addr, sizeof(addr)));
		snprintf(num, sizeof(num), "%u", addr_get_port(src->dst));
		r = r ? r : fcgi_param_s(out, src, "SERVER_PORT", num);
	}
	ver = m->flags & H1_F_VER_11 ? "HTTP/1.1" : "HTTP/1.0";
	r = r ? r : fcgi_param_s(out, src, "SERVER_PROTOCOL", ver);
	r = r ? r : fcgi_param_s(out, src, "SERVER_SOFTWARE", "sluice " SLUICE_VERSION);
	if (src->cli && src->cli->ss_family != AF_UNIX) {
		r = r ? r : fcgi_param_s(out, src, "REMOTE_ADDR",
					 addr_ip_str(src->cli, addr, sizeof(addr)));
		snprintf(num, sizeof(num), "%u", addr_get_port(src->cli));
		r = r ? r : fcgi_param_s(out, src, "REMOTE_PORT", num);
	} else if (!src->cli) {
		r = r ? r : fcgi_param_s(out, src, "REMOTE_PORT", "0");
	}
	if (src->https)
		r = r ? r : fcgi_param_s(out, src, "HTTPS", "on");
	if (!r && src->ft && src->ft->set.len)
		r = dstr_add(out, src->ft->set.p, src->ft->set.len);
	return r;
}

static struct cfg_section fcgi_app_sections[] = {
	{ "fcgi-app", CFG_SEC_FCGI_APP, sec_fcgi_app, sec_fcgi_app_end, NULL },
};

SLUICE_INIT(fcgi_app_register)
{
	cfg_register_sections(fcgi_app_sections, ARRAY_SIZE(fcgi_app_sections));
	cfg_register(fcgi_app_kws, ARRAY_SIZE(fcgi_app_kws));
	cfg_register(fcgi_px_kws, ARRAY_SIZE(fcgi_px_kws));
	http_filter_register(fcgi_filters, ARRAY_SIZE(fcgi_filters));
	cfg_register_postparse(fcgi_app_postparse, 40);
}
