/* Backends: which server takes a stream (backend_assign_server():
 * persistence cookie, use-server, stick match, then load balancing with
 * the request's hash, or "wait here"), the hand-over of freed server slots
 * to the queues, and the redispatch rules of retries. */
#include <stdint.h>

#include <sluice/acl_px.h>
#include <sluice/backend.h>
#include <sluice/buf.h>
#include <sluice/common.h>
#include <sluice/lb.h>
#include <sluice/persist.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_side.h>
#include <sluice/stktable.h>
#include <sluice/stream.h>

/* Whether <srv> has a free connection slot now (maxconn, minconn). */
static int srv_has_slot(const struct server *srv)
{
	int max = srv_dynamic_maxconn(srv);

	return !max || srv->counters.cur_sess < (uint32_t)max;
}

/* <srv> binds the stream (persistence cookie, use-server, stick match) but
 * is full: the stream is to wait for it (SS_WANT). */
static enum be_assign backend_want(struct stream *s, struct server *srv)
{
	ss_want(s, srv);
	return BE_FULL_SRV;
}

/* What the choice left: the target, or why there is none. */
static enum be_assign backend_assigned(const struct stream *s)
{
	if (s->ss.target)
		return BE_ASSIGNED;
	return lb_has_usable(s->be) ? BE_ALL_FULL : BE_NONE;
}

/* What backend_prefer_last() returns when the stream is to wait for the
 * server it prefers (SS_WANT). */
static struct server backend_queued;

/* The server of the connection kept from the previous request (mode http,
 * s->ss.prefer) when load balancing may keep it: an algorithm that is no
 * hash of the request or client, the server usable, and a slot free or, if
 * not, its queue shorter than max-keep-alive-queue (-1: no limit, 0: never
 * queue; no limit after a 401 or 407). Returns it, &backend_queued when the
 * stream waits for it, or NULL (load balancing decides). */
static struct server *backend_prefer_last(struct stream *s)
{
	struct server *srv = s->ss.prefer;
	const struct proxy *be = s->be;

	if (be->lb.algo == LB_SOURCE || be->lb.algo >= LB_URI || srv->px != be ||
	    !server_usable(srv))
		return NULL;
	if (srv_has_slot(srv))
		return srv;
	if (!s->ss.prefer_auth && be->max_ka_queue >= 0 && srv->nbpend >= be->max_ka_queue)
		return NULL;
	backend_want(s, srv);
	return &backend_queued;
}

enum be_assign backend_assign_server(struct stream *s, enum be_pick how)
{
	struct lb_key key = { .src = &s->cli_addr };
	struct server *prev = s->ss.target, *srv;
	const int avoid_current = how == BE_PICK_AVOID;

	if (how == BE_PICK_ANY) {
		/* already bound to a full server: has it room now? */
		if (s->ss.st == SS_WANT) {
			srv = s->ss.want;
			if (!srv_has_slot(srv))
				return BE_FULL_SRV;
			ss_assign(s, srv);
			return BE_ASSIGNED;
		}
		/* the server a persistence cookie names, when it can serve */
		srv = s->ss.persist;
		if (srv && persist_srv_ready(srv)) {
			ss_assign(s, srv);
			return BE_ASSIGNED;
		}
		if (srv && srv->maxconn)
			return backend_want(s, srv);
		/* use-server, then the server an RDP cookie names: no load
		 * balancing */
		if ((srv = use_server_select(s->be, s)) || (srv = persist_rdp(s))) {
			if (!srv_has_slot(srv))
				return backend_want(s, srv);   /* full: wait in its queue */
			ss_assign(s, srv);
			stk_stick_store(s, 0);
			return BE_ASSIGNED;
		}
	}
	if (s->ss.lb_hashed) {
		key.hash = s->ss.lb_hash;
		key.has_hash = 1;
	} else if (s->be->lb.algo == LB_RDP_COOKIE && s->req.buf) {
		key.has_hash = lb_rdp_hash(s->be, (const uint8_t *)s->req.buf->area + s->req.buf->head,
					   s->req.buf->data, &key.hash);
	}
	/* On redispatch, try not to land on the server that just failed. */
	if (avoid_current && prev)
		prev->flags |= SRV_F_AVOID;
	srv = how == BE_PICK_ANY ? stk_stick_match(s) : NULL;
	if (srv && !srv_has_slot(srv)) {
		if (prev)
			prev->flags &= ~SRV_F_AVOID;
		return backend_want(s, srv);   /* stuck to a full server: wait for it */
	}
	if (!srv && how == BE_PICK_ANY && unlikely(s->ss.prefer))
		srv = backend_prefer_last(s);
	if (srv == &backend_queued)
		return BE_FULL_SRV;
	if (!srv)
		srv = lb_pick(s->be, &key);
	if (prev)
		prev->flags &= ~SRV_F_AVOID;
	for (int i = 0; avoid_current && srv == prev && i < s->be->nsrv; i++)
		srv = lb_pick(s->be, NULL);
	if (!srv && avoid_current && prev)
		return BE_ASSIGNED;   /* every other server is full: retry the same one */
	ss_assign(s, srv);
	stk_stick_store(s, 0);
	return backend_assigned(s);
}

