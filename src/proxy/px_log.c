/* Per-proxy log settings (px_log.h): log-tag, log-format-sd and
 * error-log-format, kept in the proxy's struct pxlog_px and compiled at
 * post-parse. */
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/px_log.h>
#include <sluice/str.h>

struct pxlog_px {
	char           *tag;       /* log-tag */
	char           *sd_str;    /* log-format-sd */
	char           *err_str;   /* error-log-format */
	struct lf_expr *sd, *err;  /* compiled at post-parse (frontends) */
};

static struct pxlog_px *pxlog_w(struct proxy *px)
{
	if (!px->pxlog)
		px->pxlog = xcalloc(1, sizeof(*px->pxlog));
	return px->pxlog;
}

/* The target of the rows: the proxy's own settings. */
static void *pxlog_cfg(struct cfg_ctx *ctx)
{
	return pxlog_w(ctx->px);
}

/* log-tag <tag>: also seen by the proxy's log list, so that server state
 * changes of a backend carry it too. */
static int kw_log_tag(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct pxlog_px *pl = pxlog_w(ctx->px);

	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a tag");
		return -1;
	}
	free(pl->tag);
	pl->tag = xstrdup(argv[0]);
	ctx->px->loggers.tag = pl->tag;
	return 0;
}

const struct lf_expr *px_log_format(const struct proxy *fe, int err)
{
	if (err && fe->pxlog && fe->pxlog->err)
		return fe->pxlog->err;
	return fe->logformat;
}

unsigned px_log_needs(const struct proxy *fe)
{
	const struct pxlog_px *pl = fe->pxlog;

	if (!pl)
		return 0;
	return (pl->sd ? pl->sd->needs : 0) | (pl->err ? pl->err->needs : 0);
}

void px_log_send(const struct proxy *fe, const struct lf_ctx *c, int level, const char *line,
                 size_t n)
{
	char sd[1024];
	size_t sl;

	if (!fe->pxlog || !fe->pxlog->sd) {
		log_send(&fe->loggers, level, line, n);
		return;
	}
	sl = lf_render(fe->pxlog->sd, c, sd, sizeof(sd));
	log_send_sd(&fe->loggers, level, sd, sl, line, n);
}

/* Compiles <str> into <*e> for proxy <px>'s keyword <kw>. */
static int pxlog_compile(struct proxy *px, const char *kw, const char *str, struct lf_expr **e)
{
	char *err = NULL;

	if (!str || *e)
		return 0;
	*e = xcalloc(1, sizeof(**e));
	if (lf_compile(str, *e, &err) == 0)
		return 0;
	log_alert("%s:%d: proxy '%s': %s: %s", px->conf_file, px->conf_line, px->name, kw, err);
	free(err);
	return 1;
}

static int pxlog_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		struct pxlog_px *pl = px->pxlog;

		if (!pl || !(px->cap & PR_CAP_FE))
			continue;
		errors += pxlog_compile(px, "log-format-sd", pl->sd_str, &pl->sd);
		errors += pxlog_compile(px, "error-log-format", pl->err_str, &pl->err);
	}
	return errors;
}

static void pxlog_inherit(struct proxy *px, const struct proxy *def)
{
	const struct pxlog_px *d = def->pxlog;
	struct pxlog_px *pl;

	if (!d)
		return;
	pl = pxlog_w(px);
	pl->tag = d->tag ? xstrdup(d->tag) : NULL;
	pl->sd_str = d->sd_str ? xstrdup(d->sd_str) : NULL;
	pl->err_str = d->err_str ? xstrdup(d->err_str) : NULL;
	px->loggers.tag = pl->tag;
}

static void pxlog_free_expr(struct lf_expr *e)
{
	if (e) {
		lf_free(e);
		free(e);
	}
}

static void pxlog_release(struct proxy *px)
{
	struct pxlog_px *pl = px->pxlog;

	if (!pl)
		return;
	px->loggers.tag = NULL;
	free(pl->tag);
	free(pl->sd_str);
	free(pl->err_str);
	pxlog_free_expr(pl->sd);
	pxlog_free_expr(pl->err);
	free(pl);
	px->pxlog = NULL;
}

static struct cfg_kw pxlog_kws[] = {
	{ "log-tag", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_log_tag, .usage = "<tag>" },
	{ "log-format-sd", CFG_SEC_FE, CFG_T_STR, offsetof(struct pxlog_px, sd_str),
	  .base = pxlog_cfg, .usage = "<format>" },
	{ "error-log-format", CFG_SEC_FE, CFG_T_STR, offsetof(struct pxlog_px, err_str),
	  .base = pxlog_cfg, .usage = "<format>" },
};

static struct proxy_ext pxlog_ext = { pxlog_inherit, pxlog_release, NULL };

SLUICE_INIT(pxlog_register)
{
	cfg_register(pxlog_kws, ARRAY_SIZE(pxlog_kws));
	cfg_register_postparse(pxlog_postparse, 30);
	proxy_register_ext(&pxlog_ext);
}
