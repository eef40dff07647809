/* JSON Web Token converters (RFC 7519, JWS compact serialization of RFC
 * 7515): jwt_header_query and jwt_payload_query decode a part and query it
 * like json_query; jwt_verify checks the signature with OpenSSL (HS*, RS*,
 * ES* and PS* of RFC 7518), public keys read once at start-up. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_OPENSSL
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#endif

#include <sluice/common.h>
#include <sluice/json.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/vars.h>

/* The base64url parts of a token "<header>.<payload>.<signature>". */
struct jwt_parts {
	const char *p[3];
	size_t      len[3];
	int         n;      /* parts found (a fourth one makes it 4) */
};

/* Splits <tok> (<len> bytes) on '.' into <jp>: at most 3 parts are
 * recorded, jp->n counts up to 4. */
static void jwt_split(const char *tok, size_t len, struct jwt_parts *jp)
{
	const char *p = tok, *end = tok + len;

	jp->n = 0;
	for (;;) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		const char *e = dot ? dot : end;

		if (jp->n == 3) {
			jp->n = 4;
			return;
		}
		jp->p[jp->n] = p;
		jp->len[jp->n] = (size_t)(e - p);
		jp->n++;
		if (!dot)
			return;
		p = dot + 1;
	}
}

/* jwt_header_query([<path>][,int]) and jwt_payload_query: row .priv is the
 * index of the part (0 or 1). Without a path, the decoded part itself. */
static int conv_check_jwt_query(struct smp_arg *a, char **err, const void *priv)
{
	if (a[0].type != ARGT_STR || !a[0].len) {
		if (a[1].type == ARGT_STR) {
			*err = str_fmt("an output type needs a JSON path");
			return -1;
		}
		return 0;
	}
	return json_query_check_args(a, err);
}

static int conv_jwt_query(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	int part = (int)(intptr_t)priv;
	struct jwt_parts jp;
	char *out;
	long n;

	jwt_split(smp->u.str.p, smp->u.str.len, &jp);
	if (jp.n <= part)
		return 0;
	out = smp_scratch_get();
	n = smp_b64_decode(jp.p[part], jp.len[part], out, SMP_SCRATCH_SIZE, 1, SMP_B64_PAD_OPT);
	if (n < 0)
		return 0;
	if (a[0].ptr)
		return json_query_smp(a[0].ptr, (int)a[1].sint, out, (size_t)n, smp);
	smp->type = SMP_T_STR;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = out;
	smp->u.str.len = (size_t)n;
	return 1;
}

#ifdef USE_OPENSSL

/* jwt_verify's results, as HAProxy numbers them. */
enum jwt_vrfy {
	JWT_VRFY_KO          = 0,
	JWT_VRFY_OK          = 1,
	JWT_VRFY_UNKNOWN_ALG = -1,
	JWT_VRFY_UNMANAGED   = -2,   /* not returned: every algorithm is managed here */
	JWT_VRFY_INVALID     = -3,
	JWT_VRFY_OOM         = -4,
	JWT_VRFY_UNKNOWN_KEY = -5,
};

enum jwt_family { JWT_NONE, JWT_HMAC, JWT_RSA, JWT_ECDSA, JWT_PSS };

struct jwt_alg {
	const char     *name;
	enum jwt_family family;
	int             bits;    /* of the digest */
};

static const struct jwt_alg jwt_algs[] = {
	{ "HS256", JWT_HMAC, 256 }, { "HS384", JWT_HMAC, 384 }, { "HS512", JWT_HMAC, 512 },
	{ "RS256", JWT_RSA, 256 },  { "RS384", JWT_RSA, 384 },  { "RS512", JWT_RSA, 512 },
	{ "ES256", JWT_ECDSA, 256 }, { "ES384", JWT_ECDSA, 384 }, { "ES512", JWT_ECDSA, 512 },
	{ "PS256", JWT_PSS, 256 },  { "PS384", JWT_PSS, 384 },  { "PS512", JWT_PSS, 512 },
	{ "none", JWT_NONE, 0 },
};

static const struct jwt_alg *jwt_alg_find(const char *p, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(jwt_algs); i++)
		if (strlen(jwt_algs[i].name) == len && memcmp(jwt_algs[i].name, p, len) == 0)
			return &jwt_algs[i];
	return NULL;
}

