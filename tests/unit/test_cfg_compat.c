/* Unit tests for the corners of HAProxy's language that configurations
 * written for HAProxy 2.6 use: sections sluice does not run, the
 * environment keywords and variable forms, and the global keywords about
 * the process (each checked by its effect). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <cmocka.h>

#include <ev.h>

#include <sluice/addr.h>
#include <sluice/cfg.h>
#include <sluice/conn.h>
#include <sluice/global.h>
#include <sluice/lexer.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/process.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/vars.h>

#include "cfg_capture.h"

static void free_listeners(struct listener *li)
{
	struct listener *next;

	for (; li; li = next) {
		next = li->next;
		if (!next || next->bc != li->bc) {
			free(li->bc->conf_file);
			free(li->bc->name);
			free(li->bc);
		}
		free(li->addr_str);
		free(li);
	}
}

static int group_setup(void **state)
{
	pristine = global;
	return 0;
}

static int reset(void **state)
{
	proxy_free_all();
	log_list_free(&global.loggers);
	free_listeners(global.cli_listeners);
	free(global.localpeer);
	restore_global();
	return 0;
}

static const char *fe_tail =
	"defaults\n mode tcp\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

/* A section sluice does not run: one error naming it, none for its lines. */
static void test_refused_sections(void **state)
{
	PARSE_ERRORS("crt-store s\n    crt a.pem\n"
		     "traces\n    trace h1 sink stderr\n"
		     "listen x\n    bind 127.0.0.1:8001\n    server a 127.0.0.1:80\n", 2);
	expect_msg("t.cfg:1: section 'crt-store s' is not supported by sluice: a section of "
		   "HAProxy 3.0");
	expect_msg("t.cfg:3: section 'traces'");
	expect_no_msg("t.cfg:2");
	expect_no_msg("t.cfg:4");
	/* the proxy after them is read as usual */
	assert_non_null(global.proxies);
	assert_string_equal(global.proxies->name, "x");
}

/* filter lines: a refused filter gets its reason, an unknown one the list;
 * filter spoe reads its file at once. */
static void test_refused_filters(void **state)
{
	PARSE_ERRORS("listen x\n mode http\n bind 127.0.0.1:8001\n"
		     " filter spoe engine e config /x.conf\n filter trace\n filter bwlim-in x\n"
		     " filter frob\n", 4);
	expect_msg("t.cfg:4: 'filter' in listen section: cannot read SPOE file '/x.conf'");
	expect_msg("filter 'trace' is not supported by sluice");
	expect_msg("filter 'bwlim-in' is not supported by sluice: bandwidth limitation");
	expect_msg("unknown filter 'frob'");
}

/* The environment keywords act as their line is read. */
static void test_env_keywords(void **state)
{
	setenv("SLUICE_T_KEEP", "k", 1);
	setenv("SLUICE_T_PRE", "before", 1);
	PARSE_ERRORS("global\n"
		     "    setenv SLUICE_T_A alpha\n"
		     "    setenv SLUICE_T_A beta\n"
		     "    presetenv SLUICE_T_PRE after\n"
		     "    presetenv SLUICE_T_NEW new\n"
		     "    setenv SLUICE_T_GONE x\n"
		     "    unsetenv SLUICE_T_GONE\n"
		     "    description \"${SLUICE_T_A} $SLUICE_T_PRE ${SLUICE_T_NEW} [$SLUICE_T_GONE]\"\n",
		     0);
	assert_string_equal(global.desc, "beta before new []");
	assert_null(getenv("SLUICE_T_GONE"));
	PARSE_ERRORS("global\n    resetenv SLUICE_T_KEEP PATH\n", 0);
	assert_string_equal(getenv("SLUICE_T_KEEP"), "k");
	assert_null(getenv("SLUICE_T_A"));
	assert_null(getenv("HOME"));
	assert_non_null(getenv("PATH"));
	PARSE_ERRORS("global\n    setenv ONLYNAME\n    unsetenv\n", 2);
	expect_msg("'setenv' in global section: expects a name and a value");
}

