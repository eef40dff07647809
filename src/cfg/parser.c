/* Configuration files: reading, .if blocks, section switching, dispatch of
 * each line to its registered keyword row, and error reporting (cfg.h). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sluice/ccexpr.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/lexer.h>
#include <sluice/log.h>
#include <sluice/str.h>
#include <sluice/units.h>

#define CFG_LINE_MAX  65536
#define CFG_IF_DEPTH  32

struct kw_table {
	struct cfg_kw   *kws;
	size_t           n;
	struct kw_table *next;
};

struct sec_table {
	struct cfg_section *secs;
	size_t              n;
	struct sec_table   *next;
};

struct postparse {
	int             (*fn)(void);
	int               prio;
	struct postparse *next;
};

static struct {
	struct kw_table  *kws;
	struct sec_table *secs;
	struct postparse *post;
	int               warnings;
} reg;

void cfg_register(struct cfg_kw *kws, size_t n)
{
	struct kw_table *t = xcalloc(1, sizeof(*t));
	struct kw_table **tail = &reg.kws;

	t->kws = kws;
	t->n = n;
	/* Keep registration order so that listings read in module order. */
	while (*tail)
		tail = &(*tail)->next;
	*tail = t;
}

void cfg_register_sections(struct cfg_section *secs, size_t n)
{
	struct sec_table *t = xcalloc(1, sizeof(*t));

	t->secs = secs;
	t->n = n;
	t->next = reg.secs;
	reg.secs = t;
}

void cfg_register_postparse(int (*fn)(void), int prio)
{
	struct postparse *p = xcalloc(1, sizeof(*p)), **pp = &reg.post;

	p->fn = fn;
	p->prio = prio;
	while (*pp && (*pp)->prio <= prio)
		pp = &(*pp)->next;
	p->next = *pp;
	*pp = p;
}

