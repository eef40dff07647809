/* Unit tests of the stream actions (src/proxy/stream_act.c and stream.c):
 * set-tos and set-mark reach the client socket, set-priority-* bound their
 * values, and the actions' arguments are checked at parse time. */
#include <netinet/in.h>
#include <netinet/ip.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <sluice/proxy.h>
#include <sluice/stream.h>

#include "cfg_capture.h"

/* A connected TCP socket on loopback (the accepted side), in *<fd>; its
 * peer in *<peer>. */
static void tcp_pair(int *fd, int *peer)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(ls >= 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(ls, 1), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &l), 0);
	*peer = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(*peer, (struct sockaddr *)&a, sizeof(a)), 0);
	*fd = accept(ls, NULL, NULL);
	assert_true(*fd >= 0);
	close(ls);
}

static void test_tos_mark(void **state)
{
	struct stream s;
	int fd, peer, v;
	socklen_t l = sizeof(v);

	memset(&s, 0, sizeof(s));
	tcp_pair(&fd, &peer);
	s.cli.fd = fd;
	stream_set_tos(&s, 0x28);
	assert_int_equal(getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &l), 0);
	assert_int_equal(v, 0x28);
	/* SO_MARK needs CAP_NET_ADMIN: checked when the test may set it */
	v = 0;
	if (setsockopt(peer, SOL_SOCKET, SO_MARK, &v, sizeof(v)) == 0) {
		stream_set_mark(&s, 0x1234);
		l = sizeof(v);
		assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_MARK, &v, &l), 0);
		assert_int_equal(v, 0x1234);
	}
	/* no socket (a closed stream): nothing happens */
	s.cli.fd = -1;
	stream_set_tos(&s, 1);
	close(fd);
	close(peer);
}

static void test_priority_bounds(void **state)
{
	struct stream s;

	memset(&s, 0, sizeof(s));
	stream_set_priority(&s, 0, 5000);
	assert_int_equal(s.prio_class, 2047);
	stream_set_priority(&s, 0, -5000);
	assert_int_equal(s.prio_class, -2047);
	stream_set_priority(&s, 1, 600000);
	assert_int_equal(s.prio_offset, 524287);
	stream_set_priority(&s, 1, -12);
	assert_int_equal(s.prio_offset, -12);
	assert_int_equal(s.prio_class, -2047);
}

static int parse_rules(const char *rules)
{
	char cfg[1024];
	int err;

	snprintf(cfg, sizeof(cfg), "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n"
		 "  timeout connect 1s\nfrontend fe\n  bind 127.0.0.1:8080\n%s", rules);
	capture_start();
	err = cfg_parse_text("t.cfg", cfg, strlen(cfg));
	capture_end();
	return err;
}

/* Frees what a parse made, and gives struct global back. */
static void reset_cfg(void)
{
	proxy_free_all();
	restore_global();
}

static void test_parse(void **state)
{
	assert_int_equal(parse_rules("  http-request set-log-level silent\n"
			       "  http-response set-log-level debug\n"
			       "  tcp-request content set-log-level err\n"
			       "  http-request set-tos 0x20\n  tcp-request connection set-mark 7\n"
			       "  http-request set-priority-class int(3)\n"
			       "  tcp-request content set-priority-offset req.hdr(x),length\n"), 0);
	reset_cfg();
	assert_int_equal(parse_rules("  http-request set-log-level loud\n"), 1);
	assert_non_null(strstr(errtext, "unknown log level 'loud'"));
	reset_cfg();
	assert_int_equal(parse_rules("  http-request set-tos 256\n"), 1);
	assert_non_null(strstr(errtext, "0 to 255"));
	reset_cfg();
	assert_int_equal(parse_rules("  http-request set-mark -1\n"), 1);
	reset_cfg();
	assert_int_equal(parse_rules("  http-request set-priority-class\n"), 1);
	assert_non_null(strstr(errtext, "sample expression"));
	reset_cfg();
	/* not in every rule set, as in HAProxy 2.6 */
	assert_int_equal(parse_rules("  http-after-response set-log-level err\n"), 1);
	reset_cfg();
	assert_int_equal(parse_rules("  http-response set-priority-class int(1)\n"), 1);
	reset_cfg();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tos_mark),
		cmocka_unit_test(test_priority_bounds),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, capture_group_setup, NULL);
}
