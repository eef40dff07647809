/* PROXY protocol v1 (text) and v2 (binary): the header a proxy puts in
 * front of a connection to pass on the original client and destination
 * addresses. Parsing for `accept-proxy`, building for `send-proxy[-v2]`. */
#ifndef SLUICE_PROXYPROTO_H
#define SLUICE_PROXYPROTO_H

#include <stddef.h>
#include <sys/socket.h>

#define PP_V1_MAX 107   /* longest v1 line, CRLF included */

/* Parses a PROXY header at the start of buf[0..len). On success returns the
 * header length (> 0) and fills <src>/<dst>, or sets *<local> when the
 * header carries no address (v1 UNKNOWN, v2 LOCAL or UNSPEC): the
 * connection's own addresses stand. Returns 0 when more bytes are needed,
 * -1 when it is not a valid header (<err> says why). */
int pp_parse(const char *buf, size_t len, struct sockaddr_storage *src,
             struct sockaddr_storage *dst, int *local, const char **err);

/* Writes a v1 or v2 header for <src> -> <dst> into <out> (at least 232
 * bytes). Non-IP addresses give "PROXY UNKNOWN" / a v2 LOCAL header.
 * Returns the header length. */
size_t pp_build(int version, const struct sockaddr_storage *src,
                const struct sockaddr_storage *dst, char *out, size_t sz);

#endif
