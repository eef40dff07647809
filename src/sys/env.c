/* The environment keywords of the global section (setenv, presetenv,
 * resetenv, unsetenv): they act on the process environment at once, so that
 * the "${NAME}" of the lines after them, and `show env`, see the change. */
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/str.h>

extern char **environ;

#define ENV_OVERWRITE 1   /* setenv: replaces a value; presetenv keeps it */

/* setenv|presetenv <name> <value>: the row's .arg says whether a value
 * already there is replaced. */
static int kw_setenv(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc != 2 || !*argv[0] || strchr(argv[0], '=')) {
		cfg_alert(ctx, "expects a name and a value");
		return -1;
	}
	if (setenv(argv[0], argv[1], ctx->kw_row->arg == ENV_OVERWRITE) == -1) {
		cfg_alert(ctx, "cannot set '%s' in the environment", argv[0]);
		return -1;
	}
	return 0;
}

/* unsetenv <name>...: removes those variables. */
static int kw_unsetenv(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (!argc) {
		cfg_alert(ctx, "expects at least one variable name");
		return -1;
	}
	for (int i = 0; i < argc; i++)
		unsetenv(argv[i]);
	return 0;
}

/* Whether the "NAME=value" entry <e> names one of <argv>. */
static int env_kept(const char *e, int argc, char **argv)
{
	size_t l = strcspn(e, "=");

	for (int i = 0; i < argc; i++)
		if (strlen(argv[i]) == l && strncmp(e, argv[i], l) == 0)
			return 1;
	return 0;
}

/* resetenv [<name>...]: removes every variable but those named. */
static int kw_resetenv(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	size_t i = 0;

	while (environ && environ[i]) {
		char name[256];

		if (env_kept(environ[i], argc, argv)) {
			i++;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(environ[i], "="), environ[i]);
		if (unsetenv(name) == -1)
			i++;   /* a name unsetenv refuses: leave it */
	}
	return 0;
}

static struct cfg_kw env_kws[] = {
	{ "setenv", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_setenv, .arg = ENV_OVERWRITE,
	  .usage = "<name> <value>" },
	{ "presetenv", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_setenv, .arg = 0,
	  .usage = "<name> <value>" },
	{ "unsetenv", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_unsetenv,
	  .usage = "<name> [<name>...]" },
	{ "resetenv", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_resetenv,
	  .usage = "[<name>...]" },
};

SLUICE_INIT(env_register)
{
	cfg_register(env_kws, ARRAY_SIZE(env_kws));
}
