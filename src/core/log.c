/* Log targets, syslog formats and the `log` keyword (log.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/log_tcp.h>
#include <sluice/proxy.h>
#include <sluice/ring.h>
#include <sluice/str.h>
#include <sluice/units.h>

static const char *const level_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"
};
static const char *const facility_names[] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "auth2", "ftp", "ntp", "audit", "alert", "cron2",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"
};

static struct {
	char          tag[64];
	char          host[256];    /* empty unless log-send-hostname */
	int           quiet;
	unsigned long dropped;
} logstate = { "sluice", "", 0, 0 };

int log_level_parse(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
		if (strcmp(name, level_names[i]) == 0)
			return (int)i;
	return -1;
}

void log_set_identity(const char *tag)
{
	snprintf(logstate.tag, sizeof(logstate.tag), "%s", tag);
}

void log_set_hostname(const char *name)
{
	if (name) {
		snprintf(logstate.host, sizeof(logstate.host), "%s", name);
	} else if (gethostname(logstate.host, sizeof(logstate.host) - 1) == -1) {
		strcpy(logstate.host, "localhost");
	}
}

const char *log_hostname(void)
{
	return logstate.host;
}

void log_set_quiet(int quiet)
{
	logstate.quiet = quiet;
}

void log_count_dropped(void)
{
	logstate.dropped++;
}

static unsigned long logs_received;

void log_count_received(void)
{
	logs_received++;
}

unsigned long log_received(void)
{
	return logs_received;
}

unsigned long log_dropped(void)
{
	return logstate.dropped;
}

/* Writes "[PREFIX] (pid) : line" on stderr, unless quiet hides <level>. */
static void log_stderr(const char *prefix, int level, const char *line, int n)
{
	if (logstate.quiet && level > LOG_L_ERR)
		return;
	fprintf(stderr, "[%s] (%d) : %s%s", prefix, (int)getpid(), line,
		(n > 0 && line[n - 1] == '\n') ? "" : "\n");
	fflush(stderr);
}

static void log_msg(const char *prefix, int level, const char *fmt, va_list ap)
{
	char line[2048];
	int n = vsnprintf(line, sizeof(line), fmt, ap);

	if (n >= 0)
		log_stderr(prefix, level, line, MIN(n, (int)sizeof(line) - 1));
}

static void log_event_to(const struct log_list *to, int level, const char *fmt, va_list ap)
{
	char line[1024];
	int n = vsnprintf(line, sizeof(line), fmt, ap);

	if (n <= 0)
		return;
	n = MIN(n, (int)sizeof(line) - 1);
	log_stderr(level <= LOG_L_ERR ? "ALERT" : level == LOG_L_WARNING ? "WARNING" : "NOTICE",
		   level, line, n);
	log_send(to, level, line, (size_t)n);
}

void log_event_px_lv(const struct log_list *px_loggers, int stderr_level, int level,
                     const char *fmt, ...)
{
	const struct log_list *to = px_loggers->head || px_loggers->use_global ? px_loggers :
				    &global.loggers;
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	n = MIN(n, (int)sizeof(line) - 1);
	if (stderr_level >= 0)
		log_stderr(stderr_level <= LOG_L_ERR ? "ALERT" :
			   stderr_level == LOG_L_WARNING ? "WARNING" : "NOTICE",
			   stderr_level, line, n);
	if (level >= 0)
		log_send(to, level, line, (size_t)n);
}

void log_event(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_event_to(&global.loggers, level, fmt, ap);
	va_end(ap);
}

void log_event_px(const struct log_list *px_loggers, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_event_to(px_loggers->head || px_loggers->use_global ? px_loggers : &global.loggers,
		     level, fmt, ap);
	va_end(ap);
}

void log_alert(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_msg("ALERT", LOG_L_ALERT, fmt, ap);
	va_end(ap);
}

static int warnings_emitted;

