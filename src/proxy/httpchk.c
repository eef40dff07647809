/* HTTP health checks (httpchk.h): "option httpchk" and "http-check" lines
 * become a tcp-check ruleset with HTTP send and expect rules; the answers
 * are read with the HTTP/1 parser. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/httpchk.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/units.h>

/* The HTTP check settings of a proxy. A proxy shares its defaults' until
 * it writes "option httpchk" or an http-check rule of its own, which starts
 * a fresh ruleset, as in HAProxy. */
struct httpchk_px {
	const struct proxy *owner;
	int                 refs;      /* proxies using it (defaults may be freed first) */
	struct httpchk_req  opt;       /* the request of "option httpchk" */
	int                 has_opt;
	struct tcpchk_rule *rules;     /* http-check connect/send/expect/comment, in order */
	int                 built;     /* post-parse made the rules playable */
};

const struct tcpchk_rule *httpchk_rules(const struct proxy *px)
{
	return px->httpchk && px->httpchk->built ? px->httpchk->rules : NULL;
}

/* ---- requests ---- */

static void req_clear(struct httpchk_req *q)
{
	free(q->meth);
	free(q->uri);
	free(q->ver);
	for (int i = 0; i < q->nhdrs; i++) {
		free(q->hdrs[i].name);
		free(q->hdrs[i].value);
		tcpchk_lf_free(q->hdrs[i].lf);
	}
	free(q->hdrs);
	free(q->body);
	tcpchk_lf_free(q->uri_lf);
	tcpchk_lf_free(q->body_lf);
	memset(q, 0, sizeof(*q));
}

void httpchk_req_free(struct httpchk_req *q)
{
	if (!q)
		return;
	req_clear(q);
	free(q);
}

int httpchk_req_is_head(const struct httpchk_req *q)
{
	return q && q->meth && strcasecmp(q->meth, "HEAD") == 0;
}

static void req_add_hdr(struct httpchk_req *q, const char *name, size_t nlen, const char *value)
{
	struct httpchk_hdr *h;

	q->hdrs = xrealloc(q->hdrs, sizeof(*q->hdrs) * (size_t)(q->nhdrs + 1));
	h = &q->hdrs[q->nhdrs++];
	h->lf = NULL;
	h->name = xcalloc(1, nlen + 1);
	memcpy(h->name, name, nlen);
	h->value = xstrdup(value);
}

static void req_copy_hdrs(struct httpchk_req *to, const struct httpchk_req *from)
{
	for (int i = 0; i < from->nhdrs; i++)
		req_add_hdr(to, from->hdrs[i].name, strlen(from->hdrs[i].name), from->hdrs[i].value);
}

char *httpchk_req_build(const struct httpchk_req *q, size_t *len)
{
	const char *ver = q->ver ? q->ver : "HTTP/1.0";
	struct dstr d = { 0 };
	int has_conn = 0;

	dstr_printf(&d, "%s %s %s\r\n", q->meth ? q->meth : "OPTIONS", q->uri ? q->uri : "/", ver);
	for (int i = 0; i < q->nhdrs; i++) {
		const char *n = q->hdrs[i].name;

		/* The framing is ours: the body decides it. */
		if (strcasecmp(n, "content-length") == 0 || strcasecmp(n, "transfer-encoding") == 0)
			continue;
		has_conn |= strcasecmp(n, "connection") == 0;
		for (; *n; n++)
			dstr_printf(&d, "%c", tolower((unsigned char)*n));
		dstr_printf(&d, ": %s\r\n", q->hdrs[i].value);
	}
	if (q->body)
		dstr_printf(&d, "content-length: %zu\r\n", strlen(q->body));
	/* A check is one exchange: say so to HTTP/1.1 servers. */
	if (!has_conn && strcasecmp(ver, "HTTP/1.0") != 0)
		dstr_printf(&d, "connection: close\r\n");
	dstr_printf(&d, "\r\n%s", q->body ? q->body : "");
	BUG_ON(!d.p, "out of memory building a check request");   /* configuration time */
	*len = d.len;
	return d.p;
}

