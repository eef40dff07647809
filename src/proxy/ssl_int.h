/* Shared by the TLS configuration files of proxy/ (ssl_cfg.c, ssl_opts.c,
 * ssl_global.c, ssl_ckch.c, ssl_crtlist.c, ssl_cafile.c, ssl_ocsp.c,
 * ssl_tickets.c, ssl_gencert.c, ssl_pp.c); not an API for other modules. */
#ifndef SLUICE_SSL_INT_H
#define SLUICE_SSL_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

struct cfg_ctx;
struct dstr;

/* ---- the process-wide settings (global section; ssl_global.c) ---- */

/* ssl-load-extra-files: which files next to a certificate are looked for. */
#define SSL_XF_BUNDLE 0x01
#define SSL_XF_SCTL   0x02
#define SSL_XF_OCSP   0x04
#define SSL_XF_ISSUER 0x08
#define SSL_XF_KEY    0x10
#define SSL_XF_ALL    0x1f

struct ssl_global {
	char    *ca_base, *crt_base;       /* ca-base, crt-base */
	char    *issuers_path;             /* issuers-chain-path */
	unsigned extra_files;              /* SSL_XF_* (ssl-load-extra-files) */
	int      extra_del_ext;            /* ssl-load-extra-del-ext */
	int      skip_self_issued;         /* ssl-skip-self-issued-ca */
	EVP_PKEY *dh_file;                 /* ssl-dh-param-file's parameters */
	int      default_dh;               /* tune.ssl.default-dh-param, 0: none */
	long     cachesize;                /* tune.ssl.cachesize, -1: OpenSSL's default */
	uint32_t lifetime_ms;              /* tune.ssl.lifetime, 0: OpenSSL's default */
	int      capture_size;             /* tune.ssl.capture-buffer-size, 0: no capture */
	int      keylog;                   /* tune.ssl.keylog on */
	int      ctx_cache_size;           /* tune.ssl.ssl-ctx-cache-size (generated certificates) */
	int      srv_verify;               /* ssl-server-verify: SSL_VERIFY_PEER or NONE */
	/* ssl-default-server-*: what server lines start from */
	char    *srv_ciphers, *srv_ciphersuites;
	int      srv_min_ver, srv_max_ver;
	unsigned srv_no_ver;
	unsigned srv_flags;                /* SSL_BO_F_NO_TICKETS */
};
extern struct ssl_global sslg;

/* Resolves <path> against ca-base (<crt> 0) or crt-base (<crt> 1) when it is
 * relative and the base is set. Returns an allocated string. */
char *ssl_path_resolve(const char *path, int crt);

/* The chain of issuers-chain-path whose first certificate issued <leaf>,
 * NULL if none. */
STACK_OF(X509) *ssl_issuers_chain_for(X509 *leaf);

/* Built-in DH parameters of about <bits> bits (RFC 7919 groups, 2048 at
 * least), shared: the caller takes a reference. */
EVP_PKEY *ssl_dh_params(int bits);

/* ---- ex_data indexes (ssl_cfg.c) ---- */

struct ssl_indexes {
	int ctx_opts;    /* SSL_CTX: the struct ssl_bind_opts it was built from */
	int ctx_ckch;    /* SSL_CTX: the struct ckch it serves */
	int ctx_tkeys;   /* SSL_CTX: its struct tls_keys_ref (tls-ticket-keys) */
	int ssl_srv;     /* SSL: the struct server it connects to */
};
extern struct ssl_indexes ssl_idx;

/* Creates the indexes once (every TLS keyword parser calls it). */
void ssl_init_once(void);

/* ---- certificates (ssl_ckch.c) ---- */

struct ocsp_ent;

/* A certificate file as loaded: certificate, key, chain and the files found
 * next to it. Shared by every bind line, crt-list line and server naming the
 * same path; the runtime API replaces its contents and every context built
 * from it at once (<users>). A "new ssl cert" entry has no <cert> until a
 * transaction is committed. */
