/* HTTP checks beyond fixed requests and status/body matches (httpchk.h):
 * requests rendered when sent (uri-lf, body-lf, log-format header values,
 * the X-Haproxy-Server-State header of "http-check send-state") and the
 * "expect hdr|fhdr" matches on the answer's header fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/check_h2.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/httpchk.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/tcpcheck.h>

/* ---- requests rendered when sent ---- */

/* The X-Haproxy-Server-State value: the state as the stats show it, then
 * the server's address, port, name, node, weight out of the usable ones,
 * its connections out of the backend's and its queue. */
static void send_state_value(const struct check *c, char *out, size_t sz)
{
	const struct server *srv = c->srv;
	const struct proxy *px = srv->px;
	char st[32], ip[INET6_ADDRSTRLEN + 8], port[16];

	check_status_str(srv, st, sizeof(st));
	if (srv->addr.ss_family == AF_UNIX) {
		snprintf(ip, sizeof(ip), "unix");
		snprintf(port, sizeof(port), "unix");
	} else {
		addr_ip_str(&srv->addr, ip, sizeof(ip));
		snprintf(port, sizeof(port), "%u", addr_get_port(&srv->addr));
	}
	snprintf(out, sz, "%s; address=%s; port=%s; name=%s/%s; node=%s; weight=%d/%llu; "
		 "scur=%u/%d; qcur=%d", st, ip, port, px->name, srv->name,
		 global.node ? global.node : "", (srv->eweight + SRV_EW_SCALE - 1) / SRV_EW_SCALE,
		 (unsigned long long)px->tot_weight, srv->counters.cur_sess, px->beconn,
		 srv->nbpend);
}

static char *render_dup(struct check *c, const struct lf_expr *lf)
{
	static char buf[TCPCHK_RBUF_MAX];

	tcpchk_lf_render(c, lf, buf, sizeof(buf));
	return xstrdup(buf);
}

/* Request <q> with what is rendered now: a new request the caller frees. */
static struct httpchk_req *req_render(struct check *c, const struct httpchk_req *q)
{
	struct httpchk_req *t = xcalloc(1, sizeof(*t));

	t->meth = q->meth ? xstrdup(q->meth) : NULL;
	t->ver = q->ver ? xstrdup(q->ver) : NULL;
	t->uri = q->uri_lf ? render_dup(c, q->uri_lf) : q->uri ? xstrdup(q->uri) : NULL;
	t->body = q->body_lf ? render_dup(c, q->body_lf) : q->body ? xstrdup(q->body) : NULL;
	t->hdrs = xcalloc((size_t)q->nhdrs + 1, sizeof(*t->hdrs));
	for (int i = 0; i < q->nhdrs; i++) {
		t->hdrs[i].name = xstrdup(q->hdrs[i].name);
		t->hdrs[i].value = q->hdrs[i].lf ? render_dup(c, q->hdrs[i].lf) :
				   xstrdup(q->hdrs[i].value);
	}
	t->nhdrs = q->nhdrs;
	if (chk_px_of(c->srv->px)->options & CHK_O_SEND_STATE) {
		char v[512];

		send_state_value(c, v, sizeof(v));
		t->hdrs[t->nhdrs].name = xstrdup("x-haproxy-server-state");
		t->hdrs[t->nhdrs++].value = xstrdup(v);
	}
	return t;
}

int httpchk_send(struct check *c, const struct tcpchk_rule *r)
{
	const struct httpchk_req *q = r->req;
	const struct chk_xport *xp = chk_xport_of(c);
	char *data;
	size_t len;
	ssize_t n;

	if (!q->dynamic && !(chk_px_of(c->srv->px)->options & CHK_O_SEND_STATE)) {
		if (xp)
			return xp->send(c, q);
		if (c->conn_opts & TCPCHK_CO_H2)
			return chk_h2_send(c, q);
		return tcpchk_io_send(c, r->data, r->len) == (ssize_t)r->len ? 0 : -1;
	}
	/* kept until the next request: an HTTP/2 body is sent from it */
	httpchk_req_free(c->req_sent);
	c->req_sent = req_render(c, q);
	if (xp)
		return xp->send(c, c->req_sent);
	if (c->conn_opts & TCPCHK_CO_H2)
		return chk_h2_send(c, c->req_sent);
	data = httpchk_req_build(c->req_sent, &len);
	n = tcpchk_io_send(c, data, len);
	free(data);
	return n == (ssize_t)len ? 0 : -1;
}

/* ---- expect hdr / fhdr ---- */

enum hdrm_meth { HM_STR, HM_BEG, HM_END, HM_SUB, HM_REG };

static const char *const hdrm_meths[] = {
	[HM_STR] = "str", [HM_BEG] = "beg", [HM_END] = "end", [HM_SUB] = "sub", [HM_REG] = "reg",
};

/* One side of a match: the header field's name or value. */
struct hdrm_pat {
	enum hdrm_meth  meth;
	char           *str;
	struct lf_expr *lf;    /* name-lf / value-lf */
	void           *re;
};

struct httpchk_hdrm {
	int             full;      /* fhdr: the whole value, commas included */
	struct hdrm_pat name;
	struct hdrm_pat value;     /* str NULL and no lf: presence only */
	int             has_value;
};

static void pat_free(struct hdrm_pat *p)
{
	free(p->str);
	tcpchk_lf_free(p->lf);
	tcpchk_regex_free(p->re);
}

