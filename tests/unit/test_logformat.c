/* Unit tests for log-format strings (src/core/logformat.c): compile errors,
 * and lines rendered from filled contexts compared byte for byte with what
 * haproxy 2.6.12 logged for the same values (captured over UDP syslog with
 * "format raw"), each also cut at every byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include <sluice/logformat.h>

/* 21/Nov/2026:07:40:00 UTC: the captures were made a few minutes later. */
#define T0 1795246800L

static struct sockaddr_storage sa_cli, sa_fe, sa_bsrc, sa_srv;

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static void set_in(struct sockaddr_storage *ss, const char *ip, int port)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		assert_int_equal(inet_pton(AF_INET6, ip, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		assert_int_equal(inet_pton(AF_INET, ip, &s4->sin_addr), 1);
	}
}

/* 07:<min>:<sec>.<ms> UTC on the capture day. */
static struct timespec at(int min, int sec, int ms)
{
	return (struct timespec){ T0 + (min - 40) * 60 + sec, ms * 1000000L };
}

static const char *caps_std[] = { "example.com", "ua123" };
static const char *res_std[] = { "resval" };

/* A served request: the values most haproxy lines below share. */
static void ctx_ok(struct lf_ctx *c, int cport, struct timespec when)
{
	memset(c, 0, sizeof(*c));
	set_in(&sa_cli, "127.0.0.1", cport);
	set_in(&sa_fe, "127.0.0.1", 23451);
	set_in(&sa_srv, "127.0.0.1", 23453);
	c->cli = &sa_cli;
	c->fe_addr = &sa_fe;
	c->be_src = &sa_bsrc;
	c->srv_addr = &sa_srv;
	c->accept_date = c->req_date = when;
	c->fe_name = c->be_name = "fe";
	c->srv_name = "s1";
	c->status = 200;
	c->bytes_out = 158;
	c->bytes_in = 85;
	memcpy(c->term, "----", 4);
	c->actconn = c->feconn = 1;
	c->reqline = "GET /a?b=c HTTP/1.1";
	c->reqline_len = strlen(c->reqline);
	c->hostname = "vm";
	c->pid = 1;
}

/* "GARBAGE": a request haproxy answered with 400 before any capture. */
static void ctx_badreq(struct lf_ctx *c, int cport, struct timespec when)
{
	ctx_ok(c, cport, when);
	c->be_src = c->srv_addr = NULL;
	c->srv_name = NULL;
	c->TR = c->Tw = c->Tc = c->Tr = c->Tq = c->Td = -1;
	c->status = 400;
	c->bytes_out = c->bytes_in = 0;
	memcpy(c->term, "PR--", 4);
	c->reqline = NULL;
	c->reqline_len = 0;
	c->n_req_cap = 2;   /* configured, but nothing was captured */
	c->n_res_cap = 1;
}

/* Renders <e> into exactly sized heap buffers of every size from 0 to one
 * past the line: each result is the line cut there, NUL-terminated. */
static void check_cuts(const struct lf_expr *e, const struct lf_ctx *c, const char *exp)
{
	size_t len = strlen(exp);

	for (size_t size = 0; size <= len + 1; size++) {
		char *buf = malloc(size ? size : 1);
		size_t n;

		assert_non_null(buf);
		buf[0] = 'Z';
		n = lf_render(e, c, buf, size);
		if (size == 0) {
			assert_int_equal(n, 0);
			assert_int_equal(buf[0], 'Z');   /* nothing written */
		} else {
			size_t want = len < size - 1 ? len : size - 1;

			assert_int_equal(n, want);
			assert_int_equal(buf[n], '\0');
			assert_memory_equal(buf, exp, want);
		}
		free(buf);
	}
}

static void check_fmt(const char *fmt, const struct lf_ctx *c, const char *exp)
{
	struct lf_expr e;
	char buf[4096];
	char *err = NULL;
	size_t n;

	if (lf_compile(fmt, &e, &err) != 0)
		fail_msg("'%s' does not compile: %s", fmt, err ? err : "?");
	n = lf_render(&e, c, buf, sizeof(buf));
	if (strcmp(buf, exp) != 0)
		fail_msg("format '%s'\n  got: '%s'\n want: '%s'", fmt, buf, exp);
	assert_int_equal(n, strlen(exp));
	check_cuts(&e, c, exp);
	lf_free(&e);
}

static void check_error(const char *fmt, const char *what)
{
	struct lf_expr e;
	char *err = NULL;

	memset(&e, 0x5a, sizeof(e));
	if (lf_compile(fmt, &e, &err) != -1)
		fail_msg("'%s' compiled, expected an error with '%s'", fmt, what);
	assert_non_null(err);
	if (!strstr(err, what))
		fail_msg("'%s': message '%s' does not mention '%s'", fmt, err, what);
	assert_null(e.nodes);
	assert_int_equal(e.n, 0);
	free(err);
}

