/* Load balancing: the `balance` and `hash-type` keywords, and picking a
 * server for a new connection (roundrobin, static-rr, leastconn, first,
 * source, random, the HTTP hashes uri, url_param, hdr, and the RDP
 * cookie's), with consistent
 * hashing on a ring when asked. */
#ifndef SLUICE_LB_H
#define SLUICE_LB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct proxy;
struct server;
struct http_head;

enum lb_algo { LB_ROUNDROBIN, LB_STATIC_RR, LB_LEASTCONN, LB_FIRST, LB_SOURCE, LB_RANDOM,
	       LB_URI, LB_URL_PARAM, LB_HDR, LB_RDP_COOKIE };

#define LB_F_WHOLE       0x01  /* balance uri whole: the query string too */
#define LB_F_PATH_ONLY   0x02  /* balance uri path-only: no scheme nor authority */
#define LB_F_DOMAIN_ONLY 0x04  /* balance hdr() use_domain_only */
#define LB_F_CHECK_POST  0x08  /* balance url_param ... check_post */
/* LB_H_CRC32C serves the crc32c converter only: hash-type does not offer
 * it, as in HAProxy 2.6. */
enum lb_hash_fn { LB_H_SDBM, LB_H_DJB2, LB_H_WT6, LB_H_CRC32, LB_H_CRC32C };

struct lb_point {
	uint32_t       hash;
	struct server *srv;
};

/* Per-backend state and settings. */
struct lb_conf {
	enum lb_algo    algo;
	int             consistent;   /* hash-type consistent (else map-based) */
	enum lb_hash_fn hash_fn;
	int             avalanche;
	int             draws;        /* random(N) */
	unsigned        flags;        /* LB_F_* */
	int             uri_len;      /* balance uri len N (0: all) */
	int             uri_depth;    /* balance uri depth N (0: all) */
	char            arg[64];      /* url_param, hdr() or rdp-cookie() name */
	/* derived by lb_recalc() */
	struct lb_point *ring;        /* consistent hashing, sorted by hash */
	int              ring_n;
	uint32_t         rr_next;     /* rotation for ties (leastconn) */
};

/* What a pick may hash: the client address (balance source) and the hash
 * of the request element the HTTP algorithms look at (lb_http_hash()). */
struct lb_key {
	const struct sockaddr_storage *src;   /* NULL: unknown */
	uint32_t                       hash;  /* valid when has_hash */
	int                            has_hash;
};

/* Picks the server for a new connection described by <key> (may be NULL:
 * then the hashing algorithms fall back to round robin, as they do when
 * the hashed element is absent); NULL when no server is usable. Counts the
 * pick (lbtot). */
struct server *lb_pick(struct proxy *px, const struct lb_key *key);

/* Whether <px>'s algorithm hashes a part of the HTTP request. */
int lb_needs_http(const struct proxy *px);

/* Hashes the element of request head <h> that <px>'s algorithm looks at
 * (URI, URL parameter, header) into <hash>. Returns 1, or 0 when the
 * element is absent (round robin then applies) or the algorithm hashes
 * no part of the request. */
int lb_http_hash(const struct proxy *px, const struct http_head *h, uint32_t *hash);

/* balance rdp-cookie[(<name>)]: hashes the value of the RDP cookie (named
 * "mstshash" by default) of the request data <p> (<len> bytes) into <hash>.
 * Returns 1, or 0 when there is no such cookie (yet) or <px> balances
 * otherwise. */
int lb_rdp_hash(const struct proxy *px, const uint8_t *p, size_t len, uint32_t *hash);

struct h1_msg;
struct buf;

/* balance url_param <name> check_post: when the query had no such
 * parameter, hashes its value from the urlencoded body of POST request
 * <m> (Content-Length framed) as far as it is in buffer <b>, whose head is
 * <m>'s. Returns 1, or 0 when absent, not a POST, chunked, or not asked. */
int lb_http_hash_post(const struct proxy *px, const struct h1_msg *m, const struct buf *b,
                      uint32_t *hash);

/* Whether some server of <px> is usable, full or not (then a connection
 * that found no free slot may wait in the queue). */
int lb_has_usable(const struct proxy *px);

/* Whether a server of <px> other than <srv> can take traffic. */
int lb_usable_besides(const struct proxy *px, const struct server *srv);

/* Recomputes usable-server totals and rings after a state or weight change. */
void lb_recalc(struct proxy *px);

/* Name of <px>'s algorithm, as `show stat` prints it. */
const char *lb_algo_str(const struct proxy *px);

/* Hashes <len> bytes with <fn> (and HAProxy's avalanche mix when asked). */
uint32_t lb_hash(enum lb_hash_fn fn, int avalanche, const void *key, size_t len);

/* Frees derived state of <px> (rings). */
void lb_free(struct proxy *px);

#endif
