/* TLS sample fetches: ssl_fc* (the client connection), ssl_c_* (the client's
 * certificate), ssl_bc* (the server connection). Rows of the fetch table
 * (sample.h), registered at start-up. */
#ifdef USE_OPENSSL
#include <string.h>

#include <openssl/ssl.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/stream.h>

static int smp_set_bool(struct sample *smp, int v)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = !!v;
	return 1;
}

static int fetch_ssl_fc(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	return smp_set_bool(smp, s->cli.ssl != NULL);
}

static int fetch_ssl_bc(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	return smp_set_bool(smp, s->srv.fd >= 0 && s->srv.ssl != NULL);
}

static int fetch_ssl_fc_sni(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	return s->cli.ssl ? smp_set_str(smp, SSL_get_servername(s->cli.ssl,
								 TLSEXT_NAMETYPE_host_name)) : 0;
}

static int fetch_ssl_fc_has_sni(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	return s->cli.ssl ? smp_set_bool(smp, SSL_get_servername(s->cli.ssl,
								  TLSEXT_NAMETYPE_host_name) != NULL) : 0;
}

/* The TLS session of the client side (<a> unused), or of the server side
 * for the ssl_bc_* rows: the row's name says which. */
static SSL *smp_ssl(struct stream *s, int back)
{
	return back ? (s->srv.fd >= 0 ? s->srv.ssl : NULL) : s->cli.ssl;
}

static int fetch_protocol(struct sample *smp, SSL *ssl)
{
	return ssl ? smp_set_str(smp, SSL_get_version(ssl)) : 0;
}

static int fetch_ssl_fc_protocol(const struct smp_arg *a, struct sample *smp, struct stream *s,
				 const void *priv)
{
	return fetch_protocol(smp, smp_ssl(s, 0));
}

static int fetch_ssl_bc_protocol(const struct smp_arg *a, struct sample *smp, struct stream *s,
				 const void *priv)
{
	return fetch_protocol(smp, smp_ssl(s, 1));
}

static int fetch_cipher(struct sample *smp, SSL *ssl)
{
	return ssl ? smp_set_str(smp, SSL_get_cipher_name(ssl)) : 0;
}

static int fetch_ssl_fc_cipher(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	return fetch_cipher(smp, smp_ssl(s, 0));
}

static int fetch_ssl_bc_cipher(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	return fetch_cipher(smp, smp_ssl(s, 1));
}

static int fetch_alpn(struct sample *smp, SSL *ssl)
{
	const unsigned char *p = NULL;
	unsigned int len = 0;

	if (!ssl)
		return 0;
	SSL_get0_alpn_selected(ssl, &p, &len);
	if (!p || !len)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = (const char *)p;
	smp->u.str.len = len;
	return 1;
}

static int fetch_ssl_fc_alpn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			     const void *priv)
{
	return fetch_alpn(smp, smp_ssl(s, 0));
}

static int fetch_ssl_bc_alpn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			     const void *priv)
{
	return fetch_alpn(smp, smp_ssl(s, 1));
}

/* ssl_fc_has_crt, ssl_c_used: the client gave a certificate (this
 * connection, or the session it resumed). */
static int fetch_ssl_c_used(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	return s->cli.ssl ? smp_set_bool(smp, SSL_get0_peer_certificate(s->cli.ssl) != NULL) : 0;
}

static int fetch_ssl_fc_is_resumed(const struct smp_arg *a, struct sample *smp,
                                   struct stream *s, const void *priv)
{
	return s->cli.ssl ? smp_set_bool(smp, SSL_session_reused(s->cli.ssl)) : 0;
}

static int fetch_ssl_c_verify(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	return s->cli.ssl ? smp_set_int(smp, SSL_get_verify_result(s->cli.ssl)) : 0;
}

/* A distinguished name in the "/C=../CN=.." form, in the scratch area; with
 * an entry argument (<a>[0], e.g. "CN"), that entry's value only: occurrence
 * <a>[1] (1 the first, -1 the last, the default). */
static int smp_set_dn(struct sample *smp, X509_NAME *name, const struct smp_arg *a)
{
	char *buf = smp_scratch_get();
	int nid, idx = -1, occ, n = 0;
	unsigned char *utf8;
	int len;

	if (!name)
		return 0;
	if (a[0].type != ARGT_STR || !a[0].str || !*a[0].str) {
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
	occ = a[1].type == ARGT_SINT && a[1].sint ? (int)a[1].sint : -1;
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

static int fetch_ssl_c_s_dn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	X509 *x = s->cli.ssl ? SSL_get0_peer_certificate(s->cli.ssl) : NULL;

	return x ? smp_set_dn(smp, X509_get_subject_name(x), a) : 0;
}

static int fetch_ssl_c_i_dn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	X509 *x = s->cli.ssl ? SSL_get0_peer_certificate(s->cli.ssl) : NULL;

	return x ? smp_set_dn(smp, X509_get_issuer_name(x), a) : 0;
}

/* The serial number, binary (HAProxy's form: hex it with ",hex"). */
static int fetch_ssl_c_serial(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	X509 *x = s->cli.ssl ? SSL_get0_peer_certificate(s->cli.ssl) : NULL;
	const ASN1_INTEGER *ser;
	char *buf;
	int len;

	if (!x || !(ser = X509_get0_serialNumber(x)))
		return 0;
	len = ASN1_STRING_length(ser);
	if (len <= 0 || len > SMP_SCRATCH_SIZE)
		return 0;
	buf = smp_scratch_get();
	memcpy(buf, ASN1_STRING_get0_data(ser), (size_t)len);
	smp->type = SMP_T_BIN;
	smp->u.str.p = buf;
	smp->u.str.len = (size_t)len;
	return 1;
}

#define L4 SMP_USE_L4

static const struct smp_fetch_kw smp_ssl_fetches[] = {
	{ "ssl_fc",          fetch_ssl_fc,          { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_fc_sni",      fetch_ssl_fc_sni,      { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "ssl_fc_has_sni",  fetch_ssl_fc_has_sni,  { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_fc_protocol", fetch_ssl_fc_protocol, { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "ssl_fc_cipher",   fetch_ssl_fc_cipher,   { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "ssl_fc_alpn",     fetch_ssl_fc_alpn,     { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "ssl_fc_is_resumed", fetch_ssl_fc_is_resumed, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_fc_has_crt",  fetch_ssl_c_used,      { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_c_used",      fetch_ssl_c_used,      { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_c_verify",    fetch_ssl_c_verify,    { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "ssl_c_s_dn",      fetch_ssl_c_s_dn,      { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, L4, NULL,
	  NULL },
	{ "ssl_c_i_dn",      fetch_ssl_c_i_dn,      { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, L4, NULL,
	  NULL },
	{ "ssl_c_serial",    fetch_ssl_c_serial,    { 0 }, 0, SMP_T_BIN,  L4, NULL, NULL },
	{ "ssl_bc",          fetch_ssl_bc,          { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_bc_protocol", fetch_ssl_bc_protocol, { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "ssl_bc_cipher",   fetch_ssl_bc_cipher,   { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "ssl_bc_alpn",     fetch_ssl_bc_alpn,     { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
};

SLUICE_INIT(smp_register_ssl)
{
	smp_register_fetches(smp_ssl_fetches, ARRAY_SIZE(smp_ssl_fetches));
}

#endif
