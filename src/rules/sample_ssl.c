/* TLS sample fetches of the connections: ssl_fc* (the client connection:
 * SNI, version, cipher, ALPN/NPN, randoms, session, errors, early data,
 * the ClientHello capture, the key log) and ssl_bc* (the server
 * connection). The certificates' fetches are sample_ssl_cert.c. Rows of the
 * fetch table (sample.h), registered at start-up. */
#ifdef USE_OPENSSL
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/ssl.h>
#include <sluice/stream.h>

/* Which connection a row reads: its .priv. */
static const int SIDE_FC = 0, SIDE_BC = 1;

/* The TLS session of the side <priv> names (the server side once connected). */
static SSL *smp_ssl(struct stream *s, const void *priv)
{
	if (*(const int *)priv == SIDE_BC)
		return s->srv.fd >= 0 ? s->srv.ssl : NULL;
	return s->cli.ssl;
}

/* <len> bytes of <p> as a binary sample (copied to the scratch area). */
static int smp_set_bin(struct sample *smp, const void *p, size_t len)
{
	return smp_set_copy(smp, SMP_T_BIN, p, len);
}

/* ssl_fc, ssl_bc: the connection uses TLS. */
static int fetch_ssl(const struct smp_arg *a, struct sample *smp, struct stream *s,
                     const void *priv)
{
	return smp_set_bool(smp, smp_ssl(s, priv) != NULL);
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

static int fetch_protocol(const struct smp_arg *a, struct sample *smp, struct stream *s,
                          const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);

	return ssl ? smp_set_str(smp, SSL_get_version(ssl)) : 0;
}

static int fetch_cipher(const struct smp_arg *a, struct sample *smp, struct stream *s,
                        const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);

	return ssl ? smp_set_str(smp, SSL_get_cipher_name(ssl)) : 0;
}

/* ssl_fc_alg_keysize, ssl_bc_alg_keysize: the cipher's key size in bits. */
static int fetch_alg_keysize(const struct smp_arg *a, struct sample *smp, struct stream *s,
                             const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);
	int alg = 0;

	if (!ssl || !SSL_get_current_cipher(ssl))
		return 0;
	SSL_CIPHER_get_bits(SSL_get_current_cipher(ssl), &alg);
	return smp_set_int(smp, alg);
}

/* ssl_fc_use_keysize, ssl_bc_use_keysize: the bits of the key actually used. */
static int fetch_use_keysize(const struct smp_arg *a, struct sample *smp, struct stream *s,
                             const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);

	if (!ssl || !SSL_get_current_cipher(ssl))
		return 0;
	return smp_set_int(smp, SSL_CIPHER_get_bits(SSL_get_current_cipher(ssl), NULL));
}

/* A negotiated protocol name (ALPN, NPN) as a constant string. */
static int smp_set_proto(struct sample *smp, const unsigned char *p, unsigned len)
{
	if (!p || !len)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = (const char *)p;
	smp->u.str.len = len;
	return 1;
}

static int fetch_alpn(const struct smp_arg *a, struct sample *smp, struct stream *s,
                      const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);
	const unsigned char *p = NULL;
	unsigned int len = 0;

	if (!ssl)
		return 0;
	SSL_get0_alpn_selected(ssl, &p, &len);
	return smp_set_proto(smp, p, len);
}

static int fetch_npn(const struct smp_arg *a, struct sample *smp, struct stream *s,
                     const void *priv)
{
#ifndef OPENSSL_NO_NEXTPROTONEG
	SSL *ssl = smp_ssl(s, priv);
	const unsigned char *p = NULL;
	unsigned int len = 0;

	if (!ssl)
		return 0;
	SSL_get0_next_proto_negotiated(ssl, &p, &len);
	return smp_set_proto(smp, p, len);
#else
	return 0;
#endif
}

static int fetch_is_resumed(const struct smp_arg *a, struct sample *smp, struct stream *s,
                            const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);

	/* false on a connection without TLS (as HAProxy: option httpslog shows 0) */
	if (!ssl && *(const int *)priv == SIDE_BC && s->srv.fd < 0)
		return 0;
	return smp_set_bool(smp, ssl && SSL_session_reused(ssl));
}

/* ssl_fc_client_random, ssl_bc_client_random (row arg 0), the server
 * randoms (arg 1): the 32 bytes of the hello. */
