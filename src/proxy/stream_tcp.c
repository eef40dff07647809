/* The TCP stream protocol (mode tcp): tcp-request/response content
 * inspection, then both directions forwarded raw until both are closed,
 * and the tcplog line at the end. One implementation of stream_proto. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sluice/acl_px.h>
#include <sluice/addr.h>
#include <sluice/buf.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/px_log.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/ssl_cfg.h>
#include <sluice/stream.h>
#include <sluice/tcp_rules.h>
#include <sluice/ticks.h>

/* The end-of-connection line of a TCP stream, in the frontend's format
 * (option tcplog, or a log-format). */
static void tcp_log(struct stream *s)
{
	struct proxy *fe = s->fe;
	struct lf_ctx c;
	char line[2048];
	size_t n;
	int level = stream_log_level(s, LOG_L_INFO), err;

	if (!fe->logformat || (!fe->loggers.head && !fe->loggers.use_global) || level < 0)
		return;
	if (((fe->options & PR_O_DONTLOGNULL) && s->req.total == 0) || s->state == ST_SSL)
		return;
	stream_fill_lf_ctx(s, &c, fe->logformat->needs | px_log_needs(fe));
	c.log = 1;
	err = s->term_err != SE_NONE || s->ss.retries || s->ss.redispatched;
	n = lf_render(px_log_format(fe, err), &c, line, sizeof(line));
	px_log_send(fe, &c, level, line, n);
}

/* Fills what a TCP stream's formats use; <needs> (LF_N_*) asks for the
 * costly parts (the frontend address is a getsockname() call). */
void stream_fill_lf_ctx(struct stream *s, struct lf_ctx *c_, unsigned needs)
{
	struct proxy *fe = s->fe;
	struct lf_ctx c;
	ev_tstamp now = tick_ev_now();

	memset(&c, 0, sizeof(c));
	c.cli = &s->cli_addr;
	c.fe_addr = (needs & LF_N_FEADDR) || s->dst ? stream_dst(s) : NULL;
	c.srv_addr = s->ss.target ? &s->ss.target->addr : NULL;
	c.accept_date = c.req_date = s->accept_date;
	c.fe_name = c.fe_name_transport = fe->name;
#ifdef USE_OPENSSL
	if (s->cli.ssl) {
		c.fe_name_transport = ssl_bind_ft(s->li->bc);
		c.ssl_ciphers = ssl_sock_cipher(&s->cli);
		c.ssl_version = ssl_sock_version(&s->cli);
	}
#endif
	c.be_name = s->be->name;
	c.srv_name = s->ss.target ? s->ss.target->name : s->svc ? s->svc->log_name : "<NOSRV>";
	c.Tw = s->t_queue || s->ss.target ? s->tw : -1;
	c.Tc = s->t_est ? tick_ev_to_ms(s->t_est - s->t_conn) : -1;
	c.Tt = tick_ev_to_ms(now - s->t_accept);
	c.TR = c.Tr = c.Ta = c.Tq = c.Td = -1;
	c.Th = c.Ti = 0;
	c.status = 0;   /* HAProxy prints 0 for %ST in mode tcp */
	c.bytes_out = s->res.total;
	c.bytes_in = s->req.total;
	memcpy(c.term, (char[4]){ strm_err_char(s->term_err), strm_fin_char(s->term_fin), '-', '-' },
	       4);
	c.actconn = global.curconn;
	c.feconn = fe->feconn;
	c.beconn = s->be->beconn;
	c.srvconn = s->ss.target ? (int)s->ss.target->counters.cur_sess : 0;
	c.retries = s->ss.retries;
	c.redispatched = s->ss.redispatched;
	c.srv_queue = s->srv_qpos;
	c.be_queue = s->be_qpos;
	c.req_cookie = c.res_cookie = "-";
	c.asap = !!(fe->options & PR_O_LOGASAP);
	c.uniq_num = s->uniq_id;
	c.hostname = global.node;
	c.pid = (int)global.pid;
	c.strm = s;
	*c_ = c;
}

static void tcp_log_connect(struct stream *s)
{
	char line[512], src[64], dst[64];
	int n;

	if (!s->fe->loggers.head && !s->fe->loggers.use_global)
		return;
	if (s->fe->logformat)
		return;
	n = snprintf(line, sizeof(line), "Connect from %s to %s (%s/%s)",
		     addr_to_str(&s->cli_addr, src, sizeof(src)),
		     addr_to_str(stream_dst(s), dst, sizeof(dst)), s->fe->name, "TCP");
	if (n > 0)
		log_send(&s->fe->loggers, LOG_L_INFO, line, MIN((size_t)n, sizeof(line) - 1));
}

/* The latency histograms of a TCP stream that ends (mode http streams
 * record theirs per request): queue and connect times when it went that
 * far, the session's total time always. */
