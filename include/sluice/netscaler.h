/* The NetScaler Client IP insertion protocol (CIP): the header a Citrix
 * NetScaler puts in front of a connection to pass on the client's IP and
 * TCP headers. Parsing for `accept-netscaler-cip` and
 * `tcp-request connection expect-netscaler-cip layer4`. */
#ifndef SLUICE_NETSCALER_H
#define SLUICE_NETSCALER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Parses a CIP header starting with <magic> (big endian, the bind line's
 * number) at the start of buf[0..len): the legacy form (magic, 32-bit
 * length, then the client's IPv4 or IPv6 header and TCP header) or the
 * standard one (magic, 32-bit CIP length, 16-bit type 0, 16-bit header
 * length, then the same headers). The length counts the bytes after the
 * part it ends. On success returns the header length (> 0) and fills
 * <src>/<dst> with the addresses and ports of the IP and TCP headers.
 * Returns 0 when more bytes are needed, -1 when it is not a valid header
 * (<err> says why). Never reads past <len>. */
int ns_cip_parse(const char *buf, size_t len, uint32_t magic, struct sockaddr_storage *src,
                 struct sockaddr_storage *dst, const char **err);

/* The fc_err number (HAProxy 2.6's) of an <err> ns_cip_parse() gave: 22 a
 * bad magic number, 23 not a TCP connection, 21 any other bad header. */
int ns_cip_err_code(const char *err);

#endif
