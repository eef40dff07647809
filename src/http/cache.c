/* The HTTP cache wired into sluice (cache.h): the "cache" section, the
 * cache-use / cache-store actions, the res.cache_hit / res.cache_name
 * fetches, "filter cache", "show cache", and the hooks the HTTP analyser
 * calls (ana.c): a request answered from a stored object after the request
 * rules ran, a response body collected while it is forwarded (a channel
 * tap) and stored once the exchange ended complete. The store itself is
 * cache_store.c. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <ev.h>

#include <sluice/action.h>
#include <sluice/buf.h>
#include <sluice/cache.h>
#include <sluice/cfg.h>
#include <sluice/channel.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/comp.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_filter.h>
#include <sluice/http_head.h>
#include <sluice/log.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>

#include "ana_int.h"

/* ---- configuration ---- */

struct cache {
	char               *name;
	char               *file;
	int                 line;
	uint32_t            total_mb;      /* total-max-size, MB (required) */
	uint32_t            max_obj;       /* max-object-size, bytes (0: total / 256) */
	uint32_t            max_age;       /* max-age, seconds */
	int                 max_obj_line;  /* where max-object-size was set, 0: not set */
	int                 vary;          /* process-vary on */
	uint32_t            max_second;    /* max-secondary-entries */
	struct cache_store *st;
	struct cache       *next;
};

/* An action naming a cache, resolved at post-parse. */
struct cache_ref {
	char             *name;
	char             *file;
	int               line;
	struct cache     *c;
	struct cache_ref *next;
};

static struct {
	struct cache     *caches;
	struct cache     *cur;      /* section being parsed */
	struct cache_ref *refs;
	int               active;   /* some cache is in use: the analyser's hooks run */
	int               vary;     /* some cache has process-vary on */
	struct pool      *ct_pool;  /* struct cache_txn */
	struct dstr       hit_head; /* the head of the hit being answered (scratch) */
	struct h1_hdr    *hit_hdrs; /* its fields' parse (scratch) */
	uint32_t          hit_nhdrs;
} cs;

/* A stored head's parse, kept with the object as its meta (cache.h) so
 * that a hit is not parsed again: the message as h1_parse() left it for a
 * GET (pointers cleared: only offsets into the stored head are kept), then
 * its fields. */
struct head_parse {
	struct h1_msg m;
	struct h1_hdr hdrs[];
};

/* What one transaction does with the caches. */
struct cache_txn {
	struct cache *use;        /* a cache-use rule matched */
	struct cache *store;      /* a cache-store rule accepted the response */
	struct cache *hit;        /* the response came from this cache */
	int           cacheable;  /* the request may be stored / served (GET, 1.1...) */
	int           bypass;     /* request no-cache: not served, may be stored */
	uint64_t      hash;       /* of the primary key: the secondary ones share it */
	char         *key;        /* primary key (host, LF, target): kbuf or malloc'd */
	size_t        klen;
	char         *ae;         /* the request's Accept-Encoding, normalised ("" if none) */
	char         *ref;        /* its Referer ("" if none) */
	char         *skey;       /* the key of the object being stored (primary or
	                           * secondary), NULL: the primary key */
	size_t        sklen;
	/* collecting the body of a response to store */
	int           collecting;
	uint64_t      skip;       /* head bytes still to leave before the body */
	uint64_t      clen;       /* Content-Length body: its length, else UINT64_MAX */
	struct dstr   obj;        /* the head (filtered), then the body */
	size_t        hlen;
	uint64_t      t_expire;
	uint32_t      age0;
	int           failed;
	char          kbuf[192];  /* the key when it fits: no allocation per request */
};

/* Vary signatures: which request fields a stored response varies on. */
#define VARY_AE  0x1   /* Accept-Encoding */
#define VARY_REF 0x2   /* Referer */

static char *vary_key(const struct cache_txn *ct, unsigned sig, size_t *len);

