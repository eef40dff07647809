/* TLS certificates: loading PEM files and the files found next to them
 * (key, issuer, OCSP, SCT list, bundles; ssl-load-extra-files), the
 * per-bind SNI index (exact names, wildcards, RSA and ECDSA side by side),
 * and the shared store the runtime API updates ("show/set/commit/abort/new/
 * del ssl cert"; ssl_cfg.h, ssl_int.h). */
#ifdef USE_OPENSSL
#include <ctype.h>
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
#include <sluice/log.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "ssl_int.h"

static struct ckch *ckch_head, **ckch_tail = &ckch_head;

struct ckch *ckch_list(void)
{
	return ckch_head;
}

struct ckch *ckch_find(const char *path)
{
	for (struct ckch *ck = ckch_head; ck; ck = ck->next)
		if (strcmp(ck->path, path) == 0)
			return ck;
	return NULL;
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

/* Refuses a certificate outside its validity period: HAProxy 2.6 serves an
 * expired certificate as it is; sluice refuses it, at start-up and at run
 * time, so that an outage shows as an error naming the file instead of
 * browser warnings. */
static int ckch_check_dates(const struct ckch *ck, const char *name, char **err)
{
	char when[64] = "?";
	const ASN1_TIME *t;
	BIO *mb;
	int n;

	if (X509_cmp_current_time(X509_get0_notAfter(ck->cert)) > 0 &&
	    X509_cmp_current_time(X509_get0_notBefore(ck->cert)) < 0)
		return 0;
	t = X509_cmp_current_time(X509_get0_notAfter(ck->cert)) <= 0 ?
	    X509_get0_notAfter(ck->cert) : X509_get0_notBefore(ck->cert);
	mb = BIO_new(BIO_s_mem());
	n = mb && ASN1_TIME_print(mb, t) == 1 ? BIO_read(mb, when, sizeof(when) - 1) : -1;
	if (n > 0)
		when[n] = '\0';
	*err = str_fmt("'%s': the certificate is %s %s (sluice refuses certificates outside "
		       "their validity period, unlike HAProxy which serves them)", name,
		       t == X509_get0_notAfter(ck->cert) ? "expired since" : "not valid before",
		       when);
	BIO_free(mb);
	return -1;
}

/* Reads certificate, chain, key and DH parameters from PEM text <bio> into
 * <ck>'s fields (replacing nothing: they must be empty). <keybio> (may be
 * NULL) holds the key when <bio> has none. Returns 0, or -1 with <err>
 * allocated. */
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
	/* the key and the DH parameters may come before or after the certificates */
	BIO_reset(bio);
	ck->key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	ERR_clear_error();
	BIO_reset(bio);
	ck->dh = PEM_read_bio_Parameters(bio, NULL);
	if (ck->dh && EVP_PKEY_base_id(ck->dh) != EVP_PKEY_DH) {
		EVP_PKEY_free(ck->dh);
		ck->dh = NULL;
	}
	ERR_clear_error();
	if (!ck->key && keybio)
		ck->key = PEM_read_bio_PrivateKey(keybio, NULL, NULL, NULL);
	if (!ck->key) {
		*err = str_fmt("'%s': no private key found (in it, nor in a '.key' file next to it)",
			       name);
		return -1;
	}
	if (X509_check_private_key(ck->cert, ck->key) != 1) {
		ERR_clear_error();
		*err = str_fmt("'%s': the private key does not match the certificate", name);
		return -1;
	}
	return ckch_check_dates(ck, name, err);
}

static void ckch_clear(struct ckch *ck)
{
	X509_free(ck->cert);
	EVP_PKEY_free(ck->key);
	sk_X509_pop_free(ck->chain, X509_free);
	X509_free(ck->issuer);
	EVP_PKEY_free(ck->dh);
	free(ck->sctl);
	ocsp_release(ck);
	ck->cert = NULL;
	ck->key = NULL;
	ck->chain = NULL;
	ck->issuer = NULL;
	ck->dh = NULL;
	ck->sctl = NULL;
	ck->sctl_len = 0;
}

/* The name of an extra file of <path>: <path><ext>, or with
 * ssl-load-extra-del-ext, <path> without its ".crt" then <ext>. */
static char *ckch_extra_path(const char *path, const char *ext)
{
	size_t l = strlen(path);

	if (sslg.extra_del_ext && l > 4 && strcmp(path + l - 4, ".crt") == 0)
		return str_fmt("%.*s%s", (int)(l - 4), path, ext);
	return str_fmt("%s%s", path, ext);
}

