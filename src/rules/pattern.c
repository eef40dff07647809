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
	[PAT_M_DOM] = "dom", [PAT_M_BIN] = "bin",
};

#define PAT_BIN_MAX 1024   /* bytes of one "-m bin" pattern */

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes the hex pattern <val> ("160301") into <out> (<size> bytes).
 * Returns the length, or -1 with an allocated <err>. */
static long pat_parse_bin(const char *val, uint8_t *out, size_t size, char **err)
{
	size_t len = strlen(val);

	if (len % 2 || len / 2 > size) {
		*err = str_fmt("'%s' is not a hex string of at most %zu bytes (expects an even "
			       "number of hex digits)", val, size);
		return -1;
	}
	for (size_t i = 0; i < len; i += 2) {
		int h = hex_digit(val[i]), l = hex_digit(val[i + 1]);

		if (h < 0 || l < 0) {
			*err = str_fmt("'%s' is not a hex string (invalid digit '%c')", val,
				       h < 0 ? val[i] : val[i + 1]);
			return -1;
		}
		out[i / 2] = (uint8_t)(h << 4 | l);
	}
	return (long)(len / 2);
}

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
 * Exact strings and prefixes: a chained hash table of strings (hashed
 * case-folded with -i). Prefixes are looked up by hashing every prefix of
 * the sample in one pass (FNV-1a is incremental) and probing only the
 * lengths some pattern has, longest first.
 */

struct pat_hnode {
	struct pat_hnode *next;
	const void       *data;
	uint32_t          hash;
	size_t            len;
	char              s[];
};

#define PAT_FNV_INIT 2166136261u

static inline uint32_t pat_hash_step(uint32_t h, unsigned char c, int icase)
{
	return (h ^ (icase ? (unsigned char)tolower(c) : c)) * 16777619u;
}

static uint32_t pat_hash(const char *s, size_t len, int icase)
{
	uint32_t h = PAT_FNV_INIT;

	for (size_t i = 0; i < len; i++)
		h = pat_hash_step(h, (unsigned char)s[i], icase);
	return h;
}

static void pat_hash_grow(struct pat_set *ps)
{
	unsigned nsize = ps->hsize ? ps->hsize * 2 : 64;
	struct pat_hnode **nt = xcalloc(nsize, sizeof(*nt));

	/* Chains keep their order (older first) so that the first of two
	 * duplicate keys keeps winning. */
	for (unsigned i = 0; i < ps->hsize; i++)
		for (struct pat_hnode *n = ps->htab[i], *next; n; n = next) {
			struct pat_hnode **tp = &nt[n->hash & (nsize - 1)];

			next = n->next;
			while (*tp)
				tp = &(*tp)->next;
			n->next = NULL;
			*tp = n;
		}
	free(ps->htab);
	ps->htab = nt;
	ps->hsize = nsize;
}

static int pat_str_eq(const char *a, const char *b, size_t len, int icase)
{
	return icase ? strncasecmp(a, b, len) == 0 : memcmp(a, b, len) == 0;
}

static void pat_hash_add(struct pat_set *ps, const char *s, size_t len, const void *data)
{
	int icase = ps->flags & PAT_F_ICASE;
	uint32_t h = pat_hash(s, len, icase);
	struct pat_hnode *n, **tp;

	if (ps->hcount >= ps->hsize)
		pat_hash_grow(ps);
	for (tp = &ps->htab[h & (ps->hsize - 1)]; *tp; tp = &(*tp)->next)
		if (!data && (*tp)->hash == h && (*tp)->len == len &&
		    pat_str_eq((*tp)->s, s, len, icase))
			return;   /* an anonymous duplicate adds nothing */
	n = xcalloc(1, sizeof(*n) + len + 1);
	n->next = NULL;
	n->data = data;
	n->hash = h;
	n->len = len;
	memcpy(n->s, s, len);
	n->s[len] = '\0';
	*tp = n;
	ps->hcount++;
	if (ps->match == PAT_M_BEG) {
		if (len >= ps->nlens) {
			size_t nn = MAX(len + 1, ps->nlens * 2);

			ps->lens = xrealloc(ps->lens, nn * sizeof(*ps->lens));
			memset(ps->lens + ps->nlens, 0, (nn - ps->nlens) * sizeof(*ps->lens));
			ps->nlens = nn;
		}
		ps->lens[len]++;
	}
}

