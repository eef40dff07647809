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
	struct http_service *next;
};

/* Registers <svc> (static storage). */
void http_service_register(struct http_service *svc);

/* The service named <name>, or NULL. */
const struct http_service *http_service_find(const char *name);

/* The first service whose match() claims request <h> for proxy <px>, or
 * NULL. */
const struct http_service *http_service_match(const struct proxy *px, const struct http_head *h);

#endif
