/* Sample converters (sample.h): case, length and slicing of strings, hex
 * and base64, URL decoding, IP masks, arithmetic and hashes. Each one
 * writes into a rotating scratch buffer, never allocating. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/lb.h>
#include <sluice/sample.h>
#include <sluice/str.h>

/* Makes the string of <smp> writable (copied to scratch when constant). */
static char *smp_make_rw(struct sample *smp)
{
	char *buf;

	if (!(smp->flags & SMP_F_CONST))
		return (char *)smp->u.str.p;
	buf = smp_scratch_get();
	smp->u.str.len = MIN(smp->u.str.len, SMP_SCRATCH_SIZE);
	memcpy(buf, smp->u.str.p, smp->u.str.len);
	smp->u.str.p = buf;
	smp->flags &= ~SMP_F_CONST;
	return buf;
}

static int smp_out_str(struct sample *smp, const char *p, size_t len, enum smp_type t)
{
	smp->type = t;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = p;
	smp->u.str.len = len;
	return 1;
}

static int smp_out_int(struct sample *smp, int64_t v)
{
	smp->type = SMP_T_SINT;
	smp->u.sint = v;
	return 1;
}

static int conv_lower(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	char *p = smp_make_rw(smp);

	for (size_t i = 0; i < smp->u.str.len; i++)
		p[i] = (char)tolower((unsigned char)p[i]);
	return 1;
}

static int conv_upper(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	char *p = smp_make_rw(smp);

	for (size_t i = 0; i < smp->u.str.len; i++)
		p[i] = (char)toupper((unsigned char)p[i]);
	return 1;
}

static int conv_length(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, (int64_t)smp->u.str.len);
}

/* bytes(offset[,length]) */
static int conv_bytes(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	size_t off = a[0].sint < 0 ? 0 : (size_t)a[0].sint;

	if (off >= smp->u.str.len) {
		smp->u.str.len = 0;
		return 1;
	}
	smp->u.str.p += off;
	smp->u.str.len -= off;
	if (a[1].type == ARGT_SINT && a[1].sint >= 0 && (size_t)a[1].sint < smp->u.str.len)
		smp->u.str.len = (size_t)a[1].sint;
	return 1;
}

static int conv_check_idx(struct smp_arg *a, char **err, const void *priv)
{
	if (a[0].sint == 0) {
		*err = str_fmt("field index must not be 0 (1 is the first, -1 the last)");
		return -1;
	}
	if (!a[1].len) {
		*err = str_fmt("the delimiter list must not be empty");
		return -1;
	}
	return 0;
}

/* Splits the string of <smp> at any of the <delims>; when <word>, empty
 * tokens do not count (word()), else they do (field()). Keeps tokens
 * <idx> to <idx>+<count>-1 (negative <idx>: from the end; <count> 0: all
 * the rest). */
static int conv_split(const struct smp_arg *a, struct sample *smp, int word)
{
	const char *p = smp->u.str.p, *end = p + smp->u.str.len;
	const char *delims = a[1].str;
	struct { const char *s, *e; } tok[256];
	int n = 0, idx = (int)a[0].sint, count = a[2].type == ARGT_SINT ? (int)a[2].sint : 1;

	for (;;) {
		const char *s = p;

		while (p < end && !memchr(delims, *p, a[1].len))
			p++;
		if (!(word && p == s) && n < (int)ARRAY_SIZE(tok)) {
			tok[n].s = s;
			tok[n].e = p;
			n++;
		}
		if (p >= end)
			break;
		p++;
	}
	if (idx < 0)
		idx = n + idx + 1;
	if (idx < 1 || idx > n) {
		smp->u.str.len = 0;
		return 1;
	}
	if (count <= 0 || idx - 1 + count > n)
		count = n - idx + 1;
	smp->u.str.p = tok[idx - 1].s;
	smp->u.str.len = (size_t)(tok[idx - 1 + count - 1].e - tok[idx - 1].s);
	return 1;
}

static int conv_field(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_split(a, smp, 0);
}

static int conv_word(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_split(a, smp, 1);
}

