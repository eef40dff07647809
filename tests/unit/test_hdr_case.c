/* Unit tests for h1-case-adjust and h1-case-adjust-file (hdr_case.h): what
 * the keywords accept and refuse, and the head bytes hdr_case_adjust()
 * rewrites (tests/dropin/connect checks them on the wire). */
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
#include <sluice/hdr_case.h>
#include <sluice/http_ana.h>
#include <sluice/log.h>
#include <sluice/proxy.h>

#include "cfg_capture.h"

static int reset(void **state)
{
	proxy_free_all();
	log_list_free(&global.loggers);
	hdr_case_clear();
	restore_global();
	return 0;
}

/* Runs hdr_case_adjust() on a copy of <in> and compares with <want>. */
static void expect_adjusted(const char *in, const char *want)
{
	char *b = strdup(in);

	assert_non_null(b);
	hdr_case_adjust(b, strlen(b));
	assert_string_equal(b, want);
	free(b);
}

static void test_adjust(void **state)
{
	PARSE_ERRORS("global\n    h1-case-adjust content-length Content-Length\n"
		     "    h1-case-adjust x-api-key X-API-Key\n", 0);
	assert_true(hdr_case_active());
	expect_adjusted("POST / HTTP/1.1\r\ncontent-length: 3\r\nCONTENT-LENGTH: 3\r\n"
			"x-api-key: k\r\nx-api-keys: k\r\nhost: a\r\n\r\nx-api-key: body\r\n",
			"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n"
			"X-API-Key: k\r\nx-api-keys: k\r\nhost: a\r\n\r\nx-api-key: body\r\n");
	/* a start line that looks like a field is left alone, and so is a
	 * value holding a configured name */
	expect_adjusted("content-length: 1\r\nhost: content-length: 2\r\n\r\n",
			"content-length: 1\r\nhost: content-length: 2\r\n\r\n");
	/* a head cut short is looked at up to its end */
	expect_adjusted("HTTP/1.1 200 OK\r\ncontent-length: 0", "HTTP/1.1 200 OK\r\nContent-Length: 0");
	hdr_case_clear();
	assert_false(hdr_case_active());
	expect_adjusted("GET / HTTP/1.1\r\ncontent-length: 0\r\n\r\n",
			"GET / HTTP/1.1\r\ncontent-length: 0\r\n\r\n");
}

static void test_keyword_errors(void **state)
{
	PARSE_ERRORS("global\n    h1-case-adjust Content-Length Content-Length\n"
		     "    h1-case-adjust content-length Content-Size\n"
		     "    h1-case-adjust bad:name Bad:Name\n"
		     "    h1-case-adjust host\n"
		     "    h1-case-adjust host Host\n"
		     "    h1-case-adjust host HOST\n", 5);
	expect_msg("t.cfg:2: 'h1-case-adjust' in global section: 'Content-Length' must be "
		   "written in lower case");
	expect_msg("t.cfg:3: 'h1-case-adjust' in global section: 'content-length' and its "
		   "adjusted form may differ only by their case");
	expect_msg("t.cfg:4: 'h1-case-adjust' in global section: 'bad:name' is not a valid "
		   "header name");
	expect_msg("t.cfg:5: 'h1-case-adjust' in global section: expects <from> <to>");
	expect_msg("t.cfg:7: 'h1-case-adjust' in global section: 'host' is already adjusted "
		   "(at t.cfg:6); duplicates are not allowed");
	PARSE_ERRORS("global\n    h1-case-adjust-file /nonexistent/names\n", 1);
	expect_msg("cannot open '/nonexistent/names'");
}

/* The file: comments, blank lines and spaces; only the last file counts;
 * its errors name the file's line. */
static void test_file(void **state)
{
	char p1[] = "/tmp/hdr_case1.XXXXXX", p2[] = "/tmp/hdr_case2.XXXXXX", cfg[256];
	int f1 = mkstemp(p1), f2 = mkstemp(p2);
	static const char t1[] = "# names\n\n  x-a   X-A \t\nx-b X-B\n";
	static const char t2[] = "x-c X-C\nx-d\nx-e X-F\n";

	assert_true(f1 >= 0 && f2 >= 0);
	assert_int_equal(write(f1, t1, strlen(t1)), (ssize_t)strlen(t1));
	assert_int_equal(write(f2, t2, strlen(t2)), (ssize_t)strlen(t2));
	close(f1);
	close(f2);
	snprintf(cfg, sizeof(cfg), "global\n    h1-case-adjust-file %s\n", p1);
	PARSE_ERRORS(cfg, 0);
	expect_adjusted("GET / HTTP/1.1\r\nx-a: 1\r\nx-b: 2\r\n\r\n",
			"GET / HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\n\r\n");
	/* a second file replaces the first one's names, errors named by line */
	snprintf(cfg, sizeof(cfg), "global\n    h1-case-adjust x-z X-Z\n"
		 "    h1-case-adjust-file %s\n", p2);
	PARSE_ERRORS(cfg, 2);
	expect_msg(":3: 'h1-case-adjust-file' in global section: ");
	expect_msg(":2: expects two header names");
	expect_msg(":3: 'x-e' and its adjusted form may differ only by their case");
	expect_adjusted("GET / HTTP/1.1\r\nx-a: 1\r\nx-c: 2\r\nx-z: 3\r\n\r\n",
			"GET / HTTP/1.1\r\nx-a: 1\r\nX-C: 2\r\nX-Z: 3\r\n\r\n");
	unlink(p1);
	unlink(p2);
}

/* The proxy options are flags of the HTTP settings, "no" clears one. */
static void test_options(void **state)
{
	PARSE_ERRORS("defaults d\n mode http\n option h1-case-adjust-bogus-client\n"
		     " option h1-case-adjust-bogus-server\n"
		     "frontend f from d\n no option h1-case-adjust-bogus-client\n"
		     "backend b from d\n"
		     "listen l\n mode http\n option h1-case-adjust-bogus-client\n", 0);
	assert_false(http_px_of(proxy_find("f", PR_CAP_FE))->options & HTTP_O_CASE_CLI);
	assert_true(http_px_of(proxy_find("b", PR_CAP_BE))->options & HTTP_O_CASE_SRV);
	assert_true(http_px_of(proxy_find("l", PR_CAP_FE))->options & HTTP_O_CASE_CLI);
	PARSE_FRESH("backend b\n option h1-case-adjust-bogus-client\n"
		    "frontend f\n option h1-case-adjust-bogus-server\n", 2);
	expect_msg("'option h1-case-adjust-bogus-client' is not valid in a backend section");
	expect_msg("'option h1-case-adjust-bogus-server' is not valid in a frontend section");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_adjust, reset),
		cmocka_unit_test_teardown(test_keyword_errors, reset),
		cmocka_unit_test_teardown(test_file, reset),
		cmocka_unit_test_teardown(test_options, reset),
	};

	return cmocka_run_group_tests(tests, capture_group_setup, NULL);
}
