/* The DNS client of `resolvers` sections (dns.h): one c-ares channel per name
 * server, its sockets watched by ev_io and its timeouts by an ev_timer, so
 * that every name server is asked at once and the first valid answer wins;
 * resolutions shared by their requesters, retried, and kept as a cache. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include <ares.h>

#include <sluice/addr.h>
#include <sluice/common.h>
#include <sluice/dns.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/str.h>
#include <sluice/ticks.h>

#define DNS_MAX_ADDRS 64     /* addresses kept from one answer */
#define DNS_MAX_SRV   256    /* SRV records kept from one answer */
#define DNS_MAX_PEND  4096   /* UDP queries remembered per name server */

/* A UDP query in flight, for the datagram check. */
struct dns_pend {
	uint16_t id, qtype;
	uint64_t expire;             /* tick_ms */
	char     name[DNS_NAME_MAX + 1];
};

/* A socket c-ares opened. */
struct dns_sock {
	struct dns_sock *next;
	struct dns_chan *chan;
	int              fd;
	int              dgram;      /* SOCK_DGRAM */
	ev_io            io;
};

/* The c-ares side of a name server. */
struct dns_chan {
	ares_channel     ch;
	struct dns_ns   *ns;
	ev_timer         tmo;
	struct dns_sock *socks;
};

/* One query sent to one name server. */
struct dns_query {
	struct dns_res *res;         /* NULL once the resolution is gone */
	struct dns_ns  *ns;
	unsigned        attempt;
	int             qtype;
};

static struct dns_resolvers *dns_sections;
static int dns_lib_ready;

static void dns_res_start(struct dns_res *res);
static void dns_chan_rearm(struct dns_chan *c);

/* ---- names, statuses ---- */

const char *dns_status_str(enum dns_status st)
{
	static const char *const s[] = { "none", "valid", "nx", "refused", "timeout", "other" };

	return (unsigned)st < ARRAY_SIZE(s) ? s[st] : "other";
}

enum dns_hold dns_hold_of(enum dns_status st)
{
	switch (st) {
	case DNS_ST_VALID:   return DNS_HOLD_VALID;
	case DNS_ST_NX:      return DNS_HOLD_NX;
	case DNS_ST_REFUSED: return DNS_HOLD_REFUSED;
	case DNS_ST_TIMEOUT: return DNS_HOLD_TIMEOUT;
	default:             return DNS_HOLD_OTHER;
	}
}

int dns_name_norm(const char *name, size_t len, char *out)
{
	size_t label = 0, o = 0;

	if (len && name[len - 1] == '.')
		len--;
	if (!len || len > DNS_NAME_MAX)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '.') {
			if (!label)
				return -1;
			label = 0;
		} else if (isalnum(c) || c == '-' || c == '_') {
			if (++label > 63)
				return -1;
		} else {
			return -1;
		}
		out[o++] = (char)tolower(c);
	}
	if (!label)
		return -1;
	out[o] = 0;
	return 0;
}

/* ---- sections and name servers ---- */

struct dns_resolvers *dns_resolvers_new(const char *id, const char *file, int line)
{
	struct dns_resolvers *rs = xcalloc(1, sizeof(*rs)), **tail;

	rs->id = xstrdup(id);
	rs->conf_file = xstrdup(file ? file : "");
	rs->conf_line = line;
	rs->payload = 512;
	rs->retries = 3;
	rs->t_resolve = rs->t_retry = 1000;
	rs->hold[DNS_HOLD_VALID] = 10000;
	rs->hold[DNS_HOLD_NX] = rs->hold[DNS_HOLD_REFUSED] = 30000;
	rs->hold[DNS_HOLD_TIMEOUT] = rs->hold[DNS_HOLD_OTHER] = 30000;
	rs->hold[DNS_HOLD_OBSOLETE] = 0;
	for (tail = &dns_sections; *tail; tail = &(*tail)->next)
		;
	*tail = rs;
	return rs;
}

struct dns_resolvers *dns_resolvers_find(const char *id)
{
	for (struct dns_resolvers *rs = dns_sections; rs; rs = rs->next)
		if (strcmp(rs->id, id) == 0)
			return rs;
	return NULL;
}

struct dns_resolvers *dns_resolvers_first(void)
{
	return dns_sections;
}

