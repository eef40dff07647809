/* Unit tests for time/size/int parsing (src/core/units.c). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
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

static void test_time_bounds(void **state)
{
	const char *err = NULL;
	uint32_t ms = 12345;

	/* The largest accepted time is INT32_MAX milliseconds (~24.8 days). */
	assert_int_equal(parse_time_ms("2147483647", 1, &ms, &err), 0);
	assert_int_equal(ms, 2147483647u);
	assert_int_equal(parse_time_ms("2147483648", 1, &ms, &err), -1);
	assert_non_null(strstr(err, "too large"));
	assert_int_equal(parse_time_ms("24d", 1, &ms, &err), 0);
	assert_int_equal(ms, 24u * 86400000u);
	assert_int_equal(parse_time_ms("25d", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("2147483s", 1, &ms, &err), 0);
	assert_int_equal(parse_time_ms("2147484s", 1, &ms, &err), -1);
	/* Digits beyond 32 bits are refused before any multiplication. */
	assert_int_equal(parse_time_ms("4294967296us", 1, &ms, &err), -1);
	assert_non_null(strstr(err, "too large"));
	assert_int_equal(parse_time_ms("99999999999999999999999999", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("0", 1, &ms, &err), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(parse_time_ms("0s", 1, &ms, &err), 0);
	assert_int_equal(parse_time_ms("1us", 1, &ms, &err), 0);
	assert_int_equal(ms, 1); /* rounded up, never to 0 */
	assert_int_equal(parse_time_ms("1000us", 1, &ms, &err), 0);
	assert_int_equal(ms, 1);
	/* The default unit applies only without a suffix. */
	assert_int_equal(parse_time_ms("3", 1000, &ms, &err), 0);
	assert_int_equal(ms, 3000);
	assert_int_equal(parse_time_ms("3ms", 1000, &ms, &err), 0);
	assert_int_equal(ms, 3);
	/* Malformed: units are exact and case-sensitive, no blanks or signs. */
	assert_int_equal(parse_time_ms("5S", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("5 s", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("5sec", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("5ss", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms(" 5s", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("+5s", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("s", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms("1.5s", 1, &ms, &err), -1);
	assert_int_equal(parse_time_ms(NULL, 1, &ms, &err), -1);
}

static void test_size_bounds(void **state)
{
	const char *err = NULL;
	uint32_t v = 7;

	assert_int_equal(parse_size("0", &v, &err), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_size("4294967295", &v, &err), 0);
	assert_int_equal(v, UINT32_MAX);
	assert_int_equal(parse_size("4294967296", &v, &err), -1);
	assert_non_null(strstr(err, "too large"));
	assert_int_equal(parse_size("4194303k", &v, &err), 0);
	assert_int_equal(v, 4194303u * 1024u);
	assert_int_equal(parse_size("4194304k", &v, &err), -1);
	assert_int_equal(parse_size("4095m", &v, &err), 0);
	assert_int_equal(parse_size("4096m", &v, &err), -1);
	assert_int_equal(parse_size("3g", &v, &err), 0);
	assert_int_equal(v, 3u << 30);
	assert_int_equal(parse_size("16K", &v, &err), 0);
	assert_int_equal(v, 16384);
	assert_int_equal(parse_size("2M", &v, &err), 0);
	assert_int_equal(parse_size("1G", &v, &err), 0);
	assert_int_equal(parse_size("", &v, &err), -1);
	assert_int_equal(parse_size("k", &v, &err), -1);
	assert_int_equal(parse_size("-1", &v, &err), -1);
	assert_int_equal(parse_size("1kb", &v, &err), -1);
	assert_int_equal(parse_size(NULL, &v, &err), -1);
}

static void test_int_bounds(void **state)
{
	const char *err = NULL;
	long v = 99;

	/* Both bounds are inclusive. */
	assert_int_equal(parse_int("1", 1, 10, &v, &err), 0);
	assert_int_equal(v, 1);
	assert_int_equal(parse_int("10", 1, 10, &v, &err), 0);
	assert_int_equal(v, 10);
	v = 99;
	assert_int_equal(parse_int("0", 1, 10, &v, &err), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(v, 99); /* untouched on error */
	assert_int_equal(parse_int("11", 1, 10, &v, &err), -1);
	assert_int_equal(v, 99);
	assert_int_equal(parse_int("-5", -10, 10, &v, &err), 0);
	assert_int_equal(v, -5);
	assert_int_equal(parse_int("-11", -10, 10, &v, &err), -1);
	assert_int_equal(parse_int("0", 0, 0, &v, &err), 0);
	assert_int_equal(v, 0);
	/* The whole range of long, and overflow beyond it. */
	assert_int_equal(parse_int("9223372036854775807", LONG_MIN, LONG_MAX, &v, &err), 0);
	assert_true(v == LONG_MAX);
	assert_int_equal(parse_int("-9223372036854775808", LONG_MIN, LONG_MAX, &v, &err), 0);
	assert_true(v == LONG_MIN);
	assert_int_equal(parse_int("9223372036854775808", LONG_MIN, LONG_MAX, &v, &err), -1);
	assert_non_null(strstr(err, "expects an integer"));
	assert_int_equal(parse_int("-9223372036854775809", LONG_MIN, LONG_MAX, &v, &err), -1);
	assert_int_equal(parse_int("99999999999999999999999", 0, 10, &v, &err), -1);
	/* Not integers. */
	assert_int_equal(parse_int("", 0, 10, &v, &err), -1);
	assert_non_null(strstr(err, "expects an integer"));
	assert_int_equal(parse_int(NULL, 0, 10, &v, &err), -1);
	assert_int_equal(parse_int("12a", 0, 100, &v, &err), -1);
	assert_int_equal(parse_int("1.5", 0, 100, &v, &err), -1);
	assert_int_equal(parse_int("0x10", 0, 100, &v, &err), -1);
	assert_int_equal(parse_int("5 ", 0, 100, &v, &err), -1);
	assert_int_equal(parse_int("-", 0, 100, &v, &err), -1);
	/* Leading zeros are decimal, not octal. */
	assert_int_equal(parse_int("010", 0, 100, &v, &err), 0);
	assert_int_equal(v, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_units),
		cmocka_unit_test(test_size_units),
		cmocka_unit_test(test_time_bounds),
		cmocka_unit_test(test_size_bounds),
		cmocka_unit_test(test_int_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
