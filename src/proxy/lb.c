/* Load-balancing algorithms and their keywords (lb.h). */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/crc.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_head.h>
#include <sluice/lb.h>
#include <sluice/log.h>
#include <sluice/payload_parse.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/units.h>

#define LB_RING_POINTS 16   /* ring points per unit of weight (consistent) */

/* ---- hashes ---- */

/* Bob Jenkins' 32-bit integer mix: spreads close keys across the range. */
static uint32_t lb_avalanche(uint32_t a)
{
	a = (a + 0x7ed55d16) + (a << 12);
	a = (a ^ 0xc761c23c) ^ (a >> 19);
	a = (a + 0x165667b1) + (a << 5);
	a = (a + 0xd3a2646c) ^ (a << 9);
	a = (a + 0xfd7046c5) + (a << 3);
	a = (a ^ 0xb55a4f09) ^ (a >> 16);
	/* HAProxy then multiplies by 0xC0000001 (it moves only the two top
	 * bits); doing the same keeps hash converters (sdbm(1), base32...) and
	 * hash-based server choices equal to its own. */
	return a * 3221225473u;
}

static uint32_t rotl32(uint32_t v, unsigned n)
{
	n &= 31;
	return n ? (v << n) | (v >> (32 - n)) : v;
}

/* wt6: two 32-bit lanes, each byte folded into both (one by xor, one by
 * add, both complemented), the lanes swapped while rotated, and the next
 * rotation amounts taken from the mixed state. Less smooth than sdbm or
 * djb2, but little sensitive to the input set (numeric keys, addresses). */
static uint32_t lb_wt6(const unsigned char *p, size_t len)
{
	uint32_t a = 0xa53c965a, b = 0x5ca6953a;
	unsigned ra = 6, rb = 18;

	for (size_t i = 0; i < len; i++) {
		uint32_t na, mix;

		a = ~(a ^ p[i]);
		b = ~(b + p[i]);
		na = rotl32(b, ra);
		b = rotl32(a, rb);
		a = na;
		mix = ((a >> 16) ^ b) & 0xffff;
		ra = mix & 0x1f;
		rb = mix >> 11;
	}
	return a ^ b;
}

uint32_t lb_hash(enum lb_hash_fn fn, int avalanche, const void *key, size_t len)
{
	const unsigned char *p = key;
	uint32_t h = 0;

	switch (fn) {
	case LB_H_DJB2:
		h = 5381;
		for (size_t i = 0; i < len; i++)
			h = h * 33 + p[i];
		break;
	case LB_H_CRC32:
		h = crc32_ieee(p, len);
		break;
	case LB_H_CRC32C:
		h = crc32c(p, len);
		break;
	case LB_H_WT6:
		h = lb_wt6(p, len);
		break;
	default: /* sdbm */
		for (size_t i = 0; i < len; i++)
			h = p[i] + (h << 6) + (h << 16) - h;
		break;
	}
	return avalanche ? lb_avalanche(h) : h;
}

/* ---- state ---- */

static int ring_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct lb_point *)a)->hash, y = ((const struct lb_point *)b)->hash;

	return x < y ? -1 : x > y;
}

static void lb_ring_free(struct proxy *px)
{
	free(px->lb.ring);
	px->lb.ring = NULL;
	px->lb.ring_n = 0;
}

void lb_free(struct proxy *px)
{
	free(px->lb.ring);
	px->lb.ring = NULL;
	px->lb.ring_n = 0;
}

/* Builds the consistent-hashing ring of usable active servers: each owns
 * weight x LB_RING_POINTS points, so when one leaves only its keys move. */
