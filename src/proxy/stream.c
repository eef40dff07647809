/* Streams: accept, connect with retries, run both channels, half-close,
 * lazy inactivity timers, counters and the tcplog line (stream.h). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/backend.h>
#include <sluice/buf.h>
#include <sluice/listener.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/netscaler.h>
#include <sluice/px_tcp.h>
#include <sluice/proxyproto.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/ssl_cfg.h>
#include <sluice/stktable.h>
#include <sluice/stream_trace.h>
#include <sluice/tcp_rules.h>
#include <sluice/ticks.h>
#include <sluice/vars.h>

#include "stream_int.h"

static struct {
	struct pool   *pool;
	struct stream *list;
	struct pool   *addr_pool;   /* stream destination addresses */
	int            count;
	uint64_t       next_id;
	void         (*idle_cb)(void);
	ev_tstamp      spread_start;  /* soft stop: idle streams close in turn from */
	ev_tstamp      spread_len;    /* ... over this long; 0: at their own timeouts */
	int            killing;   /* stream_kill_all() runs: no new work */
	const struct stream_proto *protos[PR_MODE_HTTP + 1];   /* by frontend mode */
	struct server *kill_list;   /* servers whose sessions are to be shut down */
	ev_timer       kill_timer;  /* runs those shutdowns at the next iteration */
	void         (*ext_release[STRM_EXT_MAX])(struct stream *s);   /* free s->ext[i] */
	int            n_ext;
} strm;

void stream_proto_register(int mode, const struct stream_proto *sp)
{
	BUG_ON(mode < 0 || mode > PR_MODE_HTTP, "stream protocol for an unknown mode");
	strm.protos[mode] = sp;
}

char strm_err_char(enum strm_err e)
{
	static const char c[] = "-CSPLRIDKUcs";

	return (unsigned)e < sizeof(c) - 1 ? c[e] : '?';
}

char strm_fin_char(enum strm_fin f)
{
	static const char c[] = "-RQCHDLT";

	return (unsigned)f < sizeof(c) - 1 ? c[f] : '?';
}

int stream_killing(void)
{
	return strm.killing;
}

const struct stream_proto *stream_proto_of(int mode)
{
	return mode >= 0 && mode <= PR_MODE_HTTP ? strm.protos[mode] : NULL;
}

static void stream_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
static int stream_read_proxy(struct stream *s);
static int stream_cip_awaited(const struct stream *s);
static int stream_start(struct stream *s);
static int stream_ssl_handshake(struct stream *s, struct conn *c);
static int stream_read_proxy_exact(struct stream *s);
static void stream_unlink(struct stream *s, int conn);
static void stream_idle_check(void);

struct stream *stream_first(void)
{
	return strm.list;
}

int stream_count(void)
{
	return strm.count;
}

void stream_set_idle_cb(void (*cb)(void))
{
	strm.idle_cb = cb;
}

/* ---- timers ---- */

static ev_tstamp side_deadline(ev_tstamp last, uint32_t tmo_ms)
{
	return tmo_ms ? last + tick_to_ev(tmo_ms) : 0;
}

/* Earliest deadline of <s> but the inspect-delay's, 0 if none. <which>
 * tells what expires then; for the protocol's own, <kind> its code. */
static ev_tstamp stream_deadline_io(const struct stream *s, enum strm_timer *which, int *kind)
{
	const struct proxy_timeouts *fe = &s->fe->timeout, *be = &s->be->timeout;
	ev_tstamp d = 0, x;
	uint32_t ct, st;
	/* set-timeout gives the stream its own */
	uint32_t tun = s->tmo[STRM_TMO_TUNNEL] ? s->tmo[STRM_TMO_TUNNEL] : be->tunnel;

	*which = STRM_T_NONE;
	if (s->proto->deadline && (d = s->proto->deadline(s, kind))) {
		*which = STRM_T_PROTO;
		return d;
	}
	if (s->ss.st == SS_TAR) {
		*which = STRM_T_TURNAROUND;
		return s->t_tar;
	}
	if (s->ss.st == SS_QUEUED) {
		/* timeout queue, else timeout connect, as in HAProxy */
		uint32_t q = be->queue ? be->queue : be->connect;

		if (q && (x = side_deadline(s->t_queue, q))) {
			d = x;
			*which = STRM_T_QUEUE;
		}
	}
	/* The tunnel timeout covers both sides, until one half-closes and a
	 * client-fin/server-fin timeout takes over, as in HAProxy. */
	if (s->ss.st == SS_EST && tun &&
	    s->proto->tunnel(s) &&
	    !(((s->req.flags | s->res.flags) & (CH_F_SHUTR | CH_F_SHUTW)) &&
	      (fe->client_fin || be->server_fin))) {
		x = side_deadline(MAX(s->cli.last_act, s->srv.last_act), tun);
		*which = STRM_T_CLI;
		return x;
	}
	if (s->ss.st == SS_CONN && (x = side_deadline(s->t_conn, be->connect))) {
		d = x;
		*which = STRM_T_CONNECT;
	}
	/* A side's timeout runs only while we wait for that side: a peer
	 * stalled because the other one is slow is not to blame. */
	ct = ((s->req.flags & CH_F_SHUTR) || (s->res.flags & CH_F_SHUTW)) && fe->client_fin ?
	     fe->client_fin : s->tmo[STRM_TMO_CLIENT] ? s->tmo[STRM_TMO_CLIENT] : fe->client;
	if ((s->cli.flags & CO_F_WAITING) && (x = side_deadline(s->cli.last_act, ct)) &&
	    (!d || x < d)) {
		d = x;
		*which = STRM_T_CLI;
	}
	if (s->ss.st == SS_EST && (s->srv.flags & CO_F_WAITING)) {
		st = ((s->res.flags & CH_F_SHUTR) || (s->req.flags & CH_F_SHUTW)) && be->server_fin ?
		     be->server_fin : s->tmo[STRM_TMO_SERVER] ? s->tmo[STRM_TMO_SERVER] : be->server;
		if ((x = side_deadline(s->srv.last_act, st)) && (!d || x < d)) {
			d = x;
			*which = STRM_T_SRV;
		}
	}
	return d;
}

