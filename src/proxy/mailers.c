/* E-mail alerts (mailers.h): the "mailers" section, the "email-alert"
 * keywords, and one SMTP client session per alert and mailer (greeting,
 * HELO, MAIL FROM, RCPT TO, DATA, QUIT), non-blocking on the loop and
 * bounded by "timeout mail". */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/mailers.h>
#include <sluice/proxy.h>
#include <sluice/str.h>
#include <sluice/units.h>

#define CFG_SEC_MAILERS  0x40000   /* mailers NAME (this module) */
#define MAIL_DEFAULT_TMO 10000     /* ms: timeout mail, as HAProxy */
#define MAIL_MAX_SESSIONS 256      /* alerts in flight; more are dropped (logged) */

struct mailer {
	struct mailer          *next;
	char                   *name;
	struct sockaddr_storage addr;
	socklen_t               addrlen;
};

struct mailers {
	struct mailers *next;
	char           *name;
	struct mailer  *list;
	uint32_t        timeout;     /* ms */
	const char     *conf_file;
	int             conf_line;
};

struct email_cfg {
	char                 *from, *to, *myhost, *section;
	int                   level;      /* LOG_L_*: alerts at this severity or above */
	const struct mailers *mailers;    /* resolved at post-parse; NULL: no alerts */
};

struct smtp_sess;

static struct {
	struct mailers   *sections;
	struct mailers   *cur;         /* the section being read */
	int               sessions;    /* SMTP sessions in flight ... */
	struct smtp_sess *live;        /* ... listed here */
} ml;

/* ---- settings ---- */

struct email_cfg *email_cfg_dup(const struct email_cfg *e)
{
	struct email_cfg *d;

	if (!e)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	*d = *e;
	d->from = e->from ? xstrdup(e->from) : NULL;
	d->to = e->to ? xstrdup(e->to) : NULL;
	d->myhost = e->myhost ? xstrdup(e->myhost) : NULL;
	d->section = e->section ? xstrdup(e->section) : NULL;
	return d;
}

void email_cfg_free(struct email_cfg *e)
{
	if (!e)
		return;
	free(e->from);
	free(e->to);
	free(e->myhost);
	free(e->section);
	free(e);
}

/* ---- SMTP sessions ---- */

/* One step of a session: what is sent (NULL: nothing, the greeting is
 * awaited), then the reply class expected (2: 2xx, 3: 3xx). */
struct smtp_step {
	char *send;
	int   want;
};

enum { ST_HELO, ST_FROM, ST_RCPT, ST_DATA, ST_BODY, ST_QUIT, ST_N };

struct smtp_sess {
	struct smtp_sess    *next, **pprev;   /* in ml.live */
	const struct mailer *m;
	const char          *section;
	int                  fd;
	ev_io                io;
	ev_timer             tmo;
	int                  step;       /* -1: greeting awaited, else ST_* sent, reply awaited */
	int                  connected;
	char                *out[ST_N];  /* what each step sends */
	size_t               sent;       /* bytes of out[step] written */
	char                 in[1024];   /* the reply being read */
	size_t               inlen;
};

static void smtp_end(struct smtp_sess *s, const char *why)
{
	if (why)
		log_event(LOG_L_WARNING, "email alert to mailer %s/%s failed: %s", s->section,
			  s->m->name, why);
	ev_io_stop(global.loop, &s->io);
	ev_timer_stop(global.loop, &s->tmo);
	if (s->fd >= 0)
		close(s->fd);
	for (int i = 0; i < ST_N; i++)
		free(s->out[i]);
	*s->pprev = s->next;
	if (s->next)
		s->next->pprev = s->pprev;
	free(s);
	ml.sessions--;
}

/* Sends what is left of the current step. Returns 0 when all went, 1 when
 * the socket is full, -1 on error. */
