/* TLS certificates: loading PEM files ("crt <file|dir>", "crt-list"), the
 * per-bind SNI index (exact names, wildcards, RSA and ECDSA side by side),
 * and the shared store the runtime API updates (ssl_cfg.h, ssl_int.h). */
#ifdef USE_OPENSSL
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "ssl_int.h"

static struct ckch *ckch_head, **ckch_tail = &ckch_head;

struct ckch *ckch_list(void)
{
	return ckch_head;
}

/* The first OpenSSL error as text (static buffer), "unknown error" if none. */
static const char *ssl_err_str(void)
{
	static char buf[256];
	unsigned long e = ERR_peek_last_error();

	if (!e)
		return "unknown error";
	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return buf;
}

/* Reads certificate, chain and key from PEM text <bio> into <ck>'s fields
 * (replacing nothing: they must be empty). <keybio> (may be NULL) holds the
 * key when <bio> has none. Returns 0, or -1 with <err> allocated. */
static int ckch_read_pem(struct ckch *ck, BIO *bio, BIO *keybio, const char *name, char **err)
{
	X509 *x;

	ck->cert = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL);
	if (!ck->cert) {
		*err = str_fmt("'%s': no certificate found (%s)", name, ssl_err_str());
		return -1;
	}
	ck->chain = sk_X509_new_null();
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)))
		sk_X509_push(ck->chain, x);
	ERR_clear_error();
	/* the key may come before or after the certificates */
	BIO_reset(bio);
	ck->key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	ERR_clear_error();
	if (!ck->key && keybio)
		ck->key = PEM_read_bio_PrivateKey(keybio, NULL, NULL, NULL);
	if (!ck->key) {
		*err = str_fmt("'%s': no private key found (in it, nor in '%s.key')", name, name);
		return -1;
	}
	if (X509_check_private_key(ck->cert, ck->key) != 1) {
		ERR_clear_error();
		*err = str_fmt("'%s': the private key does not match the certificate", name);
		return -1;
	}
	/* HAProxy 2.6 serves an expired certificate as it is; sluice refuses
	 * it, at start-up and at run time, so that an outage shows as an
	 * error naming the file instead of browser warnings. */
	if (X509_cmp_current_time(X509_get0_notAfter(ck->cert)) <= 0 ||
	    X509_cmp_current_time(X509_get0_notBefore(ck->cert)) >= 0) {
		char when[64] = "?";
		const ASN1_TIME *t = X509_cmp_current_time(X509_get0_notAfter(ck->cert)) <= 0 ?
				     X509_get0_notAfter(ck->cert) : X509_get0_notBefore(ck->cert);
		BIO *mb = BIO_new(BIO_s_mem());
		int n = mb && ASN1_TIME_print(mb, t) == 1 ? BIO_read(mb, when, sizeof(when) - 1) : -1;

		if (n > 0)
			when[n] = '\0';
		*err = str_fmt("'%s': the certificate is %s %s (sluice refuses certificates outside "
			       "their validity period, unlike HAProxy which serves them)", name,
			       t == X509_get0_notAfter(ck->cert) ? "expired since" : "not valid before",
			       when);
		BIO_free(mb);
		return -1;
	}
	return 0;
}

static void ckch_clear(struct ckch *ck)
{
	X509_free(ck->cert);
	EVP_PKEY_free(ck->key);
	sk_X509_pop_free(ck->chain, X509_free);
	ck->cert = NULL;
	ck->key = NULL;
	ck->chain = NULL;
}

struct ckch *ckch_get(const char *path, char **err)
{
	struct ckch *ck;
	BIO *bio, *keybio;
	char *keypath;

	for (ck = ckch_head; ck; ck = ck->next)
		if (strcmp(ck->path, path) == 0)
			return ck;
	bio = BIO_new_file(path, "r");
	if (!bio) {
		ERR_clear_error();
		*err = str_fmt("cannot read certificate '%s': %s", path, strerror(errno));
		return NULL;
	}
	keypath = str_fmt("%s.key", path);
	keybio = BIO_new_file(keypath, "r");
	ERR_clear_error();
	free(keypath);
	ck = xcalloc(1, sizeof(*ck));
	if (ckch_read_pem(ck, bio, keybio, path, err) == -1) {
		ckch_clear(ck);
		free(ck);
		ck = NULL;
	} else {
		ck->path = xstrdup(path);
		*ckch_tail = ck;
		ckch_tail = &ck->next;
	}
	BIO_free(bio);
	BIO_free(keybio);
	return ck;
}

