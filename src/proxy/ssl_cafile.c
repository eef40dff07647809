/* CA and CRL files: loaded once into a shared store, installed as the
 * verification store of the contexts naming them, and replaced at run time
 * ("new/set/commit/abort/del/show ssl ca-file" and "... crl-file"): a commit
 * rebuilds the store of every context using the file, for the next
 * handshakes (ssl_int.h). */
#ifdef USE_OPENSSL
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "ssl_int.h"

/* A CA file (certificates) or a CRL file (revocation lists). */
struct cafile {
	struct cafile         *next;
	char                  *path;
	int                    crl;       /* a CRL file */
	STACK_OF(X509)        *certs;
	STACK_OF(X509_CRL)    *crls;
	int                    from_conf; /* named by the configuration */
};

/* A context whose verification store comes from these files. */
struct cafile_user {
	SSL_CTX       *ctx;
	struct cafile *ca, *cav, *crl;
	int            names;             /* sends the CA file's names to clients */
};

static struct {
	struct cafile      *files;
	struct cafile_user *users;
	int                 nusers;
	int                 ctx_idx;      /* SSL_CTX ex_data: set on users, forgets them when freed */
	/* the open transactions, one per kind: [0] CA files, [1] CRL files */
	struct cafile      *tx_of[2];
	struct cafile       tx[2];
} caf = { .ctx_idx = -1 };

static const char *const cafile_kind[2] = { "CA file", "CRL file" };

static void cafile_clear(struct cafile *f)
{
	sk_X509_pop_free(f->certs, X509_free);
	sk_X509_CRL_pop_free(f->crls, X509_CRL_free);
	f->certs = NULL;
	f->crls = NULL;
}

static struct cafile *cafile_find(const char *path, int crl)
{
	for (struct cafile *f = caf.files; f; f = f->next)
		if (f->crl == crl && strcmp(f->path, path) == 0)
			return f;
	return NULL;
}

/* Adds the certificates and CRLs of PEM text <b> to <f>. Returns how many. */
static int cafile_read_bio(struct cafile *f, BIO *b)
{
	STACK_OF(X509_INFO) *infos = PEM_X509_INFO_read_bio(b, NULL, NULL, NULL);
	int n = 0;

	for (int i = 0; infos && i < sk_X509_INFO_num(infos); i++) {
		X509_INFO *xi = sk_X509_INFO_value(infos, i);

		if (xi->x509 && !f->crl) {
			X509_up_ref(xi->x509);
			sk_X509_push(f->certs, xi->x509);
			n++;
		}
		if (xi->crl) {
			X509_CRL_up_ref(xi->crl);
			sk_X509_CRL_push(f->crls, xi->crl);
			n += f->crl;
		}
	}
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	ERR_clear_error();
	return n;
}

static int cafile_read_path(struct cafile *f, const char *path)
{
	BIO *b = BIO_new_file(path, "r");
	int n;

	if (!b) {
		ERR_clear_error();
		return -1;
	}
	n = cafile_read_bio(f, b);
	BIO_free(b);
	return n;
}

/* Loads <path> into a new entry: a PEM file, a directory (its .pem, .crt,
 * .cer and .crl files), or "@system-ca" (the system's trusted CAs). */
static struct cafile *cafile_load(const char *path, int crl, char **err)
{
	struct cafile *f = xcalloc(1, sizeof(*f));
	struct stat st;
	int n = 0;

	f->path = xstrdup(path);
	f->crl = crl;
	f->certs = sk_X509_new_null();
	f->crls = sk_X509_CRL_new_null();
	if (!crl && strcmp(path, "@system-ca") == 0) {
		n = cafile_read_path(f, X509_get_default_cert_file());
	} else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct dirent **names;
		int k = scandir(path, &names, NULL, alphasort);

		for (int i = 0; i < k; i++) {
			const char *d = names[i]->d_name, *dot = strrchr(d, '.');

			if (d[0] != '.' && dot && (!strcmp(dot, ".pem") || !strcmp(dot, ".crt") ||
						   !strcmp(dot, ".cer") || !strcmp(dot, ".crl"))) {
				char *file = str_fmt("%s/%s", path, d);
				int r = cafile_read_path(f, file);

				n += r > 0 ? r : 0;
				free(file);
			}
			free(names[i]);
		}
		free(names);
	} else {
		n = cafile_read_path(f, path);
		if (n < 0) {
			*err = str_fmt("cannot load %s '%s': %s", crl ? "CRL file" : "CA file", path,
				       strerror(errno ? errno : ENOENT));
			goto fail;
		}
	}
	if (n <= 0) {
		*err = crl ? str_fmt("no CRL found in '%s'", path) :
			     str_fmt("cannot load CA file '%s': no certificate found", path);
		goto fail;
	}
	f->from_conf = 1;
	f->next = caf.files;
	caf.files = f;
	return f;
