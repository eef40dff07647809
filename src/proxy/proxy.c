/* Proxy sections (defaults, frontend, backend, listen), their keywords, and
 * the post-parse checks that link frontends to backends (proxy.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/http_retry.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_dns.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>
#include <sluice/tcp_rules.h>
#include <sluice/tcpcheck.h>
#include <sluice/ticks.h>
#include <sluice/units.h>

struct proxy *proxy_find(const char *name, unsigned cap)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		if ((px->cap & cap) && strcmp(px->name, name) == 0)
			return px;
	return NULL;
}

/* The defaults section named <name> declared so far, or NULL (*<other>
 * then NULL too). As in HAProxy 2.6, a name that two of them bear is
 * ambiguous: the first one is returned in *<other> as well. */
static struct proxy *defaults_find(const char *name, struct proxy **other)
{
	struct proxy *found = NULL;

	*other = NULL;
	for (struct proxy *px = global.defaults; px; px = px->next) {
		if (!px->name || strcmp(px->name, name) != 0)
			continue;
		if (found && !*other)
			*other = found;
		found = px;
	}
	return found;
}

/* The defaults section in force: the last one declared, in any file, as
 * HAProxy applies it to the proxies that follow. */
static struct proxy *defaults_last(void)
{
	struct proxy *px = global.defaults;

	while (px && px->next)
		px = px->next;
	return px;
}

int proxy_fe_maxconn(const struct proxy *px)
{
	return px->maxconn ? px->maxconn : global.maxconn;
}

const char *proxy_mode_str(const struct proxy *px)
{
	return px->mode == PR_MODE_HTTP ? "http" : "tcp";
}

static void proxy_init_defaults(struct proxy *px)
{
	px->mode = PR_MODE_TCP;
	px->retries = 3;
	px->redispatch_every = -1;
	px->retry_on = PR_RE_CONN_FAILED;
	px->lb.algo = LB_ROUNDROBIN;
	px->lb.draws = 2;
	px->options = PR_O_SMART_ACC;
	px->max_ka_queue = -1;
}

static struct proxy_ext *proxy_exts;

int proxy_check_rules_def(const char *what, const struct proxy *(*def_of)(const struct proxy *))
{
	const unsigned both = PR_CAP_FE | PR_CAP_BE;
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		const struct proxy *def = def_of(px);

		if (!def)
			continue;
		if ((px->cap & both) == both) {
			log_alert("%s:%d: listen '%s' cannot inherit from a defaults section defining "
				  "%s rules ('%s' at %s:%d)", px->conf_file, px->conf_line, px->name,
				  what, def->name, def->conf_file, def->conf_line);
			errors++;
			continue;
		}
		for (struct proxy *q = global.proxies; q != px; q = q->next) {
			if (def_of(q) == def && (q->cap & both) != both &&
			    (q->cap & both) != (px->cap & both)) {
				log_alert("%s:%d: frontends and backends cannot inherit from the same "
					  "defaults section if it defines %s rules ('%s' at %s:%d)",
					  px->conf_file, px->conf_line, what, def->name, def->conf_file,
					  def->conf_line);
				errors++;
				break;
			}
		}
	}
	return errors;
}

void proxy_register_ext(struct proxy_ext *e)
{
	e->next = proxy_exts;
	proxy_exts = e;
}

/* Copies the inheritable settings of <def> into <px>. */
static void proxy_inherit(struct proxy *px, const struct proxy *def)
{
	px->mode = def->mode;
	px->options = def->options;
	px->timeout = def->timeout;
	px->retries = def->retries;
	px->redispatch_every = def->redispatch_every;
	px->retry_on = def->retry_on;
	px->maxconn = def->maxconn;
	px->fullconn = def->fullconn;
	px->backlog = def->backlog;
	px->fe_sps_lim = def->fe_sps_lim;
	px->max_ka_queue = def->max_ka_queue;
	px->lb = def->lb;
	px->lb.ring = NULL;
	px->lb.ring_n = 0;
	px->disabled = def->disabled;
	px->state_load = def->state_load;
	if (def->defsrv) {
		px->defsrv = xcalloc(1, sizeof(*px->defsrv));
		*px->defsrv = *def->defsrv;
		px->defsrv->check.srv = px->defsrv;
		if (def->defsrv->redir)
			px->defsrv->redir = xstrdup(def->defsrv->redir);
		srv_dns_dup(px->defsrv);   /* its own: proxies are freed before defaults */
	}
	if (def->defbe_name)
		px->defbe_name = xstrdup(def->defbe_name);
	log_list_dup(&px->loggers, &def->loggers);
	if (def->logformat_str)
		px->logformat_str = xstrdup(def->logformat_str);
	for (struct proxy_ext *e = proxy_exts; e; e = e->next)
		if (e->inherit)
			e->inherit(px, def);
}

