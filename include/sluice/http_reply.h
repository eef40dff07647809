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
};

/* Standard reason phrase of <status> ("Unknown" for unknown codes). */
const char *http_reason(int status);

/* Parses reply arguments from argv[*idx] on: "status N", "content-type T",
 * "string S", "lf-string S", "file F", "lf-file F", "errorfile F",
 * "errorfiles NAME", "default-errorfiles", "hdr NAME VALUE". Stops at
 * "if"/"unless" or the end, leaving *idx there. <r> is filled (status
 * defaults to <def_status>). Returns 0 or -1 after cfg_alert(). */
int http_reply_parse(struct cfg_ctx *ctx, int argc, char **argv, int *idx,
                     struct http_reply *r, int def_status);

/* Releases what a parsed reply owns (not <r> itself). */
void http_reply_release(struct http_reply *r);

/* The reply for error <status> in proxy <px>: its http-error, errorfile or
 * errorfiles entry, else HAProxy's default page. Never NULL (unknown codes
 * get a generic page). */
const struct http_reply *http_error_reply(const struct proxy *px, int status);

/* Makes <r> a message head in <h> (whose field table and arena the caller
 * provides): status line, fields, content-length. The body is returned in
 * <body>/<blen> (static storage or <h>'s arena). <lf> renders lf-string
 * parts (may be NULL when <r> has none). Returns 0, or -1 when <h> is too
 * small. */
int http_reply_to_head(const struct http_reply *r, const struct lf_ctx *lf,
                       struct http_head *h, const char **body, size_t *blen);

#endif
