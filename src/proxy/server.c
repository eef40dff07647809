/* `server` lines, server options, and the roundrobin load balancer
 * (server.h). */
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/lexer.h>
#include <sluice/backend.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/ssl_cfg.h>
#include <sluice/srv_agent.h>
#include <sluice/srv_dns.h>
#include <sluice/srv_idle.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>
#include <sluice/units.h>

#include <stdio.h>

struct srv_kw_table {
	struct srv_kw       *kws;
	size_t               n;
	struct srv_kw_table *next;
};

static struct srv_kw_table *srv_kws;

int srv_kw_choose(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                  char **err)
{
	const struct srv_kw_choice *c = (const struct srv_kw_choice *)kw->arg;
	struct dstr names = { 0 };

	for (size_t i = 0; c[i].name; i++) {
		if (argc > 1 && strcmp(argv[1], c[i].name) == 0) {
			srv->flags = (srv->flags & ~(unsigned)kw->clr) | c[i].flags | (unsigned)kw->set;
			dstr_free(&names);
			return 2;
		}
		dstr_printf(&names, "%s'%s'", i ? (c[i + 1].name ? ", " : " or ") : "", c[i].name);
	}
	*err = argc > 1 ? str_fmt("unknown protocol '%s' (sluice knows %s)", argv[1], names.p)
			: str_fmt("expects one of %s", names.p);
	dstr_free(&names);
	return -1;
}

void srv_register_keywords(struct srv_kw *kws, size_t n)
{
	struct srv_kw_table *t = xcalloc(1, sizeof(*t));

	t->kws = kws;
	t->n = n;
	t->next = srv_kws;
	srv_kws = t;
}