int dns_ns_add(struct dns_resolvers *rs, const char *id, const char *addr, const char *file,
               int line, char **err)
{
	struct dns_ns *ns, **tail;
	struct addr_spec as;
	int tcp = 0;

	for (ns = rs->ns; ns; ns = ns->next)
		if (strcmp(ns->id, id) == 0) {
			*err = str_fmt("name server '%s' is already declared at %s:%d", id,
				       ns->conf_file, ns->conf_line);
			return -1;
		}
	if (strncmp(addr, "tcp@", 4) == 0 || strncmp(addr, "tcp4@", 5) == 0 ||
	    strncmp(addr, "tcp6@", 5) == 0) {
		tcp = 1;
		addr = strchr(addr, '@') + 1;
	} else if (strncmp(addr, "udp@", 4) == 0 || strncmp(addr, "udp4@", 5) == 0 ||
		   strncmp(addr, "udp6@", 5) == 0) {
		addr = strchr(addr, '@') + 1;
	}
	if (addr_parse(addr, &as, ADDR_F_PORT_OPTIONAL, err) == -1)
		return -1;
	if (as.kind != ADDR_K_INET) {
		free(*err);
		*err = str_fmt("'%s': a name server is an IPv4 or IPv6 address", addr);
		return -1;
	}
	if (!as.port_lo)
		addr_set_port(&as.ss, 53);
	ns = xcalloc(1, sizeof(*ns));
	ns->rs = rs;
	ns->id = xstrdup(id);
	ns->addr = as.ss;
	ns->addrlen = as.len;
	ns->tcp = tcp;
	ns->conf_file = xstrdup(file ? file : "");
	ns->conf_line = line;
	for (tail = &rs->ns; *tail; tail = &(*tail)->next)
		;
	*tail = ns;
	rs->nns++;
	return 0;
}

int dns_ns_add_resolv_conf(struct dns_resolvers *rs, const char *path, const char *file,
                           int line, char **err)
{
	FILE *f = fopen(path, "r");
	char buf[512];
	int n = 0;

	if (!f) {
		*err = str_fmt("cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *save = NULL, *w = strtok_r(buf, " \t\r\n", &save), *ip, id[80];
		struct in6_addr a6;
		struct in_addr a4;
		char *e = NULL, addr[96];

		if (!w || strcmp(w, "nameserver") != 0 || !(ip = strtok_r(NULL, " \t\r\n", &save)))
			continue;
		/* HAProxy's "ip:port" text: brackets for IPv6 */
		if (inet_pton(AF_INET, ip, &a4) == 1)
			snprintf(addr, sizeof(addr), "%s:53", ip);
		else if (inet_pton(AF_INET6, ip, &a6) == 1)
			snprintf(addr, sizeof(addr), "[%s]:53", ip);
		else
			continue;   /* a scoped address (fe80::1%eth0): not for us */
		snprintf(id, sizeof(id), "%s", ip);
		if (dns_ns_add(rs, id, addr, file, line, &e) == -1) {
			/* the same address twice (a resolv.conf listing it again) */
			free(e);
			continue;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* ---- the datagram check ---- */

/* The question of message <buf>: name into <name> (DNS_NAME_MAX+1), type.
 * Returns 0, or -1 when there is not exactly one readable question. */
static int dns_msg_question(const unsigned char *buf, size_t len, char *name, uint16_t *qtype)
{
	char *exp = NULL;
	long enclen = 0;
	int st;

	if (len < 12 || buf[4] != 0 || buf[5] != 1)
		return -1;
	st = ares_expand_name(buf + 12, buf, (int)len, &exp, &enclen);
	if (st != ARES_SUCCESS)
		return -1;
	if (12 + (size_t)enclen + 4 > len || dns_name_norm(exp, strlen(exp), name) == -1) {
		ares_free_string(exp);
		return -1;
	}
	ares_free_string(exp);
	*qtype = (uint16_t)(buf[12 + enclen] << 8 | buf[12 + enclen + 1]);
	return 0;
}

void dns_dgram_sent(struct dns_ns *ns, const unsigned char *buf, size_t len, uint64_t expire)
{
	uint64_t now = tick_now_ms();
	struct dns_pend *p;
	int o = 0;

	/* the ones whose answers can no longer come go first */
	for (int i = 0; i < ns->npend; i++)
		if (ns->pend[i].expire > now)
			ns->pend[o++] = ns->pend[i];
	ns->npend = o;
	if (ns->npend == DNS_MAX_PEND) {
		memmove(ns->pend, ns->pend + 1, (size_t)(ns->npend - 1) * sizeof(*ns->pend));
		ns->npend--;
	}
	if (ns->npend == ns->pend_size) {
		int size = ns->pend_size ? ns->pend_size * 2 : 8;
		struct dns_pend *np = realloc(ns->pend, (size_t)size * sizeof(*np));

		if (!np)
			return;   /* its answer will count as outdated: no harm */
		ns->pend = np;
		ns->pend_size = size;
	}
	p = &ns->pend[ns->npend];
	if (len < 12 || dns_msg_question(buf, len, p->name, &p->qtype) == -1)
		return;
	p->id = (uint16_t)(buf[0] << 8 | buf[1]);
	p->expire = expire;
	ns->npend++;
}

/* Whether <from> is the address of <ns>. */
static int dns_same_addr(const struct dns_ns *ns, const struct sockaddr *from)
{
	if (from->sa_family != ns->addr.ss_family)
		return 0;
	if (from->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)from, *b = (const void *)&ns->addr;

		return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
	}
	if (from->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)from, *b = (const void *)&ns->addr;

		return a->sin6_port == b->sin6_port &&
		       memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr)) == 0;
	}
	return 0;
}

