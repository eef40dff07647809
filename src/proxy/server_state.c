/* Server state across reloads: `show servers state` in HAProxy's version-1
 * format, and loading it back at start-up (server-state-file,
 * server-state-base, load-server-state-from-file), so that maintenance,
 * drain, weights and addresses changed at run time survive a reload. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_dns.h>
#include <sluice/str.h>
#include <sluice/ticks.h>

#define SRV_ADMIN_FMAINT 0x01   /* srv_admin_state bits, as HAProxy writes them */
#define SRV_ADMIN_FDRAIN 0x08
#define SRV_ADMIN_RMAINT 0x20
#define STATE_MAX_LINE   2048

enum { LOAD_NONE, LOAD_GLOBAL, LOAD_LOCAL };

static struct {
	char *file;   /* server-state-file */
	char *base;   /* server-state-base */
} st;

static const char state_header[] =
	"# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight "
	"srv_iweight srv_time_since_last_change srv_check_status srv_check_result "
	"srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id "
	"srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr "
	"srv_agent_port\n";

/* HAProxy's numeric check status (HCHK_STATUS_*: INI 1, SOCKERR 5, L4OK 6,
 * L4TOUT 7, L4CON 8, L6OK 9, L6TOUT 10, L6RSP 11, L7TOUT 12, L7RSP 13,
 * HANA 14, L7OK 15, L7OKC 16, L7STS 17). */
static int state_check_status(const struct server *srv)
{
	switch (srv->check.result) {
	case CHK_R_SOCKERR: return 5;
	case CHK_R_OK:      return 6;
	case CHK_R_TOUT:    return 7;
	case CHK_R_CON:     return 8;
	case CHK_R_L6OK:    return 9;
	case CHK_R_L6TOUT:  return 10;
	case CHK_R_L6RSP:   return 11;
	case CHK_R_L7TOUT:  return 12;
	case CHK_R_L7RSP:   return 13;
	case CHK_R_HANA:    return 14;
	case CHK_R_L7OK:    return 15;
	case CHK_R_L7OKC:   return 16;
	case CHK_R_L7STS:   return 17;
	default:            return 1;
	}
}

/* srv_check_result: 0 unknown, 2 failed, 3 passed, 4 conditionally passed. */
static int state_check_result(const struct server *srv)
{
	enum chk_result r = srv->check.result;

	if (r == CHK_R_NONE)
		return 0;
	if (r == CHK_R_L7OKC)
		return 4;
	return check_result_passed(r) ? 3 : 2;
}

static void state_dump_backend(struct dstr *out, const struct proxy *px)
{
	time_t now = tick_wall();

	for (const struct server *srv = px->servers; srv; srv = srv->next) {
		char ip[INET6_ADDRSTRLEN];
		int admin = ((srv->flags & SRV_F_MAINT) ? SRV_ADMIN_FMAINT : 0) |
			    ((srv->flags & SRV_F_DRAIN) ? SRV_ADMIN_FDRAIN : 0) |
			    ((srv->flags & SRV_F_RMAINT) ? SRV_ADMIN_RMAINT : 0);
		const char *rec = srv_dns_srvrecord(srv);
		int up = !(srv->flags & (SRV_F_ANY_MAINT | SRV_F_DOWN));

		dstr_printf(out, "%d %s %d %s %s %d %d %d %d %lld %d %d %d %d 0 0 0 %s %u %s 0 %u - - 0\n",
			    px->id, px->name, srv->id, srv->name,
			    srv->addr.ss_family == AF_UNIX ? "-" : addr_ip_str(&srv->addr, ip, sizeof(ip)),
			    !up ? 0 : (srv->flags & SRV_F_NOLB) ? 3 : 2, admin, srv->uweight, srv->weight,
			    (long long)(now - srv->last_change), state_check_status(srv),
			    state_check_result(srv),
			    (srv->flags & SRV_F_CHECKED) ? srv->check.health : up ? 2 : 0,
			    (srv->flags & SRV_F_CHECKED) ? 1 : 0, srv->fqdn ? srv->fqdn : "-",
			    addr_get_port(&srv->addr), rec ? rec : "-", srv->check.port);
	}
}

