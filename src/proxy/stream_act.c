/* Actions on the stream and its client socket, in the rule sets HAProxy
 * 2.6 offers them: set-log-level (the level of the request's log line, or
 * none), set-tos and set-mark (IP TOS / netfilter mark of the client's
 * packets), set-priority-class and set-priority-offset (its place in the
 * queues), set-src, set-dst and their -port forms (the addresses rules and
 * logs see), set-timeout (the stream's own server, tunnel or client
 * timeout), set-nice (the order the loop serves its events in),
 * wait-for-handshake (TLS early data), and the fetches prio_class,
 * prio_offset, last_rule_file and last_rule_line. */
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/action.h>
#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/units.h>

/* What a rule of these actions holds. */
struct strm_act {
	long             v;      /* set-log-level: 1 + a level or STRM_LOG_SILENT; tos; mark;
	                            set-timeout: which (STRM_TMO_*) */
	uint32_t         ms;     /* set-timeout: the time, when no <expr> */
	struct smp_expr *expr;   /* set-priority-*, set-src...: the sample */
};

/* The row's own value (which field the action sets). */
enum strm_act_kind {
	SA_LOGLEVEL, SA_TOS, SA_MARK, SA_PRIO_CLASS, SA_PRIO_OFFSET, SA_WAIT_HS,
	SA_SET_SRC, SA_SET_SRC_PORT, SA_SET_DST, SA_SET_DST_PORT, SA_TIMEOUT, SA_NICE,
};

static const char *const strm_tmo_names[STRM_TMO_COUNT] = {
	[STRM_TMO_SERVER] = "server", [STRM_TMO_TUNNEL] = "tunnel", [STRM_TMO_CLIENT] = "client",
};

static const char *const strm_levels[] = { "emerg", "alert", "crit", "err", "warning",
					   "notice", "info", "debug", "silent" };

/* The kind of row <kw>: its position in strm_acts[]. */
static enum strm_act_kind strm_act_kind(const struct act_kw *kw);

static int strm_is_cond(const char *w)
{
	return strcmp(w, "if") == 0 || strcmp(w, "unless") == 0;
}

/* The sample expression <w> of <a>. */
static int strm_act_parse_expr(struct act_parse *p, struct strm_act *a, const char *w)
{
	char *err = NULL;

	a->expr = xcalloc(1, sizeof(*a->expr));
	if (smp_expr_parse(w, a->expr, NULL, &err) == -1) {
		act_alert(p, "%s", err);
		free(err);
		return -1;
	}
	return 0;
}

/* set-timeout server|tunnel|client <time>|<expr>: <w> is the first word.
 * As in HAProxy, only a proxy that may be a backend takes it (the server
 * and tunnel timeouts are the backend's); "client" is HAProxy 2.8's. */
static int strm_act_parse_timeout(struct act_parse *p, struct strm_act *a, const char *w)
{
	const char *err = NULL, *v;

	for (a->v = 0; a->v < STRM_TMO_COUNT && strcmp(w, strm_tmo_names[a->v]); a->v++)
		;
	if (a->v == STRM_TMO_COUNT) {
		act_alert(p, "unknown timeout '%s' (expects server, tunnel or client)", w);
		return -1;
	}
	if (!(p->px->cap & PR_CAP_BE)) {
		act_alert(p, "only possible in a proxy that may be a backend (the timeouts it sets "
			  "are the backend's)");
		return -1;
	}
	if (p->idx >= p->argc || strm_is_cond(p->argv[p->idx])) {
		act_alert(p, "expects %s", p->kw->usage);
		return -1;
	}
	v = p->argv[p->idx++];
	if (parse_time_ms(v, 1, &a->ms, &err) == 0) {
		if (!a->ms) {
			act_alert(p, "a timeout of 0 would change nothing; expects a time above 0");
			return -1;
		}
		return 0;
	}
	return strm_act_parse_expr(p, a, v);
}

