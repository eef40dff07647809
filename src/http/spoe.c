/* The SPOE filter at run time: "filter spoe" lines, connections to the
 * agents of a backend (SPOP 2.0, spop.h), NOTIFY frames sent on HTTP events
 * and by send-spoe-group while the rule set waits (ACT_RET_YIELD), and the
 * ACK's set-var/unset-var applied. An agent costs a stream at most
 * "timeout processing"; its failures set a variable and traffic goes on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/acl.h>
#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/http_filter.h>
#include <sluice/http_rules.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/spop.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/tcp_rules.h>
#include <sluice/ticks.h>
#include <sluice/vars.h>

#include "spoe_int.h"

/* set-on-error values (HAProxy's list): SPOP status codes are 256 + code. */
#define SPOE_E_TIMEOUT 1
#define SPOE_E_ALLOC   2
#define SPOE_E_TOO_BIG 3
#define SPOE_E_SPOP    256

enum spoe_cst {
	SC_CONNECTING,   /* connect() in progress */
	SC_HELLO,        /* HAPROXY-HELLO sent (or being sent), AGENT-HELLO awaited */
	SC_READY,        /* idle, kept for the next NOTIFY ("timeout idle") */
	SC_BUSY,         /* a NOTIFY sent, its ACK awaited */
};

struct spoe_wait;

/* A connection to an agent. */
struct spoe_conn {
	struct spoe_conn  *next;
	struct spoe_agent *ag;
	struct conn        c;
	enum spoe_cst      st;
	ev_timer           timer;       /* hello, idle */
	unsigned char     *rbuf;        /* SPOP_FRAME_MAX + 4 bytes */
	size_t             rlen;
	const unsigned char *out;       /* what is being sent */
	size_t             olen, ooff;
	unsigned char      hello[256];
	uint32_t           max_frame;   /* the agent's */
	struct spoe_wait  *w;           /* the NOTIFY it carries */
};

/* A stream waiting for an ACK. */
struct spoe_wait {
	struct spoe_wait  *next;        /* the agent's waits with no connection yet */
	struct stream     *s;
	const struct spoe_send *snd;    /* the rule that waits */
	struct spoe_conn  *sc;          /* the connection carrying it, NULL: none yet */
	ev_timer           timer;       /* timeout processing */
	unsigned char     *frame;       /* the NOTIFY, then the ACK's payload */
	size_t             len;
	uint64_t           stream_id, frame_id;
	int                done, err;   /* err: the set-on-error value, 0: none */
	tick_ms            t0, t_sent;
};

/* A stream's SPOE state (its slot of s->ext[]). */
struct spoe_strm {
	struct spoe_wait        *w;
	const struct spoe_agent *off[4];   /* agents disabled by an error */
	int                      noff;
};

static struct spoe_wait *spoe_pending_head;   /* waits for a connection (all agents) */
static int spoe_slot;
static uint64_t spoe_frame_ids;

static void sc_io_cb(struct ev_loop *loop, ev_io *io, int revents);
static void sc_send_wait(struct spoe_conn *sc);

/* ---- waits ---- */

static void wait_pending_del(struct spoe_wait *w)
{
	for (struct spoe_wait **pw = &spoe_pending_head; *pw; pw = &(*pw)->next)
		if (*pw == w) {
			*pw = w->next;
			break;
		}
	w->next = NULL;
}

/* The wait ends with <err> (0: the ACK is in w->frame): the stream goes on. */
static void wait_finish(struct spoe_wait *w, int err)
{
	if (w->done)
		return;
	w->done = 1;
	w->err = err;
	ev_timer_stop(global.loop, &w->timer);
	wait_pending_del(w);
	if (w->sc) {
		w->sc->w = NULL;
		w->sc = NULL;
	}
	stream_wake(w->s);
}

/* ---- connections ---- */

static void sc_free(struct spoe_conn *sc)
{
	struct spoe_agent *ag = sc->ag;

	for (struct spoe_conn **p = &ag->conns; *p; p = &(*p)->next)
		if (*p == sc) {
			*p = sc->next;
			break;
		}
	ev_timer_stop(global.loop, &sc->timer);
	conn_close(&sc->c);
	free(sc->rbuf);
	free(sc);
}

/* Closes <sc> after a failure: its wait ends with <err>, and a
 * HAPROXY-DISCONNECT with SPOP <status> is sent first when it can be
 * (best effort: one send on a connected socket). */