static int proxy_name_ok(const char *name)
{
	if (!*name)
		return 0;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.:", *p))
			return 0;
	return 1;
}

static struct proxy *proxy_new(struct cfg_ctx *ctx, const char *name, unsigned cap,
                               const struct proxy *def)
{
	struct proxy *px = xcalloc(1, sizeof(*px)), **tail;

	px->name = name ? xstrdup(name) : NULL;
	px->cap = cap;
	px->conf_file = xstrdup(ctx->file);
	px->conf_line = ctx->line;
	proxy_init_defaults(px);
	if (def)
		proxy_inherit(px, def);
	tail = (cap & PR_CAP_DEF) ? &global.defaults : &global.proxies;
	while (*tail)
		tail = &(*tail)->next;
	*tail = px;
	return px;
}

/* <kind> NAME [from DEFAULTS] */
static int proxy_section_begin(struct cfg_ctx *ctx, unsigned cap, int argc, char **argv)
{
	/* Regular proxies inherit the last defaults section; a defaults
	 * section starts from scratch unless it names one with "from". */
	const struct proxy *def = (cap & PR_CAP_DEF) ? NULL : defaults_last();
	const struct proxy *implicit = def;
	const char *name = argc > 0 ? argv[0] : NULL;
	int ret = 0;

	if (cap & PR_CAP_DEF) {
		/* "defaults [NAME] [from NAME]" */
		if (name && strcmp(name, "from") == 0)
			name = NULL;
	}
	if (!(cap & PR_CAP_DEF) && !name) {
		cfg_alert(ctx, "expects a name");
		ret = -1;
		name = "";
	} else if (name && !proxy_name_ok(name)) {
		cfg_alert(ctx, "invalid name '%s' (letters, digits, '-', '_', '.' and ':' only)", name);
		ret = -1;
	}
	for (int i = name ? 1 : 0; i < argc; i++) {
		if (strcmp(argv[i], "from") == 0 && i + 1 < argc) {
			struct proxy *d, *other;

			def = d = defaults_find(argv[++i], &other);
			if (!d) {
				cfg_alert(ctx, "'from %s': no defaults section of that name", argv[i]);
				ret = -1;
			} else if (other) {
				cfg_alert(ctx, "ambiguous defaults section name '%s': it exists at "
					  "least at %s:%d and %s:%d", argv[i], other->conf_file,
					  other->conf_line, d->conf_file, d->conf_line);
				ret = -1;
			} else {
				d->def_named = 1;
			}
			implicit = NULL;
		} else {
			cfg_alert(ctx, "unexpected argument '%s' (expects 'from <defaults>')", argv[i]);
			ret = -1;
			break;
		}
	}
	if (!(cap & PR_CAP_DEF) && *name) {
		struct proxy *dup = NULL;

		for (struct proxy *p = global.proxies; p; p = p->next)
			if ((p->cap & cap) && strcmp(p->name, name) == 0)
				dup = p;
		if (dup) {
			cfg_alert(ctx, "'%s' is already used by a proxy declared at %s:%d",
				  name, dup->conf_file, dup->conf_line);
			ret = -1;
		}
	}
	ctx->px = proxy_new(ctx, name, cap, def);
	ctx->px->def_implicit = implicit;
	return ret;
}

