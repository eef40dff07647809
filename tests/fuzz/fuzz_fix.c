/* libFuzzer harness for the FIX parser (msgparse.h: fix_validate,
 * fix_tag_find): any bytes; aborts when a value found lies outside the
 * input, or when a prefix of a valid message is said to be invalid (a
 * prefix may only be incomplete, or valid once it holds the message). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/msgparse.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned tags[] = { 8, 9, 10, 35, 49, 56, 1, 999999999 };
	char *p = malloc(size ? size : 1);
	int r;

	if (!p)
		return 0;
	memcpy(p, data, size);
	r = fix_validate(p, size);
	if (r != MSG_OK && r != MSG_INCOMPLETE && r != MSG_INVALID)
		abort();
	if (r == MSG_OK)
		for (size_t k = size / 2; k < size; k += 1 + (size - k) / 4)
			if (fix_validate(p, k) == MSG_INVALID)
				abort();
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		const char *v;
		size_t vl;

		if (fix_tag_find(p, size, tags[i], &v, &vl) == MSG_OK &&
		    (v < p || v + vl > p + size))
			abort();
	}
	free(p);
	return 0;
}
