/* The Proxy, Server, Listener and StickTable classes and core.proxies,
 * core.frontends, core.backends. What they change goes through the
 * runtime API's own commands (cli_cmd.h), so that a script and an
 * operator's "set server" do exactly the same thing. */
#ifdef USE_LUA
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/lua.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/stktable.h>
#include <sluice/stream.h>

#include "lua_int.h"

#define PX_MT  "sluice.proxy"
#define SRV_MT "sluice.server"
#define LI_MT  "sluice.listener"
#define STK_MT "sluice.sticktable"

struct lua_pxobj  { struct proxy *px; };
struct lua_srvobj { struct proxy *px; struct server *srv; };
struct lua_liobj  { struct listener *li; };
struct lua_stkobj { struct stktable *t; };

static lua_stats_fn lua_stats_provider;
static lua_info_fn  lua_info_provider;

void lua_set_stats_provider(lua_stats_fn stats, lua_info_fn info)
{
	lua_stats_provider = stats;
	lua_info_provider = info;
}

/* ---- runtime API commands ---- */

/* Runs the runtime API command of <argv> (<argc> words) at admin level; its
 * error message becomes a Lua error. */
static void px_cli(lua_State *L, int argc, char **argv)
{
	struct cli_ctx ctx;
	const struct cli_kw *kw;
	int n, ret;

	memset(&ctx, 0, sizeof(ctx));
	ctx.level = CLI_LVL_ADMIN;
	kw = cli_cmd_find(argc, argv, &n);
	BUG_ON(!kw, "a runtime command the Lua classes use is missing");
	ret = kw->fn(&ctx, argc, argv);
	if (ret == -1) {
		size_t len = ctx.out.len;

		while (len && ctx.out.p[len - 1] == '\n')
			len--;
		lua_pushlstring(L, ctx.out.p ? ctx.out.p : "failed", ctx.out.p ? len : 6);
		dstr_free(&ctx.out);
		lua_error(L);
	}
	dstr_free(&ctx.out);
}

/* ---- Server ---- */

/* The server of the object at 1, still configured ("del server" may have
 * removed it). */
static struct lua_srvobj *srv_check(lua_State *L)
{
	struct lua_srvobj *o = luaL_checkudata(L, 1, SRV_MT);

	for (struct server *s = o->px->servers; s; s = s->next)
		if (s == o->srv)
			return o;
	luaL_error(L, "this server was removed");
	return NULL;
}

/* "backend/server" of <o>, in <buf>. */
static char *srv_id(const struct lua_srvobj *o, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", o->px->name, o->srv->name);
	return buf;
}

/* Runs "<w0> <w1> [<w2>] <backend>/<server> [<arg>...]": the words before
 * the server, then those after. */
static int srv_cmd(lua_State *L, const char *w0, const char *w1, const char *w2, const char *a0,
                   const char *a1, const char *a2)
{
	struct lua_srvobj *o = srv_check(L);
	char id[512];
	char *argv[8];
	int argc = 0;

	argv[argc++] = (char *)w0;
	argv[argc++] = (char *)w1;
	if (w2)
		argv[argc++] = (char *)w2;
	argv[argc++] = srv_id(o, id, sizeof(id));
	if (a0)
		argv[argc++] = (char *)a0;
	if (a1)
		argv[argc++] = (char *)a1;
	if (a2)
		argv[argc++] = (char *)a2;
	px_cli(L, argc, argv);
	return 0;
}

static int srv_set_weight(lua_State *L)
{
	return srv_cmd(L, "set", "weight", NULL, luaL_checkstring(L, 2), NULL, NULL);
}

static int srv_set_maxconn(lua_State *L)
{
	return srv_cmd(L, "set", "maxconn", "server", luaL_checkstring(L, 2), NULL, NULL);
}

/* set_addr(addr [, port]): "set server <bk>/<srv> addr <addr> [port <port>]" */
static int srv_set_addr_port(lua_State *L)
{
	struct lua_srvobj *o = srv_check(L);
	char id[512];
	char *argv[8] = { "set", "server", srv_id(o, id, sizeof(id)), "addr",
			  (char *)luaL_checkstring(L, 2), "port", NULL, NULL };

	if (lua_isnoneornil(L, 3)) {
		px_cli(L, 5, argv);
		return 0;
	}
	argv[6] = (char *)luaL_checkstring(L, 3);
	px_cli(L, 7, argv);
	return 0;
}

