/* Stats socket: client connections, line splitting, command dispatch and
 * the built-in commands help/prompt/quit (cli.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ev.h>
#include <sluice/cfg.h>
#include <sluice/cli.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/str.h>
#include <sluice/units.h>
#include <sluice/version.h>
#include <sluice/addr.h>
#include <sluice/ticks.h>

#define CLI_IN_MAX  16384          /* longest accepted command line */
#define CLI_OUT_MAX (64 << 20)     /* a client that reads nothing can't grow us past this */
#define CLI_OUT_PAUSE (256 << 10)  /* pipelined lines wait while this much output is unsent */

struct cli_client {
	struct cli_client *prev, *next;
	struct listener   *li;
	int                fd;
	ev_io              io;
	int                events;
	ev_timer           timer;
	struct cli_ctx     ctx;
	size_t             inlen;
	int                closing;    /* close once the output is sent */
	int                ran_all;    /* not interactive, every line received ran */
	char              *pending;    /* a command ending in "<<": waits for its payload */
	int                prompt_due; /* "> " follows the answer being made over time */
	struct dstr        payload;    /* the payload lines received so far */
	char               in[CLI_IN_MAX];
};

static struct {
	struct cli_client   *clients;
} cli;

/* Splits <cmd> in place into words (spaces separate, backslash escapes).
 * Returns the number of words or -1 when there are too many. */
static int cli_split(char *cmd, char **argv)
{
	int argc = 0;
	char *r = cmd, *w = cmd;

	while (*r) {
		while (*r == ' ' || *r == '\t')
			r++;
		if (!*r)
			break;
		if (argc == CLI_MAX_ARGS)
			return -1;
		argv[argc++] = w;
		while (*r && *r != ' ' && *r != '\t') {
			if (*r == '\\' && r[1])
				r++;
			*w++ = *r++;
		}
		if (*r)
			r++;
		*w++ = '\0';
	}
	return argc;
}

static void cli_help_row(const struct cli_kw *kw, void *arg)
{
	struct cli_ctx *ctx = arg;

	if (kw->level <= ctx->level && kw->usage)
		dstr_printf(&ctx->out, "  %-40s: %s\n", kw->usage, kw->help);
}

static void cli_print_help(struct cli_ctx *ctx)
{
	dstr_printf(&ctx->out, "The following commands are valid at this level:\n");
	cli_cmd_foreach(cli_help_row, ctx);
}

/* "set severity-output": the answer of a failed command, written from
 * offset <start> of the output, gets the error severity as a prefix
 * (HAProxy prefixes its messages with their syslog severity; an error is
 * severity 3, "err"). */
static void cli_severity_prefix(struct cli_ctx *ctx, size_t start)
{
	const char *pfx = ctx->severity == CLI_SEV_NUMBER ? "[3]: " :
			  ctx->severity == CLI_SEV_STRING ? "[err]: " : NULL;
	size_t tail, plen;
	char *copy;

	if (!pfx || ctx->out.len <= start)
		return;
	tail = ctx->out.len - start;
	plen = strlen(pfx);
	copy = xcalloc(1, tail);
	memcpy(copy, ctx->out.p + start, tail);
	ctx->out.len = start;
	dstr_add(&ctx->out, pfx, plen);
	dstr_add(&ctx->out, copy, tail);
	free(copy);
}

static void cli_exec_one(struct cli_ctx *ctx, char *cmd)
{
	char *argv[CLI_MAX_ARGS];
	const struct cli_kw *kw;
	int argc = cli_split(cmd, argv), nw;
	size_t start = ctx->out.len;

	if (argc < 0) {
		dstr_printf(&ctx->out, "Too many words in the command (max %d).\n", CLI_MAX_ARGS);
		cli_severity_prefix(ctx, start);
		return;
	}
	if (argc == 0)
		return;
	kw = cli_cmd_find(argc, argv, &nw);
	if (!kw || kw->level > ctx->level) {
		ctx->failed++;
		if (kw) {
			dstr_printf(&ctx->out, "Permission denied\n\n");
			cli_severity_prefix(ctx, start);
			return;
		}
		dstr_printf(&ctx->out, "Unknown command: '%s'\n", argv[0]);
		cli_print_help(ctx);
		dstr_printf(&ctx->out, "\n");
		cli_severity_prefix(ctx, start);
		return;
	}
	if (kw->fn(ctx, argc, argv) == -1) {
		ctx->failed++;
		cli_severity_prefix(ctx, start);
	}
	/* Every answer ends with an empty line, as clients expect (one that
	 * comes over time: cli_ctx_done()). */
	if (!ctx->quit && !ctx->waiting)
		dstr_printf(&ctx->out, "\n");
}

