/* Per-proxy HTTP settings and their keywords (http_ana.h): connection
 * modes, http-reuse, forwardfor/originalto, monitor-uri, header captures,
 * unique-id, log formats, HTTP timeouts, tune.http.maxhdr. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/acl.h>
#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/log.h>
#include <sluice/str.h>
#include <sluice/units.h>

static const struct http_px http_px_default = {
	.conn_mode = HTTP_KAL,
	.reuse = HTTP_REUSE_SAFE,
	.fwdfor_except_bits = -1,
	.origto_except_bits = -1,
};

const struct http_px *http_px_of(const struct proxy *px)
{
	return px->http ? px->http : &http_px_default;
}

/* <px>'s settings, created from the defaults on first change. */
static struct http_px *http_px_w(struct proxy *px)
{
	if (!px->http) {
		px->http = xcalloc(1, sizeof(*px->http));
		*px->http = http_px_default;
	}
	return px->http;
}

struct http_px *http_px_edit(struct proxy *px)
{
	return http_px_w(px);
}

static void http_px_release(struct proxy *px)
{
	struct http_px *h = px->http;

	if (px->logformat) {
		lf_free(px->logformat);
		free(px->logformat);
		px->logformat = NULL;
	}
	if (!h)
		return;
	free(h->fwdfor_hdr);
	free(h->origto_hdr);
	free(h->monitor_uri);
	for (int i = 0; i < h->n_req_cap; i++)
		free(h->req_cap[i].name);
	for (int i = 0; i < h->n_res_cap; i++)
		free(h->res_cap[i].name);
	free(h->req_cap);
	free(h->res_cap);
	free(h->uniqid_fmt_str);
	free(h->uniqid_hdr);
	free(h->send_name);
	free(h->ck_cap_name);
	for (int i = 0; i < h->n_monitor_fail; i++)
		acl_cond_free(h->monitor_fail[i]);
	free(h->monitor_fail);
	if (h->uniqid_fmt) {
		lf_free(h->uniqid_fmt);
		free(h->uniqid_fmt);
	}
	free(h);
	px->http = NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void http_px_inherit(struct proxy *px, const struct proxy *def)
{
	const struct http_px *d = def->http;
	struct http_px *h;

	if (!d)
		return;
	h = http_px_w(px);
	*h = *d;
	h->conn_mode_set = 0;
	h->fwdfor_hdr = dup_or_null(d->fwdfor_hdr);
	h->origto_hdr = dup_or_null(d->origto_hdr);
	h->monitor_uri = dup_or_null(d->monitor_uri);
	h->uniqid_fmt_str = dup_or_null(d->uniqid_fmt_str);
	h->uniqid_hdr = dup_or_null(d->uniqid_hdr);
	h->send_name = dup_or_null(d->send_name);
	h->uniqid_fmt = NULL;
	h->monitor_fail = NULL;   /* (frontends only: none in defaults) */
	h->n_monitor_fail = 0;
	/* captures are frontend settings: not passed on (as in HAProxy) */
	h->req_cap = h->res_cap = NULL;
	h->n_req_cap = h->n_res_cap = 0;
	h->ck_cap_name = NULL;
}

static struct proxy_ext http_px_ext = {
	.inherit = http_px_inherit,
	.release = http_px_release,
};

/* ---- keywords ---- */

/* option http-keep-alive | http-server-close | httpclose: the
 * row's value is the mode. */
static int kw_conn_mode(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h = http_px_w(ctx->px);
	enum http_conn_mode m = (enum http_conn_mode)ctx->kw_row->arg;

	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	if (ctx->inverted) {
		/* "no option X" goes back to the default when X was the mode */
		if (h->conn_mode == m)
			h->conn_mode = HTTP_KAL;
		return 0;
	}
	h->conn_mode = m;
	h->conn_mode_set = 1;
	return 0;
}

/* A field name sluice adds to every request must be a token: the head
 * refuses any other (each request would get a 500). */
static int hdr_name_check(struct cfg_ctx *ctx, const char *name)
{
	size_t len = strlen(name);

	if (len && http_safe_scan(name, len, HTTP_SAFE_TOKEN) == len)
		return 0;
	cfg_alert(ctx, "invalid header name '%s'", name);
	return -1;
}

/* option forwardfor [except NET] [header NAME] [if-none]  (row value 1)
 * option originalto [except NET] [header NAME]            (row value 0) */
static int kw_fwd_header(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h = http_px_w(ctx->px);
	const int fwd = (int)ctx->kw_row->arg;
	char **hdr = fwd ? &h->fwdfor_hdr : &h->origto_hdr;
	struct sockaddr_storage *net = fwd ? &h->fwdfor_except : &h->origto_except;
	int *bits = fwd ? &h->fwdfor_except_bits : &h->origto_except_bits;

	if (ctx->inverted) {
		*(fwd ? &h->fwdfor : &h->origto) = 0;
		return 0;
	}
	*(fwd ? &h->fwdfor : &h->origto) = 1;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "except") == 0 && i + 1 < argc) {
			if (addr_net_parse(argv[++i], net, bits) == -1) {
				cfg_alert(ctx, "'except' expects an address or network, not '%s'", argv[i]);
				return -1;
			}
		} else if (strcmp(argv[i], "header") == 0 && i + 1 < argc) {
			if (hdr_name_check(ctx, argv[i + 1]) == -1)
				return -1;
			free(*hdr);
			*hdr = xstrdup(argv[++i]);
		} else if (fwd && strcmp(argv[i], "if-none") == 0) {
			h->fwdfor_flags |= HTTP_FWD_IFNONE;
		} else {
			cfg_alert(ctx, "unexpected '%s' (expects 'except <net>', 'header <name>'%s)",
				  argv[i], fwd ? " or 'if-none'" : "");
			return -1;
		}
	}
	return 0;
}

