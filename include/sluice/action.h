/* The one registry of rule actions: every action of every rule set
 * (tcp-request connection|session|content, tcp-response content,
 * http-request, http-response, http-after-response) is a row registered by
 * the module that owns it, saying which sets offer it. An action needing
 * only the stream (set-var, track-sc*, set-map...) is written once and run
 * by every engine; an engine's own action (http's set-header, tcp's accept)
 * is a row embedded in the engine's struct (ACT_L_OWN). */
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
	int             digit;  /* the digit a row with .digit matched ("track-sc1": 1), else -1 */
	const struct act_kw *kw; /* the row matched: a row made at run time (a Lua
	                            action) finds its own value from it */
};

/* What an action that may stop its rule set, or wait, decided (act_kw.run):
 * the codes of HAProxy's Lua "act" class, in its order. */
enum act_ret {
	ACT_RET_CONT,     /* the next rule runs */
	ACT_RET_STOP,     /* this rule set stops, the message goes on */
	ACT_RET_YIELD,    /* wait: run() is called again for the same rule (its
	                     condition not evaluated again) once the stream is
	                     woken (stream_wake()) */
	ACT_RET_ERR,      /* internal error: 500 (a response: 502), a tcp stream closes */
	ACT_RET_DONE,     /* the exchange ends here: the reply in act_res is sent
	                     (none: the client is closed without one) */
	ACT_RET_DENY,     /* 403 (a response: 502), a tcp stream is rejected */
	ACT_RET_ABORT,    /* closed at once, no reply */
	ACT_RET_INVALID,  /* 400 (a response: 502), a tcp stream is rejected */
};

struct http_reply;

/* Where a rule was written: the last one that ended its rule set is
 * s->last_rule (fetches last_rule_file, last_rule_line). */
struct act_loc {
	char *file;
	int   line;
};

/* What run() leaves for its engine besides its code. */
struct act_res {
	const struct http_reply *reply;   /* ACT_RET_DONE in http: sent to the client;
	                                     valid until the stream is woken again */
	/* Whether the action may wait (ACT_RET_YIELD): set by the engine; a
	 * rule set that cannot be suspended (http-after-response, tcp rules of
	 * an HTTP frontend) runs it to its end. */
	int                      can_yield;
};


struct act_kw {
	const char *name;    /* "track-sc": matches argv[0] up to a '(' ... */
	int         digit;   /* ... and, when set, followed by one digit 0..2 ("track-sc1") */
	unsigned    where;   /* ACT_W_* sets accepting it */
	/* Returns 0, or -1 after cfg_alert() (which names file, line, keyword).
	 * NULL for an engine's own row (act_is_own()). */
	int       (*parse)(struct act_parse *p);
	/* Runs for stream <s> in rule set <where>; these actions never stop the
	 * rule set. NULL when the row has run() instead. */
	void      (*exec)(void *priv, struct stream *s, unsigned where);
	void      (*free)(void *priv);   /* may be NULL */
	const char *usage;   /* the arguments, for "expects" messages */
	/* An action that may stop its rule set or wait (Lua): run instead of
	 * exec. Returns its decision, <res> filled as the code asks. NULL for
	 * the others. */
	enum act_ret (*run)(void *priv, struct stream *s, unsigned where, struct act_res *res);
};
/* The digit that word <word> carries after the name of row <kw> (a .digit
 * row: "track-sc2" gives 2), else -1. */
int act_digit(const struct act_kw *kw, const char *word);

/* Registers <n> stream-only rows; the table must stay valid for the life
 * of the process (call from SLUICE_INIT). */
void act_register(const struct act_kw *kws, size_t n);

/* act_register_ext() flags. */
#define ACT_L_BASE 0x01   /* base actions of the rule language (set-var): messages
                             list them with the engines' own, by name */
#define ACT_L_OWN  0x02   /* an engine's own actions (implies ACT_L_BASE): each row
                             is the first member of the engine's struct (struct
                             http_act_kw in src/http/rules_int.h, struct tcp_act_kw
                             in src/rules/tcp_rules.c) holding its parser and
                             executor; the row's own parse and exec are NULL, its
                             <where> names only that engine's sets, and its word
                             takes no "(...)" argument */

/* Registers <n> rows <stride> bytes apart from <first>, with ACT_L_* <flags>;
 * as act_register() otherwise. */
void act_register_ext(const struct act_kw *first, size_t n, size_t stride, unsigned flags);

/* Whether <kw> is an engine's own row (ACT_L_OWN): the engine reaches its
 * struct with container_of(). */
static inline int act_is_own(const struct act_kw *kw)
{
	return !kw->parse;
}

/* The row matching action word <word> (see act_kw.name) for an engine
 * whose sets are <family> (ACT_W_HTTP_ALL or ACT_W_TCP_ALL): an engine's own
 * row of another engine is not seen; a stream-only row always is. NULL when
 * none. The caller checks <where> itself to say "not possible in ... rules". */
const struct act_kw *act_find(const char *word, unsigned family);

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

/* Writes the actions of rule set <where> (one ACT_W_* bit) into <l>, as
 * messages list them: the engine's own and the base actions by name, then
 * the other stream-only ones in the order they were registered. */
void act_names_of(struct act_names *l, unsigned where);

/* cfg_alert() naming the action as its engine does: "'set-var': <msg>" in
 * http rules, "action 'set-var(txn.x)': <msg>" in tcp rules. */
void act_alert(const struct act_parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

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
