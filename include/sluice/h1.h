/* HTTP/1.x message head parser: zero-copy (slices are offsets into the
 * caller's buffer), strict per RFC 9110/9112, resumable at any byte: a call
 * that needs more data remembers how far it scanned, so feeding a head one
 * byte at a time costs O(n) overall. Body framing is decided here (CL/TE
 * rules, request-smuggling defences); bodies are not parsed here. */
#ifndef SLUICE_H1_H
#define SLUICE_H1_H

#include <stddef.h>
#include <stdint.h>

/* A byte range of the receive buffer. */
struct h1_slice {
	uint32_t off;
	uint32_t len;
};

struct h1_hdr {
	struct h1_slice name;
	struct h1_slice value;   /* without leading/trailing OWS */
};

enum h1_meth {
	H1_M_OTHER, H1_M_GET, H1_M_HEAD, H1_M_POST, H1_M_PUT, H1_M_DELETE,
	H1_M_CONNECT, H1_M_OPTIONS, H1_M_TRACE, H1_M_PATCH,
};

enum h1_target { H1_T_ORIGIN, H1_T_ABSOLUTE, H1_T_AUTHORITY, H1_T_ASTERISK };

#define H1_F_RESP        0x0001  /* parsing a response */
#define H1_F_VER_11      0x0002  /* HTTP/1.1 (else 1.0) */
#define H1_F_CLEN        0x0004  /* Content-Length frames the body (see clen) */
#define H1_F_CHUNKED     0x0008  /* Transfer-Encoding ends with chunked */
#define H1_F_TE          0x0010  /* a Transfer-Encoding header is present */
#define H1_F_CONN_CLOSE  0x0020  /* Connection: close */
#define H1_F_CONN_KA     0x0040  /* Connection: keep-alive */
#define H1_F_CONN_UPG    0x0080  /* Connection: upgrade */
#define H1_F_UPGRADE     0x0100  /* an Upgrade header is present */
#define H1_F_EXPECT_100  0x0200  /* Expect: 100-continue */
#define H1_F_HOST        0x0400  /* a Host header is present */
#define H1_F_OBS_FOLD    0x0800  /* obs-fold lines were joined with spaces */
#define H1_F_CLEN_DROPPED 0x1000 /* CL ignored because TE is present: close after */
#define H1_F_BODY_CLOSE  0x2000  /* response body ends at connection close */
#define H1_F_NO_BODY     0x4000  /* the message has no body */
/* Set by the caller after h1_msg_init(): option accept-invalid-http-request
 * (or -response). Relaxed: any byte but CTLs, SP, HTAB, DEL and ':' in a
 * field name; in a request target '#' and bytes above 0x7F; a version
 * other than HTTP/1.x (another protocol name, several digits, or none:
 * HTTP/0.9) read as HTTP/1.0. Never relaxed: anything that frames the
 * message (Content-Length, Transfer-Encoding, line ends, whitespace before
 * ':', CTLs), so that no relaxed message can be read two ways. */
#define H1_F_RELAX       0x8000
#define H1_F_RELAXED     0x10000 /* out: something only H1_F_RELAX accepts was accepted
                                    (err_pos, err_msg say the first) */
#define H1_F_VER_NONE    0x20000 /* out: a request line without version (HTTP/0.9) */

/* The largest Content-Length accepted: far from 2^64, so that adding a
 * head and a few buffers to it can never wrap. */
#define H1_CLEN_MAX (1ULL << 62)

struct h1_msg {
	unsigned        flags;       /* H1_F_* */
	/* start line */
	struct h1_slice meth;        /* request */
	struct h1_slice uri;         /* request */
	enum h1_meth    meth_id;
	enum h1_target  target;
	int             status;      /* response */
	struct h1_slice reason;      /* response */
	struct h1_slice ver;         /* the version ("HTTP/1.1"; empty with H1_F_VER_NONE) */
	/* headers, in a caller-owned array */
	struct h1_hdr  *hdrs;
	int             maxhdr;
	int             nhdrs;
	uint64_t        clen;        /* with H1_F_CLEN, at most H1_CLEN_MAX */
	struct h1_slice authority;   /* H1_T_ABSOLUTE: the target's host[:port] */
	struct h1_slice host;        /* with H1_F_HOST: the Host field's value */
	uint32_t        head_len;    /* start line + headers + empty line, bytes */
	uint32_t        skip;        /* leading empty lines ignored before the start line */
	uint32_t        scanned;     /* resume point of the end-of-head search */
	/* error, when h1_parse() returned -1 */
	int             err_status;  /* 400, 414, 431, 505; 502 for responses */
	uint32_t        err_pos;     /* offset of the offending byte */
	const char     *err_msg;
};

