/* Variables (vars.h): the stores of each scope, the set-var, set-var-fmt
 * and unset-var actions of every rule set, the var() fetch, the set-var() and unset-var()
 * converters, and strcmp()/concat()/add_item() which read variables.
 * Memory is bounded: one value per configured name, at most VAR_MAX_LEN
 * bytes. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/action.h>
#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/logformat.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/vars.h>

struct var {
	struct var    *next;
	enum var_scope scope;
	char          *name;
	struct sample  smp;      /* strings point to <buf> */
	char          *buf;
	size_t         cap;
};

/* The process scope lives as long as the process. */
static struct var_store var_proc;

/* The variable names the configuration uses (set-var, var()...): HAProxy's
 * "ifexist" of Lua's set_var() sets only those. */
struct var_name {
	struct var_name *next;
	enum var_scope   scope;
	char             name[];
};

static struct var_name *var_names;

static void var_name_declare(const struct var_ref *ref)
{
	struct var_name *n;

	if (var_ref_known(ref))
		return;
	n = xcalloc(1, sizeof(*n) + strlen(ref->name) + 1);
	n->scope = ref->scope;
	strcpy(n->name, ref->name);
	n->next = var_names;
	var_names = n;
}

int var_ref_known(const struct var_ref *ref)
{
	for (const struct var_name *n = var_names; n; n = n->next)
		if (n->scope == ref->scope && strcmp(n->name, ref->name) == 0)
			return 1;
	return 0;
}

static const char *const var_scope_names[VAR_SCOPES] = {
	[VAR_PROC] = "proc", [VAR_SESS] = "sess", [VAR_TXN] = "txn",
	[VAR_REQ] = "req", [VAR_RES] = "res", [VAR_CHECK] = "check",
};

int var_ref_parse(const char *s, size_t len, struct var_ref *ref, char **err)
{
	const char *dot = memchr(s, '.', len);

	if (dot) {
		for (int i = 0; i < VAR_SCOPES; i++)
			if (strlen(var_scope_names[i]) == (size_t)(dot - s) &&
			    memcmp(var_scope_names[i], s, (size_t)(dot - s)) == 0) {
				size_t nl = len - (size_t)(dot + 1 - s);

				if (!nl)
					break;
				for (size_t k = 0; k < nl; k++)
					if (!isalnum((unsigned char)dot[1 + k]) && dot[1 + k] != '_' &&
					    dot[1 + k] != '.') {
						*err = str_fmt("invalid character '%c' in variable name "
							       "'%.*s' (letters, digits, '_' and '.')",
							       dot[1 + k], (int)len, s);
						return -1;
					}
				ref->scope = (enum var_scope)i;
				ref->name = xcalloc(1, nl + 1);
				memcpy(ref->name, dot + 1, nl);
				return 0;
			}
	}
	*err = str_fmt("invalid variable name '%.*s' (expects <scope>.<name> with scope "
		       "proc, sess, txn, req, res or check)", (int)MIN(len, 64), s);
	return -1;
}

void var_ref_release(struct var_ref *ref)
{
	free(ref->name);
	ref->name = NULL;
}

/* The stores a health check lends while it evaluates (var_lend_check_stores). */
static struct var_store **var_lent_check, **var_lent_sess;

void var_lend_check_stores(struct var_store **check, struct var_store **sess)
{
	var_lent_check = check;
	var_lent_sess = sess;
}

/* The store of <ref>'s scope for <s>; created when <make>. */
static struct var_store *var_store_of(const struct var_ref *ref, struct stream *s, int make)
{
	struct var_store **sp;

	if (ref->scope == VAR_PROC)
		return &var_proc;
	if (!s) {
		/* a health check's evaluation: its own scopes only */
		sp = ref->scope == VAR_CHECK ? var_lent_check :
		     ref->scope == VAR_SESS ? var_lent_sess : NULL;
		if (!sp)
			return NULL;
		if (!*sp && make)
			*sp = xcalloc(1, sizeof(**sp));
		return *sp;
	}
	if (ref->scope == VAR_CHECK)
		return NULL;
	/* a mode tcp stream is its own transaction: its txn/req/res
	 * variables live as long as it, beside its sess ones */
	if (ref->scope == VAR_SESS ||
	    (!s->txn && stream_is_tcp(s)))
		sp = &s->vars;
	else if (s->txn)
		sp = &s->txn->vars;
	else
		return NULL;
	if (!*sp && make)
		*sp = xcalloc(1, sizeof(**sp));
	return *sp;
}

