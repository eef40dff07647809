/* crt-lists and certificate directories: loaded once, shared by the bind
 * lines naming them, and edited at run time ("add/del/show ssl crt-list"):
 * a line added or removed changes every bind line using the list, for the
 * next handshakes (ssl_int.h). */
#ifdef USE_OPENSSL
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "ssl_int.h"

static struct crtlist *crtlists;

static void crtlist_ent_free(struct crtlist_ent *e)
{
	for (int k = 0; k < e->nfilters; k++)
		free(e->filters[k]);
	free(e->filters);
	ssl_opts_free(e->lo);
	free(e);
}

static struct crtlist *crtlist_find(const char *path)
{
	for (struct crtlist *l = crtlists; l; l = l->next)
		if (strcmp(l->path, path) == 0)
			return l;
	return NULL;
}

int crtlist_uses_ckch(const struct ckch *ck)
{
	for (struct crtlist *l = crtlists; l; l = l->next)
		for (struct crtlist_ent *e = l->ents; e; e = e->next)
			if (e->ck == ck)
				return 1;
	return 0;
}

/* Splits <line> into words at blanks (no quoting in crt-lists). Returns the
 * count, at most <max>. */
static int crtlist_split(char *line, char **w, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && n < max;
	     t = strtok_r(NULL, " \t\r\n", &save))
		w[n++] = t;
	return n;
}

/* Parses one crt-list line <text> (modified) into a new entry: the
 * certificate is looked up in the store (<load>: loaded from disk when it
 * is not there). Returns the entry, NULL for an empty or comment line (no
 * <err>), or NULL with <err> allocated. */
static struct crtlist_ent *crtlist_parse_line(char *text, int load, char **err)
{
	char *w[64], *p = text, *open, *path;
	struct ssl_bind_opts *lo = NULL;
	struct crtlist_ent *e;
	struct ckch *ck;
	int n, i = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (!*p || *p == '#')
		return NULL;
	/* "<crt> [<options>] [<sni filter>...]": the options between brackets */
	open = strchr(p, '[');
	if (open) {
		char *close = strchr(open, ']');
		char *ow[32];
		int on;

		if (!close) {
			*err = str_fmt("missing ']'");
			return NULL;
		}
		*open = *close = '\0';
		lo = xcalloc(1, sizeof(*lo));
		lo->verify = -1;
		on = crtlist_split(open + 1, ow, 32);
		for (int k = 0; k < on; ) {
			char *e2 = NULL;
			int used = ssl_bind_parse_opt(lo, on - k, ow + k, 1, &e2);

			if (used <= 0) {
				*err = e2 ? e2 : str_fmt("unknown or unsupported option '%s'", ow[k]);
				ssl_opts_free(lo);
				return NULL;
			}
			k += used;
		}
		n = crtlist_split(p, w, 1);
		n += crtlist_split(close + 1, w + n, 63);
	} else {
		n = crtlist_split(p, w, 64);
	}
	if (!n) {
		ssl_opts_free(lo);
		return NULL;
	}
	path = ssl_path_resolve(w[i++], 1);
	ck = load ? ckch_get(path, err) : ckch_find(path);
	if (!ck || !ck->cert) {
		if (!load)
			*err = str_fmt("certificate '%s' does not exist!", path);
		free(path);
		ssl_opts_free(lo);
		return NULL;
	}
	free(path);
	e = xcalloc(1, sizeof(*e));
	e->ck = ck;
	e->lo = lo;
	if (n > i) {
		e->filters = xcalloc((size_t)(n - i), sizeof(char *));
		for (; i < n; i++)
			e->filters[e->nfilters++] = xstrdup(w[i]);
	}
	return e;
}

static void crtlist_append(struct crtlist *l, struct crtlist_ent *e)
{
	struct crtlist_ent **pp = &l->ents;

	while (*pp)
		pp = &(*pp)->next;
	*pp = e;
}

