/* Unit tests for maps and variables (src/rules/map.c, pattern.c, vars.c):
 * map file loading, each map converter with and without a default, the
 * runtime add/del/set/clear semantics shared by every user of a file,
 * variable scopes, and a timed load of a million-line file (printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <cmocka.h>

#include <sluice/cli.h>
#include <sluice/map.h>
#include <sluice/pattern.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/vars.h>

static const char *mapfile, *ipfile, *intfile, *regmfile;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Evaluates "str(<in>),<conv>" into <out>; returns 1 or 0. */
static int eval(const char *expr, char *out, size_t size)
{
	struct smp_expr e;
	struct sample smp = { 0 };
	char *err = NULL;
	int ret;

	if (smp_expr_parse(expr, &e, NULL, &err) == -1) {
		fprintf(stderr, "%s: %s\n", expr, err);
		free(err);
		fail();
	}
	ret = smp_expr_eval(&e, NULL, &smp);
	if (ret)
		smp_to_text(&smp, out, size);
	smp_expr_free(&e);
	return ret;
}

static void check(const char *fmt, const char *arg, const char *want)
{
	char expr[512], out[256] = "";
	int ok;

	snprintf(expr, sizeof(expr), fmt, arg);
	ok = eval(expr, out, sizeof(out));
	if (!want) {
		if (ok)
			fprintf(stderr, "%s: unexpected '%s'\n", expr, out);
		assert_false(ok);
		return;
	}
	if (!ok || strcmp(out, want) != 0)
		fprintf(stderr, "%s: got '%s' (%d), want '%s'\n", expr, out, ok, want);
	assert_true(ok);
	assert_string_equal(out, want);
}

static void test_map_convs(void **state)
{
	check("str(/api/v1),map_beg(%s)", mapfile, "api");
	check("str(/api/v2/x),map_beg(%s)", mapfile, "api2");   /* longest prefix */
	check("str(/nope),map_beg(%s,none)", mapfile, "none");
	check("str(/nope),map_beg(%s)", mapfile, NULL);
	check("str(exact),map_str(%s)", mapfile, "value with spaces");
	check("str(exact),map(%s)", mapfile, "value with spaces");
	check("str(exactx),map_str(%s,d)", mapfile, "d");
	check("str(www.example.com),map_dom(%s)", mapfile, "dom");
	check("str(/a/dirpart/b),map_dir(%s)", mapfile, "dir");
	check("str(xxsubxx),map_sub(%s)", mapfile, "sub");
	check("str(file.jpg),map_end(%s)", mapfile, "img");
	check("str(user42),map_reg(%s)", mapfile, "re");
	check("ipv4(10.1.2.3),map_ip(%s)", ipfile, "ten");
	check("ipv4(10.20.2.3),map_ip(%s)", ipfile, "ten20");   /* longest network */
	check("ipv4(11.0.0.1),map_ip(%s,no)", ipfile, "no");
	check("str(10.20.0.1),map_ip(%s)", ipfile, "ten20");
	check("ipv6(::1),map_ip(%s)", ipfile, "six");
	check("int(42),map_int(%s)", intfile, "answer");
	check("int(43),map_int(%s,d)", intfile, "d");
	check("str(num),map_str_int(%s)", mapfile, "12");
	check("str(zzz),map_str_int(%s,7)", mapfile, "7");
}

/* map_regm: "\N" in the value is the regex's group N */
static void test_map_regm(void **state)
{
	check("str(/img/logo.png),map_regm(%s)", regmfile, "/static/logo.png?k=img");
	check("str(bc),map_regm(%s)", regmfile, "[|c|]");     /* unset group, group 9 */
	check("str(n42),map_regm_int(%s)", regmfile, "42");
	check("str(tail),map_regm(%s)", regmfile, "t\\");    /* a lone trailing backslash */
	check("str(zz),map_regm(%s,def)", regmfile, "def");
	check("str(zz),map_regm(%s)", regmfile, NULL);
	check("str(user42),map_reg(%s)", mapfile, "re");      /* map_reg after map_regm */
}

static void test_map_errors(void **state)
{
	struct smp_expr e;
	char *err = NULL;

	assert_int_equal(smp_expr_parse("str(a),map_str(/nonexistent/m.map)", &e, NULL, &err), -1);
	assert_non_null(strstr(err, "nonexistent"));
	free(err);
	err = NULL;
	assert_int_equal(smp_expr_parse("str(a),map_str_int(/tmp/x,notint)", &e, NULL, &err), -1);
	free(err);
}

