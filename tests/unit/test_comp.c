/* Unit tests for the Accept-Encoding parser and the algorithm choice of
 * HTTP compression (src/http/comp.c): table-driven; every row is parsed
 * whole, then cut at every byte with the cut placed right before a
 * PROT_NONE page, so that a read past the value faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sluice/comp.h>

struct ae_row {
	const char *v;
	int         rc;                 /* 0 or -1 */
	int         id, gz, df, star;   /* q-values in thousandths, -1: not named */
};

static const struct ae_row rows[] = {
	{ "", 0, -1, -1, -1, -1 },
	{ "gzip", 0, -1, 1000, -1, -1 },
	{ "GZIP, Deflate", 0, -1, 1000, 1000, -1 },
	{ "x-gzip;q=0.3", 0, -1, 300, -1, -1 },
	{ "gzip;q=0, deflate;q=0.000", 0, -1, 0, 0, -1 },
	{ "gzip;q=0.5, deflate", 0, -1, 500, 1000, -1 },
	{ "deflate ; q=0.25 ,gzip;Q=1.000", 0, -1, 1000, 250, -1 },
	{ "*;q=0.1, identity;q=0", 0, 0, -1, -1, 100 },
	{ "br, zstd;q=0.9", 0, -1, -1, -1, -1 },
	{ ",, gzip ,,", 0, -1, 1000, -1, -1 },
	{ "gzip;level=9;q=0.7", 0, -1, 700, -1, -1 },
	{ "gzip;foo=\"a,b;c\";q=0.2", 0, -1, 200, -1, -1 },
	{ "gzip;q=0.5, gzip;q=0.9", 0, -1, 900, -1, -1 },
	{ "gzip;q=2", -1, 0, 0, 0, 0 },
	{ "gzip;q=1.5", -1, 0, 0, 0, 0 },
	{ "gzip;q=0.1234", -1, 0, 0, 0, 0 },
	{ "gzip;q=", -1, 0, 0, 0, 0 },
	{ "gzip;q=\"0.5\"", -1, 0, 0, 0, 0 },
	{ "gzip;", -1, 0, 0, 0, 0 },
	{ "gzip deflate", -1, 0, 0, 0, 0 },
	{ "gzip;q=0.5x", -1, 0, 0, 0, 0 },
	{ "gzip;foo=\"unterminated", -1, 0, 0, 0, 0 },
	{ "gz\001ip", -1, 0, 0, 0, 0 },
	{ "@", -1, 0, 0, 0, 0 },
};

/* A copy of <len> bytes of <v> ending right before an inaccessible page. */
static char *guarded(const char *v, size_t len, char **map, size_t *maplen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), data = (len / pg + 1) * pg;

	*maplen = data + pg;
	*map = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(*map != MAP_FAILED);
	assert_int_equal(mprotect(*map + data, pg, PROT_NONE), 0);
	memcpy(*map + data - len, v, len);
	return *map + data - len;
}

static int parse_guarded(const char *v, size_t len, struct comp_ae *ae)
{
	char *map;
	size_t maplen;
	char *p = guarded(v, len, &map, &maplen);
	int rc;

	comp_ae_init(ae);
	rc = comp_ae_parse(p, len, ae);
	munmap(map, maplen);
	return rc;
}

static void test_rows(void **state)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct ae_row *r = &rows[i];
		struct comp_ae ae;
		int rc = parse_guarded(r->v, strlen(r->v), &ae);

		if (rc != r->rc)
			fail_msg("'%s': rc %d, expected %d", r->v, rc, r->rc);
		if (rc)
			continue;
		if (ae.q[COMP_A_IDENTITY] != r->id || ae.q[COMP_A_GZIP] != r->gz ||
		    ae.q[COMP_A_DEFLATE] != r->df || ae.star != r->star)
			fail_msg("'%s': identity %d gzip %d deflate %d * %d", r->v,
				 ae.q[COMP_A_IDENTITY], ae.q[COMP_A_GZIP], ae.q[COMP_A_DEFLATE], ae.star);
	}
}

/* Every prefix of every row: parsed without reading past its end, with a
 * result that is either an error or q-values in range. */
static void test_every_cut(void **state)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t len = strlen(rows[i].v);

		for (size_t k = 0; k <= len; k++) {
			struct comp_ae ae;
			int rc = parse_guarded(rows[i].v, k, &ae);

			assert_true(rc == 0 || rc == -1);
			if (rc)
				continue;
			for (int a = 0; a < COMP_A_NB; a++)
				assert_true(ae.q[a] >= -1 && ae.q[a] <= 1000);
			assert_true(ae.star >= -1 && ae.star <= 1000);
		}
	}
}

/* Cuts whose result is known: a q-value cut in its digits is still a
 * q-value; a cut after ';' or '=' is malformed. */
