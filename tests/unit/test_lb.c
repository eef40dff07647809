/* Unit tests for the load-balancing algorithms (src/proxy/lb.c): weighted
 * round robin counts, leastconn, first, source hashing stickiness, and the
 * consistent-hashing property that only the keys of a lost server move. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/backend.h>
#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_head.h>
#include <sluice/lb.h>
#include <sluice/persist.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stream.h>

static struct proxy *load(const char *text)
{
	proxy_free_all();
	assert_int_equal(cfg_parse_text("lb.cfg", text, strlen(text)), 0);
	assert_int_equal(cfg_postparse(), 0);
	return proxy_find("be", PR_CAP_BE);
}

static struct server *srv_named(struct proxy *px, const char *name)
{
	for (struct server *s = px->servers; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	fail_msg("no server %s", name);
	return NULL;
}

static struct server *pick_src(struct proxy *px, const struct sockaddr_storage *a)
{
	struct lb_key key = { .src = a };

	return lb_pick(px, &key);
}

static struct sockaddr_storage ip4(uint32_t n)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0x0a000000u + n);
	return ss;
}

static void test_roundrobin_weights(void **state)
{
	struct proxy *px = load("backend be\n  server a 127.0.0.1:1 weight 1\n"
				"  server b 127.0.0.1:2 weight 2\n  server c 127.0.0.1:3 weight 3\n");
	int n[3] = { 0 };

	for (int i = 0; i < 600; i++) {
		struct server *s = lb_pick(px, NULL);

		n[s->name[0] - 'a']++;
	}
	assert_int_equal(n[0], 100);
	assert_int_equal(n[1], 200);
	assert_int_equal(n[2], 300);
	/* Weight 0 or maintenance: never picked. */
	srv_named(px, "c")->uweight = 0;
	srv_named(px, "a")->flags |= SRV_F_MAINT;
	lb_recalc(px);
	for (int i = 0; i < 50; i++)
		assert_string_equal(lb_pick(px, NULL)->name, "b");
}

static void test_leastconn(void **state)
{
	struct proxy *px = load("backend be\n  balance leastconn\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n"
				"  server c 127.0.0.1:3 weight 2\n");

	srv_named(px, "a")->counters.cur_sess = 5;
	srv_named(px, "b")->counters.cur_sess = 1;
	srv_named(px, "c")->counters.cur_sess = 4;  /* 2 per unit of weight */
	for (int i = 0; i < 10; i++)
		assert_string_equal(lb_pick(px, NULL)->name, "b");
	srv_named(px, "b")->counters.cur_sess = 3;  /* c: 4/2 = 2 < 3 */
	assert_string_equal(lb_pick(px, NULL)->name, "c");
	/* Ties rotate instead of always taking the first server. */
	srv_named(px, "a")->counters.cur_sess = srv_named(px, "b")->counters.cur_sess = 0;
	srv_named(px, "c")->counters.cur_sess = 0;
	int seen[3] = { 0 };
	for (int i = 0; i < 30; i++)
		seen[lb_pick(px, NULL)->name[0] - 'a']++;
	assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
}

static void test_first(void **state)
{
	struct proxy *px = load("backend be\n  balance first\n"
				"  server b 127.0.0.1:2 id 2\n  server a 127.0.0.1:1 id 1\n");

	for (int i = 0; i < 5; i++)
		assert_string_equal(lb_pick(px, NULL)->name, "a");
	srv_named(px, "a")->flags |= SRV_F_DOWN;
	lb_recalc(px);
	assert_string_equal(lb_pick(px, NULL)->name, "b");
}

/* Source hashing: the same client always lands on the same server. */
static void check_sticky(struct proxy *px)
{
	for (uint32_t k = 0; k < 200; k++) {
		struct sockaddr_storage a = ip4(k);
		struct server *s = pick_src(px, &a);

		for (int rep = 0; rep < 3; rep++)
			assert_ptr_equal(pick_src(px, &a), s);
	}
}

static void test_source_map_based(void **state)
{
	struct proxy *px = load("backend be\n  balance source\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n  server c 127.0.0.1:3\n");
	int n[3] = { 0 };

	check_sticky(px);
	for (uint32_t k = 0; k < 3000; k++) {
		struct sockaddr_storage a = ip4(k * 7919);

		n[pick_src(px, &a)->name[0] - 'a']++;
	}
	for (int i = 0; i < 3; i++)
		assert_true(n[i] > 500);  /* every server gets a fair share */
}

