/* Internals shared by the HTTP rules (rules.c) and the redirects
 * (redirect.c): a rule, the row of its action, the parse and run states and
 * the helpers both sides use. Not for other modules: they see http_rules.h. */
#ifndef SLUICE_HTTP_RULES_INT_H
#define SLUICE_HTTP_RULES_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef USE_PCRE2
#include <pcre2.h>
#endif

#include <sluice/action.h>
#include <sluice/http_head.h>
#include <sluice/http_rules.h>
#include <sluice/logformat.h>
#include <sluice/sample.h>

struct cfg_ctx;
struct acl_cond;
struct http_redir;

/* Room for one rendered value (a log-format result, a rebuilt URI or
 * Location, a header value after a regex replacement). It lives on the
 * stack; the result is then copied into the head's arena, which
 * tune.maxrewrite keeps far smaller than this. */
#define RULES_TMP 8192

/* A configured value: a literal, or a log-format string compiled once. */
struct http_fmt {
	char           *str;  /* as configured */
	uint32_t        len;
	struct lf_expr *lf;   /* NULL: <str> holds no '%' and is used as it is */
};

struct http_rule_parse;
struct http_rule_exec;

/* An action only http rules offer (rules.c): its row of the registry
 * (action.h, ACT_L_OWN: name, ACT_W_HTTP_* sets, usage), then what the
 * engine needs. */
struct http_act_kw {
	struct act_kw kw;    /* first */
	int         arg;     /* action-specific: which URI part, DENY or TARPIT */
	int       (*parse)(struct http_rule_parse *p);  /* 0, or -1 after cfg_alert() */
	enum http_act_ret (*exec)(const struct http_rule *r, struct http_rule_exec *x);
};

struct http_rule {
	struct http_rule         *next;
	const struct http_act_kw *act;     /* NULL: run <inc> (a defaults section's set) */
	const struct http_rules  *inc;
	struct acl_cond          *cond;    /* NULL: always */
	char                     *name;    /* header name (or the -m pattern) */
	uint32_t                  nlen;
	int                       how;     /* del-header -m method, capture fetch */
	struct http_fmt           fmt;     /* value, path, replacement */
	void                     *re;      /* pcre2_code (NULL without USE_PCRE2) */
	void                     *md;      /* its pcre2_match_data, per rule: one thread,
	                                      no malloc per request */
	int                       status;  /* deny/tarpit/return/set-status */
	char                     *reason;  /* set-status reason, NULL: the standard one */
	struct http_reply        *reply;   /* deny/tarpit/return; NULL: the error page */
	struct http_redir        *redir;   /* redirect.c */
	const struct http_service *svc;    /* use-service */
	int                       cap_id;  /* capture slot, -1 until known */
	int                       cap_len; /* "capture ... len N", 0 for the id form */
	uint32_t                  ms;      /* wait-for-body: the time */
	uint32_t                  bytes;   /* wait-for-body: at-least, 0: none */
	struct act_loc            loc;     /* where it was written */
	struct smp_expr          *expr;    /* capture of any other sample (CAP_EXPR) */
	const struct act_kw      *gact;    /* a stream-only action (action.h), run by <act> */
	void                     *gpriv;   /* its parsed arguments */
};

/* A rule line being parsed: the action's parser reads argv[idx...] and
 * leaves <idx> on the first word it does not take. */
struct http_rule_parse {
	struct cfg_ctx           *ctx;
	struct proxy             *px;
	struct http_rule         *r;
	const struct http_act_kw *kw;
	int                       set;   /* enum http_rule_set, -1: "redirect" keyword */
	int                       argc;
	char                    **argv;
	int                       idx;
};

/* A run of a rule set on one head. */
struct http_rule_exec {
	struct stream       *s;
	struct http_head    *h;
	struct http_act_out *out;
	struct http_rules_pos *pos;     /* NULL: no action may wait */
	struct lf_ctx        lf;        /* filled on first use */
	int                  lf_ready;
	unsigned             lf_needs;  /* LF_N_* it was filled for */
	int                  soft;      /* strict-mode off: failed rewrites are ignored */
	/* A run of rules of one action building one thing together (the
	 * fields of a 103 Early Hints response): <group> is their action;
	 * <group_end> finishes what they built once a rule of another
	 * action runs, or the set ends. NULL: none open. */
	const struct http_act_kw *group;
	void               (*group_end)(struct http_rule_exec *x);
	uint32_t             group_len; /* what the group wrote so far (its own use) */
};