static int conv_hex(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	static const char hx[] = "0123456789ABCDEF";
	char *out = smp_scratch_get();
	size_t n = MIN(smp->u.str.len, SMP_SCRATCH_SIZE / 2);

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[(unsigned char)smp->u.str.p[i] >> 4];
		out[2 * i + 1] = hx[(unsigned char)smp->u.str.p[i] & 15];
	}
	return smp_out_str(smp, out, 2 * n, SMP_T_STR);
}

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Base64 of <smp> with alphabet <abc>, '=' padding when <pad> (base64) or
 * none (ub64enc, RFC 4648 section 5). */
static int b64_encode(struct sample *smp, const char *abc, int pad)
{
	const unsigned char *in = (const unsigned char *)smp->u.str.p;
	size_t len = MIN(smp->u.str.len, SMP_SCRATCH_SIZE / 4 * 3 - 3), o = 0;
	char *out = smp_scratch_get();

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[o++] = abc[v >> 18];
		out[o++] = abc[(v >> 12) & 63];
		if (i + 1 < len || pad)
			out[o++] = i + 1 < len ? abc[(v >> 6) & 63] : '=';
		if (i + 2 < len || pad)
			out[o++] = i + 2 < len ? abc[v & 63] : '=';
	}
	return smp_out_str(smp, out, o, SMP_T_STR);
}

long smp_b64_decode(const char *in, size_t len, char *out, size_t size, int url, int pad)
{
	const char *abc = url ? b64_url : b64_std;
	size_t o = 0, n = len;
	uint32_t acc = 0;
	int bits = 0;

	if (pad != SMP_B64_PAD_NO)   /* '=' only at the end, at most two */
		for (int i = 0; i < 2 && n && in[n - 1] == '='; i++)
			n--;
	if (pad == SMP_B64_PAD_YES ? len % 4 != 0 : n % 4 == 1)
		return -1;
	if (pad == SMP_B64_PAD_OPT && n != len && len % 4 != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *c = in[i] ? memchr(abc, in[i], 64) : NULL;

		if (!c)
			return -1;
		acc = (acc << 6) | (uint32_t)(c - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= size)
				return -1;
			out[o++] = (char)(acc >> bits);
		}
	}
	return (long)o;
}

/* Decodes <smp> (base64 with '=' padding, or base64url without) into the
 * scratch area. */
static int b64_decode(struct sample *smp, int url)
{
	char *out = smp_scratch_get();
	long n = smp_b64_decode(smp->u.str.p, smp->u.str.len, out, SMP_SCRATCH_SIZE, url,
				url ? SMP_B64_PAD_NO : SMP_B64_PAD_YES);

	return n < 0 ? 0 : smp_out_str(smp, out, (size_t)n, SMP_T_BIN);
}

static int conv_base64(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return b64_encode(smp, b64_std, 1);
}

static int conv_b64dec(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return b64_decode(smp, 0);
}

static int conv_ub64enc(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return b64_encode(smp, b64_url, 0);
}

static int conv_ub64dec(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return b64_decode(smp, 1);
}


/* url_dec([in_form]): %XX sequences, and '+' as a space when <in_form> is
 * 1 or when the string holds a query ('?' seen) and <in_form> is absent. */
static int conv_url_dec(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const char *in = smp->u.str.p;
	size_t len = smp->u.str.len, o = 0;
	char *out = smp_scratch_get();
	int plus = a[0].type == ARGT_SINT ? a[0].sint != 0 : 0;

	len = MIN(len, SMP_SCRATCH_SIZE);
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '%') {
			int h, l;

			if (i + 2 >= len)
				return 0;
			h = str_hex_digit((unsigned char)in[i + 1]);
			l = str_hex_digit((unsigned char)in[i + 2]);
			if (h < 0 || l < 0)
				return 0;
			out[o++] = (char)(h * 16 + l);
			i += 2;
		} else if (in[i] == '?' && a[0].type != ARGT_SINT) {
			plus = 1;
			out[o++] = in[i];
		} else
			out[o++] = in[i] == '+' && plus ? ' ' : in[i];
	}
	return smp_out_str(smp, out, o, SMP_T_STR);
}

