/* Samples (sample.h): the fetch and converter registries, expression
 * parsing ("fetch(args),conv(args)..."), type casts, evaluation, the
 * layer-4 and constant fetches, and the nbsrv and srv_queue converters
 * (a proxy or server named by the sample). HTTP fetches live in
 * sample_http.c and the other converters in conv*.c. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/userlist.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

/* ------------------------------------------------------------------------
 * Registries
 */

struct smp_kw_list {
	const void *rows;
	size_t      n;
	struct smp_kw_list *next;
};

static struct smp_kw_list *fetch_lists, *conv_lists;

static void smp_list_add(struct smp_kw_list **head, const void *rows, size_t n)
{
	struct smp_kw_list *l = xcalloc(1, sizeof(*l));

	l->rows = rows;
	l->n = n;
	l->next = *head;
	*head = l;
}

void smp_register_fetches(const struct smp_fetch_kw *kws, size_t n)
{
	smp_list_add(&fetch_lists, kws, n);
}

void smp_register_convs(const struct smp_conv_kw *kws, size_t n)
{
	smp_list_add(&conv_lists, kws, n);
}

void smp_fetch_foreach(void (*fn)(const struct smp_fetch_kw *kw, void *arg), void *arg)
{
	for (const struct smp_kw_list *l = fetch_lists; l; l = l->next)
		for (size_t i = 0; i < l->n; i++)
			fn(&((const struct smp_fetch_kw *)l->rows)[i], arg);
}

void smp_conv_foreach(void (*fn)(const struct smp_conv_kw *kw, void *arg), void *arg)
{
	for (const struct smp_kw_list *l = conv_lists; l; l = l->next)
		for (size_t i = 0; i < l->n; i++)
			fn(&((const struct smp_conv_kw *)l->rows)[i], arg);
}

const struct smp_fetch_kw *smp_fetch_find(const char *name, size_t len)
{
	for (const struct smp_kw_list *l = fetch_lists; l; l = l->next) {
		const struct smp_fetch_kw *k = l->rows;

		for (size_t i = 0; i < l->n; i++)
			if (strlen(k[i].name) == len && memcmp(k[i].name, name, len) == 0)
				return &k[i];
	}
	return NULL;
}

static const struct smp_conv_kw *smp_conv_find(const char *name, size_t len)
{
	for (const struct smp_kw_list *l = conv_lists; l; l = l->next) {
		const struct smp_conv_kw *k = l->rows;

		for (size_t i = 0; i < l->n; i++)
			if (strlen(k[i].name) == len && memcmp(k[i].name, name, len) == 0)
				return &k[i];
	}
	return NULL;
}

static const char *smp_suggest(int conv, const char *name, size_t len)
{
	static char word[64];
	struct cfg_suggest sg;

	snprintf(word, sizeof(word), "%.*s", (int)MIN(len, sizeof(word) - 1), name);
	cfg_suggest_init(&sg, word);
	for (const struct smp_kw_list *l = conv ? conv_lists : fetch_lists; l; l = l->next)
		for (size_t i = 0; i < l->n; i++)
			cfg_suggest_add(&sg, conv ? ((const struct smp_conv_kw *)l->rows)[i].name
					   : ((const struct smp_fetch_kw *)l->rows)[i].name);
	return cfg_suggest_pick(&sg);
}

/* ------------------------------------------------------------------------
 * Scratch buffers and types
 */

#define SMP_NSCRATCH 4
static char smp_scratch[SMP_NSCRATCH][SMP_SCRATCH_SIZE];
static int smp_scratch_idx;

char *smp_scratch_get(void)
{
	smp_scratch_idx = (smp_scratch_idx + 1) % SMP_NSCRATCH;
	return smp_scratch[smp_scratch_idx];
}

static const char *const smp_type_names[SMP_TYPES] = {
	[SMP_T_ANY] = "any", [SMP_T_BOOL] = "bool", [SMP_T_SINT] = "int",
	[SMP_T_ADDR] = "addr", [SMP_T_IPV4] = "ipv4", [SMP_T_IPV6] = "ipv6",
	[SMP_T_STR] = "str", [SMP_T_BIN] = "bin",
};

const char *smp_type_name(enum smp_type t)
{
	return t < SMP_TYPES ? smp_type_names[t] : "?";
}

int smp_parse_ip(const char *s, size_t len, struct sample *smp)
{
	char tmp[INET6_ADDRSTRLEN + 1];

	if (len >= sizeof(tmp))
		return 0;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (inet_pton(AF_INET, tmp, &smp->u.ipv4) == 1) {
		smp->type = SMP_T_IPV4;
		return 1;
	}
	if (inet_pton(AF_INET6, tmp, &smp->u.ipv6) == 1) {
		smp->type = SMP_T_IPV6;
		return 1;
	}
	return 0;
}

/* A leading optional sign and decimal digits, as HAProxy's str->int cast
 * (it stops at the first non-digit and needs at least one digit). */
