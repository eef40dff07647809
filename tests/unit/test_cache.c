/* Unit tests for the HTTP cache's store (src/http/cache_store.c): insert,
 * lookup, replace, full-key comparison under a shared hash, LRU eviction,
 * expiry (lazy and swept), arena bounds and block reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/cache.h>

#define ARENA 65536

static int put(struct cache_store *st, uint64_t h, const char *key, size_t blen, uint64_t now,
               uint64_t exp)
{
	static char body[ARENA];

	memset(body, 'x', blen);
	return cache_store_put(st, h, key, strlen(key), "HTTP/1.1 200 OK\r\n\r\n", 19, body, blen,
			       NULL, 0, 0, now, exp);
}

static void test_insert_lookup(void **state)
{
	struct cache_store *st = cache_store_new(ARENA);
	struct cache_obj o;

	assert_non_null(st);
	assert_int_equal(cache_store_count(st), 0);
	assert_int_equal(cache_store_put(st, 7, "h\n/a", 4, "HEAD", 4, "body", 4, NULL, 0, 3, 1000, 5000), 0);
	assert_int_equal(cache_store_get(st, 7, "h\n/a", 4, 2000, &o), 1);
	assert_int_equal(o.hlen, 4);
	assert_memory_equal(o.head, "HEAD", 4);
	assert_int_equal(o.blen, 4);
	assert_memory_equal(o.body, "body", 4);
	assert_int_equal(o.age0, 3);
	assert_int_equal(o.t_store, 1000);
	assert_int_equal(o.t_expire, 5000);
	assert_int_equal(o.size, cache_store_objsize(4, 4, 4, 0));
	assert_int_equal(cache_store_used(st), o.size);
	/* another key, another hash: nothing */
	assert_int_equal(cache_store_get(st, 8, "h\n/b", 4, 2000, &o), 0);
	/* the same key stored again replaces it */
	assert_int_equal(cache_store_put(st, 7, "h\n/a", 4, "H2", 2, "", 0, NULL, 0, 0, 1000, 5000), 0);
	assert_int_equal(cache_store_count(st), 1);
	assert_int_equal(cache_store_get(st, 7, "h\n/a", 4, 2000, &o), 1);
	assert_int_equal(o.hlen, 2);
	assert_null(o.meta);
	assert_int_equal(o.mlen, 0);
	assert_int_equal(o.blen, 0);
	cache_store_free(st);
}

/* Meta kept with an object comes back 8-aligned and intact, whatever the
 * lengths before it, and counts in the object's size. */
static void test_meta(void **state)
{
	struct cache_store *st = cache_store_new(ARENA);
	const uint64_t meta[3] = { 1, 0x1122334455667788ULL, 3 };
	struct cache_obj o;

	assert_non_null(st);
	for (size_t bl = 0; bl < 9; bl++) {
		assert_int_equal(cache_store_put(st, 9, "k", 1, "HH3", 3, "bbbbbbbbb", bl, meta,
						 sizeof(meta), 0, 1000, 5000), 0);
		assert_int_equal(cache_store_get(st, 9, "k", 1, 2000, &o), 1);
		assert_int_equal(o.blen, bl);
		assert_int_equal(o.mlen, sizeof(meta));
		assert_non_null(o.meta);
		assert_int_equal((uintptr_t)o.meta % 8, 0);
		assert_memory_equal(o.meta, meta, sizeof(meta));
		assert_memory_equal(o.head, "HH3", 3);
		assert_int_equal(o.size, cache_store_objsize(1, 3, bl, sizeof(meta)));
		assert_int_equal(cache_store_used(st), o.size);
	}
	cache_store_free(st);
}

static void test_full_key_compare(void **state)
{
	struct cache_store *st = cache_store_new(ARENA);
	struct cache_obj o;

	/* two keys forced under one hash are told apart by their bytes */
	assert_int_equal(put(st, 42, "h\n/one", 10, 0, 10000), 0);
	assert_int_equal(put(st, 42, "h\n/two", 20, 0, 10000), 0);
	assert_int_equal(cache_store_count(st), 2);
	assert_int_equal(cache_store_get(st, 42, "h\n/one", 6, 1, &o), 1);
	assert_int_equal(o.blen, 10);
	assert_int_equal(cache_store_get(st, 42, "h\n/two", 6, 1, &o), 1);
	assert_int_equal(o.blen, 20);
	assert_int_equal(cache_store_get(st, 42, "h\n/thr", 6, 1, &o), 0);
	assert_int_equal(cache_store_count_hash(st, 42), 2);
	assert_int_equal(cache_store_count_hash(st, 43), 0);
	/* a key that is a prefix of another is another key */
	assert_int_equal(cache_store_get(st, 42, "h\n/on", 5, 1, &o), 0);
	/* and the hash is part of the match */
	assert_int_equal(cache_store_get(st, 43, "h\n/one", 6, 1, &o), 0);
	cache_store_free(st);
}