static uint64_t cache_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct cache *cache_find(const char *name)
{
	for (struct cache *c = cs.caches; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static int sec_cache(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct cache *c, **tail = &cs.caches;

	cs.cur = NULL;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	if ((c = cache_find(argv[0]))) {
		cfg_alert(ctx, "cache '%s' is already declared at %s:%d", argv[0], c->file, c->line);
		return -1;
	}
	if (argc > 1) {
		cfg_alert(ctx, "unexpected argument '%s' after the name", argv[1]);
		return -1;
	}
	c = xcalloc(1, sizeof(*c));
	c->name = xstrdup(argv[0]);
	c->file = xstrdup(ctx->file);
	c->line = ctx->line;
	c->max_age = 60;
	c->max_second = 10;
	while (*tail)
		tail = &(*tail)->next;
	*tail = c;
	cs.cur = c;
	return 0;
}

static int sec_cache_end(struct cfg_ctx *ctx)
{
	cs.cur = NULL;
	return 0;
}

/* Reads a decimal in [min, max] from <w>. 0, or -1 after cfg_alert(). */
static int cache_num(struct cfg_ctx *ctx, int argc, char **argv, unsigned long long min,
                     unsigned long long max, unsigned long long *v)
{
	char *end;

	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects one integer argument");
		return -1;
	}
	*v = strtoull(argv[0], &end, 10);
	if (*end || argv[0][0] == '-' || *v < min || *v > max) {
		cfg_alert(ctx, "'%s' is not an integer between %llu and %llu", argv[0], min, max);
		return -1;
	}
	return 0;
}

static int kw_total_max_size(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	unsigned long long v;

	if (!cs.cur || cache_num(ctx, argc, argv, 1, 4095, &v) == -1)
		return -1;
	cs.cur->total_mb = (uint32_t)v;
	return 0;
}

static int kw_max_object_size(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	unsigned long long v;

	if (!cs.cur || cache_num(ctx, argc, argv, 1, UINT32_MAX, &v) == -1)
		return -1;
	cs.cur->max_obj = (uint32_t)v;
	cs.cur->max_obj_line = ctx->line;
	return 0;
}

static int kw_max_age(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	unsigned long long v;

	if (!cs.cur || cache_num(ctx, argc, argv, 0, UINT32_MAX / 1000, &v) == -1)
		return -1;
	cs.cur->max_age = (uint32_t)v;
	return 0;
}

static int kw_process_vary(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	if (argc != 1 || (strcmp(argv[0], "on") && strcmp(argv[0], "off"))) {
		cfg_alert(ctx, "expects 'on' or 'off'");
		return -1;
	}
	if (cs.cur)
		cs.cur->vary = strcmp(argv[0], "on") == 0;
	return cs.cur ? 0 : -1;
}

static int kw_max_secondary(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	unsigned long long v;

	if (!cs.cur || cache_num(ctx, argc, argv, 1, 65535, &v) == -1)
		return -1;
	cs.cur->max_second = (uint32_t)v;
	return 0;
}

/* Post-parse: every cache is sized and mapped, every name an action gives
 * is a declared cache. */
static int cache_postparse(void)
{
	int errors = 0;

	for (struct cache *c = cs.caches; c; c = c->next) {
		uint64_t total = (uint64_t)c->total_mb * 1024 * 1024;

		if (!c->total_mb) {
			log_alert("%s:%d: cache '%s': 'total-max-size' is required", c->file, c->line,
				  c->name);
			errors++;
			continue;
		}
		if (!c->max_obj_line) {
			c->max_obj = (uint32_t)(total / 256);
		} else if ((uint64_t)c->max_obj >= total / 2) {
			log_alert("%s:%d: cache '%s': 'max-object-size' (%u) must be smaller than "
				  "half of 'total-max-size' (%llu bytes)", c->file, c->max_obj_line,
				  c->name, c->max_obj, (unsigned long long)(total / 2));
			errors++;
			continue;
		}
		if (!c->st && !(c->st = cache_store_new((size_t)total))) {
			log_alert("%s:%d: cache '%s': cannot map %u MB", c->file, c->line, c->name,
				  c->total_mb);
			errors++;
		}
	}
	for (struct cache_ref *r = cs.refs; r; r = r->next) {
		r->c = cache_find(r->name);
		if (!r->c) {
			log_alert("%s:%d: unknown cache '%s'", r->file, r->line, r->name);
			errors++;
		} else {
			cs.active = 1;
			cs.vary |= r->c->vary;
		}
	}
	return errors;
}

void cache_free_all(void)
{
	while (cs.caches) {
		struct cache *c = cs.caches;

		cs.caches = c->next;
		cache_store_free(c->st);
		free(c->name);
		free(c->file);
		free(c);
	}
	while (cs.refs) {
		struct cache_ref *r = cs.refs;

		cs.refs = r->next;
		free(r->name);
		free(r->file);
		free(r);
	}
	dstr_free(&cs.hit_head);
	free(cs.hit_hdrs);
	cs.hit_hdrs = NULL;
	cs.hit_nhdrs = 0;
	cs.cur = NULL;
	cs.active = 0;
	cs.vary = 0;
}

static struct cache_ref *cache_ref_new(struct cfg_ctx *ctx, const char *name)
{
	struct cache_ref *r = xcalloc(1, sizeof(*r));

	r->name = xstrdup(name);
	r->file = xstrdup(ctx->file);
	r->line = ctx->line;
	r->next = cs.refs;
	cs.refs = r;
	return r;
}

/* filter cache <name>: HAProxy orders its filters with it (cache before
 * compression); sluice stores what leaves after every rule, so the line
 * only checks that the cache exists and that the proxy uses it through
 * the actions. */
static int filter_cache(struct cfg_ctx *ctx, int argc, char **argv)
{
	if (argc != 1) {
		cfg_alert(ctx, "'filter cache' expects a cache name");
		return -1;
	}
	cache_ref_new(ctx, argv[0]);
	return 0;
}

static struct http_filter_kw cache_filters[] = {
	{ "cache", filter_cache, NULL },
};

/* ---- actions ---- */

static struct cache_txn *ctxn_of(struct stream *s)
{
	struct http_txn *txn = s->txn;

	if (!txn)
		return NULL;
	if (!txn->cache) {
		if (!cs.ct_pool)
			cs.ct_pool = pool_create("cache_txn", sizeof(struct cache_txn));
		/* all but the key's buffer starts zeroed */
		if ((txn->cache = pool_alloc(cs.ct_pool)))
			memset(txn->cache, 0, offsetof(struct cache_txn, kbuf));
	}
	return txn->cache;
}

static int act_cache_parse(struct act_parse *p)
{
	if (p->idx >= p->argc || !strcmp(p->argv[p->idx], "if") || !strcmp(p->argv[p->idx], "unless")) {
		act_alert(p, "expects a cache name");
		return -1;
	}
	p->priv = cache_ref_new(p->ctx, p->argv[p->idx]);
	p->idx++;
	return 0;
}

/* cache-use: the lookup itself waits for the end of the request rules
 * (cache_req_answer), as HAProxy's applet takes over at connect time. */
static void act_cache_use(void *priv, struct stream *s, unsigned where)
{
	const struct cache_ref *r = priv;
	struct cache_txn *ct = ctxn_of(s);

	if (ct)
		ct->use = r->c;
}

/* Finds Cache-Control directive <d> in the fields of <h>, alone or with a
 * value ("private", "max-age=5", "no-cache=set-cookie"): returns where it
 * starts and sets *<end> to where it ends (its ',' or the field's end), or
 * returns NULL when absent. */
static const char *cc_find(const struct http_head *h, const char *d, const char **end)
{
	size_t dl = strlen(d);

	for (int i = http_head_find(h, "cache-control", 13, 0); i >= 0;
	     i = http_head_find(h, "cache-control", 13, i + 1)) {
		const char *p = h->f[i].v.p, *e = p + h->f[i].v.len;

		while (p < e) {
			const char *q;

			while (p < e && (*p == ' ' || *p == '\t' || *p == ','))
				p++;
			q = p;
			while (q < e && *q != ',')
				q++;
			if ((size_t)(q - p) >= dl && strncasecmp(p, d, dl) == 0 &&
			    (p + dl == q || p[dl] == '=' || p[dl] == ' ' || p[dl] == '\t')) {
				*end = q;
				return p;
			}
			p = q;
		}
	}
	return NULL;
}

/* The delta-seconds of directive <d> ("max-age=N") in the Cache-Control
 * fields of <h>: -1 when absent or without a number. */
static long cc_seconds(const struct http_head *h, const char *d)
{
	size_t dl = strlen(d);
	const char *q, *p = cc_find(h, d, &q), *n;
	long v = 0;

	if (!p || q - p <= (long)dl || p[dl] != '=')
		return -1;
	n = p + dl + 1;
	if (n < q && *n == '"')
		n++;
	if (n >= q || *n < '0' || *n > '9')
		return -1;
	while (n < q && *n >= '0' && *n <= '9' && v < 1000000000L)
		v = v * 10 + (*n++ - '0');
	return v;
}

/* Whether some Cache-Control directive of <h> is <d>, alone or with a
 * value. */
static int cc_has(const struct http_head *h, const char *d)
{
	const char *q;

	return cc_find(h, d, &q) != NULL;
}

/* The value of the first <name> field of <h> as a NUL-terminated copy in
 * <buf>, or NULL. */
static const char *field_str(const struct http_head *h, const char *name, char *buf, size_t size)
{
	int i = http_head_find(h, name, strlen(name), 0);
	size_t n;

	if (i < 0)
		return NULL;
	n = MIN((size_t)h->f[i].v.len, size - 1);
	memcpy(buf, h->f[i].v.p, n);
	buf[n] = 0;
	return buf;
}

/* An HTTP-date (IMF-fixdate, RFC 850 or asctime) as seconds, or -1. */
static long long http_date(const char *s)
{
	static const char *const fmts[] = {
		"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y",
	};
	struct tm tm;

	for (size_t i = 0; s && i < ARRAY_SIZE(fmts); i++) {
		const char *e;

		memset(&tm, 0, sizeof(tm));
		e = strptime(s, fmts[i], &tm);
		if (e && !*e)
			return (long long)timegm(&tm);
	}
	return -1;
}

/* The Vary signature of response <h>: 0 without Vary, VARY_* bits for the
 * fields sluice can key objects by, -1 for any other field (or "*"). */
static int vary_sig(const struct http_head *h)
{
	int sig = 0;

	for (int i = http_head_find(h, "vary", 4, 0); i >= 0; i = http_head_find(h, "vary", 4, i + 1)) {
		const char *p = h->f[i].v.p, *e = p + h->f[i].v.len;

		while (p < e) {
			const char *q, *te;

			while (p < e && (*p == ' ' || *p == '\t' || *p == ','))
				p++;
			q = p;
			while (q < e && *q != ',')
				q++;
			te = q;
			while (te > p && (te[-1] == ' ' || te[-1] == '\t'))
				te--;
			if (te - p == 15 && strncasecmp(p, "accept-encoding", 15) == 0)
				sig |= VARY_AE;
			else if (te - p == 7 && strncasecmp(p, "referer", 7) == 0)
				sig |= VARY_REF;
			else if (te > p)
				return -1;
			p = q;
		}
	}
	return sig;
}

/* cache-store: decides from the response head (and what the request
 * allowed) whether the response may be stored, and for how long. */
static void act_cache_store(void *priv, struct stream *s, unsigned where)
{
	const struct cache_ref *r = priv;
	struct cache_txn *ct = s->txn ? s->txn->cache : NULL;
	const struct http_head *h = s->txn ? s->txn->res_head : NULL;
	const struct h1_msg *m;
	char buf[128];
	long maxage, age = 0;
	long long life, fresh = -1;
	int sig;
	uint64_t now;

	if (!ct || !h || !ct->cacheable || ct->store || ct->hit || !r->c)
		return;
	m = &s->txn->res;
	if (m->status != 200 || s->txn->meth != H1_M_GET)
		return;   /* a HEAD is answered from a GET, never stored */
	if (cc_has(h, "no-store") || cc_has(h, "no-cache") || cc_has(h, "private"))
		return;
	if (http_head_find(h, "cache-control", 13, 0) < 0 && http_head_has_token(h, "pragma", "no-cache"))
		return;
	if (http_head_find(h, "set-cookie", 10, 0) >= 0)
		return;
	sig = vary_sig(h);
	if (sig < 0 || (sig && !r->c->vary))
		return;
	/* a body of known end: Content-Length or chunked, never until close */
	if (!(m->flags & (H1_F_CLEN | H1_F_CHUNKED)) || (m->flags & H1_F_CLEN_DROPPED))
		return;
	if ((m->flags & H1_F_CLEN) && m->clen > r->c->max_obj)
		return;
	now = cache_now();
	if (field_str(h, "age", buf, sizeof(buf)))
		age = strtol(buf, NULL, 10);
	if (age < 0)
		age = 0;
	/* the response's own freshness left (-1: it gives none), capped by
	 * the cache's max-age */
	maxage = cc_seconds(h, "s-maxage");
	if (maxage < 0)
		maxage = cc_seconds(h, "max-age");
	if (maxage >= 0) {
		fresh = (long long)maxage - age;
	} else if (field_str(h, "expires", buf, sizeof(buf))) {
		long long exp = http_date(buf), date = -1;

		if (field_str(h, "date", buf, sizeof(buf)))
			date = http_date(buf);
		if (date < 0)
			date = (long long)(now / 1000);
		fresh = exp < 0 ? 0 : exp - date - age;   /* an invalid date is in the past */
		if (fresh < 0)
			fresh = 0;
	} else if (http_head_find(h, "etag", 4, 0) < 0 &&
		   http_head_find(h, "last-modified", 13, 0) < 0) {
		return;   /* no explicit expiration and no validator (HAProxy) */
	}
	if (maxage >= 0 || fresh >= 0) {
		if (fresh <= 0)
			return;   /* stale already (its Age is past its max-age) */
	}
	life = r->c->max_age;
	if (fresh >= 0 && fresh < life)
		life = fresh;
	if (life <= 0)
		return;
	if (sig) {
		struct cache_obj o;

		free(ct->skey);
		if (!(ct->skey = vary_key(ct, (unsigned)sig, &ct->sklen)))
			return;
		/* max-secondary-entries: objects of this primary key (a
		 * replaced one does not count) */
		if (cache_store_count_hash(r->c->st, ct->hash) >= r->c->max_second &&
		    !cache_store_get(r->c->st, ct->hash, ct->skey, ct->sklen, now, &o))
			return;
	}
	ct->store = r->c;
	ct->age0 = (uint32_t)age;
	ct->t_expire = now + (uint64_t)life * 1000;
}

/* ---- the analyser's hooks ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Accept-Encoding values of <h> normalised: the codings the client
 * accepts (q=0 ones left out), lower case, without parameters, sorted,
 * once each, comma-separated: "gzip, br;q=0.5" and "BR,gzip" give the same
 * "br,gzip". Returns a malloc'd string ("" without the field), NULL when
 * memory is exhausted. */
/* The parameters of a coding, from after its ';' to <e>: exactly one
 * q-value ("q=0", "q=0.5", "q=1.000"), blanks around. Returns 1 for a zero
 * q-value, 0 for another, -1 for anything else: a list whose meaning
 * readers might not agree on (several q, other parameters) has no key, so
 * that no object is stored or served for it. */
static int ae_qvalue(const char *v, const char *e)
{
	int zero, one, k;

	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e - v < 3 || (v[0] != 'q' && v[0] != 'Q') || v[1] != '=' ||
	    (v[2] != '0' && v[2] != '1'))
		return -1;
	zero = v[2] == '0';
	one = !zero;
	v += 3;
	if (v == e)
		return zero;
	if (*v++ != '.')
		return -1;
	for (k = 0; v < e; v++, k++) {
		if (k == 3 || *v < '0' || *v > '9' || (one && *v != '0'))
			return -1;   /* at most 3 decimals; 1 only as 1.000 */
		if (*v != '0')
			zero = 0;
	}
	return zero;
}

