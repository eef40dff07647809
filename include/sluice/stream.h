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
#include <sluice/profiling.h>
#include <sluice/srv_side.h>

struct listener;
struct proxy;
struct server;
struct http_txn;
struct srv_idle;
struct stktable;
struct stksess;
struct buf;
struct act_loc;

/* The stream's phase; where its server side stands is s->ss.st. */
enum stream_state {
	ST_PROXY,      /* waiting for the client's PROXY protocol (or NetScaler CIP) header */
	ST_SSL,        /* waiting for the client's TLS handshake (before anything else) */
	ST_INSPECT,    /* mode tcp: tcp-request content rules read the request data */
	ST_FWD,        /* mode tcp: the server side runs (queue, connect, forward) */
	ST_HTTP,       /* mode http: the analysers run one exchange after another */
};

#define STRM_F_EXPECT_PROXY 0x01  /* "tcp-request connection expect-proxy layer4" */
#define STRM_F_NOLOG        0x02  /* refused before it became a session: no log line */
#define STRM_F_BE_RULES     0x04  /* ST_INSPECT: the backend's rules run (the frontend's did) */
#define STRM_F_RES_INSPECT  0x08  /* tcp-response content rules hold the response data */
#define STRM_F_DROP         0x10  /* "silent-drop": close with a RST, nothing sent */
#define STRM_F_BE_SESS      0x20  /* counted as a session of s->be (beconn, scur) */
#define STRM_F_MUX          0x40  /* one stream of a multiplexed client connection
                                     (HTTP/2): s->cli is CO_F_MUX, one exchange,
                                     the connection counts are the mux's */
#define STRM_F_MUX_LATER    0x80  /* STRM_F_MUX, not the first request of its connection */
#define STRM_F_ACT_WAIT     0x100 /* tcp rules: the action at tcp_pos waits (Lua): it
                                     goes on without its condition tested again */
#define STRM_F_WOKEN        0x200 /* stream_wake() was called: what waited for it may go
                                     on (the protocol clears it when it looked) */
#define STRM_F_MUX_START    0x400 /* STRM_F_MUX: its first pass has not run yet */
#define STRM_F_SVC_DONE     0x800 /* its service (s->svc) is done: its output leaves */
#define STRM_F_ACT_EXP      0x1000 /* s->act_exp passed: the action waiting for it goes on */
#define STRM_F_EXPECT_CIP   0x2000 /* "expect-netscaler-cip layer4" (or the bind line's
                                      accept-netscaler-cip): a CIP header comes first */
#define STRM_F_CIP_READ     0x4000 /* ST_PROXY: the CIP header was read (a PROXY one follows) */
#define STRM_F_HTTP_SWITCH  0x8000 /* "switch-mode http": a mode tcp stream goes on in HTTP,
                                      its requests only go to backends in mode http */
#define STRM_F_PROTO_H1     0x10000 /* "switch-mode http proto h1": no HTTP/2 preface */
#define STRM_F_PROTO_H2     0x20000 /* "switch-mode http proto h2": HTTP/2 from the start */
#define STRM_F_NICE         0x40000 /* its nice was set once: its watchers follow s->nice */
#define STRM_F_AUTH_LAST    0x80000 /* mode http: the last response was a 401 or a 407: the
                                     next request prefers its server (backend.c) */
#define STRM_F_TARGET_HOOK  0x100000 /* the protocol's redirect hook runs for every server
                                     (http-send-name-header) */

#define STRM_PARTIAL_REQ    0x01  /* s->smp_partial: request data may still grow */
#define STRM_PARTIAL_RES    0x02  /* response data may still grow */

/* Why a stream (or one of its exchanges) ended: the first letter of the
 * log line's termination state (strm_err_char()). */
enum strm_err {
	SE_NONE,        /* '-': a normal end */
	SE_CLI_ABORT,   /* 'C': the client aborted (or left) */
	SE_SRV_ABORT,   /* 'S': the server aborted, refused or sent nothing */
	SE_PROXY,       /* 'P': the proxy refused it (rules, invalid message) */
	SE_LOCAL,       /* 'L': answered here (return, redirect, stats...) */
	SE_RESOURCE,    /* 'R': a resource ran out (memory, sockets) */
	SE_INTERNAL,    /* 'I': an internal error */
	SE_DOWN,        /* 'D': its server went down */
	SE_KILLED,      /* 'K': shut down by the administrator or a check */
	SE_UPGRADE,     /* 'U' */
	SE_CLI_TO,      /* 'c': timeout client (or http-request) */
	SE_SRV_TO,      /* 's': timeout server, connect or queue */
};