static void test_lru_evict(void **state)
{
	struct cache_store *st = cache_store_new(ARENA);
	size_t cap = cache_store_capacity(st), one = cap / 3;
	struct cache_obj o;

	/* three objects of a bit less than a third fill it */
	assert_int_equal(put(st, 1, "a", one - 200, 0, 100000), 0);
	assert_int_equal(put(st, 2, "b", one - 200, 0, 100000), 0);
	assert_int_equal(put(st, 3, "c", one - 200, 0, 100000), 0);
	assert_int_equal(cache_store_count(st), 3);
	assert_true(cache_store_used(st) <= cap);
	/* "a" used: "b" is now the least recently used */
	assert_int_equal(cache_store_get(st, 1, "a", 1, 1, &o), 1);
	assert_int_equal(put(st, 4, "d", one - 200, 0, 100000), 0);
	assert_int_equal(cache_store_count(st), 3);
	assert_int_equal(cache_store_get(st, 2, "b", 1, 1, &o), 0);
	assert_int_equal(cache_store_get(st, 1, "a", 1, 1, &o), 1);
	assert_int_equal(cache_store_get(st, 3, "c", 1, 1, &o), 1);
	assert_int_equal(cache_store_get(st, 4, "d", 1, 1, &o), 1);
	/* an object larger than half evicts what it must, in LRU order */
	assert_int_equal(put(st, 5, "e", cap / 2, 0, 100000), 0);
	assert_int_equal(cache_store_get(st, 5, "e", 1, 1, &o), 1);
	assert_true(cache_store_used(st) <= cap);
	cache_store_free(st);
}

static void test_bounds(void **state)
{
	struct cache_store *st = cache_store_new(ARENA);
	size_t cap = cache_store_capacity(st);
	struct cache_obj o = { 0 };
	int n = 0;

	assert_null(cache_store_new(100));               /* below the minimum */
	assert_true(cap < ARENA);
	/* larger than the arena: refused, nothing evicted */
	assert_int_equal(put(st, 1, "a", 100, 0, 1000), 0);
	assert_int_equal(put(st, 2, "b", cap, 0, 1000), -1);
	assert_int_equal(cache_store_count(st), 1);
	/* exactly the capacity fits once the rest is evicted */
	assert_int_equal(put(st, 3, "c", cap - cache_store_objsize(1, 19, 0, 0), 0, 1000), 0);
	assert_int_equal(cache_store_count(st), 1);
	assert_int_equal(cache_store_used(st), cap);
	/* many small objects: iteration sees each once, all inside the arena */
	for (int i = 0; i < 200; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%d", i);
		assert_int_equal(put(st, cache_hash(CACHE_HASH_INIT, k, strlen(k)), k, 50, 0, 1000), 0);
	}
	while (cache_store_next(st, &o)) {
		assert_true(o.body + o.blen <= (const char *)st + ARENA);
		assert_true(o.key > (const char *)st);
		n++;
	}
	assert_int_equal((uint32_t)n, cache_store_count(st));
	cache_store_free(st);
}

static void test_expire(void **state)
{
	struct cache_store *st = cache_store_new(ARENA);
	struct cache_obj o;

	assert_int_equal(put(st, 1, "a", 10, 0, 1000), 0);
	assert_int_equal(put(st, 2, "b", 10, 0, 3000), 0);
	assert_int_equal(cache_store_get(st, 1, "a", 1, 999, &o), 1);
	/* never served from its expiry on: removed when met */
	assert_int_equal(cache_store_get(st, 1, "a", 1, 1000, &o), 0);
	assert_int_equal(cache_store_count(st), 1);
	/* the sweep removes what expired without a lookup */
	assert_int_equal(put(st, 3, "c", 10, 0, 2000), 0);
	assert_int_equal(cache_store_sweep(st, 2500), 1);
	assert_int_equal(cache_store_count(st), 1);
	assert_int_equal(cache_store_get(st, 2, "b", 1, 2500, &o), 1);
	assert_int_equal(cache_store_sweep(st, 5000), 1);
	assert_int_equal(cache_store_count(st), 0);
	assert_int_equal(cache_store_used(st), 0);
	/* freed blocks merged back: the whole capacity is one block again */
	assert_int_equal(put(st, 4, "d", cache_store_capacity(st) - cache_store_objsize(1, 19, 0, 0),
			     0, 9000), 0);
	cache_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_lookup),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_full_key_compare),
		cmocka_unit_test(test_lru_evict),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_expire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
