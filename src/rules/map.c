/* Maps and pattern references (map.h): loading of map and ACL pattern
 * files shared by name, the journal of runtime changes a reload carries,
 * the map_* converters and the map actions (runtime API: map_cli.c). */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/logformat.h>
#include <sluice/map.h>
#include <sluice/pattern.h>
#include <sluice/sample.h>
#include <sluice/str.h>

/* Every reference, in creation order; ids count from 0 as HAProxy's. */
static struct {
	struct pat_ref  *head, **tail;
	int              next_id;
} pat_refs = { NULL, &pat_refs.head, 0 };

static struct pat_ref *pat_ref_alloc(const char *file, unsigned flags, const char *desc)
{
	struct pat_ref *ref = xcalloc(1, sizeof(*ref));

	ref->file = file ? xstrdup(file) : NULL;
	ref->desc = xstrdup(desc ? desc : "");
	ref->flags = flags;
	ref->id = pat_refs.next_id++;
	*pat_refs.tail = ref;
	pat_refs.tail = &ref->next;
	return ref;
}

struct pat_ref *pat_ref_new(unsigned flags, const char *desc)
{
	return pat_ref_alloc(NULL, flags, desc);
}

struct pat_ref_elt *pat_ref_append(struct pat_ref *ref, const char *key, const char *val,
                                   enum pat_op op)
{
	size_t kl = strlen(key), vl = val ? strlen(val) : 0;
	struct pat_ref_elt *e = xcalloc(1, sizeof(*e) + kl + vl + 2);

	e->key = e->buf;
	memcpy(e->key, key, kl);
	e->val = e->buf + kl + 1;
	if (vl)
		memcpy(e->val, val, vl);
	e->op = op;
	e->prev = ref->tail;
	if (ref->tail)
		ref->tail->next = e;
	else
		ref->head = e;
	ref->tail = e;
	ref->count++;
	return e;
}

static void pat_ref_unlink(struct pat_ref *ref, struct pat_ref_elt *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		ref->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		ref->tail = e->prev;
	ref->count--;
	if (e->val < e->buf || e->val > e->buf + strlen(e->key) + 1)
		free(e->val);
	free(e);
}

static int pat_ref_load_file(struct pat_ref *ref, const char *path, char **err)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		*err = str_fmt("failed to open pattern file '%s': %s", path, strerror(errno));
		return -1;
	}
	while ((n = getline(&line, &cap, f)) != -1) {
		char *p = line, *v = NULL;

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		if (ref->flags & PAT_REF_MAP) {
			size_t kl = strcspn(p, " \t");

			v = p + kl;
			if (*v) {
				*v++ = '\0';
				while (*v == ' ' || *v == '\t')
					v++;
			}
		}
		pat_ref_append(ref, p, v, PAT_OP_NONE);
	}
	free(line);
	fclose(f);
	return 0;
}

struct pat_ref *pat_ref_load(const char *file, unsigned flags, const char *desc, char **err)
{
	struct pat_ref *ref;

	for (ref = pat_refs.head; ref; ref = ref->next)
		if (ref->file && strcmp(ref->file, file) == 0 &&
		    (ref->flags & PAT_REF_MAP) == (flags & PAT_REF_MAP)) {
			ref->flags |= flags;
			return ref;
		}
	ref = pat_ref_alloc(file, flags, desc);
	if (pat_ref_load_file(ref, file, err) == -1) {
		ref->file[0] = '\0';   /* never found again; freed at exit */
		return NULL;
	}
	return ref;
}

static void pat_ref_add_set(struct pat_ref *ref, struct pat_set *ps, int owned)
{
	ref->sets = xrealloc(ref->sets, (size_t)(ref->nsets + 1) * sizeof(*ref->sets));
	ref->sets[ref->nsets++] = (struct pat_ref_set){ ps, owned };
}

static int pat_ref_fill(struct pat_ref *ref, struct pat_set *ps, char **err)
{
	for (struct pat_ref_elt *e = ref->head; e; e = e->next) {
		char *perr = NULL;

		if (pat_set_add_data(ps, e->key, e->op, e, &perr) == -1) {
			if (ref->file)
				*err = str_fmt("file '%s': %s", ref->file, perr);
			else
				*err = perr, perr = NULL;
			free(perr);
			return -1;
		}
	}
	return 0;
}

