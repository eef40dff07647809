/* Protocol buffers messages read in place (msgparse.h) and the converters
 * protobuf(<field path>[,<type>]) and ungrpc (the same on the messages of
 * a gRPC body). No schema: a field is found by its number, its wire type
 * says how to skip it. */
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/msgparse.h>
#include <sluice/sample.h>
#include <sluice/str.h>

#define PB_MAX_FIELD ((1u << 29) - 1)

/* Reads a varint (at most 10 bytes) at *p before <end>. */
static int pb_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < 10 && *p < end; i++) {
		unsigned char b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return MSG_OK;
	}
	return MSG_INVALID;
}

/* The next field at *p: its number, wire type and value (raw bytes in
 * v->p, v->len for every wire type, the varint also in v->u64). */
static int pb_field(const unsigned char **p, const unsigned char *end, uint32_t *num,
                    struct pb_val *v)
{
	const unsigned char *s;
	uint64_t key, n;

	if (pb_varint(p, end, &key) != MSG_OK || key >> 3 == 0 || key >> 3 > PB_MAX_FIELD)
		return MSG_INVALID;
	*num = (uint32_t)(key >> 3);
	v->wire = (int)(key & 7);
	s = *p;
	switch (v->wire) {
	case 0:
		if (pb_varint(p, end, &v->u64) != MSG_OK)
			return MSG_INVALID;
		break;
	case 1:
	case 5:
		n = v->wire == 1 ? 8 : 4;
		if ((uint64_t)(end - *p) < n)
			return MSG_INVALID;
		*p += n;
		break;
	case 2:
		if (pb_varint(p, end, &n) != MSG_OK || n > (uint64_t)(end - *p))
			return MSG_INVALID;
		s = *p;
		*p += n;
		break;
	default:   /* 3 and 4: groups, deprecated; 6 and 7: none */
		return MSG_INVALID;
	}
	v->p = (const char *)s;
	v->len = (size_t)(*p - s);
	return MSG_OK;
}

int pb_find(const char *msg, size_t len, const uint32_t *path, int n, struct pb_val *v)
{
	const unsigned char *p = (const unsigned char *)msg, *end = p + len;

	for (int i = 0; i < n; i++) {
		uint32_t num;

		for (;;) {
			if (p >= end)
				return MSG_INVALID;
			if (pb_field(&p, end, &num, v) != MSG_OK)
				return MSG_INVALID;
			if (num == path[i])
				break;
		}
		if (i + 1 < n) {
			if (v->wire != 2)
				return MSG_INVALID;
			p = (const unsigned char *)v->p;
			end = p + v->len;
		}
	}
	return MSG_OK;
}

int grpc_message(const char *p, size_t len, const char **m, size_t *mlen)
{
	const unsigned char *u = (const unsigned char *)p;
	uint32_t l;

	if (len < 5)
		return MSG_INCOMPLETE;
	if (u[0] != 0)
		return MSG_INVALID;   /* compressed: not readable without the codec */
	l = (uint32_t)u[1] << 24 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 8 | u[4];
	if (l > len - 5)
		return MSG_INCOMPLETE;
	*m = p + 5;
	*mlen = l;
	return MSG_OK;
}

/* Field types of the second argument and the wire type each reads. */
enum pb_type { PB_RAW, PB_INT32, PB_INT64, PB_UINT32, PB_UINT64, PB_SINT32, PB_SINT64, PB_BOOL,
	       PB_ENUM, PB_FIXED64, PB_SFIXED64, PB_DOUBLE, PB_FIXED32, PB_SFIXED32, PB_FLOAT };

static const struct { const char *name; enum pb_type t; int wire; } pb_types[] = {
	{ "int32", PB_INT32, 0 }, { "int64", PB_INT64, 0 }, { "uint32", PB_UINT32, 0 },
	{ "uint64", PB_UINT64, 0 }, { "sint32", PB_SINT32, 0 }, { "sint64", PB_SINT64, 0 },
	{ "bool", PB_BOOL, 0 }, { "enum", PB_ENUM, 0 },
	{ "fixed64", PB_FIXED64, 1 }, { "sfixed64", PB_SFIXED64, 1 }, { "double", PB_DOUBLE, 1 },
	{ "fixed32", PB_FIXED32, 5 }, { "sfixed32", PB_SFIXED32, 5 }, { "float", PB_FLOAT, 5 },
};

/* What the arguments compile to (a[0].ptr). */
struct pb_args {
	uint32_t     path[PB_MAX_PATH];
	int          n;
	enum pb_type type;
	int          wire;
};

