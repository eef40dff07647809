/* Unit tests of the URI normalisers (src/http/uri_norm.c): each normaliser
 * on the manual's examples and on hostile inputs (results compared with
 * HAProxy 2.6's on the same requests), every input cut at every byte, and
 * every output buffer too small by one byte or more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/uri_norm.h>

struct norm_case {
	enum uri_norm n;
	unsigned      flags;
	const char   *in;
	const char   *out;   /* NULL: URI_NORM_INVALID */
};

#define F  URI_NF_FULL
#define S  URI_NF_STRICT

static const struct norm_case cases[] = {
	/* fragment-encode */
	{ URI_N_FRAGMENT_ENCODE, 0, "/#foo", "/%23foo" },
	{ URI_N_FRAGMENT_ENCODE, 0, "/a#b#c?x", "/a%23b%23c?x" },
	{ URI_N_FRAGMENT_ENCODE, 0, "http://h/a#b", "http://h/a%23b" },
	{ URI_N_FRAGMENT_ENCODE, 0, "/plain", "/plain" },
	/* fragment-strip */
	{ URI_N_FRAGMENT_STRIP, 0, "/#foo", "/" },
	{ URI_N_FRAGMENT_STRIP, 0, "/a?b#c", "/a?b" },
	{ URI_N_FRAGMENT_STRIP, 0, "/a#b?c", "/a" },
	{ URI_N_FRAGMENT_STRIP, 0, "http://h#x", "http://h" },
	/* path-merge-slashes */
	{ URI_N_PATH_MERGE_SLASHES, 0, "//", "/" },
	{ URI_N_PATH_MERGE_SLASHES, 0, "/foo//bar", "/foo/bar" },
	{ URI_N_PATH_MERGE_SLASHES, 0, "///a///b//?x//y", "/a/b/?x//y" },
	{ URI_N_PATH_MERGE_SLASHES, 0, "http://h//a//b", "http://h/a/b" },
	{ URI_N_PATH_MERGE_SLASHES, 0, "*", "*" },
	/* path-strip-dot */
	{ URI_N_PATH_STRIP_DOT, 0, "/.", "/" },
	{ URI_N_PATH_STRIP_DOT, 0, "/./bar/", "/bar/" },
	{ URI_N_PATH_STRIP_DOT, 0, "/a/./a", "/a/a" },
	{ URI_N_PATH_STRIP_DOT, 0, "/.well-known/", "/.well-known/" },
	{ URI_N_PATH_STRIP_DOT, 0, "/a/.", "/a/" },
	{ URI_N_PATH_STRIP_DOT, 0, "/..", "/.." },
	{ URI_N_PATH_STRIP_DOT, 0, "/a/.?x/./y", "/a/?x/./y" },
	{ URI_N_PATH_STRIP_DOT, 0, "/.a/./.", "/.a/" },
	/* path-strip-dotdot */
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/foo/../", "/" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/foo/../bar/", "/bar/" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/foo/bar/../", "/foo/" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/../bar/", "/../bar/" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/bar/../../", "/../" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/foo//../", "/foo/" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/foo/%2E%2E/", "/foo/%2E%2E/" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/a/b/..", "/a/" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/..", "/../" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/../..", "/../../" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/a/../../b/../c", "/../c" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/a/./../b", "/a/b" },
	{ URI_N_PATH_STRIP_DOTDOT, 0, "/a/..?x/../y", "/?x/../y" },
	{ URI_N_PATH_STRIP_DOTDOT, F, "/../bar/", "/bar/" },
	{ URI_N_PATH_STRIP_DOTDOT, F, "/bar/../../", "/" },
	{ URI_N_PATH_STRIP_DOTDOT, F, "/..", "/" },
	{ URI_N_PATH_STRIP_DOTDOT, F, "/../../a/..", "/" },
	/* percent-decode-unreserved */
	{ URI_N_PERCENT_DECODE_UNRESERVED, 0, "/%61dmin", "/admin" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, 0, "/foo%3Fbar=baz", "/foo%3Fbar=baz" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, 0, "/%%36%36", "/%66" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, 0, "/%ZZ", "/%ZZ" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, 0, "/%7e%2D%5f%2e%30", "/~-_.0" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, 0, "/a?%61=%62", "/a?a=b" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, 0, "/%6", "/%6" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, S, "/%61dmin", "/admin" },
	{ URI_N_PERCENT_DECODE_UNRESERVED, S, "/%%36%36", NULL },
	{ URI_N_PERCENT_DECODE_UNRESERVED, S, "/%ZZ", NULL },
	{ URI_N_PERCENT_DECODE_UNRESERVED, S, "/a?%zz", NULL },
	/* percent-to-uppercase */
	{ URI_N_PERCENT_TO_UPPERCASE, 0, "/%6f", "/%6F" },
	{ URI_N_PERCENT_TO_UPPERCASE, 0, "/%zz", "/%zz" },
	{ URI_N_PERCENT_TO_UPPERCASE, 0, "/%6f%6F?%aa", "/%6F%6F?%AA" },
	{ URI_N_PERCENT_TO_UPPERCASE, 0, "/%a", "/%a" },
	{ URI_N_PERCENT_TO_UPPERCASE, S, "/%zz", NULL },
	{ URI_N_PERCENT_TO_UPPERCASE, S, "/%", NULL },
	/* query-sort-by-name */
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?c=3&a=1&b=2", "/?a=1&b=2&c=3" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?aaa=3&a=1&aa=2", "/?a=1&aa=2&aaa=3" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?a=3&b=4&a=1&b=5&a=2", "/?a=3&a=1&a=2&b=4&b=5" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?b=1&aa=2", "/?aa=2&b=1" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?&a&&b=", "/?&&a&b=" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?", "/?" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/p", "/p" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?B=1&a=1&_=2&1=x", "/?1=x&B=1&_=2&a=1" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?ab=1&a=2&a-=3&a=4", "/?a=2&a=4&a-=3&ab=1" },
	{ URI_N_QUERY_SORT_BY_NAME, 0, "/?x=1&a#f&b", "/?a&x=1#f&b" },
};