/* ---- status codes ---- */

int httpchk_codes_parse(const char *s, struct tcpchk_codes **codes, int *n, char *err,
                        size_t errsz)
{
	*codes = NULL;
	*n = 0;
	while (*s) {
		const char *item = s, *comma = strchr(s, ',');
		size_t ilen = comma ? (size_t)(comma - s) : strlen(s);
		long lo = -1, hi;
		char *end = NULL;

		for (size_t i = 0; i < ilen; i++)
			if (!isdigit((unsigned char)item[i]) && item[i] != '-') {
				snprintf(err, errsz, "invalid character '%c' in the list of status codes",
					 item[i]);
				goto fail;
			}
		if (isdigit((unsigned char)*item))
			lo = strtol(item, &end, 10);
		hi = lo;
		if (lo >= 0 && *end == '-' && end + 1 < item + ilen && isdigit((unsigned char)end[1]))
			hi = strtol(end + 1, &end, 10);
		if (lo < 0 || end != item + ilen || hi < lo || hi > 65535) {
			snprintf(err, errsz, "invalid range of status codes '%.*s'", (int)ilen, item);
			goto fail;
		}
		*codes = xrealloc(*codes, sizeof(**codes) * (size_t)(*n + 1));
		(*codes)[*n].lo = (uint16_t)lo;
		(*codes)[*n].hi = (uint16_t)hi;
		(*n)++;
		s = comma ? comma + 1 : item + ilen;
		if (comma && !*s) {
			snprintf(err, errsz, "empty status code at the end of the list");
			goto fail;
		}
	}
	if (*n)
		return 0;
	snprintf(err, errsz, "expects a list of status codes");
fail:
	free(*codes);
	*codes = NULL;
	*n = 0;
	return -1;
}

int httpchk_codes_match(const struct tcpchk_codes *codes, int n, int status)
{
	for (int i = 0; i < n; i++)
		if (status >= codes[i].lo && status <= codes[i].hi)
			return 1;
	return 0;
}

/* ---- answers ---- */

/* Follows chunked framing over p[0..len). With <write>, moves the data of
 * the chunks to the front of <p>. Returns the data bytes seen; <ended>
 * says whether the last chunk was reached. Malformed framing ends the
 * walk where it is. */
