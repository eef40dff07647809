/* TLS with OpenSSL: "bind ... ssl" (client side) and "server ... ssl"
 * (server side). A struct conn carries an optional SSL*; channel.c reads and
 * writes through it, stream.c drives the handshakes from the event loop.
 * Certificates are loaded and indexed by ssl_ckch.c; fetches live in
 * rules/sample_ssl.c. Built only with USE_OPENSSL (without it, "ssl" is an
 * unknown keyword and no connection ever gets an SSL*). */
#ifndef SLUICE_SSL_H
#define SLUICE_SSL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conn;
struct server;
struct bind_conf;
struct ssl_st;
struct ssl_ctx_st;
struct smp_expr;

/* TLS-level counters (show info: SslFrontendKeyRate... and the Ssl* lines). */
struct ssl_counters {
	uint64_t fe_handshakes;     /* client handshakes completed */
	uint64_t fe_failed;         /* client handshakes failed (garbage, no shared cipher...) */
	uint64_t fe_reused;         /* client handshakes that resumed a session */
	uint64_t be_handshakes;     /* server handshakes completed */
	uint64_t be_failed;         /* server handshakes failed (verify...) */
	uint64_t be_reused;         /* server handshakes that resumed a session */
	uint64_t cum_conns;         /* SSL* objects created, both sides */
	int      cur_conns;         /* live SSL* objects, both sides */
};
extern struct ssl_counters ssl_counters;

/* ---- data path (channel.c) ---- */

/* Reads up to <len> bytes from <c>'s TLS session into <dst>. Returns bytes
 * (> 0), 0 at the end of the peer's data (close_notify or plain EOF),
 * -EAGAIN when nothing is decrypted yet (c->flags say whether the socket
 * must become readable or writable, CO_F_SSL_RD_WANT_W), or -EIO/-errno. */
ssize_t ssl_sock_recv(struct conn *c, void *dst, size_t len);

/* Writes up to <len> bytes of <src> to <c>'s TLS session. Returns bytes
 * accepted (> 0), -EAGAIN when the socket is full (or the session waits for
 * the peer: CO_F_SSL_WR_WANT_R), or -EIO/-errno. */
ssize_t ssl_sock_send(struct conn *c, const void *src, size_t len);

/* Whether decrypted bytes wait inside OpenSSL: a read would return them
 * without the socket becoming readable again. */
int ssl_sock_pending(const struct conn *c);

/* The cipher and protocol version of <c>'s TLS session (%sslc, %sslv),
 * NULL without one. */
const char *ssl_sock_cipher(const struct conn *c);
const char *ssl_sock_version(const struct conn *c);

/* Sends close_notify (best effort, never blocks) before a shutdown(). */
void ssl_sock_shutw(struct conn *c);

/* Frees <c>'s SSL* (conn_close() calls it; idempotent). */
void ssl_sock_free(struct conn *c);

/* Frees an SSL* detached from its conn (idle pool; NULL accepted). */
void ssl_sock_free_ssl(struct ssl_st *ssl);

/* "<frontend>~": the %ft of a TLS bind line, NULL for a plain one. */
const char *ssl_bind_ft(const struct bind_conf *bc);

/* ---- handshakes (stream.c) ---- */

/* Starts the server side of TLS on accepted connection <c> for the bind
 * line <bc> (which has "ssl"). Sets CO_F_SSL_HS. Returns 0, or -1 (no
 * memory: the caller closes). */
int ssl_sock_accept(struct conn *c, struct bind_conf *bc);

/* Starts the client side of TLS to server <srv> on connected <c>, with SNI
 * <sni> (NULL: none). Reuses the server's last session. Returns 0 or -1. */
int ssl_sock_connect(struct conn *c, struct server *srv, const char *sni);

/* Advances the handshake of <c> (CO_F_SSL_HS set). Returns 0 once it is
 * complete (the flag cleared, counters updated), 1 while it waits for the
 * socket (c->ssl_ev holds EV_READ or EV_WRITE to watch), or -1 when it failed
 * (counted; *<reason> gets a static description). */
int ssl_sock_handshake(struct conn *c, const char **reason);

/* Whether bind line <bc> / server <srv> uses TLS. */
int ssl_bind_enabled(const struct bind_conf *bc);
int ssl_srv_enabled(const struct server *srv);

/* Free the TLS settings of a bind line / a server (proxy release; both
 * exist without USE_OPENSSL, as no-ops). */
void ssl_bind_free(struct bind_conf *bc);
void ssl_srv_free(struct server *srv);

/* The SNI expression of <srv> ("sni <expr>"), NULL when it has none. */
const struct smp_expr *ssl_srv_sni(const struct server *srv);

/* ---- health checks over TLS (check.c, tcpcheck.c) ---- */

/* Whether <srv>'s checks speak TLS: "check-ssl", or "ssl" on a server
 * checked at its own address (<own_addr>: no check "port" nor "addr"). */
int ssl_check_enabled(const struct server *srv, int own_addr);

/* A TLS session for a check of <srv> on connected socket <fd> (SNI:
 * "check-sni"), in the connecting state. NULL when out of memory. */
struct ssl_st *ssl_check_new(struct server *srv, int fd);

/* Advances a check's handshake: 0 done, 1 waiting (<*ev>: EV_READ or
 * EV_WRITE to watch), -1 failed (<*reason> says why). */
int ssl_check_handshake(struct ssl_st *ssl, int *ev, const char **reason);

/* Reads (<write> 0) into or writes from <buf> over a check's TLS session,
 * on socket <fd>. Returns bytes, 0 at the end of input (reads), or -1 with
 * errno set (EAGAIN: retry when the socket is ready). */
ssize_t ssl_check_io(struct ssl_st *ssl, int fd, void *buf, size_t len, int write);

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
 * allocated <err>. Defined in ssl_sock.c. */
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
