/* "show errors": the last invalid request of each frontend and the last
 * invalid response of each backend, captured by the HTTP analyser when its
 * parser fails (errors.h), and the runtime command that shows them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/time.h>

#include <sluice/addr.h>
#include <sluice/buf.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/errors.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/stream.h>

struct err_snap {
	struct err_snap *next;
	struct proxy    *px;         /* where it was captured */
	int              is_req;
	struct timeval   when;
	unsigned         ev_id;      /* global event number */
	struct proxy    *oe;         /* the other end: backend or frontend */
	int              srv_id;
	char            *srv_name;   /* NULL: none */
	char             src[80];
	uint32_t         err_pos;
	uint32_t         buf_len;    /* original message length */
	uint32_t         len;        /* bytes kept (<= bufsize) */
	char            *data;       /* tune.bufsize bytes, allocated once */
};

static struct {
	struct err_snap *list;
	unsigned         events;
} errs;

unsigned errors_total(void)
{
	return errs.events;
}

static struct err_snap *err_slot(struct proxy *px, int is_req)
{
	struct err_snap *e;

	for (e = errs.list; e; e = e->next)
		if (e->px == px && e->is_req == is_req)
			return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->data = malloc(buf_size());
	if (!e->data) {
		free(e);
		return NULL;
	}
	e->px = px;
	e->is_req = is_req;
	e->next = errs.list;
	errs.list = e;
	return e;
}

void errors_capture(struct stream *s, int is_req)
{
	const struct h1_msg *m;
	const struct buf *b;
	struct err_snap *e;

	if (!s->txn)
		return;
	m = is_req ? &s->txn->req : &s->txn->res;
	b = is_req ? s->req.buf : s->res.buf;
	if ((!m->err_status && !(m->flags & H1_F_RELAXED)) || !b)
		return;   /* (H1_F_RELAXED: accepted by option accept-invalid-http-*) */
	e = err_slot(is_req ? s->fe : s->be, is_req);
	if (!e)
		return;
	gettimeofday(&e->when, NULL);
	e->ev_id = errs.events++;
	/* no backend is chosen before the request is parsed */
	e->oe = is_req ? NULL : s->fe;
	free(e->srv_name);
	e->srv_name = NULL;
	e->srv_id = -1;
	if (!is_req && s->ss.target) {
		e->srv_name = xstrdup(s->ss.target->name);
		e->srv_id = s->ss.target->id;
	}
	addr_to_str(&s->cli_addr, e->src, sizeof(e->src));
	e->buf_len = b->data;
	e->len = MIN(b->data, buf_size());
	memcpy(e->data, b->area + b->head, e->len);
	e->err_pos = m->err_pos;
}

static void err_date(char *out, size_t sz, const struct timeval *tv)
{
	struct tm tm;
	char d[40];

	localtime_r(&tv->tv_sec, &tm);
	strftime(d, sizeof(d), "%d/%b/%Y:%H:%M:%S", &tm);
	snprintf(out, sz, "%s.%03d", d, (int)(tv->tv_usec / 1000));
}

/* One byte as the dump writes it; returns the number of characters. */
static int err_esc(char *o, unsigned char c)
{
	switch (c) {
	case '\t': return sprintf(o, "\\t");
	case '\n': return sprintf(o, "\\n");
	case '\r': return sprintf(o, "\\r");
	case '\\': return sprintf(o, "\\\\");
	default:
		if (c < 0x20 || c >= 0x7f)
			return sprintf(o, "\\x%02x", c);
		o[0] = (char)c;
		o[1] = '\0';
		return 1;
	}
}

void errors_dump(struct dstr *out, const char *p, unsigned len)
{
	unsigned i = 0;

	while (i < len) {
		char line[128];
		int w;

		/* "  00000  " starts a line, "  00000+ " continues a wrapped one */
		w = snprintf(line, sizeof(line), "  %05u%c ", i, i && p[i - 1] != '\n' ? '+' : ' ');
		while (i < len && w < 72) {
			unsigned char c = (unsigned char)p[i++];

			w += err_esc(line + w, c);
			if (c == '\n')
				break;
		}
		line[w] = '\0';
		dstr_printf(out, "%s\n", line);
	}
}

/* show errors [<iid>|<proxy>] [request|response] */
static int cli_show_errors(struct cli_ctx *ctx, int argc, char **argv)
{
	struct timeval now;
	char date[64];
	int iid = -1, dir = -1;    /* dir: -1 both, 1 request, 0 response */
	int a = 2, n = 0;

	if (argc > a && strcmp(argv[a], "request") && strcmp(argv[a], "response")) {
		char *end;
		long v = strtol(argv[a], &end, 10);

		if (*end || end == argv[a]) {
			struct proxy *px = proxy_find(argv[a], PR_CAP_FE | PR_CAP_BE);

			if (!px) {
				dstr_printf(&ctx->out, "No such proxy.\n");
				return -1;
			}
			iid = px->id;
		} else
			iid = (int)v;
		a++;
	}
	if (argc > a) {
		if (strcmp(argv[a], "request") == 0)
			dir = 1;
		else if (strcmp(argv[a], "response") == 0)
			dir = 0;
	}
	gettimeofday(&now, NULL);
	err_date(date, sizeof(date), &now);
	dstr_printf(&ctx->out, "Total events captured on [%s] : %u\n", date, errs.events);
	/* in proxy order, then requests before responses */
	for (struct proxy *px = global.proxies; px; px = px->next) {
		if (iid != -1 && px->id != iid)
			continue;
		for (int r = 1; r >= 0; r--) {
			struct err_snap *e;

			if (dir != -1 && r != dir)
				continue;
			for (e = errs.list; e && !(e->px == px && e->is_req == r); e = e->next)
				;
			if (!e)
				continue;
			err_date(date, sizeof(date), &e->when);
			dstr_printf(&ctx->out, "%s[%s] %s %s (#%d): invalid %s\n", n++ ? "\n" : " \n", date,
				    r ? "frontend" : "backend", px->name, px->id,
				    r ? "request" : "response");
			if (r)
				dstr_printf(&ctx->out, "  backend <NONE> (#-1), server <NONE> (#-1)");
			else
				dstr_printf(&ctx->out, "  frontend %s (#%d), server %s (#%d)",
					    e->oe ? e->oe->name : "<NONE>", e->oe ? e->oe->id : -1,
					    e->srv_name ? e->srv_name : "<NONE>", e->srv_id);
			dstr_printf(&ctx->out, ", event #%u, src %s\n"
				    "  buffer starts at 0 (including 0 out), %u free,\n"
				    "  len %u, wraps at %u, error at position %u\n"
				    "  \n",
				    e->ev_id, e->src, buf_size() - e->buf_len, e->len,
				    buf_size() - global.maxrewrite, e->err_pos);
			errors_dump(&ctx->out, e->data, e->len);
		}
	}
	return 0;
}

static void errors_release(struct proxy *px)
{
	struct err_snap **pp = &errs.list, *e;

	while ((e = *pp)) {
		if (e->px != px) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		free(e->srv_name);
		free(e->data);
		free(e);
	}
}

static struct proxy_ext errors_ext = { .release = errors_release };

static struct cli_kw errors_cli_kws[] = {
	{ { "show", "errors", NULL }, "show errors [<iid>|<proxy>] [request|response]",
	  "report last request and/or response errors for each proxy", CLI_LVL_OPERATOR,
	  cli_show_errors },
};

SLUICE_INIT(errors_register)
{
	cli_register(errors_cli_kws, ARRAY_SIZE(errors_cli_kws));
	proxy_register_ext(&errors_ext);
}
