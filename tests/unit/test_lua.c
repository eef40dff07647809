/* Unit tests of the Lua module (src/lua/): the parsers of the core class
 * (HTTP dates, networks, tokenize) cut at every byte, Map/Regex/Concat,
 * loading files (errors naming file and line, registration errors) and
 * tune.lua.maxmem (a memory error, never an abort). The scripts run in the
 * state the module makes, outside any stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/lua.h>

#include "cfg_capture.h"

#ifdef USE_LUA
#include "../../src/lua/lua_int.h"

/* Runs <code> in the state; its first result as a string (NULL for nil),
 * copied into a static buffer. <ok> gets whether it ran without error. */
static const char *run(const char *code, int *ok)
{
	static char out[4096];
	lua_State *L = lua_state();
	const char *r;

	*ok = luaL_loadstring(L, code) == LUA_OK && lua_pcall(L, 0, 1, 0) == LUA_OK;
	r = lua_tostring(L, -1);
	if (r)
		snprintf(out, sizeof(out), "%s", r);
	lua_pop(L, 1);
	return r ? out : NULL;
}

/* Runs <code>, which must succeed, and returns its result. */
static const char *eval(const char *code)
{
	int ok;
	const char *r = run(code, &ok);

	if (!ok)
		fail_msg("'%s' failed: %s", code, r ? r : "?");
	return r;
}

static void test_dates(void **state)
{
	static const char *const dates[] = {
		"Sun, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994",
	};
	char code[256];

	assert_string_equal(eval("return core.http_date('Sun, 06 Nov 1994 08:49:37 GMT')"),
			    "784111777");
	assert_string_equal(eval("return core.imf_date('Sun, 06 Nov 1994 08:49:37 GMT')"),
			    "784111777");
	assert_string_equal(eval("return core.rfc850_date('Sunday, 06-Nov-94 08:49:37 GMT')"),
			    "784111777");
	assert_string_equal(eval("return core.asctime_date('Sun Nov  6 08:49:37 1994')"),
			    "784111777");
	assert_string_equal(eval("return core.http_date('Thu, 01 Jan 1970 00:00:00 GMT')"), "0");
	/* a two-digit year of the 2000s */
	assert_string_equal(eval("return core.http_date('Monday, 01-Jan-24 00:00:00 GMT')"),
			    "1704067200");
	/* the wrong form for the function, or broken ones */
	assert_null(eval("return core.imf_date('Sun Nov  6 08:49:37 1994')"));
	assert_null(eval("return core.http_date('Sun, 06 Nov 1994 25:49:37 GMT')"));
	assert_null(eval("return core.http_date('Sun, 32 Nov 1994 08:49:37 GMT')"));
	assert_null(eval("return core.http_date('Sun, 06 Foo 1994 08:49:37 GMT')"));
	assert_null(eval("return core.http_date('Sun, 06 Nov 1994 08:49:37 UTC')"));
	assert_null(eval("return core.http_date('Sun, 06 Nov 1994 08:49:37 GMT ')"));
	assert_null(eval("return core.http_date('')"));
	/* every prefix of a valid date is no date */
	for (size_t d = 0; d < sizeof(dates) / sizeof(dates[0]); d++)
		for (size_t n = 0; n < strlen(dates[d]); n++) {
			snprintf(code, sizeof(code), "return core.http_date('%.*s')", (int)n, dates[d]);
			assert_null(eval(code));
		}
}

