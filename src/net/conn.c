/* Connection endpoints (conn.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/netns.h>
#include <sluice/ssl.h>
#include <sluice/str.h>

#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

void conn_want(struct conn *c, int events)
{
	/* A mux endpoint is told every time, changed or not: it wakes the
	 * stream for what is ready among <events>, as a level-triggered
	 * socket would report it again (the stream may have taken a write
	 * grant or made room without reading or writing in this pass). */
	if (unlikely(c->flags & CO_F_MUX)) {
		c->events = events;
		c->mux->want(c->mux_ctx, events);
		return;
	}
	if (c->events == events)
		return;
	if (c->events)
		ev_io_stop(global.loop, &c->io);
	c->events = events;
	if (events) {
		/* The socket is the one ev_io_init() gave: only the events
		 * change, so libev issues epoll_ctl() only when they differ
		 * from what the kernel already watches. */
		ev_io_modify(&c->io, events);
		ev_io_start(global.loop, &c->io);
	}
}

/* The watcher that last gave up its socket (conn_io_hand_off()), copied:
 * conn_io_take_over() of that socket starts from it. */
static struct {
	ev_io w;
	int   fd;   /* -1: none */
} handoff = { .fd = -1 };

void conn_io_hand_off(const ev_io *w)
{
	BUG_ON(ev_is_active(w), "conn_io_hand_off() of a watcher still started");
	handoff.w = *w;
	handoff.fd = w->fd;
}

void conn_io_take_over(ev_io *w, void (*cb)(struct ev_loop *, ev_io *, int), int fd)
{
	void *data = w->data;

	/* ev_io_set() tells libev the descriptor may be a new file, so it
	 * registers it with epoll again at the next iteration: EPOLL_CTL_ADD,
	 * failing with EEXIST for a socket still registered. libev assumes the
	 * same file when only ev_io_modify() changed a watcher since it was
	 * started: a copy of the stopped watcher that watched this socket is
	 * that watcher for libev (a stopped watcher is plain memory). */
	if (handoff.fd == fd) {
		*w = handoff.w;
		handoff.fd = -1;
		ev_set_cb(w, cb);
		ev_io_modify(w, 0);
	} else {
		ev_io_init(w, cb, fd, 0);   /* correct, at the cost of that epoll_ctl() */
	}
	w->data = data;
}

void conn_close(struct conn *c)
{
	if (c->fd < 0)
		return;
	if (unlikely(c->flags & CO_F_MUX)) {
		/* a wake-up the mux fed must not reach a freed stream */
		ev_clear_pending(global.loop, &c->io);
		c->mux->close(c->mux_ctx);
		c->mux = NULL;
		c->ssl = NULL;
		c->fd = -1;
		c->flags = 0;
		c->events = 0;
		return;
	}
	conn_want(c, 0);
#ifdef USE_OPENSSL
	if (c->ssl)
		ssl_sock_free(c);
#endif
	close(c->fd);
	c->fd = -1;
	c->flags = 0;
}

void conn_set_drop(struct conn *c)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int one = 1;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (c->fd < 0 || !(c->flags & CO_F_TCP))
		return;
	/* in repair mode a socket goes away without a packet (CAP_NET_ADMIN) */
	if (setsockopt(c->fd, IPPROTO_TCP, TCP_REPAIR, &one, sizeof(one)) == 0)
		return;
	/* else the reset dies at the first router */
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET6)
		(void)setsockopt(c->fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &one, sizeof(one));
	else
		(void)setsockopt(c->fd, IPPROTO_IP, IP_TTL, &one, sizeof(one));
	(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

void conn_setup_tcp(int fd, const struct conn_tcp_opts *o, int server)
{
	int one = 1, zero = 0;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (o && unlikely(o->keepalive)) {
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		if (o->ka_cnt)
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &o->ka_cnt, sizeof(int));
		if (o->ka_idle)
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &o->ka_idle, sizeof(int));
		if (o->ka_intvl)
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &o->ka_intvl, sizeof(int));
	}
	if (o && unlikely(o->nolinger)) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	if (o && unlikely(o->quickack_off) && server)
		setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &zero, sizeof(zero));
	if (unlikely(global.sockbuf[0][server]))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &global.sockbuf[0][server], sizeof(int));
	if (unlikely(global.sockbuf[1][server]))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &global.sockbuf[1][server], sizeof(int));
}

/* ---- outgoing sockets: source, namespace, options ---- */

struct conn_src *conn_src_new(const void *owner)
{
	struct conn_src *src = xcalloc(1, sizeof(*src));

	src->owner = owner;
	src->netns_fd = -1;
	return src;
}

struct conn_src *conn_src_dup(const struct conn_src *from, const void *owner)
{
	struct conn_src *src = xcalloc(1, sizeof(*src));

	*src = *from;
	src->owner = owner;
	src->iface = from->iface ? xstrdup(from->iface) : NULL;
	src->netns = from->netns ? xstrdup(from->netns) : NULL;
	return src;
}

void conn_src_release(struct conn_src **src, const void *owner)
{
	struct conn_src *x = *src;

	*src = NULL;
	if (!x || x->owner != owner)
		return;
	free(x->iface);
	free(x->netns);
	free(x);
}

/* Binds <fd> to <ss>, transparently (even a foreign address) when
 * <transparent>. A given port may still be held by a connection of ours in
 * TIME_WAIT, or be the client's own (usesrc client): SO_REUSEADDR lets it
 * be bound, connect() then refusing a connection that would not be unique.
 * Without a port, it is chosen at connect(), the destination known, so
 * that a source address does not bound the connections to 64k. Returns 0,
 * or -1 with errno. */
