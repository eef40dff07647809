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

/* ---- option prefer-last-server, max-keep-alive-queue ---- */

static int start_prefer(void **state)
{
	h_start(CFG_HEAD
		"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n"
		"frontend fp\n  bind @DIR@/fp.sock\n  default_backend bp\n"
		"frontend fq\n  bind @DIR@/fq.sock\n  default_backend bq\n"
		"backend be\n  balance roundrobin\n"
		"  server s1 @DIR@/s1.sock\n  server s2 @DIR@/s2.sock\n"
		"backend bp\n  balance roundrobin\n  option prefer-last-server\n"
		"  server s1 @DIR@/s1.sock\n  server s2 @DIR@/s2.sock\n"
		"backend bq\n  balance roundrobin\n  option prefer-last-server\n"
		"  max-keep-alive-queue 0\n  timeout queue 10s\n"
		"  server s1 @DIR@/s1.sock maxconn 1\n  server s2 @DIR@/s2.sock\n"
		"frontend fp2\n  bind @DIR@/fp2.sock\n  default_backend bp2\n"
		"backend bp2\n  balance roundrobin\n  option prefer-last-server\n"
		"  timeout queue 10s\n"
		"  server s1 @DIR@/s1.sock maxconn 1\n  server s2 @DIR@/s2.sock\n");
	return 0;
}

/* One exchange of the current client on server connection <srv> (-1: a new
 * one, accepted on socket <sock>), answered <status>. */
static void exchange(int srv, int sock, int status)
{
	char res[128];

	h_client_sends(GET1);
	if (srv < 0)
		assert_true(h_server_accept_on(sock) >= 0);
	else
		h_server_use(srv);
	h_server_recv_all(sbuf, sizeof(sbuf));
	assert_non_null(strstr(sbuf, "GET /a"));
	snprintf(res, sizeof(res), "HTTP/1.1 %d X\r\nContent-Length: 2\r\n\r\nok", status);
	h_server_sends(res);
	h_client_recv_all(cbuf, sizeof(cbuf));
	snprintf(res, sizeof(res), "HTTP/1.1 %d X", status);
	assert_non_null(strstr(cbuf, res));
}

/* roundrobin: the second request goes to s2 on a new connection... */
static void test_prefer_off(void **state)
{
	h_client_connect("fe");
	exchange(-1, 0, 200);
	exchange(-1, 1, 200);
}

/* ... unless prefer-last-server: the same connection to s1 again */
static void test_prefer_last(void **state)
{
	h_client_connect("fp");
	exchange(-1, 0, 200);
	exchange(0, 0, 200);
	exchange(0, 0, 200);
	assert_false(h_server_pending(1));
}

/* without the option, after a 401 (or 407): the server that asked */
static void test_prefer_after_401(void **state)
{
	h_client_connect("fe");
	exchange(-1, 0, 401);
	exchange(0, 0, 200);   /* (NTLM-like: the credentials go back to it) */
	exchange(-1, 1, 200);  /* then load balancing again */
}

/* max-keep-alive-queue 0: s1 (maxconn 1) is busy with another client, so
 * the kept client's next request goes to s2 (here over the idle connection
 * b left there) instead of waiting for s1 */
static void test_ka_queue_0(void **state)
{
	int a, busy;

	a = h_client_connect("fq");
	exchange(-1, 0, 200);            /* a: s1, connection kept */
	h_client_connect("fq");
	exchange(-1, 1, 200);            /* b: s2 (roundrobin), server connection 1 */
	h_client_connect("fq");
	h_client_sends(GET1);            /* c: s1, left waiting for its answer */
	assert_true((busy = h_server_accept_on(0)) >= 0);
	h_client_use(a);
	exchange(1, 1, 200);             /* not queued for s1 */
	h_server_use(busy);
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(OK200);
	h_client_use(2);
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_non_null(strstr(cbuf, "200 OK"));
}

/* the same without the limit: the kept client waits in s1's queue */
static void test_ka_queue_unlimited(void **state)
{
	int a, busy;

	a = h_client_connect("fp2");
	exchange(-1, 0, 200);
	h_client_connect("fp2");
	exchange(-1, 1, 200);
	h_client_connect("fp2");
	h_client_sends(GET1);
	assert_true((busy = h_server_accept_on(0)) >= 0);
	h_client_use(a);
	h_client_sends(GET1);
	h_step();
	assert_int_equal(proxy_find("bp2", PR_CAP_BE)->servers->nbpend, 1);
	h_server_use(busy);
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(OK200);   /* s1 free again: a's request goes there, on */
	h_step();                /* a new connection or the one c left idle */
	if (h_server_pending(0))
		assert_true(h_server_accept_on(0) >= 0);
	h_server_recv_all(sbuf, sizeof(sbuf));
	assert_non_null(strstr(sbuf, "GET /a"));
	h_server_sends(OK200);
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_non_null(strstr(cbuf, "200 OK"));
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
		cmocka_unit_test_setup_teardown(test_prefer_off, start_prefer, stop_clean),
		cmocka_unit_test_setup_teardown(test_prefer_last, start_prefer, stop_clean),
		cmocka_unit_test_setup_teardown(test_prefer_after_401, start_prefer, stop_clean),
		cmocka_unit_test_setup_teardown(test_ka_queue_0, start_prefer, stop_clean),
		cmocka_unit_test_setup_teardown(test_ka_queue_unlimited, start_prefer, stop_clean),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
