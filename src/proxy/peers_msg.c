/* HAProxy's peers protocol 2.1 on the wire (peers_msg.h): encoded integers,
 * hello and status lines, framing, definitions, updates, acknowledgements.
 * Written from HAProxy's peers.txt and peers-v2.0.txt. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/peers_msg.h>
#include <sluice/str.h>

/* ---- data types ---- */

static const enum peer_dk peer_dks[PEER_DT_KNOWN] = {
	[0] = PEER_DK_UINT,  [1] = PEER_DK_UINT,  [2] = PEER_DK_UINT,  [3] = PEER_DK_FREQ,
	[4] = PEER_DK_UINT,  [5] = PEER_DK_FREQ,  [6] = PEER_DK_UINT,  [7] = PEER_DK_UINT,
	[8] = PEER_DK_FREQ,  [9] = PEER_DK_UINT,  [10] = PEER_DK_FREQ, [11] = PEER_DK_UINT,
	[12] = PEER_DK_FREQ, [13] = PEER_DK_UINT, [14] = PEER_DK_FREQ, [15] = PEER_DK_UINT,
	[16] = PEER_DK_FREQ, [17] = PEER_DK_UINT, [18] = PEER_DK_FREQ, [19] = PEER_DK_DICT,
	[20] = PEER_DK_UINT, [21] = PEER_DK_FREQ, [22] = PEER_DK_ARRAY, [23] = PEER_DK_ARRAY,
	[24] = PEER_DK_ARRAY_FREQ,
};

enum peer_dk peer_dt_kind(unsigned bit)
{
	return bit < PEER_DT_KNOWN ? peer_dks[bit] : PEER_DK_NONE;
}

/* ---- encoded integers ---- */

