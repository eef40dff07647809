/* Condition expressions of `-cc EXPR` and of `.if`/`.elif` config blocks:
 * version_atleast(V), version_before(V), feature(NAME), defined(VAR),
 * streq(A,B), strneq(A,B), numbers, with ! && || and parentheses. */
#ifndef SLUICE_CCEXPR_H
#define SLUICE_CCEXPR_H

#include <stddef.h>

/* Evaluates <expr>. Returns 1 (true), 0 (false) or -1 with <err> pointing to
 * a static message and <errpos> to the byte offset where it went wrong. */
int cc_eval(const char *expr, const char **err, size_t *errpos);

/* Compares dotted versions numerically ("2.6" vs "2.4.18", "2.10-dev1").
 * Returns <0, 0 or >0 like strcmp; a missing component counts as 0. */
int cc_version_cmp(const char *a, const char *b);

#endif
