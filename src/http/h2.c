/* The HTTP/2 mux on the client side (h2.h): one client connection, framed
 * by libnghttp2 (HPACK, flow control, RFC 9113 validation), carrying many
 * streams, each one a sluice stream (h2_stream.c). Owns the socket and
 * its TLS session once the HTTP/1 stream it was accepted as hands it over
 * (ALPN h2, "proto h2", or the HTTP/2 preface on a clear-text connection),
 * the connection's timers, GOAWAY on soft stop and on abuse, and the
 * tune.h2.* keywords. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h2.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

#include "h2_int.h"

struct h2_tune h2_tune = {
	.header_table_size      = 4096,
	.initial_window_size    = 65535,
	.max_concurrent_streams = 100,
	.max_frame_size         = 16384,
	.max_resets             = 100,
};

static struct {
	nghttp2_session_callbacks *cbs;
	nghttp2_option            *opt;
	struct h2c                *list;
	int                        count;
	/* connections with frames to send, sent together once the loop pass
	 * ran every callback (so that the responses of one pass share a
	 * send), before the loop waits again */
	struct h2c                *flush_head;
	ev_prepare                 flush_w;
	ev_check                   check_w;
	int                        late;   /* the flush pass ran: flush at once */
} h2;

/* Bytes read from one connection per wake-up before the others get a turn. */
#define H2C_READ_BUDGET (256 * 1024)

static void h2c_io_cb(struct ev_loop *loop, ev_io *w, int revents);
static void h2c_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void h2c_process(struct h2c *h2c);
static void h2c_unqueue(struct h2c *h2c);

const char h2_preface[H2_PREFACE_LEN + 1] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

int h2_preface_match(const char *p, size_t n)
{
	if (n > H2_PREFACE_LEN)
		n = H2_PREFACE_LEN;
	if (memcmp(p, h2_preface, n) != 0)
		return 0;
	return n == H2_PREFACE_LEN ? 1 : -1;
}

/* ---- nghttp2 glue ---- */

static int h2c_on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	return h2s_on_frame_recv(ng, f, ud);
}

/* Frames nghttp2 refused (invalid): the stream was reset; counted. */
static int h2c_on_invalid_frame(nghttp2_session *ng, const nghttp2_frame *f, int err, void *ud)
{
	struct h2c *h2c = ud;

	h2c->fe->fe_counters.failed_req++;
	return 0;
}

static int h2c_on_error(nghttp2_session *ng, int code, const char *msg, size_t len, void *ud)
{
	struct h2c *h2c = ud;

	log_event_px(&h2c->fe->loggers, LOG_L_INFO, "%s: HTTP/2 protocol error: %.*s",
		     h2c->fe->name, (int)len, msg);
	return 0;
}

SLUICE_INIT(h2_callbacks_init)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		abort();
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, h2s_on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, h2s_on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2c_on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2s_on_data_chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2s_on_stream_close);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, h2c_on_invalid_frame);
	nghttp2_session_callbacks_set_error_callback2(cb, h2c_on_error);
	h2.cbs = cb;
}

/* The session options: the library's own bounds on abuse. */
static nghttp2_option *h2_options(void)
{
	if (h2.opt)
		return h2.opt;
	if (nghttp2_option_new(&h2.opt) != 0)
		return NULL;
	/* the window comes back as the stream reads, never before */
	nghttp2_option_set_no_auto_window_update(h2.opt, 1);
	/* queued SETTINGS/PING acknowledgements (a flood of them) */
	nghttp2_option_set_max_outbound_ack(h2.opt, 1000);
	nghttp2_option_set_max_settings(h2.opt, 32);
	/* CONTINUATION frames per header block (CVE-2024-28182) */
	nghttp2_option_set_max_continuations(h2.opt, 16);
	/* resets: a burst, then a rate per second (CVE-2023-44487) */
	nghttp2_option_set_stream_reset_rate_limit(h2.opt, (uint64_t)h2_tune.max_resets * 10,
						   (uint64_t)h2_tune.max_resets);
	nghttp2_option_set_max_deflate_dynamic_table_size(h2.opt, 4096);
	/* no RFC 7540 priority tree (sluice schedules streams as they come,
	 * as HAProxy does): closed streams are not kept for it */
	nghttp2_option_set_no_closed_streams(h2.opt, 1);
	return h2.opt;
}