static int strm_act_parse(struct act_parse *p)
{
	struct strm_act *a = xcalloc(1, sizeof(*a));
	enum strm_act_kind k = strm_act_kind(p->kw);
	const char *w = p->idx < p->argc ? p->argv[p->idx] : NULL;

	p->priv = a;
	if (!w || strm_is_cond(w)) {
		if (!(p->where & ACT_W_HTTP_ALL) && k >= SA_SET_SRC && k <= SA_SET_DST_PORT)
			cfg_alert(p->ctx, "action '%s' expects a sample expression", p->argv[0]);
		else
			act_alert(p, "expects %s", p->kw->usage);
		return -1;
	}
	p->idx++;
	switch (k) {
	case SA_TIMEOUT:
		return strm_act_parse_timeout(p, a, w);
	case SA_LOGLEVEL:
		for (a->v = 0; a->v < 9 && strcmp(w, strm_levels[a->v]); a->v++)
			;
		if (a->v == 9) {
			act_alert(p, "unknown log level '%s' (expects emerg, alert, crit, err, warning, "
				  "notice, info, debug or silent)", w);
			return -1;
		}
		a->v = a->v == 8 ? STRM_LOG_SILENT : a->v + 1;
		return 0;
	case SA_NICE: {
		const char *err;

		/* out of range: bounded, as HAProxy does */
		if (parse_int(w, LONG_MIN, LONG_MAX, &a->v, &err) == -1) {
			act_alert(p, "expects %s, got '%s'", p->kw->usage, w);
			return -1;
		}
		a->v = a->v < -1024 ? -1024 : a->v > 1024 ? 1024 : a->v;
		return 0;
	}
	case SA_TOS:
	case SA_MARK: {
		char *end;
		unsigned long long v = strtoull(w, &end, 0);

		if (*end || end == w || w[0] == '-' || v > (k == SA_TOS ? 255ULL : 0xffffffffULL)) {
			act_alert(p, "expects %s, got '%s'", p->kw->usage, w);
			return -1;
		}
		a->v = (long)v;
		return 0;
	}
	default:
		return strm_act_parse_expr(p, a, w);
	}
}

static void strm_act_free(void *priv)
{
	struct strm_act *a = priv;

	if (!a)
		return;
	smp_expr_free(a->expr);
	free(a->expr);
	free(a);
}

/* set-log-level, set-tos, set-mark: one row each, one executor reading the
 * row's kind through its rule's value */
static void strm_act_loglevel(void *priv, struct stream *s, unsigned where)
{
	s->log_level = (signed char)((const struct strm_act *)priv)->v;
}

static void strm_act_tos(void *priv, struct stream *s, unsigned where)
{
	stream_set_tos(s, (int)((const struct strm_act *)priv)->v);
}

static void strm_act_mark(void *priv, struct stream *s, unsigned where)
{
	stream_set_mark(s, (int)(unsigned)((const struct strm_act *)priv)->v);
}

/* set-priority-class / -offset: the sample as an integer (none: unchanged) */
static void strm_act_prio(const struct strm_act *a, struct stream *s, int offset)
{
	struct sample smp;

	memset(&smp, 0, sizeof(smp));
	if (smp_expr_eval(a->expr, s, &smp) && smp_cast(&smp, SMP_T_SINT))
		stream_set_priority(s, offset, smp.u.sint < -1000000 ? -1000000 :
				    smp.u.sint > 1000000 ? 1000000 : (long)smp.u.sint);
}

static void strm_act_prio_class(void *priv, struct stream *s, unsigned where)
{
	strm_act_prio(priv, s, 0);
}

static void strm_act_prio_offset(void *priv, struct stream *s, unsigned where)
{
	strm_act_prio(priv, s, 1);
}

/* set-src|set-dst|set-src-port|set-dst-port <expr>. As in HAProxy, an
 * address keeps the port (0 when the family has none) and a port keeps the
 * address (a socket without ports becomes 0.0.0.0 first); a sample that is
 * no address (resp. port) changes nothing. */
static void strm_act_set_addr(const struct strm_act *a, struct stream *s, int dst, int port_only)
{
	struct sockaddr_storage *ss = dst ? (struct sockaddr_storage *)stream_dst(s) : &s->cli_addr;
	struct sample smp = { 0 };
	int port;

	if (!ss || !smp_expr_eval(a->expr, s, &smp))
		return;
	if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6) {
		memset(ss, 0, sizeof(*ss));
		ss->ss_family = AF_INET;
	}
	port = addr_get_port(ss);
	if (port_only) {
		if (smp_cast(&smp, SMP_T_SINT) && smp.u.sint >= 0 && smp.u.sint <= 65535)
			addr_set_port(ss, (uint16_t)smp.u.sint);
		return;
	}
	if (smp.type == SMP_T_STR || smp.type == SMP_T_BIN) {
		char ip[64];
		size_t n = MIN(smp.u.str.len, sizeof(ip) - 1);

		memcpy(ip, smp.u.str.p, n);
		if (!smp_parse_ip(ip, n, &smp))
			return;
	}
	if (smp.type == SMP_T_IPV4) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		memset(ss, 0, sizeof(*ss));
		in->sin_family = AF_INET;
		in->sin_addr = smp.u.ipv4;
	} else if (smp.type == SMP_T_IPV6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		memset(ss, 0, sizeof(*ss));
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = smp.u.ipv6;
	} else {
		return;
	}
	addr_set_port(ss, (uint16_t)port);
}

