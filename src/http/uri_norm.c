/* URI normalisers (uri_norm.h) for "http-request normalize-uri": pure
 * functions from a request target to a buffer, bounded by both lengths. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/uri_norm.h>

static const char *const uri_norm_names[URI_N_COUNT] = {
	[URI_N_FRAGMENT_ENCODE] = "fragment-encode",
	[URI_N_FRAGMENT_STRIP] = "fragment-strip",
	[URI_N_PATH_MERGE_SLASHES] = "path-merge-slashes",
	[URI_N_PATH_STRIP_DOT] = "path-strip-dot",
	[URI_N_PATH_STRIP_DOTDOT] = "path-strip-dotdot",
	[URI_N_PERCENT_DECODE_UNRESERVED] = "percent-decode-unreserved",
	[URI_N_PERCENT_TO_UPPERCASE] = "percent-to-uppercase",
	[URI_N_QUERY_SORT_BY_NAME] = "query-sort-by-name",
};

const char *uri_norm_name(enum uri_norm n)
{
	return n < URI_N_COUNT ? uri_norm_names[n] : "";
}

/* Where the parts of a request target are: the path from <path> (a '/', or
 * <path> == <qry> when there is none) to <qry> (the '?', or <frag> when
 * there is none), the fragment from <frag> (the '#', or the length). */
struct uri_parts {
	size_t path, qry, frag;
};

static int is_alpha(unsigned char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static void uri_split(const char *u, size_t len, struct uri_parts *up)
{
	size_t i = 0;

	up->path = len;
	if (len && u[0] == '/') {
		up->path = 0;
	} else if (len && is_alpha((unsigned char)u[0])) {
		/* scheme "://" authority: the path starts after the authority */
		while (i < len && (is_alpha((unsigned char)u[i]) || is_digit((unsigned char)u[i]) ||
				   u[i] == '+' || u[i] == '-' || u[i] == '.'))
			i++;
		if (len - i >= 3 && memcmp(u + i, "://", 3) == 0) {
			for (i += 3; i < len && u[i] != '/' && u[i] != '?' && u[i] != '#'; i++)
				;
			up->path = i;
		}
	}
	for (up->frag = up->path; up->frag < len && u[up->frag] != '#'; up->frag++)
		;
	for (up->qry = up->path; up->qry < up->frag && u[up->qry] != '?'; up->qry++)
		;
}

/* The output being written: <n> bytes of <out>, <full> once something
 * did not fit. */
struct uri_out {
	char  *out;
	size_t size, n;
	int    full;
};

static void out_put(struct uri_out *o, const char *p, size_t len)
{
	if (o->full || len > o->size - o->n) {
		o->full = 1;
		return;
	}
	memcpy(o->out + o->n, p, len);
	o->n += len;
}

static int hexval(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* RFC 3986 2.3: ALPHA / DIGIT / "-" / "." / "_" / "~" */
static int is_unreserved(unsigned char c)
{
	return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* percent-decode-unreserved (<upper> 0) and percent-to-uppercase (1) over
 * u[from, len). Returns 0, or -1 for an invalid sequence when <strict>. */
static int norm_percent(struct uri_out *o, const char *u, size_t from, size_t len, int upper,
                        int strict)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = from; i < len; i++) {
		int h, l;

		if (u[i] != '%') {
			out_put(o, u + i, 1);
			continue;
		}
		if (len - i < 3 || (h = hexval((unsigned char)u[i + 1])) < 0 ||
		    (l = hexval((unsigned char)u[i + 2])) < 0) {
			if (strict)
				return -1;
			out_put(o, "%", 1);   /* as it is; what follows is read again */
			continue;
		}
		if (upper) {
			char e[3] = { '%', hex[h], hex[l] };

			out_put(o, e, 3);
		} else if (is_unreserved((unsigned char)(h << 4 | l))) {
			char c = (char)(h << 4 | l);

			out_put(o, &c, 1);
		} else {
			out_put(o, u + i, 3);
		}
		i += 2;
	}
	return 0;
}

/* The path p[0, len) (starting with '/') with its "." (<dots> 1) or ".."
 * (<dots> 2) segments removed, as RFC 3986 5.2.4 does: a ".." takes the
 * segment before it along (an empty one too); one with nothing before it
 * stays, or goes with <full>. A removed last segment leaves the path
 * ending with '/'. */
static void norm_dots(struct uri_out *o, const char *p, size_t len, int dots, int full)
{
	size_t start = o->n, nseg = 0, nkept = 0, i = 1;

	out_put(o, "/", 1);
	for (;;) {
		const char *seg = p + i, *end = memchr(seg, '/', len - i);
		size_t sl = end ? (size_t)(end - seg) : len - i;
		int last = !end, drop = 0;

		if (dots == 1 && sl == 1 && seg[0] == '.') {
			drop = 1;
		} else if (dots == 2 && sl == 2 && seg[0] == '.' && seg[1] == '.') {
			if (nseg > nkept) {
				/* back to before the previous segment's '/' */
				while (!o->full && o->n > start + 1 && o->out[o->n - 1] != '/')
					o->n--;
				if (!o->full && --nseg)
					o->n--;
				drop = 1;
			} else if (full) {
				drop = 1;
			} else {
				nkept++;
				/* one kept last is a directory too (HAProxy: "/.." gives "/../") */
				drop = last;
				if (drop)
					out_put(o, nseg ? "/.." : "..", nseg ? 3 : 2);
				nseg += drop;
			}
		}
		if (!drop || last) {
			/* (a dropped last segment leaves the path's trailing '/') */
			if (nseg)
				out_put(o, "/", 1);
			if (!drop)
				out_put(o, seg, sl);
			nseg++;
		}
		if (last)
			return;
		i += sl + 1;
	}
}

/* The query parameters being sorted (query-sort-by-name): kept from call to
 * call, grown as needed, so that no request allocates once they are as
 * large as the longest query met. */
struct qparam {
	uint32_t off, len, nlen;
};

static struct {
	struct qparam *a, *tmp;
	size_t         cap;
} qs;

static int qparam_le(const char *q, const struct qparam *x, const struct qparam *y)
{
	int c = memcmp(q + x->off, q + y->off, MIN(x->nlen, y->nlen));

	return c < 0 || (c == 0 && x->nlen <= y->nlen);
}

/* Stable merge sort of qs.a[0, n) by name. */
static void qparam_sort(const char *q, size_t n)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = MIN(lo + w, n), hi = MIN(lo + 2 * w, n), a = lo, b = mid, k = lo;

			while (a < mid && b < hi)
				qs.tmp[k++] = qparam_le(q, &qs.a[a], &qs.a[b]) ? qs.a[a++] : qs.a[b++];
			while (a < mid)
				qs.tmp[k++] = qs.a[a++];
			while (b < hi)
				qs.tmp[k++] = qs.a[b++];
		}
		memcpy(qs.a, qs.tmp, n * sizeof(*qs.a));
	}
}

