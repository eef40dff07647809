/* Version and build information for -v/-vv and feature() (version.h). */
#include <string.h>

#include <ev.h>
#ifdef USE_LUA
#include <lua.h>
#endif
#include <sluice/common.h>
#include <sluice/str.h>
#include <sluice/version.h>

#include <ares.h>
#include <nghttp2/nghttp2.h>
#ifdef USE_OPENSSL
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#endif
#ifdef USE_PCRE2
#include <pcre2.h>
#endif
#ifdef USE_ZLIB
#include <zlib.h>
#endif

static int pcre2_has_jit(void)
{
#ifdef USE_PCRE2
	uint32_t jit = 0;

	if (pcre2_config(PCRE2_CONFIG_JIT, &jit) < 0)
		return 0;
	return jit != 0;
#else
	return 0;
#endif
}

static const struct feature {
	const char *name;
	int         built;
} features[] = {
#ifdef USE_OPENSSL
	{ "OPENSSL", 1 },
#else
	{ "OPENSSL", 0 },
#endif
#ifdef USE_PCRE2
	{ "PCRE2", 1 },
#else
	{ "PCRE2", 0 },
#endif
	{ "PCRE2_JIT", -1 }, /* decided at run time from the library */
#ifdef USE_LUA
	{ "LUA", 1 },
#else
	{ "LUA", 0 },
#endif
#ifdef USE_ZLIB
	{ "ZLIB", 1 },
#else
	{ "ZLIB", 0 },
#endif
	{ "HTTP2", 1 },   /* libnghttp2, always built */
#ifdef __linux__
	{ "LINUX_SPLICE", 1 },
#else
	{ "LINUX_SPLICE", 0 },
#endif
#ifdef USE_SYSTEMD
	{ "SYSTEMD", 1 },
#else
	{ "SYSTEMD", 0 },
#endif
};

static int feature_on(const struct feature *f)
{
	return f->built < 0 ? pcre2_has_jit() : f->built;
}

int version_has_feature(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(features); i++)
		if (strcmp(features[i].name, name) == 0)
			return feature_on(&features[i]);
	return 0;
}

void version_libs(struct dstr *out)
{
	dstr_printf(out, "  libev %d.%d (running %d.%d)\n", EV_VERSION_MAJOR, EV_VERSION_MINOR,
		    ev_version_major(), ev_version_minor());
#ifdef USE_OPENSSL
	dstr_printf(out, "  %s (running %s)\n", OPENSSL_VERSION_TEXT,
		    OpenSSL_version(OPENSSL_VERSION));
#endif
#ifdef USE_PCRE2
	{
		char v[64] = "";

		pcre2_config(PCRE2_CONFIG_VERSION, v);
		dstr_printf(out, "  PCRE2 %s, JIT %s\n", v, pcre2_has_jit() ? "yes" : "no");
	}
#endif
#ifdef USE_ZLIB
	dstr_printf(out, "  zlib %s (running %s), HTTP compression: identity gzip deflate "
		    "raw-deflate\n", ZLIB_VERSION, zlibVersion());
#endif
	dstr_printf(out, "  nghttp2 %s (running %s), HTTP/2 on the client side (ALPN h2, proto h2, "
		    "preface upgrade)\n", NGHTTP2_VERSION, nghttp2_version(0)->version_str);
	dstr_printf(out, "  c-ares %s (running %s), DNS at run time (resolvers sections, "
		    "do-resolve)\n", ARES_VERSION_STR, ares_version(NULL));
#ifdef USE_SYSTEMD
	dstr_printf(out, "  libsystemd (sd_notify for Type=notify)\n");
#endif
#ifdef USE_LUA
	dstr_printf(out, "  %s (HAProxy 2.6's Lua API: lua-load)\n", LUA_RELEASE);
#endif
}

void version_print(FILE *f, int verbose)
{
	fprintf(f, "sluice version %s (HAProxy configuration language %s)\n",
		SLUICE_VERSION, SLUICE_CFG_LEVEL);
	if (!verbose)
		return;
	fprintf(f, "Build options: %s\n", SLUICE_BUILD_OPTS);
	fprintf(f, "Feature list:");
	for (size_t i = 0; i < ARRAY_SIZE(features); i++)
		fprintf(f, " %c%s", feature_on(&features[i]) ? '+' : '-', features[i].name);
	fprintf(f, "\n\nLibraries:\n");
	{
		struct dstr libs = { 0 };

		version_libs(&libs);
		if (libs.len)
			fwrite(libs.p, 1, libs.len, f);
		dstr_free(&libs);
	}
	fprintf(f, "\nAvailable polling systems:\n  epoll (libev)\n");
}

const char *version_ssllib_name(void)
{
#ifdef USE_OPENSSL
	return OpenSSL_version(OPENSSL_VERSION);
#else
	return "";
#endif
}

const char *version_ssllib_number(void)
{
#if defined(USE_OPENSSL) && OPENSSL_VERSION_MAJOR >= 3
	return OpenSSL_version(OPENSSL_VERSION_STRING);
#else
	return "";
#endif
}
