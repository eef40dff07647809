/* Variables (set-var, unset-var, var()): named samples in one of the
 * scopes proc (process), sess (the client connection's stream), txn, req
 * and res (the HTTP transaction), check (a health check's run), freed when
 * their scope ends. */
#ifndef SLUICE_VARS_H
#define SLUICE_VARS_H

#include <stddef.h>

#include <sluice/sample.h>

struct stream;

enum var_scope { VAR_PROC, VAR_SESS, VAR_TXN, VAR_REQ, VAR_RES, VAR_CHECK, VAR_SCOPES };

/* The largest value stored; longer strings are cut (bounded memory). */
#define VAR_MAX_LEN 16384

struct var;

/* The variables of one scope holder (a stream, a transaction). */
struct var_store {
	struct var *head;
	size_t      bytes;
};

/* A parsed "<scope>.<name>". */
struct var_ref {
	enum var_scope scope;
	char          *name;
};

/* Parses "<scope>.<name>" into <ref>. Returns 0, or -1 with an allocated
 * <err>. */
int var_ref_parse(const char *s, size_t len, struct var_ref *ref, char **err);
void var_ref_release(struct var_ref *ref);

/* Parses the "(<scope>.<name>)" ending action word <w> ("set-var(txn.x)")
 * into <ref>. Returns 0, or -1 with an allocated <err> (saying what the
 * word should look like). */
int var_ref_parse_word(const char *w, struct var_ref *ref, char **err);

/* Whether the configuration names variable <ref> (an action, a fetch or a
 * converter argument): Lua's set_var(..., ifexist) sets only those. */
int var_ref_known(const struct var_ref *ref);

/* Stores a copy of <smp> in variable <ref> of stream <s>. Returns 1, or 0
 * when the scope does not exist (no transaction yet). */
int var_set(const struct var_ref *ref, struct stream *s, const struct sample *smp);

/* Removes variable <ref> of <s>. */
void var_unset(const struct var_ref *ref, struct stream *s);

/* Reads variable <ref> into <smp> (pointing to the stored value). Returns
 * 1, or 0 when it is not set. */
int var_get(const struct var_ref *ref, struct stream *s, struct sample *smp);

/* A converter argument that is either a constant or names a variable, as
 * HAProxy reads the keys of hmac, aes_gcm_dec and jwt_verify: the text is a
 * variable when it is "<scope>.<name>" with a known scope, else constant. */
struct var_or_const {
	int            is_var;   /* 1: <ref> is read at run time; 0: <data> */
	struct var_ref ref;
	char          *data;     /* the constant (NUL-terminated copy), or NULL */
	size_t         len;
};

/* Compiles argument text <s> (<len> bytes). Returns an allocated struct
 * (free with var_or_const_free(), a release function for smp_arg). */
struct var_or_const *var_or_const_new(const char *s, size_t len);
void var_or_const_free(void *vc);

/* The value of <vc> for stream <s>: the constant, or the variable's
 * value as text (cast to a string when it is not one). Returns 1 with
 * <*p>, <*len> set (valid until the next sample evaluation), or 0 when
 * the variable is not set. */
int var_or_const_get(const struct var_or_const *vc, struct stream *s, const char **p,
                     size_t *len);

/* Health checks evaluate their samples without a stream: while one does,
 * it lends its stores here, <check> for the "check" scope and <sess> for
 * "sess" (each created on first use); NULLs end the loan. Outside a loan
 * the check scope has no store (its variables are never set). */
void var_lend_check_stores(struct var_store **check, struct var_store **sess);

/* Frees every variable of <st> (not <st> itself). */
void var_store_clear(struct var_store *st);

/* Frees <*st> and its variables and sets it to NULL (end of the scope). */
void var_store_free(struct var_store **st);

#endif
