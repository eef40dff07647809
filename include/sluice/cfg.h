/* Configuration parser and keyword registry. Modules register table rows
 * (keywords, sections, post-parse hooks) from SLUICE_INIT constructors;
 * the parser dispatches each line to the row valid in the current section. */
#ifndef SLUICE_CFG_H
#define SLUICE_CFG_H

#include <stddef.h>
#include <stdint.h>

struct proxy;

/* Section identifiers, used as masks in keyword rows. */
#define CFG_SEC_GLOBAL   0x01
#define CFG_SEC_DEFAULTS 0x02
#define CFG_SEC_FRONTEND 0x04
#define CFG_SEC_BACKEND  0x08
#define CFG_SEC_LISTEN   0x10
#define CFG_SEC_HTTP_ERRORS 0x20  /* http-errors NAME (http_reply.c) */
#define CFG_SEC_USERLIST 0x40     /* userlist NAME (userlist.c) */
#define CFG_SEC_CACHE    0x80     /* cache NAME (http/cache.c) */
#define CFG_SEC_PEERS    0x100    /* peers NAME (proxy/peers_cfg.c) */
#define CFG_SEC_RESOLVERS 0x800   /* resolvers NAME: refused (server.c) */
#define CFG_SEC_PROGRAM  0x2000   /* program NAME (sys/mprog.c) */
#define CFG_SEC_FCGI_APP 0x4000   /* fcgi-app NAME (http/fcgi_app.c) */
#define CFG_SEC_REFUSED  0x1000   /* a section sluice does not run (cfg_section.refused) */
#define CFG_SEC_PROXIES  (CFG_SEC_DEFAULTS | CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN)
#define CFG_SEC_FE       (CFG_SEC_DEFAULTS | CFG_SEC_FRONTEND | CFG_SEC_LISTEN)
#define CFG_SEC_BE       (CFG_SEC_DEFAULTS | CFG_SEC_BACKEND | CFG_SEC_LISTEN)

/* Offset of a field of struct proxy, for rows that target the proxy. */
#define CFG_PX_OFF(field) offsetof(struct proxy, field)

enum cfg_kw_type {
	CFG_T_FUNC,   /* .parse does everything */
	CFG_T_TIME,   /* uint32_t milliseconds at .off */
	CFG_T_SIZE,   /* uint32_t bytes at .off, bounded by .min/.max */
	CFG_T_INT,    /* int at .off, bounded by .min/.max */
	CFG_T_FLAG,   /* uint64_t at .off: "kw" sets .mask, "no kw" clears it */
	CFG_T_STR,    /* char * at .off, replaced (freed) */
};

#define CFG_KW_F_NO     0x01  /* "no <kw>" is accepted */
#define CFG_KW_F_DEPREC 0x02  /* accepted with a deprecation warning */
#define CFG_KW_F_REFUSED 0x04 /* always refused (removed from HAProxy): never suggested */

struct cfg_ctx;

struct cfg_kw {
	const char      *name;     /* one or more words: "timeout connect" */
	unsigned         sections; /* CFG_SEC_* where it is valid */
	enum cfg_kw_type type;
	size_t           off;      /* into struct global (global section), struct proxy,
	                              or the struct <base> returns */
	/* CFG_T_FUNC: <target> is the base (global or proxy) plus .off; <argv>
	 * holds the words after the keyword. Returns 0, or -1 after cfg_alert(). */
	int            (*parse)(struct cfg_ctx *ctx, void *target, int argc, char **argv);
	unsigned         flags;    /* CFG_KW_F_* */
	long             min, max; /* bounds for INT/SIZE (max 0: no bound) */
	uint64_t         mask;     /* CFG_T_FLAG */
	const char      *usage;    /* what is expected, for error messages */
	const char      *hint;     /* CFG_KW_F_DEPREC: what to use instead */
	/* When set, .off is into the struct this returns instead of struct
	 * global or struct proxy: the global settings of a module, the
	 * per-proxy settings of the module owning the row (made from its
	 * defaults if missing), or the section of its own being read (a
	 * resolvers section), so that a plain row (CFG_T_FLAG...) needs no
	 * handler there either. */
	void          *(*base)(struct cfg_ctx *ctx);
	/* CFG_T_FUNC: the value this row stands for, read by a handler shared
	 * by several rows through ctx->kw_row (so that it never re-reads the
	 * keyword's name): a bool, an index, a slot... */
	intptr_t         arg;
};