static void sc_fail(struct spoe_conn *sc, int err, int status)
{
	struct spoe_agent *ag = sc->ag;

	if (sc->w)
		wait_finish(sc->w, err);
	if (status >= 0 && sc->st != SC_CONNECTING && sc->c.fd >= 0) {
		unsigned char f[128];
		struct spop_wr wr = { f, sizeof(f), 0, 0 };

		if (spop_disconnect_build(&wr, (unsigned)status) == 0 &&
		    send(sc->c.fd, f, wr.n, MSG_NOSIGNAL | MSG_DONTWAIT) == -1) {
			/* the agent is gone already */
		}
	}
	sc_free(sc);
	if (!ag->conns) {
		/* no connection left to take the waits queued for one (this
		 * one failed to connect or to say HELLO): they fail now */
		for (struct spoe_wait *w = spoe_pending_head, *next; w; w = next) {
			next = w->next;
			if (w->snd->ag == ag)
				wait_finish(w, err ? err : SPOE_E_SPOP + 1);
		}
	}
}

static void sc_update(struct spoe_conn *sc)
{
	int ev = sc->st == SC_CONNECTING ? EV_WRITE : EV_READ;

	if (sc->st != SC_CONNECTING && sc->ooff < sc->olen)
		ev |= EV_WRITE;
	conn_want(&sc->c, ev);
}

static void sc_arm(struct spoe_conn *sc, uint32_t ms)
{
	ev_timer_stop(global.loop, &sc->timer);
	if (ms) {
		ev_timer_set(&sc->timer, ms / 1000.0, 0.);
		ev_timer_start(global.loop, &sc->timer);
	}
}

static void sc_timer_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct spoe_conn *sc = container_of(t, struct spoe_conn, timer);

	/* hello: the agent did not answer in time; idle: it was not needed */
	sc_fail(sc, SPOE_E_TIMEOUT, sc->st == SC_READY ? 0 : 2);
}

/* <sc> is ready: it takes the first wait of its agent, else idles. */
static void sc_ready(struct spoe_conn *sc)
{
	sc->st = SC_READY;
	sc->out = NULL;
	sc->olen = sc->ooff = 0;
	for (struct spoe_wait *w = spoe_pending_head; w; w = w->next)
		if (w->snd->ag == sc->ag) {
			wait_pending_del(w);
			sc->w = w;
			w->sc = sc;
			sc_send_wait(sc);
			return;
		}
	sc_arm(sc, sc->ag->t_idle);
	sc_update(sc);
}

/* Sends the NOTIFY of sc->w (the connection is ready). */
static void sc_send_wait(struct spoe_conn *sc)
{
	struct spoe_wait *w = sc->w;

	if (w->len - 4 > sc->max_frame) {
		sc->w = NULL;
		w->sc = NULL;
		wait_finish(w, SPOE_E_TOO_BIG);
		sc_ready(sc);
		return;
	}
	sc->st = SC_BUSY;
	sc->out = w->frame;
	sc->olen = w->len;
	sc->ooff = 0;
	w->t_sent = tick_now_ms();
	sc_arm(sc, 0);   /* the wait's own timer runs */
	sc_update(sc);
}

/* One frame from the agent. Returns 0, or -1 when <sc> was closed. */
static int sc_frame(struct spoe_conn *sc, const struct spop_frame *f)
{
	struct spop_kv kv = { 0 };
	int st;

	if (f->type == SPOP_F_AGENT_DISCONNECT) {
		if (spop_read_kv(f->pl, f->pl_len, &kv) == -1 || !kv.has_status)
			kv.status = 4;
		sc_fail(sc, SPOE_E_SPOP + (int)(kv.status & 255), -1);
		return -1;
	}
	if (sc->st == SC_HELLO && f->type == SPOP_F_AGENT_HELLO) {
		if (spop_read_kv(f->pl, f->pl_len, &kv) == -1) {
			sc_fail(sc, SPOE_E_SPOP + 4, 4);
			return -1;
		}
		st = spop_hello_check(&kv, sc->ag->max_frame);
		if (st) {
			sc_fail(sc, SPOE_E_SPOP + st, st);
			return -1;
		}
		sc->max_frame = (uint32_t)kv.max_frame;
		sc_arm(sc, 0);
		if (sc->w)
			sc_send_wait(sc);
		else
			sc_ready(sc);
		return 0;
	}
	if (sc->st == SC_BUSY && f->type == SPOP_F_ACK && sc->ooff == sc->olen) {
		struct spoe_wait *w = sc->w;

		if (!w || f->stream_id != w->stream_id || f->frame_id != w->frame_id) {
			sc_fail(sc, SPOE_E_SPOP + 12, 12);   /* frame-id not found */
			return -1;
		}
		if (!(f->flags & SPOP_FL_FIN)) {
			sc_fail(sc, SPOE_E_SPOP + 10, 10);   /* fragmented: not supported */
			return -1;
		}
		memcpy(w->frame, f->pl, f->pl_len);  /* fits: the frame was <= max_frame */
		w->len = f->pl_len;
		wait_finish(w, 0);
		sc_ready(sc);
		return 0;
	}
	sc_fail(sc, SPOE_E_SPOP + 4, 4);   /* invalid frame */
	return -1;
}

