/* Small shared helpers: assertions, container_of, array sizes, branch hints.
 * Everything here is header-only and has no state. */
#ifndef SLUICE_COMMON_H
#define SLUICE_COMMON_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The HAProxy configuration-language level sluice implements. `-cc
 * version_atleast(X)` compares against this, so tooling written for HAProxy
 * gates its config snippets correctly. Declared once, here. */
#define SLUICE_CFG_LEVEL "2.6"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "0.0.0"
#endif
#ifndef SLUICE_BUILD_OPTS
#define SLUICE_BUILD_OPTS ""
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Invariant check that stays in release builds: a broken invariant is a bug
 * we want reported with its location, not silently propagated. */
#define BUG_ON(cond, msg) do {                                              \
	if (unlikely(cond)) {                                               \
		fprintf(stderr, "BUG at %s:%d: %s (%s)\n",                  \
			__FILE__, __LINE__, msg, #cond);                    \
		abort();                                                    \
	}                                                                   \
} while (0)

/* Registration at start-up: a module lists its table rows and registers them
 * from a constructor, so adding a keyword or a command touches one file. */
#define SLUICE_INIT(fn) \
	static void fn(void) __attribute__((constructor)); \
	static void fn(void)

#endif
