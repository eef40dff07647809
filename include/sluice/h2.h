/* HTTP/2 on the client side: the mux that turns one client connection into
 * many mode http streams (src/http/h2.c, h2_stream.c, doc/design.md §2). */
#ifndef SLUICE_H2_H
#define SLUICE_H2_H

#include <stddef.h>

struct stream;

/* The client connection preface (RFC 9113 3.4). */
#define H2_PREFACE_LEN 24
extern const char h2_preface[H2_PREFACE_LEN + 1];

/* Whether the <n> bytes at <p> are the preface: 1 (its whole length is
 * there), -1 (a prefix of it: more is needed), 0 (not it). */
int h2_preface_match(const char *p, size_t n);

/* The client connection of freshly started mode http stream <s> speaks
 * HTTP/2 (ALPN h2, "proto h2", or its preface came): a mux takes it over,
 * with the bytes already read, and <s> is freed. Returns 0, or -1 (out of
 * memory; <s> untouched). */
int h2c_take_over(struct stream *s);

/* ---- to servers ---- */

struct server;
struct conn;

/* Whether the requests to <srv> go over HTTP/2: "proto h2", or ALPN chose
 * h2 on the TLS connection <c> (NULL: not connected yet). */
int h2_srv_wants(const struct server *srv, const struct conn *c);

/* Stream <s>, assigned to its target server, takes a stream of an HTTP/2
 * connection to it that has room (<private>: never, http-reuse never).
 * Returns 0 (SS_EST through it), or -1 when none has room. */
int h2_back_attach(struct stream *s, int private);

/* The connection <s> just established to its server (SS_EST) becomes an
 * HTTP/2 connection, shared by later streams unless <private>, and <s>
 * its first stream. Returns 0, or -1 (out of memory: the connection is
 * closed, to be counted as failed). */
int h2_back_take_over(struct stream *s, int private);

/* Soft stop: every HTTP/2 connection sends its GOAWAY and closes once its
 * streams are done. */
void h2_stop_all(void);

/* Live HTTP/2 client connections. */
int h2_conn_count(void);

struct conn;
struct proxy;
struct server;

/* Calls <fn> for every HTTP/2 connection: the client ones (<back> 0, <srv>
 * NULL), then each server's (<back> 1): its connection (socket, watcher),
 * frontend or backend, server, and live streams (show fd). */
void h2_conn_foreach(void (*fn)(const struct conn *c, int back, const struct proxy *px,
                                const struct server *srv, int nstreams, void *arg),
                     void *arg);

#endif
