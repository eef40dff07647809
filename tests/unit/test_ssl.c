/* Unit tests for the TLS option parser and the certificate index
 * (src/net/ssl_sock.c, src/net/ssl_ckch.c): bind options, crt-list files cut
 * at every byte, SNI selection (exact, wildcard, negative filters, RSA and
 * ECDSA side by side, default). Certificates are made here, in memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#ifdef USE_OPENSSL
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <sluice/ssl.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "../../src/proxy/ssl_int.h"

static char dir[] = "/tmp/sluice-test-ssl.XXXXXX";

/* Writes a self-signed certificate for <cn> with subjectAltName <san> and
 * its key (EC when <ec>) to <dir>/<name>. */
static void make_cert(const char *name, const char *cn, const char *san, int ec)
{
	EVP_PKEY *key = ec ? EVP_EC_gen("P-256") : EVP_RSA_gen(2048);
	X509 *x = X509_new();
	X509_NAME *n = X509_get_subject_name(x);
	X509_EXTENSION *ext;
	char *path = str_fmt("%s/%s", dir, name);
	FILE *f;

	assert_non_null(key);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, n);
	if (san) {
		ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, san);
		X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	PEM_write_X509(f, x);
	PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(key);
	free(path);
}

static int setup(void **state)
{
	assert_non_null(mkdtemp(dir));
	make_cert("default.pem", "default.example", NULL, 0);
	make_cert("www-rsa.pem", "www.example.com", "DNS:www.example.com,DNS:alt.example.com", 0);
	make_cert("www-ec.pem", "www.example.com", "DNS:www.example.com", 1);
	make_cert("wild.pem", "*.wild.example", "DNS:*.wild.example", 0);
	return 0;
}

