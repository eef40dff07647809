/* tcp-check rules: parsing the "tcp-check" lines of a backend and playing
 * them over a check connection (tcpcheck.h); their options are
 * tcpchk_opts.c's. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#ifdef USE_PCRE2
#include <pcre2.h>
#endif

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/check_h2.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/httpchk.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>
#include <sluice/tcpcheck.h>
#include <sluice/units.h>

const struct tcpchk_rule *tcpchk_rules(const struct proxy *px)
{
	uint64_t opts = chk_px_of(px)->options;

	if (opts & CHK_O_HTTPCHK)
		return httpchk_rules(px);
	if (opts & CHK_O_TCPCHK)
		return px->tcpchk;
	return NULL;
}

int tcpchk_enabled(const struct proxy *px)
{
	return tcpchk_rules(px) != NULL;
}

/* Whether <r> may come before the connect rule that opens a ruleset. */
static int rule_is_prelude(const struct tcpchk_rule *r)
{
	return r->type == TCPCHK_COMMENT || r->type == TCPCHK_SET_VAR ||
	       r->type == TCPCHK_UNSET_VAR;
}

/* The first rule that is not a comment nor a variable's. */
static const struct tcpchk_rule *first_rule(const struct tcpchk_rule *r)
{
	while (r && rule_is_prelude(r))
		r = r->next;
	return r;
}

const struct tcpchk_rule *tcpchk_start(struct check *c)
{
	const struct tcpchk_rule *r = tcpchk_rules(c->srv->px);

	c->step = r;
	c->step_no = 1;
	c->run_ok = CHK_R_L7OK;
	c->run_info = NULL;
	tcpchk_vars_reset(c);
	/* what precedes the first connection is played before it opens */
	for (; r && rule_is_prelude(r); r = r->next) {
		if (r->type != TCPCHK_COMMENT)
			tcpchk_run_var(c, r);
		c->step = r->next;
		c->step_no++;
	}
	return r && r->type == TCPCHK_CONNECT ? r : NULL;
}

uint16_t tcpchk_connect_port(const struct proxy *px, int *dynamic)
{
	const struct tcpchk_rule *r = first_rule(tcpchk_rules(px));

	*dynamic = r && r->type == TCPCHK_CONNECT && r->port_expr;
	return r && r->type == TCPCHK_CONNECT ? r->port : 0;
}

void tcpchk_target(struct check *c, const struct tcpchk_rule *r,
                   struct sockaddr_storage *ss, socklen_t *len)
{
	uint16_t port;

	*ss = c->addr;
	*len = c->addrlen;
	if (!r)
		return;
	if (r->flags & TCPCHK_F_HAS_ADDR) {
		*ss = r->addr;
		*len = r->addrlen;
		if (!addr_get_port(ss))
			addr_set_port(ss, addr_get_port(&c->addr));
	}
	if ((port = tcpchk_rule_port(c, r)))
		addr_set_port(ss, port);
}

enum chk_result tcpchk_timeout_result(const struct check *c)
{
	const struct tcpchk_rule *r = c->step;

	if (r && r->type == TCPCHK_EXPECT && r->tout_res)
		return r->tout_res;
	return r && r->type == TCPCHK_EXPECT && r->ok_res == CHK_R_L6OK ? CHK_R_L6TOUT : CHK_R_L7TOUT;
}

/* Rules written by the user with "tcp-check" (not HTTP, not a protocol
 * check's): their results say more about where they failed. */
static int rules_are_user_tcp(const struct tcpchk_rule *r)
{
	return r && !(r->flags & (TCPCHK_F_HTTP | TCPCHK_F_PROTO));
}

const char *tcpchk_timeout_info(const struct check *c)
{
	static const char *const words[] = {
		[TCPCHK_M_STRING] = "string", [TCPCHK_M_RSTRING] = "rstring",
		[TCPCHK_M_BINARY] = "binary", [TCPCHK_M_RBINARY] = "rbinary",
	};
	static char msg[256];
	const struct tcpchk_rule *r = c->step;

	if (!r || r->type != TCPCHK_EXPECT || !rules_are_user_tcp(tcpchk_rules(c->srv->px)) ||
	    r->match > TCPCHK_M_RBINARY)
		return "";
	snprintf(msg, sizeof(msg), " at step %d of tcp-check (expect %s%s '%.60s')%s%s%s",
		 c->step_no, words[r->match], r->lf ? "-lf" : "", r->text,
		 r->comment ? " comment: '" : "", r->comment ? r->comment : "",
		 r->comment ? "'" : "");
	return msg;
}