int pat_ref_attach(struct pat_ref *ref, struct pat_set *ps, char **err)
{
	if (pat_ref_fill(ref, ps, err) == -1)
		return -1;
	pat_ref_add_set(ref, ps, 0);
	return 0;
}

void pat_ref_detach(struct pat_set *ps)
{
	for (struct pat_ref *ref = pat_refs.head; ref; ref = ref->next)
		for (int i = 0; i < ref->nsets; i++)
			if (ref->sets[i].ps == ps && !ref->sets[i].owned) {
				ref->sets[i--] = ref->sets[--ref->nsets];
			}
}

struct pat_set *pat_ref_get_set(struct pat_ref *ref, enum pat_match m, unsigned flags,
                                char **err)
{
	struct pat_set *ps;

	for (int i = 0; i < ref->nsets; i++)
		if (ref->sets[i].owned && ref->sets[i].ps->match == m &&
		    ref->sets[i].ps->flags == flags)
			return ref->sets[i].ps;
	ps = xcalloc(1, sizeof(*ps));
	pat_set_init(ps, m, flags);
	if (pat_ref_fill(ref, ps, err) == -1) {
		pat_set_free(ps);
		free(ps);
		return NULL;
	}
	pat_ref_add_set(ref, ps, 1);
	return ps;
}

int pat_ref_check(const struct pat_ref *ref, const char *key, char **err)
{
	for (int i = 0; i < ref->nsets; i++)
		if (pat_set_check(ref->sets[i].ps->match, key, err) == -1)
			return -1;
	return 0;
}

int pat_ref_add(struct pat_ref *ref, const char *key, const char *val, char **err)
{
	struct pat_ref_elt *e;

	if (pat_ref_check(ref, key, err) == -1)
		return -1;
	e = pat_ref_append(ref, key, val, PAT_OP_NONE);
	for (int i = 0; i < ref->nsets; i++) {
		char *perr = NULL;

		if (pat_set_add_data(ref->sets[i].ps, key, PAT_OP_NONE, e, &perr) == -1) {
			/* checked above: only a method refusing patterns gets here */
			free(perr);
		}
	}
	return 0;
}

void pat_ref_del_elt(struct pat_ref *ref, struct pat_ref_elt *e)
{
	for (int i = 0; i < ref->nsets; i++)
		pat_set_del(ref->sets[i].ps, e->key, e);
	pat_ref_unlink(ref, e);
}

int pat_ref_del_key(struct pat_ref *ref, const char *key)
{
	int n = 0;

	for (struct pat_ref_elt *e = ref->head, *next; e; e = next) {
		next = e->next;
		if (strcmp(e->key, key) == 0) {
			pat_ref_del_elt(ref, e);
			n++;
		}
	}
	return n;
}

void pat_ref_set_elt(struct pat_ref_elt *e, const char *val)
{
	char *old = e->val;

	e->val = xstrdup(val);
	if (old < e->buf || old > e->buf + strlen(e->key) + 1)
		free(old);
}

int pat_ref_set_key(struct pat_ref *ref, const char *key, const char *val)
{
	int n = 0;

	for (struct pat_ref_elt *e = ref->head; e; e = e->next)
		if (strcmp(e->key, key) == 0) {
			pat_ref_set_elt(e, val);
			n++;
		}
	return n;
}

void pat_ref_clear(struct pat_ref *ref)
{
	for (int i = 0; i < ref->nsets; i++) {
		struct pat_set *ps = ref->sets[i].ps;
		enum pat_match m = ps->match;
		unsigned flags = ps->flags;

		/* A set may also hold other references' entries (an ACL with
		 * several -f): remove only ours, unless it is ours alone. */
		if (ref->sets[i].owned) {
			pat_set_free(ps);
			pat_set_init(ps, m, flags);
		} else {
			for (struct pat_ref_elt *e = ref->head; e; e = e->next)
				pat_set_del(ps, e->key, e);
		}
	}
	while (ref->head)
		pat_ref_unlink(ref, ref->head);
}

struct pat_ref *pat_ref_find(const char *name, unsigned flag)
{
	char *end;

	if (name[0] == '#') {
		long id;

		errno = 0;
		id = strtol(name + 1, &end, 10);
		if (!name[1] || *end || errno)
			return NULL;
		for (struct pat_ref *r = pat_refs.head; r; r = r->next)
			if (r->id == id && (r->flags & flag))
				return r;
		return NULL;
	}
	for (struct pat_ref *r = pat_refs.head; r; r = r->next)
		if (r->file && r->file[0] && (r->flags & flag) && strcmp(r->file, name) == 0)
			return r;
	return NULL;
}

