/* Line lexer for the configuration language (see lexer.h for the rules). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/lexer.h>
#include <sluice/str.h>

struct lex {
	char  *out;
	size_t outsz, o;      /* output buffer, its size, write offset */
	char **words;
	int    maxw, nw;
	int    inword;        /* a word is open (even if empty, e.g. "") */
	struct cfg_lex_err *err;
	const struct cfg_lex_pos *pos;   /* for ${.FILE}...; may be NULL */
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

static int env_name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

/* The value of the pseudo-variable <name> (".FILE", ".LINE", ".SECTION"),
 * written in <buf>; NULL when <name> is none of them. */
static const char *lex_pseudo(const struct lex *lx, const char *name, char *buf, size_t sz)
{
	const struct cfg_lex_pos *p = lx->pos;

	if (strcmp(name, ".FILE") == 0)
		return p && p->file ? p->file : "";
	if (strcmp(name, ".LINE") == 0) {
		snprintf(buf, sz, "%d", p ? p->line : 0);
		return buf;
	}
	if (strcmp(name, ".SECTION") == 0)
		return p && p->section ? p->section : "";
	return NULL;
}

/* Writes <val> at input position <i>, split at spaces and tabs into words
 * when <split>. Returns 0 or -1. */
static int lex_put_value(struct lex *lx, size_t i, const char *val, int split)
{
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
	return 0;
}

/* Expands "$NAME" at <line>[i] (a '$' followed by a letter or '_'): the
 * longest run of letters, digits and '_'. Returns input bytes used or -1. */
static int lex_env_bare(struct lex *lx, const char *line, size_t len, size_t i)
{
	char name[256];
	size_t j = i + 1, n = 0;
	const char *val;

	while (j < len && (isalnum((unsigned char)line[j]) || line[j] == '_')) {
		if (n + 1 >= sizeof(name))
			return lex_fail(lx, j, "environment variable name too long");
		name[n++] = line[j++];
	}
	name[n] = '\0';
	val = getenv(name);
	if (lex_put_value(lx, i, val ? val : "", 0) == -1)
		return -1;
	return (int)(j - i);
}

/* Expands "${NAME}", "${NAME-default}", "${NAME[*]}" or a pseudo-variable
 * "${.FILE}" at <line>[i] (which is '$' followed by '{'). Returns input
 * bytes used or -1. */
static int lex_env(struct lex *lx, const char *line, size_t len, size_t i)
{
	char name[256], num[24];
	const char *val, *dflt = NULL;
	size_t j = i + 2, n = 0, dlen = 0;
	int split = 0;

	if (j < len && line[j] == '.')
		name[n++] = line[j++];
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
	if (n == 0 || (n == 1 && name[0] == '.'))
		return lex_fail(lx, i, "empty environment variable name");

	if (name[0] == '.') {
		val = lex_pseudo(lx, name, num, sizeof(num));
		if (!val)
			return lex_fail(lx, i, "unknown pseudo-variable (expects ${.FILE}, ${.LINE} "
					"or ${.SECTION})");
	} else {
		val = getenv(name);
	}
	if (!val && dflt) {
		for (size_t k = 0; k < dlen; k++)
			if (lex_put(lx, i, dflt[k]) == -1)
				return -1;
		return (int)(j + 1 - i);
	}
	if (lex_put_value(lx, i, val ? val : "", split) == -1)
		return -1;
	return (int)(j + 1 - i);
}

char *cfg_env_expand(const char *s)
{
	struct dstr d = { 0 };
	const char *p = strchr(s, '$');

	if (!p)
		return NULL;
	dstr_printf(&d, "%.*s", (int)(p - s), s);
	while (*p) {
		const char *q = p + 1, *name, *val;
		size_t n;
		char buf[256];

		if (*p != '$' || !(*q == '{' || env_name_start(*q))) {
			dstr_printf(&d, "%c", *p++);
			continue;
		}
		if (*q == '{') {
			name = q + 1;
			n = strcspn(name, "}");
			if (!name[n]) {   /* no closing brace: left as written */
				dstr_printf(&d, "%s", p);
				break;
			}
			p = name + n + 1;
		} else {
			name = q;
			for (n = 0; isalnum((unsigned char)name[n]) || name[n] == '_'; n++)
				;
			p = name + n;
		}
		snprintf(buf, sizeof(buf), "%.*s", (int)n, name);
		val = getenv(buf);
		if (val)
			dstr_printf(&d, "%s", val);
	}
	return d.p ? d.p : xstrdup("");
}

int cfg_lex_line(const char *line, size_t len, char *out, size_t outsz,
                 char **words, int maxw, struct cfg_lex_err *err)
{
	return cfg_lex_line_at(line, len, out, outsz, words, maxw, err, NULL);
}

int cfg_lex_line_at(const char *line, size_t len, char *out, size_t outsz,
                    char **words, int maxw, struct cfg_lex_err *err,
                    const struct cfg_lex_pos *pos)
{
	struct lex lx = { out, outsz, 0, words, maxw, 0, 0, err, pos };
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
		if (q == Q_DOUBLE && c == '$' && i + 1 < len &&
		    (line[i + 1] == '{' || env_name_start(line[i + 1]))) {
			used = line[i + 1] == '{' ? lex_env(&lx, line, len, i) :
			       lex_env_bare(&lx, line, len, i);
			if (used == -1)
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