struct ckch {
	struct ckch     *next;
	char            *path;
	X509            *cert;
	EVP_PKEY        *key;
	STACK_OF(X509)  *chain;
	X509            *issuer;        /* issuer of <cert> (chain, .issuer file), for OCSP */
	EVP_PKEY        *dh;            /* DH parameters found in the file */
	unsigned char   *sctl;          /* .sctl: a SignedCertificateTimestampList */
	size_t           sctl_len;
	struct ocsp_ent *ocsp;          /* .ocsp: the stapled response (ssl_ocsp.c) */
	int              ocsp_wanted;   /* a .ocsp file was found (possibly empty) */
	SSL_CTX        **users;
	int              nusers;
	int              from_conf;     /* named by the configuration ("del ssl cert" refused) */
	int              refs;          /* crt-list lines naming it */
};

/* Loads or finds the certificate file <path> (resolved already). Returns it,
 * or NULL with an allocated <err>. */
struct ckch *ckch_get(const char *path, char **err);

/* The loaded certificate file <path>, NULL if none. */
struct ckch *ckch_find(const char *path);

/* Makes <ctx> serve <ck> and remembers it as a user. Returns 0 or -1. */
int ckch_attach(struct ckch *ck, SSL_CTX *ctx);

/* <ctx> (being freed) no longer serves <ck>. */
void ckch_detach(struct ckch *ck, SSL_CTX *ctx);

/* Certificates loaded, in load order (runtime API). */
struct ckch *ckch_list(void);

/* Reads a whole (small, at most 1 MB) file into an allocated buffer.
 * Returns its length, or -1 (errno set). */
ssize_t ssl_read_file(const char *path, unsigned char **out);

/* Appends "<label><t as OpenSSL prints dates>\n" to <out>. */
void ssl_dump_time(struct dstr *out, const char *label, const ASN1_TIME *t);

/* Dumps one certificate in "show ssl cert" form (also "show ssl ca-file"). */
void ckch_dump_x509(struct dstr *out, X509 *x, EVP_PKEY *key);

/* ---- the TLS options of a bind line (ssl_opts.c), contexts (ssl_cfg.c) ---- */

/* A set of X509 verification error codes (ca-ignore-err, crt-ignore-err). */
struct ssl_errset {
	uint64_t bits[2];               /* codes 0..127 */
};

static inline int ssl_errset_has(const struct ssl_errset *s, int code)
{
	return code >= 0 && code < 128 && (s->bits[code >> 6] >> (code & 63)) & 1;
}

/* Flags of a bind line, of one crt-list line (added to the bind's) or of
 * ssl-default-bind-options. */
#define SSL_BO_F_NO_TICKETS   0x01  /* no-tls-tickets */
#define SSL_BO_F_PREFER_CLI   0x02  /* prefer-client-ciphers */
#define SSL_BO_F_NO_CA_NAMES  0x04  /* no-ca-names */
#define SSL_BO_F_GEN_CERTS    0x08  /* generate-certificates */
#define SSL_BO_F_ALLOW_0RTT   0x10  /* allow-0rtt */

struct tls_keys_ref;
struct ssl_gen;
struct crtlist;
struct crtlist_ent;

/* The TLS options of a bind line, or the overrides of one crt-list line
 * (strings NULL, numbers 0 / -1 when not given there). */
struct ssl_bind_opts {
	int              enabled;       /* "ssl" */
	char            *ciphers, *ciphersuites, *curves, *ecdhe, *sigalgs, *client_sigalgs;
	int              min_ver, max_ver;  /* SSL3_VERSION...; 0: not set */
	unsigned         no_ver;        /* SSL_BO_NO_* */
	unsigned         flags;         /* SSL_BO_F_* */
	char            *ca_file, *ca_verify_file, *crl_file;
	int              verify;        /* SSL_VERIFY_* combination; -1: not set */
	unsigned char   *alpn, *npn;    /* wire format, NULL: none */
	size_t           alpn_len, npn_len;
	struct ssl_errset ca_ignore, crt_ignore;
	char            *ca_sign_file, *ca_sign_pass;
	int              strict_sni;
	struct tls_keys_ref *tkeys;     /* tls-ticket-keys (ssl_tickets.c) */
	char            *conf_file;
	int              conf_line;
	char            *ft;            /* "<frontend>~" for %ft */

