/* "program" sections (master-worker mode): commands the master starts,
 * signals at each reload and stops with itself. The worker parses them and
 * sends them to the master before its "ready"; the master owns the
 * processes from then on (mworker_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/fdpass.h>
#include <sluice/log.h>
#include <sluice/mworker.h>
#include <sluice/str.h>
#include <sluice/ticks.h>
#include "mworker_int.h"

#define MPROG_ARGS_MAX 256   /* words of a command */

/* A program as its section defines it. */
struct mprog_def {
	struct mprog_def *next;
	char             *name;
	char            **argv;          /* NULL-terminated */
	int               argc;
	uid_t             uid;
	gid_t             gid;
	int               has_uid, has_gid;
	int               start_on_reload;
	char             *file;          /* where it was declared (worker side) */
	int               line;
};

/* A running instance (master side). */
struct mprog {
	struct mprog     *next;
	struct mprog_def *def;
	pid_t             pid;
	int               current;       /* else a former instance, replaced at a reload */
	int               signalled;     /* got SIGUSR1 at a reload: its end is expected */
	int               reloads;       /* reloads it has lived through */
	time_t            started;
};

static struct {
	struct mprog_def *defs;          /* worker side: the configuration's */
	struct mprog_def *cur;           /* the section being read */
	struct mprog     *procs;         /* master side */
} mp;

static void mprog_def_free(struct mprog_def *d)
{
	for (int i = 0; i < d->argc; i++)
		free(d->argv[i]);
	free(d->argv);
	free(d->name);
	free(d->file);
	free(d);
}

void mprog_defs_free(struct mprog_def **list)
{
	while (*list) {
		struct mprog_def *d = *list;

		*list = d->next;
		mprog_def_free(d);
	}
}

int mprog_count(void)
{
	int n = 0;

	for (const struct mprog_def *d = mp.defs; d; d = d->next)
		n++;
	return n;
}

/* ---- the section (any process that reads the configuration) ---- */

static struct mprog_def *mprog_def_find(struct mprog_def *list, const char *name)
{
	while (list && strcmp(list->name, name) != 0)
		list = list->next;
	return list;
}

static int sec_program(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct mprog_def *d, **tail = &mp.defs;

	mp.cur = NULL;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	if (argc > 1) {
		cfg_alert(ctx, "unexpected argument '%s' after the name", argv[1]);
		return -1;
	}
	if ((d = mprog_def_find(mp.defs, argv[0]))) {
		cfg_alert(ctx, "program '%s' is already declared at %s:%d", argv[0], d->file, d->line);
		return -1;
	}
	d = xcalloc(1, sizeof(*d));
	d->name = xstrdup(argv[0]);
	d->start_on_reload = 1;
	d->file = xstrdup(ctx->file);
	d->line = ctx->line;
	while (*tail)
		tail = &(*tail)->next;
	*tail = d;
	mp.cur = d;
	return 0;
}

static int sec_program_end(struct cfg_ctx *ctx)
{
	if (mp.cur && !mp.cur->argc) {
		cfg_alert(ctx, "program '%s' (%s:%d) has no 'command'", mp.cur->name, mp.cur->file,
			  mp.cur->line);
		mp.cur = NULL;
		return -1;
	}
	mp.cur = NULL;
	return 0;
}

static int kw_prog_command(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct mprog_def *d = mp.cur;
	size_t len = 0;

	if (!d)
		return -1;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a command and its arguments");
		return -1;
	}
	if (d->argc) {
		cfg_alert(ctx, "program '%s' has a command already", d->name);
		return -1;
	}
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (argc > MPROG_ARGS_MAX || len + strlen(d->name) + 64 > MW_MSG_MAX) {
		cfg_alert(ctx, "command too long (at most %d words, %d bytes)", MPROG_ARGS_MAX,
			  MW_MSG_MAX - 64 - (int)strlen(d->name));
		return -1;
	}
	d->argv = xcalloc((size_t)argc + 1, sizeof(*d->argv));
	for (int i = 0; i < argc; i++)
		d->argv[i] = xstrdup(argv[i]);
	d->argc = argc;
	return 0;
}

/* user <name> / group <name>: the row's arg says which */
static int kw_prog_id(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct mprog_def *d = mp.cur;

	if (!d)
		return -1;
	if (argc != 1) {
		cfg_alert(ctx, "expects a %s name", ctx->kw_row->arg ? "group" : "user");
		return -1;
	}
	if (ctx->kw_row->arg) {
		struct group *gr = getgrnam(argv[0]);

		if (!gr) {
			cfg_alert(ctx, "unknown group '%s'", argv[0]);
			return -1;
		}
		d->gid = gr->gr_gid;
		d->has_gid = 1;
	} else {
		struct passwd *pw = getpwnam(argv[0]);

		if (!pw) {
			cfg_alert(ctx, "unknown user '%s'", argv[0]);
			return -1;
		}
		d->uid = pw->pw_uid;
		d->has_uid = 1;
	}
	return 0;
}

