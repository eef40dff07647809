/* Unit tests for userlists (userlist.c): section parsing and its errors,
 * reference resolution, crypt(3) ($1$, $5$, $6$) and insecure password
 * checks, groups, the http_auth* fetches and the "http-request auth"
 * action. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/acl.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_rules.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/userlist.h>

#include "rules_stream.h"

#define H6 "$6$abcdefgh$ltjgWl6579NluT/Vi1nwEvcil.G5Nbc4NiXZaNGStk8PSwGfQv72N2CKPPrVACtLtip/" \
	   "cZ/1GM/O6IND4WQhG."                                      /* "secret" */
#define H5 "$5$s5salt$F6sPw6xYSRzn5GDEuy8l.nat/wjA9xcCuZTEVPy69O2"  /* "five" */
#define H1 "$1$xyz$qlvqhqnoAJVuP4oa2zr7s."                         /* "md5pw" */

static const char base_cfg[] =
	"userlist L\n"
	"    group admins users bob\n"
	"    group ops\n"
	"    user bob insecure-password pw\n"
	"    user al password " H6 " groups admins,ops\n"
	"    user fv password " H5 " groups ops\n"
	"    user md password " H1 "\n"
	"    user nopw\n"
	"frontend fe\n"
	"    mode http\n"
	"    http-request auth realm \"Private zone\" unless { http_auth(L) }\n"
	"    http-request deny if { path_beg /admin } !{ http_auth_group(L) admins }\n"
	"backend be\n"
	"    mode http\n"
	"    http-request auth if !{ http_auth(L) }\n";

static int ul_reset(void **state)
{
	reset(state);
	userlist_free_all();
	return 0;
}

static const struct ul_user *user(const char *name)
{
	struct userlist *ul = userlist_find("L");

	assert_non_null(ul);
	return userlist_user(ul, name, strlen(name));
}

/* ---- parsing ---- */

static void test_parse_ok(void **state)
{
	const struct ul_user *u;

	LOAD(base_cfg, 0);
	expect_no_msg("not supported");
	u = user("bob");
	assert_non_null(u);
	assert_int_equal(u->insecure, 1);
	assert_int_equal(u->ngroups, 1);
	assert_string_equal(u->groups[0]->name, "admins");
	u = user("al");
	assert_int_equal(u->ngroups, 2);
	assert_string_equal(u->groups[0]->name, "admins");
	assert_string_equal(u->groups[1]->name, "ops");
	assert_int_equal(user("md")->ngroups, 0);
	assert_null(user("nobody"));
	assert_null(userlist_find("M"));
}

static void test_parse_errors(void **state)
{
	LOAD("userlist L\n    user bob insecure-password pw groups nogroup\n", 1);
	expect_msg("t.cfg:2: 'user' in userlist 'L': user 'bob' names unknown group 'nogroup'");
	ul_reset(NULL);
	LOAD("userlist L\n    user bob\n    group g users bob,ghost\n", 1);
	expect_msg("t.cfg:3: 'group' in userlist 'L': group 'g' names unknown user 'ghost'");
	ul_reset(NULL);
	LOAD("userlist L\n    user bob\n    user bob\n", 1);
	expect_msg("t.cfg:3");
	expect_msg("user 'bob' is already declared in userlist 'L'");
	ul_reset(NULL);
	LOAD("userlist L\n    group g\n    group g\n", 1);
	expect_msg("group 'g' is already declared");
	ul_reset(NULL);
	LOAD("userlist L\nuserlist L\n", 1);
	expect_msg("'L' is already used by a userlist declared at t.cfg:1");
	ul_reset(NULL);
	LOAD("userlist L\n    user bob secret pw\n", 1);
	expect_msg("unknown argument 'secret' for user 'bob'");
	ul_reset(NULL);
	LOAD("userlist L\n    user bob password\n", 1);
	expect_msg("'password' expects a value");
	ul_reset(NULL);
	LOAD("userlist L\n    user bob password x insecure-password y\n", 1);
	expect_msg("more than one password");
	ul_reset(NULL);
	LOAD("userlist L\n    group g members bob\n", 1);
	expect_msg("expects <name> [users <user>,...]");
	ul_reset(NULL);
	LOAD("userlist L\n    usr bob\n", 1);
	expect_msg("did you mean 'user'");
	ul_reset(NULL);
	LOAD("userlist\n", 1);
	expect_msg("expects a name");
	ul_reset(NULL);
	/* An unsupported hash: a warning, the user can never log in. */
	LOAD("userlist L\n    user bob password $9$nope\n", 0);
	expect_msg("not supported by this system's crypt(3)");
	assert_int_equal(userlist_check(user("bob"), "", 0), 0);
}