static int srv_set_drain(lua_State *L)  { return srv_cmd(L, "set", "server", NULL, "state", "drain", NULL); }
static int srv_set_maint(lua_State *L)  { return srv_cmd(L, "set", "server", NULL, "state", "maint", NULL); }
static int srv_set_ready(lua_State *L)  { return srv_cmd(L, "set", "server", NULL, "state", "ready", NULL); }
static int srv_check_enable(lua_State *L)  { return srv_cmd(L, "enable", "health", NULL, NULL, NULL, NULL); }
static int srv_check_disable(lua_State *L) { return srv_cmd(L, "disable", "health", NULL, NULL, NULL, NULL); }
static int srv_check_up(lua_State *L)   { return srv_cmd(L, "set", "server", NULL, "health", "up", NULL); }
static int srv_check_nolb(lua_State *L) { return srv_cmd(L, "set", "server", NULL, "health", "stopping", NULL); }
static int srv_check_down(lua_State *L) { return srv_cmd(L, "set", "server", NULL, "health", "down", NULL); }
static int srv_agent_enable(lua_State *L)  { return srv_cmd(L, "enable", "agent", NULL, NULL, NULL, NULL); }
static int srv_agent_disable(lua_State *L) { return srv_cmd(L, "disable", "agent", NULL, NULL, NULL, NULL); }
static int srv_agent_up(lua_State *L)   { return srv_cmd(L, "set", "server", NULL, "agent", "up", NULL); }
static int srv_agent_down(lua_State *L) { return srv_cmd(L, "set", "server", NULL, "agent", "down", NULL); }
/* shut_sess(): the server's streams are closed at the next loop pass, as
 * HAProxy's stream shutdown is asynchronous: the stream of the script
 * calling it may be one of them, and must not be freed under its run. */
static int srv_shut_sess(lua_State *L)
{
	stream_kill_server_soon(srv_check(L)->srv);
	return 0;
}

static int srv_get_weight(lua_State *L)
{
	lua_pushinteger(L, srv_check(L)->srv->uweight);
	return 1;
}

static int srv_get_maxconn(lua_State *L)
{
	lua_pushinteger(L, srv_check(L)->srv->maxconn);
	return 1;
}

static int srv_is_draining(lua_State *L)
{
	lua_pushboolean(L, !!(srv_check(L)->srv->flags & SRV_F_DRAIN));
	return 1;
}

static int srv_get_addr(lua_State *L)
{
	struct lua_srvobj *o = srv_check(L);
	char buf[128];

	lua_pushstring(L, addr_to_str(&o->srv->addr, buf, sizeof(buf)));
	return 1;
}

static void stats_put(void *arg, const char *name, const char *val)
{
	lua_State *L = arg;

	lua_pushstring(L, val);
	lua_setfield(L, -2, name);
}

/* get_stats(): the object's `show stat` row as a table. */
static int obj_stats(lua_State *L, int kind, const void *obj, int be)
{
	lua_newtable(L);
	if (lua_stats_provider)
		lua_stats_provider(kind, obj, be, stats_put, L);
	return 1;
}

static int srv_get_stats(lua_State *L)
{
	return obj_stats(L, LUA_ST_SERVER, srv_check(L)->srv, 0);
}

/* __index: methods, then name and puid. */
static int srv_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	struct lua_srvobj *o;

	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
		return 1;
	o = srv_check(L);
	if (k && strcmp(k, "name") == 0)
		lua_pushstring(L, o->srv->name);
	else if (k && strcmp(k, "puid") == 0)
		lua_pushinteger(L, o->srv->id);
	else
		lua_pushnil(L);
	return 1;
}

static void srv_push(lua_State *L, struct proxy *px, struct server *srv)
{
	struct lua_srvobj *o = lua_newuserdatauv(L, sizeof(*o), 0);

	o->px = px;
	o->srv = srv;
	luaL_setmetatable(L, SRV_MT);
}

