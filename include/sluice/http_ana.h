/* mode http: the transaction of a stream (one request and its response at a
 * time, pipelined requests wait in the buffer), the request and response
 * analysers that stream.c runs around the channels, keep-alive on both
 * sides, local replies (errors, return, redirect) and the per-proxy HTTP
 * settings (timeouts, connection mode, forwardfor, captures, logging). */
#ifndef SLUICE_HTTP_ANA_H
#define SLUICE_HTTP_ANA_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sluice/h1.h>
#include <sluice/http_head.h>
#include <sluice/http_rules.h>

struct proxy;
struct stream;
struct lf_ctx;
struct lf_expr;
struct http_reply;
struct comp_ctx;
struct cache_txn;
struct fcgi_txn;
struct http_service;
struct acl_cond;

/* Connection modes (option http-keep-alive / http-server-close / httpclose). */
enum http_conn_mode { HTTP_KAL, HTTP_SCL, HTTP_CLO };

enum http_reuse { HTTP_REUSE_SAFE, HTTP_REUSE_NEVER, HTTP_REUSE_AGGRESSIVE, HTTP_REUSE_ALWAYS };

/* capture request|response header NAME len N */
struct http_capture {
	char *name;
	int   len;
};

#define HTTP_FWD_IFNONE 0x01  /* option forwardfor if-none */

/* Per-proxy HTTP settings (struct proxy.http), inherited from defaults. */
/* HTTP options (struct http_px.options), one per "option" keyword. */
#define HTTP_O_ABRT_CLOSE     0x01ULL  /* a client closing aborts its pending request */
#define HTTP_O_DONTLOG_NORMAL 0x02ULL  /* log only errors, timeouts, retries */
#define HTTP_O_LOG_SEP_ERR    0x04ULL  /* errors logged at level err */
#define HTTP_O_PRETEND_KA     0x08ULL  /* http-pretend-keepalive (accepted, no effect) */
#define HTTP_O_IGNORE_PROBES  0x10ULL  /* no 408 nor log for connections that sent nothing */
#define HTTP_O_BUFREQ         0x20ULL  /* option http-buffer-request: rules wait for the body */
#define HTTP_O_NO_H2_UPG      0x40ULL  /* option disable-h2-upgrade: no HTTP/2 preface on HTTP/1 */
#define HTTP_O_CASE_CLI       0x80ULL  /* option h1-case-adjust-bogus-client (hdr_case.h) */
#define HTTP_O_CASE_SRV       0x100ULL /* option h1-case-adjust-bogus-server (hdr_case.h) */
#define HTTP_O_ACC_INV_REQ    0x200ULL /* option accept-invalid-http-request (h1.h H1_F_RELAX) */
#define HTTP_O_ACC_INV_RES    0x400ULL /* option accept-invalid-http-response */
#define HTTP_O_USE_PXHDR      0x800ULL /* option http-use-proxy-header (px_http.c) */
#define HTTP_O_CHECKCACHE     0x1000ULL /* option checkcache (px_http.c) */
#define HTTP_O_NO_DELAY       0x2000ULL /* option http-no-delay: no MSG_MORE (CH_F_NODELAY) */

/* option http-restrict-req-hdr-names (struct http_px.hdr_names) */
enum { HTTP_HN_PRESERVE, HTTP_HN_DELETE, HTTP_HN_REJECT };

struct http_px {
	uint64_t              options;         /* HTTP_O_* */
	enum http_conn_mode   conn_mode;
	int                   conn_mode_set;   /* explicitly set in this section */
	enum http_reuse       reuse;
	/* option forwardfor [except NET] [header NAME] [if-none] */
	int                   fwdfor;
	char                 *fwdfor_hdr;
	unsigned              fwdfor_flags;
	struct sockaddr_storage fwdfor_except;
	int                   fwdfor_except_bits;   /* -1: none */
	/* option originalto [except NET] [header NAME] */
	int                   origto;
	char                 *origto_hdr;
	struct sockaddr_storage origto_except;
	int                   origto_except_bits;
	char                 *monitor_uri;
	struct http_capture  *req_cap, *res_cap;
	int                   n_req_cap, n_res_cap;
	char                 *uniqid_fmt_str, *uniqid_hdr;
	struct lf_expr       *uniqid_fmt;
	unsigned char         hdr_names;       /* HTTP_HN_* */
	struct acl_cond     **monitor_fail;    /* monitor fail if|unless: any true gives 503 */
	int                   n_monitor_fail;
	char                 *send_name;       /* http-send-name-header <name> (px_http.c) */
	char                 *ck_cap_name;     /* capture cookie <name> len <n> (px_http.c) */
	int                   ck_cap_len;
};