void srv_kw_foreach(void (*fn)(const struct srv_kw *kw, void *arg), void *arg)
{
	for (const struct srv_kw_table *t = srv_kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			fn(&t->kws[i], arg);
}

static const struct srv_kw *srv_find_kw(const char *name, const char **suggest)
{
	struct cfg_suggest sg;

	cfg_suggest_init(&sg, name);
	for (struct srv_kw_table *t = srv_kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++) {
			if (strcmp(t->kws[i].name, name) == 0)
				return &t->kws[i];
			cfg_suggest_add(&sg, t->kws[i].name);
		}
	*suggest = cfg_suggest_pick(&sg);
	return NULL;
}

/* Applies the options argv[0..argc) to <srv> (a server, or the
 * default-server template). Returns 0, or -1 with <err> allocated (the
 * caller reports it and frees it). */
static int srv_apply_options(struct server *srv, int argc, char **argv, char **err)
{
	for (int i = 0; i < argc; ) {
		const char *sug;
		const struct srv_kw *kw = srv_find_kw(argv[i], &sug);
		char *e = NULL;
		int used;

		if (!kw) {
			/* Its arguments cannot be told from options: stop here. */
			*err = str_fmt("unknown option '%s'%s%s%s", argv[i],
				       sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
			return -1;
		}
		used = kw->parse ? kw->parse(srv, kw, argc - i, argv + i, &e) :
		       cfg_opt_int_at(srv, kw->off, kw->min, kw->max, argc - i, argv + i, &e);
		if (used < 0) {
			*err = str_fmt("option '%s': %s", argv[i], e ? e : "invalid value");
			free(e);
			return -1;
		}
		i += used;
	}
	return 0;
}

static int srv_parse_options(struct cfg_ctx *ctx, struct server *srv, const char *name,
                             int argc, char **argv)
{
	char *err = NULL;

	if (srv_apply_options(srv, argc, argv, &err) == 0)
		return 0;
	cfg_alert(ctx, "%s: %s", name, err);
	free(err);
	return -1;
}

/* Settings of a server line with no default-server. */
static void srv_init_defaults(struct server *srv)
{
	srv->weight = srv->uweight = 1;
	srv->pool_max_conn = -1;
	srv->max_reuse = -1;
	srv->pool_purge_delay = 5000;
}

/* The default-server template of <px>, created on first use. */
static struct server *srv_template(struct proxy *px)
{
	if (!px->defsrv) {
		px->defsrv = xcalloc(1, sizeof(*px->defsrv));
		srv_init_defaults(px->defsrv);
		check_init(&px->defsrv->check, px->defsrv);
	}
	return px->defsrv;
}

/* default-server [options]: what the following server lines start from. */
static int kw_default_server(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return srv_parse_options(ctx, srv_template(ctx->px), "default-server", argc, argv);
}

/* The port written after a host name in <addr> ("name:80"), 0 if none. */
static uint16_t srv_host_port(const char *addr)
{
	const char *c = strrchr(addr, ':');
	char *end;
	long v;

	if (!c)
		return 0;
	v = strtol(c + 1, &end, 10);
	return *end || v < 1 || v > 65535 ? 0 : (uint16_t)v;
}

/* The host name of address <addr> as written ("name:80"), lower case, or
 * NULL when it is not a host name (allocated). */
static char *srv_host_of(const char *addr)
{
	const char *c = strrchr(addr, ':');
	char name[DNS_NAME_MAX + 1];
	size_t len = c ? (size_t)(c - addr) : strlen(addr);

	if (dns_name_norm(addr, len, name) == -1)
		return NULL;
	return xstrdup(name);
}

/* A host name at start-up: tries <srv>'s init-addr methods in order
 * ("last,libc" by default; "last" is the server-state file, applied later
 * by load-server-state-from-file, so skipped here). "none" leaves the
 * server without an address, in maintenance until one is set. Returns 0,
 * or -1 with <err> allocated. */
static int srv_init_addr(struct server *srv, const char *addr, char **err)
{
	static const uint8_t dflt[SRV_IA_MAX] = { SRV_IA_LAST, SRV_IA_LIBC };
	const uint8_t *m = srv->init_addr[0] ? srv->init_addr : dflt;
	struct addr_spec as;
	char *e = NULL;

	for (int i = 0; i < SRV_IA_MAX && m[i] != SRV_IA_END; i++) {
		switch (m[i]) {
		case SRV_IA_LIBC:
			free(e);
			e = NULL;
			if (addr_parse(addr, &as, ADDR_F_PORT_OPTIONAL | ADDR_F_RESOLVE, &e) == 0) {
				srv->addr = as.ss;
				srv->addrlen = as.len;
				if (as.port_lo == 0)
					srv->flags |= SRV_F_SAMEPORT;
				return 0;
			}
			break;
		case SRV_IA_IP:
			memset(&srv->addr, 0, sizeof(srv->addr));
			memcpy(&srv->addr, &srv->init_ip[i], sizeof(srv->init_ip[i]));
			srv->addrlen = srv->addr.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
				       sizeof(struct sockaddr_in);
			addr_set_port(&srv->addr, srv_host_port(addr));
			if (!srv_host_port(addr))
				srv->flags |= SRV_F_SAMEPORT;
			free(e);
			return 0;
		case SRV_IA_NONE:
			srv->flags |= SRV_F_RMAINT;
			srv->addr.ss_family = AF_INET;
			srv->addrlen = sizeof(struct sockaddr_in);
			addr_set_port(&srv->addr, srv_host_port(addr));
			free(e);
			return 0;
		default:
			break;
		}
	}
	/* HAProxy's words; a syntax error (a bad port) says more */
	*err = e && !strstr(e, "could not resolve") ? e :
	       str_fmt("could not resolve address '%s'", addr);
	if (*err == e)
		return -1;
	free(e);
	return -1;
}

/* What "add server" cannot take, checked before <srv> joins <px>. Returns 1
 * with <err> allocated, or 0. At start-up the post-parse checks report the
 * same cases with the file and line. */
static int srv_runtime_refused(const struct proxy *px, const struct server *srv, char **err)
{
	for (const struct server *q = px->servers; q && srv->id; q = q->next)
		if (q->id == srv->id) {
			/* two servers with one id would make "show stat", the
			 * server-state file and stick tables mix them up */
			*err = str_fmt("id %d is taken by server '%s/%s': a backend's server "
				       "ids must be unique.", srv->id, px->name, q->name);
			return 1;
		}
	if (srv->track_name) {
		/* tracking is resolved at start-up only: it would be ignored */
		*err = str_fmt("'track' is not supported by 'add server' (declare the "
			       "server in the configuration).");
		return 1;
	}
	return 0;
}

/* Creates server <name> at <addr> in <px>, from its default-server
 * template, then applies the options. Returns the server (appended to <px>),
 * or NULL with <err> allocated. <config>: at start-up, host names may be
 * resolved (the runtime API never blocks on DNS), and a server whose options
 * failed is still declared (with <err> set) so that later lines naming it
 * do not add errors of their own. */
static struct server *server_create(struct proxy *px, const char *name, const char *addr,
                                    int argc, char **argv, int config, char **err)
{
	struct server *srv, **tail;
	struct addr_spec as;
	char *aerr = NULL;

	for (srv = px->servers; srv; srv = srv->next)
		if (strcmp(srv->name, name) == 0) {
			*err = str_fmt("server '%s' is already declared at %s:%d", name,
				       srv->conf_file, srv->conf_line);
			return NULL;
		}
	/* A host name is resolved once the options (init-addr) are known. */
	if (addr_parse(addr, &as, ADDR_F_PORT_OPTIONAL | ADDR_F_UNIX_OK, &aerr) == -1) {
		if (!config) {
			*err = aerr;
			return NULL;
		}
		memset(&as, 0, sizeof(as));
		as.kind = ADDR_K_INET;
		as.port_lo = 1;   /* srv_init_addr() decides */
	}
	srv = xcalloc(1, sizeof(*srv));
	if (px->defsrv)
		*srv = *px->defsrv;   /* flat settings only: names are set below */
	else
		srv_init_defaults(srv);
	srv->next = NULL;
	if (srv->track_name)
		srv->track_name = xstrdup(srv->track_name);
	if (srv->redir)
		srv->redir = xstrdup(srv->redir);
	srv->idle = NULL;
	srv->n_idle = 0;
	srv->px = px;
	srv->name = xstrdup(name);
	srv->addr_str = xstrdup(addr);
	srv->addr = as.ss;
	srv->addrlen = as.len;
	if (as.kind == ADDR_K_INET && as.port_lo == 0)
		srv->flags |= SRV_F_SAMEPORT;
	if (px->defsrv) {
		srv->check.srv = srv;
		srv->check.fd = -1;
	} else {
		check_init(&srv->check, srv);
	}
	srv->fqdn = NULL;
	srv_dns_dup(srv);
	if (srv_apply_options(srv, argc, argv, err) == -1 && !config)
		goto discard;
	if (!config && (srv_runtime_refused(px, srv, err) || srv_src_inherit(srv, err) == -1 ||
			srv_dns_runtime_init(srv, err) == -1))
		goto discard;
	if (aerr)
		srv->fqdn = srv_host_of(addr);
	if (aerr && !*err && srv->fqdn && srv_dns_is_srv_label(srv, srv->fqdn)) {
		/* filled from SRV records: no address, no port until then */
		srv->flags |= SRV_F_RMAINT;
		srv->addr.ss_family = AF_INET;
		srv->addrlen = sizeof(struct sockaddr_in);
		free(srv->addr_str);
		srv->addr_str = xstrdup("");
	} else if (aerr && !*err && srv_init_addr(srv, addr, err) == 0) {
		char text[80];

		/* show stat gives the address found, none when there is none */
		free(srv->addr_str);
		srv->addr_str = xstrdup((srv->flags & SRV_F_RMAINT) ? "" :
					addr_to_str(&srv->addr, text, sizeof(text)));
	}
	free(aerr);
	for (tail = &px->servers; *tail; tail = &(*tail)->next)
		;
	*tail = srv;
	px->nsrv++;
	return srv;

discard:
	/* nothing refers to it yet: the backend is left as it was */
	srv_dns_release(srv);
	free(srv->fqdn);
	free(srv->name);
	free(srv->addr_str);
	free(srv->track_name);
	free(srv->redir);
	ssl_srv_free(srv);
	conn_src_release(&srv->src, srv);
	free(srv);
	return NULL;
}

/* server NAME ADDR[:PORT] [options] */
static int kw_server(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct server *srv;
	char *err = NULL, *addr;

	if (argc < 2) {
		cfg_alert(ctx, "expects <name> <address>[:<port>] [options]");
		return -1;
	}
	addr = cfg_env_expand(argv[1]);   /* as HAProxy does, even unquoted */
	srv = server_create(ctx->px, argv[0], addr ? addr : argv[1], argc - 2, argv + 2, 1, &err);
	free(addr);
	if (srv) {
		srv->conf_file = xstrdup(ctx->file);
		srv->conf_line = ctx->line;
	}
	if (err) {
		cfg_alert(ctx, "server '%s': %s", argv[0], err);
		free(err);
		return -1;
	}
	return 0;
}

struct server *server_add_implied(struct proxy *px, const char *name, const char *addr,
                                  char **err)
{
	struct server *def = px->defsrv, *srv;

	px->defsrv = NULL;
	srv = server_create(px, name, addr, 0, NULL, 1, err);
	px->defsrv = def;
	if (srv) {
		srv->conf_file = xstrdup(px->conf_file);
		srv->conf_line = px->conf_line;
	}
	return srv;
}

/* server-template PREFIX <n>|<a>-<b> ADDR[:PORT] [options]: servers PREFIXa..b */
static int kw_server_template(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	long lo = 1, hi;
	char *end;

	if (argc < 3) {
		cfg_alert(ctx, "expects <prefix> <count>|<first>-<last> <address>[:<port>] [options]");
		return -1;
	}
	hi = strtol(argv[1], &end, 10);
	if (*end == '-') {
		lo = hi;
		hi = strtol(end + 1, &end, 10);
	}
	if (*end || lo < 0 || hi < lo || hi - lo >= 10000) {
		cfg_alert(ctx, "'%s': expects a count or a range such as 1-5 (at most 10000 servers)",
			  argv[1]);
		return -1;
	}
	for (long i = lo; i <= hi; i++) {
		char name[256], *err = NULL;
		struct server *srv;

		snprintf(name, sizeof(name), "%s%ld", argv[0], i);
		srv = server_create(ctx->px, name, argv[2], argc - 3, argv + 3, 1, &err);
		if (srv) {
			srv->conf_file = xstrdup(ctx->file);
			srv->conf_line = ctx->line;
		}
		if (err) {
			cfg_alert(ctx, "server '%s': %s", name, err);
			free(err);
			return -1;
		}
	}
	return 0;
}

static int srv_weight(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
		      char **err)
{
	long v;

	if (cfg_opt_int(argc, argv, 0, 256, &v, err) == -1)
		return -1;
	srv->weight = srv->uweight = (int)v;
	return 2;
}

/* on-marked-down shutdown-sessions | on-marked-up shutdown-backup-sessions:
 * the row's .set is the behaviour's flag. */
static int srv_on_marked(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                         char **err)
{
	const char *want = kw->set == SRV_F_DOWN_KILL ? "shutdown-sessions"
						       : "shutdown-backup-sessions";

	if (argc < 2 || strcmp(argv[1], want) != 0) {
		*err = str_fmt("expects '%s'", want);
		return -1;
	}
	srv->flags |= (unsigned)kw->set;
	return 2;
}

/* disabled, enabled, backup, check, send-proxy[-v2]: the row's flags. */
static int srv_flag(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                    char **err)
{
	srv->flags = (srv->flags & ~(unsigned)kw->clr) | (unsigned)kw->set;
	return 1;
}

/* inter, fastinter, downinter <time>: milliseconds at the row's .off in
 * struct server (rise and fall are integer rows). */
static int srv_check_time(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	const char *e = "must not be zero";
	uint32_t ms = 0;

	if (argc < 2) {
		*err = str_fmt("expects a time");
		return -1;
	}
	if (parse_time_ms(argv[1], 1, &ms, &e) == -1 || ms == 0) {
		*err = str_fmt("expects a time such as 2s, got '%s': %s", argv[1], e);
		return -1;
	}
	*(uint32_t *)((char *)srv + kw->off) = ms;
	return 2;
}

/* port <port>: where checks connect (the server's address, another port). */
static int srv_check_port(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			  char **err)
{
	long v;

	if (cfg_opt_int(argc, argv, 1, 65535, &v, err) == -1)
		return -1;
	srv->check.port = (uint16_t)v;
	return 2;
}

/* addr <ip>: where checks connect instead of the server's address. */
static int srv_check_addr(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			  char **err)
{
	struct addr_spec as;

	if (argc < 2) {
		*err = str_fmt("expects an IP address");
		return -1;
	}
	if (addr_parse(argv[1], &as, ADDR_F_PORT_OPTIONAL | ADDR_F_RESOLVE, err) == -1)
		return -1;
	srv->check.addr = as.ss;
	srv->check.addrlen = as.len;
	srv->check.has_addr = 1;
	if (as.port_lo)
		srv->check.port = as.port_lo;
	return 2;
}

/* slowstart <time> */
static int srv_slowstart_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			    char **err)
{
	const char *e = "invalid";
	uint32_t ms = 0;

	if (argc < 2 || parse_time_ms(argv[1], 1, &ms, &e) == -1) {
		*err = str_fmt("expects a time such as 30s, got '%s': %s", argc > 1 ? argv[1] : "",
			       e);
		return -1;
	}
	srv->slowstart = ms;
	return 2;
}

/* redir <prefix>: GET and HEAD requests get a 302 to <prefix><path>
 * instead of reaching the server (src/http/ana.c). */
static int srv_redir_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			char **err)
{
	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects a URL prefix, such as http://img.example.com");
		return -1;
	}
	if (strpbrk(argv[1], "\r\n")) {
		*err = str_fmt("a Location value holds no line break");
		return -1;
	}
	free(srv->redir);
	srv->redir = xstrdup(argv[1]);
	return 2;
}