static char *ae_normalize(const struct http_head *h)
{
	char *tok[32], *out;
	int n = 0, bad = 0;
	size_t len = 0;

	for (int i = http_head_find(h, "accept-encoding", 15, 0); i >= 0 && !bad;
	     i = http_head_find(h, "accept-encoding", 15, i + 1)) {
		const char *p = h->f[i].v.p, *e = p + h->f[i].v.len;

		while (p < e && !bad) {
			const char *q, *t, *te, *par;

			while (p < e && (*p == ' ' || *p == '\t' || *p == ','))
				p++;
			q = p;
			while (q < e && *q != ',')
				q++;
			t = p;
			te = memchr(t, ';', (size_t)(q - t));
			par = te;
			if (!te)
				te = q;
			while (te > t && (te[-1] == ' ' || te[-1] == '\t'))
				te--;
			p = q;
			if (te == t)
				continue;
			if (par) {
				int zero = ae_qvalue(par + 1, q);

				if (zero < 0) {
					bad = 1;   /* not a list this cache keys on */
					break;
				}
				if (zero)
					continue;   /* ";q=0": not accepted */
			}
			if (n == 32) {
				bad = 1;
				break;
			}
			tok[n] = strndup(t, (size_t)(te - t));
			if (!tok[n])
				break;
			for (char *c = tok[n]; *c; c++)
				if (*c >= 'A' && *c <= 'Z')
					*c = (char)(*c - 'A' + 'a');
			n++;
		}
	}
	if (bad) {
		for (int i = 0; i < n; i++)
			free(tok[i]);
		return NULL;
	}
	qsort(tok, (size_t)n, sizeof(*tok), cmp_str);
	for (int i = 0; i < n; i++)
		len += strlen(tok[i]) + 1;
	out = malloc(len + 1);
	len = 0;
	for (int i = 0; i < n; i++) {
		if (out && (i == 0 || strcmp(tok[i], tok[i - 1]) != 0)) {
			size_t l = strlen(tok[i]);

			if (len)
				out[len++] = ',';
			memcpy(out + len, tok[i], l);
			len += l;
		}
	}
	for (int i = 0; i < n; i++)
		free(tok[i]);
	if (out)
		out[len] = 0;
	return out;
}

