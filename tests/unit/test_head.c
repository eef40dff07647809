/* Unit tests for the editable head (src/http/head.c): what its editing
 * functions let into a head. Values from samples may hold CR, LF, NUL, SP:
 * each is written %XX, at every input length, every arena room and every
 * position of the byte, and the head written out keeps its lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/http_head.h>

/* ---- a reference, written from the contract ---- */

static int ref_unsafe(enum http_safe kind, unsigned char c)
{
	static const char tchar_sym[] = "!#$%&'*+-.^_`|~";

	switch (kind) {
	case HTTP_SAFE_VALUE:
		return c == '\r' || c == '\n' || c == '\0';
	case HTTP_SAFE_TARGET:
		return c <= ' ' || c == 0x7f;
	default:
		return !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			 (c >= 'A' && c <= 'Z') || (c && memchr(tchar_sym, c, sizeof(tchar_sym) - 1)));
	}
}

/* <s> encoded as the contract says, into <out>; returns its length. */
static size_t ref_encode(enum http_safe kind, const char *s, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (ref_unsafe(kind, c))
			n += (size_t)sprintf(out + n, "%%%02X", c);
		else
			out[n++] = (char)c;
	}
	return n;
}

/* ---- a head with a guarded arena ---- */

#define GUARD 0xA5

static char arena_mem[4096 + 64];

static void head_new(struct http_head *h, struct http_field *f, int maxf, uint32_t arena_size,
                     int resp)
{
	memset(h, 0, sizeof(*h));
	memset(arena_mem, GUARD, sizeof(arena_mem));
	h->flags = resp ? HTTP_HEAD_F_RESP : 0;
	h->f = f;
	h->maxf = maxf;
	h->arena = arena_mem;
	h->arena_size = arena_size;
	if (resp) {
		h->sl[HTTP_SL_RSVER] = (struct http_str){ "HTTP/1.1", 8 };
		h->sl[HTTP_SL_STATUS] = (struct http_str){ "200", 3 };
		h->sl[HTTP_SL_REASON] = (struct http_str){ "OK", 2 };
	} else {
		h->sl[HTTP_SL_METH] = (struct http_str){ "GET", 3 };
		h->sl[HTTP_SL_URI] = (struct http_str){ "/", 1 };
		h->sl[HTTP_SL_RQVER] = (struct http_str){ "HTTP/1.1", 8 };
	}
}

static void assert_guard_from(size_t off)
{
	for (size_t i = off; i < sizeof(arena_mem); i++)
		if ((unsigned char)arena_mem[i] != GUARD)
			fail_msg("arena byte %zu written past the room", i);
}

static char out[8192];

static const char *head_text(const struct http_head *h)
{
	size_t n = http_head_write(h, out);

	assert_int_equal(n, http_head_len(h));
	out[n] = '\0';
	return out;
}

/* A request-smuggling value: everything url_dec or b64dec could give. */
static const char hostile[] =
	"bob\r\nContent-Length: 0\r\n\r\nGET /admin/x HTTP/1.1\r\nHost: a\r\n\r\n\0end\x7f\t";

/* ---- tests ---- */

/* Strings of every length up to 40 made of <fill> (4 bytes repeated), each
 * byte <kind> refuses put at each place in turn: the scan finds it there. */
static void scan_check(enum http_safe kind, const char fill[4])
{
	char s[40];

	for (size_t len = 0; len <= sizeof(s); len++) {
		for (size_t i = 0; i < sizeof(s); i++)
			s[i] = fill[i % 4];
		assert_int_equal(http_safe_scan(s, len, kind), len);
		for (size_t at = 0; at < len; at++) {
			for (int c = 0; c < 256; c++) {
				if (!ref_unsafe(kind, (unsigned char)c))
					continue;
				s[at] = (char)c;
				if (http_safe_scan(s, len, kind) != at)
					fail_msg("kind %d: byte 0x%02x at %zu of %zu not found", kind, c,
						 at, len);
			}
			s[at] = fill[at % 4];
		}
	}
}

/* The byte classes, for every byte, and the place found at every length
 * and offset (the 8-byte steps and the tail alike), among plain letters or
 * among allowed bytes close to the limits of the 8-byte test. */
