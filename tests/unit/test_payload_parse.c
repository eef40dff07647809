/* Unit tests for the RDP cookie and distcc parsers (src/rules/payload_parse.c):
 * the answers HAProxy 2.6 gives on the same messages, and every message cut
 * at every byte (each prefix in a buffer of its own size, so that a read
 * past it is caught by ASan): a prefix asks for more bytes or gives the
 * whole message's answer, never another one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/payload_parse.h>

/* TPKT header and X.224 Connection Request, not checked by the parser */
#define RDP_HEAD "\x03\x00\x00\x2a\x25\xe0\x00\x00\x00\x00\x00"

struct rdp_case {
	const char *msg;     /* after RDP_HEAD */
	const char *name;    /* NULL: any */
	int         ret;
	const char *val;
};

static const struct rdp_case rdp_cases[] = {
	{ "Cookie: mstshash=alice\r\n\x01\x00\x08\x00", "mstshash", 1, "alice" },
	{ "Cookie: mstshash=alice\r\n", NULL, 1, "alice" },
	{ "Cookie: mstshash=alice\r\n", "MSTSHASH", 1, "alice" },
	{ "cookie: MSTSHASH=alice\r\n", "mstshash", 1, "alice" },
	{ "Cookie:  mstshash=bob\r\n", "mstshash", 1, "bob" },
	{ "Cookie: msts=3640205228.15629.0000\r\n", "msts", 1, "3640205228.15629.0000" },
	{ "Cookie: msts=3640205228.15629.0000\r\n", "mstshash", 0, NULL },
	{ "Cookie: mstshash=\r\n", "mstshash", 1, "" },
	{ "Cookie: mstshash=a b;c\r\n", "mstshash", 1, "a b;c" },
	{ "Cookie: mstshash=al\nice\r\n", "mstshash", 1, "al\nice" },
	{ "Cookie: mstshash\r\n", "mstshash", 0, NULL },
	{ "Cookie: mstshash\r\n", NULL, 0, NULL },
	{ "Cookie: mstshashx=alice\r\n", "mstshash", 0, NULL },
	{ "Cookie: mstshashx=alice\r\n", NULL, 1, "alice" },
	{ "Cookie: mstshash =alice\r\n", "mstshash", 0, NULL },
	{ "Cookie: =alice\r\n", NULL, 1, "alice" },
	{ "Cookie: mstshash=alice\rx\r\n", "mstshash", 0, NULL },
	{ "Cookie: foo=bar\r\nCookie: mstshash=alice\r\n", "mstshash", 0, NULL },
	{ "Cookie: foo=bar\r\nCookie: mstshash=alice\r\n", NULL, 1, "bar" },
	{ "\x01Cookie: mstshash=alice\r\n", "mstshash", 0, NULL },
	{ "Cookies: mstshash=alice\r\n", "mstshash", 0, NULL },
	{ "Cookie: mstshash=alice", "mstshash", -1, NULL },
	{ "Cookie: mstshash=alice\r", "mstshash", -1, NULL },
	{ "Cook", "mstshash", -1, NULL },
	{ "", NULL, -1, NULL },
};

/* Parses <len> bytes of <msg> copied alone to the heap. */
static int rdp_at(const char *msg, size_t len, const char *name, const uint8_t **v, size_t *vl,
                  uint8_t **copy)
{
	*copy = malloc(len ? len : 1);
	assert_non_null(*copy);
	memcpy(*copy, msg, len);
	return rdp_cookie_parse(*copy, len, name, name ? strlen(name) : 0, v, vl);
}

static void test_rdp_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rdp_cases) / sizeof(rdp_cases[0]); i++) {
		const struct rdp_case *c = &rdp_cases[i];
		char msg[256];
		size_t len = sizeof(RDP_HEAD) - 1 + strlen(c->msg);
		const uint8_t *v = NULL;
		size_t vl = 0;
		uint8_t *copy;
		int r;

		memcpy(msg, RDP_HEAD, sizeof(RDP_HEAD) - 1);
		memcpy(msg + sizeof(RDP_HEAD) - 1, c->msg, len - (sizeof(RDP_HEAD) - 1));
		r = rdp_at(msg, len, c->name, &v, &vl, &copy);
		if (r != c->ret)
			fail_msg("case %zu: %d, expected %d", i, r, c->ret);
		if (r == 1) {
			assert_int_equal(vl, strlen(c->val));
			assert_memory_equal(v, c->val, vl);
			assert_true(v >= copy && v + vl <= copy + len);
		}
		free(copy);
		/* every prefix: more bytes needed, or the same answer */
		for (size_t cut = 0; cut < len; cut++) {
			const uint8_t *pv = NULL;
			size_t pvl = 0;
			int pr = rdp_at(msg, cut, c->name, &pv, &pvl, &copy);

			if (pr != -1 && pr != r)
				fail_msg("case %zu cut at %zu: %d, the whole message %d", i, cut, pr, r);
			if (pr == 1)
				assert_true(pvl == vl && pv + pvl <= copy + cut);
			free(copy);
		}
	}
}

/* The header is at most 11 bytes long: less asks for more. */
static void test_rdp_short(void **state)
{
	const uint8_t *v;
	size_t vl;

	(void)state;
	assert_int_equal(rdp_cookie_parse((const uint8_t *)"\x03\x00\x00", 3, NULL, 0, &v, &vl), -1);
	assert_int_equal(rdp_cookie_parse((const uint8_t *)RDP_HEAD "X", 12, NULL, 0, &v, &vl), 0);
}