static void test_compile_errors(void **state)
{
	check_error("%zz", "unknown log-format variable '%zz' at column 1");
	check_error("abc %Tsabc", "'%Tsabc' at column 5");
	check_error("%ci %bi1", "'%bi1' at column 5");
	check_error("100%x", "'%x' at column 4");
	check_error("%", "'%' at the end of the format (column 1)");
	check_error("abc %", "column 5");
	check_error("% ci", "unexpected character ' ' after '%' at column 1");
	check_error("%1", "unexpected character '1'");
	check_error("%-x", "unexpected character '-'");
	check_error("%{", "unterminated '%{' at column 1");
	check_error("x %{+Q", "unterminated '%{' at column 3");
	check_error("%{+Q}", "flags '%{+Q}' at column 1 are not followed by a variable name");
	check_error("%{+Q} x", "not followed by a variable name");
	check_error("%{+Q}%ci", "not followed by a variable name");
	check_error("%{+Z}ci", "unknown flag '+Z'");
	check_error("%{+Q+E}ci", "unknown flag '+Q+E'");
	check_error("%{Q}ci", "unknown flag 'Q'");
	check_error("%{+q}ci", "unknown flag '+q'");
	check_error("%[nosrc]", "unknown fetch method 'nosrc'; did you mean 'src'?");
	check_error("%ci %{+Q}[src,lowr]", "unknown converter 'lowr'; did you mean 'lower'?");
	check_error("%ci %{+Q}[src,lowr]", "at column 5");
	check_error("%[src", "missing ']' after '%[' at column 1");
	check_error("%HQ%[", "missing ']'");
}

static void test_compile_ok(void **state)
{
	static const char *ok[] = {
		"", " ", "plain text", "%%", "a%%b%%", "%ci:%cp", "%{+Q}o", "%o",
		"%{+Q,}ci", "%{,}ci", "%{}ci", "%{-Q,+Q}ci", "%{+X,-X}ci", "%ci{+Q}",
		"%ci_x", "%ci.x", LF_HTTPLOG, LF_TCPLOG, LF_HTTPLOG_CLF,
		"%ci %cp %fi %fp %bi %bp %si %sp %t %tr %trg %trl %T %Tl %Ts %ms %ft %f "
		"%b %s %TR %Tw %Tc %Tr %Ta %Tt %Th %Ti %Tq %Td %Tu %ST %B %U %CC %CS %ts "
		"%tsc %ac %fc %bc %sc %rc %sq %bq %hr %hrl %hs %hsl %r %HM %HU %HP %HPO "
		"%HQ %HV %ID %rt %H %pid %lc %sslc %sslv",
	};
	struct lf_expr e;
	char *err;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		err = NULL;
		if (lf_compile(ok[i], &e, &err) != 0)
			fail_msg("'%s': %s", ok[i], err);
		assert_null(err);
		lf_free(&e);
		assert_null(e.nodes);
		lf_free(&e);   /* twice is harmless */
	}
}

static void test_needs(void **state)
{
	struct lf_expr e;
	char *err;

	assert_int_equal(lf_compile(LF_TCPLOG, &e, &err), 0);
	assert_int_equal(e.needs, 0);
	assert_null(lf_http_var(&e));
	lf_free(&e);

	assert_int_equal(lf_compile(LF_HTTPLOG, &e, &err), 0);
	assert_int_equal(e.needs, LF_N_REQLINE | LF_N_CAPTURE | LF_N_HTTP);
	assert_string_equal(lf_http_var(&e), "tr");
	lf_free(&e);

	assert_int_equal(lf_compile("%ci %ID %hrl %Tw", &e, &err), 0);
	assert_int_equal(e.needs, LF_N_UNIQID | LF_N_CAPTURE);
	assert_null(lf_http_var(&e));
	lf_free(&e);

	/* haproxy: "format variable 'TR' is reserved for HTTP mode" */
	assert_int_equal(lf_compile("%Tw/%TR %HPO", &e, &err), 0);
	assert_string_equal(lf_http_var(&e), "TR");
	assert_int_equal(e.needs, LF_N_REQLINE | LF_N_HTTP);
	lf_free(&e);
}

/* option httplog, with captures, a server, and a 400. */
static void test_httplog(void **state)
{
	static const char *no_caps[] = { NULL, NULL };
	struct lf_ctx c;

	set_tz("UTC0");
	ctx_ok(&c, 36788, at(47, 10, 424));
	c.req_cookie = "SRVID=x";
	c.res_cookie = "SRVID=abc";
	c.req_cap = caps_std;
	c.n_req_cap = 2;
	c.res_cap = res_std;
	c.n_res_cap = 1;
	check_fmt(LF_HTTPLOG, &c,
		  "127.0.0.1:36788 [21/Nov/2026:07:47:10.424] fe fe/s1 0/0/0/0/0 200 158 SRVID=x SRVID=abc ---- 1/1/0/0/0 0/0 {example.com|ua123} {resval} \"GET /a?b=c HTTP/1.1\"");

	/* HTTP/1.0 without Host nor User-Agent: empty captures. */
	ctx_ok(&c, 36798, at(47, 10, 526));
	c.res_cookie = "SRVID=abc";
	c.req_cap = no_caps;
	c.n_req_cap = 2;
	c.res_cap = res_std;
	c.n_res_cap = 1;
	c.reqline = "GET / HTTP/1.0";
	c.reqline_len = strlen(c.reqline);
	check_fmt(LF_HTTPLOG, &c,
		  "127.0.0.1:36798 [21/Nov/2026:07:47:10.526] fe fe/s1 0/0/0/0/0 200 158 - SRVID=abc ---- 1/1/0/0/0 0/0 {|} {resval} \"GET / HTTP/1.0\"");

	/* A bad request: no capture array at all, no double space. */
	ctx_badreq(&c, 36814, at(47, 10, 627));
	check_fmt(LF_HTTPLOG, &c,
		  "127.0.0.1:36814 [21/Nov/2026:07:47:10.627] fe fe/<NOSRV> -1/-1/-1/-1/0 400 0 - - PR-- 1/1/0/0/0 0/0 \"<BADREQ>\"");

	/* No capture configured, "http-request return". */
	ctx_ok(&c, 36842, at(47, 12, 598));
	c.srv_name = NULL;
	c.Tw = c.Tc = c.Tr = -1;
	c.bytes_out = 73;
	memcpy(c.term, "LR--", 4);
	check_fmt(LF_HTTPLOG, &c,
		  "127.0.0.1:36842 [21/Nov/2026:07:47:12.598] fe fe/<NOSRV> 0/-1/-1/-1/0 200 73 - - LR-- 1/1/0/0/0 0/0 \"GET /a?b=c HTTP/1.1\"");
}

