/* Digest converters (sample.h) through OpenSSL: sha1, sha2, digest and
 * hmac. The algorithm is looked up once at start-up; each call hashes into
 * the rotating scratch buffer. */
#ifdef USE_OPENSSL
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/str.h>

static int out_bin(struct sample *smp, const unsigned char *p, size_t len)
{
	smp->type = SMP_T_BIN;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = (const char *)p;
	smp->u.str.len = len;
	return 1;
}

/* Hashes <smp> with <md> into the scratch area. */
static int md_run(const EVP_MD *md, struct sample *smp)
{
	unsigned char *out = (unsigned char *)smp_scratch_get();
	unsigned int n = 0;

	if (!EVP_Digest(smp->u.str.p, smp->u.str.len, out, &n, md, NULL))
		return 0;
	return out_bin(smp, out, n);
}

static int conv_sha1(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return md_run(EVP_sha1(), smp);
}

/* sha2([bits]): 224, 256 (default), 384 or 512. */
static int conv_check_sha2(struct smp_arg *a, char **err, const void *priv)
{
	const EVP_MD *md;

	switch (a[0].type == ARGT_SINT ? a[0].sint : 256) {
	case 224: md = EVP_sha224(); break;
	case 256: md = EVP_sha256(); break;
	case 384: md = EVP_sha384(); break;
	case 512: md = EVP_sha512(); break;
	default:
		*err = str_fmt("unsupported number of bits %lld (expects 224, 256, 384 or 512)",
			       (long long)a[0].sint);
		return -1;
	}
	a[0].ptr = (void *)md;
	return 0;
}

static int conv_sha2(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return md_run(a[0].ptr, smp);
}

/* digest(<algorithm>) and the first argument of hmac(): any digest name
 * OpenSSL knows ("sha256", "md5", "sha3-512"...). */
static int conv_check_digest(struct smp_arg *a, char **err, const void *priv)
{
	const EVP_MD *md = EVP_get_digestbyname(a[0].str);

	if (!md) {
		*err = str_fmt("unknown digest algorithm '%s'", a[0].str);
		return -1;
	}
	a[0].ptr = (void *)md;
	return 0;
}

static int conv_digest(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return md_run(a[0].ptr, smp);
}

/* hmac(<algorithm>,<key>): the key is given in base64, as in HAProxy;
 * it is decoded once here. */
static int conv_check_hmac(struct smp_arg *a, char **err, const void *priv)
{
	unsigned char *key;
	int n;

	if (conv_check_digest(a, err, priv) == -1)
		return -1;
	key = xcalloc(1, a[1].len + 4);
	n = a[1].len % 4 ? -1 : EVP_DecodeBlock(key, (const unsigned char *)a[1].str, (int)a[1].len);
	if (n < 0 || !a[1].len) {
		*err = str_fmt("the hmac key must be a non-empty base64 string");
		free(key);
		return -1;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes */
	for (size_t i = a[1].len; i > 0 && a[1].str[i - 1] == '='; i--)
		n--;
	a[1].ptr = key;
	a[1].sint = n;
	a[1].release = free;
	return 0;
}

static int conv_hmac(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	unsigned char *out = (unsigned char *)smp_scratch_get();
	unsigned int n = 0;

	if (!HMAC(a[0].ptr, a[1].ptr, (int)a[1].sint, (const unsigned char *)smp->u.str.p,
		  smp->u.str.len, out, &n))
		return 0;
	return out_bin(smp, out, n);
}

static const struct smp_conv_kw crypto_convs[] = {
	{ "sha1",   conv_sha1,   { 0 }, 0, SMP_T_BIN, SMP_T_BIN, NULL, NULL },
	{ "sha2",   conv_sha2,   { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_BIN, conv_check_sha2, NULL },
	{ "digest", conv_digest, { ARGT_STR }, 1, SMP_T_BIN, SMP_T_BIN, conv_check_digest, NULL },
	{ "hmac",   conv_hmac,   { ARGT_STR, ARGT_STR }, 2, SMP_T_BIN, SMP_T_BIN, conv_check_hmac,
	  NULL },
};

SLUICE_INIT(conv_crypto_register)
{
	smp_register_convs(crypto_convs, ARRAY_SIZE(crypto_convs));
}
#endif
