/* sluice entry point: command line, start-up order, signals, shutdown. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <sluice/buf.h>
#include <sluice/ccexpr.h>
#include <sluice/check.h>
#include <sluice/fcgi_app.h>
#include <sluice/cfg.h>
#include <sluice/cli.h>
#include <sluice/common.h>
#include <sluice/dns.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/lua.h>
#include <sluice/mworker.h>
#include <sluice/peers.h>
#include <sluice/pipe.h>
#include <sluice/pool.h>
#include <sluice/process.h>
#include <sluice/proxy.h>
#include <sluice/sockxfer.h>
#include <sluice/srv_idle.h>
#include <sluice/stop.h>
#include <sluice/stream.h>
#include <sluice/version.h>
#include <sluice/ticks.h>

#define MAX_CFG_FILES 256
#define MAX_OLD_PIDS  64

struct cmdline {
	const char *files[MAX_CFG_FILES];
	int         nfiles;
	pid_t       old_pids[MAX_OLD_PIDS];
	int         nold;
	int         old_sig;         /* SIGUSR1 for -sf, SIGTERM for -st */
	const char *pidfile;
	int         master;          /* -W or -Ws */
	struct mworker_opts mw;      /* -Ws, -S */
	const char *xfer_sock;       /* -x: the old process' stats socket */
};

static void usage(const char *name, int code)
{
	fprintf(code ? stderr : stdout,
		"Usage: %s [-f <cfgfile|cfgdir>]* [-c] [-d] [-D] [-p <pidfile>] [-q]\n"
		"          [-W|-Ws] [-S <addr>[,<opts>]] [-L <name>]\n"
		"          [-sf|-st <pid>*] [-x <socket>] [-cc <expr>] [-v|-vv] [-- <cfgfile>*]\n"
		"  -f  load a configuration file, or every *.cfg of a directory in order\n"
		"  -c  check the configuration and exit (0 valid, 1 errors, 2 no listener)\n"
		"  -d  run in the foreground, messages on stderr\n"
		"  -D  run as a daemon\n"
		"  -p  write the pid to this file\n"
		"  -q  quiet: no notices or warnings\n"
		"  -W  master-worker mode: a master keeps the sockets and reloads on SIGUSR2\n"
		"  -Ws master-worker mode with systemd notifications (Type=notify)\n"
		"  -S  master CLI socket (master-worker mode): <addr>[,<bind option>]*\n"
		"  -L  the local peer name (default: the host name)\n"
		"  -sf soft-stop these pids once started; -st: hard-stop them\n"
		"  -x  take the listening sockets of the old process from its stats socket\n"
		"  -cc evaluate a condition (version_atleast(), feature(), ...): exit 0 if true, 1 if false\n"
		"  -v  version; -vv: build options and libraries\n", name);
	exit(code);
}

static void parse_cmdline(struct cmdline *cl, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			while (++i < argc && cl->nfiles < MAX_CFG_FILES)
				cl->files[cl->nfiles++] = argv[i];
			break;
		}
		if (strcmp(a, "-f") == 0) {
			if (++i >= argc)
				usage(argv[0], 1);
			if (cl->nfiles == MAX_CFG_FILES) {
				log_alert("too many -f options (max %d)", MAX_CFG_FILES);
				exit(1);
			}
			cl->files[cl->nfiles++] = argv[i];
		} else if (strcmp(a, "-c") == 0) {
			global.flags |= GLB_F_CHECK;
		} else if (strcmp(a, "-d") == 0) {
			global.flags |= GLB_F_DEBUG;
		} else if (strcmp(a, "-D") == 0) {
			global.flags |= GLB_F_DAEMON;
		} else if (strcmp(a, "-q") == 0) {
			global.flags |= GLB_F_QUIET;
			log_set_quiet(1);
		} else if (strcmp(a, "-p") == 0) {
			if (++i >= argc)
				usage(argv[0], 1);
			cl->pidfile = argv[i];
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "-vv") == 0) {
			version_print(stdout, a[2] == 'v');
			exit(0);
		} else if (strcmp(a, "-cc") == 0) {
			const char *err;
			size_t pos;
			int v;

			if (++i >= argc)
				usage(argv[0], 1);
			v = cc_eval(argv[i], &err, &pos);
			if (v < 0) {
				log_alert("-cc: %s at position %zu in '%s'", err, pos, argv[i]);
				exit(2);
			}
			exit(v ? 0 : 1);
		} else if (strcmp(a, "-sf") == 0 || strcmp(a, "-st") == 0) {
			cl->old_sig = a[2] == 'f' ? SIGUSR1 : SIGTERM;
			while (i + 1 < argc && argv[i + 1][0] != '-') {
				char *end;
				long pid = strtol(argv[++i], &end, 10);

				if (*end || pid <= 0) {
					log_alert("%s: '%s' is not a pid", a, argv[i]);
					exit(1);
				}
				if (cl->nold < MAX_OLD_PIDS)
					cl->old_pids[cl->nold++] = (pid_t)pid;
			}
		} else if (strcmp(a, "-x") == 0) {
			if (++i >= argc)
				usage(argv[0], 1);
			cl->xfer_sock = argv[i];
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(argv[0], 0);
		} else if (strcmp(a, "-W") == 0 || strcmp(a, "-Ws") == 0) {
			cl->master = 1;
			cl->mw.systemd |= a[2] == 's';
		} else if (strcmp(a, "-S") == 0) {
			if (++i >= argc)
				usage(argv[0], 1);
			if (cl->mw.ncli == MW_MAX_CLI) {
				log_alert("too many -S options (max %d)", MW_MAX_CLI);
				exit(1);
			}
			cl->mw.cli[cl->mw.ncli++] = argv[i];
		} else if (strcmp(a, "-L") == 0) {
			if (++i >= argc || !*argv[i])
				usage(argv[0], 1);
			setenv("HAPROXY_LOCALPEER", argv[i], 1);
			peers_set_cmdline_name(argv[i]);
		} else {
			log_alert("unknown option '%s'", a);
			usage(argv[0], 1);
		}
	}
	if (!cl->nfiles) {
		log_alert("no configuration file given (use -f <file>)");
		usage(argv[0], 1);
	}
}

