/* The server side of a stream: which server serves the exchange, through
 * which connection, and where it stands. One state, changed only by the
 * functions here, each asserting the state it leaves; the server counters
 * (slots, bytes) are charged from this struct alone. */
#ifndef SLUICE_SRV_SIDE_H
#define SLUICE_SRV_SIDE_H

#include <stdint.h>

struct server;
struct stream;
struct srv_idle;
struct ssl_st;

/* Where the server side of a stream stands. <target> holds one of its
 * server's slots (cur_sess) in ASSIGNED, TAR, CONN and EST only. */
enum ss_state {
	SS_NONE,      /* nothing chosen, no server connection */
	SS_WANT,      /* persistence binds it to a full server (<want>): to be queued */
	SS_QUEUED,    /* waiting for a slot: <q_srv>'s queue, or its backend's (NULL) */
	SS_ASSIGNED,  /* <target> chosen and its slot held; no connection yet */
	SS_TAR,       /* a connect to <target> failed: turn-around before the retry */
	SS_CONN,      /* connecting to <target> (TCP, then PROXY header, then TLS) */
	SS_EST,       /* connected to <target>: the exchange runs */
	SS_KEPT,      /* mode http between requests: the connection to <conn_srv> is
	                 kept (parked in its idle list when <park>), no slot held */
};

struct srv_side {
	enum ss_state    st;
	struct server   *target;     /* ASSIGNED..EST: the server, one of its slots held */
	struct server   *want;       /* WANT: the full server persistence asks for */
	struct server   *conn_srv;   /* server of the connection in s->srv (fd >= 0) */
	struct srv_idle *park;       /* KEPT: its entry in conn_srv's idle list, or NULL */
	int              reused;     /* requests that connection carried before this
	                                one (0: a new connection; max-reuse) */
	/* SS_QUEUED */
	struct stream   *q_prev, *q_next;
	struct server   *q_srv;      /* whose queue; NULL: the backend's */
	uint64_t         q_idx;      /* that queue's queue_idx when it joined */
	int              q_class;    /* its priority class (set-priority-class) */
	int64_t          q_key;      /* its place in the class: the ms it joined at plus
	                                its priority offset (set-priority-offset) */
	/* per exchange */
	int              retries;    /* connect (and L7) retries done */
	int              redispatched;
	/* balance uri/url_param/hdr: the hash of the request element, taken
	 * by the protocol while it could see the request (lb_http_hash()) */
	uint32_t         lb_hash;
	int              lb_hashed;
	struct server   *persist;    /* the server a persistence cookie names, or NULL */
	/* mode http: the server of the connection kept from the previous
	 * request, preferred by load balancing (option prefer-last-server,
	 * or <prefer_auth>: the last response asked for credentials), or NULL */
	struct server   *prefer;
	int              prefer_auth;
};

/* Whether queued <a> is served before queued <b>: the lower priority class
 * first, then the smaller key (the time it joined plus its priority
 * offset), then the one that joined first. */
int ss_queue_before(const struct stream *a, const struct stream *b);

/* Name of a state for "show sess" and assertion messages. */
const char *ss_state_str(enum ss_state st);

/* Checks every invariant of <s>'s server side (BUG_ON on a broken one). */
void ss_check(const struct stream *s);

/* NONE, WANT, QUEUED or ASSIGNED -> ASSIGNED to <srv> (its slot taken);
 * ASSIGNED to another server moves the slot; <srv> NULL -> NONE. */
void ss_assign(struct stream *s, struct server *srv);

/* NONE or ASSIGNED -> WANT: bound to full server <srv>. */
void ss_want(struct stream *s, struct server *srv);

/* ASSIGNED or TAR -> CONN: the socket in s->srv connects to <target>. */
void ss_connecting(struct stream *s);

/* CONN -> EST (the connection is up), or ASSIGNED/TAR -> EST when s->srv
 * got an established connection to <target> (idle pool, kept connection):
 * <reused> is the number of requests it carried before (0: new). */
void ss_established(struct stream *s, int reused);

/* ASSIGNED, TAR, CONN or EST -> TAR: the connection failed or was lost
 * before the answer; it is closed, the slot kept for the retry. */
void ss_conn_lost(struct stream *s);

/* Any state -> NONE: leaves the queue, closes the connection (a parked one
 * unparked first), frees the slot. Returns the server whose slot was
 * freed (for the caller to dequeue, once it is safe), or NULL. */
struct server *ss_release(struct stream *s);

/* Any state but KEPT: the exchange is answered here. Leaves the queue,
 * closes the connection; a target keeps its slot for the log line until
 * ss_release() (ASSIGNED), else NONE. */
void ss_abort(struct stream *s);

/* EST -> KEPT: the exchange is over and the connection can carry another
 * one: the slot is freed (returned, as ss_release()), the connection kept,
 * and offered to other streams when <park>. */
struct server *ss_keep(struct stream *s, int park);

/* KEPT -> NONE: the kept connection leaves the stream, unparked and
 * detached: returns its socket, its server in <*srv> and its TLS session
 * (NULL: plain) in <*ssl>, for the caller to reuse, pool or close. */
int ss_unkeep(struct stream *s, struct server **srv, struct ssl_st **ssl);

/* Enqueues <s> in <srv>'s queue (NULL: its backend's): NONE or WANT ->
 * QUEUED. */
void ss_enqueue(struct stream *s, struct server *srv);

/* QUEUED -> NONE: out of its queue; <served>: it leaves for a slot (it
 * counts in the positions of those behind it). */
void ss_dequeue(struct stream *s, int served);

#endif
