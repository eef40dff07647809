/* Variables (set-var, unset-var, var()): named samples in one of the
 * scopes proc (process), sess (the client connection's stream), txn, req
 * and res (the HTTP transaction), freed when their scope ends. */
#ifndef SLUICE_VARS_H
#define SLUICE_VARS_H

#include <stddef.h>

#include <sluice/sample.h>

struct stream;

enum var_scope { VAR_PROC, VAR_SESS, VAR_TXN, VAR_REQ, VAR_RES, VAR_SCOPES };

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

/* Frees every variable of <st> (not <st> itself). */
void var_store_clear(struct var_store *st);

/* Frees <*st> and its variables and sets it to NULL (end of the scope). */
void var_store_free(struct var_store **st);

#endif
