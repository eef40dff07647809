/* Private to the stick-table files (stktable.c, stk_fetch.c, stk_stick.c,
 * stk_cli.c): the per-proxy part and the rule lists. */
#ifndef SLUICE_STK_INT_H
#define SLUICE_STK_INT_H

#include <sluice/sample.h>
#include <sluice/stktable.h>

struct acl_cond;

enum stk_rule_kind { STK_R_ON, STK_R_MATCH, STK_R_STORE_REQ, STK_R_STORE_RES };

/* stick on|match|store-request|store-response <expr> [table T] [cond] */
struct stk_rule {
	enum stk_rule_kind kind;
	struct smp_expr    expr;
	struct stktable   *t;
	struct acl_cond   *cond;
	struct stk_rule   *next;
};

struct stk_px {
	struct stktable *table;     /* its own stick-table, or NULL */
	struct stk_rule *rules;     /* stick rules, in order */
	struct stk_rule **tail;
};

/* The stk part of <px>, allocated on first use. */
struct stk_px *stk_px_get(struct proxy *px);

/* Now, in ms, as the entries' clocks count it (stk_ms), and its low 32
 * bits (the rates' clock). */
uint64_t stk_ms(void);
uint32_t stk_now(void);

/* Replaces the clock (tick_now_ms()) by <fn> (NULL: back to it), for unit
 * tests that move time. */
void stk_set_clock(uint64_t (*fn)(void));

/* Builds the key of <t> from <s>'s client address. Returns 0 or -1. */
int stk_key_from_src(const struct stktable *t, const struct stream *s, unsigned char *key,
                     uint32_t *klen);

#endif
