/* SPOP 2.0 codec (spop.h): varints, typed data, frames, the HELLO and
 * DISCONNECT key-value lists. Every read is bounded by the caller's length:
 * an agent's bytes are never trusted. */
#include <string.h>

#include <sluice/common.h>
#include <sluice/spop.h>

void spop_put_byte(struct spop_wr *w, unsigned char c)
{
	if (w->n >= w->size) {
		w->err = 1;
		return;
	}
	w->p[w->n++] = c;
}

void spop_put_varint(struct spop_wr *w, uint64_t v)
{
	if (v < 240) {
		spop_put_byte(w, (unsigned char)v);
		return;
	}
	spop_put_byte(w, (unsigned char)(v | 240));
	v = (v - 240) >> 4;
	while (v >= 128) {
		spop_put_byte(w, (unsigned char)(v | 128));
		v = (v - 128) >> 7;
	}
	spop_put_byte(w, (unsigned char)v);
}

int spop_get_varint(const unsigned char *p, size_t len, size_t *i, uint64_t *v)
{
	unsigned shift = 4;
	uint64_t r;

	if (*i >= len)
		return -1;
	r = p[(*i)++];
	if (r < 240) {
		*v = r;
		return 0;
	}
	for (;;) {
		if (*i >= len || shift > 60)
			return -1;
		r += (uint64_t)p[*i] << shift;
		shift += 7;
		if (p[(*i)++] < 128) {
			*v = r;
			return 0;
		}
	}
}

void spop_put_bytes(struct spop_wr *w, const void *p, size_t len)
{
	spop_put_varint(w, len);
	if (w->err || len > w->size - w->n) {
		w->err = 1;
		return;
	}
	memcpy(w->p + w->n, p, len);
	w->n += len;
}

void spop_put_str(struct spop_wr *w, const char *s)
{
	spop_put_bytes(w, s, strlen(s));
}

void spop_put_val(struct spop_wr *w, const struct spop_val *v)
{
	switch (v->type) {
	case SPOP_T_BOOL:
		spop_put_byte(w, SPOP_T_BOOL | (v->v.b ? SPOP_BOOL_TRUE : 0));
		return;
	case SPOP_T_INT32:
	case SPOP_T_INT64:
		/* signed integers travel as the varint of their two's complement */
		spop_put_byte(w, (unsigned char)v->type);
		spop_put_varint(w, v->type == SPOP_T_INT32 ? (uint64_t)(uint32_t)v->v.i :
				(uint64_t)v->v.i);
		return;
	case SPOP_T_UINT32:
	case SPOP_T_UINT64:
		spop_put_byte(w, (unsigned char)v->type);
		spop_put_varint(w, v->v.u);
		return;
	case SPOP_T_IPV4:
	case SPOP_T_IPV6: {
		size_t l = v->type == SPOP_T_IPV4 ? 4 : 16;

		spop_put_byte(w, (unsigned char)v->type);
		if (w->err || l > w->size - w->n) {
			w->err = 1;
			return;
		}
		memcpy(w->p + w->n, v->v.ip, l);
		w->n += l;
		return;
	}
	case SPOP_T_STRING:
	case SPOP_T_BINARY:
		spop_put_byte(w, (unsigned char)v->type);
		spop_put_bytes(w, v->v.str.p, v->v.str.len);
		return;
	case SPOP_T_NULL:
	default:
		spop_put_byte(w, SPOP_T_NULL);
		return;
	}
}

int spop_get_str(const unsigned char *p, size_t len, size_t *i, const char **s, uint64_t *slen)
{
	uint64_t l;

	if (spop_get_varint(p, len, i, &l) == -1 || l > len - *i)
		return -1;
	*s = (const char *)p + *i;
	*slen = l;
	*i += l;
	return 0;
}

