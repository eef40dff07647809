/* HTTP response compression with zlib (comp.h): keywords, Accept-Encoding
 * negotiation, the decision on the response head, and the body compressed
 * as it arrives. The body of a compressed response never leaves as it
 * came: the bytes the server sent stay ungranted in the response buffer,
 * their payload goes through deflate() into a separate output buffer, and
 * that output is put back in the channel as HTTP/1.1 chunks, which are the
 * only bytes granted. A burst of input ends with Z_SYNC_FLUSH so that a
 * streaming response is not held back; the end of the body with Z_FINISH
 * and the last chunk, followed by the server's trailer fields when it sent
 * some (a chunked body). A body that ends early never gets its last chunk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#ifdef USE_ZLIB
#include <zlib.h>
#else
/* no zlib: comp_deflate() is never reached (no state can be made), these
 * only keep its callers compiling */
enum { Z_NO_FLUSH, Z_SYNC_FLUSH = 2, Z_FINISH = 4 };
#endif

#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/channel.h>
#include <sluice/common.h>
#include <sluice/comp.h>
#include <sluice/freq.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_filter.h>
#include <sluice/http_head.h>
#include <sluice/log.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

#include "ana_int.h"

static const char *const algo_names[COMP_A_NB] = { "identity", "gzip", "deflate", "raw-deflate" };
/* what Content-Encoding says for each */
static const char *const algo_coding[COMP_A_NB] = { "identity", "gzip", "deflate", "deflate" };

/* ---- global settings and limits ---- */

struct comp_global {
	int      rate_limit;   /* maxcomprate, kB/s of input, 0: none */
	int      cpu_limit;    /* maxcompcpuusage, percent */
	int      zlib_max_mb;  /* maxzlibmem, MB, 0: none */
	int      maxlevel;     /* tune.comp.maxlevel */
};

static struct comp_global cg = { .cpu_limit = 100, .maxlevel = 1 };

/* A per-second sum over 64 bits (bytes, nanoseconds). */
/* What went through deflate over the last second (bytes in and out, ns of
 * CPU): the limits and show info read them. */
static struct freq_ctr comp_in_rate, comp_out_rate, comp_cpu_ns;
static uint64_t zlib_used;

void comp_set_rate_limit(int kbps)
{
	cg.rate_limit = kbps;
}

int comp_rate_limit(void)
{
	return cg.rate_limit;
}

void comp_rates(uint32_t *in, uint32_t *out, uint32_t *limit)
{
	*in = freq_rate(&comp_in_rate, tick_now_ms());
	*out = freq_rate(&comp_out_rate, tick_now_ms());
	*limit = cg.rate_limit > 0 ? (uint32_t)MIN((uint64_t)cg.rate_limit * 1024, UINT32_MAX) : 0;
}

uint64_t comp_zlib_used(void)
{
	return zlib_used;
}

uint64_t comp_zlib_max(void)
{
	return (uint64_t)cg.zlib_max_mb << 20;
}

/* Whether a new response must bypass compression: a limit is reached. */
static int comp_limited(void)
{
	if (cg.rate_limit && freq_rate(&comp_in_rate, tick_now_ms()) / 1024 >= (uint64_t)cg.rate_limit)
		return 1;
	if (cg.cpu_limit < 100 && freq_rate(&comp_cpu_ns, tick_now_ms()) / 10000000 >= (uint64_t)cg.cpu_limit)
		return 1;
	return 0;
}

#ifdef USE_ZLIB
/* ---- zlib memory: pooled by size, counted against maxzlibmem ---- */

#define ZPOOLS 8
static struct pool *zpools[ZPOOLS];

struct zhdr {
	uint64_t size;   /* bytes counted, header included */
	int64_t  pool;   /* index in zpools, -1: malloc */
};

static voidpf comp_zalloc(voidpf opaque, uInt items, uInt size)
{
	uint64_t total = (uint64_t)items * size + sizeof(struct zhdr);
	struct zhdr *h = NULL;
	int k;

	if (cg.zlib_max_mb && zlib_used + total > (uint64_t)cg.zlib_max_mb << 20)
		return Z_NULL;
	for (k = 0; k < ZPOOLS; k++) {
		if (!zpools[k]) {
			char name[32];

			snprintf(name, sizeof(name), "zlib-%llu", (unsigned long long)total);
			zpools[k] = pool_create(xstrdup(name), (size_t)total);
		}
		if (zpools[k]->size == total)
			break;
	}
	if (k < ZPOOLS)
		h = pool_alloc(zpools[k]);
	else
		h = malloc((size_t)total);
	if (!h)
		return Z_NULL;
	h->size = total;
	h->pool = k < ZPOOLS ? k : -1;
	zlib_used += total;
	return h + 1;
}

