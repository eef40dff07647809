/* How sluice connects to servers (conn.h, struct conn_src): the "source"
 * of a backend and of a server (address, port range, "usesrc",
 * "interface"), the server options "namespace", "tfo"/"no-tfo" and
 * "tcp-ut". Servers without a source of their own take their backend's. */
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/netns.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/units.h>

/* <*pp>, made <owner>'s own before a change (shared with a default-server
 * or a defaults section until then). */
static struct conn_src *src_own(struct conn_src **pp, const void *owner)
{
	if (!*pp)
		*pp = conn_src_new(owner);
	else if ((*pp)->owner != owner)
		*pp = conn_src_dup(*pp, owner);
	return (*pp);
}

/* <addr>[:<port>[-<port>]] [usesrc <addr2>[:<port2>]|client|clientip]
 * [interface <name>] (the words after "source", from argv[0]): fills <src>'s
 * source part. Port ranges only when <ranges> (server lines). Returns the
 * words used, or -1 with <err> allocated. */
static int src_parse(struct conn_src *src, int argc, char **argv, int ranges, char **err)
{
	struct addr_spec as;
	int i = 1;

	if (argc < 1) {
		*err = str_fmt("expects <addr>[:<port>] [usesrc {<addr2>[:<port2>]|client|clientip}] "
			       "[interface <name>]");
		return -1;
	}
	if (addr_parse(argv[0], &as, ADDR_F_PORT_OPTIONAL | ADDR_F_ENV |
		       (ranges ? ADDR_F_RANGE_OK : 0), err) == -1)
		return -1;
	if (as.kind != ADDR_K_INET) {
		*err = str_fmt("'%s': the source must be an IPv4 or IPv6 address", argv[0]);
		return -1;
	}
	src->flags |= CONN_SRC_F_SOURCE;
	src->addr = as.ss;
	src->addrlen = as.len;
	src->port_lo = as.port_lo != as.port_hi ? as.port_lo : 0;
	src->port_hi = as.port_lo != as.port_hi ? as.port_hi : 0;
	src->port_next = src->port_lo;
	src->usesrc = CONN_USESRC_NONE;
	free(src->iface);
	src->iface = NULL;
	while (i < argc) {
		if (strcmp(argv[i], "usesrc") == 0 && i + 1 < argc) {
			const char *u = argv[i + 1];

			if (strcmp(u, "client") == 0) {
				src->usesrc = CONN_USESRC_CLIENT;
			} else if (strcmp(u, "clientip") == 0) {
				src->usesrc = CONN_USESRC_CLIENTIP;
			} else if (strncmp(u, "hdr_ip(", 7) == 0) {
				*err = str_fmt("'usesrc %s' is not supported yet by sluice (a source "
					       "taken from a header): use 'usesrc clientip' behind a "
					       "proxy that sends the PROXY protocol", u);
				return -1;
			} else if (addr_parse(u, &as, ADDR_F_PORT_OPTIONAL | ADDR_F_ENV, err) == 0 &&
				   as.kind == ADDR_K_INET) {
				src->usesrc = CONN_USESRC_ADDR;
				src->tp = as.ss;
				src->tplen = as.len;
			} else {
				if (!*err)
					*err = str_fmt("'usesrc %s': expects an IP address, 'client' "
						       "or 'clientip'", u);
				return -1;
			}
			i += 2;
		} else if (strcmp(argv[i], "interface") == 0 && i + 1 < argc) {
			if (!*argv[i + 1] || strlen(argv[i + 1]) >= 16) {
				*err = str_fmt("'interface %s': expects an interface name", argv[i + 1]);
				return -1;
			}
			free(src->iface);
			src->iface = xstrdup(argv[i + 1]);
			i += 2;
		} else {
			break;
		}
	}
	return i;
}

/* ---- server options ---- */

static int srv_source_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                         char **err)
{
	int used = src_parse(src_own(&srv->src, srv), argc - 1, argv + 1, 1, err);

	return used < 0 ? -1 : used + 1;
}

/* namespace <name>: connections to the server are made in that network
 * namespace (opened at start-up). */
static int srv_netns_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                        char **err)
{
	struct conn_src *src;

	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects a network namespace name");
		return -1;
	}
	if (strcmp(argv[1], "*") == 0) {
		*err = str_fmt("'namespace *' (the namespace a PROXY header names) is not "
			       "supported by sluice: name the namespace");
		return -1;
	}
	src = src_own(&srv->src, srv);
	free(src->netns);
	src->netns = xstrdup(argv[1]);
	return 2;
}

/* tfo / no-tfo: TCP Fast Open on connections to the server. */
static int srv_tfo_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                      char **err)
{
	struct conn_src *src = src_own(&srv->src, srv);

	src->flags = (src->flags & ~(unsigned)kw->clr) | (unsigned)kw->set;
	return 1;
}

/* tcp-ut <delay>: TCP_USER_TIMEOUT on connections to the server. */
static int srv_tcp_ut_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                         char **err)
{
	const char *e = "invalid";
	uint32_t ms;

	if (argc < 2 || parse_time_ms(argv[1], 1, &ms, &e) == -1) {
		*err = str_fmt("expects a delay (milliseconds by default), got '%s': %s",
			       argc > 1 ? argv[1] : "", e);
		return -1;
	}
	src_own(&srv->src, srv)->user_timeout = ms;
	return 2;
}

/* socks4 <addr>:<port>: connections to the server go through that SOCKS4
 * proxy (a CONNECT to the server's IPv4 address first). */