static int smp_str_to_int(const char *p, size_t len, int64_t *v)
{
	size_t i = 0;
	int neg = 0;
	uint64_t n = 0;

	if (i < len && (p[i] == '-' || p[i] == '+'))
		neg = p[i++] == '-';
	if (i >= len || !isdigit((unsigned char)p[i]))
		return 0;
	for (; i < len && isdigit((unsigned char)p[i]); i++) {
		n = n * 10 + (uint64_t)(p[i] - '0');
		if (n > (uint64_t)INT64_MAX)
			n = (uint64_t)INT64_MAX;
	}
	*v = neg ? -(int64_t)n : (int64_t)n;
	return 1;
}

int smp_can_cast(enum smp_type from, enum smp_type to)
{
	if (to == SMP_T_ANY || from == to || from == SMP_T_ANY)
		return 1;   /* ANY (a variable): known at run time only */
	if (from == SMP_T_ADDR)
		return to != SMP_T_BOOL;
	switch (to) {
	case SMP_T_BOOL: case SMP_T_SINT:
		return from == SMP_T_BOOL || from == SMP_T_SINT || from == SMP_T_STR;
	case SMP_T_ADDR: case SMP_T_IPV4: case SMP_T_IPV6:
		return from == SMP_T_SINT || from == SMP_T_STR || from == SMP_T_IPV4 ||
		       from == SMP_T_IPV6 || from == SMP_T_ADDR;
	case SMP_T_STR: case SMP_T_BIN:
		return 1;
	default:
		return 0;
	}
}

int smp_cast(struct sample *smp, enum smp_type t)
{
	enum smp_type f = smp->type;
	char *buf;

	if (t == SMP_T_ANY || f == t)
		return 1;
	if (t == SMP_T_ADDR && (f == SMP_T_IPV4 || f == SMP_T_IPV6))
		return 1;
	switch (t) {
	case SMP_T_BOOL:
	case SMP_T_SINT:
		if (f == SMP_T_STR) {
			int64_t v;

			if (!smp_str_to_int(smp->u.str.p, smp->u.str.len, &v))
				return 0;
			smp->u.sint = v;
		} else if (f != SMP_T_BOOL && f != SMP_T_SINT)
			return 0;
		if (t == SMP_T_BOOL)
			smp->u.sint = smp->u.sint != 0;
		smp->type = t;
		return 1;
	case SMP_T_ADDR:
	case SMP_T_IPV4:
	case SMP_T_IPV6:
		if (f == SMP_T_SINT) {
			smp->u.ipv4.s_addr = htonl((uint32_t)smp->u.sint);
			smp->type = SMP_T_IPV4;
		} else if (f == SMP_T_STR) {
			if (!smp_parse_ip(smp->u.str.p, smp->u.str.len, smp))
				return 0;
		} else if (f != SMP_T_IPV4 && f != SMP_T_IPV6)
			return 0;
		if (t == SMP_T_IPV6 && smp->type == SMP_T_IPV4) {
			struct in_addr a = smp->u.ipv4;

			memset(&smp->u.ipv6, 0, sizeof(smp->u.ipv6));
			smp->u.ipv6.s6_addr[10] = smp->u.ipv6.s6_addr[11] = 0xff;
			memcpy(&smp->u.ipv6.s6_addr[12], &a, 4);
			smp->type = SMP_T_IPV6;
		} else if (t == SMP_T_IPV4 && smp->type == SMP_T_IPV6) {
			struct in6_addr a = smp->u.ipv6;

			if (!IN6_IS_ADDR_V4MAPPED(&a))
				return 0;
			memcpy(&smp->u.ipv4, &a.s6_addr[12], 4);
			smp->type = SMP_T_IPV4;
		}
		return 1;
	case SMP_T_STR:
	case SMP_T_BIN:
		if (f == SMP_T_STR || f == SMP_T_BIN) {
			smp->type = t;
			return 1;
		}
		buf = smp_scratch_get();
		if (t == SMP_T_BIN && (f == SMP_T_SINT || f == SMP_T_BOOL)) {
			/* as HAProxy: the 64-bit value, most significant byte first */
			for (int i = 0; i < 8; i++)
				buf[i] = (char)((uint64_t)smp->u.sint >> (56 - 8 * i));
			smp->u.str.len = 8;
		} else if (t == SMP_T_BIN && (f == SMP_T_IPV4 || f == SMP_T_IPV6)) {
			/* the address' bytes in network order (read before
			 * u.str, which shares their place, is written) */
			size_t n = f == SMP_T_IPV4 ? 4 : 16;

			memcpy(buf, f == SMP_T_IPV4 ? (void *)&smp->u.ipv4 : (void *)&smp->u.ipv6, n);
			smp->u.str.len = n;
		} else {
			smp->u.str.len = smp_to_text(smp, buf, SMP_SCRATCH_SIZE);
		}
		smp->u.str.p = buf;
		smp->type = t;
		smp->flags &= ~SMP_F_CONST;
		return 1;
	default:
		return 0;
	}
}

