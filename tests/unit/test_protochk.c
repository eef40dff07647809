/* Unit tests for the protocol checks (protochk.c: ssl-hello-chk, smtpchk,
 * mysql-check, pgsql-check, ldap-check) and the tcp-check rules around
 * them (tcpcheck.c): options, error messages, the bytes sent, defaults
 * inheritance. */
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
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/tcpcheck.h>

#include "cfg_capture.h"
#include "check_harness.h"

/* ---- protocol checks ---- */

static void test_ssl_hello(void **state)
{
	const struct tcpchk_rule *r;
	const unsigned char *p;

	LOAD(DEFAULTS "backend b\n  option ssl-hello-chk\n", 0);
	r = rule_at("b", 0);
	assert_int_equal(r->type, TCPCHK_SEND);
	p = (const unsigned char *)r->data;
	/* A TLS handshake record holding a ClientHello of the right length. */
	assert_true(r->len > 9);
	assert_int_equal(p[0], 0x16);
	assert_int_equal(p[1], 0x03);
	assert_int_equal((size_t)(p[3] << 8 | p[4]) + 5, r->len);
	assert_int_equal(p[5], 0x01);
	assert_int_equal((size_t)(p[6] << 16 | p[7] << 8 | p[8]) + 9, r->len);
	r = rule_at("b", 1);
	assert_int_equal(r->match, TCPCHK_M_PROTO);
	assert_int_equal(r->ok_res, CHK_R_L6OK);
	assert_null(r->next);
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  option ssl-hello-chk now\n", 1);
	expect_msg("'option ssl-hello-chk' in backend section: takes no argument (got 'now')");
}

static void test_smtpchk(void **state)
{
	LOAD(DEFAULTS "backend b1\n  option smtpchk\n"
	     "backend b2\n  option smtpchk EHLO mx.example.org\n"
	     "backend b3\n  option smtpchk FOO example.org\n", 0);
	/* greeting, hello, its reply, QUIT, its reply */
	assert_int_equal(count_rules("b1"), 5);
	assert_int_equal(rule_at("b1", 0)->type, TCPCHK_EXPECT);
	expect_send("b1", 1, "HELO localhost\r\n");
	expect_send("b1", 3, "QUIT\r\n");
	expect_send("b2", 1, "EHLO mx.example.org\r\n");
	/* Anything but EHLO means HELO, as in HAProxy. */
	expect_send("b3", 1, "HELO example.org\r\n");
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  option smtpchk EHLO a.org more\n", 1);
	expect_msg("'option smtpchk' in backend section: cannot handle unexpected argument 'more' "
		   "(expects [HELO|EHLO <domain>])");
}

static void test_pgsql_check(void **state)
{
	static const unsigned char startup[] = {
		0, 0, 0, 20, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0, 'a', 'l', 'i', 'c', 'e', 0, 0,
	};
	const struct tcpchk_rule *r;

	LOAD(DEFAULTS "backend b\n  option pgsql-check user alice\n", 0);
	r = rule_at("b", 0);
	assert_int_equal(r->len, sizeof(startup));
	assert_memory_equal(r->data, startup, sizeof(startup));
	assert_string_equal(rule_at("b", 1)->ok_info, "PostgreSQL server is ok");
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  option pgsql-check\n", 1);
	expect_msg("'option pgsql-check' in backend section: expects user <name>");
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  option pgsql-check user a b\n", 1);
	expect_msg("cannot handle unexpected argument 'b' (expects user <name>)");
}