static const EVP_MD *jwt_md(const struct jwt_alg *alg)
{
	return alg->bits == 512 ? EVP_sha512() : alg->bits == 384 ? EVP_sha384() : EVP_sha256();
}

/* The public keys named by jwt_verify arguments, read at start-up: a run
 * time variable naming a file reads it from here, never from the disk. */
struct jwt_key {
	struct jwt_key *next;
	char           *path;
	EVP_PKEY       *pkey;
};

static struct jwt_key *jwt_keys;

static EVP_PKEY *jwt_key_find(const char *path, size_t len)
{
	for (struct jwt_key *k = jwt_keys; k; k = k->next)
		if (strlen(k->path) == len && memcmp(k->path, path, len) == 0)
			return k->pkey;
	return NULL;
}

/* Reads the public key in PEM file <path>: a public key or a certificate.
 * Returns it (cached), or NULL with an allocated <err>. */
static EVP_PKEY *jwt_key_load(const char *path, char **err)
{
	EVP_PKEY *pkey = jwt_key_find(path, strlen(path));
	struct jwt_key *k;
	X509 *crt;
	FILE *f;

	if (pkey)
		return pkey;
	if (!(f = fopen(path, "r"))) {
		*err = str_fmt("cannot read the public key file '%s': %s", path, strerror(errno));
		return NULL;
	}
	pkey = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	if (!pkey) {
		rewind(f);
		if ((crt = PEM_read_X509(f, NULL, NULL, NULL))) {
			pkey = X509_get_pubkey(crt);
			X509_free(crt);
		}
	}
	fclose(f);
	if (!pkey) {
		*err = str_fmt("'%s' holds no PEM public key or certificate", path);
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->path = xstrdup(path);
	k->pkey = pkey;
	k->next = jwt_keys;
	jwt_keys = k;
	return pkey;
}

/* jwt_verify(<alg>,<key>): each argument a constant or a variable. A
 * constant algorithm must be one of RFC 7518; with a constant algorithm
 * that is not HMAC the key names a PEM file, read now (an error if it
 * cannot be); with an algorithm read from a variable, a constant key that
 * reads as a PEM file is read now, else it is taken as an HMAC secret. */
static int conv_check_jwt_verify(struct smp_arg *a, char **err, const void *priv)
{
	struct var_or_const *alg = var_or_const_new(a[0].str, a[0].len);
	struct var_or_const *key = var_or_const_new(a[1].str, a[1].len);
	const struct jwt_alg *al = NULL;
	char *e2 = NULL;

	a[0].ptr = alg;
	a[0].release = var_or_const_free;
	a[1].ptr = key;
	a[1].release = var_or_const_free;
	if (!alg->is_var && !(al = jwt_alg_find(alg->data, alg->len))) {
		*err = str_fmt("unknown JWT algorithm '%s' (expects HS256, HS384, HS512, RS256, "
			       "RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512 or none)",
			       alg->data);
		return -1;
	}
	if (key->is_var || (al && (al->family == JWT_HMAC || al->family == JWT_NONE)))
		return 0;
	if (!jwt_key_load(key->data, &e2) && al) {
		*err = e2;
		return -1;
	}
	free(e2);
	return 0;
}

/* An ECDSA signature of JWS (R and S, big-endian, each <n> bytes) as the
 * DER structure OpenSSL verifies; <*der> to free with OPENSSL_free(). */
static int jwt_ecdsa_der(const unsigned char *sig, size_t len, unsigned char **der)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r, *s;
	int n;

	if (!es)
		return -1;
	r = BN_bin2bn(sig, (int)(len / 2), NULL);
	s = BN_bin2bn(sig + len / 2, (int)(len / 2), NULL);
	if (!r || !s || !ECDSA_SIG_set0(es, r, s)) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		return -1;
	}
	*der = NULL;
	n = i2d_ECDSA_SIG(es, der);
	ECDSA_SIG_free(es);
	return n;
}

