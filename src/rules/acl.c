/* ACLs (acl.h, acl_px.h): the "acl" keyword, the predefined ACLs, rule
 * conditions ("if"/"unless" with implicit AND, "||", "!", named and
 * anonymous "{ ... }" ACLs) and their evaluation on a stream. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/acl.h>
#include <sluice/acl_px.h>
#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/map.h>
#include <sluice/pattern.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/str.h>

#include "acl_int.h"

/* ------------------------------------------------------------------------
 * Short ACL forms: "path_beg" is "path -m beg"
 */

struct acl_kw {
	const char    *name;
	const char    *fetch;
	enum pat_match match;
};

#define ACL_SUFFIXES(pfx, f) \
	{ pfx "_beg", f, PAT_M_BEG }, { pfx "_end", f, PAT_M_END }, \
	{ pfx "_sub", f, PAT_M_SUB }, { pfx "_reg", f, PAT_M_REG }, \
	{ pfx "_dir", f, PAT_M_DIR }, { pfx "_dom", f, PAT_M_DOM }, \
	{ pfx "_len", f, PAT_M_LEN }

static const struct acl_kw acl_kws[] = {
	ACL_SUFFIXES("path", "path"),
	ACL_SUFFIXES("url", "url"),
	ACL_SUFFIXES("urlp", "url_param"),
	ACL_SUFFIXES("base", "base"),
	ACL_SUFFIXES("hdr", "hdr"),
	ACL_SUFFIXES("fhdr", "fhdr"),
	ACL_SUFFIXES("cook", "cook"),
	ACL_SUFFIXES("shdr", "res.hdr"),
	ACL_SUFFIXES("scook", "res.cook"),
	{ "url_ip",   "url_ip", PAT_M_IP },
	{ "cook_val", "cook", PAT_M_INT },
	{ "urlp_val", "url_param", PAT_M_INT },
	{ "req_ver",  "req.ver", PAT_M_STR },
};

static const struct acl_kw *acl_kw_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(acl_kws); i++)
		if (strlen(acl_kws[i].name) == len && memcmp(acl_kws[i].name, name, len) == 0)
			return &acl_kws[i];
	return NULL;
}

/* The default method for an expression's output type. */
static enum pat_match acl_default_match(enum smp_type t)
{
	switch (t) {
	case SMP_T_BOOL: return PAT_M_BOOL;
	case SMP_T_SINT: return PAT_M_INT;
	case SMP_T_ADDR: case SMP_T_IPV4: case SMP_T_IPV6: return PAT_M_IP;
	default: return PAT_M_STR;
	}
}

/* ------------------------------------------------------------------------
 * One ACL line: <criterion> [flags] [operator] <value> ...
 */

static void acl_entry_free(struct acl_entry *e)
{
	while (e) {
		struct acl_entry *next = e->next;

		smp_expr_free(&e->expr);
		pat_ref_detach(&e->pats);
		pat_set_free(&e->pats);
		free(e->refs);
		free(e);
		e = next;
	}
}

static void acl_free(struct acl *a)
{
	while (a) {
		struct acl *next = a->next;

		acl_entry_free(a->entries);
		free(a->name);
		free(a);
		a = next;
	}
}

/* Feeds the patterns of <e> from <ref>, and remembers it (merged rules
 * attach their own set to the same references). */
static int acl_entry_attach(struct acl_entry *e, struct pat_ref *ref, char **err)
{
	if (pat_ref_attach(ref, &e->pats, err) == -1)
		return -1;
	e->refs = xrealloc(e->refs, (size_t)(e->nrefs + 1) * sizeof(*e->refs));
	e->refs[e->nrefs++] = ref;
	return 0;
}

/* Parses <argv> (the criterion first) into a new entry. Returns it, or NULL
 * after cfg_alert() (<what> names the ACL in messages). */
