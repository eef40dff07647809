/* An editable view of an HTTP message head. The start line and the header
 * fields are (pointer, length) strings that point into the receive buffer
 * as parsed, or into a per-message arena once a rule rewrites them; the
 * outgoing head is written once, after every rule ran (http_head_write). */
#ifndef SLUICE_HTTP_HEAD_H
#define SLUICE_HTTP_HEAD_H

#include <stddef.h>
#include <stdint.h>

struct h1_msg;

struct http_str {
	const char *p;
	uint32_t    len;
};

struct http_field {
	struct http_str n, v;
};

/* Start-line parts. Request: method, uri, version ("HTTP/1.1").
 * Response: version, status ("200"), reason. */
enum { HTTP_SL_0, HTTP_SL_1, HTTP_SL_2 };
#define HTTP_SL_METH    HTTP_SL_0
#define HTTP_SL_URI     HTTP_SL_1
#define HTTP_SL_RQVER   HTTP_SL_2
#define HTTP_SL_RSVER   HTTP_SL_0
#define HTTP_SL_STATUS  HTTP_SL_1
#define HTTP_SL_REASON  HTTP_SL_2

#define HTTP_HEAD_F_RESP    0x01  /* a response */
#define HTTP_HEAD_F_CHANGED 0x02  /* edited: must be written out again */

struct http_head {
	unsigned           flags;   /* HTTP_HEAD_F_* */
	struct http_str    sl[3];
	struct http_field *f;       /* fields in order (caller-owned array) */
	int                nf, maxf;
	char              *arena;   /* copies of rewritten strings */
	uint32_t           arena_used, arena_size;
};

/* Fills <h> from a parsed head in <buf>, with room for <maxf> fields in
 * <f> and <arena_size> bytes in <arena> (both caller-owned). Returns 0. */
int http_head_init(struct http_head *h, const char *buf, const struct h1_msg *m,
                   struct http_field *f, int maxf, char *arena, uint32_t arena_size);

/* What a string written into a head may carry as it is. Values come from
 * samples (url_dec, b64dec, req.body...) as well as from configuration: a
 * byte its kind does not allow is written %XX (upper-case hex), the way
 * HAProxy writes them, so that no value can end a line or the head and
 * smuggle a field or a second request. */
enum http_safe {
	HTTP_SAFE_VALUE,   /* field value, reason phrase: all but CR, LF and NUL */
	HTTP_SAFE_TARGET,  /* request target, version, status: no CTL, no SP */
	HTTP_SAFE_TOKEN,   /* method, field name: RFC 9110 tchar only */
};

/* Offset of the first byte of s[0, len) that <kind> does not allow, or
 * <len> when there is none: one pass, no allocation. */
size_t http_safe_scan(const char *s, size_t len, enum http_safe kind);

/* Copies <len> bytes into the arena as they are: for strings known to be
 * safe (digits, constants, parts of a parsed head). NULL when it is full. */
const char *http_head_dup(struct http_head *h, const char *s, size_t len);

/* Copies s[0, *len) into the arena with every byte <kind> does not allow
 * written %XX; <*len> becomes the copy's length. NULL (arena unchanged)
 * when the copy does not fit. Every value and start-line part the editing
 * functions below store goes through it. */
const char *http_head_dup_safe(struct http_head *h, const char *s, size_t *len,
                               enum http_safe kind);

/* Index of the first field named <name> (case-insensitive) at or after
 * <from>, or -1. */
int http_head_find(const struct http_head *h, const char *name, size_t nlen, int from);

/* Appends a field (copied into the arena, the value made safe as
 * HTTP_SAFE_VALUE). Returns 0, or -1 when the arena or the field table is
 * full (the request then gets 500/502, as HAProxy does when tune.maxrewrite
 * is exceeded) or when <name> is not a token. */
int http_head_add(struct http_head *h, const char *name, size_t nlen, const char *val,
                  size_t vlen);

/* As http_head_add(), without copying <name> and <val>, which must outlive
 * the head (replies built from configuration): only a value holding a byte
 * a field may not carry is copied, encoded. <name> must be a token. */
int http_head_add_ref(struct http_head *h, const char *name, size_t nlen, const char *val,
                      size_t vlen);

/* Removes field <idx>. */
void http_head_del_at(struct http_head *h, int idx);

/* Removes every field named <name>; returns how many. */
int http_head_del(struct http_head *h, const char *name, size_t nlen);

/* Replaces every field named <name> by one with <val> (set-header). */
int http_head_set(struct http_head *h, const char *name, size_t nlen, const char *val,
                  size_t vlen);

/* Replaces the value of field <idx> (copied, made safe as
 * HTTP_SAFE_VALUE). Returns 0 or -1 (full). */
int http_head_set_value(struct http_head *h, int idx, const char *val, size_t vlen);

/* Replaces start-line part <part> (copied and made safe: a method as a
 * token, a reason phrase as a value, any other part as HTTP_SAFE_TARGET, so
 * that the line keeps its three parts). Returns 0 or -1 (full). */
int http_head_set_sl(struct http_head *h, int part, const char *s, size_t len);

/* Length of the head once written (start line, fields, empty line). */
size_t http_head_len(const struct http_head *h);

/* Writes the head in HTTP/1.1 wire form into <out> (at least
 * http_head_len() bytes). Returns the bytes written. */
size_t http_head_write(const struct http_head *h, char *out);

/* Whether the comma-separated value list of the <name> fields holds <tok>
 * (case-insensitive), e.g. "Connection: keep-alive, Upgrade". */
int http_head_has_token(const struct http_head *h, const char *name, const char *tok);

#endif