struct pat_ref *pat_ref_first(void)
{
	return pat_refs.head;
}

struct pat_ref_elt *pat_ref_find_elt(struct pat_ref *ref, const char *name)
{
	uintptr_t addr;
	char *end;

	if (name[0] != '#' || !name[1])
		return NULL;
	errno = 0;
	addr = (uintptr_t)strtoull(name + 1, &end, 16);
	if (*end || errno)
		return NULL;
	for (struct pat_ref_elt *e = ref->head; e; e = e->next)
		if ((uintptr_t)e == addr)
			return e;
	return NULL;
}

/* ------------------------------------------------------------------------
 * The journal of runtime changes, for the "maps" reload-state row: the
 * operations of the runtime API and of the map actions since start, to be
 * replayed by file name on the new worker's (maybe edited) files. A clear
 * drops what came before it, a del of a key drops the earlier operations
 * on that key, a set the earlier sets of it. Past PAT_JOURNAL_MAX bytes,
 * or after an operation on one entry (#<ref>), the journal is dropped and
 * the whole contents are carried instead.
 */


struct pat_jop {
	struct pat_jop   *next;
	enum pat_jop_kind kind;
	char             *key, *val;
};

struct pat_journal {
	struct pat_jop  *head, **tail;
	size_t           bytes;
	int              full;    /* carry the whole contents */
};

static void pat_jop_free(struct pat_jop *op)
{
	free(op->key);
	free(op->val);
	free(op);
}

static void pat_journal_drop_ops(struct pat_journal *j)
{
	while (j->head) {
		struct pat_jop *op = j->head;

		j->head = op->next;
		pat_jop_free(op);
	}
	j->tail = &j->head;
	j->bytes = 0;
}

static void pat_journal_free(struct pat_ref *ref)
{
	if (!ref->journal)
		return;
	pat_journal_drop_ops(ref->journal);
	free(ref->journal);
	ref->journal = NULL;
}

static struct pat_journal *pat_journal_get(struct pat_ref *ref)
{
	if (!ref->journal) {
		ref->journal = xcalloc(1, sizeof(*ref->journal));
		ref->journal->tail = &ref->journal->head;
	}
	return ref->journal;
}

void pat_journal_full(struct pat_ref *ref)
{
	struct pat_journal *j = pat_journal_get(ref);

	pat_journal_drop_ops(j);
	j->full = 1;
}

void pat_journal_add(struct pat_ref *ref, enum pat_jop_kind kind, const char *key,
                     const char *val)
{
	struct pat_journal *j;
	struct pat_jop *op, **pp;

	if (!ref->file || !ref->file[0])
		return;   /* inline patterns: no runtime command reaches them */
	j = pat_journal_get(ref);
	if (kind == JOP_CLEAR) {
		pat_journal_drop_ops(j);
		j->full = 0;
	} else if (j->full) {
		return;   /* the contents will be carried whole */
	} else if (kind == JOP_DEL || kind == JOP_SET) {
		for (pp = &j->head; (op = *pp); ) {
			if (op->kind != JOP_CLEAR && strcmp(op->key, key) == 0 &&
			    (kind == JOP_DEL || op->kind == JOP_SET)) {
				*pp = op->next;
				j->bytes -= sizeof(*op) + strlen(op->key) + (op->val ? strlen(op->val) : 0);
				pat_jop_free(op);
				continue;
			}
			pp = &op->next;
		}
		for (j->tail = &j->head; *j->tail; j->tail = &(*j->tail)->next)
			;
	}
	op = xcalloc(1, sizeof(*op));
	op->kind = kind;
	op->key = key ? xstrdup(key) : NULL;
	op->val = val ? xstrdup(val) : NULL;
	j->bytes += sizeof(*op) + (key ? strlen(key) : 0) + (val ? strlen(val) : 0);
	*j->tail = op;
	j->tail = &op->next;
	if (j->bytes > PAT_JOURNAL_MAX)
		pat_journal_full(ref);
}

/* "<verb> map|acl <file>" then the quoted words <a> and <b> (NULL: none),
 * or nothing when a word cannot be carried on a command line. */
