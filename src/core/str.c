/* Growable strings and edit distance (see include/sluice/str.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/str.h>

int dstr_reserve(struct dstr *d, size_t extra)
{
	size_t need = d->len + extra + 1;
	size_t cap;
	char *p;

	if (need <= d->cap)
		return 0;
	cap = d->cap ? d->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(d->p, cap);
	if (!p)
		return -1;
	d->p = p;
	d->cap = cap;
	return 0;
}

int dstr_vprintf(struct dstr *d, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || dstr_reserve(d, (size_t)n) == -1)
		return -1;
	vsnprintf(d->p + d->len, (size_t)n + 1, fmt, ap);
	d->len += (size_t)n;
	return 0;
}

int dstr_printf(struct dstr *d, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = dstr_vprintf(d, fmt, ap);
	va_end(ap);
	return ret;
}

int dstr_add(struct dstr *d, const char *s, size_t len)
{
	if (dstr_reserve(d, len) == -1)
		return -1;
	if (len)   /* an empty <s> may be NULL (an empty dstr's p) */
		memcpy(d->p + d->len, s, len);
	d->len += len;
	d->p[d->len] = '\0';
	return 0;
}

void str_blank_ctl(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			*s = ' ';
}

int str_cli_quote(struct dstr *d, const char *s, size_t len)
{
	size_t start = d->len;

	if (!len || memchr(s, '\0', len) || memchr(s, '\n', len) || memchr(s, '\r', len))
		return -1;
	for (size_t i = 0; i < len; i++) {
		/* the line splitter turns "\;" into ";" and keeps "\x" for any
		 * other x; the word splitter then takes the byte after a '\' as is */
		char c = s[i], two[2] = { '\\', c };
		int esc = c == ';' || c == '\\' || c == ' ' || c == '\t';

		if (dstr_add(d, esc ? two : &c, esc ? 2 : 1) == -1) {
			d->len = start;
			if (d->p)
				d->p[start] = '\0';
			return -1;
		}
	}
	return 0;
}

void dstr_consume(struct dstr *d, size_t n)
{
	if (n >= d->len) {
		d->len = 0;
		if (d->p)
			d->p[0] = '\0';
		return;
	}
	memmove(d->p, d->p + n, d->len - n + 1);
	d->len -= n;
}

void dstr_free(struct dstr *d)
{
	free(d->p);
	d->p = NULL;
	d->len = d->cap = 0;
}

int str_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	unsigned char row[65];

	/* Keywords are short; longer inputs are simply "far". */
	if (la > 64 || lb > 64)
		return 255;
	for (j = 0; j <= lb; j++)
		row[j] = (unsigned char)j;
	for (i = 1; i <= la; i++) {
		unsigned char diag = row[0], tmp;

		row[0] = (unsigned char)i;
		for (j = 1; j <= lb; j++) {
			unsigned char best = (unsigned char)(diag + (a[i - 1] != b[j - 1]));

			tmp = row[j];
			if (row[j] + 1 < best)
				best = (unsigned char)(row[j] + 1);
			if (row[j - 1] + 1 < best)
				best = (unsigned char)(row[j - 1] + 1);
			row[j] = best;
			diag = tmp;
		}
	}
	return row[lb];
}

char *str_fmt(const char *fmt, ...)
{
	struct dstr d = { 0 };
	va_list ap;

	va_start(ap, fmt);
	if (dstr_vprintf(&d, fmt, ap) == -1) {
		va_end(ap);
		dstr_free(&d);
		return NULL;
	}
	va_end(ap);
	if (!d.p)
		return calloc(1, 1);
	return d.p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	BUG_ON(!p, "out of memory at configuration time");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	BUG_ON(!p, "out of memory at configuration time");
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	BUG_ON(!p, "out of memory at configuration time");
	return p;
}
