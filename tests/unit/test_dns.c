/* Unit tests of the DNS client (net/dns.c) and of the resolvers section:
 * host names, answers read through c-ares (valid, errors, hostile: loops,
 * counts that lie, truncation), the check of datagrams before c-ares sees
 * them (size, source, ID, question), and the section's keywords, defaults
 * and errors. DNS at run time end to end: tests/dns/run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include <sluice/dns.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_dns.h>
#include <sluice/ticks.h>

#include "cfg_capture.h"

/* ---- building messages ---- */

struct msg {
	uint8_t b[8192];
	size_t  n;
};

static void put16(struct msg *m, uint16_t v)
{
	m->b[m->n++] = (uint8_t)(v >> 8);
	m->b[m->n++] = (uint8_t)v;
}

static void put_name(struct msg *m, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		m->b[m->n++] = (uint8_t)l;
		memcpy(m->b + m->n, name, l);
		m->n += l;
		name += l + (dot ? 1 : 0);
	}
	m->b[m->n++] = 0;
}

/* A header (<flags>: 0x8180 an answer, rcode in the low bits) and the
 * question <name>/<type>. */
static void msg_start(struct msg *m, uint16_t id, uint16_t flags, uint16_t an, const char *name,
                      uint16_t type)
{
	m->n = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, 1);
	put16(m, an);
	put16(m, 0);
	put16(m, 0);
	put_name(m, name);
	put16(m, type);
	put16(m, 1);
}

/* A record named by a pointer to the question's name (offset 12). */
static void put_rr(struct msg *m, uint16_t type, const void *rdata, uint16_t len)
{
	put16(m, 0xc00c);
	put16(m, type);
	put16(m, 1);
	put16(m, 0);
	put16(m, 60);
	put16(m, len);
	memcpy(m->b + m->n, rdata, len);
	m->n += len;
}

static void put_a(struct msg *m, const char *ip)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, ip, &a), 1);
	put_rr(m, DNS_T_A, &a, 4);
}

static void put_srv(struct msg *m, uint16_t prio, uint16_t weight, uint16_t port,
                    const char *target)
{
	struct msg rd = { .n = 0 };

	put16(&rd, prio);
	put16(&rd, weight);
	put16(&rd, port);
	put_name(&rd, target);
	put_rr(m, DNS_T_SRV, rd.b, (uint16_t)rd.n);
}

/* ---- names ---- */

static void test_name_norm(void **state)
{
	char out[DNS_NAME_MAX + 1], big[300];

	assert_int_equal(dns_name_norm("App.Example.COM.", 16, out), 0);
	assert_string_equal(out, "app.example.com");
	assert_int_equal(dns_name_norm("_http._tcp.svc", 14, out), 0);
	assert_string_equal(out, "_http._tcp.svc");
	assert_int_equal(dns_name_norm("a..b", 4, out), -1);
	assert_int_equal(dns_name_norm(".a", 2, out), -1);
	assert_int_equal(dns_name_norm("", 0, out), -1);
	assert_int_equal(dns_name_norm("a b", 3, out), -1);
	assert_int_equal(dns_name_norm("a/b", 3, out), -1);
	memset(big, 'a', 64);
	assert_int_equal(dns_name_norm(big, 64, out), -1);   /* label over 63 */
	assert_int_equal(dns_name_norm(big, 63, out), 0);
	for (int i = 0; i < 300; i++)
		big[i] = i % 2 ? '.' : 'x';
	assert_int_equal(dns_name_norm(big, 253, out), 0);
	assert_int_equal(dns_name_norm(big, 255, out), -1);  /* name over 253 */
}

/* ---- answers ---- */

static void test_answer_a(void **state)
{
	struct dns_answer a;
	struct msg m;

	msg_start(&m, 7, 0x8180, 2, "app.test", DNS_T_A);
	put_a(&m, "10.0.0.1");
	put_a(&m, "10.0.0.2");
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_VALID);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.items[0].family, AF_INET);
	assert_int_equal(a.items[1].ip.v4.s_addr, inet_addr("10.0.0.2"));
	assert_int_equal(a.cname, 0);
	dns_answer_release(&a);
	assert_null(a.items);

	/* every record cut off at every byte: never a crash, never valid
	 * once a record is incomplete */
	for (size_t cut = 12; cut < m.n; cut++) {
		enum dns_verdict v = dns_answer_read(DNS_T_A, m.b, (int)cut, &a);

		assert_true(v == DNS_V_INVALID || v == DNS_V_EMPTY);
		dns_answer_release(&a);
	}
}