/* Prepares <m> to parse a request (<is_resp> 0) or a response to a request
 * of method <req_meth> (for HEAD/CONNECT framing), with <hdrs> able to hold
 * <maxhdr> headers (tune.http.maxhdr). */
void h1_msg_init(struct h1_msg *m, struct h1_hdr *hdrs, int maxhdr, int is_resp,
                 enum h1_meth req_meth);

/* Parses the head in buf[0..len). <limit> is the largest head accepted (the
 * buffer size less tune.maxrewrite). May rewrite obs-fold bytes to spaces in
 * place; never reads past buf[len-1]. Framing fields are held to what two
 * parsers cannot read differently: Content-Length at most H1_CLEN_MAX; in
 * a request Transfer-Encoding is exactly "chunked" (in a response, codings
 * may precede a final bare "chunked"); an absolute-form target's authority
 * must match Host (default ports aside) and carry no userinfo.
 * Returns head_len (> 0) once the head is complete and valid, 0 when more
 * bytes are needed, or -1 when it is invalid (m->err_* say why and where). */
int h1_parse(char *buf, size_t len, size_t limit, struct h1_msg *m);

/* Chunked body scanner. Bodies are forwarded untouched; the scanner only
 * follows the framing to find where the message ends, and tells how many
 * data bytes can be forwarded (or spliced) without looking at them. */
enum h1_ck_state {
	H1_CK_SIZE,      /* reading hex digits of a chunk size */
	H1_CK_EXT,       /* after the size: BWS, extensions, up to LF */
	H1_CK_DATA,      /* <left> bytes of chunk data to pass */
	H1_CK_DATA_CR,   /* CRLF after the data */
	H1_CK_DATA_LF,
	H1_CK_TRAILER,   /* trailer lines after the last chunk */
	H1_CK_DONE,
};

struct h1_chunk {
	enum h1_ck_state state;
	uint64_t         left;      /* H1_CK_DATA: bytes left in this chunk */
	uint64_t         size;      /* size being read */
	uint32_t         digits;    /* hex digits read for <size> */
	uint32_t         linelen;   /* length of the current size/trailer line */
	int              last;      /* the zero-size chunk was seen */
	int              cr;        /* a CR was seen: the next byte must be LF */
	int              sub;       /* position inside an extension or trailer line */
	unsigned         trl;       /* trailer name: which framing field it may still be */
	uint64_t         total;     /* payload bytes seen */
};

#define H1_CHUNK_LINE_MAX 4096   /* longest chunk-size or trailer line */
#define H1_CHUNK_DIGITS_MAX 15   /* hex digits of a chunk size: below 2^60 */

/* Follows chunked framing over buf[0..len). Sets <used> to the number of
 * bytes that belong to the body (all of them unless it ended). Returns 1
 * when the body ended (the last byte is at used-1), 0 when more bytes are
 * needed, or -1 on a framing error with <err> set. Strict, because the
 * bytes are forwarded as they are: every line ends with CRLF (a bare LF is
 * an error), a size has at most H1_CHUNK_DIGITS_MAX digits, and trailers
 * may not carry Content-Length or Transfer-Encoding (RFC 9110 6.5.1). */
int h1_chunk_scan(struct h1_chunk *ck, const char *buf, size_t len, size_t *used,
                  const char **err);

/* Case-insensitive comparison of header name <h> (in <buf>) with <name>. */
int h1_hdr_is(const char *buf, const struct h1_hdr *h, const char *name);

/* Whether the <len> bytes at <s> are a non-empty RFC 9110 token (tchar
 * only: a method, a field name). */
int h1_is_token(const char *s, size_t len);

#endif
