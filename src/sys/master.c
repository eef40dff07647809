/* Master-worker mode, the master (mworker.h): it runs each worker from the
 * command line it was given, keeps the workers' listening sockets between
 * them, reloads on SIGUSR2 or its CLI (-S), forwards signals, reports to
 * systemd, and never touches traffic. The worker's side is mworker.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#ifdef USE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/fdpass.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/mworker.h>
#include <sluice/process.h>
#include <sluice/str.h>
#include <sluice/ticks.h>
#include <sluice/version.h>
#include "mworker_int.h"

#define MW_LOG_MAX    65536  /* bytes of a starting worker's output kept */
#define MCLI_LINE_MAX 16384  /* longest master CLI line */
#define MCLI_IDLE_MS  60000  /* an idle master CLI connection closes */
#define MCLI_RELAY_MAX (1u << 20) /* a worker's answer buffered for a slow client */
#define MCLI_WAIT_MS  300000 /* longest wait for the outcome of a reload */

enum worker_state {
	W_STARTING,   /* exec'd, not ready yet */
	W_CURRENT,    /* the one serving */
	W_OLD,        /* replaced, finishing what it had */
};

struct worker {
	struct worker    *next;
	pid_t             pid;
	int               num;          /* 1, 2, ... in start order */
	enum worker_state st;
	int               reloads;      /* reloads since it was started */
	time_t            started;
	int               chan;         /* SOCK_SEQPACKET to the worker, or -1 */
	ev_io             chan_io;
	int               errfd;        /* its stderr (a pipe), or -1 */
	ev_io             err_io;
	struct dstr       log;          /* its output until ready (MW_LOG_MAX) */
	int               nfds;         /* listening sockets it reported */
	int              *fds;
	char            **keys;
	int               max_reloads;  /* its mworker-max-reloads, -1: none */
	int               termed;       /* SIGTERM sent for max reloads */
	struct mprog_def *progs;        /* its program sections, until it is ready */
};

/* A connection to the master CLI. */
struct mcli {
	struct mcli     *next, **pprev;
	int              fd;
	ev_io            io;
	ev_timer         timer;
	struct listener *li;
	char             in[MCLI_LINE_MAX];
	size_t           inlen;
	struct dstr      out;
	size_t           out_done;
	int              interactive;
	int              waiting;       /* for the outcome of a reload */
	int              relay;         /* a worker's CLI being relayed, or -1 */
	ev_io            relay_io;
	int              closing;       /* close once the output is written */
	int              eof;           /* the client sent everything */
	int              events;        /* watched on fd (mcli_want()) */
	int              relay_shut;    /* the relay was told the client's end */
};

static struct {
	const struct mworker_opts *o;
	char              exe[PATH_MAX];
	struct worker    *workers;
	int               next_num;
	int               nfds;         /* the listening sockets kept for workers */
	int              *fds;
	char            **keys;
	int               reload_pending;
	int               reloads;      /* reloads that started a worker */
	int               failed;       /* reloads whose worker did not start */
	struct dstr       startup_log;  /* the last worker's output until ready */
	int               stopping;     /* exit once the workers are gone */
	int               crashed;      /* the current worker died: stay for a reload
	                                   (master-worker no-exit-on-failure) */
	int               status;       /* exit status */
	time_t            start;
	struct listener  *cli;          /* -S sockets */
	struct mcli      *clients;
	ev_child          child;
	ev_signal         sigs[5];
} m = { .next_num = 1 };

/* ---- systemd ---- */

static void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notify(const char *fmt, ...)
{
#ifdef USE_SYSTEMD
	char buf[512];
	va_list ap;

	if (!m.o->systemd || !getenv("NOTIFY_SOCKET"))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sd_notify(0, buf);
#else
	(void)fmt;
#endif
}

static void notify_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=Reloading the configuration",
	       (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
}

/* ---- workers ---- */

static struct worker *worker_current(void)
{
	for (struct worker *w = m.workers; w; w = w->next)
		if (w->st == W_CURRENT)
			return w;
	return NULL;
}

static struct worker *worker_starting(void)
{
	for (struct worker *w = m.workers; w; w = w->next)
		if (w->st == W_STARTING)
			return w;
	return NULL;
}

static void sockets_free(int *n, int **fds, char ***keys)
{
	for (int i = 0; i < *n; i++) {
		close((*fds)[i]);
		free((*keys)[i]);
	}
	free(*fds);
	free(*keys);
	*fds = NULL;
	*keys = NULL;
	*n = 0;
}

