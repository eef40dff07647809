/* The SPOE file (spoe_int.h): its "[engine]" scopes and its spoe-agent,
 * spoe-message and spoe-group sections, read at start-up when a
 * "filter spoe" line names it; each keyword is a row of its section. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/acl.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/lexer.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/spop.h>
#include <sluice/str.h>
#include <sluice/units.h>

#include "spoe_int.h"

struct spoe_agent *spoe_agents;

enum spoe_sec { SPOE_S_NONE, SPOE_S_AGENT, SPOE_S_MSG, SPOE_S_GROUP };

/* The file being read. */
struct spoe_file {
	struct cfg_ctx    *ctx;       /* file, line, keyword for messages */
	struct spoe_agent *ag;        /* the scope's spoe-agent (one) */
	struct spoe_msg   *msgs;      /* the scope's messages */
	struct spoe_group *groups;    /* and groups */
	char             **ag_msgs;   /* the agent's "messages" */
	int                n_ag_msgs;
	char             **ag_groups; /* and "groups" */
	int                n_ag_groups;
	enum spoe_sec      sec;
	struct spoe_msg   *msg;       /* the section being read */
	struct spoe_group *grp;
	int                force_set_var;
};

/* The events of HAProxy's SPOE. */
static const struct { const char *name; int ev; } spoe_events[] = {
	{ "on-frontend-http-request", SPOE_EV_FE_HTTP_REQ },
	{ "on-backend-http-request", SPOE_EV_BE_HTTP_REQ },
	{ "on-http-response", SPOE_EV_HTTP_RES },
	{ "on-frontend-tcp-request", SPOE_EV_FE_TCP_REQ },
	{ "on-backend-tcp-request", SPOE_EV_BE_TCP_REQ },
	{ "on-tcp-response", SPOE_EV_TCP_RES },
	{ "on-client-session", SPOE_EV_CLI_SESS },
	{ "on-server-session", SPOE_EV_SRV_SESS },
};

static void names_add(char ***v, int *n, int argc, char **argv)
{
	*v = xrealloc(*v, sizeof(**v) * (size_t)(*n + argc));
	for (int i = 0; i < argc; i++)
		(*v)[(*n)++] = xstrdup(argv[i]);
}

static void names_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- spoe-agent ---- */

static int ag_messages(struct spoe_file *f, int argc, char **argv, size_t off)
{
	if (!argc) {
		cfg_alert(f->ctx, "expects one or more spoe-message names");
		return -1;
	}
	if (off)
		names_add(&f->ag_groups, &f->n_ag_groups, argc, argv);
	else
		names_add(&f->ag_msgs, &f->n_ag_msgs, argc, argv);
	return 0;
}

static int ag_str(struct spoe_file *f, int argc, char **argv, size_t off)
{
	char **dst = (char **)((char *)f->ag + off);

	if (argc != 1) {
		cfg_alert(f->ctx, "expects one argument");
		return -1;
	}
	free(*dst);
	*dst = xstrdup(argv[0]);
	return 0;
}

/* option var-prefix|set-on-error|set-process-time|set-total-time <name>:
 * letters, digits, '.', '_' only, as variable names. */
static int ag_varname(struct spoe_file *f, int argc, char **argv, size_t off)
{
	if (argc != 1 || !argv[0][0]) {
		cfg_alert(f->ctx, "expects a variable name");
		return -1;
	}
	for (const char *p = argv[0]; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.') {
			cfg_alert(f->ctx, "'%s': only letters, digits, '.' and '_' are allowed",
				  argv[0]);
			return -1;
		}
	return ag_str(f, argc, argv, off);
}

static int ag_timeout(struct spoe_file *f, int argc, char **argv, size_t off)
{
	static const struct { const char *name; size_t off; } t[] = {
		{ "hello", offsetof(struct spoe_agent, t_hello) },
		{ "idle", offsetof(struct spoe_agent, t_idle) },
		{ "processing", offsetof(struct spoe_agent, t_proc) },
	};
	const char *err = NULL;
	uint32_t ms;

	for (size_t i = 0; argc == 2 && i < ARRAY_SIZE(t); i++) {
		if (strcmp(argv[0], t[i].name))
			continue;
		if (parse_time_ms(argv[1], 1, &ms, &err) == -1 || !ms) {
			cfg_alert(f->ctx, "'%s %s': %s", argv[0], argv[1],
				  err ? err : "a timeout must be greater than 0");
			return -1;
		}
		*(uint32_t *)((char *)f->ag + t[i].off) = ms;
		return 0;
	}
	cfg_alert(f->ctx, "expects 'hello', 'idle' or 'processing' and a time");
	return -1;
}