/* "$NAME", pseudo-variables, and a '$' that starts no name. */
static void test_variable_forms(void **state)
{
	setenv("SLUICE_T_V", "v", 1);
	PARSE_ERRORS("global\n"
		     "    node \"n-$SLUICE_T_V-${.LINE}\"\n"
		     "    description \"${.FILE}:${.LINE} ${.SECTION} ^/a$ $1 $SLUICE_T_V.x\"\n", 0);
	assert_string_equal(global.node, "n-v-2");
	assert_string_equal(global.desc, "t.cfg:3 global ^/a$ $1 v.x");
	PARSE_ERRORS("global\n    description \"${.NOPE}\"\n", 1);
	expect_msg("unknown pseudo-variable");
}

/* As HAProxy, the addresses of bind, server and log lines expand $VAR
 * even outside double quotes. */
static void test_address_env(void **state)
{
	struct proxy *px;
	char buf[64];

	setenv("SLUICE_T_PORT", "8123", 1);
	setenv("SLUICE_T_HOST", "127.0.0.2", 1);
	PARSE_ERRORS("listen x\n"
		     "    bind 127.0.0.1:${SLUICE_T_PORT},127.0.0.1:$SLUICE_T_PORT\n"
		     "    server s1 ${SLUICE_T_HOST}:80\n"
		     "    log $SLUICE_T_HOST:514 local0\n", 0);
	px = global.proxies;
	assert_non_null(px);
	assert_non_null(px->listeners);
	assert_int_equal(addr_get_port(&px->listeners->addr), 8123);
	assert_int_equal(addr_get_port(&px->listeners->next->addr), 8123);
	assert_non_null(px->servers);
	assert_string_equal(addr_ip_str(&px->servers->addr, buf, sizeof(buf)), "127.0.0.2");
	/* elsewhere a $ outside quotes stays as written */
	PARSE_ERRORS("global\n    description $SLUICE_T_PORT\n", 0);
	assert_string_equal(global.desc, "$SLUICE_T_PORT");
}

/* set-var / set-var-fmt in global: proc.* variables the rules read. */
static void test_global_set_var(void **state)
{
	struct var_ref ref = { VAR_PROC, (char *)"b" };
	struct sample smp = { 0 };

	PARSE_ERRORS("global\n    set-var proc.a int(41)\n"
		     "    set-var-fmt proc.b \"x%[var(proc.a)]y\"\n", 0);
	assert_true(var_get(&ref, NULL, &smp));
	assert_int_equal(smp.type, SMP_T_STR);
	assert_int_equal(smp.u.str.len, 4);
	assert_memory_equal(smp.u.str.p, "x41y", 4);
	PARSE_ERRORS("global\n    set-var txn.a int(1)\n    set-var proc.c req.hdr(host)\n", 2);
	expect_msg("only process-wide variables");
	expect_msg("needs a connection");
}

/* The event loop's backend, busy polling, cpu-map and set-dumpable act. */
static void test_loop_and_cpus(void **state)
{
	cpu_set_t before, after;
	struct ev_loop *loop;

	assert_int_equal(tune_loop_backend(), EVBACKEND_EPOLL);
	PARSE_ERRORS("global\n    noepoll\n", 0);
	assert_int_equal(tune_loop_backend(), EVBACKEND_POLL);
	PARSE_ERRORS("global\n    nopoll\n", 0);
	assert_int_equal(tune_loop_backend(), EVBACKEND_SELECT);

	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	PARSE_ERRORS("global\n    cpu-map 1/2-4 1\n    cpu-map auto:1/1-2 0-1\n    busy-polling\n", 0);
	expect_msg("names only processes or threads other than 1");
	loop = ev_loop_new(EVBACKEND_POLL);
	assert_non_null(loop);
	tune_apply(loop);
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_int_equal(CPU_COUNT(&after), 1);
	assert_true(CPU_ISSET(0, &after));
	/* busy-polling: the loop does not block with nothing to do */
	assert_int_equal(ev_run(loop, EVRUN_ONCE), 0);
	ev_loop_destroy(loop);
	sched_setaffinity(0, sizeof(before), &before);
	PARSE_ERRORS("global\n    cpu-map 1/x 0\n    cpu-map 1 abc\n    nbthread 2\n"
		     "    thread-groups 2\n", 4);
}