static void test_known_cuts(void **state)
{
	const char *v = "deflate;q=0.75, gzip";
	struct comp_ae ae;

	assert_int_equal(parse_guarded(v, 7, &ae), 0);    /* "deflate" */
	assert_int_equal(ae.q[COMP_A_DEFLATE], 1000);
	assert_int_equal(parse_guarded(v, 8, &ae), -1);   /* "deflate;" */
	assert_int_equal(parse_guarded(v, 10, &ae), -1);  /* "deflate;q=" */
	assert_int_equal(parse_guarded(v, 11, &ae), 0);   /* "deflate;q=0" */
	assert_int_equal(ae.q[COMP_A_DEFLATE], 0);
	assert_int_equal(parse_guarded(v, 13, &ae), 0);   /* "deflate;q=0.7" */
	assert_int_equal(ae.q[COMP_A_DEFLATE], 700);
	assert_int_equal(parse_guarded(v, 16, &ae), 0);   /* "deflate;q=0.75, " */
	assert_int_equal(ae.q[COMP_A_GZIP], -1);
	assert_int_equal(parse_guarded(v, 18, &ae), 0);   /* "...gz": another coding */
	assert_int_equal(ae.q[COMP_A_GZIP], -1);
	assert_int_equal(parse_guarded(v, strlen(v), &ae), 0);
	assert_int_equal(ae.q[COMP_A_GZIP], 1000);
}

static enum comp_algo choose(const char *v, const unsigned char *algos, int n)
{
	struct comp_ae ae;

	comp_ae_init(&ae);
	assert_int_equal(comp_ae_parse(v, strlen(v), &ae), 0);
	return comp_ae_choose(&ae, algos, n);
}

static void test_choose(void **state)
{
	static const unsigned char gd[] = { COMP_A_GZIP, COMP_A_DEFLATE };
	static const unsigned char rg[] = { COMP_A_RAW_DEFLATE, COMP_A_GZIP };
	static const unsigned char ig[] = { COMP_A_IDENTITY, COMP_A_GZIP };

	assert_int_equal(choose("gzip", gd, 2), COMP_A_GZIP);
	assert_int_equal(choose("deflate", gd, 2), COMP_A_DEFLATE);
	assert_int_equal(choose("gzip;q=0.5, deflate", gd, 2), COMP_A_DEFLATE);
	assert_int_equal(choose("deflate, gzip", gd, 2), COMP_A_GZIP);    /* tie: configured order */
	assert_int_equal(choose("gzip;q=0, deflate;q=0", gd, 2), COMP_A_IDENTITY);
	assert_int_equal(choose("br", gd, 2), COMP_A_IDENTITY);
	assert_int_equal(choose("", gd, 2), COMP_A_IDENTITY);
	assert_int_equal(choose("*", gd, 2), COMP_A_GZIP);
	assert_int_equal(choose("*;q=0.5, gzip;q=0.4", gd, 2), COMP_A_DEFLATE);
	assert_int_equal(choose("gzip, *;q=0", gd, 2), COMP_A_GZIP);
	assert_int_equal(choose("deflate", rg, 2), COMP_A_RAW_DEFLATE);   /* raw-deflate answers "deflate" */
	assert_int_equal(choose("gzip", ig, 2), COMP_A_GZIP);             /* identity: implicit q=0.001 */
	assert_int_equal(choose("identity;q=0.5, gzip;q=0.1", ig, 2), COMP_A_IDENTITY);
	assert_string_equal(comp_algo_name(COMP_A_RAW_DEFLATE), "raw-deflate");
}

/* The user agents HAProxy refuses to compress for, and those it allows;
 * every prefix of a refused one is cut too (a prefix never reads past
 * its end). */
static void test_user_agents(void **state)
{
	static const struct { const char *ua; int refused; } uas[] = {
		{ "Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)", 1 },
		{ "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)", 1 },
		{ "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)", 0 },
		{ "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)", 0 },
		{ "Mozilla/4.0 (compatible; MSIE 10.0; Windows NT 6.1)", 0 },
		{ "Mozilla/4.76 [en] (X11; U; Linux)", 1 },
		{ "Mozilla/5.0 (X11; Linux x86_64)", 0 },
		{ "curl/7.88.1", 0 },
		{ "", 0 },
	};

	for (size_t i = 0; i < sizeof(uas) / sizeof(uas[0]); i++) {
		size_t n = strlen(uas[i].ua);
		char *copy = malloc(n ? n : 1);

		memcpy(copy, uas[i].ua, n);
		assert_int_equal(comp_ua_refused(copy, n), uas[i].refused);
		for (size_t cut = 0; cut < n; cut++)
			(void)comp_ua_refused(copy, cut);
		free(copy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_every_cut),
		cmocka_unit_test(test_known_cuts),
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_user_agents),
	};

	return cmocka_run_group_tests_name("comp", tests, NULL, NULL);
}
