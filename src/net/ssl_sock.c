/* The TLS transport of a connection with OpenSSL: a session created on a
 * context its owner built (proxy/ssl_cfg.c), handshakes driven by the loop
 * (early data too), reads and writes for channel.c, shutdown and release,
 * the process-wide TLS limits, and what a session records for the fetches
 * (ssl.h). */
#include <sluice/ssl.h>

struct ssl_counters ssl_counters;

#ifdef USE_OPENSSL
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <ev.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/ticks.h>

/* Early data a server-side session took before the stream could: kept
 * until ssl_sock_recv() hands them over (the buffer is allocated only when
 * early data come, and everything is freed once the handshake ended and
 * they were all read). */
struct ssl_early {
	int            state;      /* SSL_EARLY_* */
	size_t         len, off;
	unsigned char *buf;
};

#define SSL_EARLY_READING 1   /* SSL_read_early_data() has more to give */
#define SSL_EARLY_DONE    2   /* all read; the handshake is not complete yet */
#define SSL_EARLY_MAX     16384

static int ssl_ext_idx = -1;   /* SSL ex_data: struct ssl_sock_ext */
static int ssl_early_idx = -1; /* SSL ex_data: struct ssl_early */

static void ssl_ext_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                         void *argp)
{
	struct ssl_sock_ext *x = ptr;

	if (!x)
		return;
	free(x->capture);
	for (int i = 0; i < SSL_KL_N; i++)
		free(x->keylog[i]);
	free(x);
}

static void ssl_early_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                           void *argp)
{
	struct ssl_early *e = ptr;

	if (e)
		free(e->buf);
	free(e);
}

static void ssl_sock_init_idx(void)
{
	if (ssl_ext_idx >= 0)
		return;
	ssl_ext_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, ssl_ext_free);
	ssl_early_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, ssl_early_free);
}

struct ssl_sock_ext *ssl_sock_ext(const struct ssl_st *ssl, int create)
{
	struct ssl_sock_ext *x;

	if (ssl_ext_idx < 0) {
		if (!create)
			return NULL;
		ssl_sock_init_idx();
	}
	x = SSL_get_ex_data(ssl, ssl_ext_idx);
	if (x || !create)
		return x;
	x = calloc(1, sizeof(*x));
	if (x && !SSL_set_ex_data((SSL *)ssl, ssl_ext_idx, x)) {
		free(x);
		x = NULL;
	}
	return x;
}

/* Records the first OpenSSL error of <ssl>'s connection (ssl_fc_err). */
static void ssl_sock_note_err(SSL *ssl)
{
	unsigned long e = ERR_peek_error();
	struct ssl_sock_ext *x;

	if (!e)
		return;
	x = ssl_sock_ext(ssl, 1);
	if (x && !x->err)
		x->err = e;
}

int ssl_sock_fe_limited(int *rate)
{
	*rate = 0;
	if (ssl_counters.maxsslconn && ssl_counters.cur_conns >= ssl_counters.maxsslconn)
		return 1;
	if (ssl_counters.maxsslrate > 0) {
		freq_rotate(&ssl_counters.fe_rate, tick_sec());
		if (ssl_counters.fe_rate.curr >= (uint32_t)ssl_counters.maxsslrate) {
			*rate = 1;
			return 1;
		}
	}
	return 0;
}

struct ssl_st *ssl_sock_new(struct ssl_ctx_st *ctx, int fd, int server)
{
	SSL *ssl;

	/* the backend side obeys maxsslconn too: the connection fails */
	if (!server && ssl_counters.maxsslconn && ssl_counters.cur_conns >= ssl_counters.maxsslconn)
		return NULL;
	ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	if (server) {
		uint32_t r = freq_add(&ssl_counters.fe_rate, tick_sec());

		if (r > ssl_counters.max_fe_rate)
			ssl_counters.max_fe_rate = r;
		SSL_set_accept_state(ssl);
	} else {
		SSL_set_connect_state(ssl);
	}
	ssl_counters.cur_conns++;
	ssl_counters.cum_conns++;
	if (ssl_counters.cur_conns > ssl_counters.max_conns)
		ssl_counters.max_conns = ssl_counters.cur_conns;
	return ssl;
}