/* log-proto legacy|octet-count: the framing of log messages sent to a
 * server of a ring section (src/admin/ring_cfg.c takes it there); a proxy's
 * server is sent no log message. */
static int srv_log_proto_kw(struct server *srv, const struct srv_kw *kw, int argc,
			    char **argv, char **err)
{
	*err = str_fmt("not supported on a proxy's server by sluice: it frames the log messages "
		       "sent to the servers of a 'ring' section, where it is accepted (a proxy's "
		       "server is sent no log message)");
	return -1;
}

/* track [<backend>/]<server>: resolved at post-parse. */
static int srv_track_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			char **err)
{
	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects [<backend>/]<server>");
		return -1;
	}
	if (!srv->px) {
		*err = str_fmt("not supported on 'default-server' lines");
		return -1;
	}
	free(srv->track_name);
	srv->track_name = xstrdup(argv[1]);
	return 2;
}

/* init-addr {last|libc|none|<ip>}[,...]: how a host name gets its address
 * at start-up. */
static int srv_init_addr_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			    char **err)
{
	char list[256], *save = NULL, *w;
	int n = 0;

	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects a comma-separated list of 'last', 'libc', 'none' or IP "
			       "addresses");
		return -1;
	}
	snprintf(list, sizeof(list), "%s", argv[1]);
	memset(srv->init_addr, SRV_IA_END, sizeof(srv->init_addr));
	for (w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		struct addr_spec as;
		char *e = NULL;

		if (n == SRV_IA_MAX) {
			*err = str_fmt("at most %d methods", SRV_IA_MAX);
			return -1;
		}
		if (strcmp(w, "last") == 0) {
			srv->init_addr[n++] = SRV_IA_LAST;
		} else if (strcmp(w, "libc") == 0) {
			srv->init_addr[n++] = SRV_IA_LIBC;
		} else if (strcmp(w, "none") == 0) {
			srv->init_addr[n++] = SRV_IA_NONE;
		} else if (addr_parse(w, &as, ADDR_F_PORT_OPTIONAL, &e) == 0 && !as.port_lo) {
			memcpy(&srv->init_ip[n], &as.ss, sizeof(srv->init_ip[n]));
			srv->init_addr[n++] = SRV_IA_IP;
		} else {
			free(e);
			*err = str_fmt("'%s' is neither 'last', 'libc', 'none' nor an IP address", w);
			return -1;
		}
	}
	return 2;
}

/* ---- slow start ---- */

int srv_ramp_weight(int uweight, uint32_t period_ms, double elapsed_ms)
{
	double full = (double)uweight * SRV_EW_SCALE, w;

	if (uweight <= 0)
		return 0;
	if (!period_ms || elapsed_ms >= period_ms)
		return (int)full;
	if (elapsed_ms < 0)
		elapsed_ms = 0;
	w = full * elapsed_ms / period_ms;
	return w < 1 ? 1 : (int)w;
}

