/* Servers whose address comes from DNS at run time (srv_dns.h): the server
 * options, the choice of an address among those of an answer, HAProxy's
 * hold rules (maintenance, and back), server-templates filled from SRV
 * records, and `set server ... fqdn`. The DNS client is net/dns.c. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/dns.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/resolvers.h>
#include <sluice/server.h>
#include <sluice/srv_dns.h>
#include <sluice/str.h>
#include <sluice/ticks.h>

/* The SRV records of a server-template: they give its servers a host name,
 * a port and a weight (and the servers' own resolutions their address). */
struct srv_srvrq {
	struct srv_srvrq     *next;
	struct proxy         *px;
	char                 *name;     /* "_service._proto.name" */
	struct dns_resolvers *rs;
	struct dns_req        req;
	struct server       **srvs;     /* its servers, in order */
	int                   nsrv;
};

static struct srv_srvrq *srvrqs;

/* ---- settings ---- */

/* <srv>'s own settings, made from what it shares with its default-server
 * (or new). */
static struct srv_dns *srv_dns_own(struct server *srv)
{
	struct srv_dns *d = srv->dns, *n;

	if (d && d->owner == srv)
		return d;
	n = xcalloc(1, sizeof(*n));
	if (d) {
		*n = *d;
		n->rs_name = d->rs_name ? xstrdup(d->rs_name) : NULL;
		if (d->nnets) {
			n->nets = xcalloc((size_t)d->nnets, sizeof(*n->nets));
			memcpy(n->nets, d->nets, (size_t)d->nnets * sizeof(*n->nets));
		}
	} else {
		n->prefer = AF_INET6;
	}
	n->owner = srv;
	n->srv = srv->px ? srv : NULL;   /* a default-server has no backend */
	n->req = (struct dns_req){ 0 };
	n->srvrq = NULL;
	n->rs = NULL;
	srv->dns = n;
	return n;
}

void srv_dns_dup(struct server *srv)
{
	if (srv->dns)
		srv_dns_own(srv);
}

void srv_dns_release(struct server *srv)
{
	struct srv_dns *d = srv->dns;

	if (!d || d->owner != srv)
		return;
	dns_req_detach(&d->req);
	if (d->srvrq) {
		/* its template no longer lists it */
		for (int i = 0; i < d->srvrq->nsrv; i++)
			if (d->srvrq->srvs[i] == srv)
				d->srvrq->srvs[i] = NULL;
	}
	free(d->rs_name);
	free(d->nets);
	free(d);
	srv->dns = NULL;
}

int srv_dns_is_srv_label(const struct server *srv, const char *host)
{
	return host[0] == '_' && srv->dns && srv->dns->rs_name;
}

const char *srv_dns_srvrecord(const struct server *srv)
{
	return srv->dns && srv->dns->srvrq ? srv->dns->srvrq->name : NULL;
}

/* resolvers <id> */
static int srv_resolvers_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                            char **err)
{
	struct srv_dns *d;

	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects the name of a resolvers section");
		return -1;
	}
	d = srv_dns_own(srv);
	free(d->rs_name);
	d->rs_name = xstrdup(argv[1]);
	return 2;
}

/* resolve-prefer ipv4|ipv6 */
static int srv_resolve_prefer_kw(struct server *srv, const struct srv_kw *kw, int argc,
                                 char **argv, char **err)
{
	int fam = argc < 2 ? 0 : strcmp(argv[1], "ipv4") == 0 ? AF_INET :
		  strcmp(argv[1], "ipv6") == 0 ? AF_INET6 : 0;

	if (!fam) {
		*err = str_fmt("expects 'ipv4' or 'ipv6'%s%s%s", argc > 1 ? ", got '" : "",
			       argc > 1 ? argv[1] : "", argc > 1 ? "'" : "");
		return -1;
	}
	srv_dns_own(srv)->prefer = fam;
	return 2;
}

/* The words of resolve-opts: what each sets and clears. */
static const struct {
	const char *name;
	unsigned    set, clr;
} srv_dns_opts[] = {
	{ "allow-dup-ip", SRV_DNS_O_ALLOW_DUP, 0 },
	{ "prevent-dup-ip", 0, SRV_DNS_O_ALLOW_DUP },
	{ "ignore-weight", SRV_DNS_O_IGNORE_WEIGHT, 0 },
};

