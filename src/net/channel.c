/* Channel forwarding: copy through a buffer or splice() through a pipe,
 * bounded by to_forward (channel.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>

#include <sluice/buf.h>
#include <sluice/channel.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/pipe.h>
#include <sluice/ssl.h>

int chan_pending(const struct channel *ch)
{
	return (ch->pipe && ch->pipe->data) || (ch->buf && ch->buf->data && ch->to_forward);
}

int chan_has_room(const struct channel *ch)
{
	if (ch->buf)
		return buf_room(ch->buf, buf_size()) > ch->reserve;
	if (ch->pipe)
		return ch->pipe->data < pipe_capacity();
	return 1;
}

void chan_release(struct channel *ch)
{
	buf_put(ch->buf);
	ch->buf = NULL;
	pipe_put(ch->pipe);
	ch->pipe = NULL;
}

static void chan_drop_pipe_if_empty(struct channel *ch)
{
	if (ch->pipe && !ch->pipe->data) {
		pipe_put(ch->pipe);
		ch->pipe = NULL;
	}
}

/* Splices from <fd> into the channel's pipe. Returns bytes (> 0), 0 at end
 * of input, -EAGAIN, -ENOTSUP when splicing is not possible here, or -errno. */
static ssize_t chan_recv_splice(struct channel *ch, int fd)
{
	size_t room;
	ssize_t n;

	if (!ch->pipe && !(ch->pipe = pipe_get()))
		return -ENOTSUP;
	room = pipe_capacity() - ch->pipe->data;
	/* Never splice past what may leave unanalysed. */
	if (ch->to_forward != CHN_INFINITE && ch->to_forward - ch->pipe->data < room)
		room = (size_t)(ch->to_forward - ch->pipe->data);
	if (!room) {
		chan_drop_pipe_if_empty(ch);
		return -ENOTSUP;
	}
	n = splice(fd, NULL, ch->pipe->wfd, NULL, room, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n > 0) {
		ch->pipe->data += (size_t)n;
		return n;
	}
	if (n == -1 && (errno == EINVAL || errno == ENOSYS)) {
		/* Not spliceable (e.g. some socket types): copy from now on. */
		ch->flags |= CH_F_NOSPLICE;
		n = -ENOTSUP;
	} else if (n == -1) {
		n = -errno;
	}
	chan_drop_pipe_if_empty(ch);
	return n;
}

/* Reads from <src> into the channel (through its TLS session if any: one
 * branch, the plain path stays a direct recv()). Returns bytes read (> 0),
 * 0 at end of input, -EAGAIN when nothing is available, or -errno. */
static ssize_t chan_recv(struct channel *ch, struct conn *src)
{
	ssize_t n;
	size_t room;

	if ((ch->flags & CH_F_SPLICE) && !(ch->flags & CH_F_NOSPLICE) && !ch->buf && !ch->tap) {
		n = chan_recv_splice(ch, src->fd);
		if (n != -ENOTSUP)
			return n;
		if (ch->pipe) /* data left in the pipe: send it first */
			return -EAGAIN;
	}
	if (!ch->buf) {
		ch->buf = buf_get();
		if (!ch->buf)
			return -ENOMEM;
	}
	if (!ch->buf->data)
		ch->buf->head = 0;
	if (buf_room(ch->buf, buf_size()) <= ch->reserve)
		return -ENOBUFS;   /* no room here: says nothing of the source */
	room = buf_room(ch->buf, buf_size()) - ch->reserve;
	if (unlikely(src->flags & CO_F_MUX)) {
		n = src->mux->recv(src->mux_ctx, ch->buf->area + ch->buf->head + ch->buf->data, room);
		if (n < 0) {
			errno = (int)-n;
			n = -1;
		}
	}
#ifdef USE_OPENSSL
	else if (unlikely(src->ssl))
		n = ssl_sock_recv(src, ch->buf->area + ch->buf->head + ch->buf->data, room);
#endif
	else
		n = recv(src->fd, ch->buf->area + ch->buf->head + ch->buf->data, room, 0);
	if (n > 0) {
		ch->buf->data += (uint32_t)n;
		/* splice-auto: a read that fills the buffer announces a large
		 * transfer; later reads go through a pipe. */
		if ((ch->flags & CH_F_SPLICE_AUTO) && ch->buf->head + ch->buf->data == buf_size())
			ch->flags |= CH_F_SPLICE;
		return n;
	}
	if (n < 0 && (!src->ssl || (src->flags & CO_F_MUX)))
		n = -errno;
	if (!ch->buf->data) {
		buf_put(ch->buf);
		ch->buf = NULL;
	}
	return n;
}

/* Sends what the channel may send to <dst>. Returns bytes sent (>= 0) or
 * -errno (-EAGAIN when the destination is full). */
