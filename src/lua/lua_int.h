/* Shared by the files of the Lua module (HAProxy's Lua API on Lua 5.4):
 * the one state, the runs (a Lua function executing in its own coroutine,
 * which may wait without blocking the loop), the per-stream state and the
 * helpers of the classes. Not an API for other modules: they see lua.h. */
#ifndef SLUICE_LUA_INT_H
#define SLUICE_LUA_INT_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

struct stream;
struct proxy;
struct http_reply;

/* HAProxy's execution contexts: they decide what a script may do there. */
enum lua_kind {
	LUA_K_BODY,      /* a file being loaded (lua-load) */
	LUA_K_INIT,      /* a core.register_init() function, before traffic */
	LUA_K_TASK,      /* a core.register_task() function */
	LUA_K_ACTION,    /* an action lua.<name> */
	LUA_K_FETCH,     /* a sample fetch lua.<name> */
	LUA_K_CONV,      /* a converter lua.<name> */
	LUA_K_SERVICE,   /* a service lua.<name> (use-service) */
	LUA_K_CLI,       /* a runtime API command (core.register_cli) */
};

/* Why a run is suspended. */
enum lua_wait {
	LUA_W_NONE,      /* running or finished */
	LUA_W_YIELD,     /* core.yield() or a forced yield: goes on at the next loop pass */
	LUA_W_TIMER,     /* core.sleep(), act:wake_time(): its timer */
	LUA_W_IO,        /* a socket (core.tcp()): its watcher, or its timeout */
	LUA_W_DATA,      /* input bytes (an applet, a channel) */
	LUA_W_ROOM,      /* room for output bytes (an applet, a channel) */
};

#define LUA_RF_YIELD   0x01   /* may wait: sleeps, sockets, forced yields */
#define LUA_RF_KILLED  0x02   /* its time budget ran out: it ends at its next instruction */
#define LUA_RF_DEFER   0x04   /* in the list of runs going on at the next loop pass */
#define LUA_RF_DONE    0x08   /* core.done() ended it: its results are on its stack */

/* One execution of a Lua function in a coroutine of its own. */
struct lua_run {
	lua_State      *T;          /* the coroutine */
	int             ref;        /* the registry slot anchoring it */
	enum lua_kind   kind;
	enum lua_wait   wait;
	unsigned        flags;      /* LUA_RF_* */
	int             woken;      /* what it waited for happened: the next resume goes on */
	double          budget;     /* seconds of pure Lua runtime allowed, 0: no limit */
	double          used;       /* seconds of pure Lua runtime used so far */
	double          t_resume;   /* when the resume running now began (monotonic) */
	ev_timer        timer;      /* sleeps; the timeout of a socket operation */
	struct stream  *s;          /* the stream it runs for, or NULL (tasks, init...) */
	/* Its owner goes on (the run is woken): a stream is woken, a task
	 * resumed at the next loop pass. */
	void          (*wake)(struct lua_run *r);
	void           *owner;
	const char     *fname;      /* for messages: "action 'x'", "task"... */
	struct lua_run *next_def;   /* in the deferred list (LUA_RF_DEFER) */
	void           *txn;        /* the TXN (or applet) object it runs with, invalidated
	                               at its end (struct lua_txn) */
	int             txn_ref;    /* the registry slot anchoring that object */
	int             nres;       /* results on T once finished */
	/* What it waits on that must stop watching for it when it is freed
	 * (a socket), NULL when nothing. */
	void          (*cancel)(void *arg);
	void           *cancel_arg;
	struct lua_run *prev_all, *next_all;   /* every run alive (lg.all) */
};

enum lua_res { LUA_RES_DONE, LUA_RES_WAIT, LUA_RES_ERR };

