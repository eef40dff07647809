/* "show peers [dict|-] [<section>]": the peers sections, their peers and
 * sessions, and where each table stands on each session, in the layout of
 * HAProxy 2.6's (fields that have no counterpart in sluice are left out). */
#include <string.h>
#include <time.h>

#include <sluice/addr.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/ticks.h>

#include "peers_int.h"

/* Flags shown on a section's line (sluice's own bits). */
#define SHOW_S_RS_LOCAL  0x01   /* waiting for the old process's tables */
#define SHOW_S_RS_REMOTE 0x02   /* asking the remote peers for them */
#define SHOW_S_RS_DONE   0x04   /* up to date */
#define SHOW_S_STOPPING  0x08   /* handing the tables over to the new process */

/* Flags shown on a peer's line. */
#define SHOW_P_LEARNING  0x01   /* we asked it for a full resync */
#define SHOW_P_TEACHING  0x02   /* it asked us: sending every entry */
#define SHOW_P_TAUGHT    0x04   /* everything sent, waiting for its confirmation */
#define SHOW_P_PARTIAL   0x08   /* it answered a resync request with "partial" */
#define SHOW_P_HANDOVER  0x10   /* the session hands the tables over to the new process */

/* A delay from now to <at> (libev date) as HAProxy shows it. */
static void show_delay(struct cli_ctx *ctx, const char *name, int active, ev_tstamp at)
{
	ev_tstamp d = at - tick_ev_now();

	if (!active)
		dstr_printf(&ctx->out, " %s=<NEVER>", name);
	else if (d < 0)
		dstr_printf(&ctx->out, " %s=<PAST>", name);
	else
		dstr_printf(&ctx->out, " %s=%lds", name, (long)d);
}

static const char *st_name(enum ps_state st)
{
	static const char *const n[] = {
		[PS_CONNECTING] = "CONN", [PS_HELLO_SENT] = "HSHK", [PS_WAIT_HELLO] = "ACPT",
		[PS_EST] = "EST", [PS_CLOSING] = "CLO",
	};

	return n[st];
}

static void show_tables(struct cli_ctx *ctx, const struct peers_sec *s, const struct peer *p)
{
	const struct peer_sess *ps = p->sess;

	dstr_printf(&ctx->out, "        shared tables:\n");
	for (int i = s->ntables - 1; i >= 0; i--) {
		const struct peers_table *pt = &s->tables[i];
		const struct ps_rtable *rt = NULL;
		const struct ps_table *st = ps && ps->st == PS_EST ? &ps->tbl[i] : NULL;

		for (size_t k = 0; ps && k < ps->nrt; k++)
			if (ps->rt[k].pt == pt)
				rt = &ps->rt[k];
		dstr_printf(&ctx->out, "          %p local_id=%d remote_id=%llu flags=0x%x "
			    "remote_data=0x%llx\n", (const void *)pt, i + 1,
			    rt ? (unsigned long long)rt->id : 0ULL, st && st->teaching ? 1u : 0u,
			    rt ? (unsigned long long)rt->def.data : 0ULL);
		dstr_printf(&ctx->out, "              last_acked=%u last_pushed=%u last_get=%u "
			    "teaching_origin=0 update=%u\n", p->acked ? p->acked[i] : 0,
			    st ? st->last_pushed : 0, rt ? rt->last_get : 0,
			    p->acked ? p->acked[i] : 0);
		dstr_printf(&ctx->out, "              table:%p id=%s update=%u localupdate=%u "
			    "commitupdate=%u refcnt=1\n", (const void *)pt->t, pt->t->name,
			    pt->t->update, pt->t->update, pt->t->update);
	}
}

