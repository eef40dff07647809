/* libFuzzer harness for the HTTP/1.x head parser and the chunked scanner
 * (src/http/h1.c): a head fed in pieces must parse exactly as when fed whole,
 * slices stay inside the head, framing flags stay consistent.
 * Input: one control byte, then the message bytes. The control byte picks
 * the request method a response answers (low nibble), tune.http.maxhdr
 * (bit 4), the size limit (bits 5-6) and the cut-point seed (bit 7). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/h1.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define MAXHDR_BIG 100

struct parsed {
	int            ret;
	struct h1_msg  m;
	struct h1_hdr  hdrs[MAXHDR_BIG];
	char          *buf;     /* the bytes after parsing (obs-fold rewritten) */
	size_t         len;
};

/* xorshift64*, seeded from the input so a crash reproduces */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static uint64_t rnd_seed(const uint8_t *d, size_t n, uint8_t salt)
{
	uint64_t h = 1469598103934665603ULL ^ salt;

	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 1099511628211ULL;
	return h ? h : 1;
}

static int is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static void check_slice(struct h1_slice s, size_t head_len)
{
	CHECK((uint64_t)s.off + s.len <= head_len);
}

/* Properties of one parse result, whatever the input. */
static void check_msg(const struct parsed *p, size_t limit, int resp)
{
	const struct h1_msg *m = &p->m;
	const char *b = p->buf;

	CHECK(p->ret >= -1);
	if (p->ret == -1) {
		CHECK(m->err_msg != NULL);
		CHECK(m->err_pos <= p->len);
		if (resp)
			CHECK(m->err_status == 502);
		else
			CHECK(m->err_status == 400 || m->err_status == 413 || m->err_status == 414 ||
			      m->err_status == 431 || m->err_status == 501 || m->err_status == 505);
		return;
	}
	if (p->ret == 0)
		return;

	size_t hl = (size_t)p->ret;
	unsigned f = m->flags;

	CHECK(hl <= p->len && hl <= limit);
	CHECK(m->head_len == hl);
	CHECK(b[hl - 1] == '\n');
	CHECK(m->skip < hl);
	CHECK(b[m->skip] != '\r' && b[m->skip] != '\n');
	CHECK(!!(f & H1_F_RESP) == !!resp);
	CHECK(m->nhdrs >= 0 && m->nhdrs <= m->maxhdr);
	for (int i = 0; i < m->nhdrs; i++) {
		const struct h1_hdr *h = &m->hdrs[i];

		check_slice(h->name, hl);
		check_slice(h->value, hl);
		CHECK(h->name.len > 0);
		CHECK(h->name.off > m->skip);
		for (uint32_t k = 0; k < h->name.len; k++)
			CHECK(is_tchar((unsigned char)b[h->name.off + k]));
		CHECK(b[h->name.off + h->name.len] == ':');
		for (uint32_t k = 0; k < h->value.len; k++) {
			unsigned char c = (unsigned char)b[h->value.off + k];

			CHECK(c >= 0x20 || c == '\t');
			CHECK(c != 0x7f);
		}
		if (h->value.len) {
			CHECK(b[h->value.off] != ' ' && b[h->value.off] != '\t');
			CHECK(b[h->value.off + h->value.len - 1] != ' ' &&
			      b[h->value.off + h->value.len - 1] != '\t');
		}
		/* headers come in order, each on its own line */
		if (i)
			CHECK(h->name.off > m->hdrs[i - 1].value.off + m->hdrs[i - 1].value.len);
	}

	/* framing */
	CHECK(!((f & H1_F_CLEN) && (f & H1_F_CHUNKED)));
	CHECK(!(f & H1_F_CLEN) || m->clen <= H1_CLEN_MAX);
	if (f & H1_F_CHUNKED)
		CHECK(f & H1_F_TE);
	if (f & H1_F_TE)
		CHECK(f & H1_F_VER_11);
	if (f & H1_F_CLEN_DROPPED)
		CHECK((f & H1_F_TE) && (f & H1_F_CONN_CLOSE) && !(f & H1_F_CLEN));

	if (resp) {
		int n = !!(f & H1_F_NO_BODY) + !!(f & H1_F_CLEN) + !!(f & H1_F_CHUNKED) +
			!!(f & H1_F_BODY_CLOSE);

		CHECK(n == 1);
		CHECK(m->status >= 100 && m->status <= 999);
		check_slice(m->reason, hl);
		for (uint32_t k = 0; k < m->reason.len; k++) {
			unsigned char c = (unsigned char)b[m->reason.off + k];

			CHECK((c >= 0x20 || c == '\t') && c != 0x7f);
		}
		if (m->status < 200 || m->status == 204 || m->status == 304 || m->meth_id == H1_M_HEAD)
			CHECK(f & H1_F_NO_BODY);
	} else {
		CHECK(!(f & H1_F_BODY_CLOSE));
		if (f & H1_F_CHUNKED)
			CHECK(!(f & H1_F_NO_BODY));
		else if (f & H1_F_CLEN)
			CHECK(!!(f & H1_F_NO_BODY) == (m->clen == 0));
		else
			CHECK(f & H1_F_NO_BODY);
		if ((f & H1_F_TE) && !(f & H1_F_CHUNKED))
			__builtin_trap();
		if (f & H1_F_VER_11)
			CHECK(f & H1_F_HOST);

		check_slice(m->meth, hl);
		check_slice(m->uri, hl);
		CHECK(m->meth.off == m->skip && m->meth.len > 0);
		for (uint32_t k = 0; k < m->meth.len; k++)
			CHECK(is_tchar((unsigned char)b[m->meth.off + k]));
		CHECK(b[m->meth.off + m->meth.len] == ' ');
		CHECK(m->uri.off == m->meth.off + m->meth.len + 1 && m->uri.len > 0);
		for (uint32_t k = 0; k < m->uri.len; k++) {
			unsigned char c = (unsigned char)b[m->uri.off + k];

			CHECK(c > 0x20 && c < 0x7f);
		}
		CHECK((m->target == H1_T_AUTHORITY) == (m->meth_id == H1_M_CONNECT));
		if (m->target == H1_T_ORIGIN)
			CHECK(b[m->uri.off] == '/');
		if (m->target == H1_T_ASTERISK)
			CHECK(m->uri.len == 1 && b[m->uri.off] == '*' && m->meth_id == H1_M_OPTIONS);
	}
}

