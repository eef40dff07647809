/* Shared by the master (master.c) and the worker side (mworker.c). */
#ifndef SLUICE_MWORKER_INT_H
#define SLUICE_MWORKER_INT_H

/* Messages on a worker's channel (SOCK_SEQPACKET): a word, then arguments.
 *   master -> worker: "stop"            soft stop
 *                     "state" + 1 fd    write your reload state there, close it
 *                     "cli <level>" + 1 fd  serve the runtime API on it at
 *                                       that level (the master CLI socket's)
 *   worker -> master: "fds\n<key>\n..." + the listening sockets, in order
 *                     "ready <max-reloads>"  serving; the fds sent are all */
#define MW_MSG_MAX 16384

struct mworker_cfg {
	int configured;         /* "master-worker" */
	int no_exit_on_failure; /* "master-worker no-exit-on-failure" */
	int max_reloads;        /* mworker-max-reloads, -1: no limit */
};

extern struct mworker_cfg mworker_cfg;

#endif