int cli_exec_line(struct cli_ctx *ctx, const char *line, size_t len)
{
	char *copy, *cmd, *p, *w;
	int esc = 0;

	if (len >= CLI_IN_MAX) {
		dstr_printf(&ctx->out, "Command line too long (max %d bytes).\n\n", CLI_IN_MAX - 1);
		return -1;
	}
	if (memchr(line, '\0', len)) {
		dstr_printf(&ctx->out, "Invalid NUL byte in the command line.\n\n");
		return -1;
	}
	copy = malloc(len + 1);
	if (!copy) {
		dstr_printf(&ctx->out, "Out of memory.\n\n");
		return -1;
	}
	memcpy(copy, line, len);
	copy[len] = '\0';
	/* Split on unescaped ';'; "\;" stays a literal semicolon. */
	cmd = w = copy;
	for (p = copy; ; p++) {
		if (esc) {
			esc = 0;
			if (*p != ';')
				*w++ = '\\';  /* only "\;" is an escape here */
			if (*p) {
				*w++ = *p;
				continue;
			}
			/* a trailing backslash: the line still ends here */
		}
		if (*p == '\\') {
			esc = 1;
			continue;
		}
		if (*p == ';' || !*p) {
			int end = !*p;

			*w = '\0';
			cli_exec_one(ctx, cmd);
			/* a command answering over time ends the line: what
			 * follows it is not run */
			if (end || ctx->quit || ctx->waiting)
				break;
			cmd = w = p + 1;
			continue;
		}
		*w++ = *p;
	}
	free(copy);
	return 0;
}

/* ---- built-in commands ---- */

static int cli_help(struct cli_ctx *ctx, int argc, char **argv)
{
	cli_print_help(ctx);
	return 0;
}

static int cli_prompt(struct cli_ctx *ctx, int argc, char **argv)
{
	ctx->interactive = !ctx->interactive;
	return 0;
}

static int cli_quit(struct cli_ctx *ctx, int argc, char **argv)
{
	ctx->quit = 1;
	return 0;
}

/* "set timeout cli <delay>" (seconds unless a unit is given), as HAProxy:
 * the idle timeout of this connection; hatop sends it on connect. */
static int cli_set_timeout(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *err = NULL;
	uint32_t ms;

	if (argc < 4) {
		dstr_printf(&ctx->out, "Expects an integer value.\n");
		return -1;
	}
	if (parse_time_ms(argv[3], 1000, &ms, &err) < 0 || ms < 1) {
		dstr_printf(&ctx->out, "Invalid timeout value.\n");
		return -1;
	}
	ctx->timeout_ms = ms;
	return 0;
}

static int cli_level_parse(const char *s)
{
	if (strcmp(s, "user") == 0)
		return CLI_LVL_USER;
	if (strcmp(s, "operator") == 0)
		return CLI_LVL_OPERATOR;
	if (strcmp(s, "admin") == 0)
		return CLI_LVL_ADMIN;
	return -1;
}

/* "operator" / "user": lower the level of this connection, never raise it. */
static int cli_set_level(struct cli_ctx *ctx, int argc, char **argv)
{
	int lvl = cli_level_parse(argv[0]);

	if (lvl > ctx->level) {
		dstr_printf(&ctx->out, "Permission denied\n");
		return -1;
	}
	ctx->level = lvl;
	return 0;
}

/* show reload-state: the command lines a reload hands to the new worker. */
static int cli_show_reload_state(struct cli_ctx *ctx, int argc, char **argv)
{
	cli_state_dump_all(&ctx->out);
	return 0;
}

