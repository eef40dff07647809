/* FastCGI records on the wire (src/http/fcgi_rec.c): record headers, the
 * name-value pairs of PARAMS and GET_VALUES, and an incremental reader
 * that cuts a byte stream into record pieces without copying. No state
 * beyond what the caller holds; used by the FastCGI mux (fcgi.c) and by
 * the health checks that speak FastCGI (fcgi_check.c). */
#ifndef SLUICE_FCGI_REC_H
#define SLUICE_FCGI_REC_H

#include <stddef.h>
#include <stdint.h>

#define FCGI_VERSION     1
#define FCGI_HDR_LEN     8
#define FCGI_MAX_CONTENT 65535

/* Record types (FastCGI 1.0, section 8). */
enum fcgi_type {
	FCGI_BEGIN_REQUEST     = 1,
	FCGI_ABORT_REQUEST     = 2,
	FCGI_END_REQUEST       = 3,
	FCGI_PARAMS            = 4,
	FCGI_STDIN             = 5,
	FCGI_STDOUT            = 6,
	FCGI_STDERR            = 7,
	FCGI_DATA              = 8,
	FCGI_GET_VALUES        = 9,
	FCGI_GET_VALUES_RESULT = 10,
	FCGI_UNKNOWN_TYPE      = 11,
};

#define FCGI_RESPONDER   1      /* the role of BEGIN_REQUEST */
#define FCGI_KEEP_CONN   0x01   /* BEGIN_REQUEST flag */

/* END_REQUEST protocol statuses. */
enum fcgi_pstatus {
	FCGI_REQUEST_COMPLETE = 0,
	FCGI_CANT_MPX_CONN    = 1,
	FCGI_OVERLOADED       = 2,
	FCGI_UNKNOWN_ROLE     = 3,
};

/* Writes the 8-byte header of a record of <type> for request <id> with
 * <clen> content bytes and <plen> padding bytes at <p>. */
void fcgi_hdr_put(char *p, enum fcgi_type type, uint16_t id, uint16_t clen, uint8_t plen);

/* Bytes a name-value pair of <nlen> and <vlen> bytes takes once encoded. */
size_t fcgi_nv_size(size_t nlen, size_t vlen);

/* Encodes the pair <n>/<v> at <p>, which has room for fcgi_nv_size()
 * bytes. Returns the bytes written. Lengths above 2^31-1 are not encodable:
 * the caller keeps them far below (a buffer). */
size_t fcgi_nv_put(char *p, const char *n, size_t nlen, const char *v, size_t vlen);

struct dstr;

/* Appends to <d> a record of <type> for request <id> with the <len> bytes
 * at <p> (several records past FCGI_MAX_CONTENT; one empty record when
 * <len> is 0). Returns 0, or -1 when memory ran out. */
int fcgi_rec_add(struct dstr *d, enum fcgi_type type, uint16_t id, const char *p, size_t len);

/* Appends the pair <n>/<v> to <d>, encoded. Returns 0 or -1 (no memory). */
int fcgi_nv_add(struct dstr *d, const char *n, size_t nlen, const char *v, size_t vlen);

/* Decodes the pair at <p>[*<off>..<len>): on 1 <n>/<nl> and <v>/<vl>
 * point into <p> and *<off> moves past it; 0 when *<off> is <len> (no
 * more pairs); -1 when the pair is truncated or its lengths overflow. */
int fcgi_nv_next(const char *p, size_t len, size_t *off, const char **n, size_t *nl,
                 const char **v, size_t *vl);

/* The incremental reader: feed it bytes as they come, in pieces of any
 * size; it hands back content pieces, each naming its record. Zero it
 * before use (or after an error, to read a new stream). */
struct fcgi_rd {
	uint8_t  hb[FCGI_HDR_LEN];   /* header bytes gathered so far */
	uint8_t  hlen;
	uint8_t  in_rec;             /* a header was read: content/padding follow */
	uint8_t  given;              /* a piece of this record was handed out */
	uint8_t  type;
	uint16_t id;
	uint32_t clen;               /* content length of the record */
	uint32_t cleft, pleft;       /* content and padding bytes still to come */
	const char *err;             /* why the last call returned -1 */
};

/* One piece of a record's content: <len> bytes at <data> (inside the bytes
 * given), <off> their offset in the content; <last> when the record ends
 * with it. An empty record gives one piece of length 0 with <last> set. */
struct fcgi_piece {
	uint8_t     type;
	uint16_t    id;
	uint32_t    clen;            /* the record's content length */
	uint32_t    off;
	const char *data;
	uint32_t    len;
	int         last;
};

/* Reads from <p> (<n> bytes): skips padding, gathers headers, and stops at
 * the first content piece. *<used> is the number of bytes consumed. Returns
 * 1 with <pc> filled, 0 when every byte was consumed without a piece
 * (more are needed), or -1 on a header of a version other than 1
 * (rd->err says so; the stream of records cannot be followed any more). */
int fcgi_rd_next(struct fcgi_rd *rd, const char *p, size_t n, size_t *used,
                 struct fcgi_piece *pc);

/* Whether <rd> stands between two records (nothing half read). */
int fcgi_rd_idle(const struct fcgi_rd *rd);

#endif