static void lb_build_ring(struct proxy *px)
{
	int n = 0, k = 0;

	lb_ring_free(px);
	for (struct server *srv = px->servers; srv; srv = srv->next)
		if (server_usable(srv) && !(srv->flags & SRV_F_BACKUP))
			n += srv->uweight * LB_RING_POINTS;
	if (!n)
		return;
	px->lb.ring = malloc(sizeof(*px->lb.ring) * (size_t)n);
	if (!px->lb.ring)
		return;  /* picks fall back to map-based hashing */
	for (struct server *srv = px->servers; srv; srv = srv->next) {
		if (!server_usable(srv) || (srv->flags & SRV_F_BACKUP))
			continue;
		for (int i = 0; i < srv->uweight * LB_RING_POINTS; i++) {
			/* Points depend on the server id, not on its position, so
			 * they do not move when other servers come and go. */
			px->lb.ring[k].hash = lb_avalanche(((uint32_t)srv->id << 16) ^ (uint32_t)i);
			px->lb.ring[k].srv = srv;
			k++;
		}
	}
	qsort(px->lb.ring, (size_t)k, sizeof(*px->lb.ring), ring_cmp);
	px->lb.ring_n = k;
}

void lb_recalc(struct proxy *px)
{
	px->srv_act = px->srv_bck = 0;
	px->tot_weight = 0;
	for (struct server *srv = px->servers; srv; srv = srv->next) {
		srv_update_eweight(srv);
		if (!server_usable(srv))
			continue;
		if (srv->flags & SRV_F_BACKUP) {
			px->srv_bck++;
			continue;
		}
		px->srv_act++;
		px->tot_weight += (uint64_t)srv->uweight;
	}
	if ((px->lb.algo == LB_SOURCE || px->lb.algo == LB_RDP_COOKIE || lb_needs_http(px)) &&
	    px->lb.consistent)
		lb_build_ring(px);
}

const char *lb_algo_str(const struct proxy *px)
{
	static const char *const names[] = {
		[LB_ROUNDROBIN] = "roundrobin", [LB_STATIC_RR] = "static-rr",
		[LB_LEASTCONN] = "leastconn", [LB_FIRST] = "first",
		[LB_SOURCE] = "source", [LB_RANDOM] = "random",
		[LB_URI] = "uri", [LB_URL_PARAM] = "url_param", [LB_HDR] = "hdr",
		[LB_RDP_COOKIE] = "rdp-cookie",
	};

	return names[px->lb.algo];
}

/* ---- algorithms (active servers; backups are the caller's fallback) ---- */

/* A server with a free connection slot (maxconn). */
static int has_slot(const struct server *srv)
{
	int max = srv_dynamic_maxconn(srv);

	if (srv->flags & SRV_F_AVOID)
		return 0;

	return !max || srv->counters.cur_sess < (uint32_t)max;
}

static int active(const struct server *srv)
{
	return server_usable(srv) && !(srv->flags & SRV_F_BACKUP) && has_slot(srv);
}

static int backup_ready(const struct server *srv)
{
	return server_usable(srv) && (srv->flags & SRV_F_BACKUP) && has_slot(srv);
}

int lb_usable_besides(const struct proxy *px, const struct server *except)
{
	for (const struct server *srv = px->servers; srv; srv = srv->next)
		if (srv != except && server_usable(srv))
			return 1;
	return 0;
}

int lb_has_usable(const struct proxy *px)
{
	return lb_usable_besides(px, NULL);
}

/* Smooth weighted round robin: each pick adds every usable server's weight
 * to its credit and takes the richest, which then pays the total. Servers
 * interleave (a:5 b:1 gives a a b a a a, not a a a a a b). */
static struct server *lb_pick_rr_among(struct proxy *px, int (*eligible)(const struct server *))
{
	struct server *best = NULL;
	int64_t total = 0;

	for (struct server *srv = px->servers; srv; srv = srv->next) {
		if (!eligible(srv))
			continue;
		srv->lb_cur += srv->eweight;
		total += srv->eweight;
		if (!best || srv->lb_cur > best->lb_cur)
			best = srv;
	}
	if (best)
		best->lb_cur -= total;
	return best;
}