static void comp_zfree(voidpf opaque, voidpf p)
{
	struct zhdr *h = (struct zhdr *)p - 1;

	zlib_used -= h->size;
	if (h->pool >= 0)
		pool_free(zpools[h->pool], h);
	else
		free(h);
}

#endif

/* ---- the state of one compressed response ---- */

enum comp_framing { CF_CLEN, CF_CHUNKED, CF_CLOSE };

struct comp_ctx {
#ifdef USE_ZLIB
	z_stream          z;
#endif
	int               zinit;     /* deflateInit2() done, deflateEnd() due */
	enum comp_algo    algo;
	enum comp_framing framing;
	uint64_t          left;      /* CF_CLEN: payload bytes still due */
	struct h1_chunk   ck;        /* CF_CHUNKED: the server's framing */
	struct buf       *out;       /* compressed bytes not yet in the channel */
	int               unflushed; /* input given since the last sync flush */
	int               in_end;    /* the body's end was read */
	int               z_end;     /* Z_STREAM_END reached */
	int               last_put;  /* the last chunk is in the channel */
	/* CF_CHUNKED: the server's trailer section as it came (fields and the
	 * empty line that ends it), written after the last chunk */
	char             *trl;
	uint32_t          trl_len;
	unsigned          chflags;   /* the channel's splice flags, restored at the end */
};

static struct pool *ctx_pool;

/* ---- Accept-Encoding ---- */

void comp_ae_init(struct comp_ae *ae)
{
	for (int i = 0; i < COMP_A_NB; i++)
		ae->q[i] = -1;
	ae->star = -1;
}

static int is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in
 * thousandths; -1 when malformed. */
static int parse_qvalue(const char *p, size_t len)
{
	int v, mul = 100;

	if (!len || (p[0] != '0' && p[0] != '1'))
		return -1;
	v = (p[0] - '0') * 1000;
	if (len == 1)
		return v;
	if (p[1] != '.' || len > 5)
		return -1;
	for (size_t i = 2; i < len; i++, mul /= 10) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v += (p[i] - '0') * mul;
	}
	return v > 1000 ? -1 : v;
}

int comp_ae_parse(const char *v, size_t len, struct comp_ae *ae)
{
	size_t i = 0;

	while (i < len) {
		size_t ts, te;
		int q = 1000;

		while (i < len && (is_ows(v[i]) || v[i] == ','))
			i++;
		if (i == len)
			break;
		ts = i;
		while (i < len && is_tchar((unsigned char)v[i]))
			i++;
		te = i;
		if (te == ts)
			return -1;
		while (i < len && is_ows(v[i]))
			i++;
		while (i < len && v[i] == ';') {
			size_t ns, ne, vs, ve;

			i++;
			while (i < len && is_ows(v[i]))
				i++;
			ns = i;
			while (i < len && is_tchar((unsigned char)v[i]))
				i++;
			ne = i;
			if (ne == ns || i == len || v[i] != '=')
				return -1;
			i++;
			vs = i;
			if (i < len && v[i] == '"') {
				/* a quoted parameter value (never a q-value) */
				for (i++; i < len && v[i] != '"'; i++)
					if (v[i] == '\\' && ++i == len)
						return -1;
				if (i == len)
					return -1;
				i++;
				ve = i;
				if (ne - ns == 1 && (v[ns] | 0x20) == 'q')
					return -1;
			} else {
				while (i < len && is_tchar((unsigned char)v[i]))
					i++;
				ve = i;
				if (ve == vs)
					return -1;
				if (ne - ns == 1 && (v[ns] | 0x20) == 'q' &&
				    (q = parse_qvalue(v + vs, ve - vs)) < 0)
					return -1;
			}
			while (i < len && is_ows(v[i]))
				i++;
		}
		if (i < len && v[i] != ',')
			return -1;
		{
			const char *t = v + ts;
			size_t tl = te - ts;
			int *slot = NULL;

			if (tl == 1 && *t == '*')
				slot = &ae->star;
			else if ((tl == 4 && strncasecmp(t, "gzip", 4) == 0) ||
				 (tl == 6 && strncasecmp(t, "x-gzip", 6) == 0))
				slot = &ae->q[COMP_A_GZIP];
			else if (tl == 7 && strncasecmp(t, "deflate", 7) == 0)
				slot = &ae->q[COMP_A_DEFLATE];
			else if (tl == 8 && strncasecmp(t, "identity", 8) == 0)
				slot = &ae->q[COMP_A_IDENTITY];
			if (slot && q > *slot)
				*slot = q;
		}
	}
	return 0;
}

