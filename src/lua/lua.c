/* Lua 5.4 inside the loop: the one state (its allocator bounded by
 * tune.lua.maxmem), the global-section keywords, and the runs: each call of
 * a script's function runs in a coroutine of its own that may wait (sleep,
 * socket, forced yield) without blocking the loop, with its pure runtime
 * bounded by the tune.lua.*-timeout of its context. */
#ifdef USE_LUA
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lualib.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/lua.h>
#include <sluice/proxy.h>
#include <sluice/str.h>
#include <sluice/stream.h>

#include "lua_int.h"

struct lua_glob lg = {
	.forced_yield = 10000,
	.session_to   = 4000,
	.service_to   = 4000,
	.inits        = LUA_NOREF,
};

static int lua_maxmem_mb;   /* tune.lua.maxmem, as configured */

#define LUA_POOL_MAX 64     /* finished runs kept with their coroutine */

double lua_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the state ---- */

/* Every allocation of the state. Past tune.lua.maxmem an allocation fails
 * (the script gets a memory error) only while a run executes, protected:
 * the C code preparing a run may go a few bytes beyond, never abort. */
static void *lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	size_t old = ptr ? osize : 0;
	void *p;

	if (!nsize) {
		lg.mem -= old;
		free(ptr);
		return NULL;
	}
	if (lg.maxmem && lg.cur && nsize > old && lg.mem - old + nsize > lg.maxmem)
		return NULL;
	p = realloc(ptr, nsize);
	if (p)
		lg.mem = lg.mem - old + nsize;
	return p;
}

/* An error outside any protected call: a bug of this module. */
static int lua_panic(lua_State *L)
{
	const char *msg = lua_tostring(L, -1);

	log_alert("Lua: unprotected error: %s", msg ? msg : "?");
	abort();
	return 0;
}

lua_State *lua_state(void)
{
	lua_State *L;

	if (lg.L)
		return lg.L;
	L = lua_newstate(lua_alloc, NULL);
	BUG_ON(!L, "out of memory creating the Lua state");
	lua_atpanic(L, lua_panic);
	luaL_openlibs(L);
	lg.L = L;
	lua_newtable(L);
	lg.inits = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_core_register(L);
	lua_txn_register(L);
	lua_smp_register(L);
	lua_applet_register(L);
	lua_sock_register(L);
	lua_px_register(L);
	lua_misc_register(L);
	return L;
}

void lua_class_new(lua_State *L, const char *name, const luaL_Reg *fns)
{
	luaL_newmetatable(L, name);
	lua_newtable(L);
	luaL_setfuncs(L, fns, 0);
	lua_setfield(L, -2, "__index");
}

lua_Integer lua_check_int(lua_State *L, int idx, const char *what)
{
	int ok;
	lua_Integer v = lua_tointegerx(L, idx, &ok);

	if (!ok) {
		lua_Number n = lua_tonumberx(L, idx, &ok);

		if (!ok || n != n || n < -9.2e18 || n > 9.2e18)
			luaL_error(L, "%s: an integer is expected", what);
		v = (lua_Integer)n;
	}
	return v;
}

/* ---- logs ---- */

void lua_log(struct stream *s, int level, const char *msg, size_t len)
{
	int n = (int)MIN(len, (size_t)1000);

	/* as HAProxy 2.6: to the log targets (the stream's frontend's, else
	 * the global ones) and on stderr unless quiet */
	log_event_px_lv(s ? &s->fe->loggers : &global.loggers, level, level, "%.*s", n, msg);
}

/* A run failed: its message and traceback go to the logs. <T> holds the
 * error object. */
static void lua_run_report(struct lua_run *r, int status)
{
	lua_State *L = lg.L;
	const char *msg = lua_isstring(r->T, -1) ? lua_tostring(r->T, -1) : "(error object is not a string)";
	const char *tb;
	char line[1024];
	int n;

	lg.errors++;
	luaL_traceback(L, r->T, NULL, 0);
	tb = lua_tostring(L, -1);
	n = snprintf(line, sizeof(line), "Lua %s: %s error: %s%s%s", r->fname ? r->fname : "function",
		     status == LUA_ERRMEM ? "memory" : "runtime", msg, tb ? " " : "", tb ? tb : "");
	lua_pop(L, 1);
	if (n > 0) {
		/* the traceback on the same line: a log line is one line */
		for (char *p = line; (p = strchr(p, '\n')); )
			*p = ' ';
		for (char *p = line; (p = strchr(p, '\t')); )
			*p = ' ';
		lua_log(r->s, LOG_L_ERR, line, (size_t)MIN((size_t)n, sizeof(line) - 1));
	}
}