static void sc_read(struct spoe_conn *sc)
{
	for (;;) {
		ssize_t n = recv(sc->c.fd, sc->rbuf + sc->rlen, SPOP_FRAME_MAX + 4 - sc->rlen, 0);
		size_t used = 0;

		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
			sc_fail(sc, SPOE_E_SPOP + 1, -1);   /* I/O error, or closed */
			return;
		}
		if (n == -1)
			return;
		sc->rlen += (size_t)n;
		for (;;) {
			struct spop_frame f;
			long r = spop_frame_parse(sc->rbuf + used, sc->rlen - used,
						  sc->ag->max_frame, &f);

			if (r == 0)
				break;
			if (r < 0) {
				sc_fail(sc, SPOE_E_SPOP + (r == -1 ? 3 : 4), r == -1 ? 3 : 4);
				return;
			}
			if (sc->st != SC_HELLO && sc->st != SC_BUSY) {
				sc_fail(sc, SPOE_E_SPOP + 4, 4);   /* nothing was asked */
				return;
			}
			if (sc_frame(sc, &f) == -1)
				return;
			used += (size_t)r;
		}
		memmove(sc->rbuf, sc->rbuf + used, sc->rlen - used);
		sc->rlen -= used;
	}
}

static void sc_io_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	struct spoe_conn *sc = io->data;

	if (sc->st == SC_CONNECTING) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (getsockopt(sc->c.fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1 || err) {
			sc_fail(sc, SPOE_E_SPOP + 1, -1);
			return;
		}
		sc->c.flags |= CO_F_CONNECTED;
		sc->st = SC_HELLO;
	}
	while (sc->ooff < sc->olen) {
		ssize_t n = send(sc->c.fd, sc->out + sc->ooff, sc->olen - sc->ooff, MSG_NOSIGNAL);

		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n == -1) {
			sc_fail(sc, SPOE_E_SPOP + 1, -1);
			return;
		}
		sc->ooff += (size_t)n;
	}
	if (revents & EV_READ) {
		struct spoe_agent *ag = sc->ag;
		struct spoe_conn *p;

		sc_read(sc);
		for (p = ag->conns; p && p != sc; p = p->next)
			;
		if (!p)
			return;   /* closed */
	}
	sc_update(sc);
}

/* A new connection to the next usable server of the agent's backend.
 * Returns it (connecting), or NULL. */
static struct spoe_conn *sc_new(struct spoe_agent *ag)
{
	struct server *srv = ag->rr ? ag->rr->next : NULL;
	struct spop_wr wr;
	struct spoe_conn *sc;
	int r;

	if (ag->maxconnrate && freq_rate(&ag->conn_rate, tick_now_ms()) >= ag->maxconnrate)
		return NULL;
	for (int i = 0; i < 2 * ag->be->nsrv + 1; i++) {
		if (!srv)
			srv = ag->be->servers;
		if (!srv)
			return NULL;
		if (server_usable(srv) && srv->addrlen)
			break;
		srv = srv->next;
	}
	if (!srv || !server_usable(srv) || !srv->addrlen)
		return NULL;
	ag->rr = srv;
	freq_add(&ag->conn_rate, (uint32_t)(tick_now_ms() / 1000));
	sc = xcalloc(1, sizeof(*sc));
	sc->ag = ag;
	sc->rbuf = xcalloc(1, SPOP_FRAME_MAX + 4);
	ev_timer_init(&sc->timer, sc_timer_cb, 0., 0.);
	r = conn_connect(&sc->c, &srv->addr, srv->addrlen, NULL, sc_io_cb, sc);
	if (r == -1) {
		conn_close(&sc->c);
		free(sc->rbuf);
		free(sc);
		return NULL;
	}
	wr = (struct spop_wr){ sc->hello, sizeof(sc->hello), 0, 0 };
	BUG_ON(spop_hello_build(&wr, ag->max_frame, "", ag->engine_id, 0) == -1,
	       "HAPROXY-HELLO does not fit");
	sc->out = sc->hello;
	sc->olen = wr.n;
	sc->st = r == 0 ? SC_HELLO : SC_CONNECTING;
	if (r == 0)
		sc->c.flags |= CO_F_CONNECTED;
	sc->next = ag->conns;
	ag->conns = sc;
	sc_arm(sc, ag->t_hello);
	sc_update(sc);
	return sc;
}

/* ---- the stream side ---- */

/* Frees wait <w>, which its stream gives up, finished or not. */
static void wait_free(struct spoe_wait *w)
{
	ev_timer_stop(global.loop, &w->timer);
	wait_pending_del(w);
	if (w->sc) {
		/* its ACK would come for nobody: the connection goes */
		struct spoe_conn *sc = w->sc;

		sc->w = NULL;
		if (sc->st == SC_BUSY)
			sc_fail(sc, 0, 0);
	}
	free(w->frame);
	free(w);
}

