/* "show errors": per proxy, a copy of the last invalid request (frontend
 * side) and the last invalid response (backend side), as HAProxy keeps. */
#ifndef SLUICE_ERRORS_H
#define SLUICE_ERRORS_H

struct stream;

/* Records the message of <s> that failed to parse (<is_req>: the request,
 * captured on the frontend; else the response, on the backend). Does
 * nothing when the parser reported no error for it and let nothing through
 * only because it was relaxed (H1_F_RELAXED, accept-invalid-http-*). */
void errors_capture(struct stream *s, int is_req);

/* Number of events captured since start (all proxies, both directions). */
unsigned errors_total(void);

/* Appends to <out> the escaped dump of <len> bytes of <p>, one line per
 * message line (wrapped past 72 columns), each with its offset, as in
 * "show errors". Exposed for the unit tests. */
struct dstr;
void errors_dump(struct dstr *out, const char *p, unsigned len);

#endif
