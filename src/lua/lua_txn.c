/* The TXN class (the stream an action or a fetch runs for), the HTTP class
 * (the request and response heads under analysis), the Channel class (the
 * bytes of a TCP stream) and the Reply class (txn:reply(), txn:done()). */
#ifdef USE_LUA
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#ifdef USE_PCRE2
#include <pcre2.h>
#endif

#include <sluice/action.h>
#include <sluice/buf.h>
#include <sluice/channel.h>
#include <sluice/common.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/http_reply.h>
#include <sluice/http_rules.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/stream.h>
#include <sluice/vars.h>

#include "lua_int.h"

#define TXN_MT   "sluice.txn"
#define HTTP_MT  "sluice.http"
#define CHN_MT   "sluice.channel"
#define REPLY_MT "sluice.reply"

/* ---- TXN ---- */

struct lua_txn *lua_txn_push(lua_State *L, struct stream *s, unsigned where, int dir)
{
	struct lua_txn *t = lua_newuserdatauv(L, sizeof(*t), 1);

	t->s = s;
	t->where = where;
	t->dir = dir;
	t->flags = 0;
	luaL_setmetatable(L, TXN_MT);
	return t;
}

/* The TXN, AppletHTTP or AppletTCP object at <idx> (they share the first
 * members: struct lua_txn), alive. */
struct lua_txn *lua_txn_check(lua_State *L, int idx)
{
	static const char *const mts[] = { TXN_MT, "sluice.applet_http", "sluice.applet_tcp" };
	struct lua_txn *t = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(mts) && !t; i++)
		t = luaL_testudata(L, idx, mts[i]);
	if (!t)
		luaL_typeerror(L, idx, "TXN");
	if (!t->s)
		luaL_error(L, "this object was kept beyond the transaction it was made for");
	return t;
}

static int txn_log(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	lua_Integer level = lua_check_int(L, 2, "txn:log");
	size_t len;
	const char *msg = luaL_checklstring(L, 3, &len);

	if (level < 0 || level > 7)
		return luaL_argerror(L, 2, "a log level between 0 and 7 is expected");
	lua_log(t->s, (int)level, msg, len);
	return 0;
}

static int txn_log_at(lua_State *L, int level)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	size_t len;
	const char *msg = luaL_checklstring(L, 2, &len);

	lua_log(t->s, level, msg, len);
	return 0;
}

static int txn_deflog(lua_State *L)  { return txn_log_at(L, LOG_L_INFO); }
static int txn_debug(lua_State *L)   { return txn_log_at(L, LOG_L_DEBUG); }
static int txn_info(lua_State *L)    { return txn_log_at(L, LOG_L_INFO); }
static int txn_warning(lua_State *L) { return txn_log_at(L, LOG_L_WARNING); }
static int txn_alert(lua_State *L)   { return txn_log_at(L, LOG_L_ALERT); }

static int txn_get_priv(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	struct lua_strm *ls = t->s->ext[lg.ext_slot];

	if (!ls || ls->priv_ref == LUA_NOREF)
		lua_pushnil(L);
	else
		lua_rawgeti(L, LUA_REGISTRYINDEX, ls->priv_ref);
	return 1;
}

static int txn_set_priv(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	struct lua_strm *ls = lua_strm_get(t->s);

	if (!ls)
		return luaL_error(L, "out of memory");
	lua_settop(L, 2);
	if (ls->priv_ref != LUA_NOREF)
		luaL_unref(L, LUA_REGISTRYINDEX, ls->priv_ref);
	ls->priv_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return 0;
}

/* The variable named at <idx>. */
static void txn_var_ref(lua_State *L, int idx, struct var_ref *ref)
{
	size_t len;
	const char *name = luaL_checklstring(L, idx, &len);
	char *err = NULL;

	if (var_ref_parse(name, len, ref, &err) == -1) {
		lua_pushstring(L, err ? err : "invalid variable name");
		free(err);
		lua_error(L);
	}
}

static int txn_set_var(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	struct var_ref ref;
	struct sample smp;

	memset(&smp, 0, sizeof(smp));
	if (!lua_smp_from_lua(L, 3, &smp))
		return luaL_argerror(L, 3, "a string, a number or a boolean is expected");
	txn_var_ref(L, 2, &ref);
	if (!lua_toboolean(L, 4) || var_ref_known(&ref))
		var_set(&ref, t->s, &smp);
	var_ref_release(&ref);
	return 0;
}

static int txn_unset_var(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	struct var_ref ref;

	txn_var_ref(L, 2, &ref);
	var_unset(&ref, t->s);
	var_ref_release(&ref);
	return 0;
}

