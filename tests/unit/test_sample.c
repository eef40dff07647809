/* Unit tests for samples (src/rules/sample.c, sample_http.c, conv.c):
 * expression parsing and its errors, every fetch on a real stream with
 * request and response heads parsed from text, every converter, casts,
 * and %[...] in log-format strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/lb.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/ticks.h>

#include "cfg_capture.h"
#include "rules_stream.h"

static const char cfg_text[] =
	"defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n"
	"frontend fe\n default_backend be\n"
	"backend be\n server s1 127.0.0.1:8080\n server s2 127.0.0.1:8081 maxconn 10\n"
	"backend other\n server o1 127.0.0.1:8082\n";

/* Parses the test configuration and makes the stream (frontend fe, backend
 * be, server s1), with a request and a response head. */
static void setup_stream(void)
{
	struct proxy *fe, *be;

	EXPECT_ERRORS(parse(cfg_text), 0);
	EXPECT_ERRORS(postparse(), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	be = proxy_find("be", PR_CAP_BE);
	assert_non_null(fe);
	assert_non_null(be);
	strm_new(fe);
	strm.be = be;
	strm.ss.target = be->servers;
	msg_load("GET /a/b.html?x=1&y=two&z HTTP/1.1\r\nHost: www.Example.com\r\n"
		 "Accept: text/html, text/plain , */*\r\nAccept: image/png\r\n"
		 "Cookie: a=1; sid=abc; a=2\r\nCookie: b=3\r\nX-Fwd: 10.1.2.3\r\n"
		 "Content-Length: 0\r\nX-Num: 42\r\n\r\n");
	msg_load("HTTP/1.1 302 Found\r\nLocation: /x\r\nSet-Cookie: s=v1; Path=/\r\n"
		 "Set-Cookie: t=v2\r\nX-A: 1, 2\r\n\r\n");
}

/* Evaluates <expr> on the test stream (NULL: none) and returns
 * "type:value", or "<none>", or "<error: message>". */
static const char *ev_on(const char *expr, struct stream *s)
{
	static char out[512];
	char val[400], *err = NULL;
	struct smp_expr e;
	struct sample smp = { 0 };

	if (smp_expr_parse(expr, &e, NULL, &err) == -1) {
		snprintf(out, sizeof(out), "<error: %s>", err);
		free(err);
		return out;
	}
	if (!smp_expr_eval(&e, s, &smp))
		snprintf(out, sizeof(out), "<none>");
	else {
		smp_to_text(&smp, val, sizeof(val));
		snprintf(out, sizeof(out), "%s:%s", smp_type_name(smp.type), val);
	}
	smp_expr_free(&e);
	return out;
}

static const char *ev(const char *expr)
{
	return ev_on(expr, &strm);
}

#define EV(expr, want) assert_string_equal(ev(expr), want)

static void test_parse_errors(void **state)
{
	EV("nosuch", "<error: unknown fetch method 'nosuch'>");
	EV("pth", "<error: unknown fetch method 'pth'; did you mean 'path'?>");
	EV("path,lowe", "<error: unknown converter 'lowe'; did you mean 'lower'?>");
	EV("path,", "<error: expected a converter name after ',' at ''>");
	EV("hdr(host", "<error: missing ')' after the arguments of 'hdr'>");
	EV("src(1)", "<error: too many arguments for 'src' (at most 0)>");
	EV("env", "<error: missing argument 1 of 'env'>");
	EV("int(abc)", "<error: argument 1 of 'int' must be an integer (got 'abc')>");
	EV("hdr(host,x)", "<error: argument 2 of 'hdr' must be an integer (got 'x')>");
	EV("always_true,ipmask(24)", "<error: converter 'ipmask' expects addr input, cannot take "
	   "the bool output of what precedes it>");
	EV("bool(2)", "<error: bool() expects 0 or 1>");
	EV("ipv4(::1)", "<error: ipv4() expects an IPv4 address (got '::1')>");
	EV("path,field(0,/)", "<error: converter 'field': field index must not be 0 (1 is the first, -1 the last)>");
	EV("path,ipmask(33)", "<error: converter 'ipmask': invalid IPv4 mask '33'>");
	EV("path,strcmp(bad.x)", "<error: converter 'strcmp': invalid variable name 'bad.x' (expects <scope>.<name> with scope proc, sess, txn, req, res or check)>");
	EV("srv_conn(nosrv)", "<error: expects 'backend/server' (got 'nosrv')>");
	EV("path)", "<error: unexpected ')' after the sample expression>");
}

static void test_fetch_l4(void **state)
{
	setup_stream();
	EV("src", "ipv4:192.0.2.7");
	EV("src_port", "int:40000");
	EV("dst", "ipv4:198.51.100.1");
	EV("dst_port", "int:80");
	EV("fe_name", "str:fe");
	EV("be_name", "str:be");
	EV("srv_name", "str:s1");
	assert_string_equal(ev("fe_id"), "int:1");
	assert_string_equal(ev("be_id"), "int:2");
	EV("srv_id", "int:1");
	EV("always_true", "bool:1");
	EV("always_false", "bool:0");
	EV("be_conn", "int:0");
	EV("fe_conn", "int:0");
	EV("queue", "int:0");
	EV("connslots", "int:-1");   /* s1 has no maxconn */
	EV("srv_conn(be/s2)", "int:0");
	EV("nbsrv(other)", "int:1");
	setenv("SLUICE_T", "val", 1);
	EV("env(SLUICE_T)", "str:val");
	EV("env(SLUICE_NOPE)", "<none>");
	EV("int(-12)", "int:-12");
	EV("str(a b)", "str:a b");
	EV("str()", "str:");
	EV("bool(1)", "bool:1");
	EV("ipv4(10.0.0.1)", "ipv4:10.0.0.1");
	EV("ipv6(2001:db8::1)", "ipv6:2001:db8::1");
	assert_true(strncmp(ev("date"), "int:1", 5) == 0);
	assert_true(strncmp(ev("rand(10)"), "int:", 4) == 0);
	assert_true(atoi(ev("rand(10)") + 4) < 10);
	/* Constants work without a stream; stream fetches do not. */
	assert_string_equal(ev_on("str(x),upper", NULL), "str:X");
	assert_string_equal(ev_on("src", NULL), "<none>");
	/* No server yet. */
	strm.ss.target = NULL;
	EV("srv_name", "<none>");
}

/* Internal-state fetches: uuid, date_us, bin, proc, thread, stopping,
 * fe_defbe and the configured timeouts. */
static void test_fetch_state(void **state)
{
	const char *u;

	setup_stream();
	u = ev("uuid");
	assert_int_equal(strlen(u), 4 + 36);
	assert_true(strncmp(u, "str:", 4) == 0);
	u += 4;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(u[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", u[i]));
	}
	assert_int_equal(u[14], '4');                  /* version 4 */
	assert_non_null(strchr("89ab", u[19]));        /* RFC 4122 variant */
	{
		char first[64];

		snprintf(first, sizeof(first), "%s", ev("uuid(4)"));
		assert_string_not_equal(first, ev("uuid(4)"));
	}
	EV("uuid(1)", "<error: uuid() supports only version 4 (got 1)>");
	u = ev("date_us");
	assert_true(strncmp(u, "int:", 4) == 0);
	assert_true(atol(u + 4) >= 0 && atol(u + 4) <= 999999);
	EV("bin(414243),hex", "str:414243");
	EV("bin(61ff),length", "int:2");
	EV("bin()", "bin:");
	EV("bin(4)", "<error: bin() expects an even number of hexadecimal digits (got '4')>");
	EV("bin(zz)", "<error: bin() expects hexadecimal digits (got 'zz')>");
	EV("proc", "int:1");
	EV("thread", "int:0");
	EV("stopping", "bool:0");
	global.flags |= GLB_F_STOPPING;
	EV("stopping", "bool:1");
	global.flags &= ~GLB_F_STOPPING;
	EV("fe_defbe", "str:be");
	EV("be_server_timeout", "int:1000");
	EV("cur_server_timeout", "int:1000");
	EV("be_tunnel_timeout", "int:0");
	EV("cur_tunnel_timeout", "int:0");
	EV("fe_client_timeout", "int:1000");
	strm.be->timeout.tunnel = 3600000;
	EV("be_tunnel_timeout", "int:3600000");
	strm.fe->defbe = NULL;
	EV("fe_defbe", "<none>");
	assert_string_equal(ev_on("be_server_timeout", NULL), "<none>");
	assert_string_equal(ev_on("proc", NULL), "int:1");
}

/* Rates (on a loop whose cached time stands still) and capacities. */
static void test_fetch_rates(void **state)
{
	struct ev_loop *loop = ev_loop_new(0), *old = global.loop;
	struct proxy *fe, *be, *other;
	struct server *s1, *s2;

	setup_stream();
	global.loop = loop;
	fe = strm.fe;
	be = strm.be;
	other = proxy_find("other", PR_CAP_BE);
	s1 = be->servers;
	s2 = s1->next;
	EV("fe_sess_rate", "int:0");
	fe->fe_counters.sess_rate = (struct freq_ctr){ .sec = tick_sec(), .curr = 7 };
	fe->fe_counters.req_rate = (struct freq_ctr){ .sec = tick_sec(), .curr = 9 };
	other->be_counters.sess_rate = (struct freq_ctr){ .sec = tick_sec(), .curr = 3 };
	s2->counters.sess_rate = (struct freq_ctr){ .sec = tick_sec(), .curr = 4 };
	EV("fe_sess_rate", "int:7");
	EV("fe_sess_rate(fe)", "int:7");
	EV("fe_req_rate", "int:9");
	EV("be_sess_rate", "int:0");
	EV("be_sess_rate(other)", "int:3");
	EV("srv_sess_rate(be/s2)", "int:4");
	EV("srv_sess_rate(s2)", "int:4");      /* in the stream's backend */
	EV("srv_sess_rate(nosuch)", "<none>");
	/* s1 has no maxconn: unlimited. */
	EV("be_conn_free", "int:-1");
	EV("srv_conn_free(s1)", "int:-1");
	s2->counters.cur_sess = 3;
	EV("srv_conn_free(be/s2)", "int:7");
	s1->maxconn = 5;
	EV("be_conn_free", "int:12");
	EV("be_conn_free(other)", "int:-1");
	s2->nbpend = 2;
	EV("srv_queue(s2)", "int:2");
	EV("srv_queue(be/s1)", "int:0");
	EV("srv_is_up(s1)", "bool:1");
	s1->flags |= SRV_F_MAINT;
	EV("srv_is_up(s1)", "bool:0");
	EV("be_conn_free", "int:7");           /* s1 is not usable */
	s1->flags &= ~SRV_F_MAINT;
	EV("srv_iweight(s1)", "int:1");
	EV("srv_uweight(s1)", "int:1");
	s1->eweight = 1 * SRV_EW_SCALE;
	EV("srv_weight(s1)", "int:1");
	s1->uweight = 0;
	s1->eweight = 0;
	EV("srv_uweight(s1)", "int:0");
	EV("srv_weight(s1)", "int:0");
	EV("srv_iweight(s1)", "int:1");
	global.loop = old;
	ev_loop_destroy(loop);
}

/* The sockets' own addresses on a real loopback connection, the
 * listener's fetches, and whether addresses are the host's. */
static void test_fetch_conn(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int lfd, cfd, sfd;
	char want[64];
	struct listener li = { .id = 5, .nbconn = 3 };
	struct bind_conf bc = { .name = "web" };

	setup_stream();
	EV("fc_src", "<none>");         /* no socket */
	EV("bc_dst_port", "<none>");    /* no server connection */
	EV("src_is_local", "bool:0");   /* 192.0.2.7 */
	EV("dst_is_local", "bool:0");
	EV("dst_conn", "<none>");
	EV("fc_rcvd_proxy", "bool:0");
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &l), 0);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	sfd = accept(lfd, NULL, NULL);
	assert_true(sfd >= 0);
	strm.cli.fd = sfd;   /* the client side: accepted */
	strm.srv.fd = cfd;   /* the server side: connected */
	EV("fc_src", "ipv4:127.0.0.1");
	EV("fc_dst", "ipv4:127.0.0.1");
	snprintf(want, sizeof(want), "int:%d", ntohs(a.sin_port));
	EV("fc_dst_port", want);
	EV("bc_dst_port", want);
	EV("bc_dst", "ipv4:127.0.0.1");
	EV("bc_src", "ipv4:127.0.0.1");
	{
		char fcsp[32];

		snprintf(fcsp, sizeof(fcsp), "%s", ev("fc_src_port"));
		assert_string_equal(fcsp, ev("bc_src_port"));
		assert_string_not_equal(fcsp, want);
	}
	EV("src", "ipv4:192.0.2.7");    /* unchanged: as a PROXY header said */
	EV("fc_src_is_local", "bool:1");
	EV("fc_dst_is_local", "bool:1");
	((struct sockaddr_in *)strm.dst)->sin_addr.s_addr = htonl(0x7f000002);
	EV("dst_is_local", "bool:1");   /* all of 127/8 */
	strm.li = &li;
	EV("dst_conn", "int:3");
	EV("so_id", "int:5");
	EV("so_name", "<none>");
	li.bc = &bc;
	EV("so_name", "str:web");
	EV("fc_rcvd_proxy", "bool:0");
	li.flags |= LI_F_ACCEPT_PROXY;
	EV("fc_rcvd_proxy", "bool:1");
	strm.li = NULL;
	strm.cli.fd = strm.srv.fd = -1;
	close(sfd);
	close(cfd);
	close(lfd);
}

