/* The server side of a stream as one state machine (srv_side.h): every
 * transition asserts the state it leaves, and the server's slot count and
 * the connection's owner change only here. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sluice/common.h>
#include <sluice/counters.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/srv_side.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

const char *ss_state_str(enum ss_state st)
{
	static const char *const names[] = {
		[SS_NONE] = "NONE", [SS_WANT] = "WANT", [SS_QUEUED] = "QUEUE",
		[SS_ASSIGNED] = "ASS", [SS_TAR] = "TAR", [SS_CONN] = "CON",
		[SS_EST] = "EST", [SS_KEPT] = "KEPT",
	};

	return (unsigned)st < ARRAY_SIZE(names) ? names[st] : "?";
}

void ss_check(const struct stream *s)
{
	const struct srv_side *ss = &s->ss;
	int slot = ss->st == SS_ASSIGNED || ss->st == SS_TAR || ss->st == SS_CONN ||
		   ss->st == SS_EST;
	int conn = ss->st == SS_CONN || ss->st == SS_EST || ss->st == SS_KEPT;

	BUG_ON(!s->li, "stream without its listener");
	BUG_ON(!s->fe || !s->be, "stream without its frontend or backend");
	BUG_ON(slot != !!ss->target, "a slot is held exactly in ASSIGNED, TAR, CONN and EST");
	BUG_ON((ss->st == SS_WANT) != !!ss->want, "<want> is set exactly in WANT");
	BUG_ON(conn != (s->srv.fd >= 0), "a server socket exists exactly in CONN, EST and KEPT");
	BUG_ON(conn != !!ss->conn_srv, "a connection has its server exactly while it exists");
	BUG_ON(conn && ss->st != SS_KEPT && ss->conn_srv != ss->target,
	       "a connection in use belongs to the target");
	BUG_ON(ss->park && ss->st != SS_KEPT, "only a kept connection is parked");
	BUG_ON(ss->st != SS_QUEUED && (ss->q_prev || ss->q_next || ss->q_srv),
	       "queue links outside QUEUED");
}

/* The slot accounting of <srv>: one more stream served. */
static void ss_take_slot(struct stream *s, struct server *srv)
{
	counters_sess_start(&srv->counters, tick_sec(), tick_wall());
	s->ss.target = srv;
}

/* Frees the slot held, if any. Returns its server. */
static struct server *ss_drop_slot(struct stream *s)
{
	struct server *srv = s->ss.target;

	if (srv) {
		BUG_ON(srv->counters.cur_sess == 0, "server slot count underflow");
		srv->counters.cur_sess--;
		s->ss.target = NULL;
	}
	return srv;
}

void ss_assign(struct stream *s, struct server *srv)
{
	struct srv_side *ss = &s->ss;

	BUG_ON(ss->st != SS_NONE && ss->st != SS_WANT && ss->st != SS_ASSIGNED &&
	       ss->st != SS_TAR, "ss_assign() from a state with a connection or in a queue");
	if (ss->target == srv && srv)
		return;
	ss->want = NULL;
	ss_drop_slot(s);
	if (!srv) {
		ss->st = SS_NONE;
		return;
	}
	ss_take_slot(s, srv);
	ss->st = SS_ASSIGNED;
}

void ss_want(struct stream *s, struct server *srv)
{
	struct srv_side *ss = &s->ss;

	BUG_ON(ss->st != SS_NONE && ss->st != SS_ASSIGNED, "ss_want() from a busy state");
	ss_drop_slot(s);
	ss->want = srv;
	ss->st = SS_WANT;
}

void ss_connecting(struct stream *s)
{
	struct srv_side *ss = &s->ss;

	BUG_ON(ss->st != SS_ASSIGNED && ss->st != SS_TAR, "ss_connecting() without a target");
	BUG_ON(s->srv.fd < 0, "ss_connecting() without a socket");
	ss->conn_srv = ss->target;
	ss->reused = 0;
	ss->st = SS_CONN;
}

void ss_established(struct stream *s, int reused)
{
	struct srv_side *ss = &s->ss;

	BUG_ON(ss->st != SS_CONN && ss->st != SS_ASSIGNED && ss->st != SS_TAR,
	       "ss_established() from a wrong state");
	BUG_ON(s->srv.fd < 0, "ss_established() without a socket");
	ss->conn_srv = ss->target;
	ss->reused = reused;
	ss->st = SS_EST;
}

void ss_conn_lost(struct stream *s)
{
	struct srv_side *ss = &s->ss;

	BUG_ON(!ss->target || ss->st == SS_QUEUED, "ss_conn_lost() without a target");
	conn_close(&s->srv);
	ss->conn_srv = NULL;
	ss->st = SS_TAR;
}

/* Out of the queue, the connection (unparked first) closed, no wanted
 * server: what any state leaves when the exchange stops at the server. */
static void ss_drop_conn(struct stream *s)
{
	struct srv_side *ss = &s->ss;

	if (ss->st == SS_QUEUED)
		ss_dequeue(s, 0);
	srv_idle_unpark(ss->park);
	ss->park = NULL;
	conn_close(&s->srv);
	s->srv.flags = 0;
	ss->conn_srv = NULL;
	ss->want = NULL;
}

