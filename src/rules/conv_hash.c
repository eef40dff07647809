/* Hash converters (sample.h) that HAProxy 2.6 adds to those of conv.c:
 * the xxHash family xxh32, xxh64 and xxh3 (the 64-bit XXH3),
 * written from the public xxHash specification (doc/xxhash_spec.md of
 * the xxHash project) and checked against the reference implementation's
 * outputs in tests/unit/test_conv.c. No allocation, no table beyond the
 * specification's default secret. */
#include <stdint.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/sample.h>

/* ---- little-endian reads and rotations ---- */

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static uint32_t rol32(uint32_t v, unsigned n)
{
	return (v << n) | (v >> (32 - n));
}

static uint64_t rol64(uint64_t v, unsigned n)
{
	return (v << n) | (v >> (64 - n));
}

static uint32_t swap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

static uint64_t swap64(uint64_t v)
{
	return (uint64_t)swap32((uint32_t)v) << 32 | swap32((uint32_t)(v >> 32));
}

/* The 128-bit product of <a> and <b>, its two halves xored together. */
static uint64_t mul128_fold(uint64_t a, uint64_t b)
{
	uint64_t al = a & 0xffffffff, ah = a >> 32, bl = b & 0xffffffff, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffff) + (hl & 0xffffffff);
	uint64_t lo = (mid << 32) | (ll & 0xffffffff);
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	return lo ^ hi;
}

/* ---- XXH32 ---- */

#define P32_1 0x9E3779B1u
#define P32_2 0x85EBCA77u
#define P32_3 0xC2B2AE3Du
#define P32_4 0x27D4EB2Fu
#define P32_5 0x165667B1u

static uint32_t xxh32_round(uint32_t acc, uint32_t in)
{
	return rol32(acc + in * P32_2, 13) * P32_1;
}

static uint32_t xxh32(const unsigned char *p, size_t len, uint32_t seed)
{
	const unsigned char *end = p + len;
	uint32_t h;

	if (len >= 16) {
		uint32_t v1 = seed + P32_1 + P32_2, v2 = seed + P32_2, v3 = seed, v4 = seed - P32_1;

		for (; end - p >= 16; p += 16) {
			v1 = xxh32_round(v1, rd32(p));
			v2 = xxh32_round(v2, rd32(p + 4));
			v3 = xxh32_round(v3, rd32(p + 8));
			v4 = xxh32_round(v4, rd32(p + 12));
		}
		h = rol32(v1, 1) + rol32(v2, 7) + rol32(v3, 12) + rol32(v4, 18);
	} else {
		h = seed + P32_5;
	}
	h += (uint32_t)len;
	for (; end - p >= 4; p += 4)
		h = rol32(h + rd32(p) * P32_3, 17) * P32_4;
	for (; p < end; p++)
		h = rol32(h + *p * P32_5, 11) * P32_1;
	h ^= h >> 15;
	h *= P32_2;
	h ^= h >> 13;
	h *= P32_3;
	h ^= h >> 16;
	return h;
}

/* ---- XXH64 ---- */

#define P64_1 0x9E3779B185EBCA87ull
#define P64_2 0xC2B2AE3D27D4EB4Full
#define P64_3 0x165667B19E3779F9ull
#define P64_4 0x85EBCA77C2B2AE63ull
#define P64_5 0x27D4EB2F165667C5ull

static uint64_t xxh64_round(uint64_t acc, uint64_t in)
{
	return rol64(acc + in * P64_2, 31) * P64_1;
}

static uint64_t xxh64_merge(uint64_t h, uint64_t v)
{
	return (h ^ xxh64_round(0, v)) * P64_1 + P64_4;
}

static uint64_t xxh64_avalanche(uint64_t h)
{
	h ^= h >> 33;
	h *= P64_2;
	h ^= h >> 29;
	h *= P64_3;
	h ^= h >> 32;
	return h;
}

uint64_t smp_xxh64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	const unsigned char *end = p + len;
	uint64_t h;

	if (len >= 32) {
		uint64_t v1 = seed + P64_1 + P64_2, v2 = seed + P64_2, v3 = seed, v4 = seed - P64_1;

		for (; end - p >= 32; p += 32) {
			v1 = xxh64_round(v1, rd64(p));
			v2 = xxh64_round(v2, rd64(p + 8));
			v3 = xxh64_round(v3, rd64(p + 16));
			v4 = xxh64_round(v4, rd64(p + 24));
		}
		h = rol64(v1, 1) + rol64(v2, 7) + rol64(v3, 12) + rol64(v4, 18);
		h = xxh64_merge(h, v1);
		h = xxh64_merge(h, v2);
		h = xxh64_merge(h, v3);
		h = xxh64_merge(h, v4);
	} else {
		h = seed + P64_5;
	}
	h += (uint64_t)len;
	for (; end - p >= 8; p += 8)
		h = rol64(h ^ xxh64_round(0, rd64(p)), 27) * P64_1 + P64_4;
	if (end - p >= 4) {
		h = rol64(h ^ (uint64_t)rd32(p) * P64_1, 23) * P64_2 + P64_3;
		p += 4;
	}
	for (; p < end; p++)
		h = rol64(h ^ *p * P64_5, 11) * P64_1;
	return xxh64_avalanche(h);
}