/* ---- queues (srv_side.c keeps them): a freed slot goes to the first of
 * the heads of the server's queue and its backend's, by priority class,
 * then age plus priority offset, as HAProxy compares them ---- */

/* <srv> just freed a slot: the first of the heads of its own queue and of
 * its backend's takes it. */
static void queue_dequeue(struct server *srv)
{
	/* A waiter that fails at once frees the slot again and would call
	 * back in here, one level deeper per waiter: the running loop takes
	 * that slot instead. */
	if (srv->flags & SRV_F_DEQUEUING)
		return;
	srv->flags |= SRV_F_DEQUEUING;
	while (!stream_killing() && server_usable(srv) && srv_has_slot(srv)) {
		struct stream *a = srv->queue_head, *b = srv->px->queue_head, *q;

		q = !a ? b : !b ? a : ss_queue_before(b, a) ? b : a;
		if (!q)
			break;
		ss_dequeue(q, 1);
		ss_assign(q, srv);
		stk_stick_store(q, 0);   /* "stick on": the server it waited for */
		/* Chosen without lb_pick(): count the pick as it would. */
		srv->counters.cum_lbconn++;
		srv->px->be_counters.cum_lbconn++;
		stream_connect(q);
	}
	srv->flags &= ~SRV_F_DEQUEUING;
}

void backend_srv_state_changed(struct server *srv)
{
	struct stream *q;

	if (server_usable(srv)) {
		queue_dequeue(srv);   /* back, or more room: take from the queues */
		return;
	}
	/* Gone: with "option redispatch" (and not "option persist") the
	 * requests waiting for this very server go back to load balancing,
	 * as HAProxy redistributes them; else they wait for its return. */
	if (!(srv->px->options & PR_O_REDISPATCH) || (persist_options(srv->px) & PST_O_PERSIST))
		return;
	/* each waiter once: one that finds no other server may queue again */
	for (int n = srv->nbpend; n > 0 && (q = srv->queue_head); n--) {
		ss_dequeue(q, 0);
		/* load balancing only: a stick entry or use-server rule would
		 * bind it to this very server again */
		backend_assign_server(q, BE_PICK_LB);
		stream_connect(q);   /* load balancing: a slot, or the backend's queue */
	}
}

void backend_srv_freed(struct server *srv)
{
	if (srv)
		queue_dequeue(srv);
}

int backend_redispatch_due(const struct proxy *be, int retry)
{
	int every = be->redispatch_every;

	if (!(be->options & PR_O_REDISPATCH) || !every)
		return 0;
	if (every > 0)
		return retry % every == 0;
	return retry == be->retries + every + 1;
}

int backend_retry_redispatch(struct stream *s, int refused)
{
	struct proxy *be = s->be;
	struct server *srv = s->ss.target;

	if (!(be->options & PR_O_REDISPATCH) || !be->redispatch_every || !srv ||
	    !lb_usable_besides(be, srv))
		return 0;
	if (!backend_redispatch_due(be, s->ss.retries) && server_usable(srv) && !refused)
		return 0;
	s->ss.redispatched = 1;
	be->be_counters.redispatches++;
	srv->counters.redispatches++;
	backend_assign_server(s, BE_PICK_AVOID);
	if (s->ss.target != srv)
		backend_srv_freed(srv);   /* the slot it left goes to a waiter */
	return 1;
}