/* Soft stop with close-spread-time: when idle stream <s> closes. Its place
 * in the window comes from its id through a golden-ratio hash, so that
 * streams accepted one after another fall far apart and the closes are
 * spread evenly, whenever each one became idle. */
static ev_tstamp stream_stop_turn(const struct stream *s)
{
	double f = (double)((s->uniq_id * 0x9E3779B97F4A7C15ull) >> 11) / 9007199254740992.0;

	return strm.spread_start + f * strm.spread_len;
}

/* Earliest deadline of <s>, 0 if none, and what expires then (<kind>: the
 * protocol's code when STRM_T_PROTO). */
static ev_tstamp stream_deadline(const struct stream *s, enum strm_timer *which, int *kind)
{
	ev_tstamp d = stream_deadline_io(s, which, kind), x;

	if (strm.spread_len > 0 && s->proto->idle && s->proto->idle(s) &&
	    !(s->fe->options & PR_O_IDLE_CLOSE) && (x = stream_stop_turn(s)) && (!d || x < d)) {
		*which = STRM_T_STOP;
		return x;
	}

	if (s->inspect_end && (s->state == ST_INSPECT || (s->tcp_flags & STRM_F_RES_INSPECT)) &&
	    (!d || s->inspect_end < d)) {
		*which = STRM_T_INSPECT;
		return s->inspect_end;
	}
	if (unlikely(s->act_exp) && (!d || s->act_exp < d)) {
		*which = STRM_T_ACT;
		return s->act_exp;
	}
	return d;
}

/* Arms the timer only when the deadline moved earlier; a later deadline is
 * found when the early timer fires (libev's "be smart about timeouts"). */
static void stream_arm(struct stream *s)
{
	enum strm_timer which;
	int kind;
	ev_tstamp d = stream_deadline(s, &which, &kind);

	if (!d) {
		if (s->armed) {
			ev_timer_stop(global.loop, &s->timer);
			s->armed = 0;
		}
		return;
	}
	if (s->armed && s->armed <= d)
		return;
	ev_timer_stop(global.loop, &s->timer);
	ev_timer_set(&s->timer, MAX(d - tick_ev_now(), 0.0), 0.);
	ev_timer_start(global.loop, &s->timer);
	s->armed = d;
}

/* ---- the destination address ---- */

/* Gives <s> a block for its destination address (s->dst, contents
 * undefined). Returns it, or NULL when memory is exhausted. */
static struct sockaddr_storage *stream_dst_alloc(struct stream *s)
{
	if (!strm.addr_pool)
		strm.addr_pool = pool_create("stream_addr", sizeof(struct sockaddr_storage));
	return s->dst = pool_alloc(strm.addr_pool);
}

const struct sockaddr_storage *stream_dst(struct stream *s)
{
	static struct sockaddr_storage unknown;   /* no memory: reported as unknown */

	if (!s->dst) {
		socklen_t l = sizeof(*s->dst);

		if (!stream_dst_alloc(s))
			return &unknown;
		if (getsockname(s->cli.fd, (struct sockaddr *)s->dst, &l) == -1)
			memset(s->dst, 0, sizeof(*s->dst));
	}
	return s->dst;
}

/* ---- life cycle ---- */

uint64_t stream_next_id(void)
{
	return strm.next_id++;
}

int stream_fail(struct stream *s, enum strm_err t0, enum strm_fin t1)
{
	if (s->proto->fail) {
		if (s->ss.st == SS_QUEUED)
			ss_dequeue(s, 0);
		if (s->proto->fail(s, t0, t1) == 0)
			return 0;
	}
	stream_close(s, t0, t1);
	return -1;
}

void stream_close(struct stream *s, enum strm_err t0, enum strm_fin t1)
{
	struct server *freed;

	ss_check(s);
	if (s->ss.st == SS_QUEUED)
		ss_dequeue(s, 0);   /* first: the log line reports the time queued */
	s->term_err = t0;
	s->term_fin = t1;
	STREAM_TRACE(s, t0 == SE_NONE || t0 == SE_CLI_ABORT ? STRM_EV_FREE : STRM_EV_ERR);
	if (t0 == SE_CLI_ABORT || t0 == SE_CLI_TO) {
		s->fe->fe_counters.cli_aborts++;
		s->be->be_counters.cli_aborts++;
		if (s->ss.target)
			s->ss.target->counters.cli_aborts++;
	} else if ((t0 == SE_SRV_ABORT || t0 == SE_SRV_TO) && t1 == SF_DATA) {
		s->be->be_counters.srv_aborts++;
		if (s->ss.target)
			s->ss.target->counters.srv_aborts++;
	}
	stream_ext_release(s);   /* first: nothing it runs may see the stream go */
	s->proto->release(s);
	stream_ext_release(s);   /* what the log line's fetches made (a Lua fetch) */
	stk_stream_end(s);
	{
		long tc = s->t_est ? tick_ev_to_ms(s->t_est - s->t_conn) : -1;
		long tt = tick_ev_to_ms(tick_ev_now() - s->t_accept);

		counters_sess_times(&s->be->be_counters, tc, tt);
		if (s->ss.target)
			counters_sess_times(&s->ss.target->counters, tc, tt);
	}

	ev_timer_stop(global.loop, &s->timer);
	if (s->tcp_flags & STRM_F_DROP)
		conn_set_drop(&s->cli);
	conn_close(&s->cli);
	/* an event fed to a stopped watcher (a protocol's process) must not outlive it */
	ev_clear_pending(global.loop, &s->cli.io);
	freed = ss_release(s);
	chan_release(&s->req);
	chan_release(&s->res);
	if (s->dst)
		pool_free(strm.addr_pool, s->dst);
	stream_pp_free(s);
	var_store_free(&s->vars);
	tcp_rules_stream_release(s);

	stream_be_uncount(s);
	stream_unlink(s, !(s->tcp_flags & STRM_F_MUX));
	backend_srv_freed(freed);   /* the slot it held goes to the oldest waiter */
	stream_idle_check();
}