static int conv_check_protobuf(struct smp_arg *a, char **err, const void *priv)
{
	struct pb_args *pa = xcalloc(1, sizeof(*pa));
	const char *p = a[0].str;

	for (;;) {
		char *e;
		unsigned long v = strtoul(p, &e, 10);

		if (e == p || *p == '-' || *p == '+' || v == 0 || v > PB_MAX_FIELD ||
		    (*e && *e != '.') || pa->n == PB_MAX_PATH) {
			*err = str_fmt("invalid field path '%s' (expects field numbers from 1 to %u "
				       "separated by dots, at most %d)", a[0].str, PB_MAX_FIELD,
				       PB_MAX_PATH);
			free(pa);
			return -1;
		}
		pa->path[pa->n++] = (uint32_t)v;
		if (!*e)
			break;
		p = e + 1;
	}
	pa->type = PB_RAW;
	if (a[1].type == ARGT_STR) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(pb_types); i++)
			if (strcmp(a[1].str, pb_types[i].name) == 0)
				break;
		if (i == ARRAY_SIZE(pb_types)) {
			*err = str_fmt("unknown field type '%s' (expects int32, int64, uint32, uint64, "
				       "sint32, sint64, bool, enum, fixed64, sfixed64, double, fixed32, "
				       "sfixed32 or float)", a[1].str);
			free(pa);
			return -1;
		}
		pa->type = pb_types[i].t;
		pa->wire = pb_types[i].wire;
	}
	a[0].ptr = pa;
	a[0].release = free;
	return 0;
}

static uint64_t pb_le(const char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | (unsigned char)p[i];
	return v;
}

/* The sample of field value <v> read as <pa->type>: an integer (floating
 * point numbers truncated), or the raw bytes. */
static int pb_out(const struct pb_args *pa, const struct pb_val *v, struct sample *smp)
{
	uint64_t u = v->u64;
	int64_t i;
	double d;
	float f;

	if (pa->type == PB_RAW) {
		smp->type = SMP_T_BIN;
		smp->u.str.p = v->p;
		smp->u.str.len = v->len;
		return 1;
	}
	if (v->wire != pa->wire)
		return 0;
	switch (pa->type) {
	case PB_INT32:    i = (int32_t)(uint32_t)u; break;
	case PB_UINT32:   i = (uint32_t)u; break;
	case PB_SINT32:   i = (int32_t)((uint32_t)(u >> 1) ^ (uint32_t)-(int32_t)(u & 1)); break;
	case PB_SINT64:   i = (int64_t)((u >> 1) ^ (uint64_t)-(int64_t)(u & 1)); break;
	case PB_BOOL:     i = u != 0; break;
	case PB_FIXED64:
	case PB_SFIXED64: i = (int64_t)pb_le(v->p, 8); break;
	case PB_FIXED32:  i = (uint32_t)pb_le(v->p, 4); break;
	case PB_SFIXED32: i = (int32_t)(uint32_t)pb_le(v->p, 4); break;
	case PB_DOUBLE:
		u = pb_le(v->p, 8);
		memcpy(&d, &u, sizeof(d));
		if (!(d > -9.2e18 && d < 9.2e18))
			return 0;   /* NaN, infinities, out of range */
		i = (int64_t)d;
		break;
	case PB_FLOAT: {
		uint32_t w = (uint32_t)pb_le(v->p, 4);

		memcpy(&f, &w, sizeof(f));
		if (!(f > -9.2e18f && f < 9.2e18f))
			return 0;
		i = (int64_t)f;
		break;
	}
	default:          i = (int64_t)u; break;   /* int64, uint64, enum */
	}
	if (pa->type == PB_BOOL)
		return smp_set_bool(smp, (int)i);
	return smp_set_int(smp, i);
}

static int conv_protobuf(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const struct pb_args *pa = a[0].ptr;
	struct pb_val v;

	if (pb_find(smp->u.str.p, smp->u.str.len, pa->path, pa->n, &v) != MSG_OK)
		return 0;
	return pb_out(pa, &v, smp);
}

/* ungrpc: the field in the first message of the gRPC body that has it. */
static int conv_ungrpc(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const struct pb_args *pa = a[0].ptr;
	const char *p = smp->u.str.p, *m;
	size_t len = smp->u.str.len, ml;
	struct pb_val v;

	while (grpc_message(p, len, &m, &ml) == MSG_OK) {
		if (pb_find(m, ml, pa->path, pa->n, &v) == MSG_OK)
			return pb_out(pa, &v, smp);
		len -= (size_t)(m + ml - p);
		p = m + ml;
	}
	return 0;
}

static const struct smp_conv_kw pb_convs[] = {
	{ "protobuf", conv_protobuf, { ARGT_STR, ARGT_STR }, 1, SMP_T_BIN, SMP_T_ANY,
	  conv_check_protobuf, NULL },
	{ "ungrpc", conv_ungrpc, { ARGT_STR, ARGT_STR }, 1, SMP_T_BIN, SMP_T_ANY,
	  conv_check_protobuf, NULL },
};

SLUICE_INIT(conv_protobuf_register)
{
	smp_register_convs(pb_convs, ARRAY_SIZE(pb_convs));
}