static int crtlist_load_file(struct crtlist *l, char **err)
{
	FILE *f = fopen(l->path, "r");
	char line[4096];
	int lineno = 0;

	if (!f) {
		*err = str_fmt("cannot read crt-list '%s': %s", l->path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *e2 = NULL;
		struct crtlist_ent *e;

		lineno++;
		e = crtlist_parse_line(line, 1, &e2);
		if (e2) {
			*err = str_fmt("'%s' line %d: %s", l->path, lineno, e2);
			free(e2);
			fclose(f);
			return -1;
		}
		if (!e)
			continue;
		e->line = lineno;
		crtlist_append(l, e);
	}
	fclose(f);
	return 0;
}

/* Files of a certificate directory that are not certificates themselves. */
static int crtlist_dir_skip(const char *name)
{
	static const char *const sfx[] = { ".key", ".ocsp", ".issuer", ".sctl", ".crt-list" };
	size_t l = strlen(name);

	if (name[0] == '.')
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		size_t k = strlen(sfx[i]);

		if (l > k && strcmp(name + l - k, sfx[i]) == 0)
			return 1;
	}
	return 0;
}

/* A directory: every certificate in it, in name order (the first one is
 * the default). */
static int crtlist_load_dir(struct crtlist *l, char **err)
{
	struct dirent **names;
	struct stat st;
	int n = scandir(l->path, &names, NULL, alphasort), ret = 0;

	if (n < 0) {
		*err = str_fmt("cannot read directory '%s': %s", l->path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char *file = str_fmt("%s/%s", l->path, names[i]->d_name);

		if (!ret && !crtlist_dir_skip(names[i]->d_name) && stat(file, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			struct ckch *ck = ckch_get(file, err);

			if (ck) {
				struct crtlist_ent *e = xcalloc(1, sizeof(*e));

				e->ck = ck;
				e->line = i + 1;
				crtlist_append(l, e);
			} else {
				ret = -1;
			}
		}
		free(file);
		free(names[i]);
	}
	free(names);
	return ret;
}

static void crtlist_free(struct crtlist *l)
{
	while (l->ents) {
		struct crtlist_ent *e = l->ents;

		l->ents = e->next;
		crtlist_ent_free(e);
	}
	free(l->binds);
	free(l->path);
	free(l);
}

int crtlist_use(struct ssl_bind_opts *o, const char *path, int dir, char **err)
{
	struct crtlist *l = crtlist_find(path);

	if (!l) {
		l = xcalloc(1, sizeof(*l));
		l->path = xstrdup(path);
		l->dir = dir;
		if ((dir ? crtlist_load_dir(l, err) : crtlist_load_file(l, err)) == -1) {
			crtlist_free(l);
			return -1;
		}
		l->next = crtlists;
		crtlists = l;
	}
	for (struct crtlist_ent *e = l->ents; e; e = e->next)
		ssl_add_crt(o, e->ck, e);
	l->binds = xrealloc(l->binds, sizeof(*l->binds) * (size_t)(l->nbinds + 1));
	l->binds[l->nbinds++] = o;
	o->lists = xrealloc(o->lists, sizeof(*o->lists) * (size_t)(o->nlists + 1));
	o->lists[o->nlists++] = l;
	return 0;
}

void crtlist_forget_bind(struct ssl_bind_opts *o)
{
	for (int i = 0; i < o->nlists; i++) {
		struct crtlist *l = o->lists[i];

		for (int k = 0; k < l->nbinds; k++)
			if (l->binds[k] == o) {
				l->binds[k] = l->binds[--l->nbinds];
				break;
			}
	}
	free(o->lists);
	o->lists = NULL;
	o->nlists = 0;
}

void crtlist_forget_all(void)
{
	while (crtlists) {
		struct crtlist *l = crtlists;

		crtlists = l->next;
		crtlist_free(l);
	}
}

/* ---- runtime API ---- */

/* Removes certificate line <i> of <o> (its context freed). */
static void crtlist_bind_remove(struct ssl_bind_opts *o, int i)
{
	ssl_crt_ent_release(&o->crts[i]);
	memmove(&o->crts[i], &o->crts[i + 1], sizeof(*o->crts) * (size_t)(o->ncrts - i - 1));
	o->ncrts--;
}

/* The lines of <text> that are neither blank nor comments. */
static int crtlist_count_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; *p; ) {
		size_t l = strcspn(p, "\n"), sp = strspn(p, " \t\r");

		if (sp < l && p[sp] != '#')
			n++;
		p += l + (p[l] == '\n');
	}
	return n;
}

