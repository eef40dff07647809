/* The runtime API on `stats socket`: line-based commands, each a table row
 * registered by the module that owns it, with its help text and level. */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stddef.h>
#include <sys/socket.h>

#include <sluice/str.h>

struct listener;

/* Access levels, as in HAProxy's "level" option. */
#define CLI_LVL_USER     1
#define CLI_LVL_OPERATOR 2
#define CLI_LVL_ADMIN    3

#define CLI_MAX_ARGS 64

struct cli_ctx {
	struct dstr out;        /* response text being built */
	int         level;      /* CLI_LVL_* of this connection */
	int         interactive;/* "prompt" mode */
	int         quit;       /* "quit" was asked */
	unsigned    timeout_ms; /* "set timeout cli": new idle timeout, 0 = none asked */
	const char *payload;    /* "<cmd> <<" then lines up to an empty one: the lines
	                           (each ending in '\n'), NULL when the command has none */
	size_t      payload_len;
};

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

/* Runs one input line (commands separated by ';') in <ctx>. Output is
 * appended to ctx->out. Returns 0 or -1 if the line was rejected whole. */
int cli_exec_line(struct cli_ctx *ctx, const char *line, size_t len);

/* Listener callback for stats sockets. */
void cli_accept(struct listener *li, int fd, struct sockaddr_storage *addr, socklen_t alen);

/* Closes every CLI client connection (exit). */
void cli_close_all(void);

#endif
