/* The "core" class of HAProxy's Lua API: logs, time and dates, sleeps and
 * yields, maps and ACLs, addresses, tokenizing, the registration functions,
 * and the "act" class of action return codes. */
#ifdef USE_LUA
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/map.h>
#include <sluice/str.h>

#include "lua_int.h"

int lua_core_register_init(lua_State *L);
int lua_core_register_task(lua_State *L);

/* ---- logs ---- */

static int core_log_at(lua_State *L, int level, int msg_idx)
{
	size_t len;
	const char *msg = luaL_checklstring(L, msg_idx, &len);

	lua_log(lg.cur ? lg.cur->s : NULL, level, msg, len);
	return 0;
}

static int core_log(lua_State *L)
{
	lua_Integer level = lua_check_int(L, 1, "core.log");

	if (level < 0 || level > 7)
		return luaL_argerror(L, 1, "a log level between 0 and 7 is expected");
	return core_log_at(L, (int)level, 2);
}

static int core_debug(lua_State *L)   { return core_log_at(L, LOG_L_DEBUG, 1); }
static int core_info(lua_State *L)    { return core_log_at(L, LOG_L_INFO, 1); }
static int core_warning(lua_State *L) { return core_log_at(L, LOG_L_WARNING, 1); }
static int core_alert(lua_State *L)   { return core_log_at(L, LOG_L_ALERT, 1); }

/* ---- maps and ACLs ---- */

/* The map or ACL file <idx> names, as the runtime API knows it. */
static struct pat_ref *core_ref(lua_State *L, int idx, unsigned flag, const char *fn)
{
	const char *name = luaL_checkstring(L, idx);
	struct pat_ref *ref = pat_ref_find(name, flag);

	if (!ref)
		luaL_error(L, "'%s': unknown %s file '%s'", fn, flag == PAT_REF_MAP ? "map" : "acl",
			   name);
	return ref;
}

static int core_add_acl(lua_State *L)
{
	struct pat_ref *ref = core_ref(L, 1, PAT_REF_ACL, "add_acl");
	const char *key = luaL_checkstring(L, 2);
	char *err = NULL;

	/* as "add acl": an entry already there is not added twice */
	if (pat_ref_find_elt(ref, key) || pat_ref_set_key(ref, key, NULL))
		return 0;
	if (pat_ref_add(ref, key, NULL, &err) == -1) {
		lua_pushfstring(L, "'add_acl': %s", err ? err : "cannot add the entry");
		free(err);
		return lua_error(L);
	}
	return 0;
}

static int core_del_acl(lua_State *L)
{
	pat_ref_del_key(core_ref(L, 1, PAT_REF_ACL, "del_acl"), luaL_checkstring(L, 2));
	return 0;
}

static int core_del_map(lua_State *L)
{
	pat_ref_del_key(core_ref(L, 1, PAT_REF_MAP, "del_map"), luaL_checkstring(L, 2));
	return 0;
}

static int core_set_map(lua_State *L)
{
	struct pat_ref *ref = core_ref(L, 1, PAT_REF_MAP, "set_map");
	const char *key = luaL_checkstring(L, 2), *val = luaL_checkstring(L, 3);
	char *err = NULL;

	if (pat_ref_set_key(ref, key, val))
		return 0;
	if (pat_ref_add(ref, key, val, &err) == -1) {
		lua_pushfstring(L, "'set_map': %s", err ? err : "cannot add the entry");
		free(err);
		return lua_error(L);
	}
	return 0;
}

/* ---- time ---- */

static int core_now(lua_State *L)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	lua_createtable(L, 0, 2);
	lua_pushinteger(L, (lua_Integer)ts.tv_sec);
	lua_setfield(L, -2, "sec");
	lua_pushinteger(L, (lua_Integer)(ts.tv_nsec / 1000));
	lua_setfield(L, -2, "usec");
	return 1;
}

static const char *const core_months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
static const char *const core_days[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
static const char *const core_ldays[] = { "Monday", "Tuesday", "Wednesday", "Thursday",
					 "Friday", "Saturday", "Sunday" };

/* Reads <n> digits at *p into *v. Returns 0 or -1. */
static int date_num(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		*v = *v * 10 + **p - '0';
	}
	return 0;
}

