/* Soft stop (stop.h): listeners close, streams in flight finish, then the
 * loop ends. */
#include <ev.h>

#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/srv_idle.h>
#include <sluice/stop.h>
#include <sluice/stream.h>

static void on_idle_after_stop(void)
{
	ev_break(global.loop, EVBREAK_ALL);
}

void stop_soft(void)
{
	if (global.flags & GLB_F_STOPPING)
		return;
	global.flags |= GLB_F_STOPPING;
	log_notice("soft stop: listeners closed, waiting for %d connection(s) to finish",
		   stream_count());
	proxy_stop_all();
	stream_close_idle();      /* idle keep-alive clients go now */
	srv_idle_close_all();
	if (!stream_count())
		ev_break(global.loop, EVBREAK_ALL);
	else
		stream_set_idle_cb(on_idle_after_stop);
}