static struct server *lb_pick_rr(struct proxy *px)
{
	return lb_pick_rr_among(px, active);
}

/* Whether <a> is less loaded than <b> relative to their weights. */
static int less_loaded(const struct server *a, const struct server *b)
{
	return (int64_t)a->counters.cur_sess * b->eweight < (int64_t)b->counters.cur_sess * a->eweight;
}

/* Fewest connections per unit of weight; ties rotate. */
static struct server *lb_pick_leastconn(struct proxy *px)
{
	struct server *best = NULL, *srv = px->servers;
	int n = px->nsrv;

	if (!n)
		return NULL;
	for (uint32_t skip = px->lb.rr_next++ % (uint32_t)n; skip--; )
		srv = srv->next;
	for (int i = 0; i < n; i++, srv = srv->next ? srv->next : px->servers)
		if (active(srv) && (!best || less_loaded(srv, best)))
			best = srv;
	return best;
}

/* The usable server with the lowest id that has a free slot (maxconn). */
static struct server *lb_pick_first(struct proxy *px)
{
	struct server *best = NULL;

	for (struct server *srv = px->servers; srv; srv = srv->next)
		if (active(srv) && (!best || srv->id < best->id))
			best = srv;
	return best;
}

/* The server owning position <h> of the weighted map of usable servers. */
static struct server *lb_map(struct proxy *px, uint64_t h)
{
	if (!px->tot_weight)
		return NULL;
	h %= px->tot_weight;
	for (struct server *srv = px->servers; srv; srv = srv->next) {
		if (!server_usable(srv) || (srv->flags & SRV_F_BACKUP))
			continue;
		if (h < (uint64_t)srv->uweight)
			return has_slot(srv) ? srv : NULL;
		h -= (uint64_t)srv->uweight;
	}
	return NULL;
}

/* The server owning hash <h>: on the ring (consistent), else on the map. */
static struct server *lb_pick_hash(struct proxy *px, uint32_t h)
{
	if (px->lb.avalanche)
		h = lb_avalanche(h);
	if (px->lb.consistent && px->lb.ring_n) {
		int lo = 0, hi = px->lb.ring_n;

		/* First point at or after the key, wrapping around. */
		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (px->lb.ring[mid].hash < h)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (int k = 0; k < px->lb.ring_n; k++, lo++) {
			struct server *srv = px->lb.ring[lo % px->lb.ring_n].srv;

			if (has_slot(srv))   /* a full server passes its keys on */
				return srv;
		}
		return NULL;
	}
	return lb_map(px, h);
}

static struct server *lb_pick_source(struct proxy *px, const struct sockaddr_storage *src)
{
	const void *key;
	size_t len;

	if (src && src->ss_family == AF_INET) {
		key = &((const struct sockaddr_in *)src)->sin_addr;
		len = 4;
	} else if (src && src->ss_family == AF_INET6) {
		key = &((const struct sockaddr_in6 *)src)->sin6_addr;
		len = 16;
	} else {
		return lb_pick_rr(px);  /* unix sockets have no source address */
	}
	return lb_pick_hash(px, lb_hash(px->lb.hash_fn, 0, key, len));
}

int lb_needs_http(const struct proxy *px)
{
	return px->lb.algo == LB_URI || px->lb.algo == LB_URL_PARAM || px->lb.algo == LB_HDR;
}

/* balance uri: the path (and query with "whole"), cut after <depth>
 * directories and <len> characters; "path-only" drops an absolute URI's
 * scheme and authority. */
