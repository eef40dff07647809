/* TLS contexts with OpenSSL: those of each bind line (one per certificate,
 * with the SNI, ALPN/NPN, verification, capture and key log callbacks) and
 * of each server, built at post-parse from the options ssl_opts.c parsed,
 * and the sessions they start on a connection, whose transport is
 * net/ssl_sock.c (ssl_cfg.h). */
#include <sluice/ssl_cfg.h>

#ifdef USE_OPENSSL
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/str.h>

#include "ssl_int.h"
#include "ssl_srv.h"

struct ssl_indexes ssl_idx = { -1, -1, -1, -1 };

/* An SSL_CTX serving a certificate is freed (its last user gone): the
 * certificate store forgets it. */
static void ssl_ctx_ckch_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                              void *argp)
{
	if (ptr)
		ckch_detach(ptr, parent);
}

void ssl_init_once(void)
{
	if (ssl_idx.ctx_opts >= 0)
		return;
	ssl_idx.ctx_opts = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	ssl_idx.ctx_ckch = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, ssl_ctx_ckch_free);
	ssl_idx.ctx_tkeys = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	ssl_idx.ssl_srv = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

const struct ssl_bind_opts *ssl_ctx_opts(const SSL_CTX *ctx)
{
	return SSL_CTX_get_ex_data(ctx, ssl_idx.ctx_opts);
}

/* <o>'s string option <f>, else the global default. */
#define SSL_OPT(o, f) ((o)->f ? (o)->f : ssl_bind_def.f)

/* ---- callbacks of bind contexts ---- */

