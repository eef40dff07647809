/* JSON text (RFC 8259) read in place (json.h): the JSON path subset of
 * json_query, a bounded scanner without recursion (containers skipped with a
 * stack of JQ_MAX_DEPTH brackets), and the json_query converter. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/json.h>
#include <sluice/sample.h>
#include <sluice/str.h>

#define JQ_MAX_STEPS 32
#define JQ_MAX_DEPTH 64   /* nesting of containers skipped on the way */
#define JQ_KEY_MAX   256  /* a JSON key written with escapes compares decoded up to this */

struct jq_step {
	char  *key;    /* decoded ("\." read as "."); NULL for an array index */
	size_t klen;
	long   idx;
};

struct json_path {
	int            n;
	struct jq_step st[JQ_MAX_STEPS];
};

void json_path_free(void *p)
{
	struct json_path *jp = p;

	if (!jp)
		return;
	for (int i = 0; i < jp->n; i++)
		free(jp->st[i].key);
	free(jp);
}

int json_path_compile(const char *s, size_t len, struct json_path **out, char **err)
{
	const char *p = s, *end = s + len;
	struct json_path *jp;

	if (!len || *p != '$') {
		*err = str_fmt("the JSON path must start with '$' (got '%.*s')", (int)len, s);
		return -1;
	}
	jp = xcalloc(1, sizeof(*jp));
	for (p++; p < end; ) {
		struct jq_step *st;

		if (jp->n >= JQ_MAX_STEPS) {
			*err = str_fmt("JSON path '%.*s' has more than %d steps", (int)len, s,
				       JQ_MAX_STEPS);
			goto fail;
		}
		st = &jp->st[jp->n];
		if (*p == '.') {
			st->key = xcalloc(1, (size_t)(end - p));
			for (p++; p < end && *p != '.' && *p != '['; p++) {
				if (*p == '\\' && p + 1 < end)
					p++;
				st->key[st->klen++] = *p;
			}
			jp->n++;
			if (!st->klen)
				goto bad;
			continue;
		}
		if (*p == '[') {
			long v = 0;
			const char *d = ++p;

			while (p < end && *p >= '0' && *p <= '9' && p - d < 9)
				v = v * 10 + (*p++ - '0');
			if (p == d || p >= end || *p != ']')
				goto bad;
			p++;
			st->idx = v;
			jp->n++;
			continue;
		}
		goto bad;
	}
	*out = jp;
	return 0;
bad:
	*err = str_fmt("invalid JSON path '%.*s' (expects '$' followed by '.<key>' and "
		       "'[<index>]' steps)", (int)len, s);
fail:
	json_path_free(jp);
	return -1;
}

static const char *jq_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

static int jq_hex4(const char *p, const char *end, uint32_t *v)
{
	*v = 0;
	if (end - p < 4)
		return 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = str_hex_digit(c);

		if (d < 0)
			return 0;
		*v = *v << 4 | (uint32_t)d;
	}
	return 1;
}

/* The end of the string starting at the '"' <p>, or NULL when it is not
 * a valid JSON string (unknown escape, raw control character, no end). */
static const char *jq_string(const char *p, const char *end)
{
	uint32_t v;

	for (p++; p < end; p++) {
		if (*p == '"')
			return p + 1;
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p != '\\')
			continue;
		if (++p >= end)
			return NULL;
		if (*p == 'u') {
			if (!jq_hex4(p + 1, end, &v))
				return NULL;
			p += 4;
		} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
			return NULL;
		}
	}
	return NULL;
}

static const char *jq_digits(const char *p, const char *end)
{
	const char *s = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

/* The end of the number at <p> (JSON grammar), or NULL. */
static const char *jq_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = jq_digits(p, end)))
		return NULL;
	if (p < end && *p == '.' && !(p = jq_digits(p + 1, end)))
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = jq_digits(p, end)))
			return NULL;
	}
	return p;
}

/* The end of the scalar (string, number, literal) at <p>, or NULL. */
static const char *jq_scalar(const char *p, const char *end)
{
	static const char *const lit[] = { "true", "false", "null" };

	if (p >= end)
		return NULL;
	if (*p == '"')
		return jq_string(p, end);
	if (*p == '-' || (*p >= '0' && *p <= '9'))
		return jq_number(p, end);
	for (size_t i = 0; i < ARRAY_SIZE(lit); i++) {
		size_t l = strlen(lit[i]);

		if ((size_t)(end - p) >= l && memcmp(p, lit[i], l) == 0)
			return p + l;
	}
	return NULL;
}