/* http-reuse never|safe|aggressive|always */
static int kw_http_reuse(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static const char *const names[] = {
		[HTTP_REUSE_SAFE] = "safe", [HTTP_REUSE_NEVER] = "never",
		[HTTP_REUSE_AGGRESSIVE] = "aggressive", [HTTP_REUSE_ALWAYS] = "always",
	};

	for (size_t i = 0; argc == 1 && i < ARRAY_SIZE(names); i++)
		if (strcmp(argv[0], names[i]) == 0) {
			http_px_w(ctx->px)->reuse = (enum http_reuse)i;
			return 0;
		}
	cfg_alert(ctx, "expects 'never', 'safe', 'aggressive' or 'always'");
	return -1;
}

static int kw_monitor_uri(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h = http_px_w(ctx->px);

	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a URI");
		return -1;
	}
	free(h->monitor_uri);
	h->monitor_uri = xstrdup(argv[0]);
	return 0;
}

/* capture request|response header NAME len N (row value 1: response) */
static int kw_capture(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h = http_px_w(ctx->px);
	const int res = (int)ctx->kw_row->arg;
	struct http_capture **tab = res ? &h->res_cap : &h->req_cap;
	int *n = res ? &h->n_res_cap : &h->n_req_cap;
	long len;
	const char *err;

	if (!(ctx->px->cap & PR_CAP_FE)) {
		cfg_alert(ctx, "is only allowed in a frontend or listen section");
		return -1;
	}
	if (argc != 3 || strcmp(argv[1], "len") != 0) {
		cfg_alert(ctx, "expects '<header> len <length>'");
		return -1;
	}
	if (parse_int(argv[2], 1, 64 * 1024, &len, &err) == -1) {
		cfg_alert(ctx, "'len %s': %s", argv[2], err);
		return -1;
	}
	*tab = xrealloc(*tab, (size_t)(*n + 1) * sizeof(**tab));
	(*tab)[*n].name = xstrdup(argv[0]);
	(*tab)[*n].len = (int)len;
	(*n)++;
	return 0;
}