/* Installs <ck>'s certificate, key and chain in <ctx>. Returns 0 or -1. */
static int ckch_install(struct ckch *ck, SSL_CTX *ctx)
{
	if (SSL_CTX_use_certificate(ctx, ck->cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ck->key) != 1 ||
	    SSL_CTX_set1_chain(ctx, ck->chain) != 1)
		return -1;
	return 0;
}

/* <ctx> no longer serves <ck> (it is being freed). */
static void ckch_detach(struct ckch *ck, SSL_CTX *ctx)
{
	for (int i = 0; i < ck->nusers; i++)
		if (ck->users[i] == ctx) {
			ck->users[i] = ck->users[--ck->nusers];
			return;
		}
}

int ckch_attach(struct ckch *ck, SSL_CTX *ctx)
{
	if (ckch_install(ck, ctx) == -1)
		return -1;
	ck->users = realloc(ck->users, sizeof(*ck->users) * (size_t)(ck->nusers + 1));
	if (!ck->users)
		return -1;
	ck->users[ck->nusers++] = ctx;
	return 0;
}

/* Parses PEM text <pem> (certificate, key, chain) for <path> into <out>
 * (zeroed first). Returns 0, or -1 with <err> allocated. */
static int ckch_parse(struct ckch *out, const char *path, const char *pem, size_t len,
                      char **err)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	int r;

	memset(out, 0, sizeof(*out));
	if (!bio) {
		*err = str_fmt("out of memory");
		return -1;
	}
	r = ckch_read_pem(out, bio, NULL, path, err);
	BIO_free(bio);
	if (r == -1)
		ckch_clear(out);
	return r;
}

/* Moves <tmp>'s certificate, key and chain into <ck> and every context
 * using it. Returns 0, or -1 with <err> allocated (nothing changed). */
static int ckch_commit(struct ckch *ck, struct ckch *tmp, char **err)
{
	for (int i = 0; i < ck->nusers; i++)
		if (ckch_install(tmp, ck->users[i]) == -1) {
			/* put the old one back where the new one failed */
			for (int j = 0; j <= i; j++)
				ckch_install(ck, ck->users[j]);
			*err = str_fmt("'%s': %s", ck->path, ssl_err_str());
			return -1;
		}
	ckch_clear(ck);
	ck->cert = tmp->cert;
	ck->key = tmp->key;
	ck->chain = tmp->chain;
	memset(tmp, 0, sizeof(*tmp));
	return 0;
}

/* Appends a certificate line to <o>. */
static struct ssl_crt_ent *ssl_add_crt(struct ssl_bind_opts *o, struct ckch *ck)
{
	struct ssl_crt_ent *e;

	o->crts = realloc(o->crts, sizeof(*o->crts) * (size_t)(o->ncrts + 1));
	if (!o->crts)
		abort();   /* start-up only */
	e = &o->crts[o->ncrts++];
	memset(e, 0, sizeof(*e));
	e->ck = ck;
	return e;
}

/* Files of a certificate directory that are not certificates themselves. */
static int ssl_crt_dir_skip(const char *name)
{
	static const char *const sfx[] = { ".key", ".ocsp", ".issuer", ".sctl", ".crt-list" };
	size_t l = strlen(name);

	if (name[0] == '.')
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		size_t k = strlen(sfx[i]);

		if (l > k && strcmp(name + l - k, sfx[i]) == 0)
			return 1;
	}
	return 0;
}

