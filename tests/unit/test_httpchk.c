/* Unit tests for HTTP health checks (httpchk.c): "option httpchk" and
 * "http-check" parsing and error messages, the requests built from them,
 * defaults inheritance, status code lists, and the reading of answers. */
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
#include <sluice/check.h>
#include <sluice/global.h>
#include <sluice/httpchk.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/tcpcheck.h>

#include "cfg_capture.h"
#include "check_harness.h"

/* ---- option httpchk ---- */

static void test_option_forms(void **state)
{
	LOAD(DEFAULTS
	     "backend b0\n  option httpchk\n"
	     "backend b1\n  option httpchk /health\n"
	     "backend b2\n  option httpchk GET /h?x=1\n"
	     "backend b3\n  option httpchk HEAD /h HTTP/1.1\n"
	     "backend b4\n  mode tcp\n  option httpchk OPTIONS * HTTP/1.1\n", 0);
	expect_no_msg("WARNING");
	expect_send("b0", 0, "OPTIONS / HTTP/1.0\r\n\r\n");
	expect_send("b1", 0, "OPTIONS /health HTTP/1.0\r\n\r\n");
	expect_send("b2", 0, "GET /h?x=1 HTTP/1.0\r\n\r\n");
	expect_send("b3", 0, "HEAD /h HTTP/1.1\r\nconnection: close\r\n\r\n");
	expect_send("b4", 0, "OPTIONS * HTTP/1.1\r\nconnection: close\r\n\r\n");
	/* The implicit expect: 2xx and 3xx. */
	assert_int_equal(count_rules("b0"), 2);
	assert_int_equal(rule_at("b0", 1)->type, TCPCHK_EXPECT);
	assert_int_equal(rule_at("b0", 1)->match, TCPCHK_M_HTTP_STATUS);
	assert_int_equal(rule_at("b0", 1)->codes[0].lo, 200);
	assert_int_equal(rule_at("b0", 1)->codes[0].hi, 399);
	assert_true(chk_px_of(proxy_find("b4", PR_CAP_BE))->options & CHK_O_HTTPCHK);
}

static void test_option_version_trick(void **state)
{
	LOAD(DEFAULTS
	     "backend b1\n  option httpchk GET /x HTTP/1.1\\r\\nHost:\\ www\\r\\nX-Y:\\ z\n"
	     "backend b2\n  option httpchk POST /p \"HTTP/1.0\\r\\nHost: a\\r\\n\\r\\nping\"\n"
	     "backend b3\n  option httpchk GET /x HTTP/1.1\\r\\nHost:\\ a\n"
	     "  http-check send hdr Host b\n"
	     "backend b4\n  option httpchk GET /x HTTP/1.1\\r\\nHost:\\ a\n"
	     "  http-check send uri /y\n", 0);
	expect_msg("t.cfg:7: 'option httpchk' in backend section: hiding headers or body at "
		   "the end of the version string is deprecated; use 'http-check send' instead");
	expect_send("b1", 0, "GET /x HTTP/1.1\r\nhost: www\r\nx-y: z\r\nconnection: close\r\n\r\n");
	expect_send("b2", 0, "POST /p HTTP/1.0\r\nhost: a\r\ncontent-length: 4\r\n\r\nping");
	/* A send rule's own fields replace the hidden ones (HAProxy 2.6). */
	expect_send("b3", 0, "GET /x HTTP/1.1\r\nhost: b\r\nconnection: close\r\n\r\n");
	expect_send("b4", 0, "GET /y HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n");
}

static void test_option_errors(void **state)
{
	LOAD(DEFAULTS "backend b\n  option httpchk GET / HTTP/1.1 extra\n", 1);
	expect_msg("t.cfg:7: 'option httpchk' in backend section: cannot handle unexpected "
		   "argument 'extra' (expects [<method>] <uri> [<version>])");
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  option httpchk GET / HTTP/1.1\\r\\nnocolon\n", 1);
	expect_msg("invalid header line 'nocolon' after the version (expects '<name>: <value>')");
	reset(NULL);
	LOAD(DEFAULTS "frontend f\n  bind :8080\n  option httpchk\n", 1);
	expect_msg("'option httpchk' is not valid in a frontend section");
}

/* ---- http-check send / expect / connect / comment ---- */

