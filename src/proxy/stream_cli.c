/* The runtime API of streams (stream.h): "show sess [all|<id>]",
 * "shutdown session <id>" and "shutdown sessions server <bk>/<srv>". */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <sluice/acl_px.h>
#include <sluice/addr.h>
#include <sluice/buf.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/http_ana.h>
#include <sluice/http_retry.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/logformat.h>
#include <sluice/pipe.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/proxyproto.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/srv_idle.h>
#include <sluice/srv_observe.h>
#include <sluice/ssl.h>
#include <sluice/stktable.h>
#include <sluice/stream.h>
#include <sluice/tcp_rules.h>
#include <sluice/vars.h>
#include <sluice/ticks.h>

/* ---- runtime API ---- */

static const char *stream_state_str(const struct stream *s)
{
	switch (s->state) {
	case ST_PROXY:   return "PROXY";
	case ST_SSL:     return "SSL";
	case ST_INSPECT: return "INSPECT";
	default:
		/* mode http with no exchange at the server: waiting for a request */
		if (s->state == ST_HTTP && (s->ss.st == SS_NONE || s->ss.st == SS_KEPT))
			return "HREQ";
		return ss_state_str(s->ss.st);
	}
}

static const char *stream_mode_str(const struct proxy *px)
{
	return px->mode == PR_MODE_HTTP ? "http" : "tcp";
}

/* The detailed form of "show sess all" / "show sess <id>". */
static void stream_dump_full(struct dstr *out, const struct stream *s, ev_tstamp now)
{
	const struct channel *chs[2] = { &s->req, &s->res };
	char src[80], date[48];
	struct tm tm;

	localtime_r(&s->accept_date.tv_sec, &tm);
	strftime(date, sizeof(date), "%d/%b/%Y:%H:%M:%S", &tm);
	dstr_printf(out, "%p: [%s.%06ld] id=%llu proto=%s source=%s\n", (const void *)s, date,
		    (long)(s->accept_date.tv_nsec / 1000), (unsigned long long)s->uniq_id,
		    s->cli_addr.ss_family == AF_INET6 ? "tcpv6" :
		    s->cli_addr.ss_family == AF_UNIX ? "unix_stream" : "tcpv4",
		    addr_to_str(&s->cli_addr, src, sizeof(src)));
	dstr_printf(out, "  state=%s conn_retries=%d redispatched=%d queued=%d nreq=%u\n",
		    stream_state_str(s), s->ss.retries, s->ss.redispatched, s->ss.st == SS_QUEUED,
		    (unsigned)s->nreq);
	dstr_printf(out, "  frontend=%s (id=%d mode=%s), listener=%s (id=%d)\n",
		    s->fe->name, s->fe->id, stream_mode_str(s->fe),
		    s->li && s->li->bc->name ? s->li->bc->name : "?", s->li ? s->li->id : -1);
	if (s->be)
		dstr_printf(out, "  backend=%s (id=%d mode=%s)\n", s->be->name, s->be->id,
			    stream_mode_str(s->be));
	else
		dstr_printf(out, "  backend=<NONE> (id=-1 mode=-)\n");
	dstr_printf(out, "  server=%s (id=%d)\n", s->ss.target ? s->ss.target->name : "<NONE>",
		    s->ss.target ? s->ss.target->id : -1);
	dstr_printf(out, "  age=%lds idle_cli=%lds idle_srv=%lds\n", (long)(now - s->t_accept),
		    (long)(s->cli.last_act ? now - s->cli.last_act : 0),
		    (long)(s->srv.fd >= 0 && s->srv.last_act ? now - s->srv.last_act : 0));
	dstr_printf(out, "  scf=%p flags=0x%08x fd=%d\n", (const void *)&s->cli, s->cli.flags,
		    s->cli.fd);
	dstr_printf(out, "  scb=%p flags=0x%08x fd=%d\n", (const void *)&s->srv, s->srv.flags,
		    s->srv.fd);
	for (int i = 0; i < 2; i++) {
		const struct channel *ch = chs[i];

		dstr_printf(out, "  %s=%p (f=0x%x pipe=%d tofwd=%lld total=%llu)\n",
			    i ? "res" : "req", (const void *)ch, ch->flags, ch->pipe != NULL,
			    ch->to_forward == CHN_INFINITE ? -1LL : (long long)ch->to_forward,
			    (unsigned long long)ch->total);
		dstr_printf(out, "      buf=%p i=%u size=%u\n", (const void *)ch->buf,
			    ch->buf ? ch->buf->data : 0, buf_size());
	}
}

