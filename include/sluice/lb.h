/* Load balancing: the `balance` and `hash-type` keywords, and picking a
 * server for a new connection (roundrobin, static-rr, leastconn, first,
 * source, random), with consistent hashing on a ring when asked. */
#ifndef SLUICE_LB_H
#define SLUICE_LB_H

#include <stdint.h>
#include <sys/socket.h>

struct proxy;
struct server;

enum lb_algo { LB_ROUNDROBIN, LB_STATIC_RR, LB_LEASTCONN, LB_FIRST, LB_SOURCE, LB_RANDOM };
enum lb_hash_fn { LB_H_SDBM, LB_H_DJB2, LB_H_WT6, LB_H_CRC32 };

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
	/* derived by lb_recalc() */
	struct lb_point *ring;        /* consistent hashing, sorted by hash */
	int              ring_n;
	uint32_t         rr_next;     /* rotation for ties (leastconn) */
};

/* Picks the server for a new connection from client <src> (may be NULL);
 * NULL when no server is usable. Counts the pick (lbtot). */
struct server *lb_pick(struct proxy *px, const struct sockaddr_storage *src);

/* Whether some server of <px> is usable, full or not (then a connection
 * that found no free slot may wait in the queue). */
int lb_has_usable(const struct proxy *px);

/* Recomputes usable-server totals and rings after a state or weight change. */
void lb_recalc(struct proxy *px);

/* Name of <px>'s algorithm, as `show stat` prints it. */
const char *lb_algo_str(const struct proxy *px);

/* Hashes <len> bytes with <fn> (and HAProxy's avalanche mix when asked). */
uint32_t lb_hash(enum lb_hash_fn fn, int avalanche, const void *key, size_t len);

/* Frees derived state of <px> (rings). */
void lb_free(struct proxy *px);

#endif