static void strm_act_set_src(void *priv, struct stream *s, unsigned where)
{
	strm_act_set_addr(priv, s, 0, 0);
}

static void strm_act_set_src_port(void *priv, struct stream *s, unsigned where)
{
	strm_act_set_addr(priv, s, 0, 1);
}

static void strm_act_set_dst(void *priv, struct stream *s, unsigned where)
{
	strm_act_set_addr(priv, s, 1, 0);
}

static void strm_act_set_dst_port(void *priv, struct stream *s, unsigned where)
{
	strm_act_set_addr(priv, s, 1, 1);
}

/* set-timeout: the time, or the sample as milliseconds (none, or not above
 * 0: unchanged). */
static void strm_act_timeout(void *priv, struct stream *s, unsigned where)
{
	const struct strm_act *a = priv;
	struct sample smp = { 0 };
	long long ms = a->ms;

	if (a->expr) {
		if (!smp_expr_eval(a->expr, s, &smp) || !smp_cast(&smp, SMP_T_SINT))
			return;
		ms = smp.u.sint;
	}
	if (ms > 0)
		s->tmo[a->v] = ms > INT32_MAX ? INT32_MAX : (uint32_t)ms;
}

/* ---- set-nice ---- */

/* The libev priority of nice <nice>: -1024 the highest (EV_MAXPRI), 1024 the
 * lowest (EV_MINPRI), 0 the default priority. */
static int strm_nice_prio(int nice)
{
	long p = lround(-(double)nice * EV_MAXPRI / 1024.0);

	return p < EV_MINPRI ? EV_MINPRI : p > EV_MAXPRI ? EV_MAXPRI : (int)p;
}

/* A watcher's priority may only change while it is stopped and not
 * pending: it is stopped and started again (an ev_timer when <timer>,
 * keeping what is left of its time; else an ev_io), what was pending fed
 * again. */
static void strm_watcher_prio(ev_watcher *w, int timer, int pri)
{
	int active, pending;

	if (ev_priority(w) == pri)
		return;
	active = ev_is_active(w);
	pending = ev_clear_pending(global.loop, w);
	if (active && timer)
		ev_timer_stop(global.loop, (ev_timer *)w);
	else if (active)
		ev_io_stop(global.loop, (ev_io *)w);
	ev_set_priority(w, pri);
	if (active && timer)
		ev_timer_start(global.loop, (ev_timer *)w);
	else if (active)
		ev_io_start(global.loop, (ev_io *)w);
	if (pending)
		ev_feed_event(global.loop, w, pending);
}

void stream_nice_apply(struct stream *s)
{
	int pri = strm_nice_prio(s->nice);

	strm_watcher_prio((ev_watcher *)&s->cli.io, 0, pri);
	if (s->srv.fd >= 0)
		strm_watcher_prio((ev_watcher *)&s->srv.io, 0, pri);
	strm_watcher_prio((ev_watcher *)&s->timer, 1, pri);
}

void stream_set_nice(struct stream *s, int nice)
{
	s->nice = (short)(nice < -1024 ? -1024 : nice > 1024 ? 1024 : nice);
	s->tcp_flags |= STRM_F_NICE;
	stream_nice_apply(s);
}

static void strm_act_nice(void *priv, struct stream *s, unsigned where)
{
	stream_set_nice(s, (int)((const struct strm_act *)priv)->v);
}

/* wait-for-handshake: a request that came as TLS early data (0-RTT) is
 * held until the client's handshake ends, so that nothing a replayed
 * request would cause happens before the client proved it started the
 * session. The handshake ends on a read of the client's socket, which
 * steps the stream: the rule runs again then (STRM_F_WOKEN set here makes
 * that step resume it). An HTTP/2 connection never hands early data to its
 * streams (src/http/h2.c), so this only waits on HTTP/1. */
static int strm_act_noarg(struct act_parse *p)
{
	return 0;
}

static enum act_ret strm_act_wait_hs(void *priv, struct stream *s, unsigned where,
                                     struct act_res *res)
{
	if (!(s->cli.flags & CO_F_SSL_EARLY) || !res->can_yield)
		return ACT_RET_CONT;
	s->tcp_flags |= STRM_F_WOKEN;
	return ACT_RET_YIELD;
}

#define W_TOSMARK (ACT_W_TCP_ALL | ACT_W_HTTP_REQ | ACT_W_HTTP_RES)
#define W_ADDR    (ACT_W_TCP_CONN | ACT_W_TCP_SESS | ACT_W_TCP_REQ | ACT_W_HTTP_REQ)