static ssize_t chan_send(struct channel *ch, struct conn *dst)
{
	int fd = dst->fd;

	ssize_t n, total = 0;

	if (ch->pipe && ch->pipe->data) {
		n = splice(ch->pipe->rfd, NULL, fd, NULL, ch->pipe->data,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0)
			return -errno;
		ch->pipe->data -= (size_t)n;
		if (ch->to_forward != CHN_INFINITE)
			ch->to_forward -= (uint64_t)n;
		global.spliced_bytes += (uint64_t)n;
		total += n;
		if (ch->pipe->data)
			return total ? total : -EAGAIN;
		pipe_put(ch->pipe);
		ch->pipe = NULL;
	}
	if (ch->buf && ch->buf->data && ch->to_forward) {
		size_t len = ch->buf->data;
		int more;

		if (ch->to_forward < len)
			len = (size_t)ch->to_forward;
		/* More of this message is on its way (a head whose body has not
		 * arrived yet): MSG_MORE lets the kernel send both in one segment
		 * instead of a small one now. TCP_NODELAY pushes what is left at
		 * the next send without it, or at the next ACK. Not with
		 * CH_F_NODELAY (interactive bodies, option http-no-delay). */
		more = ch->to_forward != CHN_INFINITE && ch->to_forward > len &&
		       !(ch->flags & CH_F_NODELAY);
		if (unlikely(dst->flags & CO_F_MUX)) {
			n = dst->mux->send(dst->mux_ctx, ch->buf->area + ch->buf->head, len);
			if (n <= 0)
				return total ? total : n ? n : -EAGAIN;
		}
#ifdef USE_OPENSSL
		else if (unlikely(dst->ssl))
			n = ssl_sock_send(dst, ch->buf->area + ch->buf->head, len);
#endif
		else
			n = send(fd, ch->buf->area + ch->buf->head, len,
				 MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0));
		if (n < 0)
			return total ? total : dst->ssl ? n : -errno;
		if (unlikely(ch->tap))
			ch->tap(ch->tap_ctx, ch->buf->area + ch->buf->head, (size_t)n);
		ch->buf->head += (uint32_t)n;
		ch->buf->data -= (uint32_t)n;
		if (ch->to_forward != CHN_INFINITE)
			ch->to_forward -= (uint64_t)n;
		global.copied_bytes += (uint64_t)n;
		total += n;
		if (!ch->buf->data) {
			buf_put(ch->buf);
			ch->buf = NULL;
		}
	}
	return total;
}

int chan_shutw_due(const struct channel *ch)
{
	return (ch->flags & CH_F_SHUTR) && !(ch->flags & CH_F_SHUTW) &&
	       !(ch->pipe && ch->pipe->data) && !(ch->buf && ch->buf->data);
}

void chan_shutw(struct channel *ch, struct conn *dst)
{
	if (unlikely(dst->flags & CO_F_MUX)) {
		dst->mux->shutw(dst->mux_ctx);
		ch->flags |= CH_F_SHUTW;
		return;
	}
#ifdef USE_OPENSSL
	if (dst->ssl)
		ssl_sock_shutw(dst);
#endif
	shutdown(dst->fd, SHUT_WR);
	ch->flags |= CH_F_SHUTW;
}

/* Bytes read from one socket per wake-up before yielding to the others:
 * a busy transfer must not starve the rest of the loop (latency), and a
 * few buffers per call keep the syscall count low (throughput). Level-
 * triggered epoll brings us back for what is left. */
#define CHN_READ_BUDGET (256 * 1024)

enum chan_res chan_forward(struct channel *ch, struct conn *src, struct conn *dst,
                           int *src_ready, uint64_t *rcvd, uint64_t *sent)
{
	uint64_t budget = CHN_READ_BUDGET;
	int dst_full = 0;

	for (;;) {
		ssize_t n;

		if (!dst_full && dst && dst->fd >= 0 && chan_pending(ch)) {
			n = chan_send(ch, dst);
			if (n > 0) {
				*sent += (uint64_t)n;
				global.bytes_out += (uint64_t)n;
			} else if (n != -EAGAIN && n != -EINTR && n != 0) {
				return CHN_DST_ERR;
			}
			/* destination full: EV_WRITE says when it takes more; the
			 * room left is still filled (a source watched for reading
			 * while nothing reads it would be reported again and again) */
			if (chan_pending(ch))
				dst_full = 1;
		}
		if ((ch->flags & CH_F_SHUTR) || !*src_ready || !chan_has_room(ch) || !budget)
			break;
		n = chan_recv(ch, src);
		if (n > 0) {
			*rcvd += (uint64_t)n;
			ch->total += (uint64_t)n;
			budget = (uint64_t)n >= budget ? 0 : budget - (uint64_t)n;
			/* A short read drained the socket: epoll reports when more
			 * arrives, an extra recv() now would only say EAGAIN. TLS:
			 * bytes decrypted inside OpenSSL are not seen by epoll. A
			 * mux endpoint is woken only when something new comes
			 * (never again for what it holds already): only its
			 * -EAGAIN says it is drained. */
			if ((ch->buf ? ch->buf->head + ch->buf->data < buf_size()
				     : ch->pipe && ch->pipe->data < pipe_capacity()) &&
			    !(src->flags & CO_F_MUX) &&
			    !(src->ssl && ssl_sock_pending(src)))
				*src_ready = 0;
			continue;
		}
		if (n == 0) {
			ch->flags |= CH_F_SHUTR;
			continue;
		}
		if (n == -EAGAIN) {
			*src_ready = 0;
			break;
		}
		if (n == -ENOBUFS)
			break;   /* the source may still hold bytes: read once there is room */
		if (n == -EINTR)
			continue;
		return CHN_SRC_ERR;
	}
	return CHN_OK;
}
