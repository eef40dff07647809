/* Unit tests for the syslog parser of log-forward (src/core/syslog.c):
 * RFC 5424 and RFC 3164 headers, what is not one of them, and RFC 6587
 * framing fed cut at every byte (the messages found are the same however
 * the stream is cut). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/syslog.h>

static int str_is(struct syslog_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.p, want, s.len) == 0;
}

static void parse(const char *in, struct syslog_msg *m)
{
	syslog_parse(in, strlen(in), m);
}

static void test_5424(void **state)
{
	struct syslog_msg m;

	parse("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 99 ID47 "
	      "[exampleSDID@32473 iut=\"3\" x=\"a\\]b\"][b@1 c=\"d\"] An application event\n", &m);
	assert_int_equal(m.kind, SYSLOG_5424);
	assert_int_equal(m.facility, 20);
	assert_int_equal(m.level, 5);
	assert_true(m.has_time);
	assert_int_equal(m.year, 2003);
	assert_int_equal(m.mon, 9);
	assert_int_equal(m.mday, 11);
	assert_int_equal(m.hour, 22);
	assert_int_equal(m.sec, 15);
	assert_true(str_is(m.frac, ".003"));
	assert_true(str_is(m.zone, "Z"));
	assert_true(str_is(m.host, "mymachine.example.com"));
	assert_true(str_is(m.tag, "evntslog"));
	assert_true(str_is(m.pid, "99"));
	assert_true(str_is(m.msgid, "ID47"));
	assert_true(str_is(m.sd, "[exampleSDID@32473 iut=\"3\" x=\"a\\]b\"][b@1 c=\"d\"]"));
	assert_true(str_is(m.text, "An application event"));

	/* nil values, an offset zone, no message */
	parse("<0>1 2026-01-02T03:04:05+02:00 - - - - -", &m);
	assert_int_equal(m.kind, SYSLOG_5424);
	assert_int_equal(m.facility, 0);
	assert_true(str_is(m.zone, "+02:00"));
	assert_int_equal(m.frac.len, 0);
	assert_int_equal(m.host.len, 0);
	assert_int_equal(m.tag.len, 0);
	assert_int_equal(m.text.len, 0);
	parse("<14>1 - host app - - - hi", &m);
	assert_int_equal(m.kind, SYSLOG_5424);
	assert_false(m.has_time);
	assert_true(str_is(m.text, "hi"));
}

static void test_3164(void **state)
{
	struct syslog_msg m;

	parse("<134>Nov 27 22:00:00 myhost app[12]: hello 3164", &m);
	assert_int_equal(m.kind, SYSLOG_3164);
	assert_int_equal(m.facility, 16);
	assert_int_equal(m.level, 6);
	assert_int_equal(m.mon, 10);
	assert_int_equal(m.mday, 27);
	assert_int_equal(m.year, 0);
	assert_true(str_is(m.host, "myhost"));
	assert_true(str_is(m.tag, "app"));
	assert_true(str_is(m.pid, "12"));
	assert_true(str_is(m.text, "hello 3164"));

	parse("<13>Jan  5 01:02:03 h tag: no pid", &m);
	assert_int_equal(m.kind, SYSLOG_3164);
	assert_int_equal(m.mday, 5);
	assert_true(str_is(m.tag, "tag"));
	assert_int_equal(m.pid.len, 0);
	assert_true(str_is(m.text, "no pid"));
}

