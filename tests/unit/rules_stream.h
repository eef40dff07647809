/* Helpers shared by the rules-engine unit tests (test_sample.c,
 * test_acl.c, test_rules.c): a stream from client 192.0.2.7:40000 to
 * 198.51.100.1:80 made by the HTTP/1 stream protocol's init, request/response heads parsed
 * from raw text (and, for msg_load(), published in its transaction as during
 * the rules), and the group setup/teardown and per-test reset() that go with
 * them. Include after <cmocka.h>. */
#ifndef SLUICE_TESTS_RULES_STREAM_H
#define SLUICE_TESTS_RULES_STREAM_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/log.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/stream.h>

#include "cfg_capture.h"

/* The test stream: no socket, no server. Live from strm_new() until the next
 * one or reset(), so that what the rules left in it can be read. */
static struct stream strm;
static int strm_live;

static inline void strm_end(void)
{
	if (strm_live) {
		strm.txn->req_head = strm.txn->res_head = NULL;
		strm.proto->release(&strm);
	}
	strm_live = 0;
}

static inline struct stream *strm_new(struct proxy *px)
{
	struct sockaddr_in *cli = (struct sockaddr_in *)&strm.cli_addr;
	static struct sockaddr_storage dst_ss;
	struct sockaddr_in *dst = (struct sockaddr_in *)&dst_ss;

	strm_end();
	memset(&strm, 0, sizeof(strm));
	strm.fe = strm.be = px;
	strm.cli.fd = strm.srv.fd = -1;
	cli->sin_family = AF_INET;
	cli->sin_port = htons(40000);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.7", &cli->sin_addr), 1);
	dst->sin_family = AF_INET;
	dst->sin_port = htons(80);
	assert_int_equal(inet_pton(AF_INET, "198.51.100.1", &dst->sin_addr), 1);
	strm.dst = &dst_ss;   /* known, as after a PROXY header */
	strm.proto = stream_proto_of(PR_MODE_HTTP);
	assert_int_equal(strm.proto->init(&strm), 0);
	assert_non_null(http_txn_new(&strm));
	assert_non_null(strm.txn);
	strm_live = 1;
	return &strm;
}

/* A message head parsed from raw text, editable within its arena. */
struct msg {
	char              buf[4096];
	struct h1_hdr     hdrs[64];
	struct h1_msg     m;
	struct http_field f[64];
	char              arena[1024];
	struct http_head  h;
};

static struct msg req_msg, res_msg;

/* Parses <raw> (a request, or a response when it starts with "HTTP/") into
 * <msg>, leaving <arena_size> bytes of its arena for edits. */
static inline struct http_head *msg_parse(struct msg *msg, const char *raw, uint32_t arena_size)
{
	int resp = strncmp(raw, "HTTP/", 5) == 0;
	size_t len = strlen(raw);

	assert_true(len < sizeof(msg->buf) && arena_size <= sizeof(msg->arena));
	memcpy(msg->buf, raw, len);
	h1_msg_init(&msg->m, msg->hdrs, 64, resp, H1_M_GET);
	if (h1_parse(msg->buf, len, len, &msg->m) <= 0)
		fail_msg("test message does not parse: %s", msg->m.err_msg ? msg->m.err_msg : "?");
	http_head_init(&msg->h, msg->buf, &msg->m, msg->f, 64, msg->arena, arena_size);
	return &msg->h;
}

/* Parses <raw> (a request, or a response when it starts with "HTTP/") and
 * publishes it as the head under analysis of the test stream. */
static inline struct http_head *msg_load(const char *raw)
{
	int resp = strncmp(raw, "HTTP/", 5) == 0;
	struct msg *msg = resp ? &res_msg : &req_msg;
	struct http_head *h = msg_parse(msg, raw, sizeof(msg->arena));

	assert_true(strm_live);
	if (resp)
		strm.txn->res_head = h;
	else
		strm.txn->req_head = h;
	return h;
}

static inline int group_setup(void **state)
{
	/* The analyser reads the loop's clock (transaction times). */
	global.loop = ev_loop_new(EVFLAG_AUTO);
	assert_non_null(global.loop);
	postparse();   /* what start-up sets up once (the HTTP scratch space) */
	pristine = global;
	restore_global();   /* what post-parse allocated in struct global */
	pristine.pidfile = pristine.chroot = pristine.node = pristine.desc = NULL;
	global = pristine;
	return 0;
}

static inline int group_teardown(void **state)
{
	ev_loop_destroy(global.loop);
	global.loop = NULL;
	pool_flush_all();
	return 0;
}

/* Per-test teardown: the stream, what parsing made, struct global. */
static inline int reset(void **state)
{
	strm_end();
	proxy_free_all();
	log_list_free(&global.loggers);
	restore_global();   /* frees global.node, set by post-parse */
	return 0;
}

/* Starts afresh, then parses <head> followed by <lines>. Returns the
 * number of errors. */
static inline int parse_after(const char *head, const char *lines)
{
	char text[4096];

	reset(NULL);
	snprintf(text, sizeof(text), "%s%s", head, lines);
	return parse(text);
}

#endif
