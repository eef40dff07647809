/* Global-section keywords about the process, and the start-up steps they
 * drive: maxconn and file limits, daemon, pid file, chroot, user/group
 * (process.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#ifdef USE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/listener.h>
#include <sluice/common.h>
#include <sluice/comp.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/ticks.h>
#include <sluice/pipe.h>
#include <sluice/process.h>
#include <sluice/proxy.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/units.h>

#define MAXCONN_AUTO_CAP 100000   /* default maxconn when nothing limits it */
#define FD_RESERVE       100      /* descriptors for logs, CLI, checks, ... */

struct global global = {
	.uid = -1,
	.gid = -1,
	.nbthread = 1,
	.bufsize = 16384,
	.maxrewrite = 1024,
	.maxhdr = 101,
	.strict_limits = 1,     /* on by default, as in HAProxy 2.6 */
};

uint64_t now_ms(void)
{
	return tick_now_ms();
}

/* ---- keywords ---- */

static int sec_global(struct cfg_ctx *ctx, int argc, char **argv)
{
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	return 0;
}

static int kw_daemon(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	global.daemon = !ctx->inverted;
	return 0;
}

static int kw_nbthread(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *err;
	long v;

	if (argc != 1 || parse_int(argv[0], 1, 4096, &v, &err) == -1) {
		cfg_alert(ctx, "expects a positive number of threads");
		return -1;
	}
	if (v > 1) {
		cfg_alert(ctx, "sluice runs one event loop per process: only 'nbthread 1' is "
			  "supported (use several processes for more cores)");
		return -1;
	}
	return 0;
}

/* nbproc: HAProxy 2.5 removed it and 2.6 refuses it whatever its value,
 * "nbproc 1" included; sluice refuses it the same way. */
static int kw_nbproc(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	cfg_alert(ctx, "not supported any more since HAProxy 2.5 (2.6 refuses it too): "
		  "remove it; sluice runs one process with one event loop");
	return -1;
}

static int kw_text(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct dstr d = { 0 };

	for (int i = 0; i < argc; i++)
		dstr_printf(&d, "%s%s", i ? " " : "", argv[i]);
	free(*(char **)target);
	*(char **)target = d.p ? d.p : xstrdup("");
	return 0;
}

static int kw_user_group(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int is_user = (int)ctx->kw_row->arg;

	if (argc != 1) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	if (is_user) {
		struct passwd *pw = getpwnam(argv[0]);

		if (!pw) {
			cfg_alert(ctx, "unknown user '%s'", argv[0]);
			return -1;
		}
		global.uid = (int)pw->pw_uid;
	} else {
		struct group *gr = getgrnam(argv[0]);

		if (!gr) {
			cfg_alert(ctx, "unknown group '%s'", argv[0]);
			return -1;
		}
		global.gid = (int)gr->gr_gid;
	}
	return 0;
}

static struct cfg_section process_sections[] = {
	{ "global", CFG_SEC_GLOBAL, sec_global, NULL, NULL },
};

static struct cfg_kw process_kws[] = {
	{ "daemon", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_daemon, .flags = CFG_KW_F_NO },
	{ "maxconn", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, maxconn), .min = 1,
	  .max = 10000000, .usage = "a connection limit" },
	{ "maxconnrate", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, conn_rate_limit),
	  .min = 0, .max = 0x7fffffff, .usage = "a number of connections per second" },
	{ "strict-limits", CFG_SEC_GLOBAL, CFG_T_FLAG, offsetof(struct global, strict_limits),
	  .mask = 1, .flags = CFG_KW_F_NO },
	{ "ulimit-n", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, ulimit_n), .min = 1,
	  .max = 100000000, .usage = "a number of file descriptors" },
	{ "pidfile", CFG_SEC_GLOBAL, CFG_T_STR, offsetof(struct global, pidfile), .usage = "<path>" },
	{ "chroot", CFG_SEC_GLOBAL, CFG_T_STR, offsetof(struct global, chroot), .usage = "<directory>" },
	{ "node", CFG_SEC_GLOBAL, CFG_T_STR, offsetof(struct global, node), .usage = "<name>" },
	{ "description", CFG_SEC_GLOBAL, CFG_T_FUNC, offsetof(struct global, desc), .parse = kw_text },
	{ "user", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_user_group, .arg = 1 },
	{ "group", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_user_group, .arg = 0 },
	{ "uid", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, uid), .min = 0,
	  .max = 0x7fffffff, .usage = "a numeric user id" },
	{ "gid", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, gid), .min = 0,
	  .max = 0x7fffffff, .usage = "a numeric group id" },
	{ "nbthread", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_nbthread },
	{ "nbproc", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_nbproc },
	{ "tune.bufsize", CFG_SEC_GLOBAL, CFG_T_SIZE, offsetof(struct global, bufsize),
	  .min = 1024, .max = 1 << 28, .usage = "a buffer size" },
	{ "tune.maxrewrite", CFG_SEC_GLOBAL, CFG_T_SIZE, offsetof(struct global, maxrewrite),
	  .min = 0, .max = 1 << 27, .usage = "a size" },
};

