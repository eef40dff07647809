/* Agent checks (srv_agent.h): every agent-inter, a TCP connection to the
 * server's agent, which answers one line of words that set the server's
 * weight, its administrative state (ready, drain, maint) or its operational
 * state (up, down, fail, stopped), with an optional "#reason". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_agent.h>
#include <sluice/str.h>
#include <sluice/units.h>
#include <sluice/ticks.h>

#define AGENT_LINE_MAX 512

static void agent_io_cb(struct ev_loop *loop, ev_io *w, int revents);
static void agent_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

static void agent_arm(struct check *a, double delay)
{
	ev_timer_stop(global.loop, &a->timer);
	ev_timer_set(&a->timer, delay, 0.);
	ev_timer_start(global.loop, &a->timer);
}

static void agent_close(struct check *a)
{
	if (a->fd >= 0) {
		ev_io_stop(global.loop, &a->io);
		close(a->fd);
		a->fd = -1;
	}
	free(a->rbuf);
	a->rbuf = NULL;
	a->rlen = 0;
	a->connected = 0;
}

/* The run ends with <res> (and <info>): the next one in agent-inter. */
static void agent_done(struct check *a, enum chk_result res, const char *info)
{
	agent_close(a);
	a->result = res;
	a->code = 0;
	a->duration = tick_ev_to_ms(tick_ev_now() - a->start);
	a->last_check = tick_wall();
	snprintf(a->info, sizeof(a->info), "%s", info ? info : "");
	str_blank_ctl(a->info);   /* the agent's words */
	agent_arm(a, tick_to_ev(a->inter));
}

/* The agent no longer holds <srv> DOWN: UP again unless its own health
 * checks still say DOWN. */
static void agent_release(struct server *srv)
{
	if (!(srv->flags & SRV_F_AGENT_DOWN))
		return;
	srv->flags &= ~SRV_F_AGENT_DOWN;
	if ((srv->flags & SRV_F_DOWN) &&
	    (!(srv->flags & SRV_F_CHECKED) || srv->check.health >= srv->check.rise))
		check_server_up(srv, &srv->agent);
}

/* The operational word of a reply: "up" (1), "down"/"fail"/"stopped" (0). */
static void agent_set_oper(struct server *srv, int up, const char *word, const char *reason)
{
	struct check *a = &srv->agent;

	/* info holds 127 characters: the reason is cut to fit */
	snprintf(a->info, sizeof(a->info), "via agent : %s%s%.100s%s", word,
		 *reason ? " (" : "", reason, *reason ? ")" : "");
	a->result = up ? CHK_R_L7OK : CHK_R_L7STS;
	if (up) {
		a->health = a->rise + a->fall - 1;
		agent_release(srv);
		return;
	}
	a->health = 0;
	if (srv->flags & SRV_F_AGENT_DOWN)
		return;
	srv->flags |= SRV_F_AGENT_DOWN;
	if (!(srv->flags & SRV_F_DOWN))
		check_server_down(srv, a);
}

void agent_set_oper_cli(struct server *srv, int up)
{
	agent_set_oper(srv, up, up ? "up" : "down", "set by the runtime API");
}