static void pat_journal_line(struct dstr *out, const struct pat_ref *ref, const char *verb,
                             const char *a, const char *b)
{
	size_t start = out->len;

	if (dstr_printf(out, "%s %s ", verb, (ref->flags & PAT_REF_MAP) ? "map" : "acl") == 0 &&
	    str_cli_quote(out, ref->file, strlen(ref->file)) == 0 &&
	    (!a || (dstr_add(out, " ", 1) == 0 && str_cli_quote(out, a, strlen(a)) == 0)) &&
	    (!b || (dstr_add(out, " ", 1) == 0 && str_cli_quote(out, b, strlen(b)) == 0)) &&
	    dstr_add(out, "\n", 1) == 0)
		return;
	out->len = start;
	if (out->p)
		out->p[start] = '\0';
}

/* The "maps" reload-state row. */
static void pat_journal_dump(struct dstr *out)
{
	for (const struct pat_ref *ref = pat_refs.head; ref; ref = ref->next) {
		const struct pat_journal *j = ref->journal;
		int map = !!(ref->flags & PAT_REF_MAP);

		if (!j || !ref->file || !ref->file[0])
			continue;
		if (j->full) {
			pat_journal_line(out, ref, "clear", NULL, NULL);
			for (const struct pat_ref_elt *e = ref->head; e; e = e->next)
				pat_journal_line(out, ref, "add", e->key, map ? e->val : NULL);
			continue;
		}
		for (const struct pat_jop *op = j->head; op; op = op->next) {
			static const char *const verbs[] = { "add", "del", "set", "clear" };

			pat_journal_line(out, ref, verbs[op->kind], op->key,
					 map || op->kind == JOP_SET ? op->val : NULL);
		}
	}
}

static struct cli_state_kw map_reload_kws[] = {
	{ "maps", pat_journal_dump },
};

void pat_ref_free_all(void)
{
	while (pat_refs.head) {
		struct pat_ref *ref = pat_refs.head;

		pat_refs.head = ref->next;
		while (ref->head)
			pat_ref_unlink(ref, ref->head);
		for (int i = 0; i < ref->nsets; i++)
			if (ref->sets[i].owned) {
				pat_set_free(ref->sets[i].ps);
				free(ref->sets[i].ps);
			}
		free(ref->sets);
		free(ref->file);
		free(ref->desc);
		pat_journal_free(ref);
		pat_ref_vers_free(ref);
		free(ref);
	}
	pat_refs.tail = &pat_refs.head;
	pat_refs.next_id = 0;
}

/* ------------------------------------------------------------------------
 * Converters: map[_<match>][_<out>](<file>[,<default>])
 */

struct map_conv {
	struct pat_set *ps;
	int             has_def;
};

/* What a map converter row reads: its .priv. */
struct map_sel {
	enum pat_match m;     /* how keys match */
	enum smp_type  out;   /* the type of the value returned */
};

static int map_conv_check(struct smp_arg *a, char **err, const void *priv)
{
	enum pat_match m = ((const struct map_sel *)priv)->m;
	enum smp_type out = ((const struct map_sel *)priv)->out;
	struct pat_ref *ref;
	struct pat_set *ps;
	char desc[512], *perr = NULL;

	if (!a[0].str || !a[0].str[0]) {
		*err = str_fmt("map converters expect a map file name");
		return -1;
	}
	if (a[1].type == ARGT_STR && out != SMP_T_STR) {
		struct sample d = { .type = SMP_T_STR, .flags = SMP_F_CONST };

		d.u.str.p = a[1].str;
		d.u.str.len = a[1].len;
		if (!smp_cast(&d, out)) {
			*err = str_fmt("map default value '%s' is not a valid %s", a[1].str,
				       smp_type_name(out));
			return -1;
		}
	}
	snprintf(desc, sizeof(desc), "pattern loaded from file '%s' used by map", a[0].str);
	ref = pat_ref_load(a[0].str, PAT_REF_MAP, desc, &perr);
	if (!ref) {
		*err = perr;
		return -1;
	}
	ps = pat_ref_get_set(ref, m, 0, err);
	if (!ps)
		return -1;
	a[0].ptr = ps;
	return 0;
}