static void test_send_rules(void **state)
{
	LOAD(DEFAULTS
	     "backend b1\n  option httpchk GET /a\n  http-check send hdr Host x\n"
	     "backend b2\n  option httpchk GET /a\n  http-check send uri /b\n"
	     "backend b3\n  option httpchk\n"
	     "  http-check send meth POST uri /p ver HTTP/1.1 hdr Host example.org "
	     "hdr X-Check yes body hello\n"
	     "backend b4\n  option httpchk\n"
	     "  http-check send ver HTTP/1.1 hdr Connection keep-alive hdr Content-Length 99 "
	     "hdr Transfer-Encoding chunked\n"
	     "backend b5\n  http-check expect status 200\n  option httpchk GET /late\n", 0);
	expect_send("b1", 0, "GET /a HTTP/1.0\r\nhost: x\r\n\r\n");
	expect_send("b2", 0, "GET /b HTTP/1.0\r\n\r\n");
	expect_send("b3", 0, "POST /p HTTP/1.1\r\nhost: example.org\r\nx-check: yes\r\n"
		    "content-length: 5\r\nconnection: close\r\n\r\nhello");
	/* Framing fields are ours; a Connection field replaces ours. */
	expect_send("b4", 0, "OPTIONS / HTTP/1.1\r\nconnection: keep-alive\r\n\r\n");
	/* "option httpchk" after the rules still gives the request. */
	expect_send("b5", 0, "GET /late HTTP/1.0\r\n\r\n");
	assert_int_equal(count_rules("b5"), 2);
}

static void test_sequences(void **state)
{
	const struct tcpchk_rule *r;
	int dynamic = 1;

	LOAD(DEFAULTS
	     "backend b\n  option httpchk\n"
	     "  http-check comment \"first exchange\"\n"
	     "  http-check connect\n"
	     "  http-check send uri /one\n"
	     "  http-check expect status 200\n"
	     "  http-check connect port 8081 addr 127.0.0.2\n"
	     "  http-check send uri /two\n"
	     "  http-check comment \"body check\"\n"
	     "  http-check expect ! rstring ^error\n"
	     "  server s 127.0.0.1:80 check\n", 0);
	assert_int_equal(count_rules("b"), 8);
	assert_int_equal(rule_at("b", 0)->type, TCPCHK_COMMENT);
	r = rule_at("b", 1);
	assert_int_equal(r->type, TCPCHK_CONNECT);
	assert_string_equal(r->comment, "first exchange");
	expect_send("b", 2, "OPTIONS /one HTTP/1.0\r\n\r\n");
	r = rule_at("b", 4);
	assert_int_equal(r->type, TCPCHK_CONNECT);
	assert_int_equal(r->port, 8081);
	assert_true(r->flags & TCPCHK_F_HAS_ADDR);
	/* Only the first request takes "option httpchk"'s defaults. */
	expect_send("b", 5, "OPTIONS /two HTTP/1.0\r\n\r\n");
	r = rule_at("b", 7);
	assert_int_equal(r->match, TCPCHK_M_HTTP_RBODY);
	assert_true(r->inverse);
	assert_string_equal(r->comment, "body check");
	/* A leading connect without a port leaves the server's. */
	assert_int_equal(tcpchk_connect_port(proxy_find("b", PR_CAP_BE), &dynamic), 0);
	assert_int_equal(dynamic, 0);
}

static void test_implicit_send_after_connect(void **state)
{
	LOAD(DEFAULTS "backend b\n  option httpchk GET /x\n"
	     "  http-check connect port 8080\n  http-check expect string ok\n"
	     "  server s 127.0.0.1 check\n", 0);
	assert_int_equal(count_rules("b"), 3);
	assert_int_equal(rule_at("b", 0)->type, TCPCHK_CONNECT);
	expect_send("b", 1, "GET /x HTTP/1.0\r\n\r\n");
	assert_int_equal(rule_at("b", 2)->match, TCPCHK_M_HTTP_BODY);
	/* The connect rule gives checks the port the server line lacks. */
	assert_int_equal(proxy_find("b", PR_CAP_BE)->servers->check.port, 8080);
}

