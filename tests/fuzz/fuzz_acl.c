/* libFuzzer harness for ACL and condition lines: the input is placed in a
 * mode http frontend (after two named ACLs) and parsed by cfg_parse_text()
 * and cfg_postparse(), then every process-wide effect is undone, as in
 * fuzz_cfg.c (see fuzz_cfg_common.h). Each line is e.g.
 * "acl x hdr(host),lower -m beg -i a" or
 * "http-request deny if x !{ path_reg ^/a } || TRUE". */
#include "fuzz_cfg_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	static const char prefix[] =
		"defaults d\n mode http\nbackend be\n server s 127.0.0.1:1\n"
		"frontend fe from d\n acl a1 path_beg /a\n acl a2 src 10.0.0.0/8\n";
	size_t plen = sizeof(prefix) - 1;

	/* Exactly sized, not NUL-terminated. */
	text = malloc(plen + size + 1);
	if (!text)
		return 0;
	memcpy(text, prefix, plen);
	memcpy(text + plen, data, size);
	fuzz_cfg_run(text, plen + size);
	return 0;
}
