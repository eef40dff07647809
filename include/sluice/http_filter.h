/* The `filter` proxy keyword: one line per filter, each filter a row its
 * module registers (compression, cache), so that neither module owns the
 * keyword nor knows the other. */
#ifndef SLUICE_HTTP_FILTER_H
#define SLUICE_HTTP_FILTER_H

#include <stddef.h>

struct cfg_ctx;

struct http_filter_kw {
	const char *name;          /* "compression", "cache" */
	/* <argv> holds the words after the filter's name. Returns 0, or -1
	 * after cfg_alert(). */
	int       (*parse)(struct cfg_ctx *ctx, int argc, char **argv);
	const char *refused;       /* a filter of HAProxy that sluice refuses: why */
};

/* Registers <n> filter rows; tables must outlive the process' use. */
void http_filter_register(struct http_filter_kw *kws, size_t n);

/* Calls <fn> on every registered filter row, in registration order. For
 * listings and the documentation test. */
void http_filter_foreach(void (*fn)(const struct http_filter_kw *kw, void *arg), void *arg);

#endif
