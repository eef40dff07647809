/* Idle server connection pools (srv_idle.h). */
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/units.h>
#include <sluice/ticks.h>

struct srv_idle {
	struct srv_idle *prev, *next;   /* in the server's list */
	struct server   *srv;
	ev_io            io;            /* pool-owned: watches the idle socket */
	ev_tstamp        since;
	int              reused;
	struct ssl_st   *ssl;           /* its TLS session, NULL: plain */
	void            *owner;         /* parked: the stream keeping it, else NULL */
	int            (*steal)(void *owner, struct ssl_st **ssl);
};

static struct {
	struct pool *pool;
	int          total;
	ev_timer     purge;   /* runs while any connection is idle */
} idle;

static void srv_idle_purge_cb(struct ev_loop *loop, ev_timer *w, int revents);

static void srv_idle_unlink(struct srv_idle *c)
{
	struct server *srv = c->srv;

	if (c->prev)
		c->prev->next = c->next;
	else
		srv->idle = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->n_idle--;
	idle.total--;
	if (!c->owner)
		ev_io_stop(global.loop, &c->io);
	pool_free(idle.pool, c);
	if (!idle.total)
		ev_timer_stop(global.loop, &idle.purge);
}

/* Links a new entry at the head of <srv>'s list, or returns NULL when the
 * pool is full, the server unusable or the process stopping. */
static struct srv_idle *srv_idle_link(struct server *srv)
{
	struct srv_idle *c;

	if (!idle.pool) {
		idle.pool = pool_create("srv_idle", sizeof(struct srv_idle));
		ev_init(&idle.purge, srv_idle_purge_cb);
		idle.purge.repeat = 1.0;
	}
	if ((srv->pool_max_conn >= 0 && srv->n_idle >= srv->pool_max_conn) ||
	    !server_usable(srv) || (global.flags & GLB_F_STOPPING) ||
	    !(c = pool_alloc(idle.pool)))
		return NULL;
	c->srv = srv;
	c->since = tick_ev_now();
	c->owner = NULL;
	c->steal = NULL;
	c->ssl = NULL;
	c->prev = NULL;
	c->next = srv->idle;
	if (srv->idle)
		srv->idle->prev = c;
	srv->idle = c;
	srv->n_idle++;
	if (!idle.total++)
		ev_timer_again(global.loop, &idle.purge);
	return c;
}

void srv_idle_close(int fd, struct ssl_st *ssl)
{
#ifdef USE_OPENSSL
	ssl_sock_free_ssl(ssl);
#endif
	close(fd);
}

static void srv_idle_drop(struct srv_idle *c)
{
	int fd = c->io.fd;
	struct ssl_st *ssl = c->ssl;

	srv_idle_unlink(c);
	srv_idle_close(fd, ssl);
}

/* An idle socket became readable: the server closed it or talks out of
 * turn; either way it cannot carry a request any more. */
static void srv_idle_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	srv_idle_drop(container_of(w, struct srv_idle, io));
}

static void srv_idle_purge_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			if (srv->n_idle)
				srv_idle_purge(srv, srv->pool_purge_delay);
}

void srv_idle_put(struct server *srv, int fd, struct ssl_st *ssl, int reused)
{
	struct srv_idle *c = srv_idle_link(srv);

	if (!c) {
		srv_idle_close(fd, ssl);
		return;
	}
	c->reused = reused;
	c->ssl = ssl;
	/* the stream that used this socket stopped watching it just now */
	conn_io_take_over(&c->io, srv_idle_io_cb, fd);
	ev_io_modify(&c->io, EV_READ);
	ev_io_start(global.loop, &c->io);
}

struct srv_idle *srv_idle_park(struct server *srv, void *owner,
                               int (*steal)(void *owner, struct ssl_st **ssl), int reused)
{
	struct srv_idle *c = srv_idle_link(srv);

	if (c) {
		c->reused = reused;
		c->owner = owner;
		c->steal = steal;
	}
	return c;
}

void srv_idle_unpark(struct srv_idle *c)
{
	if (c)
		srv_idle_unlink(c);
}

