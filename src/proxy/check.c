/* Health checks: connect (then the rules of tcpcheck.c), rise/fall state
 * machine, NOLB for disable-on-404, HAProxy-worded transition logs, and the
 * check keywords (check.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/check_h2.h>
#include <sluice/srv_agent.h>
#include <sluice/srv_dns.h>
#include <sluice/backend.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/mailers.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/socks4.h>
#include <sluice/srv_pp.h>
#include <sluice/ssl.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/tcpcheck.h>
#include <sluice/ticks.h>

#define CHK_DEFAULT_INTER 2000   /* ms, as in HAProxy */
#define CHK_DEFAULT_RISE  2
#define CHK_DEFAULT_FALL  3

static void check_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void check_io_cb(struct ev_loop *loop, ev_io *w, int revents);

void check_init(struct check *c, struct server *srv)
{
	memset(c, 0, sizeof(*c));
	c->srv = srv;
	c->fd = -1;
	c->inter = CHK_DEFAULT_INTER;
	c->rise = CHK_DEFAULT_RISE;
	c->fall = CHK_DEFAULT_FALL;
	c->result = CHK_R_NONE;
	c->error_limit = 10;
}

static int check_max_health(const struct check *c)
{
	return c->rise + c->fall - 1;
}

const char *check_result_str(enum chk_result r)
{
	switch (r) {
	case CHK_R_OK:      return "L4OK";
	case CHK_R_CON:     return "L4CON";
	case CHK_R_TOUT:    return "L4TOUT";
	case CHK_R_SOCKERR: return "SOCKERR";
	case CHK_R_L7OK:    return "L7OK";
	case CHK_R_L7RSP:   return "L7RSP";
	case CHK_R_L7TOUT:  return "L7TOUT";
	case CHK_R_L7OKC:   return "L7OKC";
	case CHK_R_L7STS:   return "L7STS";
	case CHK_R_L6OK:    return "L6OK";
	case CHK_R_L6RSP:   return "L6RSP";
	case CHK_R_L6TOUT:  return "L6TOUT";
	case CHK_R_HANA:    return "HANA";
	case CHK_R_PROCOK:  return "PROCOK";
	case CHK_R_PROCERR: return "PROCERR";
	case CHK_R_PROCTOUT: return "PROCTOUT";
	default:            return "INI";
	}
}

const char *check_reason(enum chk_result r)
{
	switch (r) {
	case CHK_R_OK:      return "Layer4 check passed";
	case CHK_R_CON:     return "Layer4 connection problem";
	case CHK_R_TOUT:    return "Layer4 timeout";
	case CHK_R_SOCKERR: return "Socket error";
	case CHK_R_L7OK:    return "Layer7 check passed";
	case CHK_R_L7RSP:   return "Layer7 invalid response";
	case CHK_R_L7TOUT:  return "Layer7 timeout";
	case CHK_R_L7OKC:   return "Layer7 check conditionally passed";
	case CHK_R_L7STS:   return "Layer7 wrong status";
	case CHK_R_L6OK:    return "Layer6 check passed";
	case CHK_R_L6RSP:   return "Layer6 invalid response";
	case CHK_R_L6TOUT:  return "Layer6 timeout";
	case CHK_R_HANA:    return "Health analyze";
	case CHK_R_PROCOK:  return "External check passed";
	case CHK_R_PROCERR: return "External check error";
	case CHK_R_PROCTOUT: return "External check timeout";
	default:            return "Initializing";
	}
}

int check_result_passed(enum chk_result r)
{
	return r == CHK_R_OK || r == CHK_R_L7OK || r == CHK_R_L6OK || r == CHK_R_L7OKC ||
	       r == CHK_R_PROCOK;
}

int check_has_code(const struct check *c)
{
	return c->result == CHK_R_L7OK || c->result == CHK_R_L7OKC || c->result == CHK_R_L7STS ||
	       c->result == CHK_R_PROCOK || c->result == CHK_R_PROCERR ||
	       c->result == CHK_R_PROCTOUT;
}