/* Where it was then: the second letter (strm_fin_char()). */
enum strm_fin {
	SF_NONE,        /* '-' */
	SF_REQ,         /* 'R': waiting for (or analysing) the request */
	SF_QUEUE,       /* 'Q': waiting in a queue */
	SF_CONN,        /* 'C': connecting to the server */
	SF_HDRS,        /* 'H': waiting for the response head */
	SF_DATA,        /* 'D': moving data */
	SF_LAST,        /* 'L': sending the last data */
	SF_TARPIT,      /* 'T': tarpitted */
};

/* The log letters of a termination cause and state. */
char strm_err_char(enum strm_err e);
char strm_fin_char(enum strm_fin f);

/* What a stream's timer waits for. */
enum strm_timer {
	STRM_T_NONE,
	STRM_T_CLI,        /* the client: timeout client (client-fin, tunnel) */
	STRM_T_SRV,        /* the server: timeout server (server-fin) */
	STRM_T_CONNECT,    /* timeout connect */
	STRM_T_TURNAROUND, /* the pause before retrying a refused connect */
	STRM_T_QUEUE,      /* timeout queue */
	STRM_T_INSPECT,    /* the end of an inspect-delay (tcp-request/response content) */
	STRM_T_PROTO,      /* a deadline of the protocol's own (stream_proto.deadline) */
	STRM_T_STOP,       /* soft stop: an idle stream's turn to close (close-spread-time) */
	STRM_T_ACT,        /* the end of a rule action's wait (wait-for-body) */
};

/* A stream's protocol: what runs between the client and the server once
 * the stream has started. stream.c knows protocols only through these
 * hooks, chosen once at accept from the frontend's mode (a module
 * registers its protocol with stream_proto_register()). An implementation
 * may carry several exchanges one after another on the stream (HTTP/1
 * keep-alive); a multiplexed protocol (HTTP/2) will own the client
 * connection and give each of its streams this interface, with the server
 * side of each stream unchanged (srv_side.h). */
struct stream_proto {
	const char *name;
	/* At accept, the stream counted: prepares the protocol. Returns 0,
	 * or -1 once <s> was closed (freed). */
	int (*init)(struct stream *s);
	/* The client is known (PROXY header read, TLS done): the exchange
	 * starts. Returns 0, or -1 once <s> was closed (freed). */
	int (*start)(struct stream *s);
	/* Something happened on a side (or a wake-up): runs both directions
	 * and the analysers, updates the watchers. Returns 0 or -1 (closed). */
	int (*process)(struct stream *s);
	/* The server connection is up (NULL: nothing to do). */
	void (*connected)(struct stream *s);
	/* A new server connection is established (TCP, PROXY header and TLS
	 * done, SS_EST): the protocol may wrap it (HTTP/2 to the server).
	 * Returns 0, or -1 when the connection is to be counted as failed.
	 * NULL: nothing to do. */
	int (*srv_ready)(struct stream *s);
	/* A server with "redir" is assigned (SS_ASSIGNED), or any server when
	 * the stream has STRM_F_TARGET_HOOK, and a connection to it is about
	 * to be made (each attempt, retries included): returns 1 when the
	 * protocol answered the client instead (no connection is made), 0 to
	 * go on. NULL: go on. */
	int (*redirect)(struct stream *s);
	/* The protocol's own deadline (0: none), which then takes precedence
	 * over the stream's I/O timeouts; <kind> is the protocol's code for
	 * it, handed back to timeout(). NULL: none ever. */
	ev_tstamp (*deadline)(const struct stream *s, int *kind);
	void (*timeout)(struct stream *s, int kind);
	/* The server side failed (termination flags <t0><t1>): returns 0 when
	 * the protocol answered and the stream lives on, -1 for the caller to
	 * close it. NULL: always closed. */
	int (*fail)(struct stream *s, enum strm_err t0, enum strm_fin t1);
	/* The stream closes: the protocol logs and releases what it holds. */
	void (*release)(struct stream *s);
	/* Whether it waits, idle, for a next exchange: nothing of the next
	 * one has come, so closing it now is what a keep-alive timeout does
	 * (a soft stop with close-spread-time closes it in its turn). NULL:
	 * never. */
	int (*idle)(const struct stream *s);
	/* Whether the client is waited for (its timeout runs), <cev> being
	 * the events watched on it; whether the established server is. */
	int (*cli_waiting)(const struct stream *s, int cev);
	int (*srv_waiting)(const struct stream *s);
	/* Whether raw bytes flow both ways (the tunnel timeout applies). */
	int (*tunnel)(const struct stream *s);
	/* <in> bytes received and <out> sent on the request (<is_req>) or
	 * response channel, for the protocol's own counts (NULL: none). */
	void (*count_bytes)(struct stream *s, int is_req, uint64_t in, uint64_t out);
};

