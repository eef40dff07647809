/* The TLS options of bind lines (also those of crt-list lines) and of server
 * lines: one table of rows each, registered at start-up, and the
 * ssl-default-bind-* / ssl-default-server-* global keywords that set what
 * those lines start from. Contexts are built from these by ssl_cfg.c. */
#include <sluice/ssl_cfg.h>

#ifdef USE_OPENSSL
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/listener.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/str.h>

#include "ssl_int.h"
#include "ssl_srv.h"

struct ssl_bind_opts ssl_bind_def = { .verify = -1 };

/* ---- values ---- */

static const struct {
	const char *name;
	int         ver;
	unsigned    no;
} ssl_versions[] = {
	{ "SSLv3", SSL3_VERSION, SSL_BO_NO_SSLV3 },
	{ "TLSv1.0", TLS1_VERSION, SSL_BO_NO_TLS10 },
	{ "TLSv1.1", TLS1_1_VERSION, SSL_BO_NO_TLS11 },
	{ "TLSv1.2", TLS1_2_VERSION, SSL_BO_NO_TLS12 },
	{ "TLSv1.3", TLS1_3_VERSION, SSL_BO_NO_TLS13 },
};

int ssl_parse_ver(const char *kw, const char *v, int *out, char **err)
{
	for (size_t i = 0; i < ARRAY_SIZE(ssl_versions); i++)
		if (v && strcmp(v, ssl_versions[i].name) == 0) {
			*out = ssl_versions[i].ver;
			return 0;
		}
	*err = str_fmt("'%s' expects one of 'SSLv3', 'TLSv1.0', 'TLSv1.1', 'TLSv1.2' or "
		       "'TLSv1.3'", kw);
	return -1;
}

/* Whether this OpenSSL can speak version <v> at all (Debian's has no SSLv3). */
static int ssl_ver_built(int v)
{
#ifdef OPENSSL_NO_SSL3_METHOD
	if (v == SSL3_VERSION)
		return 0;
#endif
#ifdef OPENSSL_NO_SSL3
	if (v == SSL3_VERSION)
		return 0;
#endif
	return 1;
}

int ssl_ctx_versions(SSL_CTX *ctx, int min, int max, unsigned no, char **err)
{
	int lo = 0, hi = 0;

	if (!min)
		min = TLS1_2_VERSION;
	for (size_t i = 0; i < ARRAY_SIZE(ssl_versions); i++) {
		int v = ssl_versions[i].ver;

		if (v < min || (max && v > max) || (no & ssl_versions[i].no) || !ssl_ver_built(v))
			continue;
		if (!lo)
			lo = v;
		hi = v;
	}
	if (!lo) {
		*err = str_fmt("all SSL/TLS versions are disabled: none is left between the minimum "
			       "and the maximum%s", min == SSL3_VERSION || max == SSL3_VERSION ?
			       " (SSLv3 is not built into the OpenSSL library sluice uses)" : "");
		return -1;
	}
	SSL_CTX_set_min_proto_version(ctx, lo);
	SSL_CTX_set_max_proto_version(ctx, hi);
	return 0;
}

int ssl_parse_protos(const char *kw, const char *v, unsigned char **out, size_t *outlen,
                     char **err)
{
	size_t len = v ? strlen(v) : 0, o = 0;
	unsigned char *w;
	char *dup, *save = NULL;

	if (!len) {
		*err = str_fmt("'%s' expects a comma-separated list of protocols", kw);
		return -1;
	}
	w = xcalloc(1, len + 2);
	dup = xstrdup(v);
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(t);

		if (l > 255) {
			*err = str_fmt("'%s': protocol name too long", kw);
			free(dup);
			free(w);
			return -1;
		}
		w[o++] = (unsigned char)l;
		memcpy(w + o, t, l);
		o += l;
	}
	free(dup);
	free(*out);
	*out = w;
	*outlen = o;
	return 0;
}

int ssl_npn_supported(void)
{
#ifdef OPENSSL_NO_NEXTPROTONEG
	return 0;
#else
	return 1;
#endif
}

