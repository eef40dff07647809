/* Servers of a backend and their `server` line options. */
#ifndef SLUICE_SERVER_H
#define SLUICE_SERVER_H

#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ev.h>

#include <sluice/check.h>
#include <sluice/counters.h>

struct proxy;
struct srv_dns;
struct srv_idle;
struct ssl_srv;
struct conn_src;

#define SRV_F_MAINT   0x01  /* administratively disabled ("disabled") */
#define SRV_F_BACKUP  0x02  /* backup server */
#define SRV_F_CHECKED 0x04  /* "check": health checks decide its state */
#define SRV_F_SAMEPORT 0x08 /* no port: use the client's destination port */
#define SRV_F_DOWN    0x10  /* marked DOWN by its health checks */
#define SRV_F_DRAIN   0x20  /* drain: up, but takes no new connection */
#define SRV_F_SEND_PROXY    0x40  /* send a PROXY v1 header first */
#define SRV_F_SEND_PROXY_V2 0x80  /* send a PROXY v2 header first */
#define SRV_F_DOWN_KILL     0x100 /* on-marked-down shutdown-sessions */
#define SRV_F_UP_KILL_BACKUP 0x200 /* on-marked-up shutdown-backup-sessions */
#define SRV_F_NOLB    0x400 /* checks got a 404 with disable-on-404: no new LB traffic */
#define SRV_F_AVOID   0x800 /* transient, during one lb_pick(): a redispatch avoids it */
#define SRV_F_RMAINT  0x1000 /* maintenance for want of an address: init-addr none, DNS
                                errors past their hold, no record for it (srv_dns.c) */
#define SRV_F_AGENT   0x2000 /* agent-check (srv_agent.c) */
#define SRV_F_AGENT_OFF  0x4000 /* "disable agent": the agent is not asked */
#define SRV_F_AGENT_DOWN 0x8000 /* the agent said down/fail/stopped */
#define SRV_F_KILL_SOON  0x10000 /* its sessions are to be shut down (stream_kill_server_soon) */
#define SRV_F_DEQUEUING  0x20000 /* its freed slots are being handed to waiters */
#define SRV_F_PROTO_H2   0x40000 /* "proto h2": HTTP/2 to it (src/http/h2.c) */
#define SRV_F_CHECK_H2   0x80000 /* "check-proto h2": HTTP checks speak HTTP/2 */
#define SRV_F_CHECK_OFF  0x100000 /* "disable health": has "check" (SRV_F_CHECKED is
                                     cleared meanwhile) but its checks are stopped */
#define SRV_F_NON_STICK  0x200000 /* "non-stick": never stored in a stick table */
#define SRV_F_CHECK_SOCKS4 0x400000 /* "check-via-socks4": checks go through the socks4 proxy */
#define SRV_F_CHECK_SEND_PROXY 0x800000 /* "check-send-proxy": checks send a PROXY header */
#define SRV_F_PROTO_FCGI 0x1000000 /* "proto fcgi": FastCGI to it (src/http/fcgi.c) */
#define SRV_F_CHECK_FCGI 0x2000000 /* "check-proto fcgi": HTTP checks speak FastCGI */
#define SRV_F_CHECK_PSET 0x4000000 /* "check-proto" given: the server's "proto" does not
                                      choose the checks' */
#define SRV_F_ORIG_DST   0x8000000 /* option transparent's server: connects to the client's
                                      original destination (px_dispatch.c) */

/* proxy-v2-options: what a PROXY v2 header to the server carries (srv_pp.h) */
#define SRV_PP_SSL       0x01  /* the client's TLS (PP2_TYPE_SSL) with its version */
#define SRV_PP_CN        0x02  /* ... the CN of its certificate */
#define SRV_PP_CIPHER    0x04  /* ... its cipher */
#define SRV_PP_SIG       0x08  /* ... the signature algorithm of our certificate */
#define SRV_PP_KEY       0x10  /* ... the key algorithm of our certificate */
#define SRV_PP_AUTHORITY 0x20  /* the SNI the client sent */
#define SRV_PP_CRC32C    0x40  /* a checksum of the header */
#define SRV_PP_UNIQUE_ID 0x80  /* the unique ID (unique-id-format) */
/* in maintenance, forced (SRV_F_MAINT) or for want of an address (SRV_F_RMAINT) */
#define SRV_F_ANY_MAINT (SRV_F_MAINT | SRV_F_RMAINT)

/* init-addr methods, tried in order at start-up */
enum srv_ia { SRV_IA_END, SRV_IA_LAST, SRV_IA_LIBC, SRV_IA_NONE, SRV_IA_IP };
#define SRV_IA_MAX 4