static void test_tcplog(void **state)
{
	struct lf_ctx c;

	set_tz("UTC0");
	ctx_ok(&c, 54398, at(47, 45, 101));
	c.Tw = 1;
	c.bytes_out = 163;
	memcpy(c.term, "--\0\0", 4);
	check_fmt(LF_TCPLOG, &c,
		  "127.0.0.1:54398 [21/Nov/2026:07:47:45.101] fe fe/s1 1/0/0 163 -- 1/1/0/0/0 0/0");

	/* retries 2 + option redispatch: the first server refused. */
	ctx_ok(&c, 37740, at(47, 45, 202));
	c.fe_name = c.be_name = "fe2";
	c.Tw = 1;
	c.Tt = 1;
	c.bytes_out = 163;
	memcpy(c.term, "--", 2);
	c.retries = 1;
	c.redispatched = 1;
	check_fmt(LF_TCPLOG, &c,
		  "127.0.0.1:37740 [21/Nov/2026:07:47:45.202] fe2 fe2/s1 1/0/1 163 -- 1/1/0/0/+1 0/0");

	/* mode tcp, a dead server, retries 1: status is 0 in TCP. */
	ctx_ok(&c, 40000, at(47, 45, 304));
	c.fe_name = c.be_name = "fe3";
	c.srv_name = "dead";
	set_in(&sa_srv, "127.0.0.1", 1);
	set_in(&sa_bsrc, "127.0.0.1", 42082);
	c.status = 0;
	c.retries = 1;
	memcpy(c.term, "SC", 2);
	c.Tw = 1;
	c.Tc = -1;
	c.Tt = c.Tu = 1002;
	c.Td = -1;
	c.bytes_out = 0;
	c.bytes_in = 1;
	check_fmt("%ST|%rc|%ts|%Tw|%Tc|%Tt|%Th|%Td|%Tu|%b|%s|%si:%sp|%bi:%bp|%B|%U|%{+Q}ID|%hr|%hrl|%ms|%{+Q}H", &c,
		  "0|1|SC|1|-1|1002|0|-1|1002|fe3|dead|127.0.0.1:1|127.0.0.1:42082|0|1|\"\"|||304|\"vm\"");
}

static void test_clf(void **state)
{
	struct lf_ctx c;

	set_tz("UTC0");
	ctx_ok(&c, 36878, at(47, 14, 714));
	c.req_cookie = "SRVID=x";
	c.res_cookie = "SRVID=abc";
	c.req_cap = caps_std;
	c.n_req_cap = 2;
	c.res_cap = res_std;
	c.n_res_cap = 1;
	check_fmt(LF_HTTPLOG_CLF, &c,
		  "127.0.0.1 - - [21/Nov/2026:07:47:14 +0000] \"GET /a?b=c HTTP/1.1\" 200 158 \"\" \"\" 36878 714 \"fe\" \"fe\" \"s1\" 0 0 0 0 0 ---- 1 1 0 0 0 0 0 \"SRVID=x\" \"SRVID=abc\" \"example.com\" \"ua123\" \"resval\"");

	/* No captures: the line ends with the space before %hrl. */
	ctx_badreq(&c, 36888, at(47, 14, 816));
	check_fmt(LF_HTTPLOG_CLF, &c,
		  "127.0.0.1 - - [21/Nov/2026:07:47:14 +0000] \"<BADREQ>\" 400 0 \"\" \"\" 36888 816 \"fe\" \"fe\" \"<NOSRV>\" -1 -1 -1 -1 0 PR-- 1 1 0 0 0 0 0 \"\" \"\" ");

	ctx_ok(&c, 49816, at(47, 16, 783));
	check_fmt(LF_HTTPLOG_CLF, &c,
		  "127.0.0.1 - - [21/Nov/2026:07:47:16 +0000] \"GET /a?b=c HTTP/1.1\" 200 158 \"\" \"\" 49816 783 \"fe\" \"fe\" \"s1\" 0 0 0 0 0 ---- 1 1 0 0 0 0 0 \"\" \"\" ");
}