int agent_apply(struct server *srv, const char *line, size_t len)
{
	char buf[AGENT_LINE_MAX], reason[AGENT_LINE_MAX] = "", *save = NULL, *w, *hash;
	int n = 0;

	len = MIN(len, sizeof(buf) - 1);
	memcpy(buf, line, len);
	buf[len] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	if ((hash = strchr(buf, '#'))) {
		char *r = hash + 1, *e;

		*hash = 0;
		while (*r == ' ' || *r == '\t')
			r++;
		for (e = r + strlen(r); e > r && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = 0;
		snprintf(reason, sizeof(reason), "%s", r);
	}
	for (w = strtok_r(buf, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		size_t wl = strlen(w);

		n++;
		if (wl > 1 && w[wl - 1] == '%') {
			char *end;
			long pct = strtol(w, &end, 10);

			if (end != w + wl - 1 || pct < 0) {
				n--;   /* not a weight: ignored */
				continue;
			}
			/* a share of the configured weight, as HAProxy's set weight N% */
			srv->uweight = (int)MIN((long)srv->weight * pct / 100, 256);
			lb_recalc(srv->px);
		} else if (strcasecmp(w, "ready") == 0 || strcasecmp(w, "drain") == 0 ||
			   strcasecmp(w, "maint") == 0) {
			char st[8];

			snprintf(st, sizeof(st), "%s", w);
			for (char *c = st; *c; c++)
				*c = (char)(*c | 0x20);
			server_set_state(srv, st);
		} else if (strcasecmp(w, "up") == 0) {
			agent_set_oper(srv, 1, "up", reason);
		} else if (strcasecmp(w, "down") == 0 || strcasecmp(w, "fail") == 0 ||
			   strcasecmp(w, "stopped") == 0) {
			agent_set_oper(srv, 0, strcasecmp(w, "fail") == 0 ? "fail" :
					       strcasecmp(w, "stopped") == 0 ? "stopped" : "down", reason);
		} else {
			n--;   /* an unknown word is ignored, as in HAProxy */
		}
	}
	return n;
}

/* The agent answered (a line, or its whole answer up to the close). */
static void agent_got_line(struct check *a)
{
	char info[sizeof(a->info)];

	a->result = CHK_R_L7OK;
	a->info[0] = 0;
	if (!agent_apply(a->srv, a->rbuf, a->rlen)) {
		agent_done(a, CHK_R_L7RSP, "Invalid agent answer");
		return;
	}
	/* "up"/"down" words leave their result and info */
	snprintf(info, sizeof(info), "%s", a->info);
	agent_done(a, a->result, info);
}

static void agent_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct check *a = container_of(w, struct check, io);

	if (!a->connected) {
		int err = 0;
		socklen_t l = sizeof(err);
		const char *send_str = a->srv->agent_send;

		if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
			err = errno;
		if (err) {
			agent_done(a, CHK_R_CON, strerror(err));
			return;
		}
		a->connected = 1;
		if (*send_str && send(a->fd, send_str, strlen(send_str), MSG_NOSIGNAL) == -1) {
			agent_done(a, CHK_R_SOCKERR, strerror(errno));
			return;
		}
		ev_io_stop(loop, &a->io);
		ev_io_set(&a->io, a->fd, EV_READ);
		ev_io_start(loop, &a->io);
		return;
	}
	if (!a->rbuf)
		a->rbuf = xcalloc(1, AGENT_LINE_MAX);
	for (;;) {
		ssize_t n = recv(a->fd, a->rbuf + a->rlen, AGENT_LINE_MAX - 1 - a->rlen, 0);

		if (n > 0) {
			a->rlen += (size_t)n;
			if (memchr(a->rbuf, '\n', a->rlen) || a->rlen >= AGENT_LINE_MAX - 1)
				break;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == -1) {
			agent_done(a, CHK_R_SOCKERR, strerror(errno));
			return;
		}
		break;   /* closed: what came is the answer */
	}
	if (!a->rlen) {
		agent_done(a, CHK_R_L7RSP, "Empty agent answer");
		return;
	}
	agent_got_line(a);
}

static void agent_run(struct check *a)
{
	struct server *srv = a->srv;
	struct sockaddr_storage ss = a->has_addr ? a->addr : srv->addr;
	socklen_t len = a->has_addr ? a->addrlen : srv->addrlen;
	uint32_t tmo = srv->px->timeout.connect;
	int fd;

	a->start = tick_ev_now();
	addr_set_port(&ss, a->port);
	fd = srv->src ? conn_src_socket(srv->src, ss.ss_family, NULL) :
	     socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		agent_done(a, CHK_R_SOCKERR, strerror(errno));
		return;
	}
	a->fd = fd;
	a->connected = 0;
	if (connect(fd, (struct sockaddr *)&ss, len) == -1 && errno != EINPROGRESS) {
		agent_done(a, CHK_R_CON, strerror(errno));
		return;
	}
	ev_io_set(&a->io, fd, EV_WRITE);
	ev_io_start(global.loop, &a->io);
	/* the whole exchange: timeout check, else inter (bounded by connect) */
	agent_arm(a, tick_to_ev(srv->px->timeout.check ? srv->px->timeout.check :
				tmo ? MIN(tmo, a->inter) : a->inter));
}

static void agent_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct check *a = container_of(w, struct check, timer);

	if (a->fd >= 0)
		agent_done(a, a->connected ? CHK_R_L7TOUT : CHK_R_TOUT, "");
	else
		agent_run(a);
}

static void agent_start(struct server *srv, double delay)
{
	struct check *a = &srv->agent;

	a->srv = srv;
	a->fd = -1;
	ev_init(&a->io, agent_io_cb);
	ev_init(&a->timer, agent_timer_cb);
	agent_arm(a, delay);
}

static void agent_stop(struct server *srv)
{
	struct check *a = &srv->agent;

	if (!global.loop)
		return;
	ev_timer_stop(global.loop, &a->timer);
	agent_close(a);
}

void agent_start_all(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			if ((srv->flags & SRV_F_AGENT) && !(srv->flags & SRV_F_AGENT_OFF))
				agent_start(srv, tick_to_ev(random() % (srv->agent.inter + 1)));
}

void agent_stop_all(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			if (srv->flags & SRV_F_AGENT)
				agent_stop(srv);
}

/* ---- server options ---- */

/* The agent of <srv>, with HAProxy's defaults (inter 2s, rise 2, fall 3)
 * once any agent keyword is seen. */
static struct check *srv_agent_of(struct server *srv)
{
	struct check *a = &srv->agent;

	if (!a->inter) {
		a->inter = 2000;
		a->rise = 2;
		a->fall = 3;
		a->health = a->rise + a->fall - 1;
	}
	return a;
}