static size_t dechunk(char *p, size_t len, int write, int *ended)
{
	size_t in = 0, out = 0;

	*ended = 0;
	while (in < len) {
		uint64_t size = 0;
		size_t digits = 0, take;

		while (in < len && isxdigit((unsigned char)p[in]) && digits < 16) {
			int c = tolower((unsigned char)p[in++]);

			size = size * 16 + (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
			digits++;
		}
		if (!digits)
			break;
		while (in < len && p[in] != '\n')   /* extensions up to the end of line */
			in++;
		if (in == len)
			break;
		in++;
		if (size == 0) {
			*ended = 1;
			break;
		}
		take = (size_t)MIN(size, (uint64_t)(len - in));
		if (write)
			memmove(p + out, p + in, take);
		out += take;
		in += take;
		if (take < size)
			break;
		if (in < len && p[in] == '\r')
			in++;
		if (in < len && p[in] == '\n')
			in++;
	}
	return out;
}

int httpchk_rsp_parse(struct chk_http *st, char *buf, size_t len, int done, int need_body)
{
	size_t avail;

	if (st->state == 0) {
		struct h1_hdr hdrs[HTTPCHK_MAXHDR];
		struct h1_msg m;
		int n;

		size_t skip = 0;

		/* Not HTTP at all is known from the first bytes: fail at once
		 * rather than wait for a head that will never come. */
		while (skip < len && (buf[skip] == '\r' || buf[skip] == '\n'))
			skip++;
		if (memcmp(buf + skip, "HTTP/", MIN(len - skip, 5)) != 0)
			return -1;
		h1_msg_init(&m, hdrs, HTTPCHK_MAXHDR, 1, st->head_req ? H1_M_HEAD : H1_M_GET);
		n = len ? h1_parse(buf, len, TCPCHK_RBUF_MAX, &m) : 0;
		if (n == 0)
			return done ? -1 : 0;
		if (n < 0)
			return -1;
		st->status = m.status;
		st->reason_off = m.reason.off;
		st->reason_len = m.reason.len;
		st->body_off = (uint32_t)n;
		st->flags = m.flags;
		st->clen = m.clen;
		st->state = 1;
	}
	if (!need_body || st->state == 2)
		return 1;
	avail = len - st->body_off;
	if (st->flags & H1_F_NO_BODY) {
		st->body_len = 0;
	} else if (st->flags & H1_F_CHUNKED) {
		int ended;

		dechunk(buf + st->body_off, avail, 0, &ended);
		if (!ended && !done)
			return 0;
		st->body_len = (uint32_t)dechunk(buf + st->body_off, avail, 1, &ended);
	} else if (st->flags & H1_F_CLEN) {
		if (avail < st->clen && !done)
			return 0;
		st->body_len = (uint32_t)MIN((uint64_t)avail, st->clen);
	} else {
		if (!done)
			return 0;   /* the body ends when the server closes */
		st->body_len = (uint32_t)avail;
	}
	st->state = 2;
	return 1;
}

int httpchk_rsp_hdr_any(struct check *c,
                        int (*fn)(const char *n, size_t nl, const char *v, size_t vl,
                                  const void *arg), const void *arg)
{
	struct h1_hdr hdrs[HTTPCHK_MAXHDR];
	struct h1_msg m;

	h1_msg_init(&m, hdrs, HTTPCHK_MAXHDR, 1, c->http.head_req ? H1_M_HEAD : H1_M_GET);
	if (!c->rbuf || h1_parse(c->rbuf, c->rlen, TCPCHK_RBUF_MAX, &m) <= 0)
		return 0;
	for (int i = 0; i < m.nhdrs; i++)
		if (fn(c->rbuf + hdrs[i].name.off, hdrs[i].name.len, c->rbuf + hdrs[i].value.off,
		       hdrs[i].value.len, arg))
			return 1;
	return 0;
}

enum tcpchk_res httpchk_expect(struct check *c, const struct tcpchk_rule *r,
                               enum chk_result *res, const char **info, char *msg, size_t sz)
{
	const struct server *srv = c->srv;
	int body = r->match == TCPCHK_M_HTTP_BODY || r->match == TCPCHK_M_HTTP_RBODY;
	int done = tcpchk_input_done(c), rc = 0, ok, partial = 0;
	uint32_t blen;

	if (c->rbuf)
		rc = httpchk_rsp_parse(&c->http, c->rbuf, c->rlen, done, body);
	if (rc == 0 && !done) {
		/* A body still coming is judged on what came, as HAProxy does
		 * (chunked ones once whole); min-recv waits for that many bytes
		 * of the answer first. */
		if (!body || c->http.state < 1 || (c->http.flags & H1_F_CHUNKED) ||
		    ((r->flags & TCPCHK_F_MIN_RECV) && c->rlen < (size_t)r->min_recv))
			return TCPCHK_WAIT_READ;
		partial = 1;
	} else if (rc <= 0) {
		c->run_code = 0;
		*res = CHK_R_L7RSP;
		*info = "";
		return TCPCHK_FAIL;
	}
	blen = partial ? (uint32_t)(c->rlen - c->http.body_off) : c->http.body_len;
	c->run_code = c->http.status;
	/* disable-on-404 wins over the expect rules, for running servers. */
	if ((chk_px_of(srv->px)->options & CHK_O_DISABLE404) && c->http.status == 404 &&
	    !(srv->flags & SRV_F_DOWN)) {
		*res = CHK_R_L7OKC;
		*info = "";
		return TCPCHK_PASS;
	}
	switch (r->match) {
	case TCPCHK_M_HTTP_RSTATUS: {
		char st[16];
		int n = snprintf(st, sizeof(st), "%d", c->http.status);

		ok = tcpchk_regex_match(r, st, (size_t)n);
		break;
	}
	case TCPCHK_M_HTTP_BODY: {
		static char pat[TCPCHK_RBUF_MAX];
		const char *p = r->data;
		size_t plen = r->len;

		if (r->lf) {   /* string-lf */
			plen = tcpchk_lf_render(c, r->lf, pat, sizeof(pat));
			p = pat;
		}
		ok = blen >= plen && memmem(c->rbuf + c->http.body_off, blen, p, plen) != NULL;
		break;
	}
	case TCPCHK_M_HTTP_HDR:
		ok = httpchk_hdrm_match(c, r->hdrm);
		break;
	case TCPCHK_M_HTTP_RBODY:
		ok = tcpchk_regex_match(r, c->rbuf + c->http.body_off, blen);
		break;
	default:
		ok = httpchk_codes_match(r->codes, r->ncodes, c->http.status);
		break;
	}
	/* on part of a body, only a match decides, or min-recv's bytes */
	if (partial && !ok && !(r->flags & TCPCHK_F_MIN_RECV))
		return TCPCHK_WAIT_READ;
	if (ok != r->inverse) {
		*res = CHK_R_L7OK;
		*info = "";
		return TCPCHK_PASS;
	}
	if (body) {
		c->run_code = 0;
		*res = CHK_R_L7RSP;
		*info = ok ? "HTTP check matched unwanted content" : "HTTP content check did not match";
		return TCPCHK_FAIL;
	}
	/* A status not wanted: the reason phrase says why, as in HAProxy. */
	snprintf(msg, sz, "%.*s", (int)c->http.reason_len, c->rbuf + c->http.reason_off);
	*res = CHK_R_L7STS;
	*info = msg;
	return TCPCHK_FAIL;
}

/* ---- configuration ---- */

static void hc_free(struct httpchk_px *hc)
{
	while (hc->rules) {
		struct tcpchk_rule *r = hc->rules;

		hc->rules = r->next;
		tcpchk_rule_free(r);
	}
	req_clear(&hc->opt);
	free(hc);
}

static void hc_put(struct httpchk_px *hc)
{
	if (hc && --hc->refs == 0)
		hc_free(hc);
}

/* The proxy's own settings, starting afresh if they were its defaults'. */
static struct httpchk_px *hc_own(struct proxy *px)
{
	if (!px->httpchk || px->httpchk->owner != px) {
		hc_put(px->httpchk);
		px->httpchk = xcalloc(1, sizeof(*px->httpchk));
		px->httpchk->owner = px;
		px->httpchk->refs = 1;
	}
	return px->httpchk;
}

static void hc_inherit(struct proxy *px, const struct proxy *def)
{
	px->httpchk = def->httpchk;
	if (px->httpchk)
		px->httpchk->refs++;
}

static void hc_release(struct proxy *px)
{
	hc_put(px->httpchk);
	px->httpchk = NULL;
}

static struct proxy_ext hc_ext = { hc_inherit, hc_release, NULL };

/* The version of "option httpchk" may hide header fields and a body after
 * "\r\n" (an old trick): "HTTP/1.1\r\nHost: a\r\n\r\nbody". Returns 0, or
 * -1 after cfg_alert(). */
static int opt_split_version(struct cfg_ctx *ctx, struct httpchk_req *q, const char *arg)
{
	const char *crlf = strstr(arg, "\r\n"), *p;

	if (!crlf) {
		q->ver = xstrdup(arg);
		return 0;
	}
	cfg_warn(ctx, "hiding headers or body at the end of the version string is deprecated; "
		 "use 'http-check send' instead");
	q->ver = xcalloc(1, (size_t)(crlf - arg) + 1);
	memcpy(q->ver, arg, (size_t)(crlf - arg));
	for (p = crlf + 2; *p; ) {
		const char *eol = strstr(p, "\r\n"), *colon, *v;
		size_t llen = eol ? (size_t)(eol - p) : strlen(p);
		char value[1024];
		size_t vlen;

		if (!llen) {   /* empty line: the rest is the body */
			if (eol && eol[2])
				q->body = xstrdup(eol + 2);
			break;
		}
		colon = memchr(p, ':', llen);
		if (!colon || colon == p) {
			cfg_alert(ctx, "invalid header line '%.*s' after the version (expects "
				  "'<name>: <value>')", (int)llen, p);
			return -1;
		}
		for (v = colon + 1; v < p + llen && (*v == ' ' || *v == '\t'); v++)
			;
		vlen = MIN((size_t)(p + llen - v), sizeof(value) - 1);
		memcpy(value, v, vlen);
		value[vlen] = 0;
		req_add_hdr(q, p, (size_t)(colon - p), value);
		p += llen + (eol ? 2 : 0);
	}
	return 0;
}

/* option httpchk [[<method>] <uri> [<version>]] */
static int kw_option_httpchk(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct httpchk_px *hc;
	struct chk_px *cp;

	if (argc > 3) {
		cfg_alert(ctx, "cannot handle unexpected argument '%s' (expects [<method>] <uri> "
			  "[<version>])", argv[3]);
		return -1;
	}
	hc = hc_own(ctx->px);
	req_clear(&hc->opt);
	hc->has_opt = 1;
	cp = chk_px_w(ctx->px);
	cp->options = (cp->options | CHK_O_HTTPCHK) & ~(CHK_O_TCPCHK | CHK_O_EXTCHK);
	if (argc == 1) {
		hc->opt.uri = xstrdup(argv[0]);
	} else if (argc >= 2) {
		hc->opt.meth = xstrdup(argv[0]);
		hc->opt.uri = xstrdup(argv[1]);
		if (argc == 3)
			return opt_split_version(ctx, &hc->opt, argv[2]);
	}
	return 0;
}

/* Appends <r> to the proxy's ruleset, with HAProxy's ordering rules: a
 * connect rule comes first if there is one, and a request after an expect
 * needs a new connection. A comment just before <r> is its comment. */
static int hc_append(struct cfg_ctx *ctx, struct tcpchk_rule *r)
{
	struct httpchk_px *hc = hc_own(ctx->px);
	struct tcpchk_rule **tail, *prev = NULL, *first = NULL;
	int step = 1, expect_since_connect = 0;

	for (tail = &hc->rules; *tail; tail = &(*tail)->next) {
		prev = *tail;
		if (prev->type == TCPCHK_COMMENT || prev->type == TCPCHK_SET_VAR ||
		    prev->type == TCPCHK_UNSET_VAR)
			continue;
		if (!first)
			first = prev;
		step++;
		if (prev->type == TCPCHK_CONNECT)
			expect_since_connect = 0;
		else if (prev->type == TCPCHK_EXPECT)
			expect_since_connect = 1;
	}
	if (r->type == TCPCHK_CONNECT && first && first->type != TCPCHK_CONNECT) {
		cfg_alert(ctx, "'connect' at step %d: the first rule must then be a 'connect' too "
			  "(only comments and variables may precede it)", step);
		return -1;
	}
	if (r->type == TCPCHK_SEND && expect_since_connect) {
		cfg_alert(ctx, "'send' at step %d needs a new connection after an expect: add an "
			  "'http-check connect' before it", step);
		return -1;
	}
	if (prev && prev->type == TCPCHK_COMMENT && r->type != TCPCHK_COMMENT && !r->comment)
		r->comment = xstrdup(prev->text);
	*tail = r;
	return 0;
}

/* Takes the value of option argv[*i] into <out> (replacing it). */
static int take_arg(struct cfg_ctx *ctx, int argc, char **argv, int *i, char **out,
                    const char *what)
{
	if (*i + 1 >= argc || !*argv[*i + 1]) {
		cfg_alert(ctx, "'%s' expects %s as argument", argv[*i], what);
		return -1;
	}
	free(*out);
	*out = xstrdup(argv[++*i]);
	return 0;
}

static int is_token(const char *s)
{
	return h1_is_token(s, strlen(s));
}

/* http-check send [meth M] [uri U] [ver V] [hdr N V]* [body S] [comment C] */
static int hc_parse_send(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv)
{
	struct httpchk_req *q = r->req = xcalloc(1, sizeof(*r->req));

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "meth") == 0) {
			if (take_arg(ctx, argc, argv, &i, &q->meth, "a method") == -1)
				return -1;
			if (!is_token(q->meth)) {
				cfg_alert(ctx, "invalid method '%s'", q->meth);
				return -1;
			}
		} else if (strcmp(a, "uri") == 0) {
			if (take_arg(ctx, argc, argv, &i, &q->uri, "a URI") == -1)
				return -1;
			tcpchk_lf_free(q->uri_lf);
			q->uri_lf = NULL;
		} else if (strcmp(a, "uri-lf") == 0 || strcmp(a, "body-lf") == 0) {
			struct lf_expr **lf = a[0] == 'u' ? &q->uri_lf : &q->body_lf;

			if (i + 1 >= argc || (a[0] == 'u' && !*argv[i + 1])) {
				cfg_alert(ctx, "'%s' expects a log-format string as argument", a);
				return -1;
			}
			tcpchk_lf_free(*lf);
			if (!(*lf = tcpchk_lf_compile(ctx, a, argv[++i])))
				return -1;
			q->dynamic = 1;
			free(a[0] == 'u' ? q->uri : q->body);
			if (a[0] == 'u')
				q->uri = NULL;
			else
				q->body = NULL;
		} else if (strcmp(a, "ver") == 0) {
			if (take_arg(ctx, argc, argv, &i, &q->ver, "a version") == -1)
				return -1;
		} else if (strcmp(a, "body") == 0) {
			if (i + 1 >= argc) {
				cfg_alert(ctx, "'body' expects a string as argument");
				return -1;
			}
			free(q->body);
			q->body = xstrdup(argv[++i]);
			tcpchk_lf_free(q->body_lf);
			q->body_lf = NULL;
		} else if (strcmp(a, "hdr") == 0) {
			if (i + 2 >= argc) {
				cfg_alert(ctx, "'hdr' expects <name> and <value> as arguments");
				return -1;
			}
			if (!is_token(argv[i + 1])) {
				cfg_alert(ctx, "invalid header name '%s'", argv[i + 1]);
				return -1;
			}
			req_add_hdr(q, argv[i + 1], strlen(argv[i + 1]), argv[i + 2]);
			/* values are log formats: rendered when sent if they need it */
			if (strchr(argv[i + 2], '%')) {
				if (!(q->hdrs[q->nhdrs - 1].lf = tcpchk_lf_compile(ctx, "hdr", argv[i + 2])))
					return -1;
				q->dynamic = 1;
			}
			i += 2;
		} else if (strcmp(a, "comment") == 0) {
			if (take_arg(ctx, argc, argv, &i, &r->comment, "a string") == -1)
				return -1;
		} else {
			cfg_alert(ctx, "'send' expects meth, uri, uri-lf, ver, hdr, body, body-lf or "
				  "comment, but got '%s'", a);
			return -1;
		}
	}
	return 0;
}

