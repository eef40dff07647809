/* Protocol health checks: "option ssl-hello-chk", "option smtpchk",
 * "option mysql-check", "option pgsql-check", "option ldap-check" and
 * "option spop-check". Each builds a tcp-check ruleset (tcpcheck.h) whose
 * expect rules read the server's answer with a small parser of that
 * protocol. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/proxy.h>
#include <sluice/spop.h>
#include <sluice/str.h>
#include <sluice/tcpcheck.h>

/* ---- building rulesets ---- */

struct ruleset {
	struct tcpchk_rule *head, **tail;
};

static struct tcpchk_rule *rs_add(struct ruleset *rs, enum tcpchk_type type)
{
	struct tcpchk_rule *r = xcalloc(1, sizeof(*r));

	r->type = type;
	r->flags = TCPCHK_F_PROTO;
	*rs->tail = r;
	rs->tail = &r->next;
	return r;
}

static void rs_send(struct ruleset *rs, const void *data, size_t len, const char *what)
{
	struct tcpchk_rule *r = rs_add(rs, TCPCHK_SEND);

	r->data = xcalloc(1, len + 1);
	memcpy(r->data, data, len);
	r->len = len;
	r->text = xstrdup(what);
}

static struct tcpchk_rule *rs_expect(struct ruleset *rs, tcpchk_proto_fn fn, const char *what)
{
	struct tcpchk_rule *r = rs_add(rs, TCPCHK_EXPECT);

	r->match = TCPCHK_M_PROTO;
	r->proto = fn;
	r->text = xstrdup(what);
	return r;
}

/* Makes the ruleset the proxy's checks ("option tcp-check" semantics). */
static void rs_install(struct cfg_ctx *ctx, struct ruleset *rs)
{
	tcpchk_set_rules(ctx->px, rs->head);
}

#define RS_INIT(rs) do { (rs).head = NULL; (rs).tail = &(rs).head; } while (0)

/* The answer ended before the expected reply began. */
static enum tcpchk_res empty_answer(struct check *c, const char **info, char *buf, size_t sz)
{
	snprintf(buf, sz, "TCPCHK got an empty response at step %d", c->step_no);
	*info = buf;
	c->run_code = 0;
	return TCPCHK_FAIL;
}

/* ---- ssl-hello-chk ---- */

/* A TLS 1.2 ClientHello (RFC 5246 7.4.1.2) with common suites and the
 * extensions servers need to pick one; any TLS record back (a handshake, or
 * an alert) shows that the server speaks TLS. */
static size_t ssl_hello_build(unsigned char *out, size_t sz)
{
	static const uint16_t suites[] = {
		0x1301, 0x1302, 0x1303,                 /* TLS 1.3 */
		0xc02b, 0xc02f, 0xc02c, 0xc030,         /* ECDHE with AES-GCM */
		0xcca9, 0xcca8,                         /* ECDHE with ChaCha20 */
		0xc009, 0xc013, 0xc00a, 0xc014,         /* ECDHE with AES-CBC */
		0x009c, 0x009d, 0x002f, 0x0035, 0x000a, /* RSA */
	};
	static const unsigned char exts[] = {
		0x00, 0x0a, 0x00, 0x08, 0x00, 0x06, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x18, /* groups */
		0x00, 0x0b, 0x00, 0x02, 0x01, 0x00,                                     /* points */
		0x00, 0x0d, 0x00, 0x14, 0x00, 0x12, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, /* sigalgs */
		0x08, 0x04, 0x08, 0x05, 0x08, 0x06, 0x04, 0x01, 0x05, 0x01, 0x06, 0x01,
	};
	unsigned char body[256];
	size_t n = 0, hs;

	body[n++] = 0x03;   /* client_version: TLS 1.2 */
	body[n++] = 0x03;
	for (int i = 0; i < 32; i++)   /* random: any bytes do for a probe */
		body[n++] = (unsigned char)("sluice health check, ssl-hello.."[i]);
	body[n++] = 0;      /* no session id */
	body[n++] = (unsigned char)(sizeof(suites) >> 8);
	body[n++] = (unsigned char)sizeof(suites);
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		body[n++] = (unsigned char)(suites[i] >> 8);
		body[n++] = (unsigned char)suites[i];
	}
	body[n++] = 1;      /* compression: null only */
	body[n++] = 0;
	body[n++] = (unsigned char)(sizeof(exts) >> 8);
	body[n++] = (unsigned char)sizeof(exts);
	memcpy(body + n, exts, sizeof(exts));
	n += sizeof(exts);
	hs = n + 4;
	BUG_ON(hs + 5 > sz, "ClientHello buffer too small");
	out[0] = 0x16;      /* record: handshake, TLS 1.0 for compatibility */
	out[1] = 0x03;
	out[2] = 0x01;
	out[3] = (unsigned char)(hs >> 8);
	out[4] = (unsigned char)hs;
	out[5] = 0x01;      /* client_hello */
	out[6] = 0;
	out[7] = (unsigned char)(n >> 8);
	out[8] = (unsigned char)n;
	memcpy(out + 9, body, n);
	return hs + 5;
}