/* ---- connection life ---- */

/* The nghttp2 session of <h2c> (<server>: we serve a client), its memory
 * from h2_mem (its frame buffer noted, to be trimmed when idle). */
static int h2c_session_new(struct h2c *h2c, int server, nghttp2_option *opt)
{
	int rv;

	h2_mem_owner(h2c);
	rv = server ? nghttp2_session_server_new3(&h2c->ng, h2.cbs, h2c, opt, &h2_mem)
		    : nghttp2_session_client_new3(&h2c->ng, h2.cbs, h2c, opt, &h2_mem);
	h2c->fbuf = h2_mem_owned();
	h2_mem_owner(NULL);
	return rv;
}

/* The list <h2c> is on: every client connection, or its server's. */
static struct h2c **h2c_list(struct h2c *h2c)
{
	return h2c->back ? (struct h2c **)&h2c->srv->h2_conns : &h2.list;
}

static void h2c_link(struct h2c *h2c)
{
	struct h2c **l = h2c_list(h2c);

	h2c->next = *l;
	if (*l)
		(*l)->prev = h2c;
	*l = h2c;
}

static void h2c_close(struct h2c *h2c)
{
	h2c->flags |= H2C_F_DYING;   /* what its streams do now flushes nothing */
	h2c_unqueue(h2c);
	h2s_abort_all(h2c);
	nghttp2_session_del(h2c->ng);
	h2c->ng = NULL;
	ev_timer_stop(global.loop, &h2c->timer);
	ev_clear_pending(global.loop, &h2c->c.io);
	conn_close(&h2c->c);
	h2_bytes_free(&h2c->out);
	h2_bytes_free(&h2c->early);
	h2_hd_free(&h2c->hd);
	if (h2c->prev)
		h2c->prev->next = h2c->next;
	else
		*h2c_list(h2c) = h2c->next;
	if (h2c->next)
		h2c->next->prev = h2c->prev;
	if (!h2c->back) {
		h2.count--;
		stream_conn_end(h2c->fe, h2c->li);
	}
	free(h2c);
}

/* Takes <h2c> off the list of connections to flush. */
static void h2c_unqueue(struct h2c *h2c)
{
	if (!(h2c->flags & H2C_F_QUEUED))
		return;
	if (h2c->fprev)
		h2c->fprev->fnext = h2c->fnext;
	else
		h2.flush_head = h2c->fnext;
	if (h2c->fnext)
		h2c->fnext->fprev = h2c->fprev;
	h2c->fprev = h2c->fnext = NULL;
	h2c->flags &= ~H2C_F_QUEUED;
}

/* Before the loop waits: every connection asked for sends what it has. */
static void h2_flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct h2c *h2c;

	/* what this pass wakes is flushed at once: no later pass is sure */
	h2.late = 1;
	while ((h2c = h2.flush_head)) {
		h2c_unqueue(h2c);
		h2c_process(h2c);
	}
}

/* The loop woke up: flushes are gathered for the end of the pass again. */
static void h2_check_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	h2.late = 0;
}

