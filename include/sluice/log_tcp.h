/* Syslog over TCP (RFC 6587, octet counting: "<length> <message>"), for
 * "log tcp@..." targets and the servers of ring sections: messages wait in
 * a bounded queue (the newest dropped and counted when it is full) while
 * the connection is made, and again after it is lost (a new one is tried
 * a second later); nothing ever blocks the loop. */
#ifndef SLUICE_LOG_TCP_H
#define SLUICE_LOG_TCP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ev.h>
#include <sluice/str.h>

#define LOG_TCP_QUEUE_MAX (256 << 10)   /* bytes of framed messages waiting */

/* How messages are delimited on the stream (RFC 6587). */
enum log_tcp_framing { LOG_TCP_OCTET, LOG_TCP_LF };

struct log_tcp {
	enum log_tcp_framing    framing;     /* "<len> <msg>" (default), or "<msg>\n" */
	struct sockaddr_storage addr;
	socklen_t               addrlen;
	int                     fd;          /* -1 when not connected */
	int                     connected;
	ev_io                   io;
	ev_timer                timer;       /* connect / server timeout, retry delay */
	unsigned                connect_ms;  /* "timeout connect" */
	unsigned                server_ms;   /* "timeout server": no progress sending */
	size_t                  queue_max;   /* bytes; 0: LOG_TCP_QUEUE_MAX */
	struct dstr             out;         /* framed messages not sent yet */
	uint64_t                sent, dropped;
	int                     retry_wait;  /* waiting before connecting again */
};

/* Prepares <t> to send to <addr>/<len>. Nothing is opened yet. */
void log_tcp_init(struct log_tcp *t, const struct sockaddr_storage *addr, socklen_t len);

/* Queues message <msg> (<len> bytes) for <t>, framed, and connects if
 * needed. Returns 0, or -1 when the queue is full (the message dropped and
 * counted in <t> and in the process' DroppedLogs). */
int log_tcp_send(struct log_tcp *t, const char *msg, size_t len);

/* Closes <t>'s connection and forgets what it queued. */
void log_tcp_close(struct log_tcp *t);

#endif