static int ssl_dirent_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int ssl_ckch_load_crt(struct ssl_bind_opts *o, const char *path, char **err)
{
	struct dirent **names;
	struct stat st;
	struct ckch *ck;
	int n, ret = 0;

	if (stat(path, &st) == -1) {
		*err = str_fmt("cannot read certificate '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (!(ck = ckch_get(path, err)))
			return -1;
		ssl_add_crt(o, ck);
		return 0;
	}
	/* a directory: every certificate in it, in name order (the first
	 * one is the default) */
	n = scandir(path, &names, NULL, ssl_dirent_cmp);
	if (n < 0) {
		*err = str_fmt("cannot read directory '%s': %s", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char *file = str_fmt("%s/%s", path, names[i]->d_name);

		if (!ret && !ssl_crt_dir_skip(names[i]->d_name) && stat(file, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			if ((ck = ckch_get(file, err)))
				ssl_add_crt(o, ck);
			else
				ret = -1;
		}
		free(file);
		free(names[i]);
	}
	free(names);
	return ret;
}

/* Splits <line> into words at blanks (no quoting in crt-lists). Returns the
 * count, at most <max>. */
static int ssl_split_words(char *line, char **w, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && n < max;
	     t = strtok_r(NULL, " \t\r\n", &save))
		w[n++] = t;
	return n;
}

int ssl_ckch_load_crt_list(struct ssl_bind_opts *o, const char *path, char **err)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int lineno = 0;

	if (!f) {
		*err = str_fmt("cannot read crt-list '%s': %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *w[64], *p = line, *end;
		struct ssl_bind_opts *lo = NULL;
		struct ssl_crt_ent *e;
		struct ckch *ck;
		int n, i = 0;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		/* "<crt> [<options>] [<sni filter>...]": the options between brackets */
		end = strchr(p, '[');
		if (end) {
			char *close = strchr(end, ']');
			char *ow[32];
			int on;

			if (!close) {
				*err = str_fmt("'%s' line %d: missing ']'", path, lineno);
				goto fail;
			}
			*end = *close = '\0';
			lo = xcalloc(1, sizeof(*lo));
			lo->verify = -1;
			on = ssl_split_words(end + 1, ow, 32);
			for (int k = 0; k < on; ) {
				char *e2 = NULL;
				int used = ssl_bind_parse_opt(lo, on - k, ow + k, 1, &e2);

				if (used <= 0) {
					*err = str_fmt("'%s' line %d: %s", path, lineno,
						       e2 ? e2 : "unknown or unsupported option");
					free(e2);
					free(lo);
					goto fail;
				}
				k += used;
			}
			n = ssl_split_words(p, w, 1);
			n += ssl_split_words(close + 1, w + n, 63);
		} else {
			n = ssl_split_words(p, w, 64);
		}
		if (!n)
			continue;
		if (!(ck = ckch_get(w[i++], err))) {
			char *e2 = str_fmt("'%s' line %d: %s", path, lineno, *err);

			free(*err);
			*err = e2;
			free(lo);
			goto fail;
		}
		e = ssl_add_crt(o, ck);
		e->lo = lo;
		if (n > i) {
			e->filters = xcalloc((size_t)(n - i), sizeof(char *));
			for (; i < n; i++)
				e->filters[e->nfilters++] = xstrdup(w[i]);
		}
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	return -1;
}

/* Adds <name> (lowercased; "*.x" becomes a wildcard ".x") to the index. */
static void ssl_sni_add(struct ssl_bind_opts *o, const char *name, struct ssl_crt_ent *e)
{
	struct ssl_sni_ent *s;
	int ecdsa = EVP_PKEY_base_id(e->ck->key) == EVP_PKEY_EC;

	o->sni = realloc(o->sni, sizeof(*o->sni) * (size_t)(o->nsni + 1));
	if (!o->sni)
		abort();
	s = &o->sni[o->nsni++];
	s->wild = name[0] == '*' && name[1] == '.';
	s->name = xstrdup(s->wild ? name + 1 : name);
	for (char *c = s->name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	s->ecdsa = ecdsa;
	s->ent = e;
}

/* The DNS names of <x>: subjectAltName entries, else the common name. */
static void ssl_sni_add_cert_names(struct ssl_bind_opts *o, struct ssl_crt_ent *e)
{
	GENERAL_NAMES *names = X509_get_ext_d2i(e->ck->cert, NID_subject_alt_name, NULL, NULL);
	int found = 0;

	for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
		unsigned char *str;

		if (g->type != GEN_DNS || ASN1_STRING_to_UTF8(&str, g->d.dNSName) < 0)
			continue;
		ssl_sni_add(o, (char *)str, e);
		OPENSSL_free(str);
		found = 1;
	}
	GENERAL_NAMES_free(names);
	if (!found) {
		X509_NAME *subj = X509_get_subject_name(e->ck->cert);
		int idx = X509_NAME_get_index_by_NID(subj, NID_commonName, -1);
		unsigned char *str;

		if (idx >= 0 &&
		    ASN1_STRING_to_UTF8(&str, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, idx))) >= 0) {
			ssl_sni_add(o, (char *)str, e);
			OPENSSL_free(str);
		}
	}
}

void ssl_ckch_index(struct ssl_bind_opts *o)
{
	for (int i = 0; i < o->ncrts; i++) {
		struct ssl_crt_ent *e = &o->crts[i];
		int pos = 0;

		for (int k = 0; k < e->nfilters; k++)
			if (e->filters[k][0] != '!') {
				ssl_sni_add(o, e->filters[k], e);
				pos = 1;
			}
		if (!pos)
			ssl_sni_add_cert_names(o, e);
		if (!o->def_ctx)
			o->def_ctx = e->ctx;
	}
}

/* Whether <e>'s negative filters exclude <name>. */
static int ssl_sni_excluded(const struct ssl_crt_ent *e, const char *name)
{
	for (int k = 0; k < e->nfilters; k++)
		if (e->filters[k][0] == '!' && strcasecmp(e->filters[k] + 1, name) == 0)
			return 1;
	return 0;
}

SSL_CTX *ssl_ckch_pick(const struct ssl_bind_opts *o, const char *name, int ecdsa)
{
	const struct ssl_sni_ent *exact = NULL, *wild = NULL;
	const char *dot;

	if (!name)
		return NULL;
	dot = strchr(name, '.');
	/* An exact name wins over a wildcard; among equals, the key type the
	 * client accepts (ECDSA when it can), then the first loaded. */
	for (int i = 0; i < o->nsni; i++) {
		const struct ssl_sni_ent *s = &o->sni[i];
		const struct ssl_sni_ent **slot;

		if (s->wild ? !(dot && strcasecmp(s->name, dot) == 0) : strcasecmp(s->name, name) != 0)
			continue;
		if (ssl_sni_excluded(s->ent, name) || (s->ecdsa && !ecdsa))
			continue;
		slot = s->wild ? &wild : &exact;
		if (!*slot || (ecdsa && s->ecdsa && !(*slot)->ecdsa))
			*slot = s;
	}
	if (exact)
		return exact->ent->ctx;
	return wild ? wild->ent->ctx : NULL;
}

void ssl_opts_clear(struct ssl_bind_opts *o)
{
	ssl_ckch_free_crts(o);
	free(o->ciphers);
	free(o->ciphersuites);
	free(o->curves);
	free(o->ca_file);
	free(o->crl_file);
	free(o->alpn);
	o->ciphers = o->ciphersuites = o->curves = o->ca_file = o->crl_file = NULL;
	o->alpn = NULL;
}

void ssl_ckch_free_crts(struct ssl_bind_opts *o)
{
	for (int i = 0; i < o->ncrts; i++) {
		struct ssl_crt_ent *e = &o->crts[i];

		for (int k = 0; k < e->nfilters; k++)
			free(e->filters[k]);
		free(e->filters);
		if (e->ctx)
			ckch_detach(e->ck, e->ctx);
		SSL_CTX_free(e->ctx);
		free(e->mo);
		if (e->lo) {
			ssl_opts_clear(e->lo);
			free(e->lo);
		}
	}
	free(o->crts);
	o->crts = NULL;
	o->ncrts = 0;
	ssl_ckch_free_index(o);
}

SSL_CTX *ssl_ckch_default(const struct ssl_bind_opts *o)
{
	return o->def_ctx;
}

void ssl_ckch_free_index(struct ssl_bind_opts *o)
{
	for (int i = 0; i < o->nsni; i++)
		free(o->sni[i].name);
	free(o->sni);
	o->sni = NULL;
	o->nsni = 0;
}

/* ---- runtime API: show / set / commit / abort ssl cert ---- */

/* The one transaction open at a time, as in HAProxy. */
static struct {
	struct ckch *ck;     /* certificate being replaced, NULL: none */
	struct ckch  next;   /* its new contents */
} ckch_tx;

static struct ckch *ckch_find(const char *path)
{
	for (struct ckch *ck = ckch_head; ck; ck = ck->next)
		if (strcmp(ck->path, path) == 0)
			return ck;
	return NULL;
}

static void cli_dump_time(struct dstr *out, const char *label, const ASN1_TIME *t)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;

	if (!b)
		return;
	ASN1_TIME_print(b, t);
	n = BIO_get_mem_data(b, &p);
	dstr_printf(out, "%s: %.*s\n", label, (int)n, p);
	BIO_free(b);
}