int srv_throttle(const struct server *srv)
{
	if (!srv->ss_start || srv->uweight <= 0 || !server_usable(srv))
		return -1;
	/* rounded up: a server that gets anything shows at least 1% */
	return (int)(((int64_t)srv->eweight * 100 + srv->uweight * SRV_EW_SCALE - 1) /
		     (srv->uweight * SRV_EW_SCALE));
}

static void srv_slowstart_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct server *srv = (struct server *)((char *)w - offsetof(struct server, ss_timer));

	lb_recalc(srv->px);   /* ends the ramp once the period is over */
	if (!srv->ss_start)
		ev_timer_stop(loop, w);
}

void srv_slowstart_begin(struct server *srv)
{
	double tick;

	/* static algorithms (static-rr, hashes, first) keep full weights */
	if (!srv->slowstart || !global.loop ||
	    (srv->px->lb.algo != LB_ROUNDROBIN && srv->px->lb.algo != LB_LEASTCONN))
		return;
	srv->ss_start = tick_ev_now();
	/* a twentieth of the period, between 10ms and 1s */
	tick = srv->slowstart / 20000.0;
	tick = tick < 0.01 ? 0.01 : tick > 1.0 ? 1.0 : tick;
	ev_timer_stop(global.loop, &srv->ss_timer);
	ev_timer_init(&srv->ss_timer, srv_slowstart_cb, tick, tick);
	ev_timer_start(global.loop, &srv->ss_timer);
}

/* Called by lb_recalc() for each server: its effective weight now. */
void srv_update_eweight(struct server *srv)
{
	if (srv->ss_start && global.loop) {
		double el = (tick_ev_now() - srv->ss_start) * 1000.0;

		if (el >= srv->slowstart || !server_usable(srv)) {
			srv->ss_start = 0;   /* over, or interrupted (a new ramp follows) */
		}
	} else {
		srv->ss_start = 0;
	}
	srv->eweight = srv->ss_start ?
		srv_ramp_weight(srv->uweight, srv->slowstart,
				(tick_ev_now() - srv->ss_start) * 1000.0) :
		srv->uweight * SRV_EW_SCALE;
}

/* ---- minconn / fullconn ---- */

int backend_fullconn(const struct proxy *be)
{
	long sum = 0;

	if (be->fullconn)
		return be->fullconn;
	for (const struct proxy *fe = global.proxies; fe; fe = fe->next)
		if ((fe->cap & PR_CAP_FE) && fe->defbe == be)
			sum += proxy_fe_maxconn(fe);
	return sum / 10 > 0 ? (int)(sum / 10) : 1;
}

int srv_dynamic_maxconn(const struct server *srv)
{
	const struct proxy *be = srv->px;
	int full, dyn;

	if (!srv->maxconn || !srv->minconn || srv->minconn >= srv->maxconn)
		return srv->maxconn;
	full = backend_fullconn(be);
	if (be->beconn >= full)
		return srv->maxconn;
	dyn = (int)((int64_t)srv->maxconn * be->beconn / full);
	return dyn > srv->minconn ? dyn : srv->minconn;
}

static struct srv_kw server_kws[] = {
	{ "slowstart", .parse = srv_slowstart_kw },
	{ "track", .parse = srv_track_kw },
	{ "redir", .parse = srv_redir_kw },
	{ "log-proto", .parse = srv_log_proto_kw },
	{ "init-addr", .parse = srv_init_addr_kw },
	{ "maxqueue", .off = offsetof(struct server, maxqueue), .min = 0, .max = 10000000 },
	{ "minconn", .off = offsetof(struct server, minconn), .min = 0, .max = 10000000 },
	{ "weight", .parse = srv_weight },
	{ "id", .off = offsetof(struct server, id), .min = 1, .max = 0x7fffffff },
	{ "maxconn", .off = offsetof(struct server, maxconn), .min = 0, .max = 10000000 },
	{ "on-marked-down", .parse = srv_on_marked, .set = SRV_F_DOWN_KILL },
	{ "on-marked-up", .parse = srv_on_marked, .set = SRV_F_UP_KILL_BACKUP },
	{ "disabled", .parse = srv_flag, .set = SRV_F_MAINT },
	{ "enabled", .parse = srv_flag, .clr = SRV_F_MAINT },
	{ "backup", .parse = srv_flag, .set = SRV_F_BACKUP },
	{ "check", .parse = srv_flag, .set = SRV_F_CHECKED },
	/* the no-* forms undo what default-server set */
	{ "no-check", .parse = srv_flag, .clr = SRV_F_CHECKED },
	{ "no-backup", .parse = srv_flag, .clr = SRV_F_BACKUP },
	{ "non-stick", .parse = srv_flag, .set = SRV_F_NON_STICK },
	{ "check-via-socks4", .parse = srv_flag, .set = SRV_F_CHECK_SOCKS4 },
	{ "stick", .parse = srv_flag, .clr = SRV_F_NON_STICK },
	{ "no-send-proxy", .parse = srv_flag, .clr = SRV_F_SEND_PROXY },
	{ "no-send-proxy-v2", .parse = srv_flag, .clr = SRV_F_SEND_PROXY_V2 },
	{ "send-proxy", .parse = srv_flag, .set = SRV_F_SEND_PROXY, .clr = SRV_F_SEND_PROXY_V2 },
	{ "send-proxy-v2", .parse = srv_flag, .set = SRV_F_SEND_PROXY_V2,
	  .clr = SRV_F_SEND_PROXY },
	{ "inter", .parse = srv_check_time, .off = offsetof(struct server, check.inter) },
	{ "fastinter", .parse = srv_check_time, .off = offsetof(struct server, check.fastinter) },
	{ "downinter", .parse = srv_check_time, .off = offsetof(struct server, check.downinter) },
	{ "rise", .off = offsetof(struct server, check.rise), .min = 1, .max = 1000000 },
	{ "fall", .off = offsetof(struct server, check.fall), .min = 1, .max = 1000000 },
	{ "port", .parse = srv_check_port },
	{ "addr", .parse = srv_check_addr },
};

static struct cfg_kw server_cfg_kws[] = {
	{ "server", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0, .parse = kw_server,
	  .usage = "<name> <address>[:<port>] [options]" },
	{ "default-server", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_default_server,
	  .usage = "[options]" },
	{ "server-template", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_server_template, .usage = "<prefix> <count>|<a>-<b> <address> [options]" },
};

/* Resolves <srv>'s "track" line: the server, in its own backend unless
 * named as backend/server. Returns 0 or -1 (reported). */
