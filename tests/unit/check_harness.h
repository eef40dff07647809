/* Helpers shared by the unit tests of the health checks (test_httpchk.c,
 * test_protochk.c): the cmocka group setup and per-test reset, a defaults
 * section with timeouts to put before backends, and looks into the tcp-check
 * ruleset a backend plays. Configurations are parsed with LOAD() (parsing
 * then post-parse hooks, see cfg_capture.h). Include after <cmocka.h>. */
#ifndef SLUICE_TESTS_CHECK_HARNESS_H
#define SLUICE_TESTS_CHECK_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/tcpcheck.h>

#include "cfg_capture.h"

/* A defaults section in HTTP mode with the three timeouts, so that the
 * backends after it parse without warnings. Prepended by the callers that
 * need it. */
#define DEFAULTS "defaults\n  mode http\n  timeout connect 1s\n  timeout client 1s\n" \
		 "  timeout server 1s\n"

/* Group setup: keeps struct global as it is before any parsing in
 * <pristine>, for reset(). */
static inline int group_setup(void **state)
{
	pristine = global;
	return 0;
}

/* Per-test teardown, also called between parses of one test: frees every
 * proxy and logger, then puts struct global back (restore_global()). */
static inline int reset(void **state)
{
	proxy_free_all();
	log_list_free(&global.loggers);
	restore_global();
	return 0;
}

/* The first rule of backend <be>'s playable ruleset (NULL if it has none);
 * fails the test if there is no such backend. */
static inline const struct tcpchk_rule *rules_of(const char *be)
{
	const struct proxy *px = proxy_find(be, PR_CAP_BE);

	assert_non_null(px);
	return tcpchk_rules(px);
}

/* The <n>th rule (from 0) of <be>'s playable ruleset; fails the test if the
 * ruleset is shorter. */
static inline const struct tcpchk_rule *rule_at(const char *be, int n)
{
	const struct tcpchk_rule *r = rules_of(be);

	for (; r && n; n--)
		r = r->next;
	assert_non_null(r);
	return r;
}

/* Asserts that the <n>th rule of <be> is a send rule sending exactly <req>
 * (compared as a string), showing both if not. */
static inline void expect_send(const char *be, int n, const char *req)
{
	const struct tcpchk_rule *r = rule_at(be, n);
	char *got;

	assert_int_equal(r->type, TCPCHK_SEND);
	got = strndup(r->data, r->len);
	assert_non_null(got);
	if (strcmp(got, req) != 0)
		fail_msg("backend %s rule %d sends\n[%s]\nexpected\n[%s]", be, n, got, req);
	free(got);
}

/* The number of rules in <be>'s playable ruleset. */
static inline int count_rules(const char *be)
{
	int n = 0;

	for (const struct tcpchk_rule *r = rules_of(be); r; r = r->next)
		n++;
	return n;
}

#endif