struct acl_entry *acl_entry_parse(struct cfg_ctx *ctx, const char *what, int argc,
                                  char **argv)
{
	struct acl_entry *e;
	const struct acl_kw *kw;
	const char *crit = argv[0], *files[16];
	char *err = NULL, expr[1024];
	size_t n;
	int i, nfiles = 0, icase = 0, has_m = 0, mapfile = 0;
	enum pat_match m = PAT_M_STR;
	enum pat_op op = PAT_OP_NONE;

	if (argc < 1) {
		cfg_alert(ctx, "%s: expects a criterion (a sample fetch)", what);
		return NULL;
	}
	e = xcalloc(1, sizeof(*e));
	n = strcspn(crit, "(,");
	kw = acl_kw_find(crit, n);
	if (kw) {
		snprintf(expr, sizeof(expr), "%s%s", kw->fetch, crit + n);
		m = kw->match;
		has_m = 1;
	} else
		snprintf(expr, sizeof(expr), "%s", crit);
	if (smp_expr_parse(expr, &e->expr, NULL, &err) == -1) {
		cfg_alert(ctx, "%s: %s in ACL expression '%s'", what, err, crit);
		goto fail;
	}
	if (!has_m)
		m = acl_default_match(smp_expr_type(&e->expr));
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *f = argv[i];

		if (strcmp(f, "--") == 0) {
			i++;
			break;
		} else if (strcmp(f, "-i") == 0) {
			icase = 1;
		} else if (strcmp(f, "-n") == 0) {
			/* host names are never resolved: nothing to do */
		} else if (strcmp(f, "-m") == 0 || strcmp(f, "-f") == 0 || strcmp(f, "-M") == 0) {
			if (i + 1 >= argc) {
				cfg_alert(ctx, "%s: option '%s' expects an argument", what, f);
				goto fail;
			}
			if (f[1] == 'm') {
				if (pat_match_find(argv[i + 1], &m) == -1) {
					cfg_alert(ctx, "%s: unknown matching method '%s' (expects found, "
						  "bool, int, ip, len, str, beg, end, sub, reg, dir, dom, bin)",
						  what, argv[i + 1]);
					goto fail;
				}
				has_m = 1;
			} else {
				if (nfiles == (int)ARRAY_SIZE(files)) {
					cfg_alert(ctx, "%s: too many pattern files (at most %zu)", what,
						  ARRAY_SIZE(files));
					goto fail;
				}
				files[nfiles++] = argv[i + 1];
				mapfile |= f[1] == 'M';
			}
			i++;
		} else {
			cfg_alert(ctx, "%s: '%s' is not a valid ACL option (expects -i, -f, -m, -n, "
				  "-M, --); put '--' before a pattern beginning with '-'", what, f);
			goto fail;
		}
	}
#ifndef USE_PCRE2
	if (m == PAT_M_REG) {
		cfg_alert(ctx, "%s: regex matching ('%s') needs a build with USE_PCRE2=1", what,
			  crit);
		goto fail;
	}
#endif
	pat_set_init(&e->pats, m, icase && m != PAT_M_BIN ? PAT_F_ICASE : 0);
	if (i < argc && (m == PAT_M_INT || m == PAT_M_LEN) && pat_op_find(argv[i], &op))
		i++;
	if (m == PAT_M_FOUND || m == PAT_M_BOOL) {
		if (i < argc || nfiles)
			cfg_warn(ctx, "%s: '-m %s' ignores its patterns", what, pat_match_name(m));
		return e;
	}
	for (int k = 0; k < nfiles; k++) {
		struct pat_ref *ref;
		char desc[512];

		snprintf(desc, sizeof(desc), "pattern loaded from file '%s' used by acl at file "
			 "'%s' line %d", files[k], ctx->file ? ctx->file : "", ctx->line);
		ref = pat_ref_load(files[k], PAT_REF_ACL | (mapfile ? PAT_REF_MAP : 0), desc, &err);
		if (!ref || acl_entry_attach(e, ref, &err) == -1) {
			cfg_alert(ctx, "%s: %s", what, err);
			goto fail;
		}
	}
	if (i < argc) {
		/* Inline patterns are a reference of their own ("show acl"). */
		struct pat_ref *ref;
		char desc[512];

		for (int k = i; k < argc; k++) {
			if (pat_set_check(m, argv[k], &err) == -1) {
				cfg_alert(ctx, "%s: %s", what, err);
				goto fail;
			}
		}
		snprintf(desc, sizeof(desc), "acl '%.*s' file '%s' line %d", (int)n, crit,
			 ctx->file ? ctx->file : "", ctx->line);
		ref = pat_ref_new(PAT_REF_ACL, desc);
		for (int k = i; k < argc; k++)
			pat_ref_append(ref, argv[k], NULL, op);
		if (acl_entry_attach(e, ref, &err) == -1) {
			cfg_alert(ctx, "%s: %s", what, err);
			goto fail;
		}
	}
	if (!e->pats.count && !nfiles && strcmp(argv[argc - 1], "--") != 0)
		cfg_warn(ctx, "%s: no pattern to match '%s' against, so it will never match "
			 "(add '--' to silence this warning)", what, crit);
	return e;
