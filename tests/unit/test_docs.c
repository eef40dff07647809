/* The documentation check: every name the binary registers is documented.
 * Configuration keywords (every section's cfg_register() rows), section
 * keywords, bind options, server options, sample fetches and converters,
 * rule actions and filters must appear in doc/configuration.md; runtime
 * API commands in doc/management.md. A failing case lists every
 * undocumented name with where it is expected.
 *
 * The rule. A name is documented when some inline code span (`...`, not a
 * fenced ``` block) of the expected document *starts with* the name and the
 * name is followed there by the end of the span or by a character that
 * cannot continue a name (anything but a letter, a digit, '_', '.', '-' or
 * '+'): `timeout connect`, `hdr(name[,occ])`, `show stat [<iid>]`, `crt
 * <file>` document "timeout connect", "hdr", "show stat", "crt"; `hdr_cnt`
 * or `no option tcplog` do not document "hdr" or "option tcplog". A
 * multi-word name (a cfg row "option httplog", a CLI command "show sess")
 * is matched as a whole, so `option httplog` must be written, not
 * `httplog` alone; and a name is documented by its uses: `timeout connect`
 * documents a row "timeout" too. An action may also be documented by its
 * rule line: `http-request disable-l7-retry`. A span may run over a line break within a paragraph;
 * `\|` in a table is '|'. A filter is documented by `filter <name>`; an
 * action row taking a slot digit ("track-sc") needs each of its three
 * words ("track-sc0".."track-sc2").
 *
 * Where. Bind options must be documented in section 8 of
 * configuration.md (those only valid on stats sockets: section 8 or 10),
 * server options in section 9, keywords valid only in the global section
 * in section 6, keywords valid only in an http-errors, userlist, cache, peers,
 * fcgi-app or resolvers section in section 5 or in section 12 (differences from
 * HAProxy, where refused keywords are listed); every other name anywhere
 * in its document; runtime API commands in section 6 of management.md.
 *
 * Templates. Families of names are written once with placeholders: `<n>`
 * in a span stands for each of 0, 1, 2 (`sc<n>_trackers`, `track-sc<n>`);
 * another `<x>` (a lower-case word) for each value of the nearest
 * definition "`<x>` of `a`, `b`, ..." or "`<x>` in `a`, `b`, ..." — the
 * code spans right after it up to a ':', a table cell's end or a span
 * holding a '<', those inside parentheses excepted, at least two. A
 * definition in a table row holds for that row; one in a paragraph for the
 * blocks after it up to the next heading. A placeholder without a
 * definition is left as written.
 *
 * The documents are read from doc/ relative to the working directory (the
 * repository root, where `make unit` runs tests/run-unit), else from ../doc
 * or ../../doc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/http_filter.h>
#include <sluice/listener.h>
#include <sluice/sample.h>
#include <sluice/server.h>

#define SEC_ANY (~0u)
#define SEC(n)  (1u << (n))

struct span {
	char *text;
	int   sec;     /* the number of the "## N." section holding it, 0 before any */
};

struct doc {
	const char  *name;
	struct span *spans;
	size_t       n, size;
};

static struct doc conf = { .name = "doc/configuration.md" }, mgmt = { .name = "doc/management.md" };

/* ---- reading a document ---- */

