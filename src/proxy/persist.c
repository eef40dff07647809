/* Cookie-based persistence (persist.h): the `cookie`, `option persist`,
 * `force-persist`, `ignore-persist` and `persist rdp-cookie` keywords, the
 * server option `cookie <value>`, and the request/response cookie handling. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/acl.h>
#include <sluice/addr.h>
#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/log.h>
#include <sluice/payload_parse.h>
#include <sluice/persist.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/units.h>
#include <sluice/ticks.h>

enum persist_mode { PST_REWRITE, PST_INSERT, PST_PREFIX };

#define PST_F_INDIRECT 0x01  /* hide the cookie from the server (insert) */
#define PST_F_NOCACHE  0x02  /* Cache-control: private with an inserted cookie */
#define PST_F_POSTONLY 0x04  /* insert only in responses to POST */
#define PST_F_PRESERVE 0x08  /* a cookie the server sets itself is kept */
#define PST_F_HTTPONLY 0x10  /* "; HttpOnly" */
#define PST_F_SECURE   0x20  /* "; Secure" */
#define PST_F_DYNAMIC  0x40  /* "dynamic": servers without a cookie get one from the key */

#define PST_DELIM '~'        /* prefix mode: "<server>~<application value>" */
#define PST_LINE_MAX 1024    /* longest Set-Cookie value built here */

/* force-persist / ignore-persist, in declaration order: the first whose
 * condition matches decides. */
struct persist_rule {
	struct acl_cond     *cond;
	int                  force;   /* else ignore */
	struct persist_rule *next;
};

struct persist_px {
	char                 name[64];  /* "" when no cookie is configured */
	enum persist_mode    mode;
	unsigned             flags;     /* PST_F_* */
	char                *domains;   /* "; domain=a; domain=b", or NULL */
	uint32_t             maxidle;   /* insert: seconds a cookie may go unused, 0: forever */
	uint32_t             maxlife;   /* insert: seconds since it was first set, 0: forever */
	struct persist_rule *rules, **rules_tail;
	uint64_t             options;   /* PST_O_* (persist.h) */
	char                *dyn_key;   /* dynamic-cookie-key, NULL when none */
	char                 rdp[32];   /* persist rdp-cookie: the cookie's name, "" when off */
};

static struct persist_px *persist_px_get(struct proxy *px)
{
	if (!px->persist) {
		px->persist = xcalloc(1, sizeof(*px->persist));
		px->persist->rules_tail = &px->persist->rules;
	}
	return px->persist;
}

uint64_t persist_options(const struct proxy *px)
{
	return px->persist ? px->persist->options : 0;
}

const char *persist_cookie_name(const struct proxy *px)
{
	return px->persist && px->persist->name[0] ? px->persist->name : NULL;
}

/* ---- request side ---- */

/* persist rdp-cookie: the server whose IPv4 address and port the RDP
 * cookie of <s>'s request data names, as a terminal server's token
 * redirection writes them ("msts=<addr>.<port>.<reserved>": the address's
 * bytes and the port's as a little-endian number each), when it is up (or
 * with option persist, whatever its state but maintenance). */
struct server *persist_rdp(struct stream *s)
{
	const struct persist_px *pp = s->be->persist;
	const struct buf *b = s->req.buf;
	unsigned long addr, port;
	const uint8_t *v;
	char num[40], *e;
	size_t vl;

	if (!pp || !pp->rdp[0] || !b ||
	    rdp_cookie_parse((const uint8_t *)b->area + b->head, b->data, pp->rdp, strlen(pp->rdp),
			     &v, &vl) != 1 || vl >= sizeof(num) || !vl || !isdigit(v[0]))
		return NULL;
	memcpy(num, v, vl);
	num[vl] = '\0';
	addr = strtoul(num, &e, 10);
	if (*e != '.' || !isdigit((unsigned char)e[1]) || addr > UINT32_MAX)
		return NULL;
	port = strtoul(e + 1, &e, 10);
	if ((*e != '.' && *e) || port > UINT16_MAX)
		return NULL;
	for (struct server *srv = s->be->servers; srv; srv = srv->next) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&srv->addr;
		const uint8_t *a = (const uint8_t *)&sin->sin_addr;

