/* h1-case-adjust and h1-case-adjust-file: the header names whose case is
 * rewritten in the HTTP/1 heads sent to clients (option
 * h1-case-adjust-bogus-client) or servers (...-bogus-server). The wire
 * bytes are changed in place: a name keeps its length. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/h1.h>
#include <sluice/hdr_case.h>
#include <sluice/str.h>

/* One name: its spelling on the wire; where it came from (a file's entries
 * are replaced by the next h1-case-adjust-file line). */
struct hdr_case_ent {
	char  *to;
	size_t len;
	int    from_file;
	char  *where;    /* "file:line" of the line that gave it, for a duplicate */
};

static struct {
	struct hdr_case_ent *ents;
	int                  n, size;
	int                 *idx;      /* open addressing: ents index + 1, 0 empty */
	unsigned             mask;     /* idx size - 1 (0: no index) */
} hc;

static unsigned hdr_case_hash(const char *p, size_t len)
{
	unsigned h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		h = (h ^ (c >= 'A' && c <= 'Z' ? c + 32u : c)) * 16777619u;
	}
	return h;
}

/* The entry spelling name <p> (<len> bytes, any case), or NULL. */
static const struct hdr_case_ent *hdr_case_find(const char *p, size_t len)
{
	if (!hc.mask)
		return NULL;
	for (unsigned i = hdr_case_hash(p, len) & hc.mask; hc.idx[i]; i = (i + 1) & hc.mask) {
		const struct hdr_case_ent *e = &hc.ents[hc.idx[i] - 1];

		if (e->len == len && strncasecmp(e->to, p, len) == 0)
			return e;
	}
	return NULL;
}

/* Rebuilds the index over the entries (configuration time only). */
static void hdr_case_reindex(void)
{
	unsigned size = 8;

	while (size < 2u * (unsigned)hc.n)
		size <<= 1;
	free(hc.idx);
	hc.idx = xcalloc(size, sizeof(*hc.idx));
	hc.mask = hc.n ? size - 1 : 0;
	for (int k = 0; k < hc.n; k++) {
		unsigned i = hdr_case_hash(hc.ents[k].to, hc.ents[k].len) & hc.mask;

		while (hc.idx[i])
			i = (i + 1) & hc.mask;
		hc.idx[i] = k + 1;
	}
}

int hdr_case_active(void)
{
	return hc.n > 0;
}

void hdr_case_adjust(char *p, size_t len)
{
	char *end = p + len, *eol = memchr(p, '\n', len);

	if (!hc.n || !eol)
		return;
	for (p = eol + 1; p < end && *p != '\r' && *p != '\n'; p = eol + 1) {
		char *colon;
		const struct hdr_case_ent *e;

		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon && (e = hdr_case_find(p, (size_t)(colon - p))))
			memcpy(p, e->to, e->len);
	}
}

/* Checks the pair <from> <to> as both keywords want it. Returns NULL, or
 * what is wrong. */
static const char *hdr_case_check(const char *from, const char *to)
{
	size_t len = strlen(from);

	if (!h1_is_token(from, len))
		return "is not a valid header name";
	for (size_t i = 0; i < len; i++)
		if (from[i] >= 'A' && from[i] <= 'Z')
			return "must be written in lower case";
	if (strlen(to) != len || strcasecmp(from, to) != 0)
		return "and its adjusted form may differ only by their case";
	return NULL;
}

/* Adds <from> -> <to> given at <where>. Returns 0, or -1 after an alert. */
static int hdr_case_add(struct cfg_ctx *ctx, const char *from, const char *to, int from_file,
                        const char *where)
{
	const char *why = hdr_case_check(from, to);
	const struct hdr_case_ent *dup;
	struct hdr_case_ent *e;

	if (why) {
		cfg_alert(ctx, "%s%s'%s' %s", where ? where : "", where ? ": " : "", from, why);
		return -1;
	}
	if ((dup = hdr_case_find(from, strlen(from)))) {
		cfg_alert(ctx, "%s%s'%s' is already adjusted (at %s); duplicates are not allowed",
			  where ? where : "", where ? ": " : "", from, dup->where);
		return -1;
	}
	if (hc.n == hc.size) {
		hc.size = hc.size ? hc.size * 2 : 16;
		hc.ents = xrealloc(hc.ents, (size_t)hc.size * sizeof(*hc.ents));
	}
	e = &hc.ents[hc.n++];
	e->to = xstrdup(to);
	e->len = strlen(to);
	e->from_file = from_file;
	e->where = where ? xstrdup(where) : str_fmt("%s:%d", ctx->file, ctx->line);
	hdr_case_reindex();
	return 0;
}

/* h1-case-adjust <from> <to> */
static int kw_case_adjust(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc != 2) {
		cfg_alert(ctx, "expects <from> <to>");
		return -1;
	}
	return hdr_case_add(ctx, argv[0], argv[1], 0, NULL);
}

/* Drops the entries an earlier h1-case-adjust-file gave (all of them when
 * <all>). */
static void hdr_case_drop(int all)
{
	int k = 0;

	for (int i = 0; i < hc.n; i++) {
		if (all || hc.ents[i].from_file) {
			free(hc.ents[i].to);
			free(hc.ents[i].where);
		} else {
			hc.ents[k++] = hc.ents[i];
		}
	}
	hc.n = k;
	hdr_case_reindex();
}

void hdr_case_clear(void)
{
	hdr_case_drop(1);
}

/* h1-case-adjust-file <file>: two names a line, '#' comments and blank
 * lines ignored, spaces around trimmed; only the last such line counts. */
static int kw_case_adjust_file(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *line = NULL, where[512];
	size_t cap = 0;
	int lno = 0, errors = 0;
	FILE *f;

	if (argc != 1) {
		cfg_alert(ctx, "expects a file name");
		return -1;
	}
	if (!(f = fopen(argv[0], "r"))) {
		cfg_alert(ctx, "cannot open '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	hdr_case_drop(0);
	while (getline(&line, &cap, f) != -1) {
		char *w[3] = { NULL, NULL, NULL }, *save = NULL, *p = line;
		int n = 0;

		lno++;
		while (n < 3 && (w[n] = strtok_r(p, " \t\r\n", &save)))
			p = NULL, n++;
		if (!n || w[0][0] == '#')
			continue;
		snprintf(where, sizeof(where), "%s:%d", argv[0], lno);
		if (n != 2) {
			cfg_alert(ctx, "%s: expects two header names", where);
			errors++;
		} else if (hdr_case_add(ctx, w[0], w[1], 1, where) == -1) {
			errors++;
		}
	}
	free(line);
	fclose(f);
	return errors ? -1 : 0;
}

static struct cfg_kw hdr_case_kws[] = {
	{ "h1-case-adjust", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_case_adjust,
	  .usage = "<from> <to>" },
	{ "h1-case-adjust-file", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_case_adjust_file,
	  .usage = "<file>" },
};

SLUICE_INIT(hdr_case_register)
{
	cfg_register(hdr_case_kws, ARRAY_SIZE(hdr_case_kws));
}