static const struct pat_hnode *pat_hash_get(const struct pat_set *ps, uint32_t h,
                                            const char *s, size_t len)
{
	int icase = ps->flags & PAT_F_ICASE;

	for (const struct pat_hnode *n = ps->htab[h & (ps->hsize - 1)]; n; n = n->next)
		if (n->hash == h && n->len == len && pat_str_eq(n->s, s, len, icase))
			return n;
	return NULL;
}

static void pat_hash_del(struct pat_set *ps, const char *s, size_t len, const void *data)
{
	int icase = ps->flags & PAT_F_ICASE;
	uint32_t h;

	if (!ps->hsize)
		return;
	h = pat_hash(s, len, icase);
	for (struct pat_hnode **np = &ps->htab[h & (ps->hsize - 1)]; *np; ) {
		struct pat_hnode *n = *np;

		if (n->data == data && n->hash == h && n->len == len &&
		    pat_str_eq(n->s, s, len, icase)) {
			*np = n->next;
			if (ps->match == PAT_M_BEG && len < ps->nlens)
				ps->lens[len]--;
			free(n);
			ps->hcount--;
			ps->count--;
		} else
			np = &n->next;
	}
}

/* Exact match, or with <beg> the longest pattern that begins <s>. */
static const struct pat_hnode *pat_hash_find(const struct pat_set *ps, const char *s,
                                             size_t len, int beg)
{
	int icase = ps->flags & PAT_F_ICASE;
	uint32_t hs[256];
	size_t max;

	if (!ps->hcount)
		return NULL;
	if (!beg)
		return pat_hash_get(ps, pat_hash(s, len, icase), s, len);
	max = MIN(len, ps->nlens ? ps->nlens - 1 : 0);
	if (max < ARRAY_SIZE(hs)) {
		uint32_t h = PAT_FNV_INIT;

		hs[0] = h;
		for (size_t i = 0; i < max; i++)
			hs[i + 1] = h = pat_hash_step(h, (unsigned char)s[i], icase);
		for (size_t l = max + 1; l-- > 0; ) {
			const struct pat_hnode *n;

			if (!ps->lens[l])
				continue;
			n = pat_hash_get(ps, hs[l], s, l);
			if (n)
				return n;
		}
		return NULL;
	}
	for (size_t l = max + 1; l-- > 0; ) {   /* very long samples: hash each probe */
		const struct pat_hnode *n;

		if (!ps->lens[l])
			continue;
		n = pat_hash_get(ps, pat_hash(s, l, icase), s, l);
		if (n)
			return n;
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * Networks: one hash table per family keyed by (prefix length, masked
 * address), and a count of patterns per length, so that a lookup probes
 * the lengths in use from the longest down (longest-prefix match), and a
 * million host addresses load as fast as a million strings.
 */

struct pat_ipnode {
	struct pat_ipnode *next;
	const void        *data;
	uint32_t           hash;
	uint8_t            bits;
	uint8_t            addr[16];
};

struct pat_ipt {
	struct pat_ipnode **tab;
	unsigned            size, count;
	unsigned            bitcnt[129];
	int                 alen;        /* 4 or 16 bytes */
};

static void pat_ip_mask(uint8_t *dst, const uint8_t *src, int alen, int bits)
{
	for (int i = 0; i < alen; i++) {
		int b = bits - i * 8;

		dst[i] = b >= 8 ? src[i] : b <= 0 ? 0 : (uint8_t)(src[i] & (0xff << (8 - b)));
	}
}

static uint32_t pat_ip_hash(const uint8_t *a, int alen, int bits)
{
	uint32_t h = pat_hash_step(PAT_FNV_INIT, (unsigned char)bits, 0);

	for (int i = 0; i < alen; i++)
		h = pat_hash_step(h, a[i], 0);
	return h ^ (h >> 15);
}

static void pat_ip_grow(struct pat_ipt *t)
{
	unsigned nsize = t->size ? t->size * 2 : 64;
	struct pat_ipnode **nt = xcalloc(nsize, sizeof(*nt));

	for (unsigned i = 0; i < t->size; i++)
		for (struct pat_ipnode *n = t->tab[i], *next; n; n = next) {
			struct pat_ipnode **tp = &nt[n->hash & (nsize - 1)];

			next = n->next;
			while (*tp)
				tp = &(*tp)->next;
			n->next = NULL;
			*tp = n;
		}
	free(t->tab);
	t->tab = nt;
	t->size = nsize;
}

static void pat_ip_add(struct pat_ipt **tp, int alen, const uint8_t *addr, int bits,
                       const void *data)
{
	struct pat_ipt *t = *tp;
	struct pat_ipnode *n, **np;
	uint8_t a[16] = { 0 };
	uint32_t h;

	if (!t) {
		t = *tp = xcalloc(1, sizeof(*t));
		t->alen = alen;
	}
	pat_ip_mask(a, addr, alen, bits);
	h = pat_ip_hash(a, alen, bits);
	if (t->count >= t->size)
		pat_ip_grow(t);
	for (np = &t->tab[h & (t->size - 1)]; *np; np = &(*np)->next)
		if (!data && (*np)->bits == bits && memcmp((*np)->addr, a, (size_t)alen) == 0)
			return;
	n = xcalloc(1, sizeof(*n));
	n->data = data;
	n->hash = h;
	n->bits = (uint8_t)bits;
	memcpy(n->addr, a, (size_t)alen);
	*np = n;
	t->count++;
	t->bitcnt[bits]++;
}

static const struct pat_ipnode *pat_ip_find(const struct pat_ipt *t, const uint8_t *addr)
{
	if (!t || !t->count)
		return NULL;
	for (int bits = t->alen * 8; bits >= 0; bits--) {
		uint8_t a[16];
		uint32_t h;

		if (!t->bitcnt[bits])
			continue;
		pat_ip_mask(a, addr, t->alen, bits);
		h = pat_ip_hash(a, t->alen, bits);
		for (const struct pat_ipnode *n = t->tab[h & (t->size - 1)]; n; n = n->next)
			if (n->hash == h && n->bits == bits && memcmp(n->addr, a, (size_t)t->alen) == 0)
				return n;
	}
	return NULL;
}

static int pat_ip_del(struct pat_ipt *t, const uint8_t *addr, int bits, const void *data)
{
	uint8_t a[16] = { 0 };
	uint32_t h;
	int n_del = 0;

	if (!t || !t->size)
		return 0;
	pat_ip_mask(a, addr, t->alen, bits);
	h = pat_ip_hash(a, t->alen, bits);
	for (struct pat_ipnode **np = &t->tab[h & (t->size - 1)]; *np; ) {
		struct pat_ipnode *n = *np;

		if (n->data == data && n->bits == bits && memcmp(n->addr, a, (size_t)t->alen) == 0) {
			*np = n->next;
			free(n);
			t->count--;
			t->bitcnt[bits]--;
			n_del++;
		} else
			np = &n->next;
	}
	return n_del;
}

static void pat_ip_free(struct pat_ipt *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->size; i++)
		for (struct pat_ipnode *n = t->tab[i], *next; n; n = next) {
			next = n->next;
			free(n);
		}
	free(t->tab);
	free(t);
}

/* "addr", "addr/bits" or "v4addr/dotted.mask". */
static int pat_parse_ip(const char *val, uint8_t *a, int *bitsp, int *v6p, char **err)
{
	char tmp[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(val, '/');
	size_t alen = slash ? (size_t)(slash - val) : strlen(val);
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
	*bitsp = bits;
	*v6p = v6;
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
 * Adding and deleting patterns
 */

static struct pat_lst *pat_lst_new(struct pat_set *ps, const void *data)
{
	struct pat_lst *l;

	if (ps->nlst == ps->lcap) {
		ps->lcap = ps->lcap ? ps->lcap * 2 : 8;
		ps->lst = xrealloc(ps->lst, (size_t)ps->lcap * sizeof(*ps->lst));
	}
	l = &ps->lst[ps->nlst];
	memset(l, 0, sizeof(*l));
	l->data = data;
	return l;
}

static int pat_add_regex(struct pat_set *ps, const char *val, const void *data, char **err)
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
	pat_lst_new(ps, data)->re = re;
	ps->nlst++;
	return 0;
#else
	*err = str_fmt("regex matching (-m reg) needs a build with USE_PCRE2=1");
	return -1;
#endif
}

int pat_set_add_data(struct pat_set *ps, const char *val, enum pat_op op, const void *data,
                     char **err)
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
		pat_lst_new(ps, data)->r = r;
		ps->nlst++;
		break;
	}
	case PAT_M_IP: {
		uint8_t a[16];
		int bits, v6;

		if (pat_parse_ip(val, a, &bits, &v6, err) == -1)
			return -1;
		pat_ip_add(v6 ? &ps->v6 : &ps->v4, v6 ? 16 : 4, a, bits, data);
		break;
	}
	case PAT_M_STR:
	case PAT_M_BEG:
		pat_hash_add(ps, val, len, data);
		break;
	case PAT_M_REG:
		if (pat_add_regex(ps, val, data, err) == -1)
			return -1;
		break;
	case PAT_M_BIN: {
		uint8_t bin[PAT_BIN_MAX];
		long n = pat_parse_bin(val, bin, sizeof(bin), err);

		if (n == -1)
			return -1;
		pat_hash_add(ps, (const char *)bin, (size_t)n, data);
		break;
	}
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
	case PAT_M_END:
	case PAT_M_SUB: {
		struct pat_lst *l = pat_lst_new(ps, data);

		l->s = xcalloc(1, len + 1);
		memcpy(l->s, val, len);
		l->s[len] = '\0';
		l->len = len;
		ps->nlst++;
		break;
	}
	default:
		*err = str_fmt("unsupported match method");
		return -1;
	}
	ps->count++;
	return 0;
}

