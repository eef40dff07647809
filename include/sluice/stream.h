/* A stream joins a client connection to a server connection and moves the
 * bytes between them (mode tcp): connect with retries, forwarding by copy
 * or splice(), half-close, timeouts, the end-of-stream log line. */
#ifndef SLUICE_STREAM_H
#define SLUICE_STREAM_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <sluice/channel.h>
#include <sluice/conn.h>

struct listener;
struct proxy;
struct server;

enum stream_state {
	ST_PROXY,      /* waiting for the client's PROXY protocol header */
	ST_QUEUE,      /* every usable server is full (maxconn): waiting in line */
	ST_TAR,        /* waiting before a connect retry */
	ST_CON,        /* connecting to the server */
	ST_EST,        /* both sides connected: forwarding */
};

struct stream {
	struct stream    *prev, *next;  /* all live streams */
	struct stream    *q_prev, *q_next; /* in its backend's queue (ST_QUEUE) */
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
	ev_tstamp         t_accept, t_conn, t_est, t_tar, t_queue;
	long              tw;           /* ms spent in the queue */
	struct timespec   accept_date;
	struct sockaddr_storage cli_addr;   /* the client (from PROXY if any) */
	struct sockaddr_storage dst_addr;   /* where it connected (from PROXY if any) */
	int               has_dst;          /* dst_addr is known */
	char              term[2];      /* termination flags of the log line */
};

/* Listener callback for frontends: starts a stream on <fd>. */
void stream_accept(struct listener *li, int fd, struct sockaddr_storage *addr, socklen_t alen);

/* Number of live streams. */
int stream_count(void);

/* Closes the streams connected (or connecting) to <srv>: its sessions are
 * shut down when it goes DOWN with on-marked-down shutdown-sessions.
 * Returns how many were closed. */
int stream_kill_server(struct server *srv);

/* Closes every live stream at once (hard stop, exit). */
void stream_kill_all(void);

/* Called when the last stream ends during a soft stop. */
void stream_set_idle_cb(void (*cb)(void));

#endif
