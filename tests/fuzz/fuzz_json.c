/* libFuzzer harness for the JSON scanner of json_query (json.h): the
 * input's first line is compiled as a JSON path (when it is one) and the
 * rest read as a JSON text, also with fixed paths; aborts when a value
 * found lies outside the text or a sample is inconsistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/json.h>
#include <sluice/sample.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixed[] = { "$", "$.a", "$.a.b", "$[0]", "$.a[1].b", "$[0][0][0]",
				     "$.a\\.b", "$.last" };
static struct json_path *paths[sizeof(fixed) / sizeof(fixed[0])];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		char *err = NULL;

		if (json_path_compile(fixed[i], strlen(fixed[i]), &paths[i], &err) == -1)
			abort();
	}
	return 0;
}

static void query(const struct json_path *jp, const char *p, size_t len)
{
	const char *vs, *ve;
	struct sample smp;

	if (json_path_find(jp, p, len, &vs, &ve) && (vs < p || ve > p + len || ve <= vs))
		abort();
	for (int as_int = 0; as_int < 2; as_int++) {
		memset(&smp, 0, sizeof(smp));
		if (json_query_smp(jp, as_int, p, len, &smp) &&
		    (smp.type == SMP_T_STR ? smp.u.str.len > SMP_SCRATCH_SIZE :
		     smp.type != SMP_T_BOOL && smp.type != SMP_T_SINT))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly sized copies: the scanner must not read past <len> */
	const char *nl = memchr(data, '\n', size);
	char *doc = malloc(size ? size : 1);

	if (!doc)
		return 0;
	memcpy(doc, data, size);
	if (nl) {
		size_t pl = (size_t)((const uint8_t *)nl - data);
		struct json_path *jp;
		char *err = NULL;

		if (json_path_compile(doc, pl, &jp, &err) == 0) {
			query(jp, doc + pl + 1, size - pl - 1);
			json_path_free(jp);
		} else {
			if (!err)
				abort();
			free(err);
		}
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		query(paths[i], doc, size);
	free(doc);
	return 0;
}
