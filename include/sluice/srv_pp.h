/* The PROXY protocol v2 header a server gets (send-proxy-v2 and its TLVs:
 * send-proxy-v2-ssl, send-proxy-v2-ssl-cn, proxy-v2-options): the server
 * options and the header built for each connection (src/proxy/srv_pp.c). */
#ifndef SLUICE_SRV_PP_H
#define SLUICE_SRV_PP_H

#include <stddef.h>
#include <sys/socket.h>

struct stream;

/* What the v2 header carries beyond the addresses (struct server .pp_opts). */
#define SRV_PP_SSL       0x01  /* the SSL TLV: version, client certificate flags */
#define SRV_PP_CERT_CN   0x02  /* in it, the client certificate's CN */
#define SRV_PP_CIPHER    0x04  /* in it, the cipher */
#define SRV_PP_CERT_SIG  0x08  /* in it, the signature algorithm of our certificate */
#define SRV_PP_CERT_KEY  0x10  /* in it, the key algorithm of our certificate */
#define SRV_PP_AUTHORITY 0x20  /* the client's SNI */
#define SRV_PP_CRC32C    0x40  /* a CRC32c of the header */
#define SRV_PP_UNIQUE_ID 0x80  /* the stream's unique ID (unique-id-format) */

/* Writes the PROXY header of <s>'s connection to its server (v1, or v2 with
 * the server's TLVs) from <src> to <dst> into <out> (at least 1024 bytes).
 * Returns its length. */
size_t srv_pp_build(struct stream *s, int version, const struct sockaddr_storage *src,
                    const struct sockaddr_storage *dst, char *out, size_t sz);

/* Registers how the unique ID of a stream is rendered (unique-id-format;
 * the HTTP layer owns it): writes it into <out>, returns its length (0:
 * none). */
void srv_pp_register_unique_id(size_t (*fn)(struct stream *s, char *out, size_t size));

#endif
