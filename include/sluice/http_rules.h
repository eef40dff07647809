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
	HTTP_ACT_INTERNAL, /* an action failed (a Lua error code): 500 */
	HTTP_ACT_INVALID,  /* an action found the message invalid: 400 (a response: 502) */
	HTTP_ACT_ABORT,    /* the exchange ends without a reply: the client is closed */
	HTTP_ACT_YIELD,    /* an action waits (http_rules_exec_at()): run the set again
	                      from where it stopped once the stream is woken */
	HTTP_ACT_TIMEOUT,  /* an action waited too long for the message (wait-for-body):
	                      408 for a request, 504 for a response */
};

struct http_act_out {
	int                      status;
	const struct http_reply *reply;     /* NULL: the proxy's error page for <status> */
	struct http_str          location;  /* redirect: Location value (head arena) */
	struct http_str          cookie;    /* redirect set-cookie: Set-Cookie value */
	const struct http_service *service; /* use-service: answered by this service */
	struct http_str          www_auth;  /* auth: WWW-Authenticate value added to the reply */
	int                      proxy_auth; /* ... as Proxy-Authenticate (a 407: a proxied
	                                        request, option http-use-proxy-header) */
};

/* Which rule set of a proxy. */
enum http_rule_set { HTTP_RS_REQ, HTTP_RS_RES, HTTP_RS_AFTER, HTTP_RS_COUNT };

/* The rules of <px> for <set> (never NULL). */
struct http_rules *http_rules_of(struct proxy *px, enum http_rule_set set);

struct act_kw;
struct cfg_ctx;

/* Puts first in <px>'s rule set <set> a rule without condition running
 * stream-only action <gact> (its run(), which may wait) with <priv>: a
 * filter's event (SPOE) running before the rules written. <priv> stays
 * the caller's unless <gact> has a free(). The rule names ctx's line. */
void http_rules_prepend_action(struct cfg_ctx *ctx, struct proxy *px, enum http_rule_set set,
                               const struct act_kw *gact, void *priv);

/* Runs <rules> for stream <s> on head <h> (the request for HTTP_RS_REQ, the
 * response for the others). Returns what stopped it; <out> is filled for
 * DENY/TARPIT/REPLY. No action may wait: one that could is run to its end. */
enum http_act_ret http_rules_exec(const struct http_rules *rules, struct stream *s,
                                  struct http_head *h, struct http_act_out *out);

/* Where a run of a rule set that an action suspended stands: the rule at
 * each level (a defaults section's set is included by one rule). <n> 0:
 * none is suspended, the run starts with the first rule. */
struct http_rules_pos {
	const struct http_rule *at[2];
	int                     n;
	int                     soft;   /* strict-mode off when it waited */
};

/* As http_rules_exec(), but an action may wait: HTTP_ACT_YIELD is returned
 * with <pos> recording the rule, and the next call with the same <pos>
 * runs that rule's action again (its condition is not evaluated again),
 * then goes on. <pos> must be zeroed before the first run. */
enum http_act_ret http_rules_exec_at(const struct http_rules *rules, struct stream *s,
                                     struct http_head *h, struct http_act_out *out,
                                     struct http_rules_pos *pos);

/* The part of a request target http_head_set_target() replaces, as the
 * actions set-path, set-pathq, set-query and set-uri do. */
enum http_target_part { HTTP_TP_PATH, HTTP_TP_PATHQ, HTTP_TP_QUERY, HTTP_TP_URI };

/* Replaces part <part> of the request target of head <h> by <v> (<vlen>
 * bytes): the path keeps the scheme, authority and query around it (an
 * empty origin-form path becomes "/"), the query its '?'. Returns 0, or -1
 * when it does not fit. */
int http_head_set_target(struct http_head *h, enum http_target_part part, const char *v,
                         size_t vlen);

/* In every field <name> (<nlen> bytes) of <h>, replaces the whole value
 * (<per_value> 0, replace-header) or each comma-separated value (1,
 * replace-value) that regex <re> (a pcre2_code, <md> its match data)
 * matches by the replacement <repl> gives (asked once, on the first
 * match), in which \0 to \9 are the groups. Returns 0, or -1 when it does
 * not fit or <repl> failed. */
int http_head_replace_re(struct http_head *h, const char *name, size_t nlen, void *re, void *md,
                         int per_value, int (*repl)(void *arg, const char **v, size_t *len),
                         void *arg);

/* Runs the "redirect" rules of <px> on request head <h>; HAProxy evaluates
 * them after every http-request rule. Returns HTTP_ACT_CONT when none
 * applies, HTTP_ACT_REPLY with <out> filled (status, location in the head's
 * arena, cookie), or HTTP_ACT_ERR when the Location does not fit in the
 * arena. */
enum http_act_ret http_redirect_exec(struct proxy *px, struct stream *s, struct http_head *h,
                                     struct http_act_out *out);

#endif