struct server {
	struct server          *next;
	struct proxy           *px;
	char                   *name;
	int                     id;
	char                   *addr_str;   /* as written, for stats */
	char                   *fqdn;       /* the host name of its address (lower case), NULL
	                                       when it was an IP (or no SRV record fills it) */
	struct srv_dns         *dns;        /* resolvers and their state (srv_dns.h), NULL */
	struct sockaddr_storage addr;
	socklen_t               addrlen;
	unsigned                flags;      /* SRV_F_* */
	unsigned                pp_opts;    /* SRV_PP_*: what a PROXY v2 header carries (srv_pp.c) */
	struct server          *kill_next;  /* SRV_F_KILL_SOON: the next one to do */
	int                     weight;     /* configured (0..256) */
	int                     uweight;    /* user weight (runtime) */
	int                     maxconn;
	int                     maxqueue;   /* per-server queue limit, 0: unlimited */
	uint8_t                 init_addr[SRV_IA_MAX];   /* SRV_IA_*, END-terminated when shorter;
	                                                    all END: "last,libc" */
	struct sockaddr_in6     init_ip[SRV_IA_MAX];     /* for SRV_IA_IP (v4 or v6) */
	char                   *conf_file;
	int                     conf_line;
	char                    cookie[64]; /* "cookie <value>" (persist.c), "" if none */

	/* load balancing state */
	int64_t                 lb_cur;     /* smooth weighted round robin */
	int                     eweight;    /* effective weight x SRV_EW_SCALE (lb_recalc) */
	uint32_t                slowstart;  /* ms, 0: none */
	ev_tstamp               ss_start;   /* loop time the ramp began, 0: not ramping */
	ev_timer                ss_timer;   /* recomputes weights while ramping */
	int                     minconn;    /* dynamic maxconn floor (with fullconn) */

	/* track [<backend>/]<server> */
	char                   *track_name; /* as written, NULL: none */
	struct server          *track;      /* resolved at post-parse */
	struct server          *trackers;   /* servers tracking this one */
	struct server          *next_tracker;

	/* health */
	struct check            check;
	struct check            agent;       /* agent check state (srv_agent.c) */
	char                    agent_send[128]; /* agent-send string, "" if none */

	/* runtime (current sessions: counters.cur_sess) */
	time_t                  last_change;
	time_t                  down_since;  /* wall clock it went DOWN, 0 if up */
	uint64_t                downtime;    /* seconds spent DOWN before down_since */
	struct counters         counters;

	/* streams waiting for a slot of this very server (stream.c) */
	struct stream          *queue_head, *queue_tail;
	int                     nbpend;      /* qcur */
	int                     max_nbpend;  /* qmax */
	uint64_t                queue_idx;   /* streams dequeued so far (%sq) */

	/* idle connections kept for reuse (srv_idle.h) */
	struct srv_idle        *idle;        /* most recent first */
	int                     n_idle;
	int                     pool_max_conn;    /* -1: unlimited */
	int                     max_reuse;        /* requests a connection may carry after
	                                             its first one, -1: unlimited */
	uint32_t                pool_purge_delay; /* ms */
	void                   *h2_conns;    /* HTTP/2 connections to it (src/http/h2.c) */
	void                   *fcgi_conns;  /* FastCGI connections to it (src/http/fcgi.c) */

	struct ssl_srv         *ssl;         /* TLS options (ssl_cfg.h), NULL: none given */
	struct sockaddr_storage socks4;      /* "socks4": the SOCKS4 proxy connections go
	                                        through (socks4.h); socks4_len 0: none */
	socklen_t               socks4_len;
	char                   *redir;       /* "redir <prefix>": GET and HEAD get a 302 to
	                                        <prefix><path> (mode http), NULL: none */
	struct conn_src        *src;         /* source, namespace, tfo, tcp-ut (conn.h;
	                                        srv_src.c), NULL: none given */

	/* what a fresh start gives, so that a reload carries only the runtime
	 * changes (server_state.c's "servers" reload-state row) */
	unsigned                conf_admin;  /* SRV_F_MAINT/SRV_F_DRAIN after parsing */
	struct sockaddr_storage conf_addr;   /* address after parsing */
	char                   *add_args;    /* "add server": its words after the name,
	                                        quoted for a command line; NULL otherwise */
};

/* Returns 1 when <srv> can take traffic. */
static inline int server_usable(const struct server *srv)
{
	return !(srv->flags & (SRV_F_ANY_MAINT | SRV_F_DOWN | SRV_F_DRAIN | SRV_F_NOLB)) &&
	       srv->uweight > 0;
}

#define SRV_EW_SCALE 16   /* effective weights are in 1/16 of a weight unit */

/* Effective weight (x SRV_EW_SCALE) of a server of user weight <uweight>
 * <elapsed_ms> into a slow start of <period_ms>: grows linearly from a
 * sixteenth of a unit (never 0 while the weight is not) to the full weight,
 * which it is from <period_ms> on, or at once when <period_ms> is 0. */