void h2c_want_flush(struct h2c *h2c)
{
	if (h2c->flags & (H2C_F_IN_RECV | H2C_F_QUEUED | H2C_F_DYING))
		return;
	if (h2.late) {
		ev_feed_event(global.loop, &h2c->c.io, EV_CUSTOM);
		return;
	}
	if (!ev_is_active(&h2.flush_w)) {
		ev_prepare_init(&h2.flush_w, h2_flush_cb);
		ev_prepare_start(global.loop, &h2.flush_w);
		ev_unref(global.loop);   /* never keeps a stopping loop alive */
		ev_check_init(&h2.check_w, h2_check_cb);
		ev_check_start(global.loop, &h2.check_w);
		ev_unref(global.loop);
	}
	h2c->flags |= H2C_F_QUEUED;
	h2c->fprev = NULL;
	h2c->fnext = h2.flush_head;
	if (h2.flush_head)
		h2.flush_head->fprev = h2c;
	h2.flush_head = h2c;
}

void h2c_stream_gone(struct h2c *h2c)
{
	if (!--h2c->nstreams)
		h2c->t_idle = tick_ev_now();
	h2c_want_flush(h2c);
}

/* Hands <n> bytes that came from the client to nghttp2. While the TLS
 * handshake has not ended (early data, 0-RTT), they are held instead: no
 * request of an HTTP/2 connection is acted on before the client proved it
 * is the one that started the session, so its streams never see early data
 * (ssl_fc_has_early is 0 there, wait-for-handshake has nothing to wait
 * for). Returns 0, or -1 on a fatal error (logged). */
#define H2C_EARLY_MAX (1u << 20)   /* far above any max_early_data */

static int h2c_recv(struct h2c *h2c, const char *p, size_t n)
{
	ssize_t r;

	if (unlikely(h2c->c.flags & CO_F_SSL_EARLY) && !h2c->back)
		return h2_bytes_add(&h2c->early, p, n, H2C_EARLY_MAX) == 0 ? 0 : -1;
	if (unlikely(h2c->early.len)) {
		h2c->flags |= H2C_F_IN_RECV;
		r = nghttp2_session_mem_recv(h2c->ng, (const uint8_t *)h2c->early.p +
					     h2c->early.off, h2c->early.len);
		h2c->flags &= ~H2C_F_IN_RECV;
		h2_bytes_free(&h2c->early);
		if (r < 0)
			goto fail;
	}
	if (!n)
		return 0;
	h2c->flags |= H2C_F_IN_RECV;
	r = nghttp2_session_mem_recv(h2c->ng, (const uint8_t *)p, n);
	h2c->flags &= ~H2C_F_IN_RECV;
	if (r >= 0)
		return 0;
fail:
	log_event_px(&h2c->fe->loggers, LOG_L_INFO, "%s: HTTP/2 connection error: %s",
		     h2c->fe->name, nghttp2_strerror((int)r));
	return -1;
}

int h2c_take_over(struct stream *s)
{
	struct h2c *h2c = calloc(1, sizeof(*h2c));
	struct buf *rx = NULL;
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, (uint32_t)h2_tune.max_concurrent_streams },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (uint32_t)h2_tune.initial_window_size },
		{ NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, (uint32_t)h2_tune.header_table_size },
		{ NGHTTP2_SETTINGS_MAX_FRAME_SIZE, (uint32_t)h2_tune.max_frame_size },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, global.bufsize - global.maxrewrite },
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1 },
	};
	nghttp2_option *opt = h2_options();

	if (!h2c || !opt || h2c_session_new(h2c, 1, opt) != 0) {
		free(h2c);
		return -1;
	}
	h2c->li = s->li;
	h2c->fe = s->fe;
	h2c->src = s->cli_addr;
	if (s->dst) {
		h2c->dst = *s->dst;
		h2c->has_dst = 1;
	}
	stream_give_cli(s, &h2c->c, &rx);
	conn_io_take_over(&h2c->c.io, h2c_io_cb, h2c->c.fd);
	h2c->c.io.data = h2c;
	h2c->c.events = 0;
	h2c->c.flags |= CO_F_RD_READY;
	ev_init(&h2c->timer, h2c_timer_cb);
	h2c->t_idle = tick_ev_now();
	h2c_link(h2c);
	h2.count++;
	nghttp2_submit_settings(h2c->ng, NGHTTP2_FLAG_NONE, iv, ARRAY_SIZE(iv));
	/* the connection's window is as large as a stream's */
	if (h2_tune.initial_window_size > 65535)
		nghttp2_session_set_local_window_size(h2c->ng, NGHTTP2_FLAG_NONE, 0,
						      (int32_t)h2_tune.initial_window_size);
	if (global.flags & GLB_F_STOPPING)
		h2c->flags |= H2C_F_GOAWAY;
	if (rx) {
		int r = h2c_recv(h2c, rx->area + rx->head, rx->data);

		buf_put(rx);
		if (r < 0)
			h2c->flags |= H2C_F_CLOSING;
	}
	h2c_process(h2c);
	return 0;
}

