/* The "h1" trace source (http/h1_trace.c): HTTP/1 messages read, for
 * "trace h1 ...". */
#ifndef SLUICE_H1_TRACE_H
#define SLUICE_H1_TRACE_H

#include <sluice/stream_trace.h>
#include <sluice/trace.h>

struct stream;
struct h1_msg;

enum { H1_EV_RX_HEADERS, H1_EV_RX_ERR };

extern struct trace_source trace_h1;

/* A head of <n> bytes (<n> < 0: invalid) was parsed from <base> into <m>
 * for stream <s>, the request's when <req>: h1's rx_headers (or h1s_err)
 * and the stream source's http_ana. Call through H1_TRACE_RX(). */
void h1_trace_rx(struct stream *s, const char *base, const struct h1_msg *m, int n, int req);

#define H1_TRACE_RX(s, base, m, n, req) do { \
		if (unlikely((trace_h1.state | trace_stream.state) != TRACE_S_STOPPED)) \
			h1_trace_rx((s), (base), (m), (n), (req)); \
	} while (0)

#endif