/* Makes <sp> the protocol of the streams of frontends in mode <mode>
 * (enum pr_mode). Called by the module that implements it, at start-up. */
void stream_proto_register(int mode, const struct stream_proto *sp);

/* The protocol of mode <mode> streams (NULL: none registered). */
const struct stream_proto *stream_proto_of(int mode);

/* 1 when <s> runs mode tcp's protocol (not switched to HTTP), else 0. */
int stream_is_tcp(const struct stream *s);

/* A service answering a mode tcp stream in place of a server (Lua's
 * AppletTCP), chosen by "tcp-request content use-service <name>". A row
 * registered by the module that owns it. */
struct stream_service {
	const char *name;
	const char *log_name;   /* "<name>": the server named in its streams' logs */
	/* The stream is given to the service: 0, or -1 (the stream closes). */
	int       (*start)(struct stream *s);
	/* After every event: it reads s->req and writes s->res. Returns 0
	 * while it goes on, 1 when it is done (the stream closes once its
	 * output left), -1 when it failed (closed at once). */
	int       (*run)(struct stream *s);
	struct stream_service *next;
};

void stream_service_register(struct stream_service *svc);

/* The service named <name>, or NULL. */
const struct stream_service *stream_service_find(const char *name);

/* A tracked counter (track-sc0..2): an entry of a stick table (stktable.h). */
#define STK_CTR_SLOTS 3
struct stk_ctr {
	struct stktable *t;
	struct stksess  *ts;      /* NULL: the slot is free */
	unsigned         flags;   /* STK_CTR_F_* */
};

/* Modules that keep state in a stream (s->ext[]): Lua, do-resolve, SPOE. */
#define STRM_EXT_MAX 3

struct stream {
	struct stream    *prev, *next;  /* all live streams */
	int               srv_qpos, be_qpos; /* %sq %bq: served before it while queued */
	uint64_t          uniq_id;
	struct conn       cli, srv;
	struct channel    req, res;     /* client->server, server->client */
	struct proxy     *fe, *be;
	struct listener  *li;
	struct srv_side   ss;           /* the server side (srv_side.h) */
	uint64_t          srv_bin_mark; /* req.total already charged to a server (or to none) */
	enum stream_state state;
	ev_timer          timer;
	ev_tstamp         armed;        /* deadline the timer is armed for, 0 if none */
	ev_tstamp         t_accept, t_conn, t_est, t_tar, t_queue;
	long              tw;           /* ms spent in the queue */
	struct timespec   accept_date;
	struct sockaddr_storage cli_addr;   /* the client (from PROXY if any) */
	struct sockaddr_storage *dst;   /* where it connected (PROXY header, else asked
	                                   once when needed), pooled; NULL until known */
	enum strm_err     term_err;     /* why it ended (log: termination state) */
	enum strm_fin     term_fin;     /* where it was then */
	struct http_txn  *txn;          /* mode http: the exchange in progress, NULL when idle */
	uint32_t          nreq;         /* mode http: requests received on this connection */
	ev_tstamp         t_idle;       /* mode http: start of the wait for the next request */
	const struct stream_proto *proto; /* what runs between the sides (mode tcp, HTTP/1) */
	struct var_store *vars;         /* sess variables, NULL when none */
	unsigned          tcp_flags;    /* STRM_F_* */
	int               tcp_pos;      /* tcp rules: the rule to resume from (tcp_rules.h) */
	ev_tstamp         inspect_end;  /* end of the running inspect-delay, 0 when none */
	unsigned          smp_partial;  /* STRM_PARTIAL_*: set while tcp rules inspect data */
	char             *tcp_cap;      /* tcp-request content captures (pooled), NULL: none */
	struct stk_ctr    stkctr[STK_CTR_SLOTS]; /* track-sc0..2 (stktable.h) */
	signed char       log_level;    /* set-log-level: 0 the proxy's, 1 + a level
	                                   (LOG_L_*), STRM_LOG_SILENT: no log line */
	int               prio_class;   /* set-priority-class: its class in queues */
	int               prio_offset;  /* set-priority-offset: ms added to its queue time */
	uint32_t          tmo[3];       /* set-timeout, STRM_TMO_*: ms, 0 for the proxy's */
	ev_tstamp         act_exp;      /* a rule action waits until then at most (then
	                                   STRM_F_ACT_EXP is set, the stream woken), 0: none */
	const struct act_loc *last_rule; /* the last rule that ended its set (action.h),
	                                   NULL: none yet */
	short             nice;         /* set-nice, the bind line's "nice": -1024..1024 */
	const struct stream_service *svc; /* mode tcp: the service answering it, NULL: a server */
	void             *ext[STRM_EXT_MAX]; /* modules' state for this stream (Lua: its
	                                   running actions, services, private data;
	                                   do-resolve: the answer waited for), NULL
	                                   when none; see stream_ext_register() */
	struct stream_prof prof;        /* its calls' cost while profiling (profiling.h) */
	/* CO_F_SOCKS on s->srv: the SOCKS4 CONNECT to the server (socks4.h) */
	uint8_t           socks_st;     /* STRM_SOCKS_*: where the handshake stands */
	uint8_t           socks_got;    /* reply bytes received */
	unsigned char     socks[9];     /* the request, then the 8-byte reply */
	uint8_t           fc_err, bc_err; /* why the client's, the server's connection
	                                     failed: HAProxy's numbers (fc_err), 0: no error */
	struct stream_pp *pp;           /* the PROXY v2 TLVs kept for fc_pp_* (stream_pp.c),
	                                   NULL when none */
};

