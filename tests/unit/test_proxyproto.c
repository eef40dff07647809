/* Unit tests for the PROXY protocol parser and builder (src/net/proxyproto.c):
 * valid v1/v2 headers, every prefix needing more bytes, and rejections. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/addr.h>
#include <sluice/proxyproto.h>

struct row {
	const char *name;
	const char *data;
	size_t      len;
	int         ret;     /* > 0: header length; -1 invalid */
	int         local;
	const char *src;     /* "ip:port" expected for non-local */
	const char *dst;
};

#define R(n, d, r, l, s, t) { n, d, sizeof(d) - 1, r, l, s, t }

static const struct row rows[] = {
	R("v1_tcp4", "PROXY TCP4 1.2.3.4 5.6.7.8 1111 80\r\nGET", 36, 0, "1.2.3.4:1111", "5.6.7.8:80"),
	R("v1_tcp6", "PROXY TCP6 ::1 2001:db8::2 5 6\r\n", 32, 0, "[::1]:5", "[2001:db8::2]:6"),
	R("v1_unknown", "PROXY UNKNOWN whatever is here\r\nX", 32, 1, NULL, NULL),
	R("v1_unknown_bare", "PROXY UNKNOWN\r\n", 15, 1, NULL, NULL),
	R("v1_bad_proto", "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", -1, 0, NULL, NULL),
	R("v1_lf_only", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", -1, 0, NULL, NULL),
	R("v1_bad_ip", "PROXY TCP4 1.2.3.999 5.6.7.8 1 2\r\n", -1, 0, NULL, NULL),
	R("v1_v6_in_tcp4", "PROXY TCP4 ::1 ::2 1 2\r\n", -1, 0, NULL, NULL),
	R("v1_bad_port", "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", -1, 0, NULL, NULL),
	R("v1_leading_zero", "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n", -1, 0, NULL, NULL),
	R("v1_extra_field", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", -1, 0, NULL, NULL),
	R("v1_double_space", "PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n", -1, 0, NULL, NULL),
	R("v1_too_long", "PROXY TCP4 111111111111111111111111111111111111111111111111111111111111"
	  "1111111111111111111111111111111111111111111111111111", -1, 0, NULL, NULL),
	R("not_proxy", "GET / HTTP/1.1\r\n\r\n", -1, 0, NULL, NULL),
	R("v2_tcp4", "\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x0c\x0a\x01\x02\x03\xc0\xa8\x00\x01\x10\x92\x01\xbb",
	  28, 0, "10.1.2.3:4242", "192.168.0.1:443"),
	R("v2_tcp4_tlv", "\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x10\x0a\x01\x02\x03\xc0\xa8\x00\x01\x10\x92"
	  "\x01\xbb\x04\x00\x01\x00Z", 32, 0, "10.1.2.3:4242", "192.168.0.1:443"),
	R("v2_local", "\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00", 16, 1, NULL, NULL),
	R("v2_bad_version", "\r\n\r\n\0\r\nQUIT\n\x11\x11\x00\x0c", -1, 0, NULL, NULL),
	R("v2_bad_command", "\r\n\r\n\0\r\nQUIT\n\x22\x11\x00\x00", -1, 0, NULL, NULL),
	R("v2_short_block", "\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x04\x01\x02\x03\x04", -1, 0, NULL, NULL),
};

static void check_row(const struct row *r)
{
	struct sockaddr_storage src, dst;
	char a[64];
	const char *err = NULL;
	int local = -1;

	/* Exactly sized copies, so ASan sees any overread; every prefix first. */
	for (size_t cut = 0; cut <= r->len; cut++) {
		char *b = malloc(cut ? cut : 1);
		int ret;

		memcpy(b, r->data, cut);
		ret = pp_parse(b, cut, &src, &dst, &local, &err);
		free(b);
		if (cut < r->len && ret == 0)
			continue;
		if (ret == -1 && r->ret == -1)
			return;          /* rejected, possibly before the end: fine */
		if (cut < r->len && ret > 0 && ret <= (int)cut)
			break;           /* complete before the end (trailing data) */
		if (cut < r->len)
			fail_msg("%s: prefix %zu gave %d", r->name, cut, ret);
		assert_int_equal(ret, r->ret);
	}
	if (r->ret < 0)
		fail_msg("%s: accepted", r->name);
	assert_int_equal(local, r->local);
	if (!r->local) {
		assert_string_equal(addr_to_str(&src, a, sizeof(a)), r->src);
		assert_string_equal(addr_to_str(&dst, a, sizeof(a)), r->dst);
	}
}

static void test_rows(void **state)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
}

static void round_trip(int version, const char *s, const char *d)
{
	struct sockaddr_storage src, dst, s2, d2;
	struct addr_spec as;
	char out[256], a[64], *err = NULL;
	const char *perr;
	int local;
	size_t n;

	assert_int_equal(addr_parse(s, &as, 0, &err), 0);
	src = as.ss;
	assert_int_equal(addr_parse(d, &as, 0, &err), 0);
	dst = as.ss;
	n = pp_build(version, &src, &dst, out, sizeof(out));
	assert_int_equal(pp_parse(out, n, &s2, &d2, &local, &perr), (int)n);
	assert_int_equal(local, 0);
	assert_string_equal(addr_to_str(&s2, a, sizeof(a)), s);
	assert_string_equal(addr_to_str(&d2, a, sizeof(a)), d);
}

static void test_build_round_trips(void **state)
{
	round_trip(1, "1.2.3.4:1111", "5.6.7.8:80");
	round_trip(2, "1.2.3.4:1111", "5.6.7.8:80");
	round_trip(1, "[2001:db8::1]:5", "[::1]:443");
	round_trip(2, "[2001:db8::1]:5", "[::1]:443");
}

/* The TLVs of a v2 header built with them are found after the addresses,
 * and the error codes of refused headers are HAProxy's. */
static void test_tlv_find(void **state)
{
	struct sockaddr_storage src = { 0 }, dst = { 0 }, s2, d2;
	const struct pp_tlv tlv[] = {
		{ PP2_TYPE_AUTHORITY, 11, "example.com" },
		{ PP2_TYPE_UNIQUE_ID, 3, "u-1" },
	};
	const unsigned char *v;
	const char *err = NULL;
	char out[256];
	size_t n, vl;
	int local;

	(void)state;
	src.ss_family = dst.ss_family = AF_INET;
	n = pp_build_v2(PP_V2_PROXY, &src, &dst, tlv, 2, 1, out, sizeof(out));
	assert_int_equal(pp_parse(out, n, &s2, &d2, &local, &err), (int)n);
	assert_int_equal(pp_v2_tlv_find((unsigned char *)out, n, PP2_TYPE_UNIQUE_ID, &v, &vl), 1);
	assert_int_equal(vl, 3);
	assert_memory_equal(v, "u-1", 3);
	assert_int_equal(pp_v2_tlv_find((unsigned char *)out, n, PP2_TYPE_AUTHORITY, &v, &vl), 1);
	assert_memory_equal(v, "example.com", 11);
	assert_int_equal(pp_v2_tlv_find((unsigned char *)out, n, PP2_TYPE_ALPN, &v, &vl), 0);
	/* a TLV running past the header is not given */
	assert_int_equal(pp_v2_tlv_find((unsigned char *)out, n - 8, PP2_TYPE_UNIQUE_ID, &v, &vl), 0);
	assert_int_equal(pp_v2_tlv_find((const unsigned char *)"PROXY TCP4 1.2.3.4 1.2.3.4 1 2\r\n",
					31, PP2_TYPE_AUTHORITY, &v, &vl), 0);
	assert_int_equal(pp_parse("GET / HTTP/1.0\r\n", 16, &s2, &d2, &local, &err), -1);
	assert_int_equal(pp_err_code(err), 15);
	assert_int_equal(pp_parse("PROXY UDP4 a b 1 2\r\n", 20, &s2, &d2, &local, &err), -1);
	assert_int_equal(pp_err_code(err), 17);
	assert_int_equal(pp_parse("PROXY TCP4 a\r\n", 14, &s2, &d2, &local, &err), -1);
	assert_int_equal(pp_err_code(err), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_build_round_trips),
		cmocka_unit_test(test_tlv_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