static void test_cases(void **state)
{
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct norm_case *c = &cases[i];
		long n = uri_normalize(c->n, c->flags, c->in, strlen(c->in), out, sizeof(out));

		if (!c->out) {
			if (n != URI_NORM_INVALID)
				fail_msg("%s %s: expected invalid, got %ld", uri_norm_name(c->n), c->in, n);
			continue;
		}
		if (n < 0 || (size_t)n != strlen(c->out) || memcmp(out, c->out, (size_t)n) != 0)
			fail_msg("%s%s %s: expected '%s', got '%.*s' (%ld)", uri_norm_name(c->n),
				 c->flags ? " +flag" : "", c->in, c->out, n < 0 ? 0 : (int)n, out, n);
	}
}

/* Inputs meant to break a normaliser: runs of separators, dangling '%',
 * many '&', long dot chains, bytes of every value. */
static const char *const hostile[] = {
	"/", "", "?", "#", "%", "%%", "%%%", "/%", "/%4", "/%%36%36", "//..//..//.//",
	"/../../../../../../../../../../../..", "/./././././././.", "/a/b/c/d/../../../../../..",
	"/?&&&&&&&&&&&&&&&&&&&&&&&&", "/?=&=&=&==&", "/?b=&a=&b&a", "http://", "http://h",
	"http://h?q", "http:/x", "h://a/..", "*", "/\x01\xff%\x80/..\x00?\x7f#\x00",
	"/a/..%2f../..;/./x?y=/../#/../", "///#?#?#", "/.../....//.../.",
};

/* <in> (<len> bytes) through every normaliser with and without its flag,
 * in outputs of every size up to the result's followed by guard bytes:
 * nothing is written past the size, and what is returned is the result a
 * large buffer gives, or "full" (always when the result is larger; a
 * buffer smaller than the input may also be too small for the work). */