/* Offsets in a request URI: the path starts at <path>, the '?' is at
 * <qmark> (== <len> when there is none). Origin-form ("/p?q") and "*"
 * have their path at 0, absolute-form ("http://h/p?q") after the
 * authority, authority-form ("h:443") an empty one at the end. */
struct http_uri_parts {
	uint32_t path, qmark, len;
};

/* ---- rules.c ---- */

/* Does <w> start a condition? */
static inline int http_is_cond_word(const char *w)
{
	return strcmp(w, "if") == 0 || strcmp(w, "unless") == 0;
}

/* cfg_alert() naming the action (the "redirect" keyword is named already). */
void http_rule_alert(struct http_rule_parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* 0 when <n> more words are there, else -1 after saying what the action
 * expects. */
int http_rule_need(struct http_rule_parse *p, int n);

/* Stores <text> in <f>: as a literal when <use_lf> is 0 or it holds no
 * '%' (nothing of the log-format machinery runs for it), else compiled.
 * Returns 0 or -1 after cfg_alert(). */
int http_fmt_parse(struct http_rule_parse *p, struct http_fmt *f, const char *text, int use_lf);
void http_fmt_free(struct http_fmt *f);

/* Renders <f>: a literal comes back as it is, a log-format is rendered in
 * <buf> (<size> bytes). Returns 0, or -1 when it may not have fit. */
int http_fmt_render(struct http_rule_exec *x, const struct http_fmt *f, char *buf, size_t size,
                    const char **v, size_t *vlen);

/* set-header / add-header / early-hint <name> <fmt>: the name in r->name,
 * the value in r->fmt. Returns 0 or -1 after cfg_alert(). */
int http_parse_hdr_fmt(struct http_rule_parse *p);

/* Compiles <pattern> (PCRE2, JIT when possible) into p->r->re and its
 * match data p->r->md. Returns 0 or -1 after cfg_alert(). */
int http_rule_regex(struct http_rule_parse *p, const char *pattern);

/* Matches regex <re> (a pcre2_code, <md> its match data) on <s>: the
 * number of groups set plus one, 0 when it does not match. */
int http_re_exec(void *re, void *md, const char *s, size_t len);

/* Writes the replacement <repl> (<rlen> bytes) of the last http_re_exec()
 * on <subj> (which returned <rc>) into buf[*n] (<size> bytes): "\0" to
 * "\9" are the groups (empty when unset), "\\" is one backslash, other
 * bytes are copied. Returns 0 or -1 (full). */
int http_re_expand(void *md, int rc, const char *subj, const char *repl, size_t rlen, char *buf,
                   size_t size, size_t *n);

/* Ends the group of rules open in <x> (x->group_end() runs). */
void http_rules_group_end(struct http_rule_exec *x);

/* Appends <len> bytes at buf[*n] (<size> bytes). Returns 0 or -1 (full). */
int http_buf_put(char *buf, size_t size, size_t *n, const char *s, size_t len);

void http_uri_split(const struct http_str *u, struct http_uri_parts *up);

/* The http rules' own action <name> ("redirect"), or NULL. */
const struct http_act_kw *http_act_find(const char *name);

/* A rule of action <kw> read at the current line. */
struct http_rule *http_rule_new(struct cfg_ctx *ctx, const struct http_act_kw *kw);

/* Runs the action's parser, then reads the condition if any. On error
 * frees p->r (and sets it to NULL). Returns 0 or -1. */
int http_rule_parse_args(struct http_rule_parse *p);

void http_rules_append(struct http_rules *rs, struct http_rule *r);

/* The "redirect" rules of <px>: NULL when it has none and <make> is 0. */
struct http_rules *http_redirects_of(struct proxy *px, int make);

/* Runs set <rs> at nesting <depth> (0: the proxy's own set), from where
 * x->pos says a suspended run stopped. */
enum http_act_ret http_rules_run(const struct http_rules *rs, struct http_rule_exec *x, int depth);
void http_act_out_reset(struct http_act_out *out);

/* ---- redirect.c ---- */

/* redirect location|prefix|scheme <target> [options]: the action parser
 * of "http-request redirect", "http-response redirect" and "redirect". */
int http_redirect_parse(struct http_rule_parse *p);

/* Builds the Location of redirect rule <r>. Returns HTTP_ACT_REPLY with
 * x->out filled, or HTTP_ACT_ERR when it does not fit. */
enum http_act_ret http_redirect_run(const struct http_rule *r, struct http_rule_exec *x);

void http_redirect_free(struct http_redir *rd);

#endif