void check_status_str(const struct server *srv, char *out, size_t sz)
{
	const struct server *ref = srv;
	const struct check *c;
	const char *up = (srv->flags & SRV_F_NOLB) ? "NOLB" : "UP";

	/* A tracking server shows the state of the end of its chain. */
	while (ref->track && !(ref->flags & SRV_F_ANY_MAINT))
		ref = ref->track;
	c = &ref->check;
	if (srv->flags & SRV_F_ANY_MAINT)
		snprintf(out, sz, !(srv->flags & SRV_F_MAINT) ? "MAINT (resolution)" : "MAINT");
	else if (ref->flags & SRV_F_ANY_MAINT)
		snprintf(out, sz, "MAINT (via %s/%s)", ref->px->name, ref->name);
	else if ((srv->flags & SRV_F_DRAIN) && !(srv->flags & SRV_F_DOWN))
		snprintf(out, sz, "DRAIN");
	else if (!(ref->flags & SRV_F_CHECKED) && !(srv->flags & SRV_F_DOWN))
		snprintf(out, sz, "no check");
	else if ((srv->flags & SRV_F_DOWN) && (srv->flags & SRV_F_AGENT_DOWN))
		snprintf(out, sz, "DOWN (agent)");
	else if (srv->flags & SRV_F_DOWN)
		snprintf(out, sz, c->health ? "DOWN %d/%d" : "DOWN", c->health, c->rise);
	else if (c->health < check_max_health(c))
		snprintf(out, sz, "%s %d/%d", up, c->health - c->rise + 1, c->fall);
	else
		snprintf(out, sz, "%s", up);
}

/* ", reason: ..., code: N, info: "...", check duration: Nms" of the last
 * result, as HAProxy words it (code and info only when there are some). */
static void check_fmt_reason(const struct check *c, char *buf, size_t sz)
{
	int n = snprintf(buf, sz, ", reason: %s", check_reason(c->result));

	if (check_has_code(c) && n >= 0 && (size_t)n < sz)
		n += snprintf(buf + n, sz - (size_t)n, ", code: %d", c->code);
	if (*c->info && n >= 0 && (size_t)n < sz)
		n += snprintf(buf + n, sz - (size_t)n, ", info: \"%s\"", c->info);
	/* traffic analysis is no check: it has no duration */
	if (n >= 0 && (size_t)n < sz && c->result != CHK_R_HANA)
		snprintf(buf + n, sz - (size_t)n, ", check duration: %ldms", c->duration);
}

/* The reason part of a transition log: none when "option log-health-checks"
 * logged the check itself. */
static void check_transition_reason(const struct check *c, char *buf, size_t sz)
{
	if (chk_px_of(c->srv->px)->options & CHK_O_LOG_HEALTH)
		*buf = 0;
	else
		check_fmt_reason(c, buf, sz);
}

static void server_set_down(struct server *srv, const struct server *via,
                            const struct check *why);
static void server_set_up(struct server *srv, const struct server *via, const struct check *why);

/* The servers tracking <srv> follow its state: DOWN while it is DOWN or in
 * maintenance, UP otherwise (and so on down the tracking chain). */
void check_track_sync(struct server *srv)
{
	int down = !!(srv->flags & (SRV_F_DOWN | SRV_F_ANY_MAINT));

	for (struct server *t = srv->trackers; t; t = t->next_tracker) {
		if (down && !(t->flags & SRV_F_DOWN))
			server_set_down(t, srv, NULL);
		else if (!down && (t->flags & SRV_F_DOWN))
			server_set_up(t, srv, NULL);
	}
}

/* The reason part of a transition log: the last check's result, or
 * " via <backend>/<server>" when <srv> follows a tracked server. */
static void server_transition_reason(const struct server *srv, const struct server *via,
                                     const struct check *why, char *buf, size_t sz)
{
	if (via)
		snprintf(buf, sz, " via %s/%s", via->px->name, via->name);
	else if (why && why != &srv->check)
		check_fmt_reason(why, buf, sz);   /* the agent's word */
	else
		check_transition_reason(&srv->check, buf, sz);
}

void check_server_down(struct server *srv, const struct check *why)
{
	server_set_down(srv, NULL, why);
}

void check_server_up(struct server *srv, const struct check *why)
{
	server_set_up(srv, NULL, why);
}

/* "has no server available!": an alert on stderr, an emergency (in other
 * words) to syslog, as HAProxy 2.6 logs it. */
static void check_log_no_server(struct proxy *px)
{
	log_event_px_lv(&px->loggers, LOG_L_ALERT, -1, "backend '%s' has no server available!",
			px->name);
	log_event_px_lv(&px->loggers, -1, LOG_L_EMERG, "backend %s has no server available!",
			px->name);
}

/* A server's state change: logged ([WARNING] on stderr, <lv> to syslog)
 * and sent as an e-mail alert of that severity (email-alert). */
