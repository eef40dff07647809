/* Unit tests for address strings (src/net/addr.c): IPv4/IPv6 forms, port
 * ranges, fd@, unix sockets, family prefixes, flags, and formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <sluice/addr.h>

#define ALL_FLAGS (ADDR_F_UNIX_OK | ADDR_F_FD_OK | ADDR_F_RANGE_OK | ADDR_F_PORT_OPTIONAL)

static struct addr_spec as;
static char str[1024];

/* Parses <s>; on success checks that the error is NULL and formats the
 * address into <str>. Returns addr_parse()'s result. */
static int parse(const char *s, int flags)
{
	char *err = (char *)"untouched";
	int r = addr_parse(s, &as, flags, &err);

	if (r == 0) {
		assert_null(err);
		addr_to_str(&as.ss, str, sizeof(str));
	} else {
		assert_int_equal(r, -1);
		assert_non_null(err);
		snprintf(str, sizeof(str), "%s", err);
		free(err);
	}
	return r;
}

/* Asserts that <s> is accepted and formats as <exp> with ports lo..hi. */
static void ok(const char *s, int flags, int family, const char *exp, int lo, int hi)
{
	if (parse(s, flags) != 0)
		fail_msg("'%s' refused: %s", s, str);
	assert_int_equal(as.kind, ADDR_K_INET);
	assert_int_equal(as.ss.ss_family, family);
	assert_int_equal(as.len, family == AF_INET ? sizeof(struct sockaddr_in)
						   : sizeof(struct sockaddr_in6));
	assert_string_equal(str, exp);
	assert_int_equal(as.port_lo, lo);
	assert_int_equal(as.port_hi, hi);
	assert_int_equal(addr_get_port(&as.ss), lo);
}

/* Asserts that <s> is refused with a message containing <what>. */
static void ko(const char *s, int flags, const char *what)
{
	if (parse(s, flags) != -1)
		fail_msg("'%s' accepted as %s", s, str);
	if (!strstr(str, what))
		fail_msg("'%s': message '%s' does not mention '%s'", s, str, what);
}

static void test_ipv4(void **state)
{
	ok("127.0.0.1:80", 0, AF_INET, "127.0.0.1:80", 80, 80);
	ok("10.1.2.3:65535", 0, AF_INET, "10.1.2.3:65535", 65535, 65535);
	ok("0.0.0.0:1", 0, AF_INET, "0.0.0.0:1", 1, 1);
	ko("256.0.0.1:80", 0, "not a valid IP address");
	ko("1.2.3:80", 0, "not a valid IP address");
	ko("example.invalid:80", 0, "not a valid IP address");
}

static void test_ipv6(void **state)
{
	ok("[::1]:8080", 0, AF_INET6, "[::1]:8080", 8080, 8080);
	ok("[2001:db8::1]:443", 0, AF_INET6, "[2001:db8::1]:443", 443, 443);
	/* Without brackets the last colon separates the port. */
	ok("::1:80", 0, AF_INET6, "[::1]:80", 80, 80);
	ok(":::80", 0, AF_INET6, "[::]:80", 80, 80);
	ok("2001:db8::2:80", 0, AF_INET6, "[2001:db8::2]:80", 80, 80);
	ok("[::ffff:10.0.0.1]:80", 0, AF_INET6, "[::ffff:10.0.0.1]:80", 80, 80);
	ko("[::1:80", 0, "missing ']'");
	ko("[::1]80", 0, "unexpected text after ']'");
	ko("[::1]", 0, "missing port");
	ko("[::1]:", 0, "missing port");
	ko("[1.2.3.4]:80", 0, "not a valid IP address");
	ko("[zz::1]:80", 0, "not a valid IP address");
}