static void tcp_count_lat(struct stream *s)
{
	ev_tstamp now = tick_ev_now();
	int64_t tw = s->t_queue || s->ss.target ? (int64_t)s->tw * 1000 : -1;
	int64_t tc = s->t_est ? (int64_t)((s->t_est - s->t_conn) * 1e6) : -1;
	int64_t tt = (int64_t)((now - s->t_accept) * 1e6);

	if (tc < -1)
		tc = 0;
	if (tt < 0)
		tt = 0;
	counters_lat(&s->fe->fe_counters, tw, tc, -1, tt);
	if (s->be->cap & PR_CAP_BE)
		counters_lat(&s->be->be_counters, tw, tc, -1, tt);
	if (s->ss.target)
		counters_lat(&s->ss.target->counters, tw, tc, -1, tt);
}

/* Runs the tcp-response content rules of the backend on the response data
 * held (res.to_forward is 0 meanwhile). Returns 0 (still waiting, or
 * accepted: the flag is gone and the data may leave), or -1 when the
 * stream was closed. */
static int tcp_inspect_res(struct stream *s)
{
	int partial = s->inspect_end && !(s->res.flags & CH_F_SHUTR) && chan_has_room(&s->res);
	enum tcp_verdict v = tcp_rules_exec(s->be, TCP_RS_RES, s, &s->tcp_pos,
					    (partial ? TCP_X_PARTIAL : 0) | TCP_X_YIELD);

	switch (v) {
	case TCP_V_WAIT:
		return 0;
	case TCP_V_ACCEPT:
		s->tcp_flags &= ~STRM_F_RES_INSPECT;
		s->inspect_end = 0;
		s->res.to_forward = CHN_INFINITE;
		return 0;
	case TCP_V_CLOSE:
		stream_close(s, SE_NONE, SF_NONE);
		return -1;
	default:
		s->be->be_counters.denied_resp++;
		s->fe->fe_counters.denied_resp++;
		s->li->counters.denied_resp++;
		if (s->ss.target)
			s->ss.target->counters.denied_resp++;
		stream_close(s, SE_PROXY, SF_DATA);
		return -1;
	}
}

/* ---- services (tcp-request content use-service) ---- */

static struct stream_service *tcp_services;

void stream_service_register(struct stream_service *svc)
{
	svc->next = tcp_services;
	tcp_services = svc;
}

const struct stream_service *stream_service_find(const char *name)
{
	for (const struct stream_service *svc = tcp_services; svc; svc = svc->next)
		if (strcmp(svc->name, name) == 0)
			return svc;
	return NULL;
}

/* A rule gave the stream to service s->svc: no backend, no server. Returns
 * 0, or -1 when the stream was closed. */
static int tcp_service_start(struct stream *s)
{
	s->inspect_end = 0;
	s->state = ST_FWD;
	s->fe->fe_counters.intercepted++;
	s->res.to_forward = CHN_INFINITE;
	if (s->svc->start(s) == -1) {
		s->fe->fe_counters.internal_errors++;
		stream_close(s, SE_INTERNAL, SF_REQ);
		return -1;
	}
	return 0;
}

/* The service runs after an event: the client's bytes are read for it, its
 * own leave. Returns 0, or -1 once <s> was closed. */
static int tcp_service_process(struct stream *s)
{
	enum chan_res r = stream_forward(s, &s->req, &s->cli, NULL, 1);
	int ret = 0;

	if (r != CHN_OK) {
		stream_close(s, SE_CLI_ABORT, SF_DATA);
		return -1;
	}
	/* while the client takes all it writes, it goes on (no event would
	 * come back for a buffer that emptied) */
	for (int turn = 0; !(s->tcp_flags & STRM_F_SVC_DONE); turn++) {
		uint32_t before = s->res.buf ? s->res.buf->data : 0;
		int wrote;

		if (turn == 16) {
			stream_wake(s);   /* more in this loop pass, after the others */
			break;
		}
		ret = s->svc->run(s);
		if (ret == -1) {
			s->fe->fe_counters.internal_errors++;
			stream_close(s, SE_INTERNAL, SF_DATA);
			return -1;
		}
		if (ret == 1)
			s->tcp_flags |= STRM_F_SVC_DONE;
		wrote = s->res.buf && s->res.buf->data > before;
		if (wrote)
			stream_count_made(s, s->res.buf->data - before);
		if (stream_forward(s, &s->res, &s->srv, &s->cli, 0) != CHN_OK) {
			stream_close(s, SE_CLI_ABORT, SF_DATA);
			return -1;
		}
		if (!wrote || (s->res.buf && s->res.buf->data))
			break;   /* nothing new, or the client is full: its events say */
	}
	if ((s->tcp_flags & STRM_F_SVC_DONE) && !chan_pending(&s->res)) {
		/* done and all sent: the close carries the FIN */
		stream_close(s, SE_NONE, SF_NONE);
		return -1;
	}
	stream_update(s);
	return 0;
}

