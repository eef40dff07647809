/* libFuzzer harness for the JWT query converters (jwt_header_query,
 * jwt_payload_query, through the sample engine): the input is a token in a
 * process-wide variable, read by expressions with and without paths; the
 * fuzzing build has no OpenSSL, so jwt_verify is left to the unit tests.
 * Aborts when an expression does not parse or a value is inconsistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/sample.h>
#include <sluice/vars.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const exprs[] = {
	"var(proc.t),jwt_header_query",
	"var(proc.t),jwt_payload_query",
	"var(proc.t),jwt_header_query('$.alg')",
	"var(proc.t),jwt_payload_query('$.exp',int)",
	"var(proc.t),jwt_payload_query('$.a[1].b')",
};
static struct smp_expr e[sizeof(exprs) / sizeof(exprs[0])];
static struct var_ref ref;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *err = NULL;

	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++)
		if (smp_expr_parse(exprs[i], &e[i], NULL, &err) == -1)
			abort();
	if (var_ref_parse("proc.t", 6, &ref, &err) == -1)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample in = { 0 };

	if (size > VAR_MAX_LEN)
		return 0;
	in.type = SMP_T_STR;
	in.u.str.p = (const char *)data;
	in.u.str.len = size;
	if (!var_set(&ref, NULL, &in))
		abort();
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		struct sample smp = { 0 };

		if (smp_expr_eval(&e[i], NULL, &smp) &&
		    (smp.type == SMP_T_STR || smp.type == SMP_T_BIN) &&
		    smp.u.str.len > SMP_SCRATCH_SIZE)
			abort();
	}
	return 0;
}