static int kw_prog_start_on_reload(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (!mp.cur)
		return -1;
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	mp.cur->start_on_reload = !ctx->inverted;
	return 0;
}

/* ---- worker -> master ---- */

/* "prog" NUL name NUL start-on-reload NUL uid NUL gid NUL argv[0] NUL ...
 * (uid/gid "-" when not set) */
int mprog_send_defs(int chan)
{
	for (const struct mprog_def *d = mp.defs; d; d = d->next) {
		struct dstr m = { 0 };
		int r;

		dstr_add(&m, "prog", 5);
		dstr_add(&m, d->name, strlen(d->name) + 1);
		dstr_printf(&m, "%d", d->start_on_reload);
		dstr_add(&m, "", 1);
		if (d->has_uid)
			dstr_printf(&m, "%lu", (unsigned long)d->uid);
		else
			dstr_add(&m, "-", 1);
		dstr_add(&m, "", 1);
		if (d->has_gid)
			dstr_printf(&m, "%lu", (unsigned long)d->gid);
		else
			dstr_add(&m, "-", 1);
		dstr_add(&m, "", 1);
		for (int i = 0; i < d->argc; i++)
			dstr_add(&m, d->argv[i], strlen(d->argv[i]) + 1);
		r = fdpass_send(chan, m.p, m.len, NULL, 0);
		dstr_free(&m);
		if (r == -1)
			return -1;
	}
	return 0;
}

/* The next NUL-terminated word of <msg> (<len> bytes) at *<off>, or NULL. */
static const char *msg_word(const char *msg, size_t len, size_t *off)
{
	const char *w = msg + *off, *end;

	if (*off >= len || !(end = memchr(w, 0, len - *off)))
		return NULL;
	*off += (size_t)(end - w) + 1;
	return w;
}

int mprog_def_take(struct mprog_def **list, const char *msg, size_t len)
{
	struct mprog_def *d = xcalloc(1, sizeof(*d)), **tail = list;
	const char *name, *sor, *uid, *gid, *w;
	size_t off = 5;

	name = msg_word(msg, len, &off);
	sor = msg_word(msg, len, &off);
	uid = msg_word(msg, len, &off);
	gid = msg_word(msg, len, &off);
	if (!name || !*name || !sor || !uid || !gid) {
		free(d);
		return -1;
	}
	d->name = xstrdup(name);
	d->start_on_reload = atoi(sor) != 0;
	d->has_uid = *uid != '-';
	d->uid = (uid_t)strtoul(uid, NULL, 10);
	d->has_gid = *gid != '-';
	d->gid = (gid_t)strtoul(gid, NULL, 10);
	while ((w = msg_word(msg, len, &off)) && d->argc < MPROG_ARGS_MAX) {
		d->argv = xrealloc(d->argv, sizeof(*d->argv) * (size_t)(d->argc + 2));
		d->argv[d->argc++] = xstrdup(w);
		d->argv[d->argc] = NULL;
	}
	if (!d->argc) {
		mprog_def_free(d);
		return -1;
	}
	while (*tail)
		tail = &(*tail)->next;
	*tail = d;
	return 0;
}

/* ---- master side: the processes ---- */

/* In the child: the master's signal dispositions and descriptors are not
 * the program's; then the identity asked for, then exec. Only
 * async-signal-safe calls. */
static void mprog_exec(const struct mprog_def *d)
{
	sigset_t none;
	int null = open("/dev/null", O_RDONLY);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	if (null >= 0 && null != STDIN_FILENO) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	close_range(3, ~0U, 0);
	if (d->has_gid && (setgroups(0, NULL) == -1 || setgid(d->gid) == -1)) {
		dprintf(STDERR_FILENO, "[ALERT] (%d) : program '%s': cannot set group %lu: %s\n",
			(int)getpid(), d->name, (unsigned long)d->gid, strerror(errno));
		_exit(126);
	}
	if (d->has_uid && setuid(d->uid) == -1) {
		dprintf(STDERR_FILENO, "[ALERT] (%d) : program '%s': cannot set user %lu: %s\n",
			(int)getpid(), d->name, (unsigned long)d->uid, strerror(errno));
		_exit(126);
	}
	execvp(d->argv[0], d->argv);
	dprintf(STDERR_FILENO, "[ALERT] (%d) : program '%s': cannot run '%s': %s\n",
		(int)getpid(), d->name, d->argv[0], strerror(errno));
	_exit(127);
}

