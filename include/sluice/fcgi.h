/* FastCGI to servers (src/http/fcgi.c): the mux that carries the requests
 * of "proto fcgi" servers as FastCGI records, one connection holding one
 * request at a time, or several when the application multiplexes. The
 * stream writes an HTTP/1 request and reads an HTTP/1 response through a
 * CO_F_MUX endpoint (conn.h), as with HTTP/2 to servers. */
#ifndef SLUICE_FCGI_H
#define SLUICE_FCGI_H

struct stream;
struct conn;
struct proxy;
struct server;

/* Stream <s>, assigned to its target server ("proto fcgi"), takes a
 * connection of that server that can carry one more request, as the
 * backend's http-reuse <reuse> (enum http_reuse) allows: an idle one kept
 * by FCGI_KEEP_CONN, or a busy one whose application multiplexes. Returns
 * 0 (SS_EST through it), or -1 when none fits. */
int fcgi_back_attach(struct stream *s, int reuse);

/* The connection <s> just established to its "proto fcgi" server (SS_EST)
 * becomes a FastCGI connection, kept for later requests unless <private>
 * (http-reuse never), and <s> its first request. Returns 0, or -1 (out of
 * memory, or no application: the connection is closed, counted as failed). */
int fcgi_back_take_over(struct stream *s, int private);

/* Closes the FastCGI connections that carry no request (soft stop, exit,
 * and the idle-connection purge of srv_idle_close_all()). */
void fcgi_close_idle(void);

/* Calls <fn> for every FastCGI connection (show fd, show tasks): its
 * socket, backend, server, live requests and whether its timer runs. */
void fcgi_conn_foreach(void (*fn)(const struct conn *c, const struct proxy *px,
                                  const struct server *srv, int nreqs, int timer_on, void *arg),
                       void *arg);

#endif
