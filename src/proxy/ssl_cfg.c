/* TLS configuration with OpenSSL: the bind and server keywords, the global
 * ssl-* settings, the contexts of each bind line (one per certificate, SNI
 * and ALPN callbacks) and of each server, and the sessions they start on a
 * connection, whose transport is net/ssl_sock.c (ssl_cfg.h). */
#include <sluice/ssl_cfg.h>

#ifdef USE_OPENSSL
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
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
#include <sluice/units.h>

#include "ssl_int.h"

/* Process-wide TLS settings (global section). */
static struct {
	struct ssl_bind_opts bind_def;   /* ssl-default-bind-* */
	char    *srv_ciphers, *srv_ciphersuites;
	int      srv_min_ver, srv_max_ver;
	unsigned srv_no_ver;
	int      srv_verify;             /* ssl-server-verify: SSL_VERIFY_PEER or NONE */
	long     cachesize;              /* tune.ssl.cachesize, -1: OpenSSL's default */
	uint32_t lifetime_ms;            /* tune.ssl.lifetime, 0: OpenSSL's default */
	int      ex_opts;                /* SSL_CTX ex_data: struct ssl_bind_opts */
	int      ex_srv;                 /* SSL ex_data: struct server */
	int      inited;
} sslg = { .srv_verify = SSL_VERIFY_PEER, .cachesize = -1, .bind_def = { .verify = -1 } };

/* TLS state of a "server ... ssl" line. */
struct ssl_srv {
	const struct server *owner;     /* default-server copies share it until they change it */
	int              enabled;
	int              verify;        /* SSL_VERIFY_PEER / NONE; -1: ssl-server-verify */
	char            *ca_file, *crl_file, *crt, *verifyhost;
	char            *ciphers, *ciphersuites;
	int              min_ver, max_ver;
	unsigned         no_ver;
	unsigned char   *alpn;
	size_t           alpn_len;
	struct smp_expr *sni;
	char            *sni_str;       /* as written */
	int              no_reuse;      /* no-ssl-reuse */
	int              check_ssl;     /* check-ssl */
	char            *check_sni;     /* check-sni */
	SSL_CTX         *ctx;
	SSL_SESSION     *sess;          /* last session, for resumption */
};

static struct ssl_srv *ssl_srv_dup(const struct ssl_srv *from, const struct server *srv);

static void ssl_init_once(void)
{
	if (sslg.inited)
		return;
	sslg.inited = 1;
	sslg.ex_opts = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
	sslg.ex_srv = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

/* ---- option parsing ---- */

static const struct {
	const char *name;
	int         ver;
	unsigned    no;
} ssl_versions[] = {
	{ "TLSv1.0", TLS1_VERSION, SSL_BO_NO_TLS10 },
	{ "TLSv1.1", TLS1_1_VERSION, SSL_BO_NO_TLS11 },
	{ "TLSv1.2", TLS1_2_VERSION, SSL_BO_NO_TLS12 },
	{ "TLSv1.3", TLS1_3_VERSION, SSL_BO_NO_TLS13 },
};

static int ssl_parse_ver(const char *kw, const char *v, int *out, char **err)
{
	for (size_t i = 0; i < ARRAY_SIZE(ssl_versions); i++)
		if (v && strcmp(v, ssl_versions[i].name) == 0) {
			*out = ssl_versions[i].ver;
			return 0;
		}
	*err = str_fmt("'%s' expects one of 'TLSv1.0', 'TLSv1.1', 'TLSv1.2' or 'TLSv1.3'", kw);
	return -1;
}

/* "no-tlsv10" ... "no-tlsv13": the bit, 0 if <kw> is not one of them. */
static unsigned ssl_no_ver_bit(const char *kw)
{
	static const char *const names[] = { "no-tlsv10", "no-tlsv11", "no-tlsv12", "no-tlsv13" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(kw, names[i]) == 0)
			return ssl_versions[i].no;
	return 0;
}

/* "alpn h2,http/1.1,...": to wire format. */
static int ssl_parse_alpn(const char *v, unsigned char **out, size_t *outlen, char **err)
{
	size_t len = strlen(v), o = 0;
	unsigned char *w;
	char *dup, *save = NULL;

	if (!len) {
		*err = str_fmt("'alpn' expects a comma-separated list of protocols");
		return -1;
	}
	w = xcalloc(1, len + 2);
	dup = xstrdup(v);
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(t);

		if (l > 255) {
			*err = str_fmt("'alpn': protocol name too long");
			goto fail;
		}
		w[o++] = (unsigned char)l;
		memcpy(w + o, t, l);
		o += l;
	}
	free(dup);
	free(*out);
	*out = w;
	*outlen = o;
	return 0;
fail:
	free(dup);
	free(w);
	return -1;
}

