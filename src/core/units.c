/* Time, size and integer parsing for configuration values (units.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/units.h>

/* Reads the leading decimal digits of <s> into <v>; returns the first byte
 * after them, or NULL (with <err>) when there is no digit or it overflows. */
static const char *parse_digits(const char *s, uint64_t *v, const char *expect, const char **err)
{
	*v = 0;
	if (!s || !isdigit((unsigned char)*s)) {
		*err = expect;
		return NULL;
	}
	while (isdigit((unsigned char)*s)) {
		*v = *v * 10 + (uint64_t)(*s - '0');
		if (*v > UINT32_MAX) {
			*err = "value too large";
			return NULL;
		}
		s++;
	}
	return s;
}

int parse_time_ms(const char *s, unsigned dflt_unit, uint32_t *ms, const char **err)
{
	static const struct { const char *sfx; uint64_t num, den; } units[] = {
		{ "us", 1, 1000 }, { "ms", 1, 1 }, { "s", 1000, 1 },
		{ "m", 60000, 1 }, { "h", 3600000, 1 }, { "d", 86400000, 1 },
	};
	uint64_t v, res;
	const char *p;
	size_t i;

	p = parse_digits(s, &v, "expects a number followed by an optional unit (us, ms, s, m, h, d)", err);
	if (!p)
		return -1;
	if (!*p) {
		res = v * dflt_unit;
	} else {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(p, units[i].sfx) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0])) {
			*err = "unknown time unit (expects us, ms, s, m, h or d)";
			return -1;
		}
		res = (v * units[i].num + units[i].den - 1) / units[i].den;
	}
	if (res > INT32_MAX) {
		*err = "time too large (max is about 24 days)";
		return -1;
	}
	*ms = (uint32_t)res;
	return 0;
}

int parse_size(const char *s, uint32_t *out, const char **err)
{
	uint64_t v;
	const char *p = parse_digits(s, &v, "expects a number with an optional k, m or g suffix", err);

	if (!p)
		return -1;
	switch (*p) {
	case '\0': break;
	case 'k': case 'K': v <<= 10; p++; break;
	case 'm': case 'M': v <<= 20; p++; break;
	case 'g': case 'G': v <<= 30; p++; break;
	default:
		*err = "unknown size unit (expects k, m or g)";
		return -1;
	}
	if (*p) {
		*err = "trailing characters after size";
		return -1;
	}
	if (v > UINT32_MAX) {
		*err = "value too large";
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int parse_int(const char *s, long min, long max, long *out, const char **err)
{
	char *end;
	long v;

	if (!s || !*s) {
		*err = "expects an integer";
		return -1;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno == ERANGE) {
		*err = "expects an integer";
		return -1;
	}
	if (v < min || v > max) {
		*err = "integer out of range";
		return -1;
	}
	*out = v;
	return 0;
}