ssize_t ssl_read_file(const char *path, unsigned char **out)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, n;

	if (!f)
		return -1;
	do {
		buf = xrealloc(buf, len + 4096);
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n == 4096 && len < (1 << 20));
	fclose(f);
	*out = buf;
	return (ssize_t)len;
}

/* Whether <p, len> is a well-formed SignedCertificateTimestampList: a
 * 2-byte length, then SCTs each with a 2-byte length (RFC 6962 3.3). */
static int ckch_sctl_ok(const unsigned char *p, size_t len)
{
	size_t total, o = 2;

	if (len < 2 || (total = (size_t)p[0] << 8 | p[1]) != len - 2 || !total)
		return 0;
	while (o < len) {
		size_t l;

		if (o + 2 > len)
			return 0;
		l = (size_t)p[o] << 8 | p[o + 1];
		if (!l || o + 2 + l > len)
			return 0;
		o += 2 + l;
	}
	return 1;
}

/* The files next to certificate <path>: issuer, SCT list, OCSP response.
 * Returns 0, or -1 with <err>. */
static int ckch_load_extra(struct ckch *ck, const char *path, char **err)
{
	char *p;
	unsigned char *buf;
	ssize_t n;

	/* the chain: from the file, else from issuers-chain-path */
	if (!sk_X509_num(ck->chain)) {
		STACK_OF(X509) *c = ssl_issuers_chain_for(ck->cert);

		for (int i = 0; c && i < sk_X509_num(c); i++) {
			X509_up_ref(sk_X509_value(c, i));
			sk_X509_push(ck->chain, sk_X509_value(c, i));
		}
	}
	if (sk_X509_num(ck->chain) &&
	    X509_check_issued(sk_X509_value(ck->chain, 0), ck->cert) == X509_V_OK) {
		ck->issuer = sk_X509_value(ck->chain, 0);
		X509_up_ref(ck->issuer);
	}
	if (!ck->issuer && (sslg.extra_files & SSL_XF_ISSUER)) {
		BIO *b;

		p = ckch_extra_path(path, ".issuer");
		b = BIO_new_file(p, "r");
		ERR_clear_error();
		if (b) {
			ck->issuer = PEM_read_bio_X509(b, NULL, NULL, NULL);
			ERR_clear_error();
			BIO_free(b);
			if (!ck->issuer) {
				*err = str_fmt("'%s': no certificate found", p);
				free(p);
				return -1;
			}
		}
		free(p);
	}
	if (sslg.extra_files & SSL_XF_SCTL) {
		p = ckch_extra_path(path, ".sctl");
		n = ssl_read_file(p, &buf);
		if (n >= 0 && !ckch_sctl_ok(buf, (size_t)n)) {
			*err = str_fmt("'%s': not a valid Signed Certificate Timestamp List", p);
			free(buf);
			free(p);
			return -1;
		}
		if (n >= 0) {
			ck->sctl = buf;
			ck->sctl_len = (size_t)n;
		}
		free(p);
	}
	if (sslg.extra_files & SSL_XF_OCSP) {
		int r;

		p = ckch_extra_path(path, ".ocsp");
		r = ocsp_load_for(ck, p, err);
		free(p);
		if (r == -1)
			return -1;
	}
	return 0;
}

struct ckch *ckch_get(const char *path, char **err)
{
	struct ckch *ck = ckch_find(path);
	BIO *bio, *keybio = NULL;

