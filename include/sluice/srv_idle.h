/* Idle server connections kept for reuse (http-reuse): a list per server,
 * most recent first, bounded by the server's pool-max-conn. An idle socket
 * is watched for reads: anything arriving (the server closing it, or bytes
 * nobody asked for) closes it. Connections idle longer than the server's
 * pool-purge-delay are closed. */
#ifndef SLUICE_SRV_IDLE_H
#define SLUICE_SRV_IDLE_H

struct server;
struct ssl_st;

/* Gives connected socket <fd> and its TLS session <ssl> (NULL: plain; the
 * pool owns it from now on) to <srv>'s pool; <reused>: the requests it
 * carried (not 0: http-reuse aggressive may take it). Closes it instead
 * when the pool is full, the server is not usable or the process is
 * stopping. */
void srv_idle_put(struct server *srv, int fd, struct ssl_st *ssl, int reused);

/* Closes socket <fd> and frees its TLS session <ssl> (NULL accepted). */
void srv_idle_close(int fd, struct ssl_st *ssl);

/* Lists a connection that stream <owner> keeps between its requests, after
 * it carried <reused> requests, as available to others: srv_idle_get() may
 * then take it, calling <steal>, which detaches it from the owner and
 * returns its socket (its TLS session in <*ssl>). Returns the entry (NULL
 * when the pool is full: the connection stays private). */
struct srv_idle *srv_idle_park(struct server *srv, void *owner,
                               int (*steal)(void *owner, struct ssl_st **ssl), int reused);

/* The owner takes its parked connection back, or lets it go (NULL ok). */
void srv_idle_unpark(struct srv_idle *c);

/* Takes the most recent idle connection of <srv>. <want_reused>: only one
 * that already served a request. Returns its socket (its TLS session, NULL
 * for a plain one, in <*ssl>: the caller owns both; the requests it carried
 * in <*reused>), or -1. */
int srv_idle_get(struct server *srv, int want_reused, struct ssl_st **ssl, int *reused);

/* Closes idle connections of <srv> idle for at least <age_ms> (0: all). */
void srv_idle_purge(struct server *srv, unsigned age_ms);

/* Idle connections over every server (show info, stats). */
int srv_idle_total(void);

/* Calls <fn> for each connection in <srv>'s pool, most recent first: its
 * socket, whether it already served a request, whether a stream keeps it
 * (parked: the stream's side shows it too) and the seconds it has been
 * idle (show fd, show servers conn). */
void srv_idle_foreach(const struct server *srv,
                      void (*fn)(int fd, int reused, int parked, double idle_s, void *arg),
                      void *arg);

/* Closes every idle connection (stop, exit), those of the pools and those
 * the registered closers hold. */
void srv_idle_close_all(void);

/* Registers <fn>, which closes the idle server connections a multiplexer
 * keeps outside the pools (FastCGI): srv_idle_close_all() calls it. */
void srv_idle_register_closer(void (*fn)(void));

#endif
