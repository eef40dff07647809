/* A stream's backend and server side (stream.h): the backend's session
 * counts, queueing on a full server, connecting (directly, through TLS or
 * a SOCKS4 proxy, from the original destination of a transparent
 * connection), and retries after a failed connection. */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <sluice/addr.h>
#include <sluice/backend.h>
#include <sluice/listener.h>
#include <sluice/proxy.h>
#include <sluice/px_tcp.h>
#include <sluice/server.h>
#include <sluice/srv_observe.h>
#include <sluice/srv_pp.h>
#include <sluice/socks4.h>
#include <sluice/ssl_cfg.h>
#include <sluice/stream_trace.h>
#include <sluice/ticks.h>
#include <sluice/vars.h>

#include "stream_int.h"

/* The stream counts as a session of its backend (beconn, scur, stot). */
static void stream_be_count(struct stream *s)
{
	s->be->beconn++;
	counters_sess_start(&s->be->be_counters, tick_sec(), tick_wall());
	s->tcp_flags |= STRM_F_BE_SESS;
}

void stream_be_uncount(struct stream *s)
{
	if (!(s->tcp_flags & STRM_F_BE_SESS))
		return;
	BUG_ON(s->be->beconn <= 0, "backend connection count underflow");
	s->be->beconn--;
	s->be->be_counters.cur_sess--;
	s->tcp_flags &= ~STRM_F_BE_SESS;
}

void stream_set_backend(struct stream *s, struct proxy *be)
{
	if (!be)
		be = s->fe->defbe ? s->fe->defbe : s->fe;
	if (be == s->be && (s->tcp_flags & STRM_F_BE_SESS))
		return;
	stream_be_uncount(s);
	s->be = be;
	stream_be_count(s);
}

void stream_end_backend(struct stream *s)
{
	stream_be_uncount(s);
	s->be = s->fe->defbe ? s->fe->defbe : s->fe;
	memset(s->tmo, 0, sizeof(s->tmo));   /* set-timeout was the request's */
	s->act_exp = 0;                      /* and any wait of its rules */
	s->last_rule = NULL;
	s->nice = s->li ? (short)s->li->bc->nice : 0;   /* (stream_update() applies it) */
	s->tcp_flags &= ~STRM_F_ACT_EXP;
}

/* The stream asks for <srv> (persistence) and it is full: waits in its
 * queue unless maxqueue is reached; then with "option redispatch" load
 * balancing decides (returns 1), else it fails. Returns 0 (queued), 1, or
 * -1 when the stream was closed. */
static int queue_on_server(struct stream *s, struct server *srv)
{
	if (!srv->maxqueue || srv->nbpend < srv->maxqueue) {
		ss_enqueue(s, srv);
		stream_update(s);
		return 0;
	}
	if (s->be->options & PR_O_REDISPATCH)
		return 1;
	s->be->be_counters.failed_conns++;
	return stream_fail(s, SE_SRV_TO, SF_QUEUE);
}

int stream_conn_failed(struct stream *s, int timeout)
{
	struct server *srv = s->ss.target;

	ss_conn_lost(s);
	srv_observe(srv, SRV_OBS_L4_ERR);
	if (s->ss.retries >= s->be->retries || !(s->be->retry_on & PR_RE_CONN_FAILED)) {
		s->be->be_counters.failed_conns++;
		srv->counters.failed_conns++;
		return stream_fail(s, timeout ? SE_SRV_TO : SE_SRV_ABORT, SF_CONN);
	}
	s->ss.retries++;
	s->be->be_counters.retries++;
	srv->counters.retries++;
	if (backend_retry_redispatch(s, !timeout) || timeout)
		return stream_connect(s);
	/* Refused at once and nowhere else to go: wait before trying the
	 * same server again. */
	s->t_tar = tick_ev_now() +
		   MIN(TURNAROUND_MAX, s->be->timeout.connect ? tick_to_ev(s->be->timeout.connect)
							    : TURNAROUND_MAX);
	stream_update(s);
	return 0;
}

#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80   /* linux/netfilter_ipv4.h (IP6T_SO_ORIGINAL_DST: the same) */
#endif

/* option transparent: where the client meant to connect, the address
 * before a netfilter REDIRECT/DNAT (SO_ORIGINAL_DST), else the accepting
 * socket's own (TPROXY, or no NAT). Returns its length. */
static socklen_t stream_orig_dst(struct stream *s, struct sockaddr_storage *out)
{
	socklen_t l = sizeof(*out);
	int v6 = stream_dst(s)->ss_family == AF_INET6;

	if (getsockopt(s->cli.fd, v6 ? SOL_IPV6 : SOL_IP, SO_ORIGINAL_DST, out, &l) == 0 &&
	    out->ss_family == stream_dst(s)->ss_family)
		return l;
	*out = *stream_dst(s);
	return out->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* The server's TLS handshake starts (the connection stays in SS_CONN until it
 * completes). Returns 0, or -1 (a connection failure). */
static int stream_ssl_connect(struct stream *s)
{
#ifdef USE_OPENSSL
	const struct smp_expr *e = ssl_srv_sni(s->ss.target);
	char sni[256] = "";

	if (e) {
		struct sample smp = { 0 };

		if (smp_expr_eval(e, s, &smp) && smp_cast(&smp, SMP_T_STR) &&
		    smp.u.str.len < sizeof(sni)) {
			memcpy(sni, smp.u.str.p, smp.u.str.len);
			sni[smp.u.str.len] = '\0';
		}
	}
	s->req.flags |= CH_F_NOSPLICE;
	s->res.flags |= CH_F_NOSPLICE;
	return ssl_srv_connect(&s->srv, s->ss.target, sni);
#else
	return -1;
#endif
}