/* declare capture request|response len N (row value 1: response): a slot
 * with no header, numbered with those of "capture ... header", for
 * http-request/http-response capture id N and capture-req()/capture-res(). */
static int kw_declare_capture(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h;
	const int res = (int)ctx->kw_row->arg;
	struct http_capture **tab;
	int *n;
	long len;
	const char *err;

	if (!(ctx->px->cap & PR_CAP_FE)) {
		cfg_alert(ctx, "is only allowed in a frontend or listen section");
		return -1;
	}
	if (argc != 2 || strcmp(argv[0], "len") != 0) {
		cfg_alert(ctx, "expects 'len <length>'");
		return -1;
	}
	if (parse_int(argv[1], 1, 64 * 1024, &len, &err) == -1) {
		cfg_alert(ctx, "'len %s': %s", argv[1], err);
		return -1;
	}
	h = http_px_w(ctx->px);
	tab = res ? &h->res_cap : &h->req_cap;
	n = res ? &h->n_res_cap : &h->n_req_cap;
	*tab = xrealloc(*tab, (size_t)(*n + 1) * sizeof(**tab));
	(*tab)[*n].name = xstrdup("");
	(*tab)[*n].len = (int)len;
	(*n)++;
	return 0;
}

/* unique-id-format FMT (row value 1) | unique-id-header NAME (0) */
static int kw_unique_id(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct http_px *h = http_px_w(ctx->px);
	char **dst = ctx->kw_row->arg ? &h->uniqid_fmt_str : &h->uniqid_hdr;

	if (argc != 1) {
		cfg_alert(ctx, "expects one argument (quote it if it has spaces)");
		return -1;
	}
	if (dst == &h->uniqid_hdr && hdr_name_check(ctx, argv[0]) == -1)
		return -1;
	free(*dst);
	*dst = xstrdup(argv[0]);
	return 0;
}

/* option httplog [clf] | log-format FMT (row value 1) | option httpslog (2) */
static int kw_log_format(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct proxy *px = ctx->px;
	const char *fmt;

	if (ctx->kw_row->arg != 1 && ctx->inverted) {
		free(px->logformat_str);
		px->logformat_str = NULL;
		return 0;
	}
	if (ctx->kw_row->arg == 2) {
		if (argc) {
			cfg_alert(ctx, "takes no argument");
			return -1;
		}
		fmt = LF_HTTPSLOG;
	} else if (ctx->kw_row->arg) {
		if (argc != 1) {
			cfg_alert(ctx, "expects one format string (quote it if it has spaces)");
			return -1;
		}
		fmt = argv[0];
	} else {
		if (argc > 1 || (argc == 1 && strcmp(argv[0], "clf") != 0)) {
			cfg_alert(ctx, "only takes the optional argument 'clf'");
			return -1;
		}
		fmt = argc ? LF_HTTPLOG_CLF : LF_HTTPLOG;
	}
	free(px->logformat_str);
	px->logformat_str = xstrdup(fmt);
	return 0;
}

/* The target of plain rows: <px>'s own HTTP settings. */
static void *http_px_cfg(struct cfg_ctx *ctx)
{
	return http_px_w(ctx->px);
}

#define HTTP_OPTION(kw, flag, secs) \
	{ "option " kw, secs, CFG_T_FLAG, offsetof(struct http_px, options), .mask = flag, \
	  .base = http_px_cfg }
#define HTTP_TIMEOUT(kw, field, secs) \
	{ "timeout " kw, secs, CFG_T_TIME, CFG_PX_OFF(timeout.field), .usage = "<time>" }