static int conn_bind(int fd, const struct sockaddr_storage *ss, socklen_t len, int transparent)
{
	int one = 1, v6 = ss->ss_family == AF_INET6;

	if (transparent &&
	    setsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_TRANSPARENT : IP_TRANSPARENT,
		       &one, sizeof(one)) == -1)
		return -1;
	if (addr_get_port(ss))
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	else
		(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	return bind(fd, (const struct sockaddr *)ss, len);
}

/* Binds <fd> to the source of <src>: a port of its range (from port_next
 * on, each tried once), else its address. Returns 0, or -1 with errno. */
static int conn_bind_source(int fd, struct conn_src *src)
{
	struct sockaddr_storage ss = src->addr;
	unsigned n;

	if (!src->port_lo)
		return conn_bind(fd, &ss, src->addrlen, 0);
	n = (unsigned)src->port_hi - src->port_lo + 1;
	for (unsigned i = 0; i < n; i++) {
		uint16_t port = src->port_next;

		if (port < src->port_lo || port > src->port_hi)
			port = src->port_lo;
		src->port_next = port == src->port_hi ? src->port_lo : (uint16_t)(port + 1);
		addr_set_port(&ss, port);
		if (conn_bind(fd, &ss, src->addrlen, 0) == 0)
			return 0;
		if (errno != EADDRINUSE)
			return -1;
	}
	errno = EADDRNOTAVAIL;   /* every port of the range is taken */
	return -1;
}

int conn_src_socket(struct conn_src *src, int family, const struct sockaddr_storage *cli)
{
	int fd = netns_socket(src->netns_fd, family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int tcp = family == AF_INET || family == AF_INET6, one = 1, r = 0;

	if (fd == -1)
		return -1;
	if (src->iface)
		r = setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, src->iface,
			       (socklen_t)strlen(src->iface) + 1);
	if (!r && tcp && src->user_timeout)
		r = setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &src->user_timeout,
			       sizeof(src->user_timeout));
	if (!r && tcp && cli && (src->flags & CONN_SRC_F_TFO))
		r = setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof(one));
	if (!r && tcp && src->usesrc == CONN_USESRC_ADDR && src->tp.ss_family == family) {
		r = conn_bind(fd, &src->tp, src->tplen, 1);
	} else if (!r && tcp && cli && cli->ss_family == family &&
		   (src->usesrc == CONN_USESRC_CLIENT || src->usesrc == CONN_USESRC_CLIENTIP)) {
		struct sockaddr_storage ss = *cli;

		if (src->usesrc == CONN_USESRC_CLIENTIP)
			addr_set_port(&ss, 0);
		r = conn_bind(fd, &ss, family == AF_INET ? sizeof(struct sockaddr_in) :
			      sizeof(struct sockaddr_in6), 1);
	} else if (!r && tcp && src->addr.ss_family == family) {
		r = conn_bind_source(fd, src);
	}
	if (r == -1) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int conn_connect(struct conn *c, const struct sockaddr_storage *addr, socklen_t addrlen,
		 const struct conn_tcp_opts *o, void (*cb)(struct ev_loop *, ev_io *, int), void *data)
{
	return conn_connect_src(c, addr, addrlen, o, NULL, NULL, cb, data);
}

int conn_connect_src(struct conn *c, const struct sockaddr_storage *addr, socklen_t addrlen,
		     const struct conn_tcp_opts *o, struct conn_src *src, const struct sockaddr_storage *cli,
		     void (*cb)(struct ev_loop *, ev_io *, int), void *data)
{
	int fd = likely(!src) ? socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) :
		 conn_src_socket(src, addr->ss_family, cli);

	c->fd = fd;
	if (fd == -1)
		return -1;
	c->flags = 0;
	c->events = 0;
	ev_io_init(&c->io, cb, fd, 0);
	c->io.data = data;
	if (addr->ss_family != AF_UNIX) {
		c->flags |= CO_F_TCP;
		conn_setup_tcp(fd, o, 1);
	}
	if (connect(fd, (const struct sockaddr *)addr, addrlen) == 0)
		return 0;
	return errno == EINPROGRESS ? 1 : -1;
}

int conn_err_code(int err, int binding)
{
	switch (err) {
	case EMFILE: return 2;
	case ENFILE: return 3;
	case ENOBUFS:
	case ENOMEM: return 4;
	case EAFNOSUPPORT:
	case EPROTONOSUPPORT: return 5;
	case EADDRINUSE: return 10;
	case EADDRNOTAVAIL: return binding ? 8 : 9;
	case EAGAIN: return 9;   /* connect(): no local port left */
	default: return binding ? 8 : 0;
	}
}

#define SOCKBUF_KW(kw, snd, srv) { kw, CFG_SEC_GLOBAL, CFG_T_SIZE, \
	offsetof(struct global, sockbuf[snd][srv]), .min = 1024, .max = 1 << 30, \
	.usage = "a socket buffer size" }

/* tune.{rcvbuf,sndbuf}.{client,server}: SO_RCVBUF/SO_SNDBUF of each client
 * or server socket (conn_setup_tcp()); the kernel doubles what it is asked
 * and caps it at net.core.[rw]mem_max. */
static struct cfg_kw conn_kws[] = {
	SOCKBUF_KW("tune.rcvbuf.client", 0, 0),
	SOCKBUF_KW("tune.rcvbuf.server", 0, 1),
	SOCKBUF_KW("tune.sndbuf.client", 1, 0),
	SOCKBUF_KW("tune.sndbuf.server", 1, 1),
};

SLUICE_INIT(conn_register)
{
	cfg_register(conn_kws, ARRAY_SIZE(conn_kws));
}
