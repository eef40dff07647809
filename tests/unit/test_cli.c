/* Unit tests for the runtime API line handling (src/admin/cli.c) and the
 * built-in and stats commands: splitting on ';', escapes, limits, levels,
 * and every prefix of a few command lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sluice/cfg.h>
#include <sluice/cli.h>
#include <sluice/common.h>
#include <sluice/comp.h>
#include <sluice/errors.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/ssl.h>
#include <sluice/str.h>

#define HELP_HEAD "The following commands are valid at this level:\n"

static struct cli_ctx ctx;

static int setup(void **state)
{
	memset(&ctx, 0, sizeof(ctx));
	ctx.level = CLI_LVL_ADMIN;
	return 0;
}

static int teardown(void **state)
{
	dstr_free(&ctx.out);
	return 0;
}

/* Runs <line> (NUL-terminated) and returns the output so far ("" if none). */
static const char *run(const char *line)
{
	ctx.out.len = 0;
	if (ctx.out.p)
		ctx.out.p[0] = '\0';
	assert_int_equal(cli_exec_line(&ctx, line, strlen(line)), 0);
	return ctx.out.p ? ctx.out.p : "";
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static int ends_with(const char *s, const char *sfx)
{
	size_t ls = strlen(s), lx = strlen(sfx);

	return ls >= lx && memcmp(s + ls - lx, sfx, lx) == 0;
}

static void test_help(void **state)
{
	const char *out = run("help");

	assert_true(strncmp(out, HELP_HEAD, strlen(HELP_HEAD)) == 0);
	assert_non_null(strstr(out, "  help "));
	assert_non_null(strstr(out, "  quit "));
	assert_non_null(strstr(out, "  prompt "));
	assert_non_null(strstr(out, "  show info "));
	assert_non_null(strstr(out, "  show stat "));
	/* Every answer ends with an empty line. */
	assert_true(ends_with(out, "\n\n"));
	assert_int_equal(ctx.quit, 0);
	/* Blanks around the command do not matter. */
	assert_int_equal(count(run("  \thelp\t  "), HELP_HEAD), 1);
	/* ctx.failed counts the commands that failed: an unknown one and a
	 * refused one here, not help (what a reload's state replay reads) */
	ctx.failed = 0;
	run("help; no-such-command; set weight nosuch/srv 5");
	assert_int_equal(ctx.failed, 2);
}

static void test_show_info(void **state)
{
	const char *out = run("show info");

	assert_true(strncmp(out, "Name: sluice\n", 13) == 0);
	assert_non_null(strstr(out, "\nVersion: "));
	assert_non_null(strstr(out, "\nPid: "));
	assert_non_null(strstr(out, "\nMaxconn: "));
	assert_non_null(strstr(out, "\nUptime_sec: "));
	assert_true(ends_with(out, "\n\n"));
	out = run("show info desc");
	assert_true(strncmp(out, "Name: sluice:\"Product name\"\n", 28) == 0);
	out = run("show info typed");
	assert_true(strncmp(out, "0.Name.1:POS:str:sluice\n1.Version.1:POS:str:", strlen("0.Name.1:POS:str:sluice\n1.Version.1:POS:str:")) == 0);
	out = run("show info json");
	assert_true(strncmp(out, "[{\"field\":{\"pos\":0,\"name\":\"Name\"},\"processNum\":1,", strlen("[{\"field\":{\"pos\":0,\"name\":\"Name\"},\"processNum\":1,")) == 0);
	assert_true(ends_with(out, "}]\n\n"));
	out = run("show info bogus");
	assert_non_null(strstr(out, "expects"));
}

static void test_show_stat(void **state)
{
	static const char cfg[] =
		"frontend fe\n  bind 127.0.0.1:8000\n  default_backend be\n"
		"  timeout client 1s\n"
		"backend be\n  timeout connect 1s\n  timeout server 1s\n"
		"  server s1 127.0.0.1:9000 weight 5\n  server s2 127.0.0.1:9001 disabled\n";
	const char *out = run("show stat");
	int saved = dup(2);
	FILE *null = fopen("/dev/null", "w");

	/* No proxy: only the CSV header. */
	assert_true(strncmp(out, "# pxname,svname,qcur,", 21) == 0);
	assert_int_equal(count(out, "\n"), 2);

	/* With a configuration (its warnings silenced). */
	assert_non_null(null);
	fflush(stderr);
	dup2(fileno(null), 2);
	assert_int_equal(cfg_parse_text("cli.cfg", cfg, sizeof(cfg) - 1), 0);
	assert_int_equal(cfg_postparse(), 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(null);

	out = run("show stat");
	assert_non_null(strstr(out, "\nfe,FRONTEND,"));
	assert_non_null(strstr(out, "\nbe,s1,"));
	assert_non_null(strstr(out, "\nbe,s2,"));
	assert_non_null(strstr(out, "\nbe,BACKEND,"));
	assert_non_null(strstr(out, ",MAINT,"));
	assert_true(ends_with(out, "\n\n"));
	/* Filters: proxy by name, type 2 (backends), any server. */
	out = run("show stat be 2 -1");
	assert_null(strstr(out, "FRONTEND"));
	assert_null(strstr(out, "\nbe,s1,"));
	assert_non_null(strstr(out, "\nbe,BACKEND,"));
	out = run("show stat -1 4 -1 no-maint");
	assert_non_null(strstr(out, "\nbe,s1,"));
	assert_null(strstr(out, "\nbe,s2,"));
	out = run("show stat nosuch 1 1");
	assert_non_null(strstr(out, "No such proxy."));
	out = run("show stat -1 x -1");
	assert_non_null(strstr(out, "Invalid type"));
	out = run("show stat -1 -1 x");
	assert_non_null(strstr(out, "Invalid server id"));
	out = run("show stat json");
	assert_true(strncmp(out, "[[{\"objType\":\"Frontend\",", strlen("[[{\"objType\":\"Frontend\",")) == 0);
	assert_non_null(strstr(out, "\"name\":\"sluice_response_time_p50_us\""));
	out = run("show stat typed");
	assert_non_null(strstr(out, ".0.0.pxname.1:KNS:str:fe\n"));
	assert_non_null(strstr(out, "\nS.2.1.0.pxname.1:KNS:str:be\n"));
	out = run("show stat bogus");
	assert_non_null(strstr(out, "expects"));
	proxy_free_all();
}

static void test_unknown_command(void **state)
{
	const char *out = run("foo bar");

	assert_true(strncmp(out, "Unknown command: 'foo'\n", 23) == 0);
	assert_non_null(strstr(out, HELP_HEAD));
	assert_non_null(strstr(out, "  show stat "));
	/* A prefix of a command is not the command. */
	out = run("show");
	assert_true(strncmp(out, "Unknown command: 'show'", 23) == 0);
	out = run("show nothing");
	assert_true(strncmp(out, "Unknown command: 'show'", 23) == 0);
	out = run("HELP");
	assert_true(strncmp(out, "Unknown command: 'HELP'", 23) == 0);
}

static void test_semicolons(void **state)
{
	const char *out = run("help; help");

	assert_int_equal(count(out, HELP_HEAD), 2);
	out = run("help;help;help");
	assert_int_equal(count(out, HELP_HEAD), 3);
	/* Empty commands produce nothing. */
	assert_string_equal(run(";;  ; "), "");
	assert_string_equal(run(""), "");
	out = run("foo;help");
	assert_int_equal(count(out, "Unknown command: 'foo'"), 1);
	assert_int_equal(count(out, HELP_HEAD), 2);
}

static void test_escapes(void **state)
{
	/* "\;" does not split: one unknown command "foo;help". */
	const char *out = run("foo\\;help");

	assert_true(strncmp(out, "Unknown command: 'foo;help'\n", 28) == 0);
	assert_int_equal(count(out, HELP_HEAD), 1);
	/* "\ " joins words: "show info" is then one word. */
	out = run("show\\ info");
	assert_true(strncmp(out, "Unknown command: 'show info'", 28) == 0);
	/* Other escapes drop the backslash. */
	out = run("he\\lp");
	assert_true(strncmp(out, HELP_HEAD, strlen(HELP_HEAD)) == 0);
	out = run("x\\\\y");
	assert_true(strncmp(out, "Unknown command: 'x\\y'", 22) == 0);
}

/* A line ending with a backslash still runs its last command ("help\" and
 * "help; show info\" were once dropped silently). */
static void test_trailing_backslash(void **state)
{
	assert_true(strlen(run("foo\\")) > 0);
	assert_int_equal(count(run("help; help\\"), HELP_HEAD), 2);
}

static void test_nul_byte(void **state)
{
	static const char line[] = "help\0help";

	assert_int_equal(cli_exec_line(&ctx, line, sizeof(line) - 1), -1);
	assert_non_null(strstr(ctx.out.p, "Invalid NUL byte"));
	assert_null(strstr(ctx.out.p, HELP_HEAD));
}

static void test_long_line(void **state)
{
	size_t len = 16384;
	char *line = malloc(len);

	assert_non_null(line);
	memset(line, ' ', len);
	memcpy(line, "help", 4);
	assert_int_equal(cli_exec_line(&ctx, line, len), -1);
	assert_non_null(strstr(ctx.out.p, "Command line too long"));
	assert_null(strstr(ctx.out.p, HELP_HEAD));
	/* One byte less is fine. */
	ctx.out.len = 0;
	ctx.out.p[0] = '\0';
	assert_int_equal(cli_exec_line(&ctx, line, len - 1), 0);
	assert_true(strncmp(ctx.out.p, HELP_HEAD, strlen(HELP_HEAD)) == 0);
	free(line);
}

static void test_too_many_words(void **state)
{
	struct dstr line = { 0 };
	const char *out;

	dstr_printf(&line, "show stat");
	for (int i = 2; i < CLI_MAX_ARGS; i++)
		dstr_printf(&line, " up");
	out = run(line.p);
	assert_null(strstr(out, "Too many words"));
	dstr_printf(&line, " up");
	out = run(line.p);
	assert_non_null(strstr(out, "Too many words"));
	dstr_free(&line);
}

static void test_quit(void **state)
{
	const char *out = run("quit");

	assert_int_equal(ctx.quit, 1);
	assert_string_equal(out, "");
	/* Nothing after "quit" runs. */
	ctx.quit = 0;
	out = run("quit; help");
	assert_int_equal(ctx.quit, 1);
	assert_string_equal(out, "");
	ctx.quit = 0;
	out = run("help; quit; help");
	assert_int_equal(ctx.quit, 1);
	assert_int_equal(count(out, HELP_HEAD), 1);
}

static void test_prompt(void **state)
{
	assert_int_equal(ctx.interactive, 0);
	assert_string_equal(run("prompt"), "\n");
	assert_int_equal(ctx.interactive, 1);
	run("prompt");
	assert_int_equal(ctx.interactive, 0);
	run("prompt; prompt; prompt");
	assert_int_equal(ctx.interactive, 1);
}

static void test_levels(void **state)
{
	const char *out;

	out = run("operator");
	assert_int_equal(ctx.level, CLI_LVL_OPERATOR);
	out = run("user");
	assert_int_equal(ctx.level, CLI_LVL_USER);
	/* A connection never raises its own level. */
	out = run("operator");
	assert_non_null(strstr(out, "Permission denied"));
	assert_int_equal(ctx.level, CLI_LVL_USER);
	/* User-level commands still work. */
	out = run("help");
	assert_non_null(strstr(out, "  show info "));
	out = run("show info");
	assert_true(strncmp(out, "Name: sluice\n", 13) == 0);
	/* Help lists only what the level allows: nothing below user. */
	ctx.level = 0;
	out = run("help");
	assert_non_null(strstr(out, "Permission denied"));
	assert_null(strstr(out, "  help "));
	assert_non_null(strstr(run("show info"), "Permission denied"));
}

/* Exact answers of the level commands, and help filtered by level. */
static void test_level_answers(void **state)
{
	assert_string_equal(run("user; operator"), "\nPermission denied\n\n");
	ctx.level = CLI_LVL_ADMIN;
	assert_non_null(strstr(run("help"), "  set rate-limit connections|http-compression|sessions|ssl-sessions global "));
	assert_string_equal(run("operator; set rate-limit connections global 3"),
			    "\nPermission denied\n\n");
	assert_null(strstr(run("help"), "set rate-limit"));
	assert_non_null(strstr(run("help"), "  show errors "));
	assert_string_equal(run("user; show errors"), "\nPermission denied\n\n");
	assert_null(strstr(run("help"), "  show errors "));
	assert_int_equal(ctx.level, CLI_LVL_USER);
}

/* set rate-limit: arguments, and the value show info reports. */
static void test_set_rate_limit(void **state)
{
	global.conn_rate_limit = 0;
	assert_string_equal(run("set rate-limit connections global 12"), "\n");
	assert_int_equal(global.conn_rate_limit, 12);
	assert_non_null(strstr(run("show info"), "\nConnRateLimit: 12\n"));
	assert_string_equal(run("set rate-limit connections global"), "Expects an integer value.\n\n");
	assert_string_equal(run("set rate-limit connections global 1x"), "Expects an integer value.\n\n");
	assert_string_equal(run("set rate-limit connections global -1"), "Expects an integer value.\n\n");
	assert_true(strncmp(run("set rate-limit frobs global 1"), "'set rate-limit' only supports :\n", 33) == 0);
	assert_true(strncmp(run("set rate-limit"), "'set rate-limit' only supports :\n", 33) == 0);
	assert_int_equal(global.conn_rate_limit, 12);
	assert_string_equal(run("set rate-limit connections global 0"), "\n");
	assert_int_equal(global.conn_rate_limit, 0);
	/* the compression input rate (maxcomprate), kB/s */
	assert_string_equal(run("set rate-limit http-compression global 250"), "\n");
	assert_int_equal(comp_rate_limit(), 250);
	assert_int_equal(global.conn_rate_limit, 0);
	assert_string_equal(run("set rate-limit http-compression global x"),
			    "Expects an integer value.\n\n");
	assert_true(strncmp(run("set rate-limit http-compression local 1"),
			    "'set rate-limit' only supports :\n", 33) == 0);
	assert_string_equal(run("set rate-limit http-compression global 0"), "\n");
	assert_int_equal(comp_rate_limit(), 0);
	/* the TLS session rate (maxsslrate), shown as SslRateLimit */
	assert_string_equal(run("set rate-limit ssl-sessions global 40"), "\n");
	assert_int_equal(ssl_counters.maxsslrate, 40);
	assert_non_null(strstr(run("show info"), "\nSslRateLimit: 40\n"));
	assert_string_equal(run("set rate-limit ssl-sessions global 0"), "\n");
	assert_int_equal(ssl_counters.maxsslrate, 0);
}

/* show errors / show sess arguments without any capture or session. */
static void test_show_errors_sess_args(void **state)
{
	const char *out = run("show errors");

	assert_true(strncmp(out, "Total events captured on [", 26) == 0);
	assert_true(ends_with(out, "] : 0\n\n"));
	assert_string_equal(run("show errors nosuchproxy"), "No such proxy.\n\n");
	assert_true(ends_with(run("show errors 12 request"), "] : 0\n\n"));
	assert_true(ends_with(run("show errors response"), "] : 0\n\n"));
	assert_string_equal(run("show sess all"), "\n");
	assert_string_equal(run("show sess 0x10"), "Session not found.\n\n");
	assert_string_equal(run("show sess 0xzz"), "Session not found.\n\n");
	assert_string_equal(run("show sess -"), "Session not found.\n\n");
	assert_true(strncmp(run("show activity"), "thread_id: 1 (1..1)\ndate_now: ", 30) == 0);
}

/* The escaped dump of "show errors": escapes, line starts, wrapping. */
static void test_errors_dump(void **state)
{
	struct dstr d = { 0 };
	char big[200];

	errors_dump(&d, "GET / HTTP/1.1\r\nA:\tb\\\x01\xff\r\n", 25);
	assert_string_equal(d.p, "  00000  GET / HTTP/1.1\\r\\n\n"
			    "  00016  A:\\tb\\\\\\x01\\xff\\r\\n\n");
	d.len = 0;
	memset(big, 'a', sizeof(big));
	errors_dump(&d, big, sizeof(big));
	/* 63 characters per line after the 9-column prefix, then "+" lines */
	assert_true(strncmp(d.p, "  00000  aaa", 12) == 0);
	assert_non_null(strstr(d.p, "\n  00063+ aaa"));
	assert_non_null(strstr(d.p, "\n  00126+ aaa"));
	assert_true(ends_with(d.p, "a\n"));
	d.len = 0;
	if (d.p)
		d.p[0] = '\0';
	errors_dump(&d, "", 0);
	assert_string_equal(d.p, "");
	dstr_free(&d);
}

/* Every prefix of a few lines, in exactly-sized heap copies, each with a
 * fresh context. */
static void test_cut_at_every_byte(void **state)
{
	static const char *const lines[] = {
		"show stat -1 7 -1 up no-maint; show info",
		"help;prompt\\;x; user ; operator; help",
		"foo\\ bar\\\\;show\\ info\\;;quit; help",
		"show stat 1 2 3; show stat nosuch 1 2; show stat -1 x 1",
		"show info float\\",
	};

	for (size_t t = 0; t < sizeof(lines) / sizeof(lines[0]); t++) {
		size_t len = strlen(lines[t]);

		for (size_t cut = 0; cut <= len; cut++) {
			struct cli_ctx c = { .level = CLI_LVL_ADMIN };
			char *in = malloc(cut ? cut : 1);
			int r;

			assert_non_null(in);
			memcpy(in, lines[t], cut);
			r = cli_exec_line(&c, in, cut);
			assert_true(r == 0 || r == -1);
			if (c.out.p)
				assert_int_equal(strlen(c.out.p), c.out.len);
			assert_true(c.level >= 0 && c.level <= CLI_LVL_ADMIN);
			dstr_free(&c.out);
			free(in);
		}
	}
}

/* ---- str_cli_quote(): words that must come back whole from the splitter ---- */

/* "test-words": prints each word after the command between '<' and '>'. */
static int cli_test_words(struct cli_ctx *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		dstr_printf(&c->out, "<%s>", argv[i]);
	return 0;
}

static struct cli_kw test_words_kws[] = {
	{ { "test-words", NULL }, NULL, NULL, CLI_LVL_USER, cli_test_words },
};

static void test_cli_quote(void **state)
{
	static const char *const words[] = {
		"plain", "with space", "tab\there", "semi;colon", "back\\slash",
		"trailing\\", "\\;", ";;", "\\\\", " lead", "trail ", "a\\ b\\;c",
		"#hash", "'quotes\"", "\xc3\xa9t\xc3\xa9", "%[var(x)]",
	};
	struct dstr line = { 0 }, want = { 0 };

	cli_register(test_words_kws, ARRAY_SIZE(test_words_kws));
	/* one word at a time, then all of them on one line */
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		line.len = 0;
		dstr_printf(&line, "test-words ");
		assert_int_equal(str_cli_quote(&line, words[i], strlen(words[i])), 0);
		want.len = 0;
		dstr_printf(&want, "<%s>\n", words[i]);
		assert_string_equal(run(line.p), want.p);
	}
	line.len = 0;
	want.len = 0;
	dstr_printf(&line, "test-words");
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		dstr_printf(&line, " ");
		assert_int_equal(str_cli_quote(&line, words[i], strlen(words[i])), 0);
		dstr_printf(&want, "<%s>", words[i]);
	}
	dstr_printf(&line, ";test-words x");
	dstr_printf(&want, "\n<x>\n");
	assert_string_equal(run(line.p), want.p);
	/* what no line can carry: nothing is appended */
	line.len = 0;
	dstr_printf(&line, "x");
	assert_int_equal(str_cli_quote(&line, "", 0), -1);
	assert_int_equal(str_cli_quote(&line, "a\nb", 3), -1);
	assert_int_equal(str_cli_quote(&line, "a\rb", 3), -1);
	assert_int_equal(str_cli_quote(&line, "a\0b", 3), -1);
	assert_string_equal(line.p, "x");
	dstr_free(&line);
	dstr_free(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_help, setup, teardown),
		cmocka_unit_test_setup_teardown(test_show_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_show_stat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_semicolons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trailing_backslash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_words, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prompt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_levels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_at_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_rate_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_show_errors_sess_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_dump, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_quote, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
