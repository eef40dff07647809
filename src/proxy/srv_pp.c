/* PROXY protocol headers sent to servers: the TLVs of a server's
 * proxy-v2-options (taken from the client connection: TLS, SNI, unique
 * ID), and the header of health checks (check-send-proxy, and
 * pp2-never-send-local for the v2 command they use). */
#include <stdio.h>
#include <string.h>

#ifdef USE_OPENSSL
#include <openssl/ssl.h>
#include <openssl/x509.h>
#endif

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/proxyproto.h>
#include <sluice/server.h>
#include <sluice/srv_pp.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/stream.h>

static const char *(*pp_unique_id)(struct stream *s, char *buf, size_t sz);

void srv_pp_register_unique_id(const char *(*fn)(struct stream *s, char *buf, size_t sz))
{
	pp_unique_id = fn;
}

#ifdef USE_OPENSSL
/* Appends sub-TLV <type> holding <v> (<len> bytes) at <o> + *<at>, within
 * <sz>. */
static void pp_sub_tlv(unsigned char *o, size_t *at, size_t sz, uint8_t type, const char *v,
                       size_t len)
{
	if (!v || *at + 3 + len > sz)
		return;
	o[*at] = type;
	o[*at + 1] = (unsigned char)(len >> 8);
	o[*at + 2] = (unsigned char)len;
	memcpy(o + *at + 3, v, len);
	*at += 3 + len;
}

/* The value of the PP2_TYPE_SSL TLV for client connection <c> into <o>
 * (<sz> bytes): client flags, verify result (0: a certificate was sent and
 * verified), then the version and what <opts> asks for. Returns its
 * length. */
static size_t pp_ssl_value(const struct conn *c, unsigned opts, unsigned char *o, size_t sz)
{
	SSL *ssl = c->ssl;
	X509 *peer = ssl ? SSL_get0_peer_certificate(ssl) : NULL;
	X509 *own = ssl ? SSL_get_certificate(ssl) : NULL;
	uint32_t verify = 1;
	size_t at = 5;
	char buf[256];

	o[0] = 0;
	if (ssl) {
		o[0] |= PP2_CLIENT_SSL;
		if (peer) {
			/* sent on this connection; a resumed session had it too */
			o[0] |= PP2_CLIENT_CERT_CONN | PP2_CLIENT_CERT_SESS;
			verify = SSL_get_verify_result(ssl) == X509_V_OK ? 0 : 1;
		}
		pp_sub_tlv(o, &at, sz, PP2_SUBTYPE_SSL_VERSION, ssl_sock_version(c),
			   strlen(ssl_sock_version(c) ? ssl_sock_version(c) : ""));
		if ((opts & SRV_PP_CN) && peer &&
		    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf,
					      sizeof(buf)) > 0)
			pp_sub_tlv(o, &at, sz, PP2_SUBTYPE_SSL_CN, buf, strlen(buf));
		if (opts & SRV_PP_CIPHER)
			pp_sub_tlv(o, &at, sz, PP2_SUBTYPE_SSL_CIPHER, ssl_sock_cipher(c),
				   ssl_sock_cipher(c) ? strlen(ssl_sock_cipher(c)) : 0);
		if ((opts & SRV_PP_SIG) && own) {
			const char *sn = OBJ_nid2sn(X509_get_signature_nid(own));

			pp_sub_tlv(o, &at, sz, PP2_SUBTYPE_SSL_SIG_ALG, sn, sn ? strlen(sn) : 0);
		}
		if ((opts & SRV_PP_KEY) && own && X509_get0_pubkey(own)) {
			EVP_PKEY *k = X509_get0_pubkey(own);
			int id = EVP_PKEY_get_base_id(k);
			int n = snprintf(buf, sizeof(buf), "%s%d", id == EVP_PKEY_RSA ? "RSA" :
					 id == EVP_PKEY_EC ? "EC" : id == EVP_PKEY_DSA ? "DSA" :
					 OBJ_nid2sn(id), EVP_PKEY_get_bits(k));

			pp_sub_tlv(o, &at, sz, PP2_SUBTYPE_SSL_KEY_ALG, buf, (size_t)n);
		}
	}
	o[1] = (unsigned char)(verify >> 24);
	o[2] = (unsigned char)(verify >> 16);
	o[3] = (unsigned char)(verify >> 8);
	o[4] = (unsigned char)verify;
	return at;
}
#endif