static int sec_defaults(struct cfg_ctx *ctx, int argc, char **argv)
{
	return proxy_section_begin(ctx, PR_CAP_DEF, argc, argv);
}

static int sec_frontend(struct cfg_ctx *ctx, int argc, char **argv)
{
	return proxy_section_begin(ctx, PR_CAP_FE, argc, argv);
}

static int sec_backend(struct cfg_ctx *ctx, int argc, char **argv)
{
	return proxy_section_begin(ctx, PR_CAP_BE, argc, argv);
}

static int sec_listen(struct cfg_ctx *ctx, int argc, char **argv)
{
	return proxy_section_begin(ctx, PR_CAP_FE | PR_CAP_BE, argc, argv);
}

/* ---- keywords ---- */

static int kw_mode(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct proxy *px = ctx->px;

	if (argc != 1) {
		cfg_alert(ctx, "expects 'tcp' or 'http'");
		return -1;
	}
	if (strcmp(argv[0], "tcp") == 0) {
		px->mode = PR_MODE_TCP;
		return 0;
	}
	if (strcmp(argv[0], "http") == 0) {
		px->mode = PR_MODE_HTTP;
		return 0;
	}
	if (strcmp(argv[0], "health") == 0) {
		cfg_alert(ctx, "'mode health' was removed from HAProxy 2.x; use 'monitor-uri' or a tcp frontend");
		return -1;
	}
	cfg_alert(ctx, "unknown mode '%s' (expects 'tcp' or 'http')", argv[0]);
	return -1;
}

static int kw_default_backend(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct proxy *px = ctx->px;

	if (argc != 1) {
		cfg_alert(ctx, "expects a backend name");
		return -1;
	}
	free(px->defbe_name);
	px->defbe_name = xstrdup(argv[0]);
	return 0;
}

static int kw_bind(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return listener_parse_bind(ctx, &ctx->px->listeners, ctx->px, argc, argv, 0);
}

static int kw_disabled(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	ctx->px->disabled = (int)ctx->kw_row->arg;
	return 0;
}

static int kw_description(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct dstr d = { 0 };

	for (int i = 0; i < argc; i++)
		dstr_printf(&d, "%s%s", i ? " " : "", argv[i]);
	free(ctx->px->desc);
	ctx->px->desc = d.p ? d.p : xstrdup("");
	return 0;
}

static struct cfg_section proxy_sections[] = {
	{ "defaults", CFG_SEC_DEFAULTS, sec_defaults, NULL, NULL },
	{ "frontend", CFG_SEC_FRONTEND, sec_frontend, NULL, NULL },
	{ "backend",  CFG_SEC_BACKEND,  sec_backend,  NULL, NULL },
	{ "listen",   CFG_SEC_LISTEN,   sec_listen,   NULL, NULL },
};

/* [no] option redispatch [<interval>]: redispatch on every <interval>th
 * retry when positive, on the -<interval>th retry before the last one when
 * negative (-1, the default: the last retry), never when 0. */
static int kw_opt_redispatch(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	long v = -1;

	if (argc > 1 || (argc && ctx->inverted)) {
		cfg_alert(ctx, "expects at most one argument, an interval (got '%s')",
			  argv[argc - 1]);
		return -1;
	}
	if (argc) {
		char *end;

		v = strtol(argv[0], &end, 10);
		if (end == argv[0] || *end || v < -1000000 || v > 1000000) {
			cfg_alert(ctx, "expects an integer interval, got '%s'", argv[0]);
			return -1;
		}
	}
	if (ctx->inverted || v == 0) {
		ctx->px->options &= ~PR_O_REDISPATCH;
		ctx->px->redispatch_every = 0;
	} else {
		ctx->px->options |= PR_O_REDISPATCH;
		ctx->px->redispatch_every = (int)v;
	}
	return 0;
}

#define PX_TIMEOUT(kw, field, secs) \
	{ "timeout " kw, secs, CFG_T_TIME, CFG_PX_OFF(timeout.field), .usage = "<time>" }
#define PX_OPTION(kw, flag, secs) \
	{ "option " kw, secs, CFG_T_FLAG, CFG_PX_OFF(options), .mask = flag }