/* The patterns of "http-check expect", each a row. */
static const struct {
	const char       *word;
	enum tcpchk_match match;
	uint8_t           regex, lf, hdr;
} hc_patterns[] = {
	{ "status", TCPCHK_M_HTTP_STATUS, 0, 0, 0 },
	{ "rstatus", TCPCHK_M_HTTP_RSTATUS, 1, 0, 0 },
	{ "hdr", TCPCHK_M_HTTP_HDR, 0, 0, 1 },
	{ "fhdr", TCPCHK_M_HTTP_HDR, 0, 0, 1 },
	{ "string", TCPCHK_M_HTTP_BODY, 0, 0, 0 },
	{ "rstring", TCPCHK_M_HTTP_RBODY, 1, 0, 0 },
	{ "string-lf", TCPCHK_M_HTTP_BODY, 0, 1, 0 },
};

/* hdr and fhdr read their pattern of several words. */
static int hc_expect_hdr(struct cfg_ctx *ctx, struct tcpchk_rule *r, size_t k, int argc,
                         char **argv, int *i)
{
	if (!hc_patterns[k].hdr)
		return 0;
	argv[*i] = (char *)hc_patterns[k].word;   /* without its '!' */
	return httpchk_hdrm_parse(ctx, r, argc, argv, i) == -1 ? -1 : 1;
}