static int txn_get_var(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	struct var_ref ref;
	struct sample smp;
	int found;

	memset(&smp, 0, sizeof(smp));
	txn_var_ref(L, 2, &ref);
	found = var_get(&ref, t->s, &smp);
	var_ref_release(&ref);
	if (!found)
		lua_pushnil(L);
	else
		lua_smp_to_lua(L, &smp, 0);
	return 1;
}

static int txn_set_loglevel(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	lua_Integer level = lua_check_int(L, 2, "txn:set_loglevel");

	if (level < 0 || level > 7)
		return luaL_argerror(L, 2, "a log level between 0 and 7 is expected");
	/* the stream keeps 1 + the level (0: the proxy's own) */
	t->s->log_level = (signed char)(level + 1);
	return 0;
}

/* IP_TOS (IPV6_TCLASS) or SO_MARK of the client's socket. */
static int txn_sockopt(lua_State *L, int mark)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	int v = (int)lua_check_int(L, 2, mark ? "txn:set_mark" : "txn:set_tos");

	if (mark)
		stream_set_mark(t->s, v);
	else
		stream_set_tos(t->s, v);
	return 0;
}

static int txn_set_tos(lua_State *L)  { return txn_sockopt(L, 0); }
static int txn_set_mark(lua_State *L) { return txn_sockopt(L, 1); }

static int txn_set_prio(lua_State *L, int offset)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	lua_Integer v = lua_check_int(L, 2, offset ? "txn:set_priority_offset" :
					     "txn:set_priority_class");

	stream_set_priority(t->s, offset, (long)v);
	return 0;
}

static int txn_set_priority_class(lua_State *L)  { return txn_set_prio(L, 0); }
static int txn_set_priority_offset(lua_State *L) { return txn_set_prio(L, 1); }

/* txn:done([reply]): the transaction ends here, with <reply> sent (HTTP),
 * else the client is closed. */
static int txn_done(lua_State *L)
{
	struct lua_txn *t = lua_txn_check(L, 1);
	struct lua_run *r = lua_cur(L);
	struct lua_strm *ls = lua_strm_get(t->s);

	if (!ls)
		return luaL_error(L, "out of memory");
	if (!lua_isnoneornil(L, 2) && t->s->txn) {
		struct http_reply *rep = lua_reply_make(L, 2);

		lua_reply_free(ls->reply);
		ls->reply = rep;
	}
	ls->txn_done = 1;
	r->flags |= LUA_RF_DONE;
	if (L == r->T && lua_isyieldable(L))
		return lua_yield(L, 0);
	return luaL_error(L, "txn:done() called where the script cannot be stopped");
}

/* ---- Reply ---- */

static int reply_set_status(lua_State *L)
{
	lua_Integer st = lua_check_int(L, 2, "reply:set_status");

	luaL_checktype(L, 1, LUA_TTABLE);
	if (st < 100 || st > 999)
		return luaL_argerror(L, 2, "a status between 100 and 999 is expected");
	lua_pushinteger(L, st);
	lua_setfield(L, 1, "status");
	lua_settop(L, 3);
	lua_setfield(L, 1, "reason");
	return 0;
}

static int reply_add_header(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checkstring(L, 2);
	luaL_checkstring(L, 3);
	if (lua_getfield(L, 1, "headers") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, 1, "headers");
	}
	lua_pushvalue(L, 2);
	if (lua_rawget(L, -2) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, 2);
		lua_pushvalue(L, -2);
		lua_rawset(L, -4);
	}
	lua_pushvalue(L, 3);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

static int reply_del_header(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checkstring(L, 2);
	if (lua_getfield(L, 1, "headers") == LUA_TTABLE) {
		lua_pushvalue(L, 2);
		lua_pushnil(L);
		lua_rawset(L, -3);
	}
	return 0;
}

static int reply_set_body(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checkstring(L, 2);
	lua_settop(L, 2);
	lua_setfield(L, 1, "body");
	return 0;
}

/* txn:reply([t]): a Reply object (a table of the Reply class). */
static int txn_reply(lua_State *L)
{
	static const char *const fields[] = { "status", "reason", "headers", "body" };

	lua_newtable(L);
	if (lua_istable(L, 2))
		for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
			lua_getfield(L, 2, fields[i]);
			lua_setfield(L, -2, fields[i]);
		}
	if (lua_getfield(L, -1, "status") == LUA_TNIL) {
		lua_pushinteger(L, 200);
		lua_setfield(L, -3, "status");
	}
	lua_pop(L, 1);
	if (lua_getfield(L, -1, "headers") == LUA_TNIL) {
		lua_newtable(L);
		lua_setfield(L, -3, "headers");
	}
	lua_pop(L, 1);
	luaL_setmetatable(L, REPLY_MT);
	return 1;
}

