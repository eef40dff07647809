/* Unit tests for the stick tables (src/rules/stktable.c): insert, lookup,
 * expiry and LRU eviction against a naive model on random data; a full
 * table never grows; nopurge and used entries; keys; the sliding-period
 * rate counters (freq.h); the stick-table line cut at every byte. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/cfg.h>
#include <sluice/freq.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/stktable.h>

#include "../../src/rules/stk_int.h"

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static struct stktable *load(const char *line)
{
	char text[512];

	proxy_free_all();
	snprintf(text, sizeof(text), "backend st\n  %s\n", line);
	assert_int_equal(cfg_parse_text("stk.cfg", text, strlen(text)), 0);
	assert_int_equal(cfg_postparse(), 0);
	return stk_table_find("st");
}

static struct stksess *get_int(struct stktable *t, int32_t k)
{
	return stk_get(t, (unsigned char *)&k, 4);
}

static struct stksess *lookup_int(struct stktable *t, int32_t k)
{
	return stk_lookup(t, (unsigned char *)&k, 4);
}

/* The model: keys with their last touch, in touch order (oldest first). */
struct model {
	int32_t  key[64];
	uint64_t touch[64];
	int      n;
};

static int model_find(const struct model *m, int32_t k)
{
	for (int i = 0; i < m->n; i++)
		if (m->key[i] == k)
			return i;
	return -1;
}

static void model_del(struct model *m, int i)
{
	memmove(&m->key[i], &m->key[i + 1], (size_t)(m->n - i - 1) * sizeof(m->key[0]));
	memmove(&m->touch[i], &m->touch[i + 1], (size_t)(m->n - i - 1) * sizeof(m->touch[0]));
	m->n--;
}

static void model_get(struct model *m, int32_t k, uint64_t now, uint32_t expire, int size)
{
	int i = model_find(m, k);

	if (i >= 0 && m->touch[i] + expire <= now)
		model_del(m, i), i = -1;
	if (i >= 0) {
		model_del(m, i);
	} else if (m->n == size) {
		while (m->n && m->touch[0] + expire <= now)
			model_del(m, 0);
		if (m->n == size)
			model_del(m, 0);   /* the least recently touched */
	}
	m->key[m->n] = k;
	m->touch[m->n++] = now;
}

static int model_live(const struct model *m, int32_t k, uint64_t now, uint32_t expire)
{
	int i = model_find(m, k);

	return i >= 0 && m->touch[i] + expire > now;
}

static void test_model_random(void **state)
{
	struct stktable *t;
	struct model m = { .n = 0 };

	(void)state;
	stk_set_clock(fake_clock);
	fake_now = 1000;
	t = load("stick-table type integer size 64 expire 2000 store gpc0");
	assert_non_null(t);
	srandom(42);
	for (int i = 0; i < 50000; i++) {
		int32_t k = (int32_t)(random() % 200);
		long op = random() % 10;

		fake_now += (uint64_t)(random() % 20);
		if (op < 5) {
			assert_non_null(get_int(t, k));
			model_get(&m, k, fake_now, 2000, 64);
		} else if (op < 9) {
			assert_int_equal(lookup_int(t, k) != NULL, model_live(&m, k, fake_now, 2000));
		} else {
			stk_expire(t);
		}
		assert_true(t->used <= t->size);
	}
	for (int32_t k = 0; k < 200; k++)
		assert_int_equal(lookup_int(t, k) != NULL, model_live(&m, k, fake_now, 2000));
	stk_set_clock(NULL);
	proxy_free_all();
}

static void test_full_table(void **state)
{
	struct stktable *t;
	struct stksess *ts[4];

	(void)state;
	t = load("stick-table type integer size 4 nopurge");
	for (int i = 0; i < 4; i++)
		assert_non_null(get_int(t, i));
	assert_null(get_int(t, 99));   /* nopurge: refused */
	assert_int_equal(t->used, 4);
	assert_non_null(get_int(t, 2));   /* known keys still found */

	t = load("stick-table type integer size 4");
	for (int i = 0; i < 4; i++) {
		ts[i] = get_int(t, i);
		ts[i]->ref++;
	}
	assert_null(get_int(t, 99));   /* every entry in use */
	stk_release(t, ts[1]);
	assert_non_null(get_int(t, 99));   /* evicts the only unused entry */
	assert_null(lookup_int(t, 1));
	assert_non_null(lookup_int(t, 0));
	assert_int_equal(t->used, 4);
	for (int i = 0; i < 4; i++)
		if (i != 1)
			stk_release(t, ts[i]);
	for (int i = 100; i < 1000; i++) {
		assert_non_null(get_int(t, i));
		assert_true(t->used <= 4);
	}
	proxy_free_all();
}