static void show_peer(struct cli_ctx *ctx, const struct peers_sec *s, const struct peer *p,
                      int dict)
{
	const struct peer_sess *ps = p->sess;
	const char *addr = p->addr_str;
	unsigned flags = 0;
	char a1[64], a2[64];

	if (!addr && s->listeners)
		addr = s->listeners->addr_str;
	if (ps && ps->learning)
		flags |= SHOW_P_LEARNING;
	if (ps && ps->teach == 1)
		flags |= SHOW_P_TEACHING;
	if (ps && ps->teach == 2)
		flags |= SHOW_P_TAUGHT;
	if (p->partial)
		flags |= SHOW_P_PARTIAL;
	if (ps && ps->handover)
		flags |= SHOW_P_HANDOVER;
	dstr_printf(&ctx->out, "  %p: id=%s(%s,%s) addr=%s last_status=%s", (const void *)p,
		    p->name, p->local ? "local" : "remote",
		    ps && ps->st == PS_EST ? "active" : "inactive", addr ? addr : "-",
		    peers_ls_str(p->last_status));
	if (p->last_hshk)
		dstr_printf(&ctx->out, " last_hdshk=%lds\n", (long)(tick_ev_now() - p->last_hshk));
	else
		dstr_printf(&ctx->out, " last_hdshk=<NEVER>\n");
	dstr_printf(&ctx->out, "       ");
	show_delay(ctx, "reconnect", !p->local && ev_is_active(&p->retry),
		   ev_is_active(&p->retry) ? tick_ev_now() + ev_timer_remaining(global.loop,
			   (ev_timer *)&p->retry) : 0);
	show_delay(ctx, "heartbeat", ps && ps->st == PS_EST, ps ? ps->last_tx + PEERS_HEARTBEAT : 0);
	dstr_printf(&ctx->out, " confirm=%d tx_hbt=%u rx_hbt=%u no_hbt=%u new_conn=%u "
		    "proto_err=%u coll=%u\n", ps && ps->teach == 2, p->tx_hbt, p->rx_hbt, p->no_hbt,
		    p->new_conn, p->proto_err, p->coll);
	dstr_printf(&ctx->out, "        flags=0x%x", flags);
	if (ps) {
		dstr_printf(&ctx->out, " state=%s\n", st_name(ps->st));
		if (ps->c.fd >= 0) {
			struct sockaddr_storage local;
			socklen_t l = sizeof(local);

			if (getsockname(ps->c.fd, (struct sockaddr *)&local, &l) == -1)
				memset(&local, 0, sizeof(local));
			dstr_printf(&ctx->out, "        xprt=RAW src=%s addr=%s\n",
				    addr_to_str(ps->li ? &ps->from : &local, a1, sizeof(a1)),
				    addr_to_str(ps->li ? &local : &ps->from, a2, sizeof(a2)));
		}
		if (ps->cur && ps->cur->pt)
			dstr_printf(&ctx->out, "        remote_table:%p id=%s local_id=%d "
				    "remote_id=%llu\n", (const void *)ps->cur->pt, ps->cur->pt->t->name,
				    (int)(ps->cur->pt - s->tables) + 1, (unsigned long long)ps->cur->id);
		if (ps->cur_out >= 0)
			dstr_printf(&ctx->out, "        last_local_table:%p id=%s local_id=%d\n",
				    (const void *)&s->tables[ps->cur_out],
				    s->tables[ps->cur_out].t->name, ps->cur_out + 1);
	} else {
		dstr_printf(&ctx->out, "\n");
	}
	show_tables(ctx, s, p);
	if (dict)
		dstr_printf(&ctx->out, "        TX dictionary cache:\n        RX dictionary cache:\n");
}

static void show_sec(struct cli_ctx *ctx, const struct peers_sec *s, int dict)
{
	time_t now = time(NULL);
	struct tm tm;
	char date[32];
	unsigned flags = 0;

	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%d/%b/%Y:%H:%M:%S", &tm);
	if (s->resync == PEERS_RS_LOCAL)
		flags |= SHOW_S_RS_LOCAL;
	else if (s->resync == PEERS_RS_REMOTE)
		flags |= SHOW_S_RS_REMOTE;
	else
		flags |= SHOW_S_RS_DONE;
	if (s->handover || s->stop_time)
		flags |= SHOW_S_STOPPING;
	dstr_printf(&ctx->out, "%p: [%s] id=%s disabled=%d flags=0x%x", (const void *)s, date,
		    s->name, s->disabled || !s->local, flags);
	show_delay(ctx, "resync_timeout", s->resync != PEERS_RS_DONE && global.loop &&
		   ev_is_active(&s->resync_timer), global.loop && ev_is_active(&s->resync_timer) ?
		   tick_ev_now() + ev_timer_remaining(global.loop, (ev_timer *)&s->resync_timer) : 0);
	dstr_printf(&ctx->out, " task_calls=0\n");
	if (!s->local || s->disabled)
		return;
	for (const struct peer *p = s->peers; p; p = p->next)
		show_peer(ctx, s, p, dict);
}

static int cli_show_peers(struct cli_ctx *ctx, int argc, char **argv)
{
	int i = 2, dict = 0, found = 0;

	if (i < argc && (strcmp(argv[i], "dict") == 0 || strcmp(argv[i], "-") == 0)) {
		dict = argv[i][0] == 'd';
		i++;
	}
	for (const struct peers_sec *s = peers_sections; s; s = s->next) {
		if (i < argc && strcmp(s->name, argv[i]) != 0)
			continue;
		found = 1;
		show_sec(ctx, s, dict);
		dstr_printf(&ctx->out, "\n");
	}
	if (i < argc && !found) {
		dstr_printf(&ctx->out, "No such peers\n");
		return -1;
	}
	return 0;
}

static struct cli_kw peers_cli_kws[] = {
	{ { "show", "peers", NULL }, "show peers [dict|-] [<section>]",
	  "dump some information about all the peers or this peers section", CLI_LVL_OPERATOR,
	  cli_show_peers },
};

SLUICE_INIT(peers_cli_register)
{
	cli_register(peers_cli_kws, ARRAY_SIZE(peers_cli_kws));
}