static void test_any(void **state)
{
	ok("*:80", 0, AF_INET, "0.0.0.0:80", 80, 80);
	ok(":80", 0, AF_INET, "0.0.0.0:80", 80, 80);
	ok("ipv6@:80", 0, AF_INET6, "[::]:80", 80, 80);
	ok("ipv6@*:80", 0, AF_INET6, "[::]:80", 80, 80);
	ok("[::]:80", 0, AF_INET6, "[::]:80", 80, 80);
}

static void test_ports(void **state)
{
	ko("127.0.0.1:0", 0, "invalid port");
	ko("127.0.0.1:65536", 0, "invalid port");
	ko("127.0.0.1:99999999999999999999", 0, "invalid port");
	ko("127.0.0.1:-1", ADDR_F_RANGE_OK, "invalid port");
	ko("127.0.0.1:80x", 0, "invalid port");
	ko("127.0.0.1:x80", 0, "invalid port");
	ko("127.0.0.1:+80", 0, "invalid port");
	ko("127.0.0.1: 80", 0, "invalid port");
	ok("127.0.0.1:00080", 0, AF_INET, "127.0.0.1:80", 80, 80);
}

static void test_ranges(void **state)
{
	ok("1.2.3.4:8000-8010", ADDR_F_RANGE_OK, AF_INET, "1.2.3.4:8000", 8000, 8010);
	ok("[::1]:8000-8001", ADDR_F_RANGE_OK, AF_INET6, "[::1]:8000", 8000, 8001);
	ok("1.2.3.4:8000-8000", ADDR_F_RANGE_OK, AF_INET, "1.2.3.4:8000", 8000, 8000);
	ok(":1-65535", ADDR_F_RANGE_OK, AF_INET, "0.0.0.0:1", 1, 65535);
	ko("1.2.3.4:8000-8010", 0, "port ranges are not allowed");
	ko("1.2.3.4:8010-8000", ADDR_F_RANGE_OK, "ends before it starts");
	ko("1.2.3.4:8000-", ADDR_F_RANGE_OK, "invalid port range");
	ko("1.2.3.4:8000-65536", ADDR_F_RANGE_OK, "invalid port range");
	ko("1.2.3.4:8000-80x", ADDR_F_RANGE_OK, "invalid port range");
	ko("1.2.3.4:0-10", ADDR_F_RANGE_OK, "invalid port");
	ko("1.2.3.4:-10", ADDR_F_RANGE_OK, "invalid port");
	ko("1.2.3.4:1-2-3", ADDR_F_RANGE_OK, "invalid port range");
}

static void test_fd(void **state)
{
	assert_int_equal(parse("fd@5", ADDR_F_FD_OK), 0);
	assert_int_equal(as.kind, ADDR_K_FD);
	assert_int_equal(as.fd, 5);
	assert_int_equal(parse("fd@0", ADDR_F_FD_OK), 0);
	assert_int_equal(as.fd, 0);
	ko("fd@5", 0, "fd@ is not allowed here");
	ko("fd@5", ADDR_F_UNIX_OK | ADDR_F_RANGE_OK | ADDR_F_PORT_OPTIONAL, "not allowed");
	ko("fd@", ADDR_F_FD_OK, "expects a file descriptor number");
	ko("fd@x", ADDR_F_FD_OK, "expects a file descriptor number");
	ko("fd@5x", ADDR_F_FD_OK, "expects a file descriptor number");
	ko("fd@-1", ADDR_F_FD_OK, "expects a file descriptor number");
	ko("fd@ 5", ADDR_F_FD_OK, "expects a file descriptor number");
	ko("fd@99999999999999999999", ADDR_F_FD_OK, "expects a file descriptor number");
	ko("fd@2000000", ADDR_F_FD_OK, "expects a file descriptor number");
	/* Other kinds leave fd at -1. */
	assert_int_equal(parse("127.0.0.1:80", ALL_FLAGS), 0);
	assert_int_equal(as.fd, -1);
}

