/* Backends: the server a stream goes to (persistence cookie, use-server,
 * stick match, then load balancing), the queues' hand-over of freed slots,
 * and which retries go to another server (option redispatch). */
#ifndef SLUICE_BACKEND_H
#define SLUICE_BACKEND_H

struct proxy;
struct server;
struct stream;

/* How backend_assign_server() chooses. */
enum be_pick {
	BE_PICK_ANY,    /* persistence cookie, use-server, stick match, then LB */
	BE_PICK_AVOID,  /* load balancing, avoiding the current target (a retry) */
	BE_PICK_LB,     /* load balancing only (redispatch from a full bound server) */
};

/* What it decided. */
enum be_assign {
	BE_ASSIGNED,    /* s->ss.target serves it (SS_ASSIGNED), one of its slots held */
	BE_FULL_SRV,    /* bound to a full server (SS_WANT, s->ss.want): wait in its
	                   queue (maxqueue and redispatch permitting) */
	BE_ALL_FULL,    /* every usable server is full: wait in the backend's queue */
	BE_NONE,        /* no usable server at all */
};

/* Chooses the server of <s> in its backend (s->ss.persist: the server its
 * persistence cookie names; s->ss.lb_hash: the request's balance hash).
 * Called in SS_NONE or SS_WANT (BE_PICK_ANY), or SS_TAR on a retry. */
enum be_assign backend_assign_server(struct stream *s, enum be_pick how);

/* <srv> changed state (health, maintenance, drain, weight): when usable,
 * it takes waiting requests from its queue and its backend's; when not,
 * with "option redispatch" its own queue goes back to load balancing. */
void backend_srv_state_changed(struct server *srv);

/* <srv> (NULL: none) got a slot back (ss_release(), ss_keep()): the oldest
 * stream queued for it takes it. Call once the stream is consistent. */
void backend_srv_freed(struct server *srv);

/* Whether retry number <retry> (1 for the first) of a connection to <be>
 * goes to another server ("option redispatch [<interval>]"). */
int backend_redispatch_due(const struct proxy *be, int retry);

/* A retry of the exchange is about to be made: it goes to another server
 * (counted as a redispatch, picked by load balancing) when "option
 * redispatch" allows one and either its interval is due, the target is no
 * longer usable, or <refused> (the connect was refused at once) while
 * another server is usable. Returns 1 when it redispatched, else 0. */
int backend_retry_redispatch(struct stream *s, int refused);

#endif
