/* "log-forward" sections: a syslog relay. Messages received on its
 * datagram (dgram-bind, UDP) and stream (bind, TCP with RFC 6587 framing)
 * listeners are read as RFC 5424 or RFC 3164 (syslog.h) and sent to its log
 * targets, each in its own format (log_relay()). Nothing blocks: sockets
 * are non-blocking and the targets drop what they cannot take. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>
#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/log_forward.h>
#include <sluice/str.h>
#include <sluice/syslog.h>
#include <sluice/ticks.h>
#include <sluice/units.h>

#define LF_MSG_MAX   65535  /* the longest message read (a datagram, a frame) */
#define LF_DGRAM_BURST 64   /* datagrams read per wake-up before others run */

struct logfwd;

struct lf_listener {
	struct lf_listener *next;
	struct logfwd      *fwd;
	int                 dgram;
	struct addr_spec    as;
	char               *text;      /* as written, for messages */
	int                 fd;
	ev_io               io;
	int                 conf_line;
};

struct lf_conn {
	struct lf_conn *next, *prev;
	struct logfwd  *fwd;
	int             fd;
	ev_io           io;
	ev_timer        timer;         /* timeout client */
	size_t          have;
	char            buf[LF_MSG_MAX + 16];
};

struct logfwd {
	struct logfwd      *next;
	char               *name;
	char               *conf_file;
	int                 conf_line;
	struct log_list     loggers;
	struct lf_listener *lis;
	int                 maxconn, backlog;
	uint32_t            timeout_client;   /* ms, 0: none */
	int                 nconn;
	int                 paused;           /* at maxconn: not accepting */
	struct lf_conn     *conns;
};

static struct {
	struct logfwd  *head, **tail;
	struct logfwd  *cur;          /* the section being read */
	char            dgram[LF_MSG_MAX + 1];
} lf = { NULL, &lf.head, NULL, { 0 } };

/* ---- configuration ---- */

static int sec_logfwd(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct logfwd *f;

	lf.cur = NULL;
	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name and nothing else");
		return -1;
	}
	for (f = lf.head; f; f = f->next)
		if (strcmp(f->name, argv[0]) == 0) {
			cfg_alert(ctx, "log-forward '%s' is already declared at %s:%d", argv[0],
				  f->conf_file, f->conf_line);
			return -1;
		}
	f = xcalloc(1, sizeof(*f));
	f->name = xstrdup(argv[0]);
	f->conf_file = xstrdup(ctx->file);
	f->conf_line = ctx->line;
	f->maxconn = 10;   /* HAProxy's default */
	*lf.tail = f;
	lf.tail = &f->next;
	lf.cur = f;
	return 0;
}

static int sec_logfwd_end(struct cfg_ctx *ctx)
{
	lf.cur = NULL;
	return 0;
}

/* bind|dgram-bind <address> (the row's arg: 1 for datagrams) */
static int kw_lf_bind(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	int dgram = (int)ctx->kw_row->arg;
	struct lf_listener *l, **tail;
	struct addr_spec as;
	char *err = NULL;

	if (!lf.cur)
		return -1;
	if (argc < 1) {
		cfg_alert(ctx, "expects an address");
		return -1;
	}
	if (argc > 1) {
		cfg_alert(ctx, "'%s' is not supported on a log-forward listener (sluice takes the "
			  "address alone: no TLS, no other bind option)", argv[1]);
		return -1;
	}
	if (addr_parse(argv[0], &as, (dgram ? 0 : ADDR_F_UNIX_OK) | ADDR_F_ENV | ADDR_F_RESOLVE,
		       &err) == -1 || as.kind == ADDR_K_FD ||
	    (as.kind == ADDR_K_INET && !as.port_lo)) {
		cfg_alert(ctx, "invalid address '%s': %s", argv[0],
			  err ? err : as.kind == ADDR_K_FD ? "fd@ is not supported here" :
			  "a port is needed");
		free(err);
		return -1;
	}
	l = xcalloc(1, sizeof(*l));
	l->fwd = lf.cur;
	l->dgram = dgram;
	l->as = as;
	l->text = xstrdup(argv[0]);
	l->fd = -1;
	l->conf_line = ctx->line;
	for (tail = &lf.cur->lis; *tail; tail = &(*tail)->next)
		;
	*tail = l;
	return 0;
}