/* resolve-opts <opt>[,<opt>...] */
static int srv_resolve_opts_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                               char **err)
{
	char list[256], *save = NULL;
	unsigned set = 0, clr = 0;
	struct srv_dns *d;

	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects a comma-separated list of allow-dup-ip, ignore-weight, "
			       "prevent-dup-ip");
		return -1;
	}
	snprintf(list, sizeof(list), "%s", argv[1]);
	for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(srv_dns_opts); i++)
			if (strcmp(w, srv_dns_opts[i].name) == 0)
				break;
		if (i == ARRAY_SIZE(srv_dns_opts)) {
			*err = str_fmt("unknown option '%s' (expects allow-dup-ip, ignore-weight or "
				       "prevent-dup-ip)", w);
			return -1;
		}
		set = (set & ~srv_dns_opts[i].clr) | srv_dns_opts[i].set;
		clr = (clr & ~srv_dns_opts[i].set) | srv_dns_opts[i].clr;
	}
	d = srv_dns_own(srv);
	d->opts = (d->opts & ~clr) | set;
	return 2;
}

/* resolve-net <net>[,<net>...] */
static int srv_resolve_net_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                              char **err)
{
	char list[1024], *save = NULL;
	struct srv_dns_net nets[32];
	struct srv_dns *d;
	int n = 0;

	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("expects a comma-separated list of networks");
		return -1;
	}
	snprintf(list, sizeof(list), "%s", argv[1]);
	for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (n == (int)ARRAY_SIZE(nets)) {
			*err = str_fmt("at most %zu networks", ARRAY_SIZE(nets));
			return -1;
		}
		if (addr_net_parse(w, &nets[n].net, &nets[n].bits) == -1) {
			*err = str_fmt("'%s' is no network (expects <ip>[/<bits>])", w);
			return -1;
		}
		n++;
	}
	d = srv_dns_own(srv);
	free(d->nets);
	d->nets = xcalloc((size_t)n, sizeof(*d->nets));
	memcpy(d->nets, nets, (size_t)n * sizeof(*nets));
	d->nnets = n;
	return 2;
}

/* ---- choosing an address ---- */

/* <it> as a socket address of port <port>. */
static void srv_dns_item_addr(const struct dns_item *it, uint16_t port,
                              struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = (sa_family_t)it->family;
	if (it->family == AF_INET) {
		((struct sockaddr_in *)ss)->sin_addr = it->ip.v4;
		*len = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)ss)->sin6_addr = it->ip.v6;
		*len = sizeof(struct sockaddr_in6);
	}
	addr_set_port(ss, port);
}

/* Whether <srv> has the address of <it>. */
static int srv_dns_has_ip(const struct server *srv, const struct dns_item *it)
{
	if (srv->addr.ss_family != it->family)
		return 0;
	if (it->family == AF_INET)
		return ((const struct sockaddr_in *)&srv->addr)->sin_addr.s_addr == it->ip.v4.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)&srv->addr)->sin6_addr, &it->ip.v6,
		      sizeof(it->ip.v6)) == 0;
}

/* Whether another server of <srv>'s backend, of the same host name and
 * port and not in maintenance for want of an address, has the address of
 * <it>. */
static int srv_dns_ip_taken(const struct server *srv, const struct dns_item *it)
{
	uint16_t port = addr_get_port(&srv->addr);

	for (const struct server *o = srv->px->servers; o; o = o->next)
		if (o != srv && !(o->flags & SRV_F_RMAINT) && o->fqdn &&
		    strcmp(o->fqdn, srv->fqdn) == 0 && addr_get_port(&o->addr) == port &&
		    srv_dns_has_ip(o, it))
			return 1;
	return 0;
}

/* The address of answer <res> that <srv> should have, as HAProxy chooses:
 * the preferred family first, then one in a resolve-net, then one no other
 * server of the same name has (never a taken one unless allow-dup-ip),
 * then the one it has. NULL when none is left for it. */
static const struct dns_item *srv_dns_pick(const struct server *srv, const struct dns_res *res)
{
	const struct srv_dns *d = srv->dns;
	const struct dns_item *best = NULL;
	int best_score = -1;

	for (int i = 0; i < res->nitems; i++) {
		const struct dns_item *it = &res->items[i];
		struct sockaddr_storage ss;
		socklen_t len;
		int score = 0, taken;

		if (it->family != AF_INET && it->family != AF_INET6)
			continue;
		taken = srv_dns_ip_taken(srv, it);
		if (taken && !(d->opts & SRV_DNS_O_ALLOW_DUP))
			continue;
		srv_dns_item_addr(it, 0, &ss, &len);
		if (it->family == d->prefer)
			score += 8;
		for (int n = 0; n < d->nnets; n++)
			if (addr_in_net(&ss, &d->nets[n].net, d->nets[n].bits)) {
				score += 4;
				break;
			}
		if (!taken)
			score += 2;
		if (!(srv->flags & SRV_F_RMAINT) && srv_dns_has_ip(srv, it))
			score += 1;
		if (score > best_score) {
			best = it;
			best_score = score;
		}
	}
	return best;
}

