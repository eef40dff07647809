/* Samples and Lua: the Fetches and Converters classes (every fetch and
 * converter sluice registers, as methods of txn.f / txn.sf / txn.c /
 * txn.sc, '.' and '+' written '_'), and the fetches and converters scripts
 * register (core.register_fetches(), core.register_converters()) as
 * "lua.<name>". */
#ifdef USE_LUA
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>

#include "lua_int.h"

#define FETCH_MT "sluice.fetches"
#define CONV_MT  "sluice.converters"

struct lua_smpobj {
	struct lua_txn *t;
	int             str;   /* results as strings (sf, sc) */
};

void lua_smp_push(lua_State *L, int txn_idx, int conv, int str)
{
	struct lua_txn *t;
	struct lua_smpobj *o;

	txn_idx = lua_absindex(L, txn_idx);
	t = lua_touserdata(L, txn_idx);
	o = lua_newuserdatauv(L, sizeof(*o), 1);
	o->t = t;
	o->str = str;
	lua_pushvalue(L, txn_idx);
	lua_setiuservalue(L, -2, 1);   /* keeps its TXN alive */
	luaL_setmetatable(L, conv ? CONV_MT : FETCH_MT);
}

void lua_smp_to_lua(lua_State *L, struct sample *smp, int str)
{
	char buf[64];

	if (str && smp->type != SMP_T_STR && smp->type != SMP_T_BIN && !smp_cast(smp, SMP_T_STR)) {
		lua_pushliteral(L, "");
		return;
	}
	switch (smp->type) {
	case SMP_T_BOOL:
		lua_pushboolean(L, smp->u.sint != 0);
		break;
	case SMP_T_SINT:
		lua_pushinteger(L, (lua_Integer)smp->u.sint);
		break;
	case SMP_T_IPV4:
	case SMP_T_IPV6:
		smp_to_text(smp, buf, sizeof(buf));
		lua_pushstring(L, buf);
		break;
	case SMP_T_STR:
	case SMP_T_BIN:
		lua_pushlstring(L, smp->u.str.p ? smp->u.str.p : "", smp->u.str.len);
		break;
	default:
		lua_pushnil(L);
	}
}

int lua_smp_from_lua(lua_State *L, int idx, struct sample *smp)
{
	size_t len;

	smp->flags = 0;
	switch (lua_type(L, idx)) {
	case LUA_TSTRING:
		smp->type = SMP_T_STR;
		smp->u.str.p = lua_tolstring(L, idx, &len);
		smp->u.str.len = len;
		smp->flags = SMP_F_CONST;
		return 1;
	case LUA_TNUMBER:
		smp->type = SMP_T_SINT;
		smp->u.sint = lua_isinteger(L, idx) ? (int64_t)lua_tointeger(L, idx) :
			      (int64_t)lua_tonumber(L, idx);
		return 1;
	case LUA_TBOOLEAN:
		smp->type = SMP_T_BOOL;
		smp->u.sint = lua_toboolean(L, idx);
		return 1;
	default:
		return 0;
	}
}

/* The arguments of a method call from <first> on, as strings, for
 * smp_args_make(). Returns their number (numbers are made strings in
 * place). */
static int lua_smp_argv(lua_State *L, int first, const char **vals, size_t *lens)
{
	int n = lua_gettop(L) - first + 1;

	if (n > SMP_MAX_ARGS)
		luaL_error(L, "too many arguments (at most %d)", SMP_MAX_ARGS);
	for (int i = 0; i < n; i++) {
		vals[i] = lua_tolstring(L, first + i, &lens[i]);
		if (!vals[i])
			luaL_argerror(L, first + i, "a string or a number is expected");
	}
	return n < 0 ? 0 : n;
}

/* The arguments of a call of <name> from stack index <first> on, made for
 * it (a Lua error when they do not suit it). */
static void lua_smp_args(lua_State *L, int first, const char *name, const uint8_t *argt, int nmin,
                         smp_check_fn check, const void *priv, struct smp_arg *args)
{
	const char *vals[SMP_MAX_ARGS];
	size_t lens[SMP_MAX_ARGS];
	char *err = NULL;
	int n = lua_smp_argv(L, first, vals, lens);

	if (smp_args_make(name, argt, nmin, check, priv, n, vals, lens, args, &err) == -1) {
		lua_pushstring(L, err ? err : "invalid arguments");
		free(err);
		lua_error(L);
	}
}

/* Pushes the result of a call: <smp> when <ok>, else nil ("" for the
 * string forms), and gives <args> back. */
static int lua_smp_result_push(lua_State *L, int ok, struct sample *smp, int str,
                               struct smp_arg *args)
{
	if (ok)
		lua_smp_to_lua(L, smp, str);
	else if (str)
		lua_pushliteral(L, "");
	else
		lua_pushnil(L);
	smp_args_release(args);
	return 1;
}

