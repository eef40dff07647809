/* libFuzzer harness for the URI normalisers (src/http/uri_norm.c): the
 * first byte picks the normaliser and its flag, the rest is the request
 * target. No crash or overread; nothing is written past the output size;
 * a result fits the bound the contract gives; the path normalisers, the
 * query sort and percent-to-uppercase change nothing more when run again;
 * a smaller output buffer gives the same result or "full". */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/uri_norm.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum uri_norm n;
	unsigned flags;
	char *in, *out, *again, *small;
	size_t len, cap;
	long r, r2;

	if (!size)
		return 0;
	n = (enum uri_norm)(data[0] % URI_N_COUNT);
	flags = (data[0] >> 4) & 1;
	len = size - 1;
	cap = 3 * len + 1;
	in = malloc(len ? len : 1);   /* exactly its size: ASan sees an overread */
	out = malloc(cap);
	again = malloc(cap);
	small = malloc(cap + 1);
	memcpy(in, data + 1, len);
	r = uri_normalize(n, flags, in, len, out, cap);
	if (r == URI_NORM_FULL || r < URI_NORM_INVALID || r > (long)cap)
		__builtin_trap();
	if (r >= 0 && n != URI_N_FRAGMENT_ENCODE && r > (long)len + 1)
		__builtin_trap();
	if (r >= 0 && (n == URI_N_PATH_MERGE_SLASHES || n == URI_N_PATH_STRIP_DOT ||
		       n == URI_N_PATH_STRIP_DOTDOT || n == URI_N_QUERY_SORT_BY_NAME ||
		       n == URI_N_FRAGMENT_STRIP || n == URI_N_PERCENT_TO_UPPERCASE)) {
		r2 = uri_normalize(n, flags, out, (size_t)r, again, cap);
		if (r2 != r || memcmp(out, again, (size_t)r) != 0)
			__builtin_trap();
	}
	if (r > 0) {
		/* one byte short: "full"; a guard byte past the size stays */
		small[r - 1] = 0x5a;
		if (uri_normalize(n, flags, in, len, small, (size_t)r - 1) != URI_NORM_FULL ||
		    (unsigned char)small[r - 1] != 0x5a)
			__builtin_trap();
	}
	free(in);
	free(out);
	free(again);
	free(small);
	return 0;
}
