/* Rule-based health checks ("option tcp-check" with "tcp-check connect,
 * send, send-binary, expect [!] string|rstring|binary, comment"): once the
 * check's connection is up, the rules are played in order over it. */
#ifndef SLUICE_TCPCHECK_H
#define SLUICE_TCPCHECK_H

#include <stddef.h>
#include <stdint.h>

struct proxy;
struct check;

enum tcpchk_type { TCPCHK_CONNECT, TCPCHK_SEND, TCPCHK_EXPECT, TCPCHK_COMMENT };
enum tcpchk_match { TCPCHK_M_STRING, TCPCHK_M_RSTRING, TCPCHK_M_BINARY };

struct tcpchk_rule {
	struct tcpchk_rule *next;
	enum tcpchk_type    type;
	enum tcpchk_match   match;
	int                 inverse;   /* expect !...: the pattern must NOT appear */
	char               *data;      /* bytes to send or to find; regex source */
	size_t              len;
	uint16_t            port;      /* connect port */
	void               *re;        /* compiled regex (pcre2_code) */
	char               *text;      /* comment, or the pattern as written (logs) */
};

/* Result of playing the rules after new events. */
enum tcpchk_res { TCPCHK_WAIT_READ, TCPCHK_PASS, TCPCHK_FAIL };

/* Plays the rules of <c>'s backend from its current step over its socket.
 * Reads what arrived when an expect waits for data. Sets <info> (static or
 * in <c>) on failure. */
enum tcpchk_res tcpchk_run(struct check *c, const char **info);

/* Whether <px> checks with rules, and the port of a leading connect rule. */
int tcpchk_enabled(const struct proxy *px);
uint16_t tcpchk_connect_port(const struct proxy *px);

/* Releases a check's read buffer (between runs). */
void tcpchk_reset(struct check *c);

/* Frees <px>'s rules. */
void tcpchk_free(struct proxy *px);

#endif