static int srv_resolve_track(struct server *srv)
{
	const char *name = srv->track_name, *slash = strchr(name, '/');
	struct proxy *px = srv->px;
	struct server *t;

	if (slash) {
		char be[256];

		snprintf(be, sizeof(be), "%.*s", (int)(slash - name), name);
		px = proxy_find(be, PR_CAP_BE);
		if (!px) {
			log_alert("%s:%d: server '%s/%s': unable to find required backend '%s' for "
				  "tracking", srv->conf_file, srv->conf_line, srv->px->name, srv->name,
				  be);
			return -1;
		}
		name = slash + 1;
	}
	for (t = px->servers; t && strcmp(t->name, name) != 0; t = t->next)
		;
	if (!t) {
		log_alert("%s:%d: server '%s/%s': unable to find required server '%s/%s' for "
			  "tracking", srv->conf_file, srv->conf_line, srv->px->name, srv->name,
			  px->name, name);
		return -1;
	}
	if (srv->flags & SRV_F_CHECKED) {
		log_alert("%s:%d: server '%s/%s': unable to enable checks and tracking at the same "
			  "time", srv->conf_file, srv->conf_line, srv->px->name, srv->name);
		return -1;
	}
	srv->track = t;
	return 0;
}

/* Checks the tracking chain that starts at <srv> (resolved): it must end
 * at a server with checks, without looping. Links <srv> to the server it
 * tracks. Returns 0 or -1 (reported). */
static int srv_check_track_chain(struct server *srv)
{
	struct server *t = srv->track;
	int hops = 0;

	while (t->track && t != srv && hops++ < 100000)
		t = t->track;
	if (t == srv || t->track) {
		log_alert("%s:%d: server '%s/%s': unable to track '%s/%s' as it belongs to a "
			  "tracking chain looping back to '%s/%s'", srv->conf_file, srv->conf_line,
			  srv->px->name, srv->name, srv->track->px->name, srv->track->name,
			  srv->px->name, srv->name);
		return -1;
	}
	if (!(t->flags & SRV_F_CHECKED)) {
		log_alert("%s:%d: server '%s/%s': unable to use '%s/%s' for tracking as it does not "
			  "have checks enabled", srv->conf_file, srv->conf_line, srv->px->name,
			  srv->name, t->px->name, t->name);
		return -1;
	}
	srv->next_tracker = srv->track->trackers;
	srv->track->trackers = srv;
	return 0;
}

static int server_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			if (srv->track_name && srv_resolve_track(srv) == -1)
				errors++;
			if (srv->redir && px->mode != PR_MODE_HTTP)
				log_warning("%s:%d: server '%s/%s': 'redir' ignored: it answers HTTP "
					    "requests, and the backend is in mode tcp", srv->conf_file,
					    srv->conf_line, px->name, srv->name);
		}
	if (!errors)
		for (struct proxy *px = global.proxies; px; px = px->next)
			for (struct server *srv = px->servers; srv; srv = srv->next)
				if (srv->track && srv_check_track_chain(srv) == -1)
					errors++;
	/* A tracker of a server disabled in the configuration starts DOWN. */
	if (!errors)
		for (struct proxy *px = global.proxies; px; px = px->next)
			for (struct server *srv = px->servers; srv; srv = srv->next) {
				const struct server *t = srv->track;

				while (t && !(t->flags & (SRV_F_MAINT | SRV_F_DOWN)))
					t = t->track;
				if (t)
					srv->flags |= SRV_F_DOWN;
			}

	for (struct proxy *px = global.proxies; px; px = px->next) {
		int next_id = 1;

		for (struct server *srv = px->servers; srv; srv = srv->next) {
			if (!srv->id) {
				for (;;) {
					struct server *q;

					for (q = px->servers; q && q->id != next_id; q = q->next)
						;
					if (!q)
						break;
					next_id++;
				}
				srv->id = next_id++;
			}
			srv->last_change = global.start_time;
			srv->conf_admin = srv->flags & (SRV_F_MAINT | SRV_F_DRAIN);
			srv->conf_addr = srv->addr;
			for (struct server *q = srv->next; q; q = q->next)
				if (q->id == srv->id) {
					log_alert("%s:%d: server '%s/%s' has the same id %d as server '%s'",
						  q->conf_file, q->conf_line, px->name, q->name, q->id,
						  srv->name);
					errors++;
				}
		}
		px->last_change = global.start_time;
		lb_recalc(px);
	}
	return errors;
}

/* ---- runtime API ---- */

struct server *cli_server(struct cli_ctx *ctx, const char *arg)
{
	char be[256];
	const char *slash = arg ? strchr(arg, '/') : NULL;
	struct proxy *px;

	if (!slash || (size_t)(slash - arg) >= sizeof(be)) {
		dstr_printf(&ctx->out, "Require 'backend/server'.\n");
		return NULL;
	}
	snprintf(be, sizeof(be), "%.*s", (int)(slash - arg), arg);
	px = proxy_find(be, PR_CAP_BE);
	if (!px) {
		dstr_printf(&ctx->out, "No such backend.\n");
		return NULL;
	}
	for (struct server *srv = px->servers; srv; srv = srv->next)
		if (strcmp(srv->name, slash + 1) == 0)
			return srv;
	dstr_printf(&ctx->out, "No such server.\n");
	return NULL;
}

/* Logs an administrative state change and the servers left, as HAProxy. */
static void server_admin_log(struct server *srv, const char *what)
{
	struct proxy *px = srv->px;

	lb_recalc(px);
	srv->last_change = tick_wall();
	log_event(LOG_L_WARNING, "Server %s/%s %s. %u active and %u backup servers %s.",
		  px->name, srv->name, what, px->srv_act, px->srv_bck,
		  px->srv_act + px->srv_bck ? "online" : "left");
	if (!px->srv_act && !px->srv_bck)
		log_event(LOG_L_ALERT, "backend '%s' has no server available!", srv->px->name);
	if (global.loop)
		backend_srv_state_changed(srv);
}

static void server_set_admin(struct server *srv, unsigned flag, int on)
{
	if (!!(srv->flags & flag) == on)
		return;
	if (on)
		srv->flags |= flag;
	else
		srv->flags &= ~flag;
	if (flag == SRV_F_MAINT && !on && !(srv->flags & SRV_F_DOWN))
		srv_slowstart_begin(srv);   /* back from maintenance */
	if (flag == SRV_F_MAINT)
		server_admin_log(srv, on ? "is going DOWN for maintenance" :
				 "is UP (leaving forced maintenance)");
	else
		server_admin_log(srv, on ? "enters drain mode" : "is UP/READY (leaving forced drain)");
	if (flag == SRV_F_MAINT)
		check_track_sync(srv);
}

int server_set_state(struct server *srv, const char *state)
{
	if (strcmp(state, "ready") == 0) {
		server_set_admin(srv, SRV_F_MAINT, 0);
		server_set_admin(srv, SRV_F_DRAIN, 0);
	} else if (strcmp(state, "drain") == 0) {
		server_set_admin(srv, SRV_F_MAINT, 0);
		server_set_admin(srv, SRV_F_DRAIN, 1);
	} else if (strcmp(state, "maint") == 0) {
		server_set_admin(srv, SRV_F_MAINT, 1);
	} else {
		return -1;
	}
	return 0;
}