size_t smp_to_text(const struct sample *smp, char *out, size_t size)
{
	int n = 0;

	if (!size)
		return 0;
	switch (smp->type) {
	case SMP_T_BOOL:
	case SMP_T_SINT:
		n = snprintf(out, size, "%" PRId64, smp->u.sint);
		break;
	case SMP_T_IPV4:
		if (!inet_ntop(AF_INET, &smp->u.ipv4, out, (socklen_t)size))
			out[0] = '\0';
		return strlen(out);
	case SMP_T_IPV6:
		if (!inet_ntop(AF_INET6, &smp->u.ipv6, out, (socklen_t)size))
			out[0] = '\0';
		return strlen(out);
	case SMP_T_STR:
	case SMP_T_BIN: {
		size_t l = MIN(smp->u.str.len, size - 1);

		memmove(out, smp->u.str.p, l);
		out[l] = '\0';
		return l;
	}
	default:
		out[0] = '\0';
		return 0;
	}
	return n < 0 ? 0 : MIN((size_t)n, size - 1);
}

/* ------------------------------------------------------------------------
 * Arguments naming proxies and servers: resolved at post-parse
 */

struct smp_pending {
	struct smp_arg     *arg;
	char               *where;   /* the expression, for messages */
	struct smp_pending *next;
};

static struct smp_pending *smp_pending;

static void smp_pending_drop(const struct smp_arg *arg)
{
	for (struct smp_pending **pp = &smp_pending; *pp; ) {
		struct smp_pending *p = *pp;

		if (p->arg == arg) {
			*pp = p->next;
			free(p->where);
			free(p);
		} else
			pp = &p->next;
	}
}

/* Finds what <a> names; NULL when it does not exist. */
static void *smp_arg_lookup(const struct smp_arg *a)
{
	struct proxy *px;
	const char *slash;

	if (a->type == ARGT_BE)
		return proxy_find(a->str, PR_CAP_BE);
	if (a->type == ARGT_FE)
		return proxy_find(a->str, PR_CAP_FE);
	if (a->type == ARGT_USR)
		return userlist_find(a->str);
	slash = strchr(a->str, '/');
	if (!slash) {
		return NULL;
	} else {
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)MIN((size_t)(slash - a->str), 255),
			 a->str);
		px = proxy_find(name, PR_CAP_BE);
	}
	if (!px)
		return NULL;
	for (struct server *srv = px->servers; srv; srv = srv->next)
		if (strcmp(srv->name, slash + 1) == 0)
			return srv;
	return NULL;
}

static int smp_postparse(void)
{
	int errors = 0;

	while (smp_pending) {
		struct smp_pending *p = smp_pending;

		p->arg->ptr = smp_arg_lookup(p->arg);
		if (!p->arg->ptr) {
			log_alert("sample fetch '%s': no such %s '%s'",
				p->where, p->arg->type == ARGT_BE ? "backend" :
				p->arg->type == ARGT_FE ? "frontend" :
				p->arg->type == ARGT_USR ? "userlist" : "server (backend/server)",
				p->arg->str);
			errors++;
		}
		smp_pending = p->next;
		free(p->where);
		free(p);
	}
	return errors;
}

/* ------------------------------------------------------------------------
 * Parsing
 */

static void smp_args_free(struct smp_arg *args)
{
	for (int i = 0; i < SMP_MAX_ARGS; i++) {
		if (args[i].type == ARGT_BE || args[i].type == ARGT_FE || args[i].type == ARGT_SRV ||
		    args[i].type == ARGT_USR)
			smp_pending_drop(&args[i]);
		else if (args[i].release)
			args[i].release(args[i].ptr);
		free(args[i].str);
		args[i] = (struct smp_arg){ 0 };
	}
}

static int smp_args_equal(const struct smp_arg *a, const struct smp_arg *b)
{
	for (int i = 0; i < SMP_MAX_ARGS; i++)
		if (a[i].type != b[i].type || a[i].sint != b[i].sint || a[i].len != b[i].len ||
		    !a[i].str != !b[i].str || (a[i].str && strcmp(a[i].str, b[i].str) != 0))
			return 0;
	return 1;
}

int smp_expr_equal(const struct smp_expr *a, const struct smp_expr *b)
{
	if (a->fetch != b->fetch || a->nconv != b->nconv || !smp_args_equal(a->args, b->args))
		return 0;
	for (int i = 0; i < a->nconv; i++)
		if (a->convs[i].kw != b->convs[i].kw ||
		    !smp_args_equal(a->convs[i].args, b->convs[i].args))
			return 0;
	return 1;
}

void smp_expr_free(struct smp_expr *e)
{
	if (!e)
		return;
	smp_args_free(e->args);
	for (int i = 0; i < e->nconv; i++)
		smp_args_free(e->convs[i].args);
	free(e->convs);
	e->convs = NULL;
	e->nconv = 0;
	e->fetch = NULL;
}

