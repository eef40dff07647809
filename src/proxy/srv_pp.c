/* The PROXY v2 TLVs a server gets: the server options that ask for them
 * (send-proxy-v2-ssl, send-proxy-v2-ssl-cn, their no- forms,
 * proxy-v2-options) and the header built for each connection: ALPN, SSL
 * (version, client certificate, CN, cipher, our certificate's algorithms),
 * authority, unique ID, CRC32c (srv_pp.h). */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_OPENSSL
#include <openssl/ssl.h>
#include <openssl/x509.h>
#endif

#include <sluice/common.h>
#include <sluice/lb.h>
#include <sluice/proxyproto.h>
#include <sluice/server.h>
#include <sluice/srv_pp.h>
#include <sluice/str.h>
#include <sluice/stream.h>

#define PP2_TYPE_ALPN           0x01
#define PP2_TYPE_AUTHORITY      0x02
#define PP2_TYPE_CRC32C         0x03
#define PP2_TYPE_UNIQUE_ID      0x05
#define PP2_TYPE_SSL            0x20
#define PP2_SUBTYPE_SSL_VERSION 0x21
#define PP2_SUBTYPE_SSL_CN      0x22
#define PP2_SUBTYPE_SSL_CIPHER  0x23
#define PP2_SUBTYPE_SSL_SIG_ALG 0x24
#define PP2_SUBTYPE_SSL_KEY_ALG 0x25

#define PP2_CLIENT_SSL          0x01
#define PP2_CLIENT_CERT_CONN    0x02
#define PP2_CLIENT_CERT_SESS    0x04

static size_t (*pp_unique_id)(struct stream *s, char *out, size_t size);

void srv_pp_register_unique_id(size_t (*fn)(struct stream *s, char *out, size_t size))
{
	pp_unique_id = fn;
}

/* Appends TLV <type> of <len> bytes at out[*o] (bounded by <sz>). Returns
 * where its value starts, NULL when it does not fit. */
static char *pp_tlv(char *out, size_t *o, size_t sz, int type, const void *v, size_t len)
{
	char *p;

	if (len > 0xffff || *o + 3 + len > sz)
		return NULL;
	p = out + *o;
	p[0] = (char)type;
	p[1] = (char)(len >> 8);
	p[2] = (char)len;
	if (v)
		memcpy(p + 3, v, len);
	*o += 3 + len;
	return p + 3;
}

#ifdef USE_OPENSSL
/* The SSL TLV of the client connection <ssl> (NULL: not TLS), with the
 * sub-TLVs <opts> asks for. */
static void pp_tlv_ssl(char *out, size_t *o, size_t sz, SSL *ssl, unsigned opts)
{
	size_t start = *o, sub;
	char *v = pp_tlv(out, o, sz, PP2_TYPE_SSL, NULL, 5);
	X509 *peer = ssl ? SSL_get0_peer_certificate(ssl) : NULL;
	X509 *own = ssl ? SSL_get_certificate(ssl) : NULL;
	uint32_t verify = htonl(1);
	unsigned char client = 0;
	const char *s;
	char buf[256];

	if (!v)
		return;
	if (ssl) {
		SSL_SESSION *sess = SSL_get_session(ssl);

		client |= PP2_CLIENT_SSL;
		if (sess && SSL_SESSION_get0_peer(sess)) {
			client |= PP2_CLIENT_CERT_SESS;
			verify = htonl((uint32_t)SSL_get_verify_result(ssl));
		}
		if (peer && !SSL_session_reused(ssl))
			client |= PP2_CLIENT_CERT_CONN;
		s = SSL_get_version(ssl);
		pp_tlv(out, o, sz, PP2_SUBTYPE_SSL_VERSION, s, strlen(s));
		if ((opts & SRV_PP_CERT_CN) && peer &&
		    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf,
					      sizeof(buf)) > 0)
			pp_tlv(out, o, sz, PP2_SUBTYPE_SSL_CN, buf, strlen(buf));
		if ((opts & SRV_PP_CIPHER) && (s = SSL_get_cipher_name(ssl)))
			pp_tlv(out, o, sz, PP2_SUBTYPE_SSL_CIPHER, s, strlen(s));
		if ((opts & SRV_PP_CERT_SIG) && own) {
			int md = NID_undef, pk = NID_undef;

			if (OBJ_find_sigid_algs(X509_get_signature_nid(own), &md, &pk) && md != NID_undef)
				s = OBJ_nid2sn(md);
			else
				s = OBJ_nid2sn(X509_get_signature_nid(own));
			pp_tlv(out, o, sz, PP2_SUBTYPE_SSL_SIG_ALG, s, strlen(s));
		}
		if ((opts & SRV_PP_CERT_KEY) && own) {
			EVP_PKEY *k = X509_get0_pubkey(own);
			int n = k ? snprintf(buf, sizeof(buf), "%s%d",
					     EVP_PKEY_base_id(k) == EVP_PKEY_EC ? "EC" :
					     EVP_PKEY_base_id(k) == EVP_PKEY_RSA ? "RSA" :
					     OBJ_nid2sn(EVP_PKEY_base_id(k)), EVP_PKEY_get_bits(k)) : 0;

			if (n > 0)
				pp_tlv(out, o, sz, PP2_SUBTYPE_SSL_KEY_ALG, buf, (size_t)n);
		}
	}
	/* the value: client, verify, then the sub-TLVs; its length covers them */
	v[0] = (char)client;
	memcpy(v + 1, &verify, 4);
	sub = *o - start - 3;
	out[start + 1] = (char)(sub >> 8);
	out[start + 2] = (char)sub;
}
#endif

