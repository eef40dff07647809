/* MQTT 3.1, 3.1.1 and 5.0 CONNECT and CONNACK packets read in place
 * (msgparse.h) and the converters on them, mqtt_is_valid and
 * mqtt_field_value: the first packet a client or a server sends. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/common.h>
#include <sluice/msgparse.h>
#include <sluice/sample.h>
#include <sluice/str.h>

/* A cursor over a packet: <p> moves towards <end>; <short_is_incomplete>
 * says whether running out of bytes means "more may come" (the bytes end
 * before the packet's remaining length does) or "malformed". */
struct mq_cur {
	const unsigned char *p, *end;
	int                  incomplete;   /* MSG_INCOMPLETE or MSG_INVALID on a short read */
};

/* The kinds of v5 property values. */
enum mq_ptype { MQ_P_NONE, MQ_P_BYTE, MQ_P_U16, MQ_P_U32, MQ_P_VARINT, MQ_P_STR, MQ_P_BIN,
		MQ_P_PAIR };

static enum mq_ptype mq_prop_type(unsigned id)
{
	switch (id) {
	case 1: case 23: case 25: case 36: case 37: case 40: case 41: case 42:
		return MQ_P_BYTE;
	case 19: case 33: case 34: case 35:
		return MQ_P_U16;
	case 2: case 17: case 24: case 39:
		return MQ_P_U32;
	case 11:
		return MQ_P_VARINT;
	case 3: case 8: case 18: case 21: case 26: case 28: case 31:
		return MQ_P_STR;
	case 9: case 22:
		return MQ_P_BIN;
	case 38:
		return MQ_P_PAIR;
	default:
		return MQ_P_NONE;
	}
}

/* Reads a variable byte integer (at most 4 bytes). */
static int mq_varint(struct mq_cur *c, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		if (c->p >= c->end)
			return c->incomplete;
		*v |= (uint32_t)(*c->p & 0x7f) << (7 * i);
		if (!(*c->p++ & 0x80))
			return MSG_OK;
	}
	return MSG_INVALID;
}

static int mq_need(struct mq_cur *c, size_t n)
{
	return (size_t)(c->end - c->p) >= n ? MSG_OK : c->incomplete;
}

static int mq_u8(struct mq_cur *c, uint32_t *v)
{
	int r = mq_need(c, 1);

	if (r == MSG_OK)
		*v = *c->p++;
	return r;
}

static int mq_u16(struct mq_cur *c, uint32_t *v)
{
	int r = mq_need(c, 2);

	if (r == MSG_OK) {
		*v = (uint32_t)c->p[0] << 8 | c->p[1];
		c->p += 2;
	}
	return r;
}

static int mq_u32(struct mq_cur *c, uint32_t *v)
{
	int r = mq_need(c, 4);

	if (r == MSG_OK) {
		*v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 | (uint32_t)c->p[2] << 8 |
		     c->p[3];
		c->p += 4;
	}
	return r;
}

/* A two-byte length and that many bytes; a UTF-8 string when <utf8> (no
 * NUL character, as MQTT requires). */
static int mq_bytes(struct mq_cur *c, struct mqtt_val *v, int utf8)
{
	uint32_t n;
	int r;

	if ((r = mq_u16(c, &n)) != MSG_OK || (r = mq_need(c, n)) != MSG_OK)
		return r;
	if (utf8 && memchr(c->p, 0, n))
		return MSG_INVALID;
	v->is_int = 0;
	v->p = (const char *)c->p;
	v->len = n;
	c->p += n;
	return MSG_OK;
}

/* A v5 property list; the value of property <want> (0: none) goes to
 * <*v> and <*found> is set. Each property but User Property may appear once. */
