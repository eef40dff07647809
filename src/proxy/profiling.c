/* Per-stream CPU and latency profiling ("profiling.tasks", "set profiling",
 * "show profiling", the cpu_* and lat_ns_* fetches). While it is on, each
 * call of a stream's callbacks is timed: its CPU time (monotonic clock
 * around the call: one thread) and its latency (since the loop woke up
 * after polling, recorded by an ev_check watcher that runs only then). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ev.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/profiling.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>

/* What "show profiling tasks" lists: one row per kind of callback timed. */
struct prof_fn {
	const char *name;
	uint64_t    calls, cpu_ns, lat_ns;
};

static struct {
	int                 mode;      /* PROF_OFF, PROF_ON, PROF_AUTO */
	ev_check            chk;       /* records when the loop woke up */
	uint64_t            wake_ns;
	struct stream_prof *cur;       /* the stream being timed, NULL once it is freed */
	struct prof_fn      fns[PROF_FN_NB];
} prof = {
	.fns = { [PROF_FN_STREAM_IO] = { "stream_io_cb" }, [PROF_FN_STREAM_TIMER] = { "stream_timer_cb" } },
};

enum { PROF_OFF, PROF_ON, PROF_AUTO };

static uint64_t prof_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void prof_check_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	prof.wake_ns = prof_now_ns();
}

uint64_t prof_begin(struct stream_prof *sp, int fn)
{
	uint64_t t0 = prof_now_ns(), lat = prof.wake_ns && t0 > prof.wake_ns ? t0 - prof.wake_ns : 0;

	if (unlikely(!ev_is_active(&prof.chk))) {
		/* the first call since profiling was turned on at start-up */
		ev_check_start(global.loop, &prof.chk);
		ev_unref(global.loop);   /* never keeps a stopping loop alive */
	}
	sp->calls++;
	sp->lat_ns += lat;
	prof.fns[fn].calls++;
	prof.fns[fn].lat_ns += lat;
	prof.cur = sp;
	return t0;
}

void prof_end(int fn, uint64_t t0)
{
	uint64_t d = prof_now_ns() - t0;

	prof.fns[fn].cpu_ns += d;
	if (prof.cur)
		prof.cur->cpu_ns += d;
	prof.cur = NULL;
}

void prof_forget(struct stream_prof *sp)
{
	if (prof.cur == sp)
		prof.cur = NULL;
}

/* Turns the timing on or off (mode <mode>); "on" starts the statistics
 * again, as HAProxy's "set profiling tasks on" does. */
static void prof_set_mode(int mode)
{
	prof.mode = mode;
	global.prof_tasks = mode == PROF_ON;
	if (mode == PROF_ON) {
		for (int i = 0; i < PROF_FN_NB; i++)
			prof.fns[i].calls = prof.fns[i].cpu_ns = prof.fns[i].lat_ns = 0;
		prof.wake_ns = 0;
	}
	if (!global.loop)
		return;   /* at start-up: the first timed call starts the watcher */
	if (!global.prof_tasks && ev_is_active(&prof.chk)) {
		ev_ref(global.loop);
		ev_check_stop(global.loop, &prof.chk);
	}
}

static int prof_mode_word(const char *w)
{
	return strcmp(w, "on") == 0 ? PROF_ON : strcmp(w, "off") == 0 ? PROF_OFF :
	       strcmp(w, "auto") == 0 ? PROF_AUTO : -1;
}

/* profiling.tasks on|off|auto */
static int kw_profiling_tasks(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int m = argc == 1 ? prof_mode_word(argv[0]) : -1;

	if (m < 0) {
		cfg_alert(ctx, "'profiling.tasks' expects 'on', 'off' or 'auto'");
		return -1;
	}
	prof_set_mode(m);
	return 0;
}

/* profiling.memory: refused, with the reason */
static int kw_profiling_memory(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	cfg_alert(ctx, "'profiling.memory' is not supported by sluice: memory profiling is not "
		  "built (HAProxy needs USE_MEMORY_PROFILING for it too)");
	return -1;
}