static void test_unix(void **state)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)&as.ss;
	char path[sizeof(sun->sun_path) + 16];

	assert_int_equal(parse("unix@/run/x.sock", ADDR_F_UNIX_OK), 0);
	assert_int_equal(as.kind, ADDR_K_UNIX);
	assert_int_equal(as.ss.ss_family, AF_UNIX);
	assert_string_equal(sun->sun_path, "/run/x.sock");
	assert_string_equal(str, "/run/x.sock");
	assert_int_equal(as.port_lo, 0);

	assert_int_equal(parse("/tmp/s.sock", ADDR_F_UNIX_OK), 0);
	assert_int_equal(as.kind, ADDR_K_UNIX);
	assert_string_equal(sun->sun_path, "/tmp/s.sock");
	assert_int_equal(parse("unix@relative.sock", ADDR_F_UNIX_OK), 0);
	assert_string_equal(sun->sun_path, "relative.sock");

	ko("unix@/run/x.sock", 0, "unix sockets are not allowed here");
	ko("/tmp/s.sock", ADDR_F_FD_OK | ADDR_F_PORT_OPTIONAL, "unix sockets are not allowed here");
	ko("unix@", ADDR_F_UNIX_OK, "empty or too long");

	/* sun_path holds 107 bytes and the NUL. */
	path[0] = '/';
	memset(path + 1, 'p', sizeof(sun->sun_path) - 2);
	path[sizeof(sun->sun_path) - 1] = '\0';
	assert_int_equal(strlen(path), sizeof(sun->sun_path) - 1);
	assert_int_equal(parse(path, ADDR_F_UNIX_OK), 0);
	assert_string_equal(sun->sun_path, path);
	path[sizeof(sun->sun_path) - 1] = 'p';
	path[sizeof(sun->sun_path)] = '\0';
	ko(path, ADDR_F_UNIX_OK, "empty or too long");
	{
		char upath[sizeof(path) + 8];

		snprintf(upath, sizeof(upath), "unix@%s", path);
		ko(upath, ADDR_F_UNIX_OK, "empty or too long");
		upath[strlen(upath) - 1] = '\0'; /* 107 bytes after the prefix */
		assert_int_equal(parse(upath, ADDR_F_UNIX_OK), 0);
		assert_int_equal(strlen(sun->sun_path), sizeof(sun->sun_path) - 1);
	}
}

static void test_missing_port(void **state)
{
	ko("127.0.0.1", 0, "missing ':<port>'");
	ko("127.0.0.1:", 0, "missing port");
	ok("127.0.0.1", ADDR_F_PORT_OPTIONAL, AF_INET, "127.0.0.1:0", 0, 0);
	ok("127.0.0.1:", ADDR_F_PORT_OPTIONAL, AF_INET, "127.0.0.1:0", 0, 0);
	ok("[::1]", ADDR_F_PORT_OPTIONAL, AF_INET6, "[::1]:0", 0, 0);
	ok("10.0.0.1:53", ADDR_F_PORT_OPTIONAL, AF_INET, "10.0.0.1:53", 53, 53);
	ko("", 0, "missing");
	ok("", ADDR_F_PORT_OPTIONAL, AF_INET, "0.0.0.0:0", 0, 0);
}

static void test_family_prefixes(void **state)
{
	ok("ipv4@127.0.0.1:80", 0, AF_INET, "127.0.0.1:80", 80, 80);
	ok("ipv4@:80", 0, AF_INET, "0.0.0.0:80", 80, 80);
	ok("ipv6@::1:80", 0, AF_INET6, "[::1]:80", 80, 80);
	ok("ipv6@[::1]:80", 0, AF_INET6, "[::1]:80", 80, 80);
	ko("ipv6@127.0.0.1:80", 0, "not a valid IP address");
	ko("ipv4@", 0, "missing");
	ko("ipv4@unix@/x", ALL_FLAGS, "not a valid IP address");
}