static int ssl_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                           const unsigned char *in, unsigned int inlen, void *arg)
{
	const struct ssl_bind_opts *o = ssl_ctx_opts(SSL_get_SSL_CTX(ssl));

	if (!o || !o->alpn ||
	    SSL_select_next_proto((unsigned char **)out, outlen, o->alpn, (unsigned)o->alpn_len, in,
				  inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	return SSL_TLSEXT_ERR_OK;
}

#ifndef OPENSSL_NO_NEXTPROTONEG
/* npn: the protocols advertised to a client that asks. */
static int ssl_npn_advertise(SSL *ssl, const unsigned char **out, unsigned int *outlen,
                             void *arg)
{
	const struct ssl_bind_opts *o = ssl_ctx_opts(SSL_get_SSL_CTX(ssl));

	if (!o || !o->npn)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o->npn;
	*outlen = (unsigned)o->npn_len;
	return SSL_TLSEXT_ERR_OK;
}

/* server npn: the first of our protocols the server offers. */
static int ssl_npn_select(SSL *ssl, unsigned char **out, unsigned char *outlen,
                          const unsigned char *in, unsigned int inlen, void *arg)
{
	const struct ssl_protos *p = arg;

	SSL_select_next_proto(out, outlen, p->p, (unsigned)p->len, in, inlen);
	return SSL_TLSEXT_ERR_OK;
}
#endif

/* verify: an error at depth 0 that crt-ignore-err lists, or deeper that
 * ca-ignore-err lists, lets the handshake go on; the first error of each
 * kind is kept for ssl_c_err / ssl_c_ca_err. */
static int ssl_verify_cb(int ok, X509_STORE_CTX *xs)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(xs, SSL_get_ex_data_X509_STORE_CTX_idx());
	const struct ssl_bind_opts *o = ssl ? ssl_ctx_opts(SSL_get_SSL_CTX(ssl)) : NULL;
	int err = X509_STORE_CTX_get_error(xs), depth = X509_STORE_CTX_get_error_depth(xs);
	struct ssl_sock_ext *x;

	if (ok || !ssl)
		return ok;
	x = ssl_sock_ext(ssl, 1);
	if (depth > 0) {
		if (x && !x->ca_err) {
			x->ca_err = err;
			x->ca_err_depth = depth;
		}
		ok = o && ssl_errset_has(&o->ca_ignore, err);
	} else {
		if (x && !x->crt_err)
			x->crt_err = err;
		ok = o && ssl_errset_has(&o->crt_ignore, err);
	}
	if (ok) {
		X509_STORE_CTX_set_error(xs, X509_V_OK);
		ERR_clear_error();
	}
	return ok;
}

/* tune.ssl.keylog: the secrets of a session, by label, for the fetches. */
static void ssl_keylog_cb(const SSL *ssl, const char *line)
{
	static const char *const labels[SSL_KL_N] = {
		[SSL_KL_CLIENT_EARLY] = "CLIENT_EARLY_TRAFFIC_SECRET",
		[SSL_KL_CLIENT_HS] = "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
		[SSL_KL_SERVER_HS] = "SERVER_HANDSHAKE_TRAFFIC_SECRET",
		[SSL_KL_CLIENT_TRAFFIC_0] = "CLIENT_TRAFFIC_SECRET_0",
		[SSL_KL_SERVER_TRAFFIC_0] = "SERVER_TRAFFIC_SECRET_0",
		[SSL_KL_EXPORTER] = "EXPORTER_SECRET",
		[SSL_KL_EARLY_EXPORTER] = "EARLY_EXPORTER_SECRET",
	};
	const char *sp = strchr(line, ' '), *secret = sp ? strchr(sp + 1, ' ') : NULL;
	struct ssl_sock_ext *x;

	if (!secret)
		return;
	for (int i = 0; i < SSL_KL_N; i++)
		if ((size_t)(sp - line) == strlen(labels[i]) && !strncmp(line, labels[i], (size_t)(sp - line))) {
			if (!(x = ssl_sock_ext(ssl, 1)))
				return;
			free(x->keylog[i]);
			x->keylog[i] = strdup(secret + 1);
			return;
		}
}

/* tune.ssl.capture-buffer-size: the ClientHello's lists, each cut to what
 * is left of the buffer. */
static void ssl_capture_hello(SSL *ssl)
{
	const unsigned char *ciphers, *p;
	size_t nc = SSL_client_hello_get0_ciphers(ssl, &ciphers), len, room = (size_t)sslg.capture_size;
	struct ssl_sock_ext *x = ssl_sock_ext(ssl, 1);
	struct ssl_capture *c;
	int *exts = NULL;
	size_t next = 0, o = 0, k;

	if (!x || x->capture || !(c = calloc(1, sizeof(*c) + room)))
		return;
	c->xxh64 = smp_xxh64(ciphers, nc, 0);
	c->hello_version = (uint16_t)SSL_client_hello_get0_legacy_version(ssl);
	k = MIN(nc & ~(size_t)1, room - o);
	memcpy(c->data + o, ciphers, k);
	c->ciphers_len = (uint16_t)k;
	o += k;
	if (SSL_client_hello_get1_extensions_present(ssl, &exts, &next) == 1) {
		for (size_t i = 0; i < next && o + 2 <= room; i++) {
			c->data[o++] = (unsigned char)(exts[i] >> 8);
			c->data[o++] = (unsigned char)exts[i];
			c->ext_len += 2;
		}
		OPENSSL_free(exts);
	}
	/* supported_groups: a 2-byte length then the groups */
	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_supported_groups, &p, &len) == 1 && len >= 2) {
		k = MIN(MIN((size_t)(p[0] << 8 | p[1]), len - 2) & ~(size_t)1, room - o);
		memcpy(c->data + o, p + 2, k);
		c->ec_len = (uint16_t)k;
		o += k;
	}
	/* ec_point_formats: a 1-byte length then the formats */
	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_ec_point_formats, &p, &len) == 1 && len >= 1) {
		k = MIN(MIN((size_t)p[0], len - 1), room - o);
		memcpy(c->data + o, p + 1, k);
		c->ecf_len = (uint16_t)k;
		o += k;
	}
	x->capture = c;
}

/* Whether the ClientHello accepts an ECDSA certificate: its
 * signature_algorithms offer ECDSA and one of its cipher suites can use it
 * (any TLSv1.3 suite, or an ECDSA-authenticated one). */
static int ssl_hello_ecdsa(SSL *ssl)
{
	const unsigned char *p;
	size_t len;
	int sig = 0;

	if (!SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_signature_algorithms, &p, &len) || len < 2)
		return 0;
	for (size_t i = 2; i + 1 < len && !sig; i += 2)
		sig = p[i + 1] == 3 && p[i] >= 2 && p[i] <= 6;   /* {sha*, ecdsa} */
	if (!sig)
		return 0;
	len = SSL_client_hello_get0_ciphers(ssl, &p);
	for (size_t i = 0; i + 1 < len; i += 2) {
		const SSL_CIPHER *c = SSL_CIPHER_find(ssl, p + i);
		int auth = c ? SSL_CIPHER_get_auth_nid(c) : NID_undef;

		/* "any" is also the auth of signalling values (SCSV): only the
		 * TLSv1.3 suites (0x13xx) count */
		if (auth == NID_auth_ecdsa ||
		    (auth == NID_auth_any && p[i] == 0x13))   /* TLS_AES_* */
			return 1;
	}
	return 0;
}