static int ag_uint(struct spoe_file *f, int argc, char **argv, long min, long max, uint32_t *v)
{
	char *err = NULL;
	long n;

	if (argc != 1) {
		cfg_alert(f->ctx, "expects one integer");
		return -1;
	}
	/* argv[-1] is the keyword's (last) word: cfg_opt_int() reads argv[1] */
	if (cfg_opt_int(argc + 1, argv - 1, min, max, &n, &err) == -1) {
		cfg_alert(f->ctx, "%s", err);
		free(err);
		return -1;
	}
	*v = (uint32_t)n;
	return 0;
}

/* maxconnrate, maxerrrate <n>: per second, 0 for no limit */
static int ag_rate(struct spoe_file *f, int argc, char **argv, size_t off)
{
	return ag_uint(f, argc, argv, 0, 1000000, (uint32_t *)((char *)f->ag + off));
}

static int ag_max_frame(struct spoe_file *f, int argc, char **argv, size_t off)
{
	return ag_uint(f, argc, argv, SPOP_FRAME_MIN, SPOP_FRAME_MAX, &f->ag->max_frame);
}

/* max-waiting-frames: sluice has at most one frame waiting per connection
 * (it announces no pipelining), below any limit, so the value is checked. */
static int ag_max_waiting(struct spoe_file *f, int argc, char **argv, size_t off)
{
	uint32_t v;

	return ag_uint(f, argc, argv, 1, 1000000, &v);
}

static int ag_reg_vars(struct spoe_file *f, int argc, char **argv, size_t off)
{
	if (!argc) {
		cfg_alert(f->ctx, "expects one or more variable names");
		return -1;
	}
	names_add(&f->ag->reg_vars, &f->ag->n_reg_vars, argc, argv);
	return 0;
}

static int ag_flag(struct spoe_file *f, int argc, char **argv, size_t off)
{
	if (argc) {
		cfg_alert(f->ctx, "takes no argument");
		return -1;
	}
	if (off == 1)
		f->force_set_var = 1;
	else
		f->ag->continue_on_error = 1;
	return 0;
}

/* option async|pipelining: capabilities sluice does not announce; it keeps
 * one NOTIFY in flight per connection, which every agent must accept. */
static int ag_capability(struct spoe_file *f, int argc, char **argv, size_t off)
{
	if (argc) {
		cfg_alert(f->ctx, "takes no argument");
		return -1;
	}
	cfg_warn(f->ctx, "sluice does not announce this capability: it sends one NOTIFY at a "
		 "time per connection and opens more connections instead");
	return 0;
}

/* log global | <target> ...: the agent's own log targets, as a proxy's. */
static int ag_log(struct spoe_file *f, int argc, char **argv, size_t off)
{
	return log_cfg_parse(f->ctx, &f->ag->loggers, argc, argv);
}

/* ---- spoe-message ---- */

static int msg_args(struct spoe_file *f, int argc, char **argv, size_t off)
{
	struct spoe_msg *m = f->msg;

	if (!argc) {
		cfg_alert(f->ctx, "expects [<name>=]<sample> ...");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '='), *paren = strchr(argv[i], '('), *s = argv[i];
		struct spoe_arg *a;
		char *err = NULL;

		m->args = xrealloc(m->args, sizeof(*m->args) * (size_t)(m->nargs + 1));
		a = &m->args[m->nargs];
		memset(a, 0, sizeof(*a));
		if (eq && (!paren || eq < paren)) {
			a->name = xcalloc(1, (size_t)(eq - argv[i]) + 1);
			memcpy(a->name, argv[i], (size_t)(eq - argv[i]));
			s = eq + 1;
		} else {
			a->name = xstrdup("");
		}
		m->nargs++;
		if (smp_expr_parse(s, &a->expr, NULL, &err) == -1) {
			cfg_alert(f->ctx, "'%s': %s", argv[i], err);
			free(err);
			return -1;
		}
	}
	if (m->nargs > 255) {
		cfg_alert(f->ctx, "a message carries at most 255 arguments");
		return -1;
	}
	return 0;
}

