/* HAProxy's peers protocol 2.1 on the wire (peers_msg.c): the encoded
 * integers, the hello and status lines of the handshake, message framing,
 * stick-table definitions, updates and acknowledgements. Pure functions
 * over byte buffers: the sessions are peers.c. */
#ifndef SLUICE_PEERS_MSG_H
#define SLUICE_PEERS_MSG_H

#include <stddef.h>
#include <stdint.h>

struct dstr;

#define PEER_PROTO_NAME "HAProxyS"
#define PEER_MAJOR      2
#define PEER_MINOR      1

/* Handshake status codes (the "status" line). */
#define PEER_ST_OK        200
#define PEER_ST_TRYAGAIN  300
#define PEER_ST_ERRPROTO  501   /* not a hello */
#define PEER_ST_ERRVER    502   /* a protocol version other than 2.0 or 2.1 */
#define PEER_ST_ERRHOST   503   /* the hello names another peer than us */
#define PEER_ST_ERRPEER   504   /* the sender is not a peer of the section */

/* Message classes and types. */
#define PEER_C_CTRL  0
#define PEER_C_ERROR 1
#define PEER_C_STKT  10

#define PEER_CTRL_RESYNC_REQ     0   /* teach me everything */
#define PEER_CTRL_RESYNC_FINISHED 1  /* everything sent, and I was up to date */
#define PEER_CTRL_RESYNC_PARTIAL 2   /* everything sent, but I was not up to date */
#define PEER_CTRL_RESYNC_CONFIRM 3   /* acknowledges finished or partial */
#define PEER_CTRL_HEARTBEAT      4

#define PEER_ERR_PROTO 0
#define PEER_ERR_SIZE  1

#define PEER_STKT_UPDATE          128
#define PEER_STKT_INCUPDATE       129   /* update id: the previous one + 1 */
#define PEER_STKT_DEFINE          130
#define PEER_STKT_SWITCH          131
#define PEER_STKT_ACK             132
#define PEER_STKT_UPDATE_TIMED    133   /* with the entry's expiry */
#define PEER_STKT_INCUPDATE_TIMED 134

/* Key types in a definition (HAProxy's sample types). */
#define PEER_KT_SINT 2
#define PEER_KT_IPV4 4
#define PEER_KT_IPV6 5
#define PEER_KT_STR  6
#define PEER_KT_BIN  7

/* The data types HAProxy 2.6 defines, by their bit in a definition's
 * bitfield: 0-16 are sluice's (enum stk_dt, same numbers), the others are
 * decoded to be skipped. */
#define PEER_DT_KNOWN   25
#define PEER_DT_ARRAY0  22      /* the first array type: gpt, then gpc, gpc_rate */
#define PEER_ARRAY_MAX  100     /* elements of an array type, at most (HAProxy's limit) */
#define PEER_DT_SERVER_KEY 19   /* a dictionary entry */

enum peer_dk {
	PEER_DK_NONE,     /* not a data type of HAProxy 2.6 */
	PEER_DK_UINT,     /* one encoded integer */
	PEER_DK_FREQ,     /* a frequency counter: elapsed ms, current, previous */
	PEER_DK_DICT,     /* length then that many bytes */
	PEER_DK_ARRAY,    /* <nelem> integers */
	PEER_DK_ARRAY_FREQ, /* <nelem> frequency counters */
};

/* The kind of data type <bit>. */
enum peer_dk peer_dt_kind(unsigned bit);

/* Largest message accepted (body bytes after the length). */
#define PEER_MSG_MAX 65536
/* Largest key a definition may announce (bytes). */
#define PEER_KEY_MAX 1024
/* Longest peer name in a hello. */
#define PEER_NAME_MAX 256

/* ---- encoded integers ---- */

#define PEER_VARINT_MAX 10

/* Writes <v> encoded at <p> (room for PEER_VARINT_MAX). Returns its length. */
size_t peer_varint_put(unsigned char *p, uint64_t v);

/* Reads an encoded integer from <n> bytes at <p> into *<v>. Returns the bytes
 * used (> 0), 0 when more are needed, -1 when it is longer than any 64-bit
 * value. */
int peer_varint_get(const unsigned char *p, size_t n, uint64_t *v);

/* ---- handshake ---- */

struct peer_hello {
	int  major, minor;
	char remote[PEER_NAME_MAX];  /* the peer the sender thinks it talks to */
	char local[PEER_NAME_MAX];   /* the sender's own name */
	long pid, rpid;
};

/* Parses the three lines of a hello from <n> bytes at <p>. Returns the bytes
 * used (> 0, *<status> 0), 0 when incomplete (no more than PEER_HELLO_MAX bytes are ever
 * needed), or -1 with *<status> PEER_ST_ERRPROTO (not a hello) or
 * PEER_ST_ERRVER (protocol version other than 2.0 or 2.1). */
