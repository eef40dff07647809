/* The FastCGI mux (fcgi.h, fcgi_int.h): a connection to a "proto fcgi"
 * server carries the requests of sluice streams (fcgi_strm.c) as FastCGI
 * records. Here: the connection's life (taken over from the stream that
 * connected, shared by later requests as FCGI_KEEP_CONN, the application's
 * multiplexing and http-reuse allow, idle ones closed after
 * pool-purge-delay), the records that come (STDOUT to its request, STDERR
 * to log-stderr, END_REQUEST, GET_VALUES_RESULT), and the records that
 * leave. Whatever the application sends that breaks the protocol closes
 * the connection: its requests then fail as a server's that left (502
 * before a response), with a log line saying what it sent.
 *
 * Memory: one input buffer per connection, its output queue (records not
 * sent yet, held to about a buffer by the writers), and per request the
 * STDOUT bytes its stream has not read (one buffer: when full, the
 * connection reads no more records until the stream takes them). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sluice/buf.h>
#include <sluice/common.h>
#include <sluice/fcgi.h>
#include <sluice/fcgi_app.h>
#include <sluice/fcgi_rec.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

#include "fcgi_int.h"

static void fc_io_cb(struct ev_loop *loop, ev_io *w, int revents);
static void fc_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* ---- helpers ---- */

void fc_log(const struct fcgi_conn *fc, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_event_px(&fc->be->loggers, LOG_L_WARNING, "backend %s: server %s: FastCGI: %s",
		     fc->be->name, fc->srv->name, msg);
}

struct fcgi_strm *fc_find(const struct fcgi_conn *fc, uint16_t id)
{
	for (struct fcgi_strm *fs = fc->streams; fs; fs = fs->next)
		if ((fs->flags & FS_F_BEGUN) && fs->id == id)
			return fs;
	return NULL;
}

/* Whether the output queue takes more request bytes now. */
size_t fc_out_room(const struct fcgi_conn *fc)
{
	return fc->out.len < global.bufsize ? global.bufsize - fc->out.len : 0;
}

/* ---- the connection: records from the application ---- */

/* Gathers the content of the record being read in fc->rec (bounded).
 * Returns 1 when the record is whole, 0 when more is to come, -1 when it
 * is too large. */
static int fc_gather(struct fcgi_conn *fc, const struct fcgi_piece *pc, size_t max)
{
	if (!pc->off)
		fc->rec.len = 0;
	if (fc->rec.len + pc->len > max)
		return -1;
	if (pc->len && dstr_add(&fc->rec, pc->data, pc->len) < 0)
		return -1;
	return pc->last;
}

static const char *const fc_pstatus[] = {
	"complete", "cannot multiplex the connection", "overloaded", "unknown role",
};

/* END_REQUEST <fs>: application status, protocol status. */
static void fc_end_request(struct fcgi_conn *fc, struct fcgi_strm *fs, const unsigned char *b)
{
	unsigned ps = b[4];

	fs->app_status = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	fs->flags |= FS_F_ENDED;
	if (!(fc->flags & FC_F_KEEP))
		fc->flags |= FC_F_CLOSING;   /* the application closes it */
	if (ps != FCGI_REQUEST_COMPLETE) {
		fc_log(fc, "request %u refused by the application: %s", fs->id,
		       ps < ARRAY_SIZE(fc_pstatus) ? fc_pstatus[ps] : "unknown protocol status");
		if (ps == FCGI_CANT_MPX_CONN) {
			fc->flags &= ~FC_F_MPXS;
			fc->max_reqs = 1;
		}
		/* a server that cannot take the request (503), or that does
		 * not play the responder role sluice asks for (500) */
		if (fs->rs == FS_RS_HEAD && (!fs->sbuf || !fs->sbuf->data))
			fs_answer(fs, ps == FCGI_UNKNOWN_ROLE ? 500 : 503,
				  ps < ARRAY_SIZE(fc_pstatus) ? fc_pstatus[ps] : "refused");
	}
	if (!fs->s) {
		fs_free(fs);   /* abandoned: over now */
		return;
	}
	fs_wake(fs, EV_READ);
}

