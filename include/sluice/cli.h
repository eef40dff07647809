/* The runtime API on `stats socket`: the server that reads lines, splits
 * them into commands and runs the rows modules registered (cli_cmd.h). */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stddef.h>
#include <sys/socket.h>

#include <sluice/cli_cmd.h>

struct listener;

#define CLI_MAX_ARGS 64

/* Runs one input line (commands separated by ';') in <ctx>. Output is
 * appended to ctx->out. Returns 0 or -1 if the line was rejected whole. */
int cli_exec_line(struct cli_ctx *ctx, const char *line, size_t len);

/* Listener callback for stats sockets. */
void cli_accept(struct listener *li, int fd, struct sockaddr_storage *addr, socklen_t alen);

/* Serves the runtime API on the connected socket <fd> (owned from now on)
 * at <level> (CLI_LVL_*), as if accepted on a stats socket: how the master
 * reaches a worker's CLI. Returns 0, or -1 (fd closed). */
int cli_adopt(int fd, int level);

/* Calls <fn> for every runtime-API connection: its socket, the events
 * watched (EV_READ|EV_WRITE), its level, whether its idle timer runs, and
 * the context (show fd, show tasks). */
void cli_client_foreach(void (*fn)(int fd, int events, int timer_on,
                                   const struct cli_ctx *ctx, void *arg), void *arg);

/* Closes every CLI client connection (exit). */
void cli_close_all(void);

#endif