struct dcc_case {
	const char *msg;
	const char *tok;
	int         occ;
	int         ret;
	uint32_t    param;
	const char *body;   /* NULL: past the message */
};

static const char dcc_msg[] =
	"DIST00000001ARGC00000002ARGV00000003gccARGV00000002-cDOTI00000005hello";

static const struct dcc_case dcc_cases[] = {
	{ dcc_msg, "DIST", 0, 1, 1, "" },
	{ dcc_msg, "ARGC", 0, 1, 2, "" },
	{ dcc_msg, "ARGV", 0, 1, 3, "gcc" },
	{ dcc_msg, "ARGV", 1, 1, 3, "gcc" },
	{ dcc_msg, "ARGV", 2, 1, 2, "-c" },
	{ dcc_msg, "DOTI", 0, 1, 5, "hello" },
	{ dcc_msg, "ARGV", 3, -1, 0, NULL },
	{ dcc_msg, "DOTO", 0, -1, 0, NULL },
	/* unknown tokens have a body; STAT, NFIL, DONE do not */
	{ "DIST00000001ABCD00000003xyzEFGH00000001", "EFGH", 0, 1, 1, NULL },
	{ "DIST00000001ABCD00000003xyzEFGH00000000", "EFGH", 0, 1, 0, "" },
	{ "DIST00000001ABCD00000003xyzEFGH00000001", "ABCD", 0, 1, 3, "xyz" },
	{ "DIST00000001SERR00000003xyzEFGH00000001", "EFGH", 0, 1, 1, NULL },
	{ "DIST00000001STAT00000003xyzEFGH00000001", "EFGH", 0, 0, 0, NULL },
	{ "DIST00000001STAT00000003xyzEFGH00000001", "STAT", 0, 1, 3, "" },
	{ "DIST00000001NFIL00000003EFGH00000001", "EFGH", 0, 1, 1, NULL },
	{ "DIST00000001DONE00000003EFGH00000001", "EFGH", 0, 1, 1, NULL },
	{ "DIST00000001ARGC0000000AEFGH0000000a", "ARGC", 0, 1, 10, "" },
	{ "DIST00000001ARGC0000000AEFGH0000000a", "EFGH", 0, 1, 10, NULL },
	{ "DIST0000000gEFGH00000001", "EFGH", 0, 0, 0, NULL },
	{ "DIST0000000gEFGH00000001", "DIST", 0, 0, 0, NULL },
	{ "dist00000001ARGV00000003gcc", "DIST", 0, 0, 0, NULL },
	{ "DIST00000001DOTIfffffff0gcc", "DOTI", 0, 1, 0xfffffff0, NULL },
	{ "DIST00000001DOTIfffffff0gcc", "DOTO", 0, -1, 0, NULL },
	{ "DIST00000001ARGV00000000ARGV00000001x", "ARGV", 2, 1, 1, "x" },
	{ "DIST0000", "DIST", 0, -1, 0, NULL },
};

static int dcc_at(const char *msg, size_t len, const struct dcc_case *c, struct distcc_tok *t,
                  size_t *need)
{
	uint8_t *copy = malloc(len ? len : 1);
	int r;

	assert_non_null(copy);
	memcpy(copy, msg, len);
	r = distcc_find(copy, len, c->tok, c->occ, t, need);
	if (r == -1)
		assert_true(*need > len);
	free(copy);
	return r;
}

static void test_distcc_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(dcc_cases) / sizeof(dcc_cases[0]); i++) {
		const struct dcc_case *c = &dcc_cases[i];
		size_t len = strlen(c->msg), need = 0;
		struct distcc_tok t;
		int r = dcc_at(c->msg, len, c, &t, &need);

		if (r != c->ret)
			fail_msg("case %zu (%s): %d, expected %d", i, c->tok, r, c->ret);
		if (r == 1) {
			assert_int_equal(t.param, c->param);
			if (c->body) {
				assert_true(t.body + t.body_len <= len);
				assert_int_equal(t.body_len, strlen(c->body));
				assert_memory_equal(c->msg + t.body, c->body, t.body_len);
			} else {
				assert_true(t.body_len > len - t.body);   /* not all there */
			}
		}
		for (size_t cut = 0; cut < len; cut++) {
			struct distcc_tok pt;
			int pr = dcc_at(c->msg, cut, c, &pt, &need);

			if (pr != -1 && pr != r)
				fail_msg("case %zu cut at %zu: %d, the whole message %d", i, cut, pr, r);
			if (pr == 1)
				assert_true(pt.param == t.param && pt.body == t.body);
		}
	}
}

/* A body too large to skip asks for more than can ever come. */
static void test_distcc_huge(void **state)
{
	static const char m[] = "DOTIffffffffx";
	struct distcc_tok t;
	size_t need = 0;

	(void)state;
	assert_int_equal(distcc_find((const uint8_t *)m, sizeof(m) - 1, "DOTO", 0, &t, &need), -1);
	assert_true(need > 0xffffffffu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdp_cases),
		cmocka_unit_test(test_rdp_short),
		cmocka_unit_test(test_distcc_cases),
		cmocka_unit_test(test_distcc_huge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