static int smtp_flush(struct smtp_sess *s)
{
	const char *p = s->out[s->step];
	size_t len = strlen(p);

	while (s->sent < len) {
		ssize_t n = send(s->fd, p + s->sent, len - s->sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 1 : -1;
		s->sent += (size_t)n;
	}
	return 0;
}

/* A complete reply in s->in (RFC 5321 4.2: "NNN-" lines, then "NNN "):
 * its code, 0 while it is incomplete, -1 when it is not a reply. */
static int smtp_reply(struct smtp_sess *s)
{
	size_t off = 0;

	for (;;) {
		const char *line = s->in + off, *eol = memchr(line, '\n', s->inlen - off);

		if (!eol)
			return 0;
		if (eol - line < 3 || line[0] < '1' || line[0] > '5')
			return -1;
		off = (size_t)(eol - s->in) + 1;
		if (eol - line > 3 && line[3] == '-')
			continue;
		return (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
	}
}

/* Moves to the next step: sends its command and awaits its reply. */
static void smtp_next(struct smtp_sess *s)
{
	int r;

	s->step++;
	s->sent = 0;
	s->inlen = 0;
	if (s->step == ST_N) {
		smtp_end(s, NULL);   /* QUIT answered: sent */
		return;
	}
	r = smtp_flush(s);
	if (r < 0) {
		smtp_end(s, strerror(errno));
		return;
	}
	ev_io_stop(global.loop, &s->io);
	ev_io_set(&s->io, s->fd, r ? EV_WRITE : EV_READ);
	ev_io_start(global.loop, &s->io);
}

static void smtp_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	static const int want[ST_N] = { 2, 2, 2, 3, 2, 2 };
	struct smtp_sess *s = container_of(w, struct smtp_sess, io);
	char why[160];
	ssize_t n;
	int code;

	if (!s->connected) {
		int err = 0;
		socklen_t l = sizeof(err);

		getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &l);
		if (err) {
			smtp_end(s, strerror(err));
			return;
		}
		s->connected = 1;
		ev_io_stop(loop, &s->io);
		ev_io_set(&s->io, s->fd, EV_READ);
		ev_io_start(loop, &s->io);
		return;
	}
	if (revents & EV_WRITE) {
		int r = smtp_flush(s);

		if (r < 0) {
			smtp_end(s, strerror(errno));
		} else if (r == 0) {
			ev_io_stop(loop, &s->io);
			ev_io_set(&s->io, s->fd, EV_READ);
			ev_io_start(loop, &s->io);
		}
		return;
	}
	n = recv(s->fd, s->in + s->inlen, sizeof(s->in) - 1 - s->inlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		smtp_end(s, n ? strerror(errno) : "connection closed by the mailer");
		return;
	}
	s->inlen += (size_t)n;
	code = smtp_reply(s);
	if (code == 0 && s->inlen < sizeof(s->in) - 1)
		return;
	if (code <= 0 || code / 100 != (s->step < 0 ? 2 : want[s->step])) {
		s->in[s->inlen] = 0;
		snprintf(why, sizeof(why), "unexpected reply '%.*s'", (int)strcspn(s->in, "\r\n"),
			 s->in);
		smtp_end(s, why);
		return;
	}
	smtp_next(s);
}

static void smtp_tmo_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	smtp_end(container_of(w, struct smtp_sess, tmo), "timeout");
}

/* The message: HAProxy's headers and its one-line body. */
static char *smtp_message(const struct email_cfg *e, const char *msg)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S %z (%Z)", &tm);
	/* a line starting with a dot is doubled (RFC 5321 4.5.2) */
	return str_fmt("From: %s\r\nTo: %s\r\nDate: %s\r\nSubject: [HAProxy Alert] %s\r\n\r\n"
		       "%s%s\r\n\r\n.\r\n", e->from, e->to, date, msg, *msg == '.' ? "." : "", msg);
}