static int date_word(const char **p, const char *const *words, int nw, char end, int *idx)
{
	for (int i = 0; i < nw; i++) {
		size_t l = strlen(words[i]);

		if (strncmp(*p, words[i], l) == 0 && (*p)[l] == end) {
			*p += l + 1;
			*idx = i;
			return 0;
		}
	}
	return -1;
}

static int date_lit(const char **p, const char *lit)
{
	size_t l = strlen(lit);

	if (strncmp(*p, lit, l))
		return -1;
	*p += l;
	return 0;
}

/* "hh:mm:ss" */
static int date_hms(const char **p, struct tm *tm)
{
	return date_num(p, 2, &tm->tm_hour) || date_lit(p, ":") ||
	       date_num(p, 2, &tm->tm_min) || date_lit(p, ":") || date_num(p, 2, &tm->tm_sec) ? -1 : 0;
}

/* The three date formats of RFC 9110 5.6.7. <which>: 0 IMF-fixdate, 1 RFC
 * 850, 2 asctime, -1 any. Returns 0 with <*t> set, or -1. */
static int date_parse(const char *p, int which, time_t *t)
{
	struct tm tm;
	int idx, ok = -1;
	const char *s = p;

	memset(&tm, 0, sizeof(tm));
	if ((which < 0 || which == 0) &&
	    date_word(&p, core_days, 7, ',', &idx) == 0 && date_lit(&p, " ") == 0 &&
	    date_num(&p, 2, &tm.tm_mday) == 0 && date_lit(&p, " ") == 0 &&
	    date_word(&p, core_months, 12, ' ', &tm.tm_mon) == 0 &&
	    date_num(&p, 4, &tm.tm_year) == 0 && date_lit(&p, " ") == 0 &&
	    date_hms(&p, &tm) == 0 && date_lit(&p, " GMT") == 0 && !*p)
		ok = 0;
	if (ok && (which < 0 || which == 1)) {
		p = s;
		memset(&tm, 0, sizeof(tm));
		if (date_word(&p, core_ldays, 7, ',', &idx) == 0 && date_lit(&p, " ") == 0 &&
		    date_num(&p, 2, &tm.tm_mday) == 0 && date_lit(&p, "-") == 0 &&
		    date_word(&p, core_months, 12, '-', &tm.tm_mon) == 0 &&
		    date_num(&p, 2, &tm.tm_year) == 0 && date_lit(&p, " ") == 0 &&
		    date_hms(&p, &tm) == 0 && date_lit(&p, " GMT") == 0 && !*p) {
			/* two-digit years: RFC 9110 reads them as within 50
			 * years of now, as HAProxy does with 1970-2069 */
			tm.tm_year += tm.tm_year < 70 ? 2000 : 1900;
			ok = 0;
		}
	}
	if (ok && (which < 0 || which == 2)) {
		p = s;
		memset(&tm, 0, sizeof(tm));
		if (date_word(&p, core_days, 7, ' ', &idx) == 0 &&
		    date_word(&p, core_months, 12, ' ', &tm.tm_mon) == 0) {
			if (*p == ' ')
				p++;
			if (*p >= '1' && *p <= '9' && (p[1] == ' ' || (p[1] >= '0' && p[1] <= '9'))) {
				tm.tm_mday = *p++ - '0';
				if (*p != ' ')
					tm.tm_mday = tm.tm_mday * 10 + *p++ - '0';
				if (date_lit(&p, " ") == 0 && date_hms(&p, &tm) == 0 &&
				    date_lit(&p, " ") == 0 && date_num(&p, 4, &tm.tm_year) == 0 && !*p)
					ok = 0;
			}
		}
	}
	if (ok || tm.tm_year < 1900)
		return -1;
	tm.tm_year -= 1900;   /* (every form gave a four-digit year) */
	if (tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -1;
	*t = timegm(&tm);
	return 0;
}

static int core_date(lua_State *L, int which)
{
	time_t t;

	if (date_parse(luaL_checkstring(L, 1), which, &t) == -1)
		lua_pushnil(L);
	else
		lua_pushinteger(L, (lua_Integer)t);
	return 1;
}

static int core_http_date(lua_State *L)    { return core_date(L, -1); }
static int core_imf_date(lua_State *L)     { return core_date(L, 0); }
static int core_rfc850_date(lua_State *L)  { return core_date(L, 1); }
static int core_asctime_date(lua_State *L) { return core_date(L, 2); }

/* ---- sleeps, yields, done ---- */

static int core_k_none(lua_State *L, int status, lua_KContext ctx)
{
	return 0;
}

/* Sleeps <sec> seconds: the run waits (its timer wakes it); while a file
 * loads or an init function runs, the process just sleeps, as HAProxy's
 * initialisation does. */
static int core_sleep_for(lua_State *L, double sec)
{
	struct lua_run *r = lua_cur(L);

	if (sec < 0)
		sec = 0;
	if (r->kind == LUA_K_BODY || r->kind == LUA_K_INIT) {
		struct timespec ts = { (time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9) };

		while (nanosleep(&ts, &ts) == -1)
			;
		return 0;
	}
	if (!(r->flags & LUA_RF_YIELD))
		return luaL_error(L, "cannot sleep in this context");
	lua_run_timer(r, sec > 0 ? sec : 1e-6);
	return lua_wait(L, LUA_W_TIMER, 0, core_k_none);
}

static int core_msleep(lua_State *L)
{
	return core_sleep_for(L, (double)lua_check_int(L, 1, "core.msleep") / 1000.0);
}

static int core_sleep(lua_State *L)
{
	return core_sleep_for(L, (double)lua_check_int(L, 1, "core.sleep"));
}

static int core_yield(lua_State *L)
{
	struct lua_run *r = lua_cur(L);

	if (!(r->flags & LUA_RF_YIELD))
		return 0;   /* nothing else may run meanwhile: a no-op, as in HAProxy */
	return lua_wait(L, LUA_W_YIELD, 0, core_k_none);
}

/* core.done([value]): the run ends here, <value> being its result. */
static int core_done(lua_State *L)
{
	struct lua_run *r = lua_cur(L);
	int n = lua_gettop(L);

	r->flags |= LUA_RF_DONE;
	if (L == r->T && lua_isyieldable(L))
		return lua_yield(L, n);
	return luaL_error(L, "core.done() called where the script cannot be stopped "
			  "(inside a coroutine of its own or a callback)");
}

static int core_set_nice(lua_State *L)
{
	lua_Integer n = lua_check_int(L, 1, "core.set_nice");

	if (n < -1024 || n > 1024)
		return luaL_argerror(L, 1, "a nice value between -1024 and 1024 is expected");
	/* one loop, first come first served: sluice has no task priorities
	 * (doc/lua.md) */
	return 0;
}

static int core_register_filter(lua_State *L)
{
	return luaL_error(L, "core.register_filter(): Lua filters are not supported by sluice "
			  "(HAProxy documents them as experimental)");
}

/* ---- addresses ---- */

/* core.parse_addr() values: a network. */
struct core_net {
	int             family;
	struct in6_addr a;     /* an IPv4 address as IPv4-mapped IPv6 */
	int             bits;  /* prefix length, on the 128-bit form */
};

#define CORE_NET "sluice.net"

static int net_parse(const char *s, struct core_net *n)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t l = slash ? (size_t)(slash - s) : strlen(s);
	struct in_addr v4;
	long bits = -1;

	if (l >= sizeof(buf))
		return -1;
	memcpy(buf, s, l);
	buf[l] = 0;
	if (slash) {
		char *end;

		bits = strtol(slash + 1, &end, 10);
		if (!slash[1] || *end || bits < 0)
			return -1;
	}
	memset(n, 0, sizeof(*n));
	if (inet_pton(AF_INET, buf, &v4) == 1) {
		if (bits > 32)
			return -1;
		n->family = AF_INET;
		n->a.s6_addr[10] = n->a.s6_addr[11] = 0xff;
		memcpy(n->a.s6_addr + 12, &v4, 4);
		n->bits = 96 + (int)(bits < 0 ? 32 : bits);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &n->a) == 1) {
		if (bits > 128)
			return -1;
		n->family = AF_INET6;
		n->bits = (int)(bits < 0 ? 128 : bits);
		return 0;
	}
	return -1;
}

