/* libFuzzer harness for the TLS ClientHello parser (src/rules/tls_hello.c):
 * no crash or overread on any input, a parsed hello never claims more bytes
 * than it was given, its slices lie inside the input, and every prefix of
 * an accepted hello asks for more bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/tls_hello.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const uint8_t *p, size_t n, const uint8_t *b, size_t size)
{
	return !p || (p >= b && n <= size && p + n <= b + size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	struct tls_hello h;
	int ret;

	memcpy(b, data, size);
	ret = tls_hello_parse(b, size, &h);
	if (ret > (int)size || ret < -1)
		__builtin_trap();
	if (ret > 0) {
		if (!inside(h.sni, h.sni_len, b, size) || !inside(h.alpn, h.alpn_len, b, size))
			__builtin_trap();
		if (tls_hello_parse(b, (size_t)ret - 1, &h) != 0)
			__builtin_trap();
	}
	free(b);
	return 0;
}
