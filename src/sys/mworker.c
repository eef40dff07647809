/* Master-worker mode, the worker's side (mworker.h): sockets and state
 * handed over at start, the channel to the master, and the global keywords
 * of the mode. The master is master.c. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include <sluice/cfg.h>
#include <sluice/cli.h>
#include <sluice/common.h>
#include <sluice/fdpass.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/mworker.h>
#include <sluice/proxy.h>
#include <sluice/stop.h>
#include <sluice/str.h>
#include <sluice/units.h>
#include "mworker_int.h"

#define MW_STATE_WAIT_MS 10000   /* longest wait for the old worker's state */

struct mworker_cfg mworker_cfg = { .max_reloads = -1 };

static struct {
	int        chan;        /* to the master, -1 when none */
	ev_io      chan_io;
	int        state_fd;    /* the old worker's state comes here, or -1 */
	int        reload;      /* a worker ran before this one (it sent its state) */
	/* state being written for a new worker */
	int        out_fd;
	ev_io      out_io;
	struct dstr out;
	size_t     out_done;
} mw = { .chan = -1, .state_fd = -1, .out_fd = -1 };

int mworker_configured(void)
{
	return mworker_cfg.configured;
}

int mworker_worker_reload(void)
{
	return mw.reload;
}

/* An integer environment variable naming a descriptor, or -1 if unset. */
static int env_fd(const char *name, int *fd)
{
	const char *v = getenv(name);
	char *end;
	long n;

	*fd = -1;
	if (!v)
		return 0;
	n = strtol(v, &end, 10);
	if (*end || n < 3 || n > 1 << 20) {
		log_alert("environment variable %s='%s' is not a descriptor", name, v);
		return -1;
	}
	*fd = (int)n;
	return 0;
}

/* MW_ENV_FDS: "<fd>=<key>" lines. */
static int take_listen_fds(void)
{
	const char *v = getenv(MW_ENV_FDS);
	char *copy, *line, *save = NULL;
	int ret = 0;

	if (!v)
		return 0;
	copy = xstrdup(v);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '='), *end;
		long fd = strtol(line, &end, 10);

		if (!eq || end != eq || fd < 3 || fd > 1 << 20) {
			log_alert("environment variable %s: bad entry '%s'", MW_ENV_FDS, line);
			ret = -1;
			continue;
		}
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		listener_pool_add((int)fd, eq + 1);
	}
	free(copy);
	return ret;
}

int mworker_worker_init(void)
{
	if (env_fd(MW_ENV_CHAN, &mw.chan) == -1)
		return -1;
	if (mw.chan < 0)
		return 0;
	if (fcntl(mw.chan, F_SETFD, FD_CLOEXEC) == -1) {
		log_alert("the channel to the master (fd %d) is not open: %s", mw.chan,
			  strerror(errno));
		return -1;
	}
	if (env_fd(MW_ENV_STATE, &mw.state_fd) == -1 || take_listen_fds() == -1)
		return -1;
	if (mw.state_fd >= 0) {
		fcntl(mw.state_fd, F_SETFD, FD_CLOEXEC);
		mw.reload = 1;
	}
	unsetenv(MW_ENV_CHAN);
	unsetenv(MW_ENV_FDS);
	unsetenv(MW_ENV_STATE);
	listener_keep_unix_paths();
	return 1;
}

/* ---- state from the worker being replaced ---- */

/* Reads everything the old worker writes on <fd>, waiting at most
 * MW_STATE_WAIT_MS in all. Returns 0, or -1 (what came is in <d>). */
static int state_read(int fd, struct dstr *d)
{
	uint64_t end = now_ms() + MW_STATE_WAIT_MS;
	char buf[16384];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)(end - now_ms());
		ssize_t n;

		if (left <= 0) {
			log_warning("reload: the previous worker sent no complete state within "
				    "%d ms; starting with what came", MW_STATE_WAIT_MS);
			return -1;
		}
		if (poll(&p, 1, (int)left) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		dstr_add(d, buf, (size_t)n);
	}
}

/* Runs each line of <text> at admin level; a failing line is reported and
 * skipped. */
static void state_apply(const char *text, size_t len)
{
	int ok = 0, failed = 0;

	for (const char *p = text, *e = text + len; p < e;) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
		struct cli_ctx ctx = { .level = CLI_LVL_ADMIN };

		if (n && p[0] != '#') {
			if (cli_exec_line(&ctx, p, n) == 0 && !ctx.failed) {
				ok++;
			} else {
				failed++;
				log_warning("reload state: '%.*s' not restored: %.*s", (int)n, p,
					    (int)(ctx.out.len && ctx.out.p[ctx.out.len - 1] == '\n' ?
						  ctx.out.len - 1 : ctx.out.len),
					    ctx.out.p ? ctx.out.p : "");
			}
		}
		dstr_free(&ctx.out);
		p += n + 1;
	}
	if (ok || failed)
		log_notice("reload state: %d command(s) replayed, %d failed", ok, failed);
}

/* ---- the channel to the master ---- */

static void out_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	while (mw.out_done < mw.out.len) {
		ssize_t n = write(mw.out_fd, mw.out.p + mw.out_done, mw.out.len - mw.out_done);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		mw.out_done += (size_t)n;
	}
	ev_io_stop(loop, &mw.out_io);
	close(mw.out_fd);
	mw.out_fd = -1;
	dstr_free(&mw.out);
	global.jobs--;
}

