/* Unit tests for the configuration parser and keyword registry (parser.c and
 * every module's keywords): error counts and messages (read back from stderr),
 * suggestions, .if blocks, defaults inheritance, post-parse checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/cli.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/persist.h>
#include <sluice/proxy.h>
#include <sluice/server.h>

#include "cfg_capture.h"

/* ---- helpers ---- */

static int reset(void **state);

static void free_listeners(struct listener *li)
{
	struct listener *next;

	for (; li; li = next) {
		next = li->next;
		/* A bind_conf is shared by the listeners of one line, contiguous. */
		if (!next || next->bc != li->bc) {
			free(li->bc->conf_file);
			free(li->bc->name);
			free(li->bc);
		}
		free(li->addr_str);
		free(li);
	}
}

static int count_listeners(const struct listener *li)
{
	int n = 0;

	for (; li; li = li->next)
		n++;
	return n;
}

static int group_setup(void **state)
{
	pristine = global;
	return 0;
}

/* Puts the process-wide state back as it was before the test. */
static int reset(void **state)
{
	proxy_free_all();
	log_list_free(&global.loggers);
	free_listeners(global.cli_listeners);
	restore_global();
	return 0;
}

/* ---- tests ---- */

static const char valid_cfg[] =
	"# a complete configuration\n"
	"global\n"
	"    maxconn 2000\n"
	"    stats timeout 10s\n"
	"    log 127.0.0.1:514 local0\n"
	"    tune.bufsize 32k\n"
	"    nbthread 1\n"
	"\n"
	"defaults\n"
	"    mode tcp\n"
	"    log global\n"
	"    option tcplog\n"
	"    retries 2\n"
	"    timeout connect 5s\n"
	"    timeout client 30s\n"
	"    timeout server 1m\n"
	"\n"
	"frontend fe\n"
	"    bind 127.0.0.1:8000,127.0.0.1:8001 name web\n"
	"    bind :9000-9002 backlog 100\n"
	"    maxconn 500\n"
	"    default_backend be\n"
	"\n"
	"backend be\n"
	"    balance static-rr\n"
	"    server s1 127.0.0.1:9100 weight 10\n"
	"    server s2 127.0.0.1:9101 backup\n"
	"    server s3 [::1]:9102 id 7 disabled\n"
	"\n"
	"listen li\r\n"
	"    bind [::1]:7000 v6only\r\n"
	"    server local 127.0.0.1\r\n";

static void test_valid_config(void **state)
{
	struct proxy *fe, *be, *li;
	struct server *srv;

	PARSE_ERRORS(valid_cfg, 0);
	expect_no_msg("ALERT");
	assert_int_equal(global.maxconn, 2000);
	assert_int_equal(global.stats_timeout, 10000);
	assert_int_equal(global.bufsize, 32768);
	assert_non_null(global.loggers.head);
	assert_int_equal(global.loggers.head->facility, 16);

	fe = proxy_find("fe", PR_CAP_FE);
	be = proxy_find("be", PR_CAP_BE);
	li = proxy_find("li", PR_CAP_FE);
	assert_non_null(fe);
	assert_non_null(be);
	assert_non_null(li);
	assert_ptr_equal(proxy_find("li", PR_CAP_BE), li);
	assert_null(proxy_find("fe", PR_CAP_BE));
	assert_null(proxy_find("nope", PR_CAP_FE | PR_CAP_BE));
	assert_int_equal(fe->cap, PR_CAP_FE);
	assert_int_equal(be->cap, PR_CAP_BE);
	assert_int_equal(li->cap, PR_CAP_FE | PR_CAP_BE);

	/* Inherited from defaults. */
	assert_int_equal(fe->timeout.client, 30000);
	assert_int_equal(be->timeout.connect, 5000);
	assert_int_equal(be->timeout.server, 60000);
	assert_int_equal(be->retries, 2);
	assert_true(fe->options & PR_O_TCPLOG);
	assert_true(fe->loggers.use_global);
	assert_int_equal(fe->maxconn, 500);
	assert_int_equal(be->lb.algo, LB_STATIC_RR);
	assert_string_equal(fe->conf_file, "t.cfg");
	assert_int_equal(fe->conf_line, 18);

	/* Two addresses, then a range of three ports. */
	assert_int_equal(count_listeners(fe->listeners), 5);
	assert_string_equal(fe->listeners->bc->name, "web");
	assert_int_equal(fe->listeners->fd, -1); /* parsed, never bound */
	assert_int_equal(addr_get_port(&fe->listeners->next->addr), 8001);
	assert_int_equal(addr_get_port(&fe->listeners->next->next->next->next->addr), 9002);
	assert_int_equal(fe->listeners->next->next->bc->backlog, 100);
	assert_int_equal(count_listeners(li->listeners), 1);
	assert_true(li->listeners->flags & LI_F_V6ONLY);

	assert_int_equal(be->nsrv, 3);
	srv = be->servers;
	assert_string_equal(srv->name, "s1");
	assert_int_equal(srv->weight, 10);
	assert_string_equal(srv->next->name, "s2");
	assert_int_equal(srv->next->weight, 1);
	assert_true(srv->next->flags & SRV_F_BACKUP);
	assert_int_equal(srv->next->next->id, 7);
	assert_true(srv->next->next->flags & SRV_F_MAINT);
	assert_true(li->servers->flags & SRV_F_SAMEPORT);

	assert_int_equal(postparse(), 0);
	assert_ptr_equal(fe->defbe, be);
	assert_ptr_equal(li->defbe, li);     /* a listen serves its own servers */
	assert_int_equal(srv->id, 1);        /* numbered after the explicit id 7 */
	assert_int_equal(srv->next->id, 2);
	assert_true(fe->id > 0 && be->id > 0 && li->id > 0);
	assert_true(fe->id != be->id && be->id != li->id && fe->id != li->id);
	assert_int_equal(be->srv_act, 1);    /* s1 only: s2 is a backup, s3 disabled */
	assert_int_equal(be->tot_weight, 10);
}