static void worker_free(struct worker *w)
{
	for (struct worker **pp = &m.workers; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	if (w->chan >= 0) {
		ev_io_stop(global.loop, &w->chan_io);
		close(w->chan);
	}
	if (w->errfd >= 0) {
		ev_io_stop(global.loop, &w->err_io);
		close(w->errfd);
	}
	sockets_free(&w->nfds, &w->fds, &w->keys);
	dstr_free(&w->log);
	mprog_defs_free(&w->progs);
	free(w);
}

static void mcli_reload_done(int ok, const char *why);

/* Reads what the worker wrote on its stderr until none is left: copied to
 * ours, and kept while it starts. */
static void worker_read_output(struct worker *w)
{
	char buf[4096];

	while (w->errfd >= 0) {
		ssize_t n = read(w->errfd, buf, sizeof(buf));

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			ev_io_stop(global.loop, &w->err_io);
			close(w->errfd);
			w->errfd = -1;
			return;
		}
		if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
			/* nowhere to say it */
		}
		if (w->st == W_STARTING && w->log.len + (size_t)n <= MW_LOG_MAX)
			dstr_add(&w->log, buf, (size_t)n);
	}
}

static void worker_err_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	worker_read_output(io->data);
}

static void worker_send(struct worker *w, const char *msg, int fd)
{
	if (w->chan < 0 || fdpass_send(w->chan, msg, strlen(msg), &fd, fd >= 0) == -1)
		log_warning("cannot send '%s' to worker %d (pid %d): %s", msg, w->num,
			    (int)w->pid, w->chan < 0 ? "its channel is closed" : strerror(errno));
}

/* The older workers have survived one more reload: those past the newest
 * worker's mworker-max-reloads are told to leave now. */
static void workers_check_max_reloads(const struct worker *cur)
{
	if (cur->max_reloads < 0)
		return;
	for (struct worker *w = m.workers; w; w = w->next)
		if (w->st == W_OLD && !w->termed && w->reloads > cur->max_reloads) {
			log_event(LOG_L_WARNING, "worker %d (pid %d) survived %d reloads "
				  "(mworker-max-reloads %d): terminating it", w->num, (int)w->pid,
				  w->reloads, cur->max_reloads);
			kill(w->pid, SIGTERM);
			w->termed = 1;
		}
}

static void master_reload(void);

/* <w> runs: it replaces the current worker, and its sockets are the ones
 * kept for the next. */
static void worker_ready(struct worker *w)
{
	int first = !worker_current() && !m.reloads;

	for (struct worker *o = m.workers; o; o = o->next) {
		if (o == w)
			continue;
		o->reloads++;
		if (o->st == W_CURRENT) {
			o->st = W_OLD;
			worker_send(o, "stop", -1);
		}
	}
	w->st = W_CURRENT;
	m.crashed = 0;
	sockets_free(&m.nfds, &m.fds, &m.keys);
	m.nfds = w->nfds;
	m.fds = w->fds;
	m.keys = w->keys;
	w->nfds = 0;
	w->fds = NULL;
	w->keys = NULL;
	m.startup_log.len = 0;
	dstr_add(&m.startup_log, w->log.p ? w->log.p : "", w->log.len);
	dstr_free(&w->log);
	workers_check_max_reloads(w);
	mprog_apply(&w->progs, first);
	if (first) {
		log_event(LOG_L_NOTICE, "master: worker %d (pid %d) started", w->num, (int)w->pid);
		if (m.o->nold)
			process_signal_old(m.o->old_pids, m.o->nold, m.o->old_sig);
		notify("READY=1\nMAINPID=%lu\nSTATUS=Ready: worker %d (pid %d)",
		       (unsigned long)getpid(), w->num, (int)w->pid);
	} else {
		log_event(LOG_L_NOTICE, "master: reload %d done: worker %d (pid %d) serves",
			  m.reloads, w->num, (int)w->pid);
		notify("READY=1\nSTATUS=Reloaded: worker %d (pid %d), %d reload(s), %d failed",
		       w->num, (int)w->pid, m.reloads, m.failed);
	}
	mcli_reload_done(1, NULL);
	if (m.reload_pending) {
		m.reload_pending = 0;
		master_reload();
	}
}