static char *read_doc(const char *rel)
{
	static const char *const dirs[] = { "", "../", "../../" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char path[256];
		FILE *f;
		char *buf;
		long len;

		snprintf(path, sizeof(path), "%s%s", dirs[i], rel);
		f = fopen(path, "r");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc((size_t)len + 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
		buf[len] = '\0';
		fclose(f);
		return buf;
	}
	fail_msg("cannot read %s (run from the repository root)", rel);
	return NULL;
}

static void doc_add(struct doc *d, const char *text, size_t len, int sec)
{
	if (d->n == d->size) {
		d->size = d->size ? d->size * 2 : 1024;
		d->spans = realloc(d->spans, d->size * sizeof(*d->spans));
		assert_non_null(d->spans);
	}
	d->spans[d->n].text = strndup(text, len);
	assert_non_null(d->spans[d->n].text);
	d->spans[d->n].sec = sec;
	d->n++;
}

/* The values of a placeholder definition: "<d>" and its values. */
struct defset {
	char   ph[24];
	char  *v[64];
	size_t n;
};

/* The definitions in force. */
struct defs {
	struct defset s[8];
	size_t        n;
};

static void defs_clear(struct defs *d)
{
	for (size_t i = 0; i < d->n; i++)
		for (size_t j = 0; j < d->s[i].n; j++)
			free(d->s[i].v[j]);
	d->n = 0;
}

/* Copies the span starting after the backtick at <p> into <out> (size
 * <size>), "\|" read as '|'; returns the closing backtick, or NULL. */
static const char *span_read(const char *p, char *out, size_t size)
{
	size_t o = 0;

	for (p++; *p && *p != '`'; p++) {
		if (p[0] == '\\' && p[1] == '|')
			p++;
		if (o + 1 < size)
			out[o++] = *p;
	}
	out[o] = '\0';
	return *p ? p : NULL;
}

/* The length of the placeholder "<word>" at <p> (a lower-case word), else 0. */
static size_t ph_len(const char *p)
{
	size_t n = 1;

	if (*p != '<')
		return 0;
	while (p[n] >= 'a' && p[n] <= 'z')
		n++;
	return n > 1 && n < 20 && p[n] == '>' ? n + 1 : 0;
}

/* Adds to <ds> (replacing one of the same placeholder) every definition
 * "`<x>` of|in `a`, `b`..." of <blk> with at least two values. */
static void defs_parse(const char *blk, struct defs *ds)
{
	for (const char *p = strchr(blk, '`'); p; p = strchr(p + 1, '`')) {
		size_t pl = ph_len(p + 1);
		struct defset tmp = { 0 };
		int depth = 0;

		if (!pl || p[pl + 1] != '`' || (strncmp(p + pl + 2, " of `", 5) != 0 &&
		                                 strncmp(p + pl + 2, " in `", 5) != 0))
			continue;
		memcpy(tmp.ph, p + 1, pl);
		for (const char *q = p + pl + 6; *q; q++) {
			if (*q == '`') {
				char buf[128];
				const char *e = span_read(q, buf, sizeof(buf));

				if (!e || strchr(buf, '<'))
					break;
				if (!depth && tmp.n < sizeof(tmp.v) / sizeof(tmp.v[0]))
					tmp.v[tmp.n++] = strdup(buf);
				q = e;
			} else if (*q == '(') {
				depth++;
			} else if (*q == ')' && depth) {
				depth--;
			} else if (!depth && (*q == ':' || *q == '|')) {
				break;
			}
		}
		if (tmp.n < 2) {
			for (size_t j = 0; j < tmp.n; j++)
				free(tmp.v[j]);
			continue;
		}
		for (size_t i = 0; i < ds->n; i++)
			if (strcmp(ds->s[i].ph, tmp.ph) == 0) {
				for (size_t j = 0; j < ds->s[i].n; j++)
					free(ds->s[i].v[j]);
				ds->s[i] = tmp;
				tmp.n = 0;
				break;
			}
		if (tmp.n && ds->n < sizeof(ds->s) / sizeof(ds->s[0]))
			ds->s[ds->n++] = tmp;
	}
}

/* The values of placeholder <ph> (<len> bytes): <n> is 0..2, others come
 * from <row>, then <para>. NULL when it has none. */
static const struct defset *defs_find(const char *ph, size_t len, const struct defs *row,
                                      const struct defs *para)
{
	static struct defset digits = { "<n>", { "0", "1", "2" }, 3 };

	if (len == 3 && memcmp(ph, "<n>", 3) == 0)
		return &digits;
	for (int k = 0; k < 2; k++) {
		const struct defs *ds = k ? para : row;

		for (size_t i = 0; i < ds->n; i++)
			if (strlen(ds->s[i].ph) == len && memcmp(ds->s[i].ph, ph, len) == 0)
				return &ds->s[i];
	}
	return NULL;
}

/* Adds span <text> to <d>, with every expansion of its placeholders that
 * have values (a span that is only a placeholder stays as it is). */
static void span_expand(struct doc *d, const char *text, int sec, const struct defs *row,
                        const struct defs *para)
{
	const struct defset *set = NULL;
	const char *ph = text;
	size_t pl = 0;

	if (ph_len(text) != strlen(text))
		for (ph = strchr(text, '<'); ph; ph = strchr(ph + 1, '<'))
			if ((pl = ph_len(ph)) && (set = defs_find(ph, pl, row, para)))
				break;
	if (!set) {
		doc_add(d, text, strlen(text), sec);
		return;
	}
	for (size_t i = 0; i < set->n; i++) {
		size_t pre = (size_t)(ph - text), vl = strlen(set->v[i]);
		char *s = malloc(strlen(text) + vl + 1);

		assert_non_null(s);
		memcpy(s, text, pre);
		memcpy(s + pre, set->v[i], vl);
		strcpy(s + pre + vl, ph + pl);
		span_expand(d, s, sec, row, para);
		free(s);
	}
}

/* Adds the code spans of block <blk> (a paragraph or a table row). */
static void block_spans(struct doc *d, const char *blk, int sec, struct defs *para, int is_row)
{
	struct defs row = { 0 };

	defs_parse(blk, is_row ? &row : para);
	for (const char *p = blk; (p = strchr(p, '`')); p++) {
		char buf[1024];
		const char *e = span_read(p, buf, sizeof(buf));

		if (!e)
			break;
		span_expand(d, buf, sec, &row, para);
		p = e;
	}
	defs_clear(&row);
}

/* Reads document <d>: its inline code spans, with their sections. */
static void doc_load(struct doc *d)
{
	char *text = read_doc(d->name), *line, *save = NULL;
	size_t cap = strlen(text) + 1, blen = 0;
	char *blk = malloc(cap);
	struct defs para_def = { 0 };
	int sec = 0, fenced = 0;

	assert_non_null(blk);
	blk[0] = '\0';
#define FLUSH() do { if (blen) block_spans(d, blk, sec, &para_def, 0); blen = 0; blk[0] = '\0'; } while (0)
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *l = line + strspn(line, " \t");

		if (strncmp(l, "```", 3) == 0) {
			FLUSH();
			fenced = !fenced;
			continue;
		}
		if (fenced)
			continue;
		if (line[0] == '#') {
			int n;

			FLUSH();
			defs_clear(&para_def);
			if (sscanf(line, "## %d.", &n) == 1)
				sec = n;
			continue;
		}
		if (*l == '|') {
			FLUSH();
			block_spans(d, l, sec, &para_def, 1);
			continue;
		}
		if (!*l) {
			FLUSH();
			continue;
		}
		if (blen)
			blk[blen++] = ' ';
		memcpy(blk + blen, l, strlen(l) + 1);
		blen += strlen(l);
	}
	FLUSH();
#undef FLUSH
	free(blk);
	free(text);
	defs_clear(&para_def);
	assert_true(d->n > 100);
}

