/* HTTP replies made by sluice itself (http_reply.h): the default error pages,
 * errorfile / errorloc / errorfiles / http-error and the http-errors section,
 * the reply arguments of return/deny/tarpit, and turning a reply into a head. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/http_head.h>
#include <sluice/http_reply.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/proxy.h>
#include <sluice/str.h>
#include <sluice/units.h>

#define HTTP_ERR_N        19
#define HTTP_ERR_ALL      ((1u << HTTP_ERR_N) - 1)
#define REPLY_MAXHDR      101    /* headers of an errorfile (tune.http.maxhdr) */
#define REPLY_FILE_DEFMAX 16384  /* when tune.bufsize is not known yet */

/* ---- default error pages ---- */

/* The codes that have a page, in the order of the tables below. */
static const int err_codes[HTTP_ERR_N] = {
	200, 400, 401, 403, 404, 405, 407, 408, 410, 413,
	421, 422, 425, 429, 500, 501, 502, 503, 504,
};

/* What HAProxy 2.6 sends for each code (observed on the wire). Its pages
 * use their own reason phrases ("Bad request", 407 "Unauthorized"), which
 * differ from http_reason(). 400 and 408 ask for the connection to close. */
static const struct {
	const char *reason;
	const char *text;
	int         close;
} err_pages[HTTP_ERR_N] = {
	{ "OK", "Service ready.", 0 },
	{ "Bad request", "Your browser sent an invalid request.", 1 },
	{ "Unauthorized", "You need a valid user and password to access this content.", 0 },
	{ "Forbidden", "Request forbidden by administrative rules.", 0 },
	{ "Not Found", "The resource could not be found.", 0 },
	{ "Method Not Allowed", "A request was made of a resource using a request method "
	  "not supported by that resource", 0 },
	{ "Unauthorized", "You need a valid user and password to access this content.", 0 },
	{ "Request Time-out", "Your browser didn't send a complete request in time.", 1 },
	{ "Gone", "The resource is no longer available and will not be available again.", 0 },
	{ "Payload Too Large", "The request entity exceeds the maximum allowed.", 0 },
	{ "Misdirected Request", "Request sent to a non-authoritative server.", 0 },
	{ "Unprocessable Content", "The server cannot process the contained instructions.", 0 },
	{ "Too Early", "Your browser sent early data.", 0 },
	{ "Too Many Requests", "You have sent too many requests in a given amount of time.", 0 },
	{ "Internal Server Error", "An internal server error occurred.", 0 },
	/* the leading '.' is in HAProxy's page too */
	{ "Not Implemented", ".The server does not support the functionality required to "
	  "fulfill the request.", 0 },
	{ "Bad Gateway", "The server returned an invalid or incomplete response.", 0 },
	{ "Service Unavailable", "No server is available to handle this request.", 0 },
	{ "Gateway Time-out", "The server didn't respond in time.", 0 },
};

/* The pages as replies, built once at start-up in static storage. */
static struct http_reply     page_reply[HTTP_ERR_N];
static struct http_reply_hdr page_hdrs[HTTP_ERR_N][4];
static char                  page_body[HTTP_ERR_N][256];
static char                  page_clen[HTTP_ERR_N][8];

static int err_idx(int status)
{
	for (int i = 0; i < HTTP_ERR_N; i++)
		if (err_codes[i] == status)
			return i;
	return -1;
}

int http_error_known(int status)
{
	return err_idx(status) >= 0;
}

/* "200, 400, ..., 504" for messages. */
static const char *err_codes_list(void)
{
	static char list[HTTP_ERR_N * 5 + 1];
	size_t off = 0;

	if (!list[0])
		for (int i = 0; i < HTTP_ERR_N; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d",
						i ? ", " : "", err_codes[i]);
	return list;
}

static void pages_build(void)
{
	for (int i = 0; i < HTTP_ERR_N; i++) {
		struct http_reply *r = &page_reply[i];
		struct http_reply_hdr *h = page_hdrs[i];
		int n;

		n = snprintf(page_body[i], sizeof(page_body[i]),
			     "<html><body><h1>%d %s</h1>\n%s\n</body></html>\n",
			     err_codes[i], err_pages[i].reason, err_pages[i].text);
		BUG_ON(n < 0 || (size_t)n >= sizeof(page_body[i]), "error page too long");
		snprintf(page_clen[i], sizeof(page_clen[i]), "%d", n);
		h[0] = (struct http_reply_hdr){ (char *)"content-length", page_clen[i], NULL };
		h[1] = (struct http_reply_hdr){ (char *)"cache-control", (char *)"no-cache", NULL };
		h[2] = (struct http_reply_hdr){ (char *)"content-type", (char *)"text/html", NULL };
		h[3] = (struct http_reply_hdr){ (char *)"connection", (char *)"close", NULL };
		r->status = err_codes[i];
		r->reason = (char *)err_pages[i].reason;
		r->hdrs = h;
		r->nhdrs = err_pages[i].close ? 4 : 3;
		r->body = page_body[i];
		r->body_len = (size_t)n;
		r->errfile = 1;
		r->type = HTTP_REPLY_ERRMSG;
	}
}

