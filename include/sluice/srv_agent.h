/* Agent checks ("agent-check", "agent-port", "agent-addr", "agent-inter",
 * "agent-send"): a server's agent tells its weight and state over a TCP
 * line, as HAProxy's agent checks do. State lives in server.agent. */
#ifndef SLUICE_SRV_AGENT_H
#define SLUICE_SRV_AGENT_H

#include <stddef.h>

struct server;

/* Applies agent reply <line> (<len> bytes, up to a LF) to <srv>: words
 * separated by spaces, tabs or commas: "<n>%" (weight, a share of the
 * configured one), "ready", "drain", "maint" (administrative state),
 * "up", "down", "fail", "stopped" (operational state), and "#<reason>"
 * (the rest of the line). Unknown words are ignored. Returns the number of
 * words applied (0: an invalid answer). */
int agent_apply(struct server *srv, const char *line, size_t len);

/* Starts / stops the agents of every server with agent-check (start-up,
 * exit): called with the health checks. */
void agent_start_all(void);

/* "set server <srv> agent up|down": the agent's operational word for
 * <srv> as if it had replied it (<up> 1 or 0). */
void agent_set_oper_cli(struct server *srv, int up);
void agent_stop_all(void);

#endif