static struct var *var_find(struct var_store *st, const struct var_ref *ref, struct var ***pp)
{
	for (struct var **vp = &st->head; *vp; vp = &(*vp)->next)
		if ((*vp)->scope == ref->scope && strcmp((*vp)->name, ref->name) == 0) {
			if (pp)
				*pp = vp;
			return *vp;
		}
	return NULL;
}

static void var_free(struct var_store *st, struct var *v)
{
	st->bytes -= v->cap + sizeof(*v);
	free(v->buf);
	free(v->name);
	free(v);
}

int var_set(const struct var_ref *ref, struct stream *s, const struct sample *smp)
{
	struct var_store *st = var_store_of(ref, s, 1);
	struct var *v;

	if (!st)
		return 0;
	v = var_find(st, ref, NULL);
	if (!v) {
		v = xcalloc(1, sizeof(*v));
		v->scope = ref->scope;
		v->name = xstrdup(ref->name);
		v->next = st->head;
		st->head = v;
		st->bytes += sizeof(*v);
	}
	v->smp = *smp;
	v->smp.flags = 0;
	v->smp.strm = NULL;
	if (smp->type == SMP_T_STR || smp->type == SMP_T_BIN) {
		size_t len = MIN(smp->u.str.len, VAR_MAX_LEN);

		if (len + 1 > v->cap) {
			st->bytes -= v->cap;
			v->cap = len + 1;
			v->buf = xrealloc(v->buf, v->cap);
			st->bytes += v->cap;
		}
		memcpy(v->buf, smp->u.str.p, len);
		v->buf[len] = '\0';
		v->smp.u.str.p = v->buf;
		v->smp.u.str.len = len;
	}
	return 1;
}

void var_unset(const struct var_ref *ref, struct stream *s)
{
	struct var_store *st = var_store_of(ref, s, 0);
	struct var *v, **vp;

	if (!st || !(v = var_find(st, ref, &vp)))
		return;
	*vp = v->next;
	var_free(st, v);
}

int var_get(const struct var_ref *ref, struct stream *s, struct sample *smp)
{
	struct var_store *st = var_store_of(ref, s, 0);
	struct var *v = st ? var_find(st, ref, NULL) : NULL;

	if (!v)
		return 0;
	smp->type = v->smp.type;
	smp->u = v->smp.u;
	smp->flags |= SMP_F_CONST;
	return 1;
}

void var_store_clear(struct var_store *st)
{
	while (st->head) {
		struct var *v = st->head;

		st->head = v->next;
		var_free(st, v);
	}
}

void var_store_free(struct var_store **st)
{
	if (!*st)
		return;
	var_store_clear(*st);
	free(*st);
	*st = NULL;
}

struct var_or_const *var_or_const_new(const char *s, size_t len)
{
	struct var_or_const *vc = xcalloc(1, sizeof(*vc));
	char *err = NULL;

	if (var_ref_parse(s, len, &vc->ref, &err) == 0) {
		var_name_declare(&vc->ref);
		vc->is_var = 1;
		return vc;
	}
	free(err);
	vc->data = xcalloc(1, len + 1);
	memcpy(vc->data, s, len);
	vc->len = len;
	return vc;
}

void var_or_const_free(void *p)
{
	struct var_or_const *vc = p;

	if (!vc)
		return;
	var_ref_release(&vc->ref);
	free(vc->data);
	free(vc);
}

int var_or_const_get(const struct var_or_const *vc, struct stream *s, const char **p,
                     size_t *len)
{
	struct sample smp = { 0 };

	if (!vc->is_var) {
		*p = vc->data;
		*len = vc->len;
		return 1;
	}
	if (!var_get(&vc->ref, s, &smp))
		return 0;
	if (smp.type != SMP_T_STR && smp.type != SMP_T_BIN && !smp_cast(&smp, SMP_T_STR))
		return 0;
	*p = smp.u.str.p;
	*len = smp.u.str.len;
	return 1;
}

/* ------------------------------------------------------------------------
 * Fetch and converters
 */

