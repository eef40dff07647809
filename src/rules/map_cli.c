/* The runtime API of maps and ACL pattern files: show/get/add/del/set/clear
 * acl|map as HAProxy 2.6 answers them, with versions (prepare, add/clear/show
 * @<ver>, commit: an atomic replacement) and "add map ... <<" payloads. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/map.h>
#include <sluice/pattern.h>
#include <sluice/sample.h>
#include <sluice/str.h>

/* ------------------------------------------------------------------------
 * Runtime API: show/get/add/del/set/clear acl|map (HAProxy 2.6 answers)
 */

static int cli_is_map(char **argv)
{
	return strcmp(argv[1], "map") == 0;
}

static struct pat_ref *cli_ref(struct cli_ctx *ctx, int map, const char *name)
{
	struct pat_ref *ref = pat_ref_find(name, map ? PAT_REF_MAP : PAT_REF_ACL);

	if (!ref)
		dstr_printf(&ctx->out, "Unknown %s identifier. Please use #<id> or <file>.\n",
			    map ? "map" : "ACL");
	return ref;
}

/* ---- versions: "prepare", "@<ver>", "commit" ----
 *
 * The current version is what lookups see (the reference's own entries
 * and the sets fed from them). "prepare" allocates the next number; the
 * entries added to a version after the current one wait in a pat_ver,
 * checked against the reference's sets as they come, so that "commit"
 * cannot fail half-way: it clears the current entries and adds the
 * version's in one call of the loop (no lookup runs in between), then
 * drops every version up to the committed one. Numbers are 32-bit and wrap:
 * a version is pending when it is 1 to (next_ver - curr_ver) after the
 * current one. */

struct pat_ver {
	struct pat_ver *next;
	uint32_t        ver;
	struct pat_ref  entries;   /* a reference without sets: only its list */
};

void pat_ref_vers_free(struct pat_ref *ref)
{
	while (ref->vers) {
		struct pat_ver *v = ref->vers;

		ref->vers = v->next;
		pat_ref_clear(&v->entries);
		free(v);
	}
}

/* Whether version <ver> of <ref> is prepared and not committed. */
static int pat_ver_pending(const struct pat_ref *ref, uint32_t ver)
{
	uint32_t d = ver - ref->curr_ver;

	return d >= 1 && d <= ref->next_ver - ref->curr_ver;
}

/* The entries of pending version <ver> of <ref>, made when <make>, else
 * NULL when it has none yet. */
static struct pat_ver *pat_ver_get(struct pat_ref *ref, uint32_t ver, int make)
{
	struct pat_ver *v;

	for (v = ref->vers; v; v = v->next)
		if (v->ver == ver)
			return v;
	if (!make)
		return NULL;
	v = xcalloc(1, sizeof(*v));
	v->ver = ver;
	v->entries.flags = ref->flags;
	v->next = ref->vers;
	ref->vers = v;
	return v;
}

/* Reads the optional "@<ver>" at argv[2] (<*has> set when there is one,
 * <*ver> its number): returns the index of the word after it (3, or 2
 * without one), or -1 with the reason written. */
static int cli_ver_word(struct cli_ctx *ctx, int argc, char **argv, int *has, uint32_t *ver)
{
	char *end;
	unsigned long v;

	*has = 0;
	if (argc < 3 || argv[2][0] != '@')
		return 2;
	v = strtoul(argv[2] + 1, &end, 10);
	if (!argv[2][1] || *end || v > UINT32_MAX || argv[2][1] == '-') {
		dstr_printf(&ctx->out, "Invalid version number '%s': expects @ followed by a "
			    "number.\n", argv[2]);
		return -1;
	}
	*has = 1;
	*ver = (uint32_t)v;
	return 3;
}

/* For a command on version <ver> (<has> 0: the current one) of <ref>: 1
 * when it is the current one, 0 when it is pending, -1 (the reason
 * written) when it is neither. */
static int cli_ver_check(struct cli_ctx *ctx, const struct pat_ref *ref, int map, int has,
                         uint32_t ver)
{
	if (!has || ver == ref->curr_ver)
		return 1;
	if (pat_ver_pending(ref, ver))
		return 0;
	if (ver - ref->curr_ver < 0x80000000u)
		dstr_printf(&ctx->out, "Version number in the future, please use 'prepare %s' "
			    "before.\n", map ? "map" : "acl");
	else
		dstr_printf(&ctx->out, "Version number %u is past: %u is the current one.\n", ver,
			    ref->curr_ver);
	return -1;
}

