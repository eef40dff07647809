/* Traces (trace.h): the sources registered by the modules, the state each
 * one is in, and the writing of their lines to a sink. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/ring.h>
#include <sluice/trace.h>

const char *const trace_level_names[TRACE_L_NB] = {
	"error", "user", "proto", "state", "data", "developer"
};

const char *const trace_verbosity_names[TRACE_V_NB] = {
	"quiet", "clean", "minimal", "simple", "advanced", "complete"
};

static struct {
	struct trace_source *head, **tail;
} traces = { NULL, &traces.head };

void trace_register(struct trace_source *src)
{
	src->report = src->nevents >= 64 ? ~0ULL : (1ULL << src->nevents) - 1;
	src->level = TRACE_L_USER;
	src->verbosity = TRACE_V_CLEAN;
	src->next = NULL;
	*traces.tail = src;
	traces.tail = &src->next;
}

struct trace_source *trace_first(void)
{
	return traces.head;
}

static void trace_write(struct trace_source *src, const char *line, size_t len)
{
	if (src->sink == TRACE_SINK_RING && src->ring) {
		ring_write(src->ring, line, len);
	} else if (src->sink == TRACE_SINK_STDOUT || src->sink == TRACE_SINK_STDERR) {
		char nl = '\n';
		int fd = src->sink == TRACE_SINK_STDOUT ? 1 : 2;

		if (write(fd, line, len) != (ssize_t)len || write(fd, &nl, 1) != 1)
			src->dropped++;
	}
}

void trace_emit(struct trace_source *src, int ev, int vmin, const char *fmt, ...)
{
	uint64_t bit = 1ULL << ev;
	char line[1024];
	struct timespec ts;
	struct tm tm;
	int n;

	if (src->state == TRACE_S_WAITING) {
		if (!(src->start & bit))
			return;
		src->state = TRACE_S_RUNNING;
	}
	if ((src->report & bit) && src->events[ev].level <= src->level &&
	    src->sink != TRACE_SINK_NONE) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		n = (int)strftime(line, sizeof(line), "%H:%M:%S", &tm);
		n += snprintf(line + n, sizeof(line) - (size_t)n, ".%06ld [%s] %s",
			      ts.tv_nsec / 1000, src->name, src->events[ev].name);
		if (src->verbosity >= vmin && src->verbosity > TRACE_V_QUIET && *fmt &&
		    n < (int)sizeof(line) - 3) {
			va_list ap;

			line[n++] = ':';
			line[n++] = ' ';
			va_start(ap, fmt);
			n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
			va_end(ap);
		}
		if (n >= (int)sizeof(line))
			n = (int)sizeof(line) - 1;
		trace_write(src, line, (size_t)n);
	}
	if (src->stop & bit)
		src->state = TRACE_S_STOPPED;
	else if (src->pause & bit)
		src->state = TRACE_S_WAITING;
}
