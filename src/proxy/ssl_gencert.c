/* generate-certificates: a certificate forged for an SNI no certificate of
 * the bind line serves, signed by the ca-sign-file CA with the default
 * certificate's key, kept in an LRU cache of tune.ssl.ssl-ctx-cache-size
 * contexts (ssl_int.h). */
#ifdef USE_OPENSSL
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <sluice/common.h>
#include <sluice/log.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "ssl_int.h"

struct gencert_ent {
	char    *name;     /* the SNI, lower case */
	SSL_CTX *ctx;
	uint64_t used;     /* LRU clock */
};

struct ssl_gen {
	X509              *ca;
	EVP_PKEY          *ca_key;
	EVP_PKEY          *key;     /* the default certificate's: every forged one uses it */
	struct gencert_ent *ents;
	int                 n, size;
	uint64_t            clock;
};

static int gencert_pass_cb(char *buf, int size, int rwflag, void *u)
{
	const char *pass = u;
	int len = pass ? (int)strlen(pass) : 0;

	if (len > size)
		len = size;
	if (pass)
		memcpy(buf, pass, (size_t)len);
	return len;
}

int gencert_setup(struct ssl_bind_opts *o, char **err)
{
	struct ssl_gen *g;
	BIO *b;

	if (!o->ca_sign_file) {
		*err = str_fmt("cannot enable certificate generation, no CA certificate file "
			       "configured ('ca-sign-file')");
		return -1;
	}
	if (!(b = BIO_new_file(o->ca_sign_file, "r"))) {
		ERR_clear_error();
		*err = str_fmt("cannot read ca-sign-file '%s'", o->ca_sign_file);
		return -1;
	}
	g = xcalloc(1, sizeof(*g));
	g->ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_reset(b);
	g->ca_key = PEM_read_bio_PrivateKey(b, NULL, gencert_pass_cb, o->ca_sign_pass);
	BIO_free(b);
	ERR_clear_error();
	if (!g->ca || !g->ca_key || X509_check_private_key(g->ca, g->ca_key) != 1) {
		ERR_clear_error();
		*err = str_fmt("'%s': %s", o->ca_sign_file, !g->ca ? "no certificate found" :
			       !g->ca_key ? "no private key found (or a wrong ca-sign-pass)" :
			       "the private key does not match the certificate");
		X509_free(g->ca);
		EVP_PKEY_free(g->ca_key);
		free(g);
		return -1;
	}
	g->key = o->crts[0].ck->key;
	EVP_PKEY_up_ref(g->key);
	g->size = sslg.ctx_cache_size > 0 ? sslg.ctx_cache_size : 1;
	o->gen = g;
	return 0;
}

void gencert_release(struct ssl_bind_opts *o)
{
	struct ssl_gen *g = o->gen;

	if (!g)
		return;
	for (int i = 0; i < g->n; i++) {
		SSL_CTX_free(g->ents[i].ctx);
		free(g->ents[i].name);
	}
	free(g->ents);
	X509_free(g->ca);
	EVP_PKEY_free(g->ca_key);
	EVP_PKEY_free(g->key);
	free(g);
	o->gen = NULL;
}

/* A certificate for <name>, signed by the CA. NULL on failure. */
static X509 *gencert_forge(struct ssl_gen *g, const char *name)
{
	X509 *x = X509_new();
	X509_NAME *subj = X509_NAME_new();
	X509_EXTENSION *ext = NULL;
	X509V3_CTX v3;
	unsigned char serial[8];
	BIGNUM *bn = NULL;
	char *san = str_fmt("DNS:%s", name);
	int ok = 0;

	if (!x || !subj || RAND_bytes(serial, sizeof(serial)) != 1)
		goto out;
	serial[0] &= 0x7f;
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) ||
	    X509_set_version(x, 2) != 1 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -86400) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 365L * 86400) ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC, (const unsigned char *)name, -1,
				       -1, 0) != 1 ||
	    X509_set_subject_name(x, subj) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(g->ca)) != 1 ||
	    X509_set_pubkey(x, g->key) != 1)
		goto out;
	/* not after the CA itself */
	if (ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(g->ca)) > 0)
		X509_set1_notAfter(x, X509_get0_notAfter(g->ca));
	X509V3_set_ctx(&v3, g->ca, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, san);
	if (!ext || X509_add_ext(x, ext, -1) != 1 || X509_sign(x, g->ca_key, EVP_sha256()) <= 0)
		goto out;
	ok = 1;
out:
	X509_EXTENSION_free(ext);
	X509_NAME_free(subj);
	BN_free(bn);
	free(san);
	ERR_clear_error();
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

SSL_CTX *gencert_get(struct ssl_bind_opts *o, const char *sni)
{
	struct ssl_gen *g = o->gen;
	struct gencert_ent *slot = NULL;
	char name[256], *err = NULL;
	SSL_CTX *ctx;
	X509 *x;
	size_t i;

	if (!g)
		return NULL;
	for (i = 0; sni[i] && i < sizeof(name) - 1; i++)
		name[i] = (char)tolower((unsigned char)sni[i]);
	name[i] = '\0';
	g->clock++;
	for (int k = 0; k < g->n; k++)
		if (strcmp(g->ents[k].name, name) == 0) {
			g->ents[k].used = g->clock;
			return g->ents[k].ctx;
		}
	if (!(x = gencert_forge(g, name)))
		return NULL;
	ctx = ssl_bind_new_ctx(o, NULL, &err);
	if (!ctx || SSL_CTX_use_certificate(ctx, x) != 1 || SSL_CTX_use_PrivateKey(ctx, g->key) != 1 ||
	    SSL_CTX_add1_chain_cert(ctx, g->ca) != 1) {
		log_warning("generate-certificates: cannot use the certificate made for '%s': %s",
			    name, err ? err : "OpenSSL refused it");
		ERR_clear_error();
		free(err);
		SSL_CTX_free(ctx);
		X509_free(x);
		return NULL;
	}
	X509_free(x);
	ssl_bind_ctx_finish(o, ctx);
	/* the least recently used entry makes room when the cache is full */
	if (g->n < g->size) {
		g->ents = xrealloc(g->ents, sizeof(*g->ents) * (size_t)(g->n + 1));
		slot = &g->ents[g->n++];
	} else {
		slot = &g->ents[0];
		for (int k = 1; k < g->n; k++)
			if (g->ents[k].used < slot->used)
				slot = &g->ents[k];
		SSL_CTX_free(slot->ctx);
		free(slot->name);
	}
	slot->name = xstrdup(name);
	slot->ctx = ctx;
	slot->used = g->clock;
	return ctx;
}

#endif
