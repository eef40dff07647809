/* Peer sessions (peers.h): HAProxy's peers protocol 2.1 over TCP with the
 * peers of each section: handshake, table definitions, updates pushed from
 * each table's update order and acknowledged, full resynchronisation
 * (teaching) on request, heartbeats, reconnection with backoff; the tables
 * learnt at start (from the process being replaced, then from a peer), and
 * handed over to the new process at a soft stop. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/peers.h>
#include <sluice/ticks.h>

#include "peers_int.h"


/* Peer sessions are long-lived: TCP keep-alive on, as they had before. */
static const struct conn_tcp_opts peer_tcp_opts = { .keepalive = 1 };
static struct {
	ev_prepare flush;       /* pushes and sends what this loop iteration made */
	int        flush_init;
	int        started;
	int        stopping;    /* soft stop: no new session but the hand-over */
	int        closing;     /* exit: every session goes, nothing restarts */
	void     (*done)(void); /* peers_busy()'s caller, told when the hand-over ends */
} pr;

/* ---- small helpers ---- */

static void ps_log(const struct peers_sec *s, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void ps_log(const struct peers_sec *s, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_event_px(&s->loggers, level, "peers %s: %s", s->name, msg);
}

/* Who the session is with, for the logs. */
static const char *ps_who(const struct peer_sess *ps, char *buf, size_t size)
{
	char a[64];

	if (ps->peer && ps->handover)
		snprintf(buf, size, "the new process (local peer '%s')", ps->peer->name);
	else if (ps->peer && ps->peer->local)
		snprintf(buf, size, "the old process (local peer '%s')", ps->peer->name);
	else if (ps->peer)
		snprintf(buf, size, "peer '%s'", ps->peer->name);
	else
		snprintf(buf, size, "%s", addr_to_str(&ps->from, a, sizeof(a)));
	return buf;
}

const char *peers_status_str(int code)
{
	switch (code) {
	case PEER_ST_OK: return "handshake succeeded";
	case PEER_ST_TRYAGAIN: return "try again later";
	case PEER_ST_ERRPROTO: return "protocol error";
	case PEER_ST_ERRVER: return "bad protocol version";
	case PEER_ST_ERRHOST: return "local peer name mismatch";
	case PEER_ST_ERRPEER: return "unknown peer";
	}
	return "unknown status";
}

const char *peers_ls_str(enum peer_ls ls)
{
	static const char *const n[] = {
		[PEER_LS_NONE] = "NONE", [PEER_LS_CONN] = "CONN", [PEER_LS_HSHK] = "HSHK",
		[PEER_LS_ESTA] = "ESTA", [PEER_LS_RETR] = "RETR", [PEER_LS_PROT] = "PROT",
		[PEER_LS_VERS] = "VERS", [PEER_LS_NAME] = "NAME", [PEER_LS_UKNP] = "UKNP",
	};

	return n[ls];
}

static enum peer_ls ls_of_status(int code)
{
	switch (code) {
	case PEER_ST_OK: return PEER_LS_ESTA;
	case PEER_ST_TRYAGAIN: return PEER_LS_RETR;
	case PEER_ST_ERRVER: return PEER_LS_VERS;
	case PEER_ST_ERRHOST: return PEER_LS_NAME;
	case PEER_ST_ERRPEER: return PEER_LS_UKNP;
	}
	return PEER_LS_PROT;
}

static void flush_soon(void);
static void sess_close(struct peer_sess *ps, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void sess_want(struct peer_sess *ps);
static void sess_arm(struct peer_sess *ps);
static void learn_pick(struct peers_sec *s);
static void handover_check(struct peers_sec *s);
static void idle_check(void);

/* ---- sessions: life and death ---- */

static void sess_io_cb(struct ev_loop *loop, ev_io *w, int revents);
static void sess_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

static struct peer_sess *sess_new(struct peers_sec *s)
{
	struct peer_sess *ps = xcalloc(1, sizeof(*ps));

	ps->sec = s;
	ps->c.fd = -1;
	ps->in = xcalloc(1, PEER_MSG_MAX + 64);
	ps->tbl = xcalloc((size_t)s->ntables + 1, sizeof(*ps->tbl));
	for (int i = 0; i < s->ntables; i++)
		ps->tbl[i].cursor.kind = STK_UPD_CURSOR;
	ps->cur_out = -1;
	ps->started = ps->last_rx = ps->last_tx = tick_ev_now();
	ev_init(&ps->timer, sess_timer_cb);
	ps->timer.data = ps;
	ps->next = s->sessions;
	s->sessions = ps;
	return ps;
}

/* Schedules the next attempt to connect to remote peer <p>: a random
 * 50-2050 ms (two peers that lost each other do not call at once), plus a
 * backoff doubling from 500 ms with each failure in a row, up to 5 s. */
static void peer_schedule(struct peer *p)
{
	double d = 0.05 + (double)(random() % 2001) / 1000.0;

	if (p->local || pr.stopping || p->sec->disabled || !global.loop)
		return;
	if (p->fails)
		d += MIN(PEERS_RETRY_MAX, 0.5 * (double)(1u << MIN(p->fails - 1, 8u)));
	ev_timer_stop(global.loop, &p->retry);
	ev_timer_set(&p->retry, d, 0.);
	ev_timer_start(global.loop, &p->retry);
}

static void sess_close(struct peer_sess *ps, int level, const char *fmt, ...)
{
	struct peers_sec *s = ps->sec;
	struct peer *p = ps->peer;
	struct peer_sess **pp;
	int established = ps->st == PS_EST || ps->st == PS_CLOSING;

	if (fmt) {
		char msg[384], who[128];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		ps_log(s, level, "session with %s closed: %s", ps_who(ps, who, sizeof(who)), msg);
	}
	for (pp = &s->sessions; *pp; pp = &(*pp)->next)
		if (*pp == ps) {
			*pp = ps->next;
			break;
		}
	for (int i = 0; i < s->ntables; i++)
		stk_upd_unlink(&ps->tbl[i].cursor);
	if (global.loop)
		ev_timer_stop(global.loop, &ps->timer);
	conn_close(&ps->c);
	if (ps->li)
		listener_release(ps->li);
	if (s->learn == ps) {
		s->learn = NULL;
		learn_pick(s);
	}
	if (s->handover == ps) {
		s->handover = NULL;
		handover_check(s);
	}
	if (p && p->sess == ps) {
		p->sess = NULL;
		if (!established && !ps->li)
			p->fails++;
		peer_schedule(p);
	}
	dstr_free(&ps->out);
	free(ps->in);
	free(ps->tbl);
	free(ps->rt);
	free(ps);
	idle_check();
}

/* A failure the peer is told of: error message <err> (-1: none), then the
 * session closes once it is sent. */
static void sess_fail(struct peer_sess *ps, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sess_fail(struct peer_sess *ps, int err, const char *fmt, ...)
{
	char msg[384], who[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ps_log(ps->sec, LOG_L_WARNING, "session with %s: %s; closing", ps_who(ps, who, sizeof(who)),
	       msg);
	if (ps->peer && ps->st == PS_EST)
		ps->peer->proto_err++;
	if (err >= 0)
		peer_msg_put_ctrl(&ps->out, PEER_C_ERROR, (uint8_t)err);
	ps->st = PS_CLOSING;
	ps->started = tick_ev_now();
	sess_arm(ps);
	sess_want(ps);
}

static void sess_want(struct peer_sess *ps)
{
	int ev = 0;

	if (ps->c.fd < 0)
		return;
	/* a peer that does not read what its messages make us answer is not
	 * read either (what we queue stays bounded) */
	if (ps->st != PS_CLOSING && ps->st != PS_CONNECTING &&
	    ps->out.len - ps->out_off < PEERS_OUT_MAX)
		ev |= EV_READ;
	if (ps->st == PS_CONNECTING || ps->out.len > ps->out_off)
		ev |= EV_WRITE;
	conn_want(&ps->c, ev);
}

/* The session's next deadline: the handshake's, a heartbeat to send, the
 * peer's silence, or the end of a close. */
static void sess_arm(struct peer_sess *ps)
{
	ev_tstamp now = tick_ev_now(), at;

	switch (ps->st) {
	case PS_EST:
		at = MIN(ps->last_tx + PEERS_HEARTBEAT, ps->last_rx + PEERS_DEAD);
		break;
	case PS_CLOSING:
		at = ps->started + 1.0;
		break;
	default:
		at = ps->started + PEERS_HELLO_TIMEOUT;
	}
	ev_timer_stop(global.loop, &ps->timer);
	ev_timer_set(&ps->timer, at > now ? at - now : 0.001, 0.);
	ev_timer_start(global.loop, &ps->timer);
}

/* Sends what is queued. Returns 0, or -1 when the session was closed. */
static int sess_flush(struct peer_sess *ps)
{
	while (ps->out.len > ps->out_off) {
		ssize_t n = send(ps->c.fd, ps->out.p + ps->out_off, ps->out.len - ps->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		if (n <= 0) {
			sess_close(ps, LOG_L_NOTICE, "send: %s", strerror(errno));
			return -1;
		}
		ps->out_off += (size_t)n;
		ps->last_tx = tick_ev_now();
	}
	if (ps->out_off == ps->out.len) {
		ps->out.len = ps->out_off = 0;
		if (ps->st == PS_CLOSING) {
			sess_close(ps, 0, NULL);
			return -1;
		}
	} else if (ps->out_off > PEERS_OUT_HWM) {
		dstr_consume(&ps->out, ps->out_off);
		ps->out_off = 0;
	}
	sess_want(ps);
	return 0;
}

/* ---- pushing updates ---- */

/* The key of <ts> as the wire carries it, into <buf>; returns its length. */
static size_t key_to_wire(const struct stktable *t, const struct stksess *ts, unsigned char *buf)
{
	uint32_t u;

	switch (t->type) {
	case STK_K_INT:
		memcpy(&u, ts->key, 4);
		u = htonl(u);
		memcpy(buf, &u, 4);
		return 4;
	case STK_K_STR:
		memcpy(buf, ts->key, ts->klen);
		return ts->klen;
	default:
		memcpy(buf, ts->key, t->key_size);
		return t->key_size;
	}
}

/* Queues the update of entry <ts> of table <i> to <ps>. */
static void push_entry(struct peer_sess *ps, int i, struct stksess *ts, int timed)
{
	struct peers_table *pt = &ps->sec->tables[i];
	struct ps_table *st = &ps->tbl[i];
	struct stktable *t = pt->t;
	unsigned char key[STK_KEY_MAX + 4];
	struct peer_upd u;
	uint64_t now = tick_now_ms();

	memset(&u, 0, sizeof(u));
	if (ps->cur_out != i) {
		peer_msg_put_define(&ps->out, &pt->def);
		ps->cur_out = i;
	}
	u.key = key;
	u.klen = key_to_wire(t, ts, key);
	u.id = ts->upd.id;
	timed = timed && ps->minor >= 1;
	if (st->last_pushed && ts->upd.id == st->last_pushed + 1)
		u.type = timed ? PEER_STKT_INCUPDATE_TIMED : PEER_STKT_INCUPDATE;
	else
		u.type = timed ? PEER_STKT_UPDATE_TIMED : PEER_STKT_UPDATE;
	if (timed)
		u.expire = t->expire && ts->exp > now ? (uint32_t)MIN(ts->exp - now, UINT32_MAX) : 0;
	for (int dt = 0; dt < STK_DT_COUNT; dt++) {
		unsigned bit = (unsigned)stk_dt_wire(dt);

		if (t->off[dt] < 0)
			continue;
		for (unsigned e = 0; e < t->nb[dt]; e++) {
			struct peer_val *v = peer_upd_val(&u, bit, e);
			int64_t x;

			if (stk_dt_is_rate(dt))
				stk_rate_get_at(t, ts, dt, e, &v->elapsed, &v->curr, &v->prev);
			else if (stk_data_get_at(t, ts, dt, e, &x))
				v->v = dt == STK_DT_SERVER_ID ? (uint32_t)x : (uint64_t)MAX(x, 0);
		}
	}
	peer_msg_put_update(&ps->out, &pt->def, &u);
	st->last_pushed = ts->upd.id;
}

/* Queues the updates <ps> has not received yet, until PEERS_OUT_HWM bytes
 * wait: one entry of each table in turn. A teaching sends every entry, then
 * "finished" (we are up to date) or "partial". */
static void sess_push(struct peer_sess *ps)
{
	struct peers_sec *s = ps->sec;
	uint64_t now = tick_now_ms();
	int progress = 1;

	if (ps->st != PS_EST || (ps->peer && ps->peer->local && !ps->handover))
		return;
	while (progress && ps->out.len - ps->out_off < PEERS_OUT_HWM) {
		progress = 0;
		for (int i = 0; i < s->ntables; i++) {
			struct ps_table *st = &ps->tbl[i];
			struct stksess *ts;

			if (!st->cursor.next)
				continue;
			/* skip what we learnt from peers (they all had it) and
			 * what expired, unless we teach */
			while ((ts = stk_upd_next(s->tables[i].t, &st->cursor)) &&
			       ((!st->teaching && (ts->flags & STKSESS_F_REMOTE)) ||
				(ts->exp && ts->exp <= now)))
				;
			if (!ts) {
				st->teaching = 0;
				continue;
			}
			push_entry(ps, i, ts, st->teaching);
			progress = 1;
		}
	}
	if (ps->teach == 1) {
		for (int i = 0; i < s->ntables; i++)
			if (ps->tbl[i].teaching)
				return;
		peer_msg_put_ctrl(&ps->out, PEER_C_CTRL, s->resync == PEERS_RS_DONE ?
				  PEER_CTRL_RESYNC_FINISHED : PEER_CTRL_RESYNC_PARTIAL);
		ps->teach = 2;
	}
}

/* Queues the acknowledgements of what came since the last ones. */
static void sess_acks(struct peer_sess *ps)
{
	for (size_t i = 0; i < ps->nrt; i++) {
		struct ps_rtable *rt = &ps->rt[i];

		if (!rt->got)
			continue;
		peer_msg_put_ack(&ps->out, rt->id, rt->last_get);
		rt->last_acked = rt->last_get;
		rt->got = 0;
	}
}

/* Starts sending every entry of every table to <ps>. */
static void sess_teach(struct peer_sess *ps)
{
	for (int i = 0; i < ps->sec->ntables; i++) {
		stk_upd_rewind(ps->sec->tables[i].t, &ps->tbl[i].cursor);
		ps->tbl[i].teaching = 1;
	}
	ps->teach = 1;
}

static void flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	ev_prepare_stop(loop, w);
	for (struct peers_sec *s = peers_sections; s; s = s->next)
		for (struct peer_sess *ps = s->sessions, *next; ps; ps = next) {
			next = ps->next;
			if (ps->st == PS_EST) {
				sess_acks(ps);
				sess_push(ps);
			}
			if (ps->c.fd >= 0 && ps->st != PS_CONNECTING)
				sess_flush(ps);
		}
	idle_check();
}

/* Sends what is queued, and pushes, before the loop sleeps again. */
static void flush_soon(void)
{
	if (!global.loop)
		return;
	if (!pr.flush_init) {
		ev_prepare_init(&pr.flush, flush_cb);
		pr.flush_init = 1;
	}
	if (!ev_is_active(&pr.flush))
		ev_prepare_start(global.loop, &pr.flush);
}

void peers_table_updated(struct stktable *t)
{
	(void)t;
	flush_soon();
}

/* ---- learning at start ---- */

static void resync_cb(struct ev_loop *loop, ev_timer *w, int revents);

static void resync_set(struct peers_sec *s, enum peers_rs rs)
{
	s->resync = rs;
	ev_timer_stop(global.loop, &s->resync_timer);
	if (rs == PEERS_RS_DONE)
		return;
	ev_timer_init(&s->resync_timer, resync_cb, PEERS_RESYNC_WAIT, 0.);
	s->resync_timer.data = s;
	ev_timer_start(global.loop, &s->resync_timer);
	if (rs == PEERS_RS_REMOTE)
		learn_pick(s);
}

static void resync_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct peers_sec *s = w->data;

	if (s->learn && tick_ev_now() - s->learn->last_rx < PEERS_RESYNC_WAIT) {
		/* a teacher is still talking */
		ev_timer_set(w, PEERS_RESYNC_WAIT, 0.);
		ev_timer_start(loop, w);
		return;
	}
	if (s->resync == PEERS_RS_LOCAL) {
		ps_log(s, LOG_L_NOTICE, "no table came from the old process within %.0f s; "
		       "asking the peers", PEERS_RESYNC_WAIT);
		resync_set(s, PEERS_RS_REMOTE);
	} else {
		ps_log(s, LOG_L_NOTICE, "no peer taught the tables within %.0f s: considered "
		       "up to date", PEERS_RESYNC_WAIT);
		resync_set(s, PEERS_RS_DONE);
	}
}

/* Asks an established remote peer, chosen at random among those that did
 * not answer "partial", for a full resynchronisation. */
static void learn_pick(struct peers_sec *s)
{
	struct peer_sess *c[64];
	int n = 0;

	if (s->resync != PEERS_RS_REMOTE || s->learn || pr.stopping)
		return;
	for (struct peer_sess *ps = s->sessions; ps && n < (int)ARRAY_SIZE(c); ps = ps->next)
		if (ps->st == PS_EST && ps->peer && !ps->peer->local && !ps->peer->partial)
			c[n++] = ps;
	if (!n)
		return;
	s->learn = c[random() % n];
	s->learn->learning = 1;
	peer_msg_put_ctrl(&s->learn->out, PEER_C_CTRL, PEER_CTRL_RESYNC_REQ);
	flush_soon();
}

/* <ps> said it sent everything: "finished" (<full>) or "partial". */
static void learn_end(struct peer_sess *ps, int full)
{
	struct peers_sec *s = ps->sec;
	char who[128];

	peer_msg_put_ctrl(&ps->out, PEER_C_CTRL, PEER_CTRL_RESYNC_CONFIRM);
	ps->learning = 0;
	if (s->resync != PEERS_RS_DONE || (ps->peer && ps->peer->local))
		ps_log(s, LOG_L_NOTICE, "tables learnt from %s%s", ps_who(ps, who, sizeof(who)),
		       full ? "" : ", which was not up to date itself");
	if (s->resync == PEERS_RS_DONE)
		return;
	if (full) {
		if (s->learn == ps)
			s->learn = NULL;
		resync_set(s, PEERS_RS_DONE);
		return;
	}
	if (ps->peer && !ps->peer->local)
		ps->peer->partial = 1;
	if (s->learn == ps) {
		s->learn = NULL;
		learn_pick(s);
	}
}

/* ---- the handshake ---- */

static void sess_established(struct peer_sess *ps)
{
	struct peers_sec *s = ps->sec;
	struct peer *p = ps->peer;
	char who[128];

	ps->st = PS_EST;
	ps->last_rx = ps->last_tx = tick_ev_now();
	p->last_status = PEER_LS_ESTA;
	p->last_hshk = tick_ev_now();
	p->fails = 0;
	p->new_conn++;
	ps_log(s, LOG_L_NOTICE, "session with %s established (%s)", ps_who(ps, who, sizeof(who)),
	       ps->li ? "incoming" : "outgoing");
	if (ps->handover) {
		sess_teach(ps);
	} else if (!p->local) {
		/* from what it acknowledged, in a former session or none */
		for (int i = 0; i < s->ntables; i++)
			stk_upd_seek(s->tables[i].t, &ps->tbl[i].cursor, p->acked[i]);
		learn_pick(s);
	}
	sess_arm(ps);
	flush_soon();
}

/* The hello of an accepted session. Returns the bytes used, 0 (more
 * needed) or -1 (refused: the status is queued). */
static int sess_hello(struct peer_sess *ps, const char *p, size_t n)
{
	struct peers_sec *s = ps->sec;
	struct peer_hello h;
	struct peer *peer;
	int status = 0, used = peer_hello_parse(p, n, &h, &status);
	char who[128];

	if (used == 0)
		return 0;
	if (used > 0 && strcmp(h.remote, s->local->name) != 0)
		status = PEER_ST_ERRHOST;
	peer = NULL;
	if (used > 0 && !status) {
		for (peer = s->peers; peer && strcmp(peer->name, h.local); peer = peer->next)
			;
		if (!peer)
			status = PEER_ST_ERRPEER;
		else if (pr.stopping)
			status = PEER_ST_TRYAGAIN;
	}
	if (status) {
		const char *why = status == PEER_ST_ERRPROTO ? "it does not speak the peers protocol" :
				  status == PEER_ST_ERRVER ? "it speaks another protocol version" :
				  status == PEER_ST_ERRHOST ? "it calls for another peer" :
				  status == PEER_ST_ERRPEER ? "it is not a peer of this section" :
				  "stopping";

		if (status == PEER_ST_ERRVER)
			ps_log(s, LOG_L_WARNING, "connection from %s refused: %s (version %d.%d; "
			       "2.0 or 2.1 expected)", ps_who(ps, who, sizeof(who)), why, h.major,
			       h.minor);
		else if (status == PEER_ST_ERRHOST)
			ps_log(s, LOG_L_WARNING, "connection from %s refused: %s ('%s', we are '%s')",
			       ps_who(ps, who, sizeof(who)), why, h.remote, s->local->name);
		else if (status == PEER_ST_ERRPEER)
			ps_log(s, LOG_L_WARNING, "connection from %s refused: %s ('%s')",
			       ps_who(ps, who, sizeof(who)), why, h.local);
		else
			ps_log(s, LOG_L_WARNING, "connection from %s refused: %s",
			       ps_who(ps, who, sizeof(who)), why);
		dstr_printf(&ps->out, "%d\n", status);
		ps->st = PS_CLOSING;
		ps->started = tick_ev_now();
		sess_arm(ps);
		return -1;
	}
	if (peer->sess && peer->sess != ps) {
		/* it called while we had (or were making) a session with it:
		 * the last one connected wins */
		peer->coll++;
		sess_close(peer->sess, LOG_L_INFO, "replaced by the session the peer opened");
	}
	ev_timer_stop(global.loop, &peer->retry);
	peer->sess = ps;
	ps->peer = peer;
	ps->minor = h.minor;
	dstr_printf(&ps->out, "%d\n", PEER_ST_OK);
	sess_established(ps);
	return used;
}

/* The status line of a session we opened. */
static int sess_status(struct peer_sess *ps, const char *p, size_t n)
{
	int code, used = peer_status_parse(p, n, &code);

	if (used == 0)
		return 0;
	if (used < 0) {
		ps->peer->last_status = PEER_LS_PROT;
		sess_fail(ps, -1, "it answered the hello with something else than a status");
		return -1;
	}
	ps->peer->last_status = ls_of_status(code);
	if (code != PEER_ST_OK) {
		ps->peer->fails++;
		sess_fail(ps, -1, "the peer refused the hello: %d (%s)", code, peers_status_str(code));
		return -1;
	}
	ps->minor = PEER_MINOR;
	sess_established(ps);
	return used;
}

/* ---- messages ---- */

static uint64_t kt_of(const struct stktable *t)
{
	return ((struct peers_table *)t->sync)->def.key_type;
}

/* A definition: which table the updates that follow are for. Returns 0 or
 * -1 (malformed, or a table id past PEERS_RT_MAX). */
static int msg_define(struct peer_sess *ps, const struct peer_msg *m)
{
	struct peers_sec *s = ps->sec;
	struct peer_tdef d;
	struct ps_rtable *rt = NULL;
	struct peers_table *pt = NULL;
	int ret = peer_tdef_decode(m->body, m->len, &d);
	char who[128], name[128];

	if (ret == -1)
		return -1;
	snprintf(name, sizeof(name), "%.*s", (int)MIN(d.nlen, (size_t)100), d.name);
	for (size_t i = 0; i < ps->nrt; i++)
		if (ps->rt[i].id == d.id)
			rt = &ps->rt[i];
	if (!rt && ps->nrt >= PEERS_RT_MAX) {
		/* each is kept for the session and searched at each definition */
		ps_log(s, LOG_L_WARNING, "%s defines more than %d tables",
		       ps_who(ps, who, sizeof(who)), PEERS_RT_MAX);
		return -1;
	}
	if (!rt) {
		ps->rt = xrealloc(ps->rt, (ps->nrt + 1) * sizeof(*ps->rt));
		rt = &ps->rt[ps->nrt++];
		memset(rt, 0, sizeof(*rt));
		rt->id = d.id;
	} else if (rt->def.key_type == d.key_type && rt->def.key_len == d.key_len &&
		   rt->def.data == d.data) {
		/* the same definition again, as HAProxy sends before each run */
		ps->cur = rt;
		return 0;
	}
	for (int i = 0; i < s->ntables; i++)
		if (strlen(s->tables[i].wire) == d.nlen && !memcmp(s->tables[i].wire, d.name, d.nlen))
			pt = &s->tables[i];
	ps->cur = rt;
	rt->def = d;
	rt->def.name = NULL;
	rt->def.nlen = 0;
	rt->pt = NULL;
	if (!pt) {
		ps_log(s, LOG_L_NOTICE, "%s replicates table '%s', which is not in this section "
		       "here: its updates are ignored", ps_who(ps, who, sizeof(who)), name);
		return 0;
	}
	if (ret == -2 || d.key_type != kt_of(pt->t) || d.key_len != pt->def.key_len) {
		ps_log(s, LOG_L_WARNING, "table '%s' refused on the session with %s: declared "
		       "with %s here and %s there (key type %llu, length %llu, data 0x%llx); its "
		       "updates are ignored", name, ps_who(ps, who, sizeof(who)),
		       ret == -2 ? "what sluice knows" : "another key type or length",
		       ret == -2 ? "types HAProxy 2.6 does not define" : "a different key",
		       (unsigned long long)d.key_type, (unsigned long long)d.key_len,
		       (unsigned long long)d.data);
		return 0;
	}
	if (d.data != pt->def.data)
		ps_log(s, LOG_L_NOTICE, "table '%s' stores other data types on %s (0x%llx there, "
		       "0x%llx here): only those both store are learnt",
		       name, ps_who(ps, who, sizeof(who)), (unsigned long long)d.data,
		       (unsigned long long)pt->def.data);
	rt->pt = pt;
	return 0;
}

/* The key of an update as table <t> stores it. Returns 0 or -1. */
static int key_from_wire(const struct stktable *t, const struct peer_upd *u, unsigned char *key,
                         uint32_t *klen)
{
	uint32_t v;

	switch (t->type) {
	case STK_K_INT:
		memcpy(&v, u->key, 4);
		v = ntohl(v);
		memcpy(key, &v, 4);
		*klen = 4;
		return 0;
	case STK_K_STR:
		if (u->klen > t->key_size)
			return -1;
		memcpy(key, u->key, u->klen);
		*klen = (uint32_t)u->klen;
		return 0;
	default:
		if (u->klen != t->key_size)
			return -1;
		memcpy(key, u->key, u->klen);
		*klen = t->key_size;
		return 0;
	}
}

/* An update: the entry takes the values (but conn_cur, which counts this
 * process's connections). Returns 0 or -1 (malformed). */
static int msg_update(struct peer_sess *ps, const struct peer_msg *m)
{
	struct ps_rtable *rt = ps->cur;
	struct peer_upd u;
	struct stktable *t;
	struct stksess *ts;
	unsigned char key[STK_KEY_MAX];
	uint32_t klen;

	if (!rt)
		return -1;   /* an update before any definition */
	if (peer_upd_decode(m->type, m->body, m->len, &rt->def, &u) == -1)
		return -1;
	rt->last_get = (m->type == PEER_STKT_UPDATE || m->type == PEER_STKT_UPDATE_TIMED) ?
		       u.id : rt->last_get + 1;
	if (!rt->pt)
		return 0;
	rt->got = 1;
	t = rt->pt->t;
	if (!t->buckets || key_from_wire(t, &u, key, &klen) == -1)
		return 0;
	ts = stk_get(t, key, klen);
	if (!ts)
		return 0;   /* full of entries in use */
	for (int dt = 0; dt < STK_DT_COUNT; dt++) {
		unsigned bit = (unsigned)stk_dt_wire(dt);
		uint32_t n = stk_dt_is_array(dt) ? MIN(t->nb[dt], rt->def.nelem[bit]) : 1;

		if (!(rt->def.data & ((uint64_t)1 << bit)) || dt == STK_DT_CONN_CUR)
			continue;
		for (unsigned i = 0; i < n; i++) {
			const struct peer_val *v = peer_upd_val(&u, bit, i);

			if (stk_dt_is_rate(dt))
				stk_rate_put_at(t, ts, dt, i, v->elapsed, v->curr, v->prev);
			else if (dt == STK_DT_SERVER_ID)
				stk_data_put_at(t, ts, dt, i, (int32_t)(uint32_t)v->v);
			else
				stk_data_put_at(t, ts, dt, i,
						(int64_t)MIN(v->v, (uint64_t)stk_dt_max(dt)));
		}
	}
	if (m->type == PEER_STKT_UPDATE_TIMED || m->type == PEER_STKT_INCUPDATE_TIMED)
		stk_set_exp(t, ts, t->expire ? MIN(u.expire, t->expire) : 0);
	stk_changed_remote(t, ts);
	return 0;
}

/* One message. Returns 0, or -1 after sess_fail(). */
static int sess_message(struct peer_sess *ps, const struct peer_msg *m)
{
	struct peers_sec *s = ps->sec;
	uint64_t tid;
	uint32_t upd;

	switch (m->cls) {
	case PEER_C_CTRL:
		switch (m->type) {
		case PEER_CTRL_RESYNC_REQ:
			sess_teach(ps);
			break;
		case PEER_CTRL_RESYNC_FINISHED:
		case PEER_CTRL_RESYNC_PARTIAL:
			learn_end(ps, m->type == PEER_CTRL_RESYNC_FINISHED);
			break;
		case PEER_CTRL_RESYNC_CONFIRM:
			if (ps->teach == 2) {
				ps->teach = 0;
				ps->confirmed = 1;
				if (ps->handover)
					handover_check(s);
			}
			break;
		case PEER_CTRL_HEARTBEAT:
			if (ps->peer)
				ps->peer->rx_hbt++;
			break;
		}
		return 0;
	case PEER_C_ERROR:
		sess_fail(ps, -1, "the peer reported %s",
			  m->type == PEER_ERR_SIZE ? "a message over its size limit" : "a protocol error");
		return -1;
	case PEER_C_STKT:
		switch (m->type) {
		case PEER_STKT_DEFINE:
			if (msg_define(ps, m) == -1)
				break;
			return 0;
		case PEER_STKT_SWITCH:
			if (peer_switch_decode(m->body, m->len, &tid) == -1)
				break;
			ps->cur = NULL;
			for (size_t i = 0; i < ps->nrt; i++)
				if (ps->rt[i].id == tid)
					ps->cur = &ps->rt[i];
			if (!ps->cur)
				break;
			return 0;
		case PEER_STKT_UPDATE:
		case PEER_STKT_INCUPDATE:
		case PEER_STKT_UPDATE_TIMED:
		case PEER_STKT_INCUPDATE_TIMED:
			if (msg_update(ps, m) == -1)
				break;
			return 0;
		case PEER_STKT_ACK:
			if (peer_ack_decode(m->body, m->len, &tid, &upd) == -1)
				break;
			if (ps->peer && tid >= 1 && tid <= (uint64_t)s->ntables)
				ps->peer->acked[tid - 1] = upd;
			return 0;
		default:
			return 0;   /* a type of a later version: skipped */
		}
		sess_fail(ps, PEER_ERR_PROTO, "malformed message (class %u, type %u, %zu bytes)",
			  m->cls, m->type, m->len);
		return -1;
	}
	sess_fail(ps, PEER_ERR_PROTO, "unknown message class %u", m->cls);
	return -1;
}

/* Handles the bytes received. */
static void sess_input(struct peer_sess *ps)
{
	size_t off = 0;

	while (off < ps->in_len && ps->st != PS_CLOSING) {
		const char *p = (const char *)ps->in + off;
		size_t n = ps->in_len - off;
		int used, too_big;
		struct peer_msg m;

		if (ps->st == PS_WAIT_HELLO) {
			used = sess_hello(ps, p, n);
		} else if (ps->st == PS_HELLO_SENT) {
			used = sess_status(ps, p, n);
		} else {
			used = peer_msg_parse(ps->in + off, n, &m, &too_big);
			if (used < 0)
				sess_fail(ps, too_big ? PEER_ERR_SIZE : PEER_ERR_PROTO, "%s",
					  too_big ? "message over the size limit" :
					  "malformed message length");
			else if (used > 0 && sess_message(ps, &m) == -1)
				used = -1;
		}
		if (used <= 0)
			break;
		off += (size_t)used;
	}
	if (off) {
		memmove(ps->in, ps->in + off, ps->in_len - off);
		ps->in_len -= off;
	}
}

/* Reads what came. Returns 0, or -1 when the session was closed. */
static int sess_read(struct peer_sess *ps)
{
	for (;;) {
		size_t room = PEER_MSG_MAX + 64 - ps->in_len;
		ssize_t n;

		if (!room) {
			sess_fail(ps, PEER_ERR_SIZE, "input buffer full");
			return 0;
		}
		n = recv(ps->c.fd, ps->in + ps->in_len, room, MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			int est = ps->st == PS_EST;

			sess_close(ps, est ? LOG_L_NOTICE : LOG_L_INFO, "%s",
				   n == 0 ? "closed by the peer" : strerror(errno));
			return -1;
		}
		ps->in_len += (size_t)n;
		ps->last_rx = tick_ev_now();
		sess_input(ps);
		if (ps->st == PS_CLOSING)
			return 0;
		if (ps->out.len - ps->out_off >= PEERS_OUT_MAX)
			return 0;   /* sess_flush() reads again once the peer took some */
	}
}

static void sess_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct peer_sess *ps = w->data;

	if (ps->st == PS_CONNECTING) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (getsockopt(ps->c.fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
			err = errno;
		if (err) {
			if (ps->peer->fails == 0 && !ps->handover)
				ps_log(ps->sec, LOG_L_NOTICE, "cannot connect to peer '%s' at %s: %s",
				       ps->peer->name, ps->peer->addr_str, strerror(err));
			sess_close(ps, 0, NULL);
			return;
		}
		ps->c.flags |= CO_F_CONNECTED;
		ps->st = PS_HELLO_SENT;
		ps->peer->last_status = PEER_LS_HSHK;
		peer_hello_put(&ps->out, ps->peer->name, ps->sec->local->name, (long)global.pid);
	} else if ((revents & EV_READ) && sess_read(ps) == -1) {
		return;
	}
	if (ps->st == PS_EST) {
		sess_acks(ps);
		sess_push(ps);
	}
	if (sess_flush(ps) == -1)
		return;
	if (ps->st == PS_EST)
		sess_arm(ps);
}

static void sess_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct peer_sess *ps = w->data;
	ev_tstamp now = tick_ev_now();

	switch (ps->st) {
	case PS_EST:
		if (now - ps->last_rx >= PEERS_DEAD) {
			if (ps->peer)
				ps->peer->no_hbt++;
			sess_close(ps, LOG_L_WARNING, "nothing received for %.0f s", PEERS_DEAD);
			return;
		}
		if (now - ps->last_tx >= PEERS_HEARTBEAT) {
			peer_msg_put_ctrl(&ps->out, PEER_C_CTRL, PEER_CTRL_HEARTBEAT);
			if (ps->peer)
				ps->peer->tx_hbt++;
			if (sess_flush(ps) == -1)
				return;
			ps->last_tx = now;   /* even if the socket did not take it yet */
		}
		sess_arm(ps);
		return;
	case PS_CLOSING:
		sess_close(ps, 0, NULL);
		return;
	default:
		/* a peer that does not answer is reported once, not at each try */
		if (ps->st == PS_CONNECTING && ps->peer && ps->peer->fails)
			sess_close(ps, 0, NULL);
		else
			sess_close(ps, LOG_L_NOTICE, "no handshake within %.0f s", PEERS_HELLO_TIMEOUT);
		return;
	}
}

/* ---- connecting, accepting ---- */

/* Opens a session to <p> (the local peer: the hand-over to the new
 * process, at the local peer's listening address). */
static void peer_connect(struct peers_sec *s, struct peer *p, int handover)
{
	struct peer_sess *ps;
	const struct sockaddr_storage *to = handover ? &s->listeners->addr : &p->addr;
	socklen_t tolen = handover ? s->listeners->addrlen : p->addrlen;
	int rc;

	if (p->sess)
		return;
	ps = sess_new(s);
	ps->peer = p;
	ps->handover = handover;
	ps->from = *to;
	p->sess = ps;
	p->last_status = PEER_LS_CONN;
	if (handover)
		s->handover = ps;
	rc = conn_connect(&ps->c, to, tolen, &peer_tcp_opts, sess_io_cb, ps);
	if (rc == -1) {
		int err = errno;

		if (!p->fails && !handover)
			ps_log(s, LOG_L_NOTICE, "cannot connect to peer '%s' at %s: %s", p->name,
			       p->addr_str, strerror(err));
		sess_close(ps, 0, NULL);
		return;
	}
	ps->st = PS_CONNECTING;
	sess_want(ps);
	sess_arm(ps);
}

static void peer_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct peer *p = w->data;

	if (!pr.stopping)
		peer_connect(p->sec, p, 0);
}

static struct peers_sec *sec_of_listener(const struct listener *li)
{
	for (struct peers_sec *s = peers_sections; s; s = s->next)
		for (struct listener *l = s->listeners; l; l = l->next)
			if (l == li)
				return s;
	return NULL;
}

static void peers_accept(struct listener *li, int fd, struct sockaddr_storage *addr,
                         socklen_t alen)
{
	struct peers_sec *s = sec_of_listener(li);
	struct peer_sess *ps;

	if (!s || pr.stopping) {
		close(fd);
		listener_release(li);
		return;
	}
	ps = sess_new(s);
	ps->li = li;
	ps->from = *addr;
	ps->c.fd = fd;
	ps->c.flags = CO_F_CONNECTED | CO_F_TCP;
	ev_io_init(&ps->c.io, sess_io_cb, fd, 0);
	ps->c.io.data = ps;
	conn_setup_tcp(fd, &peer_tcp_opts, 0);
	ps->st = PS_WAIT_HELLO;
	sess_want(ps);
	sess_arm(ps);
}

/* ---- start ---- */

int peers_bind_all(void)
{
	int ret = 0;

	for (struct peers_sec *s = peers_sections; s; s = s->next)
		if (s->local && !s->disabled && listener_bind_all(s->listeners) == -1) {
			log_alert("Starting peers section '%s': cannot bind the local peer '%s'",
				  s->name, s->local->name);
			ret = -1;
		}
	return ret;
}

int peers_open_logs(void)
{
	int ret = 0;

	for (struct peers_sec *s = peers_sections; s; s = s->next)
		if (s->local && !s->disabled && log_open(&s->loggers) == -1)
			ret = -1;
	return ret;
}

void peers_start(int reload)
{
	pr.started = 1;
	for (struct peers_sec *s = peers_sections; s; s = s->next) {
		int remote = 0;

		if (!s->local || s->disabled)
			continue;
		listener_start_all(s->listeners, peers_accept);
		for (struct peer *p = s->peers; p; p = p->next) {
			ev_init(&p->retry, peer_retry_cb);
			p->retry.data = p;
			if (!p->local) {
				remote = 1;
				peer_connect(s, p, 0);
			}
		}
		ev_init(&s->resync_timer, resync_cb);
		ev_init(&s->handover_retry, NULL);
		if (reload)
			resync_set(s, PEERS_RS_LOCAL);
		else
			resync_set(s, remote ? PEERS_RS_REMOTE : PEERS_RS_DONE);
	}
}

/* ---- soft stop: the hand-over to the new process ---- */

static void handover_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct peers_sec *s = w->data;

	peer_connect(s, s->local, 1);
}