static int ssl_parse_verify(const char *v, int srv, int *out, char **err)
{
	if (v && strcmp(v, "none") == 0)
		*out = SSL_VERIFY_NONE;
	else if (v && !srv && strcmp(v, "optional") == 0)
		*out = SSL_VERIFY_PEER;
	else if (v && strcmp(v, "required") == 0)
		*out = SSL_VERIFY_PEER | (srv ? 0 : SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
	else {
		*err = str_fmt(srv ? "'verify' expects 'none' or 'required'"
				   : "'verify' expects 'none', 'optional' or 'required'");
		return -1;
	}
	return 0;
}

static int ssl_need_arg(int argc, char **argv, const char *what, char **err)
{
	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("'%s' expects %s", argv[0], what);
		return -1;
	}
	return 0;
}

static void ssl_set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* Reads "tls-ticket-keys <file>": base64 keys of 48 or 80 bytes, one a
 * line. The last one is used (to encrypt and decrypt; see doc). */
static int ssl_load_ticket_keys(struct ssl_bind_opts *o, const char *path, char **err)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int n = 0;

	if (!f) {
		*err = str_fmt("cannot read tls-ticket-keys '%s': %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned char raw[128];
		size_t l = strcspn(line, "\r\n");
		int k;

		line[l] = '\0';
		if (!l || line[0] == '#')
			continue;
		k = EVP_DecodeBlock(raw, (unsigned char *)line, (int)l);
		while (l && line[--l] == '=')
			k--;
		if (k != 48 && k != 80) {
			fclose(f);
			*err = str_fmt("'%s' line %d: a key is 48 or 80 bytes in base64", path, n + 1);
			return -1;
		}
		/* name (16), then the HMAC and AES keys: the first 16 of each */
		memset(o->ticket_key, 0, sizeof(o->ticket_key));
		memcpy(o->ticket_key, raw, 16);
		memcpy(o->ticket_key + 16, raw + 16, k == 48 ? 16 : 32);
		memcpy(o->ticket_key + 48, raw + (k == 48 ? 32 : 48), k == 48 ? 16 : 32);
		n++;
	}
	fclose(f);
	if (!n) {
		*err = str_fmt("'%s': no key found", path);
		return -1;
	}
	o->has_ticket_key = 1;
	return 0;
}

/* ---- the TLS options of a bind line, also those of a crt-list line ---- */

/* One TLS option: its parser, and what the parser needs of the row: the
 * field it sets (.off into struct ssl_bind_opts), its value (.arg) and what
 * its argument is (for "expects" messages). Parsers return the words used,
 * or -1 with <err> allocated. */
struct ssl_opt {
	const char *name;
	int       (*parse)(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
	                   char **argv, char **err);
	size_t      off;
	unsigned    arg;
	const char *what;
	int         bind_only;   /* not on crt-list lines */
};

#define SSL_BO_OFF(field) .off = offsetof(struct ssl_bind_opts, field)
#define SSL_BO_AT(o, opt, type) ((type *)((char *)(o) + (opt)->off))

/* "ssl", "strict-sni": the int at .off set. */
static int ssl_opt_on(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                      char **err)
{
	*SSL_BO_AT(o, opt, int) = 1;
	return 1;
}

/* "no-tlsv1x": bit .arg added to the unsigned at .off. */
static int ssl_opt_bit(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                       char **err)
{
	*SSL_BO_AT(o, opt, unsigned) |= opt->arg;
	return 1;
}

/* "ciphers", "ca-file"...: the string at .off replaced. */
static int ssl_opt_str(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                       char **err)
{
	if (ssl_need_arg(argc, argv, opt->what, err))
		return -1;
	ssl_set_str(SSL_BO_AT(o, opt, char *), argv[1]);
	return 2;
}

/* "ssl-min-ver", "ssl-max-ver": the version in the int at .off. */
static int ssl_opt_ver(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                       char **err)
{
	return ssl_parse_ver(opt->name, argc > 1 ? argv[1] : NULL, SSL_BO_AT(o, opt, int), err) ?
	       -1 : 2;
}

