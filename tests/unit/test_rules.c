/* Unit tests for the HTTP rules (src/http/rules.c, src/http/redirect.c):
 * every action parsed from configuration text (valid forms, and invalid
 * ones with their messages), then run on heads parsed from real messages,
 * comparing the bytes http_head_write() gives. Replies, log-format and the
 * HTTP analyser are the real modules: rules run for a stream made by
 * http_stream_init(), whose client is 192.0.2.7. */
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
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/http_reply.h>
#include <sluice/http_rules.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/stream.h>

/* The rule structures, to see which values were compiled as log-formats. */
#include "../../src/http/rules_int.h"

#include "cfg_capture.h"
#include "rules_stream.h"

/* ---- helpers ---- */

/* Value of request (<res> 0) or response capture slot <idx> of the test
 * stream, NULL when nothing was captured there. */
static const char *strm_cap(int res, int idx)
{
	char **tab = res ? strm.txn->res_cap : strm.txn->req_cap;

	return tab ? tab[idx] : NULL;
}

/* The head rules run on, parsed by msg_parse(), and its text afterwards. */
static struct msg msg;
static char msg_out[8192];

static const char *msg_text(void)
{
	size_t n = http_head_write(&msg.h, msg_out);

	assert_int_equal(n, http_head_len(&msg.h));
	msg_out[n] = '\0';
	return msg_out;
}

static struct proxy *fe(void)
{
	struct proxy *px = proxy_find("fe", PR_CAP_FE);

	assert_non_null(px);
	return px;
}

/* How many rules of <set> of <px> hold a compiled log-format. */
static int lf_rules(struct proxy *px, enum http_rule_set set)
{
	int n = 0;

	for (const struct http_rule *r = http_rules_of(px, set)->head; r; r = r->next)
		n += r->fmt.lf != NULL;
	return n;
}

/* Runs set <set> of frontend "fe" on <raw> for a fresh test stream, the
 * head published to sample fetches as the analyser does; checks the
 * verdict. */
static void run_set(enum http_rule_set set, const char *raw, enum http_act_ret want,
                    struct http_act_out *out)
{
	struct http_head *h = msg_parse(&msg, raw, sizeof(msg.arena));
	struct stream *s = strm_new(fe());
	enum http_act_ret ret;

	if (set == HTTP_RS_REQ)
		s->txn->req_head = h;
	else
		s->txn->res_head = h;
	ret = http_rules_exec(http_rules_of(fe(), set), s, h, out);

	if (ret != want)
		fail_msg("verdict %d, expected %d", ret, want);
}

/* One http-request rule line on <req>: the head afterwards must be <want>. */
static void check_req_rule(const char *rule, const char *req, const char *want)
{
	char cfg[512];
	struct http_act_out out;

	snprintf(cfg, sizeof(cfg), "frontend fe\n    http-request %s\n", rule);
	PARSE_FRESH(cfg, 0);
	run_set(HTTP_RS_REQ, req, HTTP_ACT_CONT, &out);
	if (strcmp(msg_text(), want) != 0)
		fail_msg("rule '%s' on:\n%s\ngave:\n%s\nexpected:\n%s", rule, req, msg_out, want);
}

/* The Location that redirect rule <rule> (an http-request action) makes for <req>. */
static void check_redirect(const char *rule, const char *req, int code, const char *loc)
{
	char cfg[512];
	struct http_act_out out;

	snprintf(cfg, sizeof(cfg), "frontend fe\n    http-request redirect %s\n", rule);
	PARSE_FRESH(cfg, 0);
	run_set(HTTP_RS_REQ, req, HTTP_ACT_REPLY, &out);
	assert_int_equal(out.status, code);
	assert_null(out.reply);
	if (out.location.len != strlen(loc) || memcmp(out.location.p, loc, out.location.len))
		fail_msg("redirect %s: Location '%.*s', expected '%s'", rule, (int)out.location.len,
			 out.location.p, loc);
	/* The Location lives in the head's arena. */
	assert_true(out.location.p >= msg.arena && out.location.p < msg.arena + sizeof(msg.arena));
}

static const char req1[] =
	"GET /a/b?c=1 HTTP/1.1\r\n"
	"Host: www.example.com\r\n"
	"User-Agent: test\r\n"
	"\r\n";

/* ---- header actions ---- */

static void test_set_add_del_header(void **state)
{
	struct http_act_out out;

	PARSE_FRESH("frontend fe\n"
		    "    http-request set-header X-A 1\n"
		    "    http-request add-header X-B two\n"
		    "    http-request add-header X-B \"three, four\"\n"
		    "    http-request del-header x-del\n"
		    "    http-request set-header Host new.example\n", 0);
	run_set(HTTP_RS_REQ,
		"GET / HTTP/1.1\r\nHost: a\r\nX-Del: 1\r\nX-A: old\r\nX-Del: 2\r\n\r\n",
		HTTP_ACT_CONT, &out);
	assert_string_equal(msg_text(),
			    "GET / HTTP/1.1\r\n"
			    "X-A: 1\r\n"
			    "X-B: two\r\n"
			    "X-B: three, four\r\n"
			    "Host: new.example\r\n"
			    "\r\n");
	assert_true(msg.h.flags & HTTP_HEAD_F_CHANGED);
	/* Values without '%' are literals: nothing was compiled, and the rules
	 * run without a stream at all (no log-format context to fill). */
	assert_int_equal(lf_rules(fe(), HTTP_RS_REQ), 0);
	assert_int_equal(http_rules_exec(http_rules_of(fe(), HTTP_RS_REQ), NULL,
					 msg_parse(&msg, "GET / HTTP/1.0\r\nX-A: old\r\n\r\n",
						   sizeof(msg.arena)), &out), HTTP_ACT_CONT);
	assert_string_equal(msg_text(),
			    "GET / HTTP/1.0\r\nX-A: 1\r\nX-B: two\r\nX-B: three, four\r\n"
			    "Host: new.example\r\n\r\n");
}