const char *tcpchk_conn_error(const struct check *c, const char *err)
{
	static char msg[200];
	const struct tcpchk_rule *rules = tcpchk_rules(c->srv->px), *r = c->conn_rule;
	int step = 1;

	/* "option tcp-check" without rules is a connect, said the tcp-check way. */
	int bare = !rules &&
		   (chk_px_of(c->srv->px)->options & (CHK_O_TCPCHK | CHK_O_HTTPCHK)) == CHK_O_TCPCHK;

	if (!bare && !rules_are_user_tcp(rules))
		return err;
	if (!r) {
		r = first_rule(rules);
		if (!r || r->type != TCPCHK_CONNECT) {
			snprintf(msg, sizeof(msg), "%s at initial connection step of tcp-check", err);
			return msg;
		}
	}
	for (const struct tcpchk_rule *p = rules; p && p != r; p = p->next)
		step++;
	if (r->port)
		snprintf(msg, sizeof(msg), "%s at step %d of tcp-check (connect port %u)%s%s%s", err,
			 step, r->port, r->comment ? " comment: '" : "", r->comment ? r->comment : "",
			 r->comment ? "'" : "");
	else
		snprintf(msg, sizeof(msg), "%s at step %d of tcp-check (connect)%s%s%s", err, step,
			 r->comment ? " comment: '" : "", r->comment ? r->comment : "",
			 r->comment ? "'" : "");
	return msg;
}

/* Forgets what the server sent (a new request, a new connection). */
static void tcpchk_forget_input(struct check *c)
{
	chk_h2_free(c);
	chk_xport_free(c);
	c->rlen = 0;
	c->rclosed = 0;
	memset(&c->http, 0, sizeof(c->http));
}

void tcpchk_reset(struct check *c)
{
	free(c->rbuf);
	c->rbuf = NULL;
	tcpchk_forget_input(c);
	c->step = NULL;
	c->step_no = 0;
	c->used = 0;
	c->reading = 0;
	c->conn_rule = NULL;
	httpchk_req_free(c->req_sent);
	c->req_sent = NULL;
}

void tcpchk_rule_free(struct tcpchk_rule *r)
{
	tcpchk_regex_free(r->re);
	httpchk_req_free(r->req);
	httpchk_hdrm_free(r->hdrm);
	tcpchk_rule_free_opts(r);
	free(r->data);
	free(r->text);
	free(r->comment);
	free(r->codes);
	free(r);
}

void tcpchk_free(struct proxy *px)
{
	if (px->tcpchk_inherited) {
		px->tcpchk = NULL;   /* the defaults' rules, shared */
		px->tcpchk_inherited = 0;
		return;
	}
	while (px->tcpchk) {
		struct tcpchk_rule *r = px->tcpchk;

		px->tcpchk = r->next;
		tcpchk_rule_free(r);
	}
}

void tcpchk_set_rules(struct proxy *px, struct tcpchk_rule *rules)
{
	tcpchk_free(px);
	px->tcpchk = rules;
	px->tcpchk_inherited = 0;
	chk_px_w(px)->options = (chk_px_w(px)->options | CHK_O_TCPCHK) &
				~(CHK_O_HTTPCHK | CHK_O_EXTCHK);
}

