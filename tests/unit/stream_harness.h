/* A whole proxy driven from a test, without binding a TCP port: a
 * configuration text becomes running proxies, clients are socketpairs handed
 * to stream_accept(), servers are unix sockets the harness listens on, and
 * the libev loop is stepped until it settles, with a virtual clock for the
 * timeouts. Shared by tests/unit/test_stream.c and tests/fuzz/fuzz_proxy.c.
 *
 * Use: h_init() once per process, then per case h_start(cfg) ... h_stop().
 * In <cfg>, "@DIR@" stands for the harness's temporary directory, where
 * servers s1..s4 listen (`server a @DIR@/s1.sock`) and a log socket waits
 * (`log @DIR@/log.sock local0`). The includer may define H_FAIL(fmt, ...)
 * before inclusion (default: print and abort()). Include once per program:
 * it defines clock_gettime() and gettimeofday() (see h_advance()). */
#ifndef SLUICE_TESTS_STREAM_HARNESS_H
#define SLUICE_TESTS_STREAM_HARNESS_H

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/fcgi_app.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/pipe.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/srv_idle.h>
#include <sluice/stream.h>

#ifndef H_FAIL
#define H_FAIL(...) do { fprintf(stderr, "stream_harness: " __VA_ARGS__); \
	fputc('\n', stderr); abort(); } while (0)
#endif

#define H_NSRV      4      /* server sockets s1..s4 */
#define H_MAX_CONN  16     /* client / server connections per case */
#define H_STEP_MAX  20000  /* loop rounds before h_step() gives up: a spin */
#define H_MAX_POOLS 64

struct h_conn {
	int fd;       /* the harness's end, -1 once closed */
	int eof;      /* the proxy closed (or shut) its side: read() gave 0 */
	int err;      /* read() failed (ECONNRESET...) */
	int sock;     /* server connections: which of s1..s4 (0-based) */
};

static struct {
	int            inited, started;
	char           dir[64];
	int            lfd[H_NSRV];        /* listening unix sockets s1..s4 */
	int            log_fd;             /* datagram socket receiving the log lines */
	struct h_conn  cli[H_MAX_CONN], srv[H_MAX_CONN];
	int            ncli, nsrv;         /* connections made (closed ones included) */
	int            cur_cli, cur_srv;   /* the one the helpers act on */
	int            fd_base;            /* open fds once started */
	struct { struct pool *p; unsigned used; } pools[H_MAX_POOLS];
	int            npools;
	struct global  pristine;           /* struct global before any configuration */
	char           log[8192];          /* the last log lines (h_log()) */
	size_t         log_len;
} h;

/* ---- a virtual clock for libev ----
 * libev reads the time through clock_gettime() (and gettimeofday()); these
 * definitions take precedence over the C library's. Calls coming from libev
 * get <h_skew_ns> added, so that h_advance() makes the timeouts expire at
 * once; other callers (the fuzzer's own timing, accept dates) see the real
 * clock. */
static volatile int64_t h_skew_ns;

static int h_caller_is_libev(void *ra)
{
	Dl_info di;

	return dladdr(ra, &di) && di.dli_fname && strstr(di.dli_fname, "/libev.");
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int r = (int)syscall(SYS_clock_gettime, id, ts);

	if (r == 0 && h_skew_ns && (id == CLOCK_MONOTONIC || id == CLOCK_REALTIME) &&
	    h_caller_is_libev(__builtin_return_address(0))) {
		int64_t ns = (int64_t)ts->tv_nsec + h_skew_ns % 1000000000;

		ts->tv_sec += h_skew_ns / 1000000000 + ns / 1000000000;
		ts->tv_nsec = ns % 1000000000;
	}
	return r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	int r = (int)syscall(SYS_gettimeofday, tv, tz);

	if (r == 0 && h_skew_ns && h_caller_is_libev(__builtin_return_address(0))) {
		int64_t us = (int64_t)tv->tv_usec + (h_skew_ns / 1000) % 1000000;

		tv->tv_sec += h_skew_ns / 1000000000 + us / 1000000;
		tv->tv_usec = us % 1000000;
	}
	return r;
}

/* ---- bookkeeping ---- */

/* Number of open sockets of the process: what a stream holds. (Other fds
 * come and go outside the proxy's doing, e.g. the pipes of the sanitizers'
 * symbolizer; the proxy's own pipes are checked through pipe_flush().) */
