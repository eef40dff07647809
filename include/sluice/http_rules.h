/* http-request, http-response and http-after-response rules and the
 * "redirect" keyword: each action is a table row (name, parser, executor)
 * registered by this module. Rules run on an editable head (http_head.h);
 * a final action (deny, tarpit, return, redirect) fills a struct
 * http_act_out that the HTTP analyser turns into a response. */
#ifndef SLUICE_HTTP_RULES_H
#define SLUICE_HTTP_RULES_H

#include <sluice/http_head.h>

struct proxy;
struct stream;
struct http_reply;
struct http_rule;
struct http_service;

struct http_rules {
	struct http_rule *head, *tail;
};

enum http_act_ret {
	HTTP_ACT_CONT,     /* every rule ran (or none matched a final action) */
	HTTP_ACT_ALLOW,    /* "allow": stop this rule set, go on */
	HTTP_ACT_DENY,     /* answer out.status (out.reply if set), count a denial */
	HTTP_ACT_TARPIT,   /* hold the client for timeout tarpit, then answer */
	HTTP_ACT_REPLY,    /* answer with out (return, redirect) */
	HTTP_ACT_ERR,      /* a rewrite failed (no room): 500 for a request, 502 for a response */
};

struct http_act_out {
	int                      status;
	const struct http_reply *reply;     /* NULL: the proxy's error page for <status> */
	struct http_str          location;  /* redirect: Location value (head arena) */
	struct http_str          cookie;    /* redirect set-cookie: Set-Cookie value */
	const struct http_service *service; /* use-service: answered by this service */
	struct http_str          www_auth;  /* auth: WWW-Authenticate value added to the reply */
};

/* Which rule set of a proxy. */
enum http_rule_set { HTTP_RS_REQ, HTTP_RS_RES, HTTP_RS_AFTER, HTTP_RS_COUNT };

/* The rules of <px> for <set> (never NULL). */
struct http_rules *http_rules_of(struct proxy *px, enum http_rule_set set);

/* Runs <rules> for stream <s> on head <h> (the request for HTTP_RS_REQ, the
 * response for the others). Returns what stopped it; <out> is filled for
 * DENY/TARPIT/REPLY. */
enum http_act_ret http_rules_exec(const struct http_rules *rules, struct stream *s,
                                  struct http_head *h, struct http_act_out *out);

/* Runs the "redirect" rules of <px> on request head <h>; HAProxy evaluates
 * them after every http-request rule. Returns HTTP_ACT_CONT when none
 * applies, HTTP_ACT_REPLY with <out> filled (status, location in the head's
 * arena, cookie), or HTTP_ACT_ERR when the Location does not fit in the
 * arena. */
enum http_act_ret http_redirect_exec(struct proxy *px, struct stream *s, struct http_head *h,
                                     struct http_act_out *out);

#endif