void httpchk_hdrm_free(struct httpchk_hdrm *m)
{
	if (!m)
		return;
	pat_free(&m->name);
	pat_free(&m->value);
	free(m);
}

/* Parses "{name|name-lf} [-m <meth>] <pattern>" (or value) at argv[*i]
 * (<kw> "name" or "value"). */
static int pat_parse(struct cfg_ctx *ctx, struct hdrm_pat *p, const char *kw, int icase,
                     int argc, char **argv, int *i)
{
	int lf = strstr(argv[*i], "-lf") != NULL;

	if (++*i + 1 < argc && strcmp(argv[*i], "-m") == 0) {
		size_t k;

		for (k = 0; k < ARRAY_SIZE(hdrm_meths); k++)
			if (strcmp(argv[*i + 1], hdrm_meths[k]) == 0)
				break;
		if (k == ARRAY_SIZE(hdrm_meths)) {
			cfg_alert(ctx, "'%s -m' expects str, beg, end, sub or reg, but got '%s'", kw,
				  argv[*i + 1]);
			return -1;
		}
		p->meth = (enum hdrm_meth)k;
		*i += 2;
	}
	if (*i >= argc) {
		cfg_alert(ctx, "'%s%s' expects a pattern", kw, lf ? "-lf" : "");
		return -1;
	}
	if (lf && p->meth == HM_REG) {
		cfg_alert(ctx, "'%s-lf' cannot be used with the 'reg' matching method", kw);
		return -1;
	}
	if (lf)
		return (p->lf = tcpchk_lf_compile(ctx, kw, argv[*i])) ? 0 : -1;
	p->str = xstrdup(argv[*i]);
	if (p->meth == HM_REG && !(p->re = tcpchk_regex_compile(ctx, p->str, icase)))
		return -1;
	return 0;
}

int httpchk_hdrm_parse(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv, int *i)
{
	struct httpchk_hdrm *m = r->hdrm = xcalloc(1, sizeof(*m));
	const char *kind = argv[*i];

	m->full = strcmp(kind, "fhdr") == 0;
	r->match = TCPCHK_M_HTTP_HDR;
	if (++*i >= argc || (strcmp(argv[*i], "name") && strcmp(argv[*i], "name-lf"))) {
		cfg_alert(ctx, "'%s' expects 'name' or 'name-lf', then [-m <meth>] <name> "
			  "[value|value-lf [-m <meth>] <value>]", kind);
		return -1;
	}
	if (pat_parse(ctx, &m->name, "name", 1, argc, argv, i) == -1)
		return -1;
	if (*i + 1 < argc && (strcmp(argv[*i + 1], "value") == 0 ||
			      strcmp(argv[*i + 1], "value-lf") == 0)) {
		++*i;
		m->has_value = 1;
		if (pat_parse(ctx, &m->value, "value", 0, argc, argv, i) == -1)
			return -1;
	}
	return 0;
}

/* Whether <s> (<len> bytes) matches pattern <p> of text <pat>. */
static int pat_match(const struct hdrm_pat *p, const char *pat, const char *s, size_t len,
                     int icase)
{
	size_t pl = strlen(pat);
	int (*cmp)(const char *, const char *, size_t) = icase ? strncasecmp : strncmp;

	switch (p->meth) {
	case HM_STR:
		return len == pl && cmp(s, pat, pl) == 0;
	case HM_BEG:
		return len >= pl && cmp(s, pat, pl) == 0;
	case HM_END:
		return len >= pl && cmp(s + len - pl, pat, pl) == 0;
	case HM_SUB:
		for (size_t o = 0; o + pl <= len; o++)
			if (cmp(s + o, pat, pl) == 0)
				return 1;
		return 0;
	default:
		return tcpchk_regex_exec(p->re, s, len);
	}
}

/* Whether the value <v> (<len> bytes) of a field matches: as a whole
 * (fhdr), or one of its comma-separated elements (hdr). */
static int value_match(const struct httpchk_hdrm *m, const char *pat, const char *v, size_t len)
{
	const char *end = v + len;

	if (m->full)
		return pat_match(&m->value, pat, v, len, 0);
	while (v <= end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *e = comma ? comma : end;
		const char *b = v;

		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (pat_match(&m->value, pat, b, (size_t)(e - b), 0))
			return 1;
		if (!comma)
			break;
		v = comma + 1;
	}
	return 0;
}

/* A match being evaluated: the rule and its patterns' text now. */
struct hdrm_eval {
	const struct httpchk_hdrm *m;
	const char                *np, *vp;
};

static int hdrm_field(const char *n, size_t nl, const char *v, size_t vl, const void *arg)
{
	const struct hdrm_eval *e = arg;

	return pat_match(&e->m->name, e->np, n, nl, 1) &&
	       (!e->m->has_value || value_match(e->m, e->vp, v, vl));
}

int httpchk_hdrm_match(struct check *c, const struct httpchk_hdrm *m)
{
	static char name[1024], value[TCPCHK_RBUF_MAX];
	struct hdrm_eval e = { m, m->name.str, m->value.str };

	if (m->name.lf) {
		tcpchk_lf_render(c, m->name.lf, name, sizeof(name));
		e.np = name;
	}
	if (m->value.lf) {
		tcpchk_lf_render(c, m->value.lf, value, sizeof(value));
		e.vp = value;
	}
	return httpchk_rsp_hdr_any(c, hdrm_field, &e);
}