static int msg_event(struct spoe_file *f, int argc, char **argv, size_t off)
{
	struct spoe_msg *m = f->msg;
	size_t i;

	if (!argc) {
		cfg_alert(f->ctx, "expects an event name [if|unless <condition>]");
		return -1;
	}
	if (m->event != -1) {
		cfg_alert(f->ctx, "the message has an event already");
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(spoe_events) && strcmp(argv[0], spoe_events[i].name); i++)
		;
	if (i == ARRAY_SIZE(spoe_events)) {
		cfg_alert(f->ctx, "unknown event '%s'", argv[0]);
		return -1;
	}
	m->event = spoe_events[i].ev;
	if (argc > 1) {
		struct proxy *save = f->ctx->px;

		f->ctx->px = m->acls;
		m->cond = acl_cond_parse(f->ctx, argc - 1, argv + 1);
		f->ctx->px = save;
		if (!m->cond)
			return -1;
	}
	return 0;
}

static int msg_acl(struct spoe_file *f, int argc, char **argv, size_t off)
{
	char *w[CFG_MAX_WORDS + 1] = { "acl" };
	const struct cfg_kw *kw;
	struct proxy *save = f->ctx->px;
	int nw, r;

	if (argc >= CFG_MAX_WORDS) {
		cfg_alert(f->ctx, "too many words");
		return -1;
	}
	memcpy(w + 1, argv, sizeof(*argv) * (size_t)argc);
	kw = cfg_find_kw(CFG_SEC_FRONTEND, argc + 1, w, &nw);
	BUG_ON(!kw || !kw->parse, "the acl keyword is not registered");
	f->ctx->px = f->msg->acls;
	r = kw->parse(f->ctx, f->msg->acls, argc, argv);
	f->ctx->px = save;
	return r;
}

/* ---- spoe-group ---- */

static int grp_messages(struct spoe_file *f, int argc, char **argv, size_t off)
{
	if (!argc) {
		cfg_alert(f->ctx, "expects one or more spoe-message names");
		return -1;
	}
	names_add(&f->grp->names, &f->grp->n, argc, argv);
	return 0;
}

/* ---- the rows ---- */

/* A keyword of a section of the SPOE file. */
struct spoe_kw {
	const char *name;       /* one or two words ("option var-prefix") */
	enum spoe_sec sec;
	int       (*parse)(struct spoe_file *f, int argc, char **argv, size_t off);
	size_t      off;        /* what the handler sets */
	const char *refused;    /* a keyword of HAProxy sluice refuses: why */
};

#define AG(field) offsetof(struct spoe_agent, field)

static const struct spoe_kw spoe_kws[] = {
	{ "messages", SPOE_S_AGENT, ag_messages, 0, NULL },
	{ "groups", SPOE_S_AGENT, ag_messages, 1, NULL },
	{ "use-backend", SPOE_S_AGENT, ag_str, AG(be_name), NULL },
	{ "timeout", SPOE_S_AGENT, ag_timeout, 0, NULL },
	{ "option var-prefix", SPOE_S_AGENT, ag_varname, AG(var_prefix), NULL },
	{ "option set-on-error", SPOE_S_AGENT, ag_varname, AG(var_err), NULL },
	{ "option set-process-time", SPOE_S_AGENT, ag_varname, AG(var_tproc), NULL },
	{ "option set-total-time", SPOE_S_AGENT, ag_varname, AG(var_ttotal), NULL },
	{ "option continue-on-error", SPOE_S_AGENT, ag_flag, 0, NULL },
	{ "option force-set-var", SPOE_S_AGENT, ag_flag, 1, NULL },
	{ "option async", SPOE_S_AGENT, ag_capability, 0, NULL },
	{ "option pipelining", SPOE_S_AGENT, ag_capability, 0, NULL },
	{ "option send-frag-payload", SPOE_S_AGENT, NULL, 0,
	  "sluice never fragments a payload: a message that does not fit max-frame-size "
	  "is an error (status 3)" },
	{ "option dontlog-normal", SPOE_S_AGENT, NULL, 0,
	  "sluice logs every processing of an agent with a 'log' line" },
	{ "maxconnrate", SPOE_S_AGENT, ag_rate, AG(maxconnrate), NULL },
	{ "maxerrrate", SPOE_S_AGENT, ag_rate, AG(maxerrrate), NULL },
	{ "max-frame-size", SPOE_S_AGENT, ag_max_frame, 0, NULL },
	{ "max-waiting-frames", SPOE_S_AGENT, ag_max_waiting, 0, NULL },
	{ "register-var-names", SPOE_S_AGENT, ag_reg_vars, 0, NULL },
	{ "log", SPOE_S_AGENT, ag_log, 0, NULL },
	{ "args", SPOE_S_MSG, msg_args, 0, NULL },
	{ "event", SPOE_S_MSG, msg_event, 0, NULL },
	{ "acl", SPOE_S_MSG, msg_acl, 0, NULL },
	{ "messages", SPOE_S_GROUP, grp_messages, 0, NULL },
};

