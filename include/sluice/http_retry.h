/* "retry-on": which failures retry a request (HAProxy's L7 retries). The
 * connection failure condition is played by stream.c; the others keep a
 * copy of a small request until its response head arrives, and send it
 * again, to the same server or another one ("option redispatch"). */
#ifndef SLUICE_HTTP_RETRY_H
#define SLUICE_HTTP_RETRY_H

#include <sluice/proxy.h>

struct stream;

/* The PR_RE_* conditions are a backend setting: proxy.h. */

/* The request head (and its body) just granted to leave is complete in
 * the request buffer, and the backend has L7 retry conditions: keeps a
 * copy (a pooled buffer, owned by the transaction) for a retry. Does
 * nothing for a request that does not fit, has a chunked or unknown-length
 * body, or asked "disable-l7-retry". */
void http_retry_save(struct stream *s);

/* Drops the kept copy of the request (NULL-safe on a transaction that has
 * none): the response head was accepted, or the transaction ends. */
void http_retry_drop(struct stream *s);

/* Failure <cond> (one PR_RE_* bit) hit the request of <s> after it was sent
 * and before anything of the response left to the client. When retry-on
 * names <cond>, a copy is kept and retries remain: closes the server
 * connection, puts the request back, and connects again (another server
 * when "option redispatch" says so). Returns 1 when a retry started (the
 * stream lives on, connecting or queued), 0 when the caller handles the
 * failure as usual. */
int http_retry_try(struct stream *s, unsigned cond);

/* The server of <s> failed (<cond>: PR_RE_EMPTY, PR_RE_JUNK or
 * PR_RE_TIMEOUT) before the response head: reported to "observe", then
 * http_retry_try(). Returns what the latter returns. */
int http_srv_failed(struct stream *s, unsigned cond);

/* A final response head of status <status> arrived for a request whose
 * copy is kept: retries when retry-on names the status (returns 1), else
 * drops the copy (the response is the one) and returns 0. */
int http_retry_head(struct stream *s, int status);

/* The PR_RE_* bit of HTTP status <status>, 0 when retry-on has none. */
unsigned http_retry_status_bit(int status);

#endif