/* ---- Listener ---- */

static int li_get_stats(lua_State *L)
{
	struct lua_liobj *o = luaL_checkudata(L, 1, LI_MT);

	return obj_stats(L, LUA_ST_LISTENER, o->li, 0);
}

/* ---- StickTable ---- */

static struct stktable *stk_check(lua_State *L)
{
	return ((struct lua_stkobj *)luaL_checkudata(L, 1, STK_MT))->t;
}

static int stk_info(lua_State *L)
{
	struct stktable *t = stk_check(L);

	lua_newtable(L);
	lua_pushstring(L, stk_key_type_name(t->type));
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, t->key_size);
	lua_setfield(L, -2, "length");
	lua_pushinteger(L, t->size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, t->used);
	lua_setfield(L, -2, "used");
	lua_pushinteger(L, t->expire);
	lua_setfield(L, -2, "expire");
	lua_pushboolean(L, t->nopurge);
	lua_setfield(L, -2, "nopurge");
	lua_newtable(L);
	for (int dt = 0; dt < STK_DT_COUNT; dt++) {
		if (t->off[dt] < 0)
			continue;
		lua_pushinteger(L, stk_dt_is_rate(dt) ? (lua_Integer)t->period[dt] : -1);
		lua_setfield(L, -2, stk_dt_name(dt));
	}
	lua_setfield(L, -2, "data");
	return 1;
}

/* The stored data of <ts> as a table (an array type: a sequence). */
static void stk_push_entry(lua_State *L, struct stktable *t, struct stksess *ts)
{
	lua_newtable(L);
	for (int dt = 0; dt < STK_DT_COUNT; dt++) {
		int64_t v;

		if (stk_dt_is_array(dt) && t->off[dt] >= 0) {
			lua_newtable(L);
			for (unsigned i = 0; stk_data_get_at(t, ts, dt, i, &v); i++) {
				lua_pushinteger(L, (lua_Integer)v);
				lua_rawseti(L, -2, (lua_Integer)i + 1);
			}
			lua_setfield(L, -2, stk_dt_name(dt));
		} else if (stk_data_get(t, ts, dt, &v)) {
			lua_pushinteger(L, (lua_Integer)v);
			lua_setfield(L, -2, stk_dt_name(dt));
		}
	}
}

static int stk_lookup_l(lua_State *L)
{
	struct stktable *t = stk_check(L);
	unsigned char key[1024];
	uint32_t klen;
	struct stksess *ts;

	if (t->key_size > sizeof(key) || stk_key_parse(t, luaL_checkstring(L, 2), key, &klen) == -1)
		return luaL_argerror(L, 2, "not a key of this table");
	ts = stk_lookup(t, key, klen);
	if (!ts)
		lua_pushnil(L);
	else
		stk_push_entry(L, t, ts);
	return 1;
}

/* dump([filter]): { key = data } for the entries the filter keeps: up to
 * 4 { "<data>", "eq|ne|le|lt|ge|gt", <value> } comparisons, all true. */
static int stk_dump(lua_State *L)
{
	static const char *const ops[] = { "eq", "ne", "le", "lt", "ge", "gt" };
	struct stktable *t = stk_check(L);
	struct { int dt, op; int64_t v; } f[4];
	int nf = 0;

	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		for (lua_Integer i = 1; lua_rawgeti(L, 2, i) == LUA_TTABLE; i++) {
			const char *name, *op;
			int j;

			if (nf == 4)
				return luaL_error(L, "dump(): at most 4 filter entries");
			lua_rawgeti(L, -1, 1);
			lua_rawgeti(L, -2, 2);
			lua_rawgeti(L, -3, 3);
			name = lua_tostring(L, -3);
			op = lua_tostring(L, -2);
			f[nf].dt = name ? stk_dt_find(name, strlen(name)) : -1;
			for (j = 0; op && j < 6 && strcmp(op, ops[j]); j++)
				;
			if (f[nf].dt < 0 || !op || j == 6 || !lua_isinteger(L, -1))
				return luaL_error(L, "dump(): a filter entry is { \"<data>\", \"eq|ne|le|lt|"
						  "ge|gt\", <integer> }");
			f[nf].op = j;
			f[nf].v = (int64_t)lua_tointeger(L, -1);
			nf++;
			lua_pop(L, 4);
		}
		lua_pop(L, 1);
	}
	lua_newtable(L);
	for (struct stksess *ts = t->lru_head; ts; ts = ts->next) {
		char key[512];
		int keep = 1;

		for (int i = 0; i < nf && keep; i++) {
			int64_t v;

			if (!stk_data_get(t, ts, f[i].dt, &v))
				keep = 0;
			else
				keep = f[i].op == 0 ? v == f[i].v : f[i].op == 1 ? v != f[i].v :
				       f[i].op == 2 ? v <= f[i].v : f[i].op == 3 ? v < f[i].v :
				       f[i].op == 4 ? v >= f[i].v : v > f[i].v;
		}
		if (!keep)
			continue;
		stk_key_print(t, ts, key, sizeof(key));
		stk_push_entry(L, t, ts);
		lua_setfield(L, -2, key);
	}
	return 1;
}