/* Messages from a worker: its sockets, then "ready". */
static void worker_chan_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	struct worker *w = io->data;
	char msg[MW_MSG_MAX + 1];
	int fds[FDPASS_MAX], nfds = 0;
	ssize_t n = fdpass_recv(w->chan, msg, sizeof(msg) - 1, fds, FDPASS_MAX, &nfds);

	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		/* it is exiting: its end is reported by the child watcher */
		ev_io_stop(loop, io);
		close(w->chan);
		w->chan = -1;
		return;
	}
	msg[n] = 0;
	if (w->st == W_STARTING && strncmp(msg, "fds\n", 4) == 0) {
		char *save = NULL, *key = strtok_r(msg + 4, "\n", &save);
		int i = 0;

		for (; key && i < nfds; key = strtok_r(NULL, "\n", &save), i++) {
			w->fds = xrealloc(w->fds, sizeof(*w->fds) * (size_t)(w->nfds + 1));
			w->keys = xrealloc(w->keys, sizeof(*w->keys) * (size_t)(w->nfds + 1));
			w->fds[w->nfds] = fds[i];
			w->keys[w->nfds++] = xstrdup(key);
		}
		for (; i < nfds; i++)
			close(fds[i]);
		return;
	}
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (w->st == W_STARTING && n > 5 && memcmp(msg, "prog", 5) == 0) {
		if (mprog_def_take(&w->progs, msg, (size_t)n) == -1)
			log_warning("master: malformed program from worker %d (pid %d)", w->num,
				    (int)w->pid);
		return;
	}
	if (w->st == W_STARTING && strncmp(msg, "ready ", 6) == 0) {
		w->max_reloads = atoi(msg + 6);
		worker_ready(w);
		return;
	}
	log_warning("master: unexpected message from worker %d (pid %d): '%.20s'", w->num,
		    (int)w->pid, msg);
}

/* In the child, between fork() and exec(): the descriptors a worker gets,
 * and nothing of the master's signal handling. Only async-signal-safe
 * calls before exec. */
static void child_exec(int chan, int errw, int state, const char *fds_env)
{
	sigset_t none;
	char buf[16];

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGPIPE)
			signal(s, SIG_DFL);
	if (dup2(errw, STDERR_FILENO) == -1)
		_exit(126);
	fcntl(chan, F_SETFD, 0);
	if (state >= 0)
		fcntl(state, F_SETFD, 0);
	for (int i = 0; i < m.nfds; i++)
		fcntl(m.fds[i], F_SETFD, 0);
	snprintf(buf, sizeof(buf), "%d", chan);
	setenv(MW_ENV_CHAN, buf, 1);
	if (state >= 0) {
		snprintf(buf, sizeof(buf), "%d", state);
		setenv(MW_ENV_STATE, buf, 1);
	}
	if (fds_env)
		setenv(MW_ENV_FDS, fds_env, 1);
	unsetenv("NOTIFY_SOCKET");       /* systemd talks to the master only */
	execv(m.exe, (char * const *)m.o->argv);
	dprintf(STDERR_FILENO, "[ALERT] (%d) : cannot run '%s': %s\n", (int)getpid(), m.exe,
		strerror(errno));
	_exit(127);
}

/* Starts a worker with the kept sockets; the current worker, if any, is
 * asked for its state, written straight to the new one. Returns 0 or -1. */