/* ---- I/O ---- */

/* Reads and hands what came to nghttp2. Returns 0, or -1 when the
 * connection is to close (the peer left, an error, a fatal frame). */
static int h2c_read(struct h2c *h2c)
{
	size_t budget = H2C_READ_BUDGET;
	struct buf *b;

	if (!(h2c->c.flags & CO_F_RD_READY) || (h2c->flags & H2C_F_CLOSING))
		return 0;
	b = buf_get();
	if (!b)
		return 0;   /* no memory now: retried at the next event */
	while (budget) {
		ssize_t n;

#ifdef USE_OPENSSL
		if (h2c->c.ssl)
			n = ssl_sock_recv(&h2c->c, b->area, buf_size());
		else
#endif
		{
			n = recv(h2c->c.fd, b->area, buf_size(), 0);
			if (n < 0)
				n = -errno;
		}
		if (n == -EAGAIN || n == -EINTR) {
			if (n == -EAGAIN)
				h2c->c.flags &= ~CO_F_RD_READY;
			break;
		}
		if (n <= 0) {
			buf_put(b);
			return -1;
		}
		h2c->c.last_act = tick_ev_now();
		if (!h2c->back) {
			h2c->fe->fe_counters.bytes_in += (uint64_t)n;
			h2c->li->counters.bytes_in += (uint64_t)n;
		}
		if (h2c_recv(h2c, b->area, (size_t)n) < 0) {
			buf_put(b);
			return -1;
		}
		budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
		if ((size_t)n < buf_size() && !(h2c->c.ssl && ssl_sock_pending(&h2c->c))) {
			h2c->c.flags &= ~CO_F_RD_READY;
			break;
		}
	}
	buf_put(b);
	/* rapid reset: a client resetting what it asked for, over and over,
	 * gets a GOAWAY (ENHANCE_YOUR_CALM) past tune.h2.max-resets beyond
	 * the streams it let finish */
	if (!h2c->back && h2c->resets > (uint32_t)h2_tune.max_resets &&
	    h2c->resets > (h2c->nreq - h2c->resets) / 2 && !(h2c->flags & H2C_F_CLOSING)) {
		log_event_px(&h2c->fe->loggers, LOG_L_WARNING,
			     "%s: HTTP/2 client reset %u of its %llu streams: GOAWAY "
			     "ENHANCE_YOUR_CALM", h2c->fe->name, h2c->resets,
			     (unsigned long long)h2c->nreq);
		nghttp2_session_terminate_session(h2c->ng, NGHTTP2_ENHANCE_YOUR_CALM);
		h2c->flags |= H2C_F_CLOSING;
	}
	return 0;
}

/* Sends what is queued. Returns 0 (all sent, or the socket is full), or -1
 * on an error. */