int log_warning_count(void)
{
	return warnings_emitted;
}

void log_warning(const char *fmt, ...)
{
	va_list ap;

	warnings_emitted++;
	va_start(ap, fmt);
	log_msg("WARNING", LOG_L_WARNING, fmt, ap);
	va_end(ap);
}

void log_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_msg("NOTICE", LOG_L_NOTICE, fmt, ap);
	va_end(ap);
}

static int name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

static const char *const format_names[] = {
	"rfc3164", "rfc5424", "raw", "short", "priority", "timed", "iso", "local"
};

int log_format_find(const char *name)
{
	return name_index(format_names, ARRAY_SIZE(format_names), name);
}

size_t log_build_header(enum log_format fmt, int facility, int level, const char *tag,
                        const char *sd, size_t sdlen, char *hdr, size_t sz)
{
	int pri = facility * 8 + level;
	struct timespec ts;
	struct tm tm;
	char date[64], iso[128];
	int n = 0;

	switch (fmt) {
	case LOG_FMT_RAW:
		return 0;
	case LOG_FMT_SHORT:
		return (size_t)snprintf(hdr, sz, "<%d>", level);
	case LOG_FMT_PRIORITY:
		return (size_t)snprintf(hdr, sz, "<%d>", pri);
	default:
		break;
	}
	if (!tag)
		tag = logstate.tag;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	if (fmt == LOG_FMT_RFC3164 || fmt == LOG_FMT_LOCAL) {
		strftime(date, sizeof(date), "%b %e %H:%M:%S", &tm);
		if (fmt == LOG_FMT_LOCAL)
			n = snprintf(hdr, sz, "<%d>%s %s[%d]: ", pri, date, tag, (int)getpid());
		else
			n = snprintf(hdr, sz, "<%d>%s %s %s[%d]: ", pri, date,
				     *logstate.host ? logstate.host : "localhost",
				     tag, (int)getpid());
		return n < 0 ? 0 : MIN((size_t)n, sz - 1);
	}
	/* ISO 8601 with microseconds and a numeric offset: 2026-11-21T05:56:18.201875+00:00 */
	{
		char off[8];
		size_t l;

		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
		strftime(off, sizeof(off), "%z", &tm);
		l = strlen(off);
		snprintf(iso, sizeof(iso), "%.40s.%06ld%.*s:%s", date, (long)(ts.tv_nsec / 1000) % 1000000,
			 (int)(l > 2 ? l - 2 : l), off, l > 2 ? off + l - 2 : "");
	}
	if (fmt == LOG_FMT_RFC5424)
		n = snprintf(hdr, sz, "<%d>1 %s %s %s %d - %.*s ", pri, iso,
			     *logstate.host ? logstate.host : "-", tag, (int)getpid(),
			     sdlen ? (int)MIN(sdlen, 256) : 1, sdlen ? sd : "-");
	else if (fmt == LOG_FMT_TIMED)
		n = snprintf(hdr, sz, "<%d>%s ", level, iso);
	else
		n = snprintf(hdr, sz, "%s ", iso);
	return n < 0 ? 0 : MIN((size_t)n, sz - 1);
}

/* Whether the next line goes out under "sample" (counts it). */
static int log_sampled(struct log_sample *ls)
{
	unsigned n = ls->idx++ % ls->size + 1;

	for (unsigned i = 0; i < ls->nranges; i++)
		if (n >= ls->lo[i] && n <= ls->hi[i])
			return 1;
	return 0;
}

/* A line to a stream or ring target: header and message in one piece. */
static void log_one_msg(struct logger *lg, const char *hdr, size_t hl, const char *msg,
                        size_t len)
{
	char buf[65536 + 512];

	memcpy(buf, hdr, hl);
	memcpy(buf + hl, msg, len);
	if (lg->type == LOG_T_RING)
		ring_write(lg->ring, buf, hl + len);
	else
		log_tcp_send(lg->tcp, buf, hl + len);
}

