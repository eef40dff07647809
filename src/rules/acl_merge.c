/* Rule merging (acl.h): the condition of a run of same-action rules that
 * each test one sample against patterns, evaluated as one lookup in the
 * union of their patterns. */
#include <stdlib.h>
#include <string.h>

#include <sluice/acl.h>
#include <sluice/common.h>
#include <sluice/map.h>
#include <sluice/str.h>

#include "acl_int.h"

struct acl_merge {
	const struct smp_expr *expr;   /* that of the first condition's entry */
	struct pat_set         pats;   /* fed from every reference of the entries */
	struct acl_cond      **orig;   /* the merged conditions, kept for <expr> */
	int                    norig;
};

/* The entry of a single positive one-line test, else NULL. */
static const struct acl_entry *single_entry(const struct acl_cond *c)
{
	const struct acl_term *t;

	if (!c || c->merge || c->unless || c->nsuites != 1 || c->suites[0].n != 1)
		return NULL;
	t = &c->suites[0].terms[0];
	if (t->neg || !t->acl->entries || t->acl->entries->next)
		return NULL;
	if (t->acl->entries->pats.match == PAT_M_FOUND || t->acl->entries->pats.match == PAT_M_BOOL)
		return NULL;
	return t->acl->entries;
}

int acl_cond_mergeable(const struct acl_cond *a, const struct acl_cond *b)
{
	const struct acl_entry *x = single_entry(a), *y = single_entry(b);

	return x && y && x->pats.match == y->pats.match && x->pats.flags == y->pats.flags &&
	       smp_expr_equal(&x->expr, &y->expr);
}

static int ptr_cmp(const void *a, const void *b)
{
	const void *x = *(void *const *)a, *y = *(void *const *)b;

	return x < y ? -1 : x > y;
}

struct acl_cond *acl_cond_merge(struct acl_cond **conds, int n, char **err)
{
	const struct acl_entry *first = single_entry(conds[0]);
	struct acl_merge *m = xcalloc(1, sizeof(*m));
	struct acl_cond *c;
	struct pat_ref **refs;
	int nrefs = 0;

	for (int i = 0; i < n; i++)
		nrefs += single_entry(conds[i])->nrefs;
	refs = xcalloc((size_t)nrefs + 1, sizeof(*refs));
	nrefs = 0;
	for (int i = 0; i < n; i++) {
		const struct acl_entry *e = single_entry(conds[i]);

		memcpy(refs + nrefs, e->refs, (size_t)e->nrefs * sizeof(*refs));
		nrefs += e->nrefs;
	}
	/* a named ACL used by several of the rules feeds the union once */
	qsort(refs, (size_t)nrefs, sizeof(*refs), ptr_cmp);
	pat_set_init(&m->pats, first->pats.match, first->pats.flags);
	for (int i = 0; i < nrefs; i++) {
		if (i && refs[i] == refs[i - 1])
			continue;
		if (pat_ref_attach(refs[i], &m->pats, err) == -1) {
			pat_ref_detach(&m->pats);
			pat_set_free(&m->pats);
			free(refs);
			free(m);
			return NULL;
		}
	}
	free(refs);
	m->expr = &first->expr;
	m->orig = xcalloc((size_t)n, sizeof(*m->orig));
	memcpy(m->orig, conds, (size_t)n * sizeof(*m->orig));
	m->norig = n;
	c = xcalloc(1, sizeof(*c));
	c->merge = m;
	for (int i = 0; i < n; i++)
		c->use |= conds[i]->use;
	return c;
}

/* The fields of a rule of a list given by offsets. */
#define NEXT(r) (*(void **)((char *)(r) + next_off))
#define COND(r) (*(struct acl_cond **)((char *)(r) + cond_off))

int acl_merge_rules(void *head, size_t next_off, size_t cond_off,
                    int (*same)(const void *a, const void *b), void (*drop)(void *r),
                    void **last, void **failed, char **err)
{
	*last = NULL;
	for (void *r = head; r; r = NEXT(r)) {
		void *end = NEXT(r), *next;
		struct acl_cond **conds, *c;
		int n = 1;

		*last = r;
		while (end && same(r, end) && acl_cond_mergeable(COND(r), COND(end))) {
			end = NEXT(end);
			n++;
		}
		if (n < 2)
			continue;
		conds = xcalloc((size_t)n, sizeof(*conds));
		n = 0;
		for (void *x = r; x != end; x = NEXT(x))
			conds[n++] = COND(x);
		c = acl_cond_merge(conds, n, err);
		free(conds);
		if (!c) {
			*failed = r;
			return -1;
		}
		COND(r) = c;
		for (void *x = NEXT(r); x != end; x = next) {
			next = NEXT(x);
			COND(x) = NULL;   /* owned by the merged condition now */
			drop(x);
		}
		NEXT(r) = end;
	}
	return 0;
}

#undef NEXT
#undef COND

int acl_merge_exec(const struct acl_merge *m, struct stream *s)
{
	return acl_match(m->expr, &m->pats, s);
}

void acl_merge_free(struct acl_merge *m)
{
	pat_ref_detach(&m->pats);
	pat_set_free(&m->pats);
	for (int i = 0; i < m->norig; i++)
		acl_cond_free(m->orig[i]);
	free(m->orig);
	free(m);
}