/* Parses the arguments of <kw> (<argt>, <nmin> mandatory) from <*p>, which
 * points after the '(' when <paren>; moves <*p> past the ')'. */
static int smp_args_parse(const char *kw, const uint8_t *argt, int nmin, const char **p,
                          int paren, struct smp_arg *args, char **err)
{
	int n = 0, max = 0;
	const char *s = *p;

	while (max < SMP_MAX_ARGS && argt[max] != ARGT_STOP)
		max++;
	if (paren) {
		for (;;) {
			char buf[1024];
			size_t l = 0;

			char q = 0;   /* inside '...' or "...": ',' and ')' are literal */

			while (*s && (q || (*s != ',' && *s != ')'))) {
				if ((*s == '\'' || *s == '"') && (!q || q == *s)) {
					q = q ? 0 : *s;
					s++;
					continue;
				}
				if (*s == '\\' && s[1] && q != '\'')
					s++;
				if (l < sizeof(buf) - 1)
					buf[l++] = *s;
				s++;
			}
			if (!*s) {
				*err = str_fmt("missing ')' after the arguments of '%s'", kw);
				return -1;
			}
			buf[l] = '\0';
			if (n >= max) {
				if (max == 0 && l == 0 && *s == ')' && n == 0)
					break;   /* "fetch()" */
				*err = str_fmt("too many arguments for '%s' (at most %d)", kw, max);
				return -1;
			}
			if (l || argt[n] == ARGT_STR) {
				args[n].type = argt[n];
				if (argt[n] == ARGT_SINT) {
					char *e;

					errno = 0;
					args[n].sint = strtoll(buf, &e, 10);
					if (*e || errno) {
						*err = str_fmt("argument %d of '%s' must be an integer "
							       "(got '%s')", n + 1, kw, buf);
						return -1;
					}
				} else {
					args[n].str = xstrdup(buf);
					args[n].len = l;
				}
			}
			n++;
			if (*s++ == ')')
				break;
		}
	}
	for (int i = 0; i < nmin; i++)
		if (i >= n || args[i].type == ARGT_STOP) {
			*err = str_fmt("missing argument %d of '%s'", i + 1, kw);
			return -1;
		}
	*p = s;
	return 0;
}

static size_t smp_name_len(const char *s)
{
	size_t n = 0;

	while (isalnum((unsigned char)s[n]) || s[n] == '.' || s[n] == '_' || s[n] == '-' ||
	       s[n] == '+')   /* "base32+src" */
		n++;
	return n;
}

/* Queues the backend/frontend/server arguments of <args> for post-parse. */
static void smp_args_queue(struct smp_arg *args, const char *expr)
{
	for (int i = 0; i < SMP_MAX_ARGS; i++) {
		struct smp_pending *p;

		if ((args[i].type != ARGT_BE && args[i].type != ARGT_FE &&
		     args[i].type != ARGT_SRV && args[i].type != ARGT_USR) || !args[i].str)
			continue;
		/* A bare server name is looked up in the stream's backend. */
		if (args[i].type == ARGT_SRV && !strchr(args[i].str, '/'))
			continue;
		p = xcalloc(1, sizeof(*p));
		p->arg = &args[i];
		p->where = xstrdup(expr);
		p->next = smp_pending;
		smp_pending = p;
	}
}

/* The type <c> gives to an input of type <cur>: its own, the input's for a
 * converter taking and giving any type (set-var: the value passes
 * through), unknown (any) for one whose output type depends on its
 * arguments or on the data (json_query). */
static enum smp_type smp_conv_out(const struct smp_conv_kw *c, enum smp_type cur)
{
	if (c->out != SMP_T_ANY)
		return c->out;
	return c->in == SMP_T_ANY ? cur : SMP_T_ANY;
}