static void check_bounded(const char *in, size_t len)
{
	static char big[4096], out[4096 + 16];

	for (int n = 0; n < URI_N_COUNT; n++) {
		for (unsigned flags = 0; flags < 2; flags++) {
			long ref = uri_normalize((enum uri_norm)n, flags, in, len, big, sizeof(big));

			assert_true(ref >= URI_NORM_INVALID && ref <= (long)sizeof(big));
			if (ref == URI_NORM_FULL)
				fail_msg("%s: %zu bytes do not fit 4 kB", uri_norm_name(n), len);
			/* every smaller buffer: the exact result, or "full", never more */
			for (size_t size = 0; ref >= 0 && size <= (size_t)ref + 1; size++) {
				long r;

				memset(out, 0x5a, sizeof(out));
				r = uri_normalize((enum uri_norm)n, flags, in, len, out, size);
				for (size_t g = size; g < size + 16; g++)
					assert_int_equal((unsigned char)out[g], 0x5a);
				if (size < (size_t)ref) {
					assert_int_equal(r, URI_NORM_FULL);
				} else if (r == URI_NORM_FULL) {
					/* a step of the work did not fit: only a
					 * buffer smaller than the input may say so */
					assert_true(size <= len);
				} else {
					assert_int_equal(r, ref);
					assert_memory_equal(out, big, (size_t)ref);
				}
			}
		}
	}
}

static void test_hostile_cut(void **state)
{
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		size_t len = strlen(hostile[i]);
		/* the input cut at every byte, in a buffer of exactly that size */
		for (size_t cut = 0; cut <= len; cut++) {
			char *b = malloc(cut ? cut : 1);

			memcpy(b, hostile[i], cut);
			check_bounded(b, cut);
			free(b);
		}
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].in);

		for (size_t cut = 0; cut <= len; cut++) {
			char *b = malloc(cut ? cut : 1);

			memcpy(b, cases[i].in, cut);
			check_bounded(b, cut);
			free(b);
		}
	}
}

/* Applying a path normaliser twice changes nothing more; the query sort
 * keeps every parameter; a big query sorts in order. */
static void test_properties(void **state)
{
	static const enum uri_norm idem[] = { URI_N_PATH_MERGE_SLASHES, URI_N_PATH_STRIP_DOT,
					      URI_N_PATH_STRIP_DOTDOT, URI_N_PERCENT_TO_UPPERCASE,
					      URI_N_FRAGMENT_STRIP, URI_N_QUERY_SORT_BY_NAME };
	char a[512], b[512], q[8192];
	size_t ql = 0;

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		for (size_t k = 0; k < sizeof(idem) / sizeof(idem[0]); k++) {
			long n1 = uri_normalize(idem[k], 0, hostile[i], strlen(hostile[i]), a, sizeof(a));
			long n2;

			assert_true(n1 >= 0);
			n2 = uri_normalize(idem[k], 0, a, (size_t)n1, b, sizeof(b));
			assert_int_equal(n2, n1);
			assert_memory_equal(a, b, (size_t)n1);
		}
	}
	/* 500 parameters in reverse order */
	ql += (size_t)snprintf(q, sizeof(q), "/?");
	for (int i = 499; i >= 0; i--)
		ql += (size_t)snprintf(q + ql, sizeof(q) - ql, "%sp%03d=%d", i == 499 ? "" : "&", i, i);
	{
		static char out[8192];
		long n = uri_normalize(URI_N_QUERY_SORT_BY_NAME, 0, q, ql, out, sizeof(out));

		assert_int_equal(n, (long)ql);
		assert_memory_equal(out, "/?p000=0&p001=1&p002=2", 22);
		assert_memory_equal(out + n - 9, "&p499=499", 9);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_hostile_cut),
		cmocka_unit_test(test_properties),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