/* The key of the object varying on <sig> (0: the primary key itself):
 * the primary key, then a 0x01 byte (which no Host or target holds), the
 * signature and the values of the fields it names. NULL when memory is
 * exhausted. */
static char *vary_key(const struct cache_txn *ct, unsigned sig, size_t *len)
{
	char *k;
	int n;

	if (!ct->ae || !ct->ref)
		return NULL;
	n = asprintf(&k, "%.*s\x01%u\n%s\n%s", (int)ct->klen, ct->key, sig,
		     (sig & VARY_AE) ? ct->ae : "", (sig & VARY_REF) ? ct->ref : "");
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return k;
}

/* Records what the request allows (GET or HEAD, HTTP/1.1, no
 * Authorization, no body) and its key: the Host value and the target. */
static void cache_req_key(struct stream *s, struct cache_txn *ct)
{
	struct http_txn *txn = s->txn;
	const struct http_head *h = txn->req_head;
	const struct h1_msg *m = &txn->req;
	const struct http_str *u;
	int i;

	if (!h || (txn->meth != H1_M_GET && txn->meth != H1_M_HEAD) || !txn->req_ver11 ||
	    http_head_find(h, "authorization", 13, 0) >= 0 ||
	    !((m->flags & H1_F_NO_BODY) || ((m->flags & H1_F_CLEN) && !m->clen)))
		return;
	u = &h->sl[HTTP_SL_URI];
	i = http_head_find(h, "host", 4, 0);
	ct->klen = (i >= 0 ? h->f[i].v.len : 0) + 1 + u->len;
	ct->key = ct->klen <= sizeof(ct->kbuf) ? ct->kbuf : malloc(ct->klen);
	if (!ct->key)
		return;
	if (i >= 0)
		memcpy(ct->key, h->f[i].v.p, h->f[i].v.len);
	ct->key[i >= 0 ? h->f[i].v.len : 0] = '\n';
	memcpy(ct->key + ct->klen - u->len, u->p, u->len);
	ct->hash = cache_hash(CACHE_HASH_INIT, ct->key, ct->klen);
	ct->cacheable = 1;
	if (cs.vary) {
		int r = http_head_find(h, "referer", 7, 0);

		ct->ae = ae_normalize(h);
		/* the whole Referer (a cut one would let two share an object) */
		ct->ref = r >= 0 ? strndup(h->f[r].v.p, h->f[r].v.len) : strdup("");
	}
	ct->bypass = cc_has(h, "no-cache") ||
		     (http_head_find(h, "cache-control", 13, 0) < 0 &&
		      http_head_has_token(h, "pragma", "no-cache"));
}

