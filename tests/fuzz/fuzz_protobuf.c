/* libFuzzer harness for the protocol buffers and gRPC readers
 * (msgparse.h: pb_find, grpc_message): the first bytes choose a field
 * path, the rest is the message, also read as a gRPC body; aborts when a
 * value found lies outside the input or has an impossible wire type. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/msgparse.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void find(const char *p, size_t len, const uint32_t *path, int n, const char *lo,
                 const char *hi)
{
	struct pb_val v;

	if (pb_find(p, len, path, n, &v) != MSG_OK)
		return;
	if (v.p < lo || v.p + v.len > hi || (v.wire != 0 && v.wire != 1 && v.wire != 2 &&
					     v.wire != 5) ||
	    (v.wire == 1 && v.len != 8) || (v.wire == 5 && v.len != 4))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t path[PB_MAX_PATH];
	int n = 0;
	char *p;
	const char *m, *b;
	size_t ml, left;

	/* the path: up to 4 bytes, each a field number (0 read as 1), ended
	 * by 0xfe */
	while (n < 4 && size) {
		uint8_t b = *data++;

		size--;
		if (b == 0xfe)
			break;
		path[n++] = b ? b : 1;
	}
	if (!n)
		path[n++] = 1;
	p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	for (int k = 1; k <= n; k++)
		find(p, size, path, k, p, p + size);
	for (b = p, left = size; grpc_message(b, left, &m, &ml) == MSG_OK; ) {
		if (m < p || m + ml > p + size)
			abort();
		find(m, ml, path, n, m, m + ml);
		left -= (size_t)(m + ml - b);
		b = m + ml;
	}
	free(p);
	return 0;
}
