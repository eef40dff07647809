/* "debug dev <command>" (expert mode): HAProxy's developer commands that
 * mean something in sluice (log, write, exit, close, fd, hex, sym, panic,
 * bug, warn, check, tkill), the others refused with the reason. Counted in
 * show info's DebugCommandsIssued. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/debug_dev.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/str.h>

static unsigned long dd_issued;

unsigned long debug_dev_issued(void)
{
	return dd_issued;
}

struct dd_cmd {
	const char *name;
	const char *usage;
	const char *help;
	int       (*fn)(struct cli_ctx *ctx, int argc, char **argv);  /* argv[0]: the name */
	const char *refused;     /* why sluice does not run it */
};

static int dd_log(struct cli_ctx *ctx, int argc, char **argv)
{
	struct dstr m = { 0 };

	for (int i = 1; i < argc; i++)
		dstr_printf(&m, "%s%s", i > 1 ? " " : "", argv[i]);
	log_send(&global.loggers, LOG_L_INFO, m.p ? m.p : "", m.len);
	dstr_free(&m);
	return 0;
}

static int dd_write(struct cli_ctx *ctx, int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;

	if (n < 0 || n > (1 << 20)) {
		dstr_printf(&ctx->out, "Size must be between 0 and 1048576.\n");
		return -1;
	}
	for (long i = 0; i < n; i++)
		dstr_add(&ctx->out, ".", 1);
	return 0;
}

static int dd_exit(struct cli_ctx *ctx, int argc, char **argv)
{
	_exit(argc > 1 ? atoi(argv[1]) : 0);
}

static int dd_close(struct cli_ctx *ctx, int argc, char **argv)
{
	char *end;
	long fd = argc > 1 ? strtol(argv[1], &end, 10) : -1;

	if (argc < 2 || *end || fd < 0 || fd > INT_MAX) {
		dstr_printf(&ctx->out, "Missing file descriptor number.\n");
		return -1;
	}
	if (fcntl((int)fd, F_GETFD) == -1) {
		dstr_printf(&ctx->out, "File descriptor %ld is not open.\n", fd);
		return -1;
	}
	close((int)fd);
	return 0;
}

/* Lists the open descriptors and what they are (as /proc says): those
 * "show fd" does not list are the ones no event watches. */
static int dd_fd(struct cli_ctx *ctx, int argc, char **argv)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d) {
		dstr_printf(&ctx->out, "Cannot read /proc/self/fd: %s\n", strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char path[300], target[256];
		ssize_t n;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		dstr_printf(&ctx->out, "%5s : %s\n", e->d_name, target);
	}
	closedir(d);
	return 0;
}

static int dd_hex(struct cli_ctx *ctx, int argc, char **argv)
{
	unsigned char buf[4096];
	unsigned long addr, len;
	struct iovec local, remote;
	char *end;

	if (argc < 2) {
		dstr_printf(&ctx->out, "Missing memory address to dump from.\n");
		return -1;
	}
	addr = strtoul(argv[1], &end, 0);
	len = argc > 2 ? strtoul(argv[2], NULL, 0) : 64;
	if (*end || !len || len > sizeof(buf)) {
		dstr_printf(&ctx->out, "Expects an address and a length from 1 to %zu.\n", sizeof(buf));
		return -1;
	}
	/* read through the kernel: an unmapped address is an error, not a crash */
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)addr;
	remote.iov_len = len;
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)len) {
		dstr_printf(&ctx->out, "Cannot read %lu bytes at %#lx: %s\n", len, addr,
			    strerror(errno));
		return -1;
	}
	for (unsigned long i = 0; i < len; i += 16) {
		dstr_printf(&ctx->out, "%016lx ", addr + i);
		for (unsigned long j = i; j < i + 16; j++)
			dstr_printf(&ctx->out, j < len ? " %02x" : "   ", buf[j < len ? j : 0]);
		dstr_printf(&ctx->out, "  ");
		for (unsigned long j = i; j < i + 16 && j < len; j++)
			dstr_printf(&ctx->out, "%c", buf[j] >= 32 && buf[j] < 127 ? buf[j] : '.');
		dstr_printf(&ctx->out, "\n");
	}
	return 0;
}

static int dd_sym(struct cli_ctx *ctx, int argc, char **argv)
{
	Dl_info di;
	unsigned long addr;
	char *end;

	if (argc < 2 || !(addr = strtoul(argv[1], &end, 0)) || *end) {
		dstr_printf(&ctx->out, "Missing memory address to be resolved.\n");
		return -1;
	}
	if (!dladdr((void *)addr, &di) || !di.dli_sname) {
		dstr_printf(&ctx->out, "%#lx: unknown\n", addr);
		return 0;
	}
	dstr_printf(&ctx->out, "%#lx = %s+%#lx (%s)\n", addr, di.dli_sname,
		    addr - (unsigned long)di.dli_saddr, di.dli_fname ? di.dli_fname : "?");
	return 0;
}