static void same_result(const struct parsed *a, const struct parsed *b)
{
	CHECK(a->ret == b->ret);
	if (a->ret == -1) {
		CHECK(a->m.err_status == b->m.err_status);
		CHECK(a->m.err_pos == b->m.err_pos);
		CHECK(strcmp(a->m.err_msg, b->m.err_msg) == 0);
		return;
	}
	if (a->ret == 0)
		return;
	CHECK(a->m.flags == b->m.flags);
	CHECK(a->m.head_len == b->m.head_len && a->m.skip == b->m.skip);
	CHECK(a->m.nhdrs == b->m.nhdrs);
	CHECK(a->m.meth_id == b->m.meth_id && a->m.target == b->m.target);
	CHECK(a->m.status == b->m.status);
	CHECK(!memcmp(&a->m.meth, &b->m.meth, sizeof(a->m.meth)));
	CHECK(!memcmp(&a->m.uri, &b->m.uri, sizeof(a->m.uri)));
	CHECK(!memcmp(&a->m.reason, &b->m.reason, sizeof(a->m.reason)));
	if (a->m.flags & H1_F_CLEN)
		CHECK(a->m.clen == b->m.clen);
	CHECK(!memcmp(a->hdrs, b->hdrs, (size_t)a->m.nhdrs * sizeof(a->hdrs[0])));
	CHECK(!memcmp(a->buf, b->buf, (size_t)a->ret));
}

/* Whole parse of in[0..n), from an exactly-sized heap buffer. */
static void parse_whole(struct parsed *p, const uint8_t *in, size_t n, size_t limit,
                        int maxhdr, int resp, enum h1_meth rm)
{
	p->buf = malloc(n ? n : 1);
	CHECK(p->buf != NULL);
	memcpy(p->buf, in, n);
	p->len = n;
	h1_msg_init(&p->m, p->hdrs, maxhdr, resp, rm);
	p->ret = h1_parse(p->buf, n, limit, &p->m);
}

/* Resumable parse: growing prefixes, each in a fresh exactly-sized buffer so
 * that a read past the prefix is caught, with one h1_msg. Stops at the first
 * non-zero result; <at> receives the prefix length that decided. */
