/* The Socket class (core.tcp(): LuaSocket's client functions over a
 * non-blocking socket, TLS with connect_ssl()) and core.httpclient() (an
 * HTTP/1.1 client written on it, with the global httpclient.* settings:
 * host names resolved through a resolvers section, servers' certificates
 * verified). Every wait (resolve, connect, send, receive) suspends the
 * script's run on the socket's watcher, never the loop. */
#ifdef USE_LUA
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#ifdef USE_OPENSSL
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/dns.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/resolvers.h>
#include <sluice/str.h>

#include "lua_int.h"

#define SOCK_MT "sluice.socket"

enum sock_state { SOCK_NEW, SOCK_CONNECTING, SOCK_HANDSHAKE, SOCK_OPEN, SOCK_CLOSED };

struct lua_sock {
	int              fd;
	enum sock_state  st;
	double           timeout;     /* settimeout(), s; 0: none */
	double           deadline;    /* of the operation waiting, 0: none */
	ev_io            io;
	struct lua_run  *waiter;      /* the run waiting on it, NULL when none */
	int              ready;       /* its watcher fired since the wait began */
	struct dstr      rx;          /* received, not returned yet */
	int              eof;         /* the peer closed */
#ifdef USE_OPENSSL
	SSL             *ssl;
#endif
	/* the httpclient's connections (_hc_connect) */
	char            *host;        /* the URL's host: SNI and certificate check */
	int              port;
	struct dns_req   dreq;        /* the resolution of <host> waited for */
	int              resolved;    /* it ended */
};

/* The global httpclient.* settings. */
static struct {
	int                   verify;   /* httpclient.ssl.verify required (the default) */
	char                 *ca_file;  /* httpclient.ssl.ca-file; NULL: @system-ca */
	char                 *rs_id;    /* httpclient.resolvers.id; NULL: "default" */
	char                 *ca_at, *rs_at;   /* "file:line" of those keywords */
	int                   prefer;   /* AF_INET6 (the default) or AF_INET */
	struct dns_resolvers *rs;       /* NULL: host names are not resolved */
	char                 *rs_err;   /* why there is none */
#ifdef USE_OPENSSL
	SSL_CTX              *ctx;
#endif
} hc = { .verify = 1, .prefer = AF_INET6 };

/* ---- waiting ---- */

static void sock_stop(struct lua_sock *k)
{
	if (global.loop)
		ev_io_stop(global.loop, &k->io);
	if (k->waiter) {
		k->waiter->cancel = NULL;
		k->waiter->cancel_arg = NULL;
		k->waiter = NULL;
	}
}

/* The run waiting on <arg> is freed (its stream ended): the socket stops
 * watching for it. */
static void sock_cancel(void *arg)
{
	struct lua_sock *k = arg;

	k->waiter = NULL;
	dns_req_detach(&k->dreq);
	if (global.loop)
		ev_io_stop(global.loop, &k->io);
}

static void sock_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct lua_sock *k = container_of(w, struct lua_sock, io);
	struct lua_run *r = k->waiter;

	ev_io_stop(loop, w);
	k->ready = 1;
	if (r)
		lua_run_wake(r);
}

/* Suspends the run until <k>'s socket has <events>, or its timeout. */
static int sock_wait(lua_State *L, struct lua_sock *k, int events, lua_KContext ctx,
                     lua_KFunction kf)
{
	struct lua_run *r = lua_cur(L);

	if (!(r->flags & LUA_RF_YIELD))
		return luaL_error(L, "sockets wait: they are for actions, services and tasks");
	k->ready = 0;
	k->waiter = r;
	r->cancel = sock_cancel;
	r->cancel_arg = k;
	ev_io_set(&k->io, k->fd, events);
	ev_io_start(global.loop, &k->io);
	if (k->timeout > 0) {
		if (!k->deadline)
			k->deadline = lua_mono() + k->timeout;
		lua_run_timer(r, k->deadline - lua_mono() > 0 ? k->deadline - lua_mono() : 1e-6);
	}
	return lua_wait(L, LUA_W_IO, ctx, kf);
}

/* After a wait: whether its time ran out. The watcher is stopped. */
static int sock_timed_out(struct lua_sock *k)
{
	struct lua_run *r = k->waiter;

	sock_stop(k);
	if (r)
		lua_run_timer(r, 0);
	return !k->ready && k->deadline && lua_mono() >= k->deadline;
}

/* nil, <msg> (and <extra> pushed after when >= 0) */
static int sock_fail(lua_State *L, struct lua_sock *k, const char *msg)
{
	k->deadline = 0;
	lua_pushnil(L);
	lua_pushstring(L, msg);
	return 2;
}

