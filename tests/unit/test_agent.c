/* Agent check replies (srv_agent.c): each word, the reason, unknown words,
 * and every cut of a line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <sluice/cfg.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/srv_agent.h>

static struct server *load(void)
{
	const char *text = "defaults\n  timeout connect 1s\n  timeout server 1s\n"
			   "backend be\n  server a 127.0.0.1:1 weight 40 agent-check agent-port 5555 "
			   "agent-inter 3s agent-send \"hi\"\n  server b 127.0.0.1:2\n";
	struct proxy *px;

	proxy_free_all();
	assert_int_equal(cfg_parse_text("t.cfg", text, strlen(text)), 0);
	assert_int_equal(cfg_postparse(), 0);
	px = proxy_find("be", PR_CAP_BE);
	assert_non_null(px);
	return px->servers;
}

static int apply(struct server *srv, const char *line)
{
	return agent_apply(srv, line, strlen(line));
}

static void test_options(void **state)
{
	struct server *srv = load();

	assert_true(srv->flags & SRV_F_AGENT);
	assert_int_equal(srv->agent.port, 5555);
	assert_int_equal(srv->agent.inter, 3000);
	assert_string_equal(srv->agent_send, "hi");
	assert_false(srv->next->flags & SRV_F_AGENT);
	proxy_free_all();
	/* agent-check without agent-port: an error at start-up */
	assert_true(cfg_parse_text("t.cfg", "backend be\n  server a 127.0.0.1:1 agent-check\n",
				   strlen("backend be\n  server a 127.0.0.1:1 agent-check\n")) == 0);
	assert_true(cfg_postparse() > 0);
	proxy_free_all();
}

static void test_words(void **state)
{
	struct server *srv = load();

	assert_int_equal(apply(srv, "75%\n"), 1);
	assert_int_equal(srv->uweight, 30);
	assert_int_equal(apply(srv, "drain, 100% #busy\n"), 2);
	assert_true(srv->flags & SRV_F_DRAIN);
	assert_int_equal(srv->uweight, 40);
	assert_int_equal(apply(srv, "ready"), 1);
	assert_false(srv->flags & SRV_F_DRAIN);
	assert_int_equal(apply(srv, "maint\n"), 1);
	assert_true(srv->flags & SRV_F_MAINT);
	assert_int_equal(apply(srv, "READY\n"), 1);
	assert_false(srv->flags & SRV_F_MAINT);
	assert_int_equal(apply(srv, "down #disk full\n"), 1);
	assert_true(srv->flags & SRV_F_AGENT_DOWN);
	assert_true(srv->flags & SRV_F_DOWN);
	assert_string_equal(srv->agent.info, "via agent : down (disk full)");
	assert_int_equal(apply(srv, "up\n"), 1);
	assert_false(srv->flags & (SRV_F_AGENT_DOWN | SRV_F_DOWN));
	assert_string_equal(srv->agent.info, "via agent : up");
	assert_int_equal(apply(srv, "stopped\n"), 1);
	assert_true(srv->flags & SRV_F_DOWN);
	assert_int_equal(apply(srv, "up"), 1);
	/* nothing known: an invalid answer */
	assert_int_equal(apply(srv, "hello world\n"), 0);
	assert_int_equal(apply(srv, "#only a reason\n"), 0);
	assert_int_equal(apply(srv, "x%\n"), 0);
	proxy_free_all();
}

/* Every prefix of a line is applied without harm. */
static void test_cuts(void **state)
{
	const char *line = "50% drain,up #a reason\r\n";
	struct server *srv = load();

	for (size_t cut = 0; cut <= strlen(line); cut++) {
		int n = agent_apply(srv, line, cut);

		assert_true(n >= 0 && n <= 3);
		assert_int_equal(n, cut < 3 ? 0 : cut < 9 ? 1 : cut < 12 ? 2 : 3);
		apply(srv, "ready 100%");
	}
	proxy_free_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_cuts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