enum comp_algo comp_ae_choose(const struct comp_ae *ae, const unsigned char *algos, int n)
{
	enum comp_algo best = COMP_A_IDENTITY;
	int best_q = 0;

	for (int i = 0; i < n; i++) {
		enum comp_algo a = algos[i];
		int q = ae->q[a == COMP_A_RAW_DEFLATE ? COMP_A_DEFLATE : a];

		if (q < 0)
			q = ae->star >= 0 ? ae->star : a == COMP_A_IDENTITY ? 1 : 0;
		if (q > best_q) {
			best_q = q;
			best = a;
		}
	}
	return best;
}

const char *comp_algo_name(enum comp_algo a)
{
	return (unsigned)a < COMP_A_NB ? algo_names[a] : "";
}

/* ---- per-proxy settings ---- */

/* The settings that apply to <s>: the backend's when it has an algorithm
 * list, else the frontend's (HAProxy's order); NULL when neither has. */
static const struct comp_px *comp_px_of(const struct stream *s)
{
	if (s->be && s->be->comp && s->be->comp->nalgos)
		return s->be->comp;
	if (s->fe->comp && s->fe->comp->nalgos)
		return s->fe->comp;
	return NULL;
}

/* The type list that applies: the backend's if it has one. */
static const struct comp_px *comp_types_of(const struct stream *s)
{
	if (s->be && s->be->comp && s->be->comp->ntypes)
		return s->be->comp;
	return s->fe->comp && s->fe->comp->ntypes ? s->fe->comp : NULL;
}

static int comp_offload(const struct stream *s)
{
	return (s->fe->comp && s->fe->comp->offload) ||
	       (s->be && s->be->comp && s->be->comp->offload);
}

/* Whether User-Agent <ua> (<len> bytes) is a Mozilla/4 browser known to
 * mishandle compressed responses: every one but MSIE 6 with SV1 (XP SP2)
 * and MSIE 7 and later, as HAProxy decides. */
int comp_ua_refused(const char *ua, size_t len)
{
	const char *m, *e = ua + len;

	if (len < 9 || strncmp(ua, "Mozilla/4", 9) != 0)
		return 0;
	m = memmem(ua, len, "MSIE ", 5);
	if (!m || m + 5 >= e || m[5] < '0' || m[5] > '9')
		return 1;
	if (m[5] >= '7' || (m + 6 < e && m[6] >= '0' && m[6] <= '9'))
		return 0;                 /* 7..9, 10 and later */
	return !(m[5] == '6' && memmem(ua, len, "SV1", 3));
}

void comp_req_head(struct stream *s, struct http_head *h)
{
	const struct comp_px *p = comp_px_of(s);
	struct http_txn *txn = s->txn;
	struct comp_ae ae;
	int i, bad = 0;

	txn->comp_algo = COMP_A_IDENTITY;
	if (!p)
		return;
	comp_ae_init(&ae);
	i = http_head_find(h, "accept-encoding", 15, 0);
	if (i < 0)
		return;
	for (; i >= 0; i = http_head_find(h, "accept-encoding", 15, i + 1))
		if (comp_ae_parse(h->f[i].v.p, h->f[i].v.len, &ae) == -1)
			bad = 1;
	i = http_head_find(h, "user-agent", 10, 0);
	if (i >= 0 && comp_ua_refused(h->f[i].v.p, h->f[i].v.len))
		bad = 1;
	if (!bad)
		txn->comp_algo = (signed char)comp_ae_choose(&ae, p->algos, p->nalgos);
	if (comp_offload(s))
		http_head_del(h, "accept-encoding", 15);
}

/* Whether the response's Content-Type is one the settings compress. */
static int comp_type_ok(const struct stream *s, const struct http_head *h)
{
	const struct comp_px *t = comp_types_of(s);
	int i = http_head_find(h, "content-type", 12, 0);
	const char *v;
	size_t l;

	if (i >= 0) {
		v = h->f[i].v.p;
		l = h->f[i].v.len;
		if (l >= 9 && strncasecmp(v, "multipart", 9) == 0)
			return 0;
	}
	if (!t)
		return 1;
	if (i < 0)
		return 0;
	for (int k = 0; k < t->ntypes; k++) {
		size_t tl = strlen(t->types[k]);

		if (l >= tl && strncasecmp(v, t->types[k], tl) == 0)
			return 1;
	}
	return 0;
}

/* Whether the ETag (at most one) is valid, and makes a strong one weak.
 * Returns 0, or -1 when the response must not be compressed. */