static void smtp_start(const struct email_cfg *e, const struct mailer *m, const char *msg)
{
	struct smtp_sess *s;
	const char *host = e->myhost ? e->myhost : global.node ? global.node : "localhost";

	if (ml.sessions >= MAIL_MAX_SESSIONS) {
		log_event(LOG_L_WARNING, "email alert to mailer %s/%s dropped: %d alerts are being "
			  "sent already", e->section, m->name, ml.sessions);
		return;
	}
	s = xcalloc(1, sizeof(*s));
	ml.sessions++;
	s->next = ml.live;
	s->pprev = &ml.live;
	if (ml.live)
		ml.live->pprev = &s->next;
	ml.live = s;
	s->m = m;
	s->section = e->mailers->name;
	s->step = -1;
	s->out[ST_HELO] = str_fmt("HELO %s\r\n", host);
	s->out[ST_FROM] = str_fmt("MAIL FROM:<%s>\r\n", e->from);
	s->out[ST_RCPT] = str_fmt("RCPT TO:<%s>\r\n", e->to);
	s->out[ST_DATA] = xstrdup("DATA\r\n");
	s->out[ST_BODY] = smtp_message(e, msg);
	s->out[ST_QUIT] = xstrdup("QUIT\r\n");
	ev_init(&s->io, smtp_io_cb);
	ev_timer_init(&s->tmo, smtp_tmo_cb, (double)e->mailers->timeout / 1000.0, 0.);
	ev_timer_start(global.loop, &s->tmo);
	s->fd = socket(m->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd == -1 || (connect(s->fd, (const struct sockaddr *)&m->addr, m->addrlen) == -1 &&
			    errno != EINPROGRESS)) {
		smtp_end(s, strerror(errno));
		return;
	}
	ev_io_set(&s->io, s->fd, EV_WRITE);
	ev_io_start(global.loop, &s->io);
}

void email_alert_send(const struct proxy *px, int level, const char *msg)
{
	const struct email_cfg *e = chk_px_of(px)->email;
	char text[1024];
	size_t n;

	if (!e || !e->mailers || level > e->level || !global.loop)
		return;
	n = (size_t)snprintf(text, sizeof(text), "%s", msg);
	if (n && n < sizeof(text) && text[n - 1] == '.')
		text[n - 1] = 0;   /* as HAProxy: the line without its final dot */
	/* a server's words (a check's info) may be in it: no CR or LF may end
	 * the Subject or the DATA and start SMTP commands of theirs */
	str_blank_ctl(text);
	for (const struct mailer *m = e->mailers->list; m; m = m->next)
		smtp_start(e, m, text);
}

/* ---- configuration ---- */

static int sec_mailers(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct mailers *s;

	if (argc != 1) {
		cfg_alert(ctx, "'mailers' expects one name");
		return -1;
	}
	for (s = ml.sections; s; s = s->next)
		if (strcmp(s->name, argv[0]) == 0) {
			cfg_alert(ctx, "mailers section '%s' already defined at %s:%d", argv[0],
				  s->conf_file, s->conf_line);
			return -1;
		}
	s = xcalloc(1, sizeof(*s));
	s->name = xstrdup(argv[0]);
	s->timeout = MAIL_DEFAULT_TMO;
	s->conf_file = ctx->file;
	s->conf_line = ctx->line;
	s->next = ml.sections;
	ml.sections = s;
	ml.cur = s;
	return 0;
}

/* mailer <name> <ip>:<port> */
static int kw_mailer(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct mailer *m, **tail;
	struct addr_spec as;
	char *err = NULL;

	if (argc != 2) {
		cfg_alert(ctx, "expects <name> <ip>:<port>");
		return -1;
	}
	for (tail = &ml.cur->list; *tail; tail = &(*tail)->next)
		if (strcmp((*tail)->name, argv[0]) == 0) {
			cfg_alert(ctx, "mailer '%s' already defined in this section", argv[0]);
			return -1;
		}
	if (addr_parse(argv[1], &as, ADDR_F_RESOLVE, &err) == -1 || !as.port_lo ||
	    (as.ss.ss_family != AF_INET && as.ss.ss_family != AF_INET6)) {
		cfg_alert(ctx, "mailer '%s': %s", argv[0], err ? err : "expects an IP address and a "
			  "port");
		free(err);
		return -1;
	}
	m = xcalloc(1, sizeof(*m));
	m->name = xstrdup(argv[0]);
	m->addr = as.ss;
	m->addrlen = as.len;
	*tail = m;
	return 0;
}

/* timeout mail <time> */
static int kw_timeout_mail(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *err = NULL;

	if (argc != 1 || parse_time_ms(argv[0], 1, &ml.cur->timeout, &err) == -1 ||
	    !ml.cur->timeout) {
		cfg_alert(ctx, "expects a time, not zero%s%s", err ? ": " : "", err ? err : "");
		return -1;
	}
	return 0;
}