/* add ssl crt-list <list> <cert> | <list> <<payload (one crt-list line) */
static int cli_add_crtlist(struct cli_ctx *ctx, int argc, char **argv)
{
	struct crtlist *l = argc > 3 ? crtlist_find(argv[3]) : NULL;
	struct crtlist_ent *ent;
	char *text, *err = NULL;
	int added = 0, failed = 0;

	if (argc < 4 || (argc < 5 && !ctx->payload)) {
		dstr_printf(&ctx->out, "'add ssl crt-list' expects a filename and a certificate "
			    "name (or a crt-list line as a payload)\n");
		return -1;
	}
	if (!l) {
		dstr_printf(&ctx->out, "Can't edit the crt-list: crt-list '%s' does not exist!\n",
			    argv[3]);
		return -1;
	}
	text = argc > 4 ? xstrdup(argv[4]) : str_fmt("%.*s", (int)ctx->payload_len, ctx->payload);
	if (crtlist_count_lines(text) > 1) {
		dstr_printf(&ctx->out, "Can't edit the crt-list: only one line is supported in the "
			    "payload!\n");
		free(text);
		return -1;
	}
	ent = crtlist_parse_line(text, 0, &err);
	free(text);
	if (!ent) {
		dstr_printf(&ctx->out, "Can't edit the crt-list: %s\n", err ? err : "empty line");
		free(err);
		return -1;
	}
	if (l->dir && (ent->lo || ent->nfilters)) {
		dstr_printf(&ctx->out, "Can't edit the crt-list: options and SNI filters are not "
			    "supported for a directory!\n");
		crtlist_ent_free(ent);
		return -1;
	}
	/* every bind line using the list gets the certificate, or none does */
	for (int b = 0; b < l->nbinds && !failed; b++) {
		struct ssl_bind_opts *o = l->binds[b];
		struct ssl_crt_ent *e = ssl_add_crt(o, ent->ck, ent);

		if (o->built && ssl_crt_ent_build(o, e, &err) == -1) {
			o->ncrts--;
			failed = 1;
			break;
		}
		added++;
	}
	if (failed) {
		for (int b = 0; b < added; b++)
			crtlist_bind_remove(l->binds[b], l->binds[b]->ncrts - 1);
		dstr_printf(&ctx->out, "Can't edit the crt-list: %s\n", err);
		free(err);
		crtlist_ent_free(ent);
		return -1;
	}
	for (int b = 0; b < l->nbinds; b++)
		if (l->binds[b]->built)
			ssl_ckch_index(l->binds[b]);
	/* the next line number, so that "del ssl crt-list <crt>:<line>" names it */
	for (struct crtlist_ent *e = l->ents; e; e = e->next)
		ent->line = MAX(ent->line, e->line);
	ent->line++;
	crtlist_append(l, ent);
	dstr_printf(&ctx->out, "Inserting certificate '%s' in crt-list '%s'.\nSuccess!\n",
		    ent->ck->path, l->path);
	return 0;
}