/* GET_VALUES_RESULT: how many requests at once the application takes. */
static int fc_values(struct fcgi_conn *fc)
{
	const char *n, *v;
	size_t off = 0, nl, vl;
	int r;

	while ((r = fcgi_nv_next(fc->rec.p, fc->rec.len, &off, &n, &nl, &v, &vl)) == 1) {
		long val = 0;

		for (size_t i = 0; i < vl && i < 9; i++)
			val = v[i] >= '0' && v[i] <= '9' ? val * 10 + (v[i] - '0') : val;
		if (nl == 13 && !memcmp(n, "FCGI_MAX_REQS", 13) && val > 0)
			fc->max_reqs = (int)MIN(val, 65535L);
		else if (nl == 15 && !memcmp(n, "FCGI_MPXS_CONNS", 15))
			fc->flags = val ? fc->flags | FC_F_MPXS : fc->flags & ~FC_F_MPXS;
	}
	if (!(fc->flags & FC_F_MPXS))
		fc->max_reqs = 1;
	return r < 0 ? -1 : 0;
}

/* One piece of a record. Returns 0, or -1 with <why> on a protocol error. */
static int fc_piece(struct fcgi_conn *fc, const struct fcgi_piece *pc, const char **why)
{
	int mgmt = pc->type == FCGI_GET_VALUES_RESULT || pc->type == FCGI_UNKNOWN_TYPE;
	struct fcgi_strm *fs = pc->id ? fc_find(fc, pc->id) : NULL;
	int r;

	if (mgmt ? pc->id != 0 : !fs) {
		*why = mgmt ? "a management record for a request" :
		       "a record for a request it was not given";
		return -1;
	}
	switch (pc->type) {
	case FCGI_STDOUT:
		if (!pc->clen) {
			fs->flags |= FS_F_OUT_END;
		} else if (fs->s && !(fs->flags & (FS_F_BAD | FS_F_OUT_END | FS_F_ENDED)) &&
			   fs->rs != FS_RS_DONE && fs->rs != FS_RS_NOBODY) {
			if (!fs->sbuf && !(fs->sbuf = buf_get())) {
				*why = "no memory";
				return -1;
			}
			if (fs->sbuf->head && fs->sbuf->head + fs->sbuf->data + pc->len > buf_size()) {
				memmove(fs->sbuf->area, fs->sbuf->area + fs->sbuf->head, fs->sbuf->data);
				fs->sbuf->head = 0;
			}
			memcpy(fs->sbuf->area + fs->sbuf->head + fs->sbuf->data, pc->data, pc->len);
			fs->sbuf->data += pc->len;
		}
		fs_wake(fs, EV_READ);
		break;
	case FCGI_STDERR:
		if (!pc->clen)
			break;   /* the end of its STDERR */
		r = fc_gather(fc, pc, 65535);
		if (r > 0)
			fcgi_app_log_stderr(fc->app, fc->rec.p, fc->rec.len);
		break;
	case FCGI_END_REQUEST:
		r = fc_gather(fc, pc, 8);
		if (r < 0 || (r > 0 && fc->rec.len != 8)) {
			*why = "an END_REQUEST record of the wrong size";
			return -1;
		}
		if (r > 0)
			fc_end_request(fc, fs, (const unsigned char *)fc->rec.p);
		break;
	case FCGI_GET_VALUES_RESULT:
		r = fc_gather(fc, pc, 4096);
		if (r < 0 || (r > 0 && fc_values(fc) < 0)) {
			*why = "an invalid GET_VALUES_RESULT record";
			return -1;
		}
		break;
	case FCGI_UNKNOWN_TYPE:
		break;   /* our GET_VALUES was not understood: the options stand */
	default:
		*why = "a record of a type an application does not send";
		return -1;
	}
	return 0;
}

