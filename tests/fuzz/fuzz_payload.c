/* libFuzzer harness for the RDP cookie and distcc parsers
 * (src/rules/payload_parse.c): no crash or overread on any input, a value
 * lies inside the input, and a prefix that gets an answer gets the whole
 * input's (more bytes never change a decided answer). The first input byte
 * picks the cookie name or distcc token and occurrence looked for. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/payload_parse.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { NULL, "mstshash", "msts", "a" };
static const char *const toks[] = { "DIST", "ARGV", "DOTI", "STAT" };

/* <b> as a buffer of <len> bytes exactly, so that ASan sees an overread. */
static uint8_t *dup_exact(const uint8_t *b, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	memcpy(p, b, len);
	return p;
}

static void check_rdp(const uint8_t *b, size_t len, const char *name)
{
	size_t nl = name ? strlen(name) : 0, vl = 0, pvl = 0;
	uint8_t *whole = dup_exact(b, len), *part;
	const uint8_t *v = NULL, *pv = NULL;
	int r = rdp_cookie_parse(whole, len, name, nl, &v, &vl), pr;

	if (r < -1 || r > 1 || (r == 1 && (v < whole || v + vl > whole + len)))
		__builtin_trap();
	if (len) {
		part = dup_exact(b, len - 1);
		pr = rdp_cookie_parse(part, len - 1, name, nl, &pv, &pvl);
		if (pr != -1 && (pr != r || (r == 1 && (pvl != vl || pv - part != v - whole))))
			__builtin_trap();
		free(part);
	}
	free(whole);
}

static void check_distcc(const uint8_t *b, size_t len, const char *tok, int occ)
{
	uint8_t *whole = dup_exact(b, len), *part;
	struct distcc_tok t = { 0 }, pt = { 0 };
	size_t need = 0;
	int r = distcc_find(whole, len, tok, occ, &t, &need), pr;

	if (r < -1 || r > 1 || (r == 1 && t.body > len) || (r == -1 && need <= len))
		__builtin_trap();
	if (len) {
		part = dup_exact(b, len - 1);
		pr = distcc_find(part, len - 1, tok, occ, &pt, &need);
		if (pr != -1 && (pr != r || (r == 1 && (pt.param != t.param || pt.body != t.body))))
			__builtin_trap();
		free(part);
	}
	free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	check_rdp(data + 1, size - 1, names[data[0] & 3]);
	check_distcc(data + 1, size - 1, toks[(data[0] >> 2) & 3], (data[0] >> 4) & 3);
	return 0;
}