/* The one Lua state and the settings of the global section. */
struct lua_glob {
	lua_State      *L;
	size_t          mem;          /* bytes Lua holds */
	size_t          maxmem;       /* tune.lua.maxmem, bytes (0: no limit) */
	size_t          mem_gc;       /* bytes held after the last collection of lua_run_free() */
	int             forced_yield; /* tune.lua.forced-yield, instructions */
	uint32_t        session_to;   /* tune.lua.session-timeout, ms */
	uint32_t        service_to;   /* tune.lua.service-timeout, ms */
	uint32_t        task_to;      /* tune.lua.task-timeout, ms (0: none) */
	struct lua_run *cur;          /* the run executing now (NULL: C code unprotected) */
	int             started;      /* the loop runs: init done, tasks may start */
	int             ext_slot;     /* its slot of s->ext[] (stream_ext_register()) */
	int             inits;        /* registry slot: the list of init functions */
	struct lua_run *deferred;     /* runs going on at the next loop pass */
	ev_prepare      defer_w;
	ev_idle         idle_w;       /* keeps the loop from blocking while runs are deferred */
	struct lua_run *pool;         /* finished runs kept with their coroutine */
	struct lua_run *all;          /* every run alive */
	int             npool;
	int             nrun;         /* runs alive (tests, show) */
	unsigned long   errors;       /* runs that ended in an error */
};

extern struct lua_glob lg;

/* ---- lua.c: the state and the runs ---- */

/* The state, made on first use. */
lua_State *lua_state(void);

/* Monotonic seconds. */
double lua_mono(void);

/* A new run of <kind> for stream <s> (NULL when none), named <fname> for
 * messages; its coroutine is empty. NULL when memory is exhausted. */
struct lua_run *lua_run_new(enum lua_kind kind, struct stream *s, const char *fname);

/* Starts <r>: the function and its <nargs> arguments are on r->T. Runs it
 * until it ends (LUA_RES_DONE, its results on r->T: r->nres of them), an
 * error (LUA_RES_ERR, logged with its traceback), or it waits
 * (LUA_RES_WAIT: r->wake is called when it may go on). */
enum lua_res lua_run_start(struct lua_run *r, int nargs);

/* Goes on with <r> after it waited. Same returns as lua_run_start(). */
enum lua_res lua_run_resume(struct lua_run *r);

/* Ends <r> (a waiting one is abandoned: its timer, socket... released) and
 * keeps its coroutine for another run. */
void lua_run_free(struct lua_run *r);

/* The run executing now, or a Lua error when none (C code called outside
 * one). */
struct lua_run *lua_cur(lua_State *L);

/* C code working on the state outside any protected call while a run
 * executes (preparing a nested run for a fetch or converter a script
 * called, reporting one): tune.lua.maxmem is not applied until
 * lua_unbounded_end(), since a failed allocation there could not be caught
 * (the state would panic). It goes a few bytes past the limit instead.
 * Returns what lua_unbounded_end() restores. */
static inline struct lua_run *lua_unbounded_begin(void)
{
	struct lua_run *cur = lg.cur;

	lg.cur = NULL;
	return cur;
}

static inline void lua_unbounded_end(struct lua_run *cur)
{
	lg.cur = cur;
}

/* Waits: <r> (the run of <L>) is suspended for <why>; <k> is called when
 * it goes on (see lua_yieldk()). Raises a Lua error when this context may
 * not wait. Never returns normally. */
int lua_wait(lua_State *L, enum lua_wait why, lua_KContext ctx, lua_KFunction k);

/* Arms <r>'s timer for <sec> seconds: it wakes the run (0: disarmed). */
void lua_run_timer(struct lua_run *r, double sec);

/* Wakes <r>: what it waited for happened. */
void lua_run_wake(struct lua_run *r);

/* Logs <msg> at <level> as a Lua message of stream <s> (NULL: a process
 * message). */
void lua_log(struct stream *s, int level, const char *msg, size_t len);

/* ---- per-stream state (s->ext[lg.ext_slot]) ---- */

/* A Channel's view of one direction of a TCP stream: the bytes at the
 * start of its buffer already "output" (sent by the script, or forwarded)
 * versus the "input" ones after them. */
struct lua_chn {
	uint32_t out;
};

struct lua_strm {
	struct lua_run    *act;       /* an action waiting, NULL when none */
	const void        *act_def;   /* the rule it runs */
	void              *applet;    /* a running service (lua_applet.c), NULL when none */
	int                priv_ref;  /* txn:set_priv(), LUA_NOREF when none */
	int                txn_done;  /* txn:done() ended the last action */
	struct http_reply *reply;     /* txn:done(reply) being sent */
	struct lua_chn     chn[2];    /* request, response */
	double             wake_at;   /* act:wake_time() of a yielding action, 0: none */
	ev_timer           again_w;   /* an action that returned act.YIELD runs again */
	struct stream     *again_s;
};

