/* The URI normalisers of "http-request normalize-uri" (HAProxy 2.6's set):
 * each rewrites one part of a request target into a caller-owned buffer,
 * never reading or writing past the lengths it is given. */
#ifndef SLUICE_URI_NORM_H
#define SLUICE_URI_NORM_H

#include <stddef.h>

enum uri_norm {
	URI_N_FRAGMENT_ENCODE,        /* '#' becomes "%23" */
	URI_N_FRAGMENT_STRIP,         /* the fragment ('#' and after) goes */
	URI_N_PATH_MERGE_SLASHES,     /* "//" runs in the path become one '/' */
	URI_N_PATH_STRIP_DOT,         /* "." segments of the path go */
	URI_N_PATH_STRIP_DOTDOT,      /* ".." segments merge with the one before */
	URI_N_PERCENT_DECODE_UNRESERVED, /* %XX of an unreserved character decoded */
	URI_N_PERCENT_TO_UPPERCASE,   /* the hex digits of %xx upper-cased */
	URI_N_QUERY_SORT_BY_NAME,     /* query parameters sorted by name, stably */
	URI_N_COUNT
};

#define URI_NF_FULL   0x1   /* path-strip-dotdot: ".." at the start go too */
#define URI_NF_STRICT 0x1   /* percent-*: an invalid %-sequence is an error */

/* Errors of uri_normalize(). */
#define URI_NORM_FULL    (-1)   /* the result does not fit <size> */
#define URI_NORM_INVALID (-2)   /* URI_NF_STRICT: an invalid %-sequence */

/* The name of normaliser <n> ("path-strip-dotdot"). */
const char *uri_norm_name(enum uri_norm n);

/* Applies normaliser <n> (with URI_NF_* <flags>) to request target <uri>
 * (<len> bytes: origin form "/p?q#f", absolute form "http://h/p?q", or
 * another form, which only the fragment normalisers may change) and writes
 * the result into <out> (<size> bytes, not NUL-terminated; it must not
 * overlap <uri>). The path is what follows the scheme and authority up to
 * the first '?' or '#', the query what follows the '?' up to a '#'.
 * Returns the length written, URI_NORM_FULL (the result, or a step of the
 * work, does not fit: <len> + 1 bytes always suffice, 3 * <len> for
 * fragment-encode) or URI_NORM_INVALID. */
long uri_normalize(enum uri_norm n, unsigned flags, const char *uri, size_t len, char *out,
                   size_t size);

#endif
