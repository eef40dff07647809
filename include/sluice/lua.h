/* Lua scripting (HAProxy 2.6's Lua API): what the start-up sequence calls.
 * Everything else (keywords, actions, fetches, converters, services,
 * runtime commands) is registered by the module itself. */
#ifndef SLUICE_LUA_H
#define SLUICE_LUA_H

/* Whether a script was loaded (lua-load). */
int lua_enabled(void);

/* Runs the core.register_init() functions, once the configuration is
 * loaded and before traffic (not in the master, not with -c). Returns 0, or
 * -1 when one failed (logged): the process must not start. */
int lua_init_run(void);

/* The loop exists: the core.register_task() tasks start. */
void lua_tasks_start(void);

/* Closes the Lua state (exit). */
void lua_deinit(void);

/* The statistics the Proxy, Server and Listener classes (get_stats()) and
 * core.get_info() return come from the stats module, above: it gives
 * them as (name, value) pairs through <put>. <be>: a proxy's backend row
 * rather than its frontend's. */
enum lua_stats_kind { LUA_ST_PROXY, LUA_ST_SERVER, LUA_ST_LISTENER };
typedef void (*lua_put_fn)(void *arg, const char *name, const char *val);
typedef void (*lua_stats_fn)(int kind, const void *obj, int be, lua_put_fn put, void *arg);
typedef void (*lua_info_fn)(lua_put_fn put, void *arg);
void lua_set_stats_provider(lua_stats_fn stats, lua_info_fn info);

#endif