/* Reads records from the input buffer while every request takes its
 * STDOUT. Returns 0, or -1 on a protocol error (logged). */
static int fc_parse(struct fcgi_conn *fc)
{
	struct buf *b = fc->ibuf;
	const char *why = NULL;

	while (b && b->data && !(fc->flags & FC_F_BLOCKED)) {
		struct fcgi_piece pc;
		size_t n = b->data, used;
		int r;

		if (!fc->rd.in_rec || !fc->rd.cleft) {
			/* up to the end of the next header: a STDOUT record's
			 * content is then read as its request has room */
			n = MIN(n, (fc->rd.in_rec ? fc->rd.pleft : 0) + FCGI_HDR_LEN - fc->rd.hlen);
		} else if (fc->rd.type == FCGI_STDOUT) {
			struct fcgi_strm *fs = fc_find(fc, fc->rd.id);

			if (fs && fs->s && !(fs->flags & (FS_F_BAD | FS_F_OUT_END | FS_F_ENDED)) &&
			    fs->rs != FS_RS_DONE && fs->rs != FS_RS_NOBODY) {
				size_t room = fs->sbuf ? buf_size() - fs->sbuf->data : buf_size();

				if (!room) {
					fc->flags |= FC_F_BLOCKED;
					fc->blocked = fs;
					fs_wake(fs, EV_READ);
					break;
				}
				n = MIN(n, room);
			}
		}
		r = fcgi_rd_next(&fc->rd, b->area + b->head, n, &used, &pc);
		b->head += (uint32_t)used;
		b->data -= (uint32_t)used;
		if (r < 0) {
			why = fc->rd.err;
			break;
		}
		if (r == 0)
			continue;
		if (fc_piece(fc, &pc, &why) < 0)
			break;
	}
	if (b && !b->data) {
		buf_put(b);
		fc->ibuf = NULL;
	}
	if (why) {
		fc_log(fc, "protocol error: %s (type %u, request %u): connection closed", why,
		       fc->rd.type, fc->rd.id);
		return -1;
	}
	return 0;
}

/* Reads what came. Returns 0, or -1 when the connection is to close. */
static int fc_read(struct fcgi_conn *fc)
{
	while ((fc->c.flags & CO_F_RD_READY) && !(fc->flags & FC_F_EOF)) {
		struct buf *b = fc->ibuf;
		ssize_t n;

		if (!b && !(b = fc->ibuf = buf_get()))
			return 0;   /* no memory now: retried at the next event */
		if (b->head) {
			memmove(b->area, b->area + b->head, b->data);
			b->head = 0;
		}
		if (b->data == buf_size())
			break;   /* full: the requests read first */
#ifdef USE_OPENSSL
		if (fc->c.ssl)
			n = ssl_sock_recv(&fc->c, b->area + b->data, buf_size() - b->data);
		else
#endif
		{
			n = recv(fc->c.fd, b->area + b->data, buf_size() - b->data, 0);
			if (n < 0)
				n = -errno;
		}
		if (n == -EAGAIN || n == -EINTR) {
			if (n == -EAGAIN)
				fc->c.flags &= ~CO_F_RD_READY;
			break;
		}
		if (n <= 0) {
			fc->flags |= FC_F_EOF;
			break;
		}
		fc->c.last_act = tick_ev_now();
		b->data += (uint32_t)n;
		if (fc_parse(fc) < 0)
			return -1;
	}
	if (fc_parse(fc) < 0)
		return -1;
	if ((fc->flags & FC_F_EOF) && !fc->ibuf) {
		if (!fcgi_rd_idle(&fc->rd))
			fc_log(fc, "the application closed the connection in the middle of a "
			       "record (type %u, request %u)", fc->rd.type, fc->rd.id);
		return -1;
	}
	return 0;
}

