/* Unit tests for patterns and ACLs (src/rules/pattern.c, acl.c): every
 * matching method and flag, pattern files, "acl" lines with their errors,
 * conditions (AND, ||, !, anonymous and predefined ACLs, unless) as truth
 * tables on a real stream, and use_backend parsing and selection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/acl.h>
#include <sluice/acl_px.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/pattern.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/buf.h>
#include <sluice/stream.h>

#include "../../src/rules/acl_int.h"
#include "cfg_capture.h"
#include "rules_stream.h"

/* ---- patterns alone ---- */

static int pmatch(enum pat_match m, unsigned flags, const char **pats, struct sample smp)
{
	struct pat_set ps;
	char *err = NULL;
	int r;

	pat_set_init(&ps, m, flags);
	for (; *pats; pats++) {
		enum pat_op op = PAT_OP_NONE;

		if (pat_op_find(*pats, &op))
			pats++;
		if (pat_set_add(&ps, *pats, op, &err) == -1)
			fail_msg("pattern '%s': %s", *pats, err);
	}
	r = pat_set_exec(&ps, &smp);
	pat_set_free(&ps);
	return r;
}

static struct sample S(const char *s)
{
	return (struct sample){ .type = SMP_T_STR, .flags = SMP_F_CONST, .u.str = { s, strlen(s) } };
}

static struct sample I(int64_t v)
{
	return (struct sample){ .type = SMP_T_SINT, .u.sint = v };
}

#define P(...) ((const char *[]){ __VA_ARGS__, NULL })

static struct sample B(const char *p, size_t len)
{
	return (struct sample){ .type = SMP_T_BIN, .flags = SMP_F_CONST, .u.str = { p, len } };
}

static void test_pattern_bin(void **state)
{
	assert_true(pmatch(PAT_M_BIN, 0, P("160301"), B("\x16\x03\x01", 3)));
	assert_true(pmatch(PAT_M_BIN, 0, P("00ff", "160301"), B("\x00\xff", 2)));
	assert_true(pmatch(PAT_M_BIN, 0, P("00FF"), B("\x00\xff", 2)));
	assert_false(pmatch(PAT_M_BIN, 0, P("160301"), B("\x16\x03", 2)));
	assert_false(pmatch(PAT_M_BIN, 0, P("1603"), B("\x16\x03\x01", 3)));
	/* a string sample is compared as its bytes */
	assert_true(pmatch(PAT_M_BIN, 0, P("50494e47"), S("PING")));
}