fail:
	free(err);
	acl_entry_free(e);
	return NULL;
}

static struct acl_px *acl_px_get(struct proxy *px)
{
	if (!px->acl) {
		px->acl = xcalloc(1, sizeof(*px->acl));
		px->acl->use_be_tail = &px->acl->use_be;
	}
	return px->acl;
}

static struct acl *acl_list_find(struct acl *list, const char *name)
{
	for (; list; list = list->next)
		if (list->name && strcmp(list->name, name) == 0)
			return list;
	return NULL;
}

/* acl <name> <criterion> [flags] [operator] <value> ... */
static int kw_acl(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct proxy *px = ctx->px;
	struct acl_entry *e, **tail;
	struct acl *a;
	char what[128];

	if (argc < 2) {
		cfg_alert(ctx, "expects an ACL name and a criterion: acl <name> <criterion> "
			  "[flags] [operator] <value> ...");
		return -1;
	}
	for (const char *p = argv[0]; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.:", *p)) {
			cfg_alert(ctx, "invalid character '%c' in ACL name '%s' (letters, digits, "
				  "'-', '_', '.' and ':' only)", *p, argv[0]);
			return -1;
		}
	snprintf(what, sizeof(what), "ACL '%s'", argv[0]);
	e = acl_entry_parse(ctx, what, argc - 1, argv + 1);
	if (!e)
		return -1;
	a = acl_list_find(acl_px_get(px)->acls, argv[0]);
	if (!a) {
		a = xcalloc(1, sizeof(*a));
		a->name = xstrdup(argv[0]);
		a->next = px->acl->acls;
		px->acl->acls = a;
	}
	for (tail = &a->entries; *tail; tail = &(*tail)->next)
		;
	*tail = e;
	a->use |= e->expr.fetch->use;
	return 0;
}

/* ------------------------------------------------------------------------
 * Predefined ACLs (HAProxy 2.6 manual, 7.4)
 */

static const struct { const char *name; const char *def; } acl_predef_defs[] = {
	{ "FALSE",          "always_false" },
	{ "HTTP",           "req.proto_http" },
	{ "HTTP_1.0",       "req.ver 1.0" },
	{ "HTTP_1.1",       "req.ver 1.1" },
	{ "HTTP_CONTENT",   "req.hdr_val(content-length) gt 0" },
#ifdef USE_PCRE2
	{ "HTTP_URL_ABS",   "url_reg ^[^/:]*://" },
#endif
	{ "HTTP_URL_SLASH", "url_beg /" },
	{ "HTTP_URL_STAR",  "url *" },
	{ "LOCALHOST",      "src 127.0.0.1/8 ::1" },
	{ "METH_CONNECT",   "method CONNECT" },
	{ "METH_DELETE",    "method DELETE" },
	{ "METH_GET",       "method GET HEAD" },
	{ "METH_HEAD",      "method HEAD" },
	{ "METH_OPTIONS",   "method OPTIONS" },
	{ "METH_POST",      "method POST" },
	{ "METH_PUT",       "method PUT" },
	{ "METH_TRACE",     "method TRACE" },
	{ "RDP_COOKIE",     "req.rdp_cookie_cnt gt 0" },
	{ "REQ_CONTENT",    "req.len gt 0" },
	{ "TRUE",           "always_true" },
	{ "WAIT_END",       "wait_end" },
};

static struct acl *acl_predef;