/* The connection of frontend <fe>, listener <li> ends: its counts go. */
static void stream_conn_uncount(struct proxy *fe, struct listener *li)
{
	fe->feconn--;
	fe->fe_counters.cur_sess--;
	li->counters.cur_sess--;
	global.curconn--;
	global.jobs--;
	listener_release(li);
}

/* Removes <s> from the live streams and frees it; <conn>: it was a client
 * connection, whose counts end with it. */
static void stream_unlink(struct stream *s, int conn)
{
	if (conn)
		stream_conn_uncount(s->fe, s->li);
	if (s->prev)
		s->prev->next = s->next;
	else
		strm.list = s->next;
	if (s->next)
		s->next->prev = s->prev;
	strm.count--;
	if (unlikely(global.prof_tasks))
		prof_forget(&s->prof);
	pool_free(strm.pool, s);
}

/* During a soft stop, the last stream (or connection) gone ends it. */
static void stream_idle_check(void)
{
	if (!strm.count && strm.idle_cb)
		strm.idle_cb();
}

/* ---- multiplexed client connections ---- */

void stream_give_cli(struct stream *s, struct conn *c, struct buf **rx)
{
	BUG_ON(s->txn || s->ss.st != SS_NONE, "stream_give_cli() of a stream at work");
	ev_timer_stop(global.loop, &s->timer);
	conn_want(&s->cli, 0);
	ev_clear_pending(global.loop, &s->cli.io);
	conn_io_hand_off(&s->cli.io);
	*c = s->cli;
	*rx = s->req.buf;
	s->req.buf = NULL;
	chan_release(&s->req);
	chan_release(&s->res);
	stk_stream_end(s);
	if (s->dst)
		pool_free(strm.addr_pool, s->dst);
	stream_pp_free(s);
	var_store_free(&s->vars);
	tcp_rules_stream_release(s);
	stream_be_uncount(s);
	/* the connection's counts, and its place in stream_count(), are the
	 * multiplexer's now: only the stream goes */
	strm.count++;
	stream_unlink(s, 0);
}

void stream_conn_end(struct proxy *fe, struct listener *li)
{
	stream_conn_uncount(fe, li);
	strm.count--;
	stream_idle_check();
}

struct stream *stream_new_mux(struct listener *li, const struct conn *c,
                              const struct sockaddr_storage *src,
                              const struct sockaddr_storage *dst,
                              const struct conn_mux_ops *ops, void *ctx)
{
	struct proxy *fe = li->px;
	struct stream *s = pool_alloc(strm.pool);

	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->proto = strm.protos[fe->mode];
	s->uniq_id = stream_next_id();
	s->fe = fe;
	s->li = li;
	s->be = fe->defbe ? fe->defbe : fe;
	s->cli_addr = *src;
	if (dst) {
		if (stream_dst_alloc(s))
			*s->dst = *dst;
	}
	s->cli.fd = c->fd;
	s->cli.ssl = c->ssl;
	s->cli.flags = CO_F_CONNECTED | CO_F_MUX | CO_F_RD_READY;
	s->cli.mux = ops;
	s->cli.mux_ctx = ctx;
	s->srv.fd = -1;
	s->t_accept = s->cli.last_act = tick_ev_now();
	clock_gettime(CLOCK_REALTIME, &s->accept_date);
	ev_io_init(&s->cli.io, stream_io_cb, c->fd, 0);   /* only ever fed, never started */
	s->cli.io.data = s;
	ev_init(&s->timer, stream_timer_cb);
	s->tcp_flags = STRM_F_MUX | STRM_F_MUX_START;
	s->req.flags |= CH_F_NOSPLICE;
	s->res.flags |= CH_F_NOSPLICE;
	s->state = ST_HTTP;

	s->next = strm.list;
	if (strm.list)
		strm.list->prev = s;
	strm.list = s;
	strm.count++;
	if (s->proto->init(s) == -1)
		return NULL;
	ev_feed_event(global.loop, &s->cli.io, EV_CUSTOM);
	return s;
}

void stream_mux_wake(struct stream *s, int events)
{
	ev_feed_event(global.loop, &s->cli.io, events);
}