static int has_listeners(void)
{
	if (global.cli_listeners)
		return 1;
	for (struct proxy *px = global.proxies; px; px = px->next)
		if ((px->cap & PR_CAP_FE) && px->listeners && !px->disabled)
			return 1;
	return 0;
}

static void signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	if (w->signum == SIGUSR1) {
		stop_soft();
		return;
	}
	if (w->signum == SIGHUP) {
		log_notice("SIGHUP received: %d connection(s) in progress; nothing to reload "
			   "(use -sf to replace the process)", stream_count());
		return;
	}
	/* SIGTERM / SIGINT: hard stop. */
	log_notice("exiting on signal %d", w->signum);
	ev_break(loop, EVBREAK_ALL);
}

static int start_listeners(void)
{
	int ret = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		if ((px->cap & PR_CAP_FE) && !px->disabled && listener_bind_all(px->listeners) == -1) {
			log_alert("Starting %s '%s': cannot bind its sockets",
				  px->cap & PR_CAP_BE ? "proxy" : "frontend", px->name);
			ret = -1;
		}
	if (listener_bind_all(global.cli_listeners) == -1) {
		log_alert("Starting the stats socket: cannot bind it");
		ret = -1;
	}
	if (peers_bind_all() == -1)
		ret = -1;
	return ret;
}

static int open_loggers(void)
{
	int ret = log_open(&global.loggers);

	for (struct proxy *px = global.proxies; px; px = px->next)
		if (log_open(&px->loggers) == -1)
			ret = -1;
	if (fcgi_app_open_logs() == -1)
		ret = -1;
	if (peers_open_logs() == -1)
		ret = -1;
	return ret;
}

static void cleanup(void)
{
	/* Stopping: closing streams must not fill the idle pools again. */
	global.flags |= GLB_F_STOPPING;
	check_stop_all();
	dns_stop_all();
	stream_kill_all();
	srv_idle_close_all();   /* after the streams, which may have given some back */
	cli_close_all();
	peers_close_all();
	for (struct proxy *px = global.proxies; px; px = px->next)
		listener_close_all(px->listeners);
	listener_close_all(global.cli_listeners);
	pipe_flush();
	pool_flush_all();
}

/* A start that failed after binding: the paths and the pid file go back
 * to what they held, everything opened is closed. Returns the exit status. */
static int start_failed(void)
{
	listener_unix_unpublish();
	process_forget_pidfile();
	cleanup();
	return 1;
}