static const char *cli(const char *line, int level)
{
	static struct cli_ctx ctx;

	dstr_free(&ctx.out);
	memset(&ctx, 0, sizeof(ctx));
	ctx.level = level;
	cli_exec_line(&ctx, line, strlen(line));
	return ctx.out.len ? ctx.out.p : "";
}

static void test_map_runtime(void **state)
{
	char line[512];
	const char *o;
	char ref[64];

	/* Two converters, one file: both see every change. */
	check("str(/new/x),map_beg(%s,none)", mapfile, "none");
	check("str(/new),map_str(%s,none)", mapfile, "none");
	snprintf(line, sizeof(line), "add map %s /new newbe", mapfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	check("str(/new/x),map_beg(%s,none)", mapfile, "newbe");
	check("str(/new),map_str(%s,none)", mapfile, "newbe");
	snprintf(line, sizeof(line), "set map %s /new other", mapfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	check("str(/new),map_str(%s,none)", mapfile, "other");
	snprintf(line, sizeof(line), "set map %s /absent x", mapfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "entry not found.\n\n");
	snprintf(line, sizeof(line), "get map %s /new/y", mapfile);
	o = cli(line, CLI_LVL_USER);
	assert_non_null(strstr(o, "type=beg, case=sensitive, found=yes, idx=tree, key=\"/new\", "
			       "value=\"other\", type=\"str\""));
	/* delete by reference */
	snprintf(line, sizeof(line), "show map %s", mapfile);
	o = strstr(cli(line, CLI_LVL_USER), " /new other");
	assert_non_null(o);
	while (o[-1] != '\n')
		o--;
	snprintf(ref, sizeof(ref), "#%.*s", (int)strcspn(o, " "), o);
	snprintf(line, sizeof(line), "del map %s %s", mapfile, ref);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	check("str(/new),map_str(%s,none)", mapfile, "none");
	snprintf(line, sizeof(line), "del map %s /new", mapfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "Key not found.\n\n");
	/* a bad command changes nothing */
	snprintf(line, sizeof(line), "add map %s 10.300.0.0 bad", ipfile);
	assert_non_null(strstr(cli(line, CLI_LVL_ADMIN), "not a valid"));
	snprintf(line, sizeof(line), "show map %s", ipfile);
	assert_null(strstr(cli(line, CLI_LVL_ADMIN), "bad"));
	assert_non_null(strstr(cli("show map #99", CLI_LVL_ADMIN), "Unknown map identifier"));
	snprintf(line, sizeof(line), "add map %s a b", mapfile);
	assert_non_null(strstr(cli(line, CLI_LVL_USER), "Permission denied"));
	/* delete by key, then clear */
	snprintf(line, sizeof(line), "del map %s /api/v2", mapfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	check("str(/api/v2/x),map_beg(%s)", mapfile, "api");
	snprintf(line, sizeof(line), "clear map %s", mapfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	check("str(/api/v1),map_beg(%s,gone)", mapfile, "gone");
	snprintf(line, sizeof(line), "clear map %s", ipfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	check("ipv4(10.1.2.3),map_ip(%s,gone)", ipfile, "gone");
	snprintf(line, sizeof(line), "add map %s 10.0.0.0/8 back", ipfile);
	assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	check("ipv4(10.1.2.3),map_ip(%s,gone)", ipfile, "back");
}

static void test_vars(void **state)
{
	struct var_ref r;
	struct sample smp = { .type = SMP_T_STR }, got = { 0 };
	char *err = NULL;

	assert_int_equal(var_ref_parse("txn.x", 5, &r, &err), 0);
	/* no stream: txn, sess, req and res do not exist */
	smp.u.str.p = "v";
	smp.u.str.len = 1;
	assert_int_equal(var_set(&r, NULL, &smp), 0);
	var_ref_release(&r);
	assert_int_equal(var_ref_parse("nope.x", 6, &r, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(var_ref_parse("txn.", 4, &r, &err), -1);
	free(err);
	assert_int_equal(var_ref_parse("proc.p", 6, &r, &err), 0);
	assert_int_equal(var_set(&r, NULL, &smp), 1);
	assert_int_equal(var_get(&r, NULL, &got), 1);
	assert_int_equal((int)got.u.str.len, 1);
	check("str(%s),concat(<,proc.p,>)", "a", "<av>");
	check("str(%s),strcmp(proc.p)", "v", "0");
	check("str(%s),strcmp(proc.p)", "a", "-1");
	check("str(%s),set-var(proc.p),concat(,proc.p,)", "w", "ww");
	var_unset(&r, NULL);
	assert_int_equal(var_get(&r, NULL, &got), 0);
	check("str(%s),strcmp(proc.p)", "a", NULL);
	var_ref_release(&r);
}

/* A file name of this process in /tmp: test runs of several work trees
 * may share the machine. Eight names live at once at most. */
static const char *tmp_path(const char *name)
{
	static char bufs[8][96];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "/tmp/sluice_test_%d_%s", (int)getpid(), name);
	return b;
}

/* A million-line IP and string map: the load time is printed, not
 * asserted (machines differ). */
static void test_map_load_1m(void **state)
{
	const char *p = tmp_path("1m.map");
	FILE *f = fopen(p, "w");
	struct timespec t0, t1;
	char expr[256], out[64];

	assert_non_null(f);
	for (int i = 0; i < 1000000; i++) {
		if (i & 1)
			fprintf(f, "%d.%d.%d.%d/32 v%d\n", 10 + (i >> 24), (i >> 16) & 255,
				(i >> 8) & 255, i & 255, i);
		else
			fprintf(f, "/path/%08x/item v%d\n", i, i);
	}
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(expr, sizeof(expr), "str(/path/00000010/item/x),map_beg(%s)", p);
	assert_int_equal(eval(expr, out, sizeof(out)), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("map load: 1,000,000 lines (loaded and indexed for map_beg) in %.3f s\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_string_equal(out, "v16");
	remove(p);
}

static void test_map_ip_load_1m(void **state)
{
	const char *p = tmp_path("1m_ip.map");
	FILE *f = fopen(p, "w");
	struct timespec t0, t1;
	char expr[256], out[64];

	assert_non_null(f);
	for (int i = 0; i < 1000000; i++)
		fprintf(f, "%d.%d.%d.%d v%d\n", 10 + (i >> 24), (i >> 16) & 255, (i >> 8) & 255,
			i & 255, i);
	fprintf(f, "10.0.0.0/8 net\n");
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(expr, sizeof(expr), "ipv4(10.0.1.1),map_ip(%s)", p);
	assert_int_equal(eval(expr, out, sizeof(out)), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("map load: 1,000,000 IP lines (loaded and indexed for map_ip) in %.3f s\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_string_equal(out, "v257");
	snprintf(expr, sizeof(expr), "ipv4(10.200.1.1),map_ip(%s)", p);
	assert_int_equal(eval(expr, out, sizeof(out)), 1);
	assert_string_equal(out, "net");
	remove(p);
}

/* The lines of the reload-state dump that name <file>, with <file>
 * replaced by <as>. */
static char *journal_lines(const char *file, const char *as)
{
	struct dstr all = { 0 }, out = { 0 };
	char *save = NULL;

	cli_state_dump_all(&all);
	for (char *l = strtok_r(all.p, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *f = strstr(l, file);

		if (!f)
			continue;
		dstr_printf(&out, "%.*s%s%s\n", (int)(f - l), l, as, f + strlen(file));
	}
	dstr_free(&all);
	return out.p ? out.p : xstrdup("");
}

/* "show map" without the entries' addresses. */
static char *map_contents(const char *file)
{
	struct dstr out = { 0 };
	char line[512], *save = NULL, *o;

	snprintf(line, sizeof(line), "show map %s", file);
	o = xstrdup(cli(line, CLI_LVL_ADMIN));
	for (char *l = strtok_r(o, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		dstr_printf(&out, "%s\n", strchr(l, ' ') ? strchr(l, ' ') + 1 : l);
	free(o);
	return out.p ? out.p : xstrdup("");
}

/* Runs every line of <text>, each at admin level. */
static void run_lines(char *text)
{
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		cli(l, CLI_LVL_ADMIN);
}

/* The journal of runtime changes: compacted, replayed by file name on a
 * process that loaded the same file, it gives the same contents; past its
 * bound (or after a #<ref> change) the whole contents are carried. */
static void test_map_journal(void **state)
{
	const char *a = tmp_path("j_a.map"), *b = tmp_path("j_b.map");
	char line[600], *err = NULL, *dump, *ca, *cb;

	write_file(a, "k1 one\nk2 two\nk3 three\n");
	write_file(b, "k1 one\nk2 two\nk3 three\n");
	assert_non_null(pat_ref_load(a, PAT_REF_MAP, "a", &err));
	assert_non_null(pat_ref_load(b, PAT_REF_MAP, "b", &err));

	snprintf(line, sizeof(line), "add map %s k4 v\\ with\\ space\\;semi", a);
	cli(line, CLI_LVL_ADMIN);
	snprintf(line, sizeof(line), "set map %s k1 first", a);
	cli(line, CLI_LVL_ADMIN);
	snprintf(line, sizeof(line), "set map %s k1 ONE", a);
	cli(line, CLI_LVL_ADMIN);
	snprintf(line, sizeof(line), "add map %s k2 again", a);
	cli(line, CLI_LVL_ADMIN);
	snprintf(line, sizeof(line), "del map %s k2", a);
	cli(line, CLI_LVL_ADMIN);
	dump = journal_lines(a, "F");
	assert_string_equal(dump, "add map F k4 v\\ with\\ space\\;semi\n"
			    "set map F k1 ONE\n"
			    "del map F k2\n");
	free(dump);

	/* replayed on b (the same file contents): the same map, and b's own
	 * journal now holds the same operations */
	dump = journal_lines(a, b);
	run_lines(dump);
	free(dump);
	ca = map_contents(a);
	cb = map_contents(b);
	assert_string_equal(ca, cb);
	assert_non_null(strstr(ca, "k4 v with space;semi\n"));
	free(cb);
	dump = journal_lines(b, "F");
	assert_string_equal(dump, "add map F k4 v\\ with\\ space\\;semi\n"
			    "set map F k1 ONE\n"
			    "del map F k2\n");
	free(dump);

	/* a clear drops what came before it */
	snprintf(line, sizeof(line), "clear map %s", b);
	cli(line, CLI_LVL_ADMIN);
	snprintf(line, sizeof(line), "add map %s z last", b);
	cli(line, CLI_LVL_ADMIN);
	dump = journal_lines(b, "F");
	assert_string_equal(dump, "clear map F\nadd map F z last\n");
	free(dump);

	/* a change by #<ref>: the whole contents */
	{
		char *o = xstrdup(cli((snprintf(line, sizeof(line), "show map %s", a), line),
				      CLI_LVL_ADMIN));

		*strchr(o, ' ') = '\0';
		snprintf(line, sizeof(line), "del map %s #%s", a, o + 2);
		free(o);
		assert_string_equal(cli(line, CLI_LVL_ADMIN), "\n");
	}
	dump = journal_lines(a, "F");
	assert_int_equal(strncmp(dump, "clear map F\n", 12), 0);
	assert_null(strstr(dump, "k1 ONE\nadd map F k1"));
	free(dump);
	dump = journal_lines(a, b);
	run_lines(dump);
	free(dump);
	free(ca);
	ca = map_contents(a);
	cb = map_contents(b);
	assert_string_equal(ca, cb);
	free(ca);
	free(cb);

	/* past the bound: the whole contents too */
	snprintf(line, sizeof(line), "clear map %s", b);
	cli(line, CLI_LVL_ADMIN);
	for (int i = 0; i < 4000; i++) {
		snprintf(line, sizeof(line), "add map %s key%d %0300d", b, i, i);
		cli(line, CLI_LVL_ADMIN);
	}
	dump = journal_lines(b, "F");
	assert_int_equal(strncmp(dump, "clear map F\nadd map F key0 ", 27), 0);
	free(dump);
	remove(a);
	remove(b);
}

/* The files live as long as the group: their names are copied out of
 * tmp_path()'s rotating buffers. */
static int setup(void **state)
{
	mapfile = strdup(tmp_path("map.map"));
	write_file(mapfile,
		   "# a comment\n\n"
		   "/api api\n"
		   "/api/v2 api2\n"
		   "exact  value with spaces\n"
		   "example.com dom\n"
		   "dirpart dir\n"
		   "sub sub\n"
		   ".jpg img\n"
		   "^user[0-9]+$ re\n"
		   "num 12\n");
	ipfile = strdup(tmp_path("map_ip.map"));
	write_file(ipfile, "10.0.0.0/8 ten\n10.20.0.0/16 ten20\n::1 six\n");
	intfile = strdup(tmp_path("map_int.map"));
	write_file(intfile, "# ints\n42 answer\n");
	regmfile = strdup(tmp_path("map_regm.map"));
	write_file(regmfile, "^/(img|css)/(.*)$ /static/\\2?k=\\1\n"
		   "^(a)?b(c)$ [\\1|\\2|\\9]\n^n([0-9]+)$ \\1\n^tail$ t\\\n");
	return 0;
}

static int teardown(void **state)
{
	remove(mapfile);
	remove(ipfile);
	remove(intfile);
	remove(regmfile);
	free((char *)mapfile);
	free((char *)ipfile);
	free((char *)intfile);
	free((char *)regmfile);
	pat_ref_free_all();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_convs),
		cmocka_unit_test(test_map_regm),
		cmocka_unit_test(test_map_errors),
		cmocka_unit_test(test_map_runtime),
		cmocka_unit_test(test_vars),
		cmocka_unit_test(test_map_journal),
		cmocka_unit_test(test_map_load_1m),
		cmocka_unit_test(test_map_ip_load_1m),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