static int h2c_send_out(struct h2c *h2c)
{
	while (h2c->out.len) {
		ssize_t n;

#ifdef USE_OPENSSL
		if (h2c->c.ssl)
			n = ssl_sock_send(&h2c->c, h2c->out.p + h2c->out.off, h2c->out.len);
		else
#endif
		{
			n = send(h2c->c.fd, h2c->out.p + h2c->out.off, h2c->out.len,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0)
				n = -errno;
		}
		if (n == -EAGAIN || n == -EINTR)
			return 0;
		if (n < 0)
			return -1;
		h2c->c.last_act = tick_ev_now();
		if (!h2c->back) {
			h2c->fe->fe_counters.bytes_out += (uint64_t)n;
			h2c->li->counters.bytes_out += (uint64_t)n;
		}
		global.bytes_out += (uint64_t)n;
		h2_bytes_take(&h2c->out, NULL, (size_t)n);
	}
	return 0;
}

/* Takes frames from nghttp2 while the socket takes them. Returns 0 or -1. */
static int h2c_write(struct h2c *h2c)
{
	for (;;) {
		/* frames gathered up to a buffer's worth, then one send (one
		 * TLS record) for all of them */
		while (h2c->out.len < global.bufsize) {
			const uint8_t *p;
			ssize_t n = nghttp2_session_mem_send(h2c->ng, &p);

			if (n < 0)
				return -1;
			if (!n)
				break;
			h2c->trimmed = 0;   /* its frame buffer is written again */
			if (h2_bytes_add(&h2c->out, (const char *)p, (size_t)n, SIZE_MAX) < 0)
				return -1;
		}
		if (!h2c->out.len)
			break;
		if (h2c_send_out(h2c) < 0)
			return -1;
		if (h2c->out.len || !nghttp2_session_want_write(h2c->ng))
			break;   /* the socket is full, or all is sent */
	}
	/* an idle connection holds no output buffer (its frame buffer's pages
	 * go back after H2C_TRIM_DELAY idle: h2c_timer_cb()) */
	if (!h2c->out.len)
		h2_bytes_free(&h2c->out);
	return 0;
}

/* Idle (no stream) past its timeout, or its stop: when it closes. */
/* An idle connection gives its frame buffer's pages back once it stayed
 * idle this long (not at each pause between two bursts of streams). */
#define H2C_TRIM_DELAY 0.2

/* When idle <h2c>'s frame buffer is to be trimmed, 0: not due. */
static ev_tstamp h2c_trim_at(const struct h2c *h2c)
{
	return !h2c->nstreams && !h2c->trimmed && h2c->fbuf && !h2c->out.len ?
	       MAX(h2c->t_idle, h2c->c.last_act) + H2C_TRIM_DELAY : 0;
}

static ev_tstamp h2c_deadline_io(const struct h2c *h2c)
{
	uint32_t t;

	if (h2c->back) {
		/* frames the server does not take, or idle past pool-purge-delay */
		t = h2c->nstreams ? (h2c->out.len ? h2c->fe->timeout.server : 0)
				  : h2c->srv->pool_purge_delay;
		return t ? MAX(h2c->t_idle, h2c->c.last_act) + tick_to_ev(t) : 0;
	}
	/* frames the client does not take, or streams no sluice stream holds
	 * any more (a response sent whose request never ended, a 431): those
	 * wait for the client alone, and no stream's timeout watches them */
	if (h2c->nstreams)
		return (h2c->out.len || !h2c->nattached) && h2c->fe->timeout.client ?
		       h2c->c.last_act + tick_to_ev(h2c->fe->timeout.client) : 0;
	t = h2c->fe->timeout.http_keep_alive ? h2c->fe->timeout.http_keep_alive :
	    h2c->fe->timeout.client;
	return t ? MAX(h2c->t_idle, h2c->c.last_act) + tick_to_ev(t) : 0;
}

static ev_tstamp h2c_deadline(const struct h2c *h2c)
{
	ev_tstamp d = h2c_deadline_io(h2c), x = h2c_trim_at(h2c);

	return x && (!d || x < d) ? x : d;
}