/* Argument checker: the scope goes to a->sint and a->ptr points to the
 * name inside a->str (nothing more to free). */
static int var_check_arg(struct smp_arg *a, char **err)
{
	struct var_ref ref;

	if (!a->str || !a->len) {
		*err = str_fmt("missing variable name");
		return -1;
	}
	if (var_ref_parse(a->str, a->len, &ref, err) == -1)
		return -1;
	var_name_declare(&ref);
	var_ref_release(&ref);
	a->sint = ref.scope;
	a->ptr = strchr(a->str, '.') + 1;
	return 0;
}

static const struct var_ref *var_arg(const struct smp_arg *a, struct var_ref *r)
{
	r->scope = (enum var_scope)a->sint;
	r->name = a->ptr;
	return r;
}

static int var_check_0(struct smp_arg *a, char **err, const void *priv)
{
	return var_check_arg(&a[0], err);
}

static int fetch_var(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	struct var_ref r;

	return var_get(var_arg(&a[0], &r), s, smp);
}

static int conv_set_var(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	struct var_ref r;

	var_set(var_arg(&a[0], &r), smp->strm, smp);
	return 1;
}

static int conv_check_concat(struct smp_arg *a, char **err, const void *priv)
{
	return a[1].str && a[1].len ? var_check_arg(&a[1], err) : 0;
}

static int conv_concat(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	char *out = smp_scratch_get();
	size_t n = 0, l;
	struct sample v = { 0 };
	struct var_ref r;

	if (a[0].str) {
		l = MIN(strlen(a[0].str), SMP_SCRATCH_SIZE);
		memcpy(out, a[0].str, l);
		n += l;
	}
	l = MIN(smp->u.str.len, SMP_SCRATCH_SIZE - n);
	memcpy(out + n, smp->u.str.p, l);
	n += l;
	if (a[1].ptr && var_get(var_arg(&a[1], &r), smp->strm, &v) && smp_cast(&v, SMP_T_STR)) {
		l = MIN(v.u.str.len, SMP_SCRATCH_SIZE - n);
		memcpy(out + n, v.u.str.p, l);
		n += l;
	}
	if (a[2].str) {
		l = MIN(strlen(a[2].str), SMP_SCRATCH_SIZE - n);
		memcpy(out + n, a[2].str, l);
		n += l;
	}
	smp->type = SMP_T_STR;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = out;
	smp->u.str.len = n;
	return 1;
}

/* add_item(<delim>[,<var>][,<suffix>]): needs a variable or a suffix. */
static int conv_check_add_item(struct smp_arg *a, char **err, const void *priv)
{
	int has_var = a[1].str && a[1].len;

	if (!has_var && !(a[2].str && a[2].len)) {
		*err = str_fmt("expects a variable or a suffix after the delimiter");
		return -1;
	}
	return has_var ? var_check_arg(&a[1], err) : 0;
}

/* Appends <len> bytes of <p> to out[*n], as many as fit. */
static void add_bytes(char *out, size_t *n, const char *p, size_t len)
{
	len = MIN(len, SMP_SCRATCH_SIZE - *n);
	memcpy(out + *n, p, len);
	*n += len;
}

/* add_item: the string, then <delim> when the string is not empty and
 * something follows (a non-empty variable or suffix), then the variable
 * (nothing when unset) and the suffix. */
static int conv_add_item(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	char *out = smp_scratch_get();
	struct sample v = { 0 };
	struct var_ref r;
	size_t n = 0;
	int has_v = a[1].ptr && var_get(var_arg(&a[1], &r), smp->strm, &v) &&
		    smp_cast(&v, SMP_T_STR);

	add_bytes(out, &n, smp->u.str.p, smp->u.str.len);
	if (smp->u.str.len && ((has_v && v.u.str.len) || a[2].len))
		add_bytes(out, &n, a[0].str, a[0].len);
	if (has_v)
		add_bytes(out, &n, v.u.str.p, v.u.str.len);
	if (a[2].str)
		add_bytes(out, &n, a[2].str, a[2].len);
	smp->type = SMP_T_STR;
	smp->flags &= ~SMP_F_CONST;
	smp->u.str.p = out;
	smp->u.str.len = n;
	return 1;
}

