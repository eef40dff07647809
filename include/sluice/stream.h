/* A stream joins a client connection to a server connection and moves the
 * bytes between them (mode tcp): connect with retries, forwarding by copy
 * or splice(), half-close, timeouts, the end-of-stream log line. */
#ifndef SLUICE_STREAM_H
#define SLUICE_STREAM_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

struct buf;
struct pipe_pair;
struct listener;
struct proxy;
struct server;

#define CO_F_CONNECTED 0x01   /* socket usable for data */
#define CO_F_TCP       0x02   /* a TCP socket (options apply) */

struct conn {
	int       fd;
	ev_io     io;
	int       events;      /* EV_READ|EV_WRITE currently watched */
	unsigned  flags;       /* CO_F_* */
	ev_tstamp last_act;    /* last successful read or write */
};

#define CH_F_SHUTR      0x01  /* end of input seen from the source */
#define CH_F_SHUTW      0x02  /* shutdown(SHUT_WR) sent to the destination */
#define CH_F_SPLICE     0x04  /* forward with splice() */
#define CH_F_SPLICE_AUTO 0x08 /* switch to splice once a read fills a buffer */
#define CH_F_NOSPLICE   0x10  /* splice failed on these sockets: copy only */

/* One direction of the stream. Holds a buffer or a pipe only while bytes
 * are in flight. */
struct channel {
	struct buf       *buf;
	struct pipe_pair *pipe;
	uint64_t          total;   /* bytes forwarded */
	unsigned          flags;   /* CH_F_* */
};

enum stream_state {
	ST_TAR,        /* waiting before a connect retry */
	ST_CON,        /* connecting to the server */
	ST_EST,        /* both sides connected: forwarding */
};

struct stream {
	struct stream    *prev, *next;  /* all live streams */
	uint64_t          uniq_id;
	struct conn       cli, srv;
	struct channel    req, res;     /* client->server, server->client */
	struct proxy     *fe, *be;
	struct listener  *li;
	struct server    *target;       /* server being used (NULL before) */
	enum stream_state state;
	int               retries;      /* connect retries done */
	int               redispatched;
	ev_timer          timer;
	ev_tstamp         armed;        /* deadline the timer is armed for, 0 if none */
	ev_tstamp         t_accept, t_conn, t_est, t_tar;
	struct timespec   accept_date;
	struct sockaddr_storage cli_addr;
	char              term[2];      /* termination flags of the log line */
};

/* Listener callback for frontends: starts a stream on <fd>. */
void stream_accept(struct listener *li, int fd, struct sockaddr_storage *addr, socklen_t alen);

/* Number of live streams. */
int stream_count(void);

/* First live stream (for `show sess`), in creation order reversed. */
struct stream *stream_first(void);

/* Closes every live stream at once (hard stop, exit). */
void stream_kill_all(void);

/* Called when the last stream ends during a soft stop. */
void stream_set_idle_cb(void (*cb)(void));

#endif