/* ---- runs ---- */

static void lua_defer_cb(struct ev_loop *loop, ev_prepare *w, int revents);

/* The hook of every coroutine: the time budget, and the forced yield that
 * lets the loop serve others during a long script. */
static void lua_hook(lua_State *L, lua_Debug *ar)
{
	struct lua_run *r = lg.cur;

	if (!r)
		return;
	if (r->budget && r->used + lua_mono() - r->t_resume > r->budget)
		r->flags |= LUA_RF_KILLED;
	if (L == r->T && lua_isyieldable(L) && (r->flags & (LUA_RF_KILLED | LUA_RF_YIELD))) {
		/* killed: it is never resumed (the runner reports the timeout) */
		r->wait = LUA_W_YIELD;
		lua_yield(L, 0);
		return;
	}
	if (r->flags & LUA_RF_KILLED)
		luaL_error(L, "execution timeout");
}

static void lua_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct lua_run *r = container_of(w, struct lua_run, timer);

	lua_run_wake(r);
}

struct lua_run *lua_run_new(enum lua_kind kind, struct stream *s, const char *fname)
{
	lua_State *L = lua_state();
	struct lua_run *r = lg.pool, *cur = lg.cur;

	if (r) {
		lg.pool = r->next_def;
		lg.npool--;
	} else {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		cur = lua_unbounded_begin();
		r->T = lua_newthread(L);
		r->ref = luaL_ref(L, LUA_REGISTRYINDEX);
		lua_unbounded_end(cur);
		ev_init(&r->timer, lua_timer_cb);
	}
	lua_sethook(r->T, lua_hook, LUA_MASKCOUNT, lg.forced_yield);
	r->kind = kind;
	r->wait = LUA_W_NONE;
	r->flags = 0;
	r->woken = 0;
	r->used = 0;
	r->s = s;
	r->wake = NULL;
	r->owner = NULL;
	r->fname = fname;
	r->next_def = NULL;
	r->txn = NULL;
	r->txn_ref = LUA_NOREF;
	r->nres = 0;
	r->cancel = NULL;
	r->cancel_arg = NULL;
	switch (kind) {
	case LUA_K_ACTION:
	case LUA_K_FETCH:
	case LUA_K_CONV:
	case LUA_K_CLI:
		r->budget = lg.session_to / 1000.0;
		break;
	case LUA_K_SERVICE:
		r->budget = lg.service_to / 1000.0;
		break;
	case LUA_K_TASK:
		r->budget = lg.task_to / 1000.0;
		break;
	default:
		r->budget = 0;
	}
	lg.nrun++;
	r->prev_all = NULL;
	r->next_all = lg.all;
	if (lg.all)
		lg.all->prev_all = r;
	lg.all = r;
	return r;
}

static struct lua_run *lua_passing;   /* deferred runs being woken now */

static int lua_list_del(struct lua_run **head, struct lua_run *r)
{
	for (struct lua_run **p = head; *p; p = &(*p)->next_def)
		if (*p == r) {
			*p = r->next_def;
			return 1;
		}
	return 0;
}

static void lua_defer_del(struct lua_run *r)
{
	if (!lua_list_del(&lg.deferred, r))
		lua_list_del(&lua_passing, r);
	r->flags &= ~LUA_RF_DEFER;
	r->next_def = NULL;
}

static void lua_idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
}

/* <r> goes on at the next loop pass (lua_defer_cb(), before the loop
 * polls: an active idle watcher keeps it from blocking meanwhile). */
static void lua_defer(struct lua_run *r)
{
	if (r->flags & LUA_RF_DEFER)
		return;
	r->flags |= LUA_RF_DEFER;
	r->next_def = lg.deferred;
	lg.deferred = r;
	if (!ev_is_active(&lg.defer_w)) {
		ev_prepare_init(&lg.defer_w, lua_defer_cb);
		ev_prepare_start(global.loop, &lg.defer_w);
		ev_idle_init(&lg.idle_w, lua_idle_cb);
		ev_idle_start(global.loop, &lg.idle_w);
	}
}