static void test_pattern_methods(void **state)
{
	assert_true(pmatch(PAT_M_STR, 0, P("/a", "/b"), S("/b")));
	assert_false(pmatch(PAT_M_STR, 0, P("/a", "/b"), S("/B")));
	assert_true(pmatch(PAT_M_STR, PAT_F_ICASE, P("/a", "/b"), S("/B")));
	assert_false(pmatch(PAT_M_STR, 0, P("/a"), S("/ab")));
	assert_true(pmatch(PAT_M_BEG, 0, P("/adm"), S("/admin")));
	assert_false(pmatch(PAT_M_BEG, 0, P("/adm"), S("/ad")));
	assert_true(pmatch(PAT_M_BEG, PAT_F_ICASE, P("/ADM"), S("/admin")));
	assert_true(pmatch(PAT_M_END, 0, P(".jpg", ".png"), S("/x.png")));
	assert_false(pmatch(PAT_M_END, 0, P(".jpg"), S("/x.JPG")));
	assert_true(pmatch(PAT_M_END, PAT_F_ICASE, P(".jpg"), S("/x.JPG")));
	assert_true(pmatch(PAT_M_SUB, 0, P("min"), S("/admin/x")));
	assert_true(pmatch(PAT_M_SUB, PAT_F_ICASE, P("MIN"), S("/admin/x")));
	assert_false(pmatch(PAT_M_SUB, 0, P("xyz"), S("/admin/x")));
	assert_true(pmatch(PAT_M_DIR, 0, P("admin"), S("/x/admin/y")));
	assert_true(pmatch(PAT_M_DIR, 0, P("/admin/"), S("/admin")));
	assert_false(pmatch(PAT_M_DIR, 0, P("admin"), S("/administrator")));
	assert_true(pmatch(PAT_M_DOM, 0, P("example.com"), S("www.example.com")));
	assert_true(pmatch(PAT_M_DOM, 0, P("example.com"), S("example.com:80")));
	assert_false(pmatch(PAT_M_DOM, 0, P("example.com"), S("myexample.com")));
	assert_true(pmatch(PAT_M_DOM, PAT_F_ICASE, P("EXAMPLE"), S("www.example.com")));
#ifdef USE_PCRE2
	assert_true(pmatch(PAT_M_REG, 0, P("^/r[0-9]+$"), S("/r12")));
	assert_false(pmatch(PAT_M_REG, 0, P("^/r[0-9]+$"), S("/R12")));
	assert_true(pmatch(PAT_M_REG, PAT_F_ICASE, P("^/r[0-9]+$"), S("/R12")));
#endif
	assert_true(pmatch(PAT_M_LEN, 0, P("3"), S("abc")));
	assert_true(pmatch(PAT_M_LEN, 0, P("gt", "2"), S("abc")));
	assert_false(pmatch(PAT_M_LEN, 0, P("1:2"), S("abc")));
	/* Integers: values, ranges, operators. */
	assert_true(pmatch(PAT_M_INT, 0, P("5"), I(5)));
	assert_false(pmatch(PAT_M_INT, 0, P("5"), I(6)));
	assert_true(pmatch(PAT_M_INT, 0, P("1:10"), I(10)));
	assert_false(pmatch(PAT_M_INT, 0, P("1:10"), I(11)));
	assert_true(pmatch(PAT_M_INT, 0, P(":10"), I(-50)));
	assert_true(pmatch(PAT_M_INT, 0, P("10:"), I(1000)));
	assert_true(pmatch(PAT_M_INT, 0, P("eq", "4"), I(4)));
	assert_true(pmatch(PAT_M_INT, 0, P("ge", "4"), I(4)));
	assert_false(pmatch(PAT_M_INT, 0, P("gt", "4"), I(4)));
	assert_true(pmatch(PAT_M_INT, 0, P("le", "4"), I(4)));
	assert_false(pmatch(PAT_M_INT, 0, P("lt", "4"), I(4)));
	assert_true(pmatch(PAT_M_INT, 0, P("lt", "4"), I(-4)));
	assert_true(pmatch(PAT_M_INT, 0, P("5"), S("5")));     /* cast */
	assert_false(pmatch(PAT_M_INT, 0, P("5"), S("x")));
	/* Addresses and networks, v4 and v6, mapped forms. */
	assert_true(pmatch(PAT_M_IP, 0, P("10.0.0.0/8"), S("10.200.1.1")));
	assert_false(pmatch(PAT_M_IP, 0, P("10.0.0.0/8"), S("11.0.0.1")));
	assert_true(pmatch(PAT_M_IP, 0, P("192.168.1.0/255.255.255.0"), S("192.168.1.9")));
	assert_true(pmatch(PAT_M_IP, 0, P("1.2.3.4"), S("1.2.3.4")));
	assert_false(pmatch(PAT_M_IP, 0, P("1.2.3.4"), S("1.2.3.5")));
	assert_true(pmatch(PAT_M_IP, 0, P("2001:db8::/32"), S("2001:db8:1::5")));
	assert_false(pmatch(PAT_M_IP, 0, P("2001:db8::/32"), S("2001:db9::5")));
	assert_true(pmatch(PAT_M_IP, 0, P("10.0.0.0/8"), S("::ffff:10.1.1.1")));
	assert_true(pmatch(PAT_M_IP, 0, P("::ffff:10.0.0.0/104"), S("10.1.1.1")));
	assert_true(pmatch(PAT_M_IP, 0, P("0.0.0.0/0"), S("8.8.8.8")));
	assert_true(pmatch(PAT_M_IP, 0, P("10.1.0.0/16", "10.0.0.0/8"), S("10.2.0.1")));
	assert_false(pmatch(PAT_M_IP, 0, P("10.1.0.0/16"), S("not-an-ip")));
	/* found and bool. */
	{
		struct pat_set ps;

		pat_set_init(&ps, PAT_M_FOUND, 0);
		assert_true(pat_set_exec(&ps, &(struct sample){ .type = SMP_T_STR }));
		pat_set_init(&ps, PAT_M_BOOL, 0);
		assert_true(pat_set_exec(&ps, &(struct sample){ .type = SMP_T_SINT, .u.sint = 3 }));
		assert_false(pat_set_exec(&ps, &(struct sample){ .type = SMP_T_BOOL, .u.sint = 0 }));
	}
}