/* txn.f:<fetch>(args...): upvalue 1 is the row. */
static int lua_fetch_method(lua_State *L)
{
	const struct smp_fetch_kw *kw = lua_touserdata(L, lua_upvalueindex(1));
	struct lua_smpobj *o = luaL_checkudata(L, 1, FETCH_MT);
	struct stream *s = o->t->s;
	struct smp_arg args[SMP_MAX_ARGS];
	struct sample smp;

	if (!s)
		return luaL_error(L, "this Fetches object was kept beyond its transaction");
	lua_smp_args(L, 2, kw->name, kw->argt, kw->nmin, kw->check, kw->priv, args);
	memset(&smp, 0, sizeof(smp));
	smp.strm = s;
	return lua_smp_result_push(L, kw->fn(args, &smp, s, kw->priv), &smp, o->str, args);
}

/* txn.c:<converter>(value, args...) */
static int lua_conv_method(lua_State *L)
{
	const struct smp_conv_kw *kw = lua_touserdata(L, lua_upvalueindex(1));
	struct lua_smpobj *o = luaL_checkudata(L, 1, CONV_MT);
	struct smp_arg args[SMP_MAX_ARGS];
	struct sample smp;

	if (!o->t->s)
		return luaL_error(L, "this Converters object was kept beyond its transaction");
	memset(&smp, 0, sizeof(smp));
	if (!lua_smp_from_lua(L, 2, &smp))
		return luaL_argerror(L, 2, "a string, a number or a boolean is expected");
	smp.strm = o->t->s;
	lua_smp_args(L, 3, kw->name, kw->argt, kw->nmin, kw->check, kw->priv, args);
	return lua_smp_result_push(L, (kw->in == SMP_T_ANY || smp_cast(&smp, kw->in)) &&
				   kw->fn(args, &smp, kw->priv), &smp, o->str, args);
}

/* The method name of a fetch or converter: '.', '+' and '-' are '_'. */
static void lua_smp_name(const char *name, char *out, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i < size - 1; i++)
		out[i] = name[i] == '.' || name[i] == '+' || name[i] == '-' ? '_' : name[i];
	out[i] = 0;
}

/* Adds row <kw> as a method of the class table at -1, with <fn>. */
static void lua_smp_method(lua_State *L, const char *name, const void *kw, lua_CFunction fn)
{
	char m[128];

	lua_smp_name(name, m, sizeof(m));
	lua_pushlightuserdata(L, (void *)kw);
	lua_pushcclosure(L, fn, 1);
	lua_setfield(L, -2, m);
}

static void lua_fetch_add(const struct smp_fetch_kw *kw, void *arg)
{
	lua_smp_method(arg, kw->name, kw, lua_fetch_method);
}

static void lua_conv_add(const struct smp_conv_kw *kw, void *arg)
{
	lua_smp_method(arg, kw->name, kw, lua_conv_method);
}

/* The methods table of class <mt> (its __index). */
static void lua_smp_methods(lua_State *L, const char *mt)
{
	luaL_getmetatable(L, mt);
	lua_getfield(L, -1, "__index");
	lua_remove(L, -2);
}

void lua_smp_register(lua_State *L)
{
	static const luaL_Reg none[] = { { NULL, NULL } };

	lua_class_new(L, FETCH_MT, none);
	lua_getfield(L, -1, "__index");
	smp_fetch_foreach(lua_fetch_add, L);
	lua_pop(L, 2);
	lua_class_new(L, CONV_MT, none);
	lua_getfield(L, -1, "__index");
	smp_conv_foreach(lua_conv_add, L);
	lua_pop(L, 2);
}

/* ---- lua.<name> fetches and converters ---- */

/* A function a script registered as a fetch or a converter; its row is
 * part of it. */
struct lua_smp_fn {
	int    ref;          /* the function, in the registry */
	char   desc[80];     /* "fetch 'lua.x'" */
	union {
		struct smp_fetch_kw fetch;
		struct smp_conv_kw  conv;
	} kw;
	char   name[64];     /* "lua.<name>" */
};

/* A returned value made a sample: strings are copied to a scratch area
 * (at most SMP_SCRATCH_SIZE bytes), which lives until the next
 * evaluation. Returns 1, or 0 for nil (no value). */
static int lua_smp_result(lua_State *T, int idx, struct sample *smp)
{
	struct sample v;

	memset(&v, 0, sizeof(v));
	if (!lua_smp_from_lua(T, idx, &v))
		return 0;
	if (v.type == SMP_T_STR) {
		char *out = smp_scratch_get();
		size_t n = MIN(v.u.str.len, (size_t)SMP_SCRATCH_SIZE);

		memcpy(out, v.u.str.p, n);
		v.u.str.p = out;
		v.u.str.len = n;
		v.flags = 0;
	}
	smp->type = v.type;
	smp->u = v.u;
	smp->flags = v.flags;
	return 1;
}

/* Runs the script's function of <f> with what is pushed on <r>'s
 * coroutine (<nargs> arguments after it), its first result into <smp>. */
static int lua_smp_run(struct lua_run *r, int nargs, struct sample *smp)
{
	int ok = 0;

	if (lua_run_start(r, nargs) == LUA_RES_DONE && r->nres >= 1)
		ok = lua_smp_result(r->T, -r->nres, smp);
	lua_run_free(r);
	return ok;
}