static int comp_etag(struct http_head *h)
{
	int i = http_head_find(h, "etag", 4, 0);
	const char *v;
	size_t l;
	char w[512];

	if (i < 0)
		return 0;
	if (http_head_find(h, "etag", 4, i + 1) >= 0)
		return -1;
	v = h->f[i].v.p;
	l = h->f[i].v.len;
	if (l >= 2 && v[0] == 'W' && v[1] == '/') {
		v += 2;
		l -= 2;
		return l >= 2 && v[0] == '"' && v[l - 1] == '"' ? 0 : -1;
	}
	if (l < 2 || v[0] != '"' || v[l - 1] != '"' || l + 2 > sizeof(w))
		return -1;
	w[0] = 'W';
	w[1] = '/';
	memcpy(w + 2, v, l);
	return http_head_set_value(h, i, w, l + 2);
}

/* Whether Transfer-Encoding, if any, is exactly "chunked". */
static int comp_te_ok(const struct http_head *h)
{
	for (int i = http_head_find(h, "transfer-encoding", 17, 0); i >= 0;
	     i = http_head_find(h, "transfer-encoding", 17, i + 1))
		if (h->f[i].v.len != 7 || strncasecmp(h->f[i].v.p, "chunked", 7) != 0)
			return 0;
	return 1;
}

/* A response that would have been compressed goes out as it is (a limit
 * was reached): its body is counted as bypassed. */
static void comp_bypass(struct stream *s)
{
	struct http_txn *txn = s->txn;
	const struct buf *b = s->res.buf;
	uint64_t body_buffered = b ? b->data - txn->res.head_len : 0;

	txn->comp_byp = 1;
	txn->comp_byp_mark = s->res.total - body_buffered;
}

/* The zlib calls, the only ones: without USE_ZLIB no state can be made
 * (the keywords are refused then, so none is asked for). */
static void comp_zend(struct comp_ctx *c)
{
#ifdef USE_ZLIB
	if (c->zinit)
		deflateEnd(&c->z);
#endif
	c->zinit = 0;
}

static int comp_ctx_init(struct comp_ctx *c, enum comp_algo a)
{
#ifndef USE_ZLIB
	return -1;
#else
	static const int wbits[COMP_A_NB] = { 0, 31, 15, -15 };
	int r;

	memset(&c->z, 0, sizeof(c->z));
	c->z.zalloc = comp_zalloc;
	c->z.zfree = comp_zfree;
	r = deflateInit2(&c->z, cg.maxlevel, Z_DEFLATED, wbits[a], 8, Z_DEFAULT_STRATEGY);
	if (r != Z_OK)
		return -1;
	c->zinit = 1;
	return 0;
#endif
}

int comp_res_head(struct stream *s, struct http_head *h)
{
	struct http_txn *txn = s->txn;
	const struct h1_msg *m = &txn->res;
	const unsigned mf = m->flags;
	enum comp_algo a = (enum comp_algo)txn->comp_algo;
	struct comp_ctx *c;
	int i;

	if (a == COMP_A_IDENTITY || (txn->flags & TX_F_CONNECT) || !comp_px_of(s))
		return 0;
	if (!txn->req_ver11 || txn->meth == H1_M_HEAD || !(mf & H1_F_VER_11) ||
	    txn->status < 200 || txn->status > 203 || (mf & H1_F_NO_BODY))
		return 0;
	if ((mf & H1_F_TE) && !comp_te_ok(h))
		return 0;
	if ((mf & H1_F_CLEN) && !(mf & H1_F_CHUNKED) && m->clen < COMP_MIN_SIZE)
		return 0;
	if (http_head_find(h, "content-encoding", 16, 0) >= 0 ||
	    http_head_has_token(h, "cache-control", "no-transform") || !comp_type_ok(s, h))
		return 0;
	if (comp_limited()) {
		comp_bypass(s);
		return 0;
	}
	if (!ctx_pool)
		ctx_pool = pool_create("comp_ctx", sizeof(struct comp_ctx));
	c = pool_alloc(ctx_pool);
	if (!c)
		return 0;
	memset(c, 0, sizeof(*c));
	if (comp_ctx_init(c, a) == -1) {
		pool_free(ctx_pool, c);
		comp_bypass(s);   /* maxzlibmem reached, or no memory */
		return 0;
	}
	if (comp_etag(h) == -1) {
		comp_zend(c);
		pool_free(ctx_pool, c);
		return 0;
	}
	c->algo = a;
	c->framing = (mf & H1_F_CHUNKED) ? CF_CHUNKED : (mf & H1_F_CLEN) ? CF_CLEN : CF_CLOSE;
	c->left = m->clen;
	http_head_del(h, "content-length", 14);
	http_head_del(h, "transfer-encoding", 17);
	if (http_head_add(h, "Content-Encoding", 16, algo_coding[a], strlen(algo_coding[a])) ||
	    http_head_add(h, "Transfer-Encoding", 17, "chunked", 7))
		goto rewrite_failed;
	i = http_head_find(h, "vary", 4, 0);
	if (i < 0) {
		if (http_head_add(h, "Vary", 4, "Accept-Encoding", 15))
			goto rewrite_failed;
	} else if (!http_head_has_token(h, "vary", "accept-encoding") &&
		   !http_head_has_token(h, "vary", "*")) {
		char v[1024];
		int n = snprintf(v, sizeof(v), "%.*s, Accept-Encoding", (int)h->f[i].v.len,
				 h->f[i].v.p);

		if (n < 0 || (size_t)n >= sizeof(v) || http_head_set_value(h, i, v, (size_t)n))
			goto rewrite_failed;
	}
	txn->comp = c;
	return 1;

rewrite_failed:
	/* the head could not take the fields: sent uncompressed, which the
	 * caller's own rewrite check will refuse if the arena is full */
	comp_zend(c);
	pool_free(ctx_pool, c);
	return 0;
}

