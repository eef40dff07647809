/* Actions written in Lua (core.register_action()): a row "lua.<name>" of
 * the action registry per function, offered in the rule sets the script
 * names. Each run is a coroutine of the stream's: when it waits (sleep,
 * socket, forced yield), the rule set is suspended and goes on from the
 * same rule once the stream is woken. */
#ifdef USE_LUA
#include <stdlib.h>
#include <string.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/str.h>
#include <sluice/stream.h>

#include "lua_int.h"

/* An action a script registered. */
struct lua_action {
	struct act_kw kw;        /* its row ("lua.<name>") */
	int           ref;       /* the function */
	int           nargs;     /* words it takes on a rule line */
	char          name[64];
	char          desc[80];  /* "action 'lua.x'" */
};

/* A rule using it. */
struct lua_act_rule {
	const struct lua_action *act;
	char                   **args;
	int                      nargs;
};

static int lua_act_parse(struct act_parse *p)
{
	const struct lua_action *a = container_of(p->kw, struct lua_action, kw);
	struct lua_act_rule *ar = xcalloc(1, sizeof(*ar));

	p->priv = ar;
	ar->act = a;
	if (p->argc - p->idx < a->nargs) {
		act_alert(p, "expects %d argument%s", a->nargs, a->nargs > 1 ? "s" : "");
		return -1;
	}
	ar->args = xcalloc((size_t)a->nargs + 1, sizeof(*ar->args));
	for (int i = 0; i < a->nargs; i++)
		ar->args[i] = xstrdup(p->argv[p->idx++]);
	ar->nargs = a->nargs;
	return 0;
}

static void lua_act_free(void *priv)
{
	struct lua_act_rule *ar = priv;

	if (!ar)
		return;
	for (int i = 0; i < ar->nargs; i++)
		free(ar->args[i]);
	free(ar->args);
	free(ar);
}

static void lua_act_wake(struct lua_run *r)
{
	stream_wake(r->s);
}

/* What the function returned (an "act" code), or its txn:done(). */
static enum act_ret lua_act_result(struct lua_run *r, struct lua_strm *ls, struct act_res *res)
{
	lua_Integer code = 0;

	if (ls->txn_done) {
		res->reply = ls->reply;
		return ACT_RET_DONE;
	}
	if (r->nres >= 1 && lua_isinteger(r->T, -r->nres))
		code = lua_tointeger(r->T, -r->nres);
	switch (code) {
	case 1:
		return ACT_RET_STOP;
	case 2:
		return res->can_yield ? ACT_RET_YIELD : ACT_RET_CONT;
	case 3:
		return ACT_RET_ERR;
	case 4:
		return ACT_RET_DONE;
	case 5:
		return ACT_RET_DENY;
	case 6:
		return ACT_RET_ABORT;
	case 7:
		return ACT_RET_INVALID;
	default:
		return ACT_RET_CONT;
	}
}

/* act.YIELD returned without waiting for anything: the action runs again
 * from its start after act:wake_time(), or at the next loop pass. */
static void lua_act_again_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct lua_strm *ls = container_of(w, struct lua_strm, again_w);

	stream_wake(ls->again_s);
}

static void lua_act_again(struct stream *s, struct lua_strm *ls)
{
	double d = ls->wake_at ? ls->wake_at - lua_mono() : 0;

	ls->wake_at = 0;
	ls->again_s = s;
	ev_timer_stop(global.loop, &ls->again_w);
	ev_timer_init(&ls->again_w, lua_act_again_cb, d > 0 ? d : 0., 0.);
	ev_timer_start(global.loop, &ls->again_w);
}

/* The row's run(): starts the function (a new run), or resumes the one of
 * this rule that waited. */
static enum act_ret lua_act_run(void *priv, struct stream *s, unsigned where,
                                struct act_res *res)
{
	const struct lua_act_rule *ar = priv;
	struct lua_strm *ls = lua_strm_get(s);
	struct lua_run *r;
	enum lua_res lr;
	enum act_ret ret;