/* ipmask(mask4[,mask6]): the masks are parsed by the check into args. */
static int conv_check_ipmask(struct smp_arg *a, char **err, const void *priv)
{
	for (int i = 0; i < 2; i++) {
		char *e;
		long bits;

		if (!a[i].str)
			continue;
		bits = strtol(a[i].str, &e, 10);
		if (*e == '\0' && e != a[i].str && bits >= 0 && bits <= (i ? 128 : 32)) {
			a[i].sint = bits;
			continue;
		}
		if (i == 0) {
			struct in_addr m;

			if (inet_pton(AF_INET, a[i].str, &m) == 1) {
				uint32_t v = ntohl(m.s_addr);

				a[i].sint = __builtin_popcount(v);
				if (v && (uint32_t)(v << a[i].sint) != 0) {
					*err = str_fmt("'%s' is not a contiguous netmask",
						       a[i].str);
					return -1;
				}
				continue;
			}
		}
		*err = str_fmt("invalid %s mask '%s'", i ? "IPv6" : "IPv4", a[i].str);
		return -1;
	}
	return 0;
}

static int conv_ipmask(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	if (smp->type == SMP_T_IPV4) {
		int bits = (int)a[0].sint;
		uint32_t m = bits ? 0xffffffffu << (32 - bits) : 0;

		smp->u.ipv4.s_addr &= htonl(m);
		return 1;
	}
	if (smp->type == SMP_T_IPV6) {
		int bits = a[1].str ? (int)a[1].sint : 128;

		if (!a[1].str)
			return 0;   /* HAProxy: no IPv6 mask, no result */
		for (int i = 0; i < 16; i++) {
			int b = bits - i * 8;

			smp->u.ipv6.s6_addr[i] &= b >= 8 ? 0xff : b <= 0 ? 0 :
						  (uint8_t)(0xff << (8 - b));
		}
		return 1;
	}
	return 0;
}

static int conv_add(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, (int64_t)((uint64_t)smp->u.sint + (uint64_t)a[0].sint));
}

static int conv_sub(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, (int64_t)((uint64_t)smp->u.sint - (uint64_t)a[0].sint));
}

static int conv_mul(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, (int64_t)((uint64_t)smp->u.sint * (uint64_t)a[0].sint));
}

/* div/mod by 0 give the largest integer and 0, as HAProxy does. */
static int conv_div(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	if (!a[0].sint)
		return smp_out_int(smp, INT64_MAX);
	if (a[0].sint == -1 && smp->u.sint == INT64_MIN)
		return smp_out_int(smp, INT64_MAX);
	return smp_out_int(smp, smp->u.sint / a[0].sint);
}

static int conv_mod(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	if (!a[0].sint || a[0].sint == -1)
		return smp_out_int(smp, 0);
	return smp_out_int(smp, smp->u.sint % a[0].sint);
}

static int conv_neg(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, (int64_t)(0 - (uint64_t)smp->u.sint));
}

static int conv_and(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, smp->u.sint & a[0].sint);
}

static int conv_or(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, smp->u.sint | a[0].sint);
}

static int conv_xor(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, smp->u.sint ^ a[0].sint);
}

/* The hashes are the load balancer's (lb_hash), so that a converter and a
 * "balance hdr(...)" agree; a non-zero argument applies the avalanche. */
static int conv_hash(const struct smp_arg *a, struct sample *smp, enum lb_hash_fn fn)
{
	int avalanche = a[0].type == ARGT_SINT && a[0].sint;

	return smp_out_int(smp, lb_hash(fn, avalanche, smp->u.str.p, smp->u.str.len));
}

static int conv_sdbm(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_hash(a, smp, LB_H_SDBM);
}

static int conv_djb2(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_hash(a, smp, LB_H_DJB2);
}

static int conv_crc32(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_hash(a, smp, LB_H_CRC32);
}

/* crc32c([avalanche]): CRC-32C (Castagnoli), unsigned 32 bits. */
static int conv_crc32c(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_hash(a, smp, LB_H_CRC32C);
}

static int conv_wt6(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return conv_hash(a, smp, LB_H_WT6);
}

/* hex2i: "2a" -> 42; pairs of hex digits, signed 64 bits; anything that is
 * not hex gives 0, as HAProxy does. */
static int conv_hex2i(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	uint64_t v = 0;
	size_t len = smp->u.str.len;

	if (len & 1 || len > 16)
		return smp_out_int(smp, 0);
	for (size_t i = 0; i < len; i++) {
		int d = str_hex_digit((unsigned char)smp->u.str.p[i]);

		if (d < 0)
			return smp_out_int(smp, 0);
		v = (v << 4) | (uint64_t)d;
	}
	return smp_out_int(smp, (int64_t)v);
}

