/* Stream-level tests of the whole proxy (stream_harness.h): real streams on
 * the real event loop, with a client and servers driven byte by byte —
 * truncations, early responses, interim responses, idle server connections,
 * and every request and response cut at every byte. Each case ends with no
 * stream, no fd and no pooled object left. */
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

/* One frontend, one backend with server s1, keep-alive, log lines in the
 * harness (option httplog: the termination state is the 15th word). */
#define CFG_HEAD \
	"global\n  log @DIR@/log.sock local0\n" \
	"defaults\n  mode http\n  log global\n  option httplog\n" \
	"  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n" \
	"  timeout http-keep-alive 2s\n"
#define CFG_BASIC CFG_HEAD \
	"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n" \
	"backend be\n  server s1 @DIR@/s1.sock\n"

static char cbuf[65536], sbuf[65536];

static int start_basic(void **state)
{
	h_start(CFG_BASIC);
	return 0;
}

/* Asserts that <got> is exactly <want>, showing both if not. */
#define EXPECT_BYTES(got, want) do { \
	if (strcmp((got), (want)) != 0) \
		fail_msg("got\n[%s]\nexpected\n[%s]", (got), (want)); \
} while (0)

/* Steps until the client's socket shows the proxy's close (or gives up
 * after a few rounds): stepping is deterministic, so one recv suffices,
 * but the bytes are collected into <out> too. */
static inline size_t client_read_to_eof(char *out, size_t cap)
{
	size_t n = 0;

	for (int i = 0; i < 4 && !h_client_eof() && n + 1 < cap; i++)
		n += h_client_recv_all(out + n, cap - n);
	return n;
}

/* ---- basics ---- */

#define GET1 "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
#define HEAD10 "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
#define RES1 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

/* One GET on the current client that the proxy sends on a new server
 * connection: both sides see exactly the bytes of the other. */
static void exchange_on_new_conn(void)
{
	h_client_sends(GET1);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, GET1);
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
}

static void test_simple_get(void **state)
{
	h_client_connect("fe");
	exchange_on_new_conn();
	assert_false(h_client_eof());
	assert_int_equal(h_live_streams(), 1);   /* kept alive for the next request */
	h_client_close();
	assert_int_equal(h_live_streams(), 0);
}

static void test_keepalive_two_requests(void **state)
{
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
	h_client_sends("GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
	/* the same server connection carries the second request */
	assert_false(h_server_pending(0));
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
	assert_int_equal(h_live_streams(), 1);
}

/* The virtual clock: the keep-alive timeout ends an idle connection. */
static void test_keepalive_timeout(void **state)
{
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
	h_advance(1000);
	assert_int_equal(h_live_streams(), 1);
	h_advance(1500);
	assert_int_equal(h_live_streams(), 0);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, "");
	assert_true(h_client_eof());
}

/* ---- idle server connections ---- */

/* (Once a crash, SIGSEGV.) A server that sends bytes nobody asked for on a kept
 * connection while the client is idle (here a 408 then a close, as servers
 * do when their own keep-alive timeout strikes) must only lose that
 * connection: the client's next request goes to a new one. */
static void test_idle_server_stray_408(void **state)
{
	static const char res408[] = "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n"
				     "Connection: close\r\n\r\n";

	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
	/* the client is idle; its kept server connection speaks up */
	h_server_sends(res408);
	h_server_close();
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, "");   /* nothing reaches the idle client */
	assert_false(h_client_eof());
	assert_int_equal(h_live_streams(), 1);
	h_client_sends("GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
}

/* The same with the bare status line the brief's servers send, and no
 * close: the connection is dropped by the proxy all the same. */
static void test_idle_server_stray_bytes_no_close(void **state)
{
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	h_server_sends("HTTP/1.1 408 Request Timeout\r\n\r\n");
	h_server_recv_all(sbuf, sizeof(sbuf));
	assert_true(h_server_eof());     /* the proxy closed the spoiled connection */
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, "");
	assert_int_equal(h_live_streams(), 1);
	h_client_sends(GET1);
	h_server_accept();
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
}

/* A kept server connection closed quietly while the client is idle. */
static void test_idle_server_close(void **state)
{
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	h_server_close();
	assert_int_equal(h_live_streams(), 1);
	exchange_on_new_conn();
}

/* ---- truncated requests ---- */

/* A FIN in the middle of a request head: nothing reaches a server, the
 * client gets a 400 and its connection closes. */
