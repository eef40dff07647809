/* HTTP sample fetches (sample.h): the request and response heads that the
 * analyser publishes in the transaction (txn->req_head / res_head) while
 * their rules run: method, path, query, url, headers, cookies, status. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/buf.h>
#include <sluice/channel.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/lb.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>

static const struct http_head *req_head(const struct stream *s)
{
	return s && s->txn ? s->txn->req_head : NULL;
}

static const struct http_head *res_head(const struct stream *s)
{
	return s && s->txn ? s->txn->res_head : NULL;
}

static int smp_set_mem(struct sample *smp, const char *p, size_t len)
{
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = p;
	smp->u.str.len = len;
	return 1;
}

/* ---- the request line ---- */

/* The path of <uri> (origin or absolute form), up to '?' when <with_query>
 * is 0. Returns 0 when there is none ("*", authority form). */
static int uri_path(const char *u, size_t ul, int with_query, const char **p, size_t *pl)
{
	const char *end = u + ul, *q;

	if (ul && u[0] != '/') {
		const char *sch = memmem(u, ul, "://", 3);

		if (!sch)
			return 0;
		u = memchr(sch + 3, '/', (size_t)(end - sch - 3));
		if (!u)
			return 0;
	}
	if (u >= end)
		return 0;
	q = with_query ? NULL : memchr(u, '?', (size_t)(end - u));
	*p = u;
	*pl = (size_t)((q ? q : end) - u);
	return 1;
}

static int fetch_method(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	const struct http_head *h = req_head(s);

	return h ? smp_set_mem(smp, h->sl[HTTP_SL_METH].p, h->sl[HTTP_SL_METH].len) : 0;
}

static int fetch_url(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	const struct http_head *h = req_head(s);

	return h ? smp_set_mem(smp, h->sl[HTTP_SL_URI].p, h->sl[HTTP_SL_URI].len) : 0;
}

static int fetch_path_any(struct sample *smp, struct stream *s, int with_query)
{
	const struct http_head *h = req_head(s);
	const char *p;
	size_t l;

	if (!h || !uri_path(h->sl[HTTP_SL_URI].p, h->sl[HTTP_SL_URI].len, with_query, &p, &l))
		return 0;
	return smp_set_mem(smp, p, l);
}

static int fetch_path(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	return fetch_path_any(smp, s, 0);
}

static int fetch_pathq(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	return fetch_path_any(smp, s, 1);
}

static int fetch_query(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	const struct http_head *h = req_head(s);
	const char *q;

	if (!h)
		return 0;
	q = memchr(h->sl[HTTP_SL_URI].p, '?', h->sl[HTTP_SL_URI].len);
	if (!q)
		return 0;
	q++;
	return smp_set_mem(smp, q, (size_t)(h->sl[HTTP_SL_URI].p + h->sl[HTTP_SL_URI].len - q));
}

/* The version of start-line element <i> of <h> without "HTTP/". */
static int ver_of(const struct http_head *h, int i, struct sample *smp)
{
	const struct http_str *v = h ? &h->sl[i] : NULL;

	if (v && v->len > 5 && memcmp(v->p, "HTTP/", 5) == 0)
		return smp_set_mem(smp, v->p + 5, v->len - 5);
	return 0;
}

static int fetch_ver(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	/* an HTTP/2 stream: its request reads as HTTP/1.1 to the analysers */
	if (s->tcp_flags & STRM_F_MUX)
		return req_head(s) ? smp_set_str(smp, "2.0") : 0;
	return ver_of(req_head(s), HTTP_SL_RQVER, smp);
}

/* fc_http_major, bc_http_major: the HTTP major version spoken with the
 * client, with the server (1 or 2: HTTP/2 is a multiplexed endpoint). */
static int fetch_fc_http_major(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	return smp_set_int(smp, (s->tcp_flags & STRM_F_MUX) ? 2 : 1);
}

static int fetch_bc_http_major(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	return s->srv.fd >= 0 ? smp_set_int(smp, (s->srv.flags & CO_F_MUX) ? 2 : 1) : 0;
}

/* The value of the first <name>=value of the parameters in p[0..end),
 * separated by any of <delim>; a parameter without '=' has an empty value. */
static int param_find(const char *p, const char *end, const char *delim,
                      const struct smp_arg *name, struct sample *smp)
{
	while (p < end) {
		const char *e = p;

		while (e < end && !strchr(delim, *e))
			e++;
		if ((size_t)(e - p) >= name->len && memcmp(p, name->str, name->len) == 0 &&
		    (p + name->len == e || p[name->len] == '=')) {
			const char *v = p + name->len + (p + name->len < e);

			return smp_set_mem(smp, v, (size_t)(e - v));
		}
		p = e + 1;
	}
	return 0;
}

/* url_param(name[,delim]): the value of the first <name>=value of the query
 * string, parameters separated by '&' or the <delim> characters. */
static int fetch_url_param(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	const struct http_head *h = req_head(s);
	const char *delim = a[1].str && a[1].len ? a[1].str : "&";
	const char *p;

	if (!h)
		return 0;
	p = memchr(h->sl[HTTP_SL_URI].p, '?', h->sl[HTTP_SL_URI].len);
	return p && param_find(p + 1, h->sl[HTTP_SL_URI].p + h->sl[HTTP_SL_URI].len, delim, &a[0],
			       smp);
}