	if (ck) {
		if (!ck->cert) {
			*err = str_fmt("'%s': a certificate created by 'new ssl cert' and not "
				       "committed yet", path);
			return NULL;
		}
		return ck;
	}
	bio = BIO_new_file(path, "r");
	if (!bio) {
		ERR_clear_error();
		*err = str_fmt("cannot read certificate '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (sslg.extra_files & SSL_XF_KEY) {
		char *keypath = ckch_extra_path(path, ".key");

		keybio = BIO_new_file(keypath, "r");
		ERR_clear_error();
		free(keypath);
	}
	ck = xcalloc(1, sizeof(*ck));
	if (ckch_read_pem(ck, bio, keybio, path, err) == -1 ||
	    ckch_load_extra(ck, path, err) == -1) {
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

/* The chain sent with <ck>'s certificate: without self-issued certificates
 * with ssl-skip-self-issued-ca. Returns a new stack (certificates
 * referenced), or NULL when out of memory. */
static STACK_OF(X509) *ckch_sent_chain(const struct ckch *ck)
{
	STACK_OF(X509) *c = sk_X509_new_null();

	for (int i = 0; c && i < sk_X509_num(ck->chain); i++) {
		X509 *x = sk_X509_value(ck->chain, i);

		if (sslg.skip_self_issued && X509_check_issued(x, x) == X509_V_OK)
			continue;
		X509_up_ref(x);
		sk_X509_push(c, x);
	}
	return c;
}

/* Installs <ck>'s certificate, key and chain in <ctx>. Returns 0 or -1. */
static int ckch_install(struct ckch *ck, SSL_CTX *ctx)
{
	STACK_OF(X509) *chain = ckch_sent_chain(ck);
	int r = -1;

	if (chain && SSL_CTX_use_certificate(ctx, ck->cert) == 1 &&
	    SSL_CTX_use_PrivateKey(ctx, ck->key) == 1 && SSL_CTX_set0_chain(ctx, chain) == 1) {
		chain = NULL;
		r = 0;
	}
	sk_X509_pop_free(chain, X509_free);
	return r;
}

/* The signed_certificate_timestamp extension: the .sctl file of the
 * certificate served, to clients that ask (TLSv1.2 ServerHello, TLSv1.3
 * leaf certificate entry). */
static int ckch_sct_add(SSL *s, unsigned int type, unsigned int context,
                        const unsigned char **out, size_t *outlen, X509 *x, size_t chainidx,
                        int *al, void *add_arg)
{
	const struct ckch *ck = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(s), ssl_idx.ctx_ckch);

	if (!ck || !ck->sctl || (context & SSL_EXT_TLS1_3_CERTIFICATE && chainidx))
		return 0;
	*out = ck->sctl;
	*outlen = ck->sctl_len;
	return 1;
}

static int ckch_sct_parse(SSL *s, unsigned int type, unsigned int context,
                          const unsigned char *in, size_t inlen, X509 *x, size_t chainidx,
                          int *al, void *parse_arg)
{
	return 1;
}

void ckch_detach(struct ckch *ck, SSL_CTX *ctx)
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
	ck->users = xrealloc(ck->users, sizeof(*ck->users) * (size_t)(ck->nusers + 1));
	ck->users[ck->nusers++] = ctx;
	SSL_CTX_set_ex_data(ctx, ssl_idx.ctx_ckch, ck);
	/* a bind context of a certificate with a .sctl file serves it */
	if (ck->sctl && SSL_CTX_get_ssl_method(ctx) == TLS_server_method())
		SSL_CTX_add_custom_ext(ctx, TLSEXT_TYPE_signed_certificate_timestamp,
				       SSL_EXT_CLIENT_HELLO | SSL_EXT_TLS1_2_SERVER_HELLO |
				       SSL_EXT_TLS1_3_CERTIFICATE, ckch_sct_add, NULL, NULL,
				       ckch_sct_parse, NULL);
	ERR_clear_error();
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
	if (r == 0 && sk_X509_num(out->chain) &&
	    X509_check_issued(sk_X509_value(out->chain, 0), out->cert) == X509_V_OK) {
		out->issuer = sk_X509_value(out->chain, 0);
		X509_up_ref(out->issuer);
	}
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
				if (ck->cert)
					ckch_install(ck, ck->users[j]);
			*err = str_fmt("'%s': %s", ck->path, ssl_err_str());
			return -1;
		}
	ckch_clear(ck);
	ck->cert = tmp->cert;
	ck->key = tmp->key;
	ck->chain = tmp->chain;
	ck->issuer = tmp->issuer;
	ck->dh = tmp->dh;
	memset(tmp, 0, sizeof(*tmp));
	return 0;
}

/* ---- certificate lines of bind lines ---- */

struct ssl_crt_ent *ssl_add_crt(struct ssl_bind_opts *o, struct ckch *ck, struct crtlist_ent *src)
{
	struct ssl_crt_ent *e;

	o->crts = xrealloc(o->crts, sizeof(*o->crts) * (size_t)(o->ncrts + 1));
	e = &o->crts[o->ncrts++];
	memset(e, 0, sizeof(*e));
	e->ck = ck;
	e->src = src;
	if (src) {
		e->lo = src->lo;
		e->filters = src->filters;
		e->nfilters = src->nfilters;
	}
	return e;
}