static void check_log_change(struct proxy *px, int lv, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check_log_change(struct proxy *px, int lv, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_event_px_lv(&px->loggers, LOG_L_WARNING, lv, "%s", msg);
	email_alert_send(px, lv, msg);
}

static void server_set_down(struct server *srv, const struct server *via,
                            const struct check *why_c)
{
	struct check *c = &srv->check;
	struct proxy *px = srv->px;
	int was_usable = server_usable(srv);
	char why[256];

	srv->flags |= SRV_F_DOWN;
	srv->flags &= ~SRV_F_NOLB;
	srv->last_change = srv->down_since = tick_wall();
	c->down_trans++;
	c->health = 0;
	lb_recalc(px);
	server_transition_reason(srv, via, why_c, why, sizeof(why));
	/* HAProxy: [WARNING] on stderr, alert to syslog (notice when the
	 * agent says so) */
	check_log_change(px, why_c && why_c != &srv->check ? LOG_L_NOTICE : LOG_L_ALERT,
			 "Server %s/%s is DOWN%s. %u active and %u backup servers left. %u sessions "
			 "active, 0 requeued, 0 remaining in queue.", px->name, srv->name, why,
			 px->srv_act, px->srv_bck, srv->counters.cur_sess);
	if (!px->srv_act && !px->srv_bck && was_usable) {
		px->last_change = srv->last_change;
		check_log_no_server(px);
	}
	if (srv->flags & SRV_F_DOWN_KILL)
		stream_kill_server_soon(srv);   /* maybe from one of its streams (observe) */
	backend_srv_state_changed(srv);
	check_track_sync(srv);
}

/* A transition whose reason is no check's result ("disable health"): its
 * words, set only around the server_set_up() call that logs it. */
static const char *check_forced_reason;

static void server_set_up(struct server *srv, const struct server *via, const struct check *why_c)
{
	struct check *c = &srv->check;
	struct proxy *px = srv->px;
	time_t now = tick_wall();
	char why[256];

	srv->flags &= ~(SRV_F_DOWN | SRV_F_NOLB);
	if (srv->down_since)
		srv->downtime += (uint64_t)(now - srv->down_since);
	srv->down_since = 0;
	srv->last_change = now;
	c->health = check_max_health(c);
	if (!(srv->flags & SRV_F_ANY_MAINT))
		srv_slowstart_begin(srv);   /* back from a failure */
	lb_recalc(px);
	if (check_forced_reason)
		snprintf(why, sizeof(why), "%s", check_forced_reason);
	else
		server_transition_reason(srv, via, why_c, why, sizeof(why));
	/* HAProxy: [WARNING] on stderr, notice to syslog */
	check_log_change(px, LOG_L_NOTICE, "Server %s/%s is UP%s. %u active and %u backup servers "
			 "online. 0 sessions requeued, 0 total in queue.", px->name, srv->name, why,
			 px->srv_act, px->srv_bck);
	/* An active server is back: sessions on backups may be moved there. */
	if ((srv->flags & SRV_F_UP_KILL_BACKUP) && !(srv->flags & SRV_F_BACKUP))
		for (struct server *b = px->servers; b; b = b->next)
			if (b->flags & SRV_F_BACKUP)
				stream_kill_server_soon(b);
	backend_srv_state_changed(srv);
	check_track_sync(srv);
}

/* disable-on-404: a running server answering 404 stops taking new
 * load-balanced traffic ("stopping", NOLB) until it answers 2xx/3xx. */
static void server_set_nolb(struct server *srv)
{
	struct proxy *px = srv->px;
	int was_usable = server_usable(srv);
	char why[256];

	srv->flags |= SRV_F_NOLB;
	srv->last_change = tick_wall();
	lb_recalc(px);
	check_transition_reason(&srv->check, why, sizeof(why));
	check_log_change(px, LOG_L_WARNING, "Server %s/%s is stopping%s. %u active and %u backup "
			 "servers online. 0 sessions requeued, 0 total in queue.", px->name,
			 srv->name, why, px->srv_act, px->srv_bck);
	if (!px->srv_act && !px->srv_bck && was_usable) {
		px->last_change = srv->last_change;
		check_log_no_server(px);
	}
}

void check_server_nolb(struct server *srv)
{
	if (!(srv->flags & (SRV_F_NOLB | SRV_F_DOWN)))
		server_set_nolb(srv);
}

/* Interval before the next check, with spread-checks jitter. */
static double check_next_delay(const struct check *c)
{
	const struct server *srv = c->srv;
	uint32_t ms = c->inter;

	if (srv->flags & SRV_F_DOWN)
		ms = c->downinter ? c->downinter : c->inter;
	else if (c->health < check_max_health(c))
		ms = c->fastinter ? c->fastinter : c->inter;
	if (global.spread_checks) {
		long span = (long)ms * global.spread_checks / 100;

		if (span > 0)
			ms = (uint32_t)MAX(1, (long)ms + (random() % (2 * span + 1)) - span);
	}
	return tick_to_ev(ms);
}

static void check_arm(struct check *c, double delay)
{
	ev_timer_stop(global.loop, &c->timer);
	ev_timer_set(&c->timer, delay, 0.);
	ev_timer_start(global.loop, &c->timer);
}

enum check_go { GO_NONE, GO_DOWN, GO_UP, GO_NOLB };

/* After a result of <c>: the check's own line (log-health-checks, when
 * <changed>), then the transition <go> it causes. */
static void check_log_and_go(struct check *c, int go, int was_down, int changed)
{
	struct server *srv = c->srv;

	if ((chk_px_of(srv->px)->options & CHK_O_LOG_HEALTH) && changed) {
		char st[32], why[256], msg[512];
		int down = go == GO_DOWN || (was_down && go != GO_UP);

		/* "1/2 UP": progress towards the other state, then the state. */
		snprintf(st, sizeof(st), "%d/%d %s", down ? c->health : c->health - c->rise + 1,
			 down ? c->rise : c->fall, down ? "DOWN" : "UP");
		check_fmt_reason(c, why, sizeof(why));
		snprintf(msg, sizeof(msg), "Health check for server %s/%s %s%s, status: %s.",
			 srv->px->name, srv->name, c->result == CHK_R_L7OKC ? "conditionally "
			 "succeeded" : check_result_passed(c->result) ? "succeeded" : "failed", why, st);
		log_event_px_lv(&srv->px->loggers, LOG_L_WARNING, LOG_L_NOTICE, "%s", msg);
		email_alert_send(srv->px, LOG_L_INFO, msg);   /* as HAProxy: at level info */
	}
	if (go == GO_DOWN)
		server_set_down(srv, NULL, NULL);
	else if (go == GO_UP && !(srv->flags & SRV_F_AGENT_DOWN))
		server_set_up(srv, NULL, NULL);
	else if (go == GO_NOLB)
		server_set_nolb(srv);
}

/* Ends the running check with <res>, updates the state, schedules the next.
 * As in HAProxy, the check's own log line (log-health-checks) comes before
 * the transition it causes, and shows the state after it. */
/* Closes the running check's connection (and its TLS session). */
static void check_close_conn(struct check *c)
{
	/* as HAProxy: a reset, unless the connect rule asked for "linger" */
	if (!(c->conn_opts & TCPCHK_CO_LINGER))
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &(struct linger){ 1, 0 },
			   sizeof(struct linger));
	ev_io_stop(global.loop, &c->io);
#ifdef USE_OPENSSL
	ssl_sock_free_ssl(c->ssl);
#endif
	c->ssl = NULL;
	c->ssl_hs = 0;
	chk_h2_free(c);
	chk_xport_free(c);
	close(c->fd);
	c->fd = -1;
}

