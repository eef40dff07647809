/* Per-proxy state of the rules engine (struct proxy.acl): named ACLs,
 * use_backend and use-server rules; and the backend and server selections
 * the stream and the HTTP analyser call. */
#ifndef SLUICE_ACL_PX_H
#define SLUICE_ACL_PX_H

struct proxy;
struct stream;
struct acl;
struct use_be_rule;
struct use_srv_rule;
struct server;

struct acl_px {
	struct acl         *acls;        /* named ACLs, most recent first */
	struct use_be_rule *use_be;      /* use_backend rules, in order */
	struct use_be_rule **use_be_tail;
	struct use_srv_rule *use_srv;    /* use-server rules, in order */
};

/* The backend of the first use_backend rule of frontend <fe> whose
 * condition holds for <s>, or NULL (then default_backend applies). Call
 * after the frontend's http-request rules, while txn->req_head is set. */
struct proxy *use_backend_select(struct proxy *fe, struct stream *s);

/* The server of the first use-server rule of backend <be> whose server is
 * usable and whose condition holds for <s>, or NULL (load balancing then
 * chooses). */
struct server *use_server_select(struct proxy *be, struct stream *s);

#endif
