/* Unit tests for the peers protocol (src/proxy/peers_msg.c): encoded
 * integers, hello and status lines, framing, definitions, updates and
 * acknowledgements, each cut at every byte; messages captured from HAProxy
 * 2.6 decoded; the peers section's configuration and its errors
 * (peers_cfg.c); the update order of replicated tables (stktable.c). */
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
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/peers.h>
#include <sluice/peers_msg.h>
#include <sluice/proxy.h>
#include <sluice/stktable.h>
#include <sluice/str.h>

#include "../../src/proxy/peers_int.h"

/* Hex text to bytes; returns the length. */
static size_t unhex(const char *h, unsigned char *out)
{
	size_t n = 0;

	for (; h[0] && h[1]; h += 2) {
		unsigned v;

		while (*h == ' ')
			h++;
		if (!h[0] || !h[1])
			break;
		sscanf(h, "%2x", &v);
		out[n++] = (unsigned char)v;
	}
	return n;
}

/* ---- encoded integers ---- */

static void test_varint(void **state)
{
	static const struct { uint64_t v; const char *hex; } known[] = {
		{ 0, "00" }, { 0xef, "ef" }, { 0xf0, "f000" }, { 0x1234, "f49401" },
		{ 2287, "ff7f" }, { 2288, "f08000" }, { 60000, "f0971c" }, { 10000, "f0e203" },
		{ 123456789, "f5c2f8d502" }, { 521647502, "fec9f5c40e" },
	};
	unsigned char b[16], want[16];
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
		size_t n = peer_varint_put(b, known[i].v), wn = unhex(known[i].hex, want);

		assert_int_equal(n, wn);
		assert_memory_equal(b, want, n);
		assert_int_equal(peer_varint_get(b, n, &v), (int)n);
		assert_true(v == known[i].v);
		for (size_t cut = 0; cut < n; cut++)
			assert_int_equal(peer_varint_get(b, cut, &v), 0);
	}
	/* every magnitude, both ends */
	for (int bits = 0; bits < 64; bits++) {
		uint64_t x[3] = { (uint64_t)1 << bits, ((uint64_t)1 << bits) - 1,
				  ((uint64_t)1 << bits) + 12345 };

		for (int k = 0; k < 3; k++) {
			size_t n = peer_varint_put(b, x[k]);

			assert_true(n <= PEER_VARINT_MAX);
			assert_int_equal(peer_varint_get(b, n, &v), (int)n);
			assert_true(v == x[k]);
		}
	}
	assert_int_equal(peer_varint_get(b, peer_varint_put(b, UINT64_MAX), &v), 10);
	assert_true(v == UINT64_MAX);
	/* longer than any 64-bit value */
	memset(b, 0xff, sizeof(b));
	assert_int_equal(peer_varint_get(b, sizeof(b), &v), -1);
}

/* ---- handshake ---- */