void stream_set_tos(struct stream *s, int tos)
{
	if (s->cli.fd < 0)
		return;
	if (setsockopt(s->cli.fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) == -1)
		setsockopt(s->cli.fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
}

void stream_set_mark(struct stream *s, int mark)
{
	if (s->cli.fd >= 0)
		setsockopt(s->cli.fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
}

void stream_set_priority(struct stream *s, int offset, long v)
{
	long max = offset ? 524287 : 2047;

	v = v < -max ? -max : v > max ? max : v;
	if (offset)
		s->prio_offset = (int)v;
	else
		s->prio_class = (int)v;
}

void stream_wake(struct stream *s)
{
	s->tcp_flags |= STRM_F_WOKEN;
	ev_feed_event(global.loop, &s->cli.io, EV_CUSTOM);
}

int stream_ext_register(void (*fn)(struct stream *s))
{
	BUG_ON(strm.n_ext == STRM_EXT_MAX, "more stream modules than STRM_EXT_MAX");
	strm.ext_release[strm.n_ext] = fn;
	return strm.n_ext++;
}

void stream_ext_release(struct stream *s)
{
	for (int i = 0; i < strm.n_ext; i++)
		if (s->ext[i])
			strm.ext_release[i](s);
}

void stream_attach_srv_mux(struct stream *s, const struct conn *c,
                           const struct conn_mux_ops *ops, void *ctx)
{
	s->srv.fd = c->fd;
	s->srv.ssl = c->ssl;
	s->srv.flags = CO_F_CONNECTED | CO_F_MUX;
	s->srv.events = 0;
	s->srv.mux = ops;
	s->srv.mux_ctx = ctx;
	ev_io_init(&s->srv.io, stream_io_cb, c->fd, 0);   /* only ever fed, never started */
	s->srv.io.data = s;
	s->req.flags |= CH_F_NOSPLICE;
	s->res.flags |= CH_F_NOSPLICE;
	if (s->ss.st != SS_EST) {
		ss_established(s, 1);
		s->t_conn = s->t_est = tick_ev_now();
	}
	s->srv.last_act = tick_ev_now();
}

int stream_srv_ready(struct stream *s)
{
	return s->proto->srv_ready ? s->proto->srv_ready(s) : 0;
}

/* Starts a side's inactivity period when we begin waiting for it. */
static void stream_mark_wait(struct conn *c, int waiting)
{
	if (waiting && !(c->flags & CO_F_WAITING)) {
		c->flags |= CO_F_WAITING;
		c->last_act = tick_ev_now();
	} else if (!waiting) {
		c->flags &= ~CO_F_WAITING;
	}
}

/* The events a TLS side needs on top of (or, handshaking, instead of) what
 * the channels ask: a read may wait for the socket to be writable and a
 * write for it to be readable. */
static int stream_ssl_events(const struct conn *c, int ev)
{
	if (c->flags & CO_F_SSL_HS)
		return c->ssl_ev;
	if (c->flags & CO_F_SSL_RD_WANT_W)
		ev |= EV_WRITE;
	if (c->flags & CO_F_SSL_WR_WANT_R)
		ev |= EV_READ;
	return ev;
}

void stream_update(struct stream *s)
{
	int cev = 0, sev = 0;

	ss_check(s);
	if (unlikely(s->tcp_flags & STRM_F_NICE))
		stream_nice_apply(s);
	if (!(s->req.flags & CH_F_SHUTR) && chan_has_room(&s->req))
		cev |= EV_READ;
	if (chan_pending(&s->res))
		cev |= EV_WRITE;
	if (unlikely(s->cli.ssl))
		cev = stream_ssl_events(&s->cli, cev);
	conn_want(&s->cli, cev);
	/* mode http: a client with its request sent is not waited for. */
	stream_mark_wait(&s->cli, s->state == ST_SSL ||
			 s->proto->cli_waiting(s, cev));
	if (s->srv.fd >= 0) {
		if (s->ss.st == SS_CONN) {
			sev = unlikely(s->srv.flags & CO_F_SOCKS) && s->socks_st == STRM_SOCKS_REPLY ?
			      EV_READ : EV_WRITE;
		} else {   /* established, or kept between requests */
			if (!(s->res.flags & CH_F_SHUTR) && chan_has_room(&s->res))
				sev |= EV_READ;
			if (chan_pending(&s->req))
				sev |= EV_WRITE;
		}
		if (unlikely(s->srv.ssl))
			sev = stream_ssl_events(&s->srv, sev);
		conn_want(&s->srv, sev);
		stream_mark_wait(&s->srv, s->ss.st == SS_EST && sev != 0 &&
				 s->proto->srv_waiting(s));
	}
	stream_arm(s);
}

void stream_attach_srv(struct stream *s, int fd, struct ssl_st *ssl, int reused)
{
	s->srv.fd = fd;
	s->srv.ssl = ssl;
	s->srv.flags = CO_F_CONNECTED | CO_F_TCP;
	if (ssl) {
		s->req.flags |= CH_F_NOSPLICE;
		s->res.flags |= CH_F_NOSPLICE;
	}
	s->srv.events = 0;
	/* the socket comes from the idle pool or another stream, whose
	 * watcher stopped in this iteration */
	conn_io_take_over(&s->srv.io, stream_io_cb, fd);
	s->srv.io.data = s;
	ss_established(s, reused);
	s->t_conn = s->t_est = s->srv.last_act = tick_ev_now();
}

int stream_detach_srv(struct stream *s, struct ssl_st **ssl)
{
	int fd = s->srv.fd;

	conn_want(&s->srv, 0);
	*ssl = s->srv.ssl;
	s->srv.ssl = NULL;
	s->srv.fd = -1;
	s->srv.flags = 0;
	return fd;
}

/* Accounts <in> bytes received from the client (<is_req>) or the server on
 * every counter they belong to. A server is charged the request bytes
 * received since the last charge once it serves the request (the head
 * arrives before the server is chosen), and the response bytes of its
 * connection. */
static void stream_count_bytes(struct stream *s, int is_req, uint64_t in)
{
	if (in)
		stk_count_bytes(s, is_req, in);
	if (is_req) {
		s->li->counters.bytes_in += in;
		s->fe->fe_counters.bytes_in += in;
		s->be->be_counters.bytes_in += in;
		if (s->ss.target && s->req.total != s->srv_bin_mark) {
			s->ss.target->counters.bytes_in += s->req.total - s->srv_bin_mark;
			s->srv_bin_mark = s->req.total;
		}
	} else {
		s->li->counters.bytes_out += in;
		s->fe->fe_counters.bytes_out += in;
		s->be->be_counters.bytes_out += in;
		if (s->ss.conn_srv)
			s->ss.conn_srv->counters.bytes_out += in;
	}
}

void stream_count_made(struct stream *s, uint64_t n)
{
	s->res.total += n;
	stream_count_bytes(s, 0, n);
}

enum chan_res stream_forward(struct stream *s, struct channel *ch, struct conn *src,
                                    struct conn *dst, int is_req)
{
	uint64_t in = 0, out = 0;
	enum chan_res r;
	ev_tstamp now = tick_ev_now();
	int ready = !!(src->flags & CO_F_RD_READY);

	r = chan_forward(ch, src, dst, &ready, &in, &out);
	if (!ready)
		src->flags &= ~CO_F_RD_READY;
	if (in || (ch->flags & CH_F_SHUTR))
		src->last_act = now;
	/* option independent-streams (of the frontend for the client, of the
	 * backend for the server): bytes sent refresh a side's timeout only
	 * while more wait for it (its write timeout), not while it is only
	 * read from */
	if (out && (likely(!((is_req ? s->be : s->fe)->options & PR_O_INDEP_STR)) ||
		    chan_pending(ch)))
		dst->last_act = now;
	if (in || (is_req && s->req.total != s->srv_bin_mark))
		stream_count_bytes(s, is_req, in);
	if (s->proto->count_bytes)
		s->proto->count_bytes(s, is_req, in, out);
	return r;
}

/* Runs the stream after an event: the PROXY header first, then its
 * protocol. */
static void stream_process(struct stream *s)
{
	enum chan_res r;

	if (likely(s->state != ST_PROXY)) {
		s->proto->process(s);
		return;
	}
	r = stream_forward(s, &s->req, &s->cli, NULL, 1);
	if (r != CHN_OK) {
		stream_close(s, r == CHN_SRC_ERR ? SE_CLI_ABORT : SE_SRV_ABORT, SF_REQ);
		return;
	}
	if (stream_read_proxy(s) == -1 || s->state == ST_PROXY || s->ss.st != SS_EST)
		return;  /* closed, waiting or connecting: watchers already set */
	s->proto->process(s);   /* connected at once: what came may leave */
}

static void stream_io_run(struct ev_loop *loop, ev_io *w, int revents);
static void stream_timer_run(struct ev_loop *loop, ev_timer *w, int revents);

/* The stream's callbacks, timed while profiling is on (profiling.h). */
void stream_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	if (unlikely(global.prof_tasks)) {
		uint64_t t0 = prof_begin(&((struct stream *)w->data)->prof, PROF_FN_STREAM_IO);

		stream_io_run(loop, w, revents);
		prof_end(PROF_FN_STREAM_IO, t0);
		return;
	}
	stream_io_run(loop, w, revents);
}

static void stream_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	if (unlikely(global.prof_tasks)) {
		uint64_t t0 = prof_begin(&container_of(w, struct stream, timer)->prof,
					 PROF_FN_STREAM_TIMER);

		stream_timer_run(loop, w, revents);
		prof_end(PROF_FN_STREAM_TIMER, t0);
		return;
	}
	stream_timer_run(loop, w, revents);
}

