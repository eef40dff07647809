/* tcp-request connection|session|content and tcp-response content rules,
 * with their inspect-delay: the keywords, the table of their actions and
 * the engine the stream runs at each step (accept, after the PROXY header,
 * while request or response data is inspected). */
#ifndef SLUICE_TCP_RULES_H
#define SLUICE_TCP_RULES_H

#include <stdint.h>

struct proxy;
struct stream;

enum tcp_rule_set {
	TCP_RS_CONN,   /* tcp-request connection: at accept */
	TCP_RS_SESS,   /* tcp-request session: after the PROXY header */
	TCP_RS_REQ,    /* tcp-request content: on the request data */
	TCP_RS_RES,    /* tcp-response content: on the response data */
	TCP_RS_COUNT
};

/* What a run of a rule set decided. */
enum tcp_verdict {
	TCP_V_ACCEPT,  /* "accept", or the rules ran out: go on */
	TCP_V_REJECT,  /* "reject": close the connection */
	TCP_V_DROP,    /* "silent-drop": close without a FIN (RST) */
	TCP_V_CLOSE,   /* "close" (tcp-response): close both sides */
	TCP_V_WAIT,    /* a condition needs more data: call again later */
};

/* Whether <px> runs rules of <set> (its own, or those of the defaults
 * section it inherits from). */
int tcp_rules_has(const struct proxy *px, enum tcp_rule_set set);

/* The inspect-delay of <px> for set TCP_RS_REQ or TCP_RS_RES, in ms; 0
 * when none (the rules then run once on what is there). */
uint32_t tcp_inspect_delay(const struct proxy *px, enum tcp_rule_set set);

/* tcp_rules_exec() flags. */
#define TCP_X_PARTIAL 0x1   /* more data may still arrive */
#define TCP_X_YIELD   0x2   /* an action may wait (Lua): the caller calls again
                               when the stream is woken */

/* Runs the rules of <set> of <px> for <s>, starting with rule number
 * <*pos> (0 the first; the defaults section's rules come first). With
 * TCP_X_PARTIAL in <flags>, more data may still arrive: a condition that
 * cannot be decided yet (a fetch saying SMP_F_MAY_CHANGE) stops the run
 * with TCP_V_WAIT and <*pos> on that rule; otherwise such a condition is
 * false. With TCP_X_YIELD, an action that waits stops it with TCP_V_WAIT
 * too, <*pos> on its rule, which the next call resumes without testing its
 * condition again (STRM_F_ACT_WAIT); otherwise no action waits. Sets
 * s->smp_partial while conditions run. Returns the verdict. */
enum tcp_verdict tcp_rules_exec(const struct proxy *px, enum tcp_rule_set set,
                                struct stream *s, int *pos, int flags);

struct act_kw;

/* Puts first among <px>'s own rules of <set> a rule without condition
 * running stream-only action <kw> (its run(), which may wait) with <priv>:
 * a filter's event (SPOE). <priv> stays the caller's unless <kw> has a
 * free(). A defaults section's rules still run before it. */
void tcp_rules_prepend_action(struct proxy *px, enum tcp_rule_set set, const struct act_kw *kw,
                              void *priv);

/* Whether <px> (a mode tcp frontend) has "tcp-request content switch-mode
 * http" rules: its HTTP settings, rules and backends in mode http are then
 * meant for the connections that switch. */
int tcp_rules_switch_http(const struct proxy *px);

/* Gives back what the rules left in <s> (captures); at the end of a
 * stream. */
void tcp_rules_stream_release(struct stream *s);

#endif