void cfg_kw_foreach(void (*fn)(const struct cfg_kw *kw, void *arg), void *arg)
{
	for (const struct kw_table *t = reg.kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			fn(&t->kws[i], arg);
}

void cfg_section_foreach(void (*fn)(const struct cfg_section *sec, void *arg), void *arg)
{
	for (const struct sec_table *t = reg.secs; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			fn(&t->secs[i], arg);
}

static const char *section_label(const struct cfg_ctx *ctx)
{
	return ctx->secname ? ctx->secname : "no";
}

static void cfg_report(struct cfg_ctx *ctx, int alert, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (ctx->kw)
		(alert ? log_alert : log_warning)("%s:%d: '%s' in %s section: %s",
						  ctx->file, ctx->line, ctx->kw, section_label(ctx), msg);
	else
		(alert ? log_alert : log_warning)("%s:%d: %s", ctx->file, ctx->line, msg);
}

void cfg_alert(struct cfg_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_report(ctx, 1, fmt, ap);
	va_end(ap);
	ctx->errors++;
}

void cfg_warn(struct cfg_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_report(ctx, 0, fmt, ap);
	va_end(ap);
	ctx->warnings++;
	reg.warnings++;
}

int cfg_warnings(void)
{
	return reg.warnings;
}

/* Number of words of <name> matched by argv, or 0. */
static int kw_match(const char *name, int argc, char **argv)
{
	int w = 0;

	while (*name) {
		size_t len = strcspn(name, " ");

		if (w >= argc || strlen(argv[w]) != len || strncmp(argv[w], name, len) != 0)
			return 0;
		w++;
		name += len;
		while (*name == ' ')
			name++;
	}
	return w;
}

const struct cfg_kw *cfg_find_kw(unsigned section, int argc, char **argv, int *nwords)
{
	const struct cfg_kw *best = NULL;
	int bestw = 0;

	for (struct kw_table *t = reg.kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++) {
			int w;

			if (!(t->kws[i].sections & section))
				continue;
			w = kw_match(t->kws[i].name, argc, argv);
			if (w > bestw) {
				best = &t->kws[i];
				bestw = w;
			}
		}
	*nwords = bestw;
	return best;
}

/* Whether <word> starts some multi-word keyword ("option", "timeout"). */
static int is_family_word(const char *word)
{
	size_t l = strlen(word);

	for (struct kw_table *t = reg.kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			if (strncmp(t->kws[i].name, word, l) == 0 && t->kws[i].name[l] == ' ')
				return 1;
	return 0;
}

static const struct cfg_section *find_section(const char *name)
{
	for (struct sec_table *t = reg.secs; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			if (strcmp(t->secs[i].name, name) == 0)
				return &t->secs[i];
	return NULL;
}

void cfg_suggest_init(struct cfg_suggest *sg, const char *word)
{
	sg->word = word;
	sg->best = NULL;
	sg->dist = 255;
}

void cfg_suggest_add(struct cfg_suggest *sg, const char *candidate)
{
	char first[64];
	int d = str_distance(sg->word, candidate), d1;

	/* Multi-word names ("timeout connect") also match on their first word,
	 * and then only that word is suggested ("timeot" -> "timeout"). */
	if (strchr(candidate, ' ') && !strchr(sg->word, ' ')) {
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(candidate, " "), candidate);
		d1 = str_distance(sg->word, first);
		if (d1 < d && d1 < sg->dist) {
			sg->dist = d1;
			memcpy(sg->first, first, sizeof(first));
			sg->best = sg->first;
			return;
		}
	}
	if (d < sg->dist) {
		sg->dist = d;
		sg->best = candidate;
	}
}

const char *cfg_suggest_pick(const struct cfg_suggest *sg)
{
	/* Only suggest when the distance is small against the word's length,
	 * and never the very word that was typed. */
	if (!sg->best || sg->dist == 0 || sg->dist > 2 + (int)strlen(sg->word) / 4)
		return NULL;
	return sg->best;
}

int cfg_opt_int(int argc, char **argv, long min, long max, long *v, char **err)
{
	const char *e;

	if (argc < 2) {
		*err = str_fmt("expects a value");
		return -1;
	}
	if (parse_int(argv[1], min, max, v, &e) == -1) {
		*err = str_fmt("%s (%ld..%ld), got '%s'", e, min, max, argv[1]);
		return -1;
	}
	return 0;
}

int cfg_opt_int_at(void *base, size_t off, long min, long max, int argc, char **argv,
                   char **err)
{
	long v;

	if (cfg_opt_int(argc, argv, min, max, &v, err) == -1)
		return -1;
	*(int *)((char *)base + off) = (int)v;
	return 2;
}

const char *cfg_suggest(unsigned section, const char *word)
{
	static struct cfg_suggest sg;   /* the result may point into it */

	cfg_suggest_init(&sg, word);
	for (struct kw_table *t = reg.kws; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			if ((t->kws[i].sections & section) &&
			    !(t->kws[i].flags & CFG_KW_F_REFUSED))
				cfg_suggest_add(&sg, t->kws[i].name);
	for (struct sec_table *t = reg.secs; t; t = t->next)
		for (size_t i = 0; i < t->n; i++)
			if (!t->secs[i].refused)   /* never suggest what is refused */
				cfg_suggest_add(&sg, t->secs[i].name);
	return cfg_suggest_pick(&sg);
}

/* Applies a generic (non-FUNC) row. */
static int cfg_apply_generic(struct cfg_ctx *ctx, const struct cfg_kw *kw, char *target,
                             int argc, char **argv)
{
	const char *err = NULL;
	uint32_t u32;
	long v;

	if (kw->type == CFG_T_FLAG) {
		if (argc) {
			cfg_alert(ctx, "takes no argument (got '%s')", argv[0]);
			return -1;
		}
		if (ctx->inverted)
			*(uint64_t *)target &= ~kw->mask;
		else
			*(uint64_t *)target |= kw->mask;
		return 0;
	}
	if (ctx->inverted) {
		cfg_alert(ctx, "'no' is not supported for this keyword");
		return -1;
	}
	if (argc != 1) {
		cfg_alert(ctx, "expects %s%s", kw->usage ? kw->usage : "one argument",
			  argc ? " and nothing else" : "");
		return -1;
	}
	switch (kw->type) {
	case CFG_T_TIME:
		if (parse_time_ms(argv[0], 1, &u32, &err) == -1)
			break;
		*(uint32_t *)target = u32;
		return 0;
	case CFG_T_SIZE:
		if (parse_size(argv[0], &u32, &err) == -1)
			break;
		if (u32 < kw->min || (kw->max && u32 > kw->max)) {
			cfg_alert(ctx, "expects %s between %ld and %ld, got '%s'",
				  kw->usage ? kw->usage : "a size", kw->min, kw->max, argv[0]);
			return -1;
		}
		*(uint32_t *)target = u32;
		return 0;
	case CFG_T_INT:
		if (parse_int(argv[0], kw->min, kw->max ? kw->max : 0x7fffffff, &v, &err) == -1) {
			cfg_alert(ctx, "expects %s (%ld..%ld), got '%s'",
				  kw->usage ? kw->usage : "an integer", kw->min,
				  kw->max ? kw->max : 0x7fffffffL, argv[0]);
			return -1;
		}
		*(int *)target = (int)v;
		return 0;
	case CFG_T_STR:
		free(*(char **)target);
		*(char **)target = xstrdup(argv[0]);
		return 0;
	default:
		BUG_ON(1, "unhandled keyword type");
	}
	cfg_alert(ctx, "expects %s: %s (got '%s')", kw->usage ? kw->usage : "a value", err, argv[0]);
	return -1;
}

static int cfg_dispatch(struct cfg_ctx *ctx, int argc, char **argv)
{
	const struct cfg_section *sec = find_section(argv[0]);
	const struct cfg_kw *kw;
	char *target;
	int nw, ret;

	ctx->kw = NULL;
	ctx->kw_row = NULL;
	ctx->inverted = 0;
	if (sec) {
		if (ctx->section) {
			const struct cfg_section *cur = find_section(ctx->secname);

			if (cur && cur->end)
				cur->end(ctx);
		}
		ctx->section = sec->refused ? CFG_SEC_REFUSED : sec->id;
		ctx->secname = sec->name;
		snprintf(ctx->secid, sizeof(ctx->secid), "%s", argc > 1 ? argv[1] : sec->name);
		ctx->px = NULL;
		ctx->kw = sec->refused ? NULL : sec->name;
		if (sec->refused) {
			cfg_alert(ctx, "section '%s%s%s' is not supported by sluice: %s (its lines "
				  "are skipped)", sec->name, argc > 1 ? " " : "",
				  argc > 1 ? argv[1] : "", sec->refused);
			ret = -1;
		} else {
			ret = sec->begin(ctx, argc - 1, argv + 1);
		}
		ctx->kw = NULL;
		ctx->sec_failed = ret == -1;
		return ret;
	}
	if (ctx->sec_failed && ctx->section && !(ctx->section & CFG_SEC_PROXIES))
		return 0;   /* its header's error is reported; no error per line */
	if (!ctx->section) {
		const char *s = cfg_suggest(~0u, argv[0]);

		cfg_alert(ctx, "unknown keyword '%s' out of any section%s%s%s", argv[0],
			  s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
		return -1;
	}
	if (!ctx->px && (ctx->section & CFG_SEC_PROXIES))
		return -1; /* the section header failed; its error is reported */
	if (strcmp(argv[0], "no") == 0 && argc > 1) {
		ctx->inverted = 1;
		argc--;
		argv++;
	}
	kw = cfg_find_kw(ctx->section, argc, argv, &nw);
	if (!kw) {
		char two[256];
		const char *s;
		int two_words = argc > 1 && is_family_word(argv[0]);

		/* "timeot connect": score the two words together first. */
		snprintf(two, sizeof(two), "%s %s", argv[0], argc > 1 ? argv[1] : "");
		s = argc > 1 ? cfg_suggest(ctx->section, two) : NULL;
		if (s)
			two_words = 1;
		else
			s = cfg_suggest(ctx->section, argv[0]);
		int valid_elsewhere = cfg_find_kw(~0u, argc, argv, &nw) != NULL;

		/* Name the second word only for families like "option X". */
		if (valid_elsewhere)
			cfg_alert(ctx, "'%s%s%s' is not valid in a %s section", argv[0],
				  two_words ? " " : "", two_words ? argv[1] : "", ctx->secname);
		else
			cfg_alert(ctx, "unknown keyword '%s%s%s' in %s section%s%s%s", argv[0],
				  two_words ? " " : "", two_words ? argv[1] : "", ctx->secname,
				  s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
		return -1;
	}
	ctx->kw = kw->name;
	ctx->kw_row = kw;
	if (ctx->inverted && !(kw->flags & CFG_KW_F_NO) && kw->type != CFG_T_FLAG) {
		cfg_alert(ctx, "'no' is not supported for this keyword");
		return -1;
	}
	if (kw->flags & CFG_KW_F_DEPREC)
		cfg_warn(ctx, "deprecated; use %s instead", kw->hint ? kw->hint : "the documented form");
	/* Sections other than global and the proxies (http-errors, ...) keep
	 * their own state: their rows get the struct .base gives, else no
	 * target. */
	if (ctx->section == CFG_SEC_GLOBAL)
		target = (kw->base ? (char *)kw->base(ctx) : (char *)&global) + kw->off;
	else if (ctx->section & CFG_SEC_PROXIES)
		target = (kw->base ? (char *)kw->base(ctx) : (char *)ctx->px) + kw->off;
	else
		target = kw->base ? (char *)kw->base(ctx) + kw->off : NULL;
	if (kw->type == CFG_T_FUNC)
		ret = kw->parse(ctx, target, argc - nw, argv + nw);
	else
		ret = cfg_apply_generic(ctx, kw, target, argc - nw, argv + nw);
	ctx->kw = NULL;
	ctx->kw_row = NULL;
	return ret;
}

/* .if/.elif/.else/.endif state: one entry per open block. */
struct cond_stack {
	int depth;
	struct {
		char active;    /* lines of the current branch are parsed */
		char taken;     /* a branch of this block was already taken */
		char seen_else;
		char parent;    /* the enclosing block is active */
	} lvl[CFG_IF_DEPTH];
};

static int cond_active(const struct cond_stack *cs)
{
	return cs->depth == 0 || cs->lvl[cs->depth - 1].active;
}

static int cond_eval_words(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct dstr expr = { 0 };
	const char *err;
	size_t pos;
	int v;

	for (int i = 1; i < argc; i++)
		dstr_printf(&expr, "%s%s", i > 1 ? " " : "", argv[i]);
	v = cc_eval(expr.p ? expr.p : "", &err, &pos);
	if (v < 0)
		cfg_alert(ctx, "%s at position %zu in '%s'", err, pos, expr.p ? expr.p : "");
	dstr_free(&expr);
	return v;
}

/* Handles a line starting with '.'; returns 0 or -1. */
static int cfg_directive(struct cfg_ctx *ctx, struct cond_stack *cs, int argc, char **argv)
{
	const char *d = argv[0];
	int v;

	ctx->kw = argv[0];
	if (strcmp(d, ".if") == 0) {
		if (cs->depth == CFG_IF_DEPTH) {
			cfg_alert(ctx, "too many nested .if blocks");
			return -1;
		}
		cs->lvl[cs->depth].parent = (char)cond_active(cs);
		v = cs->lvl[cs->depth].parent ? cond_eval_words(ctx, argc, argv) : 0;
		cs->lvl[cs->depth].active = (char)(v > 0);
		cs->lvl[cs->depth].taken = (char)(v > 0);
		cs->lvl[cs->depth].seen_else = 0;
		cs->depth++;
		return v < 0 ? -1 : 0;
	}
	if (strcmp(d, ".elif") == 0 || strcmp(d, ".else") == 0) {
		int is_else = d[2] == 'l' && d[3] == 's';

		if (!cs->depth || cs->lvl[cs->depth - 1].seen_else) {
			cfg_alert(ctx, "'%s' without a matching .if", d);
			return -1;
		}
		if (is_else)
			cs->lvl[cs->depth - 1].seen_else = 1;
		if (!cs->lvl[cs->depth - 1].parent || cs->lvl[cs->depth - 1].taken) {
			cs->lvl[cs->depth - 1].active = 0;
			return 0;
		}
		v = is_else ? 1 : cond_eval_words(ctx, argc, argv);
		cs->lvl[cs->depth - 1].active = (char)(v > 0);
		cs->lvl[cs->depth - 1].taken = (char)(v > 0);
		return v < 0 ? -1 : 0;
	}
	if (strcmp(d, ".endif") == 0) {
		if (!cs->depth) {
			cfg_alert(ctx, "'.endif' without a matching .if");
			return -1;
		}
		cs->depth--;
		return 0;
	}
	if (!cond_active(cs))
		return 0;
	if (strcmp(d, ".diag") == 0 || strcmp(d, ".notice") == 0 ||
	    strcmp(d, ".warning") == 0 || strcmp(d, ".alert") == 0) {
		struct dstr msg = { 0 };

		for (int i = 1; i < argc; i++)
			dstr_printf(&msg, "%s%s", i > 1 ? " " : "", argv[i]);
		ctx->kw = NULL;
		if (d[1] == 'a')
			cfg_alert(ctx, "%s", msg.p ? msg.p : "");
		else if (d[1] == 'w')
			cfg_warn(ctx, "%s", msg.p ? msg.p : "");
		else if (d[1] == 'n')
			log_notice("%s:%d: %s", ctx->file, ctx->line, msg.p ? msg.p : "");
		/* .diag is for a diagnostic mode sluice does not have: silent. */
		dstr_free(&msg);
		if (d[1] == 'a')
			ctx->stop = 1;  /* like HAProxy: the file is not read further */
		return d[1] == 'a' ? -1 : 0;
	}
	cfg_alert(ctx, "unknown directive (expects .if, .elif, .else, .endif, .diag, "
		  ".notice, .warning or .alert)");
	return -1;
}

static int cfg_parse_lines(struct cfg_ctx *ctx, const char *text, size_t len)
{
	static char out[CFG_LINE_MAX];
	char *words[CFG_MAX_WORDS];
	struct cond_stack cs = { 0 };
	struct cfg_lex_err lerr;
	struct cfg_lex_pos lpos = { .file = ctx->file };
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (text + pos)) : len - pos;
		int n;

		ctx->line++;
		ctx->kw = NULL;
		if (llen >= CFG_LINE_MAX) {
			cfg_alert(ctx, "line too long (max %d bytes)", CFG_LINE_MAX - 1);
			pos += llen + 1;
			continue;
		}
		lpos.line = ctx->line;
		lpos.section = ctx->section ? ctx->secid : "";
		n = cfg_lex_line_at(text + pos, llen, out, sizeof(out), words, CFG_MAX_WORDS, &lerr,
				    &lpos);
		pos += llen + 1;
		if (n < 0) {
			cfg_alert(ctx, "%s at column %zu", lerr.msg, lerr.pos + 1);
			continue;
		}
		if (n == 0)
			continue;
		if (words[0][0] == '.' && words[0][1]) {
			cfg_directive(ctx, &cs, n, words);
			if (ctx->stop)
				return ctx->errors;
			continue;
		}
		if (!cond_active(&cs))
			continue;
		cfg_dispatch(ctx, n, words);
	}
	ctx->kw = NULL;
	if (cs.depth)
		cfg_alert(ctx, "missing .endif at end of file (%d block%s open)", cs.depth,
			  cs.depth > 1 ? "s" : "");
	if (ctx->section) {
		const struct cfg_section *cur = find_section(ctx->secname);

		if (cur && cur->end)
			cur->end(ctx);
	}
	return ctx->errors;
}

int cfg_parse_text(const char *name, const char *text, size_t len)
{
	struct cfg_ctx ctx = { 0 };

	ctx.file = name;
	if (memchr(text, '\0', len)) {
		ctx.line = 0;
		cfg_alert(&ctx, "file contains a NUL byte; is it a text file?");
		return 1;
	}
	return cfg_parse_lines(&ctx, text, len);
}

static int cfg_load_file(const char *path)
{
	struct cfg_ctx ctx = { 0 };
	char *text = NULL;
	size_t cap = 0, len = 0;
	FILE *f = fopen(path, "r");
	int errors;

	ctx.file = path;
	if (!f) {
		cfg_alert(&ctx, "cannot open configuration file: %s", strerror(errno));
		return 1;
	}
	for (;;) {
		size_t r;

		if (cap - len < 65536) {
			char *n = realloc(text, cap + 65536 + 1);

			BUG_ON(!n, "out of memory reading the configuration");
			text = n;
			cap += 65536;
		}
		r = fread(text + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		cfg_alert(&ctx, "read error: %s", strerror(errno));
		fclose(f);
		free(text);
		return 1;
	}
	fclose(f);
	errors = cfg_parse_text(path, text, len);
	free(text);
	return errors;
}

static int cfg_name_filter(const struct dirent *de)
{
	size_t l = strlen(de->d_name);

	return de->d_name[0] != '.' && l > 4 && strcmp(de->d_name + l - 4, ".cfg") == 0;
}

int cfg_load_path(const char *path)
{
	struct dirent **list;
	struct stat st;
	int n, errors = 0;

	if (stat(path, &st) == -1 || !S_ISDIR(st.st_mode))
		return cfg_load_file(path);
	n = scandir(path, &list, cfg_name_filter, alphasort);
	if (n < 0) {
		log_alert("%s: cannot list configuration directory: %s", path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char *p = str_fmt("%s/%s", path, list[i]->d_name);
		struct stat fst;

		if (p && stat(p, &fst) == 0 && S_ISREG(fst.st_mode))
			errors += cfg_load_file(p);
		free(p);
		free(list[i]);
	}
	free(list);
	return errors;
}

int cfg_postparse(void)
{
	int errors = 0;

	for (struct postparse *p = reg.post; p; p = p->next)
		errors += p->fn();
	return errors;
}