/* The server connection is up. Sends the PROXY header first when the server
 * asks for one, then starts TLS when it uses it. Returns 0, or -1 when that
 * failed (a connection failure). */
static int stream_established(struct stream *s)
{
	unsigned pp = s->ss.target->flags & (SRV_F_SEND_PROXY | SRV_F_SEND_PROXY_V2);

	s->srv.flags |= CO_F_CONNECTED;
	srv_observe(s->ss.target, SRV_OBS_L4_OK);
	if (s->proto->connected)
		s->proto->connected(s);
	if (pp && !(s->srv.flags & CO_F_SSL_HS) && !s->srv.ssl) {
		char hdr[1024];
		size_t len = srv_pp_header(s, pp == SRV_F_SEND_PROXY ? 1 : 2, hdr, sizeof(hdr));

		/* A fresh socket takes a few hundred bytes at once. */
		if (!len || send(s->srv.fd, hdr, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
			return -1;
	}
	if (unlikely(ssl_srv_enabled(s->ss.target)) && !s->srv.ssl) {
		if (stream_ssl_connect(s) == -1)
			return -1;
	}
	if (unlikely(s->srv.flags & CO_F_SSL_HS))
		return 0;   /* SS_EST once the handshake is done */
	ss_established(s, 0);
	s->t_est = tick_ev_now();
	s->srv.last_act = s->t_est;
	return stream_srv_ready(s);
}

int stream_srv_up(struct stream *s)
{
	if (likely(!(s->srv.flags & CO_F_SOCKS)))
		return stream_established(s);
	/* a fresh socket takes these few bytes at once */
	if (send(s->srv.fd, s->socks, SOCKS4_REQ_LEN, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    SOCKS4_REQ_LEN)
		return -1;
	s->socks_st = STRM_SOCKS_REPLY;
	s->socks_got = 0;
	stream_update(s);
	return 0;
}

int stream_socks_reply(struct stream *s)
{
	const char *why = "connection closed";
	ssize_t n = recv(s->srv.fd, s->socks + s->socks_got, SOCKS4_REP_LEN - s->socks_got,
			 MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (n > 0 && (s->socks_got += (uint8_t)n) < SOCKS4_REP_LEN)
		return 1;
	if (n > 0 && socks4_reply(s->socks, &why) == 0) {
		s->srv.flags &= ~CO_F_SOCKS;
		s->socks_st = 0;
		return stream_established(s);
	}
	if (n < 0)
		why = strerror(errno);
	log_warning("backend %s: server %s: SOCKS4 proxy: %s", s->be->name, s->ss.target->name,
		    why);
	return -1;
}

int stream_connect(struct stream *s)
{
	struct server *srv;
	struct sockaddr_storage addr;
	socklen_t alen;
	int rc;

	if (s->ss.st == SS_NONE || s->ss.st == SS_WANT) {
		enum be_assign a = backend_assign_server(s, BE_PICK_ANY);

		if (a == BE_FULL_SRV) {
			int r = queue_on_server(s, s->ss.want);

			if (r <= 0)
				return r;
			/* redispatched: load balancing only, lest the same
			 * stick entry or use-server rule bind it there again */
			a = backend_assign_server(s, BE_PICK_LB);
		}
		if (a == BE_ALL_FULL) {
			/* Every usable server is full: wait for a slot. */
			ss_enqueue(s, NULL);
			stream_update(s);
			return 0;
		}
		if (a == BE_NONE) {
			/* No usable server: nothing will ever answer. */
			s->be->be_counters.failed_conns++;
			return stream_fail(s, SE_SRV_ABORT, SF_CONN);
		}
	}
	srv = s->ss.target;
	if (unlikely(srv->redir || (s->tcp_flags & STRM_F_TARGET_HOOK)) && s->proto->redirect &&
	    s->proto->redirect(s)) {
		stream_update(s);
		return 0;
	}
	addr = srv->addr;
	alen = srv->addrlen;
	if (srv->flags & SRV_F_SAMEPORT)
		addr_set_port(&addr, addr_get_port(stream_dst(s)));
	if (unlikely(srv->flags & SRV_F_ORIG_DST))
		alen = stream_orig_dst(s, &addr);
	s->t_conn = tick_ev_now();
	s->be->be_counters.connect++;
	srv->counters.connect++;
	if (unlikely(srv->socks4_len) && socks4_request(&addr, s->socks) < 0)
		return stream_conn_failed(s, 0);   /* not IPv4: "init-addr" gave another */
	rc = conn_connect_src(&s->srv, srv->socks4_len ? &srv->socks4 : &addr,
			      srv->socks4_len ? srv->socks4_len : alen,
			      px_tcp_opts(s->be, 1), srv->src,
			      &s->cli_addr, stream_io_cb, s);
	s->bc_err = rc == -1 ? (uint8_t)conn_err_code(errno, s->srv.fd < 0 && srv->src) : 0;
	if (rc == -1 && s->srv.fd < 0) {
		log_warning("backend %s: cannot create a socket to server %s: %s", s->be->name,
			    srv->name, strerror(errno));
		return stream_conn_failed(s, 0);
	}
	ss_connecting(s);
	s->socks_st = 0;
	if (unlikely(srv->socks4_len)) {
		s->srv.flags |= CO_F_SOCKS;
		s->socks_st = STRM_SOCKS_SEND;
	}
	if (rc == 0) {
		if (stream_srv_up(s) == -1)
			return stream_conn_failed(s, 0);
	} else if (rc == -1) {
		return stream_conn_failed(s, 0);
	}
	stream_update(s);
	return 0;
}