int srv_ramp_weight(int uweight, uint32_t period_ms, double elapsed_ms);

/* Percent of its weight a slow-starting server gets now (show stat's
 * throttle), or -1 when it is not slow-starting. */
int srv_throttle(const struct server *srv);

/* Starts <srv>'s slow start if it has one: called when it comes back from
 * a failure or from maintenance (never at start-up). */
void srv_slowstart_begin(struct server *srv);

/* Recomputes srv->eweight (lb_recalc() calls it); ends a ramp whose period
 * is over or whose server stopped being usable. */
void srv_update_eweight(struct server *srv);

/* A backend's full load: its fullconn, else a tenth of the maxconn of the
 * frontends that lead to it (at least 1), as HAProxy computes it (the
 * stats' backend slim too). */
int backend_fullconn(const struct proxy *be);

/* The connection limit of <srv> now: maxconn, or with minconn and the
 * backend's fullconn, max(minconn, maxconn x backend load / fullconn) as
 * HAProxy documents it. 0: unlimited. */
int srv_dynamic_maxconn(const struct server *srv);

/* Server option keyword: a row that carries its own value, so that one
 * parser serves several keywords without re-reading their names. */
struct srv_kw {
	const char *name;
	/* NULL: an integer option stored at <off> in struct server, bounded by
	 * <min>/<max>. Else parses argv[0..] (argv[0] is the keyword) reading
	 * what differs from its row <kw> (off, min, max, set, clr); returns the
	 * number of words used (>= 1), or -1 with a message in <err>
	 * (allocated; the caller frees). */
	int (*parse)(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
	             char **err);
	size_t      off;       /* a field, in the structure .parse says (struct server if none) */
	long        min, max;
	uint64_t    set, clr;  /* flag bits the keyword sets and clears */
	uintptr_t   arg;       /* another value told apart by a shared parser */
};

void srv_register_keywords(struct srv_kw *kws, size_t n);

/* A server option taking one of a few names, each standing for flags: the
 * row's <arg> points to a table of them ending with a NULL name; the
 * flags of the name given replace the row's <clr> bits, and the row's <set>
 * bits are added ("proto h2", "check-proto fcgi"). */
struct srv_kw_choice {
	const char *name;
	unsigned    flags;
};
int srv_kw_choose(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                  char **err);

/* Calls <fn> on every registered server option row. For listings and the
 * documentation test. */
void srv_kw_foreach(void (*fn)(const struct srv_kw *kw, void *arg), void *arg);

struct cli_ctx;

/* Finds the server named by a runtime command's "backend/server" argument
 * (NULL accepted), or writes HAProxy's error line to ctx->out and returns
 * NULL. */
struct server *cli_server(struct cli_ctx *ctx, const char *arg);

/* Adds to backend <px> the server a keyword implies (dispatch, option
 * transparent): <name> at <addr>, without the default-server settings or
 * options, declared at the backend's line. Returns it; <err> is allocated
 * when it failed (it may still be declared: the configuration is then in
 * error). At post-parse, before the servers are set up. */
struct server *server_add_implied(struct proxy *px, const char *name, const char *addr,
                                  char **err);

/* The administrative state of <srv> as "set server <srv> state <state>"
 * sets it: "ready", "drain" or "maint" (logged, LB recomputed). Returns 0,
 * or -1 for another word. */
int server_set_state(struct server *srv, const char *state);

/* Sets <srv>'s address (and port when non-zero), the address its checks use
 * unless they have their own, and the text `show stat` prints; a server in
 * maintenance for want of an address leaves it (logged). Connections kept
 * idle to the old address are closed, and the hook of
 * server_on_addr_change() is told (multiplexed connections: no new stream
 * goes to the old address). */
void server_set_address(struct server *srv, const struct sockaddr_storage *ss, socklen_t len,
                        uint16_t port);

/* Registers a function told when a server's address changed (the HTTP/2
 * and FastCGI layers: their connections to the server get no more
 * requests); at most 3, at start-up. */
void server_on_addr_change(void (*fn)(struct server *srv));

/* Puts <srv> in maintenance for want of an address (<on>, logged with
 * <why> as HAProxy: "DNS NX status"...) or takes it out (logged as a
 * server that resolves again). Nothing when it is already so. */
void server_set_rmaint(struct server *srv, int on, const char *why);

/* Gives <srv>, which has no source of its own, its backend's "source"
 * (srv_src.c), and opens its namespace. Returns 0, or -1 with <err>
 * allocated (the caller frees). */
int srv_src_inherit(struct server *srv, char **err);

/* Records that "del server" removed <be>/<srv>, a server of the
 * configuration, so that a reload removes it again (server_state.c). */
void server_state_note_deleted(const char *be, const char *srv);

#include <sluice/lb.h>

#endif