		if (srv->addr.ss_family != AF_INET || a[0] != (addr & 0xff) ||
		    a[1] != (addr >> 8 & 0xff) || a[2] != (addr >> 16 & 0xff) ||
		    a[3] != (addr >> 24 & 0xff) || ntohs(sin->sin_port) != ((port & 0xff) << 8 | port >> 8))
			continue;
		if (server_usable(srv) || (srv->flags & SRV_F_DRAIN) ||
		    ((pp->options & PST_O_PERSIST) && !(srv->flags & SRV_F_MAINT)))
			return srv;
		break;
	}
	return NULL;
}

/* A server of <be> whose cookie value is <v> (<len> bytes), or NULL. */
static struct server *persist_find(struct proxy *be, const char *v, size_t len)
{
	for (struct server *srv = be->servers; srv; srv = srv->next)
		if (srv->cookie[0] && strlen(srv->cookie) == len && memcmp(srv->cookie, v, len) == 0)
			return srv;
	return NULL;
}

int persist_srv_ready(const struct server *srv)
{
	int max = srv_dynamic_maxconn(srv);

	return !max || srv->counters.cur_sess < (uint32_t)max;
}

/* Replaces bytes [<off>, <off> + <cut>) of field <idx>'s value by nothing:
 * the value is copied once into the arena, then edited there. */
static int cookie_cut(struct http_head *h, int idx, size_t off, size_t cut)
{
	struct http_str *v = &h->f[idx].v;
	char *p;

	if (v->p < h->arena || v->p >= h->arena + h->arena_size) {
		const char *d = http_head_dup(h, v->p, v->len);

		if (!d)
			return -1;
		v->p = d;
	}
	p = (char *)v->p;
	memmove(p + off, p + off + cut, v->len - off - cut);
	v->len -= (uint32_t)cut;
	h->flags |= HTTP_HEAD_F_CHANGED;
	return 0;
}

/* Finds the first cookie named <pp->name> in the Cookie fields of <h>.
 * Sets the field index, the offsets of the whole "name=value" pair (with
 * the separator that follows or precedes it) and of the value. Returns 1
 * when found. */
struct ck_pos {
	int    idx;
	size_t pair_off, pair_len;  /* what removing the cookie cuts */
	size_t val_off, val_len;
};

static int cookie_find(const struct http_head *h, const char *name, struct ck_pos *pos)
{
	size_t nl = strlen(name);

	for (int idx = http_head_find(h, "cookie", 6, 0); idx >= 0;
	     idx = http_head_find(h, "cookie", 6, idx + 1)) {
		const char *v = h->f[idx].v.p;
		size_t len = h->f[idx].v.len, i = 0;

		while (i < len) {
			size_t start, eq, end, next;

			while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ';'))
				i++;
			start = i;
			while (i < len && v[i] != ';')
				i++;
			end = i;
			next = i < len ? i + 1 : i;
			for (eq = start; eq < end && v[eq] != '='; eq++)
				;
			if (eq - start == nl && eq < end && memcmp(v + start, name, nl) == 0) {
				pos->idx = idx;
				pos->val_off = eq + 1;
				pos->val_len = end - eq - 1;
				while (pos->val_len && (v[pos->val_off + pos->val_len - 1] == ' ' ||
							v[pos->val_off + pos->val_len - 1] == '\t'))
					pos->val_len--;
				/* Cut up to the next cookie, or back to the previous one's
				 * separator when this is the last one. */
				while (next < len && (v[next] == ' ' || v[next] == '\t'))
					next++;
				if (next < len) {
					pos->pair_off = start;
					pos->pair_len = next - start;
				} else {
					size_t b = start;

					while (b > 0 && (v[b - 1] == ' ' || v[b - 1] == '\t' || v[b - 1] == ';'))
						b--;
					pos->pair_off = b;
					pos->pair_len = len - b;
				}
				return 1;
			}
			i = next;
		}
	}
	return 0;
}

/* maxidle/maxlife: an inserted cookie carries its dates,
 * "<server>|<last seen>|<first seen>", in seconds since the epoch written
 * in hexadecimal (HAProxy encodes them its own way: a cookie of one is
 * taken without dates, and given new ones). */
static int cookie_dated(const struct persist_px *pp)
{
	return pp->mode == PST_INSERT && (pp->maxidle || pp->maxlife);
}

