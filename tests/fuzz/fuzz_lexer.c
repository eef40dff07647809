/* libFuzzer harness for the configuration line lexer (cfg_lex_line): any
 * bytes, exactly-sized heap copies, several output sizes and word limits;
 * aborts when the contract of lexer.h is broken. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/lexer.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Variables for "${...}" expansion to find (see lexer.dict). */
	setenv("A", "alpha", 1);
	setenv("L", "w1 w2\tw3  w4", 1);
	setenv("E", "", 1);
	unsetenv("U");
	return 0;
}

/* Checks one result against the contract; aborts (a finding) if broken. */
static void check(int n, const char *out, size_t outsz, char **words, int maxw,
                  const struct cfg_lex_err *err, size_t len)
{
	if (n == -1) {
		if (!err->msg || err->pos > len)
			abort();
		return;
	}
	if (n < 0 || n > maxw)
		abort();
	for (int i = 0; i < n; i++) {
		if (words[i] < out || words[i] >= out + outsz)
			abort();
		if (!memchr(words[i], '\0', (size_t)(out + outsz - words[i])))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char big[4 * 65536];
	char *words[CFG_MAX_WORDS];
	struct cfg_lex_err err;
	char *line, *out;
	size_t outsz;
	int n, maxw;

	if (size > 65536)
		return 0;
	/* Exactly sized, not NUL-terminated: ASan sees any overread. */
	line = malloc(size ? size : 1);
	if (!line)
		return 0;
	memcpy(line, data, size);

	memset(&err, 0, sizeof(err));
	n = cfg_lex_line(line, size, big, sizeof(big), words, CFG_MAX_WORDS, &err);
	check(n, big, sizeof(big), words, CFG_MAX_WORDS, &err, size);

	/* A tight heap output buffer and a word limit taken from the input. */
	outsz = size ? (size_t)data[0] % (size + 2) : 0;
	maxw = size > 1 ? data[1] % (CFG_MAX_WORDS + 1) : CFG_MAX_WORDS;
	out = malloc(outsz ? outsz : 1);
	if (out) {
		memset(&err, 0, sizeof(err));
		n = cfg_lex_line(line, size, out, outsz, words, maxw, &err);
		check(n, out, outsz, words, maxw, &err, size);
		free(out);
	}
	free(line);
	return 0;
}
