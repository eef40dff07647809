/* Sample converters on text (sample.h): URL and JSON escaping, trimming,
 * dates (http_date, ltime, utime), iif, regsub and language
 * (Accept-Language q-values); json_query is in json.c. Like conv.c, each one
 * writes into a rotating scratch buffer and never allocates per call. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef USE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/str.h>

static int out_str(struct sample *smp, const char *p, size_t len)
{
	smp->type = SMP_T_STR;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = p;
	smp->u.str.len = len;
	return 1;
}

/* ---- url_enc ---- */

static int conv_check_url_enc(struct smp_arg *a, char **err, const void *priv)
{
	if (a[0].type == ARGT_STR && strcmp(a[0].str, "query") != 0) {
		*err = str_fmt("unknown encoding type '%s' (expects 'query')", a[0].str);
		return -1;
	}
	return 0;
}

/* url_enc([query]): every byte but the unreserved characters of RFC 3986
 * (letters, digits, "-._~") as %XX. Fails when the result does not fit. */
static int conv_url_enc(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	static const char hx[] = "0123456789ABCDEF";
	char *out = smp_scratch_get();
	size_t o = 0;

	for (size_t i = 0; i < smp->u.str.len; i++) {
		unsigned char c = (unsigned char)smp->u.str.p[i];

		if (o + 3 > SMP_SCRATCH_SIZE)
			return 0;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hx[c >> 4];
			out[o++] = hx[c & 15];
		}
	}
	return out_str(smp, out, o);
}

/* ---- json ---- */

enum json_in { JSON_ASCII, JSON_UTF8, JSON_UTF8S };

static int conv_check_json(struct smp_arg *a, char **err, const void *priv)
{
	static const char *const names[] = { "ascii", "utf8", "utf8s", "utf8p", "utf8ps" };
	static const int modes[] = { JSON_ASCII, JSON_UTF8, JSON_UTF8S, JSON_UTF8, JSON_UTF8S };

	a[0].sint = JSON_ASCII;
	if (a[0].type != ARGT_STR)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(a[0].str, names[i]) == 0) {
			a[0].sint = modes[i];
			return 0;
		}
	*err = str_fmt("unknown input code '%s' (expects ascii, utf8, utf8s, utf8p or utf8ps)",
		       a[0].str);
	return -1;
}

/* Decodes one UTF-8 character at p[0..len): its code point in <*cp> and
 * its length, or 0 when invalid (short, bad continuation, overlong, a
 * surrogate or beyond U+10FFFF). */