int tcpchk_regex_exec(const void *re, const char *buf, size_t len)
{
#ifdef USE_PCRE2
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	int rc;

	if (!md)
		return 0;
	rc = pcre2_match(re, (PCRE2_SPTR)buf, len, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return rc >= 0;
#else
	return 0;   /* no regex rule can be configured without PCRE2 */
#endif
}

int tcpchk_regex_match(const struct tcpchk_rule *r, const char *buf, size_t len)
{
	return tcpchk_regex_exec(r->re, buf, len);
}

void tcpchk_regex_free(void *re)
{
#ifdef USE_PCRE2
	if (re)
		pcre2_code_free(re);
#endif
}

/* Does the response so far contain what <r> looks for (<pat>, <plen>
 * bytes, for the exact matches)? */
static int rule_matches(const struct tcpchk_rule *r, const char *pat, size_t plen,
                        const char *buf, size_t len)
{
	if (r->match == TCPCHK_M_RSTRING)
		return tcpchk_regex_match(r, buf, len);
	if (r->match == TCPCHK_M_RBINARY) {
		/* the regex reads the bytes written in hex (upper case) */
		static const char digits[] = "0123456789ABCDEF";
		char *hex = malloc(2 * len + 1);
		int ok;

		if (!hex)
			return 0;
		for (size_t i = 0; i < len; i++) {
			hex[2 * i] = digits[(unsigned char)buf[i] >> 4];
			hex[2 * i + 1] = digits[(unsigned char)buf[i] & 15];
		}
		ok = tcpchk_regex_match(r, hex, 2 * len);
		free(hex);
		return ok;
	}
	return len >= plen && memmem(buf, len, pat, plen) != NULL;
}

/* Reads what the server sent into the check's buffer. Returns 0, or -1 on
 * a socket error. Sets rclosed at end of input. */
static int tcpchk_read(struct check *c)
{
	for (;;) {
		ssize_t n;

		if (!c->rbuf && !(c->rbuf = malloc(TCPCHK_RBUF_MAX)))
			return -1;
		if (c->rlen == TCPCHK_RBUF_MAX || c->rclosed)
			return 0;
#ifdef USE_OPENSSL
		if (c->ssl)
			n = ssl_check_io(c->ssl, c->fd, c->rbuf + c->rlen, TCPCHK_RBUF_MAX - c->rlen, 0);
		else
#endif
			n = recv(c->fd, c->rbuf + c->rlen, TCPCHK_RBUF_MAX - c->rlen, 0);
		if (n > 0) {
			c->rlen += (size_t)n;
			continue;
		}
		if (n == 0) {
			c->rclosed = 1;
			return 0;
		}
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	}
}

ssize_t tcpchk_io_recv(struct check *c, char *buf, size_t len)
{
#ifdef USE_OPENSSL
	if (c->ssl)
		return ssl_check_io(c->ssl, c->fd, buf, len, 0);
#endif
	return recv(c->fd, buf, len, 0);
}

ssize_t tcpchk_io_send(struct check *c, const char *data, size_t len)
{
#ifdef USE_OPENSSL
	if (c->ssl)
		return ssl_check_io(c->ssl, c->fd, (void *)data, len, 1);
#endif
	return send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

int tcpchk_input_done(const struct check *c)
{
	return c->rclosed || c->rlen >= TCPCHK_RBUF_MAX;
}

/* Renders the pattern of a string-lf/binary-lf rule (binary-lf: the hex
 * digits decoded) into <out> of TCPCHK_RBUF_MAX bytes. Returns its length,
 * or -1 when binary-lf gave something else than hex digits. */
static ssize_t expect_render(struct check *c, const struct tcpchk_rule *r, char *out)
{
	size_t n = tcpchk_lf_render(c, r->lf, out, TCPCHK_RBUF_MAX);

	if ((r->flags & TCPCHK_F_HEX) && tcpchk_hex_decode(out, n, out, &n) == -1)
		return -1;
	return (ssize_t)n;
}

/* A tcp-check expect on the raw bytes received. */
static enum tcpchk_res expect_raw(struct check *c, const struct tcpchk_rule *r,
                                  const char **info, char *msg, size_t sz)
{
	static char pat[TCPCHK_RBUF_MAX];
	const char *p = r->data;
	size_t plen = r->len;
	int found, conclusive;

	if (r->lf) {
		ssize_t n = expect_render(c, r, pat);

		if (n < 0) {
			snprintf(msg, sz, "TCPCHK got an invalid binary pattern at step %d", c->step_no);
			*info = msg;
			return TCPCHK_FAIL;
		}
		p = pat;
		plen = (size_t)n;
	}
	if (r->flags & TCPCHK_F_MIN_RECV) {
		/* an exact pattern needs no more than its length */
		size_t need = (size_t)r->min_recv;

		if (r->match == TCPCHK_M_STRING || r->match == TCPCHK_M_BINARY)
			need = MIN(need, plen);
		if (c->rlen < need && !tcpchk_input_done(c))
			return TCPCHK_WAIT_READ;
	}
	found = c->rbuf && rule_matches(r, p, plen, c->rbuf, c->rlen);
	/* with min-recv, what came is enough to judge */
	conclusive = (r->flags & TCPCHK_F_MIN_RECV) || tcpchk_input_done(c);
	if (found && !r->inverse)
		return TCPCHK_PASS;   /* the next expect reads the same answer, as HAProxy's */
	if (!found && !conclusive)
		return TCPCHK_WAIT_READ;  /* more may come */
	if (!found && r->inverse)
		return TCPCHK_PASS;
	if (r->lf && !(r->flags & TCPCHK_F_HEX))
		snprintf(msg, sz, "TCPCHK %s content '%.60s' at step %d",
			 r->inverse ? "matched unwanted" : "did not match", pat, c->step_no);
	else
		snprintf(msg, sz, "TCPCHK %s content '%.60s' at step %d",
			 r->inverse ? "matched unwanted" : "did not match", r->text, c->step_no);
	*info = msg;
	return TCPCHK_FAIL;
}

/* Sends the bytes of non-HTTP send rule <r> (send-lf and send-binary-lf
 * rendered now). Returns 0, or -1 with <msg> set. */
static int send_raw(struct check *c, const struct tcpchk_rule *r, char *msg, size_t sz)
{
	static char out[TCPCHK_RBUF_MAX];
	const char *p = r->data;
	size_t len = r->len;

	if (r->lf) {
		ssize_t n = expect_render(c, r, out);

		if (n < 0) {
			snprintf(msg, sz, "TCPCHK got an invalid binary string to send at step %d",
				 c->step_no);
			return -1;
		}
		p = out;
		len = (size_t)n;
	}
	/* as HAProxy: what came before a send is no answer to it */
	c->rlen = 0;
	if (len && tcpchk_io_send(c, p, len) != (ssize_t)len) {
		snprintf(msg, sz, "TCPCHK send failed at step %d", c->step_no);
		return -1;
	}
	return 0;
}

enum tcpchk_res tcpchk_run(struct check *c, enum chk_result *res, const char **info)
{
	static char msg[160], withcomment[256];
	const struct tcpchk_rule *rules = tcpchk_rules(c->srv->px);
	const int httpchk = !!(chk_px_of(c->srv->px)->options & CHK_O_HTTPCHK);
	const struct chk_xport *xp = httpchk ? chk_xport_of(c) : NULL;

	*res = CHK_R_L7RSP;
	*info = "";
	if (!c->step_no)   /* a new run (c->step is NULL at its end too) */
		tcpchk_start(c);
	/* HTTP/2 and FastCGI checks: the server's frames or records are the
	 * session's, which the send rule starts (they wait in the socket until
	 * then) */
	if ((xp ? (c->xp ? xp->read(c) : 0) :
	     (c->conn_opts & TCPCHK_CO_H2) && httpchk ? (c->h2 ? chk_h2_read(c) : 0) :
	     tcpchk_read(c)) == -1) {
		*info = strerror(errno);
		return TCPCHK_FAIL;
	}
	while (c->step) {
		const struct tcpchk_rule *r = c->step;
		enum tcpchk_res ret = TCPCHK_PASS;

		switch (r->type) {
		case TCPCHK_COMMENT:
			break;
		case TCPCHK_SET_VAR:
		case TCPCHK_UNSET_VAR:
			tcpchk_run_var(c, r);
			break;
		case TCPCHK_CONNECT:
			if (!c->used)
				break;   /* the connection in place is this rule's */
			/* A new connection for the rules that follow. */
			c->conn_rule = r;
			c->step = r->next;
			c->step_no++;
			c->used = 0;
			tcpchk_forget_input(c);
			return TCPCHK_RECONNECT;
		case TCPCHK_SEND:
			c->used = 1;
			if (r->flags & TCPCHK_F_HTTP) {
				/* A new request: its response starts afresh. */
				tcpchk_forget_input(c);
				c->http.head_req = httpchk_req_is_head(r->req);
			}
			if ((r->flags & TCPCHK_F_HTTP) ? httpchk_send(c, r) < 0 :
			    send_raw(c, r, msg, sizeof(msg)) < 0) {
				if (r->flags & TCPCHK_F_HTTP)
					snprintf(msg, sizeof(msg), "TCPCHK send failed at step %d",
						 c->step_no);
				*info = msg;
				ret = TCPCHK_FAIL;
			}
			break;
		case TCPCHK_EXPECT:
			c->used = 1;
			if (r->flags & TCPCHK_F_HTTP)
				ret = httpchk_expect(c, r, res, info, msg, sizeof(msg));
			else if (r->match == TCPCHK_M_PROTO)
				ret = r->proto(c, r, res, info, msg, sizeof(msg));
			else
				ret = expect_raw(c, r, info, msg, sizeof(msg));
			if (ret == TCPCHK_PASS) {
				if (*res == CHK_R_L7OKC)
					return TCPCHK_PASS;   /* disable-on-404: nothing else counts */
				tcpchk_expect_ok(c, r);
			}
			break;
		}
		if (ret == TCPCHK_WAIT_READ)
			return TCPCHK_WAIT_READ;
		if (ret == TCPCHK_FAIL) {
			/* HTTP rules say their comment as it is, tcp-check ones quote
			 * it, unless on-error gave the words. */
			int q = !(r->flags & TCPCHK_F_HTTP);

			if (r->type == TCPCHK_EXPECT && tcpchk_expect_failed(c, r, res, info))
				q = 0;

			if (r->comment) {
				snprintf(withcomment, sizeof(withcomment), "%s%scomment: %s%s%s", *info,
					 **info ? " " : "", q ? "'" : "", r->comment, q ? "'" : "");
				*info = withcomment;
			}
			return TCPCHK_FAIL;
		}
		c->step = r->next;
		c->step_no++;
	}
	*res = c->run_ok;
	*info = c->run_info ? c->run_info : rules_are_user_tcp(rules) ? "(tcp-check)" : "";
	return TCPCHK_PASS;
}

/* ---- configuration ---- */

void *tcpchk_regex_compile(struct cfg_ctx *ctx, const char *src, int icase)
{
#ifdef USE_PCRE2
	int errc;
	PCRE2_SIZE erroff;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)src, strlen(src), icase ? PCRE2_CASELESS : 0,
				       &errc, &erroff, NULL);

	if (!re) {
		PCRE2_UCHAR why[120];

		pcre2_get_error_message(errc, why, sizeof(why));
		cfg_alert(ctx, "invalid regex '%s' at offset %zu: %s", src, (size_t)erroff, why);
		return NULL;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);   /* best effort */
	return re;
#else
	cfg_alert(ctx, "regular expressions need PCRE2, and this sluice was built without it");
	return NULL;
#endif
}

