/* Syslog message and stream parsing (syslog.h), for the log-forward relay:
 * RFC 5424 ("<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD MSG"), RFC 3164
 * ("<PRI>Mmm dd hh:mm:ss HOST TAG[PID]: MSG") and RFC 6587 framing. */
#include <string.h>

#include <sluice/syslog.h>

static const char months[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* <n> digits at <p> (<end> bound) as a number, or -1. */
static int num(const char *p, const char *end, int n)
{
	int v = 0;

	if (end - p < n)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!is_digit(p[i]))
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/* "<PRI>": 1 to 3 digits, at most 191. Returns the bytes read, 0 when
 * there is none. */
static size_t parse_pri(const char *p, const char *end, struct syslog_msg *m)
{
	const char *q = p + 1;
	int v = 0;

	if (p >= end || *p != '<')
		return 0;
	while (q < end && is_digit(*q) && q - p <= 3)
		v = v * 10 + (*q++ - '0');
	if (q == p + 1 || q >= end || *q != '>' || v > 191 || (q - p > 2 && p[1] == '0'))
		return 0;
	m->facility = v / 8;
	m->level = v % 8;
	return (size_t)(q + 1 - p);
}

/* The next space-delimited field from <*p>: stored in <s> ("-" and an
 * empty field give an absent one), <*p> moved past the space. Returns 0,
 * or -1 when no space ends it. */
static int field(const char **p, const char *end, struct syslog_str *s)
{
	const char *q = memchr(*p, ' ', (size_t)(end - *p));

	if (!q)
		return -1;
	s->p = *p;
	s->len = (size_t)(q - *p);
	if (s->len == 1 && **p == '-')
		s->len = 0;
	*p = q + 1;
	return 0;
}

/* RFC 5424 after "<PRI>": "1 " then the header. Returns 0, or -1. */
static int parse_5424(const char *p, const char *end, struct syslog_msg *m)
{
	struct syslog_str ts, app;

	if (end - p < 2 || p[0] != '1' || p[1] != ' ')
		return -1;
	p += 2;
	if (field(&p, end, &ts) == -1)
		return -1;
	if (ts.len) {
		/* YYYY-MM-DDThh:mm:ss[.frac](Z|+hh:mm|-hh:mm) */
		const char *t = ts.p, *te = ts.p + ts.len;

		if (ts.len < 20 || (m->year = num(t, te, 4)) < 0 || t[4] != '-' ||
		    (m->mon = num(t + 5, te, 2) - 1) < 0 || m->mon > 11 || t[7] != '-' ||
		    (m->mday = num(t + 8, te, 2)) < 1 || m->mday > 31 || t[10] != 'T' ||
		    (m->hour = num(t + 11, te, 2)) < 0 || m->hour > 23 || t[13] != ':' ||
		    (m->min = num(t + 14, te, 2)) < 0 || m->min > 59 || t[16] != ':' ||
		    (m->sec = num(t + 17, te, 2)) < 0 || m->sec > 60)
			return -1;
		t += 19;
		m->frac.p = t;
		if (t < te && *t == '.') {
			t++;
			while (t < te && is_digit(*t))
				t++;
			if (t - m->frac.p < 2)
				return -1;
		}
		m->frac.len = (size_t)(t - m->frac.p);
		m->zone.p = t;
		if (t < te && *t == 'Z')
			t++;
		else if (te - t == 6 && (*t == '+' || *t == '-') && num(t + 1, te, 2) >= 0 &&
			 t[3] == ':' && num(t + 4, te, 2) >= 0)
			t += 6;
		if (t != te || t == m->zone.p)
			return -1;
		m->zone.len = (size_t)(t - m->zone.p);
		m->has_time = 1;
	}
	if (field(&p, end, &m->host) == -1 || field(&p, end, &app) == -1 ||
	    field(&p, end, &m->pid) == -1 || field(&p, end, &m->msgid) == -1)
		return -1;
	m->tag = app;
	/* structured data: "-" or one or more "[...]" (']' escaped by '\') */
	if (p < end && *p == '-') {
		p++;
	} else if (p < end && *p == '[') {
		m->sd.p = p;
		while (p < end && *p == '[') {
			while (++p < end && *p != ']')
				if (*p == '\\' && p + 1 < end)
					p++;
			if (p >= end)
				return -1;
			p++;
		}
		m->sd.len = (size_t)(p - m->sd.p);
	} else {
		return -1;
	}
	if (p < end && *p != ' ')
		return -1;
	if (p < end)
		p++;
	m->text.p = p;
	m->text.len = (size_t)(end - p);
	m->kind = SYSLOG_5424;
	return 0;
}

/* RFC 3164 after "<PRI>": "Mmm dd hh:mm:ss HOST TAG[PID]: MSG" (the PID
 * part and the colon are optional, as relays see them). Returns 0, or -1. */
static int parse_3164(const char *p, const char *end, struct syslog_msg *m)
{
	const char *t;
	int mon;

	if (end - p < 16)
		return -1;
	for (mon = 0; mon < 12 && memcmp(p, months[mon], 3) != 0; mon++)
		;
	if (mon == 12 || p[3] != ' ' || p[15] != ' ')
		return -1;
	m->mon = mon;
	m->mday = p[4] == ' ' ? num(p + 5, end, 1) : num(p + 4, end, 2);
	if (m->mday < 1 || m->mday > 31 || p[6] != ' ' ||
	    (m->hour = num(p + 7, end, 2)) < 0 || m->hour > 23 || p[9] != ':' ||
	    (m->min = num(p + 10, end, 2)) < 0 || m->min > 59 || p[12] != ':' ||
	    (m->sec = num(p + 13, end, 2)) < 0 || m->sec > 60)
		return -1;
	m->year = 0;
	m->has_time = 1;
	p += 16;
	if (field(&p, end, &m->host) == -1)
		return -1;
	/* TAG: up to '[', ':' or a space */
	for (t = p; t < end && *t != '[' && *t != ':' && *t != ' '; t++)
		;
	m->tag.p = p;
	m->tag.len = (size_t)(t - p);
	if (t < end && *t == '[') {
		const char *c = memchr(t, ']', (size_t)(end - t));

		if (!c)
			return -1;
		m->pid.p = t + 1;
		m->pid.len = (size_t)(c - t - 1);
		t = c + 1;
	}
	if (t < end && *t == ':')
		t++;
	if (t < end && *t == ' ')
		t++;
	m->text.p = t;
	m->text.len = (size_t)(end - t);
	m->kind = SYSLOG_3164;
	return 0;
}

void syslog_parse(const char *p, size_t len, struct syslog_msg *m)
{
	const char *end = p + len, *body;

	memset(m, 0, sizeof(*m));
	m->facility = m->level = -1;
	while (end > p && (end[-1] == '\n' || end[-1] == '\0' || end[-1] == '\r'))
		end--;
	body = p + parse_pri(p, end, m);
	if (body > p) {
		struct syslog_msg save = *m;

		if (parse_5424(body, end, m) == 0)
			return;
		*m = save;
		if (parse_3164(body, end, m) == 0)
			return;
		*m = save;
	}
	m->kind = SYSLOG_RAW;
	m->text.p = body;
	m->text.len = (size_t)(end - body);
}

ssize_t syslog_frame(const char *p, size_t len, size_t max, const char **msg, size_t *mlen)
{
	if (!len)
		return 0;
	if (is_digit(p[0])) {
		size_t n = 0, i = 0;

		while (i < len && is_digit(p[i])) {
			n = n * 10 + (size_t)(p[i] - '0');
			if (n > max || ++i > 9)
				return -1;
		}
		if (i == len)
			return 0;
		if (p[i] != ' ' || p[0] == '0')
			return -1;
		if (len - i - 1 < n)
			return 0;
		*msg = p + i + 1;
		*mlen = n;
		return (ssize_t)(i + 1 + n);
	} else {
		const char *nl = memchr(p, '\n', len);
		size_t l;

		if (!nl)
			return len > max ? -1 : 0;
		l = (size_t)(nl - p);
		if (l > max)
			return -1;
		*msg = p;
		*mlen = l && p[l - 1] == '\r' ? l - 1 : l;
		return (ssize_t)(l + 1);
	}
}
