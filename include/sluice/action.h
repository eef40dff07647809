/* Actions shared by several rule sets: those that need only the stream
 * (track-sc*, sc-inc-gpc0, set-map, add-acl, set-var...) are written once,
 * registered here by the module that owns them, and offered by every rule
 * engine (tcp-request connection|session|content, tcp-response content,
 * http-request, http-response, http-after-response) that the row allows. */
#ifndef SLUICE_ACTION_H
#define SLUICE_ACTION_H

#include <stddef.h>

struct cfg_ctx;
struct proxy;
struct stream;
struct lf_expr;

/* The rule sets, as bits of act_kw.where. */
#define ACT_W_TCP_CONN   0x01   /* tcp-request connection */
#define ACT_W_TCP_SESS   0x02   /* tcp-request session */
#define ACT_W_TCP_REQ    0x04   /* tcp-request content */
#define ACT_W_TCP_RES    0x08   /* tcp-response content */
#define ACT_W_HTTP_REQ   0x10   /* http-request */
#define ACT_W_HTTP_RES   0x20   /* http-response */
#define ACT_W_HTTP_AFTER 0x40   /* http-after-response */
#define ACT_W_TCP_ALL    (ACT_W_TCP_CONN | ACT_W_TCP_SESS | ACT_W_TCP_REQ | ACT_W_TCP_RES)
#define ACT_W_HTTP_ALL   (ACT_W_HTTP_REQ | ACT_W_HTTP_RES | ACT_W_HTTP_AFTER)

/* An action line being parsed: argv[0] is the action as written
 * ("track-sc1", "sc-inc-gpc0(2)", "set-var(txn.x)"); the parser reads
 * argv[idx...] (idx starts at 1), stops at the first word it does not take
 * (the rule engine then reads "if"/"unless") and leaves what the executor
 * needs in <priv>. */
struct act_parse {
	struct cfg_ctx *ctx;
	struct proxy   *px;     /* the section of the rule (may be a defaults section) */
	unsigned        where;  /* the one ACT_W_* bit of this rule set */
	int             argc;
	char          **argv;
	int             idx;
	void           *priv;
};

struct act_kw {
	const char *name;    /* "track-sc": matches argv[0] up to a '(' ... */
	int         digit;   /* ... and, when set, followed by one digit 0..2 ("track-sc1") */
	unsigned    where;   /* ACT_W_* sets accepting it */
	/* Returns 0, or -1 after cfg_alert() (which names file, line, keyword). */
	int       (*parse)(struct act_parse *p);
	/* Runs for stream <s> in rule set <where>; these actions never stop the
	 * rule set. */
	void      (*exec)(void *priv, struct stream *s, unsigned where);
	void      (*free)(void *priv);   /* may be NULL */
	const char *usage;   /* the arguments, for "expects" messages */
};

/* Registers <n> rows; the table must stay valid for the life of the
 * process (call from SLUICE_INIT). */
void act_register(const struct act_kw *kws, size_t n);

/* The row matching action word <word> (see act_kw.name), or NULL. The
 * caller checks <where> itself to say "not possible in ... rules". */
const struct act_kw *act_find(const char *word);

/* Calls <fn> for every registered row accepting one of <where> (for the
 * lists of expected actions and "did you mean" suggestions). */
void act_foreach(unsigned where, void (*fn)(const struct act_kw *kw, void *arg), void *arg);

/* A list of action names being written for messages ("a, b, c"). */
struct act_names {
	char  *buf;
	size_t size, n;
};

/* Appends <name> (followed by "<0-2>" when <digit>) to <l>, as far as it
 * fits. */
void act_names_add(struct act_names *l, const char *name, int digit);

/* Appends the shared actions accepting one of <where> to <l>. */
void act_names_shared(struct act_names *l, unsigned where);

/* The checks a rule line starts with: no rules in an anonymous defaults
 * section (as HAProxy), and an action must follow (<argc> words after the
 * keyword; the set's actions are <list>). Returns 0, or -1 after
 * cfg_alert(). */
int act_rule_check(struct cfg_ctx *ctx, int argc, const char *list);

/* Reports (cfg_alert) that <word> is no action of a rule set whose actions
 * are <list> (as act_names wrote it): suggests the closest one, else lists
 * them. Returns -1. */
int act_alert_unknown(struct cfg_ctx *ctx, const char *word, const char *list);

/* Renders log-format <e> for stream <s> (mode http or tcp) into <buf>
 * (<size> bytes, NUL-terminated). Returns the length, or -1 when it may
 * have been cut. */
long act_render(struct stream *s, const struct lf_expr *e, char *buf, size_t size);

#endif
