/* Per-proxy HTTP options that act on the heads of an exchange (ana_int.h):
 * option http-restrict-req-hdr-names, option http-use-proxy-header,
 * option checkcache, monitor fail, http-send-name-header and capture
 * cookie. The analyser calls them only when configured. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/acl.h>
#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stktable.h>
#include <sluice/str.h>
#include <sluice/units.h>
#include <sluice/stream.h>

#include "ana_int.h"

/* ---- option http-restrict-req-hdr-names ---- */

/* Whether field name <n> holds a byte other than a letter, a digit or '-'. */
static int hdr_name_restricted(const struct http_str *n)
{
	for (uint32_t i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->p[i];

		if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '-')
			return 1;
	}
	return 0;
}

int http_hdr_names_apply(struct stream *s, const struct proxy *px, struct http_head *h)
{
	const int mode = http_px_of(px)->hdr_names;

	for (int i = 0; i < h->nf; i++) {
		if (!hdr_name_restricted(&h->f[i].n))
			continue;
		if (mode == HTTP_HN_DELETE) {
			http_head_del_at(h, i--);
			continue;
		}
		/* reject: a 403 as a deny rule gives it (PR--, denied_req) */
		s->fe->fe_counters.denied_req++;
		if (px != s->fe)
			s->be->be_counters.denied_req++;
		s->li->counters.denied_req++;
		s->txn->flags |= TX_F_DENIED;
		stk_http_err(s);
		http_reply(s, 403, NULL, NULL, SE_PROXY, SF_REQ);
		return 1;
	}
	return 0;
}

/* option http-restrict-req-hdr-names preserve|delete|reject */
static int kw_hdr_names(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static const char *const modes[] = {
		[HTTP_HN_PRESERVE] = "preserve", [HTTP_HN_DELETE] = "delete",
		[HTTP_HN_REJECT] = "reject",
	};

	for (size_t i = 0; argc == 1 && i < ARRAY_SIZE(modes); i++)
		if (strcmp(argv[0], modes[i]) == 0) {
			http_px_edit(ctx->px)->hdr_names = (unsigned char)i;
			return 0;
		}
	cfg_alert(ctx, "expects 'preserve', 'delete' or 'reject'");
	return -1;
}

/* ---- option http-use-proxy-header ---- */

unsigned http_pxconn_flags(struct stream *s, const struct h1_msg *m, const struct http_head *h)
{
	unsigned f = m->flags;

	if (m->target != H1_T_ABSOLUTE)
		return f;
	s->txn->flags |= TX_F_PX_AUTH;
	if (http_head_find(h, "proxy-connection", 16, 0) < 0)
		return f;
	f &= ~(H1_F_CONN_CLOSE | H1_F_CONN_KA);
	if (http_head_has_token(h, "proxy-connection", "close"))
		f |= H1_F_CONN_CLOSE;
	if (http_head_has_token(h, "proxy-connection", "keep-alive"))
		f |= H1_F_CONN_KA;
	return f;
}

/* ---- option checkcache ---- */

/* What the Cache-Control and Pragma fields of a response say. */
#define CC_PUBLIC   0x01  /* Cache-Control: public */
#define CC_NOCACHE  0x02  /* a directive that keeps the response (or its cookie) out of caches */

/* Whether <v> (<len> bytes, a directive's value, maybe quoted) is "0". */
static int cc_zero(const char *v, size_t len)
{
	if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
		v++;
		len -= 2;
	}
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (v[i] != '0')
			return 0;
	return 1;
}

/* One Cache-Control directive <d> (<len> bytes, trimmed). */
static unsigned cc_directive(const char *d, size_t len)
{
	const char *eq = memchr(d, '=', len);
	size_t nl = eq ? (size_t)(eq - d) : len, vl = eq ? len - nl - 1 : 0;
	const char *v = eq ? eq + 1 : NULL;

#define IS(name) (nl == sizeof(name) - 1 && strncasecmp(d, name, nl) == 0)
	if (IS("public"))
		return CC_PUBLIC;
	if (IS("private") || IS("no-store"))
		return CC_NOCACHE;
	if ((IS("max-age") || IS("s-maxage")) && v && cc_zero(v, vl))
		return CC_NOCACHE;
	/* no-cache, or no-cache="set-cookie" (first of its list) */
	if (IS("no-cache") && (!v || (vl >= 11 && strncasecmp(v, "\"set-cookie", 11) == 0 &&
				       (vl == 11 || v[11] == '"' || v[11] == ','))))
		return CC_NOCACHE;
#undef IS
	return 0;
}

/* The CC_* of the Cache-Control fields of <h> (a quoted value may hold
 * commas) and of Pragma: no-cache. */