/* Where a message is in its life. */
enum http_msg_state {
	HTTP_MSG_IDLE,      /* waiting for (or parsing) the head */
	HTTP_MSG_BODY,      /* head forwarded; body being forwarded */
	HTTP_MSG_DONE,      /* every byte of the message is granted to leave */
	HTTP_MSG_TUNNEL,    /* upgraded or CONNECT: raw bytes both ways */
};

#define TX_F_CLI_CLOSE   0x0001  /* close the client side after this transaction */
#define TX_F_SRV_CLOSE   0x0002  /* close the server connection after it */
#define TX_F_LOCAL       0x0004  /* the response is made here (error, return...) */
#define TX_F_REQ_SEEN    0x0008  /* at least one byte of this request arrived */
#define TX_F_WAIT_100    0x0010  /* Expect: 100-continue was forwarded */
#define TX_F_TARPIT      0x0020  /* tarpitted: answer at the end of the delay */
#define TX_F_REUSED      0x0040  /* the server connection was reused */
#define TX_F_CONNECT     0x0080  /* CONNECT method */
#define TX_F_LOGGED      0x0100  /* the log line was emitted */
#define TX_F_DENIED      0x0200  /* denied by a rule (PR-- in the log) */
#define TX_F_RES_CLOSE_DELIM 0x0400 /* response ends at server close */
#define TX_F_BE_SET      0x0800  /* past the frontend's rules: the backend is chosen */
#define TX_F_TIMED       0x1000  /* its latencies went to the histograms */
#define TX_F_NO_L7_RETRY 0x2000  /* http-request disable-l7-retry */
#define TX_F_REUSE_RETRIED 0x4000 /* sent again after a reused connection failed */
#define TX_F_SENT_100    0x8000  /* "100 Continue" answered here (http-buffer-request) */
#define TX_F_PX_AUTH     0x10000 /* a proxied request under option http-use-proxy-header:
                                    Proxy-Authorization, 407 (px_http.c) */

/* Interim (1xx) responses one exchange may receive: beyond, a 502. */
#define HTTP_MAX_INTERIM 100