/* "switch-mode http": the stream goes on as a mode http one, its client's
 * bytes read so far being the start of its first request (or of an
 * HTTP/2 connection). Returns 0, or -1 when the stream was closed. */
static int tcp_switch_http(struct stream *s)
{
	const struct stream_proto *hp = stream_proto_of(PR_MODE_HTTP);

	s->inspect_end = 0;
	s->tcp_pos = 0;
	s->req.to_forward = s->res.to_forward = 0;
	s->proto = hp;
	if (hp->init(s) == -1)
		return -1;
	return hp->start(s);
}

/* ST_INSPECT (mode tcp): runs the frontend's tcp-request content rules,
 * then picks the backend (use_backend) and runs its rules, each with its
 * own inspect-delay, then connects. Returns 0 (waiting, or moved on), or
 * -1 when the stream was closed. */
static int tcp_inspect(struct stream *s)
{
	for (;;) {
		struct proxy *px = (s->tcp_flags & STRM_F_BE_RULES) ? s->be : s->fe;

		if (tcp_rules_has(px, TCP_RS_REQ)) {
			int partial = s->inspect_end && !(s->req.flags & CH_F_SHUTR) &&
				      chan_has_room(&s->req);
			enum tcp_verdict v = tcp_rules_exec(px, TCP_RS_REQ, s, &s->tcp_pos,
							    (partial ? TCP_X_PARTIAL : 0) | TCP_X_YIELD);

			if (v == TCP_V_WAIT) {
				s->state = ST_INSPECT;
				stream_update(s);
				return 0;
			}
			if (v == TCP_V_CLOSE) {
				/* an action ended it (Lua's txn:done()): no denial */
				if (px == s->fe)
					stream_set_backend(s, s->fe);
				stream_close(s, SE_LOCAL, SF_REQ);
				return -1;
			}
			if (v != TCP_V_ACCEPT) {
				s->fe->fe_counters.denied_req++;
				if (px != s->fe)
					px->be_counters.denied_req++;
				s->li->counters.denied_req++;
				if (px == s->fe)
					stream_set_backend(s, s->fe);   /* none chosen yet: logged as fe/<NOSRV> */
				stream_close(s, SE_PROXY, SF_REQ);
				return -1;
			}
		}
		if (unlikely(s->tcp_flags & STRM_F_HTTP_SWITCH))
			return tcp_switch_http(s);
		if (unlikely(s->svc)) {
			/* use-service: the service answers in place of a server;
			 * the backend is chosen as for one (HAProxy logs
			 * "be/<lua.name>"), its tcp-request rules do not run */
			if (px == s->fe)
				stream_set_backend(s, use_backend_select(s->fe, s));
			return tcp_service_start(s) == -1 ? -1 : tcp_service_process(s);
		}
		if (s->tcp_flags & STRM_F_BE_RULES)
			break;
		s->tcp_flags |= STRM_F_BE_RULES;
		stream_set_backend(s, use_backend_select(s->fe, s));
		if (s->be == s->fe || !tcp_rules_has(s->be, TCP_RS_REQ))
			break;
		s->tcp_pos = 0;
		s->inspect_end = tcp_inspect_delay(s->be, TCP_RS_REQ) ?
				 tick_ev_in(tcp_inspect_delay(s->be, TCP_RS_REQ)) : 0;
	}
	s->inspect_end = 0;
	s->state = ST_FWD;
	if (s->be->disabled) {
		stream_close(s, SE_SRV_ABORT, SF_CONN);
		return -1;
	}
	return stream_connect(s);
}

/* Runs both directions; closes the stream when both are done or on error.
 * Returns 0, or -1 once <s> was closed. */