/* Sends queued records. Returns 0 (all sent, or the socket is full) or -1. */
int fc_flush(struct fcgi_conn *fc)
{
	size_t before = fc->out.len;

	while (fc->out.len) {
		ssize_t n;

#ifdef USE_OPENSSL
		if (fc->c.ssl)
			n = ssl_sock_send(&fc->c, fc->out.p, fc->out.len);
		else
#endif
		{
			n = send(fc->c.fd, fc->out.p, fc->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0)
				n = -errno;
		}
		if (n == -EAGAIN || n == -EINTR)
			break;
		if (n < 0)
			return -1;
		fc->c.last_act = tick_ev_now();
		dstr_consume(&fc->out, (size_t)n);
	}
	if (!fc->out.len)
		dstr_free(&fc->out);
	if (before >= global.bufsize && fc_out_room(fc)) {
		/* room again for the requests that found none */
		for (struct fcgi_strm *fs = fc->streams; fs; fs = fs->next)
			if (fs->flags & FS_F_BLOCKED_W) {
				fs->flags &= ~FS_F_BLOCKED_W;
				fs_wake(fs, EV_WRITE);
			}
	}
	if (fc->out.len && !(fc->c.events & EV_WRITE))
		conn_want(&fc->c, fc->c.events | EV_WRITE);
	return 0;
}

/* ---- connection life ---- */

static struct fcgi_conn **fc_list(struct fcgi_conn *fc)
{
	return (struct fcgi_conn **)&fc->srv->fcgi_conns;
}

void fc_close(struct fcgi_conn *fc)
{
	struct fcgi_strm *fs, *next;

	if (fc->flags & FC_F_DYING)
		return;
	fc->flags |= FC_F_DYING;
	for (fs = fc->streams; fs; fs = next) {
		next = fs->next;
		if (!fs->s) {
			fs->fc = fc;   /* (unlinks it) */
			fs_free(fs);
			continue;
		}
		/* the stream reads what came, then learns the loss */
		fs->prev = fs->next = NULL;
		fs->fc = NULL;
		if (!(fs->flags & FS_F_ENDED))
			fs->flags |= FS_F_ABORTED;
		fs->s->srv.ssl = NULL;   /* the TLS session goes with the socket */
		fs_wake(fs, EV_READ | EV_WRITE);
	}
	fc->streams = NULL;
	ev_timer_stop(global.loop, &fc->timer);
	ev_clear_pending(global.loop, &fc->c.io);
	conn_close(&fc->c);
	buf_put(fc->ibuf);
	dstr_free(&fc->out);
	dstr_free(&fc->rec);
	if (fc->prev)
		fc->prev->next = fc->next;
	else
		*fc_list(fc) = fc->next;
	if (fc->next)
		fc->next->prev = fc->prev;
	free(fc);
}

/* When the connection's own timer is due: idle past pool-purge-delay, or
 * records the application does not take, or abandoned requests it does not
 * end, past timeout server. 0: none. */
static ev_tstamp fc_deadline(const struct fcgi_conn *fc)
{
	uint32_t t;

	if (!fc->nstreams)
		return MAX(fc->t_idle, fc->c.last_act) + tick_to_ev(fc->srv->pool_purge_delay);
	if (!fc->out.len && fc->nattached)
		return 0;   /* the streams' timeouts watch their requests */
	t = fc->be->timeout.server;
	return t ? fc->c.last_act + tick_to_ev(t) : 0;
}