static int ssl_parse_verify(const char *v, int srv, int *out, char **err)
{
	if (v && strcmp(v, "none") == 0)
		*out = SSL_VERIFY_NONE;
	else if (v && !srv && strcmp(v, "optional") == 0)
		*out = SSL_VERIFY_PEER;
	else if (v && strcmp(v, "required") == 0)
		*out = SSL_VERIFY_PEER | (srv ? 0 : SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
	else {
		*err = str_fmt(srv ? "'verify' expects 'none' or 'required'"
				   : "'verify' expects 'none', 'optional' or 'required'");
		return -1;
	}
	return 0;
}

static int ssl_need_arg(int argc, char **argv, const char *what, char **err)
{
	if (argc < 2 || !*argv[1]) {
		*err = str_fmt("'%s' expects %s", argv[0], what);
		return -1;
	}
	return 0;
}

static void ssl_set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* "all" or "10,20,...": the X509 error codes of ca-ignore-err / crt-ignore-err. */
static int ssl_parse_errset(const char *kw, const char *v, struct ssl_errset *s, char **err)
{
	char *dup, *save = NULL;

	memset(s, 0, sizeof(*s));
	if (strcmp(v, "all") == 0) {
		s->bits[0] = s->bits[1] = ~0ULL;
		return 0;
	}
	dup = xstrdup(v);
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long id = strtol(t, &end, 10);

		if (*end || end == t || id < 1 || id > 127) {
			*err = str_fmt("'%s': ID '%s' is not a verification error number (1..127) "
				       "in '%s' (or use 'all')", kw, t, v);
			free(dup);
			return -1;
		}
		s->bits[id >> 6] |= 1ULL << (id & 63);
	}
	free(dup);
	return 0;
}

/* ---- the TLS options of a bind line, also those of a crt-list line ---- */

/* Where a row is accepted besides bind lines. */
#define SSL_OPT_CRTLIST  0x01   /* on crt-list lines */
#define SSL_OPT_DEF_BIND 0x02   /* in ssl-default-bind-options */
#define SSL_OPT_DEF_SRV  0x04   /* in ssl-default-server-options */

/* What a string row's value is: a path resolved against ca-base / crt-base. */
#define SSL_STR_PLAIN 0
#define SSL_STR_CA    1

/* One TLS option: its parser, and what the parser needs of the row: the
 * field it sets (.off into struct ssl_bind_opts), its value (.arg) and what
 * its argument is (for "expects" messages). Parsers return the words used,
 * or -1 with <err> allocated. */
struct ssl_opt {
	const char *name;
	int       (*parse)(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
	                   char **argv, char **err);
	size_t      off;
	unsigned    arg;
	const char *what;
	unsigned    where;       /* SSL_OPT_* */
};

#define SSL_BO_OFF(field) .off = offsetof(struct ssl_bind_opts, field)
#define SSL_BO_AT(o, opt, type) ((type *)((char *)(o) + (opt)->off))

/* "ssl", "strict-sni": the int at .off set. */
static int ssl_opt_on(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                      char **err)
{
	*SSL_BO_AT(o, opt, int) = 1;
	return 1;
}

/* "no-tlsv1x", "no-tls-tickets"...: bit .arg added to the unsigned at .off. */
static int ssl_opt_bit(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                       char **err)
{
	*SSL_BO_AT(o, opt, unsigned) |= opt->arg;
	return 1;
}

/* "ciphers", "ca-file"...: the string at .off replaced (.arg: SSL_STR_CA for
 * a path under ca-base; "@system-ca" is kept as it is). */
static int ssl_opt_str(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                       char **err)
{
	char **dst = SSL_BO_AT(o, opt, char *);

	if (ssl_need_arg(argc, argv, opt->what, err))
		return -1;
	free(*dst);
	*dst = opt->arg == SSL_STR_CA && strcmp(argv[1], "@system-ca") != 0 ?
	       ssl_path_resolve(argv[1], 0) : xstrdup(argv[1]);
	return 2;
}

/* "ssl-min-ver", "ssl-max-ver": the version in the int at .off. */
static int ssl_opt_ver(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc, char **argv,
                       char **err)
{
	return ssl_parse_ver(opt->name, argc > 1 ? argv[1] : NULL, SSL_BO_AT(o, opt, int), err) ?
	       -1 : 2;
}

/* "force-tlsv12"...: that version only (.arg indexes ssl_versions[]). */
static int ssl_opt_force(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                         char **argv, char **err)
{
	o->min_ver = o->max_ver = ssl_versions[opt->arg].ver;
	return 1;
}