fail:
	cafile_clear(f);
	free(f->path);
	free(f);
	return NULL;
}

static struct cafile *cafile_get(const char *path, int crl, char **err)
{
	struct cafile *f = cafile_find(path, crl);

	return f ? f : cafile_load(path, crl, err);
}

/* Builds <u>'s verification store and CA names from its files, installs
 * them on its context. Returns 0, or -1 (nothing changed). */
static int cafile_install(const struct cafile_user *u)
{
	X509_STORE *st = X509_STORE_new();
	STACK_OF(X509_NAME) *names = NULL;
	const struct cafile *files[3] = { u->ca, u->cav, u->crl };

	if (!st)
		return -1;
	for (int k = 0; k < 3; k++) {
		const struct cafile *f = files[k];

		for (int i = 0; f && i < sk_X509_num(f->certs); i++)
			X509_STORE_add_cert(st, sk_X509_value(f->certs, i));
		for (int i = 0; f && i < sk_X509_CRL_num(f->crls); i++)
			X509_STORE_add_crl(st, sk_X509_CRL_value(f->crls, i));
	}
	ERR_clear_error();
	if (u->crl)
		X509_STORE_set_flags(st, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
	if (u->names && u->ca) {
		names = sk_X509_NAME_new_null();
		for (int i = 0; names && i < sk_X509_num(u->ca->certs); i++) {
			X509_NAME *nm = X509_NAME_dup(X509_get_subject_name(sk_X509_value(u->ca->certs, i)));

			if (nm)
				sk_X509_NAME_push(names, nm);
		}
	}
	SSL_CTX_set_cert_store(u->ctx, st);
	SSL_CTX_set_client_CA_list(u->ctx, names);
	return 0;
}

static void cafile_ctx_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                            void *argp)
{
	if (ptr)
		cafile_ctx_forget(parent);
}

int cafile_ctx_setup(SSL_CTX *ctx, const char *ca, const char *ca_verify, const char *crl,
                     int names, char **err)
{
	struct cafile_user u = { .ctx = ctx, .names = names };

	if (!ca && !ca_verify && !crl)
		return 0;
	if ((ca && !(u.ca = cafile_get(ca, 0, err))) ||
	    (ca_verify && !(u.cav = cafile_get(ca_verify, 0, err))) ||
	    (crl && !(u.crl = cafile_get(crl, 1, err))))
		return -1;
	if (cafile_install(&u) == -1) {
		*err = str_fmt("cannot build the verification store");
		return -1;
	}
	if (caf.ctx_idx < 0)
		caf.ctx_idx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, cafile_ctx_free);
	SSL_CTX_set_ex_data(ctx, caf.ctx_idx, &caf);
	caf.users = xrealloc(caf.users, sizeof(*caf.users) * (size_t)(caf.nusers + 1));
	caf.users[caf.nusers++] = u;
	return 0;
}

void cafile_ctx_forget(SSL_CTX *ctx)
{
	for (int i = 0; i < caf.nusers; i++)
		if (caf.users[i].ctx == ctx) {
			caf.users[i] = caf.users[--caf.nusers];
			return;
		}
}

static int cafile_used(const struct cafile *f)
{
	for (int i = 0; i < caf.nusers; i++)
		if (caf.users[i].ca == f || caf.users[i].cav == f || caf.users[i].crl == f)
			return 1;
	return 0;
}

/* ---- runtime API: one thin function per row, each passing its kind (CA
 * or CRL file) to the command's body ---- */

static int cafile_count(const struct cafile *f)
{
	return f->crl ? sk_X509_CRL_num(f->crls) : sk_X509_num(f->certs);
}

/* new ssl ca-file|crl-file <file> */
static int cafile_cli_new(struct cli_ctx *ctx, int argc, char **argv, int crl)
{
	struct cafile *f;

	if (argc < 4 || !*argv[3]) {
		dstr_printf(&ctx->out, "'new ssl %s' expects a filename\n", argv[2]);
		return -1;
	}
	if (cafile_find(argv[3], crl)) {
		dstr_printf(&ctx->out, "%s '%s' already exists!\n", cafile_kind[crl], argv[3]);
		return -1;
	}
	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(argv[3]);
	f->crl = crl;
	f->certs = sk_X509_new_null();
	f->crls = sk_X509_CRL_new_null();
	f->next = caf.files;
	caf.files = f;
	dstr_printf(&ctx->out, "New %s created '%s'!\n", cafile_kind[crl], argv[3]);
	return 0;
}