static int cli_show_servers_state(struct cli_ctx *ctx, int argc, char **argv)
{
	const struct proxy *only = NULL;

	if (argc > 3) {
		only = proxy_find(argv[3], PR_CAP_BE);
		if (!only) {
			dstr_printf(&ctx->out, "Can't find backend.\n");
			return -1;
		}
	}
	dstr_printf(&ctx->out, "1\n%s", state_header);
	for (const struct proxy *px = global.proxies; px; px = px->next)
		if ((px->cap & PR_CAP_BE) && (!only || px == only))
			state_dump_backend(&ctx->out, px);
	return 0;
}

/* ---- state carried across reloads (the "servers" reload-state row) ---- */

/* Servers of the configuration that "del server" removed, oldest first. */
struct srv_gone {
	char            *be, *srv;
	struct srv_gone *next;
};

static struct srv_gone *srv_gone_list;

void server_state_note_deleted(const char *be, const char *srv)
{
	struct srv_gone *g, **tail = &srv_gone_list;

	for (g = srv_gone_list; g; g = g->next)
		if (strcmp(g->be, be) == 0 && strcmp(g->srv, srv) == 0)
			return;
	g = xcalloc(1, sizeof(*g));
	g->be = xstrdup(be);
	g->srv = xstrdup(srv);
	while (*tail)
		tail = &(*tail)->next;
	*tail = g;
}

static int addr_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	char x[INET6_ADDRSTRLEN], y[INET6_ADDRSTRLEN];

	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
		return 1;
	return strcmp(addr_ip_str(a, x, sizeof(x)), addr_ip_str(b, y, sizeof(y))) == 0 &&
	       addr_get_port(a) == addr_get_port(b);
}

/* "<verb> <be>/<srv>" ("set server", ...) with both names quoted; 0, or -1 when a name
 * cannot be written on a command line (nothing appended then). */
static int state_cmd(struct dstr *out, const char *verb, const char *be, const char *srv)
{
	size_t start = out->len;
	struct dstr name = { 0 };
	int ret = -1;

	if (dstr_printf(&name, "%s/%s", be, srv) == 0 &&
	    dstr_printf(out, "%s ", verb) == 0 &&
	    str_cli_quote(out, name.p, name.len) == 0)
		ret = 0;
	if (ret == -1) {
		out->len = start;
		if (out->p)
			out->p[start] = '\0';
	}
	dstr_free(&name);
	return ret;
}

static const char *state_admin_word(unsigned flags)
{
	return (flags & SRV_F_MAINT) ? "maint" : (flags & SRV_F_DRAIN) ? "drain" : "ready";
}