/* ---- Proxy ---- */

static struct proxy *px_check(lua_State *L)
{
	return ((struct lua_pxobj *)luaL_checkudata(L, 1, PX_MT))->px;
}

static int px_cmd(lua_State *L, const char *w0, const char *w1)
{
	struct proxy *px = px_check(L);
	char *argv[3] = { (char *)w0, (char *)w1, px->name };

	if (!(px->cap & PR_CAP_FE))
		return luaL_error(L, "'%s' is not a frontend", px->name);
	px_cli(L, 3, argv);
	return 0;
}

static int px_pause(lua_State *L)  { return px_cmd(L, "disable", "frontend"); }
static int px_resume(lua_State *L) { return px_cmd(L, "enable", "frontend"); }
static int px_stop(lua_State *L)   { return px_cmd(L, "shutdown", "frontend"); }

/* shut_bcksess(): the sessions of its backup servers are closed, at the
 * next loop pass (see shut_sess()). */
static int px_shut_bcksess(lua_State *L)
{
	struct proxy *px = px_check(L);

	for (struct server *srv = px->servers; srv; srv = srv->next)
		if (srv->flags & SRV_F_BACKUP)
			stream_kill_server_soon(srv);
	return 0;
}

static int px_get_cap(lua_State *L)
{
	struct proxy *px = px_check(L);

	lua_pushstring(L, (px->cap & (PR_CAP_FE | PR_CAP_BE)) == (PR_CAP_FE | PR_CAP_BE) ? "proxy" :
			  px->cap & PR_CAP_FE ? "frontend" : "backend");
	return 1;
}

static int px_get_mode(lua_State *L)
{
	lua_pushstring(L, px_check(L)->mode == PR_MODE_HTTP ? "http" : "tcp");
	return 1;
}

static int px_get_stats(lua_State *L)
{
	struct proxy *px = px_check(L);

	return obj_stats(L, LUA_ST_PROXY, px, !(px->cap & PR_CAP_FE));
}

static void px_push(lua_State *L, struct proxy *px)
{
	struct lua_pxobj *o = lua_newuserdatauv(L, sizeof(*o), 0);

	o->px = px;
	luaL_setmetatable(L, PX_MT);
}

/* __index: methods, then name, uuid, servers, listeners, stktable. */
static int px_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	struct proxy *px;

	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
		return 1;
	px = px_check(L);
	if (!k) {
		lua_pushnil(L);
	} else if (strcmp(k, "name") == 0) {
		lua_pushstring(L, px->name);
	} else if (strcmp(k, "uuid") == 0) {
		lua_pushinteger(L, px->id);
	} else if (strcmp(k, "servers") == 0) {
		lua_newtable(L);
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			srv_push(L, px, srv);
			lua_setfield(L, -2, srv->name);
		}
	} else if (strcmp(k, "listeners") == 0) {
		int n = 0;

		lua_newtable(L);
		for (struct listener *li = px->listeners; li; li = li->next) {
			struct lua_liobj *o = lua_newuserdatauv(L, sizeof(*o), 0);
			char name[32];

			o->li = li;
			luaL_setmetatable(L, LI_MT);
			snprintf(name, sizeof(name), "sock-%d", ++n);
			lua_setfield(L, -2, li->bc && li->bc->name ? li->bc->name : name);
		}
	} else if (strcmp(k, "stktable") == 0) {
		struct stktable *t = stk_table_of(px);

		if (t) {
			struct lua_stkobj *o = lua_newuserdatauv(L, sizeof(*o), 0);

			o->t = t;
			luaL_setmetatable(L, STK_MT);
		} else {
			lua_pushnil(L);
		}
	} else {
		lua_pushnil(L);
	}
	return 1;
}

