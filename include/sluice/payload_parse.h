/* Parsers of the first bytes of protocols that content inspection reads:
 * RDP's routing cookie (req.rdp_cookie, balance/persist rdp-cookie) and
 * distcc's tokens (distcc_param, distcc_body). Zero-copy, bounds checked,
 * safe on hostile input; each says whether more bytes could change its
 * answer. */
#ifndef SLUICE_PAYLOAD_PARSE_H
#define SLUICE_PAYLOAD_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Where an RDP Connection Request's cookie line starts: after the TPKT
 * header (4 bytes) and the X.224 Connection Request (7 bytes), which are
 * not checked (HAProxy does not check them either). */
#define RDP_COOKIE_OFF 11

/* The cookie of the RDP Connection Request at the start of <p> (<len>
 * bytes so far): the line "Cookie: <name>=<value>\r\n" (the word Cookie
 * and <name> in any case; only the first cookie line is read). <name> of
 * <nlen> bytes, or NULL for any name. Returns 1 with the value in
 * <*val>/<*vlen> (pointing into <p>, may be empty), 0 when there is no such
 * cookie, -1 when more bytes are needed to say. */
int rdp_cookie_parse(const uint8_t *p, size_t len, const char *name, size_t nlen,
                     const uint8_t **val, size_t *vlen);

/* A distcc token found by distcc_find(). */
struct distcc_tok {
	uint32_t param;     /* the 8 hex digits after the token's name */
	size_t   body;      /* offset of its body in the message */
	uint32_t body_len;  /* bytes of body: <param>, 0 for the tokens without
	                       one (DIST, ARGC, NFIL, STAT, DONE) */
};

/* Finds occurrence <occ> (1 the first; 0: the first too) of token <tok> (4
 * characters) in the distcc message at the start of <p> (<len> bytes so
 * far): tokens of 4 characters and 8 hex digits, each followed by a body
 * of that many bytes but for the tokens that have none. The body may be
 * past <len>. Returns 1 with <*t> filled, 0 when the message has no such
 * token (or a malformed token comes before it), -1 when more bytes are
 * needed: then <*need> says how many the message must hold to go on. */
int distcc_find(const uint8_t *p, size_t len, const char *tok, int occ, struct distcc_tok *t,
                size_t *need);

#endif