static struct lua_sock *sock_check(lua_State *L)
{
	return luaL_checkudata(L, 1, SOCK_MT);
}

/* ---- connecting ---- */

static void sock_close_fd(struct lua_sock *k)
{
	sock_stop(k);
#ifdef USE_OPENSSL
	if (k->ssl) {
		SSL_free(k->ssl);
		k->ssl = NULL;
	}
#endif
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	k->st = SOCK_CLOSED;
}

#ifdef USE_OPENSSL
static SSL_CTX *sock_ssl_ctx;

static int sock_k_handshake(lua_State *L, int status, lua_KContext ctx);

/* The TLS handshake of connect_ssl() (no verification, as HAProxy's Lua
 * sockets). */
static int sock_handshake(lua_State *L, struct lua_sock *k)
{
	int r = SSL_connect(k->ssl), e;

	if (r == 1) {
		k->st = SOCK_OPEN;
		k->deadline = 0;
		lua_pushinteger(L, 1);
		return 1;
	}
	e = SSL_get_error(k->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return sock_wait(L, k, e == SSL_ERROR_WANT_READ ? EV_READ : EV_WRITE, 0,
				 sock_k_handshake);
	ERR_clear_error();
	e = (int)SSL_get_verify_result(k->ssl);
	sock_close_fd(k);
	if (e != X509_V_OK) {
		char msg[256];

		snprintf(msg, sizeof(msg), "TLS handshake failed: the server's certificate is "
			 "not trusted (%s)", X509_verify_cert_error_string(e));
		return sock_fail(L, k, msg);
	}
	return sock_fail(L, k, "TLS handshake failed");
}

/* The TLS session of an httpclient connection: SNI is the URL's host
 * name, and when httpclient.ssl.verify is required the certificate must
 * chain to the CA file and name that host (or IP address). Returns 0 or
 * -1. */
static int sock_hc_tls(struct lua_sock *k)
{
	unsigned char ip[16];
	int is_ip = inet_pton(AF_INET, k->host, ip) == 1 || inet_pton(AF_INET6, k->host, ip) == 1;

	if (!is_ip && !SSL_set_tlsext_host_name(k->ssl, k->host))
		return -1;
	if (!hc.verify)
		return 0;
	if (is_ip)
		return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(k->ssl), k->host) == 1 ? 0 : -1;
	return SSL_set1_host(k->ssl, k->host) == 1 ? 0 : -1;
}

static int sock_k_handshake(lua_State *L, int status, lua_KContext ctx)
{
	struct lua_sock *k = sock_check(L);

	if (sock_timed_out(k)) {
		sock_close_fd(k);
		return sock_fail(L, k, "timeout");
	}
	return sock_handshake(L, k);
}
#endif