static void test_unknown_keyword(void **state)
{
	PARSE_FRESH("defaults\n  mode tcp\n  timeot connect 5s\n", 1);
	expect_msg("t.cfg:3: unknown keyword 'timeot connect' in defaults section");
	expect_msg("did you mean 'timeout");

	/* Alone, the first word of multi-word keywords is suggested. */
	PARSE_FRESH("defaults\n  timeot\n", 1);
	expect_msg("t.cfg:2: unknown keyword 'timeot' in defaults section; did you mean 'timeout'?");

	PARSE_FRESH("frontend f\n  bnid :80\n", 1);
	expect_msg("t.cfg:2: unknown keyword 'bnid' in frontend section; did you mean 'bind'?");

	PARSE_FRESH("frontnd f\n", 1);
	expect_msg("t.cfg:1: unknown keyword 'frontnd' out of any section; did you mean 'frontend'?");

	/* Nothing close: no suggestion. */
	PARSE_FRESH("global\n  qwertyuiop 1\n", 1);
	expect_msg("t.cfg:2: unknown keyword 'qwertyuiop' in global section");
	expect_no_msg("did you mean");
}

/* Two-word keywords are suggested from both words: "timeot connect" gives
 * 'timeout connect', not the first "timeout ..." row registered. */
static void test_suggest_second_word(void **state)
{
	PARSE_ERRORS("defaults\n  timeot connect 5s\n", 1);
	expect_msg("did you mean 'timeout connect'?");
}

static void test_wrong_section(void **state)
{
	PARSE_FRESH("backend b\n  bind :80\n", 1);
	expect_msg("t.cfg:2:");
	expect_msg("is not valid in a backend section");

	PARSE_FRESH("global\n  timeout client 5s\n", 1);
	expect_msg("t.cfg:2: 'timeout client' is not valid in a global section");

	PARSE_FRESH("frontend f\n  server s1 127.0.0.1:80\n", 1);
	expect_msg("is not valid in a frontend section");

	PARSE_FRESH("defaults\n  stats socket /tmp/x.sock\n", 1);
	expect_msg("'stats socket' is not valid in a defaults section");
}

/* A one-word keyword is named alone, not with its first argument ("'bind
 * :80' is not valid..."); families like "option X" keep both words. */
static void test_wrong_section_names_keyword(void **state)
{
	PARSE_FRESH("backend b\n  bind :80\n", 1);
	expect_msg("t.cfg:2: 'bind' is not valid in a backend section");
	PARSE_FRESH("global\n  balance roundrobin\n", 1);
	expect_msg("t.cfg:2: 'balance' is not valid in a global section");
	PARSE_FRESH("backend b\n  option tcplog\n", 1);
	expect_msg("t.cfg:2: 'option tcplog' is not valid in a backend section");
}

static void test_bad_values(void **state)
{
	PARSE_FRESH("defaults\n  mode tcp\n  timeout connect 5x\n", 1);
	expect_msg("t.cfg:3: 'timeout connect' in defaults section: expects <time>");
	expect_msg("unknown time unit");

	PARSE_FRESH("defaults\n  timeout client\n", 1);
	expect_msg("t.cfg:2: 'timeout client' in defaults section: expects <time>");
	PARSE_FRESH("defaults\n  timeout client 1s 2s\n", 1);
	expect_msg("and nothing else");
	PARSE_FRESH("defaults\n  timeout client 30d\n", 1);
	expect_msg("time too large");

	PARSE_FRESH("backend b\n  retries 1001\n", 1);
	expect_msg("t.cfg:2: 'retries' in backend section: expects a number of retries (0..1000), got '1001'");
	PARSE_FRESH("global\n  maxconn many\n", 1);
	expect_msg("'maxconn' in global section: expects a connection limit");
	PARSE_FRESH("global\n  tune.bufsize 512\n", 1);
	expect_msg("'tune.bufsize' in global section: expects a buffer size between 1024");
	PARSE_FRESH("global\n  tune.bufsize 16q\n", 1);
	expect_msg("unknown size unit");
	PARSE_FRESH("frontend f\n  option tcplog now\n", 1);
	expect_msg("'option tcplog' in frontend section: takes no argument (got 'now')");
	PARSE_FRESH("frontend f\n  no timeout client\n", 1);
	expect_msg("'no' is not supported");
	PARSE_FRESH("frontend f\n  mode udp\n", 1);
	expect_msg("'mode' in frontend section: unknown mode 'udp'");
	PARSE_FRESH("backend b\n  balance rdp-cookie(\n", 1);
	expect_msg("rdp-cookie expects a cookie name");
	PARSE_FRESH("backend b\n  persist rdp-cookie(a) x\n", 1);
	expect_msg("'rdp-cookie(a)' takes no other argument (got 'x')");
	PARSE_FRESH("backend b\n  persist cookie\n", 1);
	expect_msg("expects 'rdp-cookie' or 'rdp-cookie(<name>)'");
	PARSE_FRESH("backend b\n  balance nope\n", 1);
	expect_msg("unknown algorithm 'nope'");
	expect_no_msg("did you mean");
	PARSE_FRESH("backend b\n  balance leastconnn\n", 1);
	expect_msg("unknown algorithm 'leastconnn' (expects roundrobin, static-rr, leastconn, "
		   "first, source, random, uri, url_param, hdr(<name>) or rdp-cookie[(<name>)]); did "
		   "you mean 'leastconn'?");
	PARSE_FRESH("backend b\n  balance hedr(host)\n", 1);
	expect_msg("unknown algorithm 'hedr(host)'");
	expect_msg("did you mean 'hdr(<name>)'?");
	PARSE_FRESH("backend b\n  balance roundrobin(2)\n", 1);
	expect_msg("unknown algorithm 'roundrobin(2)'");
	PARSE_FRESH("global\n  log nowhere local0\n", 1);
	expect_msg("invalid log target 'nowhere'");
	PARSE_FRESH("global\n  log 127.0.0.1 local9\n", 1);
	expect_msg("unknown facility 'local9'");
	PARSE_FRESH("frontend f\n  log global\nglobal\n  log global\n", 1);
	expect_msg("t.cfg:4:");
	PARSE_FRESH("frontend bad/name\n", 1);
	expect_msg("invalid name 'bad/name'");
}