#define ALL_VARS "%ci|%cp|%fi|%fp|%bi|%bp|%si|%sp|%t|%tr|%trg|%trl|%T|%Tl|%Ts|%ms|%ft|%f|%b|%s|%TR|%Tw|%Tc|%Tr|%Ta|%Tt|%Th|%Ti|%Tq|%Td|%Tu|%ST|%B|%U|%CC|%CS|%ts|%tsc|%ac|%fc|%bc|%sc|%rc|%sq|%bq|%hr|%hrl|%hs|%hsl|%r|%HM|%HU|%HP|%HPO|%HQ|%HV|%ID|%rt|%H|%pid|%lc"

/* A served request and a bad one for the all-variables format. */
static void ctx_all(struct lf_ctx *c, const char **caps, int cport, int bport,
                    struct timespec when, int pid, int n)
{
	ctx_ok(c, cport, when);
	set_in(&sa_bsrc, "127.0.0.1", bport);
	c->bytes_in = 86;
	c->req_cap = caps;
	c->n_req_cap = 2;
	c->res_cap = res_std;
	c->n_res_cap = 1;
	c->pid = pid;
	c->uniq_num = (uint64_t)n;
	c->log_counter = (uint64_t)n;
}

static void ctx_all_bad(struct lf_ctx *c, int cport, struct timespec when, int pid, int n)
{
	ctx_badreq(c, cport, when);
	c->pid = pid;
	c->uniq_num = (uint64_t)n;
	c->log_counter = (uint64_t)n;
}

/* Every variable, with haproxy running in TZ=CET-1 (local dates +0100). */
static void test_all_vars(void **state)
{
	static const char *caps[] = { "example.com", "ua1234567" };
	struct lf_ctx c;

	set_tz("CET-1");
	ctx_all(&c, caps, 49848, 40944, at(47, 18, 854), 27729, 1);
	c.bytes_in = 85;
	memcpy(c.term, "----", 4);
	check_fmt(ALL_VARS, &c,
		  "127.0.0.1|49848|127.0.0.1|23451|127.0.0.1|40944|127.0.0.1|23453|21/Nov/2026:08:47:18.854|21/Nov/2026:08:47:18.854|21/Nov/2026:07:47:18 +0000|21/Nov/2026:08:47:18 +0100|21/Nov/2026:07:47:18 +0000|21/Nov/2026:08:47:18 +0100|1795247238|854|fe|fe|fe|s1|0|0|0|0|0|0|0|0|0|0|0|200|158|85|-|-|--|----|1|1|0|0|0|0|0|{example.com|ua1234567}|example.com ua1234567|{resval}|resval|GET /a?b=c HTTP/1.1|GET|/a?b=c|/a|/a|?b=c|HTTP/1.1|-|1|vm|27729|1");
	ctx_all_bad(&c, 49864, at(47, 18, 955), 27729, 2);
	check_fmt(ALL_VARS, &c,
		  "127.0.0.1|49864|127.0.0.1|23451|-|-|-|-|21/Nov/2026:08:47:18.955|21/Nov/2026:08:47:18.955|21/Nov/2026:07:47:18 +0000|21/Nov/2026:08:47:18 +0100|21/Nov/2026:07:47:18 +0000|21/Nov/2026:08:47:18 +0100|1795247238|955|fe|fe|fe|<NOSRV>|-1|-1|-1|-1|0|0|0|0|-1|-1|0|400|0|0|-|-|PR|PR--|1|1|0|0|0|0|0|||||<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|-|2|vm|27729|2");
	set_tz("UTC0");
}

/* User-Agent: u"#{|}\\]x (two backslashes), haproxy's %o with each flag. */
static const char *caps_odd[] = { "example.com", "u\"#{|}\\\\]x" };

static void test_quote(void **state)
{
	struct lf_ctx c;

	set_tz("UTC0");
	ctx_all(&c, caps_odd, 49878, 40960, at(47, 20, 922), 27777, 1);
	check_fmt("%{+Q}o " ALL_VARS, &c,
		  "\"127.0.0.1\"|49878|\"127.0.0.1\"|23451|\"127.0.0.1\"|40960|\"127.0.0.1\"|23453|21/Nov/2026:07:47:20.922|21/Nov/2026:07:47:20.922|21/Nov/2026:07:47:20 +0000|21/Nov/2026:07:47:20 +0000|21/Nov/2026:07:47:20 +0000|21/Nov/2026:07:47:20 +0000|1795247240|922|\"fe\"|\"fe\"|\"fe\"|\"s1\"|0|0|0|0|0|0|0|0|0|0|0|200|158|86|\"\"|\"\"|--|----|1|1|0|0|0|0|0|\"{example.com|u#22#23#7B#7C#7D\\\\]x}\"|\"example.com\" \"u#22#23#7B#7C#7D\\\\]x\"|\"{resval}\"|\"resval\"|\"GET /a?b=c HTTP/1.1\"|\"GET\"|\"/a?b=c\"|\"/a\"|\"/a\"|\"?b=c\"|\"HTTP/1.1\"|\"\"|1|\"vm\"|27777|1");
	ctx_all_bad(&c, 49894, at(47, 21, 24), 27777, 2);
	check_fmt("%{+Q}o " ALL_VARS, &c,
		  "\"127.0.0.1\"|49894|\"127.0.0.1\"|23451|\"\"|\"\"|\"\"|\"\"|21/Nov/2026:07:47:21.024|21/Nov/2026:07:47:21.024|21/Nov/2026:07:47:21 +0000|21/Nov/2026:07:47:21 +0000|21/Nov/2026:07:47:21 +0000|21/Nov/2026:07:47:21 +0000|1795247241|024|\"fe\"|\"fe\"|\"fe\"|\"<NOSRV>\"|-1|-1|-1|-1|0|0|0|0|-1|-1|0|400|0|0|\"\"|\"\"|PR|PR--|1|1|0|0|0|0|0|||||\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"\"|2|\"vm\"|27777|2");
}