/* quiet, zero-warning, fd-hard-limit, nosplice, noreuseport, stats maxconn,
 * maxsessrate, maxpipes, unix-bind. */
static void test_process_switches(void **state)
{
	struct listener *li;

	LOAD("global\n    fd-hard-limit 1100\n    nosplice\n    noreuseport\n"
	     "    maxsessrate 7\n    maxpipes 9\n    stats maxconn 3\n"
	     "    stats socket 127.0.0.1:9990\n"
	     "defaults\n mode tcp\n option splice-auto\n timeout client 1s\n"
	     " timeout server 1s\n timeout connect 1s\n"
	     "listen x\n bind 127.0.0.1:8001\n server s 127.0.0.1:80\n", 0);
	assert_int_equal(global.maxconn, (1100 - 100) / 2);   /* no pipes: nosplice */
	assert_false(global.proxies->options & PR_O_SPLICE_AUTO);
	assert_true(global.tune_flags & GLB_T_NOREUSEPORT);
	assert_int_equal(global.sess_rate_limit, 7);
	assert_int_equal(global.maxpipes, 9);
	li = global.cli_listeners;
	assert_non_null(li);
	assert_int_equal(li->bc->maxconn, 3);
	reset(NULL);

	LOAD("global\n    zero-warning\nlisten x\n bind 127.0.0.1:8001\n server s 127.0.0.1:80\n", 1);
	expect_msg("Some warnings were found and 'zero-warning' is set. Aborting.");
	reset(NULL);

	PARSE_ERRORS("global\n    unix-bind prefix /tmp/sl- mode 640 uid 12 gid 34\n"
		     "listen x\n bind /a.sock\n bind /b.sock mode 600\n", 0);
	li = global.proxies->listeners;
	assert_string_equal(((struct sockaddr_un *)&li->addr)->sun_path, "/tmp/sl-/a.sock");
	assert_int_equal(li->bc->ux_mode, 0640);
	assert_int_equal(li->bc->ux_uid, 12);
	assert_int_equal(li->bc->ux_gid, 34);
	assert_int_equal(li->next->bc->ux_mode, 0600);
	PARSE_ERRORS("global\n    unix-bind prefix \"\" mode 0 uid -1\n", 1);
	PARSE_ERRORS("global\n    unix-bind frob 1\n", 1);
	expect_msg("unknown option 'frob'");
	(void)fe_tail;
}

/* default-path origin: relative paths are taken from there. */
static void test_default_path(void **state)
{
	char *cwd = getcwd(NULL, 0), *now;

	PARSE_ERRORS("global\n    default-path origin /tmp\n", 0);
	now = getcwd(NULL, 0);
	assert_string_equal(now, "/tmp");
	free(now);
	PARSE_ERRORS("global\n    default-path current\n", 0);
	now = getcwd(NULL, 0);
	assert_string_equal(now, cwd);
	free(now);
	PARSE_ERRORS("global\n    default-path somewhere\n    default-path origin /nonexistent-x\n", 2);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
}

/* Socket buffer sizes reach the sockets. */
static void test_sockbuf(void **state)
{
	int fd, v = 0;
	socklen_t l = sizeof(v);

	PARSE_ERRORS("global\n    tune.rcvbuf.client 65536\n    tune.sndbuf.server 32768\n", 0);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	conn_setup_tcp(fd, NULL, 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &l), 0);
	assert_true(v >= 65536);
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	conn_setup_tcp(fd, NULL, 1);
	l = sizeof(v);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &l), 0);
	assert_true(v >= 32768);
	close(fd);
}