static void strm_free(struct stream *s)
{
	struct spoe_strm *st = s->ext[spoe_slot];

	s->ext[spoe_slot] = NULL;
	if (st->w)
		wait_free(st->w);
	free(st);
}

static void wait_timer_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct spoe_wait *w = container_of(t, struct spoe_wait, timer);
	struct spoe_conn *sc = w->sc;

	wait_finish(w, SPOE_E_TIMEOUT);
	if (sc && sc->st == SC_BUSY)
		sc_fail(sc, 0, 2);   /* its answer is late: the connection goes */
}

/* Sets variable txn.<prefix>.<name> of <s> to integer <v>. */
static void spoe_set_int(const struct spoe_agent *ag, struct stream *s, const char *name,
                         int64_t v)
{
	char full[256];
	struct var_ref ref;
	struct sample smp = { 0 };
	char *err = NULL;
	int n = snprintf(full, sizeof(full), "txn.%s.%s", ag->var_prefix, name);

	if (n < 0 || (size_t)n >= sizeof(full) || var_ref_parse(full, (size_t)n, &ref, &err) == -1) {
		free(err);
		return;
	}
	smp.type = SMP_T_SINT;
	smp.u.sint = v;
	var_set(&ref, s, &smp);
	var_ref_release(&ref);
}

/* Whether the agent may set variable <ref> (named <name> by it). */
static int spoe_var_allowed(const struct spoe_agent *ag, const struct var_ref *ref,
                            const char *name, size_t len)
{
	if (ag->n_reg_vars == 0)
		return 1;   /* option force-set-var */
	for (int i = 0; i < ag->n_reg_vars; i++)
		if (strlen(ag->reg_vars[i]) == len && memcmp(ag->reg_vars[i], name, len) == 0)
			return 1;
	return var_ref_known(ref);
}

static const char spoe_scopes[][5] = { "proc", "sess", "txn", "req", "res" };

/* Stores typed value <v> into variable <ref> of <s> (NULL: nothing). */
static void spoe_store(const struct var_ref *ref, struct stream *s, const struct spop_val *v)
{
	struct sample smp = { 0 };

	switch (v->type) {
	case SPOP_T_BOOL:
		smp.type = SMP_T_BOOL;
		smp.u.sint = v->v.b;
		break;
	case SPOP_T_INT32:
	case SPOP_T_INT64:
		smp.type = SMP_T_SINT;
		smp.u.sint = v->v.i;
		break;
	case SPOP_T_UINT32:
	case SPOP_T_UINT64:
		smp.type = SMP_T_SINT;
		smp.u.sint = (int64_t)v->v.u;
		break;
	case SPOP_T_IPV4:
		smp.type = SMP_T_IPV4;
		memcpy(&smp.u.ipv4, v->v.ip, 4);
		break;
	case SPOP_T_IPV6:
		smp.type = SMP_T_IPV6;
		memcpy(&smp.u.ipv6, v->v.ip, 16);
		break;
	case SPOP_T_STRING:
	case SPOP_T_BINARY:
		smp.type = v->type == SPOP_T_STRING ? SMP_T_STR : SMP_T_BIN;
		smp.flags = SMP_F_CONST;
		smp.u.str.p = v->v.str.p;
		smp.u.str.len = v->v.str.len;
		break;
	default:
		return;   /* NULL */
	}
	var_set(ref, s, &smp);
}

/* Applies the actions of ACK payload p[0..len). Returns 0, or -1 when it is
 * malformed (what came before is applied). */
static int spoe_apply(const struct spoe_agent *ag, struct stream *s, const unsigned char *p,
                      size_t len)
{
	struct spop_action a;
	size_t i = 0;
	int r;

	while ((r = spop_ack_next(p, len, &i, &a)) == 1) {
		char full[512];
		struct var_ref ref;
		char *err = NULL;
		int n;

		if ((a.type != SPOP_ACT_SET_VAR && a.type != SPOP_ACT_UNSET_VAR) ||
		    a.scope >= ARRAY_SIZE(spoe_scopes) || !a.name_len || a.name_len > 200)
			continue;
		n = snprintf(full, sizeof(full), "%s.%s.%.*s", spoe_scopes[a.scope],
			     ag->var_prefix, (int)a.name_len, a.name);
		if (n < 0 || (size_t)n >= sizeof(full) ||
		    var_ref_parse(full, (size_t)n, &ref, &err) == -1) {
			free(err);
			continue;
		}
		if (spoe_var_allowed(ag, &ref, a.name, a.name_len)) {
			if (a.type == SPOP_ACT_UNSET_VAR)
				var_unset(&ref, s);
			else
				spoe_store(&ref, s, &a.val);
		}
		var_ref_release(&ref);
	}
	return r;
}

