/* The "stream" trace source (stream_trace.h): streams created and freed,
 * their errors, and their HTTP and TCP analysers. */
#include <stdio.h>

#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stream.h>
#include <sluice/stream_trace.h>

static const struct trace_event strm_events[] = {
	[STRM_EV_NEW]      = { "strm_new", "new stream", TRACE_L_USER },
	[STRM_EV_FREE]     = { "strm_free", "release stream", TRACE_L_USER },
	[STRM_EV_ERR]      = { "strm_err", "error during stream processing", TRACE_L_ERROR },
	[STRM_EV_HTTP_ANA] = { "http_ana", "HTTP analyzers", TRACE_L_PROTO },
	[STRM_EV_TCP_ANA]  = { "tcp_ana", "TCP analyzers", TRACE_L_PROTO },
};

struct trace_source trace_stream = {
	.name = "stream", .desc = "Applicative stream", .events = strm_events,
	.nevents = ARRAY_SIZE(strm_events),
};

void stream_trace(struct stream *s, int ev)
{
	switch (ev) {
	case STRM_EV_FREE:
	case STRM_EV_ERR:
		TRACE(&trace_stream, ev, TRACE_V_CLEAN, "strm=%llu fe=%s be=%s srv=%s term=%c%c",
		      (unsigned long long)s->uniq_id, s->fe->name, s->be ? s->be->name : "-",
		      s->ss.target ? s->ss.target->name : "-", strm_err_char(s->term_err),
		      strm_fin_char(s->term_fin));
		break;
	default:
		TRACE(&trace_stream, ev, TRACE_V_CLEAN, "strm=%llu fe=%s be=%s",
		      (unsigned long long)s->uniq_id, s->fe->name, s->be ? s->be->name : "-");
		break;
	}
}

SLUICE_INIT(stream_trace_register)
{
	trace_register(&trace_stream);
}
