/* PROXY protocol headers sent to servers: by connections (with the TLVs of
 * proxy-v2-options) and by health checks (src/proxy/srv_pp.c). */
#ifndef SLUICE_SRV_PP_H
#define SLUICE_SRV_PP_H

#include <stddef.h>

struct server;
struct stream;

/* Writes into <out> (<sz> bytes) the PROXY header (<version> 1 or 2) that
 * opens <s>'s new connection to its server: the client's addresses, and in
 * v2 the TLVs the server's proxy-v2-options ask for. Returns its length (0:
 * it does not fit). */
size_t srv_pp_header(struct stream *s, int version, char *out, size_t sz);

/* Writes into <out> the PROXY header a health check of <srv> opens its
 * connection with: none (returns 0) unless the server sends one to the
 * address it is checked at, or has check-send-proxy; v1 "PROXY UNKNOWN",
 * v2 (with send-proxy-v2) a LOCAL command (PROXY with pp2-never-send-local)
 * without address. With <fd> >= 0 (a connect rule's "send-proxy"), always
 * one, with the addresses of connection <fd>. Returns its length. */
size_t srv_pp_check_header(const struct server *srv, int fd, char *out, size_t sz);

/* Whether the health checks of <srv> open with a PROXY header. */
int srv_pp_check_wanted(const struct server *srv);

/* The module that knows the unique ID of a stream (unique-id-format)
 * gives it to unique-id TLVs: <fn> returns it (written into <buf> of <sz>
 * bytes if need be), or NULL. */
void srv_pp_register_unique_id(const char *(*fn)(struct stream *s, char *buf, size_t sz));

#endif