static int ssl_opt_alpn(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                        char **argv, char **err)
{
	return ssl_need_arg(argc, argv, opt->what, err) ||
	       ssl_parse_alpn(argv[1], &o->alpn, &o->alpn_len, err) ? -1 : 2;
}

static int ssl_opt_verify(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                          char **argv, char **err)
{
	return ssl_parse_verify(argc > 1 ? argv[1] : NULL, 0, &o->verify, err) ? -1 : 2;
}

static int ssl_opt_crt(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                       char **argv, char **err)
{
	return ssl_need_arg(argc, argv, opt->what, err) ||
	       ssl_ckch_load_crt(o, argv[1], err) ? -1 : 2;
}

static int ssl_opt_crt_list(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                            char **argv, char **err)
{
	return ssl_need_arg(argc, argv, opt->what, err) ||
	       ssl_ckch_load_crt_list(o, argv[1], err) ? -1 : 2;
}

static int ssl_opt_ticket_keys(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                               char **argv, char **err)
{
	return ssl_need_arg(argc, argv, opt->what, err) ||
	       ssl_load_ticket_keys(o, argv[1], err) ? -1 : 2;
}

/* In this order the bind rows are registered (suggestions see them so). */
static const struct ssl_opt ssl_opts[] = {
	{ "ssl", ssl_opt_on, SSL_BO_OFF(enabled), .bind_only = 1 },
	{ "crt", ssl_opt_crt, .what = "a certificate file or directory", .bind_only = 1 },
	{ "crt-list", ssl_opt_crt_list, .what = "a file", .bind_only = 1 },
	{ "alpn", ssl_opt_alpn, .what = "a protocol list" },
	{ "ciphers", ssl_opt_str, SSL_BO_OFF(ciphers), .what = "a list" },
	{ "ciphersuites", ssl_opt_str, SSL_BO_OFF(ciphersuites), .what = "a list" },
	{ "curves", ssl_opt_str, SSL_BO_OFF(curves), .what = "a list" },
	{ "ssl-min-ver", ssl_opt_ver, SSL_BO_OFF(min_ver) },
	{ "ssl-max-ver", ssl_opt_ver, SSL_BO_OFF(max_ver) },
	{ "no-tlsv10", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS10 },
	{ "no-tlsv11", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS11 },
	{ "no-tlsv12", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS12 },
	{ "no-tlsv13", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS13 },
	{ "ca-file", ssl_opt_str, SSL_BO_OFF(ca_file), .what = "a file" },
	{ "crl-file", ssl_opt_str, SSL_BO_OFF(crl_file), .what = "a file" },
	{ "verify", ssl_opt_verify, .what = "'none', 'optional' or 'required'" },
	{ "strict-sni", ssl_opt_on, SSL_BO_OFF(strict_sni), .bind_only = 1 },
	{ "tls-ticket-keys", ssl_opt_ticket_keys, .what = "a file", .bind_only = 1 },
};

int ssl_bind_parse_opt(struct ssl_bind_opts *o, int argc, char **argv, int crtlist, char **err)
{
	/* A crt-list line is text: its option words are looked up here. */
	for (size_t i = 0; i < ARRAY_SIZE(ssl_opts); i++)
		if (strcmp(argv[0], ssl_opts[i].name) == 0)
			return crtlist && ssl_opts[i].bind_only ? 0 :
			       ssl_opts[i].parse(o, &ssl_opts[i], argc, argv, err);
	return 0;
}

/* Every bind TLS row shares this parser: its .priv is the ssl_opts[] entry,
 * whose parser crt-list lines use too. */
static int ssl_bind_kw(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                       char **argv, char **err)
{
	const struct ssl_opt *opt = kw->priv;

	if (!bc->ssl) {
		ssl_init_once();
		bc->ssl = xcalloc(1, sizeof(*bc->ssl));
		bc->ssl->verify = -1;
		bc->ssl->conf_file = bc->conf_file;
		bc->ssl->conf_line = bc->conf_line;
	}
	return opt->parse(bc->ssl, opt, argc, argv, err);
}

/* ---- contexts (client side) ---- */

const struct ssl_bind_opts *ssl_ctx_opts(const SSL_CTX *ctx)
{
	return SSL_CTX_get_ex_data(ctx, sslg.ex_opts);
}

