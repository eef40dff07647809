/* Unit tests for `-cc` / `.if` condition expressions (src/cfg/ccexpr.c):
 * functions, operators and precedence, errors with their positions, and
 * every prefix of valid expressions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/ccexpr.h>
#include <sluice/common.h>

static const char *err;
static size_t errpos;

static int ev(const char *expr)
{
	err = NULL;
	errpos = (size_t)-1;
	return cc_eval(expr, &err, &errpos);
}

#define TRUE_(e)  do { int r_ = ev(e); if (r_ != 1) fail_msg("'%s': expected 1, got %d (%s)", e, r_, r_ < 0 ? err : ""); } while (0)
#define FALSE_(e) do { int r_ = ev(e); if (r_ != 0) fail_msg("'%s': expected 0, got %d (%s)", e, r_, r_ < 0 ? err : ""); } while (0)

/* Asserts that <expr> fails at <pos> with a message containing <what>. */
static void check_error(const char *expr, size_t pos, const char *what)
{
	int r = ev(expr);

	if (r != -1)
		fail_msg("'%s': expected an error, got %d", expr, r);
	assert_non_null(err);
	if (!strstr(err, what))
		fail_msg("'%s': message '%s' does not mention '%s'", expr, err, what);
	if (errpos != pos)
		fail_msg("'%s': error at %zu, expected %zu (%s)", expr, errpos, pos, err);
}

static void test_version_functions(void **state)
{
	/* The configuration language level is SLUICE_CFG_LEVEL ("2.6"). */
	assert_string_equal(SLUICE_CFG_LEVEL, "2.6");
	TRUE_("version_atleast(2.4)");
	TRUE_("version_atleast(2.6)");
	TRUE_("version_atleast(2.5.99)");
	TRUE_("version_atleast(1)");
	FALSE_("version_atleast(2.7)");
	FALSE_("version_atleast(2.6.1)");
	FALSE_("version_atleast(2.10)");
	TRUE_("version_before(3.0)");
	TRUE_("version_before(2.10)");
	TRUE_("version_before(2.6.1)");
	FALSE_("version_before(2.6)");
	FALSE_("version_before(2.4)");
	/* Quotes and spaces around arguments. */
	TRUE_("version_atleast( \"2.4\" )");
	TRUE_("version_atleast('2.4')");
}

static void test_version_cmp(void **state)
{
	assert_true(cc_version_cmp("2.10", "2.9") > 0);
	assert_true(cc_version_cmp("2.9", "2.10") < 0);
	assert_true(cc_version_cmp("2.6", "2.4.18") > 0);
	assert_true(cc_version_cmp("2.4.18", "2.4.2") > 0);
	assert_int_equal(cc_version_cmp("2.4", "2.4.0"), 0);
	assert_int_equal(cc_version_cmp("2.4.0.0", "2.4"), 0);
	assert_int_equal(cc_version_cmp("2.6", "2.6"), 0);
	assert_true(cc_version_cmp("3", "2.99.99") > 0);
	assert_true(cc_version_cmp("2.10-dev1", "2.9") > 0);
	assert_true(cc_version_cmp("2.10-dev1", "2.11") < 0);
	assert_true(cc_version_cmp("", "0.1") < 0);
	assert_int_equal(cc_version_cmp("", ""), 0);
}

static void test_feature(void **state)
{
	TRUE_("feature(LINUX_SPLICE)");
	FALSE_("feature(NOPE)");
	FALSE_("feature(linux_splice)"); /* names are case-sensitive */
#ifdef USE_OPENSSL
	TRUE_("feature(OPENSSL)");
#else
	FALSE_("feature(OPENSSL)");
#endif
#ifdef USE_LUA
	TRUE_("feature(LUA)");
#else
	FALSE_("feature(LUA)");
#endif
#ifdef USE_ZLIB
	TRUE_("feature(ZLIB)");
#else
	FALSE_("feature(ZLIB)");
#endif
}

static void test_defined(void **state)
{
	setenv("SLUICE_T_CC", "x", 1);
	TRUE_("defined(SLUICE_T_CC)");
	setenv("SLUICE_T_CC", "", 1);
	TRUE_("defined(SLUICE_T_CC)"); /* set, even if empty */
	unsetenv("SLUICE_T_CC");
	FALSE_("defined(SLUICE_T_CC)");
	TRUE_("!defined(SLUICE_T_CC)");
}

static void test_streq(void **state)
{
	TRUE_("streq(a,a)");
	FALSE_("streq(a,b)");
	TRUE_("strneq(a,b)");
	FALSE_("strneq(a,a)");
	TRUE_("streq( a , a )");  /* surrounding blanks are not part of it */
	TRUE_("streq(\"a b\",'a b')");
	TRUE_("streq(\"x,y)\",\"x,y)\")"); /* quotes protect ',' and ')' */
	FALSE_("streq(a,)");
	TRUE_("streq(,)");
	FALSE_("streq(abc,ab)");
}

static void test_operators(void **state)
{
	TRUE_("!0");
	FALSE_("!1");
	TRUE_("!!1");
	TRUE_("1 && 1");
	FALSE_("1 && 0");
	TRUE_("0 || 1");
	FALSE_("0 || 0");
	/* && binds tighter than ||: left to right would give 0. */
	TRUE_("1 || 0 && 0");
	TRUE_("0 && 1 || 1");
	FALSE_("0 && (1 || 1)");
	FALSE_("(1 || 0) && 0");
	TRUE_("!1 || 1");
	FALSE_("!(1 || 0)");
	TRUE_("1&&1&&1&&1");
	FALSE_("1&&1&&0&&1");
	TRUE_("0||0||0||1");
	TRUE_("((((1))))");
	TRUE_(" \t( 1 )\t ");
	TRUE_("feature(LINUX_SPLICE) && version_atleast(2.4) && !feature(NOPE)");
	TRUE_("streq(a,b) || strneq(a,b)");
}

