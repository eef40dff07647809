/* The registry of runtime-API command rows (cli_cmd.h): modules of every
 * layer register here; admin/cli.c looks the rows up to dispatch lines. */
#include <string.h>

#include <sluice/cli_cmd.h>
#include <sluice/str.h>

struct cli_kw_table {
	struct cli_kw       *kws;
	size_t               n;
	struct cli_kw_table *next;
};

static struct cli_kw_table *cli_kws;

void cli_register(struct cli_kw *kws, size_t n)
{
	struct cli_kw_table *t = xcalloc(1, sizeof(*t)), **tail = &cli_kws;

	t->kws = kws;
	t->n = n;
	while (*tail)
		tail = &(*tail)->next;
	*tail = t;
}

const struct cli_kw *cli_cmd_find(int argc, char **argv, int *nwords)
{
	const struct cli_kw *best = NULL;
	int bestw = 0;

	for (struct cli_kw_table *t = cli_kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++) {
			const struct cli_kw *kw = &t->kws[i];
			int w = 0;

			while (w < argc && kw->words[w] && strcmp(kw->words[w], argv[w]) == 0)
				w++;
			if (!kw->words[w] && w > bestw) {
				best = kw;
				bestw = w;
			}
		}
	*nwords = bestw;
	return best;
}

void cli_cmd_foreach(void (*fn)(const struct cli_kw *kw, void *arg), void *arg)
{
	for (struct cli_kw_table *t = cli_kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			fn(&t->kws[i], arg);
}

struct cli_state_table {
	struct cli_state_kw    *kws;
	size_t                  n;
	struct cli_state_table *next;
};

static struct cli_state_table *cli_states;

void cli_state_register(struct cli_state_kw *kws, size_t n)
{
	struct cli_state_table *t = xcalloc(1, sizeof(*t)), **tail = &cli_states;

	t->kws = kws;
	t->n = n;
	while (*tail)
		tail = &(*tail)->next;
	*tail = t;
}

void cli_state_dump_all(struct dstr *out)
{
	for (struct cli_state_table *t = cli_states; t; t = t->next)
		for (size_t i = 0; i < t->n; i++) {
			dstr_printf(out, "# %s\n", t->kws[i].name);
			t->kws[i].dump(out);
		}
}