/* <o>'s string option <f>, else the global default. */
#define SSL_OPT(o, f) ((o)->f ? (o)->f : sslg.bind_def.f)

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
	SSL_set_verify(ssl, SSL_CTX_get_verify_mode(ctx), NULL);
	SSL_set_min_proto_version(ssl, SSL_CTX_get_min_proto_version(ctx));
	SSL_set_max_proto_version(ssl, SSL_CTX_get_max_proto_version(ctx));
	SSL_clear_options(ssl, SSL_get_options(ssl));
	SSL_set_options(ssl, SSL_CTX_get_options(ctx));
	if (cas)
		SSL_set_client_CA_list(ssl, SSL_dup_CA_list(cas));
	if (o) {
		const char *c = SSL_OPT(o, ciphers);
		const char *cs = SSL_OPT(o, ciphersuites);

		if (c)
			SSL_set_cipher_list(ssl, c);
		if (cs)
			SSL_set_ciphersuites(ssl, cs);
	}
}

/* Picks the certificate from the ClientHello: exact SNI, then wildcard,
 * ECDSA when the client accepts it; the default otherwise, or a refusal
 * with strict-sni. */
static int ssl_client_hello_cb(SSL *ssl, int *al, void *arg)
{
	SSL_CTX *cur = SSL_get_SSL_CTX(ssl), *ctx;
	const struct ssl_bind_opts *o = arg;
	char name[256];
	const char *sni = ssl_hello_sni(ssl, name, sizeof(name));

	ctx = ssl_ckch_pick(o, sni, ssl_hello_ecdsa(ssl));
	if (!ctx && o->strict_sni) {
		*al = SSL_AD_UNRECOGNIZED_NAME;
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (ctx && ctx != cur)
		ssl_apply_ctx(ssl, ctx);
	return SSL_CLIENT_HELLO_SUCCESS;
}

/* The protocol range: [min, max] (defaults TLSv1.2 and the newest) less
 * the no-tlsvXX versions; the range spans from the lowest to the highest
 * version left. */
static int ssl_ctx_versions(SSL_CTX *ctx, int min, int max, unsigned no, char **err)
{
	int lo = 0, hi = 0;

	if (!min)
		min = TLS1_2_VERSION;
	for (size_t i = 0; i < ARRAY_SIZE(ssl_versions); i++) {
		int v = ssl_versions[i].ver;

		if (v < min || (max && v > max) || (no & ssl_versions[i].no))
			continue;
		if (!lo)
			lo = v;
		hi = v;
	}
	if (!lo) {
		*err = str_fmt("no TLS version left between the minimum and the maximum");
		return -1;
	}
	SSL_CTX_set_min_proto_version(ctx, lo);
	SSL_CTX_set_max_proto_version(ctx, hi);
	return 0;
}

/* Loads the CA and CRL files of a context that verifies its peer. */
static int ssl_ctx_cas(SSL_CTX *ctx, const char *ca, const char *crl, int server_side,
                       char **err)
{
	if (ca) {
		if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
			ERR_clear_error();
			*err = str_fmt("cannot load CA file '%s'", ca);
			return -1;
		}
		if (server_side)
			SSL_CTX_set_client_CA_list(ctx, SSL_load_client_CA_file(ca));
	}
	if (crl) {
		X509_STORE *st = SSL_CTX_get_cert_store(ctx);
		BIO *b = BIO_new_file(crl, "r");
		X509_CRL *c;
		int n = 0;

		if (!b) {
			ERR_clear_error();
			*err = str_fmt("cannot read CRL file '%s'", crl);
			return -1;
		}
		while ((c = PEM_read_bio_X509_CRL(b, NULL, NULL, NULL))) {
			X509_STORE_add_crl(st, c);
			X509_CRL_free(c);
			n++;
		}
		BIO_free(b);
		ERR_clear_error();
		if (!n) {
			*err = str_fmt("no CRL found in '%s'", crl);
			return -1;
		}
		X509_STORE_set_flags(st, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
	}
	return 0;
}

static int ssl_ctx_ciphers(SSL_CTX *ctx, const char *c, const char *cs, const char *curves,
                           char **err)
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
	ERR_clear_error();
	return 0;
}