/* del ssl crt-list <list> <cert>[:<line>] */
static int cli_del_crtlist(struct cli_ctx *ctx, int argc, char **argv)
{
	struct crtlist *l = argc > 4 ? crtlist_find(argv[3]) : NULL;
	struct crtlist_ent *found = NULL, **pp;
	char *name, *colon;
	int count = 0, line = 0;

	if (argc < 5) {
		dstr_printf(&ctx->out, "'del ssl crt-list' expects a filename and a certificate "
			    "name\n");
		return -1;
	}
	if (!l) {
		dstr_printf(&ctx->out, "Can't delete the entry: crt-list '%s' does not exist!\n",
			    argv[3]);
		return -1;
	}
	name = xstrdup(argv[4]);
	colon = strrchr(name, ':');
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		line = atoi(colon + 1);
		*colon = '\0';
	}
	for (struct crtlist_ent *e = l->ents; e; e = e->next)
		if (strcmp(e->ck->path, name) == 0 && (!line || e->line == line)) {
			count++;
			found = found ? found : e;
		}
	if (!found) {
		dstr_printf(&ctx->out, "Can't delete the entry: certificate '%s' does not exist in "
			    "crt-list '%s'!\n", name, l->path);
		free(name);
		return -1;
	}
	if (count > 1) {
		dstr_printf(&ctx->out, "Can't delete the entry: found the certificate '%s' in several "
			    "entries, please specify a line number preceded by colons (", name);
		count = 0;
		for (struct crtlist_ent *e = l->ents; e; e = e->next)
			if (strcmp(e->ck->path, name) == 0)
				dstr_printf(&ctx->out, "%s%d", count++ ? ", " : "", e->line);
		dstr_printf(&ctx->out, ")!\n");
		free(name);
		return -1;
	}
	for (int b = 0; b < l->nbinds; b++)
		if (l->binds[b]->ncrts && l->binds[b]->crts[0].src == found) {
			dstr_printf(&ctx->out, "Can't delete the entry: certificate '%s' cannot be "
				    "deleted, it is used as default certificate by the following "
				    "frontends:\n\t- %s:%d\n", name, l->binds[b]->conf_file,
				    l->binds[b]->conf_line);
			free(name);
			return -1;
		}
	for (int b = 0; b < l->nbinds; b++) {
		struct ssl_bind_opts *o = l->binds[b];

		for (int i = 0; i < o->ncrts; i++)
			if (o->crts[i].src == found) {
				crtlist_bind_remove(o, i);
				break;
			}
		if (o->built)
			ssl_ckch_index(o);
	}
	for (pp = &l->ents; *pp != found; pp = &(*pp)->next)
		;
	*pp = found->next;
	crtlist_ent_free(found);
	dstr_printf(&ctx->out, "Entry '%s' deleted in crtlist '%s'!\n", name, l->path);
	free(name);
	return 0;
}

/* show ssl crt-list [-n] [<list>] */
static int cli_show_crtlist(struct cli_ctx *ctx, int argc, char **argv)
{
	int numbers = argc > 3 && strcmp(argv[3], "-n") == 0;
	const char *name = argc > 3 + numbers ? argv[3 + numbers] : NULL;
	struct crtlist *l;

	if (!name) {
		for (l = crtlists; l; l = l->next)
			dstr_printf(&ctx->out, "%s\n", l->path);
		return 0;
	}
	if (!(l = crtlist_find(name))) {
		dstr_printf(&ctx->out, "didn't find the specified filename\n");
		return -1;
	}
	dstr_printf(&ctx->out, "# %s\n", l->path);
	for (struct crtlist_ent *e = l->ents; e; e = e->next) {
		dstr_printf(&ctx->out, "%s", e->ck->path);
		if (numbers)
			dstr_printf(&ctx->out, ":%d", e->line);
		if (e->lo) {
			dstr_printf(&ctx->out, " [");
			ssl_opts_dump(&ctx->out, e->lo);
			dstr_printf(&ctx->out, "]");
		}
		for (int k = 0; k < e->nfilters; k++)
			dstr_printf(&ctx->out, " %s", e->filters[k]);
		dstr_printf(&ctx->out, "\n");
	}
	return 0;
}

static struct cli_kw crtlist_cli_kws[] = {
	{ { "add", "ssl", "crt-list", NULL }, "add ssl crt-list <crtlist> <certfile>|<payload>",
	  "add a line to a crt-list or directory: every bind line using it serves the certificate",
	  CLI_LVL_ADMIN, cli_add_crtlist },
	{ { "del", "ssl", "crt-list", NULL }, "del ssl crt-list <crtlist> <certfile>[:<line>]",
	  "remove a line from a crt-list or directory", CLI_LVL_ADMIN, cli_del_crtlist },
	{ { "show", "ssl", "crt-list", NULL }, "show ssl crt-list [-n] [<crtlist>]",
	  "list the crt-lists and directories, or the lines of one", CLI_LVL_OPERATOR,
	  cli_show_crtlist },
};

SLUICE_INIT(crtlist_register)
{
	cli_register(crtlist_cli_kws, ARRAY_SIZE(crtlist_cli_kws));
}

#endif