void ssl_sock_accept_early(struct ssl_st *ssl)
{
	struct ssl_early *e;

	ssl_sock_init_idx();
	e = calloc(1, sizeof(*e));
	if (!e)
		return;   /* no early data then: a plain handshake */
	e->state = SSL_EARLY_READING;
	if (!SSL_set_ex_data(ssl, ssl_early_idx, e))
		free(e);
}

/* Forgets <ssl>'s early data state once nothing is left in it. */
static void ssl_early_done(SSL *ssl, struct ssl_early *e)
{
	if (!e || e->state == SSL_EARLY_READING || e->off < e->len || !SSL_is_init_finished(ssl))
		return;
	SSL_set_ex_data(ssl, ssl_early_idx, NULL);
	free(e->buf);
	free(e);
}

static struct ssl_early *ssl_sock_early(const SSL *ssl)
{
	return ssl_early_idx < 0 ? NULL : SSL_get_ex_data(ssl, ssl_early_idx);
}

void ssl_sock_start(struct conn *c, struct ssl_st *ssl)
{
	c->ssl = ssl;
	c->flags |= CO_F_SSL_HS;
	c->ssl_small = 0;
	c->ssl_last_wr = 0;
	/* the server side waits for the ClientHello, the client sends it */
	c->ssl_ev = SSL_is_server(ssl) ? EV_READ : EV_WRITE;
}

/* Counts a completed handshake of <ssl>. */
static void ssl_hs_done(SSL *ssl)
{
	if (SSL_is_server(ssl)) {
		ssl_counters.fe_handshakes++;
		if (SSL_session_reused(ssl)) {
			ssl_counters.fe_reused++;
		} else {
			uint32_t r = freq_add(&ssl_counters.key_rate, tick_sec());

			if (r > ssl_counters.max_key_rate)
				ssl_counters.max_key_rate = r;
		}
	} else {
		ssl_counters.be_handshakes++;
		ssl_counters.be_reused += SSL_session_reused(ssl) ? 1 : 0;
	}
}

/* A failed handshake step of <ssl> (SSL_get_error() gave <e>): counted,
 * <*reason> says why. */
static void ssl_hs_failed(SSL *ssl, int e, const char **reason)
{
	long vr;

	ssl_sock_note_err(ssl);
	if (SSL_is_server(ssl))
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
}

/* Reads early data into <e> while the ClientHello allows them. Returns 1
 * when early data were taken (or none remain to take), 0 when the session
 * must wait (<*ev>), -1 on error (<*err> the SSL_get_error() value). */
static int ssl_early_read(SSL *ssl, struct ssl_early *e, int *ev, int *err)
{
	/* read here, then kept in a buffer of their size (one loop, one thread) */
	static unsigned char scratch[SSL_EARLY_MAX];

	while (e->state == SSL_EARLY_READING && e->len < SSL_EARLY_MAX) {
		size_t n = 0;
		int r = SSL_read_early_data(ssl, scratch, SSL_EARLY_MAX - e->len, &n);

		if (r == SSL_READ_EARLY_DATA_SUCCESS) {
			unsigned char *b = realloc(e->buf, e->len + n);

			if (!b) {
				*err = SSL_ERROR_SSL;
				return -1;
			}
			memcpy(b + e->len, scratch, n);
			e->buf = b;
			e->len += n;
			continue;
		}
		if (r == SSL_READ_EARLY_DATA_FINISH) {
			e->state = SSL_EARLY_DONE;
			break;
		}
		*err = SSL_get_error(ssl, 0);
		if (*err == SSL_ERROR_WANT_READ || *err == SSL_ERROR_WANT_WRITE) {
			*ev = *err == SSL_ERROR_WANT_READ ? EV_READ : EV_WRITE;
			return e->len ? 1 : 0;
		}
		return -1;
	}
	return 1;
}

/* One step of the handshake of <ssl>: 0 done (<early>: early data taken,
 * the rest of the handshake goes on with reads and writes), 1 waiting
 * (<*ev> says for what), -1 failed (counted; <*reason> says why). */
