/* Runtime-API dumps of what the process holds and waits for: show fd (every
 * descriptor the loop watches, with its owner), show tasks and show threads
 * (the armed timers and pending events of the one loop), show servers conn
 * (server connection pools) and show schema json (the layout of the JSON
 * forms of show info and show stat). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <ev.h>
#include <sluice/addr.h>
#include <sluice/cli.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/fcgi.h>
#include <sluice/global.h>
#include <sluice/h2.h>
#include <sluice/listener.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/srv_side.h>
#include <sluice/str.h>
#include <sluice/stream.h>

/* ---- show fd ---- */

struct fd_row {
	int   fd;
	char *text;   /* everything after "fd : " */
};

struct fd_dump {
	struct fd_row *rows;
	size_t         n, cap;
};

static void fd_add(struct fd_dump *d, int fd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fd_add(struct fd_dump *d, int fd, const char *fmt, ...)
{
	struct dstr t = { 0 };
	va_list ap;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	dstr_vprintf(&t, fmt, ap);
	va_end(ap);
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->rows = xrealloc(d->rows, d->cap * sizeof(*d->rows));
	}
	d->rows[d->n].fd = fd;
	d->rows[d->n].text = t.p ? t.p : xstrdup("");
	d->n++;
}

/* "R-", "-W", "RW" or "--": what the loop waits for on the descriptor. */
static const char *fd_ev(int events)
{
	static const char *const s[4] = { "--", "R-", "-W", "RW" };

	return s[((events & EV_READ) ? 1 : 0) | ((events & EV_WRITE) ? 2 : 0)];
}

static const char *fd_xprt(const struct conn *c)
{
	return c->ssl ? "SSL" : "RAW";
}

static void fd_listeners(struct fd_dump *d, struct listener *list, const char *fe)
{
	for (struct listener *li = list; li; li = li->next) {
		char key[160];

		if (!listener_key(li, key, sizeof(key))[0]) {
			/* inherited (fd@N): what the socket is bound to */
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			char a[128];

			if (li->fd >= 0 && getsockname(li->fd, (struct sockaddr *)&ss, &sl) == 0)
				snprintf(key, sizeof(key), "%s@%s", ss.ss_family == AF_UNIX ? "unix" :
					 "tcp", addr_to_str(&ss, a, sizeof(a)));
			else
				snprintf(key, sizeof(key), "fd@%d", li->fd);
		}
		fd_add(d, li->fd, "ev=%s owner=%p type=listener fe=%s l.st=%s addr=%s",
		       fd_ev(ev_is_active(&li->io) ? EV_READ : 0), (void *)li, fe,
		       (li->flags & LI_F_DISABLED) ? "DIS" : (li->flags & LI_F_PAUSED) ? "FULL" :
		       "RDY", key);
	}
}

static void fd_stream_side(struct fd_dump *d, const struct stream *s, const struct conn *c,
                           int back)
{
	const struct server *srv = back ? s->ss.conn_srv : NULL;

	/* an HTTP/2 stream's side is the connection's socket: listed once, as h2 */
	if (c->fd < 0 || (c->flags & CO_F_MUX))
		return;
	fd_add(d, c->fd, "ev=%s owner=%p type=stream back=%d strm=%llu fe=%s be=%s srv=%s "
	       "st=%s xprt=%s%s", fd_ev(c->events), (void *)s, back,
	       (unsigned long long)s->uniq_id, s->fe->name, s->be ? s->be->name : "-",
	       srv ? srv->name : "-", ss_state_str(s->ss.st), fd_xprt(c),
	       back && s->ss.park ? " kept=parked" : back && s->ss.st == SS_KEPT ? " kept=private" : "");
}

static void fd_h2(const struct conn *c, int back, const struct proxy *px,
                  const struct server *srv, int nstreams, void *arg)
{
	fd_add(arg, c->fd, "ev=%s owner=%p type=h2 back=%d %s=%s%s%s streams=%d xprt=%s",
	       fd_ev(c->events), (const void *)c, back, back ? "be" : "fe", px->name,
	       srv ? " srv=" : "", srv ? srv->name : "", nstreams, fd_xprt(c));
}

static void fd_fcgi(const struct conn *c, const struct proxy *px, const struct server *srv,
                    int nreqs, int timer_on, void *arg)
{
	fd_add(arg, c->fd, "ev=%s owner=%p type=fcgi be=%s srv=%s reqs=%d xprt=%s",
	       fd_ev(c->events), (const void *)c, px->name, srv->name, nreqs, fd_xprt(c));
}

