/* Services written in Lua (core.register_service()): the AppletHTTP class
 * (an HTTP service, "http-request use-service lua.<name>") and the
 * AppletTCP class (a TCP service, "tcp-request content use-service
 * lua.<name>"). Each runs in a coroutine of the stream's that waits for
 * input, for room to write, or on its sleeps and sockets. */
#ifdef USE_LUA
#include <stdlib.h>
#include <string.h>

#include <sluice/buf.h>
#include <sluice/channel.h>
#include <sluice/common.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/http_rules.h>
#include <sluice/http_service.h>
#include <sluice/log.h>
#include <sluice/str.h>
#include <sluice/stream.h>

#include "lua_int.h"

#define APPLET_HTTP_MT "sluice.applet_http"
#define APPLET_TCP_MT  "sluice.applet_tcp"

/* A service a script registered. */
struct lua_svc {
	int                   ref;        /* the function */
	int                   http;       /* mode http (else tcp) */
	char                  name[64];   /* "lua.<name>" */
	char                  desc[80];   /* "service 'lua.x'" */
	char                  log_name[68]; /* "<lua.x>", its server name in logs */
	struct http_service   hs;         /* its row, mode http */
	struct stream_service ts;         /* its row, mode tcp */
};

/* A service running for a stream (lua_strm.applet). */
struct lua_applet {
	const struct lua_svc *svc;
	struct lua_run       *r;          /* NULL once the function returned */
	int                   begun;      /* the function was started */
	int                   status;     /* set_status(), 200 by default */
	char                 *reason;
	struct dstr           in;         /* input read ahead (getline, receive) */
	int                   in_end;     /* no more input will come */
};

/* The Lua object: a TXN for the shared methods (get_var...), then its
 * service. Its user value holds the attributes and the headers to send. */
struct lua_appobj {
	struct lua_txn     t;             /* first */
	struct lua_applet *app;
};

void lua_applet_release(struct stream *s, struct lua_strm *ls)
{
	struct lua_applet *app = ls->applet;

	if (!app)
		return;
	ls->applet = NULL;
	lua_run_free(app->r);
	dstr_free(&app->in);
	free(app->reason);
	free(app);
}

/* The applet of the object at 1, still running. */
static struct lua_applet *applet_of(lua_State *L, struct stream **sp)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	struct lua_applet *app = ((struct lua_appobj *)t)->app;

	if (!app)
		luaL_error(L, "this applet object is not usable any more");
	*sp = t->s;
	return app;
}

/* ---- input ---- */

/* Reads what the client sent since into app->in. */
static void applet_pull(struct stream *s, struct lua_applet *app)
{
	char tmp[16384];
	int end = 0;

	if (app->svc->http) {
		for (;;) {
			size_t n = http_applet_recv(s, tmp, sizeof(tmp), &end);

			if (n && dstr_add(&app->in, tmp, n) == -1)
				break;
			if (n < sizeof(tmp))
				break;
		}
	} else if (s->req.buf && s->req.buf->data) {
		struct buf *b = s->req.buf;

		if (dstr_add(&app->in, b->area + b->head, b->data) == 0) {
			buf_put(b);
			s->req.buf = NULL;
		}
	}
	if (!app->svc->http)
		end = (s->req.flags & CH_F_SHUTR) && !(s->req.buf && s->req.buf->data);
	if (end)
		app->in_end = 1;
}

/* Whether input came (or ended) since the applet waited for it. */
static int applet_has_input(struct stream *s, struct lua_applet *app)
{
	if (s->req.buf && s->req.buf->data)
		return 1;
	if (app->svc->http)
		return s->txn->req_st != HTTP_MSG_BODY || (s->req.flags & CH_F_SHUTR);
	return !!(s->req.flags & CH_F_SHUTR);
}

/* Takes <n> bytes out of app->in as a string. */
static void applet_take(lua_State *L, struct lua_applet *app, size_t n)
{
	lua_pushlstring(L, app->in.p ? app->in.p : "", n);
	dstr_consume(&app->in, n);
}

static int applet_k_getline(lua_State *L, int status, lua_KContext ctx);

/* getline(): a line (with its '\n'), or what is left at the end ("" when
 * nothing is). */
static int applet_getline(lua_State *L)
{
	struct stream *s;
	struct lua_applet *app = applet_of(L, &s);
	const char *nl;

	applet_pull(s, app);
	nl = app->in.len ? memchr(app->in.p, '\n', app->in.len) : NULL;
	if (nl) {
		applet_take(L, app, (size_t)(nl - app->in.p) + 1);
		return 1;
	}
	if (!app->in_end)
		return lua_wait(L, LUA_W_DATA, 0, applet_k_getline);
	applet_take(L, app, app->in.len);
	return 1;
}