int log_admit(struct logger *lg, int *level)
{
	if (*level > lg->maxlevel)
		return 0;
	if (unlikely(lg->sample) && !log_sampled(lg->sample))
		return 0;
	if (*level < lg->minlevel)
		*level = lg->minlevel;
	return 1;
}

void log_emit(struct logger *lg, const char *hdr, size_t hl, const char *msg, size_t len)
{
	struct iovec iov[3];
	struct msghdr mh = { 0 };
	ssize_t r;

	if (hl + len > lg->maxlen)
		len = lg->maxlen > hl ? lg->maxlen - hl : 0;
	if (lg->type >= LOG_T_TCP) {
		log_one_msg(lg, hdr, hl, msg, len);
		return;
	}
	iov[0].iov_base = (void *)hdr;
	iov[0].iov_len = hl;
	iov[1].iov_base = (void *)msg;
	iov[1].iov_len = len;
	iov[2].iov_base = "\n";
	iov[2].iov_len = 1;
	mh.msg_iov = iov;
	mh.msg_iovlen = 3;
	if (lg->type == LOG_T_FD) {
		r = writev(lg->fd, iov, 3);
	} else {
		mh.msg_name = &lg->addr;
		mh.msg_namelen = lg->addrlen;
		r = sendmsg(lg->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	if (r == -1)
		logstate.dropped++;
}

static void log_one(struct logger *lg, int level, const char *tag, const char *sd, size_t sdlen,
                    const char *msg, size_t len)
{
	char hdr[512];

	if (!log_admit(lg, &level))
		return;
	log_emit(lg, hdr, log_build_header(lg->format, lg->facility, level, tag, sd, sdlen,
					   hdr, sizeof(hdr)), msg, len);
}

/* Sends to <l>'s loggers with <tag>, then to the global ones after "log
 * global", still with the tag of the proxy the line is about. */
static void log_send_tag(const struct log_list *l, int level, const char *tag, const char *sd,
                         size_t sdlen, const char *msg, size_t len)
{
	for (struct logger *lg = l->head; lg; lg = lg->next)
		if (lg->fd >= 0 || lg->type >= LOG_T_TCP)
			log_one(lg, level, tag, sd, sdlen, msg, len);
	if (l->use_global && l != &global.loggers)
		log_send_tag(&global.loggers, level, tag, sd, sdlen, msg, len);
}

void log_send_sd(const struct log_list *l, int level, const char *sd, size_t sdlen,
                 const char *msg, size_t len)
{
	log_send_tag(l, level, l->tag, sd, sdlen, msg, len);
}

void log_send(const struct log_list *l, int level, const char *msg, size_t len)
{
	log_send_tag(l, level, l->tag, NULL, 0, msg, len);
}

int log_open(struct log_list *l)
{
	if (log_resolve_rings(l))   /* a list no postparse saw: found now */
		return -1;
	for (struct logger *lg = l->head; lg; lg = lg->next) {
		if (lg->type == LOG_T_FD || lg->type >= LOG_T_TCP || lg->fd >= 0)
			continue;
		lg->fd = socket(lg->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (lg->fd == -1) {
			log_alert("%s:%d: 'log': cannot create a socket: %s",
				  lg->conf_file, lg->conf_line, strerror(errno));
			return -1;
		}
	}
	return 0;
}

void log_list_free(struct log_list *l)
{
	struct logger *lg, *next;

	for (lg = l->head; lg; lg = next) {
		next = lg->next;
		if ((lg->type == LOG_T_UDP || lg->type == LOG_T_UNIX) && lg->fd >= 0)
			close(lg->fd);
		if (lg->tcp) {
			log_tcp_close(lg->tcp);
			free(lg->tcp);
		}
		free(lg->ring_name);
		free(lg->sample);
		free(lg->conf_file);
		free(lg);
	}
	l->head = NULL;
}

int log_list_dup(struct log_list *dst, const struct log_list *src)
{
	struct logger **tail = &dst->head;

	dst->head = NULL;
	dst->use_global = src->use_global;
	for (const struct logger *lg = src->head; lg; lg = lg->next) {
		struct logger *n = xcalloc(1, sizeof(*n));

		*n = *lg;
		n->next = NULL;
		n->conf_file = xstrdup(lg->conf_file);
		if (n->type != LOG_T_FD)
			n->fd = -1;
		n->ring_name = lg->ring_name ? xstrdup(lg->ring_name) : NULL;
		if (lg->sample) {
			n->sample = xcalloc(1, sizeof(*n->sample));
			*n->sample = *lg->sample;
		}
		if (lg->tcp) {
			/* a stream of its own, as HAProxy gives each a ring */
			n->tcp = xcalloc(1, sizeof(*n->tcp));
			log_tcp_init(n->tcp, &lg->addr, lg->addrlen);
		}
		*tail = n;
		tail = &n->next;
	}
	return 0;
}

/* Parses the target of a `log` line into <lg>. */
static int log_parse_target(struct cfg_ctx *ctx, struct logger *lg, const char *t)
{
	struct addr_spec as;
	char *err = NULL;

	static const struct { const char *pfx; enum log_target type; const char *fam; } pfxs[] = {
		{ "udp@", LOG_T_UDP, "" }, { "udp4@", LOG_T_UDP, "ipv4@" },
		{ "udp6@", LOG_T_UDP, "ipv6@" }, { "tcp@", LOG_T_TCP, "" },
		{ "tcp4@", LOG_T_TCP, "ipv4@" }, { "tcp6@", LOG_T_TCP, "ipv6@" },
		{ "uxst@", LOG_T_TCP, "unix@" }, { "uxdg@", LOG_T_UNIX, "unix@" },
	};
	enum log_target type = LOG_T_UDP;
	char buf[512];

	if (strcmp(t, "stdout") == 0 || strcmp(t, "stderr") == 0) {
		lg->type = LOG_T_FD;
		lg->fd = t[3] == 'o' ? 1 : 2;
		return 0;
	}
	if (strncmp(t, "ring@", 5) == 0) {
		if (!t[5]) {
			cfg_alert(ctx, "log target '%s': expects ring@<ring name>", t);
			return -1;
		}
		lg->type = LOG_T_RING;
		lg->ring_name = xstrdup(t + 5);   /* found once every section is read */
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(pfxs); i++)
		if (strncmp(t, pfxs[i].pfx, strlen(pfxs[i].pfx)) == 0) {
			snprintf(buf, sizeof(buf), "%s%s", pfxs[i].fam, t + strlen(pfxs[i].pfx));
			t = buf;
			type = pfxs[i].type;
			break;
		}
	/* host names are resolved here, at start-up, once */
	if (addr_parse(t, &as, ADDR_F_UNIX_OK | ADDR_F_PORT_OPTIONAL | ADDR_F_ENV | ADDR_F_RESOLVE,
		       &err) == -1) {
		cfg_alert(ctx, "invalid log target '%s': %s", t, err);
		free(err);
		return -1;
	}
	if (as.kind == ADDR_K_FD) {
		cfg_alert(ctx, "log target '%s': fd@ targets are not supported", t);
		return -1;
	}
	lg->addr = as.ss;
	lg->addrlen = as.len;
	if (as.kind == ADDR_K_UNIX) {
		lg->type = type == LOG_T_TCP ? LOG_T_TCP : LOG_T_UNIX;
	} else {
		lg->type = type;
		if (as.port_lo == 0)
			addr_set_port(&lg->addr, 514);
	}
	if (lg->type == LOG_T_TCP) {
		lg->tcp = xcalloc(1, sizeof(*lg->tcp));
		log_tcp_init(lg->tcp, &lg->addr, lg->addrlen);
	}
	return 0;
}

/* "sample <ranges>:<size>": ranges "N" or "N-M" (from 1), comma-separated,
 * none beyond <size>. */
static int log_parse_sample(struct cfg_ctx *ctx, struct logger *lg, const char *arg)
{
	struct log_sample *ls = xcalloc(1, sizeof(*ls));
	const char *colon = strrchr(arg, ':'), *p = arg;
	char *end;
	unsigned long size;

	if (!colon || !colon[1] || (size = strtoul(colon + 1, &end, 10)) < 1 || *end ||
	    size > 1000000)
		goto bad;
	ls->size = (unsigned)size;
	while (p < colon) {
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				goto bad;
		}
		if (lo < 1 || hi < lo || hi > size || ls->nranges == ARRAY_SIZE(ls->lo) ||
		    (*end != ',' && end != colon))
			goto bad;
		ls->lo[ls->nranges] = (unsigned)lo;
		ls->hi[ls->nranges++] = (unsigned)hi;
		p = end + (*end == ',');
	}
	if (!ls->nranges)
		goto bad;
	free(lg->sample);
	lg->sample = ls;
	return 0;
bad:
	cfg_alert(ctx, "'sample %s': expects <ranges>:<size>, ranges being N or N-M (from 1, "
		  "at most %zu of them) separated by commas, none above <size>", arg,
		  ARRAY_SIZE(ls->lo));
	free(ls);
	return -1;
}

/* log <target> [len N] [format F] <facility> [max [min]] | log global */
int log_kw(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	return log_cfg_parse(ctx, target, argc, argv);
}

int log_cfg_parse(struct cfg_ctx *ctx, struct log_list *list, int argc, char **argv)
{
	struct logger *lg, **tail;
	const char *err;
	int i = 1, idx;

	if (ctx->inverted) {
		/* "no log": forget inherited targets and "log global". */
		list->use_global = 0;
		log_list_free(list);
		return 0;
	}
	if (argc < 1) {
		cfg_alert(ctx, "expects 'global' or '<target> [len <n>] [format <fmt>] "
			  "<facility> [<max level> [<min level>]]'");
		return -1;
	}
	if (strcmp(argv[0], "global") == 0) {
		if (list == &global.loggers) {
			cfg_alert(ctx, "'log global' makes no sense in the global section");
			return -1;
		}
		list->use_global = !ctx->inverted;
		return 0;
	}
	lg = xcalloc(1, sizeof(*lg));
	lg->fd = -1;
	lg->maxlevel = LOG_L_DEBUG;
	lg->minlevel = LOG_L_EMERG;
	lg->maxlen = 1024;
	lg->conf_file = xstrdup(ctx->file);
	lg->conf_line = ctx->line;
	if (log_parse_target(ctx, lg, argv[0]) == -1)
		goto fail;
	for (; i < argc; i++) {
		long v;

		if (strcmp(argv[i], "len") == 0 && i + 1 < argc) {
			if (parse_int(argv[++i], 80, 65535, &v, &err) == -1) {
				cfg_alert(ctx, "'len' %s (80..65535)", err);
				goto fail;
			}
			lg->maxlen = (unsigned)v;
		} else if (strcmp(argv[i], "format") == 0 && i + 1 < argc) {
			idx = log_format_find(argv[++i]);
			if (idx < 0) {
				cfg_alert(ctx, "unknown log format '%s' (expects rfc3164, rfc5424, local, "
					  "short, priority, timed, iso or raw)", argv[i]);
				goto fail;
			}
			lg->format = (enum log_format)idx;
			lg->format_set = 1;
			if (lg->type == LOG_T_RING)
				cfg_warn(ctx, "'format %s' has no effect on a ring@ target: its lines "
					 "take the ring's 'format', as in HAProxy", argv[i]);
		} else if (strcmp(argv[i], "sample") == 0 && i + 1 < argc) {
			if (log_parse_sample(ctx, lg, argv[++i]) == -1)
				goto fail;
		} else {
			break;
		}
	}
	if (i >= argc) {
		cfg_alert(ctx, "missing facility (kern, user, daemon, local0..local7, ...)");
		goto fail;
	}
	idx = name_index(facility_names, ARRAY_SIZE(facility_names), argv[i]);
	if (idx < 0) {
		cfg_alert(ctx, "unknown facility '%s' (kern, user, daemon, local0..local7, ...)", argv[i]);
		goto fail;
	}
	lg->facility = idx;
	if (++i < argc) {
		if ((idx = name_index(level_names, ARRAY_SIZE(level_names), argv[i])) < 0) {
			cfg_alert(ctx, "unknown max level '%s' (emerg .. debug)", argv[i]);
			goto fail;
		}
		lg->maxlevel = idx;
		if (++i < argc) {
			if ((idx = name_index(level_names, ARRAY_SIZE(level_names), argv[i])) < 0) {
				cfg_alert(ctx, "unknown min level '%s' (emerg .. debug)", argv[i]);
				goto fail;
			}
			lg->minlevel = idx;
			i++;
		}
	}
	if (i < argc) {
		cfg_alert(ctx, "unexpected argument '%s'", argv[i]);
		goto fail;
	}
	for (tail = &list->head; *tail; tail = &(*tail)->next)
		;
	*tail = lg;
	return 0;
fail:
	if (lg->tcp) {
		log_tcp_close(lg->tcp);
		free(lg->tcp);
	}
	free(lg->ring_name);
	free(lg->sample);
	free(lg->conf_file);
	free(lg);
	return -1;
}

/* log-send-hostname [<name>] */
static int kw_send_hostname(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc > 1) {
		cfg_alert(ctx, "expects at most one host name");
		return -1;
	}
	log_set_hostname(argc ? argv[0] : NULL);
	return 0;
}

static int kw_log_tag(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a tag");
		return -1;
	}
	log_set_identity(argv[0]);
	return 0;
}