SSL_CTX *ssl_bind_new_ctx(const struct ssl_bind_opts *o, struct ckch *ck, char **err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	const struct ssl_bind_opts *d = &sslg.bind_def;
	int verify = o->verify >= 0 ? o->verify : SSL_VERIFY_NONE;
	char *e = NULL;

	if (!ctx) {
		*err = str_fmt("cannot create a TLS context");
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE |
			    SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
			 SSL_MODE_RELEASE_BUFFERS);
	if (ssl_ctx_versions(ctx, o->min_ver ? o->min_ver : d->min_ver,
			     o->max_ver ? o->max_ver : d->max_ver, o->no_ver | d->no_ver, &e) ||
	    ssl_ctx_ciphers(ctx, SSL_OPT(o, ciphers), SSL_OPT(o, ciphersuites),
			    SSL_OPT(o, curves), &e) ||
	    ssl_ctx_cas(ctx, o->ca_file, o->crl_file, 1, &e))
		goto fail;
	if (verify != SSL_VERIFY_NONE && !o->ca_file) {
		e = str_fmt("'verify %s' needs a 'ca-file'",
			    verify & SSL_VERIFY_FAIL_IF_NO_PEER_CERT ? "required" : "optional");
		goto fail;
	}
	SSL_CTX_set_verify(ctx, verify, NULL);
	if (ckch_attach(ck, ctx) == -1) {
		e = str_fmt("'%s': cannot use this certificate", ck->path);
		goto fail;
	}
	SSL_CTX_set_ex_data(ctx, sslg.ex_opts, (void *)o);
	SSL_CTX_set_alpn_select_cb(ctx, ssl_alpn_select, NULL);
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
	if (lo->ciphers)
		m->ciphers = lo->ciphers;
	if (lo->ciphersuites)
		m->ciphersuites = lo->ciphersuites;
	if (lo->curves)
		m->curves = lo->curves;
	if (lo->min_ver)
		m->min_ver = lo->min_ver;
	if (lo->max_ver)
		m->max_ver = lo->max_ver;
	m->no_ver |= lo->no_ver;
	if (lo->ca_file)
		m->ca_file = lo->ca_file;
	if (lo->crl_file)
		m->crl_file = lo->crl_file;
	if (lo->verify >= 0)
		m->verify = lo->verify;
	if (lo->alpn) {
		m->alpn = lo->alpn;
		m->alpn_len = lo->alpn_len;
	}
	return m;
}

/* The session cache and tickets live in the context a handshake starts on
 * (the default one), whichever certificate SNI then selects. */
static void ssl_ctx_sessions(struct ssl_bind_opts *o, SSL_CTX *ctx, const void *id)
{
	unsigned char sid[SSL_MAX_SID_CTX_LENGTH];
	int n = snprintf((char *)sid, sizeof(sid), "sluice-%p", id);

	SSL_CTX_set_session_id_context(ctx, sid, (unsigned)MIN(n, (int)sizeof(sid)));
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
	if (sslg.cachesize >= 0)
		SSL_CTX_sess_set_cache_size(ctx, sslg.cachesize);
	if (!sslg.cachesize)
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (sslg.lifetime_ms)
		SSL_CTX_set_timeout(ctx, (long)(sslg.lifetime_ms / 1000 ? sslg.lifetime_ms / 1000 : 1));
	if (o->has_ticket_key)
		SSL_CTX_set_tlsext_ticket_keys(ctx, o->ticket_key, 80);
}

/* Builds the contexts of a bind line. Returns the errors reported. */
static int ssl_bind_build(struct bind_conf *bc)
{
	struct ssl_bind_opts *o = bc->ssl;

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
		struct ssl_crt_ent *e = &o->crts[i];
		char *err = NULL;

		struct ssl_bind_opts *m = ssl_merge_opts(o, e->lo);

		e->mo = m != o ? m : NULL;
		e->ctx = ssl_bind_new_ctx(m, e->ck, &err);
		if (!e->ctx) {
			log_alert("%s:%d: bind: %s", bc->conf_file, bc->conf_line, err);
			free(err);
			return 1;
		}
		ssl_ctx_sessions(o, e->ctx, bc);
		SSL_CTX_set_client_hello_cb(e->ctx, ssl_client_hello_cb, o);
	}
	ssl_ckch_index(o);
	return 0;
}

/* ---- contexts (server side) ---- */

