/* Helpers shared by the unit tests that parse configuration text: stderr
 * captured into <errtext> around the parser, checks on those messages, and
 * struct global put back between tests. Include after <cmocka.h>. */
#ifndef SLUICE_TESTS_CFG_CAPTURE_H
#define SLUICE_TESTS_CFG_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/cfg.h>
#include <sluice/global.h>

static struct global pristine;   /* struct global before any parsing (group setup) */
static char *errtext;            /* stderr of the last capture, NULL after restore_global() */

static FILE *cap_file;
static int cap_saved = -1;

/* A cmocka group setup keeping struct global as it is before any parsing,
 * for restore_global(). */
static inline int capture_group_setup(void **state)
{
	pristine = global;
	return 0;
}

/* Starts sending stderr (fd 2) to a temporary file, until capture_end(). */
static inline void capture_start(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	assert_non_null(cap_file);
	cap_saved = dup(2);
	assert_true(cap_saved >= 0);
	assert_true(dup2(fileno(cap_file), 2) == 2);
}

/* Stops capturing; the text goes to <errtext> (freed by the next capture
 * and by restore_global()). */
static inline void capture_end(void)
{
	long n;

	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	cap_saved = -1;
	free(errtext);
	fseek(cap_file, 0, SEEK_END);
	n = ftell(cap_file);
	rewind(cap_file);
	errtext = calloc(1, (size_t)n + 1);
	assert_non_null(errtext);
	assert_int_equal(fread(errtext, 1, (size_t)n, cap_file), (size_t)n);
	fclose(cap_file);
	cap_file = NULL;
}

/* Parses <text> as "t.cfg"; returns the error count, messages in errtext. */
static inline int parse(const char *text)
{
	int errors;

	capture_start();
	errors = cfg_parse_text("t.cfg", text, strlen(text));
	capture_end();
	return errors;
}

/* Runs the post-parse hooks; returns the error count, messages in errtext. */
static inline int postparse(void)
{
	int errors;

	capture_start();
	errors = cfg_postparse();
	capture_end();
	return errors;
}

/* Parses <text> as "t.cfg" then, if it had no error, runs the post-parse
 * hooks, both under one capture; returns the total error count, messages
 * (the parser's warnings included) in errtext. */
static inline int load(const char *text)
{
	int errors;

	capture_start();
	errors = cfg_parse_text("t.cfg", text, strlen(text));
	if (!errors)
		errors = cfg_postparse();
	capture_end();
	return errors;
}

/* Asserts that the captured messages contain <what>. */
static inline void expect_msg(const char *what)
{
	if (!errtext || !strstr(errtext, what))
		fail_msg("expected message '%s' in:\n%s", what, errtext ? errtext : "(nothing)");
}

/* Asserts that the captured messages do not contain <what>. */
static inline void expect_no_msg(const char *what)
{
	if (errtext && strstr(errtext, what))
		fail_msg("unexpected message '%s' in:\n%s", what, errtext);
}

/* Frees the strings parsing may have put in struct global, then puts it
 * back as <pristine> and forgets <errtext>. What global points to otherwise
 * (proxies, loggers, listeners) is the caller's to free first. */
static inline void restore_global(void)
{
	free(global.pidfile);
	free(global.chroot);
	free(global.node);
	free(global.desc);
	global = pristine;
	free(errtext);
	errtext = NULL;
}

/* Asserts that <expr>, an error count with its messages in errtext, is <n>,
 * showing the messages if not. A macro, so that a failure names the test's
 * line. */
#define EXPECT_ERRORS(expr, n) do { \
	int e_ = (expr); \
	if (e_ != (n)) \
		fail_msg("expected %d errors, got %d:\n%s", (n), e_, errtext); \
} while (0)

/* Parses <text> and asserts <n> errors. The state of earlier parses is kept
 * (see PARSE_FRESH). */
#define PARSE_ERRORS(text, n) EXPECT_ERRORS(parse(text), n)

/* Same, from a clean state: the including test defines reset(). */
#define PARSE_FRESH(text, n) do { reset(NULL); PARSE_ERRORS(text, n); } while (0)

/* Loads <text> (see load()) and asserts <n> errors. */
#define LOAD(text, n) EXPECT_ERRORS(load(text), n)

#endif