static void cli_dump_name(struct dstr *out, const char *label, X509_NAME *name)
{
	char buf[1024];

	if (X509_NAME_oneline(name, buf, sizeof(buf)))
		dstr_printf(out, "%s: %s\n", label, buf);
}

/* "show ssl cert <file>": what HAProxy prints, from <ck>'s contents. */
static void cli_dump_ckch(struct dstr *out, const char *name, const struct ckch *ck, int used)
{
	const ASN1_INTEGER *ser = X509_get0_serialNumber(ck->cert);
	GENERAL_NAMES *names = X509_get_ext_d2i(ck->cert, NID_subject_alt_name, NULL, NULL);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int bits = EVP_PKEY_get_bits(ck->key);

	dstr_printf(out, "Filename: %s\nStatus: %s\nSerial: ", name, used ? "Used" : "Unused");
	for (int i = 0; ser && i < ASN1_STRING_length(ser); i++)
		dstr_printf(out, "%02X", ASN1_STRING_get0_data(ser)[i]);
	dstr_printf(out, "\n");
	cli_dump_time(out, "notBefore", X509_get0_notBefore(ck->cert));
	cli_dump_time(out, "notAfter", X509_get0_notAfter(ck->cert));
	if (names) {
		dstr_printf(out, "Subject Alternative Name: ");
		for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
			GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);

			if (g->type == GEN_DNS)
				dstr_printf(out, "%sDNS:%.*s", i ? ", " : "",
					    ASN1_STRING_length(g->d.dNSName),
					    (const char *)ASN1_STRING_get0_data(g->d.dNSName));
		}
		dstr_printf(out, "\n");
		GENERAL_NAMES_free(names);
	}
	dstr_printf(out, "Algorithm: %s%d\n",
		    EVP_PKEY_base_id(ck->key) == EVP_PKEY_EC ? "EC" : "RSA", bits);
	if (X509_digest(ck->cert, EVP_sha1(), md, &mdlen)) {
		dstr_printf(out, "SHA1 FingerPrint: ");
		for (unsigned i = 0; i < mdlen; i++)
			dstr_printf(out, "%02X", md[i]);
		dstr_printf(out, "\n");
	}
	cli_dump_name(out, "Subject", X509_get_subject_name(ck->cert));
	cli_dump_name(out, "Issuer", X509_get_issuer_name(ck->cert));
	for (int i = 0; i < sk_X509_num(ck->chain); i++) {
		cli_dump_name(out, "Chain Subject", X509_get_subject_name(sk_X509_value(ck->chain, i)));
		cli_dump_name(out, "Chain Issuer", X509_get_issuer_name(sk_X509_value(ck->chain, i)));
	}
}

