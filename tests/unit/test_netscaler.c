/* Unit tests for the NetScaler CIP parser (src/net/netscaler.c): the legacy
 * and standard forms with IPv4 and IPv6 clients, every header cut at every
 * byte (more bytes needed until the last, never read past the length), and
 * the refusals (magic, type, version, protocol, lengths). */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/addr.h>
#include <sluice/netscaler.h>

#define MAGIC 0x00001234u

static size_t put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
	return 4;
}

/* The client's IP and TCP headers: 20 + 20 bytes (IPv4, <proto>) or 40 + 20
 * (IPv6) into <p>. Returns their length. */
static size_t ip_tcp(unsigned char *p, int v6, const char *src, const char *dst, uint16_t sp,
                     uint16_t dp, int proto)
{
	size_t n = v6 ? 40 : 20;

	memset(p, 0, n + 20);
	if (v6) {
		p[0] = 0x60;
		p[6] = (unsigned char)proto;
		p[7] = 64;
		assert_int_equal(inet_pton(AF_INET6, src, p + 8), 1);
		assert_int_equal(inet_pton(AF_INET6, dst, p + 24), 1);
	} else {
		p[0] = 0x45;
		p[9] = (unsigned char)proto;
		assert_int_equal(inet_pton(AF_INET, src, p + 12), 1);
		assert_int_equal(inet_pton(AF_INET, dst, p + 16), 1);
	}
	p[n] = (unsigned char)(sp >> 8);
	p[n + 1] = (unsigned char)sp;
	p[n + 2] = (unsigned char)(dp >> 8);
	p[n + 3] = (unsigned char)dp;
	p[n + 12] = 0x50;
	return n + 20;
}

/* A whole CIP header into <p>: legacy or standard form. */
static size_t cip(unsigned char *p, int std, int v6, const char *src, const char *dst,
                  uint16_t sp, uint16_t dp, int proto, uint32_t magic)
{
	unsigned char ipt[64];
	size_t hl = ip_tcp(ipt, v6, src, dst, sp, dp, proto), n = put32(p, magic);

	if (std) {
		n += put32(p + n, (uint32_t)hl + 4);
		p[n++] = 0;
		p[n++] = 0;
		p[n++] = (unsigned char)(hl >> 8);
		p[n++] = (unsigned char)hl;
	} else {
		n += put32(p + n, (uint32_t)hl);
	}
	memcpy(p + n, ipt, hl);
	return n + hl;
}

static void expect_addr(const struct sockaddr_storage *ss, const char *want)
{
	char got[64];

	assert_string_equal(addr_to_str(ss, got, sizeof(got)), want);
}

/* Every prefix of <h> (<len> bytes) asks for more, in a buffer of exactly
 * that size (ASan sees any overread); the whole parses to <len>. */
static void parse_cut(const unsigned char *h, size_t len, struct sockaddr_storage *src,
                      struct sockaddr_storage *dst)
{
	const char *err = NULL;

	for (size_t cut = 0; cut < len; cut++) {
		char *b = malloc(cut ? cut : 1);

		memcpy(b, h, cut);
		if (ns_cip_parse(b, cut, MAGIC, src, dst, &err) != 0)
			fail_msg("cut at %zu: %s", cut, err ? err : "parsed");
		free(b);
	}
	{
		char *b = malloc(len + 5);

		memcpy(b, h, len);
		memcpy(b + len, "GET /", 5);   /* what follows is not the header's */
		assert_int_equal(ns_cip_parse(b, len + 5, MAGIC, src, dst, &err), (int)len);
		free(b);
	}
}