	/* certificates: loaded while parsing, contexts built at post-parse */
	struct ssl_crt_ent *crts;
	int              ncrts;
	struct ssl_sni_ent *sni;        /* index, in load order */
	int              nsni;
	SSL_CTX         *def_ctx;       /* first certificate's: handshakes start on it */
	struct ssl_gen  *gen;           /* generate-certificates (ssl_gencert.c) */
	struct crtlist **lists;         /* crt-lists and directories it uses */
	int              nlists;
	int              built;         /* contexts built: runtime additions build theirs */
};

#define SSL_BO_NO_SSLV3 0x10
#define SSL_BO_NO_TLS10 0x01
#define SSL_BO_NO_TLS11 0x02
#define SSL_BO_NO_TLS12 0x04
#define SSL_BO_NO_TLS13 0x08

/* One certificate of a bind line: a "crt" file, or a line of a crt-list or
 * directory (<src>), whose options and SNI filters it uses. */
struct ssl_crt_ent {
	struct ckch          *ck;
	struct crtlist_ent   *src;      /* the crt-list line, NULL: a "crt <file>" */
	struct ssl_bind_opts *lo;       /* the line's options (src's), NULL: the bind's */
	char                **filters;  /* "*.example.com", "!secret.example.com" (src's) */
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
 * <err>. Shared by bind lines and crt-list lines (<crtlist>: only the
 * options a crt-list line may hold). */
int ssl_bind_parse_opt(struct ssl_bind_opts *o, int argc, char **argv, int crtlist, char **err);

/* Parses a version name ("TLSv1.2") for keyword <kw> into *<out>. Returns 0,
 * or -1 with an allocated <err>. */
int ssl_parse_ver(const char *kw, const char *v, int *out, char **err);

/* "h2,http/1.1" in wire format into *<out> (replaced). Returns 0 or -1. */
int ssl_parse_protos(const char *kw, const char *v, unsigned char **out, size_t *outlen,
                     char **err);

/* Whether the OpenSSL in use supports NPN. */
int ssl_npn_supported(void);

/* The options of a context (for SNI switches and fetches). */
const struct ssl_bind_opts *ssl_ctx_opts(const SSL_CTX *ctx);

/* The version range of <o> (merged with ssl-default-bind-options), set on
 * <ctx>. Returns 0, or -1 with an allocated <err>. */
int ssl_ctx_versions(SSL_CTX *ctx, int min, int max, unsigned no, char **err);

/* The ssl-default-bind-* settings (ssl_opts.c). */
extern struct ssl_bind_opts ssl_bind_def;

/* Builds the context of one certificate <ck> of bind options <o>. Returns
 * it, or NULL with an allocated <err>. */
SSL_CTX *ssl_bind_new_ctx(const struct ssl_bind_opts *o, struct ckch *ck, char **err);

/* The context of bind line options <o> and certificate line <e>: merges
 * the line's options, builds it, sets the session settings. Returns 0 or -1
 * with <err> allocated. */
int ssl_crt_ent_build(struct ssl_bind_opts *o, struct ssl_crt_ent *e, char **err);

/* Gives <ctx>, built for bind options <o>, what every context of the line
 * shares: the session cache and tickets, the ClientHello callback. */
void ssl_bind_ctx_finish(struct ssl_bind_opts *o, SSL_CTX *ctx);

/* Frees what a certificate line of a bind holds (context, merged options). */
void ssl_crt_ent_release(struct ssl_crt_ent *e);

/* Appends a certificate line for <ck> (and crt-list line <src>) to <o>. */
struct ssl_crt_ent *ssl_add_crt(struct ssl_bind_opts *o, struct ckch *ck,
                                struct crtlist_ent *src);

/* Builds the SNI index of <o> from its certificate lines (contexts built). */
void ssl_ckch_index(struct ssl_bind_opts *o);

/* Frees what ssl_ckch_load_crt*() added to <o> (certificate lines, their
 * contexts and the SNI index); the certificate and crt-list stores stay. */
void ssl_ckch_free_crts(struct ssl_bind_opts *o);

/* Frees what <o> holds (strings, certificate lines), not <o> itself. */
void ssl_opts_clear(struct ssl_bind_opts *o);

/* Frees a crt-list line's option set (<o> itself too). */
void ssl_opts_free(struct ssl_bind_opts *o);

/* Writes <o>'s options as a crt-list "[...]" holds them ("show ssl crt-list"). */
void ssl_opts_dump(struct dstr *out, const struct ssl_bind_opts *o);

/* ---- crt-lists and certificate directories (ssl_crtlist.c) ---- */

/* One line of a crt-list (or one file of a directory). */
struct crtlist_ent {
	struct crtlist_ent   *next;
	struct ckch          *ck;
	struct ssl_bind_opts *lo;       /* "[...]" options, NULL: none */
	char                **filters;
	int                   nfilters;
	int                   line;     /* in the file (0: added at run time) */
};

/* A crt-list file or a certificate directory, shared by the bind lines
 * naming it: its lines and the binds to update when lines are added or
 * removed at run time. */
struct crtlist {
	struct crtlist       *next;
	char                 *path;
	int                   dir;
	struct crtlist_ent   *ents;     /* in order */
	struct ssl_bind_opts **binds;
	int                   nbinds;
};

/* Loads (or finds) crt-list <path> (<dir>: a certificate directory) and
 * adds its lines to <o>. Returns 0, or -1 with an allocated <err> naming the
 * file and line. */
int crtlist_use(struct ssl_bind_opts *o, const char *path, int dir, char **err);

/* <o> goes away: it no longer uses its crt-lists. */
void crtlist_forget_bind(struct ssl_bind_opts *o);

/* Forgets every loaded crt-list (tests reuse file names). */
void crtlist_forget_all(void);

/* Whether <ck> is named by a crt-list line. */
int crtlist_uses_ckch(const struct ckch *ck);

/* ---- CA and CRL files (ssl_cafile.c) ---- */

/* Loads CA file <ca> (and <ca_verify>: verification only, not named to
 * clients) and CRL file <crl> (all resolved paths, NULL: none) into <ctx>'s
 * verification store; <names>: send the CA names to clients (bind lines
 * without no-ca-names). The context is remembered so that "commit ssl
 * ca-file/crl-file" rebuilds its store. Returns 0, or -1 with <err>. */
int cafile_ctx_setup(SSL_CTX *ctx, const char *ca, const char *ca_verify, const char *crl,
                     int names, char **err);

/* <ctx> is being freed: forget it. */
void cafile_ctx_forget(SSL_CTX *ctx);

/* ---- OCSP stapling (ssl_ocsp.c) ---- */

/* Reads <path>.ocsp for <ck> if it exists (<ck>->cert and issuer known).
 * Returns 0 (also when none, or an invalid one: then warned and ignored), or
 * -1 with <err> when the response cannot be tied to the certificate for want
 * of an issuer. */
int ocsp_load_for(struct ckch *ck, const char *ocsp_path, char **err);

/* The status_request callback installed on every bind context. */
int ocsp_status_cb(SSL *ssl, void *arg);

/* Frees <ck>'s OCSP entry. */
void ocsp_release(struct ckch *ck);

/* Appends <ck>'s OCSP response as "openssl ocsp -resp_text" prints it
 * (nothing when it has none). */
void ocsp_dump(struct dstr *out, const struct ckch *ck);

/* The hex key of <ck>'s OCSP entry (static buffer), "" when none. */
const char *ocsp_key_hex(const struct ckch *ck);

/* ---- TLS ticket keys (ssl_tickets.c) ---- */

/* Loads (or finds) the keys file <path>. Returns the reference, or NULL with
 * an allocated <err>. */
struct tls_keys_ref *tls_keys_load(const char *path, char **err);

/* Installs the ticket key callback of <ref> on <ctx>. */
void tls_keys_install(struct tls_keys_ref *ref, SSL_CTX *ctx);

/* ---- generated certificates (ssl_gencert.c) ---- */

/* Loads the signing CA of a bind line with generate-certificates. Returns 0
 * or -1 with <err> allocated. */
int gencert_setup(struct ssl_bind_opts *o, char **err);

/* The context of a certificate forged for <sni> (cached), NULL on failure. */
SSL_CTX *gencert_get(struct ssl_bind_opts *o, const char *sni);

/* Frees <o>'s generated certificates and signing CA. */
void gencert_release(struct ssl_bind_opts *o);

#endif
