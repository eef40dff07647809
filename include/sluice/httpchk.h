/* HTTP health checks: "option httpchk" and the "http-check" keywords (send,
 * expect, connect, comment, set-var, unset-var, send-state, disable-on-404).
 * A backend's HTTP ruleset is a list of tcp-check rules flagged
 * TCPCHK_F_HTTP, played by the tcp-check engine (tcpcheck.h); this module
 * (httpchk.c, httpchk_dyn.c) builds the requests of its send rules and
 * reads the answers for its expect rules. */
#ifndef SLUICE_HTTPCHK_H
#define SLUICE_HTTPCHK_H

#include <stddef.h>

#include <sluice/tcpcheck.h>

struct proxy;
struct check;
struct cfg_ctx;
struct lf_expr;

#define HTTPCHK_MAXHDR 101   /* header fields of an answer, as tune.http.maxhdr */

struct httpchk_hdr {
	char           *name;
	char           *value;
	struct lf_expr *lf;    /* the value is a log format (it has a '%') */
};

/* A request as configured. NULL members take the defaults of the first
 * send rule ("option httpchk"), then OPTIONS / HTTP/1.0. */
struct httpchk_req {
	char               *meth, *uri, *ver;
	struct httpchk_hdr *hdrs;
	int                 nhdrs;
	char               *body;      /* NULL: no body */
	struct lf_expr     *uri_lf, *body_lf;   /* uri-lf, body-lf */
	int                 dynamic;   /* something is rendered when the request is sent */
};

/* The HTTP ruleset of <px> (built at post-parse), or NULL before. */
const struct tcpchk_rule *httpchk_rules(const struct proxy *px);

/* Frees <q> (NULL accepted). */
void httpchk_req_free(struct httpchk_req *q);

/* Whether <q> asks with HEAD (its answer has no body). */
int httpchk_req_is_head(const struct httpchk_req *q);

/* The bytes of request <q>: request line, header fields (names in lower
 * case; Content-Length and Transfer-Encoding given by the user are
 * dropped), "content-length" when there is a body, "connection: close"
 * for versions other than HTTP/1.0 unless a Connection field is given, the
 * empty line and the body. Returns an allocated string (the caller frees)
 * and its length in <len>. */
char *httpchk_req_build(const struct httpchk_req *q, size_t *len);

/* Parses a list of status codes and ranges ("200,201,300-310") into an
 * allocated array <codes> of <n> ranges. Returns 0, or -1 with a message
 * in <err> (<errsz> bytes) naming the offending part. */
int httpchk_codes_parse(const char *s, struct tcpchk_codes **codes, int *n, char *err,
                        size_t errsz);

/* Whether <status> is in one of the <n> ranges of <codes>. */
int httpchk_codes_match(const struct tcpchk_codes *codes, int n, int status);

/* Reads the HTTP response in buf[0..len) into <st> (st->head_req tells
 * that it answers a HEAD). <done> says that no more bytes will come (the
 * server closed, or the buffer is full); <need_body> asks for the body as
 * well as the head. Once the body is complete, chunked framing is removed
 * in place in <buf>. Returns 1 when what was asked is known, 0 when more
 * bytes are needed, -1 when the answer is not valid HTTP (or ends before
 * its head does). */
int httpchk_rsp_parse(struct chk_http *st, char *buf, size_t len, int done, int need_body);

/* Evaluates HTTP expect rule <r> on the answer <c> has read so far.
 * Returns TCPCHK_WAIT_READ, TCPCHK_PASS (res L7OK, or L7OKC for a 404 with
 * disable-on-404 on a running server) or TCPCHK_FAIL (res L7STS with the
 * reason phrase as info, L7RSP for a body mismatch or an answer that is
 * not HTTP). Sets c->run_code to the status seen. <msg> (<sz> bytes) may
 * hold the info. */
enum tcpchk_res httpchk_expect(struct check *c, const struct tcpchk_rule *r,
                               enum chk_result *res, const char **info, char *msg, size_t sz);

/* Calls <fn> on each header field of the answer in <c>'s buffer (its head
 * parsed again) until it returns 1. Returns 1 when one did, else 0 (also
 * for no valid head). */
int httpchk_rsp_hdr_any(struct check *c,
                        int (*fn)(const char *n, size_t nl, const char *v, size_t vl,
                                  const void *arg), const void *arg);

/* Sends the request of HTTP send rule <r> over <c>'s connection (HTTP/1,
 * or HTTP/2 with proto h2): its log-format parts and the send-state
 * header rendered now. Returns 0, or -1 when it could not be sent. */
int httpchk_send(struct check *c, const struct tcpchk_rule *r);

/* Parses "hdr|fhdr {name|name-lf} [-m <meth>] <name> [{value|value-lf}
 * [-m <meth>] <value>]" from argv[*i] into expect rule <r> (r->hdrm),
 * leaving *i on its last word. Returns 0, or -1 after cfg_alert(). */
int httpchk_hdrm_parse(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv,
                       int *i);
void httpchk_hdrm_free(struct httpchk_hdrm *m);

/* Whether a header field of the answer in <c>'s buffer (its head parsed)
 * matches <m>. */
int httpchk_hdrm_match(struct check *c, const struct httpchk_hdrm *m);

#endif
