/* HTTP messages on their way through (ana.c): the head made canonical
 * and given its forwarding fields, and the body granted to the channel by
 * its framing (Content-Length, chunked, close-delimited). */
#include <stdio.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/buf.h>
#include <sluice/channel.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/pipe.h>
#include <sluice/proxy.h>
#include <sluice/stream.h>

#include "ana_int.h"

/* The contracts of these functions are in ana_int.h. */

int http_head_normalize(struct http_head *h, const struct h1_msg *m, uint32_t hlen)
{
	if (m->flags & H1_F_CLEN) {
		int i = http_head_find(h, "content-length", 14, 0);

		if (i >= 0 && (http_head_find(h, "content-length", 14, i + 1) >= 0 ||
			       memchr(h->f[i].v.p, ',', h->f[i].v.len))) {
			char v[24];
			int n = snprintf(v, sizeof(v), "%llu", (unsigned long long)m->clen);

			if (http_head_set(h, "content-length", 14, v, (size_t)n) == -1)
				return -1;
		}
	}
	if (!(h->flags & HTTP_HEAD_F_CHANGED) && http_head_len(h) != hlen)
		h->flags |= HTTP_HEAD_F_CHANGED;
	return 0;
}

int http_add_fwd_headers(struct stream *s, struct http_head *h)
{
	const struct http_px *f = http_px_of(s->fe), *b = http_px_of(s->be);
	const struct http_px *p = f->fwdfor ? f : b->fwdfor ? b : NULL;
	char ip[64];

	if (p && !addr_in_net(&s->cli_addr, &p->fwdfor_except, p->fwdfor_except_bits) &&
	    (s->cli_addr.ss_family == AF_INET || s->cli_addr.ss_family == AF_INET6)) {
		const char *n = p->fwdfor_hdr ? p->fwdfor_hdr : "x-forwarded-for";

		if (!((p->fwdfor_flags & HTTP_FWD_IFNONE) && http_head_find(h, n, strlen(n), 0) >= 0)) {
			addr_ip_str(&s->cli_addr, ip, sizeof(ip));
			if (http_head_add(h, n, strlen(n), ip, strlen(ip)) == -1)
				return -1;
		}
	}
	p = f->origto ? f : b->origto ? b : NULL;
	if (p) {
		const struct sockaddr_storage *d = stream_dst(s);

		if (!addr_in_net(d, &p->origto_except, p->origto_except_bits) &&
		    (d->ss_family == AF_INET || d->ss_family == AF_INET6)) {
			const char *n = p->origto_hdr ? p->origto_hdr : "x-original-to";

			addr_ip_str(d, ip, sizeof(ip));
			if (http_head_add(h, n, strlen(n), ip, strlen(ip)) == -1)
				return -1;
		}
	}
	return 0;
}

int http_req_conn_hdr(struct stream *s, struct http_head *h, unsigned mflags)
{
	int close = !!(s->txn->flags & TX_F_SRV_CLOSE);

	if (mflags & H1_F_CONN_UPG)
		return 0;   /* an upgrade keeps its Connection field as it is */
	if (mflags & H1_F_VER_11) {
		if (close && !(mflags & H1_F_CONN_CLOSE))
			return http_head_set(h, "connection", 10, "close", 5);
		if (!close && (mflags & H1_F_CONN_CLOSE))
			http_head_del(h, "connection", 10);
	} else {
		if (!close && !(mflags & H1_F_CONN_KA))
			return http_head_set(h, "connection", 10, "keep-alive", 10);
		if (close && (mflags & H1_F_CONN_KA))
			http_head_del(h, "connection", 10);
	}
	return 0;
}

int http_grant(struct channel *ch, uint64_t n)
{
	/* CHN_INFINITE means "no limit": a sum reaching it would be one */
	if (ch->to_forward == CHN_INFINITE || n >= CHN_INFINITE - ch->to_forward)
		return -1;
	ch->to_forward += n;
	return 0;
}

int http_grant_body(struct channel *ch, const struct h1_msg *m, long hlen,
                    enum http_msg_state *st, struct h1_chunk *ck, int *chunked)
{
	uint64_t before = ch->to_forward;