static int process_uses_splice(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		if (px->options & (PR_O_SPLICE_AUTO | PR_O_SPLICE_REQ | PR_O_SPLICE_RSP))
			return 1;
	return 0;
}

/* Derives maxconn from the file limits when it was not given. */
static int process_postparse(void)
{
	struct rlimit rl;
	int errors = 0;

	if (!global.maxconn) {
		long fds;

		if (global.ulimit_n) {
			fds = global.ulimit_n;
		} else if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY) {
			fds = (long)rl.rlim_max;
		} else {
			fds = 2L * MAXCONN_AUTO_CAP + FD_RESERVE;
		}
		if (global.fd_hard_limit && fds > global.fd_hard_limit)
			fds = global.fd_hard_limit;
		/* Two descriptors per connection, plus two per pipe when some
		 * proxy splices (tune.maxpipes defaults to maxconn/4). */
		fds -= FD_RESERVE;
		if (process_uses_splice() && global.maxpipes)
			fds -= 2L * global.maxpipes;
		fds = process_uses_splice() && !global.maxpipes ? fds * 2 / 5 : fds / 2;
		global.maxconn = (int)MAX(1, MIN(fds, MAXCONN_AUTO_CAP));
	}
	/* As HAProxy does: a reserve of half the buffer or more is lowered. */
	if (global.maxrewrite >= global.bufsize / 2)
		global.maxrewrite = global.bufsize / 2;
	if (!global.node) {
		char host[256] = "";

		gethostname(host, sizeof(host) - 1);
		global.node = xstrdup(host);
	}
	return errors;
}

/* ---- start-up steps ---- */

int process_set_limits(void)
{
	struct rlimit rl;
	rlim_t want;

	want = global.ulimit_n ? (rlim_t)global.ulimit_n :
	       (rlim_t)global.maxconn * 2 + FD_RESERVE +
	       (process_uses_splice() ? (rlim_t)pipe_max() * 2 : 0);
	if (global.fd_hard_limit && want > (rlim_t)global.fd_hard_limit)
		want = (rlim_t)global.fd_hard_limit;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -1;
	if (rl.rlim_cur >= want && !global.ulimit_n)
		return 0;
	rl.rlim_cur = want;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		rl.rlim_max = want;   /* works as root, refused otherwise */
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		if (global.strict_limits) {
			log_alert("cannot raise the file descriptor limit to %llu (hard limit %llu) "
				  "for maxconn %d; lower maxconn, or set 'no strict-limits' to start "
				  "anyway", (unsigned long long)want, (unsigned long long)rl.rlim_cur,
				  global.maxconn);
			return -1;
		}
		log_warning("cannot raise the file descriptor limit to %llu (now %llu): "
			    "maxconn %d may not be reachable",
			    (unsigned long long)want, (unsigned long long)rl.rlim_cur, global.maxconn);
	}
	return 0;
}

static int pidfile_fd = -1;
static int pidfile_created;   /* it did not exist: a failed start removes it */