int spop_get_val(const unsigned char *p, size_t len, size_t *i, struct spop_val *v)
{
	unsigned t;
	uint64_t u;

	if (*i >= len)
		return -1;
	t = p[(*i)++];
	v->type = (enum spop_type)(t & 15);
	switch (v->type) {
	case SPOP_T_NULL:
		return 0;
	case SPOP_T_BOOL:
		v->v.b = !!(t & SPOP_BOOL_TRUE);
		return 0;
	case SPOP_T_INT32:
	case SPOP_T_INT64:
		if (spop_get_varint(p, len, i, &u) == -1)
			return -1;
		v->v.i = v->type == SPOP_T_INT32 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
		return 0;
	case SPOP_T_UINT32:
	case SPOP_T_UINT64:
		if (spop_get_varint(p, len, i, &u) == -1)
			return -1;
		v->v.u = v->type == SPOP_T_UINT32 ? (uint32_t)u : u;
		return 0;
	case SPOP_T_IPV4:
	case SPOP_T_IPV6: {
		size_t l = v->type == SPOP_T_IPV4 ? 4 : 16;

		if (l > len - *i)
			return -1;
		memcpy(v->v.ip, p + *i, l);
		*i += l;
		return 0;
	}
	case SPOP_T_STRING:
	case SPOP_T_BINARY:
		return spop_get_str(p, len, i, &v->v.str.p, &v->v.str.len);
	default:
		return -1;
	}
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t spop_frame_begin(struct spop_wr *w, unsigned type, uint32_t flags, uint64_t stream_id,
                        uint64_t frame_id)
{
	size_t start = w->n;

	if (w->size - w->n < 9) {
		w->err = 1;
		return start;
	}
	w->n += 4;
	w->p[w->n++] = (unsigned char)type;
	put32(w->p + w->n, flags);
	w->n += 4;
	spop_put_varint(w, stream_id);
	spop_put_varint(w, frame_id);
	return start;
}

int spop_frame_end(struct spop_wr *w, size_t start)
{
	if (w->err)
		return -1;
	put32(w->p + start, (uint32_t)(w->n - start - 4));
	return 0;
}

long spop_frame_parse(const unsigned char *p, size_t len, size_t max, struct spop_frame *f)
{
	size_t flen, i = 9;

	if (len < 4)
		return 0;
	flen = get32(p);
	if (flen > max)
		return -1;
	if (len - 4 < flen)
		return 0;
	if (flen < 7)   /* type, flags, two one-byte ids at least */
		return -2;
	flen += 4;
	f->type = p[4];
	f->flags = get32(p + 5);
	if (spop_get_varint(p, flen, &i, &f->stream_id) == -1 ||
	    spop_get_varint(p, flen, &i, &f->frame_id) == -1)
		return -2;
	f->pl = p + i;
	f->pl_len = flen - i;
	return (long)flen;
}

static int kv_is(const char *k, uint64_t kl, const char *name)
{
	return kl == strlen(name) && memcmp(k, name, kl) == 0;
}

int spop_read_kv(const unsigned char *p, size_t len, struct spop_kv *kv)
{
	size_t i = 0;

	while (i < len) {
		struct spop_val v;
		const char *k;
		uint64_t kl;

		if (spop_get_str(p, len, &i, &k, &kl) == -1 || spop_get_val(p, len, &i, &v) == -1)
			return -1;
		if (v.type == SPOP_T_STRING) {
			if (kv_is(k, kl, "version")) {
				kv->version = v.v.str.p;
				kv->version_len = v.v.str.len;
			} else if (kv_is(k, kl, "capabilities")) {
				kv->caps = v.v.str.p;
				kv->caps_len = v.v.str.len;
			} else if (kv_is(k, kl, "message")) {
				kv->message = v.v.str.p;
				kv->message_len = v.v.str.len;
			}
		} else if (v.type >= SPOP_T_INT32 && v.type <= SPOP_T_UINT64) {
			uint64_t n = v.type == SPOP_T_INT32 || v.type == SPOP_T_INT64 ?
				     (uint64_t)v.v.i : v.v.u;

			if (kv_is(k, kl, "max-frame-size")) {
				kv->max_frame = n;
				kv->has_mfs = 1;
			} else if (kv_is(k, kl, "status-code")) {
				kv->status = n;
				kv->has_status = 1;
			}
		}
	}
	return 0;
}

int spop_hello_check(const struct spop_kv *kv, uint64_t max)
{
	if (!kv->version)
		return 5;
	if (!memmem(kv->version, kv->version_len, "2.0", 3))
		return 8;
	if (!kv->has_mfs)
		return 6;
	if (kv->max_frame < SPOP_FRAME_MIN || kv->max_frame > max)
		return 9;
	return 0;
}

int spop_hello_build(struct spop_wr *w, uint32_t max_frame, const char *caps,
                     const char *engine_id, int healthcheck)
{
	size_t start = spop_frame_begin(w, SPOP_F_HAPROXY_HELLO, SPOP_FL_FIN, 0, 0);
	struct spop_val v;

	spop_put_str(w, "supported-versions");
	v.type = SPOP_T_STRING;
	v.v.str.p = "2.0";
	v.v.str.len = 3;
	spop_put_val(w, &v);
	spop_put_str(w, "max-frame-size");
	v.type = SPOP_T_UINT32;
	v.v.u = max_frame;
	spop_put_val(w, &v);
	spop_put_str(w, "capabilities");
	v.type = SPOP_T_STRING;
	v.v.str.p = caps;
	v.v.str.len = strlen(caps);
	spop_put_val(w, &v);
	if (engine_id) {
		spop_put_str(w, "engine-id");
		v.v.str.p = engine_id;
		v.v.str.len = strlen(engine_id);
		spop_put_val(w, &v);
	}
	if (healthcheck) {
		spop_put_str(w, "healthcheck");
		v.type = SPOP_T_BOOL;
		v.v.b = 1;
		spop_put_val(w, &v);
	}
	return spop_frame_end(w, start);
}

int spop_disconnect_build(struct spop_wr *w, unsigned status)
{
	size_t start = spop_frame_begin(w, SPOP_F_HAPROXY_DISCONNECT, SPOP_FL_FIN, 0, 0);
	struct spop_val v;

	spop_put_str(w, "status-code");
	v.type = SPOP_T_UINT32;
	v.v.u = status;
	spop_put_val(w, &v);
	spop_put_str(w, "message");
	v.type = SPOP_T_STRING;
	v.v.str.p = spop_status_str(status);
	v.v.str.len = strlen(v.v.str.p);
	spop_put_val(w, &v);
	return spop_frame_end(w, start);
}

int spop_ack_next(const unsigned char *p, size_t len, size_t *i, struct spop_action *a)
{
	unsigned nargs;

	if (*i >= len)
		return 0;
	if (len - *i < 2)
		return -1;
	a->type = p[(*i)++];
	nargs = p[(*i)++];
	if (a->type == SPOP_ACT_SET_VAR || a->type == SPOP_ACT_UNSET_VAR) {
		if (nargs != (a->type == SPOP_ACT_SET_VAR ? 3u : 2u) || *i >= len)
			return -1;
		a->scope = p[(*i)++];
		if (spop_get_str(p, len, i, &a->name, &a->name_len) == -1)
			return -1;
		if (a->type == SPOP_ACT_SET_VAR)
			return spop_get_val(p, len, i, &a->val) == -1 ? -1 : 1;
		a->val.type = SPOP_T_NULL;
		return 1;
	}
	/* an action sluice does not know: its arguments are typed data, skipped */
	for (unsigned k = 0; k < nargs; k++)
		if (spop_get_val(p, len, i, &a->val) == -1)
			return -1;
	return 1;
}

const char *spop_status_str(uint64_t code)
{
	static const char *const words[] = {
		"normal", "I/O error", "a timeout occurred", "frame is too big",
		"invalid frame received", "version value not found",
		"max-frame-size value not found", "capabilities value not found",
		"unsupported version", "max-frame-size too big or too small",
		"payload fragmentation is not supported", "invalid interlaced frames",
		"frame-id not found", "resource allocation error",
	};

	return code < ARRAY_SIZE(words) ? words[code] : "an unknown error occurred";
}
