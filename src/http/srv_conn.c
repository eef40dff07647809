/* mode http: the server side of an exchange (srv_side.h) as HTTP/1 sees
 * it: the server a request goes to (persistence, load-balancing hash), the
 * connection it uses (the one kept from the previous request, an idle one
 * the http-reuse policy allows, or a new one) and where a connection goes
 * when its exchange is over. */
#include <string.h>

#include <sluice/backend.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/buf.h>
#include <sluice/fcgi.h>
#include <sluice/h2.h>
#include <sluice/http_ana.h>
#include <sluice/http_rules.h>
#include <sluice/lb.h>
#include <sluice/persist.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/stream.h>

#include "ana_int.h"

/* No server side is busy with an exchange: none chosen, or only a
 * connection kept from the previous one. */
int http_srv_idle(const struct stream *s)
{
	return s->ss.st == SS_NONE || s->ss.st == SS_KEPT;
}

/* Connection <fd> (<ssl>) to <srv>, done with its exchange, goes to the
 * server's idle pool (its backend's http-reuse permitting; else closed). */
void http_pool_conn(struct server *srv, int fd, struct ssl_st *ssl, int reused)
{
	if (http_px_of(srv->px)->reuse == HTTP_REUSE_NEVER || !http_srv_reusable(srv, reused))
		srv_idle_close(fd, ssl);
	else
		srv_idle_put(srv, fd, ssl, reused);
}

/* The connection kept between requests goes to its server's idle pool
 * (the http-reuse policy permitting; else it is closed). */
void http_pool_kept(struct stream *s)
{
	struct server *srv;
	struct ssl_st *ssl;
	int fd = ss_unkeep(s, &srv, &ssl);

	conn_io_hand_off(&s->srv.io);   /* the pool's watcher takes over */
	http_pool_conn(srv, fd, ssl, s->ss.reused);
}

/* The exchange is answered here: whatever the server side was doing stops
 * (a kept connection is pooled, any other closed). */
void http_srv_abort(struct stream *s)
{
	if (s->ss.st == SS_KEPT)
		http_pool_kept(s);
	else
		ss_abort(s);
}

/* What the server choice needs from the request head <h> while it is still
 * editable (after the rules, before it is written): the server a
 * persistence cookie names (the cookie then removed or unprefixed as the
 * mode asks) and the hash of balance uri/url_param/hdr. Returns 0, or -1
 * when a rewrite failed. */
int http_req_server_prep(struct stream *s, struct http_head *h)
{
	struct http_txn *txn = s->txn;

	if (!(s->be->cap & PR_CAP_BE))
		return 0;
	s->ss.lb_hashed = lb_http_hash(s->be, h, &s->ss.lb_hash) ||
			  lb_http_hash_post(s->be, &txn->req, s->req.buf, &s->ss.lb_hash);
	http_name_hdr_prep(s, h);
	return persist_req(s, h, &s->ss.persist);
}

/* "redir <prefix>" on the server just assigned: a GET or HEAD request is
 * answered "302 Found" with Location <prefix> followed by its path (from
 * its first '/'), read from the request line as it leaves (the rules may
 * have changed it); other methods go to the server. Returns 1 when
 * answered. */
int http_srv_redirect(struct stream *s)
{
	const struct server *srv = s->ss.target;
	const struct buf *b;
	struct http_act_out out = { 0 };
	const char *p, *end, *uri, *path;
	struct dstr loc = { 0 };
	size_t mlen;

	if (unlikely(s->tcp_flags & STRM_F_TARGET_HOOK) && s->txn && s->ss.target &&
	    http_name_hdr_set(s) == -1) {
		s->fe->fe_counters.failed_rewrites++;
		http_reply(s, 500, NULL, NULL, SE_PROXY, SF_CONN);
		return 1;
	}
	b = s->req.buf;
	if (!srv || !srv->redir || !s->txn || !b || !b->data)
		return 0;
	p = b->area + b->head;
	end = memchr(p, '\n', b->data);
	if (!end || !(uri = memchr(p, ' ', (size_t)(end - p))))
		return 0;
	mlen = (size_t)(uri - p);
	if (!((mlen == 3 && memcmp(p, "GET", 3) == 0) || (mlen == 4 && memcmp(p, "HEAD", 4) == 0)))
		return 0;
	uri++;
	if (!(end = memchr(uri, ' ', (size_t)(end - uri))))
		return 0;
	path = uri;
	if (*uri != '/') {
		/* absolute form: the path starts after "scheme://authority" */
		const char *auth = memmem(uri, (size_t)(end - uri), "://", 3);

		path = auth ? memchr(auth + 3, '/', (size_t)(end - auth - 3)) : NULL;
		if (!path)
			path = end;
	}
	if (dstr_printf(&loc, "%s%.*s", srv->redir, (int)(end - path), path) == -1)
		return 0;
	out.location = (struct http_str){ loc.p, (uint32_t)loc.len };
	http_reply(s, 302, NULL, &out, SE_LOCAL, SF_CONN);
	dstr_free(&loc);
	return 1;
}

