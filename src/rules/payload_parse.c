/* Parsers of RDP's routing cookie and of distcc's tokens, for content
 * inspection (payload_parse.h): they read only <len> bytes and say when
 * more would be needed. */
#include <ctype.h>
#include <string.h>

#include <sluice/payload_parse.h>

/* Whether the <n> bytes at <p> are <s> in any case. */
static int same_nocase(const uint8_t *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (tolower(p[i]) != tolower((unsigned char)s[i]))
			return 0;
	return 1;
}

int rdp_cookie_parse(const uint8_t *p, size_t len, const char *name, size_t nlen,
                     const uint8_t **val, size_t *vlen)
{
	static const char word[] = "Cookie:";
	size_t i = RDP_COOKIE_OFF, n = sizeof(word) - 1, v;

	if (len < i + n)
		return len > i && !same_nocase(p + i, word, len - i) ? 0 : -1;
	if (!same_nocase(p + i, word, n))
		return 0;
	for (i += n; i < len && p[i] == ' '; i++)
		;
	if (name) {
		/* "<name>=": known as soon as it differs */
		size_t have = len - i < nlen ? len - i : nlen;

		if (!same_nocase(p + i, name, have))
			return 0;
		if (len - i <= nlen)
			return -1;
		if (p[i + nlen] != '=')
			return 0;
		i += nlen + 1;
	} else {
		while (i < len && p[i] != '=' && p[i] != '\r' && p[i] != '\n')
			i++;
		if (i == len)
			return -1;
		if (p[i] != '=')
			return 0;
		i++;
	}
	/* the value runs to the first CR, which must start the line's CRLF */
	for (v = i; i < len && p[i] != '\r'; i++)
		;
	if (i + 1 >= len)
		return -1;
	if (p[i + 1] != '\n')
		return 0;
	*val = p + v;
	*vlen = i - v;
	return 1;
}

/* The tokens that have no body: their parameter is a number. */
static int distcc_has_body(const uint8_t *tok)
{
	static const char bodyless[][4] = { "DIST", "ARGC", "NFIL", "STAT", "DONE" };

	for (size_t i = 0; i < sizeof(bodyless) / sizeof(bodyless[0]); i++)
		if (memcmp(tok, bodyless[i], 4) == 0)
			return 0;
	return 1;
}

int distcc_find(const uint8_t *p, size_t len, const char *tok, int occ, struct distcc_tok *t,
                size_t *need)
{
	size_t off = 0;
	int seen = 0;

	if (occ < 1)
		occ = 1;
	for (;;) {
		uint32_t param = 0;

		if (len < 12 || off > len - 12) {
			*need = off + 12;
			return -1;
		}
		for (int i = 4; i < 12; i++) {
			int c = p[off + i], d = isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10
									   : -1;

			if (d < 0)
				return 0;
			param = param << 4 | (uint32_t)d;
		}
		t->param = param;
		t->body = off + 12;
		t->body_len = distcc_has_body(p + off) ? param : 0;
		if (memcmp(p + off, tok, 4) == 0 && ++seen == occ)
			return 1;
		if (t->body_len > (size_t)-1 - t->body - 12) {
			*need = (size_t)-1;
			return -1;
		}
		off = t->body + t->body_len;
	}
}
