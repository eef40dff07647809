/* The runtime API of traces (trace.h): "trace" (list the sources, set what
 * one reports, where, how much, when it starts, pauses and stops),
 * "trace 0", and "show trace [<source>]", worded as HAProxy 2.6 does. */
#include <stdlib.h>
#include <string.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/ring.h>
#include <sluice/str.h>
#include <sluice/trace.h>

static const char state_char[] = { '.', 'w', 'R' };

static struct trace_source *trace_find(const char *name)
{
	for (struct trace_source *s = trace_first(); s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static const char *sink_name(const struct trace_source *s)
{
	return s->sink == TRACE_SINK_STDOUT ? "stdout" : s->sink == TRACE_SINK_STDERR ? "stderr" :
	       s->sink == TRACE_SINK_RING && s->ring ? s->ring->name : "none";
}

static int word_index(const char *const *names, int n, const char *w)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], w) == 0)
			return i;
	return -1;
}

/* Applies "[+|-|!]<event>" (or none/any) to <mask>. Returns 0, or -1. */
static int trace_mask(const struct trace_source *s, uint64_t *mask, const char *w)
{
	uint64_t all = s->nevents >= 64 ? ~0ULL : (1ULL << s->nevents) - 1;
	int neg = *w == '-' || *w == '!';

	if (*w == '+' || neg)
		w++;
	if (strcmp(w, "none") == 0) {
		*mask = neg ? all : 0;
		return 0;
	}
	if (strcmp(w, "any") == 0) {
		*mask = neg ? 0 : all;
		return 0;
	}
	for (int i = 0; i < s->nevents; i++)
		if (strcmp(s->events[i].name, w) == 0) {
			*mask = neg ? *mask & ~(1ULL << i) : *mask | (1ULL << i);
			return 0;
		}
	return -1;
}

static void trace_list_sources(struct cli_ctx *ctx)
{
	dstr_printf(&ctx->out, "Supported trace sources and states (.=stopped, w=waiting, "
		    "R=running) :\n [.] 0          : not a source, will immediately stop all "
		    "traces\n");
	for (const struct trace_source *s = trace_first(); s; s = s->next)
		dstr_printf(&ctx->out, " [%c] %-10s : %s\n", state_char[s->state], s->name, s->desc);
}

static void trace_list_events(struct cli_ctx *ctx, const struct trace_source *s, uint64_t mask,
                              const char *what)
{
	dstr_printf(&ctx->out, "Supported events for source %s (+=enabled, -=disabled):\n"
		    "  - none         : disable all event types\n"
		    "  - any          : enable all event types\n", s->name);
	(void)what;
	for (int i = 0; i < s->nevents; i++)
		dstr_printf(&ctx->out, "  %c %-12s : %s\n", (mask >> i) & 1 ? '+' : '-',
			    s->events[i].name, s->events[i].desc);
}

/* trace <source> event|start|stop|pause|level|verbosity|sink|lock [...] */
static int trace_source_cmd(struct cli_ctx *ctx, struct trace_source *s, int argc, char **argv)
{
	const char *what = argc > 0 ? argv[0] : "";
	uint64_t *mask = NULL;

	if (!strcmp(what, "event"))
		mask = &s->report;
	else if (!strcmp(what, "start"))
		mask = &s->start;
	else if (!strcmp(what, "stop"))
		mask = &s->stop;
	else if (!strcmp(what, "pause"))
		mask = &s->pause;
	if (mask) {
		if (argc < 2) {
			trace_list_events(ctx, s, *mask, what);
			return 0;
		}
		if (mask != &s->report && !strcmp(argv[1], "now")) {
			s->state = mask == &s->start ? TRACE_S_RUNNING :
				   mask == &s->stop ? TRACE_S_STOPPED : TRACE_S_WAITING;
			return 0;
		}
		{
			uint64_t m = *mask;

			for (int i = 1; i < argc; i++)
				if (trace_mask(s, &m, argv[i]) == -1) {
					dstr_printf(&ctx->out, "No such trace event '%s'\n", argv[i]);
					return -1;
				}
			*mask = m;
		}
		/* an armed start event makes a stopped source wait for it */
		if (mask == &s->start && s->start && s->state == TRACE_S_STOPPED)
			s->state = TRACE_S_WAITING;
		return 0;
	}
	if (!strcmp(what, "level") || !strcmp(what, "verbosity")) {
		int lvl = what[0] == 'l', n = lvl ? TRACE_L_NB : TRACE_V_NB, v;
		const char *const *names = lvl ? trace_level_names : trace_verbosity_names;
		int *cur = lvl ? &s->level : &s->verbosity;

		if (argc < 2) {
			dstr_printf(&ctx->out, "Supported trace %s for source %s:\n",
				    lvl ? "levels" : "verbosities", s->name);
			for (int i = 0; i < n; i++)
				dstr_printf(&ctx->out, "  %c %-10s\n", i == *cur ? '*' : ' ', names[i]);
			return 0;
		}
		if ((v = word_index(names, n, argv[1])) < 0) {
			dstr_printf(&ctx->out, "No such trace %s '%s'\n", lvl ? "level" : "verbosity",
				    argv[1]);
			return -1;
		}
		*cur = v;
		return 0;
	}
	if (!strcmp(what, "sink")) {
		struct ring *r;

		if (argc < 2) {
			dstr_printf(&ctx->out, "Supported sinks for source %s (*=current):\n"
				    "  %c none       : no sink\n  %c stdout     : standard output (fd#1)\n"
				    "  %c stderr     : standard output (fd#2)\n", s->name,
				    s->sink == TRACE_SINK_NONE ? '*' : ' ',
				    s->sink == TRACE_SINK_STDOUT ? '*' : ' ',
				    s->sink == TRACE_SINK_STDERR ? '*' : ' ');
			for (r = ring_first(); r; r = r->next)
				dstr_printf(&ctx->out, "  %c %-10s : %s\n",
					    s->sink == TRACE_SINK_RING && s->ring == r ? '*' : ' ',
					    r->name, r->desc);
			return 0;
		}
		if (!strcmp(argv[1], "none") || !strcmp(argv[1], "stdout") ||
		    !strcmp(argv[1], "stderr")) {
			s->sink = argv[1][0] == 'n' ? TRACE_SINK_NONE : argv[1][3] == 'o' ?
				  TRACE_SINK_STDOUT : TRACE_SINK_STDERR;
			s->ring = NULL;
			return 0;
		}
		if (!(r = ring_find(argv[1]))) {
			dstr_printf(&ctx->out, "No such sink\n");
			return -1;
		}
		s->sink = TRACE_SINK_RING;
		s->ring = r;
		return 0;
	}
	if (!strcmp(what, "lock")) {
		if (argc < 2) {
			dstr_printf(&ctx->out, "Supported lock-on criteria for source %s:\n"
				    "  * nothing    : do not lock on anything\n", s->name);
			return 0;
		}
		if (strcmp(argv[1], "nothing") != 0) {
			dstr_printf(&ctx->out, "Lock-on criterion '%s' is not supported by sluice: "
				    "its traces do not lock on an object ('nothing' only).\n", argv[1]);
			return -1;
		}
		return 0;
	}
	dstr_printf(&ctx->out, "Unknown trace keyword\n");
	return -1;
}