/* "prepare acl|map" and "commit acl|map" refuse a file an ACL and a map
 * share unless given as a map, as HAProxy does. */
static int cli_ver_acl_ok(struct cli_ctx *ctx, const struct pat_ref *ref, int map, const char *verb)
{
	if (map || !(ref->flags & PAT_REF_MAP))
		return 0;
	dstr_printf(&ctx->out, "'%s acl' cannot be used on a file also used as a map: use "
		    "'%s map'.\n", verb, verb);
	return -1;
}

/* prepare acl|map <ref> */
static int cli_prepare(struct cli_ctx *ctx, int argc, char **argv)
{
	int map = cli_is_map(argv);
	struct pat_ref *ref;

	if (argc != 3) {
		dstr_printf(&ctx->out, "'prepare %s' expects one parameter: the %s identifier.\n",
			    argv[1], map ? "map" : "ACL");
		return -1;
	}
	if (!(ref = cli_ref(ctx, map, argv[2])) || cli_ver_acl_ok(ctx, ref, map, "prepare") == -1)
		return -1;
	if (ref->next_ver + 1 == ref->curr_ver) {
		dstr_printf(&ctx->out, "Too many versions pending: commit one first.\n");
		return -1;
	}
	ref->next_ver++;
	dstr_printf(&ctx->out, "New version created: %u\n", ref->next_ver);
	return 0;
}

/* commit acl|map @<ver> <ref>: version <ver> replaces the current one. */
static int cli_commit(struct cli_ctx *ctx, int argc, char **argv)
{
	int map = cli_is_map(argv), has;
	struct pat_ref *ref;
	struct pat_ver *v;
	uint32_t ver = 0;
	int i = cli_ver_word(ctx, argc, argv, &has, &ver);

	if (i < 0)
		return -1;
	if (!has) {
		dstr_printf(&ctx->out, "Missing version number.\n");
		return -1;
	}
	if (argc != 4) {
		dstr_printf(&ctx->out, "'commit %s' expects @<ver> and the %s identifier.\n",
			    argv[1], map ? "map" : "ACL");
		return -1;
	}
	if (!(ref = cli_ref(ctx, map, argv[3])) || cli_ver_acl_ok(ctx, ref, map, "commit") == -1)
		return -1;
	if (!pat_ver_pending(ref, ver)) {
		dstr_printf(&ctx->out, "Version %u cannot be committed: expects a version prepared "
			    "after the current one (%u) and up to the last prepared (%u).\n", ver,
			    ref->curr_ver, ref->next_ver);
		return -1;
	}
	v = pat_ver_get(ref, ver, 0);
	pat_ref_clear(ref);
	pat_journal_add(ref, JOP_CLEAR, NULL, NULL);
	for (struct pat_ref_elt *e = v ? v->entries.head : NULL; e; e = e->next) {
		char *err = NULL;

		/* every key was checked against these sets when it was added */
		if (pat_ref_add(ref, e->key, map ? e->val : NULL, &err) == -1)
			free(err);
		else
			pat_journal_add(ref, JOP_ADD, e->key, map ? e->val : NULL);
	}
	/* the versions up to the committed one are gone */
	for (struct pat_ver **pp = &ref->vers; (v = *pp); ) {
		if (v->ver - ref->curr_ver <= ver - ref->curr_ver) {
			*pp = v->next;
			pat_ref_clear(&v->entries);
			free(v);
			continue;
		}
		pp = &v->next;
	}
	ref->curr_ver = ver;
	return 0;
}

static void cli_show_entries(struct cli_ctx *ctx, const struct pat_ref *ref, int map)
{
	for (struct pat_ref_elt *e = ref ? ref->head : NULL; e; e = e->next) {
		if (map)
			dstr_printf(&ctx->out, "%p %s %s\n", (void *)e, e->key, e->val);
		else
			dstr_printf(&ctx->out, "%p %s\n", (void *)e, e->key);
	}
}