static void test_fetch_args_resolved(void **state)
{
	EXPECT_ERRORS(parse("backend b1\n server s 127.0.0.1:1\n"), 0);
	{
		struct smp_expr e1, e2;
		char *err = NULL;

		assert_int_equal(smp_expr_parse("be_conn(nosuch)", &e1, NULL, &err), 0);
		assert_int_equal(smp_expr_parse("srv_conn(b1/s)", &e2, NULL, &err), 0);
		EXPECT_ERRORS(postparse(), 1);
		expect_msg("sample fetch 'be_conn(nosuch)': no such backend 'nosuch'");
		assert_non_null(e2.args[0].ptr);
		smp_expr_free(&e1);
		smp_expr_free(&e2);
	}
}

static void test_fetch_http_req(void **state)
{
	setup_stream();
	EV("method", "str:GET");
	EV("path", "str:/a/b.html");
	EV("pathq", "str:/a/b.html?x=1&y=two&z");
	EV("query", "str:x=1&y=two&z");
	EV("url", "str:/a/b.html?x=1&y=two&z");
	EV("url_param(y)", "str:two");
	EV("url_param(z)", "str:");
	EV("url_param(w)", "<none>");
	EV("base", "str:www.Example.com/a/b.html");
	EV("req.ver", "str:1.1");
	EV("hdr(host)", "str:www.Example.com");
	EV("hdr(HOST)", "str:www.Example.com");
	EV("hdr(accept)", "str:image/png");         /* the last one */
	EV("hdr(accept,1)", "str:text/html");
	EV("hdr(accept,2)", "str:text/plain");
	EV("hdr(accept,-2)", "str:*/*");
	EV("hdr(accept,5)", "<none>");
	EV("fhdr(accept,1)", "str:text/html, text/plain , */*");
	EV("req.fhdr(accept)", "str:image/png");
	EV("hdr_cnt(accept)", "int:4");
	EV("fhdr_cnt(accept)", "int:2");
	EV("hdr_cnt(nope)", "int:0");
	EV("hdr_val(x-num)", "int:42");
	EV("hdr_ip(x-fwd)", "ipv4:10.1.2.3");
	EV("hdr(nope)", "<none>");
	EV("cook(a)", "str:2");
	EV("req.cook(b)", "str:3");
	EV("cook(sid)", "str:abc");
	EV("cook(none)", "<none>");
	EV("cook_cnt(a)", "int:2");
	EV("req.proto_http", "bool:1");
	assert_true(strstr(ev("req.hdrs"), "Host: www.Example.com\r\nAccept: text/html") != NULL);
	/* Absolute-form URI. */
	msg_load("GET http://h.example/p/q?r=1 HTTP/1.1\r\nHost: h.example\r\n\r\n");
	EV("path", "str:/p/q");
	EV("url", "str:http://h.example/p/q?r=1");
	EV("query", "str:r=1");
	/* Iteration over occurrences, as ACLs do. */
	msg_load("GET / HTTP/1.1\r\nHost: h\r\nX: a, b\r\nX: c\r\n\r\n");
	{
		struct smp_expr e;
		struct sample smp = { .iterate = 1 };
		char *err = NULL, got[64] = "";

		assert_int_equal(smp_expr_parse("hdr(x)", &e, NULL, &err), 0);
		do {
			assert_int_equal(smp_expr_eval(&e, &strm, &smp), 1);
			strncat(got, smp.u.str.p, smp.u.str.len);
			strcat(got, "|");
		} while (smp.flags & SMP_F_NOT_LAST);
		assert_string_equal(got, "a|b|c|");
		smp_expr_free(&e);
	}
	/* No head published: no HTTP sample. */
	strm.txn->req_head = NULL;
	EV("path", "<none>");
	EV("req.proto_http", "bool:0");
}