static void test_empty(void **state)
{
	/* An empty condition is false, as in HAProxy. */
	FALSE_("");
	FALSE_("   ");
	FALSE_(" \t ");
	/* But an empty operand is an error. */
	check_error("()", 1, "expects a term");
	check_error("!", 1, "expects a term");
	check_error("1 || ", 5, "expects a term");
}

static void test_numbers(void **state)
{
	FALSE_("0");
	TRUE_("1");
	TRUE_("42");
	TRUE_("007");
	FALSE_("000");
	TRUE_("99999999999999999999999");
}

/* A call without argument counts as one empty argument, so the arity check
 * never catches it.
 * BUG (src/cfg/ccexpr.c, cc_call): "version_atleast()" evaluates to 1 (the
 * empty version compares as 0.0), "feature()" and "defined()" to 0, instead
 * of failing with "wrong number of arguments" as HAProxy does. */
static void test_empty_call(void **state)
{
	check_error("version_atleast()", 17, "wrong number of arguments");
	check_error("feature()", 9, "wrong number of arguments");
}

static void test_errors(void **state)
{
	check_error("nope(1)", 0, "unknown function");
	check_error("1 && nope(1)", 5, "unknown function");
	check_error("version_atleast(2.4", 19, "missing ')'");
	check_error("streq(a,b", 9, "missing ')'");
	check_error("(1", 2, "missing ')'");
	check_error("(1 || (0)", 9, "missing ')'");
	check_error("1 x", 2, "unexpected text");
	check_error("1)", 1, "unexpected text");
	check_error("1 & 1", 2, "unexpected text");
	check_error("1 &&", 4, "expects a term");
	check_error("&& 1", 0, "expects a term");
	check_error("!", 1, "expects a term");
	check_error("abc", 0, "unknown term");
	check_error("1 || 2.4", 5, "unknown term");
	check_error("streq(a)", 8, "wrong number of arguments");
	check_error("feature(A,B)", 12, "wrong number of arguments");
	check_error("streq(a,b,c,d,e)", 14, "too many arguments");
	check_error("streq(\"a,b)", 11, "unterminated quote");
	assert_int_equal(ev("defined(A) ||"), -1);
}

static void test_long_argument(void **state)
{
	char expr[400];

	memset(expr, 'x', sizeof(expr));
	memcpy(expr, "streq(", 6);
	memcpy(expr + sizeof(expr) - 4, ",a)", 4);
	assert_int_equal(ev(expr), -1);
	assert_non_null(strstr(err, "too long"));
	assert_true(errpos < sizeof(expr));
}

static char *repeat_wrap(const char *open, int n, const char *mid, const char *close)
{
	size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
	char *s = malloc(n * (lo + lc) + lm + 1), *p = s;

	assert_non_null(s);
	for (int i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	memcpy(p, mid, lm);
	p += lm;
	for (int i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

static void test_deep_nesting(void **state)
{
	char *s;

	/* Reasonable nesting works... */
	s = repeat_wrap("(", 30, "1", ")");
	TRUE_(s);
	free(s);
	s = repeat_wrap("!", 30, "1", "");
	TRUE_(s); /* even number of '!' */
	free(s);
	/* ...deep nesting is an error, not a stack overflow. */
	s = repeat_wrap("(", 100, "1", ")");
	assert_int_equal(ev(s), -1);
	assert_non_null(strstr(err, "nested too deeply"));
	assert_true(errpos < strlen(s));
	free(s);
	s = repeat_wrap("(", 100, "", "");
	assert_int_equal(ev(s), -1);
	assert_non_null(strstr(err, "nested too deeply"));
	free(s);
	s = repeat_wrap("!", 1000, "1", "");
	assert_int_equal(ev(s), -1);
	free(s);
	s = repeat_wrap("!(", 100000, "1", ")");
	assert_int_equal(ev(s), -1);
	free(s);
	/* Long flat chains are not nesting. */
	s = repeat_wrap("1 && ", 1000, "1", "");
	TRUE_(s);
	free(s);
}

/* Every prefix of valid expressions as an exactly-sized heap string. */
static void test_cut_at_every_byte(void **state)
{
	static const char *const exprs[] = {
		"version_atleast(2.4) && !feature(NOPE)",
		"(defined(HOME) || streq(\"a b\",'a b')) && strneq(x, y)",
		"!!(1 || 0 && 0)",
		"version_before( 3.0 ) || version_atleast(\"2.10-dev1\")",
		"feature(LINUX_SPLICE)&&feature(OPENSSL)||0",
		"streq('x,)',\"x,)\")",
	};

	for (size_t t = 0; t < sizeof(exprs) / sizeof(exprs[0]); t++) {
		size_t len = strlen(exprs[t]);

		assert_true(ev(exprs[t]) >= 0);
		for (size_t cut = 0; cut <= len; cut++) {
			char *s = malloc(cut + 1);
			int r;

			assert_non_null(s);
			memcpy(s, exprs[t], cut);
			s[cut] = '\0';
			r = ev(s);
			assert_true(r >= -1 && r <= 1);
			if (r == -1) {
				assert_non_null(err);
				if (errpos > cut)
					fail_msg("'%s': error position %zu past the end", s, errpos);
			}
			free(s);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_functions),
		cmocka_unit_test(test_version_cmp),
		cmocka_unit_test(test_feature),
		cmocka_unit_test(test_defined),
		cmocka_unit_test(test_streq),
		cmocka_unit_test(test_operators),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_empty_call),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_argument),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_cut_at_every_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
