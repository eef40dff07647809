/* Unit tests for the TLS ClientHello parser (src/rules/tls_hello.c): a real
 * hello (SNI www.example.com, ALPN h2,http/1.1) parsed whole, cut at every
 * byte, and with every byte altered, never reading out of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/tls_hello.h>

/* captured from "openssl s_client -servername www.example.com -alpn
 * h2,http/1.1 -tls1_2" */
static const uint8_t hello[] = {
	0x16, 0x03, 0x01, 0x00, 0xe1, 0x01, 0x00, 0x00, 0xdd, 0x03, 0x03, 0xd6,
	0x59, 0xec, 0xac, 0xd2, 0xe0, 0x4f, 0x12, 0xa5, 0xc9, 0x0d, 0xb8, 0x58,
	0xc4, 0x73, 0x07, 0x9a, 0x07, 0xe7, 0xcd, 0x78, 0xc2, 0xa6, 0xcb, 0x7b,
	0xb5, 0x4b, 0x3e, 0xab, 0x6d, 0x53, 0x70, 0x00, 0x00, 0x38, 0xc0, 0x2c,
	0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa, 0xc0, 0x2b,
	0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b, 0xc0, 0x23,
	0xc0, 0x27, 0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39, 0xc0, 0x09,
	0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d, 0x00, 0x9c, 0x00, 0x3d, 0x00, 0x3c,
	0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0x7c, 0x00, 0x00,
	0x00, 0x14, 0x00, 0x12, 0x00, 0x00, 0x0f, 0x77, 0x77, 0x77, 0x2e, 0x65,
	0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2e, 0x63, 0x6f, 0x6d, 0x00, 0x0b,
	0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x0c, 0x00, 0x0a,
	0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18, 0x00, 0x23,
	0x00, 0x00, 0x00, 0x10, 0x00, 0x0e, 0x00, 0x0c, 0x02, 0x68, 0x32, 0x08,
	0x68, 0x74, 0x74, 0x70, 0x2f, 0x31, 0x2e, 0x31, 0x00, 0x16, 0x00, 0x00,
	0x00, 0x17, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x2a, 0x00, 0x28, 0x04, 0x03,
	0x05, 0x03, 0x06, 0x03, 0x08, 0x07, 0x08, 0x08, 0x08, 0x09, 0x08, 0x0a,
	0x08, 0x0b, 0x08, 0x04, 0x08, 0x05, 0x08, 0x06, 0x04, 0x01, 0x05, 0x01,
	0x06, 0x01, 0x03, 0x03, 0x03, 0x01, 0x03, 0x02, 0x04, 0x02, 0x05, 0x02,
	0x06, 0x02,
};

static void test_whole(void **state)
{
	struct tls_hello h;

	assert_int_equal(tls_hello_parse(hello, sizeof(hello), &h), (int)sizeof(hello));
	assert_int_equal(h.rec_ver, 0x0301);
	assert_int_equal(h.hello_ver, 0x0303);
	assert_non_null(h.sni);
	assert_int_equal(h.sni_len, 15);
	assert_memory_equal(h.sni, "www.example.com", 15);
	assert_non_null(h.alpn);
	assert_int_equal(h.alpn_len, 12);
	assert_memory_equal(h.alpn, "\x02h2\x08http/1.1", 12);
	/* supported groups (10), an empty session ticket extension (35) */
	assert_int_equal(h.ec_ext, 1);
	assert_int_equal(h.st_ext, 1);
	assert_int_equal(tls_hello_type(hello, sizeof(hello)), 1);
	assert_int_equal(tls_hello_type(hello, sizeof(hello) - 1), 0);
	assert_int_equal(tls_hello_type((const uint8_t *)"GET /", 5), -1);
}

/* A ClientHello holding a ticket, no groups; a ServerHello's type. */
static void test_ticket_and_types(void **state)
{
	uint8_t p[sizeof(hello)];
	static const uint8_t server_hello[] = { 0x16, 0x03, 0x03, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00 };
	struct tls_hello h;
	size_t groups;

	/* turn the supported_groups extension (00 0a) into an unknown one */
	memcpy(p, hello, sizeof(hello));
	for (groups = 0; groups + 4 < sizeof(p); groups++)
		if (p[groups] == 0x00 && p[groups + 1] == 0x0a && p[groups + 2] == 0x00 &&
		    p[groups + 3] == 0x0c)
			break;
	assert_true(groups + 4 < sizeof(p));
	p[groups + 1] = 0x7a;
	assert_int_equal(tls_hello_parse(p, sizeof(p), &h), (int)sizeof(p));
	assert_int_equal(h.ec_ext, 0);
	assert_int_equal(tls_hello_type(server_hello, sizeof(server_hello)), 2);
	assert_int_equal(tls_hello_type(server_hello, 5), 0);
}

/* Every prefix needs more bytes; a heap copy of exactly that size makes
 * ASan catch any read past it. */
static void test_cut_everywhere(void **state)
{
	for (size_t n = 0; n < sizeof(hello); n++) {
		uint8_t *p = malloc(n ? n : 1);
		struct tls_hello h;
		int r;

		memcpy(p, hello, n);
		r = tls_hello_parse(p, n, &h);
		if (r != 0)
			fail_msg("prefix of %zu bytes: %d, expected 0 (need more)", n, r);
		free(p);
	}
}

/* Any byte changed to any of a few values: a verdict, and slices inside
 * the input. */
static void test_alter_everywhere(void **state)
{
	static const uint8_t vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };

	for (size_t i = 0; i < sizeof(hello); i++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			uint8_t *p = malloc(sizeof(hello));
			struct tls_hello h;
			int r;

			memcpy(p, hello, sizeof(hello));
			p[i] = vals[v];
			r = tls_hello_parse(p, sizeof(hello), &h);
			assert_true(r >= -1 && r <= (int)sizeof(hello));
			if (r > 0 && h.sni)
				assert_true(h.sni >= p && h.sni + h.sni_len <= p + sizeof(hello));
			if (r > 0 && h.alpn)
				assert_true(h.alpn >= p && h.alpn + h.alpn_len <= p + sizeof(hello));
			free(p);
		}
	}
}

static void test_not_hello(void **state)
{
	struct tls_hello h;
	uint8_t alert[] = { 0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28 };
	uint8_t sh[] = { 0x16, 0x03, 0x03, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00 };
	uint8_t huge[] = { 0x16, 0x03, 0x01, 0xff, 0xff, 0x01 };
	uint8_t nohs[] = { 0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00 };

	assert_int_equal(tls_hello_parse((const uint8_t *)"GET / HTTP/1.1\r\n", 16, &h), -1);
	assert_int_equal(tls_hello_parse(alert, sizeof(alert), &h), -1);
	assert_int_equal(tls_hello_parse(sh, sizeof(sh), &h), -1);
	assert_int_equal(tls_hello_parse(huge, sizeof(huge), &h), -1);
	/* a ClientHello too short for its fixed fields */
	assert_int_equal(tls_hello_parse(nohs, sizeof(nohs), &h), -1);
	/* a first byte is enough to say no */
	assert_int_equal(tls_hello_parse((const uint8_t *)"G", 1, &h), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_ticket_and_types),
		cmocka_unit_test(test_cut_everywhere),
		cmocka_unit_test(test_alter_everywhere),
		cmocka_unit_test(test_not_hello),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