static void test_header_log_format(void **state)
{
	struct http_act_out out;

	PARSE_FRESH("frontend fe\n"
		    "    http-request set-header X-Client %ci\n"
		    "    http-request add-header X-Pct 100%%\n"
		    "    http-request add-header X-Dst %fi:%fp/%f\n", 0);
	assert_int_equal(lf_rules(fe(), HTTP_RS_REQ), 3);
	/* The values come from the stream (http_fill_lf_ctx). */
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_CONT, &out);
	assert_string_equal(msg_text(),
			    "GET /a/b?c=1 HTTP/1.1\r\n"
			    "Host: www.example.com\r\n"
			    "User-Agent: test\r\n"
			    "X-Client: 192.0.2.7\r\n"
			    "X-Pct: 100%\r\n"
			    "X-Dst: 198.51.100.1:80/fe\r\n"
			    "\r\n");
}

static void test_del_header_methods(void **state)
{
	static const char req[] =
		"GET / HTTP/1.1\r\n"
		"Host: h\r\n"
		"X-Trace-Id: 1\r\n"
		"x-trace-span: 2\r\n"
		"Req-Id: 3\r\n"
		"X-Secret-Key: 4\r\n"
		"X-12: 5\r\n"
		"\r\n";

	check_req_rule("del-header X-Trace- -m beg", req,
		       "GET / HTTP/1.1\r\nHost: h\r\nReq-Id: 3\r\nX-Secret-Key: 4\r\nX-12: 5\r\n\r\n");
	check_req_rule("del-header -ID -m end", req,
		       "GET / HTTP/1.1\r\nHost: h\r\nx-trace-span: 2\r\nX-Secret-Key: 4\r\n"
		       "X-12: 5\r\n\r\n");
	check_req_rule("del-header secret -m sub", req,
		       "GET / HTTP/1.1\r\nHost: h\r\nX-Trace-Id: 1\r\nx-trace-span: 2\r\n"
		       "Req-Id: 3\r\nX-12: 5\r\n\r\n");
	check_req_rule("del-header ^X-[0-9]+$ -m reg", req,
		       "GET / HTTP/1.1\r\nHost: h\r\nX-Trace-Id: 1\r\nx-trace-span: 2\r\n"
		       "Req-Id: 3\r\nX-Secret-Key: 4\r\n\r\n");
	check_req_rule("del-header req-id -m str", req,
		       "GET / HTTP/1.1\r\nHost: h\r\nX-Trace-Id: 1\r\nx-trace-span: 2\r\n"
		       "X-Secret-Key: 4\r\nX-12: 5\r\n\r\n");
	check_req_rule("del-header absent", req, req);
}

static void test_replace_header(void **state)
{
	/* The manual's example: the whole value becomes the replacement. */
	check_req_rule("replace-header Cookie foo=([^;]*);(.*) foo=\\1;ip=%ci;\\2",
		       "GET / HTTP/1.0\r\n"
		       "Cookie: foo=foobar; expires=Tue, 14-Jun-2016 01:40:45 GMT;\r\n"
		       "Cookie: other=1\r\n"
		       "\r\n",
		       "GET / HTTP/1.0\r\n"
		       "Cookie: foo=foobar;ip=192.0.2.7; expires=Tue, 14-Jun-2016 01:40:45 GMT;\r\n"
		       "Cookie: other=1\r\n"
		       "\r\n");
	/* Each occurrence; \0 is the whole match, unset groups are empty. */
	check_req_rule("replace-header X-A (b)|(z) [\\0\\1\\2\\\\]",
		       "GET / HTTP/1.0\r\nX-A: abc\r\nx-a: b\r\nX-B: b\r\n\r\n",
		       "GET / HTTP/1.0\r\nX-A: [bb\\]\r\nx-a: [bb\\]\r\nX-B: b\r\n\r\n");
	/* Every field value, commas included. */
	check_req_rule("replace-header Accept ^(.*)$ <\\1>",
		       "GET / HTTP/1.0\r\nAccept: a, b\r\n\r\n",
		       "GET / HTTP/1.0\r\nAccept: <a, b>\r\n\r\n");
}

static void test_replace_value(void **state)
{
	/* The manual's example. */
	check_req_rule("replace-value X-Forwarded-For ^192\\.168\\.(.*)$ 172.16.\\1",
		       "GET / HTTP/1.0\r\n"
		       "X-Forwarded-For: 192.168.10.1, 192.168.13.24, 10.0.0.37\r\n"
		       "\r\n",
		       "GET / HTTP/1.0\r\n"
		       "X-Forwarded-For: 172.16.10.1, 172.16.13.24, 10.0.0.37\r\n"
		       "\r\n");
	/* Separators are kept as they were; a quoted comma does not split. */
	check_req_rule("replace-value X-L ^c$ d",
		       "GET / HTTP/1.0\r\nX-L: \"a,c\" ,c,  c\t, e\r\nX-L: c\r\n\r\n",
		       "GET / HTTP/1.0\r\nX-L: \"a,c\" ,d,  d\t, e\r\nX-L: d\r\n\r\n");
	check_req_rule("replace-value X-L ^nomatch$ d",
		       "GET / HTTP/1.0\r\nX-L: a, b\r\n\r\n",
		       "GET / HTTP/1.0\r\nX-L: a, b\r\n\r\n");
	assert_false(msg.h.flags & HTTP_HEAD_F_CHANGED);
}

