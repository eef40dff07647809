/* What tcp-check and http-check rules share beyond send and expect: values
 * evaluated for a check (log formats, sample expressions, the check's own
 * variables), the set-var/unset-var rules, the options of expect rules
 * (min-recv, status and info options) and of connect rules (tcpcheck.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/srv_pp.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>
#include <sluice/tcpcheck.h>
#include <sluice/units.h>
#include <sluice/vars.h>

/* ---- evaluation for a check ---- */

/* What a log format can show of check <c>: its backend, server, address. */
static void check_lf_ctx(const struct check *c, struct lf_ctx *x)
{
	memset(x, 0, sizeof(*x));
	x->be_name = c->srv->px->name;
	x->srv_name = c->srv->name;
	x->srv_addr = &c->addr;
	x->hostname = global.node;
	x->pid = (int)getpid();
	x->li_id = -1;
	x->status = -1;
}

size_t tcpchk_lf_render(struct check *c, const struct lf_expr *lf, char *out, size_t size)
{
	struct lf_ctx x;
	size_t n;

	check_lf_ctx(c, &x);
	var_lend_check_stores(&c->vars_check, &c->vars_sess);
	n = lf_render(lf, &x, out, size);
	var_lend_check_stores(NULL, NULL);
	return n;
}

int tcpchk_smp_eval(struct check *c, const struct smp_expr *e, struct sample *smp)
{
	int ok;

	memset(smp, 0, sizeof(*smp));
	var_lend_check_stores(&c->vars_check, &c->vars_sess);
	ok = smp_expr_eval(e, NULL, smp);
	var_lend_check_stores(NULL, NULL);
	return ok;
}

void tcpchk_vars_reset(struct check *c)
{
	var_store_free(&c->vars_check);
}

void tcpchk_vars_free(struct check *c)
{
	var_store_free(&c->vars_check);
	var_store_free(&c->vars_sess);
}

/* ---- configuration helpers ---- */

/* Why an expression cannot run in a check: no stream is there. */
#define TCPCHK_NO_STREAM "health checks have no client stream: only fetches that work " \
	"without one (str, int, bin, var(check.*|sess.*|proc.*), env, hostname, date, ...) may be used"

struct lf_expr *tcpchk_lf_compile(struct cfg_ctx *ctx, const char *what, const char *fmt)
{
	struct lf_expr *lf = xcalloc(1, sizeof(*lf));
	const char *fetch;
	char *err = NULL;

	if (lf_compile(fmt, lf, &err) == -1) {
		cfg_alert(ctx, "'%s': %s", what, err ? err : "invalid log-format string");
		free(err);
		goto fail;
	}
	if ((fetch = lf_stream_fetch(lf))) {
		cfg_alert(ctx, "'%s': fetch '%s' cannot be used here: %s", what, fetch,
			  TCPCHK_NO_STREAM);
		goto fail;
	}
	return lf;
fail:
	lf_free(lf);
	free(lf);
	return NULL;
}

void tcpchk_lf_free(struct lf_expr *lf)
{
	if (!lf)
		return;
	lf_free(lf);
	free(lf);
}

struct smp_expr *tcpchk_expr_parse(struct cfg_ctx *ctx, const char *what, const char *s)
{
	struct smp_expr *e = xcalloc(1, sizeof(*e));
	char *err = NULL;

	if (smp_expr_parse(s, e, NULL, &err) == -1) {
		cfg_alert(ctx, "'%s': %s", what, err ? err : "invalid sample expression");
		free(err);
		free(e);
		return NULL;
	}
	if (!(e->fetch->use & SMP_USE_CONST)) {
		cfg_alert(ctx, "'%s': fetch '%s' cannot be used here: %s", what, e->fetch->name,
			  TCPCHK_NO_STREAM);
		tcpchk_expr_free(e);
		return NULL;
	}
	return e;
}

void tcpchk_expr_free(struct smp_expr *e)
{
	if (!e)
		return;
	smp_expr_free(e);
	free(e);
}