static void state_reload_server(struct dstr *out, const struct proxy *px, const struct server *srv)
{
	unsigned admin = srv->flags & (SRV_F_MAINT | SRV_F_DRAIN);

	if (srv->add_args && state_cmd(out, "add server", px->name, srv->name) == 0)
		dstr_printf(out, " %s\n", srv->add_args);
	if ((srv->addr.ss_family == AF_INET || srv->addr.ss_family == AF_INET6) &&
	    !addr_same(&srv->addr, &srv->conf_addr) &&
	    state_cmd(out, "set server", px->name, srv->name) == 0) {
		char ip[INET6_ADDRSTRLEN];

		dstr_printf(out, " addr %s port %u\n", addr_ip_str(&srv->addr, ip, sizeof(ip)),
			    addr_get_port(&srv->addr));
	}
	if (srv->uweight != srv->weight && state_cmd(out, "set server", px->name, srv->name) == 0)
		dstr_printf(out, " weight %d\n", srv->uweight);
	/* after the address: one given at run time ends init-addr none's
	 * maintenance */
	if (admin != srv->conf_admin && state_cmd(out, "set server", px->name, srv->name) == 0)
		dstr_printf(out, " state %s\n", state_admin_word(srv->flags));
	if ((srv->flags & SRV_F_AGENT) && (srv->flags & SRV_F_AGENT_OFF) &&
	    state_cmd(out, "disable agent", px->name, srv->name) == 0)
		dstr_printf(out, "\n");
	if ((srv->flags & SRV_F_AGENT) && (srv->flags & SRV_F_AGENT_DOWN) &&
	    state_cmd(out, "set server", px->name, srv->name) == 0)
		dstr_printf(out, " agent down\n");
	/* the last known health, so that the new checks start from it (a
	 * tracker follows its tracked server) */
	if ((srv->flags & SRV_F_CHECKED) && !srv->track) {
		const char *h = NULL;

		if ((srv->flags & SRV_F_DOWN) && srv->check.health < srv->check.rise)
			h = "down";
		else if (!(srv->flags & SRV_F_DOWN) && (srv->flags & SRV_F_NOLB))
			h = "stopping";
		if (h && state_cmd(out, "set server", px->name, srv->name) == 0)
			dstr_printf(out, " health %s\n", h);
	}
}

static void state_reload_dump(struct dstr *out)
{
	for (const struct srv_gone *g = srv_gone_list; g; g = g->next) {
		if (!proxy_find(g->be, PR_CAP_BE))
			continue;
		if (state_cmd(out, "set server", g->be, g->srv) == 0)
			dstr_printf(out, " state maint\n");
		if (state_cmd(out, "del server", g->be, g->srv) == 0)
			dstr_printf(out, "\n");
	}
	for (const struct proxy *px = global.proxies; px; px = px->next)
		if (px->cap & PR_CAP_BE)
			for (const struct server *srv = px->servers; srv; srv = srv->next)
				state_reload_server(out, px, srv);
}

static struct cli_state_kw state_reload_kws[] = {
	{ "servers", state_reload_dump },
};

/* ---- loading ---- */

static struct server *state_find(struct proxy *px, const char *name)
{
	for (struct server *srv = px->servers; srv; srv = srv->next)
		if (strcmp(srv->name, name) == 0)
			return srv;
	return NULL;
}

/* Applies one state line to <px> if it names one of its servers. Returns 1
 * when applied, 0 when not for us, -1 when malformed (reported). */
static int state_apply_line(struct proxy *px, char *line, const char *file, int lineno)
{
	char *f[26], *save = NULL;
	struct server *srv;
	int n = 0;

	for (char *t = strtok_r(line, " \t\n", &save); t && n < 26; t = strtok_r(NULL, " \t\n", &save))
		f[n++] = t;
	if (n < 19 || strcmp(f[1], px->name) != 0)
		return n < 19 && n > 0 ? (log_warning("%s:%d: server state line too short, ignored",
						      file, lineno), -1) : 0;
	srv = state_find(px, f[3]);
	if (!srv) {
		log_warning("%s:%d: server '%s/%s' of the state file no longer exists, ignored",
			    file, lineno, f[1], f[3]);
		return 0;
	}
	{
		int admin = atoi(f[6]), uweight = atoi(f[7]), iweight = atoi(f[8]);
		int op = atoi(f[5]);

		if (admin & SRV_ADMIN_FMAINT)
			srv->flags |= SRV_F_MAINT;
		if (admin & SRV_ADMIN_FDRAIN)
			srv->flags |= SRV_F_DRAIN;
		/* A weight set at run time survives unless the configuration
		 * changed the server's weight meanwhile. */
		if (iweight == srv->weight && uweight >= 0 && uweight <= 256)
			srv->uweight = uweight;
		if (op == 0 && (srv->flags & SRV_F_CHECKED)) {
			srv->flags |= SRV_F_DOWN;   /* stays DOWN until its checks pass */
			srv->check.health = 0;
		}
	}
	if (srv->addr.ss_family != AF_UNIX && strcmp(f[4], "-") != 0) {
		struct addr_spec as;
		char *err = NULL;
		uint16_t port = (uint16_t)atoi(f[18]);

		if (addr_parse(f[4], &as, ADDR_F_PORT_OPTIONAL, &err) == 0) {
			server_set_address(srv, &as.ss, as.len, port);
		} else {
			log_warning("%s:%d: server '%s/%s': %s", file, lineno, f[1], f[3], err);
			free(err);
		}
	}
	return 1;
}

