/* The server side of streams under server state changes, through the
 * stream harness: a health check fed by a stream's own traffic ("observe")
 * that marks its server DOWN and shuts its sessions down, and a full
 * server's queue handed back to load balancing. Each once crashed or hung
 * the process (a stream freed under its caller; a requeue loop). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define H_FAIL(...) fail_msg(__VA_ARGS__)
#include "stream_harness.h"
#include "stream_cases.h"
#include <sluice/backend.h>
#include <sluice/common.h>
#include <sluice/server.h>

#define CFG_HEAD \
	"global\n  log @DIR@/log.sock local0\n" \
	"defaults\n  mode http\n  log global\n  option httplog\n" \
	"  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n" \
	"  timeout http-keep-alive 2s\n"

#define GET1 "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
#define OK200 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

static char cbuf[65536], sbuf[65536];

static struct server *find_srv(const char *be, const char *name)
{
	struct proxy *px = proxy_find(be, PR_CAP_BE);

	for (struct server *s = px ? px->servers : NULL; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* observe layer4: the refused connect marks s1 DOWN and shuts its sessions
 * down, the stream that failed included; it must not be freed under
 * stream_conn_failed(): its retry goes to s2 and the client gets s2's
 * answer. */
static int start_l4(void **state)
{
	h_start(CFG_HEAD
		"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n"
		"backend be\n  retries 3\n  option redispatch\n"
		"  server s1 @DIR@/s1.sock check inter 1h observe layer4 error-limit 1 "
		"on-error mark-down on-marked-down shutdown-sessions\n"
		"  server s2 @DIR@/s2.sock\n");
	return 0;
}

static void test_l4_markdown_spares_its_stream(void **state)
{
	char a[128], b[128];

	snprintf(a, sizeof(a), "%s/s1.sock", h.dir);
	snprintf(b, sizeof(b), "%s/s1.away", h.dir);
	assert_int_equal(rename(a, b), 0);   /* s1 now refuses at once */
	h_client_connect("fe");
	h_client_sends(GET1);
	assert_true(h_server_accept_on(1) >= 0);   /* the retry went to s2 */
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(OK200);
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_non_null(strstr(cbuf, "HTTP/1.1 200 OK"));
	assert_true(find_srv("be", "s1")->flags & SRV_F_DOWN);
	assert_int_equal(rename(b, a), 0);
}

/* observe layer7: a server that closes without answering is marked DOWN
 * from within the stream's own response analysis; the stream answers its
 * client (502) instead of being freed under http_srv_failed(). */
static int start_l7(void **state)
{
	h_start(CFG_HEAD
		"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n"
		"backend be\n"
		"  server s1 @DIR@/s1.sock check inter 1h observe layer7 error-limit 1 "
		"on-error mark-down on-marked-down shutdown-sessions\n");
	return 0;
}

static void test_l7_markdown_spares_its_stream(void **state)
{
	h_step();
	assert_true(h_server_accept_on(0) >= 0);   /* the health check's */
	h_client_connect("fe");
	h_client_sends(GET1);
	assert_true(h_server_accept_on(0) >= 0);   /* the request's */
	h_server_recv_all(sbuf, sizeof(sbuf));
	assert_non_null(strstr(sbuf, "GET /a"));
	h_server_close();
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_non_null(strstr(cbuf, "HTTP/1.1 502"));
	assert_true(find_srv("be", "s1")->flags & SRV_F_DOWN);
}

/* Two requests queued on s1 (maxconn 1, bound by a stick entry) when s1
 * is set to drain with option redispatch: they go back to load balancing
 * (s2), once each, instead of requeueing on s1 for ever. */
static int start_stick(void **state)
{
	h_start(CFG_HEAD
		"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n"
		"backend be\n  option redispatch\n  balance roundrobin\n"
		"  stick-table type integer size 10 expire 2s\n  stick on int(1)\n"
		"  timeout queue 30s\n"
		"  server s1 @DIR@/s1.sock maxconn 1\n  server s2 @DIR@/s2.sock\n");
	return 0;
}

static void test_drain_hands_queue_back(void **state)
{
	struct server *s1 = find_srv("be", "s1");

	h_client_connect("fe");
	h_client_sends(GET1);
	assert_true(h_server_accept_on(0) >= 0);   /* the first one sticks to s1 */
	h_client_connect("fe");
	h_client_sends(GET1);
	h_client_connect("fe");
	h_client_sends(GET1);
	h_step();
	assert_int_equal(s1->nbpend, 2);
	s1->flags |= SRV_F_DRAIN;   /* what "set server be/s1 state drain" does */
	alarm(10);                  /* a requeue loop would hang here */
	backend_srv_state_changed(s1);
	alarm(0);
	assert_int_equal(s1->nbpend, 0);
	assert_true(h_server_accept_on(1) >= 0);
	assert_true(h_server_accept_on(1) >= 0);
	h_reset_conns();
	h_advance(3000);   /* the stick entry expires */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_l4_markdown_spares_its_stream, start_l4,
						stop_clean),
		cmocka_unit_test_setup_teardown(test_l7_markdown_spares_its_stream, start_l7,
						stop_clean),
		cmocka_unit_test_setup_teardown(test_drain_hands_queue_back, start_stick,
						stop_clean),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
