/* Global keywords of HAProxy 2.6 that have no object in sluice: tuning
 * knobs of threads, task schedulers and allocators sluice does not have
 * (accepted, their value checked, documented as without effect in
 * doc/configuration.md section 6.2), and those of modules sluice does not
 * build (refused with the reason). Each row carries its reason in .hint. */
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/str.h>
#include <sluice/units.h>

/* What the argument of a row without effect must look like (its .arg). */
enum compat_arg {
	CA_NONE,    /* no argument */
	CA_INT,     /* one integer >= 0 */
	CA_TIME,    /* one time */
	CA_SIZE,    /* one size */
	CA_ONOFF,   /* on | off */
	CA_ANY,     /* one or more words */
};

static int compat_check_arg(struct cfg_ctx *ctx, enum compat_arg kind, int argc, char **argv)
{
	const char *e;
	uint32_t u;
	long v;

	if (kind == CA_NONE) {
		if (!argc)
			return 0;
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	if (kind == CA_ANY) {
		if (argc)
			return 0;
		cfg_alert(ctx, "expects %s", ctx->kw_row->usage ? ctx->kw_row->usage :
			  "an argument");
		return -1;
	}
	if (argc == 1 && ((kind == CA_INT && parse_int(argv[0], 0, 0x7fffffff, &v, &e) == 0) ||
			  (kind == CA_TIME && parse_time_ms(argv[0], 1, &u, &e) == 0) ||
			  (kind == CA_SIZE && parse_size(argv[0], &u, &e) == 0) ||
			  (kind == CA_ONOFF && (strcmp(argv[0], "on") == 0 ||
						strcmp(argv[0], "off") == 0))))
		return 0;
	cfg_alert(ctx, "expects %s", kind == CA_INT ? "a positive integer" : kind == CA_TIME ?
		  "a time" : kind == CA_SIZE ? "a size" : "'on' or 'off'");
	return -1;
}

/* A knob without object in sluice: its value is checked, then nothing. */
static int kw_no_effect(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return compat_check_arg(ctx, (enum compat_arg)ctx->kw_row->arg, argc, argv);
}

/* Whether <set> of bind-process names process 1 only, as HAProxy 2.6 takes
 * it: "all", "odd", "even" (aliases of process 1 there), "1", "1-", "1-1". */
static int compat_proc_set_ok(const char *set)
{
	static const char *const ok[] = { "all", "odd", "even", "1", "1-", "1-1" };

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		if (strcmp(set, ok[i]) == 0)
			return 1;
	return 0;
}

/* [stats] bind-process <set>...: HAProxy 2.6 accepts only sets of process
 * 1, and warns that the proxy keyword has no effect; sluice runs one
 * process too. The row's .arg says whether to warn. */
static int kw_bind_process(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (!argc) {
		cfg_alert(ctx, "expects a process set (all, odd, even or 1)");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		if (!compat_proc_set_ok(argv[i])) {
			cfg_alert(ctx, "'%s' is not a valid process set: there is only process 1 "
				  "(as in HAProxy 2.6)", argv[i]);
			return -1;
		}
	}
	if (ctx->kw_row->arg)
		cfg_warn(ctx, "has no effect (one process), is deprecated, and HAProxy 2.7 "
			 "removes it");
	return 0;
}

/* A keyword of a module sluice does not build. */
static int kw_refused(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	cfg_alert(ctx, "not supported by sluice: %s", ctx->kw_row->hint);
	return -1;
}

#define NOEFFECT(kw, a, why) { kw, CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_no_effect, \
	.flags = CFG_KW_F_NO, .arg = (a), .hint = (why) }
#define REFUSED(kw, why) { kw, CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_refused, \
	.hint = (why) }

#define WHY_THREADS  "one thread: nothing is shared between threads"
#define WHY_NOSCHED  "no task scheduler: the event loop runs each event as it comes"
#define WHY_POOLS    "buffers are taken only while bytes are in flight, from one pool"
#define WHY_DD       "device detection (51Degrees, DeviceAtlas, WURFL) is not built"

