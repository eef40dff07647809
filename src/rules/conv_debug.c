/* The debug([<prefix>][,<destination>]) converter (sample.h): writes the
 * sample's type and value, "[debug] <prefix>: type=<type> <value>", one
 * line, to the standard output or error, and passes the sample on as it
 * is. HAProxy's default destination is the "buf0" ring read with "show
 * events"; sluice has no rings, so the destination must be "stdout" or
 * "stderr" and anything else (the default included) is refused at start-up
 * with a message saying so. The write is one synchronous write() of at
 * most DEBUG_LINE_MAX bytes: a debugging aid, not for production traffic. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sluice/common.h>
#include <sluice/sample.h>
#include <sluice/str.h>

#define DEBUG_LINE_MAX 2048

static int conv_check_debug(struct smp_arg *a, char **err, const void *priv)
{
	const char *dst = a[1].type == ARGT_STR ? a[1].str : NULL;

	if (dst && strcmp(dst, "stdout") == 0) {
		a[1].sint = STDOUT_FILENO;
		return 0;
	}
	if (dst && strcmp(dst, "stderr") == 0) {
		a[1].sint = STDERR_FILENO;
		return 0;
	}
	*err = str_fmt("destination '%s' is a ring buffer, which sluice does not have; "
		       "name 'stderr' or 'stdout' (debug(<prefix>,stderr))", dst ? dst : "buf0");
	return -1;
}

/* HAProxy's names of the sample types, as its debug lines show them. */
static const char *debug_type(enum smp_type t)
{
	switch (t) {
	case SMP_T_BOOL: return "bool";
	case SMP_T_SINT: return "sint";
	case SMP_T_IPV4: return "ipv4";
	case SMP_T_IPV6: return "ipv6";
	case SMP_T_STR:  return "str";
	case SMP_T_BIN:  return "bin";
	default:         return "any";
	}
}

/* Appends <len> bytes of <p> at line[*o], non-printable bytes and '\' as
 * \xHH, stopping (with "...") before DEBUG_LINE_MAX - 1. */
static void debug_put(char *line, size_t *o, const char *p, size_t len)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (*o + 8 > DEBUG_LINE_MAX) {
			memcpy(line + *o, "...", 3);
			*o += 3;
			return;
		}
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			line[(*o)++] = (char)c;
		} else {
			line[(*o)++] = '\\';
			line[(*o)++] = 'x';
			line[(*o)++] = hx[c >> 4];
			line[(*o)++] = hx[c & 15];
		}
	}
}

static int conv_debug(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	char line[DEBUG_LINE_MAX], val[64];
	const char *prefix = a[0].type == ARGT_STR && a[0].len ? a[0].str : "debug";
	size_t o = 0;
	ssize_t w;

	debug_put(line, &o, "[debug] ", 8);
	debug_put(line, &o, prefix, strlen(prefix));
	debug_put(line, &o, ": type=", 7);
	debug_put(line, &o, debug_type(smp->type), strlen(debug_type(smp->type)));
	line[o++] = ' ';
	if (smp->type == SMP_T_STR || smp->type == SMP_T_BIN)
		debug_put(line, &o, smp->u.str.p, smp->u.str.len);
	else
		debug_put(line, &o, val, smp_to_text(smp, val, sizeof(val)));
	line[o++] = '\n';
	w = write((int)a[1].sint, line, o);
	(void)w;   /* a debugging aid: a lost line changes nothing */
	return 1;
}

static const struct smp_conv_kw debug_convs[] = {
	{ "debug", conv_debug, { ARGT_STR, ARGT_STR }, 0, SMP_T_ANY, SMP_T_ANY, conv_check_debug,
	  NULL },
};

SLUICE_INIT(conv_debug_register)
{
	smp_register_convs(debug_convs, ARRAY_SIZE(debug_convs));
}