/* ---- the bodies (option http-buffer-request, wait-for-body) ---- */

/* The body bytes of the request (<res> NULL) or response under analysis
 * that are in the buffer: those after the head, at most Content-Length.
 * NULL when there is no such head being analysed. */
static const char *req_body_raw(const struct stream *s, size_t *len, const void *res)
{
	const struct http_txn *txn = s && s->txn ? s->txn : NULL;
	const struct buf *b = s ? (res ? s->res.buf : s->req.buf) : NULL;
	const struct h1_msg *m = txn ? (res ? &txn->res : &txn->req) : NULL;

	if (!txn || !(res ? txn->res_head : txn->req_head) || !b || b->data < m->head_len)
		return NULL;
	*len = b->data - m->head_len;
	if ((m->flags & H1_F_CLEN) && !(m->flags & H1_F_CHUNKED) && *len > m->clen)
		*len = m->clen;
	if (m->flags & H1_F_NO_BODY)
		*len = 0;
	return b->area + b->head + m->head_len;
}

/* Copies the data of the complete chunks of p[0..len) into <out> (at most
 * <size> bytes). Returns the payload length; <*done> is set when the last
 * chunk was seen. Malformed framing stops the copy. */
static size_t dechunk(const char *p, size_t len, char *out, size_t size, int *done)
{
	size_t o = 0, i = 0;

	*done = 0;
	while (i < len) {
		uint64_t sz = 0;
		int digits = 0;
		const char *lf;

		while (i < len && isxdigit((unsigned char)p[i]) && digits < 16) {
			sz = sz * 16 + (uint64_t)(isdigit((unsigned char)p[i]) ? p[i] - '0' :
						  (tolower((unsigned char)p[i]) - 'a' + 10));
			i++;
			digits++;
		}
		lf = digits ? memchr(p + i, '\n', len - i) : NULL;
		if (!lf)
			break;
		i = (size_t)(lf - p) + 1;
		if (!sz) {
			*done = 1;
			break;
		}
		if (sz > len - i)
			sz = len - i;   /* a chunk cut by the end of the buffer: its start */
		sz = MIN(sz, size - o);
		memcpy(out + o, p + i, sz);
		o += sz;
		i += sz;
		if (i + 2 > len || p[i] != '\r' || p[i + 1] != '\n')
			break;
		i += 2;
	}
	return o;
}

/* The body as the rules see it: chunked framing removed (into the scratch
 * area). <res>: the response's (a fetch's priv). */
static const char *req_body(const struct stream *s, size_t *len, const void *res)
{
	const char *p = req_body_raw(s, len, res);
	char *out;
	int done;

	if (!p || !((res ? s->txn->res.flags : s->txn->req.flags) & H1_F_CHUNKED))
		return p;
	out = smp_scratch_get();
	*len = dechunk(p, *len, out, SMP_SCRATCH_SIZE, &done);
	return out;
}

static int fetch_req_body(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	size_t len;
	const char *p = req_body(s, &len, priv);

	if (!p)
		return 0;
	smp->type = SMP_T_BIN;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = p;
	smp->u.str.len = len;
	return 1;
}

/* req.body_len: the body bytes buffered; req.body_size: the announced
 * Content-Length, or what a chunked body holds so far (res.*: the
 * response's). */
static int fetch_req_body_len(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	size_t len;

	if (!req_body(s, &len, priv))
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = (int64_t)len;
	return 1;
}

static int fetch_req_body_size(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	const struct h1_msg *m;

	if (!fetch_req_body_len(a, smp, s, priv))
		return 0;
	m = priv ? &s->txn->res : &s->txn->req;
	if ((m->flags & H1_F_CLEN) && !(m->flags & H1_F_CHUNKED))
		smp->u.sint = (int64_t)m->clen;
	return 1;
}

/* req.body_param([name]): a parameter of an url-encoded body ('&'
 * separated); without a name, the whole body. */
static int fetch_req_body_param(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	size_t len;
	const char *p = req_body(s, &len, NULL);

	if (!p)
		return 0;
	if (a[0].type != ARGT_STR || !a[0].len)
		return smp_set_mem(smp, p, len);
	return param_find(p, p + len, "&", &a[0], smp);
}

/* ---- header fields ---- */

/* Walks the values of the fields named <name> (every field when <nlen> is
 * 0), split at commas when <split>. Stores occurrence <occ> (1-based; 0:
 * none) in <out> and returns the total number of occurrences. */
static int hdr_walk(const struct http_head *h, const char *name, size_t nlen, int split,
                    int occ, struct http_str *out)
{
	int n = 0;

	for (int i = 0; i < h->nf; i++) {
		const struct http_field *f = &h->f[i];
		const char *p = f->v.p, *end = f->v.p + f->v.len;

		if (nlen && (f->n.len != nlen || strncasecmp(f->n.p, name, nlen) != 0))
			continue;
		for (;;) {
			const char *e = split ? memchr(p, ',', (size_t)(end - p)) : NULL;
			const char *vs = p, *ve = e ? e : end;

			while (vs < ve && (*vs == ' ' || *vs == '\t'))
				vs++;
			while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (++n == occ)
				*out = (struct http_str){ vs, (uint32_t)(ve - vs) };
			if (!e)
				break;
			p = e + 1;
		}
	}
	return n;
}