/* "alpn", "npn": a protocol list in wire format at .off (its length follows it). */
static int ssl_opt_protos(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                          char **argv, char **err)
{
	unsigned char **p = SSL_BO_AT(o, opt, unsigned char *);
	size_t *len = opt->arg ? &o->npn_len : &o->alpn_len;

	if (opt->arg && !ssl_npn_supported()) {
		*err = str_fmt("'npn' is not supported: the OpenSSL library sluice uses is built "
			       "without NPN (use 'alpn')");
		return -1;
	}
	return ssl_need_arg(argc, argv, opt->what, err) ||
	       ssl_parse_protos(opt->name, argv[1], p, len, err) ? -1 : 2;
}

static int ssl_opt_verify(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                          char **argv, char **err)
{
	return ssl_parse_verify(argc > 1 ? argv[1] : NULL, 0, &o->verify, err) ? -1 : 2;
}

static int ssl_opt_errset(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                          char **argv, char **err)
{
	return ssl_need_arg(argc, argv, opt->what, err) ||
	       ssl_parse_errset(opt->name, argv[1], SSL_BO_AT(o, opt, struct ssl_errset), err) ?
	       -1 : 2;
}

static int ssl_opt_crt(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                       char **argv, char **err)
{
	char *path;
	int r;

	if (ssl_need_arg(argc, argv, opt->what, err))
		return -1;
	path = ssl_path_resolve(argv[1], 1);
	r = ssl_ckch_load_crt(o, path, err);
	free(path);
	return r ? -1 : 2;
}

static int ssl_opt_crt_list(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                            char **argv, char **err)
{
	return ssl_need_arg(argc, argv, opt->what, err) ||
	       ssl_ckch_load_crt_list(o, argv[1], err) ? -1 : 2;
}

static int ssl_opt_ticket_keys(struct ssl_bind_opts *o, const struct ssl_opt *opt, int argc,
                               char **argv, char **err)
{
	if (ssl_need_arg(argc, argv, opt->what, err))
		return -1;
	o->tkeys = tls_keys_load(argv[1], err);
	return o->tkeys ? 2 : -1;
}

