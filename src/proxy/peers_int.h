/* Private to the peers files (peers_cfg.c, peers.c, peers_cli.c): sections,
 * peers, the tables they replicate and the sessions of the protocol. */
#ifndef SLUICE_PEERS_INT_H
#define SLUICE_PEERS_INT_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sluice/conn.h>
#include <sluice/log.h>
#include <sluice/peers_msg.h>
#include <sluice/stktable.h>
#include <sluice/str.h>

struct listener;
struct peers_sec;
struct peer_sess;

#define PEERS_HELLO_TIMEOUT 5.0    /* s: connect and handshake */
#define PEERS_HEARTBEAT     3.0    /* s without sending: a heartbeat */
#define PEERS_DEAD          5.0    /* s without receiving: the peer is gone */
#define PEERS_RESYNC_WAIT   5.0    /* s to wait for a teacher (old process, then a peer) */
#define PEERS_RETRY_MAX     5.0    /* s: the longest backoff between connection attempts */
#define PEERS_OUT_HWM       65536  /* bytes queued before messages wait for the socket */
#define PEERS_OUT_MAX       (4 * PEERS_OUT_HWM)  /* bytes unsent: stop reading the peer */
#define PEERS_RT_MAX        256    /* distinct table ids a peer may define on a session */

/* One table a section replicates. */
struct peers_table {
	struct stktable *t;
	char            *wire;       /* its name on the wire: "/<t>" for a section's own */
	struct peer_tdef def;        /* what we announce (name = wire) */
};

/* Where a peer's last session stands (show peers: last_status). */
enum peer_ls {
	PEER_LS_NONE, PEER_LS_CONN, PEER_LS_HSHK, PEER_LS_ESTA, PEER_LS_RETR,
	PEER_LS_PROT, PEER_LS_VERS, PEER_LS_NAME, PEER_LS_UKNP,
};

/* A "peer" (or "server") line: this process (local) or another. */
struct peer {
	char            *name;
	int              local;
	char            *addr_str;   /* NULL: the local peer of a "server" line (its "bind") */
	struct sockaddr_storage addr;
	socklen_t        addrlen;
	char            *file;
	int              line;
	struct peers_sec *sec;
	struct peer_sess *sess;      /* the session with it, established or starting */
	ev_timer         retry;      /* the next connection attempt */
	unsigned         fails;      /* attempts failed in a row (the backoff) */
	uint32_t        *acked;      /* per table: the last of our updates it acknowledged */
	int              partial;    /* it answered a resync request with "partial" */
	/* show peers */
	enum peer_ls     last_status;
	ev_tstamp        last_hshk;  /* 0: never */
	unsigned         new_conn, proto_err, coll, tx_hbt, rx_hbt, no_hbt;
	struct peer     *next;
};

/* Learning the tables at start (peers.txt "initial full resync"). */
enum peers_rs {
	PEERS_RS_LOCAL,    /* waiting for the process being replaced */
	PEERS_RS_REMOTE,   /* asking the remote peers, one after the other */
	PEERS_RS_DONE,     /* up to date */
};

/* A "peers" section. */
struct peers_sec {
	char            *name;
	char            *file;
	int              line;
	int              disabled;
	struct peer     *peers;      /* in configuration order */
	struct peer     *local;      /* NULL: this process is none of them (unused section) */
	int              has_bind;   /* "bind" lines (then "server" lines, no "peer") */
	int              has_peer_line;
	char           **def_bind;   /* "default-bind" words */
	int              ndef_bind;
	struct listener *listeners;  /* the local peer's */
	struct log_list  loggers;
	struct peers_table *tables;  /* [ntables] */
	int              ntables;
	struct peer_sess *sessions;  /* all, identified or not */
	enum peers_rs    resync;
	ev_timer         resync_timer;
	struct peer_sess *learn;     /* the session asked for a full resync */
	struct peer_sess *handover;  /* stopping: the session to the new process */
	ev_timer         handover_retry;
	ev_tstamp        stop_time;
	int              handover_over;  /* the hand-over ended (done, refused, timed out) */
	struct peers_sec *next;
};

enum ps_state {
	PS_CONNECTING,    /* TCP connect in progress */
	PS_HELLO_SENT,    /* waiting for the status line */
	PS_WAIT_HELLO,    /* accepted: waiting for the hello */
	PS_EST,           /* messages flow */
	PS_CLOSING,       /* sending what is left (a status, an error), then close */
};

/* One table on one session. */
struct ps_table {
	struct stk_upd cursor;       /* what was pushed: the entries after it are to send */
	uint32_t       last_pushed;  /* id of the last update sent (the next may be "incremental") */
	int            teaching;     /* a full resync runs: remote entries are sent too */
};

/* A table as the peer defined it. */
struct ps_rtable {
	uint64_t            id;      /* the peer's id */
	struct peers_table *pt;      /* NULL: unknown here, or refused */
	struct peer_tdef    def;     /* its definition (name cleared) */
	uint32_t            last_get;     /* the last of its updates received */
	uint32_t            last_acked;   /* the last we acknowledged */
	int                 got;          /* something came since the last acknowledgement */
};

/* A TCP session of the protocol. */
struct peer_sess {
	struct peers_sec *sec;
	struct peer      *peer;      /* NULL until the hello named it (accepted sessions) */
	struct listener  *li;        /* accepted on, NULL: we connected */
	struct conn       c;
	ev_timer          timer;     /* handshake, heartbeats, silence */
	enum ps_state     st;
	int               handover;  /* we are the old process handing the tables over */
	int               minor;     /* the peer's protocol version 2.<minor> */
	struct sockaddr_storage from;  /* the other end */
	unsigned char    *in;
	size_t            in_len;
	struct dstr       out;
	size_t            out_off;
	ev_tstamp         started, last_rx, last_tx;
	struct ps_table  *tbl;       /* [sec->ntables] */
	struct ps_rtable *rt;        /* the tables the peer defined */
	size_t            nrt;
	struct ps_rtable *cur;       /* the one its updates are for */
	int               cur_out;   /* index of the table our updates are for, -1: none */
	int               teach;     /* 1: a full resync is being sent, 2: sent, to be confirmed */
	int               confirmed; /* a teaching was confirmed */
	int               learning;  /* we asked it for a full resync */
	struct peer_sess *next;
};

/* ---- peers_cfg.c ---- */

/* All sections, in configuration order. */
extern struct peers_sec *peers_sections;

/* ---- peers.c ---- */

/* t->on_update of a replicated table: its sessions push at the end of the
 * loop iteration. */
void peers_table_updated(struct stktable *t);

/* What a peer status code means, for the logs. */
const char *peers_status_str(int code);

/* show peers' name of a last status. */
const char *peers_ls_str(enum peer_ls ls);

#endif