static struct cfg_kw proxy_kws[] = {
	{ "mode", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_mode, .usage = "tcp|http" },
	{ "default_backend", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_default_backend,
	  .usage = "<backend>" },
	{ "bind", CFG_SEC_FRONTEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0, .parse = kw_bind,
	  .usage = "<address>[,...] [options]" },
	{ "retries", CFG_SEC_BE, CFG_T_INT, CFG_PX_OFF(retries), .min = 0, .max = 1000,
	  .usage = "a number of retries" },
	{ "maxconn", CFG_SEC_FE, CFG_T_INT, CFG_PX_OFF(maxconn), .min = 0, .max = 10000000,
	  .usage = "a connection limit" },
	{ "fullconn", CFG_SEC_BE, CFG_T_INT, CFG_PX_OFF(fullconn), .min = 0, .max = 10000000,
	  .usage = "a connection count" },
	{ "rate-limit sessions", CFG_SEC_FE, CFG_T_INT, CFG_PX_OFF(fe_sps_lim), .min = 0,
	  .max = 0x7fffffff, .usage = "a number of sessions per second" },
	{ "backlog", CFG_SEC_FE, CFG_T_INT, CFG_PX_OFF(backlog), .min = 1, .max = 1 << 24,
	  .usage = "a queue length" },
	{ "id", CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_INT, CFG_PX_OFF(id),
	  .min = 1, .max = 0x7fffffff, .usage = "a positive id" },
	{ "disabled", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_disabled, .arg = 1 },
	{ "enabled", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_disabled, .arg = 0 },
	{ "description", CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_description, .usage = "<text>" },
	PX_TIMEOUT("client", client, CFG_SEC_FE),
	PX_TIMEOUT("server", server, CFG_SEC_BE),
	PX_TIMEOUT("connect", connect, CFG_SEC_BE),
	PX_TIMEOUT("tunnel", tunnel, CFG_SEC_BE),
	PX_TIMEOUT("client-fin", client_fin, CFG_SEC_FE),
	PX_TIMEOUT("server-fin", server_fin, CFG_SEC_BE),
	PX_TIMEOUT("queue", queue, CFG_SEC_BE),
	PX_OPTION("splice-auto", PR_O_SPLICE_AUTO, CFG_SEC_PROXIES),
	PX_OPTION("splice-request", PR_O_SPLICE_REQ, CFG_SEC_PROXIES),
	PX_OPTION("splice-response", PR_O_SPLICE_RSP, CFG_SEC_PROXIES),
	PX_OPTION("tcplog", PR_O_TCPLOG, CFG_SEC_FE),
	PX_OPTION("tcp-smart-accept", PR_O_SMART_ACC, CFG_SEC_FE),
	PX_OPTION("dontlognull", PR_O_DONTLOGNULL, CFG_SEC_FE),
	PX_OPTION("logasap", PR_O_LOGASAP, CFG_SEC_FE),
	{ "option redispatch", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_opt_redispatch,
	  .flags = CFG_KW_F_NO, .usage = "[<interval>]" },
	PX_OPTION("tcpka", PR_O_TCP_KA, CFG_SEC_PROXIES),
	PX_OPTION("clitcpka", PR_O_CLI_KA, CFG_SEC_FE),
	PX_OPTION("srvtcpka", PR_O_SRV_KA, CFG_SEC_BE),
	PX_OPTION("socket-stats", PR_O_SOCKET_STATS, CFG_SEC_FE),
	PX_OPTION("allbackups", PR_O_ALLBACKUPS, CFG_SEC_BE),
	PX_OPTION("independent-streams", PR_O_INDEP_STR, CFG_SEC_PROXIES),
	PX_OPTION("idle-close-on-response", PR_O_IDLE_CLOSE, CFG_SEC_FE),
	PX_OPTION("prefer-last-server", PR_O_PREF_LAST, CFG_SEC_BE),
	{ "max-keep-alive-queue", CFG_SEC_BE, CFG_T_INT, CFG_PX_OFF(max_ka_queue), .min = -1,
	  .max = 10000000, .usage = "a queue length (-1: no limit)" },
	/* no bit: traffic counters already grow as bytes pass (stream.c), what
	 * the option asks HAProxy to do */
	PX_OPTION("contstats", 0, CFG_SEC_FE),
};