static void test_fin_mid_head(void **state)
{
	h_client_connect("fe");
	h_client_sends("GET /a HTTP/1.1\r\nHost: x\r\nUser-Ag");
	h_client_shutw();
	client_read_to_eof(cbuf, sizeof(cbuf));
	assert_true(h_client_eof());
	assert_false(h_server_pending(0));
	assert_int_equal(h_live_streams(), 0);
	if (cbuf[0])
		assert_true(strncmp(cbuf, "HTTP/1.1 400 ", 13) == 0);
}

/* The end of a request cut short by the client's FIN: as in HAProxy (a
 * truncated message is an abort, logged CD), the server connection closes
 * at once, the client gets at most a 400 and its connection closes too;
 * nobody waits for "timeout server" (today: a 504 after 5s, logged sH). */
static void expect_client_abort(void)
{
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, "");
	assert_true(h_server_eof());
	client_read_to_eof(cbuf, sizeof(cbuf));
	if (cbuf[0] && strncmp(cbuf, "HTTP/1.1 400 ", 13) != 0)
		fail_msg("the client got\n[%s]", cbuf);
	assert_true(h_client_eof());
	assert_int_equal(h_live_streams(), 0);
}

/* The client sends <req> (all of it reaches the server), then its FIN in
 * the middle of the message: a client abort. */
static void client_fin_after(const char *req)
{
	h_client_connect("fe");
	h_client_sends(req);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, req);
	h_client_shutw();
	expect_client_abort();
}

/* A FIN in the middle of a Content-Length body. */
static void test_fin_mid_body(void **state)
{
	client_fin_after("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello");
}

/* A FIN in the middle of a chunk. */
static void test_fin_mid_chunk(void **state)
{
	client_fin_after("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
			 "\r\n5\r\nhel");
}

/* A FIN in the middle of a chunk-size line. */
static void test_fin_mid_chunk_size(void **state)
{
	client_fin_after("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
			 "\r\n5\r\nhello\r\n1");
}

/* ---- early and interim responses ---- */

/* The server answers before the request body is complete: the response
 * reaches the client at once, unchanged. Then either the rest of the body
 * still goes up and the connection serves a next request (HAProxy), or both
 * connections close (sluice today: the rest of the body cannot be told from
 * a next request); never does a byte of the next request reach the server
 * as if it were body, nor a byte of the body as a request. */
static void test_response_before_body_end(void **state)
{
	h_client_connect("fe");
	h_client_sends("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhel");
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
	h_client_sends("lo worl");
	h_server_recv_all(sbuf, sizeof(sbuf));
	if (h_client_eof() || h_live_streams() == 0) {
		/* closed: the server connection with it, and nothing was sent */
		assert_true(sbuf[0] == 0 || strcmp(sbuf, "lo worl") == 0);
		h_server_recv_all(sbuf, sizeof(sbuf));
		assert_true(h_server_eof());
		assert_int_equal(h_live_streams(), 0);
		return;
	}
	EXPECT_BYTES(sbuf, "lo worl");
	h_client_sends(GET1);
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, GET1);
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
}

/* The server answers early and closes: the client gets the response and
 * its connection ends (the body can no longer go anywhere). */
static void test_response_before_body_then_server_close(void **state)
{
	static const char res[] = "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n"
				  "Connection: close\r\n\r\n";

	h_client_connect("fe");
	h_client_sends("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhel");
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	h_server_sends(res);
	h_server_close();
	client_read_to_eof(cbuf, sizeof(cbuf));
	assert_true(strncmp(cbuf, "HTTP/1.1 413 Payload Too Large\r\n", 32) == 0);
	assert_true(h_client_eof());
	assert_int_equal(h_live_streams(), 0);
}

static const char R100[] = "HTTP/1.1 100 Continue\r\n\r\n";
static const char R103[] = "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n";

/* 100-continue: the interim response, then the body, then the final one. */
static void test_100_continue(void **state)
{
	static const char head[] = "POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
				   "Expect: 100-continue\r\n\r\n";

	h_client_connect("fe");
	h_client_sends(head);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, head);
	h_server_sends(R100);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, R100);
	h_client_sends("hello");
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, "hello");
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
	h_client_sends(GET1);
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, GET1);
}

/* 100, 103, 103 then 200, each in its own write. */
static void test_1xx_sequence(void **state)
{
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_sends(R100);
	h_server_sends(R103);
	h_server_sends(R103);
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	{
		char want[512];

		snprintf(want, sizeof(want), "%s%s%s%s", R100, R103, R103, RES1);
		EXPECT_BYTES(cbuf, want);
	}
	h_client_sends(GET1);
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, GET1 GET1);
}

