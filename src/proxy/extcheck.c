/* External health checks ("option external-check", "external-check command
 * |path", the global "external-check" and "insecure-fork-wanted"): a check
 * runs a program with the proxy's and the server's addresses as arguments
 * and HAProxy's HAPROXY_* environment; exit status 0 passes. The child is
 * watched by the loop (libev's default loop reaps children on SIGCHLD and
 * reports them to ev_child watchers) and killed with its process group
 * when the check times out (check.h). */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

/* The global keywords. */
static struct {
	uint64_t enabled;        /* "external-check" */
	uint64_t fork_wanted;    /* "insecure-fork-wanted" */
} extchk_glob;

/* A running program. It outlives its check when the check timed out: the
 * killed process is still reaped when it exits. */
struct extchk_proc {
	struct extchk_proc *next, **pprev;   /* in extchk_procs */
	struct check *c;         /* NULL once detached */
	pid_t         pid;
	ev_child      child;
};

/* The programs running (reachable while only the loop watches them). */
static struct extchk_proc *extchk_procs;

/* ---- the child ---- */

/* "NAME=value" into envp[*n]. */
static void env_add(char **envp, int *n, const char *name, const char *value)
{
	envp[(*n)++] = str_fmt("%s=%s", name, value ? value : "");
}

/* The first listener of <px> that is IPv4, IPv6 or a UNIX socket: its
 * address and port as text ("NOT_USED" for what does not apply). */
static void proxy_addr(const struct proxy *px, char *addr, size_t asz, char *port, size_t psz)
{
	snprintf(addr, asz, "NOT_USED");
	snprintf(port, psz, "NOT_USED");
	for (const struct listener *li = px->listeners; li; li = li->next) {
		int fam = li->addr.ss_family;

		if (fam == AF_UNIX) {
			snprintf(addr, asz, "%s", ((const struct sockaddr_un *)&li->addr)->sun_path);
			return;
		}
		if (fam == AF_INET || fam == AF_INET6) {
			addr_ip_str(&li->addr, addr, asz);
			snprintf(port, psz, "%u", addr_get_port(&li->addr));
			return;
		}
	}
}

/* The program's path: <cmd> as it is when it names a directory, else
 * searched in <path> (":"-separated; an empty entry is the current
 * directory, as for execvp()). NULL when it is not found. */
static char *find_program(const char *cmd, const char *path)
{
	if (strchr(cmd, '/'))
		return xstrdup(cmd);
	for (const char *p = path ? path : ""; ; ) {
		size_t l = strcspn(p, ":");
		char *full = l ? str_fmt("%.*s/%s", (int)l, p, cmd) : xstrdup(cmd);

		if (full && access(full, X_OK) == 0)
			return full;
		free(full);
		if (!p[l])
			return NULL;
		p += l + 1;
	}
}

/* Starts the program of <c>'s check. Returns its pid, or -1 with errno. */
static pid_t spawn_check(const struct check *c)
{
	const struct server *srv = c->srv;
	const struct chk_px *cp = chk_px_of(srv->px);
	char pa[128], pp[16], sa[128], sp[16], num[5][24], *prog;
	char *envp[16], *argv[6];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int n = 0, err;
	pid_t pid = -1;

	proxy_addr(srv->px, pa, sizeof(pa), pp, sizeof(pp));
	if (srv->addr.ss_family == AF_UNIX) {
		snprintf(sa, sizeof(sa), "%s", ((const struct sockaddr_un *)&srv->addr)->sun_path);
		snprintf(sp, sizeof(sp), "NOT_USED");
	} else {
		addr_ip_str(&srv->addr, sa, sizeof(sa));
		snprintf(sp, sizeof(sp), "%u", addr_get_port(&srv->addr));
	}
	snprintf(num[0], sizeof(num[0]), "%d", srv->px->id);
	snprintf(num[1], sizeof(num[1]), "%u", srv->counters.cur_sess);
	snprintf(num[2], sizeof(num[2]), "%d", srv->id);
	snprintf(num[3], sizeof(num[3]), "%d", srv->maxconn);
	snprintf(num[4], sizeof(num[4]), "%d", ssl_srv_enabled(srv));
	env_add(envp, &n, "HAPROXY_PROXY_ADDR", strcmp(pa, "NOT_USED") ? pa : "");
	env_add(envp, &n, "HAPROXY_PROXY_ID", num[0]);
	env_add(envp, &n, "HAPROXY_PROXY_NAME", srv->px->name);
	env_add(envp, &n, "HAPROXY_PROXY_PORT", strcmp(pp, "NOT_USED") ? pp : "");
	env_add(envp, &n, "HAPROXY_SERVER_ADDR", sa);
	env_add(envp, &n, "HAPROXY_SERVER_CURCONN", num[1]);
	env_add(envp, &n, "HAPROXY_SERVER_ID", num[2]);
	env_add(envp, &n, "HAPROXY_SERVER_MAXCONN", num[3]);
	env_add(envp, &n, "HAPROXY_SERVER_NAME", srv->name);
	env_add(envp, &n, "HAPROXY_SERVER_PORT", strcmp(sp, "NOT_USED") ? sp : "");
	env_add(envp, &n, "HAPROXY_SERVER_PROTO", (srv->flags & SRV_F_PROTO_H2) ? "h2" :
		(srv->flags & SRV_F_PROTO_FCGI) ? "fcgi" : srv->px->mode == PR_MODE_HTTP ? "h1" : "tcp");
	env_add(envp, &n, "HAPROXY_SERVER_SSL", num[4]);
	env_add(envp, &n, "PATH", cp->ext_path);
	envp[n] = NULL;
	argv[0] = cp->ext_cmd;
	argv[1] = pa;
	argv[2] = pp;
	argv[3] = sa;
	argv[4] = sp;
	argv[5] = NULL;
	prog = find_program(cp->ext_cmd, cp->ext_path);
	if (!prog) {
		errno = ENOENT;
		goto out;
	}
	/* its own session (killed as a group), default signals, only the
	 * standard descriptors */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	err = posix_spawn(&pid, prog, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (err) {
		errno = err;
		pid = -1;
	}
out:
	free(prog);
	for (int i = 0; i < n; i++)
		free(envp[i]);
	return pid;
}

/* ---- watching it ---- */

static void proc_free(struct extchk_proc *p)
{
	ev_child_stop(global.loop, &p->child);
	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	free(p);
}

/* <p> exited (libev reaped it): the check, if still attached, gets its
 * result. */
static void proc_exit_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	struct extchk_proc *p = container_of(w, struct extchk_proc, child);
	struct check *c = p->c;
	int st = w->rstatus, code;
	char info[64] = "";

	proc_free(p);
	if (!c)
		return;
	c->ext = NULL;
	if (WIFEXITED(st)) {
		code = WEXITSTATUS(st);
	} else {
		code = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
		if (WIFSIGNALED(st))
			snprintf(info, sizeof(info), "killed by signal %d", WTERMSIG(st));
	}
	check_report(c, code == 0 ? CHK_R_PROCOK : CHK_R_PROCERR, code, info);
}