/* "state": dump what a new worker replays, written without blocking. */
static void send_state(int fd)
{
	if (mw.out_fd >= 0) {
		close(fd);      /* one reload at a time: the master never asks twice */
		return;
	}
	mw.out_fd = fd;
	mw.out_done = 0;
	cli_state_dump_all(&mw.out);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	ev_io_init(&mw.out_io, out_cb, fd, EV_WRITE);
	ev_io_start(global.loop, &mw.out_io);
	global.jobs++;
}

static void chan_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	char msg[64];
	int fds[2], nfds;
	ssize_t n = fdpass_recv(mw.chan, msg, sizeof(msg) - 1, fds, 2, &nfds);

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* the master is gone: nobody can reload or stop us any more */
		log_warning("the master process is gone: soft-stopping");
		ev_io_stop(loop, &mw.chan_io);
		close(mw.chan);
		mw.chan = -1;
		stop_soft();
		return;
	}
	msg[n] = 0;
	if (strcmp(msg, "stop") == 0) {
		stop_soft();
	} else if (strcmp(msg, "state") == 0 && nfds == 1) {
		send_state(fds[0]);
		nfds = 0;
	} else if (strncmp(msg, "cli ", 4) == 0 && nfds == 1) {
		/* the level of the master CLI socket the command came on */
		int lvl = atoi(msg + 4);

		fcntl(fds[0], F_SETFL, O_NONBLOCK);
		cli_adopt(fds[0], lvl >= CLI_LVL_USER && lvl <= CLI_LVL_ADMIN ? lvl : CLI_LVL_USER);
		nfds = 0;
	} else {
		log_warning("unknown message from the master: '%.20s'", msg);
	}
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

/* Sends the frontends' listening sockets, FDPASS_MAX at a time. */
static int send_listeners(void)
{
	struct dstr d = { 0 };
	int fds[FDPASS_MAX], n = 0, ret = 0;
	char key[256];

	for (struct proxy *px = global.proxies; px && ret == 0; px = px->next)
		for (struct listener *li = px->listeners; li; li = li->next) {
			if (li->fd < 0 || !(li->flags & LI_F_BOUND) ||
			    !*listener_key(li, key, sizeof(key)))
				continue;
			if (!n)
				dstr_printf(&d, "fds");
			if (d.len + strlen(key) + 2 > MW_MSG_MAX - 8) {
				ret = fdpass_send(mw.chan, d.p, d.len, fds, n);
				d.len = 0;
				n = 0;
				dstr_printf(&d, "fds");
			}
			dstr_printf(&d, "\n%s", key);
			fds[n++] = li->fd;
			if (n == FDPASS_MAX) {
				ret = fdpass_send(mw.chan, d.p, d.len, fds, n);
				d.len = 0;
				n = 0;
			}
			if (ret)
				break;
		}
	if (ret == 0 && n)
		ret = fdpass_send(mw.chan, d.p, d.len, fds, n);
	dstr_free(&d);
	return ret;
}

int mworker_worker_ready(void)
{
	char msg[32];

	if (mw.chan < 0)
		return 0;
	if (mw.state_fd >= 0) {
		struct dstr d = { 0 };

		state_read(mw.state_fd, &d);
		close(mw.state_fd);
		mw.state_fd = -1;
		state_apply(d.p ? d.p : "", d.len);
		dstr_free(&d);
	}
	listener_pool_close();
	snprintf(msg, sizeof(msg), "ready %d", mworker_cfg.max_reloads);
	if (send_listeners() == -1 || mprog_send_defs(mw.chan) == -1 ||
	    fdpass_send(mw.chan, msg, strlen(msg), NULL, 0) == -1) {
		log_alert("cannot report to the master: %s", strerror(errno));
		return -1;
	}
	fcntl(mw.chan, F_SETFL, O_NONBLOCK);
	ev_io_init(&mw.chan_io, chan_cb, mw.chan, EV_READ);
	ev_io_start(global.loop, &mw.chan_io);
	ev_unref(global.loop);   /* the channel alone does not keep a worker alive */
	return 0;
}

/* ---- keywords ---- */

static int kw_master_worker(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc > 1 || (argc == 1 && strcmp(argv[0], "no-exit-on-failure") != 0)) {
		cfg_alert(ctx, "takes no argument but 'no-exit-on-failure'");
		return -1;
	}
	mworker_cfg.configured = !ctx->inverted;
	mworker_cfg.no_exit_on_failure = argc == 1;
	return 0;
}

static void *mworker_cfg_base(struct cfg_ctx *ctx)
{
	return &mworker_cfg;
}

static struct cfg_kw mworker_kws[] = {
	{ "master-worker", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_master_worker,
	  .flags = CFG_KW_F_NO },
	{ "mworker-max-reloads", CFG_SEC_GLOBAL, CFG_T_INT,
	  offsetof(struct mworker_cfg, max_reloads), .base = mworker_cfg_base, .min = 0,
	  .max = 0x7fffffff, .usage = "a number of reloads" },
};

SLUICE_INIT(mworker_register)
{
	cfg_register(mworker_kws, ARRAY_SIZE(mworker_kws));
}
