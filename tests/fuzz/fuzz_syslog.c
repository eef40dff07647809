/* libFuzzer harness for the syslog parser of log-forward (src/core/
 * syslog.c): no crash or overread on any input; every slice of a parsed
 * message lies within it, and framing never claims more bytes than given. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/syslog.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const struct syslog_str *s, const char *b, size_t n)
{
	if (s->len && (s->p < b || s->p + s->len > b + n))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *b = malloc(size ? size : 1);
	struct syslog_msg m;
	size_t off = 0;

	memcpy(b, data, size);
	syslog_parse(b, size, &m);
	inside(&m.text, b, size);
	inside(&m.host, b, size);
	inside(&m.tag, b, size);
	inside(&m.pid, b, size);
	inside(&m.msgid, b, size);
	inside(&m.sd, b, size);
	inside(&m.frac, b, size);
	inside(&m.zone, b, size);
	if (m.kind != SYSLOG_RAW && (m.mon < 0 || m.mon > 11))
		__builtin_trap();
	/* the same bytes as a TCP stream */
	while (off < size) {
		const char *msg;
		size_t ml;
		ssize_t r = syslog_frame(b + off, size - off, 4096, &msg, &ml);

		if (r <= 0)
			break;
		if ((size_t)r > size - off || msg < b + off || msg + ml > b + off + (size_t)r)
			__builtin_trap();
		syslog_parse(msg, ml, &m);
		inside(&m.text, msg, ml);
		off += (size_t)r;
	}
	free(b);
	return 0;
}