struct cfg_ctx {
	const char    *file;
	int            line;
	unsigned       section;   /* CFG_SEC_* of the current section, 0 if none */
	const char    *secname;   /* "global", "frontend", ... */
	struct proxy  *px;        /* proxy (or defaults) being configured */
	const char    *kw;        /* keyword being parsed, for messages */
	const struct cfg_kw *kw_row; /* its row (NULL outside a keyword handler) */
	int            inverted;  /* the line started with "no" */
	int            stop;      /* stop reading this file (.alert) */
	int            sec_failed; /* the section header failed: its lines are skipped */
	int            errors;
	int            warnings;
	char           secid[128]; /* the section's name, else its keyword: ${.SECTION} */
};

/* A section keyword: <begin> is called with the words after the name.
 * A row with <refused> set names a section of HAProxy's language that
 * sluice does not run: its header is one error giving that reason, and its
 * body is skipped without a message per line (no begin, no id needed). */
struct cfg_section {
	const char *name;
	unsigned    id;           /* CFG_SEC_* */
	int       (*begin)(struct cfg_ctx *ctx, int argc, char **argv);
	int       (*end)(struct cfg_ctx *ctx);  /* may be NULL */
	const char *refused;      /* why sluice refuses this section, or NULL */
};

/* Reports a configuration error at the current line, naming the file, the
 * line, the keyword and the section; counts it in ctx->errors. */
void cfg_alert(struct cfg_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same for a warning (ctx->warnings). */
void cfg_warn(struct cfg_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Registers <n> keyword rows / sections / a post-parse hook. The tables must
 * stay valid for the life of the process. Post-parse hooks run in increasing
 * <prio> order and return the number of errors they reported. */
void cfg_register(struct cfg_kw *kws, size_t n);
void cfg_register_sections(struct cfg_section *secs, size_t n);
void cfg_register_postparse(int (*fn)(void), int prio);

/* Calls <fn> on every registered keyword row (every section's), in
 * registration order; the rows must not be changed. For listings and the
 * documentation test. */
void cfg_kw_foreach(void (*fn)(const struct cfg_kw *kw, void *arg), void *arg);

/* Calls <fn> on every registered section keyword ("global", "cache"...). */
void cfg_section_foreach(void (*fn)(const struct cfg_section *sec, void *arg), void *arg);

/* Loads a file, or every *.cfg of a directory in lexical order. Parses all of
 * it, reporting every error. Returns the number of errors (0: success); a
 * file that cannot be read counts as one error. */
int cfg_load_path(const char *path);

/* Parses <len> bytes of configuration text named <name> (fuzzing, tests).
 * Returns the number of errors. */
int cfg_parse_text(const char *name, const char *text, size_t len);

/* Runs the post-parse hooks (reference resolution, defaults). Returns the
 * number of errors. */
int cfg_postparse(void);

/* Total warnings emitted while loading. */
int cfg_warnings(void);

/* Finds the keyword row matching <argv> in <section>; sets *<nwords> to the
 * number of words of its name. For tests and for the suggestion code. */
const struct cfg_kw *cfg_find_kw(unsigned section, int argc, char **argv, int *nwords);

/* Suggests the closest keyword valid in <section> to <word> (NULL if none is
 * close enough). */
const char *cfg_suggest(unsigned section, const char *word);

/* Closest-keyword search shared by every keyword table (sections, bind and
 * server options): feed candidates with cfg_suggest_add(), then
 * cfg_suggest_pick() returns the best one if it is close enough to <word>. */
struct cfg_suggest {
	const char *word;
	const char *best;
	int         dist;
	char        first[64];   /* holds <best> when it is a first word */
};
void cfg_suggest_init(struct cfg_suggest *sg, const char *word);
void cfg_suggest_add(struct cfg_suggest *sg, const char *candidate);
const char *cfg_suggest_pick(const struct cfg_suggest *sg);

/* For option keywords taking one integer (bind, server): parses argv[1] in
 * [min, max]. Returns 0, or -1 with <err> allocated (the caller frees). */
int cfg_opt_int(int argc, char **argv, long min, long max, long *v, char **err);

/* The generic setter of option-table rows without a parse function: stores
 * argv[1] (in [min, max]) in the int at <base> + <off>. Returns the words
 * used (2), or -1 with <err> allocated. */
int cfg_opt_int_at(void *base, size_t off, long min, long max, int argc, char **argv,
                   char **err);

#endif