int dns_dgram_check(struct dns_ns *ns, const unsigned char *buf, size_t len, size_t real,
                    const struct sockaddr *from)
{
	char name[DNS_NAME_MAX + 1];
	uint64_t now = tick_now_ms();
	uint16_t id, qtype;
	int i;

	if (real > len || real > (ns->rs->payload > 512 ? ns->rs->payload : 512)) {
		ns->cnt.too_big++;
		return -1;
	}
	if (real < 12 || (from && !dns_same_addr(ns, from)) || !(buf[2] & 0x80)) {
		ns->cnt.invalid++;   /* no header, a stranger, or a query */
		return -1;
	}
	id = (uint16_t)(buf[0] << 8 | buf[1]);
	for (i = 0; i < ns->npend; i++)
		if (ns->pend[i].id == id && ns->pend[i].expire > now)
			break;
	if (i == ns->npend) {
		ns->cnt.outdated++;
		return -1;
	}
	if (dns_msg_question(buf, real, name, &qtype) == -1 || qtype != ns->pend[i].qtype ||
	    strcmp(name, ns->pend[i].name) != 0) {
		ns->cnt.invalid++;
		return -1;
	}
	/* answered: a second copy is outdated */
	ns->pend[i] = ns->pend[--ns->npend];
	return 0;
}

/* ---- reading answers (c-ares parses) ---- */

void dns_answer_release(struct dns_answer *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->items[i].target);
	free(a->items);
	a->items = NULL;
	a->n = 0;
}

/* The addresses of an A or AAAA answer. */
static enum dns_verdict dns_read_addrs(int qtype, const unsigned char *buf, int len,
                                       struct dns_answer *out)
{
	struct ares_addr6ttl t6[DNS_MAX_ADDRS];
	struct ares_addrttl t4[DNS_MAX_ADDRS];
	struct hostent *he = NULL;
	int n = DNS_MAX_ADDRS, st;

	if (qtype == DNS_T_A)
		st = ares_parse_a_reply(buf, len, &he, t4, &n);
	else
		st = ares_parse_aaaa_reply(buf, len, &he, t6, &n);
	if (he) {
		out->cname = he->h_aliases && he->h_aliases[0];
		ares_free_hostent(he);
	}
	if (st == ARES_ENODATA)
		return out->cname ? DNS_V_CNAME_ERR : DNS_V_EMPTY;
	if (st != ARES_SUCCESS)
		return DNS_V_INVALID;
	if (n <= 0)
		return out->cname ? DNS_V_CNAME_ERR : DNS_V_EMPTY;
	out->items = calloc((size_t)n, sizeof(*out->items));
	if (!out->items)
		return DNS_V_OTHER;
	for (int i = 0; i < n; i++) {
		struct dns_item *it = &out->items[out->n++];

		it->family = qtype == DNS_T_A ? AF_INET : AF_INET6;
		if (qtype == DNS_T_A)
			it->ip.v4 = t4[i].ipaddr;
		else
			memcpy(&it->ip.v6, &t6[i].ip6addr, sizeof(it->ip.v6));
	}
	return DNS_V_VALID;
}

/* The records of an SRV answer (a target "." says "no such service"). */
static enum dns_verdict dns_read_srv(const unsigned char *buf, int len, struct dns_answer *out)
{
	struct ares_srv_reply *list = NULL;
	int st = ares_parse_srv_reply(buf, len, &list), n = 0;

	if (st == ARES_ENODATA)
		return DNS_V_EMPTY;
	if (st != ARES_SUCCESS)
		return DNS_V_INVALID;
	for (struct ares_srv_reply *r = list; r; r = r->next)
		n++;
	out->items = calloc((size_t)MIN(n, DNS_MAX_SRV) + 1, sizeof(*out->items));
	if (!out->items) {
		ares_free_data(list);
		return DNS_V_OTHER;
	}
	for (struct ares_srv_reply *r = list; r && out->n < DNS_MAX_SRV; r = r->next) {
		char name[DNS_NAME_MAX + 1];
		struct dns_item *it = &out->items[out->n];

		if (!r->host || dns_name_norm(r->host, strlen(r->host), name) == -1 || !r->port)
			continue;
		it->family = AF_UNSPEC;
		it->target = strdup(name);
		if (!it->target)
			continue;
		it->port = r->port;
		it->weight = r->weight;
		it->prio = r->priority;
		out->n++;
	}
	ares_free_data(list);
	if (!out->n) {
		dns_answer_release(out);
		return DNS_V_EMPTY;
	}
	return DNS_V_VALID;
}