/* meth, baseq, url32, captures of the start lines, header names, the
 * response's full-field count, the bearer token. */
static void test_fetch_http_l7(void **state)
{
	const char *url = "www.Example.com/a/b.html?x=1&y=two&z";
	char want[64];

	setup_stream();
	EV("meth", "str:GET");
	EV("baseq", "str:www.Example.com/a/b.html?x=1&y=two&z");
	snprintf(want, sizeof(want), "int:%u",
		 (unsigned)(uint32_t)lb_hash(LB_H_SDBM, 1, url, strlen(url)));
	EV("url32", want);
	snprintf(want, sizeof(want), "str:%08X", (unsigned)atol(ev("url32") + 4));
	strcat(want, "C0000207");    /* 192.0.2.7 */
	EV("url32+src,hex", want);
	EV("capture.req.method", "str:GET");
	EV("capture.req.uri", "str:/a/b.html?x=1&y=two&z");
	EV("capture.req.ver", "str:HTTP/1.1");
	EV("capture.res.ver", "str:HTTP/1.1");
	EV("req.hdr_names", "str:Host,Accept,Accept,Cookie,Cookie,X-Fwd,Content-Length,X-Num");
	EV("req.hdr_names(;x)", "str:Host;Accept;Accept;Cookie;Cookie;X-Fwd;Content-Length;X-Num");
	EV("res.hdr_names( )", "str:Location Set-Cookie Set-Cookie X-A");
	EV("res.fhdr_cnt(x-a)", "int:1");
	EV("res.hdr_cnt(x-a)", "int:2");
	EV("res.fhdr_cnt(set-cookie)", "int:2");
	EV("res.fhdr_cnt", "int:4");
	EV("res.fhdr_cnt(nope)", "int:0");
	EV("http_auth_bearer", "<none>");
	msg_load("GET /x HTTP/1.0\r\nHost: h\r\nAuthorization: bearer  abc.def.ghi \r\n"
		 "X-Tok: Bearer t2\r\nX-Basic: Basic dTpw\r\n\r\n");
	EV("http_auth_bearer", "str:abc.def.ghi");
	EV("http_auth_bearer(x-tok)", "str:t2");
	EV("http_auth_bearer(X-Basic)", "<none>");
	EV("capture.req.ver", "str:HTTP/1.0");
	EV("baseq", "str:h/x");
	/* No head: no value. */
	strm.txn->req_head = NULL;
	EV("meth", "<none>");
	EV("req.hdr_names", "<none>");
	EV("url32", "<none>");
}