static void test_hex(void **state)
{
	struct lf_ctx c;

	set_tz("UTC0");
	ctx_all(&c, caps_odd, 0xC306, 0xA00E, at(47, 22, 997), 0x6CB1, 1);
	check_fmt("%{+X}o " ALL_VARS, &c,
		  "7F000001|C306|7F000001|5B9B|7F000001|A00E|7F000001|5B9D|21/Nov/2026:07:47:22.997|21/Nov/2026:07:47:22.997|21/Nov/2026:07:47:22 +0000|21/Nov/2026:07:47:22 +0000|21/Nov/2026:07:47:22 +0000|21/Nov/2026:07:47:22 +0000|6B014C8A|3E5|fe|fe|fe|s1|0|0|0|0|0|0|0|0|0|0|0|200|158|86|-|-|--|----|1|1|0|0|0|0|0|{example.com|u#22#23#7B#7C#7D\\\\]x}|example.com u#22#23#7B#7C#7D\\\\]x|{resval}|resval|GET /a?b=c HTTP/1.1|GET|/a?b=c|/a|/a|?b=c|HTTP/1.1|-|0001|vm|6CB1|0001");
	ctx_all_bad(&c, 0xC316, at(47, 23, 99), 0x6CB1, 2);
	check_fmt("%{+X}o " ALL_VARS, &c,
		  "7F000001|C316|7F000001|5B9B|-|-|-|-|21/Nov/2026:07:47:23.099|21/Nov/2026:07:47:23.099|21/Nov/2026:07:47:23 +0000|21/Nov/2026:07:47:23 +0000|21/Nov/2026:07:47:23 +0000|21/Nov/2026:07:47:23 +0000|6B014C8B|63|fe|fe|fe|<NOSRV>|-1|-1|-1|-1|0|0|0|0|-1|-1|0|400|0|0|-|-|PR|PR--|1|1|0|0|0|0|0|||||<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|-|0002|vm|6CB1|0002");
}

static void test_escape(void **state)
{
	struct lf_ctx c;

	set_tz("UTC0");
	ctx_all(&c, caps_odd, 49958, 40990, at(47, 25, 66), 27873, 1);
	c.Tr = c.Ta = c.Tt = c.Tu = 1;
	check_fmt("%{+E}o " ALL_VARS, &c,
		  "127.0.0.1|49958|127.0.0.1|23451|127.0.0.1|40990|127.0.0.1|23453|21/Nov/2026:07:47:25.066|21/Nov/2026:07:47:25.066|21/Nov/2026:07:47:25 +0000|21/Nov/2026:07:47:25 +0000|21/Nov/2026:07:47:25 +0000|21/Nov/2026:07:47:25 +0000|1795247245|066|fe|fe|fe|s1|0|0|0|1|1|1|0|0|0|0|1|200|158|86|-|-|--|----|1|1|0|0|0|0|0|{example.com|u#22#23#7B#7C#7D\\\\\\\\\\]x}|example.com u#22#23#7B#7C#7D\\\\\\\\\\]x|{resval}|resval|GET /a?b=c HTTP/1.1|GET|/a?b=c|/a|/a|?b=c|HTTP/1.1|-|1|vm|27873|1");
	ctx_all_bad(&c, 49966, at(47, 25, 168), 27873, 2);
	check_fmt("%{+E}o " ALL_VARS, &c,
		  "127.0.0.1|49966|127.0.0.1|23451|-|-|-|-|21/Nov/2026:07:47:25.168|21/Nov/2026:07:47:25.168|21/Nov/2026:07:47:25 +0000|21/Nov/2026:07:47:25 +0000|21/Nov/2026:07:47:25 +0000|21/Nov/2026:07:47:25 +0000|1795247245|168|fe|fe|fe|<NOSRV>|-1|-1|-1|-1|0|0|0|0|-1|-1|0|400|0|0|-|-|PR|PR--|1|1|0|0|0|0|0|||||<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|-|2|vm|27873|2");

	ctx_all(&c, caps_odd, 48326, 34930, at(47, 27, 150), 27969, 1);
	check_fmt("%{+Q,+E}o " ALL_VARS, &c,
		  "\"127.0.0.1\"|48326|\"127.0.0.1\"|23451|\"127.0.0.1\"|34930|\"127.0.0.1\"|23453|21/Nov/2026:07:47:27.150|21/Nov/2026:07:47:27.150|21/Nov/2026:07:47:27 +0000|21/Nov/2026:07:47:27 +0000|21/Nov/2026:07:47:27 +0000|21/Nov/2026:07:47:27 +0000|1795247247|150|\"fe\"|\"fe\"|\"fe\"|\"s1\"|0|0|0|0|0|0|0|0|0|0|0|200|158|86|\"\"|\"\"|--|----|1|1|0|0|0|0|0|\"{example.com|u#22#23#7B#7C#7D\\\\\\\\\\]x}\"|\"example.com\" \"u#22#23#7B#7C#7D\\\\\\\\\\]x\"|\"{resval}\"|\"resval\"|\"GET /a?b=c HTTP/1.1\"|\"GET\"|\"/a?b=c\"|\"/a\"|\"/a\"|\"?b=c\"|\"HTTP/1.1\"|\"\"|1|\"vm\"|27969|1");
	ctx_all_bad(&c, 48332, at(47, 27, 252), 27969, 2);
	check_fmt("%{+Q,+E}o " ALL_VARS, &c,
		  "\"127.0.0.1\"|48332|\"127.0.0.1\"|23451|\"\"|\"\"|\"\"|\"\"|21/Nov/2026:07:47:27.252|21/Nov/2026:07:47:27.252|21/Nov/2026:07:47:27 +0000|21/Nov/2026:07:47:27 +0000|21/Nov/2026:07:47:27 +0000|21/Nov/2026:07:47:27 +0000|1795247247|252|\"fe\"|\"fe\"|\"fe\"|\"<NOSRV>\"|-1|-1|-1|-1|0|0|0|0|-1|-1|0|400|0|0|\"\"|\"\"|PR|PR--|1|1|0|0|0|0|0|||||\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"<BADREQ>\"|\"\"|2|\"vm\"|27969|2");

	/* +E on plain strings: '"' gets a backslash when nothing encodes it. */
	ctx_ok(&c, 1, at(47, 0, 0));
	c.unique_id = "a\"b\\c]d";
	check_fmt("%{+E}ID %{+Q,+E}ID %ID", &c, "a\\\"b\\\\c\\]d \"a\\\"b\\\\c\\]d\" a\"b\\c]d");
}