/* After an object's '{' or ',': the member's key and ':'; returns where
 * its value starts (spaces skipped), NULL when malformed. The raw key (as
 * written, escapes kept) goes to <k>, <kl>. */
static const char *jq_member(const char *p, const char *end, const char **k, size_t *kl)
{
	const char *e;

	p = jq_ws(p, end);
	if (p >= end || *p != '"' || !(e = jq_string(p, end)))
		return NULL;
	*k = p + 1;
	*kl = (size_t)(e - 1 - (p + 1));
	p = jq_ws(e, end);
	if (p >= end || *p != ':')
		return NULL;
	return jq_ws(p + 1, end);
}

/* The end of the value at <p>, containers included, without recursion:
 * a stack of open brackets, at most JQ_MAX_DEPTH deep. NULL when
 * malformed or too deep. */
static const char *jq_skip(const char *p, const char *end)
{
	char stack[JQ_MAX_DEPTH];
	int depth = 0;
	const char *k;
	size_t kl;

	for (;;) {
		p = jq_ws(p, end);
		if (p >= end)
			return NULL;
		if (*p == '{' || *p == '[') {
			if (depth >= JQ_MAX_DEPTH)
				return NULL;
			stack[depth++] = *p == '{' ? '}' : ']';
			p = jq_ws(p + 1, end);
			if (p < end && *p == stack[depth - 1]) {
				p++;
				depth--;
			} else {
				if (stack[depth - 1] == '}' && !(p = jq_member(p, end, &k, &kl)))
					return NULL;
				continue;   /* the first value of the container */
			}
		} else if (!(p = jq_scalar(p, end))) {
			return NULL;
		}
		/* a value ended: close containers or go to the next value */
		for (;;) {
			if (!depth)
				return p;
			p = jq_ws(p, end);
			if (p >= end)
				return NULL;
			if (*p == stack[depth - 1]) {
				p++;
				depth--;
				continue;
			}
			if (*p != ',')
				return NULL;
			p++;
			if (stack[depth - 1] == '}' && !(p = jq_member(p, end, &k, &kl)))
				return NULL;
			break;
		}
	}
}

/* Appends code point <cp> as UTF-8 at out[*o]. */
static void jq_utf8(char *out, size_t *o, uint32_t cp)
{
	if (cp < 0x80) {
		out[(*o)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*o)++] = (char)(0xC0 | cp >> 6);
		out[(*o)++] = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		out[(*o)++] = (char)(0xE0 | cp >> 12);
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[(*o)++] = (char)(0x80 | (cp & 0x3F));
	} else {
		out[(*o)++] = (char)(0xF0 | cp >> 18);
		out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[(*o)++] = (char)(0x80 | (cp & 0x3F));
	}
}

/* Decodes the JSON string body [p, e) (between the quotes, already
 * checked by jq_string) into <out> (<size> bytes), code points as UTF-8.
 * Returns the length, or -1 on a lone surrogate or when it does not fit. */
static long jq_decode(const char *p, const char *e, char *out, size_t size)
{
	size_t o = 0;

	for (; p < e; p++) {
		uint32_t cp, lo;

		if (*p != '\\') {
			if (o >= size)
				return -1;
			out[o++] = *p;
			continue;
		}
		if (o + 4 > size)
			return -1;
		switch (*++p) {
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			jq_hex4(p + 1, e, &cp);
			p += 4;
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				return -1;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (e - p < 7 || p[1] != '\\' || p[2] != 'u' ||
				    !jq_hex4(p + 3, e, &lo) || lo < 0xDC00 || lo > 0xDFFF)
					return -1;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				p += 6;
			}
			jq_utf8(out, &o, cp);
			break;
		default: out[o++] = *p; break;   /* " \ / */
		}
	}
	return (long)o;
}

/* Whether the raw member key <k> (<kl> bytes as written, escapes kept)
 * names step <st>: compared as is, or decoded when it holds an escape. */
static int jq_key_eq(const char *k, size_t kl, const struct jq_step *st)
{
	char buf[JQ_KEY_MAX];
	long n;

	if (!memchr(k, '\\', kl))
		return kl == st->klen && memcmp(k, st->key, kl) == 0;
	n = jq_decode(k, k + kl, buf, sizeof(buf));
	return n >= 0 && (size_t)n == st->klen && memcmp(buf, st->key, st->klen) == 0;
}