/* maxconn|backlog <n> (the row's arg: the field's offset) */
static int kw_lf_int(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	long v;
	const char *e;

	if (!lf.cur)
		return -1;
	if (argc != 1 || parse_int(argv[0], 1, 1000000, &v, &e) == -1) {
		cfg_alert(ctx, "expects an integer from 1 to 1000000");
		return -1;
	}
	*(int *)((char *)lf.cur + ctx->kw_row->arg) = (int)v;
	return 0;
}

static int kw_lf_timeout(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	uint32_t ms;
	const char *e;

	if (!lf.cur)
		return -1;
	if (argc != 1 || parse_time_ms(argv[0], 1, &ms, &e) == -1) {
		cfg_alert(ctx, "expects a time");
		return -1;
	}
	lf.cur->timeout_client = ms;
	return 0;
}

static int kw_lf_log(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	if (!lf.cur)
		return -1;
	return log_kw(ctx, &lf.cur->loggers, argc, argv);
}

static int lf_postparse(void)
{
	int errors = 0;

	for (struct logfwd *f = lf.head; f; f = f->next) {
		errors += log_resolve_rings(&f->loggers);
		/* as HAProxy: a relay that receives or forwards nothing is allowed */
		if (!f->lis)
			log_warning("%s:%d: log-forward '%s' has no 'bind' nor 'dgram-bind': it "
				    "receives nothing", f->conf_file, f->conf_line, f->name);
		if (!f->loggers.head && !f->loggers.use_global)
			log_warning("%s:%d: log-forward '%s' has no 'log' target: what it receives "
				    "is dropped", f->conf_file, f->conf_line, f->name);
	}
	return errors;
}

/* ---- receiving ---- */

static void lf_message(struct logfwd *f, const char *p, size_t len)
{
	struct syslog_msg m;

	syslog_parse(p, len, &m);
	log_count_received();
	log_relay(&f->loggers, &m);
}

static void lf_dgram_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct lf_listener *l = w->data;

	for (int i = 0; i < LF_DGRAM_BURST; i++) {
		ssize_t n = recv(l->fd, lf.dgram, sizeof(lf.dgram) - 1, MSG_DONTWAIT);

		if (n < 0)
			return;   /* EAGAIN: all read; anything else: the next datagram */
		lf_message(l->fwd, lf.dgram, (size_t)n);
	}
}

static void lf_accept_cb(struct ev_loop *loop, ev_io *w, int revents);

static void lf_conn_free(struct lf_conn *c)
{
	struct logfwd *f = c->fwd;

	ev_io_stop(global.loop, &c->io);
	ev_timer_stop(global.loop, &c->timer);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		f->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
	global.jobs--;
	if (f->nconn-- == f->maxconn && f->paused) {
		f->paused = 0;
		for (struct lf_listener *l = f->lis; l; l = l->next)
			if (!l->dgram)
				ev_io_start(global.loop, &l->io);
	}
}

static void lf_conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct lf_conn *c = w->data;
	ssize_t n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, MSG_DONTWAIT);
	size_t off = 0;

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		lf_conn_free(c);
		return;
	}
	c->have += (size_t)n;
	for (;;) {
		const char *msg;
		size_t ml;
		ssize_t r = syslog_frame(c->buf + off, c->have - off, LF_MSG_MAX, &msg, &ml);

		if (r < 0) {
			lf_conn_free(c);   /* not syslog framing: nothing to resynchronise on */
			return;
		}
		if (!r)
			break;
		lf_message(c->fwd, msg, ml);
		off += (size_t)r;
	}
	memmove(c->buf, c->buf + off, c->have - off);
	c->have -= off;
	if (c->fwd->timeout_client)
		ev_timer_again(loop, &c->timer);
}

static void lf_conn_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	lf_conn_free(w->data);
}