/* ---- what an answer does to a server ---- */

/* Gives <srv> the address <it> of an answer from <by> ("resolvers/ns", or
 * "DNS cache"; <from>: the name server, counted); takes it out of
 * maintenance for want of an address. */
static void srv_dns_set_ip(struct server *srv, const struct dns_item *it, const char *by,
                           struct dns_ns *from)
{
	int same = *srv->addr_str && srv_dns_has_ip(srv, it);
	int was_rmaint = !!(srv->flags & SRV_F_RMAINT);
	struct sockaddr_storage ss;
	char old_ip[64] = "", new_ip[64];
	socklen_t len;

	if (same && !was_rmaint)
		return;
	if (same) {
		server_set_rmaint(srv, 0, NULL);
	} else {
		srv_dns_item_addr(it, addr_get_port(&srv->addr), &ss, &len);
		if (*srv->addr_str)
			addr_ip_str(&srv->addr, old_ip, sizeof(old_ip));
		addr_ip_str(&ss, new_ip, sizeof(new_ip));
		log_event_px_lv(&srv->px->loggers, LOG_L_WARNING, LOG_L_NOTICE, "%s/%s changed its "
				"IP from %s to %s by %s.", srv->px->name, srv->name, old_ip, new_ip,
				by);
		if (from)
			from->cnt.update++;
		server_set_address(srv, &ss, len, 0);   /* leaves the maintenance, closes
		                                           what is idle to the old address */
	}
	if (was_rmaint)
		log_event_px_lv(&srv->px->loggers, LOG_L_WARNING, LOG_L_NOTICE, "Server %s/%s "
				"administratively READY thanks to valid DNS answer.",
				srv->px->name, srv->name);
}

/* The reason a DNS status gives for maintenance, in HAProxy's words. */
static const char *srv_dns_reason(enum dns_status st)
{
	switch (st) {
	case DNS_ST_NX:      return "DNS NX status";
	case DNS_ST_TIMEOUT: return "DNS timeout status";
	case DNS_ST_REFUSED: return "DNS refused status";
	default:             return "unspecified DNS error";
	}
}

/* Whether error <st> of <res> has lasted its hold period: no valid answer
 * for longer than `hold <status>`. */
static int srv_dns_hold_over(const struct dns_res *res)
{
	uint32_t hold = res->rs->hold[dns_hold_of(res->status)];

	return tick_now_ms() >= res->last_valid + hold;
}

/* A resolution of <srv>'s name ended: a new address, maintenance, or
 * nothing (an error within its hold period). <cached>: the answer was
 * already known. */
static void srv_dns_apply(struct server *srv, const struct dns_res *res, int cached)
{
	const struct dns_item *it;
	char by[160];

	if (res->status != DNS_ST_VALID) {
		if (srv_dns_hold_over(res))
			server_set_rmaint(srv, 1, srv_dns_reason(res->status));
		return;
	}
	it = srv_dns_pick(srv, res);
	if (!it) {
		server_set_rmaint(srv, 1, "No IP for server ");
		return;
	}
	/* HAProxy's words: the first server told of a fresh answer names the
	 * name server, the others take it from the cache */
	if (cached || !res->from || res->reqs != &srv->dns->req)
		snprintf(by, sizeof(by), "DNS cache");
	else
		snprintf(by, sizeof(by), "%s/%s", res->rs->id, res->from->id);
	srv_dns_set_ip(srv, it, by, cached ? NULL : res->from);
}

static void srv_dns_done(struct dns_req *rq)
{
	struct srv_dns *d = container_of(rq, struct srv_dns, req);

	srv_dns_apply(d->srv, rq->res, 0);
}

/* Asks for <srv>'s host name (its requester attached to the resolution of
 * the type its resolve-prefer gives); a result already known is applied. */
static void srv_dns_ask(struct server *srv)
{
	struct srv_dns *d = srv->dns;

	d->req.done = srv_dns_done;
	if (dns_req_attach(&d->req, d->rs, srv->fqdn,
			   d->prefer == AF_INET ? DNS_T_A : DNS_T_AAAA) == 1)
		srv_dns_apply(srv, d->req.res, 1);
}

