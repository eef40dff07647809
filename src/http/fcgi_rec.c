/* FastCGI records on the wire (fcgi_rec.h): headers, name-value pairs and
 * the incremental reader. Pure functions over caller-owned bytes. */
#include <string.h>

#include <sluice/fcgi_rec.h>
#include <sluice/str.h>

void fcgi_hdr_put(char *p, enum fcgi_type type, uint16_t id, uint16_t clen, uint8_t plen)
{
	p[0] = FCGI_VERSION;
	p[1] = (char)type;
	p[2] = (char)(id >> 8);
	p[3] = (char)(id & 0xff);
	p[4] = (char)(clen >> 8);
	p[5] = (char)(clen & 0xff);
	p[6] = (char)plen;
	p[7] = 0;
}

/* A length takes one byte below 128, else four with the high bit set. */
static size_t nv_len_size(size_t l)
{
	return l < 128 ? 1 : 4;
}

static size_t nv_len_put(char *p, size_t l)
{
	if (l < 128) {
		p[0] = (char)l;
		return 1;
	}
	p[0] = (char)(((l >> 24) & 0x7f) | 0x80);
	p[1] = (char)((l >> 16) & 0xff);
	p[2] = (char)((l >> 8) & 0xff);
	p[3] = (char)(l & 0xff);
	return 4;
}

size_t fcgi_nv_size(size_t nlen, size_t vlen)
{
	return nv_len_size(nlen) + nv_len_size(vlen) + nlen + vlen;
}

size_t fcgi_nv_put(char *p, const char *n, size_t nlen, const char *v, size_t vlen)
{
	size_t k = nv_len_put(p, nlen);

	k += nv_len_put(p + k, vlen);
	memcpy(p + k, n, nlen);
	k += nlen;
	if (vlen)
		memcpy(p + k, v, vlen);
	return k + vlen;
}

int fcgi_nv_add(struct dstr *d, const char *n, size_t nlen, const char *v, size_t vlen)
{
	if (dstr_reserve(d, fcgi_nv_size(nlen, vlen)) < 0)
		return -1;
	d->len += fcgi_nv_put(d->p + d->len, n, nlen, v, vlen);
	d->p[d->len] = 0;
	return 0;
}

int fcgi_rec_add(struct dstr *d, enum fcgi_type type, uint16_t id, const char *p, size_t len)
{
	do {
		size_t k = len < FCGI_MAX_CONTENT ? len : FCGI_MAX_CONTENT;
		char h[FCGI_HDR_LEN];

		fcgi_hdr_put(h, type, id, (uint16_t)k, 0);
		if (dstr_add(d, h, sizeof(h)) < 0 || (k && dstr_add(d, p, k) < 0))
			return -1;
		if (k)
			p += k;   /* (an empty record's <p> may be NULL) */
		len -= k;
	} while (len);
	return 0;
}

/* One length at <p>[*off..len): returns it, or -1 when truncated. */
static long nv_len_get(const unsigned char *p, size_t len, size_t *off)
{
	size_t o = *off;
	long l;

	if (o >= len)
		return -1;
	if (!(p[o] & 0x80)) {
		*off = o + 1;
		return p[o];
	}
	if (len - o < 4)
		return -1;
	l = ((long)(p[o] & 0x7f) << 24) | ((long)p[o + 1] << 16) | ((long)p[o + 2] << 8) | p[o + 3];
	*off = o + 4;
	return l;
}

int fcgi_nv_next(const char *p, size_t len, size_t *off, const char **n, size_t *nl,
                 const char **v, size_t *vl)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t o = *off;
	long a, b;

	if (o == len)
		return 0;
	a = nv_len_get(u, len, &o);
	b = a < 0 ? -1 : nv_len_get(u, len, &o);
	if (b < 0 || (size_t)a > len - o || (size_t)b > len - o - (size_t)a)
		return -1;
	*n = p + o;
	*nl = (size_t)a;
	*v = p + o + a;
	*vl = (size_t)b;
	*off = o + (size_t)a + (size_t)b;
	return 1;
}

int fcgi_rd_next(struct fcgi_rd *rd, const char *p, size_t n, size_t *used,
                 struct fcgi_piece *pc)
{
	size_t i = 0, k;

	for (;;) {
		if (rd->in_rec && (rd->cleft || !rd->given)) {
			/* content: a piece (an empty record gives one empty piece) */
			k = rd->cleft < n - i ? rd->cleft : n - i;
			if (!k && rd->cleft)
				break;   /* more content to come */
			pc->type = rd->type;
			pc->id = rd->id;
			pc->clen = rd->clen;
			pc->off = rd->clen - rd->cleft;
			pc->data = p + i;
			pc->len = (uint32_t)k;
			rd->cleft -= (uint32_t)k;
			rd->given = 1;
			i += k;
			pc->last = !rd->cleft;
			if (pc->last && !rd->pleft)
				rd->in_rec = 0;
			*used = i;
			return 1;
		}
		if (rd->in_rec) {
			/* padding, dropped */
			k = rd->pleft < n - i ? rd->pleft : n - i;
			rd->pleft -= (uint32_t)k;
			i += k;
			if (rd->pleft)
				break;
			rd->in_rec = 0;
			continue;
		}
		if (i == n)
			break;
		/* a header, byte by byte when cut */
		while (rd->hlen < FCGI_HDR_LEN && i < n)
			rd->hb[rd->hlen++] = (uint8_t)p[i++];
		if (rd->hlen < FCGI_HDR_LEN)
			break;
		rd->type = rd->hb[1];
		rd->id = (uint16_t)(rd->hb[2] << 8 | rd->hb[3]);
		if (rd->hb[0] != FCGI_VERSION) {
			rd->err = "record of an unknown FastCGI version";
			*used = i;
			return -1;
		}
		rd->clen = rd->cleft = (uint32_t)(rd->hb[4] << 8 | rd->hb[5]);
		rd->pleft = rd->hb[6];
		rd->hlen = 0;
		rd->in_rec = 1;
		rd->given = 0;
	}
	*used = i;
	return 0;
}

int fcgi_rd_idle(const struct fcgi_rd *rd)
{
	return !rd->in_rec && !rd->hlen;
}