static void test_answer_errors(void **state)
{
	struct dns_answer a;
	struct msg m;

	msg_start(&m, 1, 0x8183, 0, "nx.test", DNS_T_A);
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_NX);
	msg_start(&m, 1, 0x8185, 0, "x.test", DNS_T_A);
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_REFUSED);
	msg_start(&m, 1, 0x8182, 0, "x.test", DNS_T_A);
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_OTHER);
	msg_start(&m, 1, 0x8180, 0, "x.test", DNS_T_AAAA);
	assert_int_equal(dns_answer_read(DNS_T_AAAA, m.b, (int)m.n, &a), DNS_V_EMPTY);
	/* TC: truncated, whatever it holds */
	msg_start(&m, 1, 0x8380, 1, "x.test", DNS_T_A);
	put_a(&m, "10.0.0.1");
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_TRUNCATED);
	/* a query is no answer; a short header neither */
	msg_start(&m, 1, 0x0100, 0, "x.test", DNS_T_A);
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_INVALID);
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, 11, &a), DNS_V_INVALID);
	/* records of another type only */
	msg_start(&m, 1, 0x8180, 1, "x.test", DNS_T_AAAA);
	put_a(&m, "10.0.0.1");
	assert_int_equal(dns_answer_read(DNS_T_AAAA, m.b, (int)m.n, &a), DNS_V_EMPTY);
	assert_int_equal(a.n, 0);
}

static void test_answer_hostile(void **state)
{
	struct dns_answer a;
	struct msg m;
	size_t at;

	/* a record count that lies: 40 announced, one present */
	msg_start(&m, 1, 0x8180, 40, "x.test", DNS_T_A);
	put_a(&m, "10.0.0.1");
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_INVALID);
	assert_int_equal(a.n, 0);
	/* a record name pointing to itself */
	msg_start(&m, 1, 0x8180, 1, "x.test", DNS_T_A);
	at = m.n;
	put_a(&m, "10.0.0.1");
	m.b[at] = (uint8_t)(0xc0 | (at >> 8));
	m.b[at + 1] = (uint8_t)at;
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_INVALID);
	/* two pointers pointing to each other */
	msg_start(&m, 1, 0x8180, 1, "x.test", DNS_T_A);
	at = m.n;
	put16(&m, (uint16_t)(0xc000 | (at + 2)));
	put16(&m, (uint16_t)(0xc000 | at));
	put16(&m, DNS_T_A);
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_INVALID);
	/* an rdata length beyond the end */
	msg_start(&m, 1, 0x8180, 1, "x.test", DNS_T_A);
	put_a(&m, "10.0.0.1");
	m.b[m.n - 5] = 200;
	assert_int_equal(dns_answer_read(DNS_T_A, m.b, (int)m.n, &a), DNS_V_INVALID);
}

static void test_answer_srv(void **state)
{
	struct dns_answer a;
	struct msg m;

	msg_start(&m, 3, 0x8180, 3, "_http._tcp.svc.test", DNS_T_SRV);
	put_srv(&m, 0, 100, 8080, "Web1.Svc.Test");
	put_srv(&m, 1, 0, 8081, "web2.svc.test");
	put_srv(&m, 0, 10, 80, "");   /* "." : no service there */
	assert_int_equal(dns_answer_read(DNS_T_SRV, m.b, (int)m.n, &a), DNS_V_VALID);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.items[0].target, "web1.svc.test");
	assert_int_equal(a.items[0].port, 8080);
	assert_int_equal(a.items[0].weight, 100);
	assert_int_equal(a.items[1].prio, 1);
	assert_int_equal(a.items[1].family, AF_UNSPEC);
	dns_answer_release(&a);
	/* only the "no service" record: nothing */
	msg_start(&m, 3, 0x8180, 1, "_http._tcp.svc.test", DNS_T_SRV);
	put_srv(&m, 0, 10, 80, "");
	assert_int_equal(dns_answer_read(DNS_T_SRV, m.b, (int)m.n, &a), DNS_V_EMPTY);
}

/* ---- the datagram check ---- */

static struct dns_ns *test_ns(struct dns_resolvers **rs)
{
	char *err = NULL;

	*rs = dns_resolvers_new("t", "t.cfg", 1);
	assert_int_equal(dns_ns_add(*rs, "ns1", "127.0.0.1:5353", "t.cfg", 2, &err), 0);
	return (*rs)->ns;
}

