/* libFuzzer harness for DNS answers (net/dns.c, proxy/srv_dns.c): the bytes
 * are read as an answer by c-ares for each query type, checked as a
 * datagram, and fed to one resolution of a configuration whose servers
 * follow them (a template of A/AAAA records, a server with resolve-net, a
 * template of SRV records). Whatever the bytes: records are well formed,
 * no two servers of a template share an address, a server filled from an
 * SRV record has a target and a port, and a server has an address unless
 * it is in maintenance for want of one.
 * Input: one control byte (bits 0-2: which resolution, bit 3: ask A or
 * AAAA), then the answer. */
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/dns.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_dns.h>
#include <sluice/ticks.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* No DNS while parsing: init-addr none everywhere, and no libc query. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
	*res = NULL;
	return EAI_NONAME;
}

static const char cfg[] =
	"resolvers dns\n"
	"    nameserver ns1 127.0.0.1:53\n"
	"    hold obsolete 0s\n"
	"defaults\n"
	"    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n"
	"backend a\n"
	"    server-template s 4 pool.test:80 resolvers dns init-addr none\n"
	"    server p app.test:80 resolvers dns init-addr none resolve-prefer ipv4 "
	"resolve-net 10.0.0.0/8,2001:db8::/32\n"
	"    server d pool.test:80 resolvers dns init-addr none resolve-opts allow-dup-ip\n"
	"backend b\n"
	"    server-template w 4 _http._tcp.svc.test resolvers dns init-addr none\n";

static struct dns_resolvers *rs;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (cfg_parse_text("fuzz.cfg", cfg, sizeof(cfg) - 1) || cfg_postparse())
		abort();
	rs = dns_resolvers_find("dns");
	if (!rs || !rs->res)
		abort();
	return 0;
}

/* A record as dns_answer_read() must give it. */
static void check_answer(int qtype, enum dns_verdict v, const struct dns_answer *a)
{
	CHECK(v >= DNS_V_VALID && v <= DNS_V_INVALID);
	CHECK(v == DNS_V_VALID ? a->n > 0 : a->n == 0);
	for (int i = 0; i < a->n; i++) {
		const struct dns_item *it = &a->items[i];

		if (qtype == DNS_T_SRV) {
			char norm[DNS_NAME_MAX + 1];

			CHECK(it->family == AF_UNSPEC && it->target && it->port);
			CHECK(dns_name_norm(it->target, strlen(it->target), norm) == 0);
			CHECK(strcmp(norm, it->target) == 0);
		} else {
			CHECK(it->family == (qtype == DNS_T_A ? AF_INET : AF_INET6));
			CHECK(!it->target);
		}
	}
}

/* The servers' invariants after an answer. */
static void check_servers(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *s = px->servers; s; s = s->next) {
			if (srv_dns_srvrecord(s) && s->fqdn)
				CHECK(addr_get_port(&s->addr) != 0);
			if (srv_dns_srvrecord(s) && !s->fqdn)
				CHECK(s->flags & SRV_F_RMAINT);
			if (s->flags & SRV_F_RMAINT)
				continue;
			CHECK(*s->addr_str);
			for (struct server *o = s->next; o; o = o->next)
				if (!(o->flags & SRV_F_RMAINT) && s->fqdn && o->fqdn &&
				    strcmp(s->fqdn, o->fqdn) == 0 &&
				    addr_get_port(&s->addr) == addr_get_port(&o->addr) &&
				    !(s->dns->opts & SRV_DNS_O_ALLOW_DUP) &&
				    !(o->dns->opts & SRV_DNS_O_ALLOW_DUP))
					CHECK(s->addr.ss_family != o->addr.ss_family ||
					      memcmp(&s->addr, &o->addr, sizeof(s->addr)) != 0);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int types[] = { DNS_T_A, DNS_T_AAAA, DNS_T_SRV };
	struct dns_res *res;
	int n = 0, pick;

	if (size < 1)
		return 0;
	for (size_t i = 0; i < 3; i++) {
		struct dns_answer a;
		enum dns_verdict v = dns_answer_read(types[i], data + 1, (int)size - 1, &a);

		check_answer(types[i], v, &a);
		dns_answer_release(&a);
	}
	/* as a datagram: its question taken as the one asked, then checked */
	rs->ns->npend = 0;
	dns_dgram_sent(rs->ns, data + 1, size - 1, tick_now_ms() + 1000);
	(void)dns_dgram_check(rs->ns, data + 1, size - 1, size - 1, NULL);

	for (res = rs->res; res; res = res->next)
		if (res->reqs)
			n++;
	pick = (data[0] & 7) % n;
	for (res = rs->res; res && !(res->reqs && pick-- == 0); res = res->next)
		;
	if (res->qtype != DNS_T_SRV)
		res->cur_type = (data[0] & 8) ? DNS_T_A : DNS_T_AAAA;
	dns_res_feed(res, rs->ns, data + 1, (int)size - 1);
	CHECK(!res->running);
	check_servers();
	dns_resolvers_sweep(rs, 1);   /* targets no server asks for any more */
	return 0;
}