static int map_conv_exec(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	enum smp_type out = ((const struct map_sel *)priv)->out;
	const struct pat_ref_elt *e = NULL;
	const char *v;

	if (pat_set_lookup(a[0].ptr, smp, (const void **)&e) && e)
		v = e->val;
	else if (a[1].type == ARGT_STR)
		v = a[1].str;
	else
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = v;
	smp->u.str.len = strlen(v);
	return out == SMP_T_STR ? 1 : smp_cast(smp, out);
}

/* map_regm: as map_reg, the value's \\N references replaced by the
 * regex's groups. */
static int map_regm_exec(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	enum smp_type out = ((const struct map_sel *)priv)->out;
	const struct pat_ref_elt *e = NULL;
	char subj[SMP_SCRATCH_SIZE], *o;
	size_t n;

	if (!smp_cast(smp, SMP_T_STR))
		return 0;
	n = smp->u.str.len < sizeof(subj) - 1 ? smp->u.str.len : sizeof(subj) - 1;
	memcpy(subj, smp->u.str.p, n);
	subj[n] = '\0';
	if (!pat_set_lookup(a[0].ptr, smp, (const void **)&e) || !e) {
		if (a[1].type != ARGT_STR)
			return 0;
		smp->type = SMP_T_STR;
		smp->flags |= SMP_F_CONST;
		smp->u.str.p = a[1].str;
		smp->u.str.len = strlen(a[1].str);
		return out == SMP_T_STR ? 1 : smp_cast(smp, out);
	}
	o = smp_scratch_get();
	smp->type = SMP_T_STR;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = o;
	smp->u.str.len = pat_regm_render(subj, e->val, o, SMP_SCRATCH_SIZE);
	return out == SMP_T_STR ? 1 : smp_cast(smp, out);
}

#define ROW(name, m, in, out) \
	{ name, map_conv_exec, { ARGT_STR, ARGT_STR }, 1, in, out, map_conv_check, \
	  &(const struct map_sel){ m, out } }
#define ROWS(name, m, in) \
	ROW(name, m, in, SMP_T_STR), ROW(name "_str", m, in, SMP_T_STR), \
	ROW(name "_int", m, in, SMP_T_SINT), ROW(name "_ip", m, in, SMP_T_ADDR)

static const struct smp_conv_kw map_convs[] = {
	ROW("map", PAT_M_STR, SMP_T_STR, SMP_T_STR),
	ROWS("map_str", PAT_M_STR, SMP_T_STR),
	ROWS("map_beg", PAT_M_BEG, SMP_T_STR),
	ROWS("map_sub", PAT_M_SUB, SMP_T_STR),
	ROWS("map_dir", PAT_M_DIR, SMP_T_STR),
	ROWS("map_dom", PAT_M_DOM, SMP_T_STR),
	ROWS("map_end", PAT_M_END, SMP_T_STR),
	ROWS("map_reg", PAT_M_REG, SMP_T_STR),
	ROWS("map_ip", PAT_M_IP, SMP_T_ADDR),
#define ROWM(name, out) \
	{ name, map_regm_exec, { ARGT_STR, ARGT_STR }, 1, SMP_T_STR, out, map_conv_check, \
	  &(const struct map_sel){ PAT_M_REG, out } }
	ROWM("map_regm", SMP_T_STR), ROWM("map_regm_str", SMP_T_STR),
	ROWM("map_regm_int", SMP_T_SINT), ROWM("map_regm_ip", SMP_T_ADDR),
#undef ROWM
	ROWS("map_int", PAT_M_INT, SMP_T_SINT),
};

/* ------------------------------------------------------------------------
 * Actions changing a map or an ACL file at run time (action.h):
 * set-map(<file>) <key fmt> <value fmt>, del-map(<file>) <key fmt>,
 * add-acl(<file>) <key fmt>, del-acl(<file>) <key fmt>.
 */

enum map_act { MA_SET_MAP, MA_DEL_MAP, MA_ADD_ACL, MA_DEL_ACL };

struct map_act_priv {
	enum map_act    kind;
	struct pat_ref *ref;
	struct lf_expr  key, val;
};

static void map_act_free(void *priv)
{
	struct map_act_priv *m = priv;

	if (!m)
		return;
	lf_free(&m->key);
	lf_free(&m->val);
	free(m);
}