static enum tcpchk_res expect_ssl_hello(struct check *c, const struct tcpchk_rule *r,
                                        enum chk_result *res, const char **info, char *buf,
                                        size_t sz)
{
	*res = CHK_R_L6RSP;
	*info = "";
	if (!c->rlen)
		return tcpchk_input_done(c) ? TCPCHK_FAIL : TCPCHK_WAIT_READ;
	/* 0x16: handshake (a ServerHello), 0x15: alert: TLS either way. */
	if (c->rbuf[0] == 0x16 || c->rbuf[0] == 0x15)
		return TCPCHK_PASS;
	return TCPCHK_FAIL;
}

static int kw_ssl_hello_chk(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	unsigned char hello[512];
	struct ruleset rs;
	size_t n;

	if (argc) {
		cfg_alert(ctx, "takes no argument (got '%s')", argv[0]);
		return -1;
	}
	RS_INIT(rs);
	n = ssl_hello_build(hello, sizeof(hello));
	rs_send(&rs, hello, n, "TLS ClientHello");
	rs_expect(&rs, expect_ssl_hello, "TLS record")->ok_res = CHK_R_L6OK;
	rs_install(ctx, &rs);
	return 0;
}

/* ---- smtpchk ---- */

/* Reads one SMTP reply (RFC 5321 4.2: "NNN-text" lines, then "NNN text"):
 * 2xx passes, with the code and the text of its last line as the check's
 * code and info; another code fails (L7STS), text that is not a reply is
 * L7RSP. */