void lua_reply_free(struct http_reply *r)
{
	if (!r)
		return;
	http_reply_release(r);
	free(r);
}

/* Adds field <name>: <val> to <r>; 0, or -1 when memory is exhausted. */
static int reply_hdr_add(struct http_reply *r, const char *name, size_t nlen, const char *val,
                         size_t vlen)
{
	struct http_reply_hdr *h = realloc(r->hdrs, sizeof(*h) * (size_t)(r->nhdrs + 1));

	if (!h)
		return -1;
	r->hdrs = h;
	h = &r->hdrs[r->nhdrs];
	memset(h, 0, sizeof(*h));
	h->name = strndup(name, nlen);
	h->value = strndup(val, vlen);
	r->nhdrs++;
	return h->name && h->value ? 0 : -1;
}

struct http_reply *lua_reply_make(lua_State *L, int idx)
{
	struct http_reply *r;
	const char *p;
	size_t len;

	idx = lua_absindex(L, idx);
	luaL_checktype(L, idx, LUA_TTABLE);
	r = calloc(1, sizeof(*r));
	if (!r)
		luaL_error(L, "out of memory");
	r->type = HTTP_REPLY_BODY;
	r->status = 200;
	if (lua_getfield(L, idx, "status") != LUA_TNIL)
		r->status = (int)lua_check_int(L, -1, "reply status");
	lua_pop(L, 1);
	if (lua_getfield(L, idx, "reason") == LUA_TSTRING)
		r->reason = strdup(lua_tostring(L, -1));
	lua_pop(L, 1);
	if (lua_getfield(L, idx, "body") == LUA_TSTRING) {
		p = lua_tolstring(L, -1, &len);
		r->body = malloc(len + 1);
		if (r->body) {
			memcpy(r->body, p, len);
			r->body_len = len;
		}
	} else {
		r->body = calloc(1, 1);
	}
	lua_pop(L, 1);
	if (r->status < 100 || r->status > 999 || !r->body)
		goto bad;
	if (lua_getfield(L, idx, "headers") == LUA_TTABLE) {
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			size_t nlen;
			const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &nlen) : NULL;

			if (!name || !h1_is_token(name, nlen)) {
				lua_reply_free(r);
				luaL_error(L, "reply: invalid header name");
			}
			/* the length is the body's */
			if (nlen == 14 && strncasecmp(name, "content-length", 14) == 0) {
				lua_pop(L, 1);
				continue;
			}
			if (lua_type(L, -1) == LUA_TTABLE) {
				for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
					p = lua_tolstring(L, -1, &len);
					if (!p || reply_hdr_add(r, name, nlen, p, len) == -1) {
						lua_reply_free(r);
						luaL_error(L, "reply: invalid value of header '%s'", name);
					}
					lua_pop(L, 1);
				}
				lua_pop(L, 1);
			} else if ((p = lua_tolstring(L, -1, &len))) {
				if (reply_hdr_add(r, name, nlen, p, len) == -1)
					goto bad;
			}
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	return r;
bad:
	lua_reply_free(r);
	luaL_error(L, "reply: a status between 100 and 999 and string fields are expected");
	return NULL;
}

/* ---- HTTP ---- */

struct lua_http {
	struct lua_txn *t;
};

/* The head of the request (<res> 0) or the response of the HTTP object at
 * 1, being analysed. */
static struct http_head *http_of(lua_State *L, int res, struct stream **sp)
{
	struct lua_http *h = luaL_checkudata(L, 1, HTTP_MT);
	struct stream *s = h->t->s;
	struct http_head *hd;

	if (!s)
		luaL_error(L, "this HTTP object was kept beyond its transaction");
	hd = s->txn ? (res ? s->txn->res_head : s->txn->req_head) : NULL;
	if (!hd)
		luaL_error(L, "the HTTP %s is not available here", res ? "response" : "request");
	if (sp)
		*sp = s;
	return hd;
}

/* A rewrite did not fit (tune.maxrewrite): counted, and an error for the
 * script. */
static int http_rewrite_failed(lua_State *L, struct stream *s)
{
	s->fe->fe_counters.failed_rewrites++;
	return luaL_error(L, "the rewrite does not fit in the message (tune.maxrewrite)");
}

