/* Pattern sets (pattern.h): parsing of pattern values per matching method,
 * the indexes (hash table of exact strings, binary trie of networks, PCRE2
 * JIT regexes, integer ranges) and the match itself, which never allocates. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef USE_PCRE2
#include <pcre2.h>
#endif

#include <sluice/common.h>
#include <sluice/pattern.h>
#include <sluice/sample.h>
#include <sluice/str.h>

static const char *const pat_match_names[PAT_M_COUNT] = {
	[PAT_M_FOUND] = "found", [PAT_M_BOOL] = "bool", [PAT_M_INT] = "int",
	[PAT_M_IP] = "ip", [PAT_M_LEN] = "len", [PAT_M_STR] = "str", [PAT_M_BEG] = "beg",
	[PAT_M_END] = "end", [PAT_M_SUB] = "sub", [PAT_M_REG] = "reg", [PAT_M_DIR] = "dir",
	[PAT_M_DOM] = "dom",
};

int pat_match_find(const char *name, enum pat_match *m)
{
	for (int i = 0; i < PAT_M_COUNT; i++)
		if (strcmp(pat_match_names[i], name) == 0) {
			*m = (enum pat_match)i;
			return 0;
		}
	return -1;
}

const char *pat_match_name(enum pat_match m)
{
	return m < PAT_M_COUNT ? pat_match_names[m] : "?";
}

static const char *const pat_op_names[] = { "", "eq", "ge", "gt", "le", "lt" };

int pat_op_find(const char *word, enum pat_op *op)
{
	for (size_t i = 1; i < ARRAY_SIZE(pat_op_names); i++)
		if (strcmp(pat_op_names[i], word) == 0) {
			*op = (enum pat_op)i;
			return 1;
		}
	return 0;
}

void pat_set_init(struct pat_set *ps, enum pat_match m, unsigned flags)
{
	memset(ps, 0, sizeof(*ps));
	ps->match = m;
	ps->flags = flags;
}

/* ------------------------------------------------------------------------
 * Exact strings: a chained hash table of case-folded (with -i) strings
 */

struct pat_hnode {
	struct pat_hnode *next;
	uint32_t          hash;
	size_t            len;
	char              s[];
};

static uint32_t pat_hash(const char *s, size_t len, int icase)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		h = (h ^ (icase ? (unsigned char)tolower(c) : c)) * 16777619u;
	}
	return h;
}

static void pat_hash_grow(struct pat_set *ps)
{
	unsigned nsize = ps->hsize ? ps->hsize * 2 : 64;
	struct pat_hnode **nt = xcalloc(nsize, sizeof(*nt));

	for (unsigned i = 0; i < ps->hsize; i++)
		for (struct pat_hnode *n = ps->htab[i], *next; n; n = next) {
			next = n->next;
			n->next = nt[n->hash & (nsize - 1)];
			nt[n->hash & (nsize - 1)] = n;
		}
	free(ps->htab);
	ps->htab = nt;
	ps->hsize = nsize;
}

static int pat_str_eq(const char *a, const char *b, size_t len, int icase)
{
	return icase ? strncasecmp(a, b, len) == 0 : memcmp(a, b, len) == 0;
}

static void pat_hash_add(struct pat_set *ps, const char *s, size_t len)
{
	int icase = ps->flags & PAT_F_ICASE;
	uint32_t h = pat_hash(s, len, icase);
	struct pat_hnode *n;

	if (ps->hcount >= ps->hsize)
		pat_hash_grow(ps);
	for (n = ps->htab[h & (ps->hsize - 1)]; n; n = n->next)
		if (n->hash == h && n->len == len && pat_str_eq(n->s, s, len, icase))
			return;   /* duplicate */
	n = xcalloc(1, sizeof(*n) + len + 1);
	n->hash = h;
	n->len = len;
	memcpy(n->s, s, len);
	n->next = ps->htab[h & (ps->hsize - 1)];
	ps->htab[h & (ps->hsize - 1)] = n;
	ps->hcount++;
}