static int prof_postparse(void)
{
	ev_check_init(&prof.chk, prof_check_cb);
	return 0;
}

/* ---- runtime API ---- */

static int cli_set_profiling(struct cli_ctx *ctx, int argc, char **argv)
{
	int m;

	if (argc < 3 || (strcmp(argv[2], "tasks") != 0 && strcmp(argv[2], "memory") != 0)) {
		dstr_printf(&ctx->out, "Expects either 'tasks' or 'memory'.\n");
		return -1;
	}
	if (strcmp(argv[2], "memory") == 0) {
		dstr_printf(&ctx->out, "Memory profiling not compiled in.\n");
		return -1;
	}
	if (argc != 4 || (m = prof_mode_word(argv[3])) < 0) {
		dstr_printf(&ctx->out, "Expects 'on', 'auto', or 'off'.\n");
		return -1;
	}
	prof_set_mode(m);
	return 0;
}

/* <ns> in HAProxy's way: four significant digits and a unit. */
static void prof_fmt(char *out, size_t sz, double ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	int u = 0;

	while (u < 3 && ns >= 1000.0) {
		ns /= 1000.0;
		u++;
	}
	snprintf(out, sz, ns < 10 ? "%.3f%s" : ns < 100 ? "%.2f%s" : "%.1f%s", ns, unit[u]);
}

static int prof_fn_cmp_calls(const void *a, const void *b)
{
	const struct prof_fn *x = *(const struct prof_fn *const *)a, *y = *(const struct prof_fn *const *)b;

	return x->calls < y->calls ? 1 : x->calls > y->calls ? -1 : strcmp(x->name, y->name);
}

static int prof_fn_cmp_name(const void *a, const void *b)
{
	const struct prof_fn *x = *(const struct prof_fn *const *)a, *y = *(const struct prof_fn *const *)b;

	return strcmp(x->name, y->name);
}

/* show profiling [all|status|tasks|memory] [byaddr] [<max_lines>] */
static int cli_show_profiling(struct cli_ctx *ctx, int argc, char **argv)
{
	int status = 1, tasks = 1, byname = 0, n = 0;
	long max = -1;
	const struct prof_fn *rows[PROF_FN_NB];

	for (int i = 2; i < argc; i++) {
		char *end;

		if (strcmp(argv[i], "all") == 0) {
			status = tasks = 1;
		} else if (strcmp(argv[i], "status") == 0) {
			status = 1, tasks = 0;
		} else if (strcmp(argv[i], "tasks") == 0) {
			status = 0, tasks = 1;
		} else if (strcmp(argv[i], "memory") == 0) {
			dstr_printf(&ctx->out, "Memory profiling not compiled in.\n");
			return -1;
		} else if (strcmp(argv[i], "byaddr") == 0) {
			byname = 1;   /* no addresses here: by function name */
		} else if ((max = strtol(argv[i], &end, 10)) < 0 || *end || !*argv[i]) {
			dstr_printf(&ctx->out, "Expects either 'all', 'status', 'tasks', 'memory', "
				    "'byaddr' or a max number of output lines.\n");
			return -1;
		}
	}
	if (status)
		dstr_printf(&ctx->out, "Per-task CPU profiling              : %-13s # set profiling "
			    "tasks {on|auto|off}\nMemory usage profiling              : %-13s # set "
			    "profiling memory {on|off}\n", prof.mode == PROF_ON ? "on" :
			    prof.mode == PROF_AUTO ? "auto-off" : "off", "off");
	if (!tasks)
		return 0;
	for (int i = 0; i < PROF_FN_NB; i++)
		if (prof.fns[i].calls)
			rows[n++] = &prof.fns[i];
	qsort(rows, (size_t)n, sizeof(rows[0]), byname ? prof_fn_cmp_name : prof_fn_cmp_calls);
	dstr_printf(&ctx->out, "Tasks activity:\n  function                      calls   cpu_tot   "
		    "cpu_avg   lat_tot   lat_avg\n");
	for (int i = 0; i < n && (max < 0 || i < max); i++) {
		char ct[16], ca[16], lt[16], la[16];

		prof_fmt(ct, sizeof(ct), (double)rows[i]->cpu_ns);
		prof_fmt(ca, sizeof(ca), (double)rows[i]->cpu_ns / (double)rows[i]->calls);
		prof_fmt(lt, sizeof(lt), (double)rows[i]->lat_ns);
		prof_fmt(la, sizeof(la), (double)rows[i]->lat_ns / (double)rows[i]->calls);
		dstr_printf(&ctx->out, "  %-25s %9llu %9s %9s %9s %9s\n", rows[i]->name,
			    (unsigned long long)rows[i]->calls, ct, ca, lt, la);
	}
	return 0;
}

