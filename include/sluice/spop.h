/* SPOP 2.0, the Stream Processing Offload Protocol (HAProxy's SPOE.txt):
 * the varint and typed-data encodings and the frame layout, shared by the
 * SPOE filter (src/http/spoe.c) and "option spop-check" (protochk.c).
 * Pure codec: no socket, no allocation. */
#ifndef SLUICE_SPOP_H
#define SLUICE_SPOP_H

#include <stddef.h>
#include <stdint.h>

/* Frame types. */
#define SPOP_F_HAPROXY_HELLO      1
#define SPOP_F_HAPROXY_DISCONNECT 2
#define SPOP_F_NOTIFY             3
#define SPOP_F_AGENT_HELLO        101
#define SPOP_F_AGENT_DISCONNECT   102
#define SPOP_F_ACK                103

/* Frame flags (the 32-bit word after the type). */
#define SPOP_FL_FIN   0x01
#define SPOP_FL_ABORT 0x02

/* Typed data: the low 4 bits of the type byte; a boolean's value is bit 4. */
enum spop_type {
	SPOP_T_NULL, SPOP_T_BOOL, SPOP_T_INT32, SPOP_T_UINT32, SPOP_T_INT64,
	SPOP_T_UINT64, SPOP_T_IPV4, SPOP_T_IPV6, SPOP_T_STRING, SPOP_T_BINARY,
};
#define SPOP_BOOL_TRUE 0x10

/* ACK actions. */
#define SPOP_ACT_SET_VAR   1
#define SPOP_ACT_UNSET_VAR 2

/* The largest frame sluice sends or takes: tune.bufsize (16384) less the
 * length word, as HAProxy's default. */
#define SPOP_FRAME_MAX 16380
/* The smallest max-frame-size an agent may ask for. */
#define SPOP_FRAME_MIN 256

/* A frame being written into a caller's buffer: every put checks the room
 * and sets <err> instead of writing past <size>. */
struct spop_wr {
	unsigned char *p;
	size_t         size, n;
	int            err;
};

/* A typed value read from, or written to, a frame. Strings and binaries
 * point into the frame (or the caller's memory). */
struct spop_val {
	enum spop_type type;
	union {
		int      b;
		int64_t  i;     /* INT32, INT64 */
		uint64_t u;     /* UINT32, UINT64 */
		unsigned char ip[16];   /* IPV4: 4 bytes, IPV6: 16 */
		struct { const char *p; uint64_t len; } str;   /* STRING, BINARY */
	} v;
};

/* A frame's header and payload, as spop_frame_parse() finds them. */
struct spop_frame {
	unsigned             type;
	uint32_t             flags;
	uint64_t             stream_id, frame_id;
	const unsigned char *pl;        /* the payload (after the ids) */
	size_t               pl_len;
};

/* Appends varint <v>: values below 240 in one byte, else 4 bits in a
 * first byte >= 240 and 7 bits in each next one. */
void spop_put_varint(struct spop_wr *w, uint64_t v);

/* Reads a varint at p[*i] (the data ends at <len>) into <v>, moving <*i>.
 * Returns 0, or -1 when cut short or longer than 64 bits. */
int spop_get_varint(const unsigned char *p, size_t len, size_t *i, uint64_t *v);

/* Appends <len> bytes (a length varint, then the bytes). */
void spop_put_bytes(struct spop_wr *w, const void *p, size_t len);
void spop_put_str(struct spop_wr *w, const char *s);
void spop_put_byte(struct spop_wr *w, unsigned char c);

/* Appends a typed value. */
void spop_put_val(struct spop_wr *w, const struct spop_val *v);

/* Reads a typed value at p[*i]. Returns 0, or -1 on an unknown type or a
 * value cut short. */
int spop_get_val(const unsigned char *p, size_t len, size_t *i, struct spop_val *v);

/* Reads a length-prefixed string at p[*i] into <s>/<slen>. 0 or -1. */
int spop_get_str(const unsigned char *p, size_t len, size_t *i, const char **s, uint64_t *slen);

/* Starts a frame of <type> with <flags> and the ids at w->n: the 4-byte
 * length is filled by spop_frame_end(). Returns where it started. */
size_t spop_frame_begin(struct spop_wr *w, unsigned type, uint32_t flags, uint64_t stream_id,
                        uint64_t frame_id);

/* Writes the length of the frame started at <start>. Returns 0, or -1 when
 * something did not fit (w->err). */
int spop_frame_end(struct spop_wr *w, size_t start);

/* Finds one frame at the start of <p> (<len> bytes received so far), no
 * larger than <max> bytes (its length word excluded). Returns the bytes it
 * takes (> 0), 0 when more must be read, -1 when it is larger than <max>
 * (status 3) and -2 when it is malformed (status 4). */
long spop_frame_parse(const unsigned char *p, size_t len, size_t max, struct spop_frame *f);

/* What a HELLO or DISCONNECT frame's key-value list says. */
struct spop_kv {
	const char *version;          /* the agent's "version", NULL: none */
	uint64_t    version_len;
	const char *caps;             /* "capabilities", NULL: none */
	uint64_t    caps_len;
	const char *message;          /* a DISCONNECT's "message", NULL: none */
	uint64_t    message_len;
	uint64_t    max_frame, status;
	int         has_mfs, has_status;
};

/* Reads the key-value list of a HELLO or DISCONNECT payload. Returns 0, or
 * -1 when malformed. */
int spop_read_kv(const unsigned char *p, size_t len, struct spop_kv *kv);

/* Checks an AGENT-HELLO's list: version 2.0 and a max-frame-size between
 * SPOP_FRAME_MIN and <max>. Returns 0, or the SPOP status code (5, 6, 8, 9)
 * saying what is wrong. */
int spop_hello_check(const struct spop_kv *kv, uint64_t max);

/* Writes a HAPROXY-HELLO frame: supported version 2.0, <max_frame>,
 * capabilities <caps> ("" for none), then "engine-id" <engine_id> when not
 * NULL and "healthcheck" true when <healthcheck>. Returns 0 or -1 (room). */
int spop_hello_build(struct spop_wr *w, uint32_t max_frame, const char *caps,
                     const char *engine_id, int healthcheck);

/* Writes a HAPROXY-DISCONNECT frame with <status> and its words. */
int spop_disconnect_build(struct spop_wr *w, unsigned status);

/* One action of an ACK's payload. */
struct spop_action {
	unsigned        type;      /* SPOP_ACT_*, or another number (its args skipped) */
	unsigned        scope;     /* set-var, unset-var: 0 proc, 1 sess, 2 txn, 3 req, 4 res */
	const char     *name;      /* the variable's name (not NUL-terminated) */
	uint64_t        name_len;
	struct spop_val val;       /* set-var: the value */
};

/* Reads the action at p[*i] of an ACK payload of <len> bytes. Returns 1
 * with <a> filled (<*i> moved past it), 0 at the end of the payload, or -1
 * when it is malformed (a wrong count of arguments for set-var/unset-var,
 * anything cut short). */
int spop_ack_next(const unsigned char *p, size_t len, size_t *i, struct spop_action *a);

/* The words of SPOP status code <code> (SPOE.txt 3.2.7). */
const char *spop_status_str(uint64_t code);

#endif
