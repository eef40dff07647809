/* The "stream" trace source (proxy/stream_trace.c): a stream's life and
 * its analysers, for "trace stream ...". */
#ifndef SLUICE_STREAM_TRACE_H
#define SLUICE_STREAM_TRACE_H

#include <sluice/trace.h>

struct stream;

enum { STRM_EV_NEW, STRM_EV_FREE, STRM_EV_ERR, STRM_EV_HTTP_ANA, STRM_EV_TCP_ANA };

extern struct trace_source trace_stream;

/* Writes event <ev> of the stream source for <s> (its id, frontend,
 * backend, server, state, and for STRM_EV_ERR/FREE its termination).
 * Call through STREAM_TRACE(). */
void stream_trace(struct stream *s, int ev);

#define STREAM_TRACE(s, ev) do { \
		if (unlikely(trace_stream.state != TRACE_S_STOPPED)) \
			stream_trace((s), (ev)); \
	} while (0)

#endif