static int fetch_random(struct sample *smp, SSL *ssl, int server)
{
	unsigned char r[SSL3_RANDOM_SIZE];
	size_t n;

	if (!ssl)
		return 0;
	n = server ? SSL_get_server_random(ssl, r, sizeof(r)) : SSL_get_client_random(ssl, r, sizeof(r));
	return n ? smp_set_bin(smp, r, n) : 0;
}

static int fetch_client_random(const struct smp_arg *a, struct sample *smp, struct stream *s,
                               const void *priv)
{
	return fetch_random(smp, smp_ssl(s, priv), 0);
}

static int fetch_server_random(const struct smp_arg *a, struct sample *smp, struct stream *s,
                               const void *priv)
{
	return fetch_random(smp, smp_ssl(s, priv), 1);
}

static int fetch_session_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
                            const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);
	SSL_SESSION *sess = ssl ? SSL_get_session(ssl) : NULL;
	const unsigned char *id;
	unsigned int len = 0;

	if (!sess)
		return 0;
	id = SSL_SESSION_get_id(sess, &len);
	return len ? smp_set_bin(smp, id, len) : 0;
}

static int fetch_session_key(const struct smp_arg *a, struct sample *smp, struct stream *s,
                             const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);
	SSL_SESSION *sess = ssl ? SSL_get_session(ssl) : NULL;
	unsigned char key[SSL_MAX_MASTER_KEY_LENGTH];
	size_t n;

	if (!sess)
		return 0;
	n = SSL_SESSION_get_master_key(sess, key, sizeof(key));
	return n ? smp_set_bin(smp, key, n) : 0;
}

/* ssl_fc_unique_id, ssl_bc_unique_id: RFC 5929's tls-unique, the first
 * Finished message of the latest handshake: the client's on a full
 * handshake, the server's on a resumption. */
static int fetch_unique_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
                           const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);
	unsigned char buf[64];
	size_t n;
	int own;

	if (!ssl)
		return 0;
	/* our own Finished is the first when we are the client of a full
	 * handshake or the server of a resumed one */
	own = SSL_is_server(ssl) ? SSL_session_reused(ssl) : !SSL_session_reused(ssl);
	n = own ? SSL_get_finished(ssl, buf, sizeof(buf)) : SSL_get_peer_finished(ssl, buf, sizeof(buf));
	return n ? smp_set_bin(smp, buf, MIN(n, sizeof(buf))) : 0;
}

/* ssl_fc_err, ssl_bc_err: the first OpenSSL error of the connection, 0: none. */
static int fetch_err(const struct smp_arg *a, struct sample *smp, struct stream *s,
                     const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);
	const struct ssl_sock_ext *x = ssl ? ssl_sock_ext(ssl, 0) : NULL;

	return ssl ? smp_set_int(smp, x ? (int64_t)x->err : 0) : 0;
}

static int fetch_err_str(const struct smp_arg *a, struct sample *smp, struct stream *s,
                         const void *priv)
{
	SSL *ssl = smp_ssl(s, priv);
	const struct ssl_sock_ext *x = ssl ? ssl_sock_ext(ssl, 0) : NULL;

	return x && x->err ? smp_set_str(smp, ERR_reason_error_string(x->err)) : 0;
}

/* ssl_fc_has_early: early data came and the handshake is not over yet. */
static int fetch_ssl_fc_has_early(const struct smp_arg *a, struct sample *smp,
                                  struct stream *s, const void *priv)
{
	const struct ssl_sock_ext *x = s->cli.ssl ? ssl_sock_ext(s->cli.ssl, 0) : NULL;

	if (!s->cli.ssl)
		return 0;
	return smp_set_bool(smp, x && x->early && (s->cli.flags & CO_F_SSL_EARLY));
}

/* ---- the ClientHello capture (tune.ssl.capture-buffer-size) ---- */

static const struct ssl_capture *smp_capture(struct stream *s)
{
	const struct ssl_sock_ext *x = s->cli.ssl ? ssl_sock_ext(s->cli.ssl, 0) : NULL;

	return x ? x->capture : NULL;
}

/* Which list of the capture a row reads: its .priv. */
enum { CAP_CIPHERS, CAP_EXTS, CAP_EC, CAP_ECF };
static const int cap_lists[] = { CAP_CIPHERS, CAP_EXTS, CAP_EC, CAP_ECF };