static const char *const spoe_sec_names[] = { "no", "spoe-agent", "spoe-message", "spoe-group" };

/* The row for argv in section <sec>; *<nw> the words of its name. */
static const struct spoe_kw *spoe_kw_find(enum spoe_sec sec, int argc, char **argv, int *nw)
{
	for (size_t i = 0; i < ARRAY_SIZE(spoe_kws); i++) {
		const struct spoe_kw *k = &spoe_kws[i];
		const char *sp = strchr(k->name, ' ');

		if (k->sec != sec)
			continue;
		if (!sp && strcmp(argv[0], k->name) == 0) {
			*nw = 1;
			return k;
		}
		if (sp && argc > 1 && strlen(argv[0]) == (size_t)(sp - k->name) &&
		    strncmp(argv[0], k->name, (size_t)(sp - k->name)) == 0 &&
		    strcmp(argv[1], sp + 1) == 0) {
			*nw = 2;
			return k;
		}
	}
	return NULL;
}

/* A section header: spoe-agent|spoe-message|spoe-group <name>. */
static int spoe_section(struct spoe_file *f, int argc, char **argv)
{
	enum spoe_sec sec = strcmp(argv[0], "spoe-agent") == 0 ? SPOE_S_AGENT :
			    strcmp(argv[0], "spoe-message") == 0 ? SPOE_S_MSG :
			    strcmp(argv[0], "spoe-group") == 0 ? SPOE_S_GROUP : SPOE_S_NONE;

	if (sec == SPOE_S_NONE)
		return 0;
	f->ctx->kw = argv[0];
	f->ctx->secname = NULL;
	f->sec = sec;
	if (argc != 2) {
		cfg_alert(f->ctx, "expects exactly one name");
		f->sec = SPOE_S_NONE;
		return -1;
	}
	f->ctx->secname = spoe_sec_names[sec];
	if (sec == SPOE_S_AGENT) {
		if (f->ag->id) {
			cfg_alert(f->ctx, "a second spoe-agent '%s' in the scope (the first is '%s')",
				  argv[1], f->ag->id);
			return -1;
		}
		f->ag->id = xstrdup(argv[1]);
		f->ag->line = f->ctx->line;
		return 1;
	}
	if (sec == SPOE_S_MSG) {
		for (struct spoe_msg *m = f->msgs; m; m = m->next)
			if (strcmp(m->id, argv[1]) == 0) {
				cfg_alert(f->ctx, "spoe-message '%s' already defined at line %d",
					  argv[1], m->line);
				return -1;
			}
		f->msg = xcalloc(1, sizeof(*f->msg));
		f->msg->id = xstrdup(argv[1]);
		f->msg->event = -1;
		f->msg->file = xstrdup(f->ctx->file);
		f->msg->line = f->ctx->line;
		f->msg->acls = xcalloc(1, sizeof(*f->msg->acls));
		f->msg->acls->name = f->msg->id;
		f->msg->acls->cap = PR_CAP_FE | PR_CAP_BE;
		f->msg->acls->mode = PR_MODE_HTTP;
		f->msg->next = f->msgs;
		f->msgs = f->msg;
		return 1;
	}
	for (struct spoe_group *g = f->groups; g; g = g->next)
		if (strcmp(g->id, argv[1]) == 0) {
			cfg_alert(f->ctx, "spoe-group '%s' already defined at line %d", argv[1],
				  g->line);
			return -1;
		}
	f->grp = xcalloc(1, sizeof(*f->grp));
	f->grp->id = xstrdup(argv[1]);
	f->grp->file = xstrdup(f->ctx->file);
	f->grp->line = f->ctx->line;
	f->grp->next = f->groups;
	f->groups = f->grp;
	return 1;
}