/* Takes an established connection to the target for the request: <fd>
 * (<ssl>) kept from the previous request, or from the idle pool. */
void http_reuse_conn(struct stream *s, int fd, struct ssl_st *ssl, int reused)
{
	stream_attach_srv(s, fd, ssl, reused);
	s->txn->flags |= TX_F_REUSED;
	s->be->be_counters.reuse++;
	s->ss.target->counters.reuse++;
}

/* A new connection to the server is established: HTTP/2 when the server
 * speaks it ("proto h2", or ALPN h2), the connection then shared by later
 * requests unless http-reuse never. Returns 0, or -1 (failed). */
int http_srv_ready(struct stream *s)
{
	if (unlikely(s->ss.target->flags & SRV_F_PROTO_FCGI))
		return fcgi_back_take_over(s, http_px_of(s->be)->reuse == HTTP_REUSE_NEVER);
	if (!h2_srv_wants(s->ss.target, &s->srv))
		return 0;
	if (unlikely(http_ws_over_h1(s))) {
		/* "proto h2" without ALPN h2: this connection stays HTTP/1.1
		 * for the upgrade, and serves nothing else */
		s->txn->flags |= TX_F_SRV_CLOSE;
		return 0;
	}
	return h2_back_take_over(s, http_px_of(s->be)->reuse == HTTP_REUSE_NEVER);
}

/* Whether the request of <s> asks for an upgrade (WebSocket: an Upgrade
 * field and the "upgrade" token in Connection) that its
 * server, spoken to in HTTP/2 by "proto h2", must get over HTTP/1.1: sluice
 * does not carry WebSocket over HTTP/2 to servers (RFC 8441), so "ws auto"
 * and "ws h1" both take HTTP/1.1 for such a stream. A server that chose h2
 * by ALPN cannot be asked otherwise. */
int http_ws_over_h1(const struct stream *s)
{
	const unsigned upg = H1_F_UPGRADE | H1_F_CONN_UPG;   /* Upgrade, Connection: upgrade */

	if (!s->txn || (s->txn->req.flags & upg) != upg || !s->ss.target ||
	    !(s->ss.target->flags & SRV_F_PROTO_H2))
		return 0;
#ifdef USE_OPENSSL
	if (s->srv.fd >= 0 && s->srv.ssl && !(s->srv.flags & CO_F_MUX) &&
	    ssl_sock_alpn_is(&s->srv, "h2"))
		return 0;
#endif
	return 1;
}

/* ws auto|h1|h2: the protocol of WebSocket streams to the server. */
static int srv_ws_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
		     char **err)
{
	if (argc > 1 && (strcmp(argv[1], "auto") == 0 || strcmp(argv[1], "h1") == 0))
		return 2;
	if (argc > 1 && strcmp(argv[1], "h2") == 0)
		*err = str_fmt("'ws h2' is not supported by sluice: WebSocket over HTTP/2 to "
			       "servers (RFC 8441) is not built; 'ws auto' and 'ws h1' carry "
			       "WebSocket streams over HTTP/1.1");
	else
		*err = str_fmt("expects 'auto', 'h1' or 'h2'");
	return -1;
}

/* proto h1|h2|fcgi: the protocol spoken to the server (h2: HTTP/2 from the
 * first byte, multiplexed; fcgi: FastCGI records, the backend's fcgi-app). */
static const struct srv_kw_choice srv_protos[] = {
	{ "h1", 0 }, { "h2", SRV_F_PROTO_H2 }, { "fcgi", SRV_F_PROTO_FCGI }, { NULL, 0 },
};

static struct srv_kw srv_conn_kws[] = {
	{ "ws", .parse = srv_ws_kw },
	{ "proto", .parse = srv_kw_choose, .clr = SRV_F_PROTO_H2 | SRV_F_PROTO_FCGI,
	  .arg = (uintptr_t)srv_protos },
};