static void stream_io_run(struct ev_loop *loop, ev_io *w, int revents)
{
	struct stream *s = w->data;
	struct conn *c = (w == &s->cli.io) ? &s->cli : &s->srv;

	if (unlikely(revents & EV_CUSTOM) && c == &s->cli) {
		if (s->tcp_flags & STRM_F_MUX_START) {
			/* a multiplexed stream's first pass (stream_new_mux()) */
			s->tcp_flags &= ~STRM_F_MUX_START;
			s->proto->start(s);
			return;
		}
		if (!(revents & (EV_READ | EV_WRITE))) {
			stream_process(s);   /* stream_wake() */
			return;
		}
	}

	if (revents & EV_READ)
		c->flags |= CO_F_RD_READY;
	/* a TLS read that waited for the socket to be writable can go on */
	if (unlikely(c->flags & CO_F_SSL_RD_WANT_W) && (revents & EV_WRITE))
		c->flags |= CO_F_RD_READY;

	if (w == &s->srv.io && s->ss.st == SS_CONN && !(s->srv.flags & CO_F_SSL_HS)) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (unlikely(s->srv.flags & CO_F_SOCKS) && s->socks_st == STRM_SOCKS_REPLY) {
			int r = stream_socks_reply(s);

			if (r < 0) {
				stream_conn_failed(s, 0);
				return;
			}
			if (r > 0 || (s->srv.flags & CO_F_SOCKS))
				return;   /* (stream_update() done) */
		} else {
			if (getsockopt(s->srv.fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
				err = errno;
			if (err || stream_srv_up(s) == -1) {
				stream_conn_failed(s, 0);
				return;
			}
			if (s->srv.flags & CO_F_SOCKS)
				return;   /* the proxy's reply is awaited */
		}
	}
	if (unlikely(c->flags & CO_F_SSL_HS) && stream_ssl_handshake(s, c) != 0)
		return;
	if (unlikely(s->state == ST_PROXY) && ssl_bind_enabled(s->li->bc)) {
		stream_read_proxy_exact(s);
		return;
	}
	stream_process(s);
}

/* The client's TLS handshake failed (or timed out): HAProxy's connection
 * log line, and a close without the usual log line. */
static void stream_ssl_failed(struct stream *s, const char *reason)
{
	char line[512], src[64], date[48];
	struct tm tm;
	int n;

	if (s->fe->loggers.head || s->fe->loggers.use_global) {
		localtime_r(&s->accept_date.tv_sec, &tm);
		strftime(date, sizeof(date), "%d/%b/%Y:%H:%M:%S", &tm);
		n = snprintf(line, sizeof(line), "%s [%s.%03ld] %s/%s: SSL handshake failure (%s)",
			     addr_to_str(&s->cli_addr, src, sizeof(src)), date,
			     (long)(s->accept_date.tv_nsec / 1000000), s->fe->name,
			     s->li->bc->name ? s->li->bc->name : "1", reason);
		if (n > 0)
			log_send(&s->fe->loggers, LOG_L_INFO, line, MIN((size_t)n, sizeof(line) - 1));
	}
	s->fc_err = strcmp(reason, "timeout") == 0 ? 26 : 34;   /* SSL handshake timeout, failure */
	s->fe->fe_counters.failed_req++;
	s->li->counters.failed_req++;
	stream_close(s, SE_CLI_ABORT, SF_REQ);
}

/* Advances the TLS handshake of side <c>. Returns 0 when it is complete and
 * the stream goes on (the client side: the stream starts), 1 while it
 * waits (watchers set), -1 when the stream was closed or its connection
 * failed. */
static int stream_ssl_handshake(struct stream *s, struct conn *c)
{
	const char *reason = NULL;
	int r = ssl_sock_handshake(c, &reason);

	if (r > 0) {
		stream_update(s);
		return 1;
	}
	if (c == &s->srv) {
		if (r < 0) {
			log_warning("backend %s: server %s: TLS handshake failed: %s", s->be->name,
				    s->ss.target ? s->ss.target->name : "?", reason);
			s->bc_err = 34;   /* SSL handshake failure */
			stream_conn_failed(s, 0);
			return -1;
		}
		ss_established(s, 0);
		s->t_est = tick_ev_now();
		s->srv.last_act = s->t_est;
		if (stream_srv_ready(s) == -1) {
			stream_conn_failed(s, 0);
			return -1;
		}
		return 0;
	}
	if (r < 0) {
		stream_ssl_failed(s, reason);
		return -1;
	}
	s->cli.last_act = tick_ev_now();
	return stream_start(s) == -1 ? -1 : 1;
}

static void stream_timer_run(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct stream *s = container_of(w, struct stream, timer);
	enum strm_timer which;
	int kind = 0;
	ev_tstamp d;

	s->armed = 0;
	d = stream_deadline(s, &which, &kind);
	if (!d || d > tick_ev_now() + 0.0005) {
		stream_arm(s);
		return;
	}
	switch (which) {
	case STRM_T_INSPECT:
		/* the inspect-delay ran out: the rules decide on what is there */
		s->inspect_end = 0;
		stream_process(s);
		return;
	case STRM_T_TURNAROUND:
		stream_connect(s);
		return;
	case STRM_T_ACT:
		/* the action's wait is over: it goes on in this loop pass */
		s->act_exp = 0;
		s->tcp_flags |= STRM_F_ACT_EXP;
		stream_wake(s);
		return;
	case STRM_T_CONNECT:
		stream_conn_failed(s, 1);
		return;
	case STRM_T_QUEUE:
		/* Waited too long for a slot: 503 in mode http, else a close. */
		s->be->be_counters.failed_conns++;
		stream_fail(s, SE_SRV_TO, SF_QUEUE);
		return;
	case STRM_T_CLI:
		if (s->state == ST_SSL) {
			stream_ssl_failed(s, "timeout");
			return;
		}
		if (s->state == ST_PROXY)   /* timeout while waiting for the PROXY (CIP) header */
			s->fc_err = stream_cip_awaited(s) ? 20 : 13;
		stream_fail(s, SE_CLI_TO, s->ss.st == SS_EST ? SF_DATA :
			    s->state == ST_PROXY || s->state == ST_INSPECT ? SF_REQ : SF_CONN);
		return;
	case STRM_T_PROTO:
		s->proto->timeout(s, kind);
		return;
	case STRM_T_STOP:
		/* its turn to close in a soft stop: no word, no log, as at a
		 * keep-alive timeout */
		stream_close(s, SE_NONE, SF_NONE);
		return;
	case STRM_T_SRV:
	case STRM_T_NONE:
		stream_fail(s, SE_SRV_TO, SF_DATA);
		return;
	}
}

/* The client is known: tcp-request session rules, the forwarding method,
 * then the protocol starts. Returns 0, or -1 when the stream was closed. */
static int stream_start(struct stream *s)
{
	uint64_t opts = s->fe->options | s->be->options;

	if (tcp_rules_has(s->fe, TCP_RS_SESS)) {
		int pos = 0;

		if (tcp_rules_exec(s->fe, TCP_RS_SESS, s, &pos, 0) != TCP_V_ACCEPT) {
			s->fe->fe_counters.denied_sess++;
			s->li->counters.denied_sess++;
			s->tcp_flags |= STRM_F_NOLOG;
			stream_close(s, SE_PROXY, SF_REQ);
			return -1;
		}
	}
	if (opts & PR_O_SPLICE_AUTO) {
		s->req.flags |= CH_F_SPLICE_AUTO;
		s->res.flags |= CH_F_SPLICE_AUTO;
	}
	if (opts & PR_O_SPLICE_REQ)
		s->req.flags |= CH_F_SPLICE;
	if (opts & PR_O_SPLICE_RSP)
		s->res.flags |= CH_F_SPLICE;
	return s->proto->start(s);
}

/* The addresses of a PROXY header become the stream's (unless LOCAL). */
static void stream_proxy_apply(struct stream *s, const struct sockaddr_storage *src,
                               const struct sockaddr_storage *dst, int local)
{
	if (!local) {
		s->cli_addr = *src;
		/* stream_dst() allocates; the socket's own address is then
		 * replaced by the one the PROXY header gives */
		*(struct sockaddr_storage *)stream_dst(s) = *dst;
	}
}

/* Whether <s> starts with a PROXY header, with a NetScaler CIP header (the
 * CIP one comes first when both do, as in HAProxy). */
static int stream_wants_pp(const struct stream *s)
{
	return (s->li->flags & LI_F_ACCEPT_PROXY) || (s->tcp_flags & STRM_F_EXPECT_PROXY);
}

static int stream_wants_cip(const struct stream *s)
{
	return (s->li->flags & LI_F_ACCEPT_CIP) || (s->tcp_flags & STRM_F_EXPECT_CIP);
}

static int stream_cip_awaited(const struct stream *s)
{
	return stream_wants_cip(s) && !(s->tcp_flags & STRM_F_CIP_READ);
}

/* The fc_err number of the header error <err> stream_hdr_parse() gave. */
static int stream_hdr_err_code(const struct stream *s, const char *err)
{
	return stream_cip_awaited(s) ? ns_cip_err_code(err) : pp_err_code(err);
}

/* The PROXY header is bad or missing: counted, closed. <err> is HAProxy's
 * CO_ER_PRX_* number (fc_err), made the CIP one (18..21: closed, error,
 * timeout, truncated) when a NetScaler CIP header was awaited. Returns -1. */
static int stream_proxy_failed(struct stream *s, int err)
{
	if (stream_cip_awaited(s) && err >= 11 && err <= 14)
		err += 18 - 11;
	s->fc_err = (uint8_t)err;
	s->fe->fe_counters.failed_req++;
	s->li->counters.failed_req++;
	stream_close(s, SE_PROXY, SF_REQ);
	return -1;
}

/* Parses the header <s> expects now at p[0..len), as pp_parse() does. */
static int stream_hdr_parse(const struct stream *s, const char *p, size_t len,
                            struct sockaddr_storage *src, struct sockaddr_storage *dst,
                            int *local, const char **err)
{
	if (!stream_cip_awaited(s))
		return pp_parse(p, len, src, dst, local, err);
	*local = 0;
	return ns_cip_parse(p, len, s->li->bc->ns_cip_magic, src, dst, err);
}

/* A header was read: 1 when it was the CIP one and a PROXY one follows. */
static int stream_hdr_more(struct stream *s)
{
	if ((s->tcp_flags & STRM_F_CIP_READ) || !stream_wants_pp(s) || !stream_wants_cip(s))
		return 0;
	s->tcp_flags |= STRM_F_CIP_READ;
	return 1;
}

/* ST_PROXY: looks for the PROXY (or CIP) header in what the client sent. Returns 0
 * (waiting, or the stream moved on), or -1 when the stream was closed. */
static int stream_read_proxy(struct stream *s)
{
	struct buf *b = s->req.buf;
	struct sockaddr_storage src, dst;
	const char *err = NULL;
	int local, n = 0;

	if (b)
		n = stream_hdr_parse(s, b->area + b->head, b->data, &src, &dst, &local, &err);
	if (n == 0 && !(s->req.flags & CH_F_SHUTR) && (!b || chan_has_room(&s->req)))
		return 0;
	if (n < 0)    /* garbage */
		return stream_proxy_failed(s, stream_hdr_err_code(s, err));
	if (n == 0)   /* the client left (11: before a byte) or filled a buffer without a header */
		return stream_proxy_failed(s, b && b->data ? 14 : 11);
	stream_pp_keep(s, b->area + b->head, (size_t)n);
	b->head += (uint32_t)n;
	b->data -= (uint32_t)n;
	if (!b->data) {
		buf_put(b);
		s->req.buf = NULL;
	}
	stream_proxy_apply(s, &src, &dst, local);
	if (stream_hdr_more(s))
		return s->req.buf ? stream_read_proxy(s) : 0;
	return stream_start(s);
}

/* tcp-request connection rules, run on a stream not yet linked nor
 * counted. Returns 0 when accepted, or -1 after freeing <s> (a refusal:
 * counted in dcon, no log line). */
static int stream_accept_rules(struct stream *s)
{
	int pos = 0;

	if (tcp_rules_exec(s->fe, TCP_RS_CONN, s, &pos, 0) == TCP_V_ACCEPT)
		return 0;
	s->fe->fe_counters.denied_conn++;
	s->li->counters.denied_conn++;
	if (s->tcp_flags & STRM_F_DROP)
		conn_set_drop(&s->cli);
	conn_close(&s->cli);
	stk_stream_end(s);   /* what track-sc rules tracked */
	if (s->dst)
		pool_free(strm.addr_pool, s->dst);
	stream_pp_free(s);
	var_store_free(&s->vars);
	listener_release(s->li);
	pool_free(strm.pool, s);
	return -1;
}

/* Starts the client's TLS handshake; the stream starts once it is done (the
 * SNI known). Returns 0, or -1 when <s> was closed. */
static int stream_ssl_begin(struct stream *s)
{
	s->req.flags |= CH_F_NOSPLICE;
	s->res.flags |= CH_F_NOSPLICE;
	s->state = ST_SSL;
	if (ssl_bind_accept(&s->cli, s->li->bc) == -1) {
		stream_close(s, SE_RESOURCE, SF_REQ);
		return -1;
	}
	stream_update(s);
	return 0;
}

/* ST_PROXY on a TLS bind line: the PROXY header is read to its last byte and
 * not one byte further (what follows is the ClientHello, for OpenSSL to
 * read from the socket). The bytes are peeked, then only the header's are
 * taken. Returns 0 (waiting, or TLS started), or -1 when <s> was closed. */
static int stream_read_proxy_exact(struct stream *s)
{
	struct sockaddr_storage src, dst;
	const char *err = NULL;
	struct buf *b = s->req.buf;
	size_t have, room;
	ssize_t n, take;
	int local, r;

	if (!b && !(b = s->req.buf = buf_get()))
		return stream_proxy_failed(s, 4);
	if (!b->data)
		b->head = 0;
	have = b->data;
	room = buf_room(b, buf_size());
	if (!room)
		return stream_proxy_failed(s, 14);
	n = recv(s->cli.fd, b->area + b->head + have, room, MSG_PEEK);
	if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
		s->cli.flags &= ~CO_F_RD_READY;
		stream_update(s);
		return 0;
	}
	if (n <= 0)
		return stream_proxy_failed(s, n == 0 ? (have ? 14 : 11) : 12);
	r = stream_hdr_parse(s, b->area + b->head, have + (size_t)n, &src, &dst, &local, &err);
	if (r < 0)
		return stream_proxy_failed(s, stream_hdr_err_code(s, err));
	/* incomplete: every byte seen belongs to the header */
	take = r > 0 ? r - (ssize_t)have : n;
	if (recv(s->cli.fd, b->area + b->head + have, (size_t)take, 0) != take)
		return stream_proxy_failed(s, 12);
	b->data += (uint32_t)take;
	s->cli.last_act = tick_ev_now();
	if (r == 0) {
		stream_update(s);
		return 0;
	}
	stream_pp_keep(s, b->area + b->head, (size_t)r);
	chan_release(&s->req);
	stream_proxy_apply(s, &src, &dst, local);
	if (stream_hdr_more(s))
		return stream_read_proxy_exact(s);
	return stream_ssl_begin(s);
}

