/* Unit tests for the per-proxy TCP socket options (src/proxy/px_tcp.c,
 * conn_setup_tcp()): clitcpka-*, srvtcpka-*, option tcpka/clitcpka/
 * srvtcpka, option nolinger and option tcp-smart-connect parsed, made into
 * each side's options at post-parse, and read back from real sockets with
 * getsockopt(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/conn.h>
#include <sluice/proxy.h>
#include <sluice/px_tcp.h>

#include "cfg_capture.h"
#include "rules_stream.h"

#define HEAD "defaults\n mode tcp\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n"

static int getopt_int(int fd, int level, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);

	assert_int_equal(getsockopt(fd, level, name, &v, &l), 0);
	return v;
}

/* A socket set up with proxy <px>'s options of side <server>. */
static int sock_of(const struct proxy *px, int server)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	conn_setup_tcp(fd, px_tcp_opts(px, server), server);
	return fd;
}

static void test_keepalive(void **state)
{
	struct proxy *fe, *be;
	int fd;

	EXPECT_ERRORS(load(HEAD "frontend fe\n option clitcpka\n"
			   " clitcpka-cnt 4\n clitcpka-idle 77\n clitcpka-intvl 2m\n default_backend be\n"
			   "backend be\n option srvtcpka\n srvtcpka-cnt 9\n srvtcpka-idle 1h\n"
			   " srvtcpka-intvl 1500ms\n server s 127.0.0.1:1\n"), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	be = proxy_find("be", PR_CAP_BE);
	fd = sock_of(fe, 0);
	assert_int_equal(getopt_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPCNT), 4);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 77);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPINTVL), 120);
	close(fd);
	fd = sock_of(be, 1);
	assert_int_equal(getopt_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPCNT), 9);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 3600);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPINTVL), 1);
	close(fd);
	/* the backend's client side and the frontend's server side ask nothing */
	assert_null(px_tcp_opts(be, 0));
	assert_null(px_tcp_opts(fe, 1));
}

static void test_keepalive_inherited(void **state)
{
	struct proxy *px;
	int fd;

	/* settings from defaults; without keep-alive on, they set nothing */
	EXPECT_ERRORS(load(HEAD " clitcpka-idle 30s\n srvtcpka-cnt 2\n"
			   "listen l\n option tcpka\n server s 127.0.0.1:1\n"
			   "listen m\n server s 127.0.0.1:1\n"), 0);
	px = proxy_find("l", PR_CAP_FE);
	fd = sock_of(px, 0);
	assert_int_equal(getopt_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 30);
	close(fd);
	fd = sock_of(px, 1);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_KEEPCNT), 2);
	close(fd);
	px = proxy_find("m", PR_CAP_FE);
	assert_null(px_tcp_opts(px, 0));
	fd = sock_of(px, 0);
	assert_int_equal(getopt_int(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
	close(fd);
}

static void test_nolinger_smart_connect(void **state)
{
	struct proxy *fe, *be;
	struct linger lg;
	socklen_t l = sizeof(lg);
	int fd;

	EXPECT_ERRORS(load(HEAD "frontend fe\n option nolinger\n"
			   " default_backend be\n"
			   "backend be\n option tcp-smart-connect\n server s 127.0.0.1:1\n"
			   "backend nl\n option nolinger\n no option tcp-smart-connect\n"
			   " server s 127.0.0.1:1\n"), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	be = proxy_find("be", PR_CAP_BE);
	fd = sock_of(fe, 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &l), 0);
	assert_int_equal(lg.l_onoff, 1);
	assert_int_equal(lg.l_linger, 0);
	close(fd);
	fd = sock_of(be, 1);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_QUICKACK), 0);
	l = sizeof(lg);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &l), 0);
	assert_int_equal(lg.l_onoff, 0);
	close(fd);
	fd = sock_of(proxy_find("nl", PR_CAP_BE), 1);
	assert_int_equal(getopt_int(fd, IPPROTO_TCP, TCP_QUICKACK), 1);
	l = sizeof(lg);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &l), 0);
	assert_int_equal(lg.l_onoff, 1);
	close(fd);
}

static void test_errors(void **state)
{
	PARSE_FRESH(HEAD "frontend fe\n clitcpka-cnt 0\n", 1);
	assert_non_null(strstr(errtext, "expects a number of probes"));
	PARSE_FRESH(HEAD "frontend fe\n clitcpka-idle 500ms\n", 1);
	assert_non_null(strstr(errtext, "expects a time from 1s to 32767s"));
	PARSE_FRESH(HEAD "frontend fe\n clitcpka-intvl x\n", 1);
	PARSE_FRESH(HEAD "frontend fe\n clitcpka-intvl 1 2\n", 1);
	PARSE_FRESH(HEAD "frontend fe\n srvtcpka-cnt 3\n", 1);
	assert_non_null(strstr(errtext, "is not valid in a frontend section"));
	PARSE_FRESH(HEAD "backend be\n clitcpka-cnt 3\n", 1);
	PARSE_FRESH(HEAD "frontend fe\n option tcp-smart-connect\n", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_keepalive, reset),
		cmocka_unit_test_teardown(test_keepalive_inherited, reset),
		cmocka_unit_test_teardown(test_nolinger_smart_connect, reset),
		cmocka_unit_test_teardown(test_errors, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