static void test_expect_forms(void **state)
{
	const struct tcpchk_rule *r;

	LOAD(DEFAULTS
	     "backend b1\n  option httpchk\n  http-check expect status 200,201,300-310\n"
	     "backend b2\n  option httpchk\n  http-check expect ! rstatus ^5\n"
	     "backend b3\n  option httpchk\n  http-check expect comment why string OK\n"
	     "backend b4\n  option httpchk\n  http-check expect !string SQL\\ Error\n", 0);
	r = rule_at("b1", 1);
	assert_int_equal(r->ncodes, 3);
	assert_true(httpchk_codes_match(r->codes, r->ncodes, 201));
	assert_true(httpchk_codes_match(r->codes, r->ncodes, 305));
	assert_false(httpchk_codes_match(r->codes, r->ncodes, 202));
	assert_int_equal(count_rules("b1"), 2);   /* no implicit expect */
	r = rule_at("b2", 1);
	assert_int_equal(r->match, TCPCHK_M_HTTP_RSTATUS);
	assert_true(r->inverse);
	r = rule_at("b3", 1);
	assert_int_equal(r->match, TCPCHK_M_HTTP_BODY);
	assert_string_equal(r->comment, "why");
	r = rule_at("b4", 1);
	assert_true(r->inverse);
	assert_string_equal(r->data, "SQL Error");
}

static void test_disable_on_404(void **state)
{
	LOAD(DEFAULTS "  http-check disable-on-404\n"
	     "backend b1\n  option httpchk\n"
	     "backend b2\n  option httpchk\n  no option tcp-check\n", 0);
	assert_true(chk_px_of(proxy_find("b1", PR_CAP_BE))->options & CHK_O_DISABLE404);
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  http-check disable-on-404 now\n", 1);
	expect_msg("'http-check' in backend section: 'disable-on-404' takes no argument "
		   "(got 'now')");
}

static const struct {
	const char *line;
	const char *msg;
} bad_lines[] = {
	{ "http-check", "expects disable-on-404, send, send-state, expect, connect, set-var, "
	  "set-var-fmt, unset-var or comment\n" },
	{ "http-check bogus", "expects disable-on-404, send, send-state, expect, connect, set-var, "
	  "set-var-fmt, unset-var or comment, but got 'bogus'" },
	{ "http-check expect", "'expect' expects [!] status|rstatus|hdr|fhdr|string|rstring|"
	  "string-lf <pattern>" },
	{ "http-check expect !", "'expect' expects [!] status|rstatus|hdr|fhdr|string|rstring|"
	  "string-lf <pattern>" },
	{ "http-check expect foo 200", "'expect' expects [!] status, rstatus, hdr, fhdr, string, "
	  "rstring or string-lf, or an option (min-recv, comment, ok-status, error-status, "
	  "tout-status, on-success, on-error, status-code), but got 'foo'" },
	{ "http-check expect status", "'expect status' expects a pattern as argument" },
	{ "http-check expect status abc", "'expect status': invalid character 'a' in the list of "
	  "status codes" },
	{ "http-check expect status 200-", "invalid range of status codes '200-'" },
	{ "http-check expect status 300-200", "invalid range of status codes '300-200'" },
	{ "http-check expect status 200,", "empty status code at the end of the list" },
	{ "http-check expect status 200 string x", "'expect' takes only one pattern (unexpected "
	  "'string')" },
	{ "http-check expect rstring (", "invalid regex '(' at offset 1" },
	{ "http-check expect status 200 comment", "'comment' expects a string as argument" },
	{ "http-check expect min-recv -2 status 200", "'min-recv' expects an integer (-1 or more), "
	  "got '-2'" },
	{ "http-check expect ok-status L7STS status 200", "'ok-status' expects L7OK, L7OKC, L6OK or "
	  "L4OK, but got 'L7STS'" },
	{ "http-check expect tout-status L7OK status 200", "'tout-status' expects L7TOUT, L6TOUT or "
	  "L4TOUT, but got 'L7OK'" },
	{ "http-check expect on-error \"%[src]\" status 200", "'on-error': fetch 'src' cannot be "
	  "used here" },
	{ "http-check expect status-code req.hdr(x) status 200", "'status-code': fetch 'req.hdr' "
	  "cannot be used here" },
	{ "http-check expect hdr name", "'name' expects a pattern" },
	{ "http-check expect hdr name -m foo x", "'name -m' expects str, beg, end, sub or reg, but "
	  "got 'foo'" },
	{ "http-check expect hdr name -m reg (", "invalid regex '(' at offset 1" },
	{ "http-check send meth", "'meth' expects a method as argument" },
	{ "http-check send meth \"G T\"", "invalid method 'G T'" },
	{ "http-check send uri", "'uri' expects a URI as argument" },
	{ "http-check send hdr X", "'hdr' expects <name> and <value> as arguments" },
	{ "http-check send hdr X:y z", "invalid header name 'X:y'" },
	{ "http-check send body", "'body' expects a string as argument" },
	{ "http-check send foo bar", "'send' expects meth, uri, uri-lf, ver, hdr, body, body-lf or "
	  "comment, but got 'foo'" },
	{ "http-check send uri-lf", "'uri-lf' expects a log-format string as argument" },
	{ "http-check send uri-lf %[bogus]", "'uri-lf': " },
	{ "http-check connect port 0", "'port' expects a TCP port (1 to 65535), got '0'" },
	{ "http-check connect port", "'port' expects a TCP port (1 to 65535) or a sample "
	  "expression as argument" },
	{ "http-check connect addr", "'addr' expects an IP address" },
	{ "http-check connect proto h3", "'proto' expects an HTTP protocol ('h1', 'h2' or "
	  "'fcgi'), but got 'h3'" },
	{ "http-check connect alpn ,", "'alpn' expects a comma-separated list of protocol names" },
	{ "http-check connect foo", "'connect' expects default, port, addr, send-proxy, "
	  "via-socks4, ssl, sni, alpn, linger, proto or comment, but got 'foo'" },
	{ "http-check comment", "'comment' expects a string as argument" },
	{ "http-check send-state now", "'send-state' takes no argument (got 'now')" },
	{ "http-check set-var(check.x)", "'set-var(check.x)' expects a sample expression" },
	{ "http-check unset-var(check.x) y", "'unset-var(check.x)' takes no argument (got 'y')" },
	{ "http-check set-var(foo) int(1)", "invalid variable name 'foo'" },
};