size_t srv_pp_header(struct stream *s, int version, char *out, size_t sz)
{
	const struct server *srv = s->ss.target;
	const unsigned opts = srv->pp_opts;
	const struct sockaddr_storage *dst = stream_dst(s);
	int ip = (s->cli_addr.ss_family == AF_INET || s->cli_addr.ss_family == AF_INET6) &&
		 s->cli_addr.ss_family == dst->ss_family;
	struct pp_tlv tlv[4];
	unsigned char ssl_val[512];
	const unsigned char *alpn = NULL;
	unsigned int alpn_len = 0;
	char id[256];
	int n = 0;

#ifdef USE_OPENSSL
	/* the protocol the client chose by ALPN goes with any v2 header */
	if (version == 2 && s->cli.ssl)
		SSL_get0_alpn_selected(s->cli.ssl, &alpn, &alpn_len);
#endif
	if (version == 1 || (!opts && !alpn_len))
		return pp_build(version, &s->cli_addr, dst, out, sz);
	if (alpn_len)
		tlv[n++] = (struct pp_tlv){ PP2_TYPE_ALPN, (uint16_t)alpn_len, alpn };
#ifdef USE_OPENSSL
	if (opts & SRV_PP_AUTHORITY) {
		const char *sni = s->cli.ssl ? SSL_get_servername(s->cli.ssl,
								  TLSEXT_NAMETYPE_host_name) : NULL;

		if (sni && *sni)
			tlv[n++] = (struct pp_tlv){ PP2_TYPE_AUTHORITY, (uint16_t)strlen(sni), sni };
	}
#endif
	if ((opts & SRV_PP_UNIQUE_ID) && pp_unique_id) {
		const char *u = pp_unique_id(s, id, sizeof(id));

		/* at most 128 bytes, the specification says */
		if (u && *u)
			tlv[n++] = (struct pp_tlv){ PP2_TYPE_UNIQUE_ID, (uint16_t)MIN(strlen(u), 128),
						    u };
	}
#ifdef USE_OPENSSL
	if (opts & SRV_PP_SSL)
		tlv[n++] = (struct pp_tlv){ PP2_TYPE_SSL,
					    (uint16_t)pp_ssl_value(&s->cli, opts, ssl_val,
								   sizeof(ssl_val)), ssl_val };
#else
	(void)ssl_val;
#endif
	return pp_build_v2(ip ? PP_V2_PROXY : PP_V2_LOCAL, &s->cli_addr, dst, tlv, n,
			   !!(opts & SRV_PP_CRC32C), out, sz);
}

int srv_pp_check_wanted(const struct server *srv)
{
	/* as HAProxy: the traffic's PROXY header when the check goes where
	 * the traffic goes, else only with check-send-proxy */
	return (srv->flags & SRV_F_CHECK_SEND_PROXY) ||
	       ((srv->flags & (SRV_F_SEND_PROXY | SRV_F_SEND_PROXY_V2)) && !srv->check.port &&
		!srv->check.has_addr);
}

size_t srv_pp_check_header(const struct server *srv, int fd, char *out, size_t sz)
{
	static const struct sockaddr_storage none = { .ss_family = AF_UNSPEC };

	if (fd >= 0) {
		/* a connect rule's send-proxy: the addresses of its connection */
		struct sockaddr_storage src, dst;
		socklen_t sl = sizeof(src), dl = sizeof(dst);

		if (getsockname(fd, (struct sockaddr *)&src, &sl) == -1 ||
		    getpeername(fd, (struct sockaddr *)&dst, &dl) == -1)
			src = dst = none;
		if (!(srv->flags & SRV_F_SEND_PROXY_V2))
			return pp_build(1, &src, &dst, out, sz);
		return pp_build_v2(src.ss_family == AF_UNSPEC ? PP_V2_LOCAL : PP_V2_PROXY, &src, &dst,
				   NULL, 0, !!(srv->pp_opts & SRV_PP_CRC32C), out, sz);
	}
	if (!srv_pp_check_wanted(srv))
		return 0;
	if (!(srv->flags & SRV_F_SEND_PROXY_V2))
		return pp_build(1, &none, &none, out, sz);   /* PROXY UNKNOWN */
	return pp_build_v2((global.tune_flags & GLB_T_PP2_NEVER_LOCAL) ? PP_V2_PROXY : PP_V2_LOCAL,
			   &none, &none, NULL, 0, !!(srv->pp_opts & SRV_PP_CRC32C), out, sz);
}