static void test_pattern_errors(void **state)
{
	struct pat_set ps;
	char *err = NULL;
	enum pat_match m;

	assert_int_equal(pat_match_find("beg", &m), 0);
	assert_int_equal(m, PAT_M_BEG);
	assert_int_equal(pat_match_find("begin", &m), -1);
	pat_set_init(&ps, PAT_M_IP, 0);
	assert_int_equal(pat_set_add(&ps, "10.0.0.0/33", PAT_OP_NONE, &err), -1);
	assert_non_null(strstr(err, "'10.0.0.0/33' is not a valid IPv4 or IPv6 address"));
	free(err);
	assert_int_equal(pat_set_add(&ps, "host.example", PAT_OP_NONE, &err), -1);
	free(err);
	assert_int_equal(pat_set_add(&ps, "10.0.0.0/255.0.255.0", PAT_OP_NONE, &err), -1);
	free(err);
	assert_int_equal(pat_set_add(&ps, "1.2.3.4", PAT_OP_GT, &err), -1);
	assert_non_null(strstr(err, "operator 'gt' only applies to integer matches"));
	free(err);
	pat_set_free(&ps);
	pat_set_init(&ps, PAT_M_INT, 0);
	assert_int_equal(pat_set_add(&ps, "1:x", PAT_OP_NONE, &err), -1);
	assert_non_null(strstr(err, "'1:x' is not a valid integer or range"));
	free(err);
	assert_int_equal(pat_set_add(&ps, ":", PAT_OP_NONE, &err), -1);
	free(err);
	pat_set_free(&ps);
#ifdef USE_PCRE2
	pat_set_init(&ps, PAT_M_REG, 0);
	assert_int_equal(pat_set_add(&ps, "a(b", PAT_OP_NONE, &err), -1);
	assert_non_null(strstr(err, "invalid regex 'a(b'"));
	free(err);
	pat_set_free(&ps);
#endif
}

static char tmpfile_path[64];