static void test_errors(void **state)
{
	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		char text[512];

		snprintf(text, sizeof(text), DEFAULTS "backend b\n  option httpchk\n  %s\n",
			 bad_lines[i].line);
		LOAD(text, 1);
		expect_msg("t.cfg:8: 'http-check' in backend section: ");
		expect_msg(bad_lines[i].msg);
		reset(NULL);
	}
}

static void test_ordering_errors(void **state)
{
	LOAD(DEFAULTS "backend b\n  option httpchk\n  http-check send uri /a\n"
	     "  http-check expect status 200\n  http-check send uri /b\n", 1);
	expect_msg("t.cfg:10: 'http-check' in backend section: 'send' at step 3 needs a new "
		   "connection after an expect: add an 'http-check connect' before it");
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  http-check send uri /a\n  http-check connect port 81\n", 1);
	expect_msg("'connect' at step 2: the first rule must then be a 'connect' too (only "
		   "comments and variables may precede it)");
	reset(NULL);
	/* Comments may precede the first connect. */
	LOAD(DEFAULTS "backend b\n  option httpchk\n  http-check comment hi\n"
	     "  http-check connect\n  http-check send uri /a\n", 0);
}

static void test_frontend_refused(void **state)
{
	LOAD(DEFAULTS "frontend f\n  bind :8080\n  http-check expect status 200\n", 1);
	expect_msg("'http-check' is not valid in a frontend section");
}

static void test_rules_without_option(void **state)
{
	LOAD(DEFAULTS "backend b\n  http-check send uri /a\n", 0);
	expect_msg("backend 'b' uses http-check rules without 'option httpchk', so the rules are "
		   "ignored");
	assert_null(rules_of("b"));
}

/* ---- defaults, and the other check types ---- */