static int pat_hash_has(const struct pat_set *ps, const char *s, size_t len)
{
	int icase = ps->flags & PAT_F_ICASE;
	uint32_t h;

	if (!ps->hsize)
		return 0;
	h = pat_hash(s, len, icase);
	for (const struct pat_hnode *n = ps->htab[h & (ps->hsize - 1)]; n; n = n->next)
		if (n->hash == h && n->len == len && pat_str_eq(n->s, s, len, icase))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------
 * Networks: a binary trie on the address bits; a node marked <net> ends a
 * network, so a lookup matches as soon as its path crosses one.
 */

struct pat_trie {
	struct pat_trie *child[2];
	int              net;
};

static void pat_trie_add(struct pat_trie **root, const uint8_t *addr, int bits)
{
	struct pat_trie **t = root;

	for (int i = 0; ; i++) {
		if (!*t)
			*t = xcalloc(1, sizeof(**t));
		if (i == bits || (*t)->net) {
			(*t)->net = 1;   /* a shorter network already covers it */
			return;
		}
		t = &(*t)->child[(addr[i / 8] >> (7 - i % 8)) & 1];
	}
}

static int pat_trie_has(const struct pat_trie *t, const uint8_t *addr, int maxbits)
{
	for (int i = 0; t; i++) {
		if (t->net)
			return 1;
		if (i == maxbits)
			return 0;
		t = t->child[(addr[i / 8] >> (7 - i % 8)) & 1];
	}
	return 0;
}

static void pat_trie_free(struct pat_trie *t)
{
	if (!t)
		return;
	pat_trie_free(t->child[0]);
	pat_trie_free(t->child[1]);
	free(t);
}

/* "addr", "addr/bits" or "v4addr/dotted.mask". */
static int pat_parse_ip(struct pat_set *ps, const char *val, char **err)
{
	char tmp[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(val, '/');
	size_t alen = slash ? (size_t)(slash - val) : strlen(val);
	uint8_t a[16];
	int bits, v6;

	if (alen >= INET6_ADDRSTRLEN)
		goto bad;
	memcpy(tmp, val, alen);
	tmp[alen] = '\0';
	if (inet_pton(AF_INET, tmp, a) == 1)
		v6 = 0;
	else if (inet_pton(AF_INET6, tmp, a) == 1)
		v6 = 1;
	else
		goto bad;
	bits = v6 ? 128 : 32;
	if (slash) {
		char *e;
		long n;
		struct in_addr m;

		errno = 0;
		n = strtol(slash + 1, &e, 10);
		if (slash[1] && !*e && n >= 0 && n <= bits) {
			bits = (int)n;
		} else if (!v6 && inet_pton(AF_INET, slash + 1, &m) == 1) {
			uint32_t mv = ntohl(m.s_addr);

			bits = __builtin_popcount(mv);
			if (mv && (uint32_t)(mv << bits) != 0)
				goto bad;
		} else
			goto bad;
	}
	pat_trie_add(v6 ? &ps->v6 : &ps->v4, a, bits);
	return 0;
bad:
	*err = str_fmt("'%s' is not a valid IPv4 or IPv6 address or network "
		       "(host names are not resolved)", val);
	return -1;
}

/* ------------------------------------------------------------------------
 * Integers: "N", "min:max", ":max", "min:", or an operator and "N"
 */

static int pat_parse_int64(const char *s, size_t len, int64_t *v)
{
	char buf[32], *e;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtoll(buf, &e, 10);
	return *e || errno ? -1 : 0;
}

static int pat_parse_range(const char *val, enum pat_op op, struct pat_range *r, char **err)
{
	const char *colon = strchr(val, ':');
	int64_t v;

	r->min = INT64_MIN;
	r->max = INT64_MAX;
	if (colon && op == PAT_OP_NONE) {
		if (colon > val && pat_parse_int64(val, (size_t)(colon - val), &r->min) == -1)
			goto bad;
		if (colon[1] && pat_parse_int64(colon + 1, strlen(colon + 1), &r->max) == -1)
			goto bad;
		if (colon == val && !colon[1])
			goto bad;
		return 0;
	}
	if (pat_parse_int64(val, strlen(val), &v) == -1)
		goto bad;
	switch (op) {
	case PAT_OP_NONE: case PAT_OP_EQ: r->min = r->max = v; break;
	case PAT_OP_GE: r->min = v; break;
	case PAT_OP_GT:
		if (v == INT64_MAX)
			goto bad;
		r->min = v + 1;
		break;
	case PAT_OP_LE: r->max = v; break;
	case PAT_OP_LT:
		if (v == INT64_MIN)
			goto bad;
		r->max = v - 1;
		break;
	}
	return 0;
bad:
	*err = str_fmt("'%s' is not a valid integer or range (expects 'N', 'min:max', "
		       "'min:', ':max', or an operator eq/ge/gt/le/lt and N)", val);
	return -1;
}

/* ------------------------------------------------------------------------
 * Adding patterns
 */

static int pat_add_regex(struct pat_set *ps, const char *val, char **err)
{
#ifdef USE_PCRE2
	int ec;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)val, PCRE2_ZERO_TERMINATED,
				       (ps->flags & PAT_F_ICASE) ? PCRE2_CASELESS : 0, &ec, &off,
				       NULL);

	if (!re) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(ec, msg, sizeof(msg));
		*err = str_fmt("invalid regex '%s' at offset %zu: %s", val, (size_t)off,
			       (const char *)msg);
		return -1;
	}
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);   /* the interpreter remains */
	ps->regs = xrealloc(ps->regs, (size_t)(ps->nregs + 1) * sizeof(*ps->regs));
	ps->regs[ps->nregs++] = re;
	return 0;