static int ssl_new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
	struct server *srv = SSL_get_ex_data(ssl, sslg.ex_srv);

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
	char *e = NULL;

	if (!ctx) {
		log_alert("%s:%d: server '%s': cannot create a TLS context", srv->conf_file,
			  srv->conf_line, srv->name);
		return 1;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF |
			    SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
			 SSL_MODE_RELEASE_BUFFERS);
	if (ssl_ctx_versions(ctx, x->min_ver ? x->min_ver : sslg.srv_min_ver,
			     x->max_ver ? x->max_ver : sslg.srv_max_ver, x->no_ver | sslg.srv_no_ver,
			     &e) ||
	    ssl_ctx_ciphers(ctx, x->ciphers ? x->ciphers : sslg.srv_ciphers,
			    x->ciphersuites ? x->ciphersuites : sslg.srv_ciphersuites, NULL, &e) ||
	    ssl_ctx_cas(ctx, x->ca_file, x->crl_file, 0, &e))
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
	}
	if (x->alpn)
		SSL_CTX_set_alpn_protos(ctx, x->alpn, (unsigned)x->alpn_len);
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
			if (!li->bc->ssl->def_ctx)
				errs += ssl_bind_build(li->bc);
			if (!li->bc->ssl->ft)
				li->bc->ssl->ft = str_fmt("%s~", px->name);
		}
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			if (srv->ssl && srv->ssl->owner != srv)
				srv->ssl = ssl_srv_dup(srv->ssl, srv);
			if (srv->ssl && (srv->ssl->enabled || srv->ssl->check_ssl) && !srv->ssl->ctx)
				errs += ssl_srv_build(srv);
		}
	}
	return errs;
}

/* ---- server keywords ---- */

static char *ssl_strdup0(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* A server's own copy of the TLS settings it got from default-server. */
static struct ssl_srv *ssl_srv_dup(const struct ssl_srv *from, const struct server *srv)
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
	if (from->alpn) {
		x->alpn = xcalloc(1, from->alpn_len);
		memcpy(x->alpn, from->alpn, from->alpn_len);
	}
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
	free(x->alpn);
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

/* The TLS settings <srv> may change: created on first use, copied when
 * still shared with the default-server they came from. */
static struct ssl_srv *ssl_srv_own(struct server *srv)
{
	struct ssl_srv *x = srv->ssl;

	if (!x) {
		ssl_init_once();
		x = srv->ssl = xcalloc(1, sizeof(*x));
		x->verify = -1;
		x->owner = srv;
	} else if (x->owner != srv) {
		x = srv->ssl = ssl_srv_dup(x, srv);
	}
	return x;
}

/* The field at the row's .off in <x>. */
#define SSL_SRV_AT(x, kw, type) ((type *)((char *)(x) + (kw)->off))

/* ssl, no-ssl-reuse, check-ssl: an int set to 1 at the row's .off. */
static int ssl_srv_bool(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                        char **err)
{
	*SSL_SRV_AT(ssl_srv_own(srv), kw, int) = 1;
	return 1;
}

/* no-tlsv10 ... no-tlsv13: the row's .set is the version's bit. */
static int ssl_srv_no_ver(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	ssl_srv_own(srv)->no_ver |= (unsigned)kw->set;
	return 1;
}

/* ca-file, crl-file, crt, verifyhost, check-sni, ciphers, ciphersuites: a
 * string at the row's .off. */
static int ssl_srv_str(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                       char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	ssl_set_str(SSL_SRV_AT(x, kw, char *), argv[1]);
	return 2;
}

/* ssl-min-ver, ssl-max-ver: a version at the row's .off. */
static int ssl_srv_ver(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                       char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	return ssl_parse_ver(argv[0], argv[1], SSL_SRV_AT(x, kw, int), err) ? -1 : 2;
}

static int ssl_srv_verify(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	return ssl_parse_verify(argv[1], 1, &x->verify, err) ? -1 : 2;
}

static int ssl_srv_alpn(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                        char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	return ssl_parse_alpn(argv[1], &x->alpn, &x->alpn_len, err) ? -1 : 2;
}

/* sni <expr>: evaluated per connection. */
static int ssl_srv_sni_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	if (x->sni) {
		smp_expr_free(x->sni);
		free(x->sni);
	}
	x->sni = xcalloc(1, sizeof(*x->sni));
	if (smp_expr_parse(argv[1], x->sni, NULL, err) == -1) {
		free(x->sni);
		x->sni = NULL;
		return -1;
	}
	ssl_set_str(&x->sni_str, argv[1]);
	return 2;
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
	ssl_sock_start(c, ssl);
	return 0;
}

int ssl_srv_connect(struct conn *c, struct server *srv, const char *sni)
{
	struct ssl_srv *x = srv->ssl;
	SSL *ssl = ssl_sock_new(x->ctx, c->fd, 0);

	if (!ssl)
		return -1;
	SSL_set_ex_data(ssl, sslg.ex_srv, srv);
	if (sni && *sni)
		SSL_set_tlsext_host_name(ssl, sni);
	if (x->verify != SSL_VERIFY_NONE) {
		const char *host = x->verifyhost ? x->verifyhost : sni;

		if (host && *host)
			SSL_set1_host(ssl, host);
	}
	if (x->sess && !x->no_reuse)
		SSL_set_session(ssl, x->sess);
	ssl_sock_start(c, ssl);
	return 0;
}

