/* TLS configuration: "bind ... ssl" (client side) and "server ... ssl"
 * (server side), the global ssl-* settings, the TLS contexts built from
 * them, and the sessions they start on connections (whose transport is
 * ssl.h). Certificates are loaded and indexed by ssl_ckch.c; fetches live in
 * rules/sample_ssl.c. Without USE_OPENSSL "ssl" is an unknown keyword and
 * these functions only let the callers link. */
#ifndef SLUICE_SSL_CFG_H
#define SLUICE_SSL_CFG_H

#include <stddef.h>

struct conn;
struct server;
struct bind_conf;
struct ssl_st;
struct ssl_ctx_st;
struct smp_expr;

/* "<frontend>~": the %ft of a TLS bind line, NULL for a plain one. */
const char *ssl_bind_ft(const struct bind_conf *bc);

/* ---- sessions on connections (stream.c) ---- */

/* Starts the server side of TLS on accepted connection <c> for the bind
 * line <bc> (which has "ssl"). Sets CO_F_SSL_HS. Returns 0, or -1 (no
 * memory: the caller closes). */
int ssl_bind_accept(struct conn *c, struct bind_conf *bc);

/* Starts the client side of TLS to server <srv> on connected <c>, with SNI
 * <sni> (NULL: none). Reuses the server's last session. Returns 0 or -1. */
int ssl_srv_connect(struct conn *c, struct server *srv, const char *sni);

/* Whether bind line <bc> / server <srv> uses TLS. */
int ssl_bind_enabled(const struct bind_conf *bc);
int ssl_srv_enabled(const struct server *srv);

/* "set server <srv> ssl on|off": whether <srv>'s next connections use TLS
 * (its checks keep what they had at start-up). Turning it on needs TLS
 * settings on the server line or its default-server (its context is built
 * then if it was not). Returns 0, or -1 with <err> allocated (the caller
 * frees) and nothing changed. */
int ssl_srv_set_enabled(struct server *srv, int on, char **err);

/* Free the TLS settings of a bind line / a server (proxy release; both
 * exist without USE_OPENSSL, as no-ops). */
void ssl_bind_free(struct bind_conf *bc);
void ssl_srv_free(struct server *srv);

/* The SNI expression of <srv> ("sni <expr>"), NULL when it has none. */
const struct smp_expr *ssl_srv_sni(const struct server *srv);

/* ---- health checks over TLS (check.c) ---- */

/* Whether <srv>'s checks speak TLS: "check-ssl", or "ssl" on a server
 * checked at its own address (<own_addr>: no check "port" nor "addr"). */
int ssl_check_enabled(const struct server *srv, int own_addr);

/* What a tcp-check/http-check "connect" rule asks of its TLS session. */
struct ssl_check_opts {
	int                  server_defaults;  /* "default": check-sni, check-alpn apply */
	const char          *sni;              /* NULL: none (or check-sni) */
	const unsigned char *alpn;             /* wire format; NULL: none (or check-alpn) */
	size_t               alpn_len;
};

/* A TLS session for a check of <srv> on connected socket <fd>, in the
 * connecting state; its handshake and I/O go through ssl_check_handshake()
 * and ssl_check_io() (ssl.h). <o> NULL: the server's check-sni and
 * check-alpn; else what the connect rule says. NULL when out of memory. */
struct ssl_st *ssl_check_new(struct server *srv, int fd, const struct ssl_check_opts *o);

/* Makes sure <srv> has a TLS client context for the checks of a connect
 * rule with "ssl" (the server's TLS settings, else the defaults). Returns
 * the number of errors reported (0 or 1). */
int ssl_check_prepare(struct server *srv);

/* ---- certificates (ssl_ckch.c) ---- */

struct ssl_bind_opts;
struct ckch;

/* Loads "crt <path>" (a PEM file, or every certificate of a directory)
 * for bind line options <o>. Returns 0, or -1 with an allocated <err>
 * naming the file. */
int ssl_ckch_load_crt(struct ssl_bind_opts *o, const char *path, char **err);

/* Loads "crt-list <file>". Returns 0, or -1 with an allocated <err> naming
 * the file and line. */
int ssl_ckch_load_crt_list(struct ssl_bind_opts *o, const char *path, char **err);

/* Builds a TLS context from <o> (the bind's options, merged with a crt-list
 * line's) serving certificate <ck>. Returns the context, or NULL with an
 * allocated <err>. Defined in ssl_cfg.c. */
struct ssl_ctx_st *ssl_bind_new_ctx(const struct ssl_bind_opts *o, struct ckch *ck, char **err);

/* Picks the context for <ssl> given the client's SNI <name> (NULL: none)
 * and whether the client accepts ECDSA. Returns NULL when nothing matches
 * (the caller uses the default, or refuses with strict-sni). */
struct ssl_ctx_st *ssl_ckch_pick(const struct ssl_bind_opts *o, const char *name, int ecdsa);

/* The default context of <o> (first certificate loaded), NULL if none. */
struct ssl_ctx_st *ssl_ckch_default(const struct ssl_bind_opts *o);

/* Frees what the bind's certificate index holds. */
void ssl_ckch_free_index(struct ssl_bind_opts *o);

#endif