static void test_addresses(void **state)
{
	static const char *const nets[] = { "10.1.2.3/24", "2001:db8::1/32", "192.168.0.1" };
	char code[256];

	assert_string_equal(eval("return tostring(core.match_addr(core.parse_addr('10.1.2.3'), "
				 "core.parse_addr('10.0.0.0/8')))"), "true");
	assert_string_equal(eval("return tostring(core.match_addr(core.parse_addr('10.0.0.0/8'), "
				 "core.parse_addr('10.1.2.3')))"), "true");
	assert_string_equal(eval("return tostring(core.match_addr(core.parse_addr('11.1.2.3'), "
				 "core.parse_addr('10.0.0.0/8')))"), "false");
	assert_string_equal(eval("return tostring(core.match_addr(core.parse_addr('2001:db8::5'), "
				 "core.parse_addr('2001:db8::/32')))"), "true");
	assert_string_equal(eval("return tostring(core.match_addr(core.parse_addr('2001:db9::5'), "
				 "core.parse_addr('2001:db8::/32')))"), "false");
	/* an IPv4 address and an IPv6 network do not meet */
	assert_string_equal(eval("return tostring(core.match_addr(core.parse_addr('10.0.0.1'), "
				 "core.parse_addr('::/1')))"), "false");
	assert_string_equal(eval("return tostring(core.match_addr(core.parse_addr('1.2.3.4/0'), "
				 "core.parse_addr('9.9.9.9')))"), "true");
	assert_null(eval("return core.parse_addr('10.0.0.0/33')"));
	assert_null(eval("return core.parse_addr('10.0.0.0/')"));
	assert_null(eval("return core.parse_addr('10.0.0.0/-1')"));
	assert_null(eval("return core.parse_addr('::1/129')"));
	assert_null(eval("return core.parse_addr('host.example')"));
	/* every prefix parses or not, never more */
	for (size_t d = 0; d < sizeof(nets) / sizeof(nets[0]); d++)
		for (size_t n = 0; n <= strlen(nets[d]); n++) {
			snprintf(code, sizeof(code), "local a = core.parse_addr('%.*s') "
				 "return a and 'net' or 'nil'", (int)n, nets[d]);
			assert_non_null(eval(code));
		}
	assert_string_equal(eval("return core.parse_addr('10.1.2') and 'net' or 'nil'"), "nil");
}

static void test_strings(void **state)
{
	assert_string_equal(eval("return table.concat(core.tokenize('a,b,,c', ','), '|')"), "a|b||c");
	assert_string_equal(eval("return table.concat(core.tokenize('a,b,,c', ',', true), '|')"),
			    "a|b|c");
	assert_string_equal(eval("return #core.tokenize('', ',')"), "1");
	assert_string_equal(eval("return #core.tokenize('', ',', true)"), "0");
	assert_string_equal(eval("local c = core.concat() for i = 1, 1000 do c:add('ab') end "
				 "return #c:dump()"), "2000");
	assert_string_equal(eval("local ok, r = Regex.new('n(..)dle (x)?', true) "
				 "local m, t = r:match('a needle here') "
				 "return tostring(m) .. ':' .. t[1] .. ':' .. t[2] .. ':' .. t[3]"),
			    "true:needle :ee:");
	assert_string_equal(eval("local ok, r = Regex.new('ABC', false) "
				 "return tostring(r:exec('xabcx'))"), "true");
	assert_string_equal(eval("local ok, r = Regex.new('ABC', true) "
				 "return tostring(r:exec('xabcx'))"), "false");
	assert_string_equal(eval("local ok, r = Regex.new('(', true) return tostring(ok)"), "false");
	/* outside a run, waiting is refused, not a crash */
	{
		int ok;

		run("core.msleep(1)", &ok);
		assert_false(ok);
		run("core.yield()", &ok);
		assert_false(ok);
	}
}

