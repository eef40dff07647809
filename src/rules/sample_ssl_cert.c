/* TLS sample fetches of certificates: ssl_c_* (the client's certificate),
 * ssl_f_* (the one the frontend presented), ssl_s_* (the server's): names,
 * dates, serial, digests, algorithms, DER, and the client's verification
 * results. One function per attribute; the row's .priv says which
 * certificate. Rows of the fetch table (sample.h). */
#ifdef USE_OPENSSL
#include <string.h>

#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/ssl.h>
#include <sluice/stream.h>

/* Which certificate a row reads. */
enum { CRT_CLIENT, CRT_FRONT, CRT_SERVER };
static const int crt_which[] = { CRT_CLIENT, CRT_FRONT, CRT_SERVER };

static X509 *smp_cert(struct stream *s, const void *priv)
{
	switch (*(const int *)priv) {
	case CRT_CLIENT:
		return s->cli.ssl ? SSL_get0_peer_certificate(s->cli.ssl) : NULL;
	case CRT_FRONT:
		return s->cli.ssl ? SSL_get_certificate(s->cli.ssl) : NULL;
	default:
		return s->srv.fd >= 0 && s->srv.ssl ? SSL_get0_peer_certificate(s->srv.ssl) : NULL;
	}
}


/* A distinguished name: "/C=../CN=..", or RFC 2253 ("CN=..,C=..") with the
 * format argument <a>[2] "rfc2253"; with an entry argument (<a>[0], e.g.
 * "CN"), that entry's value only: occurrence <a>[1] (1 the first, the
 * default; -1 the last). */
static int smp_set_dn(struct sample *smp, X509_NAME *name, const struct smp_arg *a)
{
	char *buf = smp_scratch_get();
	int nid, idx = -1, occ, n = 0;
	unsigned char *utf8;
	int len;

	if (!name)
		return 0;
	if (a[0].type != ARGT_STR || !a[0].str || !*a[0].str) {
		if (a[2].type == ARGT_STR && a[2].str && strcmp(a[2].str, "rfc2253") == 0) {
			BIO *b = BIO_new(BIO_s_mem());
			char *p;
			long l;

			if (!b || X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253) < 0) {
				BIO_free(b);
				return 0;
			}
			l = BIO_get_mem_data(b, &p);
			len = smp_set_copy(smp, SMP_T_STR, p, (size_t)l);
			BIO_free(b);
			return len;
		}
		if (!X509_NAME_oneline(name, buf, SMP_SCRATCH_SIZE))
			return 0;
		smp->type = SMP_T_STR;
		smp->u.str.p = buf;
		smp->u.str.len = strlen(buf);
		return 1;
	}
	nid = OBJ_txt2nid(a[0].str);
	if (nid == NID_undef)
		return 0;
	occ = a[1].type == ARGT_SINT && a[1].sint ? (int)a[1].sint : 1;
	for (int i = -1; (i = X509_NAME_get_index_by_NID(name, nid, i)) >= 0;)
		n++;
	occ = occ > 0 ? occ : n + occ + 1;   /* -1: the last */
	if (occ < 1 || occ > n)
		return 0;
	n = 0;
	for (int i = -1; (i = X509_NAME_get_index_by_NID(name, nid, i)) >= 0;)
		if (++n == occ) {
			idx = i;
			break;
		}
	if (idx < 0)
		return 0;
	len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, idx)));
	if (len < 0)
		return 0;
	if (len >= SMP_SCRATCH_SIZE)
		len = SMP_SCRATCH_SIZE - 1;
	memcpy(buf, utf8, (size_t)len);
	OPENSSL_free(utf8);
	smp->type = SMP_T_STR;
	smp->u.str.p = buf;
	smp->u.str.len = (size_t)len;
	return 1;
}

static int fetch_s_dn(const struct smp_arg *a, struct sample *smp, struct stream *s,
                      const void *priv)
{
	X509 *x = smp_cert(s, priv);

	return x ? smp_set_dn(smp, X509_get_subject_name(x), a) : 0;
}

static int fetch_i_dn(const struct smp_arg *a, struct sample *smp, struct stream *s,
                      const void *priv)
{
	X509 *x = smp_cert(s, priv);

	return x ? smp_set_dn(smp, X509_get_issuer_name(x), a) : 0;
}