/* The TXN object <r> ran with is no longer usable. */
static void lua_run_drop_txn(struct lua_run *r)
{
	if (r->txn) {
		((struct lua_txn *)r->txn)->s = NULL;
		r->txn = NULL;
	}
	if (r->txn_ref != LUA_NOREF) {
		luaL_unref(lg.L, LUA_REGISTRYINDEX, r->txn_ref);
		r->txn_ref = LUA_NOREF;
	}
}

/* With tune.lua.maxmem, the garbage is collected when a run ends (not one
 * nested in another: the outer one still holds its data) once the state
 * grew by an eighth of the limit since the last such collection (or since
 * it held the least). Lua collects in an emergency before failing its own
 * allocations, but not those of its library's buffers (table.concat(),
 * string.rep(), string.format()...): without this, a script could fail next
 * to the collectable garbage of earlier runs. */
static void lua_mem_collect(void)
{
	if (!lg.maxmem || lg.cur)
		return;
	if (lg.mem < lg.mem_gc)
		lg.mem_gc = lg.mem;
	if (lg.mem < lg.mem_gc + lg.maxmem / 8)
		return;
	lua_gc(lg.L, LUA_GCCOLLECT);
	lg.mem_gc = lg.mem;
}

void lua_run_free(struct lua_run *r)
{
	if (!r)
		return;
	BUG_ON(lg.cur == r, "a Lua run freed while it executes");
	if (r->flags & LUA_RF_DEFER)
		lua_defer_del(r);
	if (r->cancel) {
		r->cancel(r->cancel_arg);
		r->cancel = NULL;
	}
	if (lg.L && global.loop)
		ev_timer_stop(global.loop, &r->timer);
	lua_run_drop_txn(r);
	lg.nrun--;
	if (r->prev_all)
		r->prev_all->next_all = r->next_all;
	else
		lg.all = r->next_all;
	if (r->next_all)
		r->next_all->prev_all = r->prev_all;
	if (lua_status(r->T) != LUA_OK || lua_gettop(r->T)) {
		/* waiting, failed, or results left: emptied for the next run
		 * (to-be-closed variables closed, sockets collected later) */
		lua_resetthread(r->T);
		lua_settop(r->T, 0);
	}
	if (lg.npool < LUA_POOL_MAX && lua_status(r->T) == LUA_OK) {
		r->s = NULL;
		r->next_def = lg.pool;
		lg.pool = r;
		lg.npool++;
	} else {
		luaL_unref(lg.L, LUA_REGISTRYINDEX, r->ref);
		free(r);
	}
	lua_mem_collect();
}

struct lua_run *lua_cur(lua_State *L)
{
	if (!lg.cur)
		luaL_error(L, "not available outside a running script");
	return lg.cur;
}

/* What a resume of <r> ended with (<st>, <nres> values on its stack). */
static enum lua_res lua_run_outcome(struct lua_run *r, int st, int nres);

/* Runs or resumes <r> with <nargs> values on its stack. */
static enum lua_res lua_run_go(struct lua_run *r, int nargs)
{
	struct lua_run *prev = lg.cur;
	enum lua_res res;
	int st, nres = 0;

	r->wait = LUA_W_NONE;
	r->woken = 0;
	lg.cur = r;
	r->t_resume = lua_mono();
	st = lua_resume(r->T, prev ? prev->T : NULL, nargs, &nres);
	r->used += lua_mono() - r->t_resume;
	/* (the report of an error is not protected: no limit meanwhile, even
	 * within the run of a script that called this one) */
	lg.cur = NULL;
	res = lua_run_outcome(r, st, nres);
	lg.cur = prev;
	return res;
}