/* Whether the ETag <tag> (<tl> bytes) is in the If-None-Match list <l>
 * (weak comparison). */
static int etag_listed(const char *l, size_t ll, const char *tag, size_t tl)
{
	const char *e = l + ll;

	if (tl > 2 && tag[0] == 'W' && tag[1] == '/') {
		tag += 2;
		tl -= 2;
	}
	while (l < e) {
		const char *q;

		while (l < e && (*l == ' ' || *l == '\t' || *l == ','))
			l++;
		q = l;
		while (q < e && *q != ',')
			q++;
		while (q > l && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		if (q - l == 1 && *l == '*')
			return 1;
		if (q - l > 2 && l[0] == 'W' && l[1] == '/')
			l += 2;
		if ((size_t)(q - l) == tl && memcmp(l, tag, tl) == 0)
			return 1;
		while (l < e && *l != ',')
			l++;
	}
	return 0;
}

/* The value of field <name> in a stored head (CRLF lines), or NULL. */
static const char *stored_field(const char *head, size_t hlen, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = memchr(head, '\n', hlen), *e = head + hlen;

	while (p && ++p < e) {
		const char *eol = memchr(p, '\n', (size_t)(e - p));

		if (!eol)
			break;
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1, *ve = eol;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			*vlen = (size_t)(ve - v);
			return v;
		}
		p = eol;
	}
	return NULL;
}

/* The stored parse of object <o>'s head, or NULL when it has none (or
 * one whose size does not match its field count). */
static const struct head_parse *obj_parse(const struct cache_obj *o)
{
	const struct head_parse *hp = o->meta;

	if (!hp || o->mlen < sizeof(*hp) || hp->m.nhdrs < 0 ||
	    o->mlen != sizeof(*hp) + (size_t)hp->m.nhdrs * sizeof(hp->hdrs[0]))
		return NULL;
	return hp;
}

/* The value of field <name> in stored object <o>, or NULL: through its
 * stored parse when it has one (no scan of the head's bytes). */
static const char *obj_field(const struct cache_obj *o, const char *name, size_t *vlen)
{
	const struct head_parse *hp = obj_parse(o);
	size_t nl = strlen(name);

	if (!hp)
		return stored_field(o->head, o->hlen, name, vlen);
	for (int i = 0; i < hp->m.nhdrs; i++) {
		const struct h1_hdr *f = &hp->hdrs[i];

		if (f->name.len == nl && strncasecmp(o->head + f->name.off, name, nl) == 0) {
			*vlen = f->value.len;
			return o->head + f->value.off;
		}
	}
	return NULL;
}

/* Whether the request's conditions make a stored object a 304. */
static int cache_not_modified(const struct http_head *rq, const struct cache_obj *o)
{
	const char *v;
	size_t vl;
	int i = http_head_find(rq, "if-none-match", 13, 0);
	char buf[128];

	if (i >= 0) {
		v = obj_field(o, "etag", &vl);
		return v && etag_listed(rq->f[i].v.p, rq->f[i].v.len, v, vl);
	}
	if (field_str(rq, "if-modified-since", buf, sizeof(buf))) {
		long long ims = http_date(buf), lm;
		char lmb[128];

		v = obj_field(o, "last-modified", &vl);
		if (!v)
			v = obj_field(o, "date", &vl);
		if (v && vl < sizeof(lmb)) {
			memcpy(lmb, v, vl);
			lmb[vl] = 0;
			lm = http_date(lmb);
		} else {
			lm = (long long)(o->t_store / 1000);
		}
		return ims >= 0 && lm >= 0 && lm <= ims;
	}
	return 0;
}

/* The head to send for a hit: the stored one, or a 304 made of its
 * validators and freshness fields, with the Age field, written in the
 * cache's scratch string (kept from hit to hit: no allocation once it is
 * large enough). NULL when memory is exhausted. */