	ch->reserve = 0;
	if (http_grant(ch, (uint64_t)hlen) == -1)
		goto refuse;
	if (m->flags & H1_F_NO_BODY) {
		*st = HTTP_MSG_DONE;
	} else if (m->flags & H1_F_CHUNKED) {
		int r;

		memset(ck, 0, sizeof(*ck));
		*chunked = 1;
		*st = HTTP_MSG_BODY;
		/* The chunks that came with the head are checked before the
		 * head leaves, so that bad framing is answered, not cut. */
		if ((r = http_chunked_step(ch, ck)) == -1)
			goto refuse;
		if (r == 1)
			*st = HTTP_MSG_DONE;
	} else if (m->flags & H1_F_CLEN) {
		if (http_grant(ch, m->clen) == -1)
			goto refuse;
		*st = HTTP_MSG_DONE;
	} else if (m->flags & H1_F_BODY_CLOSE) {
		ch->to_forward = CHN_INFINITE;
		*st = HTTP_MSG_BODY;
	} else {
		*st = HTTP_MSG_DONE;
	}
	return 0;
refuse:
	ch->to_forward = before;
	return -1;
}

int http_chunked_step(struct channel *ch, struct h1_chunk *ck)
{
	uint64_t in_pipe = ch->pipe ? ch->pipe->data : 0;
	struct buf *b = ch->buf;
	uint64_t granted = ch->to_forward - in_pipe;   /* buffered bytes already granted */
	const char *err;
	size_t used = 0;
	int r = 0;

	if (b && b->data > granted) {
		r = h1_chunk_scan(ck, b->area + b->head + granted, b->data - granted, &used, &err);
		if (r == -1 || http_grant(ch, used) == -1)
			return -1;
	}
	if (r == 0 && ck->state == H1_CK_DATA && ck->left) {
		if (http_grant(ch, ck->left) == -1)
			return -1;
		ck->left = 0;
		ck->state = H1_CK_DATA_CR;
	}
	return r;
}

int http_req_body_buffered(struct stream *s, size_t *len)
{
	const struct h1_msg *m = &s->txn->req;
	const struct buf *b = s->req.buf;
	struct h1_chunk ck = { 0 };
	const char *err;

	*len = 0;
	if (m->flags & H1_F_CHUNKED)
		return b->data && h1_chunk_scan(&ck, b->area + b->head, b->data, len, &err) == 1;
	if (m->flags & H1_F_CLEN) {
		*len = m->clen;
		return m->clen <= b->data;
	}
	return 0;
}

int http_body_waited(const struct channel *ch, const struct h1_msg *m, size_t hlen,
                     uint64_t at_least)
{
	const struct buf *b = ch->buf;
	struct h1_chunk ck = { 0 };
	const char *err;
	size_t used;

	if ((m->flags & H1_F_NO_BODY) || (ch->flags & CH_F_SHUTR) || !b ||
	    b->data + global.maxrewrite >= buf_size() || (at_least && b->data - hlen >= at_least))
		return 1;
	if (m->flags & H1_F_CHUNKED)
		return h1_chunk_scan(&ck, b->area + b->head + hlen, b->data - hlen, &used, &err) != 0;
	if (m->flags & H1_F_CLEN)
		return b->data - hlen >= m->clen;
	/* a response delimited by the close ends with it; a request has no body */
	return !(m->flags & H1_F_RESP);
}

int http_req_body_waited(struct stream *s, int hlen)
{
	return http_body_waited(&s->req, &s->txn->req, (size_t)hlen, 0);
}

void http_send_100(struct stream *s)
{
	static const char msg[] = "HTTP/1.1 100 Continue\r\n\r\n";
	struct channel *res = &s->res;

	s->txn->flags |= TX_F_SENT_100;
	/* The response channel carries the 100 now: a server connection kept
	 * from the previous request goes to the idle pool rather than have
	 * these bytes taken for its own (http_check_kept). */
	if (s->ss.st == SS_KEPT)
		http_pool_kept(s);
	chan_release(res);
	res->flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
	if (!(res->buf = buf_get()))
		return;   /* no buffer now: the client sends its body after its own wait */
	memcpy(res->buf->area, msg, sizeof(msg) - 1);
	res->buf->head = 0;
	res->buf->data = sizeof(msg) - 1;
	res->to_forward = sizeof(msg) - 1;
}

uint64_t http_chan_clear(struct channel *ch)
{
	struct buf *b = ch->buf;
	uint64_t keep = ch->to_forward;

	if (!b || !keep || keep > b->data || (ch->pipe && ch->pipe->data)) {
		chan_release(ch);
		return 0;
	}
	if (b->head) {
		memmove(b->area, b->area + b->head, (size_t)keep);
		b->head = 0;
	}
	b->data = (uint32_t)keep;
	return keep;
}
