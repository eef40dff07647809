/* Differential tests of the pattern indexes (src/rules/pattern.c) against a
 * naive scan, on random data with fixed seeds: exact strings in the hash
 * (with and without -i), longest prefixes (map_beg), IPv4 and IPv6
 * longest-prefix networks; then again after deleting a third of them. */
#include <arpa/inet.h>
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include <sluice/pattern.h>
#include <sluice/sample.h>

#define NPAT   3000
#define NQUERY 20000

struct pat {
	char     val[48];
	int      live;
	/* IP patterns: the network, its length, the family */
	uint8_t  net[16];
	int      plen, v6;
};

static struct pat pats[NPAT];

static uint32_t rng_state;

/* Queries that the naive scan matched, per round: a differential test
 * whose queries never (or always) match would prove little. */
static int hits;

static void check_hits(const char *what)
{
	if (hits < NQUERY / 20 || hits > NQUERY - NQUERY / 20)
		fail_msg("%s: %d of %d queries matched: the random data is not exercising "
			 "the index", what, hits, NQUERY);
	hits = 0;
}

static uint32_t rnd(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

/* A short random string over a small alphabet (so that queries often hit
 * and prefixes overlap), upper case sometimes. */
static void rnd_str(char *out, size_t max, int upper)
{
	size_t n = 1 + rnd() % (max - 1);

	for (size_t i = 0; i < n; i++) {
		char c = "abcd/."[rnd() % 6];

		out[i] = upper && rnd() % 2 ? (char)toupper((unsigned char)c) : c;
	}
	out[n] = '\0';
}

static const void *data_of(int i)
{
	return (const void *)(uintptr_t)(i + 1);
}

static struct sample S(const char *s)
{
	return (struct sample){ .type = SMP_T_STR, .flags = SMP_F_CONST, .u.str = { s, strlen(s) } };
}

/* Adds the live patterns [0, n) to <ps>, each with its data. */
static void fill(struct pat_set *ps, int n)
{
	char *err = NULL;

	for (int i = 0; i < n; i++)
		if (pat_set_add_data(ps, pats[i].val, PAT_OP_NONE, data_of(i), &err) == -1)
			fail_msg("pattern '%s': %s", pats[i].val, err);
}

/* Deletes about a third of the patterns from <ps>. */
static void del_some(struct pat_set *ps, int n)
{
	for (int i = 0; i < n; i++)
		if (rnd() % 3 == 0) {
			pat_set_del(ps, pats[i].val, data_of(i));
			pats[i].live = 0;
		}
}

/* ---- exact strings ---- */

static int naive_str(const char *q, int n, int icase)
{
	for (int i = 0; i < n; i++)
		if (pats[i].live && (icase ? strcasecmp(pats[i].val, q) : strcmp(pats[i].val, q)) == 0)
			return i;
	return -1;
}

static void check_str(unsigned flags, int n)
{
	struct pat_set ps;

	pat_set_init(&ps, PAT_M_STR, flags);
	fill(&ps, n);
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < NQUERY; k++) {
			char q[16];
			const void *d = NULL;
			struct sample smp;
			int want, got;

			rnd_str(q, 8, flags & PAT_F_ICASE);
			smp = S(q);
			want = naive_str(q, n, flags & PAT_F_ICASE);
			hits += want >= 0;
			got = pat_set_lookup(&ps, &smp, &d);
			if (got != (want >= 0) || (got && d != data_of(want)))
				fail_msg("str '%s' (round %d): index %d/%p, naive %d", q, round, got, d,
					 want);
		}
		check_hits("str");
		del_some(&ps, n);
	}
	pat_set_free(&ps);
}

static int make_unique_strings(int upper)
{
	int n = 0;

	for (int tries = 0; n < NPAT && tries < NPAT * 20; tries++) {
		char v[16];
		int dup = 0;

		rnd_str(v, 8, upper);
		for (int i = 0; i < n && !dup; i++)
			dup = strcasecmp(pats[i].val, v) == 0;
		if (dup)
			continue;
		snprintf(pats[n].val, sizeof(pats[n].val), "%s", v);
		pats[n++].live = 1;
	}
	return n;
}

static void test_str_hash(void **state)
{
	int n;

	rng_state = 42;
	n = make_unique_strings(0);
	check_str(0, n);
	rng_state = 7;
	n = make_unique_strings(1);
	check_str(PAT_F_ICASE, n);
}

/* ---- longest prefix ---- */

static int naive_beg(const char *q, int n)
{
	int best = -1;
	size_t bl = 0;

	for (int i = 0; i < n; i++) {
		size_t l = strlen(pats[i].val);

		if (pats[i].live && strncmp(q, pats[i].val, l) == 0 && (best < 0 || l > bl)) {
			best = i;
			bl = l;
		}
	}
	return best;
}

