/* Listening sockets: `bind` lines, their options, accepting connections,
 * and pausing when maxconn is reached. Also used by the stats socket. */
#ifndef SLUICE_LISTENER_H
#define SLUICE_LISTENER_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <sluice/counters.h>

struct proxy;
struct listener;
struct cfg_ctx;
struct ssl_bind_opts;

#define LI_F_INHERITED  0x0001  /* fd@N: the socket was handed to us */
#define LI_F_V4V6       0x0002
#define LI_F_V6ONLY     0x0004
#define LI_F_DEFER      0x0008  /* TCP_DEFER_ACCEPT */
#define LI_F_REUSEPORT  0x0010
#define LI_F_NOREUSEPORT 0x0020
#define LI_F_PAUSED     0x0040  /* stopped accepting: a limit is reached */
#define LI_F_BOUND      0x0080
#define LI_F_UNIX       0x0100
#define LI_F_ACCEPT_PROXY 0x0200  /* connections start with a PROXY header */
#define LI_F_DISABLED   0x0400  /* "disable frontend": not accepting until enabled */

#define LI_F_CLI        0x0800  /* a stats socket: may use the reserve descriptor */
#define LI_F_POOLED     0x1000  /* taken from the sockets handed over (listener_pool_add) */
#define LI_F_EXPOSE_FD  0x2000  /* stats socket "expose-fd listeners": may hand sockets over */
#define LI_F_PROTO_H2   0x4000  /* "proto h2": clients speak HTTP/2 from the first byte */
#define LI_F_TFO        0x8000  /* "tfo": TCP fast open accepted */
#define LI_F_TRANSPARENT 0x10000 /* "transparent": may bind a foreign address */
#define LI_F_SSL        0x20000 /* bind_conf: "ssl" (maxsslconn, maxsslrate apply) */
#define LI_F_ACCEPT_CIP 0x40000 /* connections start with a NetScaler CIP header */

/* Where a unix socket of ours is during start-up (listener.ux_state). */
#define LI_UX_NONE      0       /* not ours on disk (inherited, published or closed) */
#define LI_UX_TEMP      1       /* bound at <path>.<pid>.tmp */
#define LI_UX_PUBLISHED 2       /* renamed to <path> */
#define LI_UX_BACKUP    3       /* renamed to <path>, what was there kept at <path>.<pid>.bak */

/* Options shared by every listener of one bind line. */
struct bind_conf {
	int      backlog;
	int      maxconn;
	int      flags;        /* LI_F_* */
	char    *name;
	int      id;
	mode_t   ux_mode;      /* unix sockets */
	int      ux_uid, ux_gid;
	int      level;        /* stats socket access level */
	int      severity;     /* stats socket "severity-output": CLI_SEV_* of its sessions */
	char    *conf_file;
	int      conf_line;
	struct ssl_bind_opts *ssl;  /* TLS options (ssl_cfg.h), NULL: none given */
	int      mss;          /* "mss": TCP_MAXSEG of accepted connections, 0: kernel's */
	int      tcp_ut;       /* "tcp-ut": TCP_USER_TIMEOUT (ms), 0: kernel's */
	char    *iface;        /* "interface": SO_BINDTODEVICE, NULL: any */
	char    *netns;        /* "namespace": the network namespace (netns.h), NULL: own */
	uint32_t ns_cip_magic; /* "accept-netscaler-cip": the CIP header's magic number */
	int      nice;         /* "nice": its connections' nice (stream_set_nice()) */
};

/* Called for each accepted connection; owns <fd> from then on. */
typedef void (*listener_accept_fn)(struct listener *li, int fd,
                                   struct sockaddr_storage *addr, socklen_t alen);

struct listener {
	struct listener        *next;        /* in its proxy (or the CLI list) */
	struct listener        *wait_next;   /* in the paused list */
	struct proxy           *px;          /* NULL for stats sockets */
	struct bind_conf       *bc;
	char                   *addr_str;    /* as written */
	struct sockaddr_storage addr;
	socklen_t               addrlen;
	int                     fd;
	ev_io                   io;
	int                     flags;       /* LI_F_* */
	int                     nbconn;
	int                     id;
	ino_t                   ux_ino;      /* inode of the unix socket we created */
	/* Start-up of a unix socket, bound under a temporary name until every
	 * other step succeeded (listener_unix_publish()): */
	struct listener        *ux_next;     /* in the list of sockets being published */
	int                     ux_dir;      /* its directory (survives chroot), or -1 */
	int                     ux_state;    /* LI_UX_* */
	listener_accept_fn      accept;
	struct counters         counters;
};

