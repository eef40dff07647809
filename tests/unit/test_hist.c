/* Unit tests for the latency histograms (src/core/hist.c): bucket choice,
 * and percentiles of known distributions within the documented error (the
 * estimate stays in the true quantile's bucket). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/hist.h>

static void test_hist_buckets(void **state)
{
	assert_int_equal(hist_bucket(0), 0);
	assert_int_equal(hist_bucket(1000), 0);      /* bounds are inclusive (le) */
	assert_int_equal(hist_bucket(1001), 1);
	assert_int_equal(hist_bucket(2000), 1);
	assert_int_equal(hist_bucket(4999), 2);
	assert_int_equal(hist_bucket(200000), 7);    /* 200 ms */
	assert_int_equal(hist_bucket(200001), 8);
	assert_int_equal(hist_bucket(100000000), HIST_NB_BOUNDS - 1);
	assert_int_equal(hist_bucket(100000001), HIST_NB_BOUNDS);   /* +Inf */
	assert_int_equal(hist_bucket(UINT64_MAX), HIST_NB_BOUNDS);
	assert_true(hist_bound_us(0) == 1000);
	assert_true(hist_bound_us(HIST_NB_BOUNDS - 1) == 100000000);
	assert_true(hist_bound_us(HIST_NB_BOUNDS) == UINT64_MAX);
	for (int i = 1; i < HIST_NB_BOUNDS; i++)
		assert_true(hist_bound_us(i) > hist_bound_us(i - 1));
	assert_string_equal(hist_kind_name(HIST_RESPONSE), "response");
}

static void test_hist_add(void **state)
{
	struct hist h;

	memset(&h, 0, sizeof(h));
	assert_true(hist_quantile_us(&h, 0.5) == 0);   /* empty */
	hist_add(&h, 500);
	hist_add(&h, 1500);
	hist_add(&h, 250000);
	hist_add(&h, 200000000);
	assert_true(h.count == 4);
	assert_true(h.sum_us == 500 + 1500 + 250000 + 200000000ULL);
	assert_true(h.cnt[0] == 1 && h.cnt[1] == 1 && h.cnt[8] == 1 && h.cnt[HIST_NB_BOUNDS] == 1);
	/* the maximum is in +Inf: reported as the last finite bound */
	assert_true(hist_quantile_us(&h, 1.0) == 100000000);
}

/* Uniform 1..100 ms, 1 ms apart: exact p50 = 50 ms, p90 = 90 ms, p99 = 99 ms. */
static void test_hist_uniform(void **state)
{
	struct hist h;
	uint64_t p50, p90, p99;

	memset(&h, 0, sizeof(h));
	for (int ms = 1; ms <= 100; ms++)
		hist_add(&h, (uint64_t)ms * 1000);
	p50 = hist_quantile_us(&h, 0.5);
	p90 = hist_quantile_us(&h, 0.9);
	p99 = hist_quantile_us(&h, 0.99);
	/* same bucket as the truth */
	assert_int_equal(hist_bucket(p50), hist_bucket(50000));
	assert_int_equal(hist_bucket(p90), hist_bucket(90000));
	assert_int_equal(hist_bucket(p99), hist_bucket(99000));
	/* uniform inside a bucket: interpolation is close (within 1 ms) */
	assert_in_range(p50, 49000, 51000);
	assert_in_range(p90, 89000, 91000);
	assert_in_range(p99, 98000, 100000);
	assert_true(p50 <= p90 && p90 <= p99);
}

/* A constant latency: every percentile is in its bucket (150 ms: 100-200). */
static void test_hist_constant(void **state)
{
	struct hist h;

	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 1000; i++)
		hist_add(&h, 150000);
	assert_in_range(hist_quantile_us(&h, 0.5), 100001, 200000);
	assert_in_range(hist_quantile_us(&h, 0.99), 100001, 200000);
	assert_true(hist_quantile_us(&h, 0.5) <= hist_quantile_us(&h, 0.99));
}

/* Bimodal: 90% at 3 ms, 10% at 700 ms. p50 in 2-5 ms, p99 in 500-1000 ms,
 * and p90 on the last fast sample (rank 900 is the last of the 3 ms ones). */
static void test_hist_bimodal(void **state)
{
	struct hist h;

	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 900; i++)
		hist_add(&h, 3000);
	for (int i = 0; i < 100; i++)
		hist_add(&h, 700000);
	assert_int_equal(hist_bucket(hist_quantile_us(&h, 0.5)), hist_bucket(3000));
	assert_int_equal(hist_bucket(hist_quantile_us(&h, 0.9)), hist_bucket(3000));
	assert_int_equal(hist_bucket(hist_quantile_us(&h, 0.91)), hist_bucket(700000));
	assert_int_equal(hist_bucket(hist_quantile_us(&h, 0.99)), hist_bucket(700000));
	/* rank 990 is the 90th of 100 in 500-1000 ms: 500 + 0.9 * 500 */
	assert_true(hist_quantile_us(&h, 0.99) == 950000);
}

/* Powers of two from 1 us to ~1 s: every sample's own quantile estimate
 * lies in that sample's bucket. */
static void test_hist_every_rank(void **state)
{
	struct hist h;
	uint64_t v[21];

	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 21; i++) {
		v[i] = (uint64_t)1 << i;
		hist_add(&h, v[i]);
	}
	for (int i = 0; i < 21; i++) {
		double q = ((double)i + 0.5) / 21.0;   /* rank i + 1 */

		assert_int_equal(hist_bucket(hist_quantile_us(&h, q)), hist_bucket(v[i]));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_hist_add),
		cmocka_unit_test(test_hist_uniform),
		cmocka_unit_test(test_hist_constant),
		cmocka_unit_test(test_hist_bimodal),
		cmocka_unit_test(test_hist_every_rank),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
