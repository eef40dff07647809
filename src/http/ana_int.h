/* Shared by the files of the HTTP analyser (ana.c: transactions and the
 * exchange; ana_req.c: request heads; ana_res.c: response heads; txn_log.c
 * ...); not an API for other modules. */
#ifndef SLUICE_HTTP_ANA_INT_H
#define SLUICE_HTTP_ANA_INT_H

#include <stddef.h>

#include <sluice/global.h>
#include <sluice/hdr_case.h>
#include <sluice/http_ana.h>
#include <sluice/http_rules.h>
#include <sluice/stream.h>
#include <sluice/server.h>

struct stream;
struct http_head;
struct http_txn;
struct proxy;
struct h1_msg;

#define HTTP_LINE_MAX 1024   /* request line and captures kept for the log */

/* A pooled copy of at most <max> (< HTTP_LINE_MAX) bytes of <p>,
 * NUL-terminated; NULL when memory is exhausted. */
char *http_line_dup(const char *p, size_t len, size_t max);

/* Gives back a string of http_line_dup() (NULL accepted). */
void http_line_free(char *p);

/* Captures the configured request (<res> 0) or response header fields of
 * head <h>; the last occurrence of a field wins. */
void http_capture_head(struct stream *s, const struct http_head *h, int res);

/* Frees the captured values of <txn> (a transaction of <s>) and their
 * tables. */
void http_captures_free(struct stream *s, struct http_txn *txn);

/* Emits the log line of the current exchange once (frontend's format). */
void http_log(struct stream *s);

/* Records the request's latencies (queue, connect, response, total) in the
 * histograms of its frontend, backend and server, once per transaction
 * (TX_F_TIMED); requests whose head never arrived are not recorded. */
void http_count_lat(struct stream *s);

/* Counts a response of <status> on the frontend, and on the backend and
 * server when it came from the server (<to_server>). */
void http_count_status(struct stream *s, int status, int to_server);

/* Counts a failed response (invalid, cut, compression error...) on the
 * backend and the server; <fail> when HAProxy counts it as an HTTP failure
 * of the entries the stream tracks too (http_fail_cnt: invalid response
 * head, server gone or timed out before the head). */
void http_count_resp_failed(struct stream *s, int fail);

/* Answers the current request of <s> with a stored response (the HTTP
 * cache): head <head> (<hlen> bytes, complete, may be rewritten in place
 * while parsed) and <blen> body bytes at <body>. <parsed>, when not NULL,
 * is <head> already parsed (its fields' offsets are into <head>): it is
 * used instead of parsing it again. The response rules run on it as on a
 * server's response. The answer is sent at once, head and body in one
 * system call from where they are, when the client is a plain socket with
 * nothing else pending; what the socket does not take (and any answer
 * that cannot go that way) is copied to be sent as the client reads.
 * <head> and <body> are not used after the call. Returns 1 when the
 * request was answered (possibly by a reply a rule made), 0 when the head
 * could not be parsed (nothing was done: the server is asked). */
struct h1_msg;
int http_answer_stored(struct stream *s, char *head, size_t hlen, const char *body, size_t blen,
                       const struct h1_msg *parsed);

/* Runs the http-after-response rules (backend, then frontend) on response
 * head <h>, which is txn->res_head while they run. */
enum http_act_ret http_after_rules(struct stream *s, struct http_head *h);

/* Sets the Connection field of a response to the client (close or
 * keep-alive, as the transaction goes on). Returns 0 or -1 (no room). */
int http_res_conn_hdr(struct stream *s, struct http_head *h);

/* Answers the current request from here with <status> (<r>: the reply to
 * use, NULL for the proxy's error page; <out>: a redirect, or the challenge
 * of "http-request auth" added to the page). The server side is let go.
 * <t0><t1> are the termination flags for the log. Returns 0. */
struct http_reply;
struct http_act_out;
int http_reply(struct stream *s, int status, const struct http_reply *r,
               const struct http_act_out *out, enum strm_err t0, enum strm_fin t1);

/* ---- ana.c: the analysis areas, waiting rules, shared steps ---- */

#define HTTP_EXTRA_FIELDS 32      /* room for fields added by rules */
/* tune.http.maxhdr counts the start line too, as in HAProxy */
#define HTTP_MAXFIELDS    (global.maxhdr > 1 ? global.maxhdr - 1 : 1)

/* Scratch space for the head being analysed. The loop is single-threaded
 * and a head is parsed, rewritten and written out in one call, so one set
 * serves every stream. */