static int core_parse_addr(lua_State *L)
{
	struct core_net n, *u;

	if (net_parse(luaL_checkstring(L, 1), &n) == -1) {
		lua_pushnil(L);
		return 1;
	}
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	*u = n;
	luaL_setmetatable(L, CORE_NET);
	return 1;
}

/* Whether networks <a> and <b> overlap: of the same family, the shorter
 * prefix holds the other's address. */
static int core_match_addr(lua_State *L)
{
	const struct core_net *a = luaL_checkudata(L, 1, CORE_NET);
	const struct core_net *b = luaL_checkudata(L, 2, CORE_NET);
	int bits = MIN(a->bits, b->bits), match = a->family == b->family;

	for (int i = 0; match && i < 16 && bits > 0; i++, bits -= 8) {
		unsigned mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;

		if ((a->a.s6_addr[i] ^ b->a.s6_addr[i]) & mask) {
			match = 0;
			break;
		}
	}
	lua_pushboolean(L, match);
	return 1;
}

/* ---- strings ---- */

/* core.tokenize(str, separators [, noblank]) */
static int core_tokenize(lua_State *L)
{
	size_t len, i, start = 0;
	const char *s = luaL_checklstring(L, 1, &len);
	const char *seps = luaL_checkstring(L, 2);
	int noblank = lua_toboolean(L, 3);
	lua_Integer n = 0;

	lua_newtable(L);
	for (i = 0; i <= len; i++) {
		if (i < len && !strchr(seps, s[i]))
			continue;
		if (i > start || !noblank) {
			lua_pushlstring(L, s + start, i - start);
			lua_rawseti(L, -2, ++n);
		}
		start = i + 1;
	}
	return 1;
}

