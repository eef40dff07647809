/* Process set-up from the global section: limits, daemon mode, pid file,
 * privileges, chroot, and signalling previous instances (-sf/-st). */
#ifndef SLUICE_PROCESS_H
#define SLUICE_PROCESS_H

#include <sys/types.h>

struct ev_loop;

/* Raises RLIMIT_NOFILE for maxconn (or to ulimit-n). Returns 0 or -1. */
int process_set_limits(void);

/* Opens the configured pid file, before chroot and privilege changes make
 * it unreachable. Returns 0 (also when none is configured) or -1. */
int process_open_pidfile(void);

/* Detaches from the terminal. Returns in the child only; the parent writes
 * the child's pid to the pid file (if any) and exits. Returns 0 or -1. */
int process_daemonize(void);

/* Writes <pid> to the pid file opened earlier (if any) and closes it.
 * Returns 0 or -1. */
int process_write_pidfile(pid_t pid);

/* The start failed: closes the pid file, and removes it if it did not exist
 * before (one that existed keeps the old process' pid: it is only
 * truncated when written). */
void process_forget_pidfile(void);

/* Whether process_drop_privileges() will succeed, tried in a child process
 * that exits at once (nothing to do without chroot, user or group). Lets a
 * start fail before it takes anything from the process it replaces.
 * Returns 0 or -1 (the alert is printed by the child). */
int process_check_privileges(void);

/* chroot, then group and user switch. Returns 0 or -1 (alert printed). */
int process_drop_privileges(void);

/* Sends <sig> to each of <n> pids (the -sf/-st lists). */
void process_signal_old(const pid_t *pids, int n, int sig);

/* The libev backend the global section asks for: epoll, or poll with
 * noepoll, or select with noepoll and nopoll (tune.c). */
unsigned tune_loop_backend(void);

/* Applies to the running process, once its loop exists, what the global
 * section asked: cpu-map (sched_setaffinity), set-dumpable, busy-polling.
 * A failure is a warning. Returns 0. */
int tune_apply(struct ev_loop *loop);

/* Tells systemd we are ready when started as Type=notify. */
void process_notify_ready(void);

#endif
