/* FIX (Financial Information eXchange) messages read in place
 * (msgparse.h) and the converters on them, fix_is_valid and
 * fix_tag_value: only the first message of the data is read. */
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/msgparse.h>
#include <sluice/sample.h>
#include <sluice/str.h>

#define FIX_SOH '\x01'
#define FIX_TAG_BEGIN    8
#define FIX_TAG_LENGTH   9
#define FIX_TAG_CHECKSUM 10
#define FIX_TAG_MSGTYPE  35
#define FIX_MAX_TAG      999999999u

/* One "<tag>=<value>\x01" field at <p> (before <end>): MSG_OK with the
 * tag, the value and <*next> after the SOH; MSG_INCOMPLETE when <end>
 * comes first; MSG_INVALID when the tag is empty, not a number, or has no
 * '='. */
static int fix_field(const char *p, const char *end, unsigned *tag, const char **v,
                     size_t *vlen, const char **next)
{
	const char *s = p, *e;

	*tag = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (*tag > FIX_MAX_TAG / 10)
			return MSG_INVALID;
		*tag = *tag * 10 + (unsigned)(*p - '0');
	}
	if (p >= end)
		return MSG_INCOMPLETE;
	if (p == s || *p != '=')
		return MSG_INVALID;
	p++;
	if (!(e = memchr(p, FIX_SOH, (size_t)(end - p))))
		return MSG_INCOMPLETE;
	*v = p;
	*vlen = (size_t)(e - p);
	*next = e + 1;
	return MSG_OK;
}

static int fix_version_ok(const char *v, size_t len)
{
	static const char *const versions[] = { "FIX.4.0", "FIX.4.1", "FIX.4.2", "FIX.4.3",
						"FIX.4.4", "FIXT.1.1" };

	for (size_t i = 0; i < ARRAY_SIZE(versions); i++)
		if (strlen(versions[i]) == len && memcmp(versions[i], v, len) == 0)
			return 1;
	return 0;
}

int fix_validate(const char *p, size_t len)
{
	const char *s = p, *end = p + len, *v, *body, *bend;
	unsigned tag, sum = 0;
	size_t vl, blen = 0;
	int r, nf = 0;

	/* BeginString, BodyLength */
	if ((r = fix_field(p, end, &tag, &v, &vl, &p)) != MSG_OK)
		return r;
	if (tag != FIX_TAG_BEGIN || !fix_version_ok(v, vl))
		return MSG_INVALID;
	if ((r = fix_field(p, end, &tag, &v, &vl, &p)) != MSG_OK)
		return r;
	if (tag != FIX_TAG_LENGTH || !vl || vl > 9)
		return MSG_INVALID;
	for (size_t i = 0; i < vl; i++) {
		if (v[i] < '0' || v[i] > '9')
			return MSG_INVALID;
		blen = blen * 10 + (size_t)(v[i] - '0');
	}
	/* the body: MsgType first, fields ending exactly at BodyLength */
	body = p;
	if (blen > (size_t)(end - body))
		bend = end;   /* read what is there: an error there is final */
	else
		bend = body + blen;
	while (p < bend) {
		if ((r = fix_field(p, bend, &tag, &v, &vl, &p)) == MSG_INVALID)
			return MSG_INVALID;
		if (r == MSG_INCOMPLETE)
			return bend == end && blen > (size_t)(end - body) ? MSG_INCOMPLETE
									   : MSG_INVALID;
		if (!vl || (nf++ == 0 && tag != FIX_TAG_MSGTYPE) || tag == FIX_TAG_CHECKSUM)
			return MSG_INVALID;
	}
	if (!nf)
		return blen > (size_t)(end - body) ? MSG_INCOMPLETE : MSG_INVALID;
	if (p != body + blen)
		return MSG_INCOMPLETE;
	/* CheckSum: three digits, the sum of every byte before it modulo 256 */
	if ((size_t)(end - p) < 7)
		return memcmp(p, "10=", MIN((size_t)(end - p), 3)) ? MSG_INVALID : MSG_INCOMPLETE;
	if (memcmp(p, "10=", 3) != 0 || p[6] != FIX_SOH)
		return MSG_INVALID;
	for (int i = 3; i < 6; i++)
		if (p[i] < '0' || p[i] > '9')
			return MSG_INVALID;
	for (const char *c = s; c < p; c++)
		sum += (unsigned char)*c;
	if ((unsigned)((p[3] - '0') * 100 + (p[4] - '0') * 10 + (p[5] - '0')) != sum % 256)
		return MSG_INVALID;
	return MSG_OK;
}

int fix_tag_find(const char *p, size_t len, unsigned want, const char **v, size_t *vlen)
{
	const char *end = p + len;
	unsigned tag;
	int r;

	while (p < end) {
		if ((r = fix_field(p, end, &tag, v, vlen, &p)) != MSG_OK)
			return r;
		if (tag == want)
			return MSG_OK;
		if (tag == FIX_TAG_CHECKSUM)
			return MSG_INVALID;   /* the end of the first message */
	}
	return MSG_INCOMPLETE;
}

/* No value: said to be one that more data may give when <r> is
 * MSG_INCOMPLETE (tcp-request content rules wait for it). */
static int fix_none(struct sample *smp, int r)
{
	if (r == MSG_INCOMPLETE)
		smp->flags |= SMP_F_MAY_CHANGE;
	return 0;
}

static int conv_fix_is_valid(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	int r = fix_validate(smp->u.str.p, smp->u.str.len);

	if (r == MSG_INCOMPLETE)
		return fix_none(smp, r);
	return smp_set_bool(smp, r == MSG_OK);
}

/* fix_tag_value(<tag>): a number, or one of the names below. */
static int conv_check_fix_tag(struct smp_arg *a, char **err, const void *priv)
{
	static const struct { const char *name; unsigned tag; } names[] = {
		{ "BeginString", 8 }, { "BodyLength", 9 }, { "MsgType", 35 },
		{ "SenderCompID", 49 }, { "TargetCompID", 56 }, { "CheckSum", 10 },
	};
	char *e;
	unsigned long v;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(a[0].str, names[i].name) == 0) {
			a[0].sint = names[i].tag;
			return 0;
		}
	v = strtoul(a[0].str, &e, 10);
	if (!a[0].len || *e || a[0].str[0] == '-' || v == 0 || v > FIX_MAX_TAG) {
		*err = str_fmt("unknown FIX tag '%s' (expects a tag number or BeginString, "
			       "BodyLength, MsgType, SenderCompID, TargetCompID, CheckSum)", a[0].str);
		return -1;
	}
	a[0].sint = (int64_t)v;
	return 0;
}

static int conv_fix_tag_value(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const char *v;
	size_t vl;
	int r = fix_tag_find(smp->u.str.p, smp->u.str.len, (unsigned)a[0].sint, &v, &vl);

	if (r != MSG_OK)
		return fix_none(smp, r);
	smp->type = SMP_T_STR;
	smp->u.str.p = v;
	smp->u.str.len = vl;
	return 1;
}

static const struct smp_conv_kw fix_convs[] = {
	{ "fix_is_valid", conv_fix_is_valid, { 0 }, 0, SMP_T_BIN, SMP_T_BOOL, NULL, NULL },
	{ "fix_tag_value", conv_fix_tag_value, { ARGT_STR }, 1, SMP_T_BIN, SMP_T_STR,
	  conv_check_fix_tag, NULL },
};

SLUICE_INIT(conv_fix_register)
{
	smp_register_convs(fix_convs, ARRAY_SIZE(fix_convs));
}
