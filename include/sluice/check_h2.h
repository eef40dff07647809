/* HTTP/2 health checks: "check-proto h2" on a server line makes its HTTP
 * checks (option httpchk, http-check) speak HTTP/2 with prior knowledge
 * (src/proxy/check_h2.c). */
#ifndef SLUICE_CHECK_H2_H
#define SLUICE_CHECK_H2_H

struct check;
struct httpchk_req;

/* Sends request <q> over the check's fresh connection as HTTP/2 (the
 * preface, SETTINGS, HEADERS and DATA), starting a session held in c->h2.
 * Returns 0, or -1 when it could not be sent. */
int chk_h2_send(struct check *c, const struct httpchk_req *q);

/* Reads what the server sent; once the request's stream ended (or the
 * server closed), lays the answer out in c->rbuf as an HTTP/1.1 response
 * with its Content-Length and sets c->rclosed. Returns 0, or -1 on a
 * socket or protocol error (errno set for the former). */
int chk_h2_read(struct check *c);

/* Frees the HTTP/2 session of check <c> (none: nothing done). */
void chk_h2_free(struct check *c);

#endif