static int worker_spawn(void)
{
	struct worker *cur = worker_current();
	int chan[2] = { -1, -1 }, err[2] = { -1, -1 }, st[2] = { -1, -1 };
	struct dstr env = { 0 };
	struct worker *w;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1 ||
	    (cur && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, st) == -1)) {
		log_alert("master: cannot start a worker: %s", strerror(errno));
		goto fail;
	}
	for (int i = 0; i < m.nfds; i++)
		dstr_printf(&env, "%d=%s\n", m.fds[i], m.keys[i]);
	pid = fork();
	if (pid == -1) {
		log_alert("master: cannot fork a worker: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0)
		child_exec(chan[1], err[1], st[1], env.p);
	dstr_free(&env);
	close(chan[1]);
	close(err[1]);
	if (cur) {
		close(st[1]);
		worker_send(cur, "state", st[0]);
		close(st[0]);
	}
	w = xcalloc(1, sizeof(*w));
	w->pid = pid;
	w->num = m.next_num++;
	w->st = W_STARTING;
	w->started = tick_wall();
	w->max_reloads = -1;
	w->chan = chan[0];
	w->errfd = err[0];
	fcntl(w->chan, F_SETFL, O_NONBLOCK);
	fcntl(w->errfd, F_SETFL, O_NONBLOCK);
	ev_io_init(&w->chan_io, worker_chan_cb, w->chan, EV_READ);
	w->chan_io.data = w;
	ev_io_start(global.loop, &w->chan_io);
	ev_io_init(&w->err_io, worker_err_cb, w->errfd, EV_READ);
	w->err_io.data = w;
	ev_io_start(global.loop, &w->err_io);
	w->next = m.workers;
	m.workers = w;
	return 0;
fail:
	dstr_free(&env);
	for (int i = 0; i < 2; i++) {
		if (chan[i] >= 0)
			close(chan[i]);
		if (err[i] >= 0)
			close(err[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	return -1;
}

static void master_stop(int sig)
{
	if (!m.stopping)
		notify("STOPPING=1\nSTATUS=Stopping");
	m.stopping = 1;
	for (struct worker *w = m.workers; w; w = w->next)
		kill(w->pid, sig);
	mprog_kill_all(SIGTERM);   /* a stop or a restart: programs get SIGTERM */
	if (!m.workers)
		ev_break(global.loop, EVBREAK_ALL);
}

static void exit_desc(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exit code %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
			 WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, size, "status %d", status);
}

static void child_cb(struct ev_loop *loop, ev_child *c, int revents)
{
	struct worker *w = m.workers;
	int failed = !WIFEXITED(c->rstatus) || WEXITSTATUS(c->rstatus) != 0;
	char how[96];
	int r = mprog_reap(c->rpid, c->rstatus, m.stopping, how, sizeof(how));

	if (r == 1 && !mworker_cfg.no_exit_on_failure) {
		/* as for a worker: the exit code is the program's */
		log_event(LOG_L_ALERT, "master: stopping every process (exit-on-failure; "
			  "master-worker no-exit-on-failure would keep them)");
		m.status = WIFEXITED(c->rstatus) ? WEXITSTATUS(c->rstatus) :
			   128 + WTERMSIG(c->rstatus);
		master_stop(SIGTERM);
	}
	if (r >= 0)
		return;
	while (w && w->pid != c->rpid)
		w = w->next;
	if (!w)
		return;
	exit_desc(c->rstatus, how, sizeof(how));
	worker_read_output(w);   /* its last words: why it failed */
	if (w->st == W_STARTING && m.stopping) {
		/* stopped with the master: not a failed reload */
		log_event(LOG_L_NOTICE, "master: starting worker %d (pid %d) left (%s)", w->num,
			  (int)w->pid, how);
		worker_free(w);
		mcli_reload_done(0, "the master is stopping");
	} else if (w->st == W_STARTING) {
		m.failed += m.reloads || worker_current() ? 1 : 0;
		m.startup_log.len = 0;
		dstr_add(&m.startup_log, w->log.p ? w->log.p : "", w->log.len);
		if (!worker_current() && !m.reloads) {
			log_alert("master: the worker failed to start (%s)", how);
			m.status = 1;
			worker_free(w);
			master_stop(SIGTERM);
			return;
		}
		log_event(LOG_L_ALERT, "master: reload failed: the new worker %d (pid %d) did "
			  "not start (%s); the previous worker keeps serving", w->num, (int)w->pid,
			  how);
		notify("READY=1\nSTATUS=Reload failed (%s); the previous worker serves", how);
		worker_free(w);
		mcli_reload_done(0, how);
		if (m.reload_pending && !m.stopping) {
			m.reload_pending = 0;
			master_reload();
		}
	} else if (w->st == W_CURRENT && !m.stopping) {
		if (failed) {
			log_event(LOG_L_ALERT, "master: worker %d (pid %d) died (%s)%s", w->num,
				  (int)w->pid, how, mworker_cfg.no_exit_on_failure ? "" :
				  ": stopping every worker (master-worker no-exit-on-failure "
				  "would keep the others)");
			if (!mworker_cfg.no_exit_on_failure) {
				m.status = WIFEXITED(c->rstatus) ? WEXITSTATUS(c->rstatus) :
					   128 + WTERMSIG(c->rstatus);
				worker_free(w);
				master_stop(SIGTERM);
				return;
			}
			m.crashed = 1;
		} else {
			log_event(LOG_L_WARNING, "master: worker %d (pid %d) left (%s)", w->num,
				  (int)w->pid, how);
		}
		worker_free(w);
	} else {
		log_event(LOG_L_NOTICE, "master: %s worker %d (pid %d) left (%s)",
			  w->st == W_OLD ? "old" : "current", w->num, (int)w->pid, how);
		worker_free(w);
	}
	if (!m.workers && !m.stopping && m.crashed) {
		log_event(LOG_L_ALERT, "master: no worker left; staying for a reload "
			  "(master-worker no-exit-on-failure)");
		notify("STATUS=No worker: waiting for a reload");
	} else if (!m.workers) {
		if (!m.stopping)
			log_event(LOG_L_NOTICE, "master: no worker left: exiting");
		m.stopping = 1;
		ev_break(loop, EVBREAK_ALL);
	}
}

/* SIGUSR2 or the master CLI's "reload": one at a time; one asked while a
 * worker starts runs when that one is known to run or to have failed. */
static void master_reload(void)
{
	if (m.stopping) {
		mcli_reload_done(0, "the master is stopping");
		return;
	}
	if (worker_starting()) {
		m.reload_pending = 1;
		return;
	}
	log_event(LOG_L_NOTICE, "master: reloading (reload %d)", m.reloads + 1);
	notify_reloading();
	m.reloads++;
	if (worker_spawn() == -1) {
		m.failed++;
		notify("READY=1\nSTATUS=Reload failed: cannot start a worker");
		mcli_reload_done(0, "cannot start a worker");
	}
}

static void signal_cb(struct ev_loop *loop, ev_signal *s, int revents)
{
	switch (s->signum) {
	case SIGUSR2:
		master_reload();
		break;
	case SIGUSR1:
		log_event(LOG_L_NOTICE, "master: soft stop asked: passed to the workers");
		master_stop(SIGUSR1);
		break;
	case SIGHUP:
		for (struct worker *w = m.workers; w; w = w->next)
			kill(w->pid, SIGHUP);
		break;
	default:
		/* as HAProxy's master does: 128 + the signal (systemd units list
		 * 143 in SuccessExitStatus) */
		log_event(LOG_L_NOTICE, "master: exiting on signal %d", s->signum);
		if (!m.status)
			m.status = 128 + s->signum;
		master_stop(SIGTERM);
		break;
	}
}

/* ---- the master CLI ---- */

static void mcli_free(struct mcli *c)
{
	ev_io_stop(global.loop, &c->io);    /* also forgets an event fed to it */
	ev_timer_stop(global.loop, &c->timer);
	if (c->relay >= 0) {
		ev_io_stop(global.loop, &c->relay_io);
		close(c->relay);
	}
	close(c->fd);
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	dstr_free(&c->out);
	listener_release(c->li);
	free(c);
}

/* Watches what <c> waits for on its socket: room to write what is
 * pending, and input while there is room for it and the client may still
 * send (also during a reload or a relay: the next commands wait in the
 * buffer). */
static void mcli_want(struct mcli *c)
{
	int ev = 0;

	if (c->out_done < c->out.len)
		ev |= EV_WRITE;
	if (!c->eof && c->inlen < sizeof(c->in))
		ev |= EV_READ;
	if (ev == c->events)
		return;
	ev_io_stop(global.loop, &c->io);
	c->events = ev;
	if (ev) {
		ev_io_set(&c->io, c->fd, ev);
		ev_io_start(global.loop, &c->io);
	}
}

/* Comes back to <c> from the loop: its next step never runs inside the
 * caller's (no recursion, a client freed meanwhile is forgotten). */
static void mcli_later(struct mcli *c)
{
	ev_feed_event(global.loop, &c->io, EV_CUSTOM);
}

/* Sends what is pending, without blocking. Returns 0, or -1 when the
 * client is gone (freed). */
static int mcli_send(struct mcli *c)
{
	while (c->out_done < c->out.len) {
		ssize_t n = send(c->fd, c->out.p + c->out_done, c->out.len - c->out_done,
				 MSG_NOSIGNAL);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			mcli_free(c);
			return -1;
		}
		c->out_done += (size_t)n;
		ev_timer_again(global.loop, &c->timer);
	}
	c->out.len = 0;
	c->out_done = 0;
	return 0;
}

/* A command ended: a prompt in interactive mode, else the connection
 * closes once the answer left. */
static void mcli_end_cmd(struct mcli *c)
{
	if (c->interactive && !c->eof)
		dstr_printf(&c->out, "\nmaster> ");
	else
		c->closing = 1;
}

static void mcli_command(struct mcli *c, char *line);

/* Drives <c>: sends what is pending, then runs the next complete command
 * line (one per call), or closes when it is done. May free <c>. */
static void mcli_run(struct mcli *c)
{
	char *nl;
	size_t len;

	if (mcli_send(c) == -1)
		return;
	if (c->relay >= 0 && !ev_is_active(&c->relay_io) && c->out_done == c->out.len)
		ev_io_start(global.loop, &c->relay_io);   /* the client took the last part */
	if (c->relay >= 0 && c->eof && !c->relay_shut) {
		/* the client sends no more: neither does the worker's CLI get
		 * more (an interactive session there ends) */
		shutdown(c->relay, SHUT_WR);
		c->relay_shut = 1;
	}
	if (c->waiting || c->relay >= 0 || c->out.len) {
		mcli_want(c);
		return;
	}
	if (c->closing) {
		mcli_free(c);
		return;
	}
	nl = memchr(c->in, '\n', c->inlen);
	if (!nl && c->eof && c->inlen) {
		c->in[c->inlen++] = '\n';   /* a last command without newline (eof: room left) */
		nl = c->in + c->inlen - 1;
	}
	if (!nl) {
		if (c->eof) {
			mcli_free(c);
			return;
		}
		if (c->inlen == sizeof(c->in)) {
			dstr_printf(&c->out, "Command line too long (at most %d bytes)\n",
				    MCLI_LINE_MAX - 1);
			c->inlen = 0;
			c->closing = 1;
			mcli_later(c);
		}
		mcli_want(c);
		return;
	}
	len = (size_t)(nl - c->in);
	*nl = 0;
	if (len && c->in[len - 1] == '\r')
		c->in[len - 1] = 0;
	mcli_command(c, c->in);
	memmove(c->in, nl + 1, c->inlen - len - 1);
	c->inlen -= len + 1;
	mcli_later(c);   /* send the answer, then the next command */
}

static void mcli_reload_done(int ok, const char *why)
{
	for (struct mcli *c = m.clients; c; c = c->next) {
		if (!c->waiting)
			continue;
		c->waiting = 0;
		dstr_printf(&c->out, "Success=%d\n--\n", ok);
		if (why)
			dstr_printf(&c->out, "%s\n", why);
		dstr_add(&c->out, m.startup_log.p ? m.startup_log.p : "", m.startup_log.len);
		mcli_end_cmd(c);
		c->timer.repeat = tick_to_ev(MCLI_IDLE_MS);
		ev_timer_again(global.loop, &c->timer);
		mcli_later(c);
	}
}

static void uptime_str(time_t since, char *buf, size_t size)
{
	long up = (long)(tick_wall() - since);

	if (up < 0)
		up = 0;
	snprintf(buf, size, "%ldd%02ldh%02ldm%02lds", up / 86400, up / 3600 % 24, up / 60 % 60,
		 up % 60);
}

static void mcli_proc_line(struct mcli *c, const struct worker *w)
{
	char up[32], reloads[16];

	uptime_str(w->started, up, sizeof(up));
	snprintf(reloads, sizeof(reloads), "%d", w->reloads);
	dstr_printf(&c->out, "%-15d %-15s %-15s %-15s %s%s\n", (int)w->pid, "worker", reloads, up,
		    SLUICE_VERSION, w->st == W_STARTING ? " (starting)" : "");
}

/* show proc: the master, then the current (and a starting) worker, then
 * the old workers still finishing their connections. */
static void mcli_show_proc(struct mcli *c)
{
	char up[32], reloads[48];

	uptime_str(m.start, up, sizeof(up));
	snprintf(reloads, sizeof(reloads), "%d [failed: %d]", m.reloads, m.failed);
	dstr_printf(&c->out, "#%-14s %-15s %-15s %-15s %s\n", "<PID>", "<type>", "<reloads>",
		    "<uptime>", "<version>");
	dstr_printf(&c->out, "%-15d %-15s %-15s %-15s %s\n", (int)getpid(), "master", reloads, up,
		    SLUICE_VERSION);
	dstr_printf(&c->out, "# workers\n");
	for (const struct worker *w = m.workers; w; w = w->next)
		if (w->st != W_OLD)
			mcli_proc_line(c, w);
	dstr_printf(&c->out, "# old workers\n");
	for (const struct worker *w = m.workers; w; w = w->next)
		if (w->st == W_OLD)
			mcli_proc_line(c, w);
	mprog_show(&c->out, uptime_str);
}

static void mcli_relay_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	struct mcli *c = io->data;
	char buf[16384];
	ssize_t n = read(c->relay, buf, sizeof(buf));

	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	ev_timer_again(loop, &c->timer);
	if (n > 0) {
		dstr_add(&c->out, buf, (size_t)n);
		if (c->out.len - c->out_done > MCLI_RELAY_MAX)
			ev_io_stop(loop, io);   /* resumed once the client took it */
		mcli_later(c);
		return;
	}
	ev_io_stop(loop, io);
	close(c->relay);
	c->relay = -1;
	mcli_end_cmd(c);
	mcli_later(c);
}

/* "@<n>", "@!<pid>": the worker a command goes to. */
static struct worker *mcli_target(const char *w)
{
	char *end;
	long v;

	if (w[1] == '!') {
		v = strtol(w + 2, &end, 10);
		if (*end || v <= 0)
			return NULL;
		for (struct worker *k = m.workers; k; k = k->next)
			if (k->pid == (pid_t)v)
				return k;
		return NULL;
	}
	v = strtol(w + 1, &end, 10);
	if (*end || v != 1)
		return NULL;
	return worker_current();
}

/* Sends <cmd> to <w>'s runtime API, at the level of this master CLI
 * socket, and relays the answer. */
static void mcli_forward(struct mcli *c, struct worker *w, const char *cmd)
{
	char msg[16];
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp) == -1) {
		dstr_printf(&c->out, "cannot reach the worker: %s\n", strerror(errno));
		mcli_end_cmd(c);
		return;
	}
	snprintf(msg, sizeof(msg), "cli %d", c->li->bc->level);
	if (w->chan < 0 || fdpass_send(w->chan, msg, strlen(msg), &sp[1], 1) == -1 ||
	    dprintf(sp[0], "%s\n", cmd) < 0) {
		close(sp[0]);
		close(sp[1]);
		dstr_printf(&c->out, "cannot reach worker %d (pid %d)\n", w->num, (int)w->pid);
		mcli_end_cmd(c);
		return;
	}
	close(sp[1]);
	c->relay = sp[0];
	c->relay_shut = 0;
	ev_io_init(&c->relay_io, mcli_relay_cb, sp[0], EV_READ);
	c->relay_io.data = c;
	ev_io_start(global.loop, &c->relay_io);
}