static void test_error_count(void **state)
{
	static const char text[] =
		"global\n"
		"    maxconn abc\n"                          /* 2 */
		"    nbthread 2\n"                           /* 3 */
		"defaults\n"
		"    timeout client 1q\n"                    /* 5 */
		"    bogus\n"                                /* 6 */
		"frontend f\n"
		"    bind :80 defer-acept\n"                 /* 8 */
		"    default_backend b\n"
		"backend b\n"
		"    server s1 1.2.3.4:80 bakcup\n"          /* 11 */
		"    bind :81\n"                             /* 12 */
		"    server s2 \"unterminated\n";            /* 13 */

	PARSE_ERRORS(text, 8);
	expect_msg("t.cfg:2:");
	expect_msg("t.cfg:3:");
	expect_msg("t.cfg:5:");
	expect_msg("t.cfg:6:");
	expect_msg("t.cfg:8:");
	expect_msg("t.cfg:11:");
	expect_msg("t.cfg:12:");
	expect_msg("t.cfg:13:");
	/* The lines around the errors were still applied. */
	assert_non_null(proxy_find("b", PR_CAP_BE));
	assert_non_null(proxy_find("b", PR_CAP_BE)->servers);
}

static void test_bind_options(void **state)
{
	PARSE_ERRORS("frontend f\n  bind :80 nmae\n", 1);
	expect_msg("t.cfg:2: 'bind' in frontend section: unknown option 'nmae'; did you mean 'name'?");
	reset(NULL);
	PARSE_ERRORS("frontend f\n  bind :80 backlog 0\n", 1);
	expect_msg("option 'backlog'");
	expect_msg("(1..16777216), got '0'");
	reset(NULL);
	PARSE_ERRORS("frontend f\n  bind :80 maxconn\n", 1);
	expect_msg("option 'maxconn': expects a value");
	reset(NULL);
	PARSE_ERRORS("frontend f\n  bind :80 mode 999\n", 1);
	expect_msg("expects an octal mode");
	reset(NULL);
	PARSE_ERRORS("frontend f\n  bind\n", 1);
	expect_msg("'bind' in frontend section: expects an address");
	reset(NULL);
	PARSE_ERRORS("frontend f\n  bind 127.0.0.1\n", 1);
	expect_msg("missing");
	reset(NULL);
	PARSE_ERRORS("frontend f\n  bind 1.2.3.4:80,bogus:81\n", 1);
	expect_msg("'bogus' is not a valid IP address");
	/* "level" only exists on stats sockets. */
	reset(NULL);
	PARSE_ERRORS("frontend f\n  bind :80 level\n", 1);
	expect_msg("unknown option 'level'");

}

static void test_bind_options_ok(void **state)
{
	struct proxy *px;

	PARSE_ERRORS("frontend f\n  bind /tmp/sluice-test-never.sock,fd@3 mode 600 id 4 "
		     "defer-accept noreuseport\n", 0);
	px = proxy_find("f", PR_CAP_FE);
	assert_non_null(px);
	assert_int_equal(count_listeners(px->listeners), 2);
	assert_true(px->listeners->flags & LI_F_UNIX);
	assert_true(px->listeners->flags & LI_F_DEFER);
	assert_true(px->listeners->flags & LI_F_NOREUSEPORT);
	assert_int_equal(px->listeners->bc->ux_mode, 0600);
	assert_int_equal(px->listeners->bc->id, 4);
	assert_true(px->listeners->next->flags & LI_F_INHERITED);
	assert_int_equal(px->listeners->next->fd, 3);
	/* Parsing never creates the socket. */
	assert_int_equal(access("/tmp/sluice-test-never.sock", F_OK), -1);
}

/* After an unknown bind or server option the rest of the line is not read:
 * its value cannot be told from an option ("nmae x" must not also report
 * "unknown option 'x'"), as in HAProxy. */
static void test_unknown_option_value(void **state)
{
	PARSE_ERRORS("frontend f\n  bind :80 nmae x\n", 1);
	expect_no_msg("'x'");
	PARSE_ERRORS("backend b\n  server s1 127.0.0.1:80 wieght 3\n", 1);
	expect_no_msg("'3'");
}

