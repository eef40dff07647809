/* String helpers: a growable output string (CLI, stats) and the edit
 * distance used to suggest the closest keyword in error messages. */
#ifndef SLUICE_STR_H
#define SLUICE_STR_H

#include <stdarg.h>
#include <stddef.h>

/* The value of hex digit <c> (either case), -1 for any other byte. */
static inline int str_hex_digit(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A growable, always NUL-terminated string. Zero-initialise before use. */
struct dstr {
	char  *p;
	size_t len;
	size_t cap;
};

/* Appends formatted text. Returns 0, or -1 on allocation failure (the string
 * is left as it was). */
int dstr_printf(struct dstr *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int dstr_vprintf(struct dstr *d, const char *fmt, va_list ap);
/* Makes room for <extra> more bytes (and the NUL) without changing the
 * content. Returns 0, or -1 on allocation failure. */
int dstr_reserve(struct dstr *d, size_t extra);
/* Appends <len> raw bytes. Returns 0 or -1. */
int dstr_add(struct dstr *d, const char *s, size_t len);
/* Drops the first <n> bytes (already sent). */
void dstr_consume(struct dstr *d, size_t n);
void dstr_free(struct dstr *d);

/* Appends <s> (<len> bytes) to <d> as one word of a runtime-API command
 * line: blanks, backslashes and ';' are escaped so that the stats socket's
 * line and word splitting (admin/cli.c) give back exactly <s>. Returns 0,
 * or -1 when no line can carry it (empty, or holding NUL, CR or LF), in
 * which case nothing is appended. */
int str_cli_quote(struct dstr *d, const char *s, size_t len);

/* Turns every control character of <s> (below ' ', and DEL) into a space,
 * in place: for text a peer wrote (a check's info) that goes into log
 * lines, CSV rows or mail. */
void str_blank_ctl(char *s);

/* Levenshtein distance between two strings, capped at 255. */
int str_distance(const char *a, const char *b);

/* Formats into a newly allocated string; returns NULL on allocation failure.
 * The caller frees. */
char *str_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* strdup that aborts on allocation failure: for config-time data only. */
char *xstrdup(const char *s);
void *xcalloc(size_t n, size_t size);
/* realloc() that aborts on failure (configuration time only). */
void *xrealloc(void *p, size_t size);

#endif
