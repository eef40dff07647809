/* Unit tests for the forms of HAProxy's language that 2.6 itself refuses or
 * only warns about (removed keywords, nbproc, bind-process), the rules 2.6
 * puts on defaults sections, and max-spread-checks, each checked by its
 * effect: the error or warning given, or the timers armed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ev.h>

#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>

#include "cfg_capture.h"

static int reset(void **state)
{
	proxy_free_all();
	log_list_free(&global.loggers);
	restore_global();
	return 0;
}

#define TIMEOUTS " timeout client 1s\n timeout server 1s\n timeout connect 1s\n"

/* Keywords HAProxy removed: one error each, naming what replaces them, and
 * never offered as a suggestion. */
static void test_removed_keywords(void **state)
{
	PARSE_ERRORS("listen x\n mode http\n bind 127.0.0.1:8001\n"
		     " reqadd X-A:\\ b\n rspdel ^Server\n block if TRUE\n clitimeout 5s\n"
		     " srvtimeout 5s\n contimeout 5s\n option forceclose\n no option forceclose\n"
		     " option http-tunnel\n option http_proxy\n monitor-net 10.0.0.0/8\n"
		     " redispatch\n appsession x len 1 timeout 1s\n", 13);
	expect_msg("t.cfg:4: 'reqadd' in listen section: removed from HAProxy (2.6 refuses it "
		   "too): gone since 2.1, use 'http-request add-header' instead");
	expect_msg("t.cfg:5: 'rspdel' in listen section: removed from HAProxy");
	expect_msg("'http-response del-header'");
	expect_msg("t.cfg:6: 'block' in listen section");
	expect_msg("'http-request deny' (same condition)");
	expect_msg("t.cfg:7: 'clitimeout' in listen section: removed from HAProxy (2.6 refuses "
		   "it too): gone since 2.1, use 'timeout client' instead");
	expect_msg("'timeout server'");
	expect_msg("'timeout connect'");
	expect_msg("t.cfg:10: 'option forceclose' in listen section: removed from HAProxy");
	expect_msg("t.cfg:11: 'option forceclose'");
	expect_msg("'option httpclose' if really needed");
	expect_msg("t.cfg:12: 'option http-tunnel'");
	expect_msg("t.cfg:13: 'option http_proxy'");
	expect_msg("t.cfg:14: 'monitor-net'");
	expect_msg("t.cfg:15: 'redispatch' in listen section: removed from HAProxy (2.6 refuses "
		   "it too): gone since 2.1, use 'option redispatch' instead");
	expect_msg("t.cfg:16: 'appsession'");
	PARSE_FRESH("global\n    tune.chksize 32768\n", 1);
	expect_msg("'tune.chksize' in global section: removed from HAProxy");
	/* a typo is never pointed at a removed keyword */
	assert_null(cfg_suggest(CFG_SEC_LISTEN, "reqadd"));
	assert_true(!cfg_suggest(CFG_SEC_LISTEN, "clitimeou") ||
		    strcmp(cfg_suggest(CFG_SEC_LISTEN, "clitimeou"), "clitimeout") != 0);
	assert_string_equal(cfg_suggest(CFG_SEC_LISTEN, "option httpclos"), "option httpclose");
	/* the parser's own notion of the timeouts is untouched */
	PARSE_FRESH("defaults\n mode tcp\n" TIMEOUTS, 0);
	assert_int_equal(global.defaults->timeout.client, 1000);
}

/* Keywords sending connections to an address that is no server line:
 * "transparent" is "option transparent", "no option" takes it back;
 * dispatch wants a port; neither belongs to a frontend. */
static void test_not_server_addresses(void **state)
{
	struct proxy *px;

	PARSE_ERRORS("backend b\n transparent\n dispatch 127.0.0.1:80\n"
		     "backend c\n option transparent\n no option transparent\n", 0);
	px = proxy_find("b", PR_CAP_BE);
	assert_non_null(px);
	assert_true(px->options & PR_O_TRANSP);
	assert_string_equal(px->dispatch, "127.0.0.1:80");
	px = proxy_find("c", PR_CAP_BE);
	assert_non_null(px);
	assert_false(px->options & PR_O_TRANSP);
	PARSE_FRESH("backend b\n dispatch 127.0.0.1\n dispatch 127.0.0.1:1 x\n", 2);
	expect_msg("t.cfg:2: 'dispatch' in backend section: '127.0.0.1': missing ':<port>'");
	expect_msg("t.cfg:3: 'dispatch' in backend section: expects <address>:<port>");
	PARSE_FRESH("frontend f\n option transparent\n dispatch 127.0.0.1:80\n", 2);
	expect_msg("'option transparent' is not valid in a frontend section");
	expect_msg("'dispatch' is not valid in a frontend section");
}