int smp_expr_parse(const char *str, struct smp_expr *e, const char **end, char **err)
{
	const char *p = str;
	size_t n = smp_name_len(p);
	const struct smp_fetch_kw *f;
	enum smp_type cur;

	memset(e, 0, sizeof(*e));
	if (!n) {
		*err = str_fmt("expected a sample fetch name at '%.32s'", str);
		return -1;
	}
	f = smp_fetch_find(p, n);
	if (!f) {
		const char *s = smp_suggest(0, p, n);

		if (s)
			*err = str_fmt("unknown fetch method '%.*s'; did you mean '%s'?",
				       (int)MIN(n, 64), p, s);
		else
			*err = str_fmt("unknown fetch method '%.*s'", (int)MIN(n, 64), p);
		return -1;
	}
	e->fetch = f;
	p += n;
	if (smp_args_parse(f->name, f->argt, f->nmin, &p, *p == '(' ? (p++, 1) : 0, e->args,
			   err) == -1)
		goto fail;
	if (f->check && f->check(e->args, err, f->priv) == -1)
		goto fail;
	cur = f->out;
	while (*p == ',') {
		const struct smp_conv_kw *c;
		struct smp_conv *cv;

		p++;
		n = smp_name_len(p);
		c = n ? smp_conv_find(p, n) : NULL;
		if (!c) {
			const char *s = n ? smp_suggest(1, p, n) : NULL;

			if (!n)
				*err = str_fmt("expected a converter name after ',' at '%.32s'", p);
			else if (s)
				*err = str_fmt("unknown converter '%.*s'; did you mean '%s'?",
					       (int)MIN(n, 64), p, s);
			else
				*err = str_fmt("unknown converter '%.*s'", (int)MIN(n, 64), p);
			goto fail;
		}
		if (!smp_can_cast(cur, c->in)) {
			*err = str_fmt("converter '%s' expects %s input, cannot take the %s "
				       "output of what precedes it", c->name, smp_type_name(c->in),
				       smp_type_name(cur));
			goto fail;
		}
		e->convs = xrealloc(e->convs, (size_t)(e->nconv + 1) * sizeof(*e->convs));
		cv = &e->convs[e->nconv++];
		memset(cv, 0, sizeof(*cv));
		cv->kw = c;
		p += n;
		if (smp_args_parse(c->name, c->argt, c->nmin, &p, *p == '(' ? (p++, 1) : 0,
				   cv->args, err) == -1)
			goto fail;
		if (c->check && c->check(cv->args, err, c->priv) == -1) {
			char *m = *err;

			*err = str_fmt("converter '%s': %s", c->name, m);
			free(m);
			goto fail;
		}
		cur = smp_conv_out(c, cur);
	}
	if (end)
		*end = p;
	else if (*p) {
		*err = str_fmt("unexpected '%.32s' after the sample expression", p);
		goto fail;
	}
	smp_args_queue(e->args, str);
	return 0;
fail:
	smp_expr_free(e);
	return -1;
}

enum smp_type smp_expr_type(const struct smp_expr *e)
{
	enum smp_type t = e->fetch ? e->fetch->out : SMP_T_ANY;

	for (int i = 0; i < e->nconv; i++)
		t = smp_conv_out(e->convs[i].kw, t);
	return t;
}

/* ------------------------------------------------------------------------
 * Evaluation
 */

int smp_expr_eval(const struct smp_expr *e, struct stream *s, struct sample *smp)
{
	int iterate = smp->iterate, ctx = smp->ctx;

	smp->type = SMP_T_ANY;
	smp->flags = 0;
	smp->iterate = iterate;
	smp->ctx = ctx;
	smp->strm = s;
	if (!s && !(e->fetch->use & SMP_USE_CONST))
		return 0;
	if (!e->fetch->fn(e->args, smp, s, e->fetch->priv))
		return 0;
	for (int i = 0; i < e->nconv; i++) {
		const struct smp_conv *c = &e->convs[i];

		if (!smp_cast(smp, c->kw->in))
			return 0;
		if (!c->kw->fn(c->args, smp, c->kw->priv))
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------------
 * Layer-4 and constant fetches
 */

static int smp_set_addr(struct sample *smp, const struct sockaddr_storage *a, int port)
{
	if (!a)
		return 0;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)a;

		if (port) {
			smp->type = SMP_T_SINT;
			smp->u.sint = ntohs(in->sin_port);
		} else {
			smp->type = SMP_T_IPV4;
			smp->u.ipv4 = in->sin_addr;
		}
		return 1;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)a;

		if (port) {
			smp->type = SMP_T_SINT;
			smp->u.sint = ntohs(in6->sin6_port);
		} else {
			smp->type = SMP_T_IPV6;
			smp->u.ipv6 = in6->sin6_addr;
		}
		return 1;
	}
	return 0;
}

int smp_set_int(struct sample *smp, int64_t v)
{
	smp->type = SMP_T_SINT;
	smp->u.sint = v;
	return 1;
}

int smp_set_bool(struct sample *smp, int v)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = !!v;
	return 1;
}

int smp_set_copy(struct sample *smp, enum smp_type t, const void *p, size_t len)
{
	char *buf;

	if (len > SMP_SCRATCH_SIZE)
		return 0;
	buf = smp_scratch_get();
	memcpy(buf, p, len);
	smp->type = t;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = buf;
	smp->u.str.len = len;
	return 1;
}

int smp_set_str(struct sample *smp, const char *str)
{
	if (!str)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = str;
	smp->u.str.len = strlen(str);
	return 1;
}

static int fetch_src(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	return smp_set_addr(smp, &s->cli_addr, 0);
}

static int fetch_src_port(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return smp_set_addr(smp, &s->cli_addr, 1);
}

static int fetch_dst(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	return smp_set_addr(smp, stream_dst(s), 0);
}

static int fetch_dst_port(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return smp_set_addr(smp, stream_dst(s), 1);
}