int pat_set_add(struct pat_set *ps, const char *val, enum pat_op op, char **err)
{
	return pat_set_add_data(ps, val, op, NULL, err);
}

int pat_set_check(enum pat_match m, const char *val, char **err)
{
	struct pat_set tmp;
	int ret;

	if (m == PAT_M_REG || m == PAT_M_IP || m == PAT_M_INT || m == PAT_M_LEN ||
	    m == PAT_M_BIN) {
		pat_set_init(&tmp, m, 0);
		ret = pat_set_add(&tmp, val, PAT_OP_NONE, err);
		pat_set_free(&tmp);
		return ret;
	}
	return 0;
}

static void pat_lst_free_one(struct pat_lst *l)
{
	free(l->s);
#ifdef USE_PCRE2
	if (l->re)
		pcre2_code_free(l->re);
#endif
}

void pat_set_del(struct pat_set *ps, const char *val, const void *data)
{
	switch (ps->match) {
	case PAT_M_STR:
	case PAT_M_BEG:
		pat_hash_del(ps, val, strlen(val), data);
		break;
	case PAT_M_BIN: {
		uint8_t bin[PAT_BIN_MAX];
		char *err = NULL;
		long n = pat_parse_bin(val, bin, sizeof(bin), &err);

		free(err);
		if (n >= 0)
			pat_hash_del(ps, (const char *)bin, (size_t)n, data);
		break;
	}
	case PAT_M_IP: {
		uint8_t a[16];
		int bits, v6;
		char *err = NULL;

		if (pat_parse_ip(val, a, &bits, &v6, &err) == -1) {
			free(err);
			return;
		}
		ps->count -= pat_ip_del(v6 ? ps->v6 : ps->v4, a, bits, data);
		break;
	}
	default: {
		int j = 0;

		for (int i = 0; i < ps->nlst; i++) {
			if (ps->lst[i].data == data) {
				pat_lst_free_one(&ps->lst[i]);
				ps->count--;
				continue;
			}
			ps->lst[j++] = ps->lst[i];
		}
		ps->nlst = j;
		break;
	}
	}
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
	free(ps->lens);
	for (int i = 0; i < ps->nlst; i++)
		pat_lst_free_one(&ps->lst[i]);
	free(ps->lst);
	pat_ip_free(ps->v4);
	pat_ip_free(ps->v6);
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
static unsigned pat_md_set;   /* the groups (and the whole match) its last match set:
                                 pairs past them hold an older match's offsets */
#endif

/* The first pattern of the list (in the order added) that matches. */
static const struct pat_lst *pat_match_lst(const struct pat_set *ps, const char *s, size_t l)
{
	int icase = ps->flags & PAT_F_ICASE;

	for (int i = 0; i < ps->nlst; i++) {
		const struct pat_lst *p = &ps->lst[i];

		switch (ps->match) {
		case PAT_M_END:
			if (p->len <= l && pat_str_eq(s + l - p->len, p->s, p->len, icase))
				return p;
			break;
		case PAT_M_SUB:
			if (pat_memmem(s, l, p->s, p->len, icase))
				return p;
			break;
		case PAT_M_DIR:
			if (pat_word(s, l, p->s, p->len, icase, "/?"))
				return p;
			break;
		case PAT_M_DOM:
			if (pat_word(s, l, p->s, p->len, icase, "/?.:"))
				return p;
			break;
		case PAT_M_REG:
#ifdef USE_PCRE2
			{
				int rc = pcre2_match(p->re, (PCRE2_SPTR)s, l, 0, 0, pat_md, NULL);

				if (rc >= 0) {
					/* 0: more groups than pairs, all of them set */
					pat_md_set = rc ? (unsigned)rc : pcre2_get_ovector_count(pat_md);
					return p;
				}
			}
#endif
			break;
		default:
			break;
		}
	}
	return NULL;
}

static const struct pat_ipnode *pat_match_ip(const struct pat_set *ps, struct sample *smp)
{
	const struct pat_ipnode *n;

	if (!smp_cast(smp, SMP_T_ADDR))
		return NULL;
	if (smp->type == SMP_T_IPV4) {
		uint8_t m[16] = { [10] = 0xff, [11] = 0xff };

		n = pat_ip_find(ps->v4, (const uint8_t *)&smp->u.ipv4);
		if (n)
			return n;
		memcpy(m + 12, &smp->u.ipv4, 4);
		return pat_ip_find(ps->v6, m);
	}
	n = pat_ip_find(ps->v6, smp->u.ipv6.s6_addr);
	if (n)
		return n;
	return IN6_IS_ADDR_V4MAPPED(&smp->u.ipv6) ? pat_ip_find(ps->v4, &smp->u.ipv6.s6_addr[12])
						  : NULL;
}

int pat_set_lookup(const struct pat_set *ps, struct sample *smp, const void **data)
{
	const void *dummy;
	int64_t v;

	if (!data)
		data = &dummy;
	*data = NULL;
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
		for (int i = 0; i < ps->nlst; i++)
			if (v >= ps->lst[i].r.min && v <= ps->lst[i].r.max) {
				*data = ps->lst[i].data;
				return 1;
			}
		return 0;
	case PAT_M_IP: {
		const struct pat_ipnode *n = pat_match_ip(ps, smp);

		if (!n)
			return 0;
		*data = n->data;
		return 1;
	}
	case PAT_M_STR:
	case PAT_M_BEG:
	case PAT_M_BIN: {
		const struct pat_hnode *n;

		if (!smp_cast(smp, ps->match == PAT_M_BIN ? SMP_T_BIN : SMP_T_STR))
			return 0;
		n = pat_hash_find(ps, smp->u.str.p, smp->u.str.len, ps->match == PAT_M_BEG);
		if (!n)
			return 0;
		*data = n->data;
		return 1;
	}
	default: {
		const struct pat_lst *l;

		if (!smp_cast(smp, SMP_T_STR))
			return 0;
		l = pat_match_lst(ps, smp->u.str.p, smp->u.str.len);
		if (!l)
			return 0;
		*data = l->data;
		return 1;
	}
	}
}

