/* The SPOE filter's objects, shared by its file parser (spoe_cfg.c) and
 * its run time (spoe.c: agent connections, events, send-spoe-group). */
#ifndef SLUICE_HTTP_SPOE_INT_H
#define SLUICE_HTTP_SPOE_INT_H

#include <ev.h>
#include <stdint.h>

#include <sluice/conn.h>
#include <sluice/freq.h>
#include <sluice/log.h>
#include <sluice/sample.h>

struct proxy;
struct server;
struct stream;
struct acl_cond;
struct cfg_ctx;

/* The events a spoe-message may be sent on. */
enum spoe_event {
	SPOE_EV_FE_TCP_REQ,    /* on-frontend-tcp-request */
	SPOE_EV_BE_TCP_REQ,    /* on-backend-tcp-request */
	SPOE_EV_TCP_RES,       /* on-tcp-response */
	SPOE_EV_FE_HTTP_REQ,   /* on-frontend-http-request */
	SPOE_EV_BE_HTTP_REQ,   /* on-backend-http-request */
	SPOE_EV_HTTP_RES,      /* on-http-response */
	SPOE_EV_CLI_SESS,      /* on-client-session: first of the content rules (mode
	                          tcp) or of the http-request rules (mode http) */
	SPOE_EV_SRV_SESS,      /* on-server-session: first of the tcp-response content
	                          rules (mode tcp) or of the http-response rules */
	SPOE_EV_COUNT
};

/* Whether event <ev> is one of the TCP ones (mode tcp content rules). */
#define SPOE_EV_IS_TCP(ev) ((ev) <= SPOE_EV_TCP_RES)

struct spoe_arg {
	char           *name;    /* "" when not named */
	struct smp_expr expr;
};

struct spoe_msg {
	struct spoe_msg  *next;
	char             *id;
	struct spoe_arg  *args;
	int               nargs;
	int               event;     /* enum spoe_event, -1: none (a group's) */
	struct acl_cond  *cond;      /* the event's if/unless, NULL: always */
	struct proxy     *acls;      /* holds the message's own "acl" lines */
	char             *file;
	int               line;
};

struct spoe_group {
	struct spoe_group *next;
	char              *id;
	char             **names;    /* its "messages", resolved into <msgs> */
	int                n;
	struct spoe_msg  **msgs;
	char              *file;
	int                line;
};

struct spoe_conn;

/* One "filter spoe" line: its engine and the spoe-agent of that scope. */
struct spoe_agent {
	struct spoe_agent *next;     /* all agents */
	char              *id;       /* the spoe-agent's name */
	char              *engine;   /* the filter's engine (the agent's id when not given) */
	char              *file;     /* the SPOE file and the agent's line */
	int                line;
	struct proxy      *px;       /* the proxy whose filter it is */
	char              *be_name;  /* use-backend */
	struct proxy      *be;
	uint32_t           t_hello, t_idle, t_proc;   /* ms */
	char              *var_prefix;
	char              *var_err, *var_tproc, *var_ttotal;   /* NULL: not set */
	int                continue_on_error;
	uint32_t           max_frame;
	unsigned           maxconnrate;   /* per second, 0: no limit */
	unsigned           maxerrrate;    /* per second, 0: no limit */
	char             **reg_vars;      /* register-var-names, NULL: any name */
	int                n_reg_vars;
	struct spoe_msg   *msgs;          /* the messages it sends */
	struct spoe_msg  **ev[SPOE_EV_COUNT];   /* per event */
	int                nev[SPOE_EV_COUNT];
	struct spoe_group *groups;
	char              *engine_id;     /* sent in the HELLO */
	struct log_list    loggers;       /* "log": a line per processing */
	uint64_t           n_proc, n_err; /* processings done, failed (for the log line) */
	/* run time */
	struct spoe_conn  *conns;         /* open connections to its agents */
	struct server     *rr;            /* the last server connected to */
	struct freq_ctr    conn_rate, err_rate;  /* maxconnrate, maxerrrate */
};

/* What a rule runs: an event's messages, or a group's. */
struct spoe_send {
	struct spoe_agent *ag;
	struct spoe_msg  **msgs;
	int                n;
	int                event;     /* enum spoe_event, -1 for a group */
	const char        *what;      /* the event's or the group's name, for logs */
	/* send-spoe-group: its rule's proxy and the names it resolves at post-parse */
	struct spoe_send  *next;
	struct proxy      *px;
	char              *engine, *group, *file;
	int                line;
};

/* The agents of every "filter spoe" line (spoe_cfg.c). */
extern struct spoe_agent *spoe_agents;

/* Reads SPOE file <path> for the engine <engine> (NULL: the sections out
 * of any scope) into a new agent of proxy ctx->px. Returns it, or NULL
 * after errors naming the SPOE file, line and keyword. */
struct spoe_agent *spoe_file_load(struct cfg_ctx *ctx, const char *path, const char *engine);

/* The rule action of events and send-spoe-group (spoe.c). */
extern const struct act_kw spoe_event_act;

#endif