/* Events, timer, or the close of a connection with nothing more to do. */
void fc_update(struct fcgi_conn *fc)
{
	ev_tstamp d;
	int ev = 0;

	if (!fc->nstreams &&
	    ((fc->flags & (FC_F_CLOSING | FC_F_PRIVATE | FC_F_EOF)) || !(fc->flags & FC_F_KEEP) ||
	     (global.flags & GLB_F_STOPPING))) {
		fc_close(fc);
		return;
	}
	if (!(fc->flags & FC_F_EOF) && (!fc->ibuf || fc->ibuf->data < buf_size()))
		ev |= EV_READ;
	if (fc->out.len)
		ev |= EV_WRITE;
	if (fc->c.ssl) {
		if (fc->c.flags & CO_F_SSL_RD_WANT_W)
			ev |= EV_WRITE;
		if (fc->c.flags & CO_F_SSL_WR_WANT_R)
			ev |= EV_READ;
	}
	conn_want(&fc->c, ev);
	d = fc_deadline(fc);
	if (!d) {
		ev_timer_stop(global.loop, &fc->timer);
		fc->armed = 0;
	} else if (!fc->armed || d < fc->armed || !ev_is_active(&fc->timer)) {
		ev_timer_stop(global.loop, &fc->timer);
		ev_timer_set(&fc->timer, MAX(d - tick_ev_now(), 0.0), 0.);
		ev_timer_start(global.loop, &fc->timer);
		fc->armed = d;
	}
}

static void fc_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct fcgi_conn *fc = w->data;

	if (revents & EV_READ)
		fc->c.flags |= CO_F_RD_READY;
	if ((fc->c.flags & CO_F_SSL_RD_WANT_W) && (revents & EV_WRITE))
		fc->c.flags |= CO_F_RD_READY;
	if ((revents & EV_WRITE) && fc->out.len && fc_flush(fc) < 0) {
		fc_close(fc);
		return;
	}
	if (fc_read(fc) < 0) {
		fc_close(fc);
		return;
	}
	fc_update(fc);
}

static void fc_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct fcgi_conn *fc = container_of(w, struct fcgi_conn, timer);
	ev_tstamp d = fc_deadline(fc);

	fc->armed = 0;
	if (d && d > tick_ev_now() + 0.0005) {
		fc_update(fc);
		return;
	}
	if (d && fc->nstreams)
		fc_log(fc, "the application took no record for too long: connection closed");
	fc_close(fc);
}

/* ---- to servers ---- */

/* Whether <fc> may carry one more request. */
static int fc_room(const struct fcgi_conn *fc)
{
	return (fc->flags & FC_F_KEEP) &&
	       !(fc->flags & (FC_F_CLOSING | FC_F_PRIVATE | FC_F_EOF | FC_F_DYING)) &&
	       fc->nstreams < ((fc->flags & FC_F_MPXS) ? fc->max_reqs : 1);
}

/* Attaches <s> as a new request of <fc>. Returns 0 or -1. */
static int fc_attach(struct fcgi_conn *fc, struct stream *s)
{
	struct fcgi_strm *fs = fs_new(fc, s);

	if (!fs)
		return -1;
	stream_attach_srv_mux(s, &fc->c, &fs_ops, fs);
	fc_update(fc);
	return 0;
}

int fcgi_back_attach(struct stream *s, int reuse)
{
	struct server *srv = s->ss.target;
	int later = s->nreq > 1 || (s->tcp_flags & STRM_F_MUX_LATER);

	if (reuse == HTTP_REUSE_NEVER)
		return -1;
	for (struct fcgi_conn *fc = srv->fcgi_conns; fc; fc = fc->next) {
		int ok = 0;

		if (!fc_room(fc))
			continue;
		if (!fc->nstreams) {
			/* idle: as the idle pool's rules (srv_idle_get()) */
			ok = reuse == HTTP_REUSE_ALWAYS || later ||
			     (reuse == HTTP_REUSE_AGGRESSIVE && (fc->flags & FC_F_REUSED));
		} else if (reuse == HTTP_REUSE_ALWAYS) {
			ok = 1;
		} else {
			/* busy: kept for the streams of one client connection */
			for (struct fcgi_strm *fs = fc->streams; fs && !ok; fs = fs->next)
				ok = fs->s && fs->s->cli.fd == s->cli.fd;
		}
		if (ok)
			return fc_attach(fc, s);
	}
	return -1;
}

