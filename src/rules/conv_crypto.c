/* Cryptographic converters (sample.h) through OpenSSL: sha1, sha2, digest,
 * hmac and aes_gcm_dec. Algorithms and constant keys are read once at
 * start-up; each call works in the rotating scratch buffer. */
#ifdef USE_OPENSSL
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/vars.h>

/* A base64 argument that is a constant (decoded once) or names a variable
 * holding base64 (decoded per call): hmac's key, aes_gcm_dec's nonce, key
 * and tag. */
struct b64_arg {
	struct var_or_const *vc;
	unsigned char       *bin;   /* the constant, decoded */
	long                 len;
};

#define B64_ARG_MAX 1024   /* decoded bytes of a variable's value */

static void b64_arg_free(void *p)
{
	struct b64_arg *b = p;

	var_or_const_free(b->vc);
	free(b->bin);
	free(b);
}

/* Compiles <a> into a struct b64_arg (a->ptr). <what> names it in errors. */
static int b64_arg_check(struct smp_arg *a, const char *what, char **err)
{
	struct b64_arg *b = xcalloc(1, sizeof(*b));

	b->vc = var_or_const_new(a->str ? a->str : "", a->len);
	a->ptr = b;
	a->release = b64_arg_free;
	if (b->vc->is_var)
		return 0;
	b->bin = xcalloc(1, a->len + 1);
	b->len = smp_b64_decode(a->str, a->len, (char *)b->bin, a->len + 1, 0, SMP_B64_PAD_YES);
	if (b->len <= 0) {
		*err = str_fmt("the %s must be a non-empty base64 string or a variable name "
			       "(got '%s')", what, a->str ? a->str : "");
		return -1;
	}
	return 0;
}

/* The bytes of <a> for stream <s>: the constant, or the variable's value
 * decoded into <buf> (B64_ARG_MAX bytes). Returns their length, or -1
 * when the variable is not set or not base64. */
static long b64_arg_get(const struct smp_arg *a, struct stream *s, unsigned char *buf,
                        const unsigned char **out)
{
	const struct b64_arg *b = a->ptr;
	const char *p;
	size_t len;
	long n;

	if (!b->vc->is_var) {
		*out = b->bin;
		return b->len;
	}
	if (!var_or_const_get(b->vc, s, &p, &len))
		return -1;
	n = smp_b64_decode(p, len, (char *)buf, B64_ARG_MAX, 0, SMP_B64_PAD_YES);
	*out = buf;
	return n > 0 ? n : -1;
}

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

/* hmac(<algorithm>,<key>): the key in base64, a constant or a variable. */
static int conv_check_hmac(struct smp_arg *a, char **err, const void *priv)
{
	if (conv_check_digest(a, err, priv) == -1)
		return -1;
	return b64_arg_check(&a[1], "hmac key", err);
}

static int conv_hmac(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	unsigned char *out = (unsigned char *)smp_scratch_get(), kbuf[B64_ARG_MAX];
	const unsigned char *key;
	long kl = b64_arg_get(&a[1], smp->strm, kbuf, &key);
	unsigned int n = 0;

	if (kl < 0 || !HMAC(a[0].ptr, key, (int)kl, (const unsigned char *)smp->u.str.p,
			    smp->u.str.len, out, &n))
		return 0;
	return out_bin(smp, out, n);
}

/* aes_gcm_dec(<bits>,<nonce>,<key>,<aead_tag>): AES-128/192/256-GCM
 * decryption; nonce, key and tag in base64, constants or variables. */
static int conv_check_aes_gcm(struct smp_arg *a, char **err, const void *priv)
{
	const struct b64_arg *k;

	switch (a[0].sint) {
	case 128: a[0].ptr = (void *)EVP_aes_128_gcm(); break;
	case 192: a[0].ptr = (void *)EVP_aes_192_gcm(); break;
	case 256: a[0].ptr = (void *)EVP_aes_256_gcm(); break;
	default:
		*err = str_fmt("unsupported number of bits %lld (expects 128, 192 or 256)",
			       (long long)a[0].sint);
		return -1;
	}
	if (b64_arg_check(&a[1], "nonce", err) == -1 || b64_arg_check(&a[2], "key", err) == -1 ||
	    b64_arg_check(&a[3], "AEAD tag", err) == -1)
		return -1;
	k = a[2].ptr;
	if (!k->vc->is_var && k->len * 8 != a[0].sint) {
		*err = str_fmt("the key is %ld bits long, not %lld", k->len * 8, (long long)a[0].sint);
		return -1;
	}
	return 0;
}

static int conv_aes_gcm_dec(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	unsigned char nbuf[B64_ARG_MAX], kbuf[B64_ARG_MAX], tbuf[B64_ARG_MAX];
	unsigned char *out = (unsigned char *)smp_scratch_get();
	const unsigned char *nonce, *key, *tag;
	long nl = b64_arg_get(&a[1], smp->strm, nbuf, &nonce);
	long kl = b64_arg_get(&a[2], smp->strm, kbuf, &key);
	long tl = b64_arg_get(&a[3], smp->strm, tbuf, &tag);
	int n = 0, fin = 0, ok = 0;
	EVP_CIPHER_CTX *ctx;

	if (nl <= 0 || kl * 8 != a[0].sint || tl <= 0 || tl > 16 ||
	    smp->u.str.len > SMP_SCRATCH_SIZE || !(ctx = EVP_CIPHER_CTX_new()))
		return 0;
	if (EVP_DecryptInit_ex(ctx, a[0].ptr, NULL, NULL, NULL) == 1 &&
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)nl, NULL) == 1 &&
	    EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce) == 1 &&
	    EVP_DecryptUpdate(ctx, out, &n, (const unsigned char *)smp->u.str.p,
			      (int)smp->u.str.len) == 1 &&
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, (int)tl, (void *)tag) == 1 &&
	    EVP_DecryptFinal_ex(ctx, out + n, &fin) == 1)
		ok = 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? out_bin(smp, out, (size_t)(n + fin)) : 0;
}

static const struct smp_conv_kw crypto_convs[] = {
	{ "sha1",   conv_sha1,   { 0 }, 0, SMP_T_BIN, SMP_T_BIN, NULL, NULL },
	{ "sha2",   conv_sha2,   { ARGT_SINT }, 0, SMP_T_BIN, SMP_T_BIN, conv_check_sha2, NULL },
	{ "digest", conv_digest, { ARGT_STR }, 1, SMP_T_BIN, SMP_T_BIN, conv_check_digest, NULL },
	{ "hmac",   conv_hmac,   { ARGT_STR, ARGT_STR }, 2, SMP_T_BIN, SMP_T_BIN, conv_check_hmac,
	  NULL },
	{ "aes_gcm_dec", conv_aes_gcm_dec, { ARGT_SINT, ARGT_STR, ARGT_STR, ARGT_STR }, 4,
	  SMP_T_BIN, SMP_T_BIN, conv_check_aes_gcm, NULL },
};

SLUICE_INIT(conv_crypto_register)
{
	smp_register_convs(crypto_convs, ARRAY_SIZE(crypto_convs));
}
#endif