int ssl_ckch_load_crt(struct ssl_bind_opts *o, const char *path, char **err)
{
	static const char *const bundle[] = { ".rsa", ".ecdsa", ".dsa" };
	struct stat st;
	struct ckch *ck;
	int found = 0;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return crtlist_use(o, path, 1, err);
		if (!(ck = ckch_get(path, err)))
			return -1;
		ck->from_conf = 1;
		ssl_add_crt(o, ck, NULL);
		return 0;
	}
	/* a bundle: <path>.rsa, <path>.ecdsa, <path>.dsa, each a certificate */
	for (size_t i = 0; (sslg.extra_files & SSL_XF_BUNDLE) && i < ARRAY_SIZE(bundle); i++) {
		char *p = str_fmt("%s%s", path, bundle[i]);

		if (stat(p, &st) == 0) {
			if (!(ck = ckch_get(p, err))) {
				free(p);
				return -1;
			}
			ck->from_conf = 1;
			ssl_add_crt(o, ck, NULL);
			found = 1;
		}
		free(p);
	}
	if (found)
		return 0;
	*err = str_fmt("cannot read certificate '%s': %s", path, strerror(ENOENT));
	return -1;
}

int ssl_ckch_load_crt_list(struct ssl_bind_opts *o, const char *path, char **err)
{
	return crtlist_use(o, path, 0, err);
}

/* Adds <name> (lowercased; "*.x" becomes a wildcard ".x") to the index. */
static void ssl_sni_add(struct ssl_bind_opts *o, const char *name, struct ssl_crt_ent *e)
{
	struct ssl_sni_ent *s;
	int ecdsa = EVP_PKEY_base_id(e->ck->key) == EVP_PKEY_EC;

	o->sni = xrealloc(o->sni, sizeof(*o->sni) * (size_t)(o->nsni + 1));
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
	ssl_ckch_free_index(o);
	o->def_ctx = NULL;
	for (int i = 0; i < o->ncrts; i++) {
		struct ssl_crt_ent *e = &o->crts[i];
		int pos = 0, none = 0;

		for (int k = 0; k < e->nfilters; k++) {
			if (strcmp(e->filters[k], "!*") == 0)
				none = 1;
			else if (e->filters[k][0] != '!') {
				ssl_sni_add(o, e->filters[k], e);
				pos = 1;
			}
		}
		/* "!*": the certificate serves no name, only as the default */
		if (!pos && !none)
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

void ssl_ckch_free_crts(struct ssl_bind_opts *o)
{
	for (int i = 0; i < o->ncrts; i++)
		ssl_crt_ent_release(&o->crts[i]);
	free(o->crts);
	o->crts = NULL;
	o->ncrts = 0;
	o->def_ctx = NULL;
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

/* ---- runtime API: show / set / commit / abort / new / del ssl cert ---- */

/* The one transaction open at a time, as in HAProxy. */
static struct {
	struct ckch *ck;     /* certificate being replaced, NULL: none */
	struct ckch  next;   /* its new contents */
} ckch_tx;

void ssl_dump_time(struct dstr *out, const char *label, const ASN1_TIME *t)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;

	if (!b)
		return;
	if (t)
		ASN1_TIME_print(b, t);
	n = BIO_get_mem_data(b, &p);
	dstr_printf(out, "%s%.*s\n", label, (int)n, p);
	BIO_free(b);
}

static void cli_dump_name(struct dstr *out, const char *label, X509_NAME *name)
{
	char buf[1024];

	if (X509_NAME_oneline(name, buf, sizeof(buf)))
		dstr_printf(out, "%s: %s\n", label, buf);
}

void ckch_dump_x509(struct dstr *out, X509 *x, EVP_PKEY *key)
{
	const ASN1_INTEGER *ser = X509_get0_serialNumber(x);
	GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	EVP_PKEY *pk = key ? key : X509_get0_pubkey(x);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	dstr_printf(out, "Serial: ");
	for (int i = 0; ser && i < ASN1_STRING_length(ser); i++)
		dstr_printf(out, "%02X", ASN1_STRING_get0_data(ser)[i]);
	dstr_printf(out, "\n");
	ssl_dump_time(out, "notBefore: ", X509_get0_notBefore(x));
	ssl_dump_time(out, "notAfter: ", X509_get0_notAfter(x));
	dstr_printf(out, "Subject Alternative Name: ");
	for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);

		if (g->type == GEN_DNS)
			dstr_printf(out, "%sDNS:%.*s", i ? ", " : "",
				    ASN1_STRING_length(g->d.dNSName),
				    (const char *)ASN1_STRING_get0_data(g->d.dNSName));
	}
	dstr_printf(out, "\n");
	GENERAL_NAMES_free(names);
	if (pk)
		dstr_printf(out, "Algorithm: %s%d\n",
			    EVP_PKEY_base_id(pk) == EVP_PKEY_EC ? "EC" : "RSA", EVP_PKEY_get_bits(pk));
	if (X509_digest(x, EVP_sha1(), md, &mdlen)) {
		dstr_printf(out, "SHA1 FingerPrint: ");
		for (unsigned i = 0; i < mdlen; i++)
			dstr_printf(out, "%02X", md[i]);
		dstr_printf(out, "\n");
	}
	cli_dump_name(out, "Subject", X509_get_subject_name(x));
	cli_dump_name(out, "Issuer", X509_get_issuer_name(x));
}