/* The connection is made (or failed): TLS starts for connect_ssl(). */
static int sock_connected(lua_State *L, struct lua_sock *k, int tls)
{
	int err = 0;
	socklen_t l = sizeof(err);

	if (getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
		err = errno;
	if (err) {
		sock_close_fd(k);
		return sock_fail(L, k, strerror(err));
	}
	if (!tls) {
		k->st = SOCK_OPEN;
		k->deadline = 0;
		lua_pushinteger(L, 1);
		return 1;
	}
#ifdef USE_OPENSSL
	if (!sock_ssl_ctx) {
		sock_ssl_ctx = SSL_CTX_new(TLS_client_method());
		if (sock_ssl_ctx)
			SSL_CTX_set_verify(sock_ssl_ctx, SSL_VERIFY_NONE, NULL);
	}
	if (k->host && !hc.ctx) {
		sock_close_fd(k);
		return sock_fail(L, k, "the httpclient has no TLS context (see the start-up "
				 "warnings about httpclient.ssl.ca-file)");
	}
	if (!sock_ssl_ctx || !(k->ssl = SSL_new(k->host ? hc.ctx : sock_ssl_ctx)) ||
	    !SSL_set_fd(k->ssl, k->fd) || (k->host && sock_hc_tls(k) == -1)) {
		ERR_clear_error();
		sock_close_fd(k);
		return sock_fail(L, k, "cannot start TLS");
	}
	k->st = SOCK_HANDSHAKE;
	return sock_handshake(L, k);
#else
	sock_close_fd(k);
	return sock_fail(L, k, "TLS needs a build with OpenSSL");
#endif
}

static int sock_k_connect(lua_State *L, int status, lua_KContext ctx)
{
	struct lua_sock *k = sock_check(L);

	if (sock_timed_out(k)) {
		sock_close_fd(k);
		return sock_fail(L, k, "timeout");
	}
	return sock_connected(L, k, (int)ctx);
}

/* Connects <k> to <ss> (<len> bytes), then starts TLS if <tls>. */
static int sock_connect_to(lua_State *L, struct lua_sock *k, const struct sockaddr_storage *ss,
                           socklen_t len, int tls)
{
	k->fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (k->fd == -1)
		return sock_fail(L, k, strerror(errno));
	if (ss->ss_family != AF_UNIX) {
		int one = 1;

		setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	k->st = SOCK_CONNECTING;
	k->deadline = 0;
	if (connect(k->fd, (const struct sockaddr *)ss, len) == -1) {
		if (errno != EINPROGRESS && errno != EAGAIN) {
			int e = errno;

			sock_close_fd(k);
			return sock_fail(L, k, strerror(e));
		}
		return sock_wait(L, k, EV_WRITE, tls, sock_k_connect);
	}
	return sock_connected(L, k, tls);
}

/* connect(address [, port]) and connect_ssl(address, port) */
static int sock_connect_any(lua_State *L, int tls)
{
	struct lua_sock *k = sock_check(L);
	const char *addr = luaL_checkstring(L, 2);
	struct lua_run *r = lua_cur(L);
	struct addr_spec spec;
	char *err = NULL;
	int flags = ADDR_F_UNIX_OK | ADDR_F_PORT_OPTIONAL;

	if (k->st != SOCK_NEW)
		return sock_fail(L, k, "already connected");
	if (!(r->flags & LUA_RF_YIELD))
		return luaL_error(L, "sockets are for actions, services and tasks");
	if (lua_gettop(L) >= 3 && !lua_isnil(L, 3)) {
		/* "address", port */
		lua_Integer port = lua_check_int(L, 3, "connect");

		if (port < 1 || port > 65535)
			return luaL_argerror(L, 3, "a port between 1 and 65535 is expected");
		lua_pushfstring(L, strchr(addr, ':') && !strchr(addr, '[') && strchr(addr, ':') !=
				strrchr(addr, ':') ? "[%s]:%d" : "%s:%d", addr, (int)port);
		addr = lua_tostring(L, -1);
	}
	if (addr_parse(addr, &spec, flags, &err) == -1 || spec.kind == ADDR_K_FD ||
	    (spec.kind == ADDR_K_INET && !spec.port_lo)) {
		lua_pushnil(L);
		lua_pushfstring(L, "invalid address '%s'%s%s (an IP address and a port, or a unix "
				"socket, are expected)", addr, err ? ": " : "", err ? err : "");
		free(err);
		return 2;
	}
	return sock_connect_to(L, k, &spec.ss, spec.len, tls);
}

/* ---- the httpclient's connections ---- */

static void sock_dns_done(struct dns_req *rq)
{
	struct lua_sock *k = container_of(rq, struct lua_sock, dreq);

	k->resolved = 1;
	if (k->waiter)
		lua_run_wake(k->waiter);
}

/* Connects to the address the resolution of <k>->host gave (the family
 * httpclient.resolvers.prefer names first). */
static int sock_hc_resolved(lua_State *L, struct lua_sock *k, int tls)
{
	const struct dns_res *res = k->dreq.res;
	const struct dns_item *pick = NULL;
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	char msg[300];

	for (int i = 0; res && res->status == DNS_ST_VALID && i < res->nitems; i++) {
		const struct dns_item *it = &res->items[i];

		if (it->family != AF_INET && it->family != AF_INET6)
			continue;
		if (!pick || (it->family == hc.prefer && pick->family != hc.prefer))
			pick = it;
	}
	if (!pick) {
		snprintf(msg, sizeof(msg), "cannot resolve '%s': %s", k->host,
			 res && res->status != DNS_ST_VALID ? dns_status_str(res->status) :
			 "no address");
		dns_req_detach(&k->dreq);
		return sock_fail(L, k, msg);
	}
	if (pick->family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr = pick->ip.v4;
		a->sin_port = htons((uint16_t)k->port);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = pick->ip.v6;
		a->sin6_port = htons((uint16_t)k->port);
		len = sizeof(*a);
	}
	dns_req_detach(&k->dreq);
	return sock_connect_to(L, k, &ss, len, tls);
}

static int sock_k_resolve(lua_State *L, int status, lua_KContext ctx)
{
	struct lua_sock *k = sock_check(L);
	int timed_out = sock_timed_out(k);

	if (k->resolved)
		return sock_hc_resolved(L, k, (int)ctx);
	if (timed_out) {
		dns_req_detach(&k->dreq);
		return sock_fail(L, k, "timeout");
	}
	/* woken for something else: wait on */
	k->waiter = lua_cur(L);
	k->waiter->cancel = sock_cancel;
	k->waiter->cancel_arg = k;
	if (k->deadline)
		lua_run_timer(k->waiter, k->deadline - lua_mono() > 0 ? k->deadline - lua_mono() :
			      1e-6);
	return lua_wait(L, LUA_W_IO, ctx, sock_k_resolve);
}

/* _hc_connect(host, port, tls [, dst]): the httpclient's connection to
 * the URL's <host> (an IP address, or a name resolved through the
 * httpclient's resolvers section), or to the address <dst> when given;
 * <host> is then still the TLS server name. */
static int sock_hc_connect(lua_State *L)
{
	struct lua_sock *k = sock_check(L);
	const char *host = luaL_checkstring(L, 2);
	lua_Integer port = luaL_checkinteger(L, 3);
	int tls = lua_toboolean(L, 4);
	struct lua_run *r = lua_cur(L);
	unsigned char ip[16];
	char name[DNS_NAME_MAX + 1];
	int qtype = hc.prefer == AF_INET ? DNS_T_A : DNS_T_AAAA;

	if (k->st != SOCK_NEW)
		return sock_fail(L, k, "already connected");
	if (!(r->flags & LUA_RF_YIELD))
		return luaL_error(L, "the httpclient is for actions, services and tasks");
	if (port < 1 || port > 65535)
		return sock_fail(L, k, "invalid port");
	free(k->host);
	k->host = xstrdup(host);
	k->port = (int)port;
	if (!lua_isnoneornil(L, 5)) {
		lua_settop(L, 5);
		lua_remove(L, 4);
		lua_remove(L, 3);
		lua_remove(L, 2);   /* self, dst */
		return sock_connect_any(L, tls);
	}
	if (inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1) {
		lua_settop(L, 3);   /* self, host, port */
		return sock_connect_any(L, tls);
	}
	if (!hc.rs) {
		char msg[400];

		snprintf(msg, sizeof(msg), "cannot resolve '%s': %s", host,
			 hc.rs_err ? hc.rs_err : "no resolvers section for the httpclient");
		return sock_fail(L, k, msg);
	}
	if (strlen(host) > DNS_NAME_MAX || dns_name_norm(host, strlen(host), name) == -1)
		return sock_fail(L, k, "invalid host name");
	k->resolved = 0;
	k->dreq.done = sock_dns_done;
	switch (dns_req_attach(&k->dreq, hc.rs, name, qtype)) {
	case 1:
		return sock_hc_resolved(L, k, tls);
	case -1:
		return sock_fail(L, k, "invalid host name");
	}
	k->ready = 0;
	k->waiter = r;
	r->cancel = sock_cancel;
	r->cancel_arg = k;
	if (k->timeout > 0) {
		k->deadline = lua_mono() + k->timeout;
		lua_run_timer(r, k->timeout);
	}
	return lua_wait(L, LUA_W_IO, tls, sock_k_resolve);
}

static int sock_connect(lua_State *L)     { return sock_connect_any(L, 0); }
static int sock_connect_ssl(lua_State *L) { return sock_connect_any(L, 1); }

/* ---- I/O ---- */

/* One read into k->rx. Returns the bytes read, 0 at the end, -EAGAIN
 * (with *<want> the events to wait for), or another -errno. */
static long sock_read(struct lua_sock *k, int *want)
{
	char buf[16384];
	long n;

	*want = EV_READ;
#ifdef USE_OPENSSL
	if (k->ssl) {
		int r = SSL_read(k->ssl, buf, sizeof(buf));

		if (r > 0) {
			n = r;
		} else {
			int e = SSL_get_error(k->ssl, r);

			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
				*want = e == SSL_ERROR_WANT_READ ? EV_READ : EV_WRITE;
				return -EAGAIN;
			}
			ERR_clear_error();
			return e == SSL_ERROR_ZERO_RETURN ? 0 : -EIO;
		}
	} else
#endif
	{
		n = recv(k->fd, buf, sizeof(buf), 0);
		if (n < 0)
			return errno == EINTR ? -EAGAIN : -errno;
	}
	if (n > 0 && dstr_add(&k->rx, buf, (size_t)n) == -1)
		return -ENOMEM;
	return n;
}

static int sock_k_receive(lua_State *L, int status, lua_KContext ctx);

/* receive([pattern [, prefix]]): "*l" a line without its end, "*a" until
 * the close, or a number of bytes. */
static int sock_receive_any(lua_State *L)
{
	struct lua_sock *k = sock_check(L);
	const char *pat = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
	lua_Integer want = lua_type(L, 2) == LUA_TNUMBER ? lua_check_int(L, 2, "receive") : -1;
	int line = !pat ? want < 0 : strcmp(pat, "*l") == 0 || strcmp(pat, "*L") == 0;
	int all = pat && strcmp(pat, "*a") == 0;
	size_t plen = 0;
	const char *prefix = luaL_optlstring(L, 3, "", &plen);

	if (pat && !line && !all)
		return luaL_argerror(L, 2, "'*l', '*a' or a number is expected");
	if (k->st != SOCK_OPEN && !k->rx.len)
		return sock_fail(L, k, "closed");
	for (;;) {
		size_t take = 0, skip = 0;
		const char *nl;
		int ev;
		long n;

		if (line && k->rx.len && (nl = memchr(k->rx.p, '\n', k->rx.len))) {
			take = (size_t)(nl - k->rx.p);
			skip = 1;
			if (take && k->rx.p[take - 1] == '\r')
				take--, skip++;
		} else if (want >= 0 && k->rx.len >= (size_t)want) {
			take = (size_t)want;
		} else if (k->eof || k->st != SOCK_OPEN) {
			/* the end: "*a" gets it all, the others a partial result */
			if (all) {
				take = k->rx.len;
			} else {
				lua_pushnil(L);
				lua_pushliteral(L, "closed");
				lua_pushlstring(L, prefix, plen);
				lua_pushlstring(L, k->rx.p ? k->rx.p : "", k->rx.len);
				lua_concat(L, 2);
				dstr_consume(&k->rx, k->rx.len);
				k->deadline = 0;
				return 3;
			}
		} else {
			n = sock_read(k, &ev);
			if (n > 0)
				continue;
			if (n == 0) {
				k->eof = 1;
				continue;
			}
			if (n == -EAGAIN)
				return sock_wait(L, k, ev, 0, sock_k_receive);
			sock_close_fd(k);
			continue;
		}
		lua_pushlstring(L, prefix, plen);
		lua_pushlstring(L, k->rx.p ? k->rx.p : "", take);
		lua_concat(L, 2);
		dstr_consume(&k->rx, take + skip);
		k->deadline = 0;
		return 1;
	}
}

static int sock_k_receive(lua_State *L, int status, lua_KContext ctx)
{
	struct lua_sock *k = sock_check(L);

	if (sock_timed_out(k)) {
		lua_pushnil(L);
		lua_pushliteral(L, "timeout");
		lua_pushlstring(L, "", 0);
		k->deadline = 0;
		return 3;
	}
	return sock_receive_any(L);
}

static int sock_k_send(lua_State *L, int status, lua_KContext ctx);

/* send(data [, i [, j]]): the index of the last byte sent. */
static int sock_send_from(lua_State *L, size_t sent)
{
	struct lua_sock *k = sock_check(L);
	size_t len;
	const char *data = luaL_checklstring(L, 2, &len);
	lua_Integer i = luaL_optinteger(L, 3, 1), j = luaL_optinteger(L, 4, (lua_Integer)len);

	if (i < 0)
		i += (lua_Integer)len + 1;
	if (j < 0)
		j += (lua_Integer)len + 1;
	if (i < 1)
		i = 1;
	if (j > (lua_Integer)len)
		j = (lua_Integer)len;
	if (k->st != SOCK_OPEN) {
		lua_pushnil(L);
		lua_pushliteral(L, "closed");
		lua_pushinteger(L, i - 1 + (lua_Integer)sent);
		return 3;
	}
	while (i + (lua_Integer)sent <= j) {
		const char *p = data + i - 1 + sent;
		size_t left = (size_t)(j - i + 1) - sent;
		long n;
		int ev = EV_WRITE;

#ifdef USE_OPENSSL
		if (k->ssl) {
			int r = SSL_write(k->ssl, p, (int)MIN(left, (size_t)1 << 30));

			if (r > 0) {
				n = r;
			} else {
				int e = SSL_get_error(k->ssl, r);

				n = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? -EAGAIN : -EIO;
				if (e == SSL_ERROR_WANT_READ)
					ev = EV_READ;
				if (n == -EIO)
					ERR_clear_error();
			}
		} else
#endif
		{
			n = send(k->fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0)
				n = errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
		}
		if (n == -EAGAIN)
			return sock_wait(L, k, ev, (lua_KContext)sent, sock_k_send);
		if (n < 0) {
			sock_close_fd(k);
			lua_pushnil(L);
			lua_pushliteral(L, "closed");
			lua_pushinteger(L, i - 1 + (lua_Integer)sent);
			k->deadline = 0;
			return 3;
		}
		sent += (size_t)n;
	}
	k->deadline = 0;
	lua_pushinteger(L, j < i ? i - 1 : j);
	return 1;
}

static int sock_k_send(lua_State *L, int status, lua_KContext ctx)
{
	struct lua_sock *k = sock_check(L);

	if (sock_timed_out(k)) {
		lua_pushnil(L);
		lua_pushliteral(L, "timeout");
		lua_pushinteger(L, luaL_optinteger(L, 3, 1) - 1 + (lua_Integer)ctx);
		k->deadline = 0;
		return 3;
	}
	return sock_send_from(L, (size_t)ctx);
}

static int sock_send(lua_State *L)
{
	return sock_send_from(L, 0);
}

/* ---- the rest ---- */

static int sock_close(lua_State *L)
{
	struct lua_sock *k = sock_check(L);

	if (k->fd >= 0)
		sock_close_fd(k);
	k->st = SOCK_CLOSED;
	lua_pushinteger(L, 1);
	return 1;
}

static int sock_name(lua_State *L, int peer)
{
	struct lua_sock *k = sock_check(L);
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);
	char ip[64];

	if (k->fd < 0 || (peer ? getpeername : getsockname)(k->fd, (struct sockaddr *)&ss, &l) == -1) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushstring(L, addr_ip_str(&ss, ip, sizeof(ip)));
	lua_pushinteger(L, ss.ss_family == AF_UNIX ? 0 : addr_get_port(&ss));
	return 2;
}