/* Reads "<last>|<first>" from v[0..len). Returns 1, or 0 when malformed. */
static int cookie_dates(const char *v, size_t len, uint32_t *last, uint32_t *first)
{
	uint32_t d[2] = { 0, 0 };
	int k = 0, digits = 0;

	for (size_t i = 0; i < len; i++) {
		char c = v[i];

		if (c == '|' && k == 0 && digits) {
			k = 1;
			digits = 0;
		} else if (((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) && digits < 8) {
			d[k] = d[k] * 16 + (uint32_t)(c <= '9' ? c - '0' : c - 'a' + 10);
			digits++;
		} else {
			return 0;
		}
	}
	if (k != 1 || !digits)
		return 0;
	*last = d[0];
	*first = d[1];
	return 1;
}

/* The state of a dated cookie: 0 fine, else the log character of one too
 * long unused ('E') or too old ('O'). A date in the future is not trusted:
 * expired. */
static char cookie_age(const struct persist_px *pp, uint32_t last, uint32_t first)
{
	uint32_t now = (uint32_t)tick_wall();

	if (pp->maxidle && (last > now + 60 || now - last > pp->maxidle))
		return 'E';
	if (pp->maxlife && (first > now + 60 || now - first > pp->maxlife))
		return 'O';
	return 0;
}

int persist_req(struct stream *s, struct http_head *h, struct server **out)
{
	struct persist_px *pp = s->be->persist;
	struct http_txn *txn = s->txn;
	struct server *srv;
	struct ck_pos pos;
	const char *val;
	size_t vlen;
	int force = 0, ignore = 0;

	*out = NULL;
	if (!pp || !pp->name[0])
		return 0;
	txn->ck_req = 'N';
	txn->ck_res = 'N';
	for (struct persist_rule *r = pp->rules; r; r = r->next)
		if (acl_cond_exec(r->cond, s)) {
			force = r->force;
			ignore = !r->force;
			break;
		}
	txn->persist_ign = ignore;
	if (!cookie_find(h, pp->name, &pos))
		return 0;
	val = h->f[pos.idx].v.p + pos.val_off;
	vlen = pos.val_len;
	if (pp->mode == PST_PREFIX) {
		const char *d = memchr(val, PST_DELIM, vlen);

		if (d)
			vlen = (size_t)(d - val);
	}
	txn->ck_first = txn->ck_last = 0;
	if (cookie_dated(pp)) {
		const char *bar = memchr(val, '|', vlen);
		uint32_t last, first;

		if (bar && cookie_dates(bar + 1, (size_t)(val + vlen - bar - 1), &last, &first)) {
			txn->ck_last = last;
			txn->ck_first = first;
		}
		if (bar)
			vlen = (size_t)(bar - val);
	}
	srv = persist_find(s->be, val, vlen);
	if (srv && txn->ck_last && cookie_age(pp, txn->ck_last, txn->ck_first)) {
		/* expired: load balanced, a new cookie is inserted */
		txn->ck_req = cookie_age(pp, txn->ck_last, txn->ck_first);
		txn->ck_first = txn->ck_last = 0;
		srv = NULL;
	} else if (!srv) {
		txn->ck_req = 'I';
	} else if (ignore) {
		txn->ck_req = 'U';   /* present, unused: load balanced */
	} else if (server_usable(srv) || (srv->flags & SRV_F_DRAIN)) {
		txn->ck_req = 'V';
		*out = srv;
	} else {
		/* DOWN: still used with option persist or force-persist; a
		 * server in maintenance only with force-persist (never one
		 * without an address). */
		txn->ck_req = 'D';
		if ((force && !(srv->flags & SRV_F_RMAINT)) ||
		    ((pp->options & PST_O_PERSIST) && !(srv->flags & SRV_F_ANY_MAINT)))
			*out = srv;
	}
	/* The server must not see what is ours: the whole cookie (insert
	 * indirect), or the "<server>~" prefix. */
	if (pp->mode == PST_INSERT && (pp->flags & PST_F_INDIRECT)) {
		if (cookie_cut(h, pos.idx, pos.pair_off, pos.pair_len) == -1)
			return -1;
		if (!h->f[pos.idx].v.len)
			http_head_del_at(h, pos.idx);
	} else if (pp->mode == PST_PREFIX && vlen < pos.val_len) {
		if (cookie_cut(h, pos.idx, pos.val_off, vlen + 1) == -1)
			return -1;
	}
	return 0;
}

/* ---- response side ---- */

/* Whether a cache would keep response <h> (and the cookie inserted in
 * it): it says how long it is fresh (max-age, Expires) or when it last
 * changed, and Cache-Control does not already decide (private, no-cache,
 * no-store, public). */
static int res_cacheable(const struct http_head *h)
{
	static const char *const decided[] = { "private", "no-cache", "no-store", "public" };

	for (size_t i = 0; i < ARRAY_SIZE(decided); i++)
		if (http_head_has_token(h, "cache-control", decided[i]))
			return 0;
	if (http_head_find(h, "expires", 7, 0) >= 0 || http_head_find(h, "last-modified", 13, 0) >= 0)
		return 1;
	for (int idx = http_head_find(h, "cache-control", 13, 0); idx >= 0;
	     idx = http_head_find(h, "cache-control", 13, idx + 1)) {
		const struct http_str *v = &h->f[idx].v;

		if (memmem(v->p, v->len, "max-age", 7))
			return 1;
	}
	return 0;
}

/* Sets field <idx> of <h> to "<name>=<prefix><value><rest>". */
static int setcookie_value(struct http_head *h, int idx, const char *name, const char *pfx,
			   const char *val, size_t vlen, const char *rest, size_t rlen)
{
	char buf[PST_LINE_MAX];
	int n = snprintf(buf, sizeof(buf), "%s=%s%.*s%.*s", name, pfx, (int)vlen, val,
			 (int)rlen, rest);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return http_head_set_value(h, idx, buf, (size_t)n);
}

int persist_res(struct stream *s, struct http_head *h)
{
	struct persist_px *pp = s->be->persist;
	struct http_txn *txn = s->txn;
	struct server *srv = s->ss.target;
	uint32_t now = (uint32_t)tick_wall();
	int direct, update, seen = 0;
	size_t nl;

	if (!pp || !pp->name[0] || !txn->ck_req)
		return 0;
	nl = strlen(pp->name);
	direct = s->ss.persist && srv == s->ss.persist;
	for (int idx = http_head_find(h, "set-cookie", 10, 0); idx >= 0; ) {
		const char *v = h->f[idx].v.p, *semi;
		size_t len = h->f[idx].v.len, vend;

		while (len && (*v == ' ' || *v == '\t'))
			v++, len--;
		if (len <= nl || v[nl] != '=' || memcmp(v, pp->name, nl) != 0) {
			idx = http_head_find(h, "set-cookie", 10, idx + 1);
			continue;
		}
		seen = 1;
		semi = memchr(v, ';', len);
		vend = semi ? (size_t)(semi - v) : len;
		if (pp->flags & PST_F_PRESERVE) {
			txn->ck_res = 'P';
		} else if (pp->mode == PST_INSERT ||
			   ((pp->flags & PST_F_INDIRECT) && direct && txn->ck_req == 'V')) {
			/* ours to set (insert), or the client already has it */
			http_head_del_at(h, idx);
			txn->ck_res = 'D';
			idx = http_head_find(h, "set-cookie", 10, idx);
			continue;
		} else if (srv && srv->cookie[0]) {
			const char *pfx = pp->mode == PST_PREFIX ? "~" : "";
			const char *app = pp->mode == PST_PREFIX ? v + nl + 1 : "";
			size_t alen = pp->mode == PST_PREFIX ? vend - nl - 1 : 0;
			char lead[80];

			snprintf(lead, sizeof(lead), "%s%s", srv->cookie, pfx);
			if (setcookie_value(h, idx, pp->name, lead, app, alen, v + vend, len - vend) == -1)
				return -1;
			txn->ck_res = 'R';
		} else {
			txn->ck_res = 'P';
		}
		idx = http_head_find(h, "set-cookie", 10, idx + 1);
	}
	/* a dated cookie still in use gets its last date moved on, once a
	 * quarter of maxidle went by (not on every response) */
	update = direct && cookie_dated(pp) && txn->ck_req == 'V' &&
		 (!txn->ck_last || (pp->maxidle && now - txn->ck_last >= MAX(pp->maxidle / 4, 1)));
	if (pp->mode == PST_INSERT && (!direct || update) && !txn->persist_ign && srv &&
	    srv->cookie[0] && !(seen && (pp->flags & PST_F_PRESERVE)) &&
	    (!(pp->flags & PST_F_POSTONLY) || txn->meth == H1_M_POST)) {
		char buf[PST_LINE_MAX], dates[24] = "";
		int n;

		if (cookie_dated(pp))
			snprintf(dates, sizeof(dates), "|%x|%x", now,
				 update && txn->ck_first ? txn->ck_first : now);
		n = snprintf(buf, sizeof(buf), "%s=%s%s; path=/%s%s%s", pp->name, srv->cookie, dates,
			     pp->domains ? pp->domains : "",
			     (pp->flags & PST_F_HTTPONLY) ? "; HttpOnly" : "",
			     (pp->flags & PST_F_SECURE) ? "; Secure" : "");
		if (n < 0 || (size_t)n >= sizeof(buf) ||
		    http_head_add(h, "Set-Cookie", 10, buf, (size_t)n) == -1)
			return -1;
		txn->ck_res = update ? 'U' : 'I';
		if ((pp->flags & PST_F_NOCACHE) && res_cacheable(h) &&
		    http_head_add(h, "Cache-control", 13, "private", 7) == -1)
			return -1;
	}
	return 0;
}

/* ---- keywords ---- */

/* cookie <name> [rewrite|insert|prefix] [indirect] [nocache] [postonly]
 *        [preserve] [httponly] [secure] [domain <d>]* */
static int kw_cookie(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static const struct { const char *kw; unsigned flag; } opts[] = {
		{ "indirect", PST_F_INDIRECT }, { "nocache", PST_F_NOCACHE },
		{ "postonly", PST_F_POSTONLY }, { "preserve", PST_F_PRESERVE },
		{ "httponly", PST_F_HTTPONLY }, { "secure", PST_F_SECURE },
		{ "dynamic", PST_F_DYNAMIC },
	};
	struct persist_px *pp = persist_px_get(ctx->px);
	int modes = 0;

	if (argc < 1 || !*argv[0] || strlen(argv[0]) >= sizeof(pp->name)) {
		cfg_alert(ctx, "'cookie' expects <cookie_name> (at most %zu characters) as argument",
			  sizeof(pp->name) - 1);
		return -1;
	}
	strcpy(pp->name, argv[0]);
	pp->mode = PST_REWRITE;
	pp->flags = 0;
	pp->maxidle = pp->maxlife = 0;
	free(pp->domains);
	pp->domains = NULL;
	for (int i = 1; i < argc; i++) {
		size_t k;

		if (strcmp(argv[i], "rewrite") == 0 || strcmp(argv[i], "insert") == 0 ||
		    strcmp(argv[i], "prefix") == 0) {
			pp->mode = argv[i][0] == 'r' ? PST_REWRITE : argv[i][0] == 'i' ? PST_INSERT
										 : PST_PREFIX;
			modes++;
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(opts); k++)
			if (strcmp(argv[i], opts[k].kw) == 0)
				break;
		if (k < ARRAY_SIZE(opts)) {
			pp->flags |= opts[k].flag;
			continue;
		}
		if (strcmp(argv[i], "domain") == 0) {
			char *d;

			if (i + 1 >= argc || !*argv[i + 1]) {
				cfg_alert(ctx, "'cookie %s domain' requires a domain name", pp->name);
				return -1;
			}
			d = str_fmt("%s; domain=%s", pp->domains ? pp->domains : "", argv[i + 1]);
			free(pp->domains);
			pp->domains = d;
			i++;
			continue;
		}
		if (strcmp(argv[i], "maxidle") == 0 || strcmp(argv[i], "maxlife") == 0) {
			uint32_t ms;
			const char *e;

			if (i + 1 >= argc || parse_time_ms(argv[i + 1], 1000, &ms, &e) == -1 ||
			    ms < 1000) {
				cfg_alert(ctx, "'cookie %s %s' expects a time of at least one second "
					  "(got '%s')", pp->name, argv[i], i + 1 < argc ? argv[i + 1] : "");
				return -1;
			}
			*(argv[i][3] == 'i' ? &pp->maxidle : &pp->maxlife) = ms / 1000;
			i++;
			continue;
		}
		if (strcmp(argv[i], "attr") == 0) {
			cfg_alert(ctx, "'cookie %s %s' is not supported yet by sluice", pp->name, argv[i]);
			return -1;
		}
		cfg_alert(ctx, "'cookie' supports 'rewrite', 'insert', 'prefix', 'indirect', "
			  "'nocache', 'postonly', 'domain', 'maxidle', 'maxlife', 'httponly', "
			  "'secure', 'preserve' and 'dynamic' options (got '%s')", argv[i]);
		return -1;
	}
	if (modes > 1) {
		cfg_alert(ctx, "'cookie %s': 'rewrite', 'insert' and 'prefix' are mutually exclusive",
			  pp->name);
		return -1;
	}
	if ((pp->maxidle || pp->maxlife) && pp->mode != PST_INSERT) {
		cfg_alert(ctx, "'cookie %s': 'maxidle' and 'maxlife' are only possible with "
			  "'insert' mode", pp->name);
		return -1;
	}
	if ((pp->flags & PST_F_POSTONLY) && pp->mode != PST_INSERT) {
		cfg_alert(ctx, "'cookie %s': 'postonly' option is only possible with 'insert' mode",
			  pp->name);
		return -1;
	}
	if ((pp->flags & (PST_F_NOCACHE | PST_F_HTTPONLY | PST_F_SECURE)) && pp->mode != PST_INSERT)
		cfg_warn(ctx, "'cookie %s': 'nocache', 'httponly' and 'secure' only apply to "
			 "'insert' mode", pp->name);
	return 0;
}

/* force-persist|ignore-persist if|unless <condition> */
static int kw_persist_rule(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct persist_px *pp;
	struct persist_rule *r;

	if (argc < 2 || (strcmp(argv[0], "if") && strcmp(argv[0], "unless"))) {
		cfg_alert(ctx, "'%s' requires either 'if' or 'unless' followed by a condition",
			  ctx->kw);
		return -1;
	}
	r = xcalloc(1, sizeof(*r));
	r->cond = acl_cond_parse(ctx, argc, argv);
	if (!r->cond) {
		free(r);
		return -1;
	}
	r->force = (int)ctx->kw_row->arg;
	pp = persist_px_get(ctx->px);
	*pp->rules_tail = r;
	pp->rules_tail = &r->next;
	return 0;
}

static int srv_kw_cookie(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			 char **err)
{
	if (argc < 2 || !*argv[1] || strlen(argv[1]) >= sizeof(srv->cookie) ||
	    strpbrk(argv[1], "; ,~=")) {
		*err = str_fmt("'%s' expects <value> as argument (at most %zu characters, "
			       "without ';', ',', '=', '~' nor spaces)", argv[0], sizeof(srv->cookie) - 1);
		return -1;
	}
	strcpy(srv->cookie, argv[1]);
	return 2;
}

/* ---- dynamic cookies ---- */

/* The dynamic cookie of <srv> under key <key>: as HAProxy makes it, the
 * XXH64 (seed 0) of the key, the server's address (4 or 16 bytes) and its
 * port as a 32-bit big-endian number, in 16 hexadecimal digits, so that
 * sluice and HAProxy behind one address give a server the same cookie. */
static void persist_dyn_value(const struct server *srv, const char *key, char *out, size_t sz)
{
	unsigned char buf[512];
	size_t kl = strlen(key), n;
	uint16_t port = addr_get_port(&srv->addr);

	if (kl > sizeof(buf) - 20)
		kl = sizeof(buf) - 20;
	memcpy(buf, key, kl);
	n = kl;
	if (srv->addr.ss_family == AF_INET) {
		memcpy(buf + n, &((const struct sockaddr_in *)&srv->addr)->sin_addr, 4);
		n += 4;
	} else {
		memcpy(buf + n, &((const struct sockaddr_in6 *)&srv->addr)->sin6_addr, 16);
		n += 16;
	}
	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = (unsigned char)(port >> 8);
	buf[n++] = (unsigned char)port;
	snprintf(out, sz, "%016llx", (unsigned long long)smp_xxh64(buf, n, 0));
}

/* Gives every server of <px> without a cookie of its own its dynamic one,
 * or takes the dynamic ones back when dynamic cookies are off or have no
 * key. */
static void persist_dyn_apply(struct proxy *px)
{
	const struct persist_px *pp = px->persist;
	int on = pp && pp->name[0] && (pp->flags & PST_F_DYNAMIC) && pp->dyn_key;

	for (struct server *srv = px->servers; srv; srv = srv->next) {
		if (srv->cookie[0] && !srv->cookie_dyn)
			continue;   /* its own "cookie <value>" */
		srv->cookie[0] = '\0';
		srv->cookie_dyn = 0;
		if (on && (srv->addr.ss_family == AF_INET || srv->addr.ss_family == AF_INET6)) {
			persist_dyn_value(srv, pp->dyn_key, srv->cookie, sizeof(srv->cookie));
			srv->cookie_dyn = 1;
		}
	}
}

/* A server's address changed: its dynamic cookie follows. */
static void persist_dyn_addr_changed(struct server *srv)
{
	if (srv->px && srv->px->persist && (srv->px->persist->flags & PST_F_DYNAMIC))
		persist_dyn_apply(srv->px);
}

/* dynamic-cookie-key <string> */
static int kw_dyn_key(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct persist_px *pp;

	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "'dynamic-cookie-key' expects the secret key as its only argument");
		return -1;
	}
	pp = persist_px_get(ctx->px);
	free(pp->dyn_key);
	pp->dyn_key = xstrdup(argv[0]);
	return 0;
}

