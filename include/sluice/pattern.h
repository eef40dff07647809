/* Pattern sets: the values an ACL compares a sample with, indexed by
 * matching method: exact strings in a hash table, IPv4/IPv6 networks in a
 * binary trie, regexes compiled once by PCRE2 (JIT), integer ranges. */
#ifndef SLUICE_PATTERN_H
#define SLUICE_PATTERN_H

#include <stddef.h>
#include <stdint.h>

struct sample;

/* Matching methods (-m name). */
enum pat_match {
	PAT_M_FOUND,  /* the sample exists */
	PAT_M_BOOL,   /* the sample, as a boolean, is true */
	PAT_M_INT,    /* integer ranges and operators */
	PAT_M_IP,     /* addresses and networks */
	PAT_M_LEN,    /* string length in ranges */
	PAT_M_STR,    /* exact string */
	PAT_M_BEG,    /* prefix */
	PAT_M_END,    /* suffix */
	PAT_M_SUB,    /* substring */
	PAT_M_REG,    /* regular expression */
	PAT_M_DIR,    /* '/'-delimited part */
	PAT_M_DOM,    /* '.'-delimited part */
	PAT_M_BIN,    /* exact binary contents, patterns written in hex */
	PAT_M_COUNT
};

#define PAT_F_ICASE 0x01  /* -i: case-insensitive strings and regexes */

/* Integer operators written before a value ("gt 5"). */
enum pat_op { PAT_OP_NONE, PAT_OP_EQ, PAT_OP_GE, PAT_OP_GT, PAT_OP_LE, PAT_OP_LT };

struct pat_hnode;
struct pat_ipt;

struct pat_range {
	int64_t min, max;
};

/* One pattern of the methods matched in order (int, len, end, sub, dir,
 * dom, reg): the first that matches wins, as in HAProxy's lists. */
struct pat_lst {
	char             *s;       /* END/SUB/DIR/DOM */
	size_t            len;
	struct pat_range  r;       /* INT/LEN */
	void             *re;      /* REG: pcre2_code * */
	const void       *data;    /* what pat_set_add_data() attached */
};

struct pat_set {
	enum pat_match     match;
	unsigned           flags;    /* PAT_F_* */
	int                count;    /* patterns held */
	struct pat_hnode **htab;     /* STR, BEG: hash of the strings */
	unsigned           hsize, hcount;
	unsigned          *lens;     /* BEG: number of patterns of each length */
	size_t             nlens;
	struct pat_lst    *lst;      /* INT/LEN/END/SUB/DIR/DOM/REG, in order */
	int                nlst, lcap;
	struct pat_ipt    *v4, *v6;  /* IP: (prefix length, network) hashes */
};

/* The method named <name> ("str", "beg"...). Returns 0, or -1 if unknown. */
int pat_match_find(const char *name, enum pat_match *m);

/* Name of <m>, for messages. */
const char *pat_match_name(enum pat_match m);

/* Whether <word> is an integer operator ("eq", "gt"...); sets <op>. */
int pat_op_find(const char *word, enum pat_op *op);

/* Prepares an empty set. */
void pat_set_init(struct pat_set *ps, enum pat_match m, unsigned flags);

/* Adds one pattern (<op> for INT/LEN, else PAT_OP_NONE). Returns 0, or -1
 * with an allocated <err>. */
int pat_set_add(struct pat_set *ps, const char *val, enum pat_op op, char **err);

/* Adds one pattern carrying <data> (a map entry, an ACL pattern reference),
 * which pat_set_lookup() returns and pat_set_del() identifies it by. Two
 * patterns with the same value and data are kept apart only when <data>
 * is not NULL; the first one added is the one found. Returns 0, or -1 with
 * an allocated <err>. */
int pat_set_add_data(struct pat_set *ps, const char *val, enum pat_op op, const void *data,
                     char **err);

/* Whether <val> is a valid pattern for method <m> (IP, integer, regex
 * syntax). Returns 0, or -1 with an allocated <err>. */
int pat_set_check(enum pat_match m, const char *val, char **err);

/* Removes the patterns of value <val> added with <data>. */
void pat_set_del(struct pat_set *ps, const char *val, const void *data);

/* Adds every line of file <path> (blank lines and lines starting with '#'
 * skipped, leading blanks stripped); with <map>, only the first word of
 * each line (the key of a map file). Returns 0, or -1 with an allocated
 * <err> naming the file and line. Start-up only (blocking reads). */
int pat_set_load_file(struct pat_set *ps, const char *path, int map, char **err);

/* Whether <smp> matches one pattern of <ps>; <smp> may be cast. Returns 1
 * or 0. Does not allocate. */
int pat_set_exec(const struct pat_set *ps, struct sample *smp);

/* Like pat_set_exec(), also giving the data of the pattern found: the
 * longest for beg and ip, the exact one for str, else the first added
 * that matches. Returns 1 (and sets <*data> when <data> is not NULL) or 0. */
int pat_set_lookup(const struct pat_set *ps, struct sample *smp, const void **data);

/* Writes <val> into <out> (<size> bytes, NUL-terminated) with each "\\N"
 * (N: 0 to 9) replaced by group N of the regex that matched <subj> in the
 * last pat_set_lookup() of a "reg" set (map_regm); a group that took no
 * part in the match gives nothing. Call it right after that lookup.
 * Returns the length written. */
size_t pat_regm_render(const char *subj, const char *val, char *out, size_t size);

/* Releases the patterns (not <ps> itself). */
void pat_set_free(struct pat_set *ps);

#endif