static int sock_getpeername(lua_State *L) { return sock_name(L, 1); }
static int sock_getsockname(lua_State *L) { return sock_name(L, 0); }

/* setoption(): accepted for compatibility with LuaSocket, as HAProxy
 * documents it (it does nothing there either). */
static int sock_setoption(lua_State *L)
{
	sock_check(L);
	lua_pushinteger(L, 1);
	return 1;
}

static int sock_settimeout(lua_State *L)
{
	struct lua_sock *k = sock_check(L);
	lua_Number t = luaL_checknumber(L, 2);

	k->timeout = t > 0 ? (double)t : 0;
	lua_pushinteger(L, 1);
	return 1;
}

static int sock_gc(lua_State *L)
{
	struct lua_sock *k = sock_check(L);

	if (k->fd >= 0)
		sock_close_fd(k);
	sock_stop(k);
	dns_req_detach(&k->dreq);
	dstr_free(&k->rx);
	free(k->host);
	k->host = NULL;
	return 0;
}

/* core.tcp() */
static int core_tcp(lua_State *L)
{
	struct lua_sock *k = lua_newuserdatauv(L, sizeof(*k), 0);

	memset(k, 0, sizeof(*k));
	k->fd = -1;
	ev_init(&k->io, sock_io_cb);
	luaL_setmetatable(L, SOCK_MT);
	return 1;
}

