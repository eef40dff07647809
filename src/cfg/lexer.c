/* Line lexer for the configuration language (see lexer.h for the rules). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/lexer.h>
#include <sluice/str.h>

struct lex {
	char  *out;
	size_t outsz, o;      /* output buffer, its size, write offset */
	char **words;
	int    maxw, nw;
	int    inword;        /* a word is open (even if empty, e.g. "") */
	struct cfg_lex_err *err;
};

static int lex_fail(struct lex *lx, size_t pos, const char *msg)
{
	lx->err->pos = pos;
	lx->err->msg = msg;
	return -1;
}

static int lex_open_word(struct lex *lx, size_t pos)
{
	if (lx->inword)
		return 0;
	if (lx->nw >= lx->maxw)
		return lex_fail(lx, pos, "too many words on the line");
	lx->words[lx->nw++] = lx->out + lx->o;
	lx->inword = 1;
	return 0;
}

static int lex_put(struct lex *lx, size_t pos, char c)
{
	if (lex_open_word(lx, pos) == -1)
		return -1;
	if (lx->o + 1 >= lx->outsz)
		return lex_fail(lx, pos, "line too long");
	lx->out[lx->o++] = c;
	return 0;
}

static int lex_close_word(struct lex *lx, size_t pos)
{
	if (!lx->inword)
		return 0;
	if (lx->o >= lx->outsz)
		return lex_fail(lx, pos, "line too long");
	lx->out[lx->o++] = '\0';
	lx->inword = 0;
	return 0;
}


/* Handles a backslash at <line>[i]; returns the number of input bytes used,
 * or -1. Unknown escapes keep the backslash so that regexes survive. */
static int lex_escape(struct lex *lx, const char *line, size_t len, size_t i)
{
	char c;
	int h, l;

	if (i + 1 >= len)
		return lex_put(lx, i, '\\') == -1 ? -1 : 1;
	c = line[i + 1];
	if (c == '\0')
		return lex_fail(lx, i + 1, "NUL byte in configuration line");
	switch (c) {
	case ' ': case '\t': case '\\': case '#': case '\'': case '"': case '$':
		return lex_put(lx, i, c) == -1 ? -1 : 2;
	case 'r': return lex_put(lx, i, '\r') == -1 ? -1 : 2;
	case 'n': return lex_put(lx, i, '\n') == -1 ? -1 : 2;
	case 't': return lex_put(lx, i, '\t') == -1 ? -1 : 2;
	case 'x':
		if (i + 3 >= len || (h = str_hex_digit(line[i + 2])) < 0 ||
		    (l = str_hex_digit(line[i + 3])) < 0)
			return lex_fail(lx, i, "invalid \\x escape (expects two hex digits)");
		return lex_put(lx, i, (char)(h * 16 + l)) == -1 ? -1 : 4;
	default:
		if (lex_put(lx, i, '\\') == -1 || lex_put(lx, i, c) == -1)
			return -1;
		return 2;
	}
}

/* Expands "${NAME}", "${NAME-default}" or "${NAME[*]}" at <line>[i] (which
 * is '$' followed by '{'). Returns input bytes used or -1. */
static int lex_env(struct lex *lx, const char *line, size_t len, size_t i)
{
	char name[256];
	const char *val, *dflt = NULL;
	size_t j = i + 2, n = 0, dlen = 0;
	int split = 0;

	while (j < len && line[j] != '}' && line[j] != '-' && line[j] != '[') {
		if (!(isalnum((unsigned char)line[j]) || line[j] == '_'))
			return lex_fail(lx, j, "invalid character in environment variable name");
		if (n + 1 >= sizeof(name))
			return lex_fail(lx, j, "environment variable name too long");
		name[n++] = line[j++];
	}
	name[n] = '\0';
	if (j < len && line[j] == '-') {
		dflt = line + ++j;
		while (j < len && line[j] != '}') {
			if (line[j] == '\0')
				return lex_fail(lx, j, "NUL byte in configuration line");
			j++;
		}
		dlen = (size_t)(line + j - dflt);
	} else if (j < len && line[j] == '[') {
		if (j + 3 >= len || strncmp(line + j, "[*]", 3) != 0)
			return lex_fail(lx, j, "expects '[*]' or '}' after the variable name");
		split = 1;
		j += 3;
	}
	if (j >= len || line[j] != '}')
		return lex_fail(lx, i, "missing closing '}' in environment variable");
	if (n == 0)
		return lex_fail(lx, i, "empty environment variable name");

	val = getenv(name);
	if (!val && dflt) {
		for (size_t k = 0; k < dlen; k++)
			if (lex_put(lx, i, dflt[k]) == -1)
				return -1;
		return (int)(j + 1 - i);
	}
	if (!val)
		val = "";
	/* Make sure "${EMPTY}" still opens a word (an empty argument). */
	if (!split && lex_open_word(lx, i) == -1)
		return -1;
	for (; *val; val++) {
		if (split && (*val == ' ' || *val == '\t')) {
			if (lex_close_word(lx, i) == -1)
				return -1;
			continue;
		}
		if (lex_put(lx, i, *val) == -1)
			return -1;
	}
	return (int)(j + 1 - i);
}

int cfg_lex_line(const char *line, size_t len, char *out, size_t outsz,
                 char **words, int maxw, struct cfg_lex_err *err)
{
	struct lex lx = { out, outsz, 0, words, maxw, 0, 0, err };
	enum { Q_NONE, Q_SINGLE, Q_DOUBLE } q = Q_NONE;
	size_t i = 0, qstart = 0;
	int used;

	if (outsz == 0)
		return lex_fail(&lx, 0, "line too long");
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;

	while (i < len) {
		char c = line[i];

		if (c == '\0')
			return lex_fail(&lx, i, "NUL byte in configuration line");
		if (q == Q_SINGLE) {
			if (c == '\'') {
				q = Q_NONE;
				i++;
				continue;
			}
			if (lex_put(&lx, i++, c) == -1)
				return -1;
			continue;
		}
		if (q == Q_NONE && (c == ' ' || c == '\t')) {
			if (lex_close_word(&lx, i++) == -1)
				return -1;
			continue;
		}
		if (q == Q_NONE && c == '#')
			break;
		if (c == '\\') {
			if ((used = lex_escape(&lx, line, len, i)) == -1)
				return -1;
			i += (size_t)used;
			continue;
		}
		if (q == Q_NONE && c == '\'') {
			if (lex_open_word(&lx, i) == -1)
				return -1;
			q = Q_SINGLE;
			qstart = i++;
			continue;
		}
		if (c == '"') {
			if (q == Q_DOUBLE) {
				q = Q_NONE;
			} else {
				if (lex_open_word(&lx, i) == -1)
					return -1;
				q = Q_DOUBLE;
				qstart = i;
			}
			i++;
			continue;
		}
		if (q == Q_DOUBLE && c == '$' && i + 1 < len && line[i + 1] == '{') {
			if ((used = lex_env(&lx, line, len, i)) == -1)
				return -1;
			i += (size_t)used;
			continue;
		}
		if (lex_put(&lx, i++, c) == -1)
			return -1;
	}
	if (q == Q_SINGLE)
		return lex_fail(&lx, qstart, "unterminated single quote");
	if (q == Q_DOUBLE)
		return lex_fail(&lx, qstart, "unterminated double quote");
	if (lex_close_word(&lx, i) == -1)
		return -1;
	return lx.nw;
}