static void test_keys(void **state)
{
	unsigned char key[STK_KEY_MAX];
	char out[128];
	struct stktable *t;
	struct stksess *ts;
	struct sample smp = { 0 };
	uint32_t klen;

	(void)state;
	t = load("stick-table type string len 4 size 10");
	assert_int_equal(stk_key_parse(t, "abcdef", key, &klen), 0);
	assert_int_equal(klen, 4);   /* cut at len */
	ts = stk_get(t, key, klen);
	stk_key_print(t, ts, out, sizeof(out));
	assert_string_equal(out, "abcd");

	t = load("stick-table type ipv6 size 10");
	smp.type = SMP_T_IPV4;
	inet_pton(AF_INET, "10.1.2.3", &smp.u.ipv4);
	assert_int_equal(stk_key_from_smp(t, &smp, key, &klen), 0);
	ts = stk_get(t, key, klen);
	stk_key_print(t, ts, out, sizeof(out));
	assert_string_equal(out, "::ffff:10.1.2.3");

	t = load("stick-table type ip size 10");
	assert_int_equal(stk_key_parse(t, "10.0.0.300", key, &klen), -1);
	smp.type = SMP_T_IPV6;
	inet_pton(AF_INET6, "2001:db8::1", &smp.u.ipv6);
	assert_int_equal(stk_key_from_smp(t, &smp, key, &klen), -1);

	t = load("stick-table type binary len 4 size 10");
	assert_int_equal(stk_key_parse(t, "0a0b", key, &klen), 0);
	ts = stk_get(t, key, klen);
	stk_key_print(t, ts, out, sizeof(out));
	assert_string_equal(out, "0a0b0000");   /* zero-padded */
	assert_int_equal(stk_key_parse(t, "0a0b0c0d0e", key, &klen), -1);
	assert_int_equal(stk_key_parse(t, "zz", key, &klen), -1);

	t = load("stick-table type integer size 10");
	assert_int_equal(stk_key_parse(t, "4294967295", key, &klen), 0);
	ts = stk_get(t, key, klen);
	stk_key_print(t, ts, out, sizeof(out));
	assert_string_equal(out, "4294967295");
	assert_int_equal(stk_key_parse(t, "-12", key, &klen), -1);   /* unsigned, as HAProxy */
	assert_int_equal(stk_key_parse(t, "4294967296", key, &klen), -1);
	assert_int_equal(stk_key_parse(t, "12x", key, &klen), -1);
	proxy_free_all();
}

static void test_data(void **state)
{
	struct stktable *t;
	struct stksess *ts;
	int64_t v;

	(void)state;
	stk_set_clock(fake_clock);
	fake_now = 5000;
	t = load("stick-table type integer size 10 store bytes_in_cnt,gpc0,http_req_rate(1s)");
	ts = get_int(t, 7);
	assert_int_equal(stk_data_get(t, ts, STK_DT_CONN_CNT, &v), 0);   /* not stored */
	stk_data_add(t, ts, STK_DT_BYTES_IN_CNT, -1, 5000000000ull);
	assert_int_equal(stk_data_get(t, ts, STK_DT_BYTES_IN_CNT, &v), 1);
	assert_int_equal(v, 5000000000ll);
	stk_data_add(t, ts, STK_DT_HTTP_REQ_CNT, STK_DT_HTTP_REQ_RATE, 3);   /* rate only */
	stk_data_get(t, ts, STK_DT_HTTP_REQ_RATE, &v);
	assert_int_equal(v, 3);
	fake_now += 1500;
	stk_data_get(t, ts, STK_DT_HTTP_REQ_RATE, &v);
	assert_int_equal(v, 1);   /* 3 x 500/1000 */
	fake_now += 1000;
	stk_data_get(t, ts, STK_DT_HTTP_REQ_RATE, &v);
	assert_int_equal(v, 0);
	stk_data_set(t, ts, STK_DT_GPC0, 9);
	stk_data_get(t, ts, STK_DT_GPC0, &v);
	assert_int_equal(v, 9);
	stk_set_clock(NULL);
	proxy_free_all();
}

static void test_freq_period(void **state)
{
	struct freq_prd f = { 0 };
	uint32_t base = UINT32_MAX - 1200;   /* the clock wraps in the middle */

	(void)state;
	freq_prd_add(&f, 1000, base, 10);
	assert_int_equal(freq_prd_read(&f, 1000, base + 999), 10);
	assert_int_equal(freq_prd_read(&f, 1000, base + 1000), 10);
	assert_int_equal(freq_prd_read(&f, 1000, base + 1500), 5);
	freq_prd_add(&f, 1000, base + 1500, 4);
	assert_int_equal(freq_prd_read(&f, 1000, base + 1500), 9);
	assert_int_equal(freq_prd_read(&f, 1000, base + 2250), 3);   /* 4 x 750/1000 */
	assert_int_equal(freq_prd_read(&f, 1000, base + 5000), 0);
	freq_prd_add(&f, 1000, base + 5000, 1);
	assert_int_equal(freq_prd_read(&f, 1000, base + 5000), 1);
}