static void test_hello(void **state)
{
	static const char ok[] = "HAProxyS 2.1\nhap\nprobe 1234 0\n";
	struct peer_hello h;
	struct dstr d = { 0 };
	int st;

	(void)state;
	assert_int_equal(peer_hello_parse(ok, strlen(ok), &h, &st), (int)strlen(ok));
	assert_int_equal(st, 0);
	assert_int_equal(h.major, 2);
	assert_int_equal(h.minor, 1);
	assert_string_equal(h.remote, "hap");
	assert_string_equal(h.local, "probe");
	assert_int_equal(h.pid, 1234);
	for (size_t cut = 0; cut < strlen(ok); cut++)
		assert_int_equal(peer_hello_parse(ok, cut, &h, &st), 0);
	/* what follows the hello is not part of it */
	assert_int_equal(peer_hello_parse("HAProxyS 2.0\na\nb 1 0\n\x00\x00", 23, &h, &st), 21);
	assert_int_equal(h.minor, 0);

	static const struct { const char *in; int status; } bad[] = {
		{ "GET / HTTP/1.0\r\n\r\n", PEER_ST_ERRPROTO },
		{ "HAProxyS 1.0\na\nb 1 0\n", PEER_ST_ERRVER },
		{ "HAProxyS 2.9\na\nb 1 0\n", PEER_ST_ERRVER },
		{ "HAProxyS 3.1\na\nb 1 0\n", PEER_ST_ERRVER },
		{ "HAProxyS two\na\nb 1 0\n", PEER_ST_ERRPROTO },
		{ "HAProxyS 2.1\na\nb\n", PEER_ST_ERRPROTO },
		{ "HAProxyS 2.1\na\nb x 0\n", PEER_ST_ERRPROTO },
		{ "HAProxyS 2.1\n\nb 1 0\n", PEER_ST_ERRPROTO },
		{ "HAProxyS 2.1\na b\nb 1 0\n", PEER_ST_ERRPROTO },
		{ "HAProxyS 2.1234567890123456789\n", PEER_ST_ERRPROTO },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(peer_hello_parse(bad[i].in, strlen(bad[i].in), &h, &st), -1);
		assert_int_equal(st, bad[i].status);
	}
	/* a first line that never ends */
	{
		char big[PEER_HELLO_MAX + 8];

		memcpy(big, "HAProxyS ", 9);
		memset(big + 9, '2', sizeof(big) - 9);
		assert_int_equal(peer_hello_parse(big, sizeof(big), &h, &st), -1);
	}
	assert_int_equal(peer_hello_put(&d, "b", "a", 42), 0);
	assert_string_equal(d.p, "HAProxyS 2.1\nb\na 42 0\n");
	dstr_free(&d);
}

static void test_status(void **state)
{
	int code = 0;

	(void)state;
	assert_int_equal(peer_status_parse("200\n", 4, &code), 4);
	assert_int_equal(code, 200);
	assert_int_equal(peer_status_parse("504\nxx", 6, &code), 4);
	assert_int_equal(code, 504);
	for (size_t cut = 0; cut < 4; cut++)
		assert_int_equal(peer_status_parse("200\n", cut, &code), 0);
	assert_int_equal(peer_status_parse("20x\n", 4, &code), -1);
	assert_int_equal(peer_status_parse("2000", 4, &code), -1);
	assert_int_equal(peer_status_parse("HAPr", 4, &code), -1);
}

/* ---- messages ---- */

/* Frames every prefix of <b>: incomplete until the end. */
static void check_cuts(const unsigned char *b, size_t n)
{
	struct peer_msg m;
	int big;

	for (size_t cut = 0; cut < n; cut++)
		assert_int_equal(peer_msg_parse(b, cut, &m, &big), 0);
	assert_int_equal(peer_msg_parse(b, n, &m, &big), (int)n);
}

static void test_framing(void **state)
{
	unsigned char b[16];
	struct peer_msg m;
	int big;

	(void)state;
	check_cuts((const unsigned char *)"\x00\x04", 2);
	assert_int_equal(peer_msg_parse((const unsigned char *)"\x00\x04\x0a", 3, &m, &big), 2);
	assert_int_equal(m.cls, 0);
	assert_int_equal(m.type, 4);
	/* a length over the limit */
	b[0] = 10;
	b[1] = PEER_STKT_UPDATE;
	size_t n = peer_varint_put(b + 2, PEER_MSG_MAX + 1);
	assert_int_equal(peer_msg_parse(b, 2 + n, &m, &big), -1);
	assert_true(big);
	/* a length that is not one */
	memset(b + 2, 0xff, 12);
	assert_int_equal(peer_msg_parse(b, 14, &m, &big), -1);
	assert_false(big);
}

/* Captured from HAProxy 2.6.12 ("show peers" tables "st", "/t2", "sti"). */
static const char hap_def_st[] =
	"0a8228 02 02 7374 04 04 fff03e f0971c 03f0e203 05f8a901 08f8a901 0af0e203 0cf0e203 "
	"0ef0e203 10f0e203";
static const char hap_upd_st[] =
	"0a8547 00000001 0000e9ed 0a000001 03 00 05 fec9f5c40e0000 00 fec9f5c40e0000 02 00 "
	"fec9f5c40e0000 00 740700 00 fec9f5c40e0000 f5c2f8d502 fec9f5c40e0000 00 fec9f5c40e0000";
