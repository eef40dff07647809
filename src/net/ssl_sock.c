/* The TLS transport of a connection with OpenSSL: a session created on a
 * context its owner built (proxy/ssl_cfg.c), handshakes driven by the loop,
 * reads and writes for channel.c, shutdown and release (ssl.h). */
#include <sluice/ssl.h>

struct ssl_counters ssl_counters;

#ifdef USE_OPENSSL
#include <string.h>
#include <errno.h>

#include <ev.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <sluice/conn.h>

struct ssl_st *ssl_sock_new(struct ssl_ctx_st *ctx, int fd, int server)
{
	SSL *ssl = SSL_new(ctx);

	if (!ssl || SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	if (server)
		SSL_set_accept_state(ssl);
	else
		SSL_set_connect_state(ssl);
	ssl_counters.cur_conns++;
	ssl_counters.cum_conns++;
	return ssl;
}

void ssl_sock_start(struct conn *c, struct ssl_st *ssl)
{
	c->ssl = ssl;
	c->flags |= CO_F_SSL_HS;
	/* the server side waits for the ClientHello, the client sends it */
	c->ssl_ev = SSL_is_server(ssl) ? EV_READ : EV_WRITE;
}

/* One step of the handshake of <ssl>: 0 done, 1 waiting (<*ev> says for
 * what), -1 failed (counted; <*reason> says why). */
static int ssl_hs_step(SSL *ssl, int *ev, const char **reason)
{
	int r = SSL_do_handshake(ssl), e;
	int server = SSL_is_server(ssl);
	long vr;

	if (r == 1) {
		if (server) {
			ssl_counters.fe_handshakes++;
			ssl_counters.fe_reused += SSL_session_reused(ssl) ? 1 : 0;
		} else {
			ssl_counters.be_handshakes++;
			ssl_counters.be_reused += SSL_session_reused(ssl) ? 1 : 0;
		}
		return 0;
	}
	e = SSL_get_error(ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		*ev = e == SSL_ERROR_WANT_READ ? EV_READ : EV_WRITE;
		return 1;
	}
	if (server)
		ssl_counters.fe_failed++;
	else
		ssl_counters.be_failed++;
	vr = SSL_get_verify_result(ssl);
	if (vr != X509_V_OK)
		*reason = X509_verify_cert_error_string(vr);
	else if (ERR_peek_error())
		*reason = ERR_reason_error_string(ERR_peek_error());
	else
		*reason = e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN ?
			  "connection closed during the handshake" : "handshake failure";
	if (!*reason)
		*reason = "handshake failure";
	ERR_clear_error();
	return -1;
}

int ssl_sock_handshake(struct conn *c, const char **reason)
{
	int r = ssl_hs_step(c->ssl, &c->ssl_ev, reason);

	if (r == 0)
		c->flags &= ~CO_F_SSL_HS;
	return r;
}

int ssl_check_handshake(struct ssl_st *ssl, int *ev, const char **reason)
{
	return ssl_hs_step(ssl, ev, reason);
}

ssize_t ssl_check_io(struct ssl_st *ssl, int fd, void *buf, size_t len, int write)
{
	struct conn c = { .fd = fd, .ssl = ssl };
	ssize_t n = write ? ssl_sock_send(&c, buf, len) : ssl_sock_recv(&c, buf, len);

	if (n >= 0)
		return n;
	errno = (int)-n;
	return -1;
}

/* Maps a failed SSL_read_ex() / SSL_write_ex() (result <r>) on <c>:
 * -EAGAIN when the socket must become ready, for <same> (the call's own
 * direction) or else for the other one (then <cross> is set in c->flags so
 * that the loop watches it); <on_eof> when the peer ended; -errno, -EIO. */
static ssize_t ssl_sock_fail(struct conn *c, int r, int same, unsigned cross, ssize_t on_eof)
{
	int e = SSL_get_error(c->ssl, r);

	if (e == same)
		return -EAGAIN;
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		c->flags |= cross;
		return -EAGAIN;
	}
	ERR_clear_error();
	if (e == SSL_ERROR_ZERO_RETURN)
		return on_eof;
	if (e == SSL_ERROR_SYSCALL)
		return errno ? -errno : on_eof;
	return -EIO;
}

ssize_t ssl_sock_recv(struct conn *c, void *dst, size_t len)
{
	size_t n = 0;
	int r;

	c->flags &= ~CO_F_SSL_RD_WANT_W;
	r = SSL_read_ex(c->ssl, dst, len, &n);
	if (r == 1)
		return (ssize_t)n;
	return ssl_sock_fail(c, r, SSL_ERROR_WANT_READ, CO_F_SSL_RD_WANT_W, 0);
}

ssize_t ssl_sock_send(struct conn *c, const void *src, size_t len)
{
	size_t n = 0;
	int r;

	c->flags &= ~CO_F_SSL_WR_WANT_R;
	r = SSL_write_ex(c->ssl, src, len, &n);
	if (r == 1)
		return (ssize_t)n;
	return ssl_sock_fail(c, r, SSL_ERROR_WANT_WRITE, CO_F_SSL_WR_WANT_R, -EPIPE);
}

const char *ssl_sock_cipher(const struct conn *c)
{
	return c->ssl ? SSL_get_cipher_name(c->ssl) : NULL;
}

const char *ssl_sock_version(const struct conn *c)
{
	return c->ssl ? SSL_get_version(c->ssl) : NULL;
}

int ssl_sock_alpn_is(const struct conn *c, const char *proto)
{
	const unsigned char *p = NULL;
	unsigned int len = 0;

	if (!c->ssl)
		return 0;
	SSL_get0_alpn_selected(c->ssl, &p, &len);
	return p && len == strlen(proto) && memcmp(p, proto, len) == 0;
}

int ssl_sock_pending(const struct conn *c)
{
	return SSL_pending(c->ssl) > 0;
}

void ssl_sock_shutw(struct conn *c)
{
	if (c->ssl && !(c->flags & CO_F_SSL_HS)) {
		SSL_shutdown(c->ssl);
		ERR_clear_error();
	}
}

void ssl_sock_free_ssl(struct ssl_st *ssl)
{
	if (!ssl)
		return;
	/* A clean close (close_notify) once the handshake is done: OpenSSL
	 * forgets the session of a connection freed without it, which would
	 * defeat resumption. */
	if (SSL_is_init_finished(ssl))
		SSL_shutdown(ssl);
	ERR_clear_error();
	SSL_free(ssl);
	ssl_counters.cur_conns--;
}

void ssl_sock_free(struct conn *c)
{
	if (!c->ssl)
		return;
	ssl_sock_free_ssl(c->ssl);
	c->ssl = NULL;
}

#else /* !USE_OPENSSL */

/* Without OpenSSL no connection ever gets an SSL*: these are never reached
 * with one, they only let the callers link. */

int ssl_sock_alpn_is(const struct conn *c, const char *proto)
{
	return 0;
}

int ssl_sock_pending(const struct conn *c)
{
	return 0;
}

int ssl_sock_handshake(struct conn *c, const char **reason)
{
	*reason = "no TLS support";
	return -1;
}

#endif