static int applet_k_getline(lua_State *L, int status, lua_KContext ctx)
{
	return applet_getline(L);
}

static int applet_k_receive(lua_State *L, int status, lua_KContext ctx);

/* receive([size]): <size> bytes, or all until the end; fewer when the end
 * comes first ("" when nothing is left). */
static int applet_receive(lua_State *L)
{
	struct stream *s;
	struct lua_applet *app = applet_of(L, &s);
	lua_Integer want = luaL_optinteger(L, 2, -1);

	applet_pull(s, app);
	if (want >= 0 && app->in.len >= (size_t)want) {
		applet_take(L, app, (size_t)want);
		return 1;
	}
	if (!app->in_end)
		return lua_wait(L, LUA_W_DATA, 0, applet_k_receive);
	applet_take(L, app, app->in.len);
	return 1;
}

static int applet_k_receive(lua_State *L, int status, lua_KContext ctx)
{
	return applet_receive(L);
}

/* ---- output ---- */

static int applet_k_send(lua_State *L, int status, lua_KContext ctx);

/* Writes the message at 2 from offset <off>, waiting for room. */
static int applet_send_from(lua_State *L, size_t off)
{
	struct stream *s;
	struct lua_applet *app = applet_of(L, &s);
	size_t len;
	const char *msg = luaL_checklstring(L, 2, &len);

	while (off < len) {
		long n;

		if (app->svc->http) {
			if (!http_applet_started(s))
				return luaL_error(L, "AppletHTTP:send() before start_response()");
			n = http_applet_send(s, msg + off, len - off);
			if (n < 0)
				return 0;   /* no body may follow: dropped */
		} else {
			struct buf *b = s->res.buf;

			if (s->res.flags & CH_F_SHUTW)
				return 0;   /* the client is gone */
			if (!b && !(b = s->res.buf = buf_get()))
				n = 0;
			else {
				if (!b->data)
					b->head = 0;
				n = (long)MIN(len - off, (size_t)(buf_size() - b->head - b->data));
				memcpy(b->area + b->head + b->data, msg + off, (size_t)n);
				b->data += (uint32_t)n;
			}
		}
		if (n == 0)
			return lua_wait(L, LUA_W_ROOM, (lua_KContext)off, applet_k_send);
		off += (size_t)n;
	}
	return 0;
}

static int applet_k_send(lua_State *L, int status, lua_KContext ctx)
{
	return applet_send_from(L, (size_t)ctx);
}

static int applet_send(lua_State *L)
{
	return applet_send_from(L, 0);
}

/* ---- the HTTP response ---- */

static int applet_set_status(lua_State *L)
{
	struct stream *s;
	struct lua_applet *app = applet_of(L, &s);
	lua_Integer st = lua_check_int(L, 2, "set_status");
	const char *reason = luaL_optstring(L, 3, NULL);

	if (st < 100 || st > 599)
		return luaL_argerror(L, 2, "a status between 100 and 599 is expected");
	app->status = (int)st;
	free(app->reason);
	app->reason = reason ? strdup(reason) : NULL;
	return 0;
}

static int applet_add_header(lua_State *L)
{
	size_t nlen;
	const char *name = luaL_checklstring(L, 2, &nlen);

	lua_txn_check(L, 1);
	luaL_checkany(L, 3);
	if (!lua_tostring(L, 3))
		return luaL_argerror(L, 3, "a string or a number is expected");
	(void)name;
	lua_getiuservalue(L, 1, 1);
	lua_getfield(L, -1, "_rsp");
	lua_pushvalue(L, 2);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pushvalue(L, 3);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

#define APPLET_MAX_HDRS 100

static int applet_start_response(lua_State *L)
{
	struct stream *s;
	struct lua_applet *app = applet_of(L, &s);
	const char *names[APPLET_MAX_HDRS], *vals[APPLET_MAX_HDRS];
	size_t nlens[APPLET_MAX_HDRS], vlens[APPLET_MAX_HDRS];
	int n = 0;

	if (!app->svc->http)
		return luaL_error(L, "start_response() is for HTTP services");
	lua_getiuservalue(L, 1, 1);
	lua_getfield(L, -1, "_rsp");
	for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i += 2) {
		if (n == APPLET_MAX_HDRS)
			return luaL_error(L, "too many response headers (%d at most)", APPLET_MAX_HDRS);
		names[n] = lua_tolstring(L, -1, &nlens[n]);
		lua_rawgeti(L, -2, i + 1);
		vals[n] = lua_tolstring(L, -1, &vlens[n]);
		lua_pop(L, 2);   /* (the table keeps the strings) */
		if (!h1_is_token(names[n], nlens[n]))
			return luaL_error(L, "invalid header name '%s'", names[n]);
		n++;
	}
	if (http_applet_start_response(s, app->status, app->reason, n, names, nlens, vals,
				       vlens) == -1)
		return luaL_error(L, "the response head cannot be sent (sent already, or too large)");
	return 0;
}

