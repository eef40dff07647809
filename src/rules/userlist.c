/* The "userlist" section (users, groups, crypt(3) password checks) and the
 * HTTP Basic authentication fetches: http_auth, http_auth_group,
 * http_auth_type, http_auth_user, http_auth_pass. */
#include <crypt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/log.h>
#include <sluice/sample.h>
#include <sluice/stats.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/userlist.h>

static struct {
	struct userlist *lists;
	struct userlist *cur;    /* the section being parsed */
} ul_st;

/* crypt_r()'s work area is large (tens of KiB): one for the process, which
 * runs one loop on one thread. */
static struct crypt_data ul_crypt;

struct userlist *userlist_find(const char *name)
{
	for (struct userlist *ul = ul_st.lists; ul; ul = ul->next)
		if (strcmp(ul->name, name) == 0)
			return ul;
	return NULL;
}

const struct ul_user *userlist_user(const struct userlist *ul, const char *name, size_t nlen)
{
	for (const struct ul_user *u = ul->users; u; u = u->next)
		if (strlen(u->name) == nlen && memcmp(u->name, name, nlen) == 0)
			return u;
	return NULL;
}

static struct ul_group *group_find(const struct userlist *ul, const char *name, size_t nlen)
{
	for (struct ul_group *g = ul->groups; g; g = g->next)
		if (strlen(g->name) == nlen && memcmp(g->name, name, nlen) == 0)
			return g;
	return NULL;
}

int userlist_check(const struct ul_user *u, const char *pass, size_t plen)
{
	char buf[1024];
	const char *h;

	if (!u->pass)
		return 0;
	if (u->insecure)
		return strlen(u->pass) == plen && memcmp(u->pass, pass, plen) == 0;
	/* crypt() reads a C string: a password with a NUL cannot match. */
	if (plen >= sizeof(buf) || memchr(pass, '\0', plen))
		return 0;
	memcpy(buf, pass, plen);
	buf[plen] = '\0';
	h = crypt_r(buf, u->pass, &ul_crypt);
	memset(buf, 0, sizeof(buf));
	/* An unsupported or malformed hash gives NULL or "*0"/"*1". */
	return h && h[0] != '*' && strcmp(h, u->pass) == 0;
}

/* ---- the section ---- */

static int ul_valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s == ',' || *s == ' ' || *s == '\t')
			return 0;
	return 1;
}

static int sec_userlist(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct userlist *ul, *dup, **tail = &ul_st.lists;

	ul_st.cur = NULL;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	dup = userlist_find(argv[0]);
	if (dup) {
		cfg_alert(ctx, "'%s' is already used by a userlist declared at %s:%d", argv[0],
			  dup->file, dup->line);
		return -1;
	}
	if (argc > 1)
		cfg_warn(ctx, "extra arguments after the name are ignored ('%s')", argv[1]);
	ul = xcalloc(1, sizeof(*ul));
	ul->name = xstrdup(argv[0]);
	ul->file = xstrdup(ctx->file);
	ul->line = ctx->line;
	while (*tail)
		tail = &(*tail)->next;
	*tail = ul;
	ul_st.cur = ul;
	return 0;
}

static int sec_userlist_end(struct cfg_ctx *ctx)
{
	ul_st.cur = NULL;
	return 0;
}