/* core.httpclient(): an HTTP/1.1 client on core.tcp(), in Lua. */
static const char lua_httpclient_src[] =
	"local core = ...\n"
	"local HC = {}\n"
	"HC.__index = HC\n"
	"local function parse_url(url)\n"
	"  local scheme, rest = url:match('^(%a[%w+.-]*)://(.*)$')\n"
	"  if not scheme then return nil, 'invalid url' end\n"
	"  scheme = scheme:lower()\n"
	"  if scheme ~= 'http' and scheme ~= 'https' then return nil, 'unsupported scheme' end\n"
	"  local auth, path = rest:match('^([^/?#]*)(.*)$')\n"
	"  if path == '' then path = '/' elseif path:sub(1,1) == '?' then path = '/' .. path end\n"
	"  local host, port = auth:match('^%[(.+)%]:?(%d*)$')\n"
	"  if not host then host, port = auth:match('^([^:]*):?(%d*)$') end\n"
	"  if port == '' then port = (scheme == 'https') and 443 or 80 end\n"
	"  return { ssl = scheme == 'https', host = host, port = tonumber(port), auth = auth,\n"
	"           path = path }\n"
	"end\n"
	"local function req(self, meth, r)\n"
	"  if type(r) ~= 'table' or type(r.url) ~= 'string' then\n"
	"    error('httpclient: a table with a url is expected', 2) end\n"
	"  local u, err = parse_url(r.url)\n"
	"  if not u then return nil, err end\n"
	"  local s = core.tcp()\n"
	"  if r.timeout then s:settimeout(r.timeout / 1000) end\n"
	"  local ok\n"
	"  ok, err = s:_hc_connect(u.host, u.port, u.ssl, r.dst)\n"
	"  if not ok then return nil, err end\n"
	"  local body = r.body or ''\n"
	"  local lines = { meth .. ' ' .. u.path .. ' HTTP/1.1' }\n"
	"  local has = {}\n"
	"  for name, vals in pairs(r.headers or {}) do\n"
	"    has[name:lower()] = true\n"
	"    if type(vals) ~= 'table' then vals = { vals } end\n"
	"    for _, v in ipairs(vals) do lines[#lines + 1] = name .. ': ' .. tostring(v) end\n"
	"  end\n"
	"  if not has['host'] then lines[#lines + 1] = 'host: ' .. u.auth end\n"
	"  if not has['content-length'] and (#body > 0 or meth == 'POST' or meth == 'PUT') then\n"
	"    lines[#lines + 1] = 'content-length: ' .. #body end\n"
	"  lines[#lines + 1] = 'connection: close'\n"
	"  ok, err = s:send(table.concat(lines, '\\r\\n') .. '\\r\\n\\r\\n' .. body)\n"
	"  if not ok then s:close() return nil, err end\n"
	"  local line, res\n"
	"  repeat\n"
	"    line, err = s:receive('*l')\n"
	"    if not line then s:close() return nil, err end\n"
	"    local status, reason = line:match('^HTTP/%d%.%d (%d%d%d) ?(.*)$')\n"
	"    if not status then s:close() return nil, 'invalid response' end\n"
	"    res = { status = tonumber(status), reason = reason, headers = {} }\n"
	"    while true do\n"
	"      line, err = s:receive('*l')\n"
	"      if not line then s:close() return nil, err end\n"
	"      if line == '' then break end\n"
	"      local n, v = line:match('^([^:]+):%s*(.-)%s*$')\n"
	"      if n then n = n:lower() res.headers[n] = res.headers[n] or {}\n"
	"        table.insert(res.headers[n], v) end\n"
	"    end\n"
	"  until res.status >= 200 or res.status == 101\n"
	"  local parts = {}\n"
	"  local te = res.headers['transfer-encoding']\n"
	"  local cl = res.headers['content-length']\n"
	"  if meth == 'HEAD' or res.status == 204 or res.status == 304 then\n"
	"  elseif te and te[#te]:lower():find('chunked', 1, true) then\n"
	"    while true do\n"
	"      line, err = s:receive('*l')\n"
	"      if not line then s:close() return nil, err end\n"
	"      local size = tonumber(line:match('^%x+'), 16)\n"
	"      if not size then s:close() return nil, 'invalid chunk' end\n"
	"      if size == 0 then\n"
	"        repeat line = s:receive('*l') until not line or line == ''\n"
	"        break\n"
	"      end\n"
	"      local data\n"
	"      data, err = s:receive(size)\n"
	"      if not data then s:close() return nil, err end\n"
	"      parts[#parts + 1] = data\n"
	"      s:receive('*l')\n"
	"    end\n"
	"  elseif cl then\n"
	"    local n = tonumber(cl[1])\n"
	"    if not n then s:close() return nil, 'invalid content-length' end\n"
	"    if n > 0 then\n"
	"      local data\n"
	"      data, err = s:receive(n)\n"
	"      if not data then s:close() return nil, err end\n"
	"      parts[1] = data\n"
	"    end\n"
	"  else\n"
	"    parts[1] = s:receive('*a')\n"
	"  end\n"
	"  s:close()\n"
	"  res.body = table.concat(parts)\n"
	"  return res\n"
	"end\n"
	"for _, m in ipairs({ 'GET', 'HEAD', 'PUT', 'POST', 'DELETE' }) do\n"
	"  HC[m:lower()] = function(self, r) return req(self, m, r) end\n"
	"end\n"
	"return function() return setmetatable({}, HC) end\n";