int ssl_check_enabled(const struct server *srv, int own_addr)
{
	return srv->ssl && (srv->ssl->check_ssl || (srv->ssl->enabled && own_addr));
}

struct ssl_st *ssl_check_new(struct server *srv, int fd)
{
	SSL *ssl = ssl_sock_new(srv->ssl->ctx, fd, 0);

	if (!ssl)
		return NULL;
	if (srv->ssl->check_sni)
		SSL_set_tlsext_host_name(ssl, srv->ssl->check_sni);
	if (srv->ssl->verify != SSL_VERIFY_NONE && (srv->ssl->verifyhost || srv->ssl->check_sni))
		SSL_set1_host(ssl, srv->ssl->verifyhost ? srv->ssl->verifyhost : srv->ssl->check_sni);
	return ssl;
}

/* ---- keywords ---- */

/* One row per ssl_opts[] entry, made at start-up: its .priv is the option. */
static struct bind_kw ssl_bind_kws[ARRAY_SIZE(ssl_opts)];

#define SSL_SRV_OFF(field) .off = offsetof(struct ssl_srv, field)

static struct srv_kw ssl_srv_kws[] = {
	{ "ssl", .parse = ssl_srv_bool, SSL_SRV_OFF(enabled) },
	{ "verify", .parse = ssl_srv_verify },
	{ "verifyhost", .parse = ssl_srv_str, SSL_SRV_OFF(verifyhost) },
	{ "ca-file", .parse = ssl_srv_str, SSL_SRV_OFF(ca_file) },
	{ "crl-file", .parse = ssl_srv_str, SSL_SRV_OFF(crl_file) },
	{ "crt", .parse = ssl_srv_str, SSL_SRV_OFF(crt) },
	{ "sni", .parse = ssl_srv_sni_kw },
	{ "alpn", .parse = ssl_srv_alpn },
	{ "ciphers", .parse = ssl_srv_str, SSL_SRV_OFF(ciphers) },
	{ "ciphersuites", .parse = ssl_srv_str, SSL_SRV_OFF(ciphersuites) },
	{ "ssl-min-ver", .parse = ssl_srv_ver, SSL_SRV_OFF(min_ver) },
	{ "ssl-max-ver", .parse = ssl_srv_ver, SSL_SRV_OFF(max_ver) },
	{ "no-tlsv10", .parse = ssl_srv_no_ver, .set = SSL_BO_NO_TLS10 },
	{ "no-tlsv11", .parse = ssl_srv_no_ver, .set = SSL_BO_NO_TLS11 },
	{ "no-tlsv12", .parse = ssl_srv_no_ver, .set = SSL_BO_NO_TLS12 },
	{ "no-tlsv13", .parse = ssl_srv_no_ver, .set = SSL_BO_NO_TLS13 },
	{ "no-ssl-reuse", .parse = ssl_srv_bool, SSL_SRV_OFF(no_reuse) },
	{ "check-ssl", .parse = ssl_srv_bool, SSL_SRV_OFF(check_ssl) },
	{ "check-sni", .parse = ssl_srv_str, SSL_SRV_OFF(check_sni) },
};

/* ssl-default-bind-options / ssl-default-server-options (row value 1):
 * version limits. */
static int kw_default_options(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int srv = (int)ctx->kw_row->arg;

	for (int i = 0; i < argc; i++) {
		unsigned bit = ssl_no_ver_bit(argv[i]);
		char *err = NULL;

		if (bit) {
			*(srv ? &sslg.srv_no_ver : &sslg.bind_def.no_ver) |= bit;
		} else if ((strcmp(argv[i], "ssl-min-ver") == 0 || strcmp(argv[i], "ssl-max-ver") == 0) &&
			   i + 1 < argc) {
			int *v = strcmp(argv[i], "ssl-min-ver") == 0 ? (srv ? &sslg.srv_min_ver : &sslg.bind_def.min_ver)
						   : (srv ? &sslg.srv_max_ver : &sslg.bind_def.max_ver);

			if (ssl_parse_ver(argv[i], argv[i + 1], v, &err) == -1) {
				cfg_alert(ctx, "%s", err);
				free(err);
				return -1;
			}
			i++;
		} else {
			cfg_alert(ctx, "unsupported option '%s' (expected no-tlsv1x, ssl-min-ver "
				  "or ssl-max-ver)", argv[i]);
			return -1;
		}
	}
	return 0;
}