static const char hap_def_t2[] = "0a8210 01 03 2f7432 06 11 f431 f0c40d 0af0e203";
static const char hap_upd_t2[] = "0a8515 00000001 000074c0 03 616263 fc03 fec9f5c40e0000";
static const char hap_def_sti[] =
	"0a8219 03 03 737469 02 04 f0f1fe7a 00 15f8ac00 1602 1703 1802f0e203";
static const char hap_upd_sti[] =
	"0a8527 00000001 00000000 0000002a 00 fec9f5c40e0000 0000 000000 fec9f5c40e0000 "
	"fec9f5c40e0000";

/* Frames <hex> (checking every cut) and decodes its definition into <d>. */
static int hap_define(const char *hex, unsigned char *b, struct peer_tdef *d)
{
	size_t n = unhex(hex, b);
	struct peer_msg m;
	int big;

	check_cuts(b, n);
	assert_int_equal(peer_msg_parse(b, n, &m, &big), (int)n);
	assert_int_equal(m.cls, PEER_C_STKT);
	assert_int_equal(m.type, PEER_STKT_DEFINE);
	for (size_t cut = 0; cut < m.len; cut++)
		assert_int_not_equal(peer_tdef_decode(m.body, cut, d), 0);
	return peer_tdef_decode(m.body, m.len, d);
}

static void hap_update(const char *hex, const struct peer_tdef *d, struct peer_upd *u)
{
	unsigned char b[512];
	size_t n = unhex(hex, b);
	struct peer_msg m;
	int big;

	check_cuts(b, n);
	assert_int_equal(peer_msg_parse(b, n, &m, &big), (int)n);
	for (size_t cut = 0; cut < m.len; cut++)
		assert_int_equal(peer_upd_decode(m.type, m.body, cut, d, u), -1);
	assert_int_equal(peer_upd_decode(m.type, m.body, m.len, d, u), 0);
}

static void test_haproxy_messages(void **state)
{
	unsigned char b1[512], b2[512], b3[512];
	struct peer_tdef d;
	struct peer_upd u;

	(void)state;
	assert_int_equal(hap_define(hap_def_st, b1, &d), 0);
	assert_int_equal(d.id, 2);
	assert_int_equal(d.nlen, 2);
	assert_memory_equal(d.name, "st", 2);
	assert_int_equal(d.key_type, PEER_KT_IPV4);
	assert_int_equal(d.key_len, 4);
	assert_true(d.data == 0x1ffff);
	assert_int_equal(d.expire, 60000);
	assert_int_equal(d.period[3], 10000);
	assert_int_equal(d.period[5], 5000);
	assert_int_equal(d.period[16], 10000);
	hap_update(hap_upd_st, &d, &u);
	assert_int_equal(u.type, PEER_STKT_UPDATE_TIMED);
	assert_int_equal(u.id, 1);
	assert_int_equal(u.expire, 59885);
	assert_int_equal(u.klen, 4);
	assert_memory_equal(u.key, "\x0a\x00\x00\x01", 4);
	assert_int_equal(u.val[STK_DT_SERVER_ID].v, 3);
	assert_int_equal(u.val[STK_DT_GPC0].v, 5);
	assert_int_equal(u.val[STK_DT_CONN_CUR].v, 2);
	assert_int_equal(u.val[STK_DT_HTTP_REQ_RATE].elapsed, 116);
	assert_int_equal(u.val[STK_DT_HTTP_REQ_RATE].curr, 7);
	assert_int_equal(u.val[STK_DT_BYTES_IN_CNT].v, 123456789);
	assert_int_equal(u.val[STK_DT_BYTES_OUT_RATE].elapsed, 521647502);

	/* a peers section's table: "/t2", string keys of len 16 (17 with the NUL) */
	assert_int_equal(hap_define(hap_def_t2, b2, &d), 0);
	assert_memory_equal(d.name, "/t2", 3);
	assert_int_equal(d.key_type, PEER_KT_STR);
	assert_int_equal(d.key_len, 17);
	assert_true(d.data == ((1 << 2) | (1 << 10)));
	assert_int_equal(d.expire, 30000);
	hap_update(hap_upd_t2, &d, &u);
	assert_int_equal(u.klen, 3);
	assert_memory_equal(u.key, "abc", 3);
	assert_int_equal(u.val[STK_DT_GPC0].v, 300);
	assert_int_equal(u.expire, 29888);

	/* types sluice does not store (HAProxy's arrays, http_fail_*): read
	 * to be skipped */
	assert_int_equal(hap_define(hap_def_sti, b3, &d), 0);
	assert_int_equal(d.key_type, PEER_KT_SINT);
	assert_true(d.data == 0x1f00000);
	assert_int_equal(d.period[21], 3000);
	assert_int_equal(d.nelem[22], 2);
	assert_int_equal(d.nelem[23], 3);
	assert_int_equal(d.nelem[24], 2);
	assert_int_equal(d.period[24], 10000);
	hap_update(hap_upd_sti, &d, &u);
	assert_memory_equal(u.key, "\x00\x00\x00\x2a", 4);
}