struct fd_idle_arg {
	struct fd_dump      *d;
	const struct server *srv;
};

static void fd_idle(int fd, int reused, int parked, double idle_s, void *arg)
{
	struct fd_idle_arg *a = arg;

	if (parked)
		return;   /* its stream lists it (kept=parked) */
	fd_add(a->d, fd, "ev=R- owner=%p type=idle back=1 be=%s srv=%s reused=%d idle=%.0fms",
	       (const void *)a->srv, a->srv->px->name, a->srv->name, reused, idle_s * 1000.0);
}

static void fd_check(struct fd_dump *d, const struct server *srv, const struct check *c,
                     const char *type)
{
	if (c->fd < 0)
		return;
	fd_add(d, c->fd, "ev=%s owner=%p type=%s be=%s srv=%s st=%s xprt=%s",
	       fd_ev(ev_is_active(&c->io) ? c->io.events & (EV_READ | EV_WRITE) : 0),
	       (const void *)c, type, srv->px->name, srv->name,
	       c->connected ? "EST" : "CON", c->ssl ? "SSL" : "RAW");
}

static void fd_cli(int fd, int events, int timer_on, const struct cli_ctx *ctx, void *arg)
{
	fd_add(arg, fd, "ev=%s owner=%p type=cli level=%s", fd_ev(events), (const void *)ctx,
	       ctx->level == CLI_LVL_ADMIN ? "admin" : ctx->level == CLI_LVL_OPERATOR ?
	       "operator" : "user");
}

static int fd_row_cmp(const void *a, const void *b)
{
	const struct fd_row *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

/* show fd [<fd>]: one line per descriptor, in order. */
static int cli_show_fd(struct cli_ctx *ctx, int argc, char **argv)
{
	struct fd_dump d = { 0 };
	long only = -1;

	if (argc > 3) {
		dstr_printf(&ctx->out, "'show fd' expects at most one descriptor number.\n");
		return -1;
	}
	if (argc == 3) {
		char *end;

		errno = 0;
		only = strtol(argv[2], &end, 10);
		if (!*argv[2] || *end || only < 0 || only > INT32_MAX || errno) {
			dstr_printf(&ctx->out, "'show fd' expects a descriptor number (0 or more).\n");
			return -1;
		}
	}
	for (struct proxy *px = global.proxies; px; px = px->next) {
		fd_listeners(&d, px->listeners, px->name);
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			struct fd_idle_arg a = { &d, srv };

			srv_idle_foreach(srv, fd_idle, &a);
			fd_check(&d, srv, &srv->check, "check");
			fd_check(&d, srv, &srv->agent, "agent");
		}
	}
	fd_listeners(&d, global.cli_listeners, "GLOBAL");
	for (struct stream *s = stream_first(); s; s = s->next) {
		fd_stream_side(&d, s, &s->cli, 0);
		fd_stream_side(&d, s, &s->srv, 1);
	}
	h2_conn_foreach(fd_h2, &d);
	fcgi_conn_foreach(fd_fcgi, &d);
	cli_client_foreach(fd_cli, &d);
	if (d.n)
		qsort(d.rows, d.n, sizeof(*d.rows), fd_row_cmp);
	for (size_t i = 0; i < d.n; i++) {
		if (only < 0 || d.rows[i].fd == only)
			dstr_printf(&ctx->out, "%5d : %s\n", d.rows[i].fd, d.rows[i].text);
		free(d.rows[i].text);
	}
	free(d.rows);
	return 0;
}

/* ---- show tasks, show threads ---- */

/* The armed timers of the loop, by owner. */
struct task_counts {
	int stream, h2, fcgi, check, agent, slowstart, cli;
};

static void task_cli(int fd, int events, int timer_on, const struct cli_ctx *ctx, void *arg)
{
	((struct task_counts *)arg)->cli += !!timer_on;
}

static void task_h2(const struct conn *c, int back, const struct proxy *px,
                    const struct server *srv, int nstreams, void *arg)
{
	/* each HTTP/2 connection keeps its idle/keep-alive timer armed */
	((struct task_counts *)arg)->h2++;
}

static void task_fcgi(const struct conn *c, const struct proxy *px, const struct server *srv,
                      int nreqs, int timer_on, void *arg)
{
	((struct task_counts *)arg)->fcgi += !!timer_on;
}