int tcpchk_compile_regex(struct cfg_ctx *ctx, struct tcpchk_rule *r)
{
	return (r->re = tcpchk_regex_compile(ctx, r->data, 0)) ? 0 : -1;
}

/* Fills send rule <r> from "send <data>", "send-lf <fmt>", "send-binary
 * <hex>" or "send-binary-lf <hexfmt>" (the row's kind in <what>). */
static int parse_send(struct cfg_ctx *ctx, struct tcpchk_rule *r, const char *what,
                      const char *arg)
{
	int lf = strstr(what, "-lf") != NULL, bin = strncmp(what, "send-binary", 11) == 0;

	r->type = TCPCHK_SEND;
	r->text = xstrdup(arg);
	if (lf) {
		r->flags |= bin ? TCPCHK_F_HEX : 0;
		return (r->lf = tcpchk_lf_compile(ctx, what, arg)) ? 0 : -1;
	}
	r->data = xcalloc(1, strlen(arg) + 1);
	if (!bin) {
		strcpy(r->data, arg);
		r->len = strlen(arg);
	} else if (!*arg || tcpchk_hex_decode(arg, strlen(arg), r->data, &r->len) == -1) {
		cfg_alert(ctx, "'%s' expects an even number of hex digits", what);
		return -1;
	}
	return 0;
}