/* Built on first use: the fetch tables register from constructors, whose
 * order is not known. */
static struct acl *acl_predef_find(const char *name)
{
	if (!acl_predef) {
		struct cfg_ctx ctx = { .file = "(predefined ACLs)", .kw = "acl" };

		for (size_t i = 0; i < ARRAY_SIZE(acl_predef_defs); i++) {
			char buf[128], *argv[8], *save = NULL;
			int argc = 0;
			struct acl *a = xcalloc(1, sizeof(*a));

			snprintf(buf, sizeof(buf), "%s", acl_predef_defs[i].def);
			for (char *w = strtok_r(buf, " ", &save); w && argc < 8;
			     w = strtok_r(NULL, " ", &save))
				argv[argc++] = w;
			a->name = xstrdup(acl_predef_defs[i].name);
			a->entries = acl_entry_parse(&ctx, a->name, argc, argv);
			BUG_ON(!a->entries, "predefined ACL does not parse");
			a->use = a->entries->expr.fetch->use;
			a->next = acl_predef;
			acl_predef = a;
		}
	}
	return acl_list_find(acl_predef, name);
}

/* ------------------------------------------------------------------------
 * Conditions
 */

static void acl_cond_add_term(struct acl_cond *c, struct acl *a, int neg, int new_suite)
{
	struct acl_suite *s;

	if (new_suite || !c->nsuites) {
		c->suites = xrealloc(c->suites, (size_t)(c->nsuites + 1) * sizeof(*c->suites));
		c->suites[c->nsuites++] = (struct acl_suite){ 0 };
	}
	s = &c->suites[c->nsuites - 1];
	s->terms = xrealloc(s->terms, (size_t)(s->n + 1) * sizeof(*s->terms));
	s->terms[s->n++] = (struct acl_term){ a, neg };
	c->use |= a->use;
}

