/* Shared by the master (master.c) and the worker side (mworker.c). */
#ifndef SLUICE_MWORKER_INT_H
#define SLUICE_MWORKER_INT_H

/* Messages on a worker's channel (SOCK_SEQPACKET): a word, then arguments.
 *   master -> worker: "stop"            soft stop
 *                     "state" + 1 fd    write your reload state there, close it
 *                     "cli <level>" + 1 fd  serve the runtime API on it at
 *                                       that level (the master CLI socket's)
 *   worker -> master: "fds\n<key>\n..." + the listening sockets, in order
 *                     "prog\0<name>\0<start-on-reload>\0<uid|->\0<gid|->\0<argv>..."
 *                                       one per program section, before "ready"
 *                     "ready <max-reloads>"  serving; the fds sent are all */
#define MW_MSG_MAX 16384

struct mworker_cfg {
	int configured;         /* "master-worker" */
	int no_exit_on_failure; /* "master-worker no-exit-on-failure" */
	int max_reloads;        /* mworker-max-reloads, -1: no limit */
};

extern struct mworker_cfg mworker_cfg;

/* ---- program sections (mprog.c) ---- */

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

struct dstr;
struct mprog_def;

/* Worker: sends the configuration's programs on <chan>. Returns 0 or -1. */
int mprog_send_defs(int chan);

/* Master: appends the program of message <msg> (<len> bytes, starting
 * with "prog\0") to <list>. Returns 0, or -1 when it is malformed. */
int mprog_def_take(struct mprog_def **list, const char *msg, size_t len);

/* Frees every definition of <list>. */
void mprog_defs_free(struct mprog_def **list);

/* Master: the worker that sent <defs> serves now. <first>: the first
 * worker (every program starts); else a reload: every current instance
 * gets SIGUSR1, and a program starts again unless its section says "no
 * option start-on-reload" and its instance still runs. Takes <defs>. */
void mprog_apply(struct mprog_def **defs, int first);

/* Master: process <pid> ended with <status> (described into <how>).
 * Returns -1 when it is no program, 1 when it was a current program and
 * the master is not <stopping> (exit-on-failure applies), else 0. */
int mprog_reap(pid_t pid, int status, int stopping, char *how, size_t how_size);

/* Master: sends <sig> to every instance. */
void mprog_kill_all(int sig);

/* Master: "# programs" and a line per current instance, for show proc. */
void mprog_show(struct dstr *out, void (*uptime)(time_t since, char *buf, size_t size));

#endif
