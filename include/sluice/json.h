/* JSON text (RFC 8259) read in place: the JSON path subset of json_query
 * ("$", ".<key>", "[<index>]") and the value found turned into a sample.
 * Bounded and non-recursive; shared by json_query and the jwt_*_query
 * converters. */
#ifndef SLUICE_JSON_H
#define SLUICE_JSON_H

#include <stddef.h>

#include <sluice/sample.h>

struct json_path;

/* Compiles the path <s> (<len> bytes): "$" then ".<key>" steps (a '.' in a
 * key written "\.") and "[<index>]" steps. Returns 0 with an allocated
 * <*jp> (free with json_path_free()), or -1 with an allocated <err>. */
int json_path_compile(const char *s, size_t len, struct json_path **jp, char **err);
void json_path_free(void *jp);

/* The value at <jp> in the JSON text <p> (<len> bytes): returns 1 with
 * [*vs, *ve) its text (containers included, spaces excluded), or 0 when
 * the path is absent or the text on the way is not valid JSON. */
int json_path_find(const struct json_path *jp, const char *p, size_t len, const char **vs,
                   const char **ve);

/* The sample of json_query for the value at <jp> in <p> (<len> bytes):
 * a string (unescaped, in a scratch area), a boolean, or a number as a
 * string ("%g") or, when <as_int>, as an integer (its integer part, within
 * +/-(2^53-1)). null, objects, arrays, absent paths and malformed text
 * give none. Returns 1 with <smp> set, or 0. */
int json_query_smp(const struct json_path *jp, int as_int, const char *p, size_t len,
                   struct sample *smp);

/* Argument checker shared by json_query(<path>[,int]) and the
 * jwt_*_query([<path>][,int]) converters: a[<i>] is the path (compiled into
 * its .ptr), a[<i>+1] the optional output type ("int": .sint = 1).
 * Returns 0, or -1 with an allocated <err>. */
int json_query_check_args(struct smp_arg *a, char **err);

#endif
