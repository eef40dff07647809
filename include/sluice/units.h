/* Parsing of HAProxy time and size values ("5s", "100ms", "16k"). */
#ifndef SLUICE_UNITS_H
#define SLUICE_UNITS_H

#include <stdint.h>

/* Parses a time with an optional unit (us ms s m h d; none means <dflt_unit>
 * milliseconds per unit, i.e. 1 for ms). Stores milliseconds in <ms>, rounding
 * microseconds up. Returns 0, or -1 with <err> pointing to a static message. */
int parse_time_ms(const char *s, unsigned dflt_unit, uint32_t *ms, const char **err);

/* Parses a size with an optional k/m/g suffix (powers of 1024). Returns 0, or
 * -1 with <err> set. Values over UINT32_MAX are refused. */
int parse_size(const char *s, uint32_t *out, const char **err);

/* Parses a decimal integer in [min, max]. Returns 0 or -1 with <err> set. */
int parse_int(const char *s, long min, long max, long *out, const char **err);

#endif
