/* Per-proxy TCP socket options (px_tcp.h): the keep-alive probes of each
 * side (clitcpka-cnt/idle/intvl, srvtcpka-cnt/idle/intvl), option nolinger
 * and option tcp-smart-connect, turned at post-parse into one
 * conn_tcp_opts per side that the accept and connect paths hand to
 * conn_setup_tcp(). */
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/px_tcp.h>
#include <sluice/str.h>
#include <sluice/units.h>

struct px_tcp {
	int                  ka[2][3];   /* [client, server][cnt, idle s, intvl s], 0: unset */
	struct conn_tcp_opts opts[2];    /* made at post-parse */
	int                  set[2];     /* opts[side] asks for something */
};

static struct px_tcp *px_tcp_w(struct proxy *px)
{
	if (!px->tcp)
		px->tcp = xcalloc(1, sizeof(*px->tcp));
	return px->tcp;
}

const struct conn_tcp_opts *px_tcp_opts(const struct proxy *px, int server)
{
	return px->tcp && px->tcp->set[server] ? &px->tcp->opts[server] : NULL;
}

/* clitcpka-cnt <n> | clitcpka-idle <time> | clitcpka-intvl <time> and the
 * srvtcpka- ones: the row's .arg is side * 3 + index; times are in seconds
 * by default, as in HAProxy, and the kernel takes whole seconds. */
static int kw_tcpka(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int side = (int)ctx->kw_row->arg / 3, idx = (int)ctx->kw_row->arg % 3;
	const char *err = NULL;
	uint32_t ms;
	long v;

	if (argc != 1) {
		cfg_alert(ctx, "expects %s", ctx->kw_row->usage);
		return -1;
	}
	if (idx == 0) {
		if (parse_int(argv[0], 1, 0x7fffffff, &v, &err) == -1) {
			cfg_alert(ctx, "expects a number of probes: %s (got '%s')", err, argv[0]);
			return -1;
		}
	} else {
		if (parse_time_ms(argv[0], 1000, &ms, &err) == -1 || ms < 1000 ||
		    ms / 1000 > 32767) {
			cfg_alert(ctx, "expects a time from 1s to 32767s (TCP counts whole "
				  "seconds), got '%s'%s%s", argv[0], err ? ": " : "", err ? err : "");
			return -1;
		}
		v = ms / 1000;
	}
	px_tcp_w(ctx->px)->ka[side][idx] = (int)v;
	return 0;
}

/* Makes each proxy's per-side options from its flags and settings. */
static int px_tcp_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next) {
		uint64_t o = px->options;

		for (int side = 0; side < 2; side++) {
			struct px_tcp *t;
			struct conn_tcp_opts *c;
			int ka = (o & PR_O_TCP_KA) || (o & (side ? PR_O_SRV_KA : PR_O_CLI_KA));

			if (!ka && !(o & PR_O_NOLINGER) && !(side && (o & PR_O_SMART_CON)))
				continue;
			t = px_tcp_w(px);
			c = &t->opts[side];
			c->keepalive = (uint8_t)ka;
			c->nolinger = !!(o & PR_O_NOLINGER);
			c->quickack_off = side && (o & PR_O_SMART_CON);
			c->ka_cnt = t->ka[side][0];
			c->ka_idle = t->ka[side][1];
			c->ka_intvl = t->ka[side][2];
			t->set[side] = 1;
		}
	}
	return 0;
}

static void px_tcp_inherit(struct proxy *px, const struct proxy *def)
{
	if (def->tcp)
		memcpy(px_tcp_w(px)->ka, def->tcp->ka, sizeof(def->tcp->ka));
}

static void px_tcp_release(struct proxy *px)
{
	free(px->tcp);
	px->tcp = NULL;
}

#define TCPKA(kw, secs, a, use) \
	{ kw, secs, CFG_T_FUNC, 0, .parse = kw_tcpka, .arg = a, .usage = use }

static struct cfg_kw px_tcp_kws[] = {
	TCPKA("clitcpka-cnt", CFG_SEC_FE, 0, "a number of probes"),
	TCPKA("clitcpka-idle", CFG_SEC_FE, 1, "a time (seconds by default)"),
	TCPKA("clitcpka-intvl", CFG_SEC_FE, 2, "a time (seconds by default)"),
	TCPKA("srvtcpka-cnt", CFG_SEC_BE, 3, "a number of probes"),
	TCPKA("srvtcpka-idle", CFG_SEC_BE, 4, "a time (seconds by default)"),
	TCPKA("srvtcpka-intvl", CFG_SEC_BE, 5, "a time (seconds by default)"),
	{ "option nolinger", CFG_SEC_PROXIES, CFG_T_FLAG, CFG_PX_OFF(options),
	  .mask = PR_O_NOLINGER },
	{ "option tcp-smart-connect", CFG_SEC_BE, CFG_T_FLAG, CFG_PX_OFF(options),
	  .mask = PR_O_SMART_CON },
};

static struct proxy_ext px_tcp_ext = { px_tcp_inherit, px_tcp_release, NULL };

SLUICE_INIT(px_tcp_register)
{
	cfg_register(px_tcp_kws, ARRAY_SIZE(px_tcp_kws));
	cfg_register_postparse(px_tcp_postparse, 30);
	proxy_register_ext(&px_tcp_ext);
}