static const char *cli_level_name(int lvl)
{
	return lvl == CLI_LVL_ADMIN ? "admin" : lvl == CLI_LVL_OPERATOR ? "operator" : "user";
}

/* Refuses words after a command that takes none. Returns 0, or -1 after
 * the message. */
static int cli_no_arg(struct cli_ctx *ctx, int argc, char **argv, int nwords)
{
	if (argc <= nwords)
		return 0;
	dstr_printf(&ctx->out, "'");
	for (int i = 0; i < nwords; i++)
		dstr_printf(&ctx->out, "%s%s", i ? " " : "", argv[i]);
	dstr_printf(&ctx->out, "' takes no argument (got '%s').\n", argv[nwords]);
	return -1;
}

/* show cli level: this session's level, one word. */
static int cli_show_cli_level(struct cli_ctx *ctx, int argc, char **argv)
{
	if (cli_no_arg(ctx, argc, argv, 3) == -1)
		return -1;
	dstr_printf(&ctx->out, "%s\n", cli_level_name(ctx->level));
	return 0;
}

/* show cli sockets: "# socket lvl processes", then one line per stats
 * socket: its address (unix@PATH, ipv4@IP:PORT, ipv6@[IP]:PORT), its level
 * and "all" (one process, one thread). */
static int cli_show_cli_sockets(struct cli_ctx *ctx, int argc, char **argv)
{
	if (cli_no_arg(ctx, argc, argv, 3) == -1)
		return -1;
	dstr_printf(&ctx->out, "# socket lvl processes\n");
	for (struct listener *li = global.cli_listeners; li; li = li->next) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char a[160];

		if (li->flags & LI_F_UNIX)
			listener_key(li, a, sizeof(a));
		else if (li->fd >= 0 && getsockname(li->fd, (struct sockaddr *)&ss, &sl) == 0) {
			char ip[128];

			snprintf(a, sizeof(a), "%s@%s", ss.ss_family == AF_INET6 ? "ipv6" : "ipv4",
				 addr_to_str(&ss, ip, sizeof(ip)));
		} else
			snprintf(a, sizeof(a), "%s", li->addr_str ? li->addr_str : "?");
		dstr_printf(&ctx->out, "%s %s all\n", a, cli_level_name(li->bc->level));
	}
	return 0;
}

static const char *const cli_sev_names[] = { "none", "number", "string" };   /* CLI_SEV_* */

/* The CLI_SEV_* that <name> names, or -1. */
static int cli_severity_parse(const char *name)
{
	for (int i = 0; i < (int)ARRAY_SIZE(cli_sev_names); i++)
		if (strcmp(name, cli_sev_names[i]) == 0)
			return i;
	return -1;
}

/* set severity-output none|number|string */
static int cli_set_severity(struct cli_ctx *ctx, int argc, char **argv)
{
	int sev = argc == 3 ? cli_severity_parse(argv[2]) : -1;

	if (sev < 0) {
		dstr_printf(&ctx->out, "one of 'none', 'number', 'string' is a required argument\n");
		return -1;
	}
	ctx->severity = sev;
	return 0;
}

/* expert-mode [on|off], experimental-mode [on|off]: a session flag; without
 * an argument, says whether it is on. <flag> comes from the row's function. */
static int cli_mode_toggle(struct cli_ctx *ctx, int argc, char **argv, int *flag)
{
	if (argc == 1) {
		dstr_printf(&ctx->out, "%s is %s\n", argv[0], *flag ? "ON" : "OFF");
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "on") == 0 || strcmp(argv[1], "off") == 0)) {
		*flag = argv[1][1] == 'n';
		return 0;
	}
	dstr_printf(&ctx->out, "'%s' expects 'on' or 'off' (or nothing to show it).\n", argv[0]);
	return -1;
}

static int cli_expert_mode(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_mode_toggle(ctx, argc, argv, &ctx->expert);
}

static int cli_experimental_mode(struct cli_ctx *ctx, int argc, char **argv)
{
	return cli_mode_toggle(ctx, argc, argv, &ctx->experimental);
}

