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

/* Soft stop: every HTTP/2 connection sends its GOAWAY and closes once its
 * streams are done. */
void h2_stop_all(void);

/* Live HTTP/2 client connections. */
int h2_conn_count(void);

#endif