static int task_count(struct task_counts *t)
{
	memset(t, 0, sizeof(*t));
	for (struct stream *s = stream_first(); s; s = s->next)
		t->stream += ev_is_active(&s->timer) ? 1 : 0;
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			t->check += ev_is_active(&srv->check.timer) ? 1 : 0;
			t->agent += ev_is_active(&srv->agent.timer) ? 1 : 0;
			t->slowstart += ev_is_active(&srv->ss_timer) ? 1 : 0;
		}
	h2_conn_foreach(task_h2, t);
	fcgi_conn_foreach(task_fcgi, t);
	cli_client_foreach(task_cli, t);
	return t->stream + t->h2 + t->fcgi + t->check + t->agent + t->slowstart + t->cli;
}

/* show tasks: the events ready to run, then the timers armed, by owner. */
static int cli_show_tasks(struct cli_ctx *ctx, int argc, char **argv)
{
	struct task_counts t;
	int total;
	const struct { const char *name; const int *n; } rows[] = {
		{ "stream_timer", &t.stream }, { "h2_conn_timer", &t.h2 },
		{ "fcgi_conn_timer", &t.fcgi },
		{ "check_timer", &t.check }, { "agent_timer", &t.agent },
		{ "slowstart_timer", &t.slowstart }, { "cli_timer", &t.cli },
	};

	if (argc > 2) {
		dstr_printf(&ctx->out, "'show tasks' takes no argument (got '%s').\n", argv[2]);
		return -1;
	}
	total = task_count(&t);
	dstr_printf(&ctx->out, "Running tasks: %u (1 threads)\n", ev_pending_count(global.loop));
	dstr_printf(&ctx->out, "  function                     places     %%    lat_tot   lat_avg\n");
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (*rows[i].n)
			dstr_printf(&ctx->out, "  %-26s %8d %6.1f      -         -\n", rows[i].name,
				    *rows[i].n, 100.0 * *rows[i].n / total);
	return 0;
}

static unsigned long long ts_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) == -1)
		return 0;
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* show threads: the one thread, in HAProxy's layout ('>' marks the thread
 * running the command). */
static int cli_show_threads(struct cli_ctx *ctx, int argc, char **argv)
{
	struct task_counts t;
	int armed;
	unsigned pending;

	if (argc > 2) {
		dstr_printf(&ctx->out, "'show threads' takes no argument (got '%s').\n", argv[2]);
		return -1;
	}
	armed = task_count(&t);
	pending = ev_pending_count(global.loop);
	dstr_printf(&ctx->out, ">Thread 1 : id=0x%llx act=1 glob=0 wq=%d rq=%u tl=0 tlsz=0 "
		    "rqsz=%u\n", (unsigned long long)(uintptr_t)pthread_self(), armed, pending,
		    pending);
	dstr_printf(&ctx->out, "      stuck=0 prof=0 harmless=0 wantrdv=0\n");
	dstr_printf(&ctx->out, "      cpu_ns: now=%llu\n", ts_ns(CLOCK_THREAD_CPUTIME_ID));
	dstr_printf(&ctx->out, "      loops=%u iterations, depth=%u\n", ev_iteration(global.loop),
		    ev_depth(global.loop));
	dstr_printf(&ctx->out, "      curr_task=cli (show threads)\n");
	return 0;
}

/* ---- show servers conn ---- */

struct conn_counts {
	int safe, unsafe, idle;
};

static void srv_conn_idle(int fd, int reused, int parked, double idle_s, void *arg)
{
	struct conn_counts *c = arg;

	c->idle++;
	if (reused)
		c->safe++;
	else
		c->unsafe++;
}

static void srv_conn_h2(const struct conn *c, int back, const struct proxy *px,
                        const struct server *srv, int nstreams, void *arg)
{
	const struct server *want = ((const struct server **)arg)[0];
	int *n = ((int **)arg)[1];

	if (srv == want)
		(*n)++;
}

static void srv_conn_fcgi(const struct conn *c, const struct proxy *px,
                          const struct server *srv, int nreqs, int timer_on, void *arg)
{
	srv_conn_h2(c, 1, px, srv, nreqs, arg);
}

