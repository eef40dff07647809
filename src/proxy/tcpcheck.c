/* tcp-check rules: parsing the "tcp-check" lines of a backend and playing
 * them over a check connection (tcpcheck.h). */
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

/* The first rule that is not a comment. */
static const struct tcpchk_rule *first_rule(const struct tcpchk_rule *r)
{
	while (r && r->type == TCPCHK_COMMENT)
		r = r->next;
	return r;
}

uint16_t tcpchk_connect_port(const struct proxy *px)
{
	const struct tcpchk_rule *r = first_rule(tcpchk_rules(px));

	return r && r->type == TCPCHK_CONNECT ? r->port : 0;
}

void tcpchk_target(const struct check *c, const struct tcpchk_rule *r,
                   struct sockaddr_storage *ss, socklen_t *len)
{
	if (!r) {
		r = first_rule(tcpchk_rules(c->srv->px));
		if (r && r->type != TCPCHK_CONNECT)
			r = NULL;
	}
	*ss = c->addr;
	*len = c->addrlen;
	if (!r)
		return;
	if (r->flags & TCPCHK_F_HAS_ADDR) {
		uint16_t port = addr_get_port(&c->addr);

		*ss = r->addr;
		*len = r->addrlen;
		if (!addr_get_port(ss))
			addr_set_port(ss, port);
	}
	if (r->port)
		addr_set_port(ss, r->port);
}

enum chk_result tcpchk_timeout_result(const struct check *c)
{
	const struct tcpchk_rule *r = c->step;

	return r && r->type == TCPCHK_EXPECT && r->ok_res == CHK_R_L6OK ? CHK_R_L6TOUT : CHK_R_L7TOUT;
}

/* Rules written by the user with "tcp-check" (not HTTP, not a protocol
 * check's): their results say more about where they failed. */
static int rules_are_user_tcp(const struct tcpchk_rule *r)
{
	return r && !(r->flags & (TCPCHK_F_HTTP | TCPCHK_F_PROTO));
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
	c->conn_rule = NULL;
}

void tcpchk_rule_free(struct tcpchk_rule *r)
{
#ifdef USE_PCRE2
	if (r->re)
		pcre2_code_free(r->re);
#endif
	httpchk_req_free(r->req);
	free(r->data);
	free(r->text);
	free(r->comment);
	free(r->codes);
	free(r);
}

void tcpchk_free(struct proxy *px)
{
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
	chk_px_w(px)->options = (chk_px_w(px)->options | CHK_O_TCPCHK) & ~CHK_O_HTTPCHK;
}