/* Spaces are separators: runs merge, a field that leaves itself out
 * (captures when there are none) takes no space, a line never starts with
 * one. Empty %HQ still counts as a field. */
static void test_spacing(void **state)
{
	struct lf_ctx c;

	ctx_ok(&c, 1, at(47, 0, 0));
	check_fmt("  %HP %HQ %HV %hr %hs x%hr y  %ID %{+Q}hr %{+Q}HQ  %%   %% z  ", &c,
		  "/a ?b=c HTTP/1.1 x y - \"?b=c\" % % z ");
	c.reqline = "GET / HTTP/1.1";
	c.reqline_len = 0;   /* 0: strlen() */
	c.fe_name = "fe2";
	check_fmt("a %HQ b %hr c %{+E}HQ d%%e %{+Q}o %f", &c, "a  b c  d%e \"fe2\"");
	check_fmt("%hr %hr %hrl x", &c, "x");
	check_fmt("", &c, "");
	check_fmt("   ", &c, "");
	check_fmt("\t%f\t", &c, "\tfe2\t");
}

/* The request line and its parts, as haproxy rebuilds it. */
static void test_reqline_parts(void **state)
{
	static const struct { const char *rl, *exp; } t[] = {
		{ "OPTIONS * HTTP/1.1", "OPTIONS * HTTP/1.1|OPTIONS|*|*|||HTTP/1.1|\"\"|\"\"" },
		{ "CONNECT h.example:443 HTTP/1.1", "CONNECT h.example:443 HTTP/1.1|CONNECT|h.example:443|h.example:443|||HTTP/1.1|\"\"|\"\"" },
		{ "GET /? HTTP/1.1", "GET /? HTTP/1.1|GET|/?|/|/|?|HTTP/1.1|\"?\"|\"/\"" },
		{ "GET http://h.example HTTP/1.1", "GET http://h.example HTTP/1.1|GET|http://h.example|http://h.example|||HTTP/1.1|\"\"|\"\"" },
		{ "GET http://h.example?x HTTP/1.1", "GET http://h.example?x HTTP/1.1|GET|http://h.example?x|http://h.example||?x|HTTP/1.1|\"?x\"|\"\"" },
		{ "GET http://h.example/p/q?r HTTP/1.1", "GET http://h.example/p/q?r HTTP/1.1|GET|http://h.example/p/q?r|http://h.example/p/q|/p/q|?r|HTTP/1.1|\"?r\"|\"/p/q\"" },
		{ "GET /a?b?c HTTP/1.0", "GET /a?b?c HTTP/1.0|GET|/a?b?c|/a|/a|?b?c|HTTP/1.0|\"?b?c\"|\"/a\"" },
		{ "get /a HTTP/1.1", "get /a HTTP/1.1|get|/a|/a|/a||HTTP/1.1|\"\"|\"/a\"" },
		/* Not from haproxy (its parser refuses them): no crash, no dash. */
		{ "GET", "GET|GET||||||\"\"|\"\"" },
		{ "", "-|||||||\"\"|\"\"" },
	};
	struct lf_ctx c;

	ctx_ok(&c, 1, at(47, 0, 0));
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		c.reqline = t[i].rl;
		c.reqline_len = strlen(t[i].rl);
		check_fmt("%r|%HM|%HU|%HP|%HPO|%HQ|%HV|%{+Q}HQ|%{+Q}HPO", &c, t[i].exp);
	}
}