static void spoe_line(struct spoe_file *f, int argc, char **argv)
{
	const struct spoe_kw *k;
	int nw, r = spoe_section(f, argc, argv);

	if (r)
		return;
	f->ctx->kw = argv[0];
	if (f->sec == SPOE_S_NONE) {
		f->ctx->secname = NULL;
		cfg_alert(f->ctx, "unknown keyword outside of a section (expects spoe-agent, "
			  "spoe-message or spoe-group)");
		return;
	}
	k = spoe_kw_find(f->sec, argc, argv, &nw);
	if (!k) {
		cfg_alert(f->ctx, "unknown keyword");
		return;
	}
	f->ctx->kw = k->name;   /* both words of "option var-prefix" */
	if (k->refused) {
		cfg_alert(f->ctx, "not supported by sluice: %s", k->refused);
		return;
	}
	k->parse(f, argc - nw, argv + nw, k->off);
}

/* Finds message <name> of the file. */
static struct spoe_msg *spoe_msg_find(struct spoe_file *f, const char *name)
{
	for (struct spoe_msg *m = f->msgs; m; m = m->next)
		if (strcmp(m->id, name) == 0)
			return m;
	return NULL;
}

/* The agent's messages and groups resolved, its defaults set. */
static void spoe_resolve(struct spoe_file *f)
{
	struct spoe_agent *ag = f->ag;
	struct cfg_ctx *ctx = f->ctx;

	ctx->line = ag->line;
	ctx->kw = NULL;   /* the messages name the spoe-agent */
	ctx->secname = NULL;
	if (!ag->be_name)
		cfg_alert(ctx, "spoe-agent '%s': no use-backend (the backend of its agents)", ag->id);
	if (!ag->t_hello || !ag->t_idle || !ag->t_proc)
		cfg_warn(ctx, "spoe-agent '%s': 'timeout hello', 'idle' and 'processing' should all be set "
			 "(using 3s, 30s and 15s for those missing)", ag->id);
	ag->t_hello = ag->t_hello ? ag->t_hello : 3000;
	ag->t_idle = ag->t_idle ? ag->t_idle : 30000;
	ag->t_proc = ag->t_proc ? ag->t_proc : 15000;
	if (!ag->var_prefix)
		ag->var_prefix = xstrdup(ag->id);
	if (!ag->max_frame)
		ag->max_frame = SPOP_FRAME_MAX;
	if (!f->force_set_var && !ag->reg_vars)
		ag->n_reg_vars = -1;   /* only the names the configuration knows */
	for (int i = 0; i < f->n_ag_msgs; i++) {
		struct spoe_msg *m = spoe_msg_find(f, f->ag_msgs[i]);

		if (!m) {
			cfg_alert(ctx, "spoe-agent '%s': unknown spoe-message '%s'", ag->id, f->ag_msgs[i]);
			continue;
		}
		if (m->event < 0) {
			cfg_alert(ctx, "spoe-agent '%s': spoe-message '%s' has no event (a message sent only "
				  "by send-spoe-group belongs in a spoe-group)", ag->id, m->id);
			continue;
		}
		ag->ev[m->event] = xrealloc(ag->ev[m->event],
					    sizeof(m) * (size_t)(ag->nev[m->event] + 1));
		ag->ev[m->event][ag->nev[m->event]++] = m;
	}
	for (int i = 0; i < f->n_ag_groups; i++) {
		struct spoe_group *g;

		for (g = f->groups; g && strcmp(g->id, f->ag_groups[i]); g = g->next)
			;
		if (!g) {
			cfg_alert(ctx, "spoe-agent '%s': unknown spoe-group '%s'", ag->id, f->ag_groups[i]);
			continue;
		}
		for (int j = 0; j < g->n; j++) {
			struct spoe_msg *m = spoe_msg_find(f, g->names[j]);

			ctx->line = g->line;
			if (!m)
				cfg_alert(ctx, "spoe-group '%s': unknown spoe-message '%s'", g->id,
					  g->names[j]);
			else if (m->event >= 0)
				cfg_alert(ctx, "spoe-group '%s': spoe-message '%s' has an event: it "
					  "cannot be in a group too", g->id, m->id);
			g->msgs = xrealloc(g->msgs, sizeof(m) * (size_t)(j + 1));
			g->msgs[j] = m;
		}
		ctx->line = ag->line;
	}
	/* the groups listed by the agent are the ones send-spoe-group finds */
	for (struct spoe_group **pg = &f->groups; *pg;) {
		struct spoe_group *g = *pg;
		int listed = 0;

		for (int i = 0; i < f->n_ag_groups && !listed; i++)
			listed = strcmp(g->id, f->ag_groups[i]) == 0;
		if (listed) {
			*pg = g->next;
			g->next = ag->groups;
			ag->groups = g;
		} else {
			pg = &g->next;
		}
	}
	if (!f->n_ag_msgs && !f->n_ag_groups)
		cfg_warn(ctx, "spoe-agent '%s' has neither messages nor groups: it sends nothing", ag->id);
}