/* The serial number, binary (HAProxy's form: hex it with ",hex"). */
static int fetch_serial(const struct smp_arg *a, struct sample *smp, struct stream *s,
                        const void *priv)
{
	X509 *x = smp_cert(s, priv);
	const ASN1_INTEGER *ser = x ? X509_get0_serialNumber(x) : NULL;

	if (!ser || ASN1_STRING_length(ser) <= 0)
		return 0;
	return smp_set_copy(smp, SMP_T_BIN, ASN1_STRING_get0_data(ser),
			       (size_t)ASN1_STRING_length(ser));
}

static int fetch_sha1(const struct smp_arg *a, struct sample *smp, struct stream *s,
                      const void *priv)
{
	X509 *x = smp_cert(s, priv);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (!x || !X509_digest(x, EVP_sha1(), md, &len))
		return 0;
	return smp_set_copy(smp, SMP_T_BIN, md, len);
}

static int fetch_der(const struct smp_arg *a, struct sample *smp, struct stream *s,
                     const void *priv)
{
	X509 *x = smp_cert(s, priv);
	unsigned char *der = NULL;
	int len = x ? i2d_X509(x, &der) : -1;
	int r;

	if (len <= 0)
		return 0;
	r = smp_set_copy(smp, SMP_T_BIN, der, (size_t)len);
	OPENSSL_free(der);
	return r;
}

/* ssl_c_chain_der, ssl_s_chain_der: the chain the peer sent without its
 * own certificate, in DER, one certificate after the other. */
static int fetch_chain_der(const struct smp_arg *a, struct sample *smp, struct stream *s,
                           const void *priv)
{
	int client = *(const int *)priv == CRT_CLIENT;
	SSL *ssl = client ? s->cli.ssl : (s->srv.fd >= 0 ? s->srv.ssl : NULL);
	STACK_OF(X509) *chain = ssl ? SSL_get_peer_cert_chain(ssl) : NULL;
	X509 *leaf = ssl ? SSL_get0_peer_certificate(ssl) : NULL;
	char *buf;
	size_t o = 0;

	if (!chain)
		return 0;
	buf = smp_scratch_get();
	for (int i = 0; i < sk_X509_num(chain); i++) {
		X509 *x = sk_X509_value(chain, i);
		int len = i2d_X509(x, NULL);
		unsigned char *p = (unsigned char *)buf + o;

		if (leaf && X509_cmp(x, leaf) == 0)
			continue;
		if (len <= 0 || o + (size_t)len > SMP_SCRATCH_SIZE)
			return 0;
		i2d_X509(x, &p);
		o += (size_t)len;
	}
	if (!o)
		return 0;
	smp->type = SMP_T_BIN;
	smp->u.str.p = buf;
	smp->u.str.len = o;
	return 1;
}

/* A date as the certificate holds it: "YYMMDDhhmmssZ" (UTCTime) or
 * "YYYYMMDDhhmmssZ" (GeneralizedTime). */
static int smp_set_time(struct sample *smp, const ASN1_TIME *t)
{
	return t ? smp_set_copy(smp, SMP_T_STR, ASN1_STRING_get0_data(t),
				   (size_t)ASN1_STRING_length(t)) : 0;
}

static int fetch_notbefore(const struct smp_arg *a, struct sample *smp, struct stream *s,
                           const void *priv)
{
	X509 *x = smp_cert(s, priv);

	return x ? smp_set_time(smp, X509_get0_notBefore(x)) : 0;
}

static int fetch_notafter(const struct smp_arg *a, struct sample *smp, struct stream *s,
                          const void *priv)
{
	X509 *x = smp_cert(s, priv);

	return x ? smp_set_time(smp, X509_get0_notAfter(x)) : 0;
}

/* The key's algorithm ("rsaEncryption", "id-ecPublicKey"). */
static int fetch_key_alg(const struct smp_arg *a, struct sample *smp, struct stream *s,
                         const void *priv)
{
	X509 *x = smp_cert(s, priv);
	X509_PUBKEY *pk = x ? X509_get_X509_PUBKEY(x) : NULL;
	ASN1_OBJECT *obj = NULL;

	if (!pk || !X509_PUBKEY_get0_param(&obj, NULL, NULL, NULL, pk))
		return 0;
	return smp_set_str(smp, OBJ_nid2sn(OBJ_obj2nid(obj)));
}

