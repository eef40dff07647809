/* The "peers" section (peers.h): peer, server, bind, default-bind,
 * default-server, table, disabled/enabled, shards, log; the local peer's
 * name (-L, "localpeer", the host name); at post-parse, the tables each
 * section replicates ("stick-table ... peers <name>" and its own "table"
 * lines). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/peers.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>
#include <sluice/units.h>

#include "peers_int.h"

struct peers_sec *peers_sections;

static struct {
	char             *cmdline_name;   /* -L */
	int               seen;           /* a peers section was read */
	struct peers_sec *cur;            /* the section being read, NULL after an error */
} pcfg;

void peers_set_cmdline_name(const char *name)
{
	free(pcfg.cmdline_name);
	pcfg.cmdline_name = name ? xstrdup(name) : NULL;
}

int peers_local_name_fixed(void)
{
	return pcfg.cmdline_name || pcfg.seen;
}

const char *peers_local_name(void)
{
	static char host[256];
	const char *env;

	if (pcfg.cmdline_name)
		return pcfg.cmdline_name;
	if (global.localpeer)
		return global.localpeer;
	env = getenv("HAPROXY_LOCALPEER");
	if (env && *env)
		return env;
	if (!host[0] && gethostname(host, sizeof(host) - 1) == -1)
		strcpy(host, "localhost");
	return host;
}

