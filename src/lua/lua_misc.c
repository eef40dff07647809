/* The Map class (lookups in the maps the runtime API changes), the Regex
 * class (PCRE2), the Concat class, and runtime API commands written in Lua
 * (core.register_cli()). */
#ifdef USE_LUA
#include <stdlib.h>
#include <string.h>

#ifdef USE_PCRE2
#include <pcre2.h>
#endif

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/map.h>
#include <sluice/pattern.h>
#include <sluice/sample.h>
#include <sluice/str.h>

#include "lua_int.h"

#define MAP_MT    "sluice.map"
#define REGEX_MT  "sluice.regex"
#define CONCAT_MT "sluice.concat"
#define CLIOUT_MT "sluice.cli"

/* ---- Map ---- */

struct lua_map {
	struct pat_set *ps;
};

/* Map.new(file, method): the file is read now (the body or an init
 * function: reading blocks). */
static int map_new(lua_State *L)
{
	const char *file = luaL_checkstring(L, 1);
	lua_Integer m = lua_check_int(L, 2, "Map.new");
	struct lua_map *map;
	struct pat_ref *ref;
	char *err = NULL;

	if (lg.started)
		return luaL_error(L, "Map.new() reads a file: it is for the body of a file or an "
				  "init function");
	if (m < 0 || m >= PAT_M_COUNT)
		return luaL_argerror(L, 2, "a method of the Map class (Map._str...) is expected");
	ref = pat_ref_load(file, PAT_REF_MAP, file, &err);
	map = lua_newuserdatauv(L, sizeof(*map), 0);
	map->ps = ref ? pat_ref_get_set(ref, (enum pat_match)m, 0, &err) : NULL;
	if (!map->ps) {
		lua_pushfstring(L, "Map.new('%s'): %s", file, err ? err : "cannot load it");
		free(err);
		return lua_error(L);
	}
	luaL_setmetatable(L, MAP_MT);
	return 1;
}

/* The value of key <idx> in the map at 1, or NULL. */
static const char *map_find(lua_State *L)
{
	struct lua_map *map = luaL_checkudata(L, 1, MAP_MT);
	size_t len;
	const char *key = luaL_checklstring(L, 2, &len);
	const struct pat_ref_elt *e = NULL;
	struct sample smp;

	memset(&smp, 0, sizeof(smp));
	if (map->ps->match == PAT_M_IP) {
		if (!smp_parse_ip(key, len, &smp))
			return NULL;
	} else if (map->ps->match == PAT_M_INT) {
		char *end;

		smp.type = SMP_T_SINT;
		smp.u.sint = strtoll(key, &end, 10);
		if (*end || end == key)
			return NULL;
	} else {
		smp.type = SMP_T_STR;
		smp.flags = SMP_F_CONST;
		smp.u.str.p = key;
		smp.u.str.len = len;
	}
	return pat_set_lookup(map->ps, &smp, (const void **)&e) && e ? e->val : NULL;
}

static int map_lookup(lua_State *L)
{
	const char *v = map_find(L);

	if (v)
		lua_pushstring(L, v);
	else
		lua_pushnil(L);
	return 1;
}

static int map_slookup(lua_State *L)
{
	const char *v = map_find(L);

	lua_pushstring(L, v ? v : "");
	return 1;
}

/* ---- Regex ---- */

#ifdef USE_PCRE2
struct lua_regex {
	pcre2_code       *re;
	pcre2_match_data *md;
};

/* Regex.new(regex, case_sensitive): true and the object, or false and the
 * reason. */
static int regex_new(lua_State *L)
{
	size_t len;
	const char *src = luaL_checklstring(L, 1, &len);
	int cs = lua_isnoneornil(L, 2) ? 1 : lua_toboolean(L, 2);
	struct lua_regex *rx = lua_newuserdatauv(L, sizeof(*rx), 0);
	int err;
	PCRE2_SIZE off;

	memset(rx, 0, sizeof(*rx));
	luaL_setmetatable(L, REGEX_MT);
	rx->re = pcre2_compile((PCRE2_SPTR)src, len, cs ? 0 : PCRE2_CASELESS, &err, &off, NULL);
	if (!rx->re) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(err, msg, sizeof(msg));
		lua_pushboolean(L, 0);
		lua_pushfstring(L, "%s at offset %d", (const char *)msg, (int)off);
		return 2;
	}
	pcre2_jit_compile(rx->re, PCRE2_JIT_COMPLETE);
	rx->md = pcre2_match_data_create_from_pattern(rx->re, NULL);
	if (!rx->md)
		return luaL_error(L, "out of memory");
	lua_pushboolean(L, 1);
	lua_insert(L, -2);
	return 2;
}