int comp_res_start(struct stream *s, long hlen)
{
	struct http_txn *txn = s->txn;
	struct comp_ctx *c = txn->comp;

	s->res.reserve = 0;
	if (http_grant(&s->res, (uint64_t)hlen) == -1)
		return -1;
	/* splice would let body bytes leave without going through deflate */
	c->chflags = s->res.flags & (CH_F_SPLICE | CH_F_SPLICE_AUTO);
	s->res.flags &= ~(CH_F_SPLICE | CH_F_SPLICE_AUTO);
	txn->res_st = HTTP_MSG_BODY;
	txn->res_chunked = 1;
	memset(&c->ck, 0, sizeof(c->ck));
	if (c->framing == CF_CLEN && !c->left)
		c->in_end = 1;
	s->fe->fe_counters.comp_rsp++;
	s->be->be_counters.comp_rsp++;
	return 0;
}

/* Bytes the output buffer can still take. */
static uint32_t out_room(struct buf *o)
{
	if (!o->data)
		o->head = 0;
	else if (o->head > buf_size() / 2) {
		memmove(o->area, o->area + o->head, o->data);
		o->head = 0;
	}
	return buf_room(o, buf_size());
}

/* Runs deflate() over <in> (<len> bytes, may be 0) with <flush>, writing
 * into the output buffer. Returns the input bytes consumed, or -1 on a
 * zlib error. Sets *<full> when the output buffer filled. */
static long comp_deflate(struct stream *s, struct comp_ctx *c, const char *in, size_t len,
                         int flush, int *full)
{
#ifndef USE_ZLIB
	return -1;
#else
	struct buf *o = c->out;
	uint32_t room = out_room(o);
	struct timespec t0, t1;
	int r;

	*full = 0;
	if (!room) {
		*full = 1;
		return 0;
	}
	c->z.next_in = (Bytef *)(uintptr_t)in;
	c->z.avail_in = (uInt)len;
	c->z.next_out = (Bytef *)o->area + o->head + o->data;
	c->z.avail_out = room;
	if (cg.cpu_limit < 100)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	r = deflate(&c->z, flush);
	if (cg.cpu_limit < 100) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		freq_add_n(&comp_cpu_ns, tick_sec(), (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
						 (t1.tv_nsec - t0.tv_nsec)));
	}
	if (r == Z_STREAM_ERROR || (r != Z_OK && r != Z_BUF_ERROR && r != Z_STREAM_END))
		return -1;
	if (r == Z_STREAM_END)
		c->z_end = 1;
	o->data += room - c->z.avail_out;
	s->fe->fe_counters.comp_out += room - c->z.avail_out;
	s->be->be_counters.comp_out += room - c->z.avail_out;
	freq_add_n(&comp_out_rate, tick_sec(), room - c->z.avail_out);
	if (!c->z.avail_out)
		*full = 1;
	len -= c->z.avail_in;
	if (len) {
		s->fe->fe_counters.comp_in += len;
		s->be->be_counters.comp_in += len;
		freq_add_n(&comp_in_rate, tick_sec(), len);
	}
	return (long)len;
#endif
}

/* Removes <n> bytes at offset <off> (from the first pending byte) of <b>. */
static void buf_cut(struct buf *b, uint32_t off, uint32_t n)
{
	char *p = b->area + b->head + off;

	memmove(p, p + n, b->data - off - n);
	b->data -= n;
}

/* Puts what the output buffer holds into the response channel as chunks,
 * in front of the raw bytes not read yet, and grants them; then the last
 * chunk once the stream is finished. Returns 1 when something moved. */