/* http-check expect [options] [!] <match> <pattern> [options] */
static int hc_parse_expect(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv)
{
	const char *pat;
	char err[160];
	int k = tcpchk_parse_expect_words(ctx, r, argc, argv, hc_patterns, ARRAY_SIZE(hc_patterns),
					  sizeof(hc_patterns[0]), hc_expect_hdr, &pat);

	if (k < 0)
		return -1;
	r->match = hc_patterns[k].match;
	r->text = str_fmt("%s%s %s", r->inverse ? "! " : "", hc_patterns[k].word, pat);
	if (hc_patterns[k].hdr)
		return 0;
	if (hc_patterns[k].lf)
		return (r->lf = tcpchk_lf_compile(ctx, "string-lf", pat)) ? 0 : -1;
	r->data = xstrdup(pat);
	r->len = strlen(pat);
	if (r->match == TCPCHK_M_HTTP_STATUS &&
	    httpchk_codes_parse(pat, &r->codes, &r->ncodes, err, sizeof(err)) == -1) {
		cfg_alert(ctx, "'expect status': %s", err);
		return -1;
	}
	return hc_patterns[k].regex ? tcpchk_compile_regex(ctx, r) : 0;
}

/* http-check disable-on-404|send-state|send|expect|connect|set-var|set-var-fmt|
 * unset-var|comment ... */
