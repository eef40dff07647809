/* Unit tests for the new process' side of the listener hand-over
 * (src/sys/sockxfer.c, sockxfer_fetch()): a child process plays the old
 * one, answering well or badly (garbage, a cut answer, more descriptors than
 * announced, descriptors that are not listening sockets, sockets bound
 * elsewhere than their key says), and every case must leave this process
 * with exactly the descriptors it had (counted in /proc/self/fd) once the
 * pool is closed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <sluice/listener.h>
#include <sluice/sockxfer.h>

static char path[108];

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;   /* the directory's own descriptor */
}

/* Sends <data> with <n> descriptors on <c> (the child's side). */
static void send_fds(int c, const char *data, const int *fds, int n)
{
	union {
		char           buf[CMSG_SPACE(300 * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { .iov_base = (char *)data, .iov_len = strlen(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n) {
		struct cmsghdr *h;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(h), fds, (size_t)n * sizeof(int));
	}
	/* the new process may have hung up already: that is its right */
	(void)!sendmsg(c, &mh, MSG_NOSIGNAL);
}

/* A TCP socket on 127.0.0.1 (a free port), listening if <listening>; its
 * key in <key>. */
static int tcp_sock(int listening, char *key, size_t size)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (listening && listen(fd, 8) < 0) || getsockname(fd, (struct sockaddr *)&sin, &sl) < 0)
		_exit(2);
	snprintf(key, size, "tcp@127.0.0.1:%d", ntohs(sin.sin_port));
	return fd;
}

typedef void (*script_fn)(int c);

/* Starts a child that accepts one connection on <path>, reads the request
 * and runs <script> on it. Returns the child's pid. */
static pid_t old_process(script_fn script)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	pid_t pid;

	snprintf(path, sizeof(path), "/tmp/test_sockxfer.%d.sock", (int)getpid());
	unlink(path);
	strcpy(sun.sun_path, path);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(l, 4), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char req[64];
		int c = accept(l, NULL, NULL);
		ssize_t n = c < 0 ? -1 : read(c, req, sizeof(req) - 1);

		if (n <= 0)
			_exit(2);
		req[n] = '\0';
		if (strcmp(req, "_getsocks\n") != 0)
			_exit(3);
		script(c);
		_exit(0);
	}
	close(l);
	return pid;
}

/* Runs <script> as the old process; returns sockxfer_fetch()'s result and
 * checks that, once the pool is closed, no descriptor was left behind.
 * <kept>: the descriptors the pool must hold before it is closed. */
static int fetch(script_fn script, int kept)
{
	int base, r, st;
	pid_t pid = old_process(script);

	base = count_fds();
	r = sockxfer_fetch(path);
	assert_int_equal(count_fds(), base + kept);
	listener_pool_close();
	assert_int_equal(count_fds(), base);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(path);
	return r;
}

/* ---- the old process' answers ---- */

static void ans_good(int c)
{
	char k1[64], k2[64], msg[200];
	int fds[2] = { tcp_sock(1, k1, sizeof(k1)), tcp_sock(1, k2, sizeof(k2)) };

	send_fds(c, "sluice-sockets 1 2\n", NULL, 0);
	snprintf(msg, sizeof(msg), "batch 2\n%s\n%s\n", k1, k2);
	send_fds(c, msg, fds, 2);
	send_fds(c, "end\n\n", NULL, 0);
}

static void ans_none(int c)
{
	send_fds(c, "sluice-sockets 1 0\nend\n\n", NULL, 0);
}

static void ans_garbage(int c)
{
	send_fds(c, "hello there\x01\n\n", NULL, 0);
}

static void ans_denied(int c)
{
	send_fds(c, "Permission denied\n\n", NULL, 0);
}

static void ans_silent_close(int c)
{
}

/* Three announced, one sent, then the connection closes. */
static void ans_cut(int c)
{
	char k[64], msg[100];
	int fd = tcp_sock(1, k, sizeof(k));

	send_fds(c, "sluice-sockets 1 3\n", NULL, 0);
	snprintf(msg, sizeof(msg), "batch 1\n%s\n", k);
	send_fds(c, msg, &fd, 1);
}

/* One announced, two descriptors sent with it. */
static void ans_extra_fds(int c)
{
	char k[64], k2[64], msg[100];
	int fds[2] = { tcp_sock(1, k, sizeof(k)), tcp_sock(1, k2, sizeof(k2)) };

	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
	snprintf(msg, sizeof(msg), "batch 1\n%s\n", k);
	send_fds(c, msg, fds, 2);
	send_fds(c, "end\n\n", NULL, 0);
}