static uint32_t lb_hash_uri(const struct proxy *px, const char *p, size_t n)
{
	const struct lb_conf *lb = &px->lb;
	size_t i, slashes = 0;

	if ((lb->flags & LB_F_PATH_ONLY) && n && p[0] != '/') {
		const char *sep = memmem(p, n, "://", 3);

		if (sep) {
			const char *path = memchr(sep + 3, '/', n - (size_t)(sep + 3 - p));

			n = path ? n - (size_t)(path - p) : 0;
			p = path ? path : p;
		}
	}
	for (i = 0; i < n; i++) {
		if (p[i] == '?' && !(lb->flags & LB_F_WHOLE))
			break;
		if (lb->uri_len && i == (size_t)lb->uri_len)
			break;
		if (p[i] == '/' && lb->uri_depth && slashes++ == (size_t)lb->uri_depth)
			break;
	}
	return lb_hash(lb->hash_fn, 0, p, i);
}

/* The value of the first <name>=value of the '&'-separated list [q, end). */
static int lb_hash_params(const struct proxy *px, const char *q, const char *end,
                          uint32_t *hash)
{
	size_t nl = strlen(px->lb.arg);

	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q));
		const char *e = amp ? amp : end;

		if ((size_t)(e - q) > nl && q[nl] == '=' && memcmp(q, px->lb.arg, nl) == 0) {
			const char *v = q + nl + 1, *ve = memchr(v, '#', (size_t)(e - v));

			ve = ve ? ve : e;
			*hash = lb_hash(px->lb.hash_fn, 0, v, (size_t)(ve - v));
			return 1;
		}
		q = amp ? amp + 1 : end;
	}
	return 0;
}

/* balance url_param: the value of the first <name>=value of the query. */
static int lb_hash_param(const struct proxy *px, const char *p, size_t n, uint32_t *hash)
{
	const char *q = memchr(p, '?', n);

	return q ? lb_hash_params(px, q + 1, p + n, hash) : 0;
}

int lb_http_hash_post(const struct proxy *px, const struct h1_msg *m, const struct buf *b,
                      uint32_t *hash)
{
	uint64_t n;

	if (!(px->lb.flags & LB_F_CHECK_POST) || px->lb.algo != LB_URL_PARAM ||
	    m->meth_id != H1_M_POST || !(m->flags & H1_F_CLEN) || (m->flags & H1_F_CHUNKED) ||
	    !b || b->data <= m->head_len)
		return 0;
	n = MIN((uint64_t)(b->data - m->head_len), m->clen);
	return lb_hash_params(px, b->area + b->head + m->head_len,
			      b->area + b->head + m->head_len + n, hash);
}

/* balance hdr(): the first value of the first such header; with
 * use_domain_only the label before the last dot ("1wt" of "www.1wt.eu"). */
static int lb_hash_hdr(const struct proxy *px, const struct http_head *h, uint32_t *hash)
{
	int idx = http_head_find(h, px->lb.arg, strlen(px->lb.arg), 0);
	const char *v, *e;

	if (idx < 0)
		return 0;
	v = h->f[idx].v.p;
	e = v + h->f[idx].v.len;
	if ((size_t)(e - v) && memchr(v, ',', (size_t)(e - v)))
		e = memchr(v, ',', (size_t)(e - v));
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (v == e)
		return 0;
	if (px->lb.flags & LB_F_DOMAIN_ONLY) {
		const char *dot = NULL;

		for (const char *c = e; c > v; c--)
			if (c[-1] == '.') {
				dot = c - 1;
				break;
			}
		if (dot) {
			e = dot;
			for (const char *c = e; c > v; c--)
				if (c[-1] == '.') {
					v = c;
					break;
				}
		}
	}
	*hash = lb_hash(px->lb.hash_fn, 0, v, (size_t)(e - v));
	return 1;
}

int lb_http_hash(const struct proxy *px, const struct http_head *h, uint32_t *hash)
{
	const struct http_str *uri = &h->sl[HTTP_SL_URI];

	switch (px->lb.algo) {
	case LB_URI:
		*hash = lb_hash_uri(px, uri->p, uri->len);
		return 1;
	case LB_URL_PARAM:
		return lb_hash_param(px, uri->p, uri->len, hash);
	case LB_HDR:
		return lb_hash_hdr(px, h, hash);
	default:
		return 0;
	}
}