/* Twenty 103 and the 200 in one write: all reach the client, in order.
 * (Today the first 8 do, then the stream stalls until "timeout server"
 * (sD): http_process() looks at 8 interim heads per call and nothing
 * calls it again for the rest, already read.) */
static void test_1xx_storm_one_write(void **state)
{
	char storm[4096] = "";

	for (int i = 0; i < 20; i++)
		strcat(storm, R103);
	strcat(storm, RES1);
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_sends(storm);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, storm);
	h_client_sends(GET1);
	h_server_recv_all(sbuf, sizeof(sbuf));
	EXPECT_BYTES(sbuf, GET1 GET1);
	h_server_sends(RES1);
	h_client_recv_all(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, RES1);
}

/* ---- truncated responses ---- */

/* The server sends <first> then <rest> (NULL: nothing more) in reads of
 * their own after reading the request, then closes before the response is
 * complete: the client gets what came, then its connection is closed (the
 * response can never complete) and the stream ends, without waiting for
 * any timeout. (This once leaked the stream forever.) */
static void server_closes_early(const char *first, const char *rest)
{
	char want[512];

	snprintf(want, sizeof(want), "%s%s", first, rest ? rest : "");
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));   /* a real server reads first */
	h_server_sends(first);
	if (rest)
		h_server_sends(rest);
	h_server_close();
	client_read_to_eof(cbuf, sizeof(cbuf));
	EXPECT_BYTES(cbuf, want);
	assert_true(h_client_eof());
	assert_int_equal(h_live_streams(), 0);
}

/* In the middle of a Content-Length body, the head in a read of its own. */
static void test_server_close_mid_body(void **state)
{
	server_closes_early(HEAD10, "hel");
}

/* The same when nothing of the body came. */
static void test_server_close_after_head(void **state)
{
	server_closes_early(HEAD10, NULL);
}

/* The same with the head and part of the body in one read. (A close with
 * the request unread is a reset, which always worked.) */
static void test_server_close_mid_body_one_read(void **state)
{
	server_closes_early("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", NULL);
}

/* The same in the middle of a chunk. */
static void test_server_close_mid_chunk(void **state)
{
	server_closes_early("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", NULL);
}

/* The server closes in the middle of the response head: a 502, after which
 * the client connection stays open (as after any 5xx the proxy makes, see
 * reg-tests/http/err_503_keepalive.vtc) and serves the next request. */
