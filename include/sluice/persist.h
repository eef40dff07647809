/* Cookie-based persistence: the backend `cookie` keyword, the server option
 * `cookie <value>`, `option persist`, `force-persist`, `ignore-persist` and
 * `persist rdp-cookie`;
 * choosing the server a request's cookie names, and the cookie handling of
 * requests and responses (insert, rewrite, prefix). */
#ifndef SLUICE_PERSIST_H
#define SLUICE_PERSIST_H

#include <stdint.h>

struct http_head;
struct proxy;
struct server;
struct stream;

/* Options of the persistence module (persist_options()). */
#define PST_O_PERSIST 0x01ULL  /* option persist: a cookie may name a DOWN server */

/* The PST_O_* options of proxy <px> (0 when it has no settings of its own). */
uint64_t persist_options(const struct proxy *px);

/* The name of <px>'s persistence cookie, or NULL when it has none. */
const char *persist_cookie_name(const struct proxy *px);

/* Request side, while the head <h> is still editable (after the rules,
 * before it is written): evaluates force-persist/ignore-persist, looks for
 * the backend's persistence cookie, removes it or its prefix as the mode
 * asks, and records the cookie state for the log. <*srv> is set to the
 * server the cookie directs the request to, or NULL. Returns 0, or -1 when
 * a rewrite did not fit. */
int persist_req(struct stream *s, struct http_head *h, struct server **srv);

/* persist rdp-cookie: the server the RDP cookie (msts=<addr>.<port>.x) of
 * <s>'s request data names, when it may serve (up, or with option persist
 * down); NULL otherwise or without the keyword. */
struct server *persist_rdp(struct stream *s);

/* Whether the server <srv> a cookie named may take the request now. */
int persist_srv_ready(const struct server *srv);

/* Response side, head <h> editable (after the response rules): deletes,
 * rewrites or prefixes the server's cookie and inserts the persistence
 * cookie as the mode asks; records the state for the log. Returns 0, or -1
 * when a rewrite did not fit. */
int persist_res(struct stream *s, struct http_head *h);

#endif
