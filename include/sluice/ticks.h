/* The process's clocks in one place: the loop's monotonic time in
 * milliseconds (tick_ms), its whole seconds for rate counters, conversions
 * to and from libev's double seconds, and the wall clock for user dates. */
#ifndef SLUICE_TICKS_H
#define SLUICE_TICKS_H

#include <stdint.h>
#include <time.h>

#include <ev.h>

#include <sluice/global.h>

/* A date or a duration on the monotonic clock, in milliseconds. */
typedef uint64_t tick_ms;

/* Now on the monotonic clock, from the loop's cached time (cheap); without
 * a loop (unit tests, fuzzing, start-up) from CLOCK_MONOTONIC. */
static inline tick_ms tick_now_ms(void)
{
	struct timespec ts;

	if (global.loop)
		return (tick_ms)(ev_now(global.loop) * 1000.0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (tick_ms)ts.tv_sec * 1000 + (tick_ms)ts.tv_nsec / 1000000;
}

/* The monotonic second the per-second rate counters (freq.h) count in. */
static inline uint32_t tick_sec(void)
{
	return (uint32_t)(tick_now_ms() / 1000);
}

/* The loop's cached date in libev seconds (what ev_timer and the stream's
 * t_* dates use). */
static inline ev_tstamp tick_ev_now(void)
{
	return ev_now(global.loop);
}

/* A duration of <ms> milliseconds as libev seconds (timer repeat/after). */
static inline ev_tstamp tick_to_ev(uint64_t ms)
{
	return ms / 1000.0;
}

/* The libev date <ms> milliseconds from now; 0 ms gives now. */
static inline ev_tstamp tick_ev_in(uint64_t ms)
{
	return tick_ev_now() + tick_to_ev(ms);
}

/* A libev duration (seconds, e.g. the difference of two dates) in whole
 * milliseconds, truncated as the log timers are. */
static inline long tick_ev_to_ms(ev_tstamp d)
{
	return (long)(d * 1000);
}

/* Wall-clock seconds since the epoch: only for dates shown to users
 * (last change, uptime, logs), never to measure a duration's expiry. */
static inline time_t tick_wall(void)
{
	return time(NULL);
}

#endif
