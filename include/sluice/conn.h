/* A connection endpoint: one socket, the events watched on it and its last
 * activity. Knows nothing of the other side (the stream joins them). */
#ifndef SLUICE_CONN_H
#define SLUICE_CONN_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>

#define CO_F_CONNECTED 0x01   /* socket usable for data */
#define CO_F_TCP       0x02   /* a TCP socket (TCP options apply) */
#define CO_F_WAITING   0x04   /* we wait for this side (its timeout runs) */
#define CO_F_RD_READY  0x08   /* epoll said readable and no read drained it since */
#define CO_F_SSL_HS    0x10   /* TLS handshake in progress (ssl_ev says what it waits for) */
#define CO_F_SSL_RD_WANT_W 0x20 /* a TLS read waits for the socket to be writable */
#define CO_F_SSL_WR_WANT_R 0x40 /* a TLS write waits for the socket to be readable */
#define CO_F_MUX       0x80   /* one stream of a multiplexed connection (c->mux) */
#define CO_F_SSL_EARLY 0x100  /* TLS server side: early data (0-RTT) taken, handshake not done */

struct ssl_st;

/* A virtual endpoint: one stream of a connection that a multiplexer (the
 * HTTP/2 mux) owns. The channels read and write it through these calls
 * instead of the socket; <fd> and <ssl> stay those of the real connection,
 * for what asks about it (addresses, TLS fetches), and are never read,
 * written, watched or closed through this endpoint. The multiplexer wakes
 * the stream by feeding its watcher (ev_feed_event() on c->io, never
 * started): EV_READ when data (or the end) came and EV_READ is wanted,
 * EV_WRITE when room was made and EV_WRITE is wanted. */
struct conn_mux_ops {
	/* Copies up to <n> bytes of input to <p>: > 0 bytes, 0 at the end,
	 * -EAGAIN when none yet, -ECONNRESET (or another -errno) when the
	 * stream was aborted. */
	ssize_t (*recv)(void *ctx, char *p, size_t n);
	/* Takes up to <n> bytes of output: >= 0 bytes taken (0 or -EAGAIN:
	 * full, EV_WRITE comes when it has room), or -errno (aborted). */
	ssize_t (*send)(void *ctx, const char *p, size_t n);
	/* No more output comes (the end of the message when it had no framing). */
	void    (*shutw)(void *ctx);
	/* The events now watched (c->events holds them), told at every
	 * conn_want() even unchanged: the multiplexer wakes the stream for
	 * those that are ready, as a level-triggered socket would. */
	void    (*want)(void *ctx, int events);
	/* The stream lets go of the endpoint. The multiplexer finishes its
	 * own stream when the output was complete, else resets it. */
	void    (*close)(void *ctx);
};

struct conn {
	int       fd;
	ev_io     io;
	int       events;      /* EV_READ|EV_WRITE currently watched */
	unsigned  flags;       /* CO_F_* */
	ev_tstamp last_act;    /* last read or write, or start of the current wait */
	struct ssl_st *ssl;    /* TLS session (ssl.h), NULL: plain socket */
	int       ssl_ev;      /* CO_F_SSL_HS: EV_READ or EV_WRITE the handshake waits for */
	uint32_t  ssl_small;   /* tune.ssl.maxrecord: bytes still to send in small records */
	ev_tstamp ssl_last_wr; /* tune.ssl.maxrecord: when the last TLS write happened */
	const struct conn_mux_ops *mux;   /* CO_F_MUX: the multiplexer's calls ... */
	void     *mux_ctx;               /* ... and their context */
};

/* Watches exactly <events> on <c> (0: none); no syscall when unchanged. */
void conn_want(struct conn *c, int events);

/* Records stopped watcher <w> as the last one of its socket, which is about
 * to change hands: the next conn_io_take_over() of that socket starts from
 * a copy of it. */
void conn_io_hand_off(const ev_io *w);

/* Prepares watcher <w> (events 0, callback <cb>, data kept; started later,
 * e.g. by conn_want()) for socket <fd>, which another watcher of the loop
 * stopped watching during this same loop iteration: the same open socket
 * changes hands (idle pool, reuse). When that watcher was given to
 * conn_io_hand_off(), the socket's epoll registration is kept as it is (no
 * epoll_ctl() at all when the events do not change); else libev registers
 * it again. Never use it for a new socket that reuses a closed descriptor
 * number. */
void conn_io_take_over(ev_io *w, void (*cb)(struct ev_loop *, ev_io *, int), int fd);

/* Stops watching and closes the socket, freeing its TLS session if any
 * (idempotent). A CO_F_MUX endpoint is handed back to its multiplexer
 * instead. */
void conn_close(struct conn *c);

/* Makes the coming conn_close() reset a TCP connection (RST, nothing
 * more sent: "silent-drop"); no effect on other sockets, nor on a CO_F_MUX
 * endpoint (its stream is reset, the connection lives). */
void conn_set_rst(struct conn *c);

/* TCP_NODELAY, and SO_KEEPALIVE when <keepalive>. */
void conn_setup_tcp(int fd, int keepalive);

/* Opens a non-blocking stream socket to <addr> (<addrlen> bytes) into <c>:
 * its flags and events reset, CO_F_TCP and conn_setup_tcp(<keepalive>) for
 * anything but a unix socket, its watcher initialised (events 0) to call
 * <cb> with io.data <data>, then connect() started. Returns 0 when connected
 * at once, 1 while the connect is in progress (the socket becomes writable),
 * or -1 with errno kept: c->fd is then -1 when no socket could be created,
 * else the socket, which the caller closes (conn_close()). */
int conn_connect(struct conn *c, const struct sockaddr_storage *addr, socklen_t addrlen,
		 int keepalive, void (*cb)(struct ev_loop *, ev_io *, int), void *data);

#endif