/* ---- httpclient.* in the global section ---- */

/* The two-word settings: the row's value is the index of its entry. */
static const struct {
	const char *word[2];   /* what may be written */
	int         val[2];    /* what each sets */
	int        *set;
} hc_choices[] = {
	{ { "none", "required" }, { 0, 1 }, &hc.verify },            /* httpclient.ssl.verify */
	{ { "ipv4", "ipv6" }, { AF_INET, AF_INET6 }, &hc.prefer },   /* ...resolvers.prefer */
};

static int kw_hc_choice(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const __typeof__(hc_choices[0]) *c = &hc_choices[ctx->kw_row->arg];

	for (int i = 0; argc == 1 && i < 2; i++)
		if (strcmp(argv[0], c->word[i]) == 0) {
			*c->set = c->val[i];
			return 0;
		}
	cfg_alert(ctx, "expects '%s' or '%s'", c->word[0], c->word[1]);
	return -1;
}

/* httpclient.ssl.ca-file <file> and httpclient.resolvers.id <id> (row
 * value 1): kept with where they were written, checked at post-parse. */
static int kw_hc_str(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int rs = ctx->kw_row->arg;
	char **v = rs ? &hc.rs_id : &hc.ca_file, **at = rs ? &hc.rs_at : &hc.ca_at;

	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects %s", ctx->kw_row->usage);
		return -1;
	}
	free(*v);
	free(*at);
	*v = xstrdup(argv[0]);
	*at = str_fmt("%s:%d", ctx->file, ctx->line);
	return 0;
}