int tcpchk_regex_match(const struct tcpchk_rule *r, const char *buf, size_t len)
{
#ifdef USE_PCRE2
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(r->re, NULL);
	int rc;

	if (!md)
		return 0;
	rc = pcre2_match(r->re, (PCRE2_SPTR)buf, len, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return rc >= 0;
#else
	return 0;   /* no regex rule can be configured without PCRE2 */
#endif
}

/* Does the response so far contain what <r> looks for? */
static int rule_matches(const struct tcpchk_rule *r, const char *buf, size_t len)
{
	if (r->match == TCPCHK_M_RSTRING)
		return tcpchk_regex_match(r, buf, len);
	return len >= r->len && memmem(buf, len, r->data, r->len) != NULL;
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

/* A tcp-check expect on the raw bytes received. */
static enum tcpchk_res expect_raw(struct check *c, const struct tcpchk_rule *r,
                                  const char **info, char *msg, size_t sz)
{
	int found = c->rbuf && rule_matches(r, c->rbuf, c->rlen);

	if (found && !r->inverse) {
		/* What matched is consumed: the next expect reads on. */
		c->rlen = 0;
		return TCPCHK_PASS;
	}
	if (!found && !tcpchk_input_done(c))
		return TCPCHK_WAIT_READ;  /* more may come */
	if (!found && r->inverse)
		return TCPCHK_PASS;
	snprintf(msg, sz, "TCPCHK %s content '%.60s' at step %d",
		 r->inverse ? "matched unwanted" : "did not match", r->text, c->step_no);
	*info = msg;
	return TCPCHK_FAIL;
}

enum tcpchk_res tcpchk_run(struct check *c, enum chk_result *res, const char **info)
{
	static char msg[160], withcomment[256];
	const struct tcpchk_rule *rules = tcpchk_rules(c->srv->px);
	const int httpchk = !!(chk_px_of(c->srv->px)->options & CHK_O_HTTPCHK);
	const struct chk_xport *xp = httpchk ? chk_xport_of(c->srv) : NULL;

	*res = CHK_R_L7RSP;
	*info = "";
	if (!c->step_no) {   /* a new run (c->step is NULL at its end too) */
		c->step = rules;
		c->step_no = 1;
		c->run_ok = CHK_R_L7OK;
		c->run_info = NULL;
	}
	/* HTTP/2 checks: the server's frames are the session's, which the
	 * send rule starts (they wait in the socket until then) */
	if ((xp ? (c->xp ? xp->read(c) : 0) :
	     (c->srv->flags & SRV_F_CHECK_H2) && httpchk ? (c->h2 ? chk_h2_read(c) : 0) :
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
			if (xp && (r->flags & TCPCHK_F_HTTP) ? xp->send(c, r->req) < 0 :
			    (c->srv->flags & SRV_F_CHECK_H2) && (r->flags & TCPCHK_F_HTTP) ?
			    chk_h2_send(c, r->req) < 0 :
			    tcpchk_io_send(c, r->data, r->len) != (ssize_t)r->len) {
				snprintf(msg, sizeof(msg), "TCPCHK send failed at step %d", c->step_no);
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
				c->run_ok = r->ok_res ? r->ok_res : CHK_R_L7OK;
				if (r->ok_info)
					c->run_info = r->ok_info;
			}
			break;
		}
		if (ret == TCPCHK_WAIT_READ)
			return TCPCHK_WAIT_READ;
		if (ret == TCPCHK_FAIL) {
			/* HTTP rules say their comment as it is, tcp-check ones quote it. */
			int q = !(r->flags & TCPCHK_F_HTTP);

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

static int hex_decode(const char *s, char **out, size_t *len)
{
	size_t n = strlen(s);

	if (!n || n % 2)
		return -1;
	*out = xcalloc(1, n / 2 + 1);
	for (size_t i = 0; i < n; i += 2) {
		char b[3] = { s[i], s[i + 1], 0 };
		char *end;

		if (!isxdigit((unsigned char)b[0]) || !isxdigit((unsigned char)b[1]))
			return free(*out), -1;
		(*out)[i / 2] = (char)strtol(b, &end, 16);
	}
	*len = n / 2;
	return 0;
}

int tcpchk_compile_regex(struct cfg_ctx *ctx, struct tcpchk_rule *r)
{
#ifdef USE_PCRE2
	int errc;
	PCRE2_SIZE erroff;

	r->re = pcre2_compile((PCRE2_SPTR)r->data, r->len, 0, &errc, &erroff, NULL);
	if (!r->re) {
		PCRE2_UCHAR why[120];

		pcre2_get_error_message(errc, why, sizeof(why));
		cfg_alert(ctx, "invalid regex '%s' at offset %zu: %s", r->data, (size_t)erroff, why);
		return -1;
	}
	pcre2_jit_compile(r->re, PCRE2_JIT_COMPLETE);   /* best effort */
	return 0;
#else
	cfg_alert(ctx, "'rstring' needs PCRE2, and this sluice was built without it");
	return -1;
#endif
}

/* tcp-check connect [port N] | send <s> | send-binary <hex> |
 * expect [!] string|rstring|binary <p> | comment <text> */
static int kw_tcp_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct tcpchk_rule *r, **tail;
	const char *what = argc ? argv[0] : "";
	int i = 1;

	r = xcalloc(1, sizeof(*r));
	if (strcmp(what, "connect") == 0) {
		long v;
		const char *err;

		r->type = TCPCHK_CONNECT;
		if (argc == 3 && strcmp(argv[1], "port") == 0 &&
		    parse_int(argv[2], 1, 65535, &v, &err) == 0) {
			r->port = (uint16_t)v;
			i = 3;
		}
	} else if (strcmp(what, "send") == 0 && argc == 2) {
		r->type = TCPCHK_SEND;
		r->data = xstrdup(argv[1]);
		r->len = strlen(argv[1]);
		i = 2;
	} else if (strcmp(what, "send-binary") == 0 && argc == 2) {
		r->type = TCPCHK_SEND;
		if (hex_decode(argv[1], &r->data, &r->len) == -1) {
			cfg_alert(ctx, "'send-binary' expects an even number of hex digits");
			goto fail;
		}
		i = 2;
	} else if (strcmp(what, "expect") == 0) {
		r->type = TCPCHK_EXPECT;
		if (i < argc && strcmp(argv[i], "!") == 0) {
			r->inverse = 1;
			i++;
		}
		if (i + 1 >= argc) {
			cfg_alert(ctx, "expects 'expect [!] string|rstring|binary <pattern>'");
			goto fail;
		}
		r->text = xstrdup(argv[i + 1]);
		if (strcmp(argv[i], "string") == 0 || strcmp(argv[i], "rstring") == 0) {
			r->match = argv[i][0] == 'r' ? TCPCHK_M_RSTRING : TCPCHK_M_STRING;
			r->data = xstrdup(argv[i + 1]);
			r->len = strlen(argv[i + 1]);
			if (r->match == TCPCHK_M_RSTRING && tcpchk_compile_regex(ctx, r) == -1)
				goto fail;
		} else if (strcmp(argv[i], "binary") == 0) {
			r->match = TCPCHK_M_BINARY;
			if (hex_decode(argv[i + 1], &r->data, &r->len) == -1) {
				cfg_alert(ctx, "'expect binary' expects an even number of hex digits");
				goto fail;
			}
		} else {
			cfg_alert(ctx, "unknown expect type '%s' (string, rstring or binary)", argv[i]);
			goto fail;
		}
		i += 2;
	} else if (strcmp(what, "comment") == 0 && argc >= 2) {
		r->type = TCPCHK_COMMENT;
		r->text = xstrdup(argv[1]);
		i = argc;
	} else {
		cfg_alert(ctx, "expects connect [port <n>], send <string>, send-binary <hex>, "
			  "expect [!] string|rstring|binary <pattern> or comment <text>");
		goto fail;
	}
	if (i < argc) {
		cfg_alert(ctx, "unexpected argument '%s'", argv[i]);
		goto fail;
	}
	if (ctx->px->tcpchk_inherited) {
		/* Rules of its own replace those of the defaults. */
		tcpchk_free(ctx->px);
		ctx->px->tcpchk_inherited = 0;
	}
	if (r->type == TCPCHK_CONNECT && first_rule(ctx->px->tcpchk)) {
		cfg_alert(ctx, "sluice supports 'tcp-check connect' only as the first rule");
		goto fail;
	}
	for (tail = &ctx->px->tcpchk; *tail; tail = &(*tail)->next)
		if (!(*tail)->next && (*tail)->type == TCPCHK_COMMENT && r->type != TCPCHK_COMMENT)
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

/* A copy of rule <r> (inheritance from defaults). */
static struct tcpchk_rule *rule_dup(const struct tcpchk_rule *r)
{
	struct tcpchk_rule *d = xcalloc(1, sizeof(*d));

	BUG_ON(r->req, "HTTP rules are shared, not copied");
	*d = *r;
	d->next = NULL;
	if (r->data) {
		d->data = xcalloc(1, r->len + 1);
		memcpy(d->data, r->data, r->len);
	}
	d->text = r->text ? xstrdup(r->text) : NULL;
	d->comment = r->comment ? xstrdup(r->comment) : NULL;
	if (r->codes) {
		d->codes = xcalloc((size_t)r->ncodes, sizeof(*d->codes));
		memcpy(d->codes, r->codes, sizeof(*d->codes) * (size_t)r->ncodes);
	}
#ifdef USE_PCRE2
	if (r->re) {
		d->re = pcre2_code_copy(r->re);
		BUG_ON(!d->re, "out of memory copying a regex");
		pcre2_jit_compile(d->re, PCRE2_JIT_COMPLETE);   /* best effort */
	}
#endif
	return d;
}

/* A proxy starts with a copy of its defaults' tcp-check rules; a
 * "tcp-check" line of its own replaces them (tcpchk_inherited). */
static void tcpchk_inherit(struct proxy *px, const struct proxy *def)
{
	struct tcpchk_rule **tail = &px->tcpchk;

	if (!(px->cap & (PR_CAP_BE | PR_CAP_DEF)))
		return;
	for (const struct tcpchk_rule *r = def->tcpchk; r; r = r->next) {
		*tail = rule_dup(r);
		tail = &(*tail)->next;
	}
	px->tcpchk_inherited = !!def->tcpchk;
}

static struct proxy_ext tcpchk_ext = { tcpchk_inherit, NULL, NULL };

/* [no] option tcp-check: the last check type named wins ("option httpchk",
 * a protocol check). */
static int kw_opt_tcp_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct chk_px *cp;

	if (argc) {
		cfg_alert(ctx, "takes no argument (got '%s')", argv[0]);
		return -1;
	}
	cp = chk_px_w(ctx->px);
	if (ctx->inverted)
		cp->options &= ~CHK_O_TCPCHK;
	else
		cp->options = (cp->options | CHK_O_TCPCHK) & ~CHK_O_HTTPCHK;
	return 0;
}

static int tcpchk_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		if (rules_are_user_tcp(px->tcpchk) && !px->tcpchk_inherited &&
		    !(chk_px_of(px)->options & CHK_O_TCPCHK))
			log_warning("%s:%d: backend '%s' has tcp-check rules but no 'option tcp-check': "
				    "they are not used", px->conf_file, px->conf_line, px->name);
	return 0;
}

static struct cfg_kw tcpchk_kws[] = {
	{ "tcp-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_tcp_check,
	  .usage = "connect|send|send-binary|expect|comment ..." },
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