/* ---- fetches: the stream's counts since its request began ---- */

enum { PF_CALLS, PF_CPU_AVG, PF_CPU_TOT, PF_LAT_AVG, PF_LAT_TOT };

static int fetch_prof(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	const struct stream_prof *p;

	if (!s)
		return 0;
	p = &s->prof;
	smp->type = SMP_T_SINT;
	switch ((intptr_t)priv) {
	case PF_CALLS:   smp->u.sint = p->calls; break;
	case PF_CPU_TOT: smp->u.sint = (int64_t)p->cpu_ns; break;
	case PF_LAT_TOT: smp->u.sint = (int64_t)p->lat_ns; break;
	case PF_CPU_AVG: smp->u.sint = p->calls ? (int64_t)(p->cpu_ns / p->calls) : 0; break;
	default:         smp->u.sint = p->calls ? (int64_t)(p->lat_ns / p->calls) : 0; break;
	}
	return 1;
}

#define PF(v) ((const void *)(intptr_t)(v))
#define PF_USE (SMP_USE_L4 | SMP_USE_L7REQ | SMP_USE_L7RES)

static const struct smp_fetch_kw prof_fetches[] = {
	{ "cpu_calls",  fetch_prof, { 0 }, 0, SMP_T_SINT, PF_USE, NULL, PF(PF_CALLS) },
	{ "cpu_ns_avg", fetch_prof, { 0 }, 0, SMP_T_SINT, PF_USE, NULL, PF(PF_CPU_AVG) },
	{ "cpu_ns_tot", fetch_prof, { 0 }, 0, SMP_T_SINT, PF_USE, NULL, PF(PF_CPU_TOT) },
	{ "lat_ns_avg", fetch_prof, { 0 }, 0, SMP_T_SINT, PF_USE, NULL, PF(PF_LAT_AVG) },
	{ "lat_ns_tot", fetch_prof, { 0 }, 0, SMP_T_SINT, PF_USE, NULL, PF(PF_LAT_TOT) },
};

static struct cfg_kw prof_kws[] = {
	{ "profiling.tasks", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_profiling_tasks,
	  .usage = "on|off|auto" },
	{ "profiling.memory", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_profiling_memory,
	  .usage = "on|off" },
};

static struct cli_kw prof_cli_kws[] = {
	{ { "set", "profiling", NULL }, "set profiling tasks {on|auto|off}", "time the calls of "
	  "the streams' callbacks (cpu_* and lat_ns_* fetches, show profiling)", CLI_LVL_ADMIN,
	  cli_set_profiling },
	{ { "show", "profiling", NULL }, "show profiling [all|status|tasks] [byaddr] [<max>]",
	  "the profiling settings and what the streams' callbacks cost", CLI_LVL_USER,
	  cli_show_profiling },
};

SLUICE_INIT(prof_register)
{
	cfg_register(prof_kws, ARRAY_SIZE(prof_kws));
	cfg_register_postparse(prof_postparse, 10);
	cli_register(prof_cli_kws, ARRAY_SIZE(prof_cli_kws));
	smp_register_fetches(prof_fetches, ARRAY_SIZE(prof_fetches));
}