static void test_define_roundtrip(void **state)
{
	struct peer_tdef d = { 0 }, r;
	struct dstr out = { 0 };
	struct peer_msg m;
	int big;

	(void)state;
	d.id = 300;
	d.name = "backend-with-a-long-name";
	d.nlen = strlen(d.name);
	d.key_type = PEER_KT_BIN;
	d.key_len = 64;
	d.data = (1 << STK_DT_GPC0) | (1 << STK_DT_CONN_RATE) | (1 << STK_DT_BYTES_OUT_RATE);
	d.expire = 86400000;
	d.period[STK_DT_CONN_RATE] = 1000;
	d.period[STK_DT_BYTES_OUT_RATE] = 3600000;
	assert_int_equal(peer_msg_put_define(&out, &d), 0);
	check_cuts((unsigned char *)out.p, out.len);
	assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big), (int)out.len);
	for (size_t cut = 0; cut < m.len; cut++)
		assert_int_equal(peer_tdef_decode(m.body, cut, &r), -1);
	assert_int_equal(peer_tdef_decode(m.body, m.len, &r), 0);
	assert_int_equal(r.id, 300);
	assert_memory_equal(r.name, d.name, d.nlen);
	assert_int_equal(r.key_type, PEER_KT_BIN);
	assert_int_equal(r.key_len, 64);
	assert_true(r.data == d.data);
	assert_int_equal(r.expire, 86400000);
	assert_int_equal(r.period[STK_DT_CONN_RATE], 1000);
	assert_int_equal(r.period[STK_DT_BYTES_OUT_RATE], 3600000);
	/* fields a later version adds are ignored */
	assert_int_equal(peer_tdef_decode(m.body, m.len, &r), 0);
	dstr_free(&out);

	/* what sluice cannot read: unsupported, not malformed */
	d.key_type = 3;   /* an address of either family */
	assert_int_equal(peer_msg_put_define(&out, &d), 0);
	assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big), (int)out.len);
	assert_int_equal(peer_tdef_decode(m.body, m.len, &r), -2);
	out.len = 0;
	d.key_type = PEER_KT_STR;
	d.data = (uint64_t)1 << 40;
	assert_int_equal(peer_msg_put_define(&out, &d), 0);
	assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big), (int)out.len);
	assert_int_equal(peer_tdef_decode(m.body, m.len, &r), -2);
	out.len = 0;
	d.data = 0;
	d.key_len = PEER_KEY_MAX + 1;
	assert_int_equal(peer_msg_put_define(&out, &d), 0);
	assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big), (int)out.len);
	assert_int_equal(peer_tdef_decode(m.body, m.len, &r), -1);
	dstr_free(&out);
}

