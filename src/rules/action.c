/* The registry of actions shared by the rule engines (action.h): each
 * owning module registers its rows; tcp and http rule engines look them up
 * when their own table does not know the word. */
#include <ctype.h>
#include <stdio.h>
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
	size_t               n;
	struct act_list     *next;
};

static struct act_list *act_lists;

void act_register(const struct act_kw *kws, size_t n)
{
	struct act_list *l = xcalloc(1, sizeof(*l));

	l->rows = kws;
	l->n = n;
	l->next = act_lists;
	act_lists = l;
}

/* Whether <word> (up to '(' or its end) names row <kw>. */
static int act_match(const struct act_kw *kw, const char *word)
{
	size_t n = strcspn(word, "("), k = strlen(kw->name);

	if (kw->digit)
		return n == k + 1 && memcmp(word, kw->name, k) == 0 && word[k] >= '0' &&
		       word[k] <= '2';
	return n == k && memcmp(word, kw->name, k) == 0;
}

const struct act_kw *act_find(const char *word)
{
	for (const struct act_list *l = act_lists; l; l = l->next)
		for (size_t i = 0; i < l->n; i++)
			if (act_match(&l->rows[i], word))
				return &l->rows[i];
	return NULL;
}

void act_foreach(unsigned where, void (*fn)(const struct act_kw *kw, void *arg), void *arg)
{
	for (const struct act_list *l = act_lists; l; l = l->next)
		for (size_t i = 0; i < l->n; i++)
			if (l->rows[i].where & where)
				fn(&l->rows[i], arg);
}

void act_names_add(struct act_names *l, const char *name, int digit)
{
	if (l->n < l->size)
		l->n += (size_t)snprintf(l->buf + l->n, l->size - l->n, "%s%s%s",
					 l->n ? ", " : "", name, digit ? "<0-2>" : "");
}

static void names_one(const struct act_kw *kw, void *arg)
{
	act_names_add(arg, kw->name, kw->digit);
}

void act_names_shared(struct act_names *l, unsigned where)
{
	act_foreach(where, names_one, l);
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