static void h2c_arm(struct h2c *h2c)
{
	ev_tstamp d = h2c_deadline(h2c);

	if (!d) {
		ev_timer_stop(global.loop, &h2c->timer);
		h2c->armed = 0;
		return;
	}
	if (h2c->armed && h2c->armed <= d && ev_is_active(&h2c->timer))
		return;
	ev_timer_stop(global.loop, &h2c->timer);
	ev_timer_set(&h2c->timer, MAX(d - tick_ev_now(), 0.0), 0.);
	ev_timer_start(global.loop, &h2c->timer);
	h2c->armed = d;
}

/* A GOAWAY telling the client which streams will be served. */
static void h2c_goaway(struct h2c *h2c, uint32_t code)
{
	if (h2c->flags & H2C_F_GOAWAY && code == NGHTTP2_NO_ERROR)
		return;
	h2c->flags |= H2C_F_GOAWAY;
	nghttp2_submit_goaway(h2c->ng, NGHTTP2_FLAG_NONE,
			      nghttp2_session_get_last_proc_stream_id(h2c->ng), code, NULL, 0);
}

/* Runs the connection: reads, frames out, decides the events, closes when
 * done. May free <h2c>. */
static void h2c_process(struct h2c *h2c)
{
	int ev = 0;

	if (h2c_read(h2c) < 0) {
		h2c_close(h2c);
		return;
	}
	if ((global.flags & GLB_F_STOPPING) && !(h2c->flags & H2C_F_GOAWAY))
		h2c_goaway(h2c, NGHTTP2_NO_ERROR);
	if (h2c->back && !h2c->nstreams && (h2c->flags & H2C_F_PRIVATE))
		h2c->flags |= H2C_F_GOAWAY;   /* its one stream is over */
	if (h2c_write(h2c) < 0) {
		h2c_close(h2c);
		return;
	}
	if (unlikely(h2c->early.len) && !(h2c->c.flags & CO_F_SSL_EARLY) &&
	    (h2c_recv(h2c, NULL, 0) < 0 || h2c_write(h2c) < 0)) {
		/* the handshake ended (by a read or a write): what came as
		 * early data is acted on now */
		h2c_close(h2c);
		return;
	}
	/* over when nghttp2 has nothing more to do, or after a GOAWAY once
	 * every stream finished and every byte left */
	if (!h2c->out.len &&
	    ((!nghttp2_session_want_read(h2c->ng) && !nghttp2_session_want_write(h2c->ng)) ||
	     ((h2c->flags & (H2C_F_GOAWAY | H2C_F_CLOSING)) && !h2c->nstreams &&
	      !nghttp2_session_want_write(h2c->ng)))) {
		h2c_close(h2c);
		return;
	}
	if (!(h2c->flags & H2C_F_CLOSING))
		ev |= EV_READ;
	if (h2c->out.len)
		ev |= EV_WRITE;
	if (h2c->c.ssl) {
		if (h2c->c.flags & CO_F_SSL_RD_WANT_W)
			ev |= EV_WRITE;
		if (h2c->c.flags & CO_F_SSL_WR_WANT_R)
			ev |= EV_READ;
	}
	conn_want(&h2c->c, ev);
	h2c_arm(h2c);
}

static void h2c_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct h2c *h2c = w->data;

	if (revents & EV_READ)
		h2c->c.flags |= CO_F_RD_READY;
	if ((h2c->c.flags & CO_F_SSL_RD_WANT_W) && (revents & EV_WRITE))
		h2c->c.flags |= CO_F_RD_READY;
	h2c_process(h2c);
}

static void h2c_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct h2c *h2c = container_of(w, struct h2c, timer);
	ev_tstamp d = h2c_deadline(h2c);

	h2c->armed = 0;
	if (!d || d > tick_ev_now() + 0.0005) {
		h2c_arm(h2c);
		return;
	}
	if (d == h2c_trim_at(h2c) && d != h2c_deadline_io(h2c)) {
		/* idle for a while: its frame buffer's pages go back */
		h2_mem_trim(h2c->fbuf, h2c);
		h2c->trimmed = 1;
		h2c_arm(h2c);
		return;
	}
	if (h2c->nstreams) {
		/* frames it does not take: it stalls every stream */
		h2c_close(h2c);
		return;
	}
	/* idle too long: a GOAWAY, then the close */
	h2c_goaway(h2c, NGHTTP2_NO_ERROR);
	h2c->flags |= H2C_F_CLOSING;
	h2c_write(h2c);
	h2c_close(h2c);
}