int lb_rdp_hash(const struct proxy *px, const uint8_t *p, size_t len, uint32_t *hash)
{
	const char *name = px->lb.arg[0] ? px->lb.arg : "mstshash";
	const uint8_t *v;
	size_t vl;

	if (px->lb.algo != LB_RDP_COOKIE || rdp_cookie_parse(p, len, name, strlen(name), &v, &vl) != 1)
		return 0;
	*hash = lb_hash(px->lb.hash_fn, 0, v, vl);
	return 1;
}

/* random(N): N weighted draws, the least loaded wins (N=2: "power of two"). */
static struct server *lb_pick_random(struct proxy *px)
{
	struct server *best = NULL;

	for (int d = 0; d < px->lb.draws; d++) {
		struct server *srv = lb_map(px, (uint64_t)random());

		if (srv && (!best || less_loaded(srv, best)))
			best = srv;
	}
	/* Every draw hit a full server: take the least loaded with a slot. */
	return best ? best : lb_pick_leastconn(px);
}

struct server *lb_pick(struct proxy *px, const struct lb_key *key)
{
	struct server *srv;

	switch (px->lb.algo) {
	case LB_LEASTCONN: srv = lb_pick_leastconn(px); break;
	case LB_FIRST:     srv = lb_pick_first(px); break;
	case LB_SOURCE:    srv = lb_pick_source(px, key ? key->src : NULL); break;
	case LB_URI:
	case LB_URL_PARAM:
	case LB_HDR:
	case LB_RDP_COOKIE:
		srv = key && key->has_hash ? lb_pick_hash(px, key->hash) : lb_pick_rr(px);
		break;
	case LB_RANDOM:    srv = lb_pick_random(px); break;
	default:           srv = lb_pick_rr(px); break;
	}
	/* Backups serve only when no active server is usable: the first one
	 * declared takes the traffic, or all of them with "option allbackups". */
	if (!srv && !px->srv_act) {
		if (px->options & PR_O_ALLBACKUPS)
			srv = lb_pick_rr_among(px, backup_ready);
		else
			for (srv = px->servers; srv && !backup_ready(srv); srv = srv->next)
				;
	}
	if (srv) {
		srv->counters.cum_lbconn++;
		px->be_counters.cum_lbconn++;
	}
	return srv;
}

/* ---- keywords ---- */

/* A "balance" algorithm: a row carrying what it sets, so that adding one
 * touches this table only. <parse> reads the words after the algorithm
 * (argv[0] is the algorithm as written) and <in>, the text after its "("
 * (NULL without one); it returns 0, or -1 after cfg_alert(). */
struct lb_algo_kw {
	const char   *name;
	enum lb_algo  algo;
	int           paren;   /* LB_P_*: whether "<name>(...)" is expected */
	int         (*parse)(struct cfg_ctx *ctx, struct lb_conf *lb, const char *in, int argc,
	                     char **argv);
	const char   *usage;   /* as the list of known algorithms names it; NULL: not listed */
};

#define LB_P_NONE 0   /* "<name>" only */
#define LB_P_OPT  1   /* "<name>" or "<name>(...)" */
#define LB_P_REQ  2   /* "<name>(...)" only */

/* roundrobin, static-rr, leastconn, first, source */
static int lb_parse_noarg(struct cfg_ctx *ctx, struct lb_conf *lb, const char *in, int argc,
                          char **argv)
{
	if (argc > 1) {
		cfg_alert(ctx, "'%s' takes no argument", argv[0]);
		return -1;
	}
	return 0;
}