static int cli_show_ssl_cert(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *name = argc > 3 ? argv[3] : NULL;
	struct ckch *ck;

	if (!name) {
		if (ckch_tx.ck)
			dstr_printf(&ctx->out, "# transaction\n*%s\n", ckch_tx.ck->path);
		dstr_printf(&ctx->out, "# filename\n");
		for (ck = ckch_head; ck; ck = ck->next)
			dstr_printf(&ctx->out, "%s\n", ck->path);
		return 0;
	}
	if (name[0] == '*') {
		if (!ckch_tx.ck || strcmp(ckch_tx.ck->path, name + 1) != 0) {
			dstr_printf(&ctx->out, "No transaction for certificate '%s'!\n", name + 1);
			return -1;
		}
		cli_dump_ckch(&ctx->out, name, &ckch_tx.next, 0);
		return 0;
	}
	if (!(ck = ckch_find(name))) {
		dstr_printf(&ctx->out, "Can't display a certificate which is not referenced by the "
			    "configuration!\n");
		return -1;
	}
	cli_dump_ckch(&ctx->out, name, ck, ck->nusers > 0);
	return 0;
}

static int cli_set_ssl_cert(struct cli_ctx *ctx, int argc, char **argv)
{
	struct ckch *ck, next;
	char *err = NULL;

	if (argc < 4 || !ctx->payload) {
		dstr_printf(&ctx->out, "'set ssl cert' expects a filename and a certificate as a "
			    "payload\n");
		return -1;
	}
	if (!(ck = ckch_find(argv[3]))) {
		dstr_printf(&ctx->out, "Can't replace a certificate which is not referenced by the "
			    "configuration!\n");
		return -1;
	}
	if (ckch_tx.ck && ckch_tx.ck != ck) {
		dstr_printf(&ctx->out, "The ongoing transaction is about '%s' but you are trying to "
			    "set '%s'\n", ckch_tx.ck->path, argv[3]);
		return -1;
	}
	if (ckch_parse(&next, ck->path, ctx->payload, ctx->payload_len, &err) == -1) {
		dstr_printf(&ctx->out, "unable to load certificate: %s\n", err);
		free(err);
		return -1;
	}
	dstr_printf(&ctx->out, "Transaction %s for certificate %s!\n",
		    ckch_tx.ck ? "updated" : "created", ck->path);
	ckch_clear(&ckch_tx.next);
	ckch_tx.ck = ck;
	ckch_tx.next = next;
	return 0;
}