/* The strings of ssl-default-*-ciphers...: a row's value indexes these. */
enum { SSL_DEF_BIND_CIPHERS, SSL_DEF_BIND_SUITES, SSL_DEF_BIND_CURVES, SSL_DEF_SRV_CIPHERS,
       SSL_DEF_SRV_SUITES };

static int kw_default_str(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static char **const dst[] = {
		[SSL_DEF_BIND_CIPHERS] = &sslg.bind_def.ciphers,
		[SSL_DEF_BIND_SUITES]  = &sslg.bind_def.ciphersuites,
		[SSL_DEF_BIND_CURVES]  = &sslg.bind_def.curves,
		[SSL_DEF_SRV_CIPHERS]  = &sslg.srv_ciphers,
		[SSL_DEF_SRV_SUITES]   = &sslg.srv_ciphersuites,
	};

	if (argc != 1) {
		cfg_alert(ctx, "expects one argument (a list)");
		return -1;
	}
	ssl_set_str(dst[ctx->kw_row->arg], argv[0]);
	return 0;
}

static int kw_server_verify(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *err = NULL;

	if (argc != 1 || ssl_parse_verify(argv[0], 1, &sslg.srv_verify, &err) == -1) {
		cfg_alert(ctx, "expects 'none' or 'required'");
		free(err);
		return -1;
	}
	return 0;
}

static int kw_tune_ssl_lifetime(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *e;

	if (argc != 1) {
		cfg_alert(ctx, "expects one value");
		return -1;
	}
	if (parse_time_ms(argv[0], 1000, &sslg.lifetime_ms, &e) == -1) {
		cfg_alert(ctx, "expects a time (default unit: seconds): %s", e);
		return -1;
	}
	return 0;
}

static int kw_tune_ssl_cachesize(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *end;
	long v;

	if (argc != 1) {
		cfg_alert(ctx, "expects one value");
		return -1;
	}
	v = strtol(argv[0], &end, 10);
	if (*end || v < 0) {
		cfg_alert(ctx, "expects a number of sessions (0: no cache)");
		return -1;
	}
	sslg.cachesize = v;
	return 0;
}

static struct cfg_kw ssl_cfg_kws[] = {
	{ "ssl-default-bind-ciphers", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<cipher list>", .arg = SSL_DEF_BIND_CIPHERS },
	{ "ssl-default-bind-ciphersuites", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<ciphersuites>", .arg = SSL_DEF_BIND_SUITES },
	{ "ssl-default-bind-curves", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<curves>", .arg = SSL_DEF_BIND_CURVES },
	{ "ssl-default-bind-options", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_options,
	  .usage = "<options>", .arg = 0 },
	{ "ssl-default-server-ciphers", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<cipher list>", .arg = SSL_DEF_SRV_CIPHERS },
	{ "ssl-default-server-ciphersuites", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<ciphersuites>", .arg = SSL_DEF_SRV_SUITES },
	{ "ssl-default-server-options", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_options,
	  .usage = "<options>", .arg = 1 },
	{ "ssl-server-verify", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_server_verify, .usage = "none|required" },
	{ "tune.ssl.cachesize", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_tune_ssl_cachesize,
	  .usage = "<number>" },
	{ "tune.ssl.lifetime", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_tune_ssl_lifetime,
	  .usage = "<time>" },
};

SLUICE_INIT(ssl_register)
{
	for (size_t i = 0; i < ARRAY_SIZE(ssl_opts); i++)
		ssl_bind_kws[i] = (struct bind_kw){ .name = ssl_opts[i].name, .parse = ssl_bind_kw,
		                                    .priv = &ssl_opts[i] };
	bind_register_keywords(ssl_bind_kws, ARRAY_SIZE(ssl_bind_kws));
	srv_register_keywords(ssl_srv_kws, ARRAY_SIZE(ssl_srv_kws));
	cfg_register(ssl_cfg_kws, ARRAY_SIZE(ssl_cfg_kws));
	cfg_register_postparse(ssl_postparse, 20);
	bind_register_release(ssl_bind_free);
}

#else /* !USE_OPENSSL */

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

const char *ssl_bind_ft(const struct bind_conf *bc)
{
	return NULL;
}

int ssl_bind_accept(struct conn *c, struct bind_conf *bc)
{
	return -1;
}

#endif

