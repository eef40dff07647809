/* SOCKS4 CONNECT (a server reached through a SOCKS4 proxy, "socks4" and
 * "check-via-socks4" server options): the request and the reply's check
 * (src/net/socks4.c). */
#ifndef SLUICE_SOCKS4_H
#define SLUICE_SOCKS4_H

#include <stddef.h>
#include <sys/socket.h>

#define SOCKS4_REQ_LEN 9   /* VN CD DSTPORT(2) DSTIP(4) and an empty USERID */
#define SOCKS4_REP_LEN 8   /* VN CD DSTPORT(2) DSTIP(4) */

/* Writes into <out> (SOCKS4_REQ_LEN bytes) the request asking the proxy to
 * connect to <dst>. Returns SOCKS4_REQ_LEN, or -1 when <dst> is not an IPv4
 * address (SOCKS4 carries no other). */
int socks4_request(const struct sockaddr_storage *dst, unsigned char *out);

/* Checks the SOCKS4_REP_LEN-byte reply <rep>. Returns 0 when the proxy
 * granted the connection, or -1 with <why> saying what it answered. */
int socks4_reply(const unsigned char *rep, const char **why);

#endif