static const struct act_kw strm_acts[] = {
	[SA_LOGLEVEL] = { "set-log-level", 0, ACT_W_TCP_REQ | ACT_W_TCP_RES | ACT_W_HTTP_REQ |
			  ACT_W_HTTP_RES, strm_act_parse, strm_act_loglevel, strm_act_free,
			  "a log level (emerg ... debug) or silent", NULL },
	[SA_TOS] = { "set-tos", 0, W_TOSMARK, strm_act_parse, strm_act_tos, strm_act_free,
		     "a TOS value, 0 to 255 (decimal or 0x hex)", NULL },
	[SA_MARK] = { "set-mark", 0, W_TOSMARK, strm_act_parse, strm_act_mark, strm_act_free,
		      "a mark, 0 to 4294967295 (decimal or 0x hex)", NULL },
	[SA_PRIO_CLASS] = { "set-priority-class", 0, ACT_W_TCP_REQ | ACT_W_HTTP_REQ,
			    strm_act_parse, strm_act_prio_class, strm_act_free,
			    "a sample expression (an integer, -2047..2047)", NULL },
	[SA_PRIO_OFFSET] = { "set-priority-offset", 0, ACT_W_TCP_REQ | ACT_W_HTTP_REQ,
			     strm_act_parse, strm_act_prio_offset, strm_act_free,
			     "a sample expression (an integer, -524287..524287 ms)", NULL },
	[SA_WAIT_HS] = { "wait-for-handshake", 0, ACT_W_HTTP_REQ, strm_act_noarg, NULL, NULL,
			 "no argument", strm_act_wait_hs },
	[SA_SET_SRC] = { "set-src", 0, W_ADDR, strm_act_parse, strm_act_set_src, strm_act_free,
			 "<expr>", NULL },
	[SA_SET_SRC_PORT] = { "set-src-port", 0, W_ADDR, strm_act_parse, strm_act_set_src_port,
			      strm_act_free, "<expr>", NULL },
	[SA_SET_DST] = { "set-dst", 0, W_ADDR, strm_act_parse, strm_act_set_dst, strm_act_free,
			 "<expr>", NULL },
	[SA_SET_DST_PORT] = { "set-dst-port", 0, W_ADDR, strm_act_parse, strm_act_set_dst_port,
			      strm_act_free, "<expr>", NULL },
	[SA_TIMEOUT] = { "set-timeout", 0, ACT_W_HTTP_REQ, strm_act_parse, strm_act_timeout,
			 strm_act_free, "server|tunnel|client <time>|<expr>", NULL },
	[SA_NICE] = { "set-nice", 0, ACT_W_TCP_REQ | ACT_W_TCP_RES | ACT_W_HTTP_REQ | ACT_W_HTTP_RES,
		      strm_act_parse, strm_act_nice, strm_act_free,
		      "a nice value, -1024 (first served) to 1024 (last)", NULL },
};

static enum strm_act_kind strm_act_kind(const struct act_kw *kw)
{
	return (enum strm_act_kind)(kw - strm_acts);
}

/* prio_class, prio_offset */
static int fetch_prio(const struct smp_arg *a, struct sample *smp, struct stream *s,
                      const void *priv)
{
	if (!s)
		return 0;
	return smp_set_int(smp, priv ? s->prio_offset : s->prio_class);
}

/* last_rule_file, last_rule_line: where the last rule that ended its set
 * (a final action) was written; none before such a rule ran. */
static int fetch_last_rule(const struct smp_arg *a, struct sample *smp, struct stream *s,
                           const void *priv)
{
	if (!s || !s->last_rule)
		return 0;
	if (priv)
		return smp_set_int(smp, s->last_rule->line);
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = s->last_rule->file;
	smp->u.str.len = strlen(s->last_rule->file);
	return 1;
}

static const struct smp_fetch_kw strm_fetches[] = {
	{ "last_rule_file", fetch_last_rule, { 0 }, 0, SMP_T_STR, SMP_USE_L4, NULL, NULL },
	{ "last_rule_line", fetch_last_rule, { 0 }, 0, SMP_T_SINT, SMP_USE_L4, NULL, "line" },
	{ "prio_class",  fetch_prio, { 0 }, 0, SMP_T_SINT, SMP_USE_L4, NULL, NULL },
	{ "prio_offset", fetch_prio, { 0 }, 0, SMP_T_SINT, SMP_USE_L4, NULL, "offset" },
};

SLUICE_INIT(stream_act_register)
{
	act_register(strm_acts, ARRAY_SIZE(strm_acts));
	smp_register_fetches(strm_fetches, ARRAY_SIZE(strm_fetches));
}