/* nbproc is refused whatever its value, as in HAProxy 2.6. */
static void test_nbproc(void **state)
{
	PARSE_ERRORS("global\n    nbproc 1\n    nbproc 2\n", 2);
	expect_msg("t.cfg:2: 'nbproc' in global section: not supported any more since HAProxy "
		   "2.5 (2.6 refuses it too)");
	expect_msg("t.cfg:3: 'nbproc'");
}

/* bind-process and stats bind-process: sets of process 1 only; the proxy
 * keyword warns that it has no effect. */
static void test_bind_process(void **state)
{
	PARSE_ERRORS("global\n    stats bind-process all\n    stats bind-process odd\n"
		     "    stats bind-process 1-\n"
		     "listen x\n bind 127.0.0.1:8001\n bind-process 1\n"
		     "backend b\n bind-process even 1-1\n", 0);
	expect_msg("t.cfg:7: 'bind-process' in listen section: has no effect (one process), is "
		   "deprecated, and HAProxy 2.7 removes it");
	expect_msg("t.cfg:9: 'bind-process' in backend section: has no effect");
	expect_no_msg("t.cfg:2");
	PARSE_FRESH("global\n    stats bind-process 2\nlisten x\n bind-process 1-2\n"
		    " bind-process\n", 3);
	expect_msg("t.cfg:2: 'stats bind-process' in global section: '2' is not a valid process "
		   "set: there is only process 1");
	expect_msg("t.cfg:4: 'bind-process' in listen section: '1-2' is not a valid process set");
	expect_msg("t.cfg:5: 'bind-process' in listen section: expects a process set");
}

/* A frontend may not inherit tcp-response rules, a backend connection or
 * session rules, from a defaults section (HAProxy 2.6). */
static void test_defaults_tcp_rules(void **state)
{
	LOAD("defaults d\n mode tcp\n tcp-response content accept\n" TIMEOUTS
	     "defaults\n mode tcp\n" TIMEOUTS
	     "frontend f from d\n bind 127.0.0.1:8001\n default_backend b\n"
	     "backend b\n server s 127.0.0.1:80\n", 1);
	expect_msg("t.cfg:12: a frontend cannot inherit from a defaults section defining "
		   "'tcp-response content' rules ('d' at t.cfg:1)");
	reset(NULL);
	LOAD("defaults d\n mode tcp\n tcp-request connection accept\n" TIMEOUTS
	     "defaults\n mode tcp\n" TIMEOUTS
	     "frontend f\n bind 127.0.0.1:8001\n default_backend b\n"
	     "backend b from d\n server s 127.0.0.1:80\n", 1);
	expect_msg("t.cfg:15: a backend cannot inherit from a defaults section defining "
		   "'tcp-request connection' or 'tcp-request session' rules ('d' at t.cfg:1)");
	reset(NULL);
	LOAD("defaults d\n mode tcp\n tcp-request session accept\n" TIMEOUTS
	     "defaults\n mode tcp\n" TIMEOUTS
	     "frontend f\n bind 127.0.0.1:8001\n default_backend b\n"
	     "backend b from d\n server s 127.0.0.1:80\n", 1);
	expect_msg("'tcp-request connection' or 'tcp-request session' rules");
	/* what 2.6 allows: content rules and response rules in a backend,
	 * connection rules in a frontend */
	reset(NULL);
	LOAD("defaults d\n mode tcp\n tcp-request content accept\n tcp-response content accept\n"
	     TIMEOUTS "defaults e\n mode tcp\n tcp-request connection accept\n"
	     " tcp-request session accept\n" TIMEOUTS "defaults\n mode tcp\n" TIMEOUTS
	     "frontend f from e\n bind 127.0.0.1:8001\n default_backend b\n"
	     "backend b from d\n server s 127.0.0.1:80\n", 0);
}