/* In this order the bind rows are registered (suggestions see them so). */
static const struct ssl_opt ssl_opts[] = {
	{ "ssl", ssl_opt_on, SSL_BO_OFF(enabled) },
	{ "crt", ssl_opt_crt, .what = "a certificate file or directory" },
	{ "crt-list", ssl_opt_crt_list, .what = "a file" },
	{ "alpn", ssl_opt_protos, SSL_BO_OFF(alpn), 0, "a protocol list", SSL_OPT_CRTLIST },
	{ "npn", ssl_opt_protos, SSL_BO_OFF(npn), 1, "a protocol list", SSL_OPT_CRTLIST },
	{ "ciphers", ssl_opt_str, SSL_BO_OFF(ciphers), 0, "a list", SSL_OPT_CRTLIST },
	{ "ciphersuites", ssl_opt_str, SSL_BO_OFF(ciphersuites), 0, "a list", SSL_OPT_CRTLIST },
	{ "curves", ssl_opt_str, SSL_BO_OFF(curves), 0, "a list", SSL_OPT_CRTLIST },
	{ "ecdhe", ssl_opt_str, SSL_BO_OFF(ecdhe), 0, "a curve name", SSL_OPT_CRTLIST },
	{ "sigalgs", ssl_opt_str, SSL_BO_OFF(sigalgs), 0, "a list", SSL_OPT_CRTLIST },
	{ "client-sigalgs", ssl_opt_str, SSL_BO_OFF(client_sigalgs), 0, "a list",
	  SSL_OPT_CRTLIST },
	{ "ssl-min-ver", ssl_opt_ver, SSL_BO_OFF(min_ver),
	  .where = SSL_OPT_CRTLIST | SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "ssl-max-ver", ssl_opt_ver, SSL_BO_OFF(max_ver),
	  .where = SSL_OPT_CRTLIST | SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "no-sslv3", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_SSLV3,
	  .where = SSL_OPT_CRTLIST | SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "no-tlsv10", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS10,
	  .where = SSL_OPT_CRTLIST | SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "no-tlsv11", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS11,
	  .where = SSL_OPT_CRTLIST | SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "no-tlsv12", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS12,
	  .where = SSL_OPT_CRTLIST | SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "no-tlsv13", ssl_opt_bit, SSL_BO_OFF(no_ver), SSL_BO_NO_TLS13,
	  .where = SSL_OPT_CRTLIST | SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "force-sslv3", ssl_opt_force, .arg = 0, .where = SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "force-tlsv10", ssl_opt_force, .arg = 1, .where = SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "force-tlsv11", ssl_opt_force, .arg = 2, .where = SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "force-tlsv12", ssl_opt_force, .arg = 3, .where = SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "force-tlsv13", ssl_opt_force, .arg = 4, .where = SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "no-tls-tickets", ssl_opt_bit, SSL_BO_OFF(flags), SSL_BO_F_NO_TICKETS,
	  .where = SSL_OPT_DEF_BIND | SSL_OPT_DEF_SRV },
	{ "prefer-client-ciphers", ssl_opt_bit, SSL_BO_OFF(flags), SSL_BO_F_PREFER_CLI,
	  .where = SSL_OPT_DEF_BIND },
	{ "allow-0rtt", ssl_opt_bit, SSL_BO_OFF(flags), SSL_BO_F_ALLOW_0RTT,
	  .where = SSL_OPT_CRTLIST },
	{ "ca-file", ssl_opt_str, SSL_BO_OFF(ca_file), SSL_STR_CA, "a file", SSL_OPT_CRTLIST },
	{ "ca-verify-file", ssl_opt_str, SSL_BO_OFF(ca_verify_file), SSL_STR_CA, "a file",
	  SSL_OPT_CRTLIST },
	{ "crl-file", ssl_opt_str, SSL_BO_OFF(crl_file), SSL_STR_CA, "a file", SSL_OPT_CRTLIST },
	{ "no-ca-names", ssl_opt_bit, SSL_BO_OFF(flags), SSL_BO_F_NO_CA_NAMES,
	  .where = SSL_OPT_CRTLIST },
	{ "verify", ssl_opt_verify, .what = "'none', 'optional' or 'required'",
	  .where = SSL_OPT_CRTLIST },
	{ "ca-ignore-err", ssl_opt_errset, SSL_BO_OFF(ca_ignore), .what = "'all' or error IDs" },
	{ "crt-ignore-err", ssl_opt_errset, SSL_BO_OFF(crt_ignore), .what = "'all' or error IDs" },
	{ "strict-sni", ssl_opt_on, SSL_BO_OFF(strict_sni) },
	{ "tls-ticket-keys", ssl_opt_ticket_keys, .what = "a file" },
	{ "generate-certificates", ssl_opt_bit, SSL_BO_OFF(flags), SSL_BO_F_GEN_CERTS },
	{ "ca-sign-file", ssl_opt_str, SSL_BO_OFF(ca_sign_file), SSL_STR_CA, "a file" },
	{ "ca-sign-pass", ssl_opt_str, SSL_BO_OFF(ca_sign_pass), 0, "a passphrase" },
};

int ssl_bind_parse_opt(struct ssl_bind_opts *o, int argc, char **argv, int crtlist, char **err)
{
	/* A crt-list line is text: its option words are looked up here. */
	for (size_t i = 0; i < ARRAY_SIZE(ssl_opts); i++)
		if (strcmp(argv[0], ssl_opts[i].name) == 0)
			return crtlist && !(ssl_opts[i].where & SSL_OPT_CRTLIST) ? 0 :
			       ssl_opts[i].parse(o, &ssl_opts[i], argc, argv, err);
	return 0;
}

/* Every bind TLS row shares this parser: its .priv is the ssl_opts[] entry,
 * whose parser crt-list lines use too. */
static int ssl_bind_kw(struct bind_conf *bc, const struct bind_kw *kw, int argc,
                       char **argv, char **err)
{
	const struct ssl_opt *opt = kw->priv;
	int r;

	if (!bc->ssl) {
		ssl_init_once();
		bc->ssl = xcalloc(1, sizeof(*bc->ssl));
		bc->ssl->verify = -1;
		bc->ssl->conf_file = bc->conf_file;
		bc->ssl->conf_line = bc->conf_line;
	}
	r = opt->parse(bc->ssl, opt, argc, argv, err);
	if (bc->ssl->enabled)
		bc->flags |= LI_F_SSL;
	return r;
}

static const char *ssl_flag_names[] = { "no-tls-tickets", "prefer-client-ciphers", "no-ca-names",
					"generate-certificates", "allow-0rtt" };