static void check_finish(struct check *c, enum chk_result res, const char *info)
{
	enum check_go go = GO_NONE;
	struct server *srv = c->srv;
	enum chk_result prev = c->result;
	int prev_health = c->health, prev_code = c->code;
	int was_down = !!(srv->flags & SRV_F_DOWN);

	if (c->fd >= 0)
		check_close_conn(c);
	tcpchk_reset(c);
	c->connected = 0;
	c->result = res;
	/* check_code: the status behind a layer 7 verdict (HTTP status,
	 * SMTP reply, MySQL error, LDAP result; 0 for tcp-check rules). */
	c->code = check_has_code(c) ? c->run_code : 0;
	c->run_code = 0;
	c->duration = tick_ev_to_ms(tick_ev_now() - c->start);
	c->last_check = tick_wall();
	snprintf(c->info, sizeof(c->info), "%s", info ? info : "");
	str_blank_ctl(c->info);   /* a server's words: no line breaks in logs and stats */
	if (check_result_passed(res)) {
		if (was_down) {
			if (++c->health >= c->rise)
				go = GO_UP;
		} else {
			c->health = check_max_health(c);
			if (res == CHK_R_L7OKC && !(srv->flags & SRV_F_NOLB))
				go = GO_NOLB;
			else if (res != CHK_R_L7OKC && (srv->flags & SRV_F_NOLB))
				go = GO_UP;
		}
	} else {
		c->failed++;
		if (!was_down && --c->health < c->rise)
			go = GO_DOWN;
		if (was_down || go == GO_DOWN)
			c->health = 0;
	}
	if (go == GO_UP)
		c->health = check_max_health(c);
	if (res == CHK_R_TOUT && srv->dns)
		srv_dns_check_timeout(srv);   /* it may have moved */
	check_log_and_go(c, go, was_down,
			 res != prev || c->health != prev_health || c->code != prev_code);
	check_arm(c, check_next_delay(c));
}