/* A sample as SPOP typed data. */
static void spoe_put_sample(struct spop_wr *wr, const struct sample *smp, int ok)
{
	struct spop_val v = { SPOP_T_NULL };

	if (ok) {
		switch (smp->type) {
		case SMP_T_BOOL:
			v.type = SPOP_T_BOOL;
			v.v.b = smp->u.sint != 0;
			break;
		case SMP_T_SINT:
			v.type = SPOP_T_INT64;
			v.v.i = smp->u.sint;
			break;
		case SMP_T_IPV4:
			v.type = SPOP_T_IPV4;
			memcpy(v.v.ip, &smp->u.ipv4, 4);
			break;
		case SMP_T_IPV6:
			v.type = SPOP_T_IPV6;
			memcpy(v.v.ip, &smp->u.ipv6, 16);
			break;
		case SMP_T_STR:
		case SMP_T_BIN:
			v.type = smp->type == SMP_T_STR ? SPOP_T_STRING : SPOP_T_BINARY;
			v.v.str.p = smp->u.str.p;
			v.v.str.len = smp->u.str.len;
			break;
		default:
			break;
		}
	}
	spop_put_val(wr, &v);
}

/* Writes the NOTIFY of <snd> for <s> into w->frame. Returns the number of
 * messages in it, or -1 when it does not fit max-frame-size. */
static int spoe_build(const struct spoe_send *snd, struct stream *s, struct spoe_wait *w)
{
	const struct spoe_agent *ag = snd->ag;
	struct spop_wr wr = { w->frame, ag->max_frame + 4, 0, 0 };
	size_t start = spop_frame_begin(&wr, SPOP_F_NOTIFY, SPOP_FL_FIN, w->stream_id, w->frame_id);
	int nmsg = 0;

	for (int i = 0; i < snd->n; i++) {
		const struct spoe_msg *m = snd->msgs[i];

		if (m->cond && !acl_cond_exec(m->cond, s))
			continue;
		nmsg++;
		spop_put_str(&wr, m->id);
		spop_put_byte(&wr, (unsigned char)m->nargs);
		for (int a = 0; a < m->nargs; a++) {
			struct sample smp = { 0 };
			int ok = smp_expr_eval(&m->args[a].expr, s, &smp);

			spop_put_str(&wr, m->args[a].name);
			spoe_put_sample(&wr, &smp, ok);
		}
	}
	if (spop_frame_end(&wr, start) == -1)
		return -1;
	w->len = wr.n;
	return nmsg;
}

/* One line per processing when the agent has "log" targets: its name, the
 * event or group, the stream, the status (the set-on-error value, 0: none),
 * the waits (ms: total, processing), the open connections, and its
 * failed/done processings. */
static void spoe_log(struct spoe_agent *ag, const struct spoe_wait *w, const struct stream *s,
                     int err)
{
	char line[512];
	int nconn = 0, n;

	if (!ag->loggers.head && !ag->loggers.use_global)
		return;
	for (const struct spoe_conn *c = ag->conns; c; c = c->next)
		nconn++;
	n = snprintf(line, sizeof(line), "SPOE: [%s] <%s> sid=%llu st=%d %ld/%ld %d %llu/%llu",
		     ag->id, w->snd->what, (unsigned long long)s->uniq_id, err,
		     (long)(tick_now_ms() - w->t0),
		     w->t_sent && !err ? (long)(tick_now_ms() - w->t_sent) : -1L, nconn,
		     (unsigned long long)ag->n_err, (unsigned long long)ag->n_proc);
	if (n > 0)
		log_send(&ag->loggers, LOG_L_INFO, line, (size_t)n < sizeof(line) ? (size_t)n :
			 sizeof(line) - 1);
}

/* The end of a wait: variables set, times and errors recorded. */
static void spoe_done(struct spoe_strm *st, struct stream *s, struct spoe_wait *w)
{
	struct spoe_agent *ag = w->snd->ag;
	int err = w->err;

	if (!err && spoe_apply(ag, s, w->frame, w->len) == -1)
		err = SPOE_E_SPOP + 4;
	if (!err && ag->var_tproc)
		spoe_set_int(ag, s, ag->var_tproc, (int64_t)(tick_now_ms() - w->t_sent));
	if (ag->var_ttotal)
		spoe_set_int(ag, s, ag->var_ttotal, (int64_t)(tick_now_ms() - w->t0));
	if (err && ag->var_err)
		spoe_set_int(ag, s, ag->var_err, err);
	if (err && !ag->continue_on_error && st->noff < (int)ARRAY_SIZE(st->off))
		st->off[st->noff++] = ag;
	ag->n_proc++;
	ag->n_err += err != 0;
	if (err && err != SPOE_E_ALLOC)   /* the agent's failures, not maxerrrate's */
		freq_add(&ag->err_rate, (uint32_t)(tick_now_ms() / 1000));
	spoe_log(ag, w, s, err);
}

