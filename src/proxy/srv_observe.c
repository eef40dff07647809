/* Server options "observe", "error-limit", "on-error" and the traffic
 * analysis behind them (srv_observe.h). */
#include <stdio.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/server.h>
#include <sluice/srv_observe.h>
#include <sluice/str.h>

static const struct {
	const char *desc;   /* "last one was: ..." */
	int         layer;  /* 4: seen by observe layer4 and layer7; 7: layer7 only */
	int         error;
} obs_events[] = {
	[SRV_OBS_L4_OK]        = { "L4 successful connection", 4, 0 },
	[SRV_OBS_L4_ERR]       = { "L4 unsuccessful connection", 4, 1 },
	[SRV_OBS_HTTP_OK]      = { "Correct http response", 7, 0 },
	[SRV_OBS_HTTP_STS]     = { "Wrong http response", 7, 1 },
	[SRV_OBS_HTTP_RSP]     = { "Invalid http response", 7, 1 },
	[SRV_OBS_HTTP_TIMEOUT] = { "Read timeout (http)", 7, 1 },
	[SRV_OBS_HTTP_CLOSED]  = { "Close from server (http)", 7, 1 },
};

void srv_observe(struct server *srv, enum srv_obs ev)
{
	struct check *c;
	char info[128];

	if (!srv || !srv->check.observe || obs_events[ev].layer > srv->check.observe)
		return;
	c = &srv->check;
	if (!obs_events[ev].error) {
		c->cons_errors = 0;
		return;
	}
	c->hana_failed++;
	if (++c->cons_errors < c->error_limit)
		return;
	snprintf(info, sizeof(info), "Detected %d consecutive errors, last one was: %s",
		 c->cons_errors, obs_events[ev].desc);
	c->cons_errors = 0;
	check_health_analyze(srv, info);
}

/* observe layer4|layer7 */
static int srv_observe_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			  char **err)
{
	if (argc < 2 || (strcmp(argv[1], "layer4") != 0 && strcmp(argv[1], "layer7") != 0)) {
		*err = str_fmt("expects 'layer4' or 'layer7'");
		return -1;
	}
	srv->check.observe = argv[1][5] == '4' ? 4 : 7;
	return 2;
}

/* on-error fastinter|fail-check|sudden-death|mark-down */
static int srv_on_error_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
			   char **err)
{
	static const char *const words[] = {
		[CHK_OE_FASTINTER] = "fastinter", [CHK_OE_FAIL_CHECK] = "fail-check",
		[CHK_OE_SUDDEN_DEATH] = "sudden-death", [CHK_OE_MARK_DOWN] = "mark-down",
	};

	for (size_t i = 0; argc > 1 && i < ARRAY_SIZE(words); i++)
		if (strcmp(argv[1], words[i]) == 0) {
			srv->check.on_error = (uint8_t)i;
			return 2;
		}
	*err = str_fmt("expects 'fastinter', 'fail-check', 'sudden-death' or 'mark-down'");
	return -1;
}

static struct srv_kw observe_kws[] = {
	{ "observe", .parse = srv_observe_kw },
	{ "on-error", .parse = srv_on_error_kw },
	{ "error-limit", .off = offsetof(struct server, check.error_limit), .min = 1,
	  .max = 1000000 },
};

SLUICE_INIT(srv_observe_register)
{
	srv_register_keywords(observe_kws, ARRAY_SIZE(observe_kws));
}