struct acl_cond *acl_cond_parse(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct acl_cond *c;
	int i, neg = 0, new_suite = 0, nanon = 0;

	if (argc < 1 || (strcmp(argv[0], "if") != 0 && strcmp(argv[0], "unless") != 0)) {
		cfg_alert(ctx, "expects 'if' or 'unless' before a condition");
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->unless = argv[0][0] == 'u';
	for (i = 1; i < argc; i++) {
		const char *w = argv[i];
		struct acl *a;

		if (strcmp(w, "||") == 0 || strcmp(w, "or") == 0) {
			if (neg || !c->nsuites || new_suite) {
				cfg_alert(ctx, "'%s' without a condition before it", w);
				goto fail;
			}
			new_suite = 1;
			continue;
		}
		while (w[0] == '!') {
			neg = !neg;
			w++;
		}
		if (!w[0])
			continue;
		if (strcmp(w, "{") == 0) {
			int j;
			char what[64];

			for (j = i + 1; j < argc && strcmp(argv[j], "}") != 0; j++)
				;
			if (j >= argc) {
				cfg_alert(ctx, "missing '}' after the anonymous ACL '{'");
				goto fail;
			}
			snprintf(what, sizeof(what), "anonymous ACL #%d", ++nanon);
			a = xcalloc(1, sizeof(*a));
			a->next = c->anon;
			c->anon = a;
			a->entries = j > i + 1 ? acl_entry_parse(ctx, what, j - i - 1, argv + i + 1) : NULL;
			if (j == i + 1)
				cfg_alert(ctx, "empty anonymous ACL '{ }'");
			if (!a->entries)
				goto fail;
			a->use = a->entries->expr.fetch->use;
			i = j;
		} else if (strcmp(w, "}") == 0) {
			cfg_alert(ctx, "'}' without an opening '{'");
			goto fail;
		} else {
			a = ctx->px && ctx->px->acl ? acl_list_find(ctx->px->acl->acls, w) : NULL;
			if (!a)
				a = acl_predef_find(w);
			if (!a) {
				cfg_alert(ctx, "no such ACL: '%s' (ACLs must be declared with 'acl' "
					  "before they are used, in the same section)", w);
				goto fail;
			}
		}
		acl_cond_add_term(c, a, neg, new_suite);
		neg = 0;
		new_suite = 0;
	}
	if (neg || new_suite || !c->nsuites) {
		cfg_alert(ctx, "incomplete condition after '%s'%s", argv[argc - 1],
			  !c->nsuites ? " (expects ACL names or '{ ... }')" : "");
		goto fail;
	}
	return c;
fail:
	acl_cond_free(c);
	return NULL;
}

void acl_cond_check_request(struct cfg_ctx *ctx, const struct acl_cond *c)
{
	/* A request rule cannot see the response: HAProxy warns that such an
	 * ACL never matches. */
	if ((c->use & SMP_USE_L7RES) && !(c->use & ~SMP_USE_L7RES))
		cfg_warn(ctx, "condition uses only response fetches, which request rules "
			 "cannot see: it will never match");
}

/* One occurrence after the other of sample <expr> for <s> against <pats>.
 * A miss on a sample that may still change (more data to come) is
 * ACL_TEST_MISS. */
static enum acl_test acl_match_test(const struct smp_expr *expr, const struct pat_set *pats,
                                    struct stream *s)
{
	struct sample smp = { .iterate = 1, .ctx = 0 };
	unsigned seen = 0;

	do {
		int got = smp_expr_eval(expr, s, &smp);

		seen |= smp.flags;
		if (!got)
			break;
		if (pat_set_exec(pats, &smp))
			return ACL_TEST_PASS;
	} while (smp.flags & SMP_F_NOT_LAST);
	return seen & SMP_F_MAY_CHANGE ? ACL_TEST_MISS : ACL_TEST_FAIL;
}

int acl_match(const struct smp_expr *expr, const struct pat_set *pats, struct stream *s)
{
	return acl_match_test(expr, pats, s) == ACL_TEST_PASS;
}

enum acl_test acl_test(const struct acl *a, struct stream *s)
{
	enum acl_test res = ACL_TEST_FAIL;

	for (const struct acl_entry *e = a->entries; e && res != ACL_TEST_PASS; e = e->next) {
		enum acl_test r = acl_match_test(&e->expr, &e->pats, s);

		if (r != ACL_TEST_FAIL)
			res = r;
	}
	return res;
}

int acl_exec(const struct acl *a, struct stream *s)
{
	return acl_test(a, s) == ACL_TEST_PASS;
}

/* Three-valued logic: a negated miss stays a miss; AND fails on any
 * failure, else misses on any miss; OR passes on any pass, else misses on
 * any miss. */
enum acl_test acl_cond_test(const struct acl_cond *c, struct stream *s)
{
	enum acl_test res = ACL_TEST_FAIL;

	if (!c)
		return ACL_TEST_PASS;
	if (c->merge)   /* merged rules are never run on data that may grow */
		return acl_merge_exec(c->merge, s) ? ACL_TEST_PASS : ACL_TEST_FAIL;
	for (int i = 0; i < c->nsuites && res != ACL_TEST_PASS; i++) {
		const struct acl_suite *su = &c->suites[i];
		enum acl_test sr = ACL_TEST_PASS;

		for (int j = 0; j < su->n && sr != ACL_TEST_FAIL; j++) {
			enum acl_test t = acl_test(su->terms[j].acl, s);

			if (t != ACL_TEST_MISS && su->terms[j].neg)
				t = t == ACL_TEST_PASS ? ACL_TEST_FAIL : ACL_TEST_PASS;
			if (t != ACL_TEST_PASS)
				sr = t;
		}
		if (sr != ACL_TEST_FAIL)
			res = sr;
	}
	if (res != ACL_TEST_MISS && c->unless)
		res = res == ACL_TEST_PASS ? ACL_TEST_FAIL : ACL_TEST_PASS;
	return res;
}

int acl_cond_exec(const struct acl_cond *c, struct stream *s)
{
	return acl_cond_test(c, s) == ACL_TEST_PASS;
}

void acl_cond_free(struct acl_cond *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nsuites; i++)
		free(c->suites[i].terms);
	free(c->suites);
	acl_free(c->anon);
	if (c->merge)
		acl_merge_free(c->merge);
	free(c);
}

/* ------------------------------------------------------------------------
 * use_backend <backend> [if|unless <condition>]
 */