static const char mcli_help[] =
	"The following commands are valid at this level:\n"
	"  help                  : this list\n"
	"  prompt                : toggle interactive mode with a prompt\n"
	"  quit                  : close this connection\n"
	"  show proc             : the master and its workers\n"
	"  show startup-logs     : the output of the last worker started, until it ran\n"
	"  reload                : start a worker on the configuration as it is now; answers\n"
	"                          Success=1 or Success=0 and the new worker's output\n"
	"  @<n> <command>        : run <command> on the current worker's CLI (n = 1)\n"
	"  @!<pid> <command>     : run <command> on the CLI of worker <pid> (old ones too)\n"
	"  @master <command>     : run <command> here\n";

/* Runs one command line: its answer goes to c->out; a reload or a relay
 * answers later. Never sends nor frees (mcli_run() does). */
static void mcli_command(struct mcli *c, char *line)
{
	char *cmd = line;

	while (*cmd == ' ' || *cmd == '\t')
		cmd++;
	if (*cmd == '@') {
		char *sp = cmd + strcspn(cmd, " \t");
		struct worker *w;

		if (*sp)
			*sp++ = 0;
		while (*sp == ' ' || *sp == '\t')
			sp++;
		if (strcmp(cmd, "@master") == 0) {
			cmd = sp;
		} else if (!(w = mcli_target(cmd))) {
			dstr_printf(&c->out, "Can't find the target process '%s'\n", cmd);
			mcli_end_cmd(c);
			return;
		} else if (!*sp) {
			dstr_printf(&c->out, "Missing command after '%s'\n", cmd);
			mcli_end_cmd(c);
			return;
		} else {
			mcli_forward(c, w, sp);
			return;
		}
	}
	if (strcmp(cmd, "quit") == 0) {
		c->closing = 1;
		return;
	}
	if (strcmp(cmd, "prompt") == 0) {
		c->interactive = !c->interactive;
		if (!c->interactive) {
			c->closing = 1;
			return;
		}
	} else if (strcmp(cmd, "help") == 0 || !*cmd) {
		if (*cmd || !c->interactive)
			dstr_printf(&c->out, "%s", mcli_help);
	} else if (strcmp(cmd, "show proc") == 0) {
		mcli_show_proc(c);
	} else if (strcmp(cmd, "show startup-logs") == 0) {
		dstr_add(&c->out, m.startup_log.p ? m.startup_log.p : "", m.startup_log.len);
	} else if (strcmp(cmd, "reload") == 0) {
		if (c->li->bc->level >= CLI_LVL_ADMIN) {
			c->waiting = 1;
			c->timer.repeat = tick_to_ev(MCLI_WAIT_MS);
			ev_timer_again(global.loop, &c->timer);
			master_reload();   /* may answer at once (mcli_reload_done()) */
			return;
		}
		dstr_printf(&c->out, "Permission denied\n");
	} else {
		dstr_printf(&c->out, "Unknown command: '%s'. Type 'help' for the list.\n", cmd);
	}
	mcli_end_cmd(c);
}