enum dns_verdict dns_answer_read(int qtype, const unsigned char *buf, int len,
                                 struct dns_answer *out)
{
	int rcode;

	memset(out, 0, sizeof(*out));
	if (len < 12 || !(buf[2] & 0x80))
		return DNS_V_INVALID;
	rcode = buf[3] & 0x0f;
	if (rcode == 3)
		return DNS_V_NX;
	if (rcode == 5)
		return DNS_V_REFUSED;
	if (rcode)
		return DNS_V_OTHER;
	if (buf[2] & 0x02)
		return DNS_V_TRUNCATED;
	if (!buf[6] && !buf[7])
		return DNS_V_EMPTY;
	if (qtype == DNS_T_SRV)
		return dns_read_srv(buf, len, out);
	return dns_read_addrs(qtype, buf, len, out);
}

/* ---- resolutions ---- */

static struct dns_res *dns_res_find(struct dns_resolvers *rs, const char *name, int qtype)
{
	for (struct dns_res *r = rs->res; r; r = r->next)
		if (r->qtype == qtype && strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

static void dns_res_free(struct dns_res *res)
{
	struct dns_res **pp;

	for (pp = &res->rs->res; *pp && *pp != res; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = res->next;
	for (int i = 0; i < res->nitems; i++)
		free(res->items[i].target);
	free(res->items);
	free(res->name);
	free(res);
}

/* Tells every requester that <res> ended. A requester may detach itself. */
static void dns_res_notify(struct dns_res *res)
{
	for (struct dns_req *rq = res->reqs; rq; rq = res->notify_next) {
		res->notify_next = rq->next;
		rq->done(rq);
	}
	res->notify_next = NULL;
}

/* Whether two records are the same (address; target and port). */
static int dns_item_same(const struct dns_item *a, const struct dns_item *b)
{
	if (a->family != b->family)
		return 0;
	if (a->family == AF_INET)
		return a->ip.v4.s_addr == b->ip.v4.s_addr;
	if (a->family == AF_INET6)
		return memcmp(&a->ip.v6, &b->ip.v6, sizeof(a->ip.v6)) == 0;
	return a->port == b->port && strcmp(a->target, b->target) == 0;
}

/* A valid answer: its records join those known (seen now), and those not
 * seen for longer than `hold obsolete` leave. The answer's records are
 * taken (<a> is emptied). */
static void dns_res_merge(struct dns_res *res, struct dns_answer *a, uint64_t now)
{
	uint32_t obsolete = res->rs->hold[DNS_HOLD_OBSOLETE];
	struct dns_item *items;
	int n = 0;

	items = calloc((size_t)(res->nitems + a->n) + 1, sizeof(*items));
	if (!items) {
		dns_answer_release(a);
		return;   /* the known records stay as they were */
	}
	for (int i = 0; i < a->n; i++) {
		int dup = 0;

		for (int j = 0; j < n && !dup; j++)
			dup = dns_item_same(&items[j], &a->items[i]);
		if (dup) {
			free(a->items[i].target);
			continue;
		}
		items[n] = a->items[i];
		items[n++].last_seen = now;
	}
	for (int i = 0; i < res->nitems; i++) {
		struct dns_item *old = &res->items[i];
		int seen = 0;

		for (int j = 0; j < n && !seen; j++)
			seen = dns_item_same(&items[j], old);
		if (seen || old->last_seen + obsolete < now) {
			free(old->target);
			continue;
		}
		items[n++] = *old;
	}
	free(res->items);
	free(a->items);
	a->items = NULL;
	a->n = 0;
	res->items = items;
	res->nitems = n;
}

/* The attempt failed on every name server: another one (the other address
 * type first when the error was no timeout), or the end with the error. */
static void dns_res_attempt_failed(struct dns_res *res)
{
	if (res->tries_left > 0) {
		if (res->try_err != DNS_ST_TIMEOUT && res->qtype != DNS_T_SRV)
			res->cur_type = res->cur_type == DNS_T_A ? DNS_T_AAAA : DNS_T_A;
		dns_res_start(res);
		return;
	}
	res->running = 0;
	res->status = res->try_err;
	res->last_res = tick_now_ms();
	dns_res_notify(res);
}

static enum dns_status dns_verdict_status(enum dns_verdict v)
{
	switch (v) {
	case DNS_V_VALID:   return DNS_ST_VALID;
	case DNS_V_NX:      return DNS_ST_NX;
	case DNS_V_REFUSED: return DNS_ST_REFUSED;
	default:            return DNS_ST_OTHER;
	}
}

/* Counts verdict <v> of an answer of <ns>. */
static void dns_count(struct dns_ns *ns, enum dns_verdict v, int cname)
{
	struct dns_counters *c = &ns->cnt;

	if (cname)
		c->cname++;
	switch (v) {
	case DNS_V_VALID:     c->valid++; break;
	case DNS_V_NX:        c->nx++; break;
	case DNS_V_REFUSED:   c->refused++; break;
	case DNS_V_OTHER:     c->other++; break;
	case DNS_V_EMPTY:     c->any_err++; break;
	case DNS_V_CNAME_ERR: c->cname_error++; break;
	case DNS_V_TRUNCATED: c->truncated++; break;
	case DNS_V_INVALID:   c->invalid++; break;
	}
}

/* Answer <a> (verdict <v>, status <st>) of <ns> to the attempt running for
 * <res>: a valid one ends the resolution, an error ends the attempt once
 * every name server answered. <a> is taken. */
static void dns_res_answered(struct dns_res *res, struct dns_ns *ns, enum dns_verdict v,
                             enum dns_status st, struct dns_answer *a)
{
	res->pending--;
	if (v == DNS_V_VALID) {
		uint64_t now = tick_now_ms();

		dns_res_merge(res, a, now);
		res->running = 0;
		res->status = DNS_ST_VALID;
		res->last_res = res->last_valid = now;
		res->from = ns;
		res->cname = a->cname;
		dns_res_notify(res);
		return;
	}
	dns_answer_release(a);
	res->try_err = st;
	if (!res->pending && !res->sending)
		dns_res_attempt_failed(res);
}

void dns_res_feed(struct dns_res *res, struct dns_ns *ns, const unsigned char *buf, int len)
{
	struct dns_answer a;
	enum dns_verdict v = dns_answer_read(res->cur_type, buf, len, &a);

	dns_count(ns, v, a.cname);
	res->running = 1;
	res->pending = 1;
	res->tries_left = 0;
	dns_res_answered(res, ns, v, dns_verdict_status(v), &a);
}

/* c-ares' callback for one query (ares_send()). */
static void dns_query_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct dns_query *q = arg;
	struct dns_res *res = q->res;
	struct dns_ns *ns = q->ns;
	enum dns_status st = DNS_ST_OTHER;
	struct dns_answer a = { 0 };
	enum dns_verdict v = DNS_V_OTHER;

	if (res)
		res->inflight--;
	if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED) {
		free(q);
		return;
	}
	if (status == ARES_SUCCESS && abuf) {
		v = dns_answer_read(q->qtype, abuf, alen, &a);
		dns_count(ns, v, a.cname);
		st = dns_verdict_status(v);
	} else if (status == ARES_ETIMEOUT) {
		ns->cnt.timeout++;
		st = DNS_ST_TIMEOUT;
	} else if (status == ARES_ECONNREFUSED) {
		ns->cnt.snd_error++;   /* could not reach it */
	} else {
		ns->cnt.other++;
	}
	if (!res || !res->running || q->attempt != res->attempt) {
		/* another name server answered first, or the query was left */
		if (st != DNS_ST_TIMEOUT)
			ns->cnt.outdated++;
		dns_answer_release(&a);
		free(q);
		return;
	}
	free(q);
	dns_res_answered(res, ns, v, st, &a);
}

/* Writes in query <qbuf> a random ID that no UDP query in flight to <ns>
 * has. */
static void dns_query_id(const struct dns_ns *ns, unsigned char *qbuf)
{
	uint16_t id;
	int i;

	do {
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint16_t)random();
		for (i = 0; i < ns->npend && ns->pend[i].id != id; i++)
			;
	} while (i < ns->npend);
	qbuf[0] = (unsigned char)(id >> 8);
	qbuf[1] = (unsigned char)id;
}

