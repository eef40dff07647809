/* The HTTP cache's store (cache.h): one mmap'd arena per cache holding a
 * header, the hash index and the objects, every link an offset from the
 * arena's start (0: none). Objects are contiguous blocks taken first-fit
 * from an address-ordered free list (freed blocks merge with their free
 * neighbours); the least recently used objects are evicted until a new one
 * fits. Expired objects go when met by a lookup and on a sweep. */
#include <string.h>
#include <sys/mman.h>

#include <sluice/cache.h>
#include <sluice/common.h>

#define CACHE_MAGIC   0x53434348u   /* "SCCH" */
#define CACHE_ALIGN   8u
#define BLK_USED      0xffffffffu   /* next_free of a block in use */

/* The arena starts with this header, then the bucket array. */
struct arena_hdr {
	uint32_t magic;
	uint32_t size;        /* bytes mapped */
	uint32_t nbuckets;
	uint32_t data_start;  /* first block */
	uint32_t free_head;   /* free blocks, by increasing offset */
	uint32_t lru_head;    /* most recently used */
	uint32_t lru_tail;
	uint32_t count;
	uint64_t used;        /* bytes of blocks in use */
	uint64_t last_sweep;  /* ms: a store sweeps expired objects at most once a second */
};

/* Every block starts with this (size includes it, multiple of 8). */
struct blk {
	uint32_t size;
	uint32_t next_free;   /* BLK_USED when the block holds an object */
};

/* What follows the block header of an object. */
struct ent {
	uint64_t hash;
	uint64_t t_store, t_expire;
	uint32_t age0;
	uint32_t hnext;              /* next object of the bucket */
	uint32_t lru_prev, lru_next;
	uint32_t klen, hlen, blen;
	uint32_t mlen;               /* bytes of meta */
	/* key, head, body follow, then the meta at the next multiple of 8 */
};

struct cache_store {
	struct arena_hdr hdr;        /* the arena starts here: the mapping */
};

#define A(st)          ((char *)(st))
#define BLK(st, off)   ((struct blk *)(A(st) + (off)))
#define ENT(st, off)   ((struct ent *)(A(st) + (off) + sizeof(struct blk)))
#define BUCKETS(st)    ((uint32_t *)(A(st) + sizeof(struct arena_hdr)))

static size_t align_up(size_t n)
{
	return (n + CACHE_ALIGN - 1) & ~(size_t)(CACHE_ALIGN - 1);
}