static size_t utf8_decode(const unsigned char *p, size_t len, uint32_t *cp)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 :
		   (p[0] & 0xF8) == 0xF0 ? 4 : 0;
	uint32_t v;

	if (!n || n > len)
		return 0;
	v = n == 1 ? p[0] : p[0] & (0x7F >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3F);
	}
	if (v < min[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

/* Appends "\uXXXX" for <v> (< 0x10000) at out[*o]. */
static void json_u(char *out, size_t *o, uint32_t v)
{
	static const char hx[] = "0123456789abcdef";

	memcpy(out + *o, "\\u", 2);
	for (int k = 0; k < 4; k++)
		out[*o + 2 + (size_t)k] = hx[(v >> (12 - 4 * k)) & 15];
	*o += 6;
}

/* json([input-code]): the string escaped for a JSON string literal, in
 * ASCII: quotes, backslashes, slashes and control characters escaped,
 * anything beyond ASCII as \u escapes (surrogate pairs above U+FFFF).
 * "ascii" takes each byte as a character; "utf8" fails on invalid UTF-8,
 * "utf8s" skips it ("utf8p"/"utf8ps" behave as these two). */
static int conv_json(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const unsigned char *p = (const unsigned char *)smp->u.str.p;
	size_t len = smp->u.str.len, o = 0, i = 0;
	char *out = smp_scratch_get();

	while (i < len) {
		uint32_t cp = p[i];
		size_t n = 1;

		if (o + 12 > SMP_SCRATCH_SIZE)
			return 0;
		if (a[0].sint != JSON_ASCII && p[i] >= 0x80) {
			n = utf8_decode(p + i, len - i, &cp);
			if (!n) {
				if (a[0].sint == JSON_UTF8)
					return 0;
				i++;
				continue;
			}
		}
		i += n;
		switch (cp) {
		case '"':  memcpy(out + o, "\\\"", 2); o += 2; break;
		case '\\': memcpy(out + o, "\\\\", 2); o += 2; break;
		case '/':  memcpy(out + o, "\\/", 2); o += 2; break;
		case '\b': memcpy(out + o, "\\b", 2); o += 2; break;
		case '\f': memcpy(out + o, "\\f", 2); o += 2; break;
		case '\n': memcpy(out + o, "\\n", 2); o += 2; break;
		case '\r': memcpy(out + o, "\\r", 2); o += 2; break;
		case '\t': memcpy(out + o, "\\t", 2); o += 2; break;
		default:
			if (cp >= 0x20 && cp < 0x7F) {
				out[o++] = (char)cp;
			} else if (cp < 0x10000) {
				json_u(out, &o, cp);
			} else {
				json_u(out, &o, 0xD800 + ((cp - 0x10000) >> 10));
				json_u(out, &o, 0xDC00 + ((cp - 0x10000) & 0x3FF));
			}
		}
	}
	return out_str(smp, out, o);
}

/* ---- ltrim, rtrim ---- */

static int conv_ltrim(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	while (smp->u.str.len && memchr(a[0].str, smp->u.str.p[0], a[0].len)) {
		smp->u.str.p++;
		smp->u.str.len--;
	}
	return 1;
}

static int conv_rtrim(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	while (smp->u.str.len && memchr(a[0].str, smp->u.str.p[smp->u.str.len - 1], a[0].len))
		smp->u.str.len--;
	return 1;
}

/* ---- iif ---- */

/* iif(<true>,<false>): one of two strings by a boolean. */
static int conv_iif(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const struct smp_arg *v = smp->u.sint ? &a[0] : &a[1];

	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = v->str;
	smp->u.str.len = v->len;
	return 1;
}

/* ---- dates ---- */

/* Adds offset <a> (in <unit> per second, 1 for seconds) to the date of
 * <smp>; fails when the result does not make a time_t. */
static int date_of(const struct sample *smp, const struct smp_arg *off, int64_t per_sec,
                   time_t *t)
{
	int64_t v = smp->u.sint / per_sec;

	if (off->type == ARGT_SINT)
		v += off->sint;
	if (v < 0 || v > (int64_t)253402300799)   /* 9999-12-31 */
		return 0;
	*t = (time_t)v;
	return 1;
}

static int conv_check_http_date(struct smp_arg *a, char **err, const void *priv)
{
	a[1].sint = 1;
	if (a[1].type != ARGT_STR)
		return 0;
	if (strcmp(a[1].str, "s") == 0)
		return 0;
	if (strcmp(a[1].str, "ms") == 0)
		a[1].sint = 1000;
	else if (strcmp(a[1].str, "us") == 0)
		a[1].sint = 1000000;
	else {
		*err = str_fmt("unknown unit '%s' (expects s, ms or us)", a[1].str);
		return -1;
	}
	return 0;
}

/* http_date([offset[,unit]]): an IMF-fixdate ("Sat, 21 Nov 2026 10:00:00
 * GMT") from a date in seconds (or ms/us), plus <offset> seconds. */
static int conv_http_date(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	static const char day[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char mon[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	char *out = smp_scratch_get();
	struct tm tm;
	time_t t;
	int n;

	if (!date_of(smp, &a[0], a[1].sint ? a[1].sint : 1, &t) || !gmtime_r(&t, &tm))
		return 0;
	n = snprintf(out, SMP_SCRATCH_SIZE, "%s, %02d %s %04d %02d:%02d:%02d GMT",
		     day[tm.tm_wday], tm.tm_mday, mon[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
		     tm.tm_min, tm.tm_sec);
	return out_str(smp, out, (size_t)n);
}

/* ltime(<format>[,<offset>]) and utime(): strftime() in local time / UTC. */
static int conv_time(const struct smp_arg *a, struct sample *smp, int local)
{
	char *out = smp_scratch_get();
	struct tm tm;
	time_t t;
	size_t n;

	if (!date_of(smp, &a[1], 1, &t) || !(local ? localtime_r(&t, &tm) : gmtime_r(&t, &tm)))
		return 0;
	n = strftime(out, SMP_SCRATCH_SIZE, a[0].str, &tm);
	return out_str(smp, out, n);
}

static int conv_ltime(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_time(a, smp, 1);
}

static int conv_utime(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_time(a, smp, 0);
}

/* ---- regsub ---- */

#ifdef USE_PCRE2

/* What regsub() compiles once: the pattern, its match data, "g". */
struct regsub {
	pcre2_code       *re;
	pcre2_match_data *md;
	int               global;
};

static void regsub_release(void *ptr)
{
	struct regsub *rs = ptr;

	pcre2_match_data_free(rs->md);
	pcre2_code_free(rs->re);
	free(rs);
}

static int conv_check_regsub(struct smp_arg *a, char **err, const void *priv)
{
	uint32_t opts = 0;
	struct regsub *rs;
	PCRE2_SIZE off;
	int ec;

	if (a[2].type == ARGT_STR)
		for (const char *f = a[2].str; *f; f++) {
			if (*f == 'i')
				opts |= PCRE2_CASELESS;
			else if (*f != 'g') {
				*err = str_fmt("unknown regsub flag '%c' (expects 'i' or 'g')", *f);
				return -1;
			}
		}
	rs = xcalloc(1, sizeof(*rs));
	rs->global = a[2].type == ARGT_STR && strchr(a[2].str, 'g');
	rs->re = pcre2_compile((PCRE2_SPTR)a[0].str, a[0].len, opts, &ec, &off, NULL);
	if (!rs->re) {
		char msg[256];

		pcre2_get_error_message(ec, (PCRE2_UCHAR *)msg, sizeof(msg));
		*err = str_fmt("invalid regex '%s' at offset %zu: %s", a[0].str, (size_t)off, msg);
		free(rs);
		return -1;
	}
	pcre2_jit_compile(rs->re, PCRE2_JIT_COMPLETE);
	rs->md = pcre2_match_data_create_from_pattern(rs->re, NULL);
	a[0].ptr = rs;
	a[0].release = regsub_release;
	return 0;
}

/* regsub(<regex>,<subst>[,<flags>]): replaces the first match (every one
 * with "g"); "\1".."\9" in <subst> stand for the groups. */
static int conv_regsub(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const struct regsub *rs = a[0].ptr;
	const char *in = smp->u.str.p, *sub = a[1].str;
	size_t len = smp->u.str.len, pos = 0, o = 0;
	char *out = smp_scratch_get();

	while (pos <= len) {
		PCRE2_SIZE *ov;
		int rc = pcre2_match(rs->re, (PCRE2_SPTR)in, len, pos, 0, rs->md, NULL);

		if (rc < 0)
			break;
		ov = pcre2_get_ovector_pointer(rs->md);
		if (!smp_scratch_put(out, &o, in + pos, ov[0] - pos))
			return 0;
		for (size_t k = 0; k < a[1].len; k++) {
			if (sub[k] == '\\' && k + 1 < a[1].len && sub[k + 1] >= '0' && sub[k + 1] <= '9') {
				int g = sub[++k] - '0';

				if (g < rc && ov[2 * g] != PCRE2_UNSET &&
				    !smp_scratch_put(out, &o, in + ov[2 * g], ov[2 * g + 1] - ov[2 * g]))
					return 0;
			} else if (!smp_scratch_put(out, &o, sub + k, 1)) {
				return 0;
			}
		}
		if (ov[1] == ov[0]) {   /* empty match: keep one byte and move on */
			if (ov[1] < len && !smp_scratch_put(out, &o, in + ov[1], 1))
				return 0;
			pos = ov[1] + 1;
		} else {
			pos = ov[1];
		}
		if (!rs->global)
			break;
	}
	if (pos < len && !smp_scratch_put(out, &o, in + pos, len - pos))
		return 0;
	return out_str(smp, out, o);
}
#endif

/* ---- language ---- */

static int conv_check_language(struct smp_arg *a, char **err, const void *priv)
{
	if (!a[0].len) {
		*err = str_fmt("expects a list of languages separated by ';'");
		return -1;
	}
	return 0;
}

/* The entry of the ';'-separated <list> equal to tok[0..len), or NULL. */
static const char *lang_find(const struct smp_arg *list, const char *tok, size_t len,
                             size_t *olen)
{
	const char *p = list->str, *end = p + list->len;

	while (p < end) {
		const char *e = memchr(p, ';', (size_t)(end - p));

		if (!e)
			e = end;
		if ((size_t)(e - p) == len && len && memcmp(p, tok, len) == 0) {
			*olen = len;
			return p;
		}
		p = e + 1;
	}
	return NULL;
}

/* A q-value: "0", "0.x" to "0.xxx", "1", "1.", "1.0" to "1.000", in
 * thousandths; -1 when malformed. */
static int lang_qvalue(const char *p, const char *end)
{
	int q, scale = 100;

	if (p >= end || (*p != '0' && *p != '1'))
		return -1;
	q = (*p++ - '0') * 1000;
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9' && scale; p++, scale /= 10)
			q += (*p - '0') * scale;
	return p == end && q <= 1000 ? q : -1;
}

static int is_lws(char c)
{
	return c == ' ' || c == '\t';
}

/* language(<list>[,<default>]): the entry of <list> that the Accept-Language
 * value of the sample prefers: the highest q-value (1 when absent; 0 or a
 * malformed q drops the value), the first one on a tie; a value with a
 * variant ("en-US") matches that entry, or else its base language ("en").
 * Case-sensitive. <default>, or no value, when none matches. */
static int conv_language(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const char *p = smp->u.str.p, *end = p + smp->u.str.len, *best = NULL;
	size_t best_len = 0;
	int best_q = 0;

	while (p < end) {
		const char *tok, *tend, *m;
		size_t ml;
		int q = 1000;

		while (p < end && (is_lws(*p) || *p == ','))
			p++;
		tok = p;
		while (p < end && *p != ';' && *p != ',' && !is_lws(*p))
			p++;
		tend = p;
		while (p < end && *p != ',') {   /* parameters */
			const char *ps, *pe;

			while (p < end && (is_lws(*p) || *p == ';'))
				p++;
			ps = p;
			while (p < end && *p != ';' && *p != ',')
				p++;
			pe = p;
			while (pe > ps && is_lws(pe[-1]))
				pe--;
			if (pe - ps >= 2 && (ps[0] == 'q' || ps[0] == 'Q') && ps[1] == '=')
				q = lang_qvalue(ps + 2, pe);
		}
		if (tend == tok || q <= best_q)
			continue;   /* empty, refused (q=0 or malformed), or not better */
		m = lang_find(&a[0], tok, (size_t)(tend - tok), &ml);
		if (!m) {
			const char *dash = memchr(tok, '-', (size_t)(tend - tok));

			if (dash)
				m = lang_find(&a[0], tok, (size_t)(dash - tok), &ml);
		}
		if (m) {
			best = m;
			best_len = ml;
			best_q = q;
		}
	}
	if (!best) {
		if (a[1].type != ARGT_STR)
			return 0;
		best = a[1].str;
		best_len = a[1].len;
	}
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = best;
	smp->u.str.len = best_len;
	return 1;
}

static const struct smp_conv_kw text_convs[] = {
	{ "url_enc",   conv_url_enc,   { ARGT_STR }, 0, SMP_T_STR, SMP_T_STR, conv_check_url_enc,
	  NULL },
	{ "json",      conv_json,      { ARGT_STR }, 0, SMP_T_STR, SMP_T_STR, conv_check_json,
	  NULL },
	{ "ltrim",     conv_ltrim,     { ARGT_STR }, 1, SMP_T_STR, SMP_T_STR, NULL, NULL },
	{ "rtrim",     conv_rtrim,     { ARGT_STR }, 1, SMP_T_STR, SMP_T_STR, NULL, NULL },
	{ "iif",       conv_iif,       { ARGT_STR, ARGT_STR }, 2, SMP_T_BOOL, SMP_T_STR, NULL,
	  NULL },
	{ "http_date", conv_http_date, { ARGT_SINT, ARGT_STR }, 0, SMP_T_SINT, SMP_T_STR,
	  conv_check_http_date, NULL },
	{ "ltime",     conv_ltime,     { ARGT_STR, ARGT_SINT }, 1, SMP_T_SINT, SMP_T_STR, NULL,
	  NULL },
	{ "language",  conv_language,  { ARGT_STR, ARGT_STR }, 1, SMP_T_STR, SMP_T_STR,
	  conv_check_language, NULL },
	{ "utime",     conv_utime,     { ARGT_STR, ARGT_SINT }, 1, SMP_T_SINT, SMP_T_STR, NULL,
	  NULL },
#ifdef USE_PCRE2
	{ "regsub",    conv_regsub,    { ARGT_STR, ARGT_STR, ARGT_STR }, 2, SMP_T_STR, SMP_T_STR,
	  conv_check_regsub, NULL },
#endif
};

SLUICE_INIT(conv_text_register)
{
	smp_register_convs(text_convs, ARRAY_SIZE(text_convs));
}
