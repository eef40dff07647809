/* Connection endpoints (conn.h). */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/ssl.h>

void conn_want(struct conn *c, int events)
{
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

void conn_io_take_over(ev_io *w, void (*cb)(struct ev_loop *, ev_io *, int), int fd)
{
	ev_io_init(w, cb, fd, 0);
	/* The socket stays registered in epoll as the previous watcher left it:
	 * no re-registration (EV__IOFDSET makes libev issue an epoll_ctl() that
	 * would only fail with EEXIST). */
	w->events &= ~EV__IOFDSET;
}

void conn_close(struct conn *c)
{
	if (c->fd < 0)
		return;
	conn_want(c, 0);
#ifdef USE_OPENSSL
	if (c->ssl)
		ssl_sock_free(c);
#endif
	close(c->fd);
	c->fd = -1;
	c->flags = 0;
}

void conn_setup_tcp(int fd, int keepalive)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (keepalive)
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
}