/* "N" or "N%" of the initial weight. Returns 0 or -1 (message written). */
static int server_set_weight(struct cli_ctx *ctx, struct server *srv, const char *arg)
{
	char *end;
	long v = arg ? strtol(arg, &end, 10) : -1;

	if (!arg || end == arg || (*end && strcmp(end, "%") != 0)) {
		dstr_printf(&ctx->out, "Require <weight> or <weight%%>.\n");
		return -1;
	}
	if (*end == '%') {
		if (v < 0) {
			dstr_printf(&ctx->out, "Relative weight must be positive.\n");
			return -1;
		}
		v = MIN(256, (long)srv->weight * v / 100);
	} else if (v < 0 || v > 256) {
		dstr_printf(&ctx->out, "Absolute weight can only be between 0 and 256 inclusive.\n");
		return -1;
	}
	srv->uweight = (int)v;
	srv->last_change = tick_wall();
	lb_recalc(srv->px);
	return 0;
}

static void (*server_addr_hooks[8])(struct server *srv);

void server_addr_hook_register(void (*fn)(struct server *srv))
{
	for (size_t i = 0; i < ARRAY_SIZE(server_addr_hooks); i++)
		if (!server_addr_hooks[i]) {
			server_addr_hooks[i] = fn;
			return;
		}
	BUG_ON(1, "server_addr_hook_register: more than 8 hooks");
}

void server_set_address(struct server *srv, const struct sockaddr_storage *ss, socklen_t len,
                        uint16_t port)
{
	char text[80];

	if (!port)
		port = addr_get_port(&srv->addr);
	srv->addr = *ss;
	srv->addrlen = len;
	addr_set_port(&srv->addr, port);
	srv->flags &= ~SRV_F_SAMEPORT;
	if ((srv->flags & SRV_F_CHECKED) && !srv->check.has_addr) {
		srv->check.addr = srv->addr;
		srv->check.addrlen = srv->addrlen;
		if (srv->check.port)
			addr_set_port(&srv->check.addr, srv->check.port);
	}
	free(srv->addr_str);
	srv->addr_str = xstrdup(addr_to_str(&srv->addr, text, sizeof(text)));
	/* what is kept open still goes to the old address */
	srv_idle_purge(srv, 0);
	for (size_t i = 0; i < ARRAY_SIZE(server_addr_hooks) && server_addr_hooks[i]; i++)
		server_addr_hooks[i](srv);
	if (srv->flags & SRV_F_RMAINT)
		server_set_rmaint(srv, 0, NULL);
}

void server_set_rmaint(struct server *srv, int on, const char *why)
{
	struct proxy *px = srv->px;
	int was_usable = server_usable(srv);

	if (!!(srv->flags & SRV_F_RMAINT) == on)
		return;
	if (on)
		srv->flags |= SRV_F_RMAINT;
	else
		srv->flags &= ~SRV_F_RMAINT;
	if (!px)
		return;
	lb_recalc(px);
	srv->last_change = tick_wall();
	if (on) {
		log_event_px_lv(&px->loggers, LOG_L_WARNING, LOG_L_ALERT, "Server %s/%s is going "
				"DOWN for maintenance (%s). %u active and %u backup servers left. %u "
				"sessions active, 0 requeued, 0 remaining in queue.", px->name,
				srv->name, why, px->srv_act, px->srv_bck, srv->counters.cur_sess);
		if (!px->srv_act && !px->srv_bck && was_usable)
			log_event_px_lv(&px->loggers, LOG_L_ALERT, LOG_L_EMERG, "backend '%s' has "
					"no server available!", px->name);
	} else {
		if (!(srv->flags & (SRV_F_MAINT | SRV_F_DOWN)))
			srv_slowstart_begin(srv);
		log_event_px_lv(&px->loggers, LOG_L_WARNING, LOG_L_NOTICE, "Server %s/%s ('%s') "
				"is UP/READY (resolves again).", px->name, srv->name,
				srv->fqdn ? srv->fqdn : "");
	}
	if (global.loop)
		backend_srv_state_changed(srv);
	check_track_sync(srv);
}

/* set server BE/SRV addr <ip> [port <port>] */
static int server_set_addr(struct cli_ctx *ctx, struct server *srv, int argc, char **argv)
{
	char old_ip[64], new_ip[64], *err = NULL;
	struct addr_spec as;
	uint16_t old_port = addr_get_port(&srv->addr), port = old_port;
	long v = -1;

	if (argc < 1 || addr_parse(argv[0], &as, ADDR_F_PORT_OPTIONAL, &err) == -1 ||
	    srv->addr.ss_family == AF_UNIX) {
		free(err);
		dstr_printf(&ctx->out, "Invalid addr '%s' by 'stats socket command'\n",
			    argc > 0 ? argv[0] : "");
		return -1;
	}
	if (argc >= 3 && strcmp(argv[1], "port") == 0) {
		char *end;

		v = strtol(argv[2], &end, 10);
		if (*end || v < 1 || v > 65535) {
			dstr_printf(&ctx->out, "Invalid port '%s' by 'stats socket command'\n", argv[2]);
			return -1;
		}
		port = (uint16_t)v;
	} else if (argc > 1) {
		dstr_printf(&ctx->out, "'set server <srv> addr' expects <ip> [port <port>]\n");
		return -1;
	}
	addr_ip_str(&srv->addr, old_ip, sizeof(old_ip));
	server_set_address(srv, &as.ss, as.len, port);
	addr_ip_str(&srv->addr, new_ip, sizeof(new_ip));
	if (port != old_port)
		dstr_printf(&ctx->out, "IP changed from '%s' to '%s', port changed from '%u' to '%u' "
			    "by 'stats socket command'\n", old_ip, new_ip, old_port, port);
	else
		dstr_printf(&ctx->out, "IP changed from '%s' to '%s' by 'stats socket command'\n",
			    old_ip, new_ip);
	return 0;
}

static int cli_get_weight(struct cli_ctx *ctx, int argc, char **argv)
{
	struct server *srv = cli_server(ctx, argc > 2 ? argv[2] : NULL);

	if (!srv)
		return -1;
	dstr_printf(&ctx->out, "%d (initial %d)\n", srv->uweight, srv->weight);
	return 0;
}

static int cli_set_weight(struct cli_ctx *ctx, int argc, char **argv)
{
	struct server *srv = cli_server(ctx, argc > 2 ? argv[2] : NULL);

	return srv ? server_set_weight(ctx, srv, argc > 3 ? argv[3] : NULL) : -1;
}

/* disable server / enable server: <maint> comes from the row (one thin
 * function per row). */
static int cli_server_maint(struct cli_ctx *ctx, int argc, char **argv, int maint)
{
	struct server *srv = cli_server(ctx, argc > 2 ? argv[2] : NULL);

	if (!srv)
		return -1;
	server_set_admin(srv, SRV_F_MAINT, maint);
	return 0;
}

static int cli_disable_server(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_server_maint(ctx, argc, argv, 1);
}

static int cli_enable_server(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_server_maint(ctx, argc, argv, 0);
}