static enum lua_res lua_run_outcome(struct lua_run *r, int st, int nres)
{
	if (st == LUA_YIELD) {
		if (r->flags & LUA_RF_DONE) {
			/* core.done(): its values are the results */
			r->nres = nres;
			return LUA_RES_DONE;
		}
		if (r->flags & LUA_RF_KILLED) {
			lua_pushfstring(r->T, "execution timeout (%s)",
					r->kind == LUA_K_SERVICE ? "tune.lua.service-timeout" :
					r->kind == LUA_K_TASK ? "tune.lua.task-timeout" :
					"tune.lua.session-timeout");
			lua_run_report(r, LUA_ERRRUN);
			return LUA_RES_ERR;
		}
		lua_pop(r->T, nres);
		if (!(r->flags & LUA_RF_YIELD)) {
			/* a bare coroutine.yield() where nothing may wait */
			lua_pushstring(r->T, "yield is not allowed in this context");
			lua_run_report(r, LUA_ERRRUN);
			return LUA_RES_ERR;
		}
		if (r->wait == LUA_W_NONE || r->wait == LUA_W_YIELD) {
			/* forced yield, core.yield(), coroutine.yield(): the loop
			 * serves the others, the run goes on at the next pass */
			r->wait = LUA_W_YIELD;
			lua_defer(r);
		}
		return LUA_RES_WAIT;
	}
	if (st == LUA_OK) {
		r->nres = nres;
		return LUA_RES_DONE;
	}
	lua_run_report(r, st);
	return LUA_RES_ERR;
}

enum lua_res lua_run_start(struct lua_run *r, int nargs)
{
	return lua_run_go(r, nargs);
}

enum lua_res lua_run_resume(struct lua_run *r)
{
	return lua_run_go(r, 0);
}

/* The runs that yielded to let the loop serve others go on, once per loop
 * pass (before it polls). */
static void lua_defer_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct lua_run *r;

	lua_passing = lg.deferred;
	lg.deferred = NULL;
	ev_prepare_stop(loop, w);
	ev_idle_stop(loop, &lg.idle_w);
	/* a run waking may free others of the list: they unlink themselves */
	while ((r = lua_passing)) {
		lua_passing = r->next_def;
		r->next_def = NULL;
		r->flags &= ~LUA_RF_DEFER;
		lua_run_wake(r);
	}
}

void lua_run_wake(struct lua_run *r)
{
	r->woken = 1;
	if (r->wake)
		r->wake(r);
}

void lua_run_timer(struct lua_run *r, double sec)
{
	ev_timer_stop(global.loop, &r->timer);
	if (sec > 0) {
		ev_timer_set(&r->timer, sec, 0.);
		ev_timer_start(global.loop, &r->timer);
	}
}

int lua_wait(lua_State *L, enum lua_wait why, lua_KContext ctx, lua_KFunction k)
{
	struct lua_run *r = lua_cur(L);

	if (!(r->flags & LUA_RF_YIELD) || L != r->T || !lua_isyieldable(L))
		return luaL_error(L, "cannot wait here (sleeps, sockets and yields are for "
				  "actions, services and tasks, in their own coroutine)");
	r->wait = why;
	return lua_yieldk(L, 0, ctx, k);
}

/* ---- per-stream state ---- */

struct lua_strm *lua_strm_get(struct stream *s)
{
	struct lua_strm *ls = s->ext[lg.ext_slot];

	if (ls)
		return ls;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return NULL;
	ls->priv_ref = LUA_NOREF;
	ev_init(&ls->again_w, NULL);
	s->ext[lg.ext_slot] = ls;
	return ls;
}

/* stream_ext_release(): the stream (or its HTTP exchange) ends. */
static void lua_strm_release(struct stream *s)
{
	struct lua_strm *ls = s->ext[lg.ext_slot];

	s->ext[lg.ext_slot] = NULL;
	lua_run_free(ls->act);
	lua_applet_release(s, ls);
	ev_timer_stop(global.loop, &ls->again_w);
	if (ls->priv_ref != LUA_NOREF)
		luaL_unref(lg.L, LUA_REGISTRYINDEX, ls->priv_ref);
	lua_reply_free(ls->reply);
	free(ls);
}

/* ---- loading files ---- */

/* Runs the body of file <path> now (lua-load). Returns 0, or -1 after
 * cfg_alert(). */
static int lua_load_file(struct cfg_ctx *ctx, const char *path)
{
	lua_State *L = lua_state();
	struct lua_run *r;
	enum lua_res res;
	int st;

	r = lua_run_new(LUA_K_BODY, NULL, "file");
	if (!r) {
		cfg_alert(ctx, "out of memory loading '%s'", path);
		return -1;
	}
	r->fname = path;
	st = luaL_loadfilex(r->T, path, "t");
	if (st != LUA_OK) {
		/* Lua's message names the file and the line */
		cfg_alert(ctx, "cannot load Lua file '%s': %s", path, lua_tostring(r->T, -1));
		lua_run_free(r);
		return -1;
	}
	(void)L;
	res = lua_run_start(r, 0);
	lua_run_free(r);
	if (res != LUA_RES_DONE) {
		cfg_alert(ctx, "Lua file '%s' failed while loading (the error is logged above)", path);
		return -1;
	}
	return 0;
}