static void test_server_options(void **state)
{
	struct proxy *px;

	PARSE_ERRORS("backend b\n  server s1 127.0.0.1:80 wieght\n", 1);
	expect_msg("t.cfg:2: 'server' in backend section: server 's1': unknown option 'wieght'; "
		   "did you mean 'weight'?");
	reset(NULL);
	PARSE_ERRORS("backend b\n  server s1 127.0.0.1:80 weight 300\n", 1);
	expect_msg("server 's1': option 'weight'");
	expect_msg("(0..256), got '300'");
	reset(NULL);
	PARSE_ERRORS("backend b\n  server s1 127.0.0.1:80\n  server s1 127.0.0.1:81\n", 1);
	expect_msg("t.cfg:3:");
	expect_msg("server 's1' is already declared at t.cfg:2");
	reset(NULL);
	PARSE_ERRORS("backend b\n  server s1\n", 1);
	expect_msg("expects <name> <address>");
	reset(NULL);
	PARSE_ERRORS("backend b\n  server s1 127.0.0.1:99999\n", 1);
	expect_msg("server 's1': '127.0.0.1:99999': invalid port");
	/* Health-check options configure the server's check, without warning. */
	reset(NULL);
	int w = cfg_warnings();
	PARSE_ERRORS("backend b\n  server s1 127.0.0.1:80 check inter 2s fastinter 500ms "
		     "downinter 5s rise 4 fall 5 port 8080 weight 0\n", 0);
	assert_int_equal(cfg_warnings(), w);
	px = proxy_find("b", PR_CAP_BE);
	assert_non_null(px);
	assert_true(px->servers->flags & SRV_F_CHECKED);
	assert_int_equal(px->servers->weight, 0);
	assert_int_equal(px->servers->check.inter, 2000);
	assert_int_equal(px->servers->check.fastinter, 500);
	assert_int_equal(px->servers->check.downinter, 5000);
	assert_int_equal(px->servers->check.rise, 4);
	assert_int_equal(px->servers->check.fall, 5);
	assert_int_equal(px->servers->check.port, 8080);
	/* A bad value is an error naming the option. */
	reset(NULL);
	PARSE_ERRORS("backend b\n  server s1 127.0.0.1:80 check inter 0\n", 1);
	expect_msg("option 'inter': expects a time");
}

static void test_if_blocks(void **state)
{
	struct proxy *px;

	/* Untaken branches are not parsed at all, even invalid lines. */
	PARSE_ERRORS("frontend f\n"
		     ".if 0\n"
		     "  this is not a keyword\n"
		     "  timeout client 1s\n"
		     ".elif 1\n"
		     "  timeout client 2s\n"
		     ".elif 1\n"
		     "  timeout client 3s\n"
		     ".else\n"
		     "  timeout client 4s\n"
		     ".endif\n", 0);
	px = proxy_find("f", PR_CAP_FE);
	assert_int_equal(px->timeout.client, 2000);
	reset(NULL);

	PARSE_ERRORS("frontend f\n.if 1\n timeout client 1s\n.else\n timeout client 4s\n.endif\n", 0);
	assert_int_equal(proxy_find("f", PR_CAP_FE)->timeout.client, 1000);
	reset(NULL);
	PARSE_ERRORS("frontend f\n.if 0\n timeout client 1s\n.else\n timeout client 4s\n.endif\n", 0);
	assert_int_equal(proxy_find("f", PR_CAP_FE)->timeout.client, 4000);
	reset(NULL);

	/* Nesting, with an inner block inside a taken and an untaken branch. */
	PARSE_ERRORS("frontend f\n"
		     ".if 1\n"
		     "  .if 0\n"
		     "    timeout client 1s\n"
		     "  .else\n"
		     "    timeout client 2s\n"
		     "  .endif\n"
		     ".else\n"
		     "  .if 1\n"
		     "    timeout client 3s\n"
		     "  .endif\n"
		     "  bogus keyword\n"
		     ".endif\n"
		     "maxconn 7\n", 0);
	px = proxy_find("f", PR_CAP_FE);
	assert_int_equal(px->timeout.client, 2000);
	assert_int_equal(px->maxconn, 7);
	reset(NULL);

	/* Conditions on the environment, version and features. */
	setenv("SLUICE_T_CFG", "1", 1);
	PARSE_ERRORS("frontend f\n"
		     ".if defined(SLUICE_T_CFG) && version_atleast(2.4) && feature(LINUX_SPLICE)\n"
		     "  maxconn 11\n"
		     ".endif\n"
		     ".if streq(\"${SLUICE_T_CFG}\",1)\n"
		     "  timeout client 9s\n"
		     ".endif\n", 0);
	px = proxy_find("f", PR_CAP_FE);
	assert_int_equal(px->maxconn, 11);
	assert_int_equal(px->timeout.client, 9000);
	unsetenv("SLUICE_T_CFG");
}

static void test_if_errors(void **state)
{
	PARSE_FRESH("global\n.if 1\n  maxconn 10\n", 1);
	expect_msg("missing .endif at end of file (1 block open)");
	PARSE_FRESH(".if 1\n.if 0\n", 1);
	expect_msg("(2 blocks open)");
	PARSE_FRESH("global\n.endif\n", 1);
	expect_msg("t.cfg:2:");
	expect_msg("'.endif' without a matching .if");
	PARSE_FRESH(".else\n", 1);
	expect_msg("without a matching .if");
	PARSE_FRESH(".elif 1\n", 1);
	expect_msg("without a matching .if");
	PARSE_FRESH(".if 1\n.else\n.else\n.endif\n", 1);
	expect_msg("t.cfg:3:");
	PARSE_FRESH(".if 1\n.else\n.elif 1\n.endif\n", 1);
	expect_msg("t.cfg:3:");
	PARSE_FRESH(".if nope(1)\n.endif\n", 1);
	expect_msg("t.cfg:1:");
	expect_msg("unknown function");
	expect_msg("at position 0 in 'nope(1)'");
	/* An empty condition is false, as in HAProxy. */
	PARSE_FRESH(".if\n  bogus\n.endif\n", 0);
	PARSE_FRESH(".foo\n", 1);
	expect_msg("unknown directive");
	/* An error inside an untaken branch is not one. */
	PARSE_FRESH(".if 0\n.foo\n.if nope(\n.endif\n.endif\n", 0);

	/* 32 levels are allowed, not 33. */
	char text[33 * 6 + 33 * 7 + 1] = "";
	for (int i = 0; i < 32; i++)
		strcat(text, ".if 1\n");
	for (int i = 0; i < 32; i++)
		strcat(text, ".endif\n");
	PARSE_FRESH(text, 0);
	text[0] = '\0';
	for (int i = 0; i < 33; i++)
		strcat(text, ".if 1\n");
	for (int i = 0; i < 33; i++)
		strcat(text, ".endif\n");
	assert_true(parse(text) >= 1);
	expect_msg("too many nested .if blocks");
}