/* show version: the version string alone, as -v prints it. */
static int cli_show_version(struct cli_ctx *ctx, int argc, char **argv)
{
	if (cli_no_arg(ctx, argc, argv, 2) == -1)
		return -1;
	dstr_printf(&ctx->out, "%s\n", SLUICE_VERSION);
	return 0;
}

/* show libs: the libraries sluice was built with and runs with (the
 * "Libraries" part of -vv). */
static int cli_show_libs(struct cli_ctx *ctx, int argc, char **argv)
{
	if (cli_no_arg(ctx, argc, argv, 2) == -1)
		return -1;
	version_libs(&ctx->out);
	return 0;
}

static struct cli_kw cli_builtin_kws[] = {
	{ { "show", "reload-state", NULL }, "show reload-state",
	  "print the commands a reload replays in the new worker (runtime state)",
	  CLI_LVL_ADMIN, cli_show_reload_state },
	{ { "help", NULL }, "help", "list the commands valid at this level", CLI_LVL_USER, cli_help },
	{ { "prompt", NULL }, "prompt", "toggle interactive mode with a prompt", CLI_LVL_USER, cli_prompt },
	{ { "quit", NULL }, "quit", "close this connection", CLI_LVL_USER, cli_quit },
	{ { "set", "timeout", "cli", NULL }, "set timeout cli <delay>",
	  "change this connection's idle timeout", CLI_LVL_USER, cli_set_timeout },
	{ { "operator", NULL }, "operator", "lower this connection's level to operator",
	  CLI_LVL_USER, cli_set_level },
	{ { "user", NULL }, "user", "lower this connection's level to user", CLI_LVL_USER, cli_set_level },
	{ { "show", "cli", "level", NULL }, "show cli level", "this connection's level",
	  CLI_LVL_USER, cli_show_cli_level },
	{ { "show", "cli", "sockets", NULL }, "show cli sockets", "list the stats sockets and "
	  "their levels", CLI_LVL_USER, cli_show_cli_sockets },
	{ { "set", "severity-output", NULL }, "set severity-output none|number|string",
	  "prefix this connection's error answers with their severity", CLI_LVL_USER,
	  cli_set_severity },
	{ { "expert-mode", NULL }, "expert-mode [on|off]", "set or show this connection's "
	  "expert mode", CLI_LVL_ADMIN, cli_expert_mode },
	{ { "experimental-mode", NULL }, "experimental-mode [on|off]", "set or show this "
	  "connection's experimental mode", CLI_LVL_ADMIN, cli_experimental_mode },
	{ { "show", "version", NULL }, "show version", "the version of this process",
	  CLI_LVL_USER, cli_show_version },
	{ { "show", "libs", NULL }, "show libs", "the libraries linked and their versions",
	  CLI_LVL_OPERATOR, cli_show_libs },
};

/* ---- connections ---- */

static void cli_client_free(struct cli_client *c)
{
	if (c->ctx.waiting && c->ctx.abort)
		c->ctx.abort(&c->ctx);
	ev_io_stop(global.loop, &c->io);
	ev_timer_stop(global.loop, &c->timer);
	close(c->fd);
	dstr_free(&c->ctx.out);
	dstr_free(&c->payload);
	free(c->pending);
	if (c->prev)
		c->prev->next = c->next;
	else
		cli.clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	global.jobs--;
	if (c->li)
		listener_release(c->li);
	free(c);
}

static void cli_want(struct cli_client *c, int events)
{
	if (c->events == events)
		return;
	ev_io_stop(global.loop, &c->io);
	c->events = events;
	if (events) {
		ev_io_set(&c->io, c->fd, events);
		ev_io_start(global.loop, &c->io);
	}
}

/* Sends pending output. Returns 0, or -1 when the client is gone. */
static int cli_flush(struct cli_client *c)
{
	while (c->ctx.out.len) {
		ssize_t n = send(c->fd, c->ctx.out.p, c->ctx.out.len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -1;
		}
		dstr_consume(&c->ctx.out, (size_t)n);
		ev_timer_again(global.loop, &c->timer);   /* a slow reader is not idle */
	}
	return 0;
}

/* Payloads ("<cmd> <<", lines, an empty line) are bounded like the output. */
#define CLI_PAYLOAD_MAX (1 << 20)

