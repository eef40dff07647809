/* Internal structures of ACLs and conditions (acl.c), shared with the unit
 * tests. */
#ifndef SLUICE_RULES_ACL_INT_H
#define SLUICE_RULES_ACL_INT_H

#include <sluice/pattern.h>
#include <sluice/sample.h>

struct cfg_ctx;
struct stream;

struct pat_ref;
struct acl_merge;

/* One "acl" line (or one anonymous ACL): a sample and its patterns. */
struct acl_entry {
	struct smp_expr   expr;   /* must not move: post-parse resolves its arguments in place */
	struct pat_set    pats;
	struct pat_ref  **refs;   /* the references feeding <pats> (inline patterns, files) */
	int               nrefs;
	struct acl_entry *next;
};

/* A named ACL: its lines are OR'ed. */
struct acl {
	char             *name;   /* NULL: anonymous */
	struct acl_entry *entries;
	unsigned          use;    /* SMP_USE_* of its fetches */
	struct acl       *next;
};

struct acl_term {
	struct acl *acl;
	int         neg;
};

/* Terms AND'ed. */
struct acl_suite {
	struct acl_term *terms;
	int              n;
};

/* Suites OR'ed, the result inverted by "unless". */
struct acl_cond {
	int               unless;
	struct acl_suite *suites;
	int               nsuites;
	struct acl       *anon;   /* anonymous ACLs this condition owns */
	unsigned          use;
	struct acl_merge *merge;  /* set: the condition of merged rules (acl_merge.c) */
};

/* Parses "<criterion> [flags] [operator] <values>" (argv[0] the criterion)
 * into a new entry; NULL after cfg_alert() naming <what>. */
struct acl_entry *acl_entry_parse(struct cfg_ctx *ctx, const char *what, int argc,
                                  char **argv);

/* Whether one occurrence of sample <expr> for <s> matches <pats>: 1 or 0. */
int acl_match(const struct smp_expr *expr, const struct pat_set *pats, struct stream *s);

/* Whether ACL <a> matches for <s>: 1 or 0. */
int acl_exec(const struct acl *a, struct stream *s);

/* ---- acl_merge.c ---- */

/* Whether condition <c> of a merged rule holds (c->merge is set). */
int acl_merge_exec(const struct acl_merge *m, struct stream *s);

/* Releases what acl_cond_merge() made (the merged conditions too). */
void acl_merge_free(struct acl_merge *m);

#endif