static void test_defaults_inheritance(void **state)
{
	LOAD(DEFAULTS "  option httpchk GET /from-defaults\n"
	     "  http-check expect status 204\n"
	     "backend b1\n"
	     "backend b2\n  http-check send hdr Host x\n"
	     "backend b3\n  option httpchk /own\n"
	     "backend b4\n  option tcp-check\n", 0);
	/* Inherited as a whole. */
	expect_send("b1", 0, "GET /from-defaults HTTP/1.0\r\n\r\n");
	assert_int_equal(rule_at("b1", 1)->codes[0].lo, 204);
	/* A rule of its own starts a fresh ruleset (option httpchk's request
	 * included), as in HAProxy. */
	expect_send("b2", 0, "OPTIONS / HTTP/1.0\r\nhost: x\r\n\r\n");
	assert_int_equal(rule_at("b2", 1)->codes[0].lo, 200);
	expect_send("b3", 0, "OPTIONS /own HTTP/1.0\r\n\r\n");
	assert_int_equal(count_rules("b3"), 2);
	assert_int_equal(rule_at("b3", 1)->codes[0].hi, 399);
	/* The last check type named wins. */
	assert_false(chk_px_of(proxy_find("b4", PR_CAP_BE))->options & CHK_O_HTTPCHK);
}

static void test_last_check_type_wins(void **state)
{
	LOAD(DEFAULTS "backend b1\n  option httpchk\n  option redis-check\n"
	     "backend b2\n  option tcp-check\n  option httpchk\n", 0);
	assert_int_equal(rule_at("b1", 0)->flags & TCPCHK_F_HTTP, 0);
	assert_true(rule_at("b2", 0)->flags & TCPCHK_F_HTTP);
}

/* ---- status codes, requests and answers ---- */