static inline int h_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[64];
	int n = 0;

	if (!d)
		H_FAIL("cannot list /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d))) {
		ssize_t l;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		l = readlink(path, target, sizeof(target) - 1);
		n += l > 7 && strncmp(target, "socket:", 7) == 0;
	}
	closedir(d);
	return n;
}

/* Objects handed out by every pool. */
static inline unsigned long h_pool_used(void)
{
	unsigned long n = 0;

	for (struct pool *p = pool_first(); p; p = p->next)
		n += p->used;
	return n;
}

static inline void h_pools_snapshot(void)
{
	h.npools = 0;
	for (struct pool *p = pool_first(); p && h.npools < H_MAX_POOLS; p = p->next) {
		h.pools[h.npools].p = p;
		h.pools[h.npools++].used = p->used;
	}
}

/* The pool whose use differs from the snapshot, NULL if none. */
static inline const struct pool *h_pools_changed(void)
{
	for (struct pool *p = pool_first(); p; p = p->next) {
		unsigned base = 0;

		for (int i = 0; i < h.npools; i++)
			if (h.pools[i].p == p)
				base = h.pools[i].used;
		if (p->used != base)
			return p;
	}
	return NULL;
}

static inline long h_sock_queue(int fd, unsigned long req)
{
	int n = 0;

	if (fd < 0 || ioctl(fd, req, &n) == -1)
		return 0;
	return n;
}

static inline int h_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) == 1 ? p.revents : 0;
}

/* A digest of everything visible that moves when the proxy does something:
 * streams, pooled objects, idle server connections, bytes counted, what is
 * queued in the harness's sockets, pending server connections. */
static inline uint64_t h_fingerprint(void)
{
	uint64_t f = 1469598103934665603ULL;

#define H_MIX(v) (f = (f ^ (uint64_t)(v)) * 1099511628211ULL)
	H_MIX(stream_count());
	H_MIX(h_pool_used());
	H_MIX(srv_idle_total());
	H_MIX(global.bytes_out);
	H_MIX(global.cumconn);
	for (int i = 0; i < h.ncli; i++) {
		H_MIX(h_sock_queue(h.cli[i].fd, FIONREAD));
		H_MIX(h_sock_queue(h.cli[i].fd, SIOCOUTQ));
		H_MIX(h_readable(h.cli[i].fd));
	}
	for (int i = 0; i < h.nsrv; i++) {
		H_MIX(h_sock_queue(h.srv[i].fd, FIONREAD));
		H_MIX(h_sock_queue(h.srv[i].fd, SIOCOUTQ));
		H_MIX(h_readable(h.srv[i].fd));
	}
	for (int i = 0; i < H_NSRV; i++)
		H_MIX(h_readable(h.lfd[i]));
#undef H_MIX
	return f;
}

/* Reads what the log socket holds into h.log (newest lines kept). */
static inline void h_log_drain(void)
{
	char line[2048];
	ssize_t n;

	while (h.log_fd >= 0 && (n = recv(h.log_fd, line, sizeof(line) - 1, MSG_DONTWAIT)) > 0) {
		if (h.log_len + (size_t)n + 1 >= sizeof(h.log))
			h.log_len = 0;
		memcpy(h.log + h.log_len, line, (size_t)n);
		h.log_len += (size_t)n;
		if (line[n - 1] != '\n')
			h.log[h.log_len++] = '\n';
		h.log[h.log_len] = 0;
	}
}

/* ---- the loop ---- */

/* Runs the loop without waiting until nothing changes any more (two quiet
 * rounds in a row). Fails if it never settles (the proxy spins). */
static inline void h_step(void)
{
	uint64_t last = h_fingerprint();
	int quiet = 0;

	for (int i = 0; i < H_STEP_MAX; i++) {
		uint64_t f;

		ev_run(global.loop, EVRUN_NOWAIT);
		h_log_drain();
		f = h_fingerprint();
		if (f == last) {
			if (++quiet == 2)
				return;
		} else {
			quiet = 0;
			last = f;
		}
	}
	H_FAIL("the loop does not settle after %d rounds", H_STEP_MAX);
}

/* Moves the loop's clock <ms> milliseconds forward, then steps: the timers
 * due by then fire. The clock never goes back. */
static inline void h_advance(unsigned ms)
{
	h_skew_ns += (int64_t)ms * 1000000;
	ev_now_update(global.loop);
	h_step();
}

/* Number of live streams. */
static inline int h_live_streams(void)
{
	return stream_count();
}

/* ---- set-up ---- */

