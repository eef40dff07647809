/* libFuzzer harness for what an SPOP agent sends (spop.h): any bytes are
 * cut into frames as the SPOE connection reads them (spop_frame_parse at
 * every offset of a stream of frames), then each frame's key-value list
 * (HELLO, DISCONNECT) and ACK actions are read; aborts when a value lies
 * outside the input, a frame is larger than the limit, or a prefix of a
 * complete frame is said to be complete or invalid. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/spop.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const void *p, uint64_t len, const unsigned char *b, size_t size)
{
	const unsigned char *q = p;

	if (len && (q < b || len > size || q + len > b + size))
		abort();
}

static void frame_body(const struct spop_frame *f, const unsigned char *b, size_t size)
{
	struct spop_kv kv = { 0 };
	struct spop_action a;
	size_t i = 0;
	int r;

	inside(f->pl, f->pl_len, b, size);
	if (spop_read_kv(f->pl, f->pl_len, &kv) == 0) {
		inside(kv.version, kv.version_len, f->pl, f->pl_len);
		inside(kv.caps, kv.caps_len, f->pl, f->pl_len);
		inside(kv.message, kv.message_len, f->pl, f->pl_len);
		(void)spop_hello_check(&kv, SPOP_FRAME_MAX);
	}
	while ((r = spop_ack_next(f->pl, f->pl_len, &i, &a)) == 1) {
		if (i > f->pl_len)
			abort();
		if (a.type == SPOP_ACT_SET_VAR || a.type == SPOP_ACT_UNSET_VAR)
			inside(a.name, a.name_len, f->pl, f->pl_len);
		if (a.type == SPOP_ACT_SET_VAR &&
		    (a.val.type == SPOP_T_STRING || a.val.type == SPOP_T_BINARY))
			inside(a.val.v.str.p, a.val.v.str.len, f->pl, f->pl_len);
	}
	if (r == 0 && i != f->pl_len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b = malloc(size ? size : 1);
	size_t off = 0;

	if (!b)
		return 0;
	memcpy(b, data, size);
	while (off < size) {
		struct spop_frame f, g;
		long n = spop_frame_parse(b + off, size - off, SPOP_FRAME_MAX, &f);

		if (n <= 0)
			break;
		if ((size_t)n > size - off || (size_t)n > SPOP_FRAME_MAX + 4)
			abort();
		/* every prefix of a complete frame waits for more */
		for (size_t k = 0; k < (size_t)n; k += 1 + (size_t)n / 16)
			if (spop_frame_parse(b + off, k, SPOP_FRAME_MAX, &g) != 0)
				abort();
		frame_body(&f, b, size);
		off += (size_t)n;
	}
	free(b);
	return 0;
}