#else
	*err = str_fmt("regex matching (-m reg) needs a build with USE_PCRE2=1");
	return -1;
#endif
}

int pat_set_add(struct pat_set *ps, const char *val, enum pat_op op, char **err)
{
	size_t len = strlen(val);

	if (op != PAT_OP_NONE && ps->match != PAT_M_INT && ps->match != PAT_M_LEN) {
		*err = str_fmt("operator '%s' only applies to integer matches (-m int, -m len)",
			       pat_op_names[op]);
		return -1;
	}
	switch (ps->match) {
	case PAT_M_FOUND:
	case PAT_M_BOOL:
		*err = str_fmt("'-m %s' takes no pattern (got '%s')", pat_match_name(ps->match),
			       val);
		return -1;
	case PAT_M_INT:
	case PAT_M_LEN: {
		struct pat_range r;

		if (pat_parse_range(val, op, &r, err) == -1)
			return -1;
		ps->ranges = xrealloc(ps->ranges, (size_t)(ps->nranges + 1) * sizeof(r));
		ps->ranges[ps->nranges++] = r;
		break;
	}
	case PAT_M_IP:
		if (pat_parse_ip(ps, val, err) == -1)
			return -1;
		break;
	case PAT_M_STR:
		pat_hash_add(ps, val, len);
		break;
	case PAT_M_REG:
		if (pat_add_regex(ps, val, err) == -1)
			return -1;
		break;
	case PAT_M_DIR:
	case PAT_M_DOM: {
		/* Delimiters around the pattern do not count. */
		char d = ps->match == PAT_M_DIR ? '/' : '.';

		while (len && *val == d)
			val++, len--;
		while (len && val[len - 1] == d)
			len--;
	}
		/* fall through */
	case PAT_M_BEG:
	case PAT_M_END:
	case PAT_M_SUB:
		ps->strs = xrealloc(ps->strs, (size_t)(ps->nstrs + 1) * sizeof(*ps->strs));
		ps->strs[ps->nstrs].s = xcalloc(1, len + 1);
		memcpy(ps->strs[ps->nstrs].s, val, len);
		ps->strs[ps->nstrs].len = len;
		ps->nstrs++;
		break;
	default:
		*err = str_fmt("unsupported match method");
		return -1;
	}
	ps->count++;
	return 0;
}