void ss_abort(struct stream *s)
{
	BUG_ON(s->ss.st == SS_KEPT, "ss_abort() of a kept connection");
	ss_drop_conn(s);
	s->ss.st = s->ss.target ? SS_ASSIGNED : SS_NONE;
}

struct server *ss_release(struct stream *s)
{
	ss_drop_conn(s);
	s->ss.st = SS_NONE;
	return ss_drop_slot(s);
}

/* srv_idle_get() gives the parked connection of stream <owner> to another
 * stream (it already dropped the entry): the owner forgets it. */
static int ss_steal(void *owner, struct ssl_st **ssl)
{
	struct stream *s = owner;
	struct server *srv;
	int fd;

	s->ss.park = NULL;
	chan_release(&s->res);
	s->res.flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
	fd = ss_unkeep(s, &srv, ssl);
	conn_io_hand_off(&s->srv.io);   /* the taker's watcher goes on from ours */
	return fd;
}

struct server *ss_keep(struct stream *s, int park)
{
	struct srv_side *ss = &s->ss;
	struct server *freed;

	BUG_ON(ss->st != SS_EST, "ss_keep() of a connection not established");
	freed = ss_drop_slot(s);
	ss->reused++;   /* the exchange it carried is over */
	ss->st = SS_KEPT;
	if (park)
		ss->park = srv_idle_park(ss->conn_srv, s, ss_steal, ss->reused);
	return freed;
}

int ss_unkeep(struct stream *s, struct server **srv, struct ssl_st **ssl)
{
	struct srv_side *ss = &s->ss;

	BUG_ON(ss->st != SS_KEPT, "ss_unkeep() without a kept connection");
	srv_idle_unpark(ss->park);
	ss->park = NULL;
	*srv = ss->conn_srv;
	ss->conn_srv = NULL;
	ss->st = SS_NONE;
	return stream_detach_srv(s, ssl);
}

/* ---- queues: a stream bound to one server (persistence) waits in that
 * server's queue, the others in the backend's ---- */

struct queue_ref {
	struct stream **head, **tail;
	int            *nbpend, *max;
	uint64_t       *idx;
};

static struct queue_ref queue_of(struct proxy *be, struct server *srv)
{
	if (srv)
		return (struct queue_ref){ &srv->queue_head, &srv->queue_tail, &srv->nbpend,
					   &srv->max_nbpend, &srv->queue_idx };
	return (struct queue_ref){ &be->queue_head, &be->queue_tail, &be->nbpend,
				   &be->max_nbpend, &be->queue_idx };
}

int ss_queue_before(const struct stream *a, const struct stream *b)
{
	if (a->ss.q_class != b->ss.q_class)
		return a->ss.q_class < b->ss.q_class;
	if (a->ss.q_key != b->ss.q_key)
		return a->ss.q_key < b->ss.q_key;
	return a->t_queue < b->t_queue;
}

void ss_enqueue(struct stream *s, struct server *srv)
{
	struct srv_side *ss = &s->ss;
	struct queue_ref q = queue_of(s->be, srv);
	struct stream *after;

	BUG_ON(ss->st != SS_NONE && ss->st != SS_WANT, "ss_enqueue() from a busy state");
	ss->want = NULL;
	ss->st = SS_QUEUED;
	s->t_queue = tick_ev_now();
	ss->q_srv = srv;
	ss->q_idx = *q.idx;
	ss->q_class = s->prio_class;
	ss->q_key = (int64_t)(s->t_queue * 1000.0) + s->prio_offset;
	/* in order: without priorities, every newcomer goes last at once */
	for (after = *q.tail; after && ss_queue_before(s, after); after = after->ss.q_prev)
		;
	ss->q_prev = after;
	ss->q_next = after ? after->ss.q_next : *q.head;
	if (after)
		after->ss.q_next = s;
	else
		*q.head = s;
	if (ss->q_next)
		ss->q_next->ss.q_prev = s;
	else
		*q.tail = s;
	if (++*q.nbpend > *q.max)
		*q.max = *q.nbpend;
}

void ss_dequeue(struct stream *s, int served)
{
	struct srv_side *ss = &s->ss;
	struct queue_ref q = queue_of(s->be, ss->q_srv);
	int pos = (int)(*q.idx - ss->q_idx);

	BUG_ON(ss->st != SS_QUEUED, "ss_dequeue() of a stream not queued");
	BUG_ON(*q.nbpend <= 0, "queue count underflow");
	if (ss->q_prev)
		ss->q_prev->ss.q_next = ss->q_next;
	else
		*q.head = ss->q_next;
	if (ss->q_next)
		ss->q_next->ss.q_prev = ss->q_prev;
	else
		*q.tail = ss->q_prev;
	ss->q_prev = ss->q_next = NULL;
	--*q.nbpend;
	if (served)
		++*q.idx;
	if (ss->q_srv)
		s->srv_qpos = pos;
	else
		s->be_qpos = pos;
	ss->q_srv = NULL;
	ss->st = SS_NONE;
	s->tw = tick_ev_to_ms(tick_ev_now() - s->t_queue);
}
