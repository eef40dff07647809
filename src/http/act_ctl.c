/* HTTP rule actions that steer the exchange rather than edit a head:
 * reject and silent-drop (the client is closed without a reply),
 * strict-mode (whether failed rewrites end the message), early-hint (a
 * 103 Early Hints response sent ahead of the final one) and wait-for-body
 * (the rules after it see the body). Rows of the one action registry
 * (action.h), run by the HTTP rules engine (rules.c). */
#include <stdio.h>
#include <string.h>

#include <sluice/action.h>
#include <sluice/buf.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/http_head.h>
#include <sluice/listener.h>
#include <sluice/proxy.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>
#include <sluice/units.h>

#include "ana_int.h"
#include "rules_int.h"

/* ---- reject, silent-drop ---- */

/* reject (arg 0) and silent-drop (arg 1): the rules stop and the client is
 * closed without a reply; silent-drop sends nothing at all (conn.h,
 * conn_set_drop()). As in HAProxy, both count a denied request (frontend,
 * listener, and the backend once it is chosen) and log "PR", in
 * http-response rules too. */
static enum http_act_ret ctl_exec_reject(const struct http_rule *r, struct http_rule_exec *x)
{
	struct stream *s = x->s;

	s->fe->fe_counters.denied_req++;
	if (s->li)
		s->li->counters.denied_req++;
	if (s->be != s->fe && s->txn && (s->txn->flags & TX_F_BE_SET))
		s->be->be_counters.denied_req++;
	if (r->act->arg)
		s->tcp_flags |= STRM_F_DROP;
	s->term_err = SE_PROXY;
	s->term_fin = SF_REQ;
	if (s->txn)
		s->txn->flags |= TX_F_DENIED;
	return HTTP_ACT_ABORT;
}

static int ctl_parse_none(struct http_rule_parse *p)
{
	return 0;
}

/* ---- strict-mode on|off ---- */

static int ctl_parse_strict(struct http_rule_parse *p)
{
	const char *w = p->idx < p->argc ? p->argv[p->idx] : "";

	if (strcmp(w, "on") != 0 && strcmp(w, "off") != 0) {
		http_rule_alert(p, "expects 'on' or 'off'%s%s%s", *w ? ", got '" : "", w,
				*w ? "'" : "");
		return -1;
	}
	p->r->how = strcmp(w, "off") == 0;   /* 1: failed rewrites are ignored */
	p->idx++;
	return 0;
}

/* The rules after it in this run of the set (the set's next run starts
 * strict again, as in HAProxy). */
static enum http_act_ret ctl_exec_strict(const struct http_rule *r, struct http_rule_exec *x)
{
	x->soft = r->how;
	return HTTP_ACT_CONT;
}

/* ---- early-hint <name> <fmt> ---- */

#define HINT_LINE "HTTP/1.1 103 Early Hints\r\n"

/* The fields of the open 103 response end: its empty line is added and
 * the whole head is granted to leave ahead of the final response (which
 * waits behind it in the response channel, as a server's interim responses
 * do). A head that no longer fits is dropped: hints are optional. */
static void ctl_hint_end(struct http_rule_exec *x)
{
	struct channel *ch = &x->s->res;
	struct buf *b = ch->buf;

	if (!x->group_len || !b)
		return;
	if (buf_room(b, buf_size()) < 2) {
		b->data -= x->group_len;
		return;
	}
	memcpy(b->area + b->head + b->data, "\r\n", 2);
	b->data += 2;
	if (http_grant(ch, (uint64_t)x->group_len + 2) == -1)
		b->data -= x->group_len + 2;
}

/* Consecutive early-hint rules make one 103 response, each adding its
 * field; a client speaking HTTP/1.0 gets none (it knows no interim
 * response). The value is made safe as every value written into a head
 * (http_head.h). Fails (a rewrite failure) when the response channel has
 * no room for it. */
static enum http_act_ret ctl_exec_hint(const struct http_rule *r, struct http_rule_exec *x)
{
	struct stream *s = x->s;
	struct channel *ch = &s->res;
	char vbuf[RULES_TMP], arena[RULES_TMP];
	struct http_head tmp = { .arena = arena, .arena_size = sizeof(arena) };
	const char *v;
	size_t vlen, need;
	struct buf *b;