/* One occurrence of header <a[0]> of <h>: <a[1]> when given (negative: from
 * the end), else every one in turn when iterating, else the last. */
static int fetch_hdr_occ(const struct http_head *h, const struct smp_arg *a,
                         struct sample *smp, int split)
{
	const char *name = a[0].str ? a[0].str : "";
	size_t nlen = a[0].str ? a[0].len : 0;
	struct http_str v;
	int occ = a[1].type == ARGT_SINT ? (int)a[1].sint : 0, total;

	if (!h)
		return 0;
	if (!occ && smp->iterate) {
		occ = ++smp->ctx;
		total = hdr_walk(h, name, nlen, split, occ, &v);
		if (occ > total)
			return 0;
		if (occ < total)
			smp->flags |= SMP_F_NOT_LAST;
		return smp_set_mem(smp, v.p, v.len);
	}
	if (occ <= 0) {
		total = hdr_walk(h, name, nlen, split, 0, &v);
		occ = total + occ + (occ == 0 ? 0 : 1);
		if (occ <= 0)
			return 0;
	}
	if (hdr_walk(h, name, nlen, split, occ, &v) < occ)
		return 0;
	return smp_set_mem(smp, v.p, v.len);
}

static int fetch_hdr(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	return fetch_hdr_occ(req_head(s), a, smp, 1);
}

static int fetch_fhdr(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	return fetch_hdr_occ(req_head(s), a, smp, 0);
}

static int fetch_res_hdr(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	return fetch_hdr_occ(res_head(s), a, smp, 1);
}

static int fetch_res_fhdr(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return fetch_hdr_occ(res_head(s), a, smp, 0);
}

static int fetch_cnt(const struct http_head *h, const struct smp_arg *a, struct sample *smp,
                     int split)
{
	struct http_str v;

	if (!h)
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = hdr_walk(h, a[0].str ? a[0].str : "", a[0].str ? a[0].len : 0, split, 0, &v);
	return 1;
}

static int fetch_hdr_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	return fetch_cnt(req_head(s), a, smp, 1);
}

static int fetch_fhdr_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return fetch_cnt(req_head(s), a, smp, 0);
}

static int fetch_res_hdr_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
			     const void *priv)
{
	return fetch_cnt(res_head(s), a, smp, 1);
}

static int fetch_hdr_val(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	if (!fetch_hdr(a, smp, s, NULL))
		return 0;
	return smp_cast(smp, SMP_T_SINT);
}

static int fetch_res_hdr_val(const struct smp_arg *a, struct sample *smp, struct stream *s,
			     const void *priv)
{
	if (!fetch_res_hdr(a, smp, s, NULL))
		return 0;
	return smp_cast(smp, SMP_T_SINT);
}

static int fetch_hdr_ip(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	if (!fetch_hdr(a, smp, s, NULL))
		return 0;
	return smp_parse_ip(smp->u.str.p, smp->u.str.len, smp);
}

static int fetch_res_hdr_ip(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	if (!fetch_res_hdr(a, smp, s, NULL))
		return 0;
	return smp_parse_ip(smp->u.str.p, smp->u.str.len, smp);
}

/* req.hdrs, res.hdrs: the header block of <h> as sent, with the final empty
 * line. */
static int hdrs_text(const struct http_head *h, struct sample *smp)
{
	char *out = smp_scratch_get();
	size_t n = 0;

	if (!h)
		return 0;
	for (int i = 0; i < h->nf; i++) {
		const struct http_field *f = &h->f[i];

		if (n + f->n.len + f->v.len + 4 > SMP_SCRATCH_SIZE - 2)
			return 0;
		memcpy(out + n, f->n.p, f->n.len);
		n += f->n.len;
		out[n++] = ':';
		out[n++] = ' ';
		memcpy(out + n, f->v.p, f->v.len);
		n += f->v.len;
		out[n++] = '\r';
		out[n++] = '\n';
	}
	out[n++] = '\r';
	out[n++] = '\n';
	smp->type = SMP_T_STR;
	smp->u.str.p = out;
	smp->u.str.len = n;
	return 1;
}

static int fetch_hdrs(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	return hdrs_text(req_head(s), smp);
}

static int fetch_res_hdrs(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return hdrs_text(res_head(s), smp);
}

/* Appends <len> SPOE-style: the length as a variable integer (one byte
 * below 240; else the low 4 bits marked by 0xf0, then 7 bits a byte, high
 * bit set but on the last), then the bytes. Returns 1, or 0 when it does
 * not fit. */
static int spoe_put_str(char *out, size_t *o, const char *p, size_t len, int lower)
{
	unsigned char v[10];
	size_t n = 0, l = len;

	if (l < 240) {
		v[n++] = (unsigned char)l;
	} else {
		v[n++] = (unsigned char)(l | 0xf0);
		for (l = (l - 240) >> 4; l >= 128; l = (l - 128) >> 7)
			v[n++] = (unsigned char)(l | 0x80);
		v[n++] = (unsigned char)l;
	}
	if (n + len > SMP_SCRATCH_SIZE - *o)
		return 0;
	memcpy(out + *o, v, n);
	for (size_t i = 0; i < len; i++)
		out[*o + n + i] = lower ? (char)tolower((unsigned char)p[i]) : p[i];
	*o += n + len;
	return 1;
}