#define FMT_I "%ci|%cp|%fi|%fp|%{+X}ci|%{+X}cp|%{+Q}ci|%{+Q,+X}ci|%{+Q}cp|%r|%HU|%HP|%HQ|%{+Q}hr|%{+Q}hrl|%{+Q,+E}HU|%{+Q+E}HV|%{+X}T|%{+X}Tw|%{+X}B|%{+X}sp|%{+Q}sp|%{+X}ST|%{+X}ac|%{+X}rc|%{+X}t|%{+Q}t|%{+X}ms|%{+X}U|%{+X}ts|%{+Q}ts"

static void ctx_i(struct lf_ctx *c, int cport, const char *rl, const char **caps, int ms, int up)
{
	ctx_ok(c, cport, at(47, 33, ms));
	c->srv_addr = NULL;
	c->srv_name = NULL;
	c->Tw = c->Tc = c->Tr = -1;
	c->bytes_out = 73;
	c->bytes_in = (uint64_t)up;
	memcpy(c->term, "LR--", 4);
	c->reqline = rl;
	c->reqline_len = rl ? strlen(rl) : 0;
	c->req_cap = caps;
	c->n_req_cap = 2;
}

/* '#XX' encoding of the request line and the captures, IPv6, UNIX. */
static void test_encoding(void **state)
{
	static const char *c1[] = { "h", NULL }, *c2[] = { NULL, NULL };
	static const char *c3[] = { NULL, "a\tb\xe9\x7f" "z" }, *c4[] = { "example.com", NULL };
	/* "%{+Q+E}HV" is refused by sluice (haproxy ignores the odd flag). */
	const char *fmt = FMT_I;
	char f[512];
	char *p = strstr(fmt, "%{+Q+E}HV");
	struct lf_ctx c;

	assert_non_null(p);
	snprintf(f, sizeof(f), "%.*s%%HV%s", (int)(p - fmt), fmt, p + strlen("%{+Q+E}HV"));
	set_tz("UTC0");

	ctx_i(&c, 48360, "GET /x\"y HTTP/1.1", c1, 474, 41);
	check_fmt(f, &c, "127.0.0.1|48360|127.0.0.1|23451|7F000001|BCE8|\"127.0.0.1\"|7F000001|48360|GET /x#22y HTTP/1.1|/x#22y|/x#22y||\"{h|}\"|\"h\" \"\"|\"/x#22y\"|HTTP/1.1|21/Nov/2026:07:47:33 +0000|-1|73|-|\"\"|200|1|0|21/Nov/2026:07:47:33.474|21/Nov/2026:07:47:33.474|1DA|41|LR|LR");
	ctx_i(&c, 48374, "GET /x]{|}y?q=]\\\\\" HTTP/1.1", c2, 575, 46);
	check_fmt(f, &c, "127.0.0.1|48374|127.0.0.1|23451|7F000001|BCF6|\"127.0.0.1\"|7F000001|48374|GET /x]{|}y?q=]\\\\#22 HTTP/1.1|/x]{|}y?q=]\\\\#22|/x]{|}y|?q=]\\\\#22|\"{|}\"|\"\" \"\"|\"/x\\]{|}y?q=\\]\\\\\\\\#22\"|HTTP/1.1|21/Nov/2026:07:47:33 +0000|-1|73|-|\"\"|200|1|0|21/Nov/2026:07:47:33.575|21/Nov/2026:07:47:33.575|23F|46|LR|LR");
	ctx_i(&c, 48382, "GET / HTTP/1.1", c3, 675, 49);
	check_fmt(f, &c, "127.0.0.1|48382|127.0.0.1|23451|7F000001|BCFE|\"127.0.0.1\"|7F000001|48382|GET / HTTP/1.1|/|/||\"{|a#09b#E9#7Fz}\"|\"\" \"a#09b#E9#7Fz\"|\"/\"|HTTP/1.1|21/Nov/2026:07:47:33 +0000|-1|73|-|\"\"|200|1|0|21/Nov/2026:07:47:33.675|21/Nov/2026:07:47:33.675|2A3|49|LR|LR");
	ctx_i(&c, 57274, "GET /a?b=c HTTP/1.1", c4, 776, 53);
	set_in(&sa_cli, "::1", 57274);
	set_in(&sa_fe, "::1", 23451);
	check_fmt(f, &c, "::1|57274|::1|23451|00000000000000000000000000000001|DFBA|\"::1\"|00000000000000000000000000000001|57274|GET /a?b=c HTTP/1.1|/a?b=c|/a|?b=c|\"{example.com|}\"|\"example.com\" \"\"|\"/a?b=c\"|HTTP/1.1|21/Nov/2026:07:47:33 +0000|-1|73|-|\"\"|200|1|0|21/Nov/2026:07:47:33.776|21/Nov/2026:07:47:33.776|308|53|LR|LR");
	ctx_i(&c, 48394, NULL, NULL, 977, 0);
	c.status = 400;
	c.bytes_out = 0;
	memcpy(c.term, "PR--", 4);
	check_fmt(f, &c, "127.0.0.1|48394|127.0.0.1|23451|7F000001|BD0A|\"127.0.0.1\"|7F000001|48394|<BADREQ>|<BADREQ>|<BADREQ>|<BADREQ>|||\"<BADREQ>\"|<BADREQ>|21/Nov/2026:07:47:33 +0000|-1|0|-|\"\"|400|1|0|21/Nov/2026:07:47:33.977|21/Nov/2026:07:47:33.977|3D1|0|PR|PR");

	/* bind unix@...: haproxy printed "unix|3|unix|3|" (then stopped the
	 * line at %{+X}ci, which sluice writes as "unix"). */
	{
		struct sockaddr_storage un = { .ss_family = AF_UNIX };

		c.cli = c.fe_addr = &un;
		c.li_id = 3;
		check_fmt("%ci|%cp|%fi|%fp|%{+X}ci|%{+Q}ci", &c, "unix|3|unix|3|unix|\"unix\"");
	}
}