/* Whether command line <l> (<len> bytes) asks for a payload: its last word
 * is "<<". Returns the length of the command without it, or -1. */
static ssize_t cli_payload_start(const char *l, size_t len)
{
	while (len && (l[len - 1] == ' ' || l[len - 1] == '\t'))
		len--;
	if (len < 2 || l[len - 1] != '<' || l[len - 2] != '<' ||
	    (len > 2 && l[len - 3] != ' ' && l[len - 3] != '\t'))
		return -1;
	return (ssize_t)len - 2;
}

/* One line of a payload (<len> bytes at <l>). Returns 1 when the payload
 * ended and its command ran, 0 while it goes on. */
static int cli_payload_line(struct cli_client *c, const char *l, size_t len)
{
	if (len) {
		if (c->payload.len + len + 1 > CLI_PAYLOAD_MAX) {
			dstr_printf(&c->ctx.out, "Payload too large (max %d bytes).\n\n", CLI_PAYLOAD_MAX);
			free(c->pending);
			c->pending = NULL;
			dstr_free(&c->payload);
			return 1;
		}
		dstr_add(&c->payload, l, len);
		dstr_add(&c->payload, "\n", 1);
		return 0;
	}
	c->ctx.payload = c->payload.p ? c->payload.p : "";
	c->ctx.payload_len = c->payload.len;
	cli_exec_line(&c->ctx, c->pending, strlen(c->pending));
	c->ctx.payload = NULL;
	c->ctx.payload_len = 0;
	free(c->pending);
	c->pending = NULL;
	dstr_free(&c->payload);
	return 1;
}

/* Whether a complete line waits in the input buffer. */
static int cli_line_ready(const struct cli_client *c)
{
	return c->inlen && memchr(c->in, '\n', c->inlen) != NULL;
}

/* Runs the complete lines received, in order. Without "prompt", every line
 * the client sent before waiting for answers is a command (pipelining, as
 * HAProxy): the connection closes once the last of them ran and nothing else
 * is buffered, or after "quit". Stops while the output backs up, so that a
 * client pipelining commands without reading cannot make us build every
 * answer at once; the rest runs as the output drains. */
static void cli_process_input(struct cli_client *c)
{
	char *nl;

	while (!c->closing && !c->ctx.waiting && c->ctx.out.len < CLI_OUT_PAUSE &&
	       (nl = memchr(c->in, '\n', c->inlen))) {
		size_t len = (size_t)(nl - c->in), l = len;
		ssize_t plen;

		if (l && c->in[l - 1] == '\r')
			l--;
		if (c->pending) {
			int done = cli_payload_line(c, c->in, l);

			memmove(c->in, nl + 1, c->inlen - len - 1);
			c->inlen -= len + 1;
			if (!done)
				continue;
		} else if ((plen = cli_payload_start(c->in, l)) >= 0) {
			c->pending = strndup(c->in, (size_t)plen);
			memmove(c->in, nl + 1, c->inlen - len - 1);
			c->inlen -= len + 1;
			if (!c->pending) {
				dstr_printf(&c->ctx.out, "Out of memory.\n\n");
				c->closing = 1;
			}
			continue;
		} else {
			cli_exec_line(&c->ctx, c->in, l);
			memmove(c->in, nl + 1, c->inlen - len - 1);
			c->inlen -= len + 1;
			if (c->ctx.waiting && c->ctx.stop_on_input && c->inlen) {
				/* typed ahead: "any key" already came */
				c->inlen = 0;
				if (c->ctx.abort)
					c->ctx.abort(&c->ctx);
				c->ctx.waiting = c->ctx.stop_on_input = 0;
				c->ctx.abort = NULL;
				dstr_add(&c->ctx.out, "\n", 1);
			}
		}
		if (c->ctx.timeout_ms) {
			c->timer.repeat = tick_to_ev(c->ctx.timeout_ms);
			ev_timer_again(global.loop, &c->timer);
			c->ctx.timeout_ms = 0;
		}
		if (c->ctx.quit)
			c->closing = 1;
		else if (c->ctx.interactive && c->ctx.waiting)
			c->prompt_due = 1;   /* once the answer is complete */
		else if (c->ctx.interactive)
			dstr_printf(&c->ctx.out, "> ");
		else if (!c->inlen)
			c->ran_all = 1;   /* maybe the last line sent: cli_io_cb() tells */
	}
}