int srv_dns_runtime_init(struct server *srv, char **err)
{
	struct srv_dns *d = srv->dns;

	if (!d || !d->rs_name)
		return 0;
	d = srv_dns_own(srv);
	d->rs = dns_resolvers_find(d->rs_name);
	if (!d->rs || !d->rs->nns) {
		*err = str_fmt("'resolvers %s': no resolvers section named '%s'.", d->rs_name,
			       d->rs_name);
		return -1;
	}
	return 0;
}

void srv_dns_check_timeout(struct server *srv)
{
	if (srv->dns && srv->dns->req.res)
		dns_res_trigger(srv->dns->req.res);
}

/* ---- server-templates of SRV records ---- */

/* SRV weights (0..65535) as server weights (0..256), as HAProxy maps them. */
static int srv_dns_weight(uint16_t w)
{
	return (w + 255) / 256;
}

/* Frees the slot of <srv>: no name, no address, maintenance (<why>). */
static void srvrq_release_slot(struct server *srv, const char *why)
{
	dns_req_detach(&srv->dns->req);
	server_set_rmaint(srv, 1, why);
	free(srv->fqdn);
	srv->fqdn = NULL;
}

/* The SRV records of <q> changed: servers keep the record they have (its
 * weight followed), lose one gone (maintenance), and free servers take the
 * new ones (then ask for their addresses). */
static void srvrq_apply(struct srv_srvrq *q, const struct dns_res *res)
{
	char *used = calloc((size_t)res->nitems + 1, 1);

	if (!used)
		return;
	for (int i = 0; i < q->nsrv; i++) {
		struct server *srv = q->srvs[i];
		int k;

		if (!srv || !srv->fqdn)
			continue;
		for (k = 0; k < res->nitems; k++)
			if (!used[k] && strcmp(res->items[k].target, srv->fqdn) == 0 &&
			    res->items[k].port == addr_get_port(&srv->addr))
				break;
		if (k == res->nitems) {
			srvrq_release_slot(srv, "entry removed from SRV record");
			continue;
		}
		used[k] = 1;
		if (!(srv->dns->opts & SRV_DNS_O_IGNORE_WEIGHT) &&
		    srv->weight != srv_dns_weight(res->items[k].weight)) {
			srv->weight = srv->uweight = srv_dns_weight(res->items[k].weight);
			lb_recalc(srv->px);
		}
	}
	for (int k = 0, i = 0; k < res->nitems; k++) {
		const struct dns_item *it = &res->items[k];
		struct server *srv = NULL;

		if (used[k])
			continue;
		for (; i < q->nsrv && !srv; i++)
			if (q->srvs[i] && !q->srvs[i]->fqdn)
				srv = q->srvs[i];
		if (!srv)
			break;   /* more records than servers */
		log_event_px_lv(&srv->px->loggers, LOG_L_NOTICE, LOG_L_NOTICE, "%s/%s changed its "
				"FQDN from (null) to %s by 'SRV record'", srv->px->name, srv->name,
				it->target);
		srv->fqdn = xstrdup(it->target);
		addr_set_port(&srv->addr, it->port);
		srv->flags &= ~SRV_F_SAMEPORT;
		if (!(srv->dns->opts & SRV_DNS_O_IGNORE_WEIGHT)) {
			srv->weight = srv->uweight = srv_dns_weight(it->weight);
			lb_recalc(srv->px);
		}
		srv_dns_ask(srv);
	}
	free(used);
}

static void srvrq_done(struct dns_req *rq)
{
	struct srv_srvrq *q = container_of(rq, struct srv_srvrq, req);
	const struct dns_res *res = rq->res;

	if (res->status == DNS_ST_VALID) {
		srvrq_apply(q, res);
		return;
	}
	if (!srv_dns_hold_over(res))
		return;
	for (int i = 0; i < q->nsrv; i++)
		if (q->srvs[i] && q->srvs[i]->fqdn)
			srvrq_release_slot(q->srvs[i], srv_dns_reason(res->status));
}

/* The template of SRV label <name> in <px> (made on first use). */
static struct srv_srvrq *srvrq_get(struct proxy *px, const char *name, struct dns_resolvers *rs)
{
	struct srv_srvrq *q;

	for (q = srvrqs; q; q = q->next)
		if (q->px == px && q->rs == rs && strcmp(q->name, name) == 0)
			return q;
	q = xcalloc(1, sizeof(*q));
	q->px = px;
	q->name = xstrdup(name);
	q->rs = rs;
	q->req.done = srvrq_done;
	q->next = srvrqs;
	srvrqs = q;
	return q;
}

/* ---- post-parse: sections found, resolutions asked ---- */