static void test_dgram_check(void **state)
{
	struct sockaddr_in from = { .sin_family = AF_INET, .sin_port = htons(5353) };
	struct sockaddr_in other = from;
	struct dns_resolvers *rs;
	struct dns_ns *ns = test_ns(&rs);
	uint64_t exp = tick_now_ms() + 60000;
	struct msg q, m, big;

	from.sin_addr.s_addr = other.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	other.sin_port = htons(5354);
	msg_start(&q, 0x1234, 0x0100, 0, "App.test", DNS_T_A);
	dns_dgram_sent(ns, q.b, q.n, exp);
	assert_int_equal(ns->npend, 1);

	msg_start(&m, 0x1234, 0x8180, 1, "app.TEST", DNS_T_A);
	put_a(&m, "10.0.0.1");
	/* from another port: a stranger */
	assert_int_equal(dns_dgram_check(ns, m.b, m.n, m.n, (struct sockaddr *)&other), -1);
	assert_int_equal(ns->cnt.invalid, 1);
	/* another question with the right ID */
	msg_start(&big, 0x1234, 0x8180, 0, "other.test", DNS_T_A);
	assert_int_equal(dns_dgram_check(ns, big.b, big.n, big.n, (struct sockaddr *)&from), -1);
	assert_int_equal(ns->cnt.invalid, 2);
	msg_start(&big, 0x1234, 0x8180, 0, "app.test", DNS_T_AAAA);
	assert_int_equal(dns_dgram_check(ns, big.b, big.n, big.n, (struct sockaddr *)&from), -1);
	assert_int_equal(ns->cnt.invalid, 3);
	/* too short */
	assert_int_equal(dns_dgram_check(ns, m.b, 11, 11, (struct sockaddr *)&from), -1);
	assert_int_equal(ns->cnt.invalid, 4);
	/* larger than accepted_payload_size (512), or than the buffer */
	assert_int_equal(dns_dgram_check(ns, m.b, m.n, 513, (struct sockaddr *)&from), -1);
	assert_int_equal(dns_dgram_check(ns, m.b, m.n, m.n + 1, (struct sockaddr *)&from), -1);
	assert_int_equal(ns->cnt.too_big, 2);
	/* another ID */
	m.b[1] ^= 1;
	assert_int_equal(dns_dgram_check(ns, m.b, m.n, m.n, (struct sockaddr *)&from), -1);
	assert_int_equal(ns->cnt.outdated, 1);
	m.b[1] ^= 1;
	/* the answer passes once; its copy is outdated */
	assert_int_equal(dns_dgram_check(ns, m.b, m.n, m.n, (struct sockaddr *)&from), 0);
	assert_int_equal(ns->npend, 0);
	assert_int_equal(dns_dgram_check(ns, m.b, m.n, m.n, (struct sockaddr *)&from), -1);
	assert_int_equal(ns->cnt.outdated, 2);
	/* an expired query's answer is outdated too */
	dns_dgram_sent(ns, q.b, q.n, 1);
	assert_int_equal(dns_dgram_check(ns, m.b, m.n, m.n, (struct sockaddr *)&from), -1);
	assert_int_equal(ns->cnt.outdated, 3);
	/* a query is no answer */
	dns_dgram_sent(ns, q.b, q.n, exp);
	assert_int_equal(dns_dgram_check(ns, q.b, q.n, q.n, NULL), -1);
	assert_int_equal(ns->cnt.invalid, 5);
	dns_free_all();
}

/* ---- the section ---- */

static int reset(void **state)
{
	proxy_free_all();
	dns_free_all();
	log_list_free(&global.loggers);
	restore_global();
	return 0;
}

