/* Unit tests for time/size/int parsing (src/core/units.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sluice/units.h>

static void test_time_units(void **state)
{
	const char *err;
	uint32_t ms;

	assert_int_equal(parse_time_ms("5s", 1, &ms, &err), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(parse_time_ms("100", 1, &ms, &err), 0);
	assert_int_equal(ms, 100);
	assert_int_equal(parse_time_ms("1500us", 1, &ms, &err), 0);
	assert_int_equal(ms, 2); /* rounded up */
	assert_int_equal(parse_time_ms("2m", 1, &ms, &err), 0);
	assert_int_equal(ms, 120000);
	assert_int_equal(parse_time_ms("1h", 1, &ms, &err), 0);
	assert_int_equal(ms, 3600000);
	assert_int_equal(parse_time_ms("1d", 1, &ms, &err), 0);
	assert_int_equal(ms, 86400000);
	assert_int_equal(parse_time_ms("5x", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("-1s", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("30d", 1, &ms, &err), -1); /* > 24.8 days */
}

static void test_size_units(void **state)
{
	const char *err;
	uint32_t v;

	assert_int_equal(parse_size("16k", &v, &err), 0);
	assert_int_equal(v, 16384);
	assert_int_equal(parse_size("1m", &v, &err), 0);
	assert_int_equal(v, 1 << 20);
	assert_int_equal(parse_size("1g", &v, &err), 0);
	assert_int_equal(v, 1 << 30);
	assert_int_equal(parse_size("4g", &v, &err), -1);
	assert_int_equal(parse_size("12q", &v, &err), -1);
	assert_int_equal(parse_size("12kk", &v, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_units),
		cmocka_unit_test(test_size_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