static void test_update_roundtrip(void **state)
{
	static const struct { uint64_t kt, klen; const char *key; size_t n; } keys[] = {
		{ PEER_KT_STR, 33, "a string key", 12 },
		{ PEER_KT_STR, 33, "", 0 },
		{ PEER_KT_SINT, 4, "\x00\x01\x02\x03", 4 },
		{ PEER_KT_IPV4, 4, "\x0a\x00\x00\x01", 4 },
		{ PEER_KT_IPV6, 16, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16 },
		{ PEER_KT_BIN, 8, "\x01\x02\x03\x04\x05\0\0\0", 8 },
	};
	static const uint8_t types[] = { PEER_STKT_UPDATE, PEER_STKT_INCUPDATE,
					 PEER_STKT_UPDATE_TIMED, PEER_STKT_INCUPDATE_TIMED };

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		for (size_t ty = 0; ty < ARRAY_SIZE(types); ty++) {
			struct peer_tdef d = { 0 };
			struct peer_upd u, r;
			struct dstr out = { 0 };
			struct peer_msg m;
			int big;

			d.key_type = keys[k].kt;
			d.key_len = keys[k].klen;
			d.data = (1 << STK_DT_SERVER_ID) | (1 << STK_DT_GPC0) |
				 (1 << STK_DT_HTTP_REQ_RATE) | (1 << STK_DT_BYTES_IN_CNT);
			memset(&u, 0, sizeof(u));
			u.type = types[ty];
			u.id = 0xdeadbeef;
			u.expire = 12345;
			u.key = (const unsigned char *)keys[k].key;
			u.klen = keys[k].n;
			u.val[STK_DT_SERVER_ID].v = 0xffffffff;   /* server id -1 */
			u.val[STK_DT_GPC0].v = 4000000000u;
			u.val[STK_DT_HTTP_REQ_RATE].elapsed = 9999;
			u.val[STK_DT_HTTP_REQ_RATE].curr = 17;
			u.val[STK_DT_HTTP_REQ_RATE].prev = 240;
			u.val[STK_DT_BYTES_IN_CNT].v = (uint64_t)1 << 40;
			assert_int_equal(peer_msg_put_update(&out, &d, &u), 0);
			check_cuts((unsigned char *)out.p, out.len);
			assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big),
					 (int)out.len);
			assert_int_equal(m.type, types[ty]);
			for (size_t cut = 0; cut < m.len; cut++)
				assert_int_equal(peer_upd_decode(m.type, m.body, cut, &d, &r), -1);
			assert_int_equal(peer_upd_decode(m.type, m.body, m.len, &d, &r), 0);
			if (types[ty] == PEER_STKT_UPDATE || types[ty] == PEER_STKT_UPDATE_TIMED)
				assert_true(r.id == 0xdeadbeef);
			if (types[ty] >= PEER_STKT_UPDATE_TIMED)
				assert_int_equal(r.expire, 12345);
			assert_int_equal(r.klen, keys[k].n);
			if (keys[k].n)
				assert_memory_equal(r.key, keys[k].key, keys[k].n);
			assert_true(r.val[STK_DT_SERVER_ID].v == 0xffffffff);
			assert_true(r.val[STK_DT_GPC0].v == 4000000000u);
			assert_int_equal(r.val[STK_DT_HTTP_REQ_RATE].elapsed, 9999);
			assert_int_equal(r.val[STK_DT_HTTP_REQ_RATE].curr, 17);
			assert_int_equal(r.val[STK_DT_HTTP_REQ_RATE].prev, 240);
			assert_true(r.val[STK_DT_BYTES_IN_CNT].v == (uint64_t)1 << 40);
			dstr_free(&out);
		}
}

static void test_string_key_too_long(void **state)
{
	struct peer_tdef d = { 0 };
	struct peer_upd u = { 0 }, r;
	struct dstr out = { 0 };
	struct peer_msg m;
	int big;

	(void)state;
	d.key_type = PEER_KT_STR;
	d.key_len = 5;   /* len 4 */
	u.type = PEER_STKT_INCUPDATE;
	u.key = (const unsigned char *)"abcde";
	u.klen = 5;
	assert_int_equal(peer_msg_put_update(&out, &d, &u), 0);
	assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big), (int)out.len);
	assert_int_equal(peer_upd_decode(m.type, m.body, m.len, &d, &r), -1);
	u.klen = 4;
	out.len = 0;
	assert_int_equal(peer_msg_put_update(&out, &d, &u), 0);
	assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big), (int)out.len);
	assert_int_equal(peer_upd_decode(m.type, m.body, m.len, &d, &r), 0);
	dstr_free(&out);
}