/* The backend named by a dynamic-cookie command (<want> words in all), or
 * NULL with the reason written. */
static struct proxy *persist_cli_backend(struct cli_ctx *ctx, int argc, char **argv, int want)
{
	struct proxy *px;

	if (argc < 4 || !*argv[3]) {
		dstr_printf(&ctx->out, "Expects a backend name.\n");
		return NULL;
	}
	if (!(px = proxy_find(argv[3], PR_CAP_BE))) {
		dstr_printf(&ctx->out, "No such backend.\n");
		return NULL;
	}
	if (argc < want) {
		dstr_printf(&ctx->out, "String value expected.\n");
		return NULL;
	}
	if (argc > want) {
		dstr_printf(&ctx->out, "'%s %s %s' expects %s.\n", argv[0], argv[1], argv[2],
			    want == 4 ? "a backend name alone" : "a backend name and the key");
		return NULL;
	}
	if (!px->persist || !px->persist->name[0]) {
		dstr_printf(&ctx->out, "Backend '%s' has no 'cookie': it makes no cookie.\n",
			    px->name);
		return NULL;
	}
	return px;
}

/* enable|disable dynamic-cookie backend <be> */
static int cli_dyn_cookie(struct cli_ctx *ctx, int argc, char **argv)
{
	struct proxy *px = persist_cli_backend(ctx, argc, argv, 4);

	if (!px)
		return -1;
	if (argv[0][0] == 'e') {
		if (!px->persist->dyn_key) {
			dstr_printf(&ctx->out, "Backend '%s' has no 'dynamic-cookie-key': set one "
				    "first ('set dynamic-cookie-key backend').\n", px->name);
			return -1;
		}
		px->persist->flags |= PST_F_DYNAMIC;
	} else {
		px->persist->flags &= ~PST_F_DYNAMIC;
	}
	persist_dyn_apply(px);
	return 0;
}