/* random, random(<draws>) */
static int lb_parse_random(struct cfg_ctx *ctx, struct lb_conf *lb, const char *in, int argc,
                           char **argv)
{
	lb->draws = 2;
	if (in) {
		char *end;
		long d = strtol(in, &end, 10);

		if (end == in || strcmp(end, ")") != 0 || d < 1 || d > 100) {
			cfg_alert(ctx, "'random(<draws>)' expects a number of draws from 1 to 100");
			return -1;
		}
		lb->draws = (int)d;
	}
	return lb_parse_noarg(ctx, lb, in, argc, argv);
}

/* balance uri [len N] [depth N] [whole] [path-only] */
static int lb_parse_uri(struct cfg_ctx *ctx, struct lb_conf *lb, const char *in, int argc,
                        char **argv)
{
	static const struct {
		const char *name;
		unsigned    flag;   /* set by the word alone */
		size_t      off;    /* else an integer at <off> in struct lb_conf */
	} opts[] = {
		{ "whole", LB_F_WHOLE, 0 },
		{ "path-only", LB_F_PATH_ONLY, 0 },
		{ "len", 0, offsetof(struct lb_conf, uri_len) },
		{ "depth", 0, offsetof(struct lb_conf, uri_depth) },
	};

	for (int i = 1; i < argc; i++) {
		size_t o;

		for (o = 0; o < ARRAY_SIZE(opts); o++)
			if (strcmp(argv[i], opts[o].name) == 0)
				break;
		if (o == ARRAY_SIZE(opts)) {
			cfg_alert(ctx, "'balance uri' only accepts parameters 'len', 'depth', "
				  "'path-only' and 'whole' (got '%s')", argv[i]);
			return -1;
		}
		if (opts[o].flag) {
			lb->flags |= opts[o].flag;
		} else {
			char *end;
			long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;

			if (i + 1 >= argc || *end || v < 1 || v > 1 << 20) {
				cfg_alert(ctx, "'balance uri %s' expects a positive integer", argv[i]);
				return -1;
			}
			*(int *)((char *)lb + opts[o].off) = (int)v;
			i++;
		}
	}
	return 0;
}

/* balance url_param <name> [check_post [<max_wait>]] */
static int lb_parse_url_param(struct cfg_ctx *ctx, struct lb_conf *lb, const char *in,
                              int argc, char **argv)
{
	if (argc < 2 || !*argv[1] || strlen(argv[1]) >= sizeof(lb->arg)) {
		cfg_alert(ctx, "'balance url_param' requires an URL parameter name "
			  "(at most %zu characters)", sizeof(lb->arg) - 1);
		return -1;
	}
	strcpy(lb->arg, argv[1]);
	lb->flags &= ~LB_F_CHECK_POST;
	if (argc > 2 && strcmp(argv[2], "check_post") == 0) {
		/* an old <max_wait> is accepted and ignored, as in HAProxy */
		char *end;

		if (argc > 3)
			(void)strtol(argv[3], &end, 10);
		if (argc > 4 || (argc > 3 && (*end || !*argv[3]))) {
			cfg_alert(ctx, "'balance url_param %s check_post' takes at most a "
				  "number (<max_wait>, ignored)", argv[1]);
			return -1;
		}
		lb->flags |= LB_F_CHECK_POST;
		return 0;
	}
	if (argc > 2) {
		cfg_alert(ctx, "'balance url_param' only accepts an option 'check_post' "
			  "(got '%s')", argv[2]);
		return -1;
	}
	return 0;
}

/* balance hdr(<name>) [use_domain_only] */
static int lb_parse_hdr(struct cfg_ctx *ctx, struct lb_conf *lb, const char *in, int argc,
                        char **argv)
{
	size_t n = strlen(in);   /* "<name>)" */

	if (n < 2 || in[n - 1] != ')' || n - 1 >= sizeof(lb->arg)) {
		cfg_alert(ctx, "hdr requires an http header field name (at most %zu "
			  "characters) between parentheses", sizeof(lb->arg) - 1);
		return -1;
	}
	memcpy(lb->arg, in, n - 1);
	lb->arg[n - 1] = '\0';
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "use_domain_only") != 0) {
			cfg_alert(ctx, "'balance hdr(%s)' only accepts 'use_domain_only' (got '%s')",
				  lb->arg, argv[i]);
			return -1;
		}
		lb->flags |= LB_F_DOMAIN_ONLY;
	}
	return 0;
}

