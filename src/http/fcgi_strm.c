/* The requests of the FastCGI mux (fcgi_int.h), each one a CO_F_MUX
 * endpoint (conn.h) of a sluice stream. The HTTP/1 request the stream
 * writes becomes BEGIN_REQUEST, PARAMS (fcgi_app.c builds them) and STDIN
 * records; a chunked body is gathered first, so that CONTENT_LENGTH is
 * known (HAProxy's manual, 10.2), and answered 413 here when it does not fit
 * a buffer. What the application writes on STDOUT, a CGI response, is read
 * by the stream as an HTTP/1.1 response: the Status field (or a Location
 * alone: 302) makes the status line, the body is framed by its
 * Content-Length, by one made here when the whole response came with its
 * head, by chunks, or by the close for an HTTP/1.0 request, and a Date is
 * added when the application gave none (as HAProxy does). An invalid head
 * fails the request as a server's that closed (502). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sluice/buf.h>
#include <sluice/common.h>
#include <sluice/fcgi_app.h>
#include <sluice/fcgi_rec.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_reply.h>
#include <sluice/pool.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

#include "fcgi_int.h"

static struct {
	struct pool   *pool;      /* of struct fcgi_strm */
	struct h1_hdr *hdrs;
	int            maxhdr;
	struct dstr    params;
	struct dstr    fields;    /* a response's fields, translated */
	char           date[40];
	time_t         date_t;
} fx;