/* ---- XXH3 (64-bit) ---- */

/* The specification's default secret (192 bytes). */
static const unsigned char xxh3_secret[192] = {
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

#define XXH3_STRIPE   64
#define XXH3_CONSUME  8     /* secret bytes consumed per stripe */

static uint64_t xxh3_avalanche(uint64_t h)
{
	h ^= h >> 37;
	h *= 0x165667919E3779F9ull;
	h ^= h >> 32;
	return h;
}

static uint64_t xxh3_rrmxmx(uint64_t h, uint64_t len)
{
	h ^= rol64(h, 49) ^ rol64(h, 24);
	h *= 0x9FB21C651E98DF25ull;
	h ^= (h >> 35) + len;
	h *= 0x9FB21C651E98DF25ull;
	h ^= h >> 28;
	return h;
}

static uint64_t xxh3_mix16(const unsigned char *p, const unsigned char *s, uint64_t seed)
{
	return mul128_fold(rd64(p) ^ (rd64(s) + seed), rd64(p + 8) ^ (rd64(s + 8) - seed));
}

static uint64_t xxh3_0to16(const unsigned char *p, size_t len, const unsigned char *s,
                           uint64_t seed)
{
	if (len > 8) {
		uint64_t lo = rd64(p) ^ ((rd64(s + 24) ^ rd64(s + 32)) + seed);
		uint64_t hi = rd64(p + len - 8) ^ ((rd64(s + 40) ^ rd64(s + 48)) - seed);

		return xxh3_avalanche(len + swap64(lo) + hi + mul128_fold(lo, hi));
	}
	if (len >= 4) {
		uint64_t in, flip;

		seed ^= (uint64_t)swap32((uint32_t)seed) << 32;
		in = rd32(p + len - 4) + ((uint64_t)rd32(p) << 32);
		flip = (rd64(s + 8) ^ rd64(s + 16)) - seed;
		return xxh3_rrmxmx(in ^ flip, len);
	}
	if (len) {
		uint32_t c = (uint32_t)p[0] << 16 | (uint32_t)p[len >> 1] << 24 | p[len - 1] |
			     (uint32_t)len << 8;

		return xxh64_avalanche((uint64_t)c ^ ((uint64_t)(rd32(s) ^ rd32(s + 4)) + seed));
	}
	return xxh64_avalanche(seed ^ rd64(s + 56) ^ rd64(s + 64));
}

static uint64_t xxh3_17to128(const unsigned char *p, size_t len, const unsigned char *s,
                             uint64_t seed)
{
	uint64_t acc = len * P64_1;

	if (len > 32) {
		if (len > 64) {
			if (len > 96) {
				acc += xxh3_mix16(p + 48, s + 96, seed);
				acc += xxh3_mix16(p + len - 64, s + 112, seed);
			}
			acc += xxh3_mix16(p + 32, s + 64, seed);
			acc += xxh3_mix16(p + len - 48, s + 80, seed);
		}
		acc += xxh3_mix16(p + 16, s + 32, seed);
		acc += xxh3_mix16(p + len - 32, s + 48, seed);
	}
	acc += xxh3_mix16(p, s, seed);
	acc += xxh3_mix16(p + len - 16, s + 16, seed);
	return xxh3_avalanche(acc);
}

static uint64_t xxh3_129to240(const unsigned char *p, size_t len, const unsigned char *s,
                              uint64_t seed)
{
	uint64_t acc = len * P64_1;
	size_t rounds = len / 16, i;

	for (i = 0; i < 8; i++)
		acc += xxh3_mix16(p + 16 * i, s + 16 * i, seed);
	acc = xxh3_avalanche(acc);
	for (i = 8; i < rounds; i++)
		acc += xxh3_mix16(p + 16 * i, s + 16 * (i - 8) + 3, seed);
	acc += xxh3_mix16(p + len - 16, s + 136 - 17, seed);
	return xxh3_avalanche(acc);
}

static void xxh3_accumulate_stripe(uint64_t acc[8], const unsigned char *p,
                                   const unsigned char *s)
{
	for (int i = 0; i < 8; i++) {
		uint64_t v = rd64(p + 8 * i), k = v ^ rd64(s + 8 * i);

		acc[i ^ 1] += v;
		acc[i] += (k & 0xffffffff) * (k >> 32);
	}
}

static void xxh3_scramble(uint64_t acc[8], const unsigned char *s)
{
	for (int i = 0; i < 8; i++) {
		uint64_t a = acc[i];

		a ^= a >> 47;
		a ^= rd64(s + 8 * i);
		acc[i] = a * P32_1;
	}
}

static uint64_t xxh3_long(const unsigned char *p, size_t len, const unsigned char *s,
                          size_t slen)
{
	uint64_t acc[8] = { P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1 };
	size_t per_block = (slen - XXH3_STRIPE) / XXH3_CONSUME;
	size_t block = XXH3_STRIPE * per_block;
	size_t nblocks = (len - 1) / block, stripes, n;
	uint64_t r = len * P64_1;

	for (n = 0; n < nblocks; n++) {
		for (size_t k = 0; k < per_block; k++)
			xxh3_accumulate_stripe(acc, p + n * block + k * XXH3_STRIPE,
					       s + k * XXH3_CONSUME);
		xxh3_scramble(acc, s + slen - XXH3_STRIPE);
	}
	stripes = ((len - 1) - block * nblocks) / XXH3_STRIPE;
	for (size_t k = 0; k < stripes; k++)
		xxh3_accumulate_stripe(acc, p + nblocks * block + k * XXH3_STRIPE,
				       s + k * XXH3_CONSUME);
	xxh3_accumulate_stripe(acc, p + len - XXH3_STRIPE, s + slen - XXH3_STRIPE - 7);
	for (int i = 0; i < 4; i++)
		r += mul128_fold(acc[2 * i] ^ rd64(s + 11 + 16 * i),
				 acc[2 * i + 1] ^ rd64(s + 11 + 16 * i + 8));
	return xxh3_avalanche(r);
}

static void wr64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t xxh3_64(const unsigned char *p, size_t len, uint64_t seed)
{
	unsigned char custom[sizeof(xxh3_secret)];

	if (len <= 16)
		return xxh3_0to16(p, len, xxh3_secret, seed);
	if (len <= 128)
		return xxh3_17to128(p, len, xxh3_secret, seed);
	if (len <= 240)
		return xxh3_129to240(p, len, xxh3_secret, seed);
	if (!seed)
		return xxh3_long(p, len, xxh3_secret, sizeof(xxh3_secret));
	/* a seed on long inputs derives a secret: seed added to the first
	 * half of each 16-byte pair, subtracted from the second */
	for (size_t i = 0; i < sizeof(custom); i += 16) {
		wr64(custom + i, rd64(xxh3_secret + i) + seed);
		wr64(custom + i + 8, rd64(xxh3_secret + i + 8) - seed);
	}
	return xxh3_long(p, len, custom, sizeof(custom));
}

/* ---- converters ---- */

static int out_int(struct sample *smp, int64_t v)
{
	smp->type = SMP_T_SINT;
	smp->u.sint = v;
	return 1;
}

static uint64_t seed_of(const struct smp_arg *a)
{
	return a[0].type == ARGT_SINT ? (uint64_t)a[0].sint : 0;
}

/* xxh32([seed]): unsigned 32-bit; the seed is cut to 32 bits. */
static int conv_xxh32(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return out_int(smp, xxh32((const unsigned char *)smp->u.str.p, smp->u.str.len,
				  (uint32_t)seed_of(a)));
}

/* xxh64([seed]) and xxh3([seed]): the 64 bits as a signed integer. */
static int conv_xxh64(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return out_int(smp, (int64_t)smp_xxh64((const unsigned char *)smp->u.str.p, smp->u.str.len,
					   seed_of(a)));
}

static int conv_xxh3(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return out_int(smp, (int64_t)xxh3_64((const unsigned char *)smp->u.str.p, smp->u.str.len,
					     seed_of(a)));
}

static const struct smp_conv_kw hash_convs[] = {
	{ "xxh32",  conv_xxh32,  { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
	{ "xxh64",  conv_xxh64,  { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
	{ "xxh3",   conv_xxh3,   { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_SINT, NULL, NULL },
};

SLUICE_INIT(conv_hash_register)
{
	smp_register_convs(hash_convs, ARRAY_SIZE(hash_convs));
}