/* Writes <text> to a new temporary file named into <path>. */
static void tmp_file(char *path, size_t size, const char *suffix, const char *text)
{
	int fd;

	snprintf(path, size, "/tmp/sluice-test-lua-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Parses "global\n  lua-load <path>" with stderr captured. Returns the
 * number of errors. */
static int load_file(const char *path)
{
	char cfg[512];
	int err;

	snprintf(cfg, sizeof(cfg), "global\n  lua-load %s\n", path);
	capture_start();
	err = cfg_parse_text("test.cfg", cfg, strlen(cfg));
	capture_end();
	return err;
}

static void test_load_errors(void **state)
{
	char path[128];

	/* a syntax error: the configuration line, the file and its line */
	tmp_file(path, sizeof(path), ".lua", "local x = 1\nlocal = 2\n");
	assert_int_equal(load_file(path), 1);
	assert_non_null(strstr(errtext, "test.cfg:2"));
	assert_non_null(strstr(errtext, ":2:"));
	assert_non_null(strstr(errtext, path));
	unlink(path);
	/* an error while the body runs, with its traceback */
	tmp_file(path, sizeof(path), ".lua", "\n\nerror('nope')\n");
	assert_int_equal(load_file(path), 1);
	assert_non_null(strstr(errtext, ":3: nope"));
	assert_non_null(strstr(errtext, "traceback"));
	unlink(path);
	/* a file that is not there */
	assert_int_equal(load_file("/nonexistent/x.lua"), 1);
	assert_non_null(strstr(errtext, "/nonexistent/x.lua"));
	/* registration errors */
	tmp_file(path, sizeof(path), ".lua",
		 "core.register_action('t-bad-set', { 'http-foo' }, function() end)\n");
	assert_int_equal(load_file(path), 1);
	assert_non_null(strstr(errtext, "unknown rule set 'http-foo'"));
	unlink(path);
	tmp_file(path, sizeof(path), ".lua",
		 "core.register_action('t-twice', { 'http-req' }, function() end)\n"
		 "core.register_action('t-twice', { 'http-req' }, function() end)\n");
	assert_int_equal(load_file(path), 1);
	assert_non_null(strstr(errtext, "registered already"));
	unlink(path);
	tmp_file(path, sizeof(path), ".lua",
		 "core.register_service('t-svc', 'udp', function() end)\n");
	assert_int_equal(load_file(path), 1);
	assert_non_null(strstr(errtext, "'http' or 'tcp'"));
	unlink(path);
	/* the body may not use sockets */
	tmp_file(path, sizeof(path), ".lua", "core.tcp():connect('127.0.0.1', 1)\n");
	assert_int_equal(load_file(path), 1);
	assert_non_null(strstr(errtext, "sockets are for actions, services and tasks"));
	unlink(path);
	restore_global();
}

static void test_maps(void **state)
{
	char map[128], ipmap[128], path[128], script[512];

	tmp_file(map, sizeof(map), ".map", "example.com backend1\n");
	tmp_file(ipmap, sizeof(ipmap), ".map", "10.0.0.0/8 internal\n");
	snprintf(script, sizeof(script),
		 "m_str = Map.new('%s', Map._str)\n"
		 "m_ip = Map.new('%s', Map.ip)\n", map, ipmap);
	tmp_file(path, sizeof(path), ".lua", script);
	assert_int_equal(load_file(path), 0);
	assert_string_equal(eval("return m_str:lookup('example.com')"), "backend1");
	assert_null(eval("return m_str:lookup('example.org')"));
	assert_string_equal(eval("return m_str:slookup('example.org')"), "");
	assert_string_equal(eval("return m_ip:lookup('10.20.30.40')"), "internal");
	assert_null(eval("return m_ip:lookup('not-an-ip')"));
	/* core.set_map changes what the Map objects see */
	snprintf(script, sizeof(script), "core.set_map('%s', 'example.org', 'b2') "
		 "return m_str:lookup('example.org')", map);
	assert_string_equal(eval(script), "b2");
	snprintf(script, sizeof(script), "core.del_map('%s', 'example.com') "
		 "return m_str:lookup('example.com')", map);
	assert_null(eval(script));
	unlink(path);
	unlink(map);
	unlink(ipmap);
	restore_global();
}

/* Over tune.lua.maxmem, a script gets a memory error, after which the
 * state is still usable. */
static void test_maxmem(void **state)
{
	char path[128];

	tmp_file(path, sizeof(path), ".lua",
		 "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end\n");
	lg.maxmem = lg.mem + (4u << 20);
	assert_int_equal(load_file(path), 1);
	assert_non_null(strstr(errtext, "memory error"));
	assert_true(lg.mem <= lg.maxmem);
	lg.maxmem = 0;
	assert_string_equal(eval("return tostring(1 + 1)"), "2");
	unlink(path);
	restore_global();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_maxmem),
	};

	return cmocka_run_group_tests(tests, capture_group_setup, NULL);
}

#else   /* !USE_LUA */

int main(void)
{
	return 0;
}

#endif