static enum tcpchk_res expect_smtp(struct check *c, const struct tcpchk_rule *r,
                                   enum chk_result *res, const char **info, char *buf,
                                   size_t sz)
{
	static char text[128];
	size_t off = 0;

	*res = CHK_R_L7RSP;
	*info = "";
	if (!c->rlen) {
		if (!tcpchk_input_done(c))
			return TCPCHK_WAIT_READ;
		*res = CHK_R_L7STS;   /* as HAProxy: a reply was due */
		return empty_answer(c, info, buf, sz);
	}
	for (;;) {
		const char *line = c->rbuf + off;
		const char *eol = memchr(line, '\n', c->rlen - off);
		size_t llen;
		int code;

		if (!eol)
			break;
		llen = (size_t)(eol - line);
		if (llen && line[llen - 1] == '\r')
			llen--;
		if (llen < 3 || !isdigit((unsigned char)line[0]) || !isdigit((unsigned char)line[1]) ||
		    !isdigit((unsigned char)line[2]) || (llen > 3 && line[3] != ' ' && line[3] != '-')) {
			snprintf(buf, sz, "%.*s", (int)MIN(llen, 100), line);
			*info = buf;
			return TCPCHK_FAIL;
		}
		off = (size_t)(eol - c->rbuf) + 1;
		if (llen > 3 && line[3] == '-')
			continue;   /* more lines of the same reply */
		code = (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
		c->run_code = code;
		snprintf(text, sizeof(text), "%.*s", (int)(llen > 4 ? MIN(llen - 4, 100) : 0),
			 line + 4);
		/* This reply is read: the next expect looks at the next one. */
		memmove(c->rbuf, c->rbuf + off, c->rlen - off);
		c->rlen -= off;
		if (code / 100 == 2) {
			c->run_info = text;
			return TCPCHK_PASS;
		}
		*res = CHK_R_L7STS;
		*info = text;
		return TCPCHK_FAIL;
	}
	if (!tcpchk_input_done(c))
		return TCPCHK_WAIT_READ;
	snprintf(buf, sz, "%.*s", (int)MIN(c->rlen, 100), c->rbuf);
	*info = buf;
	return TCPCHK_FAIL;
}

/* option smtpchk [HELO|EHLO <domain>] */
static int kw_smtpchk(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *hello = "HELO", *domain = "localhost";
	struct ruleset rs;
	char line[300];
	int n;

	if (argc > 2) {
		cfg_alert(ctx, "cannot handle unexpected argument '%s' (expects [HELO|EHLO <domain>])",
			  argv[2]);
		return -1;
	}
	/* As in HAProxy, anything but EHLO means HELO. */
	if (argc >= 1 && strcmp(argv[0], "EHLO") == 0)
		hello = "EHLO";
	if (argc == 2)
		domain = argv[1];
	n = snprintf(line, sizeof(line), "%s %s\r\n", hello, domain);
	if (n < 0 || (size_t)n >= sizeof(line) || strpbrk(domain, "\r\n")) {
		cfg_alert(ctx, "invalid domain '%s'", domain);
		return -1;
	}
	RS_INIT(rs);
	rs_expect(&rs, expect_smtp, "SMTP greeting");
	rs_send(&rs, line, (size_t)n, hello);
	rs_expect(&rs, expect_smtp, "SMTP hello reply");
	rs_send(&rs, "QUIT\r\n", 6, "QUIT");
	rs_expect(&rs, expect_smtp, "SMTP quit reply");
	rs_install(ctx, &rs);
	return 0;
}

/* ---- pgsql-check ---- */

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The answer to a StartupMessage: an authentication request ('R') means
 * the server is up; an ErrorResponse ('E') gives its first field as info. */
static enum tcpchk_res expect_pgsql(struct check *c, const struct tcpchk_rule *r,
                                    enum chk_result *res, const char **info, char *buf,
                                    size_t sz)
{
	const unsigned char *p = (const unsigned char *)c->rbuf;

	*res = CHK_R_L7RSP;
	*info = "";
	if (!c->rlen)
		return tcpchk_input_done(c) ? empty_answer(c, info, buf, sz) : TCPCHK_WAIT_READ;
	if (p[0] == 'R')
		return TCPCHK_PASS;
	if (p[0] == 'E') {
		uint32_t len;
		size_t end;

		if (c->rlen < 5)
			return tcpchk_input_done(c) ? TCPCHK_FAIL : TCPCHK_WAIT_READ;
		len = get32(p + 1);
		if (c->rlen < 1 + (size_t)len && !tcpchk_input_done(c))
			return TCPCHK_WAIT_READ;
		/* 'E', length, then fields: a type byte and a string each. */
		end = MIN(c->rlen, 1 + (size_t)len);
		if (end > 6) {
			const char *f = c->rbuf + 6;
			size_t flen = strnlen(f, end - 6);

			snprintf(buf, sz, "%.*s", (int)MIN(flen, 100), f);
			*info = buf;
		}
	}
	return TCPCHK_FAIL;
}

/* option pgsql-check user <name> */
static int kw_pgsql_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	unsigned char msg[300];
	struct ruleset rs;
	size_t ulen, n;

	if (argc != 2 || strcmp(argv[0], "user") != 0 || !*argv[1]) {
		cfg_alert(ctx, argc > 2 ? "cannot handle unexpected argument '%s' (expects user <name>)" :
			  "expects user <name>%s", argc > 2 ? argv[2] : "");
		return -1;
	}
	ulen = strlen(argv[1]);
	if (ulen > 200) {
		cfg_alert(ctx, "user name too long (200 characters at most)");
		return -1;
	}
	/* StartupMessage: length, protocol 3.0, "user" <name>, end of list. */
	n = 4 + 4 + 5 + ulen + 1 + 1;
	put32(msg, (uint32_t)n);
	put32(msg + 4, 3 << 16);
	memcpy(msg + 8, "user", 5);
	memcpy(msg + 13, argv[1], ulen + 1);
	msg[n - 1] = 0;
	RS_INIT(rs);
	rs_send(&rs, msg, n, "StartupMessage");
	rs_expect(&rs, expect_pgsql, "authentication request")->ok_info = "PostgreSQL server is ok";
	rs_install(ctx, &rs);
	return 0;
}