/* set dynamic-cookie-key backend <be> <key> */
static int cli_set_dyn_key(struct cli_ctx *ctx, int argc, char **argv)
{
	struct proxy *px = persist_cli_backend(ctx, argc, argv, 5);

	if (!px)
		return -1;
	if (!*argv[4]) {
		dstr_printf(&ctx->out, "String value expected.\n");
		return -1;
	}
	free(px->persist->dyn_key);
	px->persist->dyn_key = xstrdup(argv[4]);
	persist_dyn_apply(px);
	return 0;
}

static struct cli_kw persist_cli_kws[] = {
	{ { "enable", "dynamic-cookie", "backend", NULL }, "enable dynamic-cookie backend <bk>",
	  "give the servers of a backend their dynamic cookies", CLI_LVL_ADMIN, cli_dyn_cookie },
	{ { "disable", "dynamic-cookie", "backend", NULL }, "disable dynamic-cookie backend <bk>",
	  "take the dynamic cookies of a backend's servers back", CLI_LVL_ADMIN, cli_dyn_cookie },
	{ { "set", "dynamic-cookie-key", "backend", NULL },
	  "set dynamic-cookie-key backend <bk> <key>", "change the secret key of a backend's "
	  "dynamic cookies", CLI_LVL_ADMIN, cli_set_dyn_key },
};