/* A defaults name borne twice is ambiguous where "from" names it; one named
 * by "from" and used implicitly elsewhere gets HAProxy's warning. */
static void test_defaults_names(void **state)
{
	LOAD("defaults d\n mode http\n" TIMEOUTS "defaults d\n mode http\n" TIMEOUTS
	     "frontend f from d\n bind 127.0.0.1:8001\n default_backend b\n"
	     "backend b\n server s 127.0.0.1:80\n", 1);
	expect_msg("t.cfg:11: 'frontend' ");
	expect_msg("ambiguous defaults section name 'd': it exists at least at t.cfg:1 and "
		   "t.cfg:6");
	reset(NULL);
	LOAD("defaults d\n mode http\n" TIMEOUTS
	     "frontend f from d\n bind 127.0.0.1:8001\n default_backend b\n"
	     "backend b\n server s 127.0.0.1:80\nbackend c\n server s 127.0.0.1:80\n", 0);
	expect_msg("t.cfg:9: defaults section 'd' (t.cfg:1) is named by 'from' in another "
		   "proxy and used implicitly here");
	expect_msg("t.cfg:11: defaults section 'd'");
	expect_no_msg("t.cfg:6: defaults");
	/* a last defaults section that no "from" names: nothing to say */
	reset(NULL);
	LOAD("defaults d\n mode http\n" TIMEOUTS "defaults\n mode http\n" TIMEOUTS
	     "frontend f from d\n bind 127.0.0.1:8001\n default_backend b\n"
	     "backend b\n server s 127.0.0.1:80\n", 0);
	expect_no_msg("used implicitly");
}

/* The time left before the first check of <be>'s server <name>. */
static double first_check_in(const char *be, const char *name)
{
	struct proxy *px = proxy_find(be, PR_CAP_BE);

	assert_non_null(px);
	for (struct server *s = px->servers; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return ev_timer_remaining(global.loop, &s->check.timer);
	fail_msg("no server %s/%s", be, name);
	return -1;
}

/* The first checks of a backend are spread over one interval, bounded by
 * max-spread-checks. */
static void test_max_spread_checks(void **state)
{
	static const char *cfg =
		"defaults\n mode tcp\n" TIMEOUTS
		"backend a\n default-server check inter 60s\n"
		" server s1 127.0.0.1:1\n server s2 127.0.0.1:2\n server s3 127.0.0.1:3\n"
		"backend b\n server t1 127.0.0.1:4 check inter 1s\n"
		" server t2 127.0.0.1:5 check inter 1s\n";
	struct ev_loop *loop = ev_loop_new(EVBACKEND_POLL);
	char text[512];

	assert_non_null(loop);
	global.loop = loop;
	LOAD(cfg, 0);
	check_start_all();
	/* without it: a third of 60s apart */
	assert_true(first_check_in("a", "s1") < 1.0);
	assert_true(first_check_in("a", "s3") > 39.0);
	check_stop_all();
	reset(NULL);   /* (struct global put back: no loop) */
	global.loop = loop;

	snprintf(text, sizeof(text), "global\n    max-spread-checks 3s\n%s", cfg);
	LOAD(text, 0);
	assert_int_equal(global.max_spread_checks, 3000);
	check_start_all();
	assert_true(first_check_in("a", "s2") > 0.9 && first_check_in("a", "s2") <= 1.0);
	assert_true(first_check_in("a", "s3") > 1.9 && first_check_in("a", "s3") <= 2.0);
	/* shorter intervals than the bound are kept */
	assert_true(first_check_in("b", "t2") > 0.4 && first_check_in("b", "t2") <= 0.5);
	check_stop_all();
	ev_loop_destroy(global.loop);
	global.loop = NULL;
	PARSE_FRESH("global\n    max-spread-checks soon\n", 1);
	expect_msg("'max-spread-checks' in global section");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_removed_keywords, reset),
		cmocka_unit_test_teardown(test_nbproc, reset),
		cmocka_unit_test_teardown(test_not_server_addresses, reset),
		cmocka_unit_test_teardown(test_bind_process, reset),
		cmocka_unit_test_teardown(test_defaults_tcp_rules, reset),
		cmocka_unit_test_teardown(test_defaults_names, reset),
		cmocka_unit_test_teardown(test_max_spread_checks, reset),
	};

	return cmocka_run_group_tests(tests, capture_group_setup, NULL);
}
