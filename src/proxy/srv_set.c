/* The "set server <bk>/<srv>" forms that change where a server's checks and
 * agent connect, what the agent is sent, and whether its connections use
 * TLS: agent-addr, agent-port, agent-send, check-addr, check-port, ssl. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/check.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

/* Parses <s> as a port (1..65535) into <*port>. Returns 0, or -1 with
 * HAProxy's message written to ctx->out. */
static int srv_set_port_arg(struct cli_ctx *ctx, const char *s, uint16_t *port)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end) {
		dstr_printf(&ctx->out, "provided port is not an integer\n");
		return -1;
	}
	if (v < 1 || v > 65535) {
		dstr_printf(&ctx->out, "provided port is out of range (1..65535)\n");
		return -1;
	}
	*port = (uint16_t)v;
	return 0;
}

/* "<ip> [port <port>]" of agent-addr and check-addr: the address in <as>,
 * the port in <*port> (0 when not given). Returns 0, or -1 with the reason
 * written (names are not resolved at run time: no blocking lookup). */
static int srv_set_addr_args(struct cli_ctx *ctx, int argc, char **argv,
                             struct addr_spec *as, uint16_t *port)
{
	char *err = NULL;

	*port = 0;
	if (argc < 1 || !*argv[0]) {
		dstr_printf(&ctx->out, "expects <ip> [port <port>]\n");
		return -1;
	}
	if (addr_parse(argv[0], as, ADDR_F_PORT_OPTIONAL, &err) == -1 ||
	    (as->ss.ss_family != AF_INET && as->ss.ss_family != AF_INET6) || as->port_lo) {
		free(err);
		dstr_printf(&ctx->out, "invalid addr '%s' (an IPv4 or IPv6 address without a "
			    "port: host names are not resolved at run time)\n", argv[0]);
		return -1;
	}
	if (argc == 1)
		return 0;
	if (argc != 3 || strcmp(argv[1], "port") != 0) {
		dstr_printf(&ctx->out, "expects <ip> [port <port>]\n");
		return -1;
	}
	return srv_set_port_arg(ctx, argv[2], port);
}

/* The check a row is about: the server's health check or its agent
 * (kw->arg is the offset of either in struct server), or NULL with the
 * reason written when the server does not run it. */
static struct check *srv_set_check_of(struct cli_ctx *ctx, struct server *srv,
                                      const struct srv_set_kw *kw)
{
	int agent = kw->arg == offsetof(struct server, agent);

	if (srv->flags & (agent ? SRV_F_AGENT : SRV_F_CHECKED))
		return (struct check *)((char *)srv + kw->arg);
	dstr_printf(&ctx->out, "%s checks are not enabled on this server.\n",
		    agent ? "agent" : "health");
	return NULL;
}

/* agent-addr|check-addr <ip> [port <port>]: the next connections of the
 * agent or the checks go there (on their current port unless given). */
static int srv_set_chk_addr(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
                            int argc, char **argv)
{
	struct check *c = srv_set_check_of(ctx, srv, kw);
	struct addr_spec as;
	uint16_t port;

	if (!c || srv_set_addr_args(ctx, argc, argv, &as, &port) == -1)
		return -1;
	if (!port)
		port = c->port ? c->port : addr_get_port(&c->addr);
	c->addr = as.ss;
	c->addrlen = as.len;
	c->has_addr = 1;
	c->port = port;
	addr_set_port(&c->addr, port);
	return 0;
}

/* agent-port|check-port <port> */
static int srv_set_chk_port(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
                            int argc, char **argv)
{
	struct check *c = srv_set_check_of(ctx, srv, kw);
	uint16_t port;

	if (!c)
		return -1;
	if (argc != 1) {
		dstr_printf(&ctx->out, "'set server <srv> %s' expects a port.\n", kw->word);
		return -1;
	}
	if (srv_set_port_arg(ctx, argv[0], &port) == -1)
		return -1;
	c->port = port;
	if (c->addr.ss_family == AF_INET || c->addr.ss_family == AF_INET6)
		addr_set_port(&c->addr, port);
	return 0;
}

/* agent-send <string>: what the agent is sent from its next connection on;
 * an empty string (or none) sends nothing. */
static int srv_set_agent_send(struct cli_ctx *ctx, struct server *srv,
                              const struct srv_set_kw *kw, int argc, char **argv)
{
	const char *v = argc > 0 ? argv[0] : "";

	if (!srv_set_check_of(ctx, srv, kw))
		return -1;
	if (argc > 1) {
		dstr_printf(&ctx->out, "'set server <srv> agent-send' expects one word (escape "
			    "spaces with a backslash).\n");
		return -1;
	}
	if (strlen(v) >= sizeof(srv->agent_send)) {
		dstr_printf(&ctx->out, "'set server <srv> agent-send': at most %zu characters.\n",
			    sizeof(srv->agent_send) - 1);
		return -1;
	}
	strcpy(srv->agent_send, v);
	return 0;
}

/* ssl on|off: the server's next connections use TLS or not (its idle ones
 * are closed: they were made the other way); its checks do not change. */
static int srv_set_ssl(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
                       int argc, char **argv)
{
	char *err = NULL;
	int on;

	if (argc != 1 || (strcmp(argv[0], "on") != 0 && strcmp(argv[0], "off") != 0)) {
		dstr_printf(&ctx->out, "'set server <srv> ssl' expects 'on' or 'off'.\n");
		return -1;
	}
	on = argv[0][1] == 'n';
	if (ssl_srv_set_enabled(srv, on, &err) == -1) {
		dstr_printf(&ctx->out, "'set server <srv> ssl' cannot be set: %s\n", err);
		free(err);
		return -1;
	}
	srv_idle_purge(srv, 0);
	dstr_printf(&ctx->out, "server ssl setting updated.\n");
	return 0;
}

#define SRV_AGENT offsetof(struct server, agent)
#define SRV_CHECK offsetof(struct server, check)

static struct srv_set_kw srv_set_kws[] = {
	{ "agent-addr", .set = srv_set_chk_addr, .arg = SRV_AGENT },
	{ "agent-port", .set = srv_set_chk_port, .arg = SRV_AGENT },
	{ "agent-send", .set = srv_set_agent_send, .arg = SRV_AGENT },
	{ "check-addr", .set = srv_set_chk_addr, .arg = SRV_CHECK },
	{ "check-port", .set = srv_set_chk_port, .arg = SRV_CHECK },
	{ "ssl", .set = srv_set_ssl },
};

SLUICE_INIT(srv_set_register)
{
	server_set_register(srv_set_kws, ARRAY_SIZE(srv_set_kws));
}