/* unset-var(<var>): removes the variable; the sample goes on unchanged. */
static int conv_unset_var(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	struct var_ref r;

	var_unset(var_arg(&a[0], &r), smp->strm);
	return 1;
}

/* strcmp(var): <0, 0 or >0 as memcmp, then by length; no result when the
 * variable is not set. */
static int conv_strcmp(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	struct sample v = { 0 };
	struct var_ref vr;
	size_t l;
	int r;

	if (!var_get(var_arg(&a[0], &vr), smp->strm, &v) || !smp_cast(&v, SMP_T_STR))
		return 0;
	l = MIN(smp->u.str.len, v.u.str.len);
	r = memcmp(smp->u.str.p, v.u.str.p, l);
	if (!r)
		r = smp->u.str.len < v.u.str.len ? -1 : smp->u.str.len > v.u.str.len;
	smp->type = SMP_T_SINT;
	smp->u.sint = r < 0 ? -1 : r > 0;
	return 1;
}

/* Whether a[0..n) equals b[0..n), in a time that depends on <n> only. */
static int mem_equal_ct(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/* secure_memcmp(var): whether the input equals the variable's bytes, in a
 * time that does not depend on where they differ; false when unset. */
static int conv_secure_memcmp(const struct smp_arg *a, struct sample *smp, const void *priv)
{
	struct sample v = { 0 };
	struct var_ref vr;
	int eq;

	if (!var_get(var_arg(&a[0], &vr), smp->strm, &v) || !smp_cast(&v, SMP_T_BIN))
		eq = 0;
	else
		eq = v.u.str.len == smp->u.str.len &&
		     mem_equal_ct(v.u.str.p, smp->u.str.p, smp->u.str.len);
	smp->type = SMP_T_BOOL;
	smp->u.sint = eq;
	return 1;
}

/* ------------------------------------------------------------------------
 * Actions: set-var(<scope>.<name>[,<cond>...]) <expr>, set-var-fmt(...)
 * <format> and unset-var(<scope>.<name>), the name in the action word
 * (argv[0]).
 */

/* The conditions a set-var or set-var-fmt rule sets its variable under
 * (all must hold), as the set-var converter's: bits of var_act.conds, in
 * the order of var_conds[]. */
enum {
	VAR_C_EXISTS = 0x01, VAR_C_NOTEXISTS = 0x02, VAR_C_EMPTY = 0x04, VAR_C_NOTEMPTY = 0x08,
	VAR_C_SET = 0x10, VAR_C_NOTSET = 0x20, VAR_C_GT = 0x40, VAR_C_LT = 0x80,
};

static const char *const var_conds[] = {
	"ifexists", "ifnotexists", "ifempty", "ifnotempty", "ifset", "ifnotset", "ifgt", "iflt",
};

#define VAR_COND_MAX 4   /* as HAProxy: at most four conditions */

struct var_act {
	struct var_ref   ref;
	unsigned         conds;  /* VAR_C_* */
	struct smp_expr *expr;   /* set-var */
	struct lf_expr  *lf;     /* set-var-fmt */
};

static void var_act_free(void *priv)
{
	struct var_act *a = priv;

	if (!a)
		return;
	var_ref_release(&a->ref);
	if (a->expr) {
		smp_expr_free(a->expr);
		free(a->expr);
	}
	if (a->lf) {
		lf_free(a->lf);
		free(a->lf);
	}
	free(a);
}

/* "<name>(<scope>.<name>[,<cond>...])": the variable, then the conditions
 * (only for the actions that set it: <conds> not NULL). Returns 0, or -1
 * with an allocated <err>. */
static int var_act_parse_word(const char *w, struct var_ref *ref, unsigned *conds, char **err)
{
	const char *open = strchr(w, '('), *close = strrchr(w, ')'), *c;
	int n = 0;

	if (!open || !close || close < open || close[1]) {
		*err = str_fmt("expects '%.*s(<scope>.<name>%s)'", (int)strcspn(w, "("), w,
			       conds ? "[,<cond>...]" : "");
		return -1;
	}
	c = memchr(open + 1, ',', (size_t)(close - open - 1));
	if (c && !conds) {
		*err = str_fmt("takes no condition after the variable name ('%.*s')",
			       (int)(close - c - 1), c + 1);
		return -1;
	}
	for (const char *p = c; p && p < close; p = memchr(p + 1, ',', (size_t)(close - p - 1))) {
		const char *e = memchr(p + 1, ',', (size_t)(close - p - 1));
		size_t len = (size_t)((e ? e : close) - p - 1), i;

		for (i = 0; i < ARRAY_SIZE(var_conds); i++)
			if (strlen(var_conds[i]) == len && memcmp(var_conds[i], p + 1, len) == 0)
				break;
		if (i == ARRAY_SIZE(var_conds) || ++n > VAR_COND_MAX) {
			*err = i == ARRAY_SIZE(var_conds) ?
			       str_fmt("unknown condition '%.*s' (expects ifexists, ifnotexists, "
				       "ifempty, ifnotempty, ifset, ifnotset, ifgt or iflt)", (int)len, p + 1) :
			       str_fmt("at most %d conditions", VAR_COND_MAX);
			return -1;
		}
		*conds |= 1u << i;
	}
	if (var_ref_parse(open + 1, (size_t)((c ? c : close) - open - 1), ref, err) == -1)
		return -1;
	var_name_declare(ref);
	return 0;
}

int var_ref_parse_word(const char *w, struct var_ref *ref, char **err)
{
	return var_act_parse_word(w, ref, NULL, err);
}

/* The rule's arguments in p->priv, its action word read (with conditions
 * when <set>). Returns 0 or -1 after the message. */
static int var_act_new(struct act_parse *p, int set)
{
	struct var_act *a = xcalloc(1, sizeof(*a));
	char *err = NULL;

	p->priv = a;
	if (var_act_parse_word(p->argv[0], &a->ref, set ? &a->conds : NULL, &err) == -1) {
		act_alert(p, "%s", err);
		free(err);
		return -1;
	}
	return 0;
}

/* unset-var(<var>) */
static int var_act_parse_unset(struct act_parse *p)
{
	return var_act_new(p, 0);
}

static void var_act_exec_set_fmt(void *priv, struct stream *s, unsigned where);

/* set-var(<var>[,<cond>...]) <expr>, set-var-fmt(<var>[,<cond>...]) <format> */
static int var_act_parse_set(struct act_parse *p)
{
	int fmt = p->kw->exec == var_act_exec_set_fmt;
	struct var_act *a;
	const char *w;
	char *err = NULL;

	if (var_act_new(p, 1) == -1)
		return -1;
	a = p->priv;
	if (p->idx >= p->argc) {
		/* each engine worded it its own way before they shared this parser */
		if ((p->where & ACT_W_HTTP_ALL) || fmt)
			act_alert(p, "expects %s", fmt ? p->kw->usage : "(<scope>.<name>) <expr>");
		else
			cfg_alert(p->ctx, "action '%s' expects a sample expression", p->argv[0]);
		return -1;
	}
	w = p->argv[p->idx++];
	if (fmt) {
		a->lf = xcalloc(1, sizeof(*a->lf));
		if (lf_compile(w, a->lf, &err) == 0)
			return 0;
		act_alert(p, "invalid log-format string '%s': %s", w, err ? err : "syntax error");
	} else {
		a->expr = xcalloc(1, sizeof(*a->expr));
		if (smp_expr_parse(w, a->expr, NULL, &err) == 0)
			return 0;
		act_alert(p, "%s", err);
	}
	free(err);
	return -1;
}

/* Whether the conditions of <a> allow setting its variable of <s> to
 * <smp>. */
static int var_act_conds_hold(const struct var_act *a, struct stream *s, const struct sample *smp)
{
	struct sample cur = { 0 };
	int set, empty;

	if (!a->conds)
		return 1;
	set = var_get(&a->ref, s, &cur);
	/* a process-wide variable exists once the configuration names it */
	if ((a->conds & VAR_C_EXISTS) && !set && a->ref.scope != VAR_PROC)
		return 0;
	if ((a->conds & VAR_C_NOTEXISTS) && (set || a->ref.scope == VAR_PROC))
		return 0;
	if ((a->conds & VAR_C_SET) && !set)
		return 0;
	if ((a->conds & VAR_C_NOTSET) && set)
		return 0;
	/* scalar samples are never empty */
	empty = (smp->type == SMP_T_STR || smp->type == SMP_T_BIN) && !smp->u.str.len;
	if ((a->conds & VAR_C_EMPTY) && !empty)
		return 0;
	if ((a->conds & VAR_C_NOTEMPTY) && empty)
		return 0;
	/* ifgt/iflt compare integers only, and hold otherwise */
	if (set && cur.type == SMP_T_SINT && smp->type == SMP_T_SINT &&
	    (((a->conds & VAR_C_GT) && !(cur.u.sint > smp->u.sint)) ||
	     ((a->conds & VAR_C_LT) && !(cur.u.sint < smp->u.sint))))
		return 0;
	return 1;
}

static void var_act_exec_set(void *priv, struct stream *s, unsigned where)
{
	const struct var_act *a = priv;
	struct sample smp = { 0 };

	if (smp_expr_eval(a->expr, s, &smp) && var_act_conds_hold(a, s, &smp))
		var_set(&a->ref, s, &smp);
}

/* The rendered format is a string; one cut at VAR_MAX_LEN bytes is stored
 * cut, as any longer value is. */
static void var_act_exec_set_fmt(void *priv, struct stream *s, unsigned where)
{
	static char out[VAR_MAX_LEN + 1];
	const struct var_act *a = priv;
	struct sample smp = { 0 };
	long n = act_render(s, a->lf, out, sizeof(out));

	smp.type = SMP_T_STR;
	smp.u.str.p = out;
	smp.u.str.len = n < 0 ? strlen(out) : (size_t)n;
	if (var_act_conds_hold(a, s, &smp))
		var_set(&a->ref, s, &smp);
}

static void var_act_exec_unset(void *priv, struct stream *s, unsigned where)
{
	var_unset(&((const struct var_act *)priv)->ref, s);
}

static const struct act_kw var_acts[] = {
	{ "set-var", 0, ACT_W_TCP_ALL | ACT_W_HTTP_ALL, var_act_parse_set, var_act_exec_set,
	  var_act_free, "(<scope>.<name>[,<cond>...]) <expr>", NULL },
	{ "set-var-fmt", 0, ACT_W_TCP_ALL | ACT_W_HTTP_ALL, var_act_parse_set,
	  var_act_exec_set_fmt, var_act_free, "(<scope>.<name>[,<cond>...]) <log format>", NULL },
	{ "unset-var", 0, ACT_W_TCP_ALL | ACT_W_HTTP_ALL, var_act_parse_unset, var_act_exec_unset,
	  var_act_free, "(<scope>.<name>)", NULL },
};

/* ------------------------------------------------------------------------
 * Runtime API: get var and set var, on process-wide variables only (the
 * other scopes live and die with a stream).
 */

/* "set var" creates no new variable once the process-wide ones take this. */
#define VAR_CLI_PROC_MAX (1 << 20)

/* Parses <name> into <ref> for the CLI: a proc.<name>. Returns 0, or -1
 * after the message. */
static int var_cli_ref(struct cli_ctx *ctx, const char *cmd, const char *name,
                       struct var_ref *ref)
{
	char *err = NULL;

	if (!name || !*name) {
		dstr_printf(&ctx->out, "'%s var' expects a variable name (proc.<name>).\n", cmd);
		return -1;
	}
	if (var_ref_parse(name, strlen(name), ref, &err) == -1) {
		dstr_printf(&ctx->out, "%s.\n", err);
		free(err);
		return -1;
	}
	if (ref->scope != VAR_PROC) {
		dstr_printf(&ctx->out, "'%s var' only supports process-wide variables ('proc.' "
			    "prefix).\n", cmd);
		var_ref_release(ref);
		return -1;
	}
	return 0;
}

/* get var <name>: "<name>: type=<type> value=<<value>>" (binary values in
 * hexadecimal). */
static int cli_get_var(struct cli_ctx *ctx, int argc, char **argv)
{
	struct var_ref ref;
	struct sample smp = { 0 };

	if (argc > 3) {
		dstr_printf(&ctx->out, "'get var' expects one variable name.\n");
		return -1;
	}
	if (var_cli_ref(ctx, "get", argc > 2 ? argv[2] : NULL, &ref) == -1)
		return -1;
	if (!var_get(&ref, NULL, &smp)) {
		dstr_printf(&ctx->out, "Variable not found.\n");
		var_ref_release(&ref);
		return -1;
	}
	dstr_printf(&ctx->out, "%s: type=%s value=<", argv[2], smp_type_name(smp.type));
	if (smp.type == SMP_T_BIN) {
		for (size_t i = 0; i < smp.u.str.len; i++)
			dstr_printf(&ctx->out, "%02X", (unsigned char)smp.u.str.p[i]);
	} else if (smp.type == SMP_T_STR) {
		dstr_add(&ctx->out, smp.u.str.p, smp.u.str.len);
	} else {
		char txt[128];

		smp_to_text(&smp, txt, sizeof(txt));
		dstr_printf(&ctx->out, "%s", txt);
	}
	dstr_printf(&ctx->out, ">\n");
	var_ref_release(&ref);
	return 0;
}

/* The value of "set var" (<fmt> 0: sample expression <str>, 1: log
 * format <str>), evaluated without a stream. Returns 1 with <smp> set (and
 * <e> to free with smp_expr_free() when its fetch is set), or 0 with <err>
 * allocated. */
static int var_eval_const(int fmt, const char *str, struct smp_expr *e, struct sample *smp,
                          char **err)
{
	struct lf_expr lf = { 0 };
	struct lf_ctx c = { 0 };
	char *out, *e2 = NULL;

	if (!fmt) {
		if (smp_expr_parse(str, e, NULL, &e2) == -1) {
			*err = str_fmt("Failed to parse the expression: %s", e2);
			free(e2);
			return 0;
		}
		if (!(e->fetch->use & SMP_USE_CONST)) {
			*err = str_fmt("Fetch '%s' needs a connection: only fetches that work "
				       "without one (str, int, bool, ipv4, ipv6, env, hostname, date, "
				       "rand, var(proc.*), table_cnt, table_avl) may be used here.",
				       e->fetch->name);
			return 0;
		}
		if (!smp_expr_eval(e, NULL, smp)) {
			*err = str_fmt("The expression gave no value: nothing was set.");
			return 0;
		}
		return 1;
	}
	if (lf_compile(str, &lf, &e2) == -1) {
		*err = str_fmt("Failed to parse the format: %s", e2);
		free(e2);
		lf_free(&lf);
		return 0;
	}
	out = smp_scratch_get();
	c.li_id = -1;
	c.pid = (int)getpid();
	smp->type = SMP_T_STR;
	smp->u.str.len = lf_render(&lf, &c, out, SMP_SCRATCH_SIZE);
	smp->u.str.p = out;
	lf_free(&lf);
	return 1;
}

/* set var <name> <expr> | set var <name> expr <expr> | set var <name> fmt
 * <format>: needs the experimental mode of the session, as in HAProxy. */
static int cli_set_var(struct cli_ctx *ctx, int argc, char **argv)
{
	struct var_ref ref;
	struct smp_expr e = { 0 };
	struct sample smp = { 0 };
	const char *kind = "expr", *arg;
	char *err = NULL;
	int ok;

	if (!ctx->experimental) {
		dstr_printf(&ctx->out, "This command is restricted to experimental mode only "
			    "('experimental-mode on').\n");
		return -1;
	}
	if (argc == 5 && (strcmp(argv[3], "expr") == 0 || strcmp(argv[3], "fmt") == 0)) {
		kind = argv[3];
		arg = argv[4];
	} else if (argc == 4) {
		arg = argv[3];
	} else {
		dstr_printf(&ctx->out, "Usage: set var <name> <expr> | set var <name> expr <expr> | "
			    "set var <name> fmt <format> (escape spaces with a backslash).\n");
		return -1;
	}
	if (var_cli_ref(ctx, "set", argv[2], &ref) == -1)
		return -1;
	ok = var_eval_const(kind[0] == 'f', arg, &e, &smp, &err);
	if (!ok) {
		dstr_printf(&ctx->out, "%s\n", err);
		free(err);
	}
	/* names come from the operator here: bound what they may take */
	if (ok && !var_find(&var_proc, &ref, NULL) && var_proc.bytes > VAR_CLI_PROC_MAX) {
		dstr_printf(&ctx->out, "Process-wide variables already take %zu bytes: no new "
			    "one.\n", var_proc.bytes);
		ok = 0;
	}
	if (ok)
		var_set(&ref, NULL, &smp);
	if (e.fetch)
		smp_expr_free(&e);
	var_ref_release(&ref);
	return ok ? 0 : -1;
}

/* set-var <name> <expr> | set-var-fmt <name> <format> in the global section:
 * a process-wide variable (proc.*) set while the configuration is read, so
 * that rules (and the lines after it, through var(proc.*)) see it. The
 * row's .arg is 1 for the format form. */
static int kw_global_set_var(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct var_ref ref;
	struct smp_expr e = { 0 };
	struct sample smp = { 0 };
	char *err = NULL;
	int ok;

	if (argc != 2) {
		cfg_alert(ctx, "expects a variable name and %s", ctx->kw_row->arg ?
			  "a log format" : "a sample expression");
		return -1;
	}
	if (var_ref_parse(argv[0], strlen(argv[0]), &ref, &err) == -1 || ref.scope != VAR_PROC) {
		cfg_alert(ctx, "%s", err ? err : "only process-wide variables (proc.<name>) may "
			  "be set in the global section");
		free(err);
		if (!err)
			var_ref_release(&ref);
		return -1;
	}
	ok = var_eval_const((int)ctx->kw_row->arg, argv[1], &e, &smp, &err);
	if (ok)
		var_set(&ref, NULL, &smp);
	else
		cfg_alert(ctx, "%s", err);
	free(err);
	if (e.fetch)
		smp_expr_free(&e);
	var_ref_release(&ref);
	return ok ? 0 : -1;
}

static struct cfg_kw var_cfg_kws[] = {
	{ "set-var", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_global_set_var, .arg = 0,
	  .usage = "proc.<name> <expression>" },
	{ "set-var-fmt", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, .parse = kw_global_set_var, .arg = 1,
	  .usage = "proc.<name> <log format>" },
};

static struct cli_kw var_cli_kws[] = {
	{ { "get", "var", NULL }, "get var <name>", "show a process-wide variable (proc.*)",
	  CLI_LVL_OPERATOR, cli_get_var },
	{ { "set", "var", NULL }, "set var <name> [expr|fmt] <value>", "set a process-wide "
	  "variable from an expression or a log-format (experimental mode)", CLI_LVL_OPERATOR,
	  cli_set_var },
};

#define ANYUSE (SMP_USE_CONST | SMP_USE_L4 | SMP_USE_L7REQ | SMP_USE_L7RES)

static const struct smp_fetch_kw var_fetches[] = {
	{ "var", fetch_var, { ARGT_STR }, 1, SMP_T_ANY, ANYUSE, var_check_0, NULL },
};

static const struct smp_conv_kw var_convs[] = {
	{ "set-var", conv_set_var, { ARGT_STR }, 1, SMP_T_ANY, SMP_T_ANY, var_check_0, NULL },
	{ "concat",  conv_concat,  { ARGT_STR, ARGT_STR, ARGT_STR }, 0, SMP_T_STR, SMP_T_STR,
	  conv_check_concat, NULL },
	{ "unset-var", conv_unset_var, { ARGT_STR }, 1, SMP_T_ANY, SMP_T_ANY, var_check_0, NULL },
	{ "add_item", conv_add_item, { ARGT_STR, ARGT_STR, ARGT_STR }, 1, SMP_T_STR, SMP_T_STR,
	  conv_check_add_item, NULL },
	{ "strcmp",  conv_strcmp,  { ARGT_STR }, 1, SMP_T_STR, SMP_T_SINT, var_check_0, NULL },
	{ "secure_memcmp", conv_secure_memcmp, { ARGT_STR }, 1, SMP_T_BIN, SMP_T_BOOL,
	  var_check_0, NULL },
};

SLUICE_INIT(var_register)
{
	smp_register_fetches(var_fetches, ARRAY_SIZE(var_fetches));
	smp_register_convs(var_convs, ARRAY_SIZE(var_convs));
	act_register_ext(var_acts, ARRAY_SIZE(var_acts), sizeof(var_acts[0]), ACT_L_BASE);
	cli_register(var_cli_kws, ARRAY_SIZE(var_cli_kws));
	cfg_register(var_cfg_kws, ARRAY_SIZE(var_cfg_kws));
}
