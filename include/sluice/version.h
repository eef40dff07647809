/* Version, build options and the feature list that `-vv` prints and that
 * `feature(NAME)` tests. */
#ifndef SLUICE_VERSION_H
#define SLUICE_VERSION_H

#include <stdio.h>

/* Returns 1 when sluice was built with feature <name> (OPENSSL, PCRE2,
 * PCRE2_JIT, LUA, ZLIB, LINUX_SPLICE, SYSTEMD), else 0. */
int version_has_feature(const char *name);

/* The TLS library's name as it reports it at run time ("OpenSSL 3.0.11 19
 * Sep 2023"), and its version number ("3.0.11"); "" without TLS. For the
 * .if functions ssllib_name_startswith() and openssl_version_*(). */
const char *version_ssllib_name(void);
const char *version_ssllib_number(void);

struct dstr;

/* Appends the "Libraries" lines of -vv to <out>: each library linked, the
 * version built against and the one running ("  libev 4.33 (running 4.33)"). */
void version_libs(struct dstr *out);

/* Prints the version line, and with <verbose> the build options, features
 * and library versions (the `-vv` output). */
void version_print(FILE *f, int verbose);

#endif