static int mq_props(struct mq_cur *c, unsigned want, struct mqtt_val *v, int *found)
{
	struct mq_cur pc = *c;
	uint8_t seen[64] = { 0 };
	uint32_t len, id;
	int r;

	if ((r = mq_varint(c, &len)) != MSG_OK || (r = mq_need(c, len)) != MSG_OK)
		return r;
	pc.p = c->p;
	pc.end = c->p + len;
	pc.incomplete = MSG_INVALID;   /* the list's length is known: short is malformed */
	c->p += len;
	while (pc.p < pc.end) {
		struct mqtt_val tmp;
		enum mq_ptype t;

		if ((r = mq_varint(&pc, &id)) != MSG_OK)
			return r;
		if ((t = mq_prop_type(id)) == MQ_P_NONE)
			return MSG_INVALID;
		if (t != MQ_P_PAIR && seen[id]++)
			return MSG_INVALID;
		memset(&tmp, 0, sizeof(tmp));
		tmp.is_int = 1;
		switch (t) {
		case MQ_P_BYTE:   r = mq_u8(&pc, &tmp.num); break;
		case MQ_P_U16:    r = mq_u16(&pc, &tmp.num); break;
		case MQ_P_U32:    r = mq_u32(&pc, &tmp.num); break;
		case MQ_P_VARINT: r = mq_varint(&pc, &tmp.num); break;
		case MQ_P_STR:    r = mq_bytes(&pc, &tmp, 1); break;
		case MQ_P_BIN:    r = mq_bytes(&pc, &tmp, 0); break;
		default:
			if ((r = mq_bytes(&pc, &tmp, 1)) == MSG_OK)
				r = mq_bytes(&pc, &tmp, 1);
			break;
		}
		if (r != MSG_OK)
			return r;
		if (id == want && t != MQ_P_PAIR && !*found) {
			*v = tmp;
			*found = 1;
		}
	}
	return MSG_OK;
}

static void mq_int(struct mqtt_val *v, uint32_t n)
{
	memset(v, 0, sizeof(*v));
	v->is_int = 1;
	v->num = n;
}

/* Records <val> in <*v> when it is the <field> asked for (<want>). */
static void mq_keep(int want, int field, const struct mqtt_val *val, struct mqtt_val *v,
                    int *found)
{
	if (want == field) {
		*v = *val;
		*found = 1;
	}
}

/* Reads the CONNECT body in <c> (after the fixed header); records <field>
 * (0: none) in <*v> / <*found>. */
static int mq_connect(struct mq_cur *c, int field, struct mqtt_val *v, int *found)
{
	struct mqtt_val name, tmp;
	uint32_t ver, flags, keep;
	unsigned prop = field >= MQTT_FIELD_PROP ? (unsigned)(field - MQTT_FIELD_PROP) : 0;
	int r;

	if ((r = mq_bytes(c, &name, 1)) != MSG_OK)
		return r;
	if ((r = mq_u8(c, &ver)) != MSG_OK)
		return r;
	if (!((ver == 3 && name.len == 6 && memcmp(name.p, "MQIsdp", 6) == 0) ||
	      ((ver == 4 || ver == 5) && name.len == 4 && memcmp(name.p, "MQTT", 4) == 0)))
		return MSG_INVALID;
	if ((r = mq_u8(c, &flags)) != MSG_OK)
		return r;
	/* reserved bit; will QoS 3; will QoS or retain without will; (3.1.1)
	 * a password without a user name */
	if ((flags & 0x01) || ((flags >> 3) & 3) == 3 || (!(flags & 0x04) && (flags & 0x38)) ||
	    (ver != 5 && (flags & 0x40) && !(flags & 0x80)))
		return MSG_INVALID;
	if ((r = mq_u16(c, &keep)) != MSG_OK)
		return r;
	mq_keep(field, MQTT_FIELD_PROTO_NAME, &name, v, found);
	mq_int(&tmp, ver);
	mq_keep(field, MQTT_FIELD_PROTO_VERSION, &tmp, v, found);
	mq_int(&tmp, flags);
	mq_keep(field, MQTT_FIELD_FLAGS, &tmp, v, found);
	mq_int(&tmp, keep);
	mq_keep(field, MQTT_FIELD_KEEPALIVE, &tmp, v, found);
	if (ver == 5 && (r = mq_props(c, prop, v, found)) != MSG_OK)
		return r;
	if ((r = mq_bytes(c, &tmp, 1)) != MSG_OK)
		return r;
	mq_keep(field, MQTT_FIELD_CLIENT_ID, &tmp, v, found);
	if (flags & 0x04) {
		if (ver == 5 && (r = mq_props(c, prop, v, found)) != MSG_OK)
			return r;
		if ((r = mq_bytes(c, &tmp, 1)) != MSG_OK)
			return r;
		mq_keep(field, MQTT_FIELD_WILL_TOPIC, &tmp, v, found);
		if ((r = mq_bytes(c, &tmp, 0)) != MSG_OK)
			return r;
		mq_keep(field, MQTT_FIELD_WILL_PAYLOAD, &tmp, v, found);
	}
	if (flags & 0x80) {
		if ((r = mq_bytes(c, &tmp, 1)) != MSG_OK)
			return r;
		mq_keep(field, MQTT_FIELD_USERNAME, &tmp, v, found);
	}
	if (flags & 0x40) {
		if ((r = mq_bytes(c, &tmp, 0)) != MSG_OK)
			return r;
		mq_keep(field, MQTT_FIELD_PASSWORD, &tmp, v, found);
	}
	return c->p == c->end ? MSG_OK : MSG_INVALID;
}