/* "show ssl cert <file>": what HAProxy prints, from <ck>'s contents. */
static void cli_dump_ckch(struct dstr *out, const char *name, const struct ckch *ck, int used)
{
	dstr_printf(out, "Filename: %s\nStatus: %s\n", name,
		    !ck->cert ? "Empty" : used ? "Used" : "Unused");
	if (!ck->cert)
		return;
	ckch_dump_x509(out, ck->cert, ck->key);
	for (int i = 0; i < sk_X509_num(ck->chain); i++) {
		cli_dump_name(out, "Chain Subject", X509_get_subject_name(sk_X509_value(ck->chain, i)));
		cli_dump_name(out, "Chain Issuer", X509_get_issuer_name(sk_X509_value(ck->chain, i)));
	}
	if (ck->ocsp)
		dstr_printf(out, "OCSP Response Key: %s\n", ocsp_key_hex(ck));
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
		size_t l = strlen(name);
		char *base = l > 5 && !strcmp(name + l - 5, ".ocsp") ? strndup(name, l - 5) : NULL;

		/* "<file>.ocsp": the OCSP response of <file> */
		ck = base ? ckch_find(base) : NULL;
		free(base);
		if (ck && ck->ocsp) {
			ocsp_dump(&ctx->out, ck);
			return 0;
		}
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

/* new ssl cert <file>: an empty entry, to fill with set + commit, then use
 * with "add ssl crt-list". */
static int cli_new_ssl_cert(struct cli_ctx *ctx, int argc, char **argv)
{
	struct ckch *ck;

	if (argc < 4 || !*argv[3]) {
		dstr_printf(&ctx->out, "'new ssl cert' expects a filename\n");
		return -1;
	}
	if (ckch_find(argv[3])) {
		dstr_printf(&ctx->out, "Certificate '%s' already exists!\n", argv[3]);
		return -1;
	}
	ck = xcalloc(1, sizeof(*ck));
	ck->path = xstrdup(argv[3]);
	*ckch_tail = ck;
	ckch_tail = &ck->next;
	dstr_printf(&ctx->out, "New empty certificate store '%s'!\n", argv[3]);
	return 0;
}

/* del ssl cert <file>: only a certificate nothing uses nor names. */
static int cli_del_ssl_cert(struct cli_ctx *ctx, int argc, char **argv)
{
	struct ckch **pp, *ck = argc > 3 ? ckch_find(argv[3]) : NULL;

	if (!ck) {
		dstr_printf(&ctx->out, "Can't remove the certificate: certificate '%s' doesn't "
			    "exist!\n", argc > 3 ? argv[3] : "");
		return -1;
	}
	if (ckch_tx.ck == ck) {
		dstr_printf(&ctx->out, "Can't delete a certificate which is being modified by a "
			    "transaction!\n");
		return -1;
	}
	if (ck->nusers || ck->from_conf || crtlist_uses_ckch(ck)) {
		dstr_printf(&ctx->out, "Can't remove the certificate: certificate '%s' in use, "
			    "can't be deleted!\n", argv[3]);
		return -1;
	}
	for (pp = &ckch_head; *pp != ck; pp = &(*pp)->next)
		;
	*pp = ck->next;
	if (ckch_tail == &ck->next)
		ckch_tail = pp;
	ckch_clear(ck);
	free(ck->users);
	free(ck->path);
	free(ck);
	dstr_printf(&ctx->out, "Certificate '%s' deleted!\n", argv[3]);
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
	{ { "new", "ssl", "cert", NULL }, "new ssl cert <certfile>",
	  "create an empty certificate entry (then set, commit, add ssl crt-list)",
	  CLI_LVL_ADMIN, cli_new_ssl_cert },
	{ { "del", "ssl", "cert", NULL }, "del ssl cert <certfile>",
	  "delete a certificate nothing uses", CLI_LVL_ADMIN, cli_del_ssl_cert },
};

SLUICE_INIT(ckch_register)
{
	cli_register(ckch_cli_kws, ARRAY_SIZE(ckch_cli_kws));
}

#endif
