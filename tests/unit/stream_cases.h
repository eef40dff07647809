/* cmocka group and per-case hooks shared by the tests built on
 * stream_harness.h (test_stream.c, test_stream_srv.c). Include after
 * <cmocka.h> and stream_harness.h. */
#ifndef SLUICE_TESTS_STREAM_CASES_H
#define SLUICE_TESTS_STREAM_CASES_H

static int group_setup(void **state)
{
	h_init();
	return 0;
}

static int group_teardown(void **state)
{
	h_fini();
	pool_flush_all();
	return 0;
}

/* Every case must leave nothing behind, whatever it asserted. */
static int stop_clean(void **state)
{
	const char *leak = h_stop();

	if (leak)
		fail_msg("left behind: %s", leak);
	return 0;
}

#endif