static void test_forms(void **state)
{
	static const struct {
		int std, v6;
		const char *src, *dst, *s, *d;
	} f[] = {
		{ 0, 0, "10.1.2.3", "10.9.9.9", "10.1.2.3:1111", "10.9.9.9:80" },
		{ 1, 0, "10.1.2.3", "10.9.9.9", "10.1.2.3:1111", "10.9.9.9:80" },
		{ 0, 1, "2001:db8::1", "2001:db8::2", "[2001:db8::1]:1111", "[2001:db8::2]:80" },
		{ 1, 1, "2001:db8::1", "2001:db8::2", "[2001:db8::1]:1111", "[2001:db8::2]:80" },
	};
	unsigned char h[128];
	struct sockaddr_storage src, dst;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		size_t n = cip(h, f[i].std, f[i].v6, f[i].src, f[i].dst, 1111, 80, 6, MAGIC);

		parse_cut(h, n, &src, &dst);
		expect_addr(&src, f[i].s);
		expect_addr(&dst, f[i].d);
	}
}

/* An IPv4 header with options: the TCP header is after them, and the
 * announced length may cover more than the two headers. */
static void test_ipv4_options(void **state)
{
	unsigned char h[128];
	struct sockaddr_storage src, dst;
	size_t n = put32(h, MAGIC);

	n += put32(h + n, 24 + 20 + 4);
	memset(h + n, 0, 48);
	h[n] = 0x46;   /* IHL 6: 4 bytes of options */
	h[n + 9] = 6;
	inet_pton(AF_INET, "192.0.2.1", h + n + 12);
	inet_pton(AF_INET, "192.0.2.2", h + n + 16);
	h[n + 24] = 0x30;   /* port 0x3039 = 12345 */
	h[n + 25] = 0x39;
	h[n + 27] = 8;
	parse_cut(h, n + 48, &src, &dst);
	expect_addr(&src, "192.0.2.1:12345");
	expect_addr(&dst, "192.0.2.2:8");
}

static void test_refused(void **state)
{
	unsigned char h[128];
	struct sockaddr_storage src, dst;
	const char *err;
	size_t n;

	/* bad magic: refused as soon as its byte is seen */
	n = cip(h, 0, 0, "10.0.0.1", "10.0.0.2", 1, 2, 6, MAGIC ^ 0x100);
	assert_int_equal(ns_cip_parse((char *)h, 2, MAGIC, &src, &dst, &err), 0);
	assert_int_equal(ns_cip_parse((char *)h, 3, MAGIC, &src, &dst, &err), -1);
	/* not TCP */
	n = cip(h, 0, 0, "10.0.0.1", "10.0.0.2", 1, 2, 17, MAGIC);
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	n = cip(h, 1, 1, "::1", "::2", 1, 2, 17, MAGIC);
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	/* IP version 5 after a legacy length */
	n = cip(h, 0, 0, "10.0.0.1", "10.0.0.2", 1, 2, 6, MAGIC);
	h[8] = 0x55;
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	/* neither form (0x20 in byte 8) */
	h[8] = 0x20;
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	/* standard form with a type other than 0 */
	n = cip(h, 1, 0, "10.0.0.1", "10.0.0.2", 1, 2, 6, MAGIC);
	h[9] = 1;
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	/* lengths too short for the headers, or beyond any header */
	n = cip(h, 0, 0, "10.0.0.1", "10.0.0.2", 1, 2, 6, MAGIC);
	put32(h + 4, 39);
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	put32(h + 4, 0x7fffffff);
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	n = cip(h, 0, 0, "10.0.0.1", "10.0.0.2", 1, 2, 6, MAGIC);
	h[8] = 0x44;   /* IHL 4: below the 20-byte minimum */
	assert_int_equal(ns_cip_parse((char *)h, n, MAGIC, &src, &dst, &err), -1);
	/* garbage of every byte value never parses nor reads past its length */
	for (int v = 0; v < 256; v++) {
		char g[16];

		memset(g, v, sizeof(g));
		for (size_t cut = 0; cut <= sizeof(g); cut++)
			assert_true(ns_cip_parse(g, cut, (uint32_t)v * 0x01010101u, &src, &dst, &err) <= 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