/* base32 and the hashes agree with HAProxy 2.6 (values read from it). */
static void test_fetch_http_ext(void **state)
{
	setup_stream();
	EV("base32", "int:965125547");
	EV("base32+src,hex", "str:3986A5ABC0000207");
	EV("base,sdbm(1)", "int:965125547");
	EV("str(abc),wt6", "int:2483038440");
	EV("req.cook_val(a)", "int:2");
	EV("cook_val(sid)", "<none>");
	EV("urlp_val(x)", "int:1");
	EV("url_port", "<none>");
	EV("url_ip", "<none>");
	EV("http_first_req", "bool:1");
	EV("capture.req.hdr(0)", "<none>");
	EV("unique-id", "<none>");
	EV("res.ver", "str:1.1");
	EV("res.cook_cnt(s)", "int:1");
	EV("res.cook_val(s)", "<none>");
	EV("avg_queue", "int:0");
}

static void test_fetch_http_res(void **state)
{
	setup_stream();
	EV("status", "int:302");
	EV("res.hdr(location)", "str:/x");
	EV("res.hdr(x-a)", "str:2");
	EV("res.hdr(x-a,1)", "str:1");
	EV("res.fhdr(x-a)", "str:1, 2");
	EV("res.hdr_cnt(set-cookie)", "int:2");
	EV("res.cook(s)", "str:v1");
	EV("res.cook(t)", "str:v2");
	EV("res.cook(Path)", "<none>");
	strm.txn->res_head = NULL;
	EV("status", "<none>");
	strm.txn->status = 404;
	EV("status", "int:404");
}