static void parse_pieces(struct parsed *p, const uint8_t *in, size_t n, size_t limit,
                         int maxhdr, int resp, enum h1_meth rm, uint64_t *seed, size_t *at)
{
	size_t k = 0;

	h1_msg_init(&p->m, p->hdrs, maxhdr, resp, rm);
	p->ret = 0;
	p->buf = NULL;
	p->len = 0;
	*at = 0;
	while (k < n) {
		size_t step = n <= 128 ? 1 : 1 + (size_t)(rnd_next(seed) % (1 + n / 24));
		char *b;

		k = k + step < n ? k + step : n;
		b = malloc(k);
		CHECK(b != NULL);
		memcpy(b, in, k);
		p->ret = h1_parse(b, k, limit, &p->m);
		if (p->ret != 0) {
			p->buf = b;
			p->len = k;
			*at = k;
			return;
		}
		free(b);
	}
	p->buf = malloc(1);
	CHECK(p->buf != NULL);
	*at = n;
}

static void run_chunks(const uint8_t *in, size_t n, uint64_t *seed)
{
	struct h1_chunk ck, ck2;
	const char *err = NULL, *err2 = NULL;
	size_t used = (size_t)-1, used2 = 0, k = 0;
	char *b = malloc(n ? n : 1);
	int r, r2 = 0;

	CHECK(b != NULL);
	memcpy(b, in, n);
	memset(&ck, 0, sizeof(ck));
	r = h1_chunk_scan(&ck, b, n, &used, &err);
	free(b);
	CHECK(r >= -1 && r <= 1);
	if (r == -1)
		CHECK(err != NULL);
	else
		CHECK(used <= n);
	if (r == 0)
		CHECK(used == n && ck.state != H1_CK_DONE);
	if (r == 1)
		CHECK(ck.state == H1_CK_DONE && used >= 1 && in[used - 1] == '\n');

	/* the same body in pieces, each in its own exactly-sized buffer */
	memset(&ck2, 0, sizeof(ck2));
	while (k < n) {
		size_t step = 1 + (size_t)(rnd_next(seed) % (n <= 64 ? 2 : 1 + n / 16));
		size_t u = (size_t)-1, len;

		len = k + step < n ? step : n - k;
		b = malloc(len);
		CHECK(b != NULL);
		memcpy(b, in + k, len);
		r2 = h1_chunk_scan(&ck2, b, len, &u, &err2);
		free(b);
		if (r2 == -1)
			break;
		CHECK(u <= len);
		used2 += u;
		if (r2 == 1)
			break;
		CHECK(u == len);
		k += len;
	}
	if (n == 0) {
		r2 = h1_chunk_scan(&ck2, (const char *)in, 0, &used2, &err2);
	}
	CHECK(r2 == r);
	if (r >= 0) {
		CHECK(used2 == used);
		CHECK(ck2.total == ck.total);
		CHECK(ck2.state == ck.state);
	}
}

static void one_mode(const uint8_t *in, size_t n, size_t limit, int maxhdr, int resp,
                     enum h1_meth rm, uint64_t *seed)
{
	static struct parsed whole, pieces, prefix;
	size_t at;

	parse_whole(&whole, in, n, limit, maxhdr, resp, rm);
	check_msg(&whole, limit, resp);

	parse_pieces(&pieces, in, n, limit, maxhdr, resp, rm, seed, &at);
	check_msg(&pieces, limit, resp);
	same_result(&whole, &pieces);
	if (whole.ret > 0)
		CHECK(at >= (size_t)whole.ret);

	/* the prefix that decided, parsed fresh, decides the same way */
	if (pieces.ret != 0) {
		parse_whole(&prefix, in, at, limit, maxhdr, resp, rm);
		check_msg(&prefix, limit, resp);
		same_result(&whole, &prefix);
		free(prefix.buf);
	}

	/* the body that follows the head (or the whole input) as chunked */
	if (whole.ret > 0)
		run_chunks(in + whole.ret, n - (size_t)whole.ret, seed);
	free(whole.buf);
	free(pieces.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t limits[4] = { 1 << 16, 0, 0, 64 };
	const uint8_t *in;
	uint8_t c;
	size_t n, limit;
	int maxhdr;
	enum h1_meth rm;
	uint64_t seed;

	if (size < 1)
		return 0;
	c = data[0];
	in = data + 1;
	n = size - 1;
	rm = (enum h1_meth)((c & 0x0f) % (H1_M_PATCH + 1));
	maxhdr = (c & 0x10) ? 3 : MAXHDR_BIG;
	switch ((c >> 5) & 3) {
	case 1:  limit = n ? n : 1; break;
	case 2:  limit = n / 2 + 1; break;
	default: limit = limits[(c >> 5) & 3]; break;
	}
	seed = rnd_seed(in, n, c & 0x80);

	one_mode(in, n, limit, maxhdr, 0, H1_M_OTHER, &seed);
	one_mode(in, n, limit, maxhdr, 1, rm, &seed);
	run_chunks(in, n, &seed);
	return 0;
}
