/* Rule conditions ("if"/"unless" ...). The rules engine (samples, ACLs,
 * maps) plugs in here: rule parsers hand the words after "if"/"unless" to
 * acl_cond_parse() and evaluate the result with acl_cond_exec(). */
#ifndef SLUICE_ACL_H
#define SLUICE_ACL_H

#include <stddef.h>

struct cfg_ctx;
struct stream;
struct acl_cond;

/* Parses a condition starting at argv[0] ("if" or "unless"). Returns the
 * condition, or NULL after cfg_alert(). */
struct acl_cond *acl_cond_parse(struct cfg_ctx *ctx, int argc, char **argv);

/* <c> is the condition of a request rule (http-request, use_backend): warns
 * when it uses only response fetches, which never match there. */
void acl_cond_check_request(struct cfg_ctx *ctx, const struct acl_cond *c);

/* Evaluates <c> (NULL: always true) for stream <s>: 1 true, 0 false (a
 * condition that could change with more data counts as false). */
int acl_cond_exec(const struct acl_cond *c, struct stream *s);

/* Outcome of a condition on data that may still grow (content
 * inspection): MISS means "not decided yet, wait for more". */
enum acl_test { ACL_TEST_FAIL = 0, ACL_TEST_PASS = 1, ACL_TEST_MISS = 2 };

/* Evaluates <c> (NULL: ACL_TEST_PASS) for <s> in three-valued logic: a
 * term whose fetch said SMP_F_MAY_CHANGE without matching is a miss, "!"
 * and "unless" leave a miss as it is. */
enum acl_test acl_cond_test(const struct acl_cond *c, struct stream *s);

void acl_cond_free(struct acl_cond *c);

/* Rule merging. A run of rules with the same action whose conditions each
 * test one sample against patterns ("if { path /a }", "if blocked" where
 * "blocked" is one acl line) behaves as one rule testing the sample once
 * against the union of their patterns; acl_cond_merge() builds that
 * condition, so that ten thousand such rules cost one lookup per request.
 * Runtime changes of the patterns ("add acl", "del acl") reach the union,
 * which is fed from the same references. */

/* Whether <a> and <b> can be merged: each one a single, positive test of
 * one acl line, on the same sample expression, method and flags. */
int acl_cond_mergeable(const struct acl_cond *a, const struct acl_cond *b);

/* A condition true when one of conds[0..n) is (they must be mergeable
 * with each other); it takes ownership of them. Returns it, or NULL with
 * an allocated <err> (nothing taken then). */
struct acl_cond *acl_cond_merge(struct acl_cond **conds, int n, char **err);

/* Merges the runs of a rule list: rules are structures linked by a "next"
 * pointer at offset <next_off>, holding their condition at <cond_off>.
 * Rules <same>() says do the same thing, with mergeable conditions, become
 * one: the first keeps the merged condition, the others lose theirs and go
 * to <drop>(). <*last> gets the last rule left (NULL for an empty list).
 * Returns 0, or -1 with <*failed> the first rule of the run that could not
 * be merged and an allocated <err>. */
int acl_merge_rules(void *head, size_t next_off, size_t cond_off,
                    int (*same)(const void *a, const void *b), void (*drop)(void *r),
                    void **last, void **failed, char **err);

#endif