/* show acl|map [[@<ver>] <ref>] */
static int cli_show(struct cli_ctx *ctx, int argc, char **argv)
{
	int map = cli_is_map(argv), has, cur;
	struct pat_ref *ref;
	uint32_t ver = 0;
	int i = cli_ver_word(ctx, argc, argv, &has, &ver);

	if (i < 0)
		return -1;
	if (argc <= i) {
		if (has) {
			dstr_printf(&ctx->out, "Missing %s identifier after '%s'.\n",
				    map ? "map" : "ACL", argv[2]);
			return -1;
		}
		dstr_printf(&ctx->out, "# id (file) description\n");
		for (ref = pat_ref_first(); ref; ref = ref->next)
			if ((ref->flags & (map ? PAT_REF_MAP : PAT_REF_ACL)) &&
			    (!ref->file || ref->file[0]))
				dstr_printf(&ctx->out, "%d (%s) %s. curr_ver=%u next_ver=%u "
					    "entry_cnt=%u\n", ref->id, ref->file ? ref->file : "",
					    ref->desc, ref->curr_ver, ref->next_ver, ref->count);
		return 0;
	}
	ref = cli_ref(ctx, map, argv[i]);
	if (!ref || (cur = cli_ver_check(ctx, ref, map, has, ver)) < 0)
		return -1;
	if (cur) {
		cli_show_entries(ctx, ref, map);
	} else {
		const struct pat_ver *v = pat_ver_get(ref, ver, 0);

		cli_show_entries(ctx, v ? &v->entries : NULL, map);
	}
	return 0;
}

static int cli_get(struct cli_ctx *ctx, int argc, char **argv)
{
	int map = cli_is_map(argv);
	struct pat_ref *ref;

	if (argc < 4) {
		dstr_printf(&ctx->out, "Missing %s identifier and/or key.\n", map ? "map" : "ACL");
		return -1;
	}
	ref = cli_ref(ctx, map, argv[2]);
	if (!ref)
		return -1;
	for (int i = 0; i < ref->nsets; i++) {
		const struct pat_set *ps = ref->sets[i].ps;
		const struct pat_ref_elt *e = NULL;
		struct sample smp = { .type = SMP_T_STR, .flags = SMP_F_CONST };
		int tree = ps->match == PAT_M_STR || ps->match == PAT_M_BEG || ps->match == PAT_M_IP;
		int found;

		smp.u.str.p = argv[3];
		smp.u.str.len = strlen(argv[3]);
		found = pat_set_lookup(ps, &smp, (const void **)&e);
		dstr_printf(&ctx->out, "type=%s, case=%s, %s=%s", pat_match_name(ps->match),
			    (ps->flags & PAT_F_ICASE) ? "insensitive" : "sensitive",
			    map ? "found" : "match", found ? "yes" : "no");
		if (found && e) {
			dstr_printf(&ctx->out, ", idx=%s, %s=\"%s\"", tree ? "tree" : "list",
				    map ? "key" : "pattern", e->key);
			if (map)
				dstr_printf(&ctx->out, ", value=\"%s\", type=\"str\"", e->val);
		}
		dstr_printf(&ctx->out, "\n");
	}
	return 0;
}

/* The entries of a payload: one per line, "<key> <value>" for a map (the
 * value is the rest of the line, spaces included), the whole line for an
 * ACL. Each is checked against <ref>'s sets first: returns the number of
 * entries (added to <list>, a reference without sets), or -1 with the
 * reason written and nothing added to <ref>. */
static int cli_payload_entries(struct cli_ctx *ctx, const struct pat_ref *ref, int map,
                               struct pat_ref *list)
{
	const char *p = ctx->payload, *end = p + ctx->payload_len;
	int n = 0, line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *l = str_fmt("%.*s", (int)len, p), *k = l, *v = NULL, *err = NULL;

		p += len + 1;
		line++;
		while (*k == ' ' || *k == '\t')
			k++;
		if (!*k) {
			free(l);
			continue;
		}
		if (map) {
			v = k + strcspn(k, " \t");
			if (*v)
				*v++ = '\0';
			while (*v == ' ' || *v == '\t')
				v++;
			if (!*v) {
				dstr_printf(&ctx->out, "payload line %d: expects a key and a value: "
					    "nothing was added.\n", line);
				free(l);
				return -1;
			}
		}
		if (pat_ref_check(ref, k, &err) == -1) {
			dstr_printf(&ctx->out, "payload line %d: %s: nothing was added.\n", line, err);
			free(err);
			free(l);
			return -1;
		}
		pat_ref_append(list, k, v, PAT_OP_NONE);
		n++;
		free(l);
	}
	return n;
}