/* enable health <b>/<s>, disable health <b>/<s>: <enable> from the row. */
static int cli_health(struct cli_ctx *ctx, int argc, char **argv, int enable)
{
	struct server *srv = cli_server(ctx, argc > 2 ? argv[2] : NULL);

	if (!srv)
		return -1;
	if (argc > 3) {
		dstr_printf(&ctx->out, "'%s health' expects <backend>/<server> alone.\n", argv[0]);
		return -1;
	}
	if ((enable ? check_resume : check_pause)(srv) == -1) {
		dstr_printf(&ctx->out, "Health checks are not configured on this server, cannot "
			    "%s them.\n", argv[0]);
		return -1;
	}
	return 0;
}

static int cli_enable_health(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_health(ctx, argc, argv, 1);
}

static int cli_disable_health(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_health(ctx, argc, argv, 0);
}

/* set maxconn server <b>/<s> <n>: the server's connection limit (0: none);
 * more room hands slots to its waiters at once. */
static int cli_set_maxconn_srv(struct cli_ctx *ctx, int argc, char **argv)
{
	struct server *srv = cli_server(ctx, argc > 3 ? argv[3] : NULL);
	char *end = NULL;
	long v;

	if (!srv)
		return -1;
	v = argc == 5 ? strtol(argv[4], &end, 10) : -1;
	if (argc != 5 || !*argv[4] || *end || v < 0 || v > 10000000) {
		dstr_printf(&ctx->out, "'set maxconn server' expects an integer from 0 (no limit) "
			    "to 10000000.\n");
		return -1;
	}
	/* minconn equal to maxconn means a fixed limit: both follow */
	if (srv->minconn == srv->maxconn)
		srv->minconn = (int)v;
	srv->maxconn = (int)v;
	backend_srv_freed(srv);
	return 0;
}

/* set server BE/SRV health up|stopping|down: the operational state its
 * checks would give, at once (the checks go on and may change it again). */
static int server_set_health(struct cli_ctx *ctx, struct server *srv, const char *val)
{
	if (srv->track) {
		dstr_printf(&ctx->out, "cannot change health on a tracking server.\n");
		return -1;
	}
	if (!(srv->flags & SRV_F_CHECKED)) {
		dstr_printf(&ctx->out, "Health checks are not enabled on this server.\n");
		return -1;
	}
	if (strcmp(val, "down") == 0) {
		srv->check.health = 0;
		if (!(srv->flags & SRV_F_DOWN))
			check_server_down(srv, NULL);
	} else if (strcmp(val, "up") == 0 || strcmp(val, "stopping") == 0) {
		srv->check.health = srv->check.rise + srv->check.fall - 1;
		if ((srv->flags & SRV_F_DOWN) && !(srv->flags & SRV_F_AGENT_DOWN))
			check_server_up(srv, NULL);
		if (val[0] == 's')
			check_server_nolb(srv);
		else if (srv->flags & SRV_F_NOLB) {
			srv->flags &= ~SRV_F_NOLB;
			srv->last_change = tick_wall();
			lb_recalc(srv->px);
		}
	} else {
		dstr_printf(&ctx->out, "'set server <srv> health' expects 'up', 'stopping', or "
			    "'down'.\n");
		return -1;
	}
	return 0;
}

/* set server BE/SRV agent up|down: as if its agent had answered so. */
static int server_set_agent(struct cli_ctx *ctx, struct server *srv, const char *val)
{
	if (!(srv->flags & SRV_F_AGENT)) {
		dstr_printf(&ctx->out, "Agent checks are not enabled on this server.\n");
		return -1;
	}
	if (strcmp(val, "up") != 0 && strcmp(val, "down") != 0) {
		dstr_printf(&ctx->out, "'set server <srv> agent' expects 'up' or 'down'.\n");
		return -1;
	}
	agent_set_oper_cli(srv, val[0] == 'u');
	return 0;
}

/* The "set server <bk>/<srv> <word> ..." forms, registered by the modules
 * that own what they change (server_set_register()). */
static struct srv_set_kw *srv_set_kws;

void server_set_register(struct srv_set_kw *kws, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		kws[i].next = srv_set_kws;
		srv_set_kws = &kws[i];
	}
}

static int srv_set_weight(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
			 int argc, char **argv)
{
	return server_set_weight(ctx, srv, argc > 0 ? argv[0] : NULL);
}

static int srv_set_addr(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
			 int argc, char **argv)
{
	return server_set_addr(ctx, srv, argc, argv);
}

static int srv_set_health(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
			 int argc, char **argv)
{
	return server_set_health(ctx, srv, argc > 0 ? argv[0] : "");
}

static int srv_set_agent(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
			 int argc, char **argv)
{
	return server_set_agent(ctx, srv, argc > 0 ? argv[0] : "");
}

static int srv_set_state(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
			 int argc, char **argv)
{
	if (server_set_state(srv, argc > 0 ? argv[0] : "") == -1) {
		dstr_printf(&ctx->out, "'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n");
		return -1;
	}
	return 0;
}

static struct srv_set_kw server_set_kws[] = {
	{ "addr", .set = srv_set_addr },
	{ "agent", .set = srv_set_agent },
	{ "health", .set = srv_set_health },
	{ "state", .set = srv_set_state },
	{ "weight", .set = srv_set_weight },
};

/* set server BE/SRV <word> <args>: the row of <word> does the work. */
static int cli_set_server(struct cli_ctx *ctx, int argc, char **argv)
{
	struct server *srv = cli_server(ctx, argc > 2 ? argv[2] : NULL);
	const char *what = argc > 3 ? argv[3] : "";
	const struct srv_set_kw *kw;

	if (!srv)
		return -1;
	for (kw = srv_set_kws; kw && strcmp(kw->word, what) != 0; kw = kw->next)
		;
	if (kw)
		return kw->set(ctx, srv, kw, argc > 4 ? argc - 4 : 0, argv + 4);
	dstr_printf(&ctx->out, "usage: set server <backend>/<server>");
	for (int i = 0; ; i++) {
		/* the words in alphabetical order, as HAProxy lists them */
		const struct srv_set_kw *next = NULL;

		for (kw = srv_set_kws; kw; kw = kw->next)
			if ((!i || strcmp(kw->word, what) > 0) &&
			    (!next || strcmp(kw->word, next->word) < 0))
				next = kw;
		if (!next)
			break;
		dstr_printf(&ctx->out, "%s %s", i ? " |" : "", next->word);
		what = next->word;
	}
	dstr_printf(&ctx->out, "\n");
	return -1;
}

/* add server <bk>/<srv> <addr>[:<port>] [options]: starts in maintenance
 * ("enable server" puts it in the rotation); options and default-server
 * apply as on a configuration line; names are not resolved (no DNS at run
 * time). */