/* The CONNACK body of remaining length <rl>: 3.1.1 when it is 2, else 5.0
 * with properties. */
static int mq_connack(struct mq_cur *c, uint32_t rl, int field, struct mqtt_val *v, int *found)
{
	unsigned prop = field >= MQTT_FIELD_PROP ? (unsigned)(field - MQTT_FIELD_PROP) : 0;
	int v5 = rl != 2;
	struct mqtt_val tmp;
	uint32_t flags, rc;
	int r;

	if ((r = mq_u8(c, &flags)) != MSG_OK)
		return r;
	if (flags & 0xfe)
		return MSG_INVALID;
	if ((r = mq_u8(c, &rc)) != MSG_OK)
		return r;
	mq_int(&tmp, flags);
	mq_keep(field, MQTT_FIELD_FLAGS, &tmp, v, found);
	mq_int(&tmp, rc);
	mq_keep(field, MQTT_FIELD_REASON_CODE, &tmp, v, found);
	mq_int(&tmp, v5 ? 5 : 4);
	mq_keep(field, MQTT_FIELD_PROTO_VERSION, &tmp, v, found);
	if (v5 && (r = mq_props(c, prop, v, found)) != MSG_OK)
		return r;
	return c->p == c->end ? MSG_OK : MSG_INVALID;
}

/* The fixed header; <c> is set to the body, cut at the remaining length
 * (or at the end of the bytes when they stop before it). */
static int mq_packet(const char *p, size_t len, int field, int *type, struct mqtt_val *v,
                     int *found)
{
	struct mq_cur c = { (const unsigned char *)p, (const unsigned char *)p + len,
			    MSG_INCOMPLETE };
	uint32_t b0, rl;
	int r;

	if ((r = mq_u8(&c, &b0)) != MSG_OK || (r = mq_varint(&c, &rl)) != MSG_OK)
		return r;
	*type = (int)(b0 >> 4);
	if (b0 & 0x0f)
		return MSG_INVALID;   /* CONNECT and CONNACK have no flags */
	if (*type != MQTT_CONNECT && *type != MQTT_CONNACK)
		return MSG_INVALID;
	if ((size_t)(c.end - c.p) >= rl) {
		c.end = c.p + rl;
		c.incomplete = MSG_INVALID;
	}
	r = *type == MQTT_CONNECT ? mq_connect(&c, field, v, found)
				  : mq_connack(&c, rl, field, v, found);
	/* a complete-looking prefix of a longer packet: more bytes may come */
	if (r == MSG_OK && c.incomplete == MSG_INCOMPLETE)
		return MSG_INCOMPLETE;
	return r;
}

int mqtt_validate(const char *p, size_t len, int *type)
{
	struct mqtt_val v;
	int t = 0, found = 0, r = mq_packet(p, len, 0, &t, &v, &found);

	if (r == MSG_OK && type)
		*type = t;
	return r;
}

int mqtt_field_find(const char *p, size_t len, int type, int field, struct mqtt_val *v)
{
	int t = 0, found = 0, r;

	if (len && ((unsigned char)*p >> 4) != type)
		return MSG_INVALID;
	r = mq_packet(p, len, field, &t, v, &found);
	if (r != MSG_OK)
		return r;
	return found ? MSG_OK : MSG_INVALID;
}

