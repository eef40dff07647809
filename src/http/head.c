/* Editable message heads (http_head.h): rules rewrite (pointer, length)
 * views; the wire form is produced once by http_head_write(). */
#include <string.h>
#include <strings.h>

#include <sluice/common.h>
#include <sluice/h1.h>
#include <sluice/http_head.h>

static struct http_str slice_str(const char *buf, struct h1_slice s)
{
	return (struct http_str){ buf + s.off, s.len };
}

int http_head_init(struct http_head *h, const char *buf, const struct h1_msg *m,
                   struct http_field *f, int maxf, char *arena, uint32_t arena_size)
{
	const int resp = !!(m->flags & H1_F_RESP);

	memset(h, 0, sizeof(*h));
	h->flags = resp ? HTTP_HEAD_F_RESP : 0;
	h->f = f;
	h->maxf = maxf;
	h->arena = arena;
	h->arena_size = arena_size;
	if (resp) {
		/* "HTTP/1.x SSS reason": the version and status sit at fixed
		 * places after the leading empty lines. */
		h->sl[HTTP_SL_RSVER] = (struct http_str){ buf + m->skip, 8 };
		h->sl[HTTP_SL_STATUS] = (struct http_str){ buf + m->skip + 9, 3 };
		h->sl[HTTP_SL_REASON] = slice_str(buf, m->reason);
	} else {
		h->sl[HTTP_SL_METH] = slice_str(buf, m->meth);
		h->sl[HTTP_SL_URI] = slice_str(buf, m->uri);
		h->sl[HTTP_SL_RQVER] = (struct http_str){ buf + m->uri.off + m->uri.len + 1, 8 };
	}
	for (int i = 0; i < m->nhdrs && i < maxf; i++) {
		h->f[i].n = slice_str(buf, m->hdrs[i].name);
		h->f[i].v = slice_str(buf, m->hdrs[i].value);
	}
	h->nf = MIN(m->nhdrs, maxf);
	return 0;
}

const char *http_head_dup(struct http_head *h, const char *s, size_t len)
{
	char *p;

	if (!h->arena || len > h->arena_size - h->arena_used)
		return NULL;
	p = h->arena + h->arena_used;
	memcpy(p, s, len);
	h->arena_used += (uint32_t)len;
	return p;
}

int http_head_find(const struct http_head *h, const char *name, size_t nlen, int from)
{
	for (int i = from < 0 ? 0 : from; i < h->nf; i++)
		if (h->f[i].n.len == nlen && strncasecmp(h->f[i].n.p, name, nlen) == 0)
			return i;
	return -1;
}

int http_head_add(struct http_head *h, const char *name, size_t nlen, const char *val,
                  size_t vlen)
{
	const char *n, *v;

	if (h->nf >= h->maxf)
		return -1;
	n = http_head_dup(h, name, nlen);
	v = http_head_dup(h, val, vlen);
	if (!n || !v)
		return -1;
	h->f[h->nf].n = (struct http_str){ n, (uint32_t)nlen };
	h->f[h->nf].v = (struct http_str){ v, (uint32_t)vlen };
	h->nf++;
	h->flags |= HTTP_HEAD_F_CHANGED;
	return 0;
}

void http_head_del_at(struct http_head *h, int idx)
{
	if (idx < 0 || idx >= h->nf)
		return;
	memmove(&h->f[idx], &h->f[idx + 1], (size_t)(h->nf - idx - 1) * sizeof(h->f[0]));
	h->nf--;
	h->flags |= HTTP_HEAD_F_CHANGED;
}

int http_head_del(struct http_head *h, const char *name, size_t nlen)
{
	int n = 0;

	for (int i = http_head_find(h, name, nlen, 0); i >= 0; i = http_head_find(h, name, nlen, i)) {
		http_head_del_at(h, i);
		n++;
	}
	return n;
}

int http_head_set(struct http_head *h, const char *name, size_t nlen, const char *val,
                  size_t vlen)
{
	http_head_del(h, name, nlen);
	return http_head_add(h, name, nlen, val, vlen);
}

int http_head_set_value(struct http_head *h, int idx, const char *val, size_t vlen)
{
	const char *v = http_head_dup(h, val, vlen);

	if (!v || idx < 0 || idx >= h->nf)
		return -1;
	h->f[idx].v = (struct http_str){ v, (uint32_t)vlen };
	h->flags |= HTTP_HEAD_F_CHANGED;
	return 0;
}

int http_head_set_sl(struct http_head *h, int part, const char *s, size_t len)
{
	const char *v = http_head_dup(h, s, len);

	if (!v)
		return -1;
	h->sl[part] = (struct http_str){ v, (uint32_t)len };
	h->flags |= HTTP_HEAD_F_CHANGED;
	return 0;
}

size_t http_head_len(const struct http_head *h)
{
	size_t len = h->sl[0].len + h->sl[1].len + h->sl[2].len + 4 + 2;

	for (int i = 0; i < h->nf; i++)
		len += h->f[i].n.len + 2 + h->f[i].v.len + 2;
	return len;
}

static char *put(char *o, struct http_str s)
{
	memcpy(o, s.p, s.len);
	return o + s.len;
}

size_t http_head_write(const struct http_head *h, char *out)
{
	char *o = out;

	o = put(o, h->sl[0]);
	*o++ = ' ';
	o = put(o, h->sl[1]);
	/* An empty reason phrase still keeps its separator, as RFC 9112 says. */
	*o++ = ' ';
	o = put(o, h->sl[2]);
	*o++ = '\r';
	*o++ = '\n';
	for (int i = 0; i < h->nf; i++) {
		o = put(o, h->f[i].n);
		*o++ = ':';
		*o++ = ' ';
		o = put(o, h->f[i].v);
		*o++ = '\r';
		*o++ = '\n';
	}
	*o++ = '\r';
	*o++ = '\n';
	return (size_t)(o - out);
}

int http_head_has_token(const struct http_head *h, const char *name, const char *tok)
{
	size_t tl = strlen(tok);

	for (int i = http_head_find(h, name, strlen(name), 0); i >= 0;
	     i = http_head_find(h, name, strlen(name), i + 1)) {
		const char *p = h->f[i].v.p, *end = p + h->f[i].v.len;

		while (p < end) {
			const char *e;

			while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
				p++;
			e = p;
			while (e < end && *e != ',')
				e++;
			/* trim the token's trailing spaces */
			size_t l = (size_t)(e - p);
			while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
				l--;
			if (l == tl && strncasecmp(p, tok, tl) == 0)
				return 1;
			p = e;
		}
	}
	return 0;
}
