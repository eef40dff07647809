/* A stream joins a client connection to a server connection and moves the
 * bytes between them (mode tcp): connect with retries, forwarding by copy
 * or splice(), half-close, timeouts, the end-of-stream log line. */
#ifndef SLUICE_STREAM_H
#define SLUICE_STREAM_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <sluice/channel.h>
#include <sluice/conn.h>

struct listener;
struct proxy;
struct server;
struct http_txn;
struct srv_idle;
struct stktable;
struct stksess;

enum stream_state {
	ST_PROXY,      /* waiting for the client's PROXY protocol header */
	ST_QUEUE,      /* every usable server is full (maxconn): waiting in line */
	ST_TAR,        /* waiting before a connect retry */
	ST_CON,        /* connecting to the server */
	ST_EST,        /* both sides connected: forwarding */
	ST_HREQ,       /* mode http: waiting for a request head, no server chosen */
	ST_INSPECT,    /* mode tcp: tcp-request content rules read the request data */
	ST_SSL,        /* waiting for the client's TLS handshake (before anything else) */
};

#define STRM_F_EXPECT_PROXY 0x01  /* "tcp-request connection expect-proxy layer4" */
#define STRM_F_NOLOG        0x02  /* refused before it became a session: no log line */
#define STRM_F_BE_RULES     0x04  /* ST_INSPECT: the backend's rules run (the frontend's did) */
#define STRM_F_RES_INSPECT  0x08  /* tcp-response content rules hold the response data */
#define STRM_F_DROP         0x10  /* "silent-drop": close with a RST, nothing sent */

#define STRM_PARTIAL_REQ    0x01  /* s->smp_partial: request data may still grow */
#define STRM_PARTIAL_RES    0x02  /* response data may still grow */

/* A tracked counter (track-sc0..2): an entry of a stick table (stktable.h). */
#define STK_CTR_SLOTS 3
struct stk_ctr {
	struct stktable *t;
	struct stksess  *ts;      /* NULL: the slot is free */
	unsigned         flags;   /* STK_CTR_F_* */
};

struct stream {
	struct stream    *prev, *next;  /* all live streams */
	struct stream    *q_prev, *q_next; /* in a queue (ST_QUEUE) */
	struct server    *q_srv;        /* whose queue it waits in; NULL: the backend's */
	struct server    *want_srv;     /* server persistence asks for (may be full) */
	uint64_t          q_idx;        /* that queue's queue_idx when it joined */
	int               srv_qpos, be_qpos; /* %sq %bq: served before it while queued */
	uint64_t          uniq_id;
	struct conn       cli, srv;
	struct channel    req, res;     /* client->server, server->client */
	struct proxy     *fe, *be;
	struct listener  *li;
	struct server    *target;       /* server being used (NULL before) */
	enum stream_state state;
	int               retries;      /* connect retries done */
	int               redispatched;
	ev_timer          timer;
	ev_tstamp         armed;        /* deadline the timer is armed for, 0 if none */
	ev_tstamp         t_accept, t_conn, t_est, t_tar, t_queue;
	long              tw;           /* ms spent in the queue */
	struct timespec   accept_date;
	struct sockaddr_storage cli_addr;   /* the client (from PROXY if any) */
	struct sockaddr_storage *dst;   /* where it connected (PROXY header, else asked
	                                   once when needed), pooled; NULL until known */
	char              term[2];      /* termination flags of the log line */
	struct http_txn  *txn;          /* mode http: the exchange in progress, NULL when idle */
	uint32_t          nreq;         /* mode http: requests received on this connection */
	ev_tstamp         t_idle;       /* mode http: start of the wait for the next request */
	int               is_http;      /* the frontend is in mode http */
	struct server    *kept_srv;     /* server of <srv> while kept open between requests */
	int               kept_reused;  /* that connection already served a request */
	struct srv_idle  *park;         /* its entry in the server's idle list, if shared */
	struct var_store *vars;         /* sess variables, NULL when none */
	unsigned          tcp_flags;    /* STRM_F_* */
	int               tcp_pos;      /* tcp rules: the rule to resume from (tcp_rules.h) */
	ev_tstamp         inspect_end;  /* end of the running inspect-delay, 0 when none */
	unsigned          smp_partial;  /* STRM_PARTIAL_*: set while tcp rules inspect data */
	char             *tcp_cap;      /* tcp-request content captures (pooled), NULL: none */
	struct stk_ctr    stkctr[STK_CTR_SLOTS]; /* track-sc0..2 (stktable.h) */
};