/* The patterns of "tcp-check expect", each a row: how it matches and how
 * its pattern is written. */
static const struct {
	const char       *word;
	enum tcpchk_match match;
	unsigned          flags;   /* TCPCHK_F_HEX */
	uint8_t           regex, hex, lf;
} tcpchk_patterns[] = {
	{ "string", TCPCHK_M_STRING, 0, 0, 0, 0 },
	{ "rstring", TCPCHK_M_RSTRING, 0, 1, 0, 0 },
	{ "binary", TCPCHK_M_BINARY, 0, 0, 1, 0 },
	{ "rbinary", TCPCHK_M_RBINARY, 0, 1, 0, 0 },
	{ "string-lf", TCPCHK_M_STRING, 0, 0, 0, 1 },
	{ "binary-lf", TCPCHK_M_BINARY, TCPCHK_F_HEX, 0, 0, 1 },
};

/* expect [options] [!] <match> <pattern> [options] */
static int parse_expect(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv)
{
	const char *pat;
	int k;

	r->type = TCPCHK_EXPECT;
	k = tcpchk_parse_expect_words(ctx, r, argc, argv, tcpchk_patterns,
				      ARRAY_SIZE(tcpchk_patterns), sizeof(tcpchk_patterns[0]), NULL, &pat);
	if (k < 0)
		return -1;
	r->match = tcpchk_patterns[k].match;
	r->flags |= tcpchk_patterns[k].flags;
	r->text = xstrdup(pat);
	if (tcpchk_patterns[k].lf)
		return (r->lf = tcpchk_lf_compile(ctx, tcpchk_patterns[k].word, pat)) ? 0 : -1;
	r->data = xcalloc(1, strlen(pat) + 1);
	if (!tcpchk_patterns[k].hex) {
		strcpy(r->data, pat);
		r->len = strlen(pat);
		return tcpchk_patterns[k].regex ? tcpchk_compile_regex(ctx, r) : 0;
	}
	if (!*pat || tcpchk_hex_decode(pat, strlen(pat), r->data, &r->len) == -1) {
		cfg_alert(ctx, "'expect binary' expects an even number of hex digits");
		return -1;
	}
	return 0;
}