struct http_scratch {
	struct pool       *txn_pool;
	struct h1_hdr     *hdrs;
	struct http_field *fields;
	int                maxf;
	char              *arena;
	char              *out;
	uint32_t           size;
	/* the head of an answer made by sluice (http-request return, error
	 * pages): apart from the request head's, which its formats read */
	struct http_field *rfields;
	char              *rarena;
};

extern struct http_scratch http_ha;

/* Where the rules of a transaction stopped when an action waited (Lua):
 * which rule set, the rule, and the head they run on. The head view
 * points into the shared analysis areas (http_ha.fields, http_ha.arena) and its
 * message's buffer, which is left alone meanwhile: what the areas held
 * (the view's fields, the parser's, the arena) is set aside here and put
 * back, at the same addresses, when the rules go on. Made only when an
 * action waits. */
enum http_yld_phase { HTTP_Y_REQ_FE, HTTP_Y_REQ_BE, HTTP_Y_RES_BE, HTTP_Y_RES_FE };

struct http_yield {
	enum http_yld_phase   phase;
	struct http_rules_pos pos;
	int                   hlen;      /* the head's length in its buffer */
	struct http_head      h;
	int                   nhdrs;     /* fields of the parser (http_ha.hdrs) */
	size_t                size;      /* bytes of data[] */
	char                  data[];    /* h.nf fields, nhdrs h1_hdr, the arena */
};

/* Sets aside head <h> (<hlen> bytes, parsed into <m>) of stream <s>'s
 * transaction, whose rules stopped at <pos> of <phase>. Returns 0, or -1
 * when memory is exhausted. */
int http_yield_save(struct stream *s, enum http_yld_phase phase, const struct http_head *h,
                    int hlen, const struct http_rules_pos *pos, const struct h1_msg *m);

/* Puts the head set aside back into the analysis areas: <h> is the view
 * again, with what the parser found. */
void http_yield_restore(const struct http_yield *y, struct http_head *h);

/* Forgets the head set aside of <txn>. */
void http_yield_drop(struct http_txn *txn);

/* The connection mode of <s>'s exchange: the most closing of the
 * frontend's and the backend's. */
enum http_conn_mode http_mode(const struct stream *s);

/* Whether a message whose parser flags are <flags> asks to close the
 * connection after it (Connection: close, or HTTP/1.0 without
 * keep-alive). */
static inline int http_conn_close_wanted(unsigned flags)
{
	return (flags & H1_F_CONN_CLOSE) || (!(flags & H1_F_VER_11) && !(flags & H1_F_CONN_KA));
}

/* option h1-case-adjust-bogus-client (<opt> HTTP_O_CASE_CLI, of the
 * frontend) or -server (HTTP_O_CASE_SRV, of the backend) of <px>: the head
 * of <len> bytes at <p>, as it leaves, gets the configured spellings of
 * its field names. One flag test per message when unused. */
static inline void http_case_adjust(const struct proxy *px, uint64_t opt, char *p, size_t len)
{
	if (unlikely(http_px_of(px)->options & opt))
		hdr_case_adjust(p, len);
}

/* Prepares the request (<res> 0) or response parser <m> of <s>, relaxed by
 * option accept-invalid-http-request (frontend) or -response (backend). */
void http_msg_init(struct stream *s, struct h1_msg *m, int res, enum h1_meth meth);

/* Replaces the <old_len> head bytes at the start of <ch>'s buffer by the
 * wire form of <h>. Returns the new head length, or -1 when it does not fit
 * (tune.maxrewrite exceeded). */
struct channel;
long http_head_replace(struct channel *ch, const struct http_head *h, uint32_t old_len);

/* A rule chose service <svc> for the request of head <h> (rules of <px>):
 * it answers. Returns 0. */
struct http_service;
int http_serve(struct stream *s, const struct http_service *svc, struct proxy *px,
               const struct http_head *h);

/* Starts sending the answer of a service made at once into <d>. */
struct dstr;
void http_svc_start(struct stream *s, struct dstr *d);

/* ---- ana_req.c: the request head ---- */

/* Answers the request with <status> (a malformed or refused request),
 * <t0> the termination flag for the log. */
void http_req_error(struct stream *s, int status, enum strm_err t0);

/* Waits for, parses and analyses the request head, then runs the request
 * rules and chooses the server. Returns 0, or -1 when the stream was
 * closed. */
int http_wait_req(struct stream *s);

/* The request rules that waited go on (a wake-up). Returns 0 or -1. */
int http_req_resume(struct stream *s);

/* ---- ana_res.c: the response head ---- */

/* A response that cannot be passed on: 502. <fail>: the server's fault, an
 * HTTP failure for the tracked entries (not a failed rewrite). */
void http_res_failed(struct stream *s, enum strm_err t0, int fail);