/* set ssl ca-file|crl-file <file> <payload> */
static int cafile_cli_set(struct cli_ctx *ctx, int argc, char **argv, int crl)
{
	struct cafile *f = argc > 3 ? cafile_find(argv[3], crl) : NULL, next = { .crl = crl };
	BIO *b;
	int n;

	if (argc < 4 || !ctx->payload) {
		dstr_printf(&ctx->out, "'set ssl %s' expects a filename and a payload\n", argv[2]);
		return -1;
	}
	if (!f) {
		dstr_printf(&ctx->out, "Can't replace a %s which is not referenced by the "
			    "configuration!\n", cafile_kind[crl]);
		return -1;
	}
	if (caf.tx_of[crl] && caf.tx_of[crl] != f) {
		dstr_printf(&ctx->out, "The ongoing transaction is about '%s' but you are trying to "
			    "set '%s'\n", caf.tx_of[crl]->path, argv[3]);
		return -1;
	}
	next.certs = sk_X509_new_null();
	next.crls = sk_X509_CRL_new_null();
	b = BIO_new_mem_buf(ctx->payload, (int)ctx->payload_len);
	n = b ? cafile_read_bio(&next, b) : 0;
	BIO_free(b);
	if (n <= 0) {
		cafile_clear(&next);
		dstr_printf(&ctx->out, "Can't update %s: no %s found in the payload\n", argv[3],
			    crl ? "CRL" : "certificate");
		return -1;
	}
	dstr_printf(&ctx->out, "Transaction %s for %s %s!\n", caf.tx_of[crl] ? "updated" : "created",
		    cafile_kind[crl], argv[3]);
	cafile_clear(&caf.tx[crl]);
	caf.tx[crl] = next;
	caf.tx_of[crl] = f;
	return 0;
}

/* commit ssl ca-file|crl-file <file> */
static int cafile_cli_commit(struct cli_ctx *ctx, int argc, char **argv, int crl)
{
	struct cafile *f = caf.tx_of[crl], old;

	if (argc < 4) {
		dstr_printf(&ctx->out, "'commit ssl %s' expects a filename\n", argv[2]);
		return -1;
	}
	if (!f) {
		dstr_printf(&ctx->out, "No ongoing transaction! !\nCan't commit %s!\n", argv[3]);
		return -1;
	}
	if (strcmp(f->path, argv[3]) != 0) {
		dstr_printf(&ctx->out, "The ongoing transaction is about '%s' but you are trying to "
			    "set '%s'\n", f->path, argv[3]);
		return -1;
	}
	old = *f;
	f->certs = caf.tx[crl].certs;
	f->crls = caf.tx[crl].crls;
	for (int i = 0; i < caf.nusers; i++) {
		struct cafile_user *u = &caf.users[i];

		if ((u->ca == f || u->cav == f || u->crl == f) && cafile_install(u) == -1) {
			/* put the old contents back everywhere */
			f->certs = old.certs;
			f->crls = old.crls;
			for (int k = 0; k <= i; k++)
				if (caf.users[k].ca == f || caf.users[k].cav == f || caf.users[k].crl == f)
					cafile_install(&caf.users[k]);
			dstr_printf(&ctx->out, "Committing %s\nFailed!\n", argv[3]);
			return -1;
		}
	}
	cafile_clear(&old);
	caf.tx[crl].certs = NULL;
	caf.tx[crl].crls = NULL;
	caf.tx_of[crl] = NULL;
	dstr_printf(&ctx->out, "Committing %s.\nSuccess!\n", argv[3]);
	return 0;
}

/* abort ssl ca-file|crl-file <file> */
static int cafile_cli_abort(struct cli_ctx *ctx, int argc, char **argv, int crl)
{

	if (argc < 4 || !caf.tx_of[crl] || strcmp(caf.tx_of[crl]->path, argv[3]) != 0) {
		dstr_printf(&ctx->out, "No ongoing transaction!\n");
		return -1;
	}
	cafile_clear(&caf.tx[crl]);
	caf.tx_of[crl] = NULL;
	dstr_printf(&ctx->out, "Transaction aborted for %s '%s'!\n", cafile_kind[crl], argv[3]);
	return 0;
}