/* The server_name of the ClientHello, NUL-terminated in <buf>; NULL if none. */
static const char *ssl_hello_sni(SSL *ssl, char *buf, size_t size)
{
	const unsigned char *p;
	size_t len, l;

	if (!SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p, &len) || len < 5)
		return NULL;
	/* list length (2), type (1: host_name = 0), name length (2), name */
	if (p[2] != TLSEXT_NAMETYPE_host_name)
		return NULL;
	l = (size_t)p[3] << 8 | p[4];
	if (l + 5 > len || l >= size || !l)
		return NULL;
	memcpy(buf, p + 5, l);
	buf[l] = '\0';
	return buf;
}

/* Applies the per-context settings that SSL_set_SSL_CTX() does not carry. */
static void ssl_apply_ctx(SSL *ssl, SSL_CTX *ctx)
{
	STACK_OF(X509_NAME) *cas = SSL_CTX_get_client_CA_list(ctx);
	const struct ssl_bind_opts *o = ssl_ctx_opts(ctx);

	SSL_set_SSL_CTX(ssl, ctx);
	SSL_set_verify(ssl, SSL_CTX_get_verify_mode(ctx), SSL_CTX_get_verify_callback(ctx));
	SSL_set_min_proto_version(ssl, SSL_CTX_get_min_proto_version(ctx));
	SSL_set_max_proto_version(ssl, SSL_CTX_get_max_proto_version(ctx));
	SSL_clear_options(ssl, SSL_get_options(ssl));
	SSL_set_options(ssl, SSL_CTX_get_options(ctx));
	SSL_set_client_CA_list(ssl, cas ? SSL_dup_CA_list(cas) : NULL);
	SSL_set_max_early_data(ssl, SSL_CTX_get_max_early_data(ctx));
	if (o) {
		const char *c = SSL_OPT(o, ciphers);
		const char *cs = SSL_OPT(o, ciphersuites);
		const char *cv = SSL_OPT(o, curves) ? SSL_OPT(o, curves) : o->ecdhe;

		if (c)
			SSL_set_cipher_list(ssl, c);
		if (cs)
			SSL_set_ciphersuites(ssl, cs);
		if (cv)
			SSL_set1_groups_list(ssl, cv);
		if (o->sigalgs)
			SSL_set1_sigalgs_list(ssl, o->sigalgs);
		if (o->client_sigalgs)
			SSL_set1_client_sigalgs_list(ssl, o->client_sigalgs);
		ERR_clear_error();
	}
}

/* Picks the certificate from the ClientHello: exact SNI, then wildcard,
 * ECDSA when the client accepts it; a generated one (generate-certificates);
 * the default otherwise, or a refusal with strict-sni. Captures the hello's
 * lists first (tune.ssl.capture-buffer-size). */