int process_open_pidfile(void)
{
	if (!global.pidfile)
		return 0;
	/* Not truncated here: until this start succeeds, the file keeps the
	 * pid of the process it replaces (the next reload's -sf needs it). */
	pidfile_fd = open(global.pidfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (pidfile_fd >= 0)
		pidfile_created = 1;
	else if (errno == EEXIST)
		pidfile_fd = open(global.pidfile, O_WRONLY | O_CLOEXEC);
	if (pidfile_fd == -1) {
		log_alert("cannot create pid file '%s': %s", global.pidfile, strerror(errno));
		return -1;
	}
	return 0;
}

int process_write_pidfile(pid_t pid)
{
	char buf[32];
	int n, ret = 0;

	if (pidfile_fd < 0)
		return 0;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	if (ftruncate(pidfile_fd, 0) == -1 || pwrite(pidfile_fd, buf, (size_t)n, 0) != n) {
		log_alert("cannot write pid file '%s': %s", global.pidfile, strerror(errno));
		ret = -1;
	}
	close(pidfile_fd);
	pidfile_fd = -1;
	return ret;
}

void process_forget_pidfile(void)
{
	if (pidfile_fd < 0)
		return;
	close(pidfile_fd);
	pidfile_fd = -1;
	if (pidfile_created)
		unlink(global.pidfile);
}

int process_daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid == -1) {
		log_alert("cannot fork into the background: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		/* The parent reports the daemon's pid and leaves. */
		exit(process_write_pidfile(pid) == 0 ? 0 : 1);
	}
	if (pidfile_fd >= 0) {
		close(pidfile_fd);
		pidfile_fd = -1;
	}
	setsid();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

int process_drop_privileges(void)
{
	if (global.chroot) {
		if (chroot(global.chroot) == -1 || chdir("/") == -1) {
			log_alert("cannot chroot to '%s': %s", global.chroot, strerror(errno));
			return -1;
		}
	}
	if (global.gid >= 0) {
		if (setgroups(0, NULL) == -1 && errno != EPERM) {
			log_alert("cannot drop supplementary groups: %s", strerror(errno));
			return -1;
		}
		if (setgid((gid_t)global.gid) == -1) {
			log_alert("cannot set gid %d: %s", global.gid, strerror(errno));
			return -1;
		}
	}
	if (global.uid >= 0 && setuid((uid_t)global.uid) == -1) {
		log_alert("cannot set uid %d: %s", global.uid, strerror(errno));
		return -1;
	}
	return 0;
}

int process_check_privileges(void)
{
	pid_t pid;
	int st = 0;

	if (!global.chroot && global.uid < 0 && global.gid < 0)
		return 0;
	pid = fork();
	if (pid == -1) {
		log_alert("cannot fork to try chroot/user/group: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		_exit(process_drop_privileges() == 0 ? 0 : 1);  /* it printed why */
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			log_alert("cannot wait for the chroot/user/group trial: %s", strerror(errno));
			return -1;
		}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

void process_signal_old(const pid_t *pids, int n, int sig)
{
	for (int i = 0; i < n; i++)
		if (kill(pids[i], sig) == -1 && errno != ESRCH)
			log_warning("cannot signal old process %d: %s", (int)pids[i], strerror(errno));
}

void process_notify_ready(void)
{
#ifdef USE_SYSTEMD
	if (getenv("NOTIFY_SOCKET"))
		sd_notifyf(0, "READY=1\nMAINPID=%lu", (unsigned long)getpid());
#endif
}

/* ---- runtime API ---- */

extern char **environ;

static int cli_show_env(struct cli_ctx *ctx, int argc, char **argv)
{
	if (argc > 2) {
		const char *v = getenv(argv[2]);

		if (!v) {
			dstr_printf(&ctx->out, "Variable not found\n");
			return -1;
		}
		dstr_printf(&ctx->out, "%s=%s\n", argv[2], v);
		return 0;
	}
	for (char **e = environ; e && *e; e++)
		dstr_printf(&ctx->out, "%s\n", *e);
	return 0;
}

/* set maxconn global <n>: up to the limit computed at start-up. */
static int cli_set_maxconn_global(struct cli_ctx *ctx, int argc, char **argv)
{
	static int hard_max;
	char *end;
	long v;

	if (!hard_max)
		hard_max = global.maxconn;
	v = argc > 3 ? strtol(argv[3], &end, 10) : -1;
	if (argc < 4 || *end || v < 1) {
		dstr_printf(&ctx->out, "Integer value expected.\n");
		return -1;
	}
	if (v > hard_max) {
		dstr_printf(&ctx->out, "Value too large (limit is %d).\n", hard_max);
		return -1;
	}
	global.maxconn = (int)v;
	listener_recheck_limits();
	return 0;
}

/* show activity: HAProxy's per-thread loop counters, for our single loop
 * (one "thread", so no per-thread columns). */
static int cli_show_activity(struct cli_ctx *ctx, int argc, char **argv)
{
	struct timeval tv;
	long up;

	gettimeofday(&tv, NULL);
	up = (long)(tv.tv_sec - global.start_time);
	dstr_printf(&ctx->out, "thread_id: 1 (1..1)\n"
		    "date_now: %lld.%06ld\n"
		    "uptime_now: %ld\n"
		    "loops: %u\n"
		    "accepted: %llu\n"
		    "curr_conns: %d\n"
		    "jobs: %d\n",
		    (long long)tv.tv_sec, (long)tv.tv_usec, up < 0 ? 0 : up,
		    global.loop ? ev_iteration(global.loop) : 0u,
		    (unsigned long long)global.cumconn, global.curconn, global.jobs);
	return 0;
}

/* set rate-limit connections|http-compression|ssl-sessions global <n>: 0
 * removes the limit (connections per second; kB/s of compression input;
 * TLS sessions per second). */
static void rate_limit_connections(int v)
{
	global.conn_rate_limit = v;
	listener_recheck_limits();
}

static void rate_limit_sessions(int v)
{
	/* maxsessrate: frontends pause accepting once it is reached */
	global.sess_rate_limit = v;
	listener_recheck_limits();
}

static void rate_limit_ssl(int v)
{
	/* maxsslrate: TLS bind lines pause once it is reached */
	ssl_counters.maxsslrate = v;
	listener_recheck_limits();
}

/* The limits "set rate-limit <what> global <value>" changes, as HAProxy
 * lists them. */
static const struct {
	const char *what;
	void      (*set)(int v);
	const char *help;
} rate_limits[] = {
	{ "connections", rate_limit_connections, "the per-process maximum connection rate" },
	{ "http-compression", comp_set_rate_limit, "the per-process maximum compression speed "
	  "in kB/s" },
	{ "sessions", rate_limit_sessions, "the per-process maximum session rate" },
	{ "ssl-sessions", rate_limit_ssl, "the per-process maximum SSL session rate" },
};

static int cli_set_rate_limit(struct cli_ctx *ctx, int argc, char **argv)
{
	size_t k = ARRAY_SIZE(rate_limits);
	char *end;
	long v;

	if (argc >= 4 && strcmp(argv[3], "global") == 0)
		for (k = 0; k < ARRAY_SIZE(rate_limits); k++)
			if (strcmp(argv[2], rate_limits[k].what) == 0)
				break;
	if (k == ARRAY_SIZE(rate_limits)) {
		dstr_printf(&ctx->out, "'set rate-limit' only supports :\n");
		for (k = 0; k < ARRAY_SIZE(rate_limits); k++)
			dstr_printf(&ctx->out, "   - '%s global' to set %s\n", rate_limits[k].what,
				    rate_limits[k].help);
		return -1;
	}
	v = argc > 4 ? strtol(argv[4], &end, 10) : -1;
	if (argc < 5 || *end || v < 0 || v > 0x7fffffff) {
		dstr_printf(&ctx->out, "Expects an integer value.\n");
		return -1;
	}
	rate_limits[k].set((int)v);
	return 0;
}

static struct cli_kw process_cli_kws[] = {
	{ { "show", "activity", NULL }, "show activity", "show the event loop's activity counters",
	  CLI_LVL_USER, cli_show_activity },
	{ { "set", "rate-limit", NULL }, "set rate-limit connections|http-compression|sessions|ssl-sessions global <value>",
	  "change the process-wide connection rate, compression input rate, session rate or TLS "
	  "session rate limit (0: none)", CLI_LVL_ADMIN,
	  cli_set_rate_limit },
	{ { "show", "env", NULL }, "show env [<name>]", "dump the environment, or one variable",
	  CLI_LVL_OPERATOR, cli_show_env },
	{ { "set", "maxconn", "global", NULL }, "set maxconn global <value>",
	  "change the process-wide connection limit", CLI_LVL_ADMIN, cli_set_maxconn_global },
};

SLUICE_INIT(process_register)
{
	cfg_register_sections(process_sections, ARRAY_SIZE(process_sections));
	cfg_register(process_kws, ARRAY_SIZE(process_kws));
	cfg_register_postparse(process_postparse, 10);
	cli_register(process_cli_kws, ARRAY_SIZE(process_cli_kws));
}
