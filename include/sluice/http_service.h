/* Services answered inside sluice (the stats page, the Prometheus
 * exporter...): a table row per service, registered by the module that
 * owns it. A service writes a whole HTTP response (status line, fields with
 * a content-length, body) into a growable string; the HTTP engine streams
 * it to the client buffer by buffer, so a page may be larger than one
 * buffer. */
#ifndef SLUICE_HTTP_SERVICE_H
#define SLUICE_HTTP_SERVICE_H

#include <stddef.h>

#include <sluice/str.h>

struct stream;
struct proxy;
struct http_head;

struct http_service {
	const char *name;          /* as in "http-request use-service <name>" */
	const char *log_name;      /* logged as the server ("<STATS>"), NULL: "<NOSRV>" */
	/* Answers request <h> of stream <s>; <px> is the proxy whose setting
	 * selected the service (stats uri...). Appends the response to <out>
	 * and returns its status code (for the log and counters), or -1 on an
	 * internal error (the client then gets a 500).
	 * <body>/<blen>: the request body when all of it arrived with the
	 * head (Content-Length framed, already in the request buffer); "" and
	 * 0 for a request without a body; NULL when the request has a body
	 * that is not available (chunked, or larger than what is buffered):
	 * the engine calls the service as soon as the head is parsed and does
	 * not wait for a body. */
	int       (*answer)(struct stream *s, struct proxy *px, const struct http_head *h,
	                    const char *body, size_t blen, struct dstr *out);
	/* Optional: whether request <h> reaching proxy <px> is for this
	 * service (e.g. its path is the "stats uri" of <px>). NULL: only
	 * "use-service" selects it. */
	int       (*match)(const struct proxy *px, const struct http_head *h);
	/* A service that answers over time instead (Lua's AppletHTTP): NULL
	 * <answer>, and these. <start> is called when a rule chose it for
	 * request <h> (its head is consumed then, its body is not): it
	 * returns 0, or -1 on an error (500). <run> is called at every event
	 * of the stream until it returns 1 (its response is complete: it
	 * called http_applet_end()) or -1 (it failed: a 500 when nothing was
	 * sent yet, else the client is cut); 0 while it goes on. It reads the
	 * request body with http_applet_recv() and answers with
	 * http_applet_start_response() and http_applet_send(). What it keeps
	 * lives in its slot of s->ext[] (stream_ext_register(); released at the
	 * end of the exchange). */
	int       (*start)(struct stream *s, struct proxy *px, const struct http_head *h);
	int       (*run)(struct stream *s);
	void       *priv;          /* the service's own value (its function...) */
	struct http_service *next;
};

/* ---- for services that answer over time (struct http_service.start) ---- */

/* Up to <max> bytes of the request body (de-chunked) into <dst>, taken out
 * of the request buffer. Returns the bytes copied (0: none buffered now);
 * <*end> is set once the whole body was read (or the client left). */
size_t http_applet_recv(struct stream *s, char *dst, size_t max, int *end);

/* The request body's length (Content-Length), -1 when chunked, 0 without
 * a body. */
long long http_applet_body_len(const struct stream *s);

/* Sends the response head: <status>, <reason> (NULL: the standard one) and
 * <n> fields (<names>/<nlens>, <vals>/<vlens>). A content-length field
 * frames the body; otherwise an HTTP/1.1 client gets it chunked, an
 * HTTP/1.0 one until the close. The http-after-response rules run on it.
 * Returns 0, or -1 when it could not be built or does not fit. */
int http_applet_start_response(struct stream *s, int status, const char *reason, int n,
                               const char *const *names, const size_t *nlens,
                               const char *const *vals, const size_t *vlens);

/* Appends up to <len> body bytes of <p> to the response, as the framing
 * asks, as far as the response buffer has room. Returns the bytes taken
 * (0: no room now; the stream runs the service again when the client took
 * some), or -1 when no body may follow (HEAD, 204, 304, a Content-Length
 * reached: the extra bytes are dropped and counted as taken). */
long http_applet_send(struct stream *s, const char *p, size_t len);

/* Ends the response (the last chunk). Returns 1, or 0 when the buffer has
 * no room for it yet (call again). */
int http_applet_end(struct stream *s);

/* Whether http_applet_start_response() was called. */
int http_applet_started(const struct stream *s);

/* Registers <svc> (static storage). */
void http_service_register(struct http_service *svc);

/* The service named <name>, or NULL. */
const struct http_service *http_service_find(const char *name);

/* The first service whose match() claims request <h> for proxy <px>, or
 * NULL. */
const struct http_service *http_service_match(const struct proxy *px, const struct http_head *h);

#endif