static int ssl_client_hello_cb(SSL *ssl, int *al, void *arg)
{
	SSL_CTX *cur = SSL_get_SSL_CTX(ssl), *ctx;
	struct ssl_bind_opts *o = arg;
	char name[256];
	const char *sni = ssl_hello_sni(ssl, name, sizeof(name));

	if (sslg.capture_size)
		ssl_capture_hello(ssl);
	ctx = ssl_ckch_pick(o, sni, ssl_hello_ecdsa(ssl));
	if (!ctx && sni && (o->flags & SSL_BO_F_GEN_CERTS))
		ctx = gencert_get(o, sni);
	if (!ctx && o->strict_sni) {
		*al = SSL_AD_UNRECOGNIZED_NAME;
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (ctx && ctx != cur)
		ssl_apply_ctx(ssl, ctx);
	return SSL_CLIENT_HELLO_SUCCESS;
}

/* ---- contexts of bind lines ---- */

/* Ciphers, suites, groups and signature algorithms. */
static int ssl_ctx_ciphers(SSL_CTX *ctx, const char *c, const char *cs, const char *curves,
                           const char *sigalgs, const char *csigalgs, char **err)
{
	if (c && SSL_CTX_set_cipher_list(ctx, c) != 1) {
		*err = str_fmt("unknown cipher list '%s'", c);
		return -1;
	}
	if (cs && SSL_CTX_set_ciphersuites(ctx, cs) != 1) {
		*err = str_fmt("unknown ciphersuites '%s'", cs);
		return -1;
	}
	if (curves && SSL_CTX_set1_groups_list(ctx, curves) != 1) {
		*err = str_fmt("unknown curves '%s'", curves);
		return -1;
	}
	if (sigalgs && SSL_CTX_set1_sigalgs_list(ctx, sigalgs) != 1) {
		*err = str_fmt("unknown signature algorithms '%s'", sigalgs);
		return -1;
	}
	if (csigalgs && SSL_CTX_set1_client_sigalgs_list(ctx, csigalgs) != 1) {
		*err = str_fmt("unknown client signature algorithms '%s'", csigalgs);
		return -1;
	}
	ERR_clear_error();
	return 0;
}

/* DHE parameters: those of the certificate's file, else ssl-dh-param-file,
 * else tune.ssl.default-dh-param sized to the RSA key; none: no DHE. */
static void ssl_ctx_dh(SSL_CTX *ctx, const struct ckch *ck)
{
	EVP_PKEY *dh = ck->dh ? ck->dh : sslg.dh_file;

	if (!dh && sslg.default_dh) {
		int bits = sslg.default_dh;

		if (ck->key && EVP_PKEY_base_id(ck->key) == EVP_PKEY_RSA &&
		    EVP_PKEY_get_bits(ck->key) < bits)
			bits = EVP_PKEY_get_bits(ck->key);
		dh = ssl_dh_params(bits);
	}
	if (dh && EVP_PKEY_up_ref(dh) == 1 && SSL_CTX_set0_tmp_dh_pkey(ctx, dh) != 1)
		EVP_PKEY_free(dh);
	ERR_clear_error();
}

SSL_CTX *ssl_bind_new_ctx(const struct ssl_bind_opts *o, struct ckch *ck, char **err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	const struct ssl_bind_opts *d = &ssl_bind_def;
	int verify = o->verify >= 0 ? o->verify : SSL_VERIFY_NONE;
	unsigned flags = o->flags | d->flags;
	char *e = NULL;

	if (!ctx) {
		*err = str_fmt("cannot create a TLS context");
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF |
			    SSL_OP_NO_RENEGOTIATION |
			    (flags & SSL_BO_F_PREFER_CLI ? 0 : SSL_OP_CIPHER_SERVER_PREFERENCE) |
			    (flags & SSL_BO_F_NO_TICKETS ? SSL_OP_NO_TICKET : 0));
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
			 SSL_MODE_RELEASE_BUFFERS);
	if (ssl_ctx_versions(ctx, o->min_ver ? o->min_ver : d->min_ver,
			     o->max_ver ? o->max_ver : d->max_ver, o->no_ver | d->no_ver, &e) ||
	    ssl_ctx_ciphers(ctx, SSL_OPT(o, ciphers), SSL_OPT(o, ciphersuites),
			    SSL_OPT(o, curves) ? SSL_OPT(o, curves) : o->ecdhe, o->sigalgs,
			    o->client_sigalgs, &e) ||
	    cafile_ctx_setup(ctx, o->ca_file, o->ca_verify_file, o->crl_file,
			     !(flags & SSL_BO_F_NO_CA_NAMES), &e))
		goto fail;
	if (verify != SSL_VERIFY_NONE && !o->ca_file && !o->ca_verify_file) {
		e = str_fmt("'verify %s' needs a 'ca-file'",
			    verify & SSL_VERIFY_FAIL_IF_NO_PEER_CERT ? "required" : "optional");
		goto fail;
	}
	SSL_CTX_set_verify(ctx, verify, ssl_verify_cb);
	SSL_CTX_set_ex_data(ctx, ssl_idx.ctx_opts, (void *)o);
	if (ck && ckch_attach(ck, ctx) == -1) {
		e = str_fmt("'%s': cannot use this certificate", ck->path);
		goto fail;
	}
	if (ck)
		ssl_ctx_dh(ctx, ck);
	SSL_CTX_set_alpn_select_cb(ctx, ssl_alpn_select, NULL);
#ifndef OPENSSL_NO_NEXTPROTONEG
	if (o->npn)
		SSL_CTX_set_next_protos_advertised_cb(ctx, ssl_npn_advertise, NULL);
#endif
	SSL_CTX_set_tlsext_status_cb(ctx, ocsp_status_cb);
	if (flags & SSL_BO_F_ALLOW_0RTT)
		SSL_CTX_set_max_early_data(ctx, 16384);
	if (sslg.keylog)
		SSL_CTX_set_keylog_callback(ctx, ssl_keylog_cb);
	return ctx;
fail:
	ERR_clear_error();
	*err = e;
	SSL_CTX_free(ctx);
	return NULL;
}

