/* libFuzzer harness for `-cc` / `.if` conditions (cc_eval) and version
 * comparison (cc_version_cmp); aborts when the contract of ccexpr.h is
 * broken. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/ccexpr.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("FUZZ_DEFINED", "1", 1);
	return 0;
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *err = NULL;
	size_t errpos = 0, len;
	char *expr, *nul;
	int r;

	/* A NUL-terminated, exactly sized copy. */
	expr = malloc(size + 1);
	if (!expr)
		return 0;
	memcpy(expr, data, size);
	expr[size] = '\0';
	len = strlen(expr);

	r = cc_eval(expr, &err, &errpos);
	if (r < -1 || r > 1)
		abort();
	if (r == -1 && (!err || errpos > len))
		abort();

	/* The bytes around the first NUL as two versions: the comparison
	 * must be antisymmetric and reflexive. */
	nul = memchr(expr, '\0', size);
	if (nul && nul < expr + size) {
		const char *a = expr, *b = nul + 1;

		if (sign(cc_version_cmp(a, b)) != -sign(cc_version_cmp(b, a)))
			abort();
		if (cc_version_cmp(a, a) != 0)
			abort();
	}
	free(expr);
	return 0;
}