/* Waits for, parses and analyses the response head, then runs the
 * response rules. Returns 0, or -1 when the stream was closed. */
int http_wait_res(struct stream *s);

/* The response rules that waited go on (a wake-up). Returns 0 or -1. */
int http_res_resume(struct stream *s);

/* ---- px_http.c: per-proxy options acting on the heads ---- */

/* option http-restrict-req-hdr-names delete|reject of <px> (the frontend or
 * the backend whose request rules just ran) on request head <h>: fields
 * whose name holds a byte other than a letter, a digit or '-' are removed,
 * or the request gets a 403 (PR--). Returns 1 when it was answered. */
int http_hdr_names_apply(struct stream *s, const struct proxy *px, struct http_head *h);

/* option http-use-proxy-header: the parser's flags of request <m> of <s>
 * with the Connection tokens (close, keep-alive) read from Proxy-Connection
 * instead when the request is a proxied one (absolute target) carrying it;
 * a proxied request is marked TX_F_PX_AUTH ("http-request auth" answers it
 * 407, http_auth() reads its Proxy-Authorization). */
unsigned http_pxconn_flags(struct stream *s, const struct h1_msg *m, const struct http_head *h);

/* option checkcache: when response head <h> (from the server) sets a
 * cookie and may be cached, it is replaced by a 502 (PH--, a denied
 * response) and an alert is logged. Returns 1 when it was blocked. */
int http_checkcache_block(struct stream *s, const struct http_head *h);

/* http-send-name-header of <s>'s backend: the field of that name in the
 * request head at the start of the request buffer (the last field, added
 * here) is set to the name of the server assigned. Returns 0, or -1 when
 * the buffer has no room for it (the caller answers 500). */
int http_name_hdr_set(struct stream *s);

/* The request head <h> of <s> is final but for the server's name: the
 * fields named as the backend's http-send-name-header are removed (that
 * field is added when a server is assigned: STRM_F_TARGET_HOOK). */
void http_name_hdr_prep(struct stream *s, struct http_head *h);

/* capture cookie: the first cookie of head <h> (Cookie fields of a request,
 * Set-Cookie of a response <res>) whose name starts as configured is kept
 * as "name=value", cut to the configured length, for %CC (%CS). */
void http_capture_cookie(struct stream *s, const struct http_head *h, int res);

/* The status of a monitor-uri request to frontend settings <fh>: 503 when
 * a "monitor fail" condition says so, else 200. */
int http_monitor_status(struct stream *s, const struct http_px *fh);

/* Answers the current request with the proxy's error page for <status>;
 * <t0><t1> are the termination flags for the log. Returns 0. */
int http_reply_error(struct stream *s, int status, enum strm_err t0, enum strm_fin t1);

/* Makes <h> an empty head on the analysis areas of answers made here
 * (apart from the request head's, which their formats may read). */
void http_answer_head(struct http_head *h);

/* ---- applet.c: services answering over time ---- */

/* A rule chose service <svc> (with <start>) for the request of head <h>:
 * it starts. Returns 0 (a 500 was answered when it failed). */
int http_applet_begin(struct stream *s, const struct http_service *svc, struct proxy *px,
                      const struct http_head *h);

/* Runs the service of <s> after an event. Returns 0, or -1 when the
 * stream was closed. */
int http_applet_step(struct stream *s);
/* A server is assigned to <s>'s request and a connection to it is about
 * to be used (stream_proto.redirect; also before a reused one): the
 * http-send-name-header field gets its name, and "redir" on it answers a
 * GET or HEAD with a 302 to the server's prefix and the request's path
 * instead of reaching it. Returns 1 when answered, 0 to go on. */
int http_srv_redirect(struct stream *s);

/* ---- srv_conn.c: the server side of an exchange ---- */

struct server;
struct ssl_st;

/* No server side is busy with an exchange: none chosen, or only a
 * connection kept from the previous one. */
int http_srv_idle(const struct stream *s);

/* Connection <fd> (<ssl>) to <srv>, done with its exchange after carrying
 * <reused> requests, goes to the server's idle pool (its backend's
 * http-reuse and the server's max-reuse permitting; else closed). */
void http_pool_conn(struct server *srv, int fd, struct ssl_st *ssl, int reused);

/* The connection kept between requests goes to its server's idle pool. */
void http_pool_kept(struct stream *s);

/* The exchange is answered here: whatever the server side was doing stops
 * (a kept connection is pooled, any other closed). */
void http_srv_abort(struct stream *s);

/* What the server choice needs from the editable request head <h>: the
 * server a persistence cookie names, the balance hash. 0, or -1 when a
 * rewrite failed. */