static enum act_ret spoe_act_run(void *priv, struct stream *s, unsigned where,
                                 struct act_res *res)
{
	const struct spoe_send *snd = priv;
	struct spoe_strm *st = s->ext[spoe_slot];
	struct spoe_wait *w;
	struct spoe_conn *sc;
	int n;

	if (st && st->w && st->w->snd == snd) {
		w = st->w;
		if (!w->done)
			return ACT_RET_YIELD;   /* woken by something else */
		spoe_done(st, s, w);
		st->w = NULL;
		wait_free(w);
		return ACT_RET_CONT;
	}
	if (!snd->ag || !res->can_yield)
		return ACT_RET_CONT;   /* a rule set that cannot wait sends nothing */
	if (!st) {
		st = xcalloc(1, sizeof(*st));
		s->ext[spoe_slot] = st;
	}
	if (st->w) {   /* what another rule left */
		wait_free(st->w);
		st->w = NULL;
	}
	for (int i = 0; i < st->noff; i++)
		if (st->off[i] == snd->ag)
			return ACT_RET_CONT;   /* an error stopped this agent for the stream */
	w = xcalloc(1, sizeof(*w));
	w->s = s;
	w->snd = snd;
	w->t0 = tick_now_ms();
	w->stream_id = s->uniq_id;
	w->frame_id = ++spoe_frame_ids;
	w->frame = xcalloc(1, snd->ag->max_frame + 4);
	if (snd->ag->maxerrrate &&
	    freq_rate(&snd->ag->err_rate, tick_now_ms()) >= snd->ag->maxerrrate) {
		/* too many failures lately: the agent is left alone */
		w->err = SPOE_E_ALLOC;
		spoe_done(st, s, w);
		wait_free(w);
		return ACT_RET_CONT;
	}
	n = spoe_build(snd, s, w);
	if (n <= 0) {
		if (n < 0) {
			w->err = SPOE_E_TOO_BIG;
			spoe_done(st, s, w);
		}
		wait_free(w);
		return ACT_RET_CONT;
	}
	st->w = w;
	ev_timer_init(&w->timer, wait_timer_cb, snd->ag->t_proc / 1000.0, 0.);
	ev_timer_start(global.loop, &w->timer);
	for (sc = snd->ag->conns; sc && (sc->st != SC_READY || sc->w); sc = sc->next)
		;
	if (sc) {
		sc->w = w;
		w->sc = sc;
		sc_send_wait(sc);
		return ACT_RET_YIELD;
	}
	/* no idle connection: a new one, and the first one ready takes it */
	w->next = spoe_pending_head;
	spoe_pending_head = w;
	sc = sc_new(snd->ag);
	if (!sc) {
		int busy = 0;

		for (struct spoe_conn *c = snd->ag->conns; c; c = c->next)
			busy++;
		if (!busy)   /* nothing will ever take it */
			wait_finish(w, SPOE_E_SPOP + 1);
	}
	return ACT_RET_YIELD;
}

const struct act_kw spoe_event_act = {
	"spoe-event", 0, ACT_W_HTTP_REQ | ACT_W_HTTP_RES | ACT_W_TCP_REQ | ACT_W_TCP_RES, NULL,
	NULL, NULL, "", spoe_act_run
};

/* ---- send-spoe-group <engine> <group> ---- */

static struct spoe_send *spoe_sends;   /* send-spoe-group rules, resolved at post-parse */

static int spoe_is_cond(const char *w)
{
	return strcmp(w, "if") == 0 || strcmp(w, "unless") == 0;
}

static int spoe_group_parse(struct act_parse *p)
{
	struct spoe_send *snd;

	if (p->argc - p->idx < 2 || spoe_is_cond(p->argv[p->idx]) ||
	    spoe_is_cond(p->argv[p->idx + 1])) {
		act_alert(p, "expects <engine-id> <group-id>");
		return -1;
	}
	if (!p->px || !(p->px->cap & (PR_CAP_FE | PR_CAP_BE))) {
		act_alert(p, "not possible in a defaults section (it names a filter of its proxy)");
		return -1;
	}
	snd = xcalloc(1, sizeof(*snd));
	snd->engine = xstrdup(p->argv[p->idx]);
	snd->group = xstrdup(p->argv[p->idx + 1]);
	snd->file = xstrdup(p->ctx->file);
	snd->line = p->ctx->line;
	snd->event = -1;
	snd->px = p->px;
	snd->next = spoe_sends;
	spoe_sends = snd;
	p->priv = snd;
	p->idx += 2;
	return 0;
}

static const struct act_kw spoe_group_act[] = {
	{ "send-spoe-group", 0, ACT_W_HTTP_REQ | ACT_W_HTTP_RES | ACT_W_TCP_REQ | ACT_W_TCP_RES,
	  spoe_group_parse, NULL, NULL, "<engine-id> <group-id>", spoe_act_run },
};