/* The kinds of "tcp-check" rules, each a row. */
enum { TK_CONNECT, TK_SEND, TK_EXPECT, TK_COMMENT };

static const struct {
	const char *word;
	int         kind;
} tcpchk_kinds[] = {
	{ "connect", TK_CONNECT },      { "send", TK_SEND },     { "send-lf", TK_SEND },
	{ "send-binary", TK_SEND },     { "send-binary-lf", TK_SEND },
	{ "expect", TK_EXPECT },        { "comment", TK_COMMENT },
};

/* Parses "tcp-check <kind> ..." (argv[0] the kind) into <r>. */
static int tcpchk_parse_rule(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv)
{
	const char *what = argc ? argv[0] : "";
	size_t k;
	int ret;

	if (argc && (ret = tcpchk_parse_var(ctx, r, argc, argv)) <= 0)
		return ret;
	for (k = 0; k < ARRAY_SIZE(tcpchk_kinds); k++)
		if (strcmp(what, tcpchk_kinds[k].word) == 0)
			break;
	if (k == ARRAY_SIZE(tcpchk_kinds)) {
		cfg_alert(ctx, "expects connect, send, send-lf, send-binary, send-binary-lf, "
			  "expect, set-var, set-var-fmt, unset-var or comment%s%s%s",
			  *what ? ", but got '" : "", what, *what ? "'" : "");
		return -1;
	}
	switch (tcpchk_kinds[k].kind) {
	case TK_CONNECT:
		r->type = TCPCHK_CONNECT;
		return tcpchk_parse_connect(ctx, r, argc, argv, 0);
	case TK_SEND:
		/* send <data> [comment <msg>] */
		if (argc != 2 && !(argc == 4 && strcmp(argv[2], "comment") == 0)) {
			cfg_alert(ctx, argc < 2 ? "'%s' expects %s" : "'%s' expects %s, then "
				  "optionally 'comment <msg>' (quote it if it has spaces)", what,
				  strstr(what, "binary") ? "hex digits" : "a string");
			return -1;
		}
		if (argc == 4)
			r->comment = xstrdup(argv[3]);
		return parse_send(ctx, r, what, argv[1]);
	case TK_EXPECT:
		return parse_expect(ctx, r, argc, argv);
	default:
		if (argc != 2) {
			cfg_alert(ctx, "'comment' expects one string (quote it if it has spaces)");
			return -1;
		}
		r->type = TCPCHK_COMMENT;
		r->text = xstrdup(argv[1]);
		return 0;
	}
}

/* tcp-check connect|send|send-lf|send-binary|send-binary-lf|expect|set-var|
 * set-var-fmt|unset-var|comment ... */
static int kw_tcp_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct tcpchk_rule *r = xcalloc(1, sizeof(*r)), **tail;
	const struct tcpchk_rule *first;
	int step = 1;

	if (tcpchk_parse_rule(ctx, r, argc, argv) == -1)
		goto fail;
	if (ctx->px->tcpchk_inherited) {
		/* Rules of its own replace those of the defaults. */
		tcpchk_free(ctx->px);
	}
	first = first_rule(ctx->px->tcpchk);
	for (const struct tcpchk_rule *p = ctx->px->tcpchk; p; p = p->next)
		step++;
	if (r->type == TCPCHK_CONNECT && first && first->type != TCPCHK_CONNECT) {
		cfg_alert(ctx, "'connect' at step %d: the first rule must then be a 'connect' too "
			  "(only comments and variables may precede it)", step);
		goto fail;
	}
	for (tail = &ctx->px->tcpchk; *tail; tail = &(*tail)->next)
		if (!(*tail)->next && (*tail)->type == TCPCHK_COMMENT && r->type != TCPCHK_COMMENT &&
		    !r->comment)
			r->comment = xstrdup((*tail)->text);   /* a comment is for the next rule */
	*tail = r;
	return 0;
