/* Unit tests for the options of connections to servers (srv_src.c,
 * conn_src_socket() in src/net/conn.c): what the keywords accept and refuse,
 * how servers share their backend's source, and the sockets they give
 * (options read back with getsockopt(), addresses with getsockname());
 * tests/dropin/connect checks them on the wire. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/proxy.h>
#include <sluice/server.h>

#include "cfg_capture.h"

static int reset(void **state)
{
	proxy_free_all();
	log_list_free(&global.loggers);
	restore_global();
	return 0;
}

static struct server *server_of(const char *be, const char *name)
{
	struct proxy *px = proxy_find(be, PR_CAP_BE);

	assert_non_null(px);
	for (struct server *s = px->servers; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	fail_msg("no server %s/%s", be, name);
	return NULL;
}

/* The local address of <fd> as "ip:port". */
static const char *local_of(int fd, char *out, size_t sz)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &l), 0);
	return addr_to_str(&ss, out, sz);
}

#define DEF "defaults\n mode tcp\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n"

static void test_parse_and_share(void **state)
{
	struct server *a, *b, *c, *d;

	LOAD(DEF "backend be\n source 127.0.0.4 interface lo\n default-server tcp-ut 3s\n"
	     " server a 127.0.0.1:1\n server b 127.0.0.1:2 source 127.0.0.3:5000-5009 tfo\n"
	     " server c 127.0.0.1:3 no-tfo\n"
	     "backend be2\n server d 127.0.0.1:4 source 0.0.0.0 usesrc clientip\n", 0);
	a = server_of("be", "a");
	b = server_of("be", "b");
	c = server_of("be", "c");
	d = server_of("be2", "d");
	/* a: the default-server's tcp-ut, its own copy, with the backend's source */
	assert_non_null(a->src);
	assert_int_equal(a->src->user_timeout, 3000);
	assert_true(a->src->flags & CONN_SRC_F_SOURCE);
	assert_string_equal(a->src->iface, "lo");
	/* b: its own source and port range, Fast Open */
	assert_int_equal(b->src->port_lo, 5000);
	assert_int_equal(b->src->port_hi, 5009);
	assert_true(b->src->flags & CONN_SRC_F_TFO);
	assert_null(b->src->iface);
	assert_false(c->src->flags & CONN_SRC_F_TFO);
	assert_int_equal(d->src->usesrc, CONN_USESRC_CLIENTIP);
	reset(NULL);

	/* a backend source alone is shared by its servers, not copied */
	LOAD(DEF "backend be\n source 127.0.0.4\n server a 127.0.0.1:1\n server b 127.0.0.1:2\n", 0);
	assert_ptr_equal(server_of("be", "a")->src, server_of("be", "b")->src);
	assert_ptr_equal(server_of("be", "a")->src, proxy_find("be", PR_CAP_BE)->conn_src);
	reset(NULL);
	/* ... and inherited from a defaults section */
	LOAD("defaults\n mode tcp\n source 127.0.0.5\n timeout client 1s\n timeout server 1s\n"
	     " timeout connect 1s\nbackend be\n server a 127.0.0.1:1\n", 0);
	assert_int_equal(((struct sockaddr_in *)&server_of("be", "a")->src->addr)->sin_addr.s_addr,
			 inet_addr("127.0.0.5"));
}

static void test_errors(void **state)
{
	PARSE_ERRORS("backend be\n"
		     " server a 127.0.0.1:1 source\n"
		     " server b 127.0.0.1:1 source 127.0.0.1 usesrc hdr_ip(x-forwarded-for,-1)\n"
		     " server c 127.0.0.1:1 namespace *\n"
		     " server d 127.0.0.1:1 source /tmp/x\n"
		     " server e 127.0.0.1:1 tcp-ut soon\n"
		     " server f 127.0.0.1:1 source 127.0.0.1 usesrc nowhere.invalid\n"
		     " source 127.0.0.1:1000-1010\n"
		     " source 127.0.0.1 usesrc client extra\n"
		     " server g 127.0.0.1:1 log-proto octet-count\n", 9);
	expect_msg("t.cfg:2: 'server' in backend section: server 'a': option 'source': expects "
		   "<addr>[:<port>]");
	expect_msg("'usesrc hdr_ip(x-forwarded-for,-1)' is not supported yet by sluice");
	expect_msg("'namespace *' (the namespace a PROXY header names) is not supported");
	expect_msg("t.cfg:5: ");
	expect_msg("unix sockets are not allowed here");
	expect_msg("t.cfg:6: ");
	expect_msg("option 'tcp-ut': expects a delay");
	expect_msg("t.cfg:7: ");
	expect_msg("t.cfg:8: 'source' in backend section: ");
	expect_msg("t.cfg:9: 'source' in backend section: unexpected 'extra'");
	expect_msg("t.cfg:10: 'server' in backend section: server 'g': option 'log-proto': not "
		   "supported on a proxy's server by sluice: it frames the log messages sent to "
		   "the servers of a 'ring' section, where it is accepted");
	PARSE_FRESH("frontend f\n source 127.0.0.1\n", 1);
	expect_msg("'source' is not valid in a frontend section");
}

