/* Relaying a received syslog message (log-forward) to log targets: its
 * header is written again in each target's format from what it carried
 * (facility, level, time, host, tag, pid, msgid, structured data); a target
 * without "format" keeps the message's own (RFC 3164, RFC 5424, or none). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/syslog.h>

static const char mon_names[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

/* "-" for an absent field of RFC 5424. */
static int f5(const struct syslog_str *s, const char **p)
{
	*p = s->len ? s->p : "-";
	return s->len ? (int)s->len : 1;
}

/* The message's time as RFC 5424 writes it: as received when it came as
 * RFC 5424; from RFC 3164's fields (this year, zone unknown: "-00:00", as
 * HAProxy writes it); else now. */
static void relay_iso(const struct syslog_msg *m, char *out, size_t sz)
{
	struct timespec ts;
	struct tm tm;
	char date[64], off[8];
	size_t l;

	if (m->has_time) {
		int year = m->year;

		if (!year) {
			time_t now = time(NULL);

			localtime_r(&now, &tm);
			year = tm.tm_year + 1900;
		}
		snprintf(out, sz, "%04d-%02d-%02dT%02d:%02d:%02d%.*s%.*s", year, m->mon + 1,
			 m->mday, m->hour, m->min, m->sec, (int)m->frac.len, m->frac.p,
			 m->zone.len ? (int)m->zone.len : 6, m->zone.len ? m->zone.p : "-00:00");
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(off, sizeof(off), "%z", &tm);
	l = strlen(off);
	snprintf(out, sz, "%.40s.%06ld%.*s:%s", date, (long)(ts.tv_nsec / 1000) % 1000000,
		 (int)(l > 2 ? l - 2 : l), off, l > 2 ? off + l - 2 : "");
}

/* The time as RFC 3164 writes it ("Nov  7 22:00:00"). */
static void relay_bsd(const struct syslog_msg *m, char *out, size_t sz)
{
	if (m->has_time) {
		snprintf(out, sz, "%s %2d %02d:%02d:%02d", mon_names[m->mon], m->mday, m->hour,
			 m->min, m->sec);
	} else {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(out, sz, "%b %e %H:%M:%S", &tm);
	}
}

/* Header of <m> in format <fmt> (facility and level given) into <hdr>.
 * Returns its length. */
static size_t relay_header(enum log_format fmt, int facility, int level,
                           const struct syslog_msg *m, char *hdr, size_t sz)
{
	int pri = facility * 8 + level, n;
	const char *host = m->host.len ? m->host.p : *log_hostname() ? log_hostname() : "localhost";
	int hl = m->host.len ? (int)m->host.len : (int)strlen(host);
	char t[96];

	switch (fmt) {
	case LOG_FMT_RAW:
		return 0;
	case LOG_FMT_SHORT:
		n = snprintf(hdr, sz, "<%d>", level);
		break;
	case LOG_FMT_PRIORITY:
		n = snprintf(hdr, sz, "<%d>", pri);
		break;
	case LOG_FMT_ISO:
	case LOG_FMT_TIMED:
		relay_iso(m, t, sizeof(t));
		n = fmt == LOG_FMT_ISO ? snprintf(hdr, sz, "%s ", t) :
		    snprintf(hdr, sz, "<%d>%s ", level, t);
		break;
	case LOG_FMT_RFC5424: {
		const char *h, *a, *p, *i, *d;
		int lh = f5(&m->host, &h), la = f5(&m->tag, &a), lp = f5(&m->pid, &p),
		    li = f5(&m->msgid, &i), ld = f5(&m->sd, &d);

		relay_iso(m, t, sizeof(t));
		n = snprintf(hdr, sz, "<%d>1 %s %.*s %.*s %.*s %.*s %.*s ", pri, t, lh, h, la, a,
			     lp, p, li, i, ld, d);
		break;
	}
	default:   /* rfc3164, local */
		relay_bsd(m, t, sizeof(t));
		n = snprintf(hdr, sz, "<%d>%s ", pri, t);
		if (fmt == LOG_FMT_RFC3164 && n >= 0 && (size_t)n < sz)
			n += snprintf(hdr + n, sz - (size_t)n, "%.*s ", hl, host);
		if (m->tag.len && n >= 0 && (size_t)n < sz)
			n += m->pid.len ?
			     snprintf(hdr + n, sz - (size_t)n, "%.*s[%.*s]: ", (int)m->tag.len,
				      m->tag.p, (int)m->pid.len, m->pid.p) :
			     snprintf(hdr + n, sz - (size_t)n, "%.*s: ", (int)m->tag.len, m->tag.p);
		break;
	}
	return n < 0 ? 0 : MIN((size_t)n, sz - 1);
}

void log_relay(const struct log_list *l, const struct syslog_msg *m)
{
	char hdr[1024];

	for (struct logger *lg = l->head; lg; lg = lg->next) {
		/* no PRI: the target's facility, and "notice" as RFC 3164 says */
		int facility = m->facility >= 0 ? m->facility : lg->facility;
		int level = m->level >= 0 ? m->level : LOG_L_NOTICE;
		enum log_format fmt = lg->format_set ? lg->format :
				      m->kind == SYSLOG_3164 ? LOG_FMT_RFC3164 :
				      m->kind == SYSLOG_5424 ? LOG_FMT_RFC5424 : LOG_FMT_RAW;

		if ((lg->fd < 0 && lg->type < LOG_T_TCP) || !log_admit(lg, &level))
			continue;
		log_emit(lg, hdr, relay_header(fmt, facility, level, m, hdr, sizeof(hdr)),
			 m->text.p, m->text.len);
	}
	if (l->use_global && l != &global.loggers)
		log_relay(&global.loggers, m);
}