/* ---- start line ---- */

static void test_set_path_query_uri(void **state)
{
	static const char org[] = "GET /a/b?x=1 HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char abs[] = "GET http://h.example:8080/a/b?x=1 HTTP/1.1\r\nHost: h.example:8080\r\n\r\n";
	static const char noq[] = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char bare[] = "GET http://h.example HTTP/1.1\r\nHost: h.example\r\n\r\n";

	check_req_rule("set-path /new", org, "GET /new?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-path /new", abs,
		       "GET http://h.example:8080/new?x=1 HTTP/1.1\r\nHost: h.example:8080\r\n\r\n");
	check_req_rule("set-path /p", bare, "GET http://h.example/p HTTP/1.1\r\nHost: h.example\r\n\r\n");
	check_req_rule("set-path \"\"", org, "GET /?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-pathq /p?q=2", org, "GET /p?q=2 HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-pathq /p?q=2", abs,
		       "GET http://h.example:8080/p?q=2 HTTP/1.1\r\nHost: h.example:8080\r\n\r\n");
	check_req_rule("set-query y=2", org, "GET /a/b?y=2 HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-query y=2", abs,
		       "GET http://h.example:8080/a/b?y=2 HTTP/1.1\r\nHost: h.example:8080\r\n\r\n");
	check_req_rule("set-query y=2", noq, "GET /a?y=2 HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-query k", bare, "GET http://h.example?k HTTP/1.1\r\nHost: h.example\r\n\r\n");
	/* An existing '?' stays, none is added for an empty query. */
	check_req_rule("set-query \"\"", org, "GET /a/b? HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-query \"\"", noq, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-uri /u?v", abs, "GET /u?v HTTP/1.1\r\nHost: h.example:8080\r\n\r\n");
	check_req_rule("set-uri http://o.example/z", org,
		       "GET http://o.example/z HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-path /ip/%ci", org, "GET /ip/192.0.2.7?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
	check_req_rule("set-method POST", org, "POST /a/b?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
}

/* Samples that decode to CR, LF, NUL or SP (url_dec, b64dec) cannot add a
 * field or a request: the head layer writes them %XX, for every action. */
static void test_hostile_samples(void **state)
{
	static const char req[] =
		"GET /p?u=bob%0d%0aX-Evil:%201%0d%0a%0d%0aGET%20/admin%20HTTP/1.1&b=eA0KWTogegA= "
		"HTTP/1.1\r\nHost: h\r\nX-A: v\r\n\r\n";
	static const char q[] = "?u=bob%0d%0aX-Evil:%201%0d%0a%0d%0aGET%20/admin%20HTTP/1.1"
				"&b=eA0KWTogegA=";
	static const char enc[] = "bob%0D%0AX-Evil: 1%0D%0A%0D%0AGET /admin HTTP/1.1";
	static const char enc_sl[] = "bob%0D%0AX-Evil:%201%0D%0A%0D%0AGET%20/admin%20HTTP/1.1";
	char want[1024];

	snprintf(want, sizeof(want), "GET /p%s HTTP/1.1\r\nHost: h\r\nX-A: v\r\nX-U: %s\r\n\r\n", q,
		 enc);
	check_req_rule("set-header X-U %[url_param(u),url_dec]", req, want);
	check_req_rule("add-header X-U %[url_param(u),url_dec]", req, want);
	snprintf(want, sizeof(want), "GET /p%s HTTP/1.1\r\nHost: h\r\nX-A: v\r\n"
		 "X-U: x%%0D%%0AY: z%%00\r\n\r\n", q);
	check_req_rule("set-header X-U %[url_param(b),b64dec]", req, want);
	snprintf(want, sizeof(want), "GET /p%s HTTP/1.1\r\nHost: h\r\nX-A: %s\r\n\r\n", q, enc);
	check_req_rule("replace-header X-A ^v$ %[url_param(u),url_dec]", req, want);
	check_req_rule("replace-value X-A ^v$ %[url_param(u),url_dec]", req, want);
	snprintf(want, sizeof(want), "GET /%s%s HTTP/1.1\r\nHost: h\r\nX-A: v\r\n\r\n", enc_sl, q);
	check_req_rule("set-path /%[url_param(u),url_dec]", req, want);
	snprintf(want, sizeof(want), "GET /p?%s HTTP/1.1\r\nHost: h\r\nX-A: v\r\n\r\n", enc_sl);
	check_req_rule("set-query %[url_param(u),url_dec]", req, want);
	snprintf(want, sizeof(want), "GET %s HTTP/1.1\r\nHost: h\r\nX-A: v\r\n\r\n", enc_sl);
	check_req_rule("set-uri %[url_param(u),url_dec]", req, want);
	/* a method stays a token: '/' and ':' are encoded too */
	snprintf(want, sizeof(want), "bob%%0D%%0AX-Evil%%3A%%201%%0D%%0A%%0D%%0AGET%%20%%2Fadmin"
		 "%%20HTTP%%2F1.1 /p%s HTTP/1.1\r\nHost: h\r\nX-A: v\r\n\r\n", q);
	check_req_rule("set-method %[url_param(u),url_dec]", req, want);
	check_redirect("location /%[url_param(u),url_dec]", req, 302,
		       "/bob%0D%0AX-Evil: 1%0D%0A%0D%0AGET /admin HTTP/1.1");
}

static void test_set_status(void **state)
{
	static const char res[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
	struct http_act_out out;

	PARSE_FRESH("frontend fe\n"
		    "    http-response set-status 503\n"
		    "    http-after-response set-status 200 reason \"All good\"\n", 0);
	run_set(HTTP_RS_RES, res, HTTP_ACT_CONT, &out);
	assert_string_equal(msg_text(),
			    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
	run_set(HTTP_RS_AFTER, res, HTTP_ACT_CONT, &out);
	assert_string_equal(msg_text(), "HTTP/1.1 200 All good\r\nContent-Length: 0\r\n\r\n");
}

static void test_rewrite_does_not_fit(void **state)
{
	struct http_act_out out;
	struct http_head *h;

	PARSE_FRESH("frontend fe\n"
		    "    http-request set-header X-Long 0123456789abcdef\n", 0);
	h = msg_parse(&msg, req1, 8);
	assert_int_equal(http_rules_exec(http_rules_of(fe(), HTTP_RS_REQ), NULL, h, &out),
			 HTTP_ACT_ERR);

	PARSE_FRESH("frontend fe\n    http-request set-path /a-rather-long-path\n", 0);
	h = msg_parse(&msg, req1, 8);
	assert_int_equal(http_rules_exec(http_rules_of(fe(), HTTP_RS_REQ), NULL, h, &out),
			 HTTP_ACT_ERR);
}

/* ---- final actions ---- */

static void test_deny_tarpit_return_allow(void **state)
{
	struct http_act_out out;

	PARSE_FRESH("frontend fe\n    http-request deny\n    http-request set-header X 1\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_DENY, &out);
	assert_int_equal(out.status, 403);
	assert_null(out.reply);
	assert_false(msg.h.flags & HTTP_HEAD_F_CHANGED);   /* nothing ran after it */

	PARSE_FRESH("frontend fe\n    http-request deny deny_status 429\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_DENY, &out);
	assert_int_equal(out.status, 429);
	assert_null(out.reply);

	PARSE_FRESH("frontend fe\n"
		    "    http-request deny status 451 content-type text/plain string gone\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_DENY, &out);
	assert_int_equal(out.status, 451);
	assert_non_null(out.reply);
	assert_string_equal(out.reply->body, "gone");

	PARSE_FRESH("frontend fe\n"
		    "    http-request deny deny_status 404 content-type text/plain string x\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_DENY, &out);
	assert_int_equal(out.status, 404);
	assert_non_null(out.reply);

	PARSE_FRESH("frontend fe\n    http-response deny\n", 0);
	run_set(HTTP_RS_RES, "HTTP/1.1 200 OK\r\n\r\n", HTTP_ACT_DENY, &out);
	assert_int_equal(out.status, 502);

	PARSE_FRESH("frontend fe\n    http-request tarpit\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_TARPIT, &out);
	assert_int_equal(out.status, 500);
	assert_null(out.reply);

	PARSE_FRESH("frontend fe\n    http-request tarpit deny_status 503\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_TARPIT, &out);
	assert_int_equal(out.status, 503);

	PARSE_FRESH("frontend fe\n    http-request return\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_REPLY, &out);
	assert_int_equal(out.status, 200);
	assert_non_null(out.reply);

	PARSE_FRESH("frontend fe\n"
		    "    http-request return status 404 content-type text/plain string nope\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_REPLY, &out);
	assert_int_equal(out.status, 404);
	assert_string_equal(out.reply->ctype, "text/plain");

	PARSE_FRESH("frontend fe\n"
		    "    http-response return status 200 content-type text/plain string x\n", 0);
	run_set(HTTP_RS_RES, "HTTP/1.1 500 Oops\r\n\r\n", HTTP_ACT_REPLY, &out);
	assert_int_equal(out.status, 200);

	/* allow stops the set: later rules do not run. */
	PARSE_FRESH("frontend fe\n"
		    "    http-request set-header X-Before 1\n"
		    "    http-request allow\n"
		    "    http-request deny\n", 0);
	run_set(HTTP_RS_REQ, "GET / HTTP/1.0\r\n\r\n", HTTP_ACT_ALLOW, &out);
	assert_string_equal(msg_text(), "GET / HTTP/1.0\r\nX-Before: 1\r\n\r\n");

	/* No rules at all. */
	PARSE_FRESH("frontend fe\n    mode tcp\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_CONT, &out);
	run_set(HTTP_RS_AFTER, "HTTP/1.1 200 OK\r\n\r\n", HTTP_ACT_CONT, &out);
	assert_int_equal(http_redirect_exec(fe(), NULL, &msg.h, &out), HTTP_ACT_CONT);
}

/* ---- redirects ---- */

static void test_redirect_rules(void **state)
{
	static const char absreq[] = "GET http://a.example/x/y?z=1 HTTP/1.1\r\nHost: a.example\r\n\r\n";
	static const char star[] = "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char nohost[] = "GET /p HTTP/1.0\r\n\r\n";
	struct http_act_out out;

	check_redirect("location /login", req1, 302, "/login");
	check_redirect("location /from/%ci code 303", req1, 303, "/from/192.0.2.7");
	check_redirect("prefix https://x.example", req1, 302, "https://x.example/a/b?c=1");
	check_redirect("prefix https://x.example drop-query", req1, 302, "https://x.example/a/b");
	check_redirect("prefix / code 307", req1, 307, "/a/b?c=1");
	check_redirect("prefix /new append-slash", req1, 302, "/new/a/b/?c=1");
	check_redirect("prefix /new drop-query append-slash code 301", req1, 301, "/new/a/b/");
	check_redirect("prefix https://x.example", absreq, 302, "https://x.example/x/y?z=1");
	check_redirect("scheme https", req1, 302, "https://www.example.com/a/b?c=1");
	check_redirect("scheme https code 308 drop-query", req1, 308, "https://www.example.com/a/b");
	check_redirect("scheme https", star, 302, "https://h/");
	check_redirect("scheme https", nohost, 302, "https:///p");
	check_redirect("scheme https", absreq, 302, "https://a.example/x/y?z=1");

	PARSE_FRESH("frontend fe\n"
		    "    http-request redirect location / set-cookie SEEN=1\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_REPLY, &out);
	assert_int_equal(out.cookie.len, strlen("SEEN=1; path=/;"));
	assert_memory_equal(out.cookie.p, "SEEN=1; path=/;", out.cookie.len);

	PARSE_FRESH("frontend fe\n"
		    "    http-request redirect location / clear-cookie SEEN=\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_REPLY, &out);
	assert_memory_equal(out.cookie.p, "SEEN=; path=/; Max-Age=0;", out.cookie.len);
	assert_int_equal(out.cookie.len, strlen("SEEN=; path=/; Max-Age=0;"));

	PARSE_FRESH("frontend fe\n"
		    "    http-response redirect location https://elsewhere/ code 301\n", 0);
	run_set(HTTP_RS_RES, "HTTP/1.1 200 OK\r\n\r\n", HTTP_ACT_REPLY, &out);
	assert_int_equal(out.status, 301);
	assert_memory_equal(out.location.p, "https://elsewhere/", out.location.len);
	assert_int_equal(out.cookie.len, 0);

	/* No room in the arena for the Location. */
	PARSE_FRESH("frontend fe\n    http-request redirect prefix https://x.example\n", 0);
	assert_int_equal(http_rules_exec(http_rules_of(fe(), HTTP_RS_REQ), NULL,
					 msg_parse(&msg, req1, 8), &out), HTTP_ACT_ERR);
}

static void test_redirect_keyword(void **state)
{
	struct http_act_out out;
	struct http_head *h;

	PARSE_FRESH("frontend fe\n"
		    "    redirect location /lit%ci code 301\n"
		    "    redirect scheme https\n"
		    "backend be\n"
		    "    redirect prefix /b\n", 0);
	/* Not in the http-request set: evaluated after it. */
	assert_null(http_rules_of(fe(), HTTP_RS_REQ)->head);
	/* The keyword's target is a literal, never a log-format: for a stream
	 * whose %ci is 192.0.2.7, "%ci" stays as written. */
	h = msg_parse(&msg, req1, sizeof(msg.arena));
	assert_int_equal(http_redirect_exec(fe(), strm_new(fe()), h, &out), HTTP_ACT_REPLY);
	assert_int_equal(out.status, 301);
	assert_int_equal(out.location.len, strlen("/lit%ci"));
	assert_memory_equal(out.location.p, "/lit%ci", out.location.len);

	h = msg_parse(&msg, req1, sizeof(msg.arena));
	assert_int_equal(http_redirect_exec(proxy_find("be", PR_CAP_BE), NULL, h, &out),
			 HTTP_ACT_REPLY);
	assert_memory_equal(out.location.p, "/b/a/b?c=1", out.location.len);

	PARSE_ERRORS("defaults d\n    redirect location /\n", 1);
	expect_msg("'redirect' is not valid in a defaults section");
}

/* ---- capture ---- */

static void test_capture(void **state)
{
	static const char req[] =
		"GET / HTTP/1.1\r\n"
		"X-F: a, b\r\n"
		"Host: h\r\n"
		"x-f: c, \"d,e\" \r\n"
		"\r\n";
	struct http_act_out out;
	const struct http_px *hp;

	/* The value goes to the stream's slot (declared slots 0 to 2 here). */
	PARSE_FRESH("frontend fe\n"
		    "    capture request header A len 64\n"
		    "    capture request header B len 64\n"
		    "    capture request header C len 64\n"
		    "    http-request capture req.hdr(X-F) id 2\n", 0);
	run_set(HTTP_RS_REQ, req, HTTP_ACT_CONT, &out);
	assert_string_equal(strm_cap(0, 2), "\"d,e\"");   /* last value of the last field */
	assert_null(strm_cap(0, 0));
	assert_null(strm_cap(0, 1));
	assert_null(strm.txn->res_cap);
	assert_int_equal(postparse(), 0);

	/* Slot 2 is not declared in this frontend: nothing is stored. */
	PARSE_FRESH("frontend fe\n    http-request capture req.hdr(X-F) id 2\n", 0);
	run_set(HTTP_RS_REQ, req, HTTP_ACT_CONT, &out);
	assert_null(strm.txn->req_cap);
	assert_int_equal(postparse(), 1);
	expect_msg("no request capture slot 2 in 'fe' (it has 0)");

	PARSE_FRESH("frontend fe\n"
		    "    capture request header X-F len 64\n"
		    "    http-request capture fhdr(x-f) id 0\n", 0);
	run_set(HTTP_RS_REQ, req, HTTP_ACT_CONT, &out);
	assert_string_equal(strm_cap(0, 0), "c, \"d,e\"");

	PARSE_FRESH("frontend fe\n"
		    "    capture response header Server len 64\n"
		    "    http-response capture res.hdr(Server) id 0\n", 0);
	run_set(HTTP_RS_RES, "HTTP/1.1 200 OK\r\nServer: x/1\r\n\r\n", HTTP_ACT_CONT, &out);
	assert_string_equal(strm_cap(1, 0), "x/1");
	assert_null(strm.txn->req_cap);
	run_set(HTTP_RS_RES, "HTTP/1.1 200 OK\r\n\r\n", HTTP_ACT_CONT, &out);
	assert_null(strm.txn->res_cap);   /* no field, no capture */

	/* "len" makes a slot after the frontend's own ones, at post-parse. */
	PARSE_FRESH("frontend fe\n"
		    "    capture request header Referer len 10\n"
		    "    http-request capture req.hdr(User-Agent) len 3\n"
		    "    http-request capture hdr(X-Absent) id 1\n"
		    "    http-request capture hdr(Host) id 0\n", 0);
	hp = fe()->http;
	assert_non_null(hp);
	assert_int_equal(hp->n_req_cap, 1);
	assert_int_equal(postparse(), 0);
	assert_int_equal(hp->n_req_cap, 2);
	assert_string_equal(hp->req_cap[0].name, "Referer");
	assert_string_equal(hp->req_cap[1].name, "User-Agent");
	assert_int_equal(hp->req_cap[1].len, 3);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_CONT, &out);
	/* Slot 1 is cut at 3 bytes, slot 0 at its 10. */
	assert_string_equal(strm_cap(0, 1), "tes");
	assert_string_equal(strm_cap(0, 0), "www.exampl");
	/* Twice is harmless: the slot is made once. */
	assert_int_equal(postparse(), 0);
	assert_int_equal(hp->n_req_cap, 2);

	PARSE_FRESH("frontend fe\n    http-request capture req.hdr(User-Agent) len 3\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_CONT, &out);
	assert_null(strm.txn->req_cap);   /* no slot before post-parse */
}

/* HAProxy's capture actions overwrite the slot: the last capture of a
 * request is the one logged (http_action_req_capture_by_id; "capture
 * request header" also keeps the last occurrence). */
static void test_capture_last_wins(void **state)
{
	struct http_act_out out;

	PARSE_FRESH("frontend fe\n"
		    "    capture request header Host len 64\n"
		    "    http-request capture hdr(Host) id 0\n"
		    "    http-request capture req.hdr(User-Agent) id 0\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_CONT, &out);
	assert_string_equal(strm_cap(0, 0), "test");
}

/* ---- parse errors ---- */

struct bad_rule {
	const char *line;
	const char *msg;
};

static void test_parse_errors(void **state)
{
	static const struct bad_rule bad[] = {
		{ "http-request", "expects an action (add-header, allow, auth, capture, del-header, deny, "
		  "early-hint, normalize-uri, redirect, reject, replace-header, replace-path, "
		  "replace-pathq, replace-uri, replace-value, return, set-header, set-method, set-path, "
		  "set-pathq, set-query, set-uri, set-var, set-var-fmt, silent-drop, strict-mode, "
		  "tarpit, unset-var, use-service" },
		{ "http-request set-hedaer X 1", "unknown action 'set-hedaer'; did you mean 'set-header'?" },
		/* a stream-only action is named by its own name, not the engine's row */
		{ "http-request unset-var(txn.x) foo", "'unset-var': unexpected argument 'foo'" },
		{ "http-request set-var(txn.x) int(1) foo", "'set-var': unexpected argument 'foo'" },
		{ "http-request frobnicate", "unknown action 'frobnicate' (expects add-header," },
		{ "http-response set-pathq /", "action 'set-pathq' is not possible in http-response "
		  "rules (expects add-header, allow, capture, del-header, deny, redirect, "
		  "replace-header, replace-value, return, set-header, set-status, set-var, set-var-fmt, "
		  "silent-drop, strict-mode, unset-var" },
		{ "http-request set-status 200", "action 'set-status' is not possible in http-request rules" },
		{ "http-request normalize-uri path-strip-dots", "'normalize-uri': unknown "
		  "'path-strip-dots' normalizer" },
		{ "http-request normalize-uri path-strip-dot full", "'normalize-uri': unexpected argument 'full'" },
		{ "http-request replace-path ( x", "'replace-path': invalid regex '('" },
		{ "http-request replace-uri x", "'replace-uri': expects <regex> <format>" },
		{ "http-request strict-mode maybe", "'strict-mode': expects 'on' or 'off', got 'maybe'" },
		{ "http-request early-hint \"bad name\" x", "'early-hint': invalid header name" },
		{ "http-request set-var-fmt(txn.x,ifnotexist) a", "'set-var-fmt': unknown condition "
		  "'ifnotexist'" },
		{ "http-request set-var-fmt(txn.x)", "'set-var-fmt': expects (<scope>.<name>[,<cond>...]) "
		  "<log format>" },
		{ "http-request unset-var(txn.x,ifset)", "'unset-var': takes no condition" },
		{ "http-request set-timeout queue 1s", "'set-timeout': unknown timeout 'queue'" },
		{ "http-response reject", "action 'reject' is not possible in http-response rules" },
		{ "http-request set-nice high", "'set-nice': expects a nice value, -1024 (first "
		  "served) to 1024 (last), got 'high'" },
		{ "http-after-response set-nice 1", "action 'set-nice' is not possible in "
		  "http-after-response rules" },
		{ "http-response tarpit", "action 'tarpit' is not possible in http-response rules" },
		{ "http-after-response deny", "action 'deny' is not possible in http-after-response rules" },
		{ "http-request set-header X-A", "'http-request' in frontend section: 'set-header': "
		  "expects <name> <format>" },
		{ "http-request add-header", "'add-header': expects <name> <format>" },
		{ "http-request set-header \"X A\" 1", "'set-header': invalid header name 'X A'" },
		{ "http-request set-header X-A 1 2", "'set-header': unexpected argument '2' (expects 'if', "
		  "'unless' or the end of the line)" },
		{ "http-request set-header X-A %zz", "'set-header': invalid log-format string '%zz': "
		  "unknown log-format variable '%zz' at column 1" },
		{ "http-request set-path %[pat]", "'set-path': invalid log-format string '%[pat]': "
		  "sample expression '%[pat]' at column 1: unknown fetch method 'pat'; did you mean 'path'?" },
		{ "http-request set-header X-A 1 if TRUE FALS", "no such ACL: 'FALS'" },
		{ "http-request allow unless x", "no such ACL: 'x'" },
		{ "http-request allow now", "'allow': unexpected argument 'now'" },
		{ "http-request del-header", "'del-header': expects <name> [-m str|beg|end|sub|reg]" },
		{ "http-request del-header X -m", "'-m' expects a matching method" },
		{ "http-request del-header X -m exact", "unknown matching method 'exact' (expects str, "
		  "beg, end, sub or reg)" },
		{ "http-request del-header ( -m reg", "'del-header': invalid regex '(' at offset 1" },
		{ "http-request replace-header X", "'replace-header': expects <name> <regex> <format>" },
		{ "http-request replace-value X a(", "'replace-value': expects <name> <regex> <format>" },
		{ "http-request replace-value X a( b", "'replace-value': invalid regex 'a('" },
		{ "http-request set-path", "'set-path': expects <format>" },
		{ "http-request set-uri", "'set-uri': expects <format>" },
		{ "http-response set-status", "'set-status': expects <status> [reason <text>]" },
		{ "http-response set-status 42", "'set-status': expects a status code between 100 and "
		  "999, got '42'" },
		{ "http-response set-status 200 reason", "'reason' expects a text" },
		{ "http-request deny deny_status", "'deny_status' expects a status code between 200 and "
		  "599, got ''" },
		{ "http-request deny deny_status 99", "got '99'" },
		{ "http-request deny bogus 1", "unexpected argument 'bogus' (expects status, "
		  "content-type, string," },
		{ "http-request return foo", "unexpected argument 'foo'" },
		{ "http-request return status", "'status' expects <status_code> as argument" },
		{ "http-request deny string x", "a payload needs a content type" },
		{ "http-request redirect", "'redirect': expects location|prefix|scheme <target>" },
		{ "http-request redirect place /", "unknown redirect type 'place' (expects location, "
		  "prefix or scheme)" },
		{ "http-request redirect location", "'location' expects a target" },
		{ "http-request redirect location / code 305", "unsupported redirect code '305' (301, "
		  "302, 303, 307 or 308)" },
		{ "http-request redirect location / code", "'code' expects a code" },
		{ "http-request redirect location / set-cookie", "'set-cookie' expects a cookie name" },
		{ "http-request redirect location / drop-qery", "unknown redirect option 'drop-qery'; "
		  "did you mean 'drop-query'?" },
		{ "http-request redirect location / xyzzy", "unknown redirect option 'xyzzy' (expects "
		  "code, drop-query" },
		{ "http-response redirect prefix /", "only 'location' redirects are possible in "
		  "http-response rules" },
		{ "redirect", "'redirect' in frontend section: expects location|prefix|scheme" },
		{ "redirect scheme https code 300", "'redirect' in frontend section: unsupported "
		  "redirect code '300'" },
		{ "http-request capture req.hdr(X)", "'capture': expects <sample> len <length> | id <id>" },
		{ "http-request capture nosuchfetch len 10", "'capture': unknown fetch method 'nosuchfetch'" },
		{ "http-request capture req.hdr(X),nosuchconv len 10", "unknown converter 'nosuchconv'" },
		{ "http-request capture req.hdr(X) size 10", "expects 'len <length>' or 'id <id>' after "
		  "the sample, got 'size'" },
		{ "http-request capture req.hdr(X) len 0", "'len' expects a length between 1 and "
		  "65535, got '0'" },
		{ "http-request capture req.hdr(X) id x", "'id' expects a capture slot number" },
		{ "http-response capture req.hdr(X) id 0", "'req.hdr' cannot be used in http-response "
		  "rules" },
		{ "http-response capture res.hdr(X) len 4", "'len' is only possible in http-request "
		  "rules" },
	};
	char cfg[512];

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int e;

		snprintf(cfg, sizeof(cfg), "frontend fe\n    %s\n", bad[i].line);
		reset(NULL);
		e = parse(cfg);
		if (e != 1 || !strstr(errtext, bad[i].msg))
			fail_msg("'%s': %d errors, expected 1 with '%s':\n%s", bad[i].line, e,
				 bad[i].msg, errtext);
		assert_null(http_rules_of(fe(), HTTP_RS_REQ)->head);
		assert_null(http_rules_of(fe(), HTTP_RS_RES)->head);
	}

	/* A backend has no slot to make: "id" only. */
	PARSE_FRESH("backend be\n    http-request capture req.hdr(X) len 4\n", 1);
	expect_msg("'len' creates a capture slot, which needs a frontend (use 'id <id>')");
	PARSE_FRESH("backend be\n    http-request capture req.hdr(X) id 4\n", 0);
	assert_int_equal(postparse(), 0);   /* its frontends are only known at run time */

	/* Every error of the file is reported. */
	PARSE_FRESH("frontend fe\n"
		    "    http-request set-hedaer X 1\n"
		    "    http-request set-header X-OK 1\n"
		    "    http-response set-status 1000\n", 2);
	expect_msg("t.cfg:2: 'http-request' in frontend section: unknown action 'set-hedaer'");
	expect_msg("t.cfg:4: 'http-response' in frontend section: 'set-status': expects a status");
	assert_non_null(http_rules_of(fe(), HTTP_RS_REQ)->head);
}

/* ---- defaults sections ---- */

static void test_defaults_inherit(void **state)
{
	struct http_act_out out;

	PARSE_FRESH("defaults web\n"
		    "    http-request set-header X-Def 1\n"
		    "    http-response set-header X-Res-Def 1\n"
		    "frontend fe\n"
		    "    http-request set-header X-Fe 1\n"
		    "frontend fe2\n", 0);
	/* The defaults' rules first, then the proxy's own. */
	run_set(HTTP_RS_REQ, "GET / HTTP/1.0\r\n\r\n", HTTP_ACT_CONT, &out);
	assert_string_equal(msg_text(), "GET / HTTP/1.0\r\nX-Def: 1\r\nX-Fe: 1\r\n\r\n");
	run_set(HTTP_RS_RES, "HTTP/1.1 200 OK\r\n\r\n", HTTP_ACT_CONT, &out);
	assert_string_equal(msg_text(), "HTTP/1.1 200 OK\r\nX-Res-Def: 1\r\n\r\n");
	assert_null(http_rules_of(fe(), HTTP_RS_AFTER)->head);
	assert_non_null(http_rules_of(proxy_find("fe2", PR_CAP_FE), HTTP_RS_REQ)->head);
	assert_int_equal(postparse(), 0);
	expect_msg("'http-request' rules ignored for proxy 'fe' as they require 'mode http'");

	/* "allow" in the defaults stops the proxy's rules too. */
	PARSE_FRESH("defaults web\n"
		    "    http-request allow\n"
		    "frontend fe\n"
		    "    http-request deny\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_ALLOW, &out);

	/* A later defaults section without rules is not affected. */
	PARSE_FRESH("defaults web\n"
		    "    http-request deny\n"
		    "defaults plain\n"
		    "frontend fe\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_CONT, &out);
	PARSE_FRESH("defaults web\n"
		    "    http-request deny\n"
		    "defaults plain\n"
		    "frontend fe from web\n", 0);
	run_set(HTTP_RS_REQ, req1, HTTP_ACT_DENY, &out);

	PARSE_FRESH("defaults\n    http-request deny\n", 1);
	expect_msg("'http-request' in defaults section: not allowed in an anonymous defaults "
		   "section (name it: 'defaults <name>')");
}

static void test_defaults_inherit_errors(void **state)
{
	PARSE_FRESH("defaults web\n"
		    "    http-request deny\n"
		    "defaults other from web\n", 0);
	assert_int_equal(postparse(), 1);
	expect_msg("t.cfg:3: a defaults section cannot inherit from a defaults section defining "
		   "HTTP rules ('web' at t.cfg:1)");

	PARSE_FRESH("defaults web\n"
		    "    http-after-response set-header A b\n"
		    "listen li\n", 0);
	assert_int_equal(postparse(), 1);
	expect_msg("t.cfg:3: listen 'li' cannot inherit from a defaults section defining HTTP "
		   "rules ('web' at t.cfg:1)");

	PARSE_FRESH("defaults web\n"
		    "    http-request deny\n"
		    "frontend f1\n"
		    "frontend f2\n"
		    "backend b1\n"
		    "backend b2\n", 0);
	assert_int_equal(postparse(), 2);
	expect_msg("t.cfg:5: frontends and backends cannot inherit from the same defaults section "
		   "if it defines HTTP rules ('web' at t.cfg:1)");
	expect_msg("t.cfg:6: frontends and backends");

	/* Only frontends: fine. */
	PARSE_FRESH("defaults web\n"
		    "    http-request deny\n"
		    "frontend f1\n"
		    "frontend f2\n", 0);
	assert_int_equal(postparse(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_set_add_del_header, reset),
		cmocka_unit_test_teardown(test_header_log_format, reset),
		cmocka_unit_test_teardown(test_del_header_methods, reset),
		cmocka_unit_test_teardown(test_replace_header, reset),
		cmocka_unit_test_teardown(test_replace_value, reset),
		cmocka_unit_test_teardown(test_set_path_query_uri, reset),
		cmocka_unit_test_teardown(test_hostile_samples, reset),
		cmocka_unit_test_teardown(test_set_status, reset),
		cmocka_unit_test_teardown(test_rewrite_does_not_fit, reset),
		cmocka_unit_test_teardown(test_deny_tarpit_return_allow, reset),
		cmocka_unit_test_teardown(test_redirect_rules, reset),
		cmocka_unit_test_teardown(test_redirect_keyword, reset),
		cmocka_unit_test_teardown(test_capture, reset),
		cmocka_unit_test_teardown(test_capture_last_wins, reset),
		cmocka_unit_test_teardown(test_parse_errors, reset),
		cmocka_unit_test_teardown(test_defaults_inherit, reset),
		cmocka_unit_test_teardown(test_defaults_inherit_errors, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
