/* Process-wide state: one `struct global`, configured by the global section
 * and the command line, plus the runtime counters the stats show. */
#ifndef SLUICE_GLOBAL_H
#define SLUICE_GLOBAL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <sluice/freq.h>
#include <sluice/log.h>

struct ev_loop;
struct proxy;
struct listener;
struct stream;

#define GLB_F_DEBUG    0x01  /* -d: foreground, messages on stderr */
#define GLB_F_DAEMON   0x02  /* -D or "daemon": detach */
#define GLB_F_QUIET    0x04  /* -q */
#define GLB_F_CHECK    0x08  /* -c: check the configuration and exit */
#define GLB_F_STOPPING 0x10  /* soft stop in progress */

/* Global switches of the configuration (struct global.tune_flags): */
#define GLB_T_NOEPOLL      0x001  /* noepoll: the loop uses poll() */
#define GLB_T_NOPOLL       0x002  /* nopoll: with noepoll, select() */
#define GLB_T_NOSPLICE     0x004  /* nosplice: option splice-* are dropped */
#define GLB_T_NOREUSEPORT  0x008  /* noreuseport: no SO_REUSEPORT unless a bind line asks */
#define GLB_T_BUSY_POLL    0x010  /* busy-polling: the loop never sleeps */
#define GLB_T_DUMPABLE     0x020  /* set-dumpable: core dumps allowed after setuid */
#define GLB_T_ZERO_WARNING 0x040  /* zero-warning: a warning fails the start */
#define GLB_T_H1_ANY_BODY  0x080  /* h1-accept-payload-with-any-method */
#define GLB_T_PP2_NEVER_LOCAL 0x100 /* pp2-never-send-local: v2 checks say PROXY, not LOCAL */

struct global {
	struct ev_loop  *loop;
	unsigned         flags;           /* GLB_F_* */
	unsigned char    prof_tasks;      /* streams time their calls (profiling.h) */
	char            *progname;

	/* global section */
	int              daemon;          /* "daemon" keyword */
	int              maxconn;         /* 0 until computed */
	int              ulimit_n;
	uint64_t         strict_limits;   /* strict-limits: an unraisable fd limit is fatal */
	int              nbthread;
	uint32_t         bufsize;         /* tune.bufsize */
	uint32_t         maxrewrite;      /* tune.maxrewrite */
	int              maxhdr;          /* tune.http.maxhdr */
	int              logurilen;       /* tune.http.logurilen: request line kept for logs, 0: 1023 */
	int              maxpipes;        /* tune.maxpipes, 0 = maxconn/4 */
	uint32_t         pipesize;        /* tune.pipesize, 0 = kernel default */
	char            *pidfile;
	char            *chroot;
	char            *node;
	char            *desc;
	char            *user, *group;    /* names, resolved at start-up */
	int              uid, gid;        /* -1 when not set */
	uint32_t         stats_timeout;   /* ms */
	int              spread_checks;   /* percent of jitter on check intervals */
	uint32_t         max_spread_checks; /* ms: bound of the first checks' spread, 0: none */
	uint32_t         hard_stop_after; /* ms a soft stop may last before all is cut, 0: no limit */
	uint32_t         grace;           /* ms listeners keep accepting after a soft stop starts */
	uint32_t         close_spread;    /* close-spread-time: ms over which idle connections close */
	uint64_t         tune_flags;      /* GLB_T_* */
	int              fd_hard_limit;   /* fd-hard-limit: cap of the descriptor limit, 0: none */
	int              sess_rate_limit; /* maxsessrate: 0 = none */
	int              stats_maxconn;   /* stats maxconn: 0 = 10 */
	int              sockbuf[2][2];   /* tune.{rcvbuf,sndbuf}.{client,server}: [snd][server] */
	char            *localpeer;       /* localpeer (the peers section's own name) */
	struct log_list  loggers;

	/* objects */
	struct proxy    *proxies;         /* frontends/backends/listens, config order */
	struct proxy    *defaults;        /* defaults sections, config order */
	struct listener *cli_listeners;   /* stats sockets */

	/* runtime */
	pid_t            pid;
	time_t           start_time;      /* wall clock at start */
	int              curconn;         /* client connections being served */
	int              jobs;            /* curconn + listeners + CLI clients */
	int              listeners;       /* bound listening sockets (stats sockets too) */
	uint64_t         cumconn;
	struct freq_ctr  conn_rate;
	uint32_t         max_conn_rate;
	int              conn_rate_limit; /* maxconnrate, set rate-limit: 0 = none */
	uint64_t         bytes_out;       /* sent to clients and servers */
	uint64_t         spliced_bytes;   /* of which by splice() */
	uint64_t         copied_bytes;    /* of which through a buffer */
};

extern struct global global;

/* Milliseconds of monotonic time from the loop clock: the same as
 * tick_now_ms() (ticks.h), which new code uses; kept for the callers not yet
 * converted. */
uint64_t now_ms(void);

#endif