int tcpchk_hex_decode(const char *s, size_t n, char *out, size_t *len)
{
	if (n % 2)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = str_hex_digit((unsigned char)s[i]), lo = str_hex_digit((unsigned char)s[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (char)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}

/* ---- set-var / unset-var rules ---- */

int tcpchk_parse_var(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv)
{
	const char *w = argv[0];
	int fmt = strncmp(w, "set-var-fmt(", 12) == 0;
	int set = fmt || strncmp(w, "set-var(", 8) == 0;
	struct var_ref ref;
	char *err = NULL;

	if (!set && strncmp(w, "unset-var(", 10) != 0)
		return 1;
	if (strchr(w, ',')) {
		cfg_alert(ctx, "'%s': conditions after the variable name are not supported by "
			  "sluice yet", w);
		return -1;
	}
	if (var_ref_parse_word(w, &ref, &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		return -1;
	}
	r->var_scope = (int)ref.scope;
	r->var_name = ref.name;   /* taken over */
	if (ref.scope != VAR_PROC && ref.scope != VAR_SESS && ref.scope != VAR_CHECK) {
		cfg_alert(ctx, "'%s': health checks know the scopes proc, sess and check only", w);
		return -1;
	}
	r->type = set ? TCPCHK_SET_VAR : TCPCHK_UNSET_VAR;
	if (!set) {
		if (argc > 1) {
			cfg_alert(ctx, "'%s' takes no argument (got '%s')", w, argv[1]);
			return -1;
		}
		return 0;
	}
	if (argc != 2) {
		cfg_alert(ctx, argc < 2 ? "'%s' expects %s" : "'%s' expects only %s (quote it if "
			  "it has spaces)", w, fmt ? "a log-format string" : "a sample expression");
		return -1;
	}
	if (fmt)
		return (r->lf = tcpchk_lf_compile(ctx, w, argv[1])) ? 0 : -1;
	return (r->expr = tcpchk_expr_parse(ctx, w, argv[1])) ? 0 : -1;
}

void tcpchk_run_var(struct check *c, const struct tcpchk_rule *r)
{
	struct var_ref ref = { .scope = (enum var_scope)r->var_scope, .name = r->var_name };
	struct sample smp;

	var_lend_check_stores(&c->vars_check, &c->vars_sess);
	if (r->type == TCPCHK_UNSET_VAR) {
		var_unset(&ref, NULL);
	} else if (r->lf) {
		char *out = smp_scratch_get();
		struct lf_ctx x;

		check_lf_ctx(c, &x);
		memset(&smp, 0, sizeof(smp));
		smp.type = SMP_T_STR;
		smp.u.str.len = lf_render(r->lf, &x, out, SMP_SCRATCH_SIZE);
		smp.u.str.p = out;
		var_set(&ref, NULL, &smp);
	} else {
		memset(&smp, 0, sizeof(smp));
		if (smp_expr_eval(r->expr, NULL, &smp))
			var_set(&ref, NULL, &smp);
	}
	var_lend_check_stores(NULL, NULL);
}

/* ---- expect options ---- */

static const struct {
	const char     *word;
	enum chk_result res;
	uint8_t         kinds;   /* 1: ok-status, 2: error-status, 4: tout-status */
} tcpchk_statuses[] = {
	{ "L7OK", CHK_R_L7OK, 1 },     { "L7OKC", CHK_R_L7OKC, 1 | 2 },
	{ "L6OK", CHK_R_L6OK, 1 },     { "L4OK", CHK_R_OK, 1 },
	{ "L7RSP", CHK_R_L7RSP, 2 },   { "L7STS", CHK_R_L7STS, 2 },
	{ "L6RSP", CHK_R_L6RSP, 2 },   { "L4CON", CHK_R_CON, 2 },
	{ "L7TOUT", CHK_R_L7TOUT, 4 }, { "L6TOUT", CHK_R_L6TOUT, 4 },
	{ "L4TOUT", CHK_R_TOUT, 4 },
};

/* The expect options, each a row: what it sets is its kind. */
enum { XO_MIN_RECV, XO_COMMENT, XO_OK, XO_ERR, XO_TOUT, XO_ON_SUCCESS, XO_ON_ERROR, XO_CODE };

static const struct {
	const char *word;
	int         what;
	const char *takes;
} tcpchk_expect_opts[] = {
	{ "min-recv", XO_MIN_RECV, "an integer" },
	{ "comment", XO_COMMENT, "a string" },
	{ "ok-status", XO_OK, "L7OK, L7OKC, L6OK or L4OK" },
	{ "error-status", XO_ERR, "L7OKC, L7RSP, L7STS, L6RSP or L4CON" },
	{ "tout-status", XO_TOUT, "L7TOUT, L6TOUT or L4TOUT" },
	{ "on-success", XO_ON_SUCCESS, "a log-format string" },
	{ "on-error", XO_ON_ERROR, "a log-format string" },
	{ "status-code", XO_CODE, "a sample expression" },
};

static int parse_status(struct cfg_ctx *ctx, const char *opt, const char *v, int kind,
                        const char *takes, enum chk_result *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(tcpchk_statuses); i++)
		if ((tcpchk_statuses[i].kinds & kind) && strcmp(v, tcpchk_statuses[i].word) == 0) {
			*out = tcpchk_statuses[i].res;
			return 0;
		}
	cfg_alert(ctx, "'%s' expects %s, but got '%s'", opt, takes, v);
	return -1;
}

int tcpchk_parse_expect_opt(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv,
                            int *i)
{
	const char *opt = argv[*i], *v;
	const char *why;
	size_t k;
	long n;

	for (k = 0; k < ARRAY_SIZE(tcpchk_expect_opts); k++)
		if (strcmp(opt, tcpchk_expect_opts[k].word) == 0)
			break;
	if (k == ARRAY_SIZE(tcpchk_expect_opts))
		return 0;
	if (*i + 1 >= argc) {
		cfg_alert(ctx, "'%s' expects %s as argument", opt, tcpchk_expect_opts[k].takes);
		return -1;
	}
	v = argv[++*i];
	switch (tcpchk_expect_opts[k].what) {
	case XO_MIN_RECV:
		if (parse_int(v, -1, INT32_MAX, &n, &why) == -1) {
			cfg_alert(ctx, "'min-recv' expects an integer (-1 or more), got '%s'", v);
			return -1;
		}
		r->min_recv = (int)n;
		r->flags = n >= 0 ? r->flags | TCPCHK_F_MIN_RECV : r->flags & ~TCPCHK_F_MIN_RECV;
		return 1;
	case XO_COMMENT:
		free(r->comment);
		r->comment = xstrdup(v);
		return 1;
	case XO_OK:
		return parse_status(ctx, opt, v, 1, tcpchk_expect_opts[k].takes, &r->ok_res) ? -1 : 1;
	case XO_ERR:
		return parse_status(ctx, opt, v, 2, tcpchk_expect_opts[k].takes, &r->err_res) ? -1 : 1;
	case XO_TOUT:
		return parse_status(ctx, opt, v, 4, tcpchk_expect_opts[k].takes, &r->tout_res) ? -1 : 1;
	case XO_ON_SUCCESS:
		tcpchk_lf_free(r->on_success);
		return (r->on_success = tcpchk_lf_compile(ctx, opt, v)) ? 1 : -1;
	case XO_ON_ERROR:
		tcpchk_lf_free(r->on_error);
		return (r->on_error = tcpchk_lf_compile(ctx, opt, v)) ? 1 : -1;
	default:
		tcpchk_expr_free(r->status_code);
		return (r->status_code = tcpchk_expr_parse(ctx, opt, v)) ? 1 : -1;
	}
}

/* The names of the <n> matches of <words> (<stride> bytes apart, each
 * starting with its name) joined into <out>: "a, b or c" (<sep> ", ") or
 * "a|b|c" (<sep> "|"). */
static void expect_words_list(const void *words, size_t n, size_t stride, const char *sep,
                              char *out, size_t sz)
{
	size_t o = 0;

	*out = 0;
	for (size_t k = 0; k < n && o < sz; k++) {
		const char *w = *(const char *const *)((const char *)words + k * stride);
		const char *s = !k ? "" : *sep == '|' ? "|" : k + 1 == n ? " or " : ", ";

		o += (size_t)snprintf(out + o, sz - o, "%s%s", s, w);
	}
}

int tcpchk_parse_expect_words(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv,
                              const void *words, size_t n, size_t stride,
                              int (*multi)(struct cfg_ctx *ctx, struct tcpchk_rule *r,
                                           size_t k, int argc, char **argv, int *i),
                              const char **pat)
{
	char list[200];
	size_t k = n;

	*pat = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int o = tcpchk_parse_expect_opt(ctx, r, argc, argv, &i);

		if (o < 0)
			return -1;
		if (o > 0)
			continue;
		if (k < n) {
			cfg_alert(ctx, "'expect' takes only one pattern (unexpected '%s')", a);
			return -1;
		}
		if (strcmp(a, "!") == 0) {
			r->inverse = 1;
			continue;
		}
		if (*a == '!') {
			r->inverse = 1;
			a++;
		}
		for (k = 0; k < n; k++)
			if (strcmp(a, *(const char *const *)((const char *)words + k * stride)) == 0)
				break;
		if (k == n) {
			expect_words_list(words, n, stride, ", ", list, sizeof(list));
			cfg_alert(ctx, "'expect' expects [!] %s, or an option (min-recv, comment, "
				  "ok-status, error-status, tout-status, on-success, on-error, "
				  "status-code), but got '%s'", list, argv[i]);
			return -1;
		}
		o = multi ? multi(ctx, r, k, argc, argv, &i) : 0;
		if (o < 0)
			return -1;
		if (o > 0) {
			*pat = argv[i];
			continue;
		}
		if (i + 1 >= argc) {
			cfg_alert(ctx, "'expect %s' expects a pattern as argument", a);
			return -1;
		}
		*pat = argv[++i];
	}
	if (k == n) {
		expect_words_list(words, n, stride, "|", list, sizeof(list));
		cfg_alert(ctx, "'expect' expects [!] %s <pattern>", list);
		return -1;
	}
	return (int)k;
}

/* status-code: the check's code, when the expression gives an integer. */
static void expect_set_code(struct check *c, const struct tcpchk_rule *r)
{
	struct sample smp;

	if (r->status_code && tcpchk_smp_eval(c, r->status_code, &smp) &&
	    smp_cast(&smp, SMP_T_SINT))
		c->run_code = (int)smp.u.sint;
}

void tcpchk_expect_ok(struct check *c, const struct tcpchk_rule *r)
{
	c->run_ok = r->ok_res ? r->ok_res : CHK_R_L7OK;
	if (r->ok_info)
		c->run_info = r->ok_info;
	if (r->on_success) {
		tcpchk_lf_render(c, r->on_success, c->run_msg, sizeof(c->run_msg));
		c->run_info = c->run_msg;
	}
	expect_set_code(c, r);
}

int tcpchk_expect_failed(struct check *c, const struct tcpchk_rule *r, enum chk_result *res,
                         const char **info)
{
	if (r->err_res)
		*res = r->err_res;
	expect_set_code(c, r);
	if (!r->on_error)
		return 0;
	tcpchk_lf_render(c, r->on_error, c->run_msg, sizeof(c->run_msg));
	*info = c->run_msg;
	return 1;
}

/* ---- connect rules ---- */

/* "h2,http/1.1" in ALPN's wire format (length-prefixed names). */
static int alpn_wire(const char *list, unsigned char **out, size_t *len)
{
	size_t n = strlen(list), o = 0;
	unsigned char *w = xcalloc(1, n + 2);

	for (const char *p = list; ; ) {
		size_t l = strcspn(p, ",");

		if (!l || l > 255) {
			free(w);
			return -1;
		}
		w[o++] = (unsigned char)l;
		memcpy(w + o, p, l);
		o += l;
		if (!p[l])
			break;
		p += l + 1;
	}
	*out = w;
	*len = o;
	return 0;
}

/* The options of connect rules, each a row: what it sets and whether it
 * takes a value. */
enum { CO_FLAG, CO_PORT, CO_ADDR, CO_SNI, CO_ALPN, CO_PROTO, CO_COMMENT };

static const struct {
	const char *word;
	int         what;
	unsigned    flag;    /* CO_FLAG: TCPCHK_CO_* */
	const char *takes;   /* NULL: no value */
} tcpchk_connect_opts[] = {
	{ "default", CO_FLAG, TCPCHK_CO_DEFAULT, NULL },
	{ "send-proxy", CO_FLAG, TCPCHK_CO_PROXY, NULL },
	{ "via-socks4", CO_FLAG, TCPCHK_CO_SOCKS4, NULL },
	{ "ssl", CO_FLAG, TCPCHK_CO_SSL, NULL },
	{ "linger", CO_FLAG, TCPCHK_CO_LINGER, NULL },
	{ "port", CO_PORT, 0, "a TCP port (1 to 65535) or a sample expression" },
	{ "addr", CO_ADDR, 0, "an IP address" },
	{ "sni", CO_SNI, 0, "a host name" },
	{ "alpn", CO_ALPN, 0, "a comma-separated list of protocols" },
	{ "proto", CO_PROTO, 0, "a protocol name" },
	{ "comment", CO_COMMENT, 0, "a string" },
};

static int parse_connect_value(struct cfg_ctx *ctx, struct tcpchk_rule *r, int what,
                               const char *v, int http)
{
	struct addr_spec as;
	char *aerr = NULL;
	const char *why;
	long port;

	switch (what) {
	case CO_PORT:
		if (parse_int(v, 1, 65535, &port, &why) == 0) {
			r->port = (uint16_t)port;
			return 0;
		}
		if (parse_int(v, INT32_MIN, INT32_MAX, &port, &why) == 0) {
			cfg_alert(ctx, "'port' expects a TCP port (1 to 65535), got '%s'", v);
			return -1;
		}
		tcpchk_expr_free(r->port_expr);
		return (r->port_expr = tcpchk_expr_parse(ctx, "port", v)) ? 0 : -1;
	case CO_ADDR:
		if (addr_parse(v, &as, ADDR_F_PORT_OPTIONAL | ADDR_F_RESOLVE, &aerr) == -1) {
			cfg_alert(ctx, "'addr': %s", aerr ? aerr : "invalid address");
			free(aerr);
			return -1;
		}
		r->addr = as.ss;
		r->addrlen = as.len;
		r->flags |= TCPCHK_F_HAS_ADDR;
		if (as.port_lo && !r->port)
			r->port = as.port_lo;
		return 0;
	case CO_SNI:
		free(r->sni);
		r->sni = xstrdup(v);
		return 0;
	case CO_ALPN:
		free(r->alpn);
		r->alpn = NULL;
		if (alpn_wire(v, &r->alpn, &r->alpn_len) == -1) {
			cfg_alert(ctx, "'alpn' expects a comma-separated list of protocol names (1 to "
				  "255 characters each), got '%s'", v);
			return -1;
		}
		return 0;
	case CO_PROTO:
		r->conn_opts &= ~TCPCHK_CO_PROTOS;
		if (http && strcmp(v, "h2") == 0)
			r->conn_opts |= TCPCHK_CO_H2;
		else if (http && strcmp(v, "fcgi") == 0)
			r->conn_opts |= TCPCHK_CO_FCGI;   /* the backend's fcgi-app: fcgi_app.c */
		else if ((http && strcmp(v, "h1") == 0) || (!http && strcmp(v, "none") == 0))
			r->conn_opts |= TCPCHK_CO_H1;
		else
			return cfg_alert(ctx, "'proto' expects %s, but got '%s'", http ?
					 "an HTTP protocol ('h1', 'h2' or 'fcgi')" :
					 "a TCP protocol ('none')", v), -1;
		return 0;
	default:
		free(r->comment);
		r->comment = xstrdup(v);
		return 0;
	}
}

int tcpchk_parse_connect(struct cfg_ctx *ctx, struct tcpchk_rule *r, int argc, char **argv,
                         int http)
{
	for (int i = 1; i < argc; i++) {
		size_t k;

		for (k = 0; k < ARRAY_SIZE(tcpchk_connect_opts); k++)
			if (strcmp(argv[i], tcpchk_connect_opts[k].word) == 0)
				break;
		if (k == ARRAY_SIZE(tcpchk_connect_opts)) {
			cfg_alert(ctx, "'connect' expects default, port, addr, send-proxy, via-socks4, "
				  "ssl, sni, alpn, linger, proto or comment, but got '%s'", argv[i]);
			return -1;
		}
		if (!tcpchk_connect_opts[k].takes) {
			r->conn_opts |= tcpchk_connect_opts[k].flag;
			continue;
		}
		if (i + 1 >= argc || !*argv[i + 1]) {
			cfg_alert(ctx, "'%s' expects %s as argument", argv[i],
				  tcpchk_connect_opts[k].takes);
			return -1;
		}
		if (parse_connect_value(ctx, r, tcpchk_connect_opts[k].what, argv[++i], http) == -1)
			return -1;
	}
#ifndef USE_OPENSSL
	if (r->conn_opts & TCPCHK_CO_SSL) {
		cfg_alert(ctx, "'connect ssl' needs OpenSSL, and this sluice was built without it");
		return -1;
	}
#endif
	return 0;
}

unsigned tcpchk_conn_opts(const struct check *c, const struct tcpchk_rule *r)
{
	const struct server *srv = c->srv;
	unsigned o = 0;

	if (!r || (r->conn_opts & TCPCHK_CO_DEFAULT)) {
		/* the server's check settings */
		if (ssl_check_enabled(srv, !c->port && !c->has_addr))
			o |= TCPCHK_CO_SSL;
		if (srv_pp_check_wanted(srv))
			o |= TCPCHK_CO_PROXY;
		if (srv->flags & SRV_F_CHECK_SOCKS4)
			o |= TCPCHK_CO_SOCKS4;
		if (srv->flags & SRV_F_CHECK_H2)
			o |= TCPCHK_CO_H2;
		else if (chk_srv_speaks_fcgi(srv))
			o |= TCPCHK_CO_FCGI;
	}
	if (!r)
		return o;
	if (r->conn_opts & TCPCHK_CO_PROTOS)
		o &= ~TCPCHK_CO_PROTOS;
	return o | (r->conn_opts & ~TCPCHK_CO_DEFAULT);
}

uint16_t tcpchk_rule_port(struct check *c, const struct tcpchk_rule *r)
{
	struct sample smp;

	if (r->port || !r->port_expr)
		return r->port;
	if (tcpchk_smp_eval(c, r->port_expr, &smp) && smp_cast(&smp, SMP_T_SINT) &&
	    smp.u.sint > 0 && smp.u.sint <= 65535)
		return (uint16_t)smp.u.sint;
	return 0;
}

/* ---- rules ---- */

void tcpchk_rule_free_opts(struct tcpchk_rule *r)
{
	tcpchk_lf_free(r->on_success);
	tcpchk_lf_free(r->on_error);
	tcpchk_lf_free(r->lf);
	tcpchk_expr_free(r->status_code);
	tcpchk_expr_free(r->expr);
	tcpchk_expr_free(r->port_expr);
	free(r->var_name);
	free(r->sni);
	free(r->alpn);
}