static const char *write_file(const char *text)
{
	int fd;

	strcpy(tmpfile_path, "/tmp/sluice-acl-XXXXXX");
	fd = mkstemp(tmpfile_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return tmpfile_path;
}

static void test_pattern_file(void **state)
{
	struct pat_set ps;
	char *err = NULL;
	const char *f = write_file("# comment\n\n  /a\n\t/b\r\n/c d\n");

	pat_set_init(&ps, PAT_M_STR, 0);
	assert_int_equal(pat_set_load_file(&ps, f, 0, &err), 0);
	assert_int_equal(ps.count, 3);
	assert_true(pat_set_exec(&ps, &(struct sample){ .type = SMP_T_STR, .u.str = { "/b", 2 } }));
	assert_true(pat_set_exec(&ps, &(struct sample){ .type = SMP_T_STR, .u.str = { "/c d", 4 } }));
	assert_false(pat_set_exec(&ps, &(struct sample){ .type = SMP_T_STR, .u.str = { "# comment", 9 } }));
	pat_set_free(&ps);
	/* As a map: the first word only. */
	pat_set_init(&ps, PAT_M_STR, 0);
	assert_int_equal(pat_set_load_file(&ps, f, 1, &err), 0);
	assert_true(pat_set_exec(&ps, &(struct sample){ .type = SMP_T_STR, .u.str = { "/c", 2 } }));
	pat_set_free(&ps);
	unlink(f);
	f = write_file("10.0.0.0/8\nbad\n");
	pat_set_init(&ps, PAT_M_IP, 0);
	assert_int_equal(pat_set_load_file(&ps, f, 0, &err), -1);
	assert_non_null(strstr(err, "line 2: 'bad' is not a valid"));
	free(err);
	pat_set_free(&ps);
	unlink(f);
	assert_int_equal(pat_set_load_file(&ps, "/nonexistent/x", 0, &err), -1);
	assert_non_null(strstr(err, "failed to open pattern file '/nonexistent/x'"));
	free(err);
}

/* ---- ACL lines and conditions in configuration text ---- */

static const char head[] =
	"defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n"
	"backend be\n server s1 127.0.0.1:8080\n"
	"backend be2\n server s1 127.0.0.1:8081\n"
	"frontend fe\n default_backend be\n";

/* Parses <lines> in frontend fe after the common head. */
static int parse_fe(const char *lines)
{
	return parse_after(head, lines);
}

static void test_acl_errors(void **state)
{
	static const struct { const char *line; const char *msg; int warn; } cases[] = {
		{ " acl\n", "expects an ACL name and a criterion", 0 },
		{ " acl x\n", "expects an ACL name and a criterion", 0 },
		{ " acl x nosuch /a\n", "ACL 'x': unknown fetch method 'nosuch' in ACL expression 'nosuch'", 0 },
		{ " acl x pth /a\n", "did you mean 'path'?", 0 },
		{ " acl x path -x y\n", "ACL 'x': '-x' is not a valid ACL option", 0 },
		{ " acl x path -m\n", "option '-m' expects an argument", 0 },
		{ " acl x path -m nope /a\n", "unknown matching method 'nope'", 0 },
		{ " acl x path_beg -f /nonexistent/f\n", "failed to open pattern file '/nonexistent/f'", 0 },
		{ " acl x src 10.0.0.0/8 host.invalid\n", "'host.invalid' is not a valid IPv4 or IPv6", 0 },
		{ " acl x hdr_cnt(host) gt z\n", "'z' is not a valid integer or range", 0 },
		{ " acl x path_beg(1) /a\n", "too many arguments for 'path'", 0 },
		{ " acl x,y path /a\n", "invalid character ',' in ACL name 'x,y'", 0 },
		{ " http-request deny if nosuch\n", "no such ACL: 'nosuch'", 0 },
		{ " http-request deny if { path /a\n", "missing '}' after the anonymous ACL '{'", 0 },
		{ " http-request deny if { }\n", "empty anonymous ACL '{ }'", 0 },
		{ " http-request deny if }\n", "'}' without an opening '{'", 0 },
		{ " http-request deny if !\n", "incomplete condition after '!'", 0 },
		{ " http-request deny if\n", "incomplete condition after 'if'", 0 },
		{ " http-request deny if TRUE ||\n", "incomplete condition after '||'", 0 },
		{ " http-request deny if || TRUE\n", "'||' without a condition before it", 0 },
		{ " acl x req.payload(0,3) -m bin 16030\n", "is not a hex string of at most", 0 },
		{ " acl x req.payload(0,3) -m bin 16zz01\n", "is not a hex string (invalid digit 'z')", 0 },
		{ " acl x req.payload(0,-1) -m bin 16\n", "offset and length must not be negative", 0 },
		{ " acl x req.payload_lv(0,5) -m found\n", "the length field is 1 to 4 bytes long", 0 },
		{ " acl x hdr(host)\n", "no pattern to match 'hdr(host)' against", 1 },
		{ " http-request deny if { status 200 }\n", "condition uses only response fetches", 1 },
		{ " acl x path -m found /a\n", "'-m found' ignores its patterns", 1 },
		{ " use_backend\n", "expects a backend name", 0 },
		{ " use_backend be if nosuch\n", "no such ACL: 'nosuch'", 0 },
		{ " use_backend %[nosuch]\n", "invalid log-format backend name", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int e = parse_fe(cases[i].line);

		if (e != (cases[i].warn ? 0 : 1))
			fail_msg("'%s': %d errors:\n%s", cases[i].line, e, errtext);
		expect_msg(cases[i].msg);
	}
	/* acl in a defaults section is accepted; use_backend is not. */
	reset(NULL);
	EXPECT_ERRORS(parse("defaults d\n acl x path /a\n"), 0);
	reset(NULL);
	PARSE_ERRORS("defaults d\n use_backend be\n", 1);
	/* ACLs of a defaults section are not inherited. */
	reset(NULL);
	PARSE_ERRORS("defaults d\n mode http\n acl x path /a\nfrontend f from d\n"
		     " http-request deny if x\n", 1);
	expect_msg("no such ACL: 'x'");
}

/* The condition of the first http-request rule of fe, on a request. */
static struct acl_cond *cond_of(const char *cond_text)
{
	char *argv[64], buf[1024], *save = NULL;
	int argc = 0;
	struct cfg_ctx ctx = { .file = "t", .kw = "http-request", .px = proxy_find("fe", PR_CAP_FE) };
	struct acl_cond *c;

	snprintf(buf, sizeof(buf), "%s", cond_text);
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	capture_start();
	c = acl_cond_parse(&ctx, argc, argv);
	capture_end();
	if (!c)
		fail_msg("condition '%s' does not parse:\n%s", cond_text, errtext);
	return c;
}

static int truth(const char *cond_text)
{
	struct acl_cond *c = cond_of(cond_text);
	int r = acl_cond_exec(c, &strm);

	acl_cond_free(c);
	return r;
}

static void test_conditions(void **state)
{
	const char *f = write_file("# admins\n10.9.0.0/16\n192.0.2.0/24\n");
	char lines[1024];

	snprintf(lines, sizeof(lines),
		 " acl adm path_beg /admin\n"
		 " acl adm path_beg /manage\n"     /* OR'ed with the first */
		 " acl ex hdr(host) -i example.com\n"
		 " acl net src -f %s\n"
		 " acl many hdr_cnt(x) gt 1\n"
		 " acl low path,lower -m beg /admin\n"
		 " acl neg_val int(-3) -- -3\n"
		 " acl q url_param(debug) -m found\n"
		 " acl st status 200:299\n", f);
	EXPECT_ERRORS(parse_fe(lines), 0);
	EXPECT_ERRORS(postparse(), 0);
	unlink(f);
	strm_new(proxy_find("fe", PR_CAP_FE));
	msg_load("GET /admin/x?debug=1 HTTP/1.1\r\nHost: EXAMPLE.com\r\nX: 1\r\nX: 2\r\n\r\n");

	assert_true(truth("if adm"));
	assert_false(truth("unless adm"));
	assert_true(truth("if ex"));
	assert_true(truth("if net"));
	assert_true(truth("if many"));
	assert_true(truth("if neg_val"));
	assert_true(truth("if q"));
	assert_false(truth("if st"));          /* no response yet */
	/* AND, OR, NOT truth table. */
	assert_true(truth("if adm ex"));
	assert_false(truth("if adm !ex"));
	assert_false(truth("if adm ! ex"));
	assert_true(truth("if !adm || ex"));
	assert_true(truth("if FALSE || TRUE"));
	assert_false(truth("if FALSE || FALSE"));
	assert_false(truth("if FALSE or FALSE"));
	assert_true(truth("if TRUE TRUE"));
	assert_false(truth("if TRUE FALSE"));
	assert_true(truth("if FALSE TRUE || TRUE"));
	assert_false(truth("if FALSE TRUE || TRUE FALSE"));
	assert_true(truth("unless FALSE"));
	assert_false(truth("unless TRUE || FALSE"));
	assert_true(truth("if !!TRUE"));
	assert_false(truth("if ! TRUE"));
	/* Anonymous ACLs. */
	assert_true(truth("if { path_beg /admin } { hdr(host) -i example.com }"));
	assert_false(truth("if { path_beg /x }"));
	assert_true(truth("if !{ path_beg /x }"));
	assert_true(truth("if { path_beg /x } || { src 192.0.2.7 }"));
	assert_true(truth("if { hdr(x) 2 }"));            /* any occurrence */
	assert_true(truth("if { hdr(x) 1 }"));
	assert_false(truth("if { hdr(x,1) 2 }"));         /* that occurrence only */
	assert_true(truth("if { src_port 40000 } { dst_port 80 }"));
	assert_true(truth("if { fe_name fe }"));
	/* Predefined ACLs. */
	assert_true(truth("if HTTP HTTP_1.1 !HTTP_1.0 METH_GET HTTP_URL_SLASH"));
	assert_false(truth("if METH_POST || METH_PUT || METH_DELETE || METH_OPTIONS"));
	assert_false(truth("if LOCALHOST || HTTP_CONTENT || HTTP_URL_STAR || METH_CONNECT"));
	assert_false(truth("if REQ_CONTENT || METH_TRACE || METH_HEAD"));
	/* (an HTTP/1.0 HEAD with a payload is refused unless the configuration
	 * says h1-accept-payload-with-any-method, as in HAProxy 2.6) */
	global.tune_flags |= GLB_T_H1_ANY_BODY;
	msg_load("HEAD http://h/ HTTP/1.0\r\nContent-Length: 5\r\n\r\n");
	global.tune_flags &= ~GLB_T_H1_ANY_BODY;
	assert_true(truth("if METH_GET METH_HEAD HTTP_1.0 HTTP_CONTENT"));
#ifdef USE_PCRE2
	assert_true(truth("if HTTP_URL_ABS !HTTP_URL_SLASH"));
#endif
	assert_false(truth("if adm"));
	msg_load("GET /MANAGE HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_false(truth("if adm"));
	assert_false(truth("if low"));
	msg_load("GET /manage HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_true(truth("if adm"));
	msg_load("HTTP/1.1 204 No Content\r\n\r\n");
	assert_true(truth("if st"));
	/* NULL: always true. */
	assert_true(acl_cond_exec(NULL, &strm));
}

static void test_use_backend(void **state)
{
	struct proxy *fe, *be2;

	EXPECT_ERRORS(parse_fe(" use_backend be2 if { path_beg /two }\n"
			       " use_backend be if { path_beg /t }\n"), 0);
	EXPECT_ERRORS(postparse(), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	be2 = proxy_find("be2", PR_CAP_BE);
	strm_new(fe);
	msg_load("GET /two HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_ptr_equal(use_backend_select(fe, &strm), be2);
	msg_load("GET /three HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_ptr_equal(use_backend_select(fe, &strm), proxy_find("be", PR_CAP_BE));
	msg_load("GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_null(use_backend_select(fe, &strm));
	assert_null(use_backend_select(proxy_find("be", PR_CAP_BE), &strm));

	/* Unconditional, unknown backend, mode mismatch. */
	EXPECT_ERRORS(parse_fe(" use_backend be2\n"), 0);
	EXPECT_ERRORS(postparse(), 0);
	EXPECT_ERRORS(parse_fe(" use_backend nosuch if TRUE\n"), 0);
	EXPECT_ERRORS(postparse(), 1);
	expect_msg("t.cfg:12: proxy 'fe': use_backend 'nosuch' does not exist");
	EXPECT_ERRORS(parse_fe(" use_backend tcpbe\nbackend tcpbe\n mode tcp\n server s 127.0.0.1:1\n"), 0);
	EXPECT_ERRORS(postparse(), 1);
	expect_msg("use_backend 'tcpbe' is in tcp mode but the frontend is in http mode");
}

/* A request rule whose condition reads only the response never matches:
 * warned, for http-request and use_backend, not for http-response. */
static void test_request_cond_response_fetch(void **state)
{
	static const char *const warned[] = {
		" http-request deny if { status 200 }\n",
		" use_backend be2 if { res.hdr(x) -m found }\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(warned); i++) {
		EXPECT_ERRORS(parse_fe(warned[i]), 0);
		expect_msg("condition uses only response fetches, which request rules cannot see");
	}
	EXPECT_ERRORS(parse_fe(" http-response deny if { status 200 }\n"
			       " http-request deny if { path /x } || { status 200 }\n"), 0);
	assert_true(!errtext || !strstr(errtext, "only response fetches"));
}

/* ---- three-valued conditions on data that may still grow ---- */

static enum acl_test tri(const char *cond_text)
{
	struct acl_cond *c = cond_of(cond_text);
	enum acl_test r = acl_cond_test(c, &strm);

	acl_cond_free(c);
	return r;
}

static void test_tristate(void **state)
{
	struct buf *b = calloc(1, sizeof(*b) + 16);
	struct http_txn *txn;

	assert_int_equal(parse_fe(""), 0);
	strm_new(proxy_find("fe", PR_CAP_FE));
	memcpy(b->area, "hello", 5);
	b->data = 5;
	strm.req.buf = b;

	strm.smp_partial = STRM_PARTIAL_REQ;
	assert_int_equal(tri("if { req.len gt 1 }"), ACL_TEST_PASS);
	assert_int_equal(tri("if { req.len gt 10 }"), ACL_TEST_MISS);
	assert_int_equal(tri("if ! { req.len gt 10 }"), ACL_TEST_MISS);
	assert_int_equal(tri("unless { req.len gt 10 }"), ACL_TEST_MISS);
	assert_int_equal(tri("if { req.len gt 10 } || TRUE"), ACL_TEST_PASS);
	assert_int_equal(tri("if { req.len gt 10 } || FALSE"), ACL_TEST_MISS);
	assert_int_equal(tri("if { req.len gt 10 } FALSE"), ACL_TEST_FAIL);
	assert_int_equal(tri("if TRUE { req.len gt 10 }"), ACL_TEST_MISS);
	assert_int_equal(tri("if WAIT_END"), ACL_TEST_MISS);
	/* bytes that are there are final, missing ones may come */
	assert_int_equal(tri("if { req.payload(0,2) -m bin 6865 }"), ACL_TEST_PASS);
	assert_int_equal(tri("if { req.payload(0,2) -m bin 6866 }"), ACL_TEST_FAIL);
	assert_int_equal(tri("if { req.payload(3,4) -m found }"), ACL_TEST_MISS);
	assert_int_equal(tri("if { req.ssl_hello_type 1 }"), ACL_TEST_FAIL);

	strm.smp_partial = 0;   /* the delay is over: decide on what is there */
	assert_int_equal(tri("if { req.len gt 10 }"), ACL_TEST_FAIL);
	assert_int_equal(tri("unless { req.len gt 10 }"), ACL_TEST_PASS);
	assert_int_equal(tri("if WAIT_END"), ACL_TEST_PASS);
	assert_int_equal(tri("if { req.payload(3,4) -m found }"), ACL_TEST_FAIL);
	assert_false(truth("if { req.len gt 10 }"));
	assert_true(truth("if { req.len 5 }"));

	/* payload_lv: a 1-byte length at 0, then the block */
	memcpy(b->area, "\x03" "abcX", 5);
	assert_true(truth("if { req.payload_lv(0,1) -m bin 616263 }"));
	assert_true(truth("if { req.payload_lv(0,1,+1) -m bin 626358 }"));
	assert_false(truth("if { req.payload_lv(0,1,3) -m found }"));
	/* mode tcp (no transaction): req.proto_http reads the data */
	txn = strm.txn;
	strm.txn = NULL;
	strm.fe->mode = PR_MODE_TCP;
	assert_false(truth("if { req.proto_http }"));
	memcpy(b->area, "GET / HTTP/1.1\r\n", 16);
	b->data = 16;
	assert_true(truth("if { req.proto_http }"));
	memcpy(b->area, "GET / HTTP/1.1", 14);
	b->data = 14;
	strm.smp_partial = STRM_PARTIAL_REQ;
	assert_int_equal(tri("if { req.proto_http }"), ACL_TEST_MISS);
	strm.smp_partial = 0;
	assert_false(truth("if { req.proto_http }"));
	strm.fe->mode = PR_MODE_HTTP;
	strm.txn = txn;
	strm.req.buf = NULL;
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pattern_bin),
		cmocka_unit_test_teardown(test_tristate, reset),
		cmocka_unit_test(test_pattern_methods),
		cmocka_unit_test(test_pattern_errors),
		cmocka_unit_test(test_pattern_file),
		cmocka_unit_test_teardown(test_acl_errors, reset),
		cmocka_unit_test_teardown(test_conditions, reset),
		cmocka_unit_test_teardown(test_use_backend, reset),
		cmocka_unit_test_teardown(test_request_cond_response_fetch, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