static void test_parse_refs(void **state)
{
	LOAD("frontend fe\n    mode http\n    http-request auth unless { http_auth(NOPE) }\n", 1);
	expect_msg("no such userlist 'NOPE'");
	ul_reset(NULL);
	LOAD("frontend fe\n    mode http\n    http-request deny if { http_auth }\n", 1);
	expect_msg("missing argument 1 of 'http_auth'");
	ul_reset(NULL);
	/* A userlist declared after its user is fine. */
	LOAD("frontend fe\n    mode http\n    http-request auth unless { http_auth(L) }\n"
	     "userlist L\n    user a insecure-password b\n", 0);
	ul_reset(NULL);
	LOAD("frontend fe\n    mode http\n    http-request auth realm\n", 1);
	expect_msg("'realm' expects a value");
	ul_reset(NULL);
	LOAD("frontend fe\n    mode http\n    http-response auth\n", 1);
}

/* ---- password checks ---- */

static void test_check(void **state)
{
	LOAD(base_cfg, 0);
	assert_int_equal(userlist_check(user("bob"), "pw", 2), 1);
	assert_int_equal(userlist_check(user("bob"), "pwx", 3), 0);
	assert_int_equal(userlist_check(user("bob"), "p", 1), 0);
	assert_int_equal(userlist_check(user("bob"), "", 0), 0);
	assert_int_equal(userlist_check(user("al"), "secret", 6), 1);
	assert_int_equal(userlist_check(user("al"), "secreT", 6), 0);
	assert_int_equal(userlist_check(user("al"), "secret\0x", 8), 0);
	assert_int_equal(userlist_check(user("fv"), "five", 4), 1);
	assert_int_equal(userlist_check(user("fv"), "fiv", 3), 0);
	assert_int_equal(userlist_check(user("md"), "md5pw", 5), 1);
	assert_int_equal(userlist_check(user("md"), "md5p", 4), 0);
	/* No password: nobody logs in as this user. */
	assert_int_equal(userlist_check(user("nopw"), "", 0), 0);
}

/* ---- fetches ---- */

/* Evaluates <expr> on a request carrying "Authorization: <auth>" (none
 * when NULL); returns its text, or NULL when it has no value. */
static const char *eval(const char *expr, const char *auth)
{
	static char out[256];
	char raw[512];
	struct smp_expr e;
	struct sample smp = { 0 };
	char *err = NULL;
	int ok;

	snprintf(raw, sizeof(raw), "GET / HTTP/1.1\r\nHost: x\r\n%s%s%s\r\n",
		 auth ? "Authorization: " : "", auth ? auth : "", auth ? "\r\n" : "");
	strm_new(proxy_find("fe", PR_CAP_FE));
	msg_load(raw);
	if (smp_expr_parse(expr, &e, NULL, &err) == -1)
		fail_msg("%s", err);
	ok = smp_expr_eval(&e, &strm, &smp);
	if (ok)
		smp_to_text(&smp, out, sizeof(out));
	smp_expr_free(&e);
	return ok ? out : NULL;
}