void h2_stop_all(void)
{
	for (struct h2c *h2c = h2.list; h2c; h2c = h2c->next)
		h2c_want_flush(h2c);
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			for (struct h2c *h2c = srv->h2_conns; h2c; h2c = h2c->next)
				h2c_want_flush(h2c);   /* idle ones close (GLB_F_STOPPING) */
}

/* ---- to servers ---- */

/* Whether back connection <h2c> may carry one more stream. */
static int h2c_back_room(struct h2c *h2c)
{
	uint32_t max = nghttp2_session_get_remote_settings(h2c->ng,
							    NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);

	return !(h2c->flags & (H2C_F_GOAWAY | H2C_F_CLOSING | H2C_F_PRIVATE)) &&
	       (uint32_t)h2c->nstreams < max && nghttp2_session_check_request_allowed(h2c->ng);
}

struct h2c *h2c_back_first(struct server *srv)
{
	for (struct h2c *h2c = srv->h2_conns; h2c; h2c = h2c->next)
		if (h2c_back_room(h2c))
			return h2c;
	return NULL;
}

int h2_srv_wants(const struct server *srv, const struct conn *c)
{
	if (srv->flags & SRV_F_PROTO_H2)
		return 1;
#ifdef USE_OPENSSL
	if (c && c->ssl && !(c->flags & CO_F_MUX) && ssl_sock_alpn_is(c, "h2"))
		return 1;
#endif
	return 0;
}

int h2_back_attach(struct stream *s, int private)
{
	struct h2c *h2c = private ? NULL : h2c_back_first(s->ss.target);

	if (!h2c || h2s_attach_back(h2c, s) < 0)
		return -1;
	h2c_want_flush(h2c);
	return 0;
}

int h2_back_take_over(struct stream *s, int private)
{
	struct h2c *h2c = calloc(1, sizeof(*h2c));
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (uint32_t)h2_tune.initial_window_size },
		{ NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, (uint32_t)h2_tune.header_table_size },
		{ NGHTTP2_SETTINGS_MAX_FRAME_SIZE, (uint32_t)h2_tune.max_frame_size },
		{ NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1 },
	};
	nghttp2_option *opt = h2_options();
	struct ssl_st *ssl;
	int fd;

	if (!h2c || !opt || h2c_session_new(h2c, 0, opt) != 0) {
		free(h2c);
		return -1;
	}
	h2c->back = 1;
	h2c->srv = s->ss.target;
	h2c->fe = s->be;
	if (private)
		h2c->flags |= H2C_F_PRIVATE;
	fd = stream_detach_srv(s, &ssl);
	conn_io_hand_off(&s->srv.io);
	h2c->c.fd = fd;
	h2c->c.ssl = ssl;
	h2c->c.flags = CO_F_CONNECTED | CO_F_TCP | CO_F_RD_READY;
	conn_io_take_over(&h2c->c.io, h2c_io_cb, fd);
	h2c->c.io.data = h2c;
	h2c->c.last_act = h2c->t_idle = tick_ev_now();
	ev_init(&h2c->timer, h2c_timer_cb);
	h2c_link(h2c);
	nghttp2_submit_settings(h2c->ng, NGHTTP2_FLAG_NONE, iv, ARRAY_SIZE(iv));
	if (h2_tune.initial_window_size > 65535)
		nghttp2_session_set_local_window_size(h2c->ng, NGHTTP2_FLAG_NONE, 0,
						      (int32_t)h2_tune.initial_window_size);
	if (h2s_attach_back(h2c, s) < 0) {
		/* the socket is the connection's now: the stream retries */
		h2c_close(h2c);
		return -1;
	}
	h2c_want_flush(h2c);
	return 0;
}

