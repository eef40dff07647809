/* Configuration lexer: splits one line into words with HAProxy's rules
 * (comments, backslash escapes, 'literal' and "expanding" quotes, $VAR,
 * ${VAR}, ${VAR-default}, ${VAR[*]} word splitting and the pseudo-variables
 * ${.FILE}, ${.LINE}, ${.SECTION}). */
#ifndef SLUICE_LEXER_H
#define SLUICE_LEXER_H

#include <stddef.h>

#define CFG_MAX_WORDS 64

struct cfg_lex_err {
	size_t      pos;   /* byte offset in the input line where it went wrong */
	const char *msg;   /* static description */
};

/* Splits <line> (<len> bytes, no trailing newline needed; a trailing CR or LF
 * is ignored) into at most <maxw> words. Each word is copied NUL-terminated
 * into <out> (<outsz> bytes, caller-owned) and <words>[i] points into it.
 * Environment variables are read with getenv().
 * Returns the number of words (0 for a blank or comment line), or -1 on error
 * with <err> filled (unterminated quote or brace, bad \x escape, too many words,
 * output too long). */
int cfg_lex_line(const char *line, size_t len, char *out, size_t outsz,
                 char **words, int maxw, struct cfg_lex_err *err);

/* Where the line comes from, for the pseudo-variables "${.FILE}",
 * "${.LINE}" and "${.SECTION}" (the name of the section being read, empty
 * outside one or for an unnamed one). */
struct cfg_lex_pos {
	const char *file;
	int         line;
	const char *section;
};

/* cfg_lex_line() with the pseudo-variables taken from <pos> (NULL: they
 * expand to nothing). */
int cfg_lex_line_at(const char *line, size_t len, char *out, size_t outsz,
                    char **words, int maxw, struct cfg_lex_err *err,
                    const struct cfg_lex_pos *pos);

/* Expands "$NAME" and "${NAME}" in <s>, as HAProxy does in the addresses of
 * bind, server and log lines even outside double quotes (an unset variable
 * is empty). Returns an allocated string (the caller frees), or NULL when
 * <s> holds no '$' (use <s> as it is). */
char *cfg_env_expand(const char *s);

#endif