static int kw_http_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *what = argc ? argv[0] : "";
	struct tcpchk_rule *r;
	int ret;

	if (strcmp(what, "disable-on-404") == 0) {
		if (argc > 1) {
			cfg_alert(ctx, "'disable-on-404' takes no argument (got '%s')", argv[1]);
			return -1;
		}
		chk_px_w(ctx->px)->options |= CHK_O_DISABLE404;
		return 0;
	}
	if (strcmp(what, "send-state") == 0) {
		if (argc > 1) {
			cfg_alert(ctx, "'send-state' takes no argument (got '%s')", argv[1]);
			return -1;
		}
		chk_px_w(ctx->px)->options |= CHK_O_SEND_STATE;
		return 0;
	}
	r = xcalloc(1, sizeof(*r));
	r->flags = TCPCHK_F_HTTP;
	if (argc && (ret = tcpchk_parse_var(ctx, r, argc, argv)) <= 0) {
		/* set-var(...), set-var-fmt(...), unset-var(...) */
	} else if (strcmp(what, "send") == 0) {
		r->type = TCPCHK_SEND;
		ret = hc_parse_send(ctx, r, argc, argv);
	} else if (strcmp(what, "expect") == 0) {
		r->type = TCPCHK_EXPECT;
		ret = hc_parse_expect(ctx, r, argc, argv);
	} else if (strcmp(what, "connect") == 0) {
		r->type = TCPCHK_CONNECT;
		ret = tcpchk_parse_connect(ctx, r, argc, argv, 1);
	} else if (strcmp(what, "comment") == 0) {
		r->type = TCPCHK_COMMENT;
		ret = 0;
		if (argc != 2) {
			cfg_alert(ctx, argc < 2 ? "'comment' expects a string as argument" :
				  "'comment' expects one string (quote it if it has spaces)");
			ret = -1;
		} else {
			r->text = xstrdup(argv[1]);
		}
	} else {
		cfg_alert(ctx, "expects disable-on-404, send, send-state, expect, connect, set-var, "
			  "set-var-fmt, unset-var or comment%s%s%s", *what ? ", but got '" : "", what,
			  *what ? "'" : "");
		ret = -1;
	}
	if (ret == 0)
		ret = hc_append(ctx, r);
	if (ret == -1)
		tcpchk_rule_free(r);
	return ret;
}

