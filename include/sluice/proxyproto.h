/* PROXY protocol v1 (text) and v2 (binary): the header a proxy puts in
 * front of a connection to pass on the original client and destination
 * addresses. Parsing for `accept-proxy`, building for `send-proxy[-v2]`. */
#ifndef SLUICE_PROXYPROTO_H
#define SLUICE_PROXYPROTO_H

#include <stddef.h>
#include <stdint.h>
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

/* PROXY v2 TLV types (the PROXY protocol specification, 2.2). */
#define PP2_TYPE_ALPN      0x01
#define PP2_TYPE_AUTHORITY 0x02   /* the host name the client asked for (SNI) */
#define PP2_TYPE_CRC32C    0x03   /* CRC-32C of the header, big endian */
#define PP2_TYPE_UNIQUE_ID 0x05
#define PP2_TYPE_SSL       0x20   /* client flags, verify result, then sub-TLVs: */
#define PP2_SUBTYPE_SSL_VERSION 0x21
#define PP2_SUBTYPE_SSL_CN      0x22
#define PP2_SUBTYPE_SSL_CIPHER  0x23
#define PP2_SUBTYPE_SSL_SIG_ALG 0x24
#define PP2_SUBTYPE_SSL_KEY_ALG 0x25
#define PP2_CLIENT_SSL        0x01   /* the client connected over TLS */
#define PP2_CLIENT_CERT_CONN  0x02   /* it sent a certificate on this connection */
#define PP2_CLIENT_CERT_SESS  0x04   /* it sent one in this TLS session */

struct pp_tlv {
	uint8_t     type;
	uint16_t    len;
	const void *val;
};

enum pp_v2_cmd { PP_V2_LOCAL, PP_V2_PROXY };

/* In the complete v2 header <hdr> of <len> bytes (as pp_parse() measured
 * it), the first TLV of type <type> after the address block: 1 with
 * <*val>/<*vlen> pointing into <hdr>, 0 when there is none (or <hdr> is a
 * v1 line). */
int pp_v2_tlv_find(const unsigned char *hdr, size_t len, uint8_t type, const unsigned char **val,
                   size_t *vlen);

/* HAProxy's connection error code (fc_err) of a header pp_parse() refused
 * with <err>: 15 not a PROXY header, 17 an unhandled protocol, 16 another
 * invalid header. */
int pp_err_code(const char *err);

/* Writes a v2 header into <out> (<sz> bytes): command <cmd>, the addresses
 * <src> -> <dst> (a PROXY command with non-IP addresses, or of two
 * families, says UNSPEC), the <ntlv> TLVs <tlv> in order, then, when
 * <crc>, a CRC32C TLV checksumming the whole header. Returns the header
 * length, or 0 when it does not fit <sz>. */
size_t pp_build_v2(enum pp_v2_cmd cmd, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst, const struct pp_tlv *tlv, int ntlv,
                   int crc, char *out, size_t sz);

#endif
