/* The global-section TLS keywords that are not defaults of bind or server
 * lines: file locations (ca-base, crt-base, issuers-chain-path, extra files),
 * Diffie-Hellman parameters, OpenSSL providers, the process-wide TLS limits
 * (maxsslconn, maxsslrate) and the tune.ssl.* knobs; "show ssl providers". */
#include <sluice/ssl_cfg.h>

#ifdef USE_OPENSSL
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/x509v3.h>

#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/listener.h>
#include <sluice/ssl.h>
#include <sluice/str.h>
#include <sluice/units.h>

#include "ssl_int.h"

struct ssl_global sslg = {
	.extra_files = SSL_XF_ALL,
	.cachesize = -1,
	.ctx_cache_size = 1000,
	.srv_verify = SSL_VERIFY_PEER,
};

char *ssl_path_resolve(const char *path, int crt)
{
	const char *base = crt ? sslg.crt_base : sslg.ca_base;

	if (!base || path[0] == '/')
		return xstrdup(path);
	return str_fmt("%s/%s", base, path);
}

/* ---- issuers-chain-path ---- */

/* One file of issuers-chain-path: a chain whose first certificate issues
 * the leaf certificates that lack theirs. */
struct ssl_issuers {
	struct ssl_issuers *next;
	STACK_OF(X509)     *chain;
};

static struct ssl_issuers *ssl_issuers;

STACK_OF(X509) *ssl_issuers_chain_for(X509 *leaf)
{
	for (struct ssl_issuers *i = ssl_issuers; i; i = i->next)
		if (X509_check_issued(sk_X509_value(i->chain, 0), leaf) == X509_V_OK)
			return i->chain;
	return NULL;
}

static int ssl_issuers_load(const char *dir, char **err)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), ret = 0;

	if (n < 0) {
		*err = str_fmt("cannot read directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char *file = str_fmt("%s/%s", dir, names[i]->d_name);
		BIO *b = names[i]->d_name[0] == '.' ? NULL : BIO_new_file(file, "r");
		STACK_OF(X509) *chain = sk_X509_new_null();
		X509 *x;

		while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)))
			sk_X509_push(chain, x);
		ERR_clear_error();
		if (sk_X509_num(chain) > 0) {
			struct ssl_issuers *is = xcalloc(1, sizeof(*is));

			is->chain = chain;
			is->next = ssl_issuers;
			ssl_issuers = is;
		} else {
			sk_X509_free(chain);
			if (b && !ret) {
				*err = str_fmt("'%s': no certificate found", file);
				ret = -1;
			}
		}
		BIO_free(b);
		free(file);
		free(names[i]);
	}
	free(names);
	return ret;
}

/* ---- Diffie-Hellman ---- */

EVP_PKEY *ssl_dh_params(int bits)
{
	static EVP_PKEY *cache[5];
	static const int sizes[] = { 2048, 3072, 4096, 6144, 8192 };
	static const int nids[] = { NID_ffdhe2048, NID_ffdhe3072, NID_ffdhe4096, NID_ffdhe6144,
				    NID_ffdhe8192 };
	int k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		if (bits >= sizes[i])
			k = (int)i;
	if (!cache[k]) {
		EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);

		if (pc && EVP_PKEY_paramgen_init(pc) == 1 && EVP_PKEY_CTX_set_dh_nid(pc, nids[k]) == 1)
			EVP_PKEY_paramgen(pc, &cache[k]);
		EVP_PKEY_CTX_free(pc);
		ERR_clear_error();
	}
	return cache[k];
}

/* ---- keywords ---- */

static int kw_one_arg(struct cfg_ctx *ctx, int argc, const char *what)
{
	if (argc != 1) {
		cfg_alert(ctx, "expects %s", what);
		return -1;
	}
	return 0;
}