static void test_converters(void **state)
{
	setup_stream();
	EV("hdr(host),lower", "str:www.example.com");
	EV("hdr(host),upper", "str:WWW.EXAMPLE.COM");
	EV("hdr(host),length", "int:15");
	EV("str(abcdef),bytes(2)", "bin:cdef");
	EV("str(abcdef),bytes(2,3)", "bin:cde");
	EV("str(abcdef),bytes(9)", "bin:");
	EV("str(a.b.c.d),field(2,.)", "str:b");
	EV("str(a.b.c.d),field(-1,.)", "str:d");
	EV("str(a.b.c.d),field(2,.,2)", "str:b.c");
	EV("str(a.b.c.d),field(2,.,0)", "str:b.c.d");
	EV("str(a..b),field(2,.)", "str:");
	EV("str(a..b),word(2,.)", "str:b");
	EV("str(/x/y/z),word(1,/)", "str:x");
	EV("str(AZ),hex", "str:415A");
	EV("str(hello),base64", "str:aGVsbG8=");
	EV("str(hi),base64", "str:aGk=");
	EV("str(aGVsbG8=),b64dec", "bin:hello");
	EV("str(aGk=),b64dec", "bin:hi");
	EV("str(abc),b64dec", "<none>");
	EV("str(a%20b+c),url_dec", "str:a b+c");
	EV("str(a%20b+c),url_dec(1)", "str:a b c");
	EV("str(a%2),url_dec", "<none>");
	EV("src,ipmask(24)", "ipv4:192.0.2.0");
	EV("src,ipmask(255.255.0.0)", "ipv4:192.0.0.0");
	EV("ipv6(2001:db8::1),ipmask(24,64)", "ipv6:2001:db8::");
	EV("int(7),add(3)", "int:10");
	EV("int(7),sub(10)", "int:-3");
	EV("int(7),mul(-2)", "int:-14");
	EV("int(7),div(2)", "int:3");
	EV("int(7),div(0)", "int:9223372036854775807");
	EV("int(7),mod(4)", "int:3");
	EV("int(7),mod(0)", "int:0");
	EV("int(7),neg", "int:-7");
	EV("int(12),and(10)", "int:8");
	EV("int(12),or(3)", "int:15");
	EV("int(12),xor(4)", "int:8");
	EV("str(b),concat(a,,c)", "str:abc");
	EV("str(b),concat(<)", "str:<b");
	EV("str(a),sdbm", "int:97");
	EV("str(a),djb2", "int:177670");
	EV("str(123456789),crc32", "int:3421780262");
	assert_string_not_equal(ev("str(a),djb2(1)"), "int:177670");
	/* Casts on the way. */
	EV("str(12),add(1)", "int:13");
	EV("str(x12),add(1)", "<none>");
	EV("int(5),lower", "str:5");
	EV("src,lower", "str:192.0.2.7");
	EV("str(10.0.0.9),ipmask(8)", "ipv4:10.0.0.0");
	EV("hdr_val(x-num),mul(2),length", "int:2");
}

