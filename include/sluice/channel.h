/* One direction of a stream: bytes read from a source socket and sent to a
 * destination, by copy through a pooled buffer or by splice() through a
 * pooled pipe. A channel holds a buffer or a pipe only while bytes are in
 * flight. <to_forward> bounds what may leave without being analysed:
 * infinite for TCP tunnels; HTTP analysers grant it message by message. */
#ifndef SLUICE_CHANNEL_H
#define SLUICE_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct buf;
struct pipe_pair;
struct conn;

#define CHN_INFINITE UINT64_MAX

#define CH_F_SHUTR       0x01  /* end of input seen from the source */
#define CH_F_SHUTW       0x02  /* shutdown(SHUT_WR) sent to the destination */
#define CH_F_SPLICE      0x04  /* forward with splice() */
#define CH_F_SPLICE_AUTO 0x08  /* switch to splice once a read fills a buffer */
#define CH_F_NOSPLICE    0x10  /* splice failed on these sockets: copy only */
#define CH_F_NODELAY     0x20  /* never MSG_MORE: every send leaves at once
                                  (option http-no-delay) */

struct channel {
	struct buf       *buf;
	struct pipe_pair *pipe;
	uint64_t          to_forward;  /* bytes allowed out without analysis */
	uint64_t          total;       /* bytes received from the source */
	unsigned          flags;       /* CH_F_* */
	uint32_t          reserve;     /* buffer bytes reads leave free (tune.maxrewrite
	                                  while a message head is being analysed) */
	/* When set, sees every byte the channel sends, in order, right after
	 * it left (the HTTP cache collects a body with it); no splicing then,
	 * so that every byte passes through the buffer. */
	void            (*tap)(void *ctx, const char *p, size_t n);
	void             *tap_ctx;
};

enum chan_res { CHN_OK, CHN_SRC_ERR, CHN_DST_ERR };

/* Moves bytes from <src> to <dst> (NULL or fd -1: not connected yet, only
 * buffer), through their TLS sessions when they have one. Sends what to_forward allows; reads while there is room and
 * <*src_ready> says the socket may have data (epoll reported it readable),
 * clearing it once a read finds the socket drained: a read that would only
 * return EAGAIN is never issued. Adds the bytes read to <*rcvd> and sent to
 * <*sent>. Does not send the FIN itself: see chan_shutw_due().
 * Returns CHN_OK, or which side failed. */
enum chan_res chan_forward(struct channel *ch, struct conn *src, struct conn *dst,
                           int *src_ready, uint64_t *rcvd, uint64_t *sent);

/* Whether the destination should now get a FIN: the source ended and every
 * byte was sent. The caller either closes the socket (the FIN goes out with
 * the close) or calls chan_shutw(). */
int chan_shutw_due(const struct channel *ch);

/* Sends the FIN to <dst> (TLS close_notify first, then shutdown SHUT_WR)
 * and marks the channel. */
void chan_shutw(struct channel *ch, struct conn *dst);

/* Bytes waiting to be sent (buffer and pipe) that to_forward allows. */
int chan_pending(const struct channel *ch);

/* Whether a read could store more bytes. */
int chan_has_room(const struct channel *ch);

/* Gives back the buffer and pipe (their contents are dropped). */
void chan_release(struct channel *ch);

#endif