static const char *fx_date(void)
{
	time_t now = time(NULL);
	struct tm tm;

	if (now != fx.date_t && gmtime_r(&now, &tm)) {
		strftime(fx.date, sizeof(fx.date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		fx.date_t = now;
	}
	return fx.date;
}

/* The endpoint of <fs>'s stream is its server side. */
void fs_wake(struct fcgi_strm *fs, int ev)
{
	if (fs->s && (fs->s->srv.events & ev))
		ev_feed_event(global.loop, &fs->s->srv.io, fs->s->srv.events & ev);
}

/* ---- requests' life ---- */

struct fcgi_strm *fs_new(struct fcgi_conn *fc, struct stream *s)
{
	struct fcgi_strm *fs;

	if (!fx.pool)
		fx.pool = pool_create("fcgi_strm", sizeof(*fs));
	fs = pool_alloc(fx.pool);
	if (!fs)
		return NULL;
	memset(fs, 0, sizeof(*fs));
	fs->fc = fc;
	fs->s = s;
	fs->next = fc->streams;
	if (fc->streams)
		fc->streams->prev = fs;
	fc->streams = fs;
	fc->nstreams++;
	fc->nattached++;
	if (++fc->nreq > 1)
		fc->flags |= FC_F_REUSED;
	return fs;
}

static void fs_unlink(struct fcgi_strm *fs)
{
	struct fcgi_conn *fc = fs->fc;

	if (fs->prev)
		fs->prev->next = fs->next;
	else
		fc->streams = fs->next;
	if (fs->next)
		fs->next->prev = fs->prev;
	fs->prev = fs->next = NULL;
	fc->nstreams--;
	if (fc->blocked == fs) {
		fc->blocked = NULL;
		fc->flags &= ~FC_F_BLOCKED;
		ev_feed_event(global.loop, &fc->c.io, EV_CUSTOM);
	}
	if (!fc->nstreams)
		fc->t_idle = tick_ev_now();
}

void fs_free(struct fcgi_strm *fs)
{
	if (fs->fc)
		fs_unlink(fs);
	dstr_free(&fs->head);
	dstr_free(&fs->body);
	dstr_free(&fs->hout);
	buf_put(fs->sbuf);
	pool_free(fx.pool, fs);
}

/* Answers <fs>'s stream from here, as a CGI response the application could
 * have sent: <status> with a line of text. Only before any STDOUT. */
void fs_answer(struct fcgi_strm *fs, int status, const char *why)
{
	if (!fs->sbuf && !(fs->sbuf = buf_get()))
		return;   /* no memory: the stream fails instead (no head comes) */
	fs->sbuf->head = 0;
	fs->sbuf->data = (uint32_t)snprintf(fs->sbuf->area, buf_size(),
					    "Status: %d %s\r\nContent-Type: text/plain\r\n\r\n%s\n",
					    status, http_reason(status), why);
	fs->flags |= FS_F_OUT_END | FS_F_ENDED;
	fs_wake(fs, EV_READ);
}

/* ---- the request: HTTP/1 to records ---- */

/* BEGIN_REQUEST and PARAMS (CONTENT_LENGTH <clen>) for the head <b>
 * parsed into <m>. Returns 0, 1 when answered here (too large), or -1. */
static int fs_begin(struct fcgi_strm *fs, const char *b, const struct h1_msg *m, uint64_t clen)
{
	struct fcgi_conn *fc = fs->fc;
	struct stream *s = fs->s;
	struct fcgi_req_src src = {
		.cli = &s->cli_addr, .dst = stream_dst(s), .https = s->cli.ssl != NULL,
		.ft = s->txn ? s->txn->fcgi : NULL,
	};
	char begin[8] = { 0, FCGI_RESPONDER, 0 };
	uint16_t id = 1;

	fx.params.len = 0;
	if (fcgi_params_build(&fx.params, fc->app, &src, b, m, clen) < 0)
		return -1;
	if (fx.params.len > global.bufsize) {
		/* HAProxy's limit too: the parameters fit a buffer */
		fc_log(fc, "the parameters of a request take %zu bytes, more than a buffer (%u): "
		       "answered 500", fx.params.len, global.bufsize);
		fs->rq = FS_RQ_DROP;
		fs_answer(fs, 500, "FastCGI parameters too large");
		return 1;
	}
	while (fc_find(fc, id))
		id++;
	fs->id = id;
	fs->flags |= FS_F_BEGUN;
	begin[2] = (fc->flags & FC_F_KEEP) ? FCGI_KEEP_CONN : 0;
	if (fcgi_rec_add(&fc->out, FCGI_BEGIN_REQUEST, id, begin, sizeof(begin)) < 0 ||
	    fcgi_rec_add(&fc->out, FCGI_PARAMS, id, fx.params.p, fx.params.len) < 0 ||
	    fcgi_rec_add(&fc->out, FCGI_PARAMS, id, NULL, 0) < 0)
		return -1;
	return 0;
}

/* The head of <n> bytes at <p> is complete (parsed into <m>): its records
 * go out unless a chunked body must be gathered first. Returns 0 or -1. */
static int fs_head_done(struct fcgi_strm *fs, const char *p, struct h1_msg *m)
{
	int r;

	if (m->flags & H1_F_VER_11)
		fs->flags |= FS_F_VER11;
	if (m->meth_id == H1_M_HEAD)
		fs->flags |= FS_F_HEAD_REQ;
	if (m->meth_id == H1_M_CONNECT)
		return -1;   /* no tunnel through FastCGI */
	/* an application never says "100 Continue": it is said here, so that
	 * the client sends the body the application waits for (as HAProxy) */
	if ((m->flags & H1_F_EXPECT_100) &&
	    dstr_add(&fs->hout, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
		return -1;
	if (m->flags & H1_F_CHUNKED) {
		/* CONTENT_LENGTH must be known (HAProxy's manual, 10.2): the
		 * body is gathered, and the head is kept for then */
		fs->rq = FS_RQ_CK_SIZE;
		if (fs->head.p != p) {
			fs->head.len = 0;
			if (dstr_add(&fs->head, p, m->head_len) < 0)
				return -1;
		}
		return 0;
	}
	r = fs_begin(fs, p, m, (m->flags & H1_F_CLEN) ? m->clen : 0);
	if (r)
		return r < 0 ? -1 : 0;
	if ((m->flags & H1_F_CLEN) && m->clen) {
		fs->rq = FS_RQ_CLEN;
		fs->left = m->clen;
		return 0;
	}
	fs->rq = FS_RQ_DONE;
	return fcgi_rec_add(&fs->fc->out, FCGI_STDIN, fs->id, NULL, 0);
}

static int fs_hdrs_reserve(void)
{
	if (fx.maxhdr < global.maxhdr + 1) {
		free(fx.hdrs);
		fx.maxhdr = global.maxhdr + 1;
		fx.hdrs = calloc((size_t)fx.maxhdr, sizeof(*fx.hdrs));
		if (!fx.hdrs) {
			fx.maxhdr = 0;
			return -1;
		}
	}
	return 0;
}

/* Takes head bytes from <p> (<n>). Returns how many belong to the head,
 * 0 when there is no room for its records yet, or -1. */
static ssize_t fs_take_head(struct fcgi_strm *fs, const char *p, size_t n)
{
	struct h1_msg m;
	size_t had = fs->head.len;
	int r;

	if (fs_hdrs_reserve() < 0 || !fc_out_room(fs->fc))
		return fs_hdrs_reserve() < 0 ? -1 : 0;
	if (!had) {
		/* the usual case, a whole head in one write: read where it is */
		h1_msg_init(&m, fx.hdrs, fx.maxhdr, 0, H1_M_OTHER);
		r = h1_parse((char *)p, MIN(n, (size_t)global.bufsize), global.bufsize, &m);
		if (r < 0)
			return -1;
		if (r > 0)
			return fs_head_done(fs, p, &m) < 0 ? -1 : r;
	}
	if (had + n > global.bufsize || dstr_add(&fs->head, p, n) < 0)
		return -1;
	h1_msg_init(&m, fx.hdrs, fx.maxhdr, 0, H1_M_OTHER);
	r = h1_parse(fs->head.p, fs->head.len, global.bufsize, &m);
	if (r < 0)
		return -1;
	if (r == 0)
		return (ssize_t)n;
	if (fs_head_done(fs, fs->head.p, &m) < 0)
		return -1;
	if (fs->rq != FS_RQ_CK_SIZE)
		dstr_free(&fs->head);
	else
		fs->head.len = (size_t)r;
	return (ssize_t)r - (ssize_t)had;
}

/* Content-Length body bytes: STDIN records, as the output queue takes
 * them. Returns the bytes taken, or -1. */
static ssize_t fs_take_clen(struct fcgi_strm *fs, const char *p, size_t n)
{
	size_t k = MIN(MIN((uint64_t)n, fs->left), (uint64_t)fc_out_room(fs->fc));

	if (!k)
		return 0;
	if (fcgi_rec_add(&fs->fc->out, FCGI_STDIN, fs->id, p, k) < 0)
		return -1;
	fs->left -= k;
	if (!fs->left) {
		fs->rq = FS_RQ_DONE;
		if (fcgi_rec_add(&fs->fc->out, FCGI_STDIN, fs->id, NULL, 0) < 0)
			return -1;
	}
	return (ssize_t)k;
}

/* The chunked body ended: its records go out with its length. */
static int fs_chunked_done(struct fcgi_strm *fs)
{
	struct h1_msg m;
	int r;

	if (fs_hdrs_reserve() < 0)
		return -1;
	h1_msg_init(&m, fx.hdrs, fx.maxhdr, 0, H1_M_OTHER);
	if (h1_parse(fs->head.p, fs->head.len, global.bufsize, &m) <= 0)
		return -1;
	r = fs_begin(fs, fs->head.p, &m, fs->body.len);
	dstr_free(&fs->head);
	if (r)
		return r < 0 ? -1 : 0;
	fs->rq = FS_RQ_DONE;
	if ((fs->body.len && fcgi_rec_add(&fs->fc->out, FCGI_STDIN, fs->id, fs->body.p, fs->body.len) < 0) ||
	    fcgi_rec_add(&fs->fc->out, FCGI_STDIN, fs->id, NULL, 0) < 0)
		return -1;
	dstr_free(&fs->body);
	return 0;
}

/* Follows a chunked request body at <p> (<n> bytes), gathering its data
 * (the stream checked its framing already). Returns the bytes taken, or
 * -1. A body larger than a buffer is answered 413 here. */
static ssize_t fs_take_chunked(struct fcgi_strm *fs, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && fs->rq != FS_RQ_DONE && fs->rq != FS_RQ_DROP) {
		char c = p[i];

		switch (fs->rq) {
		case FS_RQ_CK_SIZE: {
			int d = str_hex_digit(c);

			if (d >= 0) {
				if (++fs->ck_digits > H1_CHUNK_DIGITS_MAX)
					return -1;
				fs->left = fs->left * 16 + (uint64_t)d;
				i++;
				break;
			}
			if (!fs->ck_digits)
				return -1;
			fs->rq = FS_RQ_CK_EXT;
			break;
		}
		case FS_RQ_CK_EXT:
			i++;
			if (c != '\n')
				break;
			fs->ck_digits = 0;
			fs->rq = fs->left ? FS_RQ_CK_DATA : FS_RQ_CK_TRL;
			break;
		case FS_RQ_CK_DATA: {
			size_t k = MIN((uint64_t)(n - i), fs->left);

			if (fs->body.len + k > global.bufsize) {
				fc_log(fs->fc, "a chunked request body is larger than a buffer (%u "
				       "bytes): answered 413, its length cannot be announced",
				       global.bufsize);
				fs->rq = FS_RQ_DROP;
				fs_answer(fs, 413, "Request body too large for its length to be known");
				return (ssize_t)n;
			}
			if (dstr_add(&fs->body, p + i, k) < 0)
				return -1;
			i += k;
			fs->left -= k;
			if (!fs->left)
				fs->rq = FS_RQ_CK_CRLF;
			break;
		}
		case FS_RQ_CK_CRLF:
			i++;
			if (c == '\n')
				fs->rq = FS_RQ_CK_SIZE;
			else if (c != '\r')
				return -1;
			break;
		case FS_RQ_CK_TRL:
			/* trailer lines, dropped; ck_digits counts the line's bytes */
			i++;
			if (c != '\n') {
				fs->ck_digits++;
				break;
			}
			if (fs->ck_digits <= 1) {   /* an empty line (CRLF or LF) */
				fs->ck_digits = 0;
				if (fs_chunked_done(fs) < 0)
					return -1;
			}
			fs->ck_digits = 0;
			break;
		default:
			return -1;
		}
	}
	if (fs->rq == FS_RQ_DROP)
		return (ssize_t)n;
	return (ssize_t)i;
}

static ssize_t fs_send(void *ctx, const char *p, size_t n)
{
	struct fcgi_strm *fs = ctx;
	struct fcgi_conn *fc = fs->fc;
	size_t used = 0;

	if (!fc || (fs->flags & FS_F_ABORTED))
		return -ECONNRESET;
	while (used < n) {
		ssize_t k;

		switch (fs->rq) {
		case FS_RQ_HEAD:
			k = fs_take_head(fs, p + used, n - used);
			break;
		case FS_RQ_CLEN:
			k = fs_take_clen(fs, p + used, n - used);
			break;
		case FS_RQ_DROP:
			k = (ssize_t)(n - used);
			break;
		case FS_RQ_DONE:
			k = -1;   /* bytes after the end of the request */
			break;
		default:
			k = fs_take_chunked(fs, p + used, n - used);
			break;
		}
		if (k < 0) {
			fc_log(fc, "a request could not be turned into records: request aborted");
			return -EPROTO;
		}
		if (!k)
			break;
		used += (size_t)k;
	}
	if (fc->out.len && fc_flush(fc) < 0) {
		fc_close(fc);   /* (<fs> is orphaned: told -ECONNRESET from now on) */
		return -ECONNRESET;
	}
	if (used < n)
		fs->flags |= FS_F_BLOCKED_W;
	return used ? (ssize_t)used : -EAGAIN;
}

static void fs_shutw(void *ctx)
{
	/* the request's own framing says where it ends */
}

/* ---- the response: CGI to HTTP/1 ---- */

/* Whether <s> is a valid reason phrase. */
static int fs_reason_ok(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 ? s[i] != '\t' : s[i] == 0x7f)
			return 0;
	return 1;
}

/* Fields of a CGI response that are the connection's, not the message's:
 * the HTTP/1 framing and connection management are made here. */
static int fs_hop_field(const char *n, size_t nl)
{
	static const char *const names[] = {
		"transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade",
		"te", "trailer",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (nl == strlen(names[i]) && !strncasecmp(n, names[i], nl))
			return 1;
	return 0;
}

/* The CGI head at the start of fs->sbuf (<hlen> bytes with its empty line)
 * becomes the HTTP/1.1 head in fs->hout and the framing is chosen. Returns
 * 0, or -1 with <why> when the head is invalid (<why> NULL: no memory). */
static int fs_make_head(struct fcgi_strm *fs, size_t hlen, const char **why)
{
	const char *p = fs->sbuf->area + fs->sbuf->head, *end = p + hlen;
	const char *reason = NULL;
	size_t rlen = 0;
	int status = 0, loc = 0, date = 0, complete = fs->flags & (FS_F_OUT_END | FS_F_ENDED);
	uint64_t clen = UINT64_MAX;
	struct dstr *f = &fx.fields;

	f->len = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *le, *colon, *v, *ve;
		size_t nl;

		le = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
		if (le == p)
			break;   /* the empty line */
		colon = memchr(p, ':', (size_t)(le - p));
		if (!colon || !h1_is_token(p, (size_t)(colon - p))) {
			*why = "a header line is not a field";
			return -1;
		}
		nl = (size_t)(colon - p);
		for (v = colon + 1; v < le && (*v == ' ' || *v == '\t'); v++)
			;
		for (ve = le; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		if (!fs_reason_ok(v, (size_t)(ve - v))) {
			*why = "a field value holds a control character";
			return -1;
		}
		if (nl == 6 && !strncasecmp(p, "status", 6)) {
			/* "Status: NNN [reason]", a final status */
			if (status || ve - v < 3 || v[0] < '2' || v[0] > '5' || v[1] < '0' ||
			    v[1] > '9' || v[2] < '0' || v[2] > '9' || (ve - v > 3 && v[3] != ' ')) {
				*why = "invalid Status field";
				return -1;
			}
			status = (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
			reason = ve - v > 4 ? v + 4 : NULL;
			rlen = reason ? (size_t)(ve - reason) : 0;
			p = eol + 1;
			continue;
		}
		if (nl == 14 && !strncasecmp(p, "content-length", 14)) {
			uint64_t c = 0;

			for (const char *q = v; q < ve; q++) {
				if (*q < '0' || *q > '9' || c > H1_CLEN_MAX / 10) {
					*why = "invalid Content-Length";
					return -1;
				}
				c = c * 10 + (uint64_t)(*q - '0');
			}
			if (v == ve || (clen != UINT64_MAX && clen != c)) {
				*why = v == ve ? "invalid Content-Length" : "two different Content-Length";
				return -1;
			}
			if (clen == c) {
				p = eol + 1;
				continue;   /* said once already */
			}
			clen = c;
		}
		if (!fs_hop_field(p, nl)) {
			loc |= nl == 8 && !strncasecmp(p, "location", 8);
			date |= nl == 4 && !strncasecmp(p, "date", 4);
			if (dstr_add(f, p, nl) < 0 || dstr_add(f, ": ", 2) < 0 ||
			    dstr_add(f, v, (size_t)(ve - v)) < 0 || dstr_add(f, "\r\n", 2) < 0)
				return -1;
		}
		p = eol + 1;
	}
	if (!status)
		status = loc ? 302 : 200;   /* RFC 3875 6.3.3: a client redirect */
	if (!reason) {
		reason = http_reason(status);
		rlen = strlen(reason);
	}
	fs->hout.len = fs->hout_off = 0;
	if (dstr_printf(&fs->hout, "HTTP/1.1 %03d %.*s\r\n", status, (int)rlen, reason) < 0 ||
	    dstr_add(&fs->hout, f->p, f->len) < 0 ||
	    (!date && dstr_printf(&fs->hout, "date: %s\r\n", fx_date()) < 0))
		return -1;
	if ((fs->flags & FS_F_HEAD_REQ) || status == 204 || status == 304) {
		fs->rs = FS_RS_NOBODY;
	} else if (clen != UINT64_MAX) {
		fs->rs = FS_RS_CLEN;
		fs->rleft = clen;
	} else if (complete) {
		/* the whole body is here: its length is known */
		fs->rs = FS_RS_CLEN;
		fs->rleft = fs->sbuf->data - hlen;
		if (dstr_printf(&fs->hout, "content-length: %llu\r\n",
				(unsigned long long)fs->rleft) < 0)
			return -1;
	} else if (fs->flags & FS_F_VER11) {
		fs->rs = FS_RS_CHUNKED;
		fs->rleft = 0;
		if (dstr_add(&fs->hout, "transfer-encoding: chunked\r\n", 28) < 0)
			return -1;
	} else {
		fs->rs = FS_RS_CLOSE;
	}
	return dstr_add(&fs->hout, "\r\n", 2);
}

/* Where the CGI head ends in fs->sbuf (after its empty line), 0: not yet. */
static size_t fs_head_end(const struct fcgi_strm *fs)
{
	const char *p = fs->sbuf->area + fs->sbuf->head;
	size_t len = fs->sbuf->data, i = 0;

	while (i < len) {
		const char *eol = memchr(p + i, '\n', len - i);
		size_t ll;

		if (!eol)
			return 0;
		ll = (size_t)(eol - (p + i));
		if (!ll || (ll == 1 && p[i] == '\r'))
			return (size_t)(eol - p) + 1;
		i = (size_t)(eol - p) + 1;
	}
	return 0;
}

/* The CGI head is translated once complete. Returns 1 when it was (or
 * already is), 0 while it is not complete, -1 when the response is bad. */
static int fs_head(struct fcgi_strm *fs)
{
	const char *why = NULL;
	size_t hlen;

	if (fs->rs != FS_RS_HEAD)
		return 1;
	hlen = fs->sbuf ? fs_head_end(fs) : 0;
	if (!hlen) {
		if (!(fs->flags & (FS_F_OUT_END | FS_F_ENDED | FS_F_ABORTED)) &&
		    (!fs->sbuf || fs->sbuf->data < global.bufsize - global.maxrewrite))
			return 0;
		why = fs->flags & FS_F_ABORTED ? NULL : fs->sbuf && fs->sbuf->data ?
		      "no end to the response head" : "no response";
	} else if (hlen > global.bufsize - global.maxrewrite) {
		why = "the response head is too large";
	} else if (fs_make_head(fs, hlen, &why) == 0) {
		fs->sbuf->head += (uint32_t)hlen;
		fs->sbuf->data -= (uint32_t)hlen;
		return 1;
	} else if (!why) {
		why = "no memory";
	}
	if (why && fs->fc)
		fc_log(fs->fc, "invalid response to request %u (application status %u): %s",
		       fs->id, fs->app_status, why);
	fs->flags |= FS_F_BAD;
	return -1;
}

/* Whether the input side of <fs> has room again: the connection's reading
 * may go on. */
static void fs_read_some(struct fcgi_strm *fs)
{
	struct fcgi_conn *fc = fs->fc;

	if (fs->sbuf && !fs->sbuf->data) {
		buf_put(fs->sbuf);
		fs->sbuf = NULL;
	}
	if (fc && fc->blocked == fs) {
		fc->blocked = NULL;
		fc->flags &= ~FC_F_BLOCKED;
		ev_feed_event(global.loop, &fc->c.io, EV_CUSTOM);
	}
}

/* Whether the stream can take something from fs_recv() now. */
static int fs_readable(struct fcgi_strm *fs)
{
	size_t data = fs->sbuf ? fs->sbuf->data : 0;
	int end = fs->flags & (FS_F_OUT_END | FS_F_ENDED | FS_F_ABORTED);

	if (fs->flags & FS_F_BAD)
		return 1;
	switch (fs->rs) {
	case FS_RS_HEAD:
		return end || fs->hout.len > fs->hout_off || (data && fs_head_end(fs)) ||
		       data >= global.bufsize - global.maxrewrite;
	case FS_RS_NOBODY:
	case FS_RS_DONE:
		return fs->hout.len > fs->hout_off;
	default:
		return fs->hout.len > fs->hout_off || data || end;
	}
}

/* The pending head or framing bytes to <p>. Returns how many. */
static size_t fs_take_hout(struct fcgi_strm *fs, char *p, size_t n)
{
	size_t k = MIN(n, fs->hout.len - fs->hout_off);

	memcpy(p, fs->hout.p + fs->hout_off, k);
	fs->hout_off += (uint32_t)k;
	if (fs->hout_off == fs->hout.len)
		fs->hout.len = fs->hout_off = 0;
	return k;
}

/* Up to <n> STDOUT body bytes to <p> (at most <max>). Returns how many. */
static size_t fs_take_body(struct fcgi_strm *fs, char *p, size_t n, uint64_t max)
{
	size_t k = fs->sbuf ? MIN(MIN(n, (size_t)fs->sbuf->data), max) : 0;

	if (k) {
		memcpy(p, fs->sbuf->area + fs->sbuf->head, k);
		fs->sbuf->head += (uint32_t)k;
		fs->sbuf->data -= (uint32_t)k;
	}
	return k;
}

/* The body as chunks: the size line and CRLF are made as the stream reads,
 * one piece at a time, so that any room takes something. */
static size_t fs_take_chunks(struct fcgi_strm *fs, char *p, size_t n, int end)
{
	size_t got = 0;

	while (got < n) {
		size_t data = fs->sbuf ? fs->sbuf->data : 0, k;

		if (fs->hout.len > fs->hout_off) {
			got += fs_take_hout(fs, p + got, n - got);
		} else if (fs->rs == FS_RS_DONE) {
			break;
		} else if (fs->rleft && data) {
			k = fs_take_body(fs, p + got, n - got, fs->rleft);
			got += k;
			fs->rleft -= k;
			if (!fs->rleft && dstr_add(&fs->hout, "\r\n", 2) < 0)
				break;
		} else if (data) {
			if (dstr_printf(&fs->hout, "%x\r\n", (unsigned)data) < 0)
				break;
			fs->rleft = data;
		} else if (end) {
			if (dstr_add(&fs->hout, "0\r\n\r\n", 5) < 0)
				break;
			fs->rs = FS_RS_DONE;
		} else {
			break;
		}
	}
	return got;
}

static ssize_t fs_recv(void *ctx, char *p, size_t n)
{
	struct fcgi_strm *fs = ctx;
	size_t got = 0;
	int end, r;

	if (fs->rs == FS_RS_HEAD && fs->hout.len > fs->hout_off)
		return (ssize_t)fs_take_hout(fs, p, n);   /* 100 Continue */
	r = fs_head(fs);
	if (r < 0)
		return fs->flags & FS_F_ABORTED ? -ECONNRESET : -EPROTO;
	if (!r)
		return -EAGAIN;
	end = (fs->flags & (FS_F_OUT_END | FS_F_ENDED)) != 0;
	switch (fs->rs) {
	case FS_RS_CHUNKED:
		got = fs_take_chunks(fs, p, n, end);
		break;
	case FS_RS_CLEN: {
		size_t k;

		if (fs->hout.len > fs->hout_off)
			got = fs_take_hout(fs, p, n);
		k = fs_take_body(fs, p + got, n - got, fs->rleft);
		got += k;
		fs->rleft -= k;
		if (!fs->rleft && fs->hout.len == fs->hout_off)
			fs->rs = FS_RS_DONE;
		else if (fs->rleft && !got && end && (!fs->sbuf || !fs->sbuf->data)) {
			if (fs->fc)
				fc_log(fs->fc, "request %u: the response is shorter than its "
				       "Content-Length", fs->id);
			fs->flags |= FS_F_ABORTED;
		}
		break;
	}
	default:
		if (fs->hout.len > fs->hout_off)
			got = fs_take_hout(fs, p, n);
		if (fs->rs == FS_RS_CLOSE)
			got += fs_take_body(fs, p + got, n - got, UINT64_MAX);
		break;
	}
	if ((fs->rs == FS_RS_DONE || fs->rs == FS_RS_NOBODY) && fs->sbuf && fs->sbuf->data) {
		/* beyond the response (its Content-Length, a HEAD's body) */
		if (fs->rs == FS_RS_DONE && !(fs->flags & FS_F_EXCESS) && fs->fc)
			fc_log(fs->fc, "request %u: the response is longer than its "
			       "Content-Length, the rest is dropped", fs->id);
		fs->flags |= fs->rs == FS_RS_DONE ? FS_F_EXCESS : 0;
		fs->sbuf->data = 0;
	}
	fs_read_some(fs);
	if (got)
		return (ssize_t)got;
	if (fs->rs == FS_RS_CLOSE && end)
		return 0;   /* the end of a body that ends with the close */
	if ((fs->flags & FS_F_ABORTED) && fs->rs != FS_RS_DONE && fs->rs != FS_RS_NOBODY)
		return -ECONNRESET;
	return -EAGAIN;
}

static void fs_want(void *ctx, int events)
{
	struct fcgi_strm *fs = ctx;

	if ((events & EV_READ) && fs_readable(fs))
		ev_feed_event(global.loop, &fs->s->srv.io, EV_READ);
	if ((events & EV_WRITE) &&
	    (!fs->fc || (fs->flags & FS_F_ABORTED) || fc_out_room(fs->fc)))
		ev_feed_event(global.loop, &fs->s->srv.io, EV_WRITE);
}

/* The stream lets go of its request. One whose response was read whole
 * waits for its END_REQUEST; an unfinished one is abandoned: an
 * ABORT_REQUEST when other requests share the connection (it stays until
 * its END_REQUEST), else the connection closes. */
static void fs_close(void *ctx)
{
	struct fcgi_strm *fs = ctx;
	struct fcgi_conn *fc = fs->fc;
	int done = fs->rq == FS_RQ_DONE && (fs->rs == FS_RS_DONE || fs->rs == FS_RS_NOBODY);

	fs->s = NULL;
	if (!fc) {
		fs_free(fs);
		return;
	}
	fc->nattached--;
	if ((fs->flags & FS_F_ENDED) || !(fs->flags & FS_F_BEGUN)) {
		fs_free(fs);
	} else if (done || ((fc->flags & FC_F_MPXS) && (fc->flags & FC_F_KEEP) && fc->nstreams > 1)) {
		buf_put(fs->sbuf);
		fs->sbuf = NULL;
		fs_read_some(fs);
		if (!done && (fcgi_rec_add(&fc->out, FCGI_ABORT_REQUEST, fs->id, NULL, 0) < 0 ||
			      fc_flush(fc) < 0)) {
			fc_close(fc);
			return;
		}
	} else {
		fs_free(fs);
		fc_close(fc);
		return;
	}
	fc_update(fc);
}

const struct conn_mux_ops fs_ops = {
	.recv  = fs_recv,
	.send  = fs_send,
	.shutw = fs_shutw,
	.want  = fs_want,
	.close = fs_close,
};