/* del ssl ca-file|crl-file <file>: only one nothing uses. */
static int cafile_cli_del(struct cli_ctx *ctx, int argc, char **argv, int crl)
{
	struct cafile **pp, *f = argc > 3 ? cafile_find(argv[3], crl) : NULL;

	if (!f) {
		dstr_printf(&ctx->out, "Can't remove the %s: %s '%s' doesn't exist!\n",
			    cafile_kind[crl], cafile_kind[crl], argc > 3 ? argv[3] : "");
		return -1;
	}
	if (caf.tx_of[crl] == f) {
		dstr_printf(&ctx->out, "Can't remove the %s: a transaction is open on it!\n",
			    cafile_kind[crl]);
		return -1;
	}
	if (cafile_used(f) || f->from_conf) {
		dstr_printf(&ctx->out, "Can't remove the %s: %s '%s' in use, can't be deleted!\n",
			    cafile_kind[crl], cafile_kind[crl], argv[3]);
		return -1;
	}
	for (pp = &caf.files; *pp != f; pp = &(*pp)->next)
		;
	*pp = f->next;
	cafile_clear(f);
	free(f->path);
	free(f);
	dstr_printf(&ctx->out, "%s '%s' deleted!\n", cafile_kind[crl], argv[3]);
	return 0;
}

/* One CRL as "openssl crl -text" summarizes it. */
static void cafile_dump_crl(struct dstr *out, X509_CRL *c)
{
	STACK_OF(X509_REVOKED) *rev = X509_CRL_get_REVOKED(c);
	char buf[1024];

	dstr_printf(out, "Version %ld\n", X509_CRL_get_version(c) + 1);
	dstr_printf(out, "Signature Algorithm: %s\n",
		    OBJ_nid2ln(X509_CRL_get_signature_nid(c)));
	if (X509_NAME_oneline(X509_CRL_get_issuer(c), buf, sizeof(buf)))
		dstr_printf(out, "Issuer: %s\n", buf);
	ssl_dump_time(out, "Last Update: ", X509_CRL_get0_lastUpdate(c));
	ssl_dump_time(out, "Next Update: ", X509_CRL_get0_nextUpdate(c));
	if (!sk_X509_REVOKED_num(rev)) {
		dstr_printf(out, "No Revoked Certificates.\n");
		return;
	}
	dstr_printf(out, "Revoked Certificates:\n");
	for (int i = 0; i < sk_X509_REVOKED_num(rev); i++) {
		X509_REVOKED *r = sk_X509_REVOKED_value(rev, i);
		const ASN1_INTEGER *ser = X509_REVOKED_get0_serialNumber(r);

		dstr_printf(out, "    Serial Number: ");
		for (int k = 0; k < ASN1_STRING_length(ser); k++)
			dstr_printf(out, "%02X", ASN1_STRING_get0_data(ser)[k]);
		dstr_printf(out, "\n");
		ssl_dump_time(out, "        Revocation Date: ", X509_REVOKED_get0_revocationDate(r));
	}
}

/* show ssl ca-file|crl-file [[*]<file>[:<index>]] */
static int cafile_cli_show(struct cli_ctx *ctx, int argc, char **argv, int crl)
{
	int tx = 0, idx = 0;
	const struct cafile *f;
	char *name, *colon;

	if (argc < 4) {
		if (caf.tx_of[crl]) {
			dstr_printf(&ctx->out, "# transaction\n*%s", caf.tx_of[crl]->path);
			if (!crl)
				dstr_printf(&ctx->out, " - %d certificate(s)", cafile_count(&caf.tx[crl]));
			dstr_printf(&ctx->out, "\n");
		}
		dstr_printf(&ctx->out, "# filename\n");
		for (f = caf.files; f; f = f->next)
			if (f->crl == crl) {
				dstr_printf(&ctx->out, "%s", f->path);
				if (!crl)
					dstr_printf(&ctx->out, " - %d certificate(s)", cafile_count(f));
				dstr_printf(&ctx->out, "\n");
			}
		return 0;
	}
	name = xstrdup(argv[3]);
	colon = strrchr(name, ':');
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		idx = atoi(colon + 1);
		*colon = '\0';
	}
	tx = name[0] == '*';
	f = tx ? (caf.tx_of[crl] && !strcmp(caf.tx_of[crl]->path, name + 1) ? &caf.tx[crl] : NULL) :
		 cafile_find(name, crl);
	if (!f) {
		dstr_printf(&ctx->out, "Can't display a %s which is not referenced by the "
			    "configuration!\n", cafile_kind[crl]);
		free(name);
		return -1;
	}
	dstr_printf(&ctx->out, "Filename: %s\nStatus: %s\n", name,
		    !tx && cafile_used(f) ? "Used" : "Unused");
	for (int i = 0; i < cafile_count(f); i++) {
		if (idx && idx != i + 1)
			continue;
		if (crl) {
			dstr_printf(&ctx->out, "\nCertificate Revocation List #%d:\n", i + 1);
			cafile_dump_crl(&ctx->out, sk_X509_CRL_value(f->crls, i));
		} else {
			dstr_printf(&ctx->out, "\nCertificate #%d:\n", i + 1);
			ckch_dump_x509(&ctx->out, sk_X509_value(f->certs, i), NULL);
		}
	}
	free(name);
	return 0;
}