/* The signature's algorithm ("RSA-SHA256", "ecdsa-with-SHA256"). */
static int fetch_sig_alg(const struct smp_arg *a, struct sample *smp, struct stream *s,
                         const void *priv)
{
	X509 *x = smp_cert(s, priv);

	return x ? smp_set_str(smp, OBJ_nid2sn(X509_get_signature_nid(x))) : 0;
}

/* The certificate's version (3 for X.509v3). */
static int fetch_version(const struct smp_arg *a, struct sample *smp, struct stream *s,
                         const void *priv)
{
	X509 *x = smp_cert(s, priv);

	return x ? smp_set_int(smp, X509_get_version(x) + 1) : 0;
}

/* ---- the client certificate's verification ---- */

/* ssl_fc_has_crt: the client gave a certificate on this connection. */
static int fetch_ssl_fc_has_crt(const struct smp_arg *a, struct sample *smp, struct stream *s,
                                const void *priv)
{
	if (!s->cli.ssl)
		return 0;
	return smp_set_bool(smp, SSL_get0_peer_certificate(s->cli.ssl) &&
			    !SSL_session_reused(s->cli.ssl));
}

/* ssl_c_used: the session uses a client certificate (given now or before
 * the resumption). */
static int fetch_ssl_c_used(const struct smp_arg *a, struct sample *smp, struct stream *s,
                            const void *priv)
{
	return s->cli.ssl ? smp_set_bool(smp, SSL_get0_peer_certificate(s->cli.ssl) != NULL) : 0;
}

static int fetch_ssl_c_verify(const struct smp_arg *a, struct sample *smp, struct stream *s,
                              const void *priv)
{
	return s->cli.ssl ? smp_set_int(smp, SSL_get_verify_result(s->cli.ssl)) : 0;
}

/* ssl_c_err, ssl_c_ca_err, ssl_c_ca_err_depth: the first verification
 * errors (ignored ones included: crt-ignore-err, ca-ignore-err); the row's
 * .priv picks one. */
enum { VERR_CRT, VERR_CA, VERR_CA_DEPTH };
static const int verr_which[] = { VERR_CRT, VERR_CA, VERR_CA_DEPTH };

static int fetch_verify_err(const struct smp_arg *a, struct sample *smp, struct stream *s,
                            const void *priv)
{
	const struct ssl_sock_ext *x = s->cli.ssl ? ssl_sock_ext(s->cli.ssl, 0) : NULL;
	int which = *(const int *)priv;

	if (!s->cli.ssl)
		return 0;
	if (!x)
		return smp_set_int(smp, 0);
	return smp_set_int(smp, which == VERR_CRT ? x->crt_err :
			   which == VERR_CA ? x->ca_err : x->ca_err_depth);
}

#define L4 SMP_USE_L4
#define C .priv = &crt_which[CRT_CLIENT]
#define F .priv = &crt_which[CRT_FRONT]
#define S .priv = &crt_which[CRT_SERVER]
#define DN_ARGS { ARGT_STR, ARGT_SINT, ARGT_STR }