static int dd_panic(struct cli_ctx *ctx, int argc, char **argv)
{
	log_alert("debug dev panic: aborting as asked on the runtime API");
	abort();
}

static int dd_bug(struct cli_ctx *ctx, int argc, char **argv)
{
	BUG_ON(1, "debug dev bug: BUG_ON() called from the runtime API");
	return 0;
}

/* warn, check: HAProxy's WARN_ON()/CHECK_IF() report and go on */
static int dd_warn(struct cli_ctx *ctx, int argc, char **argv)
{
	log_warning("debug dev %s: %s() triggered from the runtime API", argv[0],
		    argv[0][0] == 'w' ? "WARN_ON" : "CHECK_IF");
	return 0;
}

static int dd_tkill(struct cli_ctx *ctx, int argc, char **argv)
{
	int thr = argc > 1 ? atoi(argv[1]) : 0, sig = argc > 2 ? atoi(argv[2]) : SIGABRT;

	if (thr > 1 || thr < 0 || sig <= 0 || sig >= NSIG) {
		dstr_printf(&ctx->out, "Expects thread 0 or 1 (there is one) and a signal number.\n");
		return -1;
	}
	raise(sig);
	return 0;
}

static const struct dd_cmd dd_cmds[] = {
	{ "bug", "debug dev bug", "call BUG_ON() and crash", dd_bug, NULL },
	{ "check", "debug dev check", "call CHECK_IF(): a warning, and go on", dd_warn, NULL },
	{ "close", "debug dev close  <fd>", "close this file descriptor", dd_close, NULL },
	{ "delay", "debug dev delay  [ms]", "sleep this long", NULL,
	  "it would stop the only event loop, and every connection with it" },
	{ "exit", "debug dev exit   [code]", "immediately exit the process", dd_exit, NULL },
	{ "fd", "debug dev fd", "list the open descriptors and what they are", dd_fd, NULL },
	{ "hex", "debug dev hex    <addr> [len]", "dump a memory area", dd_hex, NULL },
	{ "log", "debug dev log    [msg] ...", "send this msg to global logs", dd_log, NULL },
	{ "loop", "debug dev loop   [ms]", "loop this long", NULL,
	  "it would stop the only event loop, and every connection with it" },
	{ "panic", "debug dev panic", "immediately trigger a panic", dd_panic, NULL },
	{ "sched", "debug dev sched  {task|tasklet} [k=v]*", "stress the scheduler", NULL,
	  "sluice has no task scheduler (one event loop runs every event)" },
	{ "stream", "debug dev stream [k=v]*", "show/manipulate stream flags", NULL,
	  "its stream flags are HAProxy's internals (see 'show sess all')" },
	{ "sym", "debug dev sym    <addr>", "resolve symbol address", dd_sym, NULL },
	{ "tkill", "debug dev tkill  [thr] [sig]", "send signal to thread", dd_tkill, NULL },
	{ "warn", "debug dev warn", "call WARN_ON(): a warning, and go on", dd_warn, NULL },
	{ "write", "debug dev write  [size]", "write that many bytes in return", dd_write, NULL },
};

static int cli_debug_dev(struct cli_ctx *ctx, int argc, char **argv)
{
	const struct dd_cmd *c = NULL;

	if (!ctx->expert) {
		dstr_printf(&ctx->out, "This command is restricted to expert mode only.\n");
		return -1;
	}
	for (size_t i = 0; argc > 2 && i < ARRAY_SIZE(dd_cmds); i++)
		if (strcmp(dd_cmds[i].name, argv[2]) == 0)
			c = &dd_cmds[i];
	if (!c) {
		dstr_printf(&ctx->out, "Unknown 'debug dev' command%s%s, the ones sluice knows:\n",
			    argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
		for (size_t i = 0; i < ARRAY_SIZE(dd_cmds); i++)
			dstr_printf(&ctx->out, "  %-39s : %s%s\n", dd_cmds[i].usage, dd_cmds[i].help,
				    dd_cmds[i].refused ? " (refused by sluice)" : "");
		return -1;
	}
	if (c->refused) {
		dstr_printf(&ctx->out, "'debug dev %s' is not supported by sluice: %s.\n", c->name,
			    c->refused);
		return -1;
	}
	dd_issued++;
	return c->fn(ctx, argc - 2, argv + 2);
}

static struct cli_kw dd_cli_kws[] = {
	{ { "debug", "dev", NULL }, "debug dev <command> [args]*", "developer commands "
	  "(expert mode; 'debug dev' lists them)", CLI_LVL_ADMIN, cli_debug_dev },
};

SLUICE_INIT(debug_dev_register)
{
	cli_register(dd_cli_kws, ARRAY_SIZE(dd_cli_kws));
}
