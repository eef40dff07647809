/* Shared by the TLS configuration files (ssl_cfg.c, ssl_ckch.c); not
 * an API for other modules. */
#ifndef SLUICE_SSL_INT_H
#define SLUICE_SSL_INT_H

#include <openssl/ssl.h>

/* A certificate file as loaded: certificate, key, chain. Shared by every
 * bind line naming the same path; the runtime API replaces its contents
 * and every context built from it at once (<users>). */
struct ckch {
	struct ckch     *next;
	char            *path;
	X509            *cert;
	EVP_PKEY        *key;
	STACK_OF(X509)  *chain;
	SSL_CTX        **users;
	int              nusers;
};

/* The TLS options of a bind line, or the overrides of one crt-list line
 * (strings NULL, numbers 0 / -1 when not given there). */
struct ssl_bind_opts {
	int              enabled;       /* "ssl" */
	char            *ciphers, *ciphersuites, *curves;
	int              min_ver, max_ver;  /* TLS1_VERSION...; 0: not set */
	unsigned         no_ver;        /* SSL_BO_NO_* */
	char            *ca_file, *crl_file;
	int              verify;        /* SSL_VERIFY_* combination; -1: not set */
	unsigned char   *alpn;          /* wire format, NULL: none */
	size_t           alpn_len;
	int              strict_sni;
	char            *ticket_keys;   /* tls-ticket-keys file */
	char            *conf_file;
	int              conf_line;
	char            *ft;            /* "<frontend>~" for %ft */

	/* certificates: loaded while parsing, contexts built at post-parse */
	struct ssl_crt_ent *crts;
	int              ncrts;
	struct ssl_sni_ent *sni;        /* index, in load order */
	int              nsni;
	SSL_CTX         *def_ctx;       /* first certificate's: handshakes start on it */
	unsigned char    ticket_key[80];/* from tls-ticket-keys: name, hmac, aes */
	int              has_ticket_key;
};

#define SSL_BO_NO_TLS10 0x01
#define SSL_BO_NO_TLS11 0x02
#define SSL_BO_NO_TLS12 0x04
#define SSL_BO_NO_TLS13 0x08

/* One "crt" or crt-list line: a certificate, its own options (crt-list),
 * its SNI filters (none: the names in the certificate). */
struct ssl_crt_ent {
	struct ckch          *ck;
	struct ssl_bind_opts *lo;       /* crt-list line options, NULL: the bind's */
	char                **filters;  /* "*.example.com", "!secret.example.com" */
	int                   nfilters;
	SSL_CTX              *ctx;      /* built at post-parse */
	struct ssl_bind_opts *mo;       /* <lo> merged over the bind's (owned), NULL: none */
};

/* An SNI index entry: an exact name, or a wildcard stored as ".example.com". */
struct ssl_sni_ent {
	char                *name;
	int                  wild;
	int                  ecdsa;    /* the certificate's key is EC */
	struct ssl_crt_ent  *ent;      /* negative filters, context */
};

/* Parses one bind TLS option at argv[0] into <o>. Returns the words used
 * (>= 1), 0 when argv[0] is not a TLS option, or -1 with an allocated
 * <err>. Shared by bind lines and crt-list lines. */
int ssl_bind_parse_opt(struct ssl_bind_opts *o, int argc, char **argv, int crtlist, char **err);

/* The options of a context (for SNI switches and fetches). */
const struct ssl_bind_opts *ssl_ctx_opts(const SSL_CTX *ctx);

/* Loads or finds the certificate file <path>. Returns it, or NULL with an
 * allocated <err>. */
struct ckch *ckch_get(const char *path, char **err);

/* Makes <ctx> serve <ck> and remembers it as a user. Returns 0 or -1. */
int ckch_attach(struct ckch *ck, SSL_CTX *ctx);

/* Builds the SNI index of <o> from its certificate lines (contexts built). */
void ssl_ckch_index(struct ssl_bind_opts *o);

/* Frees what ssl_ckch_load_crt*() added to <o> (certificate lines, their
 * options, contexts and the SNI index); the certificate store stays. */
void ssl_ckch_free_crts(struct ssl_bind_opts *o);

/* Frees what <o> holds (strings, certificate lines), not <o> itself. */
void ssl_opts_clear(struct ssl_bind_opts *o);

/* Certificates loaded, in load order (runtime API). */
struct ckch *ckch_list(void);

#endif