/* ---- keywords ---- */

static const struct {
	const char *name;
	unsigned    opts;
} pp_opt_names[] = {
	{ "ssl", SRV_PP_SSL },
	{ "cert-cn", SRV_PP_SSL | SRV_PP_CN },
	{ "ssl-cipher", SRV_PP_SSL | SRV_PP_CIPHER },
	{ "cert-sig", SRV_PP_SSL | SRV_PP_SIG },
	{ "cert-key", SRV_PP_SSL | SRV_PP_KEY },
	{ "authority", SRV_PP_AUTHORITY },
	{ "crc32c", SRV_PP_CRC32C },
	{ "unique-id", SRV_PP_UNIQUE_ID },
};

/* proxy-v2-options <opt>[,<opt>]* */
static int srv_pp_options_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                             char **err)
{
	const char *p = argc > 1 ? argv[1] : "";

	if (!*p) {
		*err = str_fmt("expects a comma-separated list of ssl, cert-cn, ssl-cipher, "
			       "cert-sig, cert-key, authority, crc32c, unique-id");
		return -1;
	}
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(pp_opt_names); i++)
			if (strlen(pp_opt_names[i].name) == len &&
			    strncmp(p, pp_opt_names[i].name, len) == 0)
				break;
		if (i == ARRAY_SIZE(pp_opt_names)) {
			*err = str_fmt("unknown option '%.*s' (expects ssl, cert-cn, ssl-cipher, "
				       "cert-sig, cert-key, authority, crc32c or unique-id)", (int)len, p);
			return -1;
		}
		srv->pp_opts |= pp_opt_names[i].opts;
		p += len + (p[len] == ',');
	}
	return 2;
}

/* send-proxy-v2-ssl[-cn] (send-proxy-v2 with the TLS TLVs), their no- forms
 * and check-send-proxy: the row's flags (.set/.clr) and TLVs (.arg). */
static int srv_pp_flag_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	srv->flags = (srv->flags & ~(unsigned)kw->clr) | (unsigned)kw->set;
	if (kw->set)
		srv->pp_opts |= (unsigned)kw->arg;
	else
		srv->pp_opts &= ~(unsigned)kw->arg;
	return 1;
}

static struct srv_kw srv_pp_kws[] = {
	{ "proxy-v2-options", .parse = srv_pp_options_kw },
	{ "send-proxy-v2-ssl", .parse = srv_pp_flag_kw, .set = SRV_F_SEND_PROXY_V2,
	  .clr = SRV_F_SEND_PROXY, .arg = SRV_PP_SSL },
	{ "send-proxy-v2-ssl-cn", .parse = srv_pp_flag_kw, .set = SRV_F_SEND_PROXY_V2,
	  .clr = SRV_F_SEND_PROXY, .arg = SRV_PP_SSL | SRV_PP_CN },
	{ "no-send-proxy-v2-ssl", .parse = srv_pp_flag_kw, .clr = SRV_F_SEND_PROXY_V2,
	  .arg = SRV_PP_SSL },
	{ "no-send-proxy-v2-ssl-cn", .parse = srv_pp_flag_kw, .clr = SRV_F_SEND_PROXY_V2,
	  .arg = SRV_PP_SSL | SRV_PP_CN },
	{ "check-send-proxy", .parse = srv_pp_flag_kw, .set = SRV_F_CHECK_SEND_PROXY },
};

static struct cfg_kw srv_pp_cfg_kws[] = {
	{ "pp2-never-send-local", CFG_SEC_GLOBAL, CFG_T_FLAG,
	  offsetof(struct global, tune_flags), .mask = GLB_T_PP2_NEVER_LOCAL },
};

SLUICE_INIT(srv_pp_register)
{
	srv_register_keywords(srv_pp_kws, ARRAY_SIZE(srv_pp_kws));
	cfg_register(srv_pp_cfg_kws, ARRAY_SIZE(srv_pp_cfg_kws));
}