/* Follows <st> from the value at <p>: the member's or element's value
 * start, or NULL when absent or malformed. */
static const char *jq_step(const char *p, const char *end, const struct jq_step *st)
{
	const char *k;
	size_t kl;
	long i = 0;

	if (p >= end || *p != (st->key ? '{' : '['))
		return NULL;
	p = jq_ws(p + 1, end);
	if (p < end && *p == (st->key ? '}' : ']'))
		return NULL;
	for (;;) {
		if (st->key) {
			if (!(p = jq_member(p, end, &k, &kl)))
				return NULL;
			if (jq_key_eq(k, kl, st))
				return p;
		} else if (i++ == st->idx) {
			return p;
		}
		if (!(p = jq_skip(p, end)))
			return NULL;
		p = jq_ws(p, end);
		if (p >= end || *p != ',')
			return NULL;   /* end of the container (or malformed): absent */
		p = jq_ws(p + 1, end);
	}
}

int json_path_find(const struct json_path *jp, const char *p, size_t len, const char **vs,
                   const char **ve)
{
	const char *end = p + len;

	p = jq_ws(p, end);
	for (int i = 0; i < jp->n && p; i++)
		p = jq_step(p, end, &jp->st[i]);
	if (!p || p >= end)
		return 0;
	if (*p == '{' || *p == '[')
		*ve = jq_skip(p, end);
	else
		*ve = jq_scalar(p, end);
	*vs = p;
	return *ve != NULL;
}

int json_query_smp(const struct json_path *jp, int as_int, const char *txt, size_t len,
                   struct sample *smp)
{
	const char *p, *e;
	char num[64], *out;
	long n;

	if (!json_path_find(jp, txt, len, &p, &e))
		return 0;
	if (*p == 't' || *p == 'f')
		return smp_set_bool(smp, *p == 't');
	if (*p == '"') {
		out = smp_scratch_get();
		n = jq_decode(p + 1, e - 1, out, SMP_SCRATCH_SIZE);
		if (n < 0)
			return 0;
		smp->type = SMP_T_STR;
		smp->flags &= ~SMP_F_CONST;
		smp->u.str.p = out;
		smp->u.str.len = (size_t)n;
		return 1;
	}
	if (*p != '-' && (*p < '0' || *p > '9'))
		return 0;   /* null, object, array */
	if ((size_t)(e - p) >= sizeof(num))
		return 0;
	if (as_int) {
		const int64_t max = ((int64_t)1 << 53) - 1;
		int neg = *p == '-';
		int64_t v = 0;

		for (p += neg; p < e && *p >= '0' && *p <= '9'; p++) {
			v = v * 10 + (*p - '0');
			if (v > max)
				return 0;
		}
		return smp_set_int(smp, neg ? -v : v);
	}
	memcpy(num, p, (size_t)(e - p));
	num[e - p] = '\0';
	out = smp_scratch_get();
	n = snprintf(out, SMP_SCRATCH_SIZE, "%g", strtod(num, NULL));
	smp->type = SMP_T_STR;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = out;
	smp->u.str.len = (size_t)n;
	return 1;
}

int json_query_check_args(struct smp_arg *a, char **err)
{
	struct json_path *jp;

	if (a[1].type == ARGT_STR && strcmp(a[1].str, "int") != 0) {
		*err = str_fmt("unknown output type '%s' (expects 'int')", a[1].str);
		return -1;
	}
	a[1].sint = a[1].type == ARGT_STR;
	if (json_path_compile(a[0].str, a[0].len, &jp, err) == -1)
		return -1;
	a[0].ptr = jp;
	a[0].release = json_path_free;
	return 0;
}

static int conv_check_json_query(struct smp_arg *a, char **err, const void *priv)
{
	return json_query_check_args(a, err);
}

/* json_query(<path>[,int]): the value at <path> in the JSON text of the
 * sample (json_query_smp()). */
static int conv_json_query(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return json_query_smp(a[0].ptr, (int)a[1].sint, smp->u.str.p, smp->u.str.len, smp);
}

static const struct smp_conv_kw json_convs[] = {
	{ "json_query", conv_json_query, { ARGT_STR, ARGT_STR }, 1, SMP_T_STR, SMP_T_ANY,
	  conv_check_json_query, NULL },
};

SLUICE_INIT(json_register)
{
	smp_register_convs(json_convs, ARRAY_SIZE(json_convs));
}
