/* `bind` lines, listening sockets, accept loop and maxconn pausing
 * (listener.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/netns.h>
#include <sluice/proxy.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/units.h>
#include <sluice/ticks.h>

#define LI_MAX_ACCEPT   64     /* connections accepted per wake-up */
#define LI_MAX_TOTAL    100000 /* listeners a configuration may declare */
#define LI_CLI_MAXCONN  10     /* default for stats sockets, like HAProxy */
/* longest unix socket path: room is left for ".<pid>.tmp" with the largest
 * pid Linux gives (4194304), so that a path valid today is valid at reload */
#define LI_UX_PATH_MAX  ((int)sizeof(((struct sockaddr_un *)0)->sun_path) - 1 - 12)

struct bind_kw_table {
	struct bind_kw       *kws;
	size_t                n;
	struct bind_kw_table *next;
};

static struct {
	struct bind_kw_table *kws;
	struct listener      *ux;         /* unix sockets not published or settled yet */
	pid_t                 ux_pid;     /* in their temporary names */
	int                   declared;   /* listeners created by the configuration */
	struct listener      *paused;     /* listeners waiting for a free slot */
	ev_timer              retry;      /* resumes when the connection rate allows */
	ev_timer              res_retry;  /* resumes after EMFILE/ENFILE/ENOMEM */
	int                   retry_init;
	int                   spare;      /* the reserve descriptor (/dev/null), or -1 */
	int                   spare_wanted; /* some stats socket may need it */
	uint64_t              res_logged; /* when a shortage was last reported (ms) */
	unsigned              res_hits;   /* shortages not reported since then */
	void (*bind_release)(struct bind_conf *bc);   /* bind_register_release() */
	struct li_pooled     *pool;       /* sockets handed over, not taken yet */
	int                   keep_paths; /* listener_keep_unix_paths() */
} lis = { .spare = -1 };

struct li_pooled {
	struct li_pooled *next;
	int               fd;
	char              key[];
};

void bind_register_keywords(struct bind_kw *kws, size_t n)
{
	struct bind_kw_table *t = xcalloc(1, sizeof(*t));

	t->kws = kws;
	t->n = n;
	t->next = lis.kws;
	lis.kws = t;
}