/* The Lua state of <s>, made on first use; NULL when memory is exhausted. */
struct lua_strm *lua_strm_get(struct stream *s);

/* ---- lua_txn.c: the TXN, HTTP, Channel and Reply classes ---- */

#define LUA_TXN_F_STR   0x01   /* Fetches/Converters returning strings (sf, sc) */
#define LUA_TXN_F_APPLET 0x02  /* an applet's object, no HTTP message */

/* What a TXN (or an applet) object points to; <s> is NULL once the run
 * it was made for ended, and every method then refuses to run. */
struct lua_txn {
	struct stream *s;
	unsigned       where;      /* the ACT_W_* rule set of an action, 0 otherwise */
	int            dir;        /* the message it is about: 0 request, 1 response */
	unsigned       flags;      /* LUA_TXN_F_* */
};

/* Pushes a new TXN object for stream <s> in rule set <where> (0: a fetch)
 * about direction <dir>; returns it. */
struct lua_txn *lua_txn_push(lua_State *L, struct stream *s, unsigned where, int dir);

/* The TXN object at <idx> of a method call, checked alive. */
struct lua_txn *lua_txn_check(lua_State *L, int idx);

/* Builds a reply object's table (Reply class) at <idx> into an http_reply
 * (allocated, released with lua_reply_free()). NULL with a Lua error. */
struct http_reply *lua_reply_make(lua_State *L, int idx);
void lua_reply_free(struct http_reply *r);

/* Pushes the fields of head <h> as HAProxy's scripts read them: a table of
 * lower-case names, each a table of its values indexed from 0. */
struct http_head;
void lua_push_headers(lua_State *L, const struct http_head *h);

void lua_txn_register(lua_State *L);

/* ---- lua_smp.c: Fetches, Converters, lua.<name> fetches and converters ---- */

/* Pushes a Fetches (<conv> 0) or Converters object bound to TXN object at
 * <txn_idx>; <str> 1: its methods return strings. */
void lua_smp_push(lua_State *L, int txn_idx, int conv, int str);

/* core.register_fetches()/register_converters() */
int lua_core_register_fetches(lua_State *L);
int lua_core_register_converters(lua_State *L);

/* Pushes sample value <smp> (struct sample *) as a Lua value. */
struct sample;
void lua_smp_to_lua(lua_State *L, struct sample *smp, int str);

/* Makes Lua value at <idx> a sample (strings point into Lua's memory: valid
 * while the value is on the stack). Returns 1, or 0 for an unsupported type. */
int lua_smp_from_lua(lua_State *L, int idx, struct sample *smp);

void lua_smp_register(lua_State *L);

/* ---- lua_act.c ---- */
int lua_core_register_action(lua_State *L);

/* ---- lua_applet.c ---- */
int lua_core_register_service(lua_State *L);
void lua_applet_register(lua_State *L);
void lua_applet_release(struct stream *s, struct lua_strm *ls);

/* ---- lua_sock.c: core.tcp(), core.httpclient() ---- */
void lua_sock_register(lua_State *L);
/* Releases the httpclient's settings (after lua_close()). */
void lua_sock_deinit(void);

/* ---- lua_px.c: Proxy, Server, Listener, StickTable; core.proxies ---- */
void lua_px_register(lua_State *L);

/* ---- lua_misc.c: Map, Regex, Concat; core.register_cli() ---- */
void lua_misc_register(lua_State *L);
int lua_core_register_cli(lua_State *L);

/* ---- lua_core.c: the core class ---- */
void lua_core_register(lua_State *L);

/* ---- helpers of the classes ---- */

/* Makes a class: a metatable named <name> in the registry whose __index is
 * the table of methods <fns> (NULL-terminated); leaves it on the stack. */
void lua_class_new(lua_State *L, const char *name, const luaL_Reg *fns);

/* The integer (or number in range) at <idx>, with a message naming <what>. */
lua_Integer lua_check_int(lua_State *L, int idx, const char *what);

#endif