const char *http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 101: return "Switching Protocols";
	case 102: return "Processing";
	case 103: return "Early Hints";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 203: return "Non-Authoritative Information";
	case 204: return "No Content";
	case 205: return "Reset Content";
	case 206: return "Partial Content";
	case 207: return "Multi-Status";
	case 210: return "Content Different";
	case 226: return "IM Used";
	case 300: return "Multiple Choices";
	case 301: return "Moved Permanently";
	case 302: return "Moved Temporarily";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 305: return "Use Proxy";
	case 307: return "Temporary Redirect";
	case 308: return "Permanent Redirect";
	case 310: return "Too many Redirects";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Payment Required";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Time-out";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Request Entity Too Large";
	case 414: return "Request-URI Too Long";
	case 415: return "Unsupported Media Type";
	case 416: return "Requested range unsatisfiable";
	case 417: return "Expectation failed";
	case 418: return "I'm a teapot";
	case 421: return "Misdirected Request";
	case 422: return "Unprocessable Content";
	case 423: return "Locked";
	case 424: return "Method failure";
	case 425: return "Too Early";
	case 426: return "Upgrade Required";
	case 428: return "Precondition Required";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 449: return "Retry With";
	case 450: return "Blocked by Windows Parental Controls";
	case 451: return "Unavailable For Legal Reasons";
	case 456: return "Unrecoverable Error";
	case 499: return "client has closed connection";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway or Proxy Error";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Time-out";
	case 505: return "HTTP Version not supported";
	case 506: return "Variant also negotiate";
	case 507: return "Insufficient storage";
	case 508: return "Loop detected";
	case 509: return "Bandwidth Limit Exceeded";
	case 510: return "Not extended";
	case 511: return "Network authentication required";
	case 520: return "Web server is returning an unknown error";
	}
	/* Unlisted codes get the name of their class. */
	switch (status / 100) {
	case 1: return "Informational";
	case 2: return "Success";
	case 3: return "Redirection";
	case 4: return "Client Error";
	case 5: return "Server Error";
	}
	return "Unknown";
}

/* ---- replies ---- */

/* A reply that tables and http-errors sections share (errorfile, http-error
 * lines are parsed once, then referenced by every proxy inheriting them). */
struct err_slot {
	struct http_reply r;
	int               refs;
};

/* An "errorfiles NAME [codes]" line, or "http-error ... errorfiles NAME",
 * resolved at post-parse once every http-errors section is known. */
struct err_ref {
	char           *name;
	uint32_t        codes;     /* bit i: err_codes[i] */
	int             explicit;  /* codes were listed: warn for the missing ones */
	unsigned        seq;       /* configuration order of the line */
	char           *file;
	int             line;
	struct err_ref *next;
};

/* The error replies of a proxy (struct proxy.http_errors). Each line that
 * sets an entry takes a sequence number, so that errorfiles references,
 * resolved last, still obey "the last line wins". */
struct http_err_table {
	struct err_slot *ent[HTTP_ERR_N];
	unsigned         seq[HTTP_ERR_N];
	struct err_ref  *refs;     /* in configuration order */
};

/* http-errors NAME */
struct http_errors_sec {
	char                   *name;
	char                   *file;
	int                     line;
	struct err_slot        *ent[HTTP_ERR_N];
	struct http_errors_sec *next;
};

/* A reply of a rule naming an http-errors section ("errorfiles NAME"). */
struct reply_pending {
	struct http_reply    *r;
	char                 *name;
	char                 *file;
	int                   line;
	struct reply_pending *next;
};

/* Parsing state: the sections and pending references live only until
 * post-parse resolves them. */
static struct {
	struct http_errors_sec *secs;
	struct http_errors_sec *cur;      /* section being parsed */
	struct reply_pending   *pending;
	unsigned                seq;
} st;

/* Frees <n> header rows and the array. */
static void hdrs_free(struct http_reply_hdr *h, int n)
{
	for (int i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
		if (h[i].lf) {
			lf_free(h[i].lf);
			free(h[i].lf);
		}
	}
	free(h);
}

/* Drops <r> from the references waiting for post-parse (a reply released
 * before it, e.g. after a later error on its line). */
static void pending_forget(const struct http_reply *r)
{
	for (struct reply_pending **pp = &st.pending; *pp; pp = &(*pp)->next)
		if ((*pp)->r == r) {
			struct reply_pending *p = *pp;

			*pp = p->next;
			free(p->name);
			free(p->file);
			free(p);
			return;
		}
}

void http_reply_release(struct http_reply *r)
{
	if (!r)
		return;
	pending_forget(r);
	free(r->reason);
	free(r->ctype);
	hdrs_free(r->hdrs, r->nhdrs);
	free(r->body);
	if (r->lf_body) {
		lf_free(r->lf_body);
		free(r->lf_body);
	}
	memset(r, 0, sizeof(*r));
}

static struct err_slot *slot_new(void)
{
	struct err_slot *s = xcalloc(1, sizeof(*s));

	s->refs = 1;
	return s;
}

static struct err_slot *slot_ref(struct err_slot *s)
{
	s->refs++;
	return s;
}

static void slot_unref(struct err_slot *s)
{
	if (s && --s->refs == 0) {
		http_reply_release(&s->r);
		free(s);
	}
}

/* Appends a header to <r> (takes ownership of <name>, <value>, <lf>). */
static void reply_add_hdr(struct http_reply *r, char *name, char *value, struct lf_expr *lf)
{
	struct http_reply_hdr *h = realloc(r->hdrs, sizeof(*h) * (size_t)(r->nhdrs + 1));

	BUG_ON(!h, "out of memory parsing a reply");
	r->hdrs = h;
	h[r->nhdrs].name = name;
	h[r->nhdrs].value = value;
	h[r->nhdrs].lf = lf;
	r->nhdrs++;
}