/* Makes <hc>'s rules playable: the first send rule takes what "option
 * httpchk" said (an implicit one is added when there is none), each send
 * gets its bytes, and an expect of status 2xx/3xx follows the last send
 * when nothing does. */
static void hc_build(struct httpchk_px *hc)
{
	struct tcpchk_rule **pos = &hc->rules, *send = NULL, *last_send = NULL, **tail;

	for (struct tcpchk_rule *r = hc->rules; r; r = r->next)
		if (r->type == TCPCHK_SEND) {
			send = r;
			break;
		}
	if (!send) {
		/* After a leading connect (and the comments before it). */
		struct tcpchk_rule *r = hc->rules;

		while (r && (r->type == TCPCHK_COMMENT || r->type == TCPCHK_SET_VAR ||
			     r->type == TCPCHK_UNSET_VAR))
			r = r->next;
		if (r && r->type == TCPCHK_CONNECT)
			pos = &r->next;
		send = xcalloc(1, sizeof(*send));
		send->type = TCPCHK_SEND;
		send->flags = TCPCHK_F_HTTP;
		send->req = xcalloc(1, sizeof(*send->req));
		send->next = *pos;
		*pos = send;
	}
	if (hc->has_opt) {
		struct httpchk_req *q = send->req;

		if (!q->meth && hc->opt.meth)
			q->meth = xstrdup(hc->opt.meth);
		if (!q->uri && hc->opt.uri)
			q->uri = xstrdup(hc->opt.uri);
		if (!q->ver && hc->opt.ver)
			q->ver = xstrdup(hc->opt.ver);
		if (!q->nhdrs)
			req_copy_hdrs(q, &hc->opt);
		if (!q->body && hc->opt.body)
			q->body = xstrdup(hc->opt.body);
	}
	for (tail = &hc->rules; *tail; tail = &(*tail)->next) {
		struct tcpchk_rule *r = *tail;

		if (r->type == TCPCHK_SEND) {
			if (!r->req->dynamic)   /* else built when sent */
				r->data = httpchk_req_build(r->req, &r->len);
			last_send = r;
		} else if (r->type == TCPCHK_EXPECT) {
			last_send = NULL;
		}
	}
	if (last_send) {
		struct tcpchk_rule *x = xcalloc(1, sizeof(*x));

		x->type = TCPCHK_EXPECT;
		x->flags = TCPCHK_F_HTTP;
		x->match = TCPCHK_M_HTTP_STATUS;
		x->codes = xcalloc(1, sizeof(*x->codes));
		x->codes->lo = 200;
		x->codes->hi = 399;
		x->ncodes = 1;
		x->text = xstrdup("status 200-399");
		*tail = x;
	}
	hc->built = 1;
}

static int httpchk_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next) {
		struct httpchk_px *hc = px->httpchk;

		if (!(px->cap & PR_CAP_BE))
			continue;
		if (!(chk_px_of(px)->options & CHK_O_HTTPCHK)) {
			if (hc && hc->owner == px && hc->rules)
				log_warning("%s:%d: backend '%s' uses http-check rules without 'option "
					    "httpchk', so the rules are ignored", px->conf_file,
					    px->conf_line, px->name);
			continue;
		}
		if (!hc)
			hc = hc_own(px);
		if (!hc->built)
			hc_build(hc);
	}
	return 0;
}

static struct cfg_kw httpchk_kws[] = {
	{ "option httpchk", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_option_httpchk,
	  .usage = "[[<method>] <uri> [<version>]]" },
	{ "http-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_http_check,
	  .usage = "disable-on-404|send-state|send|expect|connect|set-var|unset-var|comment ..." },
};

SLUICE_INIT(httpchk_register)
{
	cfg_register(httpchk_kws, ARRAY_SIZE(httpchk_kws));
	cfg_register_postparse(httpchk_postparse, 35);
	proxy_register_ext(&hc_ext);
}
