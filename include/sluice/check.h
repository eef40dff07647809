/* Health checks: a TCP connect to each server with "check", every inter
 * (fastinter while changing state, downinter while down), optionally
 * followed by rules played over the connection (tcpcheck.h, httpchk.h). A
 * server goes DOWN after "fall" failures in a row and UP after "rise"
 * successes, as in HAProxy; transitions are logged in HAProxy's wording. */
#ifndef SLUICE_CHECK_H
#define SLUICE_CHECK_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>

struct proxy;
struct server;
struct ssl_st;
struct var_store;
struct httpchk_req;
struct extchk_proc;
struct email_cfg;

/* Results, named as HAProxy's check_status words (check_result_str()). */
enum chk_result {
	CHK_R_NONE,     /* INI: no check finished yet */
	CHK_R_OK,       /* L4OK */
	CHK_R_CON,      /* L4CON */
	CHK_R_TOUT,     /* L4TOUT */
	CHK_R_SOCKERR,  /* SOCKERR */
	CHK_R_L7OK,     /* L7OK: rules passed */
	CHK_R_L7RSP,    /* L7RSP: invalid or unexpected answer */
	CHK_R_L7TOUT,   /* L7TOUT: no (complete) answer in time */
	CHK_R_L7OKC,    /* L7OKC: HTTP 404 with disable-on-404: server goes NOLB */
	CHK_R_L7STS,    /* L7STS: HTTP status not expected */
	CHK_R_L6OK,     /* L6OK: TLS hello answered (ssl-hello-chk) */
	CHK_R_L6RSP,    /* L6RSP: not a TLS answer */
	CHK_R_L6TOUT,   /* L6TOUT */
	CHK_R_HANA,     /* HANA: live traffic errors reached error-limit (observe) */
	CHK_R_PROCOK,   /* PROCOK: the external check exited with 0 */
	CHK_R_PROCERR,  /* PROCERR: ... with another status (its code) */
	CHK_R_PROCTOUT, /* PROCTOUT: ... did not end in time (killed) */
};

struct tcpchk_rule;

/* What the running check knows of an HTTP response (httpchk.c). */
struct chk_http {
	int      state;       /* 0: head incomplete, 1: head parsed, 2: body complete too */
	int      head_req;    /* the request was HEAD: no body follows */
	int      status;
	uint32_t reason_off, reason_len;   /* reason phrase, in the check's rbuf */
	uint32_t body_off, body_len;       /* body (de-chunked once complete) */
	uint64_t clen;        /* Content-Length, when it frames the body */
	unsigned flags;       /* H1_F_* of the head */
};

struct chk_h2;
struct httpchk_req;