/* req.hdrs_bin, res.hdrs_bin: every field of <h> as two SPOE strings, the
 * name in lower case (as HAProxy's, whose messages hold them so) and the
 * value, then two empty strings. */
static int hdrs_bin(const struct http_head *h, struct sample *smp)
{
	char *out = smp_scratch_get();
	size_t n = 0;

	if (!h)
		return 0;
	for (int i = 0; i < h->nf; i++)
		if (!spoe_put_str(out, &n, h->f[i].n.p, h->f[i].n.len, 1) ||
		    !spoe_put_str(out, &n, h->f[i].v.p, h->f[i].v.len, 0))
			return 0;
	if (n + 2 > SMP_SCRATCH_SIZE)
		return 0;
	out[n++] = 0;
	out[n++] = 0;
	smp->type = SMP_T_BIN;
	smp->u.str.p = out;
	smp->u.str.len = n;
	return 1;
}

static int fetch_hdrs_bin(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return hdrs_bin(req_head(s), smp);
}

static int fetch_res_hdrs_bin(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	return hdrs_bin(res_head(s), smp);
}

/* The Host header followed by the path, with its query string when <query>
 * (base, baseq). */
static int host_and_path(struct sample *smp, struct stream *s, int query)
{
	const struct http_head *h = req_head(s);
	char *out;
	const char *p;
	size_t pl, n = 0;
	int i;

	if (!h || !uri_path(h->sl[HTTP_SL_URI].p, h->sl[HTTP_SL_URI].len, query, &p, &pl))
		return 0;
	out = smp_scratch_get();
	i = http_head_find(h, "host", 4, 0);
	if (i >= 0) {
		n = MIN(h->f[i].v.len, SMP_SCRATCH_SIZE / 2);
		memcpy(out, h->f[i].v.p, n);
	}
	pl = MIN(pl, SMP_SCRATCH_SIZE - n);
	memcpy(out + n, p, pl);
	smp->type = SMP_T_STR;
	smp->u.str.p = out;
	smp->u.str.len = n + pl;
	return 1;
}

/* base: the Host header followed by the path (no query string). */
static int fetch_base(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	return host_and_path(smp, s, 0);
}

/* ---- cookies ---- */

/* Walks the cookies named <name> (NULL: any) in the <hname> fields of <h>:
 * in "Cookie" fields every "n=v" separated by ';', in "Set-Cookie" only the
 * first one of each field. Stores occurrence <occ> in <out>; returns the
 * total. */
static int cook_walk(const struct http_head *h, const char *hname, int set, const char *name,
                     size_t nlen, int occ, struct http_str *out)
{
	size_t hl = strlen(hname);
	int n = 0;

	for (int i = http_head_find(h, hname, hl, 0); i >= 0; i = http_head_find(h, hname, hl, i + 1)) {
		const char *p = h->f[i].v.p, *end = p + h->f[i].v.len;

		while (p < end) {
			const char *e = memchr(p, ';', (size_t)(end - p)), *eq;
			const char *ce = e ? e : end;

			while (p < ce && (*p == ' ' || *p == '\t'))
				p++;
			eq = memchr(p, '=', (size_t)(ce - p));
			if (eq) {
				const char *ne = eq;

				while (ne > p && (ne[-1] == ' ' || ne[-1] == '\t'))
					ne--;
				if ((!name || ((size_t)(ne - p) == nlen &&
				               memcmp(p, name, nlen) == 0)) && ++n == occ) {
					const char *vs = eq + 1, *ve = ce;

					while (vs < ve && (*vs == ' ' || *vs == '\t'))
						vs++;
					while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
						ve--;
					*out = (struct http_str){ vs, (uint32_t)(ve - vs) };
				}
			}
			if (set || !e)
				break;
			p = e + 1;
		}
	}
	return n;
}

static int fetch_cook_any(const struct http_head *h, const char *hname, int set,
                          const struct smp_arg *a, struct sample *smp)
{
	struct http_str v;
	int total, occ;

	if (!h)
		return 0;
	if (smp->iterate) {
		occ = ++smp->ctx;
		total = cook_walk(h, hname, set, a[0].str, a[0].len, occ, &v);
		if (occ > total)
			return 0;
		if (occ < total)
			smp->flags |= SMP_F_NOT_LAST;
		return smp_set_mem(smp, v.p, v.len);
	}
	total = cook_walk(h, hname, set, a[0].str, a[0].len, 0, &v);
	if (!total)
		return 0;
	cook_walk(h, hname, set, a[0].str, a[0].len, total, &v);
	return smp_set_mem(smp, v.p, v.len);
}

static int fetch_cook(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	return fetch_cook_any(req_head(s), "cookie", 0, a, smp);
}

static int fetch_res_cook(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return fetch_cook_any(res_head(s), "set-cookie", 1, a, smp);
}

/* cookie([<name>]) (deprecated in HAProxy 2.6): the response's Set-Cookie
 * once a response is under analysis, else the request's Cookie (as HAProxy
 * takes the direction of the rule set); the last cookie of that name, or
 * without a name the first cookie. */