/* user <name> [password <hash> | insecure-password <pw>] [groups <g>,...] */
static int kw_user(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct userlist *ul = ul_st.cur;
	struct ul_user *u, **tail;
	const char *pass = NULL, *groups = NULL;
	int insecure = 0;

	if (!ul)
		return -1;   /* the section header failed; its error is reported */
	if (argc < 1 || !ul_valid_name(argv[0])) {
		cfg_alert(ctx, "expects <name> [password <hash> | insecure-password <password>] "
			  "[groups <group>,...]");
		return -1;
	}
	if (userlist_user(ul, argv[0], strlen(argv[0]))) {
		cfg_alert(ctx, "user '%s' is already declared in userlist '%s'", argv[0], ul->name);
		return -1;
	}
	for (int i = 1; i < argc; i += 2) {
		int is_pw = strcmp(argv[i], "password") == 0;
		int is_ipw = strcmp(argv[i], "insecure-password") == 0;

		if (!is_pw && !is_ipw && strcmp(argv[i], "groups") != 0) {
			cfg_alert(ctx, "unknown argument '%s' for user '%s'; expects 'password', "
				  "'insecure-password' or 'groups'", argv[i], argv[0]);
			return -1;
		}
		if (i + 1 >= argc) {
			cfg_alert(ctx, "'%s' expects a value for user '%s'", argv[i], argv[0]);
			return -1;
		}
		if (is_pw || is_ipw) {
			if (pass) {
				cfg_alert(ctx, "user '%s' has more than one password", argv[0]);
				return -1;
			}
			pass = argv[i + 1];
			insecure = is_ipw;
		} else {
			if (groups) {
				cfg_alert(ctx, "'groups' given twice for user '%s'", argv[0]);
				return -1;
			}
			groups = argv[i + 1];
		}
	}
	if (pass && !insecure) {
		const char *h = crypt_r("", pass, &ul_crypt);

		if (!h || h[0] == '*')
			cfg_warn(ctx, "user '%s': the password hash is not supported by this "
				 "system's crypt(3); this user cannot log in", argv[0]);
	}
	u = xcalloc(1, sizeof(*u));
	u->name = xstrdup(argv[0]);
	u->pass = pass ? xstrdup(pass) : NULL;
	u->insecure = insecure;
	u->grp_names = groups ? xstrdup(groups) : NULL;
	u->file = xstrdup(ctx->file);
	u->line = ctx->line;
	for (tail = &ul->users; *tail; tail = &(*tail)->next)
		;
	*tail = u;
	return 0;
}

/* group <name> [users <user>,...] */
static int kw_group(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct userlist *ul = ul_st.cur;
	struct ul_group *g, **tail;

	if (!ul)
		return -1;
	if (argc < 1 || !ul_valid_name(argv[0]) ||
	    (argc > 1 && (strcmp(argv[1], "users") != 0 || argc != 3))) {
		cfg_alert(ctx, "expects <name> [users <user>,...]");
		return -1;
	}
	if (group_find(ul, argv[0], strlen(argv[0]))) {
		cfg_alert(ctx, "group '%s' is already declared in userlist '%s'", argv[0], ul->name);
		return -1;
	}
	g = xcalloc(1, sizeof(*g));
	g->name = xstrdup(argv[0]);
	g->usr_names = argc > 2 ? xstrdup(argv[2]) : NULL;
	g->file = xstrdup(ctx->file);
	g->line = ctx->line;
	for (tail = &ul->groups; *tail; tail = &(*tail)->next)
		;
	*tail = g;
	return 0;
}

/* ---- post-parse ---- */

static void user_add_group(struct ul_user *u, struct ul_group *g)
{
	for (int i = 0; i < u->ngroups; i++)
		if (u->groups[i] == g)
			return;
	u->groups = xrealloc(u->groups, (size_t)(u->ngroups + 1) * sizeof(*u->groups));
	u->groups[u->ngroups++] = g;
}

/* Calls <fn> for each non-empty element of comma list <list>. Returns the
 * sum of what <fn> returns. */
static int ul_each(const char *list, int (*fn)(struct userlist *, void *, const char *, size_t),
                   struct userlist *ul, void *obj)
{
	int errors = 0;

	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (n)
			errors += fn(ul, obj, list, n);
		list += n + (list[n] == ',');
	}
	return errors;
}

static int ul_user_group(struct userlist *ul, void *obj, const char *name, size_t n)
{
	struct ul_user *u = obj;
	struct ul_group *g = group_find(ul, name, n);

	if (!g) {
		log_alert("%s:%d: 'user' in userlist '%s': user '%s' names unknown group '%.*s'",
			  u->file, u->line, ul->name, u->name, (int)n, name);
		return 1;
	}
	user_add_group(u, g);
	return 0;
}

static int ul_group_user(struct userlist *ul, void *obj, const char *name, size_t n)
{
	struct ul_group *g = obj;
	struct ul_user *u = (struct ul_user *)userlist_user(ul, name, n);

	if (!u) {
		log_alert("%s:%d: 'group' in userlist '%s': group '%s' names unknown user '%.*s'",
			  g->file, g->line, ul->name, g->name, (int)n, name);
		return 1;
	}
	user_add_group(u, g);
	return 0;
}

