/* The TLS transport of a connection, with OpenSSL: a struct conn carries an
 * optional SSL*; channel.c reads and writes through it, stream.c and the
 * health checks drive the handshakes from the event loop. The sessions are
 * created on contexts built from the configuration (ssl_cfg.h, a layer up).
 * Built only with USE_OPENSSL (without it no connection ever gets an SSL*). */
#ifndef SLUICE_SSL_H
#define SLUICE_SSL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conn;
struct ssl_st;
struct ssl_ctx_st;

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

/* Whether the handshake of <c> chose ALPN protocol <proto> ("h2"). */
int ssl_sock_alpn_is(const struct conn *c, const char *proto);

/* Sends close_notify (best effort, never blocks) before a shutdown(). */
void ssl_sock_shutw(struct conn *c);

/* Frees <c>'s SSL* (conn_close() calls it; idempotent). */
void ssl_sock_free(struct conn *c);

/* Frees an SSL* detached from its conn (idle pool; NULL accepted). */
void ssl_sock_free_ssl(struct ssl_st *ssl);

/* ---- sessions and handshakes ---- */

/* A new TLS session on context <ctx> for socket <fd>, in the accepting
 * (<server> set: we are the TLS server) or the connecting state; counted.
 * The caller sets what is per connection (SNI, host check, resumption)
 * before the handshake starts. NULL when out of memory. */
struct ssl_st *ssl_sock_new(struct ssl_ctx_st *ctx, int fd, int server);

/* Makes <c> carry <ssl> (from ssl_sock_new() on c->fd) and starts its
 * handshake: CO_F_SSL_HS set, c->ssl_ev the first event it waits for. */
void ssl_sock_start(struct conn *c, struct ssl_st *ssl);

/* Advances the handshake of <c> (CO_F_SSL_HS set). Returns 0 once it is
 * complete (the flag cleared, counters updated), 1 while it waits for the
 * socket (c->ssl_ev holds EV_READ or EV_WRITE to watch), or -1 when it failed
 * (counted; *<reason> gets a static description). */
int ssl_sock_handshake(struct conn *c, const char **reason);

/* ---- health checks over TLS (check.c, tcpcheck.c) ---- */

/* Advances a check's handshake: 0 done, 1 waiting (<*ev>: EV_READ or
 * EV_WRITE to watch), -1 failed (<*reason> says why). */
int ssl_check_handshake(struct ssl_st *ssl, int *ev, const char **reason);

/* Reads (<write> 0) into or writes from <buf> over a check's TLS session,
 * on socket <fd>. Returns bytes, 0 at the end of input (reads), or -1 with
 * errno set (EAGAIN: retry when the socket is ready). */
ssize_t ssl_check_io(struct ssl_st *ssl, int fd, void *buf, size_t len, int write);

#endif