static void test_server_close_mid_head(void **state)
{
	h_client_connect("fe");
	h_client_sends(GET1);
	h_server_accept();
	h_server_recv_all(sbuf, sizeof(sbuf));   /* a real server reads first */
	h_server_sends("HTTP/1.1 200 OK\r\nContent-Le");
	h_server_close();
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_true(strncmp(cbuf, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0);
	assert_true(strstr(h_log(), " 502 ") && strstr(h_log(), " SH-- "));
	assert_false(h_client_eof());
	exchange_on_new_conn();
}

/* ---- pipelining ---- */

static int start_local(void **state)
{
	h_start(CFG_HEAD "frontend fe\n  bind @DIR@/fe.sock\n"
		"  http-request return status 200 content-type text/plain string ok\n"
		"  default_backend be\nbackend be\n  server s1 @DIR@/s1.sock\n");
	return 0;
}

/* A hundred pipelined requests in one write, each answered by the proxy
 * itself: every one gets its response without anything else happening.
 * (Today 64 are answered, then the stream stalls until "timeout client":
 * http_process() yields after 64 rounds with the rest already read, and
 * no event comes to resume it.) */
static void test_pipelined_local_100(void **state)
{
	static char req[100 * sizeof(GET1)];
	size_t n = 0, got;

	req[0] = 0;
	for (int i = 0; i < 100; i++)
		strcat(req, GET1);
	h_client_connect("fe");
	h_client_sends(req);
	while ((got = h_client_recv_all(cbuf, sizeof(cbuf))) > 0)
		for (const char *p = cbuf; (p = strstr(p, "HTTP/1.1 200 ")); p++)
			n++;
	assert_int_equal(n, 100);
	assert_false(h_client_eof());
}

/* ---- every request and response cut at every byte ---- */

/* An exchange: the requests the client sends back to back (pipelined),
 * each answered in turn by the response of the same index. */
struct exchange {
	const char *name;
	const char *req[2];
	const char *res[2];
	int         n;
};

static const struct exchange exchanges[] = {
	{ "content-length",
	  { "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" },
	  { "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-A: b\r\n\r\nabc" }, 1 },
	{ "chunked",
	  { "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nT: v\r\n\r\n" },
	  { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n10\r\n"
	    "0123456789abcdef\r\n0\r\n\r\n" }, 1 },
	{ "keep-alive pair",
	  { "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n",
	    "GET /2 HTTP/1.1\r\nHost: x\r\nCookie: a=b\r\n\r\n" },
	  { "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n" }, 2 },
};

/* Reads from the current server until <want> bytes came (or nothing more
 * comes); returns the count. */
static size_t server_read_n(char *out, size_t want)
{
	size_t got = 0, n;

	do {
		n = h_server_recv_all(out + got, sizeof(sbuf) - got);
		got += n;
	} while (n && got < want);
	return got;
}

static size_t client_read_n(char *out, size_t want)
{
	size_t got = 0, n;

	do {
		n = h_client_recv_all(out + got, sizeof(cbuf) - got);
		got += n;
	} while (n && got < want);
	return got;
}

/* Plays exchange <x> on a fresh proxy: the client's bytes in two writes
 * cut at <ccut>, each response in two writes cut at <scut> (past the end:
 * one write). Each server must get exactly its request, the client exactly
 * the responses, and nothing may be left once both close. */
static void play_cut(const struct exchange *x, size_t ccut, size_t scut)
{
	char all[1024];
	size_t len;

	len = (size_t)snprintf(all, sizeof(all), "%s%s", x->req[0], x->n > 1 ? x->req[1] : "");
	h_start(CFG_BASIC);
	h_client_connect("fe");
	h_client_send(all, MIN(ccut, len));
	if (ccut < len)
		h_client_send(all + ccut, len - ccut);
	for (int i = 0; i < x->n; i++) {
		size_t rl = strlen(x->res[i]);

		if (i == 0)
			h_server_accept();
		server_read_n(sbuf, strlen(x->req[i]));
		if (strcmp(sbuf, x->req[i]) != 0)
			fail_msg("%s, cut %zu/%zu: request %d reached the server as\n[%s]", x->name,
				 ccut, scut, i, sbuf);
		h_server_send(x->res[i], MIN(scut, rl));
		if (scut < rl)
			h_server_send(x->res[i] + scut, rl - scut);
		client_read_n(cbuf, rl);
		if (strcmp(cbuf, x->res[i]) != 0)
			fail_msg("%s, cut %zu/%zu: response %d reached the client as\n[%s]", x->name,
				 ccut, scut, i, cbuf);
	}
	assert_false(h_server_pending(0));   /* one server connection did it all */
	assert_int_equal(h_live_streams(), 1);
	h_client_close();
	assert_int_equal(h_live_streams(), 0);
	{
		const char *leak = h_stop();

		if (leak)
			fail_msg("%s, cut %zu/%zu: left behind: %s", x->name, ccut, scut, leak);
	}
}

static void test_cut_every_byte(void **state)
{
	int plays = 0;

	for (size_t e = 0; e < ARRAY_SIZE(exchanges); e++) {
		const struct exchange *x = &exchanges[e];
		size_t clen = strlen(x->req[0]) + (x->n > 1 ? strlen(x->req[1]) : 0);
		size_t slen = strlen(x->res[0]);

		for (size_t cut = 0; cut <= clen; cut++)
			play_cut(x, cut, SIZE_MAX);
		for (size_t cut = 0; cut <= slen; cut++)
			play_cut(x, SIZE_MAX, cut);
		plays += (int)(clen + slen + 2);
	}
	assert_true(plays > 300);   /* every cut was played */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_simple_get, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_keepalive_two_requests, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_keepalive_timeout, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_idle_server_stray_408, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_idle_server_stray_bytes_no_close, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_idle_server_close, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_fin_mid_head, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_fin_mid_body, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_fin_mid_chunk, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_fin_mid_chunk_size, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_response_before_body_end, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_response_before_body_then_server_close, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_100_continue, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_1xx_sequence, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_1xx_storm_one_write, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_server_close_mid_body, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_server_close_after_head, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_server_close_mid_body_one_read, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_server_close_mid_chunk, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_server_close_mid_head, start_basic, stop_clean),
		cmocka_unit_test_setup_teardown(test_pipelined_local_100, start_local, stop_clean),
		cmocka_unit_test(test_cut_every_byte),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