/* ---- checking names ---- */

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '+';
}

/* Whether <name> is documented in <d>, in one of the sections of <secs>. */
static int documented(const struct doc *d, const char *name, unsigned secs)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < d->n; i++) {
		const char *t = d->spans[i].text;

		if ((secs & SEC(d->spans[i].sec)) && strncmp(t, name, len) == 0 &&
		    !name_char(t[len]))
			return 1;
	}
	return 0;
}

/* The names found undocumented by one test case. */
struct misses {
	const char *what;
	char      **v;
	size_t      n;
};

static void check(struct misses *m, const struct doc *d, const char *name, unsigned secs,
                  const char *where)
{
	if (!documented(d, name, secs)) {
		for (size_t i = 0; i < m->n; i++)
			if (strstr(m->v[i], name) == m->v[i] && m->v[i][strlen(name)] == ' ')
				return;   /* listed already (two rows of one name) */
		m->v = realloc(m->v, (m->n + 1) * sizeof(*m->v));
		assert_non_null(m->v);
		m->v[m->n] = malloc(strlen(name) + strlen(where) + 16);
		assert_non_null(m->v[m->n]);
		sprintf(m->v[m->n], "%s (%s)", name, where);
		m->n++;
	}
}

/* Prints the misses and fails when there are some. */
static void report(struct misses *m)
{
	for (size_t i = 0; i < m->n; i++)
		print_message("undocumented %s: %s\n", m->what, m->v[i]);
	if (m->n)
		fail_msg("%zu undocumented %s", m->n, m->what);
	free(m->v);
}