static void test_fetches(void **state)
{
	LOAD(base_cfg, 0);
	assert_string_equal(eval("http_auth(L)", NULL), "0");
	assert_string_equal(eval("http_auth(L)", "Basic Ym9iOnB3"), "1");          /* bob:pw */
	assert_string_equal(eval("http_auth(L)", "basic  Ym9iOnB3 "), "1");
	assert_string_equal(eval("http_auth(L)", "Basic Ym9iOmJhZA=="), "0");      /* bob:bad */
	assert_string_equal(eval("http_auth(L)", "Basic YWw6c2VjcmV0"), "1");      /* al:secret */
	assert_string_equal(eval("http_auth(L)", "Basic ZnY6Zml2ZQ=="), "1");      /* fv:five */
	assert_string_equal(eval("http_auth(L)", "Basic ZnY6Zml2"), "0");          /* fv:fiv */
	assert_string_equal(eval("http_auth(L)", "Basic bWQ6bWQ1cHc="), "1");      /* md:md5pw */
	assert_string_equal(eval("http_auth(L)", "Basic bm91c2VyOnB3"), "0");      /* nouser:pw */
	assert_string_equal(eval("http_auth(L)", "Basic bm9jb2xvbg=="), "0");      /* nocolon */
	assert_string_equal(eval("http_auth(L)", "Basic !!!"), "0");
	assert_string_equal(eval("http_auth(L)", "Bearer Ym9iOnB3"), "0");

	assert_string_equal(eval("http_auth_type", "Basic Ym9iOnB3"), "Basic");
	assert_string_equal(eval("http_auth_type", "bearer abc"), "Bearer");
	assert_string_equal(eval("http_auth_type", "Digest x=y"), "Digest");
	assert_null(eval("http_auth_type", "Foo x"));
	assert_null(eval("http_auth_type", NULL));
	assert_string_equal(eval("http_auth_user", "Basic Ym9iOmJhZA=="), "bob");
	assert_string_equal(eval("http_auth_pass", "Basic Ym9iOmJhZA=="), "bad");
	assert_null(eval("http_auth_user", "Basic bm9jb2xvbg=="));
	assert_null(eval("http_auth_user", "Bearer Ym9iOnB3"));
	assert_null(eval("http_auth_pass", NULL));

	/* As a value, http_auth_group is the authenticated user's name. */
	assert_string_equal(eval("http_auth_group(L)", "Basic YWw6c2VjcmV0"), "al");
	assert_null(eval("http_auth_group(L)", "Basic Ym9iOmJhZA=="));
}

/* ---- rules ---- */

/* Runs the request rules of proxy <px> on <path> with <auth>; returns the
 * verdict, <out> filled. */
static enum http_act_ret run(const char *px, const char *path, const char *auth,
                             struct http_act_out *out)
{
	char raw[512];
	struct proxy *p = proxy_find(px, PR_CAP_FE) ? proxy_find(px, PR_CAP_FE)
						    : proxy_find(px, PR_CAP_BE);
	struct http_head *h;

	assert_non_null(p);
	snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: x\r\n%s%s%s\r\n", path,
		 auth ? "Authorization: " : "", auth ? auth : "", auth ? "\r\n" : "");
	strm_new(p);
	h = msg_load(raw);
	return http_rules_exec(http_rules_of(p, HTTP_RS_REQ), &strm, h, out);
}

static void test_rules(void **state)
{
	struct http_act_out out;

	LOAD(base_cfg, 0);
	assert_int_equal(run("fe", "/", NULL, &out), HTTP_ACT_REPLY);
	assert_int_equal(out.status, 401);
	assert_null(out.reply);
	assert_non_null(out.www_auth.p);
	assert_int_equal(out.www_auth.len, strlen("Basic realm=\"Private zone\""));
	assert_memory_equal(out.www_auth.p, "Basic realm=\"Private zone\"", out.www_auth.len);
	assert_int_equal(run("fe", "/", "Basic Ym9iOmJhZA==", &out), HTTP_ACT_REPLY);
	assert_int_equal(run("fe", "/", "Basic Ym9iOnB3", &out), HTTP_ACT_CONT);
	assert_null(out.www_auth.p);
	/* Group ACL: bob and al are admins, fv and md are not. */
	assert_int_equal(run("fe", "/admin", "Basic Ym9iOnB3", &out), HTTP_ACT_CONT);
	assert_int_equal(run("fe", "/admin", "Basic YWw6c2VjcmV0", &out), HTTP_ACT_CONT);
	assert_int_equal(run("fe", "/admin", "Basic ZnY6Zml2ZQ==", &out), HTTP_ACT_DENY);
	assert_int_equal(run("fe", "/admin", "Basic bWQ6bWQ1cHc=", &out), HTTP_ACT_DENY);
	assert_int_equal(run("fe", "/other", "Basic bWQ6bWQ1cHc=", &out), HTTP_ACT_CONT);
	/* The default realm is the name of the proxy holding the rule. */
	assert_int_equal(run("be", "/", NULL, &out), HTTP_ACT_REPLY);
	assert_int_equal(out.www_auth.len, strlen("Basic realm=\"be\""));
	assert_memory_equal(out.www_auth.p, "Basic realm=\"be\"", out.www_auth.len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_parse_ok, ul_reset),
		cmocka_unit_test_teardown(test_parse_errors, ul_reset),
		cmocka_unit_test_teardown(test_parse_refs, ul_reset),
		cmocka_unit_test_teardown(test_check, ul_reset),
		cmocka_unit_test_teardown(test_fetches, ul_reset),
		cmocka_unit_test_teardown(test_rules, ul_reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
