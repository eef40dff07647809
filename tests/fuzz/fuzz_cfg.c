/* libFuzzer harness for whole configuration texts: cfg_parse_text() and
 * cfg_postparse(), then every process-wide effect is undone so that each input
 * starts from the same state; aborts if parsing opened a socket. */
#include "fuzz_cfg_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	/* Exactly sized, not NUL-terminated. */
	text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	fuzz_cfg_run(text, size);
	return 0;
}