/* Copies errorfile reply <src> into <dst> (an empty reply). */
static void reply_copy_msg(struct http_reply *dst, const struct http_reply *src)
{
	dst->status = src->status;
	dst->reason = src->reason ? xstrdup(src->reason) : NULL;
	for (int i = 0; i < src->nhdrs; i++)
		reply_add_hdr(dst, xstrdup(src->hdrs[i].name), xstrdup(src->hdrs[i].value), NULL);
	if (src->body) {
		dst->body = malloc(src->body_len + 1);
		BUG_ON(!dst->body, "out of memory copying a reply");
		memcpy(dst->body, src->body, src->body_len);
		dst->body[src->body_len] = '\0';
	}
	dst->body_len = src->body_len;
	dst->errfile = 1;
	dst->type = HTTP_REPLY_ERRMSG;
	dst->flags = src->flags;
}

/* Reads file <path> whole (at most tune.bufsize bytes, as a reply must fit
 * in a buffer) into a NUL-terminated <out>. Returns 0, or -1 with <err>
 * allocated. */
static int file_read(const char *path, char **out, size_t *len, char **err)
{
	size_t max = global.bufsize ? global.bufsize : REPLY_FILE_DEFMAX;
	FILE *f = fopen(path, "rb");
	struct stat sb;
	char *buf;

	if (!f) {
		*err = str_fmt("cannot open file '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &sb) == -1 || !S_ISREG(sb.st_mode)) {
		*err = str_fmt("'%s' is not a regular file", path);
		fclose(f);
		return -1;
	}
	if ((uint64_t)sb.st_size > max) {
		*err = str_fmt("file '%s' is larger than tune.bufsize (%lld > %zu bytes)", path,
			       (long long)sb.st_size, max);
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)sb.st_size + 1);
	BUG_ON(!buf, "out of memory reading a file");
	*len = fread(buf, 1, (size_t)sb.st_size, f);
	if (ferror(f)) {
		*err = str_fmt("cannot read file '%s': %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[*len] = '\0';
	*out = buf;
	return 0;
}

/* Loads errorfile <path> (a whole HTTP/1.x response) into <r>, checked as
 * the engine will need it: a valid head, a payload that matches its
 * content-length, no chunked encoding. Returns 0, or -1 with <err>
 * allocated. */
static int errorfile_load(const char *path, struct http_reply *r, char **err)
{
	struct h1_hdr hdrs[REPLY_MAXHDR];
	struct h1_msg m;
	size_t len, blen;
	char *buf;
	int ret;

	if (file_read(path, &buf, &len, err) == -1)
		return -1;
	memset(r, 0, sizeof(*r));
	r->errfile = 1;
	r->type = HTTP_REPLY_ERRMSG;
	if (len == 0) {
		/* HAProxy's way to close without answering (e.g. for 408). */
		r->flags = HTTP_REPLY_F_SILENT;
		free(buf);
		return 0;
	}
	h1_msg_init(&m, hdrs, REPLY_MAXHDR, 1, H1_M_GET);
	/* A limit above the length: an unfinished head is "need more", not
	 * "too large". */
	ret = h1_parse(buf, len, len + 1, &m);
	if (ret == 0) {
		*err = str_fmt("'%s': incomplete HTTP response (no empty line after the headers)",
			       path);
		goto fail;
	}
	if (ret < 0) {
		*err = str_fmt("'%s': invalid HTTP response at byte %u: %s", path, m.err_pos,
			       m.err_msg ? m.err_msg : "parse error");
		goto fail;
	}
	if (m.status < 200 || m.status > 599) {
		*err = str_fmt("'%s': status %d is not a final status (expects 200..599)", path,
			       m.status);
		goto fail;
	}
	if (m.flags & H1_F_TE) {
		*err = str_fmt("'%s': chunked or transfer-encoded payloads are not supported; "
			       "use content-length", path);
		goto fail;
	}
	blen = len - (size_t)ret;
	if ((m.flags & H1_F_CLEN) && m.clen != blen) {
		*err = str_fmt("'%s': the payload is %zu bytes but content-length says %llu",
			       path, blen, (unsigned long long)m.clen);
		goto fail;
	}
	if ((m.flags & H1_F_NO_BODY) && blen) {
		*err = str_fmt("'%s': a %d response has no payload, but %zu bytes follow the head",
			       path, m.status, blen);
		goto fail;
	}
	if (!(m.flags & (H1_F_CLEN | H1_F_NO_BODY)))
		r->flags |= HTTP_REPLY_F_CLOSE;
	if (!(m.flags & H1_F_VER_11))
		r->flags |= HTTP_REPLY_F_V10;
	r->status = m.status;
	r->reason = str_fmt("%.*s", (int)m.reason.len, buf + m.reason.off);
	BUG_ON(!r->reason, "out of memory loading an errorfile");
	for (int i = 0; i < m.nhdrs; i++) {
		char *n = str_fmt("%.*s", (int)hdrs[i].name.len, buf + hdrs[i].name.off);
		char *v = str_fmt("%.*s", (int)hdrs[i].value.len, buf + hdrs[i].value.off);

		BUG_ON(!n || !v, "out of memory loading an errorfile");
		/* Sent the way HAProxy sends them: lower-case names. */
		for (char *p = n; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		reply_add_hdr(r, n, v, NULL);
	}
	memmove(buf, buf + ret, blen);
	buf[blen] = '\0';
	r->body = buf;
	r->body_len = blen;
	return 0;
fail:
	free(buf);
	http_reply_release(r);
	return -1;
}

/* Parses a status code in [min, max] from <s>; -1 if it is not one. */
static int status_parse(const char *s, int min, int max)
{
	long v;
	const char *e;

	if (parse_int(s, min, max, &v, &e) == -1)
		return -1;
	return (int)v;
}

/* The payload arguments of a reply and what their argument is called. */
static const struct {
	const char *kw;
	const char *arg;   /* NULL: takes none */
} payload_kws[] = {
	{ "string", "text" }, { "lf-string", "log-format" }, { "file", "file" },
	{ "lf-file", "file" }, { "errorfile", "file" }, { "errorfiles", "http-errors name" },
	{ "default-errorfiles", NULL },
};

/* "hdr <name> <value>": appends it to <r> unless the reply computes that
 * field itself. Returns 0, or -1 after cfg_alert(). */
static int reply_parse_hdr(struct cfg_ctx *ctx, struct http_reply *r, const char *n,
                           const char *v)
{
	struct lf_expr *lf = NULL;
	char *name, *err = NULL;

	if (!h1_is_token(n, strlen(n))) {
		cfg_alert(ctx, "'hdr': invalid header name '%s'", n);
		return -1;
	}
	if (strcasecmp(n, "content-length") == 0 || strcasecmp(n, "content-type") == 0 ||
	    strcasecmp(n, "transfer-encoding") == 0) {
		cfg_warn(ctx, "header '%s' is ignored: the reply computes it", n);
		return 0;
	}
	/* The value is a log-format; without '%' it is plain text. */
	if (strchr(v, '%')) {
		lf = xcalloc(1, sizeof(*lf));
		if (lf_compile(v, lf, &err) == -1) {
			cfg_alert(ctx, "'hdr %s': %s", n, err ? err : "invalid log-format");
			free(err);
			free(lf);
			return -1;
		}
	}
	/* Sent the way HAProxy sends them: lower-case names. */
	name = xstrdup(n);
	for (char *p = name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	reply_add_hdr(r, name, xstrdup(v), lf);
	return 0;
}

/* string/file/lf-string/lf-file <arg>: reads and compiles the body of <r>.
 * Returns 0, or -1 after cfg_alert(). */
static int reply_set_body(struct cfg_ctx *ctx, struct http_reply *r, const char *kw,
                          const char *arg)
{
	int lf = strncmp(kw, "lf-", 3) == 0;
	char *err = NULL;

	r->type = lf ? HTTP_REPLY_LF : HTTP_REPLY_BODY;
	if (strstr(kw, "string")) {
		r->body = xstrdup(arg);
		r->body_len = strlen(arg);
	} else if (file_read(arg, &r->body, &r->body_len, &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		return -1;
	}
	if (lf) {
		r->lf_body = xcalloc(1, sizeof(*r->lf_body));
		if (lf_compile(r->body, r->lf_body, &err) == -1) {
			cfg_alert(ctx, "'%s': %s", kw, err ? err : "invalid log-format");
			free(err);
			free(r->lf_body);
			r->lf_body = NULL;
			return -1;
		}
	} else if (!r->body_len && r->ctype) {
		cfg_warn(ctx, "content-type '%s' is ignored: the payload is empty", r->ctype);
		free(r->ctype);
		r->ctype = NULL;
	}
	if (r->status == 204 || r->status == 304) {
		if (lf || r->body_len) {
			cfg_alert(ctx, "a %d response has no payload ('%s' is not allowed)",
				  r->status, kw);
			return -1;
		}
	}
	if ((lf || r->body_len) && !r->ctype) {
		cfg_alert(ctx, "a payload needs a content type: add 'content-type <type>'");
		return -1;
	}
	return 0;
}

/* errorfile/errorfiles/default-errorfiles <arg>: a whole message, so the
 * content-type and hdr arguments (<nhdr> were given) are dropped. Returns
 * 0, or -1 after cfg_alert(). */
static int reply_set_message(struct cfg_ctx *ctx, struct http_reply *r, const char *kw,
                             const char *arg, int nhdr, char **table_name)
{
	int status = r->status;
	char *err = NULL;

	if (r->ctype) {
		cfg_warn(ctx, "content-type '%s' is ignored with '%s'", r->ctype, kw);
		free(r->ctype);
		r->ctype = NULL;
	}
	if (nhdr) {
		cfg_warn(ctx, "'hdr' arguments are ignored with '%s'", kw);
		hdrs_free(r->hdrs, r->nhdrs);
		r->hdrs = NULL;
		r->nhdrs = 0;
	}
	if (strcmp(kw, "errorfile") == 0) {
		if (errorfile_load(arg, r, &err) == -1) {
			cfg_alert(ctx, "%s", err);
			free(err);
			return -1;
		}
		/* An empty (silent) file keeps the status for the log. */
		if (r->flags & HTTP_REPLY_F_SILENT)
			r->status = status;
		return 0;
	}
	if (!http_error_known(status)) {
		cfg_alert(ctx, "status %d has no error page for '%s' (expects one of %s)", status,
			  kw, err_codes_list());
		return -1;
	}
	if (!arg) {
		r->type = HTTP_REPLY_ERRDEF;
	} else if (table_name) {
		*table_name = xstrdup(arg);
	} else {
		struct reply_pending *p = xcalloc(1, sizeof(*p));

		/* A message without content until post-parse fills it (or makes
		 * it HTTP_REPLY_EMPTY if the section lacks the code). */
		r->type = HTTP_REPLY_ERRMSG;
		r->errfile = 1;
		p->r = r;
		p->name = xstrdup(arg);
		p->file = xstrdup(ctx->file);
		p->line = ctx->line;
		p->next = st.pending;
		st.pending = p;
	}
	return 0;
}

/* Reply argument parser; with <table_name> (http-error), "errorfiles NAME"
 * is handed back there instead of being queued for post-parse. <asked> gets
 * the status the arguments ask for (an errorfile then sets r->status to the
 * one of the file). */
static int reply_parse(struct cfg_ctx *ctx, int argc, char **argv, int *idx,
                       struct http_reply *r, int def_status, char **table_name, int *asked)
{
	const char *body_kw = NULL, *body_arg = NULL;
	int i = *idx, nhdr = 0, ret;

	memset(r, 0, sizeof(*r));
	r->status = def_status;
	r->type = HTTP_REPLY_EMPTY;
	while (i < argc) {
		const char *a = argv[i];
		size_t k;

		if (strcmp(a, "if") == 0 || strcmp(a, "unless") == 0)
			break;
		for (k = 0; k < ARRAY_SIZE(payload_kws); k++)
			if (strcmp(a, payload_kws[k].kw) == 0)
				break;
		if (strcmp(a, "status") == 0) {
			if (i + 1 >= argc) {
				cfg_alert(ctx, "'status' expects <status_code> as argument");
				goto fail;
			}
			r->status = status_parse(argv[i + 1], 200, 599);
			if (r->status < 0) {
				cfg_alert(ctx, "'status' expects a status code between 200 and 599, "
					  "got '%s'", argv[i + 1]);
				goto fail;
			}
			i += 2;
		} else if (strcmp(a, "content-type") == 0) {
			if (i + 1 >= argc) {
				cfg_alert(ctx, "'content-type' expects <type> as argument");
				goto fail;
			}
			free(r->ctype);
			r->ctype = xstrdup(argv[i + 1]);
			i += 2;
		} else if (k < ARRAY_SIZE(payload_kws)) {
			const char *arg_name = payload_kws[k].arg;

			if (body_kw) {
				cfg_alert(ctx, "unexpected '%s': '%s' already gives the payload", a,
					  body_kw);
				goto fail;
			}
			if (arg_name && i + 1 >= argc) {
				cfg_alert(ctx, "'%s' expects <%s> as argument", a, arg_name);
				goto fail;
			}
			body_kw = a;
			body_arg = arg_name ? argv[i + 1] : NULL;
			i += arg_name ? 2 : 1;
		} else if (strcmp(a, "hdr") == 0) {
			if (i + 2 >= argc) {
				cfg_alert(ctx, "'hdr' expects <name> and <value> as arguments");
				goto fail;
			}
			nhdr++;
			if (reply_parse_hdr(ctx, r, argv[i + 1], argv[i + 2]) == -1)
				goto fail;
			i += 3;
		} else {
			cfg_alert(ctx, "unexpected argument '%s' (expects status, content-type, string, "
				  "lf-string, file, lf-file, errorfile, errorfiles, default-errorfiles, "
				  "hdr, or a condition with 'if'/'unless')", a);
			goto fail;
		}
	}
	if (asked)
		*asked = r->status;
	if (!body_kw) {
		if (r->ctype) {
			cfg_warn(ctx, "content-type '%s' is ignored: the reply has no payload", r->ctype);
			free(r->ctype);
			r->ctype = NULL;
		}
		ret = 0;
	} else if (strstr(body_kw, "string") || strcmp(body_kw, "file") == 0 ||
		   strcmp(body_kw, "lf-file") == 0) {
		ret = reply_set_body(ctx, r, body_kw, body_arg);
	} else {
		ret = reply_set_message(ctx, r, body_kw, body_arg, nhdr, table_name);
	}
	if (ret == -1)
		goto fail;
	*idx = i;
	return 0;
fail:
	http_reply_release(r);
	if (table_name) {
		free(*table_name);
		*table_name = NULL;
	}
	return -1;
}

int http_reply_parse(struct cfg_ctx *ctx, int argc, char **argv, int *idx,
                     struct http_reply *r, int def_status)
{
	return reply_parse(ctx, argc, argv, idx, r, def_status, NULL, NULL);
}

/* ---- per-proxy tables ---- */

static struct http_err_table *table_of(struct proxy *px)
{
	if (!px->http_errors)
		px->http_errors = xcalloc(1, sizeof(*px->http_errors));
	return px->http_errors;
}

/* Makes <s> (a new reference) the entry of code index <i>. */
static void table_set(struct http_err_table *t, int i, struct err_slot *s, unsigned seq)
{
	slot_unref(t->ent[i]);
	t->ent[i] = s;
	t->seq[i] = seq;
}

static void table_add_ref(struct http_err_table *t, const struct cfg_ctx *ctx, const char *name,
                          uint32_t codes, int explicit)
{
	struct err_ref *ref = xcalloc(1, sizeof(*ref)), **tail = &t->refs;

	ref->name = xstrdup(name);
	ref->codes = codes;
	ref->explicit = explicit;
	ref->seq = ++st.seq;
	ref->file = xstrdup(ctx->file);
	ref->line = ctx->line;
	while (*tail)
		tail = &(*tail)->next;
	*tail = ref;
}

static void refs_free(struct err_ref *ref)
{
	while (ref) {
		struct err_ref *next = ref->next;

		free(ref->name);
		free(ref->file);
		free(ref);
		ref = next;
	}
}

static void table_free(struct http_err_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < HTTP_ERR_N; i++)
		slot_unref(t->ent[i]);
	refs_free(t->refs);
	free(t);
}

/* A proxy starts with its defaults section's replies (shared) and its
 * pending errorfiles references (copied, resolved for the proxy). */
static void table_inherit(struct proxy *px, const struct proxy *def)
{
	const struct http_err_table *d = def->http_errors;
	struct http_err_table *t;
	struct err_ref **tail;

	if (!d)
		return;
	t = table_of(px);
	for (int i = 0; i < HTTP_ERR_N; i++)
		if (d->ent[i])
			table_set(t, i, slot_ref(d->ent[i]), d->seq[i]);
	tail = &t->refs;
	for (const struct err_ref *r = d->refs; r; r = r->next) {
		struct err_ref *c = xcalloc(1, sizeof(*c));

		*c = *r;
		c->name = xstrdup(r->name);
		c->file = xstrdup(r->file);
		c->next = NULL;
		*tail = c;
		tail = &c->next;
	}
}

static void table_release(struct proxy *px)
{
	table_free(px->http_errors);
	px->http_errors = NULL;
}

static struct proxy_ext reply_ext = { table_inherit, table_release, NULL };

const struct http_reply *http_error_find(const struct proxy *px, int status)
{
	int i = err_idx(status);
	const struct err_slot *s;

	if (i < 0)
		i = err_idx(500);
	if (!px || !px->http_errors || !(s = px->http_errors->ent[i]))
		return NULL;
	/* "http-error status N default-errorfiles": back to the built-in page. */
	return s->r.type == HTTP_REPLY_ERRDEF ? &page_reply[i] : &s->r;
}

const struct http_reply *http_error_reply(const struct proxy *px, int status)
{
	const struct http_reply *r = http_error_find(px, status);
	int i = err_idx(status);

	if (r)
		return r;
	return &page_reply[i >= 0 ? i : err_idx(500)];
}

const struct http_reply *http_reply_resolve(const struct http_reply *r, const struct proxy *px)
{
	if (r && r->type == HTTP_REPLY_ERRDEF)
		return http_error_reply(px, r->status);
	return r;
}

/* ---- keywords ---- */

/* errorfile <code> <file> (proxies and http-errors sections) */
static int kw_errorfile(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct err_slot *s;
	char *err = NULL;
	int code, i;

	if (ctx->section == CFG_SEC_HTTP_ERRORS && !st.cur)
		return -1; /* the section header failed; its error is reported */
	if (argc < 2) {
		cfg_alert(ctx, "expects <status_code> and <file> as arguments");
		return -1;
	}
	code = status_parse(argv[0], 100, 999);
	i = err_idx(code);
	if (i < 0) {
		cfg_alert(ctx, "status code '%s' has no error page (expects one of %s)", argv[0],
			  err_codes_list());
		return -1;
	}
	if (argc > 2)
		cfg_warn(ctx, "extra arguments after the file are ignored ('%s')", argv[2]);
	s = slot_new();
	if (errorfile_load(argv[1], &s->r, &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		free(s);
		return -1;
	}
	if (s->r.flags & HTTP_REPLY_F_SILENT)
		s->r.status = code;
	if (ctx->section == CFG_SEC_HTTP_ERRORS) {
		slot_unref(st.cur->ent[i]);
		st.cur->ent[i] = s;
	} else {
		table_set(table_of(ctx->px), i, s, ++st.seq);
	}
	return 0;
}

/* errorloc|errorloc302|errorloc303 <code> <url> (row value 1: 303) */
static int kw_errorloc(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int see_other = (int)ctx->kw_row->arg;
	struct err_slot *s;
	int i;

	if (argc < 2) {
		cfg_alert(ctx, "expects <status_code> and <url> as arguments");
		return -1;
	}
	i = err_idx(status_parse(argv[0], 100, 999));
	if (i < 0) {
		cfg_alert(ctx, "status code '%s' has no error page (expects one of %s)", argv[0],
			  err_codes_list());
		return -1;
	}
	if (argc > 2)
		cfg_warn(ctx, "extra arguments after the URL are ignored ('%s')", argv[2]);
	s = slot_new();
	s->r.status = see_other ? 303 : 302;
	s->r.reason = xstrdup(see_other ? "See Other" : "Found");
	s->r.errfile = 1;
	s->r.type = HTTP_REPLY_ERRMSG;
	reply_add_hdr(&s->r, xstrdup("cache-control"), xstrdup("no-cache"), NULL);
	reply_add_hdr(&s->r, xstrdup("content-length"), xstrdup("0"), NULL);
	reply_add_hdr(&s->r, xstrdup("location"), xstrdup(argv[1]), NULL);
	table_set(table_of(ctx->px), i, s, ++st.seq);
	return 0;
}

/* errorfiles <name> [<code> ...] */
static int kw_errorfiles(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	uint32_t codes = 0;

	if (argc < 1) {
		cfg_alert(ctx, "expects <name> [<status_code> ...] as arguments");
		return -1;
	}
	for (int a = 1; a < argc; a++) {
		int i = err_idx(status_parse(argv[a], 100, 999));

		if (i < 0) {
			cfg_alert(ctx, "status code '%s' has no error page (expects one of %s)",
				  argv[a], err_codes_list());
			return -1;
		}
		codes |= 1u << i;
	}
	table_add_ref(table_of(ctx->px), ctx, argv[0], argc > 1 ? codes : HTTP_ERR_ALL, argc > 1);
	return 0;
}

/* http-error status <code> [content-type ...] [payload] [hdr ...] */
static int kw_http_error(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *section = NULL;
	struct err_slot *s;
	int idx = 0, i, asked = 0;

	if (argc < 1 || strcmp(argv[0], "status") != 0) {
		cfg_alert(ctx, "expects 'status <code>' first");
		return -1;
	}
	s = slot_new();
	if (reply_parse(ctx, argc, argv, &idx, &s->r, 0, &section, &asked) == -1) {
		free(s);
		return -1;
	}
	i = err_idx(asked);
	if (idx < argc) {
		cfg_alert(ctx, "unexpected '%s': http-error takes no condition", argv[idx]);
		goto fail;
	}
	if (i < 0) {
		cfg_alert(ctx, "status %d has no error page to replace (expects one of %s)",
			  asked, err_codes_list());
		goto fail;
	}
	if (section) {
		table_add_ref(table_of(ctx->px), ctx, section, 1u << i, 1);
		free(section);
		slot_unref(s);
		return 0;
	}
	table_set(table_of(ctx->px), i, s, ++st.seq);
	return 0;
fail:
	free(section);
	slot_unref(s);
	return -1;
}

/* ---- http-errors section ---- */

static struct http_errors_sec *sec_find(const char *name)
{
	for (struct http_errors_sec *s = st.secs; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static int sec_http_errors(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct http_errors_sec *s, *dup, **tail = &st.secs;

	st.cur = NULL;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	for (const char *p = argv[0]; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_.:", *p))) {
			cfg_alert(ctx, "invalid name '%s' (letters, digits, '-', '_', '.' and ':' "
				  "only)", argv[0]);
			return -1;
		}
	dup = sec_find(argv[0]);
	if (dup) {
		cfg_alert(ctx, "'%s' is already used by an http-errors section declared at %s:%d",
			  argv[0], dup->file, dup->line);
		return -1;
	}
	if (argc > 1)
		cfg_warn(ctx, "extra arguments after the name are ignored ('%s')", argv[1]);
	s = xcalloc(1, sizeof(*s));
	s->name = xstrdup(argv[0]);
	s->file = xstrdup(ctx->file);
	s->line = ctx->line;
	while (*tail)
		tail = &(*tail)->next;
	*tail = s;
	st.cur = s;
	return 0;
}

static int sec_http_errors_end(struct cfg_ctx *ctx)
{
	st.cur = NULL;
	return 0;
}

void http_errors_free_all(void)
{
	while (st.secs) {
		struct http_errors_sec *s = st.secs;

		st.secs = s->next;
		for (int i = 0; i < HTTP_ERR_N; i++)
			slot_unref(s->ent[i]);
		free(s->name);
		free(s->file);
		free(s);
	}
	while (st.pending) {
		struct reply_pending *p = st.pending;

		st.pending = p->next;
		free(p->name);
		free(p->file);
		free(p);
	}
	st.cur = NULL;
}

/* ---- post-parse ---- */

/* Applies the errorfiles references of proxy <px> in configuration order;
 * an entry set by a later line is kept. Returns the number of errors. */
static int table_resolve(struct proxy *px)
{
	struct http_err_table *t = px->http_errors;
	int errors = 0;

	for (struct err_ref *ref = t->refs; ref; ref = ref->next) {
		struct http_errors_sec *s = sec_find(ref->name);

		if (!s) {
			log_alert("%s:%d: proxy '%s': unknown http-errors section '%s'", ref->file,
				  ref->line, px->name, ref->name);
			errors++;
			continue;
		}
		for (int i = 0; i < HTTP_ERR_N; i++) {
			if (!(ref->codes & (1u << i)))
				continue;
			if (!s->ent[i]) {
				if (ref->explicit)
					log_warning("%s:%d: proxy '%s': status %d is not declared in "
						    "http-errors section '%s'", ref->file, ref->line,
						    px->name, err_codes[i], ref->name);
				continue;
			}
			if (ref->seq > t->seq[i] || !t->ent[i])
				table_set(t, i, slot_ref(s->ent[i]), ref->seq);
		}
	}
	refs_free(t->refs);
	t->refs = NULL;
	return errors;
}

static int reply_postparse(void)
{
	int errors = 0;

	for (struct proxy *px = global.proxies; px; px = px->next)
		if (px->http_errors)
			errors += table_resolve(px);
	/* Defaults sections only lend their references to proxies. */
	for (struct proxy *px = global.defaults; px; px = px->next)
		if (px->http_errors) {
			refs_free(px->http_errors->refs);
			px->http_errors->refs = NULL;
		}
	for (struct reply_pending *p = st.pending; p; p = p->next) {
		struct http_errors_sec *s = sec_find(p->name);
		int i = err_idx(p->r->status);

		if (!s) {
			log_alert("%s:%d: unknown http-errors section '%s' named by a reply", p->file,
				  p->line, p->name);
			errors++;
		} else if (i < 0 || !s->ent[i]) {
			log_warning("%s:%d: status %d is not declared in http-errors section '%s'; "
				    "the reply has no payload", p->file, p->line, p->r->status,
				    p->name);
			p->r->type = HTTP_REPLY_EMPTY;
			p->r->errfile = 0;
		} else {
			int status = p->r->status;

			reply_copy_msg(p->r, &s->ent[i]->r);
			if (p->r->flags & HTTP_REPLY_F_SILENT)
				p->r->status = status;
		}
	}
	http_errors_free_all();
	return errors;
}

/* ---- heads ---- */

/* Renders <e> at the end of <h>'s arena; NULL when it does not fit. */
static const char *head_render(struct http_head *h, const struct lf_expr *e,
                               const struct lf_ctx *lf, size_t *len)
{
	char *out = h->arena + h->arena_used;
	size_t room = h->arena_size - h->arena_used;

	if (!lf || !e) {
		*len = 0;
		return "";
	}
	if (room < 2)
		return NULL;
	*len = lf_render(e, lf, out, room);
	/* A rendering that fills the room may have been cut. */
	if (*len + 1 >= room)
		return NULL;
	h->arena_used += (uint32_t)*len;
	return out;
}

unsigned http_reply_lf_needs(const struct http_reply *r)
{
	unsigned needs = r->lf_body ? r->lf_body->needs : 0;

	for (int i = 0; i < r->nhdrs; i++)
		if (r->hdrs[i].lf)
			needs |= r->hdrs[i].lf->needs;
	return needs;
}

int http_reply_to_head(const struct http_reply *r, const struct lf_ctx *lf,
                       struct http_head *h, const char **body, size_t *blen)
{
	static const struct http_str empty = { "", 0 };
	char num[24];
	const char *p, *reason;
	size_t len;
	int n;

	if (r->type == HTTP_REPLY_ERRDEF)
		r = http_error_reply(NULL, r->status);
	h->flags = HTTP_HEAD_F_RESP | HTTP_HEAD_F_CHANGED;
	h->nf = 0;
	*body = "";
	*blen = 0;
	if (r->flags & HTTP_REPLY_F_SILENT) {
		h->sl[0] = h->sl[1] = h->sl[2] = empty;
		return 0;
	}
	h->sl[HTTP_SL_RSVER].p = r->flags & HTTP_REPLY_F_V10 ? "HTTP/1.0" : "HTTP/1.1";
	h->sl[HTTP_SL_RSVER].len = 8;
	n = snprintf(num, sizeof(num), "%03d", r->status);
	p = http_head_dup(h, num, (size_t)n);
	if (!p)
		return -1;
	h->sl[HTTP_SL_STATUS].p = p;
	h->sl[HTTP_SL_STATUS].len = (uint32_t)n;
	reason = r->reason ? r->reason : http_reason(r->status);
	h->sl[HTTP_SL_REASON].p = reason;
	h->sl[HTTP_SL_REASON].len = (uint32_t)strlen(reason);

	if (r->errfile) {
		/* A whole message: its fields as written, content-length included. */
		for (int i = 0; i < r->nhdrs; i++)
			if (http_head_add_ref(h, r->hdrs[i].name, strlen(r->hdrs[i].name),
					      r->hdrs[i].value, strlen(r->hdrs[i].value)) == -1)
				return -1;
		*body = r->body ? r->body : "";
		*blen = r->body_len;
		return 0;
	}
	/* As HAProxy: the hdr arguments, then content-length, then content-type. */
	for (int i = 0; i < r->nhdrs; i++) {
		const struct http_reply_hdr *hd = &r->hdrs[i];
		const char *v = hd->value;

		len = strlen(v);
		if (hd->lf && !(v = head_render(h, hd->lf, lf, &len)))
			return -1;
		if (hd->lf && !len)
			continue;   /* as HAProxy: a format that renders nothing adds no field */
		if (http_head_add_ref(h, hd->name, strlen(hd->name), v, len) == -1)
			return -1;
	}
	if (r->type == HTTP_REPLY_LF) {
		if (!(p = head_render(h, r->lf_body, lf, &len)))
			return -1;
		*body = p;
		*blen = len;
	} else if (r->type == HTTP_REPLY_BODY) {
		*body = r->body;
		*blen = r->body_len;
	}
	if (r->status != 204 && r->status != 304) {
		n = snprintf(num, sizeof(num), "%zu", *blen);
		if (!(p = http_head_dup(h, num, (size_t)n)) ||
		    http_head_add_ref(h, "content-length", 14, p, (size_t)n) == -1)
			return -1;
	}
	if (r->ctype && http_head_add_ref(h, "content-type", 12, r->ctype, strlen(r->ctype)) == -1)
		return -1;
	return 0;
}

/* ---- registration ---- */

static struct cfg_section reply_sections[] = {
	{ "http-errors", CFG_SEC_HTTP_ERRORS, sec_http_errors, sec_http_errors_end, NULL },
};

static struct cfg_kw reply_kws[] = {
	{ "errorfile", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_errorfile,
	  .usage = "<status_code> <file>" },
	{ "errorfile", CFG_SEC_HTTP_ERRORS, CFG_T_FUNC, 0, .parse = kw_errorfile,
	  .usage = "<status_code> <file>" },
	{ "errorloc", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_errorloc,
	  .usage = "<status_code> <url>" },
	{ "errorloc302", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_errorloc,
	  .usage = "<status_code> <url>" },
	{ "errorloc303", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_errorloc,
	  .usage = "<status_code> <url>", .arg = 1 },
	{ "errorfiles", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_errorfiles,
	  .usage = "<name> [<status_code> ...]" },
	{ "http-error", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_http_error,
	  .usage = "status <code> [content-type <type>] [<payload>] [hdr <name> <fmt>]*" },
};

SLUICE_INIT(reply_register)
{
	pages_build();
	cfg_register_sections(reply_sections, ARRAY_SIZE(reply_sections));
	cfg_register(reply_kws, ARRAY_SIZE(reply_kws));
	/* After proxy_postparse (20): proxies are complete and named. */
	cfg_register_postparse(reply_postparse, 25);
	proxy_register_ext(&reply_ext);
}