void ssl_opts_dump(struct dstr *out, const struct ssl_bind_opts *o)
{
	const char *sep = "";

	for (size_t i = 0; i < ARRAY_SIZE(ssl_opts); i++) {
		const struct ssl_opt *opt = &ssl_opts[i];

		if (!(opt->where & SSL_OPT_CRTLIST))
			continue;
		if (opt->parse == ssl_opt_str && *SSL_BO_AT(o, opt, char *)) {
			dstr_printf(out, "%s%s %s", sep, opt->name, *SSL_BO_AT(o, opt, char *));
			sep = " ";
		} else if (opt->parse == ssl_opt_protos && *SSL_BO_AT(o, opt, unsigned char *)) {
			const unsigned char *p = *SSL_BO_AT(o, opt, unsigned char *);
			size_t len = opt->arg ? o->npn_len : o->alpn_len;

			dstr_printf(out, "%s%s ", sep, opt->name);
			for (size_t k = 0; k < len; k += 1 + p[k])
				dstr_printf(out, "%s%.*s", k ? "," : "", p[k], p + k + 1);
			sep = " ";
		} else if (opt->parse == ssl_opt_ver && *SSL_BO_AT(o, opt, int)) {
			for (size_t v = 0; v < ARRAY_SIZE(ssl_versions); v++)
				if (ssl_versions[v].ver == *SSL_BO_AT(o, opt, int))
					dstr_printf(out, "%s%s %s", sep, opt->name,
						    ssl_versions[v].name);
			sep = " ";
		} else if (opt->parse == ssl_opt_bit && opt->off == offsetof(struct ssl_bind_opts, no_ver) &&
			   (o->no_ver & opt->arg)) {
			dstr_printf(out, "%s%s", sep, opt->name);
			sep = " ";
		} else if (opt->parse == ssl_opt_verify && o->verify >= 0) {
			dstr_printf(out, "%sverify %s", sep, o->verify == SSL_VERIFY_NONE ? "none" :
				    o->verify & SSL_VERIFY_FAIL_IF_NO_PEER_CERT ? "required" : "optional");
			sep = " ";
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(ssl_flag_names); i++)
		if (o->flags & (1u << i) && (1u << i) & (SSL_BO_F_NO_CA_NAMES | SSL_BO_F_ALLOW_0RTT)) {
			dstr_printf(out, "%s%s", sep, ssl_flag_names[i]);
			sep = " ";
		}
}

void ssl_opts_clear(struct ssl_bind_opts *o)
{
	ssl_ckch_free_crts(o);
	crtlist_forget_bind(o);
	gencert_release(o);
	free(o->ciphers);
	free(o->ciphersuites);
	free(o->curves);
	free(o->ecdhe);
	free(o->sigalgs);
	free(o->client_sigalgs);
	free(o->ca_file);
	free(o->ca_verify_file);
	free(o->crl_file);
	free(o->alpn);
	free(o->npn);
	free(o->ca_sign_file);
	free(o->ca_sign_pass);
	o->ciphers = o->ciphersuites = o->curves = o->ecdhe = o->sigalgs = NULL;
	o->client_sigalgs = o->ca_file = o->ca_verify_file = o->crl_file = NULL;
	o->ca_sign_file = o->ca_sign_pass = NULL;
	o->alpn = o->npn = NULL;
}

void ssl_opts_free(struct ssl_bind_opts *o)
{
	if (!o)
		return;
	ssl_opts_clear(o);
	free(o);
}

/* ---- server options ---- */

/* The TLS settings <srv> may change: created on first use, copied when
 * still shared with the default-server they came from. */
static struct ssl_srv *ssl_srv_own(struct server *srv)
{
	struct ssl_srv *x = srv->ssl;

	if (!x) {
		ssl_init_once();
		x = srv->ssl = xcalloc(1, sizeof(*x));
		x->verify = -1;
		x->owner = srv;
	} else if (x->owner != srv) {
		x = srv->ssl = ssl_srv_dup(x, srv);
	}
	return x;
}

/* The field at the row's .off in <x>. */
#define SSL_SRV_AT(x, kw, type) ((type *)((char *)(x) + (kw)->off))

/* ssl, no-ssl, no-ssl-reuse, ssl-reuse, check-ssl, no-check-ssl: the int at
 * the row's .off set to the row's .set value (1 or 0). */
static int ssl_srv_int(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                       char **err)
{
	*SSL_SRV_AT(ssl_srv_own(srv), kw, int) = (int)kw->set;
	return 1;
}

/* no-tlsv10 ... no-tlsv13, no-tls-tickets, tls-tickets: bits .set added to /
 * .clr removed from the unsigned at .off. */
static int ssl_srv_bits(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                        char **err)
{
	unsigned *v = SSL_SRV_AT(ssl_srv_own(srv), kw, unsigned);

	*v = (*v & ~(unsigned)kw->clr) | (unsigned)kw->set;
	return 1;
}

/* force-sslv3 ... force-tlsv13: that version only (.set indexes ssl_versions[]). */
static int ssl_srv_force(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                         char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	x->min_ver = x->max_ver = ssl_versions[kw->set].ver;
	return 1;
}

/* ca-file, crl-file (.min 1: under ca-base), crt (.min 2: under crt-base),
 * verifyhost, check-sni, ciphers...: a string at the row's .off. */
static int ssl_srv_str(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                       char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);
	char **dst = SSL_SRV_AT(x, kw, char *);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	free(*dst);
	*dst = kw->min && strcmp(argv[1], "@system-ca") != 0 ?
	       ssl_path_resolve(argv[1], kw->min == 2) : xstrdup(argv[1]);
	return 2;
}

