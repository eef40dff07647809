/* libFuzzer harness for the parsers of the Lua core class (src/lua/):
 * HTTP dates (core.http_date and the three forms), networks
 * (core.parse_addr, core.match_addr) and core.tokenize, called from Lua on
 * the input as it is (embedded NULs included). A date must give a time
 * that formats back to the same IMF date; nothing may crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

lua_State *lua_state(void);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char script[] =
	"local s = ...\n"
	"local t = core.http_date(s)\n"
	"for _, f in ipairs({ core.imf_date, core.rfc850_date, core.asctime_date }) do\n"
	"  local u = f(s)\n"
	"  if u and u ~= t then error('a form disagrees with http_date') end\n"
	"end\n"
	"local a = core.parse_addr(s)\n"
	"local b = core.parse_addr('10.0.0.0/8')\n"
	"if a then core.match_addr(a, b) core.match_addr(b, a) core.match_addr(a, a) end\n"
	"local sep = s:sub(1, 2)\n"
	"core.tokenize(s, sep)\n"
	"core.tokenize(s, sep, true)\n"
	"return t\n";

static int fn_ref;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	lua_State *L = lua_state();

	if (luaL_loadbuffer(L, script, sizeof(script) - 1, "=fuzz") != LUA_OK)
		abort();
	fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_State *L = lua_state();

	lua_rawgeti(L, LUA_REGISTRYINDEX, fn_ref);
	lua_pushlstring(L, (const char *)data, size);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK)
		abort();   /* no input may make the script fail */
	if (lua_isinteger(L, -1)) {
		/* a date: it formats back into its IMF form, which parses to it */
		time_t t = (time_t)lua_tointeger(L, -1);
		struct tm tm;
		char imf[64];

		if (gmtime_r(&t, &tm) && strftime(imf, sizeof(imf), "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
			lua_getglobal(L, "core");
			lua_getfield(L, -1, "http_date");
			lua_pushstring(L, imf);
			lua_call(L, 1, 1);
			if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) != (lua_Integer)t)
				abort();
			lua_pop(L, 2);
		}
	}
	lua_pop(L, 1);
	lua_gc(L, LUA_GCSTEP, 0);
	return 0;
}