/* ---- filter spoe [engine <name>] config <file> ---- */

/* The rule sets each event runs before (HTTP or TCP, by the event), and
 * the proxy side it needs. */
static const struct {
	const char        *name;
	int                set;   /* enum http_rule_set, or tcp_rule_set for TCP events */
	unsigned           cap;
} spoe_ev_rows[SPOE_EV_COUNT] = {
	[SPOE_EV_FE_TCP_REQ]  = { "on-frontend-tcp-request", TCP_RS_REQ, PR_CAP_FE },
	[SPOE_EV_BE_TCP_REQ]  = { "on-backend-tcp-request", TCP_RS_REQ, PR_CAP_BE },
	[SPOE_EV_TCP_RES]     = { "on-tcp-response", TCP_RS_RES, PR_CAP_FE | PR_CAP_BE },
	[SPOE_EV_FE_HTTP_REQ] = { "on-frontend-http-request", HTTP_RS_REQ, PR_CAP_FE },
	[SPOE_EV_BE_HTTP_REQ] = { "on-backend-http-request", HTTP_RS_REQ, PR_CAP_BE },
	[SPOE_EV_HTTP_RES]    = { "on-http-response", HTTP_RS_RES, PR_CAP_FE | PR_CAP_BE },
	[SPOE_EV_CLI_SESS]    = { "on-client-session", -1, PR_CAP_FE },
	[SPOE_EV_SRV_SESS]    = { "on-server-session", -1, PR_CAP_FE | PR_CAP_BE },
};

static int spoe_filter_parse(struct cfg_ctx *ctx, int argc, char **argv)
{
	/* prepended last, runs first: the frontend's event before the backend's */
	static const int order[] = { SPOE_EV_HTTP_RES, SPOE_EV_BE_HTTP_REQ, SPOE_EV_FE_HTTP_REQ,
				     SPOE_EV_TCP_RES, SPOE_EV_BE_TCP_REQ, SPOE_EV_FE_TCP_REQ,
				     SPOE_EV_CLI_SESS, SPOE_EV_SRV_SESS };
	const char *engine = NULL, *file = NULL;
	struct proxy *px = ctx->px;
	struct spoe_agent *ag;
	char id[128];

	for (int i = 0; i < argc; i += 2) {
		if (i + 1 >= argc || (strcmp(argv[i], "engine") && strcmp(argv[i], "config"))) {
			cfg_alert(ctx, "'filter spoe' expects [engine <name>] config <file> (got '%s')",
				  argv[i]);
			return -1;
		}
		*(argv[i][0] == 'e' ? &engine : &file) = argv[i + 1];
	}
	if (!file) {
		cfg_alert(ctx, "'filter spoe' expects [engine <name>] config <file>");
		return -1;
	}
	for (ag = spoe_agents; ag; ag = ag->next)
		if (ag->px == px && ag->engine && engine && strcmp(ag->engine, engine) == 0) {
			cfg_alert(ctx, "'filter spoe': engine '%s' is used twice in '%s'", engine,
				  px->name);
			return -1;
		}
	ag = spoe_file_load(ctx, file, engine);
	if (!ag)
		return -1;
	snprintf(id, sizeof(id), "sluice-%ld-%s-%s", (long)getpid(), px->name, ag->engine);
	ag->engine_id = xstrdup(id);
	for (size_t k = 0; k < ARRAY_SIZE(order); k++) {
		int ev = order[k];
		struct spoe_send *snd;

		if (!ag->nev[ev])
			continue;
		if (!(px->cap & spoe_ev_rows[ev].cap)) {
			cfg_alert(ctx, "'filter spoe': engine '%s' sends messages on %s, which never "
				  "happens in '%s' (sluice runs a filter's events in the proxy declaring "
				  "it: put the filter in a %s)", ag->engine, spoe_ev_rows[ev].name,
				  px->name, spoe_ev_rows[ev].cap == PR_CAP_FE ? "frontend or listen" :
				  "backend or listen");
			return -1;
		}
		snd = xcalloc(1, sizeof(*snd));
		snd->ag = ag;
		snd->msgs = ag->ev[ev];
		snd->n = ag->nev[ev];
		snd->event = ev;
		snd->what = spoe_ev_rows[ev].name;
		snd->next = spoe_sends;   /* kept with the others: the rule does not own it */
		spoe_sends = snd;
		snd->px = px;
		snd->file = xstrdup(ctx->file);
		snd->line = ctx->line;
		if (ev == SPOE_EV_CLI_SESS || ev == SPOE_EV_SRV_SESS)
			continue;   /* at post-parse, where the mode is known */
		if (SPOE_EV_IS_TCP(ev))
			tcp_rules_prepend_action(px, (enum tcp_rule_set)spoe_ev_rows[ev].set,
						 &spoe_event_act, snd);
		else
			http_rules_prepend_action(ctx, px, (enum http_rule_set)spoe_ev_rows[ev].set,
						  &spoe_event_act, snd);
	}
	return 0;
}