int extchk_start(struct check *c)
{
	struct extchk_proc *p;
	pid_t pid = spawn_check(c);

	if (pid == -1)
		return -1;
	p = xcalloc(1, sizeof(*p));
	p->next = extchk_procs;
	p->pprev = &extchk_procs;
	if (extchk_procs)
		extchk_procs->pprev = &p->next;
	extchk_procs = p;
	p->c = c;
	p->pid = pid;
	/* started before the loop runs again, so before its SIGCHLD is seen */
	ev_child_init(&p->child, proc_exit_cb, pid, 0);
	ev_child_start(global.loop, &p->child);
	c->ext = p;
	return 0;
}

void extchk_stop(struct check *c)
{
	struct extchk_proc *p = c->ext;

	if (!p)
		return;
	kill(-p->pid, SIGKILL);   /* the program and what it started */
	p->c = NULL;              /* reaped when it is gone */
	c->ext = NULL;
}

double extchk_timeout(const struct check *c)
{
	uint32_t tmo = c->srv->px->timeout.check;

	return (double)(tmo && tmo < c->inter ? tmo : c->inter) / 1000.0;
}

/* ---- configuration ---- */

/* option external-check: the last check type named wins. */
static int kw_opt_external_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return check_opt_type(ctx, argc, argv, CHK_O_EXTCHK);
}

/* external-check command <cmd> | path <path> (.arg: 0 command, 1 path) */
static int kw_external_check(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct chk_px *cp = chk_px_w(ctx->px);
	char **dst = ctx->kw_row->arg ? &cp->ext_path : &cp->ext_cmd;

	if (argc != 1 || (!ctx->kw_row->arg && !*argv[0])) {
		cfg_alert(ctx, "expects %s", ctx->kw_row->arg ? "a PATH value (quote it if it has "
			  "spaces)" : "the command to run");
		return -1;
	}
	free(*dst);
	*dst = xstrdup(argv[0]);
	return 0;
}

static void *extchk_glob_cfg(struct cfg_ctx *ctx)
{
	return &extchk_glob;
}

/* Backends with "option external-check" need the global keyword and a
 * command; without insecure-fork-wanted, HAProxy's warning. */
static int extchk_postparse(void)
{
	int errs = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		const struct chk_px *cp = chk_px_of(px);

		if (!(px->cap & PR_CAP_BE) || !(cp->options & CHK_O_EXTCHK))
			continue;
		if (!extchk_glob.enabled) {
			log_alert("%s:%d: proxy '%s': 'option external-check' needs 'external-check' in "
				  "the global section (external programs run only when allowed)",
				  px->conf_file, px->conf_line, px->name);
			errs++;
		} else if (!cp->ext_cmd) {
			log_alert("%s:%d: proxy '%s': 'option external-check' needs 'external-check "
				  "command <cmd>'", px->conf_file, px->conf_line, px->name);
			errs++;
		} else if (!extchk_glob.fork_wanted) {
			log_warning("%s:%d: proxy '%s': 'insecure-fork-wanted' not enabled in the global "
				    "section, 'option external-check' will likely fail", px->conf_file,
				    px->conf_line, px->name);
		}
	}
	return errs;
}

static struct cfg_kw extchk_kws[] = {
	{ "external-check", CFG_SEC_GLOBAL, CFG_T_FLAG, offsetof(__typeof__(extchk_glob), enabled),
	  .mask = 1, .base = extchk_glob_cfg },
	{ "insecure-fork-wanted", CFG_SEC_GLOBAL, CFG_T_FLAG,
	  offsetof(__typeof__(extchk_glob), fork_wanted), .mask = 1, .base = extchk_glob_cfg,
	  .flags = CFG_KW_F_NO },
	{ "option external-check", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_opt_external_check,
	  .flags = CFG_KW_F_NO },
	{ "external-check command", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_external_check,
	  .arg = 0, .usage = "<command>" },
	{ "external-check path", CFG_SEC_BE, CFG_T_FUNC, 0, .parse = kw_external_check,
	  .arg = 1, .usage = "<path>" },
};

SLUICE_INIT(extchk_register)
{
	cfg_register(extchk_kws, ARRAY_SIZE(extchk_kws));
	cfg_register_postparse(extchk_postparse, 46);
}