static int ssl_hs_step(SSL *ssl, int *ev, const char **reason, int *early)
{
	struct ssl_early *ed = SSL_is_server(ssl) ? ssl_sock_early(ssl) : NULL;
	int r, e;

	*early = 0;
	if (ed && ed->state == SSL_EARLY_READING) {
		r = ssl_early_read(ssl, ed, ev, &e);
		if (r < 0) {
			ssl_hs_failed(ssl, e, reason);
			return -1;
		}
		if (r == 0)
			return 1;
		if (ed->len) {
			struct ssl_sock_ext *x = ssl_sock_ext(ssl, 1);

			if (x)
				x->early = 1;
			*early = 1;
			return 0;
		}
	}
	r = SSL_do_handshake(ssl);
	if (r == 1) {
		ssl_hs_done(ssl);
		ssl_early_done(ssl, ed);
		return 0;
	}
	e = SSL_get_error(ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		*ev = e == SSL_ERROR_WANT_READ ? EV_READ : EV_WRITE;
		return 1;
	}
	ssl_hs_failed(ssl, e, reason);
	return -1;
}

int ssl_sock_handshake(struct conn *c, const char **reason)
{
	int early, r = ssl_hs_step(c->ssl, &c->ssl_ev, reason, &early);

	if (r == 0) {
		c->flags &= ~CO_F_SSL_HS;
		if (early)
			c->flags |= CO_F_SSL_EARLY;
	}
	return r;
}

int ssl_check_handshake(struct ssl_st *ssl, int *ev, const char **reason)
{
	int early;

	return ssl_hs_step(ssl, ev, reason, &early);
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
	if (e == SSL_ERROR_SSL)
		ssl_sock_note_err(c->ssl);
	ERR_clear_error();
	if (e == SSL_ERROR_ZERO_RETURN)
		return on_eof;
	if (e == SSL_ERROR_SYSCALL)
		return errno ? -errno : on_eof;
	return -EIO;
}

/* CO_F_SSL_EARLY: the real handshake completed (by a read or a write),
 * once the early data kept were read. */
static void ssl_early_end(struct conn *c)
{
	struct ssl_early *e = ssl_sock_early(c->ssl);

	if (SSL_is_init_finished(c->ssl) && !(e && e->off < e->len)) {
		c->flags &= ~CO_F_SSL_EARLY;
		ssl_hs_done(c->ssl);
		ssl_early_done(c->ssl, e);
	}
}

/* A read on a session in CO_F_SSL_EARLY: the early data kept, then the
 * ones still coming, then what follows the handshake. */
static ssize_t ssl_early_recv(struct conn *c, void *dst, size_t len)
{
	struct ssl_early *e = ssl_sock_early(c->ssl);
	size_t n = 0;
	int r, ev, err;

	if (e && e->off < e->len) {
		n = MIN(len, e->len - e->off);
		memcpy(dst, e->buf + e->off, n);
		e->off += n;
		/* The read that took the early data may have gone on with the
		 * client's Finished (in the same segment): nothing is left in
		 * the socket to wake the stream for it, so the handshake is
		 * known to be done here, with the last of the kept bytes. */
		ssl_early_end(c);
		return (ssize_t)n;
	}
	if (e && e->state == SSL_EARLY_READING) {
		free(e->buf);
		e->buf = NULL;
		e->len = e->off = 0;
		r = ssl_early_read(c->ssl, e, &ev, &err);
		if (r < 0) {
			ssl_sock_note_err(c->ssl);
			ERR_clear_error();
			return -EIO;
		}
		if (e->len)
			return ssl_early_recv(c, dst, len);
		if (r == 0) {
			if (ev == EV_WRITE)
				c->flags |= CO_F_SSL_RD_WANT_W;
			return -EAGAIN;
		}
	}
	r = SSL_read_ex(c->ssl, dst, len, &n);
	ssl_early_end(c);
	if (r == 1)
		return (ssize_t)n;
	return ssl_sock_fail(c, r, SSL_ERROR_WANT_READ, CO_F_SSL_RD_WANT_W, 0);
}