/* ---- the cases ---- */

static void cfg_kw_cb(const struct cfg_kw *kw, void *arg)
{
	unsigned own = CFG_SEC_HTTP_ERRORS | CFG_SEC_USERLIST | CFG_SEC_CACHE | CFG_SEC_RESOLVERS |
	                CFG_SEC_PEERS | CFG_SEC_FCGI_APP;

	if (kw->sections == CFG_SEC_GLOBAL)
		check(arg, &conf, kw->name, SEC(6), "configuration.md section 6");
	else if (!(kw->sections & ~own))
		check(arg, &conf, kw->name, SEC(5) | SEC(12), "configuration.md section 5 or 12");
	else
		check(arg, &conf, kw->name, SEC_ANY, "configuration.md");
}

static void test_cfg_keywords(void **state)
{
	struct misses m = { .what = "configuration keywords" };

	cfg_kw_foreach(cfg_kw_cb, &m);
	report(&m);
}

/* A section sluice runs is documented in section 5 (its table), one it
 * refuses in section 12 (with its reason). */
static void cfg_sec_cb(const struct cfg_section *sec, void *arg)
{
	if (sec->refused)
		check(arg, &conf, sec->name, SEC(12), "configuration.md section 12");
	else
		check(arg, &conf, sec->name, SEC(5), "configuration.md section 5");
}

static void test_sections(void **state)
{
	struct misses m = { .what = "sections" };

	cfg_section_foreach(cfg_sec_cb, &m);
	report(&m);
}

static void bind_kw_cb(const struct bind_kw *kw, void *arg)
{
	if (kw->cli_only)
		check(arg, &conf, kw->name, SEC(8) | SEC(10), "configuration.md section 8 or 10");
	else
		check(arg, &conf, kw->name, SEC(8), "configuration.md section 8");
}

static void test_bind_options(void **state)
{
	struct misses m = { .what = "bind options" };

	bind_kw_foreach(bind_kw_cb, &m);
	report(&m);
}

static void srv_kw_cb(const struct srv_kw *kw, void *arg)
{
	check(arg, &conf, kw->name, SEC(9), "configuration.md section 9");
}

static void test_server_options(void **state)
{
	struct misses m = { .what = "server options" };

	srv_kw_foreach(srv_kw_cb, &m);
	report(&m);
}

static void fetch_cb(const struct smp_fetch_kw *kw, void *arg)
{
	check(arg, &conf, kw->name, SEC_ANY, "configuration.md");
}

static void test_fetches(void **state)
{
	struct misses m = { .what = "sample fetches" };

	smp_fetch_foreach(fetch_cb, &m);
	report(&m);
}

static void conv_cb(const struct smp_conv_kw *kw, void *arg)
{
	check(arg, &conf, kw->name, SEC_ANY, "configuration.md");
}

static void test_converters(void **state)
{
	struct misses m = { .what = "converters" };

	smp_conv_foreach(conv_cb, &m);
	report(&m);
}

/* The rule sets an action may be written after, in a span documenting it. */
static const char *const act_sets[] = {
	"http-request ", "http-response ", "http-after-response ", "tcp-request connection ",
	"tcp-request session ", "tcp-request content ", "tcp-response content ",
};

static void act_check(struct misses *m, const char *name)
{
	char line[192];

	for (size_t i = 0; i < sizeof(act_sets) / sizeof(act_sets[0]); i++) {
		snprintf(line, sizeof(line), "%s%s", act_sets[i], name);
		if (documented(&conf, line, SEC_ANY))
			return;
	}
	check(m, &conf, name, SEC_ANY, "configuration.md");
}