/* Pushes the string arguments of <args> on <T>; returns their number. */
static int lua_smp_push_args(lua_State *T, const struct smp_arg *args)
{
	int n = 0;

	for (; n < SMP_MAX_ARGS && args[n].type != ARGT_STOP; n++) {
		if (args[n].type == ARGT_SINT)
			lua_pushinteger(T, (lua_Integer)args[n].sint);
		else
			lua_pushlstring(T, args[n].str ? args[n].str : "", args[n].len);
	}
	return n;
}

/* The fetch of a lua.<name> row: the function gets a TXN object and the
 * configured arguments, and cannot wait (no sleeps, no sockets). */
static int lua_fetch_fn(const struct smp_arg *args, struct sample *smp, struct stream *s,
                        const void *priv)
{
	const struct lua_smp_fn *f = priv;
	struct lua_run *r;
	struct lua_txn *t;

	struct lua_run *cur;
	int nargs;

	if (!s || !(r = lua_run_new(LUA_K_FETCH, s, f->desc)))
		return 0;
	/* (a script calling txn.f:lua_x() may hold all tune.lua.maxmem) */
	cur = lua_unbounded_begin();
	lua_rawgeti(r->T, LUA_REGISTRYINDEX, f->ref);
	t = lua_txn_push(r->T, s, 0, (s->smp_partial & STRM_PARTIAL_RES) ? 1 : 0);
	lua_pushvalue(r->T, -1);
	r->txn_ref = luaL_ref(r->T, LUA_REGISTRYINDEX);
	r->txn = t;
	nargs = lua_smp_push_args(r->T, args);
	lua_unbounded_end(cur);
	return lua_smp_run(r, 1 + nargs, smp);
}

/* The converter of a lua.<name> row: the input as a string, then the
 * configured arguments. */
static int lua_conv_fn(const struct smp_arg *args, struct sample *smp, const void *priv)
{
	const struct lua_smp_fn *f = priv;
	struct lua_run *r = lua_run_new(LUA_K_CONV, smp->strm, f->desc), *cur;
	int nargs;

	if (!r)
		return 0;
	cur = lua_unbounded_begin();
	lua_rawgeti(r->T, LUA_REGISTRYINDEX, f->ref);
	lua_pushlstring(r->T, smp->u.str.p ? smp->u.str.p : "", smp->u.str.len);
	nargs = lua_smp_push_args(r->T, args);
	lua_unbounded_end(cur);
	return lua_smp_run(r, 1 + nargs, smp);
}

/* A new function entry for "lua.<name>" of the function at 2; raises a
 * Lua error when the name is taken or invalid. */
static struct lua_smp_fn *lua_smp_fn_new(lua_State *L, const char *what)
{
	const char *name = luaL_checkstring(L, 1);
	struct lua_smp_fn *f;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	if (lg.started)
		luaL_error(L, "%s is for the body of a file", what);
	if (!*name || strlen(name) > 59 || name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")])
		luaL_argerror(L, 1, "a name of letters, digits, '_', '.' and '-' is expected");
	f = calloc(1, sizeof(*f));
	if (!f)
		luaL_error(L, "out of memory");
	snprintf(f->name, sizeof(f->name), "lua.%s", name);
	snprintf(f->desc, sizeof(f->desc), "%s '%s'", strcmp(what, "register_fetches") == 0 ?
		 "fetch" : "converter", f->name);
	lua_pushvalue(L, 2);
	f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return f;
}

int lua_core_register_fetches(lua_State *L)
{
	struct lua_smp_fn *f = lua_smp_fn_new(L, "register_fetches");

	if (smp_fetch_find(f->name, strlen(f->name))) {
		luaL_unref(L, LUA_REGISTRYINDEX, f->ref);
		lua_pushfstring(L, "core.register_fetches(): '%s' is registered already", f->name);
		free(f);
		return lua_error(L);
	}
	f->kw.fetch = (struct smp_fetch_kw){ f->name, lua_fetch_fn,
		{ ARGT_STR, ARGT_STR, ARGT_STR, ARGT_STR, ARGT_STR, ARGT_STOP }, 0, SMP_T_STR,
		SMP_USE_L4 | SMP_USE_L7REQ | SMP_USE_L7RES, NULL, f };
	smp_register_fetches(&f->kw.fetch, 1);
	/* txn.f:lua_<name>() too */
	lua_smp_methods(L, FETCH_MT);
	lua_fetch_add(&f->kw.fetch, L);
	lua_pop(L, 1);
	return 0;
}

int lua_core_register_converters(lua_State *L)
{
	struct lua_smp_fn *f = lua_smp_fn_new(L, "register_converters");

	f->kw.conv = (struct smp_conv_kw){ f->name, lua_conv_fn,
		{ ARGT_STR, ARGT_STR, ARGT_STR, ARGT_STR, ARGT_STR, ARGT_STOP }, 0, SMP_T_STR,
		SMP_T_STR, NULL, f };
	smp_register_convs(&f->kw.conv, 1);
	lua_smp_methods(L, CONV_MT);
	lua_conv_add(&f->kw.conv, L);
	lua_pop(L, 1);
	return 0;
}

#endif