int srv_idle_get(struct server *srv, int want_reused, struct ssl_st **ssl, int *reused)
{
	for (struct srv_idle *c = srv->idle; c; c = c->next) {
		int fd;

		if (want_reused && !c->reused)
			continue;
		*reused = c->reused;
		if (c->owner) {
			/* parked in a stream: it gives the socket up (and
			 * forgets this entry) */
			void *owner = c->owner;
			int (*steal)(void *, struct ssl_st **) = c->steal;

			srv_idle_unlink(c);
			return steal(owner, ssl);
		}
		fd = c->io.fd;
		*ssl = c->ssl;
		/* the stream's watcher takes over the socket */
		ev_io_stop(global.loop, &c->io);
		conn_io_hand_off(&c->io);
		srv_idle_unlink(c);
		return fd;
	}
	return -1;
}

void srv_idle_purge(struct server *srv, unsigned age_ms)
{
	/* age 0 (everything) is also how the exit path calls it, possibly
	 * before the loop exists: no clock needed then */
	ev_tstamp limit = age_ms ? tick_ev_now() - tick_to_ev(age_ms) : 0;
	struct srv_idle *c = srv->idle, *next;

	for (; c; c = next) {
		next = c->next;
		/* parked connections live as long as their client connection */
		if (!c->owner && (!age_ms || c->since <= limit))
			srv_idle_drop(c);
	}
}

int srv_idle_total(void)
{
	return idle.total;
}

/* Closers of the idle connections that multiplexers keep themselves. */
static void (*idle_closers[4])(void);

void srv_idle_register_closer(void (*fn)(void))
{
	for (size_t i = 0; i < ARRAY_SIZE(idle_closers); i++)
		if (!idle_closers[i]) {
			idle_closers[i] = fn;
			return;
		}
	BUG_ON(1, "too many idle connection closers");
}

void srv_idle_close_all(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct server *srv = px->servers; srv; srv = srv->next)
			srv_idle_purge(srv, 0);
	for (size_t i = 0; i < ARRAY_SIZE(idle_closers) && idle_closers[i]; i++)
		idle_closers[i]();
}

static int srv_kw_pool_purge_delay(struct server *srv, const struct srv_kw *kw, int argc,
				   char **argv, char **err)
{
	uint32_t ms;
	const char *e;

	if (argc < 2) {
		*err = str_fmt("'%s' expects a time", argv[0]);
		return -1;
	}
	if (parse_time_ms(argv[1], 1, &ms, &e) == -1) {
		*err = str_fmt("'%s': %s", argv[0], e);
		return -1;
	}
	srv->pool_purge_delay = ms;
	return 2;
}

/* pool-low-conn <n>: below <n> idle connections, a thread does not take
 * one from another thread; sluice has one thread, whose pool is all there
 * is: checked, no effect. */
static int srv_kw_pool_low_conn(struct server *srv, const struct srv_kw *kw, int argc,
				char **argv, char **err)
{
	long v;

	return cfg_opt_int(argc, argv, 0, 1 << 24, &v, err) == -1 ? -1 : 2;
}

static struct srv_kw srv_idle_kws[] = {
	{ "pool-max-conn", .off = offsetof(struct server, pool_max_conn), .min = -1,
	  .max = 1 << 24 },
	{ "max-reuse", .off = offsetof(struct server, max_reuse), .min = -1, .max = 0x7fffffff },
	{ "pool-low-conn", .parse = srv_kw_pool_low_conn },
	{ "pool-purge-delay", .parse = srv_kw_pool_purge_delay },
};

SLUICE_INIT(srv_idle_register)
{
	srv_register_keywords(srv_idle_kws, ARRAY_SIZE(srv_idle_kws));
}

void srv_idle_foreach(const struct server *srv,
                      void (*fn)(int fd, int reused, int parked, double idle_s, void *arg),
                      void *arg)
{
	for (const struct srv_idle *c = srv->idle; c; c = c->next)
		fn(c->io.fd, !!c->reused, c->owner != NULL, ev_now(global.loop) - c->since, arg);
}