/* Backends of the agents, filters of send-spoe-group. */
static int spoe_postparse(void)
{
	int errors = 0;

	for (struct spoe_agent *ag = spoe_agents; ag; ag = ag->next) {
		if (!ag->engine)
			continue;   /* its file failed */
		for (int ev = 0; ev < SPOE_EV_COUNT; ev++) {
			int tcp = SPOE_EV_IS_TCP(ev);

			if (ev == SPOE_EV_SRV_SESS && ag->nev[ev] && ag->px->mode == PR_MODE_TCP &&
			    !(ag->px->cap & PR_CAP_BE)) {
				log_alert("%s:%d: spoe-agent '%s': event on-server-session in mode tcp "
					  "runs with the tcp-response content rules, which '%s' has not "
					  "(put the filter in a backend or listen)", ag->file, ag->line,
					  ag->id, ag->px->name);
				errors++;
			}
			if (!ag->nev[ev] || ev == SPOE_EV_CLI_SESS || ev == SPOE_EV_SRV_SESS ||
			    (ag->px->mode == PR_MODE_TCP) == tcp)
				continue;
			/* HTTP events need HTTP; the content rules of an HTTP
			 * stream cannot wait, so TCP events need mode tcp */
			log_alert("%s:%d: spoe-agent '%s': event %s needs a proxy in mode %s ('%s' "
				  "is not)", ag->file, ag->line, ag->id, spoe_ev_rows[ev].name,
				  tcp ? "tcp" : "http", ag->px->name);
			errors++;
		}
		if (log_open(&ag->loggers) == -1)
			errors++;
		ag->be = proxy_find(ag->be_name, PR_CAP_BE);
		if (!ag->be) {
			log_alert("%s:%d: spoe-agent '%s': use-backend '%s': no such backend",
				  ag->file, ag->line, ag->id, ag->be_name);
			errors++;
		} else if (ag->be->mode != PR_MODE_TCP) {
			log_alert("%s:%d: spoe-agent '%s': use-backend '%s' must be in mode tcp (its "
				  "servers are SPOP agents)", ag->file, ag->line, ag->id, ag->be_name);
			errors++;
		}
	}
	for (struct spoe_send *snd = spoe_sends; snd; snd = snd->next) {
		struct spoe_agent *ag;
		struct spoe_group *g = NULL;

		if (snd->event == SPOE_EV_CLI_SESS || snd->event == SPOE_EV_SRV_SESS) {
			/* the first rule of the request (response) sets its mode
			 * runs, before the other events (prepended after them) */
			struct cfg_ctx ctx = { .file = snd->file, .line = snd->line, .px = snd->px };
			int res = snd->event == SPOE_EV_SRV_SESS;

			if (snd->px->mode == PR_MODE_TCP)
				tcp_rules_prepend_action(snd->px, res ? TCP_RS_RES : TCP_RS_REQ,
							 &spoe_event_act, snd);
			else
				http_rules_prepend_action(&ctx, snd->px, res ? HTTP_RS_RES : HTTP_RS_REQ,
							  &spoe_event_act, snd);
			continue;
		}
		if (snd->event >= 0)
			continue;   /* an event's: resolved already */
		for (ag = spoe_agents; ag; ag = ag->next)
			if (ag->px == snd->px && ag->engine && strcmp(ag->engine, snd->engine) == 0)
				break;
		if (ag)
			for (g = ag->groups; g && strcmp(g->id, snd->group); g = g->next)
				;
		if (!ag) {
			log_alert("%s:%d: send-spoe-group: no 'filter spoe' with engine '%s' in '%s'",
				  snd->file, snd->line, snd->engine, snd->px->name);
			errors++;
		} else if (!g) {
			log_alert("%s:%d: send-spoe-group: engine '%s' has no spoe-group '%s' (its "
				  "spoe-agent lists its groups with 'groups')", snd->file, snd->line,
				  snd->engine, snd->group);
			errors++;
		} else {
			snd->ag = ag;
			snd->msgs = g->msgs;
			snd->n = g->n;
			snd->what = g->id;
		}
	}
	return errors;
}

static struct http_filter_kw spoe_filters[] = {
	{ "spoe", spoe_filter_parse, NULL },
};

SLUICE_INIT(spoe_register)
{
	http_filter_register(spoe_filters, ARRAY_SIZE(spoe_filters));
	act_register(spoe_group_act, ARRAY_SIZE(spoe_group_act));
	cfg_register_postparse(spoe_postparse, 40);
	spoe_slot = stream_ext_register(strm_free);
}
