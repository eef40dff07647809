/* The `filter` keyword (http_filter.h): finds the filter's row and lets its
 * module parse the rest of the line. */
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_filter.h>
#include <sluice/str.h>

struct http_filter_table {
	struct http_filter_kw   *kws;
	size_t                   n;
	struct http_filter_table *next;
};

static struct http_filter_table *filters;

void http_filter_register(struct http_filter_kw *kws, size_t n)
{
	struct http_filter_table *t = xcalloc(1, sizeof(*t)), **tail = &filters;

	t->kws = kws;
	t->n = n;
	while (*tail)
		tail = &(*tail)->next;
	*tail = t;
}

void http_filter_foreach(void (*fn)(const struct http_filter_kw *kw, void *arg), void *arg)
{
	for (const struct http_filter_table *t = filters; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			fn(&t->kws[i], arg);
}

static int kw_filter(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct dstr known = { 0 };

	for (struct http_filter_table *t = filters; t; t = t->next)
		for (size_t i = 0; i < t->n; i++) {
			if (argc && strcmp(argv[0], t->kws[i].name) == 0) {
				dstr_free(&known);
				if (t->kws[i].refused) {
					cfg_alert(ctx, "filter '%s' is not supported by sluice: %s",
						  argv[0], t->kws[i].refused);
					return -1;
				}
				return t->kws[i].parse(ctx, argc - 1, argv + 1);
			}
			if (!t->kws[i].refused)
				dstr_printf(&known, "%s'%s'", known.len ? ", " : "", t->kws[i].name);
		}
	if (argc)
		cfg_alert(ctx, "unknown filter '%s' (sluice has %s)", argv[0],
			  known.p ? known.p : "none");
	else
		cfg_alert(ctx, "expects a filter name (%s)", known.p ? known.p : "none");
	dstr_free(&known);
	return -1;
}

static struct cfg_kw filter_kws[] = {
	{ "filter", CFG_SEC_PROXIES & ~CFG_SEC_DEFAULTS, CFG_T_FUNC, 0, .parse = kw_filter,
	  .usage = "<name> [<args>]" },
};

/* HAProxy's filters that no sluice module provides: one clear reason each. */
static struct http_filter_kw refused_filters[] = {
	{ "trace", NULL, "the trace filter is a debugging aid of HAProxy's filter API, "
	  "which sluice does not have" },
	{ "bwlim-in", NULL, "bandwidth limitation filters come with HAProxy 2.7, not in "
	  "the 2.6 language sluice reads" },
	{ "bwlim-out", NULL, "bandwidth limitation filters come with HAProxy 2.7, not in "
	  "the 2.6 language sluice reads" },
};

SLUICE_INIT(http_filter_kw_register)
{
	cfg_register(filter_kws, ARRAY_SIZE(filter_kws));
	http_filter_register(refused_filters, ARRAY_SIZE(refused_filters));
}