/* The client closed its side: an unterminated last line still runs, and a
 * payload ends with the input. Only called with no complete line left. */
static void cli_input_end(struct cli_client *c)
{
	if (c->inlen) {
		if (c->pending)
			cli_payload_line(c, c->in, c->inlen);
		else
			cli_exec_line(&c->ctx, c->in, c->inlen);
		c->inlen = 0;
	}
	if (c->pending)
		cli_payload_line(c, "", 0);
	c->closing = 1;
}

/* Reads what the client sent into the free room. Returns the bytes read, 0
 * at the end of the input, -1 when nothing is there yet, -2 on error. */
static ssize_t cli_recv(struct cli_client *c)
{
	ssize_t n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);

	if (n > 0) {
		c->inlen += (size_t)n;
		ev_timer_again(global.loop, &c->timer);
		return n;
	}
	if (n == 0)
		return 0;
	return errno == EAGAIN || errno == EINTR ? -1 : -2;
}

static void cli_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct cli_client *c = w->data;

	if ((revents & EV_READ) && !c->closing && c->inlen < sizeof(c->in)) {
		ssize_t n = cli_recv(c);

		if (n == 0)
			cli_input_end(c);
		else if (n == -2) {
			cli_client_free(c);
			return;
		}
		if (n > 0 && c->ctx.waiting && c->ctx.stop_on_input) {
			/* "any key to stop" (show events -w): the input is dropped */
			c->inlen = 0;
			if (c->ctx.abort)
				c->ctx.abort(&c->ctx);
			cli_ctx_done(&c->ctx);
			return;
		}
	}
	/* Run what can run, send it, and go on while lines wait and the
	 * output drained (each round runs at least one line or reads more
	 * input: no endless loop). */
	for (;;) {
		cli_process_input(c);
		if (!c->closing && c->inlen == sizeof(c->in) && !cli_line_ready(c)) {
			dstr_printf(&c->ctx.out, "Command line too long (max %d bytes).\n\n",
				    CLI_IN_MAX - 1);
			c->closing = 1;
		}
		if (c->ran_all && !c->closing) {
			/* Without "prompt", the lines sent together all run, but
			 * they may not all have fit in the buffer: the rest is in
			 * the socket now. Nothing there: the client waits for the
			 * answers, and the connection ends after them. */
			ssize_t n = cli_recv(c);

			c->ran_all = 0;
			if (n == -2) {
				cli_client_free(c);
				return;
			}
			if (n == 0)
				cli_input_end(c);
			else if (n == -1)
				c->closing = 1;
		}
		if (cli_flush(c) == -1 || c->ctx.out.len > CLI_OUT_MAX) {
			cli_client_free(c);
			return;
		}
		if (c->closing || c->ctx.out.len || c->ctx.waiting || !cli_line_ready(c))
			break;
	}
	if (c->closing && !c->ctx.out.len && !c->ctx.waiting) {
		shutdown(c->fd, SHUT_WR);
		cli_client_free(c);
		return;
	}
	/* Read more only once every buffered line ran (so that the end of the
	 * input is only seen after them) and the output is not backed up. */
	cli_want(c, (!c->closing && c->ctx.out.len < CLI_OUT_PAUSE && !cli_line_ready(c) ?
		     EV_READ : 0) | (c->ctx.out.len ? EV_WRITE : 0));
}

/* ctx->wake of a connection: a command answering over time has output, or
 * ended: send it, and run what waits. */
static void cli_ctx_wake_cb(struct cli_ctx *ctx)
{
	struct cli_client *c = container_of(ctx, struct cli_client, ctx);

	if (!ctx->waiting && c->prompt_due) {
		c->prompt_due = 0;
		dstr_printf(&ctx->out, "> ");
	}
	cli_io_cb(global.loop, &c->io, 0);
}

static void cli_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct cli_client *c = w->data;

	cli_client_free(c);
}

