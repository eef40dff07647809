/* Shared by the files of the stream (stream.c: its life and I/O;
 * stream_conn.c: its backend and server connection); not an API for other
 * modules (stream.h is). */
#ifndef SLUICE_PROXY_STREAM_INT_H
#define SLUICE_PROXY_STREAM_INT_H

#include <ev.h>

#include <sluice/stream.h>

#define TURNAROUND_MAX 1.0   /* seconds between connect retries (HAProxy's) */

/* ---- stream.c ---- */

/* An error ended the exchange: the protocol may answer it (mode http: 503,
 * 504... when the response has not started); otherwise the stream closes.
 * Returns 0 when the stream lives on, -1 once it was closed (freed). */
int stream_fail(struct stream *s, enum strm_err t0, enum strm_fin t1);

/* A fresh server connection is established: the protocol may wrap it.
 * Returns 0, or -1 when it failed. */
int stream_srv_ready(struct stream *s);

/* The callback of both sides' watchers. */
void stream_io_cb(struct ev_loop *loop, ev_io *w, int revents);

/* ---- stream_conn.c ---- */

/* The stream stops counting as a session of its backend (end of stream,
 * or of an HTTP exchange). */
void stream_be_uncount(struct stream *s);

/* The connection to the target failed (<timeout>: connect timeout, else
 * refused or reset): retried (another server when redispatch applies,
 * else the same one, after a turn-around when it refused at once), or the
 * exchange fails. Returns 0 while the stream lives on, -1 once it was
 * closed (freed). */
int stream_conn_failed(struct stream *s, int timeout);

/* The TCP connection to the server is up: through a SOCKS4 proxy, the
 * request is sent and its reply awaited (stream_socks_reply()); else the
 * connection is established. Returns 0, or -1 (a connection failure). */
int stream_srv_up(struct stream *s);

/* Reads the SOCKS4 proxy's reply. Returns 1 while more is awaited, 0 once
 * the proxy connected the server (the connection goes on as established),
 * -1 when it refused or failed (a connection failure, logged). */
int stream_socks_reply(struct stream *s);

#endif
