/* libFuzzer harness for the PROXY protocol parser (src/net/proxyproto.c):
 * no crash or overread on any input, and a parsed header never claims more
 * bytes than it was given; a rebuilt header parses back the same; a TLV
 * found in a parsed header lies inside it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/proxyproto.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage src, dst, s2, d2;
	const char *err;
	char *b = malloc(size ? size : 1), out[256];
	int local, ret;

	memcpy(b, data, size);
	ret = pp_parse(b, size, &src, &dst, &local, &err);
	if (ret > (int)size)
		__builtin_trap();
	if (ret > 0) {
		const unsigned char *v;
		size_t vl;

		for (int t = 0; t < 256; t += 1 + (t & 3) * 10)
			if (pp_v2_tlv_find((const unsigned char *)b, (size_t)ret, (uint8_t)t, &v, &vl) &&
			    (v < (const unsigned char *)b || v + vl > (const unsigned char *)b + ret))
				__builtin_trap();
	}
	if (ret > 0 && !local) {
		for (int v = 1; v <= 2; v++) {
			size_t n = pp_build(v, &src, &dst, out, sizeof(out));
			int l2;

			if (pp_parse(out, n, &s2, &d2, &l2, &err) != (int)n || l2)
				__builtin_trap();
		}
	}
	free(b);
	return 0;
}