void lua_push_headers(lua_State *L, const struct http_head *h)
{
	char name[256];

	lua_createtable(L, 0, h->nf);
	for (int i = 0; i < h->nf; i++) {
		const struct http_field *f = &h->f[i];
		size_t n = MIN(f->n.len, sizeof(name));

		/* names in lower case, values indexed from 0, as HAProxy */
		for (size_t j = 0; j < n; j++)
			name[j] = (char)((f->n.p[j] >= 'A' && f->n.p[j] <= 'Z') ? f->n.p[j] + 32 : f->n.p[j]);
		lua_pushlstring(L, name, n);
		if (lua_rawget(L, -2) == LUA_TNIL) {
			lua_pop(L, 1);
			lua_newtable(L);
			lua_pushlstring(L, name, n);
			lua_pushvalue(L, -2);
			lua_rawset(L, -4);
			lua_pushlstring(L, f->v.p, f->v.len);
			lua_rawseti(L, -2, 0);
		} else {
			lua_Integer k = (lua_Integer)lua_rawlen(L, -1) + 1;

			lua_pushlstring(L, f->v.p, f->v.len);
			lua_rawseti(L, -2, k);
		}
		lua_pop(L, 1);
	}
}

static int http_get_headers(lua_State *L, int res)
{
	lua_push_headers(L, http_of(L, res, NULL));
	return 1;
}

static int http_req_get_headers(lua_State *L) { return http_get_headers(L, 0); }
static int http_res_get_headers(lua_State *L) { return http_get_headers(L, 1); }

/* add (0), set (1) or del (2) header */
static int http_hdr_op(lua_State *L, int res, int op)
{
	struct stream *s;
	struct http_head *h = http_of(L, res, &s);
	size_t nlen, vlen = 0;
	const char *name = luaL_checklstring(L, 2, &nlen), *v = op < 2 ? NULL : "";

	if (op < 2)
		v = luaL_checklstring(L, 3, &vlen);
	if (!h1_is_token(name, nlen))
		return luaL_argerror(L, 2, "a header name is expected");
	if (op == 2)
		http_head_del(h, name, nlen);
	else if ((op ? http_head_set : http_head_add)(h, name, nlen, v, vlen) == -1)
		return http_rewrite_failed(L, s);
	return 0;
}

static int http_req_add_header(lua_State *L) { return http_hdr_op(L, 0, 0); }
static int http_res_add_header(lua_State *L) { return http_hdr_op(L, 1, 0); }
static int http_req_set_header(lua_State *L) { return http_hdr_op(L, 0, 1); }
static int http_res_set_header(lua_State *L) { return http_hdr_op(L, 1, 1); }
static int http_req_del_header(lua_State *L) { return http_hdr_op(L, 0, 2); }
static int http_res_del_header(lua_State *L) { return http_hdr_op(L, 1, 2); }

struct lua_repl {
	const char *v;
	size_t      len;
};

static int http_repl_given(void *arg, const char **v, size_t *len)
{
	const struct lua_repl *rp = arg;

	*v = rp->v;
	*len = rp->len;
	return 0;
}

/* req_rep_header(name, regex, replace) and friends. */
static int http_rep(lua_State *L, int res, int per_value)
{
#ifdef USE_PCRE2
	struct stream *s;
	struct http_head *h = http_of(L, res, &s);
	size_t nlen, rlen, replen;
	const char *name = luaL_checklstring(L, 2, &nlen);
	const char *re_s = luaL_checklstring(L, 3, &rlen);
	struct lua_repl rp;
	pcre2_code *re;
	pcre2_match_data *md;
	int err, ret;
	PCRE2_SIZE off;

	rp.v = luaL_checklstring(L, 4, &replen);
	rp.len = replen;
	re = pcre2_compile((PCRE2_SPTR)re_s, rlen, 0, &err, &off, NULL);
	if (!re)
		return luaL_argerror(L, 3, "invalid regular expression");
	md = pcre2_match_data_create_from_pattern(re, NULL);
	if (!md) {
		pcre2_code_free(re);
		return luaL_error(L, "out of memory");
	}
	ret = http_head_replace_re(h, name, nlen, re, md, per_value, http_repl_given, &rp);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	if (ret == -1)
		return http_rewrite_failed(L, s);
	return 0;
#else
	return luaL_error(L, "regular expressions need a build with PCRE2");
#endif
}

static int http_req_rep_header(lua_State *L) { return http_rep(L, 0, 0); }
static int http_res_rep_header(lua_State *L) { return http_rep(L, 1, 0); }
static int http_req_rep_value(lua_State *L)  { return http_rep(L, 0, 1); }
static int http_res_rep_value(lua_State *L)  { return http_rep(L, 1, 1); }

static int http_set_target(lua_State *L, enum http_target_part part)
{
	struct stream *s;
	struct http_head *h = http_of(L, 0, &s);
	size_t len;
	const char *v = luaL_checklstring(L, 2, &len);

	if (http_head_set_target(h, part, v, len) == -1)
		return http_rewrite_failed(L, s);
	return 0;
}

static int http_req_set_path(lua_State *L)  { return http_set_target(L, HTTP_TP_PATH); }
static int http_req_set_query(lua_State *L) { return http_set_target(L, HTTP_TP_QUERY); }
static int http_req_set_uri(lua_State *L)   { return http_set_target(L, HTTP_TP_URI); }

