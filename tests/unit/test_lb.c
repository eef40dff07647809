/* Unit tests for the load-balancing algorithms (src/proxy/lb.c): weighted
 * round robin counts, leastconn, first, source hashing stickiness, and the
 * consistent-hashing property that only the keys of a lost server move. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/cfg.h>
#include <sluice/global.h>
#include <sluice/lb.h>
#include <sluice/proxy.h>
#include <sluice/server.h>

static struct proxy *load(const char *text)
{
	proxy_free_all();
	assert_int_equal(cfg_parse_text("lb.cfg", text, strlen(text)), 0);
	assert_int_equal(cfg_postparse(), 0);
	return proxy_find("be", PR_CAP_BE);
}

static struct server *srv_named(struct proxy *px, const char *name)
{
	for (struct server *s = px->servers; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	fail_msg("no server %s", name);
	return NULL;
}

static struct sockaddr_storage ip4(uint32_t n)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0x0a000000u + n);
	return ss;
}

static void test_roundrobin_weights(void **state)
{
	struct proxy *px = load("backend be\n  server a 127.0.0.1:1 weight 1\n"
				"  server b 127.0.0.1:2 weight 2\n  server c 127.0.0.1:3 weight 3\n");
	int n[3] = { 0 };

	for (int i = 0; i < 600; i++) {
		struct server *s = lb_pick(px, NULL);

		n[s->name[0] - 'a']++;
	}
	assert_int_equal(n[0], 100);
	assert_int_equal(n[1], 200);
	assert_int_equal(n[2], 300);
	/* Weight 0 or maintenance: never picked. */
	srv_named(px, "c")->uweight = 0;
	srv_named(px, "a")->flags |= SRV_F_MAINT;
	lb_recalc(px);
	for (int i = 0; i < 50; i++)
		assert_string_equal(lb_pick(px, NULL)->name, "b");
}

static void test_leastconn(void **state)
{
	struct proxy *px = load("backend be\n  balance leastconn\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n"
				"  server c 127.0.0.1:3 weight 2\n");

	srv_named(px, "a")->counters.cur_sess = 5;
	srv_named(px, "b")->counters.cur_sess = 1;
	srv_named(px, "c")->counters.cur_sess = 4;  /* 2 per unit of weight */
	for (int i = 0; i < 10; i++)
		assert_string_equal(lb_pick(px, NULL)->name, "b");
	srv_named(px, "b")->counters.cur_sess = 3;  /* c: 4/2 = 2 < 3 */
	assert_string_equal(lb_pick(px, NULL)->name, "c");
	/* Ties rotate instead of always taking the first server. */
	srv_named(px, "a")->counters.cur_sess = srv_named(px, "b")->counters.cur_sess = 0;
	srv_named(px, "c")->counters.cur_sess = 0;
	int seen[3] = { 0 };
	for (int i = 0; i < 30; i++)
		seen[lb_pick(px, NULL)->name[0] - 'a']++;
	assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
}

static void test_first(void **state)
{
	struct proxy *px = load("backend be\n  balance first\n"
				"  server b 127.0.0.1:2 id 2\n  server a 127.0.0.1:1 id 1\n");

	for (int i = 0; i < 5; i++)
		assert_string_equal(lb_pick(px, NULL)->name, "a");
	srv_named(px, "a")->flags |= SRV_F_DOWN;
	lb_recalc(px);
	assert_string_equal(lb_pick(px, NULL)->name, "b");
}

/* Source hashing: the same client always lands on the same server. */
static void check_sticky(struct proxy *px)
{
	for (uint32_t k = 0; k < 200; k++) {
		struct sockaddr_storage a = ip4(k);
		struct server *s = lb_pick(px, &a);

		for (int rep = 0; rep < 3; rep++)
			assert_ptr_equal(lb_pick(px, &a), s);
	}
}