static int userlist_postparse(void)
{
	int errors = 0;

	for (struct userlist *ul = ul_st.lists; ul; ul = ul->next) {
		for (struct ul_user *u = ul->users; u; u = u->next) {
			errors += ul_each(u->grp_names, ul_user_group, ul, u);
			free(u->grp_names);
			u->grp_names = NULL;
		}
		for (struct ul_group *g = ul->groups; g; g = g->next) {
			errors += ul_each(g->usr_names, ul_group_user, ul, g);
			free(g->usr_names);
			g->usr_names = NULL;
		}
	}
	return errors;
}

void userlist_free_all(void)
{
	while (ul_st.lists) {
		struct userlist *ul = ul_st.lists;

		ul_st.lists = ul->next;
		while (ul->users) {
			struct ul_user *u = ul->users;

			ul->users = u->next;
			if (u->pass)
				memset(u->pass, 0, strlen(u->pass));
			free(u->pass);
			free(u->name);
			free(u->grp_names);
			free(u->groups);
			free(u->file);
			free(u);
		}
		while (ul->groups) {
			struct ul_group *g = ul->groups;

			ul->groups = g->next;
			free(g->name);
			free(g->usr_names);
			free(g->file);
			free(g);
		}
		free(ul->name);
		free(ul->file);
		free(ul);
	}
	ul_st.cur = NULL;
}

/* ---- fetches ---- */

enum ul_auth_type { UL_AUTH_NONE, UL_AUTH_BASIC, UL_AUTH_DIGEST, UL_AUTH_BEARER, UL_AUTH_OTHER };

struct ul_creds {
	enum ul_auth_type type;
	const char       *user, *pass;   /* Basic: in a scratch buffer */
	size_t            ulen, plen;
};

/* Reads the request's Authorization header into <c>. Returns 1 when there
 * is one, 0 otherwise; Basic credentials are decoded only when <decode>,
 * and c->user is NULL when they are not valid "user:pass" base64. */
static int ul_get_creds(const struct stream *s, struct ul_creds *c, int decode)
{
	const struct http_head *h = s && s->txn ? s->txn->req_head : NULL;
	const char *p, *end, *sp;
	/* option http-use-proxy-header: a proxied request's proxy credentials */
	int px = h && (s->txn->flags & TX_F_PX_AUTH);
	int i;

	memset(c, 0, sizeof(*c));
	if (!h || (i = http_head_find(h, px ? "proxy-authorization" : "authorization",
				      px ? 19 : 13, 0)) < 0)
		return 0;
	p = h->f[i].v.p;
	end = p + h->f[i].v.len;
	sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp)
		sp = end;
	if (sp - p == 5 && strncasecmp(p, "Basic", 5) == 0)
		c->type = UL_AUTH_BASIC;
	else if (sp - p == 6 && strncasecmp(p, "Digest", 6) == 0)
		c->type = UL_AUTH_DIGEST;
	else if (sp - p == 6 && strncasecmp(p, "Bearer", 6) == 0)
		c->type = UL_AUTH_BEARER;
	else
		c->type = UL_AUTH_OTHER;
	if (c->type == UL_AUTH_BASIC && decode) {
		char *out = smp_scratch_get();
		const char *colon;
		int n;

		while (sp < end && (*sp == ' ' || *sp == '\t'))
			sp++;
		while (end > sp && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		n = stats_b64_decode(sp, (size_t)(end - sp), out, SMP_SCRATCH_SIZE);
		if (n < 0 || !(colon = memchr(out, ':', (size_t)n)))
			return 1;
		c->user = out;
		c->ulen = (size_t)(colon - out);
		c->pass = colon + 1;
		c->plen = (size_t)(out + n - c->pass);
	}
	return 1;
}

