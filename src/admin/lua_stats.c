/* The statistics of Lua's get_stats() (Proxy, Server, Listener) and
 * core.get_info(): the rows and fields of `show stat` and `show info`,
 * handed to the Lua module (below this layer) as (name, value) pairs. */
#include <string.h>

#include <sluice/common.h>
#include <sluice/listener.h>
#include <sluice/lua.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stats.h>

struct lua_stats_arg {
	int         type;     /* STATS_T_* wanted */
	const void *obj;      /* the server or listener wanted, NULL: the proxy's row */
	lua_put_fn  put;
	void       *arg;
};

static int lua_stats_row(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct lua_stats_arg *a = arg;

	if (o->type != a->type || (a->obj && a->obj != (const void *)o->srv &&
				   a->obj != (const void *)o->li))
		return 0;
	for (int f = 0; f < ST_F_NB; f++)
		if (r->v[f][0])
			a->put(a->arg, stats_field_name(f), r->v[f]);
	return -1;   /* found: stop */
}

static void lua_stats_fill(int kind, const void *obj, int be, lua_put_fn put, void *arg)
{
	struct lua_stats_arg a = { 0, NULL, put, arg };
	const struct proxy *px;

	switch (kind) {
	case LUA_ST_SERVER:
		a.type = STATS_T_SRV;
		a.obj = obj;
		px = ((const struct server *)obj)->px;
		break;
	case LUA_ST_LISTENER:
		a.type = STATS_T_LI;
		a.obj = obj;
		px = ((const struct listener *)obj)->px;
		break;
	default:
		a.type = be ? STATS_T_BE : STATS_T_FE;
		px = obj;
		break;
	}
	stats_walk(px->id, a.type, -1, 0, NULL, lua_stats_row, &a);
}

/* "Name: value" lines of `show info` */
static void lua_info_fill(lua_put_fn put, void *arg)
{
	struct dstr d = { 0 };

	stats_dump_info(&d);
	for (char *line = d.p, *end; line && *line; line = end + 1) {
		char *colon;

		end = strchr(line, '\n');
		if (!end)
			break;
		*end = 0;
		colon = strstr(line, ": ");
		if (colon) {
			*colon = 0;
			put(arg, line, colon + 2);
		}
	}
	dstr_free(&d);
}

SLUICE_INIT(lua_stats_register)
{
	lua_set_stats_provider(lua_stats_fill, lua_info_fill);
}
