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

#include <sluice/freq.h>

struct conn;
struct ssl_st;
struct ssl_ctx_st;

/* TLS-level counters (show info: SslFrontendKeyRate... and the Ssl* lines)
 * and the process-wide limits the transport applies (set by the global
 * keywords of proxy/ssl_global.c). */
struct ssl_counters {
	uint64_t fe_handshakes;     /* client handshakes completed */
	uint64_t fe_failed;         /* client handshakes failed (garbage, no shared cipher...) */
	uint64_t fe_reused;         /* client handshakes that resumed a session */
	uint64_t be_handshakes;     /* server handshakes completed */
	uint64_t be_failed;         /* server handshakes failed (verify...) */
	uint64_t be_reused;         /* server handshakes that resumed a session */
	uint64_t cum_conns;         /* SSL* objects created, both sides */
	int      cur_conns;         /* live SSL* objects, both sides */
	int      max_conns;         /* highest cur_conns seen */
	struct freq_ctr fe_rate;    /* client TLS sessions started per second (maxsslrate) */
	uint32_t max_fe_rate;
	struct freq_ctr key_rate;   /* client handshakes completed without resumption */
	uint32_t max_key_rate;
	int      maxsslconn;        /* maxsslconn: live SSL* objects at most, 0: no limit */
	int      maxsslrate;        /* maxsslrate (set rate-limit ssl-sessions), 0: no limit */
	int      maxrecord;         /* tune.ssl.maxrecord: bytes per record after idle, 0: none */
	int      hard_maxrecord;    /* tune.ssl.hard-maxrecord: bytes per record, 0: none */
};
extern struct ssl_counters ssl_counters;

/* Whether a new client TLS session must wait: maxsslconn connections are
 * live, or maxsslrate sessions started this second (<*rate> set then, so
 * that the caller retries at the next second). */
int ssl_sock_fe_limited(int *rate);

/* ---- what a session records for the fetches ---- */

/* The ClientHello lists kept with tune.ssl.capture-buffer-size, each cut to
 * what fits: cipher suites, extension types, supported groups (2 bytes
 * each, as on the wire) and EC point formats (1 byte each), in this order
 * in <data>. */
struct ssl_capture {
	uint64_t      xxh64;          /* XXH64 (seed 0) of the whole cipher suite list */
	uint16_t      hello_version;  /* the ClientHello's legacy_version */
	uint16_t      ciphers_len, ext_len, ec_len, ecf_len;
	unsigned char data[];
};

/* The secrets tune.ssl.keylog keeps, by NSS key log label. */
enum ssl_keylog_label {
	SSL_KL_CLIENT_EARLY, SSL_KL_CLIENT_HS, SSL_KL_SERVER_HS, SSL_KL_CLIENT_TRAFFIC_0,
	SSL_KL_SERVER_TRAFFIC_0, SSL_KL_EXPORTER, SSL_KL_EARLY_EXPORTER, SSL_KL_N
};

/* What a TLS session records beyond OpenSSL's state: made on first use (a
 * verification error, a capture, a secret), so that a plain session costs
 * nothing; freed with the session. */
struct ssl_sock_ext {
	int           crt_err;        /* first verification error at depth 0 (ssl_c_err) */
	int           ca_err;         /* first one at depth > 0 (ssl_c_ca_err) ... */
	int           ca_err_depth;   /* ... and its depth */
	unsigned long err;            /* first OpenSSL error of the connection (ssl_fc_err) */
	int           early;          /* early data (0-RTT) were received */
	struct ssl_capture *capture;  /* ClientHello lists (allocated) */
	char         *keylog[SSL_KL_N];   /* secrets in hex (allocated) */
};

/* The record of <ssl>: NULL when it has none, unless <create> (then NULL
 * only when out of memory). */
struct ssl_sock_ext *ssl_sock_ext(const struct ssl_st *ssl, int create);

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
 * (counted; *<reason> gets a static description). A server-side session
 * that accepts early data (0-RTT) completes as soon as early data came:
 * CO_F_SSL_EARLY stays set until the real handshake ends, which reads and
 * writes then drive (ssl_sock_recv(), ssl_sock_send()). */
int ssl_sock_handshake(struct conn *c, const char **reason);

/* Makes the server-side session <ssl> read early data (0-RTT) during its
 * handshake: allow-0rtt. */
void ssl_sock_accept_early(struct ssl_st *ssl);

/* ---- health checks over TLS (check.c, tcpcheck.c) ---- */

/* Advances a check's handshake: 0 done, 1 waiting (<*ev>: EV_READ or
 * EV_WRITE to watch), -1 failed (<*reason> says why). */
int ssl_check_handshake(struct ssl_st *ssl, int *ev, const char **reason);

/* Reads (<write> 0) into or writes from <buf> over a check's TLS session,
 * on socket <fd>. Returns bytes, 0 at the end of input (reads), or -1 with
 * errno set (EAGAIN: retry when the socket is ready). */
ssize_t ssl_check_io(struct ssl_st *ssl, int fd, void *buf, size_t len, int write);

#endif