static void mcli_io_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	struct mcli *c = io->data;

	if (revents & EV_READ) {
		ssize_t n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, 0);

		if (n == -1 && errno != EINTR && errno != EAGAIN) {
			mcli_free(c);
			return;
		}
		if (n == 0)
			c->eof = 1;   /* half-closed: what came is answered, then the end */
		if (n > 0) {
			c->inlen += (size_t)n;
			if (!c->waiting)
				ev_timer_again(loop, &c->timer);
		}
	}
	mcli_run(c);
}

static void mcli_timer_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	mcli_free(t->data);
}

static void mcli_accept(struct listener *li, int fd, struct sockaddr_storage *addr,
                        socklen_t alen)
{
	struct mcli *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		listener_release(li);
		return;
	}
	c->fd = fd;
	c->li = li;
	c->relay = -1;
	ev_io_init(&c->io, mcli_io_cb, fd, 0);
	c->io.data = c;
	ev_init(&c->timer, mcli_timer_cb);
	c->timer.repeat = tick_to_ev(MCLI_IDLE_MS);
	c->timer.data = c;
	ev_timer_again(global.loop, &c->timer);
	c->next = m.clients;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &m.clients;
	m.clients = c;
	mcli_want(c);
}

static int mcli_parse(const char *spec)
{
	struct cfg_ctx ctx = { .file = "command line", .line = 0, .kw = "-S", .secname = "-S" };
	char *copy = xstrdup(spec), *save = NULL, *argv[64];
	int argc = 0, ret, explicit_level = 0;

	for (char *w = strtok_r(copy, ",", &save); w && argc < 64; w = strtok_r(NULL, ",", &save))
		argv[argc++] = w;
	if (!argc) {
		log_alert("-S: expects an address ('/path', 'ipv4@ip:port', 'fd@N') and options");
		free(copy);
		return -1;
	}
	/* options are split on ',' too: "-S /run/m.sock,mode,600,level,operator" */
	ret = listener_parse_bind(&ctx, &m.cli, NULL, argc, argv, 1);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "level") == 0)
			explicit_level = 1;
	for (struct listener *li = m.cli; ret == 0 && li && !explicit_level; li = li->next)
		li->bc->level = CLI_LVL_ADMIN;    /* the master CLI is admin unless told */
	free(copy);
	return ret;
}