static struct peers_sec *peers_find(const char *name)
{
	for (struct peers_sec *s = peers_sections; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static struct peer *peer_find(const struct peers_sec *sec, const char *name)
{
	for (struct peer *p = sec->peers; p; p = p->next)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* ---- the section ---- */

static int sec_peers(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct peers_sec *s, **tail = &peers_sections;

	pcfg.cur = NULL;
	pcfg.seen = 1;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	if ((s = peers_find(argv[0]))) {
		cfg_alert(ctx, "peers section '%s' is already declared at %s:%d", argv[0], s->file,
			  s->line);
		return -1;
	}
	if (argc > 1) {
		cfg_alert(ctx, "unexpected argument '%s' after the name", argv[1]);
		return -1;
	}
	s = xcalloc(1, sizeof(*s));
	s->name = xstrdup(argv[0]);
	s->file = xstrdup(ctx->file);
	s->line = ctx->line;
	s->resync = PEERS_RS_DONE;
	while (*tail)
		tail = &(*tail)->next;
	*tail = s;
	pcfg.cur = s;
	return 0;
}

static int sec_peers_end(struct cfg_ctx *ctx)
{
	pcfg.cur = NULL;
	return 0;
}

/* The section of the line being read, or NULL (its header failed: the
 * parser skips its lines, so this does not happen). */
static struct peers_sec *cur_sec(struct cfg_ctx *ctx)
{
	if (!pcfg.cur)
		cfg_alert(ctx, "outside of a valid peers section");
	return pcfg.cur;
}

/* Checks the options a peer line may not carry. */
static int peer_no_options(struct cfg_ctx *ctx, int argc, char **argv, int first)
{
	if (argc > first) {
		cfg_alert(ctx, "option '%s' is not supported here: sluice connects to peers in "
			  "plain TCP with no server option (TLS, source, PROXY protocol...)",
			  argv[first]);
		return -1;
	}
	return 0;
}

/* The listening socket(s) of the local peer: <addr> with the default-bind
 * options, then <argc> options of its own. Refuses what a peers listener
 * cannot do (TLS, PROXY protocol, HTTP/2). Returns 0 or -1. */
static int peers_add_bind(struct cfg_ctx *ctx, struct peers_sec *s, const char *addr,
                          int argc, char **argv)
{
	char **words = xcalloc((size_t)(1 + s->ndef_bind + argc), sizeof(*words));
	struct listener **tail = &s->listeners, *li;
	int n = 0, ret;

	while (*tail)
		tail = &(*tail)->next;
	words[n++] = (char *)addr;
	for (int i = 0; i < s->ndef_bind; i++)
		words[n++] = s->def_bind[i];
	for (int i = 0; i < argc; i++)
		words[n++] = argv[i];
	ret = listener_parse_bind(ctx, &s->listeners, NULL, n, words, 0);
	free(words);
	if (ret == -1)
		return -1;
	for (li = *tail; li; li = li->next) {
		/* a new process binds beside the one it replaces, which hands
		 * it the tables through that address: the global "noreuseport"
		 * does not apply here (the bind line's own does) */
		if (!(li->flags & LI_F_NOREUSEPORT))
			li->flags |= LI_F_REUSEPORT;
		if (li->flags & LI_F_UNIX) {
			cfg_alert(ctx, "'%s': a peer listens on a TCP address", li->addr_str);
			return -1;
		}
		if (ssl_bind_enabled(li->bc) || (li->bc->flags & (LI_F_ACCEPT_PROXY | LI_F_PROTO_H2))) {
			cfg_alert(ctx, "TLS, 'accept-proxy' and 'proto' are not supported on a peers "
				  "listener: sluice speaks the peers protocol in plain TCP");
			return -1;
		}
	}
	return 0;
}

/* A new peer <name> of <s> at <addr> (NULL: the local peer of a "server"
 * line, whose address is the bind line's). Returns it, or NULL. */
static struct peer *peer_new(struct cfg_ctx *ctx, struct peers_sec *s, const char *name,
                             const char *addr)
{
	struct peer *p, **tail = &s->peers;
	struct addr_spec as;
	char *err = NULL;
	int local = strcmp(name, peers_local_name()) == 0;

	if (!*name) {
		cfg_alert(ctx, "expects a peer name");
		return NULL;
	}
	if ((p = peer_find(s, name))) {
		cfg_alert(ctx, "peer '%s' is already declared at %s:%d", name, p->file, p->line);
		return NULL;
	}
	if (addr && !local) {
		if (addr_parse(addr, &as, ADDR_F_RESOLVE | ADDR_F_ENV, &err) == -1) {
			cfg_alert(ctx, "peer '%s': %s", name, err);
			free(err);
			return NULL;
		}
		if (as.kind != ADDR_K_INET || !as.port_lo || as.port_lo != as.port_hi) {
			cfg_alert(ctx, "peer '%s': '%s' is not an <ip>:<port> address", name, addr);
			return NULL;
		}
	}
	p = xcalloc(1, sizeof(*p));
	p->name = xstrdup(name);
	p->local = local;
	p->sec = s;
	p->file = xstrdup(ctx->file);
	p->line = ctx->line;
	if (addr) {
		p->addr_str = xstrdup(addr);
		if (!local) {
			p->addr = as.ss;
			p->addrlen = as.len;
		}
	}
	while (*tail)
		tail = &(*tail)->next;
	*tail = p;
	if (local)
		s->local = p;
	return p;
}

/* peer <name> <ip>:<port> */
static int kw_peer(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct peers_sec *s = cur_sec(ctx);
	struct peer *p;

	if (!s)
		return -1;
	if (argc < 2) {
		cfg_alert(ctx, "expects <name> <ip>:<port>");
		return -1;
	}
	if (s->has_bind) {
		cfg_alert(ctx, "'peer' lines cannot be mixed with 'bind' lines in a peers section "
			  "(use 'server' lines with 'bind')");
		return -1;
	}
	if (peer_no_options(ctx, argc, argv, 2) == -1)
		return -1;
	p = peer_new(ctx, s, argv[0], argv[1]);
	if (!p)
		return -1;
	s->has_peer_line = 1;
	if (p->local)
		return peers_add_bind(ctx, s, argv[1], 0, NULL);
	return 0;
}

/* server <name> [<ip>:<port>]: the local peer has no address (its "bind"
 * line has it). */
static int kw_server(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct peers_sec *s = cur_sec(ctx);
	const char *addr = argc > 1 ? argv[1] : NULL;
	int local;

	if (!s)
		return -1;
	if (argc < 1) {
		cfg_alert(ctx, "expects <name> [<ip>:<port>]");
		return -1;
	}
	local = strcmp(argv[0], peers_local_name()) == 0;
	if (local && addr) {
		cfg_alert(ctx, "server '%s' is the local peer: its address is given by a 'bind' "
			  "line, not here", argv[0]);
		return -1;
	}
	if (!local && !addr) {
		cfg_alert(ctx, "server '%s' is a remote peer: it needs an <ip>:<port> address",
			  argv[0]);
		return -1;
	}
	if (peer_no_options(ctx, argc, argv, addr ? 2 : 1) == -1)
		return -1;
	return peer_new(ctx, s, argv[0], addr) ? 0 : -1;
}

/* bind <addr> [<bind options>]: the local peer's listener. */
static int kw_bind(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct peers_sec *s = cur_sec(ctx);

	if (!s)
		return -1;
	if (s->has_peer_line) {
		cfg_alert(ctx, "'bind' lines cannot be mixed with 'peer' lines in a peers section "
			  "(the local 'peer' line listens on its address)");
		return -1;
	}
	if (argc < 1) {
		cfg_alert(ctx, "expects an address and options");
		return -1;
	}
	if (peers_add_bind(ctx, s, argv[0], argc - 1, argv + 1) == -1)
		return -1;
	s->has_bind = 1;
	return 0;
}

/* default-bind [<bind options>]: for the bind lines that follow. */
static int kw_default_bind(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct peers_sec *s = cur_sec(ctx);

	if (!s)
		return -1;
	for (int i = 0; i < s->ndef_bind; i++)
		free(s->def_bind[i]);
	free(s->def_bind);
	s->def_bind = xcalloc((size_t)argc + 1, sizeof(*s->def_bind));
	for (int i = 0; i < argc; i++)
		s->def_bind[i] = xstrdup(argv[i]);
	s->ndef_bind = argc;
	return 0;
}

/* default-server: no server option applies to peers in sluice. */
static int kw_default_server(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (!cur_sec(ctx))
		return -1;
	return peer_no_options(ctx, argc, argv, 0);
}

/* table <name> type ... : a table of the section, "<section>/<name>". */
static int kw_table(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct peers_sec *s = cur_sec(ctx);
	char *name;
	int ret;

	if (!s)
		return -1;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects <name> type ...");
		return -1;
	}
	if (strchr(argv[0], '/')) {
		cfg_alert(ctx, "'%s': a table name has no '/'", argv[0]);
		return -1;
	}
	name = str_fmt("%s/%s", s->name, argv[0]);
	ret = stk_table_declare(ctx, name, s->name, argc - 1, argv + 1) ? 0 : -1;
	free(name);
	return ret;
}

/* disabled / enabled: the row's value. */
static int kw_disabled(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct peers_sec *s = cur_sec(ctx);

	if (!s)
		return -1;
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	s->disabled = (int)ctx->kw_row->arg;
	return 0;
}

/* shards <n>: one process holds every entry; 0 and 1 say so. */
static int kw_shards(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *err = "missing";
	long v;

	if (!cur_sec(ctx))
		return -1;
	if (argc != 1 || parse_int(argv[0], 0, 1000000, &v, &err) == -1) {
		cfg_alert(ctx, "expects a number of shards: %s", err);
		return -1;
	}
	if (v > 1) {
		cfg_alert(ctx, "%ld shards: sluice does not split tables between peers (only 0 or "
			  "1, no sharding, is supported)", v);
		return -1;
	}
	return 0;
}

static int kw_log(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct peers_sec *s = cur_sec(ctx);

	return s ? log_cfg_parse(ctx, &s->loggers, argc, argv) : -1;
}

/* ---- post-parse: the tables of each section ---- */

/* Fills the definition <pt> announces. */
static void peers_table_define(struct peers_table *pt)
{
	struct stktable *t = pt->t;
	static const uint64_t kt[] = {
		[STK_K_IP] = PEER_KT_IPV4, [STK_K_IPV6] = PEER_KT_IPV6, [STK_K_INT] = PEER_KT_SINT,
		[STK_K_STR] = PEER_KT_STR, [STK_K_BIN] = PEER_KT_BIN,
	};

	pt->def.name = pt->wire;
	pt->def.nlen = strlen(pt->wire);
	pt->def.key_type = kt[t->type];
	/* HAProxy counts a string key's terminating NUL in its length */
	pt->def.key_len = t->key_size + (t->type == STK_K_STR);
	pt->def.expire = t->expire;
	for (int dt = 0; dt < STK_DT_COUNT; dt++) {
		unsigned bit = (unsigned)stk_dt_wire(dt);

		if (t->off[dt] < 0)
			continue;
		pt->def.data |= (uint64_t)1 << bit;
		if (stk_dt_is_rate(dt))
			pt->def.period[bit] = t->period[dt];
		if (stk_dt_is_array(dt))
			pt->def.nelem[bit] = t->nb[dt];
	}
}

/* Attaches table <t> to section <s>. */
static void peers_attach(struct peers_sec *s, struct stktable *t)
{
	struct peers_table *pt;
	const char *slash = strchr(t->name, '/');

	s->tables = xrealloc(s->tables, (size_t)(s->ntables + 1) * sizeof(*s->tables));
	pt = &s->tables[s->ntables++];
	memset(pt, 0, sizeof(*pt));
	pt->t = t;
	/* a section's own table "<s>/<t>" is "/<t>" on the wire */
	pt->wire = xstrdup(!t->px && slash ? slash : t->name);
	pt->def.id = (uint64_t)s->ntables;
	peers_table_define(pt);
}

static int peers_postparse(void)
{
	int errors = 0;

	for (struct peers_sec *s = peers_sections; s; s = s->next)
		errors += log_resolve_rings(&s->loggers);   /* its "log ring@" targets */
	for (struct stktable *t = stk_tables(); t; t = t->next) {
		struct peers_sec *s;

		if (!t->declared || !t->peers_name)
			continue;
		s = peers_find(t->peers_name);
		if (!s) {
			log_alert("%s:%d: stick-table '%s': peers section '%s' not found",
				  t->peers_file, t->peers_line, t->name, t->peers_name);
			errors++;
		}
	}
	for (struct peers_sec *s = peers_sections; s && !errors; s = s->next) {
		if (!s->local) {
			log_warning("%s:%d: peers section '%s' is not used: this process (peer name "
				    "'%s') is none of its peers; its tables stay local", s->file,
				    s->line, s->name, peers_local_name());
			continue;
		}
		if (!s->listeners) {
			log_alert("%s:%d: peers section '%s': the local peer '%s' has no address "
				  "(a 'bind' line)", s->local->file, s->local->line, s->name,
				  s->local->name);
			errors++;
			continue;
		}
		if (s->disabled)
			continue;
		/* oldest table first: the stk list is newest first */
		{
			struct stktable **v = NULL;
			int n = 0;

			for (struct stktable *t = stk_tables(); t; t = t->next)
				if (t->declared && t->peers_name && !strcmp(t->peers_name, s->name)) {
					v = xrealloc(v, (size_t)(n + 1) * sizeof(*v));
					v[n++] = t;
				}
			for (int i = n - 1; i >= 0; i--)
				peers_attach(s, v[i]);
			free(v);
		}
		for (int i = 0; i < s->ntables; i++) {
			struct stktable *t = s->tables[i].t;

			t->sync = &s->tables[i];
			t->sync_local = 1;
			t->on_update = peers_table_updated;
		}
		for (struct peer *p = s->peers; p; p = p->next)
			p->acked = xcalloc((size_t)s->ntables + 1, sizeof(*p->acked));
	}
	return errors;
}

/* ---- freeing ---- */

void peers_free_all(void)
{
	struct peers_sec *s, *sn;

	for (s = peers_sections; s; s = sn) {
		sn = s->next;
		for (struct peer *p = s->peers, *pn; p; p = pn) {
			pn = p->next;
			free(p->name);
			free(p->addr_str);
			free(p->file);
			free(p->acked);
			free(p);
		}
		for (int i = 0; i < s->ntables; i++) {
			s->tables[i].t->sync = NULL;
			s->tables[i].t->on_update = NULL;
			free(s->tables[i].wire);
		}
		free(s->tables);
		/* the section's own tables ("table" lines) belong to no proxy */
		for (struct stktable *t = stk_tables(), *tn; t; t = tn) {
			tn = t->next;
			if (t->declared && !t->px && t->peers_name && !strcmp(t->peers_name, s->name))
				stk_table_free(t);
		}
		listener_free_all(&s->listeners);
		for (int i = 0; i < s->ndef_bind; i++)
			free(s->def_bind[i]);
		free(s->def_bind);
		log_list_free(&s->loggers);
		free(s->name);
		free(s->file);
		free(s);
	}
	peers_sections = NULL;
	pcfg.cur = NULL;
	pcfg.seen = 0;
}

/* ---- registration ---- */

static struct cfg_section peers_cfg_sections[] = {
	{ "peers", CFG_SEC_PEERS, sec_peers, sec_peers_end, NULL },
};

static struct cfg_kw peers_kws[] = {
	{ "peer", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_peer, .usage = "<name> <ip>:<port>" },
	{ "server", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_server,
	  .usage = "<name> [<ip>:<port>]" },
	{ "bind", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_bind,
	  .usage = "<address>[:<port>] [<bind option>]..." },
	{ "default-bind", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_default_bind,
	  .usage = "[<bind option>]..." },
	{ "default-server", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_default_server,
	  .usage = "(no option)" },
	{ "table", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_table,
	  .usage = "<name> type <type> [len <n>] size <n> [expire <time>] [nopurge] "
		   "[store <data>,...]" },
	{ "disabled", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_disabled, .arg = 1 },
	{ "enabled", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_disabled, .arg = 0 },
	{ "shards", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_shards, .usage = "0 | 1" },
	{ "log", CFG_SEC_PEERS, CFG_T_FUNC, 0, .parse = kw_log,
	  .usage = "global | <target> [len <n>] [format <fmt>] <facility> [<max> [<min>]]" },
};

SLUICE_INIT(peers_cfg_register)
{
	cfg_register_sections(peers_cfg_sections, ARRAY_SIZE(peers_cfg_sections));
	cfg_register(peers_kws, ARRAY_SIZE(peers_kws));
	cfg_register_postparse(peers_postparse, 25);
}