static int comp_push(struct stream *s, struct comp_ctx *c)
{
	struct channel *ch = &s->res;
	struct buf *b = ch->buf, *o = c->out;
	uint32_t granted, raw, room, n;
	char hdr[16];
	int hl, moved = 0;

	for (;;) {
		int last = !o->data && c->z_end && !c->last_put;

		if (!o->data && !last)
			return moved;
		if (!b) {
			if (!(b = ch->buf = buf_get()))
				return moved;
			b->head = b->data = 0;
		}
		if (b->head) {
			memmove(b->area, b->area + b->head, b->data);
			b->head = 0;
		}
		granted = (uint32_t)ch->to_forward;
		raw = b->data - granted;
		room = buf_size() - b->data;
		if (last) {
			/* "0" CRLF, then the trailer section (at least its
			 * empty line) */
			const char *t = c->trl_len ? c->trl : "\r\n";
			uint32_t tl = c->trl_len ? c->trl_len : 2;

			if (room < 3 + tl)
				return moved;
			memmove(b->area + granted + 3 + tl, b->area + granted, raw);
			memcpy(b->area + granted, "0\r\n", 3);
			memcpy(b->area + granted + 3, t, tl);
			b->data += 3 + tl;
			ch->to_forward += 3 + tl;
			c->last_put = 1;
			return 1;
		}
		if (room <= 16)
			return moved;
		n = o->data < room - 16 ? o->data : room - 16;
		hl = snprintf(hdr, sizeof(hdr), "%x\r\n", n);
		memmove(b->area + granted + hl + n + 2, b->area + granted, raw);
		memcpy(b->area + granted, hdr, (size_t)hl);
		memcpy(b->area + granted + hl, o->area + o->head, n);
		memcpy(b->area + granted + hl + n, "\r\n", 2);
		b->data += (uint32_t)hl + n + 2;
		ch->to_forward += (uint64_t)hl + n + 2;
		o->head += n;
		o->data -= n;
		moved = 1;
	}
}

/* The longest trailer section kept (fields and the empty line): a server
 * sending more gets its response cut (bad framing), as a head too large. */
#define COMP_TRL_MAX 4096

/* The payload bytes at the start of the raw region (<raw> bytes from
 * <p>): how many may go to deflate now (framing bytes before them are
 * consumed here, <*skip> says how many). Returns -1 on bad framing. */
static long comp_payload(struct comp_ctx *c, const char *p, uint32_t raw, uint32_t *skip,
                         int shutr)
{
	*skip = 0;
	switch (c->framing) {
	case CF_CLEN:
		if (!c->left)
			c->in_end = 1;
		return (long)(raw < c->left ? raw : c->left);
	case CF_CLOSE:
		if (!raw && shutr)
			c->in_end = 1;
		return raw;
	case CF_CHUNKED:
		while (*skip < raw && !(c->ck.state == H1_CK_DATA && c->ck.left)) {
			const char *err;
			size_t used;
			int trailer = c->ck.state == H1_CK_TRAILER;
			int r = h1_chunk_scan(&c->ck, p + *skip, 1, &used, &err);

			if (r == -1)
				return -1;
			if (trailer) {
				/* kept for the last chunk, bounded as a head's
				 * rewrite is: beyond, the response is cut */
				if (!c->trl && !(c->trl = malloc(COMP_TRL_MAX)))
					return -1;
				if (c->trl_len >= COMP_TRL_MAX)
					return -1;
				c->trl[c->trl_len++] = p[*skip];
			}
			(*skip)++;
			if (r == 1) {
				c->in_end = 1;
				return 0;
			}
		}
		if (c->ck.state == H1_CK_DATA && c->ck.left)
			return (long)(raw - *skip < c->ck.left ? raw - *skip : c->ck.left);
		return 0;
	}
	return 0;
}

static void comp_consumed(struct comp_ctx *c, uint64_t n)
{
	if (c->framing == CF_CLEN) {
		c->left -= n;
		if (!c->left)
			c->in_end = 1;
	} else if (c->framing == CF_CHUNKED) {
		c->ck.left -= n;
		if (!c->ck.left)
			c->ck.state = H1_CK_DATA_CR;
	}
}

/* Whether the server's socket holds bytes not read yet: the burst is not
 * over and the next read comes at once, so a sync flush now would only
 * cost CPU and output size (it waits for the read that drains it). */
static int comp_srv_pending(const struct stream *s)
{
	int n = 0;

	if (s->srv.fd < 0 || (s->res.flags & CH_F_SHUTR))
		return 0;
	return ioctl(s->srv.fd, FIONREAD, &n) == 0 && n > 0;
}