static int srv_socks4_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                         char **err)
{
	struct addr_spec as;

	if (argc < 2) {
		*err = str_fmt("expects <addr>:<port> of a SOCKS4 proxy");
		return -1;
	}
	if (addr_parse(argv[1], &as, ADDR_F_ENV | ADDR_F_RESOLVE, err) == -1)
		return -1;
	if (as.kind != ADDR_K_INET || !as.port_lo) {
		*err = str_fmt("'%s': expects <addr>:<port> of a SOCKS4 proxy", argv[1]);
		return -1;
	}
	srv->socks4 = as.ss;
	srv->socks4_len = as.len;
	return 2;
}

static struct srv_kw srv_src_kws[] = {
	{ "socks4", .parse = srv_socks4_kw },
	{ "source", .parse = srv_source_kw },
	{ "namespace", .parse = srv_netns_kw },
	{ "tfo", .parse = srv_tfo_kw, .set = CONN_SRC_F_TFO },
	{ "no-tfo", .parse = srv_tfo_kw, .clr = CONN_SRC_F_TFO },
	{ "tcp-ut", .parse = srv_tcp_ut_kw },
};

/* ---- the backend's source ---- */

/* source ... in defaults, backend, listen: what servers without a source of
 * their own use. */
static int kw_px_source(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct conn_src *src = src_own(&ctx->px->conn_src, ctx->px);
	char *err = NULL;
	int used;

	used = src_parse(src, argc, argv, 0, &err);
	if (used >= 0 && used != argc) {
		err = str_fmt("unexpected '%s' (expects usesrc or interface)", argv[used]);
		used = -1;
	}
	if (used < 0) {
		cfg_alert(ctx, "%s", err ? err : "invalid source");
		free(err);
		return -1;
	}
	return 0;
}

static void src_px_inherit(struct proxy *px, const struct proxy *def)
{
	if (def->conn_src)
		px->conn_src = conn_src_dup(def->conn_src, px);
}

static void src_px_release(struct proxy *px)
{
	conn_src_release(&px->conn_src, px);
}

int srv_src_inherit(struct server *srv, char **err)
{
	const struct conn_src *bsrc = srv->px->conn_src;

	if (bsrc && (bsrc->flags & CONN_SRC_F_SOURCE) &&
	    !(srv->src && (srv->src->flags & CONN_SRC_F_SOURCE))) {
		if (!srv->src) {
			srv->src = (struct conn_src *)bsrc;   /* read-only: its owner is the proxy */
		} else {
			struct conn_src *s = src_own(&srv->src, srv);

			s->flags |= CONN_SRC_F_SOURCE;
			s->addr = bsrc->addr;
			s->addrlen = bsrc->addrlen;
			s->usesrc = bsrc->usesrc;
			s->tp = bsrc->tp;
			s->tplen = bsrc->tplen;
			free(s->iface);
			s->iface = bsrc->iface ? xstrdup(bsrc->iface) : NULL;
		}
	}
	if (srv->src && srv->src->netns && srv->src->netns_fd < 0 &&
	    (srv->src->netns_fd = netns_open(srv->src->netns, err)) < 0)
		return -1;
	return 0;
}

/* Every server of the configuration: see srv_src_inherit(). Returns the
 * errors. */
static int src_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			char *err = NULL;

			if (srv->socks4_len && srv->addr.ss_family != AF_INET &&
			    !(srv->flags & SRV_F_RMAINT)) {
				log_alert("%s:%d: server '%s/%s': 'socks4' reaches IPv4 servers only "
					  "(SOCKS4 carries no other address)", srv->conf_file,
					  srv->conf_line, px->name, srv->name);
				errors++;
			}
			if (srv->src && (srv->src->flags & CONN_SRC_F_TFO) &&
			    (px->retry_on & (PR_RE_CONN_FAILED | PR_RE_EMPTY | PR_RE_TIMEOUT)) !=
			    (PR_RE_CONN_FAILED | PR_RE_EMPTY | PR_RE_TIMEOUT))
				/* a Fast Open connect fails with its first write: only
				 * these let the request be sent again (HAProxy warns too) */
				log_warning("%s:%d: server '%s/%s' has 'tfo': the backend should say "
					    "at least 'retry-on conn-failure empty-response "
					    "response-timeout', else a failed connection is not retried",
					    srv->conf_file, srv->conf_line, px->name, srv->name);
			if ((srv->flags & SRV_F_CHECK_SOCKS4) && !srv->socks4_len)
				log_warning("%s:%d: server '%s/%s': 'check-via-socks4' without "
					    "'socks4': checks connect directly", srv->conf_file,
					    srv->conf_line, px->name, srv->name);
			if (srv_src_inherit(srv, &err) == -1) {
				log_alert("%s:%d: server '%s/%s': %s", srv->conf_file, srv->conf_line,
					  px->name, srv->name, err);
				free(err);
				errors++;
			}
		}
	}
	return errors;
}

static struct cfg_kw src_cfg_kws[] = {
	{ "source", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_px_source,
	  .usage = "<addr>[:<port>] [usesrc {<addr2>[:<port2>]|client|clientip}] "
		   "[interface <name>]" },
};

static struct proxy_ext src_ext = { src_px_inherit, src_px_release, NULL };

SLUICE_INIT(srv_src_register)
{
	srv_register_keywords(srv_src_kws, ARRAY_SIZE(srv_src_kws));
	cfg_register(src_cfg_kws, ARRAY_SIZE(src_cfg_kws));
	cfg_register_postparse(src_postparse, 30);
	proxy_register_ext(&src_ext);
}