static void test_ack(void **state)
{
	struct dstr out = { 0 };
	struct peer_msg m;
	uint64_t tid;
	uint32_t upd;
	int big;

	(void)state;
	assert_int_equal(peer_msg_put_ack(&out, 7, 1000), 0);
	assert_int_equal(out.len, 8);
	assert_memory_equal(out.p, "\x0a\x84\x05\x07\x00\x00\x03\xe8", 8);
	check_cuts((unsigned char *)out.p, out.len);
	assert_int_equal(peer_msg_parse((unsigned char *)out.p, out.len, &m, &big), 8);
	for (size_t cut = 0; cut < m.len; cut++)
		assert_int_equal(peer_ack_decode(m.body, cut, &tid, &upd), -1);
	assert_int_equal(peer_ack_decode(m.body, m.len, &tid, &upd), 0);
	assert_int_equal(tid, 7);
	assert_int_equal(upd, 1000);
	assert_int_equal(peer_switch_decode((const unsigned char *)"\xf0\x01", 2, &tid), 0);
	assert_int_equal(tid, 0xf0 + 16);
	assert_int_equal(peer_switch_decode((const unsigned char *)"\xf0", 1, &tid), -1);
	dstr_free(&out);
}

/* ---- configuration ---- */

static int load(const char *text)
{
	int errors;

	peers_free_all();
	proxy_free_all();
	errors = cfg_parse_text("peers.cfg", text, strlen(text));
	if (!errors)
		errors = cfg_postparse();
	return errors;
}

static void test_config(void **state)
{
	struct peers_sec *s;
	struct stktable *t;

	(void)state;
	peers_set_cmdline_name("a");
	assert_int_equal(load("peers p\n  peer a 127.0.0.1:10001\n  peer b 127.0.0.1:10002\n"
			      "  table t1 type string len 8 size 10 expire 5s store gpc0\n"
			      "backend be\n  stick-table type ip size 10 store conn_rate(3s) peers p\n"),
			 0);
	s = peers_sections;
	assert_non_null(s);
	assert_string_equal(s->local->name, "a");
	assert_non_null(s->listeners);
	assert_int_equal(s->ntables, 2);
	/* the section's own table: "/t1" on the wire, "p/t1" here */
	assert_string_equal(s->tables[0].wire, "/t1");
	assert_string_equal(s->tables[0].t->name, "p/t1");
	assert_int_equal(s->tables[0].def.key_type, PEER_KT_STR);
	assert_int_equal(s->tables[0].def.key_len, 9);
	assert_string_equal(s->tables[1].wire, "be");
	assert_true(s->tables[1].def.data == 1 << STK_DT_CONN_RATE);
	assert_int_equal(s->tables[1].def.period[STK_DT_CONN_RATE], 3000);
	t = stk_table_find("p/t1");
	assert_non_null(t);
	assert_true(t->sync_local);
	assert_non_null(t->on_update);

	/* bind + server: the local peer without address */
	assert_int_equal(load("peers p\n  bind 127.0.0.1:10001\n  server a\n  server b 127.0.0.1:1\n"
			      "  shards 1\n  enabled\n  default-server\n"), 0);
	assert_non_null(peers_sections->listeners);
	/* the new process of a reload binds beside the old one, whatever the
	 * global noreuseport says; the bind line's own noreuseport holds */
	assert_true(peers_sections->listeners->flags & LI_F_REUSEPORT);
	assert_int_equal(load("peers p\n  default-bind backlog 10\n"
			      "  bind 127.0.0.1:10001 noreuseport\n  server a\n"), 0);
	assert_false(peers_sections->listeners->flags & LI_F_REUSEPORT);
	assert_int_equal(peers_sections->listeners->bc->backlog, 10);
	/* disabled: nothing replicated */
	assert_int_equal(load("peers p\n  disabled\n  peer a 127.0.0.1:10001\n"
			      "backend be\n  stick-table type ip size 10 peers p\n"), 0);
	assert_null(stk_table_find("be")->on_update);
	/* this process is none of the peers: the section is not used */
	assert_int_equal(load("peers p\n  peer x 127.0.0.1:10001\n"
			      "backend be\n  stick-table type ip size 10 peers p\n"), 0);
	assert_null(stk_table_find("be")->on_update);
	assert_null(peers_sections->listeners);
	peers_free_all();
	proxy_free_all();
}