static inline int h_listen_unix(const char *path, int type)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd == -1 || strlen(path) >= sizeof(sun.sun_path))
		H_FAIL("socket(%s): %s", path, strerror(errno));
	strcpy(sun.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    (type == SOCK_STREAM && listen(fd, 64) == -1))
		H_FAIL("bind(%s): %s", path, strerror(errno));
	return fd;
}

/* Once per process: the event loop, the temporary directory and the sockets
 * of servers s1..s4 and of the logs. */
static inline void h_init(void)
{
	char path[128];

	if (h.inited)
		return;
	signal(SIGPIPE, SIG_IGN);
	global.loop = ev_default_loop(EVBACKEND_EPOLL | EVFLAG_NOENV);
	if (!global.loop)
		H_FAIL("no event loop");
	h.pristine = global;
	snprintf(h.dir, sizeof(h.dir), "/tmp/sluice-h.XXXXXX");
	if (!mkdtemp(h.dir))
		H_FAIL("mkdtemp: %s", strerror(errno));
	for (int i = 0; i < H_NSRV; i++) {
		snprintf(path, sizeof(path), "%s/s%d.sock", h.dir, i + 1);
		h.lfd[i] = h_listen_unix(path, SOCK_STREAM);
	}
	snprintf(path, sizeof(path), "%s/log.sock", h.dir);
	h.log_fd = h_listen_unix(path, SOCK_DGRAM);
	h.inited = 1;
}

/* At exit: closes the sockets, removes the directory. */
static inline void h_fini(void)
{
	char path[128];

	if (!h.inited)
		return;
	for (int i = 0; i < H_NSRV; i++) {
		close(h.lfd[i]);
		snprintf(path, sizeof(path), "%s/s%d.sock", h.dir, i + 1);
		unlink(path);
	}
	close(h.log_fd);
	snprintf(path, sizeof(path), "%s/log.sock", h.dir);
	unlink(path);
	rmdir(h.dir);
	ev_loop_destroy(global.loop);
	global.loop = NULL;
	h.inited = 0;
}

/* Takes the time of the bookkeeping as the reference that h_check_clean()
 * compares with: sockets and pooled objects in use now. */
static inline void h_baseline(void)
{
	h.fd_base = h_count_fds();
	h_pools_snapshot();
}

/* Loads <cfg> ("@DIR@" replaced) and starts what main() starts, but the
 * listeners: post-parse, buffers, loggers, health checks. Fails on any
 * configuration error. */
static inline void h_start(const char *cfg)
{
	static int buf_ready;
	size_t dl = strlen(h.dir), n = 0;
	char *text = malloc(strlen(cfg) * (dl + 1) + 1);
	int errors;

	if (!text)
		H_FAIL("out of memory");
	h_init();
	for (const char *p = cfg; *p; ) {
		if (strncmp(p, "@DIR@", 5) == 0) {
			memcpy(text + n, h.dir, dl);
			n += dl;
			p += 5;
		} else {
			text[n++] = *p++;
		}
	}
	text[n] = 0;
	errors = cfg_parse_text("harness.cfg", text, n);
	if (!errors)
		errors = cfg_postparse();
	free(text);
	if (errors)
		H_FAIL("%d configuration error(s) (see stderr)", errors);
	if (!buf_ready) {
		/* one buffer pool per process: the size must not change */
		buf_init(global.bufsize);
		buf_ready = global.bufsize;
	} else if ((uint32_t)buf_ready != global.bufsize) {
		H_FAIL("tune.bufsize cannot change between cases");
	}
	log_open(&global.loggers);
	for (struct proxy *px = global.proxies; px; px = px->next)
		log_open(&px->loggers);
	fcgi_app_open_logs();
	check_start_all();
	memset(h.cli, 0, sizeof(h.cli));
	memset(h.srv, 0, sizeof(h.srv));
	h.ncli = h.nsrv = 0;
	h.cur_cli = h.cur_srv = -1;
	h.log_len = 0;
	h.log[0] = 0;
	h.started = 1;
	h_baseline();
}

/* ---- clients ---- */

/* Connects a new client to frontend <fe> (from 192.0.2.7:<port>) through a
 * socketpair given to stream_accept() as if its first listener had accepted
 * it; it becomes the current client. Returns its index. */
static inline int h_client_connect_from(const char *fe, uint16_t port)
{
	struct proxy *px = proxy_find(fe, PR_CAP_FE);
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	int sv[2];

	if (!px || !px->listeners)
		H_FAIL("no frontend '%s' with a bind line", fe);
	if (h.ncli == H_MAX_CONN)
		H_FAIL("too many clients");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == -1)
		H_FAIL("socketpair: %s", strerror(errno));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(0xc0000207);   /* 192.0.2.7 */
	h.cli[h.ncli] = (struct h_conn){ .fd = sv[0] };
	h.cur_cli = h.ncli++;
	px->listeners->nbconn++;   /* as the listener's accept does */
	stream_accept(px->listeners, sv[1], &ss, sizeof(*sin));
	h_step();
	return h.cur_cli;
}

