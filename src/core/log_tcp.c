/* Syslog over TCP with octet counting (log_tcp.h): a non-blocking
 * connection per target, its queue, its timeouts and reconnections. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/log_tcp.h>
#include <sluice/ticks.h>

#define LOG_TCP_RETRY_MS 1000

static void log_tcp_io_cb(struct ev_loop *loop, ev_io *w, int revents);
static void log_tcp_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

void log_tcp_init(struct log_tcp *t, const struct sockaddr_storage *addr, socklen_t len)
{
	t->addr = *addr;
	t->addrlen = len;
	t->fd = -1;
	if (!t->connect_ms)
		t->connect_ms = 5000;
	if (!t->server_ms)
		t->server_ms = 10000;
	ev_init(&t->io, log_tcp_io_cb);
	t->io.data = t;
	ev_init(&t->timer, log_tcp_timer_cb);
	t->timer.data = t;
}

static void log_tcp_want(struct log_tcp *t)
{
	int ev = EV_READ | (t->out.len || !t->connected ? EV_WRITE : 0);

	if (t->io.events == ev && ev_is_active(&t->io))
		return;
	ev_io_stop(global.loop, &t->io);
	ev_io_set(&t->io, t->fd, ev);
	ev_io_start(global.loop, &t->io);
}

/* Arms the timer for <ms> from now (0: stops it). */
static void log_tcp_arm(struct log_tcp *t, unsigned ms)
{
	t->timer.repeat = ms ? tick_to_ev(ms) : 0.;
	ev_timer_again(global.loop, &t->timer);
}

/* The connection failed or was lost: closed; a new one a second later if
 * messages wait (or when the next one comes). */
static void log_tcp_lost(struct log_tcp *t)
{
	ev_io_stop(global.loop, &t->io);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->connected = 0;
	t->retry_wait = 1;
	log_tcp_arm(t, LOG_TCP_RETRY_MS);
}

static void log_tcp_connect(struct log_tcp *t)
{
	t->fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd == -1 || (connect(t->fd, (struct sockaddr *)&t->addr, t->addrlen) == -1 &&
			    errno != EINPROGRESS)) {
		log_tcp_lost(t);
		return;
	}
	t->connected = 0;
	log_tcp_want(t);
	log_tcp_arm(t, t->connect_ms);
}

/* Sends what waits; 0, or -1 when the connection is gone. */
static int log_tcp_flush(struct log_tcp *t)
{
	while (t->out.len) {
		ssize_t n = send(t->fd, t->out.p, t->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n == -1)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		dstr_consume(&t->out, (size_t)n);
		t->sent += (uint64_t)n;
		log_tcp_arm(t, t->out.len ? t->server_ms : 0);   /* progress */
	}
	return 0;
}

static void log_tcp_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct log_tcp *t = w->data;

	if (!t->connected && (revents & (EV_WRITE | EV_READ))) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1 || err) {
			log_tcp_lost(t);
			return;
		}
		t->connected = 1;
		log_tcp_arm(t, t->out.len ? t->server_ms : 0);
	}
	if (revents & EV_READ) {
		char buf[256];
		ssize_t n = recv(t->fd, buf, sizeof(buf), MSG_DONTWAIT);

		/* a syslog server says nothing: its close (or an error) ends it */
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
			log_tcp_lost(t);
			return;
		}
	}
	if (log_tcp_flush(t) == -1) {
		log_tcp_lost(t);
		return;
	}
	log_tcp_want(t);
}

static void log_tcp_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct log_tcp *t = w->data;

	ev_timer_stop(loop, w);
	if (t->retry_wait) {
		t->retry_wait = 0;
		if (t->out.len)
			log_tcp_connect(t);
		return;
	}
	/* no connection in time, or no progress sending: start again */
	log_tcp_lost(t);
}

int log_tcp_send(struct log_tcp *t, const char *msg, size_t len)
{
	size_t max = t->queue_max ? t->queue_max : LOG_TCP_QUEUE_MAX;
	char pfx[24];
	int pl = t->framing == LOG_TCP_OCTET ? snprintf(pfx, sizeof(pfx), "%zu ", len) : 0;

	if (t->out.len + (size_t)pl + len + 1 > max) {
		t->dropped++;
		log_count_dropped();
		return -1;
	}
	dstr_add(&t->out, pfx, (size_t)pl);
	dstr_add(&t->out, msg, len);
	if (t->framing == LOG_TCP_LF)
		dstr_add(&t->out, "\n", 1);
	if (!global.loop)
		return 0;   /* start-up: sent with the first message once the loop runs */
	if (t->fd < 0) {
		if (!t->retry_wait)
			log_tcp_connect(t);
	} else if (t->connected) {
		if (log_tcp_flush(t) == -1)
			log_tcp_lost(t);
		else
			log_tcp_want(t);
	}
	return 0;
}

void log_tcp_close(struct log_tcp *t)
{
	if (global.loop) {
		ev_io_stop(global.loop, &t->io);
		ev_timer_stop(global.loop, &t->timer);
	}
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->connected = 0;
	dstr_free(&t->out);
}