static int fetch_cookie(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	const struct http_head *h = res_head(s);
	const char *hname = "set-cookie";
	struct http_str v;
	int set = 1;

	if (!h) {
		h = req_head(s);
		hname = "cookie";
		set = 0;
	}
	if (!h)
		return 0;
	if (a[0].str && a[0].len)
		return fetch_cook_any(h, hname, set, a, smp);
	if (!cook_walk(h, hname, set, NULL, 0, 1, &v))
		return 0;
	return smp_set_mem(smp, v.p, v.len);
}

/* The number of cookies named a[0] in the <hname> fields of <h>. */
static int cook_cnt(const struct http_head *h, const char *hname, int set,
                    const struct smp_arg *a, struct sample *smp)
{
	struct http_str v;

	if (!h)
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = cook_walk(h, hname, set, a[0].str, a[0].len, 0, &v);
	return 1;
}

static int fetch_cook_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return cook_cnt(req_head(s), "cookie", 0, a, smp);
}

/* ---- the response ---- */

static int fetch_status(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	const struct http_head *h = res_head(s);
	int64_t v = 0;

	if (h) {
		const struct http_str *st = &h->sl[HTTP_SL_STATUS];

		for (uint32_t i = 0; i < st->len && isdigit((unsigned char)st->p[i]); i++)
			v = v * 10 + (st->p[i] - '0');
	} else if (s && s->txn && s->txn->status > 0)
		v = s->txn->status;
	else
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = v;
	return 1;
}

/* req.cook_val(name), res.cook_val(name), urlp_val(name): the value as
 * an integer (its leading digits). */
static int cook_val(int ret, struct sample *smp)
{
	if (!ret || !smp_cast(smp, SMP_T_SINT))
		return 0;
	return 1;
}

static int fetch_cook_val(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return cook_val(fetch_cook(a, smp, s, NULL), smp);
}

static int fetch_urlp_val(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return cook_val(fetch_url_param(a, smp, s, NULL), smp);
}

static int fetch_res_cook_val(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	return cook_val(fetch_res_cook(a, smp, s, NULL), smp);
}

static int fetch_res_cook_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	return cook_cnt(res_head(s), "set-cookie", 1, a, smp);
}

static int fetch_res_ver(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	return ver_of(res_head(s), HTTP_SL_RSVER, smp);
}

/* ---- derived from the URL ---- */

/* base32: the SDBM hash of "base" with the full avalanche, 32 bits. */
static int fetch_base32(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	if (!fetch_base(a, smp, s, NULL))
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = (uint32_t)lb_hash(LB_H_SDBM, 1, smp->u.str.p, smp->u.str.len);
	return 1;
}

/* Integer hash <smp> becomes, as binary, the hash in network order followed
 * by the client address (4 or 16 bytes): one key per URL and client.
 * Returns 1, or 0 for a client without an IP address. */
static int hash_plus_src(struct sample *smp, const struct stream *s)
{
	uint32_t h = htonl((uint32_t)smp->u.sint);
	char *out = smp_scratch_get();
	size_t n = 4;

	memcpy(out, &h, 4);
	if (s->cli_addr.ss_family == AF_INET) {
		memcpy(out + n, &((const struct sockaddr_in *)&s->cli_addr)->sin_addr, 4);
		n += 4;
	} else if (s->cli_addr.ss_family == AF_INET6) {
		memcpy(out + n, &((const struct sockaddr_in6 *)&s->cli_addr)->sin6_addr, 16);
		n += 16;
	} else {
		return 0;
	}
	smp->type = SMP_T_BIN;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = out;
	smp->u.str.len = n;
	return 1;
}

/* base32+src: base32 in network order followed by the client address. */
static int fetch_base32_src(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	return fetch_base32(a, smp, s, NULL) && hash_plus_src(smp, s);
}

/* The host and port of an absolute URI ("http://1.2.3.4:81/x"): <*host>
 * and its length, the port (0 when absent). Returns 0 for other forms. */
static int url_authority(const struct http_head *h, const char **host, size_t *hl, int *port)
{
	const char *u = h->sl[HTTP_SL_URI].p, *end = u + h->sl[HTTP_SL_URI].len, *a, *e, *c;

	a = memmem(u, (size_t)(end - u), "://", 3);
	if (!h->sl[HTTP_SL_URI].len || u[0] == '/' || !a)
		return 0;
	a += 3;
	for (e = a; e < end && *e != '/' && *e != '?'; e++)
		;
	c = *a == '[' ? memchr(a, ']', (size_t)(e - a)) : a;
	c = c ? memchr(c, ':', (size_t)(e - c)) : NULL;
	*port = 0;
	if (c)
		for (const char *d = c + 1; d < e && isdigit((unsigned char)*d); d++)
			*port = *port * 10 + (*d - '0');
	*host = a + (*a == '[');
	*hl = (size_t)((c ? c : e) - a) - (*a == '[') * 2;
	return 1;
}

static int fetch_url_ip(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	const struct http_head *h = req_head(s);
	const char *host;
	size_t hl;
	int port;

	return h && url_authority(h, &host, &hl, &port) && smp_parse_ip(host, hl, smp);
}

static int fetch_url_port(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	const struct http_head *h = req_head(s);
	const char *host;
	size_t hl;
	int port;

	if (!h || !url_authority(h, &host, &hl, &port))
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = port ? port : 80;
	return 1;
}