/* A bind line with "id N" numbers its sockets N, N+1, ...: one run. */
struct id_run {
	int first, count;
};

static int id_in_runs(const struct id_run *runs, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (id >= runs[i].first && id < runs[i].first + runs[i].count)
			return 1;
	return 0;
}

/* Gives each listener of <px> an id: a bind line's "id N" numbers its
 * sockets from N; the others take the next ids not explicitly given.
 * Returns the number of errors (explicit ids given twice). */
static int proxy_number_listeners(struct proxy *px)
{
	struct id_run *runs = NULL;
	const struct bind_conf *bc = NULL;
	int nruns = 0, errors = 0, auto_id = 1;

	for (struct listener *li = px->listeners; li; li = li->next) {
		if (!li->bc->id)
			continue;
		if (li->bc != bc) {
			bc = li->bc;
			runs = realloc(runs, sizeof(*runs) * (size_t)(nruns + 1));
			BUG_ON(!runs, "out of memory numbering listeners");
			runs[nruns].first = bc->id;
			runs[nruns].count = 0;
			nruns++;
		}
		li->id = runs[nruns - 1].first + runs[nruns - 1].count++;
	}
	for (int a = 0; a < nruns; a++)
		for (int b = a + 1; b < nruns; b++)
			if (runs[a].first < runs[b].first + runs[b].count &&
			    runs[b].first < runs[a].first + runs[a].count) {
				log_alert("%s:%d: proxy '%s': bind ids starting at %d and %d overlap",
					  px->conf_file, px->conf_line, px->name, runs[a].first,
					  runs[b].first);
				errors++;
			}
	for (struct listener *li = px->listeners; li; li = li->next) {
		if (li->bc->id)
			continue;
		while (id_in_runs(runs, nruns, auto_id))
			auto_id++;
		li->id = auto_id++;
	}
	free(runs);
	return errors;
}

/* Resolves default_backend, numbers proxies and checks for the mistakes
 * HAProxy reports. Returns the number of errors. */
static int proxy_postparse(void)
{
	int errors = 0, next_id = 1;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		if (!px->id) {
			for (;;) {
				struct proxy *q;

				for (q = global.proxies; q && q->id != next_id; q = q->next)
					;
				if (!q)
					break;
				next_id++;
			}
			px->id = next_id++;
		}
		if (px->cap & PR_CAP_FE) {
			if (!px->listeners)
				log_warning("%s:%d: %s '%s' has no 'bind' line; it will accept nothing",
					    px->conf_file, px->conf_line,
					    px->cap & PR_CAP_BE ? "listen" : "frontend", px->name);
			if (!px->timeout.client)
				log_warning("%s:%d: missing 'timeout client' in '%s': idle clients "
					    "will be kept forever", px->conf_file, px->conf_line, px->name);
		}
		if (px->def_implicit && px->def_implicit->def_named)
			log_warning("%s:%d: defaults section '%s' (%s:%d) is named by 'from' in "
				    "another proxy and used implicitly here (as the last one); HAProxy "
				    "2.6 reports this ambiguity: add a last defaults section that no "
				    "'from' names, or name it with 'from' everywhere", px->conf_file,
				    px->conf_line, px->def_implicit->name, px->def_implicit->conf_file,
				    px->def_implicit->conf_line);
		if ((px->cap & PR_CAP_BE) && (!px->timeout.server || !px->timeout.connect))
			log_warning("%s:%d: missing 'timeout connect' or 'timeout server' in '%s'",
				    px->conf_file, px->conf_line, px->name);
		if ((px->cap & PR_CAP_FE) && px->defbe_name) {
			px->defbe = proxy_find(px->defbe_name, PR_CAP_BE);
			if (!px->defbe) {
				log_alert("%s:%d: proxy '%s': default_backend '%s' does not exist",
					  px->conf_file, px->conf_line, px->name, px->defbe_name);
				errors++;
			} else if (px->defbe->mode != px->mode &&
				   !(px->defbe->mode == PR_MODE_HTTP && tcp_rules_switch_http(px))) {
				log_alert("%s:%d: proxy '%s': default_backend '%s' is in %s mode but "
					  "the frontend is in %s mode", px->conf_file, px->conf_line,
					  px->name, px->defbe_name, proxy_mode_str(px->defbe),
					  proxy_mode_str(px));
				errors++;
			}
		} else if ((px->cap & PR_CAP_FE) && (px->cap & PR_CAP_BE)) {
			px->defbe = px; /* a listen section serves its own servers */
		}
		/* Rules may answer every request (mode http) or connection
		 * (tcp-request content use-service) themselves. */
		if ((px->cap == PR_CAP_FE) && !px->defbe && !px->defbe_name &&
		    !(px->mode == PR_MODE_HTTP && px->http_rules) &&
		    !(px->mode != PR_MODE_HTTP && tcp_rules_has(px, TCP_RS_REQ)))
			log_warning("%s:%d: frontend '%s' has no default_backend; %s",
				    px->conf_file, px->conf_line, px->name,
				    px->mode == PR_MODE_HTTP ? "its requests will get a 503"
							     : "its connections will be closed");
	}
	for (struct proxy *px = global.proxies; px; px = px->next)
		errors += proxy_number_listeners(px);
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct proxy *q = px->next; q; q = q->next)
			if (px->id == q->id) {
				log_alert("%s:%d: proxy '%s' has the same id %d as '%s'",
					  q->conf_file, q->conf_line, q->name, q->id, px->name);
				errors++;
			}
	return errors;
}

