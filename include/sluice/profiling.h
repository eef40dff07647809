/* Per-stream CPU and latency profiling (proxy/profiling.c): while
 * "profiling.tasks on" (or "set profiling tasks on") holds, global.prof_tasks
 * is set and the stream's callbacks are timed; otherwise they cost one test. */
#ifndef SLUICE_PROFILING_H
#define SLUICE_PROFILING_H

#include <stdint.h>

/* What a stream's callbacks cost since its current request (or connection,
 * in mode tcp) began: the cpu_* and lat_ns_* fetches read it. */
struct stream_prof {
	uint32_t calls;
	uint64_t cpu_ns;   /* time spent in the calls */
	uint64_t lat_ns;   /* time between the loop waking up and each call */
};

/* The kinds of callbacks timed, a row each in "show profiling tasks". */
enum { PROF_FN_STREAM_IO, PROF_FN_STREAM_TIMER, PROF_FN_NB };

/* Around one call of a callback of kind <fn> for the stream owning <sp>:
 * prof_begin() counts the call and its latency and returns the start time
 * for prof_end(), which adds the time spent (to <sp> unless prof_forget()
 * said, meanwhile, that it was freed). */
uint64_t prof_begin(struct stream_prof *sp, int fn);
void prof_end(int fn, uint64_t t0);
void prof_forget(struct stream_prof *sp);

#endif