struct use_be_rule {
	char               *name;
	struct proxy       *be;
	struct lf_expr     *lf;     /* a dynamic name ("%[...]"), rendered per stream */
	struct acl_cond    *cond;
	char               *file;
	int                 line;
	struct use_be_rule *next;
};

static void use_be_free(struct use_be_rule *r)
{
	acl_cond_free(r->cond);
	if (r->lf) {
		lf_free(r->lf);
		free(r->lf);
	}
	free(r->name);
	free(r->file);
	free(r);
}

static int kw_use_backend(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct use_be_rule *r;
	struct acl_px *ap;

	if (argc < 1) {
		cfg_alert(ctx, "expects a backend name, then optionally 'if' or 'unless' and a "
			  "condition");
		return -1;
	}
	r = xcalloc(1, sizeof(*r));
	if (strchr(argv[0], '%')) {
		char *err = NULL;

		r->lf = xcalloc(1, sizeof(*r->lf));
		if (lf_compile(argv[0], r->lf, &err) == -1) {
			cfg_alert(ctx, "invalid log-format backend name '%s': %s", argv[0],
				  err ? err : "syntax error");
			free(err);
			free(r->lf);
			free(r);
			return -1;
		}
	}
	if (argc > 1) {
		r->cond = acl_cond_parse(ctx, argc - 1, argv + 1);
		if (!r->cond) {
			use_be_free(r);
			return -1;
		}
		acl_cond_check_request(ctx, r->cond);
	}
	r->name = xstrdup(argv[0]);
	r->file = xstrdup(ctx->file ? ctx->file : "");
	r->line = ctx->line;
	ap = acl_px_get(ctx->px);
	*ap->use_be_tail = r;
	ap->use_be_tail = &r->next;
	return 0;
}

static int use_srv_resolve(struct proxy *px);

static int use_backend_same(const void *a, const void *b)
{
	const struct use_be_rule *x = a, *y = b;

	return x->be && x->be == y->be;
}

static void use_backend_drop(void *p)
{
	use_be_free(p);
}

/* Merges each run of use_backend rules naming the same backend under
 * conditions acl_cond_merge() can join (acl.h). */
static int use_backend_merge(struct acl_px *ap)
{
	void *last, *failed;
	char *err = NULL;

	if (acl_merge_rules(ap->use_be, offsetof(struct use_be_rule, next),
			    offsetof(struct use_be_rule, cond), use_backend_same, use_backend_drop,
			    &last, &failed, &err) == -1) {
		const struct use_be_rule *r = failed;

		log_alert("%s:%d: merging use_backend rules: %s", r->file, r->line, err);
		free(err);
		return -1;
	}
	if (last)
		ap->use_be_tail = &((struct use_be_rule *)last)->next;
	return 0;
}

static int acl_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		if (!px->acl)
			continue;
		errors += use_srv_resolve(px);
		for (struct use_be_rule *r = px->acl->use_be; r; r = r->next) {
			if (r->lf)
				continue;   /* resolved per stream */
			r->be = proxy_find(r->name, PR_CAP_BE);
			if (!r->be) {
				log_alert("%s:%d: proxy '%s': use_backend '%s' does not exist",
					  r->file, r->line, px->name, r->name);
				errors++;
			} else if (px->mode == PR_MODE_HTTP && r->be->mode != PR_MODE_HTTP) {
				log_alert("%s:%d: proxy '%s': use_backend '%s' is in %s mode but the "
					  "frontend is in http mode", r->file, r->line, px->name,
					  r->name, proxy_mode_str(r->be));
				errors++;
			}
		}
		if (!errors && use_backend_merge(px->acl) == -1)
			errors++;
	}
	return errors;
}

