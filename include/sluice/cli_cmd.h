/* The registry of runtime-API commands (rows only): the row and context types
 * and cli_register(). A module registers its commands with this header alone;
 * the stats socket server that reads and dispatches lines is admin/cli.c (cli.h). */
#ifndef SLUICE_CLI_CMD_H
#define SLUICE_CLI_CMD_H

#include <stddef.h>

#include <sluice/str.h>

/* Access levels, as in HAProxy's "level" option. */
#define CLI_LVL_USER     1
#define CLI_LVL_OPERATOR 2
#define CLI_LVL_ADMIN    3

struct cli_ctx {
	struct dstr out;        /* response text being built */
	int         level;      /* CLI_LVL_* of this connection */
	int         interactive;/* "prompt" mode */
	int         quit;       /* "quit" was asked */
	unsigned    timeout_ms; /* "set timeout cli": new idle timeout, 0 = none asked */
	const char *payload;    /* "<cmd> <<" then lines up to an empty one: the lines
	                           (each ending in '\n'), NULL when the command has none */
	size_t      payload_len;
	/* A stats socket with "expose-fd listeners" (zero otherwise, as in a
	 * context a test or a reload builds): <fd> is then the client's
	 * socket, on which a command may pass descriptors (sys/sockxfer.c). */
	int         expose_fd;
	int         fd;
	int         failed;     /* commands run in this context that failed (refused,
	                           unknown, or their row returned -1) */
	int         severity;   /* "set severity-output": CLI_SEV_* prefix of error answers */
	int         expert;     /* "expert-mode on" in this session */
	int         experimental; /* "experimental-mode on" in this session */
	/* A command that answers over time (httpclient, show events -w) sets
	 * <waiting>, <abort> and <wait_data> and returns 0: the connection then
	 * runs no other command and stays open. Its answer goes to <out>
	 * (without the final empty line), followed by cli_ctx_wake() to send
	 * it; cli_ctx_done() ends it. <abort> is called instead when the
	 * connection goes away first. <wake> is the server's (NULL in a context
	 * that is not a connection: such commands refuse to run there). */
	int         waiting;
	int         stop_on_input; /* waiting ends when the client sends anything */
	void      (*abort)(struct cli_ctx *ctx);
	void       *wait_data;
	void      (*wake)(struct cli_ctx *ctx);
};

/* Sends what a command answering over time appended to ctx->out. May run
 * the connection's next commands, or free it once it is done: <ctx> is
 * not to be used after cli_ctx_done(). */
static inline void cli_ctx_wake(struct cli_ctx *ctx)
{
	if (ctx->wake)
		ctx->wake(ctx);
}

static inline void cli_ctx_done(struct cli_ctx *ctx)
{
	ctx->waiting = 0;
	ctx->stop_on_input = 0;
	ctx->abort = NULL;
	ctx->wait_data = NULL;
	dstr_add(&ctx->out, "\n", 1);
	cli_ctx_wake(ctx);
}

/* Prefixes of failed commands' answers ("set severity-output"). */
#define CLI_SEV_NONE   0
#define CLI_SEV_NUMBER 1   /* "[3]: " */
#define CLI_SEV_STRING 2   /* "[err]: " */

struct cli_kw {
	const char *words[5];   /* command words, NULL-terminated, e.g. {"show","stat"} */
	const char *usage;      /* shown by help: "show stat [<iid> <type> <sid>]" */
	const char *help;       /* one line */
	int         level;      /* minimum CLI_LVL_* */
	/* Runs the command; <argv> holds every word of it (argv[0] is the first
	 * command word). Writes its output to ctx->out. Returns 0, or -1 after
	 * writing an error message (nothing was changed). */
	int       (*fn)(struct cli_ctx *ctx, int argc, char **argv);
};

/* Registers <n> command rows; tables must outlive the process' use. */
void cli_register(struct cli_kw *kws, size_t n);

/* Returns the row whose words are the longest prefix of <argv> (<argc> words),
 * or NULL when none matches; *nwords gets the number of words matched. */
const struct cli_kw *cli_cmd_find(int argc, char **argv, int *nwords);

/* Calls <fn> on every registered row, in registration order. */
void cli_cmd_foreach(void (*fn)(const struct cli_kw *kw, void *arg), void *arg);

/* State a reload carries: what the runtime API changed (server weights and
 * states, stick-table entries, map and ACL edits) moves from the worker being
 * replaced to the new one as runtime-API command lines. Each row's <dump>
 * appends lines that, run one by one at admin level (cli_exec_line()) in a
 * process whose configuration names the same objects, restore its module's
 * state; a line naming an object the new configuration lacks fails alone.
 * Rows are dumped in registration order. `show reload-state` prints them. */
struct cli_state_kw {
	const char *name;                  /* "servers", "tables", "maps" */
	void      (*dump)(struct dstr *out);
};

void cli_state_register(struct cli_state_kw *kws, size_t n);

/* Appends every row's lines to <out>, each section preceded by a comment
 * line "# <name>". */
void cli_state_dump_all(struct dstr *out);

#endif