#define PEER_HELLO_MAX (16 + 2 * PEER_NAME_MAX + 48)
int peer_hello_parse(const char *p, size_t n, struct peer_hello *h, int *status);

/* Appends the hello to peer <remote> from <local> (pid <pid>) to <out>.
 * Returns 0 or -1 (allocation). */
int peer_hello_put(struct dstr *out, const char *remote, const char *local, long pid);

/* Parses a status line from <n> bytes at <p> into *<code>. Returns the bytes
 * used, 0 when incomplete, -1 when it is not three digits and a LF. */
int peer_status_parse(const char *p, size_t n, int *code);

/* ---- messages ---- */

struct peer_msg {
	uint8_t              cls, type;
	const unsigned char *body;   /* type >= 128: the bytes after the length */
	size_t               len;
};

/* Frames the message at <p> (<n> bytes). Returns the bytes it takes (> 0),
 * 0 when incomplete, -1 when its length is malformed or over PEER_MSG_MAX
 * (*<too_big> set in the second case). */
int peer_msg_parse(const unsigned char *p, size_t n, struct peer_msg *m, int *too_big);

/* Appends a two-byte message (control, error). Returns 0 or -1. */
int peer_msg_put_ctrl(struct dstr *out, uint8_t cls, uint8_t type);

/* A stick-table definition, as sent or as received. */
struct peer_tdef {
	uint64_t    id;          /* the sender's id for the table */
	const char *name;        /* not NUL-terminated (received: points into the message) */
	size_t      nlen;
	uint64_t    key_type;    /* PEER_KT_* */
	uint64_t    key_len;     /* strings: the table's len + 1, as HAProxy counts it */
	uint64_t    data;        /* bitfield of data types */
	uint64_t    expire;      /* ms */
	uint32_t    period[PEER_DT_KNOWN];  /* frequency counters */
	uint32_t    nelem[PEER_DT_KNOWN];   /* arrays: their elements */
};

/* Decodes a definition's body. Returns 0, -1 when malformed (truncated, a
 * key length over PEER_KEY_MAX), or -2 when well formed but holding what
 * sluice cannot read (a key type or a data type HAProxy 2.6 does not
 * define): the table is then refused on this session. Bytes after the known
 * fields are ignored (later versions may add some). */
int peer_tdef_decode(const unsigned char *p, size_t n, struct peer_tdef *d);

/* Appends definition message <d> (every data type: arrays with their size
 * and, for rates, their period). Returns 0 or -1. */
int peer_msg_put_define(struct dstr *out, const struct peer_tdef *d);

/* One data value of an update. */
struct peer_val {
	uint64_t v;                      /* PEER_DK_UINT */
	uint32_t elapsed, curr, prev;    /* PEER_DK_FREQ: ms since the current period began */
};

struct peer_upd {
	uint8_t              type;      /* PEER_STKT_*UPDATE* */
	uint32_t             id;        /* UPDATE, UPDATE_TIMED */
	uint32_t             expire;    /* *_TIMED: ms left */
	const unsigned char *key;       /* strings: the bytes; integers: 4 bytes in network
	                                   order; others: key_len bytes */
	size_t               klen;
	struct peer_val      val[PEER_DT_KNOWN];  /* the scalar and frequency types of the
	                                             definition (a dictionary is skipped) */
	struct peer_val      arr[PEER_DT_KNOWN - PEER_DT_ARRAY0][PEER_ARRAY_MAX]; /* arrays */
};

/* Element <i> of data type <bit> of <u>: val[bit] for a scalar (i 0),
 * an element of arr[] for an array type. */
static inline struct peer_val *peer_upd_val(struct peer_upd *u, unsigned bit, uint32_t i)
{
	return bit >= PEER_DT_ARRAY0 ? &u->arr[bit - PEER_DT_ARRAY0][i] : &u->val[bit];
}

/* Decodes the body of update message <type> for table definition <d>.
 * Returns 0 or -1 (malformed; bytes after the data are ignored). */
int peer_upd_decode(uint8_t type, const unsigned char *p, size_t n, const struct peer_tdef *d,
                    struct peer_upd *u);

/* Appends update <u> (its type says which fields are present) of a table
 * defined by <d> (no dictionary type). Returns 0 or -1. */
int peer_msg_put_update(struct dstr *out, const struct peer_tdef *d, struct peer_upd *u);

/* Decodes an acknowledgement's body. Returns 0 or -1. */
int peer_ack_decode(const unsigned char *p, size_t n, uint64_t *table_id, uint32_t *upd);

/* Appends an acknowledgement of update <upd> of the sender's table <id>. */
int peer_msg_put_ack(struct dstr *out, uint64_t table_id, uint32_t upd);

/* Decodes a table switch's body. Returns 0 or -1. */
int peer_switch_decode(const unsigned char *p, size_t n, uint64_t *table_id);

#endif