/* A batch line claiming more descriptors than came with it. */
static void ans_missing_fds(int c)
{
	char k[64], msg[200];
	int fd = tcp_sock(1, k, sizeof(k));

	send_fds(c, "sluice-sockets 1 2\n", NULL, 0);
	snprintf(msg, sizeof(msg), "batch 2\n%s\n%s\nend\n\n", k, k);
	send_fds(c, msg, &fd, 1);
}

/* Descriptors before any header. */
static void ans_fds_first(int c)
{
	char k[64];
	int fd = tcp_sock(1, k, sizeof(k));

	send_fds(c, "x", &fd, 1);
	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
}

/* A pipe under a socket's key. */
static void ans_not_socket(int c)
{
	int p[2];

	if (pipe(p) < 0)
		_exit(2);
	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
	send_fds(c, "batch 1\ntcp@127.0.0.1:1\n", p, 1);
	send_fds(c, "end\n\n", NULL, 0);
}

/* A bound socket that does not listen. */
static void ans_not_listening(int c)
{
	char k[64], msg[100];
	int fd = tcp_sock(0, k, sizeof(k));

	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
	snprintf(msg, sizeof(msg), "batch 1\n%s\n", k);
	send_fds(c, msg, &fd, 1);
	send_fds(c, "end\n\n", NULL, 0);
}

/* A listening socket whose key names another port, then one whose key
 * names a unix path. */
static void ans_elsewhere(int c)
{
	char k[64];
	int fd = tcp_sock(1, k, sizeof(k));

	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
	send_fds(c, "batch 1\ntcp@127.0.0.1:1\n", &fd, 1);
	send_fds(c, "end\n\n", NULL, 0);
}

static void ans_wrong_family(int c)
{
	char k[64];
	int fd = tcp_sock(1, k, sizeof(k));

	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
	send_fds(c, "batch 1\nunix@/tmp/nowhere.sock\n", &fd, 1);
	send_fds(c, "end\n\n", NULL, 0);
}

static void ans_bad_key(int c)
{
	char k[64];
	int fd = tcp_sock(1, k, sizeof(k));

	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
	send_fds(c, "batch 1\nudp@1.2.3.4:5\n", &fd, 1);
	send_fds(c, "end\n\n", NULL, 0);
}

/* A well-formed answer, then more lines and descriptors after "end". */
static void ans_after_end(int c)
{
	char k[64], k2[64], msg[100];
	int fd = tcp_sock(1, k, sizeof(k)), fd2 = tcp_sock(1, k2, sizeof(k2));

	send_fds(c, "sluice-sockets 1 1\n", NULL, 0);
	snprintf(msg, sizeof(msg), "batch 1\n%s\n", k);
	send_fds(c, msg, &fd, 1);
	send_fds(c, "end\n", NULL, 0);
	send_fds(c, "\n", &fd2, 1);
}

static void ans_huge_count(int c)
{
	send_fds(c, "sluice-sockets 1 999999999\n", NULL, 0);
}

/* ---- tests ---- */

static void test_good(void **state)
{
	assert_int_equal(fetch(ans_good, 2), 0);
	assert_int_equal(fetch(ans_none, 0), 0);
}

static void test_refused_or_garbage(void **state)
{
	assert_int_equal(fetch(ans_garbage, 0), -1);
	assert_int_equal(fetch(ans_denied, 0), -1);
	assert_int_equal(fetch(ans_silent_close, 0), -1);
	assert_int_equal(fetch(ans_huge_count, 0), -1);
}

static void test_cut_or_miscounted(void **state)
{
	assert_int_equal(fetch(ans_cut, 0), -1);
	assert_int_equal(fetch(ans_extra_fds, 0), -1);
	assert_int_equal(fetch(ans_missing_fds, 0), -1);
	assert_int_equal(fetch(ans_fds_first, 0), -1);
	assert_int_equal(fetch(ans_after_end, 0), -1);
}

static void test_wrong_descriptors(void **state)
{
	assert_int_equal(fetch(ans_not_socket, 0), -1);
	assert_int_equal(fetch(ans_not_listening, 0), -1);
	assert_int_equal(fetch(ans_elsewhere, 0), -1);
	assert_int_equal(fetch(ans_wrong_family, 0), -1);
	assert_int_equal(fetch(ans_bad_key, 0), -1);
}

static void test_no_server(void **state)
{
	int base = count_fds();

	assert_int_equal(sockxfer_fetch("/tmp/test_sockxfer.nowhere/x.sock"), -1);
	assert_int_equal(count_fds(), base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refused_or_garbage),
		cmocka_unit_test(test_cut_or_miscounted),
		cmocka_unit_test(test_wrong_descriptors),
		cmocka_unit_test(test_no_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
