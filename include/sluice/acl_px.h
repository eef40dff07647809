/* Per-proxy state of the rules engine (struct proxy.acl): named ACLs and
 * use_backend rules; and the backend selection the HTTP analyser calls. */
#ifndef SLUICE_ACL_PX_H
#define SLUICE_ACL_PX_H

struct proxy;
struct stream;
struct acl;
struct use_be_rule;

struct acl_px {
	struct acl         *acls;        /* named ACLs, most recent first */
	struct use_be_rule *use_be;      /* use_backend rules, in order */
	struct use_be_rule **use_be_tail;
};

/* The backend of the first use_backend rule of frontend <fe> whose
 * condition holds for <s>, or NULL (then default_backend applies). Call
 * after the frontend's http-request rules, while txn->req_head is set. */
struct proxy *use_backend_select(struct proxy *fe, struct stream *s);

#endif