/* ---- the transaction ---- */

/* capture.req.hdr(<idx>), capture.res.hdr(<idx>): what "capture request
 * header" line <idx> (0 for the first) captured. */
static int capture_hdr(const struct smp_arg *a, struct sample *smp, struct stream *s, int req)
{
	const struct http_px *hp;
	char **cap;
	int n;

	if (!s || !s->txn)
		return 0;
	hp = http_px_of(s->fe);
	cap = req ? s->txn->req_cap : s->txn->res_cap;
	n = req ? hp->n_req_cap : hp->n_res_cap;
	if (!cap || a[0].sint < 0 || a[0].sint >= n || !cap[a[0].sint])
		return 0;
	return smp_set_mem(smp, cap[a[0].sint], strlen(cap[a[0].sint]));
}

static int fetch_capture_req_hdr(const struct smp_arg *a, struct sample *smp, struct stream *s,
				 const void *priv)
{
	return capture_hdr(a, smp, s, 1);
}

static int fetch_capture_res_hdr(const struct smp_arg *a, struct sample *smp, struct stream *s,
				 const void *priv)
{
	return capture_hdr(a, smp, s, 0);
}

static int fetch_unique_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	const char *id = s && s->txn ? http_unique_id(s) : NULL;

	return id ? smp_set_mem(smp, id, strlen(id)) : 0;
}

/* http_first_req: true for the first request of a client connection. */
static int fetch_http_first_req(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	if (!s || !s->txn)
		return 0;
	smp->type = SMP_T_BOOL;
	smp->u.sint = s->nreq <= 1;
	return 1;
}

/* ---- request and response captures, header names, bearer token ---- */

/* baseq: the Host header followed by the path with its query string. */
static int fetch_baseq(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	return host_and_path(smp, s, 1);
}

/* url32: the SDBM hash (full avalanche) of the first Host header followed
 * by the whole URI as the request line gives it. */
static int fetch_url32(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	const struct http_head *h = req_head(s);
	char *out;
	size_t ul, n = 0;
	int i;

	if (!h)
		return 0;
	out = smp_scratch_get();
	i = http_head_find(h, "host", 4, 0);
	if (i >= 0) {
		n = MIN(h->f[i].v.len, SMP_SCRATCH_SIZE / 2);
		memcpy(out, h->f[i].v.p, n);
	}
	ul = MIN(h->sl[HTTP_SL_URI].len, SMP_SCRATCH_SIZE - n);
	memcpy(out + n, h->sl[HTTP_SL_URI].p, ul);
	smp->type = SMP_T_SINT;
	smp->u.sint = (uint32_t)lb_hash(LB_H_SDBM, 1, out, n + ul);
	return 1;
}

/* url32+src: url32 in network order followed by the client address. */
static int fetch_url32_src(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	return fetch_url32(a, smp, s, NULL) && hash_plus_src(smp, s);
}

/* capture.req.ver, capture.res.ver: the version with its "HTTP/" prefix
 * ("HTTP/2.0" for an HTTP/2 stream's request). */
static int fetch_capture_req_ver(const struct smp_arg *a, struct sample *smp,
				 struct stream *s, const void *priv)
{
	const struct http_head *h = req_head(s);

	if (!h)
		return 0;
	if (s->tcp_flags & STRM_F_MUX)
		return smp_set_str(smp, "HTTP/2.0");
	if (h->sl[HTTP_SL_RQVER].len <= 5)
		return 0;
	return smp_set_mem(smp, h->sl[HTTP_SL_RQVER].p, h->sl[HTTP_SL_RQVER].len);
}

static int fetch_capture_res_ver(const struct smp_arg *a, struct sample *smp,
				 struct stream *s, const void *priv)
{
	const struct http_head *h = res_head(s);

	if (!h || h->sl[HTTP_SL_RSVER].len <= 5)
		return 0;
	return smp_set_mem(smp, h->sl[HTTP_SL_RSVER].p, h->sl[HTTP_SL_RSVER].len);
}

/* req.hdr_names, res.hdr_names([delim]): the field names in order,
 * separated by the first character of <delim> (a comma by default). */
static int hdr_names(const struct http_head *h, const struct smp_arg *a, struct sample *smp)
{
	char delim = a[0].str && a[0].len ? a[0].str[0] : ',';
	char *out;
	size_t n = 0;

	if (!h)
		return 0;
	out = smp_scratch_get();
	for (int i = 0; i < h->nf; i++) {
		const struct http_field *f = &h->f[i];

		if (n + f->n.len + 1 > SMP_SCRATCH_SIZE)
			return 0;
		if (i)
			out[n++] = delim;
		memcpy(out + n, f->n.p, f->n.len);
		n += f->n.len;
	}
	smp->type = SMP_T_STR;
	smp->u.str.p = out;
	smp->u.str.len = n;
	return 1;
}

static int fetch_req_hdr_names(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	return hdr_names(req_head(s), a, smp);
}

static int fetch_res_hdr_names(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	return hdr_names(res_head(s), a, smp);
}

static int fetch_res_fhdr_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	return fetch_cnt(res_head(s), a, smp, 0);
}

/* http_auth_bearer([header]): the token of the first Authorization field
 * (or of <header>) using the Bearer scheme, unchecked; no value for
 * another scheme or without the field. */