void stream_accept(struct listener *li, int fd, struct sockaddr_storage *addr, socklen_t alen)
{
	struct proxy *fe = li->px;
	struct stream *s;
	uint32_t sec = tick_sec();
	time_t wall;
	uint32_t rate;

	if (!strm.pool)
		strm.pool = pool_create("stream", sizeof(struct stream));
	s = pool_alloc(strm.pool);
	if (!s) {
		close(fd);
		listener_release(li);
		return;
	}
	memset(s, 0, sizeof(*s));
	s->proto = strm.protos[fe->mode];
	BUG_ON(!s->proto, "no stream protocol registered for the frontend's mode");
	s->uniq_id = stream_next_id();
	s->fe = fe;
	s->li = li;
	s->be = fe->defbe;
	s->cli_addr = *addr;
	s->cli.fd = fd;
	s->srv.fd = -1;
	s->t_accept = s->cli.last_act = tick_ev_now();
	clock_gettime(CLOCK_REALTIME, &s->accept_date);
	wall = s->accept_date.tv_sec;
	ev_io_init(&s->cli.io, stream_io_cb, fd, 0);
	s->cli.io.data = s;
	ev_init(&s->timer, stream_timer_cb);
	s->cli.flags = CO_F_CONNECTED;
	if (addr->ss_family != AF_UNIX) {
		s->cli.flags |= CO_F_TCP;
		conn_setup_tcp(fd, px_tcp_opts(fe, 0), 0);
	}
	if (unlikely(li->bc->nice))
		stream_set_nice(s, li->bc->nice);
	if (tcp_rules_has(fe, TCP_RS_CONN) && stream_accept_rules(s) == -1)
		return;

	s->next = strm.list;
	if (strm.list)
		strm.list->prev = s;
	strm.list = s;
	strm.count++;
	global.curconn++;
	global.jobs++;
	global.cumconn++;
	rate = freq_add(&global.conn_rate, sec);
	if (rate > global.max_conn_rate)
		global.max_conn_rate = rate;
	fe->feconn++;
	counters_sess_start(&fe->fe_counters, sec, wall);
	counters_sess_start(&li->counters, sec, wall);
	STREAM_TRACE(s, STRM_EV_NEW);

	if (!s->be)
		s->be = fe;
	if (s->proto->init(s) == -1)
		return;
	if (unlikely(ssl_bind_enabled(li->bc)) && !stream_wants_pp(s) && !stream_wants_cip(s)) {
		stream_ssl_begin(s);
		return;
	}
	if (stream_wants_pp(s) || stream_wants_cip(s)) {
		/* Nothing moves before the PROXY (or CIP) header says who the
		 * client is. */
		s->state = ST_PROXY;
		stream_update(s);
		return;
	}
	stream_start(s);
}

