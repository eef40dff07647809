/* The "h1" trace source (h1_trace.h): the HTTP/1 heads sluice reads, from
 * clients and from servers, and those it refuses. */
#include <stdio.h>

#include <sluice/h1.h>
#include <sluice/h1_trace.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stream.h>
#include <sluice/stream_trace.h>

static const struct trace_event h1_events[] = {
	[H1_EV_RX_HEADERS] = { "rx_headers", "receipt of H1 headers", TRACE_L_USER },
	[H1_EV_RX_ERR]     = { "h1s_err", "error on H1 stream (an invalid head)", TRACE_L_ERROR },
};

struct trace_source trace_h1 = {
	.name = "h1", .desc = "HTTP/1 multiplexer", .events = h1_events,
	.nevents = ARRAY_SIZE(h1_events),
};

void h1_trace_rx(struct stream *s, const char *base, const struct h1_msg *m, int n, int req)
{
	if (n < 0) {
		TRACE(&trace_h1, H1_EV_RX_ERR, TRACE_V_CLEAN, "strm=%llu fe=%s invalid %s head (%d)",
		      (unsigned long long)s->uniq_id, s->fe->name, req ? "request" : "response",
		      m->err_status);
		return;
	}
	if (req)
		TRACE(&trace_h1, H1_EV_RX_HEADERS, TRACE_V_CLEAN, "strm=%llu fe=%s request %.*s %.*s "
		      "(%d bytes)", (unsigned long long)s->uniq_id, s->fe->name, (int)m->meth.len,
		      base + m->meth.off, (int)m->uri.len, base + m->uri.off, n);
	else
		TRACE(&trace_h1, H1_EV_RX_HEADERS, TRACE_V_CLEAN, "strm=%llu be=%s srv=%s response "
		      "%d (%d bytes)", (unsigned long long)s->uniq_id, s->be->name,
		      s->ss.target ? s->ss.target->name : "-", m->status, n);
	if (req)
		STREAM_TRACE(s, STRM_EV_HTTP_ANA);
}

SLUICE_INIT(h1_trace_register)
{
	trace_register(&trace_h1);
}