static int cli_client_new(struct listener *li, int fd, int level)
{
	struct cli_client *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->fd = fd;
	c->li = li;
	c->ctx.level = level;
	c->ctx.expose_fd = li && (li->bc->flags & LI_F_EXPOSE_FD);
	c->ctx.severity = li ? li->bc->severity : CLI_SEV_NONE;
	c->ctx.fd = fd;
	c->ctx.wake = cli_ctx_wake_cb;
	ev_io_init(&c->io, cli_io_cb, fd, 0);
	c->io.data = c;
	ev_init(&c->timer, cli_timer_cb);
	c->timer.repeat = tick_to_ev(global.stats_timeout ? global.stats_timeout : 10000);
	c->timer.data = c;
	ev_timer_again(global.loop, &c->timer);
	c->next = cli.clients;
	if (cli.clients)
		cli.clients->prev = c;
	cli.clients = c;
	global.jobs++;
	cli_want(c, EV_READ);
	return 0;
}

void cli_accept(struct listener *li, int fd, struct sockaddr_storage *addr, socklen_t alen)
{
	if (cli_client_new(li, fd, li->bc->level) == -1) {
		close(fd);
		listener_release(li);
	}
}

int cli_adopt(int fd, int level)
{
	if (cli_client_new(NULL, fd, level) == -1) {
		close(fd);
		return -1;
	}
	return 0;
}

void cli_client_foreach(void (*fn)(int fd, int events, int timer_on,
                                   const struct cli_ctx *ctx, void *arg), void *arg)
{
	for (struct cli_client *c = cli.clients; c; c = c->next)
		fn(c->fd, c->events, ev_is_active(&c->timer), &c->ctx, arg);
}

void cli_close_all(void)
{
	while (cli.clients)
		cli_client_free(cli.clients);
}

/* ---- configuration ---- */

static int kw_stats_socket(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return listener_parse_bind(ctx, &global.cli_listeners, NULL, argc, argv, 1);
}

static int bind_level(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                      char **argv, char **err)
{
	int lvl = argc > 1 ? cli_level_parse(argv[1]) : -1;

	if (lvl < 0) {
		*err = str_fmt("expects 'user', 'operator' or 'admin'");
		return -1;
	}
	bc->level = lvl;
	return 2;
}

static int bind_expose_fd(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                          char **argv, char **err)
{
	if (argc < 2 || strcmp(argv[1], "listeners") != 0) {
		*err = str_fmt("expects 'listeners'");
		return -1;
	}
	bc->flags |= LI_F_EXPOSE_FD;   /* "_getsocks" hands the listeners over (sys/sockxfer.c) */
	return 2;
}

/* severity-output none|number|string: what "set severity-output" sets, as
 * each session of the socket starts. */
static int bind_severity(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                         char **argv, char **err)
{
	int sev = argc > 1 ? cli_severity_parse(argv[1]) : -1;

	if (sev < 0) {
		*err = str_fmt("expects 'none', 'number' or 'string'");
		return -1;
	}
	bc->severity = sev;
	return 2;
}

static struct bind_kw cli_bind_kws[] = {
	{ "level", .parse = bind_level, .cli_only = 1 },
	{ "severity-output", .parse = bind_severity, .cli_only = 1 },
	{ "expose-fd", .parse = bind_expose_fd, .cli_only = 1 },
};

static struct cfg_kw cli_cfg_kws[] = {
	{ "stats socket", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_stats_socket,
	  .usage = "<address> [level user|operator|admin] [mode <octal>] [options]" },
	{ "stats timeout", CFG_SEC_GLOBAL, CFG_T_TIME, offsetof(struct global, stats_timeout),
	  .usage = "<time>" },
	{ "stats maxconn", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, stats_maxconn),
	  .min = 1, .max = 1 << 24, .usage = "a number of connections" },
};

SLUICE_INIT(cli_register_all)
{
	cli_register(cli_builtin_kws, ARRAY_SIZE(cli_builtin_kws));
	bind_register_keywords(cli_bind_kws, ARRAY_SIZE(cli_bind_kws));
	cfg_register(cli_cfg_kws, ARRAY_SIZE(cli_cfg_kws));
}