static int kw_lua_load(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc != 1) {
		cfg_alert(ctx, "expects exactly one file name");
		return -1;
	}
	return lua_load_file(ctx, argv[0]);
}

/* lua-prepend-path <string> [path|cpath] */
static int kw_lua_prepend(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	lua_State *L = lua_state();
	const char *type = argc > 1 ? argv[1] : "path";

	if (argc < 1 || argc > 2 || (strcmp(type, "path") && strcmp(type, "cpath"))) {
		cfg_alert(ctx, "expects <string> [path|cpath]");
		return -1;
	}
	lua_getglobal(L, "package");
	lua_getfield(L, -1, type);
	lua_pushfstring(L, "%s;%s", argv[0], lua_tostring(L, -1));
	lua_setfield(L, -3, type);
	lua_pop(L, 2);
	return 0;
}

static void *lua_glob_base(struct cfg_ctx *ctx)
{
	return &lg;
}

static void *lua_mem_base(struct cfg_ctx *ctx)
{
	return &lua_maxmem_mb;
}

/* Applies tune.lua.maxmem and tune.lua.forced-yield once the section is
 * read (they may follow lua-load). */
static int lua_postparse(void)
{
	lg.maxmem = (size_t)lua_maxmem_mb << 20;
	if (lg.L && lg.maxmem && lg.mem > lg.maxmem)
		log_warning("tune.lua.maxmem %d MB: the loaded scripts hold %zu kB already",
			    lua_maxmem_mb, lg.mem >> 10);
	return 0;
}

static struct cfg_kw lua_kws[] = {
	{ "lua-load", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_lua_load, .usage = "<file>" },
	/* one loop per process: the same as lua-load (as HAProxy with one thread) */
	{ "lua-load-per-thread", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_lua_load,
	  .usage = "<file>" },
	{ "lua-prepend-path", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_lua_prepend,
	  .usage = "<string> [path|cpath]" },
	{ "tune.lua.forced-yield", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct lua_glob, forced_yield),
	  .min = 1, .max = 1000000000, .usage = "a number of instructions", .base = lua_glob_base },
	{ "tune.lua.maxmem", CFG_SEC_GLOBAL, CFG_T_INT, 0, .min = 0, .max = 1 << 20,
	  .usage = "a number of megabytes", .base = lua_mem_base },
	{ "tune.lua.session-timeout", CFG_SEC_GLOBAL, CFG_T_TIME,
	  offsetof(struct lua_glob, session_to), .base = lua_glob_base },
	{ "tune.lua.service-timeout", CFG_SEC_GLOBAL, CFG_T_TIME,
	  offsetof(struct lua_glob, service_to), .base = lua_glob_base },
	{ "tune.lua.task-timeout", CFG_SEC_GLOBAL, CFG_T_TIME, offsetof(struct lua_glob, task_to),
	  .base = lua_glob_base },
};

/* ---- init functions and tasks ---- */

int lua_core_register_init(lua_State *L);
int lua_core_register_task(lua_State *L);

int lua_core_register_init(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	if (lg.started)
		return luaL_error(L, "core.register_init() is for the body of a file");
	lua_rawgeti(L, LUA_REGISTRYINDEX, lg.inits);
	lua_pushvalue(L, 1);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pop(L, 1);
	return 0;
}

/* A task: a run of its own, resumed by its waits. */
static void lua_task_wake(struct lua_run *r);

static void lua_task_go(struct lua_run *r, int start, int nargs)
{
	enum lua_res res = start ? lua_run_start(r, nargs) : lua_run_resume(r);

	if (res != LUA_RES_WAIT)
		lua_run_free(r);
}

static void lua_task_wake(struct lua_run *r)
{
	lua_task_go(r, 0, 0);
}