int pat_set_exec(const struct pat_set *ps, struct sample *smp)
{
	return pat_set_lookup(ps, smp, NULL);
}

#ifdef USE_PCRE2
/* One match-data block for every regex: matches run one at a time; it
 * keeps the groups \0 to \9 of the last match for pat_regm_render(). */
#define PAT_GROUPS 10
SLUICE_INIT(pat_init_pcre2)
{
	pat_md = pcre2_match_data_create(PAT_GROUPS, NULL);
	BUG_ON(!pat_md, "pcre2_match_data_create");
}
#endif

size_t pat_regm_render(const char *subj, const char *val, char *out, size_t size)
{
	size_t o = 0;

	if (!size)
		return 0;
	for (const char *v = val; *v && o + 1 < size; v++) {
#ifdef USE_PCRE2
		if (v[0] == '\\' && v[1] >= '0' && v[1] <= '9') {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(pat_md);
			unsigned g = (unsigned)(v[1] - '0');

			v++;
			if (g < pat_md_set && ov[2 * g] != PCRE2_UNSET) {
				size_t n = ov[2 * g + 1] - ov[2 * g];

				if (n > size - 1 - o)
					n = size - 1 - o;
				memcpy(out + o, subj + ov[2 * g], n);
				o += n;
			}
			continue;
		}
#endif
		out[o++] = *v;
	}
	out[o] = '\0';
	return o;
}