/* Sends the attempt of <res> to every name server. */
static void dns_res_start(struct dns_res *res)
{
	struct dns_resolvers *rs = res->rs;
	unsigned char *qbuf = NULL;
	int qlen = 0;

	if (!res->running) {
		res->running = 1;
		res->tries_left = rs->retries;
		res->cur_type = res->qtype;
	}
	res->tries_left--;
	res->attempt++;
	res->pending = 0;
	res->try_err = DNS_ST_TIMEOUT;
	if (ares_create_query(res->name, 1, res->cur_type, 0, 1, &qbuf, &qlen,
			      rs->payload > 512 ? (int)rs->payload : 0) != ARES_SUCCESS) {
		res->try_err = DNS_ST_OTHER;
		res->tries_left = 0;
		dns_res_attempt_failed(res);
		return;
	}
	res->sending = 1;
	for (struct dns_ns *ns = rs->ns; ns; ns = ns->next) {
		struct dns_query *q;

		if (!ns->chan || !(q = calloc(1, sizeof(*q)))) {
			ns->cnt.snd_error++;
			continue;
		}
		q->res = res;
		q->ns = ns;
		q->attempt = res->attempt;
		q->qtype = res->cur_type;
		/* ares_send() sends the ID it is given: an unpredictable one,
		 * none of those in flight (with the random source port, what
		 * keeps forged answers out) */
		dns_query_id(ns, qbuf);
		res->pending++;
		res->inflight++;
		ns->cnt.sent++;
		ares_send(ns->chan->ch, qbuf, qlen, dns_query_cb, q);
		dns_chan_rearm(ns->chan);
	}
	ares_free_string(qbuf);
	res->sending = 0;
	if (!res->pending)
		dns_res_attempt_failed(res);   /* no name server could be asked */
}