/* The timeouts a stream may have of its own (set-timeout): s->tmo[]. */
enum { STRM_TMO_SERVER, STRM_TMO_TUNNEL, STRM_TMO_CLIENT, STRM_TMO_COUNT };

/* Keeps the TLVs fc_pp_authority and fc_pp_unique_id read from the PROXY
 * header <hdr> (<len> bytes, complete) the client of <s> sent, when the
 * configuration uses those fetches (stream_pp.c). */
void stream_pp_keep(struct stream *s, const char *hdr, size_t len);

/* Frees what stream_pp_keep() kept for <s>. */
void stream_pp_free(struct stream *s);

#define STRM_SOCKS_SEND  1   /* connecting to the proxy: the request goes once connected */
#define STRM_SOCKS_REPLY 2   /* the request is sent: its reply is awaited */

/* ---- for the protocol analysers (http_ana.c) ---- */

/* Recomputes the events watched on both sides and re-arms the timer. */
void stream_update(struct stream *s);

/* Ends <s> with termination flags <t0><t1>: logs, counts, frees. */
void stream_close(struct stream *s, enum strm_err t0, enum strm_fin t1);

/* Connects to the stream's server (chosen first by load balancing if none
 * is set; queued when all are full). Returns 0, or -1 when <s> was closed. */
int stream_connect(struct stream *s);

/* Makes <be> the stream's backend (NULL: the frontend's default_backend,
 * else the frontend itself), where it counts as a session (each HTTP
 * request counts as one, as each is a stream in HAProxy). */
void stream_set_backend(struct stream *s, struct proxy *be);

/* Mode http, between two requests: the stream stops counting as a session
 * of its backend, which goes back to the default one until the next
 * request chooses. */
void stream_end_backend(struct stream *s);

#define STRM_LOG_SILENT (-1)

/* The level of <s>'s log line: <dflt>, or what set-log-level chose; -1
 * for none ("silent"). */
static inline int stream_log_level(const struct stream *s, int dflt)
{
	return s->log_level == STRM_LOG_SILENT ? -1 : s->log_level ? s->log_level - 1 : dflt;
}

/* The client socket's IP TOS / DSCP (IPV6_TCLASS) and netfilter mark
 * (SO_MARK, needs CAP_NET_ADMIN): set-tos, set-mark. Failures are
 * ignored, as HAProxy does (not every socket has them). */
void stream_set_tos(struct stream *s, int tos);
void stream_set_mark(struct stream *s, int mark);

/* set-priority-class (<offset> 0: <v> bounded to -2047..2047) or
 * set-priority-offset (1: -524287..524287 ms), for the queues. */
void stream_set_priority(struct stream *s, int offset, long v);

/* set-nice (the bind line's "nice" at accept): <nice>, bounded to
 * -1024..1024, becomes the libev priority of the stream's watchers (its
 * client and server sockets and its timer), EV_MAXPRI for -1024 down to
 * EV_MINPRI for 1024: in each loop iteration, the ready watchers of a
 * higher priority are served first. */
void stream_set_nice(struct stream *s, int nice);

/* Gives the watchers of <s> the priority its nice asks for, those that
 * were made again since (a new server connection) included. Called by
 * stream_update() once a nice was set. */
void stream_nice_apply(struct stream *s);