static void test_diag_directives(void **state)
{
	int w = cfg_warnings();

	PARSE_ERRORS(".notice hello there\n.warning careful now\n", 0);
	expect_msg("t.cfg:1: hello there");
	expect_msg("t.cfg:2: careful now");
	assert_int_equal(cfg_warnings(), w + 1);
	PARSE_ERRORS(".alert stop here\n", 1);
	expect_msg("t.cfg:1: stop here");
	/* As in HAProxy, nothing after an .alert is read. */
	PARSE_ERRORS("global\n  maxconn 3\n.alert stop\n  maxconn 4\n  bogus\n", 1);
	assert_int_equal(global.maxconn, 3);
	PARSE_ERRORS(".if 0\n.alert not this\n.endif\n", 0);
	expect_no_msg("not this");
}

static void test_defaults_from(void **state)
{
	struct proxy *x, *y, *z;

	PARSE_ERRORS("defaults base\n"
		     "  timeout client 7s\n"
		     "  option splice-auto\n"
		     "  maxconn 70\n"
		     "defaults other\n"
		     "  timeout client 9s\n"
		     "frontend x from base\n"
		     "  bind :80\n"
		     "frontend y\n"
		     "  bind :81\n"
		     "frontend z from other\n"
		     "  bind :82\n"
		     "  timeout client 1s\n", 0);
	x = proxy_find("x", PR_CAP_FE);
	y = proxy_find("y", PR_CAP_FE);
	z = proxy_find("z", PR_CAP_FE);
	assert_int_equal(x->timeout.client, 7000);
	assert_true(x->options & PR_O_SPLICE_AUTO);
	assert_int_equal(x->maxconn, 70);
	/* Without "from", the last defaults section is in force. */
	assert_int_equal(y->timeout.client, 9000);
	assert_int_equal(z->timeout.client, 1000);
	reset(NULL);

	/* Defaults inherit from defaults. */
	PARSE_ERRORS("defaults a\n  timeout client 2s\n"
		     "defaults b from a\n  timeout server 3s\n"
		     "backend k from b\n"
		     "frontend l from b\n", 0);
	assert_int_equal(proxy_find("k", PR_CAP_BE)->timeout.server, 3000);
	assert_int_equal(proxy_find("l", PR_CAP_FE)->timeout.client, 2000);
	reset(NULL);
	/* A name two defaults sections bear is ambiguous for "from" (2.6). */
	PARSE_ERRORS("defaults a\n  timeout client 1s\n"
		     "defaults a\n  timeout client 2s\n"
		     "frontend l from a\n", 1);
	expect_msg("t.cfg:5: 'frontend' in frontend section: ambiguous defaults section name "
		   "'a': it exists at least at t.cfg:1 and t.cfg:3");
	reset(NULL);

	PARSE_ERRORS("frontend x from nosuch\n", 1);
	expect_msg("'from nosuch': no defaults section of that name");
	PARSE_ERRORS("frontend x2 to y\n", 1);
	expect_msg("unexpected argument 'to'");
	PARSE_ERRORS("frontend\n  bind :80\n", 1);
	expect_msg("'frontend' in frontend section: expects a name");
}

/* BUG (src/proxy/proxy.c, proxy_section_begin): a "defaults" section without
 * "from" starts from the defaults section in force (ctx->defpx, or
 * defaults_last()), i.e. it inherits everything the previous defaults
 * section set. In HAProxy only regular proxies inherit from the previous
 * defaults section; a new "defaults" starts from scratch unless it says
 * "from NAME" (cfgparse-listen.c: "only regular proxies inherit from the
 * previous defaults section"). Here "option splice-auto" and "maxconn 70"
 * of "base" leak into "other" and from there into frontend y. */
static void test_defaults_do_not_chain(void **state)
{
	struct proxy *y;

	PARSE_ERRORS("defaults base\n  option splice-auto\n  maxconn 70\n"
		     "defaults other\n  timeout client 9s\n"
		     "frontend y\n", 0);
	y = proxy_find("y", PR_CAP_FE);
	assert_int_equal(y->timeout.client, 9000);
	assert_false(y->options & PR_O_SPLICE_AUTO);
	assert_int_equal(y->maxconn, 0);
}

static void test_duplicate_names(void **state)
{
	PARSE_ERRORS("frontend a\n  bind :80\nfrontend a\n  bind :81\n", 1);
	expect_msg("t.cfg:3: 'frontend' in frontend section: 'a' is already used by a proxy "
		   "declared at t.cfg:1");
	reset(NULL);
	PARSE_ERRORS("listen a\n  bind :80\nbackend a\n", 1);
	expect_msg("'a' is already used");
	reset(NULL);
	/* A frontend and a backend may share a name, as in HAProxy. */
	PARSE_ERRORS("frontend a\n  bind :80\nbackend a\n", 0);
	reset(NULL);
	/* Duplicate explicit ids are found after parsing. */
	PARSE_ERRORS("backend a\n  id 3\nbackend b\n  id 3\n", 0);
	assert_true(postparse() >= 1);
	expect_msg("has the same id 3");
}