/* ---- the objects ---- */

/* __index: methods, then Fetches/Converters, then the attributes. */
static int applet_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);

	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	if (k && (strcmp(k, "f") == 0 || strcmp(k, "sf") == 0)) {
		lua_smp_push(L, 1, 0, k[0] == 's');
		return 1;
	}
	if (k && (strcmp(k, "c") == 0 || strcmp(k, "sc") == 0)) {
		lua_smp_push(L, 1, 1, k[0] == 's');
		return 1;
	}
	lua_getiuservalue(L, 1, 1);
	lua_pushvalue(L, 2);
	lua_rawget(L, -2);
	return 1;
}

/* The attributes of an HTTP applet, from request head <h>. */
static void applet_http_attrs(lua_State *L, struct stream *s, const struct http_head *h)
{
	const struct http_str *u = &h->sl[HTTP_SL_URI], *v = &h->sl[HTTP_SL_RQVER];
	const char *q = memchr(u->p, '?', u->len);
	size_t plen = q ? (size_t)(q - u->p) : u->len;
	long long len = http_applet_body_len(s);

	lua_pushlstring(L, h->sl[HTTP_SL_METH].p, h->sl[HTTP_SL_METH].len);
	lua_setfield(L, -2, "method");
	/* "1.1" of "HTTP/1.1"; an HTTP/2 stream's request reads as HTTP/1.1
	 * to the analysers, its version is "2.0" (as req.ver) */
	if (s->tcp_flags & STRM_F_MUX)
		lua_pushliteral(L, "2.0");
	else
		lua_pushlstring(L, v->len > 5 ? v->p + 5 : v->p, v->len > 5 ? v->len - 5 : v->len);
	lua_setfield(L, -2, "version");
	lua_pushlstring(L, u->p, plen);
	lua_setfield(L, -2, "path");
	lua_pushlstring(L, q ? q + 1 : "", q ? u->len - plen - 1 : 0);
	lua_setfield(L, -2, "qs");
	lua_pushinteger(L, len > 0 ? (lua_Integer)len : 0);
	lua_setfield(L, -2, "length");
	lua_push_headers(L, h);
	lua_setfield(L, -2, "headers");
}

static void applet_wake(struct lua_run *r)
{
	stream_wake(r->s);
}

/* Starts service <svc> for <s> (<h>: the request of an HTTP one). Returns
 * 0 or -1. */
static int applet_new(struct stream *s, const struct lua_svc *svc, const struct http_head *h)
{
	struct lua_strm *ls = lua_strm_get(s);
	struct lua_applet *app;
	struct lua_appobj *o;
	struct lua_run *r;

	if (!ls || !(app = calloc(1, sizeof(*app))))
		return -1;
	r = lua_run_new(LUA_K_SERVICE, s, svc->desc);
	if (!r) {
		free(app);
		return -1;
	}
	lua_applet_release(s, ls);
	app->svc = svc;
	app->r = r;
	app->status = 200;
	r->flags |= LUA_RF_YIELD;
	r->wake = applet_wake;
	lua_rawgeti(r->T, LUA_REGISTRYINDEX, svc->ref);
	o = lua_newuserdatauv(r->T, sizeof(*o), 1);
	o->t.s = s;
	o->t.where = 0;
	o->t.dir = 0;
	o->t.flags = LUA_TXN_F_APPLET;
	o->app = app;
	lua_newtable(r->T);
	lua_newtable(r->T);
	lua_setfield(r->T, -2, "_rsp");
	if (h)
		applet_http_attrs(r->T, s, h);
	lua_setiuservalue(r->T, -2, 1);
	luaL_setmetatable(r->T, svc->http ? APPLET_HTTP_MT : APPLET_TCP_MT);
	lua_pushvalue(r->T, -1);
	r->txn_ref = luaL_ref(r->T, LUA_REGISTRYINDEX);
	r->txn = &o->t;
	ls->applet = app;
	return 0;
}

static int applet_http_start(struct stream *s, struct proxy *px, const struct http_head *h)
{
	return applet_new(s, container_of(s->txn->applet, struct lua_svc, hs), h);
}