static int conv_bool(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = smp->u.sint != 0;
	return 1;
}

static int conv_not(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = smp->u.sint == 0;
	return 1;
}

static int conv_cpl(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return smp_out_int(smp, ~smp->u.sint);
}

/* be2dec(<separator>,<chunk_size>[,<truncate>]) and be2hex([<separator>
 * [,<chunk_size>[,<truncate>]]]): chunk_size is 1 to 8 for be2dec, and
 * positive for be2hex as soon as a separator or truncate asks for chunks. */
static int conv_check_be2dec(struct smp_arg *a, char **err, const void *priv)
{
	if (a[1].sint < 1 || a[1].sint > 8) {
		*err = str_fmt("chunk_size must be between 1 and 8 (got %lld)", (long long)a[1].sint);
		return -1;
	}
	return 0;
}

static int conv_check_be2hex(struct smp_arg *a, char **err, const void *priv)
{
	if (a[1].type == ARGT_SINT && a[1].sint <= 0) {
		*err = str_fmt("chunk_size must be positive (got %lld)", (long long)a[1].sint);
		return -1;
	}
	if (a[1].type != ARGT_SINT && ((a[0].str && a[0].len) || a[2].sint)) {
		*err = str_fmt("a separator or truncate needs a positive chunk_size");
		return -1;
	}
	return 0;
}

/* One unsigned big-endian number per <chunk_size> input bytes, in decimal,
 * <separator> between them; the last partial chunk is dropped with
 * <truncate>. Output that would not fit is cut at a chunk, as HAProxy
 * stops where its buffer ends. */
static int conv_be2dec(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	const unsigned char *p = (const unsigned char *)smp->u.str.p;
	size_t len = smp->u.str.len, cs = (size_t)a[1].sint, o = 0;
	char *out = smp_scratch_get();

	if (a[2].sint)
		len -= len % cs;
	for (size_t i = 0; i < len; ) {
		char num[24];
		uint64_t v = 0;
		int n;

		size_t sep = i ? a[0].len : 0;

		for (size_t k = 0; k < cs && i < len; k++)
			v = (v << 8) | p[i++];
		n = snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
		if (sep + (size_t)n > SMP_SCRATCH_SIZE - o)
			break;
		smp_scratch_put(out, &o, a[0].str, sep);
		smp_scratch_put(out, &o, num, (size_t)n);
	}
	return smp_out_str(smp, out, o, SMP_T_STR);
}

/* Two upper-case hex digits per byte, <separator> every <chunk_size>
 * bytes, the last partial chunk dropped with <truncate>. */
static int conv_be2hex(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	static const char hx[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)smp->u.str.p;
	size_t len = smp->u.str.len, cs = a[1].type == ARGT_SINT ? (size_t)a[1].sint : 0, o = 0;
	char *out = smp_scratch_get();

	if (cs && a[2].sint)
		len -= len % cs;
	for (size_t i = 0; i < len; i++) {
		char d[2] = { hx[p[i] >> 4], hx[p[i] & 15] };

		if (cs && i && i % cs == 0 && a[0].str && !smp_scratch_put(out, &o, a[0].str, a[0].len))
			break;
		if (!smp_scratch_put(out, &o, d, 2))
			break;
	}
	return smp_out_str(smp, out, o, SMP_T_STR);
}

/* cut_crlf: the string up to its first CR or LF. */
static int conv_cut_crlf(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	for (size_t i = 0; i < smp->u.str.len; i++)
		if (smp->u.str.p[i] == '\r' || smp->u.str.p[i] == '\n') {
			smp->u.str.len = i;
			break;
		}
	return 1;
}

/* even, odd: booleans on the lowest bit. */
static int conv_even(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = !(smp->u.sint & 1);
	return 1;
}

static int conv_odd(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = smp->u.sint & 1;
	return 1;
}

/* htonl: the integer cut to 32 unsigned bits, as 4 bytes in network order. */
static int conv_htonl(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	unsigned char *out = (unsigned char *)smp_scratch_get();
	uint32_t v = (uint32_t)smp->u.sint;

	out[0] = (unsigned char)(v >> 24);
	out[1] = (unsigned char)(v >> 16);
	out[2] = (unsigned char)(v >> 8);
	out[3] = (unsigned char)v;
	return smp_out_str(smp, (const char *)out, 4, SMP_T_BIN);
}