/* Settings come from defaults; the rules do not (as in HAProxy, they are
 * not allowed there). */
static void persist_inherit(struct proxy *px, const struct proxy *def)
{
	const struct persist_px *d = def->persist;
	struct persist_px *pp;

	if (!d || (!d->name[0] && !d->options && !d->rdp[0]))
		return;
	pp = persist_px_get(px);
	pp->options = d->options;
	memcpy(pp->rdp, d->rdp, sizeof(pp->rdp));
	if (!d->name[0])
		return;
	memcpy(pp->name, d->name, sizeof(pp->name));
	pp->mode = d->mode;
	pp->flags = d->flags;
	pp->domains = d->domains ? xstrdup(d->domains) : NULL;
	pp->dyn_key = d->dyn_key ? xstrdup(d->dyn_key) : NULL;
}

static void persist_release(struct proxy *px)
{
	struct persist_px *pp = px->persist;

	if (!pp)
		return;
	while (pp->rules) {
		struct persist_rule *r = pp->rules;

		pp->rules = r->next;
		acl_cond_free(r->cond);
		free(r);
	}
	free(pp->domains);
	free(pp->dyn_key);
	free(pp);
	px->persist = NULL;
}

/* A cookie outside mode http is ignored, with HAProxy's warnings. */
static int persist_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next) {
		if (!(px->cap & PR_CAP_BE) || px->mode == PR_MODE_HTTP)
			continue;
		if (px->persist && px->persist->name[0]) {
			log_warning("config : cookie will be ignored for proxy '%s' (needs 'mode http').",
				    px->name);
			px->persist->name[0] = '\0';
		}
		for (struct server *srv = px->servers; srv; srv = srv->next)
			if (srv->cookie[0]) {
				log_warning("config : proxy '%s' : ignoring cookie for server '%s' as "
					    "HTTP mode is disabled.", px->name, srv->name);
				srv->cookie[0] = '\0';
			}
	}
	for (struct proxy *px = global.proxies; px; px = px->next) {
		const struct persist_px *pp = px->persist;

		if (!(px->cap & PR_CAP_BE) || !pp || !pp->name[0] || !(pp->flags & PST_F_DYNAMIC))
			continue;
		if (!pp->dyn_key)
			log_warning("config : proxy '%s' : 'cookie %s dynamic' without a "
				    "'dynamic-cookie-key': its servers get no cookie until "
				    "'set dynamic-cookie-key backend' gives one.", px->name, pp->name);
		persist_dyn_apply(px);
	}
	return 0;
}