/* The local peer's name: -L, else "localpeer" when it comes before the
 * peers sections, else the host name. */
static void test_local_name(void **state)
{
	(void)state;
	peers_set_cmdline_name(NULL);
	assert_int_equal(load("global\n  localpeer lp\n"
			      "peers p\n  peer lp 127.0.0.1:10001\n  peer x 127.0.0.1:10002\n"), 0);
	assert_string_equal(peers_local_name(), "lp");
	assert_string_equal(peers_sections->local->name, "lp");
	assert_string_equal(getenv("HAPROXY_LOCALPEER"), "lp");
	free(global.localpeer);
	global.localpeer = NULL;
	/* after a peers section: too late, ignored */
	setenv("HAPROXY_LOCALPEER", "hostname-here", 1);
	assert_int_equal(load("peers p\n  peer lp 127.0.0.1:10001\n"
			      "global\n  localpeer lp\n"), 0);
	assert_null(global.localpeer);
	assert_string_equal(peers_local_name(), "hostname-here");
	assert_null(peers_sections->local);
	/* -L wins */
	peers_set_cmdline_name("x");
	assert_int_equal(load("global\n  localpeer lp\n"
			      "peers p\n  peer lp 127.0.0.1:10001\n  peer x 127.0.0.1:10002\n"), 0);
	assert_null(global.localpeer);
	assert_string_equal(peers_sections->local->name, "x");
	peers_free_all();
	proxy_free_all();
}

static void test_config_errors(void **state)
{
	static const char *const bad[] = {
		"peers\n",
		"peers p extra\n",
		"peers p\npeers p\n",
		"peers p\n  peer a\n",
		"peers p\n  peer a 127.0.0.1:1\n  peer a 127.0.0.1:2\n",
		"peers p\n  peer a 127.0.0.1:1\n  peer b 127.0.0.1\n",
		"peers p\n  peer a 127.0.0.1:1\n  peer b 127.0.0.1:1-5\n",
		"peers p\n  peer a 127.0.0.1:1\n  peer b unix@/tmp/x\n",
		"peers p\n  peer a 127.0.0.1:1\n  peer b 127.0.0.1:2 ssl\n",
		"peers p\n  peer a 127.0.0.1:1\n  bind 127.0.0.1:3\n",
		"peers p\n  bind 127.0.0.1:3\n  peer a 127.0.0.1:1\n",
		"peers p\n  bind 127.0.0.1:3\n  server a 127.0.0.1:1\n",
		"peers p\n  bind 127.0.0.1:3\n  server b\n",
		"peers p\n  server a\n",
		"peers p\n  bind 127.0.0.1:3 accept-proxy\n  server a\n",
		"peers p\n  bind /tmp/peer.sock\n  server a\n",
		"peers p\n  peer a 127.0.0.1:1\n  shards 2\n",
		"peers p\n  peer a 127.0.0.1:1\n  disabled now\n",
		"peers p\n  peer a 127.0.0.1:1\n  default-server check\n",
		"peers p\n  peer a 127.0.0.1:1\n  table x/y type ip size 1\n",
		"peers p\n  peer a 127.0.0.1:1\n  table t type ip size 1 peers p\n",
		"peers p\n  peer a 127.0.0.1:1\n  table t type ip\n",
		"peers p\n  peer a 127.0.0.1:1\n  table t type ip size 1\n  table t type ip size 1\n",
		"peers p\n  peer a 127.0.0.1:1\n  stick-table type ip size 1\n",
		"backend be\n  stick-table type ip size 1 peers nosuch\n",
		"peers p\n  peer a 127.0.0.1:1\n  log\n",
	};

	(void)state;
	peers_set_cmdline_name("a");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int errors = load(bad[i]);

		if (errors == 0)
			fail_msg("accepted: %s", bad[i]);
	}
	peers_free_all();
	proxy_free_all();
}