static void test_codes_parse(void **state)
{
	struct tcpchk_codes *c;
	char err[128];
	int n;

	assert_int_equal(httpchk_codes_parse("200", &c, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_true(httpchk_codes_match(c, n, 200));
	assert_false(httpchk_codes_match(c, n, 201));
	free(c);
	assert_int_equal(httpchk_codes_parse("200-299,404,500-599", &c, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_true(httpchk_codes_match(c, n, 250));
	assert_true(httpchk_codes_match(c, n, 404));
	assert_true(httpchk_codes_match(c, n, 599));
	assert_false(httpchk_codes_match(c, n, 403));
	free(c);
	assert_int_equal(httpchk_codes_parse("", &c, &n, err, sizeof(err)), -1);
	assert_int_equal(httpchk_codes_parse("-200", &c, &n, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid range of status codes '-200'");
	assert_int_equal(httpchk_codes_parse("200,,300", &c, &n, err, sizeof(err)), -1);
	assert_int_equal(httpchk_codes_parse("2x0", &c, &n, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid character 'x' in the list of status codes");
	assert_int_equal(httpchk_codes_parse("1-2-3", &c, &n, err, sizeof(err)), -1);
	assert_null(c);
}

/* Feeds <text> to the answer reader one byte more at a time: before the
 * last <slack> bytes it must ask for more (or, for a close-delimited body,
 * wait for the end of input), at the end it must give <status> and <body>. */
static void check_answer(const char *text, int head_req, int need_body, int status,
                         const char *body, size_t slack)
{
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	struct chk_http st;
	int rc;

	assert_non_null(buf);
	for (size_t cut = 0; cut + slack < len; cut++) {
		memset(&st, 0, sizeof(st));
		st.head_req = head_req;
		memcpy(buf, text, len);
		rc = httpchk_rsp_parse(&st, buf, cut, 0, need_body);
		if (rc == 1 && need_body)
			fail_msg("complete at %zu of %zu bytes: %s", cut, len, text);
		assert_true(rc >= 0);
	}
	memset(&st, 0, sizeof(st));
	st.head_req = head_req;
	memcpy(buf, text, len);
	rc = httpchk_rsp_parse(&st, buf, len, 1, need_body);
	assert_int_equal(rc, 1);
	assert_int_equal(st.status, status);
	if (body) {
		assert_int_equal(st.body_len, strlen(body));
		assert_memory_equal(buf + st.body_off, body, strlen(body));
	}
	free(buf);
}

static void test_answers(void **state)
{
	struct chk_http st;
	char buf[256];

	check_answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0, 1, 200, "hello", 0);
	/* The body is known at the last chunk; the trailer section is not awaited. */
	check_answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		     "3\r\nhel\r\n2;ext=1\r\nlo\r\n0\r\n\r\n", 0, 1, 200, "hello", 2);
	check_answer("HTTP/1.0 503 Service Unavailable\r\n\r\ndown for maintenance", 0, 1, 503,
		     "down for maintenance", 0);
	check_answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 1, 1, 200, "", 0);
	check_answer("HTTP/1.1 204 No Content\r\n\r\n", 0, 1, 204, "", 0);
	check_answer("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc", 0, 0, 404, NULL,
		     0);

	/* The status is known as soon as the head is. */
	memset(&st, 0, sizeof(st));
	snprintf(buf, sizeof(buf), "HTTP/1.1 302 Found\r\nContent-Length: 100\r\n\r\npartial");
	assert_int_equal(httpchk_rsp_parse(&st, buf, strlen(buf), 0, 0), 1);
	assert_int_equal(st.status, 302);
	assert_int_equal(st.reason_len, 5);
	assert_memory_equal(buf + st.reason_off, "Found", 5);
	/* A body cut by the end of input is what there is. */
	assert_int_equal(httpchk_rsp_parse(&st, buf, strlen(buf), 0, 1), 0);
	assert_int_equal(httpchk_rsp_parse(&st, buf, strlen(buf), 1, 1), 1);
	assert_int_equal(st.body_len, 7);

	/* Not HTTP, or a head cut by the end of input. */
	memset(&st, 0, sizeof(st));
	snprintf(buf, sizeof(buf), "garbage here\r\n");
	assert_int_equal(httpchk_rsp_parse(&st, buf, strlen(buf), 1, 0), -1);
	memset(&st, 0, sizeof(st));
	snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nServer: x\r\n");
	assert_int_equal(httpchk_rsp_parse(&st, buf, strlen(buf), 0, 0), 0);
	assert_int_equal(httpchk_rsp_parse(&st, buf, strlen(buf), 1, 0), -1);
	memset(&st, 0, sizeof(st));
	assert_int_equal(httpchk_rsp_parse(&st, buf, 0, 1, 0), -1);
	memset(&st, 0, sizeof(st));
	snprintf(buf, sizeof(buf), "+PONG\r\n");
	assert_int_equal(httpchk_rsp_parse(&st, buf, strlen(buf), 0, 0), -1);
}

static void test_req_build(void **state)
{
	struct httpchk_req q = { 0 };
	struct httpchk_hdr h[2] = { { "Host", "a", NULL }, { "X-Long-Name", "v w", NULL } };
	size_t len;
	char *s;

	s = httpchk_req_build(&q, &len);
	assert_string_equal(s, "OPTIONS / HTTP/1.0\r\n\r\n");
	assert_int_equal(len, strlen(s));
	free(s);
	q.meth = "GET";
	q.uri = "/status";
	q.ver = "HTTP/1.1";
	q.hdrs = h;
	q.nhdrs = 2;
	q.body = "";
	s = httpchk_req_build(&q, &len);
	assert_string_equal(s, "GET /status HTTP/1.1\r\nhost: a\r\nx-long-name: v w\r\n"
			    "content-length: 0\r\nconnection: close\r\n\r\n");
	free(s);
	assert_true(httpchk_req_is_head(&(struct httpchk_req){ .meth = "head" }));
	assert_false(httpchk_req_is_head(&q));
	assert_false(httpchk_req_is_head(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_option_forms, reset),
		cmocka_unit_test_teardown(test_option_version_trick, reset),
		cmocka_unit_test_teardown(test_option_errors, reset),
		cmocka_unit_test_teardown(test_send_rules, reset),
		cmocka_unit_test_teardown(test_sequences, reset),
		cmocka_unit_test_teardown(test_implicit_send_after_connect, reset),
		cmocka_unit_test_teardown(test_expect_forms, reset),
		cmocka_unit_test_teardown(test_disable_on_404, reset),
		cmocka_unit_test_teardown(test_errors, reset),
		cmocka_unit_test_teardown(test_ordering_errors, reset),
		cmocka_unit_test_teardown(test_frontend_refused, reset),
		cmocka_unit_test_teardown(test_rules_without_option, reset),
		cmocka_unit_test_teardown(test_defaults_inheritance, reset),
		cmocka_unit_test_teardown(test_last_check_type_wins, reset),
		cmocka_unit_test_teardown(test_codes_parse, reset),
		cmocka_unit_test_teardown(test_answers, reset),
		cmocka_unit_test_teardown(test_req_build, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
