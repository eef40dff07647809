/* Traces ("trace <source> ...", "show trace"): a module declares a trace
 * source with its events; TRACE() at an event costs one test while the
 * source is stopped, and writes a line to the source's sink (stdout,
 * stderr or a ring) while it runs and the event is reported. */
#ifndef SLUICE_TRACE_H
#define SLUICE_TRACE_H

#include <stdint.h>

#include <sluice/common.h>

struct ring;

/* Levels of detail, as HAProxy names them: an event of a level above the
 * source's is not reported. */
enum trace_level { TRACE_L_ERROR, TRACE_L_USER, TRACE_L_PROTO, TRACE_L_STATE,
                   TRACE_L_DATA, TRACE_L_DEVELOPER, TRACE_L_NB };

/* How much each line says. */
enum trace_verbosity { TRACE_V_QUIET, TRACE_V_CLEAN, TRACE_V_MINIMAL, TRACE_V_SIMPLE,
                       TRACE_V_ADVANCED, TRACE_V_COMPLETE, TRACE_V_NB };

enum trace_state { TRACE_S_STOPPED, TRACE_S_WAITING, TRACE_S_RUNNING };

enum trace_sink { TRACE_SINK_NONE, TRACE_SINK_STDOUT, TRACE_SINK_STDERR, TRACE_SINK_RING };

struct trace_event {
	const char *name;
	const char *desc;
	int         level;     /* enum trace_level */
};

struct trace_source {
	const char               *name;
	const char               *desc;
	const struct trace_event *events;   /* at most 64 */
	int                       nevents;
	uint64_t                  report, start, stop, pause;   /* masks of events */
	int                       state;     /* enum trace_state: TRACE() tests it */
	int                       level, verbosity;
	int                       sink;      /* enum trace_sink */
	struct ring              *ring;      /* TRACE_SINK_RING */
	uint64_t                  dropped;
	struct trace_source      *next;
};

/* Writes event <ev> (an index in src->events) of <src>, the line made from
 * <fmt> with the given verbosity at least <vmin> (below it only the
 * event's name is written), and moves the source's state as its start,
 * stop and pause events say. Call through TRACE(). */
void trace_emit(struct trace_source *src, int ev, int vmin, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define TRACE(src, ev, vmin, ...) do { \
		if (unlikely((src)->state != TRACE_S_STOPPED)) \
			trace_emit((src), (ev), (vmin), __VA_ARGS__); \
	} while (0)

/* Registers <src> (kept): "trace" lists it. Its defaults: every event
 * reported, level user, verbosity clean, no sink, stopped. */
void trace_register(struct trace_source *src);

/* The registered sources, in registration order. */
struct trace_source *trace_first(void);

/* The names of levels and verbosities, for the runtime API. */
extern const char *const trace_level_names[TRACE_L_NB];
extern const char *const trace_verbosity_names[TRACE_V_NB];

#endif
