/* "ring" sections (ring.h): in-memory buffers of messages, their settings,
 * the forwarding of what is written to them to syslog servers over TCP,
 * and "show events" (the rings' contents on the runtime API, "-w" going on
 * with the new messages as they come). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/log.h>
#include <sluice/log_tcp.h>
#include <sluice/ring.h>
#include <sluice/str.h>
#include <sluice/units.h>

/* A "server" of a ring section: everything written to the ring goes to it. */
struct ring_srv {
	struct ring_srv   *next;
	char              *name;
	struct log_tcp     tcp;
	struct ring_reader rd;
};

/* What a ring section adds to its ring. */
struct ring_sec {
	struct ring_srv   *srvs;
	struct ring_waiter w;         /* forwards new messages to the servers */
	uint32_t           connect_ms, server_ms;
	int                size_set;
};

static struct ring *ring_cur;     /* the section being read */

static struct ring_sec *ring_sec_of(struct ring *r)
{
	if (!r->owner)
		r->owner = xcalloc(1, sizeof(struct ring_sec));
	return r->owner;
}

static int sec_ring(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct ring *r;

	ring_cur = NULL;
	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name and nothing else");
		return -1;
	}
	if ((r = ring_find(argv[0])) && (r->conf_file || strcmp(argv[0], "buf0") == 0)) {
		cfg_alert(ctx, "ring '%s' is already declared%s%s", argv[0],
			  r->conf_file ? " at " : " (the process' own)",
			  r->conf_file ? r->conf_file : "");
		return -1;
	}
	r = ring_new(argv[0], 16384);   /* HAProxy's default: tune.bufsize */
	r->format = LOG_FMT_RAW;
	r->conf_file = str_fmt("%s:%d", ctx->file, ctx->line);
	r->conf_line = ctx->line;
	ring_sec_of(r);
	ring_cur = r;
	return 0;
}

static int sec_ring_end(struct cfg_ctx *ctx)
{
	ring_cur = NULL;
	return 0;
}

static int kw_ring_desc(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	if (!ring_cur)
		return -1;
	if (argc < 1) {
		cfg_alert(ctx, "expects a text");
		return -1;
	}
	{
		struct dstr d = { 0 };

		for (int i = 0; i < argc; i++)
			dstr_printf(&d, "%s%s", i ? " " : "", argv[i]);
		free(ring_cur->desc);
		ring_cur->desc = d.p ? d.p : xstrdup("");
	}
	return 0;
}

static int kw_ring_format(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	int f = argc == 1 ? log_format_find(argv[0]) : -1;

	if (!ring_cur)
		return -1;
	if (f < 0) {
		cfg_alert(ctx, "expects one of rfc3164, rfc5424, local, short, priority, timed, iso "
			  "or raw");
		return -1;
	}
	ring_cur->format = f;
	return 0;
}

static int kw_ring_maxlen(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	long v;
	const char *e;

	if (!ring_cur)
		return -1;
	if (argc != 1 || parse_int(argv[0], 1, 1 << 20, &v, &e) == -1) {
		cfg_alert(ctx, "expects a length in bytes (1 to 1048576)");
		return -1;
	}
	ring_cur->maxlen = (unsigned)v;
	return 0;
}

static int kw_ring_size(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	uint32_t v;
	const char *e;

	if (!ring_cur)
		return -1;
	if (argc != 1 || parse_size(argv[0], &v, &e) == -1 || v < 64) {
		cfg_alert(ctx, "expects a size of at least 64 bytes");
		return -1;
	}
	ring_resize(ring_cur, v);
	ring_sec_of(ring_cur)->size_set = 1;
	return 0;
}

/* timeout connect|server <time>: the row's arg is the field */
static int kw_ring_timeout(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	struct ring_sec *rs;
	uint32_t ms;
	const char *e;

	if (!ring_cur)
		return -1;
	if (argc != 1 || parse_time_ms(argv[0], 1, &ms, &e) == -1 || !ms) {
		cfg_alert(ctx, "expects a time, not zero");
		return -1;
	}
	rs = ring_sec_of(ring_cur);
	*(uint32_t *)((char *)rs + ctx->kw_row->arg) = ms;
	return 0;
}

