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

#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/tcpcheck.h>
#include <sluice/units.h>

#define TCPCHK_RBUF_MAX 16384   /* bytes of response kept for expect rules */

int tcpchk_enabled(const struct proxy *px)
{
	return (px->options & PR_O_TCPCHK) && px->tcpchk;
}

uint16_t tcpchk_connect_port(const struct proxy *px)
{
	return tcpchk_enabled(px) && px->tcpchk->type == TCPCHK_CONNECT ? px->tcpchk->port : 0;
}

void tcpchk_reset(struct check *c)
{
	free(c->rbuf);
	c->rbuf = NULL;
	c->rlen = 0;
	c->rclosed = 0;
	c->step = NULL;
	c->step_no = 0;
}

static void rule_free(struct tcpchk_rule *r)
{
#ifdef USE_PCRE2
	if (r->re)
		pcre2_code_free(r->re);
#endif
	free(r->data);
	free(r->text);
	free(r);
}

void tcpchk_free(struct proxy *px)
{
	while (px->tcpchk) {
		struct tcpchk_rule *r = px->tcpchk;

		px->tcpchk = r->next;
		rule_free(r);
	}
}

/* Does the response so far contain what <r> looks for? */
static int rule_matches(const struct tcpchk_rule *r, const char *buf, size_t len)
{
#ifdef USE_PCRE2
	if (r->match == TCPCHK_M_RSTRING) {
		pcre2_match_data *md = pcre2_match_data_create_from_pattern(r->re, NULL);
		int rc;

		if (!md)
			return 0;
		rc = pcre2_match(r->re, (PCRE2_SPTR)buf, len, 0, 0, md, NULL);
		pcre2_match_data_free(md);
		return rc >= 0;
	}
#endif
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
		if (c->rlen == TCPCHK_RBUF_MAX)
			return 0;
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

enum tcpchk_res tcpchk_run(struct check *c, const char **info)
{
	static char msg[160];
	const struct proxy *px = c->srv->px;

	if (!c->step) {
		c->step = px->tcpchk;
		c->step_no = 1;
	}
	if (tcpchk_read(c) == -1) {
		*info = strerror(errno);
		return TCPCHK_FAIL;
	}
	for (; c->step; c->step = c->step->next, c->step_no++) {
		const struct tcpchk_rule *r = c->step;

		switch (r->type) {
		case TCPCHK_CONNECT:
		case TCPCHK_COMMENT:
			continue;   /* the connection is the check's own */
		case TCPCHK_SEND:
			if (send(c->fd, r->data, r->len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)r->len) {
				snprintf(msg, sizeof(msg), "TCPCHK send failed at step %d", c->step_no);
				*info = msg;
				return TCPCHK_FAIL;
			}
			continue;
		case TCPCHK_EXPECT: {
			int found = c->rbuf && rule_matches(r, c->rbuf, c->rlen);

			if (found && !r->inverse) {
				/* What matched is consumed: the next expect reads on. */
				c->rlen = 0;
				continue;
			}
			if (!found && !c->rclosed && c->rlen < TCPCHK_RBUF_MAX)
				return TCPCHK_WAIT_READ;  /* more may come */
			if (!found && r->inverse)
				continue;
			snprintf(msg, sizeof(msg), "TCPCHK %s content '%.60s' at step %d",
				 r->inverse ? "matched unwanted" : "did not match", r->text, c->step_no);
			*info = msg;
			return TCPCHK_FAIL;
		}
		}
	}
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

static int tcpchk_compile(struct cfg_ctx *ctx, struct tcpchk_rule *r)
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
			if (r->match == TCPCHK_M_RSTRING && tcpchk_compile(ctx, r) == -1)
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
	if (r->type == TCPCHK_CONNECT && ctx->px->tcpchk) {
		cfg_alert(ctx, "sluice supports 'tcp-check connect' only as the first rule");
		goto fail;
	}
	for (tail = &ctx->px->tcpchk; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	return 0;
fail:
	rule_free(r);
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
	tcpchk_free(ctx->px);
	ctx->px->options |= PR_O_TCPCHK;
	if (kw_tcp_check(ctx, NULL, 2, send_ping) == -1 || kw_tcp_check(ctx, NULL, 3, expect_pong) == -1)
		return -1;
	return 0;
}

static int tcpchk_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		if (px->tcpchk && !(px->options & PR_O_TCPCHK))
			log_warning("%s:%d: backend '%s' has tcp-check rules but no 'option tcp-check': "
				    "they are not used", px->conf_file, px->conf_line, px->name);
	return 0;
}

static struct cfg_kw tcpchk_kws[] = {
	{ "tcp-check", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0, .parse = kw_tcp_check,
	  .usage = "connect|send|send-binary|expect|comment ..." },
	{ "option tcp-check", CFG_SEC_BE, CFG_T_FLAG, CFG_PX_OFF(options), .mask = PR_O_TCPCHK },
	{ "option redis-check", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_redis_check },
};

SLUICE_INIT(tcpchk_register)
{
	cfg_register(tcpchk_kws, ARRAY_SIZE(tcpchk_kws));
	cfg_register_postparse(tcpchk_postparse, 45);
}