/* A crt-list line's options over the bind's (same object when none). */
static struct ssl_bind_opts *ssl_merge_opts(struct ssl_bind_opts *o, struct ssl_bind_opts *lo)
{
	struct ssl_bind_opts *m;

	if (!lo)
		return o;
	m = xcalloc(1, sizeof(*m));
	*m = *o;
	m->crts = NULL;
	m->ncrts = 0;
	m->sni = NULL;
	m->nsni = 0;
	m->lists = NULL;
	m->nlists = 0;
	m->gen = NULL;
#define SSL_MERGE_STR(f) if (lo->f) m->f = lo->f
	SSL_MERGE_STR(ciphers);
	SSL_MERGE_STR(ciphersuites);
	SSL_MERGE_STR(curves);
	SSL_MERGE_STR(ecdhe);
	SSL_MERGE_STR(sigalgs);
	SSL_MERGE_STR(client_sigalgs);
	SSL_MERGE_STR(ca_file);
	SSL_MERGE_STR(ca_verify_file);
	SSL_MERGE_STR(crl_file);
#undef SSL_MERGE_STR
	if (lo->min_ver)
		m->min_ver = lo->min_ver;
	if (lo->max_ver)
		m->max_ver = lo->max_ver;
	m->no_ver |= lo->no_ver;
	m->flags |= lo->flags;
	if (lo->verify >= 0)
		m->verify = lo->verify;
	if (lo->alpn) {
		m->alpn = lo->alpn;
		m->alpn_len = lo->alpn_len;
	}
	if (lo->npn) {
		m->npn = lo->npn;
		m->npn_len = lo->npn_len;
	}
	return m;
}

/* The session cache and tickets live in the context a handshake starts on
 * (the default one), whichever certificate SNI then selects. A session
 * belongs to its frontend (the session ID context, in the tickets too): the
 * same in another process with the same frontend, so that processes
 * sharing tls-ticket-keys resume each other's sessions. */
static void ssl_ctx_sessions(struct ssl_bind_opts *o, SSL_CTX *ctx)
{
	unsigned char sid[SSL_MAX_SID_CTX_LENGTH];
	int n = snprintf((char *)sid, sizeof(sid), "sluice:%s", o->ft ? o->ft : "");

	SSL_CTX_set_session_id_context(ctx, sid, (unsigned)MIN(n, (int)sizeof(sid)));
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
	if (sslg.cachesize >= 0)
		SSL_CTX_sess_set_cache_size(ctx, sslg.cachesize);
	if (!sslg.cachesize)
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (sslg.lifetime_ms)
		SSL_CTX_set_timeout(ctx, (long)(sslg.lifetime_ms / 1000 ? sslg.lifetime_ms / 1000 : 1));
	if (o->tkeys)
		tls_keys_install(o->tkeys, ctx);
}

void ssl_bind_ctx_finish(struct ssl_bind_opts *o, SSL_CTX *ctx)
{
	ssl_ctx_sessions(o, ctx);
	SSL_CTX_set_client_hello_cb(ctx, ssl_client_hello_cb, o);
}

int ssl_crt_ent_build(struct ssl_bind_opts *o, struct ssl_crt_ent *e, char **err)
{
	struct ssl_bind_opts *m = ssl_merge_opts(o, e->lo);

	e->mo = m != o ? m : NULL;
	e->ctx = ssl_bind_new_ctx(m, e->ck, err);
	if (!e->ctx) {
		free(e->mo);
		e->mo = NULL;
		return -1;
	}
	ssl_bind_ctx_finish(o, e->ctx);
	return 0;
}

void ssl_crt_ent_release(struct ssl_crt_ent *e)
{
	if (e->ctx)
		SSL_CTX_set_ex_data(e->ctx, ssl_idx.ctx_opts, NULL);
	SSL_CTX_free(e->ctx);
	e->ctx = NULL;
	free(e->mo);
	e->mo = NULL;
}

/* Whether a handshake on <o> may take early data: allow-0rtt on the line
 * or on one of its crt-list lines. */
static int ssl_bind_0rtt(const struct ssl_bind_opts *o)
{
	if (o->flags & SSL_BO_F_ALLOW_0RTT)
		return 1;
	for (int i = 0; i < o->ncrts; i++)
		if (o->crts[i].lo && (o->crts[i].lo->flags & SSL_BO_F_ALLOW_0RTT))
			return 1;
	return 0;
}