static struct cfg_kw compat_kws[] = {
	NOEFFECT("tune.buffers.limit", CA_INT, WHY_POOLS),
	NOEFFECT("tune.buffers.reserve", CA_INT, WHY_POOLS),
	NOEFFECT("tune.idle-pool.shared", CA_ONOFF, WHY_THREADS),
	NOEFFECT("tune.listener.multi-queue", CA_ONOFF, WHY_THREADS),
	NOEFFECT("tune.fd.edge-triggered", CA_ONOFF, "libev's epoll backend is level-triggered"),
	NOEFFECT("tune.idletimer", CA_TIME, "splice-auto splices whenever a read fills a "
		 "buffer, without an idle-stream heuristic"),
	NOEFFECT("tune.maxaccept", CA_INT, "each wake-up accepts what the backlog holds, "
		 "bounded by the limits"),
	NOEFFECT("tune.maxpollevents", CA_INT, "libev sizes its event array itself"),
	NOEFFECT("tune.pattern.cache-size", CA_INT, "patterns are indexed (hash, tree, "
		 "radix): no result cache"),
	NOEFFECT("tune.pool-high-fd-ratio", CA_INT, "idle server connections are bounded by "
		 "pool-max-conn and pool-purge-delay"),
	NOEFFECT("tune.pool-low-fd-ratio", CA_INT, "idle server connections are bounded by "
		 "pool-max-conn and pool-purge-delay"),
	NOEFFECT("tune.recv_enough", CA_SIZE, "a read takes what the buffer holds"),
	NOEFFECT("tune.runqueue-depth", CA_INT, WHY_NOSCHED),
	NOEFFECT("tune.sched.low-latency", CA_ONOFF, WHY_NOSCHED),
	NOEFFECT("tune.vars.global-max-size", CA_INT, "variables exist only under the names "
		 "the configuration gives, each bounded"),
	NOEFFECT("tune.vars.proc-max-size", CA_INT, "variables exist only under the names "
		 "the configuration gives, each bounded"),
	NOEFFECT("tune.vars.sess-max-size", CA_INT, "variables exist only under the names "
		 "the configuration gives, each bounded"),
	NOEFFECT("tune.vars.txn-max-size", CA_INT, "variables exist only under the names "
		 "the configuration gives, each bounded"),
	NOEFFECT("tune.vars.reqres-max-size", CA_INT, "variables exist only under the names "
		 "the configuration gives, each bounded"),
	NOEFFECT("tune.fail-alloc", CA_INT, "a knob of HAProxy's DEBUG_FAIL_ALLOC builds"),
	NOEFFECT("numa-cpu-mapping", CA_NONE, "one thread: use cpu-map to pin it"),
	NOEFFECT("nokqueue", CA_NONE, "Linux has no kqueue"),
	NOEFFECT("noevports", CA_NONE, "Linux has no event ports"),
	NOEFFECT("nogetaddrinfo", CA_NONE, "names are resolved once at start-up with "
		 "getaddrinfo(), which glibc's gethostbyname() uses as well"),
	NOEFFECT("no-memory-trimming", CA_NONE, "sluice never calls malloc_trim()"),
	NOEFFECT("insecure-setuid-wanted", CA_NONE, "sluice does not forbid setuid programs"),
	NOEFFECT("expose-experimental-directives", CA_NONE, "no directive of sluice needs it"),
	NOEFFECT("profiling.tasks", CA_ANY, WHY_NOSCHED),
	NOEFFECT("cluster-secret", CA_ANY, "the secret is for QUIC, which sluice does not "
		 "speak"),
	{ "stats bind-process", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_bind_process,
	  .usage = "all|odd|even|1" },
	{ "bind-process", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_bind_process,
	  .usage = "all|odd|even|1", .arg = 1 },
	REFUSED("51degrees-data-file", WHY_DD),
	REFUSED("51degrees-property-name-list", WHY_DD),
	REFUSED("51degrees-property-separator", WHY_DD),
	REFUSED("51degrees-cache-size", WHY_DD),
	REFUSED("deviceatlas-json-file", WHY_DD),
	REFUSED("deviceatlas-log-level", WHY_DD),
	REFUSED("deviceatlas-separator", WHY_DD),
	REFUSED("deviceatlas-properties-cookie", WHY_DD),
	REFUSED("wurfl-data-file", WHY_DD),
	REFUSED("wurfl-information-list", WHY_DD),
	REFUSED("wurfl-information-list-separator", WHY_DD),
	REFUSED("wurfl-cache-size", WHY_DD),
};

SLUICE_INIT(compat_register)
{
	cfg_register(compat_kws, ARRAY_SIZE(compat_kws));
}
