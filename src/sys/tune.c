/* Global keywords about the event loop and the process itself: noepoll,
 * nopoll, nosplice, busy-polling, cpu-map, set-dumpable, fd-hard-limit,
 * quiet, zero-warning, default-path, localpeer (process.h, tune_*()). */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <ev.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/peers.h>
#include <sluice/process.h>
#include <sluice/proxy.h>
#include <sluice/str.h>
#include <sluice/units.h>

static struct {
	cpu_set_t cpus;         /* cpu-map for thread 1 of process 1 */
	int       has_cpus;
	ev_idle   busy;         /* busy-polling: an idle watcher keeps the loop polling */
} tune;

/* Parses "N" or "N-M" (M >= N) in [lo, hi]. Returns 0 or -1. */
static int tune_range(const char *w, long lo, long hi, long *a, long *b)
{
	const char *e;
	char first[32];
	const char *dash = strchr(w, '-');

	if (!dash)
		return parse_int(w, lo, hi, a, &e) == -1 ? -1 : (*b = *a, 0);
	snprintf(first, sizeof(first), "%.*s", (int)(dash - w), w);
	if (parse_int(first, lo, hi, a, &e) == -1 || parse_int(dash + 1, lo, hi, b, &e) == -1 ||
	    *b < *a)
		return -1;
	return 0;
}

/* Whether the process or thread set <w> ("1", "1-4", "all", "odd") holds 1. */
static int tune_set_has_one(const char *w, int *ok)
{
	long a, b;

	*ok = 1;
	if (strcmp(w, "all") == 0 || strcmp(w, "odd") == 0)
		return 1;
	if (strcmp(w, "even") == 0)
		return 0;
	if (tune_range(w, 1, 4096, &a, &b) == -1) {
		*ok = 0;
		return 0;
	}
	return a == 1;
}

/* cpu-map [auto:]<process-set>[/<thread-set>] <cpu-set>...: sluice runs one
 * thread in one process, "1/1": an entry naming it gives the CPUs this
 * process is pinned to (with auto:, the first CPU of the set, as HAProxy
 * gives thread 1). */
static int kw_cpu_map(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *sel = argc ? argv[0] : "", *slash;
	char procs[64];
	int is_auto = strncmp(sel, "auto:", 5) == 0, ok1, ok2 = 1, mine;
	cpu_set_t set;

	if (argc < 2) {
		cfg_alert(ctx, "expects [auto:]<process-set>[/<thread-set>] <cpu-set>...");
		return -1;
	}
	sel += is_auto ? 5 : 0;
	slash = strchr(sel, '/');
	snprintf(procs, sizeof(procs), "%.*s", (int)(slash ? slash - sel : (long)strlen(sel)), sel);
	mine = tune_set_has_one(procs, &ok1);
	if (slash)
		mine = tune_set_has_one(slash + 1, &ok2) && mine;
	if (!ok1 || !ok2) {
		cfg_alert(ctx, "'%s': expects a process and thread set such as 1, 1/1, 1/1-4, "
			  "all, odd or even", argv[0]);
		return -1;
	}
	CPU_ZERO(&set);
	for (int i = 1; i < argc; i++) {
		char *words = xstrdup(argv[i]), *w, *save = NULL;

		for (w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			long a, b;

			if (tune_range(w, 0, CPU_SETSIZE - 1, &a, &b) == -1) {
				cfg_alert(ctx, "'%s': expects CPU numbers or ranges (0..%d)", w,
					  CPU_SETSIZE - 1);
				free(words);
				return -1;
			}
			for (long c = a; c <= b; c++)
				CPU_SET((int)c, &set);
		}
		free(words);
	}
	if (!mine) {
		cfg_warn(ctx, "'%s' names only processes or threads other than 1: sluice runs one "
			 "thread in one process, this entry is ignored", argv[0]);
		return 0;
	}
	if (is_auto) {
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				CPU_ZERO(&set);
				CPU_SET(c, &set);
				break;
			}
	}
	tune.cpus = set;
	tune.has_cpus = 1;
	return 0;
}

/* default-path current | config | parent | origin <path>: the directory
 * relative paths of the lines after it (error files, maps, certificates...)
 * are taken from. Done as HAProxy does it, by changing the working
 * directory of the process. */
/* localpeer <name>: the local peer name, unless -L gave it or a peers
 * section was already read (HAProxy warns and ignores it then); also in
 * HAPROXY_LOCALPEER for the rest of the configuration. */
static int kw_localpeer(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects <name>");
		return -1;
	}
	if (peers_local_name_fixed()) {
		cfg_warn(ctx, "ignored: the local peer name is already '%s' (given by -L, or a "
			 "peers section came first)", peers_local_name());
		return 0;
	}
	free(*(char **)target);
	*(char **)target = xstrdup(argv[0]);
	setenv("HAPROXY_LOCALPEER", argv[0], 1);
	return 0;
}