void dns_res_trigger(struct dns_res *res)
{
	if (!res->running && res->rs->started)
		dns_res_start(res);
}

/* Whether the last result of <res> may still be given without asking. */
static int dns_res_fresh(const struct dns_res *res, uint64_t now)
{
	const struct dns_resolvers *rs = res->rs;

	if (res->status == DNS_ST_NONE || !res->last_res)
		return 0;
	if (res->status == DNS_ST_VALID)
		return now < res->last_res + rs->hold[DNS_HOLD_VALID];
	return now < res->last_res + rs->t_resolve;
}

int dns_req_attach(struct dns_req *rq, struct dns_resolvers *rs, const char *name, int qtype)
{
	char norm[DNS_NAME_MAX + 1];
	struct dns_req **pp;
	struct dns_res *res;

	dns_req_detach(rq);
	if (dns_name_norm(name, strlen(name), norm) == -1)
		return -1;
	res = dns_res_find(rs, norm, qtype);
	if (!res) {
		res = calloc(1, sizeof(*res));
		if (!res || !(res->name = strdup(norm))) {
			free(res);
			return -1;
		}
		res->rs = rs;
		res->qtype = res->cur_type = qtype;
		res->last_valid = tick_now_ms();
		res->next = rs->res;
		rs->res = res;
	}
	/* appended: requesters are told in the order they came (a template's
	 * servers take the addresses in their order) */
	for (pp = &res->reqs; *pp; pp = &(*pp)->next)
		;
	rq->res = res;
	rq->next = NULL;
	*pp = rq;
	if (dns_res_fresh(res, tick_now_ms()))
		return 1;
	dns_res_trigger(res);
	return 0;
}

void dns_req_detach(struct dns_req *rq)
{
	struct dns_res *res = rq->res;
	struct dns_req **pp;

	if (!res)
		return;
	if (res->notify_next == rq)
		res->notify_next = rq->next;
	for (pp = &res->reqs; *pp && *pp != rq; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = rq->next;
	rq->res = NULL;
	rq->next = NULL;
}

void dns_resolvers_sweep(struct dns_resolvers *rs, int all)
{
	uint64_t now = tick_now_ms();
	struct dns_res *res, *next;

	for (res = rs->res; res; res = next) {
		next = res->next;
		if (!res->reqs && !res->running && !res->inflight &&
		    (all || !dns_res_fresh(res, now)))
			dns_res_free(res);
	}
}

/* Every `timeout resolve`: what is due is asked again (a valid answer
 * after `hold valid`, an error after `timeout resolve`); a resolution
 * nobody asks for any more leaves once its result is stale. */
static void dns_rs_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct dns_resolvers *rs = container_of(w, struct dns_resolvers, timer);
	uint64_t now = tick_now_ms();

	for (struct dns_res *res = rs->res; res; res = res->next)
		if (res->reqs && !res->running && !dns_res_fresh(res, now))
			dns_res_start(res);
	dns_resolvers_sweep(rs, 0);
}

/* ---- c-ares on the loop ---- */

static struct dns_sock *dns_sock_find(struct dns_chan *c, int fd)
{
	for (struct dns_sock *s = c->socks; s; s = s->next)
		if (s->fd == fd)
			return s;
	return NULL;
}