static int kw_ring_backing(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	cfg_alert(ctx, "is not supported by sluice: rings live in memory only");
	return -1;
}

/* server <name> <address> [log-proto legacy|octet-count] */
static int kw_ring_server(struct cfg_ctx *ctx, void *t, int argc, char **argv)
{
	struct ring_sec *rs;
	struct ring_srv *s, **tail;
	struct addr_spec as;
	char *err = NULL;
	int octet = 0;

	if (!ring_cur)
		return -1;
	if (argc < 2) {
		cfg_alert(ctx, "expects <name> <address> [log-proto legacy|octet-count]");
		return -1;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "log-proto") == 0 && i + 1 < argc &&
		    (strcmp(argv[i + 1], "legacy") == 0 || strcmp(argv[i + 1], "octet-count") == 0)) {
			octet = argv[++i][0] == 'o';
			continue;
		}
		cfg_alert(ctx, "server '%s': '%s' is not supported on a ring's server (sluice "
			  "sends plain TCP syslog; 'log-proto legacy|octet-count' chooses the "
			  "framing)", argv[0], argv[i]);
		return -1;
	}
	if (addr_parse(argv[1], &as, ADDR_F_UNIX_OK | ADDR_F_ENV | ADDR_F_RESOLVE, &err) == -1 ||
	    as.kind == ADDR_K_FD) {
		cfg_alert(ctx, "server '%s': invalid address '%s': %s", argv[0], argv[1],
			  err ? err : "fd@ is not a server address");
		free(err);
		return -1;
	}
	rs = ring_sec_of(ring_cur);
	s = xcalloc(1, sizeof(*s));
	s->name = xstrdup(argv[0]);
	s->tcp.framing = octet ? LOG_TCP_OCTET : LOG_TCP_LF;
	for (tail = &rs->srvs; *tail; tail = &(*tail)->next)
		;
	*tail = s;
	s->tcp.addr = as.ss;   /* log_tcp_init() at the end, with the timeouts */
	s->tcp.addrlen = as.len;
	return 0;
}

/* ---- forwarding ---- */

static void ring_fwd_one(const char *msg, size_t len, void *arg)
{
	log_tcp_send(arg, msg, len);
}

/* A message was written to a ring with servers: each gets it. */
static void ring_fwd(void *arg)
{
	struct ring *r = arg;
	struct ring_sec *rs = r->owner;

	for (struct ring_srv *s = rs->srvs; s; s = s->next)
		ring_read(r, &s->rd, ring_fwd_one, &s->tcp);
}

static int ring_postparse(void)
{
	for (struct ring *r = ring_first(); r; r = r->next) {
		struct ring_sec *rs = r->owner;

		if (!rs || !rs->srvs)
			continue;
		for (struct ring_srv *s = rs->srvs; s; s = s->next) {
			struct sockaddr_storage a = s->tcp.addr;

			s->tcp.connect_ms = rs->connect_ms;
			s->tcp.server_ms = rs->server_ms;
			s->tcp.queue_max = r->size;
			log_tcp_init(&s->tcp, &a, s->tcp.addrlen);
			ring_reader_init(r, &s->rd, 0);
		}
		rs->w.fn = ring_fwd;
		rs->w.arg = r;
		ring_watch(r, &rs->w);
	}
	return 0;
}

/* ---- show events ---- */

struct ev_watch {
	struct cli_ctx    *ctx;
	struct ring       *ring;
	struct ring_reader rd;
	struct ring_waiter w;
};

static void show_one(const char *msg, size_t len, void *arg)
{
	struct dstr *out = arg;

	dstr_add(out, msg, len);
	dstr_add(out, "\n", 1);
}

/* A new message in the ring a "show events -w" follows. */
static void show_events_more(void *arg)
{
	struct ev_watch *ew = arg;

	if (ring_read(ew->ring, &ew->rd, show_one, &ew->ctx->out))
		cli_ctx_wake(ew->ctx);
}

