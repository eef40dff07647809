/* set-nice on real streams (stream_harness.h): when several streams have
 * events ready in the same loop iteration, the one of the lowest nice is
 * served first, whatever order the events came in; the watchers of a
 * stream take the priority its nice maps to, a server connection made
 * after the rule too, and a kept-alive connection's next request starts
 * from the bind line's nice again. */
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
#include <sluice/http_ana.h>

/* Each request's log line is its path. */
#define CFG \
	"defaults\n  mode http\n" \
	"  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n" \
	"frontend fe\n  bind @DIR@/fe.sock\n  log @DIR@/log.sock local0\n" \
	"  log-format \"P %HP\"\n" \
	"  http-request set-nice -1024 if { path /hi }\n" \
	"  http-request set-nice 1024 if { path /lo }\n" \
	"  http-request set-nice 300 if { path /mid }\n" \
	"  default_backend be\n" \
	"backend be\n  server s1 @DIR@/s1.sock\n"

#define RES "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

static int start(void **state)
{
	h_start(CFG);
	return 0;
}

/* The stream whose request is <path>, among the live ones. */
static struct stream *stream_of(const char *path)
{
	for (struct stream *s = stream_first(); s; s = s->next)
		if (s->txn && s->txn->reqline && strstr(s->txn->reqline, path))
			return s;
	return NULL;
}

/* Clients /lo and /hi (in that order, or the other when <swap>) have their
 * requests on server connections; both responses are written before the
 * loop runs, /hi's first when <hi_first>, so that both server sockets are
 * ready in the same iteration: /hi must be logged (its exchange ended)
 * first, whatever the orders. */
static void race(int swap, int hi_first)
{
	const char *first = swap ? "/hi" : "/lo", *second = swap ? "/lo" : "/hi";
	char req[64], buf[256];
	int srv[2];
	const char *log, *hi, *lo;

	for (int i = 0; i < 2; i++) {
		h_client_connect("fe");
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", i ? second : first);
		h_client_sends(req);
		srv[i] = h_server_accept();
		h_server_recv_all(buf, sizeof(buf));
		assert_non_null(strstr(buf, i ? second : first));
	}
	/* the libev priorities the nice values give */
	assert_int_equal(ev_priority(&stream_of("/hi")->srv.io), EV_MAXPRI);
	assert_int_equal(ev_priority(&stream_of("/hi")->cli.io), EV_MAXPRI);
	assert_int_equal(ev_priority(&stream_of("/hi")->timer), EV_MAXPRI);
	assert_int_equal(ev_priority(&stream_of("/lo")->srv.io), EV_MINPRI);
	/* both answers in the kernel before the loop looks */
	for (int k = 0; k < 2; k++) {
		/* srv[0] is the first client's, srv[1] the second's */
		int h1 = swap ? 0 : 1, i = (k == 0) == !!hi_first ? h1 : 1 - h1;

		assert_int_equal(write(h.srv[srv[i]].fd, RES, strlen(RES)), (ssize_t)strlen(RES));
	}
	h_step();
	log = h_log();
	hi = strstr(log, "P /hi");
	lo = strstr(log, "P /lo");
	assert_non_null(hi);
	assert_non_null(lo);
	if (hi > lo)
		fail_msg("/lo was served before /hi:\n%s", log);
	for (int i = 0; i < 2; i++) {
		h_client_use(i);
		h_client_recv_all(buf, sizeof(buf));
		assert_non_null(strstr(buf, "ok"));
	}
}

static void test_order(void **state)
{
	race(0, 0);
}

static void test_order_hi_written_first(void **state)
{
	race(0, 1);
}

static void test_order_hi_connected_first(void **state)
{
	race(1, 0);
}

static void test_order_hi_first_both(void **state)
{
	race(1, 1);
}

/* A request's nice ends with it: the next one on the same connection is
 * back at the priority of the bind line's nice (0 here). */
static void test_nice_per_request(void **state)
{
	char buf[256];
	struct stream *s;

	h_client_connect("fe");
	h_client_sends("GET /mid HTTP/1.1\r\nHost: x\r\n\r\n");
	h_server_accept();
	h_server_recv_all(buf, sizeof(buf));
	s = stream_of("/mid");
	assert_non_null(s);
	assert_int_equal(s->nice, 300);
	assert_int_equal(ev_priority(&s->cli.io), -1);
	h_server_sends(RES);
	h_client_recv_all(buf, sizeof(buf));
	h_client_sends("GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
	h_server_recv_all(buf, sizeof(buf));
	s = stream_of("/other");
	assert_non_null(s);
	assert_int_equal(s->nice, 0);
	assert_int_equal(ev_priority(&s->cli.io), 0);
	assert_int_equal(ev_priority(&s->srv.io), 0);
	h_server_sends(RES);
	h_client_recv_all(buf, sizeof(buf));
}

/* Mode tcp: tcp-request content set-nice raises the connection's
 * watchers once its data is read, tcp-response content set-nice lowers
 * them once the server's is. */
#define CFG_TCP \
	"defaults\n  mode tcp\n" \
	"  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n" \
	"frontend fe\n  bind @DIR@/fe.sock\n" \
	"  tcp-request inspect-delay 5s\n" \
	"  tcp-request content set-nice -1024 if { req.len ge 4 }\n" \
	"  tcp-request content accept if { req.len ge 4 }\n" \
	"  default_backend be\n" \
	"backend be\n" \
	"  tcp-response inspect-delay 5s\n" \
	"  tcp-response content set-nice 1024 if { res.len ge 4 }\n" \
	"  tcp-response content accept if { res.len ge 4 }\n" \
	"  server s1 @DIR@/s1.sock\n"

static int start_tcp(void **state)
{
	h_start(CFG_TCP);
	return 0;
}

static void test_tcp_nice(void **state)
{
	char buf[64];
	struct stream *s;

	h_client_connect("fe");
	h_client_sends("pi");
	s = stream_first();
	assert_non_null(s);
	assert_int_equal(s->nice, 0);
	assert_int_equal(ev_priority(&s->cli.io), 0);
	h_client_sends("ng");
	h_server_accept();
	h_server_recv_all(buf, sizeof(buf));
	assert_memory_equal(buf, "ping", 4);
	assert_int_equal(s->nice, -1024);
	assert_int_equal(ev_priority(&s->cli.io), EV_MAXPRI);
	assert_int_equal(ev_priority(&s->srv.io), EV_MAXPRI);
	assert_int_equal(ev_priority(&s->timer), EV_MAXPRI);
	h_server_sends("pong");
	h_client_recv_all(buf, sizeof(buf));
	assert_memory_equal(buf, "pong", 4);
	assert_int_equal(s->nice, 1024);
	assert_int_equal(ev_priority(&s->cli.io), EV_MINPRI);
	assert_int_equal(ev_priority(&s->srv.io), EV_MINPRI);
	assert_int_equal(ev_priority(&s->timer), EV_MINPRI);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order, start, stop_clean),
		cmocka_unit_test_setup_teardown(test_order_hi_written_first, start, stop_clean),
		cmocka_unit_test_setup_teardown(test_order_hi_connected_first, start, stop_clean),
		cmocka_unit_test_setup_teardown(test_order_hi_first_both, start, stop_clean),
		cmocka_unit_test_setup_teardown(test_nice_per_request, start, stop_clean),
		cmocka_unit_test_setup_teardown(test_tcp_nice, start_tcp, stop_clean),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