struct spoe_agent *spoe_file_load(struct cfg_ctx *pctx, const char *path, const char *engine)
{
	struct cfg_ctx ctx = { .file = path, .px = pctx->px };
	struct spoe_file f = { .ctx = &ctx };
	char *line = NULL, out[8192], *words[CFG_MAX_WORDS];
	size_t cap = 0;
	ssize_t n;
	int in_scope = !engine, scope_seen = 0;
	FILE *fp = fopen(path, "r");

	if (!fp) {
		cfg_alert(pctx, "cannot read SPOE file '%s': %s", path, strerror(errno));
		return NULL;
	}
	f.ag = xcalloc(1, sizeof(*f.ag));
	f.ag->file = xstrdup(path);
	f.ag->px = pctx->px;
	while ((n = getline(&line, &cap, fp)) != -1) {
		struct cfg_lex_err lerr;
		struct cfg_lex_pos pos = { path, 0, "" };
		const char *s = line;
		int argc;

		ctx.line++;
		pos.line = ctx.line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '[') {
			const char *e = strchr(s, ']');

			ctx.kw = NULL;
			if (!e) {
				cfg_alert(&ctx, "a scope is written [<engine>]");
				continue;
			}
			in_scope = engine && (size_t)(e - s - 1) == strlen(engine) &&
				   strncmp(s + 1, engine, strlen(engine)) == 0;
			scope_seen |= in_scope;
			f.sec = SPOE_S_NONE;
			continue;
		}
		if (!in_scope)
			continue;
		argc = cfg_lex_line_at(line, (size_t)n, out, sizeof(out), words, CFG_MAX_WORDS,
				       &lerr, &pos);
		if (argc < 0) {
			ctx.kw = NULL;
			cfg_alert(&ctx, "%s at column %zu", lerr.msg, lerr.pos + 1);
			continue;
		}
		if (argc)
			spoe_line(&f, argc, words);
	}
	free(line);
	fclose(fp);
	ctx.kw = NULL;
	ctx.secname = NULL;
	if (engine && !scope_seen)
		cfg_alert(&ctx, "no scope [%s] in the SPOE file", engine);
	else if (!f.ag->id)
		cfg_alert(&ctx, "no spoe-agent %s%s%s in the SPOE file", engine ? "in scope [" : "",
			  engine ? engine : "", engine ? "]" : "");
	else
		spoe_resolve(&f);
	names_free(f.ag_msgs, f.n_ag_msgs);
	names_free(f.ag_groups, f.n_ag_groups);
	f.ag->msgs = f.msgs;   /* every message of the scope, freed with the agent */
	pctx->warnings += ctx.warnings;
	if (ctx.errors) {
		pctx->errors += ctx.errors;
		cfg_alert(pctx, "the SPOE file '%s' has %d error(s)", path, ctx.errors);
		f.ag->next = spoe_agents;   /* freed at exit with the others */
		spoe_agents = f.ag;
		return NULL;
	}
	f.ag->engine = xstrdup(engine ? engine : f.ag->id);
	f.ag->next = spoe_agents;
	spoe_agents = f.ag;
	return f.ag;
}