struct check {
	struct server          *srv;
	int                     fd;          /* -1 between checks */
	ev_io                   io;
	ev_timer                timer;       /* next check, or the running check's timeout */
	uint32_t                inter, fastinter, downinter;   /* ms; 0 = inter */
	int                     rise, fall;
	int                     health;      /* 0 .. rise+fall-1; UP while >= rise; rise at start */
	uint16_t                port;        /* "port": 0 = the server's */
	struct sockaddr_storage addr;        /* "addr", or the server's address */
	socklen_t               addrlen;
	int                     has_addr;
	ev_tstamp               start;       /* of the running check */
	enum chk_result         result;      /* of the last finished check */
	long                    duration;    /* ms, of the last finished check */
	char                    info[128];   /* e.g. "Connection refused" */
	uint64_t                failed;      /* chkfail: failed checks */
	uint64_t                down_trans;  /* chkdown: UP -> DOWN transitions */
	time_t                  last_check;  /* wall clock of the last result */
	/* tcp-check rules progress */
	const struct tcpchk_rule *step;      /* next rule to play (NULL: none left) */
	int                     step_no;     /* its number, for messages; 0 before the run */
	char                   *rbuf;        /* what the server sent, for expect */
	size_t                  rlen;
	int                     rclosed;     /* the server closed its side */
	int                     connected;   /* the running check's connection is up */
	int                     used;        /* a rule sent or read on this connection */
	const struct tcpchk_rule *conn_rule; /* connect rule of the connection being opened */
	enum chk_result         run_ok;      /* result if the rules pass (L7OK, L6OK) */
	int                     run_code;    /* status seen by the running check (HTTP, SMTP, ...) */
	const char             *run_info;    /* info if the rules pass ("Redis server is ok") */
	int                     code;        /* check_code of the last result (check_has_code()) */
	struct chk_http         http;        /* HTTP response of the running check */
	/* observe (srv_observe.c): live traffic feeds the health */
	uint8_t                 observe;     /* 0, 4 (layer4) or 7 (layer7) */
	uint8_t                 on_error;    /* CHK_OE_* */
	int                     error_limit; /* consecutive errors that trigger on_error */
	int                     cons_errors; /* consecutive errors seen */
	uint64_t                hana_failed; /* hanafail: errors observed in live traffic */
	struct ssl_st          *ssl;         /* TLS session of the running check (check-ssl) */
	int                     ssl_hs;      /* its handshake is in progress */
	struct chk_h2          *h2;          /* check-proto h2: the running check's session */
	void                   *xp;          /* the running check's state in the protocol of
	                                        chk_xport_of() (FastCGI), NULL: none */
	/* check-via-socks4: the CONNECT through the server's SOCKS4 proxy */
	uint8_t                 socks_st;    /* 0: none, 1: to send once connected, 2: reply awaited */
	uint8_t                 socks_got;   /* reply bytes received */
	unsigned char           socks[9];    /* the request, then the reply */
	uint8_t                 pp_todo;     /* a PROXY header opens this connection (srv_pp.h) */
	uint8_t                 reading;     /* the rules of this run started (timeout check runs) */
	unsigned                conn_opts;   /* TCPCHK_CO_* of the running connection */
	struct var_store       *vars_check;  /* "check" variables, for one run */
	struct var_store       *vars_sess;   /* "sess" variables, for the life of the check */
	char                    run_msg[128]; /* on-success/on-error info of the running check */
	struct httpchk_req     *req_sent;    /* the last request rendered when sent */
	struct extchk_proc     *ext;         /* the running external check's program */
};

/* Health check options of a proxy (struct chk_px.options), one per keyword. */
#define CHK_O_TCPCHK     0x01ULL  /* option tcp-check: checks play the tcp-check rules */
#define CHK_O_HTTPCHK    0x02ULL  /* option httpchk: checks play the http-check rules */
#define CHK_O_DISABLE404 0x04ULL  /* http-check disable-on-404: a 404 puts the server in NOLB */
#define CHK_O_LOG_HEALTH 0x08ULL  /* option log-health-checks: log every status change */
#define CHK_O_SEND_STATE 0x10ULL  /* http-check send-state: X-Haproxy-Server-State header */
#define CHK_O_EXTCHK     0x20ULL  /* option external-check: checks run a program */

/* Per-proxy health check settings (struct proxy.chk), each proxy its own
 * copy of its defaults'. */
struct chk_px {
	uint64_t options;   /* CHK_O_* */
	char    *ext_cmd;   /* external-check command */
	char    *ext_path;  /* external-check path: the program's PATH ("" when unset) */
	struct email_cfg *email;   /* email-alert settings (mailers.h), NULL: none */
};

struct cfg_ctx;

/* "[no] option <type>" (no argument): makes <type> (CHK_O_TCPCHK,
 * CHK_O_EXTCHK...) the check type of the proxy being read, the last named
 * winning; "no" clears it. Returns 0, or -1 after cfg_alert(). */
int check_opt_type(struct cfg_ctx *ctx, int argc, char **argv, uint64_t type);

/* <px>'s check settings (all off when it has none of its own). */
const struct chk_px *chk_px_of(const struct proxy *px);

/* <px>'s own check settings, for writing: created on first change, never
 * shared with its defaults or another proxy. */
struct chk_px *chk_px_w(struct proxy *px);

#define CHK_OE_FASTINTER    0  /* check again at fastinter (the default) */
#define CHK_OE_FAIL_CHECK   1  /* as if a check failed, then fastinter */
#define CHK_OE_SUDDEN_DEATH 2  /* as if the last check before DOWN failed */
#define CHK_OE_MARK_DOWN    3  /* DOWN at once */

/* Sets <c>'s defaults for server <srv> (inter 2s, rise 2, fall 3). */
void check_init(struct check *c, struct server *srv);

/* Starts the checks of every server that has "check" (after start-up). */
void check_start_all(void);

/* Stops every check and closes their sockets (exit). */
void check_stop_all(void);

/* Starts / stops the checks of one server (dynamic servers). */
void check_start_server(struct server *srv, double delay);
void check_stop_server(struct server *srv);