int http_req_server_prep(struct stream *s, struct http_head *h);

/* Takes an established connection <fd> (<ssl>) to the target for the
 * request (kept, or from an idle pool; <reused>: the requests it carried),
 * counted as a reuse. */
void http_reuse_conn(struct stream *s, int fd, struct ssl_st *ssl, int reused);

/* Whether a connection to <srv> that carried <reused> requests may carry
 * one more (max-reuse). */
static inline int http_srv_reusable(const struct server *srv, int reused)
{
	return srv->max_reuse < 0 || reused <= srv->max_reuse;
}

/* Connects the request to a server. Returns 0 or -1 (closed). */
/* Whether <s>'s request (an upgrade, WebSocket) goes to its "proto h2"
 * server over HTTP/1.1 ("ws auto", "ws h1"). */
int http_ws_over_h1(const struct stream *s);

/* A new server connection is established (stream_proto.srv_ready). */
int http_srv_ready(struct stream *s);
int http_connect(struct stream *s);

/* ---- msg.c ---- */

struct channel;
struct h1_msg;
struct h1_chunk;

/* Makes the head canonical before it leaves: one Content-Length field
 * with a plain number (a list of equal values, or several equal fields,
 * is folded as RFC 9110 section 8.6 asks), and the exact wire form
 * (CRLF line ends, one space after the colon, no leading empty line)
 * whenever the received bytes differ from it, so that the next hop never
 * has to be as lenient as sluice was. <hlen>: the received head length.
 * Returns 0, or -1 when the rewrite does not fit. */
int http_head_normalize(struct http_head *h, const struct h1_msg *m, uint32_t hlen);

/* Adds X-Forwarded-For / X-Original-To as the frontend or backend asks. */
int http_add_fwd_headers(struct stream *s, struct http_head *h);

/* Sets the Connection field of a request to the server. */
int http_req_conn_hdr(struct stream *s, struct http_head *h, unsigned mflags);

/* Adds <n> bytes to what <ch> may forward. Returns 0, or -1 (nothing
 * added) when the sum cannot be represented: it would wrap, or reach
 * CHN_INFINITE. Every grant goes through here. */
int http_grant(struct channel *ch, uint64_t n);

/* Grants the head (now <hlen> bytes, at the start of <ch>) and the body of
 * a message by its framing; a chunked body's chunks already buffered are
 * checked (and granted) at once. Returns 0, or -1 when the framing cannot
 * be forwarded safely (a length that overflows, bad chunks): nothing is
 * granted then, and the message must be refused (400 / 502). */
int http_grant_body(struct channel *ch, const struct h1_msg *m, long hlen,
                    enum http_msg_state *st, struct h1_chunk *ck, int *chunked);

/* Follows chunked framing over the buffered bytes not yet granted, and
 * grants them; chunk data beyond the buffer is granted ahead so that it
 * streams (or is spliced) without being looked at. Returns 1 when the body
 * ended, 0 to wait, -1 on a framing error. */
int http_chunked_step(struct channel *ch, struct h1_chunk *ck);

/* Whether the whole body of the request (whose head was taken out of the
 * buffer) is buffered, a Content-Length or a chunked one; <*len> gets its
 * length. */
int http_req_body_buffered(struct stream *s, size_t *len);

/* option http-buffer-request: whether the rules may run on the request
 * whose head of <hlen> bytes is buffered: its whole body is there, or the
 * buffer is full, or the client stopped sending. A client that expects
 * "100 Continue" before it sends a body is waited for too: the analyser
 * answers the 100 itself. */
int http_req_body_waited(struct stream *s, int hlen);

/* Whether the body of message <m>, whose head of <hlen> bytes is at the
 * start of the data of <ch>, was waited for long enough: it is all there
 * (or it has none), <at_least> bytes of it are (0: no such bound), the
 * buffer is full (tune.maxrewrite kept), or its sender stopped sending. */
int http_body_waited(const struct channel *ch, const struct h1_msg *m, size_t hlen,
                     uint64_t at_least);

/* The client of <s> waits for "100 Continue" before it sends its request
 * body, which the rules must see (option http-buffer-request,
 * wait-for-body): the 100 is answered from here, as HAProxy does, and the
 * Expect field is not forwarded (TX_F_SENT_100). */
void http_send_100(struct stream *s);

/* Empties <ch> for an answer made here, but for the bytes already granted
 * to leave at its head (interim responses: 100 Continue, 103 Early Hints),
 * which stay first, at the start of its buffer. Returns how many were
 * kept. */
uint64_t http_chan_clear(struct channel *ch);

#endif
