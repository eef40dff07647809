/* Rule-based health checks ("option tcp-check" with "tcp-check connect,
 * send, send-binary, expect [!] string|rstring|binary, comment", and the
 * rulesets of "option httpchk" and the protocol checks): once the check's
 * connection is up, the rules are played in order over it. */
#ifndef SLUICE_TCPCHECK_H
#define SLUICE_TCPCHECK_H

#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sluice/check.h>

struct proxy;
struct cfg_ctx;
struct httpchk_req;

#define TCPCHK_RBUF_MAX 16384   /* bytes of an answer kept for expect rules (tune.bufsize) */

enum tcpchk_type { TCPCHK_CONNECT, TCPCHK_SEND, TCPCHK_EXPECT, TCPCHK_COMMENT };
enum tcpchk_match {
	TCPCHK_M_STRING,        /* the bytes received contain <data> */
	TCPCHK_M_RSTRING,       /* ... match the regex <re> */
	TCPCHK_M_BINARY,        /* ... contain <data> (given in hex) */
	TCPCHK_M_HTTP_STATUS,   /* the HTTP status is in <codes> */
	TCPCHK_M_HTTP_RSTATUS,  /* the HTTP status (3 digits) matches <re> */
	TCPCHK_M_HTTP_BODY,     /* the HTTP body contains <data> */
	TCPCHK_M_HTTP_RBODY,    /* the HTTP body matches <re> */
	TCPCHK_M_PROTO,         /* <proto> reads the answer of a protocol check */
};

/* An inclusive range of HTTP status codes ("200-399", "503"). */
struct tcpchk_codes {
	uint16_t lo, hi;
};

/* Result of playing the rules after new events. */
enum tcpchk_res {
	TCPCHK_WAIT_READ,   /* an expect waits for more of the answer */
	TCPCHK_PASS,        /* every rule passed (or an expect ended the check, e.g. L7OKC) */
	TCPCHK_FAIL,        /* a rule failed */
	TCPCHK_RECONNECT,   /* a connect rule asks for a new connection (tcpchk_target()) */
};

struct check;
struct tcpchk_rule;

/* A protocol check's answer parser: looks at c->rbuf[0..c->rlen) (the
 * server may still send more unless c->rclosed). Returns TCPCHK_WAIT_READ,
 * TCPCHK_PASS or TCPCHK_FAIL, setting <res> and <info> (static or in <buf>
 * of <sz> bytes). */
typedef enum tcpchk_res (*tcpchk_proto_fn)(struct check *c, const struct tcpchk_rule *r,
                                           enum chk_result *res, const char **info,
                                           char *buf, size_t sz);

#define TCPCHK_F_HTTP    0x01  /* an http-check rule (HTTP send/expect) */
#define TCPCHK_F_HAS_ADDR 0x02 /* connect: <addr> is set */
#define TCPCHK_F_PROTO   0x04  /* built by a protocol check (redis-check, smtpchk, ...) */

struct tcpchk_rule {
	struct tcpchk_rule *next;
	enum tcpchk_type    type;
	enum tcpchk_match   match;
	unsigned            flags;     /* TCPCHK_F_* */
	int                 inverse;   /* expect !...: the pattern must NOT appear */
	char               *data;      /* bytes to send or to find; regex source */
	size_t              len;
	uint16_t            port;      /* connect port, 0: the check's */
	struct sockaddr_storage addr;  /* connect addr (TCPCHK_F_HAS_ADDR) */
	socklen_t           addrlen;
	void               *re;        /* compiled regex (pcre2_code) */
	char               *text;      /* comment, or the pattern as written (logs) */
	char               *comment;   /* "comment" preceding the rule: added to its failure info */
	struct tcpchk_codes *codes;    /* TCPCHK_M_HTTP_STATUS */
	int                 ncodes;
	struct httpchk_req *req;       /* HTTP send, as configured (built into <data>) */
	tcpchk_proto_fn     proto;     /* TCPCHK_M_PROTO */
	enum chk_result     ok_res;    /* result when this expect ends the rules (0: L7OK) */
	const char         *ok_info;   /* static info when it does ("Redis server is ok") */
};

/* Plays the rules of <c>'s backend from its current step over its socket.
 * Reads what arrived when an expect waits for data. On TCPCHK_PASS and
 * TCPCHK_FAIL sets <res> (L7OK, L7OKC, L6OK, L7RSP, L7STS, ...) and <info>
 * (static or in <c>; may be empty). On TCPCHK_RECONNECT, the caller closes the
 * connection, opens the one tcpchk_target() names and calls again once it
 * is up. */
enum tcpchk_res tcpchk_run(struct check *c, enum chk_result *res, const char **info);

/* The rules a check of <px> plays: the http-check ruleset with "option
 * httpchk", the tcp-check one with "option tcp-check" (or a protocol
 * check), NULL for a plain connect check. */
const struct tcpchk_rule *tcpchk_rules(const struct proxy *px);

/* Whether <px> checks with rules, and the port of a leading connect rule. */
int tcpchk_enabled(const struct proxy *px);
uint16_t tcpchk_connect_port(const struct proxy *px);

/* The info of a failed connection of <c> (<err>: the system's words): for
 * tcp-check rules, where in the rules it failed, as HAProxy says it
 * ("Connection refused at initial connection step of tcp-check"). Returns
 * <err> or a static buffer. */
const char *tcpchk_conn_error(const struct check *c, const char *err);

/* Where <c> connects for connect rule <r> (NULL: the first connection of a
 * run, which a leading connect rule may redirect): <r>'s address and port,
 * else the check's. Fills <ss>/<len>. */
void tcpchk_target(const struct check *c, const struct tcpchk_rule *r,
                   struct sockaddr_storage *ss, socklen_t *len);

/* Whether the answer being read can grow no more (closed, or the buffer
 * is full): an expect must decide with what it has. */
int tcpchk_input_done(const struct check *c);

/* Reads into / writes from <buf> over the running check's connection (TLS
 * or not): bytes, 0 at the end of input (reads), or -1 with errno set. */
ssize_t tcpchk_io_recv(struct check *c, char *buf, size_t len);
ssize_t tcpchk_io_send(struct check *c, const char *data, size_t len);

/* The result of a check whose connection is up but whose rules did not
 * finish in time: L7TOUT, or L6TOUT while a TLS hello is awaited. */
enum chk_result tcpchk_timeout_result(const struct check *c);

/* Releases a check's read buffer and rule progress (between runs). */
void tcpchk_reset(struct check *c);

/* Frees <px>'s tcp-check rules. */
void tcpchk_free(struct proxy *px);

/* Frees one rule and what it owns (for the modules building rulesets). */
void tcpchk_rule_free(struct tcpchk_rule *r);

/* Compiles r->data as a regex into r->re. Returns 0, or -1 after
 * cfg_alert() naming the problem. */
int tcpchk_compile_regex(struct cfg_ctx *ctx, struct tcpchk_rule *r);

/* Whether the regex of <r> (compiled by tcpchk_compile_regex()) matches
 * buf[0..len). */
int tcpchk_regex_match(const struct tcpchk_rule *r, const char *buf, size_t len);

/* Makes <px> check with the tcp-check ruleset <rules> (replacing the rules
 * it had): the protocol checks ("option redis-check", "option smtpchk", ...)
 * build their rules and hand them over. */
void tcpchk_set_rules(struct proxy *px, struct tcpchk_rule *rules);

#endif