static const struct smp_fetch_kw smp_ssl_cert_fetches[] = {
	{ "ssl_fc_has_crt", fetch_ssl_fc_has_crt, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_c_used", fetch_ssl_c_used, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_c_verify", fetch_ssl_c_verify, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "ssl_c_err", fetch_verify_err, { 0 }, 0, SMP_T_SINT, L4, NULL, &verr_which[VERR_CRT] },
	{ "ssl_c_ca_err", fetch_verify_err, { 0 }, 0, SMP_T_SINT, L4, NULL, &verr_which[VERR_CA] },
	{ "ssl_c_ca_err_depth", fetch_verify_err, { 0 }, 0, SMP_T_SINT, L4, NULL,
	  &verr_which[VERR_CA_DEPTH] },
	{ "ssl_c_s_dn", fetch_s_dn, DN_ARGS, 0, SMP_T_STR, L4, NULL, C },
	{ "ssl_c_i_dn", fetch_i_dn, DN_ARGS, 0, SMP_T_STR, L4, NULL, C },
	{ "ssl_c_serial", fetch_serial, { 0 }, 0, SMP_T_BIN, L4, NULL, C },
	{ "ssl_c_sha1", fetch_sha1, { 0 }, 0, SMP_T_BIN, L4, NULL, C },
	{ "ssl_c_der", fetch_der, { 0 }, 0, SMP_T_BIN, L4, NULL, C },
	{ "ssl_c_chain_der", fetch_chain_der, { 0 }, 0, SMP_T_BIN, L4, NULL, C },
	{ "ssl_c_notbefore", fetch_notbefore, { 0 }, 0, SMP_T_STR, L4, NULL, C },
	{ "ssl_c_notafter", fetch_notafter, { 0 }, 0, SMP_T_STR, L4, NULL, C },
	{ "ssl_c_key_alg", fetch_key_alg, { 0 }, 0, SMP_T_STR, L4, NULL, C },
	{ "ssl_c_sig_alg", fetch_sig_alg, { 0 }, 0, SMP_T_STR, L4, NULL, C },
	{ "ssl_c_version", fetch_version, { 0 }, 0, SMP_T_SINT, L4, NULL, C },
	{ "ssl_f_s_dn", fetch_s_dn, DN_ARGS, 0, SMP_T_STR, L4, NULL, F },
	{ "ssl_f_i_dn", fetch_i_dn, DN_ARGS, 0, SMP_T_STR, L4, NULL, F },
	{ "ssl_f_serial", fetch_serial, { 0 }, 0, SMP_T_BIN, L4, NULL, F },
	{ "ssl_f_sha1", fetch_sha1, { 0 }, 0, SMP_T_BIN, L4, NULL, F },
	{ "ssl_f_der", fetch_der, { 0 }, 0, SMP_T_BIN, L4, NULL, F },
	{ "ssl_f_notbefore", fetch_notbefore, { 0 }, 0, SMP_T_STR, L4, NULL, F },
	{ "ssl_f_notafter", fetch_notafter, { 0 }, 0, SMP_T_STR, L4, NULL, F },
	{ "ssl_f_key_alg", fetch_key_alg, { 0 }, 0, SMP_T_STR, L4, NULL, F },
	{ "ssl_f_sig_alg", fetch_sig_alg, { 0 }, 0, SMP_T_STR, L4, NULL, F },
	{ "ssl_f_version", fetch_version, { 0 }, 0, SMP_T_SINT, L4, NULL, F },
	{ "ssl_s_s_dn", fetch_s_dn, DN_ARGS, 0, SMP_T_STR, L4, NULL, S },
	{ "ssl_s_i_dn", fetch_i_dn, DN_ARGS, 0, SMP_T_STR, L4, NULL, S },
	{ "ssl_s_serial", fetch_serial, { 0 }, 0, SMP_T_BIN, L4, NULL, S },
	{ "ssl_s_sha1", fetch_sha1, { 0 }, 0, SMP_T_BIN, L4, NULL, S },
	{ "ssl_s_der", fetch_der, { 0 }, 0, SMP_T_BIN, L4, NULL, S },
	{ "ssl_s_chain_der", fetch_chain_der, { 0 }, 0, SMP_T_BIN, L4, NULL, S },
	{ "ssl_s_notbefore", fetch_notbefore, { 0 }, 0, SMP_T_STR, L4, NULL, S },
	{ "ssl_s_notafter", fetch_notafter, { 0 }, 0, SMP_T_STR, L4, NULL, S },
	{ "ssl_s_key_alg", fetch_key_alg, { 0 }, 0, SMP_T_STR, L4, NULL, S },
	{ "ssl_s_sig_alg", fetch_sig_alg, { 0 }, 0, SMP_T_STR, L4, NULL, S },
	{ "ssl_s_version", fetch_version, { 0 }, 0, SMP_T_SINT, L4, NULL, S },
};

SLUICE_INIT(smp_register_ssl_cert)
{
	smp_register_fetches(smp_ssl_cert_fetches, ARRAY_SIZE(smp_ssl_cert_fetches));
}

#endif