int main(int argc, char **argv)
{
	struct cmdline cl = { .old_sig = SIGUSR1 };
	char host[256];
	static const int signums[] = { SIGTERM, SIGINT, SIGUSR1, SIGHUP };
	ev_signal sigs[ARRAY_SIZE(signums)];
	const char *slash = strrchr(argv[0], '/');
	int errors = 0, worker, bound, reload;

	/* descriptors 0-2 closed by whoever started us would be taken by the
	 * first sockets, and messages written into them */
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF && open("/dev/null", O_RDWR) != fd)
			return 1;
	global.progname = (char *)(slash ? slash + 1 : argv[0]);
	global.pid = getpid();
	global.start_time = tick_wall();
	log_set_identity(global.progname);
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		setenv("HAPROXY_LOCALPEER", host, 0);   /* -L replaces it */
	}
	parse_cmdline(&cl, argc, argv);
	worker = mworker_worker_init();
	if (worker == -1)
		return 1;

	for (int i = 0; i < cl.nfiles; i++)
		errors += cfg_load_path(cl.files[i]);
	if (!errors)
		errors += cfg_postparse();
	if (!errors && mprog_count() && !worker && !cl.master && !mworker_configured()) {
		log_alert("a 'program' section needs master-worker mode (-W, -Ws or "
			  "'master-worker' in the global section)");
		errors++;
	}
	if (errors) {
		log_alert("Fatal errors found in configuration (%d error%s).", errors,
			  errors > 1 ? "s" : "");
		return 1;
	}
	if (global.flags & GLB_F_CHECK) {
		if (!has_listeners()) {
			if (!(global.flags & GLB_F_QUIET))
				printf("Configuration file has no error but will not start (no listener) => exit(2).\n");
			return 2;
		}
		if (!(global.flags & GLB_F_QUIET))
			printf("Configuration file is valid\n");
		return 0;
	}
	if (cl.pidfile) {
		free(global.pidfile);
		global.pidfile = strdup(cl.pidfile);
	}
	if ((global.flags & GLB_F_DEBUG) == 0 && global.daemon)
		global.flags |= GLB_F_DAEMON;
	if (global.flags & GLB_F_DEBUG)
		global.flags &= ~GLB_F_DAEMON;
	if (!worker && (cl.master || mworker_configured())) {
		cl.mw.argv = argv;
		cl.mw.old_pids = cl.old_pids;
		cl.mw.nold = cl.nold;
		cl.mw.old_sig = cl.old_sig;
		signal(SIGPIPE, SIG_IGN);
		return mworker_master_run(&cl.mw);
	}
	if (cl.mw.ncli && !worker) {
		log_alert("-S: the master CLI needs master-worker mode (-W, -Ws or 'master-worker')");
		return 1;
	}
	/* the process replaced hands its tables over through the local peers */
	reload = worker ? mworker_worker_reload() : cl.nold > 0 && cl.old_sig == SIGUSR1;
	if (worker) {
		/* the master detached, keeps the pid file and signalled -sf */
		global.flags &= ~GLB_F_DAEMON;
		free(global.pidfile);
		global.pidfile = NULL;
		cl.nold = 0;
		cl.xfer_sock = NULL;      /* the master hands the sockets over */
	}

	signal(SIGPIPE, SIG_IGN);
	/* core.register_init(): the configuration is known, no traffic yet;
	 * a failure leaves nothing started */
	if (lua_init_run() == -1)
		return 1;
	if (process_set_limits() == -1) {
		cleanup();
		return 1;
	}
	buf_init(global.bufsize);
	/* -x: the old process' listening sockets, taken by the binds that
	 * match (/dev/null: none, as HAProxy). What no bind took is closed. */
	if (cl.xfer_sock && strcmp(cl.xfer_sock, "/dev/null") != 0 &&
	    sockxfer_fetch(cl.xfer_sock) == -1) {
		cleanup();
		return 1;
	}
	bound = start_listeners();
	listener_pool_close();
	if (bound == -1 || open_loggers() == -1)
		return start_failed();
	/* Everything that can fail is done while the terminal still shows the
	 * error: pid file, chroot and privileges come before detaching. Nothing
	 * the process being replaced uses (pid file contents, unix socket
	 * paths) changes before the start is known to succeed. */
	if (process_open_pidfile() == -1 || process_check_privileges() == -1 ||
	    listener_unix_publish() == -1)
		return start_failed();
	if (!(global.flags & GLB_F_DAEMON) && process_write_pidfile(getpid()) == -1)
		return start_failed();
	/* Removing the sockets the paths held needs the privileges dropped
	 * just after (proved to work by process_check_privileges()). */
	listener_unix_settle();
	if (process_drop_privileges() == -1)
		return start_failed();
	if (global.flags & GLB_F_DAEMON) {
		if (process_daemonize() == -1)
			return start_failed();
		global.pid = getpid();
	}
	if (cl.nold)
		process_signal_old(cl.old_pids, cl.nold, cl.old_sig);

	global.loop = ev_default_loop(tune_loop_backend() | EVFLAG_NOENV);
	if (!global.loop) {
		log_alert("cannot create the event loop (%s)", tune_loop_backend() ==
			  EVBACKEND_EPOLL ? "epoll" : "poll/select");
		return 1;
	}
	tune_apply(global.loop);
	for (size_t i = 0; i < ARRAY_SIZE(signums); i++) {
		ev_signal_init(&sigs[i], signal_cb, signums[i]);
		ev_signal_start(global.loop, &sigs[i]);
		ev_unref(global.loop);  /* signals alone do not keep the loop alive */
	}
	if (worker && mworker_worker_ready() == -1) {
		cleanup();
		return 1;
	}
	for (struct proxy *px = global.proxies; px; px = px->next)
		listener_start_all(px->listeners, stream_accept);
	listener_start_all(global.cli_listeners, cli_accept);
	peers_start(reload);
	check_start_all();
	if (dns_start_all() == -1) {
		cleanup();
		return 1;
	}
	lua_tasks_start();
	log_notice("sluice %s started (pid %d, maxconn %d)", SLUICE_VERSION, (int)global.pid,
		   global.maxconn);
	process_notify_ready();

	ev_run(global.loop, 0);

	for (size_t i = 0; i < ARRAY_SIZE(signums); i++) {
		ev_ref(global.loop);
		ev_signal_stop(global.loop, &sigs[i]);
	}
	cleanup();
	lua_deinit();
	peers_free_all();
	proxy_free_all();
	fcgi_app_free_all();
	dns_free_all();
	log_list_free(&global.loggers);
	ev_loop_destroy(global.loop);
	return 0;
}