/* %o flags add up, a variable's own flags apply in order. */
static void test_flags(void **state)
{
	const char *fmt = "%{+Q}o %{+X}o %b %ci %{+Q}B %{+Q}ST %{+X}ID %{+E}hrl %{+Q}t %{+Q}Ts %{+Q}ms %{+Q}rc %{-Q}o %b %Tl %trl %{-Q,+Q}f %{+Q,-Q}f %{,}f %{}f";
	struct lf_ctx c;

	ctx_ok(&c, 1, at(47, 36, 91));
	c.bytes_out = 73;
	set_tz("EST5");
	check_fmt(fmt, &c, "\"fe\" 7F000001 73 200 \"\" 21/Nov/2026:02:47:36.091 6B014C98 5B 0 fe 21/Nov/2026:02:47:36 -0500 21/Nov/2026:02:47:36 -0500 \"fe\" fe fe fe");
	c.accept_date = c.req_date = at(47, 38, 211);
	set_tz("IST-5:30");
	check_fmt(fmt, &c, "\"fe\" 7F000001 73 200 \"\" 21/Nov/2026:13:17:38.211 6B014C9A D3 0 fe 21/Nov/2026:13:17:38 +0530 21/Nov/2026:13:17:38 +0530 \"fe\" fe fe fe");
	/* Same second, other zone: the cached date must follow tzset(). */
	set_tz("UTC0");
	check_fmt("%t %Tl", &c, "21/Nov/2026:07:47:38.211 21/Nov/2026:07:47:38 +0000");
}

/* Missing values: '-' (or "" with +Q); timers below 0 as they are. */
static void test_missing(void **state)
{
	static const char *caps[] = { "", NULL, "x" };
	struct lf_ctx c;

	memset(&c, 0, sizeof(c));
	c.TR = c.Tw = -1;
	c.status = -1;
	set_tz("UTC0");
	check_fmt("%ci:%cp %fi:%fp %b %s %f %ft %CC %ID %H %sslc %sslv %TR %Tw %ST %ts %tsc %r", &c,
		  "-:- -:- - <NOSRV> - - - - - - - -1 -1 -1 -- ---- <BADREQ>");
	check_fmt("%{+Q}o %ci:%cp %b %s %sslv %{+X}bp %{+X,+Q}si %r %HM", &c,
		  "\"\":\"\" \"\" \"<NOSRV>\" \"\" \"\" \"\" \"<BADREQ>\" \"<BADREQ>\"");
	c.fe_name = "fe";
	c.fe_name_transport = "fe~";
	check_fmt("%f %ft", &c, "fe fe~");
	c.req_cap = caps;
	c.n_req_cap = 3;
	check_fmt("%hr %hrl %{+Q}hrl", &c, "{||x} - - x \"\" \"\" \"x\"");
	c.n_req_cap = 0;   /* captures configured nowhere */
	check_fmt("[%hr] [%hrl]", &c, "[] []");
	c.req_cap = NULL;
	c.n_req_cap = 3;
	check_fmt("a %hr %hrl b", &c, "a b");
	c.accept_date = (struct timespec){ 0, 5000000 };
	check_fmt("%T %ms %Ts %{+X}Ts %{+X}ms", &c, "01/Jan/1970:00:00:00 +0000 005 0 00000000 05");
	c.bytes_out = UINT64_MAX;
	c.Tt = -123456789L;
	c.uniq_num = 0x123456789ULL;
	c.pid = 7;
	check_fmt("%B %Tt %{+X}rt %{+X}pid %pid", &c, "18446744073709551615 -123456789 123456789 0007 7");
	set_in(&sa_cli, "10.200.0.255", 0);
	c.cli = &sa_cli;
	check_fmt("%ci:%cp %{+X}ci:%{+X}cp", &c, "10.200.0.255:0 0AC800FF:0000");
	set_in(&sa_cli, "0.0.0.0", 65535);
	check_fmt("%ci:%cp %{+X}ci:%{+X}cp", &c, "0.0.0.0:65535 00000000:FFFF");
}

/* An expression that was never compiled, or freed, renders nothing. */
static void test_empty_expr(void **state)
{
	struct lf_expr e = { 0 };
	struct lf_ctx c;
	char buf[8] = "xxxxxxx";

	memset(&c, 0, sizeof(c));
	assert_int_equal(lf_render(&e, &c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	lf_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_compile_ok),
		cmocka_unit_test(test_needs),
		cmocka_unit_test(test_httplog),
		cmocka_unit_test(test_tcplog),
		cmocka_unit_test(test_clf),
		cmocka_unit_test(test_all_vars),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_spacing),
		cmocka_unit_test(test_reqline_parts),
		cmocka_unit_test(test_encoding),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_empty_expr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
