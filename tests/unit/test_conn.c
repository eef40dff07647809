/* Unit tests for a socket changing watchers (conn_io_hand_off() and
 * conn_io_take_over(), src/net/conn.c) on a real epoll loop: the epoll_ctl()
 * calls libev makes are counted by defining epoll_ctl() here, which the
 * dynamic linker binds libev's calls to. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include <ev.h>

#include <sluice/conn.h>
#include <sluice/global.h>

static struct {
	int calls;     /* epoll_ctl() calls on the watched socket */
	int failures;  /* of which failed (EEXIST, ENOENT...) */
	int fd;
} ctl;

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	long ret = syscall(SYS_epoll_ctl, epfd, op, fd, ev);

	if (fd == ctl.fd) {
		ctl.calls++;
		if (ret < 0)
			ctl.failures++;
	}
	return (int)ret;
}

static int fired;

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	char c;

	if (revents & EV_READ)
		(void)!read(w->fd, &c, 1);
	fired++;
}

/* A loop, socket pair sv[0]/sv[1] and watcher <a> on sv[0] for <ev>,
 * registered with epoll by one loop iteration. */
static void setup_watched(int sv[2], ev_io *a, int ev)
{
	global.loop = ev_loop_new(EVBACKEND_EPOLL);
	assert_non_null(global.loop);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	memset(&ctl, 0, sizeof(ctl));
	ctl.fd = sv[0];
	ev_io_init(a, io_cb, sv[0], ev);
	ev_io_start(global.loop, a);
	ev_run(global.loop, EVRUN_NOWAIT);
	assert_int_equal(ctl.calls, 1);       /* EPOLL_CTL_ADD */
	assert_int_equal(ctl.failures, 0);
	ctl.calls = 0;
}

static void teardown_watched(int sv[2], ev_io *b)
{
	ev_io_stop(global.loop, b);
	close(sv[0]);
	close(sv[1]);
	ev_loop_destroy(global.loop);
	global.loop = NULL;
}

/* Hands sv[0] from <a> to <b> within one loop iteration, <b> watching
 * <ev>; <hand_off>: through conn_io_hand_off(). */
static void hand_over(ev_io *a, ev_io *b, int fd, int ev, int hand_off)
{
	ev_io_stop(global.loop, a);
	if (hand_off)
		conn_io_hand_off(a);
	b->data = b;
	conn_io_take_over(b, io_cb, fd);
	assert_ptr_equal(b->data, b);   /* data is the caller's */
	ev_io_modify(b, ev);
	ev_io_start(global.loop, b);
	ev_run(global.loop, EVRUN_NOWAIT);
}

/* The same events: epoll is not touched, and the new watcher gets them. */
static void test_take_over_same_events(void **state)
{
	ev_io a, b;
	int sv[2];

	setup_watched(sv, &a, EV_READ);
	hand_over(&a, &b, sv[0], EV_READ, 1);
	assert_int_equal(ctl.calls, 0);
	assert_int_equal(ctl.failures, 0);
	assert_int_equal(write(sv[1], "x", 1), 1);
	fired = 0;
	ev_run(global.loop, EVRUN_NOWAIT);
	assert_int_equal(fired, 1);
	teardown_watched(sv, &b);
}

/* Other events: one EPOLL_CTL_MOD, which succeeds. */
static void test_take_over_other_events(void **state)
{
	ev_io a, b;
	int sv[2];

	setup_watched(sv, &a, EV_READ);
	hand_over(&a, &b, sv[0], EV_WRITE, 1);
	assert_int_equal(ctl.calls, 1);
	assert_int_equal(ctl.failures, 0);
	fired = 0;
	ev_run(global.loop, EVRUN_NOWAIT);   /* writable at once */
	assert_int_equal(fired, 1);
	teardown_watched(sv, &b);
}

/* Without the hand-off the watcher is set anew (ev_io_set()): libev
 * registers the socket again, and epoll refuses (EEXIST) -- what the
 * hand-off avoids. Still correct: libev recovers and events flow. */
static void test_take_over_without_hand_off(void **state)
{
	ev_io a, b;
	int sv[2];

	setup_watched(sv, &a, EV_READ);
	hand_over(&a, &b, sv[0], EV_READ, 0);
	assert_int_equal(ctl.failures, 1);
	assert_int_equal(write(sv[1], "x", 1), 1);
	fired = 0;
	ev_run(global.loop, EVRUN_NOWAIT);
	assert_int_equal(fired, 1);
	teardown_watched(sv, &b);
}

/* A hand-off of another socket is not used for this one. */
static void test_take_over_other_fd(void **state)
{
	ev_io a, b = { .data = NULL }, other;
	int sv[2], sv2[2];

	setup_watched(sv, &a, EV_READ);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv2), 0);
	ev_io_init(&other, io_cb, sv2[0], 0);
	conn_io_hand_off(&other);
	ev_io_stop(global.loop, &a);
	conn_io_take_over(&b, io_cb, sv[0]);
	assert_int_equal(b.fd, sv[0]);
	ev_io_modify(&b, EV_READ);
	ev_io_start(global.loop, &b);
	assert_int_equal(write(sv[1], "x", 1), 1);
	fired = 0;
	ev_run(global.loop, EVRUN_NOWAIT);
	ev_run(global.loop, EVRUN_NOWAIT);
	assert_int_equal(fired, 1);
	close(sv2[0]);
	close(sv2[1]);
	teardown_watched(sv, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_over_same_events),
		cmocka_unit_test(test_take_over_other_events),
		cmocka_unit_test(test_take_over_without_hand_off),
		cmocka_unit_test(test_take_over_other_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