void check_report(struct check *c, enum chk_result res, int code, const char *info)
{
	c->run_code = code;
	check_finish(c, res, info);
}

void check_health_analyze(struct server *srv, const char *info)
{
	struct check *c = &srv->check;
	int was_down = !!(srv->flags & SRV_F_DOWN), prev_health = c->health;
	int go = GO_NONE;

	if (!(srv->flags & SRV_F_CHECKED) || !global.loop)
		return;
	if (c->on_error != CHK_OE_FASTINTER && !was_down) {
		c->result = CHK_R_HANA;
		c->code = 0;
		c->last_check = tick_wall();
		snprintf(c->info, sizeof(c->info), "%s", info);
		str_blank_ctl(c->info);
		c->failed++;
		if (c->on_error == CHK_OE_MARK_DOWN)
			c->health = 0;
		else if (c->on_error == CHK_OE_SUDDEN_DEATH)
			c->health = MIN(c->health, c->rise);   /* one more failure: DOWN */
		else
			c->health--;
		if (c->health < c->rise) {
			c->health = 0;
			go = GO_DOWN;
		}
		check_log_and_go(c, go, was_down, c->health != prev_health || go != GO_NONE);
	}
	/* every action checks again soon, unless a check runs now */
	if (c->fd < 0)
		check_arm(c, tick_to_ev(c->fastinter ? c->fastinter : c->inter));
}

/* Timeout of a check's connection: "timeout connect" bounded by inter
 * (inter when unset). */
static double check_timeout(const struct check *c)
{
	uint32_t inter = c->inter, tmo = c->srv->px->timeout.connect;

	return tick_to_ev(tmo ? MIN(tmo, inter) : inter);
}

/* Time left for the rules once connected: "timeout check", else what
 * remains of inter since the check started (HAProxy's meaning). */
static double check_read_timeout(const struct check *c)
{
	double left;

	if (c->srv->px->timeout.check)
		return tick_to_ev(c->srv->px->timeout.check);
	left = tick_to_ev(c->inter) - (tick_ev_now() - c->start);
	return left > 0.001 ? left : 0.001;
}

static void check_connect(struct check *c, const struct sockaddr_storage *ss, socklen_t len);
static int check_socks_step(struct check *c);

/* TLS checks: starts or advances the handshake on the connected socket.
 * Returns 0 once it is done, 1 while it waits (watcher set), -1 when the
 * check ended. */
static int check_ssl_step(struct check *c)
{
#ifdef USE_OPENSSL
	const char *reason = "";
	int ev = 0, r;

	const struct tcpchk_rule *cr = c->conn_rule;
	struct ssl_check_opts o;

	if (cr) {
		o.server_defaults = !!(cr->conn_opts & TCPCHK_CO_DEFAULT);
		o.sni = cr->sni;
		o.alpn = cr->alpn;
		o.alpn_len = cr->alpn_len;
	}
	if (!c->ssl && !(c->ssl = ssl_check_new(c->srv, c->fd, cr ? &o : NULL))) {
		check_finish(c, CHK_R_SOCKERR, "out of memory");
		return -1;
	}
	r = ssl_check_handshake(c->ssl, &ev, &reason);
	if (r == 0) {
		c->ssl_hs = 0;
		return 0;
	}
	if (r < 0) {
		check_finish(c, CHK_R_L6RSP, reason);
		return -1;
	}
	ev_io_stop(global.loop, &c->io);
	ev_io_set(&c->io, c->fd, ev);
	ev_io_start(global.loop, &c->io);
	return 1;
#else
	c->ssl_hs = 0;
	return 0;
#endif
}