static int fetch_fe_name(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	return s->fe ? smp_set_str(smp, s->fe->name) : 0;
}

static int fetch_fe_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	return s->fe ? smp_set_int(smp, s->fe->id) : 0;
}

static int fetch_be_name(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	return s->be ? smp_set_str(smp, s->be->name) : 0;
}

static int fetch_be_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	return s->be ? smp_set_int(smp, s->be->id) : 0;
}

static int fetch_srv_name(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return s->ss.target ? smp_set_str(smp, s->ss.target->name) : 0;
}

static int fetch_srv_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	return s->ss.target ? smp_set_int(smp, s->ss.target->id) : 0;
}

static int fetch_true(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = 1;
	return 1;
}

static int fetch_false(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = 0;
	return 1;
}

/* The proxy an optional backend (or frontend) argument names, else the
 * stream's backend (frontend when <fe>). Resolved at post-parse; looked up
 * here only if evaluated before (unit tests). */
int smp_args_make(const char *kw, const uint8_t *argt, int nmin, smp_check_fn check,
                  const void *priv, int n, const char *const *vals, const size_t *lens,
                  struct smp_arg *args, char **err)
{
	int max = 0;

	memset(args, 0, sizeof(*args) * SMP_MAX_ARGS);
	while (max < SMP_MAX_ARGS && argt[max] != ARGT_STOP)
		max++;
	if (n > max) {
		*err = str_fmt("too many arguments for '%s' (at most %d)", kw, max);
		return -1;
	}
	if (n < nmin) {
		*err = str_fmt("missing argument %d of '%s'", n + 1, kw);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		args[i].type = argt[i];
		if (argt[i] == ARGT_SINT) {
			char *e;

			errno = 0;
			args[i].sint = strtoll(vals[i], &e, 10);
			if (*e || errno || e == vals[i]) {
				*err = str_fmt("argument %d of '%s' must be an integer (got '%s')", i + 1,
					       kw, vals[i]);
				goto fail;
			}
			continue;
		}
		args[i].str = strndup(vals[i], lens[i]);
		args[i].len = lens[i];
		if (!args[i].str) {
			*err = str_fmt("out of memory");
			goto fail;
		}
		if (argt[i] == ARGT_STR || (argt[i] == ARGT_SRV && !strchr(args[i].str, '/')))
			continue;
		if (!(args[i].ptr = smp_arg_lookup(&args[i]))) {
			*err = str_fmt("'%s': no such %s '%s'", kw, argt[i] == ARGT_BE ? "backend" :
				       argt[i] == ARGT_FE ? "frontend" : argt[i] == ARGT_USR ?
				       "userlist" : "server", args[i].str);
			goto fail;
		}
	}
	if (check && check(args, err, priv) == -1)
		goto fail;
	return 0;
fail:
	smp_args_release(args);
	return -1;
}

void smp_args_release(struct smp_arg *args)
{
	for (int i = 0; i < SMP_MAX_ARGS; i++) {
		if (args[i].type != ARGT_BE && args[i].type != ARGT_FE && args[i].type != ARGT_SRV &&
		    args[i].type != ARGT_USR && args[i].release)
			args[i].release(args[i].ptr);
		free(args[i].str);
		args[i] = (struct smp_arg){ 0 };
	}
}

struct proxy *smp_arg_px(const struct smp_arg *a, struct stream *s, int fe)
{
	if (a->type == ARGT_BE || a->type == ARGT_FE)
		return a->ptr ? a->ptr : smp_arg_lookup(a);
	return s ? (fe ? s->fe : s->be) : NULL;
}

struct server *smp_arg_srv(const struct smp_arg *a, struct stream *s)
{
	if (a->ptr)
		return a->ptr;
	if (!a->str)
		return NULL;
	if (!strchr(a->str, '/')) {
		if (!s || !s->be)
			return NULL;
		for (struct server *srv = s->be->servers; srv; srv = srv->next)
			if (strcmp(srv->name, a->str) == 0)
				return srv;
		return NULL;
	}
	return smp_arg_lookup(a);
}

static int fetch_nbsrv(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	struct proxy *px = smp_arg_px(a, s, 0);

	if (!px)
		return 0;
	return smp_set_int(smp, px->srv_act ? px->srv_act : px->srv_bck);
}

static int fetch_be_conn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	struct proxy *px = smp_arg_px(a, s, 0);

	return px ? smp_set_int(smp, px->beconn) : 0;
}

static int fetch_fe_conn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	struct proxy *px = smp_arg_px(a, s, 1);

	return px ? smp_set_int(smp, px->feconn) : 0;
}

static int fetch_srv_conn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	const struct server *srv = a->ptr ? a->ptr : smp_arg_lookup(a);

	return srv ? smp_set_int(smp, srv->counters.cur_sess) : 0;
}