/* no-verifyhost: the string at .off forgotten. */
static int ssl_srv_str_clear(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                             char **err)
{
	char **dst = SSL_SRV_AT(ssl_srv_own(srv), kw, char *);

	free(*dst);
	*dst = NULL;
	return 1;
}

/* ssl-min-ver, ssl-max-ver: a version at the row's .off. */
static int ssl_srv_ver(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                       char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	return ssl_parse_ver(argv[0], argv[1], SSL_SRV_AT(x, kw, int), err) ? -1 : 2;
}

static int ssl_srv_verify(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	return ssl_parse_verify(argv[1], 1, &x->verify, err) ? -1 : 2;
}

/* alpn, npn, check-alpn: a protocol list at .off, its length at .off + the
 * pointer (struct ssl_protos). */
static int ssl_srv_protos(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	struct ssl_protos *p = SSL_SRV_AT(ssl_srv_own(srv), kw, struct ssl_protos);

	if (kw->set && !ssl_npn_supported()) {
		*err = str_fmt("'npn' is not supported: the OpenSSL library sluice uses is built "
			       "without NPN (use 'alpn')");
		return -1;
	}
	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	return ssl_parse_protos(argv[0], argv[1], &p->p, &p->len, err) ? -1 : 2;
}

/* allow-0rtt on a server line: refused, sluice never sends early data. */
static int ssl_srv_no_0rtt(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                           char **err)
{
	*err = str_fmt("'allow-0rtt' is not supported on server lines by sluice: it does not "
		       "send early data to servers (it accepts them from clients: 'bind ... "
		       "allow-0rtt')");
	return -1;
}

/* sni <expr>: evaluated per connection. */
static int ssl_srv_sni_kw(struct server *srv, const struct srv_kw *kw, int argc, char **argv,
                          char **err)
{
	struct ssl_srv *x = ssl_srv_own(srv);

	if (ssl_need_arg(argc, argv, "an argument", err))
		return -1;
	if (x->sni) {
		smp_expr_free(x->sni);
		free(x->sni);
	}
	x->sni = xcalloc(1, sizeof(*x->sni));
	if (smp_expr_parse(argv[1], x->sni, NULL, err) == -1) {
		free(x->sni);
		x->sni = NULL;
		return -1;
	}
	ssl_set_str(&x->sni_str, argv[1]);
	return 2;
}

#define SSL_SRV_OFF(field) .off = offsetof(struct ssl_srv, field)