static int http_req_set_method(lua_State *L)
{
	struct stream *s;
	struct http_head *h = http_of(L, 0, &s);
	size_t len;
	const char *v = luaL_checklstring(L, 2, &len);

	if (!h1_is_token(v, len))
		return luaL_argerror(L, 2, "a method is expected");
	if (http_head_set_sl(h, HTTP_SL_METH, v, len) == -1)
		return http_rewrite_failed(L, s);
	return 0;
}

static int http_res_set_status(lua_State *L)
{
	struct stream *s;
	struct http_head *h = http_of(L, 1, &s);
	lua_Integer st = lua_check_int(L, 2, "res_set_status");
	const char *reason = luaL_optstring(L, 3, NULL);
	char code[4];

	if (st < 100 || st > 999)
		return luaL_argerror(L, 2, "a status between 100 and 999 is expected");
	if (!reason)
		reason = http_reason((int)st);
	snprintf(code, sizeof(code), "%03d", (int)st);
	if (http_head_set_sl(h, HTTP_SL_STATUS, code, 3) == -1 ||
	    http_head_set_sl(h, HTTP_SL_REASON, reason, strlen(reason)) == -1)
		return http_rewrite_failed(L, s);
	return 0;
}

/* ---- Channel ---- */

struct lua_chnobj {
	struct lua_txn *t;
	int             res;
};

struct chn_view {
	struct stream   *s;
	struct channel  *ch;
	struct lua_chn  *lc;
	struct lua_run  *r;
	int              http;
};

/* The channel object at 1. With <edit>, its bytes must be editable: a TCP
 * stream's, in the direction its rules inspect. */
static void chn_of(lua_State *L, struct chn_view *v, int edit)
{
	struct lua_chnobj *c = luaL_checkudata(L, 1, CHN_MT);
	struct stream *s = c->t->s;
	struct lua_strm *ls;

	if (!s)
		luaL_error(L, "this Channel was kept beyond its transaction");
	v->s = s;
	v->ch = c->res ? &s->res : &s->req;
	v->http = s->txn != NULL || s->state == ST_HTTP;
	v->r = lg.cur;
	if (!edit) {
		v->lc = NULL;
		return;
	}
	if (v->http)
		luaL_error(L, "the Channel's data cannot be read nor changed in HTTP mode "
			   "(use txn.http)");
	if (!!c->res != !!(c->t->where & ACT_W_TCP_RES))
		luaL_error(L, "the %s channel is not available in %s rules", c->res ? "response" : "request",
			   c->t->where & ACT_W_TCP_RES ? "tcp-response" : "tcp-request");
	ls = lua_strm_get(s);
	if (!ls)
		luaL_error(L, "out of memory");
	v->lc = &ls->chn[c->res];
	if (v->ch->buf && v->lc->out > v->ch->buf->data)
		v->lc->out = v->ch->buf->data;
	if (!v->ch->buf || !v->ch->buf->data)
		v->lc->out = 0;
}

static uint32_t chn_in(const struct chn_view *v)
{
	return v->ch->buf ? v->ch->buf->data - (v->lc ? v->lc->out : 0) : 0;
}

/* The input bytes start here. */
static char *chn_in_ptr(const struct chn_view *v)
{
	return v->ch->buf->area + v->ch->buf->head + v->lc->out;
}

/* Whether more input may still come. */
static int chn_may_recv(const struct chn_view *v)
{
	return !(v->ch->flags & CH_F_SHUTR) && chan_has_room(v->ch);
}

/* Whether a call may wait for more input: it may come, the action may
 * wait, and its rules still inspect (their inspect-delay runs). Once the
 * delay ran out, or without one, the rules decide on what is there: the
 * call returns it, as in HAProxy's last evaluation. */
static int chn_may_wait(const struct chn_view *v)
{
	return chn_may_recv(v) && v->r && (v->r->flags & LUA_RF_YIELD) &&
	       (v->s->smp_partial & (STRM_PARTIAL_REQ | STRM_PARTIAL_RES));
}

/* <off>/<len> arguments at <i>, <i>+1 into a range of the <in> input
 * bytes. <len> -1 stays -1 ("as much as possible"). */
static void chn_range(lua_State *L, int i, uint32_t in, long *off, long *len)
{
	*off = (long)luaL_optinteger(L, i, 0);
	*len = (long)luaL_optinteger(L, i + 1, (lua_Integer)in);
	if (*off < 0)
		*off += (long)in;
	if (*off < 0 || *off > (long)in)
		luaL_argerror(L, i, "offset out of the input data");
	if (*len < -1)
		luaL_argerror(L, i + 1, "invalid length");
}