/* BUG (src/net/addr.c, addr_parse): the "ipv4@" prefix is overridden when the
 * host contains ':' (or is bracketed), so "ipv4@::1:80" and "ipv4@[::1]:80"
 * are accepted as IPv6 [::1]:80 instead of being refused as not IPv4. */
static void test_ipv4_prefix_with_v6_host(void **state)
{
	ko("ipv4@::1:80", 0, "not a valid IP address");
	ko("ipv4@[::1]:80", 0, "IP");
}

static void test_too_long(void **state)
{
	char s[600];

	memset(s, '1', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	ko(s, ALL_FLAGS, "address too long");
}

static void test_resolve(void **state)
{
	/* "localhost" comes from /etc/hosts, no DNS needed. */
	if (parse("localhost:80", ADDR_F_RESOLVE) != 0)
		skip(); /* a build host without a localhost entry */
	assert_int_equal(as.kind, ADDR_K_INET);
	assert_true(as.ss.ss_family == AF_INET || as.ss.ss_family == AF_INET6);
	assert_int_equal(addr_get_port(&as.ss), 80);
	assert_true(strcmp(str, "127.0.0.1:80") == 0 || strcmp(str, "[::1]:80") == 0);
	assert_int_equal(parse("ipv4@localhost:81", ADDR_F_RESOLVE), 0);
	assert_int_equal(as.ss.ss_family, AF_INET);
	assert_string_equal(str, "127.0.0.1:81");
	ko("localhost:80", 0, "not a valid IP address");
}

static void test_round_trips(void **state)
{
	static const char *const addrs[] = {
		"127.0.0.1:80", "0.0.0.0:65535", "192.168.10.200:8443", "[::1]:80", "[::]:1",
		"[2001:db8::1]:443", "[fe80::1:2:3:4]:9000", "[::ffff:10.0.0.1]:80",
	};

	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct addr_spec first;
		char again[sizeof(str)];

		if (parse(addrs[i], 0) != 0)
			fail_msg("'%s' refused: %s", addrs[i], str);
		assert_string_equal(str, addrs[i]);
		first = as;
		snprintf(again, sizeof(again), "%s", str);
		assert_int_equal(parse(again, 0), 0);
		assert_int_equal(as.len, first.len);
		assert_memory_equal(&as.ss, &first.ss, first.len);
	}
}

static void test_format_helpers(void **state)
{
	char ip[64], small[8];

	assert_int_equal(parse("10.0.0.1:80", 0), 0);
	assert_string_equal(addr_ip_str(&as.ss, ip, sizeof(ip)), "10.0.0.1");
	addr_set_port(&as.ss, 1234);
	assert_int_equal(addr_get_port(&as.ss), 1234);
	assert_string_equal(addr_to_str(&as.ss, ip, sizeof(ip)), "10.0.0.1:1234");
	/* Truncated, still NUL-terminated. */
	addr_to_str(&as.ss, small, sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);

	assert_int_equal(parse("[::1]:80", 0), 0);
	assert_string_equal(addr_ip_str(&as.ss, ip, sizeof(ip)), "::1");
	addr_set_port(&as.ss, 65535);
	assert_string_equal(addr_to_str(&as.ss, ip, sizeof(ip)), "[::1]:65535");

	assert_int_equal(parse("/tmp/x", ADDR_F_UNIX_OK), 0);
	assert_string_equal(addr_ip_str(&as.ss, ip, sizeof(ip)), "unix");
	assert_int_equal(addr_get_port(&as.ss), 0);
	addr_set_port(&as.ss, 80); /* no effect on a unix address */
	assert_string_equal(addr_to_str(&as.ss, ip, sizeof(ip)), "/tmp/x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_any),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_fd),
		cmocka_unit_test(test_unix),
		cmocka_unit_test(test_missing_port),
		cmocka_unit_test(test_family_prefixes),
		cmocka_unit_test(test_ipv4_prefix_with_v6_host),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_format_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