static char *cache_hit_head(const struct cache_obj *o, int not_mod, uint64_t now, size_t *len)
{
	static const char *const keep304[] = {
		"etag", "last-modified", "cache-control", "expires", "date", "content-location", "vary",
	};
	struct dstr d = cs.hit_head;
	uint64_t age = o->age0 + (now > o->t_store ? (now - o->t_store) / 1000 : 0);
	const char *p = o->head, *e = o->head + o->hlen - 2;   /* without the empty line */

	d.len = 0;
	if (not_mod) {
		dstr_add(&d, "HTTP/1.1 304 Not Modified\r\n", 27);
		for (size_t i = 0; i < ARRAY_SIZE(keep304); i++) {
			size_t vl;
			const char *v = obj_field(o, keep304[i], &vl);

			if (v)
				dstr_printf(&d, "%s: %.*s\r\n", keep304[i], (int)vl, v);
		}
	} else {
		dstr_add(&d, p, (size_t)(e - p));
	}
	{
		/* the Age field, without printf on every hit */
		char num[24], *q = num + sizeof(num);

		do
			*--q = (char)('0' + age % 10);
		while ((age /= 10));
		dstr_add(&d, "age: ", 5);
		dstr_add(&d, q, (size_t)(num + sizeof(num) - q));
		dstr_add(&d, "\r\n\r\n", 4);
	}
	cs.hit_head = d;
	if (!d.p || d.len < 4 || memcmp(d.p + d.len - 4, "\r\n\r\n", 4))
		return NULL;
	*len = d.len;
	return d.p;
}

/* The parse of hit head <head> (<hlen> bytes: stored object <o>'s head
 * with the Age field appended, cache_hit_head()) from the object's stored
 * parse, in the cache's scratch: NULL when the object has none (the head
 * is then parsed). Valid for a GET answered in full only (the stored parse
 * frames the body of a GET). */
static const struct h1_msg *cache_hit_parse(const struct cache_obj *o, const char *head,
                                            size_t hlen, struct h1_msg *m)
{
	const struct head_parse *hp = obj_parse(o);
	uint32_t n, at = (uint32_t)o->hlen - 2;   /* where the Age field starts */

	if (!hp || hlen < at + 10 || memcmp(head + at, "age: ", 5) != 0)
		return NULL;
	n = (uint32_t)hp->m.nhdrs + 1;
	if (n > cs.hit_nhdrs) {
		struct h1_hdr *a = realloc(cs.hit_hdrs, n * sizeof(*a));

		if (!a)
			return NULL;
		cs.hit_hdrs = a;
		cs.hit_nhdrs = n;
	}
	*m = hp->m;
	m->hdrs = cs.hit_hdrs;
	m->maxhdr = (int)n;
	m->nhdrs = (int)n;
	memcpy(cs.hit_hdrs, hp->hdrs, (n - 1) * sizeof(*m->hdrs));
	cs.hit_hdrs[n - 1].name = (struct h1_slice){ at, 3 };
	cs.hit_hdrs[n - 1].value = (struct h1_slice){ at + 5, (uint32_t)(hlen - 4 - (at + 5)) };
	m->head_len = (uint32_t)hlen;
	m->scanned = (uint32_t)hlen;
	return m;
}

/* Whether the request in <h> accepts the content coding of stored <o>, as
 * the compressor reads Accept-Encoding: the object's key comes from the
 * cache's own reading, and a gzip body must never reach a client that the
 * compressor would not have sent one (codings it does not know are left
 * to the key). */
static int cache_coding_accepted(const struct http_head *h, const struct cache_obj *o)
{
	size_t vl;
	const char *v = obj_field(o, "content-encoding", &vl);
	enum comp_algo a;
	struct comp_ae ae;
	int q;

	if (!v)
		return 1;
	if ((vl == 4 && strncasecmp(v, "gzip", 4) == 0) || (vl == 6 && strncasecmp(v, "x-gzip", 6) == 0))
		a = COMP_A_GZIP;
	else if (vl == 7 && strncasecmp(v, "deflate", 7) == 0)
		a = COMP_A_DEFLATE;
	else
		return 1;
	comp_ae_init(&ae);
	for (int i = http_head_find(h, "accept-encoding", 15, 0); i >= 0;
	     i = http_head_find(h, "accept-encoding", 15, i + 1))
		if (comp_ae_parse(h->f[i].v.p, h->f[i].v.len, &ae) == -1)
			return 0;
	q = ae.q[a] >= 0 ? ae.q[a] : ae.star;
	return q > 0;
}

int cache_req_answer(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct cache_txn *ct;
	struct cache_obj o;
	uint64_t now;
	char *head;
	size_t hlen;
	struct h1_msg pm;
	int not_mod, ret;

	if (likely(!cs.active))
		return 0;
	if (!(ct = ctxn_of(s)))
		return 0;
	cache_req_key(s, ct);
	if (!ct->use || !ct->cacheable || ct->bypass)
		return 0;
	s->fe->fe_counters.cache_lookups++;
	if (s->be != s->fe)
		s->be->be_counters.cache_lookups++;
	now = cache_now();
	if (!ct->use->st)
		return 0;
	if (!cache_store_get(ct->use->st, ct->hash, ct->key, ct->klen, now, &o)) {
		/* objects that vary: one per signature to try */
		unsigned sig = 0;

		if (!ct->use->vary)
			return 0;
		for (sig = VARY_AE; sig <= (VARY_AE | VARY_REF); sig++) {
			size_t kl;
			char *k = vary_key(ct, sig, &kl);
			int found = k && cache_store_get(ct->use->st, ct->hash, k, kl, now, &o);

			free(k);
			if (found)
				break;
		}
		if (sig > (VARY_AE | VARY_REF))
			return 0;
	}
	if (!cache_coding_accepted(txn->req_head, &o))
		return 0;
	not_mod = cache_not_modified(txn->req_head, &o);
	head = cache_hit_head(&o, not_mod, now, &hlen);
	if (!head)
		return 0;
	ct->hit = ct->use;
	ret = http_answer_stored(s, head, hlen, o.body,
				 not_mod || txn->meth == H1_M_HEAD ? 0 : o.blen,
				 !not_mod && txn->meth == H1_M_GET ?
				 cache_hit_parse(&o, head, hlen, &pm) : NULL);
	if (ret) {
		s->fe->fe_counters.cache_hits++;
		if (s->be != s->fe)
			s->be->be_counters.cache_hits++;
	} else {
		ct->hit = NULL;
	}
	return ret;
}