/* The hand-over session of <s> is gone, or its teaching was confirmed:
 * tries again while the new process may still come (5 s), else gives up. */
static void handover_check(struct peers_sec *s)
{
	struct peer_sess *ps = s->handover;

	if (!pr.stopping || pr.closing || s->handover_over)
		return;
	if (ps && ps->confirmed) {
		ps_log(s, LOG_L_NOTICE, "tables handed over to the new process");
		s->handover_over = 1;
	} else if (!ps && tick_ev_now() - s->stop_time < PEERS_RESYNC_WAIT) {
		ev_timer_stop(global.loop, &s->handover_retry);
		ev_timer_init(&s->handover_retry, handover_retry_cb, 0.1, 0.);
		s->handover_retry.data = s;
		ev_timer_start(global.loop, &s->handover_retry);
	} else if (!ps) {
		ps_log(s, LOG_L_WARNING, "no new process took the tables through the local peer "
		       "'%s' within %.0f s: they are not handed over", s->local->name,
		       PEERS_RESYNC_WAIT);
		s->handover_over = 1;
	}
	idle_check();
}

void peers_stop(void)
{
	if (pr.stopping || !pr.started)
		return;
	pr.stopping = 1;
	for (struct peers_sec *s = peers_sections; s; s = s->next) {
		if (!s->local || s->disabled)
			continue;
		listener_close_all(s->listeners);
		ev_timer_stop(global.loop, &s->resync_timer);
		for (struct peer *p = s->peers; p; p = p->next)
			ev_timer_stop(global.loop, &p->retry);
		while (s->sessions)
			sess_close(s->sessions, LOG_L_INFO, "stopping");
		s->learn = NULL;
		s->stop_time = tick_ev_now();
		peer_connect(s, s->local, 1);
	}
}