/* After anything c-ares did: its next timeout. */
static void dns_chan_rearm(struct dns_chan *c)
{
	struct timeval tv, *t;

	if (!global.loop)
		return;
	ev_timer_stop(global.loop, &c->tmo);
	t = ares_timeout(c->ch, NULL, &tv);
	if (!t)
		return;
	ev_timer_set(&c->tmo, (double)t->tv_sec + t->tv_usec / 1e6, 0.);
	ev_timer_start(global.loop, &c->tmo);
}

static void dns_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct dns_sock *s = container_of(w, struct dns_sock, io);
	struct dns_chan *c = s->chan;
	int fd = s->fd;

	/* <s> may be closed (and freed) from inside */
	ares_process_fd(c->ch, (revents & EV_READ) ? fd : ARES_SOCKET_BAD,
			(revents & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	dns_chan_rearm(c);
}

static void dns_tmo_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct dns_chan *c = container_of(w, struct dns_chan, tmo);

	ares_process_fd(c->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	dns_chan_rearm(c);
}

/* c-ares says which events a socket waits for (none: it is done with it). */
static void dns_sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct dns_chan *c = data;
	struct dns_sock *s = dns_sock_find(c, fd);

	if (!s)
		return;
	ev_io_stop(global.loop, &s->io);
	if (!readable && !writable)
		return;
	ev_io_set(&s->io, fd, (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));
	ev_io_start(global.loop, &s->io);
}

/* The socket functions given to c-ares: its datagrams pass our check. */
static ares_socket_t dns_asocket(int domain, int type, int protocol, void *data)
{
	struct dns_chan *c = data;
	struct dns_sock *s = calloc(1, sizeof(*s));
	int fd;

	if (!s)
		return ARES_SOCKET_BAD;
	fd = socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
	if (fd == -1) {
		free(s);
		return ARES_SOCKET_BAD;
	}
	s->chan = c;
	s->fd = fd;
	s->dgram = type == SOCK_DGRAM;
	ev_io_init(&s->io, dns_io_cb, fd, EV_READ);
	s->next = c->socks;
	c->socks = s;
	return fd;
}

static int dns_aclose(ares_socket_t fd, void *data)
{
	struct dns_chan *c = data;
	struct dns_sock **pp;

	for (pp = &c->socks; *pp; pp = &(*pp)->next)
		if ((*pp)->fd == fd) {
			struct dns_sock *s = *pp;

			*pp = s->next;
			if (global.loop)
				ev_io_stop(global.loop, &s->io);
			free(s);
			break;
		}
	return close(fd);
}

static int dns_aconnect(ares_socket_t fd, const struct sockaddr *sa, ares_socklen_t len,
                        void *data)
{
	return connect(fd, sa, len);
}

static ares_ssize_t dns_arecvfrom(ares_socket_t fd, void *buf, size_t len, int flags,
                                  struct sockaddr *from, ares_socklen_t *fromlen, void *data)
{
	struct dns_chan *c = data;
	struct dns_sock *s = dns_sock_find(c, fd);

	if (!s || !s->dgram || !from)
		return recvfrom(fd, buf, len, flags, from, fromlen);
	for (;;) {
		ares_socklen_t flen = fromlen ? *fromlen : 0;
		ssize_t n = recvfrom(fd, buf, len, flags | MSG_TRUNC, from, &flen);

		if (n < 0)
			return n;
		if (dns_dgram_check(c->ns, buf, MIN((size_t)n, len), (size_t)n, from) == 0) {
			if (fromlen)
				*fromlen = flen;
			return (ares_ssize_t)MIN((size_t)n, len);
		}
		/* dropped and counted: the next one, if any */
	}
}

static ares_ssize_t dns_asendv(ares_socket_t fd, const struct iovec *iov, int n, void *data)
{
	struct dns_chan *c = data;
	struct dns_sock *s = dns_sock_find(c, fd);

	if (s && s->dgram && n == 1)
		dns_dgram_sent(c->ns, iov[0].iov_base, iov[0].iov_len,
			       tick_now_ms() + c->ns->rs->t_retry + 1000);
	return writev(fd, iov, n);
}

static const struct ares_socket_functions dns_sock_funcs = {
	dns_asocket, dns_aclose, dns_aconnect, dns_arecvfrom, dns_asendv,
};