int stream_kill_server(struct server *srv)
{
	struct stream *s = strm.list;
	int n = 0;

	while (s) {
		/* its sessions: connecting to it, connected, or about to retry
		 * it (an exchange already answered here only keeps the server
		 * for its log line) */
		if (s->ss.target != srv ||
		    (s->ss.st != SS_CONN && s->ss.st != SS_EST && s->ss.st != SS_TAR)) {
			s = s->next;
			continue;
		}
		stream_close(s, SE_KILLED, s->ss.st == SS_EST ? SF_DATA : SF_CONN);
		n++;
		/* A close can hand a slot to a queued stream, which may change the
		 * list around us: start over (closed streams are gone from it). */
		s = strm.list;
	}
	return n;
}

static void stream_kill_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct server *srv;

	while ((srv = strm.kill_list)) {
		strm.kill_list = srv->kill_next;
		srv->kill_next = NULL;
		srv->flags &= ~SRV_F_KILL_SOON;
		stream_kill_server(srv);
	}
}

void stream_kill_server_soon(struct server *srv)
{
	if (srv->flags & SRV_F_KILL_SOON)
		return;
	srv->flags |= SRV_F_KILL_SOON;
	srv->kill_next = strm.kill_list;
	strm.kill_list = srv;
	if (!ev_is_active(&strm.kill_timer)) {
		ev_timer_init(&strm.kill_timer, stream_kill_cb, 0., 0.);
		ev_timer_start(global.loop, &strm.kill_timer);
	}
}

void stream_kill_server_cancel(struct server *srv)
{
	for (struct server **p = &strm.kill_list; *p; p = &(*p)->kill_next) {
		if (*p == srv) {
			*p = srv->kill_next;
			break;
		}
	}
	srv->kill_next = NULL;
	srv->flags &= ~SRV_F_KILL_SOON;
}

void stream_stop_spread(ev_tstamp start, ev_tstamp len)
{
	strm.spread_start = start;
	strm.spread_len = len;
	/* arming never closes: the timers fire from the loop */
	for (struct stream *s = strm.list; s; s = s->next)
		if (s->proto->idle && s->proto->idle(s))
			stream_arm(s);
}

void stream_kill_all(void)
{
	strm.idle_cb = NULL;
	strm.killing = 1;
	while (strm.list)
		stream_close(strm.list, SE_KILLED, strm.list->ss.st == SS_EST ? SF_DATA : SF_CONN);
	strm.killing = 0;   /* (a test harness starts again) */
}