static void test_source_consistent_moves_few_keys(void **state)
{
	struct proxy *px = load("backend be\n  balance source\n  hash-type consistent sdbm avalanche\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n"
				"  server c 127.0.0.1:3\n  server d 127.0.0.1:4\n");
	enum { KEYS = 4000 };
	static struct server *before[KEYS];
	int moved = 0, on_d = 0;

	check_sticky(px);
	for (uint32_t k = 0; k < KEYS; k++) {
		struct sockaddr_storage a = ip4(k);

		before[k] = pick_src(px, &a);
		on_d += before[k] == srv_named(px, "d");
	}
	srv_named(px, "d")->flags |= SRV_F_DOWN;
	lb_recalc(px);
	for (uint32_t k = 0; k < KEYS; k++) {
		struct sockaddr_storage a = ip4(k);
		struct server *s = pick_src(px, &a);

		assert_ptr_not_equal(s, srv_named(px, "d"));
		if (s != before[k]) {
			moved++;
			/* Only the keys of the lost server move. */
			assert_ptr_equal(before[k], srv_named(px, "d"));
		}
	}
	assert_int_equal(moved, on_d);
	/* About 1/N of the keys: between 1/8 and 3/8 for N = 4. */
	assert_true(moved > KEYS / 8 && moved < 3 * KEYS / 8);
}

static void test_random_draws(void **state)
{
	struct proxy *px = load("backend be\n  balance random(3)\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n");
	int n[2] = { 0 };

	assert_int_equal(px->lb.draws, 3);
	srv_named(px, "a")->counters.cur_sess = 100;
	for (int i = 0; i < 200; i++)
		n[lb_pick(px, NULL)->name[0] - 'a']++;
	/* With 3 draws the loaded server wins only when every draw hits it. */
	assert_true(n[1] > n[0]);
}

static void test_backup_fallback(void **state)
{
	struct proxy *px = load("backend be\n  balance leastconn\n  server a 127.0.0.1:1\n"
				"  server b1 127.0.0.1:2 backup\n  server b2 127.0.0.1:3 backup\n");

	assert_string_equal(lb_pick(px, NULL)->name, "a");
	srv_named(px, "a")->flags |= SRV_F_DOWN;
	lb_recalc(px);
	assert_string_equal(lb_pick(px, NULL)->name, "b1");
}