static int chn_k_data(lua_State *L, int status, lua_KContext ctx);

/* data([offset [, length]]) and line(): the input bytes (the first line of
 * them), waiting in an action for more when asked more than there is. */
static int chn_data_line(lua_State *L, int line)
{
	struct chn_view v;
	long off, len;
	uint32_t in;
	const char *p;

	chn_of(L, &v, 1);
	in = chn_in(&v);
	chn_range(L, 2, in, &off, &len);
	/* (no buffer at all before the first bytes came) */
	p = in ? chn_in_ptr(&v) + off : "";
	if ((len == -1 || off + len > (long)in ||
	     (line && !memchr(p, '\n', in - (size_t)off))) &&
	    chn_may_wait(&v))
		return lua_wait(L, LUA_W_DATA, line, chn_k_data);
	if (!in && !chn_may_recv(&v)) {
		lua_pushnil(L);
		return 1;
	}
	if (len == -1 || off + len > (long)in)
		len = (long)in - off;
	if (line) {
		const char *nl = memchr(p, '\n', (size_t)len);

		if (nl)
			len = nl - p + 1;
	}
	lua_pushlstring(L, p, (size_t)len);
	return 1;
}

static int chn_k_data(lua_State *L, int status, lua_KContext ctx)
{
	return chn_data_line(L, (int)ctx);
}

static int chn_data(lua_State *L) { return chn_data_line(L, 0); }
static int chn_line(lua_State *L) { return chn_data_line(L, 1); }

/* Replaces <len> input bytes at <off> by <s> (<slen> bytes). Returns the
 * bytes written, or -1 when they do not fit. */
static long chn_splice(struct chn_view *v, long off, long len, const char *s, size_t slen)
{
	struct buf *b = v->ch->buf;
	uint32_t in = chn_in(v);
	size_t keep;

	if (!b) {
		if (!slen)
			return 0;
		if (!(b = v->ch->buf = buf_get()))
			return -1;
		b->head = b->data = 0;
	}
	if (b->data - (size_t)len + slen > buf_size())
		return -1;
	if (b->head) {
		memmove(b->area, b->area + b->head, b->data);
		b->head = 0;
	}
	keep = in - (size_t)(off + len);
	memmove(chn_in_ptr(v) + off + slen, chn_in_ptr(v) + off + len, keep);
	memcpy(chn_in_ptr(v) + off, s, slen);
	b->data = (uint32_t)(b->data - (size_t)len + slen);
	return (long)slen;
}

static int chn_set(lua_State *L)
{
	struct chn_view v;
	size_t slen;
	const char *s = luaL_checklstring(L, 2, &slen);
	long off, len;

	chn_of(L, &v, 1);
	chn_range(L, 3, chn_in(&v), &off, &len);
	if (len == -1 || off + len > (long)chn_in(&v))
		len = (long)chn_in(&v) - off;
	lua_pushinteger(L, chn_splice(&v, off, len, s, slen));
	return 1;
}

/* insert (at <where>: -1 end, 0 start, else the offset argument) */
static int chn_insert_at(lua_State *L, int where)
{
	struct chn_view v;
	size_t slen;
	const char *s = luaL_checklstring(L, 2, &slen);
	long off = 0;

	chn_of(L, &v, 1);
	if (where < 0) {
		off = (long)chn_in(&v);
	} else if (where > 0) {
		off = (long)luaL_optinteger(L, 3, 0);
		if (off < 0)
			off += (long)chn_in(&v);
		if (off < 0 || off > (long)chn_in(&v))
			return luaL_argerror(L, 3, "offset out of the input data");
	}
	lua_pushinteger(L, chn_splice(&v, off, 0, s, slen));
	return 1;
}

static int chn_append(lua_State *L)  { return chn_insert_at(L, -1); }
static int chn_prepend(lua_State *L) { return chn_insert_at(L, 0); }
static int chn_insert(lua_State *L)  { return chn_insert_at(L, 1); }

static int chn_remove(lua_State *L)
{
	struct chn_view v;
	long off, len;

	chn_of(L, &v, 1);
	chn_range(L, 2, chn_in(&v), &off, &len);
	if (len == -1 || off + len > (long)chn_in(&v))
		len = (long)chn_in(&v) - off;
	chn_splice(&v, off, len, "", 0);
	lua_pushinteger(L, len);
	return 1;
}

static int chn_k_forward(lua_State *L, int status, lua_KContext ctx);

/* forward(length): <length> input bytes become output, waiting in an
 * action for those not there yet. */