/* Parses a bind-like line: address list and options, appending listeners
 * to <*list>. <cli> selects stats-socket rules (level allowed, accept
 * function). Returns 0 or -1 after cfg_alert(). */
int listener_parse_bind(struct cfg_ctx *ctx, struct listener **list, struct proxy *px,
                        int argc, char **argv, int cli);

/* Binds (or adopts) every listener of <list>. Returns 0 or -1 (alerts are
 * printed naming the address). */
int listener_bind_all(struct listener *list);

/* A start must not take a unix socket path from the process it replaces
 * until it knows it will run: listener_bind_all() binds unix sockets under
 * <path>.<pid>.tmp. listener_unix_publish() renames every one over its path
 * (atomically: a client always finds a socket there), keeping what the path
 * held as <path>.<pid>.bak. Returns 0, or -1 after an alert, the paths then
 * being as before. Called as the last step that needs the privileges the
 * configuration drops. */
int listener_unix_publish(void);

/* The start failed after listener_unix_publish(): gives every path back
 * what it held before (the old process' socket, or nothing). Works after a
 * chroot; after setuid only where the new user may write. */
void listener_unix_unpublish(void);

/* The start succeeded: removes the backups, forgets the directories. */
void listener_unix_settle(void);

/* Starts watching all bound listeners of <list> with <fn>. */
void listener_start_all(struct listener *list, listener_accept_fn fn);

/* Closes the listeners of <list>; unix socket files are removed unless they
 * were inherited. */
void listener_close_all(struct listener *list);

/* Frees the (closed) listeners of <*list> and their bind lines' options
 * (the release hook included); *<list> becomes NULL. */
void listener_free_all(struct listener **list);

/* ---- sockets handed over by the process being replaced ----
 * A new worker (master-worker reload) or a new process started with -x gets
 * the listening sockets of the one it replaces, each with its key. A bind
 * line whose address has the key of a handed-over socket takes it instead of
 * binding a new one, so that no connection waiting in its queue is lost. */

/* The key of <li>'s address: "tcp@<ip>:<port>" ("[ip6]:port", followed by
 * "/v6only" or "/v4v6" when the bind line says so: fixed at bind time), or
 * "unix@<path>" as configured. Returns <out>, "" for an fd@ listener. */
const char *listener_key(const struct listener *li, char *out, size_t size);

/* Adds <fd> (owned from now on, closed if no bind line takes it) under
 * <key>. Returns 0, or -1 (fd closed) when out of memory for it. */
int listener_pool_add(int fd, const char *key);

/* Closes the handed-over sockets no bind line took (call after binding). */
void listener_pool_close(void);

/* Unix socket paths stay when their listeners close: the socket belongs to
 * the master and outlives this worker (master-worker mode). */
void listener_keep_unix_paths(void);

/* Called when a connection accepted on <li> ends: frees limits and resumes
 * paused listeners. */
void listener_release(struct listener *li);

/* "disable frontend" / "enable frontend": stop or resume accepting on every
 * bound listener of <list> (sockets stay bound). Return how many changed. */
int listener_disable_all(struct listener *list);
int listener_enable_all(struct listener *list);

/* Resumes the listeners that a limit paused, if the limits now allow (after
 * a maxconn change). */
void listener_recheck_limits(void);

/* Bind option keyword: a row that carries its own value. With <parse>,
 * argv[0] is the keyword; it returns words used or -1 with <err>
 * allocated. Without, a flag row (<set> or <clr> non-zero: the option
 * takes no argument and changes bind_conf.flags) or an integer option
 * stored at <off> in struct bind_conf, bounded by <min>/<max>. */
struct bind_kw {
	const char *name;
	/* <kw> is this row, so that rows sharing a parser find their value in
	 * kw->priv instead of re-reading the option's name. */
	int (*parse)(struct bind_conf *bc, const struct bind_kw *kw, int argc, char **argv,
	             char **err);
	int         cli_only;    /* only on stats sockets */
	size_t      off;
	long        min, max;
	int         set, clr;    /* LI_F_* a flag row sets and clears */
	const void *priv;        /* the owning module's description of the option */
};

void bind_register_keywords(struct bind_kw *kws, size_t n);

/* Calls <fn> on every registered bind option row (stats-socket-only ones
 * included: see kw->cli_only). For listings and the documentation test. */
void bind_kw_foreach(void (*fn)(const struct bind_kw *kw, void *arg), void *arg);

/* Registers <fn>, which frees what the module above attached to a bind
 * line (bc->ssl, the TLS options) when the listener layer frees a bind_conf
 * that nothing references; proxies free theirs themselves. One hook. */
void bind_register_release(void (*fn)(struct bind_conf *bc));

#endif
