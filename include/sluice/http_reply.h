/* HTTP replies made by sluice itself: the error pages (HAProxy's defaults,
 * "errorfile", "http-errors" sections, "errorfiles", "http-error"), and the
 * reply arguments shared by "http-request return" and "deny"/"tarpit". A
 * reply is parsed once at start-up into a status, header fields and a
 * body; it becomes a message head at run time (so http-after-response
 * rules apply to it). */
#ifndef SLUICE_HTTP_REPLY_H
#define SLUICE_HTTP_REPLY_H

#include <stddef.h>

struct cfg_ctx;
struct proxy;
struct http_head;
struct lf_expr;
struct lf_ctx;

/* Where the body of a reply comes from. */
enum http_reply_type {
	HTTP_REPLY_EMPTY,    /* no payload argument: no body, "content-length: 0" */
	HTTP_REPLY_ERRDEF,   /* default-errorfiles: the proxy's error page for <status>,
	                      * chosen at run time (http_reply_resolve) */
	HTTP_REPLY_ERRMSG,   /* errorfile, errorfiles, errorloc: a whole message (errfile) */
	HTTP_REPLY_BODY,     /* string / file: the literal <body> */
	HTTP_REPLY_LF,       /* lf-string / lf-file: <lf_body> (its source in <body>) */
};

#define HTTP_REPLY_F_SILENT 0x01  /* an empty errorfile: send nothing, close */
#define HTTP_REPLY_F_CLOSE  0x02  /* errorfile without content-length: the body
                                   * ends at close, so the connection must close */
#define HTTP_REPLY_F_V10    0x04  /* errorfile written as HTTP/1.0 */

struct http_reply_hdr {
	char           *name;
	char           *value;      /* literal, or a log-format when <lf> */
	struct lf_expr *lf;
};

struct http_reply {
	int                    status;
	char                  *reason;    /* NULL: the standard reason phrase */
	char                  *ctype;     /* content-type, NULL: none */
	struct http_reply_hdr *hdrs;
	int                    nhdrs;
	char                  *body;      /* literal body (owned) */
	size_t                 body_len;
	struct lf_expr        *lf_body;   /* lf-string / lf-file body, else NULL */
	int                    errfile;   /* from an errorfile: fields as in the file */
	enum http_reply_type   type;
	unsigned               flags;     /* HTTP_REPLY_F_* */
};

/* Standard reason phrase of <status> ("Unknown" for unknown codes). */
const char *http_reason(int status);

/* Parses reply arguments from argv[*idx] on: "status N", "content-type T",
 * "string S", "lf-string S", "file F", "lf-file F", "errorfile F",
 * "errorfiles NAME", "default-errorfiles", "hdr NAME VALUE". Stops at
 * "if"/"unless" or the end, leaving *idx there. <r> is filled (status
 * defaults to <def_status>); files are read now. With no payload argument
 * r->type is HTTP_REPLY_EMPTY (deny/tarpit then use the error page, return
 * sends an empty body: the caller decides). "errorfiles NAME" gives an
 * HTTP_REPLY_ERRMSG reply completed in place by cfg_postparse() (or made
 * HTTP_REPLY_EMPTY, with a warning, when the section lacks the code): <r>
 * must not move until then, or be released first. Returns 0 or -1 after
 * cfg_alert(). */
int http_reply_parse(struct cfg_ctx *ctx, int argc, char **argv, int *idx,
                     struct http_reply *r, int def_status);

/* Releases what a parsed reply owns (not <r> itself). */
void http_reply_release(struct http_reply *r);

/* Whether <status> has a default error page (the codes errorfile, deny and
 * default-errorfiles accept: 200 400 401 403 404 405 407 408 410 413 421 422
 * 425 429 500 501 502 503 504). */
int http_error_known(int status);

/* The error reply <px> itself sets for <status> (its errorfile, errorloc,
 * errorfiles or http-error lines, or those of its defaults section), or
 * NULL when it sets none: the HTTP engine looks in the backend, then the
 * frontend, then takes http_error_reply(NULL, status). */
const struct http_reply *http_error_find(const struct proxy *px, int status);

/* <r> itself, or when it is HTTP_REPLY_ERRDEF the error page of <px> for
 * its status (http_error_reply). */
const struct http_reply *http_reply_resolve(const struct http_reply *r,
                                            const struct proxy *px);

/* Releases the http-errors sections and pending references if
 * cfg_postparse() did not run (tests, a failed start). */
void http_errors_free_all(void);

/* The reply for error <status> in proxy <px> (may be NULL): its http-error,
 * errorfile or errorfiles entry, else HAProxy's default page. Never NULL:
 * a code without a page gets the 500 one, as in HAProxy. */
const struct http_reply *http_error_reply(const struct proxy *px, int status);

/* What the log-format parts of <r> (header values, body) need from a
 * log-format context (LF_N_*), so that only that is filled. */
unsigned http_reply_lf_needs(const struct http_reply *r);

/* Makes <r> a message head in <h> (whose field table and arena the caller
 * provides): status line, fields, content-length. The body is returned in
 * <body>/<blen> (static storage or <h>'s arena). <lf> renders lf-string
 * parts (may be NULL when <r> has none: they render empty). Fields point
 * into <r>, which lives as long as the configuration. A silent reply
 * (HTTP_REPLY_F_SILENT) gives an empty head: send nothing. An
 * HTTP_REPLY_ERRDEF reply gives the default page of its status. Returns 0,
 * or -1 when <h> is too small (the arena holds the status digits, the
 * content-length and what lf parts render to). */
int http_reply_to_head(const struct http_reply *r, const struct lf_ctx *lf,
                       struct http_head *h, const char **body, size_t *blen);

#endif