static const unsigned char *capture_list(const struct ssl_capture *c, int which, size_t *len)
{
	size_t off = 0;
	const uint16_t lens[] = { c->ciphers_len, c->ext_len, c->ec_len, c->ecf_len };

	for (int i = 0; i < which; i++)
		off += lens[i];
	*len = lens[which];
	return c->data + off;
}

/* RFC 8701 GREASE values: 0x?A?A with both bytes equal. */
static int grease(const unsigned char *p)
{
	return (p[0] & 0x0f) == 0x0a && p[0] == p[1];
}

/* The 2-byte list <p, len> into the scratch area, GREASE values left out
 * when <filter>. */
static int smp_set_list(struct sample *smp, const unsigned char *p, size_t len, int filter)
{
	char *buf = smp_scratch_get();
	size_t o = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		if (!filter || !grease(p + i)) {
			buf[o++] = (char)p[i];
			buf[o++] = (char)p[i + 1];
		}
	smp->type = SMP_T_BIN;
	smp->u.str.p = buf;
	smp->u.str.len = o;
	return 1;
}

/* ssl_fc_cipherlist_bin, ssl_fc_extlist_bin, ssl_fc_eclist_bin
 * ([filter]): a list of 2-byte values; ssl_fc_ecformats_bin: the bytes. */
static int fetch_capture_bin(const struct smp_arg *a, struct sample *smp, struct stream *s,
                             const void *priv)
{
	const struct ssl_capture *c = smp_capture(s);
	int which = *(const int *)priv;
	const unsigned char *p;
	size_t len;

	if (!c)
		return 0;
	p = capture_list(c, which, &len);
	if (which == CAP_ECF)
		return smp_set_bin(smp, p, len);
	return smp_set_list(smp, p, len, a[0].type == ARGT_SINT && a[0].sint == 1);
}

static int fetch_cipherlist_hex(const struct smp_arg *a, struct sample *smp, struct stream *s,
                                const void *priv)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	char *out;
	size_t n;

	if (!fetch_capture_bin(a, smp, s, priv))
		return 0;
	p = (const unsigned char *)smp->u.str.p;
	n = smp->u.str.len;
	out = smp_scratch_get();
	if (n * 2 > SMP_SCRATCH_SIZE)
		n = SMP_SCRATCH_SIZE / 2;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[p[i] >> 4];
		out[2 * i + 1] = hex[p[i] & 15];
	}
	smp->type = SMP_T_STR;
	smp->u.str.p = out;
	smp->u.str.len = n * 2;
	return 1;
}

/* ssl_fc_cipherlist_str: the suites' names, "UNKNOWN(xxxx)" for those
 * OpenSSL does not know. */
static int fetch_cipherlist_str(const struct smp_arg *a, struct sample *smp, struct stream *s,
                                const void *priv)
{
	const unsigned char *p;
	size_t n, o = 0;
	char *out;

	if (!fetch_capture_bin(a, smp, s, priv))
		return 0;
	p = (const unsigned char *)smp->u.str.p;
	n = smp->u.str.len;
	out = smp_scratch_get();
	for (size_t i = 0; i + 1 < n; i += 2) {
		const SSL_CIPHER *c = SSL_CIPHER_find(s->cli.ssl, p + i);
		const char *name = c ? SSL_CIPHER_get_name(c) : NULL;
		char unk[16];
		size_t l;

		if (!name || !strcmp(name, "(NONE)")) {
			snprintf(unk, sizeof(unk), "UNKNOWN(%02x%02x)", p[i], p[i + 1]);
			name = unk;
		}
		l = strlen(name);
		if (o + l + 1 >= SMP_SCRATCH_SIZE)
			break;
		if (o)
			out[o++] = ',';
		memcpy(out + o, name, l);
		o += l;
	}
	smp->type = SMP_T_STR;
	smp->u.str.p = out;
	smp->u.str.len = o;
	return 1;
}

static int fetch_cipherlist_xxh(const struct smp_arg *a, struct sample *smp, struct stream *s,
                                const void *priv)
{
	const struct ssl_capture *c = smp_capture(s);

	return c ? smp_set_int(smp, (int64_t)c->xxh64) : 0;
}