/* The proxy's own e-mail settings, created on first use. */
static struct email_cfg *email_own(struct proxy *px)
{
	struct chk_px *cp = chk_px_w(px);

	if (!cp->email) {
		cp->email = xcalloc(1, sizeof(*cp->email));
		cp->email->level = LOG_L_ALERT;
	}
	return cp->email;
}

/* The string settings of "email-alert", each a row (.arg: its offset). */
static int kw_email_str(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char **dst = (char **)((char *)email_own(ctx->px) + ctx->kw_row->arg);

	if (argc != 1 || !*argv[0]) {
		cfg_alert(ctx, "expects %s", ctx->kw_row->usage);
		return -1;
	}
	free(*dst);
	*dst = xstrdup(argv[0]);
	return 0;
}

static int kw_email_level(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int lv = argc == 1 ? log_level_parse(argv[0]) : -1;

	if (lv < 0) {
		cfg_alert(ctx, "expects a syslog level (emerg, alert, crit, err, warning, notice, "
			  "info or debug)%s%s%s", argc ? ", got '" : "", argc ? argv[0] : "",
			  argc ? "'" : "");
		return -1;
	}
	email_own(ctx->px)->level = lv;
	return 0;
}

/* Each proxy with e-mail settings: its mailers section found, the three
 * settings HAProxy requires present (else ignored, with its warning). */
static int mailers_postparse(void)
{
	int errs = 0;

	for (struct proxy *px = global.proxies; px; px = px->next) {
		struct email_cfg *e = px->chk ? px->chk->email : NULL;
		const struct mailers *s = NULL;

		if (!e)
			continue;
		if (e->section) {
			for (s = ml.sections; s && strcmp(s->name, e->section); s = s->next)
				;
			if (!s) {
				log_alert("%s:%d: proxy '%s': unable to find mailers '%s'", px->conf_file,
					  px->conf_line, px->name, e->section);
				errs++;
				continue;
			}
		}
		if (!e->from || !e->to || !s) {
			log_warning("%s:%d: 'email-alert' will be ignored for proxy '%s': it needs "
				    "'email-alert from', 'email-alert mailers' and 'email-alert to'",
				    px->conf_file, px->conf_line, px->name);
			continue;
		}
		if (!s->list)
			log_warning("%s:%d: mailers section '%s' has no mailer: no e-mail alert is sent",
				    s->conf_file, s->conf_line, s->name);
		e->mailers = s;
	}
	return errs;
}

static struct cfg_section mailers_sections[] = {
	{ "mailers", CFG_SEC_MAILERS, sec_mailers, NULL, NULL },
};

static struct cfg_kw mailers_kws[] = {
	{ "mailer", CFG_SEC_MAILERS, CFG_T_FUNC, 0, .parse = kw_mailer,
	  .usage = "<name> <ip>:<port>" },
	{ "timeout mail", CFG_SEC_MAILERS, CFG_T_FUNC, 0, .parse = kw_timeout_mail,
	  .usage = "<time>" },
	{ "email-alert from", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_email_str,
	  .arg = offsetof(struct email_cfg, from), .usage = "an e-mail address" },
	{ "email-alert to", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_email_str,
	  .arg = offsetof(struct email_cfg, to), .usage = "an e-mail address" },
	{ "email-alert myhostname", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_email_str,
	  .arg = offsetof(struct email_cfg, myhost), .usage = "a host name" },
	{ "email-alert mailers", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_email_str,
	  .arg = offsetof(struct email_cfg, section), .usage = "the name of a mailers section" },
	{ "email-alert level", CFG_SEC_PROXIES, CFG_T_FUNC, 0, .parse = kw_email_level,
	  .usage = "<level>" },
};

SLUICE_INIT(mailers_register)
{
	cfg_register_sections(mailers_sections, ARRAY_SIZE(mailers_sections));
	cfg_register(mailers_kws, ARRAY_SIZE(mailers_kws));
	cfg_register_postparse(mailers_postparse, 47);
}