static int cli_trace(struct cli_ctx *ctx, int argc, char **argv)
{
	struct trace_source *s;

	if (argc < 2) {
		trace_list_sources(ctx);
		return 0;
	}
	if (!strcmp(argv[1], "0")) {
		for (s = trace_first(); s; s = s->next)
			s->state = TRACE_S_STOPPED;
		dstr_printf(&ctx->out, "All traces now stopped\n");
		return 0;
	}
	if (!(s = trace_find(argv[1]))) {
		dstr_printf(&ctx->out, "No such trace source\n");
		return -1;
	}
	if (argc < 3) {
		dstr_printf(&ctx->out, "Supported commands:\n  event     : list/enable/disable "
			    "source-specific event reporting\n  level     : list/set trace reporting "
			    "level\n  lock      : automatic lock on thread/connection/stream/...\n"
			    "  pause     : pause and automatically restart after a specific event\n"
			    "  sink      : list/set event sinks\n  start     : start immediately or "
			    "after a specific event\n  stop      : stop immediately or after a "
			    "specific event\n  verbosity : list/set trace output verbosity\n");
		return 0;
	}
	return trace_source_cmd(ctx, s, argc - 2, argv + 2);
}

static int cli_show_trace(struct cli_ctx *ctx, int argc, char **argv)
{
	struct trace_source *s;

	if (argc < 3) {
		dstr_printf(&ctx->out, "Supported trace sources and states (.=stopped, w=waiting, "
			    "R=running) :\n");
		for (s = trace_first(); s; s = s->next)
			dstr_printf(&ctx->out, " [%c] %-10s -> %s [drp %llu]  [%s]\n",
				    state_char[s->state], s->name, sink_name(s),
				    (unsigned long long)s->dropped, s->desc);
		return 0;
	}
	if (!(s = trace_find(argv[2]))) {
		dstr_printf(&ctx->out, "No such trace source\n");
		return -1;
	}
	dstr_printf(&ctx->out, "Trace status for %s:\n  - sink: %s [%llu dropped]\n"
		    "  - level: %s\n  - verbosity: %s\n"
		    "  - event name   :     report    start    stop    pause\n", s->name,
		    sink_name(s), (unsigned long long)s->dropped, trace_level_names[s->level],
		    trace_verbosity_names[s->verbosity]);
	for (int i = 0; i < s->nevents; i++)
		dstr_printf(&ctx->out, "    %-12s :        %c        %c        %c       %c\n",
			    s->events[i].name, (s->report >> i) & 1 ? '+' : '-',
			    (s->start >> i) & 1 ? '+' : '-', (s->stop >> i) & 1 ? '+' : '-',
			    (s->pause >> i) & 1 ? '+' : '-');
	return 0;
}

static struct cli_kw trace_cli_kws[] = {
	{ { "trace", NULL }, "trace [<source> [event|level|lock|pause|sink|start|stop|verbosity "
	  "[<args>]] | 0]", "list the trace sources, or set what one traces, where and when",
	  CLI_LVL_ADMIN, cli_trace },
	{ { "show", "trace", NULL }, "show trace [<source>]", "the trace sources' states, or "
	  "one's settings", CLI_LVL_USER, cli_show_trace },
};

SLUICE_INIT(trace_cli_register)
{
	cli_register(trace_cli_kws, ARRAY_SIZE(trace_cli_kws));
}
