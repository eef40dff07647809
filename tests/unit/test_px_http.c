/* Proxy options of the server side and the timeouts, through the stream
 * harness (stream_harness.h): option http-no-delay (sends seen through a
 * send() wrapper), option independent-streams and option
 * idle-close-on-response in a soft stop (virtual clock). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define H_FAIL(...) fail_msg(__VA_ARGS__)
#include "stream_harness.h"
#include "stream_cases.h"
#include <sluice/common.h>
#include <sluice/server.h>
#include <sluice/stop.h>

#define CFG_HEAD \
	"global\n  log @DIR@/log.sock local0\n" \
	"defaults\n  mode http\n  log global\n  option httplog\n" \
	"  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n" \
	"  timeout http-keep-alive 2s\n"

static char cbuf[65536], sbuf[65536];

/* Sends with MSG_MORE the proxy made: the library's send() is this one. */
static int more_sends;

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	if (flags & MSG_MORE)
		more_sends++;
	return sendto(fd, buf, len, flags, NULL, 0);
}

/* ---- option http-no-delay ---- */

static int start_nodelay(void **state)
{
	h_start(CFG_HEAD
		"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n"
		"frontend fn\n  bind @DIR@/fn.sock\n  option http-no-delay\n  default_backend be\n"
		"frontend fb\n  bind @DIR@/fb.sock\n  default_backend bn\n"
		"backend be\n  server s1 @DIR@/s1.sock\n"
		"backend bn\n  option http-no-delay\n  server s1 @DIR@/s1.sock\n");
	return 0;
}

/* A request head whose body has not come yet leaves for the server: with
 * MSG_MORE (the kernel may hold it for the body), unless the frontend or
 * the backend says http-no-delay. Returns the MSG_MORE sends made. */
static int post_head_via(const char *fe)
{
	int n;

	h_client_connect(fe);
	more_sends = 0;
	h_client_sends("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n");
	assert_true(h_server_accept() >= 0);
	h_server_recv_all(sbuf, sizeof(sbuf));
	assert_non_null(strstr(sbuf, "POST /a HTTP/1.1"));
	n = more_sends;
	h_client_sends("body");
	h_server_recv_all(sbuf, sizeof(sbuf));
	assert_string_equal(sbuf, "body");
	h_server_sends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_non_null(strstr(cbuf, "200 OK"));
	return n;
}

static void test_nodelay_off(void **state)
{
	assert_true(post_head_via("fe") > 0);
}

static void test_nodelay_frontend(void **state)
{
	assert_int_equal(post_head_via("fn"), 0);
}

static void test_nodelay_backend(void **state)
{
	assert_int_equal(post_head_via("fb"), 0);
}

/* ---- option independent-streams ---- */

#define CFG_TCP \
	"global\n  log @DIR@/log.sock local0\n" \
	"defaults\n  mode tcp\n  log global\n  option tcplog\n" \
	"  timeout connect 1s\n  timeout client 2s\n  timeout server 60s\n"

static int start_indep(void **state)
{
	h_start(CFG_TCP
		"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n"
		"frontend fi\n  bind @DIR@/fi.sock\n  option independent-streams\n"
		"  default_backend be\n"
		"backend be\n  server s1 @DIR@/s1.sock\n");
	return 0;
}

/* A client that only reads (the server talks, every second): the bytes
 * sent to it refresh its timeout (2s), unless the frontend says
 * independent-streams, when only what it sends does. Returns the seconds
 * the stream lived (at most 6). */
static int talk_to_silent_client(const char *fe)
{
	int t;

	h_client_connect(fe);
	assert_true(h_server_accept() >= 0);
	for (t = 0; t < 6 && h_live_streams(); t++) {
		h_server_sends("tick\n");
		h_client_recv_all(cbuf, sizeof(cbuf));
		h_advance(1000);
	}
	return t;
}

static void test_indep_off(void **state)
{
	assert_int_equal(talk_to_silent_client("fe"), 6);
	assert_int_equal(h_live_streams(), 1);
}

static void test_indep_frontend(void **state)
{
	assert_true(talk_to_silent_client("fi") < 6);
	assert_int_equal(h_live_streams(), 0);
	assert_non_null(strstr(h_log(), " cD "));   /* the client timed out */
}

/* ---- option idle-close-on-response ---- */

static int start_idle_close(void **state)
{
	h_start("global\n  log @DIR@/log.sock local0\n  close-spread-time 1s\n"
		"defaults\n  mode http\n  log global\n  option httplog\n"
		"  timeout connect 1s\n  timeout client 60s\n  timeout server 60s\n"
		"  timeout http-keep-alive 60s\n"
		"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n"
		"frontend fk\n  bind @DIR@/fk.sock\n  option idle-close-on-response\n"
		"  default_backend be\n"
		"backend be\n  server s1 @DIR@/s1.sock\n");
	return 0;
}

#define GET1 "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
#define OK200 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

/* A client idle between requests when a soft stop with close-spread-time
 * 1s begins; 2s later: is it still there? */
static int idle_left_after_stop(const char *fe)
{
	int live;

	h_client_connect(fe);
	h_client_sends(GET1);
	assert_true(h_server_accept() >= 0);
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(OK200);
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_non_null(strstr(cbuf, "200 OK"));
	stop_soft();
	h_advance(2000);
	live = h_live_streams();
	if (live) {
		/* its next request is served, then it closes */
		h_client_sends(GET1);
		h_server_recv_all(sbuf, sizeof(sbuf));
		h_server_sends(OK200);
		h_client_recv_all(cbuf, sizeof(cbuf));
		assert_non_null(strstr(cbuf, "200 OK"));
		assert_non_null(strstr(cbuf, "connection: close"));
		assert_true(h_client_eof());
	}
	stream_stop_spread(0, 0);   /* (the soft stop's state, for the next cases) */
	stream_set_idle_cb(NULL);
	return live;
}

static void test_idle_closed_in_spread(void **state)
{
	assert_int_equal(idle_left_after_stop("fe"), 0);
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_true(h_client_eof());
}

static void test_idle_close_on_response(void **state)
{
	assert_int_equal(idle_left_after_stop("fk"), 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nodelay_off, start_nodelay, stop_clean),
		cmocka_unit_test_setup_teardown(test_nodelay_frontend, start_nodelay, stop_clean),
		cmocka_unit_test_setup_teardown(test_nodelay_backend, start_nodelay, stop_clean),
		cmocka_unit_test_setup_teardown(test_indep_off, start_indep, stop_clean),
		cmocka_unit_test_setup_teardown(test_indep_frontend, start_indep, stop_clean),
		cmocka_unit_test_setup_teardown(test_idle_closed_in_spread, start_idle_close,
						stop_clean),
		cmocka_unit_test_setup_teardown(test_idle_close_on_response, start_idle_close,
						stop_clean),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