int comp_res_step(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct comp_ctx *c = txn->comp;
	struct channel *ch = &s->res;
	int moved = 0, full = 0;

	if (!c->out) {
		if (!(c->out = buf_get()))
			return 0;
		c->out->head = c->out->data = 0;
	}
	moved |= comp_push(s, c);
	/* read what arrived while the output has room */
	while (!c->in_end && ch->buf && !full) {
		struct buf *b = ch->buf;
		uint32_t granted = (uint32_t)ch->to_forward, raw = b->data - granted, skip;
		const char *p = b->area + b->head + granted;
		long pl = comp_payload(c, p, raw, &skip, ch->flags & CH_F_SHUTR), n;

		if (pl < 0)
			return -1;
		if (skip) {
			buf_cut(b, granted, skip);
			moved = 1;
		}
		if (pl <= 0)
			break;
		n = comp_deflate(s, c, p, (size_t)pl, Z_NO_FLUSH, &full);
		if (n < 0)
			return -1;
		if (!n && !full)
			break;
		if (n) {
			buf_cut(b, granted, (uint32_t)n);
			comp_consumed(c, (uint64_t)n);
			c->unflushed = 1;
			moved = 1;
		}
		if (full) {
			/* output is pushed when the burst ends (one chunk
			 * for it), or now that it is full */
			moved |= comp_push(s, c);
			full = c->out->data != 0;
		}
	}
	if (c->framing == CF_CLOSE && (ch->flags & CH_F_SHUTR) &&
	    (!ch->buf || ch->buf->data == ch->to_forward))
		c->in_end = 1;
	if (c->in_end && !c->z_end) {
		do {
			if (comp_deflate(s, c, NULL, 0, Z_FINISH, &full) < 0)
				return -1;
			moved |= comp_push(s, c);
		} while (!c->z_end && out_room(c->out));
		c->unflushed = 0;
	} else if (c->unflushed && !c->in_end && !comp_srv_pending(s)) {
		/* the burst is over: what it gave leaves now */
		do {
			if (comp_deflate(s, c, NULL, 0, Z_SYNC_FLUSH, &full) < 0)
				return -1;
			moved |= comp_push(s, c);
		} while (full && out_room(c->out));
		if (!full)
			c->unflushed = 0;
	}
	moved |= comp_push(s, c);
	if (c->z_end)
		comp_zend(c);
	if (c->last_put && txn->res_st == HTTP_MSG_BODY) {
		/* what the server sent after the body stays ungranted: the
		 * connection is not kept then (end of exchange) */
		txn->res_st = HTTP_MSG_DONE;
		s->res.flags |= c->chflags;
		moved = 1;
	}
	return moved;
}

void comp_txn_end(struct stream *s)
{
	struct http_txn *txn = s->txn;
	struct comp_ctx *c = txn->comp;

	if (txn->comp_byp) {
		uint64_t n = s->res.total - txn->comp_byp_mark;

		s->fe->fe_counters.comp_byp += n;
		if (s->be)
			s->be->be_counters.comp_byp += n;
		txn->comp_byp = 0;
	}
	if (!c)
		return;
	comp_zend(c);
	buf_put(c->out);
	free(c->trl);
	pool_free(ctx_pool, c);
	txn->comp = NULL;
}

/* ---- keywords ---- */

static struct comp_px *comp_px_w(struct proxy *px)
{
	if (!px->comp)
		px->comp = xcalloc(1, sizeof(*px->comp));
	return px->comp;
}

static void comp_px_release(struct proxy *px)
{
	struct comp_px *p = px->comp;

	if (!p)
		return;
	for (int i = 0; i < p->ntypes; i++)
		free(p->types[i]);
	free(p->types);
	free(p);
	px->comp = NULL;
}

static void comp_px_inherit(struct proxy *px, const struct proxy *def)
{
	const struct comp_px *d = def->comp;
	struct comp_px *p;

	if (!d)
		return;
	p = comp_px_w(px);
	memcpy(p->algos, d->algos, sizeof(p->algos));
	p->nalgos = d->nalgos;
	p->offload = d->offload;
	if (d->ntypes) {
		p->types = xcalloc((size_t)d->ntypes, sizeof(char *));
		for (int i = 0; i < d->ntypes; i++)
			p->types[i] = xstrdup(d->types[i]);
		p->ntypes = d->ntypes;
	}
}

static struct proxy_ext comp_px_ext = {
	.inherit = comp_px_inherit,
	.release = comp_px_release,
};

