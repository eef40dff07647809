/* Connection endpoints (conn.h). */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/conn.h>
#include <sluice/global.h>

void conn_want(struct conn *c, int events)
{
	if (c->events == events)
		return;
	if (c->events)
		ev_io_stop(global.loop, &c->io);
	c->events = events;
	if (events) {
		ev_io_set(&c->io, c->fd, events);
		ev_io_start(global.loop, &c->io);
	}
}

void conn_close(struct conn *c)
{
	if (c->fd < 0)
		return;
	conn_want(c, 0);
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