static void test_default_backend_unknown(void **state)
{
	PARSE_ERRORS("frontend f\n  bind :80\n  timeout client 1s\n  default_backend nope\n", 0);
	assert_int_equal(postparse(), 1);
	expect_msg("t.cfg:1: proxy 'f': default_backend 'nope' does not exist");
	reset(NULL);
	/* A frontend is not a backend. */
	PARSE_ERRORS("frontend f\n  default_backend g\nfrontend g\n", 0);
	assert_int_equal(postparse(), 1);
	expect_msg("default_backend 'g' does not exist");
	reset(NULL);
	PARSE_ERRORS("frontend f\n  default_backend g\nlisten g\n", 0);
	assert_int_equal(postparse(), 0);
	assert_ptr_equal(proxy_find("f", PR_CAP_FE)->defbe, proxy_find("g", PR_CAP_BE));
	/* Warnings, not errors, for what is merely incomplete. */
	expect_msg("missing 'timeout client' in 'f'");
}

static void test_nbthread(void **state)
{
	PARSE_FRESH("global\n  nbthread 2\n", 1);
	expect_msg("t.cfg:2: 'nbthread' in global section:");
	expect_msg("only 'nbthread 1' is supported");
	PARSE_FRESH("global\n  nbthread 1\n", 0);
	PARSE_FRESH("global\n  nbthread 0\n", 1);
	PARSE_FRESH("global\n  nbproc 2\n", 1);
	PARSE_FRESH("global\n  nbproc 1\n", 1);   /* as HAProxy 2.6 */
	expect_msg("not supported any more since HAProxy 2.5");
}

/* The soft-stop keywords (stop.c): times, errors naming the keyword, and a
 * close-spread-time longer than hard-stop-after warned about at its line. */
static void test_stop_keywords(void **state)
{
	PARSE_FRESH("global\n  hard-stop-after 30s\n  grace 2s\n  close-spread-time 5s\n", 0);
	assert_int_equal(global.hard_stop_after, 30000);
	assert_int_equal(global.grace, 2000);
	assert_int_equal(global.close_spread, 5000);
	PARSE_FRESH("global\n  hard-stop-after 5x\n", 1);
	expect_msg("t.cfg:2: 'hard-stop-after' in global section: expects <time>");
	PARSE_FRESH("global\n  grace\n", 1);
	expect_msg("t.cfg:2: 'grace' in global section: expects <time>");
	PARSE_FRESH("global\n  close-spread-time 1s 2s\n", 1);
	expect_msg("t.cfg:2: 'close-spread-time' in global section: expects <time> and nothing else");
	PARSE_FRESH("global\n  close-spread-time soon\n", 1);
	expect_msg("t.cfg:2: 'close-spread-time' in global section: expects <time>");
	PARSE_FRESH("frontend f\n  hard-stop-after 1s\n", 1);
	expect_msg("t.cfg:2:");
	PARSE_FRESH("global\n  no grace\n", 1);
	expect_msg("'no' is not supported");

	reset(NULL);
	LOAD("global\n  close-spread-time 10s\n  hard-stop-after 2s\n", 0);
	expect_msg("t.cfg:2: 'close-spread-time' in global section: 10000 ms is longer than "
		   "hard-stop-after (2000 ms)");
	reset(NULL);
	LOAD("global\n  close-spread-time 1s\n  hard-stop-after 2s\n", 0);
	expect_no_msg("longer than");
}

static void test_no_option(void **state)
{
	struct proxy *f, *g;

	PARSE_ERRORS("defaults\n  option splice-auto\n  option tcpka\n"
		     "frontend f\n  no option splice-auto\n"
		     "frontend g\n", 0);
	f = proxy_find("f", PR_CAP_FE);
	g = proxy_find("g", PR_CAP_FE);
	assert_false(f->options & PR_O_SPLICE_AUTO);
	assert_true(f->options & PR_O_TCP_KA);
	assert_true(g->options & PR_O_SPLICE_AUTO);
	reset(NULL);
	/* An option owned by a module (HTTP: struct http_px) passes on from
	 * defaults and "no option" clears it the same way. */
	PARSE_ERRORS("defaults\n  option abortonclose\n  option http-ignore-probes\n"
		     "backend b\n  no option abortonclose\n"
		     "listen l\n  option http-buffer-request\n"
		     "frontend f\n", 0);
	assert_false(http_px_of(proxy_find("b", PR_CAP_BE))->options & HTTP_O_ABRT_CLOSE);
	assert_true(http_px_of(proxy_find("b", PR_CAP_BE))->options & HTTP_O_IGNORE_PROBES);
	assert_true(http_px_of(proxy_find("l", PR_CAP_FE))->options & HTTP_O_ABRT_CLOSE);
	assert_true(http_px_of(proxy_find("l", PR_CAP_FE))->options & HTTP_O_BUFREQ);
	assert_true(http_px_of(proxy_find("f", PR_CAP_FE))->options & HTTP_O_IGNORE_PROBES);
	assert_false(http_px_of(proxy_find("f", PR_CAP_FE))->options & HTTP_O_BUFREQ);
	reset(NULL);
	/* The check and persistence options too; a proxy changing one leaves
	 * its defaults and its siblings as they were. */
	PARSE_ERRORS("defaults d\n  option log-health-checks\n  option persist\n"
		     "  option httpchk\n  http-check disable-on-404\n"
		     "backend b from d\n  no option log-health-checks\n  no option persist\n"
		     "  option tcp-check\n"
		     "backend c from d\n"
		     "defaults e\n  option tcp-check\n"
		     "backend g from e\n  no option tcp-check\n  option log-health-checks\n"
		     "backend h from e\n", 0);
	{
		const struct proxy *b = proxy_find("b", PR_CAP_BE), *c = proxy_find("c", PR_CAP_BE);
		const struct proxy *pg = proxy_find("g", PR_CAP_BE), *ph = proxy_find("h", PR_CAP_BE);

		assert_int_equal(chk_px_of(b)->options, CHK_O_TCPCHK | CHK_O_DISABLE404);
		assert_false(persist_options(b) & PST_O_PERSIST);
		assert_int_equal(chk_px_of(c)->options,
				 CHK_O_HTTPCHK | CHK_O_DISABLE404 | CHK_O_LOG_HEALTH);
		assert_true(persist_options(c) & PST_O_PERSIST);
		assert_int_equal(chk_px_of(pg)->options, CHK_O_LOG_HEALTH);
		assert_int_equal(chk_px_of(ph)->options, CHK_O_TCPCHK);
	}
	reset(NULL);
	/* "no log" forgets inherited loggers. */
	PARSE_ERRORS("defaults\n  log 127.0.0.1 local0\n  log global\n"
		     "frontend f\n  no log\nfrontend g\n", 0);
	assert_null(proxy_find("f", PR_CAP_FE)->loggers.head);
	assert_false(proxy_find("f", PR_CAP_FE)->loggers.use_global);
	assert_non_null(proxy_find("g", PR_CAP_FE)->loggers.head);
	/* "no daemon" is accepted, "no maxconn" is not. */
	PARSE_ERRORS("global\n  daemon\n", 0);
	assert_int_equal(global.daemon, 1);
	PARSE_ERRORS("global\n  no daemon\n", 0);
	assert_int_equal(global.daemon, 0);
	PARSE_ERRORS("global\n  no maxconn 5\n", 1);
	expect_msg("'no' is not supported");
}