/* The connection is up: pass, or play the tcp-check rules over it. */
static void check_connected(struct check *c)
{
	const char *info = NULL;
	enum chk_result res;

	c->connected = 1;
	if (unlikely(c->socks_st) && check_socks_step(c) != 0)
		return;
	if (unlikely(c->pp_todo)) {
		char hdr[128];
		size_t len = srv_pp_check_header(c->srv, c->conn_rule && (c->conn_rule->conn_opts &
						 TCPCHK_CO_PROXY) ? c->fd : -1, hdr, sizeof(hdr));

		c->pp_todo = 0;
		/* a fresh socket takes these few bytes at once */
		if (send(c->fd, hdr, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len) {
			check_finish(c, CHK_R_CON, tcpchk_conn_error(c, strerror(errno)));
			return;
		}
	}
	if (unlikely(c->ssl_hs) && check_ssl_step(c) != 0)
		return;
	if (!tcpchk_enabled(c->srv->px)) {
		check_finish(c, c->ssl ? CHK_R_L6OK : CHK_R_OK, NULL);
		return;
	}
	if (!c->reading) {   /* first connection of this run: the read phase starts */
		c->reading = 1;
		check_arm(c, check_read_timeout(c));
	}
	switch (tcpchk_run(c, &res, &info)) {
	case TCPCHK_PASS:
	case TCPCHK_FAIL:
		check_finish(c, res, info);
		return;
	case TCPCHK_WAIT_READ:
		/* The timer still runs: "timeout check" covers the whole exchange. */
		ev_io_stop(global.loop, &c->io);
		ev_io_set(&c->io, c->fd, EV_READ);
		ev_io_start(global.loop, &c->io);
		return;
	case TCPCHK_RECONNECT: {
		/* A connect rule amid the rules: the next ones use a new connection. */
		struct sockaddr_storage ss;
		socklen_t len;

		check_close_conn(c);
		c->connected = 0;
		tcpchk_target(c, c->conn_rule, &ss, &len);
		check_connect(c, &ss, len);
		return;
	}
	}
}

/* Opens the check's connection to <ss>; the check goes on in check_io_cb()
 * (or ends here when the connection cannot start). */
/* check-via-socks4: sends the CONNECT once connected to the proxy (1),
 * then reads its reply (2). Returns 0 once the proxy connected the target
 * (the check goes on), 1 while it waits (watcher set), -1 when the check
 * ended. */
static int check_socks_step(struct check *c)
{
	const char *why = "connection closed by the SOCKS4 proxy";
	ssize_t n;

	if (c->socks_st == 1) {
		if (send(c->fd, c->socks, SOCKS4_REQ_LEN, MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    SOCKS4_REQ_LEN) {
			check_finish(c, CHK_R_CON, tcpchk_conn_error(c, strerror(errno)));
			return -1;
		}
		c->socks_st = 2;
		c->socks_got = 0;
		ev_io_stop(global.loop, &c->io);
		ev_io_set(&c->io, c->fd, EV_READ);
		ev_io_start(global.loop, &c->io);
		return 1;
	}
	n = recv(c->fd, c->socks + c->socks_got, SOCKS4_REP_LEN - c->socks_got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (n > 0 && (c->socks_got += (uint8_t)n) < SOCKS4_REP_LEN)
		return 1;
	if (n > 0 && socks4_reply(c->socks, &why) == 0) {
		c->socks_st = 0;
		return 0;
	}
	check_finish(c, CHK_R_CON, tcpchk_conn_error(c, n < 0 ? strerror(errno) : why));
	return -1;
}

static void check_connect(struct check *c, const struct sockaddr_storage *ss, socklen_t len)
{
	const struct server *srv = c->srv;
	const unsigned opts = c->conn_opts = tcpchk_conn_opts(c, c->conn_rule);
	const int socks = srv->socks4_len && (opts & TCPCHK_CO_SOCKS4);

	/* the server's source, interface and namespace serve its checks too */
	int fd = c->srv->src ? conn_src_socket(c->srv->src, ss->ss_family, NULL) :
		 socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd == -1) {
		check_finish(c, CHK_R_SOCKERR, strerror(errno));
		return;
	}
	c->fd = fd;
#ifdef USE_OPENSSL
	c->ssl_hs = !!(opts & TCPCHK_CO_SSL);
#endif
	c->pp_todo = !!(opts & TCPCHK_CO_PROXY);
	c->socks_st = 0;
	if (socks) {
		if (socks4_request(ss, c->socks) < 0) {
			check_finish(c, CHK_R_SOCKERR, "SOCKS4 reaches IPv4 addresses only");
			return;
		}
		c->socks_st = 1;
		ss = &srv->socks4;
		len = srv->socks4_len;
	}
	if (connect(fd, (const struct sockaddr *)ss, len) == 0) {
		check_connected(c);
		return;
	}
	if (errno != EINPROGRESS) {
		check_finish(c, CHK_R_CON, tcpchk_conn_error(c, strerror(errno)));
		return;
	}
	ev_io_stop(global.loop, &c->io);
	ev_io_set(&c->io, fd, EV_WRITE);
	ev_io_start(global.loop, &c->io);
}

static void check_run(struct check *c)
{
	struct sockaddr_storage ss;
	socklen_t len;

	c->start = tick_ev_now();
	c->run_code = 0;
	if (chk_px_of(c->srv->px)->options & CHK_O_EXTCHK) {
		check_arm(c, extchk_timeout(c));
		if (extchk_start(c) == -1)
			check_finish(c, CHK_R_PROCERR, strerror(errno));
		return;
	}
	c->conn_rule = tcpchk_enabled(c->srv->px) ? tcpchk_start(c) : NULL;
	tcpchk_target(c, c->conn_rule, &ss, &len);
	check_arm(c, check_timeout(c));
	check_connect(c, &ss, len);
}

static void check_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct check *c = container_of(w, struct check, io);
	int err = 0;
	socklen_t l = sizeof(err);

	if (c->connected) {
		check_connected(c);   /* data arrived for an expect rule */
		return;
	}
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
		err = errno;
	if (err)
		check_finish(c, CHK_R_CON, tcpchk_conn_error(c, strerror(err)));
	else
		check_connected(c);
}

static void check_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct check *c = container_of(w, struct check, timer);

	if (c->ext) {
		extchk_stop(c);
		check_finish(c, CHK_R_PROCTOUT, "");
	} else if (c->fd >= 0)
		check_finish(c, c->ssl_hs && c->connected ? CHK_R_L6TOUT :
			     c->connected ? tcpchk_timeout_result(c) : CHK_R_TOUT,
			     c->connected && !c->ssl_hs ? tcpchk_timeout_info(c) : "");
	else if (c->srv->flags & SRV_F_RMAINT)
		check_arm(c, check_next_delay(c));   /* no address to check */
	else
		check_run(c);
}