static const struct smp_conv_kw smp_convs[] = {
	{ "lower",   conv_lower,   { 0 }, 0, SMP_T_STR, SMP_T_STR, NULL, NULL },
	{ "upper",   conv_upper,   { 0 }, 0, SMP_T_STR, SMP_T_STR, NULL, NULL },
	{ "length",  conv_length,  { 0 }, 0, SMP_T_STR, SMP_T_SINT, NULL, NULL },
	{ "bytes",   conv_bytes,   { ARGT_SINT, ARGT_SINT }, 1, SMP_T_BIN, SMP_T_BIN, NULL, NULL },
	{ "field",   conv_field,   { ARGT_SINT, ARGT_STR, ARGT_SINT }, 2, SMP_T_STR, SMP_T_STR,
	  conv_check_idx, NULL },
	{ "word",    conv_word,    { ARGT_SINT, ARGT_STR, ARGT_SINT }, 2, SMP_T_STR, SMP_T_STR,
	  conv_check_idx, NULL },
	{ "hex",     conv_hex,     { 0 }, 0, SMP_T_BIN, SMP_T_STR, NULL, NULL },
	{ "base64",  conv_base64,  { 0 }, 0, SMP_T_BIN, SMP_T_STR, NULL, NULL },
	{ "b64dec",  conv_b64dec,  { 0 }, 0, SMP_T_STR, SMP_T_BIN, NULL, NULL },
	{ "url_dec", conv_url_dec, { ARGT_SINT }, 0, SMP_T_STR, SMP_T_STR, NULL, NULL },
	{ "ipmask",  conv_ipmask,  { ARGT_STR, ARGT_STR }, 1, SMP_T_ADDR, SMP_T_ADDR,
	  conv_check_ipmask, NULL },
	{ "add",     conv_add,     { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "sub",     conv_sub,     { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "mul",     conv_mul,     { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "div",     conv_div,     { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "mod",     conv_mod,     { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "neg",     conv_neg,     { 0 }, 0, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "and",     conv_and,     { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "or",      conv_or,      { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "xor",     conv_xor,     { ARGT_SINT }, 1, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "sdbm",    conv_sdbm,    { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
	{ "djb2",    conv_djb2,    { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
	{ "crc32",   conv_crc32,   { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
	{ "crc32c",  conv_crc32c,  { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
	{ "wt6",     conv_wt6,     { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
	{ "ub64enc", conv_ub64enc, { 0 }, 0, SMP_T_BIN, SMP_T_STR, NULL, NULL },
	{ "ub64dec", conv_ub64dec, { 0 }, 0, SMP_T_STR, SMP_T_BIN, NULL, NULL },
	{ "hex2i",   conv_hex2i,   { 0 }, 0, SMP_T_STR, SMP_T_SINT, NULL, NULL },
	{ "bool",    conv_bool,    { 0 }, 0, SMP_T_SINT, SMP_T_BOOL, NULL, NULL },
	{ "not",     conv_not,     { 0 }, 0, SMP_T_SINT, SMP_T_BOOL, NULL, NULL },
	{ "cpl",     conv_cpl,     { 0 }, 0, SMP_T_SINT, SMP_T_SINT, NULL, NULL },
	{ "be2dec",  conv_be2dec,  { ARGT_STR, ARGT_SINT, ARGT_SINT }, 2, SMP_T_BIN, SMP_T_STR,
	  conv_check_be2dec, NULL },
	{ "be2hex",  conv_be2hex,  { ARGT_STR, ARGT_SINT, ARGT_SINT }, 0, SMP_T_BIN, SMP_T_STR,
	  conv_check_be2hex, NULL },
	{ "cut_crlf", conv_cut_crlf, { 0 }, 0, SMP_T_STR, SMP_T_STR, NULL, NULL },
	{ "even",    conv_even,    { 0 }, 0, SMP_T_SINT, SMP_T_BOOL, NULL, NULL },
	{ "odd",     conv_odd,     { 0 }, 0, SMP_T_SINT, SMP_T_BOOL, NULL, NULL },
	{ "htonl",   conv_htonl,   { 0 }, 0, SMP_T_SINT, SMP_T_BIN, NULL, NULL },
};

SLUICE_INIT(conv_register)
{
	smp_register_convs(smp_convs, ARRAY_SIZE(smp_convs));
}