/* ---- act ---- */

/* act:wake_time(ms): a yielding action is run again after <ms> at the
 * latest. */
static int act_wake_time(lua_State *L)
{
	struct lua_run *r = lua_cur(L);
	lua_Integer ms = lua_check_int(L, lua_gettop(L), "act:wake_time");
	struct lua_strm *ls;

	if (r->kind != LUA_K_ACTION || !r->s || !(ls = lua_strm_get(r->s)))
		return luaL_error(L, "act:wake_time() is for actions");
	ls->wake_at = lua_mono() + (double)(ms > 0 ? ms : 0) / 1000.0;
	return 0;
}

static void lua_act_class(lua_State *L)
{
	static const struct { const char *name; int v; } codes[] = {
		{ "CONTINUE", 0 }, { "STOP", 1 }, { "YIELD", 2 }, { "ERROR", 3 },
		{ "DONE", 4 }, { "DENY", 5 }, { "ABORT", 6 }, { "INVALID", 7 },
	};

	lua_newtable(L);
	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		lua_pushinteger(L, codes[i].v);
		lua_setfield(L, -2, codes[i].name);
	}
	lua_pushcfunction(L, act_wake_time);
	lua_setfield(L, -2, "wake_time");
	lua_setglobal(L, "act");
}

void lua_core_register(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "log", core_log }, { "Debug", core_debug }, { "Info", core_info },
		{ "Warning", core_warning }, { "Alert", core_alert },
		{ "add_acl", core_add_acl }, { "del_acl", core_del_acl },
		{ "del_map", core_del_map }, { "set_map", core_set_map },
		{ "now", core_now }, { "http_date", core_http_date }, { "imf_date", core_imf_date },
		{ "rfc850_date", core_rfc850_date }, { "asctime_date", core_asctime_date },
		{ "msleep", core_msleep }, { "sleep", core_sleep }, { "yield", core_yield },
		{ "done", core_done }, { "set_nice", core_set_nice },
		{ "parse_addr", core_parse_addr }, { "match_addr", core_match_addr },
		{ "tokenize", core_tokenize },
		{ "register_init", lua_core_register_init },
		{ "register_task", lua_core_register_task },
		{ "register_action", lua_core_register_action },
		{ "register_fetches", lua_core_register_fetches },
		{ "register_converters", lua_core_register_converters },
		{ "register_service", lua_core_register_service },
		{ "register_cli", lua_core_register_cli },
		{ "register_filter", core_register_filter },
		{ NULL, NULL }
	};
	static const char *const levels[] = { "emerg", "alert", "crit", "err", "warning",
					      "notice", "info", "debug" };

	luaL_newmetatable(L, CORE_NET);
	lua_pop(L, 1);
	lua_newtable(L);
	luaL_setfuncs(L, fns, 0);
	for (int i = 0; i < 8; i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, levels[i]);
	}
	/* one loop per process: the shared context of lua-load */
	lua_pushinteger(L, 0);
	lua_setfield(L, -2, "thread");
	lua_setglobal(L, "core");
	lua_act_class(L);
}

#endif
