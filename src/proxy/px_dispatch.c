/* dispatch <addr>:<port> and option transparent (or the older keyword
 * "transparent"): a backend without servers sends its connections to one
 * address, or to the client's original destination. Each becomes, at
 * post-parse, a server of the backend named <NOSRV> (as HAProxy's logs name
 * such connections' server) that the connect path treats as any other. */
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>

/* dispatch <address>:<port> */
static int kw_dispatch(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct addr_spec as;
	char *err = NULL;

	if (argc != 1) {
		cfg_alert(ctx, "expects <address>:<port>");
		return -1;
	}
	if (addr_parse(argv[0], &as, ADDR_F_RESOLVE, &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		return -1;
	}
	free(ctx->px->dispatch);
	ctx->px->dispatch = xstrdup(argv[0]);
	return 0;
}

/* A backend with servers takes no notice of either keyword (HAProxy load
 * balances over its servers, silently): said here. Otherwise its server. */
static int dispatch_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		const char *kw = px->dispatch ? "dispatch" : "option transparent";
		struct server *srv;
		char *err = NULL;

		if (!(px->cap & PR_CAP_BE) || (!px->dispatch && !(px->options & PR_O_TRANSP)))
			continue;
		if (px->servers) {
			log_warning("%s:%d: proxy '%s': '%s' ignored: the backend's servers take "
				    "its connections", px->conf_file, px->conf_line, px->name, kw);
			continue;
		}
		/* (no port: SRV_F_SAMEPORT, then the original destination's) */
		srv = server_add_implied(px, "<NOSRV>", px->dispatch ? px->dispatch : "0.0.0.0", &err);
		if (!srv || err) {
			log_alert("%s:%d: proxy '%s': '%s': %s", px->conf_file, px->conf_line,
				  px->name, kw, err);
			free(err);
			errors++;
			continue;
		}
		if (!px->dispatch) {
			srv->flags |= SRV_F_ORIG_DST;
			srv->pool_max_conn = 0;   /* no connection to share: each goes elsewhere */
		}
	}
	return errors;
}

static void dispatch_release(struct proxy *px)
{
	free(px->dispatch);
	px->dispatch = NULL;
}

static struct cfg_kw px_dispatch_kws[] = {
	{ "dispatch", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0, .parse = kw_dispatch,
	  .usage = "<address>:<port>" },
	{ "option transparent", CFG_SEC_BE, CFG_T_FLAG, CFG_PX_OFF(options),
	  .mask = PR_O_TRANSP },
	{ "transparent", CFG_SEC_BE, CFG_T_FLAG, CFG_PX_OFF(options), .mask = PR_O_TRANSP },
};

static struct proxy_ext px_dispatch_ext = { NULL, dispatch_release, NULL };

SLUICE_INIT(px_dispatch_register)
{
	cfg_register(px_dispatch_kws, ARRAY_SIZE(px_dispatch_kws));
	cfg_register_postparse(dispatch_postparse, 21);
	proxy_register_ext(&px_dispatch_ext);
}