static inline int h_client_connect(const char *fe)
{
	return h_client_connect_from(fe, (uint16_t)(40000 + h.ncli));
}

/* Makes client <i> the current one. */
static inline void h_client_use(int i)
{
	if (i < 0 || i >= h.ncli)
		H_FAIL("no client %d", i);
	h.cur_cli = i;
}

static inline struct h_conn *h_cur(struct h_conn *tab, int cur, const char *what)
{
	if (cur < 0)
		H_FAIL("no %s connection", what);
	return &tab[cur];
}

/* Writes all of <len> bytes to <c>, stepping the loop while the socket is
 * full. A closed peer ends the write silently (EPIPE, as a real peer). */
static inline void h_conn_send(struct h_conn *c, const void *data, size_t len)
{
	const char *p = data;
	int stuck = 0;

	while (len && c->fd >= 0) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			stuck = 0;
		} else if (n == -1 && errno == EAGAIN) {
			if (++stuck > 100)
				return;   /* the proxy reads no more: what is left is dropped */
			h_step();
		} else {
			return;
		}
	}
	h_step();
}

/* Reads what is there from <c> into <buf> (at most <cap> - 1 bytes, NUL
 * terminated), after stepping; notes an end of stream. Returns the count. */
static inline size_t h_conn_recv(struct h_conn *c, char *buf, size_t cap)
{
	size_t got = 0;

	h_step();
	while (c->fd >= 0 && got + 1 < cap) {
		ssize_t n = recv(c->fd, buf + got, cap - 1 - got, MSG_DONTWAIT);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			c->eof = 1;
		else if (errno != EAGAIN)
			c->err = errno;
		break;
	}
	if (cap)
		buf[got] = 0;
	return got;
}

static inline void h_conn_close(struct h_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	h_step();
}

static inline void h_client_send(const void *data, size_t len)
{
	h_conn_send(h_cur(h.cli, h.cur_cli, "client"), data, len);
}

/* Sends a NUL-terminated string. */
static inline void h_client_sends(const char *s)
{
	h_client_send(s, strlen(s));
}

/* Everything the current client has received since the last call (NUL
 * terminated in <buf>); h_client_eof() tells whether the proxy closed. */
static inline size_t h_client_recv_all(char *buf, size_t cap)
{
	return h_conn_recv(h_cur(h.cli, h.cur_cli, "client"), buf, cap);
}

static inline int h_client_eof(void)
{
	struct h_conn *c = h_cur(h.cli, h.cur_cli, "client");

	return c->eof || c->err;
}

/* Half-closes the current client's sending side (a FIN). */
static inline void h_client_shutw(void)
{
	shutdown(h_cur(h.cli, h.cur_cli, "client")->fd, SHUT_WR);
	h_step();
}

static inline void h_client_close(void)
{
	h_conn_close(h_cur(h.cli, h.cur_cli, "client"));
}

/* ---- servers ---- */

/* Connections waiting on server socket <sock> (0-based: s1 is 0). */
static inline int h_server_pending(int sock)
{
	return (h_readable(h.lfd[sock]) & POLLIN) != 0;
}

/* Accepts the proxy's next connection to server socket <sock> (s1 is 0),
 * which becomes the current server connection; returns its index, or -1 if
 * none waits. */
static inline int h_server_accept_on(int sock)
{
	int fd;

	h_step();
	fd = accept4(h.lfd[sock], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1)
		return -1;
	if (h.nsrv == H_MAX_CONN) {
		/* a script may make the proxy open more (one per request with
		 * server-close, retries): the extra ones are refused, as by a
		 * server at its own limit */
		close(fd);
		h_step();
		return -1;
	}
	h.srv[h.nsrv] = (struct h_conn){ .fd = fd, .sock = sock };
	h.cur_srv = h.nsrv++;
	h_step();
	return h.cur_srv;
}

/* The same on s1, failing if the proxy did not connect. */
static inline int h_server_accept(void)
{
	int i = h_server_accept_on(0);

	if (i < 0)
		H_FAIL("the proxy did not connect to s1");
	return i;
}

static inline void h_server_use(int i)
{
	if (i < 0 || i >= h.nsrv)
		H_FAIL("no server connection %d", i);
	h.cur_srv = i;
}

