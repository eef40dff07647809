/* A parser for the TLS ClientHello a client sends first, for content
 * inspection (req.ssl_sni, req.ssl_alpn, req.ssl_ver...): zero-copy, bounds
 * checked at every field, safe on hostile input. */
#ifndef SLUICE_TLS_HELLO_H
#define SLUICE_TLS_HELLO_H

#include <stddef.h>
#include <stdint.h>

struct tls_hello {
	uint16_t       rec_ver;    /* record layer version (0x0301 for TLS 1.0) */
	uint16_t       hello_ver;  /* ClientHello legacy_version */
	const uint8_t *sni;        /* first host_name of server_name, NULL if none */
	size_t         sni_len;
	const uint8_t *alpn;       /* the ALPN protocol list (1-byte length prefixed
	                              names), NULL if none */
	size_t         alpn_len;
	uint8_t        ec_ext;     /* the supported_groups (elliptic curves) extension is there */
	uint8_t        st_ext;     /* session_ticket: 0 absent, 1 empty, 2 holding a ticket */
};

/* Parses the ClientHello at the start of <p> (<len> bytes: what arrived so
 * far; only the first record is read). Slices in <h> point into <p>.
 * Returns the record's size (> 0) when it holds a complete, well-formed
 * ClientHello, 0 when more bytes are needed to say, -1 when it is not one
 * (not a handshake record, another message, a field overflowing its
 * container). */
int tls_hello_parse(const uint8_t *p, size_t len, struct tls_hello *h);

/* The handshake type of a complete hello record at the start of <p> (1:
 * ClientHello, 2: ServerHello...), 0 when more bytes are needed to say, -1
 * when it is not one. */
int tls_hello_type(const uint8_t *p, size_t len);

#endif
