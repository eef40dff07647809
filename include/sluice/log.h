/* Logging: process messages (alerts, warnings, notices) on stderr, and
 * traffic logs sent to `log` targets (stdout/stderr, UDP syslog, unix
 * datagram sockets) in raw, rfc3164, rfc5424 or short format. */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include <stddef.h>
#include <sys/socket.h>

enum log_level { LOG_L_EMERG, LOG_L_ALERT, LOG_L_CRIT, LOG_L_ERR, LOG_L_WARNING,
                 LOG_L_NOTICE, LOG_L_INFO, LOG_L_DEBUG };

/* Line formats, as HAProxy writes them:
 *  rfc3164  <PRI>Mmm dd hh:mm:ss HOST TAG[PID]: msg
 *  rfc5424  <PRI>1 ISO-TIME HOST TAG PID - - msg
 *  local    <PRI>Mmm dd hh:mm:ss TAG[PID]: msg
 *  short    <SEVERITY>msg        priority <PRI>msg
 *  timed    <SEVERITY>ISO-TIME msg    iso ISO-TIME msg    raw msg */
enum log_format { LOG_FMT_RFC3164, LOG_FMT_RFC5424, LOG_FMT_RAW, LOG_FMT_SHORT,
                  LOG_FMT_PRIORITY, LOG_FMT_TIMED, LOG_FMT_ISO, LOG_FMT_LOCAL };

enum log_target { LOG_T_FD, LOG_T_UDP, LOG_T_UNIX, LOG_T_TCP, LOG_T_RING };

struct log_tcp;
struct ring;

/* "sample <ranges>:<size>": of every <size> lines, those whose number (from
 * 1) is in one of the ranges are sent. */
struct log_sample {
	unsigned  size;
	unsigned  idx;        /* lines seen, modulo <size> */
	unsigned  nranges;
	unsigned  lo[16], hi[16];
};

struct logger {
	struct logger          *next;
	enum log_target         type;
	enum log_format         format;
	int                     fd;        /* 1/2 for stdout/stderr, else our socket */
	int                     facility;
	int                     maxlevel;  /* messages above this level are dropped */
	int                     minlevel;  /* levels below are raised to this one */
	unsigned                maxlen;    /* truncate lines longer than this */
	struct sockaddr_storage addr;
	socklen_t               addrlen;
	struct log_tcp         *tcp;       /* LOG_T_TCP: the stream and its queue */
	struct ring            *ring;      /* LOG_T_RING, found after parsing */
	char                   *ring_name;
	struct log_sample      *sample;    /* NULL: every line */
	int                     format_set;/* "format" was given (a relay keeps the input's otherwise) */
	char                   *conf_file; /* where it was declared, for errors */
	int                     conf_line;
};

/* A list of loggers as held by the global section or a proxy. */
struct log_list {
	struct logger *head;
	int            use_global;         /* "log global" was given */
	const char    *tag;                /* a proxy's log-tag (not owned), NULL: the global one */
};

/* Sets the tag and hostname stamped on syslog lines. */
void log_set_identity(const char *tag);

/* Opens the sockets of every logger of <l> (and finds the rings of its
 * ring@ targets, if not done yet). Returns 0 or -1 (the message is printed
 * as an alert). */
int log_open(struct log_list *l);

/* Sends <msg> at <level> to every logger of <l> (and of the global list when
 * <l> says "log global"). Never blocks: a target that cannot take the line
 * drops it and counts it. */
void log_send(const struct log_list *l, int level, const char *msg, size_t len);

/* The same with <sd> (<sdlen> bytes, none when 0) as the structured data
 * of rfc5424 lines (log-format-sd); other formats leave it out. */
void log_send_sd(const struct log_list *l, int level, const char *sd, size_t sdlen,
                 const char *msg, size_t len);

/* One line to one target, in two steps: log_admit() says whether <lg>
 * takes a line of <*level> (its levels and "sample"; the level may be
 * raised to its minimum), log_emit() sends header <hdr> (<hl> bytes) and
 * message <msg> (<len> bytes) to it, cut at its "len", never blocking. */
int log_admit(struct logger *lg, int *level);
void log_emit(struct logger *lg, const char *hdr, size_t hl, const char *msg, size_t len);

/* The host name "log-send-hostname" set ("" when none). */
const char *log_hostname(void);

struct cfg_ctx;
struct syslog_msg;

/* Sends received message <m> (log-forward) to every target of <l> (and the
 * global ones with "log global"), its header written again in each
 * target's format from what it carried (core/log_relay.c). */
void log_relay(const struct log_list *l, const struct syslog_msg *m);

/* The "log" keyword's parser, for the sections holding a struct log_list
 * at <target> (global, proxies, log-forward). */
int log_kw(struct cfg_ctx *ctx, void *target, int argc, char **argv);

/* Finds the rings the "ring@" targets of <l> name. Returns the number of
 * errors (reported). */
int log_resolve_rings(struct log_list *l);

/* Number of log lines dropped since start-up; log_count_dropped() counts
 * one more (a target's queue was full). */
unsigned long log_dropped(void);
void log_count_dropped(void);

/* Messages log-forward received since start-up (show info's CumRecvLogs). */
unsigned long log_received(void);
void log_count_received(void);

/* Writes into <hdr> (<sz> bytes) the header format <fmt> puts before a
 * message of <level> from <facility>, with <tag> (NULL: this process' tag),
 * its pid and host, and in rfc5424 the structured data <sd> (<sdlen> bytes,
 * "-" when 0). Returns its length. */
size_t log_build_header(enum log_format fmt, int facility, int level, const char *tag,
                        const char *sd, size_t sdlen, char *hdr, size_t sz);

/* The format named <name> ("rfc3164"...), or -1. */
int log_format_find(const char *name);

/* Host name sent in rfc3164/rfc5424 headers ("log-send-hostname"). */
void log_set_hostname(const char *name);

/* Process messages, on stderr with a "[LEVEL]" prefix; quiet mode hides
 * notices and warnings but never alerts. */
void log_alert(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How many warnings log_warning() printed (or would have, under -q) since
 * the start: for zero-warning. */
int log_warning_count(void);
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An event worth a log line (a proxy stopped, a server changed state): on
 * stderr like the messages above and to the global log targets, as HAProxy
 * reports them. */
void log_event(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same for an event of one proxy (a server's health): to the proxy's
 * log targets <px_loggers> as HAProxy does ("log global" reaching the
 * global ones), or to the global targets when the proxy has none. */
void log_event_px(const struct log_list *px_loggers, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same with the stderr prefix and the syslog severity chosen apart, as
 * HAProxy logs server state changes ([WARNING] on stderr, alert or notice
 * to syslog); a level < 0 skips that output. */
void log_event_px_lv(const struct log_list *px_loggers, int stderr_level, int level,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The "log" keyword's words (after "log") into <list>, for a section that
 * keeps its own targets (peers). Returns 0 or -1 after cfg_alert(). */
struct cfg_ctx;
int log_cfg_parse(struct cfg_ctx *ctx, struct log_list *list, int argc, char **argv);

/* The LOG_L_* level named <name> ("emerg" ... "debug"), or -1. */
int log_level_parse(const char *name);

/* Quiet mode (-q). */
void log_set_quiet(int quiet);

/* Copies the loggers of <src> into <dst> (inheritance from defaults); the
 * copies have their own sockets, opened by log_open(). Returns 0. */
int log_list_dup(struct log_list *dst, const struct log_list *src);

/* Releases the loggers of <l>. */
void log_list_free(struct log_list *l);

#endif
