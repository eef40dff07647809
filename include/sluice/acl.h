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

/* Evaluates <c> (NULL: always true) for stream <s>: 1 true, 0 false. */
int acl_cond_exec(const struct acl_cond *c, struct stream *s);

void acl_cond_free(struct acl_cond *c);

#endif
