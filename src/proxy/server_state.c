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
#include <sluice/str.h>
#include <sluice/ticks.h>

#define SRV_ADMIN_FMAINT 0x01   /* srv_admin_state bits, as HAProxy writes them */
#define SRV_ADMIN_FDRAIN 0x08
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
			    ((srv->flags & SRV_F_DRAIN) ? SRV_ADMIN_FDRAIN : 0);
		int up = !(srv->flags & (SRV_F_MAINT | SRV_F_DOWN));

		dstr_printf(out, "%d %s %d %s %s %d %d %d %d %lld %d %d %d %d 0 0 0 - %u - 0 %u - - 0\n",
			    px->id, px->name, srv->id, srv->name,
			    srv->addr.ss_family == AF_UNIX ? "-" : addr_ip_str(&srv->addr, ip, sizeof(ip)),
			    !up ? 0 : (srv->flags & SRV_F_NOLB) ? 3 : 2, admin, srv->uweight, srv->weight,
			    (long long)(now - srv->last_change), state_check_status(srv),
			    state_check_result(srv),
			    (srv->flags & SRV_F_CHECKED) ? srv->check.health : up ? 2 : 0,
			    (srv->flags & SRV_F_CHECKED) ? 1 : 0,
			    addr_get_port(&srv->addr), srv->check.port);
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
	/* After servers and checks are set up (30, 40). */
	cfg_register_postparse(state_postparse, 50);
}
