/* Rule conditions ("if"/"unless" ...). The rules engine (samples, ACLs,
 * maps) plugs in here: rule parsers hand the words after "if"/"unless" to
 * acl_cond_parse() and evaluate the result with acl_cond_exec(). */
#ifndef SLUICE_ACL_H
#define SLUICE_ACL_H

struct cfg_ctx;
struct stream;
struct acl_cond;

/* Parses a condition starting at argv[0] ("if" or "unless"). Returns the
 * condition, or NULL after cfg_alert(). */
struct acl_cond *acl_cond_parse(struct cfg_ctx *ctx, int argc, char **argv);

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

#endif