/* The socket a server's options give, before connect(). */
static void test_socket(void **state)
{
	struct server *s;
	char a[64];
	int fd, v = 0, fo = 0;
	socklen_t l = sizeof(v);

	LOAD(DEF "backend be\n server a 127.0.0.1:1 source 127.0.0.7 tcp-ut 4s tfo\n"
	     " server b 127.0.0.1:1 source 127.0.0.8:41230-41231\n", 0);
	s = server_of("be", "a");
	fd = conn_src_socket(s->src, AF_INET, &s->addr);
	assert_true(fd >= 0);
	assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v, &l), 0);
	assert_int_equal(v, 4000);
	l = sizeof(fo);
	assert_int_equal(getsockopt(fd, IPPROTO_TCP, 30 /* TCP_FASTOPEN_CONNECT */, &fo, &l), 0);
	assert_int_equal(fo, 1);
	/* the port is left to connect(): 0 until then */
	assert_string_equal(local_of(fd, a, sizeof(a)), "127.0.0.7:0");
	close(fd);
	/* a health check (no client): no Fast Open */
	fd = conn_src_socket(s->src, AF_INET, NULL);
	l = sizeof(fo);
	assert_int_equal(getsockopt(fd, IPPROTO_TCP, 30, &fo, &l), 0);
	assert_int_equal(fo, 0);
	close(fd);
	/* another family than the source's: no source */
	fd = conn_src_socket(s->src, AF_INET6, NULL);
	assert_true(fd >= 0);
	close(fd);
	/* a port range: each socket takes the next port */
	s = server_of("be", "b");
	fd = conn_src_socket(s->src, AF_INET, NULL);
	v = conn_src_socket(s->src, AF_INET, NULL);
	assert_true(fd >= 0 && v >= 0);
	assert_string_equal(local_of(fd, a, sizeof(a)), "127.0.0.8:41230");
	assert_string_equal(local_of(v, a, sizeof(a)), "127.0.0.8:41231");
	close(fd);
	close(v);
}

/* usesrc: a foreign address is bound, which only IP_TRANSPARENT allows. */
static void test_transparent(void **state)
{
	struct sockaddr_storage cli;
	struct server *s;
	struct addr_spec as;
	char a[64], *err = NULL;
	int fd;

	if (geteuid() != 0) {
		skip();
		return;
	}
	LOAD(DEF "backend be\n server a 127.0.0.1:1 source 0.0.0.0 usesrc client\n"
	     " server b 127.0.0.1:1 source 0.0.0.0 usesrc clientip\n"
	     " server c 127.0.0.1:1 source 0.0.0.0 usesrc 192.0.2.9\n", 0);
	assert_int_equal(addr_parse("192.0.2.7:4567", &as, 0, &err), 0);
	cli = as.ss;
	fd = conn_src_socket(server_of("be", "a")->src, AF_INET, &cli);
	assert_true(fd >= 0);
	assert_string_equal(local_of(fd, a, sizeof(a)), "192.0.2.7:4567");
	close(fd);
	fd = conn_src_socket(server_of("be", "b")->src, AF_INET, &cli);
	assert_true(fd >= 0);
	assert_string_equal(local_of(fd, a, sizeof(a)), "192.0.2.7:0");
	close(fd);
	s = server_of("be", "c");
	fd = conn_src_socket(s->src, AF_INET, &cli);
	assert_true(fd >= 0);
	assert_string_equal(local_of(fd, a, sizeof(a)), "192.0.2.9:0");
	close(fd);
	/* a health check has no client: the plain source */
	fd = conn_src_socket(server_of("be", "a")->src, AF_INET, NULL);
	assert_string_equal(local_of(fd, a, sizeof(a)), "0.0.0.0:0");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_parse_and_share, reset),
		cmocka_unit_test_teardown(test_errors, reset),
		cmocka_unit_test_teardown(test_socket, reset),
		cmocka_unit_test_teardown(test_transparent, reset),
	};

	return cmocka_run_group_tests(tests, capture_group_setup, NULL);
}
