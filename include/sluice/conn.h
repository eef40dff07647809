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
#define CO_F_SOCKS     0x200  /* connected to a SOCKS4 proxy: its reply is awaited */

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

/* Makes the coming conn_close() of a TCP connection silent ("silent-drop"):
 * nothing is sent, not even a FIN or an RST (TCP_REPAIR, which needs
 * CAP_NET_ADMIN); without the privilege, an RST whose TTL (hop limit) of 1
 * keeps it from passing the first router. No effect on other sockets, nor
 * on a CO_F_MUX endpoint (its stream is reset, the connection lives). */
void conn_set_drop(struct conn *c);

/* What a proxy asks of its TCP sockets besides TCP_NODELAY. */
struct conn_tcp_opts {
	uint8_t keepalive;     /* SO_KEEPALIVE (option tcpka, clitcpka, srvtcpka) */
	uint8_t nolinger;      /* SO_LINGER 0: a close resets (option nolinger) */
	uint8_t quickack_off;  /* TCP_QUICKACK 0 before connect(): the handshake's last
	                          ACK goes with the first data (option tcp-smart-connect) */
	int     ka_cnt;        /* TCP_KEEPCNT, TCP_KEEPIDLE (s), TCP_KEEPINTVL (s) with */
	int     ka_idle;       /* keepalive (clitcpka-* / srvtcpka-*); 0: the system's */
	int     ka_intvl;
};

/* TCP_NODELAY, the options of <o> (NULL: none), and the socket buffer
 * sizes of tune.rcvbuf/sndbuf.client (<server> 0) or .server (1) when set. */
void conn_setup_tcp(int fd, const struct conn_tcp_opts *o, int server);

/* How a socket to a server is prepared before connect(): the "source" of
 * a server or of its backend (address, port range, "usesrc", "interface"),
 * and the server's "namespace", "tfo" and "tcp-ut". <owner> (a server, a
 * proxy) frees it; others share it read-only (servers made from a
 * default-server line, a backend's servers without a source of their own),
 * but for <port_next>, the next port of the range to try. */
enum conn_usesrc {
	CONN_USESRC_NONE,      /* <addr> is bound if set */
	CONN_USESRC_ADDR,      /* <tp> is bound, even if not local (usesrc <addr2>[:<port2>]) */
	CONN_USESRC_CLIENT,    /* the client's address and port, even if not local */
	CONN_USESRC_CLIENTIP,  /* the client's address, even if not local */
};

#define CONN_SRC_F_TFO    0x01   /* TCP Fast Open (TCP_FASTOPEN_CONNECT) */
#define CONN_SRC_F_SOURCE 0x02   /* "source" given: addr, ports, usesrc, iface */

struct conn_src {
	const void              *owner;
	unsigned                 flags;        /* CONN_SRC_F_* */
	struct sockaddr_storage  addr;         /* source; AF_UNSPEC: none */
	socklen_t                addrlen;
	uint16_t                 port_lo, port_hi;   /* port range, 0: the kernel picks */
	uint16_t                 port_next;    /* next port of the range to try */
	enum conn_usesrc         usesrc;
	struct sockaddr_storage  tp;           /* CONN_USESRC_ADDR */
	socklen_t                tplen;
	char                    *iface;        /* SO_BINDTODEVICE, NULL: none */
	char                    *netns;        /* "namespace" name, NULL: none */
	int                      netns_fd;     /* its descriptor (netns.h), -1: none */
	uint32_t                 user_timeout; /* TCP_USER_TIMEOUT (ms), 0: none */
};

/* A new conn_src owned by <owner>: nothing set, no namespace. */
struct conn_src *conn_src_new(const void *owner);

/* A copy of <from> owned by <owner> (strings duplicated). */
struct conn_src *conn_src_dup(const struct conn_src *from, const void *owner);

/* Frees *<src> when <owner> owns it; *<src> becomes NULL either way. */
void conn_src_release(struct conn_src **src, const void *owner);

/* Creates a non-blocking stream socket of <family> for a connection <src>
 * describes (in its namespace, NULL: none), then binds and sets it as
 * <src> says: the interface, the user timeout, Fast Open; the transparent
 * source (usesrc: <cli>, the client's address, for client/clientip; none
 * when it is of another family), else the source address and port (a
 * range is tried from port_next on). <cli> NULL is a health check: no
 * transparent source, no Fast Open (a check may send nothing, and a Fast
 * Open connection starts with the first bytes sent).
 * Returns the socket, or -1 with errno set (nothing left open). */
int conn_src_socket(struct conn_src *src, int family, const struct sockaddr_storage *cli);

/* Opens a non-blocking stream socket to <addr> (<addrlen> bytes) into <c>:
 * its flags and events reset, CO_F_TCP and conn_setup_tcp(<o>) for
 * anything but a unix socket, its watcher initialised (events 0) to call
 * <cb> with io.data <data>, then connect() started. Returns 0 when connected
 * at once, 1 while the connect is in progress (the socket becomes writable),
 * or -1 with errno kept: c->fd is then -1 when no socket could be created,
 * else the socket, which the caller closes (conn_close()). */
int conn_connect(struct conn *c, const struct sockaddr_storage *addr, socklen_t addrlen,
		 const struct conn_tcp_opts *o, void (*cb)(struct ev_loop *, ev_io *, int), void *data);

/* HAProxy's connection error code (bc_err) for errno <err> left by a
 * failed conn_connect_src(): 2-5 (socket limits, memory, family), 8 when
 * the source address could not be bound (<binding>), 9 no local port left,
 * 10 the source address in use; 0 for the others (a refused connection is
 * no connection error in HAProxy's list). */
int conn_err_code(int err, int binding);

/* conn_connect() with the socket made by conn_src_socket(<src>, ..., <cli>)
 * when <src> is not NULL. Same returns; a socket that cannot be made or
 * prepared leaves c->fd at -1. */
int conn_connect_src(struct conn *c, const struct sockaddr_storage *addr, socklen_t addrlen,
		     const struct conn_tcp_opts *o, struct conn_src *src, const struct sockaddr_storage *cli,
		     void (*cb)(struct ev_loop *, ev_io *, int), void *data);

#endif
