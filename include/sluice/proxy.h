/* Proxies: frontends, backends, listens and defaults sections, with the
 * settings a defaults section passes on. */
#ifndef SLUICE_PROXY_H
#define SLUICE_PROXY_H

#include <stdint.h>
#include <time.h>

#include <sluice/counters.h>
#include <sluice/lb.h>
#include <sluice/log.h>

struct listener;
struct server;
struct stream;
struct http_px;
struct http_rules;
struct http_err_table;
struct stats_px;
struct persist_px;
struct lf_expr;
struct acl_px;
struct comp_px;
struct tcp_px;
struct httpchk_px;
struct chk_px;
struct fcgi_app;

#define PR_CAP_FE  0x01
#define PR_CAP_BE  0x02
#define PR_CAP_DEF 0x04

enum pr_mode { PR_MODE_TCP, PR_MODE_HTTP };

/* "retry-on" conditions (struct proxy.retry_on): the connection failure is
 * played by the stream's server side, the others by HTTP (http_retry.h). */
#define PR_RE_CONN_FAILED  0x0001  /* connect failed: the request was never sent */
#define PR_RE_EMPTY        0x0002  /* the server closed with nothing answered */
#define PR_RE_JUNK         0x0004  /* a partial or invalid response head */
#define PR_RE_TIMEOUT      0x0008  /* timeout server before the response head */
#define PR_RE_0RTT         0x0010  /* early data rejected (no TLS 0-RTT here: never) */
#define PR_RE_401          0x0020
#define PR_RE_403          0x0040
#define PR_RE_404          0x0080
#define PR_RE_408          0x0100
#define PR_RE_425          0x0200
#define PR_RE_500          0x0400
#define PR_RE_501          0x0800
#define PR_RE_502          0x1000
#define PR_RE_503          0x2000
#define PR_RE_504          0x4000
#define PR_RE_STATUS       0x7fe0  /* any of the statuses */
/* the conditions that need the request kept until the response head */
#define PR_RE_L7           (PR_RE_EMPTY | PR_RE_JUNK | PR_RE_TIMEOUT | PR_RE_STATUS)


/* Option flags (struct proxy.options), one per "option" keyword that
 * several modules read; a module's own options are in its per-proxy
 * settings (HTTP: struct http_px.options, http_ana.h; health checks:
 * struct chk_px.options, check.h; option persist: persist.h). */
#define PR_O_SPLICE_REQ   0x0001ULL  /* splice client->server */
#define PR_O_SPLICE_RSP   0x0002ULL  /* splice server->client */
#define PR_O_SPLICE_AUTO  0x0004ULL  /* splice both ways */
#define PR_O_TCPLOG       0x0008ULL  /* log in tcplog format at stream end */
#define PR_O_DONTLOGNULL  0x0010ULL  /* no log for connections with no data */
#define PR_O_REDISPATCH   0x0020ULL  /* last retry goes to another server */
#define PR_O_TCP_KA       0x0040ULL  /* SO_KEEPALIVE on both sides */
#define PR_O_CLI_KA       0x0080ULL  /* SO_KEEPALIVE on the client side */
#define PR_O_SRV_KA       0x0100ULL  /* SO_KEEPALIVE on the server side */
#define PR_O_SOCKET_STATS 0x0200ULL  /* per-listener stats rows */
#define PR_O_ALLBACKUPS   0x0800ULL  /* all backups share the load, not only the first */
#define PR_O_SMART_ACC    0x400000ULL /* option tcp-smart-accept (on by default): no bare ACK
                                         for a request answered at once (mode http) */
#define PR_O_NOLINGER     0x10000000ULL /* option nolinger: closing resets (px_tcp.c) */
#define PR_O_SMART_CON    0x20000000ULL /* option tcp-smart-connect: no bare ACK to the server */
#define PR_O_INDEP_STR    0x40000000ULL /* option independent-streams: a side's timeout is not
                                           refreshed by what is sent to it (stream.c) */
#define PR_O_IDLE_CLOSE   0x80000000ULL /* option idle-close-on-response: a soft stop's
                                           close-spread-time leaves its idle clients be */
#define PR_O_PREF_LAST    0x100000000ULL /* option prefer-last-server (backend.c) */
#define PR_O_TRANSP       0x400000000ULL /* option transparent (px_dispatch.c) */
#define PR_O_LOGASAP      0x200000000ULL /* option logasap: logged once the response head (mode
                                            http) or the server connection (tcp) is there */

struct proxy_timeouts {
	uint32_t client, server, connect, tunnel, client_fin, server_fin, queue, check;
	uint32_t http_request, http_keep_alive, tarpit;
};


struct proxy {
	struct proxy          *next;
	char                  *name;
	int                    id;
	unsigned               cap;          /* PR_CAP_* */
	char                  *conf_file;
	int                    conf_line;
	/* HAProxy's warning about a defaults section both named by "from"
	 * and used implicitly (as the last one) by another proxy */
	const struct proxy    *def_implicit; /* the defaults used without "from", or NULL */
	int                    def_named;    /* a defaults section some "from" names */