struct proxy *use_backend_select(struct proxy *fe, struct stream *s)
{
	if (!fe->acl)
		return NULL;
	for (const struct use_be_rule *r = fe->acl->use_be; r; r = r->next) {
		char name[256];
		struct proxy *be;

		if (!(r->be || r->lf) || !acl_cond_exec(r->cond, s))
			continue;
		if (!r->lf)
			return r->be;
		/* A name naming no usable backend: the next rule, as in HAProxy. */
		if (act_render(s, r->lf, name, sizeof(name)) <= 0)
			continue;
		be = proxy_find(name, PR_CAP_BE);
		if (be && (fe->mode != PR_MODE_HTTP || be->mode == PR_MODE_HTTP))
			return be;
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * use-server <server> [if|unless <condition>]
 */

struct use_srv_rule {
	char                *name;
	struct server       *srv;
	struct acl_cond     *cond;
	char                *file;
	int                  line;
	struct use_srv_rule *next;
};

static void use_srv_free(struct use_srv_rule *r)
{
	acl_cond_free(r->cond);
	free(r->name);
	free(r->file);
	free(r);
}

static int kw_use_server(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct use_srv_rule *r, **tail;

	if (argc < 1) {
		cfg_alert(ctx, "expects a server name, then optionally 'if' or 'unless' and a "
			  "condition");
		return -1;
	}
	r = xcalloc(1, sizeof(*r));
	if (argc > 1) {
		r->cond = acl_cond_parse(ctx, argc - 1, argv + 1);
		if (!r->cond) {
			use_srv_free(r);
			return -1;
		}
	}
	r->name = xstrdup(argv[0]);
	r->file = xstrdup(ctx->file ? ctx->file : "");
	r->line = ctx->line;
	for (tail = &acl_px_get(ctx->px)->use_srv; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	return 0;
}

/* Resolves the use-server rules of <px>. Returns the number of errors. */
static int use_srv_resolve(struct proxy *px)
{
	int errors = 0;

	for (struct use_srv_rule *r = px->acl->use_srv; r; r = r->next) {
		for (r->srv = px->servers; r->srv; r->srv = r->srv->next)
			if (strcmp(r->srv->name, r->name) == 0)
				break;
		if (!r->srv) {
			log_alert("%s:%d: backend '%s': use-server '%s' names no server of this "
				  "backend", r->file, r->line, px->name, r->name);
			errors++;
		}
	}
	return errors;
}

struct server *use_server_select(struct proxy *be, struct stream *s)
{
	if (!be->acl)
		return NULL;
	/* A rule naming a server that cannot take traffic is skipped. */
	for (const struct use_srv_rule *r = be->acl->use_srv; r; r = r->next)
		if (r->srv && server_usable(r->srv) && acl_cond_exec(r->cond, s))
			return r->srv;
	return NULL;
}

static void acl_px_release(struct proxy *px)
{
	struct use_be_rule *r, *next;

	if (!px->acl)
		return;
	acl_free(px->acl->acls);
	while (px->acl->use_srv) {
		struct use_srv_rule *u = px->acl->use_srv;

		px->acl->use_srv = u->next;
		use_srv_free(u);
	}
	for (r = px->acl->use_be; r; r = next) {
		next = r->next;
		use_be_free(r);
	}
	free(px->acl);
	px->acl = NULL;
}

/* ACLs are not inherited from defaults (HAProxy 2.6 neither): no inherit. */
static struct proxy_ext acl_ext = { .release = acl_px_release };

static struct cfg_kw acl_cfg_kws[] = {
	{ .name = "acl", .sections = CFG_SEC_PROXIES | CFG_SEC_FCGI_APP, .type = CFG_T_FUNC,
	  .parse = kw_acl,
	  .usage = "<name> <criterion> [flags] [operator] <value> ..." },
	{ .name = "use-server", .sections = CFG_SEC_BACKEND | CFG_SEC_LISTEN,
	  .type = CFG_T_FUNC, .parse = kw_use_server,
	  .usage = "<server> [if|unless <condition>]" },
	{ .name = "use_backend", .sections = CFG_SEC_FRONTEND | CFG_SEC_LISTEN,
	  .type = CFG_T_FUNC, .parse = kw_use_backend,
	  .usage = "<backend> [if|unless <condition>]" },
};

SLUICE_INIT(acl_register)
{
	cfg_register(acl_cfg_kws, ARRAY_SIZE(acl_cfg_kws));
	cfg_register_postparse(acl_postparse, 25);
	proxy_register_ext(&acl_ext);
}