static void test_mysql_check(void **state)
{
	const struct tcpchk_rule *r;
	const unsigned char *p;

	LOAD(DEFAULTS "backend b1\n  option mysql-check\n"
	     "backend b2\n  option mysql-check user bob\n"
	     "backend b3\n  option mysql-check user bob pre-41\n", 0);
	/* Without a user, the greeting is all that is read. */
	assert_int_equal(count_rules("b1"), 1);
	assert_int_equal(count_rules("b2"), 3);
	r = rule_at("b2", 1);
	p = (const unsigned char *)r->data;
	/* login packet (sequence 1) with the user name, then COM_QUIT */
	assert_int_equal(p[3], 1);
	assert_int_equal((size_t)p[0] + 4 + 5, r->len);
	assert_non_null(memmem(r->data, r->len, "bob\0", 4));
	assert_memory_equal(r->data + r->len - 5, "\x01\x00\x00\x00\x01", 5);
	r = rule_at("b3", 1);
	assert_true(r->len < rule_at("b2", 1)->len);   /* the old, shorter login */
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  option mysql-check user\n", 1);
	expect_msg("'option mysql-check' in backend section: expects [user <name> "
		   "[post-41|pre-41]]");
	reset(NULL);
	LOAD(DEFAULTS "backend b\n  option mysql-check user bob post-42\n", 1);
	expect_msg("expects [user <name> [post-41|pre-41]]");
}

static void test_ldap_check(void **state)
{
	static const unsigned char bind[] = {
		0x30, 0x0c, 0x02, 0x01, 0x01, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00,
	};

	LOAD(DEFAULTS "backend b\n  option ldap-check\n", 0);
	assert_int_equal(rule_at("b", 0)->len, sizeof(bind));
	assert_memory_equal(rule_at("b", 0)->data, bind, sizeof(bind));
}

/* ---- tcp-check rules around them ---- */

static void test_last_one_wins(void **state)
{
	LOAD(DEFAULTS "backend b1\n  option ldap-check\n  option httpchk\n"
	     "backend b2\n  option httpchk\n  option smtpchk\n"
	     "backend b3\n  option smtpchk\n  option redis-check\n", 0);
	assert_true(rule_at("b1", 0)->flags & TCPCHK_F_HTTP);
	assert_false(rule_at("b2", 0)->flags & TCPCHK_F_HTTP);
	assert_int_equal(rule_at("b2", 0)->match, TCPCHK_M_PROTO);
	expect_send("b3", 0, "PING\r\n");
	assert_string_equal(rule_at("b3", 1)->ok_info, "Redis server is ok");
}

static void test_defaults(void **state)
{
	LOAD(DEFAULTS "  option pgsql-check user app\n"
	     "backend b1\n"
	     "backend b2\n  tcp-check send PING\\r\\n\n  tcp-check expect string +PONG\n"
	     "backend b3\n  option ssl-hello-chk\n", 0);
	/* A copy of the defaults' rules... */
	assert_int_equal(count_rules("b1"), 2);
	assert_int_equal(rule_at("b1", 0)->len, 18);   /* StartupMessage for "app" */
	/* ...replaced by rules of its own. */
	expect_send("b2", 0, "PING\r\n");
	assert_int_equal(count_rules("b2"), 2);
	assert_int_equal(rule_at("b3", 1)->ok_res, CHK_R_L6OK);
	expect_no_msg("not used");
}

static void test_tcp_check_comments(void **state)
{
	int dynamic;

	LOAD(DEFAULTS "backend b\n  option tcp-check\n  tcp-check comment \"say hi\"\n"
	     "  tcp-check connect port 6379\n  tcp-check send PING\\r\\n\n", 0);
	assert_string_equal(rule_at("b", 1)->comment, "say hi");
	assert_int_equal(tcpchk_connect_port(proxy_find("b", PR_CAP_BE), &dynamic), 6379);
	assert_null(rule_at("b", 2)->comment);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ssl_hello, reset),
		cmocka_unit_test_teardown(test_smtpchk, reset),
		cmocka_unit_test_teardown(test_pgsql_check, reset),
		cmocka_unit_test_teardown(test_mysql_check, reset),
		cmocka_unit_test_teardown(test_ldap_check, reset),
		cmocka_unit_test_teardown(test_last_one_wins, reset),
		cmocka_unit_test_teardown(test_defaults, reset),
		cmocka_unit_test_teardown(test_tcp_check_comments, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