static int fetch_hello_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
                          const void *priv)
{
	const struct ssl_capture *c = smp_capture(s);

	return c ? smp_set_int(smp, c->hello_version) : 0;
}

/* ---- tune.ssl.keylog ---- */

static const int kl_labels[SSL_KL_N] = {
	SSL_KL_CLIENT_EARLY, SSL_KL_CLIENT_HS, SSL_KL_SERVER_HS, SSL_KL_CLIENT_TRAFFIC_0,
	SSL_KL_SERVER_TRAFFIC_0, SSL_KL_EXPORTER, SSL_KL_EARLY_EXPORTER,
};

/* A secret of the key log (the row's .priv: its label), in hex. */
static int fetch_secret(const struct smp_arg *a, struct sample *smp, struct stream *s,
                        const void *priv)
{
	const struct ssl_sock_ext *x = s->cli.ssl ? ssl_sock_ext(s->cli.ssl, 0) : NULL;

	return x ? smp_set_str(smp, x->keylog[*(const int *)priv]) : 0;
}

#define L4 SMP_USE_L4
#define FC .priv = &SIDE_FC
#define BC .priv = &SIDE_BC
#define F1 { ARGT_SINT }

static const struct smp_fetch_kw smp_ssl_fetches[] = {
	{ "ssl_fc", fetch_ssl, { 0 }, 0, SMP_T_BOOL, L4, NULL, FC },
	{ "ssl_fc_sni", fetch_ssl_fc_sni, { 0 }, 0, SMP_T_STR, L4, NULL, NULL },
	{ "ssl_fc_has_sni", fetch_ssl_fc_has_sni, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_fc_protocol", fetch_protocol, { 0 }, 0, SMP_T_STR, L4, NULL, FC },
	{ "ssl_fc_cipher", fetch_cipher, { 0 }, 0, SMP_T_STR, L4, NULL, FC },
	{ "ssl_fc_alg_keysize", fetch_alg_keysize, { 0 }, 0, SMP_T_SINT, L4, NULL, FC },
	{ "ssl_fc_use_keysize", fetch_use_keysize, { 0 }, 0, SMP_T_SINT, L4, NULL, FC },
	{ "ssl_fc_alpn", fetch_alpn, { 0 }, 0, SMP_T_STR, L4, NULL, FC },
	{ "ssl_fc_npn", fetch_npn, { 0 }, 0, SMP_T_STR, L4, NULL, FC },
	{ "ssl_fc_is_resumed", fetch_is_resumed, { 0 }, 0, SMP_T_BOOL, L4, NULL, FC },
	{ "ssl_fc_client_random", fetch_client_random, { 0 }, 0, SMP_T_BIN, L4, NULL, FC },
	{ "ssl_fc_server_random", fetch_server_random, { 0 }, 0, SMP_T_BIN, L4, NULL, FC },
	{ "ssl_fc_session_id", fetch_session_id, { 0 }, 0, SMP_T_BIN, L4, NULL, FC },
	{ "ssl_fc_session_key", fetch_session_key, { 0 }, 0, SMP_T_BIN, L4, NULL, FC },
	{ "ssl_fc_unique_id", fetch_unique_id, { 0 }, 0, SMP_T_BIN, L4, NULL, FC },
	{ "ssl_fc_err", fetch_err, { 0 }, 0, SMP_T_SINT, L4, NULL, FC },
	{ "ssl_fc_err_str", fetch_err_str, { 0 }, 0, SMP_T_STR, L4, NULL, FC },
	{ "ssl_fc_has_early", fetch_ssl_fc_has_early, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "ssl_fc_cipherlist_bin", fetch_capture_bin, F1, 0, SMP_T_BIN, L4, NULL,
	  &cap_lists[CAP_CIPHERS] },
	{ "ssl_fc_cipherlist_hex", fetch_cipherlist_hex, F1, 0, SMP_T_STR, L4, NULL,
	  &cap_lists[CAP_CIPHERS] },
	{ "ssl_fc_cipherlist_str", fetch_cipherlist_str, F1, 0, SMP_T_STR, L4, NULL,
	  &cap_lists[CAP_CIPHERS] },
	{ "ssl_fc_cipherlist_xxh", fetch_cipherlist_xxh, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "ssl_fc_extlist_bin", fetch_capture_bin, F1, 0, SMP_T_BIN, L4, NULL,
	  &cap_lists[CAP_EXTS] },
	{ "ssl_fc_eclist_bin", fetch_capture_bin, F1, 0, SMP_T_BIN, L4, NULL,
	  &cap_lists[CAP_EC] },
	{ "ssl_fc_ecformats_bin", fetch_capture_bin, { 0 }, 0, SMP_T_BIN, L4, NULL,
	  &cap_lists[CAP_ECF] },
	{ "ssl_fc_protocol_hello_id", fetch_hello_id, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "ssl_fc_client_early_traffic_secret", fetch_secret, { 0 }, 0, SMP_T_STR, L4, NULL,
	  &kl_labels[SSL_KL_CLIENT_EARLY] },
	{ "ssl_fc_client_handshake_traffic_secret", fetch_secret, { 0 }, 0, SMP_T_STR, L4, NULL,
	  &kl_labels[SSL_KL_CLIENT_HS] },
	{ "ssl_fc_server_handshake_traffic_secret", fetch_secret, { 0 }, 0, SMP_T_STR, L4, NULL,
	  &kl_labels[SSL_KL_SERVER_HS] },
	{ "ssl_fc_client_traffic_secret_0", fetch_secret, { 0 }, 0, SMP_T_STR, L4, NULL,
	  &kl_labels[SSL_KL_CLIENT_TRAFFIC_0] },
	{ "ssl_fc_server_traffic_secret_0", fetch_secret, { 0 }, 0, SMP_T_STR, L4, NULL,
	  &kl_labels[SSL_KL_SERVER_TRAFFIC_0] },
	{ "ssl_fc_exporter_secret", fetch_secret, { 0 }, 0, SMP_T_STR, L4, NULL,
	  &kl_labels[SSL_KL_EXPORTER] },
	{ "ssl_fc_early_exporter_secret", fetch_secret, { 0 }, 0, SMP_T_STR, L4, NULL,
	  &kl_labels[SSL_KL_EARLY_EXPORTER] },
	{ "ssl_bc", fetch_ssl, { 0 }, 0, SMP_T_BOOL, L4, NULL, BC },
	{ "ssl_bc_protocol", fetch_protocol, { 0 }, 0, SMP_T_STR, L4, NULL, BC },
	{ "ssl_bc_cipher", fetch_cipher, { 0 }, 0, SMP_T_STR, L4, NULL, BC },
	{ "ssl_bc_alg_keysize", fetch_alg_keysize, { 0 }, 0, SMP_T_SINT, L4, NULL, BC },
	{ "ssl_bc_use_keysize", fetch_use_keysize, { 0 }, 0, SMP_T_SINT, L4, NULL, BC },
	{ "ssl_bc_alpn", fetch_alpn, { 0 }, 0, SMP_T_STR, L4, NULL, BC },
	{ "ssl_bc_npn", fetch_npn, { 0 }, 0, SMP_T_STR, L4, NULL, BC },
	{ "ssl_bc_is_resumed", fetch_is_resumed, { 0 }, 0, SMP_T_BOOL, L4, NULL, BC },
	{ "ssl_bc_client_random", fetch_client_random, { 0 }, 0, SMP_T_BIN, L4, NULL, BC },
	{ "ssl_bc_server_random", fetch_server_random, { 0 }, 0, SMP_T_BIN, L4, NULL, BC },
	{ "ssl_bc_session_id", fetch_session_id, { 0 }, 0, SMP_T_BIN, L4, NULL, BC },
	{ "ssl_bc_session_key", fetch_session_key, { 0 }, 0, SMP_T_BIN, L4, NULL, BC },
	{ "ssl_bc_unique_id", fetch_unique_id, { 0 }, 0, SMP_T_BIN, L4, NULL, BC },
	{ "ssl_bc_err", fetch_err, { 0 }, 0, SMP_T_SINT, L4, NULL, BC },
	{ "ssl_bc_err_str", fetch_err_str, { 0 }, 0, SMP_T_STR, L4, NULL, BC },
};

SLUICE_INIT(smp_register_ssl)
{
	smp_register_fetches(smp_ssl_fetches, ARRAY_SIZE(smp_ssl_fetches));
}

#endif
