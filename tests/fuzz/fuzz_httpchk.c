/* libFuzzer harness for the reading of HTTP check answers (httpchk.c:
 * httpchk_rsp_parse(), with its chunked decoder): whatever the bytes, the
 * reason phrase and the body stay inside the answer, the body never grows
 * past what was received, and an answer read in two steps (head, then
 * body) gives the same verdict as one read at once.
 * Input: one control byte (bit 0: answer to HEAD, bit 1: end of input
 * reached), then the answer's bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/check.h>
#include <sluice/httpchk.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chk_http a, b;
	char *buf1, *buf2;
	size_t len;
	int done, r1, r2;

	if (size < 1)
		return 0;
	len = size - 1;
	done = !!(data[0] & 2);
	buf1 = malloc(len + 1);
	buf2 = malloc(len + 1);
	if (!buf1 || !buf2)
		abort();
	memcpy(buf1, data + 1, len);
	memcpy(buf2, data + 1, len);

	/* At once. */
	memset(&a, 0, sizeof(a));
	a.head_req = data[0] & 1;
	r1 = httpchk_rsp_parse(&a, buf1, len, done, 1);
	CHECK(r1 >= -1 && r1 <= 1);
	if (r1 == 1) {
		CHECK(a.state == 2);
		CHECK((uint64_t)a.reason_off + a.reason_len <= len);
		CHECK(a.body_off <= len);
		CHECK((uint64_t)a.body_off + a.body_len <= len);
		CHECK(a.status >= 0 && a.status <= 999);
	}

	/* Head first, then the body. */
	memset(&b, 0, sizeof(b));
	b.head_req = data[0] & 1;
	r2 = httpchk_rsp_parse(&b, buf2, len, done, 0);
	if (r2 == 1) {
		CHECK(b.state >= 1);
		r2 = httpchk_rsp_parse(&b, buf2, len, done, 1);
	}
	CHECK(r1 == r2);
	if (r1 == 1) {
		CHECK(a.status == b.status);
		CHECK(a.body_len == b.body_len);
		CHECK(memcmp(buf1 + a.body_off, buf2 + b.body_off, a.body_len) == 0);
	}
	free(buf1);
	free(buf2);
	return 0;
}