static int regex_run(lua_State *L, int groups)
{
	struct lua_regex *rx = luaL_checkudata(L, 1, REGEX_MT);
	size_t len;
	const char *s = luaL_checklstring(L, 2, &len);
	int rc;

	if (!rx->re)
		return luaL_error(L, "this regex did not compile");
	rc = pcre2_match(rx->re, (PCRE2_SPTR)s, len, 0, 0, rx->md, NULL);
	lua_pushboolean(L, rc > 0);
	if (!groups)
		return 1;
	lua_newtable(L);
	if (rc > 0) {
		const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(rx->md);
		uint32_t ngroups = 0;

		/* [1] the whole match, then every group of the regex ("" when
		 * it did not take part), at most 20 in all */
		pcre2_pattern_info(rx->re, PCRE2_INFO_CAPTURECOUNT, &ngroups);
		for (int i = 0; i <= (int)ngroups && i < 20; i++) {
			if (i >= rc || ov[2 * i] == PCRE2_UNSET)
				lua_pushliteral(L, "");
			else
				lua_pushlstring(L, s + ov[2 * i], ov[2 * i + 1] - ov[2 * i]);
			lua_rawseti(L, -2, i + 1);
		}
	}
	return 2;
}

static int regex_exec(lua_State *L)  { return regex_run(L, 0); }
static int regex_match(lua_State *L) { return regex_run(L, 1); }

static int regex_gc(lua_State *L)
{
	struct lua_regex *rx = luaL_checkudata(L, 1, REGEX_MT);

	pcre2_match_data_free(rx->md);
	pcre2_code_free(rx->re);
	rx->md = NULL;
	rx->re = NULL;
	return 0;
}
#else
static int regex_new(lua_State *L)
{
	lua_pushboolean(L, 0);
	lua_pushliteral(L, "regular expressions need a build with PCRE2");
	return 2;
}
#endif

/* ---- Concat ---- */

static int concat_new(lua_State *L)
{
	struct dstr *d = lua_newuserdatauv(L, sizeof(*d), 0);

	memset(d, 0, sizeof(*d));
	luaL_setmetatable(L, CONCAT_MT);
	return 1;
}

static int concat_add(lua_State *L)
{
	struct dstr *d = luaL_checkudata(L, 1, CONCAT_MT);
	size_t len;
	const char *s = luaL_checklstring(L, 2, &len);

	if (dstr_add(d, s, len) == -1)
		return luaL_error(L, "not enough memory");
	return 0;
}

static int concat_dump(lua_State *L)
{
	struct dstr *d = luaL_checkudata(L, 1, CONCAT_MT);

	lua_pushlstring(L, d->p ? d->p : "", d->len);
	return 1;
}

static int concat_gc(lua_State *L)
{
	dstr_free(luaL_checkudata(L, 1, CONCAT_MT));
	return 0;
}

/* ---- runtime API commands ---- */

/* A command a script registered. */
struct lua_cli {
	struct cli_kw kw;
	int           ref;
	char         *words[5];
	char          desc[96];
};

/* What the function writes to (AppletTCP-like: send(), getline()). */
struct lua_cliout {
	struct cli_ctx *ctx;      /* NULL once the command ended */
	size_t          pos;      /* in the payload, for getline() */
};

static struct lua_cliout *cliout_check(lua_State *L)
{
	struct lua_cliout *o = luaL_checkudata(L, 1, CLIOUT_MT);

	if (!o->ctx)
		return luaL_error(L, "this object was kept beyond its command"), NULL;
	return o;
}

static int cliout_send(lua_State *L)
{
	struct lua_cliout *o = cliout_check(L);
	size_t len;
	const char *s = luaL_checklstring(L, 2, &len);

	if (dstr_add(&o->ctx->out, s, len) == -1)
		return luaL_error(L, "not enough memory");
	return 0;
}

/* getline(): a line of the command's payload ("<cmd> <<"), "" at its end. */
static int cliout_getline(lua_State *L)
{
	struct lua_cliout *o = cliout_check(L);
	const char *p = o->ctx->payload;
	size_t len = o->ctx->payload_len, start = o->pos, end;

	if (!p || start >= len) {
		lua_pushliteral(L, "");
		return 1;
	}
	for (end = start; end < len && p[end] != '\n'; end++)
		;
	if (end < len)
		end++;
	o->pos = end;
	lua_pushlstring(L, p + start, end - start);
	return 1;
}

/* The row's function: runs the script's function with the command's
 * words, to completion (the runtime API answers at once in sluice: the
 * function cannot sleep nor use sockets). */
static int lua_cli_run(struct cli_ctx *ctx, int argc, char **argv)
{
	int nw;
	const struct cli_kw *kw = cli_cmd_find(argc, argv, &nw);
	const struct lua_cli *c = container_of(kw, struct lua_cli, kw);
	struct lua_run *r = lua_run_new(LUA_K_CLI, NULL, c->desc);
	struct lua_cliout *o;
	enum lua_res res;

	if (!r) {
		dstr_printf(&ctx->out, "Out of memory.\n");
		return -1;
	}
	lua_rawgeti(r->T, LUA_REGISTRYINDEX, c->ref);
	o = lua_newuserdatauv(r->T, sizeof(*o), 0);
	o->ctx = ctx;
	o->pos = 0;
	luaL_setmetatable(r->T, CLIOUT_MT);
	for (int i = 0; i < argc; i++)
		lua_pushstring(r->T, argv[i]);
	res = lua_run_start(r, 1 + argc);
	o->ctx = NULL;
	lua_run_free(r);
	if (res != LUA_RES_DONE) {
		dstr_printf(&ctx->out, "Lua %s failed (see the logs).\n", c->desc);
		return -1;
	}
	return 0;
}