static struct cfg_kw http_px_kws[] = {
	{ "option http-keep-alive", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_conn_mode,
	  .flags = CFG_KW_F_NO, .arg = HTTP_KAL },
	{ "option http-server-close", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_conn_mode,
	  .flags = CFG_KW_F_NO, .arg = HTTP_SCL },
	{ "option httpclose", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_conn_mode,
	  .flags = CFG_KW_F_NO, .arg = HTTP_CLO },
	{ "option forwardfor", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_fwd_header,
	  .flags = CFG_KW_F_NO, .usage = "[except <net>] [header <name>] [if-none]", .arg = 1 },
	{ "option originalto", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_fwd_header,
	  .flags = CFG_KW_F_NO, .usage = "[except <net>] [header <name>]", .arg = 0 },
	{ "option httplog", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_log_format,
	  .flags = CFG_KW_F_NO, .usage = "[clf]", .arg = 0 },
	{ "option httpslog", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_log_format,
	  .flags = CFG_KW_F_NO, .arg = 2 },
	{ "log-format", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_log_format, .usage = "<format>",
	  .arg = 1 },
	{ "http-reuse", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_http_reuse,
	  .usage = "never|safe|aggressive|always" },
	{ "monitor-uri", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_monitor_uri, .usage = "<uri>" },
	{ "declare capture request", CFG_SEC_FRONTEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_declare_capture, .usage = "len <length>", .arg = 0 },
	{ "declare capture response", CFG_SEC_FRONTEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_declare_capture, .usage = "len <length>", .arg = 1 },
	{ "capture request header", CFG_SEC_FRONTEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_capture, .usage = "<name> len <length>", .arg = 0 },
	{ "capture response header", CFG_SEC_FRONTEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_capture, .usage = "<name> len <length>", .arg = 1 },
	{ "unique-id-format", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_unique_id,
	  .usage = "<format>", .arg = 1 },
	{ "unique-id-header", CFG_SEC_FE, CFG_T_FUNC, 0, .parse = kw_unique_id,
	  .usage = "<name>", .arg = 0 },
	HTTP_OPTION("abortonclose", HTTP_O_ABRT_CLOSE, CFG_SEC_BE),
	HTTP_OPTION("dontlog-normal", HTTP_O_DONTLOG_NORMAL, CFG_SEC_FE),
	HTTP_OPTION("log-separate-errors", HTTP_O_LOG_SEP_ERR, CFG_SEC_FE),
	HTTP_OPTION("http-pretend-keepalive", HTTP_O_PRETEND_KA, CFG_SEC_BE),
	HTTP_OPTION("http-ignore-probes", HTTP_O_IGNORE_PROBES, CFG_SEC_FE),
	HTTP_OPTION("http-buffer-request", HTTP_O_BUFREQ, CFG_SEC_FE),
	HTTP_OPTION("disable-h2-upgrade", HTTP_O_NO_H2_UPG, CFG_SEC_FE),
	HTTP_OPTION("h1-case-adjust-bogus-client", HTTP_O_CASE_CLI, CFG_SEC_FE),
	HTTP_OPTION("h1-case-adjust-bogus-server", HTTP_O_CASE_SRV, CFG_SEC_BE),
	HTTP_OPTION("accept-invalid-http-request", HTTP_O_ACC_INV_REQ, CFG_SEC_FE),
	HTTP_OPTION("accept-invalid-http-response", HTTP_O_ACC_INV_RES, CFG_SEC_BE),
	HTTP_OPTION("http-use-proxy-header", HTTP_O_USE_PXHDR, CFG_SEC_FE),
	HTTP_OPTION("checkcache", HTTP_O_CHECKCACHE, CFG_SEC_BE),
	HTTP_OPTION("http-no-delay", HTTP_O_NO_DELAY, CFG_SEC_PROXIES),
	HTTP_TIMEOUT("http-request", http_request, CFG_SEC_FE),
	HTTP_TIMEOUT("http-keep-alive", http_keep_alive, CFG_SEC_FE),
	HTTP_TIMEOUT("tarpit", tarpit, CFG_SEC_PROXIES),
	{ "tune.http.logurilen", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, logurilen),
	  .min = 1, .max = 65535, .usage = "a length in bytes" },
	{ "tune.http.maxhdr", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, maxhdr),
	  .min = 1, .max = 32767, .usage = "a number of headers" },
	{ "h1-accept-payload-with-any-method", CFG_SEC_GLOBAL, CFG_T_FLAG,
	  offsetof(struct global, tune_flags), .mask = GLB_T_H1_ANY_BODY },
};