static int cli_commit_ssl_cert(struct cli_ctx *ctx, int argc, char **argv)
{
	char *err = NULL;

	if (argc < 4) {
		dstr_printf(&ctx->out, "'commit ssl cert' expects a filename\n");
		return -1;
	}
	if (!ckch_tx.ck) {
		dstr_printf(&ctx->out, "No ongoing transaction! !\n");
		return -1;
	}
	if (strcmp(ckch_tx.ck->path, argv[3]) != 0) {
		dstr_printf(&ctx->out, "The ongoing transaction is about '%s' but you are trying to "
			    "set '%s'\n", ckch_tx.ck->path, argv[3]);
		return -1;
	}
	dstr_printf(&ctx->out, "Committing %s", argv[3]);
	if (ckch_commit(ckch_tx.ck, &ckch_tx.next, &err) == -1) {
		dstr_printf(&ctx->out, "\nFailed!\n%s\n", err);
		free(err);
		return -1;
	}
	ckch_tx.ck = NULL;
	dstr_printf(&ctx->out, ".\nSuccess!\n");
	return 0;
}

static int cli_abort_ssl_cert(struct cli_ctx *ctx, int argc, char **argv)
{
	if (argc < 4) {
		dstr_printf(&ctx->out, "'abort ssl cert' expects a filename\n");
		return -1;
	}
	if (!ckch_tx.ck || strcmp(ckch_tx.ck->path, argv[3]) != 0) {
		dstr_printf(&ctx->out, "No ongoing transaction for certificate '%s'!\n", argv[3]);
		return -1;
	}
	ckch_clear(&ckch_tx.next);
	ckch_tx.ck = NULL;
	dstr_printf(&ctx->out, "Transaction aborted for certificate '%s'!\n", argv[3]);
	return 0;
}

static struct cli_kw ckch_cli_kws[] = {
	{ { "show", "ssl", "cert", NULL }, "show ssl cert [<certfile>]",
	  "list the certificates, or detail one (*<certfile>: the transaction)",
	  CLI_LVL_OPERATOR, cli_show_ssl_cert },
	{ { "set", "ssl", "cert", NULL }, "set ssl cert <certfile> <payload>",
	  "replace a certificate's contents (a transaction)", CLI_LVL_ADMIN, cli_set_ssl_cert },
	{ { "commit", "ssl", "cert", NULL }, "commit ssl cert <certfile>",
	  "apply the transaction: new handshakes use it", CLI_LVL_ADMIN, cli_commit_ssl_cert },
	{ { "abort", "ssl", "cert", NULL }, "abort ssl cert <certfile>",
	  "drop the transaction", CLI_LVL_ADMIN, cli_abort_ssl_cert },
};

SLUICE_INIT(ckch_register)
{
	cli_register(ckch_cli_kws, ARRAY_SIZE(ckch_cli_kws));
}

#endif