/* ---- for the protocol analysers (http_ana.c) ---- */

/* Recomputes the events watched on both sides and re-arms the timer. */
void stream_update(struct stream *s);

/* Ends <s> with termination flags <t0><t1>: logs, counts, frees. */
void stream_close(struct stream *s, char t0, char t1);

/* Connects to the stream's server (chosen first by load balancing if none
 * is set; queued when all are full). Returns 0, or -1 when <s> was closed. */
int stream_connect(struct stream *s);

/* <srv> changed state (health, maintenance, drain, weight): when usable,
 * it takes waiting requests from its queue and its backend's; when not,
 * with "option redispatch" its own queue goes back to load balancing. */
void stream_srv_state_changed(struct server *srv);

/* How stream_pick_server() chooses. */
#define STREAM_PICK_ANY   0  /* use-server, stick match, then load balancing */
#define STREAM_PICK_AVOID 1  /* load balancing, avoiding the current target (retry) */
#define STREAM_PICK_LB    2  /* load balancing only (redispatch from a full bound server) */

/* Chooses a server (<how>: STREAM_PICK_*) and makes it the target. Returns
 * 0; -1 when no server can take it now; 1 when a use-server rule or a stick
 * match binds the stream to a full server: s->want_srv names it and
 * stream_connect() queues the stream there (maxqueue, redispatch). */
int stream_pick_server(struct stream *s, int how);

/* Whether retry number <retry> (1 for the first) of a connection to <be>
 * goes to another server ("option redispatch [<interval>]"). */
int stream_redispatch_due(const struct proxy *be, int retry);

/* Makes <be> the stream's backend (NULL: the frontend's default_backend,
 * else the frontend itself), moving the backend session counts. */
void stream_set_backend(struct stream *s, struct proxy *be);

/* Makes <srv> (NULL: none) the stream's server, keeping session counts. */
void stream_set_target(struct stream *s, struct server *srv);

/* Releases the stream's server slot (end of an HTTP exchange): the oldest
 * stream queued for it may take it. */
void stream_release_target(struct stream *s);

/* Runs one direction (client->server when <is_req>) and records activity. */
enum chan_res stream_forward(struct stream *s, struct channel *ch, struct conn *src,
                             struct conn *dst, int is_req);

/* Uses already connected socket <fd> (with its TLS session <ssl>, NULL for
 * a plain one) to the target server (reuse). */
void stream_attach_srv(struct stream *s, int fd, struct ssl_st *ssl);

/* Detaches the server socket from <s> and returns it (-1 if none); its TLS
 * session (NULL if none) goes to <*ssl>, which then owns it. */
int stream_detach_srv(struct stream *s, struct ssl_st **ssl);

/* Where the client connected (PROXY header, else getsockname once). */
const struct sockaddr_storage *stream_dst(struct stream *s);

struct lf_ctx;
/* Fills <c> for the log-format expressions of TCP stream <s> (a mode http
 * stream uses http_fill_lf_ctx()); <needs> (LF_N_*) asks for the costly
 * parts (the frontend address is a getsockname() call). */
void stream_fill_lf_ctx(struct stream *s, struct lf_ctx *c, unsigned needs);

/* Listener callback for frontends: starts a stream on <fd>. */
void stream_accept(struct listener *li, int fd, struct sockaddr_storage *addr, socklen_t alen);

/* A new unique stream number (%rt): each stream gets one at accept, and
 * each further request of a kept-alive HTTP connection another, as each
 * request is a stream of its own in HAProxy. */
uint64_t stream_next_id(void);

/* The newest live stream (the others follow through ->next), or NULL. */
struct stream *stream_first(void);

/* Number of live streams. */
int stream_count(void);

/* Closes the streams connected (or connecting) to <srv>: its sessions are
 * shut down when it goes DOWN with on-marked-down shutdown-sessions.
 * Returns how many were closed. */
int stream_kill_server(struct server *srv);

/* Closes the HTTP client connections that wait, idle, for their next
 * request (soft stop). */
void stream_close_idle(void);

/* Closes every live stream at once (hard stop, exit). */
void stream_kill_all(void);

/* Called when the last stream ends during a soft stop. */
void stream_set_idle_cb(void (*cb)(void));

#endif