static void cache_drop(struct stream *s, struct cache_txn *ct)
{
	if (s->res.tap_ctx == ct) {
		s->res.tap = NULL;
		s->res.tap_ctx = NULL;
	}
	ct->collecting = 0;
	ct->failed = 1;
	dstr_free(&ct->obj);
}

static void cache_tap(void *ctx, const char *p, size_t n)
{
	struct cache_txn *ct = ctx;

	if (ct->skip) {
		size_t k = (size_t)MIN((uint64_t)n, ct->skip);

		ct->skip -= k;
		p += k;
		n -= k;
	}
	if (!n || ct->failed)
		return;
	/* max-object-size bounds the body, as the Content-Length check does */
	if (ct->obj.len - ct->hlen + n > ct->store->max_obj || dstr_add(&ct->obj, p, n) == -1)
		ct->failed = 1;   /* dropped at the end of the exchange */
}

/* Whether stored head line <p> (<n> bytes) is one a hit must not repeat. */
static int hop_field(const char *p, size_t n)
{
	static const char *const drop[] = { "connection:", "keep-alive:", "proxy-connection:", "age:" };

	for (size_t i = 0; i < ARRAY_SIZE(drop); i++)
		if (n >= strlen(drop[i]) && strncasecmp(p, drop[i], strlen(drop[i])) == 0)
			return 1;
	return 0;
}

void cache_res_begin(struct stream *s, long hlen)
{
	struct cache_txn *ct = s->txn->cache;
	const struct buf *b = s->res.buf;
	const char *p, *e;

	if (!ct || !ct->store || ct->collecting || !b || b->data < (uint64_t)hlen ||
	    (s->txn->flags & TX_F_RES_CLOSE_DELIM))
		return;
	/* the head as it leaves, less the fields of this connection */
	p = b->area + b->head;
	e = p + hlen;
	while (p < e) {
		const char *eol = memchr(p, '\n', (size_t)(e - p));
		size_t n = eol ? (size_t)(eol - p) + 1 : (size_t)(e - p);

		if (!hop_field(p, n) && dstr_add(&ct->obj, p, n) == -1) {
			cache_drop(s, ct);
			return;
		}
		p += n;
	}
	ct->hlen = ct->obj.len;
	if (ct->hlen > ct->store->max_obj) {
		cache_drop(s, ct);
		return;
	}
	ct->failed = 0;
	ct->collecting = 1;
	ct->skip = (uint64_t)hlen;
	/* a compressed body leaves chunked, without the server's length: its
	 * end is the compressor's last chunk (res_st DONE) */
	ct->clen = (s->txn->res.flags & H1_F_CLEN) && !s->txn->comp ? s->txn->res.clen :
		   UINT64_MAX;
	s->res.tap = cache_tap;
	s->res.tap_ctx = ct;
}

/* The periodic sweep: every second once something was stored, expired
 * objects leave every cache. The timer does not keep the loop alive (a
 * stopping process does not wait for it). */
static ev_timer sweep_timer;

static void cache_sweep_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	uint64_t now = cache_now();

	for (struct cache *c = cs.caches; c; c = c->next)
		if (c->st)
			cache_store_sweep(c->st, now);
}

static void cache_sweep_arm(void)
{
	if (ev_is_active(&sweep_timer) || !global.loop)
		return;
	ev_timer_init(&sweep_timer, cache_sweep_cb, 1., 1.);
	ev_timer_start(global.loop, &sweep_timer);
	ev_unref(global.loop);
}

/* The parse of the head of the object <ct> collected, to store with it
 * (struct head_parse, <*len> bytes, to free), or NULL when it does not
 * parse as a response to a GET (the hits parse it then, and fail as the
 * store does). */
static struct head_parse *cache_head_parse(struct cache_txn *ct, size_t *len)
{
	int maxh = global.maxhdr > 1 ? global.maxhdr - 1 : 1;
	struct head_parse *hp = malloc(sizeof(*hp) + (size_t)maxh * sizeof(hp->hdrs[0]));

	if (!hp)
		return NULL;
	h1_msg_init(&hp->m, hp->hdrs, maxh, 1, H1_M_GET);
	if (h1_parse(ct->obj.p, ct->hlen, ct->hlen, &hp->m) != (int)ct->hlen) {
		free(hp);
		return NULL;
	}
	hp->m.hdrs = NULL;     /* offsets only: the store could be shared */
	hp->m.err_msg = NULL;
	*len = sizeof(*hp) + (size_t)hp->m.nhdrs * sizeof(hp->hdrs[0]);
	return hp;
}