/* Knobs without object: value checked, nothing else; refused modules. */
static void test_no_effect_and_refused(void **state)
{
	PARSE_ERRORS("global\n    tune.maxaccept 64\n    tune.sched.low-latency on\n"
		     "    tune.idletimer 1s\n    tune.recv_enough 10k\n    numa-cpu-mapping\n"
		     "    cluster-secret s3cr3t\n    profiling.tasks auto\n    nokqueue\n", 0);
	PARSE_ERRORS("global\n    tune.maxaccept x\n    tune.sched.low-latency maybe\n"
		     "    nokqueue 1\n    wurfl-data-file /x\n", 4);
	expect_msg("'tune.maxaccept' in global section: expects a positive integer");
	expect_msg("expects 'on' or 'off'");
	expect_msg("WURFL) is not built");
}

/* A TCP port nothing listens on now (the kernel's choice). */
static int free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

/* Socket options of bind lines reach the listening sockets. */
static void test_bind_socket_options(void **state)
{
	char cfg[256];
	struct listener *li;
	int v = 0, port = free_port();
	socklen_t l = sizeof(v);

	snprintf(cfg, sizeof(cfg), "listen x\n bind 127.0.0.1:%d tfo mss 1300 tcp-ut 5s "
		 "thread 1 process all shards 1 nice 10\n", port);
	PARSE_ERRORS(cfg, 0);
	li = global.proxies->listeners;
	assert_int_equal(listener_bind_all(li), 0);
	assert_int_equal(getsockopt(li->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v, &l), 0);
	assert_int_equal(v, 5000);
	l = sizeof(v);
	assert_int_equal(getsockopt(li->fd, IPPROTO_TCP, TCP_MAXSEG, &v, &l), 0);
	assert_int_equal(v, 1300);
	/* tfo: setsockopt(TCP_FASTOPEN) succeeded (bind would have failed);
	 * its queue is visible only where the kernel enables server TFO */
	close(li->fd);
	li->fd = -1;
	assert_int_equal(li->bc->nice, 10);
	PARSE_ERRORS("listen y\n bind 127.0.0.1:8001 thread 2\n"
		     "listen z\n bind 127.0.0.1:8002 namespace a/b\n"
		     "listen w\n bind 127.0.0.1:8003 accept-netscaler-cip x\n"
		     "listen v\n bind 127.0.0.1:8004 nice 2000\n", 4);
	expect_msg("sluice runs one thread in one process");
	expect_msg("'namespace': expects a network namespace name");
	expect_msg("option 'accept-netscaler-cip'");
	expect_msg("option 'nice'");
}

/* no-check, no-backup, no-send-proxy undo what default-server set. */
static void test_server_no_options(void **state)
{
	struct server *s;

	PARSE_ERRORS("backend b\n default-server check backup send-proxy\n"
		     " server s1 127.0.0.1:80 no-check no-backup no-send-proxy\n"
		     " server s2 127.0.0.1:81\n", 0);
	s = global.proxies->servers;
	assert_string_equal(s->name, "s1");
	assert_false(s->flags & (SRV_F_CHECKED | SRV_F_BACKUP | SRV_F_SEND_PROXY));
	assert_true(s->next->flags & SRV_F_CHECKED);
	assert_true(s->next->flags & SRV_F_BACKUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_refused_sections, reset),
		cmocka_unit_test_teardown(test_refused_filters, reset),
		cmocka_unit_test_teardown(test_env_keywords, reset),
		cmocka_unit_test_teardown(test_variable_forms, reset),
		cmocka_unit_test_teardown(test_address_env, reset),
		cmocka_unit_test_teardown(test_global_set_var, reset),
		cmocka_unit_test_teardown(test_loop_and_cpus, reset),
		cmocka_unit_test_teardown(test_process_switches, reset),
		cmocka_unit_test_teardown(test_default_path, reset),
		cmocka_unit_test_teardown(test_sockbuf, reset),
		cmocka_unit_test_teardown(test_no_effect_and_refused, reset),
		cmocka_unit_test_teardown(test_bind_socket_options, reset),
		cmocka_unit_test_teardown(test_server_no_options, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