/* ---- mysql-check ---- */

/* One MySQL packet at the start of the answer: 3-byte length, sequence,
 * payload. Returns the payload length, 0 when more is needed (*<p> set),
 * -1 when the answer ended first. */
static int mysql_packet(const struct check *c, const unsigned char **p)
{
	size_t len;

	*p = (const unsigned char *)c->rbuf + 4;
	if (c->rlen < 4)
		return tcpchk_input_done(c) ? -1 : 0;
	len = (size_t)(*p)[-4] | (size_t)(*p)[-3] << 8 | (size_t)(*p)[-2] << 16;
	if (c->rlen < 4 + len)
		return tcpchk_input_done(c) || 4 + len > TCPCHK_RBUF_MAX ? -1 : 0;
	return len ? (int)MIN(len, (size_t)INT32_MAX) : -1;
}

/* An ERR packet: the error number is the code, its message the info. */
static enum tcpchk_res mysql_error(struct check *c, const unsigned char *p, int len,
                                   enum chk_result *res, const char **info, char *buf,
                                   size_t sz)
{
	*res = CHK_R_L7STS;
	c->run_code = len >= 3 ? p[1] | p[2] << 8 : 0;
	snprintf(buf, sz, "%.*s", len > 3 ? MIN(len - 3, 100) : 0, (const char *)p + 3);
	*info = buf;
	return TCPCHK_FAIL;
}

/* Reads one MySQL packet for an expect step. Returns 1 with <p>/<len> set
 * when a non-ERR packet is there, else the step's verdict in <v> (0). */
static int mysql_expect_packet(struct check *c, const unsigned char **p, int *len,
                               enum chk_result *res, const char **info, char *buf, size_t sz,
                               enum tcpchk_res *v)
{
	*len = mysql_packet(c, p);
	*res = CHK_R_L7RSP;
	*info = "";
	if (*len == 0)
		*v = TCPCHK_WAIT_READ;
	else if (*len < 0)
		*v = c->rlen ? TCPCHK_FAIL : empty_answer(c, info, buf, sz);
	else if ((*p)[0] == 0xff)
		*v = mysql_error(c, *p, *len, res, info, buf, sz);
	else
		return 1;
	return 0;
}

/* The server's greeting: a handshake packet (protocol 9 or 10) or an ERR. */
static enum tcpchk_res expect_mysql_hello(struct check *c, const struct tcpchk_rule *r,
                                          enum chk_result *res, const char **info, char *buf,
                                          size_t sz)
{
	const unsigned char *p;
	enum tcpchk_res v;
	int len;

	if (!mysql_expect_packet(c, &p, &len, res, info, buf, sz, &v))
		return v;
	if (p[0] != 10 && p[0] != 9)
		return TCPCHK_FAIL;
	c->rlen = 0;   /* read: what follows is the answer to our login */
	return TCPCHK_PASS;
}

/* The answer to the login: OK, or an ERR saying why. */
static enum tcpchk_res expect_mysql_ok(struct check *c, const struct tcpchk_rule *r,
                                       enum chk_result *res, const char **info, char *buf,
                                       size_t sz)
{
	const unsigned char *p;
	enum tcpchk_res v;
	int len;

	if (!mysql_expect_packet(c, &p, &len, res, info, buf, sz, &v))
		return v;
	return p[0] == 0x00 ? TCPCHK_PASS : TCPCHK_FAIL;
}