/* Starts the function at <idx> of <L> as a task (the loop runs). */
static int lua_task_start(lua_State *L, int idx)
{
	struct lua_run *r = lua_run_new(LUA_K_TASK, NULL, "task");

	if (!r)
		return -1;
	r->flags |= LUA_RF_YIELD;
	r->wake = lua_task_wake;
	lua_pushvalue(L, idx);
	lua_xmove(L, r->T, 1);
	lua_task_go(r, 1, 0);
	return 0;
}

static int lua_pending_tasks = LUA_NOREF;   /* tasks registered before the loop ran */

int lua_core_register_task(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	if (lg.started && global.loop) {
		/* from a running script: it starts at the next loop pass, as a
		 * task of its own (deferred: the caller goes on first) */
		struct lua_run *r = lua_run_new(LUA_K_TASK, NULL, "task");

		if (!r)
			return luaL_error(L, "out of memory starting a task");
		r->flags |= LUA_RF_YIELD;
		r->wake = lua_task_wake;
		lua_pushvalue(L, 1);
		lua_xmove(L, r->T, 1);
		/* first resume at the next pass: lua_task_wake resumes, and a
		 * resume of a coroutine with only a function on it starts it */
		r->wait = LUA_W_YIELD;
		lua_defer(r);
		return 0;
	}
	if (lua_pending_tasks == LUA_NOREF) {
		lua_newtable(L);
		lua_pending_tasks = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, lua_pending_tasks);
	lua_pushvalue(L, 1);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pop(L, 1);
	return 0;
}

int lua_init_run(void)
{
	lua_State *L = lg.L;
	lua_Integer n;
	int errors = 0;

	if (!L)
		return 0;
	lua_rawgeti(L, LUA_REGISTRYINDEX, lg.inits);
	n = (lua_Integer)lua_rawlen(L, -1);
	for (lua_Integer i = 1; i <= n; i++) {
		struct lua_run *r = lua_run_new(LUA_K_INIT, NULL, "init function");

		if (!r) {
			errors++;
			break;
		}
		lua_rawgeti(L, -1, i);
		lua_xmove(L, r->T, 1);
		if (lua_run_start(r, 0) != LUA_RES_DONE)
			errors++;
		lua_run_free(r);
	}
	lua_pop(L, 1);
	if (errors)
		log_alert("Lua: %d init function%s failed (core.register_init)", errors,
			  errors > 1 ? "s" : "");
	return errors ? -1 : 0;
}

void lua_tasks_start(void)
{
	lua_State *L = lg.L;

	if (!L)
		return;
	lg.started = 1;
	if (lua_pending_tasks == LUA_NOREF)
		return;
	lua_rawgeti(L, LUA_REGISTRYINDEX, lua_pending_tasks);
	for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, -1); i <= n; i++) {
		lua_rawgeti(L, -1, i);
		if (lua_task_start(L, lua_gettop(L)) == -1)
			log_alert("Lua: out of memory starting a task");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	luaL_unref(L, LUA_REGISTRYINDEX, lua_pending_tasks);
	lua_pending_tasks = LUA_NOREF;
}

void lua_deinit(void)
{
	if (!lg.L)
		return;
	if (global.loop && ev_is_active(&lg.defer_w)) {
		ev_prepare_stop(global.loop, &lg.defer_w);
		ev_idle_stop(global.loop, &lg.idle_w);
	}
	/* the tasks still running (the streams' runs ended with them) */
	while (lg.all)
		lua_run_free(lg.all);
	while (lg.pool) {
		struct lua_run *r = lg.pool;

		lg.pool = r->next_def;
		free(r);
	}
	lg.npool = 0;
	lua_close(lg.L);
	lg.L = NULL;
	lua_sock_deinit();
}

int lua_enabled(void)
{
	return lg.L != NULL;
}

SLUICE_INIT(lua_module_register)
{
	cfg_register(lua_kws, ARRAY_SIZE(lua_kws));
	cfg_register_postparse(lua_postparse, 1);
	lg.ext_slot = stream_ext_register(lua_strm_release);
}
#else   /* !USE_LUA: built without Lua */

#include <sluice/lua.h>

int lua_enabled(void)
{
	return 0;
}

int lua_init_run(void)
{
	return 0;
}

void lua_tasks_start(void)
{
}

void lua_deinit(void)
{
}

void lua_set_stats_provider(lua_stats_fn stats, lua_info_fn info)
{
}

#endif