static int tcp_process(struct stream *s)
{
	enum chan_res r;
	int est = s->ss.st == SS_EST;

	if (unlikely(s->svc) && s->state == ST_FWD)
		return tcp_service_process(s);
	r = stream_forward(s, &s->req, &s->cli, est ? &s->srv : NULL, 1);
	if (r != CHN_OK) {
		stream_close(s, r == CHN_SRC_ERR ? SE_CLI_ABORT : SE_SRV_ABORT, est ? SF_DATA :
			     s->state == ST_INSPECT ? SF_REQ : SF_CONN);
		return -1;
	}
	if (s->state == ST_INSPECT) {
		if (tcp_inspect(s) == -1)
			return -1;
		if (s->ss.st != SS_EST)
			return 0;  /* waiting or connecting: watchers already set */
		est = 1;
	}
	if (est) {
		r = stream_forward(s, &s->res, &s->srv, &s->cli, 0);
		if (r == CHN_OK && (s->tcp_flags & STRM_F_RES_INSPECT)) {
			if (tcp_inspect_res(s) == -1)
				return -1;
			if (!(s->tcp_flags & STRM_F_RES_INSPECT))   /* accepted: send what waited */
				r = stream_forward(s, &s->res, &s->srv, &s->cli, 0);
		}
		if (r != CHN_OK) {
			stream_close(s, r == CHN_SRC_ERR ? SE_SRV_ABORT : SE_CLI_ABORT, SF_DATA);
			return -1;
		}
		/* Both directions done: close() sends the FINs, no shutdown()
		 * needed (every byte was read to EOF, so no RST either). */
		if (((s->req.flags & CH_F_SHUTW) || chan_shutw_due(&s->req)) &&
		    ((s->res.flags & CH_F_SHUTW) || chan_shutw_due(&s->res))) {
			stream_close(s, SE_NONE, SF_NONE);
			return -1;
		}
		if (chan_shutw_due(&s->req))
			chan_shutw(&s->req, &s->srv);
		if (chan_shutw_due(&s->res))
			chan_shutw(&s->res, &s->cli);
	}
	stream_update(s);
	return 0;
}

/* At accept: a TCP stream is a tunnel (every byte may leave unanalysed)
 * and a session of its backend; with no backend to send to (none, or
 * disabled) and no tcp-request content rule that could answer it instead
 * (use-service, a Lua action), it closes at once. Returns 0, or -1 once
 * <s> was closed. */
static int tcp_init(struct stream *s)
{
	struct proxy *fe = s->fe;

	if ((!fe->defbe || fe->defbe->disabled) && !(fe->acl && fe->acl->use_be) &&
	    !tcp_rules_has(fe, TCP_RS_REQ)) {
		/* counted as current (closed at once), not as a session */
		tcp_log_connect(s);
		s->be->beconn++;
		s->be->be_counters.cur_sess++;
		s->tcp_flags |= STRM_F_BE_SESS;
		stream_close(s, SE_SRV_ABORT, SF_CONN);
		return -1;
	}
	stream_set_backend(s, s->be);
	s->req.to_forward = s->res.to_forward = CHN_INFINITE;
	return 0;
}

/* The client is known: logged, then content rules and use_backend choose
 * where it goes. */
static int tcp_start(struct stream *s)
{
	tcp_log_connect(s);
	s->tcp_pos = 0;
	s->inspect_end = tcp_inspect_delay(s->fe, TCP_RS_REQ) && tcp_rules_has(s->fe, TCP_RS_REQ) ?
			 tick_ev_in(tcp_inspect_delay(s->fe, TCP_RS_REQ)) : 0;
	return tcp_inspect(s);
}

/* The server connection is up: tcp-response content rules see the
 * response before it leaves. */
static void tcp_connected(struct stream *s)
{
	uint32_t delay;

	/* option logasap: logged now, unless dontlognull waits for data */
	if (unlikely(s->fe->options & PR_O_LOGASAP) && !(s->tcp_flags & STRM_F_NOLOG) &&
	    (!(s->fe->options & PR_O_DONTLOGNULL) || s->req.total)) {
		ev_tstamp est = s->t_est;

		s->t_est = tick_ev_now();   /* (set just after this call: %Tc) */
		tcp_log(s);
		s->t_est = est;
		s->tcp_flags |= STRM_F_NOLOG;
	}

	if (!tcp_rules_has(s->be, TCP_RS_RES))
		return;
	delay = tcp_inspect_delay(s->be, TCP_RS_RES);
	s->tcp_flags |= STRM_F_RES_INSPECT;
	s->res.to_forward = 0;
	s->tcp_pos = 0;
	s->inspect_end = delay ? tick_ev_in(delay) : 0;
}

static void tcp_release(struct stream *s)
{
	if (!(s->tcp_flags & STRM_F_NOLOG))
		tcp_log(s);
	tcp_count_lat(s);
}

/* A side is waited for whenever events are watched on it. */
static int tcp_cli_waiting(const struct stream *s, int cev)
{
	return cev != 0;
}

static int tcp_always(const struct stream *s)
{
	return 1;
}

static const struct stream_proto tcp_proto = {
	.name        = "tcp",
	.init        = tcp_init,
	.start       = tcp_start,
	.process     = tcp_process,
	.connected   = tcp_connected,
	.release     = tcp_release,
	.cli_waiting = tcp_cli_waiting,
	.srv_waiting = tcp_always,
	.tunnel      = tcp_always,
};

int stream_is_tcp(const struct stream *s)
{
	return s->proto == &tcp_proto;
}

SLUICE_INIT(stream_tcp_register)
{
	stream_proto_register(PR_MODE_TCP, &tcp_proto);
}