static int fetch_http_auth_bearer(const struct smp_arg *a, struct sample *smp,
				  struct stream *s, const void *priv)
{
	const struct http_head *h = req_head(s);
	const char *name = a[0].str && a[0].len ? a[0].str : "authorization";
	const char *p, *end;
	int i;

	if (!h || (i = http_head_find(h, name, strlen(name), 0)) < 0)
		return 0;
	p = h->f[i].v.p;
	end = p + h->f[i].v.len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p < 7 || strncasecmp(p, "Bearer", 6) != 0 || (p[6] != ' ' && p[6] != '\t'))
		return 0;
	p += 7;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return smp_set_mem(smp, p, (size_t)(end - p));
}

#define RQ SMP_USE_L7REQ
#define RS SMP_USE_L7RES

static const struct smp_fetch_kw smp_http_fetches[] = {
	{ "method",        fetch_method,      { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "path",          fetch_path,        { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "pathq",         fetch_pathq,       { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "query",         fetch_query,       { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "url",           fetch_url,         { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "req.uri",       fetch_url,         { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "url_param",     fetch_url_param,   { ARGT_STR, ARGT_STR }, 1, SMP_T_STR, RQ, NULL,
	  NULL },
	{ "urlp",          fetch_url_param,   { ARGT_STR, ARGT_STR }, 1, SMP_T_STR, RQ, NULL,
	  NULL },
	{ "base",          fetch_base,        { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "req.ver",       fetch_ver,         { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "fc_http_major", fetch_fc_http_major, { 0 }, 0, SMP_T_SINT, SMP_USE_L4, NULL, NULL },
	{ "bc_http_major", fetch_bc_http_major, { 0 }, 0, SMP_T_SINT, SMP_USE_L4, NULL, NULL },
	{ "req_ver",       fetch_ver,         { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "hdr",           fetch_hdr,         { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, RQ, NULL,
	  NULL },
	{ "req.hdr",       fetch_hdr,         { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, RQ, NULL,
	  NULL },
	{ "fhdr",          fetch_fhdr,        { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, RQ, NULL,
	  NULL },
	{ "req.fhdr",      fetch_fhdr,        { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, RQ, NULL,
	  NULL },
	{ "hdr_cnt",       fetch_hdr_cnt,     { ARGT_STR }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "req.hdr_cnt",   fetch_hdr_cnt,     { ARGT_STR }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "fhdr_cnt",      fetch_fhdr_cnt,    { ARGT_STR }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "req.fhdr_cnt",  fetch_fhdr_cnt,    { ARGT_STR }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "hdr_val",       fetch_hdr_val,     { ARGT_STR, ARGT_SINT }, 0, SMP_T_SINT, RQ, NULL,
	  NULL },
	{ "req.hdr_val",   fetch_hdr_val,     { ARGT_STR, ARGT_SINT }, 0, SMP_T_SINT, RQ, NULL,
	  NULL },
	{ "hdr_ip",        fetch_hdr_ip,      { ARGT_STR, ARGT_SINT }, 0, SMP_T_ADDR, RQ, NULL,
	  NULL },
	{ "req.hdr_ip",    fetch_hdr_ip,      { ARGT_STR, ARGT_SINT }, 0, SMP_T_ADDR, RQ, NULL,
	  NULL },
	{ "req.hdrs",      fetch_hdrs,        { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "req.hdrs_bin",  fetch_hdrs_bin,    { 0 }, 0, SMP_T_BIN, RQ, NULL, NULL },
	{ "res.hdrs",      fetch_res_hdrs,    { 0 }, 0, SMP_T_STR, RS, NULL, NULL },
	{ "res.hdrs_bin",  fetch_res_hdrs_bin, { 0 }, 0, SMP_T_BIN, RS, NULL, NULL },
	{ "cookie",        fetch_cookie,      { ARGT_STR }, 0, SMP_T_STR, RQ | RS, NULL, NULL },
	{ "cook",          fetch_cook,        { ARGT_STR }, 1, SMP_T_STR, RQ, NULL, NULL },
	{ "req.cook",      fetch_cook,        { ARGT_STR }, 1, SMP_T_STR, RQ, NULL, NULL },
	{ "cook_cnt",      fetch_cook_cnt,    { ARGT_STR }, 1, SMP_T_SINT, RQ, NULL, NULL },
	{ "req.cook_cnt",  fetch_cook_cnt,    { ARGT_STR }, 1, SMP_T_SINT, RQ, NULL, NULL },
	{ "res.hdr",       fetch_res_hdr,     { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, RS, NULL,
	  NULL },
	{ "shdr",          fetch_res_hdr,     { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, RS, NULL,
	  NULL },
	{ "res.fhdr",      fetch_res_fhdr,    { ARGT_STR, ARGT_SINT }, 0, SMP_T_STR, RS, NULL,
	  NULL },
	{ "res.hdr_cnt",   fetch_res_hdr_cnt, { ARGT_STR }, 0, SMP_T_SINT, RS, NULL, NULL },
	{ "shdr_cnt",      fetch_res_hdr_cnt, { ARGT_STR }, 0, SMP_T_SINT, RS, NULL, NULL },
	{ "res.hdr_val",   fetch_res_hdr_val, { ARGT_STR, ARGT_SINT }, 0, SMP_T_SINT, RS, NULL,
	  NULL },
	{ "shdr_val",      fetch_res_hdr_val, { ARGT_STR, ARGT_SINT }, 0, SMP_T_SINT, RS, NULL,
	  NULL },
	{ "res.hdr_ip",    fetch_res_hdr_ip,  { ARGT_STR, ARGT_SINT }, 0, SMP_T_ADDR, RS, NULL,
	  NULL },
	{ "shdr_ip",       fetch_res_hdr_ip,  { ARGT_STR, ARGT_SINT }, 0, SMP_T_ADDR, RS, NULL,
	  NULL },
	{ "status",        fetch_status,      { 0 }, 0, SMP_T_SINT, RS, NULL, NULL },
	{ "res.cook",      fetch_res_cook,    { ARGT_STR }, 1, SMP_T_STR, RS, NULL, NULL },
	{ "scook",         fetch_res_cook,    { ARGT_STR }, 1, SMP_T_STR, RS, NULL, NULL },
	{ "req.cook_val",  fetch_cook_val,    { ARGT_STR }, 1, SMP_T_SINT, RQ, NULL, NULL },
	{ "cook_val",      fetch_cook_val,    { ARGT_STR }, 1, SMP_T_SINT, RQ, NULL, NULL },
	{ "res.cook_val",  fetch_res_cook_val, { ARGT_STR }, 1, SMP_T_SINT, RS, NULL, NULL },
	{ "scook_val",     fetch_res_cook_val, { ARGT_STR }, 1, SMP_T_SINT, RS, NULL, NULL },
	{ "res.cook_cnt",  fetch_res_cook_cnt, { ARGT_STR }, 1, SMP_T_SINT, RS, NULL, NULL },
	{ "scook_cnt",     fetch_res_cook_cnt, { ARGT_STR }, 1, SMP_T_SINT, RS, NULL, NULL },
	{ "req.body",      fetch_req_body,    { 0 }, 0, SMP_T_BIN, RQ, NULL, NULL },
	{ "req.body_len",  fetch_req_body_len, { 0 }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "req.body_size", fetch_req_body_size, { 0 }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "req.body_param", fetch_req_body_param, { ARGT_STR }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "res.body",      fetch_req_body,    { 0 }, 0, SMP_T_BIN, RS, NULL, "res" },
	{ "res.body_len",  fetch_req_body_len, { 0 }, 0, SMP_T_SINT, RS, NULL, "res" },
	{ "res.body_size", fetch_req_body_size, { 0 }, 0, SMP_T_SINT, RS, NULL, "res" },
	{ "urlp_val",      fetch_urlp_val,    { ARGT_STR, ARGT_STR }, 1, SMP_T_SINT, RQ, NULL,
	  NULL },
	{ "res.ver",       fetch_res_ver,     { 0 }, 0, SMP_T_STR, RS, NULL, NULL },
	{ "resp_ver",      fetch_res_ver,     { 0 }, 0, SMP_T_STR, RS, NULL, NULL },
	{ "base32",        fetch_base32,      { 0 }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "base32+src",    fetch_base32_src,  { 0 }, 0, SMP_T_BIN, RQ, NULL, NULL },
	{ "url_ip",        fetch_url_ip,      { 0 }, 0, SMP_T_ADDR, RQ, NULL, NULL },
	{ "url_port",      fetch_url_port,    { 0 }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "capture.req.hdr", fetch_capture_req_hdr, { ARGT_SINT }, 1, SMP_T_STR, RQ, NULL, NULL },
	{ "capture.res.hdr", fetch_capture_res_hdr, { ARGT_SINT }, 1, SMP_T_STR, RS, NULL, NULL },
	{ "unique-id",     fetch_unique_id,   { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "http_first_req", fetch_http_first_req, { 0 }, 0, SMP_T_BOOL, RQ, NULL, NULL },
	{ "meth",          fetch_method,      { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "baseq",         fetch_baseq,       { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "url32",         fetch_url32,       { 0 }, 0, SMP_T_SINT, RQ, NULL, NULL },
	{ "url32+src",     fetch_url32_src,   { 0 }, 0, SMP_T_BIN, RQ, NULL, NULL },
	{ "capture.req.method", fetch_method, { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "capture.req.uri", fetch_url,       { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "capture.req.ver", fetch_capture_req_ver, { 0 }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "capture.res.ver", fetch_capture_res_ver, { 0 }, 0, SMP_T_STR, RS, NULL, NULL },
	{ "req.hdr_names", fetch_req_hdr_names, { ARGT_STR }, 0, SMP_T_STR, RQ, NULL, NULL },
	{ "res.hdr_names", fetch_res_hdr_names, { ARGT_STR }, 0, SMP_T_STR, RS, NULL, NULL },
	{ "res.fhdr_cnt",  fetch_res_fhdr_cnt, { ARGT_STR }, 0, SMP_T_SINT, RS, NULL, NULL },
	{ "http_auth_bearer", fetch_http_auth_bearer, { ARGT_STR }, 0, SMP_T_STR, RQ, NULL,
	  NULL },
};

SLUICE_INIT(smp_register_http)
{
	smp_register_fetches(smp_http_fetches, ARRAY_SIZE(smp_http_fetches));
}