/* Wakes <s> from the loop: its protocol runs in this loop pass, with
 * STRM_F_WOKEN set (an action or a service that waited, Lua, goes on). */
void stream_wake(struct stream *s);

/* Gives a module a slot of s->ext[] and the hook <fn> that releases what it
 * holds there. Returns the slot; called once per module (SLUICE_INIT). */
int stream_ext_register(void (*fn)(struct stream *s));

/* Releases what s->ext[] holds now, if anything: at the end of the stream,
 * and of each HTTP exchange (state kept per request, as HAProxy's streams
 * are). */
void stream_ext_release(struct stream *s);

/* Whether stream_kill_all() runs: no new work is started. */
int stream_killing(void);

/* Counts <n> bytes the stream's service (s->svc) put in s->res as
 * received from a server: its response total, the byte counters. */
void stream_count_made(struct stream *s, uint64_t n);

/* Runs one direction (client->server when <is_req>) and records activity. */
enum chan_res stream_forward(struct stream *s, struct channel *ch, struct conn *src,
                             struct conn *dst, int is_req);

/* Uses already connected socket <fd> (with its TLS session <ssl>, NULL for
 * a plain one) to the target server: SS_ASSIGNED or SS_TAR -> SS_EST;
 * <reused>: the requests it carried before (0: a new connection). */
void stream_attach_srv(struct stream *s, int fd, struct ssl_st *ssl, int reused);

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

/* Number of live streams, plus the multiplexed client connections. */
int stream_count(void);

/* ---- multiplexed client connections (HTTP/2) ---- */

/* Hands the client connection of freshly started stream <s> (mode http, no
 * exchange begun) over to a multiplexer, which is then the connection for
 * every count (frontend, listener, process, stream_count()) until it calls
 * stream_conn_end(). <c> gets the socket, its TLS session and its watcher
 * (stopped, given to conn_io_hand_off()), <*rx> the bytes already read
 * (NULL: none). <s> is freed without a log line. */
void stream_give_cli(struct stream *s, struct conn *c, struct buf **rx);

/* The multiplexed connection that stream_give_cli() made of a stream of
 * frontend <fe>, listener <li>, is closed: its counts end. */
void stream_conn_end(struct proxy *fe, struct listener *li);

/* A new stream of multiplexed connection <c> (socket and TLS session,
 * never used directly), accepted on <li> from <src> to <dst>: its client
 * side is the CO_F_MUX endpoint <ops>/<ctx>. It does not count as a
 * connection. The protocol starts from the next loop pass (the
 * multiplexer's callbacks never run it). Returns it, or NULL when out of
 * memory. */
struct stream *stream_new_mux(struct listener *li, const struct conn *c,
                              const struct sockaddr_storage *src,
                              const struct sockaddr_storage *dst,
                              const struct conn_mux_ops *ops, void *ctx);

/* Wakes stream <s> of a multiplexed connection for <events> it watches. */
void stream_mux_wake(struct stream *s, int events);

/* The server side of <s> becomes the CO_F_MUX endpoint <ops>/<ctx> of
 * multiplexed server connection <c> (HTTP/2): SS_ASSIGNED or SS_TAR ->
 * SS_EST as a reused connection, or, already SS_EST on the socket the
 * multiplexer just took over (stream_detach_srv()), the same exchange
 * going on through it. */
void stream_attach_srv_mux(struct stream *s, const struct conn *c,
                           const struct conn_mux_ops *ops, void *ctx);

/* Closes the streams connected (or connecting) to <srv>: its sessions are
 * shut down when it goes DOWN with on-marked-down shutdown-sessions.
 * Returns how many were closed. */
int stream_kill_server(struct server *srv);

/* The same, at the start of the next loop iteration: for a state change
 * decided while a stream of <srv> runs (a health check fed by that very
 * stream's traffic, "observe"), which must not free it under its caller. */
void stream_kill_server_soon(struct server *srv);

/* <srv> goes away (del server): no shutdown is pending for it any more. */
void stream_kill_server_cancel(struct server *srv);

/* Soft stop with close-spread-time: from now on, a stream idle between
 * exchanges (stream_proto.idle), now or later, closes at its turn in the
 * window of <len> seconds from <start> (at once when that is past), or
 * earlier at its own timeout. <len> 0: idle streams wait for their own
 * timeouts. No stream is closed from inside this call. */
void stream_stop_spread(ev_tstamp start, ev_tstamp len);

/* Closes every live stream at once (hard stop, exit). */
void stream_kill_all(void);

/* Called when the last stream ends during a soft stop. */
void stream_set_idle_cb(void (*cb)(void));

#endif