/* The streams waiting in <px>'s queue and its servers'. */
static int64_t px_queued(const struct proxy *px)
{
	int64_t n = px->nbpend;

	for (const struct server *srv = px->servers; srv; srv = srv->next)
		n += srv->nbpend;
	return n;
}

static int fetch_queue(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	struct proxy *px = smp_arg_px(a, s, 0);

	return px ? smp_set_int(smp, px_queued(px)) : 0;
}

/* avg_queue([backend]): the queued streams per usable server, rounded
 * up; twice the queue when no server is usable, as HAProxy documents. */
static int fetch_avg_queue(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	struct proxy *px = smp_arg_px(a, s, 0);
	int64_t n = 0, q;

	if (!px)
		return 0;
	q = px_queued(px);
	for (const struct server *srv = px->servers; srv; srv = srv->next)
		n += server_usable(srv) && !(srv->flags & SRV_F_BACKUP);
	return smp_set_int(smp, n ? (q + n - 1) / n : 2 * q);
}

/* Free connection slots of the usable servers, plus their free queue
 * places (maxqueue); -1 when one of them has no maxconn or no maxqueue
 * (unlimited), as HAProxy says. */
static int fetch_connslots(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	struct proxy *px = smp_arg_px(a, s, 0);
	int64_t n = 0;

	if (!px)
		return 0;
	for (const struct server *srv = px->servers; srv; srv = srv->next) {
		if (!server_usable(srv))
			continue;
		int max = srv_dynamic_maxconn(srv);

		if (!max || !srv->maxqueue)
			return smp_set_int(smp, -1);
		if ((int64_t)max > (int64_t)srv->counters.cur_sess)
			n += max - (int64_t)srv->counters.cur_sess;
		if (srv->maxqueue > srv->nbpend)
			n += srv->maxqueue - srv->nbpend;
	}
	return smp_set_int(smp, n);
}

static int fetch_env(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	return smp_set_str(smp, getenv(a[0].str));
}

/* hostname: the system's host name, read once. */
static int fetch_hostname(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	static char name[256];

	if (!name[0] && gethostname(name, sizeof(name) - 1) == -1)
		return 0;
	return smp_set_str(smp, name);
}

static int fetch_date(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	return smp_set_int(smp, (int64_t)tick_wall() + a[0].sint);
}

static int fetch_rand(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	uint64_t r = ((uint64_t)random() << 31) ^ (uint64_t)random();

	if (a[0].type == ARGT_SINT && a[0].sint > 0)
		return smp_set_int(smp, (int64_t)((r & 0xffffffffULL) * (uint64_t)a[0].sint >> 32));
	return smp_set_int(smp, (int64_t)(r & 0xffffffffULL));
}

static int fetch_int(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	return smp_set_int(smp, a[0].sint);
}

static int fetch_str(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = a[0].str ? a[0].str : "";
	smp->u.str.len = a[0].len;
	return 1;
}

static int fetch_bool(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = a[0].sint != 0;
	return 1;
}

/* ipv4(A)/ipv6(A): the address is parsed by the check into arg[1]. */
static int fetch_ip(const struct smp_arg *a, struct sample *smp, struct stream *s, const void *priv)
{
	return smp_parse_ip(a[0].str, a[0].len, smp);
}

static int check_bool(struct smp_arg *a, char **err, const void *priv)
{
	if (a[0].sint != 0 && a[0].sint != 1) {
		*err = str_fmt("bool() expects 0 or 1");
		return -1;
	}
	return 0;
}

static int check_ipv4(struct smp_arg *a, char **err, const void *priv)
{
	struct sample t;

	if (!smp_parse_ip(a[0].str, a[0].len, &t) || t.type != SMP_T_IPV4) {
		*err = str_fmt("ipv4() expects an IPv4 address (got '%s')", a[0].str);
		return -1;
	}
	return 0;
}

static int check_ipv6(struct smp_arg *a, char **err, const void *priv)
{
	struct sample t;

	if (!smp_parse_ip(a[0].str, a[0].len, &t) || t.type != SMP_T_IPV6) {
		*err = str_fmt("ipv6() expects an IPv6 address (got '%s')", a[0].str);
		return -1;
	}
	return 0;
}

static int check_srv(struct smp_arg *a, char **err, const void *priv)
{
	if (!a[0].str || !strchr(a[0].str, '/')) {
		*err = str_fmt("expects 'backend/server' (got '%s')", a[0].str ? a[0].str : "");
		return -1;
	}
	return 0;
}

/* Copies <len> bytes of <p> to <out> (<size> bytes) as a C string; 0
 * when they do not fit or hold a NUL (no proxy or server has such a name). */
static int smp_name_copy(const char *p, size_t len, char *out, size_t size)
{
	if (len >= size || memchr(p, '\0', len))
		return 0;
	memcpy(out, p, len);
	out[len] = '\0';
	return 1;
}

/* nbsrv converter: the usable servers of the backend named by the input
 * (those the fetch counts); no value for an unknown backend. */