size_t srv_pp_build(struct stream *s, int version, const struct sockaddr_storage *src,
                    const struct sockaddr_storage *dst, char *out, size_t sz)
{
	unsigned opts = s->ss.target ? s->ss.target->pp_opts : 0;
	size_t o = pp_build(version, src, dst, out, sz), crc = 0;
#ifdef USE_OPENSSL
	SSL *ssl = s->cli.ssl;
#endif

	if (version != 2)
		return o;
#ifdef USE_OPENSSL
	if (ssl) {
		const unsigned char *alpn = NULL;
		unsigned int alen = 0;
		const char *sni;

		SSL_get0_alpn_selected(ssl, &alpn, &alen);
		if (alpn && alen)
			pp_tlv(out, &o, sz, PP2_TYPE_ALPN, alpn, alen);
		if ((opts & SRV_PP_AUTHORITY) &&
		    (sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)))
			pp_tlv(out, &o, sz, PP2_TYPE_AUTHORITY, sni, strlen(sni));
	}
	if (opts & SRV_PP_SSL)
		pp_tlv_ssl(out, &o, sz, ssl, opts);
#endif
	if ((opts & SRV_PP_UNIQUE_ID) && pp_unique_id) {
		char id[128];
		size_t n = pp_unique_id(s, id, sizeof(id));

		if (n)
			pp_tlv(out, &o, sz, PP2_TYPE_UNIQUE_ID, id, n);
	}
	if (opts & SRV_PP_CRC32C) {
		static const char zero[4];
		char *v = pp_tlv(out, &o, sz, PP2_TYPE_CRC32C, zero, 4);

		crc = v ? (size_t)(v - out) : 0;
	}
	/* the length after the fixed 16 bytes covers the addresses and TLVs */
	out[14] = (char)((o - 16) >> 8);
	out[15] = (char)(o - 16);
	if (crc) {
		uint32_t c = htonl(lb_hash(LB_H_CRC32C, 0, out, o));

		memcpy(out + crc, &c, 4);
	}
	return o;
}

/* ---- server options ---- */

/* send-proxy-v2-ssl(-cn): a v2 header with the SSL TLV (.set: the options). */
static int srv_pp_on(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                     char **err)
{
	srv->flags = (srv->flags & ~SRV_F_SEND_PROXY) | SRV_F_SEND_PROXY_V2;
	srv->pp_opts |= (unsigned)kw->set;
	return 1;
}

/* no-send-proxy-v2-ssl(-cn): cancels them, and the v2 header they asked for. */
static int srv_pp_off(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                      char **err)
{
	srv->flags &= ~SRV_F_SEND_PROXY_V2;
	srv->pp_opts &= ~(unsigned)kw->clr;
	return 1;
}

/* proxy-v2-options <opt>[,<opt>]* */
static int srv_pp_options(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "ssl", SRV_PP_SSL }, { "cert-cn", SRV_PP_SSL | SRV_PP_CERT_CN },
		{ "ssl-cipher", SRV_PP_SSL | SRV_PP_CIPHER },
		{ "cert-sig", SRV_PP_SSL | SRV_PP_CERT_SIG },
		{ "cert-key", SRV_PP_SSL | SRV_PP_CERT_KEY }, { "authority", SRV_PP_AUTHORITY },
		{ "crc32c", SRV_PP_CRC32C }, { "unique-id", SRV_PP_UNIQUE_ID },
	};
	char *dup, *save = NULL;
	unsigned v = 0;

	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("'proxy-v2-options' expects a comma-separated list of ssl, cert-cn, "
			       "ssl-cipher, cert-sig, cert-key, authority, crc32c, unique-id");
		return -1;
	}
	dup = xstrdup(argv[1]);
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(names) && strcmp(t, names[i].name) != 0; i++)
			;
		if (i == ARRAY_SIZE(names)) {
			*err = str_fmt("'proxy-v2-options': unknown option '%s' (expected ssl, "
				       "cert-cn, ssl-cipher, cert-sig, cert-key, authority, crc32c, "
				       "unique-id)", t);
			free(dup);
			return -1;
		}
		v |= names[i].bit;
	}
	free(dup);
	srv->pp_opts |= v;
	return 2;
}

static struct srv_kw srv_pp_kws[] = {
	{ "send-proxy-v2-ssl", .parse = srv_pp_on, .set = SRV_PP_SSL },
	{ "send-proxy-v2-ssl-cn", .parse = srv_pp_on, .set = SRV_PP_SSL | SRV_PP_CERT_CN },
	{ "no-send-proxy-v2-ssl", .parse = srv_pp_off, .clr = SRV_PP_SSL },
	{ "no-send-proxy-v2-ssl-cn", .parse = srv_pp_off, .clr = SRV_PP_SSL | SRV_PP_CERT_CN },
	{ "proxy-v2-options", .parse = srv_pp_options },
};

SLUICE_INIT(srv_pp_register)
{
	srv_register_keywords(srv_pp_kws, ARRAY_SIZE(srv_pp_kws));
}