static inline void h_server_send(const void *data, size_t len)
{
	h_conn_send(h_cur(h.srv, h.cur_srv, "server"), data, len);
}

static inline void h_server_sends(const char *s)
{
	h_server_send(s, strlen(s));
}

static inline size_t h_server_recv_all(char *buf, size_t cap)
{
	return h_conn_recv(h_cur(h.srv, h.cur_srv, "server"), buf, cap);
}

static inline int h_server_eof(void)
{
	struct h_conn *c = h_cur(h.srv, h.cur_srv, "server");

	return c->eof || c->err;
}

static inline void h_server_shutw(void)
{
	shutdown(h_cur(h.srv, h.cur_srv, "server")->fd, SHUT_WR);
	h_step();
}

static inline void h_server_close(void)
{
	h_conn_close(h_cur(h.srv, h.cur_srv, "server"));
}

/* The log lines received so far (NUL terminated). */
static inline const char *h_log(void)
{
	h_log_drain();
	return h.log;
}

/* ---- the end ---- */

/* Closes every connection of the harness (and what waits in the server
 * sockets' backlogs). */
static inline void h_close_all(void)
{
	int fd;

	for (int i = 0; i < h.ncli; i++)
		if (h.cli[i].fd >= 0) {
			close(h.cli[i].fd);
			h.cli[i].fd = -1;
		}
	for (int i = 0; i < h.nsrv; i++)
		if (h.srv[i].fd >= 0) {
			close(h.srv[i].fd);
			h.srv[i].fd = -1;
		}
	for (int i = 0; i < H_NSRV; i++)
		while ((fd = accept4(h.lfd[i], NULL, NULL, SOCK_CLOEXEC)) >= 0)
			close(fd);
}

/* Forgets the connections of the harness (closing those still open): the
 * next script starts with none. */
static inline void h_reset_conns(void)
{
	h_close_all();
	memset(h.cli, 0, sizeof(h.cli));
	memset(h.srv, 0, sizeof(h.srv));
	h.ncli = h.nsrv = 0;
	h.cur_cli = h.cur_srv = -1;
	h.log_len = 0;
	h.log[0] = 0;
}

/* Every peer gone: steps, then lets <max_ms> of virtual time pass in
 * steps, accepting and closing any new server connection, until no stream
 * is left. Returns the number of streams still alive. */
static inline int h_settle(unsigned max_ms)
{
	h_close_all();
	h_step();
	h_close_all();
	for (unsigned t = 0; stream_count() && t < max_ms; t += 500) {
		h_advance(500);
		h_close_all();
	}
	h_step();
	return stream_count();
}

/* What is left by the proxy once every peer is gone and the idle server
 * connections are closed (all of which must be): NULL when the streams,
 * the pooled objects and the open fds are back to the baseline, else a
 * description in a static buffer. */
static inline const char *h_check_clean(void)
{
	static char msg[256];
	const struct pool *p;
	int fds;

	if (stream_count()) {
		snprintf(msg, sizeof(msg), "%d stream(s) still alive", stream_count());
		return msg;
	}
	srv_idle_close_all();
	pipe_flush();
	if ((p = h_pools_changed())) {
		snprintf(msg, sizeof(msg), "pool '%s' has %u object(s) in use", p->name, p->used);
		return msg;
	}
	fds = h_count_fds();
	if (fds != h.fd_base) {
		snprintf(msg, sizeof(msg), "%d socket(s) open, %d at the start", fds, h.fd_base);
		return msg;
	}
	return NULL;
}

/* Ends the case: closes every peer, lets the streams end (virtual time),
 * checks that nothing is left (h_check_clean()), then frees everything as
 * main() does at exit and puts struct global back. Returns NULL or what
 * was left (the state is cleaned up either way). */
static inline const char *h_stop(void)
{
	const char *leak;

	if (!h.started)
		return NULL;
	h_settle(120000);
	leak = h_check_clean();
	global.flags |= GLB_F_STOPPING;
	check_stop_all();
	stream_kill_all();
	srv_idle_close_all();
	pipe_flush();
	pool_flush_all();
	proxy_free_all();
	fcgi_app_free_all();
	log_list_free(&global.loggers);
	free(global.pidfile);
	free(global.chroot);
	free(global.node);
	free(global.desc);
	{
		struct ev_loop *loop = global.loop;

		global = h.pristine;
		global.loop = loop;
	}
	h_log_drain();
	h.started = 0;
	return leak;
}

#endif