static void srv_conn_row(struct cli_ctx *ctx, const struct server *srv)
{
	struct conn_counts c = { 0 };
	int used = 0, h2 = 0;
	const void *h2arg[2] = { srv, &h2 };
	char ip[INET6_ADDRSTRLEN + 8];

	for (struct stream *s = stream_first(); s; s = s->next)
		if (s->srv.fd >= 0 && !(s->srv.flags & CO_F_MUX) && s->ss.conn_srv == srv &&
		    !s->ss.park)
			used++;
	h2_conn_foreach(srv_conn_h2, h2arg);
	fcgi_conn_foreach(srv_conn_fcgi, h2arg);
	used += h2;
	srv_idle_foreach(srv, srv_conn_idle, &c);
	dstr_printf(&ctx->out, "%s/%s %d/%d %s %u - %u %d %u %d %d %d %d %d %d\n",
		    srv->px->name, srv->name, srv->px->id, srv->id,
		    srv->addr.ss_family == AF_UNIX ? "unix" : addr_ip_str(&srv->addr, ip, sizeof(ip)),
		    addr_get_port(&srv->addr), srv->pool_purge_delay, used,
		    srv->counters.max_sess, used, c.unsafe, c.safe,
		    srv->pool_max_conn, c.idle, c.idle);
}

/* show servers conn [<backend>]: HAProxy's columns, one thread. */
static int cli_show_servers_conn(struct cli_ctx *ctx, int argc, char **argv)
{
	struct proxy *only = NULL;

	if (argc > 4) {
		dstr_printf(&ctx->out, "'show servers conn' expects at most a backend name.\n");
		return -1;
	}
	if (argc == 4 && !(only = proxy_find(argv[3], PR_CAP_BE))) {
		dstr_printf(&ctx->out, "Can't find backend.\n");
		return -1;
	}
	dstr_printf(&ctx->out, "# bkname/svname bkid/svid addr port - purge_delay used_cur "
		    "used_max need_est unsafe_nb safe_nb idle_lim idle_cur idle_per_thr[1]\n");
	for (struct proxy *px = global.proxies; px; px = px->next) {
		if ((only && px != only) || !(px->cap & PR_CAP_BE))
			continue;
		for (struct server *srv = px->servers; srv; srv = srv->next)
			srv_conn_row(ctx, srv);
	}
	return 0;
}

/* ---- show schema json ---- */

/* JSON Schema (draft-04) of what "show info json" and "show stat json"
 * print (admin/stats.c): either an array of info fields, or an array of
 * stat rows, each an array of the fields of one object. */
static const char schema_json[] =
"{\"$schema\":\"http://json-schema.org/draft-04/schema#\","
"\"$id\":\"https://sluice.invalid/schema/stats.json\","
"\"title\":\"sluice statistics (show info json, show stat json)\","
"\"type\":\"array\","
"\"oneOf\":["
  "{\"title\":\"Info\",\"description\":\"show info json: one element per field\","
   "\"type\":\"array\",\"items\":{\"title\":\"InfoItem\",\"type\":\"object\","
   "\"properties\":{\"field\":{\"$ref\":\"#/definitions/field\"},"
   "\"processNum\":{\"$ref\":\"#/definitions/processNum\"},"
   "\"tags\":{\"$ref\":\"#/definitions/tags\"},"
   "\"value\":{\"$ref\":\"#/definitions/typedValue\"}},"
   "\"required\":[\"field\",\"processNum\",\"tags\",\"value\"]}},"
  "{\"title\":\"Stat\",\"description\":\"show stat json: one array per frontend, "
   "listener, backend or server row\",\"type\":\"array\","
   "\"items\":{\"title\":\"StatRow\",\"type\":\"array\",\"items\":{\"title\":\"StatItem\","
   "\"type\":\"object\",\"properties\":{"
   "\"objType\":{\"enum\":[\"Frontend\",\"Backend\",\"Listener\",\"Server\"]},"
   "\"proxyId\":{\"type\":\"integer\",\"minimum\":0},"
   "\"id\":{\"type\":\"integer\",\"minimum\":0},"
   "\"field\":{\"$ref\":\"#/definitions/field\"},"
   "\"processNum\":{\"$ref\":\"#/definitions/processNum\"},"
   "\"tags\":{\"$ref\":\"#/definitions/tags\"},"
   "\"value\":{\"$ref\":\"#/definitions/typedValue\"}},"
   "\"required\":[\"objType\",\"proxyId\",\"id\",\"field\",\"processNum\",\"tags\","
   "\"value\"]}}}"