/* ca-base, crt-base (row value 1): a directory. */
static int kw_base(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char **dst = ctx->kw_row->arg ? &sslg.crt_base : &sslg.ca_base;

	if (kw_one_arg(ctx, argc, "a directory"))
		return -1;
	if (*dst) {
		cfg_alert(ctx, "already specified (as '%s')", *dst);
		return -1;
	}
	*dst = xstrdup(argv[0]);
	return 0;
}

static int kw_issuers_path(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *err = NULL;

	if (kw_one_arg(ctx, argc, "a directory"))
		return -1;
	if (ssl_issuers_load(argv[0], &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		return -1;
	}
	free(sslg.issuers_path);
	sslg.issuers_path = xstrdup(argv[0]);
	return 0;
}

static int kw_dh_param_file(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	BIO *b;

	if (kw_one_arg(ctx, argc, "a file"))
		return -1;
	b = BIO_new_file(argv[0], "r");
	if (!b) {
		ERR_clear_error();
		cfg_alert(ctx, "cannot read '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	EVP_PKEY_free(sslg.dh_file);
	sslg.dh_file = PEM_read_bio_Parameters(b, NULL);
	BIO_free(b);
	ERR_clear_error();
	if (!sslg.dh_file || EVP_PKEY_base_id(sslg.dh_file) != EVP_PKEY_DH) {
		cfg_alert(ctx, "'%s' holds no DH parameters", argv[0]);
		EVP_PKEY_free(sslg.dh_file);
		sslg.dh_file = NULL;
		return -1;
	}
	return 0;
}

/* ssl-load-extra-files <none|all|bundle|sctl|ocsp|issuer|key>... */
static int kw_extra_files(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static const struct { const char *name; unsigned bits; } words[] = {
		{ "none", 0 }, { "all", SSL_XF_ALL }, { "bundle", SSL_XF_BUNDLE },
		{ "sctl", SSL_XF_SCTL }, { "ocsp", SSL_XF_OCSP }, { "issuer", SSL_XF_ISSUER },
		{ "key", SSL_XF_KEY },
	};
	unsigned v = 0;

	if (!argc) {
		cfg_alert(ctx, "expects one or more of none, all, bundle, sctl, ocsp, issuer, key");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		size_t k;

		for (k = 0; k < ARRAY_SIZE(words); k++)
			if (strcmp(argv[i], words[k].name) == 0)
				break;
		if (k == ARRAY_SIZE(words)) {
			cfg_alert(ctx, "unknown argument '%s' (expected none, all, bundle, sctl, "
				  "ocsp, issuer or key)", argv[i]);
			return -1;
		}
		if (!words[k].bits && argc > 1) {
			cfg_alert(ctx, "'none' cannot be combined with other arguments");
			return -1;
		}
		v |= words[k].bits;
	}
	sslg.extra_files = v;
	return 0;
}

/* The providers ssl-provider loaded, unloaded at exit (before OpenSSL's own
 * clean-up, which does not unload what the application loaded). */
static struct {
	OSSL_PROVIDER **p;
	int             n;
} ssl_providers;

static void ssl_providers_unload(void)
{
	for (int i = 0; i < ssl_providers.n; i++)
		OSSL_PROVIDER_unload(ssl_providers.p[i]);
	free(ssl_providers.p);
	ssl_providers.p = NULL;
	ssl_providers.n = 0;
}

/* ssl-provider <name> */
static int kw_provider(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	OSSL_PROVIDER *prov;

	if (kw_one_arg(ctx, argc, "a provider name"))
		return -1;
	if ((prov = OSSL_PROVIDER_load(NULL, argv[0]))) {
		if (!ssl_providers.n)
			atexit(ssl_providers_unload);
		ssl_providers.p = xrealloc(ssl_providers.p,
					   sizeof(*ssl_providers.p) * (size_t)(ssl_providers.n + 1));
		ssl_providers.p[ssl_providers.n++] = prov;
	} else {
		unsigned long e = ERR_peek_last_error();

		ERR_clear_error();
		cfg_alert(ctx, "OpenSSL cannot load provider '%s'%s%s", argv[0],
			  e ? ": " : "", e ? ERR_reason_error_string(e) : "");
		return -1;
	}
	return 0;
}

static int kw_provider_path(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (kw_one_arg(ctx, argc, "a directory"))
		return -1;
	if (OSSL_PROVIDER_set_default_search_path(NULL, argv[0]) != 1) {
		ERR_clear_error();
		cfg_alert(ctx, "OpenSSL refused the provider search path '%s'", argv[0]);
		return -1;
	}
	return 0;
}

static int kw_propquery(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (kw_one_arg(ctx, argc, "a property query"))
		return -1;
	if (EVP_set_default_properties(NULL, argv[0]) != 1) {
		ERR_clear_error();
		cfg_alert(ctx, "OpenSSL refused the property query '%s'", argv[0]);
		return -1;
	}
	return 0;
}

/* maxsslconn, maxsslrate (row value 1), tune.ssl.* integers: a value in
 * the row's [min, max] stored where the row's arg points. */
static int kw_ssl_int(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const struct cfg_kw *kw = ctx->kw_row;
	const char *e;
	long v;

	if (kw_one_arg(ctx, argc, "a number"))
		return -1;
	if (parse_int(argv[0], kw->min, kw->max, &v, &e) == -1) {
		cfg_alert(ctx, "%s (%ld..%ld), got '%s'", e, kw->min, kw->max, argv[0]);
		return -1;
	}
	*(int *)kw->arg = (int)v;
	return 0;
}

static int kw_tune_ssl_lifetime(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *e;

	if (kw_one_arg(ctx, argc, "a time"))
		return -1;
	if (parse_time_ms(argv[0], 1000, &sslg.lifetime_ms, &e) == -1) {
		cfg_alert(ctx, "expects a time (default unit: seconds): %s", e);
		return -1;
	}
	return 0;
}

static int kw_tune_ssl_cachesize(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	const char *e;
	long v;

	if (kw_one_arg(ctx, argc, "a number"))
		return -1;
	if (parse_int(argv[0], 0, 0x7fffffff, &v, &e) == -1) {
		cfg_alert(ctx, "expects a number of sessions (0: no cache)");
		return -1;
	}
	sslg.cachesize = v;
	return 0;
}

static int kw_tune_ssl_keylog(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc != 1 || (strcmp(argv[0], "on") != 0 && strcmp(argv[0], "off") != 0)) {
		cfg_alert(ctx, "expects 'on' or 'off'");
		return -1;
	}
	sslg.keylog = strcmp(argv[0], "on") == 0;
	return 0;
}

/* ssl-engine: refused; there is no engine support in sluice. */
static int kw_ssl_engine(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	cfg_alert(ctx, "not supported by sluice: OpenSSL engines are deprecated in OpenSSL 3 and "
		  "sluice loads none (use 'ssl-provider' to load an OpenSSL 3 provider instead)");
	return -1;
}

/* ssl-mode-async: accepted, with a warning: it only matters with
 * asynchronous engines, which sluice does not load. */
static int kw_ssl_mode_async(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	cfg_warn(ctx, "has no effect in sluice: asynchronous TLS needs an asynchronous OpenSSL "
		 "engine, and sluice loads no engine");
	return 0;
}

/* ssl-load-extra-del-ext, ssl-skip-self-issued-ca, tune.ssl.force-private-cache:
 * the int the row's arg points to set. */
static int kw_ssl_flag(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	if (argc) {
		cfg_alert(ctx, "takes no argument");
		return -1;
	}
	*(int *)ctx->kw_row->arg = 1;
	return 0;
}

static int ssl_force_private_cache;   /* the only kind sluice has: no effect */

static struct cfg_kw ssl_global_kws[] = {
	{ "ca-base", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_base, .usage = "<dir>", .arg = 0 },
	{ "crt-base", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_base, .usage = "<dir>", .arg = 1 },
	{ "issuers-chain-path", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_issuers_path, .usage = "<dir>" },
	{ "ssl-dh-param-file", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_dh_param_file,
	  .usage = "<file>" },
	{ "ssl-load-extra-files", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_extra_files,
	  .usage = "<none|all|bundle|sctl|ocsp|issuer|key>..." },
	{ "ssl-load-extra-del-ext", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_flag,
	  .arg = (intptr_t)&sslg.extra_del_ext },
	{ "ssl-skip-self-issued-ca", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_flag,
	  .arg = (intptr_t)&sslg.skip_self_issued },
	{ "ssl-provider", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_provider, .usage = "<name>" },
	{ "ssl-provider-path", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_provider_path,
	  .usage = "<path>" },
	{ "ssl-propquery", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_propquery, .usage = "<query>" },
	{ "ssl-engine", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_engine, .usage = "<name>" },
	{ "ssl-mode-async", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_mode_async, .arg = 0 },
	{ "maxsslconn", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int, .min = 0, .max = 0x7fffffff,
	  .usage = "<number>", .arg = (intptr_t)&ssl_counters.maxsslconn },
	{ "maxsslrate", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int, .min = 0, .max = 0x7fffffff,
	  .usage = "<number>", .arg = (intptr_t)&ssl_counters.maxsslrate },
	{ "tune.ssl.cachesize", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_tune_ssl_cachesize,
	  .usage = "<number>" },
	{ "tune.ssl.lifetime", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_tune_ssl_lifetime,
	  .usage = "<time>" },
	{ "tune.ssl.default-dh-param", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int, .min = 1024,
	  .max = 16384, .usage = "<bits>", .arg = (intptr_t)&sslg.default_dh },
	{ "tune.ssl.maxrecord", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int, .min = 0,
	  .max = 16384, .usage = "<bytes>", .arg = (intptr_t)&ssl_counters.maxrecord },
	{ "tune.ssl.hard-maxrecord", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int, .min = 0,
	  .max = 16384, .usage = "<bytes>", .arg = (intptr_t)&ssl_counters.hard_maxrecord },
	{ "tune.ssl.capture-buffer-size", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int, .min = 0,
	  .max = 65535, .usage = "<bytes>", .arg = (intptr_t)&sslg.capture_size },
	{ "tune.ssl.capture-cipherlist-size", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int,
	  .flags = CFG_KW_F_DEPREC, .min = 0, .max = 65535, .usage = "<bytes>",
	  .hint = "tune.ssl.capture-buffer-size", .arg = (intptr_t)&sslg.capture_size },
	{ "tune.ssl.keylog", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_tune_ssl_keylog,
	  .usage = "on|off" },
	{ "tune.ssl.ssl-ctx-cache-size", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_int, .min = 0,
	  .max = 0x7fffffff, .usage = "<number>", .arg = (intptr_t)&sslg.ctx_cache_size },
	{ "tune.ssl.force-private-cache", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_ssl_flag,
	  .arg = (intptr_t)&ssl_force_private_cache },
};

/* ---- show ssl providers ---- */

static int ssl_provider_name(OSSL_PROVIDER *p, void *arg)
{
	dstr_printf(arg, "\t- %s\n", OSSL_PROVIDER_get0_name(p));
	return 1;
}

static int cli_show_ssl_providers(struct cli_ctx *ctx, int argc, char **argv)
{
	dstr_printf(&ctx->out, "Loaded providers : \n");
	OSSL_PROVIDER_do_all(NULL, ssl_provider_name, &ctx->out);
	return 0;
}

static struct cli_kw ssl_global_cli_kws[] = {
	{ { "show", "ssl", "providers", NULL }, "show ssl providers",
	  "list the OpenSSL providers loaded", CLI_LVL_USER, cli_show_ssl_providers },
};

SLUICE_INIT(ssl_global_register)
{
	cfg_register(ssl_global_kws, ARRAY_SIZE(ssl_global_kws));
	cli_register(ssl_global_cli_kws, ARRAY_SIZE(ssl_global_cli_kws));
}

#endif