static void test_beg_longest(void **state)
{
	struct pat_set ps;
	int n;

	rng_state = 1234;
	n = make_unique_strings(0);
	pat_set_init(&ps, PAT_M_BEG, 0);
	fill(&ps, n);
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < NQUERY; k++) {
			char q[24];
			const void *d = NULL;
			struct sample smp;
			int want, got;

			rnd_str(q, 14, 0);
			if (k % 2)
				q[0] = 'z';   /* a prefix no pattern has: a sure miss */
			smp = S(q);
			want = naive_beg(q, n);
			hits += want >= 0;
			got = pat_set_lookup(&ps, &smp, &d);
			if (got != (want >= 0) || (got && d != data_of(want)))
				fail_msg("beg '%s' (round %d): index %d/%p, naive %d ('%s')", q, round,
					 got, d, want, want >= 0 ? pats[want].val : "");
		}
		check_hits("beg");
		del_some(&ps, n);
	}
	pat_set_free(&ps);
}

/* ---- networks ---- */

static int in_net(const uint8_t *a, const struct pat *p)
{
	int full = p->plen / 8, rest = p->plen % 8;

	if (memcmp(a, p->net, (size_t)full) != 0)
		return 0;
	return !rest || ((a[full] ^ p->net[full]) & (0xff << (8 - rest))) == 0;
}

static int naive_ip(const uint8_t *a, int v6, int n)
{
	int best = -1;

	for (int i = 0; i < n; i++)
		if (pats[i].live && pats[i].v6 == v6 && in_net(a, &pats[i]) &&
		    (best < 0 || pats[i].plen > pats[best].plen))
			best = i;
	return best;
}

/* Random networks (/8 or longer) clustered under a few /8 (/16 for IPv6)
 * so that they nest; host bits cleared so that no two patterns are the same network. */
static int make_nets(int v6)
{
	int n = 0, alen = v6 ? 16 : 4;

	for (int tries = 0; n < NPAT && tries < NPAT * 20; tries++) {
		struct pat *p = &pats[n];
		char txt[INET6_ADDRSTRLEN];
		int dup = 0;

		memset(p, 0, sizeof(*p));
		for (int b = 0; b < alen; b++)
			p->net[b] = (uint8_t)rnd();
		p->net[0] = (uint8_t)(10 + rnd() % 3);
		if (v6)
			p->net[1] = (uint8_t)(rnd() % 2);
		p->plen = 8 + (int)(rnd() % (alen * 8 - 7));
		for (int bit = p->plen; bit < alen * 8; bit++)
			p->net[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
		p->v6 = v6;
		for (int i = 0; i < n && !dup; i++)
			dup = pats[i].plen == p->plen && memcmp(pats[i].net, p->net, 16) == 0;
		if (dup)
			continue;
		inet_ntop(v6 ? AF_INET6 : AF_INET, p->net, txt, sizeof(txt));
		snprintf(p->val, sizeof(p->val), "%s/%d", txt, p->plen);
		p->live = 1;
		n++;
	}
	return n;
}

static void check_ip(int v6)
{
	struct pat_set ps;
	int n = make_nets(v6), alen = v6 ? 16 : 4;

	pat_set_init(&ps, PAT_M_IP, 0);
	fill(&ps, n);
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < NQUERY; k++) {
			uint8_t a[16] = { 0 };
			struct sample smp = { 0 };
			const void *d = NULL;
			int want, got;

			for (int b = 0; b < alen; b++)
				a[b] = (uint8_t)rnd();
			if (k % 4 == 0) {   /* near the networks: nested ones, misses too */
				a[0] = (uint8_t)(10 + rnd() % 3);
				if (v6)
					a[1] = (uint8_t)(rnd() % 2);
			}
			if (k % 2 && n) {   /* half of the queries inside a known network */
				const struct pat *p = &pats[rnd() % (uint32_t)n];

				for (int bit = 0; bit < p->plen; bit++)
					a[bit / 8] = (uint8_t)((a[bit / 8] & ~(0x80 >> (bit % 8))) |
							       (p->net[bit / 8] & (0x80 >> (bit % 8))));
			}
			smp.type = v6 ? SMP_T_IPV6 : SMP_T_IPV4;
			if (v6)
				memcpy(&smp.u.ipv6, a, 16);
			else
				memcpy(&smp.u.ipv4, a, 4);
			want = naive_ip(a, v6, n);
			hits += want >= 0;
			got = pat_set_lookup(&ps, &smp, &d);
			if (got != (want >= 0) || (got && d != data_of(want)))
				fail_msg("ip query (v6 %d, round %d): index %d/%p, naive %d ('%s')", v6,
					 round, got, d, want, want >= 0 ? pats[want].val : "");
		}
		check_hits("ip");
		del_some(&ps, n);
	}
	pat_set_free(&ps);
}

static void test_ipv4_longest(void **state)
{
	rng_state = 99;
	check_ip(0);
}

static void test_ipv6_longest(void **state)
{
	rng_state = 2024;
	check_ip(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_str_hash),
		cmocka_unit_test(test_beg_longest),
		cmocka_unit_test(test_ipv4_longest),
		cmocka_unit_test(test_ipv6_longest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
