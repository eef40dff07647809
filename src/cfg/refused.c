/* Sections of HAProxy's language that no sluice module runs yet: each is a
 * row carrying the reason, so that a configuration naming one gets one error
 * for the section and none for its lines (cfg.h, struct cfg_section). A
 * module that comes to run one of them removes its row here. Also the
 * keywords HAProxy itself removed and 2.6 refuses: one row each, the error
 * naming what replaces it. */
#include <sluice/cfg.h>
#include <sluice/common.h>

static struct cfg_section refused_sections[] = {
	{ "ring", .refused = "ring buffers (log targets 'ring@', 'show events') are not "
	  "built yet" },
	{ "log-forward", .refused = "sluice does not receive and forward syslog messages" },
	{ "crt-store", .refused = "a section of HAProxy 3.0, not of the 2.6 language "
	  "sluice reads (use 'crt' on bind lines)" },
	{ "traces", .refused = "a section of HAProxy 3.1, not of the 2.6 language sluice "
	  "reads" },
	{ "dynamic-update", .refused = "a section of HAProxy Enterprise, not of HAProxy "
	  "2.6's language" },
};

/* A keyword HAProxy removed: refused as 2.6 refuses it, with its row's hint
 * (since which version, what to use). */
static int kw_removed(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	cfg_alert(ctx, "removed from HAProxy (2.6 refuses it too): %s", ctx->kw_row->hint);
	return -1;
}

#define REMOVED(kw, secs, why) { kw, secs, CFG_T_FUNC, 0, .parse = kw_removed, \
	.flags = CFG_KW_F_NO | CFG_KW_F_REFUSED, .hint = (why) }
#define REQ_RSP(kw, instead) REMOVED(kw, CFG_SEC_PROXIES, "gone since 2.1, use " instead " instead")

static struct cfg_kw removed_kws[] = {
	REQ_RSP("reqadd", "'http-request add-header'"),
	REQ_RSP("reqrep", "'http-request replace-path', 'replace-uri' or 'replace-header'"),
	REQ_RSP("reqirep", "'http-request replace-header'"),
	REQ_RSP("reqdel", "'http-request del-header'"),
	REQ_RSP("reqidel", "'http-request del-header'"),
	REQ_RSP("reqdeny", "'http-request deny'"),
	REQ_RSP("reqideny", "'http-request deny'"),
	REQ_RSP("reqallow", "'http-request allow'"),
	REQ_RSP("reqiallow", "'http-request allow'"),
	REQ_RSP("reqtarpit", "'http-request tarpit'"),
	REQ_RSP("reqitarpit", "'http-request tarpit'"),
	REQ_RSP("reqpass", "'http-request' rules"),
	REQ_RSP("reqipass", "'http-request' rules"),
	REQ_RSP("rspadd", "'http-response add-header'"),
	REQ_RSP("rsprep", "'http-response replace-header'"),
	REQ_RSP("rspirep", "'http-response replace-header'"),
	REQ_RSP("rspdel", "'http-response del-header'"),
	REQ_RSP("rspidel", "'http-response del-header'"),
	REQ_RSP("rspdeny", "'http-response deny'"),
	REQ_RSP("rspideny", "'http-response deny'"),
	REQ_RSP("block", "'http-request deny' (same condition)"),
	REQ_RSP("redispatch", "'option redispatch'"),
	REQ_RSP("clitimeout", "'timeout client'"),
	REQ_RSP("srvtimeout", "'timeout server'"),
	REQ_RSP("contimeout", "'timeout connect'"),
	REMOVED("monitor-net", CFG_SEC_PROXIES, "gone since 2.1, use 'http-request return status 200 if "
		"{ src <net> }' (or 'monitor-uri')"),
	REMOVED("appsession", CFG_SEC_PROXIES, "gone since 1.6, use 'cookie' persistence or stick tables"),
	REMOVED("option forceclose", CFG_SEC_PROXIES, "gone since 2.0, remove it, or use 'option "
		"httpclose' if really needed"),
	REMOVED("option http-tunnel", CFG_SEC_PROXIES, "gone since 2.1, remove it, it is not needed"),
	REMOVED("option http_proxy", CFG_SEC_PROXIES, "gone since 2.5, use 'http-request set-dst' and "
		"'http-request set-uri'"),
	REMOVED("tune.chksize", CFG_SEC_GLOBAL, "health checks use buffers of 'tune.bufsize'"),
};

SLUICE_INIT(refused_sections_register)
{
	cfg_register_sections(refused_sections, ARRAY_SIZE(refused_sections));
	cfg_register(removed_kws, ARRAY_SIZE(removed_kws));
}