void cache_txn_end(struct stream *s)
{
	struct cache_txn *ct = s->txn->cache;
	struct head_parse *hp = NULL;
	size_t blen, mlen = 0;

	if (!ct || !ct->collecting)
		return;
	blen = ct->obj.len - ct->hlen;
	/* complete: every granted byte left, the Content-Length matched, and
	 * what left is the server's response (not a reply made here after its
	 * head, such as a 502 for bad chunks) */
	if (!ct->failed && !ct->skip && s->txn->res_st == HTTP_MSG_DONE && !s->res.to_forward &&
	    !(s->txn->flags & TX_F_LOCAL) &&
	    (ct->clen == UINT64_MAX || ct->clen == blen) &&
	    ((hp = cache_head_parse(ct, &mlen)) || 1) &&
	    cache_store_put(ct->store->st, ct->hash, ct->skey ? ct->skey : ct->key,
			    ct->skey ? ct->sklen : ct->klen, ct->obj.p, ct->hlen,
			    ct->obj.p + ct->hlen, blen, hp, mlen, ct->age0, cache_now(),
			    ct->t_expire) == 0)
		cache_sweep_arm();
	free(hp);
	cache_drop(s, ct);
}

int cache_txn_hit(const struct stream *s)
{
	return s->txn && s->txn->cache && s->txn->cache->hit;
}

void cache_txn_free(struct stream *s)
{
	struct cache_txn *ct = s->txn->cache;

	if (!ct)
		return;
	cache_drop(s, ct);
	if (ct->key != ct->kbuf)
		free(ct->key);
	free(ct->ae);
	free(ct->ref);
	free(ct->skey);
	pool_free(cs.ct_pool, ct);
	s->txn->cache = NULL;
}

/* ---- fetches ---- */

static int fetch_cache_hit(const struct smp_arg *a, struct sample *smp, struct stream *s,
                           const void *priv)
{
	const struct cache_txn *ct = s && s->txn ? s->txn->cache : NULL;

	smp->type = SMP_T_BOOL;
	smp->u.sint = ct && ct->hit;
	return 1;
}

static int fetch_cache_name(const struct smp_arg *a, struct sample *smp, struct stream *s,
                            const void *priv)
{
	const struct cache_txn *ct = s && s->txn ? s->txn->cache : NULL;

	if (!ct || !ct->hit)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = ct->hit->name;
	smp->u.str.len = strlen(ct->hit->name);
	return 1;
}

/* ---- show cache ---- */

static int cli_show_cache(struct cli_ctx *ctx, int argc, char **argv)
{
	uint64_t now = cache_now();

	for (struct cache *c = cs.caches; c; c = c->next) {
		struct cache_obj o = { 0 };

		if (!c->st)
			continue;
		dstr_printf(&ctx->out, "%s: total-max-size %zu, used %zu, entries %u, "
			    "max-object-size %u, max-age %u\n", c->name,
			    cache_store_capacity(c->st), cache_store_used(c->st),
			    cache_store_count(c->st), c->max_obj, c->max_age);
		while (cache_store_next(c->st, &o)) {
			size_t n = MIN(o.klen, (size_t)200);

			dstr_printf(&ctx->out, "  hash:%016llx size:%zu expire:%llu key:",
				    (unsigned long long)o.hash, o.size,
				    (unsigned long long)(o.t_expire > now ? (o.t_expire - now + 999) / 1000 : 0));
			/* the key's line feed (between host and target) as a space */
			for (size_t i = 0; i < n; i++)
				dstr_add(&ctx->out, o.key[i] == '\n' ? " " : &o.key[i], 1);
			dstr_add(&ctx->out, "\n", 1);
		}
	}
	return 0;
}

/* ---- registration ---- */

static struct cfg_section cache_sections[] = {
	{ "cache", CFG_SEC_CACHE, sec_cache, sec_cache_end, NULL },
};

static struct cfg_kw cache_kws[] = {
	{ "total-max-size", CFG_SEC_CACHE, CFG_T_FUNC, 0, .parse = kw_total_max_size,
	  .usage = "<megabytes>" },
	{ "max-object-size", CFG_SEC_CACHE, CFG_T_FUNC, 0, .parse = kw_max_object_size,
	  .usage = "<bytes>" },
	{ "max-age", CFG_SEC_CACHE, CFG_T_FUNC, 0, .parse = kw_max_age, .usage = "<seconds>" },
	{ "process-vary", CFG_SEC_CACHE, CFG_T_FUNC, 0, .parse = kw_process_vary,
	  .usage = "on|off" },
	{ "max-secondary-entries", CFG_SEC_CACHE, CFG_T_FUNC, 0, .parse = kw_max_secondary,
	  .usage = "<number>" },
};

static const struct act_kw cache_acts[] = {
	{ "cache-use", 0, ACT_W_HTTP_REQ, act_cache_parse, act_cache_use, NULL, "<cache name>", NULL },
	{ "cache-store", 0, ACT_W_HTTP_RES, act_cache_parse, act_cache_store, NULL, "<cache name>", NULL },
};

static const struct smp_fetch_kw cache_fetches[] = {
	{ "res.cache_hit",  fetch_cache_hit,  { 0 }, 0, SMP_T_BOOL, SMP_USE_L7RES, NULL, NULL },
	{ "res.cache_name", fetch_cache_name, { 0 }, 0, SMP_T_STR,  SMP_USE_L7RES, NULL, NULL },
};

static struct cli_kw cache_cli_kws[] = {
	{ { "show", "cache", NULL }, "show cache",
	  "show the caches and their objects", CLI_LVL_OPERATOR, cli_show_cache },
};

SLUICE_INIT(cache_register)
{
	cfg_register_sections(cache_sections, ARRAY_SIZE(cache_sections));
	cfg_register(cache_kws, ARRAY_SIZE(cache_kws));
	http_filter_register(cache_filters, ARRAY_SIZE(cache_filters));
	cfg_register_postparse(cache_postparse, 30);
	act_register(cache_acts, ARRAY_SIZE(cache_acts));
	smp_register_fetches(cache_fetches, ARRAY_SIZE(cache_fetches));
	cli_register(cache_cli_kws, ARRAY_SIZE(cache_cli_kws));
}