/* add acl|map [@<ver>] <ref> <key> [<value>], or <ref> then a payload */
static int cli_add(struct cli_ctx *ctx, int argc, char **argv)
{
	int map = cli_is_map(argv), has, cur;
	struct pat_ref *ref, *dst;
	uint32_t ver = 0;
	int i = cli_ver_word(ctx, argc, argv, &has, &ver);
	char *err = NULL;

	if (i < 0)
		return -1;
	if (map && ctx->payload && argc == i + 1) {
		struct pat_ref list = { .flags = PAT_REF_MAP };

		if (!(ref = cli_ref(ctx, map, argv[i])) ||
		    (cur = cli_ver_check(ctx, ref, map, has, ver)) < 0)
			return -1;
		if (cli_payload_entries(ctx, ref, map, &list) < 0) {
			pat_ref_clear(&list);
			return -1;
		}
		dst = cur ? ref : &pat_ver_get(ref, ver, 1)->entries;
		for (struct pat_ref_elt *e = list.head; e; e = e->next) {
			if (!cur) {
				pat_ref_append(dst, e->key, e->val, PAT_OP_NONE);
			} else if (pat_ref_add(ref, e->key, e->val, &err) == 0) {
				pat_journal_add(ref, JOP_ADD, e->key, e->val);
			} else {
				free(err);   /* checked above: not reached */
				err = NULL;
			}
		}
		pat_ref_clear(&list);
		return 0;
	}
	if (argc != i + (map ? 3 : 2)) {
		if (map)
			dstr_printf(&ctx->out, "'add map' expects three parameters (map identifier, "
				    "key and value), or the map identifier and a payload (<<)\n");
		else
			dstr_printf(&ctx->out, "'add acl' expects two parameters: ACL identifier "
				    "and pattern.\n");
		return -1;
	}
	ref = cli_ref(ctx, map, argv[i]);
	if (!ref || (cur = cli_ver_check(ctx, ref, map, has, ver)) < 0)
		return -1;
	if (!cur) {
		if (pat_ref_check(ref, argv[i + 1], &err) == -1) {
			dstr_printf(&ctx->out, "%s.\n", err);
			free(err);
			return -1;
		}
		pat_ref_append(&pat_ver_get(ref, ver, 1)->entries, argv[i + 1],
			       map ? argv[i + 2] : NULL, PAT_OP_NONE);
		return 0;
	}
	if (pat_ref_add(ref, argv[i + 1], map ? argv[i + 2] : NULL, &err) == -1) {
		dstr_printf(&ctx->out, "%s.\n", err);
		free(err);
		return -1;
	}
	pat_journal_add(ref, JOP_ADD, argv[i + 1], map ? argv[i + 2] : NULL);
	return 0;
}

static int cli_del(struct cli_ctx *ctx, int argc, char **argv)
{
	int map = cli_is_map(argv);
	struct pat_ref *ref;

	if (argc != 4) {
		dstr_printf(&ctx->out, "This command expects two parameters: %s identifier and "
			    "key.\n", map ? "map" : "ACL");
		return -1;
	}
	ref = cli_ref(ctx, map, argv[2]);
	if (!ref)
		return -1;
	if (argv[3][0] == '#') {
		struct pat_ref_elt *e = pat_ref_find_elt(ref, argv[3]);

		if (!e) {
			dstr_printf(&ctx->out, "Key not found.\n");
			return -1;
		}
		pat_ref_del_elt(ref, e);
		pat_journal_full(ref);
		return 0;
	}
	if (!pat_ref_del_key(ref, argv[3])) {
		dstr_printf(&ctx->out, "Key not found.\n");
		return -1;
	}
	pat_journal_add(ref, JOP_DEL, argv[3], NULL);
	return 0;
}

static int cli_set(struct cli_ctx *ctx, int argc, char **argv)
{
	struct pat_ref *ref;

	if (argc != 5) {
		dstr_printf(&ctx->out, "'set map' expects three parameters: map identifier, key "
			    "and value.\n");
		return -1;
	}
	ref = cli_ref(ctx, 1, argv[2]);
	if (!ref)
		return -1;
	if (argv[3][0] == '#') {
		struct pat_ref_elt *e = pat_ref_find_elt(ref, argv[3]);

		if (!e) {
			dstr_printf(&ctx->out, "entry not found.\n");
			return -1;
		}
		pat_ref_set_elt(e, argv[4]);
		pat_journal_full(ref);
		return 0;
	}
	if (!pat_ref_set_key(ref, argv[3], argv[4])) {
		dstr_printf(&ctx->out, "entry not found.\n");
		return -1;
	}
	pat_journal_add(ref, JOP_SET, argv[3], argv[4]);
	return 0;
}

