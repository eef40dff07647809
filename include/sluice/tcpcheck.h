/* Rule-based health checks ("option tcp-check" with "tcp-check connect,
 * send[-lf], send-binary[-lf], expect, set-var, unset-var, comment", and
 * the rulesets of "option httpchk" and the protocol checks): once the
 * check's connection is up, the rules are played in order over it. */
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
struct httpchk_hdrm;
struct lf_expr;
struct smp_expr;
struct sample;

#define TCPCHK_RBUF_MAX 16384   /* bytes of an answer kept for expect rules (tune.bufsize) */

enum tcpchk_type {
	TCPCHK_CONNECT, TCPCHK_SEND, TCPCHK_EXPECT, TCPCHK_COMMENT,
	TCPCHK_SET_VAR,         /* set-var(<var>) <expr> / set-var-fmt(<var>) <fmt> */
	TCPCHK_UNSET_VAR,       /* unset-var(<var>) */
};
enum tcpchk_match {
	TCPCHK_M_STRING,        /* the bytes received contain <data> (or <lf> rendered) */
	TCPCHK_M_RSTRING,       /* ... match the regex <re> */
	TCPCHK_M_BINARY,        /* ... contain <data> (given in hex, or <lf> rendered in hex) */
	TCPCHK_M_RBINARY,       /* ... written in hex, match the regex <re> */
	TCPCHK_M_HTTP_HDR,      /* a header field of the HTTP answer matches <hdrm> */
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
#define TCPCHK_F_HEX     0x08  /* send-binary-lf / expect binary-lf: <lf> renders hex digits */
#define TCPCHK_F_MIN_RECV 0x10 /* expect: <min_recv> is set */

/* Options of a connect rule (tcpchk_rule.conn_opts). */
#define TCPCHK_CO_DEFAULT 0x01 /* "default": the server's check settings, where not redefined */
#define TCPCHK_CO_SSL     0x02 /* "ssl" */
#define TCPCHK_CO_PROXY   0x04 /* "send-proxy" */
#define TCPCHK_CO_SOCKS4  0x08 /* "via-socks4" */
#define TCPCHK_CO_LINGER  0x10 /* "linger": a clean close (FIN) instead of a reset */
#define TCPCHK_CO_H2      0x20 /* "proto h2": HTTP checks over HTTP/2 */
#define TCPCHK_CO_H1      0x40 /* "proto h1" / "proto none": not HTTP/2 */
#define TCPCHK_CO_FCGI    0x80 /* "proto fcgi": HTTP checks over FastCGI (check.h chk_xport) */
#define TCPCHK_CO_PROTOS  (TCPCHK_CO_H1 | TCPCHK_CO_H2 | TCPCHK_CO_FCGI)

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
	/* expect options */
	int                 min_recv;  /* TCPCHK_F_MIN_RECV: bytes needed before judging (else
	                                  a mismatch waits for more until the input ends) */
	enum chk_result     err_res;   /* error-status (0: the rule's own) */
	enum chk_result     tout_res;  /* tout-status (0: L7TOUT) */
	struct lf_expr     *on_success, *on_error;   /* info formats */
	struct smp_expr    *status_code;             /* the check's code */
	struct lf_expr     *lf;        /* send-lf, send-binary-lf, string-lf, binary-lf:
	                                  rendered when played (set-var-fmt: the value) */
	struct httpchk_hdrm *hdrm;     /* TCPCHK_M_HTTP_HDR */
	/* set-var / unset-var */
	int                 var_scope; /* enum var_scope */
	char               *var_name;
	struct smp_expr    *expr;      /* set-var: the value (set-var-fmt: <lf>) */
	/* connect options */
	unsigned            conn_opts; /* TCPCHK_CO_* */
	char               *sni;
	unsigned char      *alpn;      /* wire format */
	size_t              alpn_len;
	struct smp_expr    *port_expr; /* "port <expr>" that is not a number */
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

/* Whether <px> checks with rules, and the port of a leading connect rule
 * (0: none; <dynamic> tells that it names one by an expression). */
int tcpchk_enabled(const struct proxy *px);
uint16_t tcpchk_connect_port(const struct proxy *px, int *dynamic);

/* Starts a run of <c>'s rules: plays the comments and variable rules that
 * precede the first connection. Returns the connect rule that opens it,
 * or NULL when the run starts with an implicit connection. */
const struct tcpchk_rule *tcpchk_start(struct check *c);

/* The info of a failed connection of <c> (<err>: the system's words): for
 * tcp-check rules, where in the rules it failed, as HAProxy says it
 * ("Connection refused at initial connection step of tcp-check"). Returns
 * <err> or a static buffer. */
const char *tcpchk_conn_error(const struct check *c, const char *err);

/* Where <c> connects for connect rule <r> (NULL: an implicit connection):
 * <r>'s address and port (its port expression evaluated now), else the
 * check's. Fills <ss>/<len>. */
void tcpchk_target(struct check *c, const struct tcpchk_rule *r,
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

/* The info of such a timeout for tcp-check rules, as HAProxy words it
 * (" at step 3 of tcp-check (expect string '+PONG')"); "" for others. */
const char *tcpchk_timeout_info(const struct check *c);

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

/* A compiled regex of <src> (caseless with <icase>), or NULL after
 * cfg_alert(); matched by tcpchk_regex_exec(), freed by tcpchk_regex_free()
 * (NULL accepted). */
void *tcpchk_regex_compile(struct cfg_ctx *ctx, const char *src, int icase);
int tcpchk_regex_exec(const void *re, const char *buf, size_t len);
void tcpchk_regex_free(void *re);

/* ---- shared by tcp-check and http-check rules (tcpchk_opts.c) ---- */

/* Renders log-format <lf> for check <c> (its backend %b, server %s, %H,
 * its variables in %[var(check.x)]) into <out> (<size> bytes, NUL-ended).
 * Returns the length written. */
size_t tcpchk_lf_render(struct check *c, const struct lf_expr *lf, char *out, size_t size);

/* Evaluates <e> for check <c> (no stream: the check's variables). Returns
 * 1 with <smp> set, 0 when there is no value. */
int tcpchk_smp_eval(struct check *c, const struct smp_expr *e, struct sample *smp);

/* Frees the "check" variables (at the start of each run) / every variable
 * of <c> (when its checks stop). */
void tcpchk_vars_reset(struct check *c);
void tcpchk_vars_free(struct check *c);

/* Compiles log-format <fmt> / parses sample expression <s> for a check
 * rule: an allocated result, or NULL after cfg_alert() naming option <what>
 * (also for a fetch that needs a stream). Freed by tcpchk_lf_free() /
 * tcpchk_expr_free() (NULL accepted). */
struct lf_expr *tcpchk_lf_compile(struct cfg_ctx *ctx, const char *what, const char *fmt);
void tcpchk_lf_free(struct lf_expr *lf);
struct smp_expr *tcpchk_expr_parse(struct cfg_ctx *ctx, const char *what, const char *s);
void tcpchk_expr_free(struct smp_expr *e);

/* Decodes <n> hex digits at <s> into <out> (n/2 bytes), <len> set.
 * Returns 0, or -1 for an odd count or a non-hex digit. */
int tcpchk_hex_decode(const char *s, size_t n, char *out, size_t *len);

/* Parses argv[0] "set-var(<var>)" + <expr>, "set-var-fmt(<var>)" + <fmt>
 * or "unset-var(<var>)" into <r> (type, variable, value). Returns 0, -1
 * after cfg_alert(), or 1 when argv[0] is none of them. */
int tcpchk_parse_var(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv);

/* Plays set-var/unset-var rule <r> for <c>. */
void tcpchk_run_var(struct check *c, const struct tcpchk_rule *r);

/* Parses the expect option at argv[*i] (min-recv, comment, ok-status,
 * error-status, tout-status, on-success, on-error, status-code) into <r>,
 * advancing *i past its value. Returns 1, 0 when argv[*i] is no such
 * option, -1 after cfg_alert(). */
int tcpchk_parse_expect_opt(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv,
                            int *i);

/* Reads the words of an expect rule, argv[1..argc): options anywhere
 * (tcpchk_parse_expect_opt()), [!], one match named in <words> (<n>
 * entries <stride> bytes apart, each starting with its name) and its
 * pattern: the next word, unless <multi> (NULL: none) reads it (it returns
 * 1 leaving *i on the last word it took, 0 when the match takes one word,
 * -1 after cfg_alert()). Returns the index of the match, with <pat> set to
 * the (last) word of its pattern, or -1 after cfg_alert(). */
int tcpchk_parse_expect_words(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv,
                              const void *words, size_t n, size_t stride,
                              int (*multi)(struct cfg_ctx *ctx, struct tcpchk_rule *r,
                                           size_t k, int argc, char **argv, int *i),
                              const char **pat);

/* Expect rule <r> passed: the run's result and info follow its ok-status,
 * on-success and status-code. */
void tcpchk_expect_ok(struct check *c, const struct tcpchk_rule *r);

/* Expect rule <r> failed with <res>/<info>: error-status, status-code and
 * on-error change them. Returns 1 when <info> is on-error's (said as it
 * is, a comment appended unquoted), else 0. */
int tcpchk_expect_failed(struct check *c, const struct tcpchk_rule *r, enum chk_result *res,
                         const char **info);

/* Parses connect rule options argv[1..argc) (default, port <n|expr>, addr,
 * send-proxy, via-socks4, ssl, sni, alpn, linger, proto, comment) into <r>;
 * <http>: an http-check rule (proto h1|h2; tcp-check: none). Returns 0 or
 * -1 after cfg_alert(). */
int tcpchk_parse_connect(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv,
                         int http);

/* The TCPCHK_CO_* options of the connection of connect rule <r> (NULL: a
 * run's implicit first connection, made with the server's settings: TLS
 * with check-ssl, check-send-proxy, check-via-socks4, check-proto). A rule
 * takes the server's settings only with "default". */
unsigned tcpchk_conn_opts(const struct check *c, const struct tcpchk_rule *r);

/* The port connect rule <r> names (its "port" expression evaluated now),
 * 0 for none. */
uint16_t tcpchk_rule_port(struct check *c, const struct tcpchk_rule *r);

/* Frees what the options of <r> hold (tcpchk_rule_free() calls it). */
void tcpchk_rule_free_opts(struct tcpchk_rule *r);

/* Makes <px> check with the tcp-check ruleset <rules> (replacing the rules
 * it had): the protocol checks ("option redis-check", "option smtpchk", ...)
 * build their rules and hand them over. */
void tcpchk_set_rules(struct proxy *px, struct tcpchk_rule *rules);

#endif
