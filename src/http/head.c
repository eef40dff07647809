/* Editable message heads (http_head.h): rules rewrite (pointer, length)
 * views; the wire form is produced once by http_head_write(). Every value
 * and start-line part the editing functions store is made safe on its way
 * in (http_head_dup_safe): no sample can end a line or the head. */
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
		/* "HTTP/1.x SSS reason": the status follows the version */
		h->sl[HTTP_SL_RSVER] = slice_str(buf, m->ver);
		h->sl[HTTP_SL_STATUS] = (struct http_str){ buf + m->ver.off + m->ver.len + 1, 3 };
		h->sl[HTTP_SL_REASON] = slice_str(buf, m->reason);
	} else {
		h->sl[HTTP_SL_METH] = slice_str(buf, m->meth);
		h->sl[HTTP_SL_URI] = slice_str(buf, m->uri);
		/* an HTTP/0.9 request (option accept-invalid-http-request)
		 * leaves as HTTP/1.0 */
		h->sl[HTTP_SL_RQVER] = (m->flags & H1_F_VER_NONE) ? (struct http_str){ "HTTP/1.0", 8 } :
				       slice_str(buf, m->ver);
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

/* ---- safe strings ---- */

/* unsafe[c] has bit (1 << kind) set when a string of that kind may not
 * carry byte c as it is: a value holds anything but CR, LF and NUL, a
 * request target no CTL and no SP, a token only letters, digits and
 * "!#$%&'*+-.^_`|~" (RFC 9110 tchar). */
#define U_V (1u << HTTP_SAFE_VALUE)
#define U_T (1u << HTTP_SAFE_TARGET)
#define U_K (1u << HTTP_SAFE_TOKEN)
static const uint8_t unsafe[256] = {
	[0x00] = U_V | U_T | U_K,
	[0x01 ... 0x09] = U_T | U_K,
	['\n'] = U_V | U_T | U_K,
	[0x0b ... 0x0c] = U_T | U_K,
	['\r'] = U_V | U_T | U_K,
	[0x0e ... 0x1f] = U_T | U_K,
	[' '] = U_T | U_K,
	['"'] = U_K, ['('] = U_K, [')'] = U_K, [','] = U_K, ['/'] = U_K, [':'] = U_K,
	[';'] = U_K, ['<'] = U_K, ['='] = U_K, ['>'] = U_K, ['?'] = U_K, ['@'] = U_K,
	['['] = U_K, ['\\'] = U_K, [']'] = U_K, ['{'] = U_K, ['}'] = U_K,
	[0x7f] = U_T | U_K,
	[0x80 ... 0xff] = U_K,
};

/* Whether 8-byte word <w> may hold a byte <kind> does not allow: one that is
 * below 0x0E for a value (CR, LF, NUL, and harmless ones such as HTAB), or
 * below 0x21 or equal to 0x7F for a target. Exact enough to skip words. */
static inline int word_suspect(uint64_t w, enum http_safe kind)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = ones << 7;
	uint64_t del;

	if (kind == HTTP_SAFE_VALUE)
		return ((w - ones * 0x0E) & ~w & highs) != 0;
	del = w ^ (ones * 0x7f);
	return ((((w - ones * 0x21) & ~w) | ((del - ones) & ~del)) & highs) != 0;
}

size_t http_safe_scan(const char *s, size_t len, enum http_safe kind)
{
	const unsigned bit = 1u << kind;
	size_t i = 0;

	/* Values are long (cookies, URIs) and nearly always clean: sixteen
	 * bytes at a time, looked at one by one only when suspect. Tokens
	 * (methods, names) are short. */
	if (kind != HTTP_SAFE_TOKEN) {
		for (; i + 16 <= len; i += 16) {
			uint64_t a, b;

			memcpy(&a, s + i, 8);
			memcpy(&b, s + i + 8, 8);
			if (!(word_suspect(a, kind) | word_suspect(b, kind)))
				continue;
			for (size_t j = i; j < i + 16; j++)
				if (unsafe[(uint8_t)s[j]] & bit)
					return j;
		}
	}
	for (; i < len; i++)
		if (unsafe[(uint8_t)s[i]] & bit)
			return i;
	return len;
}

/* http_head_dup_safe() once the first byte to encode, at <first>, is known. */
static const char *dup_encoded(struct http_head *h, const char *s, size_t *len,
                               enum http_safe kind, size_t first)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned bit = 1u << kind;
	size_t need = *len;
	char *p, *o;

	if (first == *len)
		return http_head_dup(h, s, *len);
	for (size_t i = first; i < *len; i++)
		if (unsafe[(uint8_t)s[i]] & bit)
			need += 2;
	if (!h->arena || need > h->arena_size - h->arena_used)
		return NULL;
	p = o = h->arena + h->arena_used;
	memcpy(o, s, first);
	o += first;
	for (size_t i = first; i < *len; i++) {
		uint8_t c = (uint8_t)s[i];

		if (unsafe[c] & bit) {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	h->arena_used += (uint32_t)need;
	*len = need;
	return p;
}

const char *http_head_dup_safe(struct http_head *h, const char *s, size_t *len,
                               enum http_safe kind)
{
	return dup_encoded(h, s, len, kind, http_safe_scan(s, *len, kind));
}

/* Whether <n> may name a field. Names come from the configuration, checked
 * when it is parsed; this keeps the head sound whatever a caller passes. */
static int name_ok(const char *n, size_t nlen)
{
	return nlen && http_safe_scan(n, nlen, HTTP_SAFE_TOKEN) == nlen;
}

/* The kind of start-line part <part> of <h>. */
static enum http_safe sl_kind(const struct http_head *h, int part)
{
	if (h->flags & HTTP_HEAD_F_RESP)
		return part == HTTP_SL_REASON ? HTTP_SAFE_VALUE : HTTP_SAFE_TARGET;
	return part == HTTP_SL_METH ? HTTP_SAFE_TOKEN : HTTP_SAFE_TARGET;
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

	if (h->nf >= h->maxf || !name_ok(name, nlen))
		return -1;
	n = http_head_dup(h, name, nlen);
	v = http_head_dup_safe(h, val, &vlen, HTTP_SAFE_VALUE);
	if (!n || !v)
		return -1;
	h->f[h->nf].n = (struct http_str){ n, (uint32_t)nlen };
	h->f[h->nf].v = (struct http_str){ v, (uint32_t)vlen };
	h->nf++;
	h->flags |= HTTP_HEAD_F_CHANGED;
	return 0;
}

int http_head_add_ref(struct http_head *h, const char *name, size_t nlen, const char *val,
                      size_t vlen)
{
	size_t first = http_safe_scan(val, vlen, HTTP_SAFE_VALUE);

	if (h->nf >= h->maxf || !name_ok(name, nlen) ||
	    (first < vlen && !(val = dup_encoded(h, val, &vlen, HTTP_SAFE_VALUE, first))))
		return -1;
	h->f[h->nf].n = (struct http_str){ name, (uint32_t)nlen };
	h->f[h->nf].v = (struct http_str){ val, (uint32_t)vlen };
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
	const char *v;

	if (idx < 0 || idx >= h->nf || !(v = http_head_dup_safe(h, val, &vlen, HTTP_SAFE_VALUE)))
		return -1;
	h->f[idx].v = (struct http_str){ v, (uint32_t)vlen };
	h->flags |= HTTP_HEAD_F_CHANGED;
	return 0;
}

int http_head_set_sl(struct http_head *h, int part, const char *s, size_t len)
{
	const char *v = http_head_dup_safe(h, s, &len, sl_kind(h, part));

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