	/* settings inherited from defaults (copied at creation) */
	enum pr_mode           mode;
	uint64_t               options;      /* PR_O_* */
	struct proxy_timeouts  timeout;
	int                    retries;
	int                    redispatch_every; /* option redispatch <interval> (-1: last retry) */
	unsigned               retry_on;     /* PR_RE_* ("retry-on", http_retry.h) */
	int                    maxconn;      /* frontend: 0 = global maxconn */
	int                    fullconn;
	int                    backlog;
	int                    fe_sps_lim;   /* rate-limit sessions (0: none) */
	char                  *dispatch;     /* dispatch <addr>:<port> (px_dispatch.c) */
	int                    max_ka_queue; /* max-keep-alive-queue (-1: no limit) */
	struct lb_conf         lb;           /* balance, hash-type (lb.h) */
	char                  *defbe_name;   /* default_backend */
	struct log_list        loggers;
	char                  *desc;
	int                    state_load;   /* load-server-state-from-file: none/global/local */
	char                  *state_file;   /* server-state-file-name */

	/* own objects */
	struct listener       *listeners;
	struct server         *servers;
	struct server         *defsrv;       /* default-server template, or NULL */
	struct tcpchk_rule    *tcpchk;       /* tcp-check rules, in order */
	int                    tcpchk_inherited; /* they are a copy of the defaults' */
	struct httpchk_px     *httpchk;      /* http checks (httpchk.c), maybe its defaults' */
	int                    nsrv;
	struct proxy          *defbe;        /* resolved default_backend */
	struct stream         *queue_head, *queue_tail; /* connections waiting for a server */
	int                    nbpend;       /* their number (qcur) */
	int                    max_nbpend;   /* qmax */
	uint64_t               queue_idx;    /* streams dequeued so far (%bq) */
	uint32_t               srv_act;      /* usable active servers (lb_recalc) */
	uint32_t               srv_bck;      /* usable backup servers (lb_recalc) */
	uint64_t               tot_weight;   /* sum of usable weights */

	/* module-owned settings (see proxy_register_ext), NULL when unused */
	struct http_px        *http;         /* http_ana.h */
	struct http_rules     *http_rules;   /* http_rules.h: HTTP_RS_COUNT sets */
	struct http_err_table *http_errors;  /* http_reply.c */
	char                  *logformat_str;/* log-format / option httplog|tcplog */
	struct lf_expr        *logformat;    /* compiled at post-parse */
	struct stats_px       *stats;        /* stats page settings (stats_http.c) */
	struct persist_px     *persist;      /* cookie persistence (persist.c) */
	struct chk_px         *chk;          /* health check options (check.h) */
	struct acl_px         *acl;          /* acl_px.h: named ACLs, use_backend rules */
	struct tcp_px         *tcp_rules;    /* tcp_rules.h: tcp-request/tcp-response rules */
	struct stk_px         *stk;          /* stick table and stick rules (stktable.c) */
	struct comp_px        *comp;         /* compression settings (comp.h) */
	struct conn_src       *conn_src;     /* "source" of a backend (srv_src.c, conn.h) */
	const struct fcgi_app *fcgi_app;     /* use-fcgi-app (fcgi_app.h), NULL: none */
	struct pxlog_px       *pxlog;        /* log-tag, log-format-sd, error-log-format (px_log.c) */
	struct px_tcp         *tcp;          /* socket options of each side (px_tcp.c) */

	/* runtime */
	int                    feconn;       /* current frontend connections */
	int                    beconn;       /* current backend connections */
	int                    disabled;     /* "disabled" keyword or soft-stopped */
	time_t                 last_change;
	struct counters        fe_counters;
	struct counters        be_counters;
};

/* A module keeping its own per-proxy settings says how they pass from a
 * defaults section to a proxy (<inherit>, called at proxy creation) and how
 * they are released. <e> must stay valid for the life of the process. */
struct proxy_ext {
	void (*inherit)(struct proxy *px, const struct proxy *def);
	void (*release)(struct proxy *px);
	struct proxy_ext *next;
};
void proxy_register_ext(struct proxy_ext *e);

/* The HAProxy rule for rules written in a named defaults section: the
 * proxies running them (<def_of> gives the defaults section whose rules a
 * proxy runs, or NULL) are all frontends or all backends, and no listen.
 * Reports each violation naming <what> rules ("HTTP", "TCP"). Returns the
 * number of errors. */
int proxy_check_rules_def(const char *what, const struct proxy *(*def_of)(const struct proxy *));

/* Frees proxy <px>, which no list holds (the private ACLs of a section
 * that is not a proxy: fcgi-app); NULL accepted. */
void proxy_free_detached(struct proxy *px);

/* Looks a proxy up by name among those having any of <cap>. */
struct proxy *proxy_find(const char *name, unsigned cap);

/* The effective maxconn of frontend <px>. */
int proxy_fe_maxconn(const struct proxy *px);

/* Stops every frontend's listeners (soft stop). */
void proxy_stop_all(void);

/* Releases all proxies (at exit, for leak checkers). */
void proxy_free_all(void);

/* Human-readable mode ("tcp"/"http"). */
const char *proxy_mode_str(const struct proxy *px);

#endif
