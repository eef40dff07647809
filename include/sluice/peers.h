/* Stick-table replication between processes: HAProxy's "peers" sections
 * (peers_cfg.c), the sessions of its peers protocol 2.1 with the other
 * peers and, across a reload, with the process being replaced (peers.c),
 * and "show peers" (peers_cli.c). The wire format is peers_msg.h. */
#ifndef SLUICE_PEERS_H
#define SLUICE_PEERS_H

/* -L <name>: the local peer name, before the configuration is read (NULL:
 * forget it, for tests). */
void peers_set_cmdline_name(const char *name);

/* Whether the local peer name can no longer change: -L was given or a
 * peers section was read ("localpeer" then comes too late). */
int peers_local_name_fixed(void);

/* The local peer name: -L, else "localpeer", else the host name. */
const char *peers_local_name(void);

/* Binds the listening sockets of the local peers (before privileges are
 * dropped; SO_REUSEPORT, so that a new process binds beside the one it
 * replaces). Returns 0, or -1 after an alert. */
int peers_bind_all(void);

/* Opens the log targets of the sections' "log" lines. Returns 0, or -1
 * after an alert. */
int peers_open_logs(void);

/* The loop runs: accepts peers, connects to the remote ones and learns the
 * tables, first from the process being replaced when <reload> (it connects
 * to the local peer within 5 s), then from a remote peer. */
void peers_start(int reload);

/* Soft stop: the local peers stop listening, the sessions with remote peers
 * close, and the tables are handed over to the new process through the
 * local peer's address (5 s to connect at most), the updates made until the
 * exit following. */
void peers_stop(void);

/* Whether the hand-over of peers_stop() still has something to send. When
 * it has, <done> is called once it is over (sent, refused or timed out). */
int peers_busy(void (*done)(void));

/* Closes every session and listener (exit). */
void peers_close_all(void);

/* Frees the sections, their tables included (after peers_close_all()). */
void peers_free_all(void);

#endif