/* persist rdp-cookie[(<name>)] */
static int kw_persist(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct persist_px *pp;
	const char *a = argc ? argv[0] : "";
	size_t n;

	(void)target;
	if (strncmp(a, "rdp-cookie", 10) != 0 || (a[10] && a[10] != '(')) {
		cfg_alert(ctx, "expects 'rdp-cookie' or 'rdp-cookie(<name>)'");
		return -1;
	}
	n = a[10] ? strlen(a + 11) : 0;   /* "<name>)" */
	if (a[10] && (n < 2 || a[10 + n] != ')' || n > sizeof(pp->rdp))) {
		cfg_alert(ctx, "'%s': rdp-cookie expects a cookie name (at most %zu characters) "
			  "between parentheses, or none ('msts')", a, sizeof(pp->rdp) - 1);
		return -1;
	}
	if (argc > 1) {
		cfg_alert(ctx, "'%s' takes no other argument (got '%s')", a, argv[1]);
		return -1;
	}
	pp = persist_px_get(ctx->px);
	if (n)
		snprintf(pp->rdp, sizeof(pp->rdp), "%.*s", (int)(n - 1), a + 11);
	else
		strcpy(pp->rdp, "msts");
	return 0;
}

/* The target of plain rows: <px>'s own settings. */
static void *persist_px_cfg(struct cfg_ctx *ctx)
{
	return persist_px_get(ctx->px);
}