static void test_scan_every_byte_and_place(void **state)
{
	static const enum http_safe kinds[] = { HTTP_SAFE_VALUE, HTTP_SAFE_TARGET, HTTP_SAFE_TOKEN };
	static const char near[3][4] = {
		{ '\t', 0x0b, 0x0e, (char)0x80 },
		{ '!', 0x7e, (char)0x80, (char)0xff },
		{ 'z', '!', '%', '~' },
	};

	for (size_t k = 0; k < 3; k++) {
		for (int c = 0; c < 256; c++) {
			char one = (char)c;

			assert_int_equal(http_safe_scan(&one, 1, kinds[k]),
					 ref_unsafe(kinds[k], (unsigned char)c) ? 0 : 1);
		}
		scan_check(kinds[k], "aaaa");
		scan_check(kinds[k], near[k]);
	}
	/* HTAB and DEL are fine in a value, not in a target */
	assert_int_equal(http_safe_scan("a\tb\x7f" "cdefghijk", 13, HTTP_SAFE_VALUE), 13);
	assert_int_equal(http_safe_scan("abcdefghij\x7f", 11, HTTP_SAFE_TARGET), 10);
	assert_int_equal(http_safe_scan("abcdefghij\t", 11, HTTP_SAFE_TARGET), 10);
	/* '%' is a tchar: an encoded method stays a token */
	assert_int_equal(http_safe_scan("GET%0D", 6, HTTP_SAFE_TOKEN), 6);
	assert_int_equal(http_safe_scan("GET/", 4, HTTP_SAFE_TOKEN), 3);
}

/* Every prefix of the hostile value, in every arena room from nothing to
 * enough, after some bytes already used: either the exact encoding, or
 * NULL with the arena unchanged; never a byte past the room. */
static void test_encode_cut_at_every_length(void **state)
{
	static const enum http_safe kinds[] = { HTTP_SAFE_VALUE, HTTP_SAFE_TARGET, HTTP_SAFE_TOKEN };
	const size_t hlen = sizeof(hostile) - 1;
	struct http_field f[1];
	struct http_head h;
	char want[1024];

	for (size_t k = 0; k < 3; k++) {
		for (size_t len = 0; len <= hlen; len++) {
			size_t wlen = ref_encode(kinds[k], hostile, len, want);

			for (uint32_t used = 0; used <= 5; used += 5) {
				for (uint32_t room = 0; room <= wlen + 2; room++) {
					size_t l = len;
					const char *p;

					head_new(&h, f, 1, used + room, 0);
					h.arena_used = used;
					p = http_head_dup_safe(&h, hostile, &l, kinds[k]);
					if (wlen > room) {
						assert_null(p);
						assert_int_equal(l, len);
						assert_int_equal(h.arena_used, used);
					} else {
						assert_ptr_equal(p, arena_mem + used);
						assert_int_equal(l, wlen);
						assert_memory_equal(p, want, wlen);
						assert_int_equal(h.arena_used, used + wlen);
					}
					assert_guard_from(used + room);
				}
			}
		}
	}
}

/* A value with nothing to encode costs its copy only. */
static void test_clean_value_copied_as_is(void **state)
{
	struct http_field f[4];
	struct http_head h;
	const char v[] = "text/html; charset=utf-8, a\tb";

	head_new(&h, f, 4, 256, 0);
	assert_int_equal(http_head_add(&h, "x-a", 3, v, sizeof(v) - 1), 0);
	assert_int_equal(h.arena_used, 3 + sizeof(v) - 1);
	assert_int_equal(f[0].v.len, sizeof(v) - 1);
	assert_memory_equal(f[0].v.p, v, sizeof(v) - 1);
}