/* "disable health": stops <srv>'s health checks and ignores their last
 * result: the server is UP (logged with ", health checks disabled") unless
 * its agent holds it DOWN, and shows "no check" until check_resume().
 * Returns 0 (also when already stopped), or -1 when it has no "check". */
int check_pause(struct server *srv);

/* "enable health": the checks paused by check_pause() run again, the
 * first one at once; the server keeps its state until their results
 * change it. Returns 0 (also when they run), or -1 without "check". */
int check_resume(struct server *srv);

/* HAProxy's check_status word for <r> ("L4OK", "L4CON", "L7RSP", ...). */
const char *check_result_str(enum chk_result r);

/* The words of <r> in logs and check_desc ("Layer4 connection problem"). */
const char *check_reason(enum chk_result r);

/* Whether <r> counts as a success (L4OK, L6OK, L7OK, L7OKC). */
int check_result_passed(enum chk_result r);

/* Whether the last result of <c> carries a code (check_code, "code: N" in
 * logs): L7OK, L7OKC and L7STS do, as in HAProxy. */
int check_has_code(const struct check *c);

/* Fills <out> with the stats "status" column of <srv> ("UP", "DOWN",
 * "UP 1/3" while going down, "DOWN 1/2" while going up, "NOLB" (checks
 * answer 404 with disable-on-404), "MAINT", "DRAIN", "no check"). */
void check_status_str(const struct server *srv, char *out, size_t sz);

/* observe: <srv>'s live traffic reached its error-limit; <info> says what
 * ("Detected 10 consecutive errors, last one was: ..."). Applies the
 * on-error action (a failed check of result HANA, DOWN at once...) and
 * schedules the next check at fastinter. */
void check_health_analyze(struct server *srv, const char *info);

/* <srv> goes DOWN / UP because of <why>, a check other than its health
 * check (its agent): logged with <why>'s result as the reason. */
void check_server_down(struct server *srv, const struct check *why);
void check_server_up(struct server *srv, const struct check *why);
/* Marks a running <srv> "stopping" (no new load-balanced traffic), as
 * disable-on-404 does. */
void check_server_nolb(struct server *srv);

/* Ends the running check of <c> with result <res>, its code <code> (for
 * the results that have one) and <info> (the external checks report so). */
void check_report(struct check *c, enum chk_result res, int code, const char *info);

/* ---- external checks (extcheck.c) ---- */

/* Starts the program of <c>'s external check. Returns 0 (check_report()
 * follows when it exits), or -1 with errno when it could not start. */
int extchk_start(struct check *c);

/* Kills the running program of <c> (with its process group); it is reaped
 * when it is gone, without reporting. */
void extchk_stop(struct check *c);

/* How long <c>'s program may run: "timeout check" bounded by inter. */
double extchk_timeout(const struct check *c);

/* Makes the servers that track <srv> ("track") follow its state after a
 * change: DOWN while it is DOWN or in maintenance, UP otherwise. */
void check_track_sync(struct server *srv);

/* A protocol carrying the HTTP requests of health checks that a module above
 * the checks speaks (FastCGI, src/http/fcgi_check.c), registered once. */
struct chk_xport {
	/* Sends request <q> over the check's fresh connection, its state in
	 * c->xp. Returns 0, or -1 when it could not be sent. */
	int  (*send)(struct check *c, const struct httpchk_req *q);
	/* Reads what came; once the answer is whole (or the server closed),
	 * lays it out in c->rbuf as an HTTP/1.1 response with its
	 * Content-Length and sets c->rclosed. Returns 0, or -1 on a socket or
	 * protocol error. */
	int  (*read)(struct check *c);
	/* Frees c->xp (NULL accepted). */
	void (*free)(struct check *c);
};

void chk_xport_register(const struct chk_xport *x);

/* Whether the HTTP checks of <srv> speak FastCGI by default (check-proto
 * fcgi, or proto fcgi without check-proto). */
int chk_srv_speaks_fcgi(const struct server *srv);

/* The protocol the HTTP checks of the running connection of <c> go through
 * (its TCPCHK_CO_FCGI), NULL: HTTP itself. */
const struct chk_xport *chk_xport_of(const struct check *c);

/* Frees what the running check of <c> holds in such a protocol. */
void chk_xport_free(struct check *c);

#endif
