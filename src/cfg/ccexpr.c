/* Recursive-descent evaluator for `-cc` and `.if` conditions (ccexpr.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/ccexpr.h>
#include <sluice/common.h>
#include <sluice/version.h>

#define CC_MAX_DEPTH 64
#define CC_MAX_ARGS  4
#define CC_ARG_LEN   256

struct cc {
	const char *s;     /* whole expression */
	size_t      p;     /* current offset */
	int         depth;
	const char *err;
	size_t      errpos;
};

static int cc_fail(struct cc *c, const char *msg)
{
	if (!c->err) {
		c->err = msg;
		c->errpos = c->p;
	}
	return -1;
}

static void cc_skip(struct cc *c)
{
	while (c->s[c->p] == ' ' || c->s[c->p] == '\t')
		c->p++;
}

int cc_version_cmp(const char *a, const char *b)
{
	for (int i = 0; i < 4; i++) {
		long va = 0, vb = 0;

		if (isdigit((unsigned char)*a))
			va = strtol(a, (char **)&a, 10);
		if (isdigit((unsigned char)*b))
			vb = strtol(b, (char **)&b, 10);
		if (va != vb)
			return va < vb ? -1 : 1;
		a += (*a == '.');
		b += (*b == '.');
	}
	return 0;
}

/* Reads one function argument up to ',' or ')' (quotes allowed). */
static int cc_arg(struct cc *c, char *out)
{
	size_t n = 0;
	char q = 0;

	cc_skip(c);
	while (c->s[c->p] && (q || (c->s[c->p] != ',' && c->s[c->p] != ')'))) {
		char ch = c->s[c->p++];

		if ((ch == '"' || ch == '\'') && (!q || q == ch)) {
			q = q ? 0 : ch;
			continue;
		}
		if (n + 1 >= CC_ARG_LEN)
			return cc_fail(c, "argument too long");
		out[n++] = ch;
	}
	if (q)
		return cc_fail(c, "unterminated quote in argument");
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		n--;
	out[n] = '\0';
	return 0;
}

static int cc_call(struct cc *c, const char *fn, size_t fnlen)
{
	static const struct { const char *name; int nargs; } fns[] = {
		{ "version_atleast", 1 }, { "version_before", 1 }, { "feature", 1 },
		{ "defined", 1 }, { "streq", 2 }, { "strneq", 2 },
		{ "ssllib_name_startswith", 1 }, { "openssl_version_atleast", 1 },
		{ "openssl_version_before", 1 },
	};
	char args[CC_MAX_ARGS][CC_ARG_LEN];
	int nargs = 0, idx = -1;

	for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
		if (strlen(fns[i].name) == fnlen && !strncmp(fns[i].name, fn, fnlen))
			idx = (int)i;
	if (idx < 0) {
		c->p -= fnlen;
		return cc_fail(c, "unknown function (expects version_atleast, version_before, "
			       "feature, defined, streq, strneq, ssllib_name_startswith, "
			       "openssl_version_atleast or openssl_version_before)");
	}
	c->p++; /* '(' */
	cc_skip(c);
	if (c->s[c->p] == ')') {
		/* "f()": no argument at all, not one empty argument */
		c->p++;
		return cc_fail(c, "wrong number of arguments");
	}
	for (;;) {
		if (nargs == CC_MAX_ARGS)
			return cc_fail(c, "too many arguments");
		if (cc_arg(c, args[nargs]) == -1)
			return -1;
		nargs++;
		if (c->s[c->p] == ')')
			break;
		if (c->s[c->p] != ',')
			return cc_fail(c, "missing ')' after function arguments");
		c->p++;
	}
	c->p++;
	if (nargs != fns[idx].nargs)
		return cc_fail(c, "wrong number of arguments");
	switch (idx) {
	case 0: return cc_version_cmp(SLUICE_CFG_LEVEL, args[0]) >= 0;
	case 1: return cc_version_cmp(SLUICE_CFG_LEVEL, args[0]) < 0;
	case 2: return version_has_feature(args[0]);
	case 3: return getenv(args[0]) != NULL;
	case 4: return strcmp(args[0], args[1]) == 0;
	case 5: return strcmp(args[0], args[1]) != 0;
	case 6: return strncmp(version_ssllib_name(), args[0], strlen(args[0])) == 0;
	case 7: return *version_ssllib_number() &&
		       cc_version_cmp(version_ssllib_number(), args[0]) >= 0;
	default: return *version_ssllib_number() &&
		        cc_version_cmp(version_ssllib_number(), args[0]) < 0;
	}
}

static int cc_or(struct cc *c);

static int cc_term(struct cc *c)
{
	size_t start;
	int v;

	cc_skip(c);
	if (++c->depth > CC_MAX_DEPTH)
		return cc_fail(c, "expression nested too deeply");
	if (c->s[c->p] == '!') {
		c->p++;
		v = cc_term(c);
		c->depth--;
		return v < 0 ? v : !v;
	}
	if (c->s[c->p] == '(') {
		c->p++;
		v = cc_or(c);
		if (v < 0)
			return v;
		cc_skip(c);
		if (c->s[c->p] != ')')
			return cc_fail(c, "missing ')'");
		c->p++;
		c->depth--;
		return v;
	}
	start = c->p;
	while (isalnum((unsigned char)c->s[c->p]) || c->s[c->p] == '_' ||
	       c->s[c->p] == '.' || c->s[c->p] == '-')
		c->p++;
	if (c->p == start)
		return cc_fail(c, "expects a term, '!' or '('");
	if (c->s[c->p] == '(') {
		v = cc_call(c, c->s + start, c->p - start);
		c->depth--;
		return v;
	}
	/* A bare word: a number is true when non-zero; other words are errors. */
	for (size_t i = start; i < c->p; i++)
		if (!isdigit((unsigned char)c->s[i])) {
			c->p = start;
			return cc_fail(c, "unknown term (a function call or a number is expected)");
		}
	c->depth--;
	return strtol(c->s + start, NULL, 10) != 0;
}

static int cc_and(struct cc *c)
{
	int v = cc_term(c), r;

	while (v >= 0) {
		cc_skip(c);
		if (strncmp(c->s + c->p, "&&", 2) != 0)
			break;
		c->p += 2;
		r = cc_term(c);
		if (r < 0)
			return r;
		v = v && r;
	}
	return v;
}

static int cc_or(struct cc *c)
{
	int v = cc_and(c), r;

	while (v >= 0) {
		cc_skip(c);
		if (strncmp(c->s + c->p, "||", 2) != 0)
			break;
		c->p += 2;
		r = cc_and(c);
		if (r < 0)
			return r;
		v = v || r;
	}
	return v;
}

int cc_eval(const char *expr, const char **err, size_t *errpos)
{
	struct cc c = { expr, 0, 0, NULL, 0 };
	int v;

	/* An empty condition is false, as in HAProxy. */
	cc_skip(&c);
	if (!expr[c.p])
		return 0;
	v = cc_or(&c);

	if (v >= 0) {
		cc_skip(&c);
		if (c.s[c.p] != '\0')
			v = cc_fail(&c, "unexpected text after the expression");
	}
	if (v < 0) {
		*err = c.err ? c.err : "invalid expression";
		*errpos = c.errpos;
	}
	return v;
}