size_t peer_varint_put(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	if (v < 0xf0) {
		p[0] = (unsigned char)v;
		return 1;
	}
	p[n++] = (unsigned char)(v | 0xf0);
	v = (v - 0xf0) >> 4;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v = (v - 0x80) >> 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

int peer_varint_get(const unsigned char *p, size_t n, uint64_t *v)
{
	uint64_t r;
	unsigned shift = 4;
	size_t i = 1;

	if (!n)
		return 0;
	r = p[0];
	if (r < 0xf0) {
		*v = r;
		return 1;
	}
	for (;;) {
		uint64_t c;

		if (i >= n)
			return 0;
		if (i >= PEER_VARINT_MAX)
			return -1;
		c = p[i++];
		/* the last byte of a 10-byte value holds bit 63 at most */
		if (shift == 4 + 7 * 8 && c > 0x0f)
			return -1;
		r += c << shift;
		shift += 7;
		if (c < 0x80)
			break;
	}
	*v = r;
	return (int)i;
}

/* Appends <v> encoded to <out>. */
static int put_varint(struct dstr *out, uint64_t v)
{
	unsigned char b[PEER_VARINT_MAX];

	return dstr_add(out, (const char *)b, peer_varint_put(b, v));
}

/* A reader over a message body: every get fails once anything failed. */
struct rd {
	const unsigned char *p;
	size_t               n, i;
	int                  bad;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;
	int used;

	if (r->bad)
		return 0;
	used = peer_varint_get(r->p + r->i, r->n - r->i, &v);
	if (used <= 0) {
		r->bad = 1;
		return 0;
	}
	r->i += (size_t)used;
	return v;
}

static uint32_t rd_u32(struct rd *r)
{
	uint32_t v;

	if (r->bad || r->n - r->i < 4) {
		r->bad = 1;
		return 0;
	}
	memcpy(&v, r->p + r->i, 4);
	r->i += 4;
	return ntohl(v);
}

static const unsigned char *rd_bytes(struct rd *r, uint64_t len)
{
	const unsigned char *b;

	if (r->bad || len > r->n - r->i) {
		r->bad = 1;
		return NULL;
	}
	b = r->p + r->i;
	r->i += (size_t)len;
	return b;
}

/* ---- handshake ---- */

/* The line starting at <p> (<n> bytes): its length without the LF, or -1
 * when no LF is there yet. */
static long line_len(const char *p, size_t n)
{
	const char *lf = memchr(p, '\n', n);

	return lf ? (long)(lf - p) : -1;
}

/* A peer name: printable, no blank. */
static int name_ok(const char *p, size_t n)
{
	if (!n || n >= PEER_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f)
			return 0;
	return 1;
}

/* A decimal number of at most 10 digits from <p> (<n> bytes). 0 or -1. */
static int parse_num(const char *p, size_t n, long *v)
{
	long r = 0;

	if (!n || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		r = r * 10 + (p[i] - '0');
	}
	*v = r;
	return 0;
}

int peer_hello_parse(const char *p, size_t n, struct peer_hello *h, int *status)
{
	static const char proto[] = PEER_PROTO_NAME " ";
	const size_t plen = sizeof(proto) - 1;
	long l1, l2, l3, v;
	const char *s2, *s3, *sp, *sp2, *dot;
	size_t avail = MIN(n, (size_t)PEER_HELLO_MAX);

	*status = PEER_ST_ERRPROTO;
	/* what came must still be the beginning of a hello */
	if (memcmp(p, proto, MIN(avail, plen)) != 0)
		return -1;
	l1 = line_len(p, avail);
	if (l1 < 0)
		return avail == PEER_HELLO_MAX || avail > plen + 16 ? -1 : 0;
	/* "<major>.<minor>" */
	dot = memchr(p + plen, '.', (size_t)l1 - MIN((size_t)l1, plen));
	if ((size_t)l1 <= plen || !dot || parse_num(p + plen, (size_t)(dot - p - plen), &v) == -1)
		return -1;
	h->major = (int)v;
	if (parse_num(dot + 1, (size_t)(p + l1 - dot - 1), &v) == -1)
		return -1;
	h->minor = (int)v;
	if (h->major != PEER_MAJOR || h->minor > PEER_MINOR) {
		*status = PEER_ST_ERRVER;
		return -1;
	}
	s2 = p + l1 + 1;
	l2 = line_len(s2, avail - (size_t)(l1 + 1));
	if (l2 < 0)
		return avail == PEER_HELLO_MAX ? -1 : 0;
	if (!name_ok(s2, (size_t)l2))
		return -1;
	s3 = s2 + l2 + 1;
	l3 = line_len(s3, avail - (size_t)(s3 - p));
	if (l3 < 0)
		return avail == PEER_HELLO_MAX ? -1 : 0;
	/* "<name> <pid> <relative pid>" */
	sp = memchr(s3, ' ', (size_t)l3);
	if (!sp || !name_ok(s3, (size_t)(sp - s3)))
		return -1;
	sp2 = memchr(sp + 1, ' ', (size_t)(s3 + l3 - sp - 1));
	if (!sp2 || parse_num(sp + 1, (size_t)(sp2 - sp - 1), &h->pid) == -1 ||
	    parse_num(sp2 + 1, (size_t)(s3 + l3 - sp2 - 1), &h->rpid) == -1)
		return -1;
	memcpy(h->remote, s2, (size_t)l2);
	h->remote[l2] = '\0';
	memcpy(h->local, s3, (size_t)(sp - s3));
	h->local[sp - s3] = '\0';
	*status = 0;
	return (int)(s3 + l3 + 1 - p);
}

int peer_hello_put(struct dstr *out, const char *remote, const char *local, long pid)
{
	return dstr_printf(out, "%s %d.%d\n%s\n%s %ld 0\n", PEER_PROTO_NAME, PEER_MAJOR,
			   PEER_MINOR, remote, local, pid);
}

int peer_status_parse(const char *p, size_t n, int *code)
{
	for (size_t i = 0; i < MIN(n, (size_t)3); i++)
		if (p[i] < '0' || p[i] > '9')
			return -1;
	if (n < 4)
		return 0;
	if (p[3] != '\n')
		return -1;
	*code = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
	return 4;
}

/* ---- framing ---- */

int peer_msg_parse(const unsigned char *p, size_t n, struct peer_msg *m, int *too_big)
{
	uint64_t len;
	int used;

	*too_big = 0;
	if (n < 2)
		return 0;
	m->cls = p[0];
	m->type = p[1];
	m->body = NULL;
	m->len = 0;
	if (m->type < 128)
		return 2;
	used = peer_varint_get(p + 2, n - 2, &len);
	if (used <= 0)
		return used;
	if (len > PEER_MSG_MAX) {
		*too_big = 1;
		return -1;
	}
	if (n - 2 - (size_t)used < len)
		return 0;
	m->body = p + 2 + used;
	m->len = (size_t)len;
	return (int)(2 + (size_t)used + len);
}

int peer_msg_put_ctrl(struct dstr *out, uint8_t cls, uint8_t type)
{
	char b[2] = { (char)cls, (char)type };

	return dstr_add(out, b, 2);
}

/* The body of the message being built (reused: one thread). */
static struct dstr scratch;

static struct dstr *body_begin(void)
{
	scratch.len = 0;
	return &scratch;
}

/* Appends the header of message <type> of class STKT for a body of <len>
 * bytes, then the body. */
static int put_stkt(struct dstr *out, uint8_t type, const struct dstr *body)
{
	if (peer_msg_put_ctrl(out, PEER_C_STKT, type) == -1 || put_varint(out, body->len) == -1)
		return -1;
	return body->len ? dstr_add(out, body->p, body->len) : 0;
}

/* ---- definitions ---- */

static int key_type_ok(uint64_t kt)
{
	return kt == PEER_KT_SINT || kt == PEER_KT_IPV4 || kt == PEER_KT_IPV6 ||
	       kt == PEER_KT_STR || kt == PEER_KT_BIN;
}

int peer_tdef_decode(const unsigned char *p, size_t n, struct peer_tdef *d)
{
	struct rd r = { p, n, 0, 0 };
	int unsupported = 0;

	memset(d, 0, sizeof(*d));
	d->id = rd_varint(&r);
	d->nlen = (size_t)rd_varint(&r);
	d->name = (const char *)rd_bytes(&r, d->nlen);
	d->key_type = rd_varint(&r);
	d->key_len = rd_varint(&r);
	d->data = rd_varint(&r);
	d->expire = rd_varint(&r);
	if (r.bad || !d->nlen || d->key_len > PEER_KEY_MAX)
		return -1;
	if (!key_type_ok(d->key_type) || !d->key_len)
		unsupported = 1;
	/* the parameters of the frequency counters and arrays, in bit order */
	for (unsigned bit = 0; bit < 64 && !unsupported; bit++) {
		enum peer_dk k;
		uint64_t dt, v;

		if (!(d->data & ((uint64_t)1 << bit)))
			continue;
		k = peer_dt_kind(bit);
		if (k == PEER_DK_NONE) {
			unsupported = 1;
			break;
		}
		if (k != PEER_DK_FREQ && k != PEER_DK_ARRAY && k != PEER_DK_ARRAY_FREQ)
			continue;
		dt = rd_varint(&r);
		if (r.bad || dt != bit)
			return -1;
		if (k != PEER_DK_FREQ) {
			v = rd_varint(&r);
			if (r.bad || !v || v > PEER_ARRAY_MAX)
				return -1;
			d->nelem[bit] = (uint32_t)v;
		}
		if (k != PEER_DK_ARRAY) {
			v = rd_varint(&r);
			if (r.bad || v > UINT32_MAX)
				return -1;
			d->period[bit] = (uint32_t)v;
		}
	}
	return unsupported ? -2 : 0;
}

int peer_msg_put_define(struct dstr *out, const struct peer_tdef *d)
{
	struct dstr *bp = body_begin();
	int ret;

	/* || keeps the order of the fields (and stops at a failure) */
	ret = put_varint(bp, d->id) || put_varint(bp, d->nlen) || dstr_add(bp, d->name, d->nlen) ||
	      put_varint(bp, d->key_type) || put_varint(bp, d->key_len) ||
	      put_varint(bp, d->data) || put_varint(bp, d->expire);
	for (unsigned bit = 0; bit < PEER_DT_KNOWN && !ret; bit++) {
		enum peer_dk k = peer_dt_kind(bit);

		if (!(d->data & ((uint64_t)1 << bit)) || k == PEER_DK_UINT || k == PEER_DK_DICT)
			continue;
		/* as read by peer_tdef_decode(): the type, an array's size, a period */
		ret = put_varint(bp, bit) ||
		      (k != PEER_DK_FREQ && put_varint(bp, d->nelem[bit])) ||
		      (k != PEER_DK_ARRAY && put_varint(bp, d->period[bit]));
	}
	if (ret == 0)
		ret = put_stkt(out, PEER_STKT_DEFINE, bp);
	return ret ? -1 : 0;
}

/* ---- updates ---- */

static int upd_has_id(uint8_t type)
{
	return type == PEER_STKT_UPDATE || type == PEER_STKT_UPDATE_TIMED;
}

static int upd_timed(uint8_t type)
{
	return type == PEER_STKT_UPDATE_TIMED || type == PEER_STKT_INCUPDATE_TIMED;
}

int peer_upd_decode(uint8_t type, const unsigned char *p, size_t n, const struct peer_tdef *d,
                    struct peer_upd *u)
{
	struct rd r = { p, n, 0, 0 };

	memset(u, 0, sizeof(*u));
	u->type = type;
	if (upd_has_id(type))
		u->id = rd_u32(&r);
	if (upd_timed(type))
		u->expire = rd_u32(&r);
	switch (d->key_type) {
	case PEER_KT_STR:
		u->klen = (size_t)rd_varint(&r);
		if (u->klen >= d->key_len)
			return -1;   /* longer than the table's len */
		break;
	case PEER_KT_SINT:
	case PEER_KT_IPV4:
		u->klen = 4;
		break;
	case PEER_KT_IPV6:
		u->klen = 16;
		break;
	default:
		u->klen = (size_t)d->key_len;
	}
	u->key = rd_bytes(&r, u->klen);
	for (unsigned bit = 0; bit < PEER_DT_KNOWN && !r.bad; bit++) {
		struct peer_val *v = &u->val[bit];
		uint64_t x;

		if (!(d->data & ((uint64_t)1 << bit)))
			continue;
		switch (peer_dt_kind(bit)) {
		case PEER_DK_UINT:
			v->v = rd_varint(&r);
			break;
		case PEER_DK_FREQ:
			v->elapsed = (uint32_t)rd_varint(&r);
			v->curr = (uint32_t)rd_varint(&r);
			v->prev = (uint32_t)rd_varint(&r);
			break;
		case PEER_DK_DICT:
			x = rd_varint(&r);
			rd_bytes(&r, x);
			break;
		case PEER_DK_ARRAY:
			for (uint32_t i = 0; i < d->nelem[bit] && i < PEER_ARRAY_MAX; i++)
				peer_upd_val(u, bit, i)->v = rd_varint(&r);
			break;
		case PEER_DK_ARRAY_FREQ:
			for (uint32_t i = 0; i < d->nelem[bit] && i < PEER_ARRAY_MAX; i++) {
				v = peer_upd_val(u, bit, i);
				v->elapsed = (uint32_t)rd_varint(&r);
				v->curr = (uint32_t)rd_varint(&r);
				v->prev = (uint32_t)rd_varint(&r);
			}
			break;
		case PEER_DK_NONE:
			return -1;
		}
	}
	return r.bad ? -1 : 0;
}

int peer_msg_put_update(struct dstr *out, const struct peer_tdef *d, struct peer_upd *u)
{
	struct dstr *bp = body_begin();
	uint32_t w;
	int ret = 0;

	if (upd_has_id(u->type)) {
		w = htonl(u->id);
		ret = dstr_add(bp, (const char *)&w, 4);
	}
	if (upd_timed(u->type) && !ret) {
		w = htonl(u->expire);
		ret = dstr_add(bp, (const char *)&w, 4);
	}
	if (d->key_type == PEER_KT_STR && !ret)
		ret = put_varint(bp, u->klen);
	if (!ret)
		ret = dstr_add(bp, (const char *)u->key, u->klen);
	for (unsigned bit = 0; bit < PEER_DT_KNOWN && !ret; bit++) {
		enum peer_dk k = peer_dt_kind(bit);
		uint32_t n = k == PEER_DK_ARRAY || k == PEER_DK_ARRAY_FREQ ?
			     MIN(d->nelem[bit], PEER_ARRAY_MAX) : 1;

		if (!(d->data & ((uint64_t)1 << bit)))
			continue;
		for (uint32_t i = 0; i < n && !ret; i++) {
			const struct peer_val *v = peer_upd_val(u, bit, i);

			if (k == PEER_DK_FREQ || k == PEER_DK_ARRAY_FREQ)
				ret = put_varint(bp, v->elapsed) || put_varint(bp, v->curr) ||
				      put_varint(bp, v->prev);
			else
				ret = put_varint(bp, v->v);
		}
	}
	if (ret == 0)
		ret = put_stkt(out, u->type, bp);
	return ret ? -1 : 0;
}

/* ---- acknowledgements, switches ---- */

int peer_ack_decode(const unsigned char *p, size_t n, uint64_t *table_id, uint32_t *upd)
{
	struct rd r = { p, n, 0, 0 };

	*table_id = rd_varint(&r);
	*upd = rd_u32(&r);
	return r.bad ? -1 : 0;
}

int peer_msg_put_ack(struct dstr *out, uint64_t table_id, uint32_t upd)
{
	struct dstr *bp = body_begin();
	uint32_t w = htonl(upd);
	int ret = put_varint(bp, table_id) || dstr_add(bp, (const char *)&w, 4);

	if (ret == 0)
		ret = put_stkt(out, PEER_STKT_ACK, bp);
	return ret ? -1 : 0;
}

int peer_switch_decode(const unsigned char *p, size_t n, uint64_t *table_id)
{
	struct rd r = { p, n, 0, 0 };

	*table_id = rd_varint(&r);
	return r.bad ? -1 : 0;
}