/* Builds the contexts of a bind line. Returns the errors reported. */
static int ssl_bind_build(struct bind_conf *bc)
{
	struct ssl_bind_opts *o = bc->ssl;
	char *err = NULL;

	if (!o->enabled) {
		log_alert("%s:%d: bind: TLS options given without 'ssl'", bc->conf_file,
			  bc->conf_line);
		return 1;
	}
	if (!o->ncrts) {
		log_alert("%s:%d: bind: 'ssl' needs a certificate ('crt' or 'crt-list')",
			  bc->conf_file, bc->conf_line);
		return 1;
	}
	for (int i = 0; i < o->ncrts; i++) {
		if (ssl_crt_ent_build(o, &o->crts[i], &err) == -1) {
			log_alert("%s:%d: bind: %s", bc->conf_file, bc->conf_line, err);
			free(err);
			return 1;
		}
	}
	ssl_ckch_index(o);
	if ((o->flags & SSL_BO_F_GEN_CERTS) && gencert_setup(o, &err) == -1) {
		log_alert("%s:%d: bind: %s", bc->conf_file, bc->conf_line, err);
		free(err);
		return 1;
	}
	o->built = 1;
	return 0;
}

/* ---- contexts of servers ---- */

static int ssl_new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
	struct server *srv = SSL_get_ex_data(ssl, ssl_idx.ssl_srv);

	if (!srv || srv->ssl->no_reuse)
		return 0;
	SSL_SESSION_free(srv->ssl->sess);
	srv->ssl->sess = sess;   /* we keep the reference */
	return 1;
}

static int ssl_srv_build(struct server *srv)
{
	struct ssl_srv *x = srv->ssl;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	int verify = x->verify >= 0 ? x->verify : sslg.srv_verify;
	unsigned flags = x->flags | sslg.srv_flags;
	char *e = NULL;

	if (!ctx) {
		log_alert("%s:%d: server '%s': cannot create a TLS context", srv->conf_file,
			  srv->conf_line, srv->name);
		return 1;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF |
			    SSL_OP_NO_RENEGOTIATION | (flags & SSL_BO_F_NO_TICKETS ? SSL_OP_NO_TICKET : 0));
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
			 SSL_MODE_RELEASE_BUFFERS);
	if (ssl_ctx_versions(ctx, x->min_ver ? x->min_ver : sslg.srv_min_ver,
			     x->max_ver ? x->max_ver : sslg.srv_max_ver, x->no_ver | sslg.srv_no_ver,
			     &e) ||
	    ssl_ctx_ciphers(ctx, x->ciphers ? x->ciphers : sslg.srv_ciphers,
			    x->ciphersuites ? x->ciphersuites : sslg.srv_ciphersuites, x->curves,
			    x->sigalgs, x->client_sigalgs, &e) ||
	    cafile_ctx_setup(ctx, x->ca_file, NULL, x->crl_file, 0, &e))
		goto fail;
	if (verify != SSL_VERIFY_NONE && !x->ca_file) {
		e = str_fmt("verify is enabled by default but no CA file specified: set "
			    "'verify none' on the server line, or 'ssl-server-verify none' in "
			    "the global section, if the server's certificate need not be checked");
		goto fail;
	}
	SSL_CTX_set_verify(ctx, verify, NULL);
	if (x->crt) {
		struct ckch *ck = ckch_get(x->crt, &e);

		if (!ck || ckch_attach(ck, ctx) == -1) {
			if (!e)
				e = str_fmt("'%s': cannot use this certificate", x->crt);
			goto fail;
		}
		ck->from_conf = 1;
	}
	if (x->alpn.p)
		SSL_CTX_set_alpn_protos(ctx, x->alpn.p, (unsigned)x->alpn.len);
#ifndef OPENSSL_NO_NEXTPROTONEG
	if (x->npn.p)
		SSL_CTX_set_next_proto_select_cb(ctx, ssl_npn_select, &x->npn);
#endif
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, ssl_new_session_cb);
	x->verify = verify;
	x->ctx = ctx;
	return 0;
fail:
	ERR_clear_error();
	log_alert("%s:%d: server '%s': %s", srv->conf_file, srv->conf_line, srv->name, e);
	free(e);
	SSL_CTX_free(ctx);
	return 1;
}

