/* Load-balancing algorithms and their keywords (lb.h). */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/lb.h>
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
	return a;
}

static uint32_t lb_crc32(const unsigned char *p, size_t len)
{
	uint32_t crc = 0xffffffff;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & (0 - (crc & 1)));
	}
	return ~crc;
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
		h = lb_crc32(p, len);
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

	lb_free(px);
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
		if (!server_usable(srv))
			continue;
		if (srv->flags & SRV_F_BACKUP) {
			px->srv_bck++;
			continue;
		}
		px->srv_act++;
		px->tot_weight += (uint64_t)srv->uweight;
	}
	if (px->lb.algo == LB_SOURCE && px->lb.consistent)
		lb_build_ring(px);
}

const char *lb_algo_str(const struct proxy *px)
{
	static const char *const names[] = {
		[LB_ROUNDROBIN] = "roundrobin", [LB_STATIC_RR] = "static-rr",
		[LB_LEASTCONN] = "leastconn", [LB_FIRST] = "first",
		[LB_SOURCE] = "source", [LB_RANDOM] = "random",
	};

	return names[px->lb.algo];
}

/* ---- algorithms (active servers; backups are the caller's fallback) ---- */

/* A server with a free connection slot (maxconn). */
static int has_slot(const struct server *srv)
{
	return !srv->maxconn || srv->counters.cur_sess < (uint32_t)srv->maxconn;
}

static int active(const struct server *srv)
{
	return server_usable(srv) && !(srv->flags & SRV_F_BACKUP) && has_slot(srv);
}

static int backup_ready(const struct server *srv)
{
	return server_usable(srv) && (srv->flags & SRV_F_BACKUP) && has_slot(srv);
}

int lb_has_usable(const struct proxy *px)
{
	for (const struct server *srv = px->servers; srv; srv = srv->next)
		if (server_usable(srv))
			return 1;
	return 0;
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
		srv->lb_cur += srv->uweight;
		total += srv->uweight;
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
	return (int64_t)a->counters.cur_sess * b->uweight < (int64_t)b->counters.cur_sess * a->uweight;
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

static struct server *lb_pick_source(struct proxy *px, const struct sockaddr_storage *src)
{
	const void *key;
	size_t len;
	uint32_t h;

	if (src && src->ss_family == AF_INET) {
		key = &((const struct sockaddr_in *)src)->sin_addr;
		len = 4;
	} else if (src && src->ss_family == AF_INET6) {
		key = &((const struct sockaddr_in6 *)src)->sin6_addr;
		len = 16;
	} else {
		return lb_pick_rr(px);  /* unix sockets have no source address */
	}
	h = lb_hash(px->lb.hash_fn, px->lb.avalanche, key, len);
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

struct server *lb_pick(struct proxy *px, const struct sockaddr_storage *src)
{
	struct server *srv;

	switch (px->lb.algo) {
	case LB_LEASTCONN: srv = lb_pick_leastconn(px); break;
	case LB_FIRST:     srv = lb_pick_first(px); break;
	case LB_SOURCE:    srv = lb_pick_source(px, src); break;
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

static int kw_balance(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static const struct { const char *name; enum lb_algo algo; } algos[] = {
		{ "roundrobin", LB_ROUNDROBIN }, { "static-rr", LB_STATIC_RR },
		{ "leastconn", LB_LEASTCONN }, { "first", LB_FIRST },
		{ "source", LB_SOURCE }, { "random", LB_RANDOM },
	};
	struct lb_conf *lb = &ctx->px->lb;
	const char *a = argc ? argv[0] : "";

	if (strncmp(a, "random(", 7) == 0) {
		char *end;
		long d = strtol(a + 7, &end, 10);

		if (end == a + 7 || strcmp(end, ")") != 0 || d < 1 || d > 100) {
			cfg_alert(ctx, "'random(<draws>)' expects a number of draws from 1 to 100");
			return -1;
		}
		lb->algo = LB_RANDOM;
		lb->draws = (int)d;
	} else {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(algos); i++)
			if (strcmp(a, algos[i].name) == 0)
				break;
		if (i == ARRAY_SIZE(algos)) {
			static const char *const http_only[] = { "uri", "url_param", "hdr", "rdp-cookie" };

			for (size_t k = 0; k < ARRAY_SIZE(http_only); k++)
				if (strncmp(a, http_only[k], strlen(http_only[k])) == 0) {
					cfg_alert(ctx, "algorithm '%s' is not supported yet by sluice "
						  "(the HTTP hashing algorithms are not built)", a);
					return -1;
				}
			cfg_alert(ctx, "unknown algorithm '%s' (expects roundrobin, static-rr, "
				  "leastconn, first, source or random)", a);
			return -1;
		}
		lb->algo = algos[i].algo;
		if (lb->algo == LB_RANDOM)
			lb->draws = 2;
	}
	if (argc > 1) {
		cfg_alert(ctx, "'%s' takes no argument", a);
		return -1;
	}
	return 0;
}

/* hash-type map-based|consistent [sdbm|djb2|crc32] [avalanche] */
static int kw_hash_type(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct lb_conf *lb = &ctx->px->lb;
	int i = 1;

	if (argc < 1 || (strcmp(argv[0], "map-based") && strcmp(argv[0], "consistent"))) {
		cfg_alert(ctx, "expects 'map-based' or 'consistent', then an optional hash "
			  "function (sdbm, djb2, crc32) and 'avalanche'");
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
		else if (strcmp(argv[i], "wt6") == 0) {
			cfg_alert(ctx, "the 'wt6' hash function is not supported yet by sluice "
				  "(sdbm, djb2 and crc32 are)");
			return -1;
		} else {
			cfg_alert(ctx, "unknown hash function '%s' (expects sdbm, djb2 or crc32)", argv[i]);
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

SLUICE_INIT(lb_register)
{
	cfg_register(lb_kws, ARRAY_SIZE(lb_kws));
}