void check_start_server(struct server *srv, double delay)
{
	struct check *c = &srv->check;

	ev_init(&c->io, check_io_cb);
	ev_init(&c->timer, check_timer_cb);
	check_arm(c, delay);
}

void check_stop_server(struct server *srv)
{
	struct check *c = &srv->check;

	tcpchk_vars_free(c);
	extchk_stop(c);
	if (!(srv->flags & SRV_F_CHECKED) || !global.loop)
		return;
	ev_timer_stop(global.loop, &c->timer);
	if (c->fd >= 0)
		check_close_conn(c);
	tcpchk_reset(c);
}

int check_pause(struct server *srv)
{
	if (!(srv->flags & (SRV_F_CHECKED | SRV_F_CHECK_OFF)))
		return -1;
	if (srv->flags & SRV_F_CHECK_OFF)
		return 0;
	check_stop_server(srv);
	srv->flags &= ~SRV_F_CHECKED;
	srv->flags |= SRV_F_CHECK_OFF;
	/* the last result no longer counts: UP unless the agent holds it DOWN */
	if ((srv->flags & SRV_F_DOWN) && !(srv->flags & SRV_F_AGENT_DOWN)) {
		check_forced_reason = ", health checks disabled";
		server_set_up(srv, NULL, NULL);
		check_forced_reason = NULL;
	} else if (srv->flags & SRV_F_NOLB) {
		srv->flags &= ~SRV_F_NOLB;
		srv->last_change = tick_wall();
		lb_recalc(srv->px);
		backend_srv_state_changed(srv);
	}
	return 0;
}

int check_resume(struct server *srv)
{
	if (!(srv->flags & (SRV_F_CHECKED | SRV_F_CHECK_OFF)))
		return -1;
	if (srv->flags & SRV_F_CHECKED)
		return 0;
	srv->flags &= ~SRV_F_CHECK_OFF;
	srv->flags |= SRV_F_CHECKED;
	if (global.loop)
		check_start_server(srv, 0);
	return 0;
}

