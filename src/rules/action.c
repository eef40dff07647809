/* The one registry of rule actions (action.h): each owning module registers
 * its rows; the tcp and http rule engines find every action word here. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/str.h>
#include <sluice/stream.h>

struct act_list {
	const struct act_kw *rows;
	size_t               n, stride;
	unsigned             flags;   /* ACT_L_* */
	struct act_list     *next;
};

static struct act_list *act_lists;

static const struct act_kw *act_row(const struct act_list *l, size_t i)
{
	return (const struct act_kw *)(const void *)((const char *)l->rows + i * l->stride);
}

void act_register_ext(const struct act_kw *first, size_t n, size_t stride, unsigned flags)
{
	struct act_list *l = xcalloc(1, sizeof(*l));

	if (flags & ACT_L_OWN)
		flags |= ACT_L_BASE;
	l->rows = first;
	l->n = n;
	l->stride = stride;
	l->flags = flags;
	for (size_t i = 0; i < n; i++)
		BUG_ON(!act_row(l, i)->parse != !!(flags & ACT_L_OWN),
		       "an engine's own action has no parse of its own, another has one");
	l->next = act_lists;
	act_lists = l;
}

void act_register(const struct act_kw *kws, size_t n)
{
	act_register_ext(kws, n, sizeof(*kws), 0);
}

/* Whether <word> (up to '(' or its end) names row <kw>. */
static int act_match(const struct act_kw *kw, const char *word)
{
	size_t n = strcspn(word, "("), k = strlen(kw->name);

	if (word[n] && act_is_own(kw))
		return 0;   /* "add-header(x)" is no action */
	if (kw->digit)
		return n == k + 1 && memcmp(word, kw->name, k) == 0 && word[k] >= '0' &&
		       word[k] <= '2';
	return n == k && memcmp(word, kw->name, k) == 0;
}

int act_digit(const struct act_kw *kw, const char *word)
{
	return kw->digit && act_match(kw, word) ? word[strlen(kw->name)] - '0' : -1;
}

const struct act_kw *act_find(const char *word, unsigned family)
{
	for (const struct act_list *l = act_lists; l; l = l->next)
		for (size_t i = 0; i < l->n; i++) {
			const struct act_kw *kw = act_row(l, i);

			/* two engines may each have a row of the same name ("capture") */
			if ((!act_is_own(kw) || (kw->where & family)) && act_match(kw, word))
				return kw;
		}
	return NULL;
}

/* Calls <fn> for every row accepting one of <where>, of the lists whose
 * ACT_L_BASE flag is <base>. */
static void act_foreach_base(unsigned where, int base,
                             void (*fn)(const struct act_kw *kw, void *arg), void *arg)
{
	for (const struct act_list *l = act_lists; l; l = l->next)
		for (size_t i = 0; i < l->n; i++)
			if ((act_row(l, i)->where & where) && !(l->flags & ACT_L_BASE) == !base)
				fn(act_row(l, i), arg);
}

void act_foreach(unsigned where, void (*fn)(const struct act_kw *kw, void *arg), void *arg)
{
	act_foreach_base(where, 1, fn, arg);
	act_foreach_base(where, 0, fn, arg);
}

void act_names_add(struct act_names *l, const char *name, int digit)
{
	if (l->n < l->size)
		l->n += (size_t)snprintf(l->buf + l->n, l->size - l->n, "%s%s%s",
					 l->n ? ", " : "", name, digit ? "<0-2>" : "");
}

struct names_ctx {
	struct act_names     *l;
	const struct act_kw **base;   /* NULL: counting them in <n> */
	size_t                n;
};

static void names_base(const struct act_kw *kw, void *arg)
{
	struct names_ctx *c = arg;

	if (c->base)
		c->base[c->n] = kw;
	c->n++;
}

static void names_other(const struct act_kw *kw, void *arg)
{
	struct names_ctx *c = arg;

	act_names_add(c->l, kw->name, kw->digit);
}

static int names_cmp(const void *a, const void *b)
{
	const struct act_kw *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

void act_names_of(struct act_names *l, unsigned where)
{
	struct names_ctx c = { l, NULL, 0 };

	l->n = 0;
	if (l->size)
		l->buf[0] = '\0';
	act_foreach_base(where, 1, names_base, &c);
	c.base = xcalloc(c.n ? c.n : 1, sizeof(*c.base));
	c.n = 0;
	act_foreach_base(where, 1, names_base, &c);
	qsort(c.base, c.n, sizeof(*c.base), names_cmp);
	for (size_t i = 0; i < c.n; i++)
		act_names_add(l, c.base[i]->name, c.base[i]->digit);
	free(c.base);
	act_foreach_base(where, 0, names_other, &c);
}

void act_alert(const struct act_parse *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->where & ACT_W_HTTP_ALL)
		cfg_alert(p->ctx, "'%.*s': %s", (int)strcspn(p->argv[0], "("), p->argv[0], msg);
	else
		cfg_alert(p->ctx, "action '%s': %s", p->argv[0], msg);
}

int act_rule_check(struct cfg_ctx *ctx, int argc, const char *list)
{
	if ((ctx->px->cap & PR_CAP_DEF) && !ctx->px->name) {
		cfg_alert(ctx, "not allowed in an anonymous defaults section (name it: "
			  "'defaults <name>')");
		return -1;
	}
	if (!argc) {
		cfg_alert(ctx, "expects an action (%s)", list);
		return -1;
	}
	return 0;
}

int act_alert_unknown(struct cfg_ctx *ctx, const char *word, const char *list)
{
	struct cfg_suggest sg;
	char buf[1024], *save = NULL;
	const char *s;

	snprintf(buf, sizeof(buf), "%s", list);
	cfg_suggest_init(&sg, word);
	for (char *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
		w[strcspn(w, "<")] = '\0';   /* "track-sc<0-2>" */
		cfg_suggest_add(&sg, w);
	}
	s = cfg_suggest_pick(&sg);
	if (s)
		cfg_alert(ctx, "unknown action '%s'; did you mean '%s'?", word, s);
	else
		cfg_alert(ctx, "unknown action '%s' (expects %s)", word, list);
	return -1;
}

long act_render(struct stream *s, const struct lf_expr *e, char *buf, size_t size)
{
	struct lf_ctx c;
	size_t n;

	if (s->txn)
		http_fill_lf_ctx(s, &c, e->needs);
	else
		stream_fill_lf_ctx(s, &c, e->needs);
	n = lf_render(e, &c, buf, size);
	return n + 1 >= size ? -1 : (long)n;   /* lf_render truncates silently */
}