/* freq_wait_ms() (rate-limit sessions): the wait ends at the first
 * millisecond where freq_rate() is below the limit again. */
static void test_freq_wait(void **state)
{
	struct freq_ctr f = { 0 };
	uint64_t t = 5000250, w;

	(void)state;
	assert_int_equal(freq_wait_ms(&f, 2, t), 0);
	freq_add(&f, (uint32_t)(t / 1000));
	assert_int_equal(freq_wait_ms(&f, 2, t), 0);
	freq_add(&f, (uint32_t)(t / 1000));
	/* 2 this second: the next second, where 2 x (1000 - ms) / 1000 < 2 at once */
	w = freq_wait_ms(&f, 2, t);
	assert_int_equal(w, 751);
	assert_int_equal(freq_rate(&f, t + w - 1), 2);
	assert_int_equal(freq_rate(&f, t + w), 1);
	/* 4 the last second, none in this one, limit 3: from 250 ms on */
	f = (struct freq_ctr){ .sec = 6001, .curr = 0, .prev = 4 };
	w = freq_wait_ms(&f, 3, 6001100);
	assert_int_equal(freq_rate(&f, 6001100 + w), 2);
	assert_int_equal(freq_rate(&f, 6001100 + w - 1), 3);
	/* 10 this second, limit 5: half-way through the next one */
	f = (struct freq_ctr){ .sec = 7000, .curr = 10, .prev = 0 };
	w = freq_wait_ms(&f, 5, 7000900);
	assert_true(freq_rate(&f, 7000900 + w) < 5);
	f = (struct freq_ctr){ .sec = 7000, .curr = 10, .prev = 0 };
	assert_int_equal(freq_rate(&f, 7000900 + w - 1), 5);
}

/* The layout of the legacy types is what it was (8 bytes a counter, 16 a
 * rate after an 8-byte aligned key); arrays take <nb> elements; the legacy
 * types are found in the arrays' first elements. */
static void test_arrays(void **state)
{
	struct stktable *t;
	struct stksess *ts;
	unsigned idx;
	int64_t v;
	char name[32];

	(void)state;
	stk_set_clock(fake_clock);
	fake_now = 5000;
	t = load("stick-table type ip size 10 store gpc0,conn_rate(10s),gpt0");
	assert_int_equal(t->esize, sizeof(struct stksess) + 8 + 8 + 16 + 8);
	assert_int_equal(stk_dt_locate(t, STK_DT_GPC1, &idx), STK_DT_GPC1);
	assert_int_equal(idx, 0);

	/* a comma inside the parentheses does not split the list */
	t = load("stick-table type ip size 10 store gpc(3),gpc_rate(2,10s),gpt(100),http_fail_cnt");
	assert_int_equal(t->nb[STK_DT_GPC], 3);
	assert_int_equal(t->nb[STK_DT_GPC_RATE], 2);
	assert_int_equal(t->period[STK_DT_GPC_RATE], 10000);
	assert_int_equal(t->nb[STK_DT_GPT], 100);
	assert_int_equal(t->esize, sizeof(struct stksess) + 8 + 8 + 800 + 24 + 24);
	ts = stk_get(t, (const unsigned char *)"\x0a\0\0\1", 4);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(stk_data_set_at(t, ts, STK_DT_GPC, i, 10 + i), 1);
	assert_int_equal(stk_data_set_at(t, ts, STK_DT_GPC, 3, 1), 0);   /* past the array */
	assert_int_equal(stk_data_set_at(t, ts, STK_DT_GPT, 99, 7), 1);
	assert_int_equal(stk_data_get_at(t, ts, STK_DT_GPT, 99, &v), 1);
	assert_int_equal(v, 7);
	assert_int_equal(stk_data_get_at(t, ts, STK_DT_GPC, 2, &v), 1);
	assert_int_equal(v, 12);
	stk_data_add_at(t, ts, STK_DT_GPC, STK_DT_GPC_RATE, 1, 5);
	stk_data_get_at(t, ts, STK_DT_GPC, 1, &v);
	assert_int_equal(v, 16);
	stk_data_get_at(t, ts, STK_DT_GPC_RATE, 1, &v);
	assert_int_equal(v, 5);
	stk_data_get_at(t, ts, STK_DT_GPC_RATE, 0, &v);
	assert_int_equal(v, 0);   /* the elements do not share their count */
	assert_int_equal(stk_data_get_at(t, ts, STK_DT_GPC_RATE, 2, &v), 0);
	/* gpc0, gpc1, gpc1_rate and gpt0 are the arrays' elements */
	assert_int_equal(stk_dt_locate(t, STK_DT_GPC1, &idx), STK_DT_GPC);
	assert_int_equal(idx, 1);
	assert_int_equal(stk_dt_locate(t, STK_DT_GPC1_RATE, &idx), STK_DT_GPC_RATE);
	assert_int_equal(idx, 1);
	assert_int_equal(stk_dt_locate(t, STK_DT_GPT0, &idx), STK_DT_GPT);
	assert_int_equal(idx, 0);
	assert_int_equal(stk_dt_locate(t, STK_DT_CONN_CNT, &idx), STK_DT_CONN_CNT);
	stk_dt_elem_name(STK_DT_GPC_RATE, 7, name, sizeof(name));
	assert_string_equal(name, "gpc7_rate");
	stk_dt_elem_name(STK_DT_HTTP_FAIL_CNT, 0, name, sizeof(name));
	assert_string_equal(name, "http_fail_cnt");

	/* each type's number on the peers protocol's wire is HAProxy's */
	assert_int_equal(stk_dt_wire(STK_DT_BYTES_OUT_RATE), 16);
	assert_int_equal(stk_dt_wire(STK_DT_GPC1), 17);
	assert_int_equal(stk_dt_wire(STK_DT_HTTP_FAIL_CNT), 20);
	assert_int_equal(stk_dt_wire(STK_DT_GPT), 22);
	assert_int_equal(stk_dt_wire(STK_DT_GPC_RATE), 24);
	stk_set_clock(NULL);
	proxy_free_all();
}