static int kw_default_path(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static char *start_dir;
	char dir[PATH_MAX];
	const char *to = NULL;

	if (!start_dir)
		start_dir = getcwd(NULL, 0);
	if (argc == 1 && strcmp(argv[0], "current") == 0) {
		to = start_dir;
	} else if (argc == 1 && (strcmp(argv[0], "config") == 0 ||
				 strcmp(argv[0], "parent") == 0)) {
		char *slash;

		snprintf(dir, sizeof(dir), "%s", ctx->file);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
		if (argv[0][0] == 'p')
			snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/..");
		to = dir;
	} else if (argc == 2 && strcmp(argv[0], "origin") == 0) {
		to = argv[1];
	} else {
		cfg_alert(ctx, "expects 'current', 'config', 'parent' or 'origin <path>'");
		return -1;
	}
	if (!to || chdir(to) == -1) {
		cfg_alert(ctx, "cannot change to directory '%s': %s", to ? to : "(unknown)",
			  strerror(errno));
		return -1;
	}
	return 0;
}

static int kw_quiet(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	global.flags |= GLB_F_QUIET;
	return 0;
}

/* thread-groups 1 | thread-group 1 [1]: one thread in one group. */
static int kw_thread_groups(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "1") != 0 ||
	    (argc > 1 && strcmp(argv[1], "1") != 0 && strcmp(argv[1], "1-1") != 0)) {
		cfg_alert(ctx, "sluice runs one thread, in one thread group: only group 1 with "
			  "thread 1 is accepted");
		return -1;
	}
	return 0;
}

static int tune_zero_warning(void)
{
	if (!(global.tune_flags & GLB_T_ZERO_WARNING) || !log_warning_count())
		return 0;
	log_alert("Some warnings were found and 'zero-warning' is set. Aborting.");
	return 1;
}

/* nosplice: every option splice-* is dropped before the limits that depend
 * on splicing are computed (process.c, priority 10). */
static int tune_nosplice(void)
{
	const uint64_t splice = PR_O_SPLICE_AUTO | PR_O_SPLICE_REQ | PR_O_SPLICE_RSP;

	if (!(global.tune_flags & GLB_T_NOSPLICE))
		return 0;
	for (struct proxy *px = global.proxies; px; px = px->next)
		px->options &= ~splice;
	return 0;
}

unsigned tune_loop_backend(void)
{
	if (!(global.tune_flags & GLB_T_NOEPOLL))
		return EVBACKEND_EPOLL;
	return global.tune_flags & GLB_T_NOPOLL ? EVBACKEND_SELECT : EVBACKEND_POLL;
}

static void tune_busy_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
}

int tune_apply(struct ev_loop *loop)
{
	if (tune.has_cpus && sched_setaffinity(0, sizeof(tune.cpus), &tune.cpus) == -1)
		log_warning("cpu-map: cannot pin the process to the CPUs given: %s",
			    strerror(errno));
	if ((global.tune_flags & GLB_T_DUMPABLE) && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1)
		log_warning("set-dumpable: %s", strerror(errno));
	if (global.tune_flags & GLB_T_BUSY_POLL) {
		/* An active idle watcher makes every poll return at once. */
		ev_idle_init(&tune.busy, tune_busy_cb);
		ev_idle_start(loop, &tune.busy);
		ev_unref(loop);
	}
	return 0;
}

#define TUNE_FLAG(kw, f) { kw, CFG_SEC_GLOBAL, CFG_T_FLAG, offsetof(struct global, tune_flags), \
	.mask = (f), .flags = CFG_KW_F_NO }

static struct cfg_kw tune_kws[] = {
	TUNE_FLAG("noepoll", GLB_T_NOEPOLL),
	TUNE_FLAG("nopoll", GLB_T_NOPOLL),
	TUNE_FLAG("nosplice", GLB_T_NOSPLICE),
	TUNE_FLAG("busy-polling", GLB_T_BUSY_POLL),
	TUNE_FLAG("set-dumpable", GLB_T_DUMPABLE),
	TUNE_FLAG("zero-warning", GLB_T_ZERO_WARNING),
	{ "quiet", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_quiet },
	{ "cpu-map", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_cpu_map,
	  .usage = "[auto:]<process-set>[/<thread-set>] <cpu-set>..." },
	{ "default-path", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_default_path,
	  .usage = "current | config | parent | origin <path>" },
	{ "fd-hard-limit", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, fd_hard_limit),
	  .min = 1, .max = 100000000, .usage = "a number of file descriptors" },
	{ "localpeer", CFG_SEC_GLOBAL, CFG_T_FUNC, offsetof(struct global, localpeer),
	  .parse = kw_localpeer, .usage = "<name>" },
	{ "thread-groups", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_thread_groups },
	{ "thread-group", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_thread_groups },
};

SLUICE_INIT(tune_register)
{
	cfg_register(tune_kws, ARRAY_SIZE(tune_kws));
	cfg_register_postparse(tune_nosplice, 5);
	cfg_register_postparse(tune_zero_warning, 1000);
}