int mworker_master_run(const struct mworker_opts *o)
{
	static const int signums[] = { SIGUSR2, SIGUSR1, SIGHUP, SIGTERM, SIGINT };
	ssize_t n;

	m.o = o;
	m.start = tick_wall();
	n = readlink("/proc/self/exe", m.exe, sizeof(m.exe) - 1);
	if (n <= 0) {
		log_alert("master: cannot find its own executable: %s", strerror(errno));
		return 1;
	}
	m.exe[n] = 0;
	setenv("HAPROXY_MWORKER", "1", 1);
	for (int i = 0; i < o->ncli; i++)
		if (mcli_parse(o->cli[i]) == -1)
			return 1;
	if (listener_bind_all(m.cli) == -1 || process_open_pidfile() == -1 ||
	    listener_unix_publish() == -1) {
		listener_unix_unpublish();
		process_forget_pidfile();
		listener_close_all(m.cli);
		return 1;
	}
	listener_unix_settle();
	if (global.flags & GLB_F_DAEMON) {
		if (process_daemonize() == -1)
			return 1;
	} else if (process_write_pidfile(getpid()) == -1) {
		return 1;
	}
	global.pid = getpid();
	log_open(&global.loggers);
	global.loop = ev_default_loop(EVBACKEND_EPOLL | EVFLAG_NOENV);
	if (!global.loop) {
		log_alert("cannot create the event loop (epoll)");
		return 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(signums); i++) {
		ev_signal_init(&m.sigs[i], signal_cb, signums[i]);
		ev_signal_start(global.loop, &m.sigs[i]);
		ev_unref(global.loop);
	}
	ev_child_init(&m.child, child_cb, 0, 0);
	ev_child_start(global.loop, &m.child);
	ev_unref(global.loop);
	listener_start_all(m.cli, mcli_accept);
	log_notice("master started (pid %d): starting the first worker", (int)getpid());
	if (worker_spawn() == -1)
		m.status = 1;
	else
		ev_run(global.loop, 0);

	notify("STOPPING=1\nSTATUS=Stopped");
	while (m.clients)
		mcli_free(m.clients);
	while (m.workers)
		worker_free(m.workers);
	sockets_free(&m.nfds, &m.fds, &m.keys);
	dstr_free(&m.startup_log);
	listener_close_all(m.cli);
	for (size_t i = 0; i < ARRAY_SIZE(signums); i++) {
		ev_ref(global.loop);
		ev_signal_stop(global.loop, &m.sigs[i]);
	}
	ev_ref(global.loop);
	ev_child_stop(global.loop, &m.child);
	return m.status;
}