static int srv_dns_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			struct srv_dns *d;
			char *err = NULL;

			if (!srv->dns || !srv->dns->rs_name)
				continue;
			d = srv_dns_own(srv);
			d->rs = resolvers_ref(d->rs_name, &err);
			if (!d->rs) {
				log_alert("%s:%d: server '%s/%s': 'resolvers %s': %s", srv->conf_file,
					  srv->conf_line, px->name, srv->name, d->rs_name, err);
				free(err);
				errors++;
				continue;
			}
			if (!srv->fqdn)
				continue;   /* an IP address: nothing to resolve */
			if (srv->fqdn[0] == '_') {
				struct srv_srvrq *q = srvrq_get(px, srv->fqdn, d->rs);

				q->srvs = xrealloc(q->srvs, (size_t)(q->nsrv + 1) * sizeof(*q->srvs));
				q->srvs[q->nsrv++] = srv;
				d->srvrq = q;
				free(srv->fqdn);
				srv->fqdn = NULL;   /* a free slot until a record fills it */
				continue;
			}
			srv_dns_ask(srv);
		}
	for (struct srv_srvrq *q = srvrqs; q && !errors; q = q->next)
		if (!q->req.res && dns_req_attach(&q->req, q->rs, q->name, DNS_T_SRV) == -1) {
			log_alert("server-template of '%s/%s': '%s' is no valid SRV record name",
				  q->px->name, q->srvs[0]->name, q->name);
			errors++;
		}
	return errors;
}

/* Frees the templates of <px> (its servers are gone). */
static void srv_dns_px_release(struct proxy *px)
{
	for (struct srv_srvrq **pp = &srvrqs; *pp; ) {
		struct srv_srvrq *q = *pp;

		if (q->px != px) {
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		dns_req_detach(&q->req);
		free(q->srvs);
		free(q->name);
		free(q);
	}
}

static struct proxy_ext srv_dns_ext = { NULL, srv_dns_px_release, NULL };

/* ---- runtime API ---- */

int srv_dns_cli_set_fqdn(struct cli_ctx *ctx, struct server *srv, const char *fqdn)
{
	char name[DNS_NAME_MAX + 1], *old;

	if (!fqdn || !*fqdn) {
		dstr_printf(&ctx->out, "set server <b>/<s> fqdn requires a FQDN.\n");
		return -1;
	}
	if (!srv->dns || !srv->dns->rs) {
		dstr_printf(&ctx->out, "set server <b>/<s> fqdn failed because no resolution is "
			    "configured.\n");
		return -1;
	}
	if (srv->dns->srvrq) {
		dstr_printf(&ctx->out, "set server <b>/<s> fqdn failed because SRV resolution is "
			    "configured.\n");
		return -1;
	}
	if (dns_name_norm(fqdn, strlen(fqdn), name) == -1) {
		dstr_printf(&ctx->out, "could not update %s/%s FQDN by 'stats socket command'\n",
			    srv->px->name, srv->name);
		return -1;
	}
	old = srv->fqdn;
	dstr_printf(&ctx->out, "%s/%s changed its FQDN from %s to %s by 'stats socket command'\n",
		    srv->px->name, srv->name, old ? old : "(null)", name);
	log_event_px_lv(&srv->px->loggers, LOG_L_NOTICE, LOG_L_NOTICE, "%s/%s changed its FQDN "
			"from %s to %s by 'stats socket command'", srv->px->name, srv->name,
			old ? old : "(null)", name);
	srv->fqdn = xstrdup(name);
	free(old);
	srv_dns_ask(srv);
	return 0;
}

static int srv_set_fqdn(struct cli_ctx *ctx, struct server *srv, const struct srv_set_kw *kw,
			int argc, char **argv)
{
	return srv_dns_cli_set_fqdn(ctx, srv, argc > 0 ? argv[0] : NULL);
}

static struct srv_set_kw srv_dns_set_kws[] = {
	{ "fqdn", .set = srv_set_fqdn },
};

static struct srv_kw srv_dns_kws[] = {
	{ "resolvers", .parse = srv_resolvers_kw },
	{ "resolve-prefer", .parse = srv_resolve_prefer_kw },
	{ "resolve-opts", .parse = srv_resolve_opts_kw },
	{ "resolve-net", .parse = srv_resolve_net_kw },
};

SLUICE_INIT(srv_dns_register)
{
	srv_register_keywords(srv_dns_kws, ARRAY_SIZE(srv_dns_kws));
	cfg_register_postparse(srv_dns_postparse, 31);
	proxy_register_ext(&srv_dns_ext);
	server_set_register(srv_dns_set_kws, ARRAY_SIZE(srv_dns_set_kws));
}