int fcgi_back_take_over(struct stream *s, int private)
{
	const struct fcgi_app *app = s->be->fcgi_app;
	struct fcgi_conn *fc, **l;
	struct ssl_st *ssl;
	unsigned tcp = s->srv.flags & CO_F_TCP;
	int fd;

	if (!app) {
		/* a server added at run time with "proto fcgi" to a backend
		 * without an application */
		log_event_px(&s->be->loggers, LOG_L_WARNING, "backend %s: server %s: 'proto fcgi' "
			     "but the backend has no fcgi-app", s->be->name, s->ss.target->name);
		return -1;
	}
	fc = calloc(1, sizeof(*fc));
	if (!fc)
		return -1;
	fc->srv = s->ss.target;
	fc->be = s->be;
	fc->app = app;
	if (app->options & FCGI_O_KEEP_CONN)
		fc->flags |= FC_F_KEEP;
	if (app->options & FCGI_O_MPXS_CONNS)
		fc->flags |= FC_F_MPXS;
	fc->max_reqs = (fc->flags & FC_F_MPXS) ? MIN(app->max_reqs, 65535) : 1;
	if (private)
		fc->flags |= FC_F_PRIVATE;
	fd = stream_detach_srv(s, &ssl);
	conn_io_hand_off(&s->srv.io);
	fc->c.fd = fd;
	fc->c.ssl = ssl;
	fc->c.flags = CO_F_CONNECTED | tcp | CO_F_RD_READY;
	conn_io_take_over(&fc->c.io, fc_io_cb, fd);
	fc->c.io.data = fc;
	fc->c.last_act = fc->t_idle = tick_ev_now();
	ev_init(&fc->timer, fc_timer_cb);
	l = fc_list(fc);
	fc->next = *l;
	if (*l)
		(*l)->prev = fc;
	*l = fc;
	if (app->options & FCGI_O_GET_VALUES) {
		/* asked first; the first request goes right behind, alone on
		 * the connection until the answer says more may */
		char nv[64];
		size_t k = fcgi_nv_put(nv, "FCGI_MAX_REQS", 13, NULL, 0);

		k += fcgi_nv_put(nv + k, "FCGI_MPXS_CONNS", 15, NULL, 0);
		if (fcgi_rec_add(&fc->out, FCGI_GET_VALUES, 0, nv, k) < 0) {
			fc_close(fc);
			return -1;
		}
	}
	if (fc_attach(fc, s) < 0) {
		fc_close(fc);   /* the socket is the connection's now: the stream retries */
		return -1;
	}
	return 0;
}

void fcgi_close_idle(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			struct fcgi_conn *fc = srv->fcgi_conns, *next;

			for (; fc; fc = next) {
				next = fc->next;
				if (!fc->nattached)
					fc_close(fc);
			}
		}
}

void fcgi_conn_foreach(void (*fn)(const struct conn *c, const struct proxy *px,
                                  const struct server *srv, int nreqs, int timer_on, void *arg),
                       void *arg)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			for (struct fcgi_conn *fc = srv->fcgi_conns; fc; fc = fc->next)
				fn(&fc->c, px, srv, fc->nstreams, ev_is_active(&fc->timer), arg);
}

/* A server's address changed: its connections finish their requests and
 * take no new one (they go to the old address); the idle ones close. */
static void fcgi_srv_addr_changed(struct server *srv)
{
	struct fcgi_conn *fc = srv->fcgi_conns, *next;

	for (; fc; fc = next) {
		next = fc->next;
		fc->flags |= FC_F_CLOSING;
		fc_update(fc);
	}
}

SLUICE_INIT(fcgi_register)
{
	srv_idle_register_closer(fcgi_close_idle);
	server_on_addr_change(fcgi_srv_addr_changed);
}