	if (!ls)
		return ACT_RET_ERR;
	r = ls->act;
	if (r && ls->act_def == ar) {
		/* a wait of its own: only its event lets it go on; input or
		 * room is checked by the script's call itself */
		if (!r->woken && r->wait != LUA_W_DATA && r->wait != LUA_W_ROOM)
			return ACT_RET_YIELD;
		lr = lua_run_resume(r);
	} else {
		struct lua_txn *t;

		lua_run_free(r);
		ls->act = NULL;
		ls->txn_done = 0;
		r = lua_run_new(LUA_K_ACTION, s, ar->act->desc);
		if (!r)
			return ACT_RET_ERR;
		if (res->can_yield)
			r->flags |= LUA_RF_YIELD;
		r->wake = lua_act_wake;
		lua_rawgeti(r->T, LUA_REGISTRYINDEX, ar->act->ref);
		t = lua_txn_push(r->T, s, where,
				 !!(where & (ACT_W_TCP_RES | ACT_W_HTTP_RES | ACT_W_HTTP_AFTER)));
		lua_pushvalue(r->T, -1);
		r->txn_ref = luaL_ref(r->T, LUA_REGISTRYINDEX);
		r->txn = t;
		for (int i = 0; i < ar->nargs; i++)
			lua_pushstring(r->T, ar->args[i]);
		lr = lua_run_start(r, 1 + ar->nargs);
	}
	if (lr == LUA_RES_WAIT) {
		ls->act = r;
		ls->act_def = ar;
		return ACT_RET_YIELD;
	}
	ls->act = NULL;
	ls->act_def = NULL;
	ret = lr == LUA_RES_DONE ? lua_act_result(r, ls, res) : ACT_RET_ERR;
	lua_run_free(r);
	if (ret == ACT_RET_YIELD) {
		ls->act_def = NULL;
		lua_act_again(s, ls);
	}
	return ret;
}

/* The rule-set names of core.register_action(). */
static const struct {
	const char *name;
	unsigned    where;
} lua_act_sets[] = {
	{ "tcp-req", ACT_W_TCP_REQ }, { "tcp-res", ACT_W_TCP_RES },
	{ "http-req", ACT_W_HTTP_REQ }, { "http-res", ACT_W_HTTP_RES },
	{ "http-after-res", ACT_W_HTTP_AFTER },
};

/* core.register_action(name, actions, func [, nb_args]) */
int lua_core_register_action(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	struct lua_action *a;
	unsigned where = 0;
	lua_Integer nargs = 0;

	luaL_checktype(L, 2, LUA_TTABLE);
	luaL_checktype(L, 3, LUA_TFUNCTION);
	if (!lua_isnoneornil(L, 4))
		nargs = lua_check_int(L, 4, "core.register_action");
	if (lg.started)
		return luaL_error(L, "core.register_action() is for the body of a file");
	if (nargs < 0 || nargs > 16)
		return luaL_argerror(L, 4, "between 0 and 16 arguments");
	if (!*name || strlen(name) > 59 || name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")])
		return luaL_argerror(L, 1, "a name of letters, digits, '_', '.' and '-' is expected");
	for (lua_Integer i = 1; lua_rawgeti(L, 2, i) != LUA_TNIL; i++) {
		const char *set = lua_tostring(L, -1);
		size_t j;

		for (j = 0; set && j < ARRAY_SIZE(lua_act_sets); j++)
			if (strcmp(set, lua_act_sets[j].name) == 0)
				break;
		if (!set || j == ARRAY_SIZE(lua_act_sets))
			return luaL_error(L, "core.register_action(): unknown rule set '%s' (expects "
					  "tcp-req, tcp-res, http-req, http-res or http-after-res)",
					  set ? set : "?");
		where |= lua_act_sets[j].where;
		lua_pop(L, 1);
	}
	if (!where)
		return luaL_argerror(L, 2, "at least one rule set is expected");
	lua_pushfstring(L, "lua.%s", name);
	if (act_find(lua_tostring(L, -1), ACT_W_TCP_ALL | ACT_W_HTTP_ALL))
		return luaL_error(L, "core.register_action(): '%s' is registered already",
				  lua_tostring(L, -1));
	a = calloc(1, sizeof(*a));
	if (!a)
		return luaL_error(L, "out of memory");
	snprintf(a->name, sizeof(a->name), "lua.%s", name);
	snprintf(a->desc, sizeof(a->desc), "action '%s'", a->name);
	a->nargs = (int)nargs;
	lua_pushvalue(L, 3);
	a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	a->kw = (struct act_kw){ a->name, 0, where, lua_act_parse, NULL, lua_act_free, "", lua_act_run };
	act_register(&a->kw, 1);
	return 0;
}

#endif