void proxy_stop_all(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next) {
		listener_close_all(px->listeners);
		log_event(LOG_L_WARNING, "Proxy %s stopped (cumulated conns: FE: %llu, BE: %llu).",
			  px->name, (unsigned long long)px->fe_counters.cum_sess,
			  (unsigned long long)px->be_counters.cum_sess);
	}
}

static void proxy_free(struct proxy *px)
{
	struct server *srv, *snext;

	listener_free_all(&px->listeners);
	for (srv = px->servers; srv; srv = snext) {
		snext = srv->next;
		if (global.loop)
			ev_timer_stop(global.loop, &srv->ss_timer);   /* slowstart */
		free(srv->name);
		free(srv->addr_str);
		free(srv->conf_file);
		free(srv->add_args);
		free(srv->track_name);
		free(srv->redir);
		free(srv->fqdn);
		srv_dns_release(srv);
		ssl_srv_free(srv);
		conn_src_release(&srv->src, srv);
		free(srv);
	}
	for (struct proxy_ext *e = proxy_exts; e; e = e->next)
		if (e->release)
			e->release(px);
	free(px->logformat_str);
	log_list_free(&px->loggers);
	lb_free(px);
	tcpchk_free(px);
	if (px->defsrv) {
		free(px->defsrv->redir);
		ssl_srv_free(px->defsrv);
		srv_dns_release(px->defsrv);
		conn_src_release(&px->defsrv->src, px->defsrv);
	}
	free(px->defsrv);
	free(px->name);
	free(px->conf_file);
	free(px->defbe_name);
	free(px->desc);
	free(px->state_file);
	free(px);
}

void proxy_free_detached(struct proxy *px)
{
	if (px)
		proxy_free(px);
}

void proxy_free_all(void)
{
	struct proxy *px, *next;

	for (px = global.proxies; px; px = next) {
		next = px->next;
		proxy_free(px);
	}
	for (px = global.defaults; px; px = next) {
		next = px->next;
		proxy_free(px);
	}
	global.proxies = global.defaults = NULL;
}

/* ---- runtime API ---- */

static struct proxy *cli_frontend(struct cli_ctx *ctx, const char *name)
{
	struct proxy *px = name ? proxy_find(name, PR_CAP_FE) : NULL;