static struct cfg_kw hc_kws[] = {
	{ "httpclient.ssl.verify", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_hc_choice,
	  .usage = "none|required", .arg = 0 },
	{ "httpclient.ssl.ca-file", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_hc_str,
	  .usage = "a file of CA certificates, or @system-ca", .arg = 0 },
	{ "httpclient.resolvers.id", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_hc_str,
	  .usage = "the name of a resolvers section", .arg = 1 },
	{ "httpclient.resolvers.prefer", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_hc_choice,
	  .usage = "ipv4|ipv6", .arg = 1 },
};

/* The resolvers section of the httpclient (a named one must exist;
 * "default", made from resolv.conf when not declared, only with scripts
 * loaded, may be missing: names then do not resolve) and, with scripts
 * loaded, its TLS context (an explicit CA file must load). Returns the
 * number of errors. */
static int hc_postparse(void)
{
	char *err = NULL;

	if (!lg.L && !hc.rs_id)
		return 0;   /* nobody uses the httpclient: no "default" section made */
	hc.rs = resolvers_ref(hc.rs_id ? hc.rs_id : "default", &err);
	if (!hc.rs) {
		if (hc.rs_id) {
			log_alert("%s: 'httpclient.resolvers.id': %s", hc.rs_at, err);
			free(err);
			return 1;
		}
		hc.rs_err = err;
	}
	if (!lg.L)
		return 0;
#ifdef USE_OPENSSL
	hc.ctx = SSL_CTX_new(TLS_client_method());
	if (!hc.ctx)
		return 1;
	if (!hc.verify) {
		SSL_CTX_set_verify(hc.ctx, SSL_VERIFY_NONE, NULL);
	} else {
		int ok = !hc.ca_file || strcmp(hc.ca_file, "@system-ca") == 0 ?
			 SSL_CTX_set_default_verify_paths(hc.ctx) :
			 SSL_CTX_load_verify_locations(hc.ctx, hc.ca_file, NULL);

		ERR_clear_error();
		if (!ok && hc.ca_file) {
			log_alert("%s: 'httpclient.ssl.ca-file': cannot load CA certificates from '%s'",
				  hc.ca_at, hc.ca_file);
			return 1;
		}
		SSL_CTX_set_verify(hc.ctx, SSL_VERIFY_PEER, NULL);
	}
#endif
	return 0;
}