uint64_t cache_hash(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

struct cache_store *cache_store_new(size_t size)
{
	struct cache_store *st;
	struct arena_hdr *h;
	uint32_t nb;

	if (size < 4096 || size > 4095ULL * 1024 * 1024)
		return NULL;
	st = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return NULL;
	h = &st->hdr;
	/* one bucket per 2 kB of arena, at least 16 */
	nb = (uint32_t)(size / 2048);
	if (nb < 16)
		nb = 16;
	h->magic = CACHE_MAGIC;
	h->size = (uint32_t)size;
	h->nbuckets = nb;
	h->data_start = (uint32_t)align_up(sizeof(*h) + nb * sizeof(uint32_t));
	/* the mapping is zeroed: empty buckets and LRU */
	h->free_head = h->data_start;
	BLK(st, h->data_start)->size = (uint32_t)((size - h->data_start) & ~(size_t)(CACHE_ALIGN - 1));
	BLK(st, h->data_start)->next_free = 0;
	return st;
}

void cache_store_free(struct cache_store *st)
{
	if (st)
		munmap(st, st->hdr.size);
}

size_t cache_store_objsize(size_t klen, size_t hlen, size_t blen, size_t mlen)
{
	size_t n = align_up(sizeof(struct blk) + sizeof(struct ent) + klen + hlen + blen);

	return mlen ? n + align_up(mlen) : n;
}

/* Offset of the meta from the object's key (8-aligned in the arena: the
 * entry ends on a multiple of 8). */
static size_t meta_off(size_t klen, size_t hlen, size_t blen)
{
	return align_up(sizeof(struct blk) + sizeof(struct ent) + klen + hlen + blen) -
	       sizeof(struct blk) - sizeof(struct ent);
}

uint32_t cache_store_count(const struct cache_store *st)
{
	return st->hdr.count;
}

size_t cache_store_used(const struct cache_store *st)
{
	return (size_t)st->hdr.used;
}

size_t cache_store_capacity(const struct cache_store *st)
{
	return st->hdr.size - st->hdr.data_start;
}

/* ---- blocks ---- */

/* Returns block <off> (free) to the free list, merged with free
 * neighbours. */
static void blk_release(struct cache_store *st, uint32_t off)
{
	struct arena_hdr *h = &st->hdr;
	uint32_t prev = 0, cur = h->free_head;

	while (cur && cur < off) {
		prev = cur;
		cur = BLK(st, cur)->next_free;
	}
	BLK(st, off)->next_free = cur;
	if (prev)
		BLK(st, prev)->next_free = off;
	else
		h->free_head = off;
	/* merge with the next one */
	if (cur && off + BLK(st, off)->size == cur) {
		BLK(st, off)->size += BLK(st, cur)->size;
		BLK(st, off)->next_free = BLK(st, cur)->next_free;
	}
	/* and with the previous one */
	if (prev && prev + BLK(st, prev)->size == off) {
		BLK(st, prev)->size += BLK(st, off)->size;
		BLK(st, prev)->next_free = BLK(st, off)->next_free;
	}
}

/* A block of <need> bytes (aligned) taken first-fit, or 0. */
static uint32_t blk_take(struct cache_store *st, uint32_t need)
{
	struct arena_hdr *h = &st->hdr;
	uint32_t prev = 0, cur = h->free_head;

	while (cur) {
		struct blk *b = BLK(st, cur);

		if (b->size >= need) {
			uint32_t next = b->next_free;

			if (b->size - need >= sizeof(struct blk) + sizeof(struct ent)) {
				/* split: the rest stays free in place */
				uint32_t rest = cur + need;

				BLK(st, rest)->size = b->size - need;
				BLK(st, rest)->next_free = next;
				next = rest;
				b->size = need;
			}
			if (prev)
				BLK(st, prev)->next_free = next;
			else
				h->free_head = next;
			b->next_free = BLK_USED;
			return cur;
		}
		prev = cur;
		cur = b->next_free;
	}
	return 0;
}

/* ---- objects ---- */

static uint32_t *bucket_of(struct cache_store *st, uint64_t hash)
{
	return &BUCKETS(st)[hash % st->hdr.nbuckets];
}

static void lru_unlink(struct cache_store *st, uint32_t off)
{
	struct ent *e = ENT(st, off);

	if (e->lru_prev)
		ENT(st, e->lru_prev)->lru_next = e->lru_next;
	else
		st->hdr.lru_head = e->lru_next;
	if (e->lru_next)
		ENT(st, e->lru_next)->lru_prev = e->lru_prev;
	else
		st->hdr.lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = 0;
}

static void lru_push(struct cache_store *st, uint32_t off)
{
	struct ent *e = ENT(st, off);

	e->lru_prev = 0;
	e->lru_next = st->hdr.lru_head;
	if (st->hdr.lru_head)
		ENT(st, st->hdr.lru_head)->lru_prev = off;
	st->hdr.lru_head = off;
	if (!st->hdr.lru_tail)
		st->hdr.lru_tail = off;
}

static void obj_remove(struct cache_store *st, uint32_t off)
{
	struct ent *e = ENT(st, off);
	uint32_t *p = bucket_of(st, e->hash);

	while (*p && *p != off)
		p = &ENT(st, *p)->hnext;
	if (*p)
		*p = e->hnext;
	lru_unlink(st, off);
	st->hdr.count--;
	st->hdr.used -= BLK(st, off)->size;
	blk_release(st, off);
}

static const char *ent_key(struct cache_store *st, uint32_t off)
{
	return (const char *)(ENT(st, off) + 1);
}

static uint32_t obj_find(struct cache_store *st, uint64_t hash, const char *key, size_t klen)
{
	for (uint32_t off = *bucket_of(st, hash); off; off = ENT(st, off)->hnext) {
		struct ent *e = ENT(st, off);

		if (e->hash == hash && e->klen == klen && memcmp(ent_key(st, off), key, klen) == 0)
			return off;
	}
	return 0;
}

static void obj_fill(const struct cache_store *st, uint32_t off, struct cache_obj *o)
{
	struct ent *e = ENT(st, off);
	const char *k = (const char *)(e + 1);

	o->off = off;
	o->hash = e->hash;
	o->key = k;
	o->klen = e->klen;
	o->head = k + e->klen;
	o->hlen = e->hlen;
	o->body = o->head + e->hlen;
	o->blen = e->blen;
	o->meta = e->mlen ? k + meta_off(e->klen, e->hlen, e->blen) : NULL;
	o->mlen = e->mlen;
	o->t_store = e->t_store;
	o->t_expire = e->t_expire;
	o->age0 = e->age0;
	o->size = BLK(st, off)->size;
}

int cache_store_put(struct cache_store *st, uint64_t hash, const char *key, size_t klen,
                    const char *head, size_t hlen, const char *body, size_t blen,
                    const void *meta, size_t mlen, uint32_t age0, uint64_t now, uint64_t expire)
{
	size_t need = cache_store_objsize(klen, hlen, blen, mlen);
	uint32_t off;
	struct ent *e;
	char *p;

	if (need > cache_store_capacity(st))
		return -1;
	off = obj_find(st, hash, key, klen);
	if (off)
		obj_remove(st, off);
	if (now - st->hdr.last_sweep >= 1000 || now < st->hdr.last_sweep) {
		st->hdr.last_sweep = now;
		cache_store_sweep(st, now);
	}
	while (!(off = blk_take(st, (uint32_t)need))) {
		if (!st->hdr.lru_tail)
			return -1;   /* cannot happen: an empty arena has room */
		obj_remove(st, st->hdr.lru_tail);
	}
	e = ENT(st, off);
	memset(e, 0, sizeof(*e));
	e->hash = hash;
	e->t_store = now;
	e->t_expire = expire;
	e->age0 = age0;
	e->klen = (uint32_t)klen;
	e->hlen = (uint32_t)hlen;
	e->blen = (uint32_t)blen;
	p = (char *)(e + 1);
	memcpy(p, key, klen);
	memcpy(p + klen, head, hlen);
	if (blen)
		memcpy(p + klen + hlen, body, blen);
	e->mlen = (uint32_t)mlen;
	if (mlen)
		memcpy(p + meta_off(klen, hlen, blen), meta, mlen);
	e->hnext = *bucket_of(st, hash);
	*bucket_of(st, hash) = off;
	lru_push(st, off);
	st->hdr.count++;
	st->hdr.used += BLK(st, off)->size;
	return 0;
}

int cache_store_get(struct cache_store *st, uint64_t hash, const char *key, size_t klen,
                    uint64_t now, struct cache_obj *o)
{
	uint32_t off = obj_find(st, hash, key, klen);

	if (!off)
		return 0;
	if (ENT(st, off)->t_expire <= now) {
		obj_remove(st, off);
		return 0;
	}
	lru_unlink(st, off);
	lru_push(st, off);
	obj_fill(st, off, o);
	return 1;
}

uint32_t cache_store_count_hash(struct cache_store *st, uint64_t hash)
{
	uint32_t n = 0;

	for (uint32_t off = *bucket_of(st, hash); off; off = ENT(st, off)->hnext)
		n += ENT(st, off)->hash == hash;
	return n;
}

int cache_store_sweep(struct cache_store *st, uint64_t now)
{
	uint32_t off = st->hdr.lru_head;
	int n = 0;

	while (off) {
		uint32_t next = ENT(st, off)->lru_next;

		if (ENT(st, off)->t_expire <= now) {
			obj_remove(st, off);
			n++;
		}
		off = next;
	}
	return n;
}

int cache_store_next(const struct cache_store *st, struct cache_obj *o)
{
	uint32_t off = o->off ? o->off + BLK(st, o->off)->size : st->hdr.data_start;

	while (off + sizeof(struct blk) <= st->hdr.size && off >= st->hdr.data_start) {
		const struct blk *b = BLK(st, off);

		if (!b->size)
			break;
		if (b->next_free == BLK_USED) {
			obj_fill(st, off, o);
			return 1;
		}
		off += b->size;
	}
	return 0;
}