static void mprog_start(struct mprog_def *d)
{
	struct mprog *p;
	pid_t pid = fork();

	if (pid == -1) {
		log_event(LOG_L_ALERT, "master: cannot fork program '%s': %s", d->name,
			  strerror(errno));
		return;
	}
	if (pid == 0)
		mprog_exec(d);
	p = xcalloc(1, sizeof(*p));
	p->def = d;
	p->pid = pid;
	p->current = 1;
	p->started = tick_wall();
	p->next = mp.procs;
	mp.procs = p;
	log_event(LOG_L_NOTICE, "master: program '%s' (pid %d) started", d->name, (int)pid);
}

/* The definitions still used by an instance are kept; the others freed. */
static int mprog_def_used(const struct mprog_def *d)
{
	for (const struct mprog *p = mp.procs; p; p = p->next)
		if (p->def == d)
			return 1;
	return 0;
}

static struct mprog_def *mp_defs_held;   /* master: definitions instances point to */

static void mprog_defs_gc(void)
{
	struct mprog_def **pd = &mp_defs_held;

	while (*pd) {
		struct mprog_def *d = *pd;

		if (mprog_def_used(d)) {
			pd = &d->next;
			continue;
		}
		*pd = d->next;
		mprog_def_free(d);
	}
}

void mprog_apply(struct mprog_def **defs, int first)
{
	struct mprog_def *d, *next;

	/* a reload: every current instance gets SIGUSR1 (a program that
	 * goes on after it is expected to catch it); it stays the current one
	 * only if its section is still there and says "no option
	 * start-on-reload" */
	for (struct mprog *p = mp.procs; p; p = p->next) {
		if (!p->current)
			continue;
		p->reloads++;
		p->signalled = 1;
		kill(p->pid, SIGUSR1);
		d = mprog_def_find(*defs, p->def->name);
		if (!d || d->start_on_reload)
			p->current = 0;
	}
	for (d = *defs; d; d = next) {
		int running = 0;

		next = d->next;
		for (const struct mprog *p = mp.procs; p; p = p->next)
			running |= p->current && strcmp(p->def->name, d->name) == 0;
		d->next = mp_defs_held;
		mp_defs_held = d;
		if (first || !running)
			mprog_start(d);
	}
	*defs = NULL;
	mprog_defs_gc();
}

int mprog_reap(pid_t pid, int status, int stopping, char *how, size_t how_size)
{
	struct mprog **pp = &mp.procs, *p;
	int fatal;

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	if (!(p = *pp))
		return -1;
	*pp = p->next;
	if (WIFEXITED(status))
		snprintf(how, how_size, "exit code %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(how, how_size, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(how, how_size, "status %d", status);
	fatal = p->current && !p->signalled && !stopping;
	log_event(fatal ? LOG_L_ALERT : LOG_L_WARNING, "master: %s program '%s' (pid %d) exited "
		  "(%s)", p->current ? "current" : "former", p->def->name, (int)p->pid, how);
	free(p);
	mprog_defs_gc();
	return fatal;
}

void mprog_kill_all(int sig)
{
	for (const struct mprog *p = mp.procs; p; p = p->next)
		kill(p->pid, sig);
}

void mprog_show(struct dstr *out, void (*uptime)(time_t since, char *buf, size_t size))
{
	char up[32], reloads[16];

	dstr_printf(out, "# programs\n");
	for (const struct mprog *p = mp.procs; p; p = p->next) {
		if (!p->current)
			continue;
		uptime(p->started, up, sizeof(up));
		snprintf(reloads, sizeof(reloads), "%d", p->reloads);
		dstr_printf(out, "%-15d %-15s %-15s %-15s %s\n", (int)p->pid, p->def->name, reloads,
			    up, "-");
	}
}

/* ---- registration ---- */

static struct cfg_section mprog_sections[] = {
	{ "program", CFG_SEC_PROGRAM, sec_program, sec_program_end, NULL },
};

static struct cfg_kw mprog_kws[] = {
	{ "command", CFG_SEC_PROGRAM, CFG_T_FUNC, 0, .parse = kw_prog_command,
	  .usage = "<command> [<argument>...]" },
	{ "user", CFG_SEC_PROGRAM, CFG_T_FUNC, 0, .parse = kw_prog_id, .usage = "<user name>" },
	{ "group", CFG_SEC_PROGRAM, CFG_T_FUNC, 0, .parse = kw_prog_id, .arg = 1,
	  .usage = "<group name>" },
	{ "option start-on-reload", CFG_SEC_PROGRAM, CFG_T_FUNC, 0,
	  .parse = kw_prog_start_on_reload, .flags = CFG_KW_F_NO },
};

SLUICE_INIT(mprog_register)
{
	cfg_register_sections(mprog_sections, ARRAY_SIZE(mprog_sections));
	cfg_register(mprog_kws, ARRAY_SIZE(mprog_kws));
}