static int cli_new_ca(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_new(ctx, argc, argv, 0);
}

static int cli_new_crl(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_new(ctx, argc, argv, 1);
}

static int cli_set_ca(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_set(ctx, argc, argv, 0);
}

static int cli_set_crl(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_set(ctx, argc, argv, 1);
}

static int cli_commit_ca(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_commit(ctx, argc, argv, 0);
}

static int cli_commit_crl(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_commit(ctx, argc, argv, 1);
}

static int cli_abort_ca(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_abort(ctx, argc, argv, 0);
}

static int cli_abort_crl(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_abort(ctx, argc, argv, 1);
}

static int cli_del_ca(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_del(ctx, argc, argv, 0);
}

static int cli_del_crl(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_del(ctx, argc, argv, 1);
}

static int cli_show_ca(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_show(ctx, argc, argv, 0);
}

static int cli_show_crl(struct cli_ctx *ctx, int argc, char **argv)
{
	return cafile_cli_show(ctx, argc, argv, 1);
}

static struct cli_kw cafile_cli_kws[] = {
	{ { "new", "ssl", "ca-file", NULL }, "new ssl ca-file <cafile>",
	  "create an empty CA file (then set, commit, and name it in a crt-list line)",
	  CLI_LVL_ADMIN, cli_new_ca },
	{ { "set", "ssl", "ca-file", NULL }, "set ssl ca-file <cafile> <payload>",
	  "replace a CA file's certificates (a transaction)", CLI_LVL_ADMIN, cli_set_ca },
	{ { "commit", "ssl", "ca-file", NULL }, "commit ssl ca-file <cafile>",
	  "apply the transaction: new handshakes verify with it", CLI_LVL_ADMIN,
	  cli_commit_ca },
	{ { "abort", "ssl", "ca-file", NULL }, "abort ssl ca-file <cafile>",
	  "drop the transaction", CLI_LVL_ADMIN, cli_abort_ca },
	{ { "del", "ssl", "ca-file", NULL }, "del ssl ca-file <cafile>",
	  "delete a CA file nothing uses", CLI_LVL_ADMIN, cli_del_ca },
	{ { "show", "ssl", "ca-file", NULL }, "show ssl ca-file [<cafile>[:<index>]]",
	  "list the CA files, or detail one", CLI_LVL_OPERATOR, cli_show_ca },
	{ { "new", "ssl", "crl-file", NULL }, "new ssl crl-file <crlfile>",
	  "create an empty CRL file", CLI_LVL_ADMIN, cli_new_crl },
	{ { "set", "ssl", "crl-file", NULL }, "set ssl crl-file <crlfile> <payload>",
	  "replace a CRL file's lists (a transaction)", CLI_LVL_ADMIN, cli_set_crl },
	{ { "commit", "ssl", "crl-file", NULL }, "commit ssl crl-file <crlfile>",
	  "apply the transaction: new handshakes check revocation with it", CLI_LVL_ADMIN,
	  cli_commit_crl },
	{ { "abort", "ssl", "crl-file", NULL }, "abort ssl crl-file <crlfile>",
	  "drop the transaction", CLI_LVL_ADMIN, cli_abort_crl },
	{ { "del", "ssl", "crl-file", NULL }, "del ssl crl-file <crlfile>",
	  "delete a CRL file nothing uses", CLI_LVL_ADMIN, cli_del_crl },
	{ { "show", "ssl", "crl-file", NULL }, "show ssl crl-file [<crlfile>[:<index>]]",
	  "list the CRL files, or detail one", CLI_LVL_OPERATOR, cli_show_crl },
};

SLUICE_INIT(cafile_register)
{
	cli_register(cafile_cli_kws, ARRAY_SIZE(cafile_cli_kws));
}

#endif
