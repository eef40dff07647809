/* libFuzzer harness for the NetScaler CIP parser (src/net/netscaler.c): the
 * first 4 bytes are the magic to expect, the rest the connection's first
 * bytes. No crash or overread (the input is copied to a buffer of exactly
 * its size); a parsed header never claims more bytes than it was given,
 * and every prefix of it asks for more. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/netscaler.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage src, dst;
	const char *err;
	uint32_t magic;
	char *b;
	int r;

	if (size < 4)
		return 0;
	magic = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
	size -= 4;
	b = malloc(size ? size : 1);
	memcpy(b, data + 4, size);
	r = ns_cip_parse(b, size, magic, &src, &dst, &err);
	if (r > (int)size || r < -1)
		__builtin_trap();
	if (r > 0 && ns_cip_parse(b, (size_t)r - 1, magic, &src, &dst, &err) != 0)
		__builtin_trap();
	free(b);
	return 0;
}