static void test_deprecated(void **state)
{
	int w = cfg_warnings();

	/* HAProxy 2.6 refuses the 1.x timeout keywords: so does sluice */
	PARSE_ERRORS("frontend f\n  clitimeout 5s\n", 1);
	assert_int_equal(cfg_warnings(), w);
	expect_msg("t.cfg:2: 'clitimeout' in frontend section: removed from HAProxy (2.6 refuses "
		   "it too): gone since 2.1, use 'timeout client' instead");
	assert_int_equal(proxy_find("f", PR_CAP_FE)->timeout.client, 0);
}

static void test_lexer_errors_reported(void **state)
{
	PARSE_ERRORS("frontend f\n  bind \"unterminated\n  maxconn 3\n", 1);
	expect_msg("t.cfg:2: unterminated double quote at column 8");
	assert_int_equal(proxy_find("f", PR_CAP_FE)->maxconn, 3);
	reset(NULL);
	PARSE_ERRORS("global\n  description \\xZZ\n", 1);
	expect_msg("t.cfg:2: invalid \\x escape");
}

static void test_nul_and_long_lines(void **state)
{
	static const char nul[] = "global\n  maxconn 1\0\n";
	size_t len = 70000;
	char *text = malloc(len + 64);

	capture_start();
	assert_int_equal(cfg_parse_text("t.cfg", nul, sizeof(nul) - 1), 1);
	capture_end();
	expect_msg("NUL byte");

	assert_non_null(text);
	strcpy(text, "global\n  description ");
	memset(text + strlen(text), 'x', len);
	strcpy(text + 21 + len, "\n  maxconn 42\n");
	PARSE_ERRORS(text, 1);
	expect_msg("t.cfg:2: line too long");
	/* The next line is still parsed. */
	assert_int_equal(global.maxconn, 42);
	free(text);
}

static void test_empty_and_comments(void **state)
{
	PARSE_ERRORS("", 0);
	PARSE_ERRORS("\n\n   \n# only comments\n\t# here\n", 0);
	PARSE_ERRORS("global\n\n  maxconn 5 # five\n", 0);
	assert_int_equal(global.maxconn, 5);
	/* Without a final newline, and with CRLF. */
	PARSE_ERRORS("global\r\n  maxconn 6", 0);
	assert_int_equal(global.maxconn, 6);
	assert_null(global.proxies);
}

static void test_stats_socket_not_bound(void **state)
{
	const char *path = "/tmp/sluice-test-cfg-never-bound.sock";
	char text[256];

	unlink(path);
	snprintf(text, sizeof(text),
		 "global\n  stats socket %s mode 600 level admin\n  stats socket 127.0.0.1:9999\n", path);
	PARSE_ERRORS(text, 0);
	assert_int_equal(count_listeners(global.cli_listeners), 2);
	assert_int_equal(global.cli_listeners->bc->level, CLI_LVL_ADMIN);
	assert_int_equal(global.cli_listeners->next->bc->level, 2); /* operator by default */
	assert_int_equal(global.cli_listeners->fd, -1);
	assert_int_equal(access(path, F_OK), -1);
	PARSE_ERRORS("global\n  stats socket /tmp/x level root\n", 1);
	expect_msg("option 'level': expects 'user', 'operator' or 'admin'");
}