/* balance rdp-cookie[(<name>)] */
static int lb_parse_rdp(struct cfg_ctx *ctx, struct lb_conf *lb, const char *in, int argc,
                        char **argv)
{
	size_t n = in ? strlen(in) : 0;   /* "<name>)" */

	if (in && (n < 2 || in[n - 1] != ')' || n - 1 >= sizeof(lb->arg))) {
		cfg_alert(ctx, "rdp-cookie expects a cookie name (at most %zu characters) between "
			  "parentheses, or none ('mstshash')", sizeof(lb->arg) - 1);
		return -1;
	}
	if (in) {
		memcpy(lb->arg, in, n - 1);
		lb->arg[n - 1] = '\0';
	}
	if (argc > 1) {
		cfg_alert(ctx, "'balance %s' takes no other argument (got '%s')", argv[0], argv[1]);
		return -1;
	}
	return 0;
}

static const struct lb_algo_kw lb_algos[] = {
	{ "roundrobin", LB_ROUNDROBIN, LB_P_NONE, lb_parse_noarg, "roundrobin" },
	{ "static-rr", LB_STATIC_RR, LB_P_NONE, lb_parse_noarg, "static-rr" },
	{ "leastconn", LB_LEASTCONN, LB_P_NONE, lb_parse_noarg, "leastconn" },
	{ "first", LB_FIRST, LB_P_NONE, lb_parse_noarg, "first" },
	{ "source", LB_SOURCE, LB_P_NONE, lb_parse_noarg, "source" },
	{ "random", LB_RANDOM, LB_P_OPT, lb_parse_random, "random" },
	{ "uri", LB_URI, LB_P_NONE, lb_parse_uri, "uri" },
	{ "url_param", LB_URL_PARAM, LB_P_NONE, lb_parse_url_param, "url_param" },
	{ "hdr", LB_HDR, LB_P_REQ, lb_parse_hdr, "hdr(<name>)" },
	{ "rdp-cookie", LB_RDP_COOKIE, LB_P_OPT, lb_parse_rdp, "rdp-cookie[(<name>)]" },
};

/* The row of algorithm <a> ("name" or "name(..."), NULL if none; <*in>
 * gets the text after "(" (NULL without one). */
static const struct lb_algo_kw *lb_algo_find(const char *a, const char **in)
{
	const char *paren = strchr(a, '(');
	size_t len = paren ? (size_t)(paren - a) : strlen(a);

	*in = paren ? paren + 1 : NULL;
	for (size_t i = 0; i < ARRAY_SIZE(lb_algos); i++) {
		const struct lb_algo_kw *k = &lb_algos[i];

		if (strlen(k->name) != len || strncmp(a, k->name, len) != 0)
			continue;
		if (paren ? k->paren == LB_P_NONE : k->paren == LB_P_REQ)
			return NULL;
		return k;
	}
	return NULL;
}

/* Reports unknown algorithm <a>, listing the known ones and suggesting the
 * closest. */
