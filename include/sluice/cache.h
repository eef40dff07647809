/* The HTTP cache (HAProxy's "cache" section, "http-request cache-use",
 * "http-response cache-store", res.cache_hit / res.cache_name, "show
 * cache"). Each cache owns one memory region of total-max-size bytes,
 * mmap'd at start-up, holding the index and every object; everything in it
 * refers to everything else by offset from the region's start, never by
 * pointer, so that the region could later be shared between processes
 * (doc/design.md). The store below is usable alone (unit tests); the rest
 * is wired into the HTTP engine by src/http/cache.c. */
#ifndef SLUICE_CACHE_H
#define SLUICE_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct stream;

/* ---- the store: one arena ---- */

struct cache_store;

/* One stored object, as cache_store_get() and cache_store_next() give it:
 * pointers into the arena, valid until the next call that changes the
 * store. */
struct cache_obj {
	uint64_t    hash;
	const char *key;
	size_t      klen;
	const char *head;       /* the response head as stored (status line, fields, CRLF) */
	size_t      hlen;
	const char *body;       /* the body bytes as they were forwarded */
	size_t      blen;
	const void *meta;       /* what the caller stored with it (8-aligned), NULL: none */
	size_t      mlen;
	uint64_t    t_store;    /* ms, wall clock */
	uint64_t    t_expire;   /* ms, wall clock: never served from then on */
	uint32_t    age0;       /* the response's Age when it was stored, seconds */
	size_t      size;       /* arena bytes the object takes, overhead included */
	uint32_t    off;        /* its offset in the arena (iteration cursor) */
};

/* Maps a region of <size> bytes (at least 4096, at most 4095 MB) and lays
 * out an empty store in it. Returns NULL when the mapping fails. */
struct cache_store *cache_store_new(size_t size);

/* Unmaps the store (NULL accepted). */
void cache_store_free(struct cache_store *st);

/* Arena bytes an object of <klen> + <hlen> + <blen> bytes, with <mlen>
 * bytes of meta, takes. */
size_t cache_store_objsize(size_t klen, size_t hlen, size_t blen, size_t mlen);

/* Stores an object under <hash> and key <key> (<klen> bytes), replacing one
 * with the same key; the least recently used objects are evicted until it
 * fits. <meta> (<mlen> bytes, 0: none) is kept with it, 8-aligned, for the
 * caller (the HTTP cache keeps the head's parse there): it must hold no
 * pointer, only what stays true in another process's mapping. Returns 0,
 * or -1 when it cannot fit even in an empty store. */
int cache_store_put(struct cache_store *st, uint64_t hash, const char *key, size_t klen,
                    const char *head, size_t hlen, const char *body, size_t blen,
                    const void *meta, size_t mlen, uint32_t age0, uint64_t now,
                    uint64_t expire);

/* The fresh object of key <key> (hash <hash>; the whole key is compared),
 * made the most recently used; an expired one found is removed. Returns 1
 * with <o> filled, or 0 when there is none. */
int cache_store_get(struct cache_store *st, uint64_t hash, const char *key, size_t klen,
                    uint64_t now, struct cache_obj *o);

/* How many objects are stored under <hash> (expired ones included). */
uint32_t cache_store_count_hash(struct cache_store *st, uint64_t hash);

/* Removes every object expired at <now>. Returns how many. */
int cache_store_sweep(struct cache_store *st, uint64_t now);

/* Iterates over the objects in arena order: <o->off> 0 starts, the
 * following calls continue after <o>. Returns 1 with <o> filled, 0 at the
 * end. */
int cache_store_next(const struct cache_store *st, struct cache_obj *o);

/* Objects stored, arena bytes in use (objects and their overhead), and
 * the arena's capacity for objects. */
uint32_t cache_store_count(const struct cache_store *st);
size_t cache_store_used(const struct cache_store *st);
size_t cache_store_capacity(const struct cache_store *st);

/* 64-bit FNV-1a of <len> bytes, continuing <h> (start with
 * CACHE_HASH_INIT). */
#define CACHE_HASH_INIT 0xcbf29ce484222325ULL
uint64_t cache_hash(uint64_t h, const void *p, size_t len);

/* ---- the HTTP engine's hooks (src/http/cache.c) ---- */

/* Whether the current request of <s> is to be answered from a cache (a
 * cache-use rule found a fresh object): it is then answered, and 1 is
 * returned; 0 otherwise (the request goes to a server). Called once the
 * request rules of the frontend and backend ran. */
int cache_req_answer(struct stream *s);

/* The response head of <s> (<hlen> bytes after its rewrite) was granted:
 * a cache-store rule that accepted it starts collecting the body. */
void cache_res_begin(struct stream *s, long hlen);

/* The exchange of <s> ended normally (the response fully sent): an object
 * being collected is stored when it is complete. */
void cache_txn_end(struct stream *s);

/* Whether <s>'s response was answered from a cache (logged as <CACHE>). */
int cache_txn_hit(const struct stream *s);

/* Frees the cache state of the transaction of <s> (an object being
 * collected is dropped). */
void cache_txn_free(struct stream *s);

/* Releases every cache section (tests, a failed start). */
void cache_free_all(void);

#endif