/* The agent of <srv> for a keyword that takes an argument, NULL (with
 * <err>) when it is missing or empty. */
static struct check *srv_agent_arg(struct server *srv, int argc, char **argv, char **err)
{
	struct check *a = srv_agent_of(srv);

	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects an argument");
		return NULL;
	}
	return a;
}

/* agent-check, no-agent-check: the row's flags. */
static int srv_agent_flag(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	srv_agent_of(srv);
	srv->flags = (srv->flags & ~(unsigned)kw->clr) | (unsigned)kw->set;
	return 1;
}

static int srv_agent_port(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	struct check *a = srv_agent_arg(srv, argc, argv, err);
	char *end;
	long v;

	if (!a)
		return -1;
	v = strtol(argv[1], &end, 10);
	if (*end || v < 1 || v > 65535) {
		*err = str_fmt("expects a port (1..65535)");
		return -1;
	}
	a->port = (uint16_t)v;
	return 2;
}

static int srv_agent_addr(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	struct check *a = srv_agent_arg(srv, argc, argv, err);
	struct addr_spec as;

	if (!a || addr_parse(argv[1], &as, ADDR_F_PORT_OPTIONAL, err) == -1)
		return -1;
	a->addr = as.ss;
	a->addrlen = as.len;
	a->has_addr = 1;
	return 2;
}

static int srv_agent_inter(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                           char **err)
{
	struct check *a = srv_agent_arg(srv, argc, argv, err);
	const char *e = NULL;
	uint32_t ms;

	if (!a)
		return -1;
	if (parse_time_ms(argv[1], 1, &ms, &e) == -1 || !ms) {
		*err = str_fmt("expects a time, not zero");
		return -1;
	}
	a->inter = ms;
	return 2;
}

static int srv_agent_send(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	if (!srv_agent_arg(srv, argc, argv, err))
		return -1;
	if (strlen(argv[1]) >= sizeof(srv->agent_send)) {
		*err = str_fmt("at most %zu characters", sizeof(srv->agent_send) - 1);
		return -1;
	}
	strcpy(srv->agent_send, argv[1]);
	return 2;
}

static struct srv_kw agent_kws[] = {
	{ "agent-check", .parse = srv_agent_flag, .set = SRV_F_AGENT },
	{ "no-agent-check", .parse = srv_agent_flag, .clr = SRV_F_AGENT },
	{ "agent-port", .parse = srv_agent_port },
	{ "agent-addr", .parse = srv_agent_addr },
	{ "agent-inter", .parse = srv_agent_inter },
	{ "agent-send", .parse = srv_agent_send },
};

/* agent-check needs a port: HAProxy's start-up error. */
static int agent_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			srv->agent.srv = srv;
			srv->agent.fd = -1;
			if ((srv->flags & SRV_F_AGENT) && !srv->agent.port) {
				log_alert("%s:%d: server '%s/%s': agent-check requires 'agent-port'",
					  srv->conf_file, srv->conf_line, px->name, srv->name);
				errors++;
			}
		}
	return errors;
}

/* ---- runtime API ---- */

/* enable agent <b>/<s>, disable agent <b>/<s>: <enable> comes from the row
 * (one thin function per row). */
static int cli_agent(struct cli_ctx *ctx, int argc, char **argv, int enable)
{
	struct server *srv = cli_server(ctx, argc > 2 ? argv[2] : NULL);

	if (!srv)
		return -1;
	if (!(srv->flags & SRV_F_AGENT)) {
		dstr_printf(&ctx->out, "Agent was not configured on this server, cannot %s it.\n",
			    argv[0]);
		return -1;
	}
	if (enable) {
		if (srv->flags & SRV_F_AGENT_OFF) {
			srv->flags &= ~SRV_F_AGENT_OFF;
			agent_start(srv, 0);
		}
		return 0;
	}
	srv->flags |= SRV_F_AGENT_OFF;
	agent_stop(srv);
	agent_release(srv);   /* a stopped agent holds nothing down any more */
	return 0;
}

static int cli_enable_agent(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_agent(ctx, argc, argv, 1);
}

static int cli_disable_agent(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_agent(ctx, argc, argv, 0);
}

static struct cli_kw agent_cli_kws[] = {
	{ { "enable", "agent", NULL }, "enable agent <bk>/<srv>", "start the agent checks of a "
	  "server", CLI_LVL_ADMIN, cli_enable_agent },
	{ { "disable", "agent", NULL }, "disable agent <bk>/<srv>", "stop the agent checks of a "
	  "server", CLI_LVL_ADMIN, cli_disable_agent },
};

SLUICE_INIT(srv_agent_register)
{
	srv_register_keywords(agent_kws, ARRAY_SIZE(agent_kws));
	cfg_register_postparse(agent_postparse, 45);
	cli_register(agent_cli_kws, ARRAY_SIZE(agent_cli_kws));
}