static int ssl_postparse(void)
{
	int errs = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		struct bind_conf *last = NULL;

		for (struct listener *li = px->listeners; li; li = li->next) {
			if (!li->bc->ssl || li->bc == last)
				continue;
			last = li->bc;
			if (!li->bc->ssl->ft)
				li->bc->ssl->ft = str_fmt("%s~", px->name);
			if (!li->bc->ssl->def_ctx)
				errs += ssl_bind_build(li->bc);
		}
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			if (srv->ssl && srv->ssl->owner != srv)
				srv->ssl = ssl_srv_dup(srv->ssl, srv);
			if (srv->ssl && (srv->ssl->enabled || srv->ssl->check_ssl) && !srv->ssl->ctx)
				errs += ssl_srv_build(srv);
			if (srv->ssl)
				srv->ssl->check_tls = srv->ssl->enabled;
		}
	}
	return errs;
}

/* ---- servers' settings ---- */

static char *ssl_strdup0(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void ssl_protos_dup(struct ssl_protos *to, const struct ssl_protos *from)
{
	to->p = NULL;
	if (from->p) {
		to->p = xcalloc(1, from->len + 1);
		memcpy(to->p, from->p, from->len);
	}
}

struct ssl_srv *ssl_srv_dup(const struct ssl_srv *from, const struct server *srv)
{
	struct ssl_srv *x = xcalloc(1, sizeof(*x));

	*x = *from;
	x->owner = srv;
	x->ca_file = ssl_strdup0(from->ca_file);
	x->crl_file = ssl_strdup0(from->crl_file);
	x->crt = ssl_strdup0(from->crt);
	x->verifyhost = ssl_strdup0(from->verifyhost);
	x->check_sni = ssl_strdup0(from->check_sni);
	x->ciphers = ssl_strdup0(from->ciphers);
	x->ciphersuites = ssl_strdup0(from->ciphersuites);
	x->curves = ssl_strdup0(from->curves);
	x->sigalgs = ssl_strdup0(from->sigalgs);
	x->client_sigalgs = ssl_strdup0(from->client_sigalgs);
	ssl_protos_dup(&x->alpn, &from->alpn);
	ssl_protos_dup(&x->npn, &from->npn);
	ssl_protos_dup(&x->check_alpn, &from->check_alpn);
	if (from->sni) {
		char *err = NULL;

		/* re-parsed: an expression is not copied member by member */
		x->sni = xcalloc(1, sizeof(*x->sni));
		if (smp_expr_parse(from->sni_str, x->sni, NULL, &err) == -1) {
			free(err);
			free(x->sni);
			x->sni = NULL;
		}
	}
	x->sni_str = ssl_strdup0(from->sni_str);
	x->ctx = NULL;
	x->sess = NULL;
	return x;
}

void ssl_srv_free(struct server *srv)
{
	struct ssl_srv *x = srv->ssl;

	if (!x || x->owner != srv)
		return;
	free(x->ca_file);
	free(x->crl_file);
	free(x->crt);
	free(x->verifyhost);
	free(x->check_sni);
	free(x->ciphers);
	free(x->ciphersuites);
	free(x->curves);
	free(x->sigalgs);
	free(x->client_sigalgs);
	free(x->alpn.p);
	free(x->npn.p);
	free(x->check_alpn.p);
	free(x->sni_str);
	if (x->sni) {
		smp_expr_free(x->sni);
		free(x->sni);
	}
	SSL_SESSION_free(x->sess);
	SSL_CTX_free(x->ctx);
	free(x);
	srv->ssl = NULL;
}

void ssl_bind_free(struct bind_conf *bc)
{
	struct ssl_bind_opts *o = bc->ssl;

	if (!o)
		return;
	ssl_opts_clear(o);
	free(o->ft);
	free(o);
	bc->ssl = NULL;
}

int ssl_bind_enabled(const struct bind_conf *bc)
{
	return bc->ssl && bc->ssl->enabled;
}

const char *ssl_bind_ft(const struct bind_conf *bc)
{
	return bc->ssl ? bc->ssl->ft : NULL;
}

int ssl_srv_enabled(const struct server *srv)
{
	return srv->ssl && srv->ssl->enabled;
}

int ssl_srv_set_enabled(struct server *srv, int on, char **err)
{
	if (!srv->ssl) {
		*err = str_fmt("the server has no TLS settings (give them on its line or its "
			       "default-server, e.g. 'no-ssl verify none')");
		return -1;
	}
	if (on && !srv->ssl->ctx && ssl_srv_build(srv)) {
		*err = str_fmt("its TLS context could not be built (the reason is logged)");
		return -1;
	}
	srv->ssl->enabled = on;
	return 0;
}

const struct smp_expr *ssl_srv_sni(const struct server *srv)
{
	return srv->ssl ? srv->ssl->sni : NULL;
}

/* ---- sessions on connections ---- */

int ssl_bind_accept(struct conn *c, struct bind_conf *bc)
{
	SSL *ssl = ssl_sock_new(bc->ssl->def_ctx, c->fd, 1);

	if (!ssl)
		return -1;
	if (ssl_bind_0rtt(bc->ssl))
		ssl_sock_accept_early(ssl);
	ssl_sock_start(c, ssl);
	return 0;
}

/* The name the server's certificate must carry: the SNI sent, else
 * verifyhost (HAProxy's order); none: names are not checked. */
static void ssl_srv_host_check(SSL *ssl, const struct ssl_srv *x, const char *sni)
{
	const char *host = sni && *sni ? sni : x->verifyhost;

	if (x->verify != SSL_VERIFY_NONE && host && *host)
		SSL_set1_host(ssl, host);
}

int ssl_srv_connect(struct conn *c, struct server *srv, const char *sni)
{
	struct ssl_srv *x = srv->ssl;
	SSL *ssl = ssl_sock_new(x->ctx, c->fd, 0);

	if (!ssl)
		return -1;
	SSL_set_ex_data(ssl, ssl_idx.ssl_srv, srv);
	if (sni && *sni)
		SSL_set_tlsext_host_name(ssl, sni);
	ssl_srv_host_check(ssl, x, sni);
	if (x->sess && !x->no_reuse)
		SSL_set_session(ssl, x->sess);
	ssl_sock_start(c, ssl);
	return 0;
}

int ssl_check_enabled(const struct server *srv, int own_addr)
{
	return srv->ssl && (srv->ssl->check_ssl || (srv->ssl->check_tls && own_addr));
}

struct ssl_st *ssl_check_new(struct server *srv, int fd, const struct ssl_check_opts *o)
{
	SSL *ssl = ssl_sock_new(srv->ssl->ctx, fd, 0);
	const char *sni = srv->ssl->check_sni;

	if (!ssl)
		return NULL;
	if (o && !o->server_defaults)
		sni = NULL;
	if (o && o->sni)
		sni = o->sni;
	if (sni)
		SSL_set_tlsext_host_name(ssl, sni);
	if (o && o->alpn)
		SSL_set_alpn_protos(ssl, o->alpn, (unsigned)o->alpn_len);
	else if (srv->ssl->check_alpn.p && (!o || o->server_defaults))
		SSL_set_alpn_protos(ssl, srv->ssl->check_alpn.p, (unsigned)srv->ssl->check_alpn.len);
	ssl_srv_host_check(ssl, srv->ssl, sni);
	return ssl;
}

int ssl_check_prepare(struct server *srv)
{
	if (!srv->ssl) {
		ssl_init_once();
		srv->ssl = xcalloc(1, sizeof(*srv->ssl));
		srv->ssl->verify = -1;
		srv->ssl->owner = srv;
	} else if (srv->ssl->owner != srv) {
		srv->ssl = ssl_srv_dup(srv->ssl, srv);
	}
	return srv->ssl->ctx ? 0 : ssl_srv_build(srv);
}

SLUICE_INIT(ssl_cfg_register)
{
	cfg_register_postparse(ssl_postparse, 20);
	bind_register_release(ssl_bind_free);
}

#else /* !USE_OPENSSL */

#include <sluice/log.h>
#include <sluice/server.h>

/* Without OpenSSL no bind line nor server has TLS ("ssl" is an unknown
 * keyword), so no connection ever gets an SSL*: these are never reached
 * with one, they only let the callers link. */

void ssl_srv_free(struct server *srv)
{
}

void ssl_bind_free(struct bind_conf *bc)
{
}

int ssl_bind_enabled(const struct bind_conf *bc)
{
	return 0;
}

int ssl_srv_enabled(const struct server *srv)
{
	return 0;
}

int ssl_srv_set_enabled(struct server *srv, int on, char **err)
{
	*err = str_fmt("sluice is built without OpenSSL");
	return -1;
}

const char *ssl_bind_ft(const struct bind_conf *bc)
{
	return NULL;
}

int ssl_bind_accept(struct conn *c, struct bind_conf *bc)
{
	return -1;
}

int ssl_check_enabled(const struct server *srv, int own_addr)
{
	return 0;
}

int ssl_check_prepare(struct server *srv)
{
	log_alert("%s:%d: server '%s': TLS health checks need OpenSSL, and this sluice was "
		  "built without it", srv->conf_file, srv->conf_line, srv->name);
	return 1;
}

#endif