static int teardown(void **state)
{
	char *cmd = str_fmt("rm -rf %s", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static void opts_init(struct ssl_bind_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->verify = -1;
}

/* Parses one option line (words separated by spaces). Returns what
 * ssl_bind_parse_opt() returned for the first option; *err freed. */
static int parse(struct ssl_bind_opts *o, int crtlist, const char *line)
{
	char *copy = xstrdup(line), *w[8], *save = NULL, *err = NULL;
	int n = 0, r;

	for (char *t = strtok_r(copy, " ", &save); t && n < 8; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	r = ssl_bind_parse_opt(o, n, w, crtlist, &err);
	if (r < 0)
		assert_non_null(err);
	free(err);
	free(copy);
	return r;
}

static void test_bind_options(void **state)
{
	struct ssl_bind_opts o;

	opts_init(&o);
	assert_int_equal(parse(&o, 0, "alpn http/1.1,x"), 2);
	assert_int_equal(o.alpn_len, 11);
	assert_memory_equal(o.alpn, "\x08http/1.1\x01x", 11);
	/* a bind line speaks HTTP/2 (h2.c): h2 is offered */
	assert_int_equal(parse(&o, 0, "alpn h2,http/1.1"), 2);
	assert_int_equal(o.alpn_len, 12);
	assert_memory_equal(o.alpn, "\x02h2\x08http/1.1", 12);
	assert_int_equal(parse(&o, 0, "alpn"), -1);
	assert_int_equal(parse(&o, 0, "ssl-min-ver TLSv1.3"), 2);
	assert_int_equal(o.min_ver, TLS1_3_VERSION);
	assert_int_equal(parse(&o, 0, "ssl-max-ver SSLv2"), -1);
	assert_int_equal(parse(&o, 0, "no-tlsv11"), 1);
	assert_int_equal(o.no_ver, SSL_BO_NO_TLS11);
	assert_int_equal(parse(&o, 0, "verify optional"), 2);
	assert_int_equal(o.verify, SSL_VERIFY_PEER);
	assert_int_equal(parse(&o, 0, "verify maybe"), -1);
	assert_int_equal(parse(&o, 0, "ciphers ECDHE-RSA-AES128-GCM-SHA256"), 2);
	assert_string_equal(o.ciphers, "ECDHE-RSA-AES128-GCM-SHA256");
	assert_int_equal(parse(&o, 0, "strict-sni"), 1);
	assert_int_equal(o.strict_sni, 1);
	assert_int_equal(parse(&o, 0, "crt /nonexistent.pem"), -1);
	/* not TLS options: left to the caller */
	assert_int_equal(parse(&o, 0, "backlog 10"), 0);
	/* crt-list lines take no ssl, crt, crt-list, strict-sni */
	assert_int_equal(parse(&o, 1, "ssl"), 0);
	assert_int_equal(parse(&o, 1, "crt x.pem"), 0);
	assert_int_equal(parse(&o, 1, "strict-sni"), 0);
	assert_int_equal(parse(&o, 1, "ssl-min-ver TLSv1.2"), 2);
	/* SSLv3 is a version bound; force-* sets both bounds */
	assert_int_equal(parse(&o, 0, "ssl-min-ver SSLv3"), 2);
	assert_int_equal(o.min_ver, SSL3_VERSION);
	assert_int_equal(parse(&o, 0, "force-tlsv12"), 1);
	assert_int_equal(o.min_ver, TLS1_2_VERSION);
	assert_int_equal(o.max_ver, TLS1_2_VERSION);
	/* flags, and where they are accepted */
	assert_int_equal(parse(&o, 0, "no-tls-tickets"), 1);
	assert_int_equal(parse(&o, 0, "prefer-client-ciphers"), 1);
	assert_int_equal(o.flags, SSL_BO_F_NO_TICKETS | SSL_BO_F_PREFER_CLI);
	assert_int_equal(parse(&o, 1, "allow-0rtt"), 1);
	assert_int_equal(parse(&o, 1, "no-ca-names"), 1);
	assert_int_equal(parse(&o, 1, "prefer-client-ciphers"), 0);
	assert_int_equal(parse(&o, 1, "generate-certificates"), 0);
	assert_int_equal(parse(&o, 1, "force-tlsv13"), 0);
	assert_true(o.flags & SSL_BO_F_ALLOW_0RTT);
	/* verification errors to ignore */
	assert_int_equal(parse(&o, 0, "ca-ignore-err 2,10"), 2);
	assert_true(ssl_errset_has(&o.ca_ignore, 2) && ssl_errset_has(&o.ca_ignore, 10));
	assert_false(ssl_errset_has(&o.ca_ignore, 20));
	assert_int_equal(parse(&o, 0, "crt-ignore-err all"), 2);
	assert_true(ssl_errset_has(&o.crt_ignore, 127));
	assert_int_equal(parse(&o, 0, "crt-ignore-err 0"), -1);
	assert_int_equal(parse(&o, 0, "crt-ignore-err 10,x"), -1);
	assert_int_equal(parse(&o, 0, "ca-ignore-err"), -1);
	/* npn and alpn share the wire format */
	assert_int_equal(parse(&o, 0, "npn h2,http/1.1"), 2);
	assert_int_equal(o.npn_len, 12);
	assert_memory_equal(o.npn, "\x02h2\x08http/1.1", 12);
	assert_int_equal(parse(&o, 0, "ecdhe secp384r1"), 2);
	assert_string_equal(o.ecdhe, "secp384r1");
	ssl_opts_clear(&o);
}

static const char list_text[] =
	"# comment\n"
	"\n"
	"%1$s/default.pem\n"
	"%1$s/www-rsa.pem [ssl-min-ver TLSv1.3 alpn http/1.1] www.example.com alias.example\n"
	"%1$s/www-ec.pem\n"
	"%1$s/wild.pem [verify none] *.wild.example !secret.wild.example\n";

/* Loads crt-list text <text> (its first <len> bytes). Returns the result. */
static int load_list(struct ssl_bind_opts *o, const char *text, size_t len, char **err)
{
	char *path = str_fmt("%s/list.txt", dir);
	FILE *f = fopen(path, "w");
	int r;

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	*err = NULL;
	crtlist_forget_all();   /* the same file name, new contents */
	r = ssl_ckch_load_crt_list(o, path, err);
	free(path);
	return r;
}

static void test_crt_list_cut(void **state)
{
	char *text = str_fmt(list_text, dir);
	size_t len = strlen(text);

	for (size_t cut = 0; cut <= len; cut++) {
		struct ssl_bind_opts o;
		char *err;
		int r;

		opts_init(&o);
		r = load_list(&o, text, cut, &err);
		if (r == -1) {
			/* a cut path or option: the error names the file and line */
			assert_non_null(err);
			assert_non_null(strstr(err, "list.txt"));
			assert_non_null(strstr(err, "line"));
		} else {
			assert_int_equal(r, 0);
			assert_null(err);
			assert_true(o.ncrts <= 4);
		}
		free(err);
		ssl_opts_clear(&o);
	}
	free(text);
}

static void test_crt_list_content(void **state)
{
	char *text = str_fmt(list_text, dir), *err;
	struct ssl_bind_opts o;

	opts_init(&o);
	assert_int_equal(load_list(&o, text, strlen(text), &err), 0);
	assert_int_equal(o.ncrts, 4);
	assert_int_equal(o.crts[0].nfilters, 0);
	assert_null(o.crts[0].lo);
	assert_int_equal(o.crts[1].nfilters, 2);
	assert_string_equal(o.crts[1].filters[1], "alias.example");
	assert_non_null(o.crts[1].lo);
	assert_int_equal(o.crts[1].lo->min_ver, TLS1_3_VERSION);
	assert_int_equal(o.crts[1].lo->alpn_len, 9);
	assert_int_equal(o.crts[3].lo->verify, SSL_VERIFY_NONE);
	assert_string_equal(o.crts[3].filters[1], "!secret.wild.example");
	/* unknown option, missing bracket */
	ssl_opts_clear(&o);
	opts_init(&o);
	assert_int_equal(load_list(&o, "x.pem [bogus]\n", 14, &err), -1);
	assert_non_null(strstr(err, "line 1"));
	free(err);
	assert_int_equal(load_list(&o, "x.pem [alpn http/1.1\n", 21, &err), -1);
	assert_non_null(strstr(err, "missing ']'"));
	free(err);
	ssl_opts_clear(&o);
	free(text);
}

static void test_sni_pick(void **state)
{
	char *text = str_fmt(list_text, dir), *err;
	struct ssl_bind_opts o;
	SSL_CTX *c[4];

	opts_init(&o);
	assert_int_equal(load_list(&o, text, strlen(text), &err), 0);
	/* contexts stand for the certificates: the index only compares them */
	for (int i = 0; i < 4; i++)
		o.crts[i].ctx = c[i] = SSL_CTX_new(TLS_server_method());
	ssl_ckch_index(&o);
	assert_ptr_equal(ssl_ckch_default(&o), c[0]);
	/* exact names: the crt-list filters replace the certificate's names */
	assert_ptr_equal(ssl_ckch_pick(&o, "alias.example", 0), c[1]);
	assert_null(ssl_ckch_pick(&o, "alt.example.com", 0));
	assert_ptr_equal(ssl_ckch_pick(&o, "WWW.Example.COM", 0), c[1]);
	/* RSA and ECDSA for one name: what the client supports */
	assert_ptr_equal(ssl_ckch_pick(&o, "www.example.com", 1), c[2]);
	/* wildcard, one level, negative filter */
	assert_ptr_equal(ssl_ckch_pick(&o, "a.wild.example", 1), c[3]);
	assert_null(ssl_ckch_pick(&o, "a.b.wild.example", 1));
	assert_null(ssl_ckch_pick(&o, "wild.example", 1));
	assert_null(ssl_ckch_pick(&o, "secret.wild.example", 1));
	assert_null(ssl_ckch_pick(&o, NULL, 1));
	/* the certificate's own names (CN) when no filter is given */
	assert_ptr_equal(ssl_ckch_pick(&o, "default.example", 0), c[0]);
	ssl_opts_clear(&o);   /* frees the contexts */
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_options),
		cmocka_unit_test(test_crt_list_cut),
		cmocka_unit_test(test_crt_list_content),
		cmocka_unit_test(test_sni_pick),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

#else

static void test_skipped(void **state)
{
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_skipped) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