/* The user of <ul> whose Basic credentials the request carries, or NULL. */
static const struct ul_user *ul_auth_user(const struct smp_arg *a, const struct stream *s)
{
	const struct userlist *ul = a[0].ptr ? a[0].ptr : userlist_find(a[0].str);
	const struct ul_user *u;
	struct ul_creds c;

	if (!ul || !ul_get_creds(s, &c, 1) || c.type != UL_AUTH_BASIC || !c.user)
		return NULL;
	u = userlist_user(ul, c.user, c.ulen);
	return u && userlist_check(u, c.pass, c.plen) ? u : NULL;
}

static int fetch_http_auth(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	if (!s || !s->txn || !s->txn->req_head)
		return 0;
	smp->type = SMP_T_BOOL;
	smp->u.sint = ul_auth_user(a, s) != NULL;
	return 1;
}

/* As HAProxy, the value is the user name; an ACL (which iterates) sees the
 * user's groups one by one, so that its patterns name groups. */
static int fetch_http_auth_group(const struct smp_arg *a, struct sample *smp, struct stream *s,
				 const void *priv)
{
	const struct ul_user *u = ul_auth_user(a, s);
	const struct ul_group *g;

	if (!u)
		return 0;
	if (!smp->iterate) {
		smp->type = SMP_T_STR;
		smp->flags |= SMP_F_CONST;
		smp->u.str.p = u->name;
		smp->u.str.len = strlen(u->name);
		return 1;
	}
	if (smp->ctx >= u->ngroups)
		return 0;
	g = u->groups[smp->ctx++];
	if (smp->ctx < u->ngroups)
		smp->flags |= SMP_F_NOT_LAST;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = g->name;
	smp->u.str.len = strlen(g->name);
	return 1;
}

static int fetch_http_auth_type(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	static const char *const names[] = { NULL, "Basic", "Digest", "Bearer", NULL };
	struct ul_creds c;

	if (!ul_get_creds(s, &c, 0) || !names[c.type])
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = names[c.type];
	smp->u.str.len = strlen(names[c.type]);
	return 1;
}

static int fetch_http_auth_cred(struct sample *smp, struct stream *s, int pass)
{
	struct ul_creds c;

	if (!ul_get_creds(s, &c, 1) || c.type != UL_AUTH_BASIC || !c.user)
		return 0;
	smp->type = SMP_T_STR;
	smp->u.str.p = pass ? c.pass : c.user;
	smp->u.str.len = pass ? c.plen : c.ulen;
	return 1;
}

static int fetch_http_auth_user(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	return fetch_http_auth_cred(smp, s, 0);
}

static int fetch_http_auth_pass(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	return fetch_http_auth_cred(smp, s, 1);
}

/* ---- registration ---- */

#define RQ SMP_USE_L7REQ

static const struct smp_fetch_kw ul_fetches[] = {
	{ "http_auth",       fetch_http_auth,       { ARGT_USR }, 1, SMP_T_BOOL, RQ, NULL, NULL },
	{ "http_auth_group", fetch_http_auth_group, { ARGT_USR }, 1, SMP_T_STR, RQ, NULL, NULL },
	{ "http_auth_type",  fetch_http_auth_type,  { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "http_auth_user",  fetch_http_auth_user,  { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "http_auth_pass",  fetch_http_auth_pass,  { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
};

static struct cfg_section ul_sections[] = {
	{ "userlist", CFG_SEC_USERLIST, sec_userlist, sec_userlist_end, NULL },
};

static struct cfg_kw ul_kws[] = {
	{ "user", CFG_SEC_USERLIST, CFG_T_FUNC, 0, .parse = kw_user,
	  .usage = "<name> [password <hash> | insecure-password <password>] [groups <group>,...]" },
	{ "group", CFG_SEC_USERLIST, CFG_T_FUNC, 0, .parse = kw_group,
	  .usage = "<name> [users <user>,...]" },
};

SLUICE_INIT(userlist_register)
{
	cfg_register_sections(ul_sections, ARRAY_SIZE(ul_sections));
	cfg_register(ul_kws, ARRAY_SIZE(ul_kws));
	/* Before the sample post-parse (30), which resolves userlist arguments. */
	cfg_register_postparse(userlist_postparse, 22);
	smp_register_fetches(ul_fetches, ARRAY_SIZE(ul_fetches));
}
