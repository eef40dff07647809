/* Connection endpoints (conn.h). */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/ssl.h>

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

void conn_set_rst(struct conn *c)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (c->fd >= 0 && (c->flags & CO_F_TCP))
		(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

void conn_setup_tcp(int fd, int keepalive, int server)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (keepalive)
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	if (unlikely(global.sockbuf[0][server]))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &global.sockbuf[0][server], sizeof(int));
	if (unlikely(global.sockbuf[1][server]))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &global.sockbuf[1][server], sizeof(int));
}

int conn_connect(struct conn *c, const struct sockaddr_storage *addr, socklen_t addrlen,
		 int keepalive, void (*cb)(struct ev_loop *, ev_io *, int), void *data)
{
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	c->fd = fd;
	if (fd == -1)
		return -1;
	c->flags = 0;
	c->events = 0;
	ev_io_init(&c->io, cb, fd, 0);
	c->io.data = data;
	if (addr->ss_family != AF_UNIX) {
		c->flags |= CO_F_TCP;
		conn_setup_tcp(fd, keepalive, 1);
	}
	if (connect(fd, (const struct sockaddr *)addr, addrlen) == 0)
		return 0;
	return errno == EINPROGRESS ? 1 : -1;
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