/* ---- the update order ---- */

static int updates_told;

static void count_update(struct stktable *t)
{
	(void)t;
	updates_told++;
}

static struct stksess *get_ip(struct stktable *t, uint32_t ip)
{
	return stk_get(t, (unsigned char *)&ip, 4);
}

static void test_update_order(void **state)
{
	struct stk_upd c1 = { .kind = STK_UPD_CURSOR }, c2 = { .kind = STK_UPD_CURSOR };
	struct stksess *a, *b, *c;
	struct stktable *t;

	(void)state;
	peers_set_cmdline_name("a");
	assert_int_equal(load("peers p\n  peer a 127.0.0.1:10001\n"
			      "backend be\n  stick-table type ip size 10 store gpc0 peers p\n"), 0);
	t = stk_table_find("be");
	t->on_update = count_update;
	updates_told = 0;
	a = get_ip(t, 1);
	b = get_ip(t, 2);
	assert_int_equal(updates_told, 2);   /* new entries are news */
	assert_int_equal(a->upd.id, 1);
	assert_int_equal(b->upd.id, 2);
	stk_upd_rewind(t, &c1);
	stk_upd_rewind(t, &c2);
	assert_ptr_equal(stk_upd_next(t, &c1), a);
	/* a changes: it moves behind both cursors, with a new id */
	stk_data_add(t, a, STK_DT_GPC0, -1, 1);
	assert_int_equal(a->upd.id, 3);
	assert_ptr_equal(stk_upd_next(t, &c1), b);
	assert_ptr_equal(stk_upd_next(t, &c1), a);
	assert_null(stk_upd_next(t, &c1));
	assert_false(stk_upd_pending(t, &c1));
	assert_true(stk_upd_pending(t, &c2));
	/* read by c1 since: a new id; then the last entry, unread, keeps it */
	stk_data_add(t, a, STK_DT_GPC0, -1, 1);
	assert_int_equal(a->upd.id, 4);
	stk_data_add(t, a, STK_DT_GPC0, -1, 1);
	assert_int_equal(a->upd.id, 4);
	/* a peer's value: a new id, flagged, nobody told */
	updates_told = 0;
	stk_changed_remote(t, b);
	assert_int_equal(updates_told, 0);
	assert_true(b->flags & STKSESS_F_REMOTE);
	assert_int_equal(b->upd.id, 5);
	stk_data_add(t, b, STK_DT_GPC0, -1, 1);
	assert_false(b->flags & STKSESS_F_REMOTE);
	assert_int_equal(b->upd.id, 6);
	assert_int_equal(updates_told, 1);
	/* seek: after the last entry with an id up to 4 */
	stk_upd_seek(t, &c2, 4);
	assert_ptr_equal(stk_upd_next(t, &c2), b);
	stk_upd_seek(t, &c2, 0);
	assert_ptr_equal(stk_upd_next(t, &c2), a);
	/* removed entries leave the order; cursors stay */
	c = get_ip(t, 3);
	stk_upd_rewind(t, &c1);
	stk_remove(t, a);
	assert_ptr_equal(stk_upd_next(t, &c1), b);
	assert_ptr_equal(stk_upd_next(t, &c1), c);
	assert_null(stk_upd_next(t, &c1));
	stk_upd_unlink(&c1);
	stk_upd_unlink(&c2);
	peers_free_all();
	proxy_free_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_haproxy_messages),
		cmocka_unit_test(test_define_roundtrip),
		cmocka_unit_test(test_update_roundtrip),
		cmocka_unit_test(test_string_key_too_long),
		cmocka_unit_test(test_ack),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_local_name),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_update_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