static void show_events_abort(struct cli_ctx *ctx)
{
	struct ev_watch *ew = ctx->wait_data;

	ring_unwatch(ew->ring, &ew->w);
	free(ew);
}

static void show_events_list(struct cli_ctx *ctx)
{
	dstr_printf(&ctx->out, "Supported events sinks are listed below. Add -w(wait), "
		    "-n(new). Any key to stop\n"
		    "    stdout     : type=fd, %lu dropped, standard output (fd#1)\n"
		    "    stderr     : type=fd, 0 dropped, standard output (fd#2)\n",
		    0UL);
	for (const struct ring *r = ring_first(); r; r = r->next)
		dstr_printf(&ctx->out, "    %-10s : type=buffer, 0 dropped, %s\n", r->name, r->desc);
}

/* show events [<ring>] [-w] [-n] */
static int cli_show_events(struct cli_ctx *ctx, int argc, char **argv)
{
	struct ring *r;
	struct ring_reader rd;
	int wait = 0, at_end = 0;

	if (argc < 3) {
		show_events_list(ctx);
		return 0;
	}
	if (!(r = ring_find(argv[2]))) {
		dstr_printf(&ctx->out, "No such event sink\n");
		return -1;
	}
	for (int i = 3; i < argc; i++) {
		const char *o = argv[i];

		if (o[0] != '-' || !o[1] || strspn(o + 1, "wn") != strlen(o + 1)) {
			dstr_printf(&ctx->out, "unknown option\n");
			return -1;
		}
		wait |= strchr(o, 'w') != NULL;
		at_end |= strchr(o, 'n') != NULL;
	}
	if (wait && !ctx->wake) {
		dstr_printf(&ctx->out, "'-w' needs a runtime API connection\n");
		return -1;
	}
	ring_reader_init(r, &rd, at_end);
	ring_read(r, &rd, show_one, &ctx->out);
	if (wait) {
		struct ev_watch *ew = xcalloc(1, sizeof(*ew));

		ew->ctx = ctx;
		ew->ring = r;
		ew->rd = rd;
		ew->w.fn = show_events_more;
		ew->w.arg = ew;
		ring_watch(r, &ew->w);
		ctx->waiting = 1;
		ctx->stop_on_input = 1;
		ctx->abort = show_events_abort;
		ctx->wait_data = ew;
	}
	return 0;
}

/* ---- registration ---- */

static struct cfg_section ring_sections[] = {
	{ "ring", CFG_SEC_RING, sec_ring, sec_ring_end, NULL },
};

static struct cfg_kw ring_kws[] = {
	{ "description", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_desc, .usage = "<text>" },
	{ "format", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_format, .usage = "<format>" },
	{ "maxlen", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_maxlen, .usage = "<length>" },
	{ "size", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_size, .usage = "<size>" },
	{ "timeout connect", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_timeout,
	  .usage = "<time>", .arg = offsetof(struct ring_sec, connect_ms) },
	{ "timeout server", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_timeout,
	  .usage = "<time>", .arg = offsetof(struct ring_sec, server_ms) },
	{ "server", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_server,
	  .usage = "<name> <address> [log-proto legacy|octet-count]" },
	{ "backing-file", CFG_SEC_RING, CFG_T_FUNC, 0, .parse = kw_ring_backing,
	  .flags = CFG_KW_F_REFUSED, .usage = "<path>" },
};

static struct cli_kw ring_cli_kws[] = {
	{ { "show", "events", NULL }, "show events [<ring>] [-w] [-n]", "list the event sinks, "
	  "or show a ring's messages (-w: and the new ones as they come, -n: only those)",
	  CLI_LVL_OPERATOR, cli_show_events },
};

SLUICE_INIT(ring_cfg_register)
{
	cfg_register_sections(ring_sections, ARRAY_SIZE(ring_sections));
	cfg_register(ring_kws, ARRAY_SIZE(ring_kws));
	cfg_register_postparse(ring_postparse, 45);
	cli_register(ring_cli_kws, ARRAY_SIZE(ring_cli_kws));
}
