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

struct global {
	struct ev_loop  *loop;
	unsigned         flags;           /* GLB_F_* */
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
	uint32_t         hard_stop_after; /* ms a soft stop may last before all is cut, 0: no limit */
	uint32_t         grace;           /* ms listeners keep accepting after a soft stop starts */
	uint32_t         close_spread;    /* close-spread-time: ms over which idle connections close */
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