/* The stick-table line cut at every byte: an error or a table, never a crash. */
static void test_cut_every_byte(void **state)
{
	static const char text[] =
		"backend st\n  stick-table type string len 8 size 10k expire 5s nopurge "
		"store gpc0,conn_rate(10s),server_id,gpc_rate(4,2s),gpt(2)\n";

	(void)state;
	for (size_t cut = 0; cut <= sizeof(text) - 1; cut++) {
		proxy_free_all();
		cfg_parse_text("stk.cfg", text, cut);
	}
	proxy_free_all();
	assert_int_equal(cfg_parse_text("stk.cfg", text, sizeof(text) - 1), 0);
	assert_int_equal(cfg_postparse(), 0);
	assert_int_equal(stk_table_find("st")->size, 10240);
	assert_int_equal(stk_table_find("st")->expire, 5000);
	assert_int_equal(stk_table_find("st")->nb[STK_DT_GPC_RATE], 4);
	proxy_free_all();
	assert_null(stk_table_find("st"));
}

static void test_config_errors(void **state)
{
	static const char *const bad[] = {
		"backend st\n  stick-table type ip\n",
		"backend st\n  stick-table type ip size 0\n",
		"backend st\n  stick-table type ip len 4 size 1\n",
		"backend st\n  stick-table type ip size 1 peers\n",
		"backend st\n  stick-table type ip size 1 store conn_rate\n",
		"backend st\n  stick-table type ip size 1 store gpc0(1s)\n",
		"backend st\n  stick-table type ip size 1 store gpc0,gpc0\n",
		"backend st\n  stick-table type ip size 1 store gpc\n",
		"backend st\n  stick-table type ip size 1 store gpc(0)\n",
		"backend st\n  stick-table type ip size 1 store gpc(101)\n",
		"backend st\n  stick-table type ip size 1 store gpc(2,1s)\n",
		"backend st\n  stick-table type ip size 1 store gpc_rate(2)\n",
		"backend st\n  stick-table type ip size 1 store gpc_rate(10s)\n",
		"backend st\n  stick-table type ip size 1 store gpc_rate(2,1s,3)\n",
		"backend st\n  stick-table type ip size 1 store gpc(2\n",
		"backend st\n  stick-table type ip size 1 store gpc1(1)\n",
		"backend st\n  stick-table type ip size 1 store gpc(2),gpc1\n",
		"backend st\n  stick-table type ip size 1 store gpc0 store gpc(1)\n",
		"backend st\n  stick-table type ip size 1 store gpc_rate(2,1s),gpc0_rate(1s)\n",
		"backend st\n  stick-table type ip size 1 store gpt0,gpt(1)\n",
		"backend st\n  stick-table type ip size 1 store gpc0,,gpt0\n",
		"backend st\n  stick-table type ip size 1 expire\n",
		"backend st\n  stick-table type ip size 1\n  stick-table type ip size 1\n",
		"defaults\n  stick-table type ip size 1\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		proxy_free_all();
		assert_true(cfg_parse_text("stk.cfg", bad[i], strlen(bad[i])) > 0);
	}
	proxy_free_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_random),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_arrays),
		cmocka_unit_test(test_freq_period),
		cmocka_unit_test(test_freq_wait),
		cmocka_unit_test(test_cut_every_byte),
		cmocka_unit_test(test_config_errors),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	proxy_free_all();
	return r;
}