/* option mysql-check [user <name> [post-41|pre-41]] */
static int kw_mysql_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	unsigned char pkt[300];
	struct ruleset rs;
	size_t ulen, n = 4;
	int pre41 = 0;

	if (argc == 1 || (argc >= 1 && strcmp(argv[0], "user") != 0) || argc > 3 ||
	    (argc == 3 && strcmp(argv[2], "post-41") && strcmp(argv[2], "pre-41"))) {
		cfg_alert(ctx, "expects [user <name> [post-41|pre-41]]");
		return -1;
	}
	RS_INIT(rs);
	rs_expect(&rs, expect_mysql_hello, "MySQL handshake");
	if (argc >= 2) {
		pre41 = argc == 3 && strcmp(argv[2], "pre-41") == 0;
		ulen = strlen(argv[1]);
		if (!ulen || ulen > 200) {
			cfg_alert(ctx, "invalid user name '%s'", argv[1]);
			tcpchk_rule_free(rs.head);
			return -1;
		}
		/* Login with no password (sequence 1), then COM_QUIT (sequence 0). */
		if (pre41) {
			pkt[n++] = 0x80;   /* capabilities: CLIENT_SECURE_CONNECTION */
			pkt[n++] = 0x00;
			pkt[n++] = 0x00;   /* max packet size: 0 */
			pkt[n++] = 0x00;
			pkt[n++] = 0x00;
		} else {
			static const unsigned char caps[] = {
				0x00, 0xa2, 0x00, 0x00,   /* PROTOCOL_41, SECURE_CONNECTION, ... */
				0x00, 0x00, 0x00, 0x01,   /* max packet size: 16 MB */
				0x21,                     /* charset: utf8 */
			};

			memcpy(pkt + n, caps, sizeof(caps));
			n += sizeof(caps);
			memset(pkt + n, 0, 23);   /* reserved */
			n += 23;
		}
		memcpy(pkt + n, argv[1], ulen + 1);
		n += ulen + 1;
		pkt[n++] = 0x00;   /* no auth data */
		pkt[0] = (unsigned char)(n - 4);
		pkt[1] = 0;
		pkt[2] = 0;
		pkt[3] = 1;
		memcpy(pkt + n, "\x01\x00\x00\x00\x01", 5);   /* COM_QUIT */
		n += 5;
		rs_send(&rs, pkt, n, "MySQL login and quit");
		rs_expect(&rs, expect_mysql_ok, "MySQL OK");
	}
	rs_install(ctx, &rs);
	return 0;
}

/* ---- ldap-check ---- */

/* Reads a BER length at p[*i] (short or long form, up to 4 bytes).
 * Returns the length, or -1 when <len> bytes do not hold it. */
static long ber_len(const unsigned char *p, size_t len, size_t *i)
{
	long v = 0;
	int n;

	if (*i >= len)
		return -1;
	if (!(p[*i] & 0x80))
		return p[(*i)++];
	n = p[(*i)++] & 0x7f;
	if (n == 0 || n > 4 || *i + (size_t)n > len)
		return -1;
	while (n--)
		v = v << 8 | p[(*i)++];
	return v;
}

/* The BindResponse (RFC 4511 4.2.2): resultCode 0 passes; another is
 * L7STS with that code; anything else is not LDAPv3. */
static enum tcpchk_res expect_ldap(struct check *c, const struct tcpchk_rule *r,
                                   enum chk_result *res, const char **info, char *buf,
                                   size_t sz)
{
	const unsigned char *p = (const unsigned char *)c->rbuf;
	size_t i = 1, n = c->rlen;
	long mlen, idlen;

	*res = CHK_R_L7RSP;
	*info = "";
	if (!n)
		return tcpchk_input_done(c) ? empty_answer(c, info, buf, sz) : TCPCHK_WAIT_READ;
	if (p[0] != 0x30)   /* LDAPMessage ::= SEQUENCE */
		goto not_ldap;
	mlen = ber_len(p, n, &i);
	if (mlen < 0 || n < i + (size_t)mlen)
		return tcpchk_input_done(c) ? (*info = "Not LDAPv3 protocol", TCPCHK_FAIL) :
		       TCPCHK_WAIT_READ;
	n = i + (size_t)mlen;
	/* messageID INTEGER */
	if (i >= n || p[i++] != 0x02 || (idlen = ber_len(p, n, &i)) < 0 || i + (size_t)idlen > n)
		goto not_ldap;
	i += (size_t)idlen;
	/* bindResponse [APPLICATION 1], then resultCode ENUMERATED */
	if (i >= n || p[i++] != 0x61 || ber_len(p, n, &i) < 0)
		goto not_ldap;
	if (i + 3 > n || p[i] != 0x0a || p[i + 1] != 0x01)
		goto not_ldap;
	if (p[i + 2] == 0)
		return TCPCHK_PASS;
	c->run_code = p[i + 2];
	*res = CHK_R_L7STS;
	*info = "See RFC: http://tools.ietf.org/html/rfc4511#section-4.1.9";
	return TCPCHK_FAIL;
not_ldap:
	*info = "Not LDAPv3 protocol";
	return TCPCHK_FAIL;
}