static int mq_none(struct sample *smp, int r)
{
	if (r == MSG_INCOMPLETE)
		smp->flags |= SMP_F_MAY_CHANGE;
	return 0;
}

static int conv_mqtt_is_valid(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	int r = mqtt_validate(smp->u.str.p, smp->u.str.len, NULL);

	if (r == MSG_INCOMPLETE)
		return mq_none(smp, r);
	return smp_set_bool(smp, r == MSG_OK);
}

/* mqtt_field_value(<packet type>,<field name or v5 property id>): the
 * packet type in a[0].sint, the field (enum mqtt_field) in a[1].sint. */
static int conv_check_mqtt_field(struct smp_arg *a, char **err, const void *priv)
{
	static const struct { const char *name; int field; unsigned types; } fields[] = {
		{ "flags", MQTT_FIELD_FLAGS, 3 },
		{ "protocol_name", MQTT_FIELD_PROTO_NAME, 1 },
		{ "protocol_version", MQTT_FIELD_PROTO_VERSION, 3 },
		{ "client_identifier", MQTT_FIELD_CLIENT_ID, 1 },
		{ "will_topic", MQTT_FIELD_WILL_TOPIC, 1 },
		{ "will_payload", MQTT_FIELD_WILL_PAYLOAD, 1 },
		{ "username", MQTT_FIELD_USERNAME, 1 },
		{ "password", MQTT_FIELD_PASSWORD, 1 },
		{ "keepalive", MQTT_FIELD_KEEPALIVE, 1 },
		{ "reason_code", MQTT_FIELD_REASON_CODE, 2 },
	};
	char *e;
	long n;

	if (strcasecmp(a[0].str, "connect") == 0 || strcmp(a[0].str, "1") == 0)
		a[0].sint = MQTT_CONNECT;
	else if (strcasecmp(a[0].str, "connack") == 0 || strcmp(a[0].str, "2") == 0)
		a[0].sint = MQTT_CONNACK;
	else {
		*err = str_fmt("packet type '%s' cannot be read: only the first packet of each side "
			       "is, CONNECT (1) or CONNACK (2)", a[0].str);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (strcasecmp(a[1].str, fields[i].name) == 0) {
			if (!(fields[i].types & (1u << (a[0].sint - 1))))
				break;
			a[1].sint = fields[i].field;
			return 0;
		}
	n = strtol(a[1].str, &e, 10);
	if (a[1].len && !*e && n > 0 && n < 256 && mq_prop_type((unsigned)n) != MQ_P_NONE &&
	    mq_prop_type((unsigned)n) != MQ_P_PAIR) {
		a[1].sint = MQTT_FIELD_PROP + n;
		return 0;
	}
	*err = str_fmt("unknown %s field '%s' (expects %s, or an MQTT 5.0 property identifier "
		       "but 38, user properties)", a[0].sint == MQTT_CONNECT ? "CONNECT" : "CONNACK",
		       a[1].str, a[0].sint == MQTT_CONNECT ? "flags, protocol_name, "
		       "protocol_version, client_identifier, will_topic, will_payload, username, "
		       "password, keepalive" : "flags, protocol_version, reason_code");
	return -1;
}

static int conv_mqtt_field_value(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	struct mqtt_val v;
	int r = mqtt_field_find(smp->u.str.p, smp->u.str.len, (int)a[0].sint, (int)a[1].sint, &v);

	if (r != MSG_OK)
		return mq_none(smp, r);
	if (v.is_int)
		return smp_set_int(smp, v.num);
	smp->type = SMP_T_STR;
	smp->u.str.p = v.p;
	smp->u.str.len = v.len;
	return 1;
}

static const struct smp_conv_kw mqtt_convs[] = {
	{ "mqtt_is_valid", conv_mqtt_is_valid, { 0 }, 0, SMP_T_BIN, SMP_T_BOOL, NULL, NULL },
	{ "mqtt_field_value", conv_mqtt_field_value, { ARGT_STR, ARGT_STR }, 2, SMP_T_BIN,
	  SMP_T_ANY, conv_check_mqtt_field, NULL },
};

SLUICE_INIT(conv_mqtt_register)
{
	smp_register_convs(mqtt_convs, ARRAY_SIZE(mqtt_convs));
}