static int state_load_file(struct proxy *px, const char *path)
{
	char line[STATE_MAX_LINE];
	FILE *fp = fopen(path, "r");
	int lineno = 0, applied = 0;

	if (!fp) {
		/* A missing file is normal on the first start. */
		if (errno != ENOENT)
			log_warning("backend '%s': cannot read server state file '%s': %s",
				    px->name, path, strerror(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, "1\n") != 0) {
				log_warning("%s: unknown server state file version, ignored", path);
				break;
			}
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		applied += state_apply_line(px, line, path, lineno) > 0;
	}
	fclose(fp);
	if (applied)
		lb_recalc(px);
	return 0;
}

static char *state_path(const char *name)
{
	if (name[0] == '/' || !st.base)
		return xstrdup(name);
	return str_fmt("%s/%s", st.base, name);
}

static int state_postparse(void)
{
	for (struct proxy *px = global.proxies; px; px = px->next) {
		char *path;

		if (!(px->cap & PR_CAP_BE) || px->state_load == LOAD_NONE)
			continue;
		if (px->state_load == LOAD_GLOBAL) {
			if (!st.file) {
				log_warning("backend '%s': 'load-server-state-from-file global' without a "
					    "global 'server-state-file'", px->name);
				continue;
			}
			path = state_path(st.file);
		} else {
			path = state_path(px->state_file ? px->state_file : px->name);
		}
		state_load_file(px, path);
		free(path);
	}
	return 0;
}

static int kw_state_load(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static const char *const modes[] = { "none", "global", "local" };

	for (int i = 0; argc == 1 && i < 3; i++)
		if (strcmp(argv[0], modes[i]) == 0) {
			ctx->px->state_load = i;
			return 0;
		}
	cfg_alert(ctx, "expects 'global', 'local' or 'none'");
	return -1;
}

static int kw_state_global(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char **dst = ctx->kw_row->arg ? &st.file : &st.base;   /* row value: 1 for the file */

	if (argc != 1) {
		cfg_alert(ctx, "expects a path");
		return -1;
	}
	free(*dst);
	*dst = xstrdup(argv[0]);
	return 0;
}

static struct cfg_kw state_kws[] = {
	{ "server-state-file", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_state_global,
	  .usage = "<path>", .arg = 1 },
	{ "server-state-base", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_state_global,
	  .usage = "<directory>", .arg = 0 },
	{ "load-server-state-from-file", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_state_load,
	  .usage = "global|local|none" },
	{ "server-state-file-name", CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_STR,
	  CFG_PX_OFF(state_file), .usage = "<file name>" },
};

static struct cli_kw state_cli_kws[] = {
	{ { "show", "servers", "state", NULL }, "show servers state [<backend>]",
	  "dump the servers' state (for server-state-file)", CLI_LVL_USER, cli_show_servers_state },
};

SLUICE_INIT(state_register)
{
	cfg_register(state_kws, ARRAY_SIZE(state_kws));
	cli_register(state_cli_kws, ARRAY_SIZE(state_cli_kws));
	cli_state_register(state_reload_kws, ARRAY_SIZE(state_reload_kws));
	/* After servers and checks are set up (30, 40). */
	cfg_register_postparse(state_postparse, 50);
}