void bind_kw_foreach(void (*fn)(const struct bind_kw *kw, void *arg), void *arg)
{
	for (const struct bind_kw_table *t = lis.kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			fn(&t->kws[i], arg);
}

void bind_register_release(void (*fn)(struct bind_conf *bc))
{
	lis.bind_release = fn;
}

static const struct bind_kw *bind_find_kw(const char *name, int cli, const char **suggest)
{
	struct cfg_suggest sg;

	cfg_suggest_init(&sg, name);
	for (struct bind_kw_table *t = lis.kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++) {
			if (t->kws[i].cli_only && !cli)
				continue;
			if (strcmp(t->kws[i].name, name) == 0)
				return &t->kws[i];
			cfg_suggest_add(&sg, t->kws[i].name);
		}
	*suggest = cfg_suggest_pick(&sg);
	return NULL;
}

static struct listener *listener_new(struct bind_conf *bc, struct proxy *px, const char *str)
{
	struct listener *li = xcalloc(1, sizeof(*li));

	li->bc = bc;
	li->px = px;
	li->fd = -1;
	li->ux_dir = -1;
	li->addr_str = xstrdup(str);
	li->flags = bc->flags;
	return li;
}

/* unix-bind: what every unix socket of a bind line starts from. */
static struct {
	char            *prefix;   /* put before every unix socket path */
	struct bind_conf bc;       /* ux_mode, ux_uid, ux_gid */
} ux_bind = { .bc = { .ux_uid = -1, .ux_gid = -1 } };

/* Puts unix-bind's prefix before the path of <sun>. Returns 0 or -1
 * (reported: the result is too long). */
static int listener_ux_prefix(struct cfg_ctx *ctx, struct sockaddr_un *sun, const char *item)
{
	char path[sizeof(sun->sun_path) * 2];

	snprintf(path, sizeof(path), "%s%s", ux_bind.prefix, sun->sun_path);
	if (strlen(path) >= sizeof(sun->sun_path)) {
		cfg_alert(ctx, "'%s': the path is too long with the unix-bind prefix '%s'", item,
			  ux_bind.prefix);
		return -1;
	}
	memcpy(sun->sun_path, path, strlen(path) + 1);
	return 0;
}

/* Expands one comma-separated address item into listeners. */
static int listener_add_addr(struct cfg_ctx *ctx, struct bind_conf *bc, struct proxy *px,
                             const char *item, struct listener ***tail)
{
	struct addr_spec as;
	char *err = NULL;

	if (addr_parse(item, &as, ADDR_F_UNIX_OK | ADDR_F_FD_OK | ADDR_F_RANGE_OK | ADDR_F_ENV,
		       &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		return -1;
	}
	if (as.kind == ADDR_K_UNIX && ux_bind.prefix &&
	    listener_ux_prefix(ctx, (struct sockaddr_un *)&as.ss, item) == -1)
		return -1;
	if (as.kind == ADDR_K_UNIX &&
	    strlen(((struct sockaddr_un *)&as.ss)->sun_path) > LI_UX_PATH_MAX) {
		cfg_alert(ctx, "'%s': a unix socket path may have at most %d characters here "
			  "(it is first bound under a temporary name, '<path>.<pid>.tmp')",
			  item, LI_UX_PATH_MAX);
		return -1;
	}
	if (as.kind == ADDR_K_INET && as.port_lo == 0) {
		cfg_alert(ctx, "'%s': missing port", item);
		return -1;
	}
	if (lis.declared + (as.port_hi - as.port_lo + 1) > LI_MAX_TOTAL) {
		cfg_alert(ctx, "'%s': more than %d listening sockets in the configuration",
			  item, LI_MAX_TOTAL);
		return -1;
	}
	lis.declared += as.port_hi - as.port_lo + 1;
	for (unsigned port = as.port_lo; ; port++) {
		struct listener *li = listener_new(bc, px, item);

		if (as.kind == ADDR_K_FD) {
			li->fd = as.fd;
			li->flags |= LI_F_INHERITED;
		} else {
			li->addr = as.ss;
			li->addrlen = as.len;
			if (as.kind == ADDR_K_UNIX)
				li->flags |= LI_F_UNIX;
			else
				addr_set_port(&li->addr, (uint16_t)port);
		}
		**tail = li;
		*tail = &li->next;
		if (as.kind != ADDR_K_INET || port >= as.port_hi)
			break;
	}
	return 0;
}

/* Frees <bc> and what the module above attached to it. */
static void bind_conf_free(struct bind_conf *bc)
{
	if (lis.bind_release)
		lis.bind_release(bc);
	free(bc->conf_file);
	free(bc->name);
	free(bc->iface);
	free(bc->netns);
	free(bc);
}

int listener_parse_bind(struct cfg_ctx *ctx, struct listener **list, struct proxy *px,
                        int argc, char **argv, int cli)
{
	struct bind_conf *bc;
	struct listener **tail = list, *first;
	char *addrs, *item, *save = NULL;
	int i, ret = 0;

	if (argc < 1) {
		cfg_alert(ctx, "expects an address ('ip:port', 'fd@N', 'unix@/path', ...) and options");
		return -1;
	}
	while (*tail)
		tail = &(*tail)->next;
	bc = xcalloc(1, sizeof(*bc));
	bc->ux_mode = ux_bind.bc.ux_mode;
	bc->ux_uid = ux_bind.bc.ux_uid;
	bc->ux_gid = ux_bind.bc.ux_gid;
	bc->conf_file = xstrdup(ctx->file);
	bc->conf_line = ctx->line;
	bc->level = 2; /* stats sockets default to "operator", as in HAProxy */
	if (cli) {
		/* "stats maxconn" read before this line, as in HAProxy */
		bc->maxconn = global.stats_maxconn ? global.stats_maxconn : LI_CLI_MAXCONN;
		bc->flags |= LI_F_CLI;
	}
	for (i = 1; i < argc; ) {
		const char *sug;
		const struct bind_kw *kw = bind_find_kw(argv[i], cli, &sug);
		char *err = NULL;
		int used;

		if (!kw) {
			cfg_alert(ctx, "unknown option '%s'%s%s%s", argv[i],
				  sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
			/* Its arguments cannot be told from options: stop here. */
			ret = -1;
			break;
		}
		if (kw->parse) {
			used = kw->parse(bc, kw, argc - i, argv + i, &err);
		} else if (kw->set || kw->clr) {
			bc->flags = (bc->flags & ~kw->clr) | kw->set;
			used = 1;
		} else {
			used = cfg_opt_int_at(bc, kw->off, kw->min, kw->max, argc - i, argv + i,
					      &err);
		}
		if (used < 0) {
			cfg_alert(ctx, "option '%s': %s", argv[i], err ? err : "invalid value");
			free(err);
			ret = -1;
			break;
		}
		i += used;
	}
	first = NULL;
	addrs = xstrdup(argv[0]);
	for (item = strtok_r(addrs, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		struct listener **before = tail;

		if (listener_add_addr(ctx, bc, px, item, &tail) == -1)
			ret = -1;
		if (!first && *before)
			first = *before;
	}
	free(addrs);
	if (!first) {
		/* Nothing references the bind_conf: free it here. */
		bind_conf_free(bc);
		return -1;
	}
	return ret;
}

void listener_free_all(struct listener **list)
{
	struct listener *li, *lnext;

	for (li = *list; li; li = lnext) {
		lnext = li->next;
		/* bind_confs are shared by listeners of one line: free on the last. */
		if (!lnext || lnext->bc != li->bc)
			bind_conf_free(li->bc);
		free(li->addr_str);
		free(li);
	}
	*list = NULL;
}

static int listener_fail(struct listener *li, const char *what)
{
	log_alert("%s:%d: cannot %s '%s': %s", li->bc->conf_file, li->bc->conf_line,
		  what, li->addr_str, strerror(errno));
	if (li->fd >= 0 && !(li->flags & LI_F_INHERITED))
		close(li->fd);
	li->fd = -1;
	return -1;
}

/* bind's backlog, else the proxy's, else its maxconn (128 for the CLI). */
static int listener_backlog(const struct listener *li)
{
	if (li->bc->backlog)
		return li->bc->backlog;
	if (li->px && li->px->backlog)
		return li->px->backlog;
	return li->px ? proxy_fe_maxconn(li->px) : 128;
}

static int listener_adopt(struct listener *li)
{
	int type = 0, acc = 0;
	socklen_t l = sizeof(type);

	if (getsockopt(li->fd, SOL_SOCKET, SO_TYPE, &type, &l) == -1 || type != SOCK_STREAM) {
		errno = errno ? errno : ENOTSOCK;
		return listener_fail(li, "use inherited socket (not a stream socket)");
	}
	if (fcntl(li->fd, F_SETFL, O_NONBLOCK) == -1 || fcntl(li->fd, F_SETFD, FD_CLOEXEC) == -1)
		return listener_fail(li, "configure inherited socket");
	l = sizeof(acc);
	if (getsockopt(li->fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) == 0 && !acc &&
	    listen(li->fd, listener_backlog(li)) == -1)
		return listener_fail(li, "listen on inherited socket");
	li->addrlen = sizeof(li->addr);
	if (getsockname(li->fd, (struct sockaddr *)&li->addr, &li->addrlen) == -1)
		return listener_fail(li, "query inherited socket");
	if (li->addr.ss_family == AF_UNIX)
		li->flags |= LI_F_UNIX;
	return 0;
}

/* ---- unix sockets: bound aside, published once the start cannot fail ---- */

static const char *ux_path(const struct listener *li)
{
	return ((const struct sockaddr_un *)&li->addr)->sun_path;
}

/* The last component of the path: what the *at() calls take with ux_dir. */
static const char *ux_base(const struct listener *li)
{
	const char *slash = strrchr(ux_path(li), '/');

	return slash ? slash + 1 : ux_path(li);
}

/* "<base>.<pid>.<ext>" into <out> (it fits: the full temporary path did). */
static const char *ux_side(const struct listener *li, const char *ext, char *out, size_t size)
{
	snprintf(out, size, "%s.%d.%s", ux_base(li), (int)lis.ux_pid, ext);
	return out;
}

/* Whether <name> in <li>'s directory is a socket, and ours when <ours>. */
static int ux_is_socket(const struct listener *li, const char *name, int ours)
{
	struct stat st;

	if (fstatat(li->ux_dir, name, &st, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISSOCK(st.st_mode))
		return 0;
	return !ours || st.st_ino == li->ux_ino;
}

/* Undoes what the start did on disk for <li>: the temporary socket goes, a
 * published one gives the path back to what it held (the backup, or
 * nothing). */
static void ux_restore(struct listener *li)
{
	char side[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];

	switch (li->ux_state) {
	case LI_UX_TEMP:
		if (ux_is_socket(li, ux_side(li, "tmp", side, sizeof(side)), 1))
			unlinkat(li->ux_dir, side, 0);
		break;
	case LI_UX_BACKUP:
		if (renameat(li->ux_dir, ux_side(li, "bak", side, sizeof(side)),
			     li->ux_dir, ux_base(li)) == -1)
			log_alert("cannot give '%s' back to the socket it had (kept as '%s'): %s",
				  ux_path(li), side, strerror(errno));
		break;
	case LI_UX_PUBLISHED:
		if (ux_is_socket(li, ux_base(li), 1))
			unlinkat(li->ux_dir, ux_base(li), 0);
		break;
	}
	li->ux_state = LI_UX_NONE;
}

/* Takes <li> off the list of sockets being published. */
static void ux_forget(struct listener *li)
{
	struct listener **pp;

	if (li->ux_dir >= 0)
		close(li->ux_dir);
	li->ux_dir = -1;
	for (pp = &lis.ux; *pp; pp = &(*pp)->ux_next)
		if (*pp == li) {
			*pp = li->ux_next;
			break;
		}
	li->ux_next = NULL;
}

/* Binds <li> at "<path>.<pid>.tmp" in the directory of <path>: until
 * listener_unix_publish(), <path> (maybe the stats socket of the process
 * being replaced) is not touched, so a start that fails leaves it alone. */
static int listener_bind_unix(struct listener *li)
{
	struct sockaddr_un tmp = { .sun_family = AF_UNIX };
	const char *path = ux_path(li), *base = ux_base(li);
	char dir[sizeof(tmp.sun_path)];
	struct stat st;
	int n;

	for (struct listener *o = lis.ux; o; o = o->ux_next)
		if (strcmp(ux_path(o), path) == 0) {
			log_alert("%s:%d: cannot bind unix socket '%s': %s:%d binds the same path",
				  li->bc->conf_file, li->bc->conf_line, li->addr_str,
				  o->bc->conf_file, o->bc->conf_line);
			close(li->fd);
			li->fd = -1;
			return -1;
		}
	/* any other file there is not ours to replace */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		return listener_fail(li, "bind unix socket (a file that is not a socket is in the way)");
	}
	if (!lis.ux_pid)
		lis.ux_pid = getpid();
	n = snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s.%d.tmp", path, (int)lis.ux_pid);
	if (n < 0 || (size_t)n >= sizeof(tmp.sun_path)) {
		/* not for paths the configuration accepted (LI_UX_PATH_MAX) */
		errno = ENAMETOOLONG;
		return listener_fail(li, "bind unix socket under a temporary name");
	}
	if (lstat(tmp.sun_path, &st) == 0) {
		/* left by a start with our pid that died before publishing */
		if (!S_ISSOCK(st.st_mode)) {
			errno = EEXIST;
			return listener_fail(li, "bind unix socket (a file that is not a socket has "
					     "its temporary name)");
		}
		unlink(tmp.sun_path);
	}
	if (base == path)
		strcpy(dir, ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", base - path > 1 ? (int)(base - path - 1) : 1, path);
	li->ux_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (li->ux_dir == -1)
		return listener_fail(li, "open the directory of unix socket");
	if (bind(li->fd, (struct sockaddr *)&tmp, sizeof(tmp)) == -1) {
		close(li->ux_dir);
		li->ux_dir = -1;
		return listener_fail(li, "bind unix socket");
	}
	li->ux_state = LI_UX_TEMP;
	li->ux_next = lis.ux;
	lis.ux = li;
	if (stat(tmp.sun_path, &st) == 0)
		li->ux_ino = st.st_ino;
	if ((li->bc->ux_mode && chmod(tmp.sun_path, li->bc->ux_mode) == -1) ||
	    ((li->bc->ux_uid >= 0 || li->bc->ux_gid >= 0) &&
	     chown(tmp.sun_path, (uid_t)li->bc->ux_uid, (gid_t)li->bc->ux_gid) == -1)) {
		int e = errno;

		ux_restore(li);
		ux_forget(li);
		errno = e;
		return listener_fail(li, li->bc->ux_mode ? "set the mode or owner of unix socket" :
				     "set the owner of unix socket");
	}
	return 0;
}

int listener_unix_publish(void)
{
	char tmp[sizeof(((struct sockaddr_un *)0)->sun_path) + 16], bak[sizeof(tmp)];

	for (struct listener *li = lis.ux; li; li = li->ux_next) {
		int backup = 0;

		if (li->ux_state != LI_UX_TEMP)
			continue;
		ux_side(li, "tmp", tmp, sizeof(tmp));
		ux_side(li, "bak", bak, sizeof(bak));
		if (ux_is_socket(li, bak, 0))
			unlinkat(li->ux_dir, bak, 0);   /* a dead start's */
		/* the socket there (the old process') gets a second name, to be
		 * given back if this start fails from here on */
		if (linkat(li->ux_dir, ux_base(li), li->ux_dir, bak, 0) == 0)
			backup = 1;
		else if (errno != ENOENT)
			log_warning("cannot keep '%s' as '%s' (%s): if this start fails from here on, "
				    "the process using it will lose its path", ux_path(li), bak,
				    strerror(errno));
		if (renameat(li->ux_dir, tmp, li->ux_dir, ux_base(li)) == -1) {
			log_alert("%s:%d: cannot move unix socket '%s' from its temporary name: %s",
				  li->bc->conf_file, li->bc->conf_line, li->addr_str, strerror(errno));
			if (backup)
				unlinkat(li->ux_dir, bak, 0);
			listener_unix_unpublish();
			return -1;
		}
		li->ux_state = backup ? LI_UX_BACKUP : LI_UX_PUBLISHED;
	}
	return 0;
}

void listener_unix_unpublish(void)
{
	for (struct listener *li = lis.ux; li; li = li->ux_next)
		if (li->ux_state == LI_UX_PUBLISHED || li->ux_state == LI_UX_BACKUP)
			ux_restore(li);
}

void listener_unix_settle(void)
{
	char bak[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];

	while (lis.ux) {
		struct listener *li = lis.ux;

		if (li->ux_state == LI_UX_BACKUP && ux_is_socket(li, ux_side(li, "bak", bak,
								      sizeof(bak)), 0))
			unlinkat(li->ux_dir, bak, 0);
		lis.ux = li->ux_next;
		li->ux_next = NULL;
		li->ux_state = LI_UX_NONE;
		close(li->ux_dir);
		li->ux_dir = -1;
	}
}

/* ---- sockets handed over ---- */

const char *listener_key(const struct listener *li, char *out, size_t size)
{
	char a[128];

	if (li->flags & LI_F_INHERITED && !(li->flags & LI_F_POOLED))
		snprintf(out, size, "%s", "");
	else if (li->flags & LI_F_UNIX)
		snprintf(out, size, "unix@%s", ux_path(li));
	else
		snprintf(out, size, "tcp@%s%s%s%s", addr_to_str(&li->addr, a, sizeof(a)),
			 li->addr.ss_family != AF_INET6 ? "" :
			 li->flags & LI_F_V6ONLY ? "/v6only" : li->flags & LI_F_V4V6 ? "/v4v6" : "",
			 li->bc->netns ? "/ns=" : "", li->bc->netns ? li->bc->netns : "");
	return out;
}

int listener_pool_add(int fd, const char *key)
{
	size_t n = strlen(key) + 1;
	struct li_pooled *p = malloc(sizeof(*p) + n);

	if (!p) {
		close(fd);
		return -1;
	}
	p->fd = fd;
	memcpy(p->key, key, n);
	p->next = lis.pool;
	lis.pool = p;
	return 0;
}

void listener_pool_close(void)
{
	while (lis.pool) {
		struct li_pooled *p = lis.pool;

		lis.pool = p->next;
		close(p->fd);
		free(p);
	}
}

void listener_keep_unix_paths(void)
{
	lis.keep_paths = 1;
}

/* Takes the handed-over socket with <li>'s key, if any. Returns 1 if
 * taken, 0 if none, -1 on error (alert printed). */
static int listener_pool_take(struct listener *li)
{
	char key[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];

	listener_key(li, key, sizeof(key));
	for (struct li_pooled **pp = &lis.pool; *pp; pp = &(*pp)->next) {
		struct li_pooled *p = *pp;

		if (strcmp(p->key, key) != 0)
			continue;
		*pp = p->next;
		li->fd = p->fd;
		free(p);
		li->flags |= LI_F_INHERITED | LI_F_POOLED;
		if (fcntl(li->fd, F_SETFL, O_NONBLOCK) == -1 ||
		    fcntl(li->fd, F_SETFD, FD_CLOEXEC) == -1)
			return listener_fail(li, "take over the socket handed over for");
		return 1;
	}
	return 0;
}

/* The options of a TCP listening socket that a bound one can still take:
 * set on a new socket before bind(), and again on one taken over, whose
 * bind line may have changed since (a reload). */
static int listener_tcp_opts(struct listener *li)
{
	int one = 1, defer = !!(li->flags & LI_F_DEFER);
	int reuse = (li->flags & LI_F_REUSEPORT) ||
		    !((li->flags & LI_F_NOREUSEPORT) || (global.tune_flags & GLB_T_NOREUSEPORT));
	const struct bind_conf *bc = li->bc;

	setsockopt(li->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Like HAProxy on Linux: SO_REUSEPORT unless refused, so that a new
	 * process (-sf) can bind while the old one still serves. */
	setsockopt(li->fd, SOL_SOCKET, SO_REUSEPORT, &reuse, sizeof(reuse));
	setsockopt(li->fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer));
	/* The options of the bind line that accepted sockets inherit, and
	 * those binding needs: a failure is the bind line's. */
	if (bc->mss && setsockopt(li->fd, IPPROTO_TCP, TCP_MAXSEG, &bc->mss, sizeof(int)) == -1)
		return listener_fail(li, "set the MSS (mss) of");
	if (bc->tcp_ut &&
	    setsockopt(li->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &bc->tcp_ut, sizeof(int)) == -1)
		return listener_fail(li, "set the user timeout (tcp-ut) of");
	if (li->flags & LI_F_TFO) {
		int qlen = listener_backlog(li);

		if (setsockopt(li->fd, IPPROTO_TCP, TCP_FASTOPEN, &qlen, sizeof(qlen)) == -1)
			return listener_fail(li, "enable TCP fast open (tfo) on");
	}
	if ((li->flags & LI_F_TRANSPARENT) &&
	    (li->addr.ss_family == AF_INET6 ?
	     setsockopt(li->fd, IPPROTO_IPV6, IPV6_TRANSPARENT, &one, sizeof(one)) :
	     setsockopt(li->fd, IPPROTO_IP, IP_TRANSPARENT, &one, sizeof(one))) == -1)
		return listener_fail(li, "make transparent (needs CAP_NET_ADMIN)");
	if (bc->iface && setsockopt(li->fd, SOL_SOCKET, SO_BINDTODEVICE, bc->iface,
				    (socklen_t)strlen(bc->iface)) == -1)
		return listener_fail(li, "bind to the interface of (needs CAP_NET_RAW)");
	return 0;
}

static int listener_bind_one(struct listener *li)
{
	int r;

	if (li->flags & LI_F_BOUND)
		return 0;
	if (li->flags & LI_F_INHERITED) {
		if (listener_adopt(li) == -1)
			return -1;
		li->flags |= LI_F_BOUND;
		return 0;
	}
	r = lis.pool ? listener_pool_take(li) : 0;
	if (r == -1)
		return -1;
	if (r == 1) {
		if (!(li->flags & LI_F_UNIX) && listener_tcp_opts(li) == -1)
			return -1;
	} else {
		int ns = -1;

		if (li->bc->netns) {
			char *err = NULL;

			if ((ns = netns_open(li->bc->netns, &err)) < 0) {
				log_alert("%s:%d: %s", li->bc->conf_file, li->bc->conf_line, err);
				free(err);
				return -1;
			}
		}
		li->fd = netns_socket(ns, li->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
				      SOCK_CLOEXEC, 0);
		if (li->fd == -1)
			return listener_fail(li, li->bc->netns ? "create socket (in its namespace: "
					     "needs CAP_SYS_ADMIN) for" : "create socket for");
		if (li->flags & LI_F_UNIX) {
			if (listener_bind_unix(li) == -1)
				return -1;
		} else {
			if (li->addr.ss_family == AF_INET6 && (li->flags & (LI_F_V4V6 | LI_F_V6ONLY))) {
				int v6only = !!(li->flags & LI_F_V6ONLY);

				/* fixed at bind(): part of the socket's key */
				setsockopt(li->fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
			}
			if (listener_tcp_opts(li) == -1)
				return -1;
			if (bind(li->fd, (struct sockaddr *)&li->addr, li->addrlen) == -1)
				return listener_fail(li, "bind");
		}
	}
	if (listen(li->fd, listener_backlog(li)) == -1)
		return listener_fail(li, r == 1 ? "listen on the socket handed over for" : "listen on");
	/* option tcp-smart-accept: the request of a new connection is
	 * acknowledged by the response, not by a bare ACK first (set once
	 * listening, the accepted sockets start in delayed-ACK mode); a socket
	 * taken over gets the setting of its new bind line either way */
	if (!(li->flags & LI_F_UNIX)) {
		int quick = !(li->px && li->px->mode == PR_MODE_HTTP &&
			      (li->px->options & PR_O_SMART_ACC));

		if (!quick || r == 1)
			setsockopt(li->fd, IPPROTO_TCP, TCP_QUICKACK, &quick, sizeof(quick));
	}
	li->flags |= LI_F_BOUND;
	return 0;
}

int listener_bind_all(struct listener *list)
{
	int ret = 0;

	for (struct listener *li = list; li; li = li->next)
		if (listener_bind_one(li) == -1)
			ret = -1;
	return ret;
}

/* Whether the connections accepted by frontends during the current second
 * reached the process-wide rate limit (maxconnrate, or maxsessrate: a
 * connection is counted once its tcp-request connection rules accepted it,
 * so it is a session too; the lower limit applies). */
static int listener_rate_reached(void)
{
	int lim = global.conn_rate_limit;

	if (global.sess_rate_limit > 0 && (lim <= 0 || global.sess_rate_limit < lim))
		lim = global.sess_rate_limit;
	if (lim <= 0)
		return 0;
	freq_rotate(&global.conn_rate, tick_sec());
	return global.conn_rate.curr >= (uint32_t)lim;
}

/* How long (ms) <li> waits for a rate to drop, 0 if none holds it:
 * maxconnrate, maxsslrate on a TLS bind line (until the next second), or
 * its frontend's rate-limit sessions (until the estimated session rate
 * falls below it). */
static uint32_t listener_rate_wait(const struct listener *li)
{
	tick_ms now = tick_now_ms();
	int rate;

	if (li->px && listener_rate_reached())
		return 1000 - now % 1000;
	if ((li->bc->flags & LI_F_SSL) && ssl_sock_fe_limited(&rate) && rate)
		return 1000 - now % 1000;
	if (li->px && li->px->fe_sps_lim)
		return freq_wait_ms(&li->px->fe_counters.sess_rate, li->px->fe_sps_lim, now);
	return 0;
}

static int listener_full(const struct listener *li)
{
	int rate;

	if (li->px && listener_rate_reached())
		return 1;
	/* rate-limit sessions: its frontend's session rate */
	if (li->px && li->px->fe_sps_lim &&
	    freq_rate(&li->px->fe_counters.sess_rate, tick_now_ms()) >= (uint32_t)li->px->fe_sps_lim)
		return 1;
	/* maxsslconn, maxsslrate: a TLS bind line stops accepting */
	if ((li->bc->flags & LI_F_SSL) && ssl_sock_fe_limited(&rate))
		return 1;
	if (li->bc->maxconn && li->nbconn >= li->bc->maxconn)
		return 1;
	if (li->px && (global.curconn >= global.maxconn ||
		       li->px->feconn >= proxy_fe_maxconn(li->px)))
		return 1;
	return 0;
}

static void listener_pause(struct listener *li)
{
	if (li->flags & LI_F_PAUSED)
		return;
	ev_io_stop(global.loop, &li->io);
	li->flags |= LI_F_PAUSED;
	li->wait_next = lis.paused;
	lis.paused = li;
}

static void listener_resume_ready(void)
{
	struct listener **pp = &lis.paused;

	while (*pp) {
		struct listener *li = *pp;

		if (listener_full(li) || li->fd < 0 || (li->flags & LI_F_DISABLED)) {
			pp = &li->wait_next;
			continue;
		}
		*pp = li->wait_next;
		li->flags &= ~LI_F_PAUSED;
		li->wait_next = NULL;
		ev_io_start(global.loop, &li->io);
	}
}

void listener_recheck_limits(void)
{
	if (lis.paused)
		listener_resume_ready();
}

int listener_disable_all(struct listener *list)
{
	int n = 0;

	for (struct listener *li = list; li; li = li->next) {
		if (li->fd < 0 || (li->flags & LI_F_DISABLED))
			continue;
		li->flags |= LI_F_DISABLED;
		listener_pause(li);
		n++;
	}
	return n;
}

int listener_enable_all(struct listener *list)
{
	int n = 0;

	for (struct listener *li = list; li; li = li->next) {
		if (li->fd < 0 || !(li->flags & LI_F_DISABLED))
			continue;
		li->flags &= ~LI_F_DISABLED;
		n++;
	}
	listener_resume_ready();
	return n;
}

/* Opens the reserve descriptor again if a stats socket used it (or none
 * could be opened yet), now that a descriptor may have been freed. */
static void listener_spare_refill(void)
{
	if (lis.spare_wanted && lis.spare < 0)
		lis.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Every descriptor (or kernel memory) is taken: <li> stops watching its
 * socket, which would otherwise wake us up for nothing in a loop, until a
 * connection of ours ends (listener_release()) or, for descriptors freed
 * elsewhere, the next short retry. Reported once in a while, not per try. */
static void listener_no_resources(struct listener *li, int err)
{
	tick_ms now = tick_now_ms();

	if (!lis.res_logged || now - lis.res_logged >= 10000) {
		char more[64] = "";

		if (lis.res_hits)
			snprintf(more, sizeof(more), " (%u more time(s) since the last message)",
				 lis.res_hits);
		log_warning("accept() on '%s': %s; accepting again once a descriptor is freed%s",
			    li->addr_str, strerror(err), more);
		lis.res_logged = now ? now : 1;
		lis.res_hits = 0;
	} else {
		lis.res_hits++;
	}
	listener_pause(li);
	if (!ev_is_active(&lis.res_retry)) {
		ev_timer_set(&lis.res_retry, 0.1, 0.);
		ev_timer_start(global.loop, &lis.res_retry);
	}
}

static void listener_res_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	listener_spare_refill();
	listener_resume_ready();
}

/* Arms the rate retry to fire in <ms> unless it fires sooner already. */
static void listener_retry_in(uint32_t ms)
{
	if (ev_is_active(&lis.retry) &&
	    ev_timer_remaining(global.loop, &lis.retry) <= tick_to_ev(ms) + 0.001)
		return;
	ev_timer_stop(global.loop, &lis.retry);
	ev_timer_set(&lis.retry, tick_to_ev(ms) + 0.001, 0.);
	ev_timer_start(global.loop, &lis.retry);
}

static void listener_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	uint32_t wait = 0;

	listener_resume_ready();
	/* still held by a rate (the loop clock may lag): the soonest wait */
	for (const struct listener *li = lis.paused; li; li = li->wait_next) {
		uint32_t w1 = listener_rate_wait(li);

		if (w1 && (!wait || w1 < wait))
			wait = w1;
	}
	if (wait)
		listener_retry_in(wait < 10 ? 10 : wait);
}

void listener_release(struct listener *li)
{
	BUG_ON(li->nbconn <= 0, "listener connection count underflow");
	li->nbconn--;
	/* its descriptor is closed: the reserve first, then whoever waits */
	listener_spare_refill();
	if (lis.paused)
		listener_resume_ready();
}

static void listener_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct listener *li = container_of(w, struct listener, io);

	for (int i = 0; i < LI_MAX_ACCEPT; i++) {
		struct sockaddr_storage addr;
		socklen_t alen = sizeof(addr);
		int fd;

		if (listener_full(li)) {
			uint32_t wait = listener_rate_wait(li);

			listener_pause(li);
			if (wait)
				listener_retry_in(wait);
			return;
		}
		fd = accept4(li->fd, (struct sockaddr *)&addr, &alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			switch (errno) {
			case EAGAIN:
				return;
			case ECONNABORTED:
			case EINTR:
				continue;
			case EMFILE: case ENFILE:
				if ((li->flags & LI_F_CLI) && lis.spare >= 0) {
					/* The reserve is for this: the operator gets in
					 * even when traffic took every descriptor. */
					close(lis.spare);
					lis.spare = -1;
					continue;
				}
				listener_no_resources(li, errno);
				return;
			case ENOBUFS: case ENOMEM:
				listener_no_resources(li, errno);
				return;
			default:
				log_warning("accept() on '%s': %s", li->addr_str, strerror(errno));
				return;
			}
		}
		li->nbconn++;
		li->accept(li, fd, &addr, alen);
	}
}

void listener_start_all(struct listener *list, listener_accept_fn fn)
{
	if (!lis.retry_init) {
		ev_timer_init(&lis.retry, listener_retry_cb, 0.1, 0.);
		ev_timer_init(&lis.res_retry, listener_res_retry_cb, 0.1, 0.);
		lis.retry_init = 1;
	}
	for (struct listener *li = list; li; li = li->next) {
		if (li->fd < 0)
			continue;
		if (li->flags & LI_F_CLI) {
			/* one descriptor kept free for the runtime API */
			lis.spare_wanted = 1;
			listener_spare_refill();
		}
		li->accept = fn;
		ev_io_init(&li->io, listener_accept_cb, li->fd, EV_READ);
		ev_io_start(global.loop, &li->io);
		global.jobs++;
		global.listeners++;
	}
}

void listener_close_all(struct listener *list)
{
	for (struct listener *li = list; li; li = li->next) {
		struct listener **pp;

		if (li->fd < 0)
			continue;
		for (pp = &lis.paused; *pp; pp = &(*pp)->wait_next)
			if (*pp == li) {
				*pp = li->wait_next;
				break;
			}
		if (global.loop && ev_is_active(&li->io)) {
			ev_io_stop(global.loop, &li->io);
		}
		if ((li->flags & LI_F_BOUND) && global.jobs > 0 && li->accept) {
			global.jobs--;
			global.listeners--;
		}
		if (li->ux_dir >= 0) {
			/* the start failed: put the paths back as they were */
			ux_restore(li);
			ux_forget(li);
		} else if ((li->flags & LI_F_UNIX) && !(li->flags & LI_F_INHERITED) &&
			   !(lis.keep_paths && li->px)) {
			const char *path = ux_path(li);
			struct stat st;

			/* After a reload (-sf) the path belongs to the new process:
			 * remove it only if it is still the socket we created. */
			if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == li->ux_ino)
				unlink(path);
		}
		close(li->fd);
		li->fd = -1;
		li->flags &= ~(LI_F_BOUND | LI_F_PAUSED);
	}
}

/* ---- bind options ---- */

static int bind_name(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                     char **argv, char **err)
{
	if (argc < 2) {
		*err = str_fmt("expects a name");
		return -1;
	}
	free(bc->name);
	bc->name = xstrdup(argv[1]);
	return 2;
}

static int bind_mode(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                     char **argv, char **err)
{
	char *end;
	long v;

	if (argc < 2 || (v = strtol(argv[1], &end, 8), *end) || v < 0 || v > 07777) {
		*err = str_fmt("expects an octal mode such as 600");
		return -1;
	}
	bc->ux_mode = (mode_t)v;
	return 2;
}

/* user <name>: the owner of a UNIX socket (uid <n>: an integer row). */
static int bind_user(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                     char **argv, char **err)
{
	struct passwd *pw;

	if (argc < 2) {
		*err = str_fmt("expects a value");
		return -1;
	}
	pw = getpwnam(argv[1]);
	if (!pw) {
		*err = str_fmt("unknown user '%s'", argv[1]);
		return -1;
	}
	bc->ux_uid = (int)pw->pw_uid;
	return 2;
}

/* group <name>: the group of a UNIX socket (gid <n>: an integer row). */
static int bind_group(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                      char **argv, char **err)
{
	struct group *gr;

	if (argc < 2) {
		*err = str_fmt("expects a value");
		return -1;
	}
	gr = getgrnam(argv[1]);
	if (!gr) {
		*err = str_fmt("unknown group '%s'", argv[1]);
		return -1;
	}
	bc->ux_gid = (int)gr->gr_gid;
	return 2;
}

static int bind_tcp_ut(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                       char **argv, char **err)
{
	const char *e;
	uint32_t ms;

	if (argc < 2 || parse_time_ms(argv[1], 1, &ms, &e) == -1 || ms > 0x7fffffff) {
		*err = str_fmt("expects a time such as 30s");
		return -1;
	}
	bc->tcp_ut = (int)ms;
	return 2;
}

static int bind_interface(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                          char **argv, char **err)
{
	if (argc < 2 || !*argv[1] || strlen(argv[1]) >= 16) {
		*err = str_fmt("expects an interface name");
		return -1;
	}
	free(bc->iface);
	bc->iface = xstrdup(argv[1]);
	return 2;
}

/* namespace <name>: the listening socket is made in that network
 * namespace (as `ip netns` names it), at start-up. */
static int bind_namespace(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                          char **argv, char **err)
{
	if (argc < 2 || !*argv[1] || strchr(argv[1], '/')) {
		*err = str_fmt("expects a network namespace name");
		return -1;
	}
	if (strcmp(argv[1], "*") == 0) {
		*err = str_fmt("'namespace *' is for servers in HAProxy: name the namespace");
		return -1;
	}
	free(bc->netns);
	bc->netns = xstrdup(argv[1]);
	return 2;
}

/* thread|process <set>, shards <n>: sluice runs thread 1 of process 1, so a
 * set holding it (or "all") is what every line gets anyway; one naming only
 * others cannot be honoured. */
static int bind_thread_set(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                           char **argv, char **err)
{
	static const char *const ok[] = { "1", "all", "odd", "1/1", "1/all", "1-1", "by-thread",
					  "by-group", "1/odd" };
	const char *v = argc > 1 ? argv[1] : "";

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		if (strcmp(v, ok[i]) == 0 || (strncmp(v, "1-", 2) == 0 && kw->name[0] != 's') ||
		    (strncmp(v, "1/1-", 4) == 0))
			return 2;
	*err = str_fmt("'%s': sluice runs one thread in one process: only sets holding thread "
		       "(and process) 1, or 'all', can be honoured", v);
	return -1;
}


/* accept-netscaler-cip <magic>: every connection starts with a NetScaler
 * CIP header with that magic number (netscaler.h), whose addresses become
 * the connection's. */
static int bind_ns_cip(struct bind_conf *bc, const struct bind_kw *kw, int argc, char **argv,
                       char **err)
{
	long v;

	if (cfg_opt_int(argc, argv, 0, 0xffffffffL, &v, err) == -1)
		return -1;
	bc->ns_cip_magic = (uint32_t)v;
	bc->flags |= LI_F_ACCEPT_CIP;
	return 2;
}

static struct bind_kw listener_bind_kws[] = {
	{ "backlog", .off = offsetof(struct bind_conf, backlog), .min = 1, .max = 1 << 24 },
	{ "maxconn", .off = offsetof(struct bind_conf, maxconn), .min = 0, .max = 1 << 24 },
	{ "id", .off = offsetof(struct bind_conf, id), .min = 1, .max = 0x7fffffff },
	{ "name", .parse = bind_name },
	{ "v4v6", .set = LI_F_V4V6 },
	{ "v6only", .set = LI_F_V6ONLY },
	{ "defer-accept", .set = LI_F_DEFER },
	{ "reuseport", .set = LI_F_REUSEPORT, .clr = LI_F_NOREUSEPORT },
	{ "noreuseport", .set = LI_F_NOREUSEPORT },
	{ "accept-proxy", .set = LI_F_ACCEPT_PROXY },
	{ "mode", .parse = bind_mode },
	{ "user", .parse = bind_user },
	{ "group", .parse = bind_group },
	{ "uid", .off = offsetof(struct bind_conf, ux_uid), .min = 0, .max = 0x7fffffff },
	{ "gid", .off = offsetof(struct bind_conf, ux_gid), .min = 0, .max = 0x7fffffff },
	{ "tfo", .set = LI_F_TFO },
	{ "transparent", .set = LI_F_TRANSPARENT },
	{ "mss", .off = offsetof(struct bind_conf, mss), .min = 1, .max = 65535 },
	{ "tcp-ut", .parse = bind_tcp_ut },
	{ "interface", .parse = bind_interface },
	{ "thread", .parse = bind_thread_set },
	{ "process", .parse = bind_thread_set },
	{ "shards", .parse = bind_thread_set },
	{ "nice", .off = offsetof(struct bind_conf, nice), .min = -1024, .max = 1024 },
	{ "accept-netscaler-cip", .parse = bind_ns_cip },
	{ "namespace", .parse = bind_namespace },
};

/* unix-bind [prefix <p>] [mode <m>] [user <u>] [uid <n>] [group <g>] [gid <n>]:
 * the defaults of the unix sockets of the bind and stats socket lines that
 * follow, read with the bind options of the same names. */
static int kw_unix_bind(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static const char *const allowed[] = { "mode", "user", "uid", "group", "gid" };

	if (!argc) {
		cfg_alert(ctx, "expects prefix, mode, user, uid, group or gid, each with a value");
		return -1;
	}
	for (int i = 0; i < argc; ) {
		const struct bind_kw *kw = NULL;
		const char *sug;
		char *err = NULL;
		int used;

		if (strcmp(argv[i], "prefix") == 0 && i + 1 < argc) {
			free(ux_bind.prefix);
			ux_bind.prefix = xstrdup(argv[i + 1]);
			i += 2;
			continue;
		}
		for (size_t k = 0; k < ARRAY_SIZE(allowed); k++)
			if (strcmp(argv[i], allowed[k]) == 0)
				kw = bind_find_kw(argv[i], 0, &sug);
		if (!kw) {
			cfg_alert(ctx, "unknown option '%s' (expects prefix, mode, user, uid, group "
				  "or gid)", argv[i]);
			return -1;
		}
		used = kw->parse ? kw->parse(&ux_bind.bc, kw, argc - i, argv + i, &err) :
		       cfg_opt_int_at(&ux_bind.bc, kw->off, kw->min, kw->max, argc - i, argv + i,
				      &err);
		if (used < 0) {
			cfg_alert(ctx, "option '%s': %s", argv[i], err ? err : "invalid value");
			free(err);
			return -1;
		}
		i += used;
	}
	return 0;
}

static struct cfg_kw listener_cfg_kws[] = {
	{ "unix-bind", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_unix_bind,
	  .usage = "[prefix <p>] [mode <m>] [user <u>] [uid <n>] [group <g>] [gid <n>]" },
	{ "noreuseport", CFG_SEC_GLOBAL, CFG_T_FLAG, offsetof(struct global, tune_flags),
	  .mask = GLB_T_NOREUSEPORT },
	{ "maxsessrate", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, sess_rate_limit),
	  .min = 0, .max = 0x7fffffff, .usage = "a number of sessions per second" },
};

SLUICE_INIT(listener_register)
{
	bind_register_keywords(listener_bind_kws, ARRAY_SIZE(listener_bind_kws));
	cfg_register(listener_cfg_kws, ARRAY_SIZE(listener_cfg_kws));
}