/* Whether section <s> still has something to give the new process. */
static int handover_busy(const struct peers_sec *s)
{
	const struct peer_sess *ps = s->handover;

	if (!s->local || s->disabled)
		return 0;
	if (!s->handover_over)
		return 1;
	if (!ps || ps->st != PS_EST)
		return 0;
	if (ps->out.len > ps->out_off)
		return 1;
	for (int i = 0; i < s->ntables; i++)
		if (stk_upd_pending(s->tables[i].t, &ps->tbl[i].cursor))
			return 1;
	return 0;
}

int peers_busy(void (*done)(void))
{
	if (!pr.stopping)
		return 0;
	for (struct peers_sec *s = peers_sections; s; s = s->next)
		if (handover_busy(s)) {
			pr.done = done;
			return 1;
		}
	return 0;
}

/* Tells peers_busy()'s caller once nothing is left to hand over. */
static void idle_check(void)
{
	void (*done)(void) = pr.done;

	if (!done)
		return;
	for (struct peers_sec *s = peers_sections; s; s = s->next)
		if (handover_busy(s))
			return;
	pr.done = NULL;
	done();
}

void peers_close_all(void)
{
	pr.done = NULL;
	pr.stopping = 1;
	pr.closing = 1;
	for (struct peers_sec *s = peers_sections; s; s = s->next) {
		while (s->sessions)
			sess_close(s->sessions, 0, NULL);
		if (global.loop && pr.started) {
			ev_timer_stop(global.loop, &s->resync_timer);
			ev_timer_stop(global.loop, &s->handover_retry);
			for (struct peer *p = s->peers; p; p = p->next)
				ev_timer_stop(global.loop, &p->retry);
		}
		listener_close_all(s->listeners);
	}
	if (pr.flush_init && global.loop)
		ev_prepare_stop(global.loop, &pr.flush);
}