int h2_conn_count(void)
{
	return h2.count;
}

/* ---- keywords ---- */

static void *h2_tune_base(struct cfg_ctx *ctx)
{
	return &h2_tune;
}

#define H2_TUNE(kw, field, lo, hi, what) \
	{ kw, CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct h2_tune, field), .min = lo, .max = hi, \
	  .usage = what, .base = h2_tune_base }

/* h2-workaround-bogus-websocket-clients: HAProxy then stops announcing
 * RFC 8441's SETTINGS_ENABLE_CONNECT_PROTOCOL to clients; sluice never
 * announces it (no WebSocket over HTTP/2), so what the keyword asks for is
 * always the case. */
static int h2_kw_ws_workaround(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	return 0;
}

static struct cfg_kw h2_kws[] = {
	{ "h2-workaround-bogus-websocket-clients", CFG_SEC_GLOBAL, CFG_T_FUNC, 0,
	  .parse = h2_kw_ws_workaround },
	H2_TUNE("tune.h2.header-table-size", header_table_size, 0, 65536, "a size in bytes"),
	H2_TUNE("tune.h2.initial-window-size", initial_window_size, 1, 0x7fffffff,
		"a size in bytes"),
	H2_TUNE("tune.h2.max-concurrent-streams", max_concurrent_streams, 1, 65535,
		"a number of streams"),
	H2_TUNE("tune.h2.max-frame-size", max_frame_size, 16384, 16777215, "a size in bytes"),
	H2_TUNE("tune.h2.max-resets", max_resets, 1, 1000000, "a number of streams"),
};

/* bind "proto h2|h1": the protocol clients speak from their first byte
 * (h1: HTTP/1, which may still upgrade to HTTP/2 by its preface). */
static int h2_bind_proto(struct bind_conf *bc, const struct bind_kw *kw, int argc, char **argv,
                         char **err)
{
	if (argc < 2) {
		*err = str_fmt("expects a protocol name ('h2' or 'h1')");
		return -1;
	}
	if (strcmp(argv[1], "h2") == 0) {
		bc->flags |= LI_F_PROTO_H2;
	} else if (strcmp(argv[1], "h1") == 0) {
		bc->flags &= ~LI_F_PROTO_H2;
	} else {
		*err = str_fmt("unknown protocol '%s' (sluice knows 'h2' and 'h1')", argv[1]);
		return -1;
	}
	return 2;
}

static struct bind_kw h2_bind_kws[] = {
	{ "proto", .parse = h2_bind_proto },
};

/* A server's address changed: its connections finish their streams and
 * take no new one (they go to the old address); the idle ones close. */
static void h2_srv_addr_changed(struct server *srv)
{
	for (struct h2c *h2c = srv->h2_conns; h2c; h2c = h2c->next) {
		h2c_goaway(h2c, NGHTTP2_NO_ERROR);
		h2c_want_flush(h2c);
	}
}

SLUICE_INIT(h2_register)
{
	server_on_addr_change(h2_srv_addr_changed);
	cfg_register(h2_kws, ARRAY_SIZE(h2_kws));
	bind_register_keywords(h2_bind_kws, ARRAY_SIZE(h2_bind_kws));
}

void h2_conn_foreach(void (*fn)(const struct conn *c, int back, const struct proxy *px,
                                const struct server *srv, int nstreams, void *arg),
                     void *arg)
{
	for (struct h2c *h2c = h2.list; h2c; h2c = h2c->next)
		fn(&h2c->c, 0, h2c->fe, NULL, h2c->nstreams, arg);
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			for (struct h2c *h2c = srv->h2_conns; h2c; h2c = h2c->next)
				fn(&h2c->c, 1, px, srv, h2c->nstreams, arg);
}
