/* libFuzzer harness for runtime API lines (cli_exec_line) against a small
 * parsed configuration, so that "show stat" has rows to print. Each input
 * gets a fresh context; its level comes from the first byte. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include <sluice/cfg.h>
#include <sluice/cli.h>
#include <sluice/global.h>
#include <sluice/str.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_cfg[] =
	"defaults\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n"
	"frontend fe\n  bind 127.0.0.1:8000\n  default_backend be\n"
	"backend be\n  server s1 127.0.0.1:9000 weight 3\n  server s2 127.0.0.1:9001 backup\n"
	"  server s3 127.0.0.1:9002 disabled\n"
	"listen li\n  bind 127.0.0.1:8001\n  server l1 127.0.0.1:9003\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* The process always runs commands with its loop made (show threads,
	 * show tasks read it); parsing never binds: the listeners stay closed. */
	global.loop = ev_default_loop(EVBACKEND_EPOLL | EVFLAG_NOENV);
	if (!global.loop)
		abort();
	if (cfg_parse_text("fuzz.cfg", fuzz_cfg, sizeof(fuzz_cfg) - 1) || cfg_postparse())
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cli_ctx ctx;
	char *line;
	int r;

	memset(&ctx, 0, sizeof(ctx));
	ctx.level = size ? CLI_LVL_USER + data[0] % 3 : CLI_LVL_ADMIN;
	/* Exactly sized, not NUL-terminated. */
	line = malloc(size ? size : 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	r = cli_exec_line(&ctx, line, size);
	if (r != 0 && r != -1)
		abort();
	if (ctx.out.p && strlen(ctx.out.p) != ctx.out.len)
		abort();
	if (ctx.level > CLI_LVL_USER + (size ? data[0] % 3 : 2))
		abort(); /* a connection never raises its level */
	dstr_free(&ctx.out);
	free(line);
	return 0;
}