static void test_source_map_based(void **state)
{
	struct proxy *px = load("backend be\n  balance source\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n  server c 127.0.0.1:3\n");
	int n[3] = { 0 };

	check_sticky(px);
	for (uint32_t k = 0; k < 3000; k++) {
		struct sockaddr_storage a = ip4(k * 7919);

		n[lb_pick(px, &a)->name[0] - 'a']++;
	}
	for (int i = 0; i < 3; i++)
		assert_true(n[i] > 500);  /* every server gets a fair share */
}

static void test_source_consistent_moves_few_keys(void **state)
{
	struct proxy *px = load("backend be\n  balance source\n  hash-type consistent sdbm avalanche\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n"
				"  server c 127.0.0.1:3\n  server d 127.0.0.1:4\n");
	enum { KEYS = 4000 };
	static struct server *before[KEYS];
	int moved = 0, on_d = 0;

	check_sticky(px);
	for (uint32_t k = 0; k < KEYS; k++) {
		struct sockaddr_storage a = ip4(k);

		before[k] = lb_pick(px, &a);
		on_d += before[k] == srv_named(px, "d");
	}
	srv_named(px, "d")->flags |= SRV_F_DOWN;
	lb_recalc(px);
	for (uint32_t k = 0; k < KEYS; k++) {
		struct sockaddr_storage a = ip4(k);
		struct server *s = lb_pick(px, &a);

		assert_ptr_not_equal(s, srv_named(px, "d"));
		if (s != before[k]) {
			moved++;
			/* Only the keys of the lost server move. */
			assert_ptr_equal(before[k], srv_named(px, "d"));
		}
	}
	assert_int_equal(moved, on_d);
	/* About 1/N of the keys: between 1/8 and 3/8 for N = 4. */
	assert_true(moved > KEYS / 8 && moved < 3 * KEYS / 8);
}

static void test_random_draws(void **state)
{
	struct proxy *px = load("backend be\n  balance random(3)\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n");
	int n[2] = { 0 };

	assert_int_equal(px->lb.draws, 3);
	srv_named(px, "a")->counters.cur_sess = 100;
	for (int i = 0; i < 200; i++)
		n[lb_pick(px, NULL)->name[0] - 'a']++;
	/* With 3 draws the loaded server wins only when every draw hits it. */
	assert_true(n[1] > n[0]);
}

static void test_backup_fallback(void **state)
{
	struct proxy *px = load("backend be\n  balance leastconn\n  server a 127.0.0.1:1\n"
				"  server b1 127.0.0.1:2 backup\n  server b2 127.0.0.1:3 backup\n");

	assert_string_equal(lb_pick(px, NULL)->name, "a");
	srv_named(px, "a")->flags |= SRV_F_DOWN;
	lb_recalc(px);
	assert_string_equal(lb_pick(px, NULL)->name, "b1");
}

static void test_hash_functions(void **state)
{
	/* Reference values of the public definitions. */
	assert_int_equal(lb_hash(LB_H_CRC32, 0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(lb_hash(LB_H_DJB2, 0, "", 0), 5381u);
	assert_int_equal(lb_hash(LB_H_SDBM, 0, "a", 1), 97u);
	assert_int_not_equal(lb_hash(LB_H_SDBM, 1, "a", 1), 97u);
}

static void test_config_errors(void **state)
{
	const char *bad[] = {
		"backend be\n  balance uri\n",
		"backend be\n  balance random(0)\n",
		"backend be\n  balance nope\n",
		"backend be\n  hash-type consistent wt6\n",
		"backend be\n  hash-type sideways\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		proxy_free_all();
		assert_true(cfg_parse_text("lb.cfg", bad[i], strlen(bad[i])) > 0);
	}
	proxy_free_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundrobin_weights),
		cmocka_unit_test(test_leastconn),
		cmocka_unit_test(test_first),
		cmocka_unit_test(test_source_map_based),
		cmocka_unit_test(test_source_consistent_moves_few_keys),
		cmocka_unit_test(test_random_draws),
		cmocka_unit_test(test_backup_fallback),
		cmocka_unit_test(test_hash_functions),
		cmocka_unit_test(test_config_errors),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	proxy_free_all();
	return r;
}