static int kw_ldap_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	/* BindRequest (RFC 4511 4.2): messageID 1, version 3, anonymous simple bind. */
	static const unsigned char bind[] = {
		0x30, 0x0c, 0x02, 0x01, 0x01, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00,
	};
	struct ruleset rs;

	if (argc) {
		cfg_alert(ctx, "takes no argument (got '%s')", argv[0]);
		return -1;
	}
	RS_INIT(rs);
	rs_send(&rs, bind, sizeof(bind), "LDAP bind request");
	rs_expect(&rs, expect_ldap, "LDAP bind response");
	rs_install(ctx, &rs);
	return 0;
}

/* ---- spop-check ---- */

/* The agent's answer to the HELLO: an AGENT-HELLO naming version 2.0 and
 * its max-frame-size passes; an AGENT-DISCONNECT fails with the words of
 * its status code; anything else is L7RSP, as HAProxy reports them. The
 * frame codec is spop.h's, shared with the SPOE filter. */
static enum tcpchk_res expect_spop(struct check *c, const struct tcpchk_rule *r,
                                   enum chk_result *res, const char **info, char *buf,
                                   size_t sz)
{
	const unsigned char *p = (const unsigned char *)c->rbuf;
	struct spop_frame f;
	struct spop_kv kv = { 0 };
	long n;
	int st;

	*res = CHK_R_L7RSP;
	*info = "";
	if (c->rlen < 4)
		return tcpchk_input_done(c) ? empty_answer(c, info, buf, sz) : TCPCHK_WAIT_READ;
	n = spop_frame_parse(p, c->rlen, SPOP_FRAME_MAX, &f);
	if (n == 0 && !tcpchk_input_done(c))
		return TCPCHK_WAIT_READ;
	if (n == -1) {
		*info = spop_status_str(3);
		return TCPCHK_FAIL;
	}
	if (n <= 0 || (f.type != SPOP_F_AGENT_HELLO && f.type != SPOP_F_AGENT_DISCONNECT) ||
	    spop_read_kv(f.pl, f.pl_len, &kv) == -1) {
		*info = spop_status_str(4);
		return TCPCHK_FAIL;
	}
	if (f.type == SPOP_F_AGENT_DISCONNECT) {
		*info = spop_status_str(kv.has_status ? kv.status : 99);
		return TCPCHK_FAIL;
	}
	st = spop_hello_check(&kv, SPOP_FRAME_MAX);
	if (!st)
		return TCPCHK_PASS;
	*info = spop_status_str((uint64_t)st);
	return TCPCHK_FAIL;
}

/* option spop-check: a HAPROXY-HELLO frame saying it is a health check. */
static int kw_spop_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	unsigned char f[128];
	struct spop_wr w = { f, sizeof(f), 0, 0 };
	struct ruleset rs;

	if (argc) {
		cfg_alert(ctx, "takes no argument (got '%s')", argv[0]);
		return -1;
	}
	BUG_ON(spop_hello_build(&w, SPOP_FRAME_MAX, "", NULL, 1) == -1, "HELLO too big");
	RS_INIT(rs);
	rs_send(&rs, f, w.n, "SPOP HAPROXY-HELLO");
	rs_expect(&rs, expect_spop, "SPOP AGENT-HELLO");
	rs_install(ctx, &rs);
	return 0;
}

static struct cfg_kw protochk_kws[] = {
	{ "option ssl-hello-chk", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_ssl_hello_chk },
	{ "option smtpchk", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_smtpchk,
	  .usage = "[HELO|EHLO <domain>]" },
	{ "option pgsql-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_pgsql_check,
	  .usage = "user <name>" },
	{ "option mysql-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_mysql_check,
	  .usage = "[user <name> [post-41|pre-41]]" },
	{ "option ldap-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_ldap_check },
	{ "option spop-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_spop_check },
};

SLUICE_INIT(protochk_register)
{
	cfg_register(protochk_kws, ARRAY_SIZE(protochk_kws));
}
