/* Pattern references (maps and ACL pattern lists): the entries of a file
 * or of an ACL line, loaded once and shared by name, feeding the indexed
 * pattern sets (pattern.h) of every converter and ACL that uses them, so
 * that a runtime-API change applies to all its users at once. */
#ifndef SLUICE_MAP_H
#define SLUICE_MAP_H

#include <stdint.h>

#include <sluice/pattern.h>

#define PAT_REF_MAP 0x01  /* a map: shown by "show map" */
#define PAT_REF_ACL 0x02  /* ACL patterns: shown by "show acl" */

struct pat_ref_elt {
	struct pat_ref_elt *next, *prev;
	char               *key;
	char               *val;     /* maps: the rest of the line ("" if none) */
	enum pat_op         op;      /* inline ACL integer operator */
	char                buf[];   /* key and first value, one allocation */
};

struct pat_ref_set {
	struct pat_set *ps;
	int             owned;       /* built by pat_ref_get_set(), freed with the ref */
};

struct pat_ref {
	struct pat_ref     *next;
	char               *file;    /* NULL for the inline patterns of an ACL */
	char               *desc;    /* "show acl"/"show map" description */
	int                 id;      /* the #<id> of the runtime API */
	unsigned            flags;   /* PAT_REF_* */
	struct pat_ref_elt *head, *tail;
	unsigned            count;
	struct pat_ref_set *sets;    /* every index fed from this reference */
	int                 nsets;
	struct pat_journal *journal; /* runtime changes since start (map.c), NULL: none */
	/* versions ("prepare map"): the current one, the last allocated, and
	 * the entries of those in between that were given some (map_cli.c) */
	uint32_t            curr_ver, next_ver;
	struct pat_ver     *vers;
};

/* Bytes of runtime operations a reference's journal keeps (keys, values
 * and overhead) before it gives up and a reload carries the whole contents
 * instead (clear + add). */
#define PAT_JOURNAL_MAX (1 << 20)

/* Finds the reference of file <file> (with the same PAT_REF_MAP flag) or
 * loads it ("key value" lines when <flags> has PAT_REF_MAP, else whole
 * lines; '#' comments and blank lines skipped). Returns it, or NULL with
 * an allocated <err>. Start-up only (blocking reads). */
struct pat_ref *pat_ref_load(const char *file, unsigned flags, const char *desc, char **err);

/* A new empty reference with no file (inline ACL patterns). */
struct pat_ref *pat_ref_new(unsigned flags, const char *desc);

/* Adds an entry to <ref> only (no set yet: start-up). Returns it. */
struct pat_ref_elt *pat_ref_append(struct pat_ref *ref, const char *key, const char *val,
                                   enum pat_op op);

/* Attaches <ps> (not owned) to <ref> and adds every entry of <ref> to it.
 * Returns 0, or -1 with an allocated <err> (an entry <ps> refuses). */
int pat_ref_attach(struct pat_ref *ref, struct pat_set *ps, char **err);

/* Detaches <ps> from every reference (before freeing it). */
void pat_ref_detach(struct pat_set *ps);

/* The shared set of <ref> for method <m>, built on first use. Returns it,
 * or NULL with an allocated <err>. */
struct pat_set *pat_ref_get_set(struct pat_ref *ref, enum pat_match m, unsigned flags,
                                char **err);

/* Runtime changes, applied to every set. pat_ref_add() returns 0, or -1
 * with an allocated <err> (nothing changed). pat_ref_del_key() returns the
 * number of entries removed. pat_ref_set_key() sets the value of every
 * entry of key <key>, returns their number. */
int pat_ref_add(struct pat_ref *ref, const char *key, const char *val, char **err);
/* Whether every set of <ref> takes pattern <key>: 0, or -1 with <err>. */
int pat_ref_check(const struct pat_ref *ref, const char *key, char **err);
int pat_ref_del_key(struct pat_ref *ref, const char *key);
void pat_ref_del_elt(struct pat_ref *ref, struct pat_ref_elt *elt);
int pat_ref_set_key(struct pat_ref *ref, const char *key, const char *val);
void pat_ref_set_elt(struct pat_ref_elt *elt, const char *val);
void pat_ref_clear(struct pat_ref *ref);

/* Finds a reference by "#<id>" or file name among those with <flag>. */
struct pat_ref *pat_ref_find(const char *name, unsigned flag);

/* The first reference (creation order; ->next for the others). */
struct pat_ref *pat_ref_first(void);

/* The journal of runtime changes a reload carries: pat_journal_add()
 * records operation <kind> on <ref> (key and value as given, NULL when
 * none), dropping what it makes useless (a clear drops everything before
 * it); pat_journal_full() says the whole contents are to be carried (an
 * entry changed by its #<ref>, or too many operations). */
enum pat_jop_kind { JOP_ADD, JOP_DEL, JOP_SET, JOP_CLEAR };
void pat_journal_add(struct pat_ref *ref, enum pat_jop_kind kind, const char *key,
                     const char *val);
void pat_journal_full(struct pat_ref *ref);

/* Frees the versions of <ref> prepared and not committed (map_cli.c). */
void pat_ref_vers_free(struct pat_ref *ref);

/* Finds the entry "#<ref>" (the address "show map" prints) of <ref>. */
struct pat_ref_elt *pat_ref_find_elt(struct pat_ref *ref, const char *name);

/* Releases every reference and the sets they own (exit, tests). */
void pat_ref_free_all(void);

#endif