/* add, set, set_value: one field line whatever the value holds. */
static void test_fields_keep_their_lines(void **state)
{
	struct http_field f[4];
	struct http_head h;

	head_new(&h, f, 4, 1024, 0);
	assert_int_equal(http_head_add(&h, "x-user", 6, hostile, sizeof(hostile) - 1), 0);
	assert_string_equal(head_text(&h),
		"GET / HTTP/1.1\r\n"
		"x-user: bob%0D%0AContent-Length: 0%0D%0A%0D%0AGET /admin/x HTTP/1.1%0D%0A"
		"Host: a%0D%0A%0D%0A%00end\x7f\t\r\n"
		"\r\n");
	assert_int_equal(http_head_set(&h, "x-user", 6, "a\nb", 3), 0);
	assert_int_equal(h.nf, 1);
	assert_int_equal(http_head_set_value(&h, 0, "c\r\nd: e", 7), 0);
	assert_string_equal(head_text(&h), "GET / HTTP/1.1\r\nx-user: c%0D%0Ad: e\r\n\r\n");
	/* a name that is not a token is refused, not written */
	assert_int_equal(http_head_add(&h, "x-a\r\nx-b", 8, "v", 1), -1);
	assert_int_equal(http_head_add(&h, "x a", 3, "v", 1), -1);
	assert_int_equal(http_head_add(&h, "", 0, "v", 1), -1);
	assert_int_equal(http_head_add_ref(&h, "x:", 2, "v", 1), -1);
	assert_int_equal(h.nf, 1);
	/* no room for the encoded value: -1, nothing added */
	head_new(&h, f, 4, 8, 0);
	assert_int_equal(http_head_add(&h, "x", 1, "\r\n\r\n", 4), -1);
	assert_int_equal(h.nf, 0);
	assert_guard_from(8);
}

/* add_ref keeps a safe value where it is, copies an unsafe one encoded. */
static void test_add_ref(void **state)
{
	static const char clean[] = "no-cache", dirty[] = "a\r\nb";
	struct http_field f[4];
	struct http_head h;

	head_new(&h, f, 4, 64, 1);
	assert_int_equal(http_head_add_ref(&h, "cache-control", 13, clean, 8), 0);
	assert_ptr_equal(f[0].v.p, clean);
	assert_int_equal(h.arena_used, 0);
	assert_int_equal(http_head_add_ref(&h, "x-a", 3, dirty, 4), 0);
	assert_ptr_equal(f[1].v.p, arena_mem);
	assert_string_equal(head_text(&h),
			    "HTTP/1.1 200 OK\r\ncache-control: no-cache\r\nx-a: a%0D%0Ab\r\n\r\n");
	head_new(&h, f, 4, 7, 1);
	assert_int_equal(http_head_add_ref(&h, "x-a", 3, dirty, 4), -1);
	assert_int_equal(h.nf, 0);
	assert_guard_from(7);
}

/* Start-line parts: the request line keeps its three parts. */
static void test_start_line(void **state)
{
	struct http_field f[4];
	struct http_head h;
	const char uri[] = "/a b?q=1\r\n\r\nGET /admin HTTP/1.1\r\n\x01\x7f";

	head_new(&h, f, 4, 1024, 0);
	assert_int_equal(http_head_set_sl(&h, HTTP_SL_URI, uri, sizeof(uri) - 1), 0);
	assert_int_equal(http_head_set_sl(&h, HTTP_SL_METH, "GET /x HTTP/1.1\r\n", 17), 0);
	assert_string_equal(head_text(&h),
		"GET%20%2Fx%20HTTP%2F1.1%0D%0A "
		"/a%20b?q=1%0D%0A%0D%0AGET%20/admin%20HTTP/1.1%0D%0A%01%7F HTTP/1.1\r\n\r\n");
	/* a response: the reason phrase may hold spaces, not a line end */
	head_new(&h, f, 4, 1024, 1);
	assert_int_equal(http_head_set_sl(&h, HTTP_SL_REASON, "Not Found\r\nX: y", 15), 0);
	assert_int_equal(http_head_set_sl(&h, HTTP_SL_STATUS, "2 0", 3), 0);
	assert_string_equal(head_text(&h), "HTTP/1.1 2%200 Not Found%0D%0AX: y\r\n\r\n");
	/* already encoded text is left alone */
	head_new(&h, f, 4, 1024, 0);
	assert_int_equal(http_head_set_sl(&h, HTTP_SL_URI, "/%0d%0a", 7), 0);
	assert_string_equal(head_text(&h), "GET /%0d%0a HTTP/1.1\r\n\r\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_every_byte_and_place),
		cmocka_unit_test(test_encode_cut_at_every_length),
		cmocka_unit_test(test_clean_value_copied_as_is),
		cmocka_unit_test(test_fields_keep_their_lines),
		cmocka_unit_test(test_add_ref),
		cmocka_unit_test(test_start_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