static void test_section_keywords(void **state)
{
	struct dns_resolvers *rs;
	struct dns_ns *ns;

	assert_int_equal(parse("resolvers dns\n"
			       "    nameserver a 127.0.0.1\n"
			       "    nameserver b tcp@[::1]:5353\n"
			       "    nameserver c udp@10.0.0.1:54\n"
			       "    accepted_payload_size 4096\n"
			       "    resolve_retries 5\n"
			       "    timeout resolve 2s\n"
			       "    timeout retry 300ms\n"
			       "    hold valid 7s\n"
			       "    hold nx 1s\n"
			       "    hold refused 2s\n"
			       "    hold timeout 3s\n"
			       "    hold other 4s\n"
			       "    hold obsolete 5s\n"
			       "resolvers plain\n"
			       "    nameserver a 127.0.0.1:53\n"), 0);
	assert_int_equal(postparse(), 0);
	rs = dns_resolvers_find("dns");
	assert_non_null(rs);
	assert_int_equal(rs->nns, 3);
	ns = rs->ns;
	assert_string_equal(ns->id, "a");
	assert_int_equal(ntohs(((struct sockaddr_in *)&ns->addr)->sin_port), 53);
	assert_int_equal(ns->tcp, 0);
	assert_int_equal(ns->next->tcp, 1);
	assert_int_equal(ns->next->addr.ss_family, AF_INET6);
	assert_int_equal(ns->next->next->tcp, 0);
	assert_int_equal(rs->payload, 4096);
	assert_int_equal(rs->retries, 5);
	assert_int_equal(rs->t_resolve, 2000);
	assert_int_equal(rs->t_retry, 300);
	assert_int_equal(rs->hold[DNS_HOLD_VALID], 7000);
	assert_int_equal(rs->hold[DNS_HOLD_NX], 1000);
	assert_int_equal(rs->hold[DNS_HOLD_REFUSED], 2000);
	assert_int_equal(rs->hold[DNS_HOLD_TIMEOUT], 3000);
	assert_int_equal(rs->hold[DNS_HOLD_OTHER], 4000);
	assert_int_equal(rs->hold[DNS_HOLD_OBSOLETE], 5000);
	/* HAProxy's defaults */
	rs = dns_resolvers_find("plain");
	assert_int_equal(rs->payload, 512);
	assert_int_equal(rs->retries, 3);
	assert_int_equal(rs->t_resolve, 1000);
	assert_int_equal(rs->t_retry, 1000);
	assert_int_equal(rs->hold[DNS_HOLD_VALID], 10000);
	assert_int_equal(rs->hold[DNS_HOLD_NX], 30000);
	assert_int_equal(rs->hold[DNS_HOLD_OBSOLETE], 0);
	assert_int_equal(dns_hold_of(DNS_ST_REFUSED), DNS_HOLD_REFUSED);
	assert_string_equal(dns_status_str(DNS_ST_TIMEOUT), "timeout");
}

static void test_section_errors(void **state)
{
	assert_int_equal(parse("resolvers r\n"
			       "    nameserver a host.example:53\n"
			       "    nameserver b 127.0.0.1:53 maxconn 10\n"
			       "    nameserver c 127.0.0.1:99999\n"
			       "    nameserver d /tmp/sock\n"
			       "    accepted_payload_size 511\n"
			       "    resolve_retries 0\n"
			       "    hold sometimes 1s\n"
			       "    timeout connect 1s\n"
			       "resolvers r\n"), 9);
	assert_non_null(strstr(errtext, "t.cfg:2: 'nameserver' in resolvers section: 'a':"));
	assert_non_null(strstr(errtext, "t.cfg:3: 'nameserver'"));
	assert_non_null(strstr(errtext, "t.cfg:5: 'nameserver' in resolvers section: 'd': '/tmp/sock'"));
	assert_non_null(strstr(errtext, "t.cfg:6: 'accepted_payload_size'"));
	assert_non_null(strstr(errtext, "t.cfg:8: unknown keyword 'hold sometimes'"));
	assert_non_null(strstr(errtext, "t.cfg:10: 'resolvers' in resolvers section: resolvers 'r' "
			       "is already declared at t.cfg:1"));
	reset(NULL);
	assert_int_equal(parse("resolvers empty\n    timeout retry 0\n"), 0);
	assert_int_equal(postparse(), 2);
	assert_non_null(strstr(errtext, "t.cfg:1: resolvers 'empty' has no name server"));
	assert_non_null(strstr(errtext, "'timeout retry' must not be zero"));
}

/* parse-resolv-conf's reading of a resolv.conf: IPv4 and IPv6 name
 * servers, named after their addresses; the rest ignored. */
static void test_resolv_conf(void **state)
{
	char path[] = "/tmp/sluice-resolv.XXXXXX";
	struct dns_resolvers *rs = dns_resolvers_new("rc", "t.cfg", 1);
	char *err = NULL;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# comment\nsearch example.com\nnameserver 10.0.0.53\n"
	      "nameserver   2001:db8::53  \nnameserver fe80::1%eth0\nnameserver bogus\n"
	      "options ndots:2\nnameserver 10.0.0.53\n", f);
	fclose(f);
	assert_int_equal(dns_ns_add_resolv_conf(rs, path, "t.cfg", 2, &err), 2);
	assert_int_equal(rs->nns, 2);
	assert_string_equal(rs->ns->id, "10.0.0.53");
	assert_int_equal(ntohs(((struct sockaddr_in *)&rs->ns->addr)->sin_port), 53);
	assert_string_equal(rs->ns->next->id, "2001:db8::53");
	assert_int_equal(rs->ns->next->addr.ss_family, AF_INET6);
	unlink(path);
	assert_int_equal(dns_ns_add_resolv_conf(rs, path, "t.cfg", 2, &err), -1);
	assert_non_null(strstr(err, "cannot read"));
	free(err);
	dns_free_all();
}