static void act_cb(const struct act_kw *kw, void *arg)
{
	if (kw->digit) {
		for (int i = 0; i <= 2; i++) {
			char name[128];

			snprintf(name, sizeof(name), "%s%d", kw->name, i);
			act_check(arg, name);
		}
	} else {
		act_check(arg, kw->name);
	}
}

static void test_actions(void **state)
{
	struct misses m = { .what = "actions" };

	act_foreach(ACT_W_TCP_ALL | ACT_W_HTTP_ALL, act_cb, &m);
	report(&m);
}

static void filter_cb(const struct http_filter_kw *kw, void *arg)
{
	char name[128];

	snprintf(name, sizeof(name), "filter %s", kw->name);
	if (kw->refused)
		check(arg, &conf, name, SEC(12), "configuration.md section 12");
	else
		check(arg, &conf, name, SEC_ANY, "configuration.md");
}

static void test_filters(void **state)
{
	struct misses m = { .what = "filters" };

	http_filter_foreach(filter_cb, &m);
	report(&m);
}

static void cli_cb(const struct cli_kw *kw, void *arg)
{
	char name[256] = "";

	for (int i = 0; i < 5 && kw->words[i]; i++)
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s%s", i ? " " : "",
			 kw->words[i]);
	check(arg, &mgmt, name, SEC(6), "management.md section 6");
}

static void test_cli_commands(void **state)
{
	struct misses m = { .what = "CLI commands" };

	cli_cmd_foreach(cli_cb, &m);
	report(&m);
}

/* The rule itself, on a made-up document. */
static void test_rule(void **state)
{
	struct doc d = { .name = "test" };
	struct defs def = { 0 };

	block_spans(&d, "A `timeout connect` and `hdr(name)` and `hdr_cnt` and `no option x`.",
		    1, &def, 0);
	block_spans(&d, "For each `<d>` of `aa`, `bb` (not `cc`): the", 1, &def, 0);
	block_spans(&d, "| `sc<n>_<d>([<t>])` | `crt\\|x` |", 2, &def, 1);
	block_spans(&d, "| `t_<d>` for `<d>` in `x1`, `x2` | `<d>` of it |", 2, &def, 1);
	block_spans(&d, "| `m_<m>_<o>` for `<m>` in `p`, `q` and `<o>` in `r`, `s` |", 2, &def, 1);
	assert_true(documented(&d, "timeout connect", SEC_ANY));
	assert_true(documented(&d, "timeout", SEC_ANY));   /* used as `timeout connect` */
	assert_false(documented(&d, "timeout conn", SEC_ANY));
	assert_true(documented(&d, "hdr", SEC_ANY));
	assert_true(documented(&d, "hdr_cnt", SEC_ANY));
	assert_false(documented(&d, "hdr_c", SEC_ANY));
	assert_false(documented(&d, "option x", SEC_ANY));
	assert_true(documented(&d, "sc2_bb", SEC(2)));
	assert_false(documented(&d, "sc2_bb", SEC(1)));
	assert_false(documented(&d, "sc3_bb", SEC_ANY));
	assert_false(documented(&d, "sc0_cc", SEC_ANY));
	assert_true(documented(&d, "crt", SEC_ANY));
	assert_true(documented(&d, "t_x2", SEC_ANY));
	assert_false(documented(&d, "t_aa", SEC_ANY));
	assert_true(documented(&d, "m_q_r", SEC_ANY));
	assert_false(documented(&d, "m_r_q", SEC_ANY));
	assert_false(documented(&d, "m_q_x2", SEC_ANY));
	for (size_t i = 0; i < d.n; i++)
		free(d.spans[i].text);
	free(d.spans);
	defs_clear(&def);
}

static int setup(void **state)
{
	doc_load(&conf);
	doc_load(&mgmt);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_cfg_keywords),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_bind_options),
		cmocka_unit_test(test_server_options),
		cmocka_unit_test(test_fetches),
		cmocka_unit_test(test_converters),
		cmocka_unit_test(test_actions),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_cli_commands),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