static int cli_add_server(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *arg = argc > 2 ? argv[2] : NULL, *slash = arg ? strchr(arg, '/') : NULL;
	struct proxy *px;
	struct server *srv;
	char be[256], *err = NULL;
	int id = 1;

	if (!slash || argc < 4 || (size_t)(slash - arg) >= sizeof(be)) {
		dstr_printf(&ctx->out, "Usage: add server <backend>/<server> <addr> [options]\n");
		return -1;
	}
	snprintf(be, sizeof(be), "%.*s", (int)(slash - arg), arg);
	if (!(px = proxy_find(be, PR_CAP_BE))) {
		dstr_printf(&ctx->out, "No such backend.\n");
		return -1;
	}
	for (srv = px->servers; srv; srv = srv->next)
		if (strcmp(srv->name, slash + 1) == 0) {
			dstr_printf(&ctx->out, "Already exists a server with the same name in backend.\n");
			return -1;
		}
	srv = server_create(px, slash + 1, argv[3], argc - 4, argv + 4, 0, &err);
	if (!srv) {
		dstr_printf(&ctx->out, "%s\n", err);
		free(err);
		return -1;
	}
	srv->conf_file = xstrdup("(runtime API)");
	srv->flags |= SRV_F_MAINT;
	{
		/* its words, for a reload to create it again */
		struct dstr w = { 0 };

		for (int i = 3; i < argc; i++)
			if ((i > 3 && dstr_add(&w, " ", 1) == -1) ||
			    str_cli_quote(&w, argv[i], strlen(argv[i])) == -1)
				break;
		srv->add_args = w.p ? w.p : xstrdup("");
	}
	srv->conf_admin = SRV_F_MAINT;
	for (struct server *q = px->servers; q; q = q->next)
		if (q != srv && q->id >= id)
			id = q->id + 1;
	if (!srv->id)
		srv->id = id;
	srv->last_change = tick_wall();
	srv->conf_addr = srv->addr;
	if ((srv->flags & SRV_F_CHECKED) && srv->addr.ss_family != AF_UNIX && !srv->check.has_addr) {
		srv->check.addr = srv->addr;
		srv->check.addrlen = srv->addrlen;
		if (srv->check.port)
			addr_set_port(&srv->check.addr, srv->check.port);
	}
	srv->check.health = srv->check.rise + srv->check.fall - 1;
	if (srv->flags & SRV_F_CHECKED)
		check_start_server(srv, 0.0);
	lb_recalc(px);
	dstr_printf(&ctx->out, "New server registered.\n");
	return 0;
}

/* del server <bk>/<srv>: only a server in maintenance with no connection. */
static int cli_del_server(struct cli_ctx *ctx, int argc, char **argv)
{
	struct server *srv = cli_server(ctx, argc > 2 ? argv[2] : NULL), **pp;
	struct proxy *px;

	if (!srv)
		return -1;
	px = srv->px;
	if (!(srv->flags & SRV_F_MAINT)) {
		dstr_printf(&ctx->out, "Only a server in maintenance mode can be deleted.\n");
		return -1;
	}
	/* (the multiplexed connections kept to it, HTTP/2 and FastCGI, point
	 * to it until they close: pool-purge-delay after their last request) */
	if (srv->counters.cur_sess || srv->h2_conns || srv->fcgi_conns) {
		dstr_printf(&ctx->out, "Server still has connections attached to it, cannot remove it.\n");
		return -1;
	}
	if (srv->trackers) {
		dstr_printf(&ctx->out, "Server %s/%s is still tracked by %s/%s, cannot remove it.\n",
			    px->name, srv->name, srv->trackers->px->name, srv->trackers->name);
		return -1;
	}
	if (srv->track) {
		struct server **tp = &srv->track->trackers;

		while (*tp != srv)
			tp = &(*tp)->next_tracker;
		*tp = srv->next_tracker;
	}
	if (global.loop)
		ev_timer_stop(global.loop, &srv->ss_timer);
	check_stop_server(srv);
	srv_idle_purge(srv, 0);
	stream_kill_server_cancel(srv);
	for (pp = &px->servers; *pp != srv; pp = &(*pp)->next)
		;
	*pp = srv->next;
	px->nsrv--;
	lb_recalc(px);
	if (!srv->add_args)
		server_state_note_deleted(px->name, srv->name);
	free(srv->add_args);
	srv_dns_release(srv);
	free(srv->fqdn);
	free(srv->name);
	free(srv->addr_str);
	free(srv->conf_file);
	free(srv->track_name);
	free(srv->redir);
	conn_src_release(&srv->src, srv);
	free(srv);
	dstr_printf(&ctx->out, "Server deleted.\n");
	return 0;
}

static int cli_show_backend(struct cli_ctx *ctx, int argc, char **argv)
{
	dstr_printf(&ctx->out, "# name\n");
	for (const struct proxy *px = global.proxies; px; px = px->next)
		if (px->cap & PR_CAP_BE)
			dstr_printf(&ctx->out, "%s\n", px->name);
	return 0;
}

static struct cli_kw server_cli_kws[] = {
	{ { "show", "backend", NULL }, "show backend", "list the backends", CLI_LVL_USER,
	  cli_show_backend },
	{ { "get", "weight", NULL }, "get weight <bk>/<srv>", "report a server's current and "
	  "initial weight", CLI_LVL_USER, cli_get_weight },
	{ { "set", "weight", NULL }, "set weight <bk>/<srv> <weight>[%]", "change a server's "
	  "weight (absolute, or % of the initial one)", CLI_LVL_ADMIN, cli_set_weight },
	{ { "set", "server", NULL }, "set server <bk>/<srv> <what> <value>...",
	  "set a server's state, weight, address, host name, health or agent state, its "
	  "checks' and agent's address, port and string, or its TLS",
	  CLI_LVL_ADMIN,
	  cli_set_server },
	{ { "add", "server", NULL }, "add server <bk>/<srv> <addr> [options]", "create a "
	  "server (in maintenance until enabled)", CLI_LVL_ADMIN, cli_add_server },
	{ { "del", "server", NULL }, "del server <bk>/<srv>", "remove a server in maintenance "
	  "with no connection", CLI_LVL_ADMIN, cli_del_server },
	{ { "disable", "server", NULL }, "disable server <bk>/<srv>", "put a server in "
	  "maintenance (no traffic)", CLI_LVL_ADMIN, cli_disable_server },
	{ { "enable", "server", NULL }, "enable server <bk>/<srv>", "take a server out of "
	  "maintenance", CLI_LVL_ADMIN, cli_enable_server },
	{ { "enable", "health", NULL }, "enable health <bk>/<srv>", "resume a server's health "
	  "checks", CLI_LVL_ADMIN, cli_enable_health },
	{ { "disable", "health", NULL }, "disable health <bk>/<srv>", "stop a server's health "
	  "checks (it counts as UP meanwhile)", CLI_LVL_ADMIN, cli_disable_health },
	{ { "set", "maxconn", "server", NULL }, "set maxconn server <bk>/<srv> <value>",
	  "change a server's connection limit (0: none)", CLI_LVL_ADMIN, cli_set_maxconn_srv },
};

SLUICE_INIT(server_register)
{
	srv_register_keywords(server_kws, ARRAY_SIZE(server_kws));
	cfg_register(server_cfg_kws, ARRAY_SIZE(server_cfg_kws));
	cfg_register_postparse(server_postparse, 30);
	cli_register(server_cli_kws, ARRAY_SIZE(server_cli_kws));
	server_set_register(server_set_kws, ARRAY_SIZE(server_set_kws));
}