ssize_t ssl_sock_recv(struct conn *c, void *dst, size_t len)
{
	size_t n = 0;
	int r;

	c->flags &= ~CO_F_SSL_RD_WANT_W;
	if (unlikely(c->flags & CO_F_SSL_EARLY))
		return ssl_early_recv(c, dst, len);
	r = SSL_read_ex(c->ssl, dst, len, &n);
	if (r == 1)
		return (ssize_t)n;
	return ssl_sock_fail(c, r, SSL_ERROR_WANT_READ, CO_F_SSL_RD_WANT_W, 0);
}

/* A write on a session in CO_F_SSL_EARLY waits for the end of the handshake
 * (the client's Finished): the answer to early data is not sent before the
 * client is known to be the one that started the session. Early data still
 * arriving are kept for the reads. Returns 0 once the handshake is done,
 * else what ssl_sock_send() returns. */
static ssize_t ssl_early_wait(struct conn *c)
{
	struct ssl_early *e = ssl_sock_early(c->ssl);
	int r, ev, err;

	if (e && e->state == SSL_EARLY_READING) {
		r = ssl_early_read(c->ssl, e, &ev, &err);
		if (r < 0) {
			ssl_sock_note_err(c->ssl);
			ERR_clear_error();
			return -EIO;
		}
		if (e->state == SSL_EARLY_READING) {
			c->flags |= ev == EV_WRITE ? 0 : CO_F_SSL_WR_WANT_R;
			return -EAGAIN;
		}
	}
	r = SSL_do_handshake(c->ssl);
	if (r == 1) {
		ssl_early_end(c);
		return 0;
	}
	return ssl_sock_fail(c, r, SSL_ERROR_WANT_WRITE, CO_F_SSL_WR_WANT_R, -EPIPE);
}

/* tune.ssl.hard-maxrecord, tune.ssl.maxrecord: how much of <len> one write
 * may take. maxrecord cuts the first 16 kB sent after the connection's
 * output was idle for a second (or at its start) into small records, so
 * that a client can decipher the start of an answer before a whole 16 kB
 * record arrived; a longer transfer then goes on in full records. */
static size_t ssl_record_cap(struct conn *c, size_t len)
{
	ev_tstamp now = ev_now(global.loop);

	if (ssl_counters.hard_maxrecord && len > (size_t)ssl_counters.hard_maxrecord)
		return (size_t)ssl_counters.hard_maxrecord;
	if (!ssl_counters.maxrecord)
		return len;
	if (!c->ssl_last_wr || now - c->ssl_last_wr >= 1.0)
		c->ssl_small = 16384;
	c->ssl_last_wr = now;
	if (c->ssl_small && len > (size_t)ssl_counters.maxrecord)
		len = (size_t)ssl_counters.maxrecord;
	c->ssl_small = c->ssl_small > len ? c->ssl_small - (uint32_t)len : 0;
	return len;
}

ssize_t ssl_sock_send(struct conn *c, const void *src, size_t len)
{
	size_t n = 0;
	int r;

	c->flags &= ~CO_F_SSL_WR_WANT_R;
	if (unlikely(c->flags & CO_F_SSL_EARLY)) {
		ssize_t w = ssl_early_wait(c);

		if (w < 0)
			return w;
	}
	if (unlikely(ssl_counters.maxrecord | ssl_counters.hard_maxrecord) && global.loop)
		len = ssl_record_cap(c, len);
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
	const struct ssl_early *e;

	if (SSL_pending(c->ssl) > 0)
		return 1;
	e = unlikely(c->flags & CO_F_SSL_EARLY) ? ssl_sock_early(c->ssl) : NULL;
	return e && e->off < e->len;
}

void ssl_sock_shutw(struct conn *c)
{
	if (c->ssl && !(c->flags & (CO_F_SSL_HS | CO_F_SSL_EARLY))) {
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
	/* listeners paused by maxsslconn may take connections again */
	if (ssl_counters.maxsslconn)
		listener_recheck_limits();
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

int ssl_sock_fe_limited(int *rate)
{
	*rate = 0;
	return 0;
}

#endif