static void test_raw(void **state)
{
	struct syslog_msg m;

	parse("no header at all", &m);
	assert_int_equal(m.kind, SYSLOG_RAW);
	assert_int_equal(m.facility, -1);
	assert_true(str_is(m.text, "no header at all"));
	/* a PRI, then something else: the text is what follows the PRI */
	parse("<12>hello lf\n", &m);
	assert_int_equal(m.kind, SYSLOG_RAW);
	assert_int_equal(m.facility, 1);
	assert_int_equal(m.level, 4);
	assert_true(str_is(m.text, "hello lf"));
	/* a bad PRI is text */
	parse("<192>x", &m);
	assert_int_equal(m.facility, -1);
	assert_true(str_is(m.text, "<192>x"));
	parse("<012>x", &m);
	assert_int_equal(m.facility, -1);
	/* bad dates and headers fall back to raw */
	parse("<13>1 2003-13-11T22:14:15Z h a p m - x", &m);
	assert_int_equal(m.kind, SYSLOG_RAW);
	parse("<13>1 2003-10-11T22:14:15Q h a p m - x", &m);
	assert_int_equal(m.kind, SYSLOG_RAW);
	parse("<13>1 - h a p m [unterminated", &m);
	assert_int_equal(m.kind, SYSLOG_RAW);
	parse("<13>Foo 27 22:00:00 h t: x", &m);
	assert_int_equal(m.kind, SYSLOG_RAW);
	/* every prefix of a valid message parses without reading past it */
	{
		static const char full[] = "<165>1 2003-10-11T22:14:15.003Z host app 99 ID47 "
					   "[a@1 b=\"c\"] text";
		char buf[sizeof(full)];

		for (size_t n = 0; n < sizeof(full); n++) {
			memcpy(buf, full, n);
			syslog_parse(buf, n, &m);
			assert_true(m.text.p >= buf && m.text.p + m.text.len <= buf + n);
		}
	}
}

/* The messages framing finds in <in>, fed in pieces cut at <cut> (0: in
 * one piece), joined with '|'. */
static void frames(const char *in, size_t cut, char *out, size_t osz)
{
	char buf[512];
	size_t have = 0, fed = 0, len = strlen(in);

	out[0] = '\0';
	while (fed < len || have) {
		size_t n = cut ? (len - fed < cut ? len - fed : cut) : len - fed;
		const char *msg;
		size_t ml;
		ssize_t r;

		memcpy(buf + have, in + fed, n);
		have += n;
		fed += n;
		while ((r = syslog_frame(buf, have, 100, &msg, &ml)) > 0) {
			snprintf(out + strlen(out), osz - strlen(out), "%.*s|", (int)ml, msg);
			memmove(buf, buf + r, have - (size_t)r);
			have -= (size_t)r;
		}
		if (r < 0) {
			snprintf(out + strlen(out), osz - strlen(out), "INVALID");
			return;
		}
		if (fed == len)
			break;
	}
}

static void test_framing_every_cut(void **state)
{
	static const char *const streams[][2] = {
		{ "11 <13>hello a5 hello", "<13>hello a|hello|" },
		{ "<13>one\n<14>two\r\nthree\n", "<13>one|<14>two|three|" },
		{ "3 abc<13>line\n4 defg", "abc|<13>line|defg|" },
		{ "0 x", "INVALID" },
		{ "12x34 abc", "INVALID" },
		{ "999 abc", "INVALID" },     /* above the bound (100) */
	};
	char want[512], got[512];

	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		frames(streams[i][0], 0, want, sizeof(want));
		assert_string_equal(want, streams[i][1]);
		for (size_t cut = 1; cut <= strlen(streams[i][0]); cut++) {
			frames(streams[i][0], cut, got, sizeof(got));
			assert_string_equal(got, want);
		}
	}
	/* a line longer than the bound, and an incomplete one */
	{
		char line[300];
		const char *m;
		size_t ml;

		memset(line, 'x', sizeof(line));
		assert_int_equal(syslog_frame(line, sizeof(line), 100, &m, &ml), -1);
		assert_int_equal(syslog_frame(line, 50, 100, &m, &ml), 0);
		assert_int_equal(syslog_frame("12", 2, 100, &m, &ml), 0);
		assert_int_equal(syslog_frame("12 abc", 6, 100, &m, &ml), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_5424),
		cmocka_unit_test(test_3164),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_framing_every_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
