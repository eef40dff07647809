/* Samples: typed values fetched from a stream ("src", "hdr(host)"...) and
 * transformed by converters (",lower,length"). Fetches and converters are
 * table rows registered by their owning module; an expression is parsed
 * once at start-up and evaluated per request without allocating. */
#ifndef SLUICE_SAMPLE_H
#define SLUICE_SAMPLE_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct stream;
struct proxy;
struct server;

enum smp_type {
	SMP_T_ANY,     /* declared only: converters accepting anything */
	SMP_T_BOOL,
	SMP_T_SINT,    /* int64_t */
	SMP_T_ADDR,    /* declared only: IPv4 or IPv6 */
	SMP_T_IPV4,
	SMP_T_IPV6,
	SMP_T_STR,
	SMP_T_BIN,
	SMP_TYPES
};

#define SMP_F_CONST    0x01  /* str/bin points to data the sample does not own */
#define SMP_F_NOT_LAST 0x02  /* more occurrences follow: fetch again */
#define SMP_F_MAY_CHANGE 0x04 /* (with or without a value) more data may change the
                                 result: content inspection waits instead of failing */

struct sample {
	enum smp_type type;
	unsigned      flags;    /* SMP_F_* */
	union {
		int64_t         sint;
		struct in_addr  ipv4;
		struct in6_addr ipv6;
		struct { const char *p; size_t len; } str;   /* STR and BIN */
	} u;
	int           ctx;      /* multi-occurrence fetches: next occurrence (1-based) */
	int           iterate;  /* set by the caller: return every occurrence in turn */
	struct stream *strm;    /* set by smp_expr_eval(): for converters reading variables */
};

/* Argument types of fetches and converters. */
enum smp_argt {
	ARGT_STOP,   /* end of the list */
	ARGT_SINT,   /* integer */
	ARGT_STR,    /* string (may be empty) */
	ARGT_BE,     /* backend name, resolved at post-parse */
	ARGT_FE,     /* frontend name, resolved at post-parse */
	ARGT_SRV,    /* "backend/server", resolved at post-parse */
	ARGT_USR,    /* userlist name, resolved at post-parse (struct userlist) */
};

#define SMP_MAX_ARGS 5

struct smp_arg {
	enum smp_argt type;
	int64_t       sint;
	char         *str;     /* ARGT_STR (and the name of BE/FE/SRV), allocated */
	size_t        len;
	void         *ptr;     /* ARGT_BE/FE: struct proxy, ARGT_SRV: struct server; or
	                          what a check function compiled from the argument */
	void        (*release)(void *ptr);   /* set with such a <ptr>: frees it */
};

/* Where a fetch can be used (bitmask). */
#define SMP_USE_L4    0x01  /* connection, any time */
#define SMP_USE_L7REQ 0x02  /* the request head under analysis (mode http) */
#define SMP_USE_L7RES 0x04  /* the response head under analysis */
#define SMP_USE_CONST 0x08  /* constant, no stream needed */

/* Fetch function: fills <smp> from <s> (may be NULL for SMP_USE_CONST).
 * <priv> is the row's own value (struct smp_fetch_kw .priv): one function
 * serves a family of rows (sc0_conn_cur, src_conn_cur...) and reads what
 * differs from it, never from the keyword's name. Returns 1 when a value
 * was produced, 0 when there is none. */
typedef int (*smp_fetch_fn)(const struct smp_arg *args, struct sample *smp, struct stream *s,
                            const void *priv);

/* Converter function: transforms <smp> in place (already cast to <in>);
 * <priv> is the row's .priv, as for fetches. Returns 1, or 0 when the
 * result does not exist (the sample is lost). */
typedef int (*smp_conv_fn)(const struct smp_arg *args, struct sample *smp, const void *priv);

/* Optional argument checker (run at parse time); <priv> is the row's .priv.
 * Returns 0, or -1 with an allocated <err>. */
typedef int (*smp_check_fn)(struct smp_arg *args, char **err, const void *priv);

struct smp_fetch_kw {
	const char    *name;
	smp_fetch_fn   fn;
	uint8_t        argt[SMP_MAX_ARGS + 1];  /* ARGT_*, ARGT_STOP-terminated */
	uint8_t        nmin;                    /* mandatory arguments */
	enum smp_type  out;
	unsigned       use;                     /* SMP_USE_* */
	smp_check_fn   check;
	const void    *priv;                    /* passed to .fn: what this row of a family
	                                           reads (slot, data type...); NULL if none */
};

struct smp_conv_kw {
	const char    *name;
	smp_conv_fn    fn;
	uint8_t        argt[SMP_MAX_ARGS + 1];
	uint8_t        nmin;
	enum smp_type  in, out;
	smp_check_fn   check;
	const void    *priv;                    /* passed to .fn, as for fetches */
};

/* Registers <n> rows; the tables must stay valid for the life of the
 * process (call from SLUICE_INIT). */
void smp_register_fetches(const struct smp_fetch_kw *kws, size_t n);
void smp_register_convs(const struct smp_conv_kw *kws, size_t n);

/* Call <fn> on every registered fetch / converter row. For listings and
 * the documentation test. */
void smp_fetch_foreach(void (*fn)(const struct smp_fetch_kw *kw, void *arg), void *arg);
void smp_conv_foreach(void (*fn)(const struct smp_conv_kw *kw, void *arg), void *arg);

/* Finds a fetch by its exact name (<len> bytes), NULL if unknown. */
const struct smp_fetch_kw *smp_fetch_find(const char *name, size_t len);

struct smp_conv {
	const struct smp_conv_kw *kw;
	struct smp_arg            args[SMP_MAX_ARGS];
};