static int map_act_parse(struct act_parse *p)
{
	const char *w = p->argv[0], *open = strchr(w, '('), *close = strrchr(w, ')');
	size_t n = strcspn(w, "(");
	struct map_act_priv *m;
	char file[PATH_MAX], desc[PATH_MAX + 64], *err = NULL;
	int nfmt;

	if (!open || !close || close < open + 2 || close[1] ||
	    (size_t)(close - open - 1) >= sizeof(file)) {
		cfg_alert(p->ctx, "action '%s' expects '%.*s(<file>)'", w, (int)n, w);
		return -1;
	}
	m = xcalloc(1, sizeof(*m));
	p->priv = m;
	m->kind = strncmp(w, "set-map", 7) == 0 ? MA_SET_MAP : strncmp(w, "del-map", 7) == 0 ?
		  MA_DEL_MAP : strncmp(w, "add-acl", 7) == 0 ? MA_ADD_ACL : MA_DEL_ACL;
	nfmt = m->kind == MA_SET_MAP ? 2 : 1;
	if (p->argc - p->idx < nfmt) {
		cfg_alert(p->ctx, "action '%.*s' expects %s", (int)n, w,
			  nfmt == 2 ? "a key and a value (log-format strings)" :
			  "a key (log-format string)");
		return -1;
	}
	snprintf(file, sizeof(file), "%.*s", (int)(close - open - 1), open + 1);
	snprintf(desc, sizeof(desc), "%s", file);
	m->ref = pat_ref_load(file, m->kind <= MA_DEL_MAP ? PAT_REF_MAP : PAT_REF_ACL, desc,
			      &err);
	if (!m->ref) {
		cfg_alert(p->ctx, "action '%.*s': %s", (int)n, w, err);
		free(err);
		return -1;
	}
	for (int i = 0; i < nfmt; i++) {
		if (lf_compile(p->argv[p->idx], i ? &m->val : &m->key, &err) == -1) {
			cfg_alert(p->ctx, "action '%.*s': invalid log-format '%s': %s", (int)n, w,
				  p->argv[p->idx], err ? err : "syntax error");
			free(err);
			return -1;
		}
		p->idx++;
	}
	return 0;
}

static void map_act_exec(void *priv, struct stream *s, unsigned where)
{
	const struct map_act_priv *m = priv;
	char key[1024], val[1024];
	char *err = NULL;

	if (act_render(s, &m->key, key, sizeof(key)) < 0)
		return;   /* cut: never store a truncated key */
	switch (m->kind) {
	case MA_SET_MAP:
		if (act_render(s, &m->val, val, sizeof(val)) < 0)
			return;
		if (pat_ref_set_key(m->ref, key, val))
			pat_journal_add(m->ref, JOP_SET, key, val);
		else if (pat_ref_add(m->ref, key, val, &err) == -1)
			free(err);
		else
			pat_journal_add(m->ref, JOP_ADD, key, val);
		break;
	case MA_ADD_ACL:
		for (const struct pat_ref_elt *e = m->ref->head; e; e = e->next)
			if (strcmp(e->key, key) == 0)
				return;   /* already there */
		if (pat_ref_add(m->ref, key, NULL, &err) == -1)
			free(err);
		else
			pat_journal_add(m->ref, JOP_ADD, key, NULL);
		break;
	default:
		if (pat_ref_del_key(m->ref, key))
			pat_journal_add(m->ref, JOP_DEL, key, NULL);
		break;
	}
}

#define MAP_ACT_W (ACT_W_HTTP_REQ | ACT_W_HTTP_RES)

static const struct act_kw map_acts[] = {
	{ "set-map", 0, MAP_ACT_W, map_act_parse, map_act_exec, map_act_free,
	  "(<file>) <key fmt> <value fmt>", NULL },
	{ "del-map", 0, MAP_ACT_W, map_act_parse, map_act_exec, map_act_free, "(<file>) <key fmt>", NULL },
	{ "add-acl", 0, MAP_ACT_W, map_act_parse, map_act_exec, map_act_free, "(<file>) <key fmt>", NULL },
	{ "del-acl", 0, MAP_ACT_W, map_act_parse, map_act_exec, map_act_free, "(<file>) <key fmt>", NULL },
};

SLUICE_INIT(map_register)
{
	smp_register_convs(map_convs, ARRAY_SIZE(map_convs));
	act_register(map_acts, ARRAY_SIZE(map_acts));
	cli_state_register(map_reload_kws, ARRAY_SIZE(map_reload_kws));
}