/* Server options: the settings, default-server inheritance, and their
 * errors; a template of SRV records starts without addresses. */
static void test_server_options(void **state)
{
	struct proxy *px;
	struct server *s;

	assert_int_equal(parse("resolvers dns\n    nameserver a 127.0.0.1:53\n"
			       "defaults\n    timeout client 1s\n    timeout server 1s\n"
			       "    timeout connect 1s\n"
			       "backend be\n"
			       "    default-server resolvers dns resolve-prefer ipv4 init-addr none\n"
			       "    server a app.test:80\n"
			       "    server b app.test:81 resolve-prefer ipv6 resolve-opts "
			       "allow-dup-ip,ignore-weight resolve-net 10.0.0.0/8,2001:db8::/32\n"
			       "    server c 10.1.2.3:80\n"
			       "    server-template w 2 _http._tcp.svc.test:99\n"), 0);
	assert_int_equal(postparse(), 0);
	px = proxy_find("be", PR_CAP_BE);
	s = px->servers;
	assert_string_equal(s->fqdn, "app.test");
	assert_int_equal(s->dns->prefer, AF_INET);
	assert_ptr_equal(s->dns->owner, s);
	assert_ptr_equal(s->dns->rs, dns_resolvers_find("dns"));
	assert_true(s->flags & SRV_F_RMAINT);
	assert_false(server_usable(s));
	s = s->next;
	assert_int_equal(s->dns->prefer, AF_INET6);
	assert_int_equal(s->dns->opts, SRV_DNS_O_ALLOW_DUP | SRV_DNS_O_IGNORE_WEIGHT);
	assert_int_equal(s->dns->nnets, 2);
	assert_int_equal(s->dns->nets[1].bits, 32);
	assert_ptr_not_equal(s->dns, px->servers->dns);
	s = s->next;
	assert_null(s->fqdn);   /* an IP: nothing to ask */
	assert_true(server_usable(s));
	s = s->next;
	assert_string_equal(s->name, "w1");
	assert_null(s->fqdn);   /* a free slot until a record fills it */
	assert_string_equal(srv_dns_srvrecord(s), "_http._tcp.svc.test");
	assert_true(s->flags & SRV_F_RMAINT);
	assert_string_equal(s->addr_str, "");
	assert_string_equal(srv_dns_srvrecord(s->next), "_http._tcp.svc.test");

	reset(NULL);
	assert_int_equal(parse("backend be\n"
			       "    server a h.test:80 init-addr none resolve-opts fast\n"
			       "    server b h.test:80 init-addr none resolve-prefer ipv5\n"
			       "    server c h.test:80 init-addr none resolve-net 10.0.0.0/40\n"
			       "    server d h.test:80 init-addr none resolvers\n"), 4);
	assert_non_null(strstr(errtext, "unknown option 'fast'"));
	assert_non_null(strstr(errtext, "expects 'ipv4' or 'ipv6', got 'ipv5'"));
	assert_non_null(strstr(errtext, "'10.0.0.0/40' is no network"));
	assert_non_null(strstr(errtext, "expects the name of a resolvers section"));

	reset(NULL);
	assert_int_equal(parse("backend be\n"
			       "    server a h.test:80 init-addr none resolvers nosuch\n"), 0);
	assert_int_equal(postparse(), 1);
	assert_non_null(strstr(errtext, "server 'be/a': 'resolvers nosuch': no resolvers section "
			       "named 'nosuch'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_norm),
		cmocka_unit_test(test_answer_a),
		cmocka_unit_test(test_answer_errors),
		cmocka_unit_test(test_answer_hostile),
		cmocka_unit_test(test_answer_srv),
		cmocka_unit_test(test_dgram_check),
		cmocka_unit_test(test_resolv_conf),
		cmocka_unit_test_teardown(test_section_keywords, reset),
		cmocka_unit_test_teardown(test_section_errors, reset),
		cmocka_unit_test_teardown(test_server_options, reset),
	};

	return cmocka_run_group_tests(tests, capture_group_setup, NULL);
}
