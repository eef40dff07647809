/* Rule conditions (acl.h), placeholder until the rules engine (samples,
 * ACLs, maps) is built: every "if"/"unless" is refused at parse time, so
 * only unconditional rules exist and acl_cond_exec() only sees NULL. */
#include <sluice/acl.h>
#include <sluice/cfg.h>
#include <sluice/common.h>

struct acl_cond *acl_cond_parse(struct cfg_ctx *ctx, int argc, char **argv)
{
	cfg_alert(ctx, "conditions ('if'/'unless') need the rules engine (ACLs), "
		  "not supported yet");
	return NULL;
}

int acl_cond_exec(const struct acl_cond *c, struct stream *s)
{
	/* No parser returns a condition yet: a non-NULL one is a bug. */
	BUG_ON(c != NULL, "condition without a rules engine");
	return 1;
}

void acl_cond_free(struct acl_cond *c)
{
	BUG_ON(c != NULL, "condition without a rules engine");
}