fail:
	tcpchk_rule_free(r);
	return -1;
}

/* option redis-check: PING, expect +PONG. */
static int kw_redis_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static char *send_ping[] = { "send", "PING\r\n" };
	static char *expect_pong[] = { "expect", "string", "+PONG" };

	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	tcpchk_set_rules(ctx->px, NULL);
	if (kw_tcp_check(ctx, NULL, 2, send_ping) == -1 || kw_tcp_check(ctx, NULL, 3, expect_pong) == -1)
		return -1;
	for (struct tcpchk_rule *r = ctx->px->tcpchk; r; r = r->next) {
		r->flags |= TCPCHK_F_PROTO;
		if (r->type == TCPCHK_EXPECT)
			r->ok_info = "Redis server is ok";
	}
	return 0;
}

/* A proxy starts with its defaults' tcp-check rules, shared; a
 * "tcp-check" line of its own replaces them (tcpchk_inherited). */
static void tcpchk_inherit(struct proxy *px, const struct proxy *def)
{
	if (!(px->cap & (PR_CAP_BE | PR_CAP_DEF)))
		return;
	px->tcpchk = def->tcpchk;
	px->tcpchk_inherited = !!def->tcpchk;
}

static struct proxy_ext tcpchk_ext = { tcpchk_inherit, NULL, NULL };

/* [no] option tcp-check: the last check type named wins ("option httpchk",
 * a protocol check). */
static int kw_opt_tcp_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return check_opt_type(ctx, argc, argv, CHK_O_TCPCHK);
}

/* What the connect rules of <px> need of its checked servers: a TLS
 * context for "ssl", a socks4 proxy for "via-socks4". */
static int tcpchk_postparse_connect(struct proxy *px)
{
	unsigned need = 0;
	int errs = 0;

	for (const struct tcpchk_rule *r = tcpchk_rules(px); r; r = r->next)
		if (r->type == TCPCHK_CONNECT)
			need |= r->conn_opts;
	if (!(need & (TCPCHK_CO_SSL | TCPCHK_CO_SOCKS4)))
		return 0;
	for (struct server *srv = px->servers; srv; srv = srv->next) {
		if (!(srv->flags & SRV_F_CHECKED))
			continue;
		if (need & TCPCHK_CO_SSL)
			errs += ssl_check_prepare(srv);
		if ((need & TCPCHK_CO_SOCKS4) && !srv->socks4_len)
			log_warning("%s:%d: server '%s/%s' has no 'socks4' proxy: the check "
				    "connections of 'connect via-socks4' rules go to it directly",
				    srv->conf_file, srv->conf_line, px->name, srv->name);
	}
	return errs;
}

static int tcpchk_postparse(void)
{
	int errs = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		if (rules_are_user_tcp(px->tcpchk) && !px->tcpchk_inherited &&
		    !(chk_px_of(px)->options & CHK_O_TCPCHK))
			log_warning("%s:%d: backend '%s' has tcp-check rules but no 'option tcp-check': "
				    "they are not used", px->conf_file, px->conf_line, px->name);
		if (px->cap & PR_CAP_BE)
			errs += tcpchk_postparse_connect(px);
	}
	return errs;
}

static struct cfg_kw tcpchk_kws[] = {
	{ "tcp-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_tcp_check,
	  .usage = "connect|send|send-lf|send-binary|send-binary-lf|expect|set-var|unset-var|"
	  "comment ..." },
	{ "option tcp-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_opt_tcp_check,
	  .flags = CFG_KW_F_NO },
	{ "option redis-check", CFG_SEC_BE, CFG_T_FUNC, 0,
	  .parse = kw_redis_check },
};

SLUICE_INIT(tcpchk_register)
{
	cfg_register(tcpchk_kws, ARRAY_SIZE(tcpchk_kws));
	cfg_register_postparse(tcpchk_postparse, 45);
	proxy_register_ext(&tcpchk_ext);
}