/* One request/response exchange of a stream. */
struct http_txn {
	unsigned            flags;       /* TX_F_* */
	enum http_msg_state req_st, res_st;
	struct h1_msg       req, res;    /* parser state */
	struct h1_chunk     req_ck, res_ck;
	int                 req_chunked, res_chunked;
	int                 n_interim;   /* interim (1xx) responses received */
	enum h1_meth        meth;
	int                 status;      /* of the response, -1 before */
	int                 req_ver11;   /* the client speaks HTTP/1.1 */
	char               *reqline;     /* copy of the request line for the log (pool) */
	uint32_t            reqline_len;
	char              **req_cap, **res_cap; /* captured header values (pool strings) */
	char               *ck_cap[2];   /* capture cookie: request, response (pool strings) */
	char              **lf_snap;     /* the log format's %[...] of the heads (lf_snapshot()) */
	char               *uniq_id;
	ev_tstamp           t_req;       /* first byte of the request */
	ev_tstamp           t_head;      /* request head complete */
	ev_tstamp           t_res;       /* response head received */
	uint64_t            req_bytes, res_bytes;  /* client->server, server->client (log %U %B) */
	/* The head being analysed, for sample fetches of rules and conditions;
	 * only valid while the request (resp. response) rules run, else NULL. */
	struct http_head   *req_head, *res_head;
	struct dstr        *svc_out;     /* a service's response still to send (pooled string) */
	ev_tstamp           t_tarpit;    /* end of the tarpit delay */
	int                 tarpit_status;
	const struct http_reply *tarpit_reply;
	struct var_store   *vars;        /* txn, req and res variables, NULL when none */
	/* cookie persistence (persist.c) */
	char                ck_req, ck_res; /* log: cookie state chars, '-' if none */
	int                 persist_ign; /* ignore-persist matched: no cookie inserted */
	uint32_t            ck_first, ck_last; /* dates of a valid cookie with maxidle/maxlife */
	/* retry-on with L7 conditions: the request as sent, until the response
	 * head is accepted (http_retry.h), pooled buffer or NULL */
	struct buf         *retry_buf;
	/* compression (comp.h): the algorithm the request accepts, the state
	 * of a compressed response (NULL: not compressed), and a response
	 * that bypassed compression (a limit) with where its body began */
	signed char         comp_algo;
	unsigned char       comp_byp;
	struct comp_ctx    *comp;
	uint64_t            comp_byp_mark;
	struct cache_txn   *cache;       /* the HTTP cache's state (cache.c), NULL when unused */
	struct fcgi_txn    *fcgi;        /* what set-param/pass-header gave (fcgi_app.h), NULL: none */
	/* rules suspended by an action that waits (Lua), with the head they
	 * run on set aside; NULL when none */
	struct http_yield  *yld;
	/* a service answering over time (Lua's AppletHTTP), NULL when none or
	 * once its response ended, and how its response is framed */
	const struct http_service *applet;
	struct {
		unsigned char   started;    /* its head was sent */
		unsigned char   framing;    /* HTTP_AF_* */
		uint64_t        left;       /* HTTP_AF_CLEN: body bytes still due */
		uint64_t        req_left;   /* a Content-Length request body: bytes unread */
	} app;
};

/* How the response of a service answering over time is framed. */
#define HTTP_AF_NONE    0   /* no body (HEAD, 204, 304) */
#define HTTP_AF_CLEN    1   /* its content-length */
#define HTTP_AF_CHUNKED 2   /* chunked (an HTTP/1.1 client, no content-length) */
#define HTTP_AF_CLOSE   3   /* until the close (an HTTP/1.0 client) */

/* ---- the HTTP/1 stream protocol (stream_proto, registered for mode
 * http frontends); its hooks are private to ana.c ---- */

/* Creates the transaction of <s> when its request begins (an idle client
 * connection has none). Returns it, or NULL when memory is exhausted. */
struct http_txn *http_txn_new(struct stream *s);


/* Accounts bytes for the log line of the current exchange. */
void http_count_bytes(struct stream *s, int is_req, uint64_t in, uint64_t out);

/* The stream's HTTP settings for proxy <px>, never NULL (defaults if the
 * section set nothing). */
const struct http_px *http_px_of(const struct proxy *px);

/* <px>'s own HTTP settings for a keyword parser to change (made from the
 * defaults on first use). */
struct http_px *http_px_edit(struct proxy *px);

/* Fills <c> for stream <s> (log lines, lf-strings); <c> then points into
 * <s>, so it is valid until the stream changes. <needs> (LF_N_*, the
 * formats' lf_expr.needs) asks for the costly parts: the frontend address
 * is a getsockname() call, made only for a format that shows it. */
void http_fill_lf_ctx(struct stream *s, struct lf_ctx *c, unsigned needs);

/* The unique ID of the request in progress (unique-id-format), made on
 * first use (a rule's unique-id fetch, else when the request leaves for
 * the server). NULL without a format or a request. */
const char *http_unique_id(struct stream *s);

/* Keeps, for the log line, the values of the log format's samples that
 * read the request head (<res> 0, after the request rules) or the response
 * head (<res> 1, after the response rules). */
void http_log_snapshot(struct stream *s, int res);

/* Stores the value of request (<res> 0) or response capture <idx> (the
 * last value wins); <idx> -1 only creates the (empty) capture table. */
void http_capture_set(struct stream *s, int res, int idx, const char *v, size_t len);

#endif