static void lf_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct lf_listener *l = w->data;
	struct logfwd *f = l->fwd;

	while (f->nconn < f->maxconn) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct lf_conn *c;

		if (fd == -1)
			return;
		c = xcalloc(1, sizeof(*c));
		c->fwd = f;
		c->fd = fd;
		ev_io_init(&c->io, lf_conn_cb, fd, EV_READ);
		c->io.data = c;
		ev_io_start(loop, &c->io);
		ev_init(&c->timer, lf_conn_timer_cb);
		c->timer.data = c;
		if (f->timeout_client) {
			c->timer.repeat = tick_to_ev(f->timeout_client);
			ev_timer_again(loop, &c->timer);
		}
		c->next = f->conns;
		if (f->conns)
			f->conns->prev = c;
		f->conns = c;
		f->nconn++;
		global.jobs++;
	}
	/* maxconn reached: the others wait in the backlog */
	f->paused = 1;
	for (struct lf_listener *o = f->lis; o; o = o->next)
		if (!o->dgram)
			ev_io_stop(loop, &o->io);
}

/* ---- start ---- */

int log_forward_bind(void)
{
	for (struct logfwd *f = lf.head; f; f = f->next) {
		if (log_open(&f->loggers) == -1)
			return -1;
		for (struct lf_listener *l = f->lis; l; l = l->next) {
			int one = 1;

			if (l->as.kind == ADDR_K_UNIX)
				unlink(((struct sockaddr_un *)&l->as.ss)->sun_path);
			l->fd = socket(l->as.ss.ss_family, (l->dgram ? SOCK_DGRAM : SOCK_STREAM) |
				       SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (l->fd == -1 ||
			    /* a reload's new process binds while the old one still
			     * listens, as for frontends */
			    (l->as.kind == ADDR_K_INET &&
			     (setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
			      setsockopt(l->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) == -1)) ||
			    bind(l->fd, (struct sockaddr *)&l->as.ss, l->as.len) == -1 ||
			    (!l->dgram && listen(l->fd, f->backlog ? f->backlog : f->maxconn) == -1)) {
				log_alert("%s:%d: log-forward '%s': cannot %s '%s': %s", f->conf_file,
					  l->conf_line, f->name, l->dgram ? "dgram-bind" : "bind",
					  l->text, strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

void log_forward_start(void)
{
	for (struct logfwd *f = lf.head; f; f = f->next)
		for (struct lf_listener *l = f->lis; l; l = l->next) {
			ev_io_init(&l->io, l->dgram ? lf_dgram_cb : lf_accept_cb, l->fd, EV_READ);
			l->io.data = l;
			ev_io_start(global.loop, &l->io);
		}
}

/* ---- registration ---- */

static struct cfg_section lf_sections[] = {
	{ "log-forward", CFG_SEC_LOGFWD, sec_logfwd, sec_logfwd_end, NULL },
};

static struct cfg_kw lf_kws[] = {
	{ "bind", CFG_SEC_LOGFWD, CFG_T_FUNC, 0, .parse = kw_lf_bind, .usage = "<address>",
	  .arg = 0 },
	{ "dgram-bind", CFG_SEC_LOGFWD, CFG_T_FUNC, 0, .parse = kw_lf_bind, .usage = "<address>",
	  .arg = 1 },
	{ "log", CFG_SEC_LOGFWD, CFG_T_FUNC, 0, .parse = kw_lf_log,
	  .usage = "global | <target> [len <n>] [format <fmt>] [sample <ranges>:<size>] "
		   "<facility> [<max> [<min>]]" },
	{ "maxconn", CFG_SEC_LOGFWD, CFG_T_FUNC, 0, .parse = kw_lf_int, .usage = "<conns>",
	  .arg = offsetof(struct logfwd, maxconn) },
	{ "backlog", CFG_SEC_LOGFWD, CFG_T_FUNC, 0, .parse = kw_lf_int, .usage = "<conns>",
	  .arg = offsetof(struct logfwd, backlog) },
	{ "timeout client", CFG_SEC_LOGFWD, CFG_T_FUNC, 0, .parse = kw_lf_timeout,
	  .usage = "<time>" },
};

SLUICE_INIT(log_forward_register)
{
	cfg_register_sections(lf_sections, ARRAY_SIZE(lf_sections));
	cfg_register(lf_kws, ARRAY_SIZE(lf_kws));
	cfg_register_postparse(lf_postparse, 46);
}
