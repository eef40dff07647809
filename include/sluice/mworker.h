/* Master-worker mode: a master process that keeps the listening sockets and
 * starts workers on them, and the worker's side of the conversation. */
#ifndef SLUICE_MWORKER_H
#define SLUICE_MWORKER_H

#include <sys/types.h>

#define MW_MAX_CLI 16   /* -S options */

/* What the command line and the global section asked of the master. */
struct mworker_opts {
	char * const *argv;      /* the command line, re-run for each worker */
	const char   *cli[MW_MAX_CLI]; /* -S <addr>[,<bind options>] */
	int           ncli;
	int           systemd;   /* -Ws: sd_notify READY/RELOADING/STOPPING/STATUS */
	const pid_t  *old_pids;  /* -sf/-st: signalled once the first worker runs */
	int           nold;
	int           old_sig;
};

/* Environment variables between the master and its workers. */
#define MW_ENV_CHAN   "SLUICE_MWORKER_FD"    /* the worker's end of its channel */
#define MW_ENV_FDS    "SLUICE_LISTEN_FDS"    /* "<fd>=<key>\n" for each socket */
#define MW_ENV_STATE  "SLUICE_STATE_FD"      /* where the old worker writes its state */

/* How many "program" sections the configuration has (they need
 * master-worker mode). */
int mprog_count(void);

/* Whether the global section said "master-worker". */
int mworker_configured(void);

/* In a process started by a master (MW_ENV_CHAN set): takes the listening
 * sockets the master handed over (listener_pool_add()) and keeps unix socket
 * paths when listeners close. Returns 1 in a worker, 0 otherwise, -1 when
 * the environment is corrupt (alert printed). Call before binding. */
int mworker_worker_init(void);

/* In a worker: whether it replaces another one (a reload). */
int mworker_worker_reload(void);

/* The worker bound everything and is about to serve: replays the state the
 * worker it replaces sent (a bounded wait), closes the handed-over sockets
 * nothing took, sends the master its listening sockets and "ready", and
 * watches the master's channel from now on (stop, state, CLI requests).
 * Needs global.loop. Returns 0 or -1 (the master is gone: exit). */
int mworker_worker_ready(void);

/* Runs the master until its last worker is gone; the configuration was
 * parsed and checked. Returns the exit status. */
int mworker_master_run(const struct mworker_opts *o);

#endif
