/* FastCGI applications (src/http/fcgi_app.c): the "fcgi-app" section, the
 * backend's "use-fcgi-app" and "filter fcgi-app", the server's "proto
 * fcgi", what the request analysis evaluates for an application
 * (set-param, pass-header, the path-info check) and the CGI/1.1 parameters
 * a request becomes (RFC 3875 and HAProxy's defaults). The records and
 * the connections are the mux's (fcgi.h). */
#ifndef SLUICE_FCGI_APP_H
#define SLUICE_FCGI_APP_H

#include <stdint.h>
#include <sys/socket.h>

#include <sluice/log.h>
#include <sluice/str.h>

struct acl_cond;
struct lf_expr;
struct proxy;
struct stream;
struct http_head;
struct h1_msg;
struct smp_expr;

#define FCGI_O_GET_VALUES 0x01ULL   /* option get-values: ask FCGI_MAX_REQS/MPXS_CONNS */
#define FCGI_O_KEEP_CONN  0x02ULL   /* option keep-conn (default): FCGI_KEEP_CONN */
#define FCGI_O_MPXS_CONNS 0x04ULL   /* option mpxs-conns: several requests at once */

/* set-param and pass-header lines, in order. */
struct fcgi_rule {
	struct fcgi_rule *next;
	char             *name;       /* parameter name, or header name (lower case) */
	size_t            nlen;
	struct lf_expr   *fmt;        /* set-param: its value; pass-header: NULL */
	struct acl_cond  *cond;       /* NULL: always */
};

struct fcgi_app {
	struct fcgi_app  *next;
	char             *name;
	char             *conf_file;
	int               conf_line;
	char             *docroot;     /* mandatory */
	char             *index;       /* appended to a SCRIPT_NAME ending with '/' */
	char             *path_info;   /* the regex as written, NULL: none */
	void             *pi_re;       /* its pcre2_code */
	void             *pi_md;       /* its match data */
	uint64_t          options;     /* FCGI_O_* */
	int               max_reqs;    /* option max-reqs (default 1) */
	int               log_stderr;  /* log-stderr given: STDERR goes to <stderr_log> */
	struct log_list   stderr_log;
	struct fcgi_rule *set_params, **sp_tail;
	struct fcgi_rule *pass_hdrs, **ph_tail;
	struct proxy     *acl_px;      /* holds the section's private ACLs */
	int               used;        /* a backend uses it */
};

/* What one request brings for its application, evaluated while the
 * request rules' head view is valid (fcgi_req_prepare()): the set-param
 * values and the defaults that come from samples (AUTH_TYPE, REMOTE_USER),
 * as encoded name-value pairs, and the header names pass-header let
 * through (lower case, each NUL-terminated). Pooled per transaction. */
struct fcgi_txn {
	struct dstr set;     /* set-param pairs: they replace defaults of the same name */
	struct dstr dflt;    /* AUTH_TYPE, REMOTE_USER */
	struct dstr pass;    /* pass-header names */
};

/* After the backend's request rules, for a backend with an application
 * (struct proxy.fcgi_app, set by use-fcgi-app), while the head view <h> is valid: evaluates set-param
 * and pass-header, and with path-info refuses a path holding NUL or LF
 * once decoded. The result goes to s->txn->fcgi. Returns 0, or -1 when the
 * request is to be refused with a 400 (nothing kept). */
int fcgi_req_prepare(struct stream *s, struct http_head *h);

/* Frees what fcgi_req_prepare() kept for the transaction (NULL accepted). */
void fcgi_txn_free(struct fcgi_txn *ft);

/* Where a request comes from, for its parameters: the client (<cli> NULL:
 * a health check, no REMOTE_*), the address it reached (SERVER_ADDR/PORT,
 * NULL: none), whether it came over TLS, and what the analysis kept. */
struct fcgi_req_src {
	const struct sockaddr_storage *cli;
	const struct sockaddr_storage *dst;
	int                            https;
	const struct fcgi_txn         *ft;      /* NULL: none */
};

/* Appends to <out> the CGI/1.1 parameters of the request whose head is at
 * <head> (parsed into <m>) with a body of <clen> bytes, as name-value
 * pairs (fcgi_rec.h): the request's fields as HTTP_*, those HAProxy omits
 * left out unless pass-header named them, then the defaults of HAProxy's
 * manual (10.2), the set-param values replacing defaults of their name.
 * Returns 0, or -1 when memory ran out. */
int fcgi_params_build(struct dstr *out, const struct fcgi_app *app,
                      const struct fcgi_req_src *src, const char *head,
                      const struct h1_msg *m, uint64_t clen);

/* Frees every application (after proxy_free_all(), or between two
 * configurations of a test). */
void fcgi_app_free_all(void);

/* Opens the log-stderr targets. Returns 0, or -1 (an alert was printed). */
int fcgi_app_open_logs(void);

/* Sends the STDERR message <msg> of an application of <app> (<len> bytes,
 * line ends trimmed) to its log-stderr targets; none: dropped. */
void fcgi_app_log_stderr(const struct fcgi_app *app, const char *msg, size_t len);

#endif