/* Verifies <sig> over <in> with public key <pkey>. */
static int jwt_verify_pkey(const struct jwt_alg *alg, EVP_PKEY *pkey, const char *in,
                           size_t inlen, const unsigned char *sig, size_t siglen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	unsigned char *der = NULL;
	int ret = JWT_VRFY_KO, ok;

	if (!ctx)
		return JWT_VRFY_OOM;
	if (EVP_DigestVerifyInit(ctx, &pctx, jwt_md(alg), NULL, pkey) != 1)
		goto out;
	switch (alg->family) {
	case JWT_RSA:
		if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA ||
		    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1)
			goto out;
		break;
	case JWT_PSS:
		/* RFC 7518 3.5: MGF1 with the same hash, a salt as long as the hash */
		if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA ||
		    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
		    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1 ||
		    EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, jwt_md(alg)) != 1)
			goto out;
		break;
	case JWT_ECDSA: {
		/* the curve goes with the digest: P-256, P-384, P-521 */
		int want = alg->bits == 512 ? 521 : alg->bits;
		int n;

		if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC || EVP_PKEY_get_bits(pkey) != want ||
		    siglen != 2 * (size_t)((want + 7) / 8))
			goto out;
		if ((n = jwt_ecdsa_der(sig, siglen, &der)) <= 0) {
			ret = JWT_VRFY_OOM;
			goto out;
		}
		sig = der;
		siglen = (size_t)n;
		break;
	}
	default:
		goto out;
	}
	ok = EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)in, inlen);
	ret = ok == 1 ? JWT_VRFY_OK : JWT_VRFY_KO;
out:
	OPENSSL_free(der);
	EVP_MD_CTX_free(ctx);
	return ret;
}

static int jwt_verify(const struct smp_arg *a, struct sample *smp)
{
	unsigned char sig[1024], mac[EVP_MAX_MD_SIZE];
	const struct jwt_alg *alg;
	const char *ap, *kp;
	size_t al, kl;
	struct jwt_parts jp;
	unsigned int ml = 0;
	size_t inlen;
	long sl;
	EVP_PKEY *pkey;

	if (!var_or_const_get(a[0].ptr, smp->strm, &ap, &al))
		return 0;
	if (!(alg = jwt_alg_find(ap, al)))
		return smp_set_int(smp, JWT_VRFY_UNKNOWN_ALG);
	if (!var_or_const_get(a[1].ptr, smp->strm, &kp, &kl))
		return 0;
	jwt_split(smp->u.str.p, smp->u.str.len, &jp);
	if (jp.n != 3 || !jp.len[2])
		return smp_set_int(smp, JWT_VRFY_INVALID);
	sl = smp_b64_decode(jp.p[2], jp.len[2], (char *)sig, sizeof(sig), 1, SMP_B64_PAD_NO);
	if (sl <= 0)
		return smp_set_int(smp, JWT_VRFY_INVALID);
	inlen = jp.len[0] + 1 + jp.len[1];   /* "<header>.<payload>", as received */
	switch (alg->family) {
	case JWT_NONE:
		return smp_set_int(smp, JWT_VRFY_KO);
	case JWT_HMAC:
		if (!HMAC(jwt_md(alg), kp, (int)kl, (const unsigned char *)jp.p[0], inlen, mac, &ml))
			return smp_set_int(smp, JWT_VRFY_OOM);
		return smp_set_int(smp, (size_t)sl == ml && CRYPTO_memcmp(mac, sig, ml) == 0);
	default:
		if (!(pkey = jwt_key_find(kp, kl)))
			return smp_set_int(smp, JWT_VRFY_UNKNOWN_KEY);
		return smp_set_int(smp, jwt_verify_pkey(alg, pkey, jp.p[0], inlen, sig,
							(size_t)sl));
	}
}

static int conv_jwt_verify(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	return jwt_verify(a, smp);
}
#endif

static const struct smp_conv_kw jwt_convs[] = {
	{ "jwt_header_query", conv_jwt_query, { ARGT_STR, ARGT_STR }, 0, SMP_T_STR, SMP_T_ANY,
	  conv_check_jwt_query, (const void *)0 },
	{ "jwt_payload_query", conv_jwt_query, { ARGT_STR, ARGT_STR }, 0, SMP_T_STR, SMP_T_ANY,
	  conv_check_jwt_query, (const void *)1 },
#ifdef USE_OPENSSL
	{ "jwt_verify", conv_jwt_verify, { ARGT_STR, ARGT_STR }, 2, SMP_T_STR, SMP_T_SINT,
	  conv_check_jwt_verify, NULL },
#endif
};

SLUICE_INIT(jwt_register)
{
	smp_register_convs(jwt_convs, ARRAY_SIZE(jwt_convs));
}
