/* Reading syslog messages (log-forward): the framing of a TCP stream (RFC
 * 6587: octet counting or line feeds) and the header of a message (RFC 3164
 * or RFC 5424; anything else is a message without header). Zero-copy: the
 * results are slices of the caller's bytes. */
#ifndef SLUICE_SYSLOG_H
#define SLUICE_SYSLOG_H

#include <stddef.h>
#include <sys/types.h>

/* A slice of the message; len 0: absent (the "-" of RFC 5424 too). */
struct syslog_str {
	const char *p;
	size_t      len;
};

enum syslog_kind { SYSLOG_RAW, SYSLOG_3164, SYSLOG_5424 };

struct syslog_msg {
	enum syslog_kind  kind;
	int               facility;  /* from the PRI, -1 without one */
	int               level;     /* from the PRI, -1 without one */
	/* the time, when the header has one: its fields, and for RFC 5424 the
	 * fraction (".003") and zone ("Z", "+02:00") as written */
	int               has_time;
	int               year, mon, mday, hour, min, sec;   /* mon 0..11; year 0: none */
	struct syslog_str frac, zone;
	struct syslog_str host, tag, pid, msgid, sd;
	struct syslog_str text;      /* the message after the header */
};

/* Reads message <p> (<len> bytes) into <m>. Never fails: what does not
 * follow RFC 5424 or RFC 3164 (after an optional PRI) is a SYSLOG_RAW
 * message whose text is everything after the PRI. A trailing line feed
 * (or NUL) is left out of the text. */
void syslog_parse(const char *p, size_t len, struct syslog_msg *m);

/* The first message of TCP stream bytes <p> (<len> bytes): octet counting
 * ("<digits> <message>", when the first byte is a digit) or one line
 * (ended by a line feed; a carriage return before it is left out). Returns
 * the bytes used (> 0) with <*msg>/<*mlen> set, 0 when more bytes are
 * needed, -1 when the stream is invalid (a length above <max> or without
 * its space, a line longer than <max>). */
ssize_t syslog_frame(const char *p, size_t len, size_t max, const char **msg, size_t *mlen);

#endif