static struct cfg_kw log_kws[] = {
	{ "log-send-hostname", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_send_hostname,
	  .usage = "[<name>]" },
	{ "log-tag", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_log_tag, .usage = "<tag>" },
	{ "log", CFG_SEC_GLOBAL, CFG_T_FUNC, offsetof(struct global, loggers), .parse = log_kw,
	  .usage = "<target> [len <n>] [format <fmt>] <facility> [<max> [<min>]]" },
	{ "log", CFG_SEC_PROXIES, CFG_T_FUNC, CFG_PX_OFF(loggers), .parse = log_kw,
	  .flags = CFG_KW_F_NO, .usage = "global | <target> [len <n>] [format <fmt>] <facility> [<max> [<min>]]" },
};

/* "ring@<name>" targets find their ring once every section is read, and
 * take its format: the ring decides how what it stores is written. */
int log_resolve_rings(struct log_list *l)
{
	int errors = 0;

	for (struct logger *lg = l->head; lg; lg = lg->next) {
		if (lg->type != LOG_T_RING || lg->ring)
			continue;
		if (!(lg->ring = ring_find(lg->ring_name))) {
			log_alert("%s:%d: 'log': no ring named '%s' (declare it with a 'ring' section)",
				  lg->conf_file, lg->conf_line, lg->ring_name);
			errors++;
			continue;
		}
		lg->format = lg->ring->format;
		lg->format_set = 1;
	}
	return errors;
}

static int log_postparse(void)
{
	int errors = log_resolve_rings(&global.loggers);

	for (struct proxy *px = global.proxies; px; px = px->next)
		errors += log_resolve_rings(&px->loggers);
	return errors;
}

SLUICE_INIT(log_register)
{
	cfg_register(log_kws, ARRAY_SIZE(log_kws));
	cfg_register_postparse(log_postparse, 40);
}