static struct srv_kw ssl_srv_kws[] = {
	{ "ssl", .parse = ssl_srv_int, SSL_SRV_OFF(enabled), .set = 1 },
	{ "no-ssl", .parse = ssl_srv_int, SSL_SRV_OFF(enabled), .set = 0 },
	{ "verify", .parse = ssl_srv_verify },
	{ "verifyhost", .parse = ssl_srv_str, SSL_SRV_OFF(verifyhost) },
	{ "no-verifyhost", .parse = ssl_srv_str_clear, SSL_SRV_OFF(verifyhost) },
	{ "ca-file", .parse = ssl_srv_str, SSL_SRV_OFF(ca_file), .min = 1 },
	{ "crl-file", .parse = ssl_srv_str, SSL_SRV_OFF(crl_file), .min = 1 },
	{ "crt", .parse = ssl_srv_str, SSL_SRV_OFF(crt), .min = 2 },
	{ "sni", .parse = ssl_srv_sni_kw },
	{ "alpn", .parse = ssl_srv_protos, SSL_SRV_OFF(alpn) },
	{ "npn", .parse = ssl_srv_protos, SSL_SRV_OFF(npn), .set = 1 },
	{ "ciphers", .parse = ssl_srv_str, SSL_SRV_OFF(ciphers) },
	{ "ciphersuites", .parse = ssl_srv_str, SSL_SRV_OFF(ciphersuites) },
	{ "curves", .parse = ssl_srv_str, SSL_SRV_OFF(curves) },
	{ "sigalgs", .parse = ssl_srv_str, SSL_SRV_OFF(sigalgs) },
	{ "client-sigalgs", .parse = ssl_srv_str, SSL_SRV_OFF(client_sigalgs) },
	{ "ssl-min-ver", .parse = ssl_srv_ver, SSL_SRV_OFF(min_ver) },
	{ "ssl-max-ver", .parse = ssl_srv_ver, SSL_SRV_OFF(max_ver) },
	{ "no-sslv3", .parse = ssl_srv_bits, SSL_SRV_OFF(no_ver), .set = SSL_BO_NO_SSLV3 },
	{ "no-tlsv10", .parse = ssl_srv_bits, SSL_SRV_OFF(no_ver), .set = SSL_BO_NO_TLS10 },
	{ "no-tlsv11", .parse = ssl_srv_bits, SSL_SRV_OFF(no_ver), .set = SSL_BO_NO_TLS11 },
	{ "no-tlsv12", .parse = ssl_srv_bits, SSL_SRV_OFF(no_ver), .set = SSL_BO_NO_TLS12 },
	{ "no-tlsv13", .parse = ssl_srv_bits, SSL_SRV_OFF(no_ver), .set = SSL_BO_NO_TLS13 },
	{ "force-sslv3", .parse = ssl_srv_force, .set = 0 },
	{ "force-tlsv10", .parse = ssl_srv_force, .set = 1 },
	{ "force-tlsv11", .parse = ssl_srv_force, .set = 2 },
	{ "force-tlsv12", .parse = ssl_srv_force, .set = 3 },
	{ "force-tlsv13", .parse = ssl_srv_force, .set = 4 },
	{ "no-tls-tickets", .parse = ssl_srv_bits, SSL_SRV_OFF(flags), .set = SSL_BO_F_NO_TICKETS },
	{ "tls-tickets", .parse = ssl_srv_bits, SSL_SRV_OFF(flags), .clr = SSL_BO_F_NO_TICKETS },
	{ "allow-0rtt", .parse = ssl_srv_no_0rtt },
	{ "no-ssl-reuse", .parse = ssl_srv_int, SSL_SRV_OFF(no_reuse), .set = 1 },
	{ "ssl-reuse", .parse = ssl_srv_int, SSL_SRV_OFF(no_reuse), .set = 0 },
	{ "check-ssl", .parse = ssl_srv_int, SSL_SRV_OFF(check_ssl), .set = 1 },
	{ "no-check-ssl", .parse = ssl_srv_int, SSL_SRV_OFF(check_ssl), .set = 0 },
	{ "check-sni", .parse = ssl_srv_str, SSL_SRV_OFF(check_sni) },
	{ "check-alpn", .parse = ssl_srv_protos, SSL_SRV_OFF(check_alpn) },
};

/* ---- ssl-default-bind-options, ssl-default-server-options (row value 1) ---- */