static unsigned cc_flags(const struct http_head *h)
{
	unsigned f = 0;

	if (http_head_has_token(h, "pragma", "no-cache"))
		f |= CC_NOCACHE;
	for (int i = -1; (i = http_head_find(h, "cache-control", 13, i + 1)) >= 0;) {
		const char *p = h->f[i].v.p, *end = p + h->f[i].v.len;

		while (p < end) {
			const char *s, *e;
			int q = 0;

			while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
				p++;
			for (s = p; p < end && (q || *p != ','); p++)
				if (*p == '"')
					q = !q;
			for (e = p; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
				;
			if (e > s)
				f |= cc_directive(s, (size_t)(e - s));
		}
	}
	return f;
}

/* Whether a response of <status> to a request of method <meth> may be
 * cached when nothing says otherwise (option checkcache's lists). */
static int cc_cacheable(int status, enum h1_meth meth)
{
	static const short st[] = { 200, 203, 204, 206, 300, 301, 404, 405, 410, 414, 501 };
	int ok = 0;

	for (size_t i = 0; i < ARRAY_SIZE(st); i++)
		ok |= status == st[i];
	return ok && (meth == H1_M_GET || meth == H1_M_HEAD || meth == H1_M_OPTIONS ||
		      meth == H1_M_TRACE);
}

int http_checkcache_block(struct stream *s, const struct http_head *h)
{
	struct http_txn *txn = s->txn;
	unsigned cc;
	int status = 0;

	if ((txn->flags & TX_F_LOCAL) || http_head_find(h, "set-cookie", 10, 0) < 0)
		return 0;
	cc = cc_flags(h);
	for (uint32_t i = 0; i < h->sl[HTTP_SL_STATUS].len; i++)   /* (set-status may have run) */
		status = status * 10 + h->sl[HTTP_SL_STATUS].p[i] - '0';
	if ((cc & CC_NOCACHE) || (!(cc & CC_PUBLIC) && !cc_cacheable(status, txn->meth)))
		return 0;
	/* as an "http-response deny": 502, PH--, a denied response */
	s->fe->fe_counters.denied_resp++;
	s->be->be_counters.denied_resp++;
	if (s->ss.target)
		s->ss.target->counters.denied_resp++;
	log_event_px(&s->be->loggers, LOG_L_ALERT,
		     "Blocking cacheable cookie in response from instance %s, server %s.",
		     s->be->name, s->ss.target ? s->ss.target->name : "<none>");
	txn->flags |= TX_F_CLI_CLOSE;
	http_reply(s, 502, NULL, NULL, SE_PROXY, SF_HDRS);
	return 1;
}

/* ---- http-send-name-header ---- */

void http_name_hdr_prep(struct stream *s, struct http_head *h)
{
	const char *n = http_px_of(s->be)->send_name;

	s->tcp_flags &= ~STRM_F_TARGET_HOOK;
	if (likely(!n))
		return;
	http_head_del(h, n, strlen(n));
	h->flags |= HTTP_HEAD_F_CHANGED;   /* written out with CRLFs: found again below */
	s->tcp_flags |= STRM_F_TARGET_HOOK;
}

int http_name_hdr_set(struct stream *s)
{
	const char *n = http_px_of(s->be)->send_name, *v = s->ss.target->name;
	struct buf *b = s->req.buf;
	size_t nl = strlen(n), vl = strlen(v), len, at, old, want;
	char *p, *eoh, *line;

	if (!n || !b || !b->data)
		return 0;
	p = b->area + b->head;
	len = (size_t)MIN((uint64_t)b->data, s->req.to_forward);
	if (!(eoh = memmem(p, len, "\r\n\r\n", 4)))
		return 0;   /* (no head waits here: nothing to name) */
	/* the field is the head's last one once set: a redispatch renames it */
	for (line = eoh; line > p && !(line[-1] == '\n'); line--)
		;
	if (line > p && (size_t)(eoh - line) > nl && line[nl] == ':' &&
	    strncasecmp(line, n, nl) == 0) {
		at = (size_t)(line - p);
		old = (size_t)(eoh - line) + 2;
	} else {
		at = (size_t)(eoh - p) + 2;
		old = 0;
	}
	want = nl + 2 + vl + 2;   /* "name: value\r\n" */
	if (want > old && b->data + (want - old) > buf_size())
		return -1;
	if (want > old && b->head + b->data + (want - old) > buf_size()) {
		memmove(b->area, p, b->data);
		b->head = 0;
		p = b->area;
	}
	memmove(p + at + want, p + at + old, b->data - at - old);
	memcpy(p + at, n, nl);
	memcpy(p + at + nl, ": ", 2);
	memcpy(p + at + nl + 2, v, vl);
	memcpy(p + at + nl + 2 + vl, "\r\n", 2);
	b->data = (uint32_t)(b->data + want - old);
	s->req.to_forward += want - old;
	return 0;
}

/* http-send-name-header <name> */
static int kw_send_name(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h;

	if (argc != 1 || !*argv[0] || http_safe_scan(argv[0], strlen(argv[0]), HTTP_SAFE_TOKEN) !=
	    strlen(argv[0])) {
		cfg_alert(ctx, "expects a header name (a token)");
		return -1;
	}
	h = http_px_edit(ctx->px);
	free(h->send_name);
	h->send_name = xstrdup(argv[0]);
	return 0;
}

/* ---- monitor fail ---- */

int http_monitor_status(struct stream *s, const struct http_px *fh)
{
	for (int i = 0; i < fh->n_monitor_fail; i++)
		if (acl_cond_exec(fh->monitor_fail[i], s))
			return 503;
	return 200;
}

/* monitor fail if|unless <condition> */
static int kw_monitor_fail(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h;
	struct acl_cond *c;

	if (argc < 2 || (strcmp(argv[0], "if") != 0 && strcmp(argv[0], "unless") != 0)) {
		cfg_alert(ctx, "expects 'if' or 'unless' followed by a condition");
		return -1;
	}
	if (!(c = acl_cond_parse(ctx, argc, argv)))
		return -1;
	acl_cond_check_request(ctx, c);
	h = http_px_edit(ctx->px);
	h->monitor_fail = xrealloc(h->monitor_fail,
				   (size_t)(h->n_monitor_fail + 1) * sizeof(*h->monitor_fail));
	h->monitor_fail[h->n_monitor_fail++] = c;
	return 0;
}

/* ---- capture cookie ---- */

static int ck_cap_max = 63;   /* tune.http.cookielen */

void http_capture_cookie(struct stream *s, const struct http_head *h, int res)
{
	const struct http_px *hp = http_px_of(s->fe);
	const char *fname = res ? "set-cookie" : "cookie";
	size_t nl = strlen(hp->ck_cap_name);
	char **dst = &s->txn->ck_cap[res];

	if (*dst)
		return;   /* the first one only */
	for (int f = http_head_find(h, fname, strlen(fname), 0); f >= 0;
	     f = http_head_find(h, fname, strlen(fname), f + 1)) {
		const char *v = h->f[f].v.p;
		size_t len = h->f[f].v.len, i = 0, j, k;

		while (i < len) {
			while (i < len && (v[i] == ' ' || v[i] == '\t'))
				i++;
			for (j = i; j < len && v[j] != ';'; j++)
				;
			/* the name=value without the spaces before ';' */
			for (k = j; k > i && (v[k - 1] == ' ' || v[k - 1] == '\t'); k--)
				;
			if (k - i >= nl && memcmp(v + i, hp->ck_cap_name, nl) == 0) {
				*dst = http_line_dup(v + i, k - i, (size_t)MIN(hp->ck_cap_len, ck_cap_max));
				return;
			}
			if (res || j == len)
				break;   /* Set-Cookie: its attributes follow the first ';' */
			i = j + 1;
		}
	}
}

/* capture cookie <name> len <length>: one per frontend, the last wins */
static int kw_capture_cookie(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *err = NULL;
	struct http_px *h;
	long len;

	if (argc != 3 || !*argv[0] || strcmp(argv[1], "len") != 0) {
		cfg_alert(ctx, "expects '<cookie name> len <length>'");
		return -1;
	}
	if (parse_int(argv[2], 1, 64 * 1024, &len, &err) == -1) {
		cfg_alert(ctx, "'len %s': %s", argv[2], err);
		return -1;
	}
	h = http_px_edit(ctx->px);
	if (h->ck_cap_name)
		cfg_warn(ctx, "only one cookie is captured: '%s' replaces '%s'", argv[0],
			 h->ck_cap_name);
	free(h->ck_cap_name);
	h->ck_cap_name = xstrdup(argv[0]);
	h->ck_cap_len = (int)len;
	return 0;
}

/* tune.http.cookielen <n>: the longest cookie capture */
static int kw_cookielen(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *err = NULL;
	long v;

	if (argc != 1 || parse_int(argv[0], 1, 64 * 1024, &v, &err) == -1) {
		cfg_alert(ctx, "expects a length from 1 to 65536%s%s", err ? ": " : "",
			  err ? err : "");
		return -1;
	}
	ck_cap_max = (int)v;
	return 0;
}

/* capture cookie only acts on HTTP heads: said once for a mode tcp frontend */
static int px_http_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		if ((px->cap & PR_CAP_FE) && px->mode == PR_MODE_TCP && px->http &&
		    px->http->ck_cap_name)
			log_warning("%s:%d: proxy '%s': 'capture cookie' only acts in 'mode http'; "
				    "ignored", px->conf_file, px->conf_line, px->name);
	return 0;
}

static struct cfg_kw px_http_kws[] = {
	{ "capture cookie", CFG_SEC_FRONTEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_capture_cookie, .usage = "<name> len <length>" },
	{ "tune.http.cookielen", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_cookielen,
	  .usage = "<length>" },
	{ "http-send-name-header", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_send_name,
	  .usage = "<header>" },
	{ "monitor fail", CFG_SEC_FRONTEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_monitor_fail, .usage = "if|unless <condition>" },
	{ "option http-restrict-req-hdr-names", CFG_SEC_PROXIES, CFG_T_FUNC, 0,
	  .parse = kw_hdr_names, .usage = "preserve|delete|reject" },
};

SLUICE_INIT(px_http_register)
{
	cfg_register(px_http_kws, ARRAY_SIZE(px_http_kws));
	cfg_register_postparse(px_http_postparse, 30);
}