/* core.register_cli({ words }, usage, func) */
int lua_core_register_cli(lua_State *L)
{
	struct lua_cli *c;
	const char *usage = luaL_checkstring(L, 2);
	char words[256];
	int n = 0, nw;

	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checktype(L, 3, LUA_TFUNCTION);
	if (lg.started)
		return luaL_error(L, "core.register_cli() is for the body of a file");
	c = calloc(1, sizeof(*c));
	if (!c)
		return luaL_error(L, "out of memory");
	for (lua_Integer i = 1; lua_rawgeti(L, 1, i) == LUA_TSTRING; i++) {
		if (n == 4) {
			free(c);
			return luaL_error(L, "core.register_cli(): at most 4 command words");
		}
		c->words[n++] = strdup(lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (!n || (cli_cmd_find(n, c->words, &nw) && nw == n)) {
		for (int i = 0; i < n; i++)
			free(c->words[i]);
		free(c);
		return luaL_error(L, n ? "core.register_cli(): the command exists already" :
				  "core.register_cli(): command words are expected");
	}
	for (int i = 0; i < n; i++)
		c->kw.words[i] = c->words[i];
	/* help lists the command's words, then the script's usage text */
	snprintf(words, sizeof(words), "%s%s%s%s%s%s%s", c->words[0],
		 n > 1 ? " " : "", n > 1 ? c->words[1] : "", n > 2 ? " " : "", n > 2 ? c->words[2] : "",
		 n > 3 ? " " : "", n > 3 ? c->words[3] : "");
	c->kw.usage = strdup(words);
	c->kw.help = strdup(usage);
	c->kw.level = CLI_LVL_OPERATOR;
	c->kw.fn = lua_cli_run;
	/* for messages: "Lua command 'show x': ..." */
	snprintf(c->desc, sizeof(c->desc), "command '%s'", c->kw.usage);
	lua_pushvalue(L, 3);
	c->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	cli_register(&c->kw, 1);
	return 0;
}

void lua_misc_register(lua_State *L)
{
	static const luaL_Reg map_fns[] = {
		{ "lookup", map_lookup }, { "slookup", map_slookup }, { NULL, NULL }
	};
#ifdef USE_PCRE2
	static const luaL_Reg regex_fns[] = {
		{ "exec", regex_exec }, { "match", regex_match }, { NULL, NULL }
	};
#endif
	static const luaL_Reg concat_fns[] = {
		{ "add", concat_add }, { "dump", concat_dump }, { NULL, NULL }
	};
	static const luaL_Reg cli_fns[] = {
		{ "send", cliout_send }, { "getline", cliout_getline }, { NULL, NULL }
	};
	static const struct { const char *name; int m; } methods[] = {
		{ "int", PAT_M_INT }, { "ip", PAT_M_IP }, { "str", PAT_M_STR }, { "beg", PAT_M_BEG },
		{ "sub", PAT_M_SUB }, { "dir", PAT_M_DIR }, { "dom", PAT_M_DOM }, { "end", PAT_M_END },
		{ "reg", PAT_M_REG },
	};

	lua_class_new(L, MAP_MT, map_fns);
	lua_pop(L, 1);
	/* the Map class table: new() and the methods, "_str" and "str" */
	lua_newtable(L);
	lua_pushcfunction(L, map_new);
	lua_setfield(L, -2, "new");
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		lua_pushinteger(L, methods[i].m);
		lua_setfield(L, -2, methods[i].name);
		lua_pushinteger(L, methods[i].m);
		lua_pushfstring(L, "_%s", methods[i].name);
		lua_insert(L, -2);
		lua_settable(L, -3);
	}
	lua_setglobal(L, "Map");
#ifdef USE_PCRE2
	lua_class_new(L, REGEX_MT, regex_fns);
	lua_pushcfunction(L, regex_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
#endif
	lua_newtable(L);
	lua_pushcfunction(L, regex_new);
	lua_setfield(L, -2, "new");
	lua_setglobal(L, "Regex");
	lua_class_new(L, CONCAT_MT, concat_fns);
	lua_pushcfunction(L, concat_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	lua_getglobal(L, "core");
	lua_pushcfunction(L, concat_new);
	lua_setfield(L, -2, "concat");
	lua_pop(L, 1);
	lua_class_new(L, CLIOUT_MT, cli_fns);
	lua_pop(L, 1);
}

#endif