/* clear acl|map [@<ver>] <ref> */
static int cli_clear(struct cli_ctx *ctx, int argc, char **argv)
{
	int map = cli_is_map(argv), has, cur;
	struct pat_ref *ref;
	uint32_t ver = 0;
	int i = cli_ver_word(ctx, argc, argv, &has, &ver);

	if (i < 0)
		return -1;
	if (argc != i + 1) {
		dstr_printf(&ctx->out, "Missing %s identifier.\n", map ? "map" : "ACL");
		return -1;
	}
	ref = cli_ref(ctx, map, argv[i]);
	if (!ref || (cur = cli_ver_check(ctx, ref, map, has, ver)) < 0)
		return -1;
	if (!cur) {
		struct pat_ver *v = pat_ver_get(ref, ver, 0);

		if (v)
			pat_ref_clear(&v->entries);
		return 0;
	}
	pat_ref_clear(ref);
	pat_journal_add(ref, JOP_CLEAR, NULL, NULL);
	return 0;
}

/* As in HAProxy 2.6: reading needs no level, changes need "operator". */
static struct cli_kw map_cli_kws[] = {
	{ { "show", "acl", NULL }, "show acl [[@<ver>] <acl>]", "report available acls or dump an acl's "
	  "contents", CLI_LVL_USER, cli_show },
	{ { "show", "map", NULL }, "show map [[@<ver>] <map>]", "report available maps or dump a map's "
	  "contents", CLI_LVL_USER, cli_show },
	{ { "get", "acl", NULL }, "get acl <acl> <value>", "report the patterns matching a "
	  "sample for an ACL", CLI_LVL_USER, cli_get },
	{ { "get", "map", NULL }, "get map <map> <value>", "report the keys and values "
	  "matching a sample for a map", CLI_LVL_USER, cli_get },
	{ { "add", "acl", NULL }, "add acl [@<ver>] <acl> <pattern>", "add an acl entry",
	  CLI_LVL_OPERATOR, cli_add },
	{ { "add", "map", NULL }, "add map [@<ver>] <map> <key> <val> | <map> <<",
	  "add a map entry, or one per payload line",
	  CLI_LVL_OPERATOR, cli_add },
	{ { "del", "acl", NULL }, "del acl <acl> [<key>|#<ref>]", "delete acl entries "
	  "matching <key>", CLI_LVL_OPERATOR, cli_del },
	{ { "del", "map", NULL }, "del map <map> [<key>|#<ref>]", "delete map entries "
	  "matching <key>", CLI_LVL_OPERATOR, cli_del },
	{ { "set", "map", NULL }, "set map <map> [<key>|#<ref>] <value>", "modify a map entry",
	  CLI_LVL_OPERATOR, cli_set },
	{ { "clear", "acl", NULL }, "clear acl [@<ver>] <acl>", "clear the contents of this acl",
	  CLI_LVL_OPERATOR, cli_clear },
	{ { "clear", "map", NULL }, "clear map [@<ver>] <map>", "clear the contents of this map",
	  CLI_LVL_OPERATOR, cli_clear },
	{ { "prepare", "acl", NULL }, "prepare acl <acl>", "allocate a new version of an acl "
	  "for an atomic replacement", CLI_LVL_OPERATOR, cli_prepare },
	{ { "prepare", "map", NULL }, "prepare map <map>", "allocate a new version of a map "
	  "for an atomic replacement", CLI_LVL_OPERATOR, cli_prepare },
	{ { "commit", "acl", NULL }, "commit acl @<ver> <acl>", "make version <ver> of an acl "
	  "the one matched, at once", CLI_LVL_OPERATOR, cli_commit },
	{ { "commit", "map", NULL }, "commit map @<ver> <map>", "make version <ver> of a map "
	  "the one looked up, at once", CLI_LVL_OPERATOR, cli_commit },
};

SLUICE_INIT(map_cli_register)
{
	cli_register(map_cli_kws, ARRAY_SIZE(map_cli_kws));
}
