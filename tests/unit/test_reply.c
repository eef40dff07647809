/* Unit tests for the HTTP replies module (reply.c): HAProxy's default error
 * pages byte for byte, the reply arguments of return/deny and their errors,
 * errorfile loading, errorloc, http-errors sections and errorfiles
 * references, http-error, "last line wins", inheritance from defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/http_head.h>
#include <sluice/http_reply.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>

#include "cfg_capture.h"

/* ---- helpers ---- */

static char tmpdir[] = "/tmp/sluice-reply-XXXXXX";

static int reset(void **state)
{
	proxy_free_all();
	http_errors_free_all();
	log_list_free(&global.loggers);
	restore_global();
	return 0;
}

/* Path of <name> in the test's directory (static storage, 16 at a time). */
static const char *tpath(const char *name)
{
	static char buf[16][256];
	static int n;
	char *p = buf[n++ % 16];

	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static const char *write_file(const char *name, const char *data, size_t len)
{
	const char *p = tpath(name);
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	return p;
}

#define WRITE(name, lit) write_file(name, lit, sizeof(lit) - 1)

/* The wire bytes of <r> (head and body), NUL-terminated, in <out>. */
static size_t reply_bytes(const struct http_reply *r, char *out, size_t size)
{
	struct http_field f[32];
	char arena[1024];
	struct http_head h = { .f = f, .maxf = 32, .arena = arena, .arena_size = sizeof(arena) };
	/* What the stream would give lf-string parts: "%HP" renders as "/p". */
	struct lf_ctx lf = { .status = -1, .reqline = "GET /p?q=1 HTTP/1.1" };
	const char *body;
	size_t blen, n;

	assert_int_equal(http_reply_to_head(r, &lf, &h, &body, &blen), 0);
	assert_true(h.flags & HTTP_HEAD_F_RESP);
	if (r->flags & HTTP_REPLY_F_SILENT) {
		assert_int_equal(h.nf, 0);
		out[0] = '\0';
		return 0;
	}
	n = http_head_len(&h);
	assert_true(n + blen < size);
	assert_int_equal(http_head_write(&h, out), n);
	memcpy(out + n, body, blen);
	out[n + blen] = '\0';
	return n + blen;
}

static void expect_bytes(const struct http_reply *r, const char *want)
{
	char out[8192];

	assert_non_null(r);
	reply_bytes(r, out, sizeof(out));
	assert_string_equal(out, want);
}

/* Splits <line> at spaces into argv (no quoting: tests only). */
static int split(char *line, char **argv, int max)
{
	int n = 0;

	for (char *t = strtok(line, " "); t && n < max; t = strtok(NULL, " "))
		argv[n++] = t;
	return n;
}

/* Runs http_reply_parse() on <args> as "http-request return" would. */
static int parse_reply(const char *args, struct http_reply *r, int *idx)
{
	struct cfg_ctx ctx = { .file = "t.cfg", .line = 7, .section = CFG_SEC_FRONTEND,
			       .secname = "frontend", .kw = "http-request return" };
	char *copy = strdup(args), *argv[64];
	int argc = split(copy, argv, 64), ret, i = 0;

	capture_start();
	ret = http_reply_parse(&ctx, argc, argv, &i, r, 200);
	capture_end();
	if (idx)
		*idx = i;
	free(copy);
	if (ret == 0)
		assert_int_equal(ctx.errors, 0);
	else
		assert_int_equal(ctx.errors, 1);
	return ret;
}

/* ---- default pages, as HAProxy 2.6 sends them ---- */

static const struct {
	int         status;
	const char *bytes;
} ground_truth[] = {
	{ 200,
	  "HTTP/1.1 200 OK\r\n"
	  "content-length: 58\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>200 OK</h1>\n"
	  "Service ready.\n"
	  "</body></html>\n" },
	{ 400,
	  "HTTP/1.1 400 Bad request\r\n"
	  "content-length: 90\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "connection: close\r\n"
	  "\r\n"
	  "<html><body><h1>400 Bad request</h1>\n"
	  "Your browser sent an invalid request.\n"
	  "</body></html>\n" },
	{ 401,
	  "HTTP/1.1 401 Unauthorized\r\n"
	  "content-length: 112\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>401 Unauthorized</h1>\n"
	  "You need a valid user and password to access this content.\n"
	  "</body></html>\n" },
	{ 403,
	  "HTTP/1.1 403 Forbidden\r\n"
	  "content-length: 93\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>403 Forbidden</h1>\n"
	  "Request forbidden by administrative rules.\n"
	  "</body></html>\n" },
	{ 404,
	  "HTTP/1.1 404 Not Found\r\n"
	  "content-length: 83\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>404 Not Found</h1>\n"
	  "The resource could not be found.\n"
	  "</body></html>\n" },
	{ 405,
	  "HTTP/1.1 405 Method Not Allowed\r\n"
	  "content-length: 146\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>405 Method Not Allowed</h1>\n"
	  "A request was made of a resource using a request method not supported by that resource\n"
	  "</body></html>\n" },
	{ 407,
	  "HTTP/1.1 407 Unauthorized\r\n"
	  "content-length: 112\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>407 Unauthorized</h1>\n"
	  "You need a valid user and password to access this content.\n"
	  "</body></html>\n" },
	{ 408,
	  "HTTP/1.1 408 Request Time-out\r\n"
	  "content-length: 110\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "connection: close\r\n"
	  "\r\n"
	  "<html><body><h1>408 Request Time-out</h1>\n"
	  "Your browser didn't send a complete request in time.\n"
	  "</body></html>\n" },
	{ 410,
	  "HTTP/1.1 410 Gone\r\n"
	  "content-length: 114\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>410 Gone</h1>\n"
	  "The resource is no longer available and will not be available again.\n"
	  "</body></html>\n" },
	{ 413,
	  "HTTP/1.1 413 Payload Too Large\r\n"
	  "content-length: 106\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>413 Payload Too Large</h1>\n"
	  "The request entity exceeds the maximum allowed.\n"
	  "</body></html>\n" },
	{ 421,
	  "HTTP/1.1 421 Misdirected Request\r\n"
	  "content-length: 104\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>421 Misdirected Request</h1>\n"
	  "Request sent to a non-authoritative server.\n"
	  "</body></html>\n" },
	{ 422,
	  "HTTP/1.1 422 Unprocessable Content\r\n"
	  "content-length: 116\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>422 Unprocessable Content</h1>\n"
	  "The server cannot process the contained instructions.\n"
	  "</body></html>\n" },
	{ 425,
	  "HTTP/1.1 425 Too Early\r\n"
	  "content-length: 80\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>425 Too Early</h1>\n"
	  "Your browser sent early data.\n"
	  "</body></html>\n" },
	{ 429,
	  "HTTP/1.1 429 Too Many Requests\r\n"
	  "content-length: 117\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>429 Too Many Requests</h1>\n"
	  "You have sent too many requests in a given amount of time.\n"
	  "</body></html>\n" },
	{ 500,
	  "HTTP/1.1 500 Internal Server Error\r\n"
	  "content-length: 97\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>500 Internal Server Error</h1>\n"
	  "An internal server error occurred.\n"
	  "</body></html>\n" },
	{ 501,
	  "HTTP/1.1 501 Not Implemented\r\n"
	  "content-length: 136\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>501 Not Implemented</h1>\n"
	  ".The server does not support the functionality required to fulfill the request.\n"
	  "</body></html>\n" },
	{ 502,
	  "HTTP/1.1 502 Bad Gateway\r\n"
	  "content-length: 107\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>502 Bad Gateway</h1>\n"
	  "The server returned an invalid or incomplete response.\n"
	  "</body></html>\n" },
	{ 503,
	  "HTTP/1.1 503 Service Unavailable\r\n"
	  "content-length: 107\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>503 Service Unavailable</h1>\n"
	  "No server is available to handle this request.\n"
	  "</body></html>\n" },
	{ 504,
	  "HTTP/1.1 504 Gateway Time-out\r\n"
	  "content-length: 92\r\n"
	  "cache-control: no-cache\r\n"
	  "content-type: text/html\r\n"
	  "\r\n"
	  "<html><body><h1>504 Gateway Time-out</h1>\n"
	  "The server didn't respond in time.\n"
	  "</body></html>\n" },
};

static void test_default_pages(void **state)
{
	assert_int_equal(ARRAY_SIZE(ground_truth), 19);
	for (size_t i = 0; i < ARRAY_SIZE(ground_truth); i++) {
		const struct http_reply *r = http_error_reply(NULL, ground_truth[i].status);

		assert_true(http_error_known(ground_truth[i].status));
		assert_int_equal(r->status, ground_truth[i].status);
		expect_bytes(r, ground_truth[i].bytes);
		assert_null(http_error_find(NULL, ground_truth[i].status));
	}
}

/* A code without a page gets the 500 one, as HAProxy does. */
static void test_unknown_code(void **state)
{
	assert_false(http_error_known(418));
	assert_false(http_error_known(204));
	assert_ptr_equal(http_error_reply(NULL, 418), http_error_reply(NULL, 500));
	assert_ptr_equal(http_error_reply(NULL, 0), http_error_reply(NULL, 500));
}

static void test_reasons(void **state)
{
	assert_string_equal(http_reason(200), "OK");
	assert_string_equal(http_reason(302), "Moved Temporarily");
	assert_string_equal(http_reason(400), "Bad Request");
	assert_string_equal(http_reason(407), "Proxy Authentication Required");
	assert_string_equal(http_reason(413), "Request Entity Too Large");
	assert_string_equal(http_reason(418), "I'm a teapot");
	assert_string_equal(http_reason(502), "Bad Gateway or Proxy Error");
	assert_string_equal(http_reason(504), "Gateway Time-out");
	assert_string_equal(http_reason(299), "Success");
	assert_string_equal(http_reason(399), "Redirection");
	assert_string_equal(http_reason(498), "Client Error");
	assert_string_equal(http_reason(599), "Server Error");
	assert_string_equal(http_reason(700), "Unknown");
}

/* ---- reply arguments ---- */

static void test_reply_string_and_hdrs(void **state)
{
	struct http_reply r;
	int idx;

	assert_int_equal(parse_reply("status 200 content-type text/plain string hello "
				     "hdr X-Foo bar hdr x-two %HP if TRUE", &r, &idx), 0);
	assert_int_equal(idx, 12);   /* left at "if" */
	assert_int_equal(r.type, HTTP_REPLY_BODY);
	/* Bytes of haproxy 2.6 (%HP is the request path, without the query). */
	expect_bytes(&r, "HTTP/1.1 200 OK\r\nx-foo: bar\r\nx-two: /p\r\n"
		     "content-length: 5\r\ncontent-type: text/plain\r\n\r\nhello");
	http_reply_release(&r);

	assert_int_equal(parse_reply("status 429 content-type text/plain lf-string p=%HP "
				     "unless FALSE", &r, &idx), 0);
	assert_int_equal(idx, 6);
	assert_int_equal(r.type, HTTP_REPLY_LF);
	expect_bytes(&r, "HTTP/1.1 429 Too Many Requests\r\ncontent-length: 4\r\n"
		     "content-type: text/plain\r\n\r\np=/p");
	http_reply_release(&r);
}

/* A hdr value holding CR or LF gives one field, written %XX, and the
 * reply's own fields follow it unchanged. (Values rendered from samples
 * take the same way: reg-tests/http/hostile_crlf_return_hdr.vtc.) */
static void test_reply_hdr_crlf(void **state)
{
	struct http_field f[32];
	char arena[1024], out[2048];
	struct http_head h = { .f = f, .maxf = 32, .arena = arena, .arena_size = sizeof(arena) };
	const char *body;
	struct http_reply r;
	size_t blen, n;
	int idx;

	assert_int_equal(parse_reply("status 200 hdr x-a v", &r, &idx), 0);
	assert_int_equal(r.nhdrs, 1);
	free(r.hdrs[0].value);
	r.hdrs[0].value = strdup("a\r\nSet-Cookie: x=1\r\n\r\n");
	assert_int_equal(http_reply_to_head(&r, NULL, &h, &body, &blen), 0);
	n = http_head_write(&h, out);
	assert_int_equal(n, http_head_len(&h));
	out[n] = '\0';
	assert_string_equal(out, "HTTP/1.1 200 OK\r\nx-a: a%0D%0ASet-Cookie: x=1%0D%0A%0D%0A\r\n"
			    "content-length: 0\r\n\r\n");
	http_reply_release(&r);
}

static void test_reply_empty(void **state)
{
	struct http_reply r;
	int idx;

	/* No argument at all: the default status, no payload. */
	assert_int_equal(parse_reply("", &r, &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(r.type, HTTP_REPLY_EMPTY);
	expect_bytes(&r, "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
	http_reply_release(&r);

	assert_int_equal(parse_reply("status 418", &r, NULL), 0);
	expect_bytes(&r, "HTTP/1.1 418 I'm a teapot\r\ncontent-length: 0\r\n\r\n");
	http_reply_release(&r);

	/* 204 and 304 carry no content-length. */
	assert_int_equal(parse_reply("status 204 hdr a b", &r, NULL), 0);
	expect_bytes(&r, "HTTP/1.1 204 No Content\r\na: b\r\n\r\n");
	http_reply_release(&r);

	assert_int_equal(parse_reply("status 200 hdr a b", &r, NULL), 0);
	expect_bytes(&r, "HTTP/1.1 200 OK\r\na: b\r\ncontent-length: 0\r\n\r\n");
	http_reply_release(&r);

	/* A later status or content-type replaces the earlier one. */
	assert_int_equal(parse_reply("status 200 status 201", &r, NULL), 0);
	assert_int_equal(r.status, 201);
	http_reply_release(&r);

	/* content-type with nothing to type: a warning, then dropped. */
	assert_int_equal(parse_reply("status 200 content-type text/plain", &r, NULL), 0);
	expect_msg("t.cfg:7: 'http-request return' in frontend section: content-type "
		   "'text/plain' is ignored: the reply has no payload");
	assert_null(r.ctype);
	http_reply_release(&r);
}

static void test_reply_files(void **state)
{
	struct http_reply r;
	char args[512];

	WRITE("body.txt", "hello\n");
	WRITE("empty.txt", "");
	WRITE("fmt.txt", "at %HP\n");

	snprintf(args, sizeof(args), "status 422 content-type text/plain file %s",
		 tpath("body.txt"));
	assert_int_equal(parse_reply(args, &r, NULL), 0);
	expect_bytes(&r, "HTTP/1.1 422 Unprocessable Content\r\ncontent-length: 6\r\n"
		     "content-type: text/plain\r\n\r\nhello\n");
	http_reply_release(&r);

	/* An empty file: content-type ignored with a warning. */
	snprintf(args, sizeof(args), "status 200 content-type text/plain file %s",
		 tpath("empty.txt"));
	assert_int_equal(parse_reply(args, &r, NULL), 0);
	expect_msg("content-type 'text/plain' is ignored: the payload is empty");
	expect_bytes(&r, "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
	http_reply_release(&r);

	snprintf(args, sizeof(args), "content-type text/plain lf-file %s", tpath("fmt.txt"));
	assert_int_equal(parse_reply(args, &r, NULL), 0);
	assert_int_equal(r.type, HTTP_REPLY_LF);
	expect_bytes(&r, "HTTP/1.1 200 OK\r\ncontent-length: 6\r\n"
		     "content-type: text/plain\r\n\r\nat /p\n");
	http_reply_release(&r);

	/* errorfile: the file's message, whatever "status" says. */
	WRITE("ef404.http", "HTTP/1.1 404 Not There\r\nContent-Type: text/html\r\n"
	      "X-Custom: Yes\r\nCache-Control: no-cache\r\nContent-Length: 5\r\n\r\nhello");
	snprintf(args, sizeof(args), "status 302 errorfile %s", tpath("ef404.http"));
	assert_int_equal(parse_reply(args, &r, NULL), 0);
	assert_int_equal(r.type, HTTP_REPLY_ERRMSG);
	assert_int_equal(r.status, 404);
	expect_bytes(&r, "HTTP/1.1 404 Not There\r\ncontent-type: text/html\r\n"
		     "x-custom: Yes\r\ncache-control: no-cache\r\ncontent-length: 5\r\n\r\nhello");
	http_reply_release(&r);

	snprintf(args, sizeof(args), "status 200 errorfile %s content-type text/plain hdr a b",
		 tpath("ef404.http"));
	assert_int_equal(parse_reply(args, &r, NULL), 0);
	expect_msg("content-type 'text/plain' is ignored with 'errorfile'");
	expect_msg("'hdr' arguments are ignored with 'errorfile'");
	assert_int_equal(r.nhdrs, 4);
	http_reply_release(&r);
}

static void test_reply_default_errorfiles(void **state)
{
	struct http_reply r;

	assert_int_equal(parse_reply("status 500 default-errorfiles", &r, NULL), 0);
	assert_int_equal(r.type, HTTP_REPLY_ERRDEF);
	assert_ptr_equal(http_reply_resolve(&r, NULL), http_error_reply(NULL, 500));
	/* Made into a head directly, it is the built-in page. */
	expect_bytes(&r, ground_truth[14].bytes);
	http_reply_release(&r);
}

static const struct {
	const char *args;
	const char *msg;
} reply_errors[] = {
	{ "status 199", "'status' expects a status code between 200 and 599, got '199'" },
	{ "status 600", "'status' expects a status code between 200 and 599, got '600'" },
	{ "status abc", "got 'abc'" },
	{ "status", "'status' expects <status_code> as argument" },
	{ "content-type", "'content-type' expects <type> as argument" },
	{ "status 200 string hi", "a payload needs a content type: add 'content-type <type>'" },
	{ "lf-string x", "a payload needs a content type" },
	{ "lf-string", "'lf-string' expects <log-format> as argument" },
	{ "status 204 content-type t/p string hi", "a 204 response has no payload ('string' is not allowed)" },
	{ "status 304 content-type t/p lf-string x", "a 304 response has no payload" },
	{ "status 204 default-errorfiles", "status 204 has no error page for 'default-errorfiles' (expects one of 200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 421, 422, 425, 429, 500, 501, 502, 503, 504)" },
	{ "status 418 errorfiles myerr", "status 418 has no error page for 'errorfiles'" },
	{ "content-type t/p string a string b", "unexpected 'string': 'string' already gives the payload" },
	{ "content-type t/p string a file /x", "unexpected 'file': 'string' already gives the payload" },
	{ "default-errorfiles errorfile /x", "unexpected 'errorfile': 'default-errorfiles' already gives the payload" },
	{ "string", "'string' expects <text> as argument" },
	{ "file", "'file' expects <file> as argument" },
	{ "errorfiles", "'errorfiles' expects <http-errors name> as argument" },
	{ "hdr a", "'hdr' expects <name> and <value> as arguments" },
	{ "hdr", "'hdr' expects <name> and <value> as arguments" },
	{ "hdr a(b) c", "'hdr': invalid header name 'a(b)'" },
	{ "content-type t/p file /nonexistent/f", "cannot open file '/nonexistent/f': No such file or directory" },
	{ "errorfile /nonexistent/f", "cannot open file '/nonexistent/f'" },
	{ "content-type t/p lf-string %nosuch", "'lf-string': unknown log-format variable '%nosuch' at column 1" },
	{ "hdr x a%nosuch", "'hdr x': unknown log-format variable '%nosuch' at column 2" },
	{ "content-type t/p lf-string %[pth]", "'lf-string': sample expression '%[pth]' at column 1: unknown fetch method 'pth'; did you mean 'path'?" },
	{ "hdr x %[path,nosuch]", "'hdr x': sample expression '%[path,nosuch]' at column 1: unknown converter 'nosuch'" },
	{ "status 200 bogus x", "unexpected argument 'bogus' (expects status, content-type, string, lf-string, file, lf-file, errorfile, errorfiles, default-errorfiles, hdr, or a condition with 'if'/'unless')" },
};

static void test_reply_errors(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(reply_errors); i++) {
		struct http_reply r;

		if (parse_reply(reply_errors[i].args, &r, NULL) != -1)
			fail_msg("'%s' was accepted", reply_errors[i].args);
		expect_msg("t.cfg:7: 'http-request return' in frontend section: ");
		expect_msg(reply_errors[i].msg);
		/* A failed parse leaves nothing to release. */
		assert_null(r.hdrs);
		assert_null(r.body);
		assert_null(r.ctype);
	}
}

static void test_reply_ignored_hdrs(void **state)
{
	struct http_reply r;

	assert_int_equal(parse_reply("hdr Content-Length 5 hdr content-type x/y "
				     "hdr transfer-encoding chunked hdr a b", &r, NULL), 0);
	expect_msg("header 'Content-Length' is ignored: the reply computes it");
	expect_msg("header 'content-type' is ignored");
	expect_msg("header 'transfer-encoding' is ignored");
	expect_bytes(&r, "HTTP/1.1 200 OK\r\na: b\r\ncontent-length: 0\r\n\r\n");
	http_reply_release(&r);
}

/* A head without room fails cleanly. */
static void test_head_too_small(void **state)
{
	struct http_field f[2];
	char arena[64];
	struct http_head h = { .f = f, .maxf = 2, .arena = arena, .arena_size = sizeof(arena) };
	const char *body;
	size_t blen;

	/* Four fields for three slots. */
	assert_int_equal(http_reply_to_head(http_error_reply(NULL, 400), NULL, &h, &body, &blen), -1);
	h.maxf = 3;
	h.arena_size = 2;   /* not even the status digits */
	h.arena_used = 0;
	assert_int_equal(http_reply_to_head(http_error_reply(NULL, 503), NULL, &h, &body, &blen), -1);
}

/* ---- errorfile ---- */

static char cfgbuf[4096];

/* A frontend with one line <kw> naming file <path>. */
static const char *fe_line(const char *fmt, const char *path)
{
	char line[1024];

	snprintf(line, sizeof(line), fmt, path);
	snprintf(cfgbuf, sizeof(cfgbuf), "frontend fe\n    %s\n", line);
	return cfgbuf;
}

static void test_errorfile_valid(void **state)
{
	struct proxy *fe;

	WRITE("ok.http", "HTTP/1.1 503 Busy\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
	      "\r\nbusy");
	LOAD(fe_line("errorfile 503 %s", tpath("ok.http")), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	assert_non_null(fe->http_errors);
	assert_non_null(http_error_find(fe, 503));
	assert_null(http_error_find(fe, 502));
	expect_bytes(http_error_reply(fe, 503), "HTTP/1.1 503 Busy\r\ncontent-type: text/plain\r\n"
		     "content-length: 4\r\n\r\nbusy");
	expect_bytes(http_error_reply(fe, 502), ground_truth[16].bytes);
	reset(NULL);

	/* No content-length: the body runs to the close. */
	WRITE("nocl.http", "HTTP/1.1 503 X\r\nContent-Type: text/plain\r\n\r\nbody-without-cl");
	LOAD(fe_line("errorfile 500 %s", tpath("nocl.http")), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	assert_true(http_error_reply(fe, 500)->flags & HTTP_REPLY_F_CLOSE);
	expect_bytes(http_error_reply(fe, 500), "HTTP/1.1 503 X\r\ncontent-type: text/plain\r\n"
		     "\r\nbody-without-cl");
	reset(NULL);

	/* Bare LF line ends and HTTP/1.0 are accepted. */
	WRITE("lf.http", "HTTP/1.0 200 OK\nContent-Length: 2\n\nhi");
	LOAD(fe_line("errorfile 200 %s", tpath("lf.http")), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	assert_true(http_error_reply(fe, 200)->flags & HTTP_REPLY_F_V10);
	expect_bytes(http_error_reply(fe, 200), "HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nhi");
	reset(NULL);

	/* An empty file: send nothing (HAProxy's silent close). */
	WRITE("empty.http", "");
	LOAD(fe_line("errorfile 408 %s", tpath("empty.http")), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	assert_true(http_error_reply(fe, 408)->flags & HTTP_REPLY_F_SILENT);
	assert_int_equal(http_error_reply(fe, 408)->status, 408);
	expect_bytes(http_error_reply(fe, 408), "");
	reset(NULL);

	/* 204 without payload: no close needed. */
	WRITE("204.http", "HTTP/1.1 204 Nothing\r\n\r\n");
	LOAD(fe_line("errorfile 503 %s", tpath("204.http")), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	assert_false(http_error_reply(fe, 503)->flags & HTTP_REPLY_F_CLOSE);
	expect_bytes(http_error_reply(fe, 503), "HTTP/1.1 204 Nothing\r\n\r\n");
}

static void test_errorfile_invalid(void **state)
{
	static const struct {
		const char *name, *data, *msg;
	} bad[] = {
		{ "garbage.http", "garbage\r\n\r\n", "invalid HTTP response at byte 0" },
		{ "trunc.http", "HTTP/1.1 503 X\r\nContent-Type: text/plain\r\n",
		  "incomplete HTTP response (no empty line after the headers)" },
		{ "chunk.http", "HTTP/1.1 503 X\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		  "chunked or transfer-encoded payloads are not supported" },
		{ "short.http", "HTTP/1.1 503 X\r\nContent-Length: 99\r\n\r\nshort",
		  "the payload is 5 bytes but content-length says 99" },
		{ "long.http", "HTTP/1.1 503 X\r\nContent-Length: 2\r\n\r\nhello",
		  "the payload is 5 bytes but content-length says 2" },
		{ "204b.http", "HTTP/1.1 204 No\r\n\r\nxyz",
		  "a 204 response has no payload, but 3 bytes follow the head" },
		{ "101.http", "HTTP/1.1 101 Sw\r\n\r\n", "status 101 is not a final status" },
		{ "badhdr.http", "HTTP/1.1 503 X\r\nBad Header\r\n\r\n", "invalid HTTP response at byte" },
	};
	char msg[512];

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *p = write_file(bad[i].name, bad[i].data, strlen(bad[i].data));

		reset(NULL);
		LOAD(fe_line("errorfile 503 %s", p), 1);
		snprintf(msg, sizeof(msg), "t.cfg:2: 'errorfile' in frontend section: '%s': %s", p,
			 bad[i].msg);
		expect_msg(msg);
	}

	/* Larger than tune.bufsize. */
	{
		size_t n = global.bufsize + 1;
		char *big = malloc(n);

		memset(big, 'x', n);
		write_file("big.http", big, n);
		free(big);
		reset(NULL);
		LOAD(fe_line("errorfile 503 %s", tpath("big.http")), 1);
		expect_msg("is larger than tune.bufsize (16385 > 16384 bytes)");
	}
}

static void test_errorfile_kw_errors(void **state)
{
	WRITE("ok.http", "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n");
	LOAD("frontend fe\n    errorfile 503\n", 1);
	expect_msg("t.cfg:2: 'errorfile' in frontend section: expects <status_code> and <file> as arguments");
	reset(NULL);
	LOAD("frontend fe\n    errorfile\n", 1);
	expect_msg("expects <status_code> and <file>");
	reset(NULL);
	LOAD(fe_line("errorfile 418 %s", tpath("ok.http")), 1);
	expect_msg("t.cfg:2: 'errorfile' in frontend section: status code '418' has no error page "
		   "(expects one of 200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 421, 422, "
		   "425, 429, 500, 501, 502, 503, 504)");
	reset(NULL);
	LOAD(fe_line("errorfile abc %s", tpath("ok.http")), 1);
	expect_msg("status code 'abc' has no error page");
	reset(NULL);
	LOAD("backend be\n    errorfile 503 /nonexistent/x.http\n", 1);
	expect_msg("t.cfg:2: 'errorfile' in backend section: cannot open file "
		   "'/nonexistent/x.http': No such file or directory");
	reset(NULL);
	LOAD(fe_line("errorfile 503 %s extra", tpath("ok.http")), 0);
	expect_msg("extra arguments after the file are ignored ('extra')");
	reset(NULL);
	/* Valid in every proxy section, not in global. */
	LOAD("global\n    errorfile 503 /x\n", 1);
	expect_msg("'errorfile' is not valid in a global section");
}

/* ---- errorloc ---- */

static void test_errorloc(void **state)
{
	struct proxy *fe;

	LOAD("frontend fe\n    errorloc 502 http://example.com/x\n    errorloc302 403 /x\n"
	     "    errorloc303 504 /y\n", 0);
	fe = proxy_find("fe", PR_CAP_FE);
	/* haproxy 2.6 bytes */
	expect_bytes(http_error_reply(fe, 502), "HTTP/1.1 302 Found\r\ncache-control: no-cache\r\n"
		     "content-length: 0\r\nlocation: http://example.com/x\r\n\r\n");
	expect_bytes(http_error_reply(fe, 403), "HTTP/1.1 302 Found\r\ncache-control: no-cache\r\n"
		     "content-length: 0\r\nlocation: /x\r\n\r\n");
	expect_bytes(http_error_reply(fe, 504), "HTTP/1.1 303 See Other\r\ncache-control: no-cache\r\n"
		     "content-length: 0\r\nlocation: /y\r\n\r\n");
	reset(NULL);

	LOAD("frontend fe\n    errorloc 503\n", 1);
	expect_msg("t.cfg:2: 'errorloc' in frontend section: expects <status_code> and <url> as arguments");
	reset(NULL);
	LOAD("frontend fe\n    errorloc303 418 /x\n", 1);
	expect_msg("t.cfg:2: 'errorloc303' in frontend section: status code '418' has no error page");
}

/* ---- http-errors sections and errorfiles ---- */

static void test_http_errors_section(void **state)
{
	struct proxy *fe;
	char text[2048];

	WRITE("B.http", "HTTP/1.1 503 B\r\nContent-Length: 1\r\n\r\nB");
	WRITE("C.http", "HTTP/1.1 404 C\r\nContent-Length: 1\r\n\r\nC");
	/* The section may come after the proxy that names it. */
	snprintf(text, sizeof(text),
		 "frontend fe\n"
		 "    errorfiles eB\n"
		 "frontend f2\n"
		 "    errorfiles eB 404\n"
		 "http-errors eB\n"
		 "    errorfile 503 %s\n"
		 "    errorfile 404 %s\n", tpath("B.http"), tpath("C.http"));
	LOAD(text, 0);
	fe = proxy_find("fe", PR_CAP_FE);
	expect_bytes(http_error_reply(fe, 503), "HTTP/1.1 503 B\r\ncontent-length: 1\r\n\r\nB");
	expect_bytes(http_error_reply(fe, 404), "HTTP/1.1 404 C\r\ncontent-length: 1\r\n\r\nC");
	assert_null(http_error_find(fe, 500));
	fe = proxy_find("f2", PR_CAP_FE);
	assert_null(http_error_find(fe, 503));    /* only 404 was asked for */
	expect_bytes(http_error_reply(fe, 404), "HTTP/1.1 404 C\r\ncontent-length: 1\r\n\r\nC");
	reset(NULL);

	/* A code the section lacks: a warning when it was asked for. */
	snprintf(text, sizeof(text),
		 "http-errors eB\n"
		 "    errorfile 503 %s\n"
		 "frontend fe\n"
		 "    errorfiles eB 503 404\n"
		 "    errorfiles eB\n", tpath("B.http"));
	LOAD(text, 0);
	expect_msg("t.cfg:4: proxy 'fe': status 404 is not declared in http-errors section 'eB'");
	expect_no_msg("t.cfg:5:");
	reset(NULL);

	/* An unknown section, named once per proxy (and not for defaults). */
	LOAD("defaults\n    errorfiles nosuch\nfrontend fe\nfrontend f2\n", 1 + 1);
	expect_msg("t.cfg:2: proxy 'fe': unknown http-errors section 'nosuch'");
	expect_msg("t.cfg:2: proxy 'f2': unknown http-errors section 'nosuch'");
	reset(NULL);
	LOAD("frontend fe\n    http-error status 503 errorfiles nope\n", 1);
	expect_msg("t.cfg:2: proxy 'fe': unknown http-errors section 'nope'");
}

static void test_http_errors_section_errors(void **state)
{
	char text[2048];

	WRITE("B.http", "HTTP/1.1 503 B\r\nContent-Length: 1\r\n\r\nB");
	LOAD("http-errors\n", 1);
	expect_msg("t.cfg:1: 'http-errors' in http-errors section: expects a name");
	reset(NULL);
	LOAD("http-errors bad/name\n", 1);
	expect_msg("invalid name 'bad/name'");
	reset(NULL);
	LOAD("http-errors a\nhttp-errors a\n", 1);
	expect_msg("t.cfg:2: 'http-errors' in http-errors section: 'a' is already used by an "
		   "http-errors section declared at t.cfg:1");
	reset(NULL);
	LOAD("http-errors a b\n", 0);
	expect_msg("extra arguments after the name are ignored ('b')");
	reset(NULL);
	LOAD("http-errors a\n    errorfile 418 /x\n", 1);
	expect_msg("t.cfg:2: 'errorfile' in http-errors section: status code '418' has no error page");
	reset(NULL);
	LOAD("http-errors a\n    errorfile 503\n", 1);
	expect_msg("t.cfg:2: 'errorfile' in http-errors section: expects <status_code> and <file>");
	reset(NULL);
	LOAD("http-errors a\n    errorfile 503 /nonexistent/f\n", 1);
	expect_msg("cannot open file '/nonexistent/f'");
	reset(NULL);
	LOAD("http-errors a\n    foo bar\n", 1);
	expect_msg("t.cfg:2: unknown keyword 'foo' in http-errors section");
	reset(NULL);
	LOAD("http-errors a\n    errorloc 503 /x\n", 1);
	expect_msg("t.cfg:2: 'errorloc' is not valid in a http-errors section");
	reset(NULL);
	/* After a failed header, its lines are not reported again. */
	snprintf(text, sizeof(text), "http-errors\n    errorfile 503 %s\n", tpath("B.http"));
	LOAD(text, 1);
	reset(NULL);
	LOAD("frontend fe\n    errorfiles\n", 1);
	expect_msg("t.cfg:2: 'errorfiles' in frontend section: expects <name> [<status_code> ...] as arguments");
	reset(NULL);
	LOAD("frontend fe\n    errorfiles x 418\n", 1);
	expect_msg("status code '418' has no error page");
	reset(NULL);
	/* A later section of another name is fine, and the first is kept. */
	snprintf(text, sizeof(text), "http-errors a\n    errorfile 503 %s\nhttp-errors b\n"
		 "frontend fe\n    errorfiles a\n", tpath("B.http"));
	LOAD(text, 0);
	assert_non_null(http_error_find(proxy_find("fe", PR_CAP_FE), 503));
}

/* Replies naming a section are completed at post-parse. */
static void test_reply_errorfiles_pending(void **state)
{
	struct http_reply r1, r2, r3;
	char text[1024];

	WRITE("B.http", "HTTP/1.1 503 B\r\nContent-Length: 1\r\n\r\nB");
	assert_int_equal(parse_reply("status 503 errorfiles eB", &r1, NULL), 0);
	assert_int_equal(parse_reply("status 400 errorfiles eB", &r2, NULL), 0);
	assert_int_equal(parse_reply("status 503 errorfiles nosuch", &r3, NULL), 0);
	assert_int_equal(r1.type, HTTP_REPLY_ERRMSG);   /* known at parse time */
	snprintf(text, sizeof(text), "http-errors eB\n    errorfile 503 %s\n", tpath("B.http"));
	LOAD(text, 1);
	expect_msg("t.cfg:7: unknown http-errors section 'nosuch' named by a reply");
	expect_msg("t.cfg:7: status 400 is not declared in http-errors section 'eB'; the reply "
		   "has no payload");
	assert_int_equal(r1.type, HTTP_REPLY_ERRMSG);
	expect_bytes(&r1, "HTTP/1.1 503 B\r\ncontent-length: 1\r\n\r\nB");
	/* haproxy 2.6 sends this for the missing code */
	assert_int_equal(r2.type, HTTP_REPLY_EMPTY);
	expect_bytes(&r2, "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
	http_reply_release(&r1);
	http_reply_release(&r2);
	http_reply_release(&r3);

	/* Released before post-parse: forgotten, nothing dangles. */
	assert_int_equal(parse_reply("status 503 errorfiles eB", &r1, NULL), 0);
	http_reply_release(&r1);
	reset(NULL);
	LOAD(text, 0);
}

/* ---- http-error ---- */

static void test_http_error(void **state)
{
	struct proxy *fe;
	char text[2048];

	WRITE("ef404.http", "HTTP/1.1 404 Not There\r\nContent-Length: 5\r\n\r\nhello");
	snprintf(text, sizeof(text),
		 "frontend fe\n"
		 "    http-error status 429 content-type text/plain string too-many hdr X-A b "
		 "hdr x-lf %%HP\n"
		 "    http-error status 410\n"
		 "    http-error status 421 errorfile %s\n"
		 "    http-error status 500 default-errorfiles\n"
		 "    http-error status 200\n", tpath("ef404.http"));
	LOAD(text, 0);
	fe = proxy_find("fe", PR_CAP_FE);
	/* haproxy 2.6 bytes (%HP is the request path) */
	expect_bytes(http_error_reply(fe, 429), "HTTP/1.1 429 Too Many Requests\r\nx-a: b\r\n"
		     "x-lf: /p\r\ncontent-length: 8\r\ncontent-type: text/plain\r\n\r\ntoo-many");
	expect_bytes(http_error_reply(fe, 410), "HTTP/1.1 410 Gone\r\ncontent-length: 0\r\n\r\n");
	expect_bytes(http_error_reply(fe, 421), "HTTP/1.1 404 Not There\r\ncontent-length: 5\r\n"
		     "\r\nhello");
	assert_ptr_equal(http_error_reply(fe, 500), http_error_reply(NULL, 500));
	assert_non_null(http_error_find(fe, 500));
	reset(NULL);

	LOAD("frontend fe\n    http-error\n", 1);
	expect_msg("t.cfg:2: 'http-error' in frontend section: expects 'status <code>' first");
	reset(NULL);
	LOAD("frontend fe\n    http-error foo\n", 1);
	expect_msg("expects 'status <code>' first");
	reset(NULL);
	LOAD("frontend fe\n    http-error status\n", 1);
	expect_msg("'status' expects <status_code> as argument");
	reset(NULL);
	LOAD("frontend fe\n    http-error status 418\n", 1);
	expect_msg("status 418 has no error page to replace");
	reset(NULL);
	LOAD("frontend fe\n    http-error status 503 if TRUE\n", 1);
	expect_msg("unexpected 'if': http-error takes no condition");
	reset(NULL);
	LOAD("frontend fe\n    http-error status 503 bogus\n", 1);
	expect_msg("unexpected argument 'bogus'");
	reset(NULL);
	LOAD("frontend fe\n    http-error status 503 string x\n", 1);
	expect_msg("a payload needs a content type");
	reset(NULL);
	LOAD("frontend fe\n    http-error status 503 content-type t/p string x hdr a\n", 1);
	expect_msg("'hdr' expects <name> and <value> as arguments");
}

/* Among errorfile, errorloc, errorfiles and http-error lines of a proxy,
 * the last one for a code wins (as haproxy 2.6 showed). */
static void test_last_line_wins(void **state)
{
	char text[4096];

	WRITE("A.http", "HTTP/1.1 503 A\r\nContent-Length: 1\r\n\r\nA");
	WRITE("B.http", "HTTP/1.1 503 B\r\nContent-Length: 1\r\n\r\nB");
	WRITE("C.http", "HTTP/1.1 503 C\r\nContent-Length: 1\r\n\r\nC");
	snprintf(text, sizeof(text),
		 "defaults\n"
		 "    errorfile 503 %s\n"
		 "    errorfile 502 %s\n"
		 "    errorfiles eB 500\n"
		 "http-errors eB\n"
		 "    errorfile 503 %s\n"
		 "    errorfile 500 %s\n"
		 "frontend f1\n"
		 "    errorfile 503 %s\n"
		 "    errorfiles eB\n"
		 "frontend f2\n"
		 "    errorfiles eB\n"
		 "    errorfile 503 %s\n"
		 "    errorfile 500 %s\n"
		 "frontend f3\n"
		 "    http-error status 503 content-type text/plain string HE\n"
		 "    errorfile 503 %s\n"
		 "frontend f4\n"
		 "    errorfile 503 %s\n"
		 "    http-error status 503 content-type text/plain string HE\n"
		 "frontend f5\n"
		 "    http-error status 503 errorfiles eB\n"
		 "    errorfiles eB 500\n",
		 tpath("A.http"), tpath("A.http"), tpath("B.http"), tpath("B.http"),
		 tpath("C.http"), tpath("C.http"), tpath("C.http"), tpath("C.http"),
		 tpath("C.http"));
	LOAD(text, 0);
#define BODY(px, code) (http_error_reply(proxy_find(px, PR_CAP_FE), code)->body)
	assert_string_equal(BODY("f1", 503), "B");
	assert_string_equal(BODY("f1", 502), "A");   /* from defaults */
	assert_string_equal(BODY("f1", 500), "B");   /* defaults' errorfiles, resolved */
	assert_string_equal(BODY("f2", 503), "C");
	assert_string_equal(BODY("f2", 500), "C");
	assert_string_equal(BODY("f3", 503), "C");
	assert_string_equal(BODY("f4", 503), "HE");
	assert_string_equal(BODY("f5", 503), "B");
	assert_string_equal(BODY("f5", 502), "A");
#undef BODY
}

/* A proxy starts with its defaults section's pages; the last defaults
 * before it, or the one it names. Replies are shared, then released
 * once (ASan checks the counts). */
static void test_inherit_defaults(void **state)
{
	struct proxy *fe, *be, *other;
	char text[2048];

	WRITE("A.http", "HTTP/1.1 503 A\r\nContent-Length: 1\r\n\r\nA");
	WRITE("C.http", "HTTP/1.1 503 C\r\nContent-Length: 1\r\n\r\nC");
	snprintf(text, sizeof(text),
		 "defaults base\n"
		 "    errorfile 503 %s\n"
		 "    http-error status 504 content-type text/plain string D504\n"
		 "    errorloc 403 /login\n"
		 "frontend fe\n"
		 "    errorfile 504 %s\n"
		 "backend be\n"
		 "defaults plain\n"
		 "backend other\n"
		 "backend named from base\n", tpath("A.http"), tpath("C.http"));
	LOAD(text, 0);
	fe = proxy_find("fe", PR_CAP_FE);
	be = proxy_find("be", PR_CAP_BE);
	other = proxy_find("other", PR_CAP_BE);
	assert_string_equal(http_error_reply(fe, 503)->body, "A");
	assert_string_equal(http_error_reply(fe, 504)->body, "C");      /* overridden */
	assert_string_equal(http_error_reply(be, 504)->body, "D504");
	assert_ptr_equal(http_error_reply(fe, 503), http_error_reply(be, 503));  /* shared */
	expect_bytes(http_error_reply(be, 403), "HTTP/1.1 302 Found\r\ncache-control: no-cache\r\n"
		     "content-length: 0\r\nlocation: /login\r\n\r\n");
	assert_null(http_error_find(other, 503));                       /* defaults "plain" */
	assert_null(other->http_errors);
	assert_string_equal(http_error_reply(proxy_find("named", PR_CAP_BE), 503)->body, "A");
}

static int group_setup(void **state)
{
	pristine = global;
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_default_pages, reset),
		cmocka_unit_test_teardown(test_unknown_code, reset),
		cmocka_unit_test_teardown(test_reasons, reset),
		cmocka_unit_test_teardown(test_reply_string_and_hdrs, reset),
		cmocka_unit_test_teardown(test_reply_hdr_crlf, reset),
		cmocka_unit_test_teardown(test_reply_empty, reset),
		cmocka_unit_test_teardown(test_reply_files, reset),
		cmocka_unit_test_teardown(test_reply_default_errorfiles, reset),
		cmocka_unit_test_teardown(test_reply_errors, reset),
		cmocka_unit_test_teardown(test_reply_ignored_hdrs, reset),
		cmocka_unit_test_teardown(test_head_too_small, reset),
		cmocka_unit_test_teardown(test_errorfile_valid, reset),
		cmocka_unit_test_teardown(test_errorfile_invalid, reset),
		cmocka_unit_test_teardown(test_errorfile_kw_errors, reset),
		cmocka_unit_test_teardown(test_errorloc, reset),
		cmocka_unit_test_teardown(test_http_errors_section, reset),
		cmocka_unit_test_teardown(test_http_errors_section_errors, reset),
		cmocka_unit_test_teardown(test_reply_errorfiles_pending, reset),
		cmocka_unit_test_teardown(test_http_error, reset),
		cmocka_unit_test_teardown(test_last_line_wins, reset),
		cmocka_unit_test_teardown(test_inherit_defaults, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