/* The query q[0, len) with its '&'-separated parameters in the order of
 * their names (the bytes before '='); equal names keep their order.
 * Returns 0, or -1 when memory ran out. */
static int norm_query_sort(struct uri_out *o, const char *q, size_t len)
{
	size_t n = 1, k = 0;

	for (size_t i = 0; i < len; i++)
		n += q[i] == '&';
	if (n > qs.cap) {
		struct qparam *a = realloc(qs.a, n * sizeof(*a)), *t;

		if (!a)
			return -1;
		qs.a = a;
		if (!(t = realloc(qs.tmp, n * sizeof(*t))))
			return -1;
		qs.tmp = t;
		qs.cap = n;
	}
	for (size_t i = 0; k < n; k++) {
		const char *amp = memchr(q + i, '&', len - i), *eq;
		size_t pl = amp ? (size_t)(amp - (q + i)) : len - i;

		eq = memchr(q + i, '=', pl);
		qs.a[k] = (struct qparam){ (uint32_t)i, (uint32_t)pl,
					   (uint32_t)(eq ? (size_t)(eq - (q + i)) : pl) };
		i += pl + 1;
	}
	qparam_sort(q, n);
	for (k = 0; k < n; k++) {
		if (k)
			out_put(o, "&", 1);
		out_put(o, q + qs.a[k].off, qs.a[k].len);
	}
	return 0;
}

long uri_normalize(enum uri_norm n, unsigned flags, const char *uri, size_t len, char *out,
                   size_t size)
{
	struct uri_out o = { out, size, 0, 0 };
	struct uri_parts up;
	int has_path;

	uri_split(uri, len, &up);
	has_path = up.path < up.qry;
	out_put(&o, uri, up.path);   /* scheme and authority stay */
	switch (n) {
	case URI_N_FRAGMENT_ENCODE:
		for (size_t i = up.path; i < len; i++)
			out_put(&o, uri[i] == '#' ? "%23" : uri + i, uri[i] == '#' ? 3 : 1);
		break;
	case URI_N_FRAGMENT_STRIP:
		out_put(&o, uri + up.path, up.frag - up.path);
		break;
	case URI_N_PATH_MERGE_SLASHES:
		for (size_t i = up.path; i < up.qry; i++)
			if (uri[i] != '/' || i == up.path || uri[i - 1] != '/')
				out_put(&o, uri + i, 1);
		out_put(&o, uri + up.qry, len - up.qry);
		break;
	case URI_N_PATH_STRIP_DOT:
	case URI_N_PATH_STRIP_DOTDOT:
		if (has_path)
			norm_dots(&o, uri + up.path, up.qry - up.path,
				  n == URI_N_PATH_STRIP_DOT ? 1 : 2, !!(flags & URI_NF_FULL));
		out_put(&o, uri + up.qry, len - up.qry);
		break;
	case URI_N_PERCENT_DECODE_UNRESERVED:
	case URI_N_PERCENT_TO_UPPERCASE:
		if (norm_percent(&o, uri, up.path, len, n == URI_N_PERCENT_TO_UPPERCASE,
				 !!(flags & URI_NF_STRICT)) == -1)
			return URI_NORM_INVALID;
		break;
	case URI_N_QUERY_SORT_BY_NAME:
		out_put(&o, uri + up.path, up.qry - up.path);
		if (up.qry < up.frag) {
			out_put(&o, "?", 1);
			if (norm_query_sort(&o, uri + up.qry + 1, up.frag - up.qry - 1) == -1)
				return URI_NORM_FULL;
		}
		out_put(&o, uri + up.frag, len - up.frag);
		break;
	default:
		out_put(&o, uri + up.path, len - up.path);
		break;
	}
	return o.full ? URI_NORM_FULL : (long)o.n;
}