/* A channel asking only <ns>, once, waiting `timeout retry`. */
static int dns_chan_open(struct dns_ns *ns)
{
	const struct dns_resolvers *rs = ns->rs;
	struct dns_chan *c = xcalloc(1, sizeof(*c));
	struct ares_addr_port_node srv = { 0 };
	struct ares_options o;
	int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB |
		   ARES_OPT_LOOKUPS, st;
	uint16_t port = addr_get_port(&ns->addr);

	memset(&o, 0, sizeof(o));
	o.flags = ARES_FLAG_NOCHECKRESP | ARES_FLAG_IGNTC | ARES_FLAG_NOSEARCH |
		  ARES_FLAG_NOALIASES | (ns->tcp ? ARES_FLAG_USEVC | ARES_FLAG_STAYOPEN : 0);
	o.timeout = (int)rs->t_retry;
	o.tries = 1;
	o.sock_state_cb = dns_sock_state_cb;
	o.sock_state_cb_data = c;
	o.lookups = (char *)"b";
	if (rs->payload > 512) {
		o.flags |= ARES_FLAG_EDNS;
		o.ednspsz = (int)rs->payload;
		mask |= ARES_OPT_EDNSPSZ;
	}
	c->ns = ns;
	st = ares_init_options(&c->ch, &o, mask);
	if (st != ARES_SUCCESS)
		goto fail;
	srv.family = ns->addr.ss_family;
	if (srv.family == AF_INET)
		memcpy(&srv.addr.addr4, &((struct sockaddr_in *)&ns->addr)->sin_addr, 4);
	else
		memcpy(&srv.addr.addr6, &((struct sockaddr_in6 *)&ns->addr)->sin6_addr, 16);
	srv.udp_port = srv.tcp_port = port;
	st = ares_set_servers_ports(c->ch, &srv);
	if (st != ARES_SUCCESS) {
		ares_destroy(c->ch);
		goto fail;
	}
	ares_set_socket_functions(c->ch, &dns_sock_funcs, c);
	ev_init(&c->tmo, dns_tmo_cb);
	ns->chan = c;
	return 0;
fail:
	log_alert("resolvers '%s': name server '%s': c-ares: %s", rs->id, ns->id,
		  ares_strerror(st));
	free(c);
	return -1;
}

int dns_start_all(void)
{
	if (!dns_sections)
		return 0;
	if (!dns_lib_ready) {
		int st = ares_library_init(ARES_LIB_INIT_ALL);

		if (st != ARES_SUCCESS) {
			log_alert("c-ares: %s", ares_strerror(st));
			return -1;
		}
		dns_lib_ready = 1;
	}
	for (struct dns_resolvers *rs = dns_sections; rs; rs = rs->next)
		for (struct dns_ns *ns = rs->ns; ns; ns = ns->next)
			if (!ns->chan && dns_chan_open(ns) == -1)
				return -1;
	for (struct dns_resolvers *rs = dns_sections; rs; rs = rs->next) {
		double every = tick_to_ev(rs->t_resolve);

		rs->started = 1;
		ev_timer_init(&rs->timer, dns_rs_timer_cb, every, every);
		ev_timer_start(global.loop, &rs->timer);
		for (struct dns_res *res = rs->res; res; res = res->next) {
			/* asked before the loop ran: the hold periods start now,
			 * on the loop's clock */
			res->last_valid = tick_now_ms();
			if (res->reqs && !res->running)
				dns_res_start(res);
		}
	}
	return 0;
}

void dns_stop_all(void)
{
	for (struct dns_resolvers *rs = dns_sections; rs; rs = rs->next) {
		if (rs->started && global.loop)
			ev_timer_stop(global.loop, &rs->timer);
		rs->started = 0;
		/* queries left: their callbacks run now, telling no one */
		for (struct dns_res *res = rs->res; res; res = res->next)
			res->running = 0;
		for (struct dns_ns *ns = rs->ns; ns; ns = ns->next) {
			struct dns_chan *c = ns->chan;

			if (!c)
				continue;
			ares_destroy(c->ch);
			if (global.loop)
				ev_timer_stop(global.loop, &c->tmo);
			while (c->socks) {
				struct dns_sock *s = c->socks;

				c->socks = s->next;
				if (global.loop)
					ev_io_stop(global.loop, &s->io);
				close(s->fd);
				free(s);
			}
			free(c);
			ns->chan = NULL;
		}
	}
	if (dns_lib_ready) {
		ares_library_cleanup();
		dns_lib_ready = 0;
	}
}

void dns_free_all(void)
{
	dns_stop_all();
	while (dns_sections) {
		struct dns_resolvers *rs = dns_sections;

		dns_sections = rs->next;
		while (rs->res) {
			for (struct dns_req *rq = rs->res->reqs; rq; rq = rq->next)
				rq->res = NULL;
			dns_res_free(rs->res);
		}
		while (rs->ns) {
			struct dns_ns *ns = rs->ns;

			rs->ns = ns->next;
			free(ns->pend);
			free(ns->id);
			free(ns->conf_file);
			free(ns);
		}
		free(rs->id);
		free(rs->conf_file);
		free(rs);
	}
}
