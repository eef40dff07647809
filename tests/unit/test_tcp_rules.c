/* Unit tests for the TCP rules (src/rules/tcp_rules.c): configuration
 * errors naming the keyword and what was expected, the sets each action
 * belongs to, defaults inheritance, and the engine's verdicts, waits and
 * resumption on a test stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/proxy.h>
#include <sluice/stream.h>
#include <sluice/tcp_rules.h>

#include "cfg_capture.h"
#include "rules_stream.h"

static const char head[] =
	"defaults\n mode tcp\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n"
	"backend be\n server s1 127.0.0.1:8080\n"
	"frontend fe\n default_backend be\n";

static int parse_fe(const char *lines)
{
	return parse_after(head, lines);
}

static void test_errors(void **state)
{
	static const struct { const char *line; const char *msg; } cases[] = {
		{ " tcp-request content\n", "expects an action (accept, " },
		{ " tcp-request content rejct\n", "did you mean 'reject'?" },
		{ " tcp-request content nothing-like-this\n", "unknown action 'nothing-like-this'" },
		{ " tcp-request content close\n", "action 'close' is not possible in tcp-request "
		  "content rules" },
		{ " tcp-request content expect-proxy layer4\n", "action 'expect-proxy' is not "
		  "possible in tcp-request content rules" },
		{ " tcp-request connection expect-proxy\n", "action 'expect-proxy' expects 'layer4'" },
		{ " tcp-request content set-var(sess.x)\n", "expects a sample expression" },
		{ " tcp-request content set-var(x) int(1)\n", "set-var(x)" },
		{ " tcp-request content set-var(sess.x) nosuch\n", "unknown fetch" },
		{ " tcp-request content unset-var\n", "expects 'unset-var(<scope>.<name>)'" },
		{ " tcp-request content accept foo\n", "unexpected argument 'foo'" },
		{ " tcp-request content accept if nosuch\n", "no such ACL: 'nosuch'" },
		{ " tcp-request inspect-delay\n", "expects a time" },
		{ " tcp-request inspect-delay 5x\n", "'5x'" },
		{ " tcp-response content accept\n", "tcp-response content" },
		{ " tcp-request content capture src\n", "expects <sample> len <length>" },
		{ " tcp-request content capture src len 0\n", "'0' is not a valid length" },
		{ " tcp-request content capture src len 2000\n", "'2000' is not a valid length" },
		{ " tcp-request content capture nosuch len 4\n", "unknown fetch" },
		{ " tcp-request connection capture src len 4\n", "action 'capture' is not possible "
		  "in tcp-request connection rules" },
		{ " tcp-request content set-src\n", "action 'set-src' expects a sample expression" },
		{ " tcp-request content set-src-port nosuch\n", "unknown fetch" },
		{ " tcp-response content set-src src\n", "tcp-response content" },
		{ " tcp-request connection expect-netscaler-cip\n", "action 'expect-netscaler-cip' "
		  "expects 'layer4'" },
		{ " tcp-request content switch-mode tcp\n", "action 'switch-mode' expects 'http'" },
		{ " tcp-request content switch-mode http proto h3\n", "unknown protocol 'h3'" },
		{ " tcp-request session switch-mode http\n", "action 'switch-mode' is not possible in "
		  "tcp-request session rules" },
		{ " tcp-request content set-var-fmt(sess.x)\n", "expects (<scope>.<name>" },
		{ " tcp-request content set-var-fmt(sess.x) %[nosuch]\n", "invalid log-format" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int e = parse_fe(cases[i].line);

		if (e != 1)
			fail_msg("'%s': %d errors:\n%s", cases[i].line, e, errtext);
		expect_msg(cases[i].msg);
	}
	/* captures add slots to frontends; mode http has its own */
	PARSE_FRESH("backend b\n tcp-request content capture src len 4\n", 1);
	expect_msg("only possible in a frontend or listen section");
	reset(NULL);
	EXPECT_ERRORS(parse("frontend f\n mode http\n tcp-request content capture src len 4\n"), 0);
	EXPECT_ERRORS(postparse(), 1);
	expect_msg("'tcp-request content capture' is not supported in mode http");
	/* connection and session rules belong to frontends */
	PARSE_FRESH("backend b\n tcp-request connection accept\n", 1);
	PARSE_FRESH("backend b\n tcp-request session accept\n", 1);
	/* not in an anonymous defaults section */
	PARSE_FRESH("defaults\n tcp-request content accept\n", 1);
	expect_msg("not allowed in an anonymous defaults section");
	/* a named defaults section serves frontends or backends, not both */
	reset(NULL);
	EXPECT_ERRORS(parse("defaults d\n mode tcp\n tcp-request content accept\n"
			    "frontend f from d\n default_backend b\n"
			    "backend b from d\n server s 127.0.0.1:1\n"), 0);
	EXPECT_ERRORS(postparse(), 1);
	expect_msg("frontends and backends cannot inherit from the same defaults section");
}

/* The engine on the test stream, with <data> held as request data. */
static void test_engine(void **state)
{
	struct buf *b = calloc(1, sizeof(*b) + 64);
	struct proxy *fe;
	int pos = 0;

	assert_int_equal(parse_fe(" tcp-request inspect-delay 2s\n"
				  " tcp-request content set-var(sess.a) int(1)\n"
				  " tcp-request content reject if { req.payload(0,3) -m str bad }\n"
				  " tcp-request content accept if { req.len ge 4 }\n"
				  " tcp-request content silent-drop if WAIT_END\n"), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	assert_true(tcp_rules_has(fe, TCP_RS_REQ));
	assert_false(tcp_rules_has(fe, TCP_RS_CONN));
	assert_int_equal(tcp_inspect_delay(fe, TCP_RS_REQ), 2000);
	assert_int_equal(tcp_inspect_delay(fe, TCP_RS_RES), 0);
	strm_new(fe);
	strm.req.buf = b;

	/* two bytes: the payload rule waits */
	memcpy(b->area, "ba", 2);
	b->data = 2;
	assert_int_equal(tcp_rules_exec(fe, TCP_RS_REQ, &strm, &pos, 1), TCP_V_WAIT);
	assert_int_equal(pos, 1);
	assert_int_equal(strm.smp_partial, 0);
	/* resumes there: "bad" is decided */
	memcpy(b->area, "bad", 3);
	b->data = 3;
	assert_int_equal(tcp_rules_exec(fe, TCP_RS_REQ, &strm, &pos, 1), TCP_V_REJECT);

	/* "good": the payload rule fails, accept on 4 bytes */
	pos = 0;
	memcpy(b->area, "good", 4);
	b->data = 4;
	assert_int_equal(tcp_rules_exec(fe, TCP_RS_REQ, &strm, &pos, 1), TCP_V_ACCEPT);

	/* "go" at the end of the delay: the undecided rules are false, then
	 * WAIT_END holds */
	pos = 0;
	b->data = 2;
	assert_int_equal(tcp_rules_exec(fe, TCP_RS_REQ, &strm, &pos, 1), TCP_V_WAIT);
	assert_int_equal(tcp_rules_exec(fe, TCP_RS_REQ, &strm, &pos, 0), TCP_V_DROP);
	assert_true(strm.tcp_flags & STRM_F_DROP);
	strm.req.buf = NULL;
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_errors, reset),
		cmocka_unit_test_teardown(test_engine, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