int pat_set_load_file(struct pat_set *ps, const char *path, int map, char **err)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0;

	if (!f) {
		*err = str_fmt("failed to open pattern file '%s': %s", path, strerror(errno));
		return -1;
	}
	while ((n = getline(&line, &cap, f)) != -1) {
		char *p = line;
		char *perr = NULL;

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		if (map)
			p[strcspn(p, " \t")] = '\0';
		if (pat_set_add(ps, p, PAT_OP_NONE, &perr) == -1) {
			*err = str_fmt("pattern file '%s' line %d: %s", path, lineno, perr);
			free(perr);
			free(line);
			fclose(f);
			return -1;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

void pat_set_free(struct pat_set *ps)
{
	for (unsigned i = 0; i < ps->hsize; i++)
		for (struct pat_hnode *n = ps->htab[i], *next; n; n = next) {
			next = n->next;
			free(n);
		}
	free(ps->htab);
	for (int i = 0; i < ps->nstrs; i++)
		free(ps->strs[i].s);
	free(ps->strs);
	free(ps->ranges);
	pat_trie_free(ps->v4);
	pat_trie_free(ps->v6);
#ifdef USE_PCRE2
	for (int i = 0; i < ps->nregs; i++)
		pcre2_code_free(ps->regs[i]);
#endif
	free(ps->regs);
	memset(ps, 0, sizeof(*ps));
}

/* ------------------------------------------------------------------------
 * Matching
 */

static const char *pat_memmem(const char *h, size_t hl, const char *n, size_t nl, int icase)
{
	if (!nl)
		return h;
	if (!icase)
		return memmem(h, hl, n, nl);
	for (size_t i = 0; i + nl <= hl; i++)
		if (strncasecmp(h + i, n, nl) == 0)
			return h + i;
	return NULL;
}

/* <n> appears in <h> with a delimiter (or the edge) on both sides. */
static int pat_word(const char *h, size_t hl, const char *n, size_t nl, int icase,
                    const char *delims)
{
	for (size_t off = 0; off + nl <= hl; ) {
		const char *p = pat_memmem(h + off, hl - off, n, nl, icase);
		size_t at;

		if (!p)
			return 0;
		at = (size_t)(p - h);
		if ((at == 0 || strchr(delims, h[at - 1])) &&
		    (at + nl == hl || strchr(delims, h[at + nl])))
			return 1;
		off = at + 1;
	}
	return 0;
}

#ifdef USE_PCRE2
static pcre2_match_data *pat_md;
#endif

static int pat_match_str_list(const struct pat_set *ps, const char *s, size_t l)
{
	int icase = ps->flags & PAT_F_ICASE;

	for (int i = 0; i < ps->nstrs; i++) {
		const struct pat_str *p = &ps->strs[i];

		switch (ps->match) {
		case PAT_M_BEG:
			if (p->len <= l && pat_str_eq(s, p->s, p->len, icase))
				return 1;
			break;
		case PAT_M_END:
			if (p->len <= l && pat_str_eq(s + l - p->len, p->s, p->len, icase))
				return 1;
			break;
		case PAT_M_SUB:
			if (pat_memmem(s, l, p->s, p->len, icase))
				return 1;
			break;
		case PAT_M_DIR:
			if (pat_word(s, l, p->s, p->len, icase, "/?"))
				return 1;
			break;
		case PAT_M_DOM:
			if (pat_word(s, l, p->s, p->len, icase, "/?.:"))
				return 1;
			break;
		default:
			break;
		}
	}
	return 0;
}

static int pat_match_ip(const struct pat_set *ps, struct sample *smp)
{
	if (!smp_cast(smp, SMP_T_ADDR))
		return 0;
	if (smp->type == SMP_T_IPV4) {
		uint8_t m[16] = { [10] = 0xff, [11] = 0xff };

		if (pat_trie_has(ps->v4, (const uint8_t *)&smp->u.ipv4, 32))
			return 1;
		memcpy(m + 12, &smp->u.ipv4, 4);
		return pat_trie_has(ps->v6, m, 128);
	}
	if (pat_trie_has(ps->v6, smp->u.ipv6.s6_addr, 128))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&smp->u.ipv6) &&
	       pat_trie_has(ps->v4, &smp->u.ipv6.s6_addr[12], 32);
}

int pat_set_exec(const struct pat_set *ps, struct sample *smp)
{
	int64_t v;

	switch (ps->match) {
	case PAT_M_FOUND:
		return 1;
	case PAT_M_BOOL:
		return smp_cast(smp, SMP_T_BOOL) && smp->u.sint;
	case PAT_M_INT:
	case PAT_M_LEN:
		if (ps->match == PAT_M_LEN) {
			if (!smp_cast(smp, SMP_T_STR))
				return 0;
			v = (int64_t)smp->u.str.len;
		} else {
			if (!smp_cast(smp, SMP_T_SINT))
				return 0;
			v = smp->u.sint;
		}
		for (int i = 0; i < ps->nranges; i++)
			if (v >= ps->ranges[i].min && v <= ps->ranges[i].max)
				return 1;
		return 0;
	case PAT_M_IP:
		return pat_match_ip(ps, smp);
	case PAT_M_STR:
		return smp_cast(smp, SMP_T_STR) && pat_hash_has(ps, smp->u.str.p, smp->u.str.len);
	case PAT_M_REG:
#ifdef USE_PCRE2
		if (!smp_cast(smp, SMP_T_STR))
			return 0;
		for (int i = 0; i < ps->nregs; i++)
			if (pcre2_match(ps->regs[i], (PCRE2_SPTR)smp->u.str.p, smp->u.str.len, 0, 0,
					pat_md, NULL) >= 0)
				return 1;
#endif
		return 0;
	default:
		if (!smp_cast(smp, SMP_T_STR))
			return 0;
		return pat_match_str_list(ps, smp->u.str.p, smp->u.str.len);
	}
}

#ifdef USE_PCRE2
/* One match-data block for every regex: matches run one at a time and
 * only need to know whether there was a match. */
SLUICE_INIT(pat_init_pcre2)
{
	pat_md = pcre2_match_data_create(1, NULL);
	BUG_ON(!pat_md, "pcre2_match_data_create");
}
#endif
