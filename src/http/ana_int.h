/* Shared by the files of the HTTP analyser (ana.c, txn_log.c); not an API
 * for other modules. */
#ifndef SLUICE_HTTP_ANA_INT_H
#define SLUICE_HTTP_ANA_INT_H

#include <stddef.h>

struct stream;
struct http_head;
struct http_txn;

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

#endif