	if (!s->txn || !s->txn->req_ver11 || (x->h->flags & HTTP_HEAD_F_RESP))
		return HTTP_ACT_CONT;
	if (http_fmt_render(x, &r->fmt, vbuf, sizeof(vbuf), &v, &vlen) == -1 ||
	    !(v = http_head_dup_safe(&tmp, v, &vlen, HTTP_SAFE_VALUE)))
		return HTTP_ACT_ERR;
	if (!x->group) {
		/* a server connection kept from the previous exchange must not
		 * have these bytes taken for its own (as for "100 Continue") */
		if (s->ss.st == SS_KEPT)
			http_pool_kept(s);
		if (!ch->buf) {
			ch->flags &= ~(CH_F_SHUTR | CH_F_SHUTW);
			if (!(ch->buf = buf_get()))
				return HTTP_ACT_ERR;
		}
		if (!ch->buf->data)
			ch->buf->head = 0;
		x->group_len = 0;
	}
	b = ch->buf;
	need = (x->group ? 0 : sizeof(HINT_LINE) - 1) + r->nlen + 2 + vlen + 2;
	if (need + 2 > buf_room(b, buf_size()))
		return HTTP_ACT_ERR;   /* (the open response keeps what it has) */
	if (!x->group) {
		memcpy(b->area + b->head + b->data, HINT_LINE, sizeof(HINT_LINE) - 1);
		b->data += sizeof(HINT_LINE) - 1;
		x->group = r->act;
		x->group_end = ctl_hint_end;
	}
	b->data += (uint32_t)snprintf(b->area + b->head + b->data, need + 1, "%.*s: %.*s\r\n",
				      (int)r->nlen, r->name, (int)vlen, v);
	x->group_len += (uint32_t)need;
	return HTTP_ACT_CONT;
}

/* ---- wait-for-body time <time> [at-least <bytes>] ---- */

static int ctl_parse_wait_body(struct http_rule_parse *p)
{
	const char *err = NULL;

	if (p->idx + 1 >= p->argc || strcmp(p->argv[p->idx], "time") != 0 ||
	    parse_time_ms(p->argv[p->idx + 1], 1, &p->r->ms, &err) == -1) {
		http_rule_alert(p, "expects %s%s%s", p->kw->kw.usage, err ? ": " : "",
				err ? err : "");
		return -1;
	}
	p->idx += 2;
	if (p->idx < p->argc && strcmp(p->argv[p->idx], "at-least") == 0) {
		if (p->idx + 1 >= p->argc || parse_size(p->argv[p->idx + 1], &p->r->bytes, &err) == -1) {
			http_rule_alert(p, "'at-least' expects a size%s%s", err ? ": " : "",
					err ? err : "");
			return -1;
		}
		p->idx += 2;
	}
	return 0;
}

/* The message's body is waited for (read, not forwarded): the rules after
 * it go on once the whole body is there, or <at-least> bytes of it, or the
 * buffer is full (tune.maxrewrite kept), or the sender stopped; what
 * arrived by then is what req.body / res.body see. When the rule's time
 * runs out first, the exchange ends as HAProxy ends it: 408 for a request,
 * 504 for a response. A client waiting for "100 Continue" gets it from
 * here. Where no action may wait (the response of a cache hit), the rules
 * go on at once. */
static enum http_act_ret ctl_exec_wait_body(const struct http_rule *r, struct http_rule_exec *x)
{
	struct stream *s = x->s;
	int res = !!(x->h->flags & HTTP_HEAD_F_RESP);
	const struct h1_msg *m = res ? &s->txn->res : &s->txn->req;
	int waited = !x->pos ||
		     http_body_waited(res ? &s->res : &s->req, m, m->head_len, r->bytes);

	if (waited || (s->tcp_flags & STRM_F_ACT_EXP)) {
		s->tcp_flags &= ~STRM_F_ACT_EXP;
		s->act_exp = 0;
		return waited ? HTTP_ACT_CONT : HTTP_ACT_TIMEOUT;
	}
	if (!s->act_exp) {
		s->act_exp = tick_ev_in(r->ms ? r->ms : 1);
		if (!res && (m->flags & (H1_F_EXPECT_100 | H1_F_VER_11)) ==
		    (H1_F_EXPECT_100 | H1_F_VER_11) && !(s->txn->flags & TX_F_SENT_100))
			http_send_100(s);
	}
	/* any event of the stream (more of the body) runs the rule again */
	s->tcp_flags |= STRM_F_WOKEN;
	return HTTP_ACT_YIELD;
}

#define HA(name, where, usage) \
	.kw = { name, 0, (where), NULL, NULL, NULL, usage, NULL }

static const struct http_act_kw ctl_acts[] = {
	{ HA("early-hint", ACT_W_HTTP_REQ, "<name> <format>"), 0, http_parse_hdr_fmt,
	  ctl_exec_hint },
	{ HA("reject", ACT_W_HTTP_REQ, "nothing"), 0, ctl_parse_none, ctl_exec_reject },
	{ HA("silent-drop", ACT_W_HTTP_REQ | ACT_W_HTTP_RES, "nothing"), 1, ctl_parse_none,
	  ctl_exec_reject },
	{ HA("strict-mode", ACT_W_HTTP_ALL, "on|off"), 0, ctl_parse_strict, ctl_exec_strict },
	{ HA("wait-for-body", ACT_W_HTTP_REQ | ACT_W_HTTP_RES, "time <time> [at-least <bytes>]"),
	  0, ctl_parse_wait_body, ctl_exec_wait_body },
};

SLUICE_INIT(http_act_ctl_register)
{
	act_register_ext(&ctl_acts[0].kw, ARRAY_SIZE(ctl_acts), sizeof(ctl_acts[0]), ACT_L_OWN);
}