static int chn_forward_n(lua_State *L, long want)
{
	struct chn_view v;
	uint32_t in;
	long n;

	chn_of(L, &v, 1);
	in = chn_in(&v);
	n = MIN(want, (long)in);
	v.lc->out += (uint32_t)n;
	want -= n;
	if (want > 0 && chn_may_wait(&v))
		return lua_wait(L, LUA_W_DATA, want, chn_k_forward);
	lua_pushinteger(L, (lua_Integer)luaL_checkinteger(L, 2) - want);
	return 1;
}

static int chn_k_forward(lua_State *L, int status, lua_KContext ctx)
{
	return chn_forward_n(L, (long)ctx);
}

static int chn_forward(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 2);

	return chn_forward_n(L, n > 0 ? (long)n : 0);
}

/* send(string): the bytes go before the input, as output. */
static int chn_send(lua_State *L)
{
	struct chn_view v;
	size_t slen;
	const char *s = luaL_checklstring(L, 2, &slen);
	long n;

	chn_of(L, &v, 1);
	n = chn_splice(&v, 0, 0, s, slen);
	if (n > 0)
		v.lc->out += (uint32_t)n;
	lua_pushinteger(L, n);
	return 1;
}

/* get() and getline() (deprecated): data()/line() then remove(). */
static int chn_k_take(lua_State *L, int status, lua_KContext ctx);

static int chn_take(lua_State *L, int line)
{
	struct chn_view v;
	uint32_t in;
	size_t len;
	const char *p, *nl;

	chn_of(L, &v, 1);
	in = chn_in(&v);
	p = in ? chn_in_ptr(&v) : "";
	nl = line && in ? memchr(p, '\n', in) : NULL;
	if (line && !nl && chn_may_wait(&v))
		return lua_wait(L, LUA_W_DATA, line, chn_k_take);
	if (!in && !chn_may_recv(&v)) {
		lua_pushnil(L);
		return 1;
	}
	len = nl ? (size_t)(nl - p + 1) : in;
	lua_pushlstring(L, p, len);
	chn_splice(&v, 0, (long)len, "", 0);
	return 1;
}

static int chn_k_take(lua_State *L, int status, lua_KContext ctx)
{
	return chn_take(L, (int)ctx);
}

static int chn_get(lua_State *L)     { return chn_take(L, 0); }
static int chn_getline(lua_State *L) { return chn_take(L, 1); }

static int chn_dup(lua_State *L)
{
	struct chn_view v;
	uint32_t in;

	chn_of(L, &v, 1);
	in = chn_in(&v);
	if (!in && !chn_may_recv(&v))
		lua_pushnil(L);
	else
		lua_pushlstring(L, in ? chn_in_ptr(&v) : "", in);
	return 1;
}

static int chn_input(lua_State *L)
{
	struct chn_view v;

	chn_of(L, &v, 0);
	if (!v.http)
		chn_of(L, &v, 1);
	lua_pushinteger(L, chn_in(&v));
	return 1;
}

static int chn_output(lua_State *L)
{
	struct chn_view v;

	chn_of(L, &v, 0);
	if (!v.http)
		chn_of(L, &v, 1);
	lua_pushinteger(L, v.lc ? (lua_Integer)v.lc->out : 0);
	return 1;
}

static int chn_is_full(lua_State *L)
{
	struct chn_view v;

	chn_of(L, &v, 0);
	lua_pushboolean(L, !chan_has_room(v.ch));
	return 1;
}

static int chn_is_resp(lua_State *L)
{
	struct lua_chnobj *c = luaL_checkudata(L, 1, CHN_MT);

	lua_pushboolean(L, c->res);
	return 1;
}

static int chn_may_recv_l(lua_State *L)
{
	struct chn_view v;

	chn_of(L, &v, 0);
	lua_pushboolean(L, chn_may_recv(&v));
	return 1;
}

/* ---- TXN fields ---- */

static void txn_push_sub(lua_State *L, const char *mt, size_t size, int res)
{
	struct lua_txn *t = luaL_checkudata(L, 1, TXN_MT);
	struct lua_chnobj *o = lua_newuserdatauv(L, size, 1);

	o->t = t;
	if (size == sizeof(struct lua_chnobj))
		o->res = res;
	/* the object keeps its TXN alive */
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, mt);
}

/* __index: methods, then the attributes (f, sf, c, sc, http, req, res),
 * then the fields the script set. */
