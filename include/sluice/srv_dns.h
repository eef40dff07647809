/* Servers whose address comes from DNS at run time (src/proxy/srv_dns.c):
 * the server options resolvers, resolve-prefer, resolve-opts and
 * resolve-net, re-resolution with HAProxy's hold rules, server-templates
 * filled from SRV records, and `set server ... fqdn`. */
#ifndef SLUICE_SRV_DNS_H
#define SLUICE_SRV_DNS_H

#include <sys/socket.h>

#include <sluice/dns.h>

struct server;
struct cli_ctx;
struct srv_srvrq;

#define SRV_DNS_O_ALLOW_DUP     0x01  /* resolve-opts allow-dup-ip */
#define SRV_DNS_O_IGNORE_WEIGHT 0x02  /* resolve-opts ignore-weight */

/* A network of resolve-net. */
struct srv_dns_net {
	struct sockaddr_storage net;
	int                     bits;
};

/* The DNS settings and state of a server (srv->dns), shared with its
 * default-server until the server sets one of its own (<owner>). */
struct srv_dns {
	const struct server  *owner;
	char                 *rs_name;   /* "resolvers <id>", NULL: none */
	struct dns_resolvers *rs;        /* found at post-parse */
	int                   prefer;    /* resolve-prefer: AF_INET6 (default) or AF_INET */
	unsigned              opts;      /* SRV_DNS_O_* */
	struct srv_dns_net   *nets;      /* resolve-net */
	int                   nnets;
	/* run time */
	struct server        *srv;       /* its server, NULL in a default-server */
	struct dns_req        req;       /* the A or AAAA resolution of srv->fqdn */
	struct srv_srvrq     *srvrq;     /* the SRV records filling it (server-template) */
};

/* Whether server <srv>, whose address <host> is a host name, is filled from
 * SRV records (a name starting with '_' and a "resolvers" option): then it
 * starts in maintenance without an address, whatever init-addr says. */
int srv_dns_is_srv_label(const struct server *srv, const char *host);

/* A server's own copy of the settings it got from its default-server, made
 * after the flat copy of the template (server.c). */
void srv_dns_dup(struct server *srv);

/* Releases what <srv> owns (a server removed, or freed at exit). */
void srv_dns_release(struct server *srv);

/* "add server": finds the resolvers section its options name (its address
 * is an IP: nothing is asked until `set server ... fqdn`). Returns 0, or -1
 * with <err> allocated. */
int srv_dns_runtime_init(struct server *srv, char **err);

/* A health check of <srv> ended in a connection timeout: its name is
 * asked again now (it may have moved). */
void srv_dns_check_timeout(struct server *srv);

/* The SRV record name (server-template "_svc._proto.name") filling <srv>,
 * or NULL. */
const char *srv_dns_srvrecord(const struct server *srv);

/* set server <b>/<s> fqdn <name>: HAProxy's messages in ctx->out. Returns
 * 0 or -1. */
int srv_dns_cli_set_fqdn(struct cli_ctx *ctx, struct server *srv, const char *fqdn);

#endif