static void lb_algo_unknown(struct cfg_ctx *ctx, const char *a)
{
	const char *paren = strchr(a, '('), *sug;
	char list[256] = "", base[64];
	struct cfg_suggest sg;
	size_t n = 0, last = 0;

	snprintf(base, sizeof(base), "%.*s", (int)(paren ? (size_t)(paren - a) : strlen(a)), a);
	cfg_suggest_init(&sg, base);
	for (size_t i = 0; i < ARRAY_SIZE(lb_algos); i++)
		if (lb_algos[i].usage) {
			cfg_suggest_add(&sg, lb_algos[i].name);
			last = i;
		}
	for (size_t i = 0; i < ARRAY_SIZE(lb_algos) && n < sizeof(list); i++)
		if (lb_algos[i].usage)
			n += snprintf(list + n, sizeof(list) - n, "%s%s",
				      !n ? "" : i == last ? " or " : ", ", lb_algos[i].usage);
	sug = cfg_suggest_pick(&sg);
	for (size_t i = 0; sug && i < ARRAY_SIZE(lb_algos); i++)
		if (sug == lb_algos[i].name)
			sug = lb_algos[i].usage;   /* hdr(<name>) */
	cfg_alert(ctx, "unknown algorithm '%s' (expects %s)%s%s%s", a, list,
		  sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
}

/* balance <algorithm> [arguments]: see lb_algos[]. */
static int kw_balance(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct lb_conf *lb = &ctx->px->lb;
	const char *a = argc ? argv[0] : "", *in;
	const struct lb_algo_kw *k = lb_algo_find(a, &in);

	lb->flags = 0;
	lb->uri_len = lb->uri_depth = 0;
	lb->arg[0] = '\0';
	if (!k) {   /* never for argc 0: no row has an empty name */
		lb_algo_unknown(ctx, a);
		return -1;
	}
	lb->algo = k->algo;
	return k->parse(ctx, lb, in, argc, argv);
}

/* hash-type map-based|consistent [sdbm|djb2|wt6|crc32] [avalanche] */
static int kw_hash_type(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct lb_conf *lb = &ctx->px->lb;
	int i = 1;

	if (argc < 1 || (strcmp(argv[0], "map-based") && strcmp(argv[0], "consistent"))) {
		cfg_alert(ctx, "expects 'map-based' or 'consistent', then an optional hash "
			  "function (sdbm, djb2, wt6, crc32) and 'avalanche'");
		return -1;
	}
	lb->consistent = argv[0][0] == 'c';
	lb->hash_fn = LB_H_SDBM;
	lb->avalanche = 0;
	if (i < argc && strcmp(argv[i], "avalanche") != 0) {
		if (strcmp(argv[i], "sdbm") == 0)
			lb->hash_fn = LB_H_SDBM;
		else if (strcmp(argv[i], "djb2") == 0)
			lb->hash_fn = LB_H_DJB2;
		else if (strcmp(argv[i], "crc32") == 0)
			lb->hash_fn = LB_H_CRC32;
		else if (strcmp(argv[i], "wt6") == 0)
			lb->hash_fn = LB_H_WT6;
		else {
			cfg_alert(ctx, "unknown hash function '%s' (expects sdbm, djb2, wt6 or crc32)", argv[i]);
			return -1;
		}
		i++;
	}
	if (i < argc && strcmp(argv[i], "avalanche") == 0) {
		lb->avalanche = 1;
		i++;
	}
	if (i < argc) {
		cfg_alert(ctx, "unexpected argument '%s'", argv[i]);
		return -1;
	}
	return 0;
}

static struct cfg_kw lb_kws[] = {
	{ "balance", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_balance, .usage = "<algorithm>" },
	{ "hash-type", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_hash_type,
	  .usage = "map-based|consistent [<function>] [avalanche]" },
};

/* The HTTP hashes need mode http: an error, in HAProxy's words. */
static int lb_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		if ((px->cap & PR_CAP_BE) && lb_needs_http(px) && px->mode != PR_MODE_HTTP) {
			log_alert("%s:%d: Layer 7 hash not possible for proxy '%s' (needs 'mode http').",
				  px->conf_file, px->conf_line, px->name);
			errors++;
		}
	return errors ? -1 : 0;
}

SLUICE_INIT(lb_register)
{
	cfg_register_postparse(lb_postparse, 30);
	cfg_register(lb_kws, ARRAY_SIZE(lb_kws));
}