void lua_sock_deinit(void)
{
	free(hc.ca_file);
	free(hc.rs_id);
	free(hc.rs_err);
	free(hc.ca_at);
	free(hc.rs_at);
	hc.ca_at = hc.rs_at = NULL;
#ifdef USE_OPENSSL
	if (hc.ctx)
		SSL_CTX_free(hc.ctx);
#endif
	hc.ca_file = hc.rs_id = hc.rs_err = NULL;
	hc.rs = NULL;
}

SLUICE_INIT(lua_hc_register)
{
	cfg_register(hc_kws, ARRAY_SIZE(hc_kws));
	cfg_register_postparse(hc_postparse, 25);
}

void lua_sock_register(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "connect", sock_connect }, { "connect_ssl", sock_connect_ssl },
		{ "send", sock_send }, { "receive", sock_receive_any }, { "close", sock_close },
		{ "getpeername", sock_getpeername }, { "getsockname", sock_getsockname },
		{ "setoption", sock_setoption }, { "settimeout", sock_settimeout },
		{ "_hc_connect", sock_hc_connect },
		{ NULL, NULL }
	};

	lua_class_new(L, SOCK_MT, fns);
	lua_pushcfunction(L, sock_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	lua_getglobal(L, "core");
	lua_pushcfunction(L, core_tcp);
	lua_setfield(L, -2, "tcp");
	BUG_ON(luaL_loadbuffer(L, lua_httpclient_src, sizeof(lua_httpclient_src) - 1,
			       "=httpclient") != LUA_OK, "the httpclient source does not load");
	lua_pushvalue(L, -2);
	lua_call(L, 1, 1);
	lua_setfield(L, -2, "httpclient");
	lua_pop(L, 1);
}

#endif
