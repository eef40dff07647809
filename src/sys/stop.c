/* Soft stop (stop.h): after "grace", listeners close and streams in flight
 * finish; idle keep-alive clients are not cut under their next request but
 * close at their own timeouts or, with close-spread-time, in turn over that
 * window; hard-stop-after bounds it all. Owns those three global keywords. */
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h2.h>
#include <sluice/log.h>
#include <sluice/peers.h>
#include <sluice/proxy.h>
#include <sluice/srv_idle.h>
#include <sluice/stop.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>
#include <sluice/units.h>

static struct {
	ev_timer    grace_timer;   /* end of "grace": the drain starts */
	ev_timer    hard_timer;    /* hard-stop-after: everything left is cut */
	ev_tstamp   started;       /* when the soft stop was asked for */
	char       *spread_file;   /* where close-spread-time was set, for the warning */
	int         spread_line;
} stop;

static void stop_exit(void);

/* The peers' hand-over ended: the process may leave once its streams did. */
static void stop_peers_done(void)
{
	if (!stream_count())
		stop_exit();
}

/* Nothing left to serve: the loop ends once the peers handed the tables
 * over to the new process. */
static void stop_exit(void)
{
	if (peers_busy(stop_peers_done))
		return;
	ev_break(global.loop, EVBREAK_ALL);
}

/* hard-stop-after expired: what is left is closed, the loop ends. */
static void stop_hard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop; (void)w; (void)revents;
	log_warning("hard-stop-after: closing the %d connection(s) left and exiting",
		    stream_count());
	stream_set_idle_cb(NULL);
	stream_kill_all();
	srv_idle_close_all();   /* the killed streams may have given some back */
	ev_break(global.loop, EVBREAK_ALL);
}

/* The window idle connections close over: close-spread-time, never beyond
 * the end of hard-stop-after (counted from the stop), in seconds. */
static ev_tstamp stop_spread_len(ev_tstamp now)
{
	ev_tstamp len = tick_to_ev(global.close_spread);

	if (global.hard_stop_after) {
		ev_tstamp left = stop.started + tick_to_ev(global.hard_stop_after) - now;

		if (left < len)
			len = left > 0 ? left : 0;
	}
	return len;
}

/* Listeners close; in-flight streams finish; idle server connections
 * (ours) go at once; idle clients close at their timeouts or their turn. */
static void stop_drain(void)
{
	ev_tstamp now = tick_ev_now();

	log_notice("soft stop: listeners closed, waiting for %d connection(s) to finish",
		   stream_count());
	proxy_stop_all();
	srv_idle_close_all();
	h2_stop_all();   /* HTTP/2 clients get their GOAWAY */
	if (global.close_spread)
		stream_stop_spread(now, stop_spread_len(now));
	if (!stream_count())
		stop_exit();
	else
		stream_set_idle_cb(stop_exit);
}

static void stop_grace_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop; (void)w; (void)revents;
	stop_drain();
}

void stop_soft(void)
{
	if (global.flags & GLB_F_STOPPING)
		return;
	/* From here on every HTTP response says "Connection: close" and no
	 * server connection is kept, grace or not. */
	global.flags |= GLB_F_STOPPING;
	stop.started = tick_ev_now();
	/* the new process learns the tables now, the updates following */
	peers_stop();
	if (global.hard_stop_after) {
		ev_timer_init(&stop.hard_timer, stop_hard_cb, tick_to_ev(global.hard_stop_after), 0.);
		ev_timer_start(global.loop, &stop.hard_timer);
	}
	if (global.grace) {
		log_notice("soft stop: still accepting for the grace delay of %u ms",
			   (unsigned)global.grace);
		ev_timer_init(&stop.grace_timer, stop_grace_cb, tick_to_ev(global.grace), 0.);
		ev_timer_start(global.loop, &stop.grace_timer);
		return;
	}
	stop_drain();
}

/* ---- configuration ---- */

/* close-spread-time <time>: where it was set is kept for the post-parse
 * check against hard-stop-after. */
static int kw_close_spread(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *err = NULL;
	uint32_t ms;

	if (argc != 1) {
		cfg_alert(ctx, "expects <time>%s", argc ? " and nothing else" : "");
		return -1;
	}
	if (parse_time_ms(argv[0], 1, &ms, &err) == -1) {
		cfg_alert(ctx, "expects <time>: %s (got '%s')", err, argv[0]);
		return -1;
	}
	*(uint32_t *)target = ms;
	free(stop.spread_file);
	stop.spread_file = xstrdup(ctx->file);
	stop.spread_line = ctx->line;
	return 0;
}

static int stop_postparse(void)
{
	if (global.close_spread && global.hard_stop_after &&
	    global.close_spread > global.hard_stop_after) {
		struct cfg_ctx ctx = {
			.file = stop.spread_file ? stop.spread_file : "?",
			.line = stop.spread_line, .section = CFG_SEC_GLOBAL,
			.secname = "global", .kw = "close-spread-time",
		};

		cfg_warn(&ctx, "%u ms is longer than hard-stop-after (%u ms): idle connections "
			 "will close within hard-stop-after", (unsigned)global.close_spread,
			 (unsigned)global.hard_stop_after);
	}
	free(stop.spread_file);
	stop.spread_file = NULL;
	return 0;
}

static struct cfg_kw stop_kws[] = {
	{ "hard-stop-after", CFG_SEC_GLOBAL, CFG_T_TIME, offsetof(struct global, hard_stop_after),
	  .usage = "<time>" },
	{ "grace", CFG_SEC_GLOBAL, CFG_T_TIME, offsetof(struct global, grace), .usage = "<time>" },
	{ "close-spread-time", CFG_SEC_GLOBAL, CFG_T_FUNC, offsetof(struct global, close_spread),
	  .parse = kw_close_spread, .usage = "<time>" },
};

SLUICE_INIT(stop_register)
{
	cfg_register(stop_kws, ARRAY_SIZE(stop_kws));
	cfg_register_postparse(stop_postparse, 20);
}