/* compression algo <algo>... | type <mime>... | offload */
static int kw_compression(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct comp_px *p;

	if (argc < 1) {
		cfg_alert(ctx, "expects 'algo', 'type' or 'offload'");
		return -1;
	}
#ifndef USE_ZLIB
	cfg_alert(ctx, "HTTP compression is not built in (USE_ZLIB=0)");
	return -1;
#endif
	p = comp_px_w(ctx->px);
	if (strcmp(argv[0], "algo") == 0) {
		if (argc < 2) {
			cfg_alert(ctx, "'algo' expects at least one algorithm");
			return -1;
		}
		p->nalgos = 0;
		for (int i = 1; i < argc; i++) {
			int a;

			for (a = 0; a < COMP_A_NB; a++)
				if (strcmp(argv[i], algo_names[a]) == 0)
					break;
			if (a == COMP_A_NB) {
				cfg_alert(ctx, "'%s' is not a supported algorithm (identity, gzip, "
					  "deflate, raw-deflate)", argv[i]);
				return -1;
			}
			for (int k = 0; k < p->nalgos; k++)
				if (p->algos[k] == a)
					goto dup;
			p->algos[p->nalgos++] = (unsigned char)a;
dup:;
		}
		return 0;
	}
	if (strcmp(argv[0], "type") == 0) {
		if (argc < 2) {
			cfg_alert(ctx, "'type' expects at least one MIME type");
			return -1;
		}
		for (int i = 0; i < p->ntypes; i++)
			free(p->types[i]);
		free(p->types);
		p->types = xcalloc((size_t)argc - 1, sizeof(char *));
		p->ntypes = 0;
		for (int i = 1; i < argc; i++)
			p->types[p->ntypes++] = xstrdup(argv[i]);
		return 0;
	}
	if (strcmp(argv[0], "offload") == 0) {
		if (argc > 1) {
			cfg_alert(ctx, "'offload' takes no argument");
			return -1;
		}
		p->offload = 1;
		return 0;
	}
	cfg_alert(ctx, "expects 'algo', 'type' or 'offload', not '%s'", argv[0]);
	return -1;
}

/* filter compression: what the compression lines say applies; its place
 * among filters does not arise (see doc/configuration.md). */
static int filter_compression(struct cfg_ctx *ctx, int argc, char **argv)
{
	if (argc) {
		cfg_alert(ctx, "'filter compression' takes no argument");
		return -1;
	}
	return 0;
}

static struct http_filter_kw comp_filters[] = {
	{ "compression", filter_compression, NULL },
};

static void *comp_global_cfg(struct cfg_ctx *ctx)
{
	return &cg;
}

static struct cfg_kw comp_kws[] = {
	{ "compression", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_compression,
	  .usage = "algo <algo>... | type <mime>... | offload" },
	{ "maxcomprate", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct comp_global, rate_limit),
	  .min = 0, .max = 0x7fffffff, .usage = "kB/s", .base = comp_global_cfg },
	{ "maxcompcpuusage", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct comp_global, cpu_limit),
	  .min = 0, .max = 100, .usage = "a percentage", .base = comp_global_cfg },
	{ "maxzlibmem", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct comp_global, zlib_max_mb),
	  .min = 0, .max = 1 << 20, .usage = "MB", .base = comp_global_cfg },
	{ "tune.comp.maxlevel", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct comp_global, maxlevel),
	  .min = 1, .max = 9, .usage = "a level from 1 to 9", .base = comp_global_cfg },
};

/* Compression needs mode http: warn about a proxy in mode tcp using it. */
static int comp_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		if (px->comp && px->comp->nalgos && px->mode != PR_MODE_HTTP)
			log_warning("%s:%d: proxy '%s': 'compression' ignored: it needs 'mode http'",
				    px->conf_file, px->conf_line, px->name);
	return 0;
}

/* ---- sample fetches ---- */

static int fetch_res_comp(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	if (!s || !s->txn)
		return 0;
	smp->type = SMP_T_BOOL;
	smp->u.sint = s->txn->comp != NULL;
	return 1;
}

static int fetch_res_comp_algo(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	const char *n;

	if (!s || !s->txn || !s->txn->comp)
		return 0;
	n = algo_names[s->txn->comp->algo];
	smp->type = SMP_T_STR;
	smp->u.str.p = n;
	smp->u.str.len = strlen(n);
	return 1;
}

static const struct smp_fetch_kw comp_fetches[] = {
	{ "res.comp", fetch_res_comp, { 0 }, 0, SMP_T_BOOL, SMP_USE_L7RES, NULL, NULL },
	{ "res.comp_algo", fetch_res_comp_algo, { 0 }, 0, SMP_T_STR, SMP_USE_L7RES, NULL, NULL },
};

SLUICE_INIT(comp_register)
{
	cfg_register(comp_kws, ARRAY_SIZE(comp_kws));
	http_filter_register(comp_filters, ARRAY_SIZE(comp_filters));
	cfg_register_postparse(comp_postparse, 40);
	proxy_register_ext(&comp_px_ext);
	smp_register_fetches(comp_fetches, ARRAY_SIZE(comp_fetches));
}
