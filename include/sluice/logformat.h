/* Log-format strings: "%ci:%cp [%tr] %ft %b/%s ..." compiled once at start-up
 * into a node list, rendered per request from a plain-data context that the
 * stream fills (so this module knows nothing of streams). Also used for
 * lf-string values of HTTP rules. option httplog / tcplog are predefined
 * formats. */
#ifndef SLUICE_LOGFORMAT_H
#define SLUICE_LOGFORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

struct stream;

/* The formats behind "option httplog", "option tcplog", "option httplog clf",
 * "option httpslog". */
extern const char LF_HTTPLOG[];
extern const char LF_HTTPSLOG[];
extern const char LF_TCPLOG[];
extern const char LF_HTTPLOG_CLF[];

struct lf_node;

struct lf_expr {
	struct lf_node *nodes;
	int             n;
	unsigned        needs;   /* LF_N_*: what the context must provide */
	int             nslots;  /* samples of an HTTP head, kept by lf_snapshot() */
};

#define LF_N_REQLINE  0x01   /* request line / method / uri (%r %HM %HU %HP %HQ %HV) */
#define LF_N_CAPTURE  0x02   /* captured headers (%hr %hrl %hs %hsl) */
#define LF_N_UNIQID   0x04   /* %ID */
#define LF_N_HTTP     0x08   /* a variable HAProxy reserves for mode http (see lf_http_var) */
#define LF_N_FEADDR   0x10   /* the address the client connected to (%fi %fp) */

/* Everything a log line can show, filled by the stream at log time. Times
 * are milliseconds, -1 when the step did not happen (HAProxy prints -1). */
struct lf_ctx {
	const struct sockaddr_storage *cli, *fe_addr, *be_src, *srv_addr;
	struct timespec accept_date;    /* %t, %T, %Ts ... */
	struct timespec req_date;       /* %tr (accept date + idle time) */
	const char     *fe_name, *be_name, *srv_name;   /* srv: "<NOSRV>" when none */
	const char     *fe_name_transport;              /* %ft: frontend name ('~' when TLS) */
	long            TR, Tw, Tc, Tr, Ta, Tt, Th, Ti, Tq, Td;
	int             status;         /* %ST, -1 when none */
	uint64_t        bytes_out;      /* %B: server->client bytes */
	uint64_t        bytes_in;       /* %U: client->server bytes */
	char            term[4];        /* %ts (2 first), %tsc (4) */
	int             actconn, feconn, beconn, srvconn; /* %ac %fc %bc %sc */
	int             retries;        /* %rc */
	int             redispatched;   /* %rc gets a '+' prefix */
	int             srv_queue, be_queue;  /* %sq %bq */
	const char     *req_cookie, *res_cookie;   /* %CC %CS ("-" when none) */
	const char     *reqline;        /* %r: "GET / HTTP/1.1", NULL: "<BADREQ>" */
	size_t          reqline_len;
	const char    **req_cap;        /* %hr: capture request header values (NULL: none) */
	int             n_req_cap;
	const char    **res_cap;        /* %hs */
	int             n_res_cap;
	const char     *unique_id;      /* %ID */
	uint64_t        uniq_num;       /* %rt: request counter */
	const char     *hostname;       /* %H */
	int             pid;            /* %pid */
	/* Added after the first draft; zero (or NULL) when the filler does not
	 * know them: */
	long            Tu;             /* %Tu: Tt without the idle and handshake times */
	uint64_t        log_counter;    /* %lc: lines logged by the frontend */
	const char     *ssl_ciphers;    /* %sslc, NULL: "-" */
	const char     *ssl_version;    /* %sslv, NULL: "-" */
	int             li_id;          /* %cp/%fp of a UNIX socket: the listener's id */
	int             asap;           /* option logasap: %Ta %Tt %Tu %B get a '+' (they stop
	                                   where the line is made, before the end) */
	struct stream  *strm;           /* %[...] sample expressions; NULL: they give nothing */
	int             log;            /* a log line: a missing %[...] sample gives "-" (in
	                                   header values, bodies, IDs it gives nothing, as
	                                   in HAProxy) */
	int             use_snap;       /* samples of HTTP heads come from <snap> ... */
	char *const    *snap;           /* ... (lf_snapshot()); NULL: none was taken */
};

/* Compiles <fmt>. Unknown variables are errors. On error returns -1 with
 * <err> allocated (the caller frees it) naming the variable and its
 * position. Returns 0 on success. */
int lf_compile(const char *fmt, struct lf_expr *out, char **err);

/* Name (without '%') of the first variable of <e> that HAProxy reserves for
 * mode http ("TR", "r", "hr"...), so that a TCP proxy can refuse the format
 * as HAProxy does; NULL when there is none (LF_N_HTTP is clear). */
const char *lf_http_var(const struct lf_expr *e);

/* Name of the first sample fetch of <e> that needs a stream (no
 * SMP_USE_CONST), for users that render without one (health checks);
 * NULL when every %[...] works without. */
const char *lf_stream_fetch(const struct lf_expr *e);

/* Releases a compiled expression (the struct itself is the caller's). */
void lf_free(struct lf_expr *e);

/* Renders <e> into <out> (at most <size>-1 bytes, NUL-terminated; a line
 * that does not fit is truncated). Returns the length written. */
size_t lf_render(const struct lf_expr *e, const struct lf_ctx *c, char *out, size_t size);

/* Evaluates now, for stream <s>, the samples of <e> that read the request
 * head (<res> 0) or the response head (<res> 1), and keeps their text in
 * vals[0..e->nslots) (copies made by <dup>; a previous value is given to
 * <release>; a missing sample leaves NULL). A log line is written after
 * the heads are gone: lf_render() with c->use_snap and c->snap = vals
 * shows these values, as HAProxy's logs show the request as it was. */
void lf_snapshot(const struct lf_expr *e, struct stream *s, int res, char **vals,
                 char *(*dup)(const char *p, size_t len), void (*release)(char *p));

#endif