static void test_hash_functions(void **state)
{
	/* Reference values of the public definitions. */
	assert_int_equal(lb_hash(LB_H_CRC32, 0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(lb_hash(LB_H_DJB2, 0, "", 0), 5381u);
	assert_int_equal(lb_hash(LB_H_SDBM, 0, "a", 1), 97u);
	assert_int_not_equal(lb_hash(LB_H_SDBM, 1, "a", 1), 97u);
	/* wt6: values HAProxy 2.6's wt6 converter gives for the same input. */
	assert_int_equal(lb_hash(LB_H_WT6, 0, "123456789", 9), 2225171485u);
	assert_int_equal(lb_hash(LB_H_WT6, 0, "a", 1), 1900802597u);
	assert_int_equal(lb_hash(LB_H_WT6, 0, "www.example.com", 15), 612436471u);
	assert_int_equal(lb_hash(LB_H_WT6, 0, "/abc/def?x=1", 12), 3873605208u);
}

/* A request head view with URI <uri> and up to two header fields. */
static struct http_head req_head(struct http_field *f, const char *uri, const char *n1,
				 const char *v1)
{
	struct http_head h;

	memset(&h, 0, sizeof(h));
	h.sl[HTTP_SL_METH] = (struct http_str){ "GET", 3 };
	h.sl[HTTP_SL_URI] = (struct http_str){ uri, (uint32_t)strlen(uri) };
	h.sl[HTTP_SL_RQVER] = (struct http_str){ "HTTP/1.1", 8 };
	h.f = f;
	h.maxf = 2;
	if (n1) {
		f[0].n = (struct http_str){ n1, (uint32_t)strlen(n1) };
		f[0].v = (struct http_str){ v1, (uint32_t)strlen(v1) };
		h.nf = 1;
	}
	return h;
}

/* The hash of the request element, or -1 when absent. */
static int64_t http_key(struct proxy *px, const char *uri, const char *n1, const char *v1)
{
	struct http_field f[2];
	struct http_head h = req_head(f, uri, n1, v1);
	uint32_t hash;

	return lb_http_hash(px, &h, &hash) ? (int64_t)hash : -1;
}

static uint32_t H(const char *s)
{
	return lb_hash(LB_H_SDBM, 0, s, strlen(s));
}

static void test_balance_uri(void **state)
{
	struct proxy *px = load("backend be\n  mode http\n  balance uri\n"
				"  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n");

	assert_int_equal(px->lb.algo, LB_URI);
	assert_int_equal(http_key(px, "/a/b?x=1", NULL, NULL), H("/a/b"));
	px = load("backend be\n  mode http\n  balance uri whole\n  server a 127.0.0.1:1\n");
	assert_int_equal(http_key(px, "/a/b?x=1", NULL, NULL), H("/a/b?x=1"));
	px = load("backend be\n  mode http\n  balance uri depth 2\n  server a 127.0.0.1:1\n");
	assert_int_equal(http_key(px, "/a/b/c/d", NULL, NULL), H("/a/b"));
	assert_int_equal(http_key(px, "/a", NULL, NULL), H("/a"));
	px = load("backend be\n  mode http\n  balance uri len 3\n  server a 127.0.0.1:1\n");
	assert_int_equal(http_key(px, "/abcdef", NULL, NULL), H("/ab"));
	px = load("backend be\n  mode http\n  balance uri path-only\n  server a 127.0.0.1:1\n");
	assert_int_equal(http_key(px, "http://h:80/p/q?z", NULL, NULL), H("/p/q"));
	assert_int_equal(http_key(px, "/p/q", NULL, NULL), H("/p/q"));
	px = load("backend be\n  mode http\n  balance uri\n  server a 127.0.0.1:1\n");
	assert_int_equal(http_key(px, "http://h:80/p/q?z", NULL, NULL), H("http://h:80/p/q"));
}

static void test_balance_url_param_hdr(void **state)
{
	struct proxy *px = load("backend be\n  mode http\n  balance url_param uid\n"
				"  server a 127.0.0.1:1\n");

	assert_int_equal(http_key(px, "/p?x=1&uid=42&y", NULL, NULL), H("42"));
	assert_int_equal(http_key(px, "/p?uid=7", NULL, NULL), H("7"));
	assert_int_equal(http_key(px, "/p?xuid=7", NULL, NULL), -1);
	assert_int_equal(http_key(px, "/uid=7", NULL, NULL), -1);
	px = load("backend be\n  mode http\n  balance hdr(Host)\n  server a 127.0.0.1:1\n");
	assert_string_equal(px->lb.arg, "Host");
	assert_int_equal(http_key(px, "/", "host", "www.1wt.eu"), H("www.1wt.eu"));
	assert_int_equal(http_key(px, "/", "x-other", "a"), -1);
	assert_int_equal(http_key(px, "/", "host", " "), -1);
	px = load("backend be\n  mode http\n  balance hdr(host) use_domain_only\n"
		  "  server a 127.0.0.1:1\n");
	assert_int_equal(http_key(px, "/", "Host", "haproxy.1wt.eu"), H("1wt"));
	assert_int_equal(http_key(px, "/", "Host", "1wt.eu"), H("1wt"));
	assert_int_equal(http_key(px, "/", "Host", "localhost"), H("localhost"));
}

/* check_post: the parameter of a urlencoded POST body, as far as the
 * buffer holds it; cut at every byte of the body. */
static void test_balance_check_post(void **state)
{
	const char *req = "POST /f HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n";
	const char *body = "a=1&uid=42&b=";
	struct proxy *px = load("backend be\n  mode http\n  balance url_param uid check_post 10\n"
				"  server a 127.0.0.1:1\n");
	struct h1_hdr hdrs[16];
	struct h1_msg m;
	struct buf *b;
	uint32_t hash = 0;

	assert_true(px->lb.flags & LB_F_CHECK_POST);
	buf_init(16384);
	b = buf_get();
	assert_non_null(b);
	for (size_t cut = 0; cut <= strlen(body); cut++) {
		int r;

		b->head = 0;
		b->data = (uint32_t)(strlen(req) + cut);
		memcpy(b->area, req, strlen(req));
		memcpy(b->area + strlen(req), body, cut);
		h1_msg_init(&m, hdrs, 16, 0, H1_M_OTHER);
		assert_int_equal(h1_parse(b->area, b->data, 16384, &m), (int)strlen(req));
		r = lb_http_hash_post(px, &m, b, &hash);
		if (cut < 9) {          /* "a=1&uid=4": no value yet, or not even the name */
			assert_int_equal(r, cut >= 8);
		} else {
			assert_int_equal(r, 1);
			assert_int_equal(hash, cut == 9 ? H("4") : H("42"));
		}
	}
	/* not a POST: nothing */
	memcpy(b->area, "PUT", 3);
	memmove(b->area + 3, b->area + 4, b->data - 4);
	b->data--;
	h1_msg_init(&m, hdrs, 16, 0, H1_M_OTHER);
	assert_true(h1_parse(b->area, b->data, 16384, &m) > 0);
	assert_int_equal(lb_http_hash_post(px, &m, b, &hash), 0);
	buf_put(b);
	proxy_free_all();
}

/* The same key always lands on the same server, map-based or consistent;
 * no key: round robin. */
static void test_balance_hash_pick(void **state)
{
	const char *types[] = { "map-based", "consistent sdbm avalanche", "consistent wt6", "map-based djb2 avalanche" };

	for (size_t t = 0; t < 4; t++) {
		char cfg[512];
		struct proxy *px;
		int n[3] = { 0 };

		snprintf(cfg, sizeof(cfg), "backend be\n  mode http\n  balance uri\n  hash-type %s\n"
			 "  server a 127.0.0.1:1\n  server b 127.0.0.1:2\n  server c 127.0.0.1:3\n",
			 types[t]);
		px = load(cfg);
		for (uint32_t k = 0; k < 300; k++) {
			char uri[32];
			struct lb_key key = { .has_hash = 1 };
			struct server *s;

			snprintf(uri, sizeof(uri), "/obj/%u", k);
			key.hash = (uint32_t)http_key(px, uri, NULL, NULL);
			s = lb_pick(px, &key);
			n[s->name[0] - 'a']++;
			for (int r = 0; r < 3; r++)
				assert_ptr_equal(lb_pick(px, &key), s);
		}
		for (int i = 0; i < 3; i++)
			assert_true(n[i] > 30);
		/* absent element: round robin */
		memset(n, 0, sizeof(n));
		for (int i = 0; i < 30; i++)
			n[lb_pick(px, NULL)->name[0] - 'a']++;
		for (int i = 0; i < 3; i++)
			assert_int_equal(n[i], 10);
	}
}

/* The persistence keywords parse (their effect is in reg-tests/http). */
static void test_cookie_config(void **state)
{
	struct proxy *px = load("defaults\n  mode http\n  cookie SRV insert indirect nocache httponly "
				"secure domain .a.com domain .b.com\n"
				"backend be\n  option persist\n  force-persist if { path_beg /a }\n"
				"  ignore-persist unless { path_beg /b }\n"
				"  server a 127.0.0.1:1 cookie A\n  server b 127.0.0.1:2 cookie bee\n");

	assert_true(persist_options(px) & PST_O_PERSIST);
	assert_non_null(px->persist);
	assert_string_equal(srv_named(px, "a")->cookie, "A");
	assert_string_equal(srv_named(px, "b")->cookie, "bee");
}

static void test_config_errors(void **state)
{
	const char *bad[] = {
		"backend be\n  balance uri depth\n",
		"backend be\n  balance uri sideways\n",
		"backend be\n  balance url_param\n",
		"backend be\n  balance url_param id check_post x\n",
		"backend be\n  balance url_param id check_post 1 2\n",
		"backend be\n  balance hdr()\n",
		"backend be\n  balance hdr(host) nope\n",
		"backend be\n  balance rdp-cookie(x\n",
		"backend be\n  balance rdp-cookie x\n",
		"backend be\n  balance random(0)\n",
		"backend be\n  cookie\n",
		"backend be\n  cookie S rewrite maxidle 1h\n",
		"backend be\n  cookie S insert maxlife 500ms\n",
		"backend be\n  cookie S insert maxidle\n",
		"backend be\n  cookie S attr SameSite=Lax\n",
		"backend be\n  cookie S rewrite postonly\n",
		"backend be\n  cookie S insert prefix\n",
		"backend be\n  cookie S domain\n",
		"backend be\n  force-persist\n",
		"backend be\n  ignore-persist when x\n",
		"backend be\n  server a 127.0.0.1:1 cookie\n",
		"backend be\n  server a 127.0.0.1:1 cookie a;b\n",
		"backend be\n  balance nope\n",
		"backend be\n  hash-type sideways\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		proxy_free_all();
		assert_true(cfg_parse_text("lb.cfg", bad[i], strlen(bad[i])) > 0);
	}
	/* the HTTP hashes need mode http (checked after parsing) */
	proxy_free_all();
	assert_int_equal(cfg_parse_text("lb.cfg", "backend be\n  mode tcp\n  balance uri\n", 35), 0);
	assert_int_equal(cfg_postparse(), -1);
	proxy_free_all();
}

/* slowstart: the effective weight grows linearly over the period. */
static void test_slowstart_ramp(void **state)
{
	assert_int_equal(srv_ramp_weight(10, 10000, 0), 1);          /* never 0 */
	assert_int_equal(srv_ramp_weight(10, 10000, 1000), 16);      /* 10% of 160 */
	assert_int_equal(srv_ramp_weight(10, 10000, 5000), 80);
	assert_int_equal(srv_ramp_weight(10, 10000, 9999.9), 159);
	assert_int_equal(srv_ramp_weight(10, 10000, 10000), 160);
	assert_int_equal(srv_ramp_weight(10, 10000, 60000), 160);
	assert_int_equal(srv_ramp_weight(10, 0, 0), 160);            /* no slowstart */
	assert_int_equal(srv_ramp_weight(0, 10000, 5000), 0);         /* weight 0 stays 0 */
	assert_int_equal(srv_ramp_weight(256, 1000, 250), 1024);
	assert_int_equal(srv_ramp_weight(1, 1000, -5), 1);
	for (int ms = 0; ms < 10000; ms += 500)   /* monotonic */
		assert_true(srv_ramp_weight(7, 10000, ms) <= srv_ramp_weight(7, 10000, ms + 500));
}

static void test_slowstart_config(void **state)
{
	struct proxy *px = load("backend be\n  server a 127.0.0.1:1 weight 4 slowstart 30s\n"
				"  server b 127.0.0.1:2\n");
	struct server *a = srv_named(px, "a");

	assert_int_equal(a->slowstart, 30000);
	/* not at start-up: full weight, no throttle */
	assert_int_equal(a->eweight, 4 * SRV_EW_SCALE);
	assert_int_equal(srv_throttle(a), -1);
	assert_int_equal(srv_named(px, "b")->slowstart, 0);
	proxy_free_all();
}

static void test_track_config(void **state)
{
	static const char *const bad[] = {
		/* unknown server, unknown backend */
		"backend be\n  server a 127.0.0.1:1 check\n  server b 127.0.0.1:2 track nope\n",
		"backend be\n  server a 127.0.0.1:1 check\n  server b 127.0.0.1:2 track nob/a\n",
		/* tracked server without checks */
		"backend be\n  server a 127.0.0.1:1\n  server b 127.0.0.1:2 track a\n",
		/* checks and tracking together */
		"backend be\n  server a 127.0.0.1:1 check\n  server b 127.0.0.1:2 check track a\n",
		/* loops */
		"backend be\n  server a 127.0.0.1:1 track a\n",
		"backend be\n  server a 127.0.0.1:1 track b\n  server b 127.0.0.1:2 track a\n",
	};
	struct proxy *px;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		proxy_free_all();
		assert_int_equal(cfg_parse_text("lb.cfg", bad[i], strlen(bad[i])), 0);
		assert_int_not_equal(cfg_postparse(), 0);
	}
	proxy_free_all();
	assert_true(cfg_parse_text("lb.cfg", "backend be\n  default-server track a\n", strlen("backend be\n  default-server track a\n")) > 0);
	/* chains across backends end at a checked server */
	px = load("backend other\n  server c 127.0.0.1:3 check\n"
		  "backend be\n  server a 127.0.0.1:1 track other/c\n"
		  "  server b 127.0.0.1:2 track a\n");
	assert_ptr_equal(srv_named(px, "b")->track, srv_named(px, "a"));
	assert_ptr_equal(srv_named(px, "a")->track->trackers, srv_named(px, "a"));
	assert_ptr_equal(srv_named(px, "a")->trackers, srv_named(px, "b"));
	proxy_free_all();
}

static void test_redispatch_interval(void **state)
{
	struct proxy *px = load("backend be\n  retries 5\n  option redispatch\n");

	for (int r = 1; r <= 5; r++)
		assert_int_equal(backend_redispatch_due(px, r), r == 5);
	px = load("backend be\n  retries 5\n  option redispatch 2\n");
	for (int r = 1; r <= 5; r++)
		assert_int_equal(backend_redispatch_due(px, r), r % 2 == 0);
	px = load("backend be\n  retries 5\n  option redispatch -3\n");
	for (int r = 1; r <= 5; r++)
		assert_int_equal(backend_redispatch_due(px, r), r == 3);
	px = load("backend be\n  retries 5\n  option redispatch 0\n");
	for (int r = 1; r <= 5; r++)
		assert_int_equal(backend_redispatch_due(px, r), 0);
	px = load("defaults\n  option redispatch 1\nbackend be\n  retries 3\n");
	for (int r = 1; r <= 3; r++)
		assert_int_equal(backend_redispatch_due(px, r), 1);
	px = load("defaults\n  option redispatch 1\nbackend be\n  no option redispatch\n");
	assert_int_equal(backend_redispatch_due(px, 3), 0);
	proxy_free_all();
	assert_true(cfg_parse_text("lb.cfg", "backend be\n  option redispatch x\n", strlen("backend be\n  option redispatch x\n")) > 0);
	proxy_free_all();
	assert_true(cfg_parse_text("lb.cfg", "backend be\n  option redispatch 1 2\n", strlen("backend be\n  option redispatch 1 2\n")) > 0);
	proxy_free_all();
}

static void test_minconn_maxqueue(void **state)
{
	struct proxy *px = load("backend be\n  fullconn 100\n"
				"  server a 127.0.0.1:1 minconn 10 maxconn 50\n"
				"  server b 127.0.0.1:2 maxconn 50\n  server c 127.0.0.1:3 minconn 5\n");
	struct server *a = srv_named(px, "a");

	px->beconn = 0;
	assert_int_equal(srv_dynamic_maxconn(a), 10);
	px->beconn = 40;        /* 50 x 40 / 100 */
	assert_int_equal(srv_dynamic_maxconn(a), 20);
	px->beconn = 100;
	assert_int_equal(srv_dynamic_maxconn(a), 50);
	px->beconn = 500;
	assert_int_equal(srv_dynamic_maxconn(a), 50);
	assert_int_equal(srv_dynamic_maxconn(srv_named(px, "b")), 50);   /* no minconn */
	assert_int_equal(srv_dynamic_maxconn(srv_named(px, "c")), 0);    /* no maxconn */
	px->beconn = 0;
	proxy_free_all();
	px = load("backend be\n  server a 127.0.0.1:1 maxqueue 5\n");
	assert_int_equal(srv_named(px, "a")->maxqueue, 5);
	proxy_free_all();
	px = load("backend be\n  server a 127.0.0.1:1 maxqueue 0\n");
	proxy_free_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundrobin_weights),
		cmocka_unit_test(test_leastconn),
		cmocka_unit_test(test_first),
		cmocka_unit_test(test_source_map_based),
		cmocka_unit_test(test_source_consistent_moves_few_keys),
		cmocka_unit_test(test_random_draws),
		cmocka_unit_test(test_backup_fallback),
		cmocka_unit_test(test_hash_functions),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_slowstart_ramp),
		cmocka_unit_test(test_slowstart_config),
		cmocka_unit_test(test_track_config),
		cmocka_unit_test(test_redispatch_interval),
		cmocka_unit_test(test_minconn_maxqueue),
		cmocka_unit_test(test_balance_uri),
		cmocka_unit_test(test_balance_url_param_hdr),
		cmocka_unit_test(test_balance_check_post),
		cmocka_unit_test(test_balance_hash_pick),
		cmocka_unit_test(test_cookie_config),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	proxy_free_all();
	return r;
}
