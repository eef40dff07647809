/* Unit tests for the HTTP/1.x head parser and the chunked framing scanner
 * (src/http/h1.c): table-driven, every row fed whole, one byte at a time
 * through the resumable mode, and from a buffer ending on a guard page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sluice/h1.h>

/* ---------------------------------------------------------------------- */
/* Guard-page buffers: a message placed so that its last byte is the last
 * byte before a PROT_NONE page, so any read past the end faults. */

struct guard {
	char  *map;
	size_t maplen;
	size_t data;   /* usable bytes before the guard page */
};

static void guard_init(struct guard *g, size_t need)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	g->data = (need / pg + 1) * pg;
	g->maplen = g->data + pg;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(g->map != MAP_FAILED);
	assert_int_equal(mprotect(g->map + g->data, pg, PROT_NONE), 0);
}

static void guard_free(struct guard *g)
{
	munmap(g->map, g->maplen);
}

/* Copies src[0..len) so that it ends right at the guard page. */
static char *guard_place(struct guard *g, const char *src, size_t len)
{
	char *p = g->map + g->data - len;

	assert_true(len <= g->data);
	memcpy(p, src, len);
	return p;
}

/* ---------------------------------------------------------------------- */
/* Head parser rows */

#define NEED 1            /* .err: h1_parse must keep asking for more bytes */
#define DEF_LIMIT 8192
#define DEF_MAXHDR 32

struct hexp {
	const char *name;     /* NULL ends the list */
	const char *value;
	int         idx;
};

struct h1_row {
	const char     *name;
	const char     *msg;
	size_t          len;
	size_t          hl;      /* expected head length; 0: the whole message */
	int             resp;    /* parse as a response to a <rmeth> request */
	enum h1_meth    rmeth;
	size_t          limit;   /* 0: DEF_LIMIT */
	int             maxhdr;  /* 0: DEF_MAXHDR */
	int             err;     /* 0: success; NEED; else the err_status */
	uint32_t        epos;    /* expected err_pos + 1; 0: not checked */
	/* on success */
	enum h1_meth    meth;
	enum h1_target  target;
	const char     *uri;     /* requests: required */
	int             status;
	const char     *reason;  /* responses: required */
	int             nh;
	unsigned        flags;   /* exact */
	uint64_t        clen;    /* checked when H1_F_CLEN is expected */
	uint32_t        skip;
	struct hexp     h[4];
	const char     *bug;     /* KNOWN BUG: a mismatch skips instead of failing */
	int             relax;   /* parsed with H1_F_RELAX (accept-invalid-http-*) */
};

/* A message whose bytes are all head, or a head followed by other bytes. */
#define M(s)     .msg = s, .len = sizeof(s) - 1
#define MB(h, b) .msg = h b, .len = sizeof(h b) - 1, .hl = sizeof(h) - 1

#define RQ11   (H1_F_VER_11 | H1_F_HOST)
#define RQ11NB (H1_F_VER_11 | H1_F_HOST | H1_F_NO_BODY)
#define RS11   (H1_F_RESP | H1_F_VER_11)
#define L1     "GET / HTTP/1.1\r\n"
#define HOST   "Host: a\r\n"
#define POST1  "POST /p HTTP/1.1\r\nHost: a\r\n"
#define OK1    "HTTP/1.1 200 OK\r\n"

/* Shorthand for a plain "GET / HTTP/1.1" + Host request with extra headers. */
#define GETH(extra, nhdr, fl) \
	M(L1 HOST extra "\r\n"), .meth = H1_M_GET, .uri = "/", .nh = (nhdr), .flags = (fl)
#define METH(m, id) \
	{ .name = "method_" m, M(m " /x HTTP/1.1\r\nHost: a\r\n\r\n"), .meth = id, .uri = "/x", \
	  .nh = 1, .flags = RQ11NB }