static int cli_show_sess(struct cli_ctx *ctx, int argc, char **argv)
{
	/* tick_now_ms() also works without a loop (tests, fuzzing). */
	ev_tstamp now = tick_to_ev(tick_now_ms());

	if (argc > 2) {
		int all = strcmp(argv[2], "all") == 0;
		uintptr_t p = 0;
		char *end = NULL;
		int found = 0;

		if (!all) {
			p = (uintptr_t)strtoull(argv[2], &end, 16);
			if (*end || end == argv[2]) {
				dstr_printf(&ctx->out, "Session not found.\n");
				return -1;
			}
		}
		for (const struct stream *s = stream_first(); s; s = s->next)
			if (all || (uintptr_t)s == p) {
				stream_dump_full(&ctx->out, s, now);
				found = 1;
			}
		if (!all && !found) {
			dstr_printf(&ctx->out, "Session not found.\n");
			return -1;
		}
		return 0;
	}

	for (const struct stream *s = stream_first(); s; s = s->next) {
		char src[80];

		dstr_printf(&ctx->out, "%p: proto=%s src=%s fe=%s be=%s srv=%s age=%lds state=%s "
			    "rq[total=%llu] rp[total=%llu] scf=[fd=%d] scb=[fd=%d]\n",
			    (const void *)s,
			    s->cli_addr.ss_family == AF_INET6 ? "tcpv6" :
			    s->cli_addr.ss_family == AF_UNIX ? "unix_stream" : "tcpv4",
			    addr_to_str(&s->cli_addr, src, sizeof(src)), s->fe->name, s->be->name,
			    s->ss.target ? s->ss.target->name : "<none>", (long)(now - s->t_accept),
			    stream_state_str(s), (unsigned long long)s->req.total,
			    (unsigned long long)s->res.total, s->cli.fd, s->srv.fd);
	}
	return 0;
}

/* shutdown session <ptr>: only pointers of live streams are accepted, the
 * value is compared, never dereferenced. */
static int cli_shutdown_session(struct cli_ctx *ctx, int argc, char **argv)
{
	struct stream *s;
	char *end;
	uintptr_t p;

	if (argc < 3) {
		dstr_printf(&ctx->out, "Session pointer expected (use 'show sess').\n");
		return -1;
	}
	p = (uintptr_t)strtoull(argv[2], &end, 16);
	for (s = stream_first(); s && (uintptr_t)s != p; s = s->next)
		;
	if (!s || *end) {
		dstr_printf(&ctx->out, "No such session (use 'show sess').\n");
		return -1;
	}
	stream_close(s, SE_KILLED, s->ss.st == SS_EST ? SF_DATA : SF_CONN);
	return 0;
}

/* shutdown sessions server <bk>/<srv> */
static int cli_shutdown_server_sessions(struct cli_ctx *ctx, int argc, char **argv)
{
	struct server *srv = cli_server(ctx, argc > 3 ? argv[3] : NULL);

	if (!srv)
		return -1;
	stream_kill_server(srv);
	return 0;
}

static struct cli_kw stream_cli_kws[] = {
	{ { "show", "sess", NULL }, "show sess [<id>|all]", "list the live sessions, or detail one or all", CLI_LVL_OPERATOR,
	  cli_show_sess },
	{ { "shutdown", "session", NULL }, "shutdown session <id>", "close a session (id from "
	  "'show sess')", CLI_LVL_ADMIN, cli_shutdown_session },
	{ { "shutdown", "sessions", "server", NULL }, "shutdown sessions server <bk>/<srv>",
	  "close every session of a server", CLI_LVL_ADMIN, cli_shutdown_server_sessions },
};

SLUICE_INIT(stream_register)
{
	cli_register(stream_cli_kws, ARRAY_SIZE(stream_cli_kws));
}