	if (!px)
		dstr_printf(&ctx->out, name ? "No such frontend.\n" : "A frontend name is expected.\n");
	return px;
}

/* disable frontend <fe> / enable frontend <fe>: <disable> comes from the row
 * (one thin function per row below). */
static int cli_frontend_state(struct cli_ctx *ctx, int argc, char **argv, int disable)
{
	struct proxy *px = cli_frontend(ctx, argc > 2 ? argv[2] : NULL);

	if (!px)
		return -1;
	if ((global.flags & GLB_F_STOPPING) || px->disabled) {
		dstr_printf(&ctx->out, "Frontend was already shut down.\n");
		return -1;
	}
	if ((disable ? listener_disable_all : listener_enable_all)(px->listeners) == 0) {
		dstr_printf(&ctx->out, disable ? "All sockets are already disabled.\n" :
			    "All sockets are already enabled.\n");
		return -1;
	}
	return 0;
}

static int cli_disable_frontend(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_frontend_state(ctx, argc, argv, 1);
}

static int cli_enable_frontend(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_frontend_state(ctx, argc, argv, 0);
}

/* set maxconn frontend <fe> <n> */
static int cli_set_maxconn_fe(struct cli_ctx *ctx, int argc, char **argv)
{
	struct proxy *px = cli_frontend(ctx, argc > 3 ? argv[3] : NULL);
	char *end;
	long v;

	if (!px)
		return -1;
	v = argc > 4 ? strtol(argv[4], &end, 10) : -1;
	if (argc < 5 || *end || v < 0 || v > 10000000) {
		dstr_printf(&ctx->out, "Integer value expected.\n");
		return -1;
	}
	px->maxconn = (int)v;
	listener_recheck_limits();
	return 0;
}

/* shutdown frontend <fe>: closes its listening sockets for good (the ports
 * are free for another process), as a soft stop does for every frontend;
 * its connections in progress go on. It shows STOP in the stats. */
static int cli_shutdown_frontend(struct cli_ctx *ctx, int argc, char **argv)
{
	struct proxy *px = cli_frontend(ctx, argc > 2 ? argv[2] : NULL);

	if (!px)
		return -1;
	if (argc > 3) {
		dstr_printf(&ctx->out, "'shutdown frontend' expects a frontend name alone.\n");
		return -1;
	}
	if ((global.flags & GLB_F_STOPPING) || px->disabled) {
		dstr_printf(&ctx->out, "Frontend was already shut down.\n");
		return -1;
	}
	listener_close_all(px->listeners);
	px->disabled = 1;
	px->last_change = tick_wall();
	log_event(LOG_L_WARNING, "Proxy %s stopped (cumulated conns: FE: %llu, BE: %llu).",
		  px->name, (unsigned long long)px->fe_counters.cum_sess,
		  (unsigned long long)px->be_counters.cum_sess);
	return 0;
}

static struct cli_kw proxy_cli_kws[] = {
	{ { "disable", "frontend", NULL }, "disable frontend <frontend>",
	  "stop accepting on a frontend (sockets stay bound)", CLI_LVL_ADMIN, cli_disable_frontend },
	{ { "enable", "frontend", NULL }, "enable frontend <frontend>",
	  "accept again on a disabled frontend", CLI_LVL_ADMIN, cli_enable_frontend },
	{ { "set", "maxconn", "frontend", NULL }, "set maxconn frontend <frontend> <value>",
	  "change a frontend's connection limit", CLI_LVL_ADMIN, cli_set_maxconn_fe },
	{ { "shutdown", "frontend", NULL }, "shutdown frontend <frontend>",
	  "close a frontend's listening sockets for good", CLI_LVL_ADMIN, cli_shutdown_frontend },
};

SLUICE_INIT(proxy_register)
{
	cfg_register_sections(proxy_sections, ARRAY_SIZE(proxy_sections));
	cfg_register(proxy_kws, ARRAY_SIZE(proxy_kws));
	cfg_register_postparse(proxy_postparse, 20);
	cli_register(proxy_cli_kws, ARRAY_SIZE(proxy_cli_kws));
}