SLUICE_INIT(srv_conn_register)
{
	srv_register_keywords(srv_conn_kws, ARRAY_SIZE(srv_conn_kws));
}

/* Connects the request to a server: the connection kept from the previous
 * request when load balancing picks the same server, else an idle one the
 * http-reuse policy allows, else a new one. Returns 0 or -1 (closed). */
int http_connect(struct stream *s)
{
	const enum http_reuse reuse = http_px_of(s->be)->reuse;
	struct server *srv, *kept = NULL;
	struct ssl_st *ssl = NULL, *kept_ssl = NULL;
	int fd, kept_fd = -1, kept_reused = 0, reused = 0;
	enum be_assign r;

	s->res.flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
	s->req.flags &= ~CH_F_SHUTW;
	/* option http-no-delay in the frontend or the backend: both ways */
	if (unlikely((http_px_of(s->fe)->options | http_px_of(s->be)->options) & HTTP_O_NO_DELAY)) {
		s->req.flags |= CH_F_NODELAY;
		s->res.flags |= CH_F_NODELAY;
	} else if (unlikely(s->req.flags & CH_F_NODELAY)) {
		s->req.flags &= ~CH_F_NODELAY;   /* (the previous request's backend) */
		s->res.flags &= ~CH_F_NODELAY;
	}
	/* The kept connection leaves the server side while the server is
	 * chosen: it is taken again if the same server is picked. */
	if (s->ss.st == SS_KEPT) {
		kept_fd = ss_unkeep(s, &kept, &kept_ssl);
		kept_reused = s->ss.reused;
		/* taken again below, or pooled: either way another watcher */
		conn_io_hand_off(&s->srv.io);
		/* option prefer-last-server, or after a 401/407: its server first */
		s->ss.prefer_auth = !!(s->tcp_flags & STRM_F_AUTH_LAST);
		if ((s->be->options & PR_O_PREF_LAST) || s->ss.prefer_auth)
			s->ss.prefer = kept;
	}
	r = (s->be->cap & PR_CAP_BE) ? backend_assign_server(s, BE_PICK_ANY) : BE_NONE;
	s->ss.prefer = NULL;
	if (r != BE_ASSIGNED) {
		if (kept_fd >= 0)
			http_pool_conn(kept, kept_fd, kept_ssl, kept_reused);
		return stream_connect(s);   /* queues, or answers 503 */
	}
	srv = s->ss.target;
	if (unlikely(srv->redir || (s->tcp_flags & STRM_F_TARGET_HOOK)) && http_srv_redirect(s)) {
		if (kept_fd >= 0)
			http_pool_conn(kept, kept_fd, kept_ssl, kept_reused);
		return 0;
	}
	if (kept_fd >= 0 && kept == srv) {
		http_reuse_conn(s, kept_fd, kept_ssl, kept_reused);
		return 0;
	}
	if (kept_fd >= 0)
		http_pool_conn(kept, kept_fd, kept_ssl, kept_reused);
	/* FastCGI: a connection that takes one more request */
	if (unlikely(srv->flags & SRV_F_PROTO_FCGI)) {
		if (srv->fcgi_conns && fcgi_back_attach(s, (int)reuse) == 0) {
			s->txn->flags |= TX_F_REUSED;
			s->be->be_counters.reuse++;
			srv->counters.reuse++;
			return 0;
		}
		return stream_connect(s);
	}
	/* HTTP/2 to this server: a stream of a connection that has room */
	if (srv->h2_conns && reuse != HTTP_REUSE_NEVER && !http_ws_over_h1(s) &&
	    h2_back_attach(s, 0) == 0) {
		s->txn->flags |= TX_F_REUSED;
		s->be->be_counters.reuse++;
		srv->counters.reuse++;
		return 0;
	}
	fd = -1;
	if (reuse == HTTP_REUSE_ALWAYS ||
	    (reuse != HTTP_REUSE_NEVER && (s->nreq > 1 || (s->tcp_flags & STRM_F_MUX_LATER))))
		fd = srv_idle_get(srv, 0, &ssl, &reused);
	else if (reuse == HTTP_REUSE_AGGRESSIVE)
		fd = srv_idle_get(srv, 1, &ssl, &reused);
	if (fd >= 0) {
		http_reuse_conn(s, fd, ssl, reused);
		return 0;
	}
	return stream_connect(s);
}