static struct cfg_kw persist_kws[] = {
	{ "cookie", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_cookie,
	  .usage = "<name> [rewrite|insert|prefix] [indirect] [nocache] [postonly] [preserve] "
		   "[httponly] [secure] [domain <domain>]* [dynamic]" },
	{ "force-persist", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_persist_rule, .usage = "if|unless <condition>", .arg = 1 },
	{ "ignore-persist", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_persist_rule, .usage = "if|unless <condition>", .arg = 0 },
	{ "dynamic-cookie-key", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_dyn_key,
	  .usage = "<string>" },
	{ "option persist", CFG_SEC_BE, CFG_T_FLAG, offsetof(struct persist_px, options),
	  .mask = PST_O_PERSIST, .base = persist_px_cfg },
	{ "persist", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_persist,
	  .usage = "rdp-cookie[(<name>)]" },
};

static struct srv_kw persist_srv_kws[] = {
	{ "cookie", .parse = srv_kw_cookie },
};

static struct proxy_ext persist_ext = { persist_inherit, persist_release, NULL };

SLUICE_INIT(persist_register)
{
	cfg_register(persist_kws, ARRAY_SIZE(persist_kws));
	srv_register_keywords(persist_srv_kws, ARRAY_SIZE(persist_srv_kws));
	cfg_register_postparse(persist_postparse, 30);
	cli_register(persist_cli_kws, ARRAY_SIZE(persist_cli_kws));
	server_addr_hook_register(persist_dyn_addr_changed);
	proxy_register_ext(&persist_ext);
}