static int txn_index(lua_State *L)
{
	struct lua_txn *t = luaL_checkudata(L, 1, TXN_MT);
	const char *k;

	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	k = lua_tostring(L, 2);
	if (k && k[0] && (!k[1] || !k[2])) {
		if (strcmp(k, "f") == 0 || strcmp(k, "sf") == 0) {
			lua_smp_push(L, 1, 0, k[0] == 's');
			return 1;
		}
		if (strcmp(k, "c") == 0 || strcmp(k, "sc") == 0) {
			lua_smp_push(L, 1, 1, k[0] == 's');
			return 1;
		}
	}
	if (k && strcmp(k, "http") == 0) {
		if (!t->s || !t->s->txn)
			return 0;   /* nil: not an HTTP stream (as HAProxy's mode tcp) */
		txn_push_sub(L, HTTP_MT, sizeof(struct lua_http), 0);
		return 1;
	}
	if (k && (strcmp(k, "req") == 0 || strcmp(k, "res") == 0)) {
		txn_push_sub(L, CHN_MT, sizeof(struct lua_chnobj), k[2] == 's');
		return 1;
	}
	if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE)
		return 0;
	lua_pushvalue(L, 2);
	lua_rawget(L, -2);
	return 1;
}

/* __newindex: a field of the script's own (HAProxy's TXN is a table). */
static int txn_newindex(lua_State *L)
{
	luaL_checkudata(L, 1, TXN_MT);
	if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, 1, 1);
	}
	lua_pushvalue(L, 2);
	lua_pushvalue(L, 3);
	lua_rawset(L, -3);
	return 0;
}

static const luaL_Reg txn_methods[] = {
	{ "log", txn_log }, { "deflog", txn_deflog }, { "Debug", txn_debug },
	{ "Info", txn_info }, { "Warning", txn_warning }, { "Alert", txn_alert },
	{ "get_priv", txn_get_priv }, { "set_priv", txn_set_priv },
	{ "set_var", txn_set_var }, { "unset_var", txn_unset_var }, { "get_var", txn_get_var },
	{ "set_loglevel", txn_set_loglevel }, { "set_tos", txn_set_tos },
	{ "set_mark", txn_set_mark }, { "set_priority_class", txn_set_priority_class },
	{ "set_priority_offset", txn_set_priority_offset },
	{ "done", txn_done }, { "reply", txn_reply },
	{ NULL, NULL }
};

/* The methods shared with the applets (lua_applet.c copies them). */
const luaL_Reg lua_txn_shared[] = {
	{ "get_priv", txn_get_priv }, { "set_priv", txn_set_priv },
	{ "set_var", txn_set_var }, { "unset_var", txn_unset_var }, { "get_var", txn_get_var },
	{ NULL, NULL }
};

void lua_txn_register(lua_State *L)
{
	static const luaL_Reg http_fns[] = {
		{ "req_get_headers", http_req_get_headers }, { "res_get_headers", http_res_get_headers },
		{ "req_add_header", http_req_add_header }, { "res_add_header", http_res_add_header },
		{ "req_set_header", http_req_set_header }, { "res_set_header", http_res_set_header },
		{ "req_del_header", http_req_del_header }, { "res_del_header", http_res_del_header },
		{ "req_rep_header", http_req_rep_header }, { "res_rep_header", http_res_rep_header },
		{ "req_rep_value", http_req_rep_value }, { "res_rep_value", http_res_rep_value },
		{ "req_set_method", http_req_set_method }, { "req_set_path", http_req_set_path },
		{ "req_set_query", http_req_set_query }, { "req_set_uri", http_req_set_uri },
		{ "res_set_status", http_res_set_status },
		{ NULL, NULL }
	};
	static const luaL_Reg chn_fns[] = {
		{ "data", chn_data }, { "line", chn_line }, { "set", chn_set },
		{ "append", chn_append }, { "prepend", chn_prepend }, { "insert", chn_insert },
		{ "remove", chn_remove }, { "forward", chn_forward }, { "send", chn_send },
		{ "get", chn_get }, { "getline", chn_getline }, { "dup", chn_dup },
		{ "input", chn_input }, { "output", chn_output }, { "get_in_len", chn_input },
		{ "get_out_len", chn_output }, { "is_full", chn_is_full }, { "is_resp", chn_is_resp },
		{ "may_recv", chn_may_recv_l },
		{ NULL, NULL }
	};
	static const luaL_Reg reply_fns[] = {
		{ "set_status", reply_set_status }, { "add_header", reply_add_header },
		{ "del_header", reply_del_header }, { "set_body", reply_set_body },
		{ NULL, NULL }
	};

	luaL_newmetatable(L, TXN_MT);
	lua_newtable(L);
	luaL_setfuncs(L, txn_methods, 0);
	lua_pushcclosure(L, txn_index, 1);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, txn_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pop(L, 1);
	lua_class_new(L, HTTP_MT, http_fns);
	lua_pop(L, 1);
	lua_class_new(L, CHN_MT, chn_fns);
	lua_pop(L, 1);
	lua_class_new(L, REPLY_MT, reply_fns);
	lua_pop(L, 1);
}

#endif