struct smp_expr {
	const struct smp_fetch_kw *fetch;
	struct smp_arg             args[SMP_MAX_ARGS];
	struct smp_conv           *convs;
	int                        nconv;
};

/* Parses "fetch(arg,...),conv(arg),..." from <str> into <e>. <*end> (when
 * not NULL) gets the position where parsing stopped: the expression may
 * be followed by other text (log-format "]"); when <end> is NULL the whole
 * string must be used. Returns 0, or -1 with an allocated <err> naming the
 * unknown fetch or converter and suggesting the closest. */
int smp_expr_parse(const char *str, struct smp_expr *e, const char **end, char **err);

/* Releases what smp_expr_parse() allocated in <e> (not <e> itself). */
void smp_expr_free(struct smp_expr *e);

/* Whether <a> and <b> are the same expression: same fetch, converters and
 * arguments (as written). */
int smp_expr_equal(const struct smp_expr *a, const struct smp_expr *b);

/* Evaluates <e> for stream <s> into <smp>. For iterating fetches (hdr...),
 * set smp->iterate = 1 and smp->ctx = 0 before the first call and call again
 * while SMP_F_NOT_LAST is set. Strings may point into a per-evaluation
 * scratch area valid until the next evaluation. Returns 1 when <smp> holds
 * a value, 0 when there is none. */
int smp_expr_eval(const struct smp_expr *e, struct stream *s, struct sample *smp);

/* Converts <smp> to type <t> in place. Returns 1, or 0 when impossible. */
int smp_cast(struct sample *smp, enum smp_type t);

/* Whether type <from> can be converted to <to>. */
int smp_can_cast(enum smp_type from, enum smp_type to);

/* Name of a type, for messages ("str", "ipv4"...). */
const char *smp_type_name(enum smp_type t);

/* The output type of <e> (that of its last converter, else of the fetch). */
enum smp_type smp_expr_type(const struct smp_expr *e);

/* Writes <smp> as text into <out> (at most <size>-1 bytes, NUL-terminated).
 * Returns the length written. */
size_t smp_to_text(const struct sample *smp, char *out, size_t size);

/* A scratch buffer for converters and fetches that build a value; buffers
 * rotate so that the input of a converter stays valid while it writes its
 * output. Holds SMP_SCRATCH_SIZE bytes. */
#define SMP_SCRATCH_SIZE 16384

/* Appends <len> bytes of <p> at out[*o] of a scratch area (SMP_SCRATCH_SIZE
 * bytes). Returns 1, or 0 (nothing appended) when they do not fit. */
static inline int smp_scratch_put(char *out, size_t *o, const char *p, size_t len)
{
	if (len > SMP_SCRATCH_SIZE - *o)
		return 0;
	memcpy(out + *o, p, len);
	*o += len;
	return 1;
}
char *smp_scratch_get(void);

/* Arguments of fetch or converter <kw> (<argt>, <nmin> mandatory, its
 * checker <check> with <priv>) from <n> strings <vals> of <lens> bytes,
 * given at run time (Lua's txn.f:<fetch>(...)): integers read, strings
 * copied, backends, frontends, servers and userlists looked up now.
 * Returns 0 with <args> (SMP_MAX_ARGS of them) filled, to be given back
 * with smp_args_release(), or -1 with an allocated <err> (nothing held). */
int smp_args_make(const char *kw, const uint8_t *argt, int nmin, smp_check_fn check,
                  const void *priv, int n, const char *const *vals, const size_t *lens,
                  struct smp_arg *args, char **err);
void smp_args_release(struct smp_arg *args);

/* The proxy an optional ARGT_BE/ARGT_FE argument <a> names, else the
 * stream's backend (its frontend when <fe>); NULL when there is none. */
struct proxy *smp_arg_px(const struct smp_arg *a, struct stream *s, int fe);

/* The server an ARGT_SRV argument <a> names: "backend/server" (resolved
 * at post-parse), or a bare server name looked up in <s>'s backend; NULL
 * when there is no such server. */
struct server *smp_arg_srv(const struct smp_arg *a, struct stream *s);

/* Fetch helpers: make <smp> an integer <v>, or a constant string <str>
 * (not copied: it must outlive the evaluation). Return 1, or 0 for a NULL
 * <str> (no value). */
int smp_set_int(struct sample *smp, int64_t v);
int smp_set_str(struct sample *smp, const char *str);

/* Make <smp> a boolean <v>; or a string or binary (<t>) copy of <len> bytes
 * of <p> in a scratch area. Return 1, or 0 when it does not fit. */
int smp_set_bool(struct sample *smp, int v);
int smp_set_copy(struct sample *smp, enum smp_type t, const void *p, size_t len);

/* XXH64 of <len> bytes at <data> (the xxh64 converter's hash; the TLS
 * ClientHello capture uses it too). */
uint64_t smp_xxh64(const void *data, size_t len, uint64_t seed);

/* Decodes base64 <in> (<len> bytes; the URL-safe alphabet of RFC 4648
 * section 5 when <url>) into <out> (<size> bytes). <pad>: SMP_B64_PAD_YES
 * (length a multiple of 4, '=' padded), SMP_B64_PAD_NO ('=' refused) or
 * SMP_B64_PAD_OPT (either). Returns the decoded length, or -1 when <in>
 * is not valid base64 or does not fit. */
#define SMP_B64_PAD_NO  0
#define SMP_B64_PAD_YES 1
#define SMP_B64_PAD_OPT 2
long smp_b64_decode(const char *in, size_t len, char *out, size_t size, int url, int pad);

/* Parses "1.2.3.4", "::1" into <smp> (IPV4/IPV6). Returns 1 or 0. */
int smp_parse_ip(const char *s, size_t len, struct sample *smp);

#endif