void check_start_all(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next) {
		int n = 0, i = 0;

		for (struct server *srv = px->servers; srv; srv = srv->next)
			n += !!(srv->flags & SRV_F_CHECKED);
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			/* Spread the first checks of a backend over one interval,
			 * at most max-spread-checks. */
			uint32_t span = srv->check.inter;

			if (global.max_spread_checks && span > global.max_spread_checks)
				span = global.max_spread_checks;
			if (srv->flags & SRV_F_CHECKED)
				check_start_server(srv, (double)span * i++ / n / 1000.0);
		}
	}
	agent_start_all();
}

void check_stop_all(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			check_stop_server(srv);
	agent_stop_all();
}

/* Resolves where each check connects; a server without a port needs one. */
static int check_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			struct check *c = &srv->check;
			int dynamic = 0;

			if (!(srv->flags & SRV_F_CHECKED))
				continue;
			if (!c->has_addr) {
				c->addr = srv->addr;
				c->addrlen = srv->addrlen;
			}
			if (!c->port)
				c->port = tcpchk_connect_port(px, &dynamic);
			if (c->port) {
				addr_set_port(&c->addr, c->port);
			} else if ((srv->flags & SRV_F_SAMEPORT) && c->addr.ss_family != AF_UNIX &&
				   !dynamic) {
				log_alert("%s:%d: server '%s/%s' has no port: 'check' needs 'port <n>'",
					  srv->conf_file, srv->conf_line, px->name, srv->name);
				errors++;
			}
			/* UP, but on probation until a check passes: the first
			 * failure marks it DOWN, as in HAProxy ("UP 1/<fall>"). */
			c->health = c->rise;
		}
	return errors;
}

/* ---- per-proxy settings ---- */

static const struct chk_px chk_px_default;

const struct chk_px *chk_px_of(const struct proxy *px)
{
	return px->chk ? px->chk : &chk_px_default;
}

struct chk_px *chk_px_w(struct proxy *px)
{
	if (!px->chk)
		px->chk = xcalloc(1, sizeof(*px->chk));
	return px->chk;
}

/* A proxy starts with a copy of its defaults' settings: what it sets
 * afterwards stays its own. */
static void chk_px_inherit(struct proxy *px, const struct proxy *def)
{
	struct chk_px *cp;

	if (!def->chk)
		return;
	cp = chk_px_w(px);
	*cp = *def->chk;
	cp->ext_cmd = def->chk->ext_cmd ? xstrdup(def->chk->ext_cmd) : NULL;
	cp->ext_path = def->chk->ext_path ? xstrdup(def->chk->ext_path) : NULL;
	cp->email = email_cfg_dup(def->chk->email);
}

static void chk_px_release(struct proxy *px)
{
	if (px->chk) {
		free(px->chk->ext_cmd);
		free(px->chk->ext_path);
		email_cfg_free(px->chk->email);
	}
	free(px->chk);
	px->chk = NULL;
}

static struct proxy_ext chk_px_ext = { chk_px_inherit, chk_px_release, NULL };

#define CHK_O_TYPES (CHK_O_TCPCHK | CHK_O_HTTPCHK | CHK_O_EXTCHK)

int check_opt_type(struct cfg_ctx *ctx, int argc, char **argv, uint64_t type)
{
	struct chk_px *cp;

	if (argc) {
		cfg_alert(ctx, "takes no argument (got '%s')", argv[0]);
		return -1;
	}
	cp = chk_px_w(ctx->px);
	if (ctx->inverted)
		cp->options &= ~type;
	else
		cp->options = (cp->options & ~CHK_O_TYPES) | type;
	return 0;
}

/* The target of plain rows: <px>'s own check settings. */
static void *chk_px_cfg(struct cfg_ctx *ctx)
{
	return chk_px_w(ctx->px);
}

static struct cfg_kw check_kws[] = {
	{ "timeout check", CFG_SEC_BE, CFG_T_TIME, CFG_PX_OFF(timeout.check), .usage = "<time>" },
	{ "option log-health-checks", CFG_SEC_BE, CFG_T_FLAG, offsetof(struct chk_px, options),
	  .mask = CHK_O_LOG_HEALTH, .base = chk_px_cfg },
	{ "spread-checks", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, spread_checks),
	  .min = 0, .max = 50, .usage = "a percentage" },
	{ "max-spread-checks", CFG_SEC_GLOBAL, CFG_T_TIME,
	  offsetof(struct global, max_spread_checks), .usage = "<time>" },
};

SLUICE_INIT(check_register)
{
	cfg_register(check_kws, ARRAY_SIZE(check_kws));
	cfg_register_postparse(check_postparse, 40);
	proxy_register_ext(&chk_px_ext);
}