static int kw_default_options(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	int srv = (int)ctx->kw_row->arg;
	unsigned where = srv ? SSL_OPT_DEF_SRV : SSL_OPT_DEF_BIND;
	struct ssl_bind_opts tmp = { .verify = -1 };
	struct ssl_bind_opts *o = srv ? &tmp : &ssl_bind_def;

	if (srv) {
		tmp.min_ver = sslg.srv_min_ver;
		tmp.max_ver = sslg.srv_max_ver;
		tmp.no_ver = sslg.srv_no_ver;
		tmp.flags = sslg.srv_flags;
	}
	for (int i = 0; i < argc; ) {
		const struct ssl_opt *opt = NULL;
		char *err = NULL;
		int used;

		for (size_t k = 0; k < ARRAY_SIZE(ssl_opts) && !opt; k++)
			if (strcmp(argv[i], ssl_opts[k].name) == 0 && (ssl_opts[k].where & where))
				opt = &ssl_opts[k];
		if (!opt) {
			cfg_alert(ctx, "unsupported option '%s' (expected no-sslv3, no-tlsv10..13, "
				  "force-sslv3, force-tlsv10..13, no-tls-tickets%s, ssl-min-ver or "
				  "ssl-max-ver)", argv[i], srv ? "" : ", prefer-client-ciphers");
			return -1;
		}
		used = opt->parse(o, opt, argc - i, argv + i, &err);
		if (used < 0) {
			cfg_alert(ctx, "%s", err);
			free(err);
			return -1;
		}
		i += used;
	}
	if (srv) {
		sslg.srv_min_ver = tmp.min_ver;
		sslg.srv_max_ver = tmp.max_ver;
		sslg.srv_no_ver = tmp.no_ver;
		sslg.srv_flags = tmp.flags;
	}
	return 0;
}

/* The strings of ssl-default-*-ciphers...: a row's value indexes these. */
enum { SSL_DEF_BIND_CIPHERS, SSL_DEF_BIND_SUITES, SSL_DEF_BIND_CURVES, SSL_DEF_SRV_CIPHERS,
       SSL_DEF_SRV_SUITES };

static int kw_default_str(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	static char **const dst[] = {
		[SSL_DEF_BIND_CIPHERS] = &ssl_bind_def.ciphers,
		[SSL_DEF_BIND_SUITES]  = &ssl_bind_def.ciphersuites,
		[SSL_DEF_BIND_CURVES]  = &ssl_bind_def.curves,
		[SSL_DEF_SRV_CIPHERS]  = &sslg.srv_ciphers,
		[SSL_DEF_SRV_SUITES]   = &sslg.srv_ciphersuites,
	};

	if (argc != 1) {
		cfg_alert(ctx, "expects one argument (a list)");
		return -1;
	}
	ssl_set_str(dst[ctx->kw_row->arg], argv[0]);
	return 0;
}

static int kw_server_verify(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *err = NULL;

	if (argc != 1 || ssl_parse_verify(argv[0], 1, &sslg.srv_verify, &err) == -1) {
		cfg_alert(ctx, "expects 'none' or 'required'");
		free(err);
		return -1;
	}
	return 0;
}

static struct cfg_kw ssl_opts_cfg_kws[] = {
	{ "ssl-default-bind-ciphers", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<cipher list>", .arg = SSL_DEF_BIND_CIPHERS },
	{ "ssl-default-bind-ciphersuites", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<ciphersuites>", .arg = SSL_DEF_BIND_SUITES },
	{ "ssl-default-bind-curves", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<curves>", .arg = SSL_DEF_BIND_CURVES },
	{ "ssl-default-bind-options", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_options,
	  .usage = "<options>", .arg = 0 },
	{ "ssl-default-server-ciphers", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<cipher list>", .arg = SSL_DEF_SRV_CIPHERS },
	{ "ssl-default-server-ciphersuites", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_str,
	  .usage = "<ciphersuites>", .arg = SSL_DEF_SRV_SUITES },
	{ "ssl-default-server-options", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_default_options,
	  .usage = "<options>", .arg = 1 },
	{ "ssl-server-verify", CFG_SEC_GLOBAL, CFG_T_FUNC, 0, kw_server_verify,
	  .usage = "none|required" },
};

/* One row per ssl_opts[] entry, made at start-up: its .priv is the option. */
static struct bind_kw ssl_bind_kws[ARRAY_SIZE(ssl_opts)];

SLUICE_INIT(ssl_opts_register)
{
	for (size_t i = 0; i < ARRAY_SIZE(ssl_opts); i++)
		ssl_bind_kws[i] = (struct bind_kw){ .name = ssl_opts[i].name, .parse = ssl_bind_kw,
		                                    .priv = &ssl_opts[i] };
	bind_register_keywords(ssl_bind_kws, ARRAY_SIZE(ssl_bind_kws));
	srv_register_keywords(ssl_srv_kws, ARRAY_SIZE(ssl_srv_kws));
	cfg_register(ssl_opts_cfg_kws, ARRAY_SIZE(ssl_opts_cfg_kws));
}

#endif