/* Converters of conv_text.c, conv_crypto.c, the encodings and bit
 * operations of conv.c and secure_memcmp. */
static void test_converters_ext(void **state)
{
	setup_stream();
	EV("str(abc),sha1,hex", "str:A9993E364706816ABA3E25717850C26C9CD0D89D");
	EV("str(abc),sha2,hex",
	   "str:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
	EV("str(abc),sha2(512),bytes(0,8),hex", "str:DDAF35A193617ABA");
	EV("str(abc),sha2(100)", "<error: converter 'sha2': unsupported number of bits 100 "
	   "(expects 224, 256, 384 or 512)>");
	EV("str(abc),digest(md5),hex", "str:900150983CD24FB0D6963F7D28E17F72");
	EV("str(abc),digest(nope)", "<error: converter 'digest': unknown digest algorithm 'nope'>");
	EV("str(abc),hmac(sha256,a2V5),hex",
	   "str:9C196E32DC0175F86F4B1CB89289D6619DE6BEE699E4C378E68309ED97A1A6AB");
	EV("str(abc),hmac(sha256,a2V)", "<error: converter 'hmac': the hmac key must be a "
	   "non-empty base64 string or a variable name (got 'a2V')>");
	EV("str(+_8_),ub64dec,ub64enc", "<none>");
	EV("str(-_8_),ub64dec,hex", "str:FBFF3F");
	EV("str(-_8_),ub64dec,base64", "str:+/8/");
	EV("str(hi),ub64enc", "str:aGk");
	EV("str(aGk),ub64dec", "bin:hi");
	EV("str(a),ub64dec", "<none>");
	EV("str(2a),hex2i", "int:42");
	EV("str(fffffffffffffffe),hex2i", "int:-2");
	EV("str(2g),hex2i", "int:0");
	EV("int(3),bool", "bool:1");
	EV("int(0),not", "bool:1");
	EV("int(0),cpl", "int:-1");
	EV("int(1),iif(yes,no)", "str:yes");
	EV("int(0),iif(yes,no)", "str:no");
	EV("str(xxaxx),ltrim(x)", "str:axx");
	EV("str(xxaxx),rtrim(x)", "str:xxa");
	EV("str(a b/é~),url_enc", "str:a%20b%2F%C3%A9~");
	EV("str(a\\\"b),json", "str:a\\\"b");
	EV("str('a,(b)'),upper", "str:A,(B)");
	EV("str(a/é),json(utf8)", "str:a\\/\\u00e9");
	EV("str(a/é),json", "str:a\\/\\u00c3\\u00a9");
	EV("str(\xff),json(utf8)", "<none>");
	EV("str(x\xffy),json(utf8s)", "str:xy");
	EV("str(\xf0\x9f\x98\x80),json(utf8)", "str:\\ud83d\\ude00");
	EV("int(1795000000),http_date", "str:Wed, 18 Nov 2026 11:06:40 GMT");
	EV("int(1795000000000),http_date(60,ms)", "str:Wed, 18 Nov 2026 11:07:40 GMT");
	EV("int(1795000000),utime(%Y-%m-%d %H:%M:%S,1)", "str:2026-11-18 11:06:41");
	EV("str(a.b.c),regsub([.],-)", "str:a-b.c");
	EV("str(a.b.c),regsub([.],-,g)", "str:a-b-c");
	EV("str(Host:ABC),regsub('^host:(.*)$','<\\1>',i)", "str:<ABC>");
	EV("str(abc),regsub(x*,-,g)", "str:-a-b-c-");
	EV("str(abc),regsub((,x)", "<error: converter 'regsub': invalid regex '(' at offset 1: "
	   "missing closing parenthesis>");
	EV("str(abc),regsub(a,b,z)", "<error: converter 'regsub': unknown regsub flag 'z' "
	   "(expects 'i' or 'g')>");
	EV("str(a),wt6", "int:1900802597");
	assert_string_not_equal(ev("str(b),wt6"), "int:1900802597");
	EV("str(abc),set-var(txn.k),secure_memcmp(txn.k)", "bool:1");
	EV("str(abd),secure_memcmp(txn.k)", "bool:0");
	EV("str(abd),secure_memcmp(txn.unset)", "bool:0");
}

static void test_casts(void **state)
{
	struct sample s;

	s = (struct sample){ .type = SMP_T_SINT, .u.sint = 5 };
	assert_int_equal(smp_cast(&s, SMP_T_BOOL), 1);
	assert_int_equal(s.u.sint, 1);
	s = (struct sample){ .type = SMP_T_STR, .u.str = { "-17abc", 6 } };
	assert_int_equal(smp_cast(&s, SMP_T_SINT), 1);
	assert_int_equal(s.u.sint, -17);
	s = (struct sample){ .type = SMP_T_STR, .u.str = { "::ffff:1.2.3.4", 14 } };
	assert_int_equal(smp_cast(&s, SMP_T_IPV4), 1);
	assert_int_equal(s.type, SMP_T_IPV4);
	s = (struct sample){ .type = SMP_T_STR, .u.str = { "1.2.3.4", 7 } };
	assert_int_equal(smp_cast(&s, SMP_T_IPV6), 1);
	assert_int_equal(s.type, SMP_T_IPV6);
	assert_true(IN6_IS_ADDR_V4MAPPED(&s.u.ipv6));
	s = (struct sample){ .type = SMP_T_STR, .u.str = { "2001:db8::1", 11 } };
	assert_int_equal(smp_cast(&s, SMP_T_IPV4), 0);
	s = (struct sample){ .type = SMP_T_SINT, .u.sint = 0x0a000001 };
	assert_int_equal(smp_cast(&s, SMP_T_IPV4), 1);
	assert_int_equal(ntohl(s.u.ipv4.s_addr), 0x0a000001);
	s = (struct sample){ .type = SMP_T_BOOL, .u.sint = 1 };
	assert_int_equal(smp_cast(&s, SMP_T_IPV4), 0);
	assert_int_equal(smp_can_cast(SMP_T_BOOL, SMP_T_ADDR), 0);
	assert_int_equal(smp_can_cast(SMP_T_ADDR, SMP_T_STR), 1);
	assert_int_equal(smp_can_cast(SMP_T_IPV4, SMP_T_SINT), 0);
	assert_string_equal(smp_type_name(SMP_T_IPV6), "ipv6");
	/* made binary as HAProxy does: 8 bytes big-endian, an address' bytes */
	s = (struct sample){ .type = SMP_T_SINT, .u.sint = 0x0102 };
	assert_int_equal(smp_cast(&s, SMP_T_BIN), 1);
	assert_int_equal(s.u.str.len, 8);
	assert_memory_equal(s.u.str.p, "\0\0\0\0\0\0\x01\x02", 8);
	s = (struct sample){ .type = SMP_T_STR, .u.str = { "::1", 3 } };
	assert_int_equal(smp_cast(&s, SMP_T_IPV6), 1);
	assert_int_equal(smp_cast(&s, SMP_T_BIN), 1);
	assert_int_equal(s.u.str.len, 16);
	assert_memory_equal(s.u.str.p, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	s = (struct sample){ .type = SMP_T_SINT, .u.sint = -3 };
	assert_int_equal(smp_cast(&s, SMP_T_STR), 1);
	assert_int_equal(s.u.str.len, 2);
	assert_memory_equal(s.u.str.p, "-3", 2);
	EV("int(1),hex", "str:0000000000000001");
	EV("ipv4(127.0.0.1),hex", "str:7F000001");
}

static void test_logformat(void **state)
{
	struct lf_expr e;
	struct lf_ctx c = { 0 };
	char out[512], *err = NULL;

	setup_stream();
	assert_int_equal(lf_compile("%[path] %[hdr(host),lower] %{+Q}[cook(sid)] "
				    "%[res.hdr(nope)] %{+Q}[hdr(nope)] %[src_port,add(1)] "
				    "%[str(k)]%[int(3)]", &e, &err), 0);
	c.strm = &strm;
	c.log = 1;
	lf_render(&e, &c, out, sizeof(out));
	assert_string_equal(out, "/a/b.html www.example.com \"abc\" - \"\" 40001 k3");
	/* Without a stream: constants only. */
	c.strm = NULL;
	lf_render(&e, &c, out, sizeof(out));
	assert_string_equal(out, "- - \"\" - \"\" - k3");
	/* Outside a log line (a header value...), a missing sample is empty. */
	c.strm = &strm;
	c.log = 0;
	lf_render(&e, &c, out, sizeof(out));
	assert_string_equal(out, "/a/b.html www.example.com \"abc\"  \"\" 40001 k3");
	lf_free(&e);
	assert_int_equal(lf_compile("x %[path,nope]", &e, &err), -1);
	if (!strstr(err, "sample expression '%[path,nope]' at column 3: unknown converter 'nope'"))
		fail_msg("%s", err);
	free(err);
	assert_int_equal(lf_compile("%[path x]", &e, &err), -1);
	assert_non_null(strstr(err, "unexpected ' x'"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_parse_errors, reset),
		cmocka_unit_test_teardown(test_fetch_l4, reset),
		cmocka_unit_test_teardown(test_fetch_state, reset),
		cmocka_unit_test_teardown(test_fetch_rates, reset),
		cmocka_unit_test_teardown(test_fetch_conn, reset),
		cmocka_unit_test_teardown(test_fetch_args_resolved, reset),
		cmocka_unit_test_teardown(test_fetch_http_req, reset),
		cmocka_unit_test_teardown(test_fetch_http_res, reset),
		cmocka_unit_test_teardown(test_fetch_http_ext, reset),
		cmocka_unit_test_teardown(test_fetch_http_l7, reset),
		cmocka_unit_test_teardown(test_converters, reset),
		cmocka_unit_test_teardown(test_converters_ext, reset),
		cmocka_unit_test_teardown(test_casts, reset),
		cmocka_unit_test_teardown(test_logformat, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
