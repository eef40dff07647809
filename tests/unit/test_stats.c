/* Unit tests for the stats page and the Prometheus exporter: base64
 * decoding of Basic credentials, HTML/JSON/label escaping, the "stats"
 * keywords (errors, default URI, inheritance from defaults) seen through
 * the service's match(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/cfg.h>
#include <sluice/global.h>
#include <sluice/http_head.h>
#include <sluice/http_service.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/stats.h>
#include <sluice/str.h>

#include "cfg_capture.h"

static int reset(void **state)
{
	proxy_free_all();
	log_list_free(&global.loggers);
	restore_global();
	return 0;
}

static void test_b64(void **state)
{
	char out[64];

	assert_int_equal(stats_b64_decode("YWRtaW46c2VjcmV0", 16, out, sizeof(out)), 12);
	assert_string_equal(out, "admin:secret");
	assert_int_equal(stats_b64_decode("b3BzOnBhc3M6d29yZA==", 20, out, sizeof(out)), 13);
	assert_string_equal(out, "ops:pass:word");
	assert_int_equal(stats_b64_decode("YQ==", 4, out, sizeof(out)), 1);
	assert_string_equal(out, "a");
	assert_int_equal(stats_b64_decode("YWI=", 4, out, sizeof(out)), 2);
	assert_int_equal(stats_b64_decode("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* not a multiple of 4, bad characters, padding in the middle or too long */
	assert_int_equal(stats_b64_decode("YWI", 3, out, sizeof(out)), -1);
	assert_int_equal(stats_b64_decode("!!!!", 4, out, sizeof(out)), -1);
	assert_int_equal(stats_b64_decode("YQ==YQ==", 8, out, sizeof(out)), -1);
	assert_int_equal(stats_b64_decode("Y===", 4, out, sizeof(out)), -1);
	/* does not fit (room for the NUL is needed) */
	assert_int_equal(stats_b64_decode("YWRtaW46c2VjcmV0", 16, out, 12), -1);
	assert_int_equal(stats_b64_decode("YWRtaW46c2VjcmV0", 16, out, 13), 12);
}

static void test_escape(void **state)
{
	struct dstr d = { 0 };

	stats_html_escape(&d, "a<b>&\"c'd");
	assert_string_equal(d.p, "a&lt;b&gt;&amp;&quot;c&#39;d");
	dstr_free(&d);
	memset(&d, 0, sizeof(d));
	stats_json_escape(&d, "q\"b\\s\n\x01z");
	assert_string_equal(d.p, "\"q\\\"b\\\\s\\u000a\\u0001z\"");
	dstr_free(&d);
	memset(&d, 0, sizeof(d));
	prom_label_escape(&d, "a\"b\\c\nd");
	assert_string_equal(d.p, "a\\\"b\\\\c\\nd");
	dstr_free(&d);
	memset(&d, 0, sizeof(d));
	assert_string_equal(stats_field_name(0), "pxname");
	assert_string_equal(stats_field_name(ST_F_NB - 1), "agg_check_status");
	assert_int_equal(ST_F_NB, 103);
}

/* Whether the stats service claims <uri> for proxy <name>. */
static int claims(const char *name, const char *uri)
{
	const struct http_service *svc = http_service_find("stats");
	struct proxy *px = proxy_find(name, PR_CAP_FE | PR_CAP_BE);
	struct http_head h;

	assert_non_null(svc);
	assert_non_null(px);
	memset(&h, 0, sizeof(h));
	h.sl[HTTP_SL_METH] = (struct http_str){ "GET", 3 };
	h.sl[HTTP_SL_URI] = (struct http_str){ uri, (uint32_t)strlen(uri) };
	h.sl[HTTP_SL_RQVER] = (struct http_str){ "HTTP/1.1", 8 };
	return svc->match(px, &h);
}

static const char base[] =
	"defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n";

static void test_keywords(void **state)
{
	char cfg[1024];

	snprintf(cfg, sizeof(cfg), "%s frontend a\n bind :8080\n stats enable\n"
		 " frontend b\n bind :8081\n stats uri /st\n stats realm \"x y\"\n"
		 " stats auth u:p\n stats auth v:w\n stats refresh 10s\n stats hide-version\n"
		 " stats show-legends\n stats show-node\n stats show-desc \"d\"\n"
		 " stats scope .\n stats scope a\n"
		 "frontend c\n bind :8082\n", base);
	PARSE_FRESH(cfg, 0);
	assert_true(claims("a", "/haproxy?stats"));
	assert_true(claims("a", "/haproxy?stats;csv"));
	assert_false(claims("a", "/haproxy"));
	assert_true(claims("b", "/st"));
	assert_true(claims("b", "http://host:80/st;json"));
	assert_false(claims("b", "/haproxy?stats"));
	assert_false(claims("c", "/haproxy?stats"));

	/* inherited from defaults; "stats uri" alone enables */
	snprintf(cfg, sizeof(cfg), "defaults\n mode http\n stats uri /s\n"
		 "frontend a\n bind :8080\nlisten l\n bind :8081\n mode tcp\n");
	PARSE_FRESH(cfg, 0);
	assert_true(claims("a", "/s"));
	assert_false(claims("l", "/s"));  /* only in mode http */

	PARSE_FRESH("frontend a\n stats auth nocolon\n", 1);
	expect_msg("expects <user>:<password>");
	PARSE_FRESH("frontend a\n stats refresh x\n", 1);
	expect_msg("invalid delay");
	PARSE_FRESH("frontend a\n stats uri\n", 1);
	PARSE_FRESH("frontend a\n stats enable now\n", 1);
	PARSE_FRESH("frontend a\n stats http-request deny\n", 0);
	PARSE_FRESH("frontend a\n stats http-request auth realm R if TRUE\n", 0);
	PARSE_FRESH("frontend a\n stats http-request reject\n", 1);
	expect_msg("expects 'allow', 'deny' or 'auth");
	PARSE_FRESH("frontend a\n stats http-request deny when TRUE\n", 1);
	expect_msg("expects 'if' or 'unless'");
	PARSE_FRESH("defaults\n stats admin if TRUE\n", 1);
	PARSE_FRESH("frontend a\n stats admin\n", 1);
	expect_msg("expects 'if' or 'unless'");
	PARSE_FRESH("frontend a\n stats admin if TRUE\n", 0);
	PARSE_FRESH("frontend a\n stats enabel\n", 1);
}

static int group_setup(void **state)
{
	pristine = global;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b64),
		cmocka_unit_test(test_escape),
		cmocka_unit_test_teardown(test_keywords, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