"],"
"\"definitions\":{"
  "\"field\":{\"type\":\"object\",\"properties\":{"
   "\"pos\":{\"description\":\"position of the field in the CSV or the info list\","
   "\"type\":\"integer\",\"minimum\":0},"
   "\"name\":{\"type\":\"string\"}},\"required\":[\"pos\",\"name\"]},"
  "\"processNum\":{\"description\":\"always 1: one process\",\"type\":\"integer\","
   "\"minimum\":1},"
  "\"tags\":{\"type\":\"object\",\"properties\":{"
   "\"origin\":{\"enum\":[\"Metric\",\"Status\",\"Key\",\"Config\",\"Product\","
   "\"Unknown\"]},"
   "\"nature\":{\"enum\":[\"Gauge\",\"Limit\",\"Max\",\"Rate\",\"Counter\","
   "\"Duration\",\"Age\",\"Time\",\"Name\",\"Output\",\"Avg\",\"Unknown\"]},"
   "\"scope\":{\"enum\":[\"Process\",\"Service\",\"System\",\"Unknown\"]}},"
   "\"required\":[\"origin\",\"nature\",\"scope\"]},"
  "\"typedValue\":{\"type\":\"object\",\"oneOf\":["
   "{\"$ref\":\"#/definitions/typedValue/definitions/s32Value\"},"
   "{\"$ref\":\"#/definitions/typedValue/definitions/s64Value\"},"
   "{\"$ref\":\"#/definitions/typedValue/definitions/u32Value\"},"
   "{\"$ref\":\"#/definitions/typedValue/definitions/u64Value\"},"
   "{\"$ref\":\"#/definitions/typedValue/definitions/strValue\"}],"
   "\"definitions\":{"
    "\"s32Value\":{\"properties\":{\"type\":{\"enum\":[\"s32\"]},\"value\":{"
    "\"type\":\"integer\",\"minimum\":-2147483648,\"maximum\":2147483647}},"
    "\"required\":[\"type\",\"value\"]},"
    "\"s64Value\":{\"properties\":{\"type\":{\"enum\":[\"s64\"]},\"value\":{"
    "\"type\":\"integer\",\"minimum\":-9223372036854775808,"
    "\"maximum\":9223372036854775807}},\"required\":[\"type\",\"value\"]},"
    "\"u32Value\":{\"properties\":{\"type\":{\"enum\":[\"u32\"]},\"value\":{"
    "\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295}},"
    "\"required\":[\"type\",\"value\"]},"
    "\"u64Value\":{\"properties\":{\"type\":{\"enum\":[\"u64\"]},\"value\":{"
    "\"type\":\"integer\",\"minimum\":0,\"maximum\":18446744073709551615}},"
    "\"required\":[\"type\",\"value\"]},"
    "\"strValue\":{\"properties\":{\"type\":{\"enum\":[\"str\"]},\"value\":{"
    "\"type\":\"string\"}},\"required\":[\"type\",\"value\"]}}}}}\n";

/* show schema json */
static int cli_show_schema(struct cli_ctx *ctx, int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[2], "json") != 0) {
		dstr_printf(&ctx->out, "'show schema' only supports 'json'.\n");
		return -1;
	}
	dstr_printf(&ctx->out, "%s", schema_json);
	return 0;
}

static struct cli_kw debug_cli_kws[] = {
	{ { "show", "fd", NULL }, "show fd [<fd>]", "list the descriptors the loop watches, "
	  "with their owner", CLI_LVL_OPERATOR, cli_show_fd },
	{ { "show", "tasks", NULL }, "show tasks", "count the events ready and the timers "
	  "armed, by owner", CLI_LVL_USER, cli_show_tasks },
	{ { "show", "threads", NULL }, "show threads", "show the thread's state (one thread)",
	  CLI_LVL_USER, cli_show_threads },
	{ { "show", "servers", "conn", NULL }, "show servers conn [<backend>]", "show the "
	  "servers' connections: used, idle, safe and unsafe to reuse", CLI_LVL_USER,
	  cli_show_servers_conn },
	{ { "show", "schema", NULL }, "show schema json", "the JSON schema of 'show info json' "
	  "and 'show stat json'", CLI_LVL_USER, cli_show_schema },
};

SLUICE_INIT(debug_cli_register)
{
	cli_register(debug_cli_kws, ARRAY_SIZE(debug_cli_kws));
}
