/* Configuration lexer: splits one line into words with HAProxy's rules
 * (comments, backslash escapes, 'literal' and "expanding" quotes, ${VAR},
 * ${VAR-default} and ${VAR[*]} word splitting). */
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

#endif