static int conv_nbsrv(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	char name[256];
	struct proxy *px;

	if (!smp_name_copy(smp->u.str.p, smp->u.str.len, name, sizeof(name)) ||
	    !(px = proxy_find(name, PR_CAP_BE)))
		return 0;
	return smp_set_int(smp, px->srv_act ? px->srv_act : px->srv_bck);
}

/* srv_queue converter: the streams queued on the server named by the
 * input, "<backend>/<server>", or "<server>" of the stream's backend; no
 * value when there is no such server. */
static int conv_srv_queue(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const char *p = smp->u.str.p, *slash = memchr(p, '/', smp->u.str.len);
	char bname[256], sname[256];
	const struct proxy *px;

	if (slash) {
		if (!smp_name_copy(p, (size_t)(slash - p), bname, sizeof(bname)) ||
		    !smp_name_copy(slash + 1, smp->u.str.len - (size_t)(slash + 1 - p), sname,
				   sizeof(sname)))
			return 0;
		px = proxy_find(bname, PR_CAP_BE);
	} else {
		if (!smp_name_copy(p, smp->u.str.len, sname, sizeof(sname)))
			return 0;
		px = smp->strm ? smp->strm->be : NULL;
	}
	if (!px || !(px->cap & PR_CAP_BE))
		return 0;
	for (const struct server *srv = px->servers; srv; srv = srv->next)
		if (strcmp(srv->name, sname) == 0)
			return smp_set_int(smp, srv->nbpend);
	return 0;
}

static const struct smp_conv_kw smp_px_convs[] = {
	{ "nbsrv",     conv_nbsrv,     { 0 }, 0, SMP_T_STR, SMP_T_SINT, NULL, NULL },
	{ "srv_queue", conv_srv_queue, { 0 }, 0, SMP_T_STR, SMP_T_SINT, NULL, NULL },
};

#define L4 SMP_USE_L4
#define CST (SMP_USE_CONST | SMP_USE_L4 | SMP_USE_L7REQ | SMP_USE_L7RES)

static const struct smp_fetch_kw smp_l4_fetches[] = {
	{ "src",          fetch_src,       { 0 }, 0, SMP_T_ADDR, L4, NULL, NULL },
	{ "src_port",     fetch_src_port,  { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "dst",          fetch_dst,       { 0 }, 0, SMP_T_ADDR, L4, NULL, NULL },
	{ "dst_port",     fetch_dst_port,  { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "fe_name",      fetch_fe_name,   { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "fe_id",        fetch_fe_id,     { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "be_name",      fetch_be_name,   { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "be_id",        fetch_be_id,     { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "srv_name",     fetch_srv_name,  { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "srv_id",       fetch_srv_id,    { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "always_true",  fetch_true,      { 0 }, 0, SMP_T_BOOL, CST, NULL, NULL },
	{ "always_false", fetch_false,     { 0 }, 0, SMP_T_BOOL, CST, NULL, NULL },
	{ "nbsrv",        fetch_nbsrv,     { ARGT_BE }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "be_conn",      fetch_be_conn,   { ARGT_BE }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "fe_conn",      fetch_fe_conn,   { ARGT_FE }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "srv_conn",     fetch_srv_conn,  { ARGT_SRV }, 1, SMP_T_SINT, L4, check_srv, NULL },
	{ "connslots",    fetch_connslots, { ARGT_BE }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "queue",        fetch_queue,     { ARGT_BE }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "avg_queue",    fetch_avg_queue, { ARGT_BE }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "env",          fetch_env,       { ARGT_STR }, 1, SMP_T_STR, CST, NULL, NULL },
	{ "hostname",     fetch_hostname,  { 0 }, 0, SMP_T_STR, CST, NULL, NULL },
	{ "date",         fetch_date,      { ARGT_SINT }, 0, SMP_T_SINT, CST, NULL, NULL },
	{ "rand",         fetch_rand,      { ARGT_SINT }, 0, SMP_T_SINT, CST, NULL, NULL },
	{ "int",          fetch_int,       { ARGT_SINT }, 1, SMP_T_SINT, CST, NULL, NULL },
	{ "str",          fetch_str,       { ARGT_STR }, 1, SMP_T_STR, CST, NULL, NULL },
	{ "bool",         fetch_bool,      { ARGT_SINT }, 1, SMP_T_BOOL, CST, check_bool, NULL },
	{ "ipv4",         fetch_ip,        { ARGT_STR }, 1, SMP_T_IPV4, CST, check_ipv4, NULL },
	{ "ipv6",         fetch_ip,        { ARGT_STR }, 1, SMP_T_IPV6, CST, check_ipv6, NULL },
};

SLUICE_INIT(smp_register_l4)
{
	smp_register_fetches(smp_l4_fetches, ARRAY_SIZE(smp_l4_fetches));
	smp_register_convs(smp_px_convs, ARRAY_SIZE(smp_px_convs));
	cfg_register_postparse(smp_postparse, 30);
}