static struct h1_row h1_rows[] = {
	/* --- request basics --- */
	{ .name = "get_simple",
	  M("GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t/1\r\n\r\n"),
	  .meth = H1_M_GET, .target = H1_T_ORIGIN, .uri = "/index.html?q=1", .nh = 2, .flags = RQ11NB,
	  .h = { { "Host", "example.com", 0 }, { "User-Agent", "t/1", 1 } } },
	{ .name = "get_pipelined_next_request",
	  MB("GET /a HTTP/1.1\r\nHost: a\r\n\r\n", "GET /b HTTP/1.1\r\nHost: a\r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/a", .nh = 1, .flags = RQ11NB },
	{ .name = "leading_crlfs_skipped", M("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = RQ11NB, .skip = 4,
	  .h = { { "Host", "a", 0 } } },
	{ .name = "leading_bare_lfs_skipped", M("\n\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = RQ11NB, .skip = 4 },
	{ .name = "bare_lf_line_endings", M("GET / HTTP/1.1\nHost: a\nX: b\n\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 2, .flags = RQ11NB,
	  .h = { { "Host", "a", 0 }, { "X", "b", 1 } } },
	{ .name = "mixed_line_endings", M("GET / HTTP/1.1\r\nHost: a\nX: b\r\n\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 2, .flags = RQ11NB,
	  .h = { { "Host", "a", 0 }, { "X", "b", 1 } } },
	{ .name = "incomplete_no_empty_line", M(L1 HOST), .err = NEED },
	{ .name = "incomplete_final_cr", M(L1 HOST "\r"), .err = NEED },
	{ .name = "incomplete_only_empty_lines", M("\r\n\r\n\n"), .err = NEED },
	{ .name = "cr_cr_lf_is_not_the_empty_line", M(L1 HOST "\r\r\n\r\n"), .err = 400 },

	/* --- option accept-invalid-http-request|response (H1_F_RELAX) --- */
#define RLX (H1_F_RELAX | H1_F_RELAXED)
	{ .name = "fragment_refused", M("GET /a#f HTTP/1.1\r\nHost: a\r\n\r\n"), .err = 400, .epos = 7 },
	{ .name = "relax_fragment", M("GET /a#f HTTP/1.1\r\nHost: a\r\n\r\n"), .relax = 1,
	  .meth = H1_M_GET, .uri = "/a#f", .nh = 1, .flags = RQ11NB | RLX },
	{ .name = "relax_8bit_uri", M("GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n"), .relax = 1,
	  .meth = H1_M_GET, .uri = "/\xc3\xa9", .nh = 1, .flags = RQ11NB | RLX },
	{ .name = "relax_uri_still_no_del", M("GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n"),
	  .relax = 1, .err = 400 },
	{ .name = "relax_clean_request_not_flagged", M(L1 HOST "\r\n"), .relax = 1,
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = RQ11NB | H1_F_RELAX },
	{ .name = "relax_hdr_name", M(L1 HOST "X@y(z): 1\r\n\r\n"), .relax = 1,
	  .meth = H1_M_GET, .uri = "/", .nh = 2, .flags = RQ11NB | RLX,
	  .h = { { "X@y(z)", "1", 1 } } },
	{ .name = "relax_hdr_name_no_space", M(L1 HOST "X y: 1\r\n\r\n"), .relax = 1, .err = 400 },
	{ .name = "relax_hdr_name_no_tab", M(L1 HOST "X\ty: 1\r\n\r\n"), .relax = 1, .err = 400 },
	{ .name = "relax_te_space_colon_refused", M(POST1 "Transfer-Encoding : chunked\r\n\r\n"),
	  .relax = 1, .err = 400 },
	{ .name = "relax_te_ctl_refused", M(POST1 "Transfer-Encoding\x0b: chunked\r\n\r\n"),
	  .relax = 1, .err = 400 },
	{ .name = "relax_version_digits", M("GET / HTTP/1.10\r\nHost: a\r\n\r\n"), .relax = 1,
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = H1_F_HOST | H1_F_NO_BODY | RLX },
	{ .name = "relax_version_rtsp", M("GET / RTSP/1.0\r\nHost: a\r\n\r\n"), .relax = 1,
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = H1_F_HOST | H1_F_NO_BODY | RLX },
	{ .name = "relax_version_09", M("GET /x\r\n\r\n"), .relax = 1,
	  .meth = H1_M_GET, .uri = "/x", .nh = 0, .flags = H1_F_NO_BODY | H1_F_VER_NONE | RLX },
	{ .name = "version_09_refused", M("GET /x\r\n\r\n"), .err = 400 },
	{ .name = "relax_version_no_te", M("POST / HTTP/1.10\r\nHost: a\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n"), .relax = 1, .err = 400 },
	{ .name = "relax_response_version_digits", M("HTTP/1.10 200 OK\r\nX@y: 1\r\n\r\n"),
	  .relax = 1, .resp = 1, .rmeth = H1_M_GET, .status = 200, .reason = "OK", .nh = 1,
	  .flags = H1_F_RESP | H1_F_BODY_CLOSE | RLX },
	{ .name = "response_version_digits_refused", M("HTTP/1.10 200 OK\r\n\r\n"), .resp = 1,
	  .rmeth = H1_M_GET, .err = 502 },
	{ .name = "relax_response_rtsp_refused", M("RTSP/1.0 200 OK\r\n\r\n"), .relax = 1,
	  .resp = 1, .rmeth = H1_M_GET, .err = 502 },

	/* --- methods and targets --- */
	METH("GET", H1_M_GET), METH("HEAD", H1_M_HEAD), METH("POST", H1_M_POST),
	METH("PUT", H1_M_PUT), METH("DELETE", H1_M_DELETE), METH("OPTIONS", H1_M_OPTIONS),
	METH("TRACE", H1_M_TRACE), METH("PATCH", H1_M_PATCH), METH("PROPFIND", H1_M_OTHER),
	METH("M-SEARCH", H1_M_OTHER),
	/* methods are case-sensitive */
	METH("get", H1_M_OTHER), METH("Post", H1_M_OTHER), METH("GETS", H1_M_OTHER),
	{ .name = "method_connect", M("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
	  .meth = H1_M_CONNECT, .target = H1_T_AUTHORITY, .uri = "example.com:443", .nh = 1,
	  .flags = RQ11NB, .h = { { "Host", "example.com:443", 0 } } },
	{ .name = "connect_origin_form_rejected", M("CONNECT / HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 8 + 1 },
	{ .name = "connect_asterisk_rejected", M("CONNECT * HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "absolute_form", M("GET http://example.com/x?y HTTP/1.1\r\nHost: example.com\r\n\r\n"),
	  .meth = H1_M_GET, .target = H1_T_ABSOLUTE, .uri = "http://example.com/x?y", .nh = 1, .flags = RQ11NB },
	{ .name = "absolute_form_https_port",
	  M("POST https://example.com:8443/ HTTP/1.1\r\nHost: example.com:8443\r\nContent-Length: 0\r\n\r\n"),
	  .meth = H1_M_POST, .target = H1_T_ABSOLUTE, .uri = "https://example.com:8443/", .nh = 2,
	  .flags = RQ11NB | H1_F_CLEN, .clen = 0 },
	/* the authority of an absolute-form target must be the Host */
	{ .name = "absolute_form_host_differs",
	  M("GET http://admin.internal/ HTTP/1.1\r\nHost: public\r\n\r\n"), .err = 400, .epos = 43 + 1 },
	{ .name = "absolute_form_host_case", M("GET http://Example.COM/ HTTP/1.1\r\nHost: example.com\r\n\r\n"),
	  .meth = H1_M_GET, .target = H1_T_ABSOLUTE, .uri = "http://Example.COM/", .nh = 1, .flags = RQ11NB },
	{ .name = "absolute_form_default_port_in_target",
	  M("GET http://a:80/x HTTP/1.1\r\nHost: a\r\n\r\n"),
	  .meth = H1_M_GET, .target = H1_T_ABSOLUTE, .uri = "http://a:80/x", .nh = 1, .flags = RQ11NB },
	{ .name = "absolute_form_default_port_in_host",
	  M("GET HTTPS://a?q HTTP/1.1\r\nHost: a:443\r\n\r\n"),
	  .meth = H1_M_GET, .target = H1_T_ABSOLUTE, .uri = "HTTPS://a?q", .nh = 1, .flags = RQ11NB },
	{ .name = "absolute_form_other_port", M("GET http://a:8080/ HTTP/1.1\r\nHost: a\r\n\r\n"), .err = 400 },
	{ .name = "absolute_form_https_port_80", M("GET https://a:80/ HTTP/1.1\r\nHost: a\r\n\r\n"), .err = 400 },
	{ .name = "absolute_form_host_prefix", M("GET http://ab/ HTTP/1.1\r\nHost: a\r\n\r\n"), .err = 400 },
	{ .name = "absolute_form_empty_host_field", M("GET http://a/ HTTP/1.1\r\nHost:\r\n\r\n"), .err = 400 },
	{ .name = "absolute_form_userinfo",
	  M("GET http://public@admin.internal/ HTTP/1.1\r\nHost: public@admin.internal\r\n\r\n"),
	  .err = 400, .epos = 11 + 1 },
	{ .name = "absolute_form_empty_authority", M("GET http:///x HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "absolute_form_http10_without_host", M("GET http://a:81/ HTTP/1.0\r\n\r\n"),
	  .meth = H1_M_GET, .target = H1_T_ABSOLUTE, .uri = "http://a:81/", .nh = 0, .flags = H1_F_NO_BODY },
	{ .name = "absolute_form_http10_host_differs", M("GET http://a/ HTTP/1.0\r\nHost: b\r\n\r\n"), .err = 400 },
	{ .name = "absolute_form_no_scheme", M("GET example.com/x HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "absolute_form_one_slash", M("GET http:/x HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "absolute_form_empty_scheme", M("GET ://x HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "options_asterisk", M("OPTIONS * HTTP/1.1\r\n" HOST "\r\n"),
	  .meth = H1_M_OPTIONS, .target = H1_T_ASTERISK, .uri = "*", .nh = 1, .flags = RQ11NB },
	{ .name = "options_origin_form", M("OPTIONS /x HTTP/1.1\r\n" HOST "\r\n"),
	  .meth = H1_M_OPTIONS, .target = H1_T_ORIGIN, .uri = "/x", .nh = 1, .flags = RQ11NB },
	{ .name = "get_asterisk_rejected", M("GET * HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 4 + 1 },
	{ .name = "options_asterisk_suffix_rejected", M("OPTIONS *x HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },

	/* --- versions and Host --- */
	{ .name = "http10_without_host", M("GET / HTTP/1.0\r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 0, .flags = H1_F_NO_BODY },
	{ .name = "http10_keep_alive", M("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = H1_F_NO_BODY | H1_F_CONN_KA },
	{ .name = "http11_without_host", M(L1 "X: a\r\n\r\n"), .err = 400 },
	{ .name = "http11_absolute_without_host", M("GET http://a/ HTTP/1.1\r\n\r\n"), .err = 400 },
	{ .name = "two_host_headers", M(L1 HOST HOST "\r\n"), .err = 400, .epos = 25 + 1 },
	{ .name = "two_host_headers_case", M(L1 "host: a\r\nHOST: b\r\n\r\n"), .err = 400 },
	{ .name = "http10_two_host_headers", M("GET / HTTP/1.0\r\n" HOST HOST "\r\n"), .err = 400 },
	{ .name = "version_http20", M("GET / HTTP/2.0\r\n" HOST "\r\n"), .err = 505, .epos = 6 + 1 },
	{ .name = "version_http09", M("GET / HTTP/0.9\r\n" HOST "\r\n"), .err = 505 },
	/* pins today's behaviour; RFC 9112 2.3 says SHOULD be treated as 1.1 */
	{ .name = "version_http12", M("GET / HTTP/1.2\r\n" HOST "\r\n"), .err = 505 },
	{ .name = "version_garbage", M("GET / HTTX/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 6 + 1 },
	{ .name = "version_lowercase", M("GET / http/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "version_no_minor", M("GET / HTTP/1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "version_two_digit_minor", M("GET / HTTP/1.10\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "version_trailing_space", M("GET / HTTP/1.1 \r\n" HOST "\r\n"), .err = 400 },
	{ .name = "version_missing", M("GET /\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "version_letters", M("GET / HTTP/x.y\r\n" HOST "\r\n"), .err = 400 },

	/* --- request line characters --- */
	{ .name = "uri_space", M("GET /a b HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "uri_double_space_before", M("GET  / HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 4 + 1 },
	{ .name = "uri_ctl", M("GET /a\001b HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 6 + 1 },
	{ .name = "uri_tab", M("GET /a\tb HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 6 + 1 },
	{ .name = "uri_del", M("GET /a\177b HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 6 + 1 },
	{ .name = "uri_8bit_80", M("GET /a\200b HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 6 + 1 },
	{ .name = "uri_8bit_ff", M("GET /\377 HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 5 + 1 },
	{ .name = "uri_nul", M("GET /a\000b HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 6 + 1 },
	{ .name = "request_line_bare_cr", M("GET /a\rb HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 6 + 1 },
	{ .name = "request_line_cr_cr_lf", M("GET / HTTP/1.1\r\r\n" HOST "\r\n"), .err = 400, .epos = 14 + 1 },
	{ .name = "empty_method", M(" / HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 0 + 1 },
	{ .name = "method_bad_char", M("GE(T / HTTP/1.1\r\n" HOST "\r\n"), .err = 400, .epos = 2 + 1 },
	{ .name = "method_tab_separator", M("GET\t/ HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },
	{ .name = "method_8bit", M("G\303\211T / HTTP/1.1\r\n" HOST "\r\n"), .err = 400 },

	/* --- header syntax --- */
	{ .name = "hdr_space_before_colon", M(L1 "Host : a\r\n\r\n"), .err = 400, .epos = 20 + 1 },
	{ .name = "hdr_tab_before_colon", M(L1 "Host\t: a\r\n\r\n"), .err = 400, .epos = 20 + 1 },
	{ .name = "hdr_empty_name", M(L1 HOST ": b\r\n\r\n"), .err = 400, .epos = 25 + 1 },
	{ .name = "hdr_name_with_space", M(L1 HOST "X Y: a\r\n\r\n"), .err = 400 },
	{ .name = "hdr_name_bad_char", M(L1 HOST "X(: a\r\n\r\n"), .err = 400, .epos = 26 + 1 },
	{ .name = "hdr_name_8bit", M(L1 HOST "X\200: a\r\n\r\n"), .err = 400 },
	{ .name = "hdr_name_nul", M(L1 HOST "X\000: a\r\n\r\n"), .err = 400 },
	{ .name = "hdr_no_colon", M(L1 HOST "Xyz\r\n\r\n"), .err = 400 },
	{ .name = "hdr_value_ctl", M(L1 HOST "X: a\001b\r\n\r\n"), .err = 400, .epos = 29 + 1 },
	{ .name = "hdr_value_del", M(L1 HOST "X: a\177b\r\n\r\n"), .err = 400, .epos = 29 + 1 },
	{ .name = "hdr_value_esc", M(L1 HOST "X: a\033b\r\n\r\n"), .err = 400 },
	{ .name = "hdr_value_nul", M(L1 HOST "X: a\000b\r\n\r\n"), .err = 400, .epos = 29 + 1 },
	{ .name = "hdr_value_bare_cr", M(L1 HOST "X: a\rb\r\n\r\n"), .err = 400, .epos = 29 + 1 },
	{ .name = "hdr_value_cr_cr_lf", M(L1 HOST "X: a\r\r\n\r\n"), .err = 400, .epos = 29 + 1 },
	{ .name = "hdr_value_tab_and_obs_text", GETH("X: a\tb\r\nY: caf\303\251\r\n", 3, RQ11NB),
	  .h = { { "X", "a\tb", 1 }, { "Y", "caf\303\251", 2 } } },
	{ .name = "hdr_value_ows_trimmed", GETH("X: \t v v \t\r\n", 2, RQ11NB), .h = { { "X", "v v", 1 } } },
	{ .name = "hdr_value_empty", GETH("X:\r\nY:   \r\n", 3, RQ11NB),
	  .h = { { "X", "", 1 }, { "Y", "", 2 } } },
	{ .name = "hdr_value_no_space", GETH("X:b\r\n", 2, RQ11NB), .h = { { "X", "b", 1 } } },
	{ .name = "hdr_value_with_colons", GETH("X: a:b: c\r\n", 2, RQ11NB), .h = { { "X", "a:b: c", 1 } } },
	{ .name = "hdr_name_all_tchars", GETH("!#$%&'*+-.^_`|~09AZaz: v\r\n", 2, RQ11NB),
	  .h = { { "!#$%&'*+-.^_`|~09AZaz", "v", 1 } } },
	{ .name = "obs_fold_joined",
	  M(L1 HOST "X: one\r\n two\r\n\tthree\r\nY: y\r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 3, .flags = RQ11NB | H1_F_OBS_FOLD,
	  .h = { { "X", "one   two  \tthree", 1 }, { "Y", "y", 2 } } },
	{ .name = "obs_fold_bare_lf", M("GET / HTTP/1.1\nHost: a\nX: one\n two\n\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 2, .flags = RQ11NB | H1_F_OBS_FOLD,
	  .h = { { "X", "one  two", 1 } } },
	{ .name = "obs_fold_whitespace_line", M(L1 HOST "X: one\r\n \r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 2, .flags = RQ11NB | H1_F_OBS_FOLD,
	  .h = { { "X", "one", 1 } } },
	{ .name = "obs_fold_of_host", M(L1 "Host:\r\n a\r\n\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = RQ11NB | H1_F_OBS_FOLD,
	  .h = { { "Host", "a", 0 } } },
	{ .name = "obs_fold_with_ctl", M(L1 HOST "X: one\r\n t\001wo\r\n\r\n"), .err = 400 },
	{ .name = "ws_before_first_header", M(L1 " Host: a\r\n\r\n"), .err = 400, .epos = 16 + 1 },
	{ .name = "tab_before_first_header", M(L1 "\tHost: a\r\n\r\n"), .err = 400, .epos = 16 + 1 },

	/* --- Content-Length --- */
	{ .name = "clen_valid", M(POST1 "Content-Length: 42\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_CLEN, .clen = 42,
	  .h = { { "Content-Length", "42", 1 } } },
	{ .name = "clen_zero_no_body", M(POST1 "Content-Length: 0\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11NB | H1_F_CLEN, .clen = 0 },
	{ .name = "clen_body_follows", MB(POST1 "Content-Length: 3\r\n\r\n", "abc"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_CLEN, .clen = 3 },
	{ .name = "clen_list_identical", M(POST1 "Content-Length: 5, 5\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_CLEN, .clen = 5,
	  .h = { { "Content-Length", "5, 5", 1 } } },
	{ .name = "clen_list_no_space", M(POST1 "Content-Length: 5,5\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_CLEN, .clen = 5 },
	{ .name = "clen_two_headers_identical", M(POST1 "Content-Length: 5\r\ncontent-length: 5\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 3, .flags = RQ11 | H1_F_CLEN, .clen = 5 },
	{ .name = "clen_leading_zeros", M(POST1 "Content-Length: 007\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_CLEN, .clen = 7 },
	/* A length near 2^64 only serves to make offsets wrap: at most 2^62. */
	{ .name = "clen_2pow62", M(POST1 "Content-Length: 4611686018427387904\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_CLEN, .clen = 1ULL << 62 },
	{ .name = "clen_2pow62_plus_1", M(POST1 "Content-Length: 4611686018427387905\r\n\r\n"),
	  .err = 400, .epos = 43 + 1 },
	{ .name = "clen_1e19", M(POST1 "Content-Length: 10000000000000000000\r\n\r\n"), .err = 400 },
	{ .name = "clen_2pow64_minus_1", M(POST1 "Content-Length: 18446744073709551615\r\n\r\n"), .err = 400 },
	{ .name = "clen_list_huge", M(POST1 "Content-Length: 18446744073709551615, 18446744073709551615\r\n\r\n"),
	  .err = 400 },
	{ .name = "clen_list_conflict", M(POST1 "Content-Length: 5, 6\r\n\r\n"), .err = 400 },
	{ .name = "clen_two_headers_conflict", M(POST1 "Content-Length: 5\r\nContent-Length: 6\r\n\r\n"), .err = 400 },
	{ .name = "clen_alpha", M(POST1 "Content-Length: abc\r\n\r\n"), .err = 400 },
	{ .name = "clen_negative", M(POST1 "Content-Length: -1\r\n\r\n"), .err = 400 },
	{ .name = "clen_plus_sign", M(POST1 "Content-Length: +5\r\n\r\n"), .err = 400 },
	{ .name = "clen_trailing_letter", M(POST1 "Content-Length: 5a\r\n\r\n"), .err = 400 },
	{ .name = "clen_hex", M(POST1 "Content-Length: 0x10\r\n\r\n"), .err = 400 },
	{ .name = "clen_empty", M(POST1 "Content-Length:\r\n\r\n"), .err = 400 },
	{ .name = "clen_trailing_comma", M(POST1 "Content-Length: 5,\r\n\r\n"), .err = 400 },
	{ .name = "clen_leading_comma", M(POST1 "Content-Length: ,5\r\n\r\n"), .err = 400 },
	{ .name = "clen_inner_space", M(POST1 "Content-Length: 5 5\r\n\r\n"), .err = 400 },
	{ .name = "clen_2pow64_overflow", M(POST1 "Content-Length: 18446744073709551616\r\n\r\n"), .err = 400 },
	{ .name = "clen_long_overflow", M(POST1 "Content-Length: 99999999999999999999999\r\n\r\n"), .err = 400 },

	/* --- Transfer-Encoding --- */
	{ .name = "te_chunked", M(POST1 "Transfer-Encoding: chunked\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_TE | H1_F_CHUNKED },
	{ .name = "te_chunked_case", M(POST1 "transfer-encoding: Chunked\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_TE | H1_F_CHUNKED },
	{ .name = "te_chunked_ows_and_empty_elements", M(POST1 "Transfer-Encoding: \t, chunked ,\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 2, .flags = RQ11 | H1_F_TE | H1_F_CHUNKED },
	/* a request says exactly "chunked": nothing else, no parameters */
	{ .name = "te_gzip_chunked", M(POST1 "Transfer-Encoding: gzip, chunked\r\n\r\n"), .err = 400, .epos = 46 + 1 },
	{ .name = "te_gzip_chunked_two_headers",
	  M(POST1 "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"), .err = 400 },
	{ .name = "te_coding_parameters", M(POST1 "Transfer-Encoding: gzip;level=9 , chunked\r\n\r\n"), .err = 400 },
	{ .name = "te_chunked_parameter", M(POST1 "Transfer-Encoding: chunked;q=1\r\n\r\n"), .err = 400, .epos = 53 + 1 },
	{ .name = "te_chunked_bws_parameter", M(POST1 "Transfer-Encoding: chunked ;q=1\r\n\r\n"), .err = 400 },
	{ .name = "te_chunked_garbage", M(POST1 "Transfer-Encoding: chunked x\r\n\r\n"), .err = 400 },
	{ .name = "te_chunked_then_chunked_parameter",
	  M(POST1 "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked;x\r\n\r\n"), .err = 400 },
	{ .name = "te_chunked_gzip", M(POST1 "Transfer-Encoding: chunked, gzip\r\n\r\n"), .err = 400 },
	{ .name = "te_chunked_chunked", M(POST1 "Transfer-Encoding: chunked, chunked\r\n\r\n"), .err = 400 },
	{ .name = "te_chunked_two_headers",
	  M(POST1 "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), .err = 400 },
	{ .name = "te_gzip_only_request", M(POST1 "Transfer-Encoding: gzip\r\n\r\n"), .err = 400 },
	{ .name = "te_empty_request", M(POST1 "Transfer-Encoding:\r\n\r\n"), .err = 400 },
	{ .name = "te_unknown", M(POST1 "Transfer-Encoding: foo\r\n\r\n"), .err = 400, .epos = 46 + 1 },
	{ .name = "te_identity_unknown", M(POST1 "Transfer-Encoding: identity\r\n\r\n"), .err = 400 },
	{ .name = "te_unknown_then_chunked", M(POST1 "Transfer-Encoding: foo, chunked\r\n\r\n"), .err = 400 },
	{ .name = "te_in_http10", M("POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), .err = 400 },
	{ .name = "te_in_http10_with_clen",
	  M("POST /p HTTP/1.0\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), .err = 400 },
	{ .name = "te_and_clen_drops_clen",
	  M(POST1 "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 3,
	  .flags = RQ11 | H1_F_TE | H1_F_CHUNKED | H1_F_CLEN_DROPPED | H1_F_CONN_CLOSE },
	{ .name = "clen_after_te_drops_clen",
	  M(POST1 "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 3,
	  .flags = RQ11 | H1_F_TE | H1_F_CHUNKED | H1_F_CLEN_DROPPED | H1_F_CONN_CLOSE },

	/* --- Connection, Upgrade, Expect --- */
	{ .name = "conn_close", GETH("Connection: close\r\n", 2, RQ11NB | H1_F_CONN_CLOSE) },
	{ .name = "conn_keep_alive", GETH("Connection: Keep-Alive\r\n", 2, RQ11NB | H1_F_CONN_KA) },
	{ .name = "conn_upgrade", GETH("Connection: Upgrade\r\nUpgrade: websocket\r\n", 3,
	  RQ11NB | H1_F_CONN_UPG | H1_F_UPGRADE) },
	{ .name = "conn_token_list", GETH("Connection: keep-alive, Upgrade ,close\r\n", 2,
	  RQ11NB | H1_F_CONN_KA | H1_F_CONN_UPG | H1_F_CONN_CLOSE) },
	{ .name = "conn_two_headers", GETH("Connection: close\r\nConnection: upgrade\r\n", 3,
	  RQ11NB | H1_F_CONN_CLOSE | H1_F_CONN_UPG) },
	{ .name = "conn_unknown_tokens", GETH("Connection: closed, foo, keep-alive2\r\n", 2, RQ11NB) },
	{ .name = "expect_100_continue", M(POST1 "Content-Length: 10\r\nExpect: 100-continue\r\n\r\n"),
	  .meth = H1_M_POST, .uri = "/p", .nh = 3, .flags = RQ11 | H1_F_CLEN | H1_F_EXPECT_100, .clen = 10 },
	{ .name = "expect_100_continue_case", GETH("Expect: 100-Continue\r\n", 2, RQ11NB | H1_F_EXPECT_100) },
	{ .name = "expect_other", GETH("Expect: 100-continue-x\r\n", 2, RQ11NB) },

	/* --- maxhdr and size limits --- */
	{ .name = "maxhdr_exact", .maxhdr = 2, GETH("X: 1\r\n", 2, RQ11NB) },
	{ .name = "maxhdr_exceeded", .maxhdr = 2, M(L1 HOST "X: 1\r\nY: 2\r\n\r\n"), .err = 400, .epos = 31 + 1 },
	{ .name = "limit_unterminated_request_line", .limit = 32,
	  M("GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), .err = 414, .epos = 32 + 1 },
	{ .name = "limit_request_line_ends_beyond", .limit = 32,
	  M("GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: a\r\n\r\n"), .err = 414 },
	{ .name = "limit_long_headers", .limit = 40,
	  M(L1 HOST "X: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n\r\n"), .err = 431, .epos = 40 + 1 },
	{ .name = "limit_exactly_fits", .limit = 27, M(L1 HOST "\r\n"),
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = RQ11NB },
	{ .name = "limit_one_byte_short", .limit = 26, M(L1 HOST "\r\n"), .err = 431 },
	{ .name = "limit_body_beyond_is_fine", .limit = 27, MB(L1 HOST "\r\n", "xxxxxxxxxxxxxxxxxxxx"),
	  .meth = H1_M_GET, .uri = "/", .nh = 1, .flags = RQ11NB },

	/* --- responses --- */
	{ .name = "resp_200_clen", .resp = 1, .rmeth = H1_M_GET,
	  MB(OK1 "Content-Length: 5\r\n\r\n", "hello"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = RS11 | H1_F_CLEN, .clen = 5 },
	{ .name = "resp_200_chunked", .resp = 1, .rmeth = H1_M_GET,
	  MB(OK1 "Transfer-Encoding: chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = RS11 | H1_F_TE | H1_F_CHUNKED },
	{ .name = "resp_200_until_close", .resp = 1, .rmeth = H1_M_GET, M(OK1 "\r\n"),
	  .status = 200, .reason = "OK", .nh = 0, .flags = RS11 | H1_F_BODY_CLOSE },
	{ .name = "resp_http10_clen", .resp = 1, .rmeth = H1_M_GET,
	  M("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = H1_F_RESP | H1_F_CLEN, .clen = 2 },
	{ .name = "resp_http10_until_close", .resp = 1, .rmeth = H1_M_GET, M("HTTP/1.0 200 OK\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 0, .flags = H1_F_RESP | H1_F_BODY_CLOSE },
	{ .name = "resp_bare_lf", .resp = 1, .rmeth = H1_M_GET, M("HTTP/1.1 404 Not Found\nContent-Length: 0\n\n"),
	  .status = 404, .reason = "Not Found", .nh = 1, .flags = RS11 | H1_F_CLEN, .clen = 0 },
	{ .name = "resp_leading_crlf", .resp = 1, .rmeth = H1_M_GET, M("\r\n" OK1 "Content-Length: 0\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = RS11 | H1_F_CLEN, .clen = 0, .skip = 2 },
	{ .name = "resp_204", .resp = 1, .rmeth = H1_M_GET, M("HTTP/1.1 204 No Content\r\n\r\n"),
	  .status = 204, .reason = "No Content", .flags = RS11 | H1_F_NO_BODY },
	{ .name = "resp_204_clen", .resp = 1, .rmeth = H1_M_GET,
	  M("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"),
	  .status = 204, .reason = "No Content", .nh = 1, .flags = RS11 | H1_F_NO_BODY },
	{ .name = "resp_304_clen", .resp = 1, .rmeth = H1_M_GET,
	  M("HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n"),
	  .status = 304, .reason = "Not Modified", .nh = 1, .flags = RS11 | H1_F_NO_BODY },
	{ .name = "resp_304_chunked", .resp = 1, .rmeth = H1_M_GET,
	  M("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"),
	  .status = 304, .reason = "Not Modified", .nh = 1, .flags = RS11 | H1_F_TE | H1_F_NO_BODY },
	{ .name = "resp_100_continue", .resp = 1, .rmeth = H1_M_POST, M("HTTP/1.1 100 Continue\r\n\r\n"),
	  .status = 100, .reason = "Continue", .flags = RS11 | H1_F_NO_BODY },
	{ .name = "resp_103_early_hints", .resp = 1, .rmeth = H1_M_GET,
	  M("HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"),
	  .status = 103, .reason = "Early Hints", .nh = 1, .flags = RS11 | H1_F_NO_BODY,
	  .h = { { "Link", "</s.css>; rel=preload", 0 } } },
	{ .name = "resp_101_upgrade", .resp = 1, .rmeth = H1_M_GET,
	  M("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"),
	  .status = 101, .reason = "Switching Protocols", .nh = 2,
	  .flags = RS11 | H1_F_NO_BODY | H1_F_CONN_UPG | H1_F_UPGRADE },
	{ .name = "resp_to_head_clen", .resp = 1, .rmeth = H1_M_HEAD, M(OK1 "Content-Length: 100\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = RS11 | H1_F_NO_BODY },
	{ .name = "resp_to_head_chunked", .resp = 1, .rmeth = H1_M_HEAD, M(OK1 "Transfer-Encoding: chunked\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = RS11 | H1_F_TE | H1_F_NO_BODY },
	{ .name = "resp_to_head_no_framing", .resp = 1, .rmeth = H1_M_HEAD, M(OK1 "\r\n"),
	  .status = 200, .reason = "OK", .flags = RS11 | H1_F_NO_BODY },
	{ .name = "resp_to_connect_200", .resp = 1, .rmeth = H1_M_CONNECT, M("HTTP/1.1 200 Connection established\r\n\r\n"),
	  .status = 200, .reason = "Connection established", .flags = RS11 | H1_F_NO_BODY },
	{ .name = "resp_to_connect_407", .resp = 1, .rmeth = H1_M_CONNECT,
	  M("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"),
	  .status = 407, .reason = "Proxy Authentication Required", .nh = 1, .flags = RS11 | H1_F_CLEN, .clen = 0 },
	{ .name = "resp_te_gzip_until_close", .resp = 1, .rmeth = H1_M_GET, M(OK1 "Transfer-Encoding: gzip\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = RS11 | H1_F_TE | H1_F_BODY_CLOSE },
	{ .name = "resp_te_gzip_and_clen", .resp = 1, .rmeth = H1_M_GET,
	  M(OK1 "Transfer-Encoding: gzip\r\nContent-Length: 10\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 2,
	  .flags = RS11 | H1_F_TE | H1_F_BODY_CLOSE | H1_F_CLEN_DROPPED | H1_F_CONN_CLOSE },
	{ .name = "resp_te_chunked_and_clen", .resp = 1, .rmeth = H1_M_GET,
	  M(OK1 "Content-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 2,
	  .flags = RS11 | H1_F_TE | H1_F_CHUNKED | H1_F_CLEN_DROPPED | H1_F_CONN_CLOSE },
	{ .name = "resp_conn_close", .resp = 1, .rmeth = H1_M_GET,
	  M(OK1 "Content-Length: 1\r\nConnection: close\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 2, .flags = RS11 | H1_F_CLEN | H1_F_CONN_CLOSE, .clen = 1 },
	{ .name = "resp_no_reason", .resp = 1, .rmeth = H1_M_GET, M("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"),
	  .status = 200, .reason = "", .nh = 1, .flags = RS11 | H1_F_CLEN },
	{ .name = "resp_empty_reason", .resp = 1, .rmeth = H1_M_GET, M("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n"),
	  .status = 200, .reason = "", .nh = 1, .flags = RS11 | H1_F_CLEN },
	{ .name = "resp_reason_tab_obs_text", .resp = 1, .rmeth = H1_M_GET,
	  M("HTTP/1.1 200 O\tK \303\251\r\nContent-Length: 0\r\n\r\n"),
	  .status = 200, .reason = "O\tK \303\251", .nh = 1, .flags = RS11 | H1_F_CLEN },
	{ .name = "resp_status_599", .resp = 1, .rmeth = H1_M_GET, M("HTTP/1.1 599 X\r\nContent-Length: 0\r\n\r\n"),
	  .status = 599, .reason = "X", .nh = 1, .flags = RS11 | H1_F_CLEN },
	{ .name = "resp_status_two_digits", .resp = 1, M("HTTP/1.1 20 OK\r\n\r\n"), .err = 502, .epos = 11 + 1 },
	{ .name = "resp_status_letter", .resp = 1, M("HTTP/1.1 2x0 OK\r\n\r\n"), .err = 502, .epos = 10 + 1 },
	{ .name = "resp_status_099", .resp = 1, M("HTTP/1.1 099 OK\r\n\r\n"), .err = 502, .epos = 9 + 1 },
	{ .name = "resp_status_000", .resp = 1, M("HTTP/1.1 000 OK\r\n\r\n"), .err = 502 },
	{ .name = "resp_status_four_digits", .resp = 1, M("HTTP/1.1 2000 OK\r\n\r\n"), .err = 502, .epos = 12 + 1 },
	{ .name = "resp_status_double_space", .resp = 1, M("HTTP/1.1  200 OK\r\n\r\n"), .err = 502 },
	{ .name = "resp_status_tab", .resp = 1, M("HTTP/1.1\t200 OK\r\n\r\n"), .err = 502 },
	{ .name = "resp_status_line_short", .resp = 1, M("HTTP/1.1\r\n\r\n"), .err = 502 },
	{ .name = "resp_status_missing", .resp = 1, M("HTTP/1.1 \r\n\r\n"), .err = 502 },
	{ .name = "resp_bad_protocol", .resp = 1, M("HTTX/1.1 200 OK\r\n\r\n"), .err = 502 },
	{ .name = "resp_http20", .resp = 1, M("HTTP/2.0 200 OK\r\n\r\n"), .err = 502 },
	{ .name = "resp_reason_ctl", .resp = 1, M("HTTP/1.1 200 O\001K\r\n\r\n"), .err = 502, .epos = 14 + 1 },
	{ .name = "resp_reason_del", .resp = 1, M("HTTP/1.1 200 O\177K\r\n\r\n"), .err = 502, .epos = 14 + 1 },
	{ .name = "resp_reason_nul", .resp = 1, M("HTTP/1.1 200 O\000K\r\n\r\n"), .err = 502 },
	{ .name = "resp_reason_bare_cr", .resp = 1, M("HTTP/1.1 200 O\rK\r\n\r\n"), .err = 502 },
	{ .name = "resp_clen_invalid", .resp = 1, M(OK1 "Content-Length: 1x\r\n\r\n"), .err = 502 },
	{ .name = "resp_clen_conflict", .resp = 1, M(OK1 "Content-Length: 1\r\nContent-Length: 2\r\n\r\n"), .err = 502 },
	{ .name = "resp_te_chunked_gzip", .resp = 1, M(OK1 "Transfer-Encoding: chunked, gzip\r\n\r\n"), .err = 502 },
	/* codings before chunked are end-to-end: forwarded as chunked */
	{ .name = "resp_te_gzip_chunked", .resp = 1, .rmeth = H1_M_GET,
	  M(OK1 "Transfer-Encoding: gzip;level=9 , chunked\r\n\r\n"),
	  .status = 200, .reason = "OK", .nh = 1, .flags = RS11 | H1_F_TE | H1_F_CHUNKED },
	{ .name = "resp_te_chunked_parameter", .resp = 1, M(OK1 "Transfer-Encoding: chunked;q=1\r\n\r\n"), .err = 502 },
	{ .name = "resp_te_chunked_chunked", .resp = 1, M(OK1 "Transfer-Encoding: chunked, chunked\r\n\r\n"), .err = 502 },
	{ .name = "resp_te_unknown_then_chunked", .resp = 1, M(OK1 "Transfer-Encoding: foo, chunked\r\n\r\n"), .err = 502 },
	{ .name = "resp_te_gzip_garbage", .resp = 1, M(OK1 "Transfer-Encoding: gzip x, chunked\r\n\r\n"), .err = 502 },
	{ .name = "resp_clen_too_large", .resp = 1, M(OK1 "Content-Length: 18446744073709551000\r\n\r\n"), .err = 502 },
	{ .name = "resp_te_unknown", .resp = 1, M(OK1 "Transfer-Encoding: foo\r\n\r\n"), .err = 502 },
	{ .name = "resp_te_in_http10", .resp = 1, M("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), .err = 502 },
	{ .name = "resp_hdr_space_before_colon", .resp = 1, M(OK1 "Server : x\r\n\r\n"), .err = 502 },
	{ .name = "resp_hdr_value_ctl", .resp = 1, M(OK1 "Server: x\001\r\n\r\n"), .err = 502 },
	{ .name = "resp_ws_before_first_header", .resp = 1, M(OK1 " Server: x\r\n\r\n"), .err = 502 },
	{ .name = "resp_maxhdr_exceeded", .resp = 1, .maxhdr = 1, M(OK1 "A: 1\r\nB: 2\r\n\r\n"), .err = 502 },
	{ .name = "resp_limit_exceeded", .resp = 1, .limit = 24, M(OK1 "Server: xxxxxxxxxx\r\n\r\n"), .err = 502 },
	{ .name = "resp_incomplete", .resp = 1, M(OK1 "Content-Length: 5\r\n"), .err = NEED },
};

/* Generated rows (filled in by main()): heads spanning several pages. */
static char gen_many_hdrs[4096], gen_long_value[6000];

static struct h1_row h1_gen_rows[] = {
	{ .name = "gen_100_headers", .maxhdr = 101,
	  .meth = H1_M_GET, .uri = "/", .nh = 101, .flags = RQ11NB,
	  .h = { { "Host", "a", 0 }, { "X-H000", "v000", 1 }, { "X-H099", "v099", 100 } } },
	{ .name = "gen_100_headers_maxhdr_100", .maxhdr = 100, .err = 400 },
	{ .name = "gen_5000_byte_value", .meth = H1_M_GET, .uri = "/", .nh = 2, .flags = RQ11NB },
	{ .name = "gen_5000_byte_value_limit_4096", .limit = 4096, .err = 431 },
};

static void h1_gen_init(void)
{
	size_t n = 0;

	n += (size_t)sprintf(gen_many_hdrs + n, "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 0; i < 100; i++)
		n += (size_t)sprintf(gen_many_hdrs + n, "X-H%03d: v%03d\r\n", i, i);
	n += (size_t)sprintf(gen_many_hdrs + n, "\r\n");
	h1_gen_rows[0].msg = h1_gen_rows[1].msg = gen_many_hdrs;
	h1_gen_rows[0].len = h1_gen_rows[1].len = n;

	n = (size_t)sprintf(gen_long_value, "GET / HTTP/1.1\r\nHost: a\r\nX-Long: ");
	memset(gen_long_value + n, 'v', 5000);
	n += 5000;
	n += (size_t)sprintf(gen_long_value + n, "\r\n\r\n");
	h1_gen_rows[2].msg = h1_gen_rows[3].msg = gen_long_value;
	h1_gen_rows[2].len = h1_gen_rows[3].len = n;
}

/* ---------------------------------------------------------------------- */
/* Checks. Each returns 0, or -1 after writing the reason into <why>, so a
 * KNOWN BUG row can be skipped instead of failed. */

__attribute__((format(printf, 3, 4)))
static int why_fmt(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

#define WHY(...) why_fmt(why, whylen, __VA_ARGS__)

static int slice_eq(const char *buf, struct h1_slice s, const char *exp)
{
	return s.len == strlen(exp) && memcmp(buf + s.off, exp, s.len) == 0;
}

static int is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Properties of every successful parse, whatever the row. */
static int check_invariants(const char *buf, size_t len, const struct h1_msg *m, int ret,
                            char *why, size_t whylen)
{
	if ((size_t)ret > len || m->head_len != (uint32_t)ret || buf[ret - 1] != '\n')
		return WHY("head_len %u / ret %d / len %zu inconsistent", m->head_len, ret, len);
	if (m->nhdrs < 0 || m->nhdrs > m->maxhdr)
		return WHY("nhdrs %d out of range", m->nhdrs);
	for (int i = 0; i < m->nhdrs; i++) {
		const struct h1_hdr *h = &m->hdrs[i];

		if (!h->name.len || (uint64_t)h->name.off + h->name.len > (uint64_t)ret ||
		    (uint64_t)h->value.off + h->value.len > (uint64_t)ret)
			return WHY("header %d slice out of the head", i);
		for (uint32_t k = 0; k < h->name.len; k++)
			if (!is_tchar((unsigned char)buf[h->name.off + k]) &&
			    (!(m->flags & H1_F_RELAX) || (unsigned char)buf[h->name.off + k] <= 0x20 ||
			     buf[h->name.off + k] == ':' || buf[h->name.off + k] == 0x7f))
				return WHY("header %d name has a non-tchar", i);
		for (uint32_t k = 0; k < h->value.len; k++) {
			unsigned char c = (unsigned char)buf[h->value.off + k];

			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return WHY("header %d value has CTL 0x%02x", i, c);
		}
		if (h->value.len && (buf[h->value.off] == ' ' || buf[h->value.off] == '\t' ||
		                     buf[h->value.off + h->value.len - 1] == ' ' ||
		                     buf[h->value.off + h->value.len - 1] == '\t'))
			return WHY("header %d value not trimmed", i);
	}
	if (!(m->flags & H1_F_RESP) && (uint64_t)m->uri.off + m->uri.len > (uint64_t)ret)
		return WHY("uri slice out of the head");
	if ((m->flags & H1_F_CLEN) && (m->flags & H1_F_CHUNKED))
		return WHY("both CLEN and CHUNKED");
	return 0;
}

static int check_result(const struct h1_row *r, const char *buf, size_t len,
                        const struct h1_msg *m, int ret, char *why, size_t whylen)
{
	size_t hl = r->hl ? r->hl : r->len;

	if (r->err == NEED) {
		if (ret != 0)
			return WHY("returned %d (err %d \"%s\"), expected 0 (need more)",
				   ret, m->err_status, m->err_msg ? m->err_msg : "");
		return 0;
	}
	if (r->err) {
		if (ret != -1)
			return WHY("returned %d, expected -1 with %d", ret, r->err);
		if (m->err_status != r->err)
			return WHY("err_status %d (\"%s\" at %u), expected %d",
				   m->err_status, m->err_msg ? m->err_msg : "", m->err_pos, r->err);
		if (!m->err_msg)
			return WHY("err_msg not set");
		if (m->err_pos > len)
			return WHY("err_pos %u beyond the %zu bytes", m->err_pos, len);
		if (r->epos && m->err_pos != r->epos - 1)
			return WHY("err_pos %u (\"%s\"), expected %u", m->err_pos, m->err_msg, r->epos - 1);
		return 0;
	}
	if (ret != (int)hl)
		return WHY("returned %d (err %d \"%s\" at %u), expected %zu",
			   ret, m->err_status, m->err_msg ? m->err_msg : "", m->err_pos, hl);
	if (check_invariants(buf, len, m, ret, why, whylen))
		return -1;
	if (m->flags != r->flags)
		return WHY("flags 0x%04x, expected 0x%04x", m->flags, r->flags);
	if ((r->flags & H1_F_CLEN) && m->clen != r->clen)
		return WHY("clen %llu, expected %llu", (unsigned long long)m->clen, (unsigned long long)r->clen);
	if (m->nhdrs != r->nh)
		return WHY("nhdrs %d, expected %d", m->nhdrs, r->nh);
	if (m->skip != r->skip)
		return WHY("skip %u, expected %u", m->skip, r->skip);
	if (r->resp) {
		if (m->meth_id != r->rmeth)
			return WHY("response meth_id %d, expected the request's %d", m->meth_id, r->rmeth);
		if (m->status != r->status)
			return WHY("status %d, expected %d", m->status, r->status);
		if (!r->reason || !slice_eq(buf, m->reason, r->reason))
			return WHY("reason \"%.*s\", expected \"%s\"", (int)m->reason.len,
				   buf + m->reason.off, r->reason ? r->reason : "(row lacks .reason)");
	} else {
		if (m->meth_id != r->meth)
			return WHY("meth_id %d, expected %d", m->meth_id, r->meth);
		if (m->target != r->target)
			return WHY("target %d, expected %d", m->target, r->target);
		if (!r->uri || !slice_eq(buf, m->uri, r->uri))
			return WHY("uri \"%.*s\", expected \"%s\"", (int)m->uri.len, buf + m->uri.off,
				   r->uri ? r->uri : "(row lacks .uri)");
		if (m->meth.off != r->skip || buf[m->meth.off + m->meth.len] != ' ')
			return WHY("method slice %u+%u misplaced", m->meth.off, m->meth.len);
	}
	for (const struct hexp *e = r->h; e < r->h + 4 && e->name; e++) {
		const struct h1_hdr *h;

		if (e->idx >= m->nhdrs)
			return WHY("no header #%d (%s)", e->idx, e->name);
		h = &m->hdrs[e->idx];
		if (!slice_eq(buf, h->name, e->name) || !h1_hdr_is(buf, h, e->name))
			return WHY("header #%d name \"%.*s\", expected \"%s\"", e->idx,
				   (int)h->name.len, buf + h->name.off, e->name);
		if (!slice_eq(buf, h->value, e->value))
			return WHY("header #%d value \"%.*s\", expected \"%s\"", e->idx,
				   (int)h->value.len, buf + h->value.off, e->value);
	}
	return 0;
}

/* The resumable mode must end in exactly the same message as the whole one. */
static int same_msg(const struct h1_msg *a, const char *abuf, const struct h1_msg *b,
                    const char *bbuf, int ret, char *why, size_t whylen)
{
	if (a->flags != b->flags || a->nhdrs != b->nhdrs || a->head_len != b->head_len ||
	    a->skip != b->skip || a->meth_id != b->meth_id || a->target != b->target ||
	    a->status != b->status || a->err_status != b->err_status || a->err_pos != b->err_pos ||
	    memcmp(&a->meth, &b->meth, sizeof(a->meth)) || memcmp(&a->uri, &b->uri, sizeof(a->uri)) ||
	    memcmp(&a->reason, &b->reason, sizeof(a->reason)) ||
	    ((a->flags & H1_F_CLEN) && a->clen != b->clen) ||
	    (!a->err_msg != !b->err_msg) || (a->err_msg && strcmp(a->err_msg, b->err_msg)))
		return WHY("differs from the whole parse (flags 0x%x/0x%x nhdrs %d/%d err %d/%d pos %u/%u)",
			   a->flags, b->flags, a->nhdrs, b->nhdrs, a->err_status, b->err_status,
			   a->err_pos, b->err_pos);
	for (int i = 0; i < a->nhdrs && i < a->maxhdr; i++)
		if (memcmp(&a->hdrs[i], &b->hdrs[i], sizeof(a->hdrs[i])))
			return WHY("header %d differs from the whole parse", i);
	/* obs-fold rewriting must give the same bytes */
	if (ret > 0 && memcmp(abuf, bbuf, (size_t)ret))
		return WHY("head bytes differ from the whole parse");
	return 0;
}

static int h1_row_check(const struct h1_row *r, char *why, size_t whylen)
{
	size_t limit = r->limit ? r->limit : DEF_LIMIT;
	int maxhdr = r->maxhdr ? r->maxhdr : DEF_MAXHDR;
	size_t hl = r->hl ? r->hl : r->len;
	size_t stop = hl < limit ? hl : limit;   /* the byte count that decides */
	struct h1_hdr *ha = calloc((size_t)maxhdr, sizeof(*ha));
	struct h1_hdr *hb = calloc((size_t)maxhdr, sizeof(*hb));
	char *wa = malloc(r->len), *wb = malloc(r->len);
	struct h1_msg ma, mb;
	struct guard g;
	size_t k;
	int ra, rb, rc = -1;
	char sub[400] = "";

	assert_non_null(ha);
	assert_non_null(hb);
	assert_non_null(wa);
	assert_non_null(wb);
	guard_init(&g, r->len);

	/* (a) whole, from an exactly-sized heap buffer */
	memcpy(wa, r->msg, r->len);
	h1_msg_init(&ma, ha, maxhdr, r->resp, r->rmeth);
	ma.flags |= r->relax ? H1_F_RELAX : 0;
	ra = h1_parse(wa, r->len, limit, &ma);
	if (check_result(r, wa, r->len, &ma, ra, sub, sizeof(sub))) {
		WHY("whole: %s", sub);
		goto out;
	}

	/* (b) resumable: prefixes 1..n of one buffer, the same h1_msg */
	memcpy(wb, r->msg, r->len);
	h1_msg_init(&mb, hb, maxhdr, r->resp, r->rmeth);
	mb.flags |= r->relax ? H1_F_RELAX : 0;
	for (k = 1, rb = 0; k <= r->len; k++)
		if ((rb = h1_parse(wb, k, limit, &mb)) != 0)
			break;
	if (r->err != NEED && k != stop) {
		WHY("byte by byte: decided at %zu bytes (ret %d), expected at %zu", k, rb, stop);
		goto out;
	}
	if (rb != ra || same_msg(&ma, wa, &mb, wb, ra, sub, sizeof(sub))) {
		if (rb != ra)
			WHY("byte by byte: returned %d, whole returned %d", rb, ra);
		else
			WHY("byte by byte: %s", sub);
		goto out;
	}

	/* (b') resumable again, each prefix copied to end on the guard page */
	memset(hb, 0, (size_t)maxhdr * sizeof(*hb));
	h1_msg_init(&mb, hb, maxhdr, r->resp, r->rmeth);
	mb.flags |= r->relax ? H1_F_RELAX : 0;
	for (k = 1, rb = 0; k <= r->len; k++) {
		char *p = guard_place(&g, r->msg, k);

		if ((rb = h1_parse(p, k, limit, &mb)) != 0) {
			memcpy(wb, p, k);
			break;
		}
	}
	if (rb != ra || (r->err != NEED && k != stop) || same_msg(&ma, wa, &mb, wb, ra, sub, sizeof(sub))) {
		WHY("byte by byte on guard page: ret %d at %zu bytes, whole %d: %s", rb, k, ra,
		    rb == ra ? sub : "");
		goto out;
	}

	/* (c) whole, ending on the guard page */
	{
		char *p = guard_place(&g, r->msg, r->len);

		memset(hb, 0, (size_t)maxhdr * sizeof(*hb));
		h1_msg_init(&mb, hb, maxhdr, r->resp, r->rmeth);
	mb.flags |= r->relax ? H1_F_RELAX : 0;
		rb = h1_parse(p, r->len, limit, &mb);
		if (check_result(r, p, r->len, &mb, rb, sub, sizeof(sub)) ||
		    same_msg(&ma, wa, &mb, p, ra, sub, sizeof(sub))) {
			WHY("guard page: %s", sub);
			goto out;
		}
	}
	rc = 0;
out:
	guard_free(&g);
	free(ha);
	free(hb);
	free(wa);
	free(wb);
	return rc;
}

static void test_h1_row(void **state)
{
	const struct h1_row *r = *state;
	char why[512];

	if (h1_row_check(r, why, sizeof(why)) == 0) {
		if (r->bug)
			print_message("note: KNOWN BUG row %s now passes, drop its marker\n", r->name);
		return;
	}
	if (r->bug) {
		/* KNOWN BUG: reported, kept as a test, skipped so the suite passes. */
		print_message("KNOWN BUG %s: %s (%s)\n", r->name, why, r->bug);
		skip();
	}
	fail_msg("%s: %s", r->name, why);
}

/* ---------------------------------------------------------------------- */
/* Chunked body rows */

struct ck_row {
	const char *name;
	const char *body;
	size_t      len;
	int         ret;     /* 1 ended, 0 needs more, -1 framing error */
	size_t      used;    /* with ret 1: bytes of the body; 0: all of them */
	uint64_t    total;   /* ck.total at the end (ret 0 or 1) */
	const char *bug;
};

#define CB(s)     .body = s, .len = sizeof(s) - 1
#define CBP(b, p) .body = b p, .len = sizeof(b p) - 1, .used = sizeof(b) - 1
#define D31       "0123456789012345678901234567890"

static struct ck_row ck_rows[] = {
	{ .name = "ck_simple", CB("5\r\nhello\r\n0\r\n\r\n"), .ret = 1, .total = 5 },
	{ .name = "ck_two_chunks", CB("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"), .ret = 1, .total = 11 },
	{ .name = "ck_extensions",
	  CB("5;name=val\r\nhello\r\n6 ; a=\"b c\" ;x\r\n world\r\n0;last=1\r\n\r\n"), .ret = 1, .total = 11 },
	{ .name = "ck_trailers", CB("3\r\nabc\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n"), .ret = 1, .total = 3 },
	/* Every line ends with CRLF: a bare LF is read differently by a
	 * backend that only honours CRLF, and the bytes are forwarded as
	 * they are. */
	{ .name = "ck_bare_lf", CB("3\nabc\n0\nX: 1\n\n"), .ret = -1 },
	{ .name = "ck_mixed_eol", CB("3\r\nabc\n0\n\r\n"), .ret = -1 },
	{ .name = "ck_bare_lf_size_line", CB("5\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_bare_lf_after_extension", CB("5;a=b\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_bare_lf_after_data", CB("5\r\nhello\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_bare_lf_last_chunk", CB("5\r\nhello\r\n0\n\r\n"), .ret = -1 },
	{ .name = "ck_bare_lf_trailer", CB("0\r\nX: 1\n\r\n"), .ret = -1 },
	{ .name = "ck_bare_lf_final_line", CB("0\r\nX: 1\r\n\n"), .ret = -1 },
	{ .name = "ck_bare_lf_empty_body", CB("0\r\n\n"), .ret = -1 },
	{ .name = "ck_hex_case",
	  CB("a\r\n0123456789\r\nA\r\n0123456789\r\n1f\r\n" D31 "\r\n1F\r\n" D31 "\r\n0\r\n\r\n"),
	  .ret = 1, .total = 82 },
	{ .name = "ck_leading_zeros", CB("0005\r\nhello\r\n000\r\n\r\n"), .ret = 1, .total = 5 },
	{ .name = "ck_data_with_crlf_inside", CB("4\r\n\r\n\r\n\r\n0\r\n\r\n"), .ret = 1, .total = 4 },
	{ .name = "ck_empty_body", CB("0\r\n\r\n"), .ret = 1, .total = 0 },
	{ .name = "ck_pipelined_request", CBP("4\r\nwiki\r\n0\r\n\r\n", "GET / HTTP/1.1\r\n\r\n"), .ret = 1, .total = 4 },
	{ .name = "ck_pipelined_after_trailer", CBP("1\r\nx\r\n0\r\nT: v\r\n\r\n", "HTTP/1.1 200 OK\r\n"),
	  .ret = 1, .total = 1 },
	{ .name = "ck_pipelined_lfs_after", CBP("0\r\n\r\n", "\n\n0\r\n"), .ret = 1, .total = 0 },
	{ .name = "ck_incomplete_data", CB("5\r\nhel"), .ret = 0, .total = 5 },
	{ .name = "ck_incomplete_size", CB("5"), .ret = 0, .total = 0 },
	{ .name = "ck_incomplete_trailer", CB("0\r\nX: a\r\n"), .ret = 0, .total = 0 },
	{ .name = "ck_incomplete_final_cr", CB("0\r\n\r"), .ret = 0, .total = 0 },
	/* at most 15 hex digits: a size below 2^60 cannot wrap a byte count */
	{ .name = "ck_15_hex_digits", CB("fffffffffffffff\r\n"), .ret = 0, .total = 0xfffffffffffffffULL },
	{ .name = "ck_15_hex_digits_zeros", CB("000000000000001\r\nx\r\n0\r\n\r\n"), .ret = 1, .total = 1 },
	{ .name = "ck_16_hex_digits", CB("ffffffffffffffff\r\n"), .ret = -1 },
	{ .name = "ck_16_hex_digits_wrap", CB("fffffffffffffffe\r\nGET /smuggled HTTP/1.1\r\n\r\n"), .ret = -1 },
	{ .name = "ck_16_hex_digits_zeros", CB("0000000000000001\r\nx\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_17_hex_digits", CB("10000000000000000\r\n"), .ret = -1 },
	{ .name = "ck_17_hex_digits_zeros", CB("00000000000000001\r\nx\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_missing_crlf_after_data", CB("3\r\nabcX\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_missing_lf_after_data_cr", CB("3\r\nabc\rX\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_data_longer_than_size", CB("3\r\nabcd\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_bad_hex", CB("g\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_empty_size_line", CB("\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_size_leading_space", CB(" 5\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_size_negative", CB("-5\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_size_bare_cr", CB("5\rhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_size_cr_cr_lf", CB("5\r\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_ext_bare_cr", CB("5;a\rb\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_ext_ctl", CB("5;a\001\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_ext_nul", CB("5;a\000\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_trailer_bare_cr", CB("0\r\nX: a\rb\r\n\r\n"), .ret = -1 },
	{ .name = "ck_final_line_bare_cr", CB("0\r\n\rX"), .ret = -1 },
	{ .name = "ck_trailer_nul", CB("0\r\nX: \000\r\n\r\n"), .ret = -1 },
	/* After the hex digits only BWS and ";" extensions may follow
	 * (RFC 9112 7.1.1): anything else could make a backend read another
	 * size and end the body elsewhere (request smuggling). */
	{ .name = "ck_size_0x_prefix", CB("0x5\r\n\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_size_garbage_suffix", CB("5g\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_ext_without_semicolon", CB("5 foo\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_ext_name_value", CB("5 ; a = b ;c=\"q\\\"x\"\r\nhello\r\n0\r\n\r\n"), .ret = 1, .total = 5 },
	{ .name = "ck_ext_empty_name", CB("5;=b\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_ext_unterminated_quote", CB("5;a=\"b\r\nhello\r\n0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_trailer_without_colon", CB("0\r\nX-Trailer\r\n\r\n"), .ret = -1 },
	/* trailers may not frame the message again (RFC 9110 6.5.1) */
	{ .name = "ck_trailer_content_length", CB("0\r\nContent-Length: 5\r\n\r\n"), .ret = -1 },
	{ .name = "ck_trailer_transfer_encoding", CB("0\r\ntransfer-ENCODING: chunked\r\n\r\n"), .ret = -1 },
	{ .name = "ck_trailer_content_length_second",
	  CB("1\r\nx\r\n0\r\nX: 1\r\ncontent-length:0\r\n\r\n"), .ret = -1 },
	{ .name = "ck_trailer_name_longer", CB("0\r\nContent-Lengths: 5\r\n\r\n"), .ret = 1, .total = 0 },
	{ .name = "ck_trailer_name_shorter", CB("0\r\nContent-Lengt: 5\r\nTransfer-Encodin: x\r\n\r\n"),
	  .ret = 1, .total = 0 },
	{ .name = "ck_trailer_value_mentions", CB("0\r\nX: content-length: 5\r\n\r\n"), .ret = 1, .total = 0 },
};

/* Generated rows: extension and trailer lines at and over H1_CHUNK_LINE_MAX. */
static char gen_ext_max[H1_CHUNK_LINE_MAX + 64], gen_ext_over[H1_CHUNK_LINE_MAX + 64];
static char gen_trl_max[H1_CHUNK_LINE_MAX + 64], gen_trl_over[H1_CHUNK_LINE_MAX + 64];

static struct ck_row ck_gen_rows[] = {
	{ .name = "ck_ext_at_max", .body = gen_ext_max, .ret = 1, .total = 1 },
	{ .name = "ck_ext_overlong", .body = gen_ext_over, .ret = -1 },
	{ .name = "ck_trailer_at_max", .body = gen_trl_max, .ret = 1, .total = 0 },
	{ .name = "ck_trailer_overlong", .body = gen_trl_over, .ret = -1 },
};

static size_t gen_line(char *out, const char *pre, char fill, size_t n, const char *post)
{
	size_t l = strlen(pre);

	memcpy(out, pre, l);
	memset(out + l, fill, n);
	strcpy(out + l + n, post);
	return l + n + strlen(post);
}

static void ck_gen_init(void)
{
	/* the extension counts from the byte after the size: ";" + n 'a' */
	ck_gen_rows[0].len = gen_line(gen_ext_max, "1;", 'a', H1_CHUNK_LINE_MAX - 1, "\r\nx\r\n0\r\n\r\n");
	ck_gen_rows[1].len = gen_line(gen_ext_over, "1;", 'a', H1_CHUNK_LINE_MAX, "\r\nx\r\n0\r\n\r\n");
	ck_gen_rows[2].len = gen_line(gen_trl_max, "0\r\nX:", 'v', H1_CHUNK_LINE_MAX - 2, "\r\n\r\n");
	ck_gen_rows[3].len = gen_line(gen_trl_over, "0\r\nX:", 'v', H1_CHUNK_LINE_MAX - 1, "\r\n\r\n");
}

/* Scans body[0..len) as successive pieces cut at <cuts> (ascending offsets,
 * ncuts of them), each piece copied to end on the guard page. */
static int ck_scan_pieces(struct guard *g, const char *body, size_t len, const size_t *cuts,
                          size_t ncuts, struct h1_chunk *ck, size_t *used, const char **err)
{
	size_t from = 0;
	int ret = 0;

	memset(ck, 0, sizeof(*ck));
	*used = 0;
	*err = NULL;
	for (size_t i = 0; i <= ncuts; i++) {
		size_t to = i < ncuts ? cuts[i] : len, u = (size_t)-1;
		const char *p = guard_place(g, body + from, to - from);

		ret = h1_chunk_scan(ck, p, to - from, &u, err);
		if (ret == -1)
			return -1;
		if (u > to - from)
			return -2;   /* used beyond the piece */
		*used += u;
		if (ret == 1 || to == len)
			return ret;
		if (u != to - from)
			return -3;   /* needs more but did not use everything */
		from = to;
	}
	return ret;
}

static int ck_row_check(const struct ck_row *r, char *why, size_t whylen)
{
	size_t exp_used = r->ret == 1 ? (r->used ? r->used : r->len) : r->len;
	size_t *cuts = malloc((r->len + 1) * sizeof(*cuts));
	struct h1_chunk ck;
	const char *err;
	size_t used;
	struct guard g;
	int ret, rc = -1;
	char *heap = malloc(r->len ? r->len : 1);

	assert_non_null(cuts);
	assert_non_null(heap);
	guard_init(&g, r->len);

	/* whole, from an exactly-sized heap buffer */
	memcpy(heap, r->body, r->len);
	memset(&ck, 0, sizeof(ck));
	used = (size_t)-1;
	err = NULL;
	ret = h1_chunk_scan(&ck, heap, r->len, &used, &err);
	if (ret != r->ret) {
		WHY("whole: returned %d (%s), expected %d", ret, err ? err : "no error", r->ret);
		goto out;
	}
	if (ret == -1 && !err) {
		WHY("whole: -1 without an error message");
		goto out;
	}
	if (ret >= 0 && (used != exp_used || ck.total != r->total)) {
		WHY("whole: used %zu total %llu, expected %zu and %llu", used,
		    (unsigned long long)ck.total, exp_used, (unsigned long long)r->total);
		goto out;
	}
	if (ret == 1 && ck.state != H1_CK_DONE) {
		WHY("whole: ended but state %d", ck.state);
		goto out;
	}

	/* one byte at a time, accumulating used */
	for (size_t i = 0; i + 1 < r->len; i++)
		cuts[i] = i + 1;
	ret = ck_scan_pieces(&g, r->body, r->len, cuts, r->len ? r->len - 1 : 0, &ck, &used, &err);
	if (ret != r->ret || (ret >= 0 && (used != exp_used || ck.total != r->total))) {
		WHY("byte by byte: returned %d (%s) used %zu total %llu, expected %d used %zu total %llu",
		    ret, err ? err : "-", used, (unsigned long long)ck.total, r->ret, exp_used,
		    (unsigned long long)r->total);
		goto out;
	}

	/* two pieces, cut at every offset */
	for (size_t c = 0; c <= r->len; c++) {
		cuts[0] = c;
		ret = ck_scan_pieces(&g, r->body, r->len, cuts, 1, &ck, &used, &err);
		if (ret != r->ret || (ret >= 0 && (used != exp_used || ck.total != r->total))) {
			WHY("cut at %zu: returned %d used %zu total %llu", c, ret, used,
			    (unsigned long long)ck.total);
			goto out;
		}
	}
	rc = 0;
out:
	guard_free(&g);
	free(cuts);
	free(heap);
	return rc;
}

static void test_ck_row(void **state)
{
	const struct ck_row *r = *state;
	char why[512];

	if (ck_row_check(r, why, sizeof(why)) == 0) {
		if (r->bug)
			print_message("note: KNOWN BUG row %s now passes, drop its marker\n", r->name);
		return;
	}
	if (r->bug) {
		/* KNOWN BUG: reported, kept as a test, skipped so the suite passes. */
		print_message("KNOWN BUG %s: %s (%s)\n", r->name, why, r->bug);
		skip();
	}
	fail_msg("%s: %s", r->name, why);
}

/* ---------------------------------------------------------------------- */
/* A few properties outside the tables */

static void test_hdr_is(void **state)
{
	char buf[] = "GET / HTTP/1.1\r\nContent-LENGTH: 1\r\nHost: a\r\n\r\nx";
	struct h1_hdr hdrs[4];
	struct h1_msg m;

	h1_msg_init(&m, hdrs, 4, 0, H1_M_OTHER);
	assert_int_equal(h1_parse(buf, sizeof(buf) - 1, 8192, &m), (int)sizeof(buf) - 2);
	assert_true(h1_hdr_is(buf, &hdrs[0], "content-length"));
	assert_true(h1_hdr_is(buf, &hdrs[0], "Content-Length"));
	assert_false(h1_hdr_is(buf, &hdrs[0], "content-lengt"));
	assert_false(h1_hdr_is(buf, &hdrs[0], "content-lengths"));
	assert_true(h1_hdr_is(buf, &hdrs[1], "HOST"));
	assert_false(h1_hdr_is(buf, &hdrs[1], ""));
}

/* The limit is applied to what is buffered, not only to what is new:
 * feeding in large steps decides at the same point as byte by byte. */
static void test_resume_large_steps(void **state)
{
	char buf[] = "\r\nPOST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc";
	size_t len = sizeof(buf) - 1;

	for (size_t step = 1; step <= len; step++) {
		struct h1_hdr hdrs[4];
		struct h1_msg m;
		size_t k = 0;
		int ret = 0;

		h1_msg_init(&m, hdrs, 4, 0, H1_M_OTHER);
		while (ret == 0 && k < len) {
			k = k + step < len ? k + step : len;
			ret = h1_parse(buf, k, 8192, &m);
		}
		assert_int_equal(ret, (int)len - 3);
		assert_int_equal(m.skip, 2);
		assert_int_equal(m.clen, 3);
		assert_int_equal(m.flags, RQ11 | H1_F_CLEN);
	}
}

/* Once the body ended, further calls consume nothing and keep saying so. */
static void test_ck_after_done(void **state)
{
	const char body[] = "3\r\nabc\r\n0\r\n\r\nGET";
	struct h1_chunk ck;
	const char *err = NULL;
	size_t used = 99;

	memset(&ck, 0, sizeof(ck));
	assert_int_equal(h1_chunk_scan(&ck, body, sizeof(body) - 1, &used, &err), 1);
	assert_int_equal(used, sizeof(body) - 4);
	assert_int_equal(h1_chunk_scan(&ck, body + used, 3, &used, &err), 1);
	assert_int_equal(used, 0);
	assert_int_equal(h1_chunk_scan(&ck, body, 0, &used, &err), 1);
	assert_int_equal(used, 0);
	assert_null(err);
}

int main(void)
{
	size_t nh = sizeof(h1_rows) / sizeof(h1_rows[0]);
	size_t ng = sizeof(h1_gen_rows) / sizeof(h1_gen_rows[0]);
	size_t nc = sizeof(ck_rows) / sizeof(ck_rows[0]);
	size_t ncg = sizeof(ck_gen_rows) / sizeof(ck_gen_rows[0]);
	size_t n = 0, total = nh + ng + nc + ncg + 3;
	struct CMUnitTest *tests = calloc(total, sizeof(*tests));
	int ret;

	if (!tests)
		return 1;
	h1_gen_init();
	ck_gen_init();
	for (size_t i = 0; i < nh; i++)
		tests[n++] = (struct CMUnitTest){ h1_rows[i].name, test_h1_row, NULL, NULL, &h1_rows[i] };
	for (size_t i = 0; i < ng; i++)
		tests[n++] = (struct CMUnitTest){ h1_gen_rows[i].name, test_h1_row, NULL, NULL, &h1_gen_rows[i] };
	for (size_t i = 0; i < nc; i++)
		tests[n++] = (struct CMUnitTest){ ck_rows[i].name, test_ck_row, NULL, NULL, &ck_rows[i] };
	for (size_t i = 0; i < ncg; i++)
		tests[n++] = (struct CMUnitTest){ ck_gen_rows[i].name, test_ck_row, NULL, NULL, &ck_gen_rows[i] };
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_hdr_is);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_resume_large_steps);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_ck_after_done);
	ret = _cmocka_run_group_tests("h1", tests, n, NULL, NULL);
	free(tests);
	return ret;
}