/* ---- core.proxies, core.frontends, core.backends ---- */

/* __index of core: the tables of proxies are made when read. */
static int core_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	unsigned cap;

	if (!k)
		return 0;
	if (strcmp(k, "proxies") == 0)
		cap = PR_CAP_FE | PR_CAP_BE;
	else if (strcmp(k, "frontends") == 0)
		cap = PR_CAP_FE;
	else if (strcmp(k, "backends") == 0)
		cap = PR_CAP_BE;
	else
		return 0;
	lua_newtable(L);
	for (struct proxy *px = global.proxies; px; px = px->next) {
		if (!(px->cap & cap))
			continue;
		px_push(L, px);
		lua_setfield(L, -2, px->name);
	}
	return 1;
}

static void info_put(void *arg, const char *name, const char *val)
{
	stats_put(arg, name, val);
}

/* core.get_info(): the `show info` fields. */
static int core_get_info(lua_State *L)
{
	lua_newtable(L);
	if (lua_info_provider)
		lua_info_provider(info_put, L);
	return 1;
}

void lua_px_register(lua_State *L)
{
	static const luaL_Reg srv_fns[] = {
		{ "is_draining", srv_is_draining }, { "set_maxconn", srv_set_maxconn },
		{ "get_maxconn", srv_get_maxconn }, { "set_weight", srv_set_weight },
		{ "get_weight", srv_get_weight }, { "set_addr", srv_set_addr_port },
		{ "get_addr", srv_get_addr }, { "get_stats", srv_get_stats },
		{ "shut_sess", srv_shut_sess }, { "set_drain", srv_set_drain },
		{ "set_maint", srv_set_maint }, { "set_ready", srv_set_ready },
		{ "check_enable", srv_check_enable }, { "check_disable", srv_check_disable },
		{ "check_force_up", srv_check_up }, { "check_force_nolb", srv_check_nolb },
		{ "check_force_down", srv_check_down }, { "agent_enable", srv_agent_enable },
		{ "agent_disable", srv_agent_disable }, { "agent_force_up", srv_agent_up },
		{ "agent_force_down", srv_agent_down },
		{ NULL, NULL }
	};
	static const luaL_Reg px_fns[] = {
		{ "pause", px_pause }, { "resume", px_resume }, { "stop", px_stop },
		{ "shut_bcksess", px_shut_bcksess }, { "get_cap", px_get_cap },
		{ "get_mode", px_get_mode }, { "get_stats", px_get_stats },
		{ NULL, NULL }
	};
	static const luaL_Reg li_fns[] = { { "get_stats", li_get_stats }, { NULL, NULL } };
	static const luaL_Reg stk_fns[] = {
		{ "info", stk_info }, { "lookup", stk_lookup_l }, { "dump", stk_dump },
		{ NULL, NULL }
	};

	luaL_newmetatable(L, SRV_MT);
	lua_newtable(L);
	luaL_setfuncs(L, srv_fns, 0);
	lua_pushcclosure(L, srv_index, 1);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	luaL_newmetatable(L, PX_MT);
	lua_newtable(L);
	luaL_setfuncs(L, px_fns, 0);
	lua_pushcclosure(L, px_index, 1);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	lua_class_new(L, LI_MT, li_fns);
	lua_pop(L, 1);
	lua_class_new(L, STK_MT, stk_fns);
	lua_pop(L, 1);
	lua_getglobal(L, "core");
	lua_pushcfunction(L, core_get_info);
	lua_setfield(L, -2, "get_info");
	lua_newtable(L);
	lua_pushcfunction(L, core_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
	lua_pop(L, 1);
}

#endif