/* Every HTTP proxy gets its settings block, which other modules fill at
 * post-parse (capture slots of http-request capture). */
static int http_px_alloc(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		if (px->mode == PR_MODE_HTTP)
			http_px_w(px);
	return 0;
}

/* Compiles the log and unique-id formats once every proxy is known. */
static int http_px_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		struct http_px *h = px->http;
		char *err = NULL;

		if ((px->cap & PR_CAP_FE) && px->mode == PR_MODE_TCP &&
		    px->logformat_str && (strcmp(px->logformat_str, LF_HTTPLOG) == 0 ||
					  strcmp(px->logformat_str, LF_HTTPLOG_CLF) == 0 ||
					  strcmp(px->logformat_str, LF_HTTPSLOG) == 0)) {
			log_warning("%s:%d: 'option httplog' (or httpslog) not usable with proxy '%s' (needs "
				    "'mode http'); falling back to 'option tcplog'",
				    px->conf_file, px->conf_line, px->name);
			free(px->logformat_str);
			px->logformat_str = xstrdup(LF_TCPLOG);
		}
		if ((px->cap & PR_CAP_FE) && px->mode == PR_MODE_TCP && h) {
			int declared = 0;

			for (int i = 0; i < h->n_req_cap; i++)
				declared |= !h->req_cap[i].name[0];
			for (int i = 0; i < h->n_res_cap; i++)
				declared |= !h->res_cap[i].name[0];
			if (declared)
				log_warning("%s:%d: proxy '%s': 'declare capture' slots are only "
					    "filled in 'mode http' by sluice (mode tcp captures are "
					    "made by 'tcp-request content capture'); ignored",
					    px->conf_file, px->conf_line, px->name);
		}
		if ((px->cap & PR_CAP_FE) && !px->logformat_str && (px->options & PR_O_TCPLOG))
			px->logformat_str = xstrdup(LF_TCPLOG);
		if (px->logformat_str && (px->cap & PR_CAP_FE) && !px->logformat) {
			px->logformat = xcalloc(1, sizeof(*px->logformat));
			if (lf_compile(px->logformat_str, px->logformat, &err) == -1) {
				log_alert("%s:%d: proxy '%s': log-format: %s", px->conf_file,
					  px->conf_line, px->name, err);
				free(err);
				errors++;
			} else if (px->mode == PR_MODE_TCP && lf_http_var(px->logformat)) {
				log_warning("%s:%d: proxy '%s': log-format variable '%%%s' is reserved "
					    "for 'mode http'; it logs nothing useful here",
					    px->conf_file, px->conf_line, px->name,
					    lf_http_var(px->logformat));
			}
		}
		if (h && h->uniqid_fmt_str && !h->uniqid_fmt) {
			h->uniqid_fmt = xcalloc(1, sizeof(*h->uniqid_fmt));
			if (lf_compile(h->uniqid_fmt_str, h->uniqid_fmt, &err) == -1) {
				log_alert("%s:%d: proxy '%s': unique-id-format: %s", px->conf_file,
					  px->conf_line, px->name, err);
				free(err);
				errors++;
			}
		}
	}
	return errors;
}

SLUICE_INIT(http_px_register)
{
	cfg_register(http_px_kws, ARRAY_SIZE(http_px_kws));
	cfg_register_postparse(http_px_alloc, 5);
	cfg_register_postparse(http_px_postparse, 30);
	proxy_register_ext(&http_px_ext);
}