static void test_find_kw(void **state)
{
	char *tc[] = { "timeout", "client", "5s" };
	char *tn[] = { "timeout", "nope" };
	char *bind[] = { "bind", ":80" };
	char *ss[] = { "stats", "socket", "/x" };
	char *mc[] = { "maxconn", "5" };
	const struct cfg_kw *kw, *kw2;
	int nw = -1;

	kw = cfg_find_kw(CFG_SEC_FRONTEND, 3, tc, &nw);
	assert_non_null(kw);
	assert_string_equal(kw->name, "timeout client");
	assert_int_equal(nw, 2);
	assert_int_equal(kw->type, CFG_T_TIME);
	assert_null(cfg_find_kw(CFG_SEC_BACKEND, 3, tc, &nw));
	assert_int_equal(nw, 0);
	assert_null(cfg_find_kw(CFG_SEC_FRONTEND, 2, tn, &nw));
	assert_null(cfg_find_kw(CFG_SEC_FRONTEND, 1, tc, &nw)); /* "timeout" alone */
	kw = cfg_find_kw(CFG_SEC_LISTEN, 2, bind, &nw);
	assert_non_null(kw);
	assert_int_equal(nw, 1);
	assert_null(cfg_find_kw(CFG_SEC_BACKEND, 2, bind, &nw));
	kw = cfg_find_kw(CFG_SEC_GLOBAL, 3, ss, &nw);
	assert_non_null(kw);
	assert_string_equal(kw->name, "stats socket");
	assert_int_equal(nw, 2);
	/* One name, two rows: global and proxies. */
	kw = cfg_find_kw(CFG_SEC_GLOBAL, 2, mc, &nw);
	kw2 = cfg_find_kw(CFG_SEC_FRONTEND, 2, mc, &nw);
	assert_non_null(kw);
	assert_non_null(kw2);
	assert_ptr_not_equal(kw, kw2);
	assert_true(kw->sections & CFG_SEC_GLOBAL);
	assert_false(kw2->sections & CFG_SEC_GLOBAL);
}

static void test_suggest(void **state)
{
	assert_string_equal(cfg_suggest(CFG_SEC_FRONTEND, "bnid"), "bind");
	assert_string_equal(cfg_suggest(CFG_SEC_GLOBAL, "maxcon"), "maxconn");
	assert_string_equal(cfg_suggest(~0u, "frontned"), "frontend");
	/* Never the very word that was typed. */
	assert_null(cfg_suggest(~0u, "backend"));
	assert_null(cfg_suggest(CFG_SEC_FRONTEND, "zzzzzzzzzz"));
	assert_null(cfg_suggest(CFG_SEC_BACKEND, "xyzzy"));
	/* Only keywords of the section are candidates. */
	const char *s = cfg_suggest(CFG_SEC_BACKEND, "bnid");
	assert_true(s == NULL || strcmp(s, "bind") != 0);
	/* A multi-word name matches on its first word, which alone is
	 * suggested; two words are scored against whole names. */
	assert_string_equal(cfg_suggest(CFG_SEC_BACKEND, "timeot"), "timeout");
	assert_string_equal(cfg_suggest(CFG_SEC_BACKEND, "timeot connect"), "timeout connect");
	assert_string_equal(cfg_suggest(CFG_SEC_FRONTEND, "option tcplgo"), "option tcplog");
	/* Longer inputs than any keyword are simply far. */
	char big[200];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_null(cfg_suggest(~0u, big));
}

/* Every prefix of a complete configuration, in exactly-sized heap copies:
 * never a crash or an overread, and the full text has no error. */
static void test_cut_at_every_byte(void **state)
{
	size_t len = sizeof(valid_cfg) - 1;

	for (size_t cut = 0; cut <= len; cut++) {
		char *text = malloc(cut ? cut : 1);
		int errors;

		assert_non_null(text);
		memcpy(text, valid_cfg, cut);
		reset(NULL);
		capture_start();
		errors = cfg_parse_text("t.cfg", text, cut);
		errors += cfg_postparse();
		capture_end();
		assert_true(errors >= 0);
		if (cut == len)
			assert_int_equal(errors, 0);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_valid_config, reset),
		cmocka_unit_test_teardown(test_unknown_keyword, reset),
		cmocka_unit_test_teardown(test_suggest_second_word, reset),
		cmocka_unit_test_teardown(test_wrong_section, reset),
		cmocka_unit_test_teardown(test_wrong_section_names_keyword, reset),
		cmocka_unit_test_teardown(test_bad_values, reset),
		cmocka_unit_test_teardown(test_error_count, reset),
		cmocka_unit_test_teardown(test_bind_options, reset),
		cmocka_unit_test_teardown(test_bind_options_ok, reset),
		cmocka_unit_test_teardown(test_unknown_option_value, reset),
		cmocka_unit_test_teardown(test_server_options, reset),
		cmocka_unit_test_teardown(test_if_blocks, reset),
		cmocka_unit_test_teardown(test_if_errors, reset),
		cmocka_unit_test_teardown(test_diag_directives, reset),
		cmocka_unit_test_teardown(test_defaults_from, reset),
		cmocka_unit_test_teardown(test_defaults_do_not_chain, reset),
		cmocka_unit_test_teardown(test_duplicate_names, reset),
		cmocka_unit_test_teardown(test_default_backend_unknown, reset),
		cmocka_unit_test_teardown(test_nbthread, reset),
		cmocka_unit_test_teardown(test_stop_keywords, reset),
		cmocka_unit_test_teardown(test_no_option, reset),
		cmocka_unit_test_teardown(test_deprecated, reset),
		cmocka_unit_test_teardown(test_lexer_errors_reported, reset),
		cmocka_unit_test_teardown(test_nul_and_long_lines, reset),
		cmocka_unit_test_teardown(test_empty_and_comments, reset),
		cmocka_unit_test_teardown(test_stats_socket_not_bound, reset),
		cmocka_unit_test_teardown(test_find_kw, reset),
		cmocka_unit_test_teardown(test_suggest, reset),
		cmocka_unit_test_teardown(test_cut_at_every_byte, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