static int applet_tcp_start(struct stream *s)
{
	return applet_new(s, container_of(s->svc, struct lua_svc, ts), NULL);
}

/* Whether what the run waits for happened. */
static int applet_ready(struct stream *s, struct lua_applet *app)
{
	switch (app->r->wait) {
	case LUA_W_DATA:
		return applet_has_input(s, app);
	case LUA_W_ROOM:
		return !(s->res.buf && s->res.buf->data) || chan_has_room(&s->res) ||
		       (s->res.flags & CH_F_SHUTW);
	default:
		return app->r->woken;
	}
}

/* stream_service.run and http_service.run */
static int applet_run(struct stream *s)
{
	struct lua_strm *ls = s->ext[lg.ext_slot];
	struct lua_applet *app = ls ? ls->applet : NULL;
	enum lua_res res;

	if (!app)
		return -1;
	if (app->r) {
		if (app->begun && !applet_ready(s, app))
			return 0;
		res = app->begun ? lua_run_resume(app->r) : lua_run_start(app->r, 1);
		app->begun = 1;
		if (res == LUA_RES_WAIT)
			return 0;
		lua_run_free(app->r);
		app->r = NULL;
		if (res == LUA_RES_ERR)
			return -1;
	}
	if (!app->svc->http)
		return 1;
	if (!http_applet_started(s)) {
		char msg[160];
		int n = snprintf(msg, sizeof(msg), "Lua %s: ended without start_response()",
				 app->svc->desc);

		lua_log(s, LOG_L_ERR, msg, (size_t)MIN(n, (int)sizeof(msg) - 1));
		return -1;   /* a 500 */
	}
	return http_applet_end(s);
}

/* core.register_service(name, mode, func) */
int lua_core_register_service(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	const char *mode = luaL_checkstring(L, 2);
	struct lua_svc *svc;

	luaL_checktype(L, 3, LUA_TFUNCTION);
	if (lg.started)
		return luaL_error(L, "core.register_service() is for the body of a file");
	if (strcmp(mode, "http") && strcmp(mode, "tcp"))
		return luaL_argerror(L, 2, "'http' or 'tcp' is expected");
	if (!*name || strlen(name) > 59 || name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")])
		return luaL_argerror(L, 1, "a name of letters, digits, '_', '.' and '-' is expected");
	svc = calloc(1, sizeof(*svc));
	if (!svc)
		return luaL_error(L, "out of memory");
	snprintf(svc->name, sizeof(svc->name), "lua.%s", name);
	snprintf(svc->desc, sizeof(svc->desc), "service '%s'", svc->name);
	snprintf(svc->log_name, sizeof(svc->log_name), "<%s>", svc->name);
	if (http_service_find(svc->name) || stream_service_find(svc->name)) {
		lua_pushfstring(L, "core.register_service(): '%s' is registered already", svc->name);
		free(svc);
		return lua_error(L);
	}
	svc->http = mode[0] == 'h';
	lua_pushvalue(L, 3);
	svc->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	if (svc->http) {
		svc->hs.name = svc->name;
		svc->hs.start = applet_http_start;
		svc->hs.run = applet_run;
		svc->hs.priv = svc;
		http_service_register(&svc->hs);
	} else {
		svc->ts.name = svc->name;
		svc->ts.log_name = svc->log_name;
		svc->ts.start = applet_tcp_start;
		svc->ts.run = applet_run;
		stream_service_register(&svc->ts);
	}
	return 0;
}

extern const luaL_Reg lua_txn_shared[];

void lua_applet_register(lua_State *L)
{
	static const luaL_Reg http_fns[] = {
		{ "set_status", applet_set_status }, { "add_header", applet_add_header },
		{ "start_response", applet_start_response }, { "getline", applet_getline },
		{ "receive", applet_receive }, { "send", applet_send },
		{ NULL, NULL }
	};
	static const luaL_Reg tcp_fns[] = {
		{ "getline", applet_getline }, { "receive", applet_receive }, { "send", applet_send },
		{ NULL, NULL }
	};
	const char *const mts[] = { APPLET_HTTP_MT, APPLET_TCP_MT };
	const luaL_Reg *fns[] = { http_fns, tcp_fns };

	for (int i = 0; i < 2; i++) {
		luaL_newmetatable(L, mts[i]);
		lua_newtable(L);
		luaL_setfuncs(L, fns[i], 0);
		luaL_setfuncs(L, lua_txn_shared, 0);
		lua_pushcclosure(L, applet_index, 1);
		lua_setfield(L, -2, "__index");
		lua_pop(L, 1);
	}
}

#endif
